//! Parsing Go text/template source into trees.

pub mod ast;
mod lexer;
mod number;
mod parser;
mod unquote;

pub(crate) use number::{parse_float, parse_int};
pub use parser::parse;
