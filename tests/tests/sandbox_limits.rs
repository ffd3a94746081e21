//! The sandbox's request body bound (the API server's 3 MiB) reaches the client as the
//! API server's 413 Status, however the client sends the body: whole before reading the
//! answer (kubectl, a plain socket), chunked, or after waiting for `100 Continue` (curl).
//! A server that stopped reading and closed made those clients see a broken pipe.

use std::process::Command;

use chartkit_tests::TestContext;
use chartkit_tests::raw_http;
use chartkit_tests::sandbox::SandboxProcess;
use chartkit_tests::stderr;

const MESSAGE: &str = "Request entity too large: limit is 3145728";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

/// A ConfigMap whose JSON is about `mib` MiB.
fn big_configmap(mib: usize) -> String {
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "big"},
        "data": {"blob": "x".repeat(mib << 20)},
    })
    .to_string()
}

fn host_port(sandbox: &SandboxProcess) -> &str {
    sandbox
        .url
        .strip_prefix("http://")
        .expect("a plain-HTTP sandbox")
}

fn assert_too_large(code: u16, status: &serde_json::Value) {
    assert_eq!(code, 413, "{status}");
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["reason"], "RequestEntityTooLarge");
    assert_eq!(status["code"], 413);
    assert_eq!(status["message"], MESSAGE);
}

/// Sends `head` then `body` whole, as a client that reads nothing until it has sent
/// everything, and reads the answer.
fn send_whole(sandbox: &SandboxProcess, head: &str, body: &[u8]) -> (u16, serde_json::Value) {
    let answer = raw_http::send_whole(host_port(sandbox), head, body);
    (answer.status, answer.json())
}

#[test]
fn an_oversized_body_sent_whole_gets_the_413_status() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let body = big_configmap(8);
    // Several times: without the drain a reset lost the answer most runs, not every one.
    for _ in 0..3 {
        let head = format!(
            "POST {CONFIGMAPS} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            host_port(&sandbox),
            body.len()
        );
        let (code, status) = send_whole(&sandbox, &head, body.as_bytes());
        assert_too_large(code, &status);
    }
    // Chunked, with no length to judge by: the bound is found while reading.
    let chunked = raw_http::chunked(body.as_bytes(), 1 << 20);
    for _ in 0..3 {
        let head = format!(
            "POST {CONFIGMAPS} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
            host_port(&sandbox)
        );
        let (code, status) = send_whole(&sandbox, &head, &chunked);
        assert_too_large(code, &status);
    }
    // The connection is still good for a body within the bound.
    let small = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "small"},
    })
    .to_string();
    let head = format!(
        "POST {CONFIGMAPS} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        host_port(&sandbox),
        small.len()
    );
    let (code, created) = send_whole(&sandbox, &head, small.as_bytes());
    assert_eq!(code, 201, "{created}");
}

#[test]
fn curl_sees_the_413_status_with_and_without_100_continue() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let file = ctx.path("big.json");
    std::fs::write(&file, big_configmap(8)).unwrap();
    // curl asks for `100 Continue` before a body this large, and is answered at once;
    // with `Expect:` emptied it sends the body straight away and the rest is drained.
    for expect in [None, Some("Expect:")] {
        let mut curl = Command::new("curl");
        curl.args(["--silent", "--show-error", "--write-out", "\n%{http_code}"])
            .args(["-H", "Content-Type: application/json"])
            .arg("--data-binary")
            .arg(format!("@{}", file.display()));
        if let Some(header) = expect {
            curl.args(["-H", header]);
        }
        let out = match curl.arg(format!("{}{CONFIGMAPS}", sandbox.url)).output() {
            Ok(out) => out,
            Err(e) => {
                chartkit_tests::skip("curl_sees_the_413_status", &format!("no curl: {e}"));
                return;
            }
        };
        assert!(out.status.success(), "curl failed: {}", stderr(&out));
        let text = String::from_utf8_lossy(&out.stdout);
        let (body, code) = text.rsplit_once('\n').expect("the status after the body");
        let status: serde_json::Value =
            serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
        assert_too_large(code.parse().unwrap(), &status);
    }
}

#[test]
fn kubectl_apply_of_an_oversized_object_reports_the_api_servers_words() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let file = ctx.path("big.yaml");
    std::fs::write(
        &file,
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  blob: {}\n",
            "x".repeat(4 << 20)
        ),
    )
    .unwrap();
    let test = "kubectl_apply_of_an_oversized_object_reports_the_api_servers_words";
    for _ in 0..3 {
        let Some(mut kubectl) = sandbox.kubectl(&ctx, test) else {
            return;
        };
        let out = kubectl.arg("apply").arg("-f").arg(&file).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            stderr(&out).trim_end(),
            format!(
                "Error from server (RequestEntityTooLarge): error when creating \"{}\": {MESSAGE}",
                file.display()
            )
        );
    }
}
