//! `upgrade`: render the chart as the next revision, record it pending, run the
//! pre-upgrade hooks, apply the new objects and delete those the chart dropped, wait,
//! run the post-upgrade hooks, then mark the previous revision superseded.

use std::collections::BTreeMap;

use chartkit_chart::Chart;
use chartkit_release::{Release, Status, StorageError};
use chartkit_yaml::Map;

use crate::install::{
    InstallOptions, RenderRequest, Rendering, check_hide_secret, render_release, set_status,
    supersede,
};
use crate::labels::{check_user_labels, merge_labels};
use crate::{Engine, EngineError, RollbackOptions, Waiting, now};

/// How an upgrade computes the values it renders with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ValuesMode {
    /// Helm's default: the new values, or the previous ones when none are given.
    #[default]
    Default,
    /// The new values over the previous ones.
    Reuse,
    /// The new values only.
    Reset,
    /// The previous values, then the new ones, over the new chart's defaults.
    ResetThenReuse,
}

#[derive(Debug, Clone, Default)]
pub struct UpgradeOptions {
    pub name: String,
    pub values_mode: ValuesMode,
    pub waiting: Waiting,
    pub no_hooks: bool,
    /// `--atomic`: a failed upgrade is rolled back to the last deployed revision.
    pub atomic: bool,
    pub cleanup_on_fail: bool,
    pub writing: crate::Writing,
    /// `--take-ownership`: adopt existing objects whatever release (if any) owns them.
    pub take_ownership: bool,
    /// `--upgrade-crds`: apply the chart's `crds/` too, changed ones included (helm
    /// installs them once and never changes them).
    pub upgrade_crds: bool,
    /// Revisions kept (0: all).
    pub max_history: usize,
    /// `--recover`: a newest revision left pending by an operation that holds no lock
    /// (helm's, killed) is marked failed, and the upgrade goes on.
    pub recover: bool,
    pub description: Option<String>,
    /// Prepare the revision and check it against the cluster, recording and changing
    /// nothing (helm's client and server dry runs do the same for an upgrade: both read
    /// the release's history from the cluster).
    pub dry_run: bool,
    /// `--labels`: merged over the last revision's; a value `null` removes a label.
    pub labels: BTreeMap<String, String>,
    pub rendering: Rendering,
}

/// The newest revision of a history.
pub(crate) fn latest(history: &[Release]) -> Option<&Release> {
    history.iter().max_by_key(|r| r.version)
}

/// Puts `revision` in place of the history's copy of it.
pub(crate) fn replace_revision(history: &mut [Release], revision: &Release) {
    if let Some(old) = history.iter_mut().find(|r| r.version == revision.version) {
        *old = revision.clone();
    }
}

pub(crate) fn check_not_pending(last: &Release) -> Result<(), EngineError> {
    if last.status().is_pending() {
        return Err(EngineError::msg(
            "another operation (install/upgrade/rollback) is in progress",
        ));
    }
    Ok(())
}

/// The chart and values an upgrade renders with, as helm's `reuseValues` makes them, and
/// whether the chart's defaults were replaced. `--reuse-values` replaces the new chart's
/// defaults with the previous release's computed values (its recorded chart's values
/// coalesced with its config: new defaults are not picked up, as in helm), and both
/// reusing modes coalesce the new values over the previous config.
fn values_for_upgrade(
    mut chart: Chart,
    user_values: &Map,
    current: &Release,
    mode: ValuesMode,
) -> (Chart, Map, bool) {
    let previous = current.config.clone().unwrap_or_default();
    let mut ignored = Vec::new();
    let mut over_previous = || {
        let mut values = user_values.clone();
        chartkit_values::coalesce_tables(&mut values, previous.clone(), &mut ignored);
        values
    };
    match mode {
        ValuesMode::Reset => (chart, user_values.clone(), false),
        ValuesMode::Reuse => {
            let values = over_previous();
            chart.values = chartkit_release::views::computed_values(current);
            (chart, values, true)
        }
        ValuesMode::ResetThenReuse => {
            let values = over_previous();
            (chart, values, false)
        }
        ValuesMode::Default if user_values.is_empty() && !previous.is_empty() => {
            (chart, previous, false)
        }
        ValuesMode::Default => (chart, user_values.clone(), false),
    }
}

