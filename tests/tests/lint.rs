//! `chartkit lint` against the `helm lint` output recorded in the corpus.

use chartkit_tests::corpus::{corpus_or_skip, packages};
use chartkit_tests::{TestContext, stdout};

/// The recorded lint messages for a corpus lint file, and whether helm passed.
fn recorded(text: &str) -> (bool, Vec<String>) {
    let passed = text.contains("## lint: pass");
    let start = text
        .find("## lint stdout:\n")
        .map_or(0, |i| i + "## lint stdout:\n".len());
    let end = text.find("## lint stderr:").unwrap_or(text.len());
    let messages = text[start..end]
        .lines()
        .filter(|l| l.starts_with('['))
        .map(str::to_owned)
        .collect();
    (passed, messages)
}

/// Findings normalised for comparison: each tool names an unpacked chart by its own
/// temporary directory, and helm lists missing dependencies in map order.
fn normalised(messages: Vec<String>) -> Vec<String> {
    let mut kept: Vec<String> = messages
        .into_iter()
        .map(|m| {
            match m
                .find("/tmp/helm-lint")
                .or_else(|| m.find("/tmp/chartkit-lint"))
            {
                // Both tools name an unpacked chart by its temporary directory.
                Some(start) => format!(
                    "{}<chart>{}",
                    &m[..start],
                    &m[start..][m[start..].find(": ").unwrap_or(0)..]
                ),
                None => m,
            }
        })
        .map(|m| match m.rsplit_once(": ") {
            Some((head, list)) if head.contains("missing these dependencies") => {
                let mut names: Vec<&str> = list.split(',').collect();
                names.sort();
                format!("{head}: {}", names.join(","))
            }
            _ => m,
        })
        .collect();
    kept.sort();
    kept
}

#[test]
fn lint_findings_match_helm_for_every_corpus_chart() {
    let Some(corpus) = corpus_or_skip("lint_findings_match_helm_for_every_corpus_chart") else {
        return;
    };
    let context = TestContext::new();
    let mut failures = Vec::new();
    let mut compared = 0;
    for package in packages(&corpus) {
        let relative = package.strip_prefix(corpus.join("charts")).unwrap();
        let lint_file = match relative.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(dir) => corpus.join("lint").join(format!("{}.txt", dir.display())),
            None => {
                let stem = relative
                    .to_string_lossy()
                    .trim_end_matches(".tgz")
                    .to_owned();
                let cut = stem.char_indices().rev().find(|(i, c)| {
                    *c == '-' && stem[i + 1..].starts_with(|d: char| d.is_ascii_digit())
                });
                corpus.join("lint").join(format!(
                    "{}.txt",
                    &stem[..cut.map_or(stem.len(), |(i, _)| i)]
                ))
            }
        };
        let Ok(text) = std::fs::read_to_string(&lint_file) else {
            continue;
        };
        let (_, expected) = recorded(&text);
        // The recorded command may pass values (`-f values/...`), relative to the corpus.
        let extra: Vec<String> = text
            .lines()
            .find_map(|l| l.strip_prefix("## command: helm lint "))
            .map(|c| c.split_whitespace().skip(1).map(str::to_owned).collect())
            .unwrap_or_default();
        let output = context
            .chartkit()
            .current_dir(&corpus)
            .arg("lint")
            .arg(&package)
            .args(&extra)
            .output()
            .expect("run chartkit lint");
        let ours: Vec<String> = stdout(&output)
            .lines()
            .filter(|l| l.starts_with('['))
            .map(|l| l.replace(&package.display().to_string(), "<chart>"))
            .collect();
        let (expected, ours) = (normalised(expected), normalised(ours));
        compared += 1;
        if expected != ours {
            failures.push(format!(
                "{}:\n  helm:     {expected:?}\n  chartkit: {ours:?}",
                package.display()
            ));
        }
    }
    assert!(compared >= 60, "only {compared} charts compared");
    assert!(
        failures.is_empty(),
        "{} charts lint differently:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn lint_with_subcharts_lints_every_chart_under_charts() {
    let context = TestContext::new();
    for args in [
        &["create", "par"][..],
        &["create", "par/charts/sub1"],
        &["create", "par/charts/sub1/charts/deep"],
        &["create", "sub2"],
        &["package", "sub2", "-d", "par/charts"],
    ] {
        let output = context.run(args);
        assert!(
            output.status.success(),
            "{args:?}: {}",
            chartkit_tests::stderr(&output)
        );
    }
    // A chart that fails lint, to see failures counted.
    std::fs::write(
        context.path("par/charts/sub1/charts/deep/Chart.yaml"),
        "apiVersion: v2\nname: deep\nversion: 0.1.0\nicon: not-a-url\n",
    )
    .unwrap();
    let headers = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("==> Linting "))
            .map(str::to_owned)
            .collect()
    };
    let ours = context.run(&["lint", "./par", "--with-subcharts"]);
    assert_eq!(ours.status.code(), Some(1));
    assert_eq!(
        headers(&stdout(&ours)),
        [
            "==> Linting ./par",
            "==> Linting par/charts/sub1",
            "==> Linting par/charts/sub1/charts/deep",
            "==> Linting par/charts/sub2-0.1.0.tgz",
        ]
    );
    assert_eq!(
        chartkit_tests::stderr(&ours),
        "Error: 4 chart(s) linted, 3 chart(s) failed\n"
    );
    // Without the flag only the chart given is linted.
    let alone = context.run(&["lint", "par"]);
    assert_eq!(headers(&stdout(&alone)), ["==> Linting par"]);
    if let Some(mut helm) = context.helm() {
        let theirs = helm
            .args(["lint", "./par", "--with-subcharts"])
            .output()
            .unwrap();
        assert_eq!(headers(&stdout(&theirs)), headers(&stdout(&ours)));
        assert_eq!(
            chartkit_tests::stderr(&theirs),
            chartkit_tests::stderr(&ours)
        );
    }
}
