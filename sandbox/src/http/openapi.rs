//! OpenAPI documents: `/openapi/v3` (the index of group-versions) and one document per
//! group-version with every path, its operations, parameters (kubectl looks for
//! `fieldValidation` on PATCH to decide that the server validates fields) and schemas.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use hyper::Response;
use serde_json::{Map, Value, json};

use super::App;
use crate::resources::ResourceDef;
use crate::status::{ApiError, ApiResult};

/// Documents already built, by group-version, with the hash of what they were built from.
#[derive(Default)]
pub struct Cache {
    docs: Mutex<HashMap<String, (String, Arc<Value>)>>,
}

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

fn gv_hash(app: &App, group: &str, version: &str) -> String {
    use sha2::Digest as _;
    let names: Vec<String> = app
        .cluster
        .registry()
        .resources_at(group, version)
        .iter()
        .map(|d| {
            format!(
                "{}:{:?}",
                d.plural,
                d.custom
                    .as_ref()
                    .map(|c| c.schemas.get(version).map(Value::to_string))
            )
        })
        .collect();
    let digest = sha2::Sha256::digest(names.join(",").as_bytes());
    hex::encode(digest).to_uppercase()[..32].to_string()
}

/// `/openapi/v3`.
pub fn v3_root(app: &App) -> Value {
    let registry = app.cluster.registry();
    let mut paths = Map::new();
    for group in registry.groups() {
        for version in registry.group_versions(&group) {
            let p = gv_path(&group, &version);
            let hash = gv_hash(app, &group, &version);
            paths.insert(
                p.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash={hash}")}),
            );
        }
    }
    json!({ "paths": paths })
}

/// `/openapi/v2`: not served (clients use v3, which every supported kubectl and helm
/// prefers).
pub fn v2(_app: &Arc<App>, _accept: &str) -> ApiResult<Response<Body>> {
    Err(ApiError::no_route())
}

/// `/openapi/v3/api/v1`, `/openapi/v3/apis/G/V`.
pub fn v3(app: &App, group: &str, version: &str) -> ApiResult<Value> {
    let key = gv_path(group, version);
    let hash = gv_hash(app, group, version);
    if let Some((h, doc)) = app
        .openapi
        .docs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
        && *h == hash
    {
        return Ok((**doc).clone());
    }
    let doc = build_v3(app, group, version)?;
    app.openapi
        .docs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, (hash, Arc::new(doc.clone())));
    Ok(doc)
}

const PATCH_SCHEMA: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";

fn reference(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn build_v3(app: &App, group: &str, version: &str) -> ApiResult<Value> {
    let defs = app.cluster.registry().resources_at(group, version);
    if defs.is_empty() {
        return Err(ApiError::no_route());
    }
    let mut paths = Map::new();
    let mut schemas = Map::new();
    // Where the references of each schema resolve (a built-in type's own definitions).
    let mut sources: Vec<&'static Map<String, Value>> = vec![crate::schema::meta_definitions()];
    for name in [STATUS, DELETE_OPTIONS, LIST_META] {
        if let Some(d) = crate::schema::definitions_for(name) {
            sources.push(d);
        }
    }
    for def in &defs {
        let gvk = json!({"group": def.group, "version": version, "kind": def.kind});
        let schema_name = crate::schema::schema_name(def, version);
        if def.custom.is_none()
            && let Some(d) = crate::schema::definitions_for(&schema_name)
        {
            sources.push(d);
        }
        schemas.insert(
            schema_name.clone(),
            crate::schema::openapi_schema(def, version),
        );
        let list_name = format!("{schema_name}List");
        schemas.insert(list_name.clone(), list_schema(def, version, &schema_name));
        let prefix = format!("/{}", gv_path(group, version));
        let collection = if def.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}", def.plural)
        } else {
            format!("{prefix}/{}", def.plural)
        };
        let item = format!("{collection}/{{name}}");
        let op = |verb: &str, action: &str, response: &str| -> Value {
            json!({
                "operationId": format!("{verb}{}", def.kind),
                "x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": gvk,
                "parameters": params(action),
                "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": reference(response)}}}},
            })
        };
        let mut item_ops = Map::new();
        if def.allows("get") {
            item_ops.insert("get".into(), op("read", "get", &schema_name));
        }
        if def.allows("update") {
            let mut put = op("replace", "put", &schema_name);
            put["requestBody"] =
                json!({"content": {"*/*": {"schema": reference(&schema_name)}}, "required": true});
            item_ops.insert("put".into(), put);
        }
        if def.allows("patch") {
            let mut patch = op("patch", "patch", &schema_name);
            let mut content = Map::new();
            let mut types = vec![
                "application/apply-patch+yaml",
                "application/json-patch+json",
                "application/merge-patch+json",
            ];
            if def.custom.is_none() && crate::schema::has_patch_metadata() {
                types.push("application/strategic-merge-patch+json");
            }
            for t in types {
                content.insert(t.into(), json!({"schema": reference(PATCH_SCHEMA)}));
            }
            patch["requestBody"] = json!({"content": content, "required": true});
            item_ops.insert("patch".into(), patch);
        }
        if def.allows("delete") {
            item_ops.insert("delete".into(), op("delete", "delete", STATUS));
        }
        paths.insert(item, Value::Object(item_ops));
        let mut coll_ops = Map::new();
        if def.allows("list") {
            coll_ops.insert("get".into(), op("list", "list", &list_name));
        }
        if def.allows("create") {
            let mut post = op("create", "post", &schema_name);
            post["requestBody"] =
                json!({"content": {"*/*": {"schema": reference(&schema_name)}}, "required": true});
            coll_ops.insert("post".into(), post);
        }
        if def.allows("deletecollection") {
            coll_ops.insert(
                "delete".into(),
                op("deletecollection", "deletecollection", STATUS),
            );
        }
        paths.insert(collection, Value::Object(coll_ops));
    }
    schemas.insert(
        PATCH_SCHEMA.into(),
        json!({"type": "object", "description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body."}),
    );
    for name in [STATUS, DELETE_OPTIONS] {
        if let Some(s) = sources.iter().find_map(|d| d.get(name)) {
            schemas.insert(name.into(), s.clone());
        }
    }
    add_referenced(&mut schemas, &sources);
    Ok(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.34.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}

