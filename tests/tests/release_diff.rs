//! `chartkit diff` against a sandbox: `diff upgrade` on an installed release with no
//! change, a changed value, a resource the chart drops, a Secret change (masked, and shown
//! with --show-secrets), and a resource the chart adds back; each case is then carried out
//! by a real `chartkit upgrade`, and the objects the diff named must be exactly those
//! whose content changed in the cluster. `diff rollback` is held to the real rollback the
//! same way; `diff revision` to the records. helm-diff, the plugin these commands follow,
//! is compared when helm has it installed.

use std::collections::{BTreeMap, BTreeSet};

use chartkit_tests::TestContext;
use chartkit_tests::sandbox::{SandboxProcess, run_ok};
use chartkit_tests::stdout as text;
use serde_json::Value;

const NAME: &str = "release_diff";

fn chart(ctx: &TestContext) -> String {
    ctx.demo_chart(&[
        (
            "values.yaml",
            "replicas: 1\nextra: true\npassword: hunter2\n",
        ),
        (
            "templates/deploy.yaml",
            r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: app
          image: nginx:1.27
"#,
        ),
        (
            "templates/svc.yaml",
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {app: web}\n  ports:\n    - port: 80\n",
        ),
        (
            "templates/extra.yaml",
            "{{- if .Values.extra }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-extra\ndata:\n  a: b\n{{- end }}\n",
        ),
        (
            "templates/secret.yaml",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: web-creds\nstringData:\n  password: {{ .Values.password }}\n  user: admin\n",
        ),
    ])
}

/// The release's objects in the cluster by `Kind/name`, without the fields that change
/// on every write or belong to controllers (those `chartkit diff` also leaves out):
/// status, managedFields, resourceVersion, generation, uid, creationTimestamp.
fn snapshot(sandbox: &SandboxProcess) -> BTreeMap<String, Value> {
    let client = reqwest::blocking::Client::new();
    let mut objects = BTreeMap::new();
    for (kind, path) in [
        ("Deployment", "apis/apps/v1/namespaces/default/deployments"),
        ("Service", "api/v1/namespaces/default/services"),
        ("ConfigMap", "api/v1/namespaces/default/configmaps"),
        ("Secret", "api/v1/namespaces/default/secrets"),
    ] {
        let list: Value = client
            .get(format!(
                "{}/{path}?labelSelector=app.kubernetes.io/managed-by%3DHelm",
                sandbox.url
            ))
            .send()
            .expect("list objects")
            .json()
            .expect("a list");
        for mut item in list["items"].as_array().cloned().unwrap_or_default() {
            let name = item["metadata"]["name"].as_str().unwrap().to_string();
            item.as_object_mut().unwrap().remove("status");
            let metadata = item["metadata"].as_object_mut().unwrap();
            for field in [
                "managedFields",
                "resourceVersion",
                "generation",
                "uid",
                "creationTimestamp",
            ] {
                metadata.remove(field);
            }
            objects.insert(format!("{kind}/{name}"), item);
        }
    }
    objects
}

/// The objects whose content differs between two snapshots (added, removed or changed).
fn changed(before: &BTreeMap<String, Value>, after: &BTreeMap<String, Value>) -> BTreeSet<String> {
    before
        .keys()
        .chain(after.keys())
        .filter(|k| before.get(*k) != after.get(*k))
        .cloned()
        .collect()
}

/// The objects a `--output json` diff names, as `Kind/name`.
fn predicted(json: &str) -> BTreeSet<String> {
    let entries: Value = serde_json::from_str(json).expect("diff --output json is JSON");
    entries
        .as_array()
        .expect("a list")
        .iter()
        .map(|e| {
            format!(
                "{}/{}",
                e["kind"].as_str().unwrap(),
                e["name"].as_str().unwrap()
            )
        })
        .collect()
}

