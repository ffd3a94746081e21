//! What an upgrade or a rollback would do to each object, asked of the API server
//! without doing it: the objects are prepared exactly as the operation prepares them
//! (rendered, marked, compared with the previous manifest) and each write is sent with
//! `dryRun=All` by the method the operation would use, so the server's defaulting,
//! admission and merge show in the result. For `chartkit diff`.

use chartkit_chart::Chart;
use chartkit_cluster::manifest::{Object, split};
use chartkit_release::{Release, Status, StorageError};
use chartkit_yaml::Map;
use serde_json::Value;

use crate::rollback::rollback_ends;
use crate::upgrade::latest;
use crate::{
    DryRun, Engine, EngineError, InstallOptions, RollbackOptions, UpgradeOptions, Writing,
};

/// One object of a plan: the cluster's copy now and the one the operation would leave.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    pub api_version: String,
    pub kind: String,
    /// The object's namespace, or the release's for objects that name none (cluster-scoped
    /// ones too, as helm-diff names them).
    pub namespace: String,
    pub name: String,
    /// Now: the live object (`None`: absent), or for a plan between two revisions, the
    /// older revision's manifest object.
    pub current: Option<Value>,
    /// After: the API server's answer to the dry-run write (`None`: deleted).
    pub target: Option<Value>,
    /// The hook events, for a hook (compared manifest to manifest: a hook is created
    /// afresh each time it runs, so the cluster has no copy to change).
    pub hook_events: Vec<String>,
}

/// What an operation would change, object by object (unchanged objects included).
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub objects: Vec<Planned>,
    /// The renderer's warnings.
    pub warnings: Vec<String>,
}

impl Engine {
    /// What `upgrade` (with `install`: `upgrade --install`) would do. Nothing is
    /// recorded, locked or written.
    pub async fn plan_upgrade(
        &self,
        chart: Chart,
        user_values: &Map,
        options: &UpgradeOptions,
        install: Option<&InstallOptions>,
    ) -> Result<Plan, EngineError> {
        let options = UpgradeOptions {
            dry_run: true,
            ..options.clone()
        };
        let install = install.map(|i| InstallOptions {
            dry_run: DryRun::Server,
            ..i.clone()
        });
        let (release, warnings, installed) = self
            .upgrade(chart, user_values, &options, install.as_ref())
            .await?;
        let (old_manifest, old_hooks, writing) = if installed {
            let writing = options.writing.resolve(None)?;
            (String::new(), Vec::new(), writing)
        } else {
            let (last, current) = self.upgrade_base(&options.name).await?;
            let writing = options.writing.resolve(Some(last.apply_method.as_str()))?;
            (current.manifest, current.hooks, writing)
        };
        let mut objects = self
            .plan_objects(
                &old_manifest,
                &release.manifest,
                &options.name,
                options.take_ownership,
                writing,
            )
            .await?;
        objects.extend(self.plan_hooks(&old_hooks, &release.hooks)?);
        Ok(Plan { objects, warnings })
    }

    /// What `rollback` would do.
    pub async fn plan_rollback(&self, options: &RollbackOptions) -> Result<Plan, EngineError> {
        let history = self.storage.history(&options.name).await?;
        let (last, target) = rollback_ends(&history, options.revision)?;
        let writing = options
            .writing
            .resolve(Some(target.apply_method.as_str()))?;
        let objects = self
            .plan_objects(
                &last.manifest,
                &target.manifest,
                &options.name,
                false,
                writing,
            )
            .await?;
        Ok(Plan {
            objects,
            warnings: Vec::new(),
        })
    }

    /// The manifests of two revisions of a release, older first (`to`: `None` for the
    /// newest revision), as helm-diff's `revision` compares them: from the records alone.
    pub async fn plan_revisions(
        &self,
        name: &str,
        from: i64,
        to: Option<i64>,
    ) -> Result<Plan, EngineError> {
        let history = self.storage.history(name).await?;
        let find = |version: i64| {
            history
                .iter()
                .find(|r| r.version == version)
                .ok_or_else(|| EngineError::msg(format!("release: not found: revision {version}")))
        };
        let (older, newer) = match to {
            Some(to) => (find(from.min(to))?, find(from.max(to))?),
            None => (
                find(from)?,
                latest(&history).expect("a history has a revision"),
            ),
        };
        let index = |release: &Release| -> Result<Vec<Placed>, EngineError> {
            Ok(split(&release.manifest)?
                .into_iter()
                .map(|o| {
                    let namespace = o.namespace().unwrap_or(&release.namespace).to_string();
                    (o, namespace, Vec::new())
                })
                .collect())
        };
        Ok(Plan {
            objects: pair(index(older)?, index(newer)?),
            warnings: Vec::new(),
        })
    }

