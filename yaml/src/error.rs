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

    /// The error as Helm prints it for a document it reads through `sigs.k8s.io/yaml`
    /// (values, Chart.yaml, rendered manifests, `fromYaml`): go-yaml's text after
    /// `error converting YAML to JSON: yaml: `, or for a document nested too deep or
    /// values that are not a map, what `encoding/json` says when it decodes the
    /// converted document.
    pub fn helm_message(&self) -> String {
        if let Some(c) = self.json_depth_character() {
            return format!(
                "error unmarshaling JSON: while decoding JSON: invalid character '{c}' exceeded max depth"
            );
        }
        if let Some(found) = self.message.strip_prefix(NOT_A_MAP) {
            let go_type = match found {
                "a boolean" => "bool",
                "a number" => "number",
                "a list" => "array",
                _ => "string",
            };
            return format!(
                "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {go_type} into Go value of type map[string]interface {{}}"
            );
        }
        self.sigs_yaml_message()
    }

    /// The error as sigs.k8s.io/yaml's `YAMLToJSON` gives it: go-yaml's text after
    /// `error converting YAML to JSON: yaml: `, or its own words for a null key.
    pub fn sigs_yaml_message(&self) -> String {
        if let Some(value) = self.message.strip_prefix(NULL_KEY) {
            // sigs.k8s.io/yaml's words for a key go-yaml decoded to nil: Go's `%s` of
            // its missing type, and `%+#v` of the key and its value.
            return format!(
                "error converting YAML to JSON: unsupported map key of type: %!s(<nil>), key: <nil>, value: {value}"
            );
        }
        format!(
            "error converting YAML to JSON: yaml: {}",
            self.go_yaml_message()
        )
    }

    /// The error of a values file ([`crate::parse_values`]) as Helm 4 prints it: a
    /// separator line Kubernetes' reader refuses, or a document that does not decode.
    pub fn helm_values_message(&self) -> String {
        if self.message.starts_with(BAD_SEPARATOR) {
            format!("error reading yaml document: {}", self.message)
        } else {
            format!("cannot unmarshal yaml document: {}", self.helm_message())
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

/// How [`crate::parse_values`] starts the message for values that are not a map.
pub(crate) const NOT_A_MAP: &str = "values must be a map of keys to values, found ";

/// How [`crate::Node::to_value`] starts the message for a null map key; the key's
/// value follows, as Go's `%#v` prints it.
pub(crate) const NULL_KEY: &str = "a map key is null, which JSON cannot hold; the key's value is ";

/// How [`crate::values_pieces`] starts the message for a separator line it refuses.
pub(crate) const BAD_SEPARATOR: &str = "invalid Yaml document separator: ";

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

    /// sigs.k8s.io/yaml's error for a null key, with the key's value as Go prints it.
    #[test]
    fn null_keys_are_refused_in_sigs_yaml_words() {
        let helm = |text: &str| crate::parse_values(text).unwrap_err().helm_message();
        let prefix = "error converting YAML to JSON: unsupported map key of type: %!s(<nil>), key: <nil>, value: ";
        assert_eq!(helm("a:\n  ~: 3\n"), format!("{prefix}3"));
        assert_eq!(helm("a: [?, : b]\n"), format!("{prefix}\"b\""));
        assert_eq!(helm("a: [?,]\n"), format!("{prefix}<nil>"));
        assert_eq!(
            helm("? \n: {x: 1, y: [1, null, 2.5]}\n"),
            format!(
                "{prefix}map[interface {{}}]interface {{}}{{\"x\":1, true:[]interface {{}}{{1, interface {{}}(nil), 2.5}}}}"
            )
        );
        // Found past the depth a shallow reading keeps, too.
        let deep = crate::parse_first_document("a:\n  b:\n    c:\n      ~: 1\n", 2).unwrap();
        assert_eq!(
            deep.json_key_error().unwrap().helm_message(),
            format!("{prefix}1")
        );
    }
}
