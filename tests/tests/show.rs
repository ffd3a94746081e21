//! `chartkit show` against helm's recorded and live output for every corpus chart.

use chartkit_tests::corpus::{corpus_or_skip, packages};
use chartkit_tests::{TestContext, stderr, stdout};

/// The `helm show chart` output recorded in the corpus lint files.
fn recorded_show_chart(corpus: &std::path::Path, package: &std::path::Path) -> Option<String> {
    let relative = package.strip_prefix(corpus.join("charts")).ok()?;
    let chart = relative.parent()?.to_string_lossy().into_owned();
    let name = if chart.is_empty() {
        let file = relative.file_name()?.to_string_lossy().into_owned();
        // `nginx-22.1.1.tgz` → `nginx`: the name is everything before the last `-<digit>`.
        let stem = file.trim_end_matches(".tgz");
        let cut = stem
            .char_indices()
            .rev()
            .find(|(i, c)| *c == '-' && stem[i + 1..].starts_with(|d: char| d.is_ascii_digit()));
        cut.map(|(i, _)| stem[..i].to_owned())?
    } else {
        chart
    };
    let text = std::fs::read_to_string(corpus.join("lint").join(format!("{name}.txt"))).ok()?;
    let start = text.find("## show chart stdout:\n")? + "## show chart stdout:\n".len();
    Some(text[start..].to_owned())
}

#[test]
fn every_corpus_chart_loads_and_show_chart_matches_helm() {
    let Some(corpus) = corpus_or_skip("every_corpus_chart_loads_and_show_chart_matches_helm")
    else {
        return;
    };
    let context = TestContext::new();
    let mut compared = 0;
    for package in packages(&corpus) {
        let output = context.run(&["show", "chart", package.to_str().unwrap()]);
        assert!(
            output.status.success(),
            "{}: {}",
            package.display(),
            stderr(&output)
        );
        let ours = stdout(&output);
        if let Some(expected) = recorded_show_chart(&corpus, &package) {
            assert_eq!(
                ours,
                expected,
                "show chart differs for {}",
                package.display()
            );
            compared += 1;
        }
        if let Some(mut helm) = context.helm() {
            let theirs = helm
                .args(["show", "chart"])
                .arg(&package)
                .output()
                .expect("run helm");
            assert_eq!(
                ours,
                stdout(&theirs),
                "show chart differs from live helm for {}",
                package.display()
            );
        }
    }
    assert!(
        compared >= 60,
        "only {compared} charts had recorded show chart output"
    );
}

#[test]
fn show_all_values_readme_and_crds_match_helm() {
    let Some(corpus) = corpus_or_skip("show_all_values_readme_and_crds_match_helm") else {
        return;
    };
    let context = TestContext::new();
    let Some(_) = chartkit_tests::peers::helm_or_skip("show_all_values_readme_and_crds_match_helm")
    else {
        return;
    };
    for package in packages(&corpus) {
        for part in ["all", "values", "readme", "crds"] {
            let ours = context.run(&["show", part, package.to_str().unwrap()]);
            let theirs = context
                .helm()
                .unwrap()
                .args(["show", part])
                .arg(&package)
                .output()
                .expect("run helm");
            assert_eq!(
                stdout(&ours),
                stdout(&theirs),
                "show {part} differs for {}",
                package.display()
            );
        }
    }
}

#[test]
fn show_names_the_problem_in_a_broken_chart() {
    let context = TestContext::new();
    chartkit_tests::archive::write(
        &context.path("bad/Chart.yaml"),
        b"apiVersion: v2\nname: bad\nversion: 1.0.0\nkeywords: oops\n",
    );
    let output = context.run(&["show", "chart", "bad"]);
    assert!(!output.status.success());
    assert_eq!(
        stderr(&output),
        "Error: cannot load the chart at `bad`: `bad/Chart.yaml`: line 4: field `keywords` must be a list of strings, found a string\n"
    );
    chartkit_tests::archive::write(&context.path("values.yaml"), b"a: 1\n");
    let output = context.run(&["show", "chart", "values.yaml"]);
    assert!(
        stderr(&output).contains("looks like a YAML file"),
        "{}",
        stderr(&output)
    );
}
