//! `chartkit serve` never stores or serves a package that chartkit's own loader refuses
//! (`pull --untar`, `template`, `show`): links, devices, fifos, absolute paths, `..` and two
//! Chart.yaml files. Helm's indexer takes every one of these archives (checked against
//! helm below), so the refusal is chartkit's stricter rule, stated in the loader's words.
//! An upload is refused through every request shape; a package copied into the storage by
//! hand is left out of the index with its reason, on a directory and on S3.

use std::path::Path;
use std::time::{Duration, Instant};

use chartkit_tests::TestContext;
use chartkit_tests::archive::{Entry, build, write};
use chartkit_tests::counting_server::CountingServer;
use chartkit_tests::server::client;
use chartkit_tests::server::{S3Server, ServeProcess, chart_package};
use reqwest::blocking::multipart::{Form, Part};

struct Case {
    /// The chart's name in its Chart.yaml (and its package file, `NAME-0.1.0.tgz`).
    chart: &'static str,
    /// The name Helm's indexer gives it (two top directories: the last Chart.yaml's).
    indexed_as: &'static str,
    archive: Vec<u8>,
    /// The loader's sentence, naming the entry.
    words: &'static str,
}

impl Case {
    fn file(&self) -> String {
        format!("{}-0.1.0.tgz", self.chart)
    }
}

fn chart_yaml(name: &str, version: &str) -> String {
    format!("apiVersion: v2\nname: {name}\nversion: {version}\n")
}

fn case(
    chart: &'static str,
    indexed_as: &'static str,
    extra: Entry<'_>,
    words: &'static str,
) -> Case {
    let own = chart_yaml(chart, "0.1.0");
    let path = format!("{chart}/Chart.yaml");
    Case {
        chart,
        indexed_as,
        archive: build(&[Entry::File(&path, own.as_bytes()), extra]),
        words,
    }
}

fn cases() -> Vec<Case> {
    let second = chart_yaml("twochart", "9.9.9");
    let other = chart_yaml("other", "0.1.0");
    vec![
        case(
            "symlink",
            "symlink",
            Entry::Symlink("symlink/templates/link.yaml", "/etc/passwd"),
            "archive entry `symlink/templates/link.yaml` is a link; chart archives may contain regular files only",
        ),
        case(
            "hardlink",
            "hardlink",
            Entry::HardLink("hardlink/values.yaml", "hardlink/Chart.yaml"),
            "archive entry `hardlink/values.yaml` is a link; chart archives may contain regular files only",
        ),
        case(
            "chardev",
            "chardev",
            Entry::CharDevice("chardev/templates/null"),
            "archive entry `chardev/templates/null` is a special file (device, fifo or socket); chart archives may contain regular files only",
        ),
        case(
            "blockdev",
            "blockdev",
            Entry::BlockDevice("blockdev/disk"),
            "archive entry `blockdev/disk` is a special file (device, fifo or socket); chart archives may contain regular files only",
        ),
        case(
            "fifo",
            "fifo",
            Entry::Fifo("fifo/pipe"),
            "archive entry `fifo/pipe` is a special file (device, fifo or socket); chart archives may contain regular files only",
        ),
        case(
            "absolute",
            "absolute",
            Entry::File("/absolute/templates/cm.yaml", b"a: 1\n"),
            "archive entry `/absolute/templates/cm.yaml` has an absolute path; chart archives must hold relative paths only",
        ),
        case(
            "dotdot",
            "dotdot",
            Entry::File("dotdot/templates/../values.yaml", b"a: 1\n"),
            "archive entry `dotdot/templates/../values.yaml` points outside the chart directory",
        ),
        case(
            "twochart",
            "twochart",
            Entry::File("twochart/Chart.yaml", second.as_bytes()),
            "archive entry `twochart/Chart.yaml` appears more than once",
        ),
        case(
            "twotop",
            "other",
            Entry::File("other/Chart.yaml", other.as_bytes()),
            "archive entry `other/Chart.yaml` appears more than once",
        ),
    ]
}

fn get(url: &str) -> reqwest::blocking::Response {
    client().get(url).send().expect("GET")
}

