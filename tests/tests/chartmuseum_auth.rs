//! ChartMuseum's auth and transport settings, with chartkit run as ChartMuseum (through a
//! `chartmuseum` link, configured by ChartMuseum's environment variables) and as `chartkit
//! serve` with its own flags: scoped JWT bearer auth (`BEARER_AUTH`, tokens minted here
//! with an RSA key made by openssl), client certificates (`TLS_CA_CERT`, checked with
//! helm), CORS (`CORS_ALLOW_ORIGIN`) and JSON logs (`LOG_JSON`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use chartkit_tests::TestContext;
use chartkit_tests::server::client;
use chartkit_tests::server::{ServeProcess, chart_package};

const REALM: &str = "https://auth.example.test/oauth2/token";
const SERVICE: &str = "chartmuseum-test";

/// A `chartmuseum` command (a link to the built binary) in an empty environment, on an
/// ephemeral port of 127.0.0.1, with local storage in `storage`.
fn chartmuseum(ctx: &TestContext, storage: &Path) -> Command {
    let link = ctx.path("bin/chartmuseum");
    if !link.exists() {
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(chartkit_tests::chartkit_bin(), &link).unwrap();
    }
    let mut command = Command::new(link);
    command
        .current_dir(ctx.dir())
        .env_clear()
        .env("HOME", ctx.path(".home"))
        .env("NO_COLOR", "1")
        .env("LISTEN_HOST", "127.0.0.1")
        .env("PORT", "0")
        .env("STORAGE", "local")
        .env("STORAGE_LOCAL_ROOTDIR", storage);
    command
}

