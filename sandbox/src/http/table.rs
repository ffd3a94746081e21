//! Server-side printing: the `Table` objects kubectl asks for (`as=Table`) and prints as
//! its columns, with the API server's columns and cells for each built-in type, a CRD's
//! `additionalPrinterColumns`, and `NAME`/`CREATED AT` for everything else.

use serde_json::{Value, json};

use crate::meta;
use crate::resources::ResourceDef;

/// How much of each object rides along in a row (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Include {
    None,
    Metadata,
    Object,
}

impl Include {
    pub fn parse(s: Option<&str>) -> Include {
        match s {
            Some("None") => Include::None,
            Some("Object") => Include::Object,
            _ => Include::Metadata,
        }
    }
}

/// A column: its name, type, format, description and priority (1 = `-o wide` only).
pub struct Column {
    pub name: &'static str,
    pub ty: &'static str,
    pub format: &'static str,
    pub priority: u8,
}

const fn col(name: &'static str, ty: &'static str, format: &'static str, priority: u8) -> Column {
    Column {
        name,
        ty,
        format,
        priority,
    }
}

/// Whether an Accept header asks for a Table.
pub fn wants_table(accept: &str) -> bool {
    accept
        .split(',')
        .any(|p| p.replace(' ', "").contains("as=Table") && p.contains("g=meta.k8s.io"))
}

pub const TABLE_CONTENT_TYPE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

/// A Table of `objects` (each as served).
pub fn table(
    def: &ResourceDef,
    version: &str,
    objects: &[Value],
    include: Include,
    list_meta: Value,
) -> Value {
    let (columns, custom) = columns_for(def, version);
    let definitions: Vec<Value> = match &custom {
        Some(cols) => cols
            .iter()
            .map(|c| {
                json!({
                    "name": c["name"],
                    "type": c["type"].as_str().unwrap_or("string"),
                    "format": c["format"].as_str().unwrap_or(""),
                    "description": c["description"].as_str().unwrap_or(""),
                    "priority": c["priority"].as_i64().unwrap_or(0),
                })
            })
            .collect(),
        None => columns
            .iter()
            .map(|c| {
                json!({
                    "name": c.name,
                    "type": c.ty,
                    "format": c.format,
                    "description": "",
                    "priority": c.priority,
                })
            })
            .collect(),
    };
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let cells = match &custom {
                Some(cols) => custom_cells(cols, o),
                None => cells(def, o),
            };
            let mut row = json!({ "cells": cells });
            match include {
                Include::None => {}
                Include::Metadata => {
                    row["object"] = json!({
                        "kind": "PartialObjectMetadata",
                        "apiVersion": "meta.k8s.io/v1",
                        "metadata": o["metadata"],
                    });
                }
                Include::Object => row["object"] = o.clone(),
            }
            row
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": definitions,
        "rows": rows,
    })
}

const NAME: Column = col("Name", "string", "name", 0);
const AGE: Column = col("Age", "string", "", 0);

fn columns_for(def: &ResourceDef, version: &str) -> (Vec<Column>, Option<Vec<Value>>) {
    if let Some(custom) = &def.custom {
        let mut cols = vec![
            json!({"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within a namespace.", "priority": 0}),
        ];
        match custom.columns.get(version) {
            Some(extra) if !extra.is_empty() => {
                for c in extra {
                    cols.push(json!({
                        "name": c["name"],
                        "type": c["type"],
                        "format": c["format"].as_str().unwrap_or(""),
                        "description": c["description"].as_str().unwrap_or(""),
                        "priority": c["priority"].as_i64().unwrap_or(0),
                        "jsonPath": c["jsonPath"],
                    }));
                }
            }
            _ => cols.push(json!({"name": "Age", "type": "date", "format": "", "description": "", "priority": 0, "jsonPath": ".metadata.creationTimestamp"})),
        }
        return (Vec::new(), Some(cols));
    }
    let cols = match (def.group.as_str(), def.plural.as_str()) {
        ("", "pods") => vec![
            NAME,
            col("Ready", "string", "", 0),
            col("Status", "string", "", 0),
            col("Restarts", "string", "", 0),
            AGE,
            col("IP", "string", "", 1),
            col("Node", "string", "", 1),
            col("Nominated Node", "string", "", 1),
            col("Readiness Gates", "string", "", 1),
        ],
        ("apps", "deployments") => vec![
            NAME,
            col("Ready", "string", "", 0),
            col("Up-to-date", "string", "", 0),
            col("Available", "string", "", 0),
            AGE,
            col("Containers", "string", "", 1),
            col("Images", "string", "", 1),
            col("Selector", "string", "", 1),
        ],
        ("", "services") => vec![
            NAME,
            col("Type", "string", "", 0),
            col("Cluster-IP", "string", "", 0),
            col("External-IP", "string", "", 0),
            col("Port(s)", "string", "", 0),
            AGE,
            col("Selector", "string", "", 1),
        ],
        ("", "configmaps") => vec![NAME, col("Data", "string", "", 0), AGE],
        ("", "secrets") => vec![
            NAME,
            col("Type", "string", "", 0),
            col("Data", "string", "", 0),
            AGE,
        ],
        ("", "namespaces") => vec![NAME, col("Status", "string", "", 0), AGE],
        _ => vec![NAME, col("Created At", "date", "", 0)],
    };
    (cols, None)
}

