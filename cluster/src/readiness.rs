//! Whether an object is ready, judged from its status as helm's `--wait` does, and
//! waiting for a set of objects by watching them.

use std::time::Duration;

use futures::StreamExt as _;
use kube::api::{Api, ListParams};
use kube::runtime::{WatchStreamExt as _, watcher};
use serde_json::Value;

use crate::apply::Target;

/// How far along an object is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    Ready,
    /// Not ready yet; why, in words.
    Pending(String),
    /// Will not become ready (a failed Job when waiting for jobs).
    Failed(String),
}

impl State {
    pub fn is_ready(&self) -> bool {
        matches!(self, State::Ready)
    }
}

/// The readiness of one object from its kind and content (status included).
pub fn check(kind: &str, object: &Value, wait_for_jobs: bool) -> State {
    let status = &object["status"];
    let spec = &object["spec"];
    match kind {
        "Deployment" => deployment(object),
        "StatefulSet" => stateful_set(object),
        "DaemonSet" => daemon_set(object),
        "ReplicaSet" | "ReplicationController" => {
            if let Some(pending) = unobserved(object) {
                return pending;
            }
            let want = int(&spec["replicas"]).unwrap_or(1);
            let ready = int(&status["readyReplicas"]).unwrap_or(0);
            if ready < want {
                return State::Pending(format!("{ready} of {want} replicas ready"));
            }
            State::Ready
        }
        "Pod" => pod(object),
        "Job" if wait_for_jobs => job(object),
        "PersistentVolumeClaim" => match status["phase"].as_str() {
            Some("Bound") => State::Ready,
            phase => State::Pending(format!(
                "claim is {}, not Bound",
                phase.unwrap_or("without a phase")
            )),
        },
        "Service" => service(object),
        "CustomResourceDefinition" => match condition(object, "Established") {
            Some(("True", _)) => State::Ready,
            _ => State::Pending("not yet established".to_string()),
        },
        "APIService" => match condition(object, "Available") {
            Some(("True", _)) => State::Ready,
            Some((_, message)) if !message.is_empty() => State::Pending(message.to_string()),
            _ => State::Pending("not yet available".to_string()),
        },
        // As helm's --wait (kstatus) judges it: ready once the disruption controller has
        // observed the latest generation, when the status says which one it observed
        // (helm waits for no status to appear); the pods it counts are waited for as
        // their own workloads'.
        "PodDisruptionBudget" => match status.get("observedGeneration") {
            Some(_) => unobserved(object).unwrap_or(State::Ready),
            None => State::Ready,
        },
        _ => match condition(object, "Ready") {
            Some(("False", message)) | Some(("Unknown", message)) => {
                State::Pending(if message.is_empty() {
                    "Ready condition is not True".to_string()
                } else {
                    message.to_string()
                })
            }
            _ => State::Ready,
        },
    }
}

fn int(value: &Value) -> Option<i64> {
    value.as_i64()
}

/// `(status, message)` of the condition of this type.
fn condition<'a>(object: &'a Value, kind: &str) -> Option<(&'a str, &'a str)> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
        .map(|c| {
            (
                c["status"].as_str().unwrap_or(""),
                c["message"].as_str().unwrap_or(""),
            )
        })
}

/// Pending while the controller has not seen the latest spec.
fn unobserved(object: &Value) -> Option<State> {
    let generation = int(&object["metadata"]["generation"])?;
    let observed = int(&object["status"]["observedGeneration"]).unwrap_or(0);
    (observed < generation).then(|| {
        State::Pending(format!(
            "waiting for the controller to observe generation {generation}"
        ))
    })
}

/// An int-or-percent field scaled to `total` (Kubernetes' intstr rules).
fn scaled(value: &Value, default: &str, total: i64, round_up: bool) -> i64 {
    match value {
        Value::Number(n) => n.as_i64().unwrap_or(0),
        Value::String(s) => percent(s, total, round_up),
        _ => percent(default, total, round_up),
    }
}

fn percent(text: &str, total: i64, round_up: bool) -> i64 {
    let Some(p) = text.strip_suffix('%').and_then(|p| p.parse::<i64>().ok()) else {
        return text.parse().unwrap_or(0);
    };
    let product = p * total;
    if round_up {
        (product + 99) / 100
    } else {
        product / 100
    }
}

