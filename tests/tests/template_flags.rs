//! `chartkit template` flags whose effect is easy to get wrong, checked against helm.

use chartkit_tests::peers::helm_or_skip;
use chartkit_tests::{TestContext, stderr, stdout};

/// helm template presets the release name before it reads --generate-name: the output
/// still says `release-name`, and a NAME together with the flag is refused.
#[test]
fn generate_name_keeps_release_name_like_helm() {
    let context = TestContext::new();
    assert!(context.run(&["create", "web"]).status.success());
    let generated = context.run(&["template", "-g", "web"]);
    assert!(generated.status.success(), "{}", stderr(&generated));
    let plain = context.run(&["template", "web"]);
    assert_eq!(stdout(&generated), stdout(&plain));
    assert!(stdout(&plain).contains("app.kubernetes.io/instance: release-name"));

    let both = context.run(&["template", "mine", "web", "-g"]);
    assert!(!both.status.success());
    assert!(
        stderr(&both).contains("cannot set --generate-name and also specify a name"),
        "{}",
        stderr(&both)
    );

    if helm_or_skip("generate_name_keeps_release_name_like_helm").is_some() {
        let helm = context
            .helm()
            .unwrap()
            .args(["template", "-g", "web"])
            .output()
            .unwrap();
        assert_eq!(stdout(&generated), stdout(&helm));
    }
}

/// Flag combinations the recorded corpus cases do not use.
const FLAG_SETS: &[&[&str]] = &[
    &["--include-crds"],
    &["--no-hooks", "--is-upgrade"],
    &["--skip-tests", "--kube-version", "1.29.3", "-n", "other"],
    &[
        "--api-versions",
        "monitoring.coreos.com/v1",
        "--api-versions",
        "networking.k8s.io/v1/Ingress",
    ],
    &["--set", "replicaCount=3", "--set", "global.foo=bar"],
    &[
        "--set-string",
        "image.tag=1.0",
        "--set",
        "fullnameOverride=x",
    ],
    &[
        "--set",
        "nameOverride=null",
        "--set-json",
        "podAnnotations={\"a\":\"b\"}",
    ],
    &["--show-only", "templates/NOTES.txt"],
];

/// Every chart whose default case is deterministic, rendered with other flags: the same
/// stdout and the same success or failure as helm.
#[test]
fn corpus_charts_with_other_flags_match_helm() {
    let Some(corpus) =
        chartkit_tests::corpus::corpus_or_skip("corpus_charts_with_other_flags_match_helm")
    else {
        return;
    };
    if helm_or_skip("corpus_charts_with_other_flags_match_helm").is_none() {
        return;
    }
    let context = TestContext::new();
    let mut packages: Vec<String> = chartkit_tests::corpus::cases(&corpus)
        .into_iter()
        .filter(|c| c.name == "default" && c.deterministic && c.exit_code == 0)
        .map(|c| c.package)
        .collect();
    packages.sort();
    packages.dedup();
    assert!(!packages.is_empty());
    let mut failures = Vec::new();
    let mut runs = 0;
    for package in &packages {
        for flags in FLAG_SETS {
            let mut args = vec!["template", "rel", package.as_str()];
            args.extend_from_slice(flags);
            let ours = context
                .chartkit()
                .current_dir(&corpus)
                .args(&args)
                .output()
                .unwrap();
            let theirs = context
                .helm()
                .unwrap()
                .current_dir(&corpus)
                .args(&args)
                .output()
                .unwrap();
            runs += 1;
            if ours.status.success() != theirs.status.success() || ours.stdout != theirs.stdout {
                failures.push(format!("{package} {}", flags.join(" ")));
            }
        }
    }
    eprintln!(
        "{} passed, {} failed",
        runs - failures.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "differs from helm: {failures:#?}");
}

