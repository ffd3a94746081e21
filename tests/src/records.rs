//! Helm's release records as end-to-end tests compare them: a `helm.sh/release.v1`
//! Secret decoded, with what differs between any two runs (times) left out, and the
//! paths at which two such values differ.

use base64::Engine as _;
use std::collections::BTreeSet;

use serde_json::Value;

/// A release record (a `helm.sh/release.v1` Secret) as compared: the Secret's labels but
/// `modifiedAt` (a time), and the decoded release but its times:
/// - `info.first_deployed`, `info.last_deployed`, and `info.deleted` (only whether it is
///   there is compared), the hooks' `last_run` start and end;
/// - the stored chart's `modtime`s (the chart's, each template's and file's) and its
///   `schemamodtime`: helm 4 stores the package entries' times (a directory's files'
///   times), chartkit stores none (chartkit-chart does not keep them); nothing in the
///   cluster depends on them.
///
/// The description of a failed revision is compared up to `failed: `: after it comes
/// the failure in each tool's words (helm's wait says `resource Deployment/ns/x not
/// ready. status: InProgress ...`, chartkit's names each resource with its last reason
/// and its pods' events, as issue #21 asks).
pub fn record(secret: &Value) -> Value {
    let mut labels = secret["metadata"]["labels"].clone();
    if let Some(labels) = labels.as_object_mut() {
        labels.remove("modifiedAt");
    }
    let stored = base64::engine::general_purpose::STANDARD
        .decode(
            secret["data"]["release"]
                .as_str()
                .expect("a release record"),
        )
        .expect("the Secret's data is base64");
    let json = chartkit_release::codec::decode_json(&String::from_utf8_lossy(&stored))
        .expect("the record decodes");
    let mut release: Value = serde_json::from_slice(&json).expect("the record is JSON");
    let info = release["info"]
        .as_object_mut()
        .expect("the record has info");
    info.remove("first_deployed");
    info.remove("last_deployed");
    if let Some(deleted) = info.get_mut("deleted") {
        *deleted = Value::Bool(true);
    }
    if info.get("status").and_then(Value::as_str) == Some("failed")
        && let Some(Value::String(description)) = info.get_mut("description")
        && let Some(at) = description.find("failed: ")
    {
        description.truncate(at + "failed: ".len());
        description.push('…');
    }
    drop_modtimes(&mut release["chart"]);
    for hook in release["hooks"].as_array_mut().into_iter().flatten() {
        if let Some(run) = hook["last_run"].as_object_mut() {
            run.remove("started_at");
            run.remove("completed_at");
        }
    }
    serde_json::json!({"labels": labels, "release": release})
}

fn drop_modtimes(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("modtime");
            map.remove("schemamodtime");
            map.values_mut().for_each(drop_modtimes);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_modtimes),
        _ => {}
    }
}

/// The paths at which two values differ, `path: NAME-A value, NAME-B value` each.
pub fn value_differences(
    path: &str,
    a: &Value,
    b: &Value,
    names: [&str; 2],
    out: &mut Vec<String>,
) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let empty = Value::Null;
            for key in x.keys().chain(y.keys()).collect::<BTreeSet<_>>() {
                let (p, q) = (x.get(key).unwrap_or(&empty), y.get(key).unwrap_or(&empty));
                value_differences(&format!("{path}.{key}"), p, q, names, out);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (n, (p, q)) in x.iter().zip(y).enumerate() {
                value_differences(&format!("{path}[{n}]"), p, q, names, out);
            }
        }
        (a, b) if a != b => out.push(format!("{path}: {} {a}, {} {b}", names[0], names[1])),
        _ => {}
    }
}
