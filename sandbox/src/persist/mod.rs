//! `--data DIR`: the store kept on disk, crash-safely.
//!
//! Every committed change goes to a write-ahead log and is acknowledged (to the writer
//! and to watches) only once synced, so a crash, even SIGKILL, loses nothing a client
//! was told about. When the log grows past a bound, a snapshot of every object is
//! written and the log starts a new segment; startup reads the newest snapshot and
//! replays the segments after it. The resourceVersions come back exactly as they were:
//! they are in the objects, and the store's revision is the last change's.
//!
//! The directory holds `lock` (see [`lock`]), `snapshot-RV.snap` files (see
//! [`snapshot`]) and `wal-RV.log` segments (see [`wal`]). What the sandbox keeps beside
//! the objects is derived from them after a restore (the types of established CRDs,
//! allocated cluster IPs and node ports), so nothing else is stored.

pub mod lock;
pub mod record;
pub mod snapshot;
pub mod wal;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::store::{Change, ObjectKey};

pub use wal::{Limits, Wal};

/// Why the data directory could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    #[error("`{}`: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("`{}` is corrupt at byte {offset}: {message}", path.display())]
    Corrupt {
        path: PathBuf,
        offset: u64,
        message: String,
    },
    #[error(
        "the data directory `{}` is in use by another sandbox{}",
        path.display(),
        holder.as_ref().map(|p| format!(" (process {p})")).unwrap_or_default()
    )]
    Locked {
        path: PathBuf,
        holder: Option<String>,
    },
}

type Objects = Vec<(ObjectKey, Arc<Value>)>;

/// The state found in a data directory, and its journal, ready to start.
pub struct Opened {
    /// The revision of the last change.
    pub rv: u64,
    pub objects: Vec<(ObjectKey, Arc<Value>)>,
    /// The changes after the snapshot, oldest first, for watches that resume.
    pub changes: Vec<Change>,
    /// Nothing was stored yet: the cluster is to be seeded.
    pub fresh: bool,
    /// What was repaired (a torn last record), for the operator.
    pub warnings: Vec<String>,
    pub wal: Arc<Wal>,
}

/// Opens (creating if needed) and locks `dir`, and reads the state in it.
pub fn open(dir: &Path, limits: Limits) -> Result<Opened, PersistError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| PersistError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let lock = lock::acquire(dir)?;
    let mut snapshots = Vec::new();
    let mut segments = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(rv) = snapshot::parse_name(name) {
            snapshots.push(rv);
        } else if let Some(rv) = wal::parse_name(name) {
            segments.push(rv);
        } else if name.ends_with(".tmp") {
            // A snapshot a crash interrupted before it was put in place.
            let _ = std::fs::remove_file(entry.path());
        }
    }
    snapshots.sort_unstable();
    segments.sort_unstable();

    let mut warnings = Vec::new();
    let (base_rv, snapshot_bytes, mut objects) = match snapshots.last() {
        Some(&rv) => {
            let loaded = snapshot::read(&dir.join(snapshot::file_name(rv)))?;
            if loaded.rv != rv {
                return Err(PersistError::Corrupt {
                    path: dir.join(snapshot::file_name(rv)),
                    offset: 0,
                    message: format!("it holds revision {}, its name says {rv}", loaded.rv),
                });
            }
            let map: HashMap<ObjectKey, Arc<Value>> = loaded.objects.into_iter().collect();
            (rv, loaded.size, map)
        }
        // A new store's revision is 1; its first change is 2.
        None => (1, 0, HashMap::new()),
    };

    let mut rv = base_rv;
    let mut changes = Vec::new();
    let mut last: Option<(u64, usize)> = None;
    for (i, &first) in segments.iter().enumerate() {
        let path = dir.join(wal::file_name(first));
        let segment = wal::read(&path)?;
        let is_last = i + 1 == segments.len();
        if let Some(damage) = &segment.damage {
            if !is_last {
                return Err(PersistError::Corrupt {
                    path,
                    offset: segment.valid_len as u64,
                    message: format!("{damage} in a segment that is not the newest"),
                });
            }
            let lost = segment.bytes.len().saturating_sub(segment.valid_len);
            let warning = format!(
                "{}: skipped a torn last record at byte {} ({lost} bytes: {damage}); \
                 it was never acknowledged",
                path.display(),
                segment.valid_len
            );
            tracing::warn!("{warning}");
            warnings.push(warning);
        }
        replay(&segment, &mut rv, &mut objects, &mut changes)?;
        if is_last {
            last = Some((first, segment.valid_len));
        }
    }

    let fresh = snapshots.is_empty() && rv == 1 && objects.is_empty();
    let (file, path, segment_bytes) = match last {
        // Its header is whole: appends continue after the intact records.
        Some((first, len)) if len >= wal::MAGIC.len() => {
            let path = dir.join(wal::file_name(first));
            (wal::reopen(&path, len)?, path, len as u64)
        }
        // Created, but its header never fully reached the disk: write it again.
        Some((first, _)) => {
            let (file, path) = wal::create(dir, first)?;
            (file, path, wal::MAGIC.len() as u64)
        }
        None => {
            let (file, path) = wal::create(dir, rv + 1)?;
            (file, path, wal::MAGIC.len() as u64)
        }
    };
    let mut objects: Vec<(ObjectKey, Arc<Value>)> = objects.into_iter().collect();
    objects.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let wal = Wal::new(wal::Writer {
        dir: dir.to_path_buf(),
        file,
        path,
        segment_bytes,
        last_rv: rv,
        snapshot_bytes,
        limits,
        lock,
    });
    Ok(Opened {
        rv,
        objects,
        changes,
        fresh,
        warnings,
        wal,
    })
}

