//! go-yaml v2's scalar resolution (YAML 1.1 with go-yaml's own choices), which decides
//! what a plain scalar means when it is read and whether a string needs quotes when it is
//! written.

/// What a plain scalar resolves to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scalar {
    Null,
    Bool(bool),
    Int(i64),
    /// Integers above i64::MAX that fit in a u64.
    Uint(u64),
    Float(f64),
    /// A string; `timestamp` marks text go-yaml recognises as a timestamp (it stays a
    /// string when decoded into an interface, but must be quoted when written).
    Str {
        timestamp: bool,
    },
    /// The merge key `<<`.
    Merge,
}

fn lookup_word(text: &str) -> Option<Scalar> {
    Some(match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            Scalar::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Scalar::Bool(false)
        }
        "" | "~" | "null" | "Null" | "NULL" => Scalar::Null,
        ".nan" | ".NaN" | ".NAN" => Scalar::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => Scalar::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => Scalar::Float(f64::NEG_INFINITY),
        "<<" => Scalar::Merge,
        _ => return None,
    })
}

/// Resolves an untagged plain scalar.
pub(crate) fn resolve_plain(text: &str) -> Scalar {
    if let Some(word) = lookup_word(text) {
        return word;
    }
    let Some(&first) = text.as_bytes().first() else {
        return Scalar::Null;
    };
    match first {
        b'.' => match parse_go_float(text) {
            Some(f) => Scalar::Float(f),
            None => Scalar::Str { timestamp: false },
        },
        b'0'..=b'9' | b'+' | b'-' => {
            if is_timestamp(text) {
                return Scalar::Str { timestamp: true };
            }
            let plain: String = text.chars().filter(|&c| c != '_').collect();
            if let Some(i) = parse_go_int(&plain) {
                return Scalar::Int(i);
            }
            if let Some(u) = parse_go_uint(&plain) {
                return Scalar::Uint(u);
            }
            if is_yaml_style_float(&plain)
                && let Some(f) = parse_go_float(&plain)
            {
                return Scalar::Float(f);
            }
            if let Some(binary) = plain.strip_prefix("0b") {
                if let Ok(i) = i64::from_str_radix(binary, 2) {
                    return Scalar::Int(i);
                }
            } else if let Some(binary) = plain.strip_prefix("-0b")
                && let Ok(i) = i64::from_str_radix(&format!("-{binary}"), 2)
            {
                return Scalar::Int(i);
            }
            Scalar::Str { timestamp: false }
        }
        _ => Scalar::Str { timestamp: false },
    }
}

/// True when go-yaml would write `text` with quotes because, unquoted, it would read back
/// as something other than this string.
pub(crate) fn needs_quotes(text: &str) -> bool {
    // go-yaml looks a word up only when its first character can start one, and `<`
    // cannot, so the merge key is written plain like any other string.
    if text == "<<" {
        return false;
    }
    !matches!(resolve_plain(text), Scalar::Str { timestamp: false }) || is_base60_float(text)
}

/// Splits an optional sign and a Go base prefix off an integer literal.
fn split_go_int(text: &str) -> Option<(bool, u32, &str)> {
    let (negative, rest) = match text.as_bytes().first()? {
        b'+' => (false, &text[1..]),
        b'-' => (true, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) =
        if let Some(d) = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
            (16, d)
        } else if let Some(d) = rest.strip_prefix("0o").or_else(|| rest.strip_prefix("0O")) {
            (8, d)
        } else if let Some(d) = rest.strip_prefix("0b").or_else(|| rest.strip_prefix("0B")) {
            (2, d)
        } else if rest.len() > 1 && rest.starts_with('0') {
            (8, &rest[1..])
        } else {
            (10, rest)
        };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    Some((negative, radix, digits))
}

