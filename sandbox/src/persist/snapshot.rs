//! Snapshots: every object at one resourceVersion, so startup reads the state once
//! instead of replaying its whole history, and old log segments can go.
//!
//! `snapshot-RV.snap` is `MAGIC`, a header frame (payload: `rv: u64 LE`, `count: u64 LE`),
//! then `count` record frames. It is written under a temporary name, synced, renamed and
//! the directory synced, so a snapshot that exists is whole: any damage in it is an
//! error, never something to skip.

use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::record::{self, FrameError};
use super::{PersistError, sync_dir};
use crate::store::ObjectKey;

pub const MAGIC: &[u8; 8] = b"CKSNAP\x00\x01";

pub fn file_name(rv: u64) -> String {
    format!("snapshot-{rv:020}.snap")
}

pub fn parse_name(name: &str) -> Option<u64> {
    name.strip_prefix("snapshot-")?
        .strip_suffix(".snap")?
        .parse()
        .ok()
}

/// Writes the snapshot of `objects` at `rv` durably; returns its path and size.
pub fn write(
    dir: &Path,
    rv: u64,
    objects: &[(ObjectKey, Arc<Value>)],
) -> Result<(PathBuf, u64), PersistError> {
    let path = dir.join(file_name(rv));
    let temp = dir.join(format!("{}.tmp", file_name(rv)));
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |source| PersistError::Io { path: p, source }
    };
    let file = File::create(&temp).map_err(io(&temp))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut buf = Vec::with_capacity(1 << 16);
    buf.extend_from_slice(MAGIC);
    header(&mut buf, rv, objects.len() as u64);
    let mut size = 0u64;
    for (key, object) in objects {
        record::encode(&mut buf, rv, key, Some(object));
        if buf.len() >= 1 << 16 {
            out.write_all(&buf).map_err(io(&temp))?;
            size += buf.len() as u64;
            buf.clear();
        }
    }
    out.write_all(&buf).map_err(io(&temp))?;
    size += buf.len() as u64;
    let file = out.into_inner().map_err(|e| io(&temp)(e.into_error()))?;
    file.sync_all().map_err(io(&temp))?;
    drop(file);
    std::fs::rename(&temp, &path).map_err(io(&path))?;
    sync_dir(dir)?;
    Ok((path, size))
}

fn header(out: &mut Vec<u8>, rv: u64, count: u64) {
    let mut payload = [0u8; 16];
    payload[..8].copy_from_slice(&rv.to_le_bytes());
    payload[8..].copy_from_slice(&count.to_le_bytes());
    let length = (payload.len() as u32).to_le_bytes();
    out.extend_from_slice(&length);
    let crc = record::crc32c_append(record::crc32c(&length), &payload);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&payload);
}

/// A snapshot read back.
#[derive(Debug)]
pub struct Loaded {
    pub rv: u64,
    pub objects: Vec<(ObjectKey, Arc<Value>)>,
    pub size: u64,
}

/// Reads a snapshot; any damage is an error naming the file.
pub fn read(path: &Path) -> Result<Loaded, PersistError> {
    let bytes = std::fs::read(path).map_err(|source| PersistError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let corrupt = |offset: usize, message: String| PersistError::Corrupt {
        path: path.to_path_buf(),
        offset: offset as u64,
        message,
    };
    if bytes.get(..MAGIC.len()) != Some(&MAGIC[..]) {
        return Err(corrupt(0, "not a sandbox snapshot".into()));
    }
    let mut at = MAGIC.len();
    let (payload, n) = record::frame(&bytes[at..]).map_err(|e| corrupt(at, e.to_string()))?;
    if payload.len() != 16 {
        return Err(corrupt(at, FrameError::Malformed("header").to_string()));
    }
    let rv = u64::from_le_bytes(payload[..8].try_into().expect("8 bytes"));
    let count = u64::from_le_bytes(payload[8..].try_into().expect("8 bytes"));
    at += n;
    let mut entries = Vec::new();
    while at < bytes.len() {
        let (payload, n) = record::frame(&bytes[at..]).map_err(|e| corrupt(at, e.to_string()))?;
        let r = record::decode(payload).map_err(|e| corrupt(at, e.to_string()))?;
        let Some(object) = r.object else {
            return Err(corrupt(at, "a snapshot holds no deletions".into()));
        };
        entries.push((at, r.key, object));
        at += n;
    }
    if entries.len() as u64 != count {
        return Err(corrupt(
            at,
            format!(
                "it holds {} objects, its header says {count}",
                entries.len()
            ),
        ));
    }
    let objects = super::parse_objects(entries).map_err(|(at, e)| corrupt(at, e))?;
    Ok(Loaded {
        rv,
        objects,
        size: bytes.len() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn objects(n: usize) -> Vec<(ObjectKey, Arc<Value>)> {
        (0..n)
            .map(|i| {
                (
                    ObjectKey {
                        resource: "/configmaps".into(),
                        namespace: "default".into(),
                        name: format!("cm-{i}"),
                    },
                    Arc::new(json!({"metadata": {"name": format!("cm-{i}")}, "data": {"i": i}})),
                )
            })
            .collect()
    }

    #[test]
    fn snapshots_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let (path, size) = write(dir.path(), 42, &objects(600)).unwrap();
        assert_eq!(
            parse_name(path.file_name().unwrap().to_str().unwrap()),
            Some(42)
        );
        let loaded = read(&path).unwrap();
        assert_eq!((loaded.rv, loaded.size), (42, size));
        assert_eq!(loaded.objects.len(), 600);
        assert_eq!(loaded.objects[599].1["data"]["i"], 599);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(leftovers.len(), 1, "only the snapshot is left");
    }

    #[test]
    fn damage_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = write(dir.path(), 7, &objects(3)).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 3;
        bytes[last] ^= 0x20;
        std::fs::write(&path, &bytes).unwrap();
        let err = read(&path).unwrap_err().to_string();
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(err.contains("checksum"), "{err}");

        bytes.truncate(bytes.len() - 40);
        std::fs::write(&path, &bytes).unwrap();
        assert!(read(&path).is_err());
    }
}
