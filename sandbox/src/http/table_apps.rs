//! Rows of workloads: deployments, replica sets, stateful sets, daemon sets, replication
//! controllers, controller revisions, jobs, cron jobs, autoscalers and disruption budgets.

use serde_json::{Value, json};

use super::table::{
    AGE, CONTAINERS, Cells, Column, IMAGES, NAME, Printer, age, between, bool_ptr, col,
    condition_true, containers, format_label_selector, format_labels, human_duration, int,
    int_or_string, len, name, selector_string, since, text, wide,
};
use crate::meta;

const SELECTOR: Column = wide("Selector", "string", "The label selector of the pods.");

const DEPLOYMENT: &[Column] = &[
    NAME,
    col("Ready", "string", "Number of the pod with ready state"),
    col(
        "Up-to-date",
        "string",
        "Total number of non-terminating pods targeted by this deployment that have the desired template spec.",
    ),
    col(
        "Available",
        "string",
        "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.",
    ),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];

const REPLICA_SET: &[Column] = &[
    NAME,
    col(
        "Desired",
        "integer",
        "Replicas is the number of desired pods.",
    ),
    col(
        "Current",
        "integer",
        "Replicas is the most recently observed number of non-terminating pods.",
    ),
    col(
        "Ready",
        "integer",
        "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.",
    ),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];

const STATEFUL_SET: &[Column] = &[
    NAME,
    col("Ready", "string", "Number of the pod with ready state"),
    AGE,
    CONTAINERS,
    IMAGES,
];

const DAEMON_SET: &[Column] = &[
    NAME,
    col(
        "Desired",
        "integer",
        "The total number of nodes that should be running the daemon pod.",
    ),
    col(
        "Current",
        "integer",
        "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.",
    ),
    col(
        "Ready",
        "integer",
        "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.",
    ),
    col(
        "Up-to-date",
        "integer",
        "The total number of nodes that are running updated daemon pod",
    ),
    col(
        "Available",
        "integer",
        "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available.",
    ),
    col(
        "Node Selector",
        "string",
        "NodeSelector is a selector which must be true for the pod to fit on a node.",
    ),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];

const REPLICATION_CONTROLLER: &[Column] = &[
    NAME,
    col(
        "Desired",
        "integer",
        "Replicas is the number of desired replicas.",
    ),
    col(
        "Current",
        "integer",
        "Replicas is the most recently observed number of replicas.",
    ),
    col(
        "Ready",
        "integer",
        "The number of ready replicas for this replication controller.",
    ),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];

const CONTROLLER_REVISION: &[Column] = &[
    NAME,
    col("Controller", "string", "Controller of the object"),
    col(
        "Revision",
        "string",
        "Revision indicates the revision of the state represented by Data.",
    ),
    AGE,
];

const JOB: &[Column] = &[
    NAME,
    col("Status", "string", "Status of the job."),
    col(
        "Completions",
        "string",
        "The number of pods which reached phase Succeeded.",
    ),
    col("Duration", "string", "Time required to complete the job."),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];

const CRON_JOB: &[Column] = &[
    NAME,
    col(
        "Schedule",
        "string",
        "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.",
    ),
    col(
        "Timezone",
        "string",
        "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones.",
    ),
    col(
        "Suspend",
        "boolean",
        "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.",
    ),
    col(
        "Active",
        "integer",
        "A list of pointers to currently running jobs.",
    ),
    col(
        "Last Schedule",
        "string",
        "Information when was the last time the job was successfully scheduled.",
    ),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];

const HPA: &[Column] = &[
    NAME,
    col(
        "Reference",
        "string",
        "scaleTargetRef points to the target resource to scale.",
    ),
    col(
        "Targets",
        "string",
        "metrics contains the specifications for which to use to calculate the desired replica count.",
    ),
    col(
        "MinPods",
        "string",
        "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.",
    ),
    col(
        "MaxPods",
        "string",
        "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up.",
    ),
    col(
        "Replicas",
        "string",
        "currentReplicas is current number of replicas of pods managed by this autoscaler.",
    ),
    AGE,
];

const PDB: &[Column] = &[
    NAME,
    col(
        "Min Available",
        "string",
        "The minimum number of pods that must be available.",
    ),
    col(
        "Max Unavailable",
        "string",
        "The maximum number of pods that may be unavailable.",
    ),
    col(
        "Allowed Disruptions",
        "integer",
        "Calculated number of pods that may be disrupted at this time.",
    ),
    AGE,
];

