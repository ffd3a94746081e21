//! A pod's row: READY, STATUS (the reason kubectl users know: Running, Completed,
//! CrashLoopBackOff, Init:0/1, Terminating...), RESTARTS (`N (Xm ago)`), and the wide
//! columns; and pod templates.

use serde_json::{Value, json};

use super::table::{
    AGE, Cells, Column, NAME, Printer, age, col, containers, format_labels, human_duration, name,
    wide,
};
use crate::meta;

const POD_COLUMNS: &[Column] = &[
    NAME,
    col(
        "Ready",
        "string",
        "The aggregate readiness state of this pod for accepting traffic.",
    ),
    col(
        "Status",
        "string",
        "The aggregate status of the containers in this pod.",
    ),
    col(
        "Restarts",
        "string",
        "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
    ),
    AGE,
    wide("IP", "string", "podIP address allocated to the pod."),
    wide("Node", "string", "The node the pod is scheduled onto."),
    wide(
        "Nominated Node",
        "string",
        "The node the scheduler nominated for this pod while it preempts others.",
    ),
    wide(
        "Readiness Gates",
        "string",
        "The pod's readiness gates that are met, of all.",
    ),
];

const POD_TEMPLATE_COLUMNS: &[Column] = &[
    NAME,
    col(
        "Containers",
        "string",
        "Names of each container in the template.",
    ),
    col(
        "Images",
        "string",
        "Images referenced by each container in the template.",
    ),
    col("Pod Labels", "string", "The labels for the pod template."),
];

pub fn printer(group: &str, plural: &str) -> Option<Printer> {
    let (columns, cells): (&'static [Column], Cells) = match (group, plural) {
        ("", "pods") => (POD_COLUMNS, pod_cells),
        ("", "podtemplates") => (POD_TEMPLATE_COLUMNS, pod_template_cells),
        _ => return None,
    };
    Some(Printer {
        columns,
        cells,
        sort: None,
    })
}

fn pod_template_cells(o: &Value) -> Vec<Value> {
    let (names, images) = containers(&o["template"]["spec"]["containers"]);
    vec![
        name(o),
        names,
        images,
        json!(format_labels(&o["template"]["metadata"]["labels"])),
    ]
}

/// A terminated container's reason: its own, or the signal or exit code.
fn terminated_reason(t: &Value, prefix: &str) -> String {
    match t["reason"].as_str().filter(|r| !r.is_empty()) {
        Some(r) => format!("{prefix}{r}"),
        None => match t["signal"].as_i64().filter(|s| *s != 0) {
            Some(sig) => format!("{prefix}Signal:{sig}"),
            None => format!("{prefix}ExitCode:{}", t["exitCode"].as_i64().unwrap_or(0)),
        },
    }
}

fn timestamp(v: &Value) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    chrono::DateTime::parse_from_rfc3339(v.as_str()?).ok()
}

/// The later of two restart times.
fn later(
    a: Option<chrono::DateTime<chrono::FixedOffset>>,
    b: &Value,
) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    match (a, timestamp(&b["lastState"]["terminated"]["finishedAt"])) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

