//! JSON as Go's `encoding/json` writes and reads it: sorted map keys, HTML-safe escaping
//! (`<` becomes `\u003c`) except for `toRawJson`, floats in Go's shortest form, and
//! decoding errors worded as Go words them.

use std::rc::Rc;

use chartkit_yaml::{gonum, with_stack};

use super::Registry;
use super::arg::str;
use crate::value::{Entries, Ty, Value};

pub(crate) fn register(r: &mut Registry<'_>) {
    // The `to*` forms turn encoding errors into "", but not a value too large to write.
    r.pure("toPrettyJson", &[Ty::Any], |a| {
        crate::budget::check_expansion(&a[0])?;
        Ok(Value::string(
            encode(&a[0], true, Some("  ")).unwrap_or_default(),
        ))
    });
    r.pure("mustToPrettyJson", &[Ty::Any], |a| {
        crate::budget::check_expansion(&a[0])?;
        encode(&a[0], true, Some("  ")).map(Value::string)
    });
    r.pure("toRawJson", &[Ty::Any], |a| {
        crate::budget::check_expansion(&a[0])?;
        Ok(Value::string(
            encode(&a[0], false, None).unwrap_or_default(),
        ))
    });
    r.pure("mustToRawJson", &[Ty::Any], |a| {
        crate::budget::check_expansion(&a[0])?;
        encode(&a[0], false, None).map(Value::string)
    });
    r.pure("mustToJson", &[Ty::Any], |a| {
        crate::budget::check_expansion(&a[0])?;
        encode(&a[0], true, None).map(Value::string)
    });
    r.pure("mustFromJson", &[Ty::String], |a| {
        crate::budget::reserve_decoded(str(&a[0]))?;
        decode(str(&a[0]))
    });
}

/// `json.Marshal` (`escape_html`) or an encoder without HTML escaping, optionally
/// indented like `json.MarshalIndent(v, "", indent)`.
pub(crate) fn encode(v: &Value, escape_html: bool, indent: Option<&str>) -> Result<String, String> {
    let mut out = String::new();
    write_value(&mut out, v, escape_html, indent, 0)?;
    Ok(out)
}

/// Whether [`encode`] would succeed, and its error if not, without writing the text:
/// `toYaml` goes through JSON in Helm and fails where JSON does, on NaN and infinities.
pub(crate) fn check_encodable(v: &Value) -> Result<(), String> {
    match v {
        Value::Float(f) if !f.is_finite() => Err(format!(
            "json: unsupported value: {}",
            gonum::format_g(*f, false)
        )),
        Value::List(l) => l
            .iter()
            .try_for_each(|item| with_stack(|| check_encodable(&item))),
        Value::Map(m) => (m.borrow().values()).try_for_each(|v| with_stack(|| check_encodable(v))),
        Value::Object(o) if crate::complex::parts(o).is_some() => {
            Err("json: unsupported type: complex128".into())
        }
        Value::Object(o) => check_encodable(&o.to_data()),
        _ => Ok(()),
    }
}

fn newline(out: &mut String, indent: Option<&str>, depth: usize) {
    if let Some(ind) = indent {
        out.push('\n');
        for _ in 0..depth {
            out.push_str(ind);
        }
    }
}

