//! The scheduler: a pod with no `spec.nodeName` is bound to a Ready node that its node
//! selector, required node affinity and claims allow (the one running fewest pods), or
//! marked `Unschedulable` with the scheduler's message.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Ctx, events, objects};
use crate::meta;
use crate::store::ObjectKey;

pub const MANAGER: &str = "kube-scheduler";

pub fn reconcile(ctx: &Ctx, key: &ObjectKey) {
    let Some(pod) = ctx.cluster.store.get(key) else {
        return;
    };
    if meta::is_deleting(&pod)
        || pod["spec"]["nodeName"]
            .as_str()
            .is_some_and(|n| !n.is_empty())
        || pod["spec"]["schedulerName"]
            .as_str()
            .is_some_and(|s| s != "default-scheduler")
    {
        return;
    }
    let nodes: Vec<_> = objects::list(ctx, "", "nodes", "")
        .into_iter()
        .filter(|n| {
            n["spec"]["unschedulable"] != true
                && objects::condition(n, "Ready").is_some_and(|c| c["status"] == "True")
        })
        .collect();
    let total = nodes.len();
    if let Some(why) = claims_problem(ctx, &pod) {
        unschedulable(
            ctx,
            key,
            &pod,
            &format!(
                "0/{total} nodes are available: {why}. preemption: 0/{total} nodes are available: {total} Preemption is not helpful for scheduling."
            ),
        );
        return;
    }
    let fitting: Vec<_> = nodes.iter().filter(|n| fits(&pod, n)).collect();
    let Some(node) = fitting
        .iter()
        .min_by_key(|n| pods_on(ctx, meta::name(n)))
        .map(|n| meta::name(n).to_string())
    else {
        let message = if total == 0 {
            "no nodes available to schedule pods".to_string()
        } else {
            format!(
                "0/{total} nodes are available: {total} node(s) didn't match Pod's node affinity/selector. preemption: 0/{total} nodes are available: {total} Preemption is not helpful for scheduling."
            )
        };
        unschedulable(ctx, key, &pod, &message);
        return;
    };
    let now = meta::now();
    let bound_node = node.clone();
    let Some(mut t) = objects::key_target(ctx, key) else {
        return;
    };
    t.subresource = "binding".into();
    let bound = ctx.cluster.mutate(&t, MANAGER, |p| {
        if p["spec"]["nodeName"].as_str().is_some_and(|n| !n.is_empty()) {
            return false;
        }
        p["spec"]["nodeName"] = json!(bound_node);
        let mut conds = objects::conditions(p);
        conds.retain(|c| c["type"] != "PodScheduled");
        conds.push(json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": now}));
        p["status"]["conditions"] = json!(conds);
        true
    });
    if let Ok(Some(_)) = bound {
        events::normal(
            ctx,
            &pod,
            events::SCHEDULER,
            "Scheduled",
            &format!(
                "Successfully assigned {}/{} to {node}",
                meta::namespace(&pod),
                meta::name(&pod)
            ),
        );
    }
}

fn unschedulable(ctx: &Ctx, key: &ObjectKey, pod: &Value, message: &str) {
    let msg = message.to_string();
    let changed = objects::update_status(
        ctx,
        "",
        "pods",
        &key.namespace,
        &key.name,
        MANAGER,
        |p| {
            let mut conds = objects::conditions(p);
            let c = json!({"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": msg, "lastProbeTime": null});
            let changed = objects::set_condition(&mut conds, c, &["lastTransitionTime"]);
            p["status"]["conditions"] = json!(conds);
            changed
        },
    );
    if changed {
        events::warning(ctx, pod, events::SCHEDULER, "FailedScheduling", message);
    }
    ctx.requeue(key, Duration::from_secs(1));
}

/// Why the pod's claims keep it from any node, in the scheduler's words.
fn claims_problem(ctx: &Ctx, pod: &Value) -> Option<String> {
    let ns = meta::namespace(pod);
    for v in pod["spec"]["volumes"].as_array().into_iter().flatten() {
        let Some(claim) = v["persistentVolumeClaim"]["claimName"].as_str() else {
            continue;
        };
        match objects::get(ctx, "", "persistentvolumeclaims", ns, claim) {
            None => return Some(format!("persistentvolumeclaim \"{claim}\" not found")),
            Some(c) if meta::is_deleting(&c) => {
                return Some(format!(
                    "persistentvolumeclaim \"{claim}\" is being deleted"
                ));
            }
            Some(c) if c["status"]["phase"] != "Bound" => {
                return Some("pod has unbound immediate PersistentVolumeClaims".to_string());
            }
            Some(_) => {}
        }
    }
    None
}

fn pods_on(ctx: &Ctx, node: &str) -> usize {
    objects::list(ctx, "", "pods", "")
        .iter()
        .filter(|p| p["spec"]["nodeName"] == node)
        .count()
}

/// Whether the pod's node selector and required node affinity allow `node`.
pub fn fits(pod: &Value, node: &Value) -> bool {
    let labels = meta::labels(node);
    if let Some(sel) = pod["spec"]["nodeSelector"].as_object()
        && !sel.iter().all(|(k, v)| labels.get(k) == Some(v))
    {
        return false;
    }
    let terms = &pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        ["nodeSelectorTerms"];
    match terms.as_array() {
        Some(terms) if !terms.is_empty() => terms.iter().any(|t| term_matches(t, node)),
        _ => true,
    }
}

fn term_matches(term: &Value, node: &Value) -> bool {
    let labels = meta::labels(node);
    let exprs = term["matchExpressions"].as_array();
    let fields = term["matchFields"].as_array();
    if exprs.is_none_or(Vec::is_empty) && fields.is_none_or(Vec::is_empty) {
        return false;
    }
    let check = |e: &Value, value: Option<&str>| -> bool {
        let values: Vec<&str> = e["values"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        match e["operator"].as_str().unwrap_or("") {
            "In" => value.is_some_and(|v| values.contains(&v)),
            "NotIn" => value.is_none_or(|v| !values.contains(&v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            "Gt" | "Lt" => {
                let (Some(v), Some(bound)) = (
                    value.and_then(|v| v.parse::<i64>().ok()),
                    values.first().and_then(|b| b.parse::<i64>().ok()),
                ) else {
                    return false;
                };
                if e["operator"] == "Gt" {
                    v > bound
                } else {
                    v < bound
                }
            }
            _ => false,
        }
    };
    exprs.into_iter().flatten().all(|e| {
        let key = e["key"].as_str().unwrap_or("");
        check(e, labels.get(key).and_then(Value::as_str))
    }) && fields.into_iter().flatten().all(|e| {
        let value = (e["key"] == "metadata.name").then(|| meta::name(node));
        check(e, value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_and_affinity_pick_nodes() {
        let node = json!({"metadata": {"name": "n1", "labels": {"zone": "a"}}});
        assert!(fits(&json!({"spec": {}}), &node));
        assert!(!fits(
            &json!({"spec": {"nodeSelector": {"zone": "b"}}}),
            &node
        ));
        let by_name = json!({"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}}});
        assert!(fits(&by_name, &node));
        let other = json!({"metadata": {"name": "n2"}});
        assert!(!fits(&by_name, &other));
    }
}
