//! Where packages and provenance files live: a flat namespace of file names, on a local
//! directory, in an S3-compatible bucket, an Azure Blob container (`azure`) or a Google
//! Cloud Storage bucket (`gcs`). Every replica of a server over the same storage sees the
//! same files; the index is derived from them, never stored.

mod azure;
mod gcs;

pub use gcs::GcsStorage;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use async_trait::async_trait;
use bytes::Bytes;

/// One stored file as a listing shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectInfo {
    pub name: String,
    pub size: u64,
    pub modified: SystemTime,
    /// Changes whenever the content may have changed (an ETag, or size and mtime).
    pub tag: String,
}

/// A storage failure, naming what was being done.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("`{name}` already exists")]
    AlreadyExists { name: String },
    #[error("{action}{} in {storage}: {message}", named(name))]
    Failed {
        action: &'static str,
        name: String,
        storage: String,
        message: String,
    },
}

/// ` `NAME`` for an error about one file; nothing for the whole storage (a listing).
fn named(name: &str) -> String {
    if name.is_empty() {
        String::new()
    } else {
        format!(" `{name}`")
    }
}

/// Whether a write may replace an existing file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// Fails with [`StorageError::AlreadyExists`] if the file exists, atomically: of two
    /// concurrent creators (even on two replicas) exactly one wins.
    Create,
    Overwrite,
}

/// The storage a repository server runs on.
#[async_trait]
pub trait Storage: Send + Sync + 'static {
    /// A short description for logs and errors (`directory /srv/charts`, `s3://bucket/prefix`).
    fn describe(&self) -> String;
    /// Every file in the repository (not in subdirectories, not hidden temporaries).
    async fn list(&self) -> Result<Vec<ObjectInfo>, StorageError>;
    /// A file's content, or `None` when it does not exist.
    async fn get(&self, name: &str) -> Result<Option<Bytes>, StorageError>;
    /// Writes a whole file durably: when this returns, the file survives a crash, and
    /// readers never see part of it.
    async fn put(
        &self,
        name: &str,
        data: Bytes,
        mode: WriteMode,
    ) -> Result<ObjectInfo, StorageError>;
    /// Removes a file; `false` when there was none.
    async fn delete(&self, name: &str) -> Result<bool, StorageError>;
    /// Whether the storage answers, cheaply (for readiness probes).
    async fn check(&self) -> Result<(), StorageError>;
    /// The hidden files (which [`Storage::list`] leaves out) whose names start with
    /// `prefix`, for the registry's own records and its garbage collection (which needs
    /// their ages). A storage that keeps none has none.
    async fn list_hidden(&self, prefix: &str) -> Result<Vec<ObjectInfo>, StorageError> {
        let _ = prefix;
        Ok(Vec::new())
    }
    /// The names of the subdirectories (key prefixes) directly under this storage, where
    /// a multi-tenant server keeps its repositories. A storage with none has none.
    async fn list_dirs(&self) -> Result<Vec<String>, StorageError> {
        Ok(Vec::new())
    }
    /// The same storage under `path` (`ORG/REPO`: segments [`crate::names::is_safe`]
    /// already checked): a subdirectory or a longer key prefix, where a multi-tenant
    /// server keeps that repository. Nothing is created until something is written.
    fn scoped(&self, path: &str) -> Result<Arc<dyn Storage>, StorageError> {
        Err(StorageError::Failed {
            action: "opening",
            name: path.to_owned(),
            storage: self.describe(),
            message: "this storage keeps one repository only".to_owned(),
        })
    }
}

/// A directory on the local filesystem.
#[derive(Debug, Clone)]
pub struct LocalStorage {
    dir: PathBuf,
    /// A repository's subdirectory ([`Storage::scoped`]): made by the first write, and
    /// read as empty until then.
    scoped: bool,
}

const TEMP_PREFIX: &str = ".chartkit-upload-";

