//! ChartMuseum's repository behaviours with chartkit run as `chartmuseum`: a `.prov`
//! uploaded before its package, the storage and per-chart limits, the indexer's limit,
//! `/artifacthub-repo.yml`, the metrics under ChartMuseum's names and the settings that
//! chartkit honours by what it already does; each used as a deployment or a helm user
//! meets it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use chartkit_tests::TestContext;
use chartkit_tests::chartmuseum::command as chartmuseum;
use chartkit_tests::server::client;
use chartkit_tests::server::{ServeProcess, chart_package};

fn post(url: &str, body: Vec<u8>) -> (u16, String) {
    let response = client().post(url).body(body).send().expect("upload");
    (response.status().as_u16(), response.text().unwrap())
}

fn get(url: &str) -> reqwest::blocking::Response {
    client().get(url).send().expect("GET")
}

fn run(command: &mut Command) -> Output {
    command.output().expect("run command")
}

fn run_ok(command: &mut Command) -> String {
    let output = run(command);
    assert!(
        output.status.success(),
        "{command:?}: {}",
        chartkit_tests::stderr(&output)
    );
    chartkit_tests::stdout(&output)
}

/// `chartmuseum` with local storage in `storage` and the given environment.
fn start(ctx: &TestContext, storage: &Path, env: &[(&str, &str)]) -> ServeProcess {
    let mut command = chartmuseum(ctx);
    command
        .env("STORAGE", "local")
        .env("STORAGE_LOCAL_ROOTDIR", storage)
        .envs(env.iter().copied());
    ServeProcess::spawn(command, ctx.dir())
}

/// Adds the server as helm's repository `cm`; `None` (the test skipped) without helm.
fn helm_repo(ctx: &TestContext, url: &str, test: &str) -> Option<()> {
    chartkit_tests::peers::helm_or_skip(test)?;
    run_ok(ctx.helm().unwrap().args(["repo", "add", "cm", url]));
    Some(())
}

