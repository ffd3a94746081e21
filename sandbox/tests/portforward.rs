//! Port forwarding and proxying against an in-process sandbox, with kube-rs's
//! Portforwarder and (when installed) the real kubectl, checking that every session and
//! forwarded connection ends when its client goes away.
//!
//! One test per protocol family, each in this one binary: the live counters are per
//! process, so the tests take a lock to keep their counts apart.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chartkit_sandbox::cluster::WriteOptions;
use chartkit_sandbox::portforward::{FORWARD_ANNOTATION, live};
use chartkit_sandbox::{Cluster, Options, Sandbox};
use k8s_openapi::api::core::v1::Pod;
use kube::{Api, Client};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// An HTTP server answering every request with `hello from PATH`, then closing.
async fn http_server() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 1024];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&buf);
                let path = head.split_whitespace().nth(1).unwrap_or("?").to_string();
                let body = format!("hello from {path}");
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(resp.as_bytes()).await;
                let _ = s.shutdown().await;
            });
        }
    });
    addr
}

/// A running, ready pod `web` on a node the sandbox does not simulate (so no kubelet
/// rewrites the status set here; container port 8080 forwarded to `backend`) behind a
/// service `web` (port 80 → target port `http`).
fn seed(cluster: &Cluster, backend: SocketAddr) {
    let opts = WriteOptions {
        manager: "test".into(),
        ..WriteOptions::default()
    };
    let pods = cluster.resource("", "pods", "default", "");
    cluster
        .create(
            &pods,
            json!({
                "metadata": {"name": "web", "labels": {"app": "web"},
                    "annotations": {FORWARD_ANNOTATION: format!("8080={backend}")}},
                "spec": {"nodeName": "hand-driven", "containers": [{"name": "app", "image": "nginx",
                    "ports": [{"name": "http", "containerPort": 8080}]}]},
            }),
            &opts,
        )
        .unwrap();
    let status = cluster.resource("", "pods", "default", "web");
    let now = "2024-01-01T00:00:00Z";
    cluster
        .mutate(&status, "test", |pod| {
            pod["status"] = json!({
                "phase": "Running",
                "podIP": "10.244.0.5",
                "conditions": [{"type": "Ready", "status": "True"}],
                "containerStatuses": [{"name": "app", "image": "nginx", "ready": true, "restartCount": 0,
                    "state": {"running": {"startedAt": now}}}],
            });
            true
        })
        .unwrap();
    let services = cluster.resource("", "services", "default", "");
    cluster
        .create(
            &services,
            json!({
                "metadata": {"name": "web"},
                "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]},
            }),
            &opts,
        )
        .unwrap();
}

async fn start() -> (Sandbox, SocketAddr) {
    let sandbox = Sandbox::start(Options::default()).await.unwrap();
    let backend = http_server().await;
    seed(&sandbox.cluster, backend);
    (sandbox, backend)
}

fn client(sandbox: &Sandbox) -> Client {
    let mut config = kube::Config::new(sandbox.url().parse().unwrap());
    // kube-rs retries 503s, which the proxy answers on purpose here.
    config.default_retry = false;
    Client::try_from(config).unwrap()
}

