//! Reading index files with Helm's rules.
//!
//! Helm decodes an index with `json.Unmarshal` when the bytes are valid JSON, and otherwise
//! with `sigs.k8s.io/yaml.UnmarshalStrict`: repeated YAML keys refused, then YAML to JSON
//! (scalars become strings where the target field is a string) and JSON into the structs
//! with unknown fields refused. The chart crate's field decoder implements both
//! ([`Decoding::JSON`], [`Decoding::STRICT`]); this module adds the index's own fields.
//! Type mismatches fail the whole file; only null entries and entries that fail
//! `Metadata.Validate` are skipped, each with a warning.

use std::collections::BTreeMap;

use chartkit_chart::{Decoding, FieldError, FieldErrorKind, Fields, Metadata};
use chartkit_yaml::{Node, NodeKind};

use crate::gotime::GoTime;
use crate::model::{API_VERSION_V1, ChartVersion, IndexFile};

/// Why an index could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    /// The file has no bytes at all.
    #[error("empty index.yaml file\nhint: the repository served an empty index; check its URL")]
    Empty,
    /// The file is not YAML (or JSON) at all.
    #[error("{0}")]
    Syntax(#[from] chartkit_yaml::Error),
    /// A field holds the wrong kind of value, a key Helm does not know, or a repeated key.
    #[error("{}{path}: {message}", position(*line, *column))]
    Field {
        /// Dotted path of the field, e.g. `entries.nginx[2].urls`.
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// `apiVersion` is missing; Helm refuses such an index.
    #[error("no API version specified\nhint: an index needs `apiVersion: v1` at the top")]
    NoApiVersion,
    /// The index cannot be read a chart at a time, and is too large to read whole
    /// ([`crate::limits`]).
    #[error(
        "the index is {} and cannot be read one chart at a time (it is not a map of charts written one key a line, as helm writes indexes, or one chart's versions or one line are over {}), and chartkit reads an index whole only up to {}",
        crate::limits::human_size(*size),
        crate::limits::human_size(crate::limits::MAX_CHART_TEXT as u64),
        crate::limits::human_size(*limit)
    )]
    TooLargeToReadWhole { size: u64, limit: u64 },
}

fn position(line: usize, column: usize) -> String {
    match (line, column) {
        (0, _) => String::new(),
        (l, 0) => format!("line {l}: "),
        (l, c) => format!("line {l}, column {c}: "),
    }
}

impl From<FieldError> for IndexError {
    fn from(e: FieldError) -> IndexError {
        let message = match e.kind {
            FieldErrorKind::Type { expected, found } => format!(
                "must be {expected}, found {found}\nhint: fix the value's type; Helm refuses the whole index over it"
            ),
            FieldErrorKind::UnknownField { key } => format!(
                "unknown field {key:?}\nhint: Helm reads indexes strictly; put extensions under `annotations`"
            ),
            FieldErrorKind::DuplicateKey { key } => {
                format!("key {key:?} already set in map\nhint: remove the repeated key")
            }
            FieldErrorKind::Invalid(reason) => reason,
        };
        IndexError::Field {
            path: e.path,
            line: e.line,
            column: e.column,
            message,
        }
    }
}

/// An index as loaded, with the warnings Helm would log for skipped entries.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedIndex {
    pub index: IndexFile,
    pub warnings: Vec<String>,
}

/// Reads an index file as Helm's `loadIndex` does. `source` names the file in warnings.
pub fn parse_index(bytes: &[u8], source: &str) -> Result<LoadedIndex, IndexError> {
    if bytes.is_empty() {
        return Err(IndexError::Empty);
    }
    let (root, decoding) = match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(json) => (json_to_node(&json), Decoding::JSON),
        Err(_) => {
            let text = String::from_utf8_lossy(bytes);
            (chartkit_yaml::parse_node(&text)?, Decoding::STRICT)
        }
    };
    let mut warnings = Vec::new();
    let mut index = decode_index(&root, decoding, source, &mut warnings)?;
    index.sort_entries();
    if index.api_version.is_empty() {
        return Err(IndexError::NoApiVersion);
    }
    Ok(LoadedIndex { index, warnings })
}

/// Decodes one index entry given as JSON (the compact cache stores entries so).
pub fn parse_entry_json(bytes: &[u8]) -> Result<ChartVersion, IndexError> {
    let json: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| IndexError::Field {
        path: String::new(),
        line: 0,
        column: 0,
        message: format!("cached entry is not JSON: {e}"),
    })?;
    decode_entry(&json_to_node(&json), "entry", Decoding::JSON)
}

fn json_to_node(value: &serde_json::Value) -> Node {
    let kind = match value {
        serde_json::Value::Null => NodeKind::Null,
        serde_json::Value::Bool(b) => NodeKind::Bool(*b),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => NodeKind::Int(i),
            (None, Some(u)) => NodeKind::Uint(u),
            _ => NodeKind::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(s) => NodeKind::Str(s.clone()),
        serde_json::Value::Array(items) => NodeKind::Seq(items.iter().map(json_to_node).collect()),
        serde_json::Value::Object(map) => NodeKind::Map(
            map.iter()
                .map(|(k, v)| {
                    (
                        Node {
                            kind: NodeKind::Str(k.clone()),
                            line: 0,
                            column: 0,
                        },
                        json_to_node(v),
                    )
                })
                .collect(),
        ),
    };
    Node {
        kind,
        line: 0,
        column: 0,
    }
}

