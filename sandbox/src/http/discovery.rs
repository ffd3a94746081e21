//! Discovery: the legacy documents (`/api`, `/apis`, `/apis/G/V`) and aggregated
//! discovery (`apidiscovery.k8s.io/v2`), which kubectl 1.34 asks for first.

use serde_json::{Value, json};

use crate::resources::{Registry, ResourceDef};

/// The kind, group and version a subresource answers with, and its verbs.
fn subresource_info(def: &ResourceDef, sub: &str) -> (Value, Vec<&'static str>) {
    let same = json!({"group": def.group, "version": def.versions[0], "kind": def.kind});
    let kind = |group: &str, version: &str, kind: &str| json!({"group": group, "version": version, "kind": kind});
    match sub {
        "status" | "ephemeralcontainers" | "resize" | "approval" => {
            (same, vec!["get", "patch", "update"])
        }
        "scale" => (
            kind("autoscaling", "v1", "Scale"),
            vec!["get", "patch", "update"],
        ),
        "log" => (same, vec!["get"]),
        "portforward" => (
            kind("", "v1", "PodPortForwardOptions"),
            vec!["create", "get"],
        ),
        "exec" => (kind("", "v1", "PodExecOptions"), vec!["create", "get"]),
        "attach" => (kind("", "v1", "PodAttachOptions"), vec!["create", "get"]),
        "proxy" => (
            kind("", "v1", &format!("{}ProxyOptions", def.kind)),
            vec!["create", "delete", "get", "patch", "update"],
        ),
        "binding" => (kind("", "v1", "Binding"), vec!["create"]),
        "eviction" => (kind("policy", "v1", "Eviction"), vec!["create"]),
        "finalize" => (same, vec!["update"]),
        "token" => (
            kind("authentication.k8s.io", "v1", "TokenRequest"),
            vec!["create"],
        ),
        _ => (same, vec!["get"]),
    }
}

fn storage_hash(def: &ResourceDef) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    // The hash is of the version objects are stored at: events.k8s.io's events are
    // stored as core events.
    let stored = if def.group == "events.k8s.io" && def.plural == "events" && def.custom.is_none() {
        "/v1/Event".to_string()
    } else {
        format!("{}/{}/{}", def.group, def.versions[0], def.kind)
    };
    let digest = sha2::Sha256::digest(stored);
    base64::engine::general_purpose::STANDARD.encode(&digest[..8])
}

/// `/api` (legacy).
pub fn core_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
}

fn group_entry(registry: &Registry, group: &str) -> Value {
    let versions = registry.group_versions(group);
    let gv = |v: &str| json!({"groupVersion": format!("{group}/{v}"), "version": v});
    json!({
        "name": group,
        "versions": versions.iter().map(|v| gv(v)).collect::<Vec<_>>(),
        "preferredVersion": gv(&versions[0]),
    })
}

