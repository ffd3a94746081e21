//! `chartkit serve` as an OCI registry: helm 4.1.4, chartkit's own client and skopeo
//! against it; one store for both faces (a pushed chart is in index.yaml, an uploaded one
//! can be pulled with Helm's manifest); the distribution spec's error cases, each leaving
//! nothing behind.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use chartkit_tests::charts::{configmap_chart, configmap_package};
use chartkit_tests::registry::login;
use chartkit_tests::sandbox::{SandboxProcess, run_ok};
use chartkit_tests::server::client;
use chartkit_tests::server::{ServeProcess, chart_package, index_yaml, write_htpasswd};
use chartkit_tests::{TestContext, peers, stderr, stdout};
use sha2::Digest;

const MANIFEST_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";

fn digest_of(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(bytes)))
}

fn manifest(url: &str, repository: &str, reference: &str) -> reqwest::blocking::Response {
    client()
        .get(format!("{url}/v2/{repository}/manifests/{reference}"))
        .header("Accept", MANIFEST_TYPE)
        .send()
        .unwrap()
}

/// The spec's error code of a response, with its status.
fn error_code(response: reqwest::blocking::Response) -> (u16, String) {
    let status = response.status().as_u16();
    let body: serde_json::Value = response.json().expect("an error body in JSON");
    let code = body["errors"][0]["code"]
        .as_str()
        .unwrap_or_else(|| panic!("no errors[0].code in {body}"))
        .to_owned();
    (status, code)
}

/// Files in the storage directory whose names start with `prefix`.
fn stored(dir: &Path, prefix: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(prefix))
        .collect();
    names.sort();
    names
}

#[test]
fn helm_pushes_pulls_shows_and_installs_and_index_yaml_has_the_pushed_chart() {
    const NAME: &str = "helm_pushes_pulls_shows_and_installs_and_index_yaml_has_the_pushed_chart";
    let ctx = TestContext::new();
    let Some(helm) = peers::helm_or_skip(NAME) else {
        return;
    };
    let helm = || ctx.hermetic(&helm);
    let storage = ctx.path("store");
    let server = ServeProcess::start_on(&ctx, &storage, &[]);
    let base = format!("oci://{}/charts", server.host());

    let pkg = configmap_package(&ctx, &mut helm(), "web", "1.0.0+build.7");
    let pushed = run_ok(helm().arg("push").arg(&pkg).args([&base, "--plain-http"]));
    let digest = chartkit_tests::digest_line(&pushed);
    assert_eq!(manifest(&server.url, "charts/web", &digest).status(), 200);
    assert!(
        stderr(&pushed).starts_with(&format!(
            "Pushed: {}/charts/web:1.0.0_build.7\n",
            server.host()
        )),
        "{}",
        stderr(&pushed)
    );

    // Pushed again (chartkit's client, another creation time): the tag moves, and the
    // first manifest still resolves by its digest.
    std::thread::sleep(Duration::from_millis(1100));
    let touched = std::fs::File::options().append(true).open(&pkg).unwrap();
    touched.set_modified(std::time::SystemTime::now()).unwrap();
    let again = run_ok(
        ctx.chartkit()
            .arg("push")
            .arg(&pkg)
            .args([&base, "--plain-http"]),
    );
    assert_ne!(chartkit_tests::digest_line(&again), digest);
    assert_eq!(manifest(&server.url, "charts/web", &digest).status(), 200);
    assert_eq!(
        manifest(&server.url, "charts/web", "1.0.0_build.7").headers()["docker-content-digest"]
            .to_str()
            .unwrap(),
        chartkit_tests::digest_line(&again)
    );
    let digest = chartkit_tests::digest_line(&again);

    // The other face: in index.yaml at once, and the package is the pushed chart layer.
    let index = index_yaml(&server.url);
    assert!(index.contains("version: 1.0.0+build.7"), "{index}");
    let served = client()
        .get(format!("{}/charts/web-1.0.0+build.7.tgz", server.url))
        .send()
        .unwrap()
        .bytes()
        .unwrap();
    assert_eq!(served.as_ref(), std::fs::read(&pkg).unwrap().as_slice());

    // The manifest served is the bytes helm pushed.
    let response = manifest(&server.url, "charts/web", "1.0.0_build.7");
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["docker-content-digest"]
            .to_str()
            .unwrap(),
        digest
    );
    assert_eq!(digest_of(&response.bytes().unwrap()), digest);

    let out = ctx.path("pulled");
    std::fs::create_dir_all(&out).unwrap();
    let pulled = run_ok(
        helm()
            .args([
                "pull",
                &format!("{base}/web"),
                "--version",
                "1.0.0+build.7",
                "--plain-http",
                "-d",
            ])
            .arg(&out),
    );
    assert_eq!(chartkit_tests::digest_line(&pulled), digest);
    assert_eq!(
        std::fs::read(out.join("web-1.0.0+build.7.tgz")).unwrap(),
        std::fs::read(&pkg).unwrap()
    );
    let shown = run_ok(helm().args(["show", "chart", &format!("{base}/web"), "--plain-http"]));
    assert!(
        stdout(&shown).contains("version: 1.0.0+build.7"),
        "{}",
        stdout(&shown)
    );
    // chartkit's client reads the same manifest.
    let ours = run_ok(
        ctx.chartkit()
            .args(["pull", &format!("{base}/web"), "--plain-http", "-d"])
            .arg(ctx.path("ours")),
    );
    assert_eq!(chartkit_tests::digest_line(&ours), digest);

    // helm installs from it into a sandbox.
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let Some(mut sandbox_helm) = sandbox.helm(&ctx, NAME) else {
        return;
    };
    let installed = run_ok(sandbox_helm.args([
        "install",
        "r1",
        &format!("{base}/web"),
        "--version",
        "1.0.0+build.7",
        "--plain-http",
    ]));
    assert!(
        stdout(&installed).contains("STATUS: deployed"),
        "{}",
        stdout(&installed)
    );
    let Some(mut kubectl) = sandbox.kubectl(&ctx, NAME) else {
        return;
    };
    let cm = run_ok(kubectl.args([
        "get",
        "configmap",
        "r1-cm",
        "-o",
        "jsonpath={.data.greeting}",
    ]));
    assert_eq!(stdout(&cm), "hello");
}

