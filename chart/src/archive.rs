//! Reading chart archives safely.
//!
//! A chart archive is a gzipped tar with one top directory named after the chart. Every
//! entry is checked before it is used, and every limit is enforced while the archive is
//! being inflated: the reader stops at the first entry that would take it past a limit, so
//! a small upload cannot make it hold more than the limits allow.
//!
//! Two sets of rules share this reader:
//! - [`EntryRules::Helm`] accepts and refuses exactly the entries Helm's archive loader does
//!   (`LoadArchiveFiles`): what `helm repo index` indexes, chartkit indexes, and what it
//!   skips, chartkit skips. Links, devices and fifos are read as the empty files Go's tar
//!   reader makes of them, and a path may repeat.
//! - [`EntryRules::Strict`] adds what no legitimate chart needs: links, special files, repeated
//!   paths, `..` anywhere and absolute paths are refused, naming the entry. Commands that
//!   use a chart's contents (`template`, `show`, `lint`, unpacking) read with these.

use std::collections::HashSet;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use flate2::read::MultiGzDecoder;

use crate::file::File;
use crate::inflate;

/// Limits on what an archive may expand to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest single file, in bytes (default 5 MiB, as Helm's per-file limit).
    pub max_file_size: u64,
    /// The files together must stay below this many bytes (default 100 MiB, as Helm).
    pub max_total_size: u64,
    /// Most entries of any kind (default 20,000; Helm has no such limit, but headers are
    /// not counted in the size, so without it empty entries would cost without bound).
    pub max_entries: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_size: 5 * 1024 * 1024,
            max_total_size: 100 * 1024 * 1024,
            max_entries: 20_000,
        }
    }
}

/// Which entries a reader accepts; see the module documentation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum EntryRules {
    /// Exactly what Helm's archive loader accepts.
    Helm,
    /// Helm's rules plus refusing links, special files, repeated paths and `..`.
    #[default]
    Strict,
}

/// Which files' contents a reader keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Retain {
    /// Every file's contents.
    #[default]
    All,
    /// Only the files the chart loader itself reads (Chart.yaml, Chart.lock, values.yaml,
    /// requirements.yaml and .lock, and subchart archives, at every subchart level); the
    /// other files are listed with no contents. Enough to judge and index a package, and
    /// what is held in memory stays small whatever the archive holds.
    LoaderFiles,
}

/// How to read an archive.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    pub limits: Limits,
    pub rules: EntryRules,
    pub retain: Retain,
    /// With [`Retain::LoaderFiles`], the bound the kept bytes count against.
    pub budget: Option<Arc<RetainBudget>>,
}

/// A bound on the bytes that readers keeping [`Retain::LoaderFiles`] hold at once, shared
/// by every reader given it (a server judging several packages). Kept bytes count until
/// the last copy of them is dropped. A reader that would go past the bound stops with
/// [`ArchiveError::Busy`] rather than wait, since two readers waiting for each other's
/// bytes would wait forever.
#[derive(Debug)]
pub struct RetainBudget {
    limit: u64,
    used: AtomicU64,
}

impl RetainBudget {
    pub fn new(limit: u64) -> Arc<RetainBudget> {
        Arc::new(RetainBudget {
            limit,
            used: AtomicU64::new(0),
        })
    }

    /// Bytes kept now, by every reader.
    pub fn in_use(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    fn reserve(self: &Arc<Self>, amount: u64) -> Result<Reservation, ArchiveError> {
        let before = self.used.fetch_add(amount, Ordering::AcqRel);
        if before.saturating_add(amount) > self.limit {
            self.used.fetch_sub(amount, Ordering::AcqRel);
            return Err(ArchiveError::Busy { limit: self.limit });
        }
        Ok(Reservation {
            budget: Arc::clone(self),
            amount,
        })
    }
}

/// Bytes counted against a [`RetainBudget`] until dropped.
struct Reservation {
    budget: Arc<RetainBudget>,
    amount: u64,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.amount, Ordering::AcqRel);
    }
}

/// Kept data that gives its reservation back when the last copy of it goes.
struct Held {
    data: Vec<u8>,
    _reservation: Reservation,
}

impl AsRef<[u8]> for Held {
    fn as_ref(&self) -> &[u8] {
        &self.data
    }
}

