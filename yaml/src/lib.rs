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
//! - [`gojson`]: Go's `encoding/json` string escapes and compact output of values.

use std::borrow::Cow;

mod emit;
mod error;
pub mod gofmt;
pub mod gojson;
pub mod gonum;
mod goscan;
pub mod goslog;
pub mod kyaml;
mod node;
mod resolve;
mod value;

pub use emit::{compare_keys, to_yaml, to_yaml_nested_map, to_yaml_pretty};
pub use error::Error;
pub use node::{
    CommitResult, DecodePair, Node, NodeKind, PieceReader, Unstreamable, parse_documents,
    parse_documents_to_depth, parse_first_document, parse_node, parse_node_streaming,
};
pub use value::{Map, Value, go_lossy};

/// Runs `f` where there is room to recurse: on a new stack segment when little of the
/// current one is left. go-yaml lets values nest 10,000 levels deep, and walking that
/// recursively takes more stack than a 2 MiB worker thread has, so every recursive walk
/// over values calls this at each level; it costs a comparison with the stack pointer.
pub fn with_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, f)
}

const STACK_RED_ZONE: usize = 128 * 1024;

/// Whether dropping may recurse: the stack has room left (or its size is unknown, when
/// stacker cannot tell, which is then treated as no room).
pub(crate) fn stack_is_ample() -> bool {
    stacker::remaining_stack().is_some_and(|left| left > STACK_RED_ZONE)
}
const STACK_SEGMENT: usize = 2 * 1024 * 1024;

/// Parses a values file the way Helm 4's `LoadValues` does: the text is cut into pieces
/// as Kubernetes' `YAMLReader` cuts a stream ([`values_pieces`]), each piece is read as
/// go-yaml reads one document (what follows its first document, after a `...` line, is
/// not used), and later pieces are merged over earlier ones. An empty file is an empty
/// map. Error lines count from the start of the piece, as in Helm's messages.
pub fn parse_values(text: &str) -> Result<Map, Error> {
    let mut merged = Map::new();
    for piece in values_pieces(text)? {
        let doc = parse_first_document(&piece.lines(), usize::MAX)?;
        if let Some(map) = values_document(&doc)? {
            merge_documents(&mut merged, map);
        }
    }
    Ok(merged)
}

/// Checks a values file as [`parse_values`] reads it, without keeping the values: every
/// piece must parse and be a map (or empty). Only the top level is built, so nesting
/// is allowed as deep as go-yaml allows it (10,000 levels; [`parse_values`] builds at
/// most 512). This is how a package is judged for a repository index, where the values
/// themselves are not needed.
pub fn check_values(text: &str) -> Result<(), Error> {
    for piece in values_pieces(text)? {
        let doc = parse_first_document(&piece.lines(), 1)?;
        values_document(&doc)?;
    }
    Ok(())
}

/// A piece of a values file between separator lines, and the 1-based line it starts on.
pub struct ValuesPiece<'a> {
    pub text: &'a str,
    pub line: usize,
}

impl ValuesPiece<'_> {
    /// The piece as Kubernetes' reader hands it over: line by line, each line ending
    /// with a line break, the last one too.
    pub fn lines(&self) -> Cow<'_, str> {
        if self.text.ends_with('\n') {
            Cow::Borrowed(self.text)
        } else {
            Cow::Owned(format!("{}\n", self.text))
        }
    }
}

/// Cuts a values file as Kubernetes' `YAMLReader` cuts a YAML stream, which is how Helm
/// reads values: at every line that begins with `---`. The rest of such a line may only
/// be blank or a comment (anything else is an error, `--- a: 1` included, though YAML
/// allows it), and pieces with nothing in them are dropped.
pub fn values_pieces(text: &str) -> Result<Vec<ValuesPiece<'_>>, Error> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut start_line = 1;
    let mut offset = 0;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        let line_number = index + 1;
        if let Some(rest) = line.strip_prefix("---") {
            let rest = rest.trim_matches(|c: char| c.is_whitespace());
            if !rest.is_empty() && !rest.starts_with('#') {
                return Err(Error::at(
                    line_number,
                    4,
                    format!("{}{rest}", error::BAD_SEPARATOR),
                ));
            }
            if offset > start {
                pieces.push(ValuesPiece {
                    text: &text[start..offset],
                    line: start_line,
                });
            }
            start = offset + line.len();
            start_line = line_number + 1;
        }
        offset += line.len();
    }
    if text.len() > start {
        pieces.push(ValuesPiece {
            text: &text[start..],
            line: start_line,
        });
    }
    Ok(pieces)
}

