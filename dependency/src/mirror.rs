//! `chartkit mirror`: a repository's packages (with their `.prov` files and, on request,
//! the packages their dependencies need, from whatever repository those come from) copied
//! into a directory with an index.yaml, ready for `chartkit serve DIR` on a network that
//! cannot reach the original. Re-running copies only what is new.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use chartkit_chart::LoadOptions;
use chartkit_index::ChartVersion;
use chartkit_repo_client::{ChartRef, Client, ClientError, Refresh, RepoEntry, RepoIndex};
use chartkit_version::{Version, VersionRange};
use sha2::{Digest as _, Sha256};

use crate::reference::Repository;

/// What to mirror.
pub struct MirrorOptions {
    /// A configured repository's name, or a repository URL.
    pub repo: String,
    /// One chart of it; all charts when `None`.
    pub chart: Option<String>,
    /// Versions to copy (a range); every version when `None`.
    pub versions: Option<String>,
    /// Also copy, transitively, the packages the copied charts' dependencies resolve to.
    pub with_dependencies: bool,
    pub to: PathBuf,
    pub load: LoadOptions,
    /// How an OCI registry source is reached.
    pub registry: chartkit_repo_client::Access,
}

/// What a mirror run did.
#[derive(Debug, Default)]
pub struct MirrorReport {
    /// Packages copied in this run (file names in the target directory).
    pub copied: Vec<String>,
    /// Provenance files copied in this run.
    pub provenance: Vec<String>,
    /// Packages already there, unchanged.
    pub present: usize,
    /// Things worth knowing: dependencies that cannot be mirrored, cache fallbacks.
    pub warnings: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum MirrorError {
    #[error("{0}")]
    Client(Box<ClientError>),
    #[error("invalid --versions {range:?}: {reason}")]
    Range { range: String, reason: String },
    #[error("no chart named {chart:?} in {repo}")]
    NoSuchChart { chart: String, repo: String },
    #[error("no version of {chart} in {repo} matches {range}")]
    NoMatch {
        chart: String,
        repo: String,
        range: String,
    },
    #[error("cannot write into {}: {reason}", path.display())]
    Write { path: PathBuf, reason: String },
    #[error("cannot index {}: {reason}", path.display())]
    Index { path: PathBuf, reason: String },
}

impl From<ClientError> for MirrorError {
    fn from(error: ClientError) -> MirrorError {
        MirrorError::Client(Box::new(error))
    }
}

/// One chart version to copy, from the repository it is in.
struct Wanted {
    repo_url: String,
    reference: ChartRef,
    version: String,
}

/// Mirrors as `options` says, then writes `to/index.yaml` with `repo index`'s code (URLs
/// relative, so `chartkit serve DIR` or any static server serves the copy).
pub fn mirror(
    client: &Client,
    options: &MirrorOptions,
    notify: &mut dyn FnMut(&str),
) -> Result<MirrorReport, MirrorError> {
    std::fs::create_dir_all(&options.to).map_err(|e| MirrorError::Write {
        path: options.to.clone(),
        reason: e.to_string(),
    })?;
    if chartkit_oci::is_oci(&options.repo) {
        return mirror_from_registry(client, options, notify);
    }
    let mut report = MirrorReport::default();
    let mut indexes: BTreeMap<String, RepoIndex> = BTreeMap::new();
    let root = if options.repo.contains("://") {
        client.entry_for_url(&options.repo)
    } else {
        client.repo(&options.repo)?.clone()
    };
    let range = options
        .versions
        .as_deref()
        .map(|r| {
            VersionRange::parse(r).map_err(|e| MirrorError::Range {
                range: r.to_owned(),
                reason: e.to_string(),
            })
        })
        .transpose()?;
    let root_index = open_index(client, &root, &mut indexes, &mut report)?;
    let names: Vec<String> = match &options.chart {
        Some(chart) => {
            if root_index
                .index
                .versions(chart)
                .map_or(true, |v| v.is_empty())
            {
                return Err(MirrorError::NoSuchChart {
                    chart: chart.clone(),
                    repo: root.url.clone(),
                });
            }
            vec![chart.clone()]
        }
        None => root_index.index.chart_names().map(str::to_owned).collect(),
    };
    let mut queue = VecDeque::new();
    for name in &names {
        let versions = entries(root_index, name);
        let chosen: Vec<&ChartVersion> = versions
            .iter()
            .filter(|v| match &range {
                None => true,
                Some(range) => Version::parse(v.version()).is_ok_and(|p| range.matches(&p)),
            })
            .collect();
        if chosen.is_empty() && options.chart.is_some() {
            return Err(MirrorError::NoMatch {
                chart: name.clone(),
                repo: root.url.clone(),
                range: options.versions.clone().unwrap_or_default(),
            });
        }
        for v in chosen {
            queue.push_back(Wanted {
                repo_url: root.url.clone(),
                reference: reference_for(&root, name),
                version: v.version().to_owned(),
            });
        }
    }
    let mut done: BTreeSet<(String, String, String)> = BTreeSet::new();
    while let Some(wanted) = queue.pop_front() {
        let key = (
            wanted.repo_url.clone(),
            wanted.reference.chart_name().to_owned(),
            wanted.version.clone(),
        );
        if !done.insert(key) {
            continue;
        }
        let entry = client.entry_for_url(&wanted.repo_url);
        let index = open_index(client, &entry, &mut indexes, &mut report)?;
        let resolved = client.resolve_in(index, &wanted.reference, Some(&wanted.version), false)?;
        let file = resolved.file_name();
        let target = options.to.join(&file);
        let bytes = match already_there(&target, resolved.digest.as_deref()) {
            Some(bytes) => {
                report.present += 1;
                bytes
            }
            None => {
                let package = client.fetch_package(&resolved)?;
                // The .prov first: a package is never visible without the signature the
                // repository has for it.
                match client.fetch_prov(&resolved) {
                    Ok(prov) => {
                        write(&options.to.join(format!("{file}.prov")), &prov)?;
                        report.provenance.push(format!("{file}.prov"));
                    }
                    Err(ClientError::Status { status: 404, .. }) => {}
                    Err(e) => return Err(e.into()),
                }
                write(&target, &package.bytes)?;
                notify(&format!("Copied {file}"));
                report.copied.push(file.clone());
                package.bytes
            }
        };
        if options.with_dependencies {
            dependencies_of(
                client,
                &bytes,
                &file,
                options,
                &mut indexes,
                &mut report,
                &mut queue,
            )?;
        }
    }
    chartkit_repo::index_directory(&options.to, &chartkit_repo::IndexDirOptions::default())
        .map_err(|e| MirrorError::Index {
            path: options.to.clone(),
            reason: e.to_string(),
        })?;
    Ok(report)
}

/// `mirror oci://HOST/PATH/NAME`: the versions the registry's tags name (in `--versions`),
/// each package and its provenance layer written into the directory, then indexed.
fn mirror_from_registry(
    client: &Client,
    options: &MirrorOptions,
    notify: &mut dyn FnMut(&str),
) -> Result<MirrorReport, MirrorError> {
    let mut report = MirrorReport::default();
    let reference = chartkit_oci::Reference::parse(&options.repo).map_err(ClientError::from)?;
    let (versions, warnings) = client.oci_versions(&reference, &options.registry)?;
    report.warnings.extend(warnings);
    if options.with_dependencies {
        report.warnings.push(format!(
            "--with-dependencies is not followed from an OCI registry source ({})",
            options.repo
        ));
    }
    let range = options
        .versions
        .as_deref()
        .map(|r| {
            VersionRange::parse(r).map_err(|e| MirrorError::Range {
                range: r.to_owned(),
                reason: e.to_string(),
            })
        })
        .transpose()?;
    let chosen: Vec<&String> = versions
        .iter()
        .filter(|v| match &range {
            None => true,
            Some(range) => Version::parse(v).is_ok_and(|p| range.matches(&p)),
        })
        .collect();
    if chosen.is_empty() {
        return Err(MirrorError::NoMatch {
            chart: reference.name().to_owned(),
            repo: options.repo.clone(),
            range: options.versions.clone().unwrap_or_else(|| "*".to_owned()),
        });
    }
    for version in chosen {
        let chart = client.fetch_oci(
            &reference,
            Some(version),
            false,
            &options.registry,
            chartkit_repo_client::Provenance::IfPresent,
        )?;
        let file = chart.file_name();
        let target = options.to.join(&file);
        if std::fs::read(&target).is_ok_and(|bytes| bytes == chart.package) {
            report.present += 1;
            continue;
        }
        if let Some(prov) = &chart.prov {
            write(&options.to.join(format!("{file}.prov")), prov)?;
            report.provenance.push(format!("{file}.prov"));
        }
        write(&target, &chart.package)?;
        notify(&format!("Copied {file}"));
        report.copied.push(file);
    }
    chartkit_repo::index_directory(&options.to, &chartkit_repo::IndexDirOptions::default())
        .map_err(|e| MirrorError::Index {
            path: options.to.clone(),
            reason: e.to_string(),
        })?;
    Ok(report)
}

/// Pushes every package in `dir` (a mirror's directory), with the `.prov` beside it, to
/// the registry path `destination` (`oci://HOST/PATH`) as `PATH/NAME:VERSION` with Helm's
/// manifest; blobs the registry has are not sent again. The references pushed.
pub fn push_to_registry(
    client: &Client,
    dir: &Path,
    destination: &str,
    access: &chartkit_repo_client::Access,
    load: &LoadOptions,
    notify: &mut dyn FnMut(&str),
) -> Result<Vec<String>, MirrorError> {
    let unreadable = |path: &Path, e: &dyn std::fmt::Display| MirrorError::Write {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    let mut packages: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| unreadable(dir, &e))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|x| x == "tgz"))
        .collect();
    packages.sort();
    let mut pushed = Vec::new();
    for path in packages {
        let bytes = std::fs::read(&path).map_err(|e| unreadable(&path, &e))?;
        let shown = path.display().to_string();
        let chart = chartkit_chart::load_archive(&bytes, &shown, load)
            .map_err(|e| unreadable(&path, &e))?;
        let prov = std::fs::read(format!("{shown}.prov")).ok();
        let modified = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .map_err(|e| unreadable(&path, &e))?;
        let created = chartkit_oci::manifest::rfc3339(modified);
        let result = client.push_oci(&chart, bytes, prov, destination, &created, access)?;
        notify(&format!("Pushed: {}", result.reference));
        pushed.push(result.reference.to_string());
    }
    Ok(pushed)
}

