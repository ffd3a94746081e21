//! `uninstall`: pre-delete hooks, the release's objects deleted in uninstall order (those
//! marked `helm.sh/resource-policy: keep` left alone), post-delete hooks, and the records
//! removed or, with `keep_history`, the last one marked uninstalled.

use chartkit_cluster::Propagation;
use chartkit_cluster::manifest::split;
use chartkit_release::{Release, Status, StorageError};
use chartkit_render::uninstall_kind_order;

use crate::install::set_status;
use crate::ownership::keep;
use crate::{Engine, EngineError, Waiting, now};

#[derive(Debug, Clone, Default)]
pub struct UninstallOptions {
    pub name: String,
    pub keep_history: bool,
    pub no_hooks: bool,
    pub waiting: Waiting,
    pub propagation: Propagation,
    pub description: Option<String>,
    /// Find the release and stop there: nothing is deleted or recorded (Helm 4.1's
    /// `--dry-run`).
    pub dry_run: bool,
    /// A release that does not exist counts as uninstalled (`--ignore-not-found`).
    pub ignore_not_found: bool,
}

/// What an uninstall did.
#[derive(Debug, Clone)]
pub struct Uninstalled {
    /// The release's last revision; `None` when there was none and `ignore_not_found`
    /// made that fine.
    pub release: Option<Release>,
    /// `[Kind] name` of each object left in place by its resource policy.
    pub kept: Vec<String>,
}

impl Engine {
    pub async fn uninstall(&self, options: &UninstallOptions) -> Result<Uninstalled, EngineError> {
        if options.dry_run {
            return self.uninstall_dry_run(options).await;
        }
        if !chartkit_release::query::valid_release_name(&options.name) {
            return Err(EngineError::msg(format!(
                "uninstall: Release name is invalid: {}",
                options.name
            )));
        }
        let lock = self.lock(&options.name).await?;
        let result = self.uninstall_locked(options).await;
        self.unlock(&options.name, lock).await;
        result
    }

    async fn uninstall_locked(
        &self,
        options: &UninstallOptions,
    ) -> Result<Uninstalled, EngineError> {
        let name = &options.name;
        let history = match self.storage.history(name).await {
            Ok(history) => history,
            Err(StorageError::NotFound) if options.ignore_not_found => {
                return Ok(Uninstalled {
                    release: None,
                    kept: Vec::new(),
                });
            }
            Err(StorageError::NotFound) => {
                return Err(EngineError::msg(format!(
                    "uninstall: Release not loaded: {name}: release: not found"
                )));
            }
            Err(e) => return Err(e.into()),
        };
        let mut release = history
            .iter()
            .max_by_key(|r| r.version)
            .cloned()
            .expect("history is not empty");
        if release.status() == Status::Uninstalled {
            if !options.keep_history {
                self.purge(&history).await?;
                return Ok(Uninstalled {
                    release: Some(release),
                    kept: Vec::new(),
                });
            }
            return Err(EngineError::msg(format!(
                "the release named {name:?} is already deleted"
            )));
        }
        set_status(
            &mut release,
            Status::Uninstalling,
            "Deletion in progress (or silently failed)",
        );
        if let Some(info) = release.info.as_mut() {
            info.deleted = Some(now());
        }
        self.storage.update(&release, now().unix()).await?;
        let timeout = options.waiting.timeout;
        if !options.no_hooks {
            self.run_hooks(&mut release, "pre-delete", timeout)
                .await
                .map_err(|e| e.context("failed pre-delete"))?;
        }
        let mut objects = split(&release.manifest)?;
        objects.sort_by(|a, b| uninstall_kind_order(a.kind(), b.kind()));
        let mut kept = Vec::new();
        let mut errors = Vec::new();
        let applier = self.applier();
        let deadline = tokio::time::Instant::now() + timeout;
        for object in &objects {
            if keep(object) {
                kept.push(format!("[{}] {}", object.kind(), object.name()));
                continue;
            }
            let target = match applier.target(object).await {
                Ok(target) => target,
                Err(e) => {
                    errors.push(e.to_string());
                    continue;
                }
            };
            let wait = options
                .waiting
                .wait
                .then(|| deadline.saturating_duration_since(tokio::time::Instant::now()));
            if let Err(e) = applier.delete(&target, options.propagation, wait).await {
                errors.push(e.to_string());
            }
        }
        if !options.no_hooks {
            self.run_hooks(&mut release, "post-delete", timeout)
                .await
                .map_err(|e| e.context("failed post-delete"))?;
        }
        let description = options
            .description
            .as_deref()
            .unwrap_or("Uninstallation complete");
        set_status(&mut release, Status::Uninstalled, description);
        if options.keep_history {
            self.storage.update(&release, now().unix()).await?;
        } else {
            self.purge(&history).await?;
        }
        if !errors.is_empty() {
            return Err(EngineError::msg(format!(
                "failed to delete release: {name}: {}",
                errors.join("; ")
            )));
        }
        Ok(Uninstalled {
            release: Some(release),
            kept,
        })
    }

    /// helm 4.1's dry run: the newest revision is looked up, and that is all (what would
    /// be kept is not worked out, so nothing is listed).
    async fn uninstall_dry_run(
        &self,
        options: &UninstallOptions,
    ) -> Result<Uninstalled, EngineError> {
        let name = &options.name;
        if !chartkit_release::query::valid_release_name(name) {
            return Err(EngineError::msg(format!(
                "releaseContent: Release name is invalid: {name}"
            )));
        }
        let release = match self.storage.history(name).await {
            Ok(history) => history.into_iter().max_by_key(|r| r.version),
            Err(StorageError::NotFound) => None,
            Err(e) => return Err(e.into()),
        };
        match release {
            None if options.ignore_not_found => Ok(Uninstalled {
                release: None,
                kept: Vec::new(),
            }),
            None => Err(StorageError::NotFound.into()),
            release => Ok(Uninstalled {
                release,
                kept: Vec::new(),
            }),
        }
    }

    async fn purge(&self, history: &[Release]) -> Result<(), EngineError> {
        for record in history {
            match self.storage.delete(&record.name, record.version).await {
                Ok(_) | Err(StorageError::NotFound) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }
}
