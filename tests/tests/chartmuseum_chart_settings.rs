//! The ChartMuseum Helm chart's usual settings start chartkit, run as `chartmuseum`,
//! unchanged. The chart (chartmuseum/charts `src/chartmuseum`, chart 3.10.4 for ChartMuseum
//! 0.16.3) configures the server with environment variables only: every `env.open` value
//! that is not empty (Sprig's `empty`, so `false` and `0` are left out), every `env.secret`
//! value through the chart's Secret (or `env.existingSecret`), and the arguments
//! `--port=8080` plus `--storage-local-rootdir=PATH` when `STORAGE` is `local`.
//!
//! The one change here: `--port=0` with `LISTEN_HOST=127.0.0.1`, since a test's server binds
//! an ephemeral port of 127.0.0.1.

use std::path::Path;
use std::process::Command;

use chartkit_tests::TestContext;
use chartkit_tests::server::client;
use chartkit_tests::server::{S3Server, ServeProcess, chart_package};

const USER: &str = "museum";
const PASSWORD: &str = "s3cret-from-the-chart";

/// What the chart's deployment renders from its default values.yaml: `env.open`'s
/// non-empty entries (among them `LOG_JSON: true` and `DISABLE_API: true`).
const DEFAULT_ENV_OPEN: &[(&str, &str)] = &[
    ("STORAGE", "local"),
    ("CHART_POST_FORM_FIELD_NAME", "chart"),
    ("PROV_POST_FORM_FIELD_NAME", "prov"),
    ("LOG_JSON", "true"),
    ("DISABLE_API", "true"),
];

/// The usual changes to those values to serve uploads: `DISABLE_API: false` and
/// `LOG_JSON: false` (both then left out as empty), basic auth in `env.secret`.
fn usual_env(command: &mut Command) {
    command
        .env("CHART_POST_FORM_FIELD_NAME", "chart")
        .env("PROV_POST_FORM_FIELD_NAME", "prov")
        .env("BASIC_AUTH_USER", USER)
        .env("BASIC_AUTH_PASS", PASSWORD);
}

/// The chart's arguments for local storage (`persistence.path`, `/storage` by default).
fn local_args(command: &mut Command, storage: &Path) {
    command
        .env("STORAGE", "local")
        .arg("--port=0")
        .arg(format!("--storage-local-rootdir={}", storage.display()));
}

fn get(url: &str, auth: bool) -> reqwest::blocking::Response {
    let request = client().get(url);
    let request = if auth {
        request.basic_auth(USER, Some(PASSWORD))
    } else {
        request
    };
    request.send().expect("GET")
}

/// Uploads as ChartMuseum's documentation shows (`curl -F chart=@NAME-VERSION.tgz`): a
/// multipart form with the package in the `chart` field (CHART_POST_FORM_FIELD_NAME).
fn upload_form(url: &str, file_name: &str, package: Vec<u8>) -> reqwest::blocking::Response {
    let form = reqwest::blocking::multipart::Form::new().part(
        "chart",
        reqwest::blocking::multipart::Part::bytes(package).file_name(file_name.to_owned()),
    );
    client()
        .post(format!("{url}/api/charts"))
        .basic_auth(USER, Some(PASSWORD))
        .multipart(form)
        .send()
        .expect("upload")
}