/// A Deployment is ready as Helm 4's default waiter (kstatus) sees it: the rollout has
/// finished, so every replica runs the new template, no old pod is left, and the
/// controller reports the new ReplicaSet available. (Helm 3's waiter was looser: it let a
/// rollout be "ready" while old pods still served and up to maxUnavailable new ones were
/// missing, so a new template that never turns ready passed `--wait`.)
fn deployment(object: &Value) -> State {
    let (spec, status) = (&object["spec"], &object["status"]);
    if spec["paused"].as_bool() == Some(true) {
        return State::Ready;
    }
    if let Some(pending) = unobserved(object) {
        return pending;
    }
    if let Some(("False", message)) = condition(object, "Progressing")
        .filter(|_| condition_reason(object, "Progressing") == Some("ProgressDeadlineExceeded"))
    {
        // Still pending, not failed: helm keeps waiting until its timeout.
        return State::Pending(format!("progress deadline exceeded: {message}"));
    }
    let want = int(&spec["replicas"]).unwrap_or(1);
    let count = |field: &str| int(&status[field]).unwrap_or(0);
    let (total, updated) = (count("replicas"), count("updatedReplicas"));
    let (available, ready) = (count("availableReplicas"), count("readyReplicas"));
    let pending = if total < want {
        format!("{total} of {want} replicas created")
    } else if updated < want {
        format!("{updated} of {want} replicas updated")
    } else if total > want {
        format!("{} old replicas pending termination", total - want)
    } else if available < updated {
        format!("{available} of {updated} updated replicas available")
    } else if ready < want {
        format!("{ready} of {want} replicas ready")
    } else if condition_reason(object, "Progressing") != Some("NewReplicaSetAvailable") {
        "the new ReplicaSet is not available yet".to_string()
    } else if !matches!(condition(object, "Available"), Some(("True", _))) {
        "the Deployment is not available yet".to_string()
    } else {
        return State::Ready;
    };
    State::Pending(pending)
}

fn condition_reason<'a>(object: &'a Value, kind: &str) -> Option<&'a str> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)?["reason"]
        .as_str()
}

fn stateful_set(object: &Value) -> State {
    let (spec, status) = (&object["spec"], &object["status"]);
    if spec["updateStrategy"]["type"].as_str() == Some("OnDelete") {
        return State::Ready;
    }
    if let Some(pending) = unobserved(object) {
        return pending;
    }
    let replicas = int(&spec["replicas"]).unwrap_or(1);
    let partition = int(&spec["updateStrategy"]["rollingUpdate"]["partition"]).unwrap_or(0);
    let expected = replicas - partition;
    let updated = int(&status["updatedReplicas"]).unwrap_or(0);
    if updated < expected {
        return State::Pending(format!("{updated} of {expected} replicas updated"));
    }
    let ready = int(&status["readyReplicas"]).unwrap_or(0);
    if ready != replicas {
        return State::Pending(format!("{ready} of {replicas} replicas ready"));
    }
    if partition == 0 && status["currentRevision"] != status["updateRevision"] {
        return State::Pending("the update has not rolled out to every pod".to_string());
    }
    State::Ready
}

fn daemon_set(object: &Value) -> State {
    let (spec, status) = (&object["spec"], &object["status"]);
    if spec["updateStrategy"]["type"].as_str() == Some("OnDelete") {
        return State::Ready;
    }
    if let Some(pending) = unobserved(object) {
        return pending;
    }
    let desired = int(&status["desiredNumberScheduled"]).unwrap_or(0);
    let updated = int(&status["updatedNumberScheduled"]).unwrap_or(0);
    if updated < desired {
        return State::Pending(format!("{updated} of {desired} pods updated"));
    }
    let unavailable = scaled(
        &spec["updateStrategy"]["rollingUpdate"]["maxUnavailable"],
        "1",
        desired,
        true,
    );
    let expected = desired - unavailable;
    let ready = int(&status["numberReady"]).unwrap_or(0);
    if ready < expected {
        return State::Pending(format!("{ready} of {desired} pods ready"));
    }
    State::Ready
}

