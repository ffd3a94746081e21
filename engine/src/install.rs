//! `install`: render, install CRDs, record the release as pending, run the pre-install
//! hooks, apply the objects, wait, run the post-install hooks, and record the outcome.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use chartkit_chart::Chart;
use chartkit_cluster::manifest::{Object, split};
use chartkit_cluster::readiness;
use chartkit_release::{Info, Release, Status};
use chartkit_render::kind_order;
use chartkit_render::{KubeVersion, RenderOptions, parse_kube_version};
use chartkit_yaml::Map;
use serde_json::Value;

use crate::labels::check_user_labels;
use crate::ownership::{check_live, mark};
use crate::record::{chart_record, hooks, release_manifest};
use crate::{Engine, EngineError, UninstallOptions, Waiting, now};

/// Helm's `--dry-run` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DryRun {
    #[default]
    None,
    /// Render only, without the cluster.
    Client,
    /// Render with the cluster's capabilities, change nothing.
    Server,
}

#[derive(Debug, Clone, Default)]
pub struct InstallOptions {
    pub name: String,
    pub create_namespace: bool,
    pub waiting: Waiting,
    pub no_hooks: bool,
    pub skip_crds: bool,
    pub description: Option<String>,
    pub dry_run: DryRun,
    /// `--atomic`/`--rollback-on-failure`: a failed install is uninstalled.
    pub atomic: bool,
    pub writing: crate::Writing,
    /// Extra labels on the record (`--labels`).
    pub labels: BTreeMap<String, String>,
    /// `--take-ownership`: adopt existing objects whatever release (if any) owns them.
    pub take_ownership: bool,
    /// `--replace`: reuse the name of a release whose last revision is uninstalled or
    /// failed.
    pub replace: bool,
    pub rendering: Rendering,
}

/// Rendering switches `install` and `upgrade` share, named after helm's flags.
#[derive(Debug, Clone, Default)]
pub struct Rendering {
    /// `--render-subchart-notes`: subcharts' NOTES.txt joins the parent's.
    pub subchart_notes: bool,
    /// `--skip-schema-validation`: values are not checked against values.schema.json.
    pub skip_schema_validation: bool,
    /// `--hide-secret`: a dry run's manifest shows a placeholder for each v1 Secret.
    /// Refused without a dry run (as helm does), so no record ever holds the placeholder.
    pub hide_secret: bool,
    /// `--post-renderer`: what the manifests (and hooks) go through before they are
    /// recorded and applied.
    pub post_renderer: Option<chartkit_render::PostRenderer>,
}

/// What a render is for: the release, its revision, and the cluster's capabilities.
#[derive(Debug, Clone, Default)]
pub struct RenderRequest {
    pub name: String,
    pub namespace: String,
    pub revision: i64,
    pub is_upgrade: bool,
    pub capabilities: (KubeVersion, Vec<String>),
    pub rendering: Rendering,
    /// The chart's defaults were replaced by the previous release's computed values
    /// (`--reuse-values`): the record then keeps values even if the chart has no
    /// values.yaml, as helm's does.
    pub defaults_replaced: bool,
}

/// Renders a chart into a release record (not stored), as `install` and `upgrade` do
/// before they touch the cluster.
pub fn render_release(
    chart: Chart,
    user_values: &Map,
    request: RenderRequest,
) -> Result<(Release, Vec<String>), EngineError> {
    let has_defaults =
        request.defaults_replaced || chart.raw_file(chartkit_chart::VALUES_FILE).is_some();
    let options = RenderOptions {
        release_name: request.name.clone(),
        namespace: request.namespace.clone(),
        revision: request.revision,
        is_upgrade: request.is_upgrade,
        kube_version: request.capabilities.0,
        // A cluster's set (never empty: it has `v1`) replaces helm's defaults; none
        // (`install --dry-run=client`) leaves the defaults.
        api_versions_from_cluster: !request.capabilities.1.is_empty(),
        api_versions: request.capabilities.1,
        skip_schema_validation: request.rendering.skip_schema_validation,
        subchart_notes: request.rendering.subchart_notes,
        post_renderer: request.rendering.post_renderer.clone(),
        ..Default::default()
    };
    let rendered = chartkit_render::render(chart, user_values, &options)?;
    // helm records the chart as dependency processing left it, not as it was loaded.
    let record_chart = chart_record(&rendered.chart, has_defaults);
    let at = now();
    let release = Release {
        name: request.name,
        info: Some(Info {
            first_deployed: Some(at),
            last_deployed: Some(at),
            status: Status::Unknown,
            notes: rendered.notes.clone(),
            ..Default::default()
        }),
        chart: Some(record_chart),
        config: Some(user_values.clone()),
        manifest: release_manifest(&rendered, request.rendering.hide_secret),
        hooks: hooks(&rendered),
        version: request.revision,
        namespace: request.namespace,
        labels: BTreeMap::new(),
        apply_method: "ssa".to_string(),
    };
    Ok((release, rendered.warnings))
}