/// Why an archive was refused.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// The bytes are not gzip, or the gzip or tar stream is damaged.
    #[error("not a valid chart archive (gzipped tar): {0}")]
    Corrupt(io::Error),
    /// An entry with an absolute path.
    #[error(
        "archive entry `{0}` has an absolute path; chart archives must hold relative paths only"
    )]
    AbsolutePath(String),
    /// An entry that would land outside the chart directory.
    #[error("archive entry `{0}` points outside the chart directory")]
    ParentReference(String),
    /// An entry whose path is the top directory itself or has no name.
    #[error("archive entry `{0}` is not inside the chart's top directory")]
    OutsideTopDirectory(String),
    /// A path that names a Windows drive (`c:/...`) once cleaned.
    #[error("archive entry `{0}` names a drive; chart archives must hold relative paths only")]
    DrivePath(String),
    /// Symbolic or hard links.
    #[error("archive entry `{0}` is a link; chart archives may contain regular files only")]
    Link(String),
    /// Devices, FIFOs and other special files.
    #[error(
        "archive entry `{0}` is a special file (device, fifo or socket); chart archives may contain regular files only"
    )]
    SpecialFile(String),
    /// The same path twice.
    #[error("archive entry `{0}` appears more than once")]
    Duplicate(String),
    /// One file beyond `max_file_size`.
    #[error("archive entry `{name}` is larger than the {limit}-byte limit per file")]
    FileTooLarge { name: String, limit: u64 },
    /// All files together reaching `max_total_size`.
    #[error("archive expands to more than {limit} bytes (while reading `{name}`)")]
    TooLarge { name: String, limit: u64 },
    /// An entry whose data ends before the size its header gives.
    #[error("archive entry `{0}` is shorter than its header says; the archive is damaged")]
    Truncated(String),
    /// More than `max_entries` entries.
    #[error("archive has more than {limit} entries")]
    TooManyEntries { limit: usize },
    /// Keeping this archive's files would take the shared [`RetainBudget`] past its bound.
    #[error(
        "other packages being checked hold the memory this one needs (more than {limit} bytes together); retry shortly"
    )]
    Busy { limit: u64 },
    /// A Chart.yaml at the top level instead of inside the chart's directory.
    #[error(
        "archive entry `Chart.yaml` is not inside a top directory; a chart archive holds one directory named after the chart"
    )]
    ChartYamlAtTop,
    /// Nothing in the archive.
    #[error("archive contains no files")]
    Empty,
}

/// A file read from an archive: its path inside the chart (top directory removed).
pub type ArchiveFile = File;

/// Archives that declare at most this many bytes decompressed are inflated in one call
/// (libdeflate, two to three times faster than streaming); larger ones stream, entry by
/// entry. So the one-call path can inflate at most this much before the entries are
/// checked, and every larger archive stops at the first entry past a limit.
const WHOLE_INFLATE_MAX: u64 = 16 * 1024 * 1024;

/// Caps the total number of decompressed bytes, so tar headers and padding cannot be used
/// to make the reader work without bound.
struct CappedReader<R> {
    inner: R,
    remaining: u64,
}

impl<R: Read> Read for CappedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.remaining == 0 {
            return Err(io::Error::other(
                "decompressed archive exceeds the size limit",
            ));
        }
        let len = buf
            .len()
            .min(self.remaining.min(usize::MAX as u64) as usize);
        let n = self.inner.read(&mut buf[..len])?;
        self.remaining -= n as u64;
        Ok(n)
    }
}

/// Reads every file of a chart archive, stripping the top directory and a UTF-8 byte
/// order mark from each file, after checking every entry.
pub fn read_archive(bytes: &[u8], options: &ReadOptions) -> Result<Vec<ArchiveFile>, ArchiveError> {
    read_entries(bytes, options).map(|(_, files)| files)
}

