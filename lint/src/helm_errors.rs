//! What Helm says when it cannot read a chart, for problems chartkit's loader and YAML
//! readers describe in their own words (with file names and hints for the command line).
//! `helm lint` prints its readers' errors inside the report, so a lint report that is to
//! read like helm's needs them as Go, go-yaml and sigs.k8s.io/yaml word them.

use std::path::{Path, PathBuf};

use chartkit_chart::archive::{
    ArchiveError, EntryRules, Limits, ReadOptions, Retain, read_archive,
};
use chartkit_chart::{
    Decoding, FieldError, FieldErrorKind, File, LoadError, Metadata, MetadataError,
    MetadataYamlError,
};
use chartkit_yaml::{Node, NodeKind};

/// A YAML syntax error as sigs.k8s.io/yaml reports it.
pub(crate) fn yaml_syntax(error: &chartkit_yaml::Error) -> String {
    error.helm_message()
}

/// Why Chart.yaml (or requirements.yaml) did not decode into Helm's `chart.Metadata`.
pub(crate) fn metadata_yaml(error: &MetadataYamlError) -> String {
    match error {
        MetadataYamlError::Yaml(e) => yaml_syntax(e),
        MetadataYamlError::Metadata(MetadataError::Field(field)) => metadata_field(field),
        MetadataYamlError::Metadata(other) => other.to_string(),
    }
}

/// [`metadata_yaml`] for the decode of `text`: of several fields of the wrong type, Go
/// names the first it meets, and it meets them with keys sorted (the YAML is turned into
/// a JSON object first), so each field is decoded alone in that order to find it.
pub(crate) fn chart_yaml_error(text: &str, error: &MetadataYamlError) -> String {
    let MetadataYamlError::Metadata(MetadataError::Field(first)) = error else {
        return metadata_yaml(error);
    };
    let Ok(node) = chartkit_yaml::parse_node(text) else {
        return metadata_field(first);
    };
    let NodeKind::Map(pairs) = &node.kind else {
        return metadata_field(first);
    };
    let map = |pairs: Vec<(Node, Node)>| Node {
        kind: NodeKind::Map(pairs),
        line: node.line,
        column: node.column,
    };
    let decode = |alone: &Node| Metadata::default().decode(alone, Decoding::LENIENT).err();
    sorted_pairs(pairs)
        .into_iter()
        .find_map(|(key, value)| {
            let error = decode(&map(vec![(key.clone(), value.clone())]))?;
            // In a list of maintainers or dependencies, Go meets the elements in order
            // and each element's keys sorted too.
            let NodeKind::Seq(items) = &value.kind else {
                return Some(error);
            };
            let inner = items.iter().find_map(|item| {
                let parts = match &item.kind {
                    NodeKind::Map(pairs) => sorted_pairs(pairs)
                        .into_iter()
                        .map(|(k, v)| Node {
                            kind: NodeKind::Map(vec![(k.clone(), v.clone())]),
                            ..item.clone()
                        })
                        .collect(),
                    _ => vec![item.clone()],
                };
                parts.into_iter().find_map(|part| {
                    let list = Node {
                        kind: NodeKind::Seq(vec![part]),
                        ..value.clone()
                    };
                    decode(&map(vec![(key.clone(), list)]))
                })
            });
            Some(inner.unwrap_or(error))
        })
        .map_or_else(|| metadata_field(first), |e| metadata_field(&e))
}

/// A map's pairs as Go meets them once the YAML is a JSON object: keys sorted, the last
/// of a repeated key kept.
fn sorted_pairs(pairs: &[(Node, Node)]) -> Vec<(&Node, &Node)> {
    let mut keyed: Vec<(String, &Node, &Node)> = pairs
        .iter()
        .filter_map(|(k, v)| Some((k.as_map_key()?, k, v)))
        .collect();
    keyed.reverse();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    keyed.dedup_by(|a, b| a.0 == b.0);
    keyed.into_iter().map(|(_, k, v)| (k, v)).collect()
}

const JSON_DECODE: &str = "error unmarshaling JSON: while decoding JSON: json:";

