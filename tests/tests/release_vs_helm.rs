//! chartkit's releases with helm 4 as the oracle. Each step (install, upgrade, rollback,
//! uninstall, failed upgrades with --cleanup-on-fail and --atomic) runs with chartkit
//! against one sandbox and with helm against another; then both clusters must hold the
//! same objects with the same fields, the same release records and the same hook objects,
//! and the same field managers, once normalised (see `chartkit_tests::cluster_state`).
//! Last, installs from a `chartkit serve` repository with a version range, and `--verify`
//! refusing unsigned, tampered and wrongly signed charts in helm's words.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use chartkit_tests::TestContext;
use chartkit_tests::cluster_state::{Snapshot, converge, run_both};
use chartkit_tests::corpus::corpus_or_skip;
use chartkit_tests::records::value_differences;
use chartkit_tests::sandbox::{SandboxProcess, run_ok, write_file};
use chartkit_tests::server::ServeProcess;
use serde_json::Value;

const NAME: &str = "release_vs_helm";

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn kubectl(sandbox: &SandboxProcess, ctx: &TestContext) -> Command {
    sandbox.kubectl(ctx, NAME).expect("kubectl")
}

// ---------------------------------------------------------------------------------------
// Running the same steps with both tools

/// chartkit acting on one sandbox, helm on another.
struct Pair<'a> {
    ctx: &'a TestContext,
    chartkit: SandboxProcess,
    helm: SandboxProcess,
}

