//! The repository as the server holds it: every chart version in memory, kept in step with
//! the storage, and index.yaml rendered from it when asked for after a change.
//!
//! An upload changes one chart's version list and marks the rendered index stale; the next
//! `GET /index.yaml` renders once for however many uploads came before it. So the cost of an
//! upload does not grow with the repository, and readers never wait on writers for long.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use chartkit_chart::LoadOptions;
use chartkit_chart::archive::{EntryRules, Limits, RetainBudget};
use chartkit_index::{ChartVersion, IndexFile};
use futures::StreamExt;
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;

use crate::index_body::{BlockCache, IndexBody, Part};
use crate::index_json::JsonIndex;
use crate::metrics::Metrics;
use crate::names::{FileKind, classify};
use crate::storage::{ObjectInfo, Storage, StorageError};

/// How packages are judged, and how many at once.
#[derive(Debug, Clone, Copy)]
pub struct PackageRules {
    /// Archive limits, as Helm's loader applies them.
    pub limits: Limits,
    /// The most bytes one chart version may add to the index (its entry as compact JSON).
    pub max_entry_size: usize,
    /// Packages read and judged at once, by uploads and syncs together. Each holds at most
    /// the package and the few files Helm's loader reads, so this bounds memory.
    pub concurrent_checks: usize,
}

impl Default for PackageRules {
    fn default() -> Self {
        PackageRules {
            limits: Limits::default(),
            max_entry_size: 64 * 1024,
            concurrent_checks: 2,
        }
    }
}

/// Why a package is not indexed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub message: String,
    /// Refused only because other checks held the memory it needed: the package may be
    /// fine, and a later try may pass.
    pub busy: bool,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<String> for Refusal {
    fn from(message: String) -> Refusal {
        Refusal {
            message,
            busy: false,
        }
    }
}

/// How often a check refused for want of memory is tried again before giving up.
const BUSY_RETRIES: u64 = 8;

/// A chart name in go-yaml's key order (index.yaml's order), ties broken by bytes so that
/// distinct names never compare equal.
#[derive(Debug, Clone, PartialEq, Eq)]
struct IndexOrder(String);

impl Ord for IndexOrder {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        chartkit_yaml::compare_keys(&self.0, &other.0).then_with(|| self.0.cmp(&other.0))
    }
}

impl PartialOrd for IndexOrder {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
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
    /// The URLs of the repository at `path` (`ORG/REPO`) of a multi-tenant server: relative
    /// ones stay relative (to that repository's index), absolute ones go under the path,
    /// as ChartMuseum writes them at depth.
    pub fn under(&self, path: &str) -> UrlStyle {
        UrlStyle {
            base: self.base.as_ref().map(|base| {
                let segments: Vec<&str> = path.split('/').collect();
                chartkit_repo::url_join(base, &segments)
            }),
        }
    }

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
    /// Why a package file is left out of the index (and not served).
    refused: Option<String>,
}

#[derive(Debug, Default)]
struct State {
    index: IndexFile,
    /// Packages by file name.
    packages: HashMap<String, Known>,
    /// Provenance files by file name.
    provenance: HashMap<String, Known>,
    seq: u64,
    /// Each chart's rendered part of index.yaml, in index order.
    parts: BTreeMap<IndexOrder, Arc<Part>>,
    /// Charts whose versions changed since their part was rendered.
    stale: HashSet<String>,
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
    rules: PackageRules,
    /// How packages are loaded to be judged, with the memory budget all checks share.
    load: LoadOptions,
    checks: Arc<Semaphore>,
    state: RwLock<State>,
    rendered: Mutex<Option<Arc<IndexBody>>>,
    /// The last render's blocks, for the next render to reuse.
    blocks: Mutex<BlockCache>,
    /// `--json-index`'s index, made when first asked for after a change.
    json: Mutex<Option<Arc<JsonIndex>>>,
    metrics: Arc<Metrics>,
    /// The repository's path on a multi-tenant server (`ORG/REPO`); `None` for the
    /// server's one repository.
    name: Option<String>,
    /// Packages a sync reads from storage at once (`--index-limit`).
    sync_reads: usize,
    /// Counts changes to the index and to the set of provenance files, so what is derived
    /// from both (the web view's chart list) knows when to be made again.
    changes: std::sync::atomic::AtomicU64,
}

