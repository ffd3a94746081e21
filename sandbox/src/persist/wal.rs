//! The write-ahead log: segments `wal-FIRSTRV.log` (`MAGIC`, then record frames in
//! resourceVersion order), and the thread that appends changes to the newest one.
//!
//! Changes arrive from the store under its lock, in commit order, and only queue there
//! (cloning a change is cloning two `Arc`s). The writer thread takes everything queued,
//! encodes it, writes it with one call and syncs once: a group commit, so while one sync
//! waits for the disk the next batch gathers, and the cost of a sync is shared by every
//! write that arrived meanwhile. Only after the sync does the store learn that the batch
//! is durable, which is when watches see it and writers get their answer.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::thread::JoinHandle;

use super::record::{self, FrameError};
use super::{PersistError, lock::DirLock, snapshot, sync_dir};
use crate::cluster::Cluster;
use crate::store::{Change, Journal};

pub const MAGIC: &[u8; 8] = b"CKWAL\x00\x00\x01";

pub fn file_name(first_rv: u64) -> String {
    format!("wal-{first_rv:020}.log")
}

pub fn parse_name(name: &str) -> Option<u64> {
    name.strip_prefix("wal-")?
        .strip_suffix(".log")?
        .parse()
        .ok()
}

/// A segment read back.
pub struct Segment {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    /// Each record's offset and payload range, in order.
    pub records: Vec<(usize, std::ops::Range<usize>)>,
    /// Where the intact part ends.
    pub valid_len: usize,
    /// Why reading stopped before the end of the file, if it did.
    pub damage: Option<FrameError>,
}

/// Reads a segment up to its first damaged frame. Damage followed by an intact frame is
/// an error: a torn write can only be at the end, so that is a change in the middle of
/// the history gone bad, not one that was never acknowledged.
pub fn read(path: &Path) -> Result<Segment, PersistError> {
    let bytes = std::fs::read(path).map_err(|source| PersistError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let corrupt = |offset: usize, message: String| PersistError::Corrupt {
        path: path.to_path_buf(),
        offset: offset as u64,
        message,
    };
    let head = &bytes[..bytes.len().min(MAGIC.len())];
    if head != &MAGIC[..head.len()] {
        return Err(corrupt(0, "not a sandbox log segment".into()));
    }
    let mut segment = Segment {
        path: path.to_path_buf(),
        records: Vec::new(),
        valid_len: 0,
        damage: None,
        bytes: Vec::new(),
    };
    if bytes.len() < MAGIC.len() {
        // Created but its header never fully reached the disk.
        segment.damage = Some(FrameError::Short);
        return Ok(segment);
    }
    let mut at = MAGIC.len();
    while at < bytes.len() {
        match record::frame(&bytes[at..]) {
            Ok((payload, n)) => {
                let start = at + record::FRAME_HEADER;
                segment.records.push((at, start..start + payload.len()));
                at += n;
            }
            Err(e) => {
                if let FrameError::Checksum = e {
                    let length = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
                    let next = at + record::FRAME_HEADER + length as usize;
                    if next < bytes.len() && record::frame(&bytes[next..]).is_ok() {
                        return Err(corrupt(at, format!("{e}, and intact records follow it")));
                    }
                }
                segment.damage = Some(e);
                break;
            }
        }
    }
    segment.valid_len = at;
    segment.bytes = bytes;
    Ok(segment)
}

/// Creates an empty segment durably (its header synced and its name in the directory).
pub fn create(dir: &Path, first_rv: u64) -> Result<(File, PathBuf), PersistError> {
    let path = dir.join(file_name(first_rv));
    let io = |source| PersistError::Io {
        path: path.clone(),
        source,
    };
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .map_err(io)?;
    file.write_all(MAGIC).map_err(io)?;
    file.sync_all().map_err(io)?;
    sync_dir(dir)?;
    Ok((file, path))
}

/// Opens an existing segment for appending, cutting off a torn tail first.
pub fn reopen(path: &Path, valid_len: usize) -> Result<File, PersistError> {
    let io = |source| PersistError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = OpenOptions::new().write(true).open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    if len != valid_len as u64 {
        file.set_len(valid_len as u64).map_err(io)?;
        file.sync_all().map_err(io)?;
    }
    let mut file = file;
    std::io::Seek::seek(&mut file, std::io::SeekFrom::End(0)).map_err(io)?;
    Ok(file)
}

/// When to compact.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The newest segment is compacted once it holds this many bytes, or as many as the
    /// last snapshot if that is more: so replaying the log at startup never costs much
    /// more than reading the snapshot, and snapshots of a large state are not rewritten
    /// after every few changes.
    pub compact_after: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            compact_after: 16 << 20,
        }
    }
}

