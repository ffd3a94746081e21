//! chartkit run as ChartMuseum: the binary started through a `chartmuseum` link (or as
//! `chartkit serve --chartmuseum`) with ChartMuseum's flags, environment and config file,
//! used as ChartMuseum's documentation shows (uploads with curl's `--data-binary`, helm
//! with credentials), and the settings it cannot honour refused.

use std::path::Path;
use std::process::Command;

use chartkit_tests::TestContext;
use chartkit_tests::chartmuseum::command as chartmuseum;
use chartkit_tests::server::client;
use chartkit_tests::server::{ServeProcess, chart_package};

const USER: &str = "chartuser";
const PASSWORD: &str = "p4ss word:with colon";

/// The ChartMuseum Helm chart's usual settings: local storage and basic auth from the
/// environment, the API on.
fn helm_chart_environment(command: &mut Command, storage: &Path) {
    command
        .env("STORAGE", "local")
        .env("STORAGE_LOCAL_ROOTDIR", storage)
        .env("BASIC_AUTH_USER", USER)
        .env("BASIC_AUTH_PASS", PASSWORD)
        .env("DISABLE_API", "false")
        .env("DISABLE_METRICS", "false")
        .env("DEPTH", "0");
}

fn post(url: &str, body: Vec<u8>) -> reqwest::blocking::Response {
    client()
        .post(url)
        .basic_auth(USER, Some(PASSWORD))
        .body(body)
        .send()
        .expect("upload")
}

fn run(command: &mut Command) -> std::process::Output {
    command.output().expect("run command")
}

