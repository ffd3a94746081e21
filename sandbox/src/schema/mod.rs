//! What the API knows of each type's fields: their structure (for strategic merge
//! patch, managed fields and server-side apply), unknown fields (reported or refused by
//! `fieldValidation`), pruning of custom resources, and the OpenAPI schemas served.
//!
//! Built-in types come from k8s-openapi's schemas completed with [`facts`]; custom
//! resources from their CustomResourceDefinition's `openAPIV3Schema`. The built-in
//! definitions are built on first need (a few milliseconds) rather than at start.

mod builtin;
pub mod decode;
pub mod facts;
mod node;

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{Map, Value, json};

pub use node::{Atom, ListKind, Node};

use crate::resources::ResourceDef;

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// The OpenAPI v3 component schemas a built-in definition reaches (itself included), by
/// definition name; built on first need.
pub fn definitions_for(name: &str) -> Option<&'static Map<String, Value>> {
    builtin::for_root(name)
}

/// The definitions ObjectMeta reaches: what custom resources' metadata resolves in.
pub fn meta_definitions() -> &'static Map<String, Value> {
    static EMPTY: OnceLock<Map<String, Value>> = OnceLock::new();
    definitions_for(OBJECT_META).unwrap_or_else(|| EMPTY.get_or_init(Map::new))
}

/// The schema of a served type at a version: a custom resource's structural schema, or
/// the built-in definition. `None` for a custom resource with no schema.
pub fn type_for<'a>(def: &'a ResourceDef, version: &str) -> Option<Node<'a>> {
    match &def.custom {
        Some(custom) => {
            let schema = custom.schemas.get(version)?;
            Some(Node::root(schema, None, meta_definitions()))
        }
        None => {
            let name = schema_name(def, version);
            let defs = definitions_for(&name)?;
            let (key, schema) = defs.get_key_value(&name)?;
            Some(Node::root(schema, Some(key.as_str()), defs))
        }
    }
}

/// The built-in type a write to a resource, its status or its scale decodes into; `None`
/// for custom resources (unstructured objects) and other subresources.
pub fn decoded_type<'a>(
    def: &'a ResourceDef,
    version: &str,
    subresource: &str,
) -> Option<Node<'a>> {
    const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";
    match subresource {
        "scale" => {
            let defs = definitions_for(SCALE)?;
            let (key, schema) = defs.get_key_value(SCALE)?;
            Some(Node::root(schema, Some(key.as_str()), defs))
        }
        "" | "status" if def.custom.is_none() => type_for(def, version),
        _ => None,
    }
}

/// A node of no declared type (for objects with no schema).
pub fn untyped<'a>() -> Node<'a> {
    Node::deduced(meta_definitions())
}

/// The object a create starts from (a Go type's zero value, as the API server's field
/// manager sees it), for telling which fields a create added.
pub fn zero_object(node: &Node<'_>) -> Value {
    static INDEX: OnceLock<HashMap<&'static str, Vec<(&'static str, &'static str)>>> =
        OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let mut index: HashMap<&str, Vec<(&str, &str)>> = HashMap::new();
        for (def, field, zero) in facts::ZERO_FIELDS {
            index.entry(def).or_default().push((field, zero));
        }
        index
    });
    fn fill(node: &Node<'_>, index: &HashMap<&str, Vec<(&str, &str)>>, depth: usize) -> Value {
        let mut out = Map::new();
        let Some(fields) = node.definition().and_then(|d| index.get(d)) else {
            return Value::Object(out);
        };
        for (field, zero) in fields {
            let value = match *zero {
                "{}" => match node.field(field) {
                    Some(child) if depth < 16 => fill(&child, index, depth + 1),
                    _ => json!({}),
                },
                other => serde_json::from_str(other).unwrap_or(Value::Null),
            };
            out.insert(field.to_string(), value);
        }
        Value::Object(out)
    }
    fill(node, index, 0)
}

