//! Decoding YAML (or JSON) nodes into Go-typed fields the way Helm's decoders do.
//!
//! Helm reads three kinds of document into the same structs, with three rule sets:
//!
//! - [`Decoding::LENIENT`], `sigs.k8s.io/yaml.Unmarshal` (Chart.yaml, requirements.yaml,
//!   Chart.lock): YAML becomes JSON, with scalars turned into text where the field is a
//!   string, then `encoding/json` fills the struct. Field names match exactly or else
//!   case-insensitively; unknown keys are ignored; of repeated keys the last wins.
//! - [`Decoding::STRICT`], `yaml.UnmarshalStrict` (index.yaml): the same, except that a key
//!   repeated anywhere in the document and a key no field knows are errors.
//! - [`Decoding::JSON`], `encoding/json` directly (an index that is valid JSON): no scalar
//!   conversion, so `"version": 1` is a type error; unknown keys ignored.
//!
//! Decoding goes *into* an existing value, as Go's does: an absent key leaves the field
//! alone, `null` leaves a string or boolean alone but empties a list or map, a map's keys are
//! added to the existing ones, and list items are decoded over the existing items in place.
//! Helm relies on that when it lays requirements.yaml over Chart.yaml.

use std::borrow::Cow;
use std::collections::BTreeMap;

use chartkit_yaml::{Node, NodeKind, Value};

/// The rules a document is decoded with; see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoding {
    /// Repeated keys and unknown fields are errors.
    pub strict: bool,
    /// The document was JSON: keys are visited in file order and scalars keep their type.
    pub json: bool,
}

impl Decoding {
    /// `sigs.k8s.io/yaml.Unmarshal`, how Helm reads Chart.yaml.
    pub const LENIENT: Decoding = Decoding {
        strict: false,
        json: false,
    };
    /// `sigs.k8s.io/yaml.UnmarshalStrict`, how Helm reads a YAML index.
    pub const STRICT: Decoding = Decoding {
        strict: true,
        json: false,
    };
    /// `encoding/json.Unmarshal`, how Helm reads an index that is valid JSON.
    pub const JSON: Decoding = Decoding {
        strict: false,
        json: true,
    };
}

/// What is wrong with a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldErrorKind {
    /// The value has the wrong type.
    Type {
        expected: &'static str,
        found: &'static str,
    },
    /// A key no field knows, in strict decoding.
    UnknownField { key: String },
    /// A key given twice in one map, in strict decoding.
    DuplicateKey { key: String },
    /// The value has the right type but is not acceptable (a malformed time, say).
    Invalid(String),
}

/// A field whose value cannot be decoded. `path` locates it from the document root, e.g.
/// `entries.web[0].urls` or `maintainers[1].email`; the line is 0 for JSON documents, which
/// carry no positions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub line: usize,
    pub column: usize,
    pub path: String,
    pub kind: FieldErrorKind,
}

impl FieldError {
    pub fn new(node: &Node, path: &str, kind: FieldErrorKind) -> FieldError {
        FieldError {
            line: node.line,
            column: node.column,
            path: path.to_owned(),
            kind,
        }
    }

    /// A type error: `node` is not `expected`.
    pub fn type_error(node: &Node, path: &str, expected: &'static str) -> FieldError {
        FieldError::new(
            node,
            path,
            FieldErrorKind::Type {
                expected,
                found: found_name(node),
            },
        )
    }

    /// A value of the right type that is still unacceptable, with the reason.
    pub fn invalid(node: &Node, path: &str, reason: impl Into<String>) -> FieldError {
        FieldError::new(node, path, FieldErrorKind::Invalid(reason.into()))
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: ", self.line)?;
        }
        match &self.kind {
            FieldErrorKind::Type { expected, found } if self.path.is_empty() => {
                write!(f, "the document must be {expected}, found {found}")
            }
            FieldErrorKind::Type { expected, found } => {
                write!(f, "field `{}` must be {expected}, found {found}", self.path)
            }
            FieldErrorKind::UnknownField { key } => {
                write!(f, "unknown field {key:?} at `{}`", self.path)
            }
            FieldErrorKind::DuplicateKey { key } => write!(
                f,
                "key {key:?} already set in map at `{}`; remove the repeated key",
                self.path
            ),
            FieldErrorKind::Invalid(reason) => write!(f, "field `{}`: {reason}", self.path),
        }
    }
}

impl std::error::Error for FieldError {}

/// How a node is named in type errors.
fn found_name(node: &Node) -> &'static str {
    node.kind_name()
}

