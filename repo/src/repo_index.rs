//! `repo index`: build index.yaml for a directory of chart packages, as `helm repo index`
//! does, but in parallel and without re-reading packages that have not changed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use chartkit_chart::LoadOptions;
use chartkit_chart::archive::Limits;
use chartkit_index::{ChartVersion, GoTime, IndexFile};
use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::package::read_package_metadata;

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
fn find_packages(dir: &Path) -> Result<Vec<(PathBuf, std::fs::Metadata)>, RepoIndexError> {
    let sorted_entries = |d: &Path| -> Result<Vec<std::fs::DirEntry>, RepoIndexError> {
        let mut entries: Vec<std::fs::DirEntry> = std::fs::read_dir(d)
            .map_err(io_error(d))?
            .filter_map(Result::ok)
            .collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        Ok(entries)
    };
    // The directory listing already says what each entry is; only symbolic links need a
    // stat to be followed, and packages one to be stamped.
    let metadata = |e: &std::fs::DirEntry| -> Option<std::fs::Metadata> {
        if e.file_type().ok()?.is_symlink() {
            std::fs::metadata(e.path()).ok()
        } else {
            e.metadata().ok()
        }
    };
    let package = |e: &std::fs::DirEntry| -> Option<(PathBuf, std::fs::Metadata)> {
        if !e.file_name().to_str().is_some_and(|n| n.ends_with(".tgz")) {
            return None;
        }
        metadata(e)
            .filter(std::fs::Metadata::is_file)
            .map(|m| (e.path(), m))
    };
    let is_dir = |e: &std::fs::DirEntry| match e.file_type() {
        Ok(t) if t.is_symlink() => metadata(e).is_some_and(|m| m.is_dir()),
        Ok(t) => t.is_dir(),
        Err(_) => false,
    };
    let top = sorted_entries(dir)?;
    let mut packages: Vec<_> = top.iter().filter_map(package).collect();
    for sub in top.iter().filter(|e| is_dir(e)) {
        if let Ok(inner) = sorted_entries(&sub.path()) {
            packages.extend(inner.iter().filter_map(package));
        }
    }
    Ok(packages)
}

/// The digest cache: what the last run saw and wrote, so the next run can tell what
/// changed without reading packages.
///
/// Text, one record a line, fields separated by tabs (and `\\`, `\\t`, `\\n` escaped):
///
/// ```text
/// chartkit-repo-index 3 <options fingerprint> <index sha256 without `generated`> <offset>
/// <relative path> <size> <file stamp> <sha256>          a package in the index
/// <relative path> <size> <file stamp> - <reason>        a `*.tgz` that is not a chart
/// ```
///
/// The header describes the index.yaml the run wrote: a sha256 of every byte except the
/// value of `generated`, which starts at the byte offset given.
#[derive(Debug, Default)]
struct RunRecord {
    fingerprint: String,
    index_sha256: String,
    generated_at: usize,
    packages: Vec<PackageRecord>,
}

#[derive(Debug, Clone)]
struct PackageRecord {
    rel: String,
    size: u64,
    stamp: u64,
    /// The package's sha256, or why it is not a chart.
    outcome: Result<String, String>,
}

impl PackageRecord {
    /// Whether the package is as recorded. A stamp of 0 (the file changed too recently to
    /// tell) is never trusted.
    fn matches(&self, (size, stamp): (u64, u64)) -> bool {
        stamp != 0 && self.size == size && self.stamp == stamp
    }
}

const RECORD_HEADER: &str = "chartkit-repo-index";
// 3: packages are judged by Helm's whole loader, not by their Chart.yaml alone, so
// verdicts recorded by version 2 are not reused.
const RECORD_VERSION: &str = "3";

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('\t', "\\t")
        .replace('\n', "\\n")
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

impl RunRecord {
    /// Reads a record; anything unreadable (an older format, a damaged file) is an empty
    /// record, which only costs re-reading the packages.
    fn load(path: Option<&Path>) -> RunRecord {
        let Some(text) = path.and_then(|p| std::fs::read_to_string(p).ok()) else {
            return RunRecord::default();
        };
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
        let [
            RECORD_HEADER,
            RECORD_VERSION,
            fingerprint,
            index_sha256,
            offset,
        ] = header[..]
        else {
            return RunRecord::default();
        };
        let packages = lines
            .filter_map(|line| {
                let mut f = line.split('\t');
                let (rel, size, stamp, digest) = (f.next()?, f.next()?, f.next()?, f.next()?);
                let outcome = match digest {
                    "-" => Err(unescape(f.next()?)),
                    digest => Ok(digest.to_owned()),
                };
                Some(PackageRecord {
                    rel: unescape(rel),
                    size: size.parse().ok()?,
                    stamp: stamp.parse().ok()?,
                    outcome,
                })
            })
            .collect();
        RunRecord {
            fingerprint: fingerprint.to_owned(),
            index_sha256: index_sha256.to_owned(),
            generated_at: offset.parse().unwrap_or(usize::MAX),
            packages,
        }
    }

