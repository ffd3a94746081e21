//! One release, two tools, any order (issue #28): helm and chartkit take turns on the same
//! release (install, upgrade, upgrade, rollback, rollback, uninstall), starting with either
//! tool, by server-side apply and by client-side writes. Every step must succeed, and
//! after every step the cluster must be the one helm alone leaves after the same steps
//! (run in a second sandbox): the same objects, the same release records, and the same
//! field managers (chartkit writes as helm's `helm` manager, so nothing it wrote can
//! conflict with helm's next apply).

use std::path::Path;
use std::process::Command;

use chartkit_tests::TestContext;
use chartkit_tests::cluster_state::{converge, run_both};
use chartkit_tests::sandbox::{SandboxProcess, run_ok, write_file};
use chartkit_tests::stderr;
use serde_json::Value;

const NAME: &str = "release_alternation";

/// A chart whose revisions change a Deployment's replicas, its containers' resources
/// and its container list, a ConfigMap's keys (one dropped, one added) and a Service's
/// ports: everything a three-way merge or an apply has to add, change and remove.
fn chart(ctx: &TestContext) -> String {
    let chart = ctx.demo_chart(&[
        (
            "values.yaml",
            "replicas: 1\ncpu: 100m\nmemory: null\nsidecar: false\ndata: {}\nports: [80]\n",
        ),
        (
            "templates/deployment.yaml",
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
          resources:
            requests:
              cpu: {{ .Values.cpu }}
              {{- with .Values.memory }}
              memory: {{ . }}
              {{- end }}
        {{- if .Values.sidecar }}
        - name: sidecar
          image: busybox:1.36
          resources:
            limits:
              cpu: 50m
        {{- end }}
"#,
        ),
        (
            "templates/configmap.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-settings\ndata:\n  {{- range $k, $v := .Values.data }}\n  {{ $k }}: {{ $v | quote }}\n  {{- end }}\n",
        ),
        (
            "templates/service.yaml",
            r#"apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  {{- range .Values.ports }}
    - name: p{{ . }}
      port: {{ . }}
  {{- end }}
"#,
        ),
    ]);
    let dir = Path::new(&chart);
    write_file(
        dir,
        "v1.yaml",
        "replicas: 1\ncpu: 100m\nmemory: 64Mi\ndata: {a: one, gone: soon}\nports: [80]\n",
    );
    write_file(
        dir,
        "v2.yaml",
        "replicas: 2\ncpu: 200m\nsidecar: true\ndata: {a: two, b: new}\nports: [80, 8080]\n",
    );
    write_file(
        dir,
        "v3.yaml",
        "replicas: 3\ncpu: 150m\nmemory: 128Mi\ndata: {a: three}\nports: [8080]\n",
    );
    chart
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tool {
    Chartkit,
    Helm,
}

impl Tool {
    fn other(self) -> Tool {
        match self {
            Tool::Chartkit => Tool::Helm,
            Tool::Helm => Tool::Chartkit,
        }
    }
}

/// The mixed cluster (the tools take turns) and the reference (helm alone).
struct Clusters<'a> {
    ctx: &'a TestContext,
    mixed: SandboxProcess,
    helm_only: SandboxProcess,
}

impl Clusters<'_> {
    fn command(&self, tool: Tool, sandbox: &SandboxProcess) -> Command {
        match tool {
            Tool::Chartkit => sandbox.chartkit(self.ctx),
            Tool::Helm => sandbox.helm(self.ctx, NAME).expect("helm"),
        }
    }

    /// One step: `tool` runs it on the mixed cluster while helm runs it on the
    /// reference; both must succeed, then the clusters must converge.
    fn step(&self, tool: Tool, args: &[&str]) {
        let mut mixed = self.command(tool, &self.mixed);
        let mut reference = self.command(Tool::Helm, &self.helm_only);
        mixed.args(args);
        reference.args(args);
        let [mixed, reference] = run_both(mixed, reference);
        for (who, out) in [(format!("{tool:?}"), &mixed), ("helm".into(), &reference)] {
            assert!(
                out.status.success(),
                "{who} {args:?} failed:\n{}",
                stderr(out)
            );
        }
        let step = format!("{tool:?} {}", args.join(" "));
        let cluster = converge(
            [&self.mixed, &self.helm_only],
            self.ctx,
            NAME,
            ["the mixed", "helm's"],
            &step,
        );
        // Whatever was written, it was written as helm's manager (a comparison of two
        // clusters where neither has managers would prove nothing).
        let deployment = cluster
            .objects
            .get("Deployment apps/web")
            .map(|d| managers(&d["metadata"]["managedFields"]));
        if args[0] != "uninstall" {
            assert_eq!(
                deployment.as_deref(),
                Some(&["helm".to_string()][..]),
                "after {step}"
            );
        }
    }
}

/// The names of the field managers of an object, once each.
fn managers(entries: &Value) -> Vec<String> {
    let mut names: Vec<String> = entries
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["manager"].as_str().map(str::to_string))
        .filter(|m| m != "kube-controller-manager")
        .collect();
    names.sort();
    names.dedup();
    names
}

