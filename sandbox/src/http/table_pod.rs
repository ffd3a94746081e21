//! A pod's row: READY, STATUS (the reason kubectl users know: Running, Completed,
//! CrashLoopBackOff, Init:0/1, Terminating...), RESTARTS, and the wide columns.

use serde_json::{Value, json};

use crate::meta;

pub fn pod_cells(o: &Value) -> Vec<Value> {
    let status = &o["status"];
    let spec = &o["spec"];
    let total = spec["containers"].as_array().map_or(0, Vec::len);
    let mut ready = 0;
    let mut restarts = 0;
    let mut last_restart: Option<String> = None;
    let mut reason = status["phase"].as_str().unwrap_or("").to_string();
    if let Some(r) = status["reason"].as_str().filter(|r| !r.is_empty()) {
        reason = r.to_string();
    }
    let mut initializing = false;
    let inits = status["initContainerStatuses"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let init_total = spec["initContainers"].as_array().map_or(0, Vec::len);
    for (i, c) in inits.iter().enumerate() {
        restarts += c["restartCount"].as_i64().unwrap_or(0);
        if let Some(t) = c["state"]["terminated"].as_object() {
            if t.get("exitCode").and_then(Value::as_i64) == Some(0) {
                continue;
            }
            initializing = true;
            reason = match t
                .get("reason")
                .and_then(Value::as_str)
                .filter(|r| !r.is_empty())
            {
                Some(r) => format!("Init:{r}"),
                None => match t.get("signal").and_then(Value::as_i64).filter(|s| *s != 0) {
                    Some(sig) => format!("Init:Signal:{sig}"),
                    None => format!(
                        "Init:ExitCode:{}",
                        t.get("exitCode").and_then(Value::as_i64).unwrap_or(0)
                    ),
                },
            };
            break;
        }
        if let Some(w) = c["state"]["waiting"]["reason"]
            .as_str()
            .filter(|r| !r.is_empty() && *r != "PodInitializing")
        {
            initializing = true;
            reason = format!("Init:{w}");
            break;
        }
        initializing = true;
        reason = format!("Init:{i}/{init_total}");
        break;
    }
    if !initializing {
        restarts = 0;
        let mut has_running = false;
        for c in status["containerStatuses"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .rev()
        {
            restarts += c["restartCount"].as_i64().unwrap_or(0);
            if let Some(t) = c["lastState"]["terminated"]["finishedAt"].as_str() {
                last_restart = Some(t.to_string());
            }
            if let Some(w) = c["state"]["waiting"]["reason"]
                .as_str()
                .filter(|r| !r.is_empty())
            {
                reason = w.to_string();
            } else if let Some(t) = c["state"]["terminated"].as_object() {
                reason = match t
                    .get("reason")
                    .and_then(Value::as_str)
                    .filter(|r| !r.is_empty())
                {
                    Some(r) => r.to_string(),
                    None => match t.get("signal").and_then(Value::as_i64).filter(|s| *s != 0) {
                        Some(sig) => format!("Signal:{sig}"),
                        None => format!(
                            "ExitCode:{}",
                            t.get("exitCode").and_then(Value::as_i64).unwrap_or(0)
                        ),
                    },
                };
            } else if c["ready"] == true && c["state"]["running"].is_object() {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            let pod_ready = status["conditions"].as_array().is_some_and(|cs| {
                cs.iter()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True")
            });
            reason = if pod_ready {
                "Running".into()
            } else {
                "NotReady".into()
            };
        }
    }
    if meta::is_deleting(o) {
        reason = if status["reason"] == "NodeLost" {
            "Unknown".into()
        } else {
            "Terminating".into()
        };
    }
    let restarts_cell = match last_restart.as_deref().and_then(meta::age_seconds) {
        Some(secs) if restarts > 0 => {
            format!("{restarts} ({} ago)", super::table::human_duration(secs))
        }
        _ => restarts.to_string(),
    };
    let ip = status["podIP"]
        .as_str()
        .filter(|s| !s.is_empty())
        .unwrap_or("<none>");
    let node = spec["nodeName"]
        .as_str()
        .filter(|s| !s.is_empty())
        .unwrap_or("<none>");
    let nominated = status["nominatedNodeName"]
        .as_str()
        .filter(|s| !s.is_empty())
        .unwrap_or("<none>");
    let gates = spec["readinessGates"]
        .as_array()
        .map_or("<none>".to_string(), |g| {
            let ok = g
                .iter()
                .filter(|gate| {
                    status["conditions"].as_array().is_some_and(|cs| {
                        cs.iter()
                            .any(|c| c["type"] == gate["conditionType"] && c["status"] == "True")
                    })
                })
                .count();
            format!("{ok}/{}", g.len())
        });
    vec![
        json!(meta::name(o)),
        json!(format!("{ready}/{total}")),
        json!(reason),
        json!(restarts_cell),
        json!(super::table::age(o)),
        json!(ip),
        json!(node),
        json!(nominated),
        json!(gates),
    ]
}
