//! A server on this machine stands behind a sandbox pod and service: the real kubectl
//! reaches it with `port-forward` (WebSocket-tunnelled SPDY and plain SPDY), through the
//! API server's service proxy, and reads the pod's log.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use chartkit_tests::TestContext;
use chartkit_tests::sandbox::{SandboxProcess, run_ok, write_file};

/// An HTTP server answering every request with `hello from PATH`, then closing.
fn http_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 1024];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&buf);
                let path = head.split_whitespace().nth(1).unwrap_or("?").to_string();
                let body = format!("hello from {path}");
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    port
}

const RUNNING: &str = r#"{"status":{"phase":"Running","podIP":"10.244.0.5","conditions":[{"type":"Ready","status":"True"}],"containerStatuses":[{"name":"app","image":"nginx","imageID":"","ready":true,"started":true,"restartCount":0,"state":{"running":{"startedAt":"2024-01-01T00:00:00Z"}}}]}}"#;

/// Pod `web` on a node the sandbox does not simulate, so its status is the one patched
/// here (container port 8080, named `http`, forwarded to `backend`), running and
/// ready, behind service `web` (port 80 → `http`); `kubectl` for the sandbox.
fn seed(ctx: &TestContext, sandbox: &SandboxProcess, backend: u16) -> bool {
    let Some(mut kubectl) = sandbox.kubectl(ctx, "sandbox_portforward") else {
        return false;
    };
    let manifest = format!(
        r#"apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {{app: web}}
  annotations:
    sandbox.chartkit.dev/forward: "8080=127.0.0.1:{backend}"
spec:
  nodeName: hand-driven
  containers:
  - name: app
    image: nginx
    ports: [{{name: http, containerPort: 8080}}, {{name: admin, containerPort: 9090}}]
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {{app: web}}
  ports: [{{port: 80, targetPort: http}}]
"#
    );
    let file = write_file(&ctx.path("manifests"), "web.yaml", &manifest);
    run_ok(kubectl.arg("apply").arg("-f").arg(&file));
    let mut kubectl = sandbox.kubectl(ctx, "").expect("kubectl");
    run_ok(kubectl.args([
        "patch",
        "pod",
        "web",
        "--subresource=status",
        "--type=merge",
        "-p",
        RUNNING,
    ]));
    true
}

/// `kubectl port-forward TARGET :PORT` running, and the local port it chose.
fn port_forward(
    ctx: &TestContext,
    sandbox: &SandboxProcess,
    target: &str,
    port: &str,
    websockets: bool,
) -> (Child, u16) {
    let mut kubectl = sandbox.kubectl(ctx, "").expect("kubectl");
    let mut child = kubectl
        .args(["port-forward", target, &format!(":{port}")])
        .env("KUBECTL_PORT_FORWARD_WEBSOCKETS", websockets.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start kubectl port-forward");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let first = lines
        .next()
        .expect("a line from kubectl")
        .expect("kubectl output");
    let local: u16 = first
        .strip_prefix("Forwarding from 127.0.0.1:")
        .and_then(|r| r.split(' ').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("unexpected kubectl output: {first}"));
    // Keep reading kubectl's "Handling connection" lines so it never blocks on a pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, local)
}

fn get(port: u16, path: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to kubectl");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    write!(s, "GET {path} HTTP/1.1\r\nHost: web\r\n\r\n").expect("send request");
    let mut response = String::new();
    let _ = s.read_to_string(&mut response);
    response
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn kubectl_port_forward_reaches_the_server_behind_a_pod_and_a_service() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if !seed(&ctx, &sandbox, http_server()) {
        return;
    }
    for (target, port, websockets) in [
        ("pod/web", "8080", true),
        ("pod/web", "8080", false),
        ("svc/web", "80", true),
        ("svc/web", "80", false),
    ] {
        let (child, local) = port_forward(&ctx, &sandbox, target, port, websockets);
        // Two connections through one session.
        for path in ["/one", "/two"] {
            let response = get(local, path);
            assert!(
                response.starts_with("HTTP/1.1 200 OK")
                    && response.ends_with(&format!("hello from {path}")),
                "{target} (websockets {websockets}): {response}\n{}",
                sandbox.log()
            );
        }
        stop(child);
    }
}

#[test]
fn kubectl_port_forward_works_over_tls() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &["--tls"]);
    if !seed(&ctx, &sandbox, http_server()) {
        return;
    }
    for websockets in [true, false] {
        let (child, local) = port_forward(&ctx, &sandbox, "pod/web", "8080", websockets);
        let response = get(local, "/tls");
        assert!(
            response.ends_with("hello from /tls"),
            "websockets {websockets}: {response}\n{}",
            sandbox.log()
        );
        stop(child);
    }
}

