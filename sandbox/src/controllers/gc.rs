//! The garbage collector: dependents whose owners are all gone are deleted in the
//! background; an owner deleted in the foreground (finalizer `foregroundDeletion`)
//! has its dependents deleted first and goes once none that block its deletion is
//! left; an owner deleted with `orphan` has its dependents' references to it removed,
//! then its finalizer.

use serde_json::Value;

use super::owners::owner_key;
use super::{Ctx, MANAGER, objects};
use crate::meta;
use crate::store::ObjectKey;

const FOREGROUND: &str = "foregroundDeletion";
const ORPHAN: &str = "orphan";

pub fn reconcile(ctx: &Ctx, key: &ObjectKey) {
    let Some(object) = ctx.cluster.store.get(key) else {
        return;
    };
    let finalizers = meta::finalizers(&object);
    if meta::is_deleting(&object) {
        if finalizers.iter().any(|f| f == ORPHAN) {
            orphan_dependents(ctx, key, &object);
            return;
        }
        if finalizers.iter().any(|f| f == FOREGROUND) {
            delete_dependents(ctx, key, &object);
            return;
        }
    }
    if !objects::owner_refs(&object).is_empty() {
        collect_if_dangling(ctx, key, &object);
    }
}

/// Where an owner stands, seen from a dependent.
enum Owner {
    /// Exists with the referenced uid, not being deleted in the foreground.
    Solid,
    /// Being deleted in the foreground: waits for its dependents.
    Waiting,
    /// Gone (or replaced by an object with another uid).
    Dangling,
    /// A kind this cluster does not serve: left alone.
    Unknown,
}

fn owner_state(ctx: &Ctx, ns: &str, reference: &Value) -> Owner {
    let Some(k) = owner_key(&ctx.cluster, ns, reference) else {
        return Owner::Unknown;
    };
    match ctx.cluster.store.get(&k) {
        Some(o) if o["metadata"]["uid"] == reference["uid"] => {
            if meta::is_deleting(&o) && meta::finalizers(&o).iter().any(|f| f == FOREGROUND) {
                Owner::Waiting
            } else {
                Owner::Solid
            }
        }
        _ => Owner::Dangling,
    }
}

fn collect_if_dangling(ctx: &Ctx, key: &ObjectKey, object: &Value) {
    let refs = objects::owner_refs(object).to_vec();
    let states: Vec<Owner> = refs
        .iter()
        .map(|r| owner_state(ctx, &key.namespace, r))
        .collect();
    let dangling: Vec<&str> = refs
        .iter()
        .zip(&states)
        .filter(|(_, s)| matches!(s, Owner::Dangling))
        .filter_map(|(r, _)| r["uid"].as_str())
        .collect();
    if dangling.is_empty() && !states.iter().any(|s| matches!(s, Owner::Waiting)) {
        return;
    }
    if meta::is_deleting(object) {
        return;
    }
    let Some(t) = objects::key_target(ctx, key) else {
        return;
    };
    if states
        .iter()
        .any(|s| matches!(s, Owner::Solid | Owner::Unknown))
    {
        // Some owner remains: only the references to the gone ones are removed.
        if dangling.is_empty() {
            return;
        }
        let gone: Vec<String> = dangling.iter().map(|s| s.to_string()).collect();
        let _ = ctx.cluster.mutate(&t, MANAGER, |o| remove_refs(o, &gone));
        return;
    }
    let waiting_and_blocking = refs.iter().zip(&states).any(|(r, s)| {
        matches!(s, Owner::Waiting) && r["blockOwnerDeletion"].as_bool() == Some(true)
    });
    let policy = if waiting_and_blocking {
        "Foreground"
    } else {
        "Background"
    };
    let _ = objects::delete_target(ctx, &t, Some(policy), None, Some(meta::uid(object)));
}

fn remove_refs(o: &mut Value, uids: &[String]) -> bool {
    let Some(refs) = o["metadata"]["ownerReferences"].as_array_mut() else {
        return false;
    };
    let before = refs.len();
    refs.retain(|r| !uids.iter().any(|u| r["uid"] == u.as_str()));
    let changed = refs.len() != before;
    if refs.is_empty()
        && let Some(m) = o["metadata"].as_object_mut()
    {
        m.shift_remove("ownerReferences");
    }
    changed
}

fn dependents(ctx: &Ctx, object: &Value) -> Vec<(ObjectKey, std::sync::Arc<Value>)> {
    let uid = meta::uid(object);
    ctx.state
        .owners
        .dependents(uid)
        .into_iter()
        .filter_map(|k| {
            let o = ctx.cluster.store.get(&k)?;
            objects::owner_refs(&o)
                .iter()
                .any(|r| r["uid"] == uid)
                .then_some((k, o))
        })
        .collect()
}

fn remove_finalizer(ctx: &Ctx, key: &ObjectKey, name: &str) {
    let Some(t) = objects::key_target(ctx, key) else {
        return;
    };
    let _ = ctx.cluster.mutate(&t, MANAGER, |o| {
        let mut f = meta::finalizers(o);
        let before = f.len();
        f.retain(|x| x != name);
        if f.len() == before {
            return false;
        }
        meta::set_finalizers(o, &f);
        true
    });
}

fn orphan_dependents(ctx: &Ctx, key: &ObjectKey, object: &Value) {
    let uid = vec![meta::uid(object).to_string()];
    for (k, _) in dependents(ctx, object) {
        if let Some(t) = objects::key_target(ctx, &k) {
            let _ = ctx.cluster.mutate(&t, MANAGER, |o| remove_refs(o, &uid));
        }
    }
    remove_finalizer(ctx, key, ORPHAN);
}

fn delete_dependents(ctx: &Ctx, key: &ObjectKey, object: &Value) {
    let mut blocking = 0;
    let uid = meta::uid(object);
    for (k, d) in dependents(ctx, object) {
        let blocks = objects::owner_refs(&d)
            .iter()
            .any(|r| r["uid"] == uid && r["blockOwnerDeletion"].as_bool() == Some(true));
        if blocks {
            blocking += 1;
        }
        if meta::is_deleting(&d) {
            continue;
        }
        // A dependent with other owners still there only loses its reference.
        let others_solid = objects::owner_refs(&d)
            .iter()
            .filter(|r| r["uid"] != uid)
            .any(|r| matches!(owner_state(ctx, &k.namespace, r), Owner::Solid));
        let Some(t) = objects::key_target(ctx, &k) else {
            continue;
        };
        if others_solid {
            let me = vec![uid.to_string()];
            let _ = ctx.cluster.mutate(&t, MANAGER, |o| remove_refs(o, &me));
            continue;
        }
        let policy = if blocks { "Foreground" } else { "Background" };
        let _ = objects::delete_target(ctx, &t, Some(policy), None, Some(meta::uid(&d)));
    }
    if blocking == 0 {
        remove_finalizer(ctx, key, FOREGROUND);
    }
}
