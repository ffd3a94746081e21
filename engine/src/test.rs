//! `test`: runs a release's test hooks (optionally only some, by name), records each
//! run's phase in the release, reads the test pods' logs when asked, then deletes the
//! hooks by their policies.

use std::time::Duration;

use chartkit_release::{Hook, Release, StorageError};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::LogParams;

use crate::{Engine, EngineError, now};

#[derive(Debug, Clone, Default)]
pub struct TestOptions {
    pub name: String,
    pub timeout: Duration,
    /// `--filter name=X`: only these tests (all when empty).
    pub include: Vec<String>,
    /// `--filter '!name=X'`: not these.
    pub exclude: Vec<String>,
    /// `--logs`: read the test pods' logs before they are deleted.
    pub logs: bool,
}

/// What a test run did. The release is returned even when a test failed, so its
/// status (with the TEST SUITE phases) can be shown next to the failure.
pub struct Tested {
    pub release: Release,
    /// `POD LOGS: pod (container)` sections, when asked for.
    pub logs: Option<String>,
    pub failure: Option<EngineError>,
}

impl TestOptions {
    fn chosen(&self, hook: &Hook) -> bool {
        !self.exclude.contains(&hook.name)
            && (self.include.is_empty() || self.include.contains(&hook.name))
    }
}

impl Engine {
    pub async fn test(&self, options: &TestOptions) -> Result<Tested, EngineError> {
        let name = &options.name;
        if !chartkit_release::query::valid_release_name(name) {
            return Err(EngineError::msg(format!(
                "releaseTest: Release name is invalid: {name}"
            )));
        }
        let lock = self.lock(name).await?;
        let result = self.test_locked(options).await;
        self.unlock(name, lock).await;
        result
    }

    async fn test_locked(&self, options: &TestOptions) -> Result<Tested, EngineError> {
        let mut release = match self.storage.last(&options.name).await {
            Ok(release) => release,
            Err(StorageError::NotFound) => {
                return Err(EngineError::msg("release: not found"));
            }
            Err(e) => return Err(e.into()),
        };
        let run = self
            .execute_hooks(&mut release, "test", options.timeout, &|h| {
                options.chosen(h)
            })
            .await?;
        // helm records the skipped tests first, then those it ran. (Reordered in a copy:
        // the run refers to hooks by their place in `release`.)
        let mut recorded = release.clone();
        if !options.include.is_empty() || !options.exclude.is_empty() {
            let (ran, skipped): (Vec<_>, Vec<_>) = std::mem::take(&mut recorded.hooks)
                .into_iter()
                .partition(|h| h.as_ref().is_some_and(|h| options.chosen(h)));
            recorded.hooks = skipped.into_iter().chain(ran).collect();
        }
        let stored = self.storage.update(&recorded, now().unix()).await;
        let logs = if options.logs {
            Some(self.test_logs(&release, options).await?)
        } else {
            None
        };
        let failure = self
            .finish_hooks(&release, run, options.timeout)
            .await
            .err();
        stored?;
        Ok(Tested {
            release: recorded,
            logs,
            failure,
        })
    }

    /// The logs of every container of each test Pod run, by weight then name.
    async fn test_logs(
        &self,
        release: &Release,
        options: &TestOptions,
    ) -> Result<String, EngineError> {
        let mut tests: Vec<&Hook> = release
            .hooks
            .iter()
            .flatten()
            .filter(|h| {
                h.kind == "Pod" && h.events.iter().any(|e| e == "test") && options.chosen(h)
            })
            .collect();
        tests.sort_by(|a, b| a.weight.cmp(&b.weight).then_with(|| a.name.cmp(&b.name)));
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), &release.namespace);
        let mut out = String::new();
        let mut errors = Vec::new();
        for test in tests {
            let pod = pods.get(&test.name).await.map_err(|e| {
                EngineError::msg(format!(
                    "unable to get pod {}: {}",
                    test.name,
                    chartkit_cluster::kube_error::describe(&e)
                ))
            })?;
            let spec = pod.spec.unwrap_or_default();
            let containers = spec
                .init_containers
                .unwrap_or_default()
                .into_iter()
                .chain(spec.containers);
            for container in containers {
                let params = LogParams {
                    container: Some(container.name.clone()),
                    ..Default::default()
                };
                match pods.logs(&test.name, &params).await {
                    Ok(text) => {
                        out.push_str(&format!(
                            "POD LOGS: {} ({})\n{text}\n",
                            test.name, container.name
                        ));
                    }
                    Err(e) => errors.push(format!(
                        "unable to get logs for pod {}, container {}: {}",
                        test.name,
                        container.name,
                        chartkit_cluster::kube_error::describe(&e)
                    )),
                }
            }
        }
        if !errors.is_empty() {
            return Err(EngineError::msg(errors.join("\n")));
        }
        Ok(out)
    }
}
