//! Azure Blob Storage through `object_store`, configured the way ChartMuseum's `microsoft`
//! backend is: the account and key from `AZURE_STORAGE_ACCOUNT` and
//! `AZURE_STORAGE_ACCESS_KEY`, the service's domain from `AZURE_BASE_URL`.

use std::sync::Arc;

use super::{BucketStorage, StorageError, bucket_and_prefix, opening_failed};

/// The variables ChartMuseum's backend reads, which `object_store` spells otherwise
/// (it reads its own `AZURE_STORAGE_ACCOUNT_NAME`, `AZURE_STORAGE_ENDPOINT` and the rest
/// by itself, and takes `AZURE_STORAGE_ACCESS_KEY` as it is).
const ACCOUNT: &str = "AZURE_STORAGE_ACCOUNT";
/// The domain after `ACCOUNT.blob.`: `core.windows.net` by default,
/// `core.chinacloudapi.cn` and the like elsewhere.
const BASE_URL: &str = "AZURE_BASE_URL";

impl BucketStorage {
    /// Opens `az://CONTAINER[/PREFIX]` (or `azure://`) in Azure Blob Storage. The account
    /// and key come from ChartMuseum's `AZURE_STORAGE_ACCOUNT` and
    /// `AZURE_STORAGE_ACCESS_KEY` (or `object_store`'s `AZURE_STORAGE_ACCOUNT_NAME`,
    /// `AZURE_STORAGE_ACCOUNT_KEY`, SAS, client-secret and managed-identity variables);
    /// `AZURE_STORAGE_ENDPOINT` names the account's address outright (Azurite:
    /// `http://127.0.0.1:10000/devstoreaccount1`).
    pub fn open_azure(url: &str) -> Result<BucketStorage, StorageError> {
        let (container, prefix) = bucket_and_prefix(
            url,
            &["az", "azure"],
            "az://CONTAINER[/PREFIX] or azure://CONTAINER[/PREFIX]",
        )?;
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let mut builder =
            object_store::azure::MicrosoftAzureBuilder::from_env().with_container_name(container);
        let account = var("AZURE_STORAGE_ACCOUNT_NAME").or_else(|| var(ACCOUNT));
        if let Some(account) = &account {
            builder = builder.with_account(account);
        }
        let endpoint = var("AZURE_STORAGE_ENDPOINT").or_else(|| {
            let base = var(BASE_URL)?;
            Some(format!("https://{}.blob.{base}", account.as_deref()?))
        });
        if let Some(endpoint) = endpoint {
            builder = builder
                .with_allow_http(endpoint.starts_with("http://"))
                .with_endpoint(endpoint);
        }
        let store = builder
            .build()
            .map_err(|e| opening_failed(url, e.to_string()))?;
        Ok(BucketStorage::new(Arc::new(store), prefix, url))
    }
}
