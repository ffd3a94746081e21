//! The repository as the server holds it: every chart version in memory, kept in step with
//! the storage, and index.yaml rendered from it when asked for after a change.
//!
//! An upload changes one chart's version list and marks the rendered index stale; the next
//! `GET /index.yaml` renders once for however many uploads came before it. So the cost of an
//! upload does not grow with the repository, and readers never wait on writers for long.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use chartkit_index::{ChartVersion, IndexFile};
use futures::StreamExt;
use sha2::{Digest, Sha256};

use crate::metrics::Metrics;
use crate::names::{FileKind, classify};
use crate::storage::{ObjectInfo, Storage, StorageError};

/// index.yaml as served: the bytes, their strong ETag, and the gzip form made on first
/// demand.
#[derive(Debug)]
pub struct RenderedIndex {
    pub yaml: Bytes,
    pub etag: String,
    gzip: std::sync::OnceLock<Bytes>,
}

impl RenderedIndex {
    fn new(yaml: String) -> RenderedIndex {
        let etag = format!(
            "\"{}\"",
            &hex::encode(Sha256::digest(yaml.as_bytes()))[..32]
        );
        RenderedIndex {
            yaml: Bytes::from(yaml),
            etag,
            gzip: std::sync::OnceLock::new(),
        }
    }

    /// The gzip-encoded index and its ETag (distinct from the identity one, as a strong
    /// validator must be per representation).
    pub fn gzip(&self) -> (Bytes, String) {
        let body = self
            .gzip
            .get_or_init(|| {
                let mut encoder = flate2::write::GzEncoder::new(
                    Vec::with_capacity(self.yaml.len() / 4),
                    flate2::Compression::fast(),
                );
                encoder.write_all(&self.yaml).expect("writing to memory");
                Bytes::from(encoder.finish().expect("writing to memory"))
            })
            .clone();
        let tag = format!("{}-gzip\"", self.etag.trim_end_matches('"'));
        (body, tag)
    }
}

/// How chart URLs in the index are written.
#[derive(Debug, Clone, Default)]
pub struct UrlStyle {
    /// `--url`: absolute URLs under this base; otherwise `charts/<file>`, relative to the
    /// repository URL as Helm resolves them.
    pub base: Option<String>,
}

impl UrlStyle {
    pub fn chart_url(&self, file: &str) -> String {
        match &self.base {
            Some(base) => chartkit_repo::url_join(base, &["charts", file]),
            None => format!("charts/{file}"),
        }
    }
}

#[derive(Debug, Clone)]
struct Known {
    info: ObjectInfo,
    /// The change number when this replica learnt of the file; a listing that began
    /// earlier cannot contradict it.
    seq: u64,
    /// (name, version) in the index, or `None` for a file that is not a usable chart.
    entry: Option<(String, String)>,
}

#[derive(Debug, Default)]
struct State {
    index: IndexFile,
    /// Packages by file name.
    packages: HashMap<String, Known>,
    /// Provenance files by file name.
    provenance: HashMap<String, Known>,
    seq: u64,
}

/// A chart version read from a package.
#[derive(Debug, Clone)]
pub struct NewEntry {
    pub version: ChartVersion,
    pub info: ObjectInfo,
}

/// The in-memory repository over a storage.
pub struct Repository {
    storage: Arc<dyn Storage>,
    urls: UrlStyle,
    state: RwLock<State>,
    rendered: Mutex<Option<Arc<RenderedIndex>>>,
    metrics: Arc<Metrics>,
}

/// What a sync with the storage changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SyncReport {
    pub added: usize,
    pub removed: usize,
    pub skipped: Vec<(String, String)>,
}

