//! The StatefulSet controller: pods `<set>-0` … `<set>-N-1` with stable names and
//! hostnames, one PersistentVolumeClaim per claim template and pod
//! (`<template>-<pod>`), created in order and each only once the ones before it are
//! Running and Ready (`OrderedReady`), or all at once (`Parallel`); scaled down from
//! the highest ordinal; rolling updates from the highest ordinal down to the
//! partition, one pod at a time; `OnDelete` leaves updates to whoever deletes pods.
//! Revisions are ControllerRevisions; the status has current and update revisions.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::{Ctx, MANAGER, events, objects, replicaset, revisions};
use crate::meta;
use crate::store::ObjectKey;

const REVISION_LABEL: &str = "controller-revision-hash";

fn ordinal(set_name: &str, pod: &Value) -> Option<i64> {
    meta::name(pod)
        .strip_prefix(set_name)?
        .strip_prefix('-')?
        .parse()
        .ok()
}

fn running_and_ready(pod: &Value) -> bool {
    pod["status"]["phase"] == "Running" && replicaset::is_ready(pod) && !meta::is_deleting(pod)
}

pub fn reconcile(ctx: &Ctx, key: &ObjectKey) {
    let Some(set) = ctx.cluster.store.get(key) else {
        return;
    };
    if meta::is_deleting(&set) {
        return;
    }
    let name = meta::name(&set).to_string();
    let ns = key.namespace.clone();
    let spec = &set["spec"];
    let want = spec["replicas"].as_i64().unwrap_or(1);
    let parallel = spec["podManagementPolicy"] == "Parallel";
    let strategy = spec["updateStrategy"]["type"]
        .as_str()
        .unwrap_or("RollingUpdate");
    let partition = spec["updateStrategy"]["rollingUpdate"]["partition"]
        .as_i64()
        .unwrap_or(0);
    let selector_labels = spec["selector"]["matchLabels"].clone();
    let update_rev = revisions::ensure(ctx, &set, &spec["template"], &selector_labels);
    let current_rev = set["status"]["currentRevision"]
        .as_str()
        .filter(|s| !s.is_empty())
        .unwrap_or(&update_rev)
        .to_string();

    let pods: HashMap<i64, Arc<Value>> = objects::list(ctx, "", "pods", &ns)
        .into_iter()
        .filter(|p| objects::controlled_by(p, meta::uid(&set)))
        .filter_map(|p| ordinal(&name, &p).map(|o| (o, p)))
        .collect();
    let revision_of = |p: &Value| {
        meta::labels(p)
            .get(REVISION_LABEL)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };

    // Failed or finished pods are replaced.
    for p in pods.values() {
        if matches!(p["status"]["phase"].as_str(), Some("Failed" | "Succeeded"))
            && !meta::is_deleting(p)
        {
            delete_pod(ctx, &set, &ns, meta::name(p));
        }
    }
    let mut acted = false;
    // Create the missing pods, in order.
    for i in 0..want {
        match pods.get(&i) {
            Some(p) => {
                if !parallel && !running_and_ready(p) {
                    acted = true;
                    break;
                }
            }
            None => {
                let rev = if strategy == "RollingUpdate" && i < partition {
                    &current_rev
                } else {
                    &update_rev
                };
                create_pod(ctx, &set, &ns, i, rev);
                acted = true;
                if !parallel {
                    break;
                }
            }
        }
    }
    // Scale down from the highest ordinal.
    if !acted || parallel {
        let mut extra: Vec<i64> = pods.keys().copied().filter(|o| *o >= want).collect();
        extra.sort_unstable_by(|a, b| b.cmp(a));
        let all_ready = (0..want).all(|i| pods.get(&i).is_some_and(|p| running_and_ready(p)));
        for o in extra {
            let p = &pods[&o];
            if meta::is_deleting(p) {
                acted = true;
                if !parallel {
                    break;
                }
                continue;
            }
            if !parallel && !all_ready {
                break;
            }
            delete_pod(ctx, &set, &ns, meta::name(p));
            acted = true;
            if spec["persistentVolumeClaimRetentionPolicy"]["whenScaled"] == "Delete" {
                for c in claim_templates(&set) {
                    let claim = format!("{}-{}", meta::name(&c), meta::name(p));
                    let _ =
                        objects::delete(ctx, "", "persistentvolumeclaims", &ns, &claim, None, None);
                }
            }
            if !parallel {
                break;
            }
        }
    }
    // Rolling update: the highest outdated ordinal at or above the partition goes.
    if !acted && strategy == "RollingUpdate" {
        let all_ready = (0..want).all(|i| pods.get(&i).is_some_and(|p| running_and_ready(p)));
        if all_ready {
            let outdated = (partition..want)
                .rev()
                .find(|i| pods.get(i).is_some_and(|p| revision_of(p) != update_rev));
            if let Some(i) = outdated {
                delete_pod(ctx, &set, &ns, meta::name(&pods[&i]));
            }
        }
    }

    // Status.
    let pods: Vec<Arc<Value>> = objects::list(ctx, "", "pods", &ns)
        .into_iter()
        .filter(|p| objects::controlled_by(p, meta::uid(&set)) && !meta::is_deleting(p))
        .collect();
    let min_ready = spec["minReadySeconds"].as_i64().unwrap_or(0);
    let replicas = pods.len() as i64;
    let ready = pods.iter().filter(|p| replicaset::is_ready(p)).count() as i64;
    let available = pods
        .iter()
        .filter(|p| replicaset::availability(p, min_ready).0)
        .count() as i64;
    let updated = pods.iter().filter(|p| revision_of(p) == update_rev).count() as i64;
    let mut current = pods
        .iter()
        .filter(|p| revision_of(p) == current_rev)
        .count() as i64;
    let mut current_name = current_rev.clone();
    if updated == replicas && ready == replicas && replicas == want {
        current = updated;
        current_name = update_rev.clone();
    }
    let mut keep: Vec<String> = pods.iter().map(|p| revision_of(p)).collect();
    keep.push(update_rev.clone());
    keep.push(current_name.clone());
    revisions::prune(
        ctx,
        &set,
        spec["revisionHistoryLimit"].as_i64().unwrap_or(10),
        &keep,
    );
    let generation = set["metadata"]["generation"].as_i64().unwrap_or(1);
    objects::update_status(ctx, "apps", "statefulsets", &ns, &name, MANAGER, |o| {
        let before = o["status"].clone();
        let mut s = o["status"].as_object().cloned().unwrap_or_default();
        s.insert("observedGeneration".into(), json!(generation));
        s.insert("replicas".into(), json!(replicas));
        objects::set_count(&mut s, "readyReplicas", ready);
        objects::set_count(&mut s, "currentReplicas", current);
        objects::set_count(&mut s, "updatedReplicas", updated);
        s.insert("availableReplicas".into(), json!(available));
        s.insert("currentRevision".into(), json!(current_name));
        s.insert("updateRevision".into(), json!(update_rev));
        s.insert("collisionCount".into(), json!(0));
        let after = Value::Object(s);
        if after == before {
            return false;
        }
        o["status"] = after;
        true
    });
    // Pods turning available after minReadySeconds need another look.
    if min_ready > 0 && available < ready {
        ctx.requeue(key, std::time::Duration::from_secs(1));
    }
}

