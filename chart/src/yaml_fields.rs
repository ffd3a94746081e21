//! Decoding YAML nodes into Go-typed fields the way `sigs.k8s.io/yaml` does: scalars
//! become text for string fields, null leaves a field empty, and field names match
//! case-insensitively (Go's `encoding/json` rule), with the last spelling in key order
//! winning.

use std::collections::{BTreeMap, HashMap};

use chartkit_yaml::{Node, NodeKind, Value};

/// A field whose YAML does not fit its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldError {
    pub line: usize,
    pub field: String,
    pub expected: &'static str,
    pub found: &'static str,
}

impl FieldError {
    fn new(node: &Node, field: &str, expected: &'static str) -> FieldError {
        FieldError {
            line: node.line,
            field: field.to_owned(),
            expected,
            found: node.kind_name(),
        }
    }
}

/// The fields of a YAML map, keyed by lower-cased name.
pub(crate) struct Fields<'a> {
    by_name: HashMap<String, &'a Node>,
}

impl<'a> Fields<'a> {
    /// Reads the fields of `node`, which must be a map (or null, which has no fields).
    pub fn of(node: &'a Node, what: &str) -> Result<Fields<'a>, FieldError> {
        let pairs = match &node.kind {
            NodeKind::Map(pairs) => pairs,
            NodeKind::Null => {
                return Ok(Fields {
                    by_name: HashMap::new(),
                });
            }
            _ => return Err(FieldError::new(node, what, "a map of fields")),
        };
        // Duplicate keys: the last one wins. Then JSON decoding visits keys in sorted order,
        // so among spellings of one field name the greatest key wins.
        let mut exact: BTreeMap<String, &Node> = BTreeMap::new();
        for (key, value) in pairs {
            if let Some(name) = key.as_map_key() {
                exact.insert(name, value);
            }
        }
        let by_name = exact
            .into_iter()
            .map(|(k, v)| (k.to_lowercase(), v))
            .collect();
        Ok(Fields { by_name })
    }

    pub fn get(&self, name: &str) -> Option<&'a Node> {
        self.by_name.get(&name.to_lowercase()).copied()
    }

    pub fn string(&self, name: &str) -> Result<String, FieldError> {
        self.get(name)
            .map_or(Ok(String::new()), |node| string(node, name))
    }

    pub fn boolean(&self, name: &str) -> Result<bool, FieldError> {
        match self.get(name) {
            None => Ok(false),
            Some(node) => match node.kind {
                NodeKind::Bool(b) => Ok(b),
                NodeKind::Null => Ok(false),
                _ => Err(FieldError::new(node, name, "true or false")),
            },
        }
    }

    pub fn string_list(&self, name: &str) -> Result<Vec<String>, FieldError> {
        let Some(node) = self.get(name) else {
            return Ok(Vec::new());
        };
        match &node.kind {
            NodeKind::Null => Ok(Vec::new()),
            NodeKind::Seq(items) => items
                .iter()
                .map(|item| {
                    string(item, name).map_err(|_| FieldError::new(item, name, "a list of strings"))
                })
                .collect(),
            _ => Err(FieldError::new(node, name, "a list of strings")),
        }
    }

    pub fn string_map(&self, name: &str) -> Result<BTreeMap<String, String>, FieldError> {
        let Some(node) = self.get(name) else {
            return Ok(BTreeMap::new());
        };
        match &node.kind {
            NodeKind::Null => Ok(BTreeMap::new()),
            NodeKind::Map(pairs) => {
                let mut out = BTreeMap::new();
                for (key, value) in pairs {
                    let key = key
                        .as_map_key()
                        .ok_or_else(|| FieldError::new(key, name, "a map of strings"))?;
                    let text = string(value, &format!("{name}.{key}"))?;
                    out.insert(key, text);
                }
                Ok(out)
            }
            _ => Err(FieldError::new(node, name, "a map of strings")),
        }
    }

    /// A list of maps decoded by `each`; null entries are passed as `None`.
    pub fn list_of<T>(
        &self,
        name: &str,
        mut each: impl FnMut(Option<&'a Node>) -> Result<T, FieldError>,
    ) -> Result<Vec<T>, FieldError> {
        let Some(node) = self.get(name) else {
            return Ok(Vec::new());
        };
        match &node.kind {
            NodeKind::Null => Ok(Vec::new()),
            NodeKind::Seq(items) => items
                .iter()
                .map(|item| {
                    each(if item.kind == NodeKind::Null {
                        None
                    } else {
                        Some(item)
                    })
                })
                .collect(),
            _ => Err(FieldError::new(node, name, "a list")),
        }
    }

    /// A list of arbitrary values, converted as Helm's values are.
    pub fn value_list(&self, name: &str) -> Result<Vec<Value>, FieldError> {
        let Some(node) = self.get(name) else {
            return Ok(Vec::new());
        };
        match &node.kind {
            NodeKind::Null => Ok(Vec::new()),
            NodeKind::Seq(items) => items
                .iter()
                .map(|item| {
                    item.to_value()
                        .map_err(|_| FieldError::new(item, name, "a list of strings or maps"))
                })
                .collect(),
            _ => Err(FieldError::new(node, name, "a list")),
        }
    }
}

fn string(node: &Node, field: &str) -> Result<String, FieldError> {
    node.to_go_string()
        .ok_or_else(|| FieldError::new(node, field, "a string"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chartkit_yaml::parse_node;

    #[test]
    fn field_names_match_case_insensitively_and_the_greatest_spelling_wins() {
        let node = parse_node("Name: upper\nname: lower\nAPIVERSION: v2\n").unwrap();
        let fields = Fields::of(&node, "Chart.yaml").unwrap();
        assert_eq!(fields.string("name").unwrap(), "lower");
        assert_eq!(fields.string("apiVersion").unwrap(), "v2");
    }

    #[test]
    fn scalars_become_text_and_collections_are_type_errors() {
        let node = parse_node("a: 1.10\nb: [x]\nc: ~\nk: abc\n").unwrap();
        let fields = Fields::of(&node, "Chart.yaml").unwrap();
        assert_eq!(fields.string("a").unwrap(), "1.1");
        assert_eq!(fields.string("c").unwrap(), "");
        let err = fields.string("b").unwrap_err();
        assert_eq!(
            (err.line, err.expected, err.found),
            (2, "a string", "a list")
        );
        assert_eq!(
            fields.string_list("k").unwrap_err().expected,
            "a list of strings"
        );
    }
}