/// The changed lines of a diff report (`+ ` and `- ` lines).
fn changed_lines(report: &str) -> Vec<&str> {
    report
        .lines()
        .filter(|l| l.starts_with("+ ") || l.starts_with("- "))
        .collect()
}

fn revisions(sandbox: &SandboxProcess, ctx: &TestContext) -> usize {
    let out = run_ok(sandbox.chartkit(ctx).args(["history", "web", "-o", "json"]));
    serde_json::from_slice::<Value>(&out.stdout)
        .expect("history json")
        .as_array()
        .expect("a list")
        .len()
}

/// Runs `diff upgrade` with `values` (JSON output) and then the real upgrade with the
/// same values, and checks that the objects the diff named are those that changed.
fn diff_then_upgrade(
    sandbox: &SandboxProcess,
    ctx: &TestContext,
    chart: &str,
    values: &[&str],
) -> BTreeSet<String> {
    let mut diff = sandbox.chartkit(ctx);
    diff.args(["diff", "upgrade", "web", chart, "--output", "json"]);
    for v in values {
        diff.args(["--set", v]);
    }
    let prediction = predicted(&text(&run_ok(&mut diff)));
    let before = snapshot(sandbox);
    let mut upgrade = sandbox.chartkit(ctx);
    upgrade.args(["upgrade", "web", chart]);
    for v in values {
        upgrade.args(["--set", v]);
    }
    run_ok(&mut upgrade);
    let after = snapshot(sandbox);
    assert_eq!(
        prediction,
        changed(&before, &after),
        "the diff for {values:?} named other objects than the upgrade changed"
    );
    prediction
}

