//! `chartkit mirror`: charts (with their `.prov` files and, on request, the charts their
//! dependencies need, from whatever repository or registry those come from) copied from
//! an index repository or an OCI registry into a directory with an index.yaml (ready for
//! `chartkit serve DIR`) or into another registry, for a network that cannot reach the
//! original. Re-running copies only what is new.
//!
//! Everything is fetched first and written only once all of it is at hand, so a missing
//! repository, an unknown chart or a refused login leaves the target as it was.

mod registry;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use chartkit_chart::LoadOptions;
use chartkit_index::ChartVersion;
use chartkit_oci::{OciError, Reference};
use chartkit_repo_client::{
    Access, ChartRef, Client, ClientError, Provenance, Refresh, RepoEntry, RepoIndex,
};
use chartkit_version::{Version, VersionRange};
use sha2::{Digest as _, Sha256};

use crate::reference::Repository;

/// Where the charts come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MirrorSource {
    /// A configured repository's name or a repository URL, with one chart of it (`None`:
    /// all of them).
    Repository { repo: String, chart: Option<String> },
    /// A chart in a registry, `oci://HOST/PATH/NAME[:TAG][@DIGEST]`: the tag or digest
    /// given, else every version tag (in `--versions` when given).
    Registry(Reference),
}

impl MirrorSource {
    /// `oci://...`, a repository URL (all its charts), or `REPO[/NAME]`.
    pub fn parse(text: &str) -> Result<MirrorSource, MirrorError> {
        if chartkit_oci::is_oci(text) {
            return Reference::parse(text)
                .map(MirrorSource::Registry)
                .map_err(|e| MirrorError::Client(Box::new(e.into())));
        }
        // A URL keeps its slashes; otherwise `REPO/NAME` names one chart.
        let (repo, chart) = match text.split_once('/') {
            Some((repo, chart)) if !text.contains("://") => {
                (repo.to_owned(), Some(chart.to_owned()))
            }
            _ => (text.to_owned(), None),
        };
        Ok(MirrorSource::Repository { repo, chart })
    }
}

/// Where the copies go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MirrorTarget {
    /// A directory that gets the packages, their `.prov` files and an index.yaml.
    Directory(PathBuf),
    /// `oci://HOST/PATH`: each chart pushed as `PATH/NAME:VERSION` with Helm's manifest.
    Registry(String),
}

impl MirrorTarget {
    /// `oci://HOST/PATH` is a registry, anything else a directory.
    pub fn parse(text: &str) -> MirrorTarget {
        match chartkit_oci::is_oci(text) {
            true => MirrorTarget::Registry(text.trim_end_matches('/').to_owned()),
            false => MirrorTarget::Directory(PathBuf::from(text)),
        }
    }
}

impl std::fmt::Display for MirrorTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MirrorTarget::Directory(dir) => write!(f, "{}", dir.display()),
            MirrorTarget::Registry(base) => f.write_str(base),
        }
    }
}

/// What to mirror.
pub struct MirrorOptions {
    pub source: MirrorSource,
    /// Versions to copy (a range); every version when `None`.
    pub versions: Option<String>,
    /// Also copy, transitively, the charts the copied charts' dependencies resolve to.
    pub with_dependencies: bool,
    pub to: MirrorTarget,
    /// TLS settings and `--plain-http` for registries, source and target alike
    /// (credentials are those `registry login` stored).
    pub access: Access,
    pub load: LoadOptions,
}

/// What a mirror run did.
#[derive(Debug, Default)]
pub struct MirrorReport {
    /// Charts copied in this run: package file names in a directory, references pushed
    /// to a registry.
    pub copied: Vec<String>,
    /// Provenance files copied in this run.
    pub provenance: Vec<String>,
    /// Charts already there, unchanged.
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
    #[error("cannot push {file} to {target}: {reason}")]
    Push {
        file: String,
        target: String,
        reason: String,
    },
}

impl From<ClientError> for MirrorError {
    fn from(error: ClientError) -> MirrorError {
        MirrorError::Client(Box::new(error))
    }
}

impl From<OciError> for MirrorError {
    fn from(error: OciError) -> MirrorError {
        MirrorError::Client(Box::new(error.into()))
    }
}

/// One chart version to copy, from where it is.
enum Wanted {
    /// In an index repository.
    Indexed {
        repo_url: String,
        reference: ChartRef,
        version: String,
    },
    /// In a registry: `reference` itself, or the newest tag in `version` (a range).
    Registry {
        reference: Reference,
        version: Option<String>,
    },
}

