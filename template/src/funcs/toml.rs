//! Helm's `toToml` (BurntSushi/toml's encoder layout) and `fromToml`.

use std::rc::Rc;

use super::Registry;
use super::arg::str;
use crate::value::{Entries, Ty, Value};

pub(crate) fn register(r: &mut Registry<'_>) {
    r.pure("toToml", &[Ty::Any], |a| {
        crate::budget::check_expansion(&a[0])?;
        Ok(Value::string(match to_toml(&a[0]) {
            Ok(s) => s,
            Err(e) => e,
        }))
    });
    r.pure("fromToml", &[Ty::String], |a| {
        crate::budget::reserve_decoded(str(&a[0]))?;
        Ok(from_toml(str(&a[0])))
    });
}

/// Nil as BurntSushi's encoder sees it: nil, or a nil slice. Tables leave such keys
/// out; arrays cannot hold them.
fn is_nil(v: &Value) -> bool {
    match v {
        Value::List(l) => l.is_nil(),
        other => other.is_nil(),
    }
}

fn is_table(v: &Value) -> bool {
    matches!(v.plain(), Value::Map(_))
}

fn is_array_of_tables(v: &Value) -> bool {
    match v.plain() {
        Value::List(l) => !l.is_empty() && l.iter().all(|item| is_table(&item)),
        _ => false,
    }
}

fn bare_key(k: &str) -> bool {
    !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn quote_key(k: &str) -> String {
    if bare_key(k) {
        k.to_owned()
    } else {
        toml_string(k)
    }
}

fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\u{:04X}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

struct Encoder {
    out: String,
    written: bool,
}

impl Encoder {
    fn newline(&mut self) {
        if self.written {
            self.out.push('\n');
        }
    }

    fn write(&mut self, s: &str) {
        self.out.push_str(s);
        self.written = true;
    }

    fn element(&mut self, v: &Value) -> Result<(), String> {
        match v.plain() {
            Value::String(s) => self.write(&toml_string(&s)),
            Value::RawStr(b) => self.write(&toml_string(&crate::gostr::go_lossy(&b))),
            Value::Bool(b) => self.write(if b { "true" } else { "false" }),
            Value::Int(i) | Value::Int64(i) => self.write(&i.to_string()),
            Value::Uint8(u) => self.write(&u.to_string()),
            Value::Float(f) => {
                let s = if f.is_nan() {
                    if f.is_sign_negative() { "-nan" } else { "nan" }.to_owned()
                } else if f.is_infinite() {
                    if f > 0.0 { "inf".into() } else { "-inf".into() }
                } else {
                    // Go's shortest `%g`, with `.0` added when that has neither a
                    // point nor an exponent.
                    let s = crate::format::format_float(f, 'g', None);
                    if s.contains(['.', 'e']) {
                        s
                    } else {
                        format!("{s}.0")
                    }
                };
                self.write(&s);
            }
            Value::List(l) => {
                if l.iter().any(|item| is_nil(&item)) {
                    return Err("toml: cannot encode array with nil element".into());
                }
                self.write("[");
                for (i, item) in l.iter().enumerate() {
                    if i > 0 {
                        self.write(", ");
                    }
                    chartkit_yaml::with_stack(|| self.element(&item))?;
                }
                self.write("]");
            }
            Value::Map(m) => {
                self.write("{");
                let entries: Vec<(Rc<str>, Value)> = m
                    .borrow()
                    .iter()
                    .filter(|(_, v)| !is_nil(v))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                for (i, (k, item)) in entries.iter().enumerate() {
                    self.write(&quote_key(k));
                    self.write(" = ");
                    chartkit_yaml::with_stack(|| self.element(item))?;
                    if i + 1 != entries.len() {
                        self.write(", ");
                    }
                }
                self.write("}");
            }
            Value::Nil => return Err("toml: cannot encode a nil value".into()),
            other @ Value::Object(_)
                if let Some(text) = super::date::toml_datetime_text(&other) =>
            {
                self.write(&text)
            }
            other => self.write(&toml_string(&crate::print::sprint(&other))),
        }
        Ok(())
    }

    fn table(&mut self, key: &[String], entries: &Entries) -> Result<(), String> {
        let indent = "  ".repeat(key.len());
        let (mut direct, mut sub): (Vec<_>, Vec<_>) = entries
            .iter()
            .filter(|(_, v)| !is_nil(v))
            .partition(|(_, v)| !is_table(v) && !is_array_of_tables(v));
        direct.sort_by(|a, b| a.0.cmp(b.0));
        sub.sort_by(|a, b| a.0.cmp(b.0));
        for (k, v) in direct {
            self.write(&format!("{indent}{} = ", quote_key(k)));
            self.element(v)?;
            self.newline();
        }
        for (k, v) in sub {
            let mut path = key.to_vec();
            path.push(k.to_string());
            let header: Vec<String> = path.iter().map(|p| quote_key(p)).collect();
            let pad = "  ".repeat(path.len() - 1);
            match v.plain() {
                Value::Map(m) => {
                    if path.len() == 1 {
                        self.newline();
                    }
                    self.write(&format!("{pad}[{}]", header.join(".")));
                    self.newline();
                    chartkit_yaml::with_stack(|| self.table(&path, &m.borrow()))?;
                }
                Value::List(l) => {
                    for item in l.iter() {
                        if let Value::Map(m) = item.plain() {
                            self.newline();
                            self.write(&format!("{pad}[[{}]]", header.join(".")));
                            self.newline();
                            chartkit_yaml::with_stack(|| self.table(&path, &m.borrow()))?;
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}

fn to_toml(v: &Value) -> Result<String, String> {
    let mut enc = Encoder {
        out: String::new(),
        written: false,
    };
    match v.plain() {
        Value::Map(m) => enc.table(&[], &m.borrow())?,
        other => enc.element(&other)?,
    }
    Ok(enc.out)
}

fn from_toml_value(v: toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::string(s),
        toml::Value::Integer(i) => Value::Int64(i),
        toml::Value::Float(f) => Value::Float(f),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => {
            super::date::from_toml_datetime(&d).unwrap_or_else(|| Value::string(d.to_string()))
        }
        toml::Value::Array(a) => Value::list(
            (a.into_iter())
                .map(|v| chartkit_yaml::with_stack(|| from_toml_value(v)))
                .collect(),
        ),
        toml::Value::Table(t) => Value::map(
            t.into_iter()
                .map(|(k, v)| {
                    (
                        Rc::from(k.as_str()),
                        chartkit_yaml::with_stack(|| from_toml_value(v)),
                    )
                })
                .collect(),
        ),
    }
}

fn from_toml(text: &str) -> Value {
    match text.parse::<toml::Table>() {
        Ok(t) => from_toml_value(toml::Value::Table(t)),
        Err(e) => {
            let mut m = Entries::new();
            let msg = e.message().to_owned();
            m.insert(Rc::from("Error"), Value::string(format!("toml: {msg}")));
            Value::map(m)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoder_layout() {
        let v =
            super::super::json::decode(r#"{"b":1,"a":"x","t":{"k":true,"n":{"z":1.5}},"l":[1,2]}"#)
                .unwrap();
        assert_eq!(
            to_toml(&v).unwrap(),
            "a = \"x\"\nb = 1.0\nl = [1.0, 2.0]\n\n[t]\n  k = true\n  [t.n]\n    z = 1.5\n"
        );
    }
}
