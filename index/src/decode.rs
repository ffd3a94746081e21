//! Reading index files and Chart.yaml metadata with Helm's rules.
//!
//! Helm decodes an index with `json.Unmarshal` when the bytes are valid JSON, and otherwise
//! with `sigs.k8s.io/yaml.UnmarshalStrict`: YAML to JSON (scalars become strings where the
//! target field is a string), then JSON into the structs with unknown fields refused, and
//! duplicate YAML keys refused. Chart.yaml goes through the lenient `yaml.Unmarshal`.
//! Type mismatches fail the whole file; only null entries and entries that fail
//! `Metadata.Validate` are skipped, each with a warning.

use std::collections::BTreeMap;

use chartkit_yaml::{Node, NodeKind, Value};

use crate::gotime::GoTime;
use crate::metadata::{ChartMetadata, Dependency, Maintainer};
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
    /// A field holds the wrong kind of value, or a key Helm does not know.
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
}

fn position(line: usize, column: usize) -> String {
    match (line, column) {
        (0, _) => String::new(),
        (l, 0) => format!("line {l}: "),
        (l, c) => format!("line {l}, column {c}: "),
    }
}

/// An index as loaded, with the warnings Helm would log for skipped entries.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedIndex {
    pub index: IndexFile,
    pub warnings: Vec<String>,
}

/// How strictly a document is decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mode {
    /// Came from JSON: numbers and booleans are not turned into strings.
    json: bool,
    /// Unknown keys and duplicate keys are errors (`UnmarshalStrict`).
    strict: bool,
}

/// Reads an index file as Helm's `loadIndex` does. `source` names the file in warnings.
pub fn parse_index(bytes: &[u8], source: &str) -> Result<LoadedIndex, IndexError> {
    if bytes.is_empty() {
        return Err(IndexError::Empty);
    }
    let (root, mode) = match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(json) => (
            json_to_node(&json),
            Mode {
                json: true,
                strict: false,
            },
        ),
        Err(_) => {
            let text = String::from_utf8_lossy(bytes);
            (
                chartkit_yaml::parse_node(&text)?,
                Mode {
                    json: false,
                    strict: true,
                },
            )
        }
    };
    let mut warnings = Vec::new();
    let mut index = decode_index(&root, mode, source, &mut warnings)?;
    index.sort_entries();
    if index.api_version.is_empty() {
        return Err(IndexError::NoApiVersion);
    }
    Ok(LoadedIndex { index, warnings })
}

/// Reads Chart.yaml as Helm's loader does (lenient `yaml.Unmarshal`), optionally laying
/// `requirements.yaml` over it, and defaults `apiVersion` to `v1`. Validation is separate.
pub fn parse_chart_metadata(
    chart_yaml: &str,
    requirements_yaml: Option<&str>,
) -> Result<ChartMetadata, IndexError> {
    let mode = Mode {
        json: false,
        strict: false,
    };
    let mut metadata = ChartMetadata::default();
    for text in std::iter::once(chart_yaml).chain(requirements_yaml) {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let node = chartkit_yaml::parse_node(text)?;
        decode_metadata_into(&mut metadata, &node, mode, "")?;
    }
    if metadata.api_version.is_empty() {
        metadata.api_version = API_VERSION_V1.to_owned();
    }
    Ok(metadata)
}

/// Decodes one index entry given as JSON (the compact cache stores entries so).
pub fn parse_entry_json(bytes: &[u8]) -> Result<ChartVersion, IndexError> {
    let json: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| IndexError::Field {
        path: String::new(),
        line: 0,
        column: 0,
        message: format!("cached entry is not JSON: {e}"),
    })?;
    let mode = Mode {
        json: true,
        strict: false,
    };
    decode_entry(&json_to_node(&json), mode, "entry")
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

fn field_error(node: &Node, path: &str, message: impl Into<String>) -> IndexError {
    IndexError::Field {
        path: path.to_owned(),
        line: node.line,
        column: node.column,
        message: message.into(),
    }
}

fn json_kind(node: &Node) -> &'static str {
    match node.kind {
        NodeKind::Null => "null",
        NodeKind::Bool(_) => "bool",
        NodeKind::Int(_) | NodeKind::Uint(_) | NodeKind::Float(_) => "number",
        NodeKind::Str(_) => "string",
        NodeKind::Seq(_) => "array",
        NodeKind::Map(_) => "object",
    }
}

