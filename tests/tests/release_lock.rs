//! The per-release lock: an upgrade killed half-way (SIGKILL) is recovered by the next
//! operation once its lease has expired, with no hand edits; two upgrades of one release
//! never interleave: the second fails naming the lease's holder, and the history stays
//! whole (consecutive revisions, one deployed, none left pending).

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use chartkit_tests::TestContext;
use chartkit_tests::sandbox::{SandboxProcess, run_ok};
use chartkit_tests::stdout as text;
use serde_json::Value;

const NAME: &str = "release_lock";

/// chartkit pointed at the sandbox, with a short lock so expiry takes seconds.
fn chartkit(sandbox: &SandboxProcess, ctx: &TestContext, lock_seconds: u32) -> Command {
    let mut command = ctx.chartkit();
    command
        .env("KUBECONFIG", &sandbox.kubeconfig)
        .env("CHARTKIT_RELEASE_LOCK_SECONDS", lock_seconds.to_string());
    command
}

/// A Deployment whose pod never turns ready when `stuck` is set, so `--wait` holds the
/// upgrade open for as long as the test needs.
fn chart(ctx: &TestContext) -> String {
    ctx.demo_chart(&[
        ("values.yaml", "stuck: false\nvalue: one\n"),
        (
            "templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: locked-cm\ndata:\n  value: {{ .Values.value | quote }}\n",
        ),
        (
            "templates/deploy.yaml",
            r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: locked
spec:
  replicas: 1
  selector:
    matchLabels: {app: locked}
  template:
    metadata:
      labels: {app: locked}
      {{- if .Values.stuck }}
      annotations:
        sandbox.chartkit.dev/fail: never-ready
      {{- end }}
    spec:
      containers:
        - name: app
          image: nginx:1.27
"#,
        ),
    ])
}

fn history(sandbox: &SandboxProcess, ctx: &TestContext) -> Vec<Value> {
    let out = run_ok(chartkit(sandbox, ctx, 30).args(["history", "web", "-o", "json"]));
    serde_json::from_slice(&out.stdout).expect("history -o json")
}

fn statuses(history: &[Value]) -> Vec<(i64, String)> {
    history
        .iter()
        .map(|r| {
            (
                r["revision"].as_i64().expect("revision"),
                r["status"].as_str().expect("status").to_string(),
            )
        })
        .collect()
}

/// Waits until the newest revision is pending-upgrade: the upgrade is under way.
fn wait_for_pending(sandbox: &SandboxProcess, ctx: &TestContext, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let now = statuses(&history(sandbox, ctx));
        if now.last().is_some_and(|(_, s)| s == "pending-upgrade") {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the upgrade ended ({status}) before it was seen pending: {now:?}");
        }
        assert!(Instant::now() < deadline, "no pending upgrade: {now:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn stuck_upgrade(
    sandbox: &SandboxProcess,
    ctx: &TestContext,
    chart: &str,
    lock_seconds: u32,
    timeout: &str,
) -> Child {
    chartkit(sandbox, ctx, lock_seconds)
        .args([
            "upgrade",
            "web",
            chart,
            "--set",
            "stuck=true",
            "--wait",
            "--timeout",
            timeout,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chartkit upgrade")
}

fn lease(sandbox: &SandboxProcess, ctx: &TestContext) -> Option<Value> {
    let out = sandbox
        .kubectl(ctx, NAME)?
        .args(["get", "lease", "chartkit.release.web", "-o", "json"])
        .output()
        .expect("run kubectl");
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).expect("lease json"))
}

fn assert_lease_refusal(output: &Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "expected a refusal:\n{stderr}");
    assert!(
        stderr.contains("Error: UPGRADE FAILED: another operation is in progress on release web (lease default/chartkit.release.web held by chartkit upgrade by"),
        "{stderr}"
    );
    assert!(
        stderr.contains("if that operation was interrupted"),
        "{stderr}"
    );
}