/// `/apis` (legacy).
pub fn groups(registry: &Registry) -> Value {
    let groups: Vec<Value> = registry
        .groups()
        .iter()
        .filter(|g| !g.is_empty() && !registry.group_versions(g).is_empty())
        .map(|g| group_entry(registry, g))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/GROUP` (legacy), if the group is served.
pub fn group(registry: &Registry, group: &str) -> Option<Value> {
    if group.is_empty() || registry.group_versions(group).is_empty() {
        return None;
    }
    let mut entry = group_entry(registry, group);
    entry["kind"] = json!("APIGroup");
    entry["apiVersion"] = json!("v1");
    Some(entry)
}

/// `/api/v1` or `/apis/GROUP/VERSION` (legacy), if served.
pub fn resource_list(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    let defs = registry.resources_at(group, version);
    if defs.is_empty() {
        return None;
    }
    let mut resources = Vec::new();
    for def in &defs {
        let mut r = json!({
            "name": def.plural,
            "singularName": def.singular,
            "namespaced": def.namespaced,
            "kind": def.kind,
            "verbs": def.verbs,
        });
        if !def.short_names.is_empty() {
            r["shortNames"] = json!(def.short_names);
        }
        if !def.categories.is_empty() {
            r["categories"] = json!(def.categories);
        }
        r["storageVersionHash"] = json!(storage_hash(def));
        resources.push(r);
        for sub in subresources_at(def, version) {
            let (kind, verbs) = subresource_info(def, &sub);
            let mut s = json!({
                "name": format!("{}/{sub}", def.plural),
                "singularName": "",
                "namespaced": def.namespaced,
                "kind": kind["kind"],
                "verbs": verbs,
            });
            if kind["group"] != def.group.as_str() || kind["version"] != version {
                s["group"] = kind["group"].clone();
                s["version"] = kind["version"].clone();
            }
            resources.push(s);
        }
    }
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }))
}

fn subresources_at(def: &ResourceDef, version: &str) -> Vec<String> {
    match &def.custom {
        None => def.subresources.clone(),
        Some(c) => {
            let mut subs = Vec::new();
            if c.status.iter().any(|v| v == version) {
                subs.push("status".to_string());
            }
            if c.scale.contains_key(version) {
                subs.push("scale".to_string());
            }
            subs
        }
    }
}

/// Aggregated discovery for the core group (`/api`) or every other group (`/apis`).
pub fn aggregated(registry: &Registry, core: bool) -> Value {
    let groups: Vec<String> = registry
        .groups()
        .into_iter()
        .filter(|g| g.is_empty() == core && !registry.group_versions(g).is_empty())
        .collect();
    let items: Vec<Value> = groups
        .iter()
        .map(|group| {
            let versions: Vec<Value> = registry
                .group_versions(group)
                .iter()
                .map(|version| {
                    let resources: Vec<Value> = registry
                        .resources_at(group, version)
                        .iter()
                        .map(|def| {
                            let mut r = json!({
                                "resource": def.plural,
                                "responseKind": {"group": def.group, "version": version, "kind": def.kind},
                                "scope": if def.namespaced { "Namespaced" } else { "Cluster" },
                                "singularResource": def.singular,
                                "verbs": def.verbs,
                            });
                            if !def.short_names.is_empty() {
                                r["shortNames"] = json!(def.short_names);
                            }
                            if !def.categories.is_empty() {
                                r["categories"] = json!(def.categories);
                            }
                            let subs: Vec<Value> = subresources_at(def, version)
                                .iter()
                                .map(|sub| {
                                    let (kind, verbs) = subresource_info(def, sub);
                                    json!({"subresource": sub, "responseKind": kind, "verbs": verbs})
                                })
                                .collect();
                            if !subs.is_empty() {
                                r["subresources"] = Value::Array(subs);
                            }
                            r
                        })
                        .collect();
                    json!({"version": version, "resources": resources, "freshness": "Current"})
                })
                .collect();
            let mut metadata = json!({"creationTimestamp": null});
            if !group.is_empty() {
                metadata["name"] = json!(group);
            }
            json!({"metadata": metadata, "versions": versions})
        })
        .collect();
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

/// Whether an Accept header asks for aggregated discovery.
pub fn wants_aggregated(accept: &str) -> bool {
    accept.split(',').any(|part| {
        let p = part.replace(' ', "");
        p.contains("as=APIGroupDiscoveryList")
            && p.contains("g=apidiscovery.k8s.io")
            && p.contains("v=v2")
            && !p.contains("v=v2beta1")
    })
}

/// An aggregated discovery document as the API server serves it: with an ETag (the
/// SHA-512 of the document) clients revalidate their caches with, and `304 Not
/// Modified` when the client's copy is current.
pub fn aggregated_response(
    doc: &Value,
    request_headers: &hyper::HeaderMap,
) -> hyper::Response<axum::body::Body> {
    use sha2::Digest as _;
    let body = serde_json::to_vec(doc).expect("JSON serialises");
    let etag = format!("\"{}\"", hex::encode_upper(sha2::Sha512::digest(&body)));
    let matches = request_headers
        .get("if-none-match")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == etag);
    let builder = hyper::Response::builder()
        .header("etag", &etag)
        .header("vary", "Accept")
        .header("cache-control", "public");
    if matches {
        return builder
            .status(304)
            .body(axum::body::Body::empty())
            .expect("a valid response");
    }
    builder
        .status(200)
        .header("content-type", AGGREGATED_CONTENT_TYPE)
        .body(axum::body::Body::from(body))
        .expect("a valid response")
}

pub const AGGREGATED_CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_version_hashes_are_the_api_servers() {
        let r = Registry::with_builtins();
        let hash = |g: &str, p: &str| storage_hash(&r.by_key(&format!("{g}/{p}")).unwrap());
        assert_eq!(hash("", "pods"), "xPOwRZ+Yhw8=");
        assert_eq!(hash("apps", "deployments"), "8aSe+NMegvE=");
        assert_eq!(hash("", "events"), "r2yiGXH7wu8=");
        assert_eq!(hash("events.k8s.io", "events"), "r2yiGXH7wu8=");
    }
}
