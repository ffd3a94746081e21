//! `x-kubernetes-list-type` invariants of custom resources: a `set` holds no value
//! twice, a `map`'s items are objects with distinct keys (a missing key counting as
//! its default), in the API server's words (`Duplicate value: ...`, reported once per
//! repeated value, at its second place).

use std::collections::HashMap;

use serde_json::Value;

use crate::status::Cause;

/// Checks one list against its schema; `path` names the list.
pub fn check(schema: &Value, items: &[Value], path: &str, causes: &mut Vec<Cause>) {
    match schema["x-kubernetes-list-type"].as_str() {
        Some("set") => check_set(items, path, causes),
        Some("map") => check_map(schema, items, path, causes),
        _ => {}
    }
}

fn check_set(items: &[Value], path: &str, causes: &mut Vec<Cause>) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, x) in items.iter().enumerate() {
        let times = seen.entry(x.to_string()).or_insert(0);
        *times += 1;
        if *times == 2 {
            causes.push(duplicate(path, i, go_sharp_v(x)));
        }
    }
}

fn check_map(schema: &Value, items: &[Value], path: &str, causes: &mut Vec<Cause>) {
    let mut not_objects = false;
    for (i, x) in items.iter().enumerate() {
        if !x.is_object() && !x.is_null() {
            not_objects = true;
            causes.push(Cause::invalid(
                format!("{path}[{i}]"),
                x,
                "must be an object for an array of list-type map",
            ));
        }
    }
    if not_objects {
        return;
    }
    let keys: Vec<&str> = schema["x-kubernetes-list-map-keys"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if keys.is_empty() {
        return;
    }
    let props = &schema["items"]["properties"];
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, x) in items.iter().enumerate() {
        if x.is_null() {
            continue;
        }
        let values: Vec<(&str, Option<&Value>)> = keys
            .iter()
            .map(|k| (*k, x.get(*k).or_else(|| props[*k].get("default"))))
            .collect();
        let identity = values
            .iter()
            .map(|(_, v)| v.map(Value::to_string).unwrap_or_else(|| "<unset>".into()))
            .collect::<Vec<_>>()
            .join("\u{0}");
        let times = seen.entry(identity).or_insert(0);
        *times += 1;
        if *times == 2 {
            // Only the keys the item has are shown, as a Go map.
            let shown: Vec<String> = {
                let mut set: Vec<(&str, &Value)> = values
                    .iter()
                    .filter_map(|(k, v)| v.map(|v| (*k, v)))
                    .collect();
                set.sort_by(|a, b| a.0.cmp(b.0));
                set.iter()
                    .map(|(k, v)| format!("{k:?}:{}", go_sharp_v(v)))
                    .collect()
            };
            causes.push(duplicate(
                path,
                i,
                format!("map[string]interface {{}}{{{}}}", shown.join(", ")),
            ));
        }
    }
}

fn duplicate(path: &str, i: usize, shown: String) -> Cause {
    Cause {
        reason: "FieldValueDuplicate",
        field: format!("{path}[{i}]"),
        value: Some(shown),
        detail: String::new(),
    }
}

/// A decoded JSON value as Go's `%#v` prints it inside field errors.
fn go_sharp_v(v: &Value) -> String {
    match v {
        Value::Null => "interface {}(nil)".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("{s:?}"),
        Value::Array(a) => format!(
            "[]interface {{}}{{{}}}",
            a.iter().map(go_sharp_v).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            format!(
                "map[string]interface {{}}{{{}}}",
                entries
                    .iter()
                    .map(|(k, v)| format!("{k:?}:{}", go_sharp_v(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(schema: &Value, items: Value) -> Vec<String> {
        let mut causes = Vec::new();
        check(schema, items.as_array().unwrap(), "spec.xs", &mut causes);
        causes.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn sets_and_maps_refuse_duplicates_once() {
        let set =
            json!({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}});
        assert_eq!(
            messages(&set, json!(["a", "b", "a", "a"])),
            ["spec.xs[2]: Duplicate value: \"a\""]
        );
        assert!(messages(&set, json!(["a", "b"])).is_empty());
        let map = json!({"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name", "protocol"],
            "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "protocol": {"type": "string", "default": "TCP"}}}});
        assert_eq!(
            messages(
                &map,
                json!([{"name": "http"}, {"name": "http", "protocol": "TCP"}, {"name": "http", "protocol": "UDP"}])
            ),
            [
                "spec.xs[1]: Duplicate value: map[string]interface {}{\"name\":\"http\", \"protocol\":\"TCP\"}"
            ]
        );
        assert_eq!(
            messages(&map, json!(["x"])),
            ["spec.xs[0]: Invalid value: \"x\": must be an object for an array of list-type map"]
        );
    }
}