/// A field of the wrong type, as `encoding/json` words it: the innermost struct, the
/// path of JSON names without list indexes, and the Go type of the field or element.
fn metadata_field(error: &FieldError) -> String {
    let FieldErrorKind::Type { found, .. } = &error.kind else {
        return error.to_string();
    };
    let Some((structure, path, go_type)) = metadata_go_field(&error.path) else {
        return error.to_string();
    };
    format!(
        "{JSON_DECODE} cannot unmarshal {} into Go struct field {structure}.{path} of type {go_type}",
        json_kind(found)
    )
}

/// The JSON kind `encoding/json` names for a YAML node `kind_name` describes.
fn json_kind(found: &str) -> &'static str {
    match found {
        "a map" => "object",
        "a list" => "array",
        "a number" => "number",
        "a boolean" => "bool",
        "null" => "null",
        _ => "string",
    }
}

/// For a chartkit field path (`maintainers[0].email`, `annotations.team`): the Go struct
/// holding the field, the JSON path Go reports and the Go type decoded into.
fn metadata_go_field(path: &str) -> Option<(&'static str, String, &'static str)> {
    let end = path.find(['.', '[']).unwrap_or(path.len());
    let (top, rest) = path.split_at(end);
    let element = rest.starts_with('[');
    // The field of a list element (`[0].email` gives `email`) and what follows it.
    let member = rest
        .split_once(']')
        .map(|(_, after)| after.trim_start_matches('.'))
        .filter(|m| !m.is_empty())
        .map(|m| m.split_at(m.find(['.', '[']).unwrap_or(m.len())));
    let top_level = |go_type: &'static str| Some(("Metadata", top.to_owned(), go_type));
    match (top, element, member) {
        ("maintainers", false, _) => top_level("[]*v2.Maintainer"),
        ("maintainers", true, None) => top_level("v2.Maintainer"),
        ("maintainers", true, Some((field, _))) => {
            Some(("Maintainer", format!("{top}.{field}"), "string"))
        }
        ("dependencies", false, _) => top_level("[]*v2.Dependency"),
        ("dependencies", true, None) => top_level("v2.Dependency"),
        ("dependencies", true, Some((field, tail))) => {
            let go_type = match field {
                "tags" if tail.starts_with('[') => "string",
                "tags" => "[]string",
                "enabled" => "bool",
                "import-values" => "[]interface {}",
                _ => "string",
            };
            Some(("Dependency", format!("{top}.{field}"), go_type))
        }
        ("sources" | "keywords", true, _) => top_level("string"),
        ("sources" | "keywords", false, _) => top_level("[]string"),
        ("annotations", _, _) if rest.is_empty() => top_level("map[string]string"),
        ("annotations", _, _) => top_level("string"),
        ("deprecated", _, _) => top_level("bool"),
        _ if rest.is_empty() => top_level("string"),
        _ => None,
    }
}

/// Why a values file did not read, after `unable to parse YAML: ` (the values rule, whose
/// Go type is `common.Values`) or `cannot load values.yaml: ` (the loader, which decodes
/// into `map[string]interface {}`).
pub(crate) fn values(error: &chartkit_yaml::Error, go_type: &str, loader: bool) -> String {
    const NOT_A_MAP: &str = "values must be a map of keys to values, found ";
    if let Some(found) = error.message.strip_prefix(NOT_A_MAP) {
        let reason = format!(
            "{JSON_DECODE} cannot unmarshal {} into Go value of type {go_type}",
            json_kind(found)
        );
        return if loader {
            format!("cannot unmarshal yaml document: {reason}")
        } else {
            reason
        };
    }
    if error.message.starts_with("invalid Yaml document separator") {
        return format!("error reading yaml document: {}", error.message);
    }
    if loader {
        format!("cannot unmarshal yaml document: {}", yaml_syntax(error))
    } else {
        yaml_syntax(error)
    }
}

/// Why values.schema.json is not one JSON document, as the schema library's reader
/// (`json.Decoder`, then a check for anything after the value) says it.
pub(crate) fn schema_json(schema: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(schema);
    let mut values = crate::json_stream::values(&text).into_iter();
    match values.next() {
        None => Some("EOF".into()),
        Some(Err(e)) => Some(bare_json_error(&e)),
        Some(Ok(_)) if values.next().is_some() => {
            Some("invalid character after top-level value".into())
        }
        Some(Ok(_)) => None,
    }
}

