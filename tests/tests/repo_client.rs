//! The repository client end to end: `repo add/update/list/remove`, `search repo` and
//! `pull` against a plain static file server started here (which counts what it is
//! asked and what it sends) and against `chartkit serve`, online, offline and with the
//! server gone; `search repo -o json` compared with helm's.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use chartkit_tests::TestContext;
use chartkit_tests::server::ServeProcess;

/// What the static server was asked for and answered, per path.
#[derive(Default, Debug, Clone)]
struct Counts {
    requests: HashMap<String, usize>,
    /// Bodies sent (200 answers), per path.
    bodies: HashMap<String, usize>,
    not_modified: HashMap<String, usize>,
}

impl Counts {
    fn total(&self) -> usize {
        self.requests.values().sum()
    }
    fn bodies(&self, path: &str) -> usize {
        self.bodies.get(path).copied().unwrap_or(0)
    }
}

/// A static file server over a directory, as nginx or S3 websites serve a repository:
/// GET only, an ETag and Last-Modified on every file, 304 for a matching If-None-Match.
struct StaticServer {
    url: String,
    counts: Arc<Mutex<Counts>>,
}

impl StaticServer {
    fn start(root: &Path) -> StaticServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let counts = Arc::new(Mutex::new(Counts::default()));
        let (root, shared) = (root.to_path_buf(), Arc::clone(&counts));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (root, counts) = (root.clone(), Arc::clone(&shared));
                std::thread::spawn(move || serve_one(stream, &root, &counts));
            }
        });
        StaticServer { url, counts }
    }

    fn counts(&self) -> Counts {
        self.counts.lock().unwrap().clone()
    }
}

fn serve_one(stream: TcpStream, root: &Path, counts: &Mutex<Counts>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut if_none_match = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("if-none-match")
        {
            if_none_match = Some(value.trim().to_owned());
        }
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_owned();
    counts
        .lock()
        .unwrap()
        .requests
        .entry(path.clone())
        .and_modify(|n| *n += 1)
        .or_insert(1);
    let mut stream = stream;
    let file = root.join(path.trim_start_matches('/'));
    let Ok(body) = std::fs::read(&file) else {
        let _ = stream
            .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
    };
    let etag = format!("\"{}\"", chartkit_tests::sha256_file(&file));
    let last_modified = "Mon, 02 Jan 2006 15:04:05 GMT";
    if if_none_match.as_deref() == Some(etag.as_str()) {
        counts
            .lock()
            .unwrap()
            .not_modified
            .entry(path)
            .and_modify(|n| *n += 1)
            .or_insert(1);
        let _ = write!(
            stream,
            "HTTP/1.1 304 Not Modified\r\nETag: {etag}\r\nConnection: close\r\n\r\n"
        );
        return;
    }
    counts
        .lock()
        .unwrap()
        .bodies
        .entry(path)
        .and_modify(|n| *n += 1)
        .or_insert(1);
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nETag: {etag}\r\nLast-Modified: {last_modified}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(&body);
}