#[test]
fn the_helm_charts_environment_serves_helm_with_basic_auth() {
    let ctx = TestContext::new();
    let storage = ctx.path("storage/charts");
    let mut command = chartmuseum(&ctx);
    helm_chart_environment(&mut command, &storage);
    let server = ServeProcess::spawn(command, ctx.dir());
    // ChartMuseum creates its storage directory.
    assert!(storage.is_dir(), "{} was not created", storage.display());

    // `curl --data-binary "@mychart-0.1.0.tgz" http://HOST/api/charts`, with credentials.
    let package = chart_package("mychart", "0.1.0");
    let response = post(&format!("{}/api/charts", server.url), package.clone());
    assert_eq!(response.status(), 201);
    assert_eq!(response.text().unwrap(), r#"{"saved":true}"#);
    assert!(storage.join("mychart-0.1.0.tgz").is_file());

    // Reads need the password too (no --auth-anonymous-get).
    let anonymous = client()
        .get(format!("{}/index.yaml", server.url))
        .send()
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    let wrong = client()
        .get(format!("{}/index.yaml", server.url))
        .basic_auth(USER, Some("nope"))
        .send()
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let index = client()
        .get(format!("{}/index.yaml", server.url))
        .basic_auth(USER, Some(PASSWORD))
        .send()
        .unwrap();
    assert_eq!(index.status(), 200);
    assert!(index.text().unwrap().contains("mychart"));

    let Some(_) = chartkit_tests::peers::helm_or_skip("chartmuseum_personality helm") else {
        return;
    };
    let mut helm = ctx.helm().unwrap();
    let added = run(helm.args([
        "repo",
        "add",
        "cm",
        &server.url,
        "--username",
        USER,
        "--password",
        PASSWORD,
    ]));
    assert!(added.status.success(), "{}", chartkit_tests::stderr(&added));
    let out = ctx.path("pulled");
    std::fs::create_dir_all(&out).unwrap();
    let pulled = run(ctx.helm().unwrap().args([
        "pull",
        "cm/mychart",
        "--version",
        "0.1.0",
        "-d",
        out.to_str().unwrap(),
    ]));
    assert!(
        pulled.status.success(),
        "{}",
        chartkit_tests::stderr(&pulled)
    );
    assert_eq!(
        std::fs::read(out.join("mychart-0.1.0.tgz")).unwrap(),
        package
    );
}

#[test]
fn anonymous_get_opens_reads_but_not_writes() {
    let ctx = TestContext::new();
    let mut command = chartmuseum(&ctx);
    helm_chart_environment(&mut command, &ctx.path("storage"));
    command.arg("--auth-anonymous-get");
    let server = ServeProcess::spawn(command, ctx.dir());
    let index = client()
        .get(format!("{}/index.yaml", server.url))
        .send()
        .unwrap();
    assert_eq!(index.status(), 200);
    let upload = client()
        .post(format!("{}/api/charts", server.url))
        .body(chart_package("a", "1.0.0"))
        .send()
        .unwrap();
    assert_eq!(upload.status(), 401);
}

#[test]
fn settings_chartkit_cannot_honour_are_refused_by_name() {
    let ctx = TestContext::new();
    let storage = ctx.path("storage");
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: [Case; 6] = [
        (
            &["--no-such-flag"],
            &[],
            "Error: unknown ChartMuseum flag `--no-such-flag`",
        ),
        (
            &[],
            &[("WEB_TEMPLATE_PATH", "/srv/web")],
            "Error: WEB_TEMPLATE_PATH = `/srv/web` is not supported",
        ),
        (
            &["--cache", "redis"],
            &[],
            "Error: --cache = `redis` is not supported",
        ),
        (
            &[],
            &[("STORAGE", "oracle"), ("STORAGE_ORACLE_BUCKET", "b")],
            "Error: STORAGE_ORACLE_BUCKET = `b` is not supported",
        ),
        (
            &[],
            &[("STORAGE", "")],
            "Error: missing required setting --storage (STORAGE)",
        ),
        (
            &[],
            &[("DISABLE_API", "maybe")],
            "Error: DISABLE_API is `maybe`, not true or false",
        ),
    ];
    for (args, env, expected) in cases {
        let mut command = chartmuseum(&ctx);
        command
            .env("STORAGE", "local")
            .env("STORAGE_LOCAL_ROOTDIR", &storage)
            .envs(env.iter().copied())
            .args(args);
        let output = run(&mut command);
        let stderr = chartkit_tests::stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{args:?} {env:?}: {stderr}");
        assert!(stderr.starts_with(expected), "{args:?} {env:?}: {stderr}");
    }
    // Nothing was served, so nothing was created either.
    assert!(!storage.exists());
}

#[test]
fn chartkit_serve_dash_dash_chartmuseum_reads_a_config_file() {
    let ctx = TestContext::new();
    let storage = ctx.path("from-config");
    let config = ctx.path("chartmuseum.yaml");
    std::fs::write(
        &config,
        format!(
            "storage:\n  backend: local\n  local:\n    rootdir: {}\nlisten:\n  host: 127.0.0.1\nport: 0\ndisableapi: true\n",
            storage.display()
        ),
    )
    .unwrap();
    let mut command = ctx.chartkit();
    command.args([
        "serve",
        "--chartmuseum",
        "--config",
        config.to_str().unwrap(),
    ]);
    let server = ServeProcess::spawn(command, ctx.dir());
    assert!(storage.is_dir());
    // --disable-api: ChartMuseum's /api routes are not there; the repository is.
    let api = client()
        .get(format!("{}/api/charts", server.url))
        .send()
        .unwrap();
    assert_eq!(api.status(), 404);
    let upload = client()
        .post(format!("{}/api/charts", server.url))
        .body(chart_package("a", "1.0.0"))
        .send()
        .unwrap();
    assert_eq!(upload.status(), 404);
    let index = client()
        .get(format!("{}/index.yaml", server.url))
        .send()
        .unwrap();
    assert_eq!(index.status(), 200);

    // `--chartmuseum` anywhere but first would mix the two command lines.
    let output = run(ctx.chartkit().args(["serve", ".", "--chartmuseum"]));
    assert_eq!(output.status.code(), Some(1));
    assert!(
        chartkit_tests::stderr(&output).contains("--chartmuseum must come right after `serve`")
    );
}

#[test]
fn force_overwrites_a_version_unless_disabled() {
    let ctx = TestContext::new();
    let mut command = chartmuseum(&ctx);
    helm_chart_environment(&mut command, &ctx.path("storage"));
    let server = ServeProcess::spawn(command, ctx.dir());
    let api = format!("{}/api/charts", server.url);
    let first = chart_package("forced", "1.0.0");
    assert_eq!(post(&api, first).status(), 201);
    // Different bytes for the same version.
    let mut second = chart_package("forced", "1.0.0");
    second.extend_from_slice(&[0; 512]);
    assert_eq!(post(&api, second.clone()).status(), 409);
    let forced = post(&format!("{api}?force"), second.clone());
    assert_eq!(forced.status(), 201);
    let stored = std::fs::read(ctx.path("storage/forced-1.0.0.tgz")).unwrap();
    assert_eq!(stored, second);
    drop(server);

    let mut command = chartmuseum(&ctx);
    helm_chart_environment(&mut command, &ctx.path("storage"));
    command.env("DISABLE_FORCE_OVERWRITE", "true");
    let server = ServeProcess::spawn(command, ctx.dir());
    let api = format!("{}/api/charts", server.url);
    let third = chart_package("forced", "1.0.0");
    assert_eq!(post(&format!("{api}?force"), third).status(), 409);
    assert_eq!(
        std::fs::read(ctx.path("storage/forced-1.0.0.tgz")).unwrap(),
        second
    );
}

#[test]
fn delete_resolves_the_file_as_chartmuseum_does() {
    let ctx = TestContext::new();
    let mut command = chartmuseum(&ctx);
    helm_chart_environment(&mut command, &ctx.path("storage"));
    let server = ServeProcess::spawn(command, ctx.dir());
    let api = format!("{}/api/charts", server.url);
    assert_eq!(
        post(&api, chart_package("a", "0.1.0-SNAPSHOT-1")).status(),
        201
    );
    assert_eq!(post(&api, chart_package("b", "1.0.0")).status(), 201);
    let delete = |path: &str| {
        client()
            .delete(format!("{api}/{path}"))
            .basic_auth(USER, Some(PASSWORD))
            .send()
            .unwrap()
    };
    // a-0.1.0-SNAPSHOT-1.tgz split at its last dash.
    let response = delete("a-0.1.0-SNAPSHOT/1");
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().unwrap(), r#"{"deleted":true}"#);
    assert!(!ctx.path("storage/a-0.1.0-SNAPSHOT-1.tgz").exists());
    // The name and version as the index has them.
    assert_eq!(delete("b/1.0.0").status(), 200);
    assert_eq!(delete("b/1.0.0").status(), 404);
}

fn get(url: &str) -> reqwest::blocking::Response {
    client()
        .get(url)
        .basic_auth(USER, Some(PASSWORD))
        .send()
        .expect("GET")
}

#[test]
fn paging_info_request_ids_templates_and_values() {
    let ctx = TestContext::new();
    let mut command = chartmuseum(&ctx);
    helm_chart_environment(&mut command, &ctx.path("storage"));
    let server = ServeProcess::spawn(command, ctx.dir());
    let api = format!("{}/api/charts", server.url);
    for name in ["c", "a", "d", "b"] {
        assert_eq!(post(&api, chart_package(name, "1.0.0")).status(), 201);
    }
    let names = |query: &str| -> Vec<String> {
        let response = get(&format!("{api}?{query}"));
        assert_eq!(response.status(), 200, "{query}");
        let body: serde_json::Value = response.json().unwrap();
        body.as_object().unwrap().keys().cloned().collect()
    };
    assert_eq!(names("offset=1&limit=2"), ["b", "c"]);
    assert_eq!(names("limit=3"), ["a", "b", "c"]);
    assert_eq!(names("offset=3&limit=10"), ["d"]);
    assert_eq!(names("offset=0"), ["a", "b", "c", "d"]);
    // ChartMuseum's arithmetic: an offset with no limit keeps nothing.
    assert!(names("offset=1").is_empty());
    for (query, message) in [
        (
            "offset=-1&limit=5",
            "offset is not a valid non-negative integer",
        ),
        ("offset=x", "offset is not a valid non-negative integer"),
        ("limit=0", "limit is not a valid positive integer"),
        ("limit=", "limit is not a valid positive integer"),
    ] {
        let response = get(&format!("{api}?{query}"));
        assert_eq!(response.status(), 400, "{query}");
        let body: serde_json::Value = response.json().unwrap();
        assert_eq!(body["error"], message, "{query}");
    }

    // /info answers without credentials, as ChartMuseum's does.
    let info = client().get(format!("{}/info", server.url)).send().unwrap();
    assert_eq!(info.status(), 200);
    let body: serde_json::Value = info.json().unwrap();
    assert!(body["version"].is_string(), "{body}");

    // Every answer carries an X-Request-Id: the client's, or a new one.
    let fresh = get(&format!("{}/index.yaml", server.url));
    let id = fresh.headers()["x-request-id"].to_str().unwrap().to_owned();
    assert_eq!(id.len(), 36, "{id}");
    let denied = client()
        .get(format!("{}/index.yaml", server.url))
        .send()
        .unwrap();
    assert_eq!(denied.status(), 401);
    assert!(denied.headers().contains_key("x-request-id"));
    let echoed = client()
        .get(format!("{}/health", server.url))
        .header("X-Request-Id", "trace-123")
        .send()
        .unwrap();
    assert_eq!(echoed.headers()["x-request-id"], "trace-123");

    let templates = get(&format!("{api}/a/1.0.0/templates"));
    assert_eq!(templates.status(), 200);
    let body: serde_json::Value = templates.json().unwrap();
    assert_eq!(body["templates"][0]["name"], "templates/configmap.yaml");
    let data = body["templates"][0]["data"].as_str().unwrap();
    assert!(!data.is_empty());
    assert_eq!(body["values"], serde_json::json!({"a": 1}));
    let values = get(&format!("{api}/a/latest/values"));
    assert_eq!(values.status(), 200);
    assert_eq!(values.headers()["content-type"], "application/yaml");
    assert_eq!(values.text().unwrap(), "a: 1\n");
    assert_eq!(get(&format!("{api}/a/9.9.9/values")).status(), 404);
    assert_eq!(get(&format!("{api}/zz/1.0.0/templates")).status(), 404);
}

#[test]
fn context_path_puts_every_route_under_it() {
    let ctx = TestContext::new();
    let mut command = chartmuseum(&ctx);
    command.args([
        "--storage=local",
        "--storage-local-rootdir=storage",
        "--context-path",
        "/helm/charts/",
    ]);
    let server = ServeProcess::spawn(command, ctx.dir());
    // The banner names the repository with its prefix.
    assert!(server.url.ends_with("/helm/charts"), "{}", server.url);
    let root = server.url.trim_end_matches("/helm/charts").to_owned();
    let upload = client()
        .post(format!("{}/api/charts", server.url))
        .body(chart_package("prefixed", "1.0.0"))
        .send()
        .unwrap();
    assert_eq!(upload.status(), 201);
    let index = client()
        .get(format!("{}/index.yaml", server.url))
        .send()
        .unwrap();
    assert_eq!(index.status(), 200);
    let index = index.text().unwrap();
    assert!(index.contains("charts/prefixed-1.0.0.tgz"), "{index}");
    let package = client()
        .get(format!("{}/charts/prefixed-1.0.0.tgz", server.url))
        .send()
        .unwrap();
    assert_eq!(package.status(), 200);
    assert_eq!(
        package.bytes().unwrap().to_vec(),
        chart_package("prefixed", "1.0.0")
    );
    for outside in ["/index.yaml", "/api/charts", "/health"] {
        let response = client().get(format!("{root}{outside}")).send().unwrap();
        assert_eq!(response.status(), 404, "{outside}");
    }
    let health = client()
        .get(format!("{}/health", server.url))
        .send()
        .unwrap();
    assert_eq!(health.status(), 200);

    let Some(_) = chartkit_tests::peers::helm_or_skip("chartmuseum_personality context path")
    else {
        return;
    };
    let added = run(ctx
        .helm()
        .unwrap()
        .args(["repo", "add", "prefixed", &server.url]));
    assert!(added.status.success(), "{}", chartkit_tests::stderr(&added));
    let out = ctx.path("pulled");
    std::fs::create_dir_all(&out).unwrap();
    let pulled =
        run(ctx
            .helm()
            .unwrap()
            .args(["pull", "prefixed/prefixed", "-d", out.to_str().unwrap()]));
    assert!(
        pulled.status.success(),
        "{}",
        chartkit_tests::stderr(&pulled)
    );
    assert!(out.join("prefixed-1.0.0.tgz").is_file());
}

#[test]
fn amazon_storage_from_the_helm_charts_environment() {
    let Some(s3) = chartkit_tests::server::S3Server::start_or_skip("chartmuseum amazon storage")
    else {
        return;
    };
    s3.create_bucket("museum");
    let ctx = TestContext::new();
    let mut command = chartmuseum(&ctx);
    // As the ChartMuseum chart passes them: the bucket, prefix and endpoint as ChartMuseum's
    // settings, the credentials as AWS's own variables.
    command
        .env("STORAGE", "amazon")
        .env("STORAGE_AMAZON_BUCKET", "museum")
        .env("STORAGE_AMAZON_PREFIX", "team/charts")
        .env("STORAGE_AMAZON_ENDPOINT", &s3.endpoint)
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .env("BASIC_AUTH_USER", USER)
        .env("BASIC_AUTH_PASS", PASSWORD);
    let server = ServeProcess::spawn(command, ctx.dir());
    let package = chart_package("inbucket", "1.0.0");
    assert_eq!(
        post(&format!("{}/api/charts", server.url), package.clone()).status(),
        201
    );
    // The bucket and prefix ChartMuseum would have used.
    assert!(
        server
            .startup
            .iter()
            .any(|l| l.contains("s3://museum/team/charts")),
        "{:?}",
        server.startup
    );
    let pulled = get(&format!("{}/charts/inbucket-1.0.0.tgz", server.url));
    assert_eq!(pulled.status(), 200);
    assert_eq!(pulled.bytes().unwrap().to_vec(), package);
}

/// ChartMuseum's multi-tenant server behind a context path with a chart URL: its routes
/// answer under the prefix, the index's chart URLs are CHART_URL + the context path + the
/// repository, and the registry's catalog names the charts of every repository, those
/// in the storage before the start as well as those uploaded since.
#[test]
fn depth_with_a_context_path_and_a_chart_url() {
    let ctx = TestContext::new();
    let before = ctx.path("storage/org0/repo0");
    std::fs::create_dir_all(&before).unwrap();
    std::fs::write(before.join("old-1.0.0.tgz"), chart_package("old", "1.0.0")).unwrap();
    let mut command = chartmuseum(&ctx);
    command
        .env("STORAGE", "local")
        .env("STORAGE_LOCAL_ROOTDIR", "storage")
        .env("DEPTH", "2")
        .env("CHART_URL", "https://charts.example.com")
        .env("CONTEXT_PATH", "my/path/");
    let server = ServeProcess::spawn(command, ctx.dir());
    assert!(server.url.ends_with("/my/path"), "{}", server.url);
    for path in ["", "/health"] {
        let response = get(&format!("{}{path}", server.url));
        assert_eq!(response.status(), 200, "{path}");
    }
    let upload = post(
        &format!("{}/api/org1/repo1/charts", server.url),
        chart_package("web", "1.0.0"),
    );
    assert_eq!(upload.status(), 201);
    let index = get(&format!("{}/org1/repo1/index.yaml", server.url))
        .text()
        .unwrap();
    assert!(
        index.contains("- https://charts.example.com/my/path/org1/repo1/charts/web-1.0.0.tgz\n"),
        "{index}"
    );
    let catalog = get(&format!("{}/v2/_catalog", server.url));
    assert_eq!(catalog.status(), 200);
    assert_eq!(
        catalog.text().unwrap(),
        r#"{"repositories":["org0/repo0/old","org1/repo1/web"]}"#
    );
}
