//! Go strings are bytes. Nearly every string a chart handles is UTF-8 and is a Rust
//! `str` here (`Value::String`); the rest (binary files read with `.Files.Get`, `b64dec`
//! of binary data, byte slices cut through a character) are `Value::RawStr`, whose bytes
//! are not UTF-8, so that they reach `b64enc`, `sha256sum`, `len` and the output exactly
//! as in Go. Functions that go through a string by characters see each byte of an
//! invalid sequence as U+FFFD, as Go's `range` over a string does ([`go_lossy`]).

use std::borrow::Cow;

pub use chartkit_yaml::go_lossy;

/// A buffer that holds text, or bytes once bytes that are not UTF-8 are written to it:
/// what template output and string building write into. Text stays a `String`, so the
/// common case never checks UTF-8 again.
#[derive(Debug, Clone)]
pub(crate) enum GoBuf {
    Text(String),
    Bytes(Vec<u8>),
}

impl Default for GoBuf {
    fn default() -> Self {
        GoBuf::Text(String::new())
    }
}

impl GoBuf {
    pub(crate) fn new() -> GoBuf {
        GoBuf::default()
    }

    pub(crate) fn with_capacity(n: usize) -> GoBuf {
        GoBuf::Text(String::with_capacity(n))
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            GoBuf::Text(t) => t.len(),
            GoBuf::Bytes(b) => b.len(),
        }
    }

    pub(crate) fn push_str(&mut self, s: &str) {
        match self {
            GoBuf::Text(t) => t.push_str(s),
            GoBuf::Bytes(b) => b.extend_from_slice(s.as_bytes()),
        }
    }

    pub(crate) fn push(&mut self, c: char) {
        match self {
            GoBuf::Text(t) => t.push(c),
            GoBuf::Bytes(b) => {
                let mut buf = [0u8; 4];
                b.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }

    /// Appends bytes that may not be UTF-8.
    pub(crate) fn push_bytes(&mut self, bytes: &[u8]) {
        match self {
            GoBuf::Bytes(b) => b.extend_from_slice(bytes),
            GoBuf::Text(t) => match std::str::from_utf8(bytes) {
                Ok(text) => t.push_str(text),
                Err(_) => {
                    let mut b = std::mem::take(t).into_bytes();
                    b.extend_from_slice(bytes);
                    *self = GoBuf::Bytes(b);
                }
            },
        }
    }

    /// Appends a value's Go string bytes, if it is a string.
    pub(crate) fn push_go_str(&mut self, v: &crate::Value) {
        match v {
            crate::Value::String(s) => self.push_str(s),
            crate::Value::RawStr(b) => self.push_raw(b),
            _ => {}
        }
    }

    /// Appends bytes known not to be UTF-8 (a `RawStr`), without checking them again.
    pub(crate) fn push_raw(&mut self, bytes: &[u8]) {
        match self {
            GoBuf::Bytes(b) => b.extend_from_slice(bytes),
            GoBuf::Text(t) => {
                let mut b = std::mem::take(t).into_bytes();
                b.extend_from_slice(bytes);
                *self = GoBuf::Bytes(b);
            }
        }
    }

    /// The buffer as a template string: text, or bytes when they are not UTF-8.
    pub(crate) fn into_value(self) -> crate::Value {
        match self {
            GoBuf::Text(t) => crate::Value::string(t),
            GoBuf::Bytes(b) => crate::Value::from_go_bytes(b),
        }
    }

    /// The buffer as a template's output.
    pub(crate) fn into_output(self) -> Output {
        match self {
            GoBuf::Text(t) => Output::Text(t),
            GoBuf::Bytes(b) => match String::from_utf8(b) {
                Ok(t) => Output::Text(t),
                Err(e) => Output::Binary(e.into_bytes()),
            },
        }
    }
}

impl std::fmt::Write for GoBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.push_str(s);
        Ok(())
    }
}

/// What a template wrote. Go's templates write bytes, and a template that writes bytes
/// that are not UTF-8 (a binary file's contents) has output that is not text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    Text(String),
    /// Bytes that are not UTF-8.
    Binary(Vec<u8>),
}

impl Output {
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Output::Text(t) => t.as_bytes(),
            Output::Binary(b) => b,
        }
    }

    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The text, with each byte that is not UTF-8 read as U+FFFD (see [`go_lossy`]).
    pub fn into_text_lossy(self) -> String {
        match self {
            Output::Text(t) => t,
            Output::Binary(b) => go_lossy(&b).into_owned(),
        }
    }
}