/// `path.name`, or `name` at the root.
pub fn child_path(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// The JSON object key a YAML key becomes, borrowed when it is already a string.
fn key_text(key: &Node) -> Option<Cow<'_, str>> {
    match &key.kind {
        NodeKind::Str(s) => Some(Cow::Borrowed(s)),
        _ => key.as_map_key().map(Cow::Owned),
    }
}

/// `encoding/json`'s case-insensitive field match: both sides folded with
/// `unicode.ToUpper(unicode.ToLower(r))`. Field names are ASCII, so besides ASCII letters
/// only the four non-ASCII letters that fold onto ASCII ones can match: the Kelvin sign,
/// long s, dotted capital I and dotless i.
fn go_fold_eq(key: &str, field: &str) -> bool {
    let mut field = field.bytes();
    for c in key.chars() {
        let Some(f) = field.next() else {
            return false;
        };
        let folded = match c {
            '\u{212A}' => b'K',
            '\u{17F}' => b'S',
            '\u{130}' | '\u{131}' => b'I',
            c if c.is_ascii() => (c as u8).to_ascii_uppercase(),
            _ => return false,
        };
        if folded != f.to_ascii_uppercase() {
            return false;
        }
    }
    field.next().is_none()
}

/// The field a key sets: an exact match, else a case-insensitive one.
fn match_field(known: &[&'static str], key: &str) -> Option<&'static str> {
    known
        .iter()
        .find(|f| **f == key)
        .or_else(|| known.iter().find(|f| go_fold_eq(key, f)))
        .copied()
}

/// Refuses a key repeated in any map of the document, as `yaml.UnmarshalStrict` does before
/// anything is decoded. Keys are compared as go-yaml's decoded values, so `1` and `"1"`
/// differ while `1` and `0x1` are the same key.
pub fn reject_duplicate_keys(node: &Node, path: &str) -> Result<(), FieldError> {
    // Documents almost never repeat a key, and naming where one is takes a path for every
    // collection on the way; so look first, and name only what is found.
    if !has_duplicate_keys(node) {
        return Ok(());
    }
    duplicate_key_at(node, path)
}

/// Whether any map in `node` repeats a key (as [`reject_duplicate_keys`] compares keys).
fn has_duplicate_keys(node: &Node) -> bool {
    match &node.kind {
        NodeKind::Seq(items) => items.iter().any(|item| {
            matches!(item.kind, NodeKind::Seq(_) | NodeKind::Map(_)) && has_duplicate_keys(item)
        }),
        NodeKind::Map(pairs) => pairs.iter().enumerate().any(|(i, (key, value))| {
            pairs[..i].iter().any(|(earlier, _)| same_key(earlier, key))
                || (matches!(value.kind, NodeKind::Seq(_) | NodeKind::Map(_))
                    && has_duplicate_keys(value))
        }),
        _ => false,
    }
}

/// The error for the first repeated key in `node`, at `path`.
fn duplicate_key_at(node: &Node, path: &str) -> Result<(), FieldError> {
    match &node.kind {
        NodeKind::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                if matches!(item.kind, NodeKind::Seq(_) | NodeKind::Map(_)) {
                    duplicate_key_at(item, &format!("{path}[{i}]"))?;
                }
            }
        }
        NodeKind::Map(pairs) => {
            for (i, (key, value)) in pairs.iter().enumerate() {
                if pairs[..i].iter().any(|(earlier, _)| same_key(earlier, key)) {
                    let name = key_text(key).unwrap_or_default();
                    return Err(FieldError::new(
                        key,
                        &child_path(path, &name),
                        FieldErrorKind::DuplicateKey {
                            key: name.into_owned(),
                        },
                    ));
                }
                if matches!(value.kind, NodeKind::Seq(_) | NodeKind::Map(_)) {
                    let name = key_text(key).unwrap_or_default();
                    duplicate_key_at(value, &child_path(path, &name))?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Whether go-yaml sees two keys as the same map key (Go `==` on the decoded values).
fn same_key(a: &Node, b: &Node) -> bool {
    match (&a.kind, &b.kind) {
        (NodeKind::Str(x), NodeKind::Str(y)) => x == y,
        (NodeKind::Int(x), NodeKind::Int(y)) => x == y,
        (NodeKind::Uint(x), NodeKind::Uint(y)) => x == y,
        (NodeKind::Float(x), NodeKind::Float(y)) => x == y,
        (NodeKind::Bool(x), NodeKind::Bool(y)) => x == y,
        (NodeKind::Null, NodeKind::Null) => true,
        _ => false,
    }
}

/// The fields of one YAML map, resolved to the struct's field names.
pub struct Fields<'a> {
    path: String,
    decoding: Decoding,
    /// Each known field that is present, with the node that sets it.
    present: Vec<(&'static str, &'a Node)>,
}

impl<'a> Fields<'a> {
    /// Reads the fields of `node` (a map, or null, which has none) at `path` (empty for
    /// the document root), given the struct's field names.
    ///
    /// YAML reaches `encoding/json` through a Go map marshalled with sorted keys, so among
    /// keys that name one field the greatest wins; JSON is read in file order, so the last
    /// wins.
    pub fn of(
        node: &'a Node,
        path: &str,
        known: &[&'static str],
        decoding: Decoding,
    ) -> Result<Fields<'a>, FieldError> {
        let mut fields = Fields {
            path: path.to_owned(),
            decoding,
            present: Vec::new(),
        };
        let pairs = match &node.kind {
            NodeKind::Map(pairs) => pairs,
            NodeKind::Null => return Ok(fields),
            _ => return Err(FieldError::type_error(node, path, "a map of fields")),
        };
        let mut winners: Vec<Cow<'a, str>> = Vec::new();
        // The unknown key Go reports first: the least in sorted order (YAML), or the first.
        let mut unknown: Option<(Cow<'a, str>, &'a Node)> = None;
        for (key, value) in pairs {
            let Some(name) = key_text(key) else {
                continue;
            };
            let Some(field) = match_field(known, &name) else {
                if decoding.strict
                    && unknown
                        .as_ref()
                        .is_none_or(|(first, _)| !decoding.json && name < *first)
                {
                    unknown = Some((name, key));
                }
                continue;
            };
            match fields.present.iter().position(|(f, _)| *f == field) {
                None => {
                    fields.present.push((field, value));
                    winners.push(name);
                }
                Some(i) if decoding.json || name >= winners[i] => {
                    fields.present[i].1 = value;
                    winners[i] = name;
                }
                Some(_) => {}
            }
        }
        if let Some((name, key)) = unknown {
            return Err(FieldError::new(
                key,
                &child_path(path, &name),
                FieldErrorKind::UnknownField {
                    key: name.into_owned(),
                },
            ));
        }
        Ok(fields)
    }

    /// Like [`Fields::of`] for a whole document: in strict decoding, repeated keys anywhere
    /// in it are refused first, as go-yaml refuses them before any field is decoded.
    pub fn document(
        node: &'a Node,
        known: &[&'static str],
        decoding: Decoding,
    ) -> Result<Fields<'a>, FieldError> {
        if decoding.strict {
            reject_duplicate_keys(node, "")?;
        }
        Fields::of(node, "", known, decoding)
    }

    pub fn decoding(&self) -> Decoding {
        self.decoding
    }

    /// The node that sets field `name`, if the map has one.
    pub fn get(&self, name: &str) -> Option<&'a Node> {
        self.present
            .iter()
            .find(|(f, _)| *f == name)
            .map(|(_, node)| *node)
    }

    /// The path of field `name`, for error messages.
    pub fn path_of(&self, name: &str) -> String {
        child_path(&self.path, name)
    }

    /// Decodes string field `name` into `target`; absent and null leave it as it is.
    pub fn string_into(&self, name: &str, target: &mut String) -> Result<(), FieldError> {
        if let Some(node) = self.get(name)
            && let Some(text) = string(node, || self.path_of(name), self.decoding)?
        {
            *target = text;
        }
        Ok(())
    }

    /// String field `name`, empty when absent or null.
    pub fn string(&self, name: &str) -> Result<String, FieldError> {
        let mut text = String::new();
        self.string_into(name, &mut text)?;
        Ok(text)
    }

    /// Decodes boolean field `name` into `target`; absent and null leave it as it is.
    pub fn boolean_into(&self, name: &str, target: &mut bool) -> Result<(), FieldError> {
        match self.get(name).map(|node| (node, &node.kind)) {
            None | Some((_, NodeKind::Null)) => Ok(()),
            Some((_, NodeKind::Bool(b))) => {
                *target = *b;
                Ok(())
            }
            Some((node, _)) => Err(FieldError::type_error(
                node,
                &self.path_of(name),
                "true or false",
            )),
        }
    }

    /// Boolean field `name`, false when absent or null.
    pub fn boolean(&self, name: &str) -> Result<bool, FieldError> {
        let mut value = false;
        self.boolean_into(name, &mut value)?;
        Ok(value)
    }

    /// Decodes list-of-strings field `name` over `target`: null empties it; each item
    /// replaces the one at its position, except that a null item leaves it as it is.
    pub fn string_list_into(&self, name: &str, target: &mut Vec<String>) -> Result<(), FieldError> {
        let Some(node) = self.get(name) else {
            return Ok(());
        };
        let path = || self.path_of(name);
        match &node.kind {
            NodeKind::Null => target.clear(),
            NodeKind::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    let text = string(item, || format!("{}[{i}]", path()), self.decoding)?;
                    match (target.get_mut(i), text) {
                        (Some(slot), Some(text)) => *slot = text,
                        (Some(_), None) => {}
                        (None, text) => target.push(text.unwrap_or_default()),
                    }
                }
                target.truncate(items.len());
            }
            _ => return Err(FieldError::type_error(node, &path(), "a list of strings")),
        }
        Ok(())
    }

    /// List-of-strings field `name`, empty when absent or null.
    pub fn string_list(&self, name: &str) -> Result<Vec<String>, FieldError> {
        let mut list = Vec::new();
        self.string_list_into(name, &mut list)?;
        Ok(list)
    }

    /// Decodes map-of-strings field `name` into `target`: null empties it, otherwise its
    /// keys are added to (or replace) the existing ones. A null value is the empty string.
    pub fn string_map_into(
        &self,
        name: &str,
        target: &mut BTreeMap<String, String>,
    ) -> Result<(), FieldError> {
        let Some(node) = self.get(name) else {
            return Ok(());
        };
        let path = || self.path_of(name);
        match &node.kind {
            NodeKind::Null => target.clear(),
            NodeKind::Map(pairs) => {
                for (key, value) in pairs {
                    let key = key_text(key)
                        .ok_or_else(|| FieldError::type_error(key, &path(), "a map of strings"))?;
                    let text = string(value, || child_path(&path(), &key), self.decoding)?;
                    target.insert(key.into_owned(), text.unwrap_or_default());
                }
            }
            _ => return Err(FieldError::type_error(node, &path(), "a map of strings")),
        }
        Ok(())
    }

    /// Map-of-strings field `name`, empty when absent or null.
    pub fn string_map(&self, name: &str) -> Result<BTreeMap<String, String>, FieldError> {
        let mut map = BTreeMap::new();
        self.string_map_into(name, &mut map)?;
        Ok(map)
    }

    /// Decodes a list of structs (Go `[]*T`) over `target`: null empties it; a null item
    /// is `None` (a nil pointer); any other item is decoded by `each`, with its own fields
    /// named by `known`, into the existing item at its position or a new default one.
    pub fn list_into<T: Default>(
        &self,
        name: &str,
        known: &[&'static str],
        target: &mut Vec<Option<T>>,
        mut each: impl FnMut(&mut T, &Fields<'a>) -> Result<(), FieldError>,
    ) -> Result<(), FieldError> {
        let Some(node) = self.get(name) else {
            return Ok(());
        };
        let path = self.path_of(name);
        match &node.kind {
            NodeKind::Null => target.clear(),
            NodeKind::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    if i == target.len() {
                        target.push(None);
                    }
                    if item.kind == NodeKind::Null {
                        target[i] = None;
                        continue;
                    }
                    let fields = Fields::of(item, &format!("{path}[{i}]"), known, self.decoding)?;
                    let mut value = target[i].take().unwrap_or_default();
                    each(&mut value, &fields)?;
                    target[i] = Some(value);
                }
                target.truncate(items.len());
            }
            _ => return Err(FieldError::type_error(node, &path, "a list")),
        }
        Ok(())
    }

    /// Decodes a list of free-form values (Go `[]interface{}`) into `target`, replacing it;
    /// numbers become floats as JSON decoding makes them. Null empties it.
    pub fn value_list_into(&self, name: &str, target: &mut Vec<Value>) -> Result<(), FieldError> {
        let Some(node) = self.get(name) else {
            return Ok(());
        };
        let path = self.path_of(name);
        match &node.kind {
            NodeKind::Null => target.clear(),
            NodeKind::Seq(items) => {
                *target = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        item.to_value().map_err(|e| {
                            FieldError::invalid(item, &format!("{path}[{i}]"), e.message)
                        })
                    })
                    .collect::<Result<_, _>>()?;
            }
            _ => return Err(FieldError::type_error(node, &path, "a list")),
        }
        Ok(())
    }
}

