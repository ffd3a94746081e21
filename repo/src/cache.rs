//! An index.yaml with its compact form kept in chartkit's cache directory.
//!
//! Layout: `<cache root>/index-v1/<sha256 of the index's canonical path>.ckidx`. One file per
//! index path, so two indexes never share a cache file and a changed index replaces its own
//! entry instead of adding one. Each file's magic names its format's version (now 2, which
//! keeps the entries Helm skips with a warning): a file of another version is never misread,
//! it is rebuilt in place.
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

use std::os::unix::fs::FileExt;

use chartkit_durable::Staged;
use chartkit_index::compact::{self, CompactError, CompactIndex, CompactSink, ReadAt, SourceStamp};
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
    /// What Helm logs when it reads this index: a warning for each entry it skips,
    /// naming the index by what this load read (its file, or a download's URL).
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
            && let Some(loaded) = IndexCache::cached(cached, cache_file, index_path)
        {
            return Ok(loaded);
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
            if let Ok(compact) = CompactIndex::open(CompactSource::Memory(existing))
                && let Ok(skipped) = compact.skipped()
            {
                let restamped = recorded.size != size || recorded.file_stamp != file_stamp;
                let not_cached = match compact.source() {
                    CompactSource::Memory(bytes) if restamped => {
                        write_cache(cache_file, bytes).err()
                    }
                    _ => None,
                };
                let mut loaded = IndexCache {
                    warnings: warnings_of(&skipped, index_path),
                    ..IndexCache::cached_without_warnings(compact, cache_file)
                };
                if not_cached.is_some() {
                    loaded.cache_file = None;
                }
                loaded.not_cached = not_cached;
                return Ok(loaded);
            }
        }

        let source = index_path.display().to_string();
        let (out, not_cached) = CompactOut::open(cache_file.as_deref());
        let draft = parse(&bytes, &source, out, index_path)?;
        Self::from_draft(draft, stamp, not_cached, Some(&bytes), &source, index_path)
    }

    /// Stores a freshly downloaded index: `bytes` are parsed once, and only when they
    /// are a valid index are they written durably to `index_path` and their compact form
    /// to the cache under `cache_root`, so the first query after a download reads the
    /// compact form instead of parsing the YAML again. Invalid bytes write nothing and
    /// leave the previous index in place. ([`IndexDownload`] does the same for an index
    /// that arrives in pieces.)
    pub fn store(
        index_path: &Path,
        bytes: &[u8],
        source: &str,
        cache_root: Option<&Path>,
    ) -> Result<IndexCache, CacheError> {
        let cache_file = cache_root.map(|root| compact_path_for(root, index_path));
        let (out, not_cached) = CompactOut::open(cache_file.as_deref());
        // Hashing and writing the index (under a temporary name) do not need the parse,
        // so they run beside it.
        Self::store_staged(index_path, bytes, source, (out, not_cached), || {
            let sha256 = <[u8; 32]>::from(Sha256::digest(bytes));
            if let Some(dir) = index_path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let staged = chartkit_durable::stage(index_path, bytes).map_err(durable_io)?;
            Ok((sha256, staged))
        })
    }

    /// Parses `bytes` while `staging` (on another thread) gives their sha256 and the
    /// index file staged for `index_path`, synced; the file is put in place only once the
    /// parse accepts the index, and an index refused by the parse leaves nothing behind.
    /// The compact form is written to its staged cache file as the parse goes.
    fn store_staged(
        index_path: &Path,
        bytes: &[u8],
        source: &str,
        (out, not_cached): (CompactOut, Option<String>),
        staging: impl FnOnce() -> std::io::Result<Written> + Send,
    ) -> Result<IndexCache, CacheError> {
        let (draft, written) = std::thread::scope(|scope| {
            let writing = scope.spawn(staging);
            let draft = parse(bytes, source, out, index_path);
            let written = writing
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (draft, written)
        });
        let draft = draft?;
        let stamp = put_in_place(index_path, written)?;
        Self::from_draft(draft, stamp, not_cached, Some(bytes), source, index_path)
    }

    /// Finishes a freshly read index: its compact form, written to the staged cache file
    /// as it was built, is completed and put in place and opened from there, so memory
    /// holds only the chart names; without a cache file it is kept in memory. A cache
    /// file that could not be written is dropped and the index read again into memory,
    /// with [`IndexCache::not_cached`] saying why.
    fn from_draft(
        draft: chartkit_index::CompactDraft<CompactOut>,
        stamp: SourceStamp,
        mut not_cached: Option<String>,
        bytes: Option<&[u8]>,
        source: &str,
        index_path: &Path,
    ) -> Result<IndexCache, CacheError> {
        let warnings = draft.warnings.clone();
        // The index again, for the compact form in memory: the bytes, or its file.
        let in_memory = || match bytes {
            Some(bytes) => in_memory(bytes, source, stamp, index_path),
            None => {
                let bytes = std::fs::read(index_path).map_err(|source| CacheError::Io {
                    path: index_path.to_owned(),
                    source,
                })?;
                in_memory(&bytes, source, stamp, index_path)
            }
        };
        let (compact, written) = match draft.finish(stamp) {
            CompactOut::Memory(encoded) => (CompactSource::Memory(encoded), None),
            CompactOut::File(file) => match file.commit() {
                Ok(path) => match File::open(&path) {
                    Ok(opened) => (CompactSource::File(opened), Some(path)),
                    Err(e) => {
                        not_cached = Some(format!("cannot read `{}`: {e}", path.display()));
                        (in_memory()?, None)
                    }
                },
                Err(why) => {
                    not_cached = Some(why);
                    (in_memory()?, None)
                }
            },
        };
        let compact = CompactIndex::open(compact).map_err(|source| CacheError::Compact {
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
    /// The index at `index_path` read from its cache `file`, with the warnings Helm
    /// logs for the entries it skips whenever it reads the index; `None` when the cache
    /// is damaged there.
    fn cached(
        compact: CompactIndex<CompactSource>,
        file: &Path,
        index_path: &Path,
    ) -> Option<IndexCache> {
        let skipped = compact.skipped().ok()?;
        Some(IndexCache {
            warnings: warnings_of(&skipped, index_path),
            ..IndexCache::cached_without_warnings(compact, file)
        })
    }

    /// [`IndexCache::warnings`] as Helm words them when it reads the same index from
    /// `source` (a repository's URL, for a download the server answered with 304).
    pub fn warnings_when_read_from(&self, source: &str) -> Vec<String> {
        let skipped = self.compact.skipped().unwrap_or_default();
        skipped.iter().map(|s| s.warning(source)).collect()
    }

    fn cached_without_warnings(compact: CompactIndex<CompactSource>, file: &Path) -> IndexCache {
        IndexCache {
            compact,
            warnings: Vec::new(),
            rebuilt: false,
            cache_file: Some(file.to_owned()),
            not_cached: None,
        }
    }
}

/// Helm's warnings for the entries it skips in the index it reads from `index_path`.
fn warnings_of(
    skipped: &[chartkit_index::compact::SkippedEntry],
    index_path: &Path,
) -> Vec<String> {
    let source = index_path.display().to_string();
    skipped.iter().map(|s| s.warning(&source)).collect()
}

/// An index arriving in pieces (a download), read into its compact form as it arrives:
/// each piece goes to a [`chartkit_index::CompactReader`], whose threads parse the index
/// as far as it has come (writing the compact form to its staged cache file), and to a
/// thread that hashes it and writes it to the index's staged file. When the last piece
/// is in, little is left to do, and the index is never held in memory whole.
/// [`IndexDownload::store`] then does what [`IndexCache::store`] does with the whole.
pub struct IndexDownload {
    index_path: PathBuf,
    source: String,
    received: u64,
    /// Pieces on their way to the writer; `None` once the download is over.
    pieces: Option<std::sync::mpsc::SyncSender<Vec<u8>>>,
    /// Piece buffers the writer is done with, to be filled again.
    spare: std::sync::mpsc::Receiver<Vec<u8>>,
    writer: Option<std::thread::JoinHandle<std::io::Result<Written>>>,
    reader: Option<chartkit_index::CompactReader<CompactOut>>,
    /// Why the compact form is not cached, when its file could not be created.
    not_cached: Option<String>,
}

/// What the writer of an [`IndexDownload`] leaves: the sha256 of the bytes it wrote and
/// the staged file holding them.
type Written = ([u8; 32], Staged);

/// Pieces the writer may fall behind by (at most a few megabytes).
const PIECES_IN_FLIGHT: usize = 32;

impl IndexDownload {
    /// Starts the staged file for `index_path` (creating its directory) and the compact
    /// form's under `cache_root`; `expected` is the length announced for the index, if
    /// any, and `source` names it in warnings and errors.
    pub fn begin(
        index_path: &Path,
        expected: Option<u64>,
        source: &str,
        cache_root: Option<&Path>,
    ) -> Result<IndexDownload, CacheError> {
        let io_error = |source| CacheError::Io {
            path: index_path.to_owned(),
            source,
        };
        if let Some(dir) = index_path.parent() {
            std::fs::create_dir_all(dir).map_err(io_error)?;
        }
        let mut staged = Staged::create(index_path).map_err(|e| io_error(durable_io(e)))?;
        let (pieces, received) = std::sync::mpsc::sync_channel::<Vec<u8>>(PIECES_IN_FLIGHT);
        let (done, spare) = std::sync::mpsc::channel();
        let writer = std::thread::Builder::new()
            .name("index-writer".into())
            .spawn(move || {
                use std::io::Write;
                let mut sha256 = Sha256::new();
                for piece in received {
                    sha256.update(&piece);
                    staged
                        .file()
                        .write_all(&piece)
                        .map_err(|e| durable_io(staged.error(e)))?;
                    // The downloader may be gone; the buffer is then just freed.
                    let _ = done.send(piece);
                }
                // The wait for the disk, here while the last pieces are parsed.
                staged.sync().map_err(durable_io)?;
                Ok((sha256.finalize().into(), staged))
            })
            .map_err(io_error)?;
        let cache_file = cache_root.map(|root| compact_path_for(root, index_path));
        let (out, not_cached) = CompactOut::open(cache_file.as_deref());
        Ok(IndexDownload {
            index_path: index_path.to_owned(),
            source: source.to_owned(),
            received: 0,
            pieces: Some(pieces),
            spare,
            writer: Some(writer),
            reader: Some(chartkit_index::CompactReader::new(out, source, expected)),
            not_cached,
        })
    }

    /// Takes the next piece of the index.
    pub fn push(&mut self, piece: &[u8]) -> Result<(), CacheError> {
        self.received += piece.len() as u64;
        let mut copy = self.spare.try_recv().unwrap_or_default();
        copy.clear();
        copy.extend_from_slice(piece);
        let sent = self.pieces.as_ref().is_some_and(|p| p.send(copy).is_ok());
        if !sent {
            // The writer stopped at an error; it says which.
            let error = match self.finish_writing() {
                Err(e) => e,
                Ok(_) => std::io::Error::other("the index writer stopped"),
            };
            return Err(CacheError::Io {
                path: self.index_path.clone(),
                source: error,
            });
        }
        if let Some(reader) = &mut self.reader {
            reader.push(piece);
        }
        Ok(())
    }

    /// Ends the writing: the sha256 of what was written and the staged file, synced.
    fn finish_writing(&mut self) -> std::io::Result<Written> {
        self.pieces = None;
        match self.writer.take() {
            Some(writer) => writer
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            None => Err(std::io::Error::other("the index writer stopped")),
        }
    }

    /// The bytes received so far.
    pub fn len(&self) -> u64 {
        self.received
    }

    pub fn is_empty(&self) -> bool {
        self.received == 0
    }

    /// The whole index has arrived: only when it is a valid index is its file put in
    /// place and its compact form cached, as [`IndexCache::store`] does. An index the
    /// reader could not take in pieces is read whole, from the file just written.
    pub fn store(mut self) -> Result<IndexCache, CacheError> {
        let read = match self.reader.take() {
            Some(reader) => reader.finish(),
            None => unreachable!("the reader is taken once, here"),
        };
        let written = self.finish_writing();
        let not_cached = self.not_cached.take();
        let io_error = |source| CacheError::Io {
            path: self.index_path.clone(),
            source,
        };
        match read {
            Ok(draft) => {
                let stamp = put_in_place(&self.index_path, written)?;
                IndexCache::from_draft(
                    draft,
                    stamp,
                    not_cached,
                    None,
                    &self.source,
                    &self.index_path,
                )
            }
            Err(out) => {
                let (sha256, mut staged) = written.map_err(io_error)?;
                // Read back whole only if it may be read whole; otherwise the staged
                // files go with `staged` and `out`.
                chartkit_index::limits::check_whole_reading(self.received).map_err(|source| {
                    CacheError::Index {
                        path: self.index_path.clone(),
                        source,
                    }
                })?;
                let mut bytes = Vec::with_capacity(self.received.min(1 << 30) as usize);
                {
                    use std::io::{Read, Seek};
                    let mut file = staged.file();
                    file.rewind()
                        .and_then(|()| file.read_to_end(&mut bytes))
                        .map_err(|e| io_error(durable_io(staged.error(e))))?;
                }
                IndexCache::store_staged(
                    &self.index_path,
                    &bytes,
                    &self.source,
                    (out, not_cached),
                    move || Ok((sha256, staged)),
                )
            }
        }
    }
}

impl Drop for IndexDownload {
    /// A download abandoned half way waits for its writer, whose staged file is then
    /// removed, so no temporary file outlives the process; the reader stops its threads
    /// and drops the staged compact form.
    fn drop(&mut self) {
        if self.writer.is_some() {
            let _ = self.finish_writing();
        }
    }
}

/// Puts a staged index file in place; the stamp of the file now at `index_path`.
fn put_in_place(
    index_path: &Path,
    written: std::io::Result<Written>,
) -> Result<SourceStamp, CacheError> {
    let io_error = |source| CacheError::Io {
        path: index_path.to_owned(),
        source,
    };
    let (sha256, staged) = written.map_err(io_error)?;
    staged.commit().map_err(|e| io_error(durable_io(e)))?;
    let meta = std::fs::metadata(index_path).map_err(io_error)?;
    Ok(SourceStamp {
        sha256,
        size: meta.len(),
        // The file was just put in place by a rename, so it is a new inode whose times
        // are its own: the racy rule, meant for files edited in place, would only make
        // the next load hash what was hashed a moment ago.
        file_stamp: crate::stamp::file_stamp_of_new_file(&meta),
    })
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

/// Reads `bytes` into the compact form in `out`.
fn parse(
    bytes: &[u8],
    source: &str,
    out: CompactOut,
    index_path: &Path,
) -> Result<chartkit_index::CompactDraft<CompactOut>, CacheError> {
    chartkit_index::parse_index_to_compact_into(bytes, source, out).map_err(|source| {
        CacheError::Index {
            path: index_path.to_owned(),
            source,
        }
    })
}

/// The compact form of `bytes` in memory, for when its cache file failed.
fn in_memory(
    bytes: &[u8],
    source: &str,
    stamp: SourceStamp,
    index_path: &Path,
) -> Result<CompactSource, CacheError> {
    let draft = chartkit_index::parse_index_to_compact(bytes, source).map_err(|source| {
        CacheError::Index {
            path: index_path.to_owned(),
            source,
        }
    })?;
    Ok(CompactSource::Memory(draft.finish(stamp)))
}

/// An error of chartkit-durable as an `io::Error` naming the path.
fn durable_io(e: chartkit_durable::WriteError) -> std::io::Error {
    std::io::Error::new(e.source.kind(), e.to_string())
}

/// Where a compact form is written as it is built: its cache file, staged under a
/// temporary name until it is complete, or memory.
enum CompactOut {
    File(CacheFileSink),
    Memory(Vec<u8>),
}

impl CompactOut {
    /// The staged cache file for `cache_file`, or memory when there is none or it cannot
    /// be created (and why).
    fn open(cache_file: Option<&Path>) -> (CompactOut, Option<String>) {
        let Some(path) = cache_file else {
            return (CompactOut::Memory(Vec::new()), None);
        };
        if let Some(dir) = path.parent()
            && let Err(e) = std::fs::create_dir_all(dir)
        {
            let why = format!("cannot create the cache directory `{}`: {e}", dir.display());
            return (CompactOut::Memory(Vec::new()), Some(why));
        }
        match Staged::create(path) {
            Ok(staged) => (
                CompactOut::File(CacheFileSink {
                    staged,
                    written: 0,
                    error: None,
                }),
                None,
            ),
            // The durable writer's message names the file.
            Err(e) => (CompactOut::Memory(Vec::new()), Some(e.to_string())),
        }
    }
}

impl CompactSink for CompactOut {
    fn written(&self) -> u64 {
        match self {
            CompactOut::File(file) => file.written(),
            CompactOut::Memory(bytes) => bytes.written(),
        }
    }

    fn append(&mut self, bytes: &[u8]) {
        match self {
            CompactOut::File(file) => file.append(bytes),
            CompactOut::Memory(out) => CompactSink::append(out, bytes),
        }
    }

    fn read_back(&mut self, from: u64) -> Vec<u8> {
        match self {
            CompactOut::File(file) => file.read_back(from),
            CompactOut::Memory(out) => out.read_back(from),
        }
    }

    fn truncate(&mut self, len: u64) {
        match self {
            CompactOut::File(file) => file.truncate(len),
            CompactOut::Memory(out) => CompactSink::truncate(out, len),
        }
    }

    fn overwrite(&mut self, at: u64, bytes: &[u8]) {
        match self {
            CompactOut::File(file) => file.overwrite(at, bytes),
            CompactOut::Memory(out) => out.overwrite(at, bytes),
        }
    }
}

/// A compact form written straight to its staged cache file. The first error is kept and
/// the writes after it are skipped (but counted, so the encoder's offsets stay
/// consistent); [`CacheFileSink::commit`] then refuses the file.
struct CacheFileSink {
    staged: Staged,
    written: u64,
    error: Option<std::io::Error>,
}

impl CacheFileSink {
    /// Syncs the file and puts it in place; its path, or why it could not be.
    fn commit(self) -> Result<PathBuf, String> {
        let path = self.staged.target().to_owned();
        if let Some(e) = self.error {
            return Err(self.staged.error(e).to_string());
        }
        self.staged.commit().map_err(|e| e.to_string())?;
        Ok(path)
    }

    fn keep(&mut self, result: std::io::Result<()>) {
        if let Err(e) = result {
            self.error.get_or_insert(e);
        }
    }
}

impl CompactSink for CacheFileSink {
    fn written(&self) -> u64 {
        self.written
    }

    fn append(&mut self, bytes: &[u8]) {
        if self.error.is_none() {
            let result = self.staged.file().write_all_at(bytes, self.written);
            self.keep(result);
        }
        self.written += bytes.len() as u64;
    }

    fn read_back(&mut self, from: u64) -> Vec<u8> {
        let mut back = vec![0; self.written.saturating_sub(from) as usize];
        if self.error.is_none() {
            let result = self.staged.file().read_exact_at(&mut back, from);
            self.keep(result);
        }
        back
    }

    fn truncate(&mut self, len: u64) {
        if self.error.is_none() {
            let result = self.staged.file().set_len(len);
            self.keep(result);
        }
        self.written = self.written.min(len);
    }

    fn overwrite(&mut self, at: u64, bytes: &[u8]) {
        if self.error.is_none() {
            let result = self.staged.file().write_all_at(bytes, at);
            self.keep(result);
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_file_that_fails_while_written_is_dropped_for_memory() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("index.yaml");
        let text = b"apiVersion: v1\nentries:\n  web:\n  - {name: web, version: 1.0.0}\n";
        std::fs::write(&index, text).unwrap();
        let cache_file = dir.path().join("cache").join("web.ckidx");
        let (mut out, why) = CompactOut::open(Some(&cache_file));
        assert!(why.is_none());
        let CompactOut::File(file) = &mut out else {
            panic!("a cache file can be staged here")
        };
        file.error = Some(std::io::Error::other("disk full"));
        let draft = parse(text, "t", out, &index).unwrap();
        let stamp = SourceStamp {
            sha256: [1; 32],
            size: text.len() as u64,
            file_stamp: 2,
        };
        let loaded = IndexCache::from_draft(draft, stamp, None, Some(text), "t", &index).unwrap();
        assert!(loaded.cache_file.is_none());
        let why = loaded.not_cached.as_deref().unwrap();
        assert!(
            why.contains("disk full") && why.contains("web.ckidx"),
            "{why}"
        );
        assert_eq!(loaded.get("web", "").unwrap().version(), "1.0.0");
        let left = std::fs::read_dir(dir.path().join("cache")).unwrap().count();
        assert_eq!(left, 0, "the staged file is gone");
    }
}
