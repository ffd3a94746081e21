//! The kubeconfig clients use to reach a sandbox: a `chartkit-sandbox` cluster, user and
//! context, merged into an existing file without touching its other entries.

use std::path::Path;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::TlsMaterial;

/// The name of the cluster, user and context a sandbox writes.
pub const CONTEXT: &str = "chartkit-sandbox";

fn entries(url: &str, tls: Option<&TlsMaterial>) -> (Value, Value, Value) {
    let mut cluster = json!({"server": url});
    let mut user = json!({});
    if let Some(t) = tls {
        cluster["certificate-authority-data"] =
            json!(base64::engine::general_purpose::STANDARD.encode(t.ca_pem.as_bytes()));
        user["token"] = json!(t.token);
    }
    (
        json!({"name": CONTEXT, "cluster": cluster}),
        json!({"name": CONTEXT, "user": user}),
        json!({"name": CONTEXT, "context": {"cluster": CONTEXT, "user": CONTEXT, "namespace": "default"}}),
    )
}

/// A kubeconfig with only the sandbox's context, which is current.
pub fn document(url: &str, tls: Option<&TlsMaterial>) -> String {
    let merged = merge(None, url, tls);
    to_yaml(&merged)
}

/// `existing` (a parsed kubeconfig, or none) with the sandbox's entries put in place of
/// any of the same name, and the sandbox's context made current.
pub fn merge(existing: Option<Value>, url: &str, tls: Option<&TlsMaterial>) -> Value {
    let mut config = existing
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({"apiVersion": "v1", "kind": "Config", "preferences": {}}));
    let (cluster, user, context) = entries(url, tls);
    for (list, entry) in [
        ("clusters", cluster),
        ("users", user),
        ("contexts", context),
    ] {
        let mut items: Vec<Value> = config[list].as_array().cloned().unwrap_or_default();
        match items.iter_mut().find(|i| i["name"] == CONTEXT) {
            Some(slot) => *slot = entry,
            None => items.push(entry),
        }
        config[list] = Value::Array(items);
    }
    config["current-context"] = json!(CONTEXT);
    config
}

/// Merges the sandbox's entries into the kubeconfig at `path` (created if missing),
/// durably and readable only by its owner.
pub fn write(path: &Path, url: &str, tls: Option<&TlsMaterial>) -> Result<(), String> {
    let existing = match std::fs::read(path) {
        Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => None,
        Ok(bytes) => Some(
            crate::body::parse_yaml_or_json(&bytes)
                .map_err(|e| format!("cannot read the kubeconfig `{}`: {e}", path.display()))?,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read `{}`: {e}", path.display())),
    };
    let merged = merge(existing, url, tls);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    }
    chartkit_durable::write_with(
        path,
        to_yaml(&merged).as_bytes(),
        chartkit_durable::Options { mode: Some(0o600) },
    )
    .map_err(|e| e.to_string())
}

/// Removes the sandbox's entries from the kubeconfig at `path`, if it has them.
pub fn remove(path: &Path) -> Result<(), String> {
    let Ok(bytes) = std::fs::read(path) else {
        return Ok(());
    };
    let Ok(mut config) = crate::body::parse_yaml_or_json(&bytes) else {
        return Ok(());
    };
    for list in ["clusters", "users", "contexts"] {
        if let Some(items) = config[list].as_array_mut() {
            items.retain(|i| i["name"] != CONTEXT);
        }
    }
    if config["current-context"] == CONTEXT {
        config["current-context"] = json!("");
    }
    chartkit_durable::write_with(
        path,
        to_yaml(&config).as_bytes(),
        chartkit_durable::Options { mode: Some(0o600) },
    )
    .map_err(|e| e.to_string())
}

fn to_yaml(v: &Value) -> String {
    chartkit_yaml::to_yaml(&to_yaml_value(v))
}

fn to_yaml_value(v: &Value) -> chartkit_yaml::Value {
    match v {
        Value::Null => chartkit_yaml::Value::Null,
        Value::Bool(b) => chartkit_yaml::Value::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => chartkit_yaml::Value::Int(i),
            None => chartkit_yaml::Value::Float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => chartkit_yaml::Value::String(s.clone()),
        Value::Array(a) => chartkit_yaml::Value::Seq(a.iter().map(to_yaml_value).collect()),
        Value::Object(m) => {
            let mut map = chartkit_yaml::Map::new();
            for (k, v) in m {
                map.insert(k.clone(), to_yaml_value(v));
            }
            chartkit_yaml::Value::Map(map)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_keeps_other_contexts() {
        let existing = json!({
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": "prod", "cluster": {"server": "https://prod"}}],
            "contexts": [{"name": "prod", "context": {"cluster": "prod", "user": "prod"}}],
            "users": [{"name": "prod", "user": {"token": "x"}}],
            "current-context": "prod",
        });
        let merged = merge(Some(existing), "http://127.0.0.1:1", None);
        assert_eq!(merged["contexts"].as_array().unwrap().len(), 2);
        assert_eq!(merged["clusters"][0]["name"], "prod");
        assert_eq!(merged["current-context"], CONTEXT);
        let again = merge(Some(merged), "http://127.0.0.1:2", None);
        assert_eq!(again["clusters"].as_array().unwrap().len(), 2);
        assert_eq!(
            again["clusters"][1]["cluster"]["server"],
            "http://127.0.0.1:2"
        );
    }
}
