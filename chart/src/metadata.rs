//! `Chart.yaml`: the chart's metadata, decoded and validated as Helm does.

use std::collections::BTreeMap;

use chartkit_version::Version;
use chartkit_yaml::{Map, Node, Value};

use crate::yaml_fields::{FieldError, Fields};

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
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metadata {
    pub name: String,
    pub home: String,
    pub sources: Vec<String>,
    pub version: String,
    pub description: String,
    pub keywords: Vec<String>,
    pub maintainers: Vec<Maintainer>,
    pub icon: String,
    pub api_version: String,
    pub condition: String,
    pub tags: String,
    pub app_version: String,
    pub deprecated: bool,
    pub annotations: BTreeMap<String, String>,
    pub kube_version: String,
    pub dependencies: Vec<Dependency>,
    /// `type`: empty, `application` or `library`.
    pub chart_type: String,
}

/// Why Chart.yaml (or requirements.yaml) could not be decoded or is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    /// A field has the wrong YAML type.
    #[error("line {line}: field `{field}` must be {expected}, found {found}")]
    Field {
        line: usize,
        field: String,
        expected: &'static str,
        found: &'static str,
    },
    /// A rule Helm enforces on every chart (`chart.metadata.*`).
    #[error("{0}")]
    Invalid(String),
}

impl From<FieldError> for MetadataError {
    fn from(e: FieldError) -> Self {
        MetadataError::Field {
            line: e.line,
            field: e.field,
            expected: e.expected,
            found: e.found,
        }
    }
}

impl Maintainer {
    fn decode(node: &Node) -> Result<Maintainer, FieldError> {
        let fields = Fields::of(node, "maintainers")?;
        Ok(Maintainer {
            name: fields.string("name")?,
            email: fields.string("email")?,
            url: fields.string("url")?,
        })
    }

    fn to_value(&self) -> Value {
        let mut map = Map::new();
        put_str(&mut map, "name", &self.name);
        put_str(&mut map, "email", &self.email);
        put_str(&mut map, "url", &self.url);
        Value::Map(map)
    }
}

impl Dependency {
    pub(crate) fn decode(node: &Node) -> Result<Dependency, FieldError> {
        let fields = Fields::of(node, "dependencies")?;
        Ok(Dependency {
            name: fields.string("name")?,
            version: fields.string("version")?,
            repository: fields.string("repository")?,
            condition: fields.string("condition")?,
            tags: fields.string_list("tags")?,
            enabled: fields.boolean("enabled")?,
            import_values: fields.value_list("import-values")?,
            alias: fields.string("alias")?,
        })
    }

    /// The name this dependency is known by in the parent: its alias, or its name.
    pub fn effective_name(&self) -> &str {
        if self.alias.is_empty() {
            &self.name
        } else {
            &self.alias
        }
    }