impl Repository {
    pub fn new(storage: Arc<dyn Storage>, urls: UrlStyle, metrics: Arc<Metrics>) -> Repository {
        let mut index = IndexFile::new(chartkit_repo::now());
        index.generated = None;
        Repository {
            storage,
            urls,
            state: RwLock::new(State {
                index,
                ..State::default()
            }),
            rendered: Mutex::new(None),
            metrics,
        }
    }

    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }

    pub fn urls(&self) -> &UrlStyle {
        &self.urls
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    fn invalidate(&self) {
        *self.rendered.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// The rendered index.yaml if nothing changed since it was rendered.
    pub fn rendered_index(&self) -> Option<Arc<RenderedIndex>> {
        self.rendered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The current index.yaml, rendered now if anything changed since the last render
    /// (which takes time in proportion to the repository: call it off the async threads).
    pub fn index(&self) -> Arc<RenderedIndex> {
        let mut rendered = self.rendered.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(current) = rendered.as_ref() {
            return Arc::clone(current);
        }
        let started = Instant::now();
        self.write().index.generated = Some(chartkit_repo::now());
        let yaml = chartkit_index::to_yaml(&self.read().index);
        let fresh = Arc::new(RenderedIndex::new(yaml));
        self.metrics.index_rendered(started.elapsed());
        *rendered = Some(Arc::clone(&fresh));
        fresh
    }

    /// Every chart name with its versions, newest first.
    pub fn charts(&self) -> BTreeMap<String, Vec<ChartVersion>> {
        self.read().index.entries.clone()
    }

    /// One chart's versions, newest first.
    pub fn chart(&self, name: &str) -> Option<Vec<ChartVersion>> {
        self.read()
            .index
            .entries
            .get(name)
            .filter(|v| !v.is_empty())
            .cloned()
    }

    /// One version, or the newest with `latest`.
    pub fn chart_version(&self, name: &str, version: &str) -> Option<ChartVersion> {
        let state = self.read();
        let versions = state.index.entries.get(name)?;
        if version == "latest" {
            return versions.first().cloned();
        }
        versions.iter().find(|v| v.version() == version).cloned()
    }

    pub fn chart_count(&self) -> usize {
        self.read().index.len()
    }

    pub fn has_provenance(&self, file: &str) -> bool {
        self.read().provenance.contains_key(file)
    }

    pub fn has_package(&self, file: &str) -> bool {
        self.read().packages.contains_key(file)
    }

    /// Records a package this replica has just stored.
    pub fn insert_package(&self, entry: NewEntry) {
        {
            let mut state = self.write();
            state.seq += 1;
            let seq = state.seq;
            insert_entry(&mut state, entry, seq);
        }
        self.invalidate();
    }

    /// Records a provenance file this replica has just stored.
    pub fn insert_provenance(&self, info: ObjectInfo) {
        let mut state = self.write();
        state.seq += 1;
        let seq = state.seq;
        state.provenance.insert(
            info.name.clone(),
            Known {
                info,
                seq,
                entry: None,
            },
        );
    }

    /// Forgets a package (and its provenance) this replica has just deleted.
    pub fn remove_package(&self, file: &str) {
        {
            let mut state = self.write();
            state.seq += 1;
            remove_entry(&mut state, file);
            state.provenance.remove(&format!("{file}.prov"));
        }
        self.invalidate();
    }

    /// Brings the in-memory repository in line with the storage: reads packages it has not
    /// seen (in parallel), drops those that are gone. Safe to run while uploads go on: a
    /// listing never undoes what this replica learnt after the listing began.
    pub async fn sync(&self) -> Result<SyncReport, StorageError> {
        let started_at = self.read().seq;
        let listing = self.storage.list().await?;
        let mut report = SyncReport::default();
        let mut to_read = Vec::new();
        let mut provenance = Vec::new();
        {
            let state = self.read();
            for info in &listing {
                match classify(&info.name) {
                    Some(FileKind::Package) => {
                        let current = state.packages.get(&info.name);
                        if current.is_none_or(|k| k.info.tag != info.tag && k.seq <= started_at) {
                            to_read.push(info.clone());
                        }
                    }
                    Some(FileKind::Provenance) if !state.provenance.contains_key(&info.name) => {
                        provenance.push(info.clone());
                    }
                    _ => {}
                }
            }
        }
        let storage = Arc::clone(&self.storage);
        let urls = self.urls.clone();
        let mut read: Vec<(ObjectInfo, Result<ChartVersion, String>)> =
            futures::stream::iter(to_read)
                .map(|info| {
                    let storage = Arc::clone(&storage);
                    let urls = urls.clone();
                    async move {
                        let outcome = match storage.get(&info.name).await {
                            Ok(Some(data)) => {
                                let name = info.name.clone();
                                let created = info.modified;
                                tokio::task::spawn_blocking(move || {
                                    entry_from_package(&data, &name, created, &urls)
                                })
                                .await
                                .unwrap_or_else(|e| Err(e.to_string()))
                            }
                            Ok(None) => Err("removed while being read".to_owned()),
                            Err(e) => Err(e.to_string()),
                        };
                        (info, outcome)
                    }
                })
                .buffer_unordered(32)
                .collect()
                .await;
        read.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        let listed: std::collections::HashSet<&str> =
            listing.iter().map(|i| i.name.as_str()).collect();
        let mut changed = false;
        {
            let mut state = self.write();
            for (info, outcome) in read {
                match outcome {
                    Ok(version) => {
                        report.added += 1;
                        changed = true;
                        insert_entry(&mut state, NewEntry { version, info }, started_at);
                    }
                    Err(reason) => {
                        tracing::warn!(file = %info.name, %reason, "not a chart; not indexed");
                        report.skipped.push((info.name.clone(), reason));
                        if remove_entry(&mut state, &info.name) {
                            changed = true;
                        }
                        state.packages.insert(
                            info.name.clone(),
                            Known {
                                info,
                                seq: started_at,
                                entry: None,
                            },
                        );
                    }
                }
            }
            for info in provenance {
                state.provenance.insert(
                    info.name.clone(),
                    Known {
                        info,
                        seq: started_at,
                        entry: None,
                    },
                );
            }
            let gone: Vec<String> = state
                .packages
                .iter()
                .filter(|(name, known)| known.seq <= started_at && !listed.contains(name.as_str()))
                .map(|(name, _)| name.clone())
                .collect();
            for name in gone {
                if remove_entry(&mut state, &name) {
                    report.removed += 1;
                    changed = true;
                }
            }
            state
                .provenance
                .retain(|name, known| known.seq > started_at || listed.contains(name.as_str()));
        }
        if changed {
            self.invalidate();
        }
        self.metrics.set_charts(self.chart_count());
        Ok(report)
    }

    /// Syncs every `interval` until the returned handle is dropped or aborted, logging
    /// storage errors and carrying on.
    pub fn spawn_refresh(self: &Arc<Self>, interval: Duration) -> tokio::task::JoinHandle<()> {
        let this = Arc::clone(self);
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(interval);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticker.tick().await;
            loop {
                ticker.tick().await;
                match this.sync().await {
                    Ok(report) if report.added + report.removed > 0 => {
                        tracing::info!(
                            added = report.added,
                            removed = report.removed,
                            "picked up changes from storage"
                        );
                    }
                    Ok(_) => {}
                    Err(error) => tracing::warn!(%error, "refresh from storage failed"),
                }
            }
        })
    }
}

