//! Running a release's hooks for one event, as helm does: by weight then name, each
//! deleted first by its `before-hook-creation` policy, created, and watched until its Job
//! or Pod finishes; then deleted by the `hook-succeeded` or `hook-failed` policy.

use std::time::Duration;

use chartkit_cluster::manifest::{Object, split};
use chartkit_cluster::readiness::{self, WaitError};
use chartkit_cluster::{Propagation, Target};
use chartkit_release::{Hook, Release};
use kube::api::DynamicObject;
use serde_json::Value;

use crate::{Engine, EngineError, now};

const BEFORE_CREATION: &str = "before-hook-creation";
const SUCCEEDED: &str = "hook-succeeded";
const FAILED: &str = "hook-failed";

/// The hooks one event ran (indexes into the release's hooks, in run order) and, when
/// one failed (the last of them), why.
pub(crate) struct HookRun {
    pub order: Vec<usize>,
    pub failure: Option<EngineError>,
}

impl Engine {
    /// Runs the hooks of `event`, recording each run in the release, then deletes them
    /// by their policies. The error says which hook failed and why (a Job's failure
    /// condition, a Pod's phase, a timeout).
    pub(crate) async fn run_hooks(
        &self,
        release: &mut Release,
        event: &str,
        timeout: Duration,
    ) -> Result<(), EngineError> {
        let run = self
            .execute_hooks(release, event, timeout, &|_| true)
            .await?;
        self.finish_hooks(release, run, timeout).await
    }