/// Applies a segment's records after `rv` to `objects`, checking that they continue the
/// history without a gap.
fn replay(
    segment: &wal::Segment,
    rv: &mut u64,
    objects: &mut HashMap<ObjectKey, Arc<Value>>,
    changes: &mut Vec<Change>,
) -> Result<(), PersistError> {
    let corrupt = |offset: usize, message: String| PersistError::Corrupt {
        path: segment.path.clone(),
        offset: offset as u64,
        message,
    };
    let mut decoded = Vec::new();
    let mut puts = Vec::new();
    let mut previous_rv = 0;
    for (offset, range) in &segment.records {
        let r = record::decode(&segment.bytes[range.clone()])
            .map_err(|e| corrupt(*offset, e.to_string()))?;
        if r.rv <= previous_rv {
            return Err(corrupt(
                *offset,
                format!("revision {} follows {previous_rv}", r.rv),
            ));
        }
        previous_rv = r.rv;
        if r.rv <= *rv {
            // Already in the snapshot.
            continue;
        }
        if r.rv != *rv + 1 + decoded.len() as u64 {
            return Err(corrupt(
                *offset,
                format!(
                    "the changes from revision {} to {} are missing",
                    *rv + 1 + decoded.len() as u64,
                    r.rv - 1
                ),
            ));
        }
        if let Some(object) = r.object {
            puts.push((*offset, r.key.clone(), object));
        }
        decoded.push((*offset, r.rv, r.key, r.object.is_some()));
    }
    let mut parsed = parse_objects(puts)
        .map_err(|(at, e)| corrupt(at, e))?
        .into_iter();
    for (offset, change_rv, key, put) in decoded {
        let object = if put {
            Some(parsed.next().expect("one parsed object per put").1)
        } else {
            None
        };
        let previous = match &object {
            Some(o) => objects.insert(key.clone(), Arc::clone(o)),
            None => objects.remove(&key),
        };
        if object.is_none() && previous.is_none() {
            return Err(corrupt(
                offset,
                format!(
                    "revision {change_rv} deletes {}/{}/{}, which does not exist",
                    key.resource, key.namespace, key.name
                ),
            ));
        }
        changes.push(Change {
            rv: change_rv,
            key,
            object,
            previous,
        });
        *rv = change_rv;
    }
    Ok(())
}

/// Parses objects' JSON, on every core for large states: parsing is nearly all of a
/// restore's time. Fails with the offset of the first bad one.
fn parse_objects(entries: Vec<(usize, ObjectKey, &[u8])>) -> Result<Objects, (usize, String)> {
    let parse = |(at, key, bytes): (usize, ObjectKey, &[u8])| {
        serde_json::from_slice::<Value>(bytes)
            .map(|v| (key, Arc::new(v)))
            .map_err(|e| (at, format!("the object is not JSON: {e}")))
    };
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8);
    if threads < 2 || entries.len() < 512 {
        return entries.into_iter().map(parse).collect();
    }
    let chunk = entries.len().div_ceil(threads);
    let mut chunks = Vec::new();
    let mut rest = entries;
    while rest.len() > chunk {
        let tail = rest.split_off(chunk);
        chunks.push(rest);
        rest = tail;
    }
    chunks.push(rest);
    std::thread::scope(|scope| {
        let workers: Vec<_> = chunks
            .into_iter()
            .map(|c| scope.spawn(move || c.into_iter().map(parse).collect::<Result<Vec<_>, _>>()))
            .collect();
        let mut out = Vec::new();
        for w in workers {
            out.extend(w.join().expect("a parser thread does not panic")?);
        }
        Ok(out)
    })
}

/// Removes the snapshots older than the one at `rv`, and the segments it covers whole.
fn prune(dir: &Path, rv: u64) -> Result<(), PersistError> {
    let io = |source| PersistError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut segments = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(old) = snapshot::parse_name(name)
            && old < rv
        {
            let _ = std::fs::remove_file(entry.path());
        } else if let Some(first) = wal::parse_name(name) {
            segments.push(first);
        }
    }
    segments.sort_unstable();
    // A segment is covered when the next one starts at or before the change after `rv`.
    for pair in segments.windows(2) {
        if pair[1] <= rv + 1 {
            let _ = std::fs::remove_file(dir.join(wal::file_name(pair[0])));
        }
    }
    sync_dir(dir)
}

/// Syncs a directory, so names created or removed in it survive a crash.
fn sync_dir(dir: &Path) -> Result<(), PersistError> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|source| PersistError::Io {
            path: dir.to_path_buf(),
            source,
        })
}

#[cfg(test)]
mod tests;
