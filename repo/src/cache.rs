//! A downloaded index.yaml with its compact form stored beside it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use chartkit_index::compact::{self, CompactError, CompactIndex, ReadAt, SourceStamp};
use sha2::{Digest, Sha256};

/// Why an index could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("reading `{path}`: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("`{path}`: {source}")]
    Index {
        path: PathBuf,
        source: chartkit_index::IndexError,
    },
    #[error("`{path}`: {source}")]
    Compact { path: PathBuf, source: CompactError },
}

/// Positional reads from the compact file, so only the parts a query needs are read.
pub struct FileSource(File);

impl ReadAt for FileSource {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), CompactError> {
        use std::os::unix::fs::FileExt;
        self.0
            .read_exact_at(buf, offset)
            .map_err(|e| CompactError::Read(e.to_string()))
    }
}

/// A parsed index ready for queries, backed by its compact file.
pub struct IndexCache {
    compact: CompactIndex<FileSource>,
    /// Warnings from parsing the index, when this load had to parse it.
    pub warnings: Vec<String>,
    /// True when this load parsed index.yaml and wrote the compact form.
    pub rebuilt: bool,
}

impl std::ops::Deref for IndexCache {
    type Target = CompactIndex<FileSource>;
    fn deref(&self) -> &Self::Target {
        &self.compact
    }
}

/// The compact file kept beside an index: `index.yaml` → `index.yaml.ckidx-v1`.
pub fn compact_path_for(index: &Path) -> PathBuf {
    let mut name = index.as_os_str().to_owned();
    name.push(".ckidx-v1");
    PathBuf::from(name)
}

fn stat(path: &Path) -> Result<(u64, u64), CacheError> {
    let meta = std::fs::metadata(path).map_err(|source| CacheError::Io {
        path: path.to_owned(),
        source,
    })?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64);
    Ok((meta.len(), mtime))
}

impl IndexCache {
    /// Opens the compact form of `index_path` (kept at `compact_path`, or beside the index),
    /// building it when missing or stale. It is current when its recorded sha256 equals the
    /// index's; the recorded size and mtime let an untouched index skip even the hashing.
    pub fn load_or_build(
        index_path: &Path,
        compact_path: Option<&Path>,
    ) -> Result<IndexCache, CacheError> {
        let compact_path =
            compact_path.map_or_else(|| compact_path_for(index_path), Path::to_owned);
        let (size, mtime) = stat(index_path)?;
        if let Ok(file) = File::open(&compact_path) {
            let source = FileSource(file);
            if let Ok(stamp) = compact::read_stamp(&source)
                && stamp.size == size
                && stamp.mtime_ns == mtime
                && let Ok(compact) = CompactIndex::open(source)
            {
                return Ok(IndexCache {
                    compact,
                    warnings: Vec::new(),
                    rebuilt: false,
                });
            }
        }
        let bytes = std::fs::read(index_path).map_err(|source| CacheError::Io {
            path: index_path.to_owned(),
            source,
        })?;
        let sha256: [u8; 32] = Sha256::digest(&bytes).into();
        if let Ok(mut existing) = std::fs::read(&compact_path)
            && compact::read_stamp(&existing).is_ok_and(|s| s.sha256 == sha256)
        {
            // Same content, new mtime: refresh the stamp and keep the compact form.
            compact::restamp(&mut existing, size, mtime);
            let _ = crate::write_durably(&compact_path, &existing);
            return Self::open(&compact_path, Vec::new(), false);
        }
        let loaded = chartkit_index::parse_index(&bytes, &index_path.display().to_string())
            .map_err(|source| CacheError::Index {
                path: index_path.to_owned(),
                source,
            })?;
        let encoded = compact::encode(
            &loaded.index,
            SourceStamp {
                sha256,
                size,
                mtime_ns: mtime,
            },
        );
        crate::write_durably(&compact_path, &encoded).map_err(|source| CacheError::Io {
            path: compact_path.clone(),
            source,
        })?;
        Self::open(&compact_path, loaded.warnings, true)
    }

    fn open(path: &Path, warnings: Vec<String>, rebuilt: bool) -> Result<IndexCache, CacheError> {
        let file = File::open(path).map_err(|source| CacheError::Io {
            path: path.to_owned(),
            source,
        })?;
        let compact =
            CompactIndex::open(FileSource(file)).map_err(|source| CacheError::Compact {
                path: path.to_owned(),
                source,
            })?;
        Ok(IndexCache {
            compact,
            warnings,
            rebuilt,
        })
    }
}