#[test]
fn a_killed_upgrade_is_recovered_once_its_lease_expires() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.kubectl(&ctx, NAME).is_none() {
        return;
    }
    let chart = chart(&ctx);
    run_ok(chartkit(&sandbox, &ctx, 3).args(["install", "web", &chart, "--wait"]));
    assert!(
        lease(&sandbox, &ctx).is_none(),
        "a finished operation leaves no lease behind"
    );

    let mut upgrade = stuck_upgrade(&sandbox, &ctx, &chart, 3, "5m");
    wait_for_pending(&sandbox, &ctx, &mut upgrade);
    let held = lease(&sandbox, &ctx).expect("the upgrade holds a lease");
    assert!(
        held["spec"]["holderIdentity"]
            .as_str()
            .is_some_and(|h| h.starts_with("chartkit upgrade by ")),
        "{held}"
    );
    assert_eq!(held["spec"]["leaseDurationSeconds"], 3);
    upgrade.kill().expect("SIGKILL the upgrade");
    upgrade.wait().expect("reap the upgrade");

    // Straight after the kill the lease is still live: the next upgrade is refused.
    let refused = chartkit(&sandbox, &ctx, 3)
        .args(["upgrade", "web", &chart, "--set", "value=two", "--wait"])
        .output()
        .expect("run chartkit");
    assert_lease_refusal(&refused);
    assert_eq!(
        statuses(&history(&sandbox, &ctx)),
        [(1, "deployed".into()), (2, "pending-upgrade".into())],
        "a refused operation changes nothing"
    );

    // Once the lease has expired, the same command succeeds without repair.
    let deadline = Instant::now() + Duration::from_secs(30);
    let done = loop {
        let out = chartkit(&sandbox, &ctx, 3)
            .args(["upgrade", "web", &chart, "--set", "value=two", "--wait"])
            .output()
            .expect("run chartkit");
        if out.status.success() {
            break out;
        }
        assert_lease_refusal(&out);
        assert!(Instant::now() < deadline, "the lease never expired");
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(text(&done).contains("has been upgraded"), "{}", text(&done));
    let history = history(&sandbox, &ctx);
    assert_eq!(
        statuses(&history),
        [
            (1, "superseded".into()),
            (2, "failed".into()),
            (3, "deployed".into())
        ]
    );
    let interrupted = history[1]["description"].as_str().unwrap_or_default();
    assert!(
        interrupted.starts_with("Release \"web\" was interrupted: chartkit upgrade by "),
        "{interrupted}"
    );
    assert!(lease(&sandbox, &ctx).is_none(), "the lease is given back");
    let cm = sandbox
        .kubectl(&ctx, NAME)
        .expect("kubectl")
        .args([
            "get",
            "configmap",
            "locked-cm",
            "-o",
            "jsonpath={.data.value}",
        ])
        .output()
        .expect("run kubectl");
    assert_eq!(text(&cm), "two");

    // helm reads the recovered history as its own.
    if let Some(mut helm) = sandbox.helm(&ctx, NAME) {
        let listed = text(&run_ok(helm.args(["list", "-o", "json"])));
        assert!(
            listed.contains("\"revision\":\"3\"") && listed.contains("\"status\":\"deployed\""),
            "{listed}"
        );
    }
}

#[test]
fn concurrent_upgrades_never_interleave() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.kubectl(&ctx, NAME).is_none() {
        return;
    }
    let chart = chart(&ctx);
    run_ok(chartkit(&sandbox, &ctx, 2).args(["install", "web", &chart, "--wait"]));

    // A long upgrade keeps renewing its two-second lease: well after two seconds a second
    // upgrade is still refused.
    let mut first = stuck_upgrade(&sandbox, &ctx, &chart, 2, "8s");
    wait_for_pending(&sandbox, &ctx, &mut first);
    std::thread::sleep(Duration::from_secs(4));
    assert!(
        first.try_wait().expect("poll").is_none(),
        "the first upgrade should still be waiting"
    );
    let second = chartkit(&sandbox, &ctx, 2)
        .args(["upgrade", "web", &chart, "--set", "value=two"])
        .output()
        .expect("run chartkit");
    assert_lease_refusal(&second);
    let first = first.wait_with_output().expect("first upgrade");
    assert!(!first.status.success(), "the stuck upgrade times out");
    assert_eq!(
        statuses(&history(&sandbox, &ctx)),
        [(1, "deployed".into()), (2, "failed".into())]
    );

    // Two upgrades started together: whichever loses is refused with the lease message,
    // and the history has one new deployed revision per success, nothing pending.
    let racers: Vec<Child> = ["three", "four"]
        .iter()
        .map(|value| {
            chartkit(&sandbox, &ctx, 2)
                .args([
                    "upgrade",
                    "web",
                    &chart,
                    "--set",
                    &format!("value={value}"),
                    "--wait",
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start chartkit upgrade")
        })
        .collect();
    let outputs: Vec<Output> = racers
        .into_iter()
        .map(|c| c.wait_with_output().expect("racer"))
        .collect();
    let successes = outputs.iter().filter(|o| o.status.success()).count();
    assert!(successes >= 1, "at least one racer wins");
    for loser in outputs.iter().filter(|o| !o.status.success()) {
        assert_lease_refusal(loser);
    }
    let now = statuses(&history(&sandbox, &ctx));
    let revisions: Vec<i64> = now.iter().map(|(r, _)| *r).collect();
    assert_eq!(revisions, (1..=2 + successes as i64).collect::<Vec<_>>());
    assert_eq!(
        now.iter().filter(|(_, s)| s == "deployed").count(),
        1,
        "{now:?}"
    );
    assert!(
        !now.iter().any(|(_, s)| s.starts_with("pending")),
        "{now:?}"
    );
    assert!(lease(&sandbox, &ctx).is_none(), "the lease is given back");
}