/// A chart fetched and ready to be written.
struct Copy {
    /// `NAME-VERSION.tgz`.
    file: String,
    package: Vec<u8>,
    prov: Option<Vec<u8>>,
    /// The creation time a push gives it: the source manifest's, or the index entry's.
    created: Option<String>,
    /// Already in the target directory with these bytes (nothing was fetched).
    present: bool,
}

/// One run's state: the indexes read so far, the queue, and what was gathered.
struct Run<'a> {
    client: &'a Client,
    options: &'a MirrorOptions,
    indexes: BTreeMap<String, RepoIndex>,
    report: MirrorReport,
    queue: VecDeque<Wanted>,
    /// Registry requests and package files handled already.
    seen: BTreeSet<String>,
    copies: Vec<Copy>,
}

/// Mirrors as `options` says: everything is gathered first, then written into the
/// directory (with `to/index.yaml` from `repo index`'s code, URLs relative) or pushed to
/// the registry.
pub fn mirror(
    client: &Client,
    options: &MirrorOptions,
    notify: &mut dyn FnMut(&str),
) -> Result<MirrorReport, MirrorError> {
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
    // A target registry that refuses us is found out before anything is fetched.
    if let MirrorTarget::Registry(base) = &options.to {
        registry::check_target(client, base, &options.access)?;
    }
    let mut run = Run {
        client,
        options,
        indexes: BTreeMap::new(),
        report: MirrorReport::default(),
        queue: VecDeque::new(),
        seen: BTreeSet::new(),
        copies: Vec::new(),
    };
    match &options.source {
        MirrorSource::Repository { repo, chart } => {
            run.seed_repository(repo, chart.as_deref(), range.as_ref())?
        }
        MirrorSource::Registry(reference) => {
            let wanted = registry::seed(client, reference, options, range.as_ref())?;
            run.queue.extend(wanted);
        }
    }
    while let Some(wanted) = run.queue.pop_front() {
        run.gather(wanted)?;
    }
    let Run {
        mut report, copies, ..
    } = run;
    match &options.to {
        MirrorTarget::Directory(dir) => write_directory(dir, &copies, &mut report, notify)?,
        MirrorTarget::Registry(base) => {
            registry::push_all(client, base, options, &copies, &mut report, notify)?
        }
    }
    Ok(report)
}