/// A decoder error without the byte offset Kubernetes' reader adds to it.
pub(crate) fn bare_json_error(error: &str) -> String {
    error
        .strip_prefix("json: offset ")
        .and_then(|t| t.split_once(": "))
        .map_or(error, |(_, message)| message)
        .to_owned()
}

/// What Helm's strict reading of Chart.yaml (sigs.k8s.io/yaml's `UnmarshalStrict`)
/// refuses: every repeated key, as go-yaml lists them, else the first field Helm does not
/// know in the order Go meets them (keys sorted, as the JSON it decodes has them).
pub(crate) fn strict_chart_yaml(node: &Node) -> Option<String> {
    let mut repeated = Vec::new();
    repeated_keys(node, &mut repeated);
    if !repeated.is_empty() {
        return Some(format!(
            "error converting YAML to JSON: yaml: unmarshal errors:\n  {}",
            repeated.join("\n  ")
        ));
    }
    let unknown = unknown_field(node, Metadata::FIELDS)?;
    Some(format!("{JSON_DECODE} unknown field {unknown:?}"))
}

/// go-yaml's `line N: key K already set in map` for every repeated key, in document order.
fn repeated_keys(node: &Node, out: &mut Vec<String>) {
    match &node.kind {
        NodeKind::Seq(items) => items.iter().for_each(|item| repeated_keys(item, out)),
        NodeKind::Map(pairs) => {
            for (i, (key, value)) in pairs.iter().enumerate() {
                if pairs[..i]
                    .iter()
                    .any(|(earlier, _)| earlier.kind == key.kind)
                {
                    let shown = match &key.kind {
                        NodeKind::Str(s) => format!("{s:?}"),
                        _ => key.as_map_key().unwrap_or_default(),
                    };
                    out.push(format!("line {}: key {shown} already set in map", key.line));
                } else {
                    repeated_keys(value, out);
                }
            }
        }
        _ => {}
    }
}

const MAINTAINER_FIELDS: &[&str] = &["name", "email", "url"];
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

/// The first key of a map decoded into a struct with `fields` that matches none of them
/// (Go matches names without regard to case), walking maintainers and dependencies too.
fn unknown_field(node: &Node, fields: &[&str]) -> Option<String> {
    let NodeKind::Map(pairs) = &node.kind else {
        return None;
    };
    let mut keyed: Vec<(String, &Node)> = pairs
        .iter()
        .filter_map(|(k, v)| Some((k.as_map_key()?, v)))
        .collect();
    // The last of a repeated key wins, and JSON objects reach Go with sorted keys.
    keyed.reverse();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    keyed.dedup_by(|a, b| a.0 == b.0);
    for (key, value) in keyed {
        let Some(field) = fields.iter().find(|f| f.eq_ignore_ascii_case(&key)) else {
            return Some(key);
        };
        let inner = match (*field, fields == Metadata::FIELDS) {
            ("maintainers", true) => MAINTAINER_FIELDS,
            ("dependencies", true) => DEPENDENCY_FIELDS,
            _ => continue,
        };
        if let NodeKind::Seq(items) = &value.kind
            && let Some(found) = items.iter().find_map(|item| unknown_field(item, inner))
        {
            return Some(found);
        }
    }
    None
}

