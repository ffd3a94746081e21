//! The record store over a Kubernetes client, as Helm's `storage.Storage` with the
//! Secret or ConfigMap driver: list, query by labels, get, history, last, deployed,
//! create, update, delete, and pruning of old revisions.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::Api;
use kube::api::{DeleteParams, ListParams, PostParams};

use crate::driver::{self, Driver, Labels, ObjectError, Stamp};
use crate::model::Release;
use crate::query;
use crate::status::Status;

/// What went wrong reading or writing records; the texts are Helm's.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("release: not found")]
    NotFound,
    #[error("release: already exists")]
    Exists,
    #[error("{0:?} has no deployed releases")]
    NoDeployed(String),
    #[error("no revision for release {0:?}")]
    NoRevision(String),
    #[error("invalid label value: {value:?}: {reason}")]
    InvalidLabelValue { value: String, reason: String },
    #[error("{}", api_words(action, source))]
    Api {
        action: &'static str,
        #[source]
        source: kube::Error,
    },
    #[error("get: {0}")]
    Decode(#[from] ObjectError),
    /// The API server refused the record for its size (413).
    #[error(
        "{action}: the record of release {name:?} revision {revision} is {} and the API server refused it as too large ({message})",
        size_in_words(*bytes)
    )]
    TooLarge {
        action: &'static str,
        name: String,
        revision: i64,
        /// The size of the object sent.
        bytes: usize,
        message: String,
    },
}

/// `action: the server's words`, or only the words when the server could not be
/// reached (helm's `kubernetes cluster unreachable: ...` stands alone too).
fn api_words(action: &str, source: &kube::Error) -> String {
    let words = chartkit_cluster::kube_error::describe(source);
    if chartkit_cluster::kube_error::is_unreachable(source) {
        words
    } else {
        format!("{action}: {words}")
    }
}