/// Reads and checks every entry; also returns the first entry's top directory.
fn read_entries(
    bytes: &[u8],
    options: &ReadOptions,
) -> Result<(String, Vec<ArchiveFile>), ArchiveError> {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Err(ArchiveError::Corrupt(io::Error::new(
            io::ErrorKind::InvalidData,
            "missing gzip header",
        )));
    }
    let limits = &options.limits;
    // Headers and padding cost at most a few KiB per entry on top of the file data.
    let stream_budget = limits
        .max_total_size
        .saturating_add(limits.max_entries as u64 * 4096)
        .saturating_add(1 << 20);
    if let Some(tar) = inflate::whole(bytes, stream_budget.min(WHOLE_INFLATE_MAX)) {
        let tar = Bytes::from(tar);
        let mut archive = tar::Archive::new(io::Cursor::new(&tar[..]));
        let entries = archive.entries_with_seek().map_err(ArchiveError::Corrupt)?;
        return check_entries(entries, Some(&tar), options);
    }
    // Large, damaged, multi-member or unusual archives stream, which stops at the first
    // entry past a limit and reports damage at the entry where it shows. Go's gzip reader
    // (and so Helm) reads every member of a multi-member stream.
    let reader = CappedReader {
        inner: MultiGzDecoder::new(bytes),
        remaining: stream_budget,
    };
    let mut archive = tar::Archive::new(reader);
    let entries = archive.entries().map_err(ArchiveError::Corrupt)?;
    check_entries(entries, None, options)
}

/// What an entry's type makes of it.
enum Kind {
    Directory,
    /// Regular (and sparse, contiguous or unknown) files: their data is read.
    Data,
    /// Links, devices and fifos: Go's tar reader gives them no data.
    HeaderOnly {
        link: bool,
    },
    /// PAX and GNU extension records the tar reader has already applied.
    Extension,
}

fn kind_of(header: &tar::Header, raw_name: &str) -> Kind {
    use tar::EntryType;
    match header.entry_type() {
        EntryType::Directory => Kind::Directory,
        // Legacy archives mark directories with a trailing slash on a type-0 entry, and
        // Go's reader turns those into directories.
        EntryType::Regular if header.as_bytes()[156] == 0 && raw_name.ends_with('/') => {
            Kind::Directory
        }
        EntryType::XGlobalHeader
        | EntryType::XHeader
        | EntryType::GNULongName
        | EntryType::GNULongLink => Kind::Extension,
        EntryType::Symlink | EntryType::Link => Kind::HeaderOnly { link: true },
        EntryType::Char | EntryType::Block | EntryType::Fifo => Kind::HeaderOnly { link: false },
        _ => Kind::Data,
    }
}

/// Checks every entry and collects the files. With `tar`, the whole decompressed archive
/// that the entries come from, a file's bytes are a slice of it instead of a copy.
fn check_entries<'a, R: Read + 'a>(
    entries: tar::Entries<'a, R>,
    tar: Option<&Bytes>,
    options: &ReadOptions,
) -> Result<(String, Vec<ArchiveFile>), ArchiveError> {
    let limits = &options.limits;
    let strict = options.rules == EntryRules::Strict;
    let mut files = Vec::new();
    let mut seen = HashSet::new();
    let mut remaining = limits.max_total_size;
    let mut top = String::new();
    for (count, entry) in entries.enumerate() {
        if count >= limits.max_entries {
            return Err(ArchiveError::TooManyEntries {
                limit: limits.max_entries,
            });
        }
        let mut entry = entry.map_err(ArchiveError::Corrupt)?;
        let raw_name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let header_only = match kind_of(entry.header(), &raw_name) {
            Kind::Directory | Kind::Extension => continue,
            Kind::HeaderOnly { link: true } if strict => {
                return Err(ArchiveError::Link(raw_name));
            }
            Kind::HeaderOnly { link: false } if strict => {
                return Err(ArchiveError::SpecialFile(raw_name));
            }
            Kind::HeaderOnly { .. } => true,
            Kind::Data => false,
        };
        let name = chart_relative_path(&raw_name, options.rules)?;
        if top.is_empty() {
            top = top_directory(&raw_name).to_owned();
        }
        let size = entry.size();
        // Helm's order: the total first, then the file, both from the header's size.
        if size > remaining {
            return Err(ArchiveError::TooLarge {
                name: raw_name,
                limit: limits.max_total_size,
            });
        }
        if size > limits.max_file_size {
            return Err(ArchiveError::FileTooLarge {
                name: raw_name,
                limit: limits.max_file_size,
            });
        }
        let keep = options.retain == Retain::All || read_by_loader(&name);
        let mut data = if header_only {
            // Go reads no data for these; a size in the header is then data that never
            // arrives, which Helm reports as an oversized chart.
            if size > 0 {
                return Err(ArchiveError::Truncated(raw_name));
            }
            Bytes::new()
        } else if !keep {
            if tar.is_none() {
                read_data(&mut entry, size, &raw_name, &mut io::sink())?;
            }
            Bytes::new()
        } else {
            let reservation = match (&options.budget, options.retain) {
                (Some(budget), Retain::LoaderFiles) => Some(budget.reserve(size)?),
                _ => None,
            };
            let whole = tar.and_then(|tar| stored_bytes(tar, &entry));
            match (whole, reservation) {
                (Some(data), None) if options.retain == Retain::All => data,
                // Copied, so the decompressed archive can be freed.
                (Some(data), reservation) => held(data.to_vec(), reservation),
                (None, reservation) => {
                    // Exactly `size` bytes: copying into a growing vector would double its
                    // capacity when it fills, and the memory kept with it.
                    let mut data = vec![0; size as usize];
                    entry.read_exact(&mut data).map_err(|e| match e.kind() {
                        io::ErrorKind::UnexpectedEof => ArchiveError::Truncated(raw_name.clone()),
                        _ => ArchiveError::Corrupt(e),
                    })?;
                    held(data, reservation)
                }
            }
        };
        remaining -= size;
        if remaining == 0 {
            return Err(ArchiveError::TooLarge {
                name: raw_name,
                limit: limits.max_total_size,
            });
        }
        if strict && !seen.insert(name.clone()) {
            return Err(ArchiveError::Duplicate(raw_name));
        }
        if data.starts_with(b"\xEF\xBB\xBF") {
            data = data.slice(3..);
        }
        files.push(File { name, data });
    }
    if files.is_empty() {
        return Err(ArchiveError::Empty);
    }
    Ok((top, files))
}

