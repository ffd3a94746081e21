//! Garbage at every route: each built-in resource's collection, object and subresource
//! paths, discovery and OpenAPI, with every method, malformed bodies and content types
//! and bad query parameters. Every request must be answered (a `Status` for errors,
//! never a 5xx but for the API server's own 500s), never panic and never hang.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use http_body_util::BodyExt as _;
use hyper::Request;

use super::{App, handle};
use crate::cluster::Cluster;
use crate::settings::Settings;
use crate::store::Store;

fn app() -> Arc<App> {
    let cluster = Cluster::new(Settings::default(), Store::new());
    crate::seed(&cluster);
    App::new(cluster, "127.0.0.1:6443".into(), None, None)
}

const BODIES: &[&[u8]] = &[
    b"",
    b"{",
    b"null",
    b"[]",
    b"\"x\"",
    b"42",
    b"{\"metadata\": []}",
    b"{\"metadata\": {\"name\": 5}}",
    b"{\"metadata\": {\"name\": \"Bad Name\", \"labels\": {\"a\": 1}}}",
    b"{\"kind\": 5, \"apiVersion\": []}",
    b"{\"kind\": \"Nope\", \"apiVersion\": \"nope/v9\", \"metadata\": {\"name\": \"x\"}}",
    b"{\"metadata\": {\"name\": \"x\", \"resourceVersion\": \"abc\"}, \"spec\": 7, \"status\": \"s\"}",
    b"[{\"op\": \"nope\"}]",
    b"\xff\xfe\x00garbage",
    b"a: [1, {b: }\n  - : :",
];

const CONTENT_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/merge-patch+json",
    "application/json-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
    "application/vnd.kubernetes.protobuf",
    "text/plain",
    "",
];

const QUERIES: &[&str] = &[
    "",
    "?labelSelector=bad%20selector!",
    "?fieldSelector=a%3Db%3Dc",
    "?resourceVersion=abc",
    "?resourceVersion=1&resourceVersionMatch=Exact",
    "?limit=-1&continue=%%%",
    "?dryRun=Nope",
    "?dryRun=All",
    "?fieldValidation=Nope",
    "?includeObject=Nope",
    "?gracePeriodSeconds=x&propagationPolicy=Sideways",
];

