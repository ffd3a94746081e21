//! A rendered template that starts with `{` is read by Helm's lint as a stream of JSON
//! values (Kubernetes' `YAMLOrJSONDecoder` guesses JSON from the first character), with
//! Go's `json.Decoder`: values one after another, with or without white space between,
//! and a syntax error worded by Go's scanner with its byte offset from the start of the
//! stream (`json: offset 3: invalid character '{' looking for beginning of object key
//! string`).

/// Whether Kubernetes' decoder reads `content` as JSON.
pub(crate) fn is_json(content: &str) -> bool {
    content.trim_start().starts_with('{')
}

/// The values of the stream in order, ending with the error that stopped the decoder,
/// if one did.
pub(crate) fn values(content: &str) -> Vec<Result<&str, String>> {
    let data = content.as_bytes();
    let mut out = Vec::new();
    let mut pos = 0;
    loop {
        while data.get(pos).is_some_and(|c| is_space(*c)) {
            pos += 1;
        }
        if pos == data.len() {
            return out;
        }
        match scan_value(data, pos) {
            Ok(end) => {
                out.push(Ok(&content[pos..end]));
                pos = end;
            }
            Err(error) => {
                out.push(Err(error.to_string()));
                return out;
            }
        }
    }
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

enum ScanError {
    /// A byte the grammar does not allow there, at this index.
    Invalid { at: usize, context: String },
    /// The stream ended inside a value.
    Eof,
}

impl std::fmt::Display for ScanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScanError::Invalid { at, context } => write!(f, "json: offset {}: {context}", at + 1),
            ScanError::Eof => f.write_str("unexpected EOF"),
        }
    }
}

/// Go's `quoteChar`: the byte as a rune (so 0x80 and up are Latin-1 letters), quoted as
/// `strconv.Quote` quotes it, between single quotes.
fn quote_char(c: u8) -> String {
    let shown = match c {
        b'\'' => "\\'".to_owned(),
        b'"' => "\"".to_owned(),
        b'\\' => "\\\\".to_owned(),
        b'\n' => "\\n".to_owned(),
        b'\r' => "\\r".to_owned(),
        b'\t' => "\\t".to_owned(),
        0x07 => "\\a".to_owned(),
        0x08 => "\\b".to_owned(),
        0x0b => "\\v".to_owned(),
        0x0c => "\\f".to_owned(),
        c if c < 0x20 || c == 0x7f => format!("\\x{c:02x}"),
        c if c < 0x80 => (c as char).to_string(),
        // U+0080 to U+009F and the no-break and soft hyphens are not printable to Go.
        c if c < 0xa0 || c == 0xad => format!("\\u{c:04x}"),
        c => char::from(c).to_string(),
    };
    format!("'{shown}'")
}