/// A type's list, as the API server describes it.
fn list_schema(def: &ResourceDef, version: &str, item: &str) -> Value {
    json!({
        "description": format!("{}List is a list of {}", def.kind, def.kind),
        "type": "object",
        "properties": {
            "apiVersion": {"description": "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources", "type": "string"},
            "items": {"description": format!("List of {}.", def.plural), "type": "array", "items": {"allOf": [reference(item)], "default": {}}},
            "kind": {"description": "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds", "type": "string"},
            "metadata": {"allOf": [reference(LIST_META)], "default": {}, "description": "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"},
        },
        "required": ["items"],
        "x-kubernetes-group-version-kind": [{"group": def.group, "version": version, "kind": format!("{}List", def.kind)}],
    })
}

/// Adds every definition the schemas refer to, transitively.
fn add_referenced(schemas: &mut Map<String, Value>, sources: &[&'static Map<String, Value>]) {
    let mut pending: Vec<String> = Vec::new();
    for s in schemas.values() {
        collect_refs(s, &mut pending);
    }
    pending.push(LIST_META.into());
    while let Some(name) = pending.pop() {
        if schemas.contains_key(&name) {
            continue;
        }
        let Some(schema) = sources.iter().find_map(|d| d.get(&name)) else {
            continue;
        };
        collect_refs(schema, &mut pending);
        schemas.insert(name, schema.clone());
    }
    schemas.sort_keys();
}

fn collect_refs(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(m) => {
            if let Some(r) = m.get("$ref").and_then(Value::as_str)
                && let Some(name) = r.strip_prefix("#/components/schemas/")
            {
                out.push(name.to_string());
            }
            for v in m.values() {
                collect_refs(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

fn params(action: &str) -> Value {
    let q = |name: &str| json!({"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": true}});
    let mut list = vec![q("pretty")];
    match action {
        "post" | "put" | "patch" => {
            list.push(q("dryRun"));
            list.push(q("fieldManager"));
            list.push(q("fieldValidation"));
            if action == "patch" {
                list.push(json!({"name": "force", "in": "query", "schema": {"type": "boolean", "uniqueItems": true}}));
            }
        }
        "list" => {
            for n in [
                "allowWatchBookmarks",
                "continue",
                "fieldSelector",
                "labelSelector",
                "limit",
                "resourceVersion",
                "resourceVersionMatch",
                "sendInitialEvents",
                "timeoutSeconds",
                "watch",
            ] {
                list.push(q(n));
            }
        }
        "delete" | "deletecollection" => {
            for n in ["dryRun", "gracePeriodSeconds", "propagationPolicy"] {
                list.push(q(n));
            }
        }
        _ => {}
    }
    Value::Array(list)
}