/// Text as go-yaml's reader decodes it: UTF-16 after a UTF-16 byte order mark, else
/// UTF-8 (after its mark, if any); or its complaint about the first character it cannot
/// read or does not allow. Helm parses every rendered document with go-yaml, so output
/// with binary data in it fails there, unless it happens to read as UTF-16.
pub fn go_yaml_decode(bytes: &[u8]) -> Result<Cow<'_, str>, &'static str> {
    let (little_endian, body) = match bytes {
        [0xff, 0xfe, rest @ ..] => (true, rest),
        [0xfe, 0xff, rest @ ..] => (false, rest),
        [0xef, 0xbb, 0xbf, rest @ ..] => return go_yaml_decode_utf8(rest),
        _ => return go_yaml_decode_utf8(bytes),
    };
    let unit = |at: usize| {
        let pair = [body[at], body[at + 1]];
        u32::from(if little_endian {
            u16::from_le_bytes(pair)
        } else {
            u16::from_be_bytes(pair)
        })
    };
    let mut text = String::with_capacity(body.len() / 2);
    let mut i = 0;
    while i < body.len() {
        if i + 2 > body.len() {
            return Err("incomplete UTF-16 character");
        }
        let mut value = unit(i);
        if value & 0xfc00 == 0xdc00 {
            return Err("unexpected low surrogate area");
        }
        let mut width = 2;
        if value & 0xfc00 == 0xd800 {
            if i + 4 > body.len() {
                return Err("incomplete UTF-16 surrogate pair");
            }
            let low = unit(i + 2);
            if low & 0xfc00 != 0xdc00 {
                return Err("expected low surrogate area");
            }
            value = 0x10000 + ((value & 0x3ff) << 10) + (low & 0x3ff);
            width = 4;
        }
        let c = char::from_u32(value).ok_or("invalid Unicode character")?;
        if !yaml_allows(value) {
            return Err("control characters are not allowed");
        }
        text.push(c);
        i += width;
    }
    Ok(Cow::Owned(text))
}

/// The characters YAML allows in a stream.
fn yaml_allows(value: u32) -> bool {
    matches!(
        value,
        0x09 | 0x0a | 0x0d | 0x20..=0x7e | 0x85 | 0xa0..=0xd7ff | 0xe000..=0xfffd | 0x10000..=0x10ffff
    )
}

fn go_yaml_decode_utf8(bytes: &[u8]) -> Result<Cow<'_, str>, &'static str> {
    let mut i = 0;
    while i < bytes.len() {
        let lead = bytes[i];
        let width = match lead {
            0x00..=0x7f => 1,
            _ if lead & 0xe0 == 0xc0 => 2,
            _ if lead & 0xf0 == 0xe0 => 3,
            _ if lead & 0xf8 == 0xf0 => 4,
            _ => return Err("invalid leading UTF-8 octet"),
        };
        if i + width > bytes.len() {
            return Err("incomplete UTF-8 octet sequence");
        }
        let mut value = match width {
            1 => lead as u32,
            2 => (lead & 0x1f) as u32,
            3 => (lead & 0x0f) as u32,
            _ => (lead & 0x07) as u32,
        };
        for &octet in &bytes[i + 1..i + width] {
            if octet & 0xc0 != 0x80 {
                return Err("invalid trailing UTF-8 octet");
            }
            value = (value << 6) | (octet & 0x3f) as u32;
        }
        let shortest = match width {
            1 => true,
            2 => value >= 0x80,
            3 => value >= 0x800,
            _ => value >= 0x10000,
        };
        if !shortest {
            return Err("invalid length of a UTF-8 sequence");
        }
        if (0xd800..=0xdfff).contains(&value) || value > 0x10ffff {
            return Err("invalid Unicode character");
        }
        if !yaml_allows(value) {
            return Err("control characters are not allowed");
        }
        i += width;
    }
    // Every character checked: the bytes are UTF-8.
    std::str::from_utf8(bytes)
        .map(Cow::Borrowed)
        .map_err(|_| "invalid leading UTF-8 octet")
}

/// Template source that is not UTF-8. The parser reads `&str`, so each byte of an
/// invalid sequence is carried through it as one character of the last 128 code points
/// of Unicode (U+10FF80..U+10FFFF, private use, which no chart uses): text nodes and
/// string literals turn them back into the bytes, as Go's parser, which reads bytes,
/// keeps them. A source that already holds one of those characters cannot be carried
/// this way and is read as Go's `range` would see it (each invalid byte U+FFFD).
const SOURCE_BYTE_BASE: u32 = 0x10FF00;

