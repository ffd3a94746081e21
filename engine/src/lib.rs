//! The release engine: installs, upgrades, rolls back and uninstalls charts in a cluster,
//! keeping the release records in Helm's format so helm and chartkit can take over each
//! other's releases. It joins the renderer (`chartkit-render`), the cluster client
//! (`chartkit-cluster`) and the records (`chartkit-release`); it prints nothing.

mod change;
pub mod compare;
mod error;
mod holder;
mod hooks;
mod install;
mod labels;
mod lock;
mod naming;
mod ownership;
mod plan;
mod record;
mod rollback;
mod stuck;
mod test;
mod uninstall;
mod upgrade;
mod validate;

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::Duration;

use chartkit_cluster::manifest::Object;
use chartkit_cluster::{Applier, Discovery, Progress, Target};
use chartkit_release::{GoTime, Status, Storage, StorageError};

use crate::install::set_status;
use crate::lock::ReleaseLock;

pub use error::EngineError;
pub use holder::ProcessIdentity;
pub use install::{
    DryRun, InstallOptions, RenderRequest, Rendering, install_offline, render_release,
};
pub use labels::check_user_labels;
pub use lock::{LockSettings, lease_name};
pub use naming::{generated_name, template_name};
pub use plan::{Plan, Planned};
pub use record::{chart_record, release_manifest};
pub use rollback::RollbackOptions;
pub use stuck::{Stuck, lock_holder};
pub use test::{TestOptions, Tested};
pub use uninstall::{UninstallOptions, Uninstalled};
pub use upgrade::{UpgradeOptions, ValuesMode};

/// What the engine works with: one cluster connection, its discovery cache, the record
/// store of the release's namespace, and where readiness changes are reported.
pub struct Engine {
    pub client: kube::Client,
    pub discovery: Discovery,
    pub storage: Storage,
    /// The release namespace (namespaced objects without one go there).
    pub namespace: String,
    pub progress: Box<dyn Progress>,
    /// The per-release lock's duration and holder name.
    pub lock: LockSettings,
    /// Releases whose lock this engine holds, so an operation that calls another (an
    /// atomic upgrade rolling back) does not wait for itself.
    held: Mutex<BTreeSet<String>>,
}

/// How objects are written: Helm 4's `--server-side` (`None`: auto, following the
/// release's recorded method, server-side for a new release), `--force-conflicts` and
/// `--force-replace`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Writing {
    pub server_side: Option<bool>,
    pub force_conflicts: bool,
    pub force_replace: bool,
}

impl Writing {
    /// The method to use when the release's last revision recorded `previous` (`None`
    /// for a new release), refusing combinations helm refuses.
    pub(crate) fn resolve(&self, previous: Option<&str>) -> Result<Writing, EngineError> {
        let server_side = self
            .server_side
            .unwrap_or_else(|| previous.is_none_or(|method| method == "ssa"));
        if self.force_conflicts && self.force_replace {
            return Err(EngineError::msg(
                "invalid operation: cannot use force conflicts and force replace together",
            ));
        }
        if server_side && self.force_replace {
            return Err(EngineError::msg(
                "invalid operation: cannot use server-side apply and force replace together",
            ));
        }
        Ok(Writing {
            server_side: Some(server_side),
            ..*self
        })
    }

    fn is_server_side(&self) -> bool {
        self.server_side != Some(false)
    }

    /// What the release record says (`applyMethod`).
    pub(crate) fn method(&self) -> &'static str {
        if self.is_server_side() { "ssa" } else { "csa" }
    }
}

/// How long operations may take, and whether to wait for readiness.
#[derive(Debug, Clone, Copy)]
pub struct Waiting {
    pub wait: bool,
    pub wait_for_jobs: bool,
    pub timeout: Duration,
}

impl Waiting {
    /// The waiting an operation does with `--atomic`/`--rollback-on-failure` set to
    /// `rollback_on_failure`: helm turns its default strategy (`hookOnly`, also what
    /// `--wait=false` and `--wait=hookOnly` ask for) into the watcher, since a failure
    /// that is only noticed by waiting could not be rolled back otherwise.
    pub fn with_rollback_on_failure(self, rollback_on_failure: bool) -> Waiting {
        Waiting {
            wait: self.wait || rollback_on_failure,
            ..self
        }
    }
}

impl Default for Waiting {
    fn default() -> Self {
        Waiting {
            wait: false,
            wait_for_jobs: false,
            timeout: Duration::from_secs(300),
        }
    }
}

