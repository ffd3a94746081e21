//! JSON syntax errors in the words of Go's `encoding/json` scanner, which the API server's
//! decoder reports verbatim (`invalid character 'x' looking for beginning of value`).

/// The first syntax error in `data` as Go's scanner words it, or `None` when `data` is
/// one well-formed JSON value (with optional surrounding white space).
pub fn syntax_error(data: &[u8]) -> Option<String> {
    let mut s = Scanner { data, pos: 0 };
    s.document().err()
}

struct Scanner<'a> {
    data: &'a [u8],
    pos: usize,
}

const EOF: &str = "unexpected end of JSON input";

/// A byte as Go's `quoteChar` shows it: `'x'`, `'\n'`, `'\''`.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => "'\\''".to_string(),
        b'"' => "'\"'".to_string(),
        b'\\' => "'\\\\'".to_string(),
        b'\n' => "'\\n'".to_string(),
        b'\r' => "'\\r'".to_string(),
        b'\t' => "'\\t'".to_string(),
        0x07 => "'\\a'".to_string(),
        0x08 => "'\\b'".to_string(),
        0x0c => "'\\f'".to_string(),
        0x0b => "'\\v'".to_string(),
        c if c.is_ascii_graphic() || c == b' ' => format!("'{}'", c as char),
        c if c < 0x80 => format!("'\\x{c:02x}'"),
        // Go quotes the rune decoded from the bytes; a lone byte is the replacement rune.
        _ => "'\\ufffd'".to_string(),
    }
}

fn invalid(c: u8, context: &str) -> String {
    format!("invalid character {} {context}", quote_char(c))
}

/// Go's decoder refuses documents nested deeper than this.
const MAX_DEPTH: usize = 10000;

#[derive(Clone, Copy, PartialEq)]
enum Container {
    Object,
    Array,
}

enum State {
    /// A value is next (`context` words a bad first character).
    Value,
    /// An object key is next.
    Key,
    /// A value just ended.
    AfterValue,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// The whole document, without recursion (nesting is bounded by the data only).
    fn document(&mut self) -> Result<(), String> {
        let mut stack: Vec<Container> = Vec::new();
        let mut state = State::Value;
        loop {
            match state {
                State::Value => {
                    self.skip_space();
                    let Some(c) = self.peek() else {
                        return Err(EOF.into());
                    };
                    match c {
                        b'{' | b'[' => {
                            self.pos += 1;
                            if stack.len() >= MAX_DEPTH {
                                return Err(invalid(c, "exceeded max depth"));
                            }
                            let (container, close) = if c == b'{' {
                                (Container::Object, b'}')
                            } else {
                                (Container::Array, b']')
                            };
                            stack.push(container);
                            self.skip_space();
                            match self.peek() {
                                None => return Err(EOF.into()),
                                Some(x) if x == close => {
                                    self.pos += 1;
                                    stack.pop();
                                    state = State::AfterValue;
                                }
                                Some(_) if container == Container::Object => state = State::Key,
                                Some(_) => state = State::Value,
                            }
                        }
                        b'"' => {
                            self.string()?;
                            state = State::AfterValue;
                        }
                        b'-' | b'0'..=b'9' => {
                            self.number()?;
                            state = State::AfterValue;
                        }
                        b't' | b'f' | b'n' => {
                            self.literal(match c {
                                b't' => "true",
                                b'f' => "false",
                                _ => "null",
                            })?;
                            state = State::AfterValue;
                        }
                        c => return Err(invalid(c, "looking for beginning of value")),
                    }
                }
                State::Key => {
                    self.skip_space();
                    match self.peek() {
                        None => return Err(EOF.into()),
                        Some(b'"') => self.string()?,
                        Some(c) => {
                            return Err(invalid(c, "looking for beginning of object key string"));
                        }
                    }
                    self.skip_space();
                    match self.peek() {
                        None => return Err(EOF.into()),
                        Some(b':') => self.pos += 1,
                        Some(c) => return Err(invalid(c, "after object key")),
                    }
                    state = State::Value;
                }
                State::AfterValue => {
                    self.skip_space();
                    let Some(top) = stack.last().copied() else {
                        return match self.peek() {
                            None => Ok(()),
                            Some(c) => Err(invalid(c, "after top-level value")),
                        };
                    };
                    let (close, context) = match top {
                        Container::Object => (b'}', "after object key:value pair"),
                        Container::Array => (b']', "after array element"),
                    };
                    match self.peek() {
                        None => return Err(EOF.into()),
                        Some(b',') => {
                            self.pos += 1;
                            state = if top == Container::Object {
                                State::Key
                            } else {
                                State::Value
                            };
                        }
                        Some(c) if c == close => {
                            self.pos += 1;
                            stack.pop();
                        }
                        Some(c) => return Err(invalid(c, context)),
                    }
                }
            }
        }
    }

