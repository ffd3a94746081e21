//! Restores after clean stops, crashes (torn tails), compactions and damage.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use super::*;
use crate::cluster::Cluster;
use crate::settings::Settings;
use crate::store::{Journal, ObjectKey, Store, Write};

fn key(name: &str) -> ObjectKey {
    ObjectKey {
        resource: "/configmaps".into(),
        namespace: "default".into(),
        name: name.into(),
    }
}

/// A cluster on `dir` with its journal running, and what opening found.
fn start(dir: &Path, limits: Limits) -> (Arc<Cluster>, Arc<Wal>, bool, Vec<String>) {
    let opened = open(dir, limits).unwrap();
    let store = Store::restored(opened.rv, opened.objects);
    store.restore_log(opened.changes);
    let cluster = Cluster::new(Settings::default(), store);
    cluster
        .store
        .set_journal(Arc::clone(&opened.wal) as Arc<dyn Journal>);
    opened.wal.start(&cluster);
    (cluster, opened.wal, opened.fresh, opened.warnings)
}

fn put(cluster: &Cluster, name: &str, data: Value) -> u64 {
    cluster
        .store
        .write(&key(name), |_, _| {
            Ok(Write::Put(
                json!({"metadata": {"name": name, "namespace": "default"}, "data": data}),
            ))
        })
        .unwrap()
        .unwrap()
        .rv
}

fn delete(cluster: &Cluster, name: &str) -> u64 {
    cluster
        .store
        .write(&key(name), |_, _| Ok(Write::Delete))
        .unwrap()
        .unwrap()
        .rv
}