/// The checks helm makes of an install's request before it looks at the cluster: secrets
/// hidden only in a dry run, and a valid name.
pub(crate) fn check_install_request(options: &InstallOptions) -> Result<(), EngineError> {
    check_hide_secret(
        options.rendering.hide_secret,
        options.dry_run != DryRun::None,
    )?;
    let name = &options.name;
    if !chartkit_release::query::valid_release_name(name) {
        return Err(EngineError::msg(format!(
            "release name check failed: release name {name:?}: invalid release name, must match regex ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ and the length must not be longer than 53"
        )));
    }
    Ok(())
}

pub(crate) fn check_hide_secret(hide_secret: bool, dry_run: bool) -> Result<(), EngineError> {
    if hide_secret && !dry_run {
        return Err(EngineError::msg(
            "hiding Kubernetes secrets requires a dry-run mode",
        ));
    }
    Ok(())
}

/// `install --dry-run=client`: the release an install would record, rendered with
/// helm's default capabilities, without any cluster (nothing is checked against one).
pub fn install_offline(
    chart: Chart,
    user_values: &Map,
    options: &InstallOptions,
    namespace: &str,
) -> Result<(Release, Vec<String>), EngineError> {
    check_install_request(options)?;
    check_user_labels(&options.labels)?;
    let (mut release, warnings) = render_release(
        chart,
        user_values,
        RenderRequest {
            name: options.name.clone(),
            namespace: namespace.to_string(),
            revision: 1,
            is_upgrade: false,
            capabilities: Default::default(),
            rendering: options.rendering.clone(),
            ..Default::default()
        },
    )?;
    release.labels = options.labels.clone();
    release.apply_method = options.writing.resolve(None)?.method().to_string();
    set_status(&mut release, Status::PendingInstall, "Dry run complete");
    Ok((release, warnings))
}

/// A newer revision replaced this one: only the status changes, the description stays
/// ("Install complete" stays in `helm history`), as Helm's upgrade and rollback do.
pub(crate) fn supersede(release: &mut Release) {
    release.info.get_or_insert_with(Info::default).status = Status::Superseded;
}

pub(crate) fn set_status(release: &mut Release, status: Status, description: &str) {
    let info = release.info.get_or_insert_with(Info::default);
    info.status = status;
    info.description = description.to_string();
}

impl Engine {
    /// The Kubernetes version and API versions templates see (`.Capabilities`).
    pub async fn capabilities(&self) -> Result<(KubeVersion, Vec<String>), EngineError> {
        let info = self.client.apiserver_version().await?;
        let version = parse_kube_version(&info.git_version).map_err(|e| {
            EngineError::msg(format!(
                "the cluster reports Kubernetes version {:?}: {e}",
                info.git_version
            ))
        })?;
        // As helm's `GetVersionSet`: every group version, and every kind served at one
        // as `GROUP/VERSION/Kind` (what `.Capabilities.APIVersions.Has "apps/v1/Deployment"`
        // asks), each once.
        let mut group_versions = vec!["v1".to_string()];
        for group in self.client.list_api_groups().await?.groups {
            group_versions.extend(group.versions.into_iter().map(|v| v.group_version));
        }
        let mut lists = tokio::task::JoinSet::new();
        for group_version in group_versions.clone() {
            let client = self.client.clone();
            lists.spawn(async move {
                if group_version == "v1" {
                    client.list_core_api_resources(&group_version).await
                } else {
                    client.list_api_group_resources(&group_version).await
                }
            });
        }
        let mut api_versions: BTreeSet<String> = group_versions.into_iter().collect();
        // A group version that cannot be listed keeps its own entry, as helm's discovery
        // tolerates a failed group.
        while let Some(list) = lists.join_next().await {
            let Ok(Ok(list)) = list else {
                continue;
            };
            for resource in list.resources {
                api_versions.insert(format!("{}/{}", list.group_version, resource.kind));
            }
        }
        Ok((version, api_versions.into_iter().collect()))
    }

