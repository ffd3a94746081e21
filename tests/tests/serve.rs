//! `chartkit serve` and `chartkit push` end to end: real server processes on 127.0.0.1,
//! real helm as a client, a moto S3 server for the shared-bucket case.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chartkit_tests::TestContext;
use chartkit_tests::server::client;
use chartkit_tests::server::{S3Server, ServeProcess, chart_package, index_yaml, upload};

/// (name, version) pairs listed by the server's API.
fn listed(url: &str) -> Vec<(String, String)> {
    let charts: serde_json::Value = client()
        .get(format!("{url}/api/charts"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let mut out: Vec<(String, String)> = charts
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(name, versions)| {
            versions
                .as_array()
                .unwrap()
                .iter()
                .map(move |v| (name.clone(), v["version"].as_str().unwrap().to_owned()))
        })
        .collect();
    out.sort();
    out
}

fn run_ok(command: &mut Command) -> String {
    let output = command.output().expect("run command");
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn wait_until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn helm_uses_chartkit_serve_on_the_corpus() {
    let Some(corpus) = chartkit_tests::corpus::corpus_or_skip("helm_uses_chartkit_serve") else {
        return;
    };
    let Some(_) = chartkit_tests::peers::helm_or_skip("helm_uses_chartkit_serve") else {
        return;
    };
    let ctx = TestContext::new();
    let repo = ctx.path("repo");
    std::fs::create_dir(&repo).unwrap();
    let packages = chartkit_tests::corpus::packages(&corpus);
    for package in &packages {
        std::fs::copy(package, repo.join(package.file_name().unwrap())).unwrap();
    }
    let server = ServeProcess::start(ctx.chartkit(), &[repo.to_str().unwrap()], ctx.dir());

    // helm's own index of the same directory is the reference for entries and digests.
    let reference = ctx.path("reference");
    std::fs::create_dir(&reference).unwrap();
    for package in &packages {
        std::fs::copy(package, reference.join(package.file_name().unwrap())).unwrap();
    }
    run_ok(ctx.helm().unwrap().args(["repo", "index"]).arg(&reference));
    let helm_index = std::fs::read_to_string(reference.join("index.yaml")).unwrap();
    let served = index_yaml(&server.url);
    let digests = |text: &str| {
        let mut d: Vec<String> = text
            .lines()
            .filter_map(|l| l.trim().strip_prefix("digest: "))
            .map(str::to_owned)
            .collect();
        d.sort();
        d
    };
    assert_eq!(digests(&served), digests(&helm_index));
    assert!(!digests(&served).is_empty());

    run_ok(ctx.helm().unwrap().args(["repo", "add", "ck", &server.url]));
    run_ok(ctx.helm().unwrap().args(["repo", "update"]));
    let search = run_ok(ctx.helm().unwrap().args([
        "search",
        "repo",
        "ck/",
        "--versions",
        "--devel",
        "-o",
        "json",
    ]));
    let found: serde_json::Value = serde_json::from_str(&search).unwrap();
    let mut from_helm: Vec<(String, String)> = found
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches("ck/")
                    .to_owned(),
                r["version"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    from_helm.sort();
    assert_eq!(from_helm, listed(&server.url));

    // A caret range resolves and the package downloads through the relative URL.
    let (name, version) = from_helm
        .iter()
        .find(|(_, v)| v.starts_with(|c: char| c.is_ascii_digit()) && !v.contains('-'))
        .cloned()
        .unwrap();
    let major = version.split('.').next().unwrap();
    let dest = ctx.path("pulled");
    std::fs::create_dir(&dest).unwrap();
    run_ok(
        ctx.helm()
            .unwrap()
            .args([
                "pull",
                &format!("ck/{name}"),
                "--version",
                &format!("^{major}"),
            ])
            .arg("-d")
            .arg(&dest),
    );
    assert_eq!(std::fs::read_dir(&dest).unwrap().count(), 1);
}

#[test]
fn helm_pull_verify_accepts_charts_signed_by_chartkit() {
    let Some(_) = chartkit_tests::peers::helm_or_skip("helm_pull_verify") else {
        return;
    };
    let Some(gpg) = chartkit_tests::on_path("gpg") else {
        chartkit_tests::skip(
            "helm_pull_verify",
            "gpg is not installed (apt-get install gnupg)",
        );
        return;
    };
    let ctx = TestContext::new();
    let keys = ctx.path("keys");
    run_ok(
        ctx.chartkit()
            .args([
                "key",
                "generate",
                "--name",
                "Repo Signer",
                "--email",
                "repo@example.com",
                "-o",
            ])
            .arg(&keys),
    );
    run_ok(ctx.chartkit().args(["create", "signed"]));
    let repo = ctx.path("repo");
    run_ok(
        ctx.chartkit()
            .args([
                "package",
                "signed",
                "--sign",
                "--key",
                "repo@example.com",
                "--keyring",
            ])
            .arg(keys.join("secret.asc"))
            .arg("-d")
            .arg(&repo),
    );
    // helm reads binary keyrings only: let GnuPG convert the exported key.
    let home = ctx.path("gnupg");
    std::fs::create_dir(&home).unwrap();
    run_ok(
        Command::new(&gpg)
            .env("GNUPGHOME", &home)
            .args(["--batch", "--import"])
            .arg(keys.join("public.asc")),
    );
    let exported = run_ok_bytes(
        Command::new(&gpg)
            .env("GNUPGHOME", &home)
            .args(["--batch", "--export"]),
    );
    let keyring = ctx.path("pubring.gpg");
    std::fs::write(&keyring, exported).unwrap();

    let server = ServeProcess::start(ctx.chartkit(), &[repo.to_str().unwrap()], ctx.dir());
    run_ok(ctx.helm().unwrap().args(["repo", "add", "ck", &server.url]));
    std::fs::create_dir(ctx.path("pulled")).unwrap();
    let out = run_ok(
        ctx.helm()
            .unwrap()
            .args([
                "pull",
                "ck/signed",
                "--version",
                "^0.1",
                "--verify",
                "--keyring",
            ])
            .arg(&keyring)
            .arg("-d")
            .arg(ctx.path("pulled")),
    );
    assert!(out.contains("Repo Signer"), "{out}");
}

fn run_ok_bytes(command: &mut Command) -> Vec<u8> {
    let output = command.output().expect("run command");
    assert!(output.status.success(), "{command:?} failed");
    output.stdout
}

/// Uploads 200 distinct charts from 200 threads at once; returns the statuses. With
/// `retry_busy`, an upload answered 503 (every upload turn taken for the server's 10 s
/// wait, which a slow storage such as moto on a loaded machine can cause) is sent again
/// after a pause, as a client that respects the answer does.
fn upload_200_concurrently(urls: &[String], prefix: &str, retry_busy: bool) -> Vec<u16> {
    let barrier = Arc::new(std::sync::Barrier::new(200));
    let threads: Vec<_> = (0..200)
        .map(|i| {
            let url = urls[i % urls.len()].clone();
            let barrier = Arc::clone(&barrier);
            let body = chart_package(&format!("{prefix}{i}"), "1.0.0");
            std::thread::spawn(move || {
                barrier.wait();
                let mut tries = 0;
                loop {
                    let status = upload(&url, body.clone()).status().as_u16();
                    tries += 1;
                    if status != 503 || !retry_busy || tries == 10 {
                        break status;
                    }
                    std::thread::sleep(Duration::from_millis(500));
                }
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

#[test]
fn two_hundred_concurrent_uploads_all_land() {
    let ctx = TestContext::new();
    let repo = ctx.path("repo");
    std::fs::create_dir(&repo).unwrap();
    let server = ServeProcess::start(ctx.chartkit(), &[repo.to_str().unwrap()], ctx.dir());
    let statuses = upload_200_concurrently(std::slice::from_ref(&server.url), "app", false);
    assert!(statuses.iter().all(|s| *s == 201), "{statuses:?}");
    let index = index_yaml(&server.url);
    for i in 0..200 {
        assert!(index.contains(&format!("  app{i}:\n")), "app{i} missing");
    }
    assert_eq!(listed(&server.url).len(), 200);
    assert_eq!(
        std::fs::read_dir(&repo).unwrap().count(),
        200,
        "one file per upload, no temporaries"
    );
    // A restart reads the same 200 back from disk.
    drop(server);
    let again = ServeProcess::start(ctx.chartkit(), &[repo.to_str().unwrap()], ctx.dir());
    assert_eq!(listed(&again.url).len(), 200);
}

#[test]
fn two_replicas_on_one_bucket_see_every_upload() {
    let Some(s3) = S3Server::start_or_skip("two_replicas_on_one_bucket") else {
        return;
    };
    s3.create_bucket("charts");
    let ctx = TestContext::new();
    let start = || s3.serve(&ctx, &["s3://charts/team", "--refresh-interval", "0.5"]);
    let a = start();
    let b = start();
    let statuses = upload_200_concurrently(&[a.url.clone(), b.url.clone()], "shared", true);
    assert!(statuses.iter().all(|s| *s == 201), "{statuses:?}");
    for server in [&a, &b] {
        wait_until(
            "both replicas to list 200 charts",
            Duration::from_secs(60),
            || listed(&server.url).len() == 200,
        );
        let index = index_yaml(&server.url);
        for i in 0..200 {
            assert!(
                index.contains(&format!("  shared{i}:\n")),
                "shared{i} missing"
            );
        }
    }
    // Both replicas agree on every entry (created times come from the bucket).
    let strip_generated = |text: String| {
        text.lines()
            .filter(|l| !l.starts_with("generated:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        strip_generated(index_yaml(&a.url)),
        strip_generated(index_yaml(&b.url))
    );
    // The same version uploaded to both replicas: exactly one wins.
    let again = chart_package("shared0", "1.0.0");
    assert_eq!(upload(&b.url, again).status().as_u16(), 409);
    // A delete on one replica disappears from the other.
    let deleted = client()
        .delete(format!("{}/api/charts/shared1/1.0.0", a.url))
        .send()
        .unwrap();
    assert_eq!(deleted.status().as_u16(), 200);
    wait_until(
        "the delete to reach the other replica",
        Duration::from_secs(30),
        || listed(&b.url).len() == 199,
    );
}

#[test]
fn a_crash_during_uploads_loses_no_acknowledged_upload() {
    let ctx = TestContext::new();
    let repo = ctx.path("repo");
    std::fs::create_dir(&repo).unwrap();
    let server = ServeProcess::start(ctx.chartkit(), &[repo.to_str().unwrap()], ctx.dir());
    let url = server.url.clone();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let acknowledged = Arc::new(std::sync::Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..4)
        .map(|w| {
            let url = url.clone();
            let stop = Arc::clone(&stop);
            let acknowledged = Arc::clone(&acknowledged);
            std::thread::spawn(move || {
                let mut i = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let name = format!("crash{w}x{i}");
                    i += 1;
                    let body = chart_package(&name, "1.0.0");
                    match client().post(format!("{url}/api/charts")).body(body).send() {
                        Ok(r) if r.status().as_u16() == 201 => {
                            acknowledged.lock().unwrap().push(name)
                        }
                        _ => {}
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    let mut server = server;
    server.child.kill().unwrap(); // SIGKILL
    server.child.wait().unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for worker in workers {
        worker.join().unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(acknowledged.len() > 5, "too few uploads before the kill");

    let restarted = ServeProcess::start(ctx.chartkit(), &[repo.to_str().unwrap()], ctx.dir());
    let names: Vec<String> = listed(&restarted.url).into_iter().map(|(n, _)| n).collect();
    for name in &acknowledged {
        assert!(names.contains(name), "acknowledged upload {name} was lost");
    }
    // Nothing partial is visible: every package listed is whole, no temporaries remain.
    for entry in std::fs::read_dir(&repo).unwrap().flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        assert!(file.ends_with(".tgz"), "unexpected file {file}");
        let name = file.trim_end_matches("-1.0.0.tgz");
        assert!(
            names.iter().any(|n| n == name),
            "{file} on disk but not served"
        );
    }
    assert!(
        !restarted.log().contains("package refused"),
        "{}",
        restarted.log()
    );
}

#[test]
fn bad_requests_get_json_errors_and_write_nothing() {
    let ctx = TestContext::new();
    let repo = ctx.path("repo");
    std::fs::create_dir(&repo).unwrap();
    let tokens = ctx.path("tokens");
    std::fs::write(&tokens, "right-token\n").unwrap();
    let server = ServeProcess::start(
        ctx.chartkit(),
        &[
            repo.to_str().unwrap(),
            "--max-upload-size",
            "100000",
            "--bearer-token-file",
            tokens.to_str().unwrap(),
        ],
        ctx.dir(),
    );
    let post = |body: Vec<u8>, token: &str| {
        client()
            .post(format!("{}/api/charts", server.url))
            .bearer_auth(token)
            .body(body)
            .send()
            .unwrap()
    };
    let good = chart_package("good", "1.0.0");
    let mut truncated = good.clone();
    truncated.truncate(good.len() / 2);
    let oversized = vec![0x1f_u8; 200_000];
    let cases: Vec<(&str, reqwest::blocking::Response, u16, &str)> = vec![
        (
            "non-chart body",
            post(b"hello".to_vec(), "right-token"),
            400,
            "not a valid chart",
        ),
        (
            "truncated gzip",
            post(truncated, "right-token"),
            400,
            "not a valid chart",
        ),
        (
            "oversized body",
            post(oversized, "right-token"),
            413,
            "limit",
        ),
        (
            "wrong token",
            post(good.clone(), "wrong-token"),
            401,
            "invalid credentials",
        ),
        (
            "no token",
            client()
                .post(format!("{}/api/charts", server.url))
                .body(good.clone())
                .send()
                .unwrap(),
            401,
            "authentication required",
        ),
        (
            "path with ..",
            client()
                .get(format!("{}/charts/..%2F..%2Fetc%2Fpasswd", server.url))
                .send()
                .unwrap(),
            400,
            "..",
        ),
        (
            "delete with ..",
            client()
                .delete(format!("{}/api/charts/..%2Fx/1.0.0", server.url))
                .bearer_auth("right-token")
                .send()
                .unwrap(),
            400,
            "..",
        ),
        (
            "file name not matching the chart",
            client()
                .post(format!("{}/api/charts", server.url))
                .bearer_auth("right-token")
                .multipart(
                    reqwest::blocking::multipart::Form::new().part(
                        "chart",
                        reqwest::blocking::multipart::Part::bytes(good.clone())
                            .file_name("other-9.9.9.tgz"),
                    ),
                )
                .send()
                .unwrap(),
            400,
            "must be named `good-1.0.0.tgz`",
        ),
    ];
    for (what, response, status, needle) in cases {
        assert_eq!(response.status().as_u16(), status, "{what}");
        assert!(
            response
                .headers()
                .get("content-type")
                .is_some_and(|v| v.to_str().unwrap().starts_with("application/json")),
            "{what}: not JSON"
        );
        let body: serde_json::Value = response.json().unwrap();
        let message = body["error"].as_str().unwrap_or_default();
        assert!(message.contains(needle), "{what}: {message}");
    }
    assert_eq!(
        std::fs::read_dir(&repo).unwrap().count(),
        0,
        "nothing written"
    );
    assert_eq!(listed(&server.url), vec![]);
    // The right token still works, and a second upload of the same version conflicts.
    assert_eq!(post(good.clone(), "right-token").status().as_u16(), 201);
    let conflict = post(good, "right-token");
    assert_eq!(conflict.status().as_u16(), 409);
}

#[test]
fn index_etag_gzip_and_api() {
    let ctx = TestContext::new();
    let repo = ctx.path("repo");
    std::fs::create_dir(&repo).unwrap();
    std::fs::write(repo.join("web-1.0.0.tgz"), chart_package("web", "1.0.0")).unwrap();
    std::fs::write(repo.join("web-1.2.0.tgz"), chart_package("web", "1.2.0")).unwrap();
    let server = ServeProcess::start(
        ctx.chartkit(),
        &[
            repo.to_str().unwrap(),
            "--url",
            "https://charts.example.com/stable",
        ],
        ctx.dir(),
    );
    let first = client()
        .get(format!("{}/index.yaml", server.url))
        .send()
        .unwrap();
    let etag = first.headers()["etag"].to_str().unwrap().to_owned();
    let body = first.text().unwrap();
    assert!(
        body.contains("- https://charts.example.com/stable/charts/web-1.2.0.tgz"),
        "{body}"
    );
    assert!(body.find("version: 1.2.0").unwrap() < body.find("version: 1.0.0").unwrap());
    let cached = client()
        .get(format!("{}/index.yaml", server.url))
        .header("If-None-Match", &etag)
        .send()
        .unwrap();
    assert_eq!(cached.status().as_u16(), 304);
    // gzip when asked for, with its own validator; reqwest here does not decompress.
    let gz = client()
        .get(format!("{}/index.yaml", server.url))
        .header("Accept-Encoding", "gzip")
        .send()
        .unwrap();
    assert_eq!(gz.headers()["content-encoding"], "gzip");
    assert_ne!(gz.headers()["etag"].to_str().unwrap(), etag);
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(&gz.bytes().unwrap()[..]),
        &mut text,
    )
    .unwrap();
    assert_eq!(text, body);

    // HEAD and GET of a package; a missing one is a JSON 404.
    let head = client()
        .head(format!("{}/charts/web-1.0.0.tgz", server.url))
        .send()
        .unwrap();
    assert_eq!(head.status().as_u16(), 200);
    let package = client()
        .get(format!("{}/charts/web-1.0.0.tgz", server.url))
        .send()
        .unwrap()
        .bytes()
        .unwrap();
    assert_eq!(
        &package[..],
        &std::fs::read(repo.join("web-1.0.0.tgz")).unwrap()[..]
    );
    let missing = client()
        .get(format!("{}/charts/web-9.0.0.tgz", server.url))
        .send()
        .unwrap();
    assert_eq!(missing.status().as_u16(), 404);

    // ChartMuseum's API.
    let versions: serde_json::Value = client()
        .get(format!("{}/api/charts/web", server.url))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(versions[0]["version"], "1.2.0");
    let latest: serde_json::Value = client()
        .get(format!("{}/api/charts/web/latest", server.url))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(latest["version"], "1.2.0");
    assert_eq!(
        client()
            .get(format!("{}/api/charts/nope", server.url))
            .send()
            .unwrap()
            .status()
            .as_u16(),
        404
    );
    // An upload changes the index and its ETag at once.
    assert_eq!(
        upload(&server.url, chart_package("web", "2.0.0"))
            .status()
            .as_u16(),
        201
    );
    let after = client()
        .get(format!("{}/index.yaml", server.url))
        .header("If-None-Match", &etag)
        .send()
        .unwrap();
    assert_eq!(after.status().as_u16(), 200);
    assert!(after.text().unwrap().contains("version: 2.0.0"));
    let deleted = client()
        .delete(format!("{}/api/charts/web/1.0.0", server.url))
        .send()
        .unwrap();
    assert_eq!(deleted.status().as_u16(), 200);
    assert!(!repo.join("web-1.0.0.tgz").exists());
    assert!(!index_yaml(&server.url).contains("version: 1.0.0"));

    let health: serde_json::Value = client()
        .get(format!("{}/health", server.url))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(health["healthy"], true);
    let metrics = client()
        .get(format!("{}/metrics", server.url))
        .send()
        .unwrap()
        .text()
        .unwrap();
    assert!(metrics.contains("chartkit_uploads_total 1"), "{metrics}");
    assert!(metrics.contains("chartkit_chart_versions 2"), "{metrics}");
    assert!(
        metrics.contains("route=\"/index.yaml\",method=\"GET\",status=\"304\"} 1"),
        "{metrics}"
    );
}

#[test]
fn files_copied_into_the_directory_are_picked_up() {
    let ctx = TestContext::new();
    let repo = ctx.path("repo");
    std::fs::create_dir(&repo).unwrap();
    let server = ServeProcess::start(
        ctx.chartkit(),
        &[repo.to_str().unwrap(), "--refresh-interval", "0.2"],
        ctx.dir(),
    );
    std::fs::write(repo.join("late-0.3.0.tgz"), chart_package("late", "0.3.0")).unwrap();
    wait_until(
        "the copied chart to be indexed",
        Duration::from_secs(20),
        || index_yaml(&server.url).contains("late"),
    );
    std::fs::remove_file(repo.join("late-0.3.0.tgz")).unwrap();
    wait_until(
        "the removed chart to leave the index",
        Duration::from_secs(20),
        || !index_yaml(&server.url).contains("late"),
    );
}

fn generate_keys(ctx: &TestContext, name: &str) -> PathBuf {
    let keys = ctx.path(name);
    run_ok(
        ctx.chartkit()
            .args(["key", "generate", "--name", name, "--email"])
            .arg(format!("{name}@example.com"))
            .arg("-o")
            .arg(&keys),
    );
    keys
}

fn signed_package(ctx: &TestContext, chart: &str, keys: &Path, email: &str) -> PathBuf {
    if !ctx.path(chart).exists() {
        run_ok(ctx.chartkit().args(["create", chart]));
    }
    let out = ctx.path(&format!(
        "out-{}",
        keys.file_name().unwrap().to_string_lossy()
    ));
    run_ok(
        ctx.chartkit()
            .args(["package", chart, "--sign", "--key", email, "--keyring"])
            .arg(keys.join("secret.asc"))
            .arg("-d")
            .arg(&out),
    );
    out.join(format!("{chart}-0.1.0.tgz"))
}

#[test]
fn required_signatures_are_verified() {
    let ctx = TestContext::new();
    let trusted = generate_keys(&ctx, "trusted");
    let stranger = generate_keys(&ctx, "stranger");
    let repo = ctx.path("repo");
    std::fs::create_dir(&repo).unwrap();
    let server = ServeProcess::start(
        ctx.chartkit(),
        &[
            repo.to_str().unwrap(),
            "--require-signature",
            "--keyring",
            trusted.join("public.asc").to_str().unwrap(),
        ],
        ctx.dir(),
    );
    let unsigned = ctx.path("plain-1.0.0.tgz");
    std::fs::write(&unsigned, chart_package("plain", "1.0.0")).unwrap();
    let push = |package: &Path, prov: bool| {
        let mut command = ctx.chartkit();
        command.arg("push").arg(package).arg(&server.url);
        if prov {
            command.arg("--prov");
        }
        command.output().unwrap()
    };
    let refused = push(&unsigned, false);
    assert!(!refused.status.success());
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(message.contains("requires signed charts"), "{message}");

    let by_stranger = signed_package(&ctx, "app", &stranger, "stranger@example.com");
    let refused = push(&by_stranger, true);
    assert!(!refused.status.success());
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(message.contains("not in the keyring"), "{message}");

    let by_trusted = signed_package(&ctx, "app", &trusted, "trusted@example.com");
    let accepted = push(&by_trusted, true);
    assert!(
        accepted.status.success(),
        "{}",
        String::from_utf8_lossy(&accepted.stderr)
    );
    assert!(repo.join("app-0.1.0.tgz.prov").exists());
    let prov = client()
        .get(format!("{}/charts/app-0.1.0.tgz.prov", server.url))
        .send()
        .unwrap();
    assert_eq!(prov.status().as_u16(), 200);
    assert!(prov.text().unwrap().contains("BEGIN PGP SIGNED MESSAGE"));
}

#[test]
fn tls_basic_auth_and_push_by_repository_name() {
    let ctx = TestContext::new();
    let cert =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
            .unwrap();
    let cert_pem = ctx.path("cert.pem");
    let key_pem = ctx.path("key.pem");
    std::fs::write(&cert_pem, cert.cert.pem()).unwrap();
    std::fs::write(&key_pem, cert.signing_key.serialize_pem()).unwrap();
    let htpasswd = ctx.path("htpasswd");
    std::fs::write(
        &htpasswd,
        format!("ci:{}\n", bcrypt::hash("let-me-in", 4).unwrap()),
    )
    .unwrap();
    let repo = ctx.path("repo");
    std::fs::create_dir(&repo).unwrap();
    let server = ServeProcess::start(
        ctx.chartkit(),
        &[
            repo.to_str().unwrap(),
            "--tls-cert",
            cert_pem.to_str().unwrap(),
            "--tls-key",
            key_pem.to_str().unwrap(),
            "--basic-auth-file",
            htpasswd.to_str().unwrap(),
        ],
        ctx.dir(),
    );
    assert!(server.url.starts_with("https://"), "{}", server.url);
    let package = ctx.path("tls-0.1.0.tgz");
    std::fs::write(&package, chart_package("tls", "0.1.0")).unwrap();

    // Without credentials the server refuses, and push says how to fix it.
    let refused = ctx
        .chartkit()
        .arg("push")
        .arg(&package)
        .arg(&server.url)
        .arg("--ca-file")
        .arg(&cert_pem)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("401"), "{stderr}");
    assert!(stderr.contains("hint: give credentials"), "{stderr}");

    // Without the CA the certificate is not trusted.
    let untrusted = ctx
        .chartkit()
        .args(["push", "--username", "ci", "--password", "let-me-in"])
        .arg(&package)
        .arg(&server.url)
        .output()
        .unwrap();
    assert!(!untrusted.status.success());

    // A repository added with helm is found by name, with its credentials and CA.
    let config = ctx.path(".home/config/helm");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("repositories.yaml"),
        format!(
            "apiVersion: \"\"\ngenerated: \"0001-01-01T00:00:00Z\"\nrepositories:\n- name: secure\n  url: {}\n  username: ci\n  password: let-me-in\n  caFile: {}\n",
            server.url,
            cert_pem.display()
        ),
    )
    .unwrap();
    let out = run_ok(ctx.chartkit().arg("push").arg(&package).arg("secure"));
    assert!(out.contains("Pushed tls-0.1.0.tgz"), "{out}");
    assert!(repo.join("tls-0.1.0.tgz").exists());

    // Reads stay anonymous, over TLS, and helm can use the repository with the CA.
    if let Some(mut helm) = ctx.helm() {
        run_ok(
            helm.args(["repo", "add", "tlsrepo", &server.url, "--ca-file"])
                .arg(&cert_pem),
        );
        let search = run_ok(ctx.helm().unwrap().args(["search", "repo", "tlsrepo/tls"]));
        assert!(search.contains("tlsrepo/tls"), "{search}");
    }
}

#[test]
fn sigterm_stops_the_server_cleanly() {
    let ctx = TestContext::new();
    let repo = ctx.path("repo");
    std::fs::create_dir(&repo).unwrap();
    let server = ServeProcess::start(ctx.chartkit(), &[repo.to_str().unwrap()], ctx.dir());
    assert_eq!(
        upload(&server.url, chart_package("bye", "1.0.0"))
            .status()
            .as_u16(),
        201
    );
    let status = server.terminate();
    assert!(status.success(), "exit status {status}");
}

#[test]
fn serve_explains_a_missing_directory_and_a_busy_port() {
    let ctx = TestContext::new();
    let output = ctx.run(&["serve", "no-such-dir"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("`no-such-dir` is not a directory"),
        "{stderr}"
    );
    assert!(stderr.contains("hint: create it"), "{stderr}");

    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let output = ctx.run(&["serve", ".", "--addr", &addr]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot listen on"), "{stderr}");
    assert!(stderr.contains("hint:"), "{stderr}");
}

/// A self-signed certificate as `openssl req -x509` makes it (CA:TRUE, the default),
/// for `subject_alt_name` (and `extra` extensions, `-addext` each), written to
/// DIR/NAME.pem with its key in DIR/NAME-key.pem.
fn openssl_self_signed(
    dir: &Path,
    name: &str,
    subject_alt_name: &str,
    extra: &[&str],
) -> Option<(PathBuf, PathBuf)> {
    let cert = dir.join(format!("{name}.pem"));
    let key = dir.join(format!("{name}-key.pem"));
    let mut command = Command::new("openssl");
    command
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .args(["-subj", "/CN=127.0.0.1", "-addext"])
        .arg(format!("subjectAltName={subject_alt_name}"));
    for extension in extra {
        command.args(["-addext", extension]);
    }
    match command.output() {
        Ok(output) if output.status.success() => Some((cert, key)),
        Ok(output) => panic!(
            "openssl failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ),
        Err(_) => {
            chartkit_tests::skip(
                "push_ca_file_trusts_a_self_signed_ca_certificate_as_helm_and_curl_do",
                "openssl is not installed",
            );
            None
        }
    }
}

#[test]
fn push_ca_file_trusts_a_self_signed_ca_certificate_as_helm_and_curl_do() {
    let ctx = TestContext::new();
    let Some((cert, key)) = openssl_self_signed(ctx.dir(), "server", "IP:127.0.0.1", &[]) else {
        return;
    };
    let text = Command::new("openssl")
        .args(["x509", "-noout", "-text", "-in"])
        .arg(&cert)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("CA:TRUE"),
        "openssl's default is a CA certificate"
    );
    let repo = ctx.path("repo");
    std::fs::create_dir(&repo).unwrap();
    let server = ServeProcess::start(
        ctx.chartkit(),
        &[
            repo.to_str().unwrap(),
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
        ctx.dir(),
    );
    let package = ctx.path("ca-0.1.0.tgz");
    std::fs::write(&package, chart_package("ca", "0.1.0")).unwrap();
    let push = |ca: &Path, url: &str| {
        ctx.chartkit()
            .arg("push")
            .arg(&package)
            .arg(url)
            .arg("--ca-file")
            .arg(ca)
            .output()
            .unwrap()
    };
    let pushed = push(&cert, &server.url);
    assert!(
        pushed.status.success(),
        "{}",
        String::from_utf8_lossy(&pushed.stderr)
    );
    assert!(repo.join("ca-0.1.0.tgz").exists());

    // Verification is not weakened: another self-signed certificate is not trusted, and
    // the trusted one only for the names it lists.
    let (other, _) = openssl_self_signed(ctx.dir(), "other", "IP:127.0.0.1", &[]).unwrap();
    let refused = push(&other, &server.url);
    assert_eq!(refused.status.code(), Some(1));
    let port = server.url.rsplit(':').next().unwrap();
    let wrong_name = push(&cert, &format!("https://localhost:{port}"));
    assert_eq!(wrong_name.status.code(), Some(1));
    let message = String::from_utf8_lossy(&wrong_name.stderr);
    assert!(message.contains("certificate"), "{message}");

    // helm and curl agree.
    if let Some(mut helm) = ctx.helm() {
        run_ok(
            helm.args(["repo", "add", "ca", &server.url, "--ca-file"])
                .arg(&cert),
        );
    }

    // A certificate whose extended key usage leaves out servers is refused, as Go
    // refuses it.
    let (client_only, client_key) = openssl_self_signed(
        ctx.dir(),
        "client-only",
        "IP:127.0.0.1",
        &["extendedKeyUsage=clientAuth"],
    )
    .unwrap();
    let client_server = ServeProcess::start(
        ctx.chartkit(),
        &[
            repo.to_str().unwrap(),
            "--tls-cert",
            client_only.to_str().unwrap(),
            "--tls-key",
            client_key.to_str().unwrap(),
        ],
        ctx.dir(),
    );
    let refused = push(&client_only, &client_server.url);
    assert_eq!(refused.status.code(), Some(1));
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(message.contains("InvalidPurpose"), "{message}");
    if let Some(mut helm) = ctx.helm() {
        let theirs = helm
            .args([
                "repo",
                "add",
                "client-only",
                &client_server.url,
                "--ca-file",
            ])
            .arg(&client_only)
            .output()
            .unwrap();
        assert!(!theirs.status.success());
    }
    if let Ok(curl) = Command::new("curl")
        .args(["-sf", "-o", "/dev/null", "--cacert"])
        .arg(&cert)
        .arg(format!("{}/index.yaml", server.url))
        .status()
    {
        assert!(curl.success());
    }
}

#[test]
fn serve_addr_accepts_a_host_name() {
    let ctx = TestContext::new();
    let repo = ctx.path("repo");
    std::fs::create_dir(&repo).unwrap();
    let server = ServeProcess::start_at(
        ctx.chartkit(),
        &[repo.to_str().unwrap()],
        "localhost:0",
        ctx.dir(),
    );
    let port: u16 = server.url.rsplit(':').next().unwrap().parse().unwrap();
    assert_ne!(port, 0, "port 0 picks a free port: {}", server.url);
    let health = client()
        .get(format!("http://localhost:{port}/health"))
        .send()
        .unwrap();
    assert_eq!(health.status().as_u16(), 200);

    // An address without a port is a clear error.
    for addr in ["localhost", "127.0.0.1"] {
        let output = ctx
            .chartkit()
            .args(["serve", repo.to_str().unwrap(), "--addr", addr])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{addr}");
        let message = String::from_utf8_lossy(&output.stderr);
        assert!(
            message.contains(&format!("\nError: cannot listen on {addr}: ")),
            "{message}"
        );
        assert!(
            message.contains("hint: give --addr as HOST:PORT"),
            "{message}"
        );
    }
}
