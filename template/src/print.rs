//! Go's value printing: `fmt.Sprint` (`%v`), `%#v`, and `strconv.Quote`.

use chartkit_yaml::gonum;

use crate::gostr::GoBuf;
use crate::value::{ListKind, MapKind, Value};

/// Go's `unicode.IsPrint`, approximated from Rust's character properties: letters, marks,
/// numbers, punctuation, symbols and the ASCII space. Unassigned code points are treated
/// as printable, which only matters for text that contains them.
pub fn is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    let cp = c as u32;
    let format_chars = matches!(
        cp,
        0x00AD
            | 0x0600..=0x0605
            | 0x061C
            | 0x06DD
            | 0x070F
            | 0x0890..=0x0891
            | 0x08E2
            | 0x180E
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x2064
            | 0x2066..=0x206F
            | 0xFEFF
            | 0xFFF9..=0xFFFB
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0001
            | 0xE0020..=0xE007F
    );
    let private_or_nonchar = matches!(
        cp,
        0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD | 0xFDD0..=0xFDEF
    ) || (cp & 0xFFFE) == 0xFFFE;
    !(format_chars || private_or_nonchar)
}

fn push_escaped(out: &mut String, c: char, quote: char, ascii_only: bool) {
    if c == quote || c == '\\' {
        out.push('\\');
        out.push(c);
        return;
    }
    if ascii_only {
        if c.is_ascii() && is_print(c) {
            out.push(c);
            return;
        }
    } else if is_print(c) {
        out.push(c);
        return;
    }
    match c {
        '\x07' => out.push_str("\\a"),
        '\x08' => out.push_str("\\b"),
        '\x0c' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\x0b' => out.push_str("\\v"),
        c if (c as u32) < 0x20 || c as u32 == 0x7f => {
            out.push_str(&format!("\\x{:02x}", c as u32));
        }
        c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
        c => out.push_str(&format!("\\U{:08x}", c as u32)),
    }
}

/// `strconv.Quote`, which is also what `%q` and Sprig's `quote` produce.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        push_escaped(&mut out, c, '"', false);
    }
    out.push('"');
    out
}

/// `strconv.Quote` of a Go string's bytes: bytes that are not UTF-8 are written `\xff`.
pub fn quote_bytes(bytes: &[u8]) -> String {
    quote_bytes_with(bytes, false)
}

/// `strconv.Quote` (or, `ascii_only`, `QuoteToASCII`) of bytes.
pub(crate) fn quote_bytes_with(bytes: &[u8], ascii_only: bool) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            push_escaped(&mut out, c, '"', ascii_only);
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.push('"');
    out
}

/// `strconv.QuoteToASCII` (`%+q`).
pub fn quote_ascii(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        push_escaped(&mut out, c, '"', true);
    }
    out.push('"');
    out
}

/// `strconv.QuoteRune` (`%q` of an integer).
pub fn quote_rune(c: char) -> String {
    let mut out = String::from("'");
    push_escaped(&mut out, c, '\'', false);
    out.push('\'');
    out
}

/// `%#U`: `U+0041 'A'`, or just `U+0000` for characters that do not print.
pub fn unicode_notation(c: char) -> String {
    if is_print(c) {
        format!("U+{:04X} '{}'", c as u32, c)
    } else {
        format!("U+{:04X}", c as u32)
    }
}

/// `fmt.Sprint(v)` for one value (`%v`), as text (bytes that are not UTF-8 read as
/// U+FFFD): for messages and other text made from values.
pub fn sprint(v: &Value) -> String {
    let mut out = GoBuf::new();
    write_value(&mut out, v);
    out.into_output().into_text_lossy()
}

/// `fmt.Sprint(v)` for one value, as a Go string (bytes kept).
pub fn sprint_value(v: &Value) -> Value {
    if let Value::String(_) | Value::RawStr(_) = v {
        return v.clone();
    }
    let mut out = GoBuf::new();
    write_value(&mut out, v);
    out.into_value()
}