#[derive(Default)]
struct Pending {
    changes: Vec<Change>,
    closing: bool,
    failed: bool,
}

struct Shared {
    pending: Mutex<Pending>,
    wake: Condvar,
}

impl Shared {
    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The journal of a data directory: queues changes for the writer thread.
pub struct Wal {
    shared: Arc<Shared>,
    writer: Mutex<Option<Writer>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    compactor: Arc<Mutex<Option<JoinHandle<()>>>>,
}

/// What the writer thread owns.
pub struct Writer {
    pub dir: PathBuf,
    pub file: File,
    pub path: PathBuf,
    pub segment_bytes: u64,
    pub last_rv: u64,
    pub snapshot_bytes: u64,
    pub limits: Limits,
    pub lock: DirLock,
}

impl Wal {
    pub fn new(writer: Writer) -> Arc<Wal> {
        Arc::new(Wal {
            shared: Arc::new(Shared {
                pending: Mutex::new(Pending::default()),
                wake: Condvar::new(),
            }),
            writer: Mutex::new(Some(writer)),
            thread: Mutex::new(None),
            compactor: Arc::new(Mutex::new(None)),
        })
    }

    /// Starts the writer thread for `cluster`'s store (held weakly: the thread ends when
    /// the wal is closed).
    pub fn start(self: &Arc<Self>, cluster: &Arc<Cluster>) {
        let Some(writer) = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return;
        };
        let shared = Arc::clone(&self.shared);
        let cluster = Arc::downgrade(cluster);
        let compactor = Arc::clone(&self.compactor);
        let handle = std::thread::Builder::new()
            .name("sandbox-wal".into())
            .spawn(move || run(writer, &shared, &cluster, &compactor))
            .expect("spawn the log writer thread");
        *self.thread.lock().unwrap_or_else(|e| e.into_inner()) = Some(handle);
    }