    fn validate(&mut self) -> Result<(), MetadataError> {
        self.name = sanitize(&self.name);
        self.version = sanitize(&self.version);
        self.repository = sanitize(&self.repository);
        self.condition = sanitize(&self.condition);
        for tag in &mut self.tags {
            *tag = sanitize(tag);
        }
        let alias_ok = self
            .alias
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !self.alias.is_empty() && !alias_ok {
            return Err(MetadataError::Invalid(format!(
                "dependency {:?} has disallowed characters in the alias {:?}; use letters, digits, `-` and `_`",
                self.name, self.alias
            )));
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

/// Decodes the `dependencies` list shared by Chart.yaml and requirements.yaml; null
/// entries are refused as Helm's validation does.
pub(crate) fn decode_dependencies(fields: &Fields<'_>) -> Result<Vec<Dependency>, MetadataError> {
    let deps = fields.list_of("dependencies", |node| match node {
        Some(node) => Dependency::decode(node).map(Some),
        None => Ok(None),
    })?;
    deps.into_iter()
        .map(|d| {
            d.ok_or_else(|| {
                MetadataError::Invalid("dependencies must not contain empty or null entries".into())
            })
        })
        .collect()
}

impl Metadata {
    /// Decodes Chart.yaml text. Unknown fields are ignored, as Helm ignores them.
    pub fn from_yaml(text: &str) -> Result<Metadata, MetadataYamlError> {
        let node = chartkit_yaml::parse_node(text).map_err(MetadataYamlError::Yaml)?;
        Metadata::decode(&node).map_err(MetadataYamlError::Metadata)
    }

    fn decode(node: &Node) -> Result<Metadata, MetadataError> {
        let fields = Fields::of(node, "Chart.yaml")?;
        let maintainers = fields.list_of("maintainers", |node| match node {
            Some(node) => Maintainer::decode(node).map(Some),
            None => Ok(None),
        })?;
        let maintainers = maintainers
            .into_iter()
            .map(|m| {
                m.ok_or_else(|| {
                    MetadataError::Invalid(
                        "maintainers must not contain empty or null entries".into(),
                    )
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Metadata {
            name: fields.string("name")?,
            home: fields.string("home")?,
            sources: fields.string_list("sources")?,
            version: fields.string("version")?,
            description: fields.string("description")?,
            keywords: fields.string_list("keywords")?,
            maintainers,
            icon: fields.string("icon")?,
            api_version: fields.string("apiVersion")?,
            condition: fields.string("condition")?,
            tags: fields.string("tags")?,
            app_version: fields.string("appVersion")?,
            deprecated: fields.boolean("deprecated")?,
            annotations: fields.string_map("annotations")?,
            kube_version: fields.string("kubeVersion")?,
            dependencies: decode_dependencies(&fields)?,
            chart_type: fields.string("type")?,
        })
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

    /// Helm's `Metadata.Validate`: normalises whitespace and drops unprintable characters in
    /// the free-text fields, then checks the rules every chart must meet.
    pub fn validate(&mut self) -> Result<(), MetadataError> {
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
            *field = sanitize(field);
        }
        for text in self.sources.iter_mut().chain(self.keywords.iter_mut()) {
            *text = sanitize(text);
        }
        let invalid = |message: String| Err(MetadataError::Invalid(message));
        if self.api_version.is_empty() {
            return invalid(
                "chart.metadata.apiVersion is required; add `apiVersion: v2` to Chart.yaml".into(),
            );
        }
        if self.name.is_empty() {
            return invalid("chart.metadata.name is required".into());
        }
        if self.name.contains('/')
            || self.name.contains('\\')
            || self.name == "."
            || self.name == ".."
        {
            return invalid(format!(
                "chart.metadata.name {:?} is invalid: it must not contain path separators",
                self.name
            ));
        }
        if self.version.is_empty() {
            return invalid("chart.metadata.version is required".into());
        }
        if let Err(e) = Version::parse(&self.version) {
            return invalid(format!(
                "chart.metadata.version {:?} is invalid: {e}",
                self.version
            ));
        }
        if !matches!(self.chart_type.as_str(), "" | "application" | "library") {
            return invalid(format!(
                "chart.metadata.type {:?} is invalid: must be application or library",
                self.chart_type
            ));
        }
        for maintainer in &mut self.maintainers {
            maintainer.name = sanitize(&maintainer.name);
            maintainer.email = sanitize(&maintainer.email);
            maintainer.url = sanitize(&maintainer.url);
        }
        let mut seen = std::collections::HashSet::new();
        for dependency in &mut self.dependencies {
            dependency.validate()?;
            let key = dependency.effective_name().to_owned();
            if !seen.insert(key.clone()) {
                return invalid(format!(
                    "more than one dependency with name or alias {key:?}; give dependencies of the same chart distinct aliases"
                ));
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
            map.insert(
                "maintainers".into(),
                Value::Seq(self.maintainers.iter().map(Maintainer::to_value).collect()),
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
            map.insert(
                "dependencies".into(),
                Value::Seq(self.dependencies.iter().map(Dependency::to_value).collect()),
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
    #[error("{0}")]
    Yaml(chartkit_yaml::Error),
    #[error("{0}")]
    Metadata(MetadataError),
}

fn put_str(map: &mut Map, key: &str, value: &str) {
    if !value.is_empty() {
        map.insert(key.to_owned(), Value::from(value));
    }
}

fn string_list(items: &[String]) -> Value {
    Value::Seq(items.iter().map(|s| Value::from(s.as_str())).collect())
}

/// Helm's `sanitizeString`: whitespace becomes a plain space, unprintable characters go.
fn sanitize(text: &str) -> String {
    if text
        .chars()
        .all(|c| c == ' ' || (!c.is_whitespace() && is_printable(c)))
    {
        return text.to_owned();
    }
    text.chars()
        .filter_map(|c| {
            if c.is_whitespace() {
                Some(' ')
            } else if is_printable(c) {
                Some(c)
            } else {
                None
            }
        })
        .collect()
}

/// Go's `unicode.IsPrint` for non-space characters: no control, format, private-use or
/// noncharacter code points.
fn is_printable(c: char) -> bool {
    let code = c as u32;
    !(c.is_control()
        || matches!(code, 0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x180E | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F | 0xFEFF | 0xFFF9..=0xFFFB)
        || matches!(code, 0xE000..=0xF8FF | 0xF0000..=0x10FFFF)
        || (code & 0xFFFE) == 0xFFFE)
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
        assert_eq!(m.dependencies[0].effective_name(), "c2");
        assert_eq!(m.dependencies[0].import_values.len(), 2);
        assert_eq!(m.maintainers[0].url, "u");
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
    }

    #[test]
    fn validation_rules() {
        let check = |text: &str| meta(text).validate().map_err(|e| e.to_string());
        assert!(
            check("apiVersion: v2\nname: a\nversion: 1.0\n").is_ok(),
            "Helm accepts short versions"
        );
        assert!(
            check("name: a\nversion: 1.0.0\n")
                .unwrap_err()
                .contains("apiVersion is required")
        );
        assert!(
            check("apiVersion: v2\nversion: 1.0.0\n")
                .unwrap_err()
                .contains("name is required")
        );
        assert!(
            check("apiVersion: v2\nname: a/b\nversion: 1.0.0\n")
                .unwrap_err()
                .contains("name \"a/b\" is invalid")
        );
        assert!(
            check("apiVersion: v2\nname: a\n")
                .unwrap_err()
                .contains("version is required")
        );
        assert!(
            check("apiVersion: v2\nname: a\nversion: one\n")
                .unwrap_err()
                .contains("version \"one\" is invalid")
        );
        assert!(
            check("apiVersion: v2\nname: a\nversion: 1.0.0\ntype: app\n")
                .unwrap_err()
                .contains("application or library")
        );
        assert!(
            check(
                "apiVersion: v2\nname: a\nversion: 1.0.0\ndependencies: [{name: x, alias: 'a b'}]\n"
            )
            .unwrap_err()
            .contains("disallowed characters in the alias")
        );
        assert!(check("apiVersion: v2\nname: a\nversion: 1.0.0\ndependencies: [{name: x}, {name: y, alias: x}]\n")
            .unwrap_err()
            .contains("more than one dependency"));
        assert!(
            Metadata::from_yaml("apiVersion: v2\nname: a\nversion: 1.0.0\nmaintainers: [~]\n")
                .unwrap_err()
                .to_string()
                .contains("maintainers must not contain empty or null entries")
        );
    }

    #[test]
    fn sanitising_flattens_whitespace() {
        let mut m = meta(
            "apiVersion: v2\nname: a\nversion: 1.0.0\ndescription: \"two\\nlines\\tand\\u200bzw\"\n",
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