#[test]
fn a_chart_uploaded_or_copied_in_is_pulled_with_helms_manifest_whose_digest_stays() {
    const NAME: &str =
        "a_chart_uploaded_or_copied_in_is_pulled_with_helms_manifest_whose_digest_stays";
    let ctx = TestContext::new();
    let Some(helm) = peers::helm_or_skip(NAME) else {
        return;
    };
    let helm = || ctx.hermetic(&helm);
    let pkg = configmap_package(&ctx, &mut helm(), "api", "2.1.0");
    let bytes = std::fs::read(&pkg).unwrap();

    // What helm pushes for this package, on a server of its own.
    let reference = ServeProcess::start_on(&ctx, &ctx.path("reference"), &[]);
    run_ok(helm().arg("push").arg(&pkg).args([
        &format!("oci://{}/charts", reference.host()),
        "--plain-http",
    ]));
    let helms: serde_json::Value = manifest(&reference.url, "charts/api", "2.1.0")
        .json()
        .unwrap();

    // Uploaded through ChartMuseum's API; another copied into the storage by hand.
    let storage = ctx.path("store");
    let server = ServeProcess::start_on(&ctx, &storage, &["--refresh-interval", "0.2"]);
    let saved = client()
        .post(format!("{}/api/charts", server.url))
        .body(bytes.clone())
        .send()
        .unwrap();
    assert_eq!(saved.status(), 201);
    std::fs::write(
        storage.join("copied-0.3.0.tgz"),
        chart_package("copied", "0.3.0"),
    )
    .unwrap();

    let first = manifest(&server.url, "charts/api", "2.1.0");
    assert_eq!(first.status(), 200);
    let digest = first.headers()["docker-content-digest"]
        .to_str()
        .unwrap()
        .to_owned();
    let ours: serde_json::Value = serde_json::from_slice(&first.bytes().unwrap()).unwrap();
    // Helm's manifest: the same config and layers; only the creation time is the server's.
    assert_eq!(ours["config"], helms["config"]);
    assert_eq!(ours["layers"], helms["layers"]);
    let without_created = |m: &serde_json::Value| {
        let mut a = m["annotations"].clone();
        a.as_object_mut()
            .unwrap()
            .remove("org.opencontainers.image.created");
        a
    };
    assert_eq!(without_created(&ours), without_created(&helms));

    let out = ctx.path("pulled");
    std::fs::create_dir_all(&out).unwrap();
    let pulled = run_ok(
        helm()
            .args([
                "pull",
                &format!("oci://{}/charts/api", server.host()),
                "--version",
                "2.1.0",
                "--plain-http",
                "-d",
            ])
            .arg(&out),
    );
    assert_eq!(chartkit_tests::digest_line(&pulled), digest);
    assert_eq!(std::fs::read(out.join("api-2.1.0.tgz")).unwrap(), bytes);

    // The copied-in chart, once the refresh has seen it.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !index_yaml(&server.url).contains("copied") {
        assert!(
            std::time::Instant::now() < deadline,
            "the copied chart never appeared"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    run_ok(
        helm()
            .args([
                "pull",
                &format!("oci://{}/charts/copied", server.host()),
                "--version",
                "0.3.0",
                "--plain-http",
                "-d",
            ])
            .arg(&out),
    );
    assert!(out.join("copied-0.3.0.tgz").exists());

    // The digest stays across a restart: the manifest built once is kept.
    drop(server);
    let again = ServeProcess::start_on(&ctx, &storage, &[]);
    let second = manifest(&again.url, "charts/api", &digest);
    assert_eq!(second.status(), 200);
    assert_eq!(digest_of(&second.bytes().unwrap()), digest);
}

#[test]
fn chartkit_pushes_and_skopeo_inspects_lists_and_copies_out() {
    const NAME: &str = "chartkit_pushes_and_skopeo_inspects_lists_and_copies_out";
    let ctx = TestContext::new();
    let server = ServeProcess::start_on(&ctx, &ctx.path("store"), &[]);
    let base = format!("oci://{}/charts", server.host());
    let mut digests = Vec::new();
    for version in ["0.1.0", "0.2.0", "0.10.0"] {
        let pkg = configmap_package(&ctx, &mut ctx.chartkit(), "app", version);
        let pushed = run_ok(
            ctx.chartkit()
                .arg("push")
                .arg(&pkg)
                .args([&base, "--plain-http"]),
        );
        digests.push(chartkit_tests::digest_line(&pushed));
    }
    let pulled = run_ok(
        ctx.chartkit()
            .args([
                "pull",
                &format!("{base}/app"),
                "--version",
                "~0.2",
                "--plain-http",
                "-d",
            ])
            .arg(ctx.path("pulled")),
    );
    assert_eq!(chartkit_tests::digest_line(&pulled), digests[1]);
    assert!(index_yaml(&server.url).contains("version: 0.10.0"));

    // Paging: `n` and `last`, with a Link to the next page.
    let page = client()
        .get(format!("{}/v2/charts/app/tags/list?n=2", server.url))
        .send()
        .unwrap();
    let link = page.headers()["link"].to_str().unwrap().to_owned();
    assert_eq!(
        link,
        "</v2/charts/app/tags/list?n=2&last=0.10.0>; rel=\"next\""
    );
    let body: serde_json::Value = page.json().unwrap();
    assert_eq!(body["tags"], serde_json::json!(["0.1.0", "0.10.0"]));
    let rest: serde_json::Value = client()
        .get(format!(
            "{}/v2/charts/app/tags/list?n=2&last=0.10.0",
            server.url
        ))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(rest["tags"], serde_json::json!(["0.2.0"]));
    let catalog: serde_json::Value = client()
        .get(format!("{}/v2/_catalog", server.url))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(catalog["repositories"], serde_json::json!(["charts/app"]));

    let Some(skopeo) = chartkit_tests::on_path("skopeo") else {
        chartkit_tests::skip(NAME, "skopeo is not installed");
        return;
    };
    let image = format!("docker://{}/charts/app:0.2.0", server.host());
    let raw =
        run_ok(Command::new(&skopeo).args(["inspect", "--raw", "--tls-verify=false", &image]));
    assert_eq!(digest_of(&raw.stdout), digests[1]);
    let tags = run_ok(Command::new(&skopeo).args([
        "list-tags",
        "--tls-verify=false",
        &format!("docker://{}/charts/app", server.host()),
    ]));
    let tags: serde_json::Value = serde_json::from_slice(&tags.stdout).unwrap();
    assert_eq!(
        tags["Tags"],
        serde_json::json!(["0.1.0", "0.10.0", "0.2.0"])
    );
    let copied = ctx.path("copied");
    run_ok(Command::new(&skopeo).args([
        "copy",
        "--src-tls-verify=false",
        &image,
        &format!("dir:{}", copied.display()),
    ]));
    let package = std::fs::read(ctx.path("out/app-0.2.0.tgz")).unwrap();
    let layer = digest_of(&package);
    assert_eq!(
        std::fs::read(copied.join(layer.trim_start_matches("sha256:"))).unwrap(),
        package
    );
    assert_eq!(
        digest_of(&std::fs::read(copied.join("manifest.json")).unwrap()),
        digests[1]
    );
    // And in: copied into another server, the chart is in its index.yaml.
    let other = ServeProcess::start_on(&ctx, &ctx.path("other"), &[]);
    run_ok(Command::new(&skopeo).args([
        "copy",
        "--dest-tls-verify=false",
        &format!("dir:{}", copied.display()),
        &format!("docker://{}/charts/app:0.2.0", other.host()),
    ]));
    assert!(index_yaml(&other.url).contains("version: 0.2.0"));
    assert_eq!(
        digest_of(&manifest(&other.url, "charts/app", "0.2.0").bytes().unwrap()),
        digests[1]
    );
}

/// Starts an upload session; its Location.
fn start_upload(url: &str, repository: &str) -> String {
    let response = client()
        .post(format!("{url}/v2/{repository}/blobs/uploads/"))
        .send()
        .unwrap();
    assert_eq!(response.status(), 202);
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    format!("{url}{location}")
}

fn put_blob(url: &str, repository: &str, data: &[u8]) -> String {
    let digest = digest_of(data);
    let response = client()
        .post(format!(
            "{url}/v2/{repository}/blobs/uploads/?digest={digest}"
        ))
        .body(data.to_vec())
        .send()
        .unwrap();
    assert_eq!(response.status(), 201);
    digest
}

fn head_blob(url: &str, repository: &str, digest: &str) -> u16 {
    client()
        .head(format!("{url}/v2/{repository}/blobs/{digest}"))
        .send()
        .unwrap()
        .status()
        .as_u16()
}

fn chart_manifest(config: &[u8], layer: &[u8]) -> String {
    serde_json::json!({
        "schemaVersion": 2,
        "config": {"mediaType": "application/vnd.cncf.helm.config.v1+json", "digest": digest_of(config), "size": config.len()},
        "layers": [{"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "digest": digest_of(layer), "size": layer.len()}],
    })
    .to_string()
}

fn put_manifest(
    url: &str,
    repository: &str,
    reference: &str,
    body: &str,
) -> reqwest::blocking::Response {
    client()
        .put(format!("{url}/v2/{repository}/manifests/{reference}"))
        .header("Content-Type", MANIFEST_TYPE)
        .body(body.to_owned())
        .send()
        .unwrap()
}

#[test]
fn the_specs_error_cases_answer_its_codes_and_leave_nothing() {
    let ctx = TestContext::new();
    let storage = ctx.path("store");
    let server = ServeProcess::start_on(
        &ctx,
        &storage,
        &["--max-upload-size", "100000", "--disable-delete"],
    );
    let url = server.url.as_str();
    let r = "charts/demo";

    let version = client().get(format!("{url}/v2/")).send().unwrap();
    assert_eq!(version.status(), 200);
    assert_eq!(
        version.headers()["docker-distribution-api-version"],
        "registry/2.0"
    );
    let unknown_digest = digest_of(b"nothing");
    assert_eq!(
        error_code(manifest(url, r, "1.0.0")),
        (404, "NAME_UNKNOWN".into())
    );
    assert_eq!(
        error_code(manifest(url, "other/demo", "1.0.0")),
        (404, "NAME_UNKNOWN".into())
    );
    assert_eq!(
        error_code(
            client()
                .get(format!("{url}/v2/charts/demo/tags/list"))
                .send()
                .unwrap()
        ),
        (404, "NAME_UNKNOWN".into())
    );
    assert_eq!(
        error_code(
            client()
                .get(format!("{url}/v2/{r}/blobs/{unknown_digest}"))
                .send()
                .unwrap()
        ),
        (404, "BLOB_UNKNOWN".into())
    );

    // A chunked upload: chunks in order with Content-Range, then PUT with the digest.
    let data: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
    let session = start_upload(url, r);
    let chunk = |location: &str, range: &str, body: &[u8]| {
        client()
            .patch(location)
            .header("Content-Range", range)
            .header("Content-Type", "application/octet-stream")
            .body(body.to_vec())
            .send()
            .unwrap()
    };
    let first = chunk(&session, "0-999", &data[..1000]);
    assert_eq!(first.status(), 202);
    assert_eq!(first.headers()["range"], "0-999");
    // Out of order: 416 BLOB_UPLOAD_INVALID, and the session is as it was.
    assert_eq!(
        error_code(chunk(&session, "1500-2999", &data[1500..])),
        (416, "BLOB_UPLOAD_INVALID".into())
    );
    assert_eq!(chunk(&session, "1000-2999", &data[1000..]).status(), 202);
    let digest = digest_of(&data);
    // A wrong digest: DIGEST_INVALID and no blob.
    let wrong = client()
        .put(format!("{session}?digest={unknown_digest}"))
        .send()
        .unwrap();
    assert_eq!(error_code(wrong), (400, "DIGEST_INVALID".into()));
    assert_eq!(head_blob(url, r, &unknown_digest), 404);
    assert_eq!(head_blob(url, r, &digest), 404);
    assert_eq!(
        error_code(
            client()
                .put(format!("{session}?digest={digest}"))
                .send()
                .unwrap()
        ),
        (404, "BLOB_UPLOAD_UNKNOWN".into())
    );
    // Again, properly.
    let session = start_upload(url, r);
    assert_eq!(chunk(&session, "0-2999", &data).status(), 202);
    let done = client()
        .put(format!("{session}?digest={digest}"))
        .send()
        .unwrap();
    assert_eq!(done.status(), 201);
    assert_eq!(
        done.headers()["docker-content-digest"].to_str().unwrap(),
        digest
    );
    let ranged = client()
        .get(format!("{url}/v2/{r}/blobs/{digest}"))
        .header("Range", "bytes=10-19")
        .send()
        .unwrap();
    assert_eq!(ranged.status(), 206);
    assert_eq!(ranged.headers()["content-range"], "bytes 10-19/3000");
    assert_eq!(ranged.bytes().unwrap().as_ref(), &data[10..20]);
    // Cross-repository mount: 201 when the blob is here, 202 (an upload) when not.
    let mounted = client()
        .post(format!(
            "{url}/v2/charts/other/blobs/uploads/?mount={digest}&from={r}"
        ))
        .send()
        .unwrap();
    assert_eq!(mounted.status(), 201);
    let not_mounted = client()
        .post(format!(
            "{url}/v2/charts/other/blobs/uploads/?mount={unknown_digest}&from={r}"
        ))
        .send()
        .unwrap();
    assert_eq!(not_mounted.status(), 202);

    // Over the upload limit: 413 SIZE_INVALID, and the session is gone.
    let big = vec![7u8; 150_000];
    let session = start_upload(url, r);
    assert_eq!(
        error_code(chunk(&session, "0-149999", &big)),
        (413, "SIZE_INVALID".into())
    );
    assert_eq!(
        error_code(client().get(&session).send().unwrap()),
        (404, "BLOB_UPLOAD_UNKNOWN".into())
    );
    let monolithic = client()
        .post(format!(
            "{url}/v2/{r}/blobs/uploads/?digest={}",
            digest_of(&big)
        ))
        .body(big.clone())
        .send()
        .unwrap();
    assert_eq!(monolithic.status(), 413);
    assert_eq!(head_blob(url, r, &digest_of(&big)), 404);

    // Manifests: not JSON, blobs never uploaded, a chart layer that is not a chart, a
    // tag that is not the chart's version, another artifact type.
    assert_eq!(
        error_code(put_manifest(url, r, "1.0.0", "{not json")),
        (400, "MANIFEST_INVALID".into())
    );
    let config = br#"{"name":"demo","version":"1.0.0","apiVersion":"v2"}"#;
    assert_eq!(
        error_code(put_manifest(
            url,
            r,
            "1.0.0",
            &chart_manifest(config, &data)
        )),
        (400, "MANIFEST_BLOB_UNKNOWN".into())
    );
    put_blob(url, r, config);
    assert_eq!(
        error_code(put_manifest(
            url,
            r,
            "1.0.0",
            &chart_manifest(config, &data)
        )),
        (400, "MANIFEST_INVALID".into())
    );
    let package = chart_package("demo", "1.0.0");
    put_blob(url, r, &package);
    assert_eq!(
        error_code(put_manifest(
            url,
            r,
            "2.0.0",
            &chart_manifest(config, &package)
        )),
        (400, "MANIFEST_INVALID".into())
    );
    let by_digest = chart_manifest(config, &package);
    assert_eq!(
        error_code(put_manifest(url, r, &unknown_digest, &by_digest)),
        (400, "DIGEST_INVALID".into())
    );
    let image = serde_json::json!({
        "schemaVersion": 2,
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": digest_of(config), "size": config.len()},
        "layers": [],
    })
    .to_string();
    assert_eq!(
        error_code(put_manifest(url, r, "latest", &image)),
        (403, "DENIED".into())
    );
    // Nothing of these is visible: no chart in the index, no manifest stored.
    assert!(!index_yaml(url).contains("demo"));
    assert!(stored(&storage, ".oci-manifest-").is_empty());
    assert!(stored(&storage, "demo").is_empty());

    // A good one, by digest; then DELETE, which this server (--disable-delete) does not do.
    let stored_manifest = put_manifest(url, r, &digest_of(by_digest.as_bytes()), &by_digest);
    assert_eq!(stored_manifest.status(), 201);
    assert_eq!(
        stored_manifest.headers()["location"].to_str().unwrap(),
        format!("/v2/{r}/manifests/{}", digest_of(by_digest.as_bytes()))
    );
    assert!(index_yaml(url).contains("demo"));
    assert_eq!(
        error_code(manifest(url, r, "9.9.9")),
        (404, "MANIFEST_UNKNOWN".into())
    );
    let delete = client()
        .delete(format!("{url}/v2/{r}/manifests/1.0.0"))
        .send()
        .unwrap();
    assert_eq!(error_code(delete), (405, "UNSUPPORTED".into()));
    let delete = client()
        .delete(format!("{url}/v2/{r}/blobs/{}", digest_of(config)))
        .send()
        .unwrap();
    assert_eq!(error_code(delete), (405, "UNSUPPORTED".into()));
    assert_eq!(head_blob(url, r, &digest_of(config)), 200);
    assert_eq!(manifest(url, r, "1.0.0").status(), 200);
    // ChartMuseum's API answers as ChartMuseum does with --disable-delete: it has no
    // DELETE route, so 404 `not found`.
    let delete = client()
        .delete(format!("{url}/api/charts/demo/1.0.0"))
        .send()
        .unwrap();
    assert_eq!(delete.status(), 404);
    assert_eq!(delete.text().unwrap(), r#"{"error":"not found"}"#);
    assert!(index_yaml(url).contains("demo"));
}

#[test]
fn writes_need_credentials_and_get_the_specs_unauthorized() {
    const NAME: &str = "writes_need_credentials_and_get_the_specs_unauthorized";
    let ctx = TestContext::new();
    let htpasswd = ctx.path("htpasswd");
    write_htpasswd(&htpasswd, &[("ci", "let-me-in")]);
    let server = ServeProcess::start_on(
        &ctx,
        &ctx.path("store"),
        &["--basic-auth-file", htpasswd.to_str().unwrap()],
    );
    let refused = client()
        .post(format!("{}/v2/charts/web/blobs/uploads/", server.url))
        .send()
        .unwrap();
    assert_eq!(
        refused.headers()["www-authenticate"],
        format!(
            "Bearer realm=\"{}/v2/token\",service=\"{}\",scope=\"repository:charts/web:pull,push\"",
            server.url,
            server.host()
        )
    );
    assert_eq!(error_code(refused), (401, "UNAUTHORIZED".into()));
    // Deletes are writes: credentials first, on both faces.
    let refused = client()
        .delete(format!("{}/v2/charts/web/manifests/0.1.0", server.url))
        .send()
        .unwrap();
    assert_eq!(error_code(refused), (401, "UNAUTHORIZED".into()));
    let refused = client()
        .delete(format!("{}/api/charts/web/0.1.0", server.url))
        .send()
        .unwrap();
    assert_eq!(refused.status(), 401);
    let Some(helm) = peers::helm_or_skip(NAME) else {
        return;
    };
    let helm = || ctx.hermetic(&helm);
    let pkg = configmap_package(&ctx, &mut helm(), "web", "0.1.0");
    let base = format!("oci://{}/charts", server.host());
    let anonymous = helm()
        .arg("push")
        .arg(&pkg)
        .args([&base, "--plain-http"])
        .output()
        .unwrap();
    assert!(!anonymous.status.success());
    assert!(!index_yaml(&server.url).contains("web"));
    login(&mut helm(), &server.host(), "ci", "let-me-in");
    run_ok(helm().arg("push").arg(&pkg).args([&base, "--plain-http"]));
    assert!(index_yaml(&server.url).contains("web"));
    let deleted = client()
        .delete(format!("{}/v2/charts/web/manifests/0.1.0", server.url))
        .basic_auth("ci", Some("let-me-in"))
        .send()
        .unwrap();
    assert_eq!(deleted.status(), 202);
    assert!(!index_yaml(&server.url).contains("web"));
}

#[test]
fn a_provenance_layer_is_the_repositorys_prov_file_both_ways() {
    const NAME: &str = "a_provenance_layer_is_the_repositorys_prov_file_both_ways";
    let ctx = TestContext::new();
    let Some(helm) = peers::helm_or_skip(NAME) else {
        return;
    };
    let helm = || ctx.hermetic(&helm);
    let keys = ctx.path("keys");
    run_ok(
        ctx.chartkit()
            .args([
                "key",
                "generate",
                "--name",
                "Oci Signer",
                "--email",
                "oci@example.com",
                "-o",
            ])
            .arg(&keys),
    );
    let signed = |name: &str| {
        let out = ctx.path("out");
        run_ok(
            ctx.chartkit()
                .arg("package")
                .arg(configmap_chart(&ctx, name, "1.2.3"))
                .args(["--sign", "--key", "oci@example.com", "--keyring"])
                .arg(keys.join("secret.asc"))
                .arg("-d")
                .arg(&out),
        );
        let pkg = out.join(format!("{name}-1.2.3.tgz"));
        let prov = std::fs::read(out.join(format!("{name}-1.2.3.tgz.prov"))).unwrap();
        (pkg, prov)
    };
    let server = ServeProcess::start_on(&ctx, &ctx.path("store"), &[]);
    let base = format!("oci://{}/charts", server.host());
    let verify = |chart: &str| {
        let out = ctx.path(&format!("verified-{chart}"));
        std::fs::create_dir_all(&out).unwrap();
        let pulled = run_ok(
            helm()
                .args([
                    "pull",
                    &format!("{base}/{chart}"),
                    "--version",
                    "1.2.3",
                    "--plain-http",
                    "--verify",
                    "--keyring",
                ])
                .arg(keys.join("public.gpg"))
                .arg("-d")
                .arg(&out),
        );
        assert!(
            stdout(&pulled).contains("Signed by: Oci Signer"),
            "{}",
            stdout(&pulled)
        );
    };

    // helm pushes the .prov beside the package as a layer: the repository serves it.
    let (pkg, prov) = signed("pushed");
    run_ok(helm().arg("push").arg(&pkg).args([&base, "--plain-http"]));
    let served = client()
        .get(format!("{}/charts/pushed-1.2.3.tgz.prov", server.url))
        .send()
        .unwrap();
    assert_eq!(served.status(), 200);
    assert_eq!(served.bytes().unwrap().as_ref(), prov.as_slice());
    verify("pushed");

    // Uploaded with its .prov through ChartMuseum's API: the manifest has the layer.
    let (pkg, prov) = signed("uploaded");
    for (path, body) in [
        ("api/charts", std::fs::read(&pkg).unwrap()),
        ("api/prov", prov),
    ] {
        let saved = client()
            .post(format!("{}/{path}", server.url))
            .body(body)
            .send()
            .unwrap();
        assert_eq!(saved.status(), 201, "{path}");
    }
    let manifest: serde_json::Value = manifest(&server.url, "charts/uploaded", "1.2.3")
        .json()
        .unwrap();
    assert_eq!(
        manifest["layers"].as_array().unwrap().len(),
        2,
        "{manifest}"
    );
    verify("uploaded");
}

#[test]
fn two_replicas_on_one_bucket_share_both_faces() {
    const NAME: &str = "two_replicas_on_one_bucket_share_both_faces";
    let Some(s3) = chartkit_tests::server::S3Server::start_or_skip(NAME) else {
        return;
    };
    s3.create_bucket("charts");
    let ctx = TestContext::new();
    let Some(helm) = peers::helm_or_skip(NAME) else {
        return;
    };
    let helm = || ctx.hermetic(&helm);
    let start = || s3.serve(&ctx, &["s3://charts/team", "--refresh-interval", "0.3"]);
    let (a, b) = (start(), start());
    let wait_for = |url: &str, text: &str| {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !index_yaml(url).contains(text) {
            assert!(
                std::time::Instant::now() < deadline,
                "{text} never reached {url}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };

    // Pushed to A, pulled from B with the same digest.
    let pkg = configmap_package(&ctx, &mut helm(), "pushed", "1.0.0");
    let pushed = run_ok(
        helm()
            .arg("push")
            .arg(&pkg)
            .args([&format!("oci://{}/charts", a.host()), "--plain-http"]),
    );
    wait_for(&b.url, "pushed");
    let out = ctx.path("pulled");
    std::fs::create_dir_all(&out).unwrap();
    let pulled = run_ok(
        helm()
            .args([
                "pull",
                &format!("oci://{}/charts/pushed", b.host()),
                "--version",
                "1.0.0",
                "--plain-http",
                "-d",
            ])
            .arg(&out),
    );
    assert_eq!(
        chartkit_tests::digest_line(&pulled),
        chartkit_tests::digest_line(&pushed)
    );
    assert_eq!(
        std::fs::read(out.join("pushed-1.0.0.tgz")).unwrap(),
        std::fs::read(&pkg).unwrap()
    );

    // Uploaded to B, pulled from A; both replicas then give one manifest digest.
    let saved = client()
        .post(format!("{}/api/charts", b.url))
        .body(chart_package("uploaded", "0.1.0"))
        .send()
        .unwrap();
    assert_eq!(saved.status(), 201);
    wait_for(&a.url, "uploaded");
    let from_a = manifest(&a.url, "charts/uploaded", "0.1.0");
    assert_eq!(from_a.status(), 200);
    let digest = from_a.headers()["docker-content-digest"]
        .to_str()
        .unwrap()
        .to_owned();
    let from_b = manifest(&b.url, "charts/uploaded", "0.1.0");
    assert_eq!(
        from_b.headers()["docker-content-digest"].to_str().unwrap(),
        digest
    );
    run_ok(
        helm()
            .args([
                "pull",
                &format!("oci://{}/charts/uploaded@{digest}", a.host()),
                "--plain-http",
                "-d",
            ])
            .arg(&out),
    );
    // helm names a package pulled by digest after the reference.
    let by_digest = out.join(format!("uploaded@{}.tgz", digest.replace(':', "-")));
    assert_eq!(
        std::fs::read(by_digest).unwrap(),
        chart_package("uploaded", "0.1.0")
    );
}

#[test]
fn every_push_acknowledged_before_a_sigkill_is_there_after_the_restart() {
    const NAME: &str = "every_push_acknowledged_before_a_sigkill_is_there_after_the_restart";
    let ctx = TestContext::new();
    let Some(helm) = peers::helm_or_skip(NAME) else {
        return;
    };
    let storage = ctx.path("store");
    let mut server = ServeProcess::start_on(&ctx, &storage, &[]);
    let base = format!("oci://{}/charts", server.host());
    let packages: Vec<PathBuf> = (0..8)
        .map(|i| configmap_package(&ctx, &mut ctx.hermetic(&helm), &format!("c{i}"), "1.0.0"))
        .collect();
    let (tx, rx) = std::sync::mpsc::channel();
    let pushes: Vec<_> = packages
        .iter()
        .enumerate()
        .map(|(i, pkg)| {
            let mut push = ctx.hermetic(&helm);
            push.arg("push").arg(pkg).args([&base, "--plain-http"]);
            let tx = tx.clone();
            std::thread::spawn(move || {
                let output = push.output().unwrap();
                let _ = tx.send(());
                (i, output)
            })
        })
        .collect();
    // Killed once the first push is acknowledged, with the others in flight.
    rx.recv().unwrap();
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let acknowledged: Vec<(usize, String)> = pushes
        .into_iter()
        .map(|p| p.join().unwrap())
        .filter(|(_, output)| output.status.success())
        .map(|(i, output)| (i, chartkit_tests::digest_line(&output)))
        .collect();
    assert!(!acknowledged.is_empty());

    let again = ServeProcess::start_on(&ctx, &storage, &[]);
    let out = ctx.path("pulled");
    std::fs::create_dir_all(&out).unwrap();
    for (i, digest) in &acknowledged {
        let pulled = run_ok(
            ctx.hermetic(&helm)
                .args([
                    "pull",
                    &format!("oci://{}/charts/c{i}", again.host()),
                    "--version",
                    "1.0.0",
                    "--plain-http",
                    "-d",
                ])
                .arg(&out),
        );
        assert_eq!(&chartkit_tests::digest_line(&pulled), digest, "c{i}");
        assert_eq!(
            std::fs::read(out.join(format!("c{i}-1.0.0.tgz"))).unwrap(),
            std::fs::read(&packages[*i]).unwrap()
        );
    }
}

#[test]
fn with_oci_artifacts_other_manifests_sit_beside_the_charts() {
    let ctx = TestContext::new();
    let storage = ctx.path("store");
    let server = ServeProcess::start_on(&ctx, &storage, &["--oci-artifacts"]);
    let url = server.url.as_str();
    let r = "charts/demo";
    let package = chart_package("demo", "1.0.0");
    let config = br#"{"name":"demo","version":"1.0.0","apiVersion":"v2"}"#;
    put_blob(url, r, config);
    put_blob(url, r, &package);
    let chart = chart_manifest(config, &package);
    assert_eq!(put_manifest(url, r, "1.0.0", &chart).status(), 201);

    // An SBOM-like artifact whose subject is the chart's manifest.
    let sbom = b"{\"spdxVersion\":\"SPDX-2.3\"}";
    let empty = b"{}";
    put_blob(url, r, sbom);
    put_blob(url, r, empty);
    let artifact = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": MANIFEST_TYPE,
        "artifactType": "application/spdx+json",
        "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": digest_of(empty), "size": 2},
        "layers": [{"mediaType": "application/spdx+json", "digest": digest_of(sbom), "size": sbom.len()}],
        "subject": {"mediaType": MANIFEST_TYPE, "digest": digest_of(chart.as_bytes()), "size": chart.len()},
    })
    .to_string();
    let stored = put_manifest(url, r, "sbom", &artifact);
    assert_eq!(stored.status(), 201);
    assert_eq!(
        stored.headers()["docker-content-digest"].to_str().unwrap(),
        digest_of(artifact.as_bytes())
    );
    assert_eq!(
        stored.headers()["oci-subject"].to_str().unwrap(),
        digest_of(chart.as_bytes())
    );
    // The referrers API lists it under the chart's manifest.
    let referrers: serde_json::Value = client()
        .get(format!(
            "{url}/v2/{r}/referrers/{}",
            digest_of(chart.as_bytes())
        ))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(
        referrers["manifests"][0]["digest"],
        digest_of(artifact.as_bytes())
    );
    assert_eq!(
        referrers["manifests"][0]["artifactType"],
        "application/spdx+json"
    );
    let filtered: serde_json::Value = client()
        .get(format!(
            "{url}/v2/{r}/referrers/{}?artifactType=application/other",
            digest_of(chart.as_bytes())
        ))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(filtered["manifests"], serde_json::json!([]));
    for reference in ["sbom".to_owned(), digest_of(artifact.as_bytes())] {
        let got = manifest(url, r, &reference);
        assert_eq!(got.status(), 200, "{reference}");
        assert_eq!(got.bytes().unwrap().as_ref(), artifact.as_bytes());
    }
    let tags: serde_json::Value = client()
        .get(format!("{url}/v2/{r}/tags/list"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(tags["tags"], serde_json::json!(["1.0.0", "sbom"]));
    // Not a chart: not in index.yaml; and it may not take a chart version's tag.
    assert!(!index_yaml(url).contains("sbom"));
    assert_eq!(
        error_code(put_manifest(url, r, "1.0.0", &artifact)),
        (403, "DENIED".into())
    );
    assert_eq!(
        manifest(url, r, "1.0.0").headers()["docker-content-digest"]
            .to_str()
            .unwrap(),
        digest_of(chart.as_bytes())
    );
    // One that names a blob never uploaded is refused.
    let dangling = artifact.replace(&digest_of(sbom), &digest_of(b"missing"));
    assert_eq!(
        error_code(put_manifest(url, r, "dangling", &dangling)),
        (400, "MANIFEST_BLOB_UNKNOWN".into())
    );
    assert_eq!(manifest(url, r, "dangling").status(), 404);
}

#[test]
fn oci_namespace_moves_the_charts_and_the_default_answers_name_unknown() {
    let ctx = TestContext::new();
    let server = ServeProcess::start_on(&ctx, &ctx.path("store"), &["--oci-namespace", "team"]);
    let pkg = configmap_package(&ctx, &mut ctx.chartkit(), "web", "0.1.0");
    let pushed = run_ok(
        ctx.chartkit()
            .arg("push")
            .arg(&pkg)
            .args([&format!("oci://{}/team", server.host()), "--plain-http"]),
    );
    assert_eq!(
        digest_of(&manifest(&server.url, "team/web", "0.1.0").bytes().unwrap()),
        chartkit_tests::digest_line(&pushed)
    );
    assert_eq!(
        error_code(manifest(&server.url, "charts/web", "0.1.0")),
        (404, "NAME_UNKNOWN".into())
    );
    let refused = ctx
        .chartkit()
        .arg("push")
        .arg(&pkg)
        .args([&format!("oci://{}/charts", server.host()), "--plain-http"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(index_yaml(&server.url).contains("web"));
}

/// The digest of a tag's manifest.
fn digest_of_tag(url: &str, repository: &str, tag: &str) -> String {
    manifest(url, repository, tag).headers()["docker-content-digest"]
        .to_str()
        .unwrap()
        .to_owned()
}

fn delete(url: &str) -> reqwest::blocking::Response {
    client().delete(url).send().unwrap()
}

#[test]
fn deleting_a_manifest_deletes_the_chart_version_on_both_faces() {
    const NAME: &str = "deleting_a_manifest_deletes_the_chart_version_on_both_faces";
    let ctx = TestContext::new();
    let storage = ctx.path("store");
    let server = ServeProcess::start_on(&ctx, &storage, &[]);
    let url = server.url.as_str();
    let base = format!("oci://{}/charts", server.host());
    let helm = peers::helm_or_skip(NAME);
    // helm's own pushes where helm is here, chartkit's otherwise: the server cannot tell.
    let push = |version: &str| {
        let pkg = configmap_package(&ctx, &mut ctx.chartkit(), "web", version);
        let mut command = match &helm {
            Some(helm) => ctx.hermetic(helm),
            None => ctx.chartkit(),
        };
        run_ok(command.arg("push").arg(pkg).args([&base, "--plain-http"]));
    };
    push("1.0.0");
    push("2.0.0");
    push("3.0.0");
    let saved = client()
        .post(format!("{url}/api/charts"))
        .body(chart_package("uploaded", "0.1.0"))
        .send()
        .unwrap();
    assert_eq!(saved.status(), 201);

    // By tag: 202, gone from index.yaml, /charts/, the tag list and the API.
    assert_eq!(
        delete(&format!("{url}/v2/charts/web/manifests/1.0.0")).status(),
        202
    );
    assert!(
        !index_yaml(url).contains("version: 1.0.0"),
        "{}",
        index_yaml(url)
    );
    assert_eq!(
        client()
            .get(format!("{url}/charts/web-1.0.0.tgz"))
            .send()
            .unwrap()
            .status(),
        404
    );
    assert_eq!(
        client()
            .get(format!("{url}/api/charts/web/1.0.0"))
            .send()
            .unwrap()
            .status(),
        404
    );
    let tags: serde_json::Value = client()
        .get(format!("{url}/v2/charts/web/tags/list"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(tags["tags"], serde_json::json!(["2.0.0", "3.0.0"]));
    assert!(stored(&storage, ".oci-manifest-web-1.0.0").is_empty());
    assert_eq!(
        error_code(manifest(url, "charts/web", "1.0.0")),
        (404, "MANIFEST_UNKNOWN".into())
    );
    assert_eq!(
        error_code(delete(&format!("{url}/v2/charts/web/manifests/1.0.0"))),
        (404, "MANIFEST_UNKNOWN".into())
    );

    // By digest: the same.
    let digest = digest_of_tag(url, "charts/web", "2.0.0");
    assert_eq!(
        delete(&format!("{url}/v2/charts/web/manifests/{digest}")).status(),
        202
    );
    assert!(!index_yaml(url).contains("version: 2.0.0"));
    assert_eq!(manifest(url, "charts/web", &digest).status(), 404);

    // Through ChartMuseum's API: the registry no longer has it either.
    let api = delete(&format!("{url}/api/charts/uploaded/0.1.0"));
    assert_eq!(api.status(), 200);
    assert_eq!(api.text().unwrap(), r#"{"deleted":true}"#);
    assert_eq!(
        error_code(manifest(url, "charts/uploaded", "0.1.0")),
        (404, "NAME_UNKNOWN".into())
    );

    // Blobs: one uploaded alone goes (202, then 404); a chart layer is its chart
    // version, deleted through the manifest.
    let lone = put_blob(url, "charts/web", b"a blob no manifest names");
    assert_eq!(
        delete(&format!("{url}/v2/charts/web/blobs/{lone}")).status(),
        202
    );
    assert_eq!(head_blob(url, "charts/web", &lone), 404);
    assert_eq!(
        error_code(delete(&format!("{url}/v2/charts/web/blobs/{lone}"))),
        (404, "BLOB_UNKNOWN".into())
    );
    let remaining: serde_json::Value = manifest(url, "charts/web", "3.0.0").json().unwrap();
    let layer = remaining["layers"][0]["digest"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        error_code(delete(&format!("{url}/v2/charts/web/blobs/{layer}"))),
        (403, "DENIED".into())
    );
    assert_eq!(head_blob(url, "charts/web", &layer), 200);

    // Neither client pulls a deleted version; the one left still pulls.
    let out = ctx.path("pulled");
    std::fs::create_dir_all(&out).unwrap();
    let pull = |command: &mut Command, version: &str| {
        command
            .args(["pull", &format!("{base}/web"), "--version", version])
            .args(["--plain-http", "-d"])
            .arg(&out)
            .output()
            .unwrap()
    };
    let mut clients = vec![("chartkit", ctx.chartkit())];
    if let Some(helm) = &helm {
        clients.push(("helm", ctx.hermetic(helm)));
    }
    for (who, mut command) in clients {
        for version in ["1.0.0", "2.0.0"] {
            let refused = pull(&mut command, version);
            assert!(!refused.status.success(), "{who} pulled web {version}");
        }
        let mut command = if who == "helm" {
            ctx.hermetic(helm.as_ref().unwrap())
        } else {
            ctx.chartkit()
        };
        assert!(pull(&mut command, "3.0.0").status.success(), "{who}");
    }
}

#[test]
fn garbage_collection_removes_unshared_blobs_and_abandoned_uploads() {
    let ctx = TestContext::new();
    let storage = ctx.path("store");
    let server = ServeProcess::start_on(
        &ctx,
        &storage,
        &[
            "--oci-artifacts",
            "--oci-gc-interval",
            "0.5",
            "--oci-gc-grace",
            "2",
        ],
    );
    let url = server.url.as_str();
    let push = |name: &str| {
        let r = format!("charts/{name}");
        let config = format!(r#"{{"name":"{name}","version":"1.0.0","apiVersion":"v2"}}"#);
        let package = chart_package(name, "1.0.0");
        put_blob(url, &r, config.as_bytes());
        put_blob(url, &r, &package);
        let body = chart_manifest(config.as_bytes(), &package);
        assert_eq!(put_manifest(url, &r, "1.0.0", &body).status(), 201);
        (digest_of(config.as_bytes()), digest_of(body.as_bytes()))
    };
    let (shared_config, web_manifest) = push("web");
    let (other_config, other_manifest) = push("other");
    let (kept_config, _) = push("kept");
    // An artifact beside `web` whose config is web's: a blob two manifests share.
    let notes = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": MANIFEST_TYPE,
        "artifactType": "application/vnd.example.notes",
        "config": {"mediaType": "application/vnd.example.config", "digest": shared_config, "size": 1},
        "layers": [],
    })
    .to_string();
    assert_eq!(
        put_manifest(url, "charts/web", "notes", &notes).status(),
        201
    );
    // An abandoned push (a blob, never a manifest) and an abandoned upload session.
    let abandoned = put_blob(url, "charts/web", b"pushed and then forgotten");
    let session = start_upload(url, "charts/web");
    let patched = client()
        .patch(&session)
        .header("Content-Type", "application/octet-stream")
        .body(b"half an upload".to_vec())
        .send()
        .unwrap();
    assert_eq!(patched.status(), 202);

    assert_eq!(
        delete(&format!("{url}/v2/charts/web/manifests/1.0.0")).status(),
        202
    );
    assert_eq!(
        delete(&format!("{url}/v2/charts/other/manifests/1.0.0")).status(),
        202
    );

    let blob_file = |digest: &str| format!(".oci-blob-sha256-{}", &digest["sha256:".len()..]);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !stored(&storage, &blob_file(&abandoned)).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "never collected: {}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // Give the run that removed it time to finish.
    std::thread::sleep(Duration::from_secs(1));
    for gone in [&other_config, &web_manifest, &other_manifest, &abandoned] {
        assert!(
            stored(&storage, &blob_file(gone)).is_empty(),
            "{gone} stayed"
        );
    }
    for kept in [&shared_config, &kept_config, &digest_of(notes.as_bytes())] {
        assert_eq!(
            stored(&storage, &blob_file(kept)).len(),
            1,
            "{kept} removed"
        );
    }
    assert!(stored(&storage, ".oci-manifest-web-").is_empty());
    assert_eq!(stored(&storage, ".oci-manifest-kept-").len(), 1);
    assert_eq!(manifest(url, "charts/kept", "1.0.0").status(), 200);
    assert_eq!(manifest(url, "charts/web", "notes").status(), 200);
    assert_eq!(
        error_code(client().get(&session).send().unwrap()),
        (404, "BLOB_UPLOAD_UNKNOWN".into())
    );
    assert!(
        server.log().contains("registry garbage collected"),
        "{}",
        server.log()
    );
}

#[test]
fn the_upload_directory_a_killed_server_left_is_removed_at_start() {
    let ctx = TestContext::new();
    let storage = ctx.path("store");
    let temp = ctx.path("tmp");
    std::fs::create_dir_all(&temp).unwrap();
    let start_in_temp = || {
        let mut command = ctx.chartkit();
        command.env("TMPDIR", &temp);
        std::fs::create_dir_all(&storage).unwrap();
        ServeProcess::start(command, &[storage.to_str().unwrap()], ctx.dir())
    };
    let upload_dirs = || stored(&temp, "chartkit-oci-uploads-");
    let mut first = start_in_temp();
    let session = start_upload(&first.url, "charts/web");
    let patched = client()
        .patch(&session)
        .body(vec![1u8; 5000])
        .send()
        .unwrap();
    assert_eq!(patched.status(), 202);
    let left = upload_dirs();
    assert_eq!(left.len(), 1);
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    assert_eq!(upload_dirs(), left, "SIGKILL leaves the directory");

    let second = start_in_temp();
    let now = upload_dirs();
    assert_eq!(now.len(), 1, "{now:?}");
    assert_ne!(now, left);
    assert!(
        second.log().contains("did not stop cleanly"),
        "{}",
        second.log()
    );
}

#[test]
fn registry_uploads_take_upload_turns_and_keep_within_the_size_limit() {
    let ctx = TestContext::new();
    let server = ServeProcess::start_on(
        &ctx,
        &ctx.path("store"),
        &["--max-concurrent-uploads", "1", "--max-upload-size", "300"],
    );
    let url = server.url.clone();
    let session = start_upload(&url, "charts/web");
    // A chunk whose body arrives slowly holds the only upload turn...
    let location = session.trim_start_matches(&url).to_owned();
    let mut slow = std::net::TcpStream::connect(server.host()).unwrap();
    use std::io::Write;
    write!(
        slow,
        "PATCH {location} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/octet-stream\r\nContent-Length: 200\r\n\r\n",
        server.host()
    )
    .unwrap();
    slow.write_all(&[0u8; 10]).unwrap();
    slow.flush().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    // ...so a monolithic blob upload waits its 10 seconds and gets 503.
    let started = std::time::Instant::now();
    let waited = client()
        .post(format!(
            "{url}/v2/charts/web/blobs/uploads/?digest={}",
            digest_of(b"x")
        ))
        .body(b"x".to_vec())
        .send()
        .unwrap();
    assert_eq!(waited.status(), 503);
    assert!(started.elapsed() >= Duration::from_secs(9));
    slow.write_all(&[0u8; 190]).unwrap();
    drop(slow);
    std::thread::sleep(Duration::from_millis(300));
    // A manifest is an upload too: over --max-upload-size, 413.
    let config = br#"{"name":"web","version":"1.0.0","apiVersion":"v2"}"#;
    put_blob(&url, "charts/web", config);
    let big = chart_manifest(config, &[7u8; 100]).replace(
        "\"schemaVersion\"",
        &format!("\"padding\":\"{}\",\"schemaVersion\"", "x".repeat(300)),
    );
    let refused = put_manifest(&url, "charts/web", "1.0.0", &big);
    assert_eq!(refused.status(), 413);
}

#[test]
fn the_token_flow_serves_helm_and_skopeo_with_credentials() {
    const NAME: &str = "the_token_flow_serves_helm_and_skopeo_with_credentials";
    let ctx = TestContext::new();
    let htpasswd = ctx.path("htpasswd");
    write_htpasswd(&htpasswd, &[("ci", "let-me-in")]);
    let storage = ctx.path("store");
    let server = ServeProcess::start_on(
        &ctx,
        &storage,
        &["--basic-auth-file", htpasswd.to_str().unwrap()],
    );
    let url = server.url.as_str();
    let realm = format!("{url}/v2/token");

    // The version check names the token service.
    let ping = client().get(format!("{url}/v2/")).send().unwrap();
    assert_eq!(
        ping.headers()["www-authenticate"],
        format!("Bearer realm=\"{realm}\",service=\"{}\"", server.host())
    );
    assert_eq!(error_code(ping), (401, "UNAUTHORIZED".into()));
    let token = |credentials: Option<(&str, &str)>, scope: &str| {
        let mut request = client().get(format!("{realm}?service={}&scope={scope}", server.host()));
        if let Some((user, password)) = credentials {
            request = request.basic_auth(user, Some(password));
        }
        request.send().unwrap()
    };
    let push_scope = "repository:charts/web:pull,push";
    // A user's token pushes; an anonymous one only pulls; a wrong password gets none.
    let answer: serde_json::Value = token(Some(("ci", "let-me-in")), push_scope).json().unwrap();
    assert_eq!(answer["expires_in"], 300);
    let pusher = answer["token"].as_str().unwrap().to_owned();
    let started = client()
        .post(format!("{url}/v2/charts/web/blobs/uploads/"))
        .bearer_auth(&pusher)
        .send()
        .unwrap();
    assert_eq!(started.status(), 202);
    let elsewhere = client()
        .post(format!("{url}/v2/charts/api/blobs/uploads/"))
        .bearer_auth(&pusher)
        .send()
        .unwrap();
    assert!(
        elsewhere.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .ends_with("error=\"insufficient_scope\""),
        "{:?}",
        elsewhere.headers()
    );
    assert_eq!(error_code(elsewhere), (401, "UNAUTHORIZED".into()));
    let anonymous: serde_json::Value = token(None, push_scope).json().unwrap();
    let reader = anonymous["token"].as_str().unwrap();
    let refused = client()
        .post(format!("{url}/v2/charts/web/blobs/uploads/"))
        .bearer_auth(reader)
        .send()
        .unwrap();
    assert_eq!(error_code(refused), (401, "UNAUTHORIZED".into()));
    assert_eq!(
        client()
            .get(format!("{url}/v2/"))
            .bearer_auth(reader)
            .send()
            .unwrap()
            .status(),
        200
    );
    assert_eq!(
        error_code(token(Some(("ci", "wrong")), push_scope)),
        (401, "UNAUTHORIZED".into())
    );
    // Another replica over the same storage accepts the token (the key is in the storage).
    let replica = ServeProcess::start_on(
        &ctx,
        &storage,
        &["--basic-auth-file", htpasswd.to_str().unwrap()],
    );
    let on_replica = client()
        .post(format!("{}/v2/charts/web/blobs/uploads/", replica.url))
        .bearer_auth(&pusher)
        .send()
        .unwrap();
    assert_eq!(on_replica.status(), 202);
    drop(replica);
    // The anonymous token's claims under the user's token's MAC are no token.
    let forged = format!(
        "{}.{}",
        reader.split_once('.').unwrap().0,
        pusher.split_once('.').unwrap().1
    );
    let refused = client()
        .post(format!("{url}/v2/charts/web/blobs/uploads/"))
        .bearer_auth(forged)
        .send()
        .unwrap();
    assert_eq!(refused.status(), 401);

    // chartkit's own client: login, push and pull through tokens.
    let base = format!("oci://{}/charts", server.host());
    let ours = configmap_package(&ctx, &mut ctx.chartkit(), "ours", "0.3.0");
    login(&mut ctx.chartkit(), &server.host(), "ci", "let-me-in");
    let pushed = run_ok(
        ctx.chartkit()
            .arg("push")
            .arg(&ours)
            .args([&base, "--plain-http"]),
    );
    assert!(index_yaml(url).contains("version: 0.3.0"));
    let pulled = run_ok(
        ctx.chartkit()
            .args(["pull", &format!("{base}/ours"), "--version", "0.3.0"])
            .args(["--plain-http", "-d"])
            .arg(ctx.path("ours-pulled")),
    );
    assert_eq!(
        chartkit_tests::digest_line(&pulled),
        chartkit_tests::digest_line(&pushed)
    );

    let Some(helm) = peers::helm_or_skip(NAME) else {
        return;
    };
    let helm = || ctx.hermetic(&helm);
    let pkg = configmap_package(&ctx, &mut helm(), "web", "0.1.0");
    let logged_in = login(&mut helm(), &server.host(), "ci", "let-me-in");
    assert!(
        stderr(&logged_in).contains("Login Succeeded"),
        "{}",
        stderr(&logged_in)
    );
    let pushed = run_ok(helm().arg("push").arg(&pkg).args([&base, "--plain-http"]));
    let out = ctx.path("pulled");
    std::fs::create_dir_all(&out).unwrap();
    let pulled = run_ok(
        helm()
            .args(["pull", &format!("{base}/web"), "--version", "0.1.0"])
            .args(["--plain-http", "-d"])
            .arg(&out),
    );
    assert_eq!(
        chartkit_tests::digest_line(&pulled),
        chartkit_tests::digest_line(&pushed)
    );
    // A wrong password does not log in.
    let wrong = helm()
        .args(["registry", "login", &server.host(), "--username", "ci"])
        .args(["--password", "wrong", "--plain-http"])
        .output()
        .unwrap();
    assert!(!wrong.status.success());

    let Some(skopeo) = chartkit_tests::on_path("skopeo") else {
        chartkit_tests::skip(NAME, "skopeo is not installed");
        return;
    };
    let image = format!("docker://{}/charts/web:0.1.0", server.host());
    let copied = ctx.path("copied");
    run_ok(Command::new(&skopeo).args([
        "copy",
        "--src-tls-verify=false",
        &image,
        &format!("dir:{}", copied.display()),
    ]));
    // skopeo deletes only with credentials, through a token it asks for.
    let anonymous = Command::new(&skopeo)
        .args(["delete", "--tls-verify=false", &image])
        .output()
        .unwrap();
    assert!(!anonymous.status.success());
    assert!(index_yaml(url).contains("web"));
    run_ok(Command::new(&skopeo).args([
        "delete",
        "--tls-verify=false",
        "--creds",
        "ci:let-me-in",
        &image,
    ]));
    assert!(!index_yaml(url).contains("web"));
    assert!(server.log().contains("chart version deleted"));
}

#[test]
fn docker_registry_proxies_it_skopeo_syncs_both_ways_and_helm_resolves_oci_dependencies() {
    const NAME: &str =
        "docker_registry_proxies_it_skopeo_syncs_both_ways_and_helm_resolves_oci_dependencies";
    let ctx = TestContext::new();
    let Some(helm) = peers::helm_or_skip(NAME) else {
        return;
    };
    let helm = || ctx.hermetic(&helm);
    let server = ServeProcess::start_on(&ctx, &ctx.path("store"), &[]);
    let pkg = configmap_package(&ctx, &mut helm(), "web", "0.1.0");
    // Uploaded through ChartMuseum's API: the registry face's manifest is built for it.
    let saved = client()
        .post(format!("{}/api/charts", server.url))
        .body(std::fs::read(&pkg).unwrap())
        .send()
        .unwrap();
    assert_eq!(saved.status(), 201);
    let digest = digest_of_tag(&server.url, "charts/web", "0.1.0");

    // docker-registry as a pull-through cache of chartkit serve: helm pulls through it.
    let options = chartkit_tests::registry::RegistryOptions {
        proxy: Some(server.url.clone()),
        ..Default::default()
    };
    let Some(proxy) =
        chartkit_tests::registry::RegistryProcess::start_or_skip(NAME, ctx.dir(), &options)
    else {
        return;
    };
    let out = ctx.path("through-proxy");
    std::fs::create_dir_all(&out).unwrap();
    let pulled = run_ok(
        helm()
            .args(["pull", &proxy.oci("charts/web"), "--version", "0.1.0"])
            .args(["--plain-http", "-d"])
            .arg(&out),
    );
    assert_eq!(chartkit_tests::digest_line(&pulled), digest);
    assert_eq!(
        std::fs::read(out.join("web-0.1.0.tgz")).unwrap(),
        std::fs::read(&pkg).unwrap()
    );

    // skopeo sync: chartkit serve into a plain registry, and a chart pushed there back.
    let Some(skopeo) = chartkit_tests::on_path("skopeo") else {
        chartkit_tests::skip(NAME, "skopeo is not installed");
        return;
    };
    let Some(registry) = chartkit_tests::registry::RegistryProcess::start_or_skip(
        NAME,
        ctx.dir(),
        &Default::default(),
    ) else {
        return;
    };
    let sync = |from: String, to: String| {
        run_ok(Command::new(&skopeo).args([
            "sync",
            "--src",
            "docker",
            "--dest",
            "docker",
            "--src-tls-verify=false",
            "--dest-tls-verify=false",
            &from,
            &to,
        ]));
    };
    sync(
        format!("{}/charts/web", server.host()),
        format!("{}/mirror", registry.host),
    );
    let mirrored = client()
        .get(format!(
            "http://{}/v2/mirror/web/manifests/0.1.0",
            registry.host
        ))
        .header("Accept", MANIFEST_TYPE)
        .send()
        .unwrap();
    assert_eq!(mirrored.status(), 200);
    assert_eq!(digest_of(&mirrored.bytes().unwrap()), digest);
    let api = configmap_package(&ctx, &mut helm(), "api", "2.0.0");
    let pushed = run_ok(
        helm()
            .arg("push")
            .arg(&api)
            .args([&registry.oci("elsewhere"), "--plain-http"]),
    );
    sync(
        format!("{}/elsewhere/api", registry.host),
        format!("{}/charts", server.host()),
    );
    assert!(index_yaml(&server.url).contains("version: 2.0.0"));
    assert_eq!(
        digest_of_tag(&server.url, "charts/api", "2.0.0"),
        chartkit_tests::digest_line(&pushed)
    );

    // A chart depending on `oci://…/charts`: helm dependency update fetches from it.
    let app = ctx.path("app");
    std::fs::create_dir_all(app.join("templates")).unwrap();
    std::fs::write(
        app.join("Chart.yaml"),
        format!(
            "apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n  - name: web\n    version: ^0.1.0\n    repository: oci://{}/charts\n",
            server.host()
        ),
    )
    .unwrap();
    run_ok(
        helm()
            .args(["dependency", "update", "--plain-http"])
            .arg(&app),
    );
    assert_eq!(
        std::fs::read(app.join("charts/web-0.1.0.tgz")).unwrap(),
        std::fs::read(&pkg).unwrap()
    );
    let lock = std::fs::read_to_string(app.join("Chart.lock")).unwrap();
    assert!(
        lock.contains(&format!("repository: oci://{}/charts", server.host())),
        "{lock}"
    );
}