    /// Runs the hooks of `event` that `chosen` picks, by weight then name, each deleted
    /// first by its `before-hook-creation` policy and watched until its Job or Pod
    /// finishes; stops at the first failure. Nothing is deleted by the `hook-succeeded`
    /// and `hook-failed` policies yet: `finish_hooks` does that, so that `test --logs`
    /// can read the pods' logs first.
    pub(crate) async fn execute_hooks(
        &self,
        release: &mut Release,
        event: &str,
        timeout: Duration,
        chosen: &dyn Fn(&Hook) -> bool,
    ) -> Result<HookRun, EngineError> {
        let mut order: Vec<usize> = release
            .hooks
            .iter()
            .enumerate()
            .filter(|(_, h)| {
                h.as_ref()
                    .is_some_and(|h| h.events.iter().any(|e| e == event) && chosen(h))
            })
            .map(|(i, _)| i)
            .collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (hook(release, a), hook(release, b));
            a.weight.cmp(&b.weight).then_with(|| a.name.cmp(&b.name))
        });
        for (position, &index) in order.iter().enumerate() {
            let h = hook_mut(release, index);
            if h.delete_policies.is_empty() {
                h.delete_policies.push(BEFORE_CREATION.to_string());
            }
            let h = h.clone();
            self.delete_hook_by_policy(&h, BEFORE_CREATION, timeout)
                .await?;
            let objects = split(&h.manifest).map_err(|e| {
                EngineError::msg(format!(
                    "unable to build kubernetes object for {event} hook {}: {e}",
                    h.path
                ))
            })?;
            hook_mut(release, index).last_run = chartkit_release::HookExecution {
                started_at: Some(now()),
                completed_at: None,
                phase: "Running".to_string(),
            };
            self.storage.update(release, now().unix()).await?;
            // Hooks are written the way the release is (helm: server-side unless csa).
            let client_side = release.apply_method == "csa";
            let result = self.create_and_watch(&objects, timeout, client_side).await;
            let run = &mut hook_mut(release, index).last_run;
            run.completed_at = Some(now());
            match result {
                Ok(()) => run.phase = "Succeeded".to_string(),
                Err(reason) => {
                    run.phase = "Failed".to_string();
                    order.truncate(position + 1);
                    return Ok(HookRun {
                        order,
                        failure: Some(EngineError::msg(format!(
                            "{event} hook {} failed: {reason}",
                            h.path
                        ))),
                    });
                }
            }
        }
        Ok(HookRun {
            order,
            failure: None,
        })
    }

    /// Deletes the hooks that ran by their policies: after a failure the failed one by
    /// `hook-failed` and those before it by `hook-succeeded` (cleanup errors give way to
    /// the hook's own failure, which is returned); after success each by
    /// `hook-succeeded`, newest first.
    pub(crate) async fn finish_hooks(
        &self,
        release: &Release,
        run: HookRun,
        timeout: Duration,
    ) -> Result<(), EngineError> {
        if let Some(failure) = run.failure {
            if let Some((&failed, earlier)) = run.order.split_last() {
                let failed = hook(release, failed).clone();
                let _ = self.delete_hook_by_policy(&failed, FAILED, timeout).await;
                for &index in earlier {
                    let earlier = hook(release, index).clone();
                    let _ = self
                        .delete_hook_by_policy(&earlier, SUCCEEDED, timeout)
                        .await;
                }
            }
            return Err(failure);
        }
        for &index in run.order.iter().rev() {
            let h = hook(release, index).clone();
            self.delete_hook_by_policy(&h, SUCCEEDED, timeout).await?;
        }
        Ok(())
    }

    async fn create_and_watch(
        &self,
        objects: &[Object],
        timeout: Duration,
        client_side: bool,
    ) -> Result<(), String> {
        let applier = self.applier();
        let mut targets = Vec::new();
        for object in objects {
            if client_side {
                applier
                    .update_client_side(object, None)
                    .await
                    .map_err(|e| e.to_string())?;
            } else {
                applier
                    .apply(object, false)
                    .await
                    .map_err(|e| e.to_string())?;
            }
            targets.push(applier.target(object).await.map_err(|e| e.to_string())?);
        }
        for target in &targets {
            match target.resource.api.kind.as_str() {
                "Job" => {
                    readiness::wait(
                        &self.client,
                        std::slice::from_ref(target),
                        timeout,
                        true,
                        self.progress.as_ref(),
                    )
                    .await
                    .map_err(|e| match e {
                        WaitError::Failed { object, reason } => {
                            format!("{object} failed: {reason}")
                        }
                        other => other.to_string(),
                    })?;
                }
                "Pod" => self.watch_pod(target, timeout).await?,
                // Helm considers every other kind done once created.
                _ => {}
            }
        }
        Ok(())
    }

    /// Waits until a hook Pod has run to completion.
    async fn watch_pod(&self, target: &Target, timeout: Duration) -> Result<(), String> {
        let api = target.api(&self.client);
        let finished = kube::runtime::wait::await_condition(
            api,
            &target.name,
            |object: Option<&DynamicObject>| {
                object.is_some_and(|o| {
                    matches!(
                        o.data["status"]["phase"].as_str(),
                        Some("Succeeded" | "Failed")
                    )
                })
            },
        );
        let pod = match tokio::time::timeout(timeout, finished).await {
            Ok(Ok(Some(pod))) => pod,
            Ok(Ok(None)) => return Err(format!("{} was deleted", target.describe())),
            Ok(Err(kube::runtime::wait::Error::ProbeFailed(e))) => {
                return Err(format!(
                    "{}: {}",
                    target.describe(),
                    chartkit_cluster::kube_error::describe_watch(&e)
                ));
            }
            Err(_) => {
                return Err(format!(
                    "{}: timed out after {} waiting for it to complete",
                    target.describe(),
                    chartkit_cluster::readiness::go_duration(timeout)
                ));
            }
        };
        let status = &pod.data["status"];
        if status["phase"] == "Failed" {
            let value = serde_json::to_value(&pod).unwrap_or(Value::Null);
            let reason = readiness::pod_problem(&value)
                .or_else(|| status["message"].as_str().map(str::to_string))
                .unwrap_or_else(|| "pod phase Failed".to_string());
            return Err(format!("{}: {reason}", target.describe()));
        }
        Ok(())
    }

    async fn delete_hook_by_policy(
        &self,
        h: &Hook,
        policy: &str,
        timeout: Duration,
    ) -> Result<(), EngineError> {
        // Deleting a CRD would take every object of its kind with it.
        if h.kind == "CustomResourceDefinition" || !h.delete_policies.iter().any(|p| p == policy) {
            return Ok(());
        }
        let objects = split(&h.manifest)?;
        let applier = self.applier();
        for object in &objects {
            let target = applier.target(object).await?;
            applier
                .delete(&target, Propagation::Background, Some(timeout))
                .await?;
        }
        Ok(())
    }
}

fn hook(release: &Release, index: usize) -> &Hook {
    release.hooks[index]
        .as_ref()
        .expect("filtered to present hooks")
}

fn hook_mut(release: &mut Release, index: usize) -> &mut Hook {
    release.hooks[index]
        .as_mut()
        .expect("filtered to present hooks")
}
