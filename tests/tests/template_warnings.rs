//! What helm logs while rendering, `chartkit template` prints in the same lines: helm 4
//! logs through Go's `log/slog` text handler without the time (`level=WARN msg="..."
//! key=value`), and chartkit writes the same bytes (`cli/src/log.rs`), so scripts that
//! read helm's stderr read chartkit's: coalescing's notices (`level=INFO
//! msg="warning: skipped value for X: Not a table."`), conditions and tags that are not
//! booleans, `import-values` naming a table that is not there, hooks of unknown events,
//! a deprecated chart. Each case is checked against the lines helm 4.1.4 printed and,
//! when installed, against helm itself.

use chartkit_tests::peers::helm_or_skip;
use chartkit_tests::{TestContext, stderr};

/// The lines of Helm's log in a stderr.
fn log_lines(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.starts_with("level="))
        .map(str::to_owned)
        .collect()
}

/// Helm walks Go maps, whose order is random: its lines come in another order from run
/// to run, so both sides are compared sorted. chartkit's own order is the keys'.
fn sorted(mut lines: Vec<String>) -> Vec<String> {
    lines.sort();
    lines
}

/// A chart whose values, dependency and hooks make helm log everything it logs while
/// rendering.
fn noisy_chart(context: &TestContext) -> String {
    context.demo_chart(&[
        (
            "Chart.yaml",
            "apiVersion: v2\nname: demo\nversion: 0.1.0\ndependencies:\n- name: sub\n  version: 0.1.0\n  condition: sub.enabled,other.flag\n  tags: [t1]\n  import-values: [missing, {child: nope.x, parent: y}]\n",
        ),
        (
            "values.yaml",
            "sub:\n  enabled: \"yes\"\ntags:\n  t1: x\nother:\n  flag: true\nm: 1\nt:\n  k: {a: 1}\nglobal:\n  g: 1\n",
        ),
        (
            "charts/sub/Chart.yaml",
            "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
        ),
        ("charts/sub/values.yaml", "global:\n  g: {a: 1}\n"),
        (
            "templates/hook.yaml",
            "kind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    helm.sh/hook: pre-install, bogus\n",
        ),
        ("templates/cm.yaml", "kind: ConfigMap\nmetadata:\n  name: b\n"),
    ])
}

#[test]
fn warnings_helm_logs_while_rendering_are_printed_in_its_words() {
    let context = TestContext::new();
    let dir = noisy_chart(&context);
    let args = ["template", &dir, "--set", "m.x=1", "--set", "t.k=2"];
    let ours = context.run(&args);
    assert!(ours.status.success(), "{}", stderr(&ours));
    let expected = [
        "level=INFO msg=\"warning: skipped value for demo.m: Not a table.\"",
        "level=INFO msg=\"warning: cannot overwrite table with non table for demo.t.k (map[a:1])\"",
        "level=INFO msg=\"warning: cannot overwrite table with non table for demo.sub.global.g (map[a:1])\"",
        "level=WARN msg=\"returned non-bool value\" tag=t1 chart=sub",
        "level=WARN msg=\"returned non-bool value\" path=sub.enabled chart=sub",
        "level=INFO msg=\"warning: cannot overwrite table with non table for demo.sub.global.g (map[a:1])\"",
        "level=WARN msg=\"ImportValues missing table\" error=\"\\\"exports\\\" is not a table\"",
        "level=WARN msg=\"ImportValues missing table from chart\" chart=sub error=\"\\\"nope\\\" is not a table\"",
        "level=INFO msg=\"warning: skipped value for demo.m: Not a table.\"",
        "level=INFO msg=\"warning: cannot overwrite table with non table for demo.t.k (map[a:1])\"",
        "level=INFO msg=\"warning: cannot overwrite table with non table for demo.sub.global.g (map[a:1])\"",
        "level=INFO msg=\"skipping unknown hooks\" hookTypes=\"pre-install, bogus\"",
    ];
    assert_eq!(log_lines(&stderr(&ours)), expected);
    if helm_or_skip("warnings_helm_logs_while_rendering_are_printed_in_its_words").is_some() {
        let helm = context.helm().unwrap().args(args).output().unwrap();
        assert!(helm.status.success(), "{}", stderr(&helm));
        assert_eq!(
            sorted(log_lines(&stderr(&helm))),
            sorted(expected.map(str::to_owned).to_vec())
        );
    }
}

