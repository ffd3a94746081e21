//! chartkit reads the release records helm writes: `list`, `history`, `status` and the
//! `get` commands print exactly what helm prints for the same releases, with the Secret
//! driver and with HELM_DRIVER=configmap.
//!
//! Nothing is normalised: both programs read the same stored records, and every time
//! they print comes from those records, not from the clock.

use std::path::Path;
use std::process::{Command, Output};

use chartkit_tests::TestContext;
use chartkit_tests::corpus::corpus_or_skip;
use chartkit_tests::sandbox::{SandboxProcess, run_ok};

fn podinfo(corpus: &Path) -> String {
    let charts = corpus.join("charts");
    let found = std::fs::read_dir(&charts)
        .expect("corpus charts")
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("podinfo-") && n.ends_with(".tgz"))
        })
        .expect("podinfo in the corpus");
    found.display().to_string()
}

fn helm(sandbox: &SandboxProcess, ctx: &TestContext, args: &[&str]) -> Output {
    let mut command = sandbox.helm(ctx, "release_read").expect("helm");
    run_ok(command.args(args))
}

/// Runs `args` with helm and with chartkit (same kubeconfig, same variables) and checks
/// that both succeed with the same stdout, or both fail.
fn same(
    sandbox: &SandboxProcess,
    ctx: &TestContext,
    env: &[(&str, &str)],
    args: &[&str],
) -> String {
    let mut helm = sandbox.helm(ctx, "release_read").expect("helm");
    let mut chartkit = ctx.chartkit();
    chartkit.env("KUBECONFIG", &sandbox.kubeconfig);
    for command in [&mut helm, &mut chartkit] {
        command.args(args);
        for (k, v) in env {
            command.env(k, v);
        }
    }
    let expected = helm.output().expect("run helm");
    let got = chartkit.output().expect("run chartkit");
    let text = |o: &Output| String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        expected.status.success(),
        got.status.success(),
        "{args:?}: helm {} / chartkit {}\nhelm stderr: {}\nchartkit stderr: {}",
        expected.status,
        got.status,
        String::from_utf8_lossy(&expected.stderr),
        String::from_utf8_lossy(&got.stderr)
    );
    assert_eq!(
        text(&got),
        text(&expected),
        "{args:?} (env {env:?}): chartkit's stdout differs from helm's\nchartkit stderr: {}",
        String::from_utf8_lossy(&got.stderr)
    );
    if !expected.status.success() {
        let first_line = |o: &Output| {
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .find(|l| l.starts_with("Error: "))
                .unwrap_or_default()
                .to_owned()
        };
        assert_eq!(
            first_line(&got),
            first_line(&expected),
            "{args:?}: error differs"
        );
    }
    text(&expected)
}

