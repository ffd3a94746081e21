//! `chartkit serve --depth N` and `--depth-dynamic`: several repositories on one server,
//! each with its own index under its path (`/ORG/REPO/index.yaml`, `/api/ORG/REPO/charts`),
//! kept under that path in the storage; helm 4.1.4 adds each as a repository and pulls
//! from it, and pushes to and pulls from its OCI face (`oci://HOST/ORG/REPO/NAME`). The
//! ChartMuseum personality started with `DEPTH=1`, as its Helm chart's multitenant
//! setting starts it.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use chartkit_tests::charts::configmap_package;
use chartkit_tests::registry::login;
use chartkit_tests::sandbox::run_ok;
use chartkit_tests::server::client;
use chartkit_tests::server::{ServeProcess, chart_package, write_htpasswd};
use chartkit_tests::{TestContext, peers, stderr};

const USER: &str = "tenant";
const PASSWORD: &str = "s3cret";

fn upload(url: &str, package: Vec<u8>) -> (u16, String) {
    let response = client().post(url).body(package).send().unwrap();
    (response.status().as_u16(), response.text().unwrap())
}

fn get(url: &str) -> (u16, String) {
    let response = client().get(url).send().unwrap();
    (response.status().as_u16(), response.text().unwrap())
}

fn index(url: &str) -> String {
    let (status, body) = get(url);
    assert_eq!(status, 200, "GET {url}: {body}");
    body
}

/// `helm repo add NAME URL`, then `helm pull NAME/CHART` into `out`; the package's bytes.
fn helm_pull(ctx: &TestContext, helm: &Path, name: &str, url: &str, chart: &str) -> Vec<u8> {
    run_ok(ctx.hermetic(helm).args(["repo", "add", name, url]));
    let out = ctx.path(&format!("pulled/{name}"));
    std::fs::create_dir_all(&out).unwrap();
    run_ok(ctx.hermetic(helm).args([
        "pull",
        &format!("{name}/{chart}"),
        "-d",
        out.to_str().unwrap(),
    ]));
    let file = std::fs::read_dir(&out).unwrap().next().unwrap().unwrap();
    std::fs::read(file.path()).unwrap()
}

