//! The release engine: installs, upgrades, rolls back and uninstalls charts in a cluster,
//! keeping the release records in Helm's format so helm and chartkit can take over each
//! other's releases. It joins the renderer (`chartkit-render`), the cluster client
//! (`chartkit-cluster`) and the records (`chartkit-release`); it prints nothing.

mod change;
mod error;
mod hooks;
mod install;
mod ownership;
mod record;
mod rollback;
mod uninstall;
mod upgrade;

use std::time::Duration;

use chartkit_cluster::manifest::Object;
use chartkit_cluster::{Applier, Discovery, Progress, Target};
use chartkit_release::{GoTime, Storage};

pub use error::EngineError;
pub use install::{DryRun, InstallOptions, render_release};
pub use record::{chart_record, release_manifest};
pub use rollback::RollbackOptions;
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
}

/// How long operations may take, and whether to wait for readiness.
#[derive(Debug, Clone, Copy)]
pub struct Waiting {
    pub wait: bool,
    pub wait_for_jobs: bool,
    pub timeout: Duration,
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
        }
    }

    fn applier(&self) -> Applier<'_> {
        Applier::new(self.client.clone(), &self.discovery, &self.namespace)
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