#[test]
fn release_records_read_as_helm_reads_them() {
    let ctx = TestContext::new();
    let Some(corpus) = corpus_or_skip("release_records_read_as_helm_reads_them") else {
        return;
    };
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox
        .helm(&ctx, "release_records_read_as_helm_reads_them")
        .is_none()
    {
        return;
    }
    let chart = podinfo(&corpus);

    // web: installed then upgraded (revision 1 superseded), with user values.
    helm(
        &sandbox,
        &ctx,
        &[
            "install",
            "web",
            &chart,
            "-n",
            "apps",
            "--create-namespace",
            "--set",
            "replicaCount=2",
        ],
    );
    helm(
        &sandbox,
        &ctx,
        &[
            "upgrade",
            "web",
            &chart,
            "-n",
            "apps",
            "--set",
            "replicaCount=3",
            "--set",
            "ui.message=<hi & bye>",
        ],
    );
    // gone: uninstalled with its history kept.
    helm(&sandbox, &ctx, &["install", "gone", &chart, "-n", "apps"]);
    helm(
        &sandbox,
        &ctx,
        &["uninstall", "gone", "-n", "apps", "--keep-history"],
    );
    // stuck: its pods never become ready, so --wait fails and the release is failed.
    let mut failing = sandbox.helm(&ctx, "release_read").expect("helm");
    let failed = failing
        .args([
            "install",
            "stuck",
            &chart,
            "-n",
            "apps",
            "--wait",
            "--timeout",
            "3s",
        ])
        .args([
            "--set",
            "podAnnotations.sandbox\\.chartkit\\.dev/fail=never-ready",
        ])
        .output()
        .expect("run helm");
    assert!(
        !failed.status.success(),
        "the never-ready install should fail"
    );
    // other: another namespace.
    helm(
        &sandbox,
        &ctx,
        &[
            "install",
            "other",
            &chart,
            "-n",
            "team",
            "--create-namespace",
        ],
    );

    let none: &[(&str, &str)] = &[];
    let listed = same(&sandbox, &ctx, none, &["list", "-n", "apps", "-o", "json"]);
    for name in [
        "\"web\"",
        "\"gone\"",
        "\"stuck\"",
        "\"failed\"",
        "\"uninstalled\"",
    ] {
        assert!(listed.contains(name), "{name} missing from {listed}");
    }
    let everywhere = same(&sandbox, &ctx, none, &["list", "-A", "-o", "json"]);
    assert!(everywhere.contains("\"team\""), "{everywhere}");
    same(&sandbox, &ctx, none, &["list", "-n", "apps"]);
    same(&sandbox, &ctx, none, &["list", "-A", "-o", "yaml"]);
    same(
        &sandbox,
        &ctx,
        none,
        &["list", "-n", "apps", "--superseded", "-o", "json"],
    );
    same(
        &sandbox,
        &ctx,
        none,
        &["list", "-n", "apps", "--deployed", "--failed", "-o", "json"],
    );
    same(
        &sandbox,
        &ctx,
        none,
        &["list", "-n", "apps", "--uninstalled", "-q"],
    );
    same(
        &sandbox,
        &ctx,
        none,
        &[
            "list",
            "-n",
            "apps",
            "--filter",
            "^(web|st)",
            "-r",
            "-o",
            "json",
        ],
    );
    same(&sandbox, &ctx, none, &["list", "-A", "-d", "--no-headers"]);
    same(
        &sandbox,
        &ctx,
        none,
        &["list", "-n", "apps", "-l", "status=deployed", "-o", "json"],
    );

    let history = same(
        &sandbox,
        &ctx,
        none,
        &["history", "web", "-n", "apps", "-o", "json"],
    );
    assert!(history.contains("\"superseded\""), "{history}");
    same(&sandbox, &ctx, none, &["history", "web", "-n", "apps"]);
    same(
        &sandbox,
        &ctx,
        none,
        &["history", "web", "-n", "apps", "--max", "1", "-o", "yaml"],
    );
    same(&sandbox, &ctx, none, &["history", "nobody", "-n", "apps"]);

    for release in ["web", "gone", "stuck"] {
        same(
            &sandbox,
            &ctx,
            none,
            &["get", "values", release, "-n", "apps", "-o", "json"],
        );
        same(
            &sandbox,
            &ctx,
            none,
            &["get", "manifest", release, "-n", "apps"],
        );
        same(
            &sandbox,
            &ctx,
            none,
            &["get", "notes", release, "-n", "apps"],
        );
        same(
            &sandbox,
            &ctx,
            none,
            &["get", "hooks", release, "-n", "apps"],
        );
        same(
            &sandbox,
            &ctx,
            none,
            &["get", "metadata", release, "-n", "apps", "-o", "json"],
        );
    }
    let values = same(
        &sandbox,
        &ctx,
        none,
        &["get", "values", "web", "-n", "apps", "-o", "json"],
    );
    assert!(values.contains("\\u003chi \\u0026 bye\\u003e"), "{values}");
    same(
        &sandbox,
        &ctx,
        none,
        &["get", "values", "web", "-n", "apps"],
    );
    same(
        &sandbox,
        &ctx,
        none,
        &[
            "get",
            "values",
            "web",
            "-n",
            "apps",
            "--revision",
            "1",
            "-o",
            "yaml",
        ],
    );
    same(
        &sandbox,
        &ctx,
        none,
        &["get", "values", "web", "-n", "apps", "--all", "-o", "json"],
    );
    same(
        &sandbox,
        &ctx,
        none,
        &["get", "metadata", "web", "-n", "apps"],
    );
    same(
        &sandbox,
        &ctx,
        none,
        &[
            "get",
            "metadata",
            "web",
            "-n",
            "apps",
            "--revision",
            "1",
            "-o",
            "yaml",
        ],
    );
    same(
        &sandbox,
        &ctx,
        none,
        &["get", "notes", "other", "-n", "team"],
    );
    same(
        &sandbox,
        &ctx,
        none,
        &["get", "manifest", "web", "-n", "apps", "--revision", "9"],
    );
    same(&sandbox, &ctx, none, &["get", "all", "web", "-n", "apps"]);

    // status reads the release's objects back from the cluster (and the pods its
    // Deployment selects) for JSON and YAML; nothing changes them between the two runs.
    let status = same(
        &sandbox,
        &ctx,
        none,
        &["status", "web", "-n", "apps", "-o", "json"],
    );
    assert!(status.contains("\"v1/Pod(related)\""), "{status}");
    same(
        &sandbox,
        &ctx,
        none,
        &["status", "web", "-n", "apps", "-o", "yaml"],
    );
    same(
        &sandbox,
        &ctx,
        none,
        &[
            "status",
            "web",
            "-n",
            "apps",
            "--revision",
            "1",
            "-o",
            "json",
        ],
    );
    same(
        &sandbox,
        &ctx,
        none,
        &["status", "stuck", "-n", "apps", "-o", "json"],
    );
    // The table's RESOURCES: kubectl's tables of the objects and their pods. helm prints
    // the groups in Go's map order, which changes from run to run, and ages move on, so
    // the groups are compared as a set and the AGE column (always last) is blanked.
    let table = |program: &mut Command| -> (String, Vec<String>) {
        let out = run_ok(program.args(["status", "web", "-n", "apps"]));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (head, rest) = text.split_once("RESOURCES:\n").expect("a RESOURCES part");
        let (resources, tail) = rest.split_once("\n\n\n").unwrap_or((rest, ""));
        let mut groups: Vec<String> = resources
            .split("==> ")
            .filter(|g| !g.is_empty())
            .map(|g| {
                g.lines()
                    .map(|l| match l.rsplit_once("   ") {
                        Some((front, _)) if !l.starts_with("NAME") => format!("{front}   AGE"),
                        _ => l.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
                    .trim_end()
                    .to_string()
            })
            .collect();
        groups.sort();
        (format!("{head}|{tail}"), groups)
    };
    let mut ours = ctx.chartkit();
    ours.env("KUBECONFIG", &sandbox.kubeconfig);
    let ours = table(&mut ours);
    let theirs = table(&mut sandbox.helm(&ctx, "release_read").expect("helm"));
    assert_eq!(ours, theirs);
    assert!(
        ours.1
            .iter()
            .any(|g| g.starts_with("v1/Pod(related)\nNAME")),
        "{ours:?}"
    );
    // An uninstalled release's objects are gone, so helm's table has no RESOURCES part.
    same(&sandbox, &ctx, none, &["status", "gone", "-n", "apps"]);
    same(&sandbox, &ctx, none, &["status", "nobody", "-n", "apps"]);

    // The ConfigMap driver.
    let cm = &[("HELM_DRIVER", "configmap")];
    let mut install = sandbox.helm(&ctx, "release_read").expect("helm");
    run_ok(install.env("HELM_DRIVER", "configmap").args([
        "install",
        "cm",
        &chart,
        "-n",
        "cms",
        "--create-namespace",
        "--set",
        "replicaCount=4",
    ]));
    let listed = same(&sandbox, &ctx, cm, &["list", "-n", "cms", "-o", "json"]);
    assert!(listed.contains("\"cm\""), "{listed}");
    same(
        &sandbox,
        &ctx,
        cm,
        &["history", "cm", "-n", "cms", "-o", "json"],
    );
    same(
        &sandbox,
        &ctx,
        cm,
        &["get", "values", "cm", "-n", "cms", "-o", "json"],
    );
    same(
        &sandbox,
        &ctx,
        cm,
        &["get", "metadata", "cm", "-n", "cms", "-o", "json"],
    );
    // The Secret driver does not see ConfigMap records.
    let secrets = same(&sandbox, &ctx, none, &["list", "-n", "cms", "-o", "json"]);
    assert_eq!(secrets, "[]\n");
}

/// A record helm wrote decodes and re-encodes to the very JSON helm stored.
#[test]
fn helm_records_round_trip_byte_for_byte() {
    let ctx = TestContext::new();
    let Some(corpus) = corpus_or_skip("helm_records_round_trip_byte_for_byte") else {
        return;
    };
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox
        .kubectl(&ctx, "helm_records_round_trip_byte_for_byte")
        .is_none()
    {
        return;
    }
    if sandbox
        .helm(&ctx, "helm_records_round_trip_byte_for_byte")
        .is_none()
    {
        return;
    }
    let chart = podinfo(&corpus);
    helm(
        &sandbox,
        &ctx,
        &["install", "rt", &chart, "--set", "a.b=1e+21,c=<x>"],
    );
    helm(
        &sandbox,
        &ctx,
        &["upgrade", "rt", &chart, "--set", "a.b=0.5"],
    );
    for revision in [1, 2] {
        let mut kubectl = sandbox.kubectl(&ctx, "release_read").expect("kubectl");
        let out = run_ok(kubectl.args([
            "get",
            "secret",
            &format!("sh.helm.release.v1.rt.v{revision}"),
            "-o",
            "jsonpath={.data.release}",
        ]));
        // jsonpath gives the Secret's data as the API has it: base64 of the stored string.
        let stored = pipe(Command::new("base64").arg("-d"), &out.stdout);
        let stored = String::from_utf8(stored).expect("the stored string is base64 text");
        let json = chartkit_release::codec::decode_json(&stored).expect("helm's record decodes");
        let release = chartkit_release::Release::from_json(&json).expect("helm's record parses");
        assert_eq!(release.version, revision);
        assert_eq!(
            release.to_json(),
            String::from_utf8(json).expect("JSON is UTF-8")
        );
    }
}

fn pipe(command: &mut Command, input: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = command.spawn().expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "{command:?} failed");
    out.stdout
}
