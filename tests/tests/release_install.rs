//! chartkit's install, upgrade, rollback and uninstall against a sandbox, with helm and
//! kubectl as the oracles: helm sees chartkit's releases as its own (list, history,
//! manifest, uninstall), chartkit uninstalls helm's, objects carry helm's ownership marks,
//! hooks run and are deleted by policy, and failed waits name what was not ready.

use std::process::Output;

use chartkit_tests::TestContext;
use chartkit_tests::corpus::corpus_or_skip;
use chartkit_tests::sandbox::{SandboxProcess, run_ok};
use chartkit_tests::stdout as text;

const NAME: &str = "release_install";

fn helm(sandbox: &SandboxProcess, ctx: &TestContext, args: &[&str]) -> String {
    text(&run_ok(sandbox.helm(ctx, NAME).expect("helm").args(args)))
}

fn kubectl(sandbox: &SandboxProcess, ctx: &TestContext, args: &[&str]) -> Output {
    sandbox
        .kubectl(ctx, NAME)
        .expect("kubectl")
        .args(args)
        .output()
        .expect("run kubectl")
}

fn demo(ctx: &TestContext) -> String {
    ctx.demo_chart(&[
        ("values.yaml", "value: one\nextra: true\npodAnnotations: {}\n"),
        (
            "templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-cm\ndata:\n  value: {{ .Values.value | quote }}\n",
        ),
        (
            "templates/extra.yaml",
            "{{- if .Values.extra }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-extra\ndata:\n  a: b\n{{- end }}\n",
        ),
        (
            "templates/deploy.yaml",
            r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: demo
spec:
  replicas: 1
  selector:
    matchLabels: {app: demo}
  template:
    metadata:
      labels: {app: demo}
      annotations: {{ toJson .Values.podAnnotations }}
    spec:
      containers:
        - name: app
          image: nginx:1.27
"#,
        ),
        (
            "templates/hook.yaml",
            r#"apiVersion: batch/v1
kind: Job
metadata:
  name: demo-hook
  annotations:
    helm.sh/hook: pre-install
    helm.sh/hook-delete-policy: hook-succeeded
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: hook
          image: busybox
"#,
        ),
        ("templates/NOTES.txt", "Thanks for installing {{ .Release.Name }}.\n"),
    ])
}

fn podinfo(corpus: &std::path::Path) -> String {
    std::fs::read_dir(corpus.join("charts"))
        .expect("corpus charts")
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("podinfo-") && n.ends_with(".tgz"))
        })
        .expect("podinfo in the corpus")
        .display()
        .to_string()
}

/// chartkit's manifest for the chart as `helm get manifest` prints it: the documents of
/// `chartkit template` without hooks (helm adds a blank line after the stored manifest).
fn rendered(ctx: &TestContext, args: &[&str]) -> String {
    let mut full = vec!["template"];
    full.extend_from_slice(args);
    full.push("--no-hooks");
    let out = run_ok(ctx.chartkit().args(&full));
    text(&out)
}

