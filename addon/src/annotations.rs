//! The Chart.yaml an addon package carries, and the annotations through which an index
//! entry tells an addon registry reader what it needs without downloading the package.
//!
//! The convention is KubeVela's own, from `generateChartMetadata`/`generateAnnotation`
//! (pkg/addon/utils.go, what `vela addon push` writes) and `LoadSystemRequirements`
//! (pkg/addon/versioned_registry.go, what its versioned registry reads from index entries):
//!
//! - `type: library`, so `helm install` refuses to install an addon as a chart, and
//!   `appVersion` equal to `version`;
//! - `home` from `url`, `keywords` from `tags`;
//! - annotations `system.vela` and `system.kubernetes`, the ranges from `system`, only when
//!   set, and `addon.name`, which KubeVela writes to recognise an addon among charts.
//!
//! KubeVela has no annotation for dependencies: it reads them from metadata.yaml inside the
//! package. `addon.dependencies` is chartkit's, so a resolver can work from the index
//! alone: a JSON list shaped like KubeVela's `[]Dependency` (`{"name":…,"version":…}`,
//! `version` left out when empty, as its `omitempty` tag does), which a Go reader decodes
//! with `json.Unmarshal` into KubeVela's own type. Written only when there are
//! dependencies.

use chartkit_yaml::{Map, Value};

use crate::metadata::{AddonMetadata, Dependency, MetadataError};

pub const SYSTEM_VELA: &str = "system.vela";
pub const SYSTEM_KUBERNETES: &str = "system.kubernetes";
pub const ADDON_NAME: &str = "addon.name";
pub const ADDON_DEPENDENCIES: &str = "addon.dependencies";

/// Why an index entry's addon annotations cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AnnotationError(pub String);

impl AddonMetadata {
    /// Chart.yaml for this addon's package (see the module documentation for each field).
    /// Expects metadata that passed [`AddonMetadata::validate`].
    pub fn chart_yaml(&self) -> String {
        let mut chart = Map::new();
        let mut put = |key: &str, value: &str| {
            if !value.is_empty() {
                chart.insert(key.to_owned(), Value::String(value.to_owned()));
            }
        };
        put("apiVersion", "v2");
        put("name", &self.name);
        put("version", &self.version);
        put("appVersion", &self.version);
        put("description", &self.description);
        put("icon", &self.icon);
        put("home", &self.url);
        put("type", "library");
        if !self.tags.is_empty() {
            chart.insert(
                "keywords".into(),
                Value::Seq(self.tags.iter().cloned().map(Value::String).collect()),
            );
        }
        let mut annotations = Map::new();
        let mut annotate = |key: &str, value: String| {
            if !value.is_empty() {
                annotations.insert(key.to_owned(), Value::String(value));
            }
        };
        annotate(SYSTEM_VELA, self.system.vela.clone());
        annotate(SYSTEM_KUBERNETES, self.system.kubernetes.clone());
        annotate(ADDON_NAME, self.name.clone());
        annotate(ADDON_DEPENDENCIES, encode_dependencies(&self.dependencies));
        chart.insert("annotations".into(), Value::Map(annotations));
        chartkit_yaml::to_yaml(&Value::Map(chart))
    }
}

/// Reads metadata.yaml, validates it and returns the Chart.yaml its package carries; the
/// error is the first problem found.
pub fn chart_yaml_for(metadata_yaml: &str) -> Result<String, MetadataError> {
    let meta = AddonMetadata::from_yaml(metadata_yaml)?;
    if let Some(problem) = meta.validate().into_iter().next() {
        return Err(problem);
    }
    Ok(meta.chart_yaml())
}

/// `addon.dependencies`' value; empty when there are none.
pub fn encode_dependencies(dependencies: &[Dependency]) -> String {
    if dependencies.is_empty() {
        return String::new();
    }
    let list: Vec<serde_json::Value> = dependencies
        .iter()
        .map(|d| {
            let mut object = serde_json::Map::new();
            object.insert("name".into(), d.name.clone().into());
            if !d.version.is_empty() {
                object.insert("version".into(), d.version.clone().into());
            }
            serde_json::Value::Object(object)
        })
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// The dependencies in an `addon.dependencies` value.
pub fn decode_dependencies(text: &str) -> Result<Vec<Dependency>, AnnotationError> {
    let bad = |why: String| {
        AnnotationError(format!(
            "annotation `{ADDON_DEPENDENCIES}` is not a JSON list of {{\"name\", \"version\"}} objects: {why}"
        ))
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    let serde_json::Value::Array(items) = value else {
        return Err(bad("not a list".into()));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let serde_json::Value::Object(object) = item else {
                return Err(bad(format!("item {i} is not an object")));
            };
            let mut dependency = Dependency::default();
            for (key, value) in object {
                let serde_json::Value::String(text) = value else {
                    return Err(bad(format!("item {i}: `{key}` is not a string")));
                };
                match key.as_str() {
                    "name" => dependency.name = text,
                    "version" => dependency.version = text,
                    _ => return Err(bad(format!("item {i}: unknown key `{key}`"))),
                }
            }
            if dependency.name.is_empty() {
                return Err(bad(format!("item {i} has no name")));
            }
            Ok(dependency)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_yaml_follows_kubevela() {
        let meta = AddonMetadata::from_yaml(
            "name: velaux\nversion: 1.2.0\ndescription: UI\nicon: https://i/x.png\nurl: https://kubevela.io\ntags: [ui]\ndependencies:\n- name: fluxcd\n  version: ^1.0\n- name: terraform\nsystem:\n  vela: '>=1.6.0'\n  kubernetes: '>=1.20'\n",
        )
        .unwrap();
        assert_eq!(
            meta.chart_yaml(),
            "annotations:\n  addon.dependencies: '[{\"name\":\"fluxcd\",\"version\":\"^1.0\"},{\"name\":\"terraform\"}]'\n  addon.name: velaux\n  system.kubernetes: '>=1.20'\n  system.vela: '>=1.6.0'\napiVersion: v2\nappVersion: 1.2.0\ndescription: UI\nhome: https://kubevela.io\nicon: https://i/x.png\nkeywords:\n- ui\nname: velaux\ntype: library\nversion: 1.2.0\n"
        );
    }

    #[test]
    fn minimal_addon_has_only_its_name_annotation() {
        let yaml = chart_yaml_for("name: a\nversion: 0.1.0\n").unwrap();
        assert_eq!(
            yaml,
            "annotations:\n  addon.name: a\napiVersion: v2\nappVersion: 0.1.0\nname: a\ntype: library\nversion: 0.1.0\n"
        );
        let err = chart_yaml_for("name: a\n").unwrap_err();
        assert_eq!(err.field, "version");
    }

    #[test]
    fn dependencies_round_trip() {
        let deps = vec![
            Dependency {
                name: "a".into(),
                version: ">=1.0.0 <2".into(),
            },
            Dependency {
                name: "b".into(),
                version: String::new(),
            },
        ];
        assert_eq!(
            decode_dependencies(&encode_dependencies(&deps)).unwrap(),
            deps
        );
        assert!(decode_dependencies("{}").is_err());
        assert!(decode_dependencies("[{\"version\":\"1\"}]").is_err());
        assert!(decode_dependencies("[{\"name\":\"a\",\"range\":\"1\"}]").is_err());
    }
}
