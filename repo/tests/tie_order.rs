//! Versions of equal precedence (`1.0.0+a`, `1.0.0+b`, `v1.0.0`, `1.0`, `1.0.0`): which
//! entry `helm pull --version X` downloads and `helm show chart --version X` shows, against
//! chartkit's choice, for many orders of the same versions in index.yaml, served from
//! 127.0.0.1. Skips (with a message) without helm.
//!
//! Where helm is deterministic and where it is not:
//!
//! - `helm pull`, `helm show`, `helm install` (`IndexFile.Get`) are deterministic. Loading
//!   sorts each chart's versions with Go's `sort.Sort`, which is not stable but has no
//!   randomness: lists of up to 12 are insertion-sorted, so ties keep their file order;
//!   longer lists go through pattern-defeating quicksort, which moves ties in ways that
//!   depend only on the list. `Get` then takes the first entry whose text equals the request,
//!   else the first that satisfies it as a range. chartkit ports the sort swap for swap
//!   (`gosort`), so it picks the same entry, byte for byte the same download.
//! - `helm search repo` is not deterministic among ties. Its results come out of a Go map
//!   (random iteration order) and are then sorted by precedence with the same unstable sort,
//!   so equal-precedence versions are listed, and with `--version` chosen, in an order that
//!   changes from run to run. Entries with the same version text collapse to one (the map
//!   is keyed by it). Only the set of versions and their precedence order are comparable,
//!   and that is what is checked.

mod common;

use std::path::Path;

use chartkit_index::{ChartMetadata, ChartVersion, GoTime, IndexFile, select};
use chartkit_repo::IndexCache;
use chartkit_version::Version;
use sha2::{Digest, Sha256};

const TIES: &[&str] = &["1.0.0+a", "1.0.0+b", "v1.0.0", "1.0", "1.0.0"];

/// Versions mixed into the longer lists around the ties.
const OTHERS: &[&str] = &["0.9.0", "1.1.0", "2.0.0", "1.0.0+c", "v1.0", "0.1"];

const REQUESTS: &[&str] = &[
    "1.0.0",
    "1.0.0+a",
    "1.0.0+b",
    "1.0.0+c",
    "v1.0.0",
    "1.0",
    "v1.0",
    "",
    "^1",
    "~1.0",
    ">=1.0.0",
    "1",
    "<1.1",
    "1.0.0+zzz",
];

/// A small deterministic generator, so every run tests the same orders.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// Chart name to its versions in index file order: the ties in the order given and in
/// shuffled orders (insertion-sort lengths), and longer mixed lists that go through Go's
/// quicksort (more than 12 entries, and more than 50 for its ninther pivot).
fn charts() -> Vec<(String, Vec<&'static str>)> {
    let mut rng = Lcg(2024);
    let mut charts = vec![("tie00".to_owned(), TIES.to_vec())];
    for n in 1..10 {
        let mut order = TIES.to_vec();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        charts.push((format!("tie{n:02}"), order));
    }
    for len in [13, 24, 51, 80] {
        let pool: Vec<&str> = TIES.iter().chain(OTHERS).copied().collect();
        let list = (0..len).map(|_| pool[rng.below(pool.len())]).collect();
        charts.push((format!("mix{len:02}"), list));
    }
    charts
}

/// Writes the packages and an unsorted index.yaml (file order as designed) into `repo`.
fn build_repository(repo: &Path) -> IndexFile {
    let created = GoTime::parse("2024-01-01T00:00:00Z");
    let mut index = IndexFile::new(created.clone().unwrap());
    for (name, versions) in charts() {
        for (entry, version) in versions.into_iter().enumerate() {
            let file = format!("{name}-entry-{entry}.tgz");
            // The description names the entry, so `helm show chart` reveals the choice.
            let bytes = common::chart_package(&name, version, &format!("{name} entry {entry}"));
            std::fs::write(repo.join(&file), &bytes).unwrap();
            index
                .entries
                .entry(name.clone())
                .or_default()
                .push(ChartVersion {
                    metadata: ChartMetadata {
                        name: name.clone(),
                        version: version.to_owned(),
                        api_version: "v2".to_owned(),
                        description: format!("{name} entry {entry}"),
                        ..ChartMetadata::default()
                    },
                    urls: Some(vec![file]),
                    created: created.clone(),
                    digest: hex::encode(Sha256::digest(&bytes)),
                    ..ChartVersion::default()
                });
        }
    }
    std::fs::write(repo.join("index.yaml"), chartkit_index::to_yaml(&index)).unwrap();
    index
}

