//! `--atomic` / `--rollback-on-failure` imply waiting, as in helm 4 (issue #28): a chart
//! whose pod never becomes ready, installed or upgraded with either flag, with and
//! without `--wait` (and with `--wait=hookOnly`, which the flags override), makes chartkit
//! wait for the timeout, fail with helm's exit code and words, and uninstall (install) or
//! roll back (upgrade). helm does the same steps in a second sandbox; the exit codes,
//! the error up to the wait's own report, the histories and the whole clusters after
//! must be the same.

use std::process::Output;
use std::time::{Duration, Instant};

use chartkit_tests::TestContext;
use chartkit_tests::cluster_state::converge;
use chartkit_tests::sandbox::{SandboxProcess, run_ok};
use chartkit_tests::{stderr, stdout};
use serde_json::Value;

const NAME: &str = "release_atomic";

/// Each failing operation's `--timeout`: what chartkit must now wait for.
const TIMEOUT: Duration = Duration::from_secs(4);

/// A ConfigMap `app-cm` and a Deployment `app` whose pods, with `stuck=true`, run but
/// never become ready.
fn chart(ctx: &TestContext) -> String {
    chartkit_tests::charts::never_ready_chart(ctx, "app")
}

/// chartkit on one sandbox, helm on another.
struct Pair {
    ctx: TestContext,
    chartkit: SandboxProcess,
    helm: SandboxProcess,
}

impl Pair {
    fn start() -> Option<Pair> {
        chartkit_tests::peers::helm_or_skip(NAME)?;
        chartkit_tests::peers::kubectl_or_skip(NAME)?;
        let ctx = TestContext::new();
        let chartkit = SandboxProcess::start(&ctx, &[]);
        let helm = SandboxProcess::start(&ctx, &[]);
        Some(Pair {
            ctx,
            chartkit,
            helm,
        })
    }

    /// Runs `args` with chartkit, then with helm; returns their outputs and how long
    /// chartkit took.
    fn run(&self, args: &[&str]) -> (Output, Output, Duration) {
        let started = Instant::now();
        let chartkit = self
            .chartkit
            .chartkit(&self.ctx)
            .args(args)
            .output()
            .expect("run chartkit");
        let took = started.elapsed();
        let helm = self
            .helm
            .helm(&self.ctx, NAME)
            .expect("helm")
            .args(args)
            .output()
            .expect("run helm");
        (chartkit, helm, took)
    }

    fn step(&self, args: &[&str]) {
        run_ok(self.chartkit.chartkit(&self.ctx).args(args));
        run_ok(self.helm.helm(&self.ctx, NAME).expect("helm").args(args));
    }

    /// `history -o json` of the release as helm reads it from each cluster: (status,
    /// description) per revision, a failure's description cut after `failed: ` (what
    /// follows is the wait's report, in each tool's words).
    fn histories(&self, release: &str) -> [Result<Vec<(String, String)>, String>; 2] {
        [&self.chartkit, &self.helm].map(|sandbox| {
            let out = sandbox
                .helm(&self.ctx, NAME)
                .expect("helm")
                .args(["history", release, "-n", "apps", "-o", "json"])
                .output()
                .expect("run helm history");
            if !out.status.success() {
                return Err(stderr(&out));
            }
            let history: Value = serde_json::from_str(&stdout(&out)).expect("history JSON");
            Ok(history
                .as_array()
                .expect("a list of revisions")
                .iter()
                .map(|r| {
                    let mut description = r["description"].as_str().unwrap_or("").to_string();
                    if let Some(at) = description.find("failed: ") {
                        description.truncate(at + "failed: ".len());
                    }
                    (r["status"].as_str().unwrap_or("").to_string(), description)
                })
                .collect())
        })
    }

    fn converge(&self, step: &str) {
        converge(
            [&self.chartkit, &self.helm],
            &self.ctx,
            NAME,
            ["chartkit", "helm"],
            step,
        );
    }
}

/// The `Error:` line, up to and including `marker` (what follows is the failure in each
/// tool's words).
fn error_up_to<'a>(stderr: &'a str, marker: &str) -> &'a str {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("Error: "))
        .unwrap_or_else(|| panic!("no error line in:\n{stderr}"));
    let end = line
        .find(marker)
        .unwrap_or_else(|| panic!("{marker:?} not in {line:?}"));
    &line[..end + marker.len()]
}

