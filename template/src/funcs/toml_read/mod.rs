//! The TOML reader Helm's `fromToml` uses: BurntSushi/toml v1.6.0 (Helm 4.1.4's go.mod),
//! its lexer's states and its parser's bookkeeping followed step by step. `fromToml`
//! hands the reader's error text to the template as data (`.Error`), so the text must be
//! that reader's own, line number and "last key" included, and so must the choice of
//! what is an error at all (TOML 1.1's `\e`, `\x`, newlines and trailing commas in
//! inline tables, times without seconds are accepted; a table defined twice is not).
//!
//! The lexer is a state machine whose states push items (tokens or one error) onto a
//! queue; the parser takes items in order, so an error the lexer found after some
//! tokens is seen after the parser has used those tokens, as in Go, where the two talk
//! through a channel.

mod lexer;
mod parser;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use toml::value::Datetime;

use crate::print::quote;

pub(crate) use parser::double_quoted_escapes;

/// What went wrong, as BurntSushi's `ParseError.Error()` words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseError {
    pub(super) message: String,
    pub(super) line: usize,
    pub(super) last_key: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.last_key.is_empty() {
            write!(f, "toml: line {}: {}", self.line, self.message)
        } else {
            write!(
                f,
                "toml: line {} (last key {}): {}",
                self.line,
                quote(&self.last_key),
                self.message
            )
        }
    }
}

/// A value as the reader leaves it in Go: a table (`map[string]any`), an array of
/// tables made by `[[name]]` (`[]map[string]any`), or anything else.
#[derive(Clone, Debug)]
pub(crate) enum Node {
    Table(Table),
    Tables(Rc<RefCell<Vec<Table>>>),
    String(String),
    Integer(i64),
    Float(f64),
    Bool(bool),
    Datetime(Datetime),
    Array(Vec<Node>),
}

pub(crate) type Table = Rc<RefCell<HashMap<String, Node>>>;

fn new_table() -> Table {
    Rc::new(RefCell::new(HashMap::new()))
}

/// Reads a TOML document into its top-level table.
pub(crate) fn read(data: &[u8]) -> Result<Table, ParseError> {
    let data = if data.starts_with(b"\xff\xfe") || data.starts_with(b"\xfe\xff") {
        &data[2..]
    } else if data.starts_with(b"\xef\xbb\xbf") {
        &data[3..]
    } else {
        data
    };
    if data[..data.len().min(6)].contains(&0) {
        return Err(ParseError {
            message:
                "files cannot contain NULL bytes; probably using UTF-16; TOML files must be UTF-8"
                    .into(),
            line: 1,
            last_key: String::new(),
        });
    }
    parser::Parser::new(data).run()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(input: &str) -> String {
        read(input.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn errors_are_burntsushis_words() {
        assert_eq!(
            error("a ="),
            "toml: line 1 (last key \"a\"): unexpected EOF; expected value"
        );
        assert_eq!(
            error("a = 1\na = 2"),
            "toml: line 2 (last key \"a\"): Key 'a' has already been defined."
        );
        assert_eq!(
            error("[t]\nx = 1\n[t]"),
            "toml: line 3: Key 't' has already been defined."
        );
    }

    #[test]
    fn values_are_read() {
        let table = read(b"a = 1\nb = 'x'\n[t]\nc = [1.5, true]\n[[l]]\nd = 1979-05-27").unwrap();
        let table = table.borrow();
        assert!(matches!(table.get("a"), Some(Node::Integer(1))));
        assert!(matches!(table.get("b"), Some(Node::String(s)) if s == "x"));
        assert!(matches!(table.get("t"), Some(Node::Table(_))));
        assert!(matches!(table.get("l"), Some(Node::Tables(l)) if l.borrow().len() == 1));
    }
}
