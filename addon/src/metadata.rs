//! `metadata.yaml`, the file that makes a directory a KubeVela addon.
//!
//! The fields are KubeVela's `addon.Meta` (pkg/addon/type.go). KubeVela decodes the file
//! leniently and ignores what it does not know; here unknown and repeated keys are refused
//! so a typo (`dependecies:`) is caught when the addon is packed, not when a cluster
//! silently installs it without its dependencies.

use std::collections::{BTreeMap, HashSet};
use std::fmt;

use chartkit_version::{Version, VersionRange};
use chartkit_yaml::{Node, NodeKind};

/// The file name, at the top of an addon directory and of an addon package.
pub const METADATA_FILE: &str = "metadata.yaml";

/// An addon's metadata.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AddonMetadata {
    pub name: String,
    pub version: String,
    pub description: String,
    pub icon: String,
    /// The addon's home page; Chart.yaml's `home`.
    pub url: String,
    /// Chart.yaml's `keywords`.
    pub tags: Vec<String>,
    pub dependencies: Vec<Dependency>,
    pub system: SystemRequirements,
    /// Namespaces KubeVela creates before installing the addon.
    pub need_namespace: Vec<String>,
    /// Hidden from listings; installed only as another addon's dependency.
    pub invisible: bool,
    /// Where each field was written (field path to 1-based line), for validation messages.
    positions: BTreeMap<String, usize>,
}

/// Another addon this one needs, with an optional version range.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dependency {
    pub name: String,
    /// A version range; empty means any released version.
    pub version: String,
}

/// The KubeVela and Kubernetes versions an addon works with, as version ranges (empty:
/// no requirement).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SystemRequirements {
    pub vela: String,
    pub kubernetes: String,
}

/// A problem in metadata.yaml: where, which field, what is wrong and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct MetadataError {
    /// 1-based line; 0 when the problem is the file as a whole (a missing field).
    pub line: usize,
    /// The field, as a path (`dependencies[1].version`); empty for a YAML syntax error.
    pub field: String,
    pub message: String,
}