fn write_value(
    out: &mut String,
    v: &Value,
    html: bool,
    indent: Option<&str>,
    depth: usize,
) -> Result<(), String> {
    match v {
        Value::Nil => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) | Value::Int64(i) => out.push_str(&i.to_string()),
        Value::Uint8(u) => out.push_str(&u.to_string()),
        Value::Float(f) => match gonum::format_json(*f) {
            Some(s) => out.push_str(&s),
            None => {
                return Err(format!(
                    "json: unsupported value: {}",
                    gonum::format_g(*f, false)
                ));
            }
        },
        Value::String(s) => write_string(out, s, html),
        Value::RawStr(b) => chartkit_yaml::gojson::write_go_bytes(out, b, html),
        Value::Bytes(b) => {
            use base64::Engine as _;
            out.push('"');
            out.push_str(&base64::engine::general_purpose::STANDARD.encode(b));
            out.push('"');
        }
        Value::List(l) if l.is_nil() => out.push_str("null"),
        Value::List(l) => {
            if l.is_empty() {
                out.push_str("[]");
                return Ok(());
            }
            out.push('[');
            for (i, item) in l.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent, depth + 1);
                with_stack(|| write_value(out, &item, html, indent, depth + 1))?;
            }
            newline(out, indent, depth);
            out.push(']');
        }
        Value::Map(m) if m.is_nil() => out.push_str("null"),
        Value::Map(m) => {
            let m = m.borrow();
            if m.is_empty() {
                out.push_str("{}");
                return Ok(());
            }
            out.push('{');
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent, depth + 1);
                write_string(out, k, html);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                with_stack(|| write_value(out, item, html, indent, depth + 1))?;
            }
            newline(out, indent, depth);
            out.push('}');
        }
        Value::Object(o) if crate::complex::parts(o).is_some() => {
            return Err("json: unsupported type: complex128".into());
        }
        Value::Object(o) => match o.struct_fields() {
            // A struct's fields in declaration order, under their JSON names.
            Some(fields) => {
                let fields: Vec<_> = fields
                    .into_iter()
                    .filter_map(|f| Some((f.json?, f.value)))
                    .collect();
                if fields.is_empty() {
                    out.push_str("{}");
                    return Ok(());
                }
                out.push('{');
                for (i, (name, item)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, indent, depth + 1);
                    write_string(out, name, html);
                    out.push(':');
                    if indent.is_some() {
                        out.push(' ');
                    }
                    write_value(out, item, html, indent, depth + 1)?;
                }
                newline(out, indent, depth);
                out.push('}');
            }
            None => write_value(out, &o.to_data(), html, indent, depth)?,
        },
    }
    Ok(())
}

pub(crate) fn write_string(out: &mut String, s: &str, html: bool) {
    out.push('"');
    chartkit_yaml::gojson::write_escaped(out, s, html);
    out.push('"');
}

/// `json.Unmarshal` into `interface{}`: objects become maps, every number a float64.
pub(crate) fn decode(text: &str) -> Result<Value, String> {
    match decode_partial(text)? {
        (v, None) => Ok(v),
        (_, Some(error)) => Err(error),
    }
}

/// `json.Unmarshal` as far as Go takes it. Syntax errors stop it before anything is
/// decoded (`Err`); a number too large for a float64 does not: Go stores nil in its
/// place, goes on, and returns the first such error with what it decoded.
pub(crate) fn decode_partial(text: &str) -> Result<(Value, Option<String>), String> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        range_error: None,
        depth: 0,
    };
    p.skip_ws();
    if p.i >= p.s.len() {
        return Err("unexpected end of JSON input".into());
    }
    let v = p.value()?;
    p.skip_ws();
    if p.i < p.s.len() {
        return Err(format!(
            "invalid character {} after top-level value",
            p.quote_char()
        ));
    }
    Ok((v, p.range_error))
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    /// The first number that did not fit a float64.
    range_error: Option<String>,
    /// Arrays and objects open around the current position.
    depth: usize,
}