    /// Installs a chart. On failure the release is recorded as failed (or, with
    /// `atomic`, uninstalled) and the error says what failed.
    pub async fn install(
        &self,
        chart: Chart,
        user_values: &Map,
        options: &InstallOptions,
    ) -> Result<(Release, Vec<String>), EngineError> {
        // Before the lock, whose Lease is named after the release.
        check_install_request(options)?;
        let options = &InstallOptions {
            waiting: options.waiting.with_rollback_on_failure(options.atomic),
            ..options.clone()
        };
        if options.dry_run != DryRun::None {
            return self.install_locked(chart, user_values, options).await;
        }
        let lock = self.lock(&options.name).await?;
        let result = self.install_locked(chart, user_values, options).await;
        self.unlock(&options.name, lock).await;
        result
    }

    async fn install_locked(
        &self,
        chart: Chart,
        user_values: &Map,
        options: &InstallOptions,
    ) -> Result<(Release, Vec<String>), EngineError> {
        let name = &options.name;
        if options.dry_run == DryRun::Client {
            return install_offline(chart, user_values, options, &self.namespace);
        }
        if options.dry_run == DryRun::None {
            self.available_name(name, options.replace).await?;
        }
        let crds = chartkit_render::crd_files(&chart);
        if options.dry_run == DryRun::None && !options.skip_crds && !crds.is_empty() {
            self.install_crds(&crds, options.waiting.timeout, false)
                .await?;
        }
        let capabilities = self.capabilities().await?;
        check_user_labels(&options.labels)?;
        let (mut release, warnings) = render_release(
            chart,
            user_values,
            RenderRequest {
                name: name.clone(),
                namespace: self.namespace.clone(),
                revision: 1,
                is_upgrade: false,
                capabilities,
                rendering: options.rendering.clone(),
                ..Default::default()
            },
        )?;
        release.labels = options.labels.clone();
        set_status(
            &mut release,
            Status::PendingInstall,
            "Initial install underway",
        );
        let mut objects = split(&release.manifest)?;
        objects.sort_by(|a, b| kind_order(a.kind(), b.kind()));
        for object in &mut objects {
            mark(object, name, &self.namespace);
        }
        // helm adopts objects already marked as this release's, and refuses others. Which
        // ones exist is known from the check; with --take-ownership, any may.
        let existing = match options.take_ownership {
            false => self.check_ownership("install", &objects, name).await?,
            true => vec![true; objects.len()],
        };
        release.apply_method = options.writing.resolve(None)?.method().to_string();
        if options.dry_run != DryRun::None {
            set_status(&mut release, Status::PendingInstall, "Dry run complete");
            return Ok((release, warnings));
        }
        if options.create_namespace {
            self.create_namespace(options.writing.resolve(None)?)
                .await?;
        }
        // The namespace may have just been made: the lock could not be taken before.
        let late = self.lock(name).await?;
        let result = self
            .record_and_install(&mut release, &objects, &existing, options)
            .await;
        self.unlock(name, late).await;
        result.map(|()| (release, warnings))
    }

    async fn record_and_install(
        &self,
        release: &mut Release,
        objects: &[Object],
        existing: &[bool],
        options: &InstallOptions,
    ) -> Result<(), EngineError> {
        let name = &options.name;
        // Checked again under the lock: another install may have won the name.
        if let Some(mut last) = self.available_name(name, options.replace).await? {
            // `--replace` continues the old history rather than starting it again.
            release.version = last.version + 1;
            if last.status() != Status::Failed {
                set_status(&mut last, Status::Superseded, "superseded by new release");
                self.storage.update(&last, now().unix()).await?;
            }
        }
        self.storage.create(release, 0, now().unix()).await?;
        match self
            .perform_install(release, objects, existing, options)
            .await
        {
            Ok(()) => {
                let description = options.description.as_deref().unwrap_or("Install complete");
                set_status(release, Status::Deployed, description);
                self.storage.update(release, now().unix()).await?;
                Ok(())
            }
            Err(error) => {
                set_status(
                    release,
                    Status::Failed,
                    &format!("Release {name:?} failed: {error}"),
                );
                if options.atomic {
                    let uninstall = UninstallOptions {
                        name: name.clone(),
                        no_hooks: options.no_hooks,
                        waiting: options.waiting,
                        ..Default::default()
                    };
                    if let Err(cleanup) = self.uninstall(&uninstall).await {
                        return Err(EngineError::msg(format!(
                            "an error occurred while uninstalling the release. original install error: {error}: {cleanup}"
                        )));
                    }
                    return Err(EngineError::msg(format!(
                        "release {name} failed, and has been uninstalled due to rollback-on-failure being set: {error}"
                    )));
                }
                let _ = self.storage.update(release, now().unix()).await;
                Err(error)
            }
        }
    }

