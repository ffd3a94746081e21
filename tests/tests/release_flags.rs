//! Helm 4's object-writing flags and the name-reuse flags, against a sandbox with helm as
//! the oracle: `--server-side=false` writes client-side and records `csa` (and `auto`
//! follows it, for chartkit and for helm), `--force-replace` only client-side,
//! `--take-ownership` adopts unmarked objects, `--replace` reuses an uninstalled name as
//! helm does, and `--upgrade-crds` updates the chart's CRDs, which plain upgrades never do.

use std::process::Command;

use chartkit_tests::TestContext;
use chartkit_tests::sandbox::{SandboxProcess, run_ok};
use chartkit_tests::stdout as text;
use serde_json::Value;

const NAME: &str = "release_flags";

fn helm(sandbox: &SandboxProcess, ctx: &TestContext, args: &[&str]) -> String {
    text(&run_ok(sandbox.helm(ctx, NAME).expect("helm").args(args)))
}

fn kubectl_json(sandbox: &SandboxProcess, ctx: &TestContext, args: &[&str]) -> Value {
    let out = run_ok(
        sandbox
            .kubectl(ctx, NAME)
            .expect("kubectl")
            .args(args)
            .args(["-o", "json", "--show-managed-fields"]),
    );
    serde_json::from_slice(&out.stdout).expect("kubectl json")
}

fn apply_method(sandbox: &SandboxProcess, ctx: &TestContext, release: &str) -> String {
    let meta: Value = serde_json::from_str(&helm(
        sandbox,
        ctx,
        &["get", "metadata", release, "-o", "json"],
    ))
    .expect("metadata json");
    meta["applyMethod"].as_str().unwrap_or_default().to_string()
}

fn failure(command: &mut Command) -> String {
    let out = command.output().expect("run");
    assert!(!out.status.success(), "expected a failure: {}", text(&out));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn crd(column: Option<&str>) -> String {
    let columns = column
        .map(|c| {
            format!(
                "      additionalPrinterColumns:\n        - name: {c}\n          type: string\n          jsonPath: .spec.{c}\n"
            )
        })
        .unwrap_or_default();
    format!(
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  names: {{kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
{columns}      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
"#
    )
}

fn chart(ctx: &TestContext, column: Option<&str>) -> String {
    ctx.demo_chart(&[
        ("values.yaml", "value: one\n"),
        ("crds/gadgets.yaml", &crd(column)),
        (
            "templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  value: {{ .Values.value | quote }}\n",
        ),
        (
            "templates/hook.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-hook\n  annotations:\n    helm.sh/hook: pre-upgrade\ndata:\n  value: {{ .Values.value | quote }}\n",
        ),
    ])
}

#[test]
fn client_side_writes_are_recorded_and_followed_by_auto() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.helm(&ctx, NAME).is_none() || sandbox.kubectl(&ctx, NAME).is_none() {
        return;
    }
    let chart = chart(&ctx, None);
    run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["install", "csa", &chart, "--server-side=false"]),
    );
    assert_eq!(apply_method(&sandbox, &ctx, "csa"), "csa");
    let cm = kubectl_json(&sandbox, &ctx, &["get", "configmap", "csa-cm"]);
    let managers = &cm["metadata"]["managedFields"];
    assert!(
        managers.as_array().is_some_and(|m| m
            .iter()
            .any(|f| f["manager"] == "helm" && f["operation"] == "Update")),
        "a client-side write is an Update: {managers}"
    );

    // auto follows the recorded method, for chartkit and for helm.
    run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["upgrade", "csa", &chart, "--set", "value=two"]),
    );
    assert_eq!(apply_method(&sandbox, &ctx, "csa"), "csa");
    let cm = kubectl_json(&sandbox, &ctx, &["get", "configmap", "csa-cm"]);
    assert_eq!(cm["data"]["value"], "two");
    // Hooks are written the release's way too.
    let hook = kubectl_json(&sandbox, &ctx, &["get", "configmap", "csa-hook"]);
    assert!(
        hook["metadata"]["managedFields"]
            .as_array()
            .is_some_and(|m| m.iter().all(|f| f["operation"] == "Update")),
        "{hook}"
    );
    helm(
        &sandbox,
        &ctx,
        &["upgrade", "csa", &chart, "--set", "value=three"],
    );
    assert_eq!(apply_method(&sandbox, &ctx, "csa"), "csa");

    // Replacement is client-side only, as in helm.
    run_ok(sandbox.chartkit(&ctx).args([
        "upgrade",
        "csa",
        &chart,
        "--set",
        "value=four",
        "--force-replace",
    ]));
    let cm = kubectl_json(&sandbox, &ctx, &["get", "configmap", "csa-cm"]);
    assert_eq!(cm["data"]["value"], "four");
    let refused = failure(sandbox.chartkit(&ctx).args([
        "upgrade",
        "csa",
        &chart,
        "--server-side=true",
        "--force",
    ]));
    assert!(
        refused
            .contains("invalid operation: cannot use server-side apply and force replace together"),
        "{refused}"
    );
    // And back to server-side apply: recorded as such.
    run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["upgrade", "csa", &chart, "--server-side"]),
    );
    assert_eq!(apply_method(&sandbox, &ctx, "csa"), "ssa");
    // A new release is written server-side by default.
    run_ok(sandbox.chartkit(&ctx).args(["install", "ssa", &chart]));
    assert_eq!(apply_method(&sandbox, &ctx, "ssa"), "ssa");
}

