//! Rendered manifests as objects: splitting a multi-document YAML stream (what
//! `chartkit template` prints, with `# Source:` comments). Helm's install and uninstall
//! orders of kinds live with the renderer (`chartkit_render::kind_order`,
//! `uninstall_kind_order`), which sorts the same kinds when it renders.

use serde_json::Value;

/// One object of a manifest stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    /// The template it came from (`# Source: chart/templates/x.yaml`), when the document
    /// says.
    pub source: Option<String>,
    /// The object as JSON, keys in the document's order.
    pub value: Value,
}

impl Object {
    pub fn api_version(&self) -> &str {
        self.value["apiVersion"].as_str().unwrap_or("")
    }

    pub fn kind(&self) -> &str {
        self.value["kind"].as_str().unwrap_or("")
    }

    pub fn name(&self) -> &str {
        self.value["metadata"]["name"].as_str().unwrap_or("")
    }

    /// The namespace written in the object, if any.
    pub fn namespace(&self) -> Option<&str> {
        self.value["metadata"]["namespace"]
            .as_str()
            .filter(|n| !n.is_empty())
    }

    /// `Kind/name`, as kubectl and helm name objects in messages.
    pub fn describe(&self) -> String {
        format!("{}/{}", self.kind(), self.name())
    }
}

/// Why a manifest stream could not be split into objects.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("{}document {index}: {message}", source_prefix(template))]
    Parse {
        index: usize,
        template: Option<String>,
        message: String,
    },
    #[error(
        "{}document {index}: a Kubernetes object must be a map with apiVersion, kind and \
         metadata.name; {problem}",
        source_prefix(template)
    )]
    NotAnObject {
        index: usize,
        template: Option<String>,
        problem: String,
    },
}

fn source_prefix(source: &Option<String>) -> String {
    source
        .as_ref()
        .map(|s| format!("{s}: "))
        .unwrap_or_default()
}

/// Splits a YAML stream into objects. Empty documents (a template that rendered nothing)
/// are skipped; a `List` (`kind: List` or `*List` with `items`) is flattened into its
/// items, as kubectl and helm's resource builder do.
pub fn split(text: &str) -> Result<Vec<Object>, ManifestError> {
    let mut objects = Vec::new();
    for (index, doc) in documents(text).into_iter().enumerate() {
        let index = index + 1;
        let source = source_comment(doc);
        let nodes = chartkit_yaml::parse_documents(doc).map_err(|e| ManifestError::Parse {
            index,
            template: source.clone(),
            message: e.to_string(),
        })?;
        for node in nodes {
            let value = to_json(&node).map_err(|message| ManifestError::Parse {
                index,
                template: source.clone(),
                message,
            })?;
            if value.is_null() {
                continue;
            }
            let not_object = |problem: &str| ManifestError::NotAnObject {
                index,
                template: source.clone(),
                problem: problem.to_string(),
            };
            if !value.is_object() {
                return Err(not_object("this one is not a map"));
            }
            let kind = value["kind"].as_str().unwrap_or("");
            if kind.ends_with("List") && value["items"].is_array() {
                let Value::Array(items) = value["items"].clone() else {
                    unreachable!("checked to be an array")
                };
                for item in items {
                    check_object(&item).map_err(|p| not_object(&p))?;
                    objects.push(Object {
                        source: source.clone(),
                        value: item,
                    });
                }
                continue;
            }
            check_object(&value).map_err(|p| not_object(&p))?;
            objects.push(Object {
                source: source.clone(),
                value,
            });
        }
    }
    Ok(objects)
}

fn check_object(value: &Value) -> Result<(), String> {
    if !value.is_object() {
        return Err("a list item is not a map".to_string());
    }
    for (field, present) in [
        (
            "apiVersion",
            value["apiVersion"].as_str().is_some_and(|s| !s.is_empty()),
        ),
        (
            "kind",
            value["kind"].as_str().is_some_and(|s| !s.is_empty()),
        ),
    ] {
        if !present {
            return Err(format!("`{field}` is missing"));
        }
    }
    let meta = &value["metadata"];
    let named = meta["name"].as_str().is_some_and(|s| !s.is_empty())
        || meta["generateName"].as_str().is_some_and(|s| !s.is_empty());
    if !named {
        return Err(format!(
            "{} has no `metadata.name`",
            value["kind"].as_str().unwrap_or("")
        ));
    }
    Ok(())
}