/// Paths of fields in `object` the type's schema does not know (`spec.replicaz`,
/// `spec.template.spec.containers[0].imagePolicy`), in the order they appear.
pub fn unknown_fields(def: &ResourceDef, version: &str, object: &Value) -> Vec<String> {
    let Some(node) = type_for(def, version) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut copy = object.clone();
    walk_unknown(&node, &mut copy, &mut String::new(), &mut found, false);
    found
}

/// Drops the fields the schema does not know (a custom resource's pruning, and what
/// decoding into a built-in type does).
pub fn prune_unknown(def: &ResourceDef, version: &str, object: &mut Value) {
    if let Some(node) = type_for(def, version) {
        walk_unknown(&node, object, &mut String::new(), &mut Vec::new(), true);
    }
}

fn walk_unknown(
    node: &Node<'_>,
    value: &mut Value,
    path: &mut String,
    found: &mut Vec<String>,
    prune: bool,
) {
    match value {
        Value::Object(map) => {
            if node.atom(None) == Atom::Scalar || node.is_deduced() {
                return;
            }
            let mut unknown = Vec::new();
            for (key, child) in map.iter_mut() {
                let at = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                match node.child(key) {
                    Some(next) => walk_unknown(&next, child, path, found, prune),
                    None => {
                        found.push(path.clone());
                        unknown.push(key.clone());
                    }
                }
                path.truncate(at);
            }
            if prune {
                for key in unknown {
                    map.shift_remove(&key);
                }
            }
        }
        Value::Array(items) => {
            if node.atom(None) != Atom::List {
                return;
            }
            let item_node = node.items();
            for (i, item) in items.iter_mut().enumerate() {
                let at = path.len();
                path.push_str(&format!("[{i}]"));
                walk_unknown(&item_node, item, path, found, prune);
                path.truncate(at);
            }
        }
        _ => {}
    }
}

/// The name of a type's schema in OpenAPI documents (`io.k8s.api.apps.v1.Deployment`).
pub fn schema_name(def: &ResourceDef, version: &str) -> String {
    if def.custom.is_some() {
        let reversed: Vec<&str> = def.group.split('.').rev().collect();
        return format!("{}.{version}.{}", reversed.join("."), def.kind);
    }
    let package = match def.group.as_str() {
        "" => "core".to_string(),
        g => g.split('.').next().unwrap_or(g).to_string(),
    };
    let root = match def.group.as_str() {
        "apiextensions.k8s.io" => "io.k8s.apiextensions-apiserver.pkg.apis",
        "apiregistration.k8s.io" => "io.k8s.kube-aggregator.pkg.apis",
        _ => "io.k8s.api",
    };
    format!("{root}.{package}.{version}.{}", def.kind)
}

/// A type's OpenAPI schema, with the group-version-kind extension clients look for.
pub fn openapi_schema(def: &ResourceDef, version: &str) -> Value {
    let mut schema = match &def.custom {
        Some(c) => match c.schemas.get(version) {
            Some(s) => custom_resource_schema(s),
            None => json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
        },
        None => definitions_for(&schema_name(def, version))
            .and_then(|defs| defs.get(&schema_name(def, version)))
            .cloned()
            .unwrap_or_else(|| json!({"type": "object"})),
    };
    schema["x-kubernetes-group-version-kind"] = json!([
        {"group": def.group, "version": version, "kind": def.kind}
    ]);
    schema
}

