//! `dependency update` and `dependency build`: Helm's `downloader.Manager`, on chartkit's
//! repository client. Indexes come from the client's cache (refreshed with conditional
//! requests), packages from its content-addressed store, so `build` with everything
//! cached opens no connection at all, where helm refreshes every repository first.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use chartkit_chart::{Chart, Dependency, LoadOptions, Lock};
use chartkit_index::ChartVersion;
use chartkit_repo_client::{
    ChartRef, Client, ClientError, Refresh, RepoEntry, RepoIndex, Resolved,
};
use chartkit_signing::Keyring;
use chartkit_version::{Version, VersionRange};
use chartkit_yaml::goslog;

use crate::lockfile::{WriteLockError, generated_now, lock_file_name, requested, write_lock};
use crate::resolve::{Configured, ResolveError, Source, resolve, sources};

/// Whether downloaded packages are checked against their `.prov` signatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    Never,
    /// Verify when the repository has a `.prov`; warn when it has none (`build --verify`).
    IfPossible,
    /// Every package must have a `.prov` that verifies (`update --verify`).
    Always,
}

/// How `update` and `build` run.
pub struct Options<'a> {
    pub verify: Verify,
    /// Trusted keys for `verify`.
    pub keyring: Option<&'a Keyring>,
    /// Use cached indexes as they are (an index never downloaded is still fetched).
    pub skip_refresh: bool,
    pub load: LoadOptions,
    /// Modification time of the entries of `file://` dependencies packaged on the fly.
    pub mtime: u64,
    /// How OCI registries are reached (`--plain-http`, TLS files, credentials over the
    /// stored login).
    pub registry: chartkit_repo_client::Access,
}

/// Why `update` or `build` failed.
#[derive(Debug, thiserror::Error)]
pub enum DependencyError {
    #[error("could not find {}: {source}", path.display())]
    NotFound {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("only unpacked charts can be updated: {} is not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("cannot load the chart at {}: {source}", path.display())]
    Load {
        path: PathBuf,
        source: Box<chartkit_chart::LoadError>,
    },
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    #[error("{0}")]
    Client(Box<ClientError>),
    #[error(
        "the lock file ({lock}) is out of sync with the dependencies file ({declared}). Please update the dependencies with 'chartkit dependency update'"
    )]
    OutOfSync {
        lock: &'static str,
        declared: &'static str,
    },
    #[error("could not find {name} {version} in {repository}: {reason}")]
    NotInIndex {
        name: String,
        version: String,
        repository: String,
        reason: String,
    },
    #[error("could not download {url}: {source}")]
    Download {
        url: String,
        source: Box<ClientError>,
    },
    #[error("{name} {version} failed verification: {reason}")]
    Verification {
        name: String,
        version: String,
        reason: String,
    },
    #[error("unable to load chart '{}': {reason}", path.display())]
    Vendored { path: PathBuf, reason: String },
    #[error("dependency {name} at version {found} does not satisfy the constraint {range}")]
    VendoredVersion {
        name: String,
        found: String,
        range: String,
    },
    #[error("cannot package the dependency {name} from {}: {reason}", path.display())]
    Package {
        name: String,
        path: PathBuf,
        reason: String,
    },
    #[error("\"{}\" is not a directory", .0.display())]
    ChartsNotADirectory(PathBuf),
    #[error("cannot update {}: {reason}", path.display())]
    Charts { path: PathBuf, reason: String },
    #[error(transparent)]
    WriteLock(#[from] WriteLockError),
}

impl From<ClientError> for DependencyError {
    fn from(error: ClientError) -> DependencyError {
        DependencyError::Client(Box::new(error))
    }
}

impl DependencyError {
    /// For an offline miss: what is missing and the command that would fetch it.
    pub fn offline(&self) -> Option<(&str, &str)> {
        let (DependencyError::Client(source) | DependencyError::Download { source, .. }) = self
        else {
            return None;
        };
        match source.as_ref() {
            ClientError::Offline { missing, fetch } => Some((missing, fetch)),
            _ => None,
        }
    }
}

/// What happened, for the summary the command line prints.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Packages written into `charts/`.
    pub saved: Vec<String>,
    /// Packages that had to be downloaded (the rest came from the cache).
    pub downloaded: usize,
    /// Whether a lock file was written.
    pub lock_written: bool,
    /// Old archives removed from `charts/`.
    pub removed: Vec<String>,
}