#[test]
fn install_upgrade_rollback_uninstall_interoperate_with_helm() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.helm(&ctx, NAME).is_none() || sandbox.kubectl(&ctx, NAME).is_none() {
        return;
    }
    let chart = demo(&ctx);

    let installed = run_ok(sandbox.chartkit(&ctx).args([
        "install",
        "web",
        &chart,
        "-n",
        "apps",
        "--create-namespace",
        "--wait",
        "--timeout",
        "60s",
    ]));
    let out = text(&installed);
    for line in [
        "NAME: web",
        "NAMESPACE: apps",
        "STATUS: deployed",
        "REVISION: 1",
        "DESCRIPTION: Install complete",
        "Thanks for installing web.",
    ] {
        assert!(
            out.contains(line),
            "{line:?} missing from install output:\n{out}"
        );
    }

    let listed = helm(&sandbox, &ctx, &["list", "-n", "apps", "-o", "json"]);
    assert!(
        listed.contains("\"name\":\"web\"") && listed.contains("\"status\":\"deployed\""),
        "{listed}"
    );
    let manifest = helm(&sandbox, &ctx, &["get", "manifest", "web", "-n", "apps"]);
    assert_eq!(
        manifest.trim(),
        rendered(&ctx, &["web", &chart, "-n", "apps"]).trim(),
        "helm get manifest differs from chartkit's render"
    );

    // helm's ownership marks on the objects.
    let cm = text(&kubectl(
        &sandbox,
        &ctx,
        &["get", "configmap", "demo-cm", "-n", "apps", "-o", "json"],
    ));
    for mark in [
        "\"app.kubernetes.io/managed-by\": \"Helm\"",
        "\"meta.helm.sh/release-name\": \"web\"",
        "\"meta.helm.sh/release-namespace\": \"apps\"",
    ] {
        assert!(cm.contains(mark), "{mark} missing:\n{cm}");
    }
    // The pre-install hook ran, succeeded, and was deleted by its policy.
    let status = helm(
        &sandbox,
        &ctx,
        &["status", "web", "-n", "apps", "-o", "json"],
    );
    assert!(status.contains("\"phase\":\"Succeeded\""), "{status}");
    let hook = kubectl(&sandbox, &ctx, &["get", "job", "demo-hook", "-n", "apps"]);
    assert!(
        !hook.status.success(),
        "the hook-succeeded Job should be gone"
    );

    // A second install of the same name is refused.
    let again = sandbox
        .chartkit(&ctx)
        .args(["install", "web", &chart, "-n", "apps"])
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("cannot reuse a name that is still in use")
    );

    // Upgrade: a changed value, a dropped object.
    let upgraded = run_ok(sandbox.chartkit(&ctx).args([
        "upgrade",
        "web",
        &chart,
        "-n",
        "apps",
        "--set",
        "value=two",
        "--set",
        "extra=false",
    ]));
    assert!(
        text(&upgraded).contains("REVISION: 2"),
        "{}",
        text(&upgraded)
    );
    let value = text(&kubectl(
        &sandbox,
        &ctx,
        &[
            "get",
            "configmap",
            "demo-cm",
            "-n",
            "apps",
            "-o",
            "jsonpath={.data.value}",
        ],
    ));
    assert_eq!(value, "two");
    let extra = kubectl(
        &sandbox,
        &ctx,
        &["get", "configmap", "demo-extra", "-n", "apps"],
    );
    assert!(
        !extra.status.success(),
        "demo-extra was dropped from the chart and should be deleted"
    );
    let history = helm(
        &sandbox,
        &ctx,
        &["history", "web", "-n", "apps", "-o", "json"],
    );
    assert!(
        history.contains("\"revision\":1,")
            && history.contains("\"status\":\"superseded\"")
            && history.contains("\"status\":\"deployed\""),
        "{history}"
    );

    // Rollback to revision 1 brings the dropped object and the old value back.
    run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["rollback", "web", "1", "-n", "apps"]),
    );
    let value = text(&kubectl(
        &sandbox,
        &ctx,
        &[
            "get",
            "configmap",
            "demo-cm",
            "-n",
            "apps",
            "-o",
            "jsonpath={.data.value}",
        ],
    ));
    assert_eq!(value, "one");
    assert!(
        kubectl(
            &sandbox,
            &ctx,
            &["get", "configmap", "demo-extra", "-n", "apps"]
        )
        .status
        .success()
    );
    // Superseded revisions keep their descriptions, as helm leaves them.
    let history = helm(
        &sandbox,
        &ctx,
        &["history", "web", "-n", "apps", "-o", "json"],
    );
    let entries: Vec<serde_json::Value> = serde_json::from_str(&history).expect("history json");
    let described: Vec<(&str, &str)> = entries
        .iter()
        .map(|e| {
            (
                e["status"].as_str().unwrap_or(""),
                e["description"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        described,
        [
            ("superseded", "Install complete"),
            ("superseded", "Upgrade complete"),
            ("deployed", "Rollback to 1")
        ],
        "{history}"
    );

    // helm uninstalls chartkit's release.
    helm(
        &sandbox,
        &ctx,
        &["uninstall", "web", "-n", "apps", "--wait"],
    );
    assert!(
        !kubectl(
            &sandbox,
            &ctx,
            &["get", "configmap", "demo-cm", "-n", "apps"]
        )
        .status
        .success()
    );

    // chartkit uninstalls helm's release.
    helm(&sandbox, &ctx, &["install", "theirs", &chart, "-n", "apps"]);
    // chartkit upgrades it: it writes as helm's field manager, so there is nothing to take over.
    run_ok(sandbox.chartkit(&ctx).args([
        "upgrade",
        "theirs",
        &chart,
        "-n",
        "apps",
        "--set",
        "value=three",
    ]));
    let value = text(&kubectl(
        &sandbox,
        &ctx,
        &[
            "get",
            "configmap",
            "demo-cm",
            "-n",
            "apps",
            "-o",
            "jsonpath={.data.value}",
        ],
    ));
    assert_eq!(value, "three");
    let out = run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["uninstall", "theirs", "-n", "apps", "--wait"]),
    );
    assert_eq!(text(&out), "release \"theirs\" uninstalled\n");
    assert_eq!(helm(&sandbox, &ctx, &["list", "-n", "apps", "-q"]), "");
    assert!(
        !kubectl(&sandbox, &ctx, &["get", "deployment", "demo", "-n", "apps"])
            .status
            .success()
    );
}