/// Kubernetes' short human duration, as the Age column shows it.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// The Age cell of an object.
pub fn age(o: &Value) -> String {
    o["metadata"]["creationTimestamp"]
        .as_str()
        .and_then(meta::age_seconds)
        .map(human_duration)
        .unwrap_or_else(|| "<unknown>".into())
}

fn s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn count(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

fn cells(def: &ResourceDef, o: &Value) -> Vec<Value> {
    let name = json!(meta::name(o));
    let status = &o["status"];
    let spec = &o["spec"];
    match (def.group.as_str(), def.plural.as_str()) {
        ("", "pods") => crate::http::table_pod::pod_cells(o),
        ("apps", "deployments") => {
            let containers = spec["template"]["spec"]["containers"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            vec![
                name,
                json!(format!(
                    "{}/{}",
                    count(&status["readyReplicas"]),
                    count(&spec["replicas"])
                )),
                json!(count(&status["updatedReplicas"])),
                json!(count(&status["availableReplicas"])),
                json!(age(o)),
                json!(
                    containers
                        .iter()
                        .map(|c| s(&c["name"]))
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                json!(
                    containers
                        .iter()
                        .map(|c| s(&c["image"]))
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                json!(crate::scale::selector_text(&spec["selector"])),
            ]
        }
        ("", "services") => {
            let ty = spec["type"].as_str().unwrap_or("ClusterIP");
            let cluster_ip = spec["clusterIP"]
                .as_str()
                .filter(|s| !s.is_empty())
                .unwrap_or("<none>");
            let external = service_external_ip(o);
            let ports: Vec<String> = spec["ports"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .iter()
                .map(|p| {
                    let proto = p["protocol"].as_str().unwrap_or("TCP");
                    match p["nodePort"].as_i64() {
                        Some(np) if np != 0 => format!("{}:{np}/{proto}", count(&p["port"])),
                        _ => format!("{}/{proto}", count(&p["port"])),
                    }
                })
                .collect();
            let selector = spec["selector"]
                .as_object()
                .map(|m| {
                    let mut parts: Vec<String> =
                        m.iter().map(|(k, v)| format!("{k}={}", s(v))).collect();
                    parts.sort();
                    parts.join(",")
                })
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "<none>".into());
            vec![
                name,
                json!(ty),
                json!(cluster_ip),
                json!(external),
                json!(if ports.is_empty() {
                    "<none>".into()
                } else {
                    ports.join(",")
                }),
                json!(age(o)),
                json!(selector),
            ]
        }
        ("", "configmaps") => {
            let n = o["data"].as_object().map_or(0, |m| m.len())
                + o["binaryData"].as_object().map_or(0, |m| m.len());
            vec![name, json!(n), json!(age(o))]
        }
        ("", "secrets") => {
            let n = o["data"].as_object().map_or(0, |m| m.len());
            vec![name, json!(s(&o["type"])), json!(n), json!(age(o))]
        }
        ("", "namespaces") => vec![name, json!(s(&status["phase"])), json!(age(o))],
        _ => vec![name, o["metadata"]["creationTimestamp"].clone()],
    }
}

/// A Service's External-IP cell.
fn service_external_ip(o: &Value) -> String {
    let spec = &o["spec"];
    let ty = spec["type"].as_str().unwrap_or("ClusterIP");
    let mut ips: Vec<String> = spec["externalIPs"]
        .as_array()
        .map(|a| a.iter().map(s).collect())
        .unwrap_or_default();
    match ty {
        "ClusterIP" | "NodePort" => {
            if ips.is_empty() {
                "<none>".into()
            } else {
                ips.join(",")
            }
        }
        "LoadBalancer" => {
            for ing in o["status"]["loadBalancer"]["ingress"]
                .as_array()
                .cloned()
                .unwrap_or_default()
            {
                let v = if ing["ip"].is_string() {
                    s(&ing["ip"])
                } else {
                    s(&ing["hostname"])
                };
                if !v.is_empty() {
                    ips.push(v);
                }
            }
            if ips.is_empty() {
                "<pending>".into()
            } else {
                ips.join(",")
            }
        }
        "ExternalName" => s(&spec["externalName"]),
        _ => "<unknown>".into(),
    }
}

/// Cells of a custom resource from its CRD's printer columns (JSONPath, simple form).
fn custom_cells(cols: &[Value], o: &Value) -> Vec<Value> {
    cols.iter()
        .enumerate()
        .map(|(i, c)| {
            if i == 0 {
                return json!(meta::name(o));
            }
            let path = c["jsonPath"].as_str().unwrap_or("");
            let v = crate::jsonpath::simple(o, path);
            match (c["type"].as_str(), &v) {
                (_, Value::Null) => Value::Null,
                (Some("date"), Value::String(t)) => json!(
                    meta::age_seconds(t)
                        .map(human_duration)
                        .unwrap_or_else(|| t.clone())
                ),
                _ => v,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_as_kubectl_prints_them() {
        assert_eq!(human_duration(5), "5s");
        assert_eq!(human_duration(119), "119s");
        assert_eq!(human_duration(150), "2m30s");
        assert_eq!(human_duration(600), "10m");
        assert_eq!(human_duration(3 * 3600 + 60), "3h1m");
        assert_eq!(human_duration(9 * 3600), "9h");
        assert_eq!(human_duration(50 * 3600), "2d2h");
        assert_eq!(human_duration(30 * 86400), "30d");
    }
}