#[test]
fn diff_upgrade_predicts_what_the_upgrade_changes() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let chart = chart(&ctx);
    run_ok(sandbox.chartkit(&ctx).args(["install", "web", &chart]));

    // No change: nothing printed, exit 0 with --detailed-exitcode, nothing recorded.
    let out = sandbox
        .chartkit(&ctx)
        .args(["diff", "upgrade", "web", &chart, "--detailed-exitcode"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        chartkit_tests::stderr(&out)
    );
    assert_eq!(text(&out), "");
    assert_eq!(revisions(&sandbox, &ctx), 1, "a diff records no revision");
    assert_eq!(
        diff_then_upgrade(&sandbox, &ctx, &chart, &[]),
        BTreeSet::new()
    );

    // A changed value: exactly its lines, with the server's defaults around them (-C 1),
    // and exit status 2.
    let out = sandbox
        .chartkit(&ctx)
        .args(["diff", "upgrade", "web", &chart, "--set", "replicas=3"])
        .args(["--detailed-exitcode", "-C", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out),
        "default, web, Deployment (apps) has changed:\n...\n    progressDeadlineSeconds: 600\n-   replicas: 1\n+   replicas: 3\n    revisionHistoryLimit: 10\n...\n"
    );
    assert_eq!(
        chartkit_tests::stderr(&out),
        "Error: identified at least one change, exiting with non-zero exit code (detailed-exitcode parameter enabled)\n"
    );
    let simple = run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["diff", "upgrade", "web", &chart, "--set", "replicas=3"])
            .args(["--output", "simple"]),
    );
    assert_eq!(
        text(&simple),
        "default, web, Deployment (apps) to be changed.\nPlan: 0 to add, 1 to change, 0 to destroy, 0 to change ownership.\n"
    );
    assert_eq!(
        diff_then_upgrade(&sandbox, &ctx, &chart, &["replicas=3"]),
        BTreeSet::from(["Deployment/web".to_string()])
    );

    // A resource the chart drops: shown as removed, whole.
    let values = ["replicas=3", "extra=false"];
    let out = run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["diff", "upgrade", "web", &chart])
            .args(["--set", values[0], "--set", values[1]]),
    );
    let report = text(&out);
    assert!(
        report.starts_with("default, web-extra, ConfigMap (v1) has been removed:\n- apiVersion: v1\n- data:\n-   a: b\n"),
        "{report}"
    );
    assert!(
        report.lines().skip(1).all(|l| l.starts_with("- ")),
        "{report}"
    );
    assert_eq!(
        diff_then_upgrade(&sandbox, &ctx, &chart, &values),
        BTreeSet::from(["ConfigMap/web-extra".to_string()])
    );

    // A Secret's change: masked with the values' sizes, unchanged keys redacted; shown
    // with --show-secrets (as the API server stores them: base64) and decoded.
    let values = ["replicas=3", "extra=false", "password=swordfish"];
    let diff_args = [
        "diff", "upgrade", "web", &chart, "--set", values[0], "--set", values[1], "--set",
        values[2],
    ];
    let report = text(&run_ok(sandbox.chartkit(&ctx).args(diff_args)));
    assert_eq!(
        changed_lines(&report),
        [
            "-   password: '-------- # (7 bytes)'",
            "+   password: '++++++++ # (9 bytes)'"
        ],
        "{report}"
    );
    assert!(
        report.contains("\n    user: 'REDACTED # (5 bytes)'\n"),
        "{report}"
    );
    assert!(!report.contains("swordfish") && !report.contains("c3dvcmRmaXNo"));
    assert!(!report.contains("hunter2") && !report.contains("aHVudGVyMg=="));
    let shown = text(&run_ok(
        sandbox.chartkit(&ctx).args(diff_args).arg("--show-secrets"),
    ));
    assert_eq!(
        changed_lines(&shown),
        ["-   password: aHVudGVyMg==", "+   password: c3dvcmRmaXNo"]
    );
    let decoded = text(&run_ok(
        sandbox
            .chartkit(&ctx)
            .args(diff_args)
            .arg("--show-secrets-decoded"),
    ));
    assert_eq!(
        changed_lines(&decoded),
        ["-   password: hunter2", "+   password: swordfish"]
    );
    let suppressed = text(&run_ok(
        sandbox
            .chartkit(&ctx)
            .args(diff_args)
            .args(["--suppress", "Secret"]),
    ));
    assert_eq!(
        suppressed,
        "default, web-creds, Secret (v1) has changed:\n+ Changes suppressed on sensitive content of type Secret\n"
    );
    assert_eq!(
        diff_then_upgrade(&sandbox, &ctx, &chart, &values),
        BTreeSet::from(["Secret/web-creds".to_string()])
    );

    // Several changes at once, one of them an added resource; lines matching
    // --suppress-output-line-regex leave a header only.
    let values = ["replicas=2", "extra=true", "password=swordfish"];
    let out = run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["diff", "upgrade", "web", &chart])
            .args(["--set", values[0], "--set", values[1], "--set", values[2]])
            .args(["--suppress-output-line-regex", "replicas"]),
    );
    let report = text(&out);
    assert!(
        report.starts_with("default, web, Deployment (apps) has changed, but diff is empty after suppression.\ndefault, web-extra, ConfigMap (v1) has been added:\n+ apiVersion: v1\n"),
        "{report}"
    );
    assert_eq!(
        diff_then_upgrade(&sandbox, &ctx, &chart, &values),
        BTreeSet::from([
            "ConfigMap/web-extra".to_string(),
            "Deployment/web".to_string()
        ])
    );
    assert_eq!(revisions(&sandbox, &ctx), 6);

    // diff rollback: to revision 1 (replicas 1, the first password), held to the real
    // rollback.
    let report = text(&run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["diff", "rollback", "web", "1", "-C", "0"]),
    ));
    assert_eq!(
        changed_lines(&report),
        [
            "-   replicas: 2",
            "+   replicas: 1",
            "-   password: '-------- # (9 bytes)'",
            "+   password: '++++++++ # (7 bytes)'"
        ],
        "{report}"
    );
    let prediction = predicted(&text(&run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["diff", "rollback", "web", "1", "--output", "json"]),
    )));
    let before = snapshot(&sandbox);
    run_ok(sandbox.chartkit(&ctx).args(["rollback", "web", "1"]));
    let after = snapshot(&sandbox);
    assert_eq!(prediction, changed(&before, &after));
    assert_eq!(
        prediction,
        BTreeSet::from(["Deployment/web".to_string(), "Secret/web-creds".to_string()])
    );
    // Nothing left to roll back to revision 1 for.
    let out = sandbox
        .chartkit(&ctx)
        .args(["diff", "rollback", "web", "1", "--detailed-exitcode"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out), "");

    // diff revision: between two records, in either order, and a revision against the
    // newest one.
    let report = text(&run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["diff", "revision", "web", "2", "3", "-C", "0"]),
    ));
    assert_eq!(
        report,
        "default, web, Deployment (apps) has changed:\n...\n-   replicas: 1\n+   replicas: 3\n...\n"
    );
    let swapped = text(&run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["diff", "revision", "web", "3", "2", "-C", "0"]),
    ));
    assert_eq!(swapped, report);
    let json =
        text(&run_ok(sandbox.chartkit(&ctx).args([
            "diff", "revision", "web", "3", "4", "--output", "json",
        ])));
    assert_eq!(
        json,
        "[{\n  \"api\": \"v1\",\n  \"kind\": \"ConfigMap\",\n  \"namespace\": \"default\",\n  \"name\": \"web-extra\",\n  \"change\": \"REMOVE\"\n}]\n"
    );
    let out = sandbox
        .chartkit(&ctx)
        .args(["diff", "revision", "web", "1", "--detailed-exitcode"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "revision 7 rolled back to 1: {}",
        text(&out)
    );
    assert_eq!(revisions(&sandbox, &ctx), 7, "diffs recorded nothing");

    compare_with_helm_diff(&sandbox, &ctx, &chart);
}

