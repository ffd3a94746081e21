//! An index that arrives in pieces (`IndexDownload`) is stored exactly as the same bytes
//! given whole (`IndexCache::store`): the same index file, compact form, warnings and
//! errors, wherever the pieces are cut.

use std::path::{Path, PathBuf};

use chartkit_index::compact;
use chartkit_repo::{CacheError, IndexCache, IndexDownload, compact_path_for};

/// Two charts out of name order, a skipped entry (a warning), non-ASCII text whose
/// characters a cut can split, and CRLF line ends on one line.
const INDEX: &str = "apiVersion: v1\nentries:\n  web:\n  - apiVersion: v2\n    name: web\n    version: 1.2.3\n    description: \"ä€😀 grüße\"\n    urls: [web-1.2.3.tgz]\n  - {name: web, version: not-a-version}\r\n  db:\n  - {apiVersion: v2, name: db, version: 0.1.0, urls: [db.tgz]}\ngenerated: \"2024-01-01T00:00:00Z\"\n";

/// What storing left behind: the index file, the compact form without its file stamp
/// (which names the file's inode and times), and the warnings; or the error's text.
type Stored = Result<(Vec<u8>, Vec<u8>, Vec<String>), String>;

struct Dirs {
    _temp: tempfile::TempDir,
    index: PathBuf,
    cache: PathBuf,
}

fn dirs() -> Dirs {
    let temp = tempfile::tempdir().unwrap();
    let index = temp.path().join("repository").join("r-index.yaml");
    let cache = temp.path().join("cache");
    Dirs {
        _temp: temp,
        index,
        cache,
    }
}

fn outcome(result: Result<IndexCache, CacheError>, d: &Dirs) -> Stored {
    let loaded = result.map_err(|e| {
        e.to_string()
            .replace(&d.index.display().to_string(), "INDEX")
    })?;
    assert!(loaded.not_cached.is_none(), "{:?}", loaded.not_cached);
    let mut compact = std::fs::read(compact_path_for(&d.cache, &d.index)).unwrap();
    let stamp = compact::read_stamp(&compact).unwrap();
    compact::restamp(&mut compact, stamp.size, 0);
    Ok((std::fs::read(&d.index).unwrap(), compact, loaded.warnings))
}

fn whole(bytes: &[u8]) -> Stored {
    let d = dirs();
    let stored = IndexCache::store(&d.index, bytes, "src", Some(&d.cache));
    let stored = outcome(stored, &d);
    assert_leftovers(&d, stored.is_ok());
    stored
}

fn in_pieces(bytes: &[u8], cuts: &[usize]) -> Stored {
    let d = dirs();
    let mut download =
        IndexDownload::begin(&d.index, Some(bytes.len() as u64), "src", Some(&d.cache)).unwrap();
    let mut from = 0;
    for &cut in cuts.iter().chain([&bytes.len()]) {
        let to = cut.clamp(from, bytes.len());
        download.push(&bytes[from..to]).unwrap();
        from = to;
    }
    assert_eq!(download.len(), bytes.len() as u64);
    let stored = outcome(download.store(), &d);
    assert_leftovers(&d, stored.is_ok());
    stored
}

/// A stored index leaves its file and compact form; a refused one leaves nothing, not
/// even a staged file.
fn assert_leftovers(d: &Dirs, stored: bool) {
    let files =
        |dir: &Path| -> usize { std::fs::read_dir(dir).map_or(0, |entries| entries.count()) };
    let expected = usize::from(stored);
    assert_eq!(files(d.index.parent().unwrap()), expected);
    assert_eq!(files(&d.cache.join(chartkit_repo::CACHE_BUCKET)), expected);
}

/// Cut points from a small deterministic generator: sorted, repeated ones giving empty
/// pieces, some a byte apart.
fn cuts(seed: u64, len: usize, count: usize) -> Vec<usize> {
    let mut state = seed;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    let mut cuts: Vec<usize> = (0..count).map(|_| next() % (len + 1)).collect();
    for i in 0..cuts.len() / 4 {
        cuts.push(cuts[i] + 1);
        cuts.push(cuts[i]);
    }
    cuts.sort_unstable();
    cuts
}

#[test]
fn an_index_cut_anywhere_is_stored_as_the_whole() {
    let bytes = INDEX.as_bytes();
    let expected = whole(bytes);
    let (_, _, warnings) = expected.as_ref().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    // Every single cut, then many at once.
    for cut in 0..=bytes.len() {
        assert_eq!(in_pieces(bytes, &[cut]), expected, "cut at {cut}");
    }
    for seed in 0..40 {
        let cuts = cuts(seed, bytes.len(), 1 + seed as usize % 12);
        assert_eq!(in_pieces(bytes, &cuts), expected, "cuts {cuts:?}");
    }
    // One byte at a time.
    let every: Vec<usize> = (0..bytes.len()).collect();
    assert_eq!(in_pieces(bytes, &every), expected);
}

#[test]
fn a_refused_index_cut_anywhere_is_refused_alike() {
    for text in [
        INDEX.replace("version: 1.2.3", "version: [1"),
        INDEX.replace("apiVersion: v1\n", ""),
        String::new(),
    ] {
        let bytes = text.as_bytes();
        let expected = whole(bytes);
        assert!(expected.is_err(), "{text:?}");
        for seed in 0..8 {
            let cuts = cuts(seed, bytes.len(), 3);
            assert_eq!(
                in_pieces(bytes, &cuts),
                expected,
                "cuts {cuts:?} of {text:?}"
            );
        }
    }
}

#[test]
fn a_large_index_in_network_sized_pieces_is_stored_as_the_whole() {
    let mut text = String::from("apiVersion: v1\nentries:\n");
    for chart in 0..60 {
        text.push_str(&format!("  chart-{chart:03}:\n"));
        for patch in 0..25 {
            text.push_str(&format!(
                "  - apiVersion: v2\n    name: chart-{chart:03}\n    version: 1.0.{patch}\n    description: chart {chart} — patch {patch}\n    urls:\n    - https://example.com/chart-{chart:03}-1.0.{patch}.tgz\n"
            ));
        }
    }
    let bytes = text.as_bytes();
    let expected = whole(bytes);
    assert!(expected.is_ok());
    for piece in [1_000, 16_384, 65_536] {
        let cuts: Vec<usize> = (piece..bytes.len()).step_by(piece).collect();
        assert_eq!(in_pieces(bytes, &cuts), expected, "pieces of {piece}");
    }
}

#[test]
fn an_abandoned_download_leaves_nothing_behind() {
    let d = dirs();
    std::fs::create_dir_all(d.index.parent().unwrap()).unwrap();
    std::fs::write(&d.index, "old").unwrap();
    let mut download = IndexDownload::begin(&d.index, None, "src", Some(&d.cache)).unwrap();
    download.push(&INDEX.as_bytes()[..100]).unwrap();
    drop(download);
    let left: Vec<_> = std::fs::read_dir(d.index.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, [d.index.file_name().unwrap()]);
    assert_eq!(std::fs::read(&d.index).unwrap(), b"old");
    // Nor is the compact form begun beside it left behind.
    let cached = std::fs::read_dir(d.cache.join(chartkit_repo::CACHE_BUCKET))
        .map_or(0, |entries| entries.count());
    assert_eq!(cached, 0);
}
