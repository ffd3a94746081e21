//! Whole clusters compared: every object of a sandbox listed through kubectl, normalised
//! (what each API server allocates or stamps on its own replaced or dropped, see
//! `normalise` and `record` for the list and why), so that two sandboxes that went
//! through the same steps, one with chartkit and one with helm, can be required to hold
//! the same objects, the same field managers and the same release records.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::records::{record, value_differences};
use serde_json::Value;

use crate::TestContext;
use crate::sandbox::{SandboxProcess, run_ok};

/// How long two clusters get to settle into the same state after a step: hook and Job
/// pods finishing, rollouts ending, the garbage collector removing what deleted objects
/// owned.
pub const SETTLE: Duration = Duration::from_secs(30);

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
/// Resources not compared at all, and why.
const IGNORED_RESOURCES: &[&str] = &[
    // What happened and when, with counts and times: two clusters have two histories.
    "events",
    "events.events.k8s.io",
    // The sandbox's node heartbeats, and the lock chartkit takes per release (issue #21's
    // Lease), which helm has no equivalent of.
    "leases.coordination.k8s.io",
    // Not objects: a deprecated health view computed on every read.
    "componentstatuses",
];

/// Metadata the API server writes for each object by itself, ignored.
const SERVER_METADATA: &[&str] = &[
    // Random per object.
    "uid",
    // Each cluster's own write counter.
    "resourceVersion",
    // When, not what.
    "creationTimestamp",
];

/// Fields holding times, ignored wherever they are (conditions, container states, Job
/// status, node heartbeats): two runs never happen at the same instant.
const TIMES: &[&str] = &[
    "lastTransitionTime",
    "lastUpdateTime",
    "lastProbeTime",
    "lastHeartbeatTime",
    "lastScaleTime",
    "startTime",
    "startedAt",
    "finishedAt",
    "completionTime",
];

/// Annotations holding times (the endpoints controller stamps when it last looked).
const TIME_ANNOTATIONS: &[&str] = &["endpoints.kubernetes.io/last-change-trigger-time"];

/// Values each cluster allocates on its own: Service IPs and node ports, Pod and host
/// IPs, container ids, endpoint addresses.
const ALLOCATED: &[&str] = &[
    "clusterIP",
    "clusterIPs",
    "nodePort",
    "podIP",
    "podIPs",
    "hostIP",
    "hostIPs",
    "containerID",
    "ip",
];

/// The per-cluster replacements `normalise` makes in strings.
struct Renames {
    /// Names the API server generated (`metadata.generateName` plus random characters:
    /// Pods of ReplicaSets and Jobs, EndpointSlices) → `PREFIX*`, wherever they appear
    /// (an Endpoints' `targetRef`, an EndpointSlice's pod reference).
    generated: BTreeMap<String, String>,
    /// Every object's uid → `<uid>` (owner references, Jobs' `controller-uid` labels and
    /// selectors), also inside longer strings (a crash-looping container's message).
    uids: BTreeSet<String>,
}

impl Renames {
    fn of(items: &[Value]) -> Renames {
        let mut generated = BTreeMap::new();
        let mut uids = BTreeSet::new();
        for item in items {
            let meta = &item["metadata"];
            if let (Some(name), Some(prefix)) =
                (meta["name"].as_str(), meta["generateName"].as_str())
            {
                generated.insert(name.to_string(), format!("{prefix}*"));
            }
            if let Some(uid) = meta["uid"].as_str() {
                uids.insert(uid.to_string());
            }
        }
        Renames { generated, uids }
    }

    fn string(&self, s: &str) -> String {
        if let Some(name) = self.generated.get(s) {
            return name.clone();
        }
        // The token volume the API server adds to every Pod has a random suffix.
        if s.starts_with("kube-api-access-") {
            return "kube-api-access-*".to_string();
        }
        let mut out = s.to_string();
        for uid in &self.uids {
            if out.contains(uid.as_str()) {
                out = out.replace(uid.as_str(), "<uid>");
            }
        }
        out
    }

    /// A key of a managed field set: `k:{...}` (a list element by its key fields) and
    /// `v:...` (a set element by its value) hold values, renamed as values are.
    fn field_key(&self, key: &str) -> String {
        for prefix in ["k:", "v:"] {
            if let Some(json) = key.strip_prefix(prefix)
                && let Ok(mut value) = serde_json::from_str::<Value>(json)
            {
                self.rename_strings(&mut value);
                // A Pod's `podIPs` are keyed by their allocated `ip`.
                if let Some(fields) = value.as_object_mut() {
                    for (name, field) in fields.iter_mut() {
                        if ALLOCATED.contains(&name.as_str()) {
                            *field = Value::String("<allocated>".into());
                        }
                    }
                }
                return format!("{prefix}{value}");
            }
        }
        key.to_string()
    }

