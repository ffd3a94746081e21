//! `chartkit serve`'s `--max-upload-size` reaches the client as a 413 with the server's
//! words, however the client sends the body: whole before reading the answer (helm's Go
//! client, a plain socket), chunked, as a form, or after waiting for `100 Continue`
//! (curl). A server that stopped reading and closed made those clients see a broken pipe
//! or a reset instead.

use std::process::Command;

use chartkit_tests::charts::{configmap_chart, package_into};
use chartkit_tests::raw_http::{self, Answer};
use chartkit_tests::server::{ServeProcess, chart_package, client, upload};
use chartkit_tests::{TestContext, peers, stderr};
use sha2::Digest;

const LIMIT: &str = "100000";
const TOO_LARGE: &str =
    "request body is larger than the server's limit of 100000 bytes (--max-upload-size)";
const BLOB_TOO_LARGE: &str = "the blob is larger than the server's upload limit of 100000 bytes (--max-upload-size); the upload was cancelled";

/// Bytes gzip cannot shrink, so a package carrying them is as large as they are.
fn incompressible(len: usize) -> Vec<u8> {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

/// A valid chart package of about `len` bytes: far past the limit, and past the socket
/// buffers, so a server that does not read it leaves the client writing.
fn oversized_package(len: usize) -> Vec<u8> {
    let blob = incompressible(len);
    chartkit_tests::archive::build(&[
        chartkit_tests::archive::Entry::File(
            "big/Chart.yaml",
            b"apiVersion: v2\nname: big\nversion: 1.0.0\n",
        ),
        chartkit_tests::archive::Entry::File("big/files/blob.bin", &blob),
    ])
}

fn digest_of(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(bytes)))
}

/// `METHOD PATH` with `headers` and a body of `length` bytes, sent with
/// `Connection: close` so the answer ends with the connection.
fn head(server: &ServeProcess, request: &str, headers: &str, length: usize) -> String {
    format!(
        "{request} HTTP/1.1\r\nHost: {}\r\n{headers}Content-Length: {length}\r\nConnection: close\r\n\r\n",
        server.host()
    )
}

fn assert_too_large(answer: &Answer, message: &str) {
    assert_eq!(answer.status, 413, "{}\n{}", answer.head, answer.body);
    assert_eq!(answer.json()["error"], message, "{}", answer.body);
}

fn assert_blob_too_large(answer: &Answer, message: &str) {
    assert_eq!(answer.status, 413, "{}\n{}", answer.head, answer.body);
    let errors = answer.json()["errors"].clone();
    assert_eq!(errors[0]["code"], "SIZE_INVALID", "{}", answer.body);
    assert_eq!(errors[0]["message"], message, "{}", answer.body);
}

#[test]
fn an_oversized_upload_sent_whole_gets_the_413_and_its_message() {
    let ctx = TestContext::new();
    let storage = ctx.path("store");
    let server = ServeProcess::start_on(&ctx, &storage, &["--max-upload-size", LIMIT]);
    let host = server.host();
    let package = oversized_package(4 << 20);
    // Several times: without the drain a reset lost the answer most runs, not every one.
    for _ in 0..3 {
        let raw = head(
            &server,
            "POST /api/charts",
            "Content-Type: application/gzip\r\n",
            package.len(),
        );
        assert_too_large(&raw_http::send_whole(&host, &raw, &package), TOO_LARGE);
    }
    // ChartMuseum's form upload (`curl -F chart=@big-1.0.0.tgz`).
    let boundary = "chartkit-serve-limits";
    let mut form = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"chart\"; filename=\"big-1.0.0.tgz\"\r\n\
         Content-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes();
    form.extend_from_slice(&package);
    form.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    for _ in 0..3 {
        let raw = head(
            &server,
            "POST /api/charts",
            &format!("Content-Type: multipart/form-data; boundary={boundary}\r\n"),
            form.len(),
        );
        assert_too_large(&raw_http::send_whole(&host, &raw, &form), TOO_LARGE);
    }
    // Chunked, with no length to judge by: the limit is found while reading.
    let chunked = raw_http::chunked(&package, 1 << 20);
    for _ in 0..3 {
        let raw = format!(
            "POST /api/charts HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\
             Connection: close\r\n\r\n"
        );
        assert_too_large(&raw_http::send_whole(&host, &raw, &chunked), TOO_LARGE);
    }
    // Nothing of them was kept, and the server still takes a package within the limit.
    assert_eq!(std::fs::read_dir(&storage).unwrap().count(), 0);
    let small = upload(&server.url, chart_package("small", "1.0.0"));
    assert_eq!(small.status(), 201);
}

