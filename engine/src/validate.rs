//! `template --validate`: a rendered manifest checked against the cluster as an install of
//! it would be, with nothing written.
//!
//! helm 4's check is its install's server dry run: every kind must map to a resource the
//! cluster serves (CRDs installed first), and no object may exist already without being
//! the release's. It leaves field checks to the write that never comes (the API server
//! validates fields, and a dry run of helm's install sends nothing), so a misspelt field
//! passes `helm template --validate` and fails `helm install`. chartkit also sends each
//! object as a `dryRun=All` server-side apply, the install's own write, so those errors
//! come out here. Objects whose namespace does not exist yet are not sent (the install
//! would create the namespace or be told to), as helm does not look at namespaces either.

use std::collections::BTreeMap;

use chartkit_cluster::manifest::split;
use k8s_openapi::api::core::v1::Namespace;
use kube::Api;

use crate::ownership::mark;
use crate::{Engine, EngineError};

impl Engine {
    /// Checks the manifest a chart rendered for release `release` (its documents, not its
    /// hooks, as helm's check) against the cluster.
    pub async fn validate_manifest(
        &self,
        release: &str,
        manifest: &str,
    ) -> Result<(), EngineError> {
        let mut objects = split(manifest)?;
        for object in &mut objects {
            mark(object, release, &self.namespace);
        }
        let mut applier = self.applier();
        applier.dry_run = true;
        // Every kind mapped first, as helm builds the whole list before it looks further.
        let mut targets = Vec::with_capacity(objects.len());
        for object in &objects {
            let target = applier.target(object).await.map_err(|e| {
                EngineError::from(e)
                    .context("unable to build kubernetes objects from release manifest")
            })?;
            targets.push(target);
        }
        self.check_ownership("install", &objects, release).await?;
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        let mut exists = BTreeMap::new();
        for (object, target) in objects.iter().zip(&targets) {
            if let Some(namespace) = &target.namespace {
                if !exists.contains_key(namespace) {
                    let found = namespaces.get_opt(namespace).await?.is_some();
                    exists.insert(namespace.clone(), found);
                }
                if exists.get(namespace) == Some(&false) {
                    continue;
                }
            }
            // Forced: which field manager owns a field is no question of validity.
            applier.apply(object, true).await?;
        }
        Ok(())
    }
}