/// A custom resource's schema as the API server publishes it: apiVersion, kind and
/// metadata (an ObjectMeta) filled in at the root.
fn custom_resource_schema(schema: &Value) -> Value {
    let mut out = schema.clone();
    if !out.is_object() {
        return out;
    }
    let props = out
        .as_object_mut()
        .expect("checked")
        .entry("properties")
        .or_insert_with(|| json!({}));
    if let Some(props) = props.as_object_mut() {
        props.insert(
            "apiVersion".into(),
            json!({"description": "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources", "type": "string"}),
        );
        props.insert(
            "kind".into(),
            json!({"description": "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds", "type": "string"}),
        );
        props.insert(
            "metadata".into(),
            json!({"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}], "description": "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"}),
        );
    }
    out
}

/// Whether the built-in schemas carry the strategic merge metadata (merge keys and
/// strategies) kubectl needs to compute a patch from them.
pub fn has_patch_metadata() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::Registry;

    fn def(group: &str, plural: &str) -> std::sync::Arc<ResourceDef> {
        Registry::with_builtins()
            .by_key(&format!("{group}/{plural}"))
            .unwrap()
    }

    #[test]
    fn every_builtin_type_has_a_schema() {
        let registry = Registry::with_builtins();
        let missing: Vec<String> = registry
            .all()
            .iter()
            .flat_map(|d| d.versions.iter().map(move |v| (d, v)))
            .filter(|(d, v)| type_for(d, v).is_none())
            .map(|(d, v)| schema_name(d, v))
            .collect();
        assert!(missing.is_empty(), "{missing:?}");
    }

    #[test]
    fn unknown_fields_are_found_with_their_paths() {
        let deploy = def("apps", "deployments");
        let object = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "a", "labels": {"x": "y"}, "bogus": 1},
            "spec": {"replicaz": 2, "template": {"spec": {"containers": [{"name": "c", "imagePolicy": "x"}]}}},
        });
        assert_eq!(
            unknown_fields(&deploy, "v1", &object),
            [
                "metadata.bogus",
                "spec.replicaz",
                "spec.template.spec.containers[0].imagePolicy"
            ]
        );
    }

    #[test]
    fn node_reads_list_kinds_and_keys() {
        let pods = def("", "pods");
        let pod = type_for(&pods, "v1").unwrap();
        let spec = pod.field("spec").unwrap();
        assert_eq!(spec.atom(None), Atom::Map);
        let containers = spec.field("containers").unwrap();
        assert_eq!(containers.list_kind(), ListKind::Keyed(vec!["name"]));
        let ports = containers.items().field("ports").unwrap();
        assert_eq!(
            ports.list_kind(),
            ListKind::Keyed(vec!["containerPort", "protocol"])
        );
        assert_eq!(ports.items().default_of("protocol"), Some(&json!("TCP")));
        assert_eq!(
            spec.field("tolerations").unwrap().list_kind(),
            ListKind::Atomic
        );
        let meta = pod.field("metadata").unwrap();
        assert_eq!(meta.field("finalizers").unwrap().list_kind(), ListKind::Set);
        assert!(meta.field("labels").unwrap().element().is_some());
        assert!(spec.field("nodeSelector").unwrap().map_atomic());
        let zero = zero_object(&pod);
        assert_eq!(zero["spec"]["containers"], Value::Null);
        assert_eq!(zero["metadata"]["creationTimestamp"], Value::Null);
    }

    #[test]
    fn one_type_builds_alone() {
        // The types the sandbox seeds at start are all it builds then.
        let start = std::time::Instant::now();
        let mut n = 0;
        for kind in ["core.v1.Namespace", "core.v1.Node", "core.v1.Service"] {
            n += definitions_for(&format!("io.k8s.api.{kind}"))
                .unwrap()
                .len();
        }
        for kind in ["storage.v1.StorageClass", "scheduling.v1.PriorityClass"] {
            n += definitions_for(&format!("io.k8s.api.{kind}"))
                .unwrap()
                .len();
        }
        eprintln!("seeded types: {n} definitions in {:?}", start.elapsed());
        let ns = definitions_for("io.k8s.api.core.v1.Namespace").unwrap();
        assert!(ns.contains_key(OBJECT_META));
        assert!(builtin::root_names().count() > 60);
    }

    #[test]
    fn building_the_definitions_is_quick() {
        let start = std::time::Instant::now();
        let n = builtin::build_all().len();
        eprintln!("{n} definitions in {:?}", start.elapsed());
        assert!(n > 300);
    }
}