#[test]
fn a_port_nothing_listens_on_is_refused_with_the_kubelets_words() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if !seed(&ctx, &sandbox, http_server()) {
        return;
    }
    for websockets in [true, false] {
        let (mut child, local) = port_forward(&ctx, &sandbox, "pod/web", "9090", websockets);
        let response = get(local, "/");
        assert_eq!(response, "", "nothing answers on 9090");
        // kubectl gives up on the session after an error and says why.
        let deadline = Instant::now() + Duration::from_secs(30);
        while child.try_wait().expect("kubectl status").is_none() {
            assert!(Instant::now() < deadline, "kubectl kept running");
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut stderr)
            .expect("read stderr");
        assert!(
            stderr.contains("an error occurred forwarding ")
                && stderr.contains("-> 9090: error forwarding port 9090 to pod ")
                && stderr.contains("failed to connect to localhost:9090 inside namespace")
                && stderr.contains("error: lost connection to pod"),
            "websockets {websockets}: {stderr}"
        );
    }
}

#[test]
fn kubectl_get_raw_goes_through_the_service_and_pod_proxy() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if !seed(&ctx, &sandbox, http_server()) {
        return;
    }
    for (path, body) in [
        (
            "/api/v1/namespaces/default/services/web:80/proxy/index.yaml",
            "hello from /index.yaml",
        ),
        (
            "/api/v1/namespaces/default/services/web/proxy/charts/a.tgz",
            "hello from /charts/a.tgz",
        ),
        (
            "/api/v1/namespaces/default/pods/web:8080/proxy/",
            "hello from /",
        ),
    ] {
        let mut kubectl = sandbox.kubectl(&ctx, "").expect("kubectl");
        let out = run_ok(kubectl.args(["get", "--raw", path]));
        assert_eq!(String::from_utf8_lossy(&out.stdout), body, "{path}");
    }
    let mut kubectl = sandbox.kubectl(&ctx, "").expect("kubectl");
    let out = kubectl
        .args([
            "get",
            "--raw",
            "/api/v1/namespaces/default/pods/web:9090/proxy/",
        ])
        .output()
        .expect("kubectl");
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Error from server (ServiceUnavailable): error trying to reach service: dial tcp 10.244.0.5:9090: connect: connection refused"
    );
}