/// The end of the JSON value starting at `start`, walking the grammar as Go's scanner
/// does, so that the first byte it refuses is the one Go names.
fn scan_value(data: &[u8], start: usize) -> Result<usize, ScanError> {
    #[derive(Clone, Copy, PartialEq)]
    enum Open {
        Object,
        Array,
    }
    let invalid = |at: usize, context: &str| ScanError::Invalid {
        at,
        context: format!("invalid character {} {context}", quote_char(data[at])),
    };
    let byte = |at: usize| data.get(at).copied().ok_or(ScanError::Eof);
    let skip_space = |mut at: usize| {
        while data.get(at).is_some_and(|c| is_space(*c)) {
            at += 1;
        }
        at
    };
    let mut stack: Vec<Open> = Vec::new();
    let mut pos = start;
    loop {
        // A value begins at `pos`.
        pos = skip_space(pos);
        let c = byte(pos)?;
        match c {
            b'{' | b'[' => {
                if stack.len() >= 10_000 {
                    return Err(invalid(pos, "exceeded max depth"));
                }
                let open = if c == b'{' { Open::Object } else { Open::Array };
                stack.push(open);
                pos = skip_space(pos + 1);
                let next = byte(pos)?;
                if (open == Open::Object && next == b'}') || (open == Open::Array && next == b']') {
                    stack.pop();
                    pos += 1;
                } else if open == Open::Object {
                    pos = object_key(data, pos, &invalid)?;
                    continue;
                } else {
                    continue;
                }
            }
            b'"' => pos = string(data, pos, &invalid)?,
            b'-' | b'0'..=b'9' => pos = number(data, pos, &invalid)?,
            b't' | b'f' | b'n' => {
                let word: &[u8] = match c {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                for (i, want) in word.iter().enumerate().skip(1) {
                    let got = byte(pos + i)?;
                    if got != *want {
                        return Err(invalid(
                            pos + i,
                            &format!(
                                "in literal {} (expecting {})",
                                String::from_utf8_lossy(word),
                                quote_char(*want)
                            ),
                        ));
                    }
                }
                pos += word.len();
            }
            _ => return Err(invalid(pos, "looking for beginning of value")),
        }
        // A value ended just before `pos`: close what it closes, or go on to the next.
        loop {
            let Some(open) = stack.last().copied() else {
                return Ok(pos);
            };
            pos = skip_space(pos);
            let c = byte(pos)?;
            match (open, c) {
                (Open::Object, b'}') | (Open::Array, b']') => {
                    stack.pop();
                    pos += 1;
                }
                (Open::Object, b',') => {
                    pos = object_key(data, skip_space(pos + 1), &invalid)?;
                    break;
                }
                (Open::Array, b',') => {
                    pos += 1;
                    break;
                }
                (Open::Object, _) => return Err(invalid(pos, "after object key:value pair")),
                (Open::Array, _) => return Err(invalid(pos, "after array element")),
            }
        }
    }
}

/// An object's key and its colon, from `pos`; returns where the value begins.
fn object_key(
    data: &[u8],
    pos: usize,
    invalid: &dyn Fn(usize, &str) -> ScanError,
) -> Result<usize, ScanError> {
    match data.get(pos) {
        None => return Err(ScanError::Eof),
        Some(b'"') => {}
        Some(_) => return Err(invalid(pos, "looking for beginning of object key string")),
    }
    let mut pos = string(data, pos, invalid)?;
    while data.get(pos).is_some_and(|c| is_space(*c)) {
        pos += 1;
    }
    match data.get(pos) {
        None => Err(ScanError::Eof),
        Some(b':') => Ok(pos + 1),
        Some(_) => Err(invalid(pos, "after object key")),
    }
}

fn string(
    data: &[u8],
    mut pos: usize,
    invalid: &dyn Fn(usize, &str) -> ScanError,
) -> Result<usize, ScanError> {
    pos += 1;
    loop {
        let c = *data.get(pos).ok_or(ScanError::Eof)?;
        match c {
            b'"' => return Ok(pos + 1),
            b'\\' => {
                pos += 1;
                match *data.get(pos).ok_or(ScanError::Eof)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                    b'u' => {
                        for _ in 0..4 {
                            pos += 1;
                            if !data.get(pos).ok_or(ScanError::Eof)?.is_ascii_hexdigit() {
                                return Err(invalid(pos, "in \\u hexadecimal character escape"));
                            }
                        }
                    }
                    _ => return Err(invalid(pos, "in string escape code")),
                }
            }
            c if c < 0x20 => return Err(invalid(pos, "in string literal")),
            _ => {}
        }
        pos += 1;
    }
}

fn number(
    data: &[u8],
    mut pos: usize,
    invalid: &dyn Fn(usize, &str) -> ScanError,
) -> Result<usize, ScanError> {
    let digit = |at: usize| data.get(at).is_some_and(u8::is_ascii_digit);
    let need_digit = |at: usize, context: &str| match data.get(at) {
        None => Err(ScanError::Eof),
        Some(c) if c.is_ascii_digit() => Ok(()),
        Some(_) => Err(invalid(at, context)),
    };
    if data[pos] == b'-' {
        pos += 1;
        need_digit(pos, "in numeric literal")?;
    }
    if data[pos] == b'0' {
        pos += 1;
    } else {
        while digit(pos) {
            pos += 1;
        }
    }
    if data.get(pos) == Some(&b'.') {
        pos += 1;
        need_digit(pos, "after decimal point in numeric literal")?;
        while digit(pos) {
            pos += 1;
        }
    }
    if matches!(data.get(pos), Some(b'e' | b'E')) {
        pos += 1;
        if matches!(data.get(pos), Some(b'+' | b'-')) {
            pos += 1;
        }
        need_digit(pos, "in exponent of numeric literal")?;
        while digit(pos) {
            pos += 1;
        }
    }
    Ok(pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(content: &str) -> String {
        values(content).pop().unwrap().unwrap_err()
    }

    /// helm v4.1.4's lint said the same of templates rendering to these.
    #[test]
    fn errors_carry_go_offsets_and_words() {
        assert_eq!(
            error("{ {- $relname := .Release.Name -}}\n"),
            "json: offset 3: invalid character '{' looking for beginning of object key string"
        );
        assert_eq!(
            error("{\"a\": 1}\n---\n[1, 2]\n"),
            "json: offset 11: invalid character '-' in numeric literal"
        );
        assert_eq!(error("{\"kind\": \"ConfigMap\"\n"), "unexpected EOF");
        assert_eq!(
            error("{\"a\": tru }"),
            "json: offset 10: invalid character ' ' in literal true (expecting 'e')"
        );
    }

    #[test]
    fn a_stream_holds_values_back_to_back() {
        let found: Vec<_> = values(" {\"a\": [1, {\"b\": null}]}{}\n{\"c\": \"x\\\"\"}\n")
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            found,
            ["{\"a\": [1, {\"b\": null}]}", "{}", "{\"c\": \"x\\\"\"}"]
        );
    }
}
