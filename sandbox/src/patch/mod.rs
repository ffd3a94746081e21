//! The four PATCH types: JSON patch (RFC 6902), JSON merge patch (RFC 7386), strategic
//! merge patch (the built-in types' merge keys and strategies) and server-side apply
//! (in [`crate::fieldmanager`]).

mod json_patch;
#[cfg(test)]
mod random_tests;
mod strategic;

pub use json_patch::json_patch;
pub use strategic::{go_format, strategic_merge_patch};

use serde_json::{Map, Value};

use crate::status::{ApiError, ApiResult};

/// A PATCH request's type, from its Content-Type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
    Strategic,
    Apply,
}

impl PatchType {
    pub fn from_content_type(content_type: &str) -> Option<PatchType> {
        let media = content_type.split(';').next().unwrap_or("").trim();
        match media {
            "application/json-patch+json" => Some(PatchType::Json),
            "application/merge-patch+json" => Some(PatchType::Merge),
            "application/strategic-merge-patch+json" => Some(PatchType::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => {
                (media == "application/apply-patch+yaml").then_some(PatchType::Apply)
            }
            _ => None,
        }
    }
}

/// Reads a patch body: JSON for the three patch types, YAML (or JSON) for apply.
pub fn parse_body(kind: PatchType, body: &[u8]) -> ApiResult<Value> {
    let doc = match kind {
        PatchType::Apply => crate::body::parse_yaml_or_json(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?,
        _ => serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!(
                "error decoding patch: {}",
                crate::body::go_json_error(&e)
            ))
        })?,
    };
    match (kind, &doc) {
        (PatchType::Json, Value::Array(_)) => Ok(doc),
        (PatchType::Json, _) => Err(ApiError::bad_request(
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
        )),
        (_, Value::Object(_)) => Ok(doc),
        (PatchType::Apply, Value::Null) => Err(ApiError::bad_request(
            "error decoding YAML: the body of the request is empty",
        )),
        _ => Err(ApiError::bad_request(
            "json: cannot unmarshal array into Go value of type map[string]interface {}",
        )),
    }
}

/// JSON as Go's encoding/json writes a decoded document: object keys sorted, `<`, `>`
/// and `&` escaped.
pub fn go_json(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", go_json(&Value::String(k.clone())), go_json(&m[k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(go_json).collect::<Vec<_>>().join(",")
        ),
        Value::String(s) => serde_json::to_string(s)
            .unwrap_or_default()
            .replace('<', "\\u003c")
            .replace('>', "\\u003e")
            .replace('&', "\\u0026")
            .replace('\u{2028}', "\\u2028")
            .replace('\u{2029}', "\\u2029"),
        other => other.to_string(),
    }
}

/// RFC 7386: maps merge key by key, `null` deletes, anything else replaces.
pub fn merge_patch(doc: &Value, patch: &Value) -> Value {
    match patch {
        Value::Object(p) => {
            let mut out: Map<String, Value> = match doc {
                Value::Object(d) => d.clone(),
                _ => Map::new(),
            };
            for (k, v) in p {
                if v.is_null() {
                    out.shift_remove(k);
                } else {
                    let merged = merge_patch(out.get(k).unwrap_or(&Value::Null), v);
                    out.insert(k.clone(), merged);
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_follows_rfc_7386() {
        let doc = json!({"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]});
        let patch = json!({"a": "z", "c": {"f": null}, "l": [3]});
        assert_eq!(
            merge_patch(&doc, &patch),
            json!({"a": "z", "c": {"d": "e"}, "l": [3]})
        );
    }

    #[test]
    fn content_types_pick_patch_types() {
        assert_eq!(
            PatchType::from_content_type("application/merge-patch+json; charset=utf-8"),
            Some(PatchType::Merge)
        );
        assert_eq!(PatchType::from_content_type("application/json"), None);
    }
}