    /// The revision an upgrade starts from (`current`: the deployed one, or the newest
    /// when that failed), and the newest one, whose apply method `auto` follows.
    async fn upgrade_base(&self, name: &str) -> Result<(Release, Release), EngineError> {
        let history = self.storage.history(name).await?;
        let last = latest(&history).cloned().expect("a history has a revision");
        let current = match self.storage.deployed(name).await {
            Ok(r) => r,
            Err(StorageError::NoDeployed(_)) if last.status() == Status::Failed => last.clone(),
            Err(e) => return Err(e.into()),
        };
        Ok((last, current))
    }

    /// Each object of the change from `old_manifest` to `new_manifest`: its live copy and
    /// the server's answer to a dry run of the write the operation would send; for each
    /// object the new manifest drops, its live copy.
    async fn plan_objects(
        &self,
        old_manifest: &str,
        new_manifest: &str,
        release: &str,
        take_ownership: bool,
        writing: Writing,
    ) -> Result<Vec<Planned>, EngineError> {
        let change = self
            .plan_change(old_manifest, new_manifest, release, take_ownership)
            .await?;
        let mut applier = self.applier();
        applier.dry_run = true;
        let mut planned = Vec::new();
        for (object, original) in change.objects.iter().zip(&change.originals) {
            let target = applier.target(object).await?;
            let live = target.api(&self.client).get_opt(&target.name).await?;
            let after = self
                .write_with(&applier, object, original.as_ref(), writing)
                .await?;
            planned.push(Planned {
                api_version: object.api_version().to_string(),
                kind: object.kind().to_string(),
                namespace: target.namespace.unwrap_or_else(|| self.namespace.clone()),
                name: target.name,
                current: live.map(to_json),
                target: Some(to_json(after)),
                hook_events: Vec::new(),
            });
        }
        for target in change.dropped {
            // Already gone: the delete would change nothing.
            let Some(live) = target.api(&self.client).get_opt(&target.name).await? else {
                continue;
            };
            let live = to_json(live);
            planned.push(Planned {
                api_version: live["apiVersion"].as_str().unwrap_or_default().to_string(),
                kind: target.resource.api.kind.clone(),
                namespace: target.namespace.unwrap_or_else(|| self.namespace.clone()),
                name: target.name,
                current: Some(live),
                target: None,
                hook_events: Vec::new(),
            });
        }
        Ok(planned)
    }

    fn plan_hooks(
        &self,
        old: &[Option<chartkit_release::Hook>],
        new: &[Option<chartkit_release::Hook>],
    ) -> Result<Vec<Planned>, EngineError> {
        let index = |hooks: &[Option<chartkit_release::Hook>]| -> Result<Vec<Placed>, EngineError> {
            let mut objects = Vec::new();
            for hook in hooks.iter().flatten() {
                for object in split(&hook.manifest)? {
                    let namespace = object.namespace().unwrap_or(&self.namespace).to_string();
                    objects.push((object, namespace, hook.events.clone()));
                }
            }
            Ok(objects)
        };
        Ok(pair(index(old)?, index(new)?))
    }
}

/// A manifest object: the object, its namespace (the release's when it names none) and
/// its hook events (none for an object of the release's manifest).
type Placed = (Object, String, Vec<String>);

/// Pairs the objects of two manifests by group, kind, namespace and name.
fn pair(old: Vec<Placed>, new: Vec<Placed>) -> Vec<Planned> {
    let key = |(o, ns, _): &Placed| {
        (
            api_group(o.api_version()).to_string(),
            o.kind().to_string(),
            ns.clone(),
            o.name().to_string(),
        )
    };
    let mut old: Vec<Option<Placed>> = old.into_iter().map(Some).collect();
    let mut planned = Vec::new();
    for entry in new {
        let k = key(&entry);
        let before = old
            .iter_mut()
            .find(|o| o.as_ref().is_some_and(|o| key(o) == k))
            .and_then(Option::take);
        let (object, namespace, hook_events) = entry;
        planned.push(Planned {
            api_version: object.api_version().to_string(),
            kind: object.kind().to_string(),
            namespace,
            name: object.name().to_string(),
            current: before.map(|(o, _, _)| o.value),
            target: Some(object.value),
            hook_events,
        });
    }
    for (object, namespace, hook_events) in old.into_iter().flatten() {
        planned.push(Planned {
            api_version: object.api_version().to_string(),
            kind: object.kind().to_string(),
            namespace,
            name: object.name().to_string(),
            current: Some(object.value),
            target: None,
            hook_events,
        });
    }
    planned
}

/// The group of an apiVersion (`apps/v1` → `apps`; the core `v1` → empty).
fn api_group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

fn to_json(object: kube::api::DynamicObject) -> Value {
    serde_json::to_value(object).expect("objects serialise")
}
