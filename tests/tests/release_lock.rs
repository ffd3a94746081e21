//! The per-release lock: an upgrade killed half-way (SIGKILL) is recovered by the next
//! operation with no hand edits, at once when it ran on this machine, else once its lease
//! has expired; a release helm left pending is explained, and taken on with `--recover`;
//! two upgrades of one release
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

/// A Deployment `locked` whose pod never turns ready when `stuck` is set, so `--wait`
/// holds the upgrade open for as long as the test needs, and a ConfigMap `locked-cm`.
fn chart(ctx: &TestContext) -> String {
    chartkit_tests::charts::never_ready_chart(ctx, "locked")
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

/// Runs the upgrade that ends the killed one's story: it succeeds, and the history shows
/// the killed revision failed between the first and the new one.
fn assert_recovered(sandbox: &SandboxProcess, ctx: &TestContext, done: &Output) -> Vec<Value> {
    assert!(text(done).contains("has been upgraded"), "{}", text(done));
    let history = history(sandbox, ctx);
    assert_eq!(
        statuses(&history),
        [
            (1, "superseded".into()),
            (2, "failed".into()),
            (3, "deployed".into())
        ]
    );
    assert!(lease(sandbox, ctx).is_none(), "the lease is given back");
    let cm = sandbox
        .kubectl(ctx, NAME)
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
    history
}

/// helm reads the recovered history as its own and upgrades the release again. (The
/// release is written client-side throughout, as `--server-side=false` at install records:
/// the killed upgrade left its pod template behind, which no later three-way merge from
/// the deployed revision removes, so no upgrade here waits for readiness.)
fn assert_helm_carries_on(sandbox: &SandboxProcess, ctx: &TestContext, chart: &str) {
    let Some(mut helm) = sandbox.helm(ctx, NAME) else {
        return;
    };
    let listed = text(&run_ok(helm.args(["list", "-o", "json"])));
    assert!(
        listed.contains("\"revision\":\"3\"") && listed.contains("\"status\":\"deployed\""),
        "{listed}"
    );
    let mut helm = sandbox.helm(ctx, NAME).expect("helm");
    let upgraded = run_ok(helm.args(["upgrade", "web", chart, "--set", "value=three"]));
    assert!(
        text(&upgraded).contains("has been upgraded"),
        "{}",
        text(&upgraded)
    );
    let mut helm = sandbox.helm(ctx, NAME).expect("helm");
    let theirs: Vec<Value> =
        serde_json::from_slice(&run_ok(helm.args(["history", "web", "-o", "json"])).stdout)
            .expect("helm history -o json");
    assert_eq!(
        statuses(&theirs),
        [
            (1, "superseded".into()),
            (2, "failed".into()),
            (3, "superseded".into()),
            (4, "deployed".into())
        ]
    );
}

#[test]
fn a_killed_upgrade_on_this_machine_is_taken_over_at_once() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.kubectl(&ctx, NAME).is_none() {
        return;
    }
    let chart = chart(&ctx);
    run_ok(chartkit(&sandbox, &ctx, 30).args([
        "install",
        "web",
        &chart,
        "--wait",
        "--server-side=false",
    ]));
    assert!(
        lease(&sandbox, &ctx).is_none(),
        "a finished operation leaves no lease behind"
    );

    // A thirty-second lease: waiting it out would show.
    let mut upgrade = stuck_upgrade(&sandbox, &ctx, &chart, 30, "5m");
    wait_for_pending(&sandbox, &ctx, &mut upgrade);
    let held = lease(&sandbox, &ctx).expect("the upgrade holds a lease");
    let process = held["metadata"]["annotations"]["chartkit.dev/holder-process"]
        .as_str()
        .unwrap_or_default();
    assert!(
        process.contains(&format!(";pid={};start=", upgrade.id())),
        "the lease names the holder's process: {held}"
    );
    upgrade.kill().expect("SIGKILL the upgrade");
    upgrade.wait().expect("reap the upgrade");

    let started = Instant::now();
    let done = chartkit(&sandbox, &ctx, 30)
        .args(["upgrade", "web", &chart, "--set", "value=two"])
        .output()
        .expect("run chartkit");
    let took = started.elapsed();
    assert!(done.status.success(), "{}", chartkit_tests::stderr(&done));
    assert!(took < Duration::from_secs(2), "the takeover took {took:?}");
    let history = assert_recovered(&sandbox, &ctx, &done);
    let interrupted = history[1]["description"].as_str().unwrap_or_default();
    assert!(
        interrupted.starts_with("Release \"web\" was interrupted: chartkit upgrade by ")
            && interrupted
                .ends_with("ended without finishing (its process is gone from this machine)"),
        "{interrupted}"
    );
    assert_helm_carries_on(&sandbox, &ctx, &chart);
}