pub fn printer(group: &str, plural: &str) -> Option<Printer> {
    let (columns, cells): (&'static [Column], Cells) = match (group, plural) {
        ("apps", "deployments") => (DEPLOYMENT, deployment),
        ("apps", "replicasets") => (REPLICA_SET, replica_set),
        ("apps", "statefulsets") => (STATEFUL_SET, stateful_set),
        ("apps", "daemonsets") => (DAEMON_SET, daemon_set),
        ("apps", "controllerrevisions") => (CONTROLLER_REVISION, controller_revision),
        ("", "replicationcontrollers") => (REPLICATION_CONTROLLER, replication_controller),
        ("batch", "jobs") => (JOB, job),
        ("batch", "cronjobs") => (CRON_JOB, cron_job),
        ("autoscaling", "horizontalpodautoscalers") => (HPA, hpa),
        ("policy", "poddisruptionbudgets") => (PDB, pdb),
        _ => return None,
    };
    Some(Printer {
        columns,
        cells,
        sort: None,
    })
}

fn deployment(o: &Value) -> Vec<Value> {
    let (spec, status) = (&o["spec"], &o["status"]);
    let (names, images) = containers(&spec["template"]["spec"]["containers"]);
    // A deployment with no selector selects nothing, printed as an empty string.
    let selector = selector_string(&spec["selector"]).unwrap_or_else(|| "<invalid>".into());
    vec![
        name(o),
        json!(format!(
            "{}/{}",
            int(&status["readyReplicas"]),
            int(&spec["replicas"])
        )),
        json!(int(&status["updatedReplicas"])),
        json!(int(&status["availableReplicas"])),
        age(o),
        names,
        images,
        json!(selector),
    ]
}

fn replica_set(o: &Value) -> Vec<Value> {
    let (spec, status) = (&o["spec"], &o["status"]);
    let (names, images) = containers(&spec["template"]["spec"]["containers"]);
    vec![
        name(o),
        json!(int(&spec["replicas"])),
        json!(int(&status["replicas"])),
        json!(int(&status["readyReplicas"])),
        age(o),
        names,
        images,
        json!(format_label_selector(&spec["selector"])),
    ]
}

fn stateful_set(o: &Value) -> Vec<Value> {
    let (spec, status) = (&o["spec"], &o["status"]);
    let (names, images) = containers(&spec["template"]["spec"]["containers"]);
    vec![
        name(o),
        json!(format!(
            "{}/{}",
            int(&status["readyReplicas"]),
            int(&spec["replicas"])
        )),
        age(o),
        names,
        images,
    ]
}

fn daemon_set(o: &Value) -> Vec<Value> {
    let (spec, status) = (&o["spec"], &o["status"]);
    let (names, images) = containers(&spec["template"]["spec"]["containers"]);
    vec![
        name(o),
        json!(int(&status["desiredNumberScheduled"])),
        json!(int(&status["currentNumberScheduled"])),
        json!(int(&status["numberReady"])),
        json!(int(&status["updatedNumberScheduled"])),
        json!(int(&status["numberAvailable"])),
        json!(format_labels(&spec["template"]["spec"]["nodeSelector"])),
        age(o),
        names,
        images,
        json!(format_label_selector(&spec["selector"])),
    ]
}

fn replication_controller(o: &Value) -> Vec<Value> {
    let (spec, status) = (&o["spec"], &o["status"]);
    let (names, images) = containers(&spec["template"]["spec"]["containers"]);
    vec![
        name(o),
        json!(int(&spec["replicas"])),
        json!(int(&status["replicas"])),
        json!(int(&status["readyReplicas"])),
        age(o),
        names,
        images,
        json!(format_labels(&spec["selector"])),
    ]
}

fn controller_revision(o: &Value) -> Vec<Value> {
    let controller = meta::meta(o)
        .and_then(|m| m.get("ownerReferences"))
        .and_then(Value::as_array)
        .and_then(|refs| refs.iter().find(|r| r["controller"] == true))
        .map_or_else(
            || "<none>".to_string(),
            |r| {
                let group =
                    crate::resources::split_api_version(r["apiVersion"].as_str().unwrap_or(""))
                        .0
                        .to_string();
                let kind = text(&r["kind"]);
                let gk = if group.is_empty() {
                    kind
                } else {
                    format!("{kind}.{group}")
                };
                format!("{}/{}", gk.to_lowercase(), text(&r["name"]))
            },
        );
    vec![
        name(o),
        json!(controller),
        json!(int(&o["revision"])),
        age(o),
    ]
}