impl fmt::Display for MetadataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: ", self.line)?;
        }
        if !self.field.is_empty() {
            write!(f, "`{}`: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

/// KubeVela's `AddonNameRegex` (`^[a-z\d]+(-[a-z\d]+)*$`): the name becomes part of the
/// Kubernetes application `addon-NAME`.
fn valid_addon_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// A Kubernetes namespace name (an RFC 1123 label).
fn valid_namespace(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
}

const KNOWN_FIELDS: &str = "name, version, description, icon, url, tags, dependencies, system, needNamespace, invisible, deployTo, uxPlugins, annotations";

impl AddonMetadata {
    /// Reads metadata.yaml strictly: one YAML map with only KubeVela's fields, each of its
    /// type. Does not validate values; see [`AddonMetadata::validate`].
    pub fn from_yaml(text: &str) -> Result<AddonMetadata, MetadataError> {
        let documents = chartkit_yaml::parse_documents(text).map_err(|e| MetadataError {
            line: e.line,
            field: String::new(),
            message: format!("not valid YAML: {}", e.message),
        })?;
        let mut documents = documents.into_iter();
        let Some(root) = documents.next() else {
            return Err(MetadataError {
                line: 0,
                field: String::new(),
                message: "the file is empty; an addon needs at least `name` and `version`".into(),
            });
        };
        if let Some(extra) = documents.next() {
            return Err(MetadataError {
                line: extra.line,
                field: String::new(),
                message: "a second YAML document; metadata.yaml holds one".into(),
            });
        }
        let mut meta = AddonMetadata::default();
        let pairs = map_pairs(&root, "")?;
        for (key, key_line, value) in pairs {
            meta.positions.insert(key.clone(), key_line);
            if let NodeKind::Seq(items) = &value.kind {
                for (i, item) in items.iter().enumerate() {
                    meta.positions.insert(format!("{key}[{i}]"), item.line);
                }
            }
            match key.as_str() {
                "name" => meta.name = string(value, &key)?,
                "version" => meta.version = string(value, &key)?,
                "description" => meta.description = string(value, &key)?,
                "icon" => meta.icon = string(value, &key)?,
                "url" => meta.url = string(value, &key)?,
                "tags" => meta.tags = strings(value, &key)?,
                "needNamespace" => meta.need_namespace = strings(value, &key)?,
                "invisible" => {
                    meta.invisible = match value.kind {
                        NodeKind::Bool(b) => b,
                        NodeKind::Null => false,
                        _ => return Err(wrong_type(value, &key, "true or false")),
                    }
                }
                "dependencies" => meta.dependencies = dependencies(value, &mut meta.positions)?,
                "system" => {
                    for (field, field_line, value) in map_pairs(value, "system")? {
                        let path = format!("system.{field}");
                        meta.positions.insert(path.clone(), field_line);
                        match field.as_str() {
                            "vela" => meta.system.vela = string(value, &path)?,
                            "kubernetes" => meta.system.kubernetes = string(value, &path)?,
                            _ => return Err(unknown(field_line, &path, "vela, kubernetes")),
                        }
                    }
                }
                // KubeVela fields that do not shape the package: their types are checked,
                // their contents are KubeVela's business.
                "deployTo" => {
                    map_pairs(value, &key)?;
                }
                "uxPlugins" | "annotations" => {
                    for (field, _, value) in map_pairs(value, &key)? {
                        string(value, &format!("{key}.{field}"))?;
                    }
                }
                _ => return Err(unknown(key_line, &key, KNOWN_FIELDS)),
            }
        }
        Ok(meta)
    }

    /// Every rule the metadata breaks, in field order; empty when it is fine. An addon
    /// package needs a name KubeVela accepts and a strict semantic version; every range
    /// (dependencies, system) must parse, since the resolver and KubeVela both match them.
    pub fn validate(&self) -> Vec<MetadataError> {
        let mut problems = Vec::new();
        let mut problem = |field: &str, message: String| {
            problems.push(MetadataError {
                line: self.line_of(field),
                field: field.to_owned(),
                message,
            });
        };
        if self.name.is_empty() {
            problem("name", "is required".into());
        } else if !valid_addon_name(&self.name) {
            problem(
                "name",
                format!(
                    "`{}` is not a valid addon name: use lowercase letters, digits and single dashes, e.g. `my-addon`",
                    self.name
                ),
            );
        }
        if self.version.is_empty() {
            problem(
                "version",
                "is required to package an addon, e.g. `version: 1.0.0`".into(),
            );
        } else if let Err(e) = Version::parse_strict(&self.version) {
            problem(
                "version",
                format!("{e}; an addon version is MAJOR.MINOR.PATCH without a `v`"),
            );
        }
        let mut seen = HashSet::new();
        for (i, dependency) in self.dependencies.iter().enumerate() {
            let name_field = format!("dependencies[{i}].name");
            if dependency.name.is_empty() {
                problem(&name_field, "is required".into());
            } else if !valid_addon_name(&dependency.name) {
                problem(
                    &name_field,
                    format!("`{}` is not a valid addon name", dependency.name),
                );
            } else if dependency.name == self.name {
                problem(&name_field, "an addon cannot depend on itself".into());
            } else if !seen.insert(dependency.name.as_str()) {
                problem(
                    &name_field,
                    format!(
                        "`{}` is listed twice; write one entry with one version range",
                        dependency.name
                    ),
                );
            }
            if !dependency.version.is_empty()
                && let Err(e) = VersionRange::parse(&dependency.version)
            {
                problem(&format!("dependencies[{i}].version"), first_line(&e));
            }
        }
        for (field, range) in [
            ("system.vela", &self.system.vela),
            ("system.kubernetes", &self.system.kubernetes),
        ] {
            if !range.is_empty()
                && let Err(e) = VersionRange::parse(range)
            {
                problem(field, first_line(&e));
            }
        }
        for (i, namespace) in self.need_namespace.iter().enumerate() {
            if !valid_namespace(namespace) {
                problem(
                    &format!("needNamespace[{i}]"),
                    format!(
                        "`{namespace}` is not a valid namespace name (lowercase letters, digits and `-`, at most 63)"
                    ),
                );
            }
        }
        problems
    }

    /// The line a field was written on, or 0 when it was not written.
    pub fn line_of(&self, field: &str) -> usize {
        self.positions.get(field).copied().unwrap_or(0)
    }
}

/// A range error without its hint line: the message names the field, and callers add
/// their own next step.
fn first_line(error: &impl ToString) -> String {
    let text = error.to_string();
    text.lines().next().unwrap_or_default().to_owned()
}

/// A map's pairs as (key, the key's line, value), refusing keys that are not scalars and
/// keys set twice.
#[allow(clippy::type_complexity)]
fn map_pairs<'a>(
    node: &'a Node,
    field: &str,
) -> Result<Vec<(String, usize, &'a Node)>, MetadataError> {
    let pairs = match &node.kind {
        NodeKind::Map(pairs) => pairs,
        NodeKind::Null => return Ok(Vec::new()),
        _ if field.is_empty() => {
            return Err(MetadataError {
                line: node.line,
                field: String::new(),
                message: format!(
                    "metadata.yaml must be a map of fields (name, version, ...), found {}",
                    node.kind_name()
                ),
            });
        }
        _ => return Err(wrong_type(node, field, "a map")),
    };
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(pairs.len());
    for (key, value) in pairs {
        let Some(name) = key.as_map_key() else {
            return Err(MetadataError {
                line: key.line,
                field: field.to_owned(),
                message: format!("a key must be a string, found {}", key.kind_name()),
            });
        };
        let path = if field.is_empty() {
            name.clone()
        } else {
            format!("{field}.{name}")
        };
        if !seen.insert(name.clone()) {
            return Err(MetadataError {
                line: key.line,
                field: path,
                message: "is set twice; keep one".into(),
            });
        }
        out.push((name, key.line, value));
    }
    Ok(out)
}

fn string(node: &Node, field: &str) -> Result<String, MetadataError> {
    match &node.kind {
        NodeKind::Str(s) => Ok(s.clone()),
        NodeKind::Null => Ok(String::new()),
        NodeKind::Int(_) | NodeKind::Uint(_) | NodeKind::Float(_) | NodeKind::Bool(_) => {
            Err(MetadataError {
                line: node.line,
                field: field.to_owned(),
                message: format!(
                    "must be a string, found {}; quote it (KubeVela refuses it too)",
                    node.kind_name()
                ),
            })
        }
        _ => Err(wrong_type(node, field, "a string")),
    }
}

fn strings(node: &Node, field: &str) -> Result<Vec<String>, MetadataError> {
    match &node.kind {
        NodeKind::Null => Ok(Vec::new()),
        NodeKind::Seq(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| string(item, &format!("{field}[{i}]")))
            .collect(),
        _ => Err(wrong_type(node, field, "a list of strings")),
    }
}

fn dependencies(
    node: &Node,
    positions: &mut BTreeMap<String, usize>,
) -> Result<Vec<Dependency>, MetadataError> {
    let items = match &node.kind {
        NodeKind::Null => return Ok(Vec::new()),
        NodeKind::Seq(items) => items,
        _ => {
            return Err(wrong_type(
                node,
                "dependencies",
                "a list of {name, version}",
            ));
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let base = format!("dependencies[{i}]");
        if !matches!(item.kind, NodeKind::Map(_)) {
            return Err(wrong_type(item, &base, "a map with `name` and `version`"));
        }
        let mut dependency = Dependency::default();
        // Where the item starts, for a missing name.
        positions.insert(format!("{base}.name"), item.line);
        for (key, key_line, value) in map_pairs(item, &base)? {
            let path = format!("{base}.{key}");
            positions.insert(path.clone(), key_line);
            match key.as_str() {
                "name" => dependency.name = string(value, &path)?,
                "version" => dependency.version = string(value, &path)?,
                _ => return Err(unknown(key_line, &path, "name, version")),
            }
        }
        out.push(dependency);
    }
    Ok(out)
}

fn wrong_type(node: &Node, field: &str, expected: &str) -> MetadataError {
    MetadataError {
        line: node.line,
        field: field.to_owned(),
        message: format!("must be {expected}, found {}", node.kind_name()),
    }
}

fn unknown(line: usize, field: &str, known: &str) -> MetadataError {
    MetadataError {
        line,
        field: field.to_owned(),
        message: format!("unknown field; the known ones are: {known}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = "\
name: velaux
version: 1.2.0
description: KubeVela's UI
icon: https://example.com/icon.png
url: https://kubevela.io
tags:
  - ui
  - dashboard
dependencies:
  - name: fluxcd
    version: '>=1.0.0'
  - name: terraform
system:
  vela: '>=1.6.0'
  kubernetes: '>=1.20'
needNamespace:
  - vela-system
invisible: false
deployTo:
  runtimeCluster: false
";

    #[test]
    fn reads_every_field() {
        let meta = AddonMetadata::from_yaml(FULL).unwrap();
        assert_eq!(meta.name, "velaux");
        assert_eq!(meta.url, "https://kubevela.io");
        assert_eq!(meta.tags, ["ui", "dashboard"]);
        assert_eq!(
            meta.dependencies,
            [
                Dependency {
                    name: "fluxcd".into(),
                    version: ">=1.0.0".into()
                },
                Dependency {
                    name: "terraform".into(),
                    version: String::new()
                }
            ]
        );
        assert_eq!(meta.system.kubernetes, ">=1.20");
        assert_eq!(meta.need_namespace, ["vela-system"]);
        assert!(meta.validate().is_empty(), "{:?}", meta.validate());
    }

    #[test]
    fn unknown_and_repeated_keys_name_their_line() {
        let err =
            AddonMetadata::from_yaml("name: a\nversion: 1.0.0\ndependecies: []\n").unwrap_err();
        assert_eq!(err.line, 3);
        assert_eq!(err.field, "dependecies");
        assert!(
            err.to_string()
                .starts_with("line 3: `dependecies`: unknown field"),
            "{err}"
        );

        let err = AddonMetadata::from_yaml("name: a\ndependecies:\n  - name: b\n").unwrap_err();
        assert_eq!(err.line, 2, "the key's line, not its list's");

        let err = AddonMetadata::from_yaml("name: a\nname: b\n").unwrap_err();
        assert_eq!(err.to_string(), "line 2: `name`: is set twice; keep one");

        let err = AddonMetadata::from_yaml("name: a\ndependencies:\n  - name: b\n    range: 1\n")
            .unwrap_err();
        assert_eq!(err.field, "dependencies[0].range");
        assert_eq!(err.line, 4);
    }

    #[test]
    fn numbers_are_not_strings() {
        let err = AddonMetadata::from_yaml("name: a\nversion: 1.0\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 2: `version`: must be a string, found a number; quote it (KubeVela refuses it too)"
        );
        let err = AddonMetadata::from_yaml("name: a\ntags: ui\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 2: `tags`: must be a list of strings, found a string"
        );
        let err = AddonMetadata::from_yaml("- a\n").unwrap_err();
        assert!(err.message.contains("must be a map of fields"), "{err}");
    }

    #[test]
    fn validation_names_field_and_line() {
        let meta = AddonMetadata::from_yaml(
            "name: My_Addon\nversion: v1.0\ndependencies:\n- name: flux\n  version: '>>1'\n- name: flux\nsystem:\n  kubernetes: 'abc'\nneedNamespace: [Bad]\n",
        )
        .unwrap();
        let problems: Vec<String> = meta.validate().iter().map(ToString::to_string).collect();
        assert_eq!(problems.len(), 6, "{problems:#?}");
        assert!(problems[0].starts_with("line 1: `name`: `My_Addon` is not a valid addon name"));
        assert!(
            problems[1].starts_with("line 2: `version`: "),
            "{}",
            problems[1]
        );
        assert!(
            problems[2]
                .starts_with("line 5: `dependencies[0].version`: invalid version range `>>1`"),
            "{}",
            problems[2]
        );
        assert!(
            problems[3].starts_with("line 6: `dependencies[1].name`: `flux` is listed twice"),
            "{}",
            problems[3]
        );
        assert!(
            problems[4].starts_with("line 8: `system.kubernetes`: invalid version range"),
            "{}",
            problems[4]
        );
        assert!(
            problems[5].starts_with("line 9: `needNamespace[0]`"),
            "{}",
            problems[5]
        );
    }

    #[test]
    fn missing_fields() {
        let meta = AddonMetadata::from_yaml("description: x\n").unwrap();
        let problems: Vec<String> = meta.validate().iter().map(ToString::to_string).collect();
        assert_eq!(
            problems,
            [
                "`name`: is required",
                "`version`: is required to package an addon, e.g. `version: 1.0.0`"
            ]
        );
        assert!(AddonMetadata::from_yaml("").is_err());
    }
}
