//! Tables of custom resources: `Name`, then the CRD version's `additionalPrinterColumns`
//! (or `Age` when it has none), with cells typed as the apiextensions server types them.

use serde_json::{Value, json};

use super::table::{NAME, human_duration};
use crate::meta;

/// One printer column of a CRD version.
pub struct CustomColumn {
    pub name: String,
    pub ty: String,
    pub format: String,
    pub description: String,
    pub priority: i64,
    pub json_path: String,
}

/// The columns after `Name`: the CRD's, or the default `Age`.
pub fn columns(declared: Option<&Vec<Value>>) -> Vec<CustomColumn> {
    match declared {
        Some(cols) if !cols.is_empty() => cols
            .iter()
            .map(|c| {
                let json_path = c["jsonPath"].as_str().unwrap_or("").to_string();
                let description = match c["description"].as_str() {
                    Some(d) if !d.is_empty() => d.to_string(),
                    _ => format!(
                        "Custom resource definition column (in JSONPath format): {json_path}"
                    ),
                };
                CustomColumn {
                    name: c["name"].as_str().unwrap_or("").to_string(),
                    ty: c["type"].as_str().unwrap_or("string").to_string(),
                    format: c["format"].as_str().unwrap_or("").to_string(),
                    description,
                    priority: c["priority"].as_i64().unwrap_or(0),
                    json_path,
                }
            })
            .collect(),
        _ => vec![CustomColumn {
            name: "Age".into(),
            ty: "date".into(),
            format: String::new(),
            description: super::table::AGE.description.into(),
            priority: 0,
            json_path: ".metadata.creationTimestamp".into(),
        }],
    }
}

pub fn definitions(columns: &[CustomColumn]) -> Vec<Value> {
    let mut out = vec![json!({
        "name": NAME.name, "type": NAME.ty, "format": NAME.format,
        "description": NAME.description, "priority": 0,
    })];
    out.extend(columns.iter().map(|c| {
        json!({
            "name": c.name, "type": c.ty, "format": c.format,
            "description": c.description, "priority": c.priority,
        })
    }));
    out
}

pub fn cells(columns: &[CustomColumn], o: &Value) -> Vec<Value> {
    let mut out = vec![json!(meta::name(o))];
    for c in columns {
        let v = crate::jsonpath::simple(o, &c.json_path);
        out.push(cell(&c.ty, &v));
    }
    out
}

/// A cell of a column's type: strings as JSONPath prints a value (objects and arrays as
/// compact JSON), integers and numbers as numbers, dates as ages; a value of the wrong
/// type (or a missing one) is an empty cell.
fn cell(ty: &str, v: &Value) -> Value {
    if v.is_null() {
        return Value::Null;
    }
    match ty {
        "string" => json!(match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }),
        "integer" => match v {
            Value::Number(n) => n
                .as_i64()
                .map(Value::from)
                .or_else(|| n.as_f64().map(|f| json!(f as i64)))
                .unwrap_or(Value::Null),
            _ => Value::Null,
        },
        "number" => match v {
            Value::Number(n) => n.as_f64().map(Value::from).unwrap_or(Value::Null),
            _ => Value::Null,
        },
        "boolean" => match v {
            Value::Bool(b) => json!(b),
            _ => Value::Null,
        },
        "date" => match v.as_str() {
            Some(t) => match chrono::DateTime::parse_from_rfc3339(t) {
                Ok(_) => json!(meta::age_seconds(t).map_or("<unknown>".into(), human_duration)),
                Err(_) => json!("<invalid>"),
            },
            None => Value::Null,
        },
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_follow_the_column_types() {
        let cols = columns(Some(&vec![
            json!({"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}),
            json!({"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio"}),
            json!({"name": "On", "type": "boolean", "jsonPath": ".spec.on", "priority": 1}),
            json!({"name": "Obj", "type": "string", "jsonPath": ".spec.obj"}),
            json!({"name": "Bad", "type": "integer", "jsonPath": ".spec.word"}),
            json!({"name": "When", "type": "date", "jsonPath": ".spec.word"}),
            json!({"name": "Missing", "type": "string", "jsonPath": ".spec.nothing"}),
        ]));
        let o = json!({"metadata": {"name": "x"}, "spec": {
            "replicas": 3, "ratio": 2, "on": true, "obj": {"a": 1}, "word": "hi"}});
        assert_eq!(
            cells(&cols, &o),
            vec![
                json!("x"),
                json!(3),
                json!(2.0),
                json!(true),
                json!("{\"a\":1}"),
                Value::Null,
                json!("<invalid>"),
                Value::Null
            ]
        );
        let defs = definitions(&cols);
        assert_eq!(defs[3]["priority"], 1);
        assert_eq!(
            defs[1]["description"],
            "Custom resource definition column (in JSONPath format): .spec.replicas"
        );
        let default = columns(None);
        assert_eq!(
            (default[0].name.as_str(), default[0].ty.as_str()),
            ("Age", "date")
        );
    }
}
