//! `Chart.yaml`: the chart's metadata, decoded and validated as Helm does. The same model is
//! what a repository index carries for each chart version (`chartkit-index`).

use std::collections::BTreeMap;

use chartkit_version::Version;
use chartkit_yaml::{Map, Node, NodeKind, Value};

use crate::yaml_fields::{Decoding, FieldError, Fields};

/// The chart API version: `v1` (Helm 2 charts, dependencies in requirements.yaml) or `v2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiVersion {
    V1,
    V2,
}

/// `application` charts render manifests; `library` charts only provide templates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChartType {
    #[default]
    Application,
    Library,
}

/// A chart maintainer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Maintainer {
    pub name: String,
    pub email: String,
    pub url: String,
}

/// A dependency declared in Chart.yaml (or requirements.yaml for v1 charts).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dependency {
    pub name: String,
    /// A version or a semver range.
    pub version: String,
    pub repository: String,
    /// Comma-separated values paths that enable the dependency.
    pub condition: String,
    pub tags: Vec<String>,
    pub enabled: bool,
    /// `import-values`: strings (child paths) or `{child, parent}` maps.
    pub import_values: Vec<Value>,
    pub alias: String,
}

/// The contents of Chart.yaml. Strings are empty when absent, as in Helm.
///
/// `maintainers` and `dependencies` hold `None` where the YAML list has a null item (Go's
/// nil pointer). [`Metadata::validate`] refuses those, so a loaded chart never has one; a
/// repository index, though, keeps an entry whose only fault is a repeated dependency, and
/// any null dependency after the repeat stays in it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metadata {
    pub name: String,
    pub home: String,
    pub sources: Vec<String>,
    pub version: String,
    pub description: String,
    pub keywords: Vec<String>,
    pub maintainers: Vec<Option<Maintainer>>,
    pub icon: String,
    pub api_version: String,
    pub condition: String,
    pub tags: String,
    pub app_version: String,
    pub deprecated: bool,
    pub annotations: BTreeMap<String, String>,
    pub kube_version: String,
    pub dependencies: Vec<Option<Dependency>>,
    /// `type`: empty, `application` or `library`.
    pub chart_type: String,
}

/// Why Chart.yaml, requirements.yaml or a lock file could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    /// A field has the wrong YAML type (or, in strict decoding, is unknown or repeated).
    #[error("{0}")]
    Field(#[from] FieldError),
    /// A value that decodes but cannot be used (lock files).
    #[error("{0}")]
    Invalid(String),
    /// The document is a scalar or a list. Said in `encoding/json`'s words, which Helm
    /// prints, naming the JSON type found and the Go type Helm decodes the file into:
    /// `v2.Metadata` in the chart loader, `loader.chartBase` where Helm 4 first reads
    /// Chart.yaml for its apiVersion ([`MetadataError::read_first_for_api_version`]).
    #[error(
        "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {found} into Go value of type {go_type}"
    )]
    NotAMap {
        found: &'static str,
        go_type: &'static str,
    },
}

impl MetadataError {
    /// This error as Helm 4's loader gives it when it reads Chart.yaml for its
    /// apiVersion before handing the chart to the loader of that version.
    pub fn read_first_for_api_version(self) -> MetadataError {
        match self {
            MetadataError::NotAMap { found, .. } => MetadataError::NotAMap {
                found,
                go_type: "loader.chartBase",
            },
            other => other,
        }
    }
}

/// Why metadata fails Helm's `Metadata.Validate`. The messages are Helm's, word for word
/// (`helm repo index` and `helm pull` users see them in warnings); [`ValidationError::hint`]
/// says what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValidationError {
    #[error("validation: chart.metadata.apiVersion is required")]
    NoApiVersion,
    #[error("validation: chart.metadata.name is required")]
    NoName,
    #[error("validation: chart.metadata.name {0:?} is not allowed")]
    ReservedName(String),
    #[error("validation: chart.metadata.name {0:?} is invalid")]
    BadName(String),
    #[error("validation: chart.metadata.version is required")]
    NoVersion,
    #[error("validation: chart.metadata.version {0:?} is invalid")]
    BadVersion(String),
    #[error("validation: chart.metadata.type must be application or library")]
    BadType,
    #[error("validation: maintainers must not contain empty or null nodes")]
    NullMaintainer,
    #[error("validation: dependencies must not contain empty or null nodes")]
    NullDependency,
    /// The dependency's name (Helm names the dependency, not the alias).
    #[error("validation: dependency {0:?} has disallowed characters in the alias")]
    BadAlias(String),
    /// Helm tolerates this one in repository indexes (JFrog strips aliases).
    #[error("validation: more than one dependency with name or alias {0:?}")]
    DuplicateDependency(String),
}