/// Helm's `Manager.Update`: resolves every dependency against fresh indexes, vendors the
/// packages into `charts/` and writes the lock when its digest changed.
pub fn update(
    client: &Client,
    chart_dir: &Path,
    options: &Options<'_>,
    notify: &mut dyn FnMut(&str),
) -> Result<Outcome, DependencyError> {
    let chart = load_chart_dir(chart_dir, &options.load)?;
    let Some(mut requested) = requested(&chart) else {
        return Ok(Outcome::default());
    };
    let sources = sources(chart_dir, &mut requested, &configured(client))?;
    let refresh = if options.skip_refresh {
        Refresh::IfMissing
    } else {
        Refresh::Always
    };
    let indexes = load_indexes(client, &sources, refresh, notify)?;
    let tag_warnings = std::cell::RefCell::new(Vec::new());
    let notify_later = |warning: &str| tag_warnings.borrow_mut().push(goslog::warn(warning, &[]));
    let mut locked = resolve(
        chart_dir,
        &requested,
        &sources,
        |url, name| indexes.get(url).and_then(|i| versions(i, name)),
        |repository, name| {
            let reference = oci_reference(repository, name).map_err(|e| e.to_string())?;
            let (versions, warnings) = client
                .oci_versions(&reference, &options.registry)
                .map_err(|e| e.to_string())?;
            for warning in warnings {
                notify_later(&warning);
            }
            Ok(versions)
        },
    )?;
    for warning in tag_warnings.take() {
        notify(&warning);
    }
    let mut outcome = vendor(
        client,
        chart_dir,
        &mut locked,
        &sources,
        &indexes,
        options,
        notify,
    )?;
    let digest = chartkit_chart::dependencies_digest(Some(&requested), &locked);
    if chart.lock.as_ref().is_some_and(|l| l.digest == digest) {
        return Ok(outcome);
    }
    let lock = Lock {
        generated: generated_now(),
        digest,
        dependencies: locked,
    };
    write_lock(chart_dir, lock_file_name(&chart), &lock)?;
    outcome.lock_written = true;
    Ok(outcome)
}