fn type_error(node: &Node, path: &str, want: &str) -> IndexError {
    field_error(
        node,
        path,
        format!(
            "cannot read {} as {want}\nhint: fix the value's type; Helm refuses the whole index over it",
            json_kind(node)
        ),
    )
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// Walks a map's pairs, resolving keys to the known field names as encoding/json does
/// (exact, else case-insensitive), refusing unknown and repeated keys when strict.
fn for_each_field(
    node: &Node,
    path: &str,
    mode: Mode,
    fields: &[&str],
    mut visit: impl FnMut(&str, &Node, &str) -> Result<(), IndexError>,
) -> Result<(), IndexError> {
    let pairs = match &node.kind {
        NodeKind::Null => return Ok(()),
        NodeKind::Map(pairs) => pairs,
        _ => return Err(type_error(node, path, "an object")),
    };
    if mode.strict {
        check_duplicates(pairs, path)?;
    }
    for (key, value) in pairs {
        let Some(name) = key.as_map_key() else {
            continue;
        };
        let field = fields
            .iter()
            .find(|f| **f == name)
            .or_else(|| fields.iter().find(|f| f.eq_ignore_ascii_case(&name)));
        match field {
            Some(field) => visit(field, value, &child(path, field))?,
            None if mode.strict => {
                return Err(field_error(
                    key,
                    &child(path, &name),
                    format!(
                        "unknown field {name:?}\nhint: Helm reads indexes strictly; put extensions under `annotations`"
                    ),
                ));
            }
            None => {}
        }
    }
    Ok(())
}

fn check_duplicates(pairs: &[(Node, Node)], path: &str) -> Result<(), IndexError> {
    if pairs.len() < 2 {
        return Ok(());
    }
    let mut seen = std::collections::HashSet::with_capacity(pairs.len());
    for (key, _) in pairs {
        let Some(name) = key.as_map_key() else {
            continue;
        };
        let is_string = matches!(key.kind, NodeKind::Str(_));
        if !seen.insert((is_string, name.clone())) {
            return Err(field_error(
                key,
                &child(path, &name),
                format!("key {name:?} already set in map\nhint: remove the repeated key"),
            ));
        }
    }
    Ok(())
}

fn string(node: &Node, path: &str, mode: Mode) -> Result<String, IndexError> {
    match &node.kind {
        NodeKind::Str(s) => Ok(s.clone()),
        NodeKind::Null => Ok(String::new()),
        NodeKind::Seq(_) | NodeKind::Map(_) => Err(type_error(node, path, "a string")),
        _ if mode.json => Err(type_error(node, path, "a string")),
        _ => Ok(node.to_go_string().unwrap_or_default()),
    }
}

fn strings(node: &Node, path: &str, mode: Mode) -> Result<Vec<String>, IndexError> {
    match &node.kind {
        NodeKind::Null => Ok(Vec::new()),
        NodeKind::Seq(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| string(item, &format!("{path}[{i}]"), mode))
            .collect(),
        _ => Err(type_error(node, path, "a list of strings")),
    }
}

fn boolean(node: &Node, path: &str) -> Result<bool, IndexError> {
    match node.kind {
        NodeKind::Null => Ok(false),
        NodeKind::Bool(b) => Ok(b),
        _ => Err(type_error(node, path, "a boolean")),
    }
}

fn time(node: &Node, path: &str) -> Result<Option<GoTime>, IndexError> {
    match &node.kind {
        NodeKind::Null => Ok(None),
        NodeKind::Str(s) => GoTime::parse(s).map(Some).ok_or_else(|| {
            field_error(
                node,
                path,
                format!("{s:?} is not an RFC 3339 time (e.g. 2024-01-02T15:04:05Z)"),
            )
        }),
        _ => Err(type_error(node, path, "an RFC 3339 time string")),
    }
}

fn string_map(node: &Node, path: &str, mode: Mode) -> Result<BTreeMap<String, String>, IndexError> {
    let mut map = BTreeMap::new();
    match &node.kind {
        NodeKind::Null => {}
        NodeKind::Map(pairs) => {
            if mode.strict {
                check_duplicates(pairs, path)?;
            }
            for (key, value) in pairs {
                let name = key.as_map_key().unwrap_or_default();
                let text = string(value, &child(path, &name), mode)?;
                map.insert(name, text);
            }
        }
        _ => return Err(type_error(node, path, "a map of strings")),
    }
    Ok(map)
}

fn any_value(node: &Node, path: &str) -> Result<Value, IndexError> {
    node.to_value()
        .map_err(|e| field_error(node, path, e.message))
}

const INDEX_FIELDS: &[&str] = &[
    "serverInfo",
    "apiVersion",
    "generated",
    "entries",
    "publicKeys",
    "annotations",
];

fn decode_index(
    root: &Node,
    mode: Mode,
    source: &str,
    warnings: &mut Vec<String>,
) -> Result<IndexFile, IndexError> {
    let mut index = IndexFile::default();
    for_each_field(root, "", mode, INDEX_FIELDS, |field, value, path| {
        match field {
            "serverInfo" => {
                index.server_info = match &value.kind {
                    NodeKind::Null => None,
                    NodeKind::Map(_) => match any_value(value, path)? {
                        Value::Map(map) => Some(map),
                        _ => None,
                    },
                    _ => return Err(type_error(value, path, "an object")),
                }
            }
            "apiVersion" => index.api_version = string(value, path, mode)?,
            "generated" => index.generated = time(value, path)?,
            "entries" => index.entries = decode_entries(value, path, mode, source, warnings)?,
            "publicKeys" => index.public_keys = strings(value, path, mode)?,
            _ => index.annotations = string_map(value, path, mode)?,
        }
        Ok(())
    })?;
    Ok(index)
}

fn decode_entries(
    node: &Node,
    path: &str,
    mode: Mode,
    source: &str,
    warnings: &mut Vec<String>,
) -> Result<BTreeMap<String, Vec<ChartVersion>>, IndexError> {
    let mut entries = BTreeMap::new();
    let pairs = match &node.kind {
        NodeKind::Null => return Ok(entries),
        NodeKind::Map(pairs) => pairs,
        _ => return Err(type_error(node, path, "a map of chart names to versions")),
    };
    if mode.strict {
        check_duplicates(pairs, path)?;
    }
    for (key, list) in pairs {
        let name = key.as_map_key().unwrap_or_default();
        let list_path = child(path, &name);
        let items: &[Node] = match &list.kind {
            NodeKind::Null => &[],
            NodeKind::Seq(items) => items,
            _ => return Err(type_error(list, &list_path, "a list of chart versions")),
        };
        let mut versions = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let item_path = format!("{list_path}[{i}]");
            if matches!(item.kind, NodeKind::Null) {
                warnings.push(format!(
                    "skipping loading invalid entry for chart {name:?} from {source}: empty entry"
                ));
                continue;
            }
            let mut version = decode_entry(item, mode, &item_path)?;
            if version.metadata.api_version.is_empty() {
                version.metadata.api_version = API_VERSION_V1.to_owned();
            }
            match version.metadata.validate() {
                Err(e) if !e.skippable_in_index() => warnings.push(format!(
                    "skipping loading invalid entry for chart {name:?} {:?} from {source}: {e}",
                    version.metadata.version
                )),
                _ => versions.push(version),
            }
        }
        entries.insert(name, versions);
    }
    Ok(entries)
}