/// Copies an entry's `size` bytes from the stream into `out`.
fn read_data<R: Read>(
    entry: &mut tar::Entry<'_, R>,
    size: u64,
    raw_name: &str,
    out: &mut impl io::Write,
) -> Result<(), ArchiveError> {
    let read = io::copy(&mut entry.take(size), out).map_err(ArchiveError::Corrupt)?;
    if read < size {
        return Err(ArchiveError::Truncated(raw_name.to_owned()));
    }
    Ok(())
}

fn held(data: Vec<u8>, reservation: Option<Reservation>) -> Bytes {
    match reservation {
        Some(reservation) => Bytes::from_owner(Held {
            data,
            _reservation: reservation,
        }),
        None => Bytes::from(data),
    }
}

/// Whether Helm's loader reads a file's contents (rather than only listing it): the
/// metadata, values and lock files of the chart and of every subchart directory, and
/// subchart archives.
fn read_by_loader(name: &str) -> bool {
    let mut rest = name;
    loop {
        match rest.strip_prefix("charts/") {
            Some(inner) => match inner.split_once('/') {
                Some((_, deeper)) => rest = deeper,
                None => return inner.ends_with(".tgz"),
            },
            None => {
                return matches!(
                    rest,
                    "Chart.yaml"
                        | "Chart.lock"
                        | "values.yaml"
                        | "requirements.yaml"
                        | "requirements.lock"
                );
            }
        }
    }
}

/// A regular entry's bytes as they lie in the decompressed archive. Sparse files are
/// stored in pieces, so they (and anything that does not fit) are read instead.
fn stored_bytes<R: Read>(tar: &Bytes, entry: &tar::Entry<'_, R>) -> Option<Bytes> {
    if entry.header().entry_type() == tar::EntryType::GNUSparse {
        return None;
    }
    let start = usize::try_from(entry.raw_file_position()).ok()?;
    let end = start.checked_add(usize::try_from(entry.size()).ok()?)?;
    (end <= tar.len()).then(|| tar.slice(start..end))
}

/// Archives made on Windows may use backslashes throughout; Helm splits on `\` whenever
/// the name holds one.
fn separator(raw: &str) -> char {
    if raw.contains('\\') { '\\' } else { '/' }
}

fn top_directory(raw: &str) -> &str {
    raw.split(separator(raw)).next().unwrap_or_default()
}