impl ValidationError {
    /// What to change in Chart.yaml.
    pub fn hint(&self) -> &'static str {
        match self {
            ValidationError::NoApiVersion => "add `apiVersion: v2` to Chart.yaml",
            ValidationError::NoName => "add `name:` with the chart's name to Chart.yaml",
            ValidationError::ReservedName(_) => {
                "`.` and `..` name directories; give the chart a name of its own, such as my-app"
            }
            ValidationError::BadName(_) => "a chart name must not contain `/`",
            ValidationError::NoVersion => "add `version:` with a semantic version such as 0.1.0",
            ValidationError::BadVersion(_) => "use a semantic version such as 1.2.3 or 1.2.3-rc.1",
            ValidationError::BadType => "set `type:` to application or library, or remove it",
            ValidationError::NullMaintainer => "remove the empty item from `maintainers`",
            ValidationError::NullDependency => "remove the empty item from `dependencies`",
            ValidationError::BadAlias(_) => "an alias may use only letters, digits, `-` and `_`",
            ValidationError::DuplicateDependency(_) => {
                "give dependencies of the same chart distinct aliases"
            }
        }
    }

    /// Errors Helm ignores when it loads a repository index
    /// (`ignoreSkippableChartValidationError`): the entry is kept.
    pub fn skippable_in_index(&self) -> bool {
        matches!(self, ValidationError::DuplicateDependency(_))
    }
}

impl Maintainer {
    /// The JSON field names Helm decodes and writes.
    pub const FIELDS: &'static [&'static str] = &["name", "email", "url"];

    /// Decodes a maintainer's fields into `self`.
    pub fn decode_fields(&mut self, fields: &Fields<'_>) -> Result<(), FieldError> {
        fields.string_into("name", &mut self.name)?;
        fields.string_into("email", &mut self.email)?;
        fields.string_into("url", &mut self.url)
    }

    /// The maintainer as Helm serialises it (empty fields left out).
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        put_str(&mut map, "name", &self.name);
        put_str(&mut map, "email", &self.email);
        put_str(&mut map, "url", &self.url);
        Value::Map(map)
    }
}

impl Dependency {
    /// The JSON field names Helm decodes and writes, in its struct order.
    pub const FIELDS: &'static [&'static str] = &[
        "name",
        "version",
        "repository",
        "condition",
        "tags",
        "enabled",
        "import-values",
        "alias",
    ];

    /// Decodes a dependency's fields into `self`.
    pub fn decode_fields(&mut self, fields: &Fields<'_>) -> Result<(), FieldError> {
        fields.string_into("name", &mut self.name)?;
        fields.string_into("version", &mut self.version)?;
        fields.string_into("repository", &mut self.repository)?;
        fields.string_into("condition", &mut self.condition)?;
        fields.string_list_into("tags", &mut self.tags)?;
        fields.boolean_into("enabled", &mut self.enabled)?;
        fields.value_list_into("import-values", &mut self.import_values)?;
        fields.string_into("alias", &mut self.alias)
    }

    /// The name this dependency is known by in the parent: its alias, or its name.
    pub fn effective_name(&self) -> &str {
        if self.alias.is_empty() {
            &self.name
        } else {
            &self.alias
        }
    }

    /// Helm's `Dependency.Validate`: sanitises, then checks the alias.
    fn validate(&mut self) -> Result<(), ValidationError> {
        for field in [
            &mut self.name,
            &mut self.version,
            &mut self.repository,
            &mut self.condition,
        ] {
            sanitize(field);
        }
        self.tags.iter_mut().for_each(sanitize);
        let alias_ok = self
            .alias
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !self.alias.is_empty() && !alias_ok {
            return Err(ValidationError::BadAlias(self.name.clone()));
        }
        Ok(())
    }

    /// The dependency as Helm serialises it; `name` and `repository` are always present.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("name".into(), Value::from(self.name.as_str()));
        put_str(&mut map, "version", &self.version);
        map.insert("repository".into(), Value::from(self.repository.as_str()));
        put_str(&mut map, "condition", &self.condition);
        if !self.tags.is_empty() {
            map.insert("tags".into(), string_list(&self.tags));
        }
        if self.enabled {
            map.insert("enabled".into(), Value::Bool(true));
        }
        if !self.import_values.is_empty() {
            map.insert(
                "import-values".into(),
                Value::Seq(self.import_values.clone()),
            );
        }
        put_str(&mut map, "alias", &self.alias);
        Value::Map(map)
    }
}