#[test]
fn depth_two_keeps_each_repository_apart_for_helm() {
    let ctx = TestContext::new();
    let storage = ctx.path("store");
    let server = ServeProcess::start_on(&ctx, &storage, &["--depth", "2"]);
    let url = &server.url;

    let web = chart_package("web", "1.0.0");
    let db = chart_package("db", "2.0.0");
    assert_eq!(
        upload(&format!("{url}/api/org/a/charts"), web.clone()),
        (201, r#"{"saved":true}"#.to_owned())
    );
    assert_eq!(
        upload(&format!("{url}/api/org/b/charts"), db.clone()).0,
        201
    );
    // Each repository is its own prefix of the storage.
    assert!(storage.join("org/a/web-1.0.0.tgz").is_file());
    assert!(storage.join("org/b/db-2.0.0.tgz").is_file());
    assert!(!storage.join("web-1.0.0.tgz").exists());

    let a = index(&format!("{url}/org/a/index.yaml"));
    let b = index(&format!("{url}/org/b/index.yaml"));
    assert!(a.contains("  web:\n") && !a.contains("db"), "{a}");
    assert!(b.contains("  db:\n") && !b.contains("web"), "{b}");
    // Relative to the repository's own index, as ChartMuseum writes them at depth.
    assert!(a.contains("\n    - charts/web-1.0.0.tgz\n"), "{a}");
    let (status, list) = get(&format!("{url}/api/org/a/charts"));
    assert_eq!(status, 200);
    assert!(
        list.starts_with(r#"{"web":[{"#) && !list.contains("\"db\""),
        "{list}"
    );
    assert_eq!(get(&format!("{url}/api/org/b/charts/web")).0, 404);
    assert_eq!(get(&format!("{url}/api/org/a/charts/web/1.0.0")).0, 200);
    let (status, values) = get(&format!("{url}/api/org/a/charts/web/latest/values"));
    assert_eq!((status, values.as_str()), (200, "a: 1\n"));
    let head = client()
        .head(format!("{url}/api/org/a/charts/web"))
        .send()
        .unwrap();
    assert_eq!(head.status(), 200);

    // At any other depth: ChartMuseum's 404.
    for path in [
        "/index.yaml",
        "/org/index.yaml",
        "/org/a/b/index.yaml",
        "/api/charts",
        "/api/org/charts",
        "/charts/web-1.0.0.tgz",
    ] {
        assert_eq!(
            get(&format!("{url}{path}")),
            (404, r#"{"error":"not found"}"#.to_owned()),
            "{path}"
        );
    }
    // The server's own routes stay at the root.
    assert_eq!(get(&format!("{url}/health")).0, 200);

    // Uploading the same version again conflicts in that repository only; ?force replaces.
    assert_eq!(
        upload(&format!("{url}/api/org/a/charts"), web.clone()).0,
        409
    );
    assert_eq!(
        upload(&format!("{url}/api/org/b/charts"), web.clone()).0,
        201
    );
    assert_eq!(
        upload(&format!("{url}/api/org/a/charts?force"), web.clone()).0,
        201
    );

    let (_, metrics) = get(&format!("{url}/metrics"));
    assert!(
        metrics.contains("chartkit_repository_chart_versions{repository=\"org/a\"} 1\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("chartkit_repository_chart_versions{repository=\"org/b\"} 2\n"),
        "{metrics}"
    );

    if let Some(helm) = peers::helm_or_skip("depth_two_keeps_each_repository_apart_for_helm") {
        assert_eq!(
            helm_pull(&ctx, &helm, "a", &format!("{url}/org/a"), "web"),
            web
        );
        assert_eq!(
            helm_pull(&ctx, &helm, "b", &format!("{url}/org/b"), "db"),
            db
        );
        let search = run_ok(
            ctx.hermetic(&helm)
                .args(["search", "repo", "a/", "-o", "json"]),
        );
        let found = chartkit_tests::stdout(&search);
        assert!(
            found.contains("\"a/web\"") && !found.contains("a/db"),
            "{found}"
        );
    }

    // Deleting from one repository leaves the other's copy.
    let deleted = client()
        .delete(format!("{url}/api/org/a/charts/web/1.0.0"))
        .send()
        .unwrap();
    assert_eq!(deleted.status(), 200);
    assert!(!storage.join("org/a/web-1.0.0.tgz").exists());
    assert!(!index(&format!("{url}/org/a/index.yaml")).contains("web"));
    assert!(index(&format!("{url}/org/b/index.yaml")).contains("  web:\n"));
    let again = client()
        .delete(format!("{url}/api/org/a/charts/web/1.0.0"))
        .send()
        .unwrap();
    assert_eq!(again.status(), 404);
}

#[test]
fn a_restarted_server_finds_each_repository_in_its_storage_prefix() {
    let ctx = TestContext::new();
    let storage = ctx.path("store");
    std::fs::create_dir_all(storage.join("team")).unwrap();
    std::fs::write(
        storage.join("team/app-0.1.0.tgz"),
        chart_package("app", "0.1.0"),
    )
    .unwrap();
    std::fs::write(
        storage.join("root-1.0.0.tgz"),
        chart_package("root", "1.0.0"),
    )
    .unwrap();
    let server = ServeProcess::start_on(
        &ctx,
        &storage,
        &["--depth", "1", "--url", "https://charts.example.com/base"],
    );
    let team = index(&format!("{}/team/index.yaml", server.url));
    assert!(
        team.contains("  app:\n") && !team.contains("root"),
        "{team}"
    );
    // --url: absolute chart URLs under the repository's path.
    assert!(
        team.contains("- https://charts.example.com/base/team/charts/app-0.1.0.tgz\n"),
        "{team}"
    );
    // A repository nothing was written to is an empty index, and is not created.
    let empty = index(&format!("{}/nobody/index.yaml", server.url));
    assert!(
        empty.starts_with("apiVersion: v1\nentries: {}\n"),
        "{empty}"
    );
    assert!(!storage.join("nobody").exists());
    let package = client()
        .get(format!("{}/team/charts/app-0.1.0.tgz", server.url))
        .send()
        .unwrap();
    assert_eq!(package.status(), 200);
    assert_eq!(
        package.bytes().unwrap().as_ref(),
        std::fs::read(storage.join("team/app-0.1.0.tgz")).unwrap()
    );
}

#[test]
fn depth_dynamic_serves_a_repository_at_any_depth() {
    let ctx = TestContext::new();
    let storage = ctx.path("store");
    let server = ServeProcess::start_on(&ctx, &storage, &["--depth-dynamic"]);
    let url = &server.url;
    let cases = [("", "top"), ("/x", "one"), ("/x/y/z", "three")];
    for (path, chart) in cases {
        assert_eq!(
            upload(
                &format!("{url}/api{path}/charts"),
                chart_package(chart, "1.0.0")
            )
            .0,
            201,
            "{path}"
        );
    }
    assert!(storage.join("top-1.0.0.tgz").is_file());
    assert!(storage.join("x/one-1.0.0.tgz").is_file());
    assert!(storage.join("x/y/z/three-1.0.0.tgz").is_file());
    for (path, chart) in cases {
        let text = index(&format!("{url}{path}/index.yaml"));
        for (_, other) in cases {
            assert_eq!(
                text.contains(&format!("  {other}:\n")),
                other == chart,
                "{path}: {text}"
            );
        }
    }
    let (status, _) = get(&format!("{url}/api/x/y/z/charts/three/1.0.0"));
    assert_eq!(status, 200);
    assert_eq!(get(&format!("{url}/x/y")).0, 404);
    if let Some(helm) = peers::helm_or_skip("depth_dynamic_serves_a_repository_at_any_depth") {
        let pulled = helm_pull(&ctx, &helm, "deep", &format!("{url}/x/y/z"), "three");
        assert_eq!(pulled, chart_package("three", "1.0.0"));
    }
}

#[test]
fn helm_pushes_to_and_pulls_from_a_repositorys_oci_face() {
    const NAME: &str = "helm_pushes_to_and_pulls_from_a_repositorys_oci_face";
    let ctx = TestContext::new();
    let Some(helm) = peers::helm_or_skip(NAME) else {
        return;
    };
    let storage = ctx.path("store");
    let server = ServeProcess::start_on(&ctx, &storage, &["--depth", "2"]);
    let host = server.host();
    let helm = || ctx.hermetic(&helm);

    let pkg = configmap_package(&ctx, &mut helm(), "web", "1.2.3");
    run_ok(
        helm()
            .arg("push")
            .arg(&pkg)
            .args([&format!("oci://{host}/org/a"), "--plain-http"]),
    );
    assert!(storage.join("org/a/web-1.2.3.tgz").is_file());
    let a = index(&format!("{}/org/a/index.yaml", server.url));
    assert!(a.contains("  web:\n"), "{a}");
    assert!(!index(&format!("{}/org/b/index.yaml", server.url)).contains("web"));

    let out = ctx.path("pulled");
    std::fs::create_dir_all(&out).unwrap();
    run_ok(helm().args([
        "pull",
        &format!("oci://{host}/org/a/web"),
        "--version",
        "1.2.3",
        "--plain-http",
        "-d",
        out.to_str().unwrap(),
    ]));
    assert_eq!(
        std::fs::read(out.join("web-1.2.3.tgz")).unwrap(),
        std::fs::read(&pkg).unwrap()
    );
    // The other repository has no such chart, and a name at the wrong depth is unknown.
    let missing = helm()
        .args([
            "pull",
            &format!("oci://{host}/org/b/web"),
            "--version",
            "1.2.3",
            "--plain-http",
            "-d",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(!missing.status.success());
    let wrong = helm()
        .arg("push")
        .arg(&pkg)
        .args([&format!("oci://{host}/org"), "--plain-http"])
        .output()
        .unwrap();
    assert!(!wrong.status.success());
    assert!(stderr(&wrong).contains("org/web"), "{}", stderr(&wrong));
}

/// The ChartMuseum Helm chart's multitenant setting: `DEPTH=1` in its environment, with
/// local storage and basic auth.
#[test]
fn the_chartmuseum_personality_with_depth_one_serves_a_repository_per_path() {
    let ctx = TestContext::new();
    let link = ctx.path("bin/chartmuseum");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(chartkit_tests::chartkit_bin(), &link).unwrap();
    let storage = ctx.path("storage");
    let mut command = Command::new(&link);
    command
        .current_dir(ctx.dir())
        .env_clear()
        .env("HOME", ctx.path(".home"))
        .env("LISTEN_HOST", "127.0.0.1")
        .env("PORT", "0")
        .env("STORAGE", "local")
        .env("STORAGE_LOCAL_ROOTDIR", &storage)
        .env("BASIC_AUTH_USER", USER)
        .env("BASIC_AUTH_PASS", PASSWORD)
        .env("DISABLE_API", "false")
        .env("DEPTH", "1");
    let server = ServeProcess::spawn(command, ctx.dir());
    let url = &server.url;
    for (repo, chart) in [("alpha", "one"), ("beta", "two")] {
        let response = client()
            .post(format!("{url}/api/{repo}/charts"))
            .basic_auth(USER, Some(PASSWORD))
            .body(chart_package(chart, "0.1.0"))
            .send()
            .unwrap();
        assert_eq!(response.status(), 201, "{repo}");
    }
    assert!(storage.join("alpha/one-0.1.0.tgz").is_file());
    // Reads need the password, in every repository.
    assert_eq!(get(&format!("{url}/alpha/index.yaml")).0, 401);
    let unauthorised = client()
        .post(format!("{url}/api/gamma/charts"))
        .body(chart_package("three", "0.1.0"))
        .send()
        .unwrap();
    assert_eq!(unauthorised.status(), 401);
    assert!(!storage.join("gamma").exists());
    let alpha = client()
        .get(format!("{url}/alpha/index.yaml"))
        .basic_auth(USER, Some(PASSWORD))
        .send()
        .unwrap()
        .text()
        .unwrap();
    assert!(
        alpha.contains("  one:\n") && !alpha.contains("two"),
        "{alpha}"
    );

    let Some(helm) = peers::helm_or_skip(
        "the_chartmuseum_personality_with_depth_one_serves_a_repository_per_path",
    ) else {
        return;
    };
    for (repo, chart) in [("alpha", "one"), ("beta", "two")] {
        run_ok(ctx.hermetic(&helm).args([
            "repo",
            "add",
            repo,
            &format!("{url}/{repo}"),
            "--username",
            USER,
            "--password",
            PASSWORD,
        ]));
        let out = ctx.path(&format!("pulled-{repo}"));
        std::fs::create_dir_all(&out).unwrap();
        run_ok(ctx.hermetic(&helm).args([
            "pull",
            &format!("{repo}/{chart}"),
            "-d",
            out.to_str().unwrap(),
        ]));
        assert_eq!(
            std::fs::read(out.join(format!("{chart}-0.1.0.tgz"))).unwrap(),
            chart_package(chart, "0.1.0")
        );
    }
    let wrong = ctx
        .hermetic(&helm)
        .args(["pull", "alpha/two", "-d", ctx.path("x").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!wrong.status.success(), "two is beta's, not alpha's");
}

/// Two replicas at depth 2 on one bucket: each repository is a key prefix, a replica that
/// never saw a repository finds it in the bucket, and one that keeps it follows the other's
/// uploads.
#[test]
fn replicas_on_one_bucket_share_each_repository() {
    let Some(s3) = chartkit_tests::server::S3Server::start_or_skip(
        "replicas_on_one_bucket_share_each_repository",
    ) else {
        return;
    };
    s3.create_bucket("charts");
    let ctx = TestContext::new();
    let start = || {
        s3.serve(
            &ctx,
            &[
                "s3://charts/pre",
                "--depth",
                "2",
                "--refresh-interval",
                "0.5",
            ],
        )
    };
    let (first, second) = (start(), start());
    let upload_to = |server: &ServeProcess, version: &str| {
        upload(
            &format!("{}/api/org/a/charts", server.url),
            chart_package("web", version),
        )
        .0
    };
    assert_eq!(upload_to(&first, "1.0.0"), 201);
    // The package is under the repository's prefix: a single-repository server there
    // serves it.
    let single = {
        let mut command = ctx.chartkit();
        s3.configure(&mut command);
        ServeProcess::start(command, &["s3://charts/pre/org/a"], ctx.dir())
    };
    assert!(index(&format!("{}/index.yaml", single.url)).contains("version: 1.0.0"));
    drop(single);
    let listed = index(&format!("{}/org/a/index.yaml", second.url));
    assert!(listed.contains("version: 1.0.0"), "{listed}");
    assert!(!index(&format!("{}/org/b/index.yaml", second.url)).contains("web"));

    assert_eq!(upload_to(&first, "2.0.0"), 201);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let listed = index(&format!("{}/org/a/index.yaml", second.url));
        if listed.contains("version: 2.0.0") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the second replica never saw 2.0.0: {listed}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn the_context_path_comes_before_the_repository() {
    let ctx = TestContext::new();
    let storage = ctx.path("store");
    let server = ServeProcess::start_on(&ctx, &storage, &["--depth", "1", "--context-path", "/cm"]);
    let url = server.url.trim_end_matches("/cm");
    assert_eq!(
        upload(
            &format!("{url}/cm/api/team/charts"),
            chart_package("app", "1.0.0")
        )
        .0,
        201
    );
    assert!(index(&format!("{url}/cm/team/index.yaml")).contains("  app:\n"));
    assert_eq!(get(&format!("{url}/team/index.yaml")).0, 404);
    assert_eq!(get(&format!("{url}/cm/health")).0, 200);
}

/// With credentials, OCI clients get tokens scoped to `ORG/REPO/NAME`: helm logs in and
/// pushes into one repository, and a token for it grants nothing in another.
#[test]
fn registry_tokens_are_scoped_to_the_repository_path() {
    const NAME: &str = "registry_tokens_are_scoped_to_the_repository_path";
    let ctx = TestContext::new();
    let htpasswd = ctx.path("htpasswd");
    write_htpasswd(&htpasswd, &[(USER, PASSWORD)]);
    let server = ServeProcess::start_on(
        &ctx,
        &ctx.path("store"),
        &[
            "--depth",
            "2",
            "--basic-auth-file",
            htpasswd.to_str().unwrap(),
        ],
    );
    let url = &server.url;
    let host = server.host();
    let refused = client()
        .post(format!("{url}/v2/org/a/web/blobs/uploads/"))
        .send()
        .unwrap();
    assert_eq!(refused.status(), 401);
    assert_eq!(
        refused.headers()["www-authenticate"],
        format!(
            "Bearer realm=\"{url}/v2/token\",service=\"{host}\",scope=\"repository:org/a/web:pull,push\""
        )
    );
    let token: serde_json::Value = client()
        .get(format!(
            "{url}/v2/token?service={host}&scope=repository:org/a/web:pull,push"
        ))
        .basic_auth(USER, Some(PASSWORD))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let token = token["token"].as_str().unwrap().to_owned();
    let started = client()
        .post(format!("{url}/v2/org/a/web/blobs/uploads/"))
        .bearer_auth(&token)
        .send()
        .unwrap();
    assert_eq!(started.status(), 202);
    let elsewhere = client()
        .post(format!("{url}/v2/org/b/web/blobs/uploads/"))
        .bearer_auth(&token)
        .send()
        .unwrap();
    assert_eq!(elsewhere.status(), 401);

    let Some(helm) = peers::helm_or_skip(NAME) else {
        return;
    };
    let helm = || ctx.hermetic(&helm);
    let pkg = configmap_package(&ctx, &mut helm(), "web", "0.1.0");
    login(&mut helm(), &host, USER, PASSWORD);
    run_ok(
        helm()
            .arg("push")
            .arg(&pkg)
            .args([&format!("oci://{host}/org/a"), "--plain-http"]),
    );
    // Reads need no credentials (no --auth-reads).
    assert!(index(&format!("{url}/org/a/index.yaml")).contains("  web:\n"));
}