#[test]
fn take_ownership_and_replace_reuse_what_exists() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.helm(&ctx, NAME).is_none() || sandbox.kubectl(&ctx, NAME).is_none() {
        return;
    }
    let chart = chart(&ctx, None);
    run_ok(sandbox.kubectl(&ctx, NAME).expect("kubectl").args([
        "create",
        "configmap",
        "own-cm",
        "--from-literal=value=mine",
    ]));
    let refused = failure(sandbox.chartkit(&ctx).args(["install", "own", &chart]));
    assert!(refused.contains("ConfigMap \"own-cm\""), "{refused}");
    // Adopting does not take fields another manager set (helm fails the same way).
    let conflict =
        failure(
            sandbox
                .chartkit(&ctx)
                .args(["install", "own", &chart, "--take-ownership"]),
        );
    assert!(
        conflict.contains("conflict with \"kubectl-create\"") && conflict.contains(".data.value"),
        "{conflict}"
    );
    // The failed install left a failed release: --replace reuses its name.
    run_ok(sandbox.chartkit(&ctx).args([
        "install",
        "own",
        &chart,
        "--take-ownership",
        "--force-conflicts",
        "--replace",
    ]));
    let own = helm(&sandbox, &ctx, &["history", "own", "-o", "json"]);
    assert!(
        own.contains("\"revision\":1,") && own.contains("\"status\":\"failed\""),
        "{own}"
    );
    assert!(own.contains("\"revision\":2,"), "{own}");
    let cm = kubectl_json(&sandbox, &ctx, &["get", "configmap", "own-cm"]);
    assert_eq!(cm["data"]["value"], "one");
    assert_eq!(
        cm["metadata"]["annotations"]["meta.helm.sh/release-name"],
        "own"
    );

    // --replace after an uninstall that kept its history: the history goes on, as helm's.
    for tool in ["chartkit", "helm"] {
        let name = format!("re-{tool}");
        let run = |args: &[&str]| -> String {
            if tool == "chartkit" {
                text(&run_ok(sandbox.chartkit(&ctx).args(args)))
            } else {
                helm(&sandbox, &ctx, args)
            }
        };
        run(&["install", &name, &chart]);
        run(&["uninstall", &name, "--keep-history"]);
        let again = if tool == "chartkit" {
            failure(sandbox.chartkit(&ctx).args(["install", &name, &chart]))
        } else {
            failure(
                sandbox
                    .helm(&ctx, NAME)
                    .expect("helm")
                    .args(["install", &name, &chart]),
            )
        };
        assert!(
            again.contains("cannot reuse a name that is still in use"),
            "{again}"
        );
        run(&["install", &name, &chart, "--replace"]);
    }
    let history = |name: &str| -> Vec<(i64, String, String)> {
        let json: Vec<Value> =
            serde_json::from_str(&helm(&sandbox, &ctx, &["history", name, "-o", "json"]))
                .expect("history json");
        json.iter()
            .map(|r| {
                (
                    r["revision"].as_i64().unwrap_or(0),
                    r["status"].as_str().unwrap_or_default().to_string(),
                    r["description"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    };
    let ours = history("re-chartkit");
    assert_eq!(ours, history("re-helm"));
    assert_eq!(ours.len(), 2, "{ours:?}");
    assert_eq!(ours[1].1, "deployed");
}

#[test]
fn upgrade_crds_updates_the_chart_crds() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.kubectl(&ctx, NAME).is_none() {
        return;
    }
    let first = chart(&ctx, None);
    run_ok(sandbox.chartkit(&ctx).args(["install", "crds", &first]));
    let columns = |sandbox: &SandboxProcess| -> Value {
        kubectl_json(sandbox, &ctx, &["get", "crd", "gadgets.example.com"])["spec"]["versions"]
            [0]["additionalPrinterColumns"]
            .clone()
    };
    assert_eq!(columns(&sandbox), Value::Null);
    // The same chart with a new column in its CRD (written over the first).
    let second = chart(&ctx, Some("colour"));
    run_ok(sandbox.chartkit(&ctx).args(["upgrade", "crds", &second]));
    assert_eq!(
        columns(&sandbox),
        Value::Null,
        "a plain upgrade never changes CRDs"
    );
    run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["upgrade", "crds", &second, "--upgrade-crds"]),
    );
    assert_eq!(columns(&sandbox)[0]["name"], "colour");
}