/// Decodes a lock file's `dependencies`, refusing null items: nothing downstream could use
/// a lock entry that names no chart.
pub(crate) fn decode_locked_dependencies(
    fields: &Fields<'_>,
) -> Result<Vec<Dependency>, MetadataError> {
    let mut dependencies = Vec::new();
    fields.list_into(
        "dependencies",
        Dependency::FIELDS,
        &mut dependencies,
        Dependency::decode_fields,
    )?;
    dependencies
        .into_iter()
        .map(|d| {
            d.ok_or_else(|| {
                MetadataError::Invalid(
                    "`dependencies` has an empty item; remove it or run `chartkit dependency update`"
                        .into(),
                )
            })
        })
        .collect()
}

/// Which file of a chart's metadata failed to decode, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {source}")]
pub struct ChartFileError {
    /// `Chart.yaml` or `requirements.yaml`.
    pub file: &'static str,
    pub source: MetadataYamlError,
}

impl Metadata {
    /// The JSON field names Helm decodes and writes, in its struct order.
    pub const FIELDS: &'static [&'static str] = &[
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

    /// Decodes Chart.yaml text. Unknown fields are ignored, as Helm ignores them.
    pub fn from_yaml(text: &str) -> Result<Metadata, MetadataYamlError> {
        let mut metadata = Metadata::default();
        metadata.merge_yaml(text)?;
        Ok(metadata)
    }

    /// Decodes YAML text over this metadata, leniently, as Helm's loader lays
    /// requirements.yaml over Chart.yaml: fields the text has replace (or, for lists and
    /// maps, are decoded over) the ones here.
    pub fn merge_yaml(&mut self, text: &str) -> Result<(), MetadataYamlError> {
        let node = chartkit_yaml::parse_node(text).map_err(MetadataYamlError::Yaml)?;
        if let Some(error) = node.json_key_error() {
            return Err(MetadataYamlError::Yaml(error));
        }
        let found = match node.kind {
            NodeKind::Map(_) | NodeKind::Null => None,
            NodeKind::Str(_) => Some("string"),
            NodeKind::Bool(_) => Some("bool"),
            NodeKind::Int(_) | NodeKind::Uint(_) | NodeKind::Float(_) => Some("number"),
            NodeKind::Seq(_) => Some("array"),
        };
        if let Some(found) = found {
            return Err(MetadataYamlError::Metadata(MetadataError::NotAMap {
                found,
                go_type: "v2.Metadata",
            }));
        }
        self.decode(&node, Decoding::LENIENT)
            .map_err(|e| MetadataYamlError::Metadata(e.into()))
    }

    /// Decodes a metadata document (a map) over `self` with the given rules.
    pub fn decode(&mut self, node: &Node, decoding: Decoding) -> Result<(), FieldError> {
        let fields = Fields::document(node, Metadata::FIELDS, decoding)?;
        self.decode_fields(&fields)
    }

    /// Decodes the metadata fields among `fields` into `self`. A repository index entry
    /// shares its map with the entry's own fields, so the caller builds `fields` with both
    /// sets of names.
    pub fn decode_fields(&mut self, fields: &Fields<'_>) -> Result<(), FieldError> {
        fields.string_into("name", &mut self.name)?;
        fields.string_into("home", &mut self.home)?;
        fields.string_list_into("sources", &mut self.sources)?;
        fields.string_into("version", &mut self.version)?;
        fields.string_into("description", &mut self.description)?;
        fields.string_list_into("keywords", &mut self.keywords)?;
        fields.list_into(
            "maintainers",
            Maintainer::FIELDS,
            &mut self.maintainers,
            Maintainer::decode_fields,
        )?;
        fields.string_into("icon", &mut self.icon)?;
        fields.string_into("apiVersion", &mut self.api_version)?;
        fields.string_into("condition", &mut self.condition)?;
        fields.string_into("tags", &mut self.tags)?;
        fields.string_into("appVersion", &mut self.app_version)?;
        fields.boolean_into("deprecated", &mut self.deprecated)?;
        fields.string_map_into("annotations", &mut self.annotations)?;
        fields.string_into("kubeVersion", &mut self.kube_version)?;
        fields.list_into(
            "dependencies",
            Dependency::FIELDS,
            &mut self.dependencies,
            Dependency::decode_fields,
        )?;
        fields.string_into("type", &mut self.chart_type)
    }

    /// A chart's metadata as Helm's loader reads it: each Chart.yaml (an archive may hold
    /// more than one) decoded over the last with `apiVersion` defaulted to `v1` (Helm 2
    /// charts may omit it), then each requirements.yaml laid over the result. Validation is
    /// separate ([`Metadata::validate`]).
    pub fn from_chart_files<'a>(
        chart_yamls: impl IntoIterator<Item = &'a str>,
        requirements_yamls: impl IntoIterator<Item = &'a str>,
    ) -> Result<Metadata, ChartFileError> {
        let mut metadata = Metadata::default();
        for text in chart_yamls {
            metadata.merge_yaml(text).map_err(|source| ChartFileError {
                file: crate::CHART_FILE,
                source,
            })?;
            if metadata.api_version.is_empty() {
                metadata.api_version = "v1".to_owned();
            }
        }
        for text in requirements_yamls {
            metadata.merge_yaml(text).map_err(|source| ChartFileError {
                file: "requirements.yaml",
                source,
            })?;
        }
        Ok(metadata)
    }

    /// The API version; charts without one are v1, as Helm assumes.
    pub fn api(&self) -> ApiVersion {
        if self.api_version == "v2" {
            ApiVersion::V2
        } else {
            ApiVersion::V1
        }
    }

    pub fn kind(&self) -> ChartType {
        if self.chart_type == "library" {
            ChartType::Library
        } else {
            ChartType::Application
        }
    }

    /// The maintainers that are not null items.
    pub fn maintainers(&self) -> impl Iterator<Item = &Maintainer> {
        self.maintainers.iter().flatten()
    }

    /// The dependencies that are not null items.
    pub fn dependencies(&self) -> impl Iterator<Item = &Dependency> {
        self.dependencies.iter().flatten()
    }

    /// Helm's `Metadata.Validate`, rule for rule and in its order: sanitises the free-text
    /// fields in place (whitespace becomes a space, unprintable characters go), then checks
    /// the rules every chart must meet.
    pub fn validate(&mut self) -> Result<(), ValidationError> {
        for field in [
            &mut self.name,
            &mut self.description,
            &mut self.home,
            &mut self.icon,
            &mut self.condition,
            &mut self.tags,
            &mut self.app_version,
            &mut self.kube_version,
        ] {
            sanitize(field);
        }
        self.sources.iter_mut().for_each(sanitize);
        self.keywords.iter_mut().for_each(sanitize);
        if self.api_version.is_empty() {
            return Err(ValidationError::NoApiVersion);
        }
        if self.name.is_empty() {
            return Err(ValidationError::NoName);
        }
        // Paths are built from chart names (`--output-dir`, unpacking, subcharts), so Helm
        // refuses the two that name directories.
        if self.name == "." || self.name == ".." {
            return Err(ValidationError::ReservedName(self.name.clone()));
        }
        if go_path_base(&self.name) != self.name {
            return Err(ValidationError::BadName(self.name.clone()));
        }
        if self.version.is_empty() {
            return Err(ValidationError::NoVersion);
        }
        if Version::parse(&self.version).is_err() {
            return Err(ValidationError::BadVersion(self.version.clone()));
        }
        if !matches!(self.chart_type.as_str(), "" | "application" | "library") {
            return Err(ValidationError::BadType);
        }
        for maintainer in &mut self.maintainers {
            let Some(m) = maintainer else {
                return Err(ValidationError::NullMaintainer);
            };
            sanitize(&mut m.name);
            sanitize(&mut m.email);
            sanitize(&mut m.url);
        }
        let mut seen = std::collections::HashSet::new();
        for dependency in &mut self.dependencies {
            let Some(d) = dependency else {
                return Err(ValidationError::NullDependency);
            };
            d.validate()?;
            let key = d.effective_name().to_owned();
            if !seen.insert(key.clone()) {
                return Err(ValidationError::DuplicateDependency(key));
            }
        }
        Ok(())
    }

    /// The metadata as Helm serialises it (JSON field names, empty fields left out). This
    /// is what `helm show chart` prints and what packaging writes as Chart.yaml.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        put_str(&mut map, "name", &self.name);
        put_str(&mut map, "home", &self.home);
        if !self.sources.is_empty() {
            map.insert("sources".into(), string_list(&self.sources));
        }
        put_str(&mut map, "version", &self.version);
        put_str(&mut map, "description", &self.description);
        if !self.keywords.is_empty() {
            map.insert("keywords".into(), string_list(&self.keywords));
        }
        if !self.maintainers.is_empty() {
            let items = self.maintainers.iter();
            map.insert(
                "maintainers".into(),
                Value::Seq(items.map(|m| nullable(m, Maintainer::to_value)).collect()),
            );
        }
        put_str(&mut map, "icon", &self.icon);
        put_str(&mut map, "apiVersion", &self.api_version);
        put_str(&mut map, "condition", &self.condition);
        put_str(&mut map, "tags", &self.tags);
        put_str(&mut map, "appVersion", &self.app_version);
        if self.deprecated {
            map.insert("deprecated".into(), Value::Bool(true));
        }
        if !self.annotations.is_empty() {
            let annotations = self
                .annotations
                .iter()
                .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                .collect();
            map.insert("annotations".into(), Value::Map(annotations));
        }
        put_str(&mut map, "kubeVersion", &self.kube_version);
        if !self.dependencies.is_empty() {
            let items = self.dependencies.iter();
            map.insert(
                "dependencies".into(),
                Value::Seq(items.map(|d| nullable(d, Dependency::to_value)).collect()),
            );
        }
        put_str(&mut map, "type", &self.chart_type);
        Value::Map(map)
    }

    /// Chart.yaml as Helm writes it (`helm show chart`, packaged Chart.yaml).
    pub fn to_yaml(&self) -> String {
        chartkit_yaml::to_yaml(&self.to_value())
    }
}