impl<'a> Pair<'a> {
    /// Two sandboxes, or `None` (the test skipped, with the reason printed) without the
    /// peers: helm is the oracle, kubectl reads the clusters.
    fn start(ctx: &'a TestContext, test: &str) -> Option<Pair<'a>> {
        chartkit_tests::peers::helm_or_skip(test)?;
        chartkit_tests::peers::kubectl_or_skip(test)?;
        Some(Pair {
            ctx,
            chartkit: SandboxProcess::start(ctx, &[]),
            helm: SandboxProcess::start(ctx, &[]),
        })
    }

    fn chartkit(&self) -> Command {
        let mut command = self.ctx.chartkit();
        command.env("KUBECONFIG", &self.chartkit.kubeconfig);
        command
    }

    fn helm(&self) -> Command {
        self.helm.helm(self.ctx, NAME).expect("helm")
    }

    /// Runs `args` with both tools at once; returns (chartkit's, helm's) outputs.
    fn run(&self, args: &[&str]) -> (Output, Output) {
        let (mut chartkit, mut helm) = (self.chartkit(), self.helm());
        chartkit.args(args);
        helm.args(args);
        let [chartkit, helm] = run_both(chartkit, helm);
        (chartkit, helm)
    }

    /// A step both tools must carry out.
    fn step(&self, args: &[&str]) {
        let (chartkit, helm) = self.run(args);
        for (tool, out) in [("chartkit", &chartkit), ("helm", &helm)] {
            assert!(
                out.status.success(),
                "{tool} {args:?} failed:\n{}{}",
                text(&out.stdout),
                text(&out.stderr)
            );
        }
    }

    /// A step both tools must fail; returns their stderr.
    fn failing_step(&self, args: &[&str]) -> (String, String) {
        let (chartkit, helm) = self.run(args);
        for (tool, out) in [("chartkit", &chartkit), ("helm", &helm)] {
            assert!(
                !out.status.success(),
                "{tool} {args:?} should have failed:\n{}",
                text(&out.stdout)
            );
        }
        (text(&chartkit.stderr), text(&helm.stderr))
    }

    /// Waits until both clusters are the same once normalised; returns chartkit's.
    fn converge(&self, step: &str) -> Snapshot {
        converge(
            [&self.chartkit, &self.helm],
            self.ctx,
            NAME,
            ["chartkit", "helm"],
            step,
        )
    }
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The objects of namespace `ns` in a snapshot, by key.
fn in_namespace(snapshot: &Snapshot, ns: &str) -> BTreeSet<String> {
    snapshot
        .keys()
        .into_iter()
        .filter(|k| {
            k.split_once(' ')
                .is_some_and(|(_, n)| n.starts_with(&format!("{ns}/")))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Charts

/// A chart with what releases are made of: a CRD and an object of its kind, a Deployment,
/// a Job per revision, objects an upgrade adds and drops, and hooks of every event with
/// weights and each delete policy.
fn hooked_chart(ctx: &TestContext) -> String {
    let dir = ctx.path("hooked");
    for (name, content) in [
        (
            "Chart.yaml",
            "apiVersion: v2\nname: hooked\nversion: 0.1.0\nappVersion: \"1.0\"\n",
        ),
        ("values.yaml", "value: one\nextra: false\n"),
        (
            "crds/gadgets.yaml",
            r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
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
            "templates/gadget.yaml",
            "apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: {{ .Release.Name }}-gadget\nspec:\n  value: {{ .Values.value | quote }}\n",
        ),
        (
            "templates/cm.yaml",
            r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-cm
data:
  value: {{ .Values.value | quote }}
  revision: {{ .Release.Revision | quote }}
"#,
        ),
        (
            "templates/extra.yaml",
            r#"{{- if .Values.extra }}
apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-extra
stringData:
  token: abc
---
apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-extra
spec:
  selector: {app: {{ .Release.Name }}}
  ports: [{port: 80, targetPort: 8080}]
{{- end }}
"#,
        ),
        (
            "templates/deploy.yaml",
            r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
  labels: {app: {{ .Release.Name }}}
spec:
  replicas: 1
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
      annotations:
        value: {{ .Values.value | quote }}
    spec:
      containers:
        - name: web
          image: nginx:1.27
          ports: [{containerPort: 8080}]
"#,
        ),
        (
            "templates/job.yaml",
            r#"apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-migrate-{{ .Release.Revision }}
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: busybox
          args: ["migrate", {{ .Values.value | quote }}]
"#,
        ),
        (
            "templates/hooks.yaml",
            r#"# Runs on install and stays (the default policy, before-hook-creation).
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-installed
  annotations:
    helm.sh/hook: pre-install,post-install
    helm.sh/hook-weight: "-1"
data:
  revision: {{ .Release.Revision | quote }}
---
# The first pre-upgrade hook; it stays after it succeeded.
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-pre-upgrade
  annotations:
    helm.sh/hook: pre-upgrade
    helm.sh/hook-weight: "-5"
    helm.sh/hook-delete-policy: before-hook-creation
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: pre
          image: busybox
---
# The second pre-upgrade hook, deleted once it succeeded.
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-pre-upgrade-note
  annotations:
    helm.sh/hook: pre-upgrade
    helm.sh/hook-weight: "0"
    helm.sh/hook-delete-policy: hook-succeeded
data:
  note: upgrading
---
# After the upgrade; replaced by the next one's, deleted if it fails.
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-post-upgrade
  annotations:
    helm.sh/hook: post-upgrade
    helm.sh/hook-weight: "5"
    helm.sh/hook-delete-policy: before-hook-creation,hook-failed
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: post
          image: busybox
          args: [{{ .Values.value | quote }}]
---
# Rollbacks run a bare Pod, before and after.
apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-rollback
  annotations:
    helm.sh/hook: pre-rollback,post-rollback
spec:
  restartPolicy: Never
  containers:
    - name: rollback
      image: busybox
---
# Before the objects are deleted; deleted once it succeeded.
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-pre-delete
  annotations:
    helm.sh/hook: pre-delete
    helm.sh/hook-delete-policy: hook-succeeded
---
# After the uninstall; it outlives the release (no policy deletes it).
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-post-delete
  annotations:
    helm.sh/hook: post-delete
    helm.sh/hook-weight: "1"
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: goodbye
          image: busybox
"#,
        ),
    ] {
        write_file(&dir, name, content);
    }
    dir.display().to_string()
}

fn corpus_chart(corpus: &Path, prefix: &str) -> String {
    chartkit_tests::corpus::packages(corpus)
        .into_iter()
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        })
        .unwrap_or_else(|| panic!("{prefix}* in the corpus"))
        .display()
        .to_string()
}

// ---------------------------------------------------------------------------------------
// Acceptance 1: the same steps, the same clusters

#[test]
fn hooks_crds_and_jobs_leave_the_cluster_helm_leaves() {
    let test = "hooks_crds_and_jobs_leave_the_cluster_helm_leaves";
    let ctx = TestContext::new();
    let Some(pair) = Pair::start(&ctx, test) else {
        return;
    };
    let chart = hooked_chart(&ctx);
    let ns = |keys: &[&str]| -> BTreeSet<String> {
        keys.iter().map(|k| k.replace("NS/", "apps/")).collect()
    };

    pair.step(&[
        "install",
        "hk",
        &chart,
        "-n",
        "apps",
        "--create-namespace",
        "--wait",
        "--timeout",
        "60s",
    ]);
    let cluster = pair.converge("install");
    assert_eq!(cluster.hooks(), ns(&["ConfigMap NS/hk-installed"]));
    for object in [
        "Gadget apps/hk-gadget",
        "Job apps/hk-migrate-1",
        "Deployment apps/hk-web",
    ] {
        assert!(cluster.objects.contains_key(object), "{object} missing");
    }
    assert!(
        cluster
            .objects
            .contains_key("CustomResourceDefinition gadgets.example.com")
    );

    // An upgrade changes a value and adds a Secret and a Service; the pre-upgrade hooks
    // run by weight, the note is deleted once it succeeded, the Jobs stay.
    pair.step(&[
        "upgrade",
        "hk",
        &chart,
        "-n",
        "apps",
        "--set",
        "value=two,extra=true",
        "--wait",
        "--timeout",
        "60s",
    ]);
    let cluster = pair.converge("the first upgrade");
    assert_eq!(
        cluster.hooks(),
        ns(&[
            "ConfigMap NS/hk-installed",
            "Job NS/hk-pre-upgrade",
            "Job NS/hk-post-upgrade"
        ])
    );
    assert_eq!(
        cluster.objects["ConfigMap apps/hk-cm"]["data"]["value"],
        "two"
    );
    assert!(cluster.objects.contains_key("Service apps/hk-extra"));
    assert!(!cluster.objects.contains_key("Job apps/hk-migrate-1"));

    // Another drops them again; the hook Jobs are replaced (before-hook-creation).
    pair.step(&[
        "upgrade",
        "hk",
        &chart,
        "-n",
        "apps",
        "--set",
        "value=three",
    ]);
    let cluster = pair.converge("the second upgrade");
    assert!(!cluster.objects.contains_key("Secret apps/hk-extra"));
    assert_eq!(
        cluster.objects["Gadget apps/hk-gadget"]["spec"]["value"],
        "three"
    );

    // A rollback to revision 2 brings them back and runs the Pod hook twice.
    pair.step(&[
        "rollback",
        "hk",
        "2",
        "-n",
        "apps",
        "--wait",
        "--timeout",
        "60s",
    ]);
    let cluster = pair.converge("the rollback");
    assert!(cluster.objects.contains_key("Secret apps/hk-extra"));
    assert_eq!(
        cluster.objects["ConfigMap apps/hk-cm"]["data"]["value"],
        "two"
    );
    assert!(cluster.hooks().contains("Pod apps/hk-rollback"));
    assert_eq!(cluster.records.len(), 4);

    // Uninstall: the release's objects go, the hooks stay (helm never deletes them on
    // uninstall) with the post-delete Job, and the CRD stays.
    pair.step(&["uninstall", "hk", "-n", "apps"]);
    let cluster = pair.converge("uninstall");
    assert_eq!(
        cluster.hooks(),
        ns(&[
            "ConfigMap NS/hk-installed",
            "Job NS/hk-pre-upgrade",
            "Job NS/hk-post-upgrade",
            "Pod NS/hk-rollback",
            "Job NS/hk-post-delete",
        ])
    );
    assert!(cluster.records.is_empty());
    let marked: Vec<&String> = cluster
        .objects
        .iter()
        .filter(|(_, o)| o["metadata"]["annotations"]["meta.helm.sh/release-name"] == "hk")
        .map(|(k, _)| k)
        .collect();
    assert!(marked.is_empty(), "objects of the release left: {marked:?}");
    assert!(
        cluster
            .objects
            .contains_key("CustomResourceDefinition gadgets.example.com")
    );
}

#[test]
fn corpus_charts_with_hook_jobs_and_crds_leave_the_cluster_helm_leaves() {
    let test = "corpus_charts_with_hook_jobs_and_crds_leave_the_cluster_helm_leaves";
    let ctx = TestContext::new();
    let Some(corpus) = corpus_or_skip(test) else {
        return;
    };
    let Some(pair) = Pair::start(&ctx, test) else {
        return;
    };
    let ingress = corpus_chart(&corpus, "ingress-nginx-");
    let sealed = corpus_chart(&corpus, "sealed-secrets-");

    pair.step(&[
        "install",
        "ing",
        &ingress,
        "-n",
        "ingress",
        "--create-namespace",
        "--wait",
        "--timeout",
        "60s",
    ]);
    pair.step(&[
        "install",
        "ss",
        &sealed,
        "-n",
        "sealed",
        "--create-namespace",
    ]);
    let cluster = pair.converge("installing ingress-nginx and sealed-secrets");
    assert!(
        cluster
            .objects
            .contains_key("CustomResourceDefinition sealedsecrets.bitnami.com")
    );
    assert!(
        cluster
            .objects
            .contains_key("Deployment ingress/ing-ingress-nginx-controller")
    );
    // ingress-nginx's admission hooks (Jobs, RBAC) are deleted once they succeeded.
    assert_eq!(cluster.hooks(), BTreeSet::new());

    pair.step(&[
        "upgrade",
        "ing",
        &ingress,
        "-n",
        "ingress",
        "--set",
        "controller.replicaCount=2",
        "--wait",
        "--timeout",
        "60s",
    ]);
    pair.step(&[
        "upgrade",
        "ss",
        &sealed,
        "-n",
        "sealed",
        "--set",
        "fullnameOverride=sealed,networkPolicy.enabled=true",
    ]);
    let cluster = pair.converge("the upgrades");
    assert_eq!(
        cluster.objects["Deployment ingress/ing-ingress-nginx-controller"]["spec"]["replicas"],
        2
    );
    assert!(cluster.objects.contains_key("Deployment sealed/sealed"));
    assert!(
        !cluster
            .objects
            .contains_key("Deployment sealed/ss-sealed-secrets")
    );

    pair.step(&[
        "rollback",
        "ing",
        "-n",
        "ingress",
        "--wait",
        "--timeout",
        "60s",
    ]);
    pair.step(&["rollback", "ss", "1", "-n", "sealed"]);
    let cluster = pair.converge("the rollbacks");
    assert!(
        cluster
            .objects
            .contains_key("Deployment sealed/ss-sealed-secrets")
    );

    pair.step(&["uninstall", "ing", "-n", "ingress", "--wait"]);
    pair.step(&["uninstall", "ss", "-n", "sealed"]);
    let cluster = pair.converge("uninstalling");
    assert!(cluster.records.is_empty());
    // Helm leaves CRDs of crds/ in place.
    assert!(
        cluster
            .objects
            .contains_key("CustomResourceDefinition sealedsecrets.bitnami.com")
    );
}

// ---------------------------------------------------------------------------------------
// Acceptance 2: failed upgrades

/// A chart whose `broken` value adds a Secret, a Service and a Deployment whose pod
/// crash-loops.
fn breakable_chart(ctx: &TestContext) -> String {
    let dir = ctx.path("breakable");
    for (name, content) in [
        (
            "Chart.yaml",
            "apiVersion: v2\nname: breakable\nversion: 0.1.0\n",
        ),
        ("values.yaml", "value: one\nbroken: false\n"),
        (
            "templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  value: {{ .Values.value | quote }}\n",
        ),
        (
            "templates/web.yaml",
            r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
spec:
  selector:
    matchLabels: {app: {{ .Release.Name }}-web}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}-web}
    spec:
      containers:
        - name: web
          image: nginx:1.27
"#,
        ),
        (
            "templates/broken.yaml",
            r#"{{- if .Values.broken }}
apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-new-secret
stringData: {a: b}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-new-service
spec:
  selector: {app: {{ .Release.Name }}-crash}
  ports: [{port: 80}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-crash
spec:
  selector:
    matchLabels: {app: {{ .Release.Name }}-crash}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}-crash}
      annotations:
        sandbox.chartkit.dev/fail: crashloop
    spec:
      containers:
        - name: crash
          image: busybox
{{- end }}
"#,
        ),
    ] {
        write_file(&dir, name, content);
    }
    dir.display().to_string()
}