    fn literal(&mut self, word: &str) -> Result<(), String> {
        for (i, want) in word.bytes().enumerate() {
            if i == 0 {
                self.pos += 1;
                continue;
            }
            match self.peek() {
                None => return Err(EOF.into()),
                Some(c) if c == want => self.pos += 1,
                Some(c) => {
                    return Err(invalid(
                        c,
                        &format!("in literal {word} (expecting {})", quote_char(want)),
                    ));
                }
            }
        }
        Ok(())
    }

    fn number(&mut self) -> Result<(), String> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
            match self.peek() {
                None => return Err(EOF.into()),
                Some(b'0'..=b'9') => {}
                Some(c) => return Err(invalid(c, "in numeric literal")),
            }
        }
        if self.peek() == Some(b'0') {
            self.pos += 1;
        } else {
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.pos += 1;
            }
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            match self.peek() {
                None => return Err(EOF.into()),
                Some(b'0'..=b'9') => {}
                Some(c) => return Err(invalid(c, "after decimal point in numeric literal")),
            }
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.pos += 1;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            match self.peek() {
                None => return Err(EOF.into()),
                Some(b'0'..=b'9') => {}
                Some(c) => return Err(invalid(c, "in exponent of numeric literal")),
            }
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.pos += 1;
            }
        }
        Ok(())
    }

    fn string(&mut self) -> Result<(), String> {
        self.pos += 1;
        loop {
            let Some(c) = self.peek() else {
                return Err(EOF.into());
            };
            self.pos += 1;
            match c {
                b'"' => return Ok(()),
                b'\\' => {
                    let Some(e) = self.peek() else {
                        return Err(EOF.into());
                    };
                    self.pos += 1;
                    match e {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                        b'u' => {
                            for _ in 0..4 {
                                match self.peek() {
                                    None => return Err(EOF.into()),
                                    Some(h) if h.is_ascii_hexdigit() => self.pos += 1,
                                    Some(h) => {
                                        return Err(invalid(
                                            h,
                                            "in \\u hexadecimal character escape",
                                        ));
                                    }
                                }
                            }
                        }
                        e => return Err(invalid(e, "in string escape code")),
                    }
                }
                c if c < 0x20 => return Err(invalid(c, "in string literal")),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_worded_as_go_words_them() {
        assert_eq!(syntax_error(br#"{"a": [1, 2]}"#), None);
        assert_eq!(syntax_error(b" 1.5e3 "), None);
        assert_eq!(syntax_error(b""), Some(EOF.into()));
        assert_eq!(syntax_error(br#"{"a": 1"#), Some(EOF.into()));
        assert_eq!(
            syntax_error(b"xyz"),
            Some("invalid character 'x' looking for beginning of value".into())
        );
        assert_eq!(
            syntax_error(br#"{a: 1}"#),
            Some("invalid character 'a' looking for beginning of object key string".into())
        );
        assert_eq!(
            syntax_error(br#"{"a" 1}"#),
            Some("invalid character '1' after object key".into())
        );
        assert_eq!(
            syntax_error(br#"{"a": 1 "b": 2}"#),
            Some("invalid character '\"' after object key:value pair".into())
        );
        assert_eq!(
            syntax_error(br#"[1 2]"#),
            Some("invalid character '2' after array element".into())
        );
        assert_eq!(
            syntax_error(br#"{"a": tru}"#),
            Some("invalid character '}' in literal true (expecting 'e')".into())
        );
        assert_eq!(
            syntax_error(b"{} x"),
            Some("invalid character 'x' after top-level value".into())
        );
        let deep = "[".repeat(10_001);
        assert_eq!(
            syntax_error(deep.as_bytes()),
            Some("invalid character '[' exceeded max depth".into())
        );
        assert_eq!(
            syntax_error(format!("{}{}", "[".repeat(500), "]".repeat(500)).as_bytes()),
            None
        );
        assert_eq!(
            syntax_error(b"{\"a\n\": 1}"),
            Some("invalid character '\\n' in string literal".into())
        );
    }
}
