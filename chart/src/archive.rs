//! Reading chart archives safely.
//!
//! A chart archive is a gzipped tar with one top directory named after the chart. Anything
//! that could escape or exhaust the reader is refused with the offending entry named:
//! absolute paths, `..`, links, devices, duplicates, and more data or entries than the
//! limits allow.

use std::collections::HashSet;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use bytes::Bytes;
use flate2::read::MultiGzDecoder;

use crate::file::File;
use crate::inflate;

/// Limits on what an archive may expand to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest single file, in bytes (default 5 MiB, as Helm's per-file limit).
    pub max_file_size: u64,
    /// Largest total of all files, in bytes (default 100 MiB, as Helm).
    pub max_total_size: u64,
    /// Most entries of any kind (default 20,000).
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
    /// All files together beyond `max_total_size`.
    #[error("archive expands to more than {limit} bytes (while reading `{name}`)")]
    TooLarge { name: String, limit: u64 },
    /// More than `max_entries` entries.
    #[error("archive has more than {limit} entries")]
    TooManyEntries { limit: usize },
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

/// Reads every file of a chart archive into memory, stripping the top directory and a
/// UTF-8 byte order mark from each file, after checking every entry.
pub fn read_archive(bytes: &[u8], limits: &Limits) -> Result<Vec<ArchiveFile>, ArchiveError> {
    read_entries(bytes, limits).map(|(_, files)| files)
}

/// Reads and checks every entry; also returns the first entry's top directory.
fn read_entries(bytes: &[u8], limits: &Limits) -> Result<(String, Vec<ArchiveFile>), ArchiveError> {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Err(ArchiveError::Corrupt(io::Error::new(
            io::ErrorKind::InvalidData,
            "missing gzip header",
        )));
    }
    // Headers and padding cost at most a few KiB per entry on top of the file data.
    let stream_budget = limits
        .max_total_size
        .saturating_add(limits.max_entries as u64 * 4096)
        .saturating_add(1 << 20);
    if let Some(tar) = inflate::whole(bytes, stream_budget) {
        let tar = Bytes::from(tar);
        let mut archive = tar::Archive::new(io::Cursor::new(&tar[..]));
        let entries = archive.entries_with_seek().map_err(ArchiveError::Corrupt)?;
        return check_entries(entries, Some(&tar), limits);
    }
    // Damaged, multi-member or unusual archives take the streaming path, which reports
    // each problem at the entry where it shows.
    let reader = CappedReader {
        inner: MultiGzDecoder::new(bytes),
        remaining: stream_budget,
    };
    let mut archive = tar::Archive::new(reader);
    let entries = archive.entries().map_err(ArchiveError::Corrupt)?;
    check_entries(entries, None, limits)
}