#[test]
fn cleanup_on_fail_and_atomic_leave_what_helm_leaves() {
    let test = "cleanup_on_fail_and_atomic_leave_what_helm_leaves";
    let ctx = TestContext::new();
    let Some(pair) = Pair::start(&ctx, test) else {
        return;
    };
    let chart = breakable_chart(&ctx);
    let new_objects = set(&[
        "Secret shop/shop-new-secret",
        "Service shop/shop-new-service",
        "Deployment shop/shop-crash",
    ]);

    pair.step(&[
        "install",
        "shop",
        &chart,
        "-n",
        "shop",
        "--create-namespace",
        "--wait",
        "--timeout",
        "60s",
    ]);
    let before = pair.converge("install");
    let before_keys = in_namespace(&before, "shop");

    // --cleanup-on-fail: the upgrade creates three objects, times out waiting for the
    // crashing one, and deletes them again; the old objects stay (changed).
    let (stderr, helm_stderr) = pair.failing_step(&[
        "upgrade",
        "shop",
        &chart,
        "-n",
        "shop",
        "--set",
        "value=two,broken=true",
        "--wait",
        "--timeout",
        "4s",
        "--cleanup-on-fail",
    ]);
    assert!(stderr.contains("Error: UPGRADE FAILED: "), "{stderr}");
    assert!(stderr.contains("Deployment/shop-crash"), "{stderr}");
    assert!(
        helm_stderr.contains("Error: UPGRADE FAILED: "),
        "{helm_stderr}"
    );
    let after = pair.converge("a failed upgrade with --cleanup-on-fail");
    assert_eq!(in_namespace(&after, "shop"), before_keys);
    assert!(new_objects.is_disjoint(&after.keys()));
    assert_eq!(
        after.objects["ConfigMap shop/shop-cm"]["data"]["value"],
        "two"
    );
    let failed = &after.records["shop/sh.helm.release.v1.shop.v2"];
    assert_eq!(failed["release"]["info"]["status"], "failed");

    // A good upgrade, then --atomic: the failed upgrade is rolled back and every object
    // of the namespace is as it was before it, fields and all.
    pair.step(&[
        "upgrade",
        "shop",
        &chart,
        "-n",
        "shop",
        "--set",
        "value=three",
        "--wait",
        "--timeout",
        "60s",
    ]);
    let before = pair.converge("a good upgrade");
    let (stderr, _) = pair.failing_step(&[
        "upgrade",
        "shop",
        &chart,
        "-n",
        "shop",
        "--set",
        "value=four,broken=true",
        "--wait",
        "--timeout",
        "4s",
        "--atomic",
    ]);
    assert!(
        stderr.contains("has been rolled back due to rollback-on-failure being set"),
        "{stderr}"
    );
    let after = pair.converge("a failed upgrade with --atomic");
    let objects_of = |s: &Snapshot| -> BTreeMap<String, Value> {
        in_namespace(s, "shop")
            .into_iter()
            .map(|k| (k.clone(), s.objects[&k].clone()))
            .collect()
    };
    let (was, is) = (objects_of(&before), objects_of(&after));
    let mut changed = Vec::new();
    for key in was.keys().chain(is.keys()).collect::<BTreeSet<_>>() {
        match (was.get(key), is.get(key)) {
            (Some(a), Some(b)) => value_differences(key, b, a, ["now", "before"], &mut changed),
            _ => changed.push(format!("{key}: only before or only after")),
        }
    }
    assert!(
        changed.is_empty(),
        "--atomic left the namespace changed:\n{}",
        changed.join("\n")
    );
    let statuses: Vec<String> = after
        .records
        .iter()
        .map(|(k, r)| format!("{k} {}", r["release"]["info"]["status"]))
        .collect();
    assert_eq!(
        statuses,
        [
            "shop/sh.helm.release.v1.shop.v1 \"superseded\"",
            "shop/sh.helm.release.v1.shop.v2 \"failed\"",
            "shop/sh.helm.release.v1.shop.v3 \"superseded\"",
            "shop/sh.helm.release.v1.shop.v4 \"failed\"",
            "shop/sh.helm.release.v1.shop.v5 \"deployed\"",
        ]
    );
}