#[test]
fn an_oversized_blob_sent_whole_gets_the_registrys_413() {
    let ctx = TestContext::new();
    let storage = ctx.path("store");
    let server = ServeProcess::start_on(&ctx, &storage, &["--max-upload-size", LIMIT]);
    let host = server.host();
    let package = oversized_package(4 << 20);
    let digest = digest_of(&package);
    for _ in 0..3 {
        // Monolithic: one POST with the body, and no session to cancel.
        let raw = head(
            &server,
            &format!("POST /v2/charts/big/blobs/uploads/?digest={digest}"),
            "Content-Type: application/octet-stream\r\n",
            package.len(),
        );
        assert_blob_too_large(&raw_http::send_whole(&host, &raw, &package), TOO_LARGE);
        // As helm pushes a layer: a session opened by POST, the whole blob in the PUT.
        let session = client()
            .post(format!("{}/v2/charts/big/blobs/uploads/", server.url))
            .send()
            .unwrap();
        assert_eq!(session.status(), 202);
        let location = session.headers()["location"].to_str().unwrap().to_owned();
        let path = location.strip_prefix(&server.url).unwrap_or(&location);
        let separator = if path.contains('?') { '&' } else { '?' };
        let raw = head(
            &server,
            &format!("PUT {path}{separator}digest={digest}"),
            "Content-Type: application/octet-stream\r\n",
            package.len(),
        );
        assert_blob_too_large(&raw_http::send_whole(&host, &raw, &package), BLOB_TOO_LARGE);
    }
    let blob = client()
        .head(format!("{}/v2/charts/big/blobs/{digest}", server.url))
        .send()
        .unwrap();
    assert_eq!(blob.status(), 404);
}

#[test]
fn curl_sees_the_413_and_its_message_with_and_without_100_continue() {
    let ctx = TestContext::new();
    let server = ServeProcess::start_on(&ctx, &ctx.path("store"), &["--max-upload-size", LIMIT]);
    let file = ctx.path("big-1.0.0.tgz");
    std::fs::write(&file, oversized_package(4 << 20)).unwrap();
    // curl asks for `100 Continue` before a body this large, and is answered at once;
    // with `Expect:` emptied it sends the body straight away and the rest is drained.
    for expect in [None, Some("Expect:")] {
        for body in ["--data-binary", "--form"] {
            let mut curl = Command::new("curl");
            curl.args(["--silent", "--show-error", "--write-out", "\n%{http_code}"])
                .arg(body)
                .arg(match body {
                    "--form" => format!("chart=@{}", file.display()),
                    _ => format!("@{}", file.display()),
                });
            if let Some(header) = expect {
                curl.args(["-H", header]);
            }
            let out = match curl.arg(format!("{}/api/charts", server.url)).output() {
                Ok(out) => out,
                Err(e) => {
                    chartkit_tests::skip(
                        "curl_sees_the_413_and_its_message",
                        &format!("no curl: {e}"),
                    );
                    return;
                }
            };
            assert!(out.status.success(), "curl failed: {}", stderr(&out));
            let text = String::from_utf8_lossy(&out.stdout);
            let (body, code) = text.rsplit_once('\n').expect("the status after the body");
            let answer = Answer {
                status: code.parse().unwrap(),
                head: String::new(),
                body: body.to_owned(),
            };
            assert_too_large(&answer, TOO_LARGE);
        }
    }
}

#[test]
fn helm_push_of_an_oversized_chart_reports_the_size_error() {
    const NAME: &str = "helm_push_of_an_oversized_chart_reports_the_size_error";
    let ctx = TestContext::new();
    let Some(helm) = peers::helm_or_skip(NAME) else {
        return;
    };
    let server = ServeProcess::start_on(&ctx, &ctx.path("store"), &["--max-upload-size", LIMIT]);
    let chart = configmap_chart(&ctx, "big", "1.0.0");
    std::fs::create_dir_all(chart.join("files")).unwrap();
    std::fs::write(chart.join("files/blob.bin"), incompressible(4 << 20)).unwrap();
    let package = package_into(&mut ctx.hermetic(&helm), &chart, &ctx.path("out"));
    let base = format!("oci://{}/charts", server.host());
    for _ in 0..3 {
        let out = ctx
            .hermetic(&helm)
            .arg("push")
            .arg(&package)
            .args([&base, "--plain-http"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let said = stderr(&out);
        // Without the drain helm said `write: broken pipe` here.
        assert!(
            said.starts_with("Error: failed to perform \"Push\" on destination: PUT ")
                && said.trim_end().ends_with(&format!(
                    "response status code 413: size invalid: {BLOB_TOO_LARGE}"
                )),
            "helm should report the server's size error: {said}"
        );
    }
}