fn stored(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A chart signed by chartkit with a new key; returns the package, its `.prov` and the
/// public keyring.
fn signed_chart(ctx: &TestContext) -> (PathBuf, PathBuf, PathBuf) {
    let keys = ctx.path("keys");
    run_ok(
        ctx.chartkit()
            .args(["key", "generate", "--name", "Museum Signer"])
            .args(["--email", "museum@example.com", "-o"])
            .arg(&keys),
    );
    run_ok(ctx.chartkit().args(["create", "signed"]));
    let out = ctx.path("packaged");
    run_ok(
        ctx.chartkit()
            .args(["package", "signed", "--sign", "--key", "museum@example.com"])
            .arg("--keyring")
            .arg(keys.join("secret.asc"))
            .arg("-d")
            .arg(&out),
    );
    let package = out.join("signed-0.1.0.tgz");
    (
        package.clone(),
        out.join("signed-0.1.0.tgz.prov"),
        keys.join("public.asc"),
    )
}

/// helm reads binary keyrings only: GnuPG converts the exported key, if installed.
fn binary_keyring(ctx: &TestContext, armored: &Path) -> Option<PathBuf> {
    let gpg = chartkit_tests::on_path("gpg")?;
    let home = ctx.path("gnupg");
    std::fs::create_dir_all(&home).unwrap();
    run_ok(
        Command::new(&gpg)
            .env("GNUPGHOME", &home)
            .args(["--batch", "--import"])
            .arg(armored),
    );
    let exported = run(Command::new(&gpg)
        .env("GNUPGHOME", &home)
        .args(["--batch", "--export"]));
    assert!(exported.status.success());
    let keyring = ctx.path("pubring.gpg");
    std::fs::write(&keyring, exported.stdout).unwrap();
    Some(keyring)
}

#[test]
fn a_prov_posted_before_its_package_is_served_with_it_to_helm() {
    let ctx = TestContext::new();
    let (package, prov, public) = signed_chart(&ctx);
    let storage = ctx.path("storage");
    let server = start(&ctx, &storage, &[]);

    // ChartMuseum takes the .prov first (as `curl --data-binary @x.tgz.prov .../api/prov`).
    let prov_bytes = std::fs::read(&prov).unwrap();
    let (status, body) = post(&format!("{}/api/prov", server.url), prov_bytes.clone());
    assert_eq!((status, body.as_str()), (201, r#"{"saved":true}"#));
    // Alone it signs nothing that is served.
    let early = get(&format!("{}/charts/signed-0.1.0.tgz.prov", server.url));
    assert_eq!(early.status(), 404);
    let (status, body) = post(
        &format!("{}/api/charts", server.url),
        std::fs::read(&package).unwrap(),
    );
    assert_eq!((status, body.as_str()), (201, r#"{"saved":true}"#));
    assert_eq!(
        stored(&storage),
        ["signed-0.1.0.tgz", "signed-0.1.0.tgz.prov"]
    );
    let served = get(&format!("{}/charts/signed-0.1.0.tgz.prov", server.url));
    assert_eq!(served.status(), 200);
    assert_eq!(served.bytes().unwrap().to_vec(), prov_bytes);

    let Some(()) = helm_repo(&ctx, &server.url, "chartmuseum_behaviours prov") else {
        return;
    };
    let pulled = ctx.path("pulled");
    std::fs::create_dir_all(&pulled).unwrap();
    let mut pull = ctx.helm().unwrap();
    pull.args(["pull", "cm/signed", "--prov", "-d"])
        .arg(&pulled);
    run_ok(&mut pull);
    assert_eq!(
        std::fs::read(pulled.join("signed-0.1.0.tgz.prov")).unwrap(),
        prov_bytes
    );
    let Some(keyring) = binary_keyring(&ctx, &public) else {
        chartkit_tests::skip(
            "chartmuseum_behaviours prov verify",
            "gpg is not installed (apt-get install gnupg)",
        );
        return;
    };
    let verified = ctx.path("verified");
    std::fs::create_dir_all(&verified).unwrap();
    let out = run_ok(
        ctx.helm()
            .unwrap()
            .args(["pull", "cm/signed", "--verify", "--keyring"])
            .arg(&keyring)
            .arg("-d")
            .arg(&verified),
    );
    assert!(out.contains("Museum Signer"), "{out}");
}

#[test]
fn max_storage_objects_answers_507_as_chartmuseum_does() {
    let ctx = TestContext::new();
    let storage = ctx.path("storage");
    let server = start(
        &ctx,
        &storage,
        &[("MAX_STORAGE_OBJECTS", "2"), ("ALLOW_OVERWRITE", "true")],
    );
    let url = format!("{}/api/charts", server.url);
    assert_eq!(post(&url, chart_package("a", "1.0.0")).0, 201);
    assert_eq!(post(&url, chart_package("b", "1.0.0")).0, 201);
    let (status, body) = post(&url, chart_package("c", "1.0.0"));
    assert_eq!(status, 507, "{body}");
    let error: serde_json::Value = serde_json::from_str(&body).unwrap();
    let message = error["error"].as_str().unwrap();
    assert!(
        message.starts_with("repo has reached storage limit: it holds 2 of the 2 objects"),
        "{message}"
    );
    // A full repository still takes a replacement.
    assert_eq!(post(&url, chart_package("a", "1.0.0")).0, 201);
    assert_eq!(stored(&storage), ["a-1.0.0.tgz", "b-1.0.0.tgz"]);
}

#[test]
fn per_chart_limit_keeps_the_latest_uploads_helm_sees() {
    let ctx = TestContext::new();
    let storage = ctx.path("storage");
    let server = start(&ctx, &storage, &[("PER_CHART_LIMIT", "2")]);
    let url = format!("{}/api/charts", server.url);
    // The version uploaded longest ago goes, whatever its number.
    for version in ["2.0.0", "3.0.0", "1.0.0"] {
        assert_eq!(post(&url, chart_package("demo", version)).0, 201);
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(post(&url, chart_package("other", "1.0.0")).0, 201);
    assert_eq!(
        stored(&storage),
        ["demo-1.0.0.tgz", "demo-3.0.0.tgz", "other-1.0.0.tgz"]
    );
    assert_eq!(
        get(&format!("{}/api/charts/demo/2.0.0", server.url)).status(),
        404
    );

    let Some(()) = helm_repo(&ctx, &server.url, "chartmuseum_behaviours per-chart") else {
        return;
    };
    let listed =
        run_ok(
            ctx.helm()
                .unwrap()
                .args(["search", "repo", "cm/demo", "--versions", "-o", "json"]),
        );
    let listed: serde_json::Value = serde_json::from_str(&listed).unwrap();
    let versions: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["3.0.0", "1.0.0"]);
}

#[test]
fn index_limit_reads_the_whole_storage_a_few_at_a_time() {
    let ctx = TestContext::new();
    let storage = ctx.path("storage");
    std::fs::create_dir_all(&storage).unwrap();
    for i in 0..6 {
        let version = format!("1.0.{i}");
        std::fs::write(
            storage.join(format!("many-{version}.tgz")),
            chart_package("many", &version),
        )
        .unwrap();
    }
    let server = start(&ctx, &storage, &[("INDEX_LIMIT", "1")]);
    assert!(
        server
            .startup
            .iter()
            .any(|line| line.starts_with("Serving 6 chart versions")),
        "{:?}",
        server.startup
    );
    let index = get(&format!("{}/index.yaml", server.url)).text().unwrap();
    assert_eq!(index.matches("- charts/many-1.0.").count(), 6, "{index}");
    // A negative one would not start ChartMuseum's indexer.
    let mut command = chartmuseum(&ctx);
    command
        .env("STORAGE", "local")
        .env("STORAGE_LOCAL_ROOTDIR", &storage)
        .env("INDEX_LIMIT", "-1");
    let output = run(&mut command);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        chartkit_tests::stderr(&output)
            .starts_with("Error: INDEX_LIMIT is `-1`, not a whole number, 0 or more"),
        "{}",
        chartkit_tests::stderr(&output)
    );
}

#[test]
fn artifacthub_repo_yml_names_the_repository_id() {
    let ctx = TestContext::new();
    let id = "5d3a9f44-8e2b-4b8c-9a59-3d1e4c0f6a11";
    let server = start(&ctx, &ctx.path("with-id"), &[("ARTIFACT_HUB_REPO_ID", id)]);
    let response = get(&format!("{}/artifacthub-repo.yml", server.url));
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "application/x-yaml"
    );
    assert_eq!(response.text().unwrap(), format!("repositoryID: {id}\n"));

    let without = start(&ctx, &ctx.path("without-id"), &[]);
    let response = get(&format!("{}/artifacthub-repo.yml", without.url));
    assert_eq!(response.status(), 404);

    // Behind the server's credentials as every read is (ChartMuseum's pull action).
    let guarded = start(
        &ctx,
        &ctx.path("guarded"),
        &[
            ("ARTIFACT_HUB_REPO_ID", id),
            ("BASIC_AUTH_USER", "u"),
            ("BASIC_AUTH_PASS", "p"),
        ],
    );
    let url = format!("{}/artifacthub-repo.yml", guarded.url);
    assert_eq!(get(&url).status(), 401);
    let response = client()
        .get(&url)
        .basic_auth("u", Some("p"))
        .send()
        .unwrap();
    assert_eq!(response.status(), 200);
}

/// The value of the series `name{labels}` in a Prometheus exposition.
fn sample(metrics: &str, series: &str) -> Option<String> {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map(str::to_owned)
}

#[test]
fn metrics_under_chartmuseums_names_with_enable_metrics_only() {
    let ctx = TestContext::new();
    let server = start(
        &ctx,
        &ctx.path("storage"),
        &[("ENABLE_METRICS", "true"), ("DISABLE_METRICS", "true")],
    );
    // The Helm chart's DISABLE_METRICS is deprecated: ChartMuseum warns and ignores it.
    assert!(
        server.log().contains(
            "level=WARN msg=\"The configuration option disable-metrics has been deprecated\""
        ),
        "{}",
        server.log()
    );
    let url = format!("{}/api/charts", server.url);
    for (name, version) in [("a", "1.0.0"), ("a", "2.0.0"), ("b", "1.0.0")] {
        assert_eq!(post(&url, chart_package(name, version)).0, 201);
    }
    assert_eq!(get(&format!("{}/no-such-page", server.url)).status(), 404);
    let host = server.url.trim_start_matches("http://").to_owned();

    let helm = helm_repo(&ctx, &server.url, "chartmuseum_behaviours metrics").is_some();
    if helm {
        let pulled = ctx.path("pulled");
        std::fs::create_dir_all(&pulled).unwrap();
        run_ok(
            ctx.helm()
                .unwrap()
                .args(["pull", "cm/a", "--version", "1.0.0", "-d"])
                .arg(&pulled),
        );
    }

    let response = get(&format!("{}/metrics", server.url));
    assert_eq!(response.status(), 200);
    let metrics = response.text().unwrap();
    for family in [
        "# TYPE chartmuseum_charts_served_total gauge",
        "# TYPE chartmuseum_chart_versions_served_total gauge",
        "# TYPE chartmuseum_requests_total counter",
        "# TYPE chartmuseum_request_duration_seconds histogram",
        "# TYPE chartmuseum_request_size_bytes summary",
        "# TYPE chartmuseum_response_size_bytes summary",
        // chartkit's own, beside them.
        "# TYPE chartkit_uploads_total counter",
        // The Go client's process collector, which dashboards chart too.
        "# TYPE process_resident_memory_bytes gauge",
        "# TYPE process_cpu_seconds_total counter",
        "# TYPE process_open_fds gauge",
    ] {
        assert!(metrics.contains(family), "{family} missing:\n{metrics}");
    }
    assert_eq!(
        sample(&metrics, "chartmuseum_charts_served_total{repo=\"\"}").as_deref(),
        Some("2")
    );
    assert_eq!(
        sample(
            &metrics,
            "chartmuseum_chart_versions_served_total{repo=\"\"}"
        )
        .as_deref(),
        Some("3")
    );
    let handler = "helm.sh/chartmuseum/pkg/chartmuseum/router.(*Router).rootHandler-fm";
    let uploads = format!(
        "chartmuseum_requests_total{{code=\"201\",handler=\"{handler}\",host=\"{host}\",method=\"POST\",url=\"/:repoapi/charts\"}}"
    );
    assert_eq!(
        sample(&metrics, &uploads).as_deref(),
        Some("3"),
        "{metrics}"
    );
    // Not found is not counted, as ChartMuseum's middleware leaves it out.
    assert!(!metrics.contains("no-such-page"), "{metrics}");
    if helm {
        let index = format!(
            "chartmuseum_requests_total{{code=\"200\",handler=\"{handler}\",host=\"{host}\",method=\"GET\",url=\"/:repoindex.yaml\"}}"
        );
        assert!(sample(&metrics, &index).is_some(), "{metrics}");
        let download = "chartmuseum_request_duration_seconds_count{code=\"200\",method=\"GET\",url=\"/:repocharts/:filename\"}";
        assert_eq!(
            sample(&metrics, download).as_deref(),
            Some("1"),
            "{metrics}"
        );
    }

    // Scrapers send no credentials, and look at the root whatever the context path.
    let guarded = start(
        &ctx,
        &ctx.path("guarded"),
        &[
            ("ENABLE_METRICS", "true"),
            ("BASIC_AUTH_USER", "u"),
            ("BASIC_AUTH_PASS", "p"),
            ("CONTEXT_PATH", "/cm"),
        ],
    );
    let root = guarded.url.trim_end_matches("/cm");
    assert_eq!(get(&format!("{}/index.yaml", guarded.url)).status(), 401);
    let scraped = get(&format!("{root}/metrics"));
    assert_eq!(scraped.status(), 200);
    assert!(
        scraped
            .text()
            .unwrap()
            .contains("chartmuseum_charts_served_total{repo=\"\"} 0")
    );

    // Without --enable-metrics ChartMuseum has no /metrics route.
    let quiet = start(&ctx, &ctx.path("quiet"), &[("DISABLE_METRICS", "false")]);
    assert_eq!(get(&format!("{}/metrics", quiet.url)).status(), 404);
}

#[test]
fn chartkit_serve_takes_the_same_behaviours_under_its_own_flags() {
    let ctx = TestContext::new();
    let storage = ctx.path("storage");
    std::fs::create_dir_all(&storage).unwrap();
    let server = ServeProcess::start(
        ctx.chartkit(),
        &[
            storage.to_str().unwrap(),
            "--per-chart-limit",
            "1",
            "--max-storage-objects",
            "5",
            "--artifact-hub-repo-id",
            "abc",
            "--disable-metrics",
        ],
        ctx.dir(),
    );
    let url = format!("{}/api/charts", server.url);
    assert_eq!(post(&url, chart_package("one", "1.0.0")).0, 201);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(post(&url, chart_package("one", "1.1.0")).0, 201);
    assert_eq!(stored(&storage), ["one-1.1.0.tgz"]);
    assert_eq!(
        get(&format!("{}/artifacthub-repo.yml", server.url))
            .text()
            .unwrap(),
        "repositoryID: abc\n"
    );
    assert_eq!(get(&format!("{}/metrics", server.url)).status(), 404);
    // Without --disable-metrics chartkit serves both sets of names.
    let open = ServeProcess::start(ctx.chartkit(), &[storage.to_str().unwrap()], ctx.dir());
    let metrics = get(&format!("{}/metrics", open.url)).text().unwrap();
    assert!(metrics.contains("chartkit_chart_versions 1"), "{metrics}");
    assert!(
        metrics.contains("chartmuseum_chart_versions_served_total{repo=\"\"} 1"),
        "{metrics}"
    );
}

#[test]
fn settings_chartkit_honours_by_what_it_does_and_a_short_write_timeout() {
    let ctx = TestContext::new();
    let storage = ctx.path("storage");
    // ChartMuseum's state file and the timestamp drift it tolerates concern a cached index
    // chartkit does not keep; a longer write timeout asks for what chartkit does.
    let server = start(
        &ctx,
        &storage,
        &[
            ("DISABLE_STATEFILES", "false"),
            ("STORAGE_TIMESTAMP_TOLERANCE", "2s"),
            ("WRITE_TIMEOUT", "300"),
        ],
    );
    let url = format!("{}/api/charts", server.url);
    assert_eq!(post(&url, chart_package("a", "1.0.0")).0, 201);
    assert_eq!(get(&format!("{}/index.yaml", server.url)).status(), 200);
    // No index-cache.yaml is written beside the packages.
    assert_eq!(stored(&storage), ["a-1.0.0.tgz"]);

    let mut command = chartmuseum(&ctx);
    command
        .env("STORAGE", "local")
        .env("STORAGE_LOCAL_ROOTDIR", &storage)
        .env("WRITE_TIMEOUT", "5");
    let output = run(&mut command);
    let stderr = chartkit_tests::stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(
            "Error: WRITE_TIMEOUT = `5` is not supported: chartkit never cuts a response short"
        ),
        "{stderr}"
    );
}

#[test]
fn a_form_field_name_of_the_deployments_own_is_taken_besides_chart() {
    let ctx = TestContext::new();
    let storage = ctx.path("storage");
    let server = start(
        &ctx,
        &storage,
        &[
            ("CHART_POST_FORM_FIELD_NAME", "package"),
            ("PROV_POST_FORM_FIELD_NAME", "signature"),
        ],
    );
    let upload = |field: &str, name: &str| {
        let form = reqwest::blocking::multipart::Form::new().part(
            field.to_owned(),
            reqwest::blocking::multipart::Part::bytes(chart_package(name, "1.0.0"))
                .file_name(format!("{name}-1.0.0.tgz")),
        );
        let response = client()
            .post(format!("{}/api/charts", server.url))
            .multipart(form)
            .send()
            .unwrap();
        response.status().as_u16()
    };
    assert_eq!(upload("package", "custom"), 201);
    assert_eq!(upload("chart", "usual"), 201);
    assert_eq!(upload("file", "stray"), 400);
    assert_eq!(stored(&storage), ["custom-1.0.0.tgz", "usual-1.0.0.tgz"]);
}

#[test]
fn json_index_is_read_by_helm_as_the_yaml_one() {
    let ctx = TestContext::new();
    let server = start(&ctx, &ctx.path("storage"), &[("JSON_INDEX", "true")]);
    let url = format!("{}/api/charts", server.url);
    for version in ["1.0.0", "1.1.0"] {
        assert_eq!(post(&url, chart_package("jsonchart", version)).0, 201);
    }
    let response = get(&format!("{}/index.yaml", server.url));
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "application/x-yaml"
    );
    let etag = response.headers()["etag"].to_str().unwrap().to_owned();
    let text = response.text().unwrap();
    assert!(
        text.starts_with(r#"{"apiVersion":"v1","generated":""#),
        "{text}"
    );
    let index: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(index["entries"]["jsonchart"][0]["version"], "1.1.0");
    assert_eq!(index["serverInfo"], serde_json::json!({}));
    let again = client()
        .get(format!("{}/index.yaml", server.url))
        .header("If-None-Match", &etag)
        .send()
        .unwrap();
    assert_eq!(again.status(), 304);

    let Some(()) = helm_repo(&ctx, &server.url, "chartmuseum_behaviours json-index") else {
        return;
    };
    let found = run_ok(ctx.helm().unwrap().args([
        "search",
        "repo",
        "cm/jsonchart",
        "--versions",
        "-o",
        "json",
    ]));
    let found: serde_json::Value = serde_json::from_str(&found).unwrap();
    let versions: Vec<&str> = found
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["1.1.0", "1.0.0"]);
    let pulled = ctx.path("pulled");
    std::fs::create_dir_all(&pulled).unwrap();
    run_ok(
        ctx.helm()
            .unwrap()
            .args(["pull", "cm/jsonchart", "-d"])
            .arg(&pulled),
    );
    assert!(pulled.join("jsonchart-1.1.0.tgz").is_file());
}

#[test]
fn gen_index_prints_the_index_and_exits() {
    let ctx = TestContext::new();
    let storage = ctx.path("storage");
    std::fs::create_dir_all(&storage).unwrap();
    for version in ["1.0.0", "2.0.0"] {
        std::fs::write(
            storage.join(format!("gen-{version}.tgz")),
            chart_package("gen", version),
        )
        .unwrap();
    }
    std::fs::write(storage.join("broken-1.0.0.tgz"), b"not a chart").unwrap();
    let mut command = chartmuseum(&ctx);
    command
        .env("STORAGE", "local")
        .env("STORAGE_LOCAL_ROOTDIR", &storage)
        .env("CHART_URL", "https://charts.example.com")
        .arg("--gen-index");
    let output = run(&mut command);
    let stderr = chartkit_tests::stderr(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("file=broken-1.0.0.tgz"), "{stderr}");
    let index = chartkit_tests::stdout(&output);
    assert!(
        index.starts_with("apiVersion: v1\nentries:\n  gen:\n"),
        "{index}"
    );
    assert!(
        index.contains("- https://charts.example.com/charts/gen-2.0.0.tgz\n"),
        "{index}"
    );
    // What helm reads as a repository index.
    let Some(_) = chartkit_tests::peers::helm_or_skip("chartmuseum_behaviours gen-index") else {
        return;
    };
    let repo = ctx.path("static");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("index.yaml"), &index).unwrap();
    // helm loads it (strictly) to merge it into an index of its own.
    run_ok(
        ctx.helm()
            .unwrap()
            .args(["repo", "index"])
            .arg(&repo)
            .arg("--merge")
            .arg(repo.join("index.yaml")),
    );
    let merged = std::fs::read_to_string(repo.join("index.yaml")).unwrap();
    assert!(merged.contains("gen-1.0.0.tgz"), "{merged}");
}
