//! values.schema.json as a table: one row per field, found by following `properties`
//! (and `items` of arrays, shown as `path[]`), bounded in rows and depth.

use crate::limits;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaField {
    /// Dotted path from the values' root (`image.tag`, `ports[].name`).
    pub path: String,
    /// `type`, alternatives joined with ` | `; empty when the schema gives none.
    pub kind: String,
    /// `default` as compact JSON.
    pub default: Option<String>,
    pub description: Option<String>,
    pub required: bool,
}

/// The fields, and whether the table was cut at [`limits::SCHEMA_ROWS`].
pub fn schema_fields(schema: &Value) -> (Vec<SchemaField>, bool) {
    let mut fields = Vec::new();
    let truncated = walk(schema, "", false, 0, &mut fields);
    (fields, truncated)
}

fn walk(
    schema: &Value,
    path: &str,
    required: bool,
    depth: usize,
    out: &mut Vec<SchemaField>,
) -> bool {
    let Some(object) = schema.as_object() else {
        return false;
    };
    if !path.is_empty() {
        if out.len() >= limits::SCHEMA_ROWS {
            return true;
        }
        out.push(SchemaField {
            path: path.to_string(),
            kind: kind_of(object.get("type")),
            default: object.get("default").map(Value::to_string),
            description: object
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_string),
            required,
        });
    }
    if depth >= limits::SCHEMA_DEPTH {
        return false;
    }
    let required_names: Vec<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(properties) = object.get("properties").and_then(Value::as_object) {
        for (name, child) in properties {
            let child_path = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            if walk(
                child,
                &child_path,
                required_names.contains(&name.as_str()),
                depth + 1,
                out,
            ) {
                return true;
            }
        }
    }
    if let Some(items) = object.get("items") {
        let item_path = format!("{path}[]");
        if walk(items, &item_path, false, depth + 1, out) {
            return true;
        }
    }
    false
}

fn kind_of(kind: Option<&Value>) -> String {
    match kind {
        Some(Value::String(one)) => one.clone(),
        Some(Value::Array(many)) => many
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_fields_become_rows() {
        let schema = json!({
            "type": "object",
            "required": ["image"],
            "properties": {
                "image": {"type": "object", "properties": {"tag": {"type": "string", "default": "1.0", "description": "Image tag"}}},
                "replicas": {"type": ["integer", "null"], "default": 1},
                "ports": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}}
            }
        });
        let (fields, truncated) = schema_fields(&schema);
        assert!(!truncated);
        let paths: Vec<&str> = fields.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "image",
                "image.tag",
                "replicas",
                "ports",
                "ports[]",
                "ports[].name"
            ]
        );
        assert!(fields[0].required);
        assert_eq!(fields[1].default.as_deref(), Some("\"1.0\""));
        assert_eq!(fields[1].description.as_deref(), Some("Image tag"));
        assert_eq!(fields[2].kind, "integer | null");
    }

    #[test]
    fn rows_are_bounded() {
        let properties: serde_json::Map<String, Value> = (0..limits::SCHEMA_ROWS + 10)
            .map(|i| (format!("f{i}"), json!({"type": "string"})))
            .collect();
        let (fields, truncated) = schema_fields(&json!({"properties": properties}));
        assert!(truncated);
        assert_eq!(fields.len(), limits::SCHEMA_ROWS);
    }
}