/// Helm's loader's error for a chart it was given at `root` (the path as loaded): its
/// own words for each problem, inside `error unpacking subchart X in PARENT: ` for each
/// subchart on the way to the one at fault.
pub(crate) fn load(error: &LoadError, root: &Path, limits: &Limits) -> String {
    let base = |file: &str| file.rsplit('/').next().unwrap_or(file).to_owned();
    let (file, reason) = match error {
        LoadError::IrregularFile(path) => {
            return format!(
                "cannot load irregular file {} as it has file mode type bits set",
                path.display()
            );
        }
        LoadError::FileTooLarge { path, limit } => {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            return format!("chart file {name:?} is larger than the maximum file size {limit}");
        }
        LoadError::Metadata { file, source } => {
            let reason = match std::fs::read_to_string(file) {
                Ok(text) => chart_yaml_error(&text, source),
                Err(_) => metadata_yaml(source),
            };
            (file, format!("cannot load {}: {reason}", base(file)))
        }
        LoadError::Lock { file, source } => (
            file,
            format!("cannot load {}: {}", base(file), metadata_yaml(source)),
        ),
        LoadError::Invalid { file, source } => (file, source.to_string()),
        // The YAML reader counts an error's line from the start of its piece (between
        // `---` lines), as helm's loader does.
        LoadError::Values { file, error } => (
            file,
            format!(
                "cannot load values.yaml: {}",
                values(error, "map[string]interface {}", true)
            ),
        ),
        LoadError::Archive { origin, source } => {
            return within(
                &format!("{origin}/Chart.yaml"),
                root,
                limits,
                archive(source),
            );
        }
        // Helm's loader returns the rule's error alone (Go's `filepath.ErrBadPattern`,
        // or its own for `**`).
        LoadError::HelmIgnore { origin, source } => {
            return within(
                &format!("{origin}/Chart.yaml"),
                root,
                limits,
                source.message.to_owned(),
            );
        }
        LoadError::MissingChartYaml { origin } => {
            return within(
                &format!("{origin}/Chart.yaml"),
                root,
                limits,
                "Chart.yaml file is missing".into(),
            );
        }
        LoadError::SubchartLayout {
            origin,
            expected,
            found,
        } => {
            let file = format!("{origin}/Chart.yaml");
            let chain = subchart_chain(&file, root).unwrap_or_default();
            let name = chart_name_at(root, &chain, limits).unwrap_or_default();
            let reason =
                format!("error unpacking subchart tar in {name}: expected {expected}, got {found}");
            return within(&file, root, limits, reason);
        }
        _ => return error.to_string(),
    };
    within(file, root, limits, reason)
}

/// Why an archive did not read, as Go's gzip and tar readers say it where they would
/// have stopped too (a stream that is not gzip, or stops short).
pub(crate) fn archive(error: &ArchiveError) -> String {
    match error {
        ArchiveError::Corrupt(io) if io.to_string().contains("missing gzip header") => {
            "gzip: invalid header".into()
        }
        ArchiveError::Corrupt(io)
            if io.kind() == std::io::ErrorKind::UnexpectedEof
                || io.to_string().starts_with("failed to read entire block") =>
        {
            "unexpected EOF".into()
        }
        other => other.to_string(),
    }
}

/// `reason`, wrapped as Helm's loader wraps the errors of the subcharts on the way from
/// `root` to `file`.
fn within(file: &str, root: &Path, limits: &Limits, reason: String) -> String {
    let Some(chain) = subchart_chain(file, root) else {
        return reason;
    };
    let mut text = reason;
    for depth in (0..chain.len()).rev() {
        let parent = chart_name_at(root, &chain[..depth], limits).unwrap_or_else(|| {
            chain
                .get(depth.wrapping_sub(1))
                .cloned()
                .unwrap_or_default()
        });
        text = format!(
            "error unpacking subchart {} in {parent}: {text}",
            chain[depth]
        );
    }
    text
}

/// The `charts/` entries from `root` to the chart `file` belongs to.
fn subchart_chain(file: &str, root: &Path) -> Option<Vec<String>> {
    let root = root.to_string_lossy();
    let mut rest = file.strip_prefix(root.as_ref())?.strip_prefix('/')?;
    let mut chain = Vec::new();
    while let Some(inner) = rest.strip_prefix("charts/") {
        let (group, after) = inner.split_once('/')?;
        chain.push(group.to_owned());
        rest = after;
    }
    Some(chain)
}