/// Waits until `rv` is durable.
fn settle(cluster: &Cluster, rv: u64) {
    let durable = cluster.store.durable_rx();
    while *durable.borrow() < rv {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Every object with its resourceVersion, and the store's revision.
fn state(cluster: &Cluster) -> (u64, Vec<(String, String, Value)>) {
    let (rv, objects) = cluster.store.snapshot();
    let mut out: Vec<_> = objects
        .into_iter()
        .map(|(k, v)| {
            (
                k.name,
                v["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                v["data"].clone(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    (rv, out)
}

fn segments(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    found.sort();
    found
}

#[test]
fn a_stopped_store_comes_back_with_the_same_resource_versions() {
    let dir = tempfile::tempdir().unwrap();
    let (cluster, wal, fresh, _) = start(dir.path(), Limits::default());
    assert!(fresh);
    for i in 0..50 {
        put(&cluster, &format!("cm-{i}"), json!({"i": i}));
    }
    put(&cluster, "cm-3", json!({"i": "changed"}));
    delete(&cluster, "cm-4");
    let before = state(&cluster);
    wal.close();

    let (again, wal, fresh, warnings) = start(dir.path(), Limits::default());
    assert!(!fresh);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(state(&again), before);
    assert_eq!(
        before.0, 53,
        "50 creates, an update and a delete after revision 1"
    );
    // Watches resume from before the restart: the log came back too.
    let since = again.store.changes(50, u64::MAX, |_| true).unwrap();
    let kinds: Vec<_> = since.iter().map(|c| (c.rv, c.event_type())).collect();
    assert_eq!(kinds, [(51, "ADDED"), (52, "MODIFIED"), (53, "DELETED")]);
    assert_eq!(since[2].subject()["data"]["i"], 4);
    assert_eq!(put(&again, "new", json!({})), 54);
    wal.close();
}

#[test]
fn a_torn_last_record_is_skipped_with_a_warning_and_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let (cluster, wal, _, _) = start(dir.path(), Limits::default());
    put(&cluster, "a", json!({}));
    put(&cluster, "b", json!({}));
    wal.close();
    let segment = segments(dir.path()).pop().unwrap();
    let full = std::fs::read(&segment).unwrap();
    // A crash in the middle of writing the last record.
    std::fs::write(&segment, &full[..full.len() - 5]).unwrap();

    let (cluster, wal, _, warnings) = start(dir.path(), Limits::default());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("torn last record"), "{warnings:?}");
    assert!(
        warnings[0].contains(&segment.display().to_string()),
        "{warnings:?}"
    );
    let (rv, objects) = state(&cluster);
    assert_eq!((rv, objects.len()), (2, 1));
    assert_eq!(put(&cluster, "c", json!({})), 3);
    wal.close();

    let (cluster, wal, _, warnings) = start(dir.path(), Limits::default());
    assert!(
        warnings.is_empty(),
        "the torn bytes were cut off: {warnings:?}"
    );
    assert_eq!(state(&cluster).1.len(), 2);
    wal.close();
}

#[test]
fn damage_before_intact_records_is_an_error_not_a_silent_loss() {
    let dir = tempfile::tempdir().unwrap();
    let (cluster, wal, _, _) = start(dir.path(), Limits::default());
    for name in ["a", "b", "c"] {
        put(&cluster, name, json!({"k": "some value"}));
    }
    wal.close();
    let segment = segments(dir.path()).pop().unwrap();
    let mut bytes = std::fs::read(&segment).unwrap();
    bytes[wal::MAGIC.len() + 20] ^= 0x01;
    std::fs::write(&segment, &bytes).unwrap();
    let err = open(dir.path(), Limits::default())
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains(&segment.display().to_string()), "{err}");
    assert!(err.contains("intact records follow"), "{err}");
}

#[test]
fn compaction_writes_a_snapshot_and_drops_the_segments_it_covers() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        compact_after: 4096,
    };
    let (cluster, wal, _, _) = start(dir.path(), limits);
    let filler = "x".repeat(300);
    for i in 0..200 {
        let rv = put(
            &cluster,
            &format!("cm-{}", i % 40),
            json!({"i": i, "f": filler}),
        );
        if i % 10 == 0 {
            // Several batches, so the writer compacts between them.
            settle(&cluster, rv);
        }
    }
    delete(&cluster, "cm-7");
    let before = state(&cluster);
    wal.close();
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let snapshots = names.iter().filter(|n| n.ends_with(".snap")).count();
    assert_eq!(snapshots, 1, "older snapshots are removed: {names:?}");
    assert!(segments(dir.path()).len() <= 2, "{names:?}");
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");

    let (again, wal, fresh, warnings) = start(dir.path(), limits);
    assert!(!fresh && warnings.is_empty());
    assert_eq!(state(&again), before);
    // Watches resume only after the snapshot: what it replaced is gone (410 Expired).
    let err = again.store.changes(2, u64::MAX, |_| true).unwrap_err();
    assert_eq!((err.code, err.reason), (410, "Expired"));
    wal.close();
}

#[test]
fn a_corrupt_snapshot_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let objects = vec![(key("a"), Arc::new(json!({"metadata": {"name": "a"}})))];
    let (path, _) = snapshot::write(dir.path(), 9, &objects).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - 2] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let err = open(dir.path(), Limits::default())
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("corrupt"), "{err}");
}

#[test]
fn a_missing_segment_is_an_error_not_a_gap() {
    let dir = tempfile::tempdir().unwrap();
    let (cluster, wal, _, _) = start(dir.path(), Limits::default());
    put(&cluster, "a", json!({}));
    wal.close();
    // A later segment whose changes do not follow the earlier ones.
    let (mut file, _) = wal::create(dir.path(), 10).unwrap();
    let mut buf = Vec::new();
    record::encode(
        &mut buf,
        10,
        &key("z"),
        Some(&json!({"metadata": {"name": "z"}})),
    );
    std::io::Write::write_all(&mut file, &buf).unwrap();
    let err = open(dir.path(), Limits::default())
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("changes from revision 3 to 9 are missing"),
        "{err}"
    );
}

#[test]
fn two_stores_cannot_share_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let (_cluster, wal, _, _) = start(dir.path(), Limits::default());
    let err = open(dir.path(), Limits::default()).err().unwrap();
    assert!(matches!(err, PersistError::Locked { .. }), "{err}");
    wal.close();
    open(dir.path(), Limits::default()).unwrap();
}
