//! YAML exactly as Helm reads and writes it.
//!
//! Helm never looks at YAML directly: `sigs.k8s.io/yaml` parses with go-yaml v2 (YAML 1.1
//! scalars), converts the result to JSON and decodes that. Charts depend on every quirk of
//! that path — `y: yes` is the key `"true"` mapped to `true`, integers in values.yaml are
//! float64 — so this crate reproduces it instead of using a YAML 1.2 library directly.
//!
//! - [`parse_documents`] / [`parse_node`]: YAML text to [`Node`] trees with go-yaml's
//!   resolved scalar types and source positions.
//! - [`Node::to_value`] / [`parse_values`]: the JSON round trip Helm applies to values.
//! - [`to_yaml`]: go-yaml v2's emitter, for `toYaml` and `helm show chart`.
//! - [`gonum`]: Go's float formatting (`%v`, `strconv.FormatFloat`, `encoding/json`).

mod emit;
mod error;
pub mod gonum;
mod node;
mod resolve;
mod value;

pub use emit::{compare_keys, to_yaml, to_yaml_nested_map, to_yaml_pretty};
pub use error::Error;
pub use node::{Node, NodeKind, parse_documents, parse_documents_to_depth, parse_node};
pub use value::{Map, Value, go_lossy};

/// Parses a values file the way Helm 4 does: every YAML document in the stream is decoded
/// to a map and later documents are merged over earlier ones. An empty file is an empty map.
pub fn parse_values(text: &str) -> Result<Map, Error> {
    let mut merged = Map::new();
    for doc in parse_documents(text)? {
        if let Some(map) = values_document(&doc)? {
            merge_documents(&mut merged, map);
        }
    }
    Ok(merged)
}

/// Checks a values file as [`parse_values`] reads it, without keeping the values: every
/// document must parse and be a map (or empty). Only the top level is built, so nesting
/// is allowed as deep as go-yaml allows it (10,000 levels; [`parse_values`] builds at
/// most 512). This is how a package is judged for a repository index, where the values
/// themselves are not needed.
pub fn check_values(text: &str) -> Result<(), Error> {
    for doc in parse_documents_to_depth(text, 1)? {
        values_document(&doc)?;
    }
    Ok(())
}

/// One document of a values file: a map, or nothing when it is empty.
fn values_document(doc: &Node) -> Result<Option<Map>, Error> {
    match doc.to_value()? {
        Value::Map(map) => Ok(Some(map)),
        Value::Null => Ok(None),
        other => Err(Error::at(
            doc.line,
            doc.column,
            format!(
                "values must be a map of keys to values, found {}",
                other.kind_name()
            ),
        )),
    }
}

/// Merges a later values document into the earlier ones: maps merge recursively and lists
/// are concatenated, as Helm's loader does for multi-document values files.
fn merge_documents(into: &mut Map, from: Map) {
    for (key, value) in from {
        match (into.get_mut(&key), value) {
            (Some(Value::Map(existing)), Value::Map(incoming)) => {
                merge_documents(existing, incoming)
            }
            (Some(Value::Seq(existing)), Value::Seq(incoming)) => existing.extend(incoming),
            (_, value) => {
                into.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_documents_merge_over_earlier_ones() {
        let values =
            parse_values("a: 1\nl: [1]\nm: {x: 1}\n---\nb: 2\nl: [2]\nm: {z: 2}\n").unwrap();
        assert_eq!(
            to_yaml(&Value::Map(values)),
            "a: 1\nb: 2\nl:\n- 1\n- 2\nm:\n  x: 1\n  z: 2\n"
        );
    }

    #[test]
    fn empty_values_file_is_an_empty_map() {
        assert!(parse_values("").unwrap().is_empty());
        assert!(parse_values("# only a comment\n").unwrap().is_empty());
    }

    #[test]
    fn values_that_are_not_a_map_are_rejected_with_a_position() {
        let err = parse_values("- a\n- b\n").unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
        assert!(err.to_string().contains("found a list"), "{err}");
    }
}
