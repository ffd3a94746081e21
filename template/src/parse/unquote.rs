//! Go's `strconv.Unquote` and `strconv.UnquoteChar` for template literals.

const SYNTAX: &str = "invalid syntax";

/// Decodes one possibly escaped character at the start of `s`. Returns the bytes it
/// stands for (an escape like `\xff` is a single raw byte, as in Go strings) and the rest.
pub(crate) fn unquote_char(s: &str, quote: char) -> Result<(Vec<u8>, &str), &'static str> {
    let mut chars = s.chars();
    let c = chars.next().ok_or(SYNTAX)?;
    if c == quote && (quote == '\'' || quote == '"') {
        return Err(SYNTAX);
    }
    if c != '\\' {
        let mut buf = [0u8; 4];
        return Ok((c.encode_utf8(&mut buf).as_bytes().to_vec(), chars.as_str()));
    }
    let e = chars.next().ok_or(SYNTAX)?;
    let rest = chars.as_str();
    let simple = |b: u8| Ok((vec![b], rest));
    match e {
        'a' => simple(7),
        'b' => simple(8),
        'f' => simple(12),
        'n' => simple(b'\n'),
        'r' => simple(b'\r'),
        't' => simple(b'\t'),
        'v' => simple(11),
        '\\' => simple(b'\\'),
        '\'' | '"' => {
            if e != quote {
                return Err(SYNTAX);
            }
            simple(e as u8)
        }
        'x' | 'u' | 'U' => {
            let n = match e {
                'x' => 2,
                'u' => 4,
                _ => 8,
            };
            if rest.len() < n || !rest.is_char_boundary(n) {
                return Err(SYNTAX);
            }
            let v = u32::from_str_radix(&rest[..n], 16).map_err(|_| SYNTAX)?;
            if rest[..n].starts_with(['+', '-']) {
                return Err(SYNTAX);
            }
            let rest = &rest[n..];
            if e == 'x' {
                return Ok((vec![v as u8], rest));
            }
            let c = char::from_u32(v).ok_or(SYNTAX)?;
            let mut buf = [0u8; 4];
            Ok((c.encode_utf8(&mut buf).as_bytes().to_vec(), rest))
        }
        '0'..='7' => {
            // Two more octal digits; anything else there (even a multi-byte character,
            // which must not be cut) is a syntax error.
            if rest.len() < 2 || !rest.is_char_boundary(2) {
                return Err(SYNTAX);
            }
            let digits = format!("{e}{}", &rest[..2]);
            let v = u32::from_str_radix(&digits, 8).map_err(|_| SYNTAX)?;
            if v > 255 {
                return Err(SYNTAX);
            }
            Ok((vec![v as u8], &rest[2..]))
        }
        _ => Err(SYNTAX),
    }
}

/// Unquotes a `"..."` or `` `...` `` literal. Raw strings lose their carriage returns, as
/// in Go. A literal whose escapes make bytes that are not UTF-8 (`"\xff"`) is `Err` of
/// those bytes inside `Ok`.
pub(crate) fn unquote(s: &str) -> Result<Result<String, Vec<u8>>, &'static str> {
    if s.len() < 2 {
        return Err(SYNTAX);
    }
    let quote = s.as_bytes()[0];
    if quote != s.as_bytes()[s.len() - 1] {
        return Err(SYNTAX);
    }
    let inner = &s[1..s.len() - 1];
    match quote {
        b'`' => {
            if inner.contains('`') {
                return Err(SYNTAX);
            }
            Ok(Ok(inner.replace('\r', "")))
        }
        b'"' => {
            if inner.contains('\n') {
                return Err(SYNTAX);
            }
            if !inner.contains(['\\', '"']) {
                return Ok(Ok(inner.to_owned()));
            }
            let mut bytes = Vec::with_capacity(inner.len());
            let mut rest = inner;
            while !rest.is_empty() {
                let (b, tail) = unquote_char(rest, '"')?;
                bytes.extend_from_slice(&b);
                rest = tail;
            }
            Ok(String::from_utf8(bytes).map_err(|e| e.into_bytes()))
        }
        _ => Err(SYNTAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(
            unquote(r#""a\tb\n\x41\u00e9\101""#),
            Ok(Ok("a\tb\nAéA".into()))
        );
        assert_eq!(unquote("`a\r\nb`"), Ok(Ok("a\nb".into())));
        assert_eq!(unquote(r#""a\xff""#), Ok(Err(b"a\xff".to_vec())));
        assert_eq!(unquote(r#""\q""#), Err(SYNTAX));
        assert_eq!(unquote(r#""\'""#), Err(SYNTAX));
    }

    /// Found by the parse fuzz target: an octal escape followed by a multi-byte
    /// character used to slice inside that character and panic.
    #[test]
    fn short_escapes_before_multibyte_characters_are_errors() {
        assert_eq!(unquote("\"\\1\u{0}\u{15e}\""), Err(SYNTAX));
        assert_eq!(unquote("\"\\1\u{15e}\""), Err(SYNTAX));
        assert_eq!(unquote("\"\\x4\u{e9}\""), Err(SYNTAX));
    }
}