/// One document of a values file: a map, or nothing when it is empty.
fn values_document(doc: &Node) -> Result<Option<Map>, Error> {
    match doc.to_value()? {
        mut value @ Value::Map(_) => Ok(value.take_map()),
        Value::Null => Ok(None),
        other => Err(Error::at(
            doc.line,
            doc.column,
            format!("{}{}", error::NOT_A_MAP, other.kind_name()),
        )),
    }
}

/// Merges a later values document into the earlier ones as Helm's `MergeMaps` does: maps
/// merge recursively, anything else (lists included) is replaced.
fn merge_documents(into: &mut Map, from: Map) {
    for (key, value) in from {
        match (into.get_mut(&key), value) {
            (Some(Value::Map(existing)), mut incoming @ Value::Map(_)) => {
                let incoming = incoming.take_map().unwrap_or_default();
                with_stack(|| merge_documents(existing, incoming))
            }
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
            "a: 1\nb: 2\nl:\n- 2\nm:\n  x: 1\n  z: 2\n"
        );
    }

    #[test]
    fn values_are_cut_at_separator_lines_as_kubernetes_cuts_a_stream() {
        let yaml = |text: &str| parse_values(text).map(|m| to_yaml(&Value::Map(m)));
        // What follows a document's end marker in the same piece is not read.
        assert_eq!(yaml("a: 1\n...\nb: 2\n").unwrap(), "a: 1\n");
        assert_eq!(yaml("a: 1\n--- # note\nb: 2").unwrap(), "a: 1\nb: 2\n");
        assert_eq!(yaml("---\n---\na: 1\n---\n").unwrap(), "a: 1\n");
        let e = yaml("a: 1\n--- b: 2\n").unwrap_err();
        assert_eq!(
            (e.line, e.message.as_str()),
            (2, "invalid Yaml document separator: b: 2")
        );
        // A directive must be followed by `---`, which starts the next piece.
        assert!(yaml("%YAML 1.1\n---\na: 1\n").is_err());
        // Errors name the line in the piece, as helm's do.
        let e = yaml("a: 1\n---\nb: [\n").unwrap_err();
        assert_eq!(
            e.go_yaml_message(),
            "line 1: did not find expected node content"
        );
    }

    #[test]
    fn empty_values_file_is_an_empty_map() {
        assert!(parse_values("").unwrap().is_empty());
        assert!(parse_values("# only a comment\n").unwrap().is_empty());
    }

    /// Runs `f` on a thread with a 2 MiB stack, the size of rayon's and tokio's workers.
    fn on_a_worker_stack(f: impl FnOnce() + Send + 'static) {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap();
    }

    /// go-yaml (and Helm's JSON round trip) read 10,000 levels: the values map and 9,999
    /// lists. Parsing, converting, writing, cloning, comparing and dropping them must not
    /// need more stack than a worker thread has.
    #[test]
    fn values_nest_to_go_yamls_depth_on_a_worker_stack() {
        on_a_worker_stack(|| {
            let text = format!("a:\n{}x\n", "- ".repeat(9_999));
            let values = parse_values(&text).unwrap();
            let copy = values.clone();
            assert_eq!(copy, values);
            let written = to_yaml(&Value::Map(copy));
            assert_eq!(parse_values(&written).unwrap(), values);
            check_values(&text).unwrap();
            let mut maps = Value::Null;
            for _ in 0..10_000 {
                maps = Value::Map(Map::from([("k".to_owned(), maps)]));
            }
            assert_eq!(maps.clone(), maps);
            drop(maps);
        });
    }

    #[test]
    fn values_deeper_than_go_yaml_reads_are_refused() {
        let text = format!("a:\n{}x\n", "- ".repeat(10_000));
        let err = parse_values(&text).unwrap_err();
        assert_eq!(err.message, "a list is nested deeper than 10000 levels");
        assert_eq!(err.json_depth_character(), Some('['));
        assert!(check_values(&text).is_err());
    }

    #[test]
    fn values_that_are_not_a_map_are_rejected_with_a_position() {
        let err = parse_values("- a\n- b\n").unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
        assert!(err.to_string().contains("found a list"), "{err}");
    }
}