/// Chart.yaml text that is not YAML, or YAML that is not valid metadata.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetadataYamlError {
    #[error("{}", .0.helm_message())]
    Yaml(chartkit_yaml::Error),
    #[error("{0}")]
    Metadata(MetadataError),
}

fn nullable<T>(item: &Option<T>, to_value: fn(&T) -> Value) -> Value {
    item.as_ref().map_or(Value::Null, to_value)
}

fn put_str(map: &mut Map, key: &str, value: &str) {
    if !value.is_empty() {
        map.insert(key.to_owned(), Value::from(value));
    }
}

fn string_list(items: &[String]) -> Value {
    Value::Seq(items.iter().map(|s| Value::from(s.as_str())).collect())
}

/// Go's `filepath.Base` on Unix, which Helm compares the chart name with.
fn go_path_base(path: &str) -> &str {
    if path.is_empty() {
        return ".";
    }
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/";
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed)
}

/// Helm's `sanitizeString`: any Unicode space becomes a plain space and characters Go does
/// not consider printable are dropped. Leaves the common all-printable text untouched.
fn sanitize(text: &mut String) {
    // Printable ASCII and the plain space, checked a byte at a time: nearly every text.
    if text.bytes().all(|b| (b' '..=b'~').contains(&b)) {
        return;
    }
    if text
        .chars()
        .all(|c| c == ' ' || (!c.is_whitespace() && is_printable(c)))
    {
        return;
    }
    *text = text
        .chars()
        .filter_map(|c| {
            if c.is_whitespace() {
                Some(' ')
            } else if is_printable(c) {
                Some(c)
            } else {
                None
            }
        })
        .collect();
}