fn pod(object: &Value) -> State {
    if object["status"]["phase"] == "Succeeded" {
        return State::Ready;
    }
    match condition(object, "Ready") {
        Some(("True", _)) => State::Ready,
        _ => State::Pending(pod_problem(object).unwrap_or_else(|| {
            format!(
                "pod is {}, not ready",
                object["status"]["phase"].as_str().unwrap_or("Pending")
            )
        })),
    }
}

/// What keeps a pod from running: a container's waiting reason (CrashLoopBackOff,
/// ImagePullBackOff...) with its message, or why it is not scheduled.
pub fn pod_problem(pod: &Value) -> Option<String> {
    let status = &pod["status"];
    for list in ["initContainerStatuses", "containerStatuses"] {
        for container in status[list].as_array().into_iter().flatten() {
            let name = container["name"].as_str().unwrap_or("");
            let waiting = &container["state"]["waiting"];
            if let Some(reason) = waiting["reason"].as_str()
                && reason != "ContainerCreating"
                && reason != "PodInitializing"
            {
                let message = waiting["message"].as_str().unwrap_or("");
                return Some(join(&format!("container {name}: {reason}"), message));
            }
            let terminated = &container["state"]["terminated"];
            if let Some(reason) = terminated["reason"].as_str()
                && terminated["exitCode"].as_i64().unwrap_or(0) != 0
            {
                return Some(format!(
                    "container {name}: {reason} (exit code {})",
                    terminated["exitCode"]
                ));
            }
        }
    }
    if let Some(c) = status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "PodScheduled" && c["status"] == "False")
    {
        let reason = c["reason"].as_str().unwrap_or("Unschedulable");
        return Some(join(reason, c["message"].as_str().unwrap_or("")));
    }
    None
}

fn join(reason: &str, message: &str) -> String {
    if message.is_empty() {
        reason.to_string()
    } else {
        format!("{reason}: {message}")
    }
}

fn job(object: &Value) -> State {
    let (spec, status) = (&object["spec"], &object["status"]);
    if let Some(("True", message)) = condition(object, "Failed") {
        return State::Failed(join("job failed", message));
    }
    let failed = int(&status["failed"]).unwrap_or(0);
    let backoff_limit = int(&spec["backoffLimit"]).unwrap_or(6);
    if failed > backoff_limit {
        return State::Failed(format!(
            "job failed: {failed} failed pods, more than its backoffLimit {backoff_limit}"
        ));
    }
    if let Some(("True", _)) = condition(object, "Complete") {
        return State::Ready;
    }
    if let Some(completions) = int(&spec["completions"]) {
        let succeeded = int(&status["succeeded"]).unwrap_or(0);
        if succeeded < completions {
            return State::Pending(format!("{succeeded} of {completions} completions"));
        }
    }
    State::Ready
}

fn service(object: &Value) -> State {
    let spec = &object["spec"];
    let kind = spec["type"].as_str().unwrap_or("ClusterIP");
    if kind == "ExternalName" {
        return State::Ready;
    }
    if spec["clusterIP"].as_str().unwrap_or("").is_empty() {
        return State::Pending("no cluster IP assigned yet".to_string());
    }
    if kind == "LoadBalancer" {
        let has_external_ips = spec["externalIPs"]
            .as_array()
            .is_some_and(|a| !a.is_empty());
        let has_ingress = object["status"]["loadBalancer"]["ingress"]
            .as_array()
            .is_some_and(|a| !a.is_empty());
        if !has_external_ips && !has_ingress {
            return State::Pending("waiting for a load balancer address".to_string());
        }
    }
    State::Ready
}

/// Told about each change of an object's readiness while waiting.
pub trait Progress: Send + Sync {
    fn changed(&self, object: &str, state: &State);

    /// The API server stopped answering; told once, however many watches fail, until
    /// [`connection_restored`](Self::connection_restored).
    fn connection_lost(&self, _words: &str) {}

    /// A watch got an answer again after [`connection_lost`](Self::connection_lost).
    fn connection_restored(&self) {}
}

/// No progress reporting.
pub struct Quiet;