fn deployment_chart(ctx: &TestContext) -> String {
    ctx.demo_chart(&[
        ("values.yaml", "image: nginx:1.27\nextraPort: true\n"),
        (
            "templates/deploy.yaml",
            r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: 1
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      containers:
        - name: app
          image: {{ .Values.image }}
          ports:
            - containerPort: 80
            {{- if .Values.extraPort }}
            - containerPort: 81
            {{- end }}
"#,
        ),
    ])
}

#[test]
fn client_side_updates_merge_lists_by_key_like_helm() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.helm(&ctx, NAME).is_none() || sandbox.kubectl(&ctx, NAME).is_none() {
        return;
    }
    let chart = deployment_chart(&ctx);
    let sidecar =
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"mesh","image":"proxy:1"}]}}}}"#;
    for (tool, name) in [("chartkit", "ck"), ("helm", "hm")] {
        let run = |args: &[&str]| {
            if tool == "chartkit" {
                run_ok(sandbox.chartkit(&ctx).args(args));
            } else {
                helm(&sandbox, &ctx, args);
            }
        };
        run(&["install", name, &chart, "--server-side=false"]);
        // Another client injects a sidecar (as a service mesh would).
        run_ok(sandbox.kubectl(&ctx, NAME).expect("kubectl").args([
            "patch",
            "deployment",
            name,
            "--type=strategic",
            "-p",
            sidecar,
        ]));
        run(&[
            "upgrade",
            name,
            &chart,
            "--set",
            "image=nginx:1.28,extraPort=false",
        ]);
    }
    let containers = |name: &str| -> Value {
        kubectl_json(&sandbox, &ctx, &["get", "deployment", name])["spec"]["template"]["spec"]
            ["containers"]
            .clone()
    };
    let ours = containers("ck");
    // The sidecar another client added stays, the image changes, the dropped port goes.
    let names: Vec<&str> = ours
        .as_array()
        .expect("containers")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    // In the order the API server's strategic merge gives (the sidecar was put first).
    assert_eq!(names, ["mesh", "app"], "{ours}");
    assert_eq!(ours[1]["image"], "nginx:1.28");
    assert_eq!(ours[1]["ports"].as_array().map(Vec::len), Some(1), "{ours}");
    assert_eq!(
        ours,
        containers("hm"),
        "helm's client-side upgrade made the same list"
    );
}