/// install (by `first`) → upgrade (the other) → upgrade (`first`) → rollback to 2 (the
/// other) → rollback to 1 (`first`) → uninstall (the other).
fn alternate(first: Tool, server_side: bool) {
    if chartkit_tests::peers::helm_or_skip(NAME).is_none()
        || chartkit_tests::peers::kubectl_or_skip(NAME).is_none()
    {
        return;
    }
    let ctx = TestContext::new();
    let chart = chart(&ctx);
    let values = |n: u8| format!("{chart}/v{n}.yaml");
    let clusters = Clusters {
        ctx: &ctx,
        mixed: SandboxProcess::start(&ctx, &[]),
        helm_only: SandboxProcess::start(&ctx, &[]),
    };
    let method = if server_side {
        "--server-side=true"
    } else {
        "--server-side=false"
    };
    let second = first.other();
    let (v1, v2, v3) = (values(1), values(2), values(3));
    clusters.step(
        first,
        &[
            "install",
            "web",
            &chart,
            "-n",
            "apps",
            "--create-namespace",
            "-f",
            &v1,
            method,
        ],
    );
    clusters.step(
        second,
        &["upgrade", "web", &chart, "-n", "apps", "-f", &v2, method],
    );
    clusters.step(
        first,
        &["upgrade", "web", &chart, "-n", "apps", "-f", &v3, method],
    );
    // Rollbacks follow the method the revision rolled back to recorded (auto).
    clusters.step(second, &["rollback", "web", "2", "-n", "apps"]);
    clusters.step(first, &["rollback", "web", "1", "-n", "apps"]);
    clusters.step(second, &["uninstall", "web", "-n", "apps"]);
}

#[test]
fn helm_first_server_side() {
    alternate(Tool::Helm, true);
}

#[test]
fn chartkit_first_server_side() {
    alternate(Tool::Chartkit, true);
}

#[test]
fn helm_first_client_side() {
    alternate(Tool::Helm, false);
}

#[test]
fn chartkit_first_client_side() {
    alternate(Tool::Chartkit, false);
}

/// A release an older chartkit wrote (its fields owned by the manager `chartkit`): helm's
/// upgrade conflicts with those fields, chartkit's next upgrade hands them to `helm`, and
/// helm carries on from there.
#[test]
fn a_release_an_older_chartkit_wrote_is_handed_to_helm() {
    if chartkit_tests::peers::helm_or_skip(NAME).is_none()
        || chartkit_tests::peers::kubectl_or_skip(NAME).is_none()
    {
        return;
    }
    let ctx = TestContext::new();
    let chart = chart(&ctx);
    let values = |n: u8| format!("{chart}/v{n}.yaml");
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let helm = || sandbox.helm(&ctx, NAME).expect("helm");
    run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["install", "web", &chart, "-f", &values(1)]),
    );
    // What an older chartkit left: every field of the release's objects applied by the
    // manager `chartkit`.
    let manifest = run_ok(sandbox.chartkit(&ctx).args(["get", "manifest", "web"])).stdout;
    let manifest_file = write_file(
        ctx.dir(),
        "old-chartkit.yaml",
        &String::from_utf8_lossy(&manifest),
    );
    run_ok(
        sandbox
            .kubectl(&ctx, NAME)
            .expect("kubectl")
            .args(["apply", "--server-side", "--force-conflicts"])
            .args(["--field-manager", "chartkit", "-f"])
            .arg(&manifest_file),
    );
    let refused = helm()
        .args(["upgrade", "web", &chart, "-f", &values(2)])
        .output()
        .expect("helm runs");
    assert!(
        !refused.status.success() && stderr(&refused).contains("with \"chartkit\""),
        "helm should meet the old manager's fields: {}",
        stderr(&refused)
    );
    run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["upgrade", "web", &chart, "-f", &values(2)]),
    );
    let deployment: Value = serde_json::from_slice(
        &run_ok(sandbox.kubectl(&ctx, NAME).expect("kubectl").args([
            "get",
            "deployment",
            "web",
            "-o",
            "json",
            "--show-managed-fields",
        ]))
        .stdout,
    )
    .expect("JSON");
    assert_eq!(
        managers(&deployment["metadata"]["managedFields"]),
        ["helm".to_string()],
        "{deployment:#}"
    );
    assert_eq!(deployment["spec"]["replicas"], 2);
    run_ok(helm().args(["upgrade", "web", &chart, "-f", &values(3)]));
    run_ok(helm().args(["rollback", "web", "2"]));
}

/// Objects helm wrote client-side and left behind marked as the release's (its records
/// gone): chartkit's server-side install adopts them, handing helm's client-side fields
/// to its applies as helm's install does, so changed fields do not conflict and helm
/// upgrades the release afterwards.
#[test]
fn an_install_adopting_client_side_objects_hands_their_fields_over() {
    if chartkit_tests::peers::helm_or_skip(NAME).is_none()
        || chartkit_tests::peers::kubectl_or_skip(NAME).is_none()
    {
        return;
    }
    let ctx = TestContext::new();
    let chart = chart(&ctx);
    let values = |n: u8| format!("{chart}/v{n}.yaml");
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let helm = || sandbox.helm(&ctx, NAME).expect("helm");
    let kubectl = || sandbox.kubectl(&ctx, NAME).expect("kubectl");
    run_ok(helm().args([
        "install",
        "web",
        &chart,
        "-f",
        &values(1),
        "--server-side=false",
    ]));
    run_ok(kubectl().args(["delete", "secret", "sh.helm.release.v1.web.v1"]));
    run_ok(sandbox.chartkit(&ctx).args([
        "install",
        "web",
        &chart,
        "-f",
        &values(2),
        "--server-side=true",
    ]));
    let deployment: Value = serde_json::from_slice(
        &run_ok(kubectl().args([
            "get",
            "deployment",
            "web",
            "-o",
            "json",
            "--show-managed-fields",
        ]))
        .stdout,
    )
    .expect("JSON");
    assert_eq!(deployment["spec"]["replicas"], 2);
    let helm_entries: Vec<&str> = deployment["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["manager"] == "helm")
        .filter_map(|e| e["operation"].as_str())
        .collect();
    assert_eq!(helm_entries, ["Apply"], "{deployment:#}");
    run_ok(helm().args(["upgrade", "web", &chart, "-f", &values(3)]));
}