pub(crate) fn write_value(out: &mut GoBuf, v: &Value) {
    match v {
        Value::Nil => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) | Value::Int64(i) => out.push_str(itoa::Buffer::new().format(*i)),
        Value::Uint8(u) => out.push_str(itoa::Buffer::new().format(*u)),
        Value::Float(f) => out.push_str(&gonum::format_g(*f, false)),
        Value::String(s) => out.push_str(s),
        Value::RawStr(b) => out.push_raw(b),
        Value::Bytes(b) => {
            out.push('[');
            for (i, byte) in b.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(itoa::Buffer::new().format(*byte));
            }
            out.push(']');
        }
        Value::List(l) => {
            out.push('[');
            for (i, item) in l.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                chartkit_yaml::with_stack(|| write_value(out, &item));
            }
            out.push(']');
        }
        Value::Map(m) => {
            out.push_str("map[");
            for (i, (k, v)) in m.borrow().iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                chartkit_yaml::with_stack(|| write_value(out, v));
            }
            out.push(']');
        }
        Value::Object(o) => out.push_str(&o.format()),
    }
}

/// `fmt.Sprint(args...)`: operands are separated by a space when neither side is a
/// string. A Go string, bytes kept.
pub fn sprint_args(args: &[Value]) -> Value {
    let mut out = GoBuf::new();
    for (i, arg) in args.iter().enumerate() {
        if i > 0 && !arg.is_go_string() && !args[i - 1].is_go_string() {
            out.push(' ');
        }
        write_value(&mut out, arg);
    }
    out.into_value()
}

/// `fmt.Sprintln(args...)`: always a space between operands, and a final newline.
pub fn sprintln_args(args: &[Value]) -> Value {
    let mut out = GoBuf::new();
    for (i, arg) in args.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        write_value(&mut out, arg);
    }
    out.push('\n');
    out.into_value()
}

/// `%#v`: Go-syntax representation.
pub fn go_syntax(v: &Value) -> String {
    let mut out = String::new();
    write_go_syntax(&mut out, v, true);
    out
}

fn write_go_syntax(out: &mut String, v: &Value, top: bool) {
    match v {
        Value::Nil => out.push_str(if top { "<nil>" } else { "interface {}(nil)" }),
        Value::Bool(_) | Value::Int(_) | Value::Int64(_) => out.push_str(&sprint(v)),
        Value::Uint8(u) => out.push_str(&format!("0x{u:x}")),
        Value::Float(f) => out.push_str(&gonum::format_g(*f, false)),
        Value::String(s) => out.push_str(&quote(s)),
        Value::RawStr(b) => out.push_str(&quote_bytes(b)),
        Value::Bytes(b) => {
            out.push_str("[]byte{");
            for (i, byte) in b.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&format!("0x{byte:x}"));
            }
            out.push('}');
        }
        Value::List(l) if l.is_nil() => {
            out.push_str(&v.type_name());
            out.push_str("(nil)");
        }
        Value::List(l) => {
            out.push_str(&v.type_name());
            out.push('{');
            for (i, item) in l.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_go_syntax(out, &item, l.kind != ListKind::Interface);
            }
            out.push('}');
        }
        Value::Map(m) => {
            out.push_str(&v.type_name());
            out.push('{');
            for (i, (k, item)) in m.borrow().iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&quote(k));
                out.push(':');
                write_go_syntax(out, item, m.kind == MapKind::String);
            }
            out.push('}');
        }
        Value::Object(o) => out.push_str(&o.format()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_matches_strconv() {
        assert_eq!(quote("a\"b\\c\n\t\u{7}"), r#""a\"b\\c\n\t\a""#);
        assert_eq!(quote("é\u{200b}\u{1}"), "\"é\\u200b\\x01\"");
        assert_eq!(quote_ascii("é"), r#""\u00e9""#);
        assert_eq!(quote_rune('x'), "'x'");
    }

    #[test]
    fn sprint_spacing() {
        let args = [Value::Int(1), Value::Int(2), Value::str("a"), Value::Int(3)];
        assert_eq!(sprint_args(&args), Value::str("1 2a3"));
        assert_eq!(sprintln_args(&args), Value::str("1 2 a 3\n"));
        let raw = Value::from_go_slice(b"\xff");
        assert_eq!(
            sprint_args(&[Value::str("a"), raw]),
            Value::from_go_slice(b"a\xff")
        );
        assert_eq!(quote_bytes(b"\xffa\n"), r#""\xffa\n""#);
    }

    #[test]
    fn containers_print_like_go() {
        let mut m = crate::value::Entries::new();
        m.insert("b".into(), Value::Float(1e6));
        m.insert("a".into(), Value::list(vec![Value::str("x"), Value::Nil]));
        assert_eq!(sprint(&Value::map(m)), "map[a:[x <nil>] b:1e+06]");
    }
}