impl Engine {
    pub fn new(
        client: kube::Client,
        storage: Storage,
        namespace: &str,
        progress: Box<dyn Progress>,
    ) -> Engine {
        Engine {
            discovery: Discovery::new(client.clone()),
            client,
            storage,
            namespace: namespace.to_string(),
            progress,
            lock: LockSettings::default(),
            held: Mutex::new(BTreeSet::new()),
        }
    }

    /// Takes release `name`'s lock for one operation: None when this engine holds it
    /// already, or when the namespace does not exist yet (so no release can be there). A
    /// lock taken over from an operation that died is followed by `recover`.
    async fn lock(&self, name: &str) -> Result<Option<ReleaseLock>, EngineError> {
        if self.held.lock().expect("lock set").contains(name) {
            return Ok(None);
        }
        let Some(lock) =
            ReleaseLock::acquire(&self.client, &self.namespace, name, &self.lock).await?
        else {
            return Ok(None);
        };
        self.held.lock().expect("lock set").insert(name.to_string());
        if let Some(abandoned) = &lock.abandoned
            && let Err(error) = self.recover(name, abandoned).await
        {
            self.unlock(name, Some(lock)).await;
            return Err(error);
        }
        Ok(Some(lock))
    }

    async fn unlock(&self, name: &str, lock: Option<ReleaseLock>) {
        if let Some(lock) = lock {
            lock.release().await;
            self.held.lock().expect("lock set").remove(name);
        }
    }

    /// The operation that held the lock before stopped renewing it: it crashed or was
    /// killed. Its revision, if still pending, can never finish, so it is marked failed
    /// (what helm users otherwise do by editing the Secret), and the release can move on.
    async fn recover(&self, name: &str, abandoned: &lock::Abandoned) -> Result<(), EngineError> {
        let history = match self.storage.history(name).await {
            Ok(history) => history,
            Err(StorageError::NotFound) => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        let Some(mut last) = history.into_iter().max_by_key(|r| r.version) else {
            return Ok(());
        };
        if !last.status().is_pending() {
            return Ok(());
        }
        let description = format!("Release {name:?} was interrupted: {abandoned}");
        set_status(&mut last, Status::Failed, &description);
        self.storage.update(&last, now().unix()).await?;
        Ok(())
    }

    fn applier(&self) -> Applier<'_> {
        Applier::new(self.client.clone(), &self.discovery, &self.namespace)
    }

    /// Writes one object the way `writing` says. `original` is the object as the
    /// release's previous manifest had it (client-side merges start from it). Server-side
    /// apply forces only with `--force-conflicts`, as helm's: chartkit writes as helm's
    /// field manager, so a release either tool wrote has no conflicts to force. With
    /// `upgrade_client_side_fields`, a server-side apply is preceded by the hand-over of
    /// the manager's client-side fields (`Applier::upgrade_client_side_fields`).
    pub(crate) async fn write(
        &self,
        object: &Object,
        original: Option<&serde_json::Value>,
        writing: Writing,
        upgrade_client_side_fields: bool,
    ) -> Result<(), EngineError> {
        let applier = self.applier();
        if upgrade_client_side_fields && writing.is_server_side() {
            applier.upgrade_client_side_fields(object).await?;
        }
        self.write_with(&applier, object, original, writing)
            .await
            .map(|_| ())
    }

    /// [`Engine::write`] through a given applier (a dry-running one, for a plan), giving
    /// back the object as the API server returned it.
    pub(crate) async fn write_with(
        &self,
        applier: &Applier<'_>,
        object: &Object,
        original: Option<&serde_json::Value>,
        writing: Writing,
    ) -> Result<kube::api::DynamicObject, EngineError> {
        let written = if writing.is_server_side() {
            applier.apply(object, writing.force_conflicts).await?
        } else if writing.force_replace {
            applier.replace(object).await?.object
        } else {
            applier.update_client_side(object, original).await?.object
        };
        Ok(written)
    }

    /// The targets of objects, skipping (and reporting) those whose kind the cluster no
    /// longer serves: there is nothing left to delete or wait for then.
    async fn targets(&self, objects: &[Object]) -> Result<Vec<Target>, EngineError> {
        let applier = self.applier();
        let mut targets = Vec::with_capacity(objects.len());
        for object in objects {
            targets.push(applier.target(object).await?);
        }
        Ok(targets)
    }
}

/// The current time as helm records it: local, with its offset.
pub(crate) fn now() -> GoTime {
    GoTime::from_fixed(chrono::Local::now().fixed_offset())
}
