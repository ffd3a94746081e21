//! `chartkit serve` on Google Cloud Storage and Azure Blob Storage, against their
//! emulators (fake-gcs-server, Azurite): uploads, the index, helm 4 pulling, deletes, and a
//! restart that finds every chart again; then the same bucket served as ChartMuseum's
//! `--storage google` / `--storage microsoft` configure it.

use std::process::Command;

use chartkit_tests::TestContext;
use chartkit_tests::emulators::{Azurite, FakeGcs};
use chartkit_tests::server::client;
use chartkit_tests::server::{ServeProcess, chart_package, index_yaml, upload};

/// helm 4 adds the repository and pulls `web` at `version`; the bytes must be the upload's.
fn helm_pulls(ctx: &TestContext, url: &str, version: &str, expected: &[u8]) {
    let Some(_) = chartkit_tests::peers::helm_or_skip("serve_cloud_storage helm pull") else {
        return;
    };
    let added = ctx
        .helm()
        .unwrap()
        .args(["repo", "add", "--force-update", "cloud", url])
        .output()
        .unwrap();
    assert!(added.status.success(), "{}", chartkit_tests::stderr(&added));
    let out = ctx.path(&format!("pulled-{version}"));
    std::fs::create_dir_all(&out).unwrap();
    let pulled = ctx
        .helm()
        .unwrap()
        .args(["pull", "cloud/web", "--version", version, "-d"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        pulled.status.success(),
        "{}",
        chartkit_tests::stderr(&pulled)
    );
    assert_eq!(
        std::fs::read(out.join(format!("web-{version}.tgz"))).unwrap(),
        expected
    );
}

/// Everything a repository does, on `location` with `configure`'s environment; then a
/// restart as ChartMuseum (`chartmuseum_env`) on the same storage.
fn exercise(
    ctx: &TestContext,
    location: &str,
    configure: &dyn Fn(&mut Command),
    chartmuseum_env: &[(&str, &str)],
) {
    let mut command = ctx.chartkit();
    configure(&mut command);
    let server = ServeProcess::start(command, &[location], ctx.dir());
    assert!(
        server.startup[0].ends_with(&format!("from {location}")),
        "{:?}",
        server.startup
    );

    let first = chart_package("web", "1.0.0");
    let response = upload(&server.url, first.clone());
    assert_eq!(response.status(), 201, "{}", server.log());
    // The create is exclusive at the service (a precondition), so a second upload of the
    // version is refused rather than replacing it.
    let again = upload(&server.url, chart_package("web", "1.0.0"));
    assert_eq!(again.status(), 409);
    assert!(index_yaml(&server.url).contains("version: 1.0.0"));
    helm_pulls(ctx, &server.url, "1.0.0", &first);

    let deleted = client()
        .delete(format!("{}/api/charts/web/1.0.0", server.url))
        .send()
        .unwrap();
    assert_eq!(deleted.status(), 200, "{}", server.log());
    assert!(!index_yaml(&server.url).contains("version: 1.0.0"));
    let gone = client()
        .get(format!("{}/charts/web-1.0.0.tgz", server.url))
        .send()
        .unwrap();
    assert_eq!(gone.status(), 404);

    let second = chart_package("web", "2.0.0");
    assert_eq!(upload(&server.url, second.clone()).status(), 201);
    assert_eq!(
        upload(&server.url, chart_package("api", "0.1.0")).status(),
        201
    );
    assert!(server.terminate().success());

    // A new process finds what the storage holds: the charts live there, not in memory.
    let mut command = ctx.chartkit();
    configure(&mut command);
    let server = ServeProcess::start(command, &[location], ctx.dir());
    assert!(
        server.startup[0].starts_with("Serving 2 chart versions"),
        "{:?}",
        server.startup
    );
    let index = index_yaml(&server.url);
    assert!(index.contains("version: 2.0.0") && index.contains("version: 0.1.0"));
    assert!(!index.contains("version: 1.0.0"));
    helm_pulls(ctx, &server.url, "2.0.0", &second);
    drop(server);

    // ChartMuseum's settings for the same storage start the same repository.
    let mut command = chartkit_tests::chartmuseum::command(ctx);
    configure(&mut command);
    command.envs(chartmuseum_env.iter().copied());
    let server = ServeProcess::spawn(command, ctx.dir());
    let index = client()
        .get(format!("{}/index.yaml", server.url))
        .send()
        .unwrap()
        .text()
        .unwrap();
    assert!(index.contains("version: 2.0.0"), "{index}");
    let third = chart_package("web", "3.0.0");
    assert_eq!(upload(&server.url, third).status(), 201, "{}", server.log());
}

#[test]
fn google_cloud_storage_through_the_json_api_emulator() {
    let Some(gcs) = FakeGcs::start_or_skip("google_cloud_storage") else {
        return;
    };
    gcs.create_bucket("charts");
    let ctx = TestContext::new();
    exercise(
        &ctx,
        "gs://charts/team/a",
        &|command| gcs.configure(command),
        &[
            ("STORAGE", "google"),
            ("STORAGE_GOOGLE_BUCKET", "charts"),
            ("STORAGE_GOOGLE_PREFIX", "team/a"),
        ],
    );
    // Objects are named under the prefix, one per package.
    let mut names = gcs.object_names("charts");
    names.sort();
    assert_eq!(
        names,
        [
            "team/a/api-0.1.0.tgz",
            "team/a/web-2.0.0.tgz",
            "team/a/web-3.0.0.tgz"
        ]
    );
}

#[test]
fn azure_blob_storage_on_azurite() {
    let Some(azurite) = Azurite::start_or_skip("azure_blob_storage") else {
        return;
    };
    azurite.create_container("charts");
    let ctx = TestContext::new();
    exercise(
        &ctx,
        "az://charts/team",
        &|command| azurite.configure(command),
        &[
            ("STORAGE", "microsoft"),
            ("STORAGE_MICROSOFT_CONTAINER", "charts"),
            ("STORAGE_MICROSOFT_PREFIX", "team"),
        ],
    );
}

#[test]
fn a_missing_bucket_is_named_at_start() {
    let Some(gcs) = FakeGcs::start_or_skip("a_missing_bucket_is_named_at_start") else {
        return;
    };
    let ctx = TestContext::new();
    let mut command = ctx.chartkit();
    gcs.configure(&mut command);
    let output = command
        .args(["serve", "gs://nowhere", "--addr", "127.0.0.1:0"])
        .output()
        .unwrap();
    let stderr = chartkit_tests::stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("Error: listing in gs://nowhere: there is no bucket `nowhere`\n"),
        "{stderr}"
    );
}