fn insert_entry(state: &mut State, entry: NewEntry, seq: u64) {
    let NewEntry { version, info } = entry;
    let file = info.name.clone();
    remove_entry(state, &file);
    let key = (version.name().to_owned(), version.version().to_owned());
    let versions = state.index.entries.entry(key.0.clone()).or_default();
    versions.retain(|v| v.version() != key.1);
    versions.push(version);
    // One chart's versions re-sorted; the rest of the index is untouched.
    chartkit_index::gosort::sort_newest_first(versions);
    state.packages.insert(
        file,
        Known {
            info,
            seq,
            entry: Some(key),
        },
    );
}

/// Removes a package's entry; true when there was one.
fn remove_entry(state: &mut State, file: &str) -> bool {
    let Some(known) = state.packages.remove(file) else {
        return false;
    };
    let Some((name, version)) = known.entry else {
        return false;
    };
    if let Some(versions) = state.index.entries.get_mut(&name) {
        versions.retain(|v| v.version() != version);
        if versions.is_empty() {
            state.index.entries.remove(&name);
        }
    }
    true
}

/// Reads a package into an index entry, as `helm repo index` writes it, with `created` from
/// the storage's modification time (the same on every replica and across restarts).
pub fn entry_from_package(
    data: &[u8],
    file: &str,
    created: SystemTime,
    urls: &UrlStyle,
) -> Result<ChartVersion, String> {
    let metadata = chartkit_repo::read_package_metadata(data).map_err(|e| e.to_string())?;
    let since = created
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    Ok(ChartVersion {
        metadata,
        urls: Some(vec![urls.chart_url(file)]),
        created: Some(chartkit_repo::format_utc(
            since.as_secs(),
            since.subsec_nanos(),
        )),
        digest: hex::encode(Sha256::digest(data)),
        ..ChartVersion::default()
    })
}

#[cfg(test)]
mod tests {
    use std::sync::OnceLock;

    use super::*;
    use crate::storage::{LocalStorage, WriteMode};

