//! `rollback`: a new revision with an earlier revision's chart, values and manifest,
//! applied as an upgrade to it would be.

use chartkit_release::{Info, Release, Status};

use crate::install::{set_status, supersede};
use crate::upgrade::{check_not_pending, latest, replace_revision};
use crate::{Engine, EngineError, Waiting, now};

/// `rollback NAME [REVISION]`.
#[derive(Debug, Clone, Default)]
pub struct RollbackOptions {
    pub name: String,
    /// 0: the revision before the newest.
    pub revision: i64,
    pub waiting: Waiting,
    pub no_hooks: bool,
    pub cleanup_on_fail: bool,
    pub writing: crate::Writing,
    pub max_history: usize,
    /// `--recover`: a newest revision left pending by an operation that holds no lock
    /// (helm's, killed) is marked failed, and the rollback goes on.
    pub recover: bool,
    /// Check that the revision exists and prepare the new one, changing nothing.
    pub dry_run: bool,
}

/// The newest revision of a history and the one a rollback to `revision` (0: the one
/// before the newest) brings back, refusing what helm refuses.
pub(crate) fn rollback_ends(
    history: &[Release],
    revision: i64,
) -> Result<(Release, Release), EngineError> {
    let last = latest(history).cloned().expect("history is not empty");
    check_not_pending(&last)?;
    let revision = if revision > 0 {
        revision
    } else {
        last.version - 1
    };
    if revision < 1 {
        return Err(EngineError::msg("no revision to roll back to"));
    }
    let Some(target) = history.iter().find(|r| r.version == revision).cloned() else {
        return Err(EngineError::msg(format!(
            "release has no {revision} version"
        )));
    };
    Ok((last, target))
}

impl Engine {
    pub async fn rollback(&self, options: &RollbackOptions) -> Result<(), EngineError> {
        // Before the lock, whose Lease is named after the release.
        if !chartkit_release::query::valid_release_name(&options.name) {
            return Err(EngineError::msg(format!(
                "prepareRollback: Release name is invalid: {}",
                options.name
            )));
        }
        if options.dry_run {
            return self.rollback_locked(options).await;
        }
        let lock = self.lock(&options.name).await?;
        let result = self.rollback_locked(options).await;
        self.unlock(&options.name, lock).await;
        result
    }

    async fn rollback_locked(&self, options: &RollbackOptions) -> Result<(), EngineError> {
        let name = &options.name;
        let mut history = self.storage.history(name).await?;
        if !options.dry_run
            && let Some(mut last) = latest(&history).cloned()
        {
            self.settle_pending(&mut last, options.recover, "rollback")
                .await?;
            replace_revision(&mut history, &last);
        }
        let (last, target) = rollback_ends(&history, options.revision)?;
        let revision = target.version;
        // The change starts from the newest revision, deployed or not, as helm's does:
        // after a failed upgrade that is the failed one, so what it created and the
        // target does not have is deleted (what makes `upgrade --atomic` leave the
        // cluster as it was).
        let current = last.clone();
        let description = format!("Rollback to {revision}");
        // The hooks keep their last runs, as helm copies them with the revision; those
        // of the rollback events get new ones when they run.
        let mut release = target.clone();
        release.version = last.version + 1;
        release.info = Some(Info {
            first_deployed: current.info.as_ref().and_then(|i| i.first_deployed),
            last_deployed: Some(now()),
            status: Status::PendingRollback,
            description: description.clone(),
            notes: target
                .info
                .as_ref()
                .map(|i| i.notes.clone())
                .unwrap_or_default(),
            ..Default::default()
        });
        // helm follows the method of the revision rolled back to.
        let writing = options
            .writing
            .resolve(Some(target.apply_method.as_str()))?;
        release.apply_method = writing.method().to_string();
        if options.dry_run {
            return Ok(());
        }
        let mut change = self
            .plan_change(&current.manifest, &release.manifest, name, false)
            .await?;
        // helm's rollbacks always hand client-side fields to the applies first.
        change.upgrade_client_side_fields = writing.is_server_side();
        self.storage
            .create(&release, options.max_history, now().unix())
            .await?;
        let outcome = self
            .carry_out_with_hooks(
                &mut release,
                &change,
                "rollback",
                options.no_hooks,
                writing,
                options.waiting,
            )
            .await;
        match outcome {
            Ok(()) => {
                for mut deployed in history
                    .into_iter()
                    .filter(|r| r.status() == Status::Deployed)
                {
                    supersede(&mut deployed);
                    self.storage.update(&deployed, now().unix()).await?;
                }
                set_status(&mut release, Status::Deployed, &description);
                self.storage.update(&release, now().unix()).await?;
                Ok(())
            }
            Err(error) => {
                set_status(
                    &mut release,
                    Status::Failed,
                    &format!("Rollback {name:?} failed: {error}"),
                );
                let _ = self.storage.update(&release, now().unix()).await;
                if options.cleanup_on_fail {
                    self.clean_up(&change).await;
                }
                Err(error)
            }
        }
    }
}