fn run_ok(command: &mut Command) -> Output {
    let output = command.output().expect("run command");
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A repository directory with signed packages of `web` (1.2.0, 1.2.3, 1.3.0-rc.1,
/// 2.0.0) and `db` 1.0.0, indexed; returns it and the public key file.
fn signed_repository(ctx: &TestContext) -> (PathBuf, PathBuf) {
    let keys = ctx.path("keys");
    run_ok(
        ctx.chartkit()
            .args(["key", "generate", "--name", "Repo Signer", "--email"])
            .arg("signer@example.com")
            .arg("-o")
            .arg(&keys),
    );
    let repo = ctx.path("repo");
    std::fs::create_dir_all(&repo).unwrap();
    for chart in ["web", "db"] {
        run_ok(ctx.chartkit().args(["create", chart]));
        let chart_yaml = ctx.path(&format!("{chart}/Chart.yaml"));
        let text = std::fs::read_to_string(&chart_yaml).unwrap().replace(
            "description: A Helm chart for Kubernetes",
            &format!("description: The {chart} chart, a <test> & demo"),
        );
        std::fs::write(&chart_yaml, text + "keywords:\n- demo\n- kube\n").unwrap();
    }
    let versions = [
        ("web", "1.2.0"),
        ("web", "1.2.3"),
        ("web", "1.3.0-rc.1"),
        ("web", "2.0.0"),
        ("db", "1.0.0"),
    ];
    for (chart, version) in versions {
        run_ok(
            ctx.chartkit()
                .args(["package", chart, "--version", version, "--sign"])
                .args(["--key", "signer@example.com", "--keyring"])
                .arg(keys.join("secret.asc"))
                .arg("-d")
                .arg(&repo),
        );
    }
    run_ok(ctx.chartkit().arg("repo").arg("index").arg(&repo));
    (repo, keys.join("public.asc"))
}

#[test]
fn static_server_add_update_search_pull_verify_and_offline() {
    let ctx = TestContext::new();
    let (repo, public_key) = signed_repository(&ctx);
    let server = StaticServer::start(&repo);

    let added = run_ok(ctx.chartkit().args(["repo", "add", "st", &server.url]));
    assert_eq!(
        text(&added.stdout),
        "\"st\" has been added to your repositories\n"
    );
    assert_eq!(server.counts().bodies("/index.yaml"), 1);

    // Adding it again with the same settings is a no-op, with other settings an error.
    let again = run_ok(ctx.chartkit().args(["repo", "add", "st", &server.url]));
    assert_eq!(
        text(&again.stdout),
        "\"st\" already exists with the same configuration, skipping\n"
    );
    let other = ctx.run(&["repo", "add", "st", &format!("{}/other", server.url)]);
    assert!(!other.status.success());
    assert!(
        text(&other.stderr).contains(
            "Error: repository name (st) already exists, please specify a different name"
        ),
        "{}",
        text(&other.stderr)
    );

    // An unchanged index is not sent again.
    let updated = run_ok(ctx.chartkit().args(["repo", "update"]));
    assert_eq!(
        text(&updated.stdout),
        "Hang tight while we grab the latest from your chart repositories...\n...Successfully got an update from the \"st\" chart repository\nUpdate Complete. ⎈Happy Helming!⎈\n"
    );
    let counts = server.counts();
    assert_eq!(counts.bodies("/index.yaml"), 1, "{counts:?}");
    assert_eq!(
        counts.not_modified.get("/index.yaml"),
        Some(&1),
        "{counts:?}"
    );

    let listed = run_ok(ctx.chartkit().args(["repo", "list", "-o", "json"]));
    assert_eq!(
        text(&listed.stdout),
        format!("[{{\"name\":\"st\",\"url\":\"{}\"}}]\n", server.url)
    );

    // Search with a range picks the newest stable version in it.
    let found =
        run_ok(
            ctx.chartkit()
                .args(["search", "repo", "web", "--version", "^1.2", "-o", "json"]),
        );
    assert_eq!(
        text(&found.stdout),
        "[{\"name\":\"st/web\",\"version\":\"1.2.3\",\"app_version\":\"1.16.0\",\"description\":\"The web chart, a \\u003ctest\\u003e \\u0026 demo\"}]\n"
    );

    // Pull with a range and --verify: the package and its .prov land in the directory.
    let pulled = run_ok(
        ctx.chartkit()
            .args([
                "pull",
                "st/web",
                "--version",
                "^1.2",
                "--verify",
                "--keyring",
            ])
            .arg(&public_key)
            .args(["-d", "out"]),
    );
    assert!(
        text(&pulled.stdout).contains("Signed by: Repo Signer <signer@example.com>"),
        "{}",
        text(&pulled.stdout)
    );
    assert!(text(&pulled.stdout).contains("Chart Hash Verified: sha256:"));
    assert_eq!(
        chartkit_tests::sha256_file(&ctx.path("out/web-1.2.3.tgz")),
        chartkit_tests::sha256_file(&repo.join("web-1.2.3.tgz"))
    );
    assert!(ctx.path("out/web-1.2.3.tgz.prov").exists());
    assert_eq!(server.counts().bodies("/web-1.2.3.tgz"), 1);

    // A second pull of that version, here unpacked, comes from the content store.
    run_ok(ctx.chartkit().args([
        "pull",
        "st/web",
        "--version",
        "1.2.3",
        "--untar",
        "-d",
        "unpacked",
    ]));
    assert!(ctx.path("unpacked/web/Chart.yaml").exists());
    assert_eq!(server.counts().bodies("/web-1.2.3.tgz"), 1);

    // Offline with the server up: nothing is asked of it.
    let before = server.counts().total();
    let offline_search =
        run_ok(
            ctx.chartkit()
                .args(["--offline", "search", "repo", "db", "-o", "json"]),
        );
    assert!(text(&offline_search.stdout).contains("\"st/db\""));
    run_ok(
        ctx.chartkit()
            .env("CHARTKIT_OFFLINE", "1")
            .args([
                "pull",
                "st/web",
                "--version",
                "~1.2.0",
                "--verify",
                "--keyring",
            ])
            .arg(&public_key)
            .args(["-d", "offline-out"]),
    );
    assert!(ctx.path("offline-out/web-1.2.3.tgz").exists());
    let missing = ctx.run(&["pull", "st/web", "--version", "2.0.0", "--offline"]);
    assert!(!missing.status.success());
    let stderr = text(&missing.stderr);
    assert!(
        stderr.contains("chart web version 2.0.0 (sha256:"),
        "{stderr}"
    );
    assert!(stderr.contains("chartkit is offline"), "{stderr}");
    assert!(
        stderr.contains("hint: run \"chartkit pull st/web --version 2.0.0\" without --offline"),
        "{stderr}"
    );
    let offline_update = ctx.run(&["repo", "update", "--offline"]);
    assert!(!offline_update.status.success());
    assert_eq!(server.counts().total(), before, "{:?}", server.counts());

    // Removing the repository removes it and its cached index.
    let removed = run_ok(ctx.chartkit().args(["repo", "remove", "st"]));
    assert_eq!(
        text(&removed.stdout),
        "\"st\" has been removed from your repositories\n"
    );
    let empty = run_ok(ctx.chartkit().args(["repo", "list"]));
    assert_eq!(text(&empty.stderr), "no repositories to show\n");
    assert!(
        !ctx.path(".home/cache/helm/repository/st-index.yaml")
            .exists()
    );
}

/// A directory with one package, `app-1.0.0.tgz`, indexed by `chartkit repo index`.
fn one_chart_repository(ctx: &TestContext) -> PathBuf {
    let repo = ctx.path("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(
        repo.join("app-1.0.0.tgz"),
        chartkit_tests::server::chart_package("app", "1.0.0"),
    )
    .unwrap();
    run_ok(ctx.chartkit().arg("repo").arg("index").arg(&repo));
    repo
}

#[test]
fn a_package_that_does_not_match_the_index_is_refused_and_nothing_is_kept() {
    let ctx = TestContext::new();
    let repo = one_chart_repository(&ctx);
    let expected = chartkit_tests::sha256_file(&repo.join("app-1.0.0.tgz"));
    // The file changes after indexing: another valid package under the same name.
    std::fs::write(
        repo.join("app-1.0.0.tgz"),
        chartkit_tests::server::chart_package("app", "1.0.1"),
    )
    .unwrap();
    let actual = chartkit_tests::sha256_file(&repo.join("app-1.0.0.tgz"));
    let server = StaticServer::start(&repo);
    run_ok(ctx.chartkit().args(["repo", "add", "st", &server.url]));
    std::fs::create_dir_all(ctx.path("out")).unwrap();
    let refused = ctx.run(&["pull", "st/app", "-d", "out"]);
    assert!(!refused.status.success());
    let stderr = text(&refused.stderr);
    assert!(stderr.contains(&format!("sha256:{expected}")), "{stderr}");
    assert!(stderr.contains(&format!("sha256:{actual}")), "{stderr}");
    assert_eq!(std::fs::read_dir(ctx.path("out")).unwrap().count(), 0);
    let content = ctx.path(".home/cache/chartkit/content");
    let blobs = walk(&content);
    assert!(blobs.is_empty(), "{blobs:?}");
    // --untar too leaves nothing.
    let refused = ctx.run(&["pull", "st/app", "--untar", "-d", "out"]);
    assert!(!refused.status.success());
    assert_eq!(std::fs::read_dir(ctx.path("out")).unwrap().count(), 0);
}

/// A digest that cannot be checked (too long, not hex) is an error naming the repository,
/// chart, version and value, and nothing is downloaded or written; an absent one is
/// skipped, as helm skips it.
#[test]
fn a_digest_that_cannot_be_checked_fails_closed() {
    let ctx = TestContext::new();
    let repo = one_chart_repository(&ctx);
    let index = std::fs::read_to_string(repo.join("index.yaml")).unwrap();
    let digest = chartkit_tests::sha256_file(&repo.join("app-1.0.0.tgz"));
    assert!(index.contains(&digest), "{index}");
    let server = StaticServer::start(&repo);
    run_ok(ctx.chartkit().args(["repo", "add", "st", &server.url]));
    std::fs::create_dir_all(ctx.path("out")).unwrap();
    for bad in [format!("{digest}ab"), "z".repeat(64)] {
        std::fs::write(repo.join("index.yaml"), index.replace(&digest, &bad)).unwrap();
        run_ok(ctx.chartkit().args(["repo", "update", "st"]));
        let refused = ctx.run(&["pull", "st/app", "-d", "out"]);
        assert!(
            !refused.status.success(),
            "a digest of {bad:?} was accepted"
        );
        let stderr = text(&refused.stderr);
        for part in [
            "repository \"st\"",
            "chart \"app\"",
            "version \"1.0.0\"",
            &bad,
        ] {
            assert!(stderr.contains(part), "{part:?} missing from: {stderr}");
        }
        assert_eq!(std::fs::read_dir(ctx.path("out")).unwrap().count(), 0);
        assert_eq!(server.counts().bodies("/app-1.0.0.tgz"), 0);
    }
    // No digest at all: nothing to check against, and the package is used.
    let without: String = index
        .lines()
        .filter(|line| !line.trim_start().starts_with("digest:"))
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(repo.join("index.yaml"), without).unwrap();
    run_ok(ctx.chartkit().args(["repo", "update", "st"]));
    let pulled = run_ok(ctx.chartkit().args(["pull", "st/app", "-d", "out"]));
    assert!(ctx.path("out/app-1.0.0.tgz").exists());
    let warned = text(&pulled.stderr);
    assert!(warned.contains("has no digest in the index"), "{warned}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files;
    };
    for entry in entries.flatten() {
        if entry.file_type().unwrap().is_dir() {
            files.extend(walk(&entry.path()));
        } else {
            files.push(entry.path());
        }
    }
    files
}

#[test]
fn chartkit_serve_with_basic_auth_then_stopped_works_from_the_cache() {
    let ctx = TestContext::new();
    let htpasswd = ctx.path("htpasswd");
    std::fs::write(
        &htpasswd,
        format!("ci:{}\n", bcrypt::hash("let-me-in", 4).unwrap()),
    )
    .unwrap();
    let repo = ctx.path("repo");
    std::fs::create_dir(&repo).unwrap();
    for (name, version) in [("api", "1.2.0"), ("api", "1.4.2"), ("api", "2.1.0")] {
        std::fs::write(
            repo.join(format!("{name}-{version}.tgz")),
            chartkit_tests::server::chart_package(name, version),
        )
        .unwrap();
    }
    let server = ServeProcess::start(
        ctx.chartkit(),
        &[
            repo.to_str().unwrap(),
            "--basic-auth-file",
            htpasswd.to_str().unwrap(),
            "--auth-reads",
        ],
        ctx.dir(),
    );
    let url = server.url.clone();

    let refused = ctx.run(&["repo", "add", "cs", &url]);
    assert!(!refused.status.success());
    let stderr = text(&refused.stderr);
    assert!(stderr.contains("answered 401"), "{stderr}");
    assert!(stderr.contains("hint: give credentials"), "{stderr}");

    let mut child = ctx
        .chartkit()
        .args([
            "repo",
            "add",
            "cs",
            &url,
            "--username",
            "ci",
            "--password-stdin",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"let-me-in\n")
        .unwrap();
    let added = child.wait_with_output().unwrap();
    assert!(added.status.success(), "{}", text(&added.stderr));
    let config = std::fs::read_to_string(ctx.path(".home/config/helm/repositories.yaml")).unwrap();
    assert!(config.contains("  password: let-me-in\n"), "{config}");

    let found =
        run_ok(
            ctx.chartkit()
                .args(["search", "repo", "api", "--version", "^1.2", "-o", "json"]),
        );
    assert!(
        text(&found.stdout).contains("\"version\":\"1.4.2\""),
        "{}",
        text(&found.stdout)
    );
    run_ok(
        ctx.chartkit()
            .args(["pull", "cs/api", "--version", "^1.2", "-d", "a"]),
    );
    assert!(ctx.path("a/api-1.4.2.tgz").exists());
    // A repository given by URL (not the configured name) with credentials.
    run_ok(ctx.chartkit().args([
        "pull",
        "api",
        "--repo",
        &url,
        "--version",
        "2.1.0",
        "--username",
        "ci",
        "--password",
        "let-me-in",
        "-d",
        "b",
    ]));
    assert!(ctx.path("b/api-2.1.0.tgz").exists());

    server.terminate();

    // The server is gone: search and pull of cached versions still work, and asking
    // a repository by URL falls back to its cached index, saying how old it is.
    let found = run_ok(ctx.chartkit().args(["search", "repo", "api", "-o", "json"]));
    assert!(text(&found.stdout).contains("\"version\":\"2.1.0\""));
    run_ok(
        ctx.chartkit()
            .args(["pull", "cs/api", "--version", "^1.2", "-d", "c"]),
    );
    assert!(ctx.path("c/api-1.4.2.tgz").exists());
    let fallback = run_ok(ctx.chartkit().args([
        "pull",
        "api",
        "--repo",
        &url,
        "--version",
        "2.1.0",
        "--username",
        "ci",
        "--password",
        "let-me-in",
        "-d",
        "d",
    ]));
    let stderr = text(&fallback.stderr);
    // The URL is the configured repository's, so its settings and cache are used.
    assert!(
        stderr.starts_with("level=WARN msg=\"")
            && stderr.contains("using the cached index of repository \\\"cs\\\""),
        "{stderr}"
    );
    assert!(
        stderr.contains("last updated") && stderr.contains(" ago"),
        "{stderr}"
    );
    assert!(ctx.path("d/api-2.1.0.tgz").exists());
    // A version never downloaded cannot come from anywhere.
    let missing = ctx.run(&["pull", "cs/api", "--version", "1.2.0", "-d", "e"]);
    assert!(!missing.status.success());
    assert!(
        text(&missing.stderr).contains("cannot reach"),
        "{}",
        text(&missing.stderr)
    );
}

#[test]
fn search_repo_json_equals_helms() {
    let Some(_) = chartkit_tests::peers::helm_or_skip("search_repo_json_equals_helms") else {
        return;
    };
    let ctx = TestContext::new();
    let (repo, _) = signed_repository(&ctx);
    let server = StaticServer::start(&repo);
    run_ok(ctx.chartkit().args(["repo", "add", "st", &server.url]));
    let helm = |args: &[&str]| {
        let mut command = ctx.helm().unwrap();
        command
            .env("HELM_REPOSITORY_CONFIG", ctx.path("helm/repositories.yaml"))
            .env("HELM_REPOSITORY_CACHE", ctx.path("helm/cache"))
            .args(args);
        run_ok(&mut command)
    };
    helm(&["repo", "add", "st", &server.url]);
    let queries: &[&[&str]] = &[
        &[],
        &["web"],
        &["WEB"],
        &["demo"],
        &["kube"],
        &["st/"],
        &["t/we"],
        &["st/db", "--versions"],
        &["x/web"],
        &["web", "--versions"],
        &["web", "--version", "^1.2"],
        &["web", "--version", "^1.2", "--versions"],
        &["--devel"],
        &["web", "--devel", "--versions"],
        &["-r", "w.b"],
        &["-r", "^d"],
        &["nothing-like-this"],
        &["--version", ">=1.0.0 <2.0.0"],
    ];
    for query in queries {
        for format in ["json", "yaml", "table"] {
            let mut args = vec!["search", "repo"];
            args.extend_from_slice(query);
            args.extend_from_slice(&["-o", format]);
            let theirs = text(&helm(&args).stdout);
            let ours = text(&run_ok(ctx.chartkit().args(&args)).stdout);
            assert_eq!(ours, theirs, "search repo {query:?} -o {format}");
        }
    }
    // And the repository list is the same as helm's.
    for format in ["json", "yaml", "table"] {
        let theirs = text(&helm(&["repo", "list", "-o", format]).stdout);
        let ours = text(&run_ok(ctx.chartkit().args(["repo", "list", "-o", format])).stdout);
        assert_eq!(ours, theirs, "repo list -o {format}");
    }
}

#[test]
fn search_repo_fail_on_no_result_fails_as_helms() {
    let Some(_) =
        chartkit_tests::peers::helm_or_skip("search_repo_fail_on_no_result_fails_as_helms")
    else {
        return;
    };
    let ctx = TestContext::new();
    let (repo, _) = signed_repository(&ctx);
    let server = StaticServer::start(&repo);
    run_ok(ctx.chartkit().args(["repo", "add", "st", &server.url]));
    let mut add = ctx.helm().unwrap();
    add.env("HELM_REPOSITORY_CONFIG", ctx.path("helm/repositories.yaml"))
        .env("HELM_REPOSITORY_CACHE", ctx.path("helm/cache"))
        .args(["repo", "add", "st", &server.url]);
    run_ok(&mut add);
    let queries: &[&[&str]] = &[
        &["nothing-like-this"],
        &["web", "--version", "^9"],
        &["-r", "^zz", "--versions"],
        &["web"],
    ];
    for query in queries {
        for format in ["json", "yaml", "table"] {
            let mut args = vec!["search", "repo", "--fail-on-no-result"];
            args.extend_from_slice(query);
            args.extend_from_slice(&["-o", format]);
            let theirs = ctx
                .helm()
                .unwrap()
                .env("HELM_REPOSITORY_CONFIG", ctx.path("helm/repositories.yaml"))
                .env("HELM_REPOSITORY_CACHE", ctx.path("helm/cache"))
                .args(&args)
                .output()
                .expect("run helm");
            let ours = ctx.chartkit().args(&args).output().expect("run chartkit");
            assert_eq!(ours.status.code(), theirs.status.code(), "{args:?}");
            assert_eq!(text(&ours.stdout), text(&theirs.stdout), "{args:?}");
            assert_eq!(text(&ours.stderr), text(&theirs.stderr), "{args:?}");
        }
    }
    // The one that finds nothing fails in helm's words, printing nothing on stdout.
    let none = ctx
        .chartkit()
        .args(["search", "repo", "nothing-like-this", "--fail-on-no-result"])
        .output()
        .expect("run chartkit");
    assert_eq!(none.status.code(), Some(1));
    assert_eq!(text(&none.stdout), "");
    assert_eq!(text(&none.stderr), "Error: no results found\n");
}

#[test]
fn import_helm_takes_over_helms_repositories() {
    let ctx = TestContext::new();
    let helm_file = ctx.path("helm-home/repositories.yaml");
    std::fs::create_dir_all(ctx.path("helm-home")).unwrap();
    std::fs::write(
        &helm_file,
        "apiVersion: \"\"\ngenerated: \"0001-01-01T00:00:00Z\"\nrepositories:\n- caFile: \"\"\n  certFile: \"\"\n  insecure_skip_tls_verify: false\n  keyFile: \"\"\n  name: one\n  pass_credentials_all: false\n  password: secret\n  url: http://127.0.0.1:9/one\n  username: me\n",
    )
    .unwrap();
    // chartkit kept apart from helm (CHARTKIT_CONFIG_HOME) takes helm's list over.
    let import = || {
        let mut command = ctx.chartkit();
        command
            .env("HELM_CONFIG_HOME", ctx.path("helm-home"))
            .env("CHARTKIT_CONFIG_HOME", ctx.path("elsewhere"))
            .args(["repo", "import-helm"]);
        command
    };
    let imported = run_ok(&mut import());
    assert!(text(&imported.stdout).contains("\"one\" has been added to your repositories"));
    let ours = std::fs::read_to_string(ctx.path("elsewhere/repositories.yaml")).unwrap();
    assert_eq!(ours, std::fs::read_to_string(&helm_file).unwrap());
    let again = run_ok(&mut import());
    assert!(text(&again.stdout).contains("already exists with the same configuration"));
    // By default chartkit's list is helm's: nothing to import.
    let same = run_ok(
        ctx.chartkit()
            .env("HELM_REPOSITORY_CONFIG", &helm_file)
            .args(["repo", "import-helm"]),
    );
    assert!(text(&same.stdout).contains("chartkit already uses Helm's repository list"));
}

#[test]
fn a_self_signed_server_is_trusted_through_ca_file() {
    let ctx = TestContext::new();
    let cert =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
            .unwrap();
    let cert_pem = ctx.path("cert.pem");
    let key_pem = ctx.path("key.pem");
    std::fs::write(&cert_pem, cert.cert.pem()).unwrap();
    std::fs::write(&key_pem, cert.signing_key.serialize_pem()).unwrap();
    let repo = ctx.path("repo");
    std::fs::create_dir(&repo).unwrap();
    std::fs::write(
        repo.join("tls-0.1.0.tgz"),
        chartkit_tests::server::chart_package("tls", "0.1.0"),
    )
    .unwrap();
    let server = ServeProcess::start(
        ctx.chartkit(),
        &[
            repo.to_str().unwrap(),
            "--tls-cert",
            cert_pem.to_str().unwrap(),
            "--tls-key",
            key_pem.to_str().unwrap(),
        ],
        ctx.dir(),
    );
    assert!(server.url.starts_with("https://"), "{}", server.url);
    let untrusted = ctx.run(&["repo", "add", "tls", &server.url]);
    assert!(!untrusted.status.success());
    assert!(
        text(&untrusted.stderr).contains("is not a valid chart repository or cannot be reached"),
        "{}",
        text(&untrusted.stderr)
    );
    run_ok(
        ctx.chartkit()
            .args(["repo", "add", "tls", &server.url, "--ca-file"])
            .arg(&cert_pem),
    );
    // The CA file is remembered for the repository, and used for the package too.
    run_ok(ctx.chartkit().args(["pull", "tls/tls", "-d", "out"]));
    assert!(ctx.path("out/tls-0.1.0.tgz").exists());
    run_ok(ctx.chartkit().args([
        "repo",
        "add",
        "insecure",
        &server.url,
        "--insecure-skip-tls-verify",
    ]));
}

/// A repository that wants a bearer token for reads: `repo add --token` keeps it with the
/// repository, and `search` and `pull` through that repository send it; without it the
/// server's 401 is reported.
#[test]
fn a_bearer_token_opens_a_repository_that_requires_one() {
    let ctx = TestContext::new();
    let tokens = ctx.path("tokens");
    std::fs::write(&tokens, "s3cr3t-token\n").unwrap();
    let repo = ctx.path("repo");
    std::fs::create_dir(&repo).unwrap();
    std::fs::write(
        repo.join("api-1.2.0.tgz"),
        chartkit_tests::server::chart_package("api", "1.2.0"),
    )
    .unwrap();
    let server = ServeProcess::start(
        ctx.chartkit(),
        &[
            repo.to_str().unwrap(),
            "--bearer-token-file",
            tokens.to_str().unwrap(),
            "--auth-reads",
        ],
        ctx.dir(),
    );
    let refused = ctx.run(&["repo", "add", "tok", &server.url, "--token", "wrong"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("401"),
        "{}",
        text(&refused.stderr)
    );

    run_ok(
        ctx.chartkit()
            .args(["repo", "add", "tok", &server.url, "--token", "s3cr3t-token"]),
    );
    let found = run_ok(
        ctx.chartkit()
            .args(["search", "repo", "tok/api", "-o", "json"]),
    );
    assert!(
        text(&found.stdout).contains("\"version\":\"1.2.0\""),
        "{}",
        text(&found.stdout)
    );
    let out = ctx.path("out");
    run_ok(
        ctx.chartkit()
            .args(["pull", "tok/api", "-d", out.to_str().unwrap()]),
    );
    assert!(out.join("api-1.2.0.tgz").is_file());
    // The same with the token given to pull and the repository's URL.
    let again = ctx.path("again");
    run_ok(ctx.chartkit().args([
        "pull",
        "api",
        "--repo",
        &server.url,
        "--token",
        "s3cr3t-token",
        "-d",
        again.to_str().unwrap(),
    ]));
    assert!(again.join("api-1.2.0.tgz").is_file());
}

/// `pull --version` with a range (or a version written otherwise than the entry's)
/// warns as helm's `IndexFile.Get` does, in its log line.
#[test]
fn pull_of_a_range_warns_of_the_fallback_in_helms_line() {
    let ctx = TestContext::new();
    let repo = one_chart_repository(&ctx);
    let server = StaticServer::start(&repo);
    run_ok(ctx.chartkit().args(["repo", "add", "one", &server.url]));
    let args = ["pull", "one/app", "--version", "^1.0", "-d"];
    let ours = run_ok(ctx.chartkit().args(args).arg(ctx.path("ours")));
    let expected = "level=WARN msg=\"unable to find exact version requested; falling back to closest available version\" chart=app requested=^1.0 selected=1.0.0\n";
    assert_eq!(text(&ours.stderr), expected);
    let exact = run_ok(
        ctx.chartkit()
            .args(["pull", "one/app", "--version", "1.0.0", "-d"])
            .arg(ctx.path("exact")),
    );
    assert_eq!(text(&exact.stderr), "");
    if chartkit_tests::peers::helm_or_skip("pull_of_a_range_warns_of_the_fallback_in_helms_line")
        .is_some()
    {
        let mut helm = ctx.helm().unwrap();
        helm.env("HELM_REPOSITORY_CONFIG", ctx.path("helm/repositories.yaml"))
            .env("HELM_REPOSITORY_CACHE", ctx.path("helm/cache"));
        run_ok(
            ctx.helm()
                .unwrap()
                .env("HELM_REPOSITORY_CONFIG", ctx.path("helm/repositories.yaml"))
                .env("HELM_REPOSITORY_CACHE", ctx.path("helm/cache"))
                .args(["repo", "add", "one", &server.url]),
        );
        std::fs::create_dir_all(ctx.path("theirs")).unwrap();
        let theirs = run_ok(helm.args(args).arg(ctx.path("theirs")));
        assert_eq!(text(&theirs.stderr), expected);
    }
}

/// A repository whose index holds entries Helm skips (a version that is not SemVer, a
/// missing name, a null entry) beside a good one: helm logs a warning for each every time
/// it reads the index, naming the URL when it downloads it and the cached file when it
/// reads that. chartkit reads a cached index from its compact form, which must keep the
/// skipped entries for the warnings to be given again.
#[test]
fn skipped_index_entries_are_warned_of_on_every_reading_as_helm_does() {
    let ctx = TestContext::new();
    let repo = ctx.path("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let package = chartkit_tests::server::chart_package("good", "0.1.0");
    std::fs::write(repo.join("good-0.1.0.tgz"), &package).unwrap();
    let digest = chartkit_tests::sha256_file(&repo.join("good-0.1.0.tgz"));
    std::fs::write(
        repo.join("index.yaml"),
        format!(
            "apiVersion: v1\nentries:\n  good:\n  - {{apiVersion: v2, name: good, version: 0.1.0, digest: {digest}, urls: [good-0.1.0.tgz]}}\n  - {{apiVersion: v2, name: good, version: not-a-version, urls: [x.tgz]}}\n  noname:\n  - {{apiVersion: v2, version: 1.0.0, urls: [y.tgz]}}\n  empty:\n  - null\ngenerated: \"2024-01-01T00:00:00Z\"\n"
        ),
    )
    .unwrap();
    let server = StaticServer::start(&repo);
    let parent = ctx.path("parent");
    std::fs::create_dir_all(&parent).unwrap();
    std::fs::write(
        parent.join("Chart.yaml"),
        format!(
            "apiVersion: v2\nname: parent\nversion: 0.1.0\ndependencies:\n- name: good\n  version: 0.1.0\n  repository: {}\n",
            server.url
        ),
    )
    .unwrap();
    let pulled = ctx.path("pulled");
    std::fs::create_dir_all(&pulled).unwrap();
    let pulled = pulled.to_str().unwrap();
    let parent = parent.to_str().unwrap();
    let commands: &[&[&str]] = &[
        &["repo", "add", "r", &server.url],
        &["repo", "update"],
        &["search", "repo", "r/"],
        &["pull", "r/good", "-d", pulled],
        &["show", "chart", "r/good"],
        &["template", "x", "r/good"],
        &["dependency", "update", parent],
        &["dependency", "build", parent, "--skip-refresh"],
    ];
    // Each tool with its own repository files, named alike in the warnings.
    let warnings = |command: &mut Command, home: &str| -> Vec<Vec<String>> {
        let (config, cache) = (
            ctx.path(&format!("{home}/repositories.yaml")),
            ctx.path(&format!("{home}/cache")),
        );
        let mut all = Vec::new();
        for args in commands {
            let mut run = Command::new(command.get_program());
            run.current_dir(ctx.dir())
                .envs(command.get_envs().filter_map(|(k, v)| Some((k, v?))))
                .env("HELM_REPOSITORY_CONFIG", &config)
                .env("HELM_REPOSITORY_CACHE", &cache)
                .args(*args);
            let output = run_ok(&mut run);
            let stderr = text(&output.stderr).replace(cache.to_str().unwrap(), "CACHE");
            // helm reads an index as often as its code asks, in Go's map order: the
            // lines are compared as a set.
            let lines: std::collections::BTreeSet<String> = stderr
                .lines()
                .filter(|l| l.starts_with("level=WARN"))
                .map(str::to_owned)
                .collect();
            all.push(lines.into_iter().collect());
        }
        all
    };
    let ours = warnings(&mut ctx.chartkit(), "ours");
    let from_url = format!("from {}: ", server.url);
    let skipped = [
        "for chart \\\"good\\\" \\\"not-a-version\\\" FROM validation: chart.metadata.version \\\"not-a-version\\\" is invalid",
        "for chart \\\"noname\\\" \\\"1.0.0\\\" FROM validation: chart.metadata.name is required",
        "for chart \\\"empty\\\" FROM empty entry",
    ];
    let expected = |from: &str| -> Vec<String> {
        let mut lines: Vec<String> = skipped
            .iter()
            .map(|s| {
                format!(
                    "level=WARN msg=\"skipping loading invalid entry {}\"",
                    s.replace("FROM ", from)
                )
            })
            .collect();
        lines.sort();
        lines
    };
    let from_cache = "from CACHE/r-index.yaml: ";
    let both: Vec<String> = {
        let mut both = expected(&from_url);
        both.extend(expected(from_cache));
        both.sort();
        both
    };
    // A download warns naming the URL, every later reading naming the cached file.
    assert_eq!(ours[0], expected(&from_url), "repo add");
    assert_eq!(ours[1], expected(&from_url), "repo update");
    for (i, name) in [
        (2, "search"),
        (3, "pull"),
        (4, "show chart"),
        (5, "template"),
    ] {
        assert_eq!(ours[i], expected(from_cache), "{name}");
    }
    assert_eq!(ours[6], both, "dependency update");
    assert_eq!(ours[7], expected(from_cache), "dependency build");
    let Some(helm) = chartkit_tests::peers::helm_or_skip(
        "skipped_index_entries_are_warned_of_on_every_reading_as_helm_does (compared with helm)",
    ) else {
        return;
    };
    std::fs::remove_dir_all(ctx.path("parent/charts")).unwrap();
    std::fs::remove_file(ctx.path("parent/Chart.lock")).unwrap();
    let theirs = warnings(&mut ctx.hermetic(&helm), "theirs");
    for (args, (ours, theirs)) in commands.iter().zip(ours.iter().zip(&theirs)) {
        assert_eq!(ours, theirs, "{args:?}");
    }
}