fn claim_templates(set: &Value) -> Vec<Value> {
    set["spec"]["volumeClaimTemplates"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn create_pod(ctx: &Ctx, set: &Value, ns: &str, i: i64, revision: &str) {
    let name = meta::name(set);
    let pod_name = format!("{name}-{i}");
    let template = if revision.is_empty() {
        set["spec"]["template"].clone()
    } else {
        revisions::template_of(ctx, set, revision)
            .unwrap_or_else(|| set["spec"]["template"].clone())
    };
    // Claims first.
    for c in claim_templates(set) {
        let claim_name = format!("{}-{pod_name}", meta::name(&c));
        if objects::get(ctx, "", "persistentvolumeclaims", ns, &claim_name).is_some() {
            continue;
        }
        let mut claim = json!({
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim_name, "namespace": ns},
            "spec": c["spec"].clone(),
        });
        let mut labels = c["metadata"]["labels"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        if let Some(sel) = set["spec"]["selector"]["matchLabels"].as_object() {
            labels.extend(sel.clone());
        }
        if !labels.is_empty() {
            claim["metadata"]["labels"] = json!(labels);
        }
        if let Some(a) = c["metadata"]["annotations"].as_object() {
            claim["metadata"]["annotations"] = json!(a);
        }
        if set["spec"]["persistentVolumeClaimRetentionPolicy"]["whenDeleted"] == "Delete" {
            claim["metadata"]["ownerReferences"] = json!([objects::owner_ref(set, false)]);
        }
        match objects::create(ctx, "", "persistentvolumeclaims", ns, claim, MANAGER) {
            Ok(_) => events::normal(
                ctx,
                set,
                events::STATEFULSET,
                "SuccessfulCreate",
                &format!("create Claim {claim_name} Pod {pod_name} in StatefulSet {name} success"),
            ),
            Err(e) => {
                events::warning(
                    ctx,
                    set,
                    events::STATEFULSET,
                    "FailedCreate",
                    &format!(
                        "create Claim {claim_name} for Pod {pod_name} in StatefulSet {name} failed error: {}",
                        e.message
                    ),
                );
                return;
            }
        }
    }
    let mut pod = objects::pod_from_template(set, &template, Some(&pod_name), "");
    let labels = pod["metadata"]["labels"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut labels = labels;
    labels.insert(REVISION_LABEL.into(), json!(revision));
    labels.insert("statefulset.kubernetes.io/pod-name".into(), json!(pod_name));
    labels.insert("apps.kubernetes.io/pod-index".into(), json!(i.to_string()));
    pod["metadata"]["labels"] = json!(labels);
    pod["spec"]["hostname"] = json!(pod_name);
    if let Some(svc) = set["spec"]["serviceName"]
        .as_str()
        .filter(|s| !s.is_empty())
    {
        pod["spec"]["subdomain"] = json!(svc);
    }
    let mut volumes = pod["spec"]["volumes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for c in claim_templates(set) {
        let vname = meta::name(&c).to_string();
        volumes.retain(|v| v["name"] != vname.as_str());
        volumes.push(json!({"name": vname, "persistentVolumeClaim": {"claimName": format!("{vname}-{pod_name}")}}));
    }
    if !volumes.is_empty() {
        pod["spec"]["volumes"] = json!(volumes);
    }
    match objects::create(ctx, "", "pods", ns, pod, MANAGER) {
        Ok(_) => events::normal(
            ctx,
            set,
            events::STATEFULSET,
            "SuccessfulCreate",
            &format!("create Pod {pod_name} in StatefulSet {name} successful"),
        ),
        Err(e) if e.code == 409 => {}
        Err(e) => events::warning(
            ctx,
            set,
            events::STATEFULSET,
            "FailedCreate",
            &format!(
                "create Pod {pod_name} in StatefulSet {name} failed error: {}",
                e.message
            ),
        ),
    }
}

fn delete_pod(ctx: &Ctx, set: &Value, ns: &str, pod: &str) {
    if objects::delete(ctx, "", "pods", ns, pod, None, None).is_ok() {
        events::normal(
            ctx,
            set,
            events::STATEFULSET,
            "SuccessfulDelete",
            &format!(
                "delete Pod {pod} in StatefulSet {} successful",
                meta::name(set)
            ),
        );
    }
}