/// Checks every entry and collects the files. With `tar`, the whole decompressed archive
/// that the entries come from, a file's bytes are a slice of it instead of a copy.
fn check_entries<'a, R: Read + 'a>(
    entries: tar::Entries<'a, R>,
    tar: Option<&Bytes>,
    limits: &Limits,
) -> Result<(String, Vec<ArchiveFile>), ArchiveError> {
    let mut files = Vec::new();
    let mut seen = HashSet::new();
    let mut total: u64 = 0;
    let mut top = String::new();
    for (count, entry) in entries.enumerate() {
        if count >= limits.max_entries {
            return Err(ArchiveError::TooManyEntries {
                limit: limits.max_entries,
            });
        }
        let mut entry = entry.map_err(ArchiveError::Corrupt)?;
        let raw_name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let kind = entry.header().entry_type();
        use tar::EntryType;
        match kind {
            EntryType::Directory => continue,
            EntryType::XGlobalHeader
            | EntryType::XHeader
            | EntryType::GNULongName
            | EntryType::GNULongLink => continue,
            EntryType::Symlink | EntryType::Link => return Err(ArchiveError::Link(raw_name)),
            EntryType::Char | EntryType::Block | EntryType::Fifo => {
                return Err(ArchiveError::SpecialFile(raw_name));
            }
            EntryType::Regular | EntryType::Continuous | EntryType::GNUSparse => {}
            _ => return Err(ArchiveError::SpecialFile(raw_name)),
        }
        let name = chart_relative_path(&raw_name)?;
        if top.is_empty() {
            let separator = if raw_name.contains('\\') { '\\' } else { '/' };
            top = raw_name
                .split(separator)
                .next()
                .unwrap_or_default()
                .to_owned();
        }
        let size = entry.header().size().map_err(ArchiveError::Corrupt)?;
        if size > limits.max_file_size {
            return Err(ArchiveError::FileTooLarge {
                name: raw_name,
                limit: limits.max_file_size,
            });
        }
        if total.saturating_add(size) > limits.max_total_size {
            return Err(ArchiveError::TooLarge {
                name: raw_name,
                limit: limits.max_total_size,
            });
        }
        let mut data = match tar.and_then(|tar| stored_bytes(tar, &entry)) {
            Some(data) => data,
            None => {
                let mut data = Vec::with_capacity(size as usize);
                (&mut entry)
                    .take(limits.max_file_size + 1)
                    .read_to_end(&mut data)
                    .map_err(ArchiveError::Corrupt)?;
                Bytes::from(data)
            }
        };
        if data.len() as u64 > limits.max_file_size {
            return Err(ArchiveError::FileTooLarge {
                name: raw_name,
                limit: limits.max_file_size,
            });
        }
        total += data.len() as u64;
        if !seen.insert(name.clone()) {
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

/// Turns an entry path into a path inside the chart: the top directory is dropped,
/// Windows separators become `/`, and anything that could escape is refused.
fn chart_relative_path(raw: &str) -> Result<String, ArchiveError> {
    // Archives made on Windows may use backslashes throughout.
    let separator = if raw.contains('\\') { '\\' } else { '/' };
    let mut parts = raw.split(separator);
    let top = parts.next().unwrap_or("");
    let rest: Vec<&str> = parts.collect();
    if top.is_empty() && !rest.is_empty() {
        return Err(ArchiveError::AbsolutePath(raw.to_owned()));
    }
    if rest.is_empty() {
        return if top == "Chart.yaml" {
            Err(ArchiveError::ChartYamlAtTop)
        } else {
            Err(ArchiveError::OutsideTopDirectory(raw.to_owned()))
        };
    }
    if top == ".." {
        return Err(ArchiveError::ParentReference(raw.to_owned()));
    }
    let joined = rest.join("/");
    if joined.starts_with('/') || has_drive_letter(&joined) {
        return Err(ArchiveError::AbsolutePath(raw.to_owned()));
    }
    let mut clean: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if clean.pop().is_none() {
                    return Err(ArchiveError::ParentReference(raw.to_owned()));
                }
            }
            other => clean.push(other),
        }
    }
    if joined.split('/').any(|p| p == "..") {
        // Even a `..` that stays inside is refused: no legitimate chart needs one.
        return Err(ArchiveError::ParentReference(raw.to_owned()));
    }
    if clean.is_empty() {
        return Err(ArchiveError::OutsideTopDirectory(raw.to_owned()));
    }
    Ok(clean.join("/"))
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
/// entry first, so a hostile archive writes nothing at all. Returns the chart directory.
pub fn unpack(bytes: &[u8], destination: &Path, limits: &Limits) -> Result<PathBuf, UnpackError> {
    let (top, files) = read_entries(bytes, limits)?;
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
        assert_eq!(
            chart_relative_path("web/templates/a.yaml").unwrap(),
            "templates/a.yaml"
        );
        assert_eq!(
            chart_relative_path("web\\templates\\a.yaml").unwrap(),
            "templates/a.yaml"
        );
        assert_eq!(chart_relative_path("web/./a.yaml").unwrap(), "a.yaml");
        assert!(matches!(
            chart_relative_path("/etc/passwd"),
            Err(ArchiveError::AbsolutePath(_))
        ));
        assert!(matches!(
            chart_relative_path("web//etc/passwd"),
            Err(ArchiveError::AbsolutePath(_))
        ));
        assert!(matches!(
            chart_relative_path("web/../../x"),
            Err(ArchiveError::ParentReference(_))
        ));
        assert!(matches!(
            chart_relative_path("../x"),
            Err(ArchiveError::ParentReference(_))
        ));
        assert!(matches!(
            chart_relative_path("web/a/../b"),
            Err(ArchiveError::ParentReference(_))
        ));
        assert!(matches!(
            chart_relative_path("Chart.yaml"),
            Err(ArchiveError::ChartYamlAtTop)
        ));
        assert!(matches!(
            chart_relative_path("web/c:/x"),
            Err(ArchiveError::AbsolutePath(_))
        ));
    }
}
