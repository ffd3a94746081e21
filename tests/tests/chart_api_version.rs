//! A chart's apiVersion as Helm 4 judges it when it loads a chart: v1, v2 (and none) load;
//! v3, Helm 4's experimental format, loads and is then refused by `template` and
//! `package` ("invalid chart apiVersion"); anything else is refused as it loads
//! ("unsupported chart version"). `show` reads a chart of any apiVersion.

use chartkit_tests::{TestContext, stderr, stdout};

fn chart_with_api_version(context: &TestContext, api_version: &str) -> String {
    let dir = context.demo_chart(&[(
        "templates/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
    )]);
    std::fs::write(
        context.path("demo/Chart.yaml"),
        format!("apiVersion: {api_version}\nname: demo\nversion: 0.1.0\n"),
    )
    .unwrap();
    dir
}

/// (apiVersion, the words of helm's error for template and package, or None when it works)
const CASES: &[(&str, Option<&str>)] = &[
    ("v1", None),
    ("v2", None),
    ("v3", Some("invalid chart apiVersion")),
    ("v9", Some("unsupported chart version")),
    ("apps/v1", Some("unsupported chart version")),
];

#[test]
fn api_versions_helm_does_not_render_are_refused_by_template_and_package() {
    for (api_version, refusal) in CASES {
        let context = TestContext::new();
        let chart = chart_with_api_version(&context, api_version);
        for args in [
            &["template", "x", chart.as_str()][..],
            &["package", chart.as_str(), "-d", "out"],
        ] {
            let output = context.run(args);
            match refusal {
                None => assert!(
                    output.status.success(),
                    "{api_version} {args:?}: {}",
                    stderr(&output)
                ),
                Some(words) => {
                    assert_eq!(output.status.code(), Some(1), "{api_version} {args:?}");
                    let message = stderr(&output);
                    assert!(message.starts_with("Error: "), "{message}");
                    assert!(message.contains(words), "{api_version} {args:?}: {message}");
                    assert!(message.contains("hint: set `apiVersion: v2`"), "{message}");
                }
            }
            if let Some(mut helm) = context.helm() {
                let theirs = helm.args(args).output().unwrap();
                match refusal {
                    None => assert!(theirs.status.success(), "helm {api_version} {args:?}"),
                    Some(words) => assert_eq!(
                        stderr(&theirs),
                        format!("Error: {words}\n"),
                        "helm {api_version} {args:?}"
                    ),
                }
            }
        }
        assert!(
            refusal.is_none() || !context.path("out").exists(),
            "nothing packaged for {api_version}"
        );
        // show reads them all.
        let shown = context.run(&["show", "chart", &chart]);
        assert!(shown.status.success(), "{api_version}: {}", stderr(&shown));
        assert!(stdout(&shown).starts_with(&format!("apiVersion: {api_version}\n")));
    }
}

#[test]
fn a_subcharts_api_version_is_not_judged_at_load() {
    // Helm's loader looks at the apiVersion of the chart it is given only.
    let context = TestContext::new();
    let chart = context.demo_chart(&[
        (
            "charts/sub/Chart.yaml",
            "apiVersion: v9\nname: sub\nversion: 0.1.0\n",
        ),
        (
            "templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
        ),
    ]);
    let output = context.run(&["template", "x", &chart]);
    assert!(output.status.success(), "{}", stderr(&output));
    if let Some(mut helm) = context.helm() {
        let theirs = helm.args(["template", "x", &chart]).output().unwrap();
        assert_eq!(stdout(&theirs), stdout(&output));
    }
}
