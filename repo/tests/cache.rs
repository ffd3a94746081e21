//! The compact index cache lives in chartkit's cache directory, never beside the index,
//! never mixes up two indexes, never serves a changed index, and degrades to parsing when
//! it cannot be written.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chartkit_index::{ChartMetadata, ChartVersion, GoTime, IndexFile};
use chartkit_repo::{CACHE_BUCKET, IndexCache, compact_path_for};

/// An index of one chart `web` at `version`; versions of equal length give indexes of
/// equal size.
fn index_text(version: &str) -> String {
    let mut index = IndexFile::new(GoTime::parse("2024-01-01T00:00:00Z").unwrap());
    index.entries.insert(
        "web".into(),
        vec![ChartVersion {
            metadata: ChartMetadata {
                name: "web".into(),
                version: version.into(),
                api_version: "v2".into(),
                ..ChartMetadata::default()
            },
            urls: Some(vec![format!("web-{version}.tgz")]),
            digest: "0".repeat(64),
            ..ChartVersion::default()
        }],
    );
    chartkit_index::to_yaml(&index)
}

fn newest(cache: &IndexCache) -> String {
    cache.get("web", "").unwrap().metadata.version
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Past the window in which a file's times are too recent to trust.
fn wait_out_racy_window() {
    std::thread::sleep(Duration::from_millis(2100));
}

struct Setup {
    _temp: tempfile::TempDir,
    repo: PathBuf,
    index: PathBuf,
    cache: PathBuf,
}

fn setup() -> Setup {
    let temp = tempfile::tempdir().unwrap();
    let repo = temp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let index = repo.join("index.yaml");
    std::fs::write(&index, index_text("1.0.0")).unwrap();
    let cache = temp.path().join("cache");
    Setup {
        _temp: temp,
        repo,
        index,
        cache,
    }
}

#[test]
fn the_cache_lives_in_the_cache_directory_and_is_reused() {
    let s = setup();
    wait_out_racy_window();
    let first = IndexCache::load_or_build(&s.index, Some(&s.cache)).unwrap();
    assert!(first.rebuilt);
    assert_eq!(newest(&first), "1.0.0");
    let file = compact_path_for(&s.cache, &s.index);
    assert_eq!(first.cache_file.as_deref(), Some(file.as_path()));
    assert!(file.starts_with(s.cache.join(CACHE_BUCKET)), "{file:?}");
    assert_eq!(
        files_in(&s.repo),
        ["index.yaml"],
        "nothing beside the index"
    );
    let inode = std::fs::metadata(&file).unwrap().ino();

    // Unchanged and old enough to trust: the cache file is used as it is.
    let second = IndexCache::load_or_build(&s.index, Some(&s.cache)).unwrap();
    assert!(!second.rebuilt);
    assert_eq!(newest(&second), "1.0.0");
    assert_eq!(
        std::fs::metadata(&file).unwrap().ino(),
        inode,
        "not rewritten"
    );

    // A touch changes the stamp but not the digest: no parse, the stamp is refreshed.
    let f = std::fs::File::options().write(true).open(&s.index).unwrap();
    f.set_modified(std::time::SystemTime::now()).unwrap();
    let touched = IndexCache::load_or_build(&s.index, Some(&s.cache)).unwrap();
    assert!(!touched.rebuilt);
    assert_eq!(newest(&touched), "1.0.0");
}

#[test]
fn a_changed_index_is_never_served_stale() {
    let s = setup();
    wait_out_racy_window();
    let before = IndexCache::load_or_build(&s.index, Some(&s.cache)).unwrap();
    assert_eq!(newest(&before), "1.0.0");
    // Same size, and the old modification time put back: only the content and the change
    // time differ.
    let mtime = std::fs::metadata(&s.index).unwrap().modified().unwrap();
    std::fs::write(&s.index, index_text("2.0.0")).unwrap();
    let f = std::fs::File::options().write(true).open(&s.index).unwrap();
    f.set_modified(mtime).unwrap();
    let after = IndexCache::load_or_build(&s.index, Some(&s.cache)).unwrap();
    assert!(after.rebuilt);
    assert_eq!(newest(&after), "2.0.0");
    // And within the racy window, where times cannot be trusted at all.
    std::fs::write(&s.index, index_text("3.0.0")).unwrap();
    let racy = IndexCache::load_or_build(&s.index, Some(&s.cache)).unwrap();
    assert_eq!(newest(&racy), "3.0.0");
    std::fs::write(&s.index, index_text("4.0.0")).unwrap();
    let again = IndexCache::load_or_build(&s.index, Some(&s.cache)).unwrap();
    assert_eq!(newest(&again), "4.0.0");
}

#[test]
fn two_indexes_never_share_a_cache_file() {
    let s = setup();
    let other_repo = s.repo.with_file_name("other");
    std::fs::create_dir_all(&other_repo).unwrap();
    let other = other_repo.join("index.yaml");
    std::fs::write(&other, index_text("9.0.0")).unwrap();
    let a = IndexCache::load_or_build(&s.index, Some(&s.cache)).unwrap();
    let b = IndexCache::load_or_build(&other, Some(&s.cache)).unwrap();
    assert_ne!(a.cache_file, b.cache_file);
    assert_eq!((newest(&a), newest(&b)), ("1.0.0".into(), "9.0.0".into()));
    assert_eq!(files_in(&s.cache.join(CACHE_BUCKET)).len(), 2);
    // A symbolic link is the same index as its target.
    let link = s.repo.with_file_name("link.yaml");
    std::os::unix::fs::symlink(&s.index, &link).unwrap();
    assert_eq!(
        compact_path_for(&s.cache, &link),
        compact_path_for(&s.cache, &s.index)
    );
}

#[test]
fn an_unusable_cache_directory_degrades_to_parsing() {
    let s = setup();
    // A regular file where the cache directory should be: nothing can be created in it.
    std::fs::write(&s.cache, "not a directory").unwrap();
    for _ in 0..2 {
        let loaded = IndexCache::load_or_build(&s.index, Some(&s.cache)).unwrap();
        assert!(loaded.rebuilt);
        assert!(loaded.cache_file.is_none());
        let why = loaded.not_cached.as_deref().unwrap();
        assert!(why.contains("cannot create the cache directory"), "{why}");
        assert_eq!(newest(&loaded), "1.0.0");
    }
    let uncached = IndexCache::load_or_build(&s.index, None).unwrap();
    assert!(uncached.cache_file.is_none() && uncached.not_cached.is_none());
    assert_eq!(newest(&uncached), "1.0.0");
    assert_eq!(files_in(&s.repo), ["index.yaml"]);
}

#[test]
fn a_damaged_cache_file_is_rebuilt() {
    let s = setup();
    let file = compact_path_for(&s.cache, &s.index);
    IndexCache::load_or_build(&s.index, Some(&s.cache)).unwrap();
    let mut bytes = std::fs::read(&file).unwrap();
    let half = bytes.len() / 2;
    bytes.truncate(half);
    std::fs::write(&file, &bytes).unwrap();
    let loaded = IndexCache::load_or_build(&s.index, Some(&s.cache)).unwrap();
    assert!(loaded.rebuilt);
    assert_eq!(newest(&loaded), "1.0.0");
    std::fs::write(&file, b"garbage").unwrap();
    let loaded = IndexCache::load_or_build(&s.index, Some(&s.cache)).unwrap();
    assert!(loaded.rebuilt);
    assert_eq!(newest(&loaded), "1.0.0");
}

/// The cache file, written as the index is read, holds exactly the compact form of the
/// whole index, whether its charts come in name order (written as they come) or not
/// (held until the end).
#[test]
fn the_cache_file_is_the_compact_form_of_the_whole_index() {
    let s = setup();
    let mut charts: Vec<String> = (0..40).map(|i| format!("chart-{i:02}")).collect();
    for sorted in [true, false] {
        if !sorted {
            charts.reverse();
        }
        let mut text = String::from("apiVersion: v1\nentries:\n");
        for name in &charts {
            text.push_str(&format!("  {name}:\n"));
            for patch in 0..3 {
                text.push_str(&format!(
                    "  - {{apiVersion: v2, name: {name}, version: 1.0.{patch}, urls: [{name}.tgz]}}\n"
                ));
            }
        }
        std::fs::write(&s.index, &text).unwrap();
        let loaded = IndexCache::load_or_build(&s.index, Some(&s.cache)).unwrap();
        assert!(loaded.rebuilt && loaded.not_cached.is_none());
        let written = std::fs::read(loaded.cache_file.as_ref().unwrap()).unwrap();
        let stamp = chartkit_index::compact::read_stamp(&written).unwrap();
        let whole = chartkit_index::parse_index(text.as_bytes(), "x")
            .unwrap()
            .index;
        assert!(
            written == chartkit_index::compact::encode(&whole, stamp),
            "charts sorted: {sorted}"
        );
        assert_eq!(
            loaded.get("chart-07", "").unwrap().metadata.version,
            "1.0.2"
        );
        assert_eq!(
            files_in(&s.cache.join(CACHE_BUCKET)).len(),
            1,
            "no staged file is left"
        );
    }
}
