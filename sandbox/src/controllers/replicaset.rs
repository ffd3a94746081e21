//! The ReplicaSet controller: keeps `spec.replicas` active pods from the template
//! (adopting orphans its selector matches), deletes the surplus least useful first,
//! and reports replicas, fully labeled, ready and available pods.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::{Ctx, MANAGER, events, objects};
use crate::meta;
use crate::selector::LabelSelector;
use crate::store::ObjectKey;

pub fn reconcile(ctx: &Ctx, key: &ObjectKey) {
    let Some(rs) = ctx.cluster.store.get(key) else {
        return;
    };
    let selector = LabelSelector::from_object(&rs["spec"]["selector"]).unwrap_or_default();
    let pods = objects::claim(ctx, "", "pods", &rs, &selector);
    let active: Vec<Arc<Value>> = pods.iter().filter(|p| is_active(p)).cloned().collect();
    let want = rs["spec"]["replicas"].as_i64().unwrap_or(1);
    let mut failure = None;
    if !meta::is_deleting(&rs) {
        let diff = want - active.len() as i64;
        if diff > 0 {
            // A burst per visit, as the controller's slow start does.
            for _ in 0..diff.min(500) {
                let pod = objects::pod_from_template(
                    &rs,
                    &rs["spec"]["template"],
                    None,
                    &format!("{}-", meta::name(&rs)),
                );
                match objects::create(ctx, "", "pods", &key.namespace, pod, MANAGER) {
                    Ok(p) => events::normal(
                        ctx,
                        &rs,
                        events::REPLICASET,
                        "SuccessfulCreate",
                        &format!("Created pod: {}", meta::name(&p)),
                    ),
                    Err(e) => {
                        let message = format!("Error creating: {}", e.message);
                        events::warning(ctx, &rs, events::REPLICASET, "FailedCreate", &message);
                        failure = Some(e.message);
                        ctx.requeue(key, Duration::from_secs(1));
                        break;
                    }
                }
            }
        } else if diff < 0 {
            let mut doomed = active.clone();
            doomed.sort_by_key(|p| deletion_rank(p));
            for p in doomed.iter().take((-diff) as usize) {
                if objects::delete(ctx, "", "pods", &key.namespace, meta::name(p), None, None)
                    .is_ok()
                {
                    events::normal(
                        ctx,
                        &rs,
                        events::REPLICASET,
                        "SuccessfulDelete",
                        &format!("Deleted pod: {}", meta::name(p)),
                    );
                }
            }
        }
    }
    write_status(ctx, key, &rs, failure);
}

/// Pods that count: not being deleted and not finished.
pub fn is_active(pod: &Value) -> bool {
    !meta::is_deleting(pod)
        && !matches!(
            pod["status"]["phase"].as_str(),
            Some("Succeeded" | "Failed")
        )
}

pub fn is_ready(pod: &Value) -> bool {
    objects::condition(pod, "Ready").is_some_and(|c| c["status"] == "True")
}

/// Ready for at least `min_ready` seconds (then the pod is available); the second
/// value is when it will be, if it is ready but not yet available.
pub fn availability(pod: &Value, min_ready: i64) -> (bool, Option<Duration>) {
    let Some(c) = objects::condition(pod, "Ready").filter(|c| c["status"] == "True") else {
        return (false, None);
    };
    if min_ready <= 0 {
        return (true, None);
    }
    let since = c["lastTransitionTime"]
        .as_str()
        .and_then(meta::age_seconds)
        .unwrap_or(0);
    if since >= min_ready {
        (true, None)
    } else {
        (
            false,
            Some(Duration::from_secs((min_ready - since).max(1) as u64)),
        )
    }
}

/// Which pods go first when scaling down: unscheduled, pending, not ready, then the
/// most recently ready.
fn deletion_rank(pod: &Value) -> (u8, u8, u8, std::cmp::Reverse<String>) {
    let scheduled = pod["spec"]["nodeName"]
        .as_str()
        .is_some_and(|n| !n.is_empty());
    let phase = match pod["status"]["phase"].as_str() {
        Some("Pending") | None => 0,
        Some("Running") => 2,
        _ => 1,
    };
    let ready = is_ready(pod);
    let since = objects::condition(pod, "Ready")
        .and_then(|c| c["lastTransitionTime"].as_str())
        .unwrap_or("")
        .to_string();
    (
        scheduled as u8,
        phase,
        ready as u8,
        std::cmp::Reverse(since),
    )
}

fn write_status(ctx: &Ctx, key: &ObjectKey, rs: &Value, failure: Option<String>) {
    let template_labels = rs["spec"]["template"]["metadata"]["labels"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let min_ready = rs["spec"]["minReadySeconds"].as_i64().unwrap_or(0);
    let pods: Vec<Arc<Value>> = objects::list(ctx, "", "pods", &key.namespace)
        .into_iter()
        .filter(|p| objects::controlled_by(p, meta::uid(rs)) && is_active(p))
        .collect();
    let mut replicas = 0;
    let mut labeled = 0;
    let mut ready = 0;
    let mut available = 0;
    let mut recheck: Option<Duration> = None;
    for p in &pods {
        replicas += 1;
        let labels = meta::labels(p);
        if template_labels
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v))
        {
            labeled += 1;
        }
        if is_ready(p) {
            ready += 1;
        }
        let (avail, when) = availability(p, min_ready);
        if avail {
            available += 1;
        }
        if let Some(w) = when {
            recheck = Some(recheck.map_or(w, |r| r.min(w)));
        }
    }
    let generation = rs["metadata"]["generation"].as_i64().unwrap_or(1);
    objects::update_status(
        ctx,
        "apps",
        "replicasets",
        &key.namespace,
        &key.name,
        MANAGER,
        |o| {
            let before = o["status"].clone();
            let mut status = o["status"].as_object().cloned().unwrap_or_default();
            status.insert("replicas".into(), json!(replicas));
            objects::set_count(&mut status, "fullyLabeledReplicas", labeled);
            objects::set_count(&mut status, "readyReplicas", ready);
            objects::set_count(&mut status, "availableReplicas", available);
            status.insert("observedGeneration".into(), json!(generation));
            let mut conds = objects::conditions(o);
            match &failure {
                Some(message) => {
                    objects::set_condition(
                        &mut conds,
                        json!({"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": message}),
                        &["lastTransitionTime"],
                    );
                }
                None => conds.retain(|c| c["type"] != "ReplicaFailure"),
            }
            if conds.is_empty() {
                status.shift_remove("conditions");
            } else {
                status.insert("conditions".into(), json!(conds));
            }
            let after = Value::Object(status);
            if after == before {
                return false;
            }
            o["status"] = after;
            true
        },
    );
    if let Some(w) = recheck {
        ctx.requeue(key, w);
    }
}
