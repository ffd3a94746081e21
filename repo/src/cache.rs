//! An index.yaml with its compact form kept in chartkit's cache directory.
//!
//! Layout: `<cache root>/index-v1/<sha256 of the index's canonical path>.ckidx`. One file per
//! index path, so two indexes never share a cache file and a changed index replaces its own
//! entry instead of adding one. `index-v1` is the compact format's version: a new format gets
//! a new directory and never misreads an old file.
//!
//! A cache file is used only when it describes the index as it is now. Its header records
//! the index's sha256 and size and a stamp of the file's identity (inode, device,
//! modification and change times; the change time cannot be set by `touch`). When the
//! stamp and size match, the index is not read at all; otherwise it is hashed, and a
//! matching sha256 only refreshes the stamp while anything else rebuilds the cache. A stamp
//! taken while the index's times were too recent to tell two writes apart is not trusted
//! (the "racy" case git knows), so such an index is hashed again next time.
//!
//! Caching only saves time. Without a cache directory, or when it cannot be created or
//! written, the index is parsed and queried in memory and the command still succeeds.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use chartkit_index::compact::{self, CompactError, CompactIndex, ReadAt, SourceStamp};
use sha2::{Digest, Sha256};

/// The cache bucket under chartkit's cache directory, named for the compact format version.
pub const CACHE_BUCKET: &str = "index-v1";

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

/// Where a compact index is read from: its cache file (positional reads, so a query reads
/// only what it needs), or memory when it could not be cached.
pub enum CompactSource {
    File(File),
    Memory(Vec<u8>),
}

/// The former name of [`CompactSource`], when it could only be a file.
pub type FileSource = CompactSource;

impl ReadAt for CompactSource {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), CompactError> {
        use std::os::unix::fs::FileExt;
        match self {
            CompactSource::File(file) => file
                .read_exact_at(buf, offset)
                .map_err(|e| CompactError::Read(e.to_string())),
            CompactSource::Memory(bytes) => bytes.read_at(offset, buf),
        }
    }
}

/// A parsed index ready for queries.
pub struct IndexCache {
    compact: CompactIndex<CompactSource>,
    /// Warnings from parsing the index, when this load had to parse it.
    pub warnings: Vec<String>,
    /// True when this load parsed the index (and wrote the cache, if it could).
    pub rebuilt: bool,
    /// The cache file behind this index, if it is cached.
    pub cache_file: Option<PathBuf>,
    /// Why the index is not cached although a cache directory was given.
    pub not_cached: Option<String>,
}

impl std::ops::Deref for IndexCache {
    type Target = CompactIndex<CompactSource>;
    fn deref(&self) -> &Self::Target {
        &self.compact
    }
}

/// The cache file for the index at `index` under the cache root `cache_root`:
/// `<cache_root>/index-v1/<sha256 of the canonical path>.ckidx`.
pub fn compact_path_for(cache_root: &Path, index: &Path) -> PathBuf {
    let canonical = std::fs::canonicalize(index).unwrap_or_else(|_| index.to_owned());
    let key = hex::encode(Sha256::digest(canonical.as_os_str().as_encoded_bytes()));
    cache_root.join(CACHE_BUCKET).join(format!("{key}.ckidx"))
}

impl IndexCache {
    /// Opens `index_path` for queries through the compact cache under `cache_root`
    /// (chartkit's cache directory), building the compact form when it is missing or
    /// stale. With no cache root, or one that cannot be used, the index is parsed into
    /// memory instead ([`IndexCache::not_cached`] says why); only reading or parsing the
    /// index itself can fail.
    pub fn load_or_build(
        index_path: &Path,
        cache_root: Option<&Path>,
    ) -> Result<IndexCache, CacheError> {
        let io_error = |source| CacheError::Io {
            path: index_path.to_owned(),
            source,
        };
        let mut index_file = File::open(index_path).map_err(io_error)?;
        let meta = index_file.metadata().map_err(io_error)?;
        let (size, file_stamp) = (meta.len(), crate::stamp::file_stamp(&meta));
        // A recorded stamp is never a racy one, except the one [`IndexCache::store`]
        // records for the file it has just renamed into place; equal to this file's
        // identity, it still means the same file.
        let identity = crate::stamp::file_stamp_of_new_file(&meta);
        let cache_file = cache_root.map(|root| compact_path_for(root, index_path));
        if let Some(cache_file) = &cache_file
            && let Some(cached) = open_if(cache_file, |s| {
                s.size == size
                    && s.file_stamp != 0
                    && (s.file_stamp == file_stamp || s.file_stamp == identity)
            })
        {
            return Ok(IndexCache::cached(cached, cache_file));
        }

        let mut bytes = Vec::with_capacity(size as usize);
        index_file.read_to_end(&mut bytes).map_err(io_error)?;
        let sha256: [u8; 32] = Sha256::digest(&bytes).into();
        let stamp = SourceStamp {
            sha256,
            size,
            file_stamp,
        };
        if let Some(cache_file) = &cache_file
            && let Ok(mut existing) = std::fs::read(cache_file)
            && let Ok(recorded) = compact::read_stamp(&existing)
            && recorded.sha256 == sha256
        {
            // Same content, new identity (a touch, a copy, a rewrite) or an identity too
            // recent to trust: keep the compact form, if it is whole, and record the new
            // stamp so a later load can skip hashing.
            compact::restamp(&mut existing, size, file_stamp);
            if let Ok(compact) = CompactIndex::open(CompactSource::Memory(existing)) {
                let restamped = recorded.size != size || recorded.file_stamp != file_stamp;
                let not_cached = match compact.source() {
                    CompactSource::Memory(bytes) if restamped => {
                        write_cache(cache_file, bytes).err()
                    }
                    _ => None,
                };
                let mut loaded = IndexCache::cached(compact, cache_file);
                if not_cached.is_some() {
                    loaded.cache_file = None;
                }
                loaded.not_cached = not_cached;
                return Ok(loaded);
            }
        }

        let draft =
            chartkit_index::parse_index_to_compact(&bytes, &index_path.display().to_string())
                .map_err(|source| CacheError::Index {
                    path: index_path.to_owned(),
                    source,
                })?;
        drop(bytes);
        Self::from_draft(draft, stamp, cache_file, index_path)
    }