/// The entry helm chose, by the file `helm pull` downloaded and the description
/// `helm show chart` printed; `None` when helm found no version.
fn helm_choice(
    helm: &common::Helm,
    scratch: &Path,
    name: &str,
    request: &str,
) -> (Option<String>, Option<String>) {
    let dest = scratch.join(format!("{name}-{}", hex::encode(request)));
    std::fs::create_dir_all(&dest).unwrap();
    let chart = format!("ties/{name}");
    let mut pull = vec!["pull", &chart, "-d", dest.to_str().unwrap()];
    let mut show = vec!["show", "chart", &chart];
    if !request.is_empty() {
        pull.extend(["--version", request]);
        show.extend(["--version", request]);
    }
    let pulled = helm.run(&pull).status.success().then(|| {
        let files: Vec<String> = std::fs::read_dir(&dest)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(files.len(), 1, "helm pull wrote {files:?}");
        files[0].clone()
    });
    let shown = helm.run(&show);
    let shown = shown.status.success().then(|| {
        String::from_utf8_lossy(&shown.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("description: "))
            .unwrap()
            .to_owned()
    });
    (pulled, shown)
}

#[test]
fn pull_and_show_choose_the_same_tied_entry_as_helm() {
    let Some(binary) = common::helm() else {
        eprintln!(
            "skipped: helm not found (run /work/shared/tools/get-peers or set CHARTKIT_HELM)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    build_repository(&repo);
    let loaded = chartkit_index::parse_index(
        &std::fs::read(repo.join("index.yaml")).unwrap(),
        "index.yaml",
    )
    .unwrap()
    .index;
    let cached = IndexCache::load_or_build(&repo.join("index.yaml"), None).unwrap();
    let url = common::serve(&repo);
    let helm = common::Helm::new(binary, dir.path());
    helm.ok(&["repo", "add", "ties", &url]);
    let scratch = dir.path().join("pulls");

    let cases: Vec<(String, &str)> = loaded
        .entries
        .keys()
        .flat_map(|name| REQUESTS.iter().map(move |r| (name.clone(), *r)))
        .collect();
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = cases
            .chunks(cases.len().div_ceil(2))
            .map(|chunk| {
                let (helm, scratch) = (&helm, &scratch);
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|(name, r)| (name, *r, helm_choice(helm, scratch, name, r)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });

    let mut disagreements = Vec::new();
    let mut tied_choices = 0;
    for (name, request, (pulled, shown)) in &results {
        let ours = select::get(&loaded.entries[*name], request).ok();
        let ours_file = ours.map(|v| v.urls.as_ref().unwrap()[0].clone());
        let ours_description = ours.map(|v| v.metadata.description.clone());
        let compact = cached
            .get(name, request)
            .ok()
            .map(|v| v.urls.unwrap()[0].clone());
        if (&ours_file, &ours_description) != (pulled, shown) || compact != ours_file {
            disagreements.push(format!(
                "{name} --version {request:?}: chartkit {ours_file:?} (compact {compact:?}), helm pull {pulled:?}, helm show {shown:?}"
            ));
        }
        let tie = Version::parse("1.0.0").unwrap();
        if ours.is_some_and(|v| v.parsed_version() == Some(tie.clone())) {
            tied_choices += 1;
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} of {} choices differ:\n{}",
        disagreements.len(),
        results.len(),
        disagreements.join("\n")
    );
    assert!(tied_choices > 100, "only {tied_choices} choices among ties");
    eprintln!(
        "{} pull and show choices agree with helm ({tied_choices} among ties)",
        results.len()
    );
}

/// `helm search repo --versions`: the same versions (texts collapsed as helm collapses
/// them) in the same precedence order; the order within a tie is random in helm.
#[test]
fn search_lists_the_same_versions_in_precedence_order() {
    let Some(binary) = common::helm() else {
        eprintln!(
            "skipped: helm not found (run /work/shared/tools/get-peers or set CHARTKIT_HELM)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    build_repository(&repo);
    let loaded = chartkit_index::parse_index(
        &std::fs::read(repo.join("index.yaml")).unwrap(),
        "index.yaml",
    )
    .unwrap()
    .index;
    let url = common::serve(&repo);
    let helm = common::Helm::new(binary, dir.path());
    helm.ok(&["repo", "add", "ties", &url]);
    for name in ["tie00", "tie03", "mix13", "mix80"] {
        let rows: serde_json::Value = serde_json::from_str(&helm.ok(&[
            "search",
            "repo",
            &format!("ties/{name}"),
            "--versions",
            "-o",
            "json",
        ]))
        .unwrap();
        let theirs: Vec<String> = rows
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["name"] == format!("ties/{name}"))
            .map(|r| r["version"].as_str().unwrap().to_owned())
            .collect();
        let ours: Vec<String> = select::search(&loaded.entries[name], None, false, true)
            .unwrap()
            .iter()
            .map(|v| v.version().to_owned())
            .collect();
        let precedence = |list: &[String]| -> Vec<Version> {
            list.iter().map(|v| Version::parse(v).unwrap()).collect()
        };
        assert_eq!(precedence(&ours), precedence(&theirs), "{name}");
        let (mut a, mut b) = (ours.clone(), theirs.clone());
        a.sort();
        b.sort();
        assert_eq!(a, b, "{name}: the same version texts, each once");
    }
}