/// An RSA key made by openssl, as the authorization server's: its private key (PEM) and
/// a certificate for it (what `--auth-cert-path` takes).
fn auth_server_key(dir: &Path, name: &str, test: &str) -> Option<(Vec<u8>, PathBuf)> {
    let key = dir.join(format!("{name}.key"));
    let cert = dir.join(format!("{name}.pem"));
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .args(["-subj", "/CN=auth.example.test", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output();
    match made {
        Ok(output) if output.status.success() => Some((std::fs::read(&key).unwrap(), cert)),
        Ok(output) => panic!(
            "openssl failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ),
        Err(_) => {
            chartkit_tests::skip(test, "openssl is not installed");
            None
        }
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A token as ChartMuseum's auth library issues them: RS256, `access` entries of type
/// `artifact-repository`, and `iat`/`exp` (an hour by default).
fn token(key: &[u8], name: &str, actions: &[&str], exp: u64) -> String {
    let claims = serde_json::json!({
        "iat": unix_now(),
        "exp": exp,
        "access": [{"type": "artifact-repository", "name": name, "actions": actions}],
    });
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256),
        &claims,
        &jsonwebtoken::EncodingKey::from_rsa_pem(key).unwrap(),
    )
    .unwrap()
}

fn challenge(response: &reqwest::blocking::Response) -> String {
    response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

fn upload(url: &str, bearer: Option<&str>, name: &str) -> reqwest::blocking::Response {
    let mut request = client()
        .post(format!("{url}/api/charts"))
        .body(chart_package(name, "0.1.0"));
    if let Some(token) = bearer {
        request = request.bearer_auth(token);
    }
    request.send().unwrap()
}

fn get(url: &str, bearer: Option<&str>) -> reqwest::blocking::Response {
    let mut request = client().get(url);
    if let Some(token) = bearer {
        request = request.bearer_auth(token);
    }
    request.send().unwrap()
}

#[test]
fn bearer_tokens_grant_pull_and_push_on_the_repo_as_chartmuseum_checks_them() {
    let test = "bearer_tokens_grant_pull_and_push_on_the_repo_as_chartmuseum_checks_them";
    let ctx = TestContext::new();
    let Some((key, cert)) = auth_server_key(ctx.dir(), "auth", test) else {
        return;
    };
    let (forger, _) = auth_server_key(ctx.dir(), "forger", test).unwrap();
    let mut command = chartmuseum(&ctx, &ctx.path("charts"));
    command
        .env("BEARER_AUTH", "true")
        .env("AUTH_REALM", REALM)
        .env("AUTH_SERVICE", SERVICE)
        .env("AUTH_CERT_PATH", &cert);
    let server = ServeProcess::spawn(command, ctx.dir());
    let url = &server.url;
    let hour = unix_now() + 3600;
    let pull = token(&key, "repo", &["pull"], hour);
    let push = token(&key, "repo", &["pull", "push"], hour);

    // Without --auth-anonymous-get, reads need a token; the challenge names the scope.
    let anonymous = get(&format!("{url}/index.yaml"), None);
    assert_eq!(anonymous.status(), 401);
    assert_eq!(
        challenge(&anonymous),
        format!(
            "Bearer realm=\"{REALM}\",service=\"{SERVICE}\",scope=\"artifact-repository:repo:pull\""
        )
    );
    assert_eq!(anonymous.text().unwrap(), r#"{"error":"unauthorized"}"#);
    assert_eq!(get(&format!("{url}/index.yaml"), Some(&pull)).status(), 200);
    // The probes need nothing.
    assert_eq!(get(&format!("{url}/health"), None).status(), 200);

    // A pull-only token cannot upload: 401 (ChartMuseum never answers 403) asking for push.
    let refused = upload(url, Some(&pull), "denied");
    assert_eq!(refused.status(), 401);
    assert_eq!(
        challenge(&refused),
        format!(
            "Bearer realm=\"{REALM}\",service=\"{SERVICE}\",scope=\"artifact-repository:repo:push\""
        )
    );
    assert!(!ctx.path("charts/denied-0.1.0.tgz").exists());

    // push on `repo` uploads.
    let saved = upload(url, Some(&push), "granted");
    assert_eq!(saved.status(), 201);
    assert!(ctx.path("charts/granted-0.1.0.tgz").is_file());
    let index = get(&format!("{url}/index.yaml"), Some(&pull))
        .text()
        .unwrap();
    assert!(index.contains("granted"), "{index}");

    // Wrong signature, another repository's grant, an expired token, a malformed header:
    // 401 with the challenge.
    let forged = token(&forger, "repo", &["push"], hour);
    let elsewhere = token(&key, "other", &["push"], hour);
    let expired = token(&key, "repo", &["push"], unix_now() - 10);
    for bad in [
        forged.as_str(),
        elsewhere.as_str(),
        expired.as_str(),
        "not-a-jwt",
    ] {
        let response = upload(url, Some(bad), "bad");
        assert_eq!(response.status(), 401, "{bad}");
        assert!(
            challenge(&response).contains("scope=\"artifact-repository:repo:push\""),
            "{bad}"
        );
    }
    // Deleting is a push too.
    let delete = |token: &str| {
        client()
            .delete(format!("{url}/api/charts/granted/0.1.0"))
            .bearer_auth(token)
            .send()
            .unwrap()
            .status()
    };
    assert_eq!(delete(&pull), 401);
    assert_eq!(delete(&push), 200);
}

#[test]
fn serve_takes_jwt_auth_with_anonymous_reads_and_a_search_path() {
    let test = "serve_takes_jwt_auth_with_anonymous_reads_and_a_search_path";
    let ctx = TestContext::new();
    let Some((key, cert)) = auth_server_key(ctx.dir(), "auth", test) else {
        return;
    };
    let repo = ctx.path("repo");
    std::fs::create_dir(&repo).unwrap();
    // The grant is found by a custom JMESPath expression in a claim of its own.
    let server = ServeProcess::start(
        ctx.chartkit(),
        &[
            repo.to_str().unwrap(),
            "--auth-jwt-cert",
            cert.to_str().unwrap(),
            "--auth-jwt-realm",
            REALM,
            "--auth-jwt-service",
            SERVICE,
            "--auth-jwt-search-path",
            "grants.\"$NAMESPACE\"",
        ],
        ctx.dir(),
    );
    let url = &server.url;
    // Reads are anonymous without --auth-reads (ChartMuseum's --auth-anonymous-get).
    assert_eq!(get(&format!("{url}/index.yaml"), None).status(), 200);
    assert_eq!(upload(url, None, "x").status(), 401);
    let claims = serde_json::json!({"grants": {"repo": ["push"]}});
    let custom = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256),
        &claims,
        &jsonwebtoken::EncodingKey::from_rsa_pem(&key).unwrap(),
    )
    .unwrap();
    assert_eq!(upload(url, Some(&custom), "custom").status(), 201);
    // The default path's token means nothing here.
    let default_shape = token(&key, "repo", &["push"], unix_now() + 3600);
    assert_eq!(upload(url, Some(&default_shape), "other").status(), 401);

    // The flags name what is missing.
    let out = ctx
        .chartkit()
        .arg("serve")
        .arg(&repo)
        .args(["--auth-jwt-cert", "/nonexistent/auth.pem"])
        .args(["--auth-jwt-realm", REALM, "--auth-jwt-service", SERVICE])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("Error: ") && stderr.contains("/nonexistent/auth.pem"),
        "{stderr}"
    );
}

#[test]
fn tls_ca_cert_requires_client_certificates_that_helm_presents() {
    let ctx = TestContext::new();
    let pki = chartkit_tests::registry::test_pki(ctx.dir());
    let storage = ctx.path("charts");
    std::fs::create_dir(&storage).unwrap();
    std::fs::write(
        storage.join("mtls-0.1.0.tgz"),
        chart_package("mtls", "0.1.0"),
    )
    .unwrap();
    let mut command = chartmuseum(&ctx, &storage);
    command
        .env("TLS_CERT", &pki.server_cert)
        .env("TLS_KEY", &pki.server_key)
        .env("TLS_CA_CERT", &pki.ca);
    let server = ServeProcess::spawn(command, ctx.dir());
    assert!(server.url.starts_with("https://"), "{}", server.url);
    let index = format!("{}/index.yaml", server.url);
    let ca = reqwest::Certificate::from_pem(&std::fs::read(&pki.ca).unwrap()).unwrap();

    // Without a client certificate the handshake fails; with one the CA signed, it works.
    let anonymous = reqwest::blocking::Client::builder()
        .add_root_certificate(ca.clone())
        .build()
        .unwrap();
    assert!(anonymous.get(&index).send().is_err());
    let mut identity = std::fs::read(&pki.client_cert).unwrap();
    identity.extend(std::fs::read(&pki.client_key).unwrap());
    let presenting = reqwest::blocking::Client::builder()
        .add_root_certificate(ca)
        .identity(reqwest::Identity::from_pem(&identity).unwrap())
        .build()
        .unwrap();
    let answer = presenting.get(&index).send().unwrap();
    assert_eq!(answer.status(), 200);
    assert!(answer.text().unwrap().contains("mtls"));

    let Some(_) = chartkit_tests::peers::helm_or_skip(
        "tls_ca_cert_requires_client_certificates_that_helm_presents",
    ) else {
        return;
    };
    let refused = ctx
        .helm()
        .unwrap()
        .args(["repo", "add", "nocert", &server.url, "--ca-file"])
        .arg(&pki.ca)
        .output()
        .unwrap();
    assert!(
        !refused.status.success(),
        "helm repo add without a certificate succeeded"
    );
    let added = ctx
        .helm()
        .unwrap()
        .args(["repo", "add", "mtls", &server.url, "--ca-file"])
        .arg(&pki.ca)
        .arg("--cert-file")
        .arg(&pki.client_cert)
        .arg("--key-file")
        .arg(&pki.client_key)
        .output()
        .unwrap();
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let search = ctx
        .helm()
        .unwrap()
        .args(["search", "repo", "mtls/"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&search.stdout);
    assert!(listed.contains("mtls/mtls"), "{listed}");
}

#[test]
fn cors_allow_origin_is_sent_on_api_answers_as_chartmuseum_sends_it() {
    let ctx = TestContext::new();
    let storage = ctx.path("charts");
    std::fs::create_dir(&storage).unwrap();
    std::fs::write(storage.join("web-0.1.0.tgz"), chart_package("web", "0.1.0")).unwrap();
    let mut command = chartmuseum(&ctx, &storage);
    command.env("CORS_ALLOW_ORIGIN", "https://ui.example.test");
    let server = ServeProcess::spawn(command, ctx.dir());
    let origin = |response: &reqwest::blocking::Response| {
        response
            .headers()
            .get("access-control-allow-origin")
            .map(|v| v.to_str().unwrap().to_owned())
    };
    let request = |method: reqwest::Method, path: &str| {
        client()
            .request(method, format!("{}{path}", server.url))
            .header("Origin", "https://ui.example.test")
            .send()
            .unwrap()
    };
    // The API's answers carry it, errors from its handlers included.
    for path in [
        "/api/charts",
        "/api/charts/web",
        "/api/charts/web/0.1.0",
        "/api/charts/nope",
    ] {
        let response = request(reqwest::Method::GET, path);
        assert_eq!(
            origin(&response).as_deref(),
            Some("https://ui.example.test"),
            "{path}"
        );
    }
    // The repository's files and the probes do not.
    for path in ["/index.yaml", "/charts/web-0.1.0.tgz", "/health"] {
        let response = request(reqwest::Method::GET, path);
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(origin(&response), None, "{path}");
    }
    // ChartMuseum has no OPTIONS routes: a preflight is not found, without CORS headers.
    let preflight = client()
        .request(
            reqwest::Method::OPTIONS,
            format!("{}/api/charts", server.url),
        )
        .header("Origin", "https://ui.example.test")
        .header("Access-Control-Request-Method", "POST")
        .send()
        .unwrap();
    assert_eq!(preflight.status(), 404);
    assert_eq!(origin(&preflight), None);
    assert!(
        preflight
            .headers()
            .keys()
            .all(|name| !name.as_str().starts_with("access-control-")),
        "{:?}",
        preflight.headers()
    );
    assert_eq!(preflight.text().unwrap(), r#"{"error":"not found"}"#);
}

/// The `Request served` lines of a JSON log, parsed.
fn request_lines(log: &str) -> Vec<serde_json::Value> {
    log.lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line)
                .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"))
        })
        .filter(|line| {
            line["M"]
                .as_str()
                .is_some_and(|m| m.ends_with("] Request served"))
        })
        .collect()
}

#[test]
fn log_json_writes_one_line_per_request_with_chartmuseums_fields() {
    let ctx = TestContext::new();
    let storage = ctx.path("charts");
    let mut command = chartmuseum(&ctx, &storage);
    command.env("LOG_JSON", "true");
    let server = ServeProcess::spawn(command, ctx.dir());
    let sent = client()
        .get(format!("{}/index.yaml", server.url))
        .header("X-Request-Id", "req-one")
        .header("X-Forwarded-For", "203.0.113.9")
        .send()
        .unwrap();
    assert_eq!(sent.status(), 200);
    assert_eq!(get(&format!("{}/health", server.url), None).status(), 200);
    assert_eq!(
        get(&format!("{}/api/charts/missing", server.url), None).status(),
        404
    );
    let log = server.log();
    let lines = request_lines(&log);
    // /health is left out without --log-health.
    assert_eq!(lines.len(), 2, "{log}");
    let first = &lines[0];
    let keys: Vec<&str> = first
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "L",
            "T",
            "M",
            "path",
            "comment",
            "clientIP",
            "method",
            "statusCode",
            "latency",
            "reqID"
        ],
        "{first}"
    );
    assert_eq!(first["L"], "INFO");
    assert_eq!(first["path"], "/index.yaml");
    assert_eq!(first["comment"], "");
    assert_eq!(first["clientIP"], "203.0.113.9");
    assert_eq!(first["method"], "GET");
    assert_eq!(first["statusCode"], 200);
    assert_eq!(first["reqID"], "req-one");
    let latency = first["latency"].as_str().unwrap();
    assert!(
        ["ns", "µs", "ms", "s"]
            .iter()
            .any(|unit| latency.ends_with(unit)),
        "{latency}"
    );
    let time = first["T"].as_str().unwrap();
    assert!(time.len() >= 24 && time.as_bytes()[10] == b'T', "{time}");
    // A 404 is a warning, numbered after the /health request that was not logged.
    let second = &lines[1];
    assert_eq!(second["L"], "WARN");
    assert_eq!(second["statusCode"], 404);
    assert_eq!(second["clientIP"], "127.0.0.1");
    let number = |line: &serde_json::Value| -> u64 {
        let message = line["M"].as_str().unwrap();
        message[1..message.find(']').unwrap()].parse().unwrap()
    };
    assert_eq!(number(second), number(first) + 2, "{log}");
    // Every line of the log is JSON (request_lines would have panicked otherwise), the
    // server's own included.
    assert!(log.lines().count() >= 2);
}

#[test]
fn log_health_and_log_latency_integer_change_the_request_lines() {
    let ctx = TestContext::new();
    let storage = ctx.path("charts");
    let mut command = chartmuseum(&ctx, &storage);
    command
        .env("LOG_JSON", "true")
        .env("LOG_HEALTH", "true")
        .env("LOG_LATENCY_INTEGER", "true");
    let server = ServeProcess::spawn(command, ctx.dir());
    assert_eq!(get(&format!("{}/health", server.url), None).status(), 200);
    let log = server.log();
    let lines = request_lines(&log);
    assert_eq!(lines.len(), 1, "{log}");
    assert_eq!(lines[0]["path"], "/health");
    assert!(lines[0]["latency"].is_i64(), "{}", lines[0]);
}
