//! `template --validate` against a sandbox, with helm 4.1.4 as the oracle: the chart is
//! rendered with the cluster's version and API versions (the flags' are ignored, as helm
//! ignores them), the output is helm's byte for byte, and what an install would refuse
//! fails with nothing printed: kinds the cluster does not serve, objects another owner
//! holds, and (where chartkit goes further than helm) fields the schemas do not declare.

use std::process::{Command, Output};

use chartkit_tests::TestContext;
use chartkit_tests::sandbox::{SandboxProcess, run_ok};
use chartkit_tests::{stderr, stdout};

const NAME: &str = "template_validate";

fn chart(ctx: &TestContext) -> String {
    ctx.demo_chart(&[
        (
            "values.yaml",
            "badKind: false\nbadField: false\nbadNested: false\n",
        ),
        (
            "templates/caps.yaml",
            r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: caps
data:
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
  deployments: {{ .Capabilities.APIVersions.Has "apps/v1/Deployment" | quote }}
  fake: {{ .Capabilities.APIVersions.Has "fake.io/v1" | quote }}
  all: {{ .Capabilities.APIVersions | sortAlpha | toJson | quote }}
  namespace: {{ .Release.Namespace | quote }}
"#,
        ),
        (
            "templates/deploy.yaml",
            r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: app
          image: nginx:1.27
          {{- if .Values.badNested }}
          imagePulPolicy: Always
          {{- end }}
"#,
        ),
        (
            "templates/bad.yaml",
            r#"{{- if .Values.badKind }}
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
{{- end }}
{{- if .Values.badField }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: odd
notAField: 1
{{- end }}
"#,
        ),
    ])
}

/// Both tools on the same arguments: (chartkit's output, helm's), or None without helm.
fn both(sandbox: &SandboxProcess, ctx: &TestContext, args: &[&str]) -> Option<(Output, Output)> {
    let mut helm = sandbox.helm(ctx, NAME)?;
    let theirs = helm.args(args).output().expect("run helm");
    let ours = sandbox
        .chartkit(ctx)
        .args(args)
        .output()
        .expect("run chartkit");
    Some((ours, theirs))
}

/// helm 4 marks --validate deprecated on stderr; the rest is its error.
fn helm_error(output: &Output) -> String {
    stderr(output)
        .lines()
        .filter(|l| !l.starts_with("Flag --validate has been deprecated"))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn validate_renders_for_the_cluster_as_helm_does() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let chart = chart(&ctx);
    let args = [
        "template",
        "rel",
        &chart,
        "--validate",
        "--kube-version",
        "1.20.0",
        "-a",
        "fake.io/v1",
        "-n",
        "team",
    ];
    let Some((ours, theirs)) = both(&sandbox, &ctx, &args) else {
        return;
    };
    assert!(theirs.status.success(), "{}", stderr(&theirs));
    assert!(ours.status.success(), "{}", stderr(&ours));
    assert_eq!(stdout(&ours), stdout(&theirs));
    let rendered = stdout(&ours);
    assert!(rendered.contains("deployments: \"true\""), "{rendered}");
    assert!(rendered.contains("fake: \"false\""), "{rendered}");
    assert!(rendered.contains("namespace: \"team\""), "{rendered}");
    assert!(!rendered.contains("v1.20.0"), "{rendered}");
    assert_eq!(stderr(&ours), "");

    // Without --validate the flags' capabilities are used, so the two outputs differ.
    let offline = run_ok(ctx.chartkit().args([
        "template",
        "rel",
        &chart,
        "--kube-version",
        "1.20.0",
        "-a",
        "fake.io/v1",
    ]));
    assert!(stdout(&offline).contains("kube: \"v1.20.0\""));

    // The Kubernetes flags reach a command otherwise parsed on its fast path.
    let flagged = run_ok(
        ctx.chartkit()
            .args(["template", "rel", &chart, "--validate", "-n", "team"])
            .arg("--kubeconfig")
            .arg(&sandbox.kubeconfig),
    );
    assert_eq!(stdout(&flagged), rendered);
    let nowhere = ctx
        .chartkit()
        .env("KUBECONFIG", ctx.path("missing-kubeconfig"))
        .args(["template", "rel", &chart, "--validate"])
        .output()
        .expect("run chartkit");
    assert!(!nowhere.status.success());
    assert_eq!(stdout(&nowhere), "");
    assert!(
        stderr(&nowhere).starts_with("Error: no kubeconfig found"),
        "{}",
        stderr(&nowhere)
    );
}

#[test]
fn validate_refuses_kinds_the_cluster_does_not_serve() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let chart = chart(&ctx);
    let Some((ours, theirs)) = both(
        &sandbox,
        &ctx,
        &["template", &chart, "--validate", "--set", "badKind=true"],
    ) else {
        return;
    };
    // helm's builder fails too (against the sandbox, on the schema of the unknown kind;
    // on a real cluster with the mapping error chartkit gives).
    assert_eq!(theirs.status.code(), Some(1), "{}", stderr(&theirs));
    assert_eq!(stdout(&theirs), "");
    assert_eq!(ours.status.code(), Some(1));
    assert_eq!(stdout(&ours), "");
    assert_eq!(
        stderr(&ours),
        "Error: unable to build kubernetes objects from release manifest: resource mapping not found for name: \"w\" namespace: \"\" from \"demo/templates/bad.yaml\": no matches for kind \"Widget\" in version \"example.com/v1\"\nensure CRDs are installed first\n"
    );
}

