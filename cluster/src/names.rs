//! Names a shell completes from the cluster and the kubeconfig, as helm's `__complete`
//! offers them for `--namespace` and `--kube-context`.

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};

use crate::connect::{ConnectError, Connection, KubeOptions};

impl KubeOptions {
    /// Every context of the kubeconfig, with the cluster it names (`NAME\tCLUSTER`, in
    /// the files' order; helm's come from a Go map, in no order).
    pub fn context_names(&self) -> Result<Vec<(String, String)>, ConnectError> {
        let (_, kubeconfig) = self.load_files()?;
        Ok(kubeconfig
            .map(|k| {
                k.contexts
                    .into_iter()
                    .map(|c| {
                        let cluster = c.context.map(|c| c.cluster).unwrap_or_default();
                        (c.name, cluster)
                    })
                    .collect()
            })
            .unwrap_or_default())
    }
}

impl Connection {
    /// The cluster's namespaces (the caller bounds the wait: helm gives up after 3
    /// seconds so that a completion never keeps the user waiting long).
    pub async fn namespace_names(&self) -> Result<Vec<String>, kube::Error> {
        let api: Api<Namespace> = Api::all(self.client.clone());
        let list = api.list(&ListParams::default()).await?;
        Ok(list
            .items
            .into_iter()
            .filter_map(|n| n.metadata.name)
            .collect())
    }
}