/// helm-diff's report of the same upgrade, when helm has the plugin: the same objects
/// with the same change types (the lines differ by design: helm-diff compares manifests,
/// chartkit the server's dry run).
fn compare_with_helm_diff(sandbox: &SandboxProcess, ctx: &TestContext, chart: &str) {
    let Some(mut helm) = sandbox.helm(ctx, NAME) else {
        return;
    };
    let plugins = helm
        .args(["plugin", "list"])
        .output()
        .expect("helm plugin list");
    if !text(&plugins).lines().any(|l| l.starts_with("diff")) {
        // Not a missing peer (CI installs none of helm's plugins either): only a note.
        eprintln!("{NAME}: helm has no diff plugin (helm-diff): not compared with it");
        return;
    }
    let args = [
        "diff",
        "upgrade",
        "web",
        chart,
        "--set",
        "replicas=4",
        "--output",
        "json",
    ];
    let theirs = text(&run_ok(sandbox.helm(ctx, NAME).unwrap().args(args)));
    let ours = text(&run_ok(sandbox.chartkit(ctx).args(args)));
    assert_eq!(predicted(&ours), predicted(&theirs));
}

#[test]
fn diff_upgrade_of_a_missing_release_needs_install() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let chart = chart(&ctx);
    let out = sandbox
        .chartkit(&ctx)
        .args(["diff", "upgrade", "web", &chart])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        chartkit_tests::stderr(&out).contains("\"web\" has no deployed releases"),
        "{}",
        chartkit_tests::stderr(&out)
    );
    // --install (helm-diff's --allow-unreleased): everything is added, as created.
    let out = run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["diff", "upgrade", "web", &chart, "--allow-unreleased"])
            .args(["--output", "simple"]),
    );
    assert_eq!(
        text(&out),
        "default, web, Deployment (apps) to be added.\n\
         default, web, Service (v1) to be added.\n\
         default, web-creds, Secret (v1) to be added.\n\
         default, web-extra, ConfigMap (v1) to be added.\n\
         Plan: 4 to add, 0 to change, 0 to destroy, 0 to change ownership.\n"
    );
    assert!(snapshot(&sandbox).is_empty(), "a diff creates nothing");
    let bad = sandbox
        .chartkit(&ctx)
        .args(["diff", "upgrade", "web", &chart, "-i"])
        .args(["--suppress-output-line-regex", "(unclosed"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        chartkit_tests::stderr(&bad).contains("--suppress-output-line-regex \"(unclosed\""),
        "{}",
        chartkit_tests::stderr(&bad)
    );
}