/// Turns an entry path into a path inside the chart as Helm does: the first component is
/// dropped whatever it is, the rest is cleaned (`path.Clean`), and anything that could
/// escape is refused. [`EntryRules::Strict`] also refuses absolute paths and any `..`.
fn chart_relative_path(raw: &str, rules: EntryRules) -> Result<String, ArchiveError> {
    let separator = separator(raw);
    let mut parts = raw.split(separator);
    let first = parts.next().unwrap_or("");
    let rest: Vec<&str> = parts.collect();
    if first == "Chart.yaml" && rest.is_empty() {
        return Err(ArchiveError::ChartYamlAtTop);
    }
    let joined = rest.join("/");
    if joined.starts_with('/') {
        return Err(ArchiveError::AbsolutePath(raw.to_owned()));
    }
    if rules == EntryRules::Strict {
        if first.is_empty() && !rest.is_empty() {
            return Err(ArchiveError::AbsolutePath(raw.to_owned()));
        }
        if first == ".." || rest.contains(&"..") {
            // Even a `..` that stays inside is refused: no legitimate chart needs one.
            return Err(ArchiveError::ParentReference(raw.to_owned()));
        }
    }
    let clean = go_path_clean(&joined);
    if clean == "." {
        return Err(ArchiveError::OutsideTopDirectory(raw.to_owned()));
    }
    if clean.starts_with("..") {
        return Err(ArchiveError::ParentReference(raw.to_owned()));
    }
    if has_drive_letter(&clean) {
        return Err(ArchiveError::DrivePath(raw.to_owned()));
    }
    if first == "Chart.yaml" {
        return Err(ArchiveError::ChartYamlAtTop);
    }
    Ok(clean)
}