impl Run<'_> {
    fn seed_repository(
        &mut self,
        repo: &str,
        chart: Option<&str>,
        range: Option<&VersionRange>,
    ) -> Result<(), MirrorError> {
        let root = if repo.contains("://") {
            self.client.entry_for_url(repo)
        } else {
            self.client.repo(repo)?.clone()
        };
        let range_text = self.options.versions.clone().unwrap_or_default();
        let root_index = self.index(&root)?;
        let names: Vec<String> = match chart {
            Some(chart) => {
                if root_index
                    .index
                    .versions(chart)
                    .map_or(true, |v| v.is_empty())
                {
                    return Err(MirrorError::NoSuchChart {
                        chart: chart.to_owned(),
                        repo: root.url.clone(),
                    });
                }
                vec![chart.to_owned()]
            }
            None => root_index.index.chart_names().map(str::to_owned).collect(),
        };
        let mut queued = Vec::new();
        for name in &names {
            let versions = entries(root_index, name);
            let chosen: Vec<&ChartVersion> = versions
                .iter()
                .filter(|v| match range {
                    None => true,
                    Some(range) => Version::parse(v.version()).is_ok_and(|p| range.matches(&p)),
                })
                .collect();
            if chosen.is_empty() && chart.is_some() {
                return Err(MirrorError::NoMatch {
                    chart: name.clone(),
                    repo: root.url.clone(),
                    range: range_text.clone(),
                });
            }
            for v in chosen {
                queued.push(Wanted::Indexed {
                    repo_url: root.url.clone(),
                    reference: reference_for(&root, name),
                    version: v.version().to_owned(),
                });
            }
        }
        self.queue.extend(queued);
        Ok(())
    }

    fn gather(&mut self, wanted: Wanted) -> Result<(), MirrorError> {
        match wanted {
            Wanted::Indexed {
                repo_url,
                reference,
                version,
            } => self.gather_indexed(&repo_url, &reference, &version),
            Wanted::Registry { reference, version } => {
                self.gather_registry(&reference, version.as_deref())
            }
        }
    }

    fn gather_indexed(
        &mut self,
        repo_url: &str,
        reference: &ChartRef,
        version: &str,
    ) -> Result<(), MirrorError> {
        let client = self.client;
        let entry = client.entry_for_url(repo_url);
        let index = self.index(&entry)?;
        let resolved = client.resolve_in(index, reference, Some(version), false)?;
        let file = resolved.file_name();
        if !self.seen.insert(file.clone()) {
            return Ok(());
        }
        let created = resolved
            .entry
            .as_ref()
            .and_then(|e| e.created.as_ref())
            .map(|t| whole_seconds(&t.to_string()))
            .filter(|t| !t.starts_with("0001-"));
        let existing = match &self.options.to {
            MirrorTarget::Directory(dir) => {
                already_there(&dir.join(&file), resolved.digest.as_deref())
            }
            MirrorTarget::Registry(_) => None,
        };
        let copy = match existing {
            Some(package) => Copy {
                file,
                package,
                prov: None,
                created,
                present: true,
            },
            None => {
                let package = client.fetch_package(&resolved)?.bytes;
                let prov = match client.fetch_prov(&resolved) {
                    Ok(prov) => Some(prov),
                    Err(ClientError::Status { status: 404, .. }) => None,
                    // A getter plugin has no "not found" answer, only a failure; helm
                    // asks plugins for a `.prov` only to verify, so most cannot serve one.
                    Err(ClientError::Getter(_)) => None,
                    Err(e) => return Err(e.into()),
                };
                Copy {
                    file,
                    package,
                    prov,
                    created,
                    present: false,
                }
            }
        };
        self.keep(copy)
    }

    fn gather_registry(
        &mut self,
        reference: &Reference,
        version: Option<&str>,
    ) -> Result<(), MirrorError> {
        if !self
            .seen
            .insert(format!("oci://{reference} {}", version.unwrap_or_default()))
        {
            return Ok(());
        }
        let chart = self.client.fetch_oci(
            reference,
            version,
            false,
            &self.options.access,
            Provenance::IfPresent,
        )?;
        self.report.warnings.extend(chart.warnings.iter().cloned());
        let file = chart.file_name();
        if !self.seen.insert(file.clone()) {
            return Ok(());
        }
        let present = match &self.options.to {
            MirrorTarget::Directory(dir) => std::fs::read(dir.join(&file))
                .is_ok_and(|bytes| Sha256::digest(&bytes) == Sha256::digest(&chart.package)),
            MirrorTarget::Registry(_) => false,
        };
        self.keep(Copy {
            file,
            package: chart.package,
            prov: chart.prov,
            created: chart.created,
            present,
        })
    }

    /// Keeps `copy` and queues what its dependencies need.
    fn keep(&mut self, copy: Copy) -> Result<(), MirrorError> {
        if self.options.with_dependencies {
            self.dependencies_of(&copy.package, &copy.file)?;
        }
        self.copies.push(copy);
        Ok(())
    }

    /// The index of `entry`, loaded once per run (a conditional request; the cache when
    /// the server cannot be reached).
    fn index(&mut self, entry: &RepoEntry) -> Result<&RepoIndex, MirrorError> {
        if !self.indexes.contains_key(&entry.url) {
            let loaded = self.client.load_index(entry, Refresh::Always)?;
            self.report.warnings.extend(loaded.warnings.iter().cloned());
            self.indexes.insert(entry.url.clone(), loaded);
        }
        Ok(&self.indexes[&entry.url])
    }

    /// Queues each dependency a package declares: from an index repository (configured
    /// or not), the newest version in range; from a registry, the newest tag in range.
    /// Dependencies vendored in the package and local paths need nothing.
    fn dependencies_of(&mut self, bytes: &[u8], file: &str) -> Result<(), MirrorError> {
        let chart = match chartkit_chart::load_archive(bytes, file, &self.options.load) {
            Ok(chart) => chart,
            Err(e) => {
                self.report
                    .warnings
                    .push(format!("{file}: cannot read its dependencies: {e}"));
                return Ok(());
            }
        };
        for d in chart.metadata.dependencies.iter().flatten() {
            let entry = match Repository::of(&d.repository) {
                Repository::Vendored | Repository::Local(_) => continue,
                Repository::Oci(repository) => {
                    let text = format!("{}/{}", repository.trim_end_matches('/'), d.name);
                    match Reference::parse(&text) {
                        Ok(reference) => self.queue.push_back(Wanted::Registry {
                            reference,
                            version: Some(d.version.clone()),
                        }),
                        Err(e) => self
                            .report
                            .warnings
                            .push(format!("{file}: dependency {}: {e}", d.name)),
                    }
                    continue;
                }
                Repository::Named(name) => match self.client.repos.get(name) {
                    Some(e) => e.clone(),
                    None => {
                        self.report.warnings.push(format!(
                            "{file}: dependency {} names the repository @{name}, which is not configured; add it with `chartkit repo add {name} URL`",
                            d.name
                        ));
                        continue;
                    }
                },
                Repository::Url(url) => self.client.entry_for_url(url),
            };
            let index = self.index(&entry)?;
            let versions = entries(index, &d.name);
            let chosen = VersionRange::parse(&d.version).ok().and_then(|range| {
                versions
                    .iter()
                    .filter(|v| v.urls.as_ref().is_some_and(|u| !u.is_empty()))
                    .find(|v| Version::parse(v.version()).is_ok_and(|p| range.matches(&p)))
            });
            match chosen {
                Some(v) => self.queue.push_back(Wanted::Indexed {
                    repo_url: entry.url.clone(),
                    reference: reference_for(&entry, &d.name),
                    version: v.version().to_owned(),
                }),
                None => self.report.warnings.push(format!(
                    "{file}: no version of its dependency {} in {} matches {:?}",
                    d.name, entry.url, d.version
                )),
            }
        }
        Ok(())
    }
}

