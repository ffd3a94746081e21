//! `repo index`: build index.yaml for a directory of chart packages, as `helm repo index`
//! does, but in parallel and without re-reading packages that have not changed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use chartkit_index::{ChartVersion, GoTime, IndexFile};
use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::package::{PackageError, read_package_metadata};

/// Options of `repo index`, resolved from the command line.
#[derive(Debug, Clone, Default)]
pub struct IndexDirOptions {
    /// Base URL for chart URLs (`--url`).
    pub url: String,
    /// Index to merge into the result (`--merge`); created if missing, as Helm does.
    pub merge: Option<PathBuf>,
    /// Write JSON instead of YAML (`--json`); the file is still `index.yaml`.
    pub json: bool,
    /// Where to remember each package's size, mtime and digest between runs. With it, an
    /// unchanged package is neither hashed nor unpacked.
    pub digest_cache: Option<PathBuf>,
}

/// What `repo index` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexDirReport {
    /// Packages in the index.
    pub indexed: usize,
    /// Packages whose metadata came from the previous index (digest unchanged).
    pub reused: usize,
    /// Packages whose digest came from the digest cache (not even hashed).
    pub not_hashed: usize,
    /// Files matching `*.tgz` that are not charts, with the reason (Helm skips them silently).
    pub skipped: Vec<(PathBuf, String)>,
    /// Warnings from reading the previous or merged index.
    pub warnings: Vec<String>,
}

/// Why `repo index` failed.
#[derive(Debug, thiserror::Error)]
pub enum RepoIndexError {
    #[error("reading `{path}`: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("merge failed: `{path}`: {source}")]
    Merge {
        path: PathBuf,
        source: chartkit_index::IndexError,
    },
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> RepoIndexError + '_ {
    move |source| RepoIndexError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The packages Helm indexes: `DIR/*.tgz`, then `DIR/*/*.tgz`, each level sorted by name as
/// Go's `filepath.Glob` returns them.
fn find_packages(dir: &Path) -> Result<Vec<PathBuf>, RepoIndexError> {
    let sorted_entries = |d: &Path| -> Result<Vec<PathBuf>, RepoIndexError> {
        let mut names: Vec<PathBuf> = std::fs::read_dir(d)
            .map_err(io_error(d))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        names.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
        Ok(names)
    };
    let is_package = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(".tgz"))
            && p.is_file()
    };
    let top = sorted_entries(dir)?;
    let mut packages: Vec<PathBuf> = top.iter().filter(|p| is_package(p)).cloned().collect();
    for sub in top.iter().filter(|p| p.is_dir()) {
        if let Ok(inner) = sorted_entries(sub) {
            packages.extend(inner.into_iter().filter(|p| is_package(p)));
        }
    }
    Ok(packages)
}

/// One line of the digest cache: relative path, size, mtime (ns), sha256 hex.
type DigestCache = HashMap<String, (u64, u64, String)>;

fn load_digest_cache(path: Option<&Path>) -> DigestCache {
    let Some(text) = path.and_then(|p| std::fs::read_to_string(p).ok()) else {
        return DigestCache::new();
    };
    text.lines()
        .filter_map(|line| {
            let mut f = line.split('\t');
            let (rel, size, mtime, digest) = (f.next()?, f.next()?, f.next()?, f.next()?);
            Some((
                rel.to_owned(),
                (size.parse().ok()?, mtime.parse().ok()?, digest.to_owned()),
            ))
        })
        .collect()
}

fn stat(path: &Path) -> Result<(u64, u64), RepoIndexError> {
    let meta = std::fs::metadata(path).map_err(io_error(path))?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64);
    Ok((meta.len(), mtime))
}

/// Where each package lands in the index.
struct Located {
    path: PathBuf,
    rel: String,
    url: String,
}

/// Helm's URL rules: `URLJoin(URLJoin(base, parentDir), file)`; with no base URL the
/// relative path.
fn package_url(base: &str, rel: &str) -> String {
    let (parent, file) = rel.rsplit_once('/').unwrap_or(("", rel));
    let parent_url = crate::urljoin::url_join(base, &[parent]);
    if parent_url.is_empty() {
        file.to_owned()
    } else {
        crate::urljoin::url_join(&parent_url, &[file])
    }
}

enum Outcome {
    Entry {
        version: Box<ChartVersion>,
        reused: bool,
        hashed: bool,
        stamp: (u64, u64, String),
    },
    Skipped(String),
}

