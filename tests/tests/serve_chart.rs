//! The chart that runs `chartkit serve` in a cluster (deploy/chartkit-serve): both linters
//! pass it in strict mode, with its defaults and with S3, auth and a ServiceMonitor; it
//! renders the same with chartkit and helm; and it installs into a sandbox with chartkit
//! and with helm, its pod turning ready and its test passing.

use std::process::Command;

use chartkit_tests::sandbox::{SandboxProcess, run_ok};
use chartkit_tests::stdout as text;
use chartkit_tests::{TestContext, workspace_root};

const NAME: &str = "serve_chart";

/// Everything the chart can turn on at once.
const ALL_ON: &str = "s3.enabled=true,s3.bucket=charts,s3.prefix=prod,s3.existingSecret=aws,\
auth.basic.existingSecret=htpasswd,auth.bearer.existingSecret=tokens,auth.authReads=true,\
serviceMonitor.enabled=true,replicaCount=3,url=https://charts.example.com";

fn chart() -> String {
    workspace_root()
        .join("deploy/chartkit-serve")
        .display()
        .to_string()
}

#[test]
fn both_linters_pass_it_strictly_and_both_render_it_alike() {
    let ctx = TestContext::new();
    let chart = chart();
    for set in [None, Some(ALL_ON)] {
        let mut args = vec!["lint", "--strict", &chart];
        if let Some(set) = set {
            args.extend(["--set", set]);
        }
        let ours = run_ok(ctx.chartkit().args(&args));
        assert!(text(&ours).contains("0 chart(s) failed"), "{}", text(&ours));
        let Some(mut helm) = ctx.helm() else {
            return;
        };
        run_ok(helm.args(&args));
        let mut render = vec!["template", "repo", chart.as_str()];
        if let Some(set) = set {
            render.extend(["--set", set]);
        }
        let ours = text(&run_ok(ctx.chartkit().args(&render)));
        let theirs = text(&run_ok(ctx.helm().expect("helm").args(&render)));
        assert_eq!(ours, theirs, "chartkit and helm render the chart alike");
    }
    // A shared-nothing volume with several servers is refused with what to do.
    let refused = ctx
        .chartkit()
        .args(["template", "repo", &chart, "--set", "replicaCount=2"])
        .output()
        .expect("run chartkit");
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains(
            "replicaCount above 1 needs shared storage: s3.enabled, or persistence.accessModes with ReadWriteMany"
        ),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}

fn ready_pods(sandbox: &SandboxProcess, ctx: &TestContext, namespace: &str) -> String {
    text(&run_ok(sandbox.kubectl(ctx, NAME).expect("kubectl").args([
        "get",
        "pods",
        "-n",
        namespace,
        "-l",
        "app.kubernetes.io/name=chartkit-serve",
        "-o",
        "jsonpath={range .items[*]}{.status.conditions[?(@.type==\"Ready\")].status}{\"\\n\"}{end}",
    ])))
}

#[test]
fn it_installs_with_chartkit_and_with_helm_and_turns_ready() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.helm(&ctx, NAME).is_none() || sandbox.kubectl(&ctx, NAME).is_none() {
        return;
    }
    let chart = chart();
    let mut ours: Command = ctx.chartkit();
    ours.env("KUBECONFIG", &sandbox.kubeconfig);
    let installed = run_ok(ours.args([
        "install",
        "charts",
        &chart,
        "-n",
        "infra",
        "--create-namespace",
        "--wait",
        "--timeout",
        "60s",
    ]));
    assert!(
        text(&installed).contains("STATUS: deployed"),
        "{}",
        text(&installed)
    );
    assert!(
        text(&installed).contains("portforward://infra/svc/charts-chartkit-serve:8879"),
        "the notes say how to reach it: {}",
        text(&installed)
    );
    assert_eq!(ready_pods(&sandbox, &ctx, "infra").trim(), "True");
    let mut test = ctx.chartkit();
    test.env("KUBECONFIG", &sandbox.kubeconfig);
    let tested = run_ok(test.args(["test", "charts", "-n", "infra"]));
    assert!(
        text(&tested).contains("Phase:          Succeeded"),
        "{}",
        text(&tested)
    );

    run_ok(sandbox.helm(&ctx, NAME).expect("helm").args([
        "install",
        "charts",
        &chart,
        "-n",
        "helm-infra",
        "--create-namespace",
        "--wait",
        "--timeout",
        "60s",
    ]));
    assert_eq!(ready_pods(&sandbox, &ctx, "helm-infra").trim(), "True");
    // The volume's claim is bound for both, and kept by its resource policy.
    for namespace in ["infra", "helm-infra"] {
        let claim = text(&run_ok(sandbox.kubectl(&ctx, NAME).expect("kubectl").args(
            [
                "get",
                "pvc",
                "charts-chartkit-serve",
                "-n",
                namespace,
                "-o",
                "jsonpath={.status.phase}",
            ],
        )));
        assert_eq!(claim, "Bound", "{namespace}");
    }
}
