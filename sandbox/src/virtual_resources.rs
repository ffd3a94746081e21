//! Resources that are requests, not objects: access reviews (everything is allowed in a
//! sandbox), token reviews, and the POST subresources `eviction`, `token` and `binding`.

use serde_json::{Value, json};

use crate::cluster::{Cluster, DeleteOptions, Target};
use crate::status::{ApiError, ApiResult};

/// A create that is answered, not stored, or `None` for ordinary resources.
pub fn create(_cluster: &Cluster, t: &Target, body: &Value) -> ApiResult<Option<Value>> {
    let mut out = body.clone();
    match (t.def.group.as_str(), t.def.plural.as_str()) {
        ("authorization.k8s.io", "selfsubjectrulesreviews") => {
            out["status"] = json!({
                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                "incomplete": false,
            });
        }
        ("authorization.k8s.io", _) => {
            out["status"] =
                json!({"allowed": true, "reason": "the chartkit sandbox allows every request"});
        }
        ("authentication.k8s.io", "tokenreviews") => {
            out["status"] = json!({"authenticated": true, "user": {"username": "sandbox-admin", "groups": ["system:masters", "system:authenticated"]}});
        }
        ("authentication.k8s.io", "selfsubjectreviews") => {
            out["status"] = json!({"userInfo": {"username": "sandbox-admin", "groups": ["system:masters", "system:authenticated"]}});
        }
        _ => return Ok(None),
    }
    if out.get("metadata").is_none() {
        out["metadata"] = json!({"creationTimestamp": null});
    }
    Ok(Some(out))
}

/// POST to a subresource of one object.
pub fn post_subresource(cluster: &Cluster, t: &Target, body: &Value) -> ApiResult<Value> {
    match (t.def.plural.as_str(), t.subresource.as_str()) {
        ("pods", "eviction") => {
            let pod = Target {
                subresource: String::new(),
                ..t.clone()
            };
            let opts = DeleteOptions {
                grace_period: body["deleteOptions"]["gracePeriodSeconds"].as_i64(),
                ..DeleteOptions::default()
            };
            cluster.delete(&pod, &opts)?;
            Ok(
                json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
            )
        }
        ("serviceaccounts", "token") => {
            let sa = Target {
                subresource: String::new(),
                ..t.clone()
            };
            cluster.get(&sa)?;
            let mut out = body.clone();
            let seconds = body["spec"]["expirationSeconds"].as_i64().unwrap_or(3600);
            let expires = chrono::Utc::now() + chrono::Duration::seconds(seconds);
            out["status"] = json!({
                "token": format!("sandbox-token-{}-{}", t.namespace, t.name),
                "expirationTimestamp": expires.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
            });
            Ok(out)
        }
        ("pods", "binding") => {
            let node = body["target"]["name"].as_str().unwrap_or("").to_string();
            let pod = Target {
                subresource: String::new(),
                ..t.clone()
            };
            cluster.mutate(&pod, "kube-scheduler", |p| {
                p["spec"]["nodeName"] = json!(node);
                true
            })?;
            Ok(
                json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
            )
        }
        _ => Err(ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource",
        )),
    }
}
