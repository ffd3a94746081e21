//! Parsing Go text/template source into trees.

pub mod ast;
mod lexer;
mod number;
mod parser;
mod unquote;

pub(crate) use number::{parse_float, parse_int};
pub use parser::{parse, parse_source};

/// The bytes a string literal stands for, when it parsed.
pub(crate) fn unquote_bytes(quoted: &str) -> Option<Vec<u8>> {
    match unquote::unquote(quoted) {
        Ok(Ok(text)) => Some(text.into_bytes()),
        Ok(Err(bytes)) => Some(bytes),
        Err(_) => None,
    }
}
