//! ControllerRevisions, the template history StatefulSets and DaemonSets keep (what
//! `kubectl rollout history` and `undo` read for them): one per distinct pod
//! template, named `<owner>-<hash>`, numbered in order of use.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{Ctx, MANAGER, objects};
use crate::meta;

/// The hash of a template, as the `controller-revision-hash` label carries it.
pub fn hash(template: &Value) -> String {
    let h = meta::hash_suffix(template);
    h[..10.min(h.len())].to_string()
}

/// The revisions `owner` controls, oldest first.
pub fn list(ctx: &Ctx, owner: &Value) -> Vec<Arc<Value>> {
    let mut out: Vec<Arc<Value>> =
        objects::list(ctx, "apps", "controllerrevisions", meta::namespace(owner))
            .into_iter()
            .filter(|r| objects::controlled_by(r, meta::uid(owner)))
            .collect();
    out.sort_by_key(|r| r["revision"].as_i64().unwrap_or(0));
    out
}

/// The revision for the owner's current template (made, or renumbered as the newest,
/// when needed); returns its name.
pub fn ensure(ctx: &Ctx, owner: &Value, template: &Value, selector_labels: &Value) -> String {
    let ns = meta::namespace(owner);
    let h = hash(template);
    let name = format!("{}-{h}", meta::name(owner));
    let existing = list(ctx, owner);
    let newest = existing
        .iter()
        .map(|r| r["revision"].as_i64().unwrap_or(0))
        .max()
        .unwrap_or(0);
    match existing.iter().find(|r| meta::name(r) == name) {
        Some(r) => {
            let rev = r["revision"].as_i64().unwrap_or(0);
            if rev < newest {
                objects::update(
                    ctx,
                    "apps",
                    "controllerrevisions",
                    ns,
                    &name,
                    MANAGER,
                    |o| {
                        o["revision"] = json!(newest + 1);
                        true
                    },
                );
            }
        }
        None => {
            let mut labels = selector_labels.as_object().cloned().unwrap_or_default();
            labels.insert("controller.kubernetes.io/hash".into(), json!(h));
            let rev = json!({
                "apiVersion": "apps/v1",
                "kind": "ControllerRevision",
                "metadata": {
                    "name": name,
                    "namespace": ns,
                    "labels": labels,
                    "ownerReferences": [objects::owner_ref(owner, true)],
                },
                "data": {"spec": {"template": with_patch_replace(template)}},
                "revision": newest + 1,
            });
            let _ = objects::create(ctx, "apps", "controllerrevisions", ns, rev, MANAGER);
        }
    }
    name
}

fn with_patch_replace(template: &Value) -> Value {
    let mut t = template.clone();
    t["$patch"] = json!("replace");
    t
}

/// The pod template a revision recorded.
pub fn template_of(ctx: &Ctx, owner: &Value, revision: &str) -> Option<Value> {
    let r = objects::get(
        ctx,
        "apps",
        "controllerrevisions",
        meta::namespace(owner),
        revision,
    )?;
    let mut t = r["data"]["spec"]["template"].clone();
    if let Some(m) = t.as_object_mut() {
        m.shift_remove("$patch");
    }
    Some(t)
}

/// Deletes revisions past `limit` that no pod uses, oldest first.
pub fn prune(ctx: &Ctx, owner: &Value, limit: i64, in_use: &[String]) {
    let all = list(ctx, owner);
    let unused: Vec<&Arc<Value>> = all
        .iter()
        .filter(|r| !in_use.iter().any(|u| u == meta::name(r)))
        .collect();
    let extra = unused.len() as i64 - limit.max(0);
    for r in unused.iter().take(extra.max(0) as usize) {
        let _ = objects::delete(
            ctx,
            "apps",
            "controllerrevisions",
            meta::namespace(owner),
            meta::name(r),
            None,
            None,
        );
    }
}