/// A value of `kind` (pflag's name for the flag's type, as `--help` prints it) for the
/// flag `name`, harmless for a render of helm's starter chart; `None` for a boolean.
fn flag_value(context: &TestContext, name: &str, kind: &str) -> Option<String> {
    let file = |name: &str, text: &str| {
        let path = context.path(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    Some(match (name, kind) {
        (_, "") => return None,
        ("api-versions", _) => "v1".into(),
        ("kube-version", _) => "1.30.0".into(),
        ("labels", _) => "a=b".into(),
        ("name-template", _) => "fixed".into(),
        ("output-dir", _) => "out".into(),
        ("set-file", _) => format!("a={}", file("a.txt", "x\n")),
        ("set" | "set-string" | "set-json" | "set-literal", _) => "a=1".into(),
        ("values", _) => file("more.yaml", "replicaCount: 2\n"),
        ("show-only", _) => "templates/service.yaml".into(),
        ("timeout", _) => "1m".into(),
        ("version", _) => "0.1.0".into(),
        ("server-side", _) => "true".into(),
        // Unused for a chart on disk; helm only reads them to reach a registry.
        ("ca-file" | "cert-file" | "key-file" | "keyring", _) => file("empty.pem", ""),
        ("repo", _) => "http://127.0.0.1:1".into(),
        (_, "string") => "x".into(),
        (_, kind) => panic!("no value for --{name} of type {kind}"),
    })
}

/// A flag's name and type from a line of pflag's usage (`  -a, --api-versions strings
/// Kubernetes api...`; a boolean has no type, its description follows after spaces).
fn pflag_usage(line: &str) -> Option<(&str, &str)> {
    let line = line.trim_start();
    let line = match line.strip_prefix('-') {
        Some(rest) if !rest.starts_with('-') => rest.get(3..)?,
        _ => line,
    };
    let rest = line.strip_prefix("--")?;
    let (name, rest) = rest.split_once(' ')?;
    let kind = match rest.starts_with(' ') {
        true => "",
        false => rest.split_whitespace().next().unwrap_or(""),
    };
    Some((name, kind))
}

/// Every flag `helm template --help` lists in its own section (the global flags are
/// the root command's), given a value of its type (a flag whose value is optional, such
/// as `--wait` and `--dry-run`, bare), is accepted by chartkit as by helm: the same
/// exit status, output and log lines on helm's starter chart. Most are install's flags,
/// which change nothing in what template prints.
#[test]
fn every_flag_of_helms_template_is_accepted_as_helm_accepts_it() {
    let context = TestContext::new();
    assert!(context.run(&["create", "web"]).status.success());
    let plain = context.run(&["template", "web"]);
    assert!(plain.status.success(), "{}", stderr(&plain));
    // Install's flags that change nothing in what template prints.
    let quiet = context.run(&[
        "template",
        "web",
        "--wait",
        "--wait-for-jobs",
        "--timeout",
        "1m",
        "--create-namespace",
        "--description",
        "d",
        "--hide-notes",
        "--take-ownership",
        "--replace",
        "--rollback-on-failure",
        "--enable-dns",
        "--disable-openapi-validation",
        "--server-side=false",
        "--force-replace",
        "--dry-run=client",
        "--labels",
        "a=b",
    ]);
    assert!(quiet.status.success(), "{}", stderr(&quiet));
    assert_eq!(stdout(&quiet), stdout(&plain));
    assert_eq!(stderr(&quiet), "");
    let Some(helm) = helm_or_skip("every_flag_of_helms_template_is_accepted_as_helm_accepts_it")
    else {
        return;
    };
    let help = context
        .hermetic(&helm)
        .args(["template", "--help"])
        .output()
        .unwrap();
    let help = stdout(&help);
    let section = help
        .split("\nFlags:\n")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .expect("a Flags: section in helm template --help");
    // --post-renderer needs a plugin to name; tests/tests/plugins.rs compares it with helm.
    let not_checked = ["post-renderer", "post-renderer-args"];
    let mut checked = Vec::new();
    let mut differences = Vec::new();
    for line in section.lines() {
        let Some((name, kind)) = pflag_usage(line) else {
            continue;
        };
        if not_checked.contains(&name) || name == "help" {
            continue;
        }
        let mut args = vec!["template".to_owned(), "web".to_owned()];
        // A flag whose value is optional goes bare.
        let value = match kind.contains("[=") {
            true => None,
            false => flag_value(&context, name, kind),
        };
        match value {
            Some(value) => args.extend([format!("--{name}"), value]),
            None => args.push(format!("--{name}")),
        }
        let run = |command: &mut std::process::Command| {
            let _ = std::fs::remove_dir_all(context.path("out"));
            let output = command.args(&args).output().unwrap();
            let logged: Vec<String> = stderr(&output)
                .lines()
                .filter(|l| l.starts_with("level=") || l.starts_with("Flag --"))
                .map(str::to_owned)
                .collect();
            (output.status.success(), stdout(&output), logged)
        };
        let ours = run(&mut context.chartkit());
        let theirs = run(&mut context.hermetic(&helm));
        if ours != theirs {
            differences.push(format!(
                "{}:\n  chartkit: {:?}\n  helm:     {:?}",
                args.join(" "),
                (ours.0, &ours.2),
                (theirs.0, &theirs.2)
            ));
        }
        checked.push(name.to_owned());
    }
    assert!(
        checked.len() >= 50,
        "only {} flags found: {checked:?}",
        checked.len()
    );
    for wanted in [
        "wait",
        "timeout",
        "dry-run",
        "labels",
        "name-template",
        "server-side",
    ] {
        assert!(
            checked.iter().any(|c| c == wanted),
            "--{wanted} not checked"
        );
    }
    assert!(
        differences.is_empty(),
        "{} of {} flags differ from helm's template:\n{}",
        differences.len(),
        checked.len(),
        differences.join("\n")
    );
}