impl Engine {
    /// Upgrades a release; with `install`, installs it when it has no history. The flag
    /// says whether it was installed.
    pub async fn upgrade(
        &self,
        chart: Chart,
        user_values: &Map,
        options: &UpgradeOptions,
        install: Option<&InstallOptions>,
    ) -> Result<(Release, Vec<String>, bool), EngineError> {
        // Before the lock, whose Lease is named after the release.
        if !chartkit_release::query::valid_release_name(&options.name) {
            return Err(EngineError::msg(format!(
                "release name is invalid: {}",
                options.name
            )));
        }
        check_hide_secret(options.rendering.hide_secret, options.dry_run)?;
        let options = &UpgradeOptions {
            waiting: options.waiting.with_rollback_on_failure(options.atomic),
            ..options.clone()
        };
        let install = install.map(|install| InstallOptions {
            waiting: install.waiting.with_rollback_on_failure(install.atomic),
            ..install.clone()
        });
        let install = install.as_ref();
        if options.dry_run {
            return self
                .upgrade_locked(chart, user_values, options, install)
                .await;
        }
        let lock = self.lock(&options.name).await?;
        let result = self
            .upgrade_locked(chart, user_values, options, install)
            .await;
        self.unlock(&options.name, lock).await;
        result
    }

    async fn upgrade_locked(
        &self,
        chart: Chart,
        user_values: &Map,
        options: &UpgradeOptions,
        install: Option<&InstallOptions>,
    ) -> Result<(Release, Vec<String>, bool), EngineError> {
        let name = &options.name;
        let mut history = match self.storage.history(name).await {
            Ok(history) => history,
            Err(StorageError::NotFound) => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        let uninstalled = latest(&history).is_some_and(|r| r.status() == Status::Uninstalled);
        if (history.is_empty() || uninstalled)
            && let Some(install) = install
        {
            if uninstalled {
                return Err(EngineError::msg(format!(
                    "{name:?} has no deployed releases"
                )));
            }
            let (release, warnings) = self.install(chart, user_values, install).await?;
            return Ok((release, warnings, true));
        }
        let Some(mut last) = latest(&history).cloned() else {
            return Err(EngineError::msg(format!(
                "{name:?} has no deployed releases"
            )));
        };
        if options.dry_run {
            // No lock is taken: a pending revision may be a chartkit operation under way.
            check_not_pending(&last)?;
        } else {
            self.settle_pending(&mut last, options.recover, "upgrade")
                .await?;
            replace_revision(&mut history, &last);
        }
        let current = match self.storage.deployed(name).await {
            Ok(r) => r,
            Err(StorageError::NoDeployed(_)) if last.status() == Status::Failed => last.clone(),
            Err(StorageError::NoDeployed(_)) => {
                return Err(EngineError::msg(format!(
                    "{name:?} has no deployed releases"
                )));
            }
            Err(e) => return Err(e.into()),
        };
        let (chart, values, defaults_replaced) =
            values_for_upgrade(chart, user_values, &current, options.values_mode);
        let writing = options.writing.resolve(Some(last.apply_method.as_str()))?;
        if options.upgrade_crds && !options.dry_run {
            let crds = chartkit_render::crd_files(&chart);
            if !crds.is_empty() {
                self.install_crds(&crds, options.waiting.timeout, true)
                    .await?;
            }
        }
        let capabilities = self.capabilities().await?;
        check_user_labels(&options.labels)?;
        let (mut release, warnings) = render_release(
            chart,
            &values,
            RenderRequest {
                name: name.clone(),
                namespace: self.namespace.clone(),
                revision: last.version + 1,
                is_upgrade: true,
                capabilities,
                rendering: options.rendering.clone(),
                defaults_replaced,
            },
        )?;
        if let (Some(info), Some(first)) = (
            release.info.as_mut(),
            current.info.as_ref().and_then(|i| i.first_deployed),
        ) {
            info.first_deployed = Some(first);
        }
        // helm starts from the newest revision's labels, deployed or not.
        release.labels = merge_labels(&last.labels, &options.labels);
        release.apply_method = writing.method().to_string();
        set_status(&mut release, Status::PendingUpgrade, "Preparing upgrade");
        let mut change = self
            .plan_change(
                &current.manifest,
                &release.manifest,
                name,
                options.take_ownership,
            )
            .await?;
        // Going from client-side writes to server-side apply, helm's manager hands the
        // fields its writes own to its applies first (as helm does: by the method of the
        // revision the upgrade starts from).
        change.upgrade_client_side_fields =
            writing.is_server_side() && matches!(current.apply_method.as_str(), "" | "csa");
        if options.dry_run {
            // helm keeps a --description here too, which also keeps the status text
            // from printing the manifest.
            let description = options.description.as_deref().unwrap_or("Dry run complete");
            set_status(&mut release, Status::PendingUpgrade, description);
            return Ok((release, warnings, false));
        }
        self.storage
            .create(&release, options.max_history, now().unix())
            .await?;
        let outcome = self
            .carry_out_with_hooks(
                &mut release,
                &change,
                "upgrade",
                options.no_hooks,
                writing,
                options.waiting,
            )
            .await;
        match outcome {
            Ok(()) => {
                let mut superseded = current.clone();
                supersede(&mut superseded);
                self.storage.update(&superseded, now().unix()).await?;
                let description = options.description.as_deref().unwrap_or("Upgrade complete");
                set_status(&mut release, Status::Deployed, description);
                self.storage.update(&release, now().unix()).await?;
                Ok((release, warnings, false))
            }
            Err(error) => {
                set_status(
                    &mut release,
                    Status::Failed,
                    &format!("Upgrade {name:?} failed: {error}"),
                );
                let _ = self.storage.update(&release, now().unix()).await;
                if options.cleanup_on_fail {
                    self.clean_up(&change).await;
                }
                if options.atomic {
                    // helm goes back to the newest revision that was ever deployed.
                    let Some(good) = history
                        .iter()
                        .filter(|r| matches!(r.status(), Status::Superseded | Status::Deployed))
                        .map(|r| r.version)
                        .max()
                    else {
                        return Err(EngineError::msg(format!(
                            "unable to find a previously successful release when attempting to rollback. original upgrade error: {error}"
                        )));
                    };
                    let rollback = RollbackOptions {
                        name: name.clone(),
                        revision: good,
                        waiting: options.waiting,
                        no_hooks: options.no_hooks,
                        cleanup_on_fail: options.cleanup_on_fail,
                        writing: options.writing,
                        max_history: options.max_history,
                        recover: false,
                        dry_run: false,
                    };
                    if let Err(again) = self.rollback(&rollback).await {
                        return Err(EngineError::msg(format!(
                            "an error occurred while rolling back the release. original upgrade error: {error}: {again}"
                        )));
                    }
                    return Err(EngineError::msg(format!(
                        "release {name} failed, and has been rolled back due to rollback-on-failure being set: {error}"
                    )));
                }
                Err(error)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chartkit_yaml::Value;

    fn map(yaml: &str) -> Map {
        chartkit_yaml::parse_values(yaml).unwrap()
    }

    /// A previous revision whose record keeps `values` and whose config is `config`.
    fn previous(values: &str, config: &str) -> Release {
        Release {
            chart: Some(chartkit_release::model::Chart {
                values: Some(map(values)),
                ..Default::default()
            }),
            config: Some(map(config)),
            ..Default::default()
        }
    }

    fn new_chart() -> Chart {
        Chart {
            values: map("a: new\nfresh: 1\n"),
            ..Default::default()
        }
    }

    #[test]
    fn reuse_values_starts_from_the_previous_computed_values() {
        let current = previous("a: old\nb: {c: 1, d: 2}\n", "b: {c: 5}\nx: 1\n");
        let user = map("x: null\nz: 2\n");
        let (chart, values, replaced) =
            values_for_upgrade(new_chart(), &user, &current, ValuesMode::Reuse);
        assert!(replaced);
        // The previous record's values with its config over them; the new defaults
        // are not there.
        assert_eq!(
            chartkit_yaml::to_yaml(&Value::Map(chart.values)),
            "a: old\nb:\n  c: 5\n  d: 2\nx: 1\n"
        );
        // Coalesced, not merged: the user's null removes the previous `x`.
        assert_eq!(
            chartkit_yaml::to_yaml(&Value::Map(values)),
            "b:\n  c: 5\nz: 2\n"
        );
    }

    #[test]
    fn reset_then_reuse_keeps_the_new_chart_defaults() {
        let current = previous("a: old\n", "b: 1\n");
        let (chart, values, replaced) = values_for_upgrade(
            new_chart(),
            &map("c: 2\n"),
            &current,
            ValuesMode::ResetThenReuse,
        );
        assert!(!replaced);
        assert_eq!(chart.values, new_chart().values);
        assert_eq!(chartkit_yaml::to_yaml(&Value::Map(values)), "b: 1\nc: 2\n");
    }

    #[test]
    fn default_mode_takes_the_previous_config_only_without_new_values() {
        let current = previous("a: old\n", "b: 1\n");
        let (_, values, _) =
            values_for_upgrade(new_chart(), &Map::new(), &current, ValuesMode::Default);
        assert_eq!(values, map("b: 1\n"));
        let (_, values, _) =
            values_for_upgrade(new_chart(), &map("c: 2\n"), &current, ValuesMode::Default);
        assert_eq!(values, map("c: 2\n"));
    }
}