fn job(o: &Value) -> Vec<Value> {
    let (spec, status) = (&o["spec"], &o["status"]);
    let succeeded = int(&status["succeeded"]);
    let completions = match spec["completions"].as_i64() {
        Some(c) => format!("{succeeded}/{c}"),
        None => match int(&spec["parallelism"]) {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let duration = if status["startTime"].is_null() {
        String::new()
    } else if status["completionTime"].is_null() {
        since(&status["startTime"])
    } else {
        between(&status["startTime"], &status["completionTime"])
            .map(human_duration)
            .unwrap_or_default()
    };
    let conditions = &status["conditions"];
    let state = if condition_true(conditions, "Complete") {
        "Complete"
    } else if condition_true(conditions, "Failed") {
        "Failed"
    } else if meta::is_deleting(o) {
        "Terminating"
    } else if condition_true(conditions, "Suspended") {
        "Suspended"
    } else if condition_true(conditions, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    let (names, images) = containers(&spec["template"]["spec"]["containers"]);
    vec![
        name(o),
        json!(state),
        json!(completions),
        json!(duration),
        age(o),
        names,
        images,
        json!(format_label_selector(&spec["selector"])),
    ]
}

fn cron_job(o: &Value) -> Vec<Value> {
    let (spec, status) = (&o["spec"], &o["status"]);
    let last = if status["lastScheduleTime"].is_null() {
        "<none>".to_string()
    } else {
        since(&status["lastScheduleTime"])
    };
    let template = &spec["jobTemplate"]["spec"];
    let (names, images) = containers(&template["template"]["spec"]["containers"]);
    vec![
        name(o),
        json!(text(&spec["schedule"])),
        json!(spec["timeZone"].as_str().unwrap_or("<none>")),
        json!(bool_ptr(&spec["suspend"])),
        json!(len(&status["active"])),
        json!(last),
        age(o),
        names,
        images,
        json!(format_label_selector(&template["selector"])),
    ]
}

fn pdb(o: &Value) -> Vec<Value> {
    let spec = &o["spec"];
    let or_na = |v: &Value| {
        if v.is_null() {
            "N/A".to_string()
        } else {
            int_or_string(v)
        }
    };
    vec![
        name(o),
        json!(or_na(&spec["minAvailable"])),
        json!(or_na(&spec["maxUnavailable"])),
        json!(int(&o["status"]["disruptionsAllowed"])),
        age(o),
    ]
}

fn hpa(o: &Value) -> Vec<Value> {
    let (spec, status) = (&o["spec"], &o["status"]);
    let target = &spec["scaleTargetRef"];
    let min = match spec["minReplicas"].as_i64() {
        Some(m) => m.to_string(),
        None => "<unset>".into(),
    };
    vec![
        name(o),
        json!(format!(
            "{}/{}",
            text(&target["kind"]),
            text(&target["name"])
        )),
        json!(hpa_targets(spec, status)),
        json!(min),
        json!(int(&spec["maxReplicas"])),
        json!(int(&status["currentReplicas"])),
        age(o),
    ]
}

/// The Targets cell: `current/target` per metric, at most two, as the API server prints
/// them; autoscaling/v1's CPU percentage reads as the v2 resource metric it converts to.
fn hpa_targets(spec: &Value, status: &Value) -> String {
    let (specs, statuses): (Vec<Value>, Vec<Value>) = match spec["metrics"].as_array() {
        Some(m) => (
            m.clone(),
            status["currentMetrics"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
        ),
        None => match spec["targetCPUUtilizationPercentage"].as_i64() {
            Some(t) => (
                vec![json!({"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": t}}})],
                match status["currentCPUUtilizationPercentage"].as_i64() {
                    Some(c) => vec![json!({"type": "Resource", "resource": {"name": "cpu",
                        "current": {"averageUtilization": c}}})],
                    None => Vec::new(),
                },
            ),
            None => (Vec::new(), Vec::new()),
        },
    };
    if specs.is_empty() {
        return "<none>".into();
    }
    let unknown = || "<unknown>".to_string();
    let quantity = |v: &Value| int_or_string(v);
    let mut list = Vec::new();
    for (i, m) in specs.iter().enumerate() {
        let st = statuses.get(i).cloned().unwrap_or(Value::Null);
        let entry = match m["type"].as_str().unwrap_or("") {
            "External" | "Object" => {
                let key = if m["type"] == "External" {
                    "external"
                } else {
                    "object"
                };
                let t = &m[key]["target"];
                let cur = &st[key]["current"];
                if !t["averageValue"].is_null() {
                    let c = if cur["averageValue"].is_null() {
                        unknown()
                    } else {
                        quantity(&cur["averageValue"])
                    };
                    format!("{c}/{} (avg)", quantity(&t["averageValue"]))
                } else {
                    let c = if st[key].is_null() {
                        unknown()
                    } else {
                        quantity(&cur["value"])
                    };
                    format!("{c}/{}", quantity(&t["value"]))
                }
            }
            "Pods" => {
                let c = if st["pods"].is_null() {
                    unknown()
                } else {
                    quantity(&st["pods"]["current"]["averageValue"])
                };
                format!("{c}/{}", quantity(&m["pods"]["target"]["averageValue"]))
            }
            ty @ ("Resource" | "ContainerResource") => {
                let key = if ty == "Resource" {
                    "resource"
                } else {
                    "containerResource"
                };
                let r = &m[key];
                let t = &r["target"];
                let cur = &st[key]["current"];
                let res = text(&r["name"]);
                if !t["averageValue"].is_null() {
                    let c = if st[key].is_null() {
                        unknown()
                    } else {
                        quantity(&cur["averageValue"])
                    };
                    format!("{res}: {c}/{}", quantity(&t["averageValue"]))
                } else {
                    let c = match cur["averageUtilization"].as_i64() {
                        Some(u) => format!("{u}%"),
                        None => unknown(),
                    };
                    let target = match t["averageUtilization"].as_i64() {
                        Some(u) => format!("{u}%"),
                        None => "<auto>".into(),
                    };
                    format!("{res}: {c}/{target}")
                }
            }
            _ => "<unknown type>".into(),
        };
        list.push(entry);
    }
    if list.len() > 2 {
        let more = list.len() - 2;
        return format!("{} + {more} more...", list[..2].join(", "));
    }
    list.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_show_status_completions_and_duration() {
        let j = json!({"metadata": {"name": "j"}, "spec": {"completions": 1, "parallelism": 1},
            "status": {"succeeded": 1, "startTime": "2024-01-01T00:00:00Z",
                       "completionTime": "2024-01-01T00:00:05Z",
                       "conditions": [{"type": "Complete", "status": "True"}]}});
        let c = job(&j);
        assert_eq!(
            (&c[1], &c[2], &c[3]),
            (&json!("Complete"), &json!("1/1"), &json!("5s"))
        );
        let j = json!({"metadata": {"name": "j"}, "spec": {"parallelism": 3}, "status": {}});
        let c = job(&j);
        assert_eq!(
            (&c[1], &c[2], &c[3]),
            (&json!("Running"), &json!("0/1 of 3"), &json!(""))
        );
    }

    #[test]
    fn cron_jobs_show_schedule_timezone_and_suspend() {
        let cj = json!({"metadata": {"name": "c"}, "spec": {"schedule": "*/5 * * * *", "suspend": false}});
        let c = cron_job(&cj);
        assert_eq!(
            &c[1..6],
            &[
                json!("*/5 * * * *"),
                json!("<none>"),
                json!("False"),
                json!(0),
                json!("<none>")
            ]
        );
    }

    #[test]
    fn autoscalers_show_targets() {
        let h = json!({"metadata": {"name": "h"}, "spec": {
            "scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 1, "maxReplicas": 5,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}]}, "status": {}});
        let c = hpa(&h);
        assert_eq!(
            &c[1..6],
            &[
                json!("Deployment/web"),
                json!("cpu: <unknown>/80%"),
                json!("1"),
                json!(5),
                json!(0)
            ]
        );
        let v1 = json!({"spec": {"targetCPUUtilizationPercentage": 50}, "status": {"currentCPUUtilizationPercentage": 10}});
        assert_eq!(hpa_targets(&v1["spec"], &v1["status"]), "cpu: 10%/50%");
    }

    #[test]
    fn revisions_name_their_controller() {
        let r = json!({"metadata": {"name": "r", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "controller": true}]}, "revision": 2});
        assert_eq!(controller_revision(&r)[1], "statefulset.apps/db");
    }
}
