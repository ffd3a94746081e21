//! The apiextensions controllers of the API server: a CRD's names are accepted and it
//! becomes Established (conditions `NamesAccepted` and `Established`, its
//! `acceptedNames` and `storedVersions`), and from then on its versions are served.
//! A CRD being deleted (finalizer `customresourcecleanup.apiextensions.k8s.io`)
//! first has all its custom resources deleted (`Terminating`,
//! `InstanceDeletionInProgress`), then its type stops being served.

use serde_json::{Value, json};

use super::{Ctx, objects};
use crate::cluster::Cluster;
use crate::meta;
use crate::store::{Change, ObjectKey};

pub const CLEANUP: &str = "customresourcecleanup.apiextensions.k8s.io";
const MANAGER: &str = "kube-apiserver";
const CRDS: &str = "apiextensions.k8s.io/customresourcedefinitions";

fn established(crd: &Value) -> bool {
    objects::condition(crd, "Established").is_some_and(|c| c["status"] == "True")
}

/// Serves the types of the CRDs already Established (after a restore).
pub fn register_all(cluster: &Cluster) {
    for crd in cluster.store.list(CRDS, None).0 {
        if established(&crd)
            && let Some(def) = crate::crd::resource_def(&crd)
        {
            cluster.registry_mut().insert(std::sync::Arc::new(def));
        }
    }
}

/// A custom resource gone may let its CRD's cleanup finish.
pub fn route(ctx: &Ctx, change: &Change) {
    if change.object.is_some() {
        return;
    }
    let crd = ctx
        .cluster
        .registry()
        .by_key(&change.key.resource)
        .and_then(|d| d.custom.as_ref().map(|c| c.crd_name.clone()));
    if let Some(name) = crd {
        ctx.queue.add(objects::key(CRDS, "", &name));
    }
}

/// `plural.group` of a CRD's name.
fn type_key(name: &str) -> String {
    match name.split_once('.') {
        Some((plural, group)) => format!("{group}/{plural}"),
        None => format!("/{name}"),
    }
}

fn unregister(ctx: &Ctx, name: &str) {
    let key = type_key(name);
    let (group, plural) = key.split_once('/').unwrap_or(("", ""));
    let ours = ctx
        .cluster
        .registry()
        .by_key(&key)
        .is_some_and(|d| d.custom.as_ref().is_some_and(|c| c.crd_name == name));
    if ours {
        ctx.cluster.registry_mut().remove(group, plural);
    }
}

pub fn reconcile(ctx: &Ctx, key: &ObjectKey) {
    let Some(crd) = ctx.cluster.store.get(key) else {
        unregister(ctx, &key.name);
        return;
    };
    if meta::is_deleting(&crd) {
        cleanup(ctx, key, &crd);
        return;
    }
    let Some(def) = crate::crd::resource_def(&crd) else {
        return;
    };
    // Names a built-in type or another CRD already serves are refused.
    let conflict = {
        let registry = ctx.cluster.registry();
        registry.by_key(&def.key()).filter(|d| {
            d.custom
                .as_ref()
                .is_none_or(|c| c.crd_name != meta::name(&crd))
        })
    };
    let accepted = crate::crd::accepted_names(&crd);
    let storage: Vec<String> = crd["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["storage"] == true)
        .filter_map(|v| v["name"].as_str().map(String::from))
        .collect();
    if let Some(other) = conflict {
        let message = format!("\"{}\" is already in use", other.plural);
        objects::update_status(
            ctx,
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            "",
            &key.name,
            MANAGER,
            |o| {
                let mut conds = objects::conditions(o);
                let mut changed = objects::set_condition(
                    &mut conds,
                    json!({"type": "NamesAccepted", "status": "False", "reason": "NameConflict", "message": message}),
                    &["lastTransitionTime"],
                );
                changed |= objects::set_condition(
                    &mut conds,
                    json!({"type": "Established", "status": "False", "reason": "NotAccepted", "message": "not all names are accepted"}),
                    &["lastTransitionTime"],
                );
                o["status"]["conditions"] = json!(conds);
                changed
            },
        );
        return;
    }
    ctx.cluster.registry_mut().insert(std::sync::Arc::new(def));
    objects::update_status(
        ctx,
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "",
        &key.name,
        MANAGER,
        |o| {
            let before = o["status"].clone();
            let mut conds = objects::conditions(o);
            objects::set_condition(
                &mut conds,
                json!({"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found"}),
                &["lastTransitionTime"],
            );
            objects::set_condition(
                &mut conds,
                json!({"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"}),
                &["lastTransitionTime"],
            );
            conds.retain(|c| c["type"] != "Terminating");
            let mut stored: Vec<Value> = o["status"]["storedVersions"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            for s in &storage {
                if !stored.iter().any(|x| x == s) {
                    stored.push(json!(s));
                }
            }
            o["status"]["conditions"] = json!(conds);
            o["status"]["acceptedNames"] = accepted.clone();
            o["status"]["storedVersions"] = json!(stored);
            o["status"] != before
        },
    );
}

fn cleanup(ctx: &Ctx, key: &ObjectKey, crd: &Value) {
    if !meta::finalizers(crd).iter().any(|f| f == CLEANUP) {
        unregister(ctx, &key.name);
        return;
    }
    objects::update_status(
        ctx,
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "",
        &key.name,
        MANAGER,
        |o| {
            let mut conds = objects::conditions(o);
            let changed = objects::set_condition(
                &mut conds,
                json!({"type": "Terminating", "status": "True", "reason": "InstanceDeletionInProgress", "message": "CustomResource deletion is in progress"}),
                &["lastTransitionTime"],
            );
            o["status"]["conditions"] = json!(conds);
            changed
        },
    );
    let resource = type_key(&key.name);
    let remaining = ctx.cluster.store.list(&resource, None).0;
    if remaining.is_empty() {
        unregister(ctx, &key.name);
        objects::update(
            ctx,
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            "",
            &key.name,
            MANAGER,
            |o| {
                let mut f = meta::finalizers(o);
                f.retain(|x| x != CLEANUP);
                meta::set_finalizers(o, &f);
                true
            },
        );
        return;
    }
    let (group, plural) = resource.split_once('/').unwrap_or(("", ""));
    for o in remaining {
        if meta::is_deleting(&o) {
            continue;
        }
        let _ = objects::delete(
            ctx,
            group,
            plural,
            meta::namespace(&o),
            meta::name(&o),
            Some("Background"),
            None,
        );
    }
}