/// encoding/json's `maxNestingDepth`: its scanner refuses the array or object that would
/// open one level more.
const MAX_NESTING_DEPTH: usize = 10_000;

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    /// encoding/json's `quoteChar`: the scanner works on bytes, and names the offending
    /// byte as the Latin-1 character of that number (0xC3 of "ñ" is 'Ã').
    fn quote_char(&self) -> String {
        let c = self.s.get(self.i).map_or('\u{FFFD}', |&b| char::from(b));
        match c {
            '\'' => "'\\''".into(),
            '"' => "'\"'".into(),
            c => {
                let q = crate::print::quote(&c.to_string());
                format!("'{}'", &q[1..q.len() - 1])
            }
        }
    }

    fn eof<T>(&self) -> Result<T, String> {
        Err("unexpected end of JSON input".into())
    }

    fn expect_byte(&mut self) -> Result<u8, String> {
        self.s.get(self.i).copied().map_or_else(|| self.eof(), Ok)
    }

    fn value(&mut self) -> Result<Value, String> {
        self.skip_ws();
        let c = self.expect_byte()?;
        match c {
            b'{' | b'[' => {
                if self.depth == MAX_NESTING_DEPTH {
                    return Err(format!(
                        "invalid character {} exceeded max depth",
                        self.quote_char()
                    ));
                }
                self.depth += 1;
                // Ten thousand levels take more stack than a worker thread has.
                let v = with_stack(|| {
                    if c == b'{' {
                        self.object()
                    } else {
                        self.array()
                    }
                });
                self.depth -= 1;
                v
            }
            b'"' => Ok(Value::string(self.string()?)),
            b't' => self.literal("true", Value::Bool(true)),
            b'f' => self.literal("false", Value::Bool(false)),
            b'n' => self.literal("null", Value::Nil),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(format!(
                "invalid character {} looking for beginning of value",
                self.quote_char()
            )),
        }
    }

    fn literal(&mut self, word: &str, v: Value) -> Result<Value, String> {
        for (n, expected) in word.bytes().enumerate() {
            match self.s.get(self.i) {
                None => return self.eof(),
                Some(&b) if b == expected => self.i += 1,
                Some(_) => {
                    return Err(format!(
                        "invalid character {} in literal {word} (expecting '{}')",
                        self.quote_char(),
                        word.as_bytes()[n] as char
                    ));
                }
            }
        }
        Ok(v)
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.i;
        if self.s[self.i] == b'-' {
            self.i += 1;
        }
        let digits = |p: &mut Self| {
            let from = p.i;
            while p.i < p.s.len() && p.s[p.i].is_ascii_digit() {
                p.i += 1;
            }
            p.i - from
        };
        match self.s.get(self.i) {
            None => return self.eof(),
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            Some(_) => {
                return Err(format!(
                    "invalid character {} in numeric literal",
                    self.quote_char()
                ));
            }
        }
        if self.s.get(self.i) == Some(&b'.') {
            self.i += 1;
            if self.i >= self.s.len() {
                return self.eof();
            }
            if digits(self) == 0 {
                return Err(format!(
                    "invalid character {} after decimal point in numeric literal",
                    self.quote_char()
                ));
            }
        }
        if matches!(self.s.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.s.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.i >= self.s.len() {
                return self.eof();
            }
            if digits(self) == 0 {
                return Err(format!(
                    "invalid character {} in exponent of numeric literal",
                    self.quote_char()
                ));
            }
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("0");
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Value::Float(f)),
            _ => {
                self.range_error.get_or_insert_with(|| {
                    format!("json: cannot unmarshal number {text} into Go value of type float64")
                });
                Ok(Value::Nil)
            }
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.i) else {
                return self.eof();
            };
            match c {
                b'"' => {
                    self.i += 1;
                    // Go reads each byte that is not UTF-8 as U+FFFD.
                    return Ok(crate::gostr::go_lossy(&out).into_owned());
                }
                b'\\' => {
                    self.i += 1;
                    let e = self.expect_byte()?;
                    self.i += 1;
                    let simple = match e {
                        b'"' => Some(b'"'),
                        b'\\' => Some(b'\\'),
                        b'/' => Some(b'/'),
                        b'b' => Some(8),
                        b'f' => Some(12),
                        b'n' => Some(b'\n'),
                        b'r' => Some(b'\r'),
                        b't' => Some(b'\t'),
                        b'u' => None,
                        _ => {
                            self.i -= 1;
                            return Err(format!(
                                "invalid character {} in string escape code",
                                self.quote_char()
                            ));
                        }
                    };
                    if let Some(b) = simple {
                        out.push(b);
                        continue;
                    }
                    let mut code = self.hex4()?;
                    if (0xD800..0xDC00).contains(&code)
                        && self.s.get(self.i) == Some(&b'\\')
                        && self.s.get(self.i + 1) == Some(&b'u')
                    {
                        let save = self.i;
                        self.i += 2;
                        let low = self.hex4()?;
                        if (0xDC00..0xE000).contains(&low) {
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                        } else {
                            self.i = save;
                        }
                    }
                    let ch = char::from_u32(code).unwrap_or('\u{FFFD}');
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                c if c < 0x20 => {
                    return Err(format!(
                        "invalid character {} in string literal",
                        self.quote_char()
                    ));
                }
                c => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let mut code = 0u32;
        for _ in 0..4 {
            let c = self.expect_byte()?;
            let d = (c as char).to_digit(16).ok_or_else(|| {
                format!(
                    "invalid character {} in \\u hexadecimal character escape",
                    self.quote_char()
                )
            })?;
            code = code * 16 + d;
            self.i += 1;
        }
        Ok(code)
    }

    fn array(&mut self) -> Result<Value, String> {
        self.i += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.expect_byte()? == b']' {
            self.i += 1;
            return Ok(Value::list(items));
        }
        loop {
            items.push(self.value()?);
            self.skip_ws();
            match self.expect_byte()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Ok(Value::list(items));
                }
                _ => {
                    return Err(format!(
                        "invalid character {} after array element",
                        self.quote_char()
                    ));
                }
            }
        }
    }

    fn object(&mut self) -> Result<Value, String> {
        self.i += 1;
        let mut entries = Entries::new();
        self.skip_ws();
        if self.expect_byte()? == b'}' {
            self.i += 1;
            return Ok(Value::map(entries));
        }
        loop {
            self.skip_ws();
            if self.expect_byte()? != b'"' {
                return Err(format!(
                    "invalid character {} looking for beginning of object key string",
                    self.quote_char()
                ));
            }
            let key = self.string()?;
            self.skip_ws();
            if self.expect_byte()? != b':' {
                return Err(format!(
                    "invalid character {} after object key",
                    self.quote_char()
                ));
            }
            self.i += 1;
            let v = self.value()?;
            entries.insert(Rc::from(key), v);
            self.skip_ws();
            match self.expect_byte()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Ok(Value::map(entries));
                }
                _ => {
                    return Err(format!(
                        "invalid character {} after object key:value pair",
                        self.quote_char()
                    ));
                }
            }
        }
    }
}