/// Helm logs as it goes, so what it logged before a failure is printed with the error.
#[test]
fn warnings_before_a_failed_render_are_printed_too() {
    let context = TestContext::new();
    let dir = context.demo_chart(&[
        ("values.yaml", "m: 1\n"),
        (
            "templates/cm.yaml",
            "kind: ConfigMap\n{{ fail \"stop\" }}\n",
        ),
    ]);
    let args = ["template", &dir, "--set", "m.x=1"];
    let ours = context.run(&args);
    assert!(!ours.status.success());
    let expected = ["level=INFO msg=\"warning: skipped value for demo.m: Not a table.\""];
    assert_eq!(log_lines(&stderr(&ours)), expected);
    if helm_or_skip("warnings_before_a_failed_render_are_printed_too").is_some() {
        let helm = context.helm().unwrap().args(args).output().unwrap();
        assert!(!helm.status.success());
        assert_eq!(log_lines(&stderr(&helm)), expected);
    }
}

/// `lint` prints what helm logs while linting: the values check's coalescing, then the
/// template check's dependency processing and its two more coalescings (no hook
/// sorting there, so no word about unknown hooks).
#[test]
fn lint_prints_the_warnings_helm_logs_while_linting() {
    let context = TestContext::new();
    let dir = noisy_chart(&context);
    let args = ["lint", &dir, "--set", "m.x=1"];
    let ours = context.run(&args);
    assert!(ours.status.success(), "{}", stderr(&ours));
    let expected = [
        "level=INFO msg=\"warning: destination for m is a table. Ignoring non-table value (1)\"",
        "level=INFO msg=\"warning: skipped value for demo.m: Not a table.\"",
        "level=INFO msg=\"warning: cannot overwrite table with non table for demo.sub.global.g (map[a:1])\"",
        "level=WARN msg=\"returned non-bool value\" tag=t1 chart=sub",
        "level=WARN msg=\"returned non-bool value\" path=sub.enabled chart=sub",
        "level=INFO msg=\"warning: cannot overwrite table with non table for demo.sub.global.g (map[a:1])\"",
        "level=WARN msg=\"ImportValues missing table\" error=\"\\\"exports\\\" is not a table\"",
        "level=WARN msg=\"ImportValues missing table from chart\" chart=sub error=\"\\\"nope\\\" is not a table\"",
        "level=INFO msg=\"warning: skipped value for demo.m: Not a table.\"",
        "level=INFO msg=\"warning: cannot overwrite table with non table for demo.sub.global.g (map[a:1])\"",
        "level=INFO msg=\"warning: skipped value for demo.m: Not a table.\"",
        "level=INFO msg=\"warning: cannot overwrite table with non table for demo.sub.global.g (map[a:1])\"",
    ];
    assert_eq!(log_lines(&stderr(&ours)), expected);
    if helm_or_skip("lint_prints_the_warnings_helm_logs_while_linting").is_some() {
        let helm = context.helm().unwrap().args(args).output().unwrap();
        assert!(helm.status.success(), "{}", stderr(&helm));
        assert_eq!(
            sorted(log_lines(&stderr(&helm))),
            sorted(expected.map(str::to_owned).to_vec())
        );
    }
}

/// A deprecated chart and `--dry-run` given without a mode: helm's two warnings of the
/// command line, in its lines.
#[test]
fn deprecated_chart_and_bare_dry_run_warn_in_helms_lines() {
    let context = TestContext::new();
    let dir = context.demo_chart(&[
        (
            "Chart.yaml",
            "apiVersion: v2\nname: demo\nversion: 0.1.0\ndeprecated: true\n",
        ),
        (
            "templates/cm.yaml",
            "kind: ConfigMap\nmetadata:\n  name: b\n",
        ),
    ]);
    let args = ["template", dir.as_str()];
    let ours = context.run(&args);
    assert!(ours.status.success(), "{}", stderr(&ours));
    let expected = ["level=WARN msg=\"this chart is deprecated\""];
    assert_eq!(log_lines(&stderr(&ours)), expected);
    let dry_run = ["install", "web", dir.as_str(), "--dry-run"];
    let ours_dry = context.run(&dry_run);
    let expected_dry = [
        "level=WARN msg=\"--dry-run is deprecated and should be replaced with '--dry-run=client'\"",
    ];
    assert!(
        log_lines(&stderr(&ours_dry)).starts_with(&expected_dry.map(str::to_owned)),
        "{}",
        stderr(&ours_dry)
    );
    if helm_or_skip("deprecated_chart_and_bare_dry_run_warn_in_helms_lines").is_some() {
        let helm = context.helm().unwrap().args(args).output().unwrap();
        assert!(helm.status.success(), "{}", stderr(&helm));
        assert_eq!(log_lines(&stderr(&helm)), expected);
        let helm = context.helm().unwrap().args(dry_run).output().unwrap();
        assert!(
            log_lines(&stderr(&helm)).starts_with(&expected_dry.map(str::to_owned)),
            "{}",
            stderr(&helm)
        );
    }
}