/// index.yaml's body and ETag.
fn index(url: &str) -> (String, String) {
    let response = get(&format!("{url}/index.yaml"));
    assert_eq!(response.status().as_u16(), 200);
    let etag = response.headers()["etag"].to_str().unwrap().to_owned();
    (response.text().unwrap(), etag)
}

fn error_of(response: reqwest::blocking::Response) -> (u16, String) {
    let status = response.status().as_u16();
    let body: serde_json::Value = response.json().expect("a JSON error body");
    (
        status,
        body["error"].as_str().unwrap_or_default().to_owned(),
    )
}

fn run_ok(command: &mut std::process::Command) -> String {
    let output = command.output().expect("run command");
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}",
        chartkit_tests::stderr(&output)
    );
    chartkit_tests::stdout(&output)
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A `.prov` that passes every check the server makes without `--require-signature`:
/// made by `chartkit package --sign` for a chart of the case's name and version, with its
/// digest pointed at the case's bytes (which breaks the signature, checked only with
/// `--require-signature`, not the server's match check).
fn provenance_for(ctx: &TestContext, keys: &Path, case: &Case) -> String {
    let source = ctx.path(&format!("signed/{}", case.chart));
    run_ok(
        ctx.chartkit()
            .args(["create", case.chart])
            .current_dir(source.parent().unwrap()),
    );
    let out = ctx.path("signed/out");
    run_ok(
        ctx.chartkit()
            .arg("package")
            .arg(&source)
            .args(["--sign", "--key", "signer@example.com", "--keyring"])
            .arg(keys.join("secret.asc"))
            .arg("-d")
            .arg(&out),
    );
    let signed = std::fs::read(out.join(case.file())).unwrap();
    let prov = std::fs::read_to_string(out.join(format!("{}.prov", case.file()))).unwrap();
    let digest = |bytes: &[u8]| {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(bytes))
    };
    let retargeted = prov.replace(&digest(&signed), &digest(&case.archive));
    assert_ne!(
        retargeted, prov,
        "the .prov lists the signed package's digest"
    );
    retargeted
}

