//! OpenAPI documents: `/openapi/v3` (the index of group-versions) and one document per
//! group-version with every path, its operations, parameters (kubectl looks for
//! `fieldValidation` on PATCH to decide that the server validates fields) and schemas.

use std::sync::Arc;

use axum::body::Body;
use hyper::Response;
use serde_json::{Map, Value, json};

use super::App;
use crate::resources::ResourceDef;
use crate::status::{ApiError, ApiResult};

/// Documents already built, by group-version and the registry's generation.
#[derive(Default)]
pub struct Cache;

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
    let defs = app.cluster.registry().resources_at(group, version);
    if defs.is_empty() {
        return Err(ApiError::no_route());
    }
    let mut paths = Map::new();
    let mut schemas = Map::new();
    for def in &defs {
        let gvk = json!({"group": def.group, "version": version, "kind": def.kind});
        let schema_name = crate::schema::schema_name(def, version);
        schemas.insert(
            schema_name.clone(),
            crate::schema::openapi_schema(def, version),
        );
        let prefix = format!("/{}", gv_path(group, version));
        let collection = if def.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}", def.plural)
        } else {
            format!("{prefix}/{}", def.plural)
        };
        let item = format!("{collection}/{{name}}");
        let sref = json!({"$ref": format!("#/components/schemas/{schema_name}")});
        let op = |verb: &str, action: &str| -> Value {
            json!({
                "operationId": format!("{verb}{}", def.kind),
                "x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": gvk,
                "parameters": params(action),
                "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": sref}}}},
            })
        };
        let mut item_ops = Map::new();
        if def.allows("get") {
            item_ops.insert("get".into(), op("read", "get"));
        }
        if def.allows("update") {
            let mut put = op("replace", "put");
            put["requestBody"] = json!({"content": {"*/*": {"schema": sref}}, "required": true});
            item_ops.insert("put".into(), put);
        }
        if def.allows("patch") {
            let mut patch = op("patch", "patch");
            let mut content = Map::new();
            let mut types = vec![
                "application/json-patch+json",
                "application/merge-patch+json",
                "application/apply-patch+yaml",
            ];
            if def.custom.is_none() && crate::schema::has_patch_metadata() {
                types.push("application/strategic-merge-patch+json");
            }
            for t in types {
                content.insert(t.into(), json!({"schema": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}}));
            }
            patch["requestBody"] = json!({"content": content, "required": true});
            item_ops.insert("patch".into(), patch);
        }
        if def.allows("delete") {
            item_ops.insert("delete".into(), op("delete", "delete"));
        }
        paths.insert(item, Value::Object(item_ops));
        let mut coll_ops = Map::new();
        if def.allows("list") {
            coll_ops.insert("get".into(), op("list", "list"));
        }
        if def.allows("create") {
            let mut post = op("create", "post");
            post["requestBody"] = json!({"content": {"*/*": {"schema": sref}}, "required": true});
            coll_ops.insert("post".into(), post);
        }
        if def.allows("deletecollection") {
            coll_ops.insert("delete".into(), op("deletecollection", "deletecollection"));
        }
        paths.insert(collection, Value::Object(coll_ops));
    }
    schemas.insert(
        "io.k8s.apimachinery.pkg.apis.meta.v1.Patch".into(),
        json!({"type": "object", "description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body."}),
    );
    Ok(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.34.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }))
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

#[allow(dead_code)]
fn unused(_: &ResourceDef) {}