// ---------------------------------------------------------------------------------------
// Acceptance 4: a served repository, a version range, --verify

/// Writes chart `name` at `version` into a directory of its own and returns it.
fn small_chart(ctx: &TestContext, name: &str, version: &str, value: &str) -> PathBuf {
    let dir = ctx.path(&format!("src/{name}-{version}/{name}"));
    write_file(
        &dir,
        "Chart.yaml",
        &format!("apiVersion: v2\nname: {name}\nversion: {version}\n"),
    );
    write_file(&dir, "values.yaml", &format!("value: {value}\n"));
    write_file(
        &dir,
        "templates/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  value: {{ .Values.value | quote }}\n  version: {{ .Chart.Version }}\n",
    );
    write_file(
        &dir,
        "templates/deploy.yaml",
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-app
spec:
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      containers:
        - name: app
          image: nginx:1.27
"#,
    );
    dir
}

fn package(ctx: &TestContext, chart: &Path, out: &Path, signing: Option<&Path>) {
    let mut command = ctx.chartkit();
    command.arg("package").arg(chart).arg("-d").arg(out);
    if let Some(secret) = signing {
        command
            .args(["--sign", "--key", "signer@example.com", "--keyring"])
            .arg(secret);
    }
    run_ok(&mut command);
}

/// The first `Error: ` line of a command's stderr.
fn error_line(stderr: &str) -> &str {
    stderr
        .lines()
        .find(|l| l.starts_with("Error: "))
        .unwrap_or_else(|| panic!("no error in:\n{stderr}"))
}