/// Every path the sandbox serves, and some it does not.
fn paths(app: &App) -> Vec<String> {
    let mut paths: Vec<String> = [
        "/",
        "/api",
        "/apis",
        "/api/v1",
        "/api/v2",
        "/apis/apps",
        "/apis/apps/v1",
        "/apis/nosuch.io/v1",
        "/apis/nosuch.io/v1/things",
        "/api/v1/nosuch",
        "/api/v1/namespaces/default/nosuch/x",
        "/version",
        "/healthz",
        "/openapi/v2",
        "/openapi/v3",
        "/openapi/v3/api/v1",
        "/openapi/v3/apis/apps/v1",
        "/openapi/v3/apis/nosuch/v1",
        "/api/v1/namespaces/%2F/configmaps",
        "/api/v1/namespaces/default/configmaps/..",
        "/api/v1/namespaces/default/configmaps/x/y/z/w",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let registry = app.cluster.registry();
    for def in registry.all() {
        let prefix = if def.group.is_empty() {
            format!("/api/{}", def.versions[0])
        } else {
            format!("/apis/{}/{}", def.group, def.versions[0])
        };
        let base = if def.namespaced {
            format!("{prefix}/namespaces/default/{}", def.plural)
        } else {
            format!("{prefix}/{}", def.plural)
        };
        paths.push(base.clone());
        paths.push(format!("{base}/x"));
        for sub in &def.subresources {
            // Streams (logs, port-forward, proxy, exec) are tested by their own modules.
            if !matches!(
                sub.as_str(),
                "log" | "portforward" | "proxy" | "exec" | "attach"
            ) {
                paths.push(format!("{base}/x/{sub}"));
            }
        }
        if def.namespaced {
            paths.push(format!("{prefix}/{}", def.plural));
        }
    }
    paths
}

/// Sends a request and reads the whole answer; a hang fails the test rather than
/// blocking it (watches are not read: they stream by design).
async fn send(app: &Arc<App>, method: &str, uri: &str, ct: &str, body: &[u8]) -> (u16, Vec<u8>) {
    let mut req = Request::builder().method(method).uri(uri);
    if !ct.is_empty() {
        req = req.header("content-type", ct);
    }
    let req = req
        .header("accept", "application/json")
        .body(Body::from(body.to_vec()))
        .expect("a request");
    let answer = tokio::time::timeout(Duration::from_secs(30), async {
        let resp = handle(Arc::clone(app), req).await;
        let code = resp.status().as_u16();
        let bytes = resp
            .into_body()
            .collect()
            .await
            .map(|b| b.to_bytes().to_vec())
            .unwrap_or_default();
        (code, bytes)
    })
    .await;
    answer.unwrap_or_else(|_| panic!("{method} {uri} ({ct}) did not answer"))
}

fn check(method: &str, uri: &str, ct: &str, code: u16, body: &[u8]) {
    assert!(
        (200..600).contains(&code),
        "{method} {uri} ({ct}): code {code}"
    );
    if code >= 400 && !body.is_empty() {
        let status: serde_json::Value = serde_json::from_slice(body).unwrap_or_else(|e| {
            panic!("{method} {uri} ({ct}): {code} with a body that is not JSON ({e})")
        });
        assert_eq!(status["kind"], "Status", "{method} {uri} ({ct}): {status}");
        assert_eq!(status["code"], code, "{method} {uri} ({ct}): {status}");
        assert!(
            status["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{method} {uri} ({ct}): {status}"
        );
    }
    // 500s are only the API server's own (errors it has no status for, worded by Go).
    if code == 500 {
        let status: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
        let message = status["message"].as_str().unwrap_or("");
        assert!(
            message.contains("strconv.ParseUint"),
            "{method} {uri} ({ct}): {status}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_at_every_route_is_answered_with_a_status() {
    let app = app();
    for path in paths(&app) {
        for method in [
            "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "BREW",
        ] {
            for (i, body) in BODIES.iter().enumerate() {
                // Every content type with a few bodies, every body with a few types.
                let types: &[&str] = if i < 3 {
                    CONTENT_TYPES
                } else {
                    &CONTENT_TYPES[..2]
                };
                for ct in types {
                    if (method == "GET" || method == "HEAD") && (i > 0 || *ct != "application/json")
                    {
                        continue;
                    }
                    let uri = path.clone();
                    let (code, answer) = send(&app, method, &uri, ct, body).await;
                    check(method, &uri, ct, code, &answer);
                }
            }
            if method != "GET" && method != "DELETE" && method != "PATCH" {
                continue;
            }
            for q in QUERIES {
                if q.is_empty() {
                    continue;
                }
                let uri = format!("{path}{q}");
                let ct = if method == "PATCH" {
                    "application/merge-patch+json"
                } else {
                    "application/json"
                };
                let (code, answer) = send(&app, method, &uri, ct, b"{}").await;
                check(method, &uri, ct, code, &answer);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_over_the_limit_are_refused_with_413() {
    let app = app();
    let big = vec![b' '; super::MAX_BODY + 1];
    let (code, body) = send(
        &app,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        &big,
    )
    .await;
    assert_eq!(code, 413);
    let status: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(status["reason"], "RequestEntityTooLarge");
    assert_eq!(
        status["message"],
        format!("Request entity too large: limit is {}", super::MAX_BODY)
    );
    let deep = format!("{{\"a\": {}", "[".repeat(super::MAX_BODY / 2));
    let (code, body) = send(
        &app,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        deep.as_bytes(),
    )
    .await;
    assert_eq!(code, 400, "{}", String::from_utf8_lossy(&body));
    let (code, _) = send(
        &app,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/yaml",
        "[".repeat(super::MAX_BODY / 2).as_bytes(),
    )
    .await;
    assert_eq!(code, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_runs_change_nothing_on_any_verb() {
    let app = app();
    let base = "/api/v1/namespaces/default/configmaps";
    let cm = br#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dry"}, "data": {"a": "1"}}"#;
    let (code, _) = send(
        &app,
        "POST",
        &format!("{base}?dryRun=All"),
        "application/json",
        cm,
    )
    .await;
    assert_eq!(code, 201);
    let (code, _) = send(&app, "GET", &format!("{base}/dry"), "", b"").await;
    assert_eq!(code, 404, "a dry-run create stores nothing");
    let (code, _) = send(&app, "POST", base, "application/json", cm).await;
    assert_eq!(code, 201);
    let (_, before) = send(&app, "GET", &format!("{base}/dry"), "", b"").await;
    let changed = br#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dry"}, "data": {"a": "2"}}"#;
    for (method, ct, body) in [
        ("PUT", "application/json", &changed[..]),
        (
            "PATCH",
            "application/merge-patch+json",
            br#"{"data": {"a": "3"}}"#,
        ),
        ("PATCH", "application/apply-patch+yaml", &changed[..]),
        ("DELETE", "application/json", b""),
    ] {
        // The create above was made by the "unknown" manager: the apply takes its
        // field over, as a forced apply does.
        let force = if ct == "application/apply-patch+yaml" {
            "&force=true"
        } else {
            ""
        };
        let uri = format!("{base}/dry?dryRun=All&fieldManager=t{force}");
        let (code, answer) = send(&app, method, &uri, ct, body).await;
        assert!(
            code < 300,
            "{method}: {code} {}",
            String::from_utf8_lossy(&answer)
        );
        let (_, after) = send(&app, "GET", &format!("{base}/dry"), "", b"").await;
        assert_eq!(before, after, "a dry-run {method} changed the object");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_in_table_form_carry_columns_on_the_first_event_only() {
    let app = app();
    let base = "/api/v1/namespaces/default/configmaps";
    for name in ["a", "b"] {
        let body = format!(r#"{{"metadata": {{"name": "{name}"}}, "data": {{"k": "v"}}}}"#);
        let (code, _) = send(&app, "POST", base, "application/json", body.as_bytes()).await;
        assert_eq!(code, 201);
    }
    let req = Request::builder()
        .uri(format!("{base}?watch=1&resourceVersion=0"))
        .header(
            "accept",
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
        )
        .body(Body::empty())
        .expect("a request");
    let resp = handle(Arc::clone(&app), req).await;
    assert_eq!(resp.status().as_u16(), 200);
    let mut body = resp.into_body();
    let mut text = String::new();
    let read = tokio::time::timeout(Duration::from_secs(30), async {
        while text.lines().count() < 2 {
            match body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        text.push_str(&String::from_utf8_lossy(&data));
                    }
                }
                _ => break,
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the watch sent no events");
    let events: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("an event per line"))
        .collect();
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(events[0]["object"]["kind"], "Table");
    assert_eq!(events[0]["object"]["columnDefinitions"][0]["name"], "Name");
    assert_eq!(events[0]["object"]["rows"][0]["cells"][0], "a");
    assert!(events[1]["object"]["columnDefinitions"].is_null());
    assert_eq!(events[1]["object"]["rows"][0]["cells"][0], "b");
}