/// Helm's `Manager.Build`: vendors exactly what the lock says, after checking that the
/// lock still belongs to Chart.yaml. Without a lock it is [`update`]. Indexes and packages
/// come from the cache when it has them; only what is missing is fetched.
pub fn build(
    client: &Client,
    chart_dir: &Path,
    options: &Options<'_>,
    notify: &mut dyn FnMut(&str),
) -> Result<Outcome, DependencyError> {
    let chart = load_chart_dir(chart_dir, &options.load)?;
    let Some(lock) = chart.lock.clone() else {
        return update(client, chart_dir, options, notify);
    };
    let mut requested = requested(&chart);
    let v1 = lock_file_name(&chart) == "requirements.lock";
    // Helm 2 hashed the declarations before repository names were resolved.
    let v2_digest = chartkit_chart::dependencies_digest_v2(requested.as_deref());
    let declared = requested.as_deref_mut().unwrap_or_default();
    sources(chart_dir, declared, &configured(client))?;
    let digest = chartkit_chart::dependencies_digest(requested.as_deref(), &lock.dependencies);
    if digest != lock.digest && !(v1 && v2_digest == lock.digest) {
        return Err(if v1 {
            DependencyError::OutOfSync {
                lock: "requirements.lock",
                declared: "requirements.yaml",
            }
        } else {
            DependencyError::OutOfSync {
                lock: "Chart.lock",
                declared: "Chart.yaml",
            }
        });
    }
    let mut locked = lock.dependencies.clone();
    // The lock's repositories are URLs (or file://, or empty): where each comes from.
    let lock_sources = sources(chart_dir, &mut locked.clone(), &configured(client))?;
    // Cached indexes first; an index that was never downloaded is fetched (unless offline).
    let mut indexes = load_indexes(client, &lock_sources, Refresh::IfMissing, notify)?;
    // A locked version missing from a cached index may be newer than the cache: refresh
    // that index once (helm refreshes every repository on every build).
    if !options.skip_refresh {
        let stale: BTreeSet<String> = locked
            .iter()
            .zip(&lock_sources)
            .filter_map(|(d, s)| {
                let url = s.index_url()?;
                let present = indexes
                    .get(url)
                    .and_then(|i| versions(i, &d.name))
                    .is_some_and(|v| crate::resolve::locked_entry(&v, &d.version).is_some());
                (!present).then(|| url.to_owned())
            })
            .collect();
        for url in stale {
            let source = lock_sources
                .iter()
                .find(|s| s.index_url() == Some(url.as_str()))
                .expect("a stale URL comes from a source");
            let fresh = load_index(client, source, Refresh::Always)?;
            report_warnings(&fresh, notify);
            indexes.insert(url, fresh);
        }
    }
    vendor(
        client,
        chart_dir,
        &mut locked,
        &lock_sources,
        &indexes,
        options,
        notify,
    )
}

fn load_chart_dir(chart_dir: &Path, options: &LoadOptions) -> Result<Chart, DependencyError> {
    let meta = std::fs::metadata(chart_dir).map_err(|source| DependencyError::NotFound {
        path: chart_dir.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(DependencyError::NotADirectory(chart_dir.to_path_buf()));
    }
    chartkit_chart::load_dir(chart_dir, options).map_err(|source| DependencyError::Load {
        path: chart_dir.to_path_buf(),
        source: Box::new(source),
    })
}

fn configured(client: &Client) -> Vec<Configured> {
    client
        .repos
        .repositories
        .iter()
        .map(|r| Configured {
            name: r.name.clone(),
            url: r.url.clone(),
        })
        .collect()
}

fn entry_of(client: &Client, source: &Source) -> RepoEntry {
    match source {
        Source::Configured(c) => client
            .repos
            .get(&c.name)
            .cloned()
            .unwrap_or_else(|| client.entry_for_url(&c.url)),
        other => client.entry_for_url(other.index_url().unwrap_or_default()),
    }
}

fn load_index(
    client: &Client,
    source: &Source,
    refresh: Refresh,
) -> Result<RepoIndex, DependencyError> {
    Ok(client.load_index(&entry_of(client, source), refresh)?)
}

fn report_warnings(index: &RepoIndex, notify: &mut dyn FnMut(&str)) {
    for warning in &index.warnings {
        notify(&goslog::warn(warning, &[]));
    }
}

/// Every index the sources need, each loaded once, concurrently (as helm updates them).
fn load_indexes(
    client: &Client,
    sources: &[Source],
    refresh: Refresh,
    notify: &mut dyn FnMut(&str),
) -> Result<BTreeMap<String, RepoIndex>, DependencyError> {
    let needed = crate::resolve::needed_indexes(sources);
    let loaded: Vec<(String, Result<RepoIndex, DependencyError>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = needed
            .iter()
            .map(|(url, source)| {
                (
                    url.clone(),
                    scope.spawn(move || load_index(client, source, refresh)),
                )
            })
            .collect();
        handles
            .into_iter()
            .map(|(url, h)| (url, h.join().expect("index loading does not panic")))
            .collect()
    });
    let mut out = BTreeMap::new();
    for (url, result) in loaded {
        let index = result?;
        report_warnings(&index, notify);
        out.insert(url, index);
    }
    Ok(out)
}