/// The text the parser reads for `bytes`, and whether it carries bytes that are not
/// UTF-8 (see [`SOURCE_BYTE_BASE`]).
pub fn source_text(bytes: &[u8]) -> (Cow<'_, str>, bool) {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return (Cow::Borrowed(text), false);
    }
    let mut out = String::with_capacity(bytes.len() + bytes.len() / 2);
    for chunk in bytes.utf8_chunks() {
        if chunk.valid().chars().any(|c| source_byte(c).is_some()) {
            return (go_lossy(bytes), false);
        }
        out.push_str(chunk.valid());
        for &b in chunk.invalid() {
            out.push(char::from_u32(SOURCE_BYTE_BASE + u32::from(b)).unwrap_or('\u{FFFD}'));
        }
    }
    (Cow::Owned(out), true)
}

/// The byte a character of an encoded source stands for.
pub(crate) fn source_byte(c: char) -> Option<u8> {
    let code = c as u32;
    (SOURCE_BYTE_BASE + 0x80..=SOURCE_BYTE_BASE + 0xff)
        .contains(&code)
        .then(|| (code - SOURCE_BYTE_BASE) as u8)
}

/// The bytes a piece of an encoded source stands for.
pub(crate) fn source_bytes(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        match source_byte(c) {
            Some(b) => out.push(b),
            None => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_invalid_byte_reads_as_one_replacement_character() {
        assert_eq!(go_lossy(b"a\xe2\x82b"), "a\u{FFFD}\u{FFFD}b");
        assert_eq!(go_lossy(b"\xff\xfe"), "\u{FFFD}\u{FFFD}");
        assert_eq!(go_lossy("é".as_bytes()), "é");
    }

    #[test]
    fn a_buffer_stays_text_until_bytes_are_written() {
        let mut buf = GoBuf::new();
        buf.push_str("a");
        assert!(matches!(buf, GoBuf::Text(_)));
        buf.push_bytes(b"\xe2\x82");
        buf.push_bytes(b"\xac");
        assert_eq!(buf.clone().into_output(), Output::Text("a€".into()));
        buf.push_raw(b"\xff");
        assert_eq!(
            buf.into_output(),
            Output::Binary(b"a\xe2\x82\xac\xff".to_vec())
        );
    }

    #[test]
    fn go_yaml_reads_utf8_or_utf16_after_its_mark() {
        let problem = |b: &[u8]| go_yaml_decode(b).err();
        assert_eq!(problem(b"a: \xff"), Some("invalid leading UTF-8 octet"));
        assert_eq!(
            problem(b"a: \xe2\x82"),
            Some("incomplete UTF-8 octet sequence")
        );
        assert_eq!(problem(b"\xe2\x82a"), Some("invalid trailing UTF-8 octet"));
        assert_eq!(
            problem(b"\xc0\x80"),
            Some("invalid length of a UTF-8 sequence")
        );
        assert_eq!(problem(b"\xed\xa0\x80"), Some("invalid Unicode character"));
        assert_eq!(
            problem(b"a\x7f"),
            Some("control characters are not allowed")
        );
        assert_eq!(go_yaml_decode("a: é\n".as_bytes()).unwrap(), "a: é\n");
        assert_eq!(
            go_yaml_decode(b"\xff\xfea\x00:\x00 \x001\x00").unwrap(),
            "a: 1"
        );
        assert_eq!(go_yaml_decode(b"\xfe\xff\x00a").unwrap(), "a");
        assert_eq!(problem(b"\xff\xfea"), Some("incomplete UTF-16 character"));
        assert_eq!(
            problem(b"\xff\xfe\x00\xdc"),
            Some("unexpected low surrogate area")
        );
        assert_eq!(
            problem(b"\xff\xfe\x00\xd8a\x00"),
            Some("expected low surrogate area")
        );
    }

    #[test]
    fn sources_carry_bytes_that_are_not_utf8() {
        let (text, binary) = source_text(b"caf\xe9 {{ x }}");
        assert!(binary);
        assert_eq!(source_bytes(&text), b"caf\xe9 {{ x }}");
        assert_eq!(source_text(b"plain"), (Cow::Borrowed("plain"), false));
        // A source already holding a carrying character is read lossily instead.
        let mut bytes = "\u{10FFE9}".as_bytes().to_vec();
        bytes.push(0xff);
        let (text, binary) = source_text(&bytes);
        assert!(!binary);
        assert!(text.ends_with('\u{FFFD}'));
    }
}
