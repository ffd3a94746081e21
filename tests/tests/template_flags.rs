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
