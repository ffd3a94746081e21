//! `chartkit test`: a release's test hooks run, their phases are recorded where helm reads
//! them, a failing test fails the command naming it, filters choose tests, and `--logs`
//! prints the test pods' logs. helm 4 runs the same tests on the same release as the
//! oracle for the output.

use chartkit_tests::TestContext;
use chartkit_tests::sandbox::{SandboxProcess, run_ok};
use chartkit_tests::stdout as text;

const NAME: &str = "release_test";

fn test_pod(name: &str, weight: i32, fail: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: Pod
metadata:
  name: "{{{{ .Release.Name }}}}-{name}"
  annotations:
    helm.sh/hook: test
    helm.sh/hook-weight: "{weight}"
    {fail}
spec:
  restartPolicy: Never
  containers:
    - name: check
      image: busybox
      command: ["true"]
"#
    )
}

fn chart(ctx: &TestContext) -> String {
    let bad = test_pod(
        "bad",
        2,
        "{{- if .Values.fail }}\n    sandbox.chartkit.dev/fail: job-fail\n    {{- end }}",
    );
    let ok = test_pod("ok", 1, "helm.sh/hook-delete-policy: hook-succeeded");
    let old = test_pod("legacy", 3, "").replace("hook: test", "hook: test-success");
    ctx.demo_chart(&[
        ("values.yaml", "fail: false\n"),
        (
            "templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tested\ndata:\n  a: b\n",
        ),
        ("templates/tests/ok.yaml", &ok),
        ("templates/tests/bad.yaml", &bad),
        ("templates/tests/legacy.yaml", &old),
        ("templates/NOTES.txt", "Notes are not shown by test.\n"),
    ])
}

/// The output with the run times blanked: they differ between any two runs.
fn untimed(output: &str) -> String {
    output
        .lines()
        .map(|line| {
            for prefix in ["LAST DEPLOYED:", "Last Started:", "Last Completed:"] {
                if line.starts_with(prefix) {
                    return prefix.to_string();
                }
            }
            line.to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn pod_exists(sandbox: &SandboxProcess, ctx: &TestContext, name: &str) -> bool {
    sandbox
        .kubectl(ctx, NAME)
        .expect("kubectl")
        .args(["get", "pod", name])
        .output()
        .expect("run kubectl")
        .status
        .success()
}

#[test]
fn tests_run_record_their_phase_and_fail_by_name_like_helm() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let Some(mut helm) = sandbox.helm(&ctx, NAME) else {
        return;
    };
    if sandbox.kubectl(&ctx, NAME).is_none() {
        return;
    }
    let chart = chart(&ctx);
    run_ok(sandbox.chartkit(&ctx).args(["install", "web", &chart]));

    let ours = run_ok(sandbox.chartkit(&ctx).args(["test", "web"]));
    let ours = text(&ours);
    for phase in ["web-ok", "web-bad", "web-legacy"] {
        assert!(
            ours.contains(&format!("TEST SUITE:     {phase}\n")),
            "{phase} missing:\n{ours}"
        );
    }
    assert_eq!(
        ours.matches("Phase:          Succeeded").count(),
        3,
        "{ours}"
    );
    assert!(!ours.contains("Notes are not shown"), "{ours}");
    // hook-succeeded deletes the passing pod; the default policy keeps the others until
    // the next run.
    assert!(!pod_exists(&sandbox, &ctx, "web-ok"));
    assert!(pod_exists(&sandbox, &ctx, "web-bad"));

    // helm reads the phases chartkit recorded, and its own run prints what ours did.
    let status = text(&run_ok(helm.args(["status", "web"])));
    assert_eq!(status.matches("Phase:          Succeeded").count(), 3);
    let theirs = text(&run_ok(
        sandbox
            .helm(&ctx, NAME)
            .expect("helm")
            .args(["test", "web"]),
    ));
    assert_eq!(untimed(&ours), untimed(&theirs));

    // A failing test: the status still shows every phase, and the error names the test.
    run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["upgrade", "web", &chart, "--set", "fail=true"]),
    );
    let failed = sandbox
        .chartkit(&ctx)
        .args(["test", "web"])
        .output()
        .expect("run chartkit");
    assert_eq!(failed.status.code(), Some(1));
    let stdout = text(&failed);
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(stdout.contains("Phase:          Failed"), "{stdout}");
    assert!(
        stderr.starts_with(
            "Error: test hook demo/templates/tests/bad.yaml failed: Pod/web-bad: container check: Error (exit code 1)"
        ),
        "{stderr}"
    );
    let helm_failed = sandbox
        .helm(&ctx, NAME)
        .expect("helm")
        .args(["test", "web"])
        .output()
        .expect("run helm");
    // helm says "resource Pod/default/web-bad not ready. status: Failed, message: pod
    // web-bad failed"; chartkit names the test's file and the container's exit instead.
    assert_eq!(helm_failed.status.code(), Some(1));
    assert_eq!(untimed(&stdout), untimed(&text(&helm_failed)));

    // Filters: only the named test runs; `--logs` prints its pod's logs before deletion.
    run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["upgrade", "web", &chart, "--set", "fail=false"]),
    );
    let only =
        run_ok(
            sandbox
                .chartkit(&ctx)
                .args(["test", "web", "--filter", "name=web-ok", "--logs"]),
        );
    let only = text(&only);
    assert!(only.contains("TEST SUITE:     web-ok\n"), "{only}");
    assert!(!only.contains("TEST SUITE:     web-bad"), "{only}");
    assert!(only.contains("\nPOD LOGS: web-ok (check)\n"), "{only}");
    let skipped = run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["test", "web", "--filter", "!name=web-bad"]),
    );
    let skipped = text(&skipped);
    assert!(
        skipped.contains("TEST SUITE:     web-legacy\n"),
        "{skipped}"
    );
    assert!(!skipped.contains("TEST SUITE:     web-bad"), "{skipped}");
    // helm's `get hooks` reads the reordered record.
    let hooks = text(&run_ok(
        sandbox
            .helm(&ctx, NAME)
            .expect("helm")
            .args(["get", "hooks", "web"]),
    ));
    assert!(hooks.contains("web-legacy"), "{hooks}");

    let unknown = sandbox
        .chartkit(&ctx)
        .args(["test", "nope"])
        .output()
        .expect("run chartkit");
    assert_eq!(
        String::from_utf8_lossy(&unknown.stderr),
        "Error: release: not found\n"
    );
}