/// A chart's versions in a loaded index, newest first.
fn versions(index: &RepoIndex, name: &str) -> Option<Vec<ChartVersion>> {
    let compact = index.index.versions(name).ok()?;
    if compact.is_empty() {
        return None;
    }
    compact.iter().map(|v| index.index.entry(v).ok()).collect()
}

/// One package to put into `charts/`.
struct Fetch {
    name: String,
    version: String,
    resolved: Resolved,
}

/// Helm's `downloadAll` and `safeMoveDeps`: every locked package is gathered first
/// (vendored charts checked, `file://` charts packaged, repository charts from the cache
/// or downloaded and verified), and only when all are at hand is `charts/` changed: the
/// packages written durably, then the archives no dependency uses any more removed.
fn vendor(
    client: &Client,
    chart_dir: &Path,
    locked: &mut [Dependency],
    sources: &[Source],
    indexes: &BTreeMap<String, RepoIndex>,
    options: &Options<'_>,
    notify: &mut dyn FnMut(&str),
) -> Result<Outcome, DependencyError> {
    let charts = chart_dir.join("charts");
    match std::fs::metadata(&charts) {
        Ok(m) if !m.is_dir() => return Err(DependencyError::ChartsNotADirectory(charts)),
        Ok(_) => {}
        Err(_) => std::fs::create_dir_all(&charts).map_err(|e| DependencyError::Charts {
            path: charts.clone(),
            reason: e.to_string(),
        })?,
    }
    notify(&format!("Saving {} charts", locked.len()));
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut fetches: Vec<Fetch> = Vec::new();
    let mut seen_urls = BTreeSet::new();
    let mut vendored_names = BTreeSet::new();
    for (d, source) in locked.iter_mut().zip(sources) {
        match source {
            Source::Vendored => {
                notify(&format!(
                    "Dependency {} did not declare a repository. Assuming it exists in the charts directory",
                    d.name
                ));
                vendored_names.insert(d.name.clone());
                check_vendored(&charts.join(&d.name), d, &options.load)?;
            }
            Source::Local(path) => {
                let (file, bytes, version) = package_local(path, d, options)?;
                d.version = version;
                files.insert(file, bytes);
            }
            Source::Oci(repository) => {
                let (file, bytes, downloaded) = fetch_oci(client, repository, d, options)?;
                notify(&format!(
                    "{} {} from repo {}",
                    if downloaded {
                        "Downloading"
                    } else {
                        "Using cached"
                    },
                    d.name,
                    d.repository
                ));
                files.insert(file, bytes);
            }
            Source::Configured(_) | Source::Unconfigured(_) => {
                let url = source.index_url().unwrap_or_default();
                let index = &indexes[url];
                let reference = match source {
                    Source::Configured(c) => ChartRef::Named {
                        repo: c.name.clone(),
                        chart: d.name.clone(),
                    },
                    _ => ChartRef::InRepo {
                        url: url.to_owned(),
                        chart: d.name.clone(),
                    },
                };
                let not_found = |reason: String| DependencyError::NotInIndex {
                    name: d.name.clone(),
                    version: d.version.clone(),
                    repository: d.repository.clone(),
                    reason,
                };
                let resolved = client
                    .resolve_in(index, &reference, Some(&d.version), false)
                    .map_err(|e| not_found(e.to_string()))?;
                let url = resolved.urls.first().cloned().unwrap_or_default();
                if !seen_urls.insert(url) {
                    notify(&format!(
                        "Already downloaded {} from repo {}",
                        d.name, d.repository
                    ));
                    continue;
                }
                fetches.push(Fetch {
                    name: d.name.clone(),
                    version: d.version.clone(),
                    resolved,
                });
            }
        }
    }
    let mut outcome = Outcome::default();
    // Downloads run concurrently; each is checked against the index digest by the client.
    let fetched: Vec<Result<Fetched, DependencyError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = fetches
            .iter()
            .map(|f| scope.spawn(move || fetch_one(client, f, options)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a download does not panic"))
            .collect()
    });
    for (fetch, result) in fetches.iter().zip(fetched) {
        let Fetched {
            file,
            bytes,
            downloaded,
            warning,
        } = result?;
        notify(&format!(
            "{} {} from repo {}",
            if downloaded {
                "Downloading"
            } else {
                "Using cached"
            },
            fetch.name,
            fetch.resolved.repo_url
        ));
        if let Some(warning) = warning {
            notify(&warning);
        }
        outcome.downloaded += usize::from(downloaded);
        files.insert(file, bytes);
    }
    let writes: Vec<(PathBuf, &[u8])> = files
        .iter()
        .map(|(name, bytes)| (charts.join(name), bytes.as_slice()))
        .collect();
    chartkit_durable::write_all(&writes, Default::default()).map_err(|e| {
        DependencyError::Charts {
            path: charts.clone(),
            reason: e.to_string(),
        }
    })?;
    outcome.saved = files.keys().cloned().collect();
    notify("Deleting outdated charts");
    outcome.removed = remove_outdated(&charts, &files, &vendored_names, options);
    Ok(outcome)
}

