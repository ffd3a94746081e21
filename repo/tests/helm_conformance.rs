//! chartkit's version choice agrees with the real helm's for hundreds of ranges over one
//! index of awkward versions, served from 127.0.0.1. Skips (with a message) without helm.

mod common;

use chartkit_index::{ChartMetadata, ChartVersion, GoTime, IndexFile, select};
use chartkit_version::Version;

const VERSIONS: &[&str] = &[
    "0.0.0",
    "0.0.1",
    "0.1.0",
    "0.1.1-alpha",
    "0.2.0",
    "1.0.0-rc.1",
    "1.0.0",
    "1.0.1",
    "v1.1.0",
    "1.2",
    "1.2.3-alpha.1",
    "1.2.3-beta",
    "1.2.3",
    "1.2.3+build.1",
    "1.2.4",
    "1.3.0-0",
    "1.10.0",
    "2.0.0-rc.1",
    "2.0.0",
    "2.1.0+meta",
    "3",
    "10.0.0",
];

fn index() -> IndexFile {
    let mut index = IndexFile::new(GoTime::parse("2024-01-01T00:00:00Z").unwrap());
    for (name, versions) in [("conf", VERSIONS), ("other", &["1.2.3", "9.9.9"][..])] {
        for v in versions {
            index
                .entries
                .entry(name.to_owned())
                .or_default()
                .push(ChartVersion {
                    metadata: ChartMetadata {
                        name: name.to_owned(),
                        version: (*v).to_owned(),
                        api_version: "v2".to_owned(),
                        description: format!("{name} {v}"),
                        ..ChartMetadata::default()
                    },
                    urls: Some(vec![format!("{name}-{v}.tgz")]),
                    created: GoTime::parse("2024-01-01T00:00:00Z"),
                    digest: "0".repeat(64),
                    ..ChartVersion::default()
                });
        }
    }
    index.sort_entries();
    index
}

fn ranges() -> Vec<String> {
    let ops = [
        "", "=", "!=", ">", "<", ">=", "<=", "=>", "=<", "~", "~>", "^",
    ];
    let bases = [
        "1",
        "1.2",
        "1.2.3",
        "1.x",
        "1.2.x",
        "*",
        "x",
        "0",
        "0.1",
        "0.0.1",
        "2",
        "1.2.3-beta",
        "1.2.3-0",
        "v1.2",
        "1.2.3+build",
        "0.0.0-0",
        "1.X",
        "1.2.*",
        "0.0",
        "10",
    ];
    let mut ranges: Vec<String> = ops
        .iter()
        .flat_map(|op| bases.iter().map(move |b| format!("{op}{b}")))
        .collect();
    for extra in [
        "1.2 - 1.4.5",
        "1.2.3 - 2",
        "0.1 - 1.0.0-0",
        ">=1.0, <2.0",
        ">=1.0 <2.0",
        ">= 1.0 , < 2.0",
        ">1 || <0.1",
        "^1.2 || ^2",
        "~1.2.3 || >=3",
        ">=1.2.3-0 <1.3",
        ">=0.0.0-0",
        ">0.0.0-0",
        ">0.0.0",
        "^1.2.3-alpha.1",
        "~1.2.3-alpha",
        "1.2.3-beta || 2",
        "!=1.2.3 >=1.2 <1.3",
        "1.0.0-rc.1",
        "v1.1.0",
        "1.2.3+build.1",
        "^0.0",
        "^0.x",
        "~0",
        "<=1.2",
        ">1.2",
        ">2.0.0-0",
        "*-0",
        "x.x.x",
        "1.x.x",
        ">=1 <=1",
        // Invalid: both must refuse.
        "1.2.3.4",
        ">>1",
        "abc",
        "1,,2",
        ">= 1 ||",
        "1x",
        "^1.2.3-01",
        ">1|2",
        "~> ~1",
        "1 - ",
    ] {
        ranges.push(extra.to_owned());
    }
    ranges
}

/// What helm search printed: the versions, or `Err` when it refused the range.
fn helm_search(helm: &common::Helm, range: &str, all: bool) -> Result<Vec<String>, String> {
    let mut args = vec![
        "search",
        "repo",
        "conf/conf",
        "--version",
        range,
        "-o",
        "json",
    ];
    if all {
        args.push("--versions");
    }
    let out = helm.run(&args);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("helm prints JSON");
    Ok(rows
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["name"] == "conf/conf")
        .map(|r| r["version"].as_str().unwrap().to_owned())
        .collect())
}

/// Versions compared by precedence: helm orders equal-precedence versions (1.2.3 and
/// 1.2.3+build.1) at random in search, so only precedence is comparable.
fn precedence(versions: &[String]) -> Vec<Version> {
    versions
        .iter()
        .map(|v| Version::parse(v).unwrap())
        .collect()
}