const METADATA_FIELDS: &[&str] = &[
    "name",
    "home",
    "sources",
    "version",
    "description",
    "keywords",
    "maintainers",
    "icon",
    "apiVersion",
    "condition",
    "tags",
    "appVersion",
    "deprecated",
    "annotations",
    "kubeVersion",
    "dependencies",
    "type",
];

const ENTRY_FIELDS: &[&str] = &[
    "urls",
    "created",
    "removed",
    "digest",
    "checksum",
    "engine",
    "tillerVersion",
    "url",
];

fn decode_entry(node: &Node, mode: Mode, path: &str) -> Result<ChartVersion, IndexError> {
    let mut version = ChartVersion::default();
    let all: Vec<&str> = METADATA_FIELDS
        .iter()
        .chain(ENTRY_FIELDS)
        .copied()
        .collect();
    for_each_field(node, path, mode, &all, |field, value, path| {
        match field {
            "urls" => {
                version.urls = match value.kind {
                    NodeKind::Null => None,
                    _ => Some(strings(value, path, mode)?),
                }
            }
            "created" => version.created = time(value, path)?,
            "removed" => version.removed = boolean(value, path)?,
            "digest" => version.digest = string(value, path, mode)?,
            "checksum" => version.checksum = string(value, path, mode)?,
            "engine" => version.engine = string(value, path, mode)?,
            "tillerVersion" => version.tiller_version = string(value, path, mode)?,
            "url" => version.url = string(value, path, mode)?,
            _ => set_metadata_field(&mut version.metadata, field, value, path, mode)?,
        }
        Ok(())
    })?;
    Ok(version)
}