/// A package at hand, with its file name in `charts/`.
struct Fetched {
    file: String,
    bytes: Vec<u8>,
    /// False when the content store had it.
    downloaded: bool,
    /// Helm's warning when `build --verify` finds no `.prov`.
    warning: Option<String>,
}

/// A package from the cache or the network, verified as `options` asks.
fn fetch_one(
    client: &Client,
    fetch: &Fetch,
    options: &Options<'_>,
) -> Result<Fetched, DependencyError> {
    let url = fetch.resolved.urls.first().cloned().unwrap_or_default();
    let package = client
        .fetch_package(&fetch.resolved)
        .map_err(|source| match source {
            ClientError::Offline { .. } => DependencyError::from(source),
            source => DependencyError::Download {
                url: url.clone(),
                source: Box::new(source),
            },
        })?;
    let file = fetch.resolved.file_name();
    let mut warning = None;
    if options.verify != Verify::Never {
        match client.fetch_prov(&fetch.resolved) {
            Ok(prov) => {
                let keyring = options
                    .keyring
                    .ok_or_else(|| DependencyError::Verification {
                        name: fetch.name.clone(),
                        version: fetch.version.clone(),
                        reason: "no keyring to verify with".into(),
                    })?;
                let text = String::from_utf8_lossy(&prov);
                chartkit_signing::verify(&text, &package.bytes, &file, keyring).map_err(|e| {
                    DependencyError::Verification {
                        name: fetch.name.clone(),
                        version: fetch.version.clone(),
                        reason: e.to_string(),
                    }
                })?;
            }
            Err(e) if options.verify == Verify::Always => {
                return Err(DependencyError::Verification {
                    name: fetch.name.clone(),
                    version: fetch.version.clone(),
                    reason: format!("no provenance file: {e}"),
                });
            }
            Err(e) => warning = Some(format!("WARNING: Verification not found for {url}: {e}")),
        }
    }
    Ok(Fetched {
        file,
        bytes: package.bytes,
        downloaded: package.downloaded,
        warning,
    })
}

/// `oci://HOST/PATH` and a chart name as the registry reference `HOST/PATH/NAME`.
fn oci_reference(
    repository: &str,
    name: &str,
) -> Result<chartkit_oci::Reference, chartkit_oci::OciError> {
    chartkit_oci::Reference::parse(&format!("{}/{name}", repository.trim_end_matches('/')))
}