/// Packages a sync reads at once unless `--index-limit` says fewer (or more).
const SYNC_READS: usize = 32;

/// What a sync with the storage changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SyncReport {
    pub added: usize,
    pub removed: usize,
    pub skipped: Vec<(String, String)>,
}

impl Repository {
    pub fn new(
        storage: Arc<dyn Storage>,
        urls: UrlStyle,
        rules: PackageRules,
        metrics: Arc<Metrics>,
    ) -> Repository {
        let mut index = IndexFile::new(chartkit_repo::now());
        index.generated = None;
        Repository {
            storage,
            urls,
            rules,
            load: server_load_options(rules.limits),
            checks: Arc::new(Semaphore::new(rules.concurrent_checks.max(1))),
            state: RwLock::new(State {
                index,
                ..State::default()
            }),
            rendered: Mutex::new(None),
            blocks: Mutex::new(BlockCache::default()),
            json: Mutex::new(None),
            metrics,
            name: None,
            sync_reads: SYNC_READS,
            changes: Default::default(),
        }
    }

    /// The repository at `name` (`ORG/REPO`) of a multi-tenant server, kept in `storage`
    /// (this one's, scoped to the path): its chart URLs are under that path, its metrics
    /// counted under that name, its OCI repositories are `ORG/REPO/NAME`. It shares this
    /// repository's rules, and its bound on packages judged at once and their memory, so
    /// the bound holds for the whole server however many repositories it has.
    pub fn tenant(&self, name: &str, storage: Arc<dyn Storage>) -> Repository {
        let mut index = IndexFile::new(chartkit_repo::now());
        index.generated = None;
        Repository {
            storage,
            urls: self.urls.under(name),
            rules: self.rules,
            load: self.load.clone(),
            checks: Arc::clone(&self.checks),
            state: RwLock::new(State {
                index,
                ..State::default()
            }),
            rendered: Mutex::new(None),
            blocks: Mutex::new(BlockCache::default()),
            json: Mutex::new(None),
            metrics: Arc::clone(&self.metrics),
            name: Some(name.to_owned()),
            sync_reads: self.sync_reads,
            changes: Default::default(),
        }
    }

    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Reads at most `reads` packages from storage at once when syncing, as ChartMuseum's
    /// `--index-limit` bounds its indexer (judging them stays bounded by
    /// [`PackageRules::concurrent_checks`] too).
    pub fn with_sync_reads(mut self, reads: usize) -> Repository {
        self.sync_reads = reads.max(1);
        self
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
        *self.json.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.changed();
    }

    fn changed(&self) {
        self.changes
            .fetch_add(1, std::sync::atomic::Ordering::Release);
    }