#[test]
fn uploads_that_pull_untar_would_refuse_get_400_in_the_loaders_words_and_nothing_is_stored() {
    let ctx = TestContext::new();
    let cases = cases();

    // What chartkit's clients say about each package: `pull --untar` from a plain static
    // repository (indexed by Helm's rules, which take them all) refuses it in these words.
    let static_root = ctx.path("static");
    for case in &cases {
        write(&static_root.join(case.file()), &case.archive);
    }
    run_ok(ctx.chartkit().args(["repo", "index"]).arg(&static_root));
    let static_repo = CountingServer::start(&static_root);
    for case in &cases {
        let untar = ctx.path(&format!("untar-{}", case.chart));
        std::fs::create_dir(&untar).unwrap();
        let output = ctx
            .chartkit()
            .args([
                "pull",
                case.indexed_as,
                "--repo",
                &static_repo.url,
                "--untar",
            ])
            .arg("--untardir")
            .arg(&untar)
            .arg("-d")
            .arg(&untar)
            .output()
            .unwrap();
        let stderr = chartkit_tests::stderr(&output);
        assert!(
            !output.status.success(),
            "{}: pull --untar took it",
            case.chart
        );
        assert!(stderr.contains(case.words), "{}: {stderr}", case.chart);
        assert!(
            files_in(&untar).is_empty(),
            "{}: unpacked something",
            case.chart
        );
    }

    let repo = ctx.path("repo");
    std::fs::create_dir(&repo).unwrap();
    let server = ServeProcess::start(ctx.chartkit(), &[repo.to_str().unwrap()], ctx.dir());
    let endpoint = format!("{}/api/charts", server.url);
    let good = chart_package("good", "1.0.0");
    assert_eq!(
        client().post(&endpoint).body(good).send().unwrap().status(),
        201
    );
    let before = index(&server.url);
    assert!(before.0.contains("  good:\n"), "{}", before.0);

    let keys = ctx.path("keys");
    run_ok(
        ctx.chartkit()
            .args(["key", "generate", "--name", "signer", "--email"])
            .arg("signer@example.com")
            .arg("-o")
            .arg(&keys),
    );
    std::fs::create_dir_all(ctx.path("signed")).unwrap();
    for case in &cases {
        let prov = provenance_for(&ctx, &keys, case);
        let chart_part = || {
            Part::bytes(case.archive.clone())
                .file_name(case.file())
                .mime_str("application/gzip")
                .unwrap()
        };
        let attempts = [
            // ChartMuseum's raw body (`curl --data-binary`).
            (
                "raw body",
                client().post(&endpoint).body(case.archive.clone()).send(),
            ),
            // The multipart form helm's push plugin (cm-push) sends.
            (
                "multipart chart",
                client()
                    .post(&endpoint)
                    .multipart(Form::new().part("chart", chart_part()))
                    .send(),
            ),
            // The same with a `.prov` that matches the package.
            (
                "multipart chart and prov",
                client()
                    .post(&endpoint)
                    .multipart(
                        Form::new().part("chart", chart_part()).part(
                            "prov",
                            Part::bytes(prov.clone().into_bytes())
                                .file_name(format!("{}.prov", case.file())),
                        ),
                    )
                    .send(),
            ),
        ];
        for (route, response) in attempts {
            let (status, message) = error_of(response.unwrap());
            assert_eq!(status, 400, "{} by {route}: {message}", case.chart);
            assert!(
                message.contains(case.words),
                "{} by {route}: {message}",
                case.chart
            );
        }
        // chartkit's own client shows the server's words.
        let local = ctx.path(&format!("push/{}", case.file()));
        write(&local, &case.archive);
        std::fs::write(format!("{}.prov", local.display()), &prov).unwrap();
        let pushed = ctx
            .chartkit()
            .arg("push")
            .arg(&local)
            .arg(&server.url)
            .arg("--prov")
            .output()
            .unwrap();
        let stderr = chartkit_tests::stderr(&pushed);
        assert_eq!(pushed.status.code(), Some(1), "{}: {stderr}", case.chart);
        assert!(
            stderr.starts_with("Error: ") && stderr.contains("(400 Bad Request)"),
            "{}: {stderr}",
            case.chart
        );
        assert!(stderr.contains(case.words), "{}: {stderr}", case.chart);
    }

    assert_eq!(
        files_in(&repo),
        vec!["good-1.0.0.tgz"],
        "only the good chart is stored"
    );
    assert_eq!(index(&server.url), before, "the index did not change");
    for case in &cases {
        assert_eq!(
            get(&format!("{}/charts/{}", server.url, case.file()))
                .status()
                .as_u16(),
            404,
            "{}",
            case.chart
        );
    }
    let metrics = get(&format!("{}/metrics", server.url)).text().unwrap();
    let rejected = format!("chartkit_uploads_rejected_total {}\n", cases.len() * 4);
    assert!(metrics.contains(&rejected), "{metrics}");
}

