//! The `scale` subresource: an `autoscaling/v1` Scale view of a workload's replicas.

use serde_json::{Value, json};

use crate::resources::ResourceDef;
use crate::status::{ApiError, ApiResult};

pub fn scale_api_version(_def: &ResourceDef) -> String {
    "autoscaling/v1".to_string()
}

/// JSON paths of spec.replicas, status.replicas and the selector for `def`.
fn paths(def: &ResourceDef, version: &str) -> (Vec<String>, Vec<String>, Option<Vec<String>>) {
    let split = |p: &str| -> Vec<String> {
        p.trim_start_matches('.')
            .split('.')
            .map(String::from)
            .collect()
    };
    if let Some(custom) = &def.custom
        && let Some(s) = custom.scale.get(version)
    {
        return (
            split(s["specReplicasPath"].as_str().unwrap_or(".spec.replicas")),
            split(
                s["statusReplicasPath"]
                    .as_str()
                    .unwrap_or(".status.replicas"),
            ),
            s["labelSelectorPath"].as_str().map(split),
        );
    }
    (split("spec.replicas"), split("status.replicas"), None)
}

fn at<'a>(v: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, p| v.get(p))
}

/// The Scale object for a workload.
pub fn to_scale(def: &ResourceDef, object: &Value) -> Value {
    let version =
        crate::resources::split_api_version(object["apiVersion"].as_str().unwrap_or("")).1;
    let (spec, status, selector_path) = paths(def, version);
    let selector = match selector_path {
        Some(p) => at(object, &p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        None => selector_text(&object["spec"]["selector"]),
    };
    let m = &object["metadata"];
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": m["name"],
            "namespace": m["namespace"],
            "uid": m["uid"],
            "resourceVersion": m["resourceVersion"],
            "creationTimestamp": m["creationTimestamp"],
        },
        "spec": {"replicas": at(object, &spec).cloned().unwrap_or(json!(0))},
        "status": {"replicas": at(object, &status).cloned().unwrap_or(json!(0)), "selector": selector},
    })
}

/// Sets a workload's replicas from a Scale object.
pub fn apply_scale(def: &ResourceDef, object: &mut Value, scale: &Value) -> ApiResult<()> {
    let replicas = scale["spec"]["replicas"].as_i64().unwrap_or(0);
    if replicas < 0 {
        return Err(ApiError::invalid(
            "Scale",
            "autoscaling",
            object["metadata"]["name"].as_str().unwrap_or(""),
            vec![crate::status::Cause::invalid(
                "spec.replicas",
                &json!(replicas),
                "must be greater than or equal to 0",
            )],
        ));
    }
    let version = crate::resources::split_api_version(object["apiVersion"].as_str().unwrap_or(""))
        .1
        .to_string();
    let (spec, _, _) = paths(def, &version);
    let mut v = object;
    for (i, p) in spec.iter().enumerate() {
        if i + 1 == spec.len() {
            v[p.as_str()] = json!(replicas);
        } else {
            v = &mut v[p.as_str()];
        }
    }
    Ok(())
}

/// A label selector object as text (`app=web,tier in (a)`).
pub fn selector_text(selector: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(m) = selector.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            parts.push(format!("{k}={}", v.as_str().unwrap_or("")));
        }
    }
    if let Some(exprs) = selector.get("matchExpressions").and_then(Value::as_array) {
        for e in exprs {
            let key = e["key"].as_str().unwrap_or("");
            let values: Vec<&str> = e["values"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            match e["operator"].as_str().unwrap_or("") {
                "In" => parts.push(format!("{key} in ({})", values.join(","))),
                "NotIn" => parts.push(format!("{key} notin ({})", values.join(","))),
                "Exists" => parts.push(key.to_string()),
                "DoesNotExist" => parts.push(format!("!{key}")),
                _ => {}
            }
        }
    }
    parts.join(",")
}