#[test]
fn version_choice_agrees_with_helm_search() {
    let Some(binary) = common::helm() else {
        eprintln!(
            "skipped: helm not found (run /work/shared/tools/get-peers or set CHARTKIT_HELM)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let index = index();
    std::fs::write(repo.join("index.yaml"), chartkit_index::to_yaml(&index)).unwrap();
    let url = common::serve(&repo);
    let helm = common::Helm::new(binary, dir.path());
    helm.ok(&["repo", "add", "conf", &url]);
    let versions = &index.entries["conf"];

    let ranges = ranges();
    let results: Vec<(String, Result<Vec<String>, String>)> = std::thread::scope(|s| {
        let chunks: Vec<_> = ranges.chunks(ranges.len().div_ceil(2)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                let helm = &helm;
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|r| (r.clone(), helm_search(helm, r, false)))
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
    let mut checked = 0;
    for (range, theirs) in &results {
        let ours = select::search(versions, Some(range), false, false).map(|found| {
            found
                .iter()
                .map(|v| v.version().to_owned())
                .collect::<Vec<_>>()
        });
        checked += 1;
        match (&ours, theirs) {
            (Ok(a), Ok(b)) if precedence(a) == precedence(b) => {}
            (Err(_), Err(_)) => {}
            _ => disagreements.push(format!("{range:?}: chartkit {ours:?}, helm {theirs:?}")),
        }
    }
    assert!(checked >= 250, "only {checked} ranges checked");
    assert!(
        disagreements.is_empty(),
        "{} of {checked} ranges disagree:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
    eprintln!("{checked} ranges agree with helm search repo");

    // --versions: the whole ordered list, and --devel / default without a range.
    for range in [
        "*",
        ">=0.0.0-0",
        "^1",
        "~1.2.3-alpha",
        ">0.0.0",
        "<=2 || 10",
    ] {
        let theirs = helm_search(&helm, range, true).unwrap();
        let ours: Vec<String> = select::search(versions, Some(range), false, true)
            .unwrap()
            .iter()
            .map(|v| v.version().to_owned())
            .collect();
        assert_eq!(
            precedence(&ours),
            precedence(&theirs),
            "--versions {range:?}"
        );
    }
    for (devel, all) in [(false, false), (true, false), (false, true), (true, true)] {
        let mut args = vec!["search", "repo", "conf/conf", "-o", "json"];
        if devel {
            args.push("--devel");
        }
        if all {
            args.push("--versions");
        }
        let rows: serde_json::Value = serde_json::from_str(&helm.ok(&args)).unwrap();
        let theirs: Vec<String> = rows
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["name"] == "conf/conf")
            .map(|r| r["version"].as_str().unwrap().to_owned())
            .collect();
        let ours: Vec<String> = select::search(versions, None, devel, all)
            .unwrap()
            .iter()
            .map(|v| v.version().to_owned())
            .collect();
        assert_eq!(
            precedence(&ours),
            precedence(&theirs),
            "devel={devel} versions={all}"
        );
    }
}

/// An index with entries Helm skips, keeps despite a fault, or reads oddly.
const AWKWARD_INDEX: &str = r#"apiVersion: v1
entries:
  web:
  - apiVersion: v2
    name: web
    version: 1.0.0
    urls: [web-1.0.0.tgz]
    digest: a
    created: "2024-01-01T00:00:00Z"
    dependencies:
    - name: x
    - name: x
    - null
    annotations: {b: "2", a: "1"}
  - null
  - name: web
    version: not-a-version
  - apiVersion: v2
    name: web
    version: 2.0.0
    maintainers: [~]
  - apiVersion: v2
    Name: web
    name: web2
    version: 3.0.0
    description: "tab\there"
generated: "2024-01-01T00:00:00Z"
"#;

/// Go's `%q` text back to the string (only the escapes Helm's warnings can contain).
fn unquote(text: &str) -> String {
    text.replace("\\\"", "\"").replace("\\\\", "\\")
}

/// `repo index --merge` of an index with null entries, invalid entries, an entry kept with a
/// null dependency after a repeated one, and two spellings of `name`: the same index.yaml
/// as helm's (timestamps aside) and the same warnings in the same order.
#[test]
fn merging_awkward_entries_matches_helm() {
    let Some(binary) = common::helm() else {
        eprintln!(
            "skipped: helm not found (run /work/shared/tools/get-peers or set CHARTKIT_HELM)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.yaml");
    std::fs::write(&old, AWKWARD_INDEX).unwrap();
    let (theirs, ours) = (dir.path().join("helm"), dir.path().join("chartkit"));
    std::fs::create_dir_all(&theirs).unwrap();
    std::fs::create_dir_all(&ours).unwrap();
    let helm = common::Helm::new(binary, dir.path());
    let out = helm.run(&[
        "repo",
        "index",
        theirs.to_str().unwrap(),
        "--merge",
        old.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let helm_warnings: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| l.strip_prefix("level=WARN msg=\""))
        .map(|l| unquote(l.strip_suffix('"').unwrap_or(l)))
        .collect();
    let report = chartkit_repo::index_directory(
        &ours,
        &chartkit_repo::IndexDirOptions {
            merge: Some(old.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    let read = |d: &std::path::Path| {
        std::fs::read_to_string(d.join("index.yaml"))
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with("generated:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(read(&ours), read(&theirs));
    assert_eq!(helm_warnings.len(), 3, "{helm_warnings:?}");
    assert_eq!(report.warnings, helm_warnings);
}
