//! Helm's `toToml` (BurntSushi/toml's encoder layout) and `fromToml`.

use std::rc::Rc;

use super::Registry;
use super::arg::bytes;
use super::toml_read::{self, Node, Table};
use crate::value::{Entries, Ty, Value};

pub(crate) fn register(r: &mut Registry<'_>) {
    r.pure("toToml", &[Ty::Any], |a| {
        crate::budget::check_expansion(&a[0])?;
        Ok(match to_toml(&a[0]) {
            Ok(bytes) => Value::from_go_bytes(bytes),
            Err(e) => Value::string(e),
        })
    });
    r.pure("fromToml", &[Ty::String], |a| {
        let text = bytes(&a[0]);
        crate::budget::reserve_decoded_bytes(text.len())?;
        Ok(from_toml(text))
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
    format!("\"{}\"", super::toml_read::double_quoted_escapes(s))
}

struct Encoder {
    /// Bytes: a Go string that is not UTF-8 is written as it is, as Go's encoder does.
    out: Vec<u8>,
    written: bool,
}

impl Encoder {
    fn newline(&mut self) {
        if self.written {
            self.out.push(b'\n');
        }
    }

    fn write(&mut self, s: &str) {
        self.out.extend_from_slice(s.as_bytes());
        self.written = true;
    }

    fn element(&mut self, v: &Value) -> Result<(), String> {
        match v.plain() {
            Value::String(s) => self.write(&toml_string(&s)),
            Value::RawStr(b) => {
                self.write("\"");
                for chunk in b.utf8_chunks() {
                    self.write(&super::toml_read::double_quoted_escapes(chunk.valid()));
                    self.out.extend_from_slice(chunk.invalid());
                }
                self.write("\"");
            }
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

fn to_toml(v: &Value) -> Result<Vec<u8>, String> {
    let mut enc = Encoder {
        out: Vec::new(),
        written: false,
    };
    match v.plain() {
        Value::Map(m) => enc.table(&[], &m.borrow())?,
        other => enc.element(&other)?,
    }
    Ok(enc.out)
}

fn from_toml_node(node: &Node) -> Value {
    match node {
        Node::String(s) => Value::string(s.clone()),
        Node::Integer(i) => Value::Int64(*i),
        Node::Float(f) => Value::Float(*f),
        Node::Bool(b) => Value::Bool(*b),
        Node::Datetime(d) => {
            super::date::from_toml_datetime(d).unwrap_or_else(|| Value::string(d.to_string()))
        }
        Node::Array(items) => Value::list(
            items
                .iter()
                .map(|item| chartkit_yaml::with_stack(|| from_toml_node(item)))
                .collect(),
        ),
        Node::Tables(tables) => Value::list(
            tables
                .borrow()
                .iter()
                .map(|table| chartkit_yaml::with_stack(|| from_toml_table(table)))
                .collect(),
        ),
        Node::Table(table) => from_toml_table(table),
    }
}

fn from_toml_table(table: &Table) -> Value {
    Value::map(
        table
            .borrow()
            .iter()
            .map(|(k, v)| {
                (
                    Rc::from(k.as_str()),
                    chartkit_yaml::with_stack(|| from_toml_node(v)),
                )
            })
            .collect(),
    )
}

/// Helm's `fromToml`: the document's table, or a table holding only `Error`, the
/// reader's message.
fn from_toml(text: &[u8]) -> Value {
    match toml_read::read(text) {
        Ok(table) => from_toml_table(&table),
        Err(e) => {
            let mut m = Entries::new();
            m.insert(Rc::from("Error"), Value::string(e.to_string()));
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
            String::from_utf8(to_toml(&v).unwrap()).unwrap(),
            "a = \"x\"\nb = 1.0\nl = [1.0, 2.0]\n\n[t]\n  k = true\n  [t.n]\n    z = 1.5\n"
        );
    }
}
