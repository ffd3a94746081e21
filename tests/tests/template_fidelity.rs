//! What templates see of the built-in objects the render pipeline fills (`.Chart`,
//! `.Capabilities`), checked against recorded helm output and, when helm is installed,
//! against helm itself.

use chartkit_tests::peers::helm_or_skip;
use chartkit_tests::{TestContext, stderr, stdout};

/// Renders `demo` with chartkit (and helm, when present), expecting `expected` as the
/// output of `templates/t.yaml`.
fn renders_like_helm(test: &str, context: &TestContext, args: &[&str], expected: &str) {
    let chart = context.path("demo").display().to_string();
    let mut full = vec!["template", "rel", chart.as_str()];
    full.extend_from_slice(args);
    let ours = context.run(&full);
    assert!(ours.status.success(), "{}", stderr(&ours));
    let want = format!("---\n# Source: demo/templates/t.yaml\n{expected}");
    assert_eq!(stdout(&ours), want);
    if helm_or_skip(test).is_some() {
        let helm = context.helm().unwrap().args(&full).output().unwrap();
        assert_eq!(stdout(&helm), want, "{}", stderr(&helm));
    }
}

/// `.Chart` is Helm 4's metadata map: no annotations is a nil map, `null` in JSON.
#[test]
fn chart_metadata_encodes_like_helm() {
    let context = TestContext::new();
    context.demo_chart(&[(
        "templates/t.yaml",
        "a: {{ .Chart | toJson }}\nb: {{ .Chart.Annotations | toJson }} {{ typeOf .Chart.Annotations }} {{ printf \"%#v\" .Chart.Annotations }} {{ empty .Chart.Annotations }}\n",
    )]);
    renders_like_helm(
        "chart_metadata_encodes_like_helm",
        &context,
        &[],
        "a: {\"APIVersion\":\"v2\",\"Annotations\":null,\"AppVersion\":\"\",\"Condition\":\"\",\"Dependencies\":[],\"Deprecated\":false,\"Description\":\"\",\"Home\":\"\",\"Icon\":\"\",\"IsRoot\":true,\"Keywords\":[],\"KubeVersion\":\"\",\"Maintainers\":[],\"Name\":\"demo\",\"Sources\":[],\"Tags\":\"\",\"Type\":\"\",\"Version\":\"0.1.0\"}\nb: null map[string]string map[string]string(nil) true\n",
    );
}

/// `--kube-version` keeps the text given as `.KubeVersion.Version`; the version printed
/// (its `String`) is the numbers alone.
#[test]
fn kube_version_keeps_its_suffix_like_helm() {
    let context = TestContext::new();
    context.demo_chart(&[(
        "templates/t.yaml",
        "a: {{ .Capabilities.KubeVersion }} {{ .Capabilities.KubeVersion.Version }} {{ .Capabilities.KubeVersion.GitVersion }} {{ .Capabilities.KubeVersion | toString }} {{ .Capabilities.KubeVersion | toJson }}\n",
    )]);
    renders_like_helm(
        "kube_version_keeps_its_suffix_like_helm",
        &context,
        &["--kube-version", "1.33.4-gke.1245000"],
        "a: v1.33.4 v1.33.4-gke.1245000 v1.33.4-gke.1245000 {v1.33.4-gke.1245000 v1.33.4 1 33} {\"Version\":\"v1.33.4-gke.1245000\",\"Major\":\"1\",\"Minor\":\"33\"}\n",
    );
}
