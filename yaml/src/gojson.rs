//! Go's `encoding/json` output for the values chartkit writes where helm writes JSON
//! (Chart.lock digests, `search -o json`, index caches, `toJson`): the same escapes
//! and the same number forms, so the bytes are helm's.

use std::fmt::Write as _;

use crate::{Value, gonum, with_stack};

/// `s`'s characters as Go escapes them inside a JSON string: `\b`, `\f`, `\n`, `\r`,
/// `\t`, other controls as `\u00XX`, U+2028 and U+2029 always, and `<`, `>`, `&` when
/// `html` (as `json.Marshal` does; an encoder with `SetEscapeHTML(false)` does not).
pub fn write_escaped(out: &mut String, s: &str, html: bool) {
    // Runs of characters that need no escape are copied whole; only the bytes that can
    // start an escape (ASCII controls, `"`, `\\`, `<`, `>`, `&`, and 0xE2, the first byte
    // of U+2028 and U+2029) stop the copy. Indexes are mostly such runs.
    let bytes = s.as_bytes();
    let mut plain = 0;
    let mut at = 0;
    while at < bytes.len() {
        let b = bytes[at];
        if b >= 0x20 && !matches!(b, b'"' | b'\\' | b'<' | b'>' | b'&' | 0xE2) {
            at += 1;
            continue;
        }
        out.push_str(&s[plain..at]);
        let c = s[at..].chars().next().unwrap_or_default();
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' if !html => out.push(c),
            c if (c as u32) < 0x20 || matches!(c, '<' | '>' | '&' | '\u{2028}' | '\u{2029}') => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
        at += c.len_utf8();
        plain = at;
    }
    out.push_str(&s[plain..]);
}

/// A JSON string as `json.Marshal` writes it (HTML characters escaped).
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    write_escaped(out, s, true);
    out.push('"');
}

/// A Go string that may not be UTF-8, as `encoding/json` writes it: each byte that is
/// not part of a character becomes the escape `\ufffd`.
pub fn write_go_bytes(out: &mut String, bytes: &[u8], html: bool) {
    out.push('"');
    for chunk in bytes.utf8_chunks() {
        write_escaped(out, chunk.valid(), html);
        for _ in chunk.invalid() {
            out.push_str("\\ufffd");
        }
    }
    out.push('"');
}

/// A JSON string as `json.Marshal` writes it, as a new `String`.
pub fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_string(&mut out, s);
    out
}

/// A decoded YAML or JSON value as `json.Marshal` writes an `interface{}`, compact: map
/// keys in the map's order (a [`crate::Map`] is sorted, as Go sorts them), numbers in
/// Go's shortest float form, bytes that are not UTF-8 as U+FFFD.
pub fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(f) => out.push_str(&gonum::format_json(*f).unwrap_or_else(|| "null".into())),
        Value::String(s) => write_string(out, s),
        Value::Bytes(b) => write_go_bytes(out, b, true),
        Value::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                with_stack(|| write_value(out, item));
            }
            out.push(']');
        }
        Value::Map(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                with_stack(|| write_value(out, item));
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_as_go_does() {
        assert_eq!(
            string("a<b>&\"c\"\n\u{8}\u{c}\u{1}\u{2028}é"),
            r#""a\u003cb\u003e\u0026\"c\"\n\b\f\u0001\u2028é""#
        );
        let mut plain = String::new();
        write_escaped(&mut plain, "<&>", false);
        assert_eq!(plain, "<&>");
        assert_eq!(
            string("plain \"q\" \\ <a>&b\n\r\t\u{8}\u{c}\u{1}\u{7f} é€\u{2028}\u{2029}😀 end"),
            "\"plain \\\"q\\\" \\\\ \\u003ca\\u003e\\u0026b\\n\\r\\t\\b\\f\\u0001\u{7f} é€\\u2028\\u2029😀 end\""
        );
        assert_eq!(string(""), "\"\"");
        let mut bytes = String::new();
        write_go_bytes(&mut bytes, b"a\xff\xe2\x82<", true);
        assert_eq!(bytes, r#""a\ufffd\ufffd\ufffd\u003c""#);
    }

    #[test]
    fn values_are_compact_with_go_numbers() {
        let value = crate::parse_values("b: [1, 2.5, 1e+21, null]\na: {x: \"<\"}\n").unwrap();
        let mut out = String::new();
        write_value(&mut out, &Value::Map(value));
        assert_eq!(out, r#"{"a":{"x":"\u003c"},"b":[1,2.5,1e+21,null]}"#);
    }
}
