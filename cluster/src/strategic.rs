//! The three-way strategic merge of a client-side update (helm 4's `--server-side=false`,
//! kubectl's client-side apply): the live object, changed by what the manifest changed
//! since the previous one, and nothing else.
//!
//! kubectl and helm compute a strategic merge patch and send it; chartkit computes the
//! object that patch would make and writes it with the live object's resourceVersion,
//! which gives the same object without a second implementation of the patch format. The
//! schema comes from the server's OpenAPI v3 (`x-kubernetes-patch-strategy` and
//! `x-kubernetes-patch-merge-key`), so lists of containers, ports, volumes and env
//! variables are merged by key: an element the manifest dropped is removed, one another
//! client added (an injected sidecar) is kept.

use serde_json::{Map, Value};

/// A place in an OpenAPI v3 document: the schema of a value, and the document's
/// `components.schemas` to follow references in.
#[derive(Clone, Copy)]
pub struct SchemaNode<'a> {
    schemas: &'a Map<String, Value>,
    schema: &'a Value,
}

impl<'a> SchemaNode<'a> {
    /// The root type of `kind` in `group`/`version`, found by its
    /// `x-kubernetes-group-version-kind`.
    pub fn root(document: &'a Value, group: &str, version: &str, kind: &str) -> Option<Self> {
        let schemas = document["components"]["schemas"].as_object()?;
        let schema = schemas.values().find(|s| {
            s["x-kubernetes-group-version-kind"]
                .as_array()
                .is_some_and(|gvks| {
                    gvks.iter().any(|g| {
                        g["group"].as_str().unwrap_or("") == group
                            && g["version"] == version
                            && g["kind"] == kind
                    })
                })
        })?;
        Some(SchemaNode { schemas, schema })
    }

    /// The schema with references (`$ref`, or `allOf: [{$ref}]` beside a description)
    /// followed.
    fn resolved(self) -> Self {
        let mut schema = self.schema;
        for _ in 0..8 {
            let reference = schema["$ref"].as_str().or_else(|| {
                schema["allOf"]
                    .as_array()
                    .and_then(|all| all.first())
                    .and_then(|first| first["$ref"].as_str())
            });
            let Some(target) = reference
                .and_then(|r| r.strip_prefix("#/components/schemas/"))
                .and_then(|name| self.schemas.get(name))
            else {
                break;
            };
            schema = target;
        }
        SchemaNode {
            schemas: self.schemas,
            schema,
        }
    }

    fn property(self, name: &str) -> Option<Self> {
        let schema = self.resolved().schema["properties"].get(name)?;
        Some(SchemaNode {
            schemas: self.schemas,
            schema,
        })
    }

    fn items(self) -> Option<Self> {
        let schema = self.resolved().schema.get("items")?;
        Some(SchemaNode {
            schemas: self.schemas,
            schema,
        })
    }

    /// A map's values (`additionalProperties`).
    fn values(self) -> Option<Self> {
        let schema = self.resolved().schema.get("additionalProperties")?;
        schema.is_object().then_some(SchemaNode {
            schemas: self.schemas,
            schema,
        })
    }

    /// How a list field merges: by this key, as a set of primitives, or replaced whole.
    fn list_merge(self) -> ListMerge<'a> {
        let strategy = self.schema["x-kubernetes-patch-strategy"]
            .as_str()
            .unwrap_or("");
        if !strategy.split(',').any(|s| s == "merge") {
            return ListMerge::Replace;
        }
        match self.schema["x-kubernetes-patch-merge-key"].as_str() {
            Some(key) => ListMerge::ByKey(key),
            None => ListMerge::Set,
        }
    }
}

enum ListMerge<'a> {
    Replace,
    ByKey(&'a str),
    Set,
}

/// The live object changed as the manifest changed: fields the new manifest sets take
/// its values (maps merged field by field, lists by their merge key where the schema
/// gives one), fields the previous manifest set and the new one does not are removed, and
/// everything else on the live object (defaults, controllers' and other clients' fields)
/// stays. Without a schema (`None`), maps still merge but lists are replaced whole.
pub fn three_way(
    original: &Value,
    modified: &Value,
    live: &Value,
    schema: Option<SchemaNode<'_>>,
) -> Value {
    match (modified, live) {
        (Value::Object(m), Value::Object(l)) => {
            let empty = Map::new();
            let o = original.as_object().unwrap_or(&empty);
            let mut out = l.clone();
            for (key, new) in m {
                let field = schema.and_then(|s| s.property(key).or_else(|| s.values()));
                let merged = match l.get(key) {
                    Some(old) => merge_field(o.get(key).unwrap_or(&Value::Null), new, old, field),
                    None => new.clone(),
                };
                out.insert(key.clone(), merged);
            }
            for key in o.keys() {
                if !m.contains_key(key) {
                    out.remove(key);
                }
            }
            Value::Object(out)
        }
        _ => modified.clone(),
    }
}

fn merge_field(
    original: &Value,
    modified: &Value,
    live: &Value,
    field: Option<SchemaNode<'_>>,
) -> Value {
    match (modified, live) {
        (Value::Object(_), Value::Object(_)) => three_way(original, modified, live, field),
        (Value::Array(m), Value::Array(l)) => {
            let empty = Vec::new();
            let o = original.as_array().unwrap_or(&empty);
            match field.map(SchemaNode::list_merge) {
                Some(ListMerge::ByKey(key)) => {
                    merge_by_key(o, m, l, key, field.and_then(SchemaNode::items))
                }
                Some(ListMerge::Set) => merge_set(o, m, l),
                _ => modified.clone(),
            }
        }
        _ => modified.clone(),
    }
}