/// Go's `unicode.IsPrint` for characters that are not spaces: not a control (Cc), format
/// (Cf, as of Unicode 15), private-use (Co) or noncharacter code point. Other unassigned
/// code points count as printable, a known approximation: std has no general-category table.
fn is_printable(c: char) -> bool {
    let code = c as u32;
    !(c.is_control()
        || matches!(code, 0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x890..=0x891 | 0x8E2)
        || matches!(code, 0x180E | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064)
        || matches!(code, 0x2066..=0x206F | 0xFEFF | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD)
        || matches!(code, 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A)
        || matches!(code, 0xE0001 | 0xE0020..=0xE007F)
        || matches!(code, 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD)
        || (code & 0xFFFE) == 0xFFFE
        || matches!(code, 0xFDD0..=0xFDEF))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(text: &str) -> Metadata {
        Metadata::from_yaml(text).unwrap()
    }

    #[test]
    fn decodes_every_field() {
        let m = meta(
            "apiVersion: v2\nname: web\nversion: 1.2.3\nkubeVersion: '>=1.20'\ndescription: d\ntype: application\n\
             keywords: [a, b]\nhome: https://h\nsources: [https://s]\nmaintainers:\n- name: n\n  email: e\n  url: u\n\
             icon: https://i\nappVersion: 1.10\ndeprecated: true\nannotations: {a: 1}\ncondition: c\ntags: t\n\
             dependencies:\n- name: common\n  version: ^2\n  repository: https://r\n  condition: common.enabled\n  tags: [x]\n  import-values: [data, {child: a, parent: b}]\n  alias: c2\n",
        );
        assert_eq!(m.app_version, "1.1", "unquoted 1.10 is a float to Helm");
        assert_eq!(m.annotations.get("a").map(String::as_str), Some("1"));
        let dependency = m.dependencies().next().unwrap();
        assert_eq!(dependency.effective_name(), "c2");
        assert_eq!(dependency.import_values.len(), 2);
        assert_eq!(m.maintainers().next().unwrap().url, "u");
        assert!(m.deprecated);
        assert_eq!(m.kind(), ChartType::Application);
    }

    #[test]
    fn type_errors_name_the_field_and_line() {
        let err = Metadata::from_yaml("apiVersion: v2\nname: x\nkeywords: abc\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 3: field `keywords` must be a list of strings, found a string"
        );
        let err = Metadata::from_yaml("name: [x]\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 1: field `name` must be a string, found a list"
        );
        let err =
            Metadata::from_yaml("name: x\nmaintainers:\n- name: a\n- email: [b]\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 4: field `maintainers[1].email` must be a string, found a list"
        );
        let err = Metadata::from_yaml("- a\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type v2.Metadata"
        );
    }

    #[test]
    fn validation_follows_helm_word_for_word() {
        let check = |text: &str| meta(text).validate().map_err(|e| e.to_string());
        assert!(
            check("apiVersion: v2\nname: a\nversion: 1.0\n").is_ok(),
            "Helm accepts short versions"
        );
        let cases = [
            (
                "name: a\nversion: 1.0.0\n",
                "validation: chart.metadata.apiVersion is required",
            ),
            (
                "apiVersion: v2\nversion: 1.0.0\n",
                "validation: chart.metadata.name is required",
            ),
            (
                "apiVersion: v2\nname: ../../test\nversion: 1.0.0\n",
                "validation: chart.metadata.name \"../../test\" is invalid",
            ),
            (
                "apiVersion: v2\nname: a\n",
                "validation: chart.metadata.version is required",
            ),
            (
                "apiVersion: v2\nname: a\nversion: 1.2.3.4\n",
                "validation: chart.metadata.version \"1.2.3.4\" is invalid",
            ),
            (
                "apiVersion: v2\nname: a\nversion: 1.0.0\ntype: app\n",
                "validation: chart.metadata.type must be application or library",
            ),
            (
                "apiVersion: v2\nname: a\nversion: 1.0.0\ndependencies: [{name: x, alias: 'a b'}]\n",
                "validation: dependency \"x\" has disallowed characters in the alias",
            ),
            (
                "apiVersion: v2\nname: a\nversion: 1.0.0\ndependencies: [{name: x}, {name: y, alias: x}]\n",
                "validation: more than one dependency with name or alias \"x\"",
            ),
            (
                "apiVersion: v2\nname: a\nversion: 1.0.0\nmaintainers: [~]\n",
                "validation: maintainers must not contain empty or null nodes",
            ),
            (
                "apiVersion: v2\nname: a\nversion: 1.0.0\ndependencies: [{name: x}, ~]\n",
                "validation: dependencies must not contain empty or null nodes",
            ),
            (
                "apiVersion: v2\nname: ..\nversion: 1.0.0\n",
                "validation: chart.metadata.name \"..\" is not allowed",
            ),
            (
                "apiVersion: v2\nname: .\nversion: 1.0.0\n",
                "validation: chart.metadata.name \".\" is not allowed",
            ),
            // Helm checks in order: the version before the null maintainer.
            (
                "apiVersion: v2\nname: a\nmaintainers: [~]\n",
                "validation: chart.metadata.version is required",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(check(text).unwrap_err(), want, "{text}");
        }
        // filepath.Base leaves these names alone, so Helm accepts them on Linux.
        for name in ["a\\\\b", "\"/\""] {
            let text = format!("apiVersion: v2\nname: {name}\nversion: 1.0.0\n");
            assert!(check(&text).is_ok(), "{name}");
        }
    }

    #[test]
    fn a_repeated_dependency_is_the_only_error_an_index_skips() {
        let mut m = meta(
            "apiVersion: v2\nname: a\nversion: 1.0.0\ndependencies: [{name: x}, {name: x}, ~]\n",
        );
        let err = m.validate().unwrap_err();
        assert!(err.skippable_in_index(), "{err}");
        assert_eq!(m.dependencies.len(), 3);
        assert_eq!(
            m.to_yaml(),
            "apiVersion: v2\ndependencies:\n- name: x\n  repository: \"\"\n- name: x\n  repository: \"\"\n- null\nname: a\nversion: 1.0.0\n"
        );
    }

    #[test]
    fn requirements_are_laid_over_chart_yaml_as_go_decodes() {
        let m = Metadata::from_chart_files(
            ["name: old\nversion: 1.0.0\nannotations: {a: '1'}\ndependencies:\n- name: db\n  repository: https://r\n"],
            ["dependencies:\n- name: cache\nannotations: {b: '2'}\n"],
        )
        .unwrap();
        assert_eq!(m.api_version, "v1");
        let dependency = m.dependencies().next().unwrap();
        assert_eq!(
            (dependency.name.as_str(), dependency.repository.as_str()),
            ("cache", "https://r"),
            "the item is decoded over the existing one"
        );
        assert_eq!(m.annotations.len(), 2, "map keys are added");
        let err = Metadata::from_chart_files(["name: x\n"], ["tags: [a]\n"]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("requirements.yaml: line 1: field `tags` must be a string"),
            "{err}"
        );
    }

    #[test]
    fn sanitising_flattens_whitespace() {
        let mut m = meta(
            "apiVersion: v2\nname: a\nversion: 1.0.0\ndescription: \"two\\nlines\\tand\\u200bzw\\a\"\n",
        );
        m.validate().unwrap();
        assert_eq!(m.description, "two lines andzw");
    }

    #[test]
    fn serialises_like_helm_show_chart() {
        let mut m = meta(
            "apiVersion: v2\nname: web\nversion: 1.2.3\nappVersion: \"7\"\ndependencies:\n- name: common\n  version: 1.x\n",
        );
        m.validate().unwrap();
        assert_eq!(
            m.to_yaml(),
            "apiVersion: v2\nappVersion: \"7\"\ndependencies:\n- name: common\n  repository: \"\"\n  version: 1.x\nname: web\nversion: 1.2.3\n"
        );
    }
}