/// Waits until no session or forwarded connection is left (they end as their client's
/// connection closes, which takes a moment to be noticed).
async fn assert_nothing_left() {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let now = live();
        if now.sessions == 0 && now.connections == 0 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "still live after the client left: {now:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_rs_forwards_to_the_annotated_address_and_leaves_nothing_behind() {
    let _serial = SERIAL.lock().await;
    let (sandbox, _) = start().await;
    let tasks_before = tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks();
    let pods: Api<Pod> = Api::namespaced(client(&sandbox), "default");

    let mut pf = pods.portforward("web", &[8080]).await.unwrap();
    let mut stream = pf.take_stream(8080).unwrap();
    stream
        .write_all(b"GET /through-kube-rs HTTP/1.1\r\nHost: web\r\n\r\n")
        .await
        .unwrap();
    let expected = "hello from /through-kube-rs";
    let mut response = Vec::new();
    let mut chunk = [0u8; 1024];
    while !response.ends_with(expected.as_bytes()) {
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "{}", String::from_utf8_lossy(&response));
        response.extend_from_slice(&chunk[..n]);
    }
    assert!(response.starts_with(b"HTTP/1.1 200 OK"));
    drop(stream);
    // Whether kube-rs or the server closes first (the server closes once the backend
    // has), kube-rs may report its own close as an error; only the end matters here.
    let _ = pf.join().await;

    // A port the annotation does not name: the kubelet's error on the error channel.
    let mut pf = pods.portforward("web", &[9090]).await.unwrap();
    let error = pf
        .take_error(9090)
        .unwrap()
        .await
        .expect("an error message");
    assert!(
        error.starts_with("error forwarding port 9090 to pod ")
            && error.contains("failed to connect to localhost:9090 inside namespace")
            && error.contains("IPv4: dial tcp4 127.0.0.1:9090: connect: connection refused"),
        "{error}"
    );
    drop(pf);

    // A client that goes away mid-connection.
    let mut pf = pods.portforward("web", &[8080]).await.unwrap();
    let stream = pf.take_stream(8080).unwrap();
    pf.abort();
    drop(stream);
    drop(pf);

    assert_nothing_left().await;
    // With the client's pooled connections gone, so are the server's tasks for them.
    drop(pods);
    let deadline = Instant::now() + Duration::from_secs(15);
    while tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks()
        > tasks_before
    {
        assert!(Instant::now() < deadline, "tasks outlive their clients");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    sandbox.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn services_and_pods_proxy_http_to_the_annotated_address() {
    let _serial = SERIAL.lock().await;
    let (sandbox, _) = start().await;
    let client = client(&sandbox);
    let get = |path: &str| {
        hyper::Request::get(path.to_string())
            .body(Vec::new())
            .unwrap()
    };
    let text = client
        .request_text(get(
            "/api/v1/namespaces/default/services/web:80/proxy/index.yaml?x=1",
        ))
        .await
        .unwrap();
    assert_eq!(text, "hello from /index.yaml?x=1");
    let text = client
        .request_text(get("/api/v1/namespaces/default/pods/web:8080/proxy/a/b/"))
        .await
        .unwrap();
    assert_eq!(text, "hello from /a/b/");
    // By port name, and with the pod's first port when none is given.
    let text = client
        .request_text(get("/api/v1/namespaces/default/services/web/proxy/"))
        .await
        .unwrap();
    assert_eq!(text, "hello from /");
    let text = client
        .request_text(get("/api/v1/namespaces/default/pods/web/proxy/p"))
        .await
        .unwrap();
    assert_eq!(text, "hello from /p");

    let err = client
        .request_text(get("/api/v1/namespaces/default/services/web:81/proxy/"))
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("{err}")
    };
    assert_eq!(status.code, 503);
    assert_eq!(
        status.message,
        "no service port 81 found for service \"web\""
    );
    let err = client
        .request_text(get("/api/v1/namespaces/default/pods/web:9090/proxy/"))
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("{err}")
    };
    assert_eq!(status.code, 503);
    assert_eq!(
        status.message,
        "error trying to reach service: dial tcp 10.244.0.5:9090: connect: connection refused"
    );
    assert_nothing_left().await;
    sandbox.stop().await;
}

/// kubectl, from `CHARTKIT_PEERS`, `PATH` or `~/.cache/chartkit-peers`.
fn kubectl() -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("CHARTKIT_PEERS") {
        candidates.push(PathBuf::from(dir).join("kubectl"));
    }
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|d| d.join("kubectl")));
    }
    if let Some(home) = std::env::var_os("HOME") {
        candidates.push(PathBuf::from(home).join(".cache/chartkit-peers/kubectl"));
    }
    let found = candidates.into_iter().find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "kubectl is required under CI"
        );
        eprintln!("skipped: kubectl is not installed");
    }
    found
}

/// Runs `kubectl port-forward pod/web :8080`, fetches a page through it, kills kubectl.
fn kubectl_round_trip(kubectl: &PathBuf, kubeconfig: &PathBuf, websockets: bool) -> String {
    let mut child = Command::new(kubectl)
        .args(["port-forward", "pod/web", ":8080"])
        .env("KUBECONFIG", kubeconfig)
        .env("KUBECTL_PORT_FORWARD_WEBSOCKETS", websockets.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    // `Forwarding from 127.0.0.1:PORT -> 8080`
    let port: u16 = first
        .split("127.0.0.1:")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{first}"));
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(b"GET /through-kubectl HTTP/1.1\r\nHost: web\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    response
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_sessions_end_when_kubectl_exits() {
    let Some(kubectl) = kubectl() else { return };
    let _serial = SERIAL.lock().await;
    let (sandbox, _) = start().await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, sandbox.kubeconfig()).unwrap();
    for websockets in [true, false] {
        let (k, c) = (kubectl.clone(), kubeconfig.clone());
        let response = tokio::task::spawn_blocking(move || kubectl_round_trip(&k, &c, websockets))
            .await
            .unwrap();
        assert!(
            response.ends_with("hello from /through-kubectl"),
            "websockets={websockets}: {response}"
        );
        assert_nothing_left().await;
    }
    let cluster: Arc<Cluster> = Arc::clone(&sandbox.cluster);
    let pod: Value = cluster
        .get(&cluster.resource("", "pods", "default", "web"))
        .unwrap();
    assert_eq!(pod["status"]["phase"], "Running");
    sandbox.stop().await;
}
