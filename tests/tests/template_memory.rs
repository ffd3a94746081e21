//! Templates that would build more than the machine holds stop with an error naming the
//! template and line, instead of growing until the kernel kills chartkit
//! (`CHARTKIT_MAX_RENDER_MEMORY`, 1 GiB by default).

use std::time::{Duration, Instant};

use chartkit_tests::{TestContext, stderr, stdout};

/// Far more than these renders need when they stop where they should; only a render
/// that allocates gigabytes first takes that long.
const QUICK: Duration = Duration::from_secs(10);

/// Writes a chart named `demo` whose only template is `text`; returns its directory.
fn chart(context: &TestContext, text: &str) -> String {
    context.demo_chart(&[("templates/cm.yaml", text)])
}

#[test]
fn repeat_with_a_huge_count_fails_fast_instead_of_exhausting_memory() {
    let context = TestContext::new();
    let dir = chart(
        &context,
        "kind: ConfigMap\ndata:\n  x: {{ repeat 100000000000 \"x\" }}\n",
    );
    let mut command = context.chartkit(); // built before the clock starts
    command.args(["template", &dir]);
    let started = Instant::now();
    let output = command.output().unwrap();
    let elapsed = started.elapsed();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(
        stderr(&output),
        "Error: template: demo/templates/cm.yaml:3:8: executing \"demo/templates/cm.yaml\" at <repeat 100000000000 \"x\">: error calling repeat: rendering memory limit of 1 GiB exceeded: the result would take 93.1 GiB more, with 4 KiB already used\n\
         hint: the limit is 1073741824 bytes; if the chart really needs more, set `CHARTKIT_MAX_RENDER_MEMORY` to a larger number of bytes\n"
    );
    assert!(stdout(&output).is_empty());
    assert!(elapsed < QUICK, "took {elapsed:?}");
}

#[test]
fn a_range_that_writes_without_end_stops_at_the_memory_limit() {
    let context = TestContext::new();
    let dir = chart(
        &context,
        "kind: ConfigMap\ndata:\n{{- range 10000000000 }}\n  line: text{{ end }}\n",
    );
    let mut command = context.chartkit(); // built before the clock starts
    command
        .args(["template", &dir])
        .env("CHARTKIT_MAX_RENDER_MEMORY", "1000000");
    let started = Instant::now();
    let output = command.output().unwrap();
    let elapsed = started.elapsed();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.starts_with(
            "Error: demo/templates/cm.yaml:3:24\n  executing \"demo/templates/cm.yaml\" at <\"\\n  line: text\">:\n    rendering memory limit of 976.6 KiB exceeded: the output would take 13 B more"
        ),
        "{message}"
    );
    assert!(
        message.contains("hint: the limit is 1000000 bytes"),
        "{message}"
    );
    assert!(elapsed < QUICK, "took {elapsed:?}");
}

#[test]
fn chartkit_max_render_memory_sets_the_limit() {
    let context = TestContext::new();
    let dir = chart(&context, "x: {{ repeat 20000 \"x\" | len }}\n");
    let run = |limit: &str| {
        context
            .chartkit()
            .args(["template", &dir])
            .env("CHARTKIT_MAX_RENDER_MEMORY", limit)
            .output()
            .unwrap()
    };
    let low = run("15000");
    assert_eq!(low.status.code(), Some(1));
    assert!(
        stderr(&low).contains("error calling repeat: rendering memory limit of 14.6 KiB exceeded"),
        "{}",
        stderr(&low)
    );
    let enough = run("100000");
    assert!(enough.status.success(), "{}", stderr(&enough));
    assert!(
        stdout(&enough).ends_with("x: 20000\n"),
        "{}",
        stdout(&enough)
    );

    let invalid = run("1GiB");
    assert_eq!(invalid.status.code(), Some(1));
    assert_eq!(
        stderr(&invalid),
        "Error: environment variable `CHARTKIT_MAX_RENDER_MEMORY` must be a whole number, found `1GiB`\n"
    );
}

/// `until` made a list of 24-byte values: ten million numbers needed 240 MB. A Go `[]int`
/// takes 8 bytes a number, and so does chartkit's now.
#[test]
fn until_counts_eight_bytes_a_number() {
    let context = TestContext::new();
    let dir = chart(&context, "x: {{ len (until 10000000) }}\n");
    let output = context
        .chartkit()
        .args(["template", &dir])
        .env("CHARTKIT_MAX_RENDER_MEMORY", "100000000")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).ends_with("x: 10000000\n"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn lint_reports_a_template_over_the_memory_limit() {
    let context = TestContext::new();
    let dir = chart(&context, "x: {{ repeat 100000000000 \"x\" }}\n");
    let mut command = context.chartkit(); // built before the clock starts
    command.args(["lint", &dir]);
    let started = Instant::now();
    let output = command.output().unwrap();
    assert!(!output.status.success());
    let report = stdout(&output);
    assert!(
        report.contains("error calling repeat: rendering memory limit of 1 GiB exceeded"),
        "{report}"
    );
    assert!(started.elapsed() < QUICK);
}