#[test]
fn kubectl_logs_reads_each_start_of_a_container() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if !seed(&ctx, &sandbox, http_server()) {
        return;
    }
    let mut kubectl = sandbox.kubectl(&ctx, "").expect("kubectl");
    let out = run_ok(kubectl.args(["logs", "web"]));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "chartkit sandbox: container app started (image nginx, start 1)\n"
    );
    let mut kubectl = sandbox.kubectl(&ctx, "").expect("kubectl");
    let out = run_ok(kubectl.args(["logs", "web", "--timestamps"]));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "2024-01-01T00:00:00.000000000Z chartkit sandbox: container app started (image nginx, start 1)\n"
    );
    let mut kubectl = sandbox.kubectl(&ctx, "").expect("kubectl");
    let out = kubectl
        .args(["logs", "web", "--previous"])
        .output()
        .expect("kubectl");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Error from server (BadRequest): previous terminated container \"app\" in pod \"web\" not found"
    );

    // Following streams until the container exits.
    let mut kubectl = sandbox.kubectl(&ctx, "").expect("kubectl");
    let mut follow = kubectl
        .args(["logs", "-f", "web"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl logs -f");
    let mut lines = BufReader::new(follow.stdout.take().expect("stdout")).lines();
    assert_eq!(
        lines.next().expect("a line").expect("output"),
        "chartkit sandbox: container app started (image nginx, start 1)"
    );
    let exited = r#"{"status":{"phase":"Succeeded","containerStatuses":[{"name":"app","image":"nginx","imageID":"","ready":false,"started":false,"restartCount":0,"state":{"terminated":{"exitCode":0,"reason":"Completed","startedAt":"2024-01-01T00:00:00Z","finishedAt":"2024-01-01T00:01:00Z"}}}]}}"#;
    let mut kubectl = sandbox.kubectl(&ctx, "").expect("kubectl");
    run_ok(kubectl.args([
        "patch",
        "pod",
        "web",
        "--subresource=status",
        "--type=merge",
        "-p",
        exited,
    ]));
    assert_eq!(
        lines.next().expect("the exit line").expect("output"),
        "chartkit sandbox: container app exited with code 0"
    );
    assert!(lines.next().is_none(), "the stream ends with the container");
    assert!(follow.wait().expect("kubectl").success());

    // A pod whose container has not started, and one with several containers.
    let pending = r#"apiVersion: v1
kind: Pod
metadata: {name: pending}
spec:
  nodeName: hand-driven
  containers: [{name: a, image: busybox}, {name: b, image: busybox}]
"#;
    let file = write_file(&ctx.path("manifests"), "pending.yaml", pending);
    let mut kubectl = sandbox.kubectl(&ctx, "").expect("kubectl");
    run_ok(kubectl.arg("apply").arg("-f").arg(&file));
    let waiting = r#"{"status":{"phase":"Pending","containerStatuses":[{"name":"a","image":"busybox","imageID":"","ready":false,"restartCount":0,"state":{"waiting":{"reason":"ContainerCreating"}}},{"name":"b","image":"busybox","imageID":"","ready":false,"restartCount":0,"state":{"waiting":{"reason":"ContainerCreating"}}}]}}"#;
    let mut kubectl = sandbox.kubectl(&ctx, "").expect("kubectl");
    run_ok(kubectl.args([
        "patch",
        "pod",
        "pending",
        "--subresource=status",
        "--type=merge",
        "-p",
        waiting,
    ]));
    let mut kubectl = sandbox.kubectl(&ctx, "").expect("kubectl");
    let out = kubectl
        .args(["logs", "pending", "-c", "a"])
        .output()
        .expect("kubectl");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Error from server (BadRequest): container \"a\" in pod \"pending\" is waiting to start: ContainerCreating"
    );
}

/// The forward annotation on a Deployment's pod template reaches the pods its
/// ReplicaSet makes: once `kubectl wait` sees the Deployment Available, a port-forward
/// to the Deployment and to its Service reaches the server on this machine.
#[test]
fn a_deployment_template_annotation_forwards_its_pods() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let Some(mut kubectl) =
        sandbox.kubectl(&ctx, "a_deployment_template_annotation_forwards_its_pods")
    else {
        return;
    };
    let backend = http_server();
    let manifest = format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 2
  selector: {{matchLabels: {{app: api}}}}
  template:
    metadata:
      labels: {{app: api}}
      annotations:
        sandbox.chartkit.dev/forward: "8080=127.0.0.1:{backend}"
    spec:
      containers:
      - name: app
        image: nginx
        ports: [{{name: http, containerPort: 8080}}]
---
apiVersion: v1
kind: Service
metadata:
  name: api
spec:
  selector: {{app: api}}
  ports: [{{port: 80, targetPort: http}}]
"#
    );
    let file = write_file(&ctx.path("manifests"), "api.yaml", &manifest);
    run_ok(kubectl.arg("apply").arg("-f").arg(&file));
    run_ok(sandbox.kubectl(&ctx, "").expect("kubectl").args([
        "wait",
        "--for=condition=Available",
        "deployment/api",
        "--timeout=60s",
    ]));
    for (target, port) in [("deployment/api", "8080"), ("svc/api", "80")] {
        let (child, local) = port_forward(&ctx, &sandbox, target, port, true);
        let response = get(local, "/through-the-template");
        assert!(
            response.starts_with("HTTP/1.1 200 OK")
                && response.ends_with("hello from /through-the-template"),
            "{target}: {response}\n{}",
            sandbox.log()
        );
        stop(child);
    }
}