/// A node decoded into a Go `string`: `None` for null (which leaves the field as it was).
/// Scalars become text in YAML decoding; JSON only accepts strings. `path` is only built
/// for an error.
fn string(
    node: &Node,
    path: impl FnOnce() -> String,
    decoding: Decoding,
) -> Result<Option<String>, FieldError> {
    match &node.kind {
        NodeKind::Null => Ok(None),
        NodeKind::Str(s) => Ok(Some(s.clone())),
        NodeKind::Seq(_) | NodeKind::Map(_) => {
            Err(FieldError::type_error(node, &path(), "a string"))
        }
        _ if decoding.json => Err(FieldError::type_error(node, &path(), "a string")),
        _ => Ok(node.to_go_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chartkit_yaml::parse_node;

    const KNOWN: &[&str] = &["name", "apiVersion", "keywords", "kubeVersion"];

    #[test]
    fn field_names_match_case_insensitively_and_the_greatest_spelling_wins() {
        let node = parse_node("name: lower\nName: upper\nAPIVERSION: v2\n").unwrap();
        let fields = Fields::of(&node, "", KNOWN, Decoding::LENIENT).unwrap();
        assert_eq!(
            fields.string("name").unwrap(),
            "lower",
            "`name` sorts after `Name`"
        );
        assert_eq!(fields.string("apiVersion").unwrap(), "v2");
        // JSON is read in file order: the last spelling wins.
        let node = parse_node("{\"name\": \"lower\", \"Name\": \"upper\"}").unwrap();
        let fields = Fields::of(&node, "", KNOWN, Decoding::JSON).unwrap();
        assert_eq!(fields.string("name").unwrap(), "upper");
    }

    #[test]
    fn go_folding_matches_the_kelvin_sign_and_long_s() {
        assert!(go_fold_eq("\u{212A}ubeVersion", "kubeVersion"));
        assert!(go_fold_eq("KEYWORD\u{17F}", "keywords"));
        assert!(!go_fold_eq("keyword", "keywords"));
        assert!(!go_fold_eq("keywordsx", "keywords"));
        assert!(!go_fold_eq("n\u{e4}me", "name"));
    }

    #[test]
    fn scalars_become_text_and_collections_are_type_errors() {
        let node = parse_node("name: 1.10\nkeywords: abc\napiVersion: ~\n").unwrap();
        let fields = Fields::of(&node, "", KNOWN, Decoding::LENIENT).unwrap();
        assert_eq!(fields.string("name").unwrap(), "1.1");
        assert_eq!(fields.string("apiVersion").unwrap(), "");
        let err = fields.string_list("keywords").unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 2: field `keywords` must be a list of strings, found a string"
        );
        let node = parse_node("{\"name\": 1}").unwrap();
        let fields = Fields::of(&node, "", KNOWN, Decoding::JSON).unwrap();
        assert!(
            fields.string("name").is_err(),
            "JSON does not convert numbers"
        );
    }

    #[test]
    fn strict_decoding_refuses_unknown_fields_and_repeated_keys() {
        let node = parse_node("name: a\nzeta: 1\nextra: 2\n").unwrap();
        assert!(Fields::of(&node, "", KNOWN, Decoding::LENIENT).is_ok());
        let err = Fields::of(&node, "entries.a[0]", KNOWN, Decoding::STRICT)
            .err()
            .unwrap();
        assert_eq!(
            err.to_string(),
            "line 3: unknown field \"extra\" at `entries.a[0].extra`"
        );
        let node = parse_node("name: a\nkeywords: [{x: 1, x: 2}]\n").unwrap();
        let err = Fields::document(&node, KNOWN, Decoding::STRICT)
            .err()
            .unwrap();
        assert_eq!(err.kind, FieldErrorKind::DuplicateKey { key: "x".into() });
        assert_eq!(err.path, "keywords[0].x");
        let node = parse_node("1: a\n\"1\": b\n0x1: c\n").unwrap();
        let err = reject_duplicate_keys(&node, "").unwrap_err();
        assert_eq!(
            err.line, 3,
            "`0x1` repeats the integer key 1, `\"1\"` does not"
        );
    }

    #[test]
    fn decoding_into_a_value_follows_go() {
        let first = parse_node("keywords: [a, b, c]\nname: x\n").unwrap();
        let second = parse_node("keywords: [z, ~]\nname: ~\n").unwrap();
        let mut keywords = Vec::new();
        let mut name = String::new();
        for node in [&first, &second] {
            let fields = Fields::of(node, "", KNOWN, Decoding::LENIENT).unwrap();
            fields.string_list_into("keywords", &mut keywords).unwrap();
            fields.string_into("name", &mut name).unwrap();
        }
        assert_eq!(keywords, ["z", "b"], "null items keep the old item");
        assert_eq!(name, "x", "null leaves a string alone");
    }
}