/// Blank and white-space-only lines of `.helmignore` are skipped before any rule is
/// made, so helm 4 logs nothing for them (its `this will be ignored no matcher supplied`
/// info line belongs to a rule without a matcher, which its parser never makes); nor
/// does chartkit, and the files left are the same.
#[test]
fn blank_helmignore_lines_are_skipped_without_a_log_line() {
    let context = TestContext::new();
    let dir = context.demo_chart(&[
        (".helmignore", "\n   \n\t\n*.txt\n\n# comment\n\n"),
        ("a.txt", "ignored\n"),
        ("b.md", "kept\n"),
        (
            "templates/cm.yaml",
            "kind: ConfigMap\nmetadata:\n  name: b\ndata:\n  files: {{ range $p, $_ := .Files.Glob \"*\" }}{{ $p }} {{ end }}\n",
        ),
    ]);
    let packaged = context.path("packaged");
    let runs: [Vec<&str>; 2] = [
        vec!["template", dir.as_str()],
        vec!["package", dir.as_str(), "-d", packaged.to_str().unwrap()],
    ];
    let ours = context.run(&runs[0]);
    assert!(ours.status.success(), "{}", stderr(&ours));
    assert_eq!(stderr(&ours), "");
    let rendered = chartkit_tests::stdout(&ours);
    assert!(rendered.contains("files: .helmignore b.md"), "{rendered}");
    assert!(!rendered.contains("a.txt"), "{rendered}");
    let ours_package = context.run(&runs[1]);
    assert!(ours_package.status.success(), "{}", stderr(&ours_package));
    assert_eq!(stderr(&ours_package), "");
    if helm_or_skip("blank_helmignore_lines_are_skipped_without_a_log_line").is_some() {
        let helm = context.helm().unwrap().args(&runs[0]).output().unwrap();
        assert!(helm.status.success(), "{}", stderr(&helm));
        assert_eq!(stderr(&helm), "");
        assert_eq!(chartkit_tests::stdout(&helm), rendered);
        let helm = context.helm().unwrap().args(&runs[1]).output().unwrap();
        assert!(helm.status.success(), "{}", stderr(&helm));
        assert_eq!(stderr(&helm), "");
    }
}

/// The corpus recorded helm's stderr for the real charts whose render logs something
/// (a deprecated chart, a non-boolean condition, a value that cannot replace a table):
/// chartkit prints the same lines.
#[test]
fn corpus_warnings_are_helms_lines() {
    let Some(corpus) = chartkit_tests::corpus::corpus_or_skip("corpus_warnings_are_helms_lines")
    else {
        return;
    };
    let context = TestContext::new();
    let mut checked = 0;
    for case in chartkit_tests::corpus::cases(&corpus) {
        let golden = corpus.join(format!(
            "golden/helm-4.1.4/{}/{}.stderr.txt",
            case.chart, case.name
        ));
        let Ok(expected) = std::fs::read_to_string(&golden) else {
            continue;
        };
        let args: Vec<&str> = case.command.split_whitespace().skip(1).collect();
        let ours = context
            .chartkit()
            .current_dir(&corpus)
            .args(&args)
            .output()
            .unwrap();
        assert!(ours.status.success(), "{}: {}", case.command, stderr(&ours));
        assert_eq!(
            sorted(log_lines(&stderr(&ours))),
            sorted(log_lines(&expected)),
            "{}",
            case.command
        );
        checked += 1;
    }
    assert!(
        checked >= 3,
        "only {checked} corpus cases with recorded warnings"
    );
}