/// Writes the new copies into `dir`, each `.prov` before its package (a package is never
/// visible without the signature its source has for it), then indexes the directory.
fn write_directory(
    dir: &Path,
    copies: &[Copy],
    report: &mut MirrorReport,
    notify: &mut dyn FnMut(&str),
) -> Result<(), MirrorError> {
    std::fs::create_dir_all(dir).map_err(|e| MirrorError::Write {
        path: dir.to_path_buf(),
        reason: e.to_string(),
    })?;
    for copy in copies {
        if copy.present {
            report.present += 1;
            continue;
        }
        if let Some(prov) = &copy.prov {
            let name = format!("{}.prov", copy.file);
            write(&dir.join(&name), prov)?;
            report.provenance.push(name);
        }
        write(&dir.join(&copy.file), &copy.package)?;
        notify(&format!("Copied {}", copy.file));
        report.copied.push(copy.file.clone());
    }
    chartkit_repo::index_directory(dir, &chartkit_repo::IndexDirOptions::default()).map_err(
        |e| MirrorError::Index {
            path: dir.to_path_buf(),
            reason: e.to_string(),
        },
    )?;
    Ok(())
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

/// An RFC 3339 time without its fraction of a second, as `helm push` writes `created`.
fn whole_seconds(time: &str) -> String {
    let Some(dot) = time.find('.') else {
        return time.to_owned();
    };
    let end = time[dot..]
        .find(['Z', 'z', '+', '-'])
        .map_or(time.len(), |i| dot + i);
    format!("{}{}", &time[..dot], &time[end..])
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

fn entries(index: &RepoIndex, name: &str) -> Vec<ChartVersion> {
    let Ok(versions) = index.index.versions(name) else {
        return Vec::new();
    };
    versions
        .iter()
        .filter_map(|v| index.index.entry(v).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_and_targets_are_read_by_their_form() {
        assert_eq!(
            MirrorSource::parse("origin/web").unwrap(),
            MirrorSource::Repository {
                repo: "origin".into(),
                chart: Some("web".into())
            }
        );
        assert_eq!(
            MirrorSource::parse("https://charts.example/sub").unwrap(),
            MirrorSource::Repository {
                repo: "https://charts.example/sub".into(),
                chart: None
            }
        );
        let MirrorSource::Registry(r) = MirrorSource::parse("oci://r:5000/a/web:1.0.0").unwrap()
        else {
            panic!("not a registry source");
        };
        assert_eq!(
            (r.repository.as_str(), r.tag.as_deref()),
            ("a/web", Some("1.0.0"))
        );
        assert!(MirrorSource::parse("oci://r:5000").is_err());
        assert_eq!(
            MirrorTarget::parse("oci://r:5000/mirror/"),
            MirrorTarget::Registry("oci://r:5000/mirror".into())
        );
        assert_eq!(
            MirrorTarget::parse("out/dir"),
            MirrorTarget::Directory("out/dir".into())
        );
    }

    #[test]
    fn created_times_lose_their_fraction_only() {
        assert_eq!(
            whole_seconds("2026-11-28T05:00:01.123456789Z"),
            "2026-11-28T05:00:01Z"
        );
        assert_eq!(
            whole_seconds("2026-11-28T05:00:01.5+02:00"),
            "2026-11-28T05:00:01+02:00"
        );
        assert_eq!(
            whole_seconds("2026-11-28T05:00:01-07:00"),
            "2026-11-28T05:00:01-07:00"
        );
    }
}