    fn rename_strings(&self, value: &mut Value) {
        match value {
            Value::String(s) => *s = self.string(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.rename_strings(v)),
            Value::Object(map) => map.values_mut().for_each(|v| self.rename_strings(v)),
            _ => {}
        }
    }

    /// A managed field set with its keys renamed.
    fn field_set(&self, set: &Value) -> Value {
        match set {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (self.field_key(k), self.field_set(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// One object as compared: the fields above dropped or replaced, everything else kept.
fn normalise(item: &Value, renames: &Renames) -> Value {
    let mut object = item.clone();
    // A controller's object (a Deployment's ReplicaSets, their Pods) counts in its
    // generation every scale step its owner made, and how many steps a rollout takes
    // depends on when pods became ready: a history, like resourceVersion. The objects the
    // tools write themselves keep theirs, where an extra write would show.
    let owned = item["metadata"]["ownerReferences"]
        .as_array()
        .is_some_and(|owners| !owners.is_empty());
    if owned && let Some(status) = object["status"].as_object_mut() {
        status.remove("observedGeneration");
    }
    if let Some(meta) = object["metadata"].as_object_mut() {
        for field in SERVER_METADATA {
            meta.remove(*field);
        }
        if owned {
            meta.remove("generation");
        }
        // Who wrote which field is compared (chartkit writes as helm's manager, so the
        // entries must be helm's), but not when: each entry's time goes, and the entries
        // are put in one order, as the order of two managers' entries depends on timing.
        if let Some(Value::Array(entries)) = meta.get_mut("managedFields") {
            for entry in entries.iter_mut() {
                if let Some(entry) = entry.as_object_mut() {
                    entry.remove("time");
                    // Keys name list elements by their key fields: uids, generated names.
                    if let Some(set) = entry.get_mut("fieldsV1") {
                        *set = renames.field_set(set);
                    }
                }
            }
            entries.sort_by_key(|e| e.to_string());
        }
        if let Some(annotations) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
            for annotation in TIME_ANNOTATIONS {
                annotations.remove(*annotation);
            }
            if annotations.is_empty() {
                meta.remove("annotations");
            }
        }
    }
    // Each sandbox has a certificate authority of its own, published in every namespace.
    if object["kind"] == "ConfigMap" && object["metadata"]["name"] == "kube-root-ca.crt" {
        object["data"] = Value::Null;
    }
    scrub(&mut object, renames, true);
    object
}

fn scrub(value: &mut Value, renames: &Renames, top: bool) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                // A ConfigMap's or Secret's own data is the chart's: compared as is.
                if top && matches!(key.as_str(), "data" | "stringData" | "binaryData") {
                    continue;
                }
                // An EndpointSlice's `addresses` are Pod IPs (a Node's are objects).
                let pod_ips = key == "addresses"
                    && field
                        .as_array()
                        .is_some_and(|a| a.iter().all(Value::is_string));
                if TIMES.contains(&key.as_str()) && !field.is_null() {
                    *field = Value::String("<time>".into());
                } else if ALLOCATED.contains(&key.as_str()) || pod_ips {
                    *field = Value::String("<allocated>".into());
                } else {
                    scrub(field, renames, false);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| scrub(v, renames, false)),
        Value::String(s) => *s = renames.string(s),
        _ => {}
    }
}

/// One cluster's state as compared.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// `Kind namespace/name` (`Kind name` when cluster-scoped) → the normalised object.
    /// Objects whose generated names normalise alike (the Pods of one ReplicaSet) are
    /// told apart by `#N`, in the order of their normalised contents.
    pub objects: BTreeMap<String, Value>,
    /// `namespace/secret-name` → the normalised record.
    pub records: BTreeMap<String, Value>,
}

impl Snapshot {
    /// The hook objects left in the cluster (those with a `helm.sh/hook` annotation).
    pub fn hooks(&self) -> BTreeSet<String> {
        self.objects
            .iter()
            .filter(|(_, o)| !o["metadata"]["annotations"]["helm.sh/hook"].is_null())
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// The objects' keys.
    pub fn keys(&self) -> BTreeSet<String> {
        self.objects.keys().cloned().collect()
    }
}

/// Every object of the cluster `sandbox` serves, read with kubectl (`test` names the
/// test, for kubectl's skip message; the caller has checked kubectl is there).
pub fn snapshot(sandbox: &SandboxProcess, ctx: &TestContext, test: &str) -> Snapshot {
    let kubectl = || -> Command { sandbox.kubectl(ctx, test).expect("kubectl") };
    let resources = run_ok(kubectl().args(["api-resources", "--verbs=list", "-o", "name"]));
    let resources: Vec<String> = text(&resources.stdout)
        .lines()
        .filter(|r| !IGNORED_RESOURCES.contains(r))
        .map(str::to_string)
        .collect();
    let listed = run_ok(kubectl().args([
        "get",
        &resources.join(","),
        "-A",
        "-o",
        "json",
        "--show-managed-fields",
    ]));
    let listed: Value = serde_json::from_slice(&listed.stdout).expect("kubectl's JSON");
    let items = listed["items"].as_array().cloned().unwrap_or_default();
    let renames = Renames::of(&items);
    let mut snapshot = Snapshot::default();
    let mut grouped: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for item in &items {
        let meta = &item["metadata"];
        let namespace = meta["namespace"].as_str().unwrap_or("");
        let name = meta["name"].as_str().unwrap_or("");
        if item["kind"] == "Secret" && item["type"] == "helm.sh/release.v1" {
            snapshot
                .records
                .insert(format!("{namespace}/{name}"), record(item));
            continue;
        }
        let key = match namespace {
            "" => format!(
                "{} {}",
                item["kind"].as_str().unwrap_or(""),
                renames.string(name)
            ),
            ns => format!(
                "{} {ns}/{}",
                item["kind"].as_str().unwrap_or(""),
                renames.string(name)
            ),
        };
        grouped
            .entry(key)
            .or_default()
            .push(normalise(item, &renames));
    }
    for (key, mut objects) in grouped {
        if objects.len() == 1 {
            snapshot.objects.insert(key, objects.remove(0));
            continue;
        }
        objects.sort_by_key(|o| o.to_string());
        for (n, object) in objects.into_iter().enumerate() {
            snapshot.objects.insert(format!("{key} #{n}"), object);
        }
    }
    snapshot
}

/// What differs between two clusters, one line each; `names` say whose they are
/// (`["chartkit", "helm"]`).
pub fn differences(a: &Snapshot, b: &Snapshot, names: [&str; 2]) -> Vec<String> {
    let mut out = Vec::new();
    let [first, second] = names;
    for (what, a, b) in [
        ("object", &a.objects, &b.objects),
        ("release record", &a.records, &b.records),
    ] {
        for key in a.keys().chain(b.keys()).collect::<BTreeSet<_>>() {
            match (a.get(key), b.get(key)) {
                (Some(_), None) => out.push(format!("{what} {key}: only in {first}'s cluster")),
                (None, Some(_)) => out.push(format!("{what} {key}: only in {second}'s cluster")),
                (Some(x), Some(y)) => {
                    value_differences(&format!("{what} {key}"), x, y, names, &mut out)
                }
                (None, None) => unreachable!(),
            }
        }
    }
    out
}

/// Waits until two clusters are the same once normalised (they settle: Job pods finish,
/// rollouts end, owned objects are collected), failing with the differences at
/// [`SETTLE`]; returns the first cluster. `names` say whose the clusters are, `step`
/// what was just done to them.
pub fn converge(
    clusters: [&SandboxProcess; 2],
    ctx: &TestContext,
    test: &str,
    names: [&str; 2],
    step: &str,
) -> Snapshot {
    let deadline = Instant::now() + SETTLE;
    loop {
        let first = snapshot(clusters[0], ctx, test);
        let second = snapshot(clusters[1], ctx, test);
        let diff = differences(&first, &second, names);
        if diff.is_empty() {
            return first;
        }
        assert!(
            Instant::now() < deadline,
            "after {step}, {}'s cluster differs from {}'s:\n{}",
            names[0],
            names[1],
            diff.join("\n")
        );
        // The interval between two looks at clusters still settling.
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Runs two commands at once (one per cluster, so both clusters go through a step at
/// the same time) and returns their outputs in order.
pub fn run_both(first: Command, second: Command) -> [std::process::Output; 2] {
    let spawn = |mut command: Command| {
        command
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start the command")
    };
    let (first, second) = (spawn(first), spawn(second));
    [
        first.wait_with_output().expect("the first command runs"),
        second.wait_with_output().expect("the second command runs"),
    ]
}