/// The JSON type name Go's unmarshal errors use for a decoded value.
pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::List(_) => "array",
        Value::String(_) | Value::RawStr(_) => "string",
        Value::Float(_) => "number",
        Value::Bool(_) => "bool",
        Value::Map(_) => "object",
        _ => "null",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_matches_go() {
        let v = decode(r#"{"b":[1,2.5,"<x>"],"a":null,"c":{}}"#).unwrap();
        assert_eq!(
            encode(&v, true, None).unwrap(),
            r#"{"a":null,"b":[1,2.5,"\u003cx\u003e"],"c":{}}"#
        );
        assert_eq!(
            encode(&v, false, None).unwrap(),
            r#"{"a":null,"b":[1,2.5,"<x>"],"c":{}}"#
        );
        assert_eq!(
            encode(&v, true, Some("  ")).unwrap(),
            "{\n  \"a\": null,\n  \"b\": [\n    1,\n    2.5,\n    \"\\u003cx\\u003e\"\n  ],\n  \"c\": {}\n}"
        );
    }

    #[test]
    fn the_encodability_check_gives_the_encoding_error() {
        let mut entries = crate::Entries::new();
        entries.insert("a".into(), Value::Float(1.5));
        entries.insert(
            "b".into(),
            Value::list(vec![Value::Float(f64::NEG_INFINITY)]),
        );
        entries.insert("c".into(), Value::Float(f64::NAN));
        let v = Value::map(entries);
        let error = encode(&v, true, None).unwrap_err();
        assert_eq!(error, "json: unsupported value: -Inf");
        assert_eq!(check_encodable(&v).unwrap_err(), error);
        let fine = decode(r#"{"a":[1,{"b":2.5}]}"#).unwrap();
        assert_eq!(check_encodable(&fine), Ok(()));
    }

    #[test]
    fn decode_errors_match_go() {
        assert_eq!(decode("").unwrap_err(), "unexpected end of JSON input");
        assert_eq!(
            decode("{x").unwrap_err(),
            "invalid character 'x' looking for beginning of object key string"
        );
        assert_eq!(
            decode("[1 2]").unwrap_err(),
            "invalid character '2' after array element"
        );
        assert_eq!(decode("tru").unwrap_err(), "unexpected end of JSON input");
        assert_eq!(
            decode("1 x").unwrap_err(),
            "invalid character 'x' after top-level value"
        );
    }
}
