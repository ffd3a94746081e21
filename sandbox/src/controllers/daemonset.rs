//! The DaemonSet controller: one pod per simulated node the template's node selector
//! and affinity allow (pinned to it by node affinity on `metadata.name`, with the
//! tolerations the controller adds), rolling updates within `maxUnavailable`
//! (`OnDelete` leaves them to whoever deletes pods), and the status kstatus and
//! `kubectl rollout status` read.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::{Ctx, MANAGER, events, objects, replicaset, revisions, scheduler};
use crate::meta;
use crate::store::{Change, ObjectKey};

const REVISION_LABEL: &str = "controller-revision-hash";

/// Nodes coming or going change every DaemonSet's desired pods.
pub fn route(ctx: &Ctx, change: &Change) {
    if change.key.resource != "/nodes" {
        return;
    }
    for ds in objects::list(ctx, "apps", "daemonsets", "") {
        ctx.queue.add(objects::key_of("apps/daemonsets", &ds));
    }
    // Pods waiting for a node, too.
    for p in objects::list(ctx, "", "pods", "") {
        if p["spec"]["nodeName"].as_str().is_none_or(str::is_empty) {
            ctx.queue.add(objects::key_of("/pods", &p));
        }
    }
}

fn tolerations(template: &Value) -> Value {
    let mut t = template["spec"]["tolerations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut add = |key: &str, effect: &str| {
        if !t.iter().any(|x| x["key"] == key && x["effect"] == effect) {
            t.push(json!({"key": key, "operator": "Exists", "effect": effect}));
        }
    };
    add("node.kubernetes.io/not-ready", "NoExecute");
    add("node.kubernetes.io/unreachable", "NoExecute");
    add("node.kubernetes.io/disk-pressure", "NoSchedule");
    add("node.kubernetes.io/memory-pressure", "NoSchedule");
    add("node.kubernetes.io/pid-pressure", "NoSchedule");
    add("node.kubernetes.io/unschedulable", "NoSchedule");
    if template["spec"]["hostNetwork"] == true {
        add("node.kubernetes.io/network-unavailable", "NoSchedule");
    }
    Value::Array(t)
}

fn node_of(pod: &Value) -> String {
    if let Some(n) = pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
        return n.to_string();
    }
    pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchFields"][0]["values"][0]
        .as_str()
        .unwrap_or("")
        .to_string()
}

