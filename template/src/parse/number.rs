//! Number literals as Go's template parser reads them: one literal can be an int, a uint
//! and a float at once, and execution picks the reading the context needs.

use super::ast::{NumberNode, Pos};
use super::lexer::Kind;
use super::unquote::unquote_char;

pub(crate) fn parse_number(pos: Pos, text: &str, kind: Kind) -> Result<NumberNode, String> {
    let mut n = NumberNode {
        pos,
        text: text.to_owned(),
        int: None,
        uint: None,
        float: None,
        is_complex: false,
        complex: (0.0, 0.0),
    };
    if kind == Kind::CharConstant {
        let (bytes, tail) = unquote_char(&text[1..], '\'').map_err(str::to_owned)?;
        if tail != "'" {
            return Err(format!("malformed character constant: {text}"));
        }
        let rune = match std::str::from_utf8(&bytes) {
            Ok(s) if bytes.len() > 1 => s.chars().next().map_or(0, |c| c as i64),
            _ => bytes.first().copied().unwrap_or(0) as i64,
        };
        n.int = Some(rune);
        n.uint = Some(rune as u64);
        n.float = Some(rune as f64);
        return Ok(n);
    }
    if let Some(imag) = text.strip_suffix('i').and_then(parse_float) {
        set_complex(&mut n, 0.0, imag);
        return Ok(n);
    }
    if kind == Kind::Complex {
        return match split_complex(text) {
            Some((re, im)) => {
                set_complex(&mut n, re, im);
                Ok(n)
            }
            None => Err(format!(
                "illegal number syntax: {}",
                crate::print::quote(text)
            )),
        };
    }
    let u = parse_uint(text);
    if let Some(u) = u {
        n.uint = Some(u);
    }
    if let Some(i) = parse_int(text) {
        n.int = Some(i);
        if i == 0 {
            n.uint = Some(0);
        }
    }
    if let Some(i) = n.int {
        n.float = Some(i as f64);
    } else if let Some(u) = n.uint {
        n.float = Some(u as f64);
    } else if let Some(f) = parse_float(text) {
        if !text.contains(['.', 'e', 'E', 'p', 'P']) {
            return Err(format!("integer overflow: {}", crate::print::quote(text)));
        }
        n.float = Some(f);
        if f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64 {
            n.int = Some(f as i64);
        }
        if f.fract() == 0.0 && f >= 0.0 && f < u64::MAX as f64 {
            n.uint = Some(f as u64);
        }
    }
    if n.int.is_none() && n.uint.is_none() && n.float.is_none() {
        return Err(format!(
            "illegal number syntax: {}",
            crate::print::quote(text)
        ));
    }
    Ok(n)
}

/// Go's rule for `_` in number literals: only between digits, or right after a base prefix.
fn underscores_ok(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if !b.is_empty() && (b[0] == b'-' || b[0] == b'+') {
        i = 1;
    }
    // Whether the previous character was a digit (or a base prefix, which counts as one).
    let mut saw = b'^';
    let mut hex = false;
    if b.len() - i >= 2 && b[i] == b'0' && matches!(b[i + 1] | 0x20, b'x' | b'b' | b'o') {
        hex = b[i + 1] | 0x20 == b'x';
        i += 2;
        saw = b'0';
    }
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
        i += 1;
    }
    saw != b'_'
}

fn split_base(s: &str) -> Option<(u32, String)> {
    let (base, digits) = if let Some(r) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (16, r)
    } else if let Some(r) = s.strip_prefix("0o").or_else(|| s.strip_prefix("0O")) {
        (8, r)
    } else if let Some(r) = s.strip_prefix("0b").or_else(|| s.strip_prefix("0B")) {
        (2, r)
    } else if s.len() > 1 && s.starts_with('0') {
        (8, &s[1..])
    } else {
        (10, s)
    };
    if s.contains('_') && !underscores_ok(s) {
        return None;
    }
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return None;
    }
    Some((base, digits))
}

/// `strconv.ParseUint(s, 0, 64)`.
pub(crate) fn parse_uint(s: &str) -> Option<u64> {
    let (base, digits) = split_base(s)?;
    u64::from_str_radix(&digits, base).ok()
}

