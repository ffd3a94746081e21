use std::fmt;

/// A YAML document that could not be read, with the position of the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Error {
    /// 1-based line of the problem; 0 when the problem has no single position.
    pub line: usize,
    /// 1-based column of the problem; 0 when unknown.
    pub column: usize,
    /// What is wrong, in words.
    pub message: String,
}

impl Error {
    pub(crate) fn at(line: usize, column: usize, message: impl Into<String>) -> Self {
        Error {
            line,
            column,
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (0, _) => f.write_str(&self.message),
            (line, 0) => write!(f, "line {line}: {}", self.message),
            (line, column) => write!(f, "line {line}, column {column}: {}", self.message),
        }
    }
}