/// A `time.Time` field: an RFC 3339 string; null leaves it zero.
fn time(node: &Node, path: &str) -> Result<Option<GoTime>, IndexError> {
    match &node.kind {
        NodeKind::Null => Ok(None),
        NodeKind::Str(s) => GoTime::parse(s).map(Some).ok_or_else(|| {
            FieldError::invalid(
                node,
                path,
                format!("{s:?} is not an RFC 3339 time (e.g. 2024-01-02T15:04:05Z)"),
            )
            .into()
        }),
        _ => Err(FieldError::type_error(node, path, "an RFC 3339 time string").into()),
    }
}

const INDEX_FIELDS: &[&str] = &[
    "serverInfo",
    "apiVersion",
    "generated",
    "entries",
    "publicKeys",
    "annotations",
];

pub(crate) fn decode_index(
    root: &Node,
    decoding: Decoding,
    source: &str,
    warnings: &mut Vec<String>,
) -> Result<IndexFile, IndexError> {
    let fields = Fields::document(root, INDEX_FIELDS, decoding)?;
    let mut index = IndexFile::default();
    if let Some(node) = fields.get("serverInfo") {
        let path = fields.path_of("serverInfo");
        index.server_info = match &node.kind {
            NodeKind::Null => None,
            NodeKind::Map(_) => node
                .to_value()
                .map_err(|e| FieldError::invalid(node, &path, e.message))?
                .take_map(),
            _ => return Err(FieldError::type_error(node, &path, "a map").into()),
        };
    }
    fields.string_into("apiVersion", &mut index.api_version)?;
    if let Some(node) = fields.get("generated") {
        index.generated = time(node, "generated")?;
    }
    if let Some(node) = fields.get("entries") {
        index.entries = decode_entries(node, decoding, source, warnings)?;
    }
    fields.string_list_into("publicKeys", &mut index.public_keys)?;
    fields.string_map_into("annotations", &mut index.annotations)?;
    Ok(index)
}

fn decode_entries(
    node: &Node,
    decoding: Decoding,
    source: &str,
    warnings: &mut Vec<String>,
) -> Result<BTreeMap<String, Vec<ChartVersion>>, IndexError> {
    let mut entries = BTreeMap::new();
    let pairs = match &node.kind {
        NodeKind::Null => return Ok(entries),
        NodeKind::Map(pairs) => pairs,
        _ => {
            let want = "a map of chart names to versions";
            return Err(FieldError::type_error(node, "entries", want).into());
        }
    };
    for (key, list) in pairs {
        let name = key.as_map_key().unwrap_or_default();
        let versions = decode_chart(&name, list, decoding, source, warnings)?;
        entries.insert(name, versions);
    }
    Ok(entries)
}

/// One chart's version list under `entries`: null entries and entries that fail
/// `Metadata.Validate` are skipped with Helm's warnings, any other problem fails the index.
pub(crate) fn decode_chart(
    name: &str,
    list: &Node,
    decoding: Decoding,
    source: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<ChartVersion>, IndexError> {
    let list_path = format!("entries.{name}");
    let items: &[Node] = match &list.kind {
        NodeKind::Null => &[],
        NodeKind::Seq(items) => items,
        _ => {
            let want = "a list of chart versions";
            return Err(FieldError::type_error(list, &list_path, want).into());
        }
    };
    let mut versions = Vec::with_capacity(items.len());
    let mut skipped = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if matches!(item.kind, NodeKind::Null) {
            skipped.push(format!(
                "skipping loading invalid entry for chart {name:?} from {source}: empty entry"
            ));
            continue;
        }
        let mut version = decode_entry(item, &format!("{list_path}[{i}]"), decoding)?;
        if version.metadata.api_version.is_empty() {
            version.metadata.api_version = API_VERSION_V1.to_owned();
        }
        match version.metadata.validate() {
            Err(e) if !e.skippable_in_index() => skipped.push(format!(
                "skipping loading invalid entry for chart {name:?} {:?} from {source}: {e}",
                version.metadata.version
            )),
            _ => versions.push(version),
        }
    }
    // Helm walks each chart's list from the end, so its warnings come out in reverse.
    warnings.extend(skipped.into_iter().rev());
    Ok(versions)
}

/// An entry's own fields, after the metadata fields it shares its map with.
const VERSION_FIELDS: &[&str] = &[
    "urls",
    "created",
    "removed",
    "digest",
    "checksum",
    "engine",
    "tillerVersion",
    "url",
];

/// Every field of an entry: Helm's `ChartVersion` embeds `*Metadata`, so both sets of names
/// are keys of one map.
fn entry_fields() -> &'static [&'static str] {
    static FIELDS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    FIELDS.get_or_init(|| {
        Metadata::FIELDS
            .iter()
            .chain(VERSION_FIELDS)
            .copied()
            .collect()
    })
}

fn decode_entry(node: &Node, path: &str, decoding: Decoding) -> Result<ChartVersion, IndexError> {
    let fields = Fields::of(node, path, entry_fields(), decoding)?;
    let mut version = ChartVersion::default();
    version.metadata.decode_fields(&fields)?;
    if let Some(urls) = fields.get("urls") {
        version.urls = match urls.kind {
            // A JSON null leaves the slice nil, which Helm writes back as `urls: null`.
            NodeKind::Null => None,
            _ => Some(fields.string_list("urls")?),
        };
    }
    if let Some(created) = fields.get("created") {
        version.created = time(created, &fields.path_of("created"))?;
    }
    fields.boolean_into("removed", &mut version.removed)?;
    fields.string_into("digest", &mut version.digest)?;
    fields.string_into("checksum", &mut version.checksum)?;
    fields.string_into("engine", &mut version.engine)?;
    fields.string_into("tillerVersion", &mut version.tiller_version)?;
    fields.string_into("url", &mut version.url)?;
    Ok(version)
}