/// The name in the Chart.yaml of the subchart `chain` leads to from `root`, following
/// directories on disk and archives (also archives inside archives).
fn chart_name_at(root: &Path, chain: &[String], limits: &Limits) -> Option<String> {
    enum Place {
        Dir(PathBuf),
        Files(Vec<File>),
    }
    let unpack = |data: &[u8]| {
        read_archive(
            data,
            &ReadOptions {
                limits: *limits,
                rules: EntryRules::Helm,
                retain: Retain::LoaderFiles,
                budget: None,
            },
        )
        .ok()
    };
    let mut place = Place::Dir(root.to_path_buf());
    for group in chain {
        place = match place {
            Place::Dir(dir) if group.ends_with(".tgz") => Place::Files(unpack(
                &std::fs::read(dir.join("charts").join(group)).ok()?,
            )?),
            Place::Dir(dir) => Place::Dir(dir.join("charts").join(group)),
            Place::Files(files) => {
                let inner = format!("charts/{group}");
                if group.ends_with(".tgz") {
                    let file = files.iter().find(|f| f.name == inner)?;
                    Place::Files(unpack(&file.data)?)
                } else {
                    let prefix = format!("{inner}/");
                    Place::Files(
                        files
                            .into_iter()
                            .filter_map(|f| {
                                let name = f.name.strip_prefix(&prefix)?.to_owned();
                                Some(File::new(name, f.data))
                            })
                            .collect(),
                    )
                }
            }
        };
    }
    let text = match place {
        Place::Dir(dir) => std::fs::read_to_string(dir.join("Chart.yaml")).ok()?,
        Place::Files(files) => files
            .iter()
            .find(|f| f.name == "Chart.yaml")?
            .text()
            .into_owned(),
    };
    Metadata::from_yaml(&text).ok().map(|m| m.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_names_the_struct_path_and_type_of_a_field() {
        let cases = [
            ("name", ("Metadata", "name", "string")),
            (
                "maintainers",
                ("Metadata", "maintainers", "[]*v2.Maintainer"),
            ),
            (
                "maintainers[0]",
                ("Metadata", "maintainers", "v2.Maintainer"),
            ),
            (
                "maintainers[1].email",
                ("Maintainer", "maintainers.email", "string"),
            ),
            (
                "dependencies[0].tags",
                ("Dependency", "dependencies.tags", "[]string"),
            ),
            (
                "dependencies[0].tags[2]",
                ("Dependency", "dependencies.tags", "string"),
            ),
            (
                "dependencies[0].enabled",
                ("Dependency", "dependencies.enabled", "bool"),
            ),
            ("sources[0]", ("Metadata", "sources", "string")),
            (
                "annotations",
                ("Metadata", "annotations", "map[string]string"),
            ),
            ("annotations.a.b", ("Metadata", "annotations", "string")),
            ("deprecated", ("Metadata", "deprecated", "bool")),
        ];
        for (path, (structure, go_path, go_type)) in cases {
            assert_eq!(
                metadata_go_field(path),
                Some((structure, go_path.to_owned(), go_type)),
                "{path}"
            );
        }
    }

    #[test]
    fn strict_reading_lists_every_repeated_key_then_the_first_unknown_field() {
        let node = chartkit_yaml::parse_node("a: 1\nb: 2\na: 3\nm:\n  x: 1\n  x: 2\n").unwrap();
        assert_eq!(
            strict_chart_yaml(&node).unwrap(),
            "error converting YAML to JSON: yaml: unmarshal errors:\n  line 3: key \"a\" already set in map\n  line 6: key \"x\" already set in map"
        );
        let node = chartkit_yaml::parse_node(
            "name: a\nzeta: 1\nmaintainers:\n- name: x\n  handle: y\nNAME: b\n",
        )
        .unwrap();
        assert_eq!(
            strict_chart_yaml(&node).unwrap(),
            "error unmarshaling JSON: while decoding JSON: json: unknown field \"handle\""
        );
    }

    #[test]
    fn values_errors_name_the_go_type() {
        let error = chartkit_yaml::parse_values("just text\n").unwrap_err();
        assert_eq!(
            values(&error, "common.Values", false),
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go value of type common.Values"
        );
        let error = chartkit_yaml::parse_values("a: [\n").unwrap_err();
        assert_eq!(
            values(&error, "map[string]interface {}", true),
            "cannot unmarshal yaml document: error converting YAML to JSON: yaml: line 1: did not find expected node content"
        );
    }
}