#[test]
fn a_killed_upgrade_from_another_machine_is_recovered_once_its_lease_expires() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.kubectl(&ctx, NAME).is_none() {
        return;
    }
    let chart = chart(&ctx);
    run_ok(chartkit(&sandbox, &ctx, 3).args([
        "install",
        "web",
        &chart,
        "--wait",
        "--server-side=false",
    ]));

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
    // As if the holder ran on another machine: its process cannot be looked at from here.
    run_ok(sandbox.kubectl(&ctx, NAME).expect("kubectl").args([
        "annotate",
        "--overwrite",
        "lease",
        "chartkit.release.web",
        "chartkit.dev/holder-process=boot=another-machine;pidns=1;pid=1;start=1;uid=0",
    ]));
    upgrade.kill().expect("SIGKILL the upgrade");
    upgrade.wait().expect("reap the upgrade");

    // Straight after the kill the lease is still live: the next upgrade is refused.
    let refused = chartkit(&sandbox, &ctx, 3)
        .args(["upgrade", "web", &chart, "--set", "value=two"])
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
            .args(["upgrade", "web", &chart, "--set", "value=two"])
            .output()
            .expect("run chartkit");
        if out.status.success() {
            break out;
        }
        assert_lease_refusal(&out);
        assert!(Instant::now() < deadline, "the lease never expired");
        std::thread::sleep(Duration::from_millis(500));
    };
    let history = assert_recovered(&sandbox, &ctx, &done);
    let interrupted = history[1]["description"].as_str().unwrap_or_default();
    assert!(
        interrupted.starts_with("Release \"web\" was interrupted: chartkit upgrade by ")
            && interrupted.contains("stopped renewing the release lock, which expired at "),
        "{interrupted}"
    );
    assert_helm_carries_on(&sandbox, &ctx, &chart);
}

#[test]
fn a_killed_helm_upgrade_is_explained_and_recovered_with_recover() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.kubectl(&ctx, NAME).is_none() {
        return;
    }
    let Some(mut helm) = sandbox.helm(&ctx, NAME) else {
        return;
    };
    let chart = chart(&ctx);
    run_ok(helm.args(["install", "web", &chart, "--wait", "--server-side=false"]));
    let mut upgrade = sandbox
        .helm(&ctx, NAME)
        .expect("helm")
        .args([
            "upgrade",
            "web",
            &chart,
            "--set",
            "stuck=true",
            "--wait",
            "--timeout",
            "5m",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start helm upgrade");
    wait_for_pending(&sandbox, &ctx, &mut upgrade);
    upgrade.kill().expect("SIGKILL helm");
    upgrade.wait().expect("reap helm");
    assert!(lease(&sandbox, &ctx).is_none(), "helm takes no lease");

    // Refused with what was found, and how to go on.
    let refused = chartkit(&sandbox, &ctx, 30)
        .args(["upgrade", "web", &chart, "--set", "value=two"])
        .output()
        .expect("run chartkit");
    let stderr = chartkit_tests::stderr(&refused);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("Error: UPGRADE FAILED: release web is stuck: revision 2 has been pending-upgrade since 20"),
        "{stderr}"
    );
    assert!(
        stderr.contains(" ago), and no operation holds it (chartkit's release lock is free)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("\nhint: if no helm operation is running on release web, run this again with --recover to mark revision 2 failed and go on\n"),
        "{stderr}"
    );
    assert_eq!(
        statuses(&history(&sandbox, &ctx)),
        [(1, "deployed".into()), (2, "pending-upgrade".into())],
        "a refused operation changes nothing"
    );
    // So is a rollback, and `status` says the same.
    let rollback = chartkit(&sandbox, &ctx, 30)
        .args(["rollback", "web"])
        .output()
        .expect("run chartkit");
    assert!(!rollback.status.success());
    assert!(
        chartkit_tests::stderr(&rollback).starts_with("Error: release web is stuck: revision 2"),
        "{}",
        chartkit_tests::stderr(&rollback)
    );
    let status = run_ok(chartkit(&sandbox, &ctx, 30).args(["status", "web"]));
    assert!(
        text(&status).contains("STATUS: pending-upgrade"),
        "{}",
        text(&status)
    );
    let warned = chartkit_tests::stderr(&status);
    assert!(
        warned.starts_with("level=WARN msg=\"release web is stuck: revision 2 has been pending-upgrade since ")
            && warned.contains("`chartkit upgrade web CHART --recover` or `chartkit rollback web --recover` marks revision 2 failed"),
        "{warned}"
    );

    let done = chartkit(&sandbox, &ctx, 30)
        .args(["upgrade", "web", &chart, "--set", "value=two", "--recover"])
        .output()
        .expect("run chartkit");
    assert!(done.status.success(), "{}", chartkit_tests::stderr(&done));
    let history = assert_recovered(&sandbox, &ctx, &done);
    let interrupted = history[1]["description"].as_str().unwrap_or_default();
    assert!(
        interrupted.starts_with(
            "Release \"web\" was interrupted: revision 2 was left pending-upgrade since "
        ) && interrupted.ends_with(
            "with no operation holding it, and chartkit upgrade --recover marked it failed"
        ),
        "{interrupted}"
    );
    let quiet = run_ok(chartkit(&sandbox, &ctx, 30).args(["status", "web"]));
    assert_eq!(
        chartkit_tests::stderr(&quiet),
        "",
        "nothing is stuck any more"
    );
    assert_helm_carries_on(&sandbox, &ctx, &chart);
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