/// Indexes `dir` into `dir/index.yaml` with Helm's rules. Entries are Helm's except that a
/// package whose digest matches an entry of the previous `dir/index.yaml` (or the merged
/// index) at the same URL keeps that entry's `created` time.
pub fn index_directory(
    dir: &Path,
    options: &IndexDirOptions,
) -> Result<IndexDirReport, RepoIndexError> {
    let mut report = IndexDirReport::default();
    let out_path = dir.join("index.yaml");
    let merge_index = match &options.merge {
        Some(path) if path.exists() => {
            let bytes = std::fs::read(path).map_err(io_error(path))?;
            let loaded = chartkit_index::parse_index(&bytes, &path.display().to_string()).map_err(
                |source| RepoIndexError::Merge {
                    path: path.clone(),
                    source,
                },
            )?;
            report.warnings.extend(loaded.warnings);
            Some(loaded.index)
        }
        Some(path) => {
            let empty = IndexFile::new(crate::clock::now());
            let text = render(&empty, options.json);
            crate::write_durably(path, text.as_bytes()).map_err(io_error(path))?;
            Some(empty)
        }
        None => None,
    };
    // Previous entries by (url, digest), to keep their metadata and created time.
    let previous = std::fs::read(&out_path)
        .ok()
        .and_then(|bytes| chartkit_index::parse_index(&bytes, "index.yaml").ok())
        .map(|l| l.index);
    let mut known: HashMap<(String, String), &ChartVersion> = HashMap::new();
    for index in previous.iter().chain(merge_index.iter()) {
        for version in index.entries.values().flatten() {
            for url in version.urls.iter().flatten() {
                known
                    .entry((url.clone(), version.digest.clone()))
                    .or_insert(version);
            }
        }
    }
    let digests = load_digest_cache(options.digest_cache.as_deref());
    let located: Vec<Located> = find_packages(dir)?
        .into_iter()
        .map(|path| {
            let rel = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            let url = package_url(&options.url, &rel);
            Located { path, rel, url }
        })
        .collect();
    let now = crate::clock::now();
    let outcomes: Vec<Result<Outcome, RepoIndexError>> = located
        .par_iter()
        .map(|p| index_one(p, &digests, &known, &now))
        .collect();
    let mut index = IndexFile::new(now);
    let mut cache_lines = String::new();
    for (p, outcome) in located.iter().zip(outcomes) {
        match outcome? {
            Outcome::Entry {
                version,
                reused,
                hashed,
                stamp,
            } => {
                report.indexed += 1;
                report.reused += usize::from(reused);
                report.not_hashed += usize::from(!hashed);
                cache_lines.push_str(&format!(
                    "{}\t{}\t{}\t{}\n",
                    p.rel, stamp.0, stamp.1, stamp.2
                ));
                index
                    .entries
                    .entry(version.metadata.name.clone())
                    .or_default()
                    .push(*version);
            }
            Outcome::Skipped(reason) => report.skipped.push((p.path.clone(), reason)),
        }
    }
    if let Some(merge) = &merge_index {
        index.merge(merge);
    }
    index.sort_entries();
    let text = render(&index, options.json);
    crate::write_durably(&out_path, text.as_bytes()).map_err(io_error(&out_path))?;
    if let Some(cache) = &options.digest_cache {
        // The cache only saves work; failing to write it must not fail the command.
        if let Some(parent) = cache.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = crate::write_durably(cache, cache_lines.as_bytes());
    }
    Ok(report)
}

fn render(index: &IndexFile, json: bool) -> String {
    if json {
        chartkit_index::to_json(index)
    } else {
        chartkit_index::to_yaml(index)
    }
}

fn index_one(
    p: &Located,
    digests: &DigestCache,
    known: &HashMap<(String, String), &ChartVersion>,
    now: &GoTime,
) -> Result<Outcome, RepoIndexError> {
    let (size, mtime) = stat(&p.path)?;
    let cached_digest = digests
        .get(&p.rel)
        .filter(|(s, m, _)| *s == size && *m == mtime)
        .map(|(_, _, d)| d.clone());
    if let Some(digest) = &cached_digest
        && let Some(previous) = known.get(&(p.url.clone(), digest.clone()))
    {
        return Ok(Outcome::Entry {
            version: Box::new(reuse(previous, &p.url)),
            reused: true,
            hashed: false,
            stamp: (size, mtime, digest.clone()),
        });
    }
    let bytes = std::fs::read(&p.path).map_err(io_error(&p.path))?;
    let digest = hex::encode(Sha256::digest(&bytes));
    if let Some(previous) = known.get(&(p.url.clone(), digest.clone())) {
        return Ok(Outcome::Entry {
            version: Box::new(reuse(previous, &p.url)),
            reused: true,
            hashed: true,
            stamp: (size, mtime, digest),
        });
    }
    let metadata = match read_package_metadata(&bytes) {
        Ok(m) => m,
        Err(e) => return Ok(Outcome::Skipped(skip_reason(&e))),
    };
    Ok(Outcome::Entry {
        version: Box::new(ChartVersion {
            metadata,
            urls: Some(vec![p.url.clone()]),
            created: Some(now.clone()),
            digest: digest.clone(),
            ..ChartVersion::default()
        }),
        reused: false,
        hashed: true,
        stamp: (size, mtime, digest),
    })
}

/// A previous entry for an unchanged package: its metadata and created time, and only the
/// fields `helm repo index` itself writes.
fn reuse(previous: &ChartVersion, url: &str) -> ChartVersion {
    ChartVersion {
        metadata: previous.metadata.clone(),
        urls: Some(vec![url.to_owned()]),
        created: previous.created.clone(),
        digest: previous.digest.clone(),
        ..ChartVersion::default()
    }
}

fn skip_reason(error: &PackageError) -> String {
    error.to_string()
}