pub fn pod_cells(o: &Value) -> Vec<Value> {
    let status = &o["status"];
    let spec = &o["spec"];
    let empty = Vec::new();
    let init_specs = spec["initContainers"].as_array().unwrap_or(&empty);
    // Sidecars (init containers that restart always) count among the pod's containers.
    let restartable = |name: &Value| {
        init_specs
            .iter()
            .any(|c| c["name"] == *name && c["restartPolicy"] == "Always")
    };
    let total = spec["containers"].as_array().map_or(0, Vec::len)
        + init_specs
            .iter()
            .filter(|c| c["restartPolicy"] == "Always")
            .count();
    let mut ready = 0;
    let mut restarts = 0i64;
    let mut sidecar_restarts = 0i64;
    let mut last_restart = None;
    let mut last_sidecar_restart = None;
    let phase = status["phase"].as_str().unwrap_or("");
    let mut reason = status["reason"]
        .as_str()
        .filter(|r| !r.is_empty())
        .unwrap_or(phase)
        .to_string();
    let conditions = status["conditions"].as_array().unwrap_or(&empty);
    if conditions
        .iter()
        .any(|c| c["type"] == "PodScheduled" && c["reason"] == "SchedulingGated")
    {
        reason = "SchedulingGated".into();
    }

    let mut initializing = false;
    let init_statuses = status["initContainerStatuses"].as_array().unwrap_or(&empty);
    for (i, c) in init_statuses.iter().enumerate() {
        restarts += c["restartCount"].as_i64().unwrap_or(0);
        last_restart = later(last_restart, c);
        let sidecar = restartable(&c["name"]);
        if sidecar {
            sidecar_restarts += c["restartCount"].as_i64().unwrap_or(0);
            last_sidecar_restart = later(last_sidecar_restart, c);
        }
        let terminated = &c["state"]["terminated"];
        if terminated.is_object() && terminated["exitCode"].as_i64().unwrap_or(0) == 0 {
            continue;
        }
        if sidecar && c["started"] == true {
            if c["ready"] == true {
                ready += 1;
            }
            continue;
        }
        let waiting = c["state"]["waiting"]["reason"].as_str().unwrap_or("");
        reason = if terminated.is_object() {
            terminated_reason(terminated, "Init:")
        } else if !waiting.is_empty() && waiting != "PodInitializing" {
            format!("Init:{waiting}")
        } else {
            format!("Init:{i}/{}", init_specs.len())
        };
        initializing = true;
        break;
    }

    let initialized = conditions
        .iter()
        .any(|c| c["type"] == "Initialized" && c["status"] == "True");
    if !initializing || initialized {
        restarts = sidecar_restarts;
        last_restart = last_sidecar_restart;
        let mut has_running = false;
        let statuses = status["containerStatuses"].as_array().unwrap_or(&empty);
        for c in statuses.iter().rev() {
            restarts += c["restartCount"].as_i64().unwrap_or(0);
            last_restart = later(last_restart, c);
            let waiting = c["state"]["waiting"]["reason"].as_str().unwrap_or("");
            let terminated = &c["state"]["terminated"];
            if !waiting.is_empty() {
                reason = waiting.to_string();
            } else if terminated.is_object() {
                reason = terminated_reason(terminated, "");
            } else if c["ready"] == true && c["state"]["running"].is_object() {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            let pod_ready = conditions
                .iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True");
            reason = if pod_ready { "Running" } else { "NotReady" }.into();
        }
    }

    if meta::is_deleting(o) {
        if status["reason"] == "NodeLost" {
            reason = "Unknown".into();
        } else if !matches!(phase, "Succeeded" | "Failed") {
            reason = "Terminating".into();
        }
    }

    let restarts_cell = match last_restart {
        Some(t) if restarts != 0 => {
            let secs = (chrono::Utc::now() - t.with_timezone(&chrono::Utc)).num_seconds();
            format!("{restarts} ({} ago)", human_duration(secs))
        }
        _ => restarts.to_string(),
    };
    let ip = status["podIPs"][0]["ip"]
        .as_str()
        .filter(|s| !s.is_empty())
        .or_else(|| status["podIP"].as_str().filter(|s| !s.is_empty()))
        .unwrap_or("<none>");
    let node = spec["nodeName"]
        .as_str()
        .filter(|s| !s.is_empty())
        .unwrap_or("<none>");
    let nominated = status["nominatedNodeName"]
        .as_str()
        .filter(|s| !s.is_empty())
        .unwrap_or("<none>");
    let gates = match spec["readinessGates"].as_array().filter(|g| !g.is_empty()) {
        None => "<none>".to_string(),
        Some(g) => {
            let ok = g
                .iter()
                .filter(|gate| {
                    conditions
                        .iter()
                        .find(|c| c["type"] == gate["conditionType"])
                        .is_some_and(|c| c["status"] == "True")
                })
                .count();
            format!("{ok}/{}", g.len())
        }
    };
    vec![
        name(o),
        json!(format!("{ready}/{total}")),
        json!(reason),
        json!(restarts_cell),
        age(o),
        json!(ip),
        json!(node),
        json!(nominated),
        json!(gates),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(status: Value) -> Value {
        json!({
            "metadata": {"name": "p", "creationTimestamp": "2020-01-01T00:00:00Z"},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}],
                     "initContainers": [{"name": "i"}]},
            "status": status,
        })
    }

    #[test]
    fn statuses_are_worded_as_kubectl_shows_them() {
        let p = pod(json!({"phase": "Pending", "initContainerStatuses": [
            {"name": "i", "state": {"waiting": {"reason": "PodInitializing"}}, "restartCount": 0}]}));
        assert_eq!(pod_cells(&p)[2], "Init:0/1");
        let p = pod(json!({"phase": "Pending", "initContainerStatuses": [
            {"name": "i", "state": {"terminated": {"exitCode": 2}}, "restartCount": 1}]}));
        assert_eq!(pod_cells(&p)[2], "Init:ExitCode:2");
        let p = pod(json!({"phase": "Running", "containerStatuses": [
            {"name": "a", "ready": true, "state": {"running": {}}, "restartCount": 0},
            {"name": "b", "ready": false, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
             "restartCount": 3,
             "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2020-01-01T00:00:00Z"}}}]}));
        let cells = pod_cells(&p);
        assert_eq!(cells[1], "1/2");
        assert_eq!(cells[2], "CrashLoopBackOff");
        assert!(cells[3].as_str().unwrap().starts_with("3 ("), "{cells:?}");
        let p = pod(
            json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}],
            "containerStatuses": [
            {"name": "a", "ready": true, "state": {"running": {}}},
            {"name": "b", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}),
        );
        assert_eq!(pod_cells(&p)[2], "NotReady");
        let mut p = pod(json!({"phase": "Running"}));
        p["metadata"]["deletionTimestamp"] = json!("2020-01-01T00:00:00Z");
        assert_eq!(pod_cells(&p)[2], "Terminating");
        let mut p = pod(json!({"phase": "Succeeded"}));
        p["metadata"]["deletionTimestamp"] = json!("2020-01-01T00:00:00Z");
        assert_eq!(pod_cells(&p)[2], "Succeeded");
    }

    #[test]
    fn sidecars_count_as_containers() {
        let mut p = pod(json!({"phase": "Running", "initContainerStatuses": [
            {"name": "i", "started": true, "ready": true, "state": {"running": {}}}],
            "containerStatuses": [
            {"name": "a", "ready": true, "state": {"running": {}}},
            {"name": "b", "ready": true, "state": {"running": {}}}]}));
        p["spec"]["initContainers"][0]["restartPolicy"] = json!("Always");
        let cells = pod_cells(&p);
        assert_eq!(cells[1], "3/3");
        assert_eq!(cells[2], "Running");
        assert_eq!(cells[5], "<none>");
    }
}