/// `12.3 MiB`, `456 KiB`, `789 bytes`.
fn size_in_words(bytes: usize) -> String {
    const KIB: f64 = 1024.0;
    let size = bytes as f64;
    if size >= KIB * KIB {
        format!("{:.1} MiB", size / (KIB * KIB))
    } else if size >= KIB {
        format!("{:.0} KiB", size / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// A write refused for its size becomes [`StorageError::TooLarge`], naming the release
/// and the size of what was sent; other failures stay as they are.
fn refused_for_size(
    action: &'static str,
    release: &Release,
    object: &impl serde::Serialize,
    source: kube::Error,
) -> StorageError {
    match &source {
        kube::Error::Api(status) if status.code == 413 => StorageError::TooLarge {
            action,
            name: release.name.clone(),
            revision: release.version,
            bytes: serde_json::to_vec(object).map_or(0, |bytes| bytes.len()),
            message: status.message.clone(),
        },
        // A server that answers 413 before reading a large body may close the connection
        // while the client is still sending it; the client sees a broken pipe or a reset,
        // not the 413. A record over the API server's usual limit lost that way was
        // refused for its size just the same.
        _ if chartkit_cluster::kube_error::was_cut_off(&source) => {
            let bytes = serde_json::to_vec(object).map_or(0, |bytes| bytes.len());
            if bytes <= API_SERVER_BODY_LIMIT {
                return StorageError::Api { action, source };
            }
            StorageError::TooLarge {
                action,
                name: release.name.clone(),
                revision: release.version,
                bytes,
                message: "the connection was closed while the record was sent; \
                          API servers take at most 3 MiB by default"
                    .to_string(),
            }
        }
        _ => StorageError::Api { action, source },
    }
}

/// The request body limit API servers have by default: 3 MiB.
const API_SERVER_BODY_LIMIT: usize = 3 << 20;

/// Records of one namespace, or of all namespaces (reading only).
#[derive(Clone)]
pub struct Storage {
    client: kube::Client,
    driver: Driver,
    namespace: Option<String>,
}

impl Storage {
    /// The store in `namespace`, or across all namespaces with `None` (`list -A`).
    pub fn new(client: kube::Client, driver: Driver, namespace: Option<&str>) -> Storage {
        Storage {
            client,
            driver,
            namespace: namespace.map(str::to_owned),
        }
    }

    /// The client the store reads through.
    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    pub fn driver(&self) -> Driver {
        self.driver
    }

    fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as kube::Resource>::DynamicType: Default,
    {
        match &self.namespace {
            Some(ns) => Api::namespaced(self.client.clone(), ns),
            None => Api::all(self.client.clone()),
        }
    }

    /// Every record of the store's objects that `selector` selects, with all its labels.
    /// Objects whose record cannot be decoded are skipped, as Helm skips them.
    async fn read(
        &self,
        selector: &str,
        action: &'static str,
    ) -> Result<Vec<Release>, StorageError> {
        let params = ListParams::default().labels(selector);
        let api_error = |source| StorageError::Api { action, source };
        let releases = match self.driver {
            Driver::Secret => {
                let list = self
                    .api::<Secret>()
                    .list(&params)
                    .await
                    .map_err(api_error)?;
                list.items
                    .iter()
                    .filter_map(|s| driver::from_secret(s, Labels::All).ok())
                    .collect()
            }
            Driver::ConfigMap => {
                let list = self
                    .api::<ConfigMap>()
                    .list(&params)
                    .await
                    .map_err(api_error)?;
                list.items
                    .iter()
                    .filter_map(|m| driver::from_config_map(m, Labels::All).ok())
                    .collect()
            }
        };
        Ok(releases)
    }

    /// Every record (`owner=helm`) that `keep` keeps.
    pub async fn list(
        &self,
        keep: impl Fn(&Release) -> bool,
    ) -> Result<Vec<Release>, StorageError> {
        let mut all = self.read("owner=helm", "list: failed to list").await?;
        all.retain(|r| keep(r));
        Ok(all)
    }

    /// The records whose labels are `labels`; none is [`StorageError::NotFound`].
    pub async fn query(&self, labels: &BTreeMap<&str, &str>) -> Result<Vec<Release>, StorageError> {
        for value in labels.values() {
            if let Some(reason) = invalid_label_value(value) {
                return Err(StorageError::InvalidLabelValue {
                    value: (*value).to_owned(),
                    reason,
                });
            }
        }
        let selector = labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        let found = self
            .read(&selector, "query: failed to query with labels")
            .await?;
        if found.is_empty() {
            return Err(StorageError::NotFound);
        }
        Ok(found)
    }

    /// One revision, with only the release's own labels (Helm hides the system ones).
    pub async fn get(&self, name: &str, version: i64) -> Result<Release, StorageError> {
        let key = driver::key(name, version);
        let not_found = |e: &kube::Error| matches!(e, kube::Error::Api(s) if s.is_not_found());
        let action = "get: failed to get";
        match self.driver {
            Driver::Secret => match self.api::<Secret>().get(&key).await {
                Ok(s) => Ok(driver::from_secret(&s, Labels::WithoutSystem)?),
                Err(e) if not_found(&e) => Err(StorageError::NotFound),
                Err(source) => Err(StorageError::Api { action, source }),
            },
            Driver::ConfigMap => match self.api::<ConfigMap>().get(&key).await {
                Ok(m) => Ok(driver::from_config_map(&m, Labels::WithoutSystem)?),
                Err(e) if not_found(&e) => Err(StorageError::NotFound),
                Err(source) => Err(StorageError::Api { action, source }),
            },
        }
    }

    /// Every revision of a release (unordered, all labels).
    pub async fn history(&self, name: &str) -> Result<Vec<Release>, StorageError> {
        self.query(&BTreeMap::from([("name", name), ("owner", "helm")]))
            .await
    }

    /// The newest revision of a release.
    pub async fn last(&self, name: &str) -> Result<Release, StorageError> {
        let history = self.history(name).await?;
        query::last_revision(history).ok_or_else(|| StorageError::NoRevision(name.to_owned()))
    }

    /// The newest deployed revision of a release.
    pub async fn deployed(&self, name: &str) -> Result<Release, StorageError> {
        let labels = BTreeMap::from([("name", name), ("owner", "helm"), ("status", "deployed")]);
        match self.query(&labels).await {
            Ok(found) => {
                query::last_revision(found).ok_or_else(|| StorageError::NoDeployed(name.to_owned()))
            }
            Err(StorageError::NotFound) => Err(StorageError::NoDeployed(name.to_owned())),
            Err(e) => Err(e),
        }
    }

    /// A revision as `helm get`/`status` choose it: the newest when `version` is 0 or
    /// less, else that revision.
    pub async fn content(&self, name: &str, version: i64) -> Result<Release, StorageError> {
        if version <= 0 {
            self.last(name).await
        } else {
            self.get(name, version).await
        }
    }

    /// Stores a new revision, first pruning the oldest ones so at most `max_history`
    /// remain with it (0: keep all), as `--history-max` does.
    pub async fn create(
        &self,
        release: &Release,
        max_history: usize,
        now_unix: i64,
    ) -> Result<(), StorageError> {
        if max_history > 0 {
            match self
                .remove_least_recent(&release.name, max_history - 1)
                .await
            {
                Ok(()) | Err(StorageError::NotFound) => {}
                Err(e) => return Err(e),
            }
        }
        let params = PostParams::default();
        let exists = |e: &kube::Error| matches!(e, kube::Error::Api(s) if s.is_already_exists());
        let action = "create: failed to create";
        let result = match self.driver {
            Driver::Secret => {
                let object = driver::to_secret(release, Stamp::Created(now_unix));
                self.api::<Secret>()
                    .create(&params, &object)
                    .await
                    .map(drop)
                    .map_err(|e| (e, serde_json::to_value(&object)))
            }
            Driver::ConfigMap => {
                let object = driver::to_config_map(release, Stamp::Created(now_unix));
                self.api::<ConfigMap>()
                    .create(&params, &object)
                    .await
                    .map(drop)
                    .map_err(|e| (e, serde_json::to_value(&object)))
            }
        };
        match result {
            Ok(()) => Ok(()),
            Err((e, _)) if exists(&e) => Err(StorageError::Exists),
            Err((source, object)) => Err(refused_for_size(
                action,
                release,
                &object.unwrap_or_default(),
                source,
            )),
        }
    }

    /// Replaces a stored revision (a status change, say).
    pub async fn update(&self, release: &Release, now_unix: i64) -> Result<(), StorageError> {
        let key = driver::key(&release.name, release.version);
        let params = PostParams::default();
        let result = match self.driver {
            Driver::Secret => {
                let object = driver::to_secret(release, Stamp::Modified(now_unix));
                self.api::<Secret>()
                    .replace(&key, &params, &object)
                    .await
                    .map(drop)
                    .map_err(|e| (e, serde_json::to_value(&object)))
            }
            Driver::ConfigMap => {
                let object = driver::to_config_map(release, Stamp::Modified(now_unix));
                self.api::<ConfigMap>()
                    .replace(&key, &params, &object)
                    .await
                    .map(drop)
                    .map_err(|e| (e, serde_json::to_value(&object)))
            }
        };
        result.map_err(|(source, object)| {
            refused_for_size(
                "update: failed to update",
                release,
                &object.unwrap_or_default(),
                source,
            )
        })
    }

    /// Deletes a revision, giving back what it held.
    pub async fn delete(&self, name: &str, version: i64) -> Result<Release, StorageError> {
        let release = self.get(name, version).await?;
        let key = driver::key(name, version);
        let params = DeleteParams::default();
        let result = match self.driver {
            Driver::Secret => self.api::<Secret>().delete(&key, &params).await.map(drop),
            Driver::ConfigMap => self
                .api::<ConfigMap>()
                .delete(&key, &params)
                .await
                .map(drop),
        };
        result.map_err(|source| StorageError::Api {
            action: "delete: failed to delete",
            source,
        })?;
        Ok(release)
    }

    /// Deletes the oldest revisions until at most `maximum` remain, never the newest
    /// deployed one (Helm's `removeLeastRecent`).
    async fn remove_least_recent(&self, name: &str, maximum: usize) -> Result<(), StorageError> {
        let mut history = self.history(name).await?;
        if history.len() <= maximum {
            return Ok(());
        }
        history.sort_by_key(|r| r.version);
        let deployed = match self.deployed(name).await {
            Ok(r) => Some(r.version),
            Err(StorageError::NoDeployed(_)) => None,
            Err(e) => return Err(e),
        };
        let excess = history.len() - maximum;
        let doomed: Vec<i64> = history
            .iter()
            .map(|r| r.version)
            .filter(|v| Some(*v) != deployed)
            .take(excess)
            .collect();
        let mut first_error = None;
        let mut failures = 0;
        for version in doomed {
            if let Err(e) = self.delete(name, version).await {
                failures += 1;
                first_error.get_or_insert(e);
            }
        }
        match (failures, first_error) {
            (_, None) => Ok(()),
            (1, Some(e)) => Err(e),
            (_, Some(e)) => Err(e),
        }
    }

    /// Every deployed record (`ListDeployed`).
    pub async fn list_deployed(&self) -> Result<Vec<Release>, StorageError> {
        self.list(|r| r.status() == Status::Deployed).await
    }
}

/// Why a label value is not one Kubernetes accepts (Helm checks query values first).
fn invalid_label_value(value: &str) -> Option<String> {
    if value.len() > 63 {
        return Some("must be no more than 63 characters".to_owned());
    }
    let bytes = value.as_bytes();
    let alnum = |b: &u8| b.is_ascii_alphanumeric();
    let ok = value.is_empty()
        || (alnum(&bytes[0])
            && alnum(&bytes[bytes.len() - 1])
            && bytes
                .iter()
                .all(|b| alnum(b) || matches!(b, b'-' | b'_' | b'.')));
    (!ok).then(|| {
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values() {
        assert!(invalid_label_value("my-app.v1").is_none());
        assert!(invalid_label_value("").is_none());
        assert!(invalid_label_value("-a").is_some());
        assert!(invalid_label_value(&"a".repeat(64)).is_some());
    }
}
