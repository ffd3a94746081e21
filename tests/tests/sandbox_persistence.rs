//! `chartkit sandbox up --data DIR`: a SIGKILL in the middle of a stream of writes loses
//! none that were acknowledged, the restarted sandbox has them with the same
//! resourceVersions, carries on from there, and lets watches resume across the restart.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chartkit_tests::TestContext;
use chartkit_tests::sandbox::{SandboxProcess, run_ok};
use serde_json::{Value, json};

fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .expect("HTTP client")
}

fn create_configmap(client: &reqwest::blocking::Client, url: &str, name: &str) -> Option<u64> {
    let body = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": "persistence"}},
        "data": {"config.yaml": format!("name: {name}\nreplicas: 3\nimage: nginx:1.27\n")},
    });
    let response = client
        .post(format!("{url}/api/v1/namespaces/default/configmaps"))
        .json(&body)
        .send()
        .ok()?;
    if response.status().as_u16() != 201 {
        return None;
    }
    let created: Value = response.json().ok()?;
    created["metadata"]["resourceVersion"]
        .as_str()?
        .parse()
        .ok()
}

/// name → resourceVersion of every ConfigMap in `default`.
fn configmaps(url: &str) -> BTreeMap<String, u64> {
    let list: Value = client()
        .get(format!("{url}/api/v1/namespaces/default/configmaps"))
        .send()
        .and_then(|r| r.error_for_status())
        .and_then(|r| r.json())
        .expect("list configmaps");
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|o| {
            (
                o["metadata"]["name"].as_str().unwrap().to_string(),
                o["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap()
                    .parse()
                    .unwrap(),
            )
        })
        .collect()
}