fn decode_metadata_into(
    metadata: &mut ChartMetadata,
    node: &Node,
    mode: Mode,
    path: &str,
) -> Result<(), IndexError> {
    for_each_field(node, path, mode, METADATA_FIELDS, |field, value, path| {
        set_metadata_field(metadata, field, value, path, mode)
    })
}

fn set_metadata_field(
    m: &mut ChartMetadata,
    field: &str,
    value: &Node,
    path: &str,
    mode: Mode,
) -> Result<(), IndexError> {
    match field {
        "name" => m.name = string(value, path, mode)?,
        "home" => m.home = string(value, path, mode)?,
        "sources" => m.sources = strings(value, path, mode)?,
        "version" => m.version = string(value, path, mode)?,
        "description" => m.description = string(value, path, mode)?,
        "keywords" => m.keywords = strings(value, path, mode)?,
        "maintainers" => m.maintainers = list_of(value, path, mode, decode_maintainer)?,
        "icon" => m.icon = string(value, path, mode)?,
        "apiVersion" => m.api_version = string(value, path, mode)?,
        "condition" => m.condition = string(value, path, mode)?,
        "tags" => m.tags = string(value, path, mode)?,
        "appVersion" => m.app_version = string(value, path, mode)?,
        "deprecated" => m.deprecated = boolean(value, path)?,
        "annotations" => m.annotations = string_map(value, path, mode)?.into_iter().collect(),
        "kubeVersion" => m.kube_version = string(value, path, mode)?,
        "dependencies" => m.dependencies = list_of(value, path, mode, decode_dependency)?,
        _ => m.chart_type = string(value, path, mode)?,
    }
    Ok(())
}

fn list_of<T>(
    node: &Node,
    path: &str,
    mode: Mode,
    item: fn(&Node, &str, Mode) -> Result<T, IndexError>,
) -> Result<Vec<Option<T>>, IndexError> {
    match &node.kind {
        NodeKind::Null => Ok(Vec::new()),
        NodeKind::Seq(items) => items
            .iter()
            .enumerate()
            .map(|(i, n)| match n.kind {
                NodeKind::Null => Ok(None),
                _ => item(n, &format!("{path}[{i}]"), mode).map(Some),
            })
            .collect(),
        _ => Err(type_error(node, path, "a list")),
    }
}

fn decode_maintainer(node: &Node, path: &str, mode: Mode) -> Result<Maintainer, IndexError> {
    let mut m = Maintainer::default();
    for_each_field(
        node,
        path,
        mode,
        &["name", "email", "url"],
        |field, value, path| {
            let text = string(value, path, mode)?;
            match field {
                "name" => m.name = text,
                "email" => m.email = text,
                _ => m.url = text,
            }
            Ok(())
        },
    )?;
    Ok(m)
}

const DEPENDENCY_FIELDS: &[&str] = &[
    "name",
    "version",
    "repository",
    "condition",
    "tags",
    "enabled",
    "import-values",
    "alias",
];

fn decode_dependency(node: &Node, path: &str, mode: Mode) -> Result<Dependency, IndexError> {
    let mut d = Dependency::default();
    for_each_field(node, path, mode, DEPENDENCY_FIELDS, |field, value, path| {
        match field {
            "name" => d.name = string(value, path, mode)?,
            "version" => d.version = string(value, path, mode)?,
            "repository" => d.repository = string(value, path, mode)?,
            "condition" => d.condition = string(value, path, mode)?,
            "tags" => d.tags = strings(value, path, mode)?,
            "enabled" => d.enabled = boolean(value, path)?,
            "import-values" => {
                d.import_values = match any_value(value, path)? {
                    Value::Null => Vec::new(),
                    Value::Seq(items) => items,
                    _ => return Err(type_error(value, path, "a list")),
                }
            }
            _ => d.alias = string(value, path, mode)?,
        }
        Ok(())
    })?;
    Ok(d)
}
