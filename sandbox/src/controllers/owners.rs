//! Who owns what: an index from an owner's uid to its dependents' keys (kept from the
//! change stream, as the garbage collector's graph is), and the routing it makes
//! possible: a change to a dependent wakes its owners, an owner's removal wakes its
//! dependents.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use serde_json::Value;

use super::Ctx;
use crate::cluster::Cluster;
use crate::meta;
use crate::store::{Change, ObjectKey};

/// Owner uid → dependents.
#[derive(Default)]
pub struct Index {
    dependents: Mutex<HashMap<String, HashSet<ObjectKey>>>,
}

impl Index {
    /// Updates the index for a change of `key` from `previous` to `object`.
    pub fn record(
        &self,
        _cluster: &Cluster,
        key: &ObjectKey,
        previous: Option<&Value>,
        object: Option<&Value>,
    ) {
        let mut d = self.dependents.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = previous {
            for r in refs(p) {
                if let Some(uid) = r["uid"].as_str()
                    && let Some(set) = d.get_mut(uid)
                {
                    set.remove(key);
                    if set.is_empty() {
                        d.remove(uid);
                    }
                }
            }
        }
        if let Some(o) = object {
            for r in refs(o) {
                if let Some(uid) = r["uid"].as_str() {
                    d.entry(uid.to_string()).or_default().insert(key.clone());
                }
            }
        }
    }

    /// The keys of objects that name `uid` as an owner.
    pub fn dependents(&self, uid: &str) -> Vec<ObjectKey> {
        let d = self.dependents.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<ObjectKey> = d
            .get(uid)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default();
        out.sort();
        out
    }
}

fn refs(object: &Value) -> &[Value] {
    super::objects::owner_refs(object)
}

/// The key an ownerReference of an object in `namespace` points to, if its kind is
/// served.
pub fn owner_key(cluster: &Cluster, namespace: &str, reference: &Value) -> Option<ObjectKey> {
    let def = cluster.registry().for_object(
        reference["apiVersion"].as_str()?,
        reference["kind"].as_str()?,
    )?;
    Some(ObjectKey {
        resource: def.key(),
        namespace: if def.namespaced {
            namespace.to_string()
        } else {
            String::new()
        },
        name: reference["name"].as_str()?.to_string(),
    })
}

pub fn route(ctx: &Ctx, change: &Change) {
    let object = change.object.as_deref();
    let previous = change.previous.as_deref();
    ctx.state
        .owners
        .record(&ctx.cluster, &change.key, previous, object);
    for o in [object, previous].into_iter().flatten() {
        for r in refs(o) {
            if let Some(k) = owner_key(&ctx.cluster, &change.key.namespace, r) {
                ctx.queue.add(k);
            }
        }
    }
    // An owner gone, or being deleted, may leave its dependents to collect.
    let subject = change.subject();
    let gone_or_deleting = object.is_none_or(meta::is_deleting);
    if gone_or_deleting {
        for k in ctx.state.owners.dependents(meta::uid(subject)) {
            ctx.queue.add(k);
        }
    }
}