    fn to_text(&self) -> String {
        let mut text = format!(
            "{RECORD_HEADER}\t{RECORD_VERSION}\t{}\t{}\t{}\n",
            self.fingerprint, self.index_sha256, self.generated_at
        );
        for p in &self.packages {
            let outcome = match &p.outcome {
                Ok(digest) => digest.clone(),
                Err(reason) => format!("-\t{}", escape(reason)),
            };
            text.push_str(&format!(
                "{}\t{}\t{}\t{outcome}\n",
                escape(&p.rel),
                p.size,
                p.stamp
            ));
        }
        text
    }

    /// The records by relative path.
    fn by_path(&self) -> HashMap<&str, &PackageRecord> {
        self.packages.iter().map(|p| (p.rel.as_str(), p)).collect()
    }
}

/// What the output depends on besides the packages and the previous index.
fn options_fingerprint(options: &IndexDirOptions) -> String {
    let mut hash = Sha256::new();
    hash.update(options.url.as_bytes());
    hash.update([0, u8::from(options.json)]);
    hex::encode(hash.finalize())
}

/// Where the value of `generated` (a quoted string) sits in rendered output.
fn generated_value(text: &str, json: bool) -> Option<std::ops::Range<usize>> {
    let key = if json {
        "\n  \"generated\": \""
    } else {
        "\ngenerated: \""
    };
    let start = text.find(key)? + key.len() - 1;
    let len = text[start + 1..].find('"')? + 2;
    Some(start..start + len)
}

/// sha256 of the text without the value of `generated`.
fn sha256_without(text: &[u8], value: &std::ops::Range<usize>) -> String {
    let mut hash = Sha256::new();
    hash.update(&text[..value.start]);
    hash.update(&text[value.end..]);
    hex::encode(hash.finalize())
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
        digest: String,
    },
    Skipped(String),
}

/// Indexes `dir` into `dir/index.yaml` with Helm's rules. Entries are Helm's except that a
/// package whose digest matches an entry of the previous `dir/index.yaml` (or the merged
/// index) at the same URL keeps that entry's `created` time.
///
/// With a digest cache, a run that finds every package as the last run recorded it, the
/// options the same, no `--merge` and index.yaml as the last run wrote it only rewrites the
/// `generated` time: the index would come out the same byte for byte otherwise.
pub fn index_directory(
    dir: &Path,
    options: &IndexDirOptions,
) -> Result<IndexDirReport, RepoIndexError> {
    let out_path = dir.join("index.yaml");
    let record = RunRecord::load(options.digest_cache.as_deref());
    let (located, stats): (Vec<Located>, Vec<(u64, u64)>) = find_packages(dir)?
        .into_iter()
        .map(|(path, meta)| {
            let rel = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            let url = package_url(&options.url, &rel);
            let stat = (meta.len(), crate::stamp::file_stamp(&meta));
            (Located { path, rel, url }, stat)
        })
        .unzip();
    let now = crate::clock::now();
    if let Some(report) = rewrite_if_unchanged(&out_path, options, &record, &located, &stats, &now)?
    {
        return Ok(report);
    }

    let mut report = IndexDirReport::default();
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
    let recorded = record.by_path();
    let outcomes: Vec<Result<Outcome, RepoIndexError>> = located
        .par_iter()
        .zip(&stats)
        .map(|(p, stat)| {
            let recorded = recorded.get(p.rel.as_str()).filter(|r| r.matches(*stat));
            index_one(p, recorded.map(|r| &r.outcome), &known, &now)
        })
        .collect();
    let mut index = IndexFile::new(now);
    let mut packages = Vec::with_capacity(located.len());
    for ((p, outcome), &(size, stamp)) in located.iter().zip(outcomes).zip(&stats) {
        let outcome = match outcome? {
            Outcome::Entry {
                version,
                reused,
                hashed,
                digest,
            } => {
                report.indexed += 1;
                report.reused += usize::from(reused);
                report.not_hashed += usize::from(!hashed);
                index
                    .entries
                    .entry(version.metadata.name.clone())
                    .or_default()
                    .push(*version);
                Ok(digest)
            }
            Outcome::Skipped(reason) => {
                report.skipped.push((p.path.clone(), reason.clone()));
                Err(reason)
            }
        };
        packages.push(PackageRecord {
            rel: p.rel.clone(),
            size,
            stamp,
            outcome,
        });
    }
    if let Some(merge) = &merge_index {
        index.merge(merge);
    }
    index.sort_entries();
    let text = render(&index, options.json);
    crate::write_durably(&out_path, text.as_bytes()).map_err(io_error(&out_path))?;
    if let Some(cache) = &options.digest_cache {
        let generated = generated_value(&text, options.json);
        let record = RunRecord {
            fingerprint: options_fingerprint(options),
            index_sha256: generated
                .as_ref()
                .map(|g| sha256_without(text.as_bytes(), g))
                .unwrap_or_default(),
            generated_at: generated.map_or(usize::MAX, |g| g.start),
            packages,
        };
        // The cache only saves work; failing to write it must not fail the command.
        if let Some(parent) = cache.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = crate::write_durably(cache, record.to_text().as_bytes());
    }
    Ok(report)
}