/// The package at `target` when it is there with the digest the index gives.
fn already_there(target: &Path, digest: Option<&str>) -> Option<Vec<u8>> {
    let bytes = std::fs::read(target).ok()?;
    let actual = hex::encode(Sha256::digest(&bytes));
    (digest? == actual).then_some(bytes)
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), MirrorError> {
    chartkit_durable::write(path, bytes).map_err(|e| MirrorError::Write {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

fn reference_for(entry: &RepoEntry, chart: &str) -> ChartRef {
    if entry.is_unnamed() {
        ChartRef::InRepo {
            url: entry.url.clone(),
            chart: chart.to_owned(),
        }
    } else {
        ChartRef::Named {
            repo: entry.name.clone(),
            chart: chart.to_owned(),
        }
    }
}

/// The index of `entry`, loaded once per run (a conditional request; the cache when the
/// server cannot be reached).
fn open_index<'i>(
    client: &Client,
    entry: &RepoEntry,
    indexes: &'i mut BTreeMap<String, RepoIndex>,
    report: &mut MirrorReport,
) -> Result<&'i RepoIndex, MirrorError> {
    if !indexes.contains_key(&entry.url) {
        let loaded = client.load_index(entry, Refresh::Always)?;
        report.warnings.extend(loaded.warnings.iter().cloned());
        indexes.insert(entry.url.clone(), loaded);
    }
    Ok(&indexes[&entry.url])
}

fn entries(index: &RepoIndex, name: &str) -> Vec<ChartVersion> {
    let Ok(versions) = index.index.versions(name) else {
        return Vec::new();
    };
    versions
        .iter()
        .filter_map(|v| index.index.entry(v).ok())
        .collect()
}

/// Queues the newest version in range of each dependency a package declares, from the
/// repository it names (configured or not). Dependencies vendored in the package, local
/// paths and OCI registries need nothing (or cannot be mirrored: a warning says so).
fn dependencies_of(
    client: &Client,
    bytes: &[u8],
    file: &str,
    options: &MirrorOptions,
    indexes: &mut BTreeMap<String, RepoIndex>,
    report: &mut MirrorReport,
    queue: &mut VecDeque<Wanted>,
) -> Result<(), MirrorError> {
    let chart = match chartkit_chart::load_archive(bytes, file, &options.load) {
        Ok(chart) => chart,
        Err(e) => {
            report
                .warnings
                .push(format!("{file}: cannot read its dependencies: {e}"));
            return Ok(());
        }
    };
    for d in chart.metadata.dependencies.iter().flatten() {
        let entry = match Repository::of(&d.repository) {
            Repository::Vendored | Repository::Local(_) => continue,
            Repository::Oci(r) => {
                report.warnings.push(format!(
                    "{file}: dependency {} is in the OCI registry {r}, which chartkit cannot mirror yet",
                    d.name
                ));
                continue;
            }
            Repository::Named(name) => match client.repos.get(name) {
                Some(e) => e.clone(),
                None => {
                    report.warnings.push(format!(
                        "{file}: dependency {} names the repository @{name}, which is not configured; add it with `chartkit repo add {name} URL`",
                        d.name
                    ));
                    continue;
                }
            },
            Repository::Url(url) => client.entry_for_url(url),
        };
        let index = open_index(client, &entry, indexes, report)?;
        let versions = entries(index, &d.name);
        let chosen = VersionRange::parse(&d.version).ok().and_then(|range| {
            versions
                .iter()
                .filter(|v| v.urls.as_ref().is_some_and(|u| !u.is_empty()))
                .find(|v| Version::parse(v.version()).is_ok_and(|p| range.matches(&p)))
        });
        match chosen {
            Some(v) => queue.push_back(Wanted {
                repo_url: entry.url.clone(),
                reference: reference_for(&entry, &d.name),
                version: v.version().to_owned(),
            }),
            None => report.warnings.push(format!(
                "{file}: no version of its dependency {} in {} matches {:?}",
                d.name, entry.url, d.version
            )),
        }
    }
    Ok(())
}
