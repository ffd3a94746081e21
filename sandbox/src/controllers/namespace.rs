//! The namespace controller: a terminating namespace's objects are deleted, then its
//! `kubernetes` finalizer is removed and it goes.

use serde_json::{Value, json};

use super::{Ctx, MANAGER};
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
    if contents.is_empty() {
        let mut finalized = (*ns).clone();
        finalized["spec"]["finalizers"] = json!([]);
        let ft = Target {
            subresource: "finalize".into(),
            ..t
        };
        let _ = &finalized;
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
        grace_period: Some(0),
        ..DeleteOptions::default()
    };
    for (resource, name) in contents {
        let Some(def) = cluster.registry().by_key(&resource) else {
            continue;
        };
        let target = Target {
            version: def.versions[0].clone(),
            def,
            namespace: key.name.clone(),
            name,
            subresource: String::new(),
        };
        if let Some(o) = cluster.get_raw(&target)
            && meta::is_deleting(&o)
            && !meta::finalizers(&o).is_empty()
        {
            continue;
        }
        if let Err(e) = cluster.delete(&target, &opts) {
            tracing::debug!(error = %e, "deleting namespace content");
        }
    }
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