/// Go's `path.Clean` for a relative path: empty and `.` components go, `..` removes the
/// component before it (or stays, at the start), and nothing left is `.`.
fn go_path_clean(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if matches!(out.last(), Some(last) if *last != "..") {
                    out.pop();
                } else {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    if out.is_empty() {
        ".".to_owned()
    } else {
        out.join("/")
    }
}

fn has_drive_letter(path: &str) -> bool {
    let b = path.as_bytes();
    b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'/'
}

/// Why unpacking failed.
#[derive(Debug, thiserror::Error)]
pub enum UnpackError {
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    #[error("cannot write `{path}`: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("`{0}` already exists; remove it or choose another destination")]
    Exists(PathBuf),
}

/// Unpacks a chart archive into `destination/<top directory>` after validating every
/// entry first (with [`EntryRules::Strict`]), so a hostile archive writes nothing at all.
/// Returns the chart directory.
pub fn unpack(bytes: &[u8], destination: &Path, limits: &Limits) -> Result<PathBuf, UnpackError> {
    let options = ReadOptions {
        limits: *limits,
        rules: EntryRules::Strict,
        retain: Retain::All,
        budget: None,
    };
    let (top, files) = read_entries(bytes, &options)?;
    let root = destination.join(&top);
    if root.exists() {
        return Err(UnpackError::Exists(root));
    }
    let io_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| UnpackError::Io { path, source }
    };
    for file in &files {
        let target = root.join(&file.name);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io_error(parent))?;
        }
        std::fs::write(&target, &file.data).map_err(io_error(&target))?;
    }
    Ok(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        let strict = |raw| chart_relative_path(raw, EntryRules::Strict);
        assert_eq!(strict("web/templates/a.yaml").unwrap(), "templates/a.yaml");
        assert_eq!(
            strict("web\\templates\\a.yaml").unwrap(),
            "templates/a.yaml"
        );
        assert_eq!(strict("web/./a.yaml").unwrap(), "a.yaml");
        assert_eq!(strict("./Chart.yaml").unwrap(), "Chart.yaml");
        assert!(matches!(
            strict("/etc/passwd"),
            Err(ArchiveError::AbsolutePath(_))
        ));
        assert!(matches!(
            strict("web//etc/passwd"),
            Err(ArchiveError::AbsolutePath(_))
        ));
        assert!(matches!(
            strict("web/../../x"),
            Err(ArchiveError::ParentReference(_))
        ));
        assert!(matches!(
            strict("../x"),
            Err(ArchiveError::ParentReference(_))
        ));
        assert!(matches!(
            strict("web/a/../b"),
            Err(ArchiveError::ParentReference(_))
        ));
        assert!(matches!(
            strict("Chart.yaml"),
            Err(ArchiveError::ChartYamlAtTop)
        ));
        assert!(matches!(
            strict("web/c:/x"),
            Err(ArchiveError::DrivePath(_))
        ));
        assert!(matches!(
            strict("README"),
            Err(ArchiveError::OutsideTopDirectory(_))
        ));
    }

    #[test]
    fn helm_rules_clean_paths_as_go_does() {
        let helm = |raw| chart_relative_path(raw, EntryRules::Helm);
        // The first component is dropped whatever it is, even the empty one before `/`.
        assert_eq!(helm("/tmp/x").unwrap(), "tmp/x");
        assert_eq!(helm("../x").unwrap(), "x");
        assert_eq!(helm("web/a/../b").unwrap(), "b");
        assert!(matches!(
            helm("web/../../x"),
            Err(ArchiveError::ParentReference(_))
        ));
        // A prefix test in Helm: `..x` is refused too.
        assert!(matches!(
            helm("web/..x/y"),
            Err(ArchiveError::ParentReference(_))
        ));
        assert!(matches!(helm("web/c:/x"), Err(ArchiveError::DrivePath(_))));
        assert!(matches!(
            helm("web/a/.."),
            Err(ArchiveError::OutsideTopDirectory(_))
        ));
        assert!(matches!(
            helm("Chart.yaml/x"),
            Err(ArchiveError::ChartYamlAtTop)
        ));
    }

    #[test]
    fn go_path_clean_matches_go() {
        for (input, cleaned) in [
            ("", "."),
            ("a//b/./c/", "a/b/c"),
            ("a/../../b", "../b"),
            ("../../a", "../../a"),
            ("a/b/../..", "."),
        ] {
            assert_eq!(go_path_clean(input), cleaned, "{input}");
        }
    }

    fn tar_gz(files: &[(&str, Vec<u8>)]) -> Vec<u8> {
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ));
        for (name, data) in files {
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            builder.append_data(&mut header, name, &data[..]).unwrap();
        }
        builder.into_inner().unwrap().finish().unwrap()
    }

    #[test]
    fn kept_bytes_count_against_a_shared_budget_until_dropped() {
        let archive = tar_gz(&[
            ("web/Chart.yaml", b"name: web\n".to_vec()),
            ("web/values.yaml", vec![b'#'; 3000]),
            ("web/templates/big.yaml", vec![b'x'; 100_000]),
        ]);
        let budget = RetainBudget::new(5000);
        let options = ReadOptions {
            retain: Retain::LoaderFiles,
            budget: Some(Arc::clone(&budget)),
            ..ReadOptions::default()
        };
        let files = read_archive(&archive, &options).unwrap();
        assert_eq!(budget.in_use(), 3010, "templates are not kept");
        assert!(files[2].data.is_empty());
        // A second reader would go past the bound while the first holds its files.
        assert!(matches!(
            read_archive(&archive, &options),
            Err(ArchiveError::Busy { limit: 5000 })
        ));
        drop(files);
        assert_eq!(budget.in_use(), 0);
        assert!(read_archive(&archive, &options).is_ok());
    }

    #[test]
    fn the_total_must_stay_below_the_limit_as_in_helm() {
        let limits = Limits {
            max_total_size: 100,
            ..Limits::default()
        };
        let read = |sizes: &[usize]| {
            let files: Vec<(String, Vec<u8>)> = sizes
                .iter()
                .enumerate()
                .map(|(i, n)| (format!("web/f{i}"), vec![b'x'; *n]))
                .collect();
            let named: Vec<(&str, Vec<u8>)> =
                files.iter().map(|(n, d)| (n.as_str(), d.clone())).collect();
            read_archive(
                &tar_gz(&named),
                &ReadOptions {
                    limits,
                    ..ReadOptions::default()
                },
            )
        };
        assert!(read(&[50, 49]).is_ok());
        assert!(matches!(
            read(&[50, 50]),
            Err(ArchiveError::TooLarge { .. })
        ));
        assert!(matches!(read(&[101]), Err(ArchiveError::TooLarge { .. })));
    }

    #[test]
    fn the_loader_files_are_kept_at_every_subchart_level() {
        for kept in [
            "Chart.yaml",
            "values.yaml",
            "requirements.lock",
            "charts/db-1.0.0.tgz",
            "charts/db/values.yaml",
            "charts/db/charts/cache/Chart.lock",
            "charts/db/charts/cache-2.0.0.tgz",
        ] {
            assert!(read_by_loader(kept), "{kept}");
        }
        for dropped in [
            "templates/a.yaml",
            "values.schema.json",
            "charts/db/templates/x.yaml",
            "charts/README.md",
            "files/values.yaml",
        ] {
            assert!(!read_by_loader(dropped), "{dropped}");
        }
    }
}