/// A release helm installed: chartkit's diff sees no change in it, and predicts what
/// helm's own upgrade (server-side, or client-side with --server-side=false) then changes.
#[test]
fn diff_upgrade_predicts_helms_upgrades_of_helms_release() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let Some(mut helm) = sandbox.helm(&ctx, NAME) else {
        return;
    };
    let chart = chart(&ctx);
    run_ok(helm.args(["install", "web", &chart]));
    let out = sandbox
        .chartkit(&ctx)
        .args(["diff", "upgrade", "web", &chart, "--detailed-exitcode"])
        .output()
        .unwrap();
    assert_eq!(
        (out.status.code(), text(&out).as_str()),
        (Some(0), ""),
        "{}",
        chartkit_tests::stderr(&out)
    );
    for (values, server_side, expected) in [
        (["replicas=3", "extra=true"], "true", vec!["Deployment/web"]),
        (
            ["replicas=3", "extra=false"],
            "true",
            vec!["ConfigMap/web-extra"],
        ),
        (
            ["replicas=2", "extra=true"],
            "false",
            vec!["ConfigMap/web-extra", "Deployment/web"],
        ),
    ] {
        let server_side = format!("--server-side={server_side}");
        let prediction = predicted(&text(&run_ok(
            sandbox
                .chartkit(&ctx)
                .args(["diff", "upgrade", "web", &chart, "--output", "json"])
                .args(["--set", values[0], "--set", values[1], &server_side]),
        )));
        let before = snapshot(&sandbox);
        run_ok(
            sandbox
                .helm(&ctx, NAME)
                .unwrap()
                .args(["upgrade", "web", &chart])
                .args(["--set", values[0], "--set", values[1], &server_side]),
        );
        let after = snapshot(&sandbox);
        assert_eq!(
            prediction,
            changed(&before, &after),
            "{values:?} {server_side}: the diff named other objects than helm's upgrade changed"
        );
        let expected: BTreeSet<String> = expected.into_iter().map(String::from).collect();
        assert_eq!(prediction, expected, "{values:?}");
    }
}

/// An object that moves to another kind under the same name is shown removed as the old
/// kind and added as the new one, which is what the upgrade does (creates the new, deletes
/// the old).
#[test]
fn an_object_moved_to_another_kind_is_removed_and_added() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let chart = ctx.demo_chart(&[
        ("values.yaml", "kind: ConfigMap\n"),
        (
            "templates/moved.yaml",
            "apiVersion: v1\nkind: {{ .Values.kind }}\nmetadata:\n  name: web-moved\n{{- if eq .Values.kind \"Secret\" }}\nstringData:\n{{- else }}\ndata:\n{{- end }}\n  a: b\n",
        ),
    ]);
    run_ok(sandbox.chartkit(&ctx).args(["install", "web", &chart]));
    let report = text(&run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["diff", "upgrade", "web", &chart, "--set", "kind=Secret"])
            .args(["--output", "simple"]),
    ));
    assert_eq!(
        report,
        "default, web-moved, ConfigMap (v1) to be removed.\n\
         default, web-moved, Secret (v1) to be added.\n\
         Plan: 1 to add, 0 to change, 1 to destroy, 0 to change ownership.\n"
    );
    assert_eq!(
        diff_then_upgrade(&sandbox, &ctx, &chart, &["kind=Secret"]),
        BTreeSet::from([
            "ConfigMap/web-moved".to_string(),
            "Secret/web-moved".to_string()
        ])
    );
}