/// `strconv.ParseInt(s, 0, 64)`.
pub(crate) fn parse_int(s: &str) -> Option<i64> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (base, digits) = split_base(body)?;
    let magnitude = u64::from_str_radix(&digits, base).ok()?;
    if neg {
        if magnitude <= i64::MAX as u64 + 1 {
            Some((magnitude as i128).wrapping_neg() as i64)
        } else {
            None
        }
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// `strconv.ParseFloat(s, 64)` for the forms a template literal can take.
pub(crate) fn parse_float(s: &str) -> Option<f64> {
    if s.contains('_') && !underscores_ok(s) {
        return None;
    }
    let clean: String = s.chars().filter(|&c| c != '_').collect();
    let (neg, body) = match clean.as_bytes().first() {
        Some(b'-') => (true, &clean[1..]),
        Some(b'+') => (false, &clean[1..]),
        _ => (false, &clean[..]),
    };
    let value = if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        parse_hex_float(hex)?
    } else {
        if body.is_empty() || !body.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            return None;
        }
        if body
            .chars()
            .any(|c| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        {
            return None;
        }
        body.parse::<f64>().ok()?
    };
    Some(if neg { -value } else { value })
}

fn parse_hex_float(s: &str) -> Option<f64> {
    let (mantissa, exp) = match s.find(['p', 'P']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i32>().ok()?),
        None => return None,
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut value = 0f64;
    for c in int_part.chars() {
        value = value * 16.0 + c.to_digit(16)? as f64;
    }
    let mut scale = 1.0 / 16.0;
    for c in frac_part.chars() {
        value += c.to_digit(16)? as f64 * scale;
        scale /= 16.0;
    }
    Some(value * 2f64.powi(exp))
}

/// Go's `simplifyComplex`: a complex literal with no imaginary part can also be used
/// where a float or an integer is wanted, though on its own it stays a complex128.
fn set_complex(n: &mut NumberNode, re: f64, im: f64) {
    n.is_complex = true;
    n.complex = (re, im);
    if im == 0.0 {
        n.float = Some(re);
        if re.fract() == 0.0 && re >= i64::MIN as f64 && re < i64::MAX as f64 {
            n.int = Some(re as i64);
        }
        if re.fract() == 0.0 && re >= 0.0 && re < u64::MAX as f64 {
            n.uint = Some(re as u64);
        }
    }
}

/// `1+2i` as `fmt.Sscan` reads it into a complex128: a real part, then a signed
/// imaginary part ending in `i`. The sign that splits them is the last one not part of
/// an exponent.
fn split_complex(text: &str) -> Option<(f64, f64)> {
    let body = text.strip_suffix('i')?;
    let bytes = body.as_bytes();
    let split = (1..bytes.len()).rev().find(|&i| {
        matches!(bytes[i], b'+' | b'-') && !matches!(bytes[i - 1], b'e' | b'E' | b'p' | b'P')
    })?;
    Some((parse_float(&body[..split])?, parse_float(&body[split..])?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_forms() {
        assert_eq!(parse_int("0x1F"), Some(31));
        assert_eq!(parse_int("010"), Some(8));
        assert_eq!(parse_int("0b101"), Some(5));
        assert_eq!(parse_int("1_000"), Some(1000));
        assert_eq!(parse_int("1__0"), None);
        assert_eq!(parse_int("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_uint("-1"), None);
        assert_eq!(parse_int("08"), None);
    }

    #[test]
    fn literal_readings() {
        let n = parse_number(0, "3.0", Kind::Number).unwrap();
        assert_eq!((n.int, n.float), (Some(3), Some(3.0)));
        let n = parse_number(0, "'a'", Kind::CharConstant).unwrap();
        assert_eq!(n.int, Some(97));
        assert_eq!(
            parse_number(0, "08", Kind::Number).unwrap_err(),
            "integer overflow: \"08\""
        );
        assert_eq!(parse_float("0x1p-2"), Some(0.25));
    }

    #[test]
    fn complex_literals_read_as_go_reads_them() {
        let n = |text, kind| parse_number(Pos::default(), text, kind).unwrap();
        let c = n("2+3i", Kind::Complex);
        assert!(c.is_complex && c.complex == (2.0, 3.0) && c.float.is_none());
        assert_eq!(n("-1e3-2.5e-3i", Kind::Complex).complex, (-1e3, -2.5e-3));
        assert_eq!(n("1e+2i", Kind::Number).complex, (0.0, 1e2));
        // No imaginary part: also usable as a float and an integer.
        let zero = n("3+0i", Kind::Complex);
        assert!(zero.is_complex && zero.int == Some(3) && zero.float == Some(3.0));
        assert!(parse_number(Pos::default(), "1+i", Kind::Complex).is_err());
    }
}