#[test]
fn podinfo_installs_with_wait_as_helm_sees_it() {
    let ctx = TestContext::new();
    let Some(corpus) = corpus_or_skip("podinfo_installs_with_wait_as_helm_sees_it") else {
        return;
    };
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.helm(&ctx, NAME).is_none() {
        return;
    }
    let chart = podinfo(&corpus);
    run_ok(sandbox.chartkit(&ctx).args([
        "install",
        "pod",
        &chart,
        "-n",
        "web",
        "--create-namespace",
        "--wait",
    ]));
    let listed = helm(&sandbox, &ctx, &["list", "-n", "web", "-o", "json"]);
    assert!(
        listed.contains("\"name\":\"pod\"") && listed.contains("\"status\":\"deployed\""),
        "{listed}"
    );
    let manifest = helm(&sandbox, &ctx, &["get", "manifest", "pod", "-n", "web"]);
    assert_eq!(
        manifest.trim(),
        rendered(&ctx, &["pod", &chart, "-n", "web"]).trim()
    );
}

#[test]
fn failed_waits_name_the_resource_and_atomic_cleans_up() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.helm(&ctx, NAME).is_none() || sandbox.kubectl(&ctx, NAME).is_none() {
        return;
    }
    let chart = demo(&ctx);
    let crash = "podAnnotations.sandbox\\.chartkit\\.dev/fail=crashloop";
    let failed = sandbox
        .chartkit(&ctx)
        .args([
            "install",
            "bad",
            &chart,
            "-n",
            "apps",
            "--create-namespace",
            "--wait",
            "--timeout",
            "10s",
            "--set",
            crash,
            "--debug",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(
        !failed.status.success(),
        "the crashlooping install should fail"
    );
    assert!(stderr.contains("Deployment/demo"), "{stderr}");
    assert!(stderr.contains("CrashLoopBackOff"), "{stderr}");
    // Piped with --debug, the wait says what it is waiting for in plain lines before the
    // error (without --debug it prints nothing there, as helm).
    let waiting = stderr
        .lines()
        .find(|l| l.starts_with("Deployment/demo: waiting: "))
        .unwrap_or_else(|| panic!("no progress line for the Deployment:\n{stderr}"));
    assert!(
        stderr.find(waiting) < stderr.find("Error: "),
        "progress comes before the error:\n{stderr}"
    );
    let listed = helm(&sandbox, &ctx, &["list", "-n", "apps", "-o", "json"]);
    assert!(listed.contains("\"status\":\"failed\""), "{listed}");
    helm(
        &sandbox,
        &ctx,
        &["uninstall", "bad", "-n", "apps", "--wait"],
    );

    let atomic = sandbox
        .chartkit(&ctx)
        .args([
            "install",
            "bad",
            &chart,
            "-n",
            "apps",
            "--wait",
            "--timeout",
            "10s",
            "--atomic",
            "--set",
            crash,
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&atomic.stderr);
    assert!(!atomic.status.success());
    assert!(
        stderr.contains("has been uninstalled due to rollback-on-failure"),
        "{stderr}"
    );
    let left = text(&kubectl(
        &sandbox,
        &ctx,
        &[
            "get",
            "deployments,configmaps,jobs",
            "-n",
            "apps",
            "-o",
            "name",
        ],
    ));
    let left: Vec<&str> = left
        .lines()
        .filter(|l| !l.contains("kube-root-ca.crt"))
        .collect();
    assert!(left.is_empty(), "objects left after --atomic: {left:?}");
    assert_eq!(helm(&sandbox, &ctx, &["list", "-n", "apps", "-q"]), "");
}

#[test]
fn crds_are_installed_first_and_their_kinds_usable() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.helm(&ctx, NAME).is_none() || sandbox.kubectl(&ctx, NAME).is_none() {
        return;
    }
    let chart = ctx.demo_chart(&[
        (
            "crds/widgets.yaml",
            r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
"#,
        ),
        (
            "templates/widget.yaml",
            "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: 3\n",
        ),
    ]);
    let out = run_ok(sandbox.chartkit(&ctx).args([
        "install",
        "widgets",
        &chart,
        "-n",
        "apps",
        "--create-namespace",
        "--description",
        "with a CRD",
    ]));
    assert!(
        text(&out).contains("DESCRIPTION: with a CRD"),
        "{}",
        text(&out)
    );
    let widget = kubectl(
        &sandbox,
        &ctx,
        &[
            "get",
            "widgets.example.com",
            "w1",
            "-n",
            "apps",
            "-o",
            "jsonpath={.spec.size}",
        ],
    );
    assert_eq!(
        text(&widget),
        "3",
        "{}",
        String::from_utf8_lossy(&widget.stderr)
    );
    // The CRD is not part of the release's manifest, as with helm.
    let manifest = helm(
        &sandbox,
        &ctx,
        &["get", "manifest", "widgets", "-n", "apps"],
    );
    assert!(!manifest.contains("CustomResourceDefinition"), "{manifest}");
}

#[test]
fn a_failing_hook_fails_the_install_with_its_reason() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.helm(&ctx, NAME).is_none() || sandbox.kubectl(&ctx, NAME).is_none() {
        return;
    }
    let chart = ctx.demo_chart(&[
        (
            "templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-cm\n",
        ),
        (
            "templates/hook.yaml",
            r#"apiVersion: batch/v1
kind: Job
metadata:
  name: demo-hook
  annotations:
    helm.sh/hook: pre-install
    helm.sh/hook-delete-policy: hook-failed
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations:
        sandbox.chartkit.dev/fail: job-fail
    spec:
      restartPolicy: Never
      containers:
        - name: hook
          image: busybox
"#,
        ),
    ]);
    let failed = sandbox
        .chartkit(&ctx)
        .args([
            "install",
            "hooked",
            &chart,
            "-n",
            "apps",
            "--create-namespace",
            "--timeout",
            "30s",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(
        !failed.status.success(),
        "the failing hook should fail the install"
    );
    assert!(stderr.contains("failed pre-install: pre-install hook demo/templates/hook.yaml failed: Job/demo-hook failed"), "{stderr}");
    // The release's objects were never applied, the hook was deleted by its policy, and
    // the record says failed.
    assert!(
        !kubectl(
            &sandbox,
            &ctx,
            &["get", "configmap", "demo-cm", "-n", "apps"]
        )
        .status
        .success()
    );
    assert!(
        !kubectl(&sandbox, &ctx, &["get", "job", "demo-hook", "-n", "apps"])
            .status
            .success()
    );
    let listed = helm(&sandbox, &ctx, &["list", "-n", "apps", "-o", "json"]);
    assert!(listed.contains("\"status\":\"failed\""), "{listed}");
}