#[test]
fn packages_copied_in_by_hand_that_pull_untar_would_refuse_are_left_out_with_their_reason() {
    let ctx = TestContext::new();
    let cases = cases();
    let repo = ctx.path("repo");
    write(
        &repo.join("good-1.0.0.tgz"),
        &chart_package("good", "1.0.0"),
    );
    let (late, early) = cases.split_first().unwrap();
    for case in early {
        write(&repo.join(case.file()), &case.archive);
    }
    let server = ServeProcess::start(
        ctx.chartkit(),
        &[repo.to_str().unwrap(), "--refresh-interval", "0.2"],
        ctx.dir(),
    );
    let startup = server.startup.join("\n");
    assert!(
        startup.contains("Serving 1 chart version from directory"),
        "{startup}"
    );
    for case in early {
        let line = format!(
            "  skipped {}: `{}`: {}",
            case.file(),
            case.file(),
            case.words
        );
        assert!(startup.contains(&line), "{}: {startup}", case.chart);
    }
    let (served, _) = index(&server.url);
    assert!(served.contains("  good:\n"), "{served}");
    for case in &cases {
        assert!(
            !served.contains(&format!("  {}:\n", case.indexed_as)),
            "{}: {served}",
            case.chart
        );
    }
    // Asked for by name, such a package is refused with its reason rather than served.
    for case in early {
        let (status, message) = error_of(get(&format!("{}/charts/{}", server.url, case.file())));
        assert_eq!(status, 404, "{}", case.chart);
        assert!(
            message.contains("not served") && message.contains(case.words),
            "{}: {message}",
            case.chart
        );
    }

    // One copied in while the server runs is refused at the next refresh, in the log.
    write(&repo.join(late.file()), &late.archive);
    wait_until("the refresh to judge the copied package", || {
        server.log().contains(late.words)
    });
    let log = server.log();
    let line = log
        .lines()
        .find(|line| line.contains(late.words))
        .unwrap()
        .to_owned();
    assert!(
        line.contains("WARN")
            && line.contains("package refused; not indexed or served")
            && line.contains(&late.file()),
        "{line}"
    );
    assert!(!index(&server.url).0.contains(late.indexed_as));
    let (status, message) = error_of(get(&format!("{}/charts/{}", server.url, late.file())));
    assert_eq!(status, 404);
    assert!(message.contains(late.words), "{message}");
}

#[test]
fn helm_indexes_every_package_chartkit_serve_refuses() {
    // The refusals above are chartkit's stricter rule, not Helm's: `helm repo index` takes
    // each of these archives. If helm ever refuses one, this says so.
    let Some(_) =
        chartkit_tests::peers::helm_or_skip("helm_indexes_every_package_chartkit_serve_refuses")
    else {
        return;
    };
    let ctx = TestContext::new();
    let dir = ctx.path("repo");
    let cases = cases();
    for case in &cases {
        write(&dir.join(case.file()), &case.archive);
    }
    run_ok(ctx.helm().unwrap().args(["repo", "index"]).arg(&dir));
    let helm_index = std::fs::read_to_string(dir.join("index.yaml")).unwrap();
    for case in &cases {
        assert!(
            helm_index.contains(&format!("  {}:\n", case.indexed_as)),
            "{}: {helm_index}",
            case.chart
        );
    }
}

#[test]
fn the_same_rules_hold_on_s3_storage() {
    let Some(s3) = S3Server::start_or_skip("the_same_rules_hold_on_s3_storage") else {
        return;
    };
    s3.create_bucket("charts");
    let cases = cases();
    let (copied, uploaded) = cases.split_at(1);
    let copied = &copied[0];
    // Put into the bucket by another tool, past the server.
    let put = client()
        .put(format!("{}/charts/team/{}", s3.endpoint, copied.file()))
        .body(copied.archive.clone())
        .send()
        .unwrap();
    assert!(put.status().is_success(), "{}", put.status());
    let ctx = TestContext::new();
    let mut command = ctx.chartkit();
    s3.configure(&mut command);
    let server = ServeProcess::start(command, &["s3://charts/team"], ctx.dir());
    let startup = server.startup.join("\n");
    assert!(
        startup.contains(&format!("  skipped {}: ", copied.file()))
            && startup.contains(copied.words),
        "{startup}"
    );
    let (status, message) = error_of(get(&format!("{}/charts/{}", server.url, copied.file())));
    assert_eq!(status, 404);
    assert!(message.contains(copied.words), "{message}");
    let before = index(&server.url);
    for case in uploaded {
        let response = client()
            .post(format!("{}/api/charts", server.url))
            .body(case.archive.clone())
            .send()
            .unwrap();
        let (status, message) = error_of(response);
        assert_eq!(status, 400, "{}: {message}", case.chart);
        assert!(message.contains(case.words), "{}: {message}", case.chart);
    }
    assert_eq!(index(&server.url), before);
    let listing = get(&format!("{}/charts?list-type=2&prefix=team/", s3.endpoint))
        .text()
        .unwrap();
    let keys: Vec<&str> = listing
        .split("<Key>")
        .skip(1)
        .filter_map(|rest| rest.split("</Key>").next())
        .collect();
    assert_eq!(keys, vec![format!("team/{}", copied.file())], "{listing}");
}
