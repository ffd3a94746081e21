//! The shared corpus of real charts and their recorded helm output.

use std::path::{Path, PathBuf};

/// The corpus directory (`CHARTKIT_CORPUS`, default `../shared/corpus` next to the
/// workspace), or `None` with a printed reason when it is absent.
pub fn corpus_or_skip(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("CHARTKIT_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::workspace_root().join("../shared/corpus"));
    if dir.join("cases.tsv").is_file() {
        Some(dir)
    } else {
        crate::skip(
            test,
            &format!(
                "corpus not found at {} (set CHARTKIT_CORPUS)",
                dir.display()
            ),
        );
        None
    }
}

/// Every chart package in the corpus, sorted.
pub fn packages(corpus: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![corpus.join("charts")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "tgz") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// One row of `cases.tsv`.
#[derive(Debug, Clone)]
pub struct Case {
    pub chart: String,
    pub name: String,
    pub package: String,
    /// The recorded `helm template ...` command line, relative to the corpus.
    pub command: String,
    pub exit_code: i32,
    pub stdout_golden: Option<String>,
    pub deterministic: bool,
    /// `# Source:` paths of documents that differ between helm runs.
    pub nondeterministic_documents: Vec<String>,
}

pub fn cases(corpus: &Path) -> Vec<Case> {
    let text = std::fs::read_to_string(corpus.join("cases.tsv")).expect("read cases.tsv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split('\t').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("cases.tsv has no {name} column"))
    };
    let (chart, case, package, command, exit, golden, deterministic, nondet) = (
        column("chart"),
        column("case"),
        column("package"),
        column("command"),
        column("exit_code"),
        column("stdout_golden"),
        column("deterministic"),
        column("nondeterministic_documents"),
    );
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let optional = |s: &str| if s == "-" { None } else { Some(s.to_owned()) };
            Case {
                chart: f[chart].to_owned(),
                name: f[case].to_owned(),
                package: f[package].to_owned(),
                command: f[command].to_owned(),
                exit_code: f[exit].parse().unwrap_or(1),
                stdout_golden: optional(f[golden]),
                deterministic: f[deterministic] == "yes",
                nondeterministic_documents: optional(f[nondet])
                    .map(|s| {
                        s.split("; ")
                            .map(|d| d.split(" [").next().unwrap_or(d).to_owned())
                            .collect()
                    })
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// Splits `helm template` output into documents keyed by their `# Source:` line.
pub fn documents(output: &str) -> Vec<(String, String)> {
    output
        .split("---\n")
        .filter(|d| !d.is_empty())
        .map(|d| {
            let source = d
                .lines()
                .find_map(|l| l.strip_prefix("# Source: "))
                .unwrap_or("")
                .to_owned();
            (source, d.to_owned())
        })
        .collect()
}