/// A failed operation as both tools ended it: the same exit code (helm's 1), the same
/// error up to `marker`, and chartkit having waited for the timeout.
fn assert_failed_alike(chartkit: &Output, helm: &Output, took: Duration, marker: &str) {
    assert_eq!(
        chartkit.status.code(),
        helm.status.code(),
        "chartkit:\n{}\nhelm:\n{}",
        stderr(chartkit),
        stderr(helm)
    );
    assert_eq!(chartkit.status.code(), Some(1));
    assert_eq!(
        error_up_to(&stderr(chartkit), marker),
        error_up_to(&stderr(helm), marker)
    );
    assert!(
        took >= TIMEOUT,
        "chartkit gave up after {took:?}, before the {TIMEOUT:?} timeout: it did not wait"
    );
}

fn atomic_install(flags: &[&str]) {
    let Some(pair) = Pair::start() else {
        return;
    };
    let chart = chart(&pair.ctx);
    let timeout = format!("{}s", TIMEOUT.as_secs());
    let mut args = vec![
        "install",
        "app",
        &chart,
        "-n",
        "apps",
        "--create-namespace",
        "--set",
        "stuck=true",
        "--timeout",
        &timeout,
    ];
    args.extend_from_slice(flags);
    let (chartkit, helm, took) = pair.run(&args);
    assert_failed_alike(
        &chartkit,
        &helm,
        took,
        "has been uninstalled due to rollback-on-failure being set: ",
    );
    let [ours, theirs] = pair.histories("app");
    assert_eq!(ours, theirs);
    assert_eq!(ours, Err("Error: release: not found\n".to_string()));
    pair.converge(&format!("install {flags:?}"));
}

#[test]
fn atomic_install_without_wait_waits_and_uninstalls() {
    atomic_install(&["--atomic"]);
}

#[test]
fn rollback_on_failure_install_with_wait_uninstalls() {
    atomic_install(&["--rollback-on-failure", "--wait"]);
}

#[test]
fn rollback_on_failure_overrides_wait_hook_only() {
    atomic_install(&["--wait=hookOnly", "--rollback-on-failure"]);
}

fn atomic_upgrade(flags: &[&str]) {
    let Some(pair) = Pair::start() else {
        return;
    };
    let chart = chart(&pair.ctx);
    pair.step(&[
        "install",
        "app",
        &chart,
        "-n",
        "apps",
        "--create-namespace",
        "--wait",
    ]);
    let timeout = format!("{}s", TIMEOUT.as_secs());
    let mut args = vec![
        "upgrade",
        "app",
        &chart,
        "-n",
        "apps",
        "--set",
        "stuck=true,value=two",
        "--timeout",
        &timeout,
    ];
    args.extend_from_slice(flags);
    let (chartkit, helm, took) = pair.run(&args);
    assert_failed_alike(
        &chartkit,
        &helm,
        took,
        "has been rolled back due to rollback-on-failure being set: ",
    );
    let [ours, theirs] = pair.histories("app");
    assert_eq!(ours, theirs);
    let statuses: Vec<String> = ours.expect("a history").into_iter().map(|r| r.0).collect();
    assert_eq!(statuses, ["superseded", "failed", "deployed"]);
    pair.converge(&format!("upgrade {flags:?}"));
}

#[test]
fn atomic_upgrade_without_wait_waits_and_rolls_back() {
    atomic_upgrade(&["--atomic"]);
}

#[test]
fn atomic_upgrade_with_wait_rolls_back() {
    atomic_upgrade(&["--atomic", "--wait"]);
}

/// Without either flag nothing waits, in both tools: the stuck chart is deployed.
#[test]
fn without_atomic_nothing_waits() {
    let Some(pair) = Pair::start() else {
        return;
    };
    let chart = chart(&pair.ctx);
    pair.step(&[
        "install",
        "app",
        &chart,
        "-n",
        "apps",
        "--create-namespace",
        "--set",
        "stuck=true",
        "--timeout",
        "4s",
    ]);
    let [ours, theirs] = pair.histories("app");
    assert_eq!(ours, theirs);
    assert_eq!(
        ours,
        Ok(vec![(
            "deployed".to_string(),
            "Install complete".to_string()
        )])
    );
    pair.converge("install without --atomic");
}