/// The new manifest's elements, each merged with its live twin, and the live elements
/// the manifests never had (added by someone else); elements only the previous manifest
/// had are dropped. The two runs are interleaved as the API server orders a strategic
/// merge: each keeps its own order, and a manifest element goes first only when both it
/// and the next foreign element are live and it is ahead there.
fn merge_by_key(
    original: &[Value],
    modified: &[Value],
    live: &[Value],
    key: &str,
    item: Option<SchemaNode<'_>>,
) -> Value {
    let find = |list: &[Value], k: &Value| list.iter().find(|e| &e[key] == k).cloned();
    let ours: Vec<Value> = modified
        .iter()
        .map(|element| {
            let k = &element[key];
            match find(live, k) {
                Some(twin) if !k.is_null() => {
                    let before = find(original, k).unwrap_or(Value::Null);
                    three_way(&before, element, &twin, item)
                }
                _ => element.clone(),
            }
        })
        .collect();
    let foreign: Vec<Value> = live
        .iter()
        .filter(|element| {
            let k = &element[key];
            !k.is_null()
                && !modified.iter().any(|e| &e[key] == k)
                && !original.iter().any(|e| &e[key] == k)
        })
        .cloned()
        .collect();
    let live_index = |element: &Value| live.iter().position(|e| e[key] == element[key]);
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(ours.len() + foreign.len());
    while i < ours.len() || j < foreign.len() {
        let take_ours = if j >= foreign.len() {
            true
        } else if i >= ours.len() {
            false
        } else {
            matches!(
                (live_index(&ours[i]), live_index(&foreign[j])),
                (Some(a), Some(b)) if a < b
            )
        };
        if take_ours {
            out.push(ours[i].clone());
            i += 1;
        } else {
            out.push(foreign[j].clone());
            j += 1;
        }
    }
    Value::Array(out)
}

/// A set of primitives (finalizers): the new manifest's, plus live ones the manifests
/// never had.
fn merge_set(original: &[Value], modified: &[Value], live: &[Value]) -> Value {
    let mut out: Vec<Value> = modified.to_vec();
    for element in live {
        if !modified.contains(element) && !original.contains(element) {
            out.push(element.clone());
        }
    }
    Value::Array(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn document() -> Value {
        json!({"components": {"schemas": {
            "io.k8s.api.apps.v1.Deployment": {
                "x-kubernetes-group-version-kind": [{"group": "apps", "version": "v1", "kind": "Deployment"}],
                "properties": {"spec": {"allOf": [{"$ref": "#/components/schemas/Spec"}]}},
            },
            "Spec": {"properties": {
                "containers": {"type": "array", "items": {"$ref": "#/components/schemas/Container"},
                    "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name"},
                "finalizers": {"type": "array", "items": {"type": "string"},
                    "x-kubernetes-patch-strategy": "merge"},
                "args": {"type": "array", "items": {"type": "string"}},
            }},
            "Container": {"properties": {
                "ports": {"type": "array", "x-kubernetes-patch-strategy": "merge",
                    "x-kubernetes-patch-merge-key": "containerPort",
                    "items": {"$ref": "#/components/schemas/Port"}},
            }},
            "Port": {"properties": {}},
        }}})
    }

    #[test]
    fn lists_with_a_merge_key_merge_by_it() {
        let doc = document();
        let schema = SchemaNode::root(&doc, "apps", "v1", "Deployment");
        assert!(schema.is_some());
        let original = json!({"spec": {"containers": [
            {"name": "app", "image": "a:1", "ports": [{"containerPort": 80}, {"containerPort": 81}]},
            {"name": "old", "image": "o:1"},
        ]}});
        let modified = json!({"spec": {"containers": [
            {"name": "app", "image": "a:2", "ports": [{"containerPort": 80}]},
        ]}});
        let live = json!({"spec": {"containers": [
            {"name": "sidecar", "image": "mesh:1"},
            {"name": "app", "image": "a:1", "terminationMessagePath": "/dev/termination-log",
             "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 81, "protocol": "TCP"}]},
            {"name": "old", "image": "o:1"},
            {"name": "late", "image": "late:1"},
        ]}, "status": {"replicas": 1}});
        let merged = three_way(&original, &modified, &live, schema);
        assert_eq!(
            merged,
            json!({"spec": {"containers": [
                {"name": "sidecar", "image": "mesh:1"},
                {"name": "app", "image": "a:2", "terminationMessagePath": "/dev/termination-log",
                 "ports": [{"containerPort": 80, "protocol": "TCP"}]},
                {"name": "late", "image": "late:1"},
            ]}, "status": {"replicas": 1}})
        );
    }

    #[test]
    fn sets_keep_foreign_members_and_atomic_lists_are_replaced() {
        let doc = document();
        let schema = SchemaNode::root(&doc, "apps", "v1", "Deployment");
        let original = json!({"spec": {"finalizers": ["a"], "args": ["x", "y"]}});
        let modified = json!({"spec": {"finalizers": ["b"], "args": ["z"]}});
        let live = json!({"spec": {"finalizers": ["a", "theirs"], "args": ["x", "y", "w"]}});
        assert_eq!(
            three_way(&original, &modified, &live, schema),
            json!({"spec": {"finalizers": ["b", "theirs"], "args": ["z"]}})
        );
    }

    #[test]
    fn fields_the_manifest_dropped_are_removed_and_others_kept() {
        let original = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "data": {"k": "v"}});
        let modified = json!({"metadata": {"labels": {"a": "1"}}});
        let live = json!({"metadata": {"labels": {"a": "1", "b": "2", "c": "theirs"},
            "resourceVersion": "7"}, "data": {"k": "v"}});
        assert_eq!(
            three_way(&original, &modified, &live, None),
            json!({"metadata": {"labels": {"a": "1", "c": "theirs"}, "resourceVersion": "7"}})
        );
    }
}