fn newest_segment(dir: &Path) -> std::path::PathBuf {
    let mut segments: Vec<_> = std::fs::read_dir(dir)
        .expect("data dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    segments.sort();
    segments.pop().expect("a log segment")
}

#[test]
fn a_sigkill_mid_stream_loses_no_acknowledged_write() {
    let ctx = TestContext::new();
    let data = ctx.path("data");
    let data_arg = data.to_str().unwrap();
    let sandbox = SandboxProcess::start(&ctx, &["--data", data_arg]);

    // Four writers on keep-alive connections, so commits are in flight (and batched)
    // when the process dies.
    let acked: Arc<Mutex<Vec<(String, u64)>>> = Arc::default();
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let url = sandbox.url.clone();
            let acked = Arc::clone(&acked);
            std::thread::spawn(move || {
                let client = client();
                for i in 0.. {
                    let name = format!("cm-{w}-{i}");
                    match create_configmap(&client, &url, &name) {
                        Some(rv) => acked.lock().unwrap().push((name, rv)),
                        None => return,
                    }
                }
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    while acked.lock().unwrap().len() < 400 {
        assert!(
            Instant::now() < deadline,
            "the writes are too slow:\n{}",
            sandbox.log()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    sandbox.kill();
    for w in writers {
        w.join().unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() >= 400);

    let sandbox = SandboxProcess::start(&ctx, &["--data", data_arg]);
    let stored = configmaps(&sandbox.url);
    for (name, rv) in &acked {
        assert_eq!(
            stored.get(name),
            Some(rv),
            "acknowledged {name} at {rv} is not back as it was"
        );
    }
    // Each revision belongs to one change: no two acknowledged writes share one.
    let mut revisions: Vec<u64> = acked.iter().map(|(_, rv)| *rv).collect();
    revisions.sort_unstable();
    revisions.dedup();
    assert_eq!(revisions.len(), acked.len());
    let newest = *stored.values().max().unwrap();

    // The real kubectl reads the restored object and writes after it.
    let Some(mut kubectl) =
        sandbox.kubectl(&ctx, "a_sigkill_mid_stream_loses_no_acknowledged_write")
    else {
        return;
    };
    let (name, rv) = &acked[acked.len() / 2];
    let out = run_ok(kubectl.args([
        "get",
        "configmap",
        name,
        "-o",
        "jsonpath={.metadata.resourceVersion}",
    ]));
    assert_eq!(String::from_utf8_lossy(&out.stdout), rv.to_string());
    // A write to a restored object (kubectl label sends a JSON merge patch; it prints
    // the object as it was before, so the new version is read back).
    let mut kubectl = sandbox.kubectl(&ctx, "").unwrap();
    run_ok(kubectl.args(["label", "configmap", name, "restarted=yes"]));
    let mut kubectl = sandbox.kubectl(&ctx, "").unwrap();
    let out = run_ok(kubectl.args([
        "get",
        "configmap",
        name,
        "-o",
        "jsonpath={.metadata.resourceVersion}",
    ]));
    let after: u64 = String::from_utf8_lossy(&out.stdout)
        .parse()
        .expect("a resourceVersion");
    assert!(after > newest, "{after} after {newest}");

    // A watch from a revision before the crash resumes with the changes after it: the
    // log since the last snapshot is restored with the objects.
    let from = acked.iter().map(|(_, rv)| *rv).max().unwrap() - 20;
    let body = client()
        .get(format!(
            "{}/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={from}&timeoutSeconds=1",
            sandbox.url
        ))
        .send()
        .and_then(|r| r.error_for_status())
        .and_then(|r| r.text())
        .expect("watch");
    let events: Vec<Value> = body
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let rvs: Vec<u64> = events
        .iter()
        .map(|e| {
            e["object"]["metadata"]["resourceVersion"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    let last = events.last().expect("events");
    assert_eq!(last["type"], "MODIFIED", "{body}");
    assert_eq!(
        last["object"]["metadata"]["labels"]["restarted"], "yes",
        "{body}"
    );
    assert!(
        events[..events.len() - 1]
            .iter()
            .all(|e| e["type"] == "ADDED"),
        "{body}"
    );
    assert_eq!(rvs.first(), Some(&(from + 1)), "{body}");
    assert_eq!(rvs.last(), Some(&after), "{body}");
    assert!(rvs.windows(2).all(|w| w[0] < w[1]), "{body}");
}

#[test]
fn a_torn_last_record_is_skipped_with_a_warning() {
    let ctx = TestContext::new();
    let data = ctx.path("data");
    let data_arg = data.to_str().unwrap();
    let sandbox = SandboxProcess::start(&ctx, &["--data", data_arg]);
    let client = client();
    let rv = create_configmap(&client, &sandbox.url, "kept").expect("create");
    sandbox.kill();
    // What a crash halfway through appending the next record leaves: a frame whose
    // length promises more than is there.
    let segment = newest_segment(&data);
    let mut bytes = std::fs::read(&segment).unwrap();
    bytes.extend_from_slice(&[200, 0, 0, 0, 1, 2, 3, 4, b'{', b'"']);
    std::fs::write(&segment, &bytes).unwrap();

    let sandbox = SandboxProcess::start(&ctx, &["--data", data_arg]);
    let log = sandbox.log();
    assert!(log.contains("level=WARN msg="), "{log}");
    assert!(log.contains("skipped a torn last record"), "{log}");
    assert!(log.contains(&segment.display().to_string()), "{log}");
    assert_eq!(configmaps(&sandbox.url).get("kept"), Some(&rv));
    assert!(create_configmap(&client, &sandbox.url, "next").unwrap() > rv);
}

#[test]
fn a_corrupt_snapshot_or_a_second_sandbox_is_a_clear_error() {
    let ctx = TestContext::new();
    let data = ctx.path("data");
    let data_arg = data.to_str().unwrap();
    let sandbox = SandboxProcess::start(&ctx, &["--data", data_arg]);
    let up = |extra: &[&str]| {
        ctx.chartkit()
            .args(["sandbox", "up", "--addr", "127.0.0.1:0", "--data", data_arg])
            .arg("--kubeconfig")
            .arg(ctx.path("other-kubeconfig"))
            .args(extra)
            .output()
            .expect("run chartkit")
    };
    let out = up(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("is in use by another sandbox"), "{stderr}");
    assert!(stderr.contains("(process "), "{stderr}");
    sandbox.kill();

    let snapshot = data.join("snapshot-00000000000000000099.snap");
    std::fs::write(&snapshot, b"CKSNAP\x00\x01 not really a snapshot").unwrap();
    let out = up(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains(&snapshot.display().to_string()), "{stderr}");
    assert!(stderr.contains("is corrupt"), "{stderr}");
}
