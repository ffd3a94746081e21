//! Objects between the version they are stored at and the versions they are served at.
//! Custom resources and most built-in types only change `apiVersion` (the conversion
//! strategy `None`); HorizontalPodAutoscalers differ between v1 and v2.

use serde_json::{Value, json};

use crate::resources::ResourceDef;

/// `object` (stored) as served at `version`.
pub fn to_version(def: &ResourceDef, object: &Value, version: &str) -> Value {
    let mut out = object.clone();
    let want = def.api_version(version);
    if out.get("apiVersion").and_then(Value::as_str) == Some(want.as_str()) {
        return out;
    }
    if is_hpa(def) && version == "v1" {
        hpa_v2_to_v1(&mut out);
    }
    out["apiVersion"] = json!(want);
    out
}

/// `object` (served at `version`) as stored.
pub fn to_storage(def: &ResourceDef, object: &Value, version: &str) -> Value {
    let mut out = object.clone();
    if is_hpa(def) && version == "v1" {
        hpa_v1_to_v2(&mut out);
    }
    out["apiVersion"] = json!(def.storage_api_version());
    out
}

fn is_hpa(def: &ResourceDef) -> bool {
    def.group == "autoscaling" && def.plural == "horizontalpodautoscalers"
}

fn hpa_v1_to_v2(o: &mut Value) {
    let Some(spec) = o.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(cpu) = spec.shift_remove("targetCPUUtilizationPercentage") {
        spec.insert(
            "metrics".into(),
            json!([{
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": cpu}},
            }]),
        );
    }
}

fn hpa_v2_to_v1(o: &mut Value) {
    let Some(spec) = o.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let cpu = spec
        .get("metrics")
        .and_then(Value::as_array)
        .and_then(|m| {
            m.iter()
                .find(|x| x["type"] == "Resource" && x["resource"]["name"] == "cpu")
        })
        .and_then(|x| x["resource"]["target"]["averageUtilization"].as_i64());
    spec.shift_remove("metrics");
    spec.shift_remove("behavior");
    if let Some(cpu) = cpu {
        spec.insert("targetCPUUtilizationPercentage".into(), json!(cpu));
    }
}
