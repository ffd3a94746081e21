//! Moving a release's objects from one manifest to another (upgrade and rollback): what
//! is new, what stays, and what the new manifest dropped.

use chartkit_cluster::manifest::{Object, split};
use chartkit_cluster::{Propagation, Target};
use chartkit_render::{kind_order, uninstall_kind_order};

use serde_json::Value;

use crate::ownership::{keep, mark};
use crate::{Engine, EngineError, Waiting, Writing};

/// An object's identity across revisions: group, kind, namespace and name.
fn key(target: &Target) -> (String, String, Option<String>, String) {
    (
        target.resource.api.group.clone(),
        target.resource.api.kind.clone(),
        target.namespace.clone(),
        target.name.clone(),
    )
}

/// The plan of a change: the new objects (marked, in install order), which of them do
/// not exist in the old manifest, and the old objects the new manifest no longer has.
pub(crate) struct Change {
    pub objects: Vec<Object>,
    /// Per object: as the old manifest had it (client-side merges start from it), or
    /// None when it is new to the release.
    pub originals: Vec<Option<Value>>,
    pub created: Vec<Target>,
    /// Dropped objects not marked `helm.sh/resource-policy: keep`.
    pub dropped: Vec<Target>,
    /// Before each server-side apply, the fields the field manager's client-side writes
    /// own are handed to its applies (see `chartkit_cluster::csa_upgrade`).
    pub upgrade_client_side_fields: bool,
}

impl Engine {
    pub(crate) async fn plan_change(
        &self,
        old_manifest: &str,
        new_manifest: &str,
        release: &str,
        take_ownership: bool,
    ) -> Result<Change, EngineError> {
        let mut objects = split(new_manifest)?;
        objects.sort_by(|a, b| kind_order(a.kind(), b.kind()));
        for object in &mut objects {
            mark(object, release, &self.namespace);
        }
        let applier = self.applier();
        let new_targets = self.targets(&objects).await?;
        let mut old = split(old_manifest)?;
        old.sort_by(|a, b| uninstall_kind_order(a.kind(), b.kind()));
        let mut old_objects = Vec::new();
        let mut dropped = Vec::new();
        for object in &old {
            // A kind the cluster no longer serves has nothing left to delete.
            let Ok(target) = applier.target(object).await else {
                continue;
            };
            let k = key(&target);
            if !new_targets.iter().any(|t| key(t) == k) && !keep(object) {
                dropped.push(target);
            }
            old_objects.push((k, object));
        }
        let mut created = Vec::new();
        let mut fresh = Vec::new();
        let mut originals = Vec::new();
        for (object, target) in objects.iter().zip(&new_targets) {
            let k = key(target);
            let original = old_objects
                .iter()
                .find(|(old, _)| *old == k)
                .map(|(_, o)| o.value.clone());
            if original.is_none() {
                created.push(target.clone());
                fresh.push(object.clone());
            }
            originals.push(original);
        }
        // Objects new to the release must not belong to someone else.
        if !take_ownership {
            self.check_ownership("update", &fresh, release).await?;
        }
        Ok(Change {
            objects,
            originals,
            created,
            dropped,
            upgrade_client_side_fields: false,
        })
    }

    /// An upgrade's or rollback's change between its `pre-ACTION` and `post-ACTION`
    /// hooks (`action` is `upgrade` or `rollback`), the hooks' runs recorded in `release`.
    pub(crate) async fn carry_out_with_hooks(
        &self,
        release: &mut chartkit_release::Release,
        change: &Change,
        action: &str,
        no_hooks: bool,
        writing: Writing,
        waiting: Waiting,
    ) -> Result<(), EngineError> {
        let timeout = waiting.timeout;
        if !no_hooks {
            self.run_hooks(release, &format!("pre-{action}"), timeout)
                .await
                .map_err(|e| e.context(&format!("pre-{action} hooks failed")))?;
        }
        self.carry_out(change, writing, waiting).await?;
        if !no_hooks {
            self.run_hooks(release, &format!("post-{action}"), timeout)
                .await
                .map_err(|e| e.context(&format!("post-{action} hooks failed")))?;
        }
        Ok(())
    }

    /// Writes the new objects, deletes the dropped ones, and waits if asked.
    pub(crate) async fn carry_out(
        &self,
        change: &Change,
        writing: Writing,
        waiting: Waiting,
    ) -> Result<(), EngineError> {
        let applier = self.applier();
        for (object, original) in change.objects.iter().zip(&change.originals) {
            self.write(
                object,
                original.as_ref(),
                writing,
                change.upgrade_client_side_fields,
            )
            .await?;
        }
        let mut errors = Vec::new();
        for target in &change.dropped {
            if let Err(e) = applier.delete(target, Propagation::Background, None).await {
                errors.push(e.to_string());
            }
        }
        if !errors.is_empty() {
            return Err(EngineError::msg(format!(
                "failed to delete resources dropped from the chart: {}",
                errors.join("; ")
            )));
        }
        self.wait_for(&change.objects, waiting).await
    }

    /// Deletes what a failed change created (`--cleanup-on-fail`).
    pub(crate) async fn clean_up(&self, change: &Change) {
        let applier = self.applier();
        for target in &change.created {
            // Best effort: the change already failed; its error is what the user needs.
            let _ = applier.delete(target, Propagation::Background, None).await;
        }
    }
}
