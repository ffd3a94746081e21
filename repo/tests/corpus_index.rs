//! `repo index` over the shared corpus gives helm's entries and digests, and helm accepts
//! the result: repo add, search and pull. Skips without the corpus (or helm, for the second
//! half).

mod common;

use std::path::Path;

use chartkit_repo::{IndexDirOptions, index_directory};
use sha2::{Digest, Sha256};

/// Lays the corpus packages out as its README says the golden index was made.
fn corpus_repository(corpus: &Path, into: &Path) {
    for entry in std::fs::read_dir(corpus.join("charts")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "tgz") {
            std::fs::copy(&path, into.join(path.file_name().unwrap())).unwrap();
        }
    }
    for entry in std::fs::read_dir(corpus.join("charts/helm-testdata")).unwrap() {
        let dir = entry.unwrap().path();
        let target = into.join(format!(
            "helm-testdata-{}",
            dir.file_name().unwrap().to_string_lossy()
        ));
        std::fs::create_dir_all(&target).unwrap();
        for package in std::fs::read_dir(&dir).unwrap() {
            let package = package.unwrap().path();
            std::fs::copy(&package, target.join(package.file_name().unwrap())).unwrap();
        }
    }
}

fn without_times(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("created:") && !l.starts_with("generated:"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn corpus_index_matches_helm_and_helm_accepts_it() {
    let Some(corpus) = common::corpus() else {
        eprintln!("skipped: corpus not found (set CHARTKIT_CORPUS)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    corpus_repository(&corpus, &repo);
    // File stamps younger than two seconds are not trusted; let the copies age so the
    // second run below can skip every package.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let options = IndexDirOptions {
        url: "https://charts.example.com".into(),
        digest_cache: Some(dir.path().join("digests")),
        ..IndexDirOptions::default()
    };
    let report = index_directory(&repo, &options).unwrap();
    let ours = std::fs::read_to_string(repo.join("index.yaml")).unwrap();
    let golden =
        std::fs::read_to_string(corpus.join("golden/helm-4.1.4/repo-index/index.yaml")).unwrap();
    assert_eq!(without_times(&ours), without_times(&golden));

    // A second run reads nothing again and keeps every created time.
    let again = index_directory(&repo, &options).unwrap();
    assert_eq!(again.indexed, report.indexed);
    assert_eq!(again.not_hashed, again.indexed, "{again:?}");
    assert_eq!(
        std::fs::read_to_string(repo.join("index.yaml"))
            .unwrap()
            .lines()
            .filter(|l| l.contains("created:"))
            .collect::<Vec<_>>(),
        ours.lines()
            .filter(|l| l.contains("created:"))
            .collect::<Vec<_>>()
    );

    let Some(binary) = common::helm() else {
        eprintln!("skipped the helm half: helm not found");
        return;
    };
    let url = common::serve(&repo);
    index_directory(
        &repo,
        &IndexDirOptions {
            url: url.clone(),
            ..IndexDirOptions::default()
        },
    )
    .unwrap();
    let helm = common::Helm::new(binary, dir.path());
    helm.ok(&["repo", "add", "corpus", &url]);
    let found: serde_json::Value =
        serde_json::from_str(&helm.ok(&["search", "repo", "corpus/", "--devel", "-o", "json"]))
            .unwrap();
    let index = chartkit_index::parse_index(&std::fs::read(repo.join("index.yaml")).unwrap(), "")
        .unwrap()
        .index;
    assert_eq!(found.as_array().unwrap().len(), index.entries.len());
    let downloads = dir.path().join("downloads");
    std::fs::create_dir_all(&downloads).unwrap();
    for (name, version) in [("nginx", "22.1.1"), ("podinfo", "^6"), ("common", "")] {
        let mut args = vec!["pull".to_owned(), format!("corpus/{name}")];
        if !version.is_empty() {
            args.extend(["--version".to_owned(), version.to_owned()]);
        }
        args.extend(["-d".to_owned(), downloads.display().to_string()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        helm.ok(&args);
        let entry = chartkit_index::select::get(&index.entries[name], version).unwrap();
        let file = entry.urls.as_ref().unwrap()[0]
            .rsplit('/')
            .next()
            .unwrap()
            .to_owned();
        let bytes = std::fs::read(downloads.join(&file)).expect("helm pulled the file we chose");
        assert_eq!(hex::encode(Sha256::digest(&bytes)), entry.digest, "{file}");
    }
}
