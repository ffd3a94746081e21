//! Request bodies: JSON, or YAML read as `sigs.k8s.io/yaml` reads it (go-yaml, then
//! JSON, integers kept as integers).

use chartkit_yaml::{Node, NodeKind};
use serde_json::{Map, Value};

/// JSON when the text is JSON, otherwise YAML.
pub fn parse_yaml_or_json(body: &[u8]) -> Result<Value, String> {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return Ok(v);
    }
    let text = std::str::from_utf8(body).map_err(|_| "the body is not UTF-8".to_string())?;
    let node = chartkit_yaml::parse_node(text).map_err(|e| e.to_string())?;
    node_to_json(&node)
}

/// A request body in the given Content-Type (JSON or YAML).
pub fn parse_object(content_type: &str, body: &[u8]) -> Result<Value, crate::status::ApiError> {
    let media = content_type.split(';').next().unwrap_or("").trim();
    match media {
        "" | "application/json" | "*/*" => serde_json::from_slice(body).map_err(|e| {
            crate::status::ApiError::bad_request(format!(
                "error decoding the request body: {}",
                go_json_error(&e)
            ))
        }),
        "application/yaml" | "application/x-yaml" | "text/yaml" => parse_yaml_or_json(body)
            .map_err(|e| crate::status::ApiError::bad_request(format!("error decoding YAML: {e}"))),
        other => Err(crate::status::ApiError::unsupported_media_type(other)),
    }
}

fn node_to_json(node: &Node) -> Result<Value, String> {
    Ok(match &node.kind {
        NodeKind::Null => Value::Null,
        NodeKind::Bool(b) => Value::Bool(*b),
        NodeKind::Int(i) => Value::from(*i),
        NodeKind::Uint(u) => Value::from(*u),
        NodeKind::Float(f) => serde_json::Number::from_f64(*f)
            .map(Value::Number)
            .ok_or_else(|| format!("line {}: the number {f} has no JSON form", node.line))?,
        NodeKind::Str(s) => Value::String(s.clone()),
        NodeKind::Seq(items) => {
            Value::Array(items.iter().map(node_to_json).collect::<Result<_, _>>()?)
        }
        NodeKind::Map(pairs) => {
            let mut m = Map::new();
            for (k, v) in pairs {
                let key = match &k.kind {
                    NodeKind::Str(s) => s.clone(),
                    NodeKind::Null => "null".to_string(),
                    NodeKind::Bool(b) => b.to_string(),
                    NodeKind::Int(i) => i.to_string(),
                    NodeKind::Uint(u) => u.to_string(),
                    NodeKind::Float(f) => f.to_string(),
                    _ => return Err(format!("line {}: a map key must be a scalar", k.line)),
                };
                m.insert(key, node_to_json(v)?);
            }
            Value::Object(m)
        }
    })
}

/// serde_json's error in the words Go's encoding/json would use where they differ little
/// (the position is kept, since it helps).
pub fn go_json_error(e: &serde_json::Error) -> String {
    format!("{e}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn yaml_keeps_integers_and_reads_yaml_1_1_booleans() {
        let v = parse_yaml_or_json(b"a: 1\nb: yes\nc: 1.5\nd: [x]\n").unwrap();
        assert_eq!(v, json!({"a": 1, "b": true, "c": 1.5, "d": ["x"]}));
    }
}