pub fn reconcile(ctx: &Ctx, key: &ObjectKey) {
    let Some(ds) = ctx.cluster.store.get(key) else {
        return;
    };
    if meta::is_deleting(&ds) {
        return;
    }
    let ns = key.namespace.clone();
    let name = meta::name(&ds).to_string();
    let template = ds["spec"]["template"].clone();
    let hash = revisions::hash(&template);
    revisions::ensure(ctx, &ds, &template, &ds["spec"]["selector"]["matchLabels"]);
    let generation = ds["metadata"]["generation"].as_i64().unwrap_or(1);

    let probe = json!({"spec": template["spec"]});
    let nodes: Vec<String> = objects::list(ctx, "", "nodes", "")
        .iter()
        .filter(|n| scheduler::fits(&probe, n))
        .map(|n| meta::name(n).to_string())
        .collect();
    let mut by_node: HashMap<String, Vec<Arc<Value>>> = HashMap::new();
    for p in objects::list(ctx, "", "pods", &ns) {
        if objects::controlled_by(&p, meta::uid(&ds)) && !meta::is_deleting(&p) {
            by_node.entry(node_of(&p)).or_default().push(p);
        }
    }
    let revision_of = |p: &Value| {
        meta::labels(p)
            .get(REVISION_LABEL)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    // Pods on nodes that should not run one, failed pods, and extra pods go.
    for (node, pods) in &by_node {
        let wanted = nodes.contains(node);
        for (i, p) in pods.iter().enumerate() {
            let failed = p["status"]["phase"] == "Failed";
            if !wanted || failed || i > 0 {
                delete(ctx, &ds, &ns, meta::name(p));
            }
        }
    }
    for node in &nodes {
        if by_node
            .get(node)
            .is_none_or(|p| p.iter().all(|p| p["status"]["phase"] == "Failed"))
        {
            create(ctx, &ds, &ns, node, &hash, generation);
        }
    }
    // Rolling update within maxUnavailable.
    if ds["spec"]["updateStrategy"]["type"] != "OnDelete" {
        let desired = nodes.len() as i64;
        let max_unavailable = objects::int_or_percent(
            &ds["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"],
            desired,
            true,
        )
        .max(1);
        let current: Vec<&Arc<Value>> = nodes
            .iter()
            .filter_map(|n| by_node.get(n).and_then(|p| p.first()))
            .collect();
        let unavailable =
            nodes.len() as i64 - current.iter().filter(|p| replicaset::is_ready(p)).count() as i64;
        let mut budget = max_unavailable - unavailable;
        for p in current.iter().filter(|p| revision_of(p) != hash) {
            if budget <= 0 {
                break;
            }
            delete(ctx, &ds, &ns, meta::name(p));
            budget -= 1;
        }
    }
    // Status.
    let pods: Vec<Arc<Value>> = objects::list(ctx, "", "pods", &ns)
        .into_iter()
        .filter(|p| objects::controlled_by(p, meta::uid(&ds)) && !meta::is_deleting(p))
        .collect();
    let min_ready = ds["spec"]["minReadySeconds"].as_i64().unwrap_or(0);
    let on_wanted: Vec<&Arc<Value>> = pods
        .iter()
        .filter(|p| nodes.contains(&node_of(p)))
        .collect();
    let scheduled = on_wanted.len() as i64;
    let misscheduled = pods.len() as i64 - scheduled;
    let ready = on_wanted.iter().filter(|p| replicaset::is_ready(p)).count() as i64;
    let available = on_wanted
        .iter()
        .filter(|p| replicaset::availability(p, min_ready).0)
        .count() as i64;
    let updated = on_wanted.iter().filter(|p| revision_of(p) == hash).count() as i64;
    let desired = nodes.len() as i64;
    objects::update_status(ctx, "apps", "daemonsets", &ns, &name, MANAGER, |o| {
        let before = o["status"].clone();
        let mut s = serde_json::Map::new();
        s.insert("currentNumberScheduled".into(), json!(scheduled));
        s.insert("numberMisscheduled".into(), json!(misscheduled));
        s.insert("desiredNumberScheduled".into(), json!(desired));
        s.insert("numberReady".into(), json!(ready));
        s.insert("observedGeneration".into(), json!(generation));
        objects::set_count(&mut s, "updatedNumberScheduled", updated);
        objects::set_count(&mut s, "numberAvailable", available);
        objects::set_count(&mut s, "numberUnavailable", (desired - available).max(0));
        let after = Value::Object(s);
        if after == before {
            return false;
        }
        o["status"] = after;
        true
    });
    if min_ready > 0 && available < ready {
        ctx.requeue(key, std::time::Duration::from_secs(1));
    }
}

fn create(ctx: &Ctx, ds: &Value, ns: &str, node: &str, hash: &str, generation: i64) {
    let template = &ds["spec"]["template"];
    let mut pod = objects::pod_from_template(ds, template, None, &format!("{}-", meta::name(ds)));
    let mut labels = pod["metadata"]["labels"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    labels.insert(REVISION_LABEL.into(), json!(hash));
    labels.insert(
        "pod-template-generation".into(),
        json!(generation.to_string()),
    );
    pod["metadata"]["labels"] = json!(labels);
    pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = json!({
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}],
    });
    pod["spec"]["tolerations"] = tolerations(template);
    match objects::create(ctx, "", "pods", ns, pod, MANAGER) {
        Ok(p) => events::normal(
            ctx,
            ds,
            events::DAEMONSET,
            "SuccessfulCreate",
            &format!("Created pod: {}", meta::name(&p)),
        ),
        Err(e) => events::warning(
            ctx,
            ds,
            events::DAEMONSET,
            "FailedCreate",
            &format!("Error creating: {}", e.message),
        ),
    }
}

fn delete(ctx: &Ctx, ds: &Value, ns: &str, pod: &str) {
    if objects::delete(ctx, "", "pods", ns, pod, None, None).is_ok() {
        events::normal(
            ctx,
            ds,
            events::DAEMONSET,
            "SuccessfulDelete",
            &format!("Deleted pod: {pod}"),
        );
    }
}