    async fn perform_install(
        &self,
        release: &mut Release,
        objects: &[Object],
        existing: &[bool],
        options: &InstallOptions,
    ) -> Result<(), EngineError> {
        let timeout = options.waiting.timeout;
        if !options.no_hooks {
            self.run_hooks(release, "pre-install", timeout)
                .await
                .map_err(|e| e.context("failed pre-install"))?;
        }
        let writing = options.writing.resolve(None)?;
        for (object, &exists) in objects.iter().zip(existing) {
            // Objects adopted by the install (already there, marked as this release's)
            // get the fields helm's client-side writes own handed to its applies, as
            // helm's install does; a new object has nothing to hand, and no read for it.
            self.write(object, None, writing, exists).await?;
        }
        self.wait_for(objects, options.waiting).await?;
        if !options.no_hooks {
            self.run_hooks(release, "post-install", timeout)
                .await
                .map_err(|e| e.context("failed post-install"))?;
        }
        Ok(())
    }

    pub(crate) async fn wait_for(
        &self,
        objects: &[Object],
        waiting: Waiting,
    ) -> Result<(), EngineError> {
        if !waiting.wait || objects.is_empty() {
            return Ok(());
        }
        let targets = self.targets(objects).await?;
        readiness::wait(
            &self.client,
            &targets,
            waiting.timeout,
            waiting.wait_for_jobs,
            self.progress.as_ref(),
        )
        .await?;
        Ok(())
    }

    /// Whether `name` may be installed: it has no history, or (with `replace`) its last
    /// revision is uninstalled or failed, which is then returned.
    async fn available_name(
        &self,
        name: &str,
        replace: bool,
    ) -> Result<Option<Release>, EngineError> {
        let history = match self.storage.history(name).await {
            Ok(history) => history,
            Err(chartkit_release::StorageError::NotFound) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let Some(last) = history.into_iter().max_by_key(|r| r.version) else {
            return Ok(None);
        };
        if replace && matches!(last.status(), Status::Uninstalled | Status::Failed) {
            return Ok(Some(last));
        }
        Err(EngineError::msg("cannot reuse a name that is still in use"))
    }

    /// Refuses objects that exist in the cluster without this release's marks.
    /// Refuses live objects not marked as `release`'s; says, object by object, which
    /// exist.
    pub(crate) async fn check_ownership(
        &self,
        operation: &str,
        objects: &[Object],
        release: &str,
    ) -> Result<Vec<bool>, EngineError> {
        let applier = self.applier();
        let mut existing = Vec::with_capacity(objects.len());
        for object in objects {
            let target = applier.target(object).await?;
            let live = target.api(&self.client).get_opt(&target.name).await?;
            if let Some(live) = &live {
                let live = serde_json::to_value(live).unwrap_or(Value::Null);
                check_live(operation, &target, &live, release, &self.namespace)?;
            }
            existing.push(live.is_some());
        }
        Ok(existing)
    }

    async fn create_namespace(&self, writing: crate::Writing) -> Result<(), EngineError> {
        // helm's Namespace, as its Go struct marshals: empty `spec` and `status` too
        // (the applied `spec` shows in the managed fields).
        let object = Object {
            source: None,
            value: serde_json::json!({
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": self.namespace, "labels": {"name": self.namespace}},
                "spec": {},
                "status": {},
            }),
        };
        let applier = self.applier();
        let target = applier.target(&object).await?;
        if target
            .api(&self.client)
            .get_opt(&target.name)
            .await?
            .is_none()
        {
            // Written as the release's objects are: applied, or created client-side.
            self.write_with(&applier, &object, None, writing).await?;
        }
        Ok(())
    }

    /// CRDs from `crds/`: created when missing (never changed, as helm does, unless
    /// `update`: then each is applied, taking over its fields), waited until
    /// Established, then discovery forgotten so their kinds are found.
    pub(crate) async fn install_crds(
        &self,
        files: &[(String, String)],
        timeout: Duration,
        update: bool,
    ) -> Result<(), EngineError> {
        let applier = self.applier();
        let mut created = Vec::new();
        for (name, text) in files {
            let objects = split(text)
                .map_err(|e| EngineError::msg(format!("failed to install CRD {name}: {e}")))?;
            for object in objects {
                let target = applier.target(&object).await?;
                if update {
                    applier.apply(&object, true).await?;
                    created.push(target);
                } else if target
                    .api(&self.client)
                    .get_opt(&target.name)
                    .await?
                    .is_none()
                {
                    applier.apply(&object, false).await?;
                    created.push(target);
                }
            }
        }
        if !created.is_empty() {
            readiness::wait(
                &self.client,
                &created,
                timeout,
                false,
                self.progress.as_ref(),
            )
            .await?;
            self.discovery.invalidate();
        }
        Ok(())
    }
}
