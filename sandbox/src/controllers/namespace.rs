//! The namespace controller: a terminating namespace's objects are deleted (pods
//! gracefully, as the kubelet stops them; objects with finalizers stay until those are
//! removed), its status conditions say what remains, as the namespace lifecycle
//! controller writes them, and once it is empty its `kubernetes` finalizer is removed
//! and it goes.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use super::{Ctx, MANAGER, objects};
use crate::cluster::{Cluster, DeleteOptions, Target, WriteOptions, Written};
use crate::meta;
use crate::status::{ApiError, ApiResult};
use crate::store::ObjectKey;

pub fn reconcile(ctx: &Ctx, key: &ObjectKey) {
    let cluster = &ctx.cluster;
    let t = cluster.resource("", "namespaces", "", &key.name);
    let Some(ns) = cluster.get_raw(&t) else {
        return;
    };
    if !meta::is_deleting(&ns) {
        return;
    }
    let contents = cluster.store.in_namespace(&key.name);
    write_conditions(ctx, &key.name, &contents);
    if contents.is_empty() {
        let mut finalized = (*ns).clone();
        finalized["spec"]["finalizers"] = json!([]);
        let ft = Target {
            subresource: "finalize".into(),
            ..t
        };
        let opts = WriteOptions {
            manager: MANAGER.into(),
            ..WriteOptions::default()
        };
        if let Err(e) = finalize(cluster, &ft, finalized, &opts) {
            tracing::debug!(namespace = key.name, error = %e, "finalizing namespace");
        }
        return;
    }
    let opts = DeleteOptions {
        propagation: Some("Background".into()),
        ..DeleteOptions::default()
    };
    for (resource, name) in &contents {
        let Some(def) = cluster.registry().by_key(resource) else {
            continue;
        };
        let target = Target {
            version: def.versions[0].clone(),
            def,
            namespace: key.name.clone(),
            name: name.clone(),
            subresource: String::new(),
        };
        if let Some(o) = cluster.get_raw(&target)
            && meta::is_deleting(&o)
        {
            continue;
        }
        if let Err(e) = cluster.delete(&target, &opts) {
            tracing::debug!(error = %e, "deleting namespace content");
        }
    }
    // Content held by finalizers is looked at again now and then, as the controller
    // resyncs.
    ctx.requeue(key, Duration::from_secs(2));
}

/// The conditions of a terminating namespace: what is left, and which finalizers
/// hold it.
fn write_conditions(ctx: &Ctx, namespace: &str, contents: &[(String, String)]) {
    let mut remaining: BTreeMap<String, usize> = BTreeMap::new();
    let mut finalizers: BTreeMap<String, usize> = BTreeMap::new();
    for (resource, name) in contents {
        let (group, plural) = resource.split_once('/').unwrap_or(("", resource));
        *remaining.entry(format!("{plural}.{group}")).or_default() += 1;
        if let Some(o) = ctx
            .cluster
            .store
            .get(&objects::key(resource, namespace, name))
        {
            for f in meta::finalizers(&o) {
                *finalizers.entry(f).or_default() += 1;
            }
        }
    }
    let (remain_status, remain_reason, remain_msg) = if remaining.is_empty() {
        (
            "False",
            "ContentRemoved",
            "All content successfully removed".to_string(),
        )
    } else {
        let parts: Vec<String> = remaining
            .iter()
            .map(|(r, n)| format!("{r} has {n} resource instances"))
            .collect();
        (
            "True",
            "SomeResourcesRemain",
            format!("Some resources are remaining: {}", parts.join(", ")),
        )
    };
    let (fin_status, fin_reason, fin_msg) = if finalizers.is_empty() {
        (
            "False",
            "ContentHasNoFinalizers",
            "All content-preserving finalizers finished".to_string(),
        )
    } else {
        let parts: Vec<String> = finalizers
            .iter()
            .map(|(f, n)| format!("{f} in {n} resource instances"))
            .collect();
        (
            "True",
            "SomeFinalizersRemain",
            format!(
                "Some content in the namespace has finalizers remaining: {}",
                parts.join(", ")
            ),
        )
    };
    let wanted = [
        (
            "NamespaceDeletionDiscoveryFailure",
            "False",
            "ResourcesDiscovered",
            "All resources successfully discovered".to_string(),
        ),
        (
            "NamespaceDeletionGroupVersionParsingFailure",
            "False",
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed".to_string(),
        ),
        (
            "NamespaceDeletionContentFailure",
            "False",
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization".to_string(),
        ),
        (
            "NamespaceContentRemaining",
            remain_status,
            remain_reason,
            remain_msg,
        ),
        (
            "NamespaceFinalizersRemaining",
            fin_status,
            fin_reason,
            fin_msg,
        ),
    ];
    objects::update_status(ctx, "", "namespaces", "", namespace, MANAGER, |o| {
        let mut conds = objects::conditions(o);
        let mut changed = false;
        for (ty, status, reason, message) in &wanted {
            changed |= objects::set_condition(
                &mut conds,
                json!({"type": ty, "status": status, "reason": reason, "message": message}),
                &["lastTransitionTime"],
            );
        }
        // Keep the order the controller lists them in.
        conds.sort_by_key(|c| {
            wanted
                .iter()
                .position(|w| c["type"] == w.0)
                .unwrap_or(wanted.len())
        });
        if changed {
            o["status"]["conditions"] = Value::Array(conds);
        }
        changed
    });
}

/// PUT `namespaces/NAME/finalize`: only `spec.finalizers` changes; a terminating
/// namespace with none left (and no metadata finalizers) is removed.
pub fn finalize(
    cluster: &Cluster,
    t: &Target,
    body: Value,
    opts: &WriteOptions,
) -> ApiResult<Written> {
    let finalizers = match &body["spec"]["finalizers"] {
        Value::Null => json!([]),
        f => f.clone(),
    };
    let manager = if opts.manager.is_empty() {
        MANAGER
    } else {
        &opts.manager
    };
    match cluster.mutate(t, manager, |ns| {
        if ns["spec"]["finalizers"] == finalizers {
            return false;
        }
        ns["spec"]["finalizers"] = finalizers.clone();
        true
    })? {
        Some(written) => Ok(written),
        None => {
            let object = cluster
                .get_raw(t)
                .map(|o| cluster.present(t, &o))
                .ok_or_else(|| ApiError::not_found("namespaces", "", &t.name))?;
            Ok(Written {
                object,
                created: false,
                warnings: Vec::new(),
                rv: 0,
            })
        }
    }
}