#[test]
fn validate_refuses_objects_another_owner_holds() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let Some(mut kubectl) = sandbox.kubectl(&ctx, NAME) else {
        return;
    };
    run_ok(kubectl.args(["create", "configmap", "caps", "--from-literal=a=b"]));
    let chart = chart(&ctx);
    let Some((ours, theirs)) = both(&sandbox, &ctx, &["template", &chart, "--validate"]) else {
        return;
    };
    assert_eq!(theirs.status.code(), Some(1));
    assert_eq!(ours.status.code(), Some(1));
    assert_eq!(stdout(&ours), "");
    assert_eq!(stderr(&ours), helm_error(&theirs));
    assert!(
        stderr(&ours).starts_with("Error: unable to continue with install: ConfigMap \"caps\" in namespace \"default\" exists and cannot be imported into the current release: invalid ownership metadata;"),
        "{}",
        stderr(&ours)
    );

    // Marked as the release's, the object is no obstacle, for either.
    let mut kubectl: Command = sandbox.kubectl(&ctx, NAME).expect("kubectl");
    run_ok(kubectl.args([
        "label",
        "configmap",
        "caps",
        "app.kubernetes.io/managed-by=Helm",
    ]));
    let mut kubectl: Command = sandbox.kubectl(&ctx, NAME).expect("kubectl");
    run_ok(kubectl.args([
        "annotate",
        "configmap",
        "caps",
        "meta.helm.sh/release-name=release-name",
        "meta.helm.sh/release-namespace=default",
    ]));
    let (ours, theirs) = both(&sandbox, &ctx, &["template", &chart, "--validate"]).expect("helm");
    assert!(theirs.status.success(), "{}", stderr(&theirs));
    assert!(ours.status.success(), "{}", stderr(&ours));
    assert_eq!(stdout(&ours), stdout(&theirs));
}

#[test]
fn validate_refuses_fields_the_schemas_do_not_declare() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let chart = chart(&ctx);
    for (release, set, message) in [
        (
            "field",
            "badField=true",
            "Error: ConfigMap/odd: failed to create typed patch object (default/odd; /v1, Kind=ConfigMap): .notAField: field not declared in schema\n",
        ),
        (
            "nested",
            "badNested=true",
            "Error: Deployment/web: failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.template.spec.containers[name=\"app\"].imagePulPolicy: field not declared in schema\n",
        ),
    ] {
        let Some((ours, theirs)) = both(
            &sandbox,
            &ctx,
            &["template", &chart, "--validate", "--set", set],
        ) else {
            return;
        };
        assert_eq!(ours.status.code(), Some(1), "{set}");
        assert_eq!(stdout(&ours), "", "{set}");
        assert_eq!(stderr(&ours), message, "{set}");
        // helm leaves fields to the API server and sends nothing in a dry run, so it
        // renders these; its install (elsewhere, so that nothing it leaves is in the
        // way) then fails for the reason chartkit gives here.
        assert!(theirs.status.success(), "{set}: {}", stderr(&theirs));
        let mut helm = sandbox.helm(&ctx, NAME).expect("helm");
        let installed = helm
            .args(["install", release, &chart, "--set", set])
            .args(["-n", &format!("elsewhere-{release}"), "--create-namespace"])
            .output()
            .expect("run helm");
        assert!(!installed.status.success());
        let reason = message
            .rsplit_once("): ")
            .map(|(_, r)| r)
            .unwrap_or_default();
        assert!(
            stderr(&installed).ends_with(reason),
            "{set}: {}",
            stderr(&installed)
        );
    }
    // Nothing was written where chartkit validated.
    let mut kubectl = sandbox.kubectl(&ctx, NAME).expect("kubectl");
    let left = run_ok(kubectl.args(["get", "configmaps,deployments", "-o", "name"]));
    assert!(
        !stdout(&left).contains("configmap/odd") && !stdout(&left).contains("deployment"),
        "{}",
        stdout(&left)
    );
}