/// Linting lets `required` and `fail` pass, and logs their messages as helm does.
#[test]
fn lint_logs_required_and_fail_in_helms_lines() {
    let context = TestContext::new();
    let dir = context.demo_chart(&[(
        "templates/cm.yaml",
        "kind: ConfigMap\nmetadata:\n  name: a\ndata:\n  r: {{ required \"need r set\" .Values.r | quote }}\n  s: {{ required \"need s\" \"\" | quote }}\n  f: {{ fail \"stop here\" }}\n",
    )]);
    let args = ["lint", dir.as_str()];
    let ours = context.run(&args);
    assert!(ours.status.success(), "{}", stderr(&ours));
    let expected = [
        "level=WARN msg=\"missing required value\" message=\"need r set\"",
        "level=WARN msg=\"missing required values\" message=\"need s\"",
        "level=INFO msg=\"funcMap fail\" message=\"stop here\"",
    ];
    assert_eq!(log_lines(&stderr(&ours)), expected);
    if helm_or_skip("lint_logs_required_and_fail_in_helms_lines").is_some() {
        let helm = context.helm().unwrap().args(args).output().unwrap();
        assert!(helm.status.success(), "{}", stderr(&helm));
        assert_eq!(log_lines(&stderr(&helm)), expected);
    }
}

/// `--wait=true` and `--wait=false` still work, with helm's warning that booleans are
/// deprecated.
#[test]
fn boolean_wait_warns_in_helms_line() {
    let context = TestContext::new();
    let dir = context.demo_chart(&[(
        "templates/cm.yaml",
        "kind: ConfigMap\nmetadata:\n  name: b\n",
    )]);
    for (value, expected) in [
        (
            "--wait=true",
            "level=WARN msg=\"--wait=true is deprecated (boolean value) and can be replaced with --wait=watcher\"",
        ),
        (
            "--wait=false",
            "level=WARN msg=\"--wait=false is deprecated (boolean value) and can be replaced with --wait=hookOnly\"",
        ),
    ] {
        let args = ["install", "web", dir.as_str(), "--dry-run=client", value];
        let ours = context.run(&args);
        assert!(ours.status.success(), "{}", stderr(&ours));
        assert_eq!(log_lines(&stderr(&ours)), [expected]);
        if helm_or_skip("boolean_wait_warns_in_helms_line").is_some() {
            let helm = context.helm().unwrap().args(args).output().unwrap();
            assert!(helm.status.success(), "{}", stderr(&helm));
            assert_eq!(log_lines(&stderr(&helm)), [expected]);
        }
    }
}

/// helm's lint loads the chart once per rule that needs it, and each load logs the
/// symbolic links it follows: chartkit's lint prints the same lines.
#[test]
fn lint_logs_symbolic_links_once_per_load_as_helm() {
    let context = TestContext::new();
    let dir = context.demo_chart(&[(
        "templates/cm.yaml",
        "kind: ConfigMap\nmetadata:\n  name: b\n",
    )]);
    std::fs::write(context.path("outside.txt"), "x\n").unwrap();
    std::os::unix::fs::symlink(context.path("outside.txt"), context.path("demo/linked.txt"))
        .unwrap();
    let args = ["lint", dir.as_str()];
    let ours = context.run(&args);
    assert!(ours.status.success(), "{}", stderr(&ours));
    let line = format!(
        "level=INFO msg=\"found symbolic link in path. Contents of linked file included and used\" path={} resolved={}",
        std::path::absolute(context.dir().join(&dir).join("linked.txt"))
            .unwrap()
            .display(),
        std::fs::canonicalize(context.path("outside.txt"))
            .unwrap()
            .display()
    );
    assert_eq!(log_lines(&stderr(&ours)), [line.clone(), line.clone()]);
    if helm_or_skip("lint_logs_symbolic_links_once_per_load_as_helm").is_some() {
        let helm = context.helm().unwrap().args(args).output().unwrap();
        assert!(helm.status.success(), "{}", stderr(&helm));
        assert_eq!(log_lines(&stderr(&helm)), [line.clone(), line]);
    }
}