/// An OCI dependency's package at its locked version, from the content store or the
/// registry, its provenance layer verified as `options` asks: (file name, bytes, whether
/// anything was downloaded).
fn fetch_oci(
    client: &Client,
    repository: &str,
    d: &Dependency,
    options: &Options<'_>,
) -> Result<(String, Vec<u8>, bool), DependencyError> {
    let download = |source: ClientError| match source {
        ClientError::Offline { .. } => DependencyError::from(source),
        source => DependencyError::Download {
            url: format!(
                "{}/{}:{}",
                repository.trim_end_matches('/'),
                d.name,
                d.version
            ),
            source: Box::new(source),
        },
    };
    let reference = oci_reference(repository, &d.name).map_err(|e| download(e.into()))?;
    let provenance = match options.verify {
        Verify::Always => chartkit_repo_client::Provenance::Required,
        Verify::IfPossible => chartkit_repo_client::Provenance::IfPresent,
        Verify::Never => chartkit_repo_client::Provenance::Skip,
    };
    let chart = client
        .fetch_oci(
            &reference,
            Some(&d.version),
            false,
            &options.registry,
            provenance,
        )
        .map_err(download)?;
    let file = chart.file_name();
    if let (Some(prov), Some(keyring)) = (&chart.prov, options.keyring) {
        chartkit_signing::verify(
            &String::from_utf8_lossy(prov),
            &chart.package,
            &file,
            keyring,
        )
        .map_err(|e| DependencyError::Verification {
            name: d.name.clone(),
            version: d.version.clone(),
            reason: e.to_string(),
        })?;
    }
    Ok((file, chart.package, chart.downloaded))
}

/// A dependency without a repository must be unpacked in `charts/` within its range.
fn check_vendored(path: &Path, d: &Dependency, load: &LoadOptions) -> Result<(), DependencyError> {
    let chart = chartkit_chart::load_dir(path, load).map_err(|e| DependencyError::Vendored {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    let range = VersionRange::parse(&d.version).map_err(|e| {
        DependencyError::Resolve(ResolveError::BadConstraint {
            name: d.name.clone(),
            reason: e.to_string(),
        })
    })?;
    let fits = Version::parse(&chart.metadata.version).is_ok_and(|v| range.matches(&v));
    if !fits {
        return Err(DependencyError::VendoredVersion {
            name: d.name.clone(),
            found: chart.metadata.version,
            range: d.version.clone(),
        });
    }
    Ok(())
}

/// A `file://` dependency packaged reproducibly: (file name, bytes, its version).
fn package_local(
    path: &Path,
    d: &Dependency,
    options: &Options<'_>,
) -> Result<(String, Vec<u8>, String), DependencyError> {
    let error = |reason: String| DependencyError::Package {
        name: d.name.clone(),
        path: path.to_path_buf(),
        reason,
    };
    let chart = chartkit_chart::load_dir(path, &options.load).map_err(|e| error(e.to_string()))?;
    let version = chart.metadata.version.clone();
    let range = VersionRange::parse(&d.version).map_err(|e| error(e.to_string()))?;
    if !Version::parse(&version).is_ok_and(|v| range.matches(&v)) {
        return Err(error(format!(
            "can't get a valid version for dependency {}",
            d.name
        )));
    }
    let bytes = chartkit_chart::package_to_bytes(&chart, options.mtime)
        .map_err(|e| error(e.to_string()))?;
    Ok((format!("{}-{version}.tgz", chart.name()), bytes, version))
}

/// Archives in `charts/` that were not just written and load as charts that no
/// repository-less dependency names: what helm deletes as outdated. Directories and
/// files that are not charts stay.
fn remove_outdated(
    charts: &Path,
    written: &BTreeMap<String, Vec<u8>>,
    vendored: &BTreeSet<String>,
    options: &Options<'_>,
) -> Vec<String> {
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(charts) else {
        return removed;
    };
    let mut names: Vec<_> = entries.filter_map(|e| e.ok()).collect();
    names.sort_by_key(|e| e.file_name());
    for entry in names {
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_dir() || written.contains_key(&name) || name.starts_with(".chartkit-") {
            continue;
        }
        let Ok(chart) = chartkit_chart::load(&entry.path(), &options.load) else {
            continue;
        };
        if vendored.contains(chart.name()) {
            continue;
        }
        if std::fs::remove_file(entry.path()).is_ok() {
            removed.push(name);
        }
    }
    removed
}