    fn package(name: &str, version: &str) -> Vec<u8> {
        let chart_yaml = format!("apiVersion: v2\nname: {name}\nversion: {version}\n");
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ));
        let mut header = tar::Header::new_gnu();
        header.set_size(chart_yaml.len() as u64);
        header.set_mode(0o644);
        builder
            .append_data(
                &mut header,
                format!("{name}/Chart.yaml"),
                chart_yaml.as_bytes(),
            )
            .unwrap();
        builder.into_inner().unwrap().finish().unwrap()
    }

    /// Local storage whose listing runs a hook first, to interleave an upload with a sync.
    struct Interleaved {
        inner: LocalStorage,
        during_list: std::sync::Mutex<Option<Box<dyn FnOnce() + Send>>>,
    }

    #[async_trait::async_trait]
    impl Storage for Interleaved {
        fn describe(&self) -> String {
            self.inner.describe()
        }
        async fn list(&self) -> Result<Vec<ObjectInfo>, StorageError> {
            let listing = self.inner.list().await;
            if let Some(hook) = self.during_list.lock().unwrap().take() {
                hook();
            }
            listing
        }
        async fn get(&self, name: &str) -> Result<Option<Bytes>, StorageError> {
            self.inner.get(name).await
        }
        async fn put(
            &self,
            name: &str,
            data: Bytes,
            mode: WriteMode,
        ) -> Result<ObjectInfo, StorageError> {
            self.inner.put(name, data, mode).await
        }
        async fn delete(&self, name: &str) -> Result<bool, StorageError> {
            self.inner.delete(name).await
        }
    }

    #[tokio::test]
    async fn sync_follows_the_storage_without_undoing_newer_uploads() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a-1.0.0.tgz"), package("a", "1.0.0")).unwrap();
        std::fs::write(dir.path().join("a-2.0.0.tgz"), package("a", "2.0.0")).unwrap();
        std::fs::write(dir.path().join("junk-1.0.0.tgz"), b"not gzip").unwrap();
        let repo_cell: Arc<OnceLock<Arc<Repository>>> = Arc::new(OnceLock::new());
        let storage = Arc::new(Interleaved {
            inner: LocalStorage::open(dir.path()).unwrap(),
            during_list: std::sync::Mutex::new(None),
        });
        let repo = Arc::new(Repository::new(
            storage.clone(),
            UrlStyle::default(),
            Arc::new(Metrics::default()),
        ));
        repo_cell.set(Arc::clone(&repo)).ok().unwrap();

        let report = repo.sync().await.unwrap();
        assert_eq!(report.added, 2);
        assert_eq!(report.skipped.len(), 1, "{report:?}");
        let versions: Vec<String> = repo
            .chart("a")
            .unwrap()
            .iter()
            .map(|v| v.version().to_owned())
            .collect();
        assert_eq!(versions, ["2.0.0", "1.0.0"]);
        assert!(
            repo.index()
                .yaml
                .starts_with(b"apiVersion: v1\nentries:\n  a:\n")
        );

        // An upload lands just after a sync took its listing: the stale listing must not
        // remove it.
        std::fs::remove_file(dir.path().join("a-1.0.0.tgz")).unwrap();
        let cell = Arc::clone(&repo_cell);
        let path = dir.path().join("b-1.0.0.tgz");
        *storage.during_list.lock().unwrap() = Some(Box::new(move || {
            let data = package("b", "1.0.0");
            std::fs::write(&path, &data).unwrap();
            let info = ObjectInfo {
                name: "b-1.0.0.tgz".to_owned(),
                size: data.len() as u64,
                modified: SystemTime::now(),
                tag: "uploaded".to_owned(),
            };
            let version =
                entry_from_package(&data, &info.name, info.modified, &UrlStyle::default()).unwrap();
            cell.get()
                .unwrap()
                .insert_package(NewEntry { version, info });
        }));
        let report = repo.sync().await.unwrap();
        assert_eq!(report.removed, 1, "{report:?}");
        assert!(repo.chart("b").is_some(), "the concurrent upload survived");
        assert_eq!(repo.chart("a").unwrap().len(), 1);
        let yaml = String::from_utf8(repo.index().yaml.to_vec()).unwrap();
        assert!(yaml.contains("- charts/b-1.0.0.tgz"), "{yaml}");
        assert!(!yaml.contains("a-1.0.0.tgz"), "{yaml}");
    }
}
