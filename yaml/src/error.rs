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

    /// The error of a piece of a file that starts `lines` lines into it.
    pub(crate) fn shifted(mut self, lines: usize) -> Self {
        if self.line != 0 {
            self.line += lines;
        }
        self
    }
}

impl Error {
    /// For a document nested deeper than Helm reads, the character `encoding/json`
    /// names in its error (`invalid character '[' exceeded max depth`): Helm turns YAML
    /// into JSON before decoding it, and the JSON decoder is what refuses the depth.
    pub fn json_depth_character(&self) -> Option<char> {
        let suffix = " is nested deeper than 10000 levels";
        match self.message.strip_suffix(suffix)? {
            "a map" => Some('{'),
            "a list" => Some('['),
            _ => None,
        }
    }

    /// The text go-yaml v2 gives for this error (what Helm prints after `yaml: `):
    /// the parser's context (`while parsing a block mapping, `) dropped, and its quirky
    /// line numbers: scanner errors name the 1-based line, parser errors the 0-based
    /// one, and neither names line 0.
    pub fn go_yaml_message(&self) -> String {
        let (scanner, problem) = match self.message.split_once(", ") {
            Some((context, problem)) if context.starts_with("while scanning") => (true, problem),
            Some((context, problem)) if context.starts_with("while parsing") => (false, problem),
            _ => (
                !self.message.starts_with("did not find"),
                self.message.as_str(),
            ),
        };
        // Errors of go-yaml's decoder rather than its parser carry no line.
        if problem.starts_with("invalid map key: ") || problem.starts_with("unknown anchor '") {
            return problem.to_owned();
        }
        let problem = match problem {
            "simple key expect ':'" | "simple key expected" => "could not find expected ':'",
            "expected ',' or ']'" => "did not find expected ',' or ']'",
            "expected ',' or '}'" => "did not find expected ',' or '}'",
            other => other,
        };
        let line = if scanner {
            self.line
        } else {
            self.line.saturating_sub(1)
        };
        if line >= 2 || (!scanner && line >= 1) {
            format!("line {line}: {problem}")
        } else {
            problem.to_owned()
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

#[cfg(test)]
mod tests {
    use crate::parse_documents;

    fn go(text: &str) -> String {
        parse_documents(text).unwrap_err().go_yaml_message()
    }

    /// What `helm template` printed after `yaml: ` for the same documents.
    #[test]
    fn go_yaml_wording_and_lines() {
        assert_eq!(go("a: [\n"), "line 1: did not find expected node content");
        assert_eq!(
            go("a: b: c\n"),
            "mapping values are not allowed in this context"
        );
        assert_eq!(
            go("a:\n  b: 1\n c: 2\n"),
            "line 2: did not find expected key"
        );
        assert_eq!(
            go("- a\nb: 1\n"),
            "line 1: did not find expected '-' indicator"
        );
        assert_eq!(
            go("key: {a: 1\n"),
            "line 1: did not find expected ',' or '}'"
        );
        assert_eq!(
            go("kind: Pod\nspec:\n  c: [\"x\"]\ninvalid\n"),
            "line 5: could not find expected ':'"
        );
    }
}