/// The documents of a stream, split at `---` lines as helm's SplitManifests does
/// (a line starting with `---`; what follows on it is part of the next document).
fn documents(text: &str) -> Vec<&str> {
    let mut docs = Vec::new();
    let mut start = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("---") {
            docs.push(&text[start..offset]);
            // `---` may be followed by spaces and then content on the same line.
            let skip = 3 + (rest.len() - rest.trim_start_matches([' ', '\t']).len());
            start = offset + skip;
        }
        offset += line.len();
    }
    docs.push(&text[start..]);
    docs.into_iter().filter(|d| !d.trim().is_empty()).collect()
}

/// The path of the first `# Source: PATH` comment of a document.
fn source_comment(doc: &str) -> Option<String> {
    doc.lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("# Source:"))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// A YAML node as the JSON `sigs.k8s.io/yaml` would make of it: integers stay integers
/// (typed Kubernetes fields need them), keys become strings.
fn to_json(node: &chartkit_yaml::Node) -> Result<Value, String> {
    use chartkit_yaml::NodeKind;
    Ok(match &node.kind {
        NodeKind::Null => Value::Null,
        NodeKind::Bool(b) => Value::Bool(*b),
        NodeKind::Int(i) => Value::from(*i),
        NodeKind::Uint(u) => Value::from(*u),
        NodeKind::Float(f) => serde_json::Number::from_f64(*f)
            .map(Value::Number)
            .ok_or_else(|| {
                format!(
                    "line {}: infinity and NaN cannot be represented in JSON",
                    node.line
                )
            })?,
        NodeKind::Str(s) => Value::String(s.clone()),
        NodeKind::Seq(items) => Value::Array(
            items
                .iter()
                .map(|item| chartkit_yaml::with_stack(|| to_json(item)))
                .collect::<Result<_, _>>()?,
        ),
        NodeKind::Map(pairs) => {
            let mut map = serde_json::Map::new();
            for (key, value) in pairs {
                let name = key.as_map_key().ok_or_else(|| {
                    format!(
                        "line {}: a map key must be a string, number or boolean, found {}",
                        key.line,
                        key.kind_name()
                    )
                })?;
                map.insert(name, chartkit_yaml::with_stack(|| to_json(value))?);
            }
            Value::Object(map)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RENDERED: &str = "---
# Source: web/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - port: 80
---
# Source: web/templates/empty.yaml
---
# Source: web/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {on: yes}
spec:
  replicas: 2
---apiVersion: v1
kind: ConfigMap
metadata: {name: glued}
";

    #[test]
    fn documents_split_with_their_sources() {
        let objects = split(RENDERED).unwrap();
        let names: Vec<_> = objects
            .iter()
            .map(|o| (o.describe(), o.source.clone()))
            .collect();
        assert_eq!(
            names,
            [
                (
                    "Service/web".to_string(),
                    Some("web/templates/service.yaml".to_string())
                ),
                (
                    "Deployment/web".to_string(),
                    Some("web/templates/deployment.yaml".to_string())
                ),
                ("ConfigMap/glued".to_string(), None),
            ]
        );
        // Integers stay integers; YAML 1.1 booleans are what helm reads.
        assert_eq!(objects[1].value["spec"]["replicas"], serde_json::json!(2));
        assert_eq!(objects[1].value["metadata"]["labels"]["true"], true);
        assert_eq!(objects[0].value["spec"]["ports"][0]["port"], 80);
    }

    #[test]
    fn lists_are_flattened() {
        let objects = split(
            "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n\
             - {apiVersion: v1, kind: Secret, metadata: {name: b}}\n",
        )
        .unwrap();
        assert_eq!(objects.len(), 2);
        assert_eq!(objects[1].describe(), "Secret/b");
    }

    #[test]
    fn objects_without_identity_are_refused_with_their_source() {
        let error = split("# Source: c/templates/x.yaml\nkind: ConfigMap\nmetadata: {name: a}\n")
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("c/templates/x.yaml: document 1"),
            "{error}"
        );
        assert!(error.contains("`apiVersion` is missing"), "{error}");
        let error = split("apiVersion: v1\nkind: ConfigMap\n")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("ConfigMap has no `metadata.name`"),
            "{error}"
        );
        let error = split("- a\n").unwrap_err().to_string();
        assert!(error.contains("not a map"), "{error}");
        let error = split("a: [\n").unwrap_err().to_string();
        assert!(error.starts_with("document 1: "), "{error}");
    }
}
