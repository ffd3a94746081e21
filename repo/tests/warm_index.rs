//! A warm `repo index` (digest cache present, nothing changed) only rewrites `generated`,
//! and gives exactly what a full run gives; anything that changed takes the full run.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use chartkit_repo::{IndexDirOptions, IndexDirReport, index_directory};

struct Repo {
    _temp: tempfile::TempDir,
    dir: PathBuf,
    digests: PathBuf,
}

impl Repo {
    /// Three charts (one in a subdirectory) and a `.tgz` that is not a chart, old enough
    /// for their stamps to be trusted.
    fn new() -> Repo {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("repo");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        for (file, name, version) in [
            ("a-1.0.0.tgz", "a", "1.0.0"),
            ("b-2.0.0.tgz", "b", "2.0.0"),
            ("sub/c-0.1.0.tgz", "c", "0.1.0"),
        ] {
            let bytes = common::chart_package(name, version, "d");
            std::fs::write(dir.join(file), bytes).unwrap();
        }
        std::fs::write(dir.join("junk.tgz"), b"not a chart").unwrap();
        wait_out_racy_window();
        let digests = temp.path().join("cache/digests");
        Repo {
            _temp: temp,
            dir,
            digests,
        }
    }

    fn options(&self, url: &str) -> IndexDirOptions {
        IndexDirOptions {
            url: url.into(),
            digest_cache: Some(self.digests.clone()),
            ..IndexDirOptions::default()
        }
    }

    fn index(&self, options: &IndexDirOptions) -> (IndexDirReport, String) {
        let report = index_directory(&self.dir, options).unwrap();
        (report, self.read())
    }

    fn read(&self) -> String {
        std::fs::read_to_string(self.dir.join("index.yaml")).unwrap()
    }

    fn index_yaml(&self) -> PathBuf {
        self.dir.join("index.yaml")
    }
}

/// Past the window in which a file's times are too recent to trust.
fn wait_out_racy_window() {
    std::thread::sleep(Duration::from_millis(2100));
}

fn generated(text: &str) -> &str {
    text.lines()
        .find(|l| l.starts_with("generated:") || l.starts_with("  \"generated\""))
        .unwrap()
}

fn without_generated(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with("generated:") && !l.starts_with("  \"generated\""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ino(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().ino()
}

#[test]
fn an_unchanged_repository_only_gets_a_new_generated_time() {
    for json in [false, true] {
        let repo = Repo::new();
        let options = IndexDirOptions {
            json,
            ..repo.options("https://charts.example.com")
        };
        let (cold, first) = repo.index(&options);
        assert_eq!((cold.indexed, cold.not_hashed), (3, 0));
        let digests_inode = ino(&repo.digests);

        let (warm, second) = repo.index(&options);
        assert_eq!(
            (warm.indexed, warm.reused, warm.not_hashed),
            (3, 3, 3),
            "json={json}"
        );
        assert_eq!(warm.skipped.len(), 1, "the non-chart is still reported");
        assert!(warm.skipped[0].1.contains("gzip"), "{:?}", warm.skipped);
        assert_ne!(generated(&first), generated(&second), "json={json}");
        assert_eq!(without_generated(&first), without_generated(&second));
        assert_eq!(
            ino(&repo.digests),
            digests_inode,
            "the record is not rewritten"
        );

        // The full run, without the record, gives the same bytes.
        std::fs::remove_file(&repo.digests).unwrap();
        let (_, full) = repo.index(&options);
        assert_eq!(without_generated(&full), without_generated(&second));
        // And the fast path works again from the record the full run wrote.
        let (again, third) = repo.index(&options);
        assert_eq!(again.not_hashed, 3);
        assert_eq!(without_generated(&third), without_generated(&full));
    }
}

#[test]
fn any_change_takes_the_full_run() {
    let repo = Repo::new();
    let options = repo.options("https://charts.example.com");
    repo.index(&options);

    // index.yaml edited by hand: re-rendered, not spliced.
    let edited = format!("{}# a comment\n", repo.read());
    std::fs::write(repo.index_yaml(), &edited).unwrap();
    let (_, text) = repo.index(&options);
    assert!(!text.contains("# a comment"), "{text}");

    // Another base URL.
    let (_, text) = repo.index(&repo.options("https://elsewhere.example.com"));
    assert!(
        text.contains("https://elsewhere.example.com/a-1.0.0.tgz"),
        "{text}"
    );
    assert!(!text.contains("charts.example.com"), "{text}");

    // A package added, one replaced with the same size, one removed.
    let options = repo.options("https://elsewhere.example.com");
    repo.index(&options);
    std::fs::write(
        repo.dir.join("d-3.0.0.tgz"),
        common::chart_package("d", "3.0.0", "d"),
    )
    .unwrap();
    let (report, text) = repo.index(&options);
    assert_eq!((report.indexed, report.not_hashed), (4, 3));
    assert!(text.contains("d-3.0.0.tgz"), "{text}");
    let same_size = common::chart_package("b", "2.0.1", "d");
    assert_eq!(
        same_size.len(),
        std::fs::metadata(repo.dir.join("b-2.0.0.tgz"))
            .unwrap()
            .len() as usize
    );
    std::fs::write(repo.dir.join("b-2.0.0.tgz"), same_size).unwrap();
    let (_, text) = repo.index(&options);
    assert!(text.contains("version: 2.0.1"), "{text}");
    std::fs::remove_file(repo.dir.join("sub/c-0.1.0.tgz")).unwrap();
    let (report, text) = repo.index(&options);
    assert_eq!(report.indexed, 3);
    assert!(!text.contains("c-0.1.0.tgz"), "{text}");

    // With --merge the merged file is read every time.
    let merge = repo.dir.parent().unwrap().join("merge.yaml");
    let merge_options = IndexDirOptions {
        merge: Some(merge.clone()),
        ..options.clone()
    };
    repo.index(&merge_options);
    std::fs::write(
        &merge,
        "apiVersion: v1\nentries:\n  z:\n  - {apiVersion: v2, name: z, version: 9.9.9, urls: [z.tgz]}\n",
    )
    .unwrap();
    let (_, text) = repo.index(&merge_options);
    assert!(text.contains("z.tgz"), "{text}");
}