/// `strconv.ParseInt(text, 0, 64)` (underscores already removed).
fn parse_go_int(text: &str) -> Option<i64> {
    let (negative, radix, digits) = split_go_int(text)?;
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    if negative {
        if magnitude <= i64::MAX as u64 + 1 {
            Some((magnitude as i64).wrapping_neg())
        } else {
            None
        }
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// `strconv.ParseUint(text, 0, 64)`: no sign allowed.
fn parse_go_uint(text: &str) -> Option<u64> {
    if text.starts_with(['+', '-']) {
        return None;
    }
    let (_, radix, digits) = split_go_int(text)?;
    u64::from_str_radix(digits, radix).ok()
}

/// `strconv.ParseFloat(text, 64)` for the decimal forms YAML can produce.
fn parse_go_float(text: &str) -> Option<f64> {
    let body = text.strip_prefix(['+', '-']).unwrap_or(text);
    if body.is_empty()
        || !body
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
    {
        return None;
    }
    text.parse::<f64>().ok()
}

/// go-yaml's `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_style_float(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < bytes.len() && bytes[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if bytes.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == bytes.len()
}

/// go-yaml's `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`: sexagesimal numbers
/// such as `1:20`, which YAML 1.1 readers may take as numbers, so they get quoted.
fn is_base60_float(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    if !bytes.get(i).is_some_and(u8::is_ascii_digit) {
        return false;
    }
    while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while bytes.get(i) == Some(&b':') {
        i += 1;
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() && i - start < 2 {
            i += 1;
        }
        let group = &bytes[start..i];
        let valid = match group {
            [d] => d.is_ascii_digit(),
            [a, b] => (b'0'..=b'5').contains(a) && b.is_ascii_digit(),
            _ => false,
        };
        if !valid {
            return false;
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'_') {
            i += 1;
        }
    }
    i == bytes.len()
}

/// go-yaml v2's timestamp check: `YYYY-M-D`, optionally followed by a time, in the layouts
/// `2006-1-2T15:4:5.999999999Z07:00` (also with `t`), `2006-1-2 15:4:5.999999999`.
fn is_timestamp(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() < 5 || !bytes[..4].iter().all(u8::is_ascii_digit) || bytes[4] != b'-' {
        return false;
    }
    let mut cursor = Cursor { bytes, pos: 5 };
    let year: u32 = text[..4].parse().unwrap_or(0);
    let Some(month) = cursor.number(1, 2) else {
        return false;
    };
    if !cursor.eat(b'-') {
        return false;
    }
    let Some(day) = cursor.number(1, 2) else {
        return false;
    };
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return false;
    }
    if cursor.done() {
        return true;
    }
    let zoned = match cursor.next() {
        Some(b'T' | b't') => true,
        Some(b' ') => false,
        _ => return false,
    };
    let Some(hour) = cursor.number(1, 2) else {
        return false;
    };
    if !cursor.eat(b':') {
        return false;
    }
    let Some(minute) = cursor.number(1, 2) else {
        return false;
    };
    if !cursor.eat(b':') {
        return false;
    }
    let Some(second) = cursor.number(1, 2) else {
        return false;
    };
    if hour > 23 || minute > 59 || second > 59 {
        return false;
    }
    if cursor.eat(b'.') && cursor.number(1, 9).is_none() {
        return false;
    }
    if !zoned {
        return cursor.done();
    }
    if cursor.eat(b'Z') {
        return cursor.done();
    }
    if !(cursor.eat(b'+') || cursor.eat(b'-')) {
        return false;
    }
    let zone_hours = cursor.exact(2);
    let colon = cursor.eat(b':');
    let zone_minutes = cursor.exact(2);
    matches!((zone_hours, colon, zone_minutes), (Some(h), true, Some(m)) if h <= 24 && m <= 59)
        && cursor.done()
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn done(&self) -> bool {
        self.pos == self.bytes.len()
    }
    fn next(&mut self) -> Option<u8> {
        let b = self.bytes.get(self.pos).copied();
        self.pos += 1;
        b
    }
    fn eat(&mut self, expected: u8) -> bool {
        if self.bytes.get(self.pos) == Some(&expected) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn number(&mut self, min: usize, max: usize) -> Option<u32> {
        let start = self.pos;
        while self.pos < self.bytes.len()
            && self.pos - start < max
            && self.bytes[self.pos].is_ascii_digit()
        {
            self.pos += 1;
        }
        if self.pos - start < min {
            return None;
        }
        std::str::from_utf8(&self.bytes[start..self.pos])
            .ok()?
            .parse()
            .ok()
    }
    fn exact(&mut self, count: usize) -> Option<u32> {
        self.number(count, count)
    }
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_1_1_words() {
        assert_eq!(resolve_plain("yes"), Scalar::Bool(true));
        assert_eq!(resolve_plain("y"), Scalar::Bool(true));
        assert_eq!(resolve_plain("Off"), Scalar::Bool(false));
        assert_eq!(resolve_plain("tRue"), Scalar::Str { timestamp: false });
        assert_eq!(resolve_plain("~"), Scalar::Null);
        assert_eq!(resolve_plain(""), Scalar::Null);
        assert_eq!(resolve_plain("<<"), Scalar::Merge);
    }

    #[test]
    fn go_integer_literals() {
        assert_eq!(resolve_plain("0777"), Scalar::Int(511));
        assert_eq!(resolve_plain("0x1F"), Scalar::Int(31));
        assert_eq!(resolve_plain("0o17"), Scalar::Int(15));
        assert_eq!(resolve_plain("0b101"), Scalar::Int(5));
        assert_eq!(resolve_plain("1_000"), Scalar::Int(1000));
        assert_eq!(resolve_plain("-0"), Scalar::Int(0));
        assert_eq!(resolve_plain("+12"), Scalar::Int(12));
        assert_eq!(
            resolve_plain("12345678901234567890"),
            Scalar::Uint(12345678901234567890)
        );
        assert_eq!(resolve_plain("08"), Scalar::Float(8.0));
    }

    #[test]
    fn floats() {
        assert_eq!(resolve_plain("1e3"), Scalar::Float(1000.0));
        assert_eq!(resolve_plain("1.50"), Scalar::Float(1.5));
        assert_eq!(resolve_plain(".5"), Scalar::Float(0.5));
        assert_eq!(resolve_plain("-.5"), Scalar::Float(-0.5));
        assert_eq!(resolve_plain("1."), Scalar::Float(1.0));
        assert_eq!(resolve_plain("1.2.3"), Scalar::Str { timestamp: false });
        assert_eq!(resolve_plain("1e"), Scalar::Str { timestamp: false });
        assert!(matches!(resolve_plain(".inf"), Scalar::Float(f) if f.is_infinite()));
    }

    #[test]
    fn timestamps_stay_strings_but_are_quoted() {
        assert_eq!(resolve_plain("2001-12-14"), Scalar::Str { timestamp: true });
        assert_eq!(
            resolve_plain("2001-12-14T21:59:43.10-05:00"),
            Scalar::Str { timestamp: true }
        );
        assert_eq!(
            resolve_plain("2001-12-14 21:59:43.10"),
            Scalar::Str { timestamp: true }
        );
        assert_eq!(
            resolve_plain("2001-02-30"),
            Scalar::Str { timestamp: false }
        );
        assert!(needs_quotes("2001-12-14"));
    }

    #[test]
    fn quoting_decisions() {
        for text in ["true", "1", "1.5", "null", "", "~", "1:20", "0x10", "YES"] {
            assert!(needs_quotes(text), "{text}");
        }
        for text in ["hello", "1.2.3", "v1", "tRue", "a:b", "<<"] {
            assert!(!needs_quotes(text), "{text}");
        }
    }
}
