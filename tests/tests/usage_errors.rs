//! Errors as scripts written for helm expect them: `Error: ` first, exit status 1, for
//! usage errors as for failing commands; help and the version on stdout with status 0.

use chartkit_tests::{TestContext, stderr, stdout};

/// Arguments that fail in both tools, with what each is an example of.
const FAILURES: &[(&str, &[&str])] = &[
    ("an unknown flag", &["template", "--bogus", "x"]),
    ("a missing argument", &["template"]),
    (
        "a flag value where none is taken",
        &["lint", "--strict=maybe", "x"],
    ),
    ("an unknown command", &["bogus"]),
    ("a failing command", &["show", "values", "nothere"]),
];

#[test]
fn usage_errors_exit_1_with_the_error_prefix_as_helm() {
    let context = TestContext::new();
    for (what, args) in FAILURES {
        let output = context.run(args);
        assert_eq!(output.status.code(), Some(1), "{what}: {}", stderr(&output));
        assert!(
            stderr(&output).starts_with("Error: "),
            "{what}: {}",
            stderr(&output)
        );
        assert_eq!(stdout(&output), "", "{what}");
        if let Some(mut helm) = context.helm() {
            let theirs = helm.args(*args).output().unwrap();
            assert_eq!(theirs.status.code(), Some(1), "helm, {what}");
            assert!(stderr(&theirs).starts_with("Error: "), "helm, {what}");
        }
    }
    // A bad value for a flag that takes one.
    let output = context.run(&["repo", "query", "index.yaml", "web", "-o", "xml"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).starts_with("Error: invalid value 'xml' for '--output <OUTPUT>'"));
    if let Some(mut helm) = context.helm() {
        let theirs = helm
            .args(["search", "repo", "web", "-o", "xml"])
            .output()
            .unwrap();
        assert_eq!(theirs.status.code(), Some(1));
        assert!(stderr(&theirs).starts_with("Error: invalid argument \"xml\""));
    }
}

#[test]
fn help_goes_to_stdout_with_status_0() {
    let context = TestContext::new();
    for args in [
        &["--help"][..],
        &["template", "--help"],
        &["--version"],
        &[],
        &["show"],
    ] {
        let output = context.run(args);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(!stdout(&output).is_empty(), "{args:?}");
        assert_eq!(stderr(&output), "", "{args:?}");
    }
}

#[test]
fn template_usage_reads_name_then_chart() {
    let context = TestContext::new();
    let help = stdout(&context.run(&["template", "--help"]));
    assert!(
        help.contains("Usage: chartkit template [OPTIONS] [NAME] CHART\n"),
        "{help}"
    );
    let missing = stderr(&context.run(&["template"]));
    assert!(
        missing.contains("Usage: chartkit template [OPTIONS] [NAME] CHART\n"),
        "{missing}"
    );
    let too_many = context.run(&["template", "a", "b", "c"]);
    assert_eq!(too_many.status.code(), Some(1));
    assert_eq!(
        stderr(&too_many),
        "Error: expected at most two arguments, unexpected arguments: c\n"
    );
}

/// helm takes flags anywhere among its arguments, also between NAME and CHART.
#[test]
fn template_takes_flags_between_name_and_chart() {
    let context = TestContext::new();
    let chart = context.demo_chart(&[(
        "templates/cm.yaml",
        "kind: ConfigMap\nname: {{ .Release.Name }}-{{ .Release.Namespace }}\n",
    )]);
    let output = context.run(&["template", "rel", "-n", "prod", &chart, "--include-crds"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("name: rel-prod\n"),
        "{}",
        stdout(&output)
    );
    if let Some(mut helm) = context.helm() {
        let theirs = helm
            .args(["template", "rel", "-n", "prod", &chart, "--include-crds"])
            .output()
            .unwrap();
        assert_eq!(stdout(&theirs), stdout(&output));
    }
}

#[test]
fn a_validation_error_states_its_cause_once() {
    let context = TestContext::new();
    let chart = context.demo_chart(&[]);
    std::fs::write(
        context.path("demo/Chart.yaml"),
        "apiVersion: v2\nname: demo\nversion: x\n",
    )
    .unwrap();
    for args in [
        &["template", chart.as_str()][..],
        &["show", "chart", chart.as_str()],
    ] {
        let output = context.run(args);
        assert_eq!(output.status.code(), Some(1));
        let message = stderr(&output);
        assert_eq!(
            message
                .matches("chart.metadata.version \"x\" is invalid")
                .count(),
            1,
            "{message}"
        );
        assert!(
            message.starts_with("Error: cannot load the chart at `"),
            "{message}"
        );
        assert!(
            message.ends_with("\nhint: use a semantic version such as 1.2.3 or 1.2.3-rc.1\n"),
            "{message}"
        );
    }
}