#[test]
fn install_from_a_served_repository_by_range_and_verify() {
    let test = "install_from_a_served_repository_by_range_and_verify";
    let ctx = TestContext::new();
    if chartkit_tests::peers::helm_or_skip(test).is_none()
        || chartkit_tests::peers::kubectl_or_skip(test).is_none()
    {
        return;
    }
    // A signer, and a key that signed nothing here.
    for (name, email, dir) in [
        ("Signer", "signer@example.com", "keys"),
        ("Other", "other@example.com", "other"),
    ] {
        run_ok(ctx.chartkit().args([
            "key", "generate", "--name", name, "--email", email, "-o", dir,
        ]));
    }
    let secret = ctx.path("keys/secret.asc");
    let keyring = ctx.path("keys/public.gpg").display().to_string();
    let other = ctx.path("other/public.gpg").display().to_string();

    let repo = ctx.path("repo");
    std::fs::create_dir_all(&repo).unwrap();
    for version in ["1.1.0", "1.2.0", "1.3.5", "2.0.0"] {
        package(
            &ctx,
            &small_chart(&ctx, "app", version, version),
            &repo,
            Some(&secret),
        );
    }
    package(&ctx, &small_chart(&ctx, "plain", "1.0.0", "x"), &repo, None);
    // Signed, then replaced by another build of the same name and version. chartkit
    // serve does not serve a .prov that does not sign the package it has.
    package(
        &ctx,
        &small_chart(&ctx, "bent", "1.0.0", "signed"),
        &repo,
        Some(&secret),
    );
    let unsigned_build = ctx.path("rebuilt");
    package(
        &ctx,
        &small_chart(&ctx, "bent", "1.0.0", "tampered"),
        &unsigned_build,
        None,
    );
    std::fs::copy(
        unsigned_build.join("bent-1.0.0.tgz"),
        repo.join("bent-1.0.0.tgz"),
    )
    .unwrap();

    let server = ServeProcess::start(ctx.chartkit(), &[repo.to_str().unwrap()], ctx.dir());
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let chartkit = |args: &[&str]| -> Output {
        let mut command = ctx.chartkit();
        command.env("KUBECONFIG", &sandbox.kubeconfig).args(args);
        command.output().expect("run chartkit")
    };
    let helm = |args: &[&str]| -> Output {
        sandbox
            .helm(&ctx, NAME)
            .expect("helm")
            .args(args)
            .output()
            .expect("run helm")
    };
    run_ok(ctx.chartkit().args(["repo", "add", "repo", &server.url]));
    run_ok(
        sandbox
            .helm(&ctx, NAME)
            .unwrap()
            .args(["repo", "add", "repo", &server.url]),
    );

    // ^1.2 is the newest 1.x from 1.2.0 on: 1.3.5.
    let out = chartkit(&[
        "install",
        "web",
        "repo/app",
        "--version",
        "^1.2",
        "--wait",
        "-n",
        "apps",
        "--create-namespace",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed = chartkit(&["list", "-n", "apps", "-o", "json"]);
    let helm_listed = helm(&["list", "-n", "apps", "-o", "json"]);
    let releases: Value = serde_json::from_slice(&listed.stdout).expect("list JSON");
    assert_eq!(releases[0]["chart"], "app-1.3.5", "{releases}");
    assert_eq!(releases[0]["status"], "deployed");
    assert_eq!(text(&listed.stdout), text(&helm_listed.stdout));

    // A signed chart installs, and upgrades, with --verify.
    let out = chartkit(&[
        "install",
        "signed",
        "repo/app",
        "--version",
        "2.0.0",
        "-n",
        "apps",
        "--verify",
        "--keyring",
        &keyring,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = chartkit(&[
        "upgrade",
        "web",
        "repo/app",
        "--version",
        "~1.2.0",
        "-n",
        "apps",
        "--verify",
        "--keyring",
        &keyring,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let value = run_ok(kubectl(&sandbox, &ctx).args([
        "get",
        "configmap",
        "web-cm",
        "-n",
        "apps",
        "-o",
        "jsonpath={.data.version}",
    ]));
    assert_eq!(text(&value.stdout), "1.2.0");

    // A local package verifies against the .prov beside it.
    run_ok(ctx.chartkit().args([
        "pull",
        "repo/app",
        "--version",
        "1.1.0",
        "--prov",
        "-d",
        "local",
    ]));
    let local = ctx.path("local/app-1.1.0.tgz").display().to_string();
    let out = chartkit(&[
        "install",
        "local",
        &local,
        "-n",
        "apps",
        "--verify",
        "--keyring",
        &keyring,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    // Refused: unsigned and tampered in the repository, a wrong keyring, a tampered
    // local package (its .prov beside it), a local one without .prov. Each in helm's
    // words (helm's error line starts chartkit's, which may add the server's answer),
    // and nothing is installed.
    std::fs::copy(
        unsigned_build.join("bent-1.0.0.tgz"),
        ctx.path("local/bent-1.0.0.tgz"),
    )
    .unwrap();
    run_ok(ctx.chartkit().args(["pull", "repo/plain", "-d", "local"]));
    // The tampered local package: bent's rebuild beside the signed build's .prov.
    std::fs::copy(
        repo.join("bent-1.0.0.tgz.prov"),
        ctx.path("local/bent-1.0.0.tgz.prov"),
    )
    .unwrap();
    let bent = ctx.path("local/bent-1.0.0.tgz").display().to_string();
    let plain = ctx.path("local/plain-1.0.0.tgz").display().to_string();
    let cases: [(&str, Vec<&str>, &str); 5] = [
        (
            "unsigned in the repository",
            vec!["repo/plain"],
            "failed to fetch provenance",
        ),
        (
            "tampered in the repository",
            vec!["repo/bent"],
            "failed to fetch provenance",
        ),
        (
            "signed by a key not in the keyring",
            vec!["repo/app", "--keyring", other.as_str()],
            "openpgp: signature made by unknown entity",
        ),
        (
            "tampered after signing",
            vec![bent.as_str()],
            "sha256 sum does not match for bent-1.0.0.tgz",
        ),
        (
            "without a .prov",
            vec![plain.as_str()],
            "could not load provenance file",
        ),
    ];
    for (what, chart, words) in cases {
        let mut args = vec![
            "install",
            "refused",
            chart[0],
            "-n",
            "refused",
            "--create-namespace",
            "--verify",
        ];
        if chart.len() == 1 {
            args.extend(["--keyring", &keyring]);
        } else {
            args.extend(&chart[1..]);
        }
        let ours = chartkit(&args);
        let theirs = helm(&args);
        assert!(!ours.status.success(), "{what}: installed");
        assert!(!theirs.status.success(), "{what}: helm installed it");
        let (ours, theirs) = (text(&ours.stderr), text(&theirs.stderr));
        assert!(error_line(&ours).contains(words), "{what}: {ours}");
        assert!(
            error_line(&ours).starts_with(error_line(&theirs)),
            "{what}: chartkit says\n{ours}\nhelm says\n{theirs}"
        );
    }
    let refused = chartkit(&["history", "refused", "-n", "refused"]);
    assert!(
        !refused.status.success(),
        "a release record of a refused chart"
    );
    let namespace = kubectl(&sandbox, &ctx)
        .args(["get", "namespace", "refused"])
        .output()
        .unwrap();
    assert!(
        !namespace.status.success(),
        "a refused install created its namespace"
    );

    // An upgrade to a tampered package is refused too, and the release stays as it was.
    let out = chartkit(&[
        "upgrade",
        "web",
        &bent,
        "-n",
        "apps",
        "--verify",
        "--keyring",
        &keyring,
    ]);
    assert!(!out.status.success());
    assert!(
        error_line(&text(&out.stderr))
            .starts_with("Error: sha256 sum does not match for bent-1.0.0.tgz: \"sha256:"),
        "{}",
        text(&out.stderr)
    );
    let history = chartkit(&["history", "web", "-n", "apps", "-o", "json"]);
    let history: Value = serde_json::from_slice(&history.stdout).expect("history JSON");
    assert_eq!(history.as_array().map(Vec::len), Some(2), "{history}");
    let everything =
        run_ok(kubectl(&sandbox, &ctx).args(["get", "configmaps", "-A", "-o", "name"]));
    assert!(
        !text(&everything.stdout).contains("refused"),
        "{}",
        text(&everything.stdout)
    );
}