impl Progress for Quiet {
    fn changed(&self, _: &str, _: &State) {}
}

/// One object that was not ready when the wait ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotReady {
    /// `Kind/name`.
    pub object: String,
    pub namespace: Option<String>,
    /// Its last state's reason.
    pub reason: String,
    /// What its pods were stuck on and its latest warning events.
    pub details: Vec<String>,
}

/// Why a wait ended unsuccessfully.
#[derive(Debug, thiserror::Error)]
pub enum WaitError {
    #[error(
        "timed out after {} waiting for {}",
        go_duration(*timeout),
        describe_pending(pending)
    )]
    Timeout {
        timeout: Duration,
        pending: Vec<NotReady>,
    },
    /// The API server stopped answering during the wait and had not come back when the
    /// time was up.
    #[error(
        "timed out after {} waiting for {}: the API server stopped answering during the wait: {words}",
        go_duration(*timeout),
        pending.join(", ")
    )]
    ConnectionLost {
        timeout: Duration,
        /// `Kind/name` of each object not known to be ready.
        pending: Vec<String>,
        /// Why the server could not be reached, naming its address.
        words: String,
    },
    #[error("{object}: {reason}")]
    Failed { object: String, reason: String },
}

fn describe_pending(pending: &[NotReady]) -> String {
    pending
        .iter()
        .map(|p| {
            let mut line = format!("{}: {}", p.object, p.reason);
            for d in &p.details {
                line.push_str("; ");
                line.push_str(d);
            }
            line
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A duration as Go's `time.Duration` prints it (`10s`, `5m0s`, `1m30s`, `1.5s`,
/// `500ms`), which is how helm users write `--timeout`.
pub fn go_duration(duration: Duration) -> String {
    let nanos = duration.as_nanos();
    if nanos == 0 {
        return "0s".to_string();
    }
    if nanos < 1_000_000_000 {
        let (unit, scale) = if nanos < 1_000 {
            ("ns", 1)
        } else if nanos < 1_000_000 {
            ("µs", 1_000)
        } else {
            ("ms", 1_000_000)
        };
        return format!("{}{unit}", decimal(nanos, scale));
    }
    let hours = nanos / 3_600_000_000_000;
    let minutes = nanos / 60_000_000_000 % 60;
    let seconds = decimal(nanos % 60_000_000_000, 1_000_000_000);
    match (hours, minutes) {
        (0, 0) => format!("{seconds}s"),
        (0, m) => format!("{m}m{seconds}s"),
        (h, m) => format!("{h}h{m}m{seconds}s"),
    }
}

/// `value / scale` with the fraction's trailing zeros dropped.
fn decimal(value: u128, scale: u128) -> String {
    let whole = value / scale;
    let fraction = value % scale;
    if fraction == 0 {
        return whole.to_string();
    }
    let width = scale.ilog10() as usize;
    let digits = format!("{fraction:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// Waits until every target is ready, a Job fails (with `wait_for_jobs`), or `timeout`
/// passes. Each object is watched, so a change is seen when it happens; on timeout the
/// error lists every object not ready, why, and what its pods are stuck on.
pub async fn wait(
    client: &kube::Client,
    targets: &[Target],
    timeout: Duration,
    wait_for_jobs: bool,
    progress: &dyn Progress,
) -> Result<(), WaitError> {
    let deadline = tokio::time::Instant::now() + timeout;
    let mut states: Vec<State> = targets
        .iter()
        .map(|_| State::Pending("not observed yet".to_string()))
        .collect();
    let mut last: Vec<Option<Value>> = vec![None; targets.len()];
    let streams = targets.iter().enumerate().map(|(index, target)| {
        let config = watcher::Config::default().fields(&format!("metadata.name={}", target.name));
        // Backing off between tries: a watch of a server that went away would otherwise
        // be tried again at once, forever, spinning a core until the timeout.
        watcher::watcher(target.api(client), config)
            .default_backoff()
            .map(move |event| (index, event))
            .boxed()
    });
    let mut events = futures::stream::select_all(streams);
    // Why the API server cannot be reached, while it cannot.
    let mut lost: Option<String> = None;
    while states.iter().any(|s| !s.is_ready()) {
        let next = tokio::time::timeout_at(deadline, events.next()).await;
        let Ok(Some((index, event))) = next else {
            break;
        };
        let target = &targets[index];
        if let Err(error) = &event
            && crate::kube_error::watch_is_unreachable(error)
        {
            // Every watch fails alike; the objects keep their last known state.
            if lost.is_none() {
                let words = crate::kube_error::describe_watch(error);
                progress.connection_lost(&words);
                lost = Some(words);
            }
            continue;
        }
        if lost.take().is_some() {
            progress.connection_restored();
        }
        let state = match event {
            Ok(watcher::Event::Apply(object) | watcher::Event::InitApply(object)) => {
                let value = serde_json::to_value(&object).unwrap_or(Value::Null);
                let state = check(&target.resource.api.kind, &value, wait_for_jobs);
                last[index] = Some(value);
                state
            }
            Ok(watcher::Event::Delete(_)) => {
                last[index] = None;
                State::Pending("deleted".to_string())
            }
            Ok(watcher::Event::Init | watcher::Event::InitDone) => continue,
            // The watcher starts again by itself; the error is the reason until then.
            Err(error) => State::Pending(format!(
                "watch failed: {}",
                crate::kube_error::describe_watch(&error)
            )),
        };
        if let State::Failed(reason) = &state {
            progress.changed(&target.describe(), &state);
            return Err(WaitError::Failed {
                object: target.describe(),
                reason: reason.clone(),
            });
        }
        if state != states[index] {
            progress.changed(&target.describe(), &state);
            states[index] = state;
        }
    }
    if states.iter().all(State::is_ready) {
        return Ok(());
    }
    if let Some(words) = lost {
        let pending = targets
            .iter()
            .zip(&states)
            .filter(|(_, state)| !state.is_ready())
            .map(|(target, _)| target.describe())
            .collect();
        return Err(WaitError::ConnectionLost {
            timeout,
            pending,
            words,
        });
    }
    let mut pending = Vec::new();
    for (index, target) in targets.iter().enumerate() {
        let State::Pending(reason) = &states[index] else {
            continue;
        };
        let reason = if last[index].is_none() && reason == "not observed yet" {
            "not found".to_string()
        } else {
            reason.clone()
        };
        let details = match &last[index] {
            Some(object) => diagnose(client, target, object).await,
            None => Vec::new(),
        };
        pending.push(NotReady {
            object: target.describe(),
            namespace: target.namespace.clone(),
            reason,
            details,
        });
    }
    Err(WaitError::Timeout { timeout, pending })
}

/// What a not-ready workload's pods are stuck on (a pod's own problem is already its
/// reason), and the latest warning event about it or them.
async fn diagnose(client: &kube::Client, target: &Target, object: &Value) -> Vec<String> {
    let mut details = Vec::new();
    let Some(namespace) = &target.namespace else {
        return details;
    };
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client.clone(), namespace);
    let mut pod_names = Vec::new();
    if target.resource.api.kind == "Pod" {
        pod_names.push(target.name.clone());
    } else if let Some(labels) = object["spec"]["selector"]["matchLabels"]
        .as_object()
        .or_else(|| object["spec"]["selector"].as_object())
        .filter(|_| target.resource.api.kind != "Service")
    {
        let selector = labels
            .iter()
            .filter_map(|(k, v)| v.as_str().map(|v| format!("{k}={v}")))
            .collect::<Vec<_>>()
            .join(",");
        if !selector.is_empty()
            && let Ok(list) = pods.list(&ListParams::default().labels(&selector)).await
        {
            for pod in list.items {
                let value = serde_json::to_value(&pod).unwrap_or(Value::Null);
                let name = pod.metadata.name.clone().unwrap_or_default();
                if let Some(problem) = pod_problem(&value) {
                    details.push(format!("pod {name}: {problem}"));
                }
                pod_names.push(name);
            }
        }
    }
    let events: Api<k8s_openapi::api::core::v1::Event> = Api::namespaced(client.clone(), namespace);
    if let Ok(list) = events.list(&ListParams::default()).await {
        let mut warnings: Vec<_> = list
            .items
            .into_iter()
            .filter(|e| e.type_.as_deref() == Some("Warning"))
            .filter(|e| {
                let involved = e.involved_object.name.as_deref().unwrap_or("");
                involved == target.name || pod_names.iter().any(|p| p == involved)
            })
            .collect();
        warnings.sort_by_key(|e| {
            e.last_timestamp
                .as_ref()
                .map(|t| t.0.as_second())
                .or_else(|| e.event_time.as_ref().map(|t| t.0.as_second()))
                .unwrap_or(0)
        });
        if let Some(latest) = warnings.last() {
            details.push(format!(
                "last warning: {} {}: {}",
                latest.involved_object.name.as_deref().unwrap_or(""),
                latest.reason.as_deref().unwrap_or(""),
                latest.message.as_deref().unwrap_or("")
            ));
        }
    }
    details
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deploy(replicas: i64, strategy: Value, status: Value) -> Value {
        json!({
            "metadata": {"generation": 2},
            "spec": {"replicas": replicas, "strategy": strategy},
            "status": status,
        })
    }

    fn rolled_out(replicas: i64) -> Value {
        json!({
            "observedGeneration": 2, "replicas": replicas, "updatedReplicas": replicas,
            "availableReplicas": replicas, "readyReplicas": replicas,
            "conditions": [
                {"type": "Available", "status": "True"},
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
            ],
        })
    }

    #[test]
    fn durations_read_as_go_prints_them() {
        assert_eq!(go_duration(Duration::from_secs(10)), "10s");
        assert_eq!(go_duration(Duration::from_secs(300)), "5m0s");
        assert_eq!(go_duration(Duration::from_secs(90)), "1m30s");
        assert_eq!(go_duration(Duration::from_secs(3600)), "1h0m0s");
        assert_eq!(go_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(go_duration(Duration::from_millis(500)), "500ms");
        assert_eq!(go_duration(Duration::ZERO), "0s");
    }

    #[test]
    fn deployments_are_ready_once_the_rollout_is_complete() {
        assert_eq!(
            check("Deployment", &deploy(4, json!({}), rolled_out(4)), false),
            State::Ready
        );
        // Mid-rollout: the new pod is not ready while the old one still serves.
        let mut status = rolled_out(1);
        status["replicas"] = json!(2);
        status["readyReplicas"] = json!(1);
        status["conditions"][1]["reason"] = json!("ReplicaSetUpdated");
        assert_eq!(
            check("Deployment", &deploy(1, json!({}), status), false),
            State::Pending("1 old replicas pending termination".into())
        );
        let mut status = rolled_out(4);
        status["availableReplicas"] = json!(3);
        assert_eq!(
            check("Deployment", &deploy(4, json!({}), status), false),
            State::Pending("3 of 4 updated replicas available".into())
        );
        let mut status = rolled_out(2);
        status["conditions"][1]["reason"] = json!("ReplicaSetUpdated");
        assert!(!check("Deployment", &deploy(2, json!({}), status), false).is_ready());
        let mut status = rolled_out(2);
        status["conditions"][1] = json!({"type": "Progressing", "status": "False",
            "reason": "ProgressDeadlineExceeded", "message": "ReplicaSet \"web-1\" has timed out progressing."});
        assert!(matches!(
            check("Deployment", &deploy(2, json!({}), status), false),
            State::Pending(reason) if reason.starts_with("progress deadline exceeded: ")
        ));
    }

    #[test]
    fn disruption_budgets_wait_only_for_an_observed_generation() {
        let pdb = |status: Value| json!({"metadata": {"generation": 2}, "status": status});
        assert_eq!(
            check("PodDisruptionBudget", &pdb(json!({})), false),
            State::Ready
        );
        let behind = pdb(json!({"observedGeneration": 1}));
        assert!(!check("PodDisruptionBudget", &behind, false).is_ready());
        let seen = pdb(json!({"observedGeneration": 2, "currentHealthy": 0, "desiredHealthy": 1}));
        assert_eq!(check("PodDisruptionBudget", &seen, false), State::Ready);
    }

    #[test]
    fn unobserved_generations_are_pending() {
        let status = json!({"observedGeneration": 1, "updatedReplicas": 1, "availableReplicas": 1});
        let state = check("Deployment", &deploy(1, json!({}), status), false);
        assert_eq!(
            state,
            State::Pending("waiting for the controller to observe generation 2".into())
        );
    }

    #[test]
    fn stateful_sets_need_every_replica_and_the_update_revision() {
        let mut sts = json!({
            "metadata": {"generation": 1},
            "spec": {"replicas": 2},
            "status": {"observedGeneration": 1, "updatedReplicas": 2, "readyReplicas": 2,
                       "currentRevision": "a", "updateRevision": "b"},
        });
        assert!(!check("StatefulSet", &sts, false).is_ready());
        sts["status"]["currentRevision"] = json!("b");
        assert!(check("StatefulSet", &sts, false).is_ready());
        sts["status"]["readyReplicas"] = json!(1);
        assert_eq!(
            check("StatefulSet", &sts, false),
            State::Pending("1 of 2 replicas ready".into())
        );
    }

    #[test]
    fn daemon_sets_allow_their_max_unavailable() {
        let ds = json!({
            "spec": {},
            "status": {"desiredNumberScheduled": 3, "updatedNumberScheduled": 3, "numberReady": 2},
        });
        assert!(check("DaemonSet", &ds, false).is_ready());
        let mut ds = ds;
        ds["status"]["numberReady"] = json!(1);
        assert!(!check("DaemonSet", &ds, false).is_ready());
    }

    #[test]
    fn pods_report_their_containers_waiting_reason() {
        let pod = json!({"status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": "False"}],
            "containerStatuses": [{"name": "app", "state": {"waiting": {
                "reason": "CrashLoopBackOff", "message": "back-off 10s restarting failed container"}}}]}});
        assert_eq!(
            check("Pod", &pod, false),
            State::Pending(
                "container app: CrashLoopBackOff: back-off 10s restarting failed container".into()
            )
        );
        let done = json!({"status": {"phase": "Succeeded"}});
        assert!(check("Pod", &done, false).is_ready());
    }

    #[test]
    fn jobs_count_only_when_waiting_for_jobs() {
        let running = json!({"spec": {"completions": 1}, "status": {"active": 1}});
        assert!(check("Job", &running, false).is_ready());
        assert!(!check("Job", &running, true).is_ready());
        let failed = json!({"spec": {"backoffLimit": 0}, "status": {"failed": 1}});
        assert!(matches!(check("Job", &failed, true), State::Failed(_)));
        let complete = json!({"spec": {"completions": 1}, "status": {"succeeded": 1,
            "conditions": [{"type": "Complete", "status": "True"}]}});
        assert!(check("Job", &complete, true).is_ready());
    }

    #[test]
    fn claims_services_crds_and_conditions() {
        assert!(
            !check(
                "PersistentVolumeClaim",
                &json!({"status": {"phase": "Pending"}}),
                false
            )
            .is_ready()
        );
        assert!(
            check(
                "PersistentVolumeClaim",
                &json!({"status": {"phase": "Bound"}}),
                false
            )
            .is_ready()
        );
        let lb = json!({"spec": {"type": "LoadBalancer", "clusterIP": "10.0.0.1"}, "status": {}});
        assert!(!check("Service", &lb, false).is_ready());
        let lb = json!({"spec": {"type": "LoadBalancer", "clusterIP": "10.0.0.1"},
                        "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}});
        assert!(check("Service", &lb, false).is_ready());
        assert!(check("Service", &json!({"spec": {"type": "ExternalName"}}), false).is_ready());
        let crd = json!({"status": {"conditions": [{"type": "Established", "status": "True"}]}});
        assert!(check("CustomResourceDefinition", &crd, false).is_ready());
        assert!(!check("CustomResourceDefinition", &json!({}), false).is_ready());
        let widget = json!({"status": {"conditions": [{"type": "Ready", "status": "False", "message": "warming up"}]}});
        assert_eq!(
            check("Widget", &widget, false),
            State::Pending("warming up".into())
        );
        assert!(check("ConfigMap", &json!({"data": {}}), false).is_ready());
    }
}