    /// A number that grows whenever the index or the set of provenance files changes.
    pub fn change_count(&self) -> u64 {
        self.changes.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The rendered index.yaml if nothing changed since it was rendered.
    pub fn rendered_index(&self) -> Option<Arc<IndexBody>> {
        self.rendered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The current index.yaml, rendered now if anything changed since the last render.
    /// Only the charts that changed are rendered again, and only their blocks joined and
    /// deflated again; the rest is shared with the last render (call it off the async
    /// threads all the same).
    pub fn index(&self) -> Arc<IndexBody> {
        let mut rendered = self.rendered.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(current) = rendered.as_ref() {
            return Arc::clone(current);
        }
        let started = Instant::now();
        let generated = chartkit_repo::now();
        let parts: Vec<Arc<Part>> = {
            let mut state = self.write();
            let state = &mut *state;
            for name in std::mem::take(&mut state.stale) {
                let key = IndexOrder(name);
                match state.index.entries.get(&key.0).filter(|v| !v.is_empty()) {
                    Some(versions) => {
                        let mut text = chartkit_index::chart_entries_yaml(&key.0, versions);
                        text.push('\n');
                        state.parts.insert(key, Arc::new(Part::new(text)));
                    }
                    None => {
                        state.parts.remove(&key);
                    }
                }
            }
            state.parts.values().cloned().collect()
        };
        // The lines around the charts, as the whole-index encoder writes them.
        let around = chartkit_index::to_yaml(&IndexFile::new(generated));
        let tail = around
            .split_once("entries: {}\n")
            .map_or(String::new(), |(_, tail)| tail.to_owned());
        let head = if parts.is_empty() {
            "apiVersion: v1\nentries: {}\n"
        } else {
            "apiVersion: v1\nentries:\n"
        };
        let blocks = self
            .blocks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .blocks(&parts);
        let fresh = Arc::new(IndexBody::new(head, blocks, tail));
        self.metrics.index_rendered(started.elapsed());
        *rendered = Some(Arc::clone(&fresh));
        fresh
    }

    /// The JSON index if nothing changed since it was made.
    pub fn made_json_index(&self, context_path: &str) -> Option<Arc<JsonIndex>> {
        self.json
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .filter(|index| index.context_path == context_path)
    }

    /// The current JSON index, made now if anything changed since it was last made (call
    /// it off the async threads). The lock is held while making it, as [`Self::index`]
    /// holds its own, so a change that lands meanwhile waits and then discards it.
    pub fn json_index(&self, context_path: &str) -> Arc<JsonIndex> {
        let mut made = self.json.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(current) = made.as_ref().filter(|i| i.context_path == context_path) {
            return Arc::clone(current);
        }
        let generated = crate::index_json::generated_now();
        let fresh = Arc::new(JsonIndex::new(&self.charts(), &generated, context_path));
        *made = Some(Arc::clone(&fresh));
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

    /// How many charts (names) the index lists.
    pub fn chart_name_count(&self) -> usize {
        self.read().index.entries.len()
    }

    /// Packages and provenance files known to be in the storage, usable or not: what
    /// `--max-storage-objects` counts.
    pub fn object_count(&self) -> usize {
        let state = self.read();
        state.packages.len() + state.provenance.len()
    }

    /// The indexed versions of a chart with when each package was stored, and the change
    /// number when this replica learnt of it (the order of uploads the clock cannot tell).
    pub fn versions_by_age(&self, name: &str) -> Vec<(String, SystemTime, u64)> {
        self.read()
            .packages
            .values()
            .filter_map(|known| match &known.entry {
                Some((n, v)) if n == name => Some((v.clone(), known.info.modified, known.seq)),
                _ => None,
            })
            .collect()
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
        {
            let mut state = self.write();
            state.seq += 1;
            let seq = state.seq;
            state.provenance.insert(
                info.name.clone(),
                Known {
                    info,
                    seq,
                    entry: None,
                    refused: None,
                },
            );
        }
        self.changed();
    }

    /// Forgets a provenance file this replica has just removed.
    pub fn forget_provenance(&self, file: &str) {
        {
            let mut state = self.write();
            state.seq += 1;
            state.provenance.remove(file);
        }
        self.changed();
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

    /// How packages are judged.
    pub fn rules(&self) -> &PackageRules {
        &self.rules
    }

    /// Judges a package as `helm repo index` does, with chartkit's strict entry rules
    /// ([`server_load_options`]), and makes its index entry, with at most
    /// [`PackageRules::concurrent_checks`] packages being judged at once (others wait).
    /// `file` is the stored name; an upload has none yet, and its entry gets the name
    /// Helm gives the package, `NAME-VERSION.tgz`.
    pub async fn check_package(
        &self,
        data: Bytes,
        file: Option<&str>,
        created: SystemTime,
    ) -> Result<ChartVersion, Refusal> {
        let mut attempt = 0;
        loop {
            let outcome = {
                let _permit = self.checks.acquire().await.map_err(|e| e.to_string())?;
                self.judge(data.clone(), file, created).await
            };
            match outcome {
                // The memory was held by other checks, which have let go of their turns
                // by now or soon will: wait for them rather than refuse a chart that may
                // be fine. Each try starts with nothing held, so tries cannot deadlock.
                Err(refusal) if refusal.busy && attempt < BUSY_RETRIES => {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(50 * attempt)).await;
                }
                outcome => return outcome,
            }
        }
    }

    async fn judge(
        &self,
        data: Bytes,
        file: Option<&str>,
        created: SystemTime,
    ) -> Result<ChartVersion, Refusal> {
        let urls = self.urls.clone();
        let load = self.load.clone();
        let max_entry_size = self.rules.max_entry_size;
        let file = file.map(str::to_owned);
        tokio::task::spawn_blocking(move || {
            entry_from_package(
                &data,
                file.as_deref(),
                created,
                &urls,
                &load,
                max_entry_size,
            )
        })
        .await
        .unwrap_or_else(|e| Err(format!("checking the package failed: {e}").into()))
    }

    /// Reads a stored package and judges it, within the same bound as uploads.
    async fn load_entry(&self, info: &ObjectInfo) -> Result<ChartVersion, Refusal> {
        let _permit = self.checks.acquire().await.map_err(|e| e.to_string())?;
        // Compressed data is never larger than what it expands to by more than a little,
        // so a package file beyond the chart limit cannot be a chart: not worth reading.
        let largest = self.rules.limits.max_total_size.saturating_add(1 << 20);
        if info.size > largest {
            return Err(format!(
                "the file is {} bytes, larger than any chart within the {}-byte chart size limit",
                info.size, self.rules.limits.max_total_size
            )
            .into());
        }
        match self.storage.get(&info.name).await {
            Ok(Some(data)) => self.judge(data, Some(&info.name), info.modified).await,
            Ok(None) => Err("removed while being read".to_owned().into()),
            // Not the package's fault: tried again at the next refresh.
            Err(e) => Err(Refusal {
                message: e.to_string(),
                busy: true,
            }),
        }
    }

    /// The stored file of a chart version in the index. Found through the index, not
    /// built from the name and version, which can be ambiguous (`a-1.0.0` `2.0.0` and `a`
    /// `1.0.0-2.0.0` make the same file name).
    pub fn file_of(&self, name: &str, version: &str) -> Option<String> {
        let state = self.read();
        if let Some(file) = usual_file_of(&state, name, version) {
            return Some(file);
        }
        state
            .packages
            .iter()
            .find(|(_, known)| {
                known
                    .entry
                    .as_ref()
                    .is_some_and(|(n, v)| n == name && v == version)
            })
            .map(|(file, _)| file.clone())
    }

    /// The stored file of each indexed version of `name`, in one pass over the packages.
    pub fn files_of(&self, name: &str) -> HashMap<String, String> {
        let state = self.read();
        let usual = state.index.entries.get(name).and_then(|versions| {
            versions
                .iter()
                .map(|v| {
                    let version = v.version();
                    usual_file_of(&state, name, version).map(|file| (version.to_owned(), file))
                })
                .collect::<Option<HashMap<String, String>>>()
        });
        if let Some(files) = usual {
            return files;
        }
        state
            .packages
            .iter()
            .filter_map(|(file, known)| match &known.entry {
                Some((n, version)) if n == name => Some((version.clone(), file.clone())),
                _ => None,
            })
            .collect()
    }

    /// The (name, version) of every indexed package stored with a provenance file.
    pub fn signed_versions(&self) -> HashSet<(String, String)> {
        let state = self.read();
        state
            .packages
            .iter()
            .filter(|(file, _)| state.provenance.contains_key(&format!("{file}.prov")))
            .filter_map(|(_, known)| known.entry.clone())
            .collect()
    }

    /// The chart name and version of an indexed package file.
    pub fn entry_of_file(&self, file: &str) -> Option<(String, String)> {
        self.read().packages.get(file)?.entry.clone()
    }

    /// Why a stored package file is left out of the index, once a sync has judged it.
    pub fn refusal(&self, file: &str) -> Option<String> {
        self.read().packages.get(file)?.refused.clone()
    }

    /// The digest of a package in the index, if it is one.
    pub fn package_digest(&self, file: &str) -> Option<String> {
        let state = self.read();
        let (name, version) = state.packages.get(file)?.entry.as_ref()?;
        state
            .index
            .entries
            .get(name)?
            .iter()
            .find(|v| v.version() == version)
            .map(|v| v.digest.clone())
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
        // Every package is judged under the same bound on concurrent checks as uploads,
        // so a storage full of hostile packages costs no more memory than a burst of
        // hostile uploads.
        let mut read: Vec<(ObjectInfo, Result<ChartVersion, Refusal>)> =
            futures::stream::iter(to_read)
                .map(|info| async move {
                    let outcome = self.load_entry(&info).await;
                    (info, outcome)
                })
                .buffer_unordered(self.sync_reads)
                .collect()
                .await;
        read.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        let listed: std::collections::HashSet<&str> =
            listing.iter().map(|i| i.name.as_str()).collect();
        let mut changed = false;
        let mut provenance_changed = false;
        {
            let mut state = self.write();
            for (info, outcome) in read {
                match outcome {
                    Ok(version) => {
                        report.added += 1;
                        changed = true;
                        insert_entry(&mut state, NewEntry { version, info }, started_at);
                    }
                    Err(Refusal {
                        message,
                        busy: true,
                    }) => {
                        // Left unrecorded, so the next refresh reads it again.
                        tracing::info!(file = %info.name, %message, "not read this time; will retry");
                    }
                    Err(Refusal { message, .. }) => {
                        tracing::warn!(file = %info.name, reason = %message, "package refused; not indexed or served");
                        report.skipped.push((info.name.clone(), message.clone()));
                        if remove_entry(&mut state, &info.name) {
                            changed = true;
                        }
                        state.packages.insert(
                            info.name.clone(),
                            Known {
                                info,
                                seq: started_at,
                                entry: None,
                                refused: Some(message),
                            },
                        );
                    }
                }
            }
            let provenance_before = state.provenance.len();
            for info in provenance {
                let modified = info.modified;
                let previous = state.provenance.insert(
                    info.name.clone(),
                    Known {
                        info,
                        seq: started_at,
                        entry: None,
                        refused: None,
                    },
                );
                // A `.prov` replaced in place (re-signed) changes what the web view shows.
                if previous.is_none_or(|p| p.info.modified != modified) {
                    provenance_changed = true;
                }
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
            if state.provenance.len() != provenance_before {
                provenance_changed = true;
            }
        }
        if changed {
            self.invalidate();
        } else if provenance_changed {
            self.changed();
        }
        match &self.name {
            Some(name) => {
                self.metrics.set_repository_charts(name, self.chart_count());
                self.metrics
                    .set_repository_chart_names(name, self.chart_name_count());
            }
            None => self.metrics.set_charts(self.chart_count()),
        }
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

/// `NAME-VERSION.tgz` when that is the stored file of this version, as it nearly always
/// is: one map lookup, where finding a file through the entries reads all of them (a web
/// page asks for every version's file). The entry is compared, so an ambiguous name (see
/// `file_of`) is never taken for another chart's.
fn usual_file_of(state: &State, name: &str, version: &str) -> Option<String> {
    let file = format!("{name}-{version}.tgz");
    let known = state.packages.get(&file)?;
    known
        .entry
        .as_ref()
        .is_some_and(|(n, v)| n == name && v == version)
        .then_some(file)
}

fn insert_entry(state: &mut State, entry: NewEntry, seq: u64) {
    let NewEntry { version, info } = entry;
    let file = info.name.clone();
    remove_entry(state, &file);
    let key = (version.name().to_owned(), version.version().to_owned());
    state.stale.insert(key.0.clone());
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
            refused: None,
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
    state.stale.insert(name.clone());
    if let Some(versions) = state.index.entries.get_mut(&name) {
        versions.retain(|v| v.version() != version);
        if versions.is_empty() {
            state.index.entries.remove(&name);
        }
    }
    true
}

/// How the server loads a package to judge it: Helm's whole loader, as `helm repo index`
/// runs it, but with chartkit's strict entry rules (no links, special files, repeated
/// paths, `..` or absolute paths), because what the server stores its clients must be
/// able to use, and `chartkit pull --untar`, `template` and `show` refuse such archives.
/// `helm package` never writes one. Kept files count against one memory budget with room
/// for the largest chart the limits allow and some to share: a check that would need more
/// while others hold memory is refused as busy.
pub fn server_load_options(limits: Limits) -> LoadOptions {
    LoadOptions {
        rules: EntryRules::Strict,
        budget: Some(RetainBudget::new(
            limits.max_total_size.saturating_add(32 << 20),
        )),
        ..LoadOptions::for_index(limits)
    }
}

/// An entry's `created`: the storage's modification time.
pub fn created_time(modified: SystemTime) -> chartkit_index::GoTime {
    let since = modified
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    chartkit_repo::format_utc(since.as_secs(), since.subsec_nanos())
}

/// Judges a package with `load` (the server's are [`server_load_options`]) and makes its
/// index entry, with `created` from the storage's modification time (the same on every
/// replica and across restarts). The upload check and the storage sync both come here, so
/// a package is stored exactly when it will be indexed.
pub fn entry_from_package(
    data: &[u8],
    file: Option<&str>,
    created: SystemTime,
    urls: &UrlStyle,
    load: &LoadOptions,
    max_entry_size: usize,
) -> Result<ChartVersion, Refusal> {
    let origin = file.unwrap_or("uploaded package");
    let metadata =
        chartkit_repo::read_package_metadata(data, origin, load).map_err(|e| Refusal {
            message: e.to_string(),
            busy: e.is_busy(),
        })?;
    let file = match file {
        Some(file) => file.to_owned(),
        None => crate::names::package_file(&metadata.name, &metadata.version),
    };
    let version = ChartVersion {
        metadata,
        urls: Some(vec![urls.chart_url(&file)]),
        created: Some(created_time(created)),
        digest: hex::encode(Sha256::digest(data)),
        ..ChartVersion::default()
    };
    let size = chartkit_index::entry_to_json(&version).len();
    if size > max_entry_size {
        return Err(format!(
            "its metadata would add {size} bytes to the index, more than the server's limit of {max_entry_size} per chart version (--max-index-entry-size); shorten the description or annotations in Chart.yaml"
        )
        .into());
    }
    Ok(version)
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::OnceLock;

    use super::*;
    use crate::storage::{LocalStorage, WriteMode};

    /// The smallest package a repository takes: a Chart.yaml and nothing else.
    pub(crate) fn package(name: &str, version: &str) -> Vec<u8> {
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
        async fn check(&self) -> Result<(), StorageError> {
            self.inner.check().await
        }
    }

    /// Local storage that counts the reads in flight, each held a moment.
    struct CountingReads {
        inner: LocalStorage,
        in_flight: std::sync::atomic::AtomicUsize,
        most: std::sync::atomic::AtomicUsize,
    }

    #[async_trait::async_trait]
    impl Storage for CountingReads {
        fn describe(&self) -> String {
            self.inner.describe()
        }
        async fn list(&self) -> Result<Vec<ObjectInfo>, StorageError> {
            self.inner.list().await
        }
        async fn get(&self, name: &str) -> Result<Option<Bytes>, StorageError> {
            use std::sync::atomic::Ordering;
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            let data = self.inner.get(name).await;
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            data
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
        async fn check(&self) -> Result<(), StorageError> {
            self.inner.check().await
        }
    }

    #[tokio::test]
    async fn index_limit_bounds_the_packages_a_sync_reads_at_once() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..12 {
            let version = format!("1.0.{i}");
            std::fs::write(
                dir.path().join(format!("a-{version}.tgz")),
                package("a", &version),
            )
            .unwrap();
        }
        let storage = Arc::new(CountingReads {
            inner: LocalStorage::open(dir.path()).unwrap(),
            in_flight: Default::default(),
            most: Default::default(),
        });
        let rules = PackageRules {
            concurrent_checks: 8,
            ..PackageRules::default()
        };
        let repo = Repository::new(
            storage.clone(),
            UrlStyle::default(),
            rules,
            Arc::new(Metrics::default()),
        )
        .with_sync_reads(2);
        assert_eq!(repo.sync().await.unwrap().added, 12);
        let most = storage.most.load(std::sync::atomic::Ordering::SeqCst);
        assert!((1..=2).contains(&most), "{most} reads at once");
    }

    #[tokio::test]
    async fn a_version_file_is_found_by_its_usual_name_or_by_its_entry() {
        let dir = tempfile::tempdir().unwrap();
        // `a-1.0.0` 2.0.0 under the name `a` 1.0.0-2.0.0 would have: never taken for it.
        std::fs::write(
            dir.path().join("a-1.0.0-2.0.0.tgz"),
            package("a-1.0.0", "2.0.0"),
        )
        .unwrap();
        std::fs::write(dir.path().join("a-1.0.0.tgz"), package("a", "1.0.0")).unwrap();
        // Copied in by hand under another name.
        std::fs::write(dir.path().join("renamed.tgz"), package("a", "3.0.0")).unwrap();
        let repo = Repository::new(
            Arc::new(LocalStorage::open(dir.path()).unwrap()),
            UrlStyle::default(),
            PackageRules::default(),
            Arc::new(Metrics::default()),
        );
        assert_eq!(repo.sync().await.unwrap().added, 3);
        assert_eq!(repo.file_of("a", "1.0.0").as_deref(), Some("a-1.0.0.tgz"));
        assert_eq!(repo.file_of("a", "3.0.0").as_deref(), Some("renamed.tgz"));
        assert_eq!(
            repo.file_of("a-1.0.0", "2.0.0").as_deref(),
            Some("a-1.0.0-2.0.0.tgz")
        );
        assert_eq!(repo.file_of("a", "1.0.0-2.0.0"), None);
        let files = repo.files_of("a");
        assert_eq!(files.len(), 2, "{files:?}");
        assert_eq!(files["1.0.0"], "a-1.0.0.tgz");
        assert_eq!(files["3.0.0"], "renamed.tgz");
        assert_eq!(repo.files_of("a-1.0.0")["2.0.0"], "a-1.0.0-2.0.0.tgz");
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
            PackageRules::default(),
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
                .to_bytes()
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
            let version = entry_from_package(
                &data,
                Some(&info.name),
                info.modified,
                &UrlStyle::default(),
                &LoadOptions::for_index(Limits::default()),
                PackageRules::default().max_entry_size,
            )
            .unwrap();
            cell.get()
                .unwrap()
                .insert_package(NewEntry { version, info });
        }));
        let report = repo.sync().await.unwrap();
        assert_eq!(report.removed, 1, "{report:?}");
        assert!(repo.chart("b").is_some(), "the concurrent upload survived");
        assert_eq!(repo.chart("a").unwrap().len(), 1);
        let yaml = String::from_utf8(repo.index().to_bytes().to_vec()).unwrap();
        assert!(yaml.contains("- charts/b-1.0.0.tgz"), "{yaml}");
        assert!(!yaml.contains("a-1.0.0.tgz"), "{yaml}");
    }
}