impl LocalStorage {
    /// Opens `dir` (which must exist) and removes temporaries that a crash left behind.
    pub fn open(dir: &Path) -> Result<LocalStorage, StorageError> {
        let failed = |message: String| StorageError::Failed {
            action: "opening",
            name: dir.display().to_string(),
            storage: "the local filesystem".to_owned(),
            message,
        };
        let meta = std::fs::metadata(dir).map_err(|e| failed(e.to_string()))?;
        if !meta.is_dir() {
            return Err(failed("not a directory".to_owned()));
        }
        for entry in std::fs::read_dir(dir)
            .map_err(|e| failed(e.to_string()))?
            .flatten()
        {
            if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        Ok(LocalStorage {
            dir: dir.to_path_buf(),
            scoped: false,
        })
    }

    fn failed(&self, action: &'static str, name: &str, error: impl ToString) -> StorageError {
        StorageError::Failed {
            action,
            name: name.to_owned(),
            storage: format!("directory {}", self.dir.display()),
            message: error.to_string(),
        }
    }

    fn info(name: String, meta: &std::fs::Metadata) -> ObjectInfo {
        let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        let nanos = modified
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        ObjectInfo {
            name,
            size: meta.len(),
            modified,
            tag: format!("{}-{nanos}", meta.len()),
        }
    }

    fn put_blocking(
        &self,
        name: &str,
        data: &[u8],
        mode: WriteMode,
    ) -> Result<ObjectInfo, StorageError> {
        let target = self.dir.join(name);
        if self.scoped {
            self.create_dir()
                .map_err(|e| self.failed("writing", name, e))?;
        }
        let mut temp = tempfile::Builder::new()
            .prefix(TEMP_PREFIX)
            .tempfile_in(&self.dir)
            .map_err(|e| self.failed("writing", name, e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = temp
                .as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644));
        }
        temp.write_all(data)
            .and_then(|()| temp.as_file().sync_all())
            .map_err(|e| self.failed("writing", name, e))?;
        match mode {
            // A hard link fails if the target exists, so creation is exclusive even between
            // processes; the temporary name is removed when `temp` drops.
            WriteMode::Create => match std::fs::hard_link(temp.path(), &target) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return Err(StorageError::AlreadyExists {
                        name: name.to_owned(),
                    });
                }
                Err(e) => return Err(self.failed("writing", name, e)),
            },
            WriteMode::Overwrite => {
                temp.persist(&target)
                    .map_err(|e| self.failed("writing", name, e.error))?;
            }
        }
        if let Ok(dir) = std::fs::File::open(&self.dir) {
            let _ = dir.sync_all();
        }
        let meta = std::fs::metadata(&target).map_err(|e| self.failed("writing", name, e))?;
        Ok(Self::info(name.to_owned(), &meta))
    }

    /// Makes a scoped repository's directory and its missing parents, each synced into
    /// its own parent so that a package written into it survives a crash.
    fn create_dir(&self) -> std::io::Result<()> {
        if self.dir.is_dir() {
            return Ok(());
        }
        let mut missing = Vec::new();
        let mut dir = self.dir.as_path();
        while !dir.exists() {
            missing.push(dir.to_path_buf());
            match dir.parent() {
                Some(parent) => dir = parent,
                None => break,
            }
        }
        std::fs::create_dir_all(&self.dir)?;
        for made in missing.iter().rev() {
            if let Some(parent) = made.parent() {
                std::fs::File::open(parent)?.sync_all()?;
            }
        }
        Ok(())
    }

    /// A directory listing, or none for a scoped repository nothing was written to yet.
    fn read_dir(&self) -> Result<Option<std::fs::ReadDir>, StorageError> {
        match std::fs::read_dir(&self.dir) {
            Ok(entries) => Ok(Some(entries)),
            Err(e)
                if self.scoped
                    && matches!(
                        e.kind(),
                        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                    ) =>
            {
                Ok(None)
            }
            Err(e) => Err(self.failed("listing", "", e)),
        }
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StorageError> + Send + 'static,
) -> Result<T, StorageError> {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

#[async_trait]
impl Storage for LocalStorage {
    fn describe(&self) -> String {
        format!("directory {}", self.dir.display())
    }

    async fn list(&self) -> Result<Vec<ObjectInfo>, StorageError> {
        let this = self.clone();
        blocking(move || {
            let Some(entries) = this.read_dir()? else {
                return Ok(Vec::new());
            };
            let mut found = Vec::new();
            for entry in entries.flatten() {
                let Ok(name) = entry.file_name().into_string() else {
                    continue;
                };
                if name.starts_with('.') {
                    continue;
                }
                // Follow symbolic links, as `helm repo index` does.
                let Ok(meta) = std::fs::metadata(entry.path()) else {
                    continue;
                };
                if meta.is_file() {
                    found.push(LocalStorage::info(name, &meta));
                }
            }
            Ok(found)
        })
        .await
    }

    async fn get(&self, name: &str) -> Result<Option<Bytes>, StorageError> {
        match tokio::fs::read(self.dir.join(name)).await {
            Ok(data) => Ok(Some(Bytes::from(data))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(self.failed("reading", name, e)),
        }
    }

    async fn put(
        &self,
        name: &str,
        data: Bytes,
        mode: WriteMode,
    ) -> Result<ObjectInfo, StorageError> {
        let this = self.clone();
        let name = name.to_owned();
        blocking(move || this.put_blocking(&name, &data, mode)).await
    }

    async fn delete(&self, name: &str) -> Result<bool, StorageError> {
        match tokio::fs::remove_file(self.dir.join(name)).await {
            Ok(()) => {
                if let Ok(dir) = std::fs::File::open(&self.dir) {
                    let _ = dir.sync_all();
                }
                Ok(true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(self.failed("deleting", name, e)),
        }
    }

    async fn list_hidden(&self, prefix: &str) -> Result<Vec<ObjectInfo>, StorageError> {
        let this = self.clone();
        let prefix = prefix.to_owned();
        blocking(move || {
            let Some(entries) = this.read_dir()? else {
                return Ok(Vec::new());
            };
            Ok(entries
                .flatten()
                .filter_map(|entry| {
                    let name = entry.file_name().into_string().ok()?;
                    if !(name.starts_with('.') && name.starts_with(&prefix)) {
                        return None;
                    }
                    // Gone between the listing and the look (deleted meanwhile): skipped.
                    let meta = entry.metadata().ok().filter(|m| m.is_file())?;
                    Some(Self::info(name, &meta))
                })
                .collect())
        })
        .await
    }

    async fn check(&self) -> Result<(), StorageError> {
        match tokio::fs::metadata(&self.dir).await {
            Ok(meta) if meta.is_dir() => Ok(()),
            Ok(_) => Err(self.failed("checking", "", "not a directory")),
            Err(e) => Err(self.failed("checking", "", e)),
        }
    }

    async fn list_dirs(&self) -> Result<Vec<String>, StorageError> {
        let this = self.clone();
        blocking(move || {
            let Some(entries) = this.read_dir()? else {
                return Ok(Vec::new());
            };
            Ok(entries
                .flatten()
                .filter_map(|entry| {
                    let name = entry.file_name().into_string().ok()?;
                    let meta = std::fs::metadata(entry.path()).ok()?;
                    (meta.is_dir() && !name.starts_with('.')).then_some(name)
                })
                .collect())
        })
        .await
    }

    fn scoped(&self, path: &str) -> Result<Arc<dyn Storage>, StorageError> {
        Ok(Arc::new(LocalStorage {
            dir: path
                .split('/')
                .fold(self.dir.clone(), |dir, part| dir.join(part)),
            scoped: true,
        }))
    }
}

/// S3 settings given by the caller rather than by `AWS_*` variables.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct S3Options {
    pub region: Option<String>,
    pub endpoint: Option<String>,
    /// Address the bucket as `BUCKET.HOST` rather than `HOST/BUCKET`.
    pub virtual_hosted_style: bool,
}

/// A bucket (and optional prefix) in S3-compatible object storage.
#[derive(Debug)]
pub struct BucketStorage {
    store: Arc<dyn object_store::ObjectStore>,
    prefix: Option<object_store::path::Path>,
    url: String,
}

impl BucketStorage {
    /// Opens `s3://BUCKET[/PREFIX]`. Credentials, region and endpoint come from the standard
    /// `AWS_*` environment variables (`AWS_ENDPOINT_URL` for S3-compatible servers such as
    /// MinIO; plain `http://` endpoints are allowed).
    pub fn open_s3(url: &str) -> Result<BucketStorage, StorageError> {
        BucketStorage::open_s3_with(url, &S3Options::default())
    }

    /// [`BucketStorage::open_s3`] with settings given rather than taken from `AWS_*`
    /// variables (ChartMuseum's `--storage-amazon-region` and `-endpoint`); what `options`
    /// leaves out still comes from the environment.
    pub fn open_s3_with(url: &str, options: &S3Options) -> Result<BucketStorage, StorageError> {
        let failed = |message: String| opening_failed(url, message);
        let (bucket, prefix) = bucket_and_prefix(url, &["s3"], "s3://BUCKET[/PREFIX]")?;
        let mut builder = object_store::aws::AmazonS3Builder::from_env().with_bucket_name(bucket);
        let endpoint = options.endpoint.clone().or_else(|| {
            std::env::var("AWS_ENDPOINT_URL")
                .or_else(|_| std::env::var("AWS_ENDPOINT"))
                .ok()
                .filter(|e| !e.is_empty())
        });
        if let Some(endpoint) = endpoint {
            builder = builder
                .with_allow_http(endpoint.starts_with("http://"))
                .with_endpoint(endpoint);
        }
        if let Some(region) = &options.region {
            builder = builder.with_region(region);
        } else if std::env::var("AWS_REGION").is_err()
            && std::env::var("AWS_DEFAULT_REGION").is_err()
        {
            builder = builder.with_region("us-east-1");
        }
        if options.virtual_hosted_style {
            builder = builder.with_virtual_hosted_style_request(true);
        }
        let store = builder.build().map_err(|e| failed(e.to_string()))?;
        Ok(BucketStorage::new(Arc::new(store), prefix, url))
    }

    fn new(store: Arc<dyn object_store::ObjectStore>, prefix: &str, url: &str) -> BucketStorage {
        BucketStorage {
            store,
            prefix: (!prefix.is_empty()).then(|| object_store::path::Path::from(prefix)),
            url: url.trim_end_matches('/').to_owned(),
        }
    }

    fn path(&self, name: &str) -> object_store::path::Path {
        match &self.prefix {
            Some(prefix) => prefix.clone().join(name),
            None => object_store::path::Path::from(name),
        }
    }

    fn failed(&self, action: &'static str, name: &str, error: impl ToString) -> StorageError {
        StorageError::Failed {
            action,
            name: name.to_owned(),
            storage: self.url.clone(),
            message: error.to_string(),
        }
    }

    fn info(name: String, meta: &object_store::ObjectMeta) -> ObjectInfo {
        ObjectInfo {
            tag: meta
                .e_tag
                .clone()
                .unwrap_or_else(|| format!("{}-{}", meta.size, meta.last_modified)),
            name,
            size: meta.size,
            modified: SystemTime::from(meta.last_modified),
        }
    }
}

#[async_trait]
impl Storage for BucketStorage {
    fn describe(&self) -> String {
        self.url.clone()
    }

    async fn list(&self) -> Result<Vec<ObjectInfo>, StorageError> {
        let listing = self
            .store
            .list_with_delimiter(self.prefix.as_ref())
            .await
            .map_err(|e| self.failed("listing", "", e))?;
        Ok(listing
            .objects
            .iter()
            .filter_map(|meta| {
                let name = meta.location.filename()?.to_owned();
                (!name.starts_with('.')).then(|| Self::info(name, meta))
            })
            .collect())
    }

    async fn get(&self, name: &str) -> Result<Option<Bytes>, StorageError> {
        use object_store::ObjectStoreExt;
        match self.store.get(&self.path(name)).await {
            Ok(result) => result
                .bytes()
                .await
                .map(Some)
                .map_err(|e| self.failed("reading", name, e)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.failed("reading", name, e)),
        }
    }

    async fn put(
        &self,
        name: &str,
        data: Bytes,
        mode: WriteMode,
    ) -> Result<ObjectInfo, StorageError> {
        use object_store::ObjectStoreExt;
        let path = self.path(name);
        let put_mode = match mode {
            WriteMode::Create => object_store::PutMode::Create,
            WriteMode::Overwrite => object_store::PutMode::Overwrite,
        };
        match self
            .store
            .put_opts(&path, data.into(), put_mode.into())
            .await
        {
            Ok(_) => {}
            Err(
                object_store::Error::AlreadyExists { .. }
                | object_store::Error::Precondition { .. },
            ) => {
                return Err(StorageError::AlreadyExists {
                    name: name.to_owned(),
                });
            }
            Err(e) => return Err(self.failed("writing", name, e)),
        }
        // The listing's view of the object (its ETag and time) is what other replicas see,
        // so this replica records the same.
        let meta = self
            .store
            .head(&path)
            .await
            .map_err(|e| self.failed("writing", name, e))?;
        Ok(Self::info(name.to_owned(), &meta))
    }

    async fn delete(&self, name: &str) -> Result<bool, StorageError> {
        use object_store::ObjectStoreExt;
        let path = self.path(name);
        match self.store.head(&path).await {
            Err(object_store::Error::NotFound { .. }) => return Ok(false),
            Err(e) => return Err(self.failed("deleting", name, e)),
            Ok(_) => {}
        }
        self.store
            .delete(&path)
            .await
            .map_err(|e| self.failed("deleting", name, e))?;
        Ok(true)
    }

    async fn list_hidden(&self, prefix: &str) -> Result<Vec<ObjectInfo>, StorageError> {
        let listing = self
            .store
            .list_with_delimiter(self.prefix.as_ref())
            .await
            .map_err(|e| self.failed("listing", "", e))?;
        Ok(listing
            .objects
            .iter()
            .filter_map(|meta| {
                let name = meta.location.filename()?;
                (name.starts_with('.') && name.starts_with(prefix))
                    .then(|| Self::info(name.to_owned(), meta))
            })
            .collect())
    }

    async fn check(&self) -> Result<(), StorageError> {
        use object_store::ObjectStoreExt;
        // One HEAD of a name nobody writes: "not found" is an answer, so the bucket is
        // reachable and the credentials work.
        match self.store.head(&self.path(".chartkit-ready")).await {
            Ok(_) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.failed("checking", "", e)),
        }
    }

    async fn list_dirs(&self) -> Result<Vec<String>, StorageError> {
        let listing = self
            .store
            .list_with_delimiter(self.prefix.as_ref())
            .await
            .map_err(|e| self.failed("listing", "", e))?;
        Ok(listing
            .common_prefixes
            .iter()
            .filter_map(|prefix| prefix.filename().map(str::to_owned))
            .filter(|name| !name.starts_with('.'))
            .collect())
    }

    fn scoped(&self, path: &str) -> Result<Arc<dyn Storage>, StorageError> {
        let prefix = path
            .split('/')
            .fold(self.prefix.clone().unwrap_or_default(), |prefix, part| {
                prefix.join(part)
            });
        Ok(Arc::new(BucketStorage {
            store: Arc::clone(&self.store),
            prefix: Some(prefix),
            url: format!("{}/{path}", self.url),
        }))
    }
}

fn opening_failed(url: &str, message: String) -> StorageError {
    StorageError::Failed {
        action: "opening",
        name: url.to_owned(),
        storage: "object storage".to_owned(),
        message,
    }
}

/// `SCHEME://BUCKET[/PREFIX]` split into the bucket (or container) and the prefix without
/// its slashes; `schemes` are the ones accepted, `form` says what was expected.
fn bucket_and_prefix<'a>(
    url: &'a str,
    schemes: &[&str],
    form: &str,
) -> Result<(&'a str, &'a str), StorageError> {
    let rest = schemes
        .iter()
        .find_map(|scheme| {
            url.strip_prefix(scheme)
                .and_then(|rest| rest.strip_prefix("://"))
        })
        .ok_or_else(|| opening_failed(url, format!("expected {form}")))?;
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err(opening_failed(url, "the bucket name is empty".to_owned()));
    }
    Ok((bucket, prefix.trim_matches('/')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_urls_split_into_bucket_and_prefix() {
        assert_eq!(
            bucket_and_prefix("gs://charts/team/a/", &["gs"], "gs://B").unwrap(),
            ("charts", "team/a")
        );
        assert_eq!(
            bucket_and_prefix("azure://c", &["az", "azure"], "az://C").unwrap(),
            ("c", "")
        );
        let wrong = bucket_and_prefix("s3://c", &["gs"], "gs://BUCKET[/PREFIX]").unwrap_err();
        assert_eq!(
            wrong.to_string(),
            "opening `s3://c` in object storage: expected gs://BUCKET[/PREFIX]"
        );
        assert!(bucket_and_prefix("gs:///p", &["gs"], "gs://B").is_err());
    }

    #[tokio::test]
    async fn local_create_is_exclusive_and_listing_hides_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".chartkit-upload-stale"), b"partial").unwrap();
        let storage = LocalStorage::open(dir.path()).unwrap();
        assert!(!dir.path().join(".chartkit-upload-stale").exists());
        storage
            .put("a-1.0.0.tgz", Bytes::from_static(b"one"), WriteMode::Create)
            .await
            .unwrap();
        let again = storage
            .put("a-1.0.0.tgz", Bytes::from_static(b"two"), WriteMode::Create)
            .await;
        assert!(matches!(again, Err(StorageError::AlreadyExists { .. })));
        assert_eq!(
            storage.get("a-1.0.0.tgz").await.unwrap().unwrap(),
            &b"one"[..]
        );
        storage
            .put(
                "a-1.0.0.tgz",
                Bytes::from_static(b"three"),
                WriteMode::Overwrite,
            )
            .await
            .unwrap();
        assert_eq!(
            storage.get("a-1.0.0.tgz").await.unwrap().unwrap(),
            &b"three"[..]
        );
        let listed = storage.list().await.unwrap();
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert!(storage.delete("a-1.0.0.tgz").await.unwrap());
        assert!(!storage.delete("a-1.0.0.tgz").await.unwrap());
        assert!(storage.get("a-1.0.0.tgz").await.unwrap().is_none());
    }
}