fn helm_pulls(ctx: &TestContext, repo_url: &str, name: &str, version: &str, expected: &[u8]) {
    let Some(_) = chartkit_tests::peers::helm_or_skip("chartmuseum_chart_settings helm pull")
    else {
        return;
    };
    let added = ctx
        .helm()
        .unwrap()
        .args(["repo", "add", "--force-update", "museum", repo_url])
        .args(["--username", USER, "--password", PASSWORD])
        .output()
        .unwrap();
    assert!(added.status.success(), "{}", chartkit_tests::stderr(&added));
    let out = ctx.path("pulled");
    std::fs::create_dir_all(&out).unwrap();
    let pulled = ctx
        .helm()
        .unwrap()
        .args([
            "pull",
            &format!("museum/{name}"),
            "--version",
            version,
            "-d",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        pulled.status.success(),
        "{}",
        chartkit_tests::stderr(&pulled)
    );
    assert_eq!(
        std::fs::read(out.join(format!("{name}-{version}.tgz"))).unwrap(),
        expected
    );
}

#[test]
fn the_charts_default_values_start_it() {
    let ctx = TestContext::new();
    let storage = ctx.path("storage");
    let mut command = chartkit_tests::chartmuseum::command(&ctx);
    command.envs(DEFAULT_ENV_OPEN.iter().copied());
    local_args(&mut command, &storage);
    let server = ServeProcess::spawn(command, ctx.dir());
    // The probes' path answers; the API is off, as DISABLE_API asks; and the log is
    // ChartMuseum's JSON, as LOG_JSON asks.
    assert_eq!(get(&format!("{}/health", server.url), false).status(), 200);
    assert!(storage.is_dir());
    assert_eq!(
        get(&format!("{}/api/charts", server.url), false).status(),
        404
    );
    assert_eq!(
        get(&format!("{}/index.yaml", server.url), false).status(),
        200
    );
}

#[test]
fn local_storage_with_basic_auth_from_the_charts_secret() {
    let ctx = TestContext::new();
    let storage = ctx.path("storage");
    let mut command = chartkit_tests::chartmuseum::command(&ctx);
    usual_env(&mut command);
    local_args(&mut command, &storage);
    let server = ServeProcess::spawn(command, ctx.dir());
    assert!(storage.is_dir(), "the storage directory is created");
    // Kubernetes' probes carry no credentials.
    assert_eq!(get(&format!("{}/health", server.url), false).status(), 200);

    let package = chart_package("museum-app", "1.2.3");
    let response = upload_form(&server.url, "museum-app-1.2.3.tgz", package.clone());
    assert_eq!(response.status(), 201, "{}", server.log());
    assert!(storage.join("museum-app-1.2.3.tgz").is_file());
    let anonymous = client()
        .post(format!("{}/api/charts", server.url))
        .body(chart_package("other", "1.0.0"))
        .send()
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    assert_eq!(
        get(&format!("{}/index.yaml", server.url), false).status(),
        401
    );
    let index = get(&format!("{}/index.yaml", server.url), true);
    assert_eq!(index.status(), 200);
    assert!(index.text().unwrap().contains("museum-app"));
    let listed = get(&format!("{}/api/charts/museum-app", server.url), true);
    assert_eq!(listed.status(), 200);
    helm_pulls(&ctx, &server.url, "museum-app", "1.2.3", &package);
}

#[test]
fn amazon_storage_from_the_charts_environment() {
    let Some(s3) = S3Server::start_or_skip("amazon_storage_from_the_charts_environment") else {
        return;
    };
    s3.create_bucket("museum");
    let ctx = TestContext::new();
    // env.open's amazon settings, the keys from env.existingSecret; no rootdir argument.
    let command = || {
        let mut command = chartkit_tests::chartmuseum::command(&ctx);
        usual_env(&mut command);
        command
            .env("STORAGE", "amazon")
            .env("STORAGE_AMAZON_BUCKET", "museum")
            .env("STORAGE_AMAZON_PREFIX", "charts")
            .env("STORAGE_AMAZON_REGION", "us-east-1")
            .env("STORAGE_AMAZON_ENDPOINT", &s3.endpoint)
            .env("AWS_ACCESS_KEY_ID", "chart-key")
            .env("AWS_SECRET_ACCESS_KEY", "chart-secret")
            .arg("--port=0");
        command
    };
    let server = ServeProcess::spawn(command(), ctx.dir());
    let package = chart_package("museum-app", "2.0.0");
    let response = upload_form(&server.url, "museum-app-2.0.0.tgz", package.clone());
    assert_eq!(response.status(), 201, "{}", server.log());
    let index = get(&format!("{}/index.yaml", server.url), true);
    assert!(index.text().unwrap().contains("version: 2.0.0"));
    helm_pulls(&ctx, &server.url, "museum-app", "2.0.0", &package);
    assert!(server.terminate().success());

    // The package is in the bucket, not in the process: a new one serves it.
    let server = ServeProcess::spawn(command(), ctx.dir());
    let index = get(&format!("{}/index.yaml", server.url), true);
    assert!(index.text().unwrap().contains("version: 2.0.0"));
}

/// `env.open.DEPTH: 1`: one repository per organisation, `/ORG/index.yaml` and
/// `/api/ORG/charts`.
fn depth_one(ctx: &TestContext, storage: &Path) -> Command {
    let mut command = chartkit_tests::chartmuseum::command(ctx);
    usual_env(&mut command);
    command.env("DEPTH", "1");
    local_args(&mut command, storage);
    command
}

#[test]
fn depth_one_serves_a_repository_per_organisation() {
    let ctx = TestContext::new();
    let storage = ctx.path("storage");
    let server = ServeProcess::spawn(depth_one(&ctx, &storage), ctx.dir());
    let package = chart_package("museum-app", "3.0.0");
    let response = client()
        .post(format!("{}/api/team-a/charts", server.url))
        .basic_auth(USER, Some(PASSWORD))
        .body(package.clone())
        .send()
        .unwrap();
    assert_eq!(response.status(), 201, "{}", server.log());
    assert!(storage.join("team-a/museum-app-3.0.0.tgz").is_file());
    let index = get(&format!("{}/team-a/index.yaml", server.url), true);
    assert!(index.text().unwrap().contains("version: 3.0.0"));
    let other = get(&format!("{}/team-b/index.yaml", server.url), true);
    assert!(!other.text().unwrap().contains("museum-app"));
    helm_pulls(
        &ctx,
        &format!("{}/team-a", server.url),
        "museum-app",
        "3.0.0",
        &package,
    );
}