/// The fast path of a warm run: when nothing the index depends on changed since the run
/// that wrote `index.yaml` (the same packages with the same sizes and stamps, the same
/// options, no merge, and index.yaml byte for byte as written apart from `generated`), the
/// full run would produce the same bytes with a new `generated` time, so only that is
/// rewritten. Returns `None` when anything differs.
fn rewrite_if_unchanged(
    out_path: &Path,
    options: &IndexDirOptions,
    record: &RunRecord,
    located: &[Located],
    stats: &[(u64, u64)],
    now: &GoTime,
) -> Result<Option<IndexDirReport>, RepoIndexError> {
    let unchanged = options.merge.is_none()
        && record.fingerprint == options_fingerprint(options)
        && record.packages.len() == located.len()
        && record
            .packages
            .iter()
            .zip(located.iter().zip(stats))
            .all(|(r, (p, stat))| r.rel == p.rel && r.matches(*stat));
    if !unchanged {
        return Ok(None);
    }
    let Ok(previous) = std::fs::read(out_path) else {
        return Ok(None);
    };
    let Some(old) = std::str::from_utf8(&previous)
        .ok()
        .and_then(|text| generated_value(text, options.json))
        .filter(|g| g.start == record.generated_at)
        .filter(|g| sha256_without(&previous, g) == record.index_sha256)
    else {
        return Ok(None);
    };
    // The new value as the renderer writes it, taken from an index with nothing else in it.
    let empty = render(&IndexFile::new(now.clone()), options.json);
    let Some(new) = generated_value(&empty, options.json) else {
        return Ok(None);
    };
    let mut text = Vec::with_capacity(previous.len());
    text.extend_from_slice(&previous[..old.start]);
    text.extend_from_slice(&empty.as_bytes()[new]);
    text.extend_from_slice(&previous[old.end..]);
    crate::write_durably(out_path, &text).map_err(io_error(out_path))?;
    let mut report = IndexDirReport::default();
    for (r, p) in record.packages.iter().zip(located) {
        match &r.outcome {
            Ok(_) => report.indexed += 1,
            Err(reason) => report.skipped.push((p.path.clone(), reason.clone())),
        }
    }
    report.reused = report.indexed;
    report.not_hashed = report.indexed;
    Ok(Some(report))
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
    recorded: Option<&Result<String, String>>,
    known: &HashMap<(String, String), &ChartVersion>,
    now: &GoTime,
) -> Result<Outcome, RepoIndexError> {
    match recorded {
        // Unchanged since it was found not to be a chart: it still is not one.
        Some(Err(reason)) => return Ok(Outcome::Skipped(reason.clone())),
        Some(Ok(digest)) => {
            if let Some(previous) = known.get(&(p.url.clone(), digest.clone())) {
                return Ok(Outcome::Entry {
                    version: Box::new(reuse(previous, &p.url)),
                    reused: true,
                    hashed: false,
                    digest: digest.clone(),
                });
            }
        }
        None => {}
    }
    let bytes = std::fs::read(&p.path).map_err(io_error(&p.path))?;
    let digest = hex::encode(Sha256::digest(&bytes));
    // Judged even when the previous index lists the same bytes: that index may have been
    // written by another tool, or edited.
    let options = LoadOptions::for_index(Limits::default());
    let metadata = match read_package_metadata(&bytes, &p.rel, &options) {
        Ok(m) => m,
        Err(e) => return Ok(Outcome::Skipped(skip_reason(&e))),
    };
    if let Some(previous) = known.get(&(p.url.clone(), digest.clone())) {
        return Ok(Outcome::Entry {
            version: Box::new(reuse(previous, &p.url)),
            reused: true,
            hashed: true,
            digest,
        });
    }
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
        digest,
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

fn skip_reason(error: &chartkit_chart::LoadError) -> String {
    error.to_string()
}