    /// Stores a freshly downloaded index: `bytes` are parsed once, and only when they
    /// are a valid index are they written durably to `index_path` and their compact form
    /// to the cache under `cache_root`, so the first query after a download reads the
    /// compact form instead of parsing the YAML again. Invalid bytes write nothing and
    /// leave the previous index in place.
    pub fn store(
        index_path: &Path,
        bytes: &[u8],
        source: &str,
        cache_root: Option<&Path>,
    ) -> Result<IndexCache, CacheError> {
        let io_error = |source| CacheError::Io {
            path: index_path.to_owned(),
            source,
        };
        // Hashing and writing the index (under a temporary name) do not need the parse,
        // so they run beside it; the file is put in place only once the parse accepts it,
        // and an index refused by the parse leaves nothing behind.
        let (draft, written) = std::thread::scope(|scope| {
            let writing = scope.spawn(|| {
                let sha256 = <[u8; 32]>::from(Sha256::digest(bytes));
                if let Some(dir) = index_path.parent() {
                    std::fs::create_dir_all(dir)?;
                }
                let staged = chartkit_durable::stage(index_path, bytes)
                    .map_err(|e| std::io::Error::new(e.source.kind(), e.to_string()))?;
                Ok::<_, std::io::Error>((sha256, staged))
            });
            let draft = chartkit_index::parse_index_to_compact(bytes, source);
            let written = writing
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (draft, written)
        });
        let draft = draft.map_err(|source| CacheError::Index {
            path: index_path.to_owned(),
            source,
        })?;
        let (sha256, staged) = written.map_err(io_error)?;
        staged
            .commit()
            .map_err(|e| io_error(std::io::Error::new(e.source.kind(), e.to_string())))?;
        let meta = std::fs::metadata(index_path).map_err(io_error)?;
        let stamp = SourceStamp {
            sha256,
            size: meta.len(),
            // The file was just put in place by a rename, so it is a new inode whose
            // times are its own: the racy rule, meant for files edited in place, would
            // only make the next load hash what was hashed a moment ago.
            file_stamp: crate::stamp::file_stamp_of_new_file(&meta),
        };
        let cache_file = cache_root.map(|root| compact_path_for(root, index_path));
        Self::from_draft(draft, stamp, cache_file, index_path)
    }

    /// Finishes a freshly read index: its compact form is written to `cache_file` (when
    /// there is one and it can be written) and opened from there, so memory holds only
    /// the chart names; otherwise it is kept in memory.
    fn from_draft(
        mut draft: chartkit_index::CompactDraft,
        stamp: SourceStamp,
        cache_file: Option<PathBuf>,
        index_path: &Path,
    ) -> Result<IndexCache, CacheError> {
        let warnings = std::mem::take(&mut draft.warnings);
        let encoded = draft.finish(stamp);
        let (written, not_cached) = match &cache_file {
            None => (None, None),
            Some(cache_file) => match write_cache(cache_file, &encoded) {
                Ok(()) => (Some(cache_file.clone()), None),
                Err(why) => (None, Some(why)),
            },
        };
        let source = match written.as_deref().map(File::open) {
            Some(Ok(file)) => CompactSource::File(file),
            _ => CompactSource::Memory(encoded),
        };
        let compact = CompactIndex::open(source).map_err(|source| CacheError::Compact {
            path: written.clone().unwrap_or_else(|| index_path.to_owned()),
            source,
        })?;
        Ok(IndexCache {
            compact,
            warnings,
            rebuilt: true,
            cache_file: written,
            not_cached,
        })
    }

    /// An index served from its cache file (or, after a refused rewrite, from memory).
    fn cached(compact: CompactIndex<CompactSource>, file: &Path) -> IndexCache {
        IndexCache {
            compact,
            warnings: Vec::new(),
            rebuilt: false,
            cache_file: Some(file.to_owned()),
            not_cached: None,
        }
    }
}

/// The cache file opened, if it exists, is a compact index and its stamp passes `current`.
fn open_if(
    path: &Path,
    current: impl Fn(&SourceStamp) -> bool,
) -> Option<CompactIndex<CompactSource>> {
    let source = CompactSource::File(File::open(path).ok()?);
    let stamp = compact::read_stamp(&source).ok()?;
    if !current(&stamp) {
        return None;
    }
    CompactIndex::open(source).ok()
}

/// Writes a cache file, creating its directory; the error says why it could not.
fn write_cache(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create the cache directory `{}`: {e}", dir.display()))?;
    }
    // The durable writer's message names the file.
    crate::write_durably(path, bytes).map_err(|e| e.to_string())
}
