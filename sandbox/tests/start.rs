//! `Sandbox::start` in-process: it answers as soon as it returns, and with a data
//! directory it comes back with what it held.

use chartkit_sandbox::{Options, Sandbox};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// One HTTP/1.1 request on a fresh connection; the status code and body.
async fn request(sandbox: &Sandbox, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(sandbox.addr())
        .await
        .unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: sandbox\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let text = String::from_utf8_lossy(&response).into_owned();
    let code = text[9..12].parse().unwrap();
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (code, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_started_sandbox_answers_version() {
    let sandbox = Sandbox::start(Options::default()).await.unwrap();
    let (code, body) = request(&sandbox, "GET", "/version", "").await;
    assert_eq!(code, 200, "{body}");
    assert!(body.contains(r#""gitVersion":"v1.34."#), "{body}");
    sandbox.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_on_a_data_directory_restarts_with_its_objects() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        data: Some(dir.path().join("state")),
        ..Options::default()
    };
    let sandbox = Sandbox::start(options.clone()).await.unwrap();
    let second = Sandbox::start(options.clone())
        .await
        .err()
        .expect("the directory is locked");
    assert!(
        second.to_string().contains("in use by another sandbox"),
        "{second}"
    );
    let (code, created) = request(
        &sandbox,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        r#"{"metadata":{"name":"kept"},"data":{"k":"v"}}"#,
    )
    .await;
    assert_eq!(code, 201, "{created}");
    let created: serde_json::Value = serde_json::from_str(&created).unwrap();
    // The seeded namespace is changed: a restart must not seed it again.
    let (code, _) = request(&sandbox, "DELETE", "/api/v1/namespaces/kube-public", "").await;
    assert_eq!(code, 200);
    sandbox.stop().await;

    let sandbox = Sandbox::start(options).await.unwrap();
    assert!(sandbox.warnings().is_empty(), "{:?}", sandbox.warnings());
    let (code, body) = request(
        &sandbox,
        "GET",
        "/api/v1/namespaces/default/configmaps/kept",
        "",
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let kept: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        kept["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
    assert_eq!(kept["metadata"]["uid"], created["metadata"]["uid"]);
    let (_, body) = request(&sandbox, "GET", "/api/v1/namespaces/kube-public", "").await;
    let ns: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(
        ns["metadata"]["deletionTimestamp"].is_string() || ns["code"] == 404,
        "kube-public is still as it was left: {body}"
    );
    sandbox.stop().await;
}