    /// Writes what is queued, stops the writer and releases the directory's lock.
    pub fn close(&self) {
        {
            let mut p = self.shared.pending();
            p.closing = true;
        }
        self.shared.wake.notify_all();
        let thread = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(t) = thread {
            let _ = t.join();
        }
        let compactor = self
            .compactor
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(t) = compactor {
            let _ = t.join();
        }
        // A writer never started still holds the lock.
        self.writer.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

impl Journal for Wal {
    fn append(&self, change: &Change) {
        let mut p = self.shared.pending();
        if p.failed || p.closing {
            return;
        }
        p.changes.push(change.clone());
        if p.changes.len() == 1 {
            self.shared.wake.notify_one();
        }
    }
}

fn run(
    mut w: Writer,
    shared: &Shared,
    cluster: &Weak<Cluster>,
    compactor: &Arc<Mutex<Option<JoinHandle<()>>>>,
) {
    let snapshot_bytes = Arc::new(AtomicU64::new(w.snapshot_bytes));
    let mut rotate_at: Option<u64> = None;
    let mut buf = Vec::with_capacity(1 << 16);
    loop {
        if let Err(e) = maybe_compact(&mut w, cluster, compactor, &snapshot_bytes, &mut rotate_at) {
            fail(shared, cluster, &e);
            return;
        }
        let (batch, closing) = {
            let mut p = shared.pending();
            while p.changes.is_empty() && !p.closing {
                p = shared.wake.wait(p).unwrap_or_else(|e| e.into_inner());
            }
            (std::mem::take(&mut p.changes), p.closing)
        };
        if !batch.is_empty() {
            if let Err(e) = write_batch(&mut w, &batch, &mut buf, &mut rotate_at) {
                fail(shared, cluster, &e);
                return;
            }
            if let Some(c) = cluster.upgrade() {
                c.store.mark_durable(w.last_rv);
            }
        }
        if closing {
            return;
        }
    }
}

fn fail(shared: &Shared, cluster: &Weak<Cluster>, e: &PersistError) {
    tracing::error!(error = %e, "the sandbox's log cannot be written; writes now fail");
    {
        let mut p = shared.pending();
        p.failed = true;
        p.changes.clear();
    }
    if let Some(c) = cluster.upgrade() {
        c.store.mark_failed(e.to_string());
    }
}

fn write_batch(
    w: &mut Writer,
    batch: &[Change],
    buf: &mut Vec<u8>,
    rotate_at: &mut Option<u64>,
) -> Result<(), PersistError> {
    buf.clear();
    for change in batch {
        if let Some(r) = *rotate_at
            && change.rv > r
        {
            flush(w, buf)?;
            rotate(w, r)?;
            *rotate_at = None;
        }
        record::encode(buf, change.rv, &change.key, change.object.as_deref());
        w.last_rv = change.rv;
    }
    flush(w, buf)?;
    if let Some(r) = *rotate_at
        && w.last_rv >= r
    {
        rotate(w, r)?;
        *rotate_at = None;
    }
    Ok(())
}

fn flush(w: &mut Writer, buf: &mut Vec<u8>) -> Result<(), PersistError> {
    if buf.is_empty() {
        return Ok(());
    }
    let io = |source| PersistError::Io {
        path: w.path.clone(),
        source,
    };
    w.file.write_all(buf).map_err(io)?;
    // fdatasync: the data and the file's new length, which is all a reader needs.
    w.file.sync_data().map_err(io)?;
    w.segment_bytes += buf.len() as u64;
    buf.clear();
    Ok(())
}

/// Starts a new segment after `rv` (the old one holds every change up to it, synced).
fn rotate(w: &mut Writer, rv: u64) -> Result<(), PersistError> {
    let (file, path) = create(&w.dir, rv + 1)?;
    w.file = file;
    w.path = path;
    w.segment_bytes = MAGIC.len() as u64;
    Ok(())
}

/// Once the segment is over the bound, takes the store's objects at one revision, marks
/// the segment to end there, and writes the snapshot on another thread (the writer goes
/// on committing meanwhile). Segments and snapshots the new snapshot covers go once it is
/// durable.
fn maybe_compact(
    w: &mut Writer,
    cluster: &Weak<Cluster>,
    compactor: &Arc<Mutex<Option<JoinHandle<()>>>>,
    snapshot_bytes: &Arc<AtomicU64>,
    rotate_at: &mut Option<u64>,
) -> Result<(), PersistError> {
    if rotate_at.is_some() {
        return Ok(());
    }
    let bound = w
        .limits
        .compact_after
        .max(snapshot_bytes.load(Ordering::Relaxed));
    if w.segment_bytes < bound {
        return Ok(());
    }
    let mut running = compactor.lock().unwrap_or_else(|e| e.into_inner());
    if running.as_ref().is_some_and(|t| !t.is_finished()) {
        return Ok(());
    }
    if let Some(done) = running.take() {
        let _ = done.join();
    }
    let Some(cluster) = cluster.upgrade() else {
        return Ok(());
    };
    let (rv, objects) = cluster.store.snapshot();
    drop(cluster);
    if w.last_rv >= rv {
        rotate(w, rv)?;
    } else {
        *rotate_at = Some(rv);
    }
    let dir = w.dir.clone();
    let sizes = Arc::clone(snapshot_bytes);
    *running = Some(
        std::thread::Builder::new()
            .name("sandbox-snapshot".into())
            .spawn(move || match snapshot::write(&dir, rv, &objects) {
                Ok((_, size)) => {
                    sizes.store(size, Ordering::Relaxed);
                    drop(objects);
                    if let Err(e) = super::prune(&dir, rv) {
                        tracing::warn!(error = %e, "removing log segments a snapshot covers");
                    }
                }
                Err(e) => tracing::warn!(error = %e, "writing a snapshot; the log keeps growing"),
            })
            .expect("spawn the snapshot thread"),
    );
    Ok(())
}
