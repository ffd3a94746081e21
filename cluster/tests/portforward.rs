//! Tunnels against an in-process sandbox whose pods forward (through the sandbox's
//! forward annotation) to an HTTP server in this test: the pod chosen behind a service,
//! a deployment and a pod, named ports, a pod that goes away between connections,
//! errors naming what is wrong, and nothing left open in the sandbox once the tunnels
//! close.
//!
//! The sandbox's live-session counters are per process, so the tests take turns.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chartkit_cluster::KubeOptions;
use chartkit_cluster::portforward::{ForwardError, PortRef, Resource, Target, Tunnels};
use chartkit_sandbox::cluster::{DeleteOptions, WriteOptions};
use chartkit_sandbox::portforward::{FORWARD_ANNOTATION, live};
use chartkit_sandbox::{Options, Sandbox, Settings};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use serde_json::json;

static SERIAL: Mutex<()> = Mutex::new(());

/// An HTTP server answering `hello from PATH`, then closing.
fn http_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
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
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    addr
}

/// A sandbox on its own runtime (the tunnels under test are blocking callers), with
/// Deployment `charts` (two pods forwarding container port `http` 8080 to `backend`)
/// behind Service `charts` (port 8879 → targetPort `http`, named `repo`).
struct World {
    runtime: tokio::runtime::Runtime,
    sandbox: Sandbox,
}

impl World {
    fn start(replicas: u32) -> World {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let sandbox = runtime
            .block_on(Sandbox::start(Options {
                settings: Settings {
                    pod_ready_delay: Duration::from_millis(100),
                    ..Settings::default()
                },
                ..Options::default()
            }))
            .unwrap();
        let world = World { runtime, sandbox };
        let backend = http_server();
        world.create(
            "apps",
            "deployments",
            json!({
                "metadata": {"name": "charts"},
                "spec": {
                    "replicas": replicas,
                    "selector": {"matchLabels": {"app": "charts"}},
                    "template": {
                        "metadata": {"labels": {"app": "charts"},
                            "annotations": {FORWARD_ANNOTATION: format!("8080={backend}")}},
                        "spec": {"containers": [{"name": "serve", "image": "chartkit",
                            "ports": [{"name": "http", "containerPort": 8080}]}]},
                    },
                },
            }),
        );
        world.create(
            "",
            "services",
            json!({
                "metadata": {"name": "charts"},
                "spec": {"selector": {"app": "charts"},
                    "ports": [{"name": "repo", "port": 8879, "targetPort": "http"}]},
            }),
        );
        world.wait_ready(replicas as usize);
        world
    }

    fn create(&self, group: &str, plural: &str, object: serde_json::Value) {
        let cluster = &self.sandbox.cluster;
        let opts = WriteOptions {
            manager: "test".into(),
            ..WriteOptions::default()
        };
        cluster
            .create(
                &cluster.resource(group, plural, "default", ""),
                object,
                &opts,
            )
            .unwrap();
    }

    fn delete(&self, group: &str, plural: &str, name: &str) {
        let cluster = &self.sandbox.cluster;
        cluster
            .delete(
                &cluster.resource(group, plural, "default", name),
                &DeleteOptions::default(),
            )
            .unwrap();
    }

    fn scale(&self, replicas: u32) {
        let cluster = &self.sandbox.cluster;
        let target = cluster.resource("apps", "deployments", "default", "charts");
        cluster
            .mutate(&target, "test", |d| {
                d["spec"]["replicas"] = json!(replicas);
                true
            })
            .unwrap();
    }

    fn client(&self) -> kube::Client {
        let _guard = self.runtime.enter();
        kube::Client::try_from(kube::Config::new(self.sandbox.url().parse().unwrap())).unwrap()
    }

    /// The names of the ready `app=charts` pods not being deleted, once there are `n`.
    fn wait_ready(&self, n: usize) -> Vec<String> {
        let pods: Api<Pod> = Api::namespaced(self.client(), "default");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let list = self
                .runtime
                .block_on(pods.list(&ListParams::default().labels("app=charts")))
                .unwrap();
            let ready: Vec<String> = list
                .items
                .iter()
                .filter(|p| {
                    p.metadata.deletion_timestamp.is_none()
                        && p.status
                            .as_ref()
                            .and_then(|s| s.conditions.as_ref())
                            .is_some_and(|c| {
                                c.iter().any(|c| c.type_ == "Ready" && c.status == "True")
                            })
                })
                .filter_map(|p| p.metadata.name.clone())
                .collect();
            if ready.len() == n {
                return ready;
            }
            assert!(
                Instant::now() < deadline,
                "{n} ready pods never came: {ready:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn tunnels(&self) -> Tunnels {
        Tunnels::new(KubeOptions {
            apiserver: Some(self.sandbox.url()),
            ..KubeOptions::default()
        })
    }
}

fn target(resource: Resource, port: PortRef) -> Target {
    Target {
        namespace: "default".into(),
        resource,
        port,
    }
}

fn service() -> Target {
    target(Resource::Service("charts".into()), PortRef::Number(8879))
}

/// `GET path` through `local`, the whole answer.
fn get(local: SocketAddr, path: &str) -> String {
    let mut s = TcpStream::connect(local).expect("connect to the tunnel");
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    // The tunnel may close a connection it cannot forward before the request is
    // written (a port nothing listens on); the answer, empty then, is what tests judge.
    let _ = write!(s, "GET {path} HTTP/1.1\r\nHost: charts\r\n\r\n");
    let mut response = String::new();
    let _ = s.read_to_string(&mut response);
    response
}

/// Waits until the sandbox has no port-forward session or forwarded connection left.
fn assert_nothing_left() {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let now = live();
        if now.sessions == 0 && now.connections == 0 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "still live after the tunnels closed: {now:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_service_tunnel_follows_its_pods_and_closes_completely() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let world = World::start(2);
    let tunnels = world.tunnels();
    let local = tunnels.open(&service()).unwrap();
    assert_eq!(
        tunnels.open(&service()).unwrap(),
        local,
        "one listener per target"
    );
    let first = tunnels.pod(&service()).unwrap();
    for path in ["/index.yaml", "/charts/web-1.2.0.tgz"] {
        let response = get(local, path);
        assert!(
            response.ends_with(&format!("hello from {path}")),
            "{response}"
        );
    }
    assert_eq!(tunnels.pod(&service()).as_deref(), Some(first.as_str()));

    // The pod in use goes away: the next connection goes to another ready pod.
    world.delete("", "pods", &first);
    let response = get(local, "/after");
    assert!(response.ends_with("hello from /after"), "{response}");
    let second = tunnels.pod(&service()).unwrap();
    assert_ne!(second, first);
    assert_eq!(tunnels.take_failure(&service()), None);

    tunnels.close();
    assert_nothing_left();
    assert!(
        TcpStream::connect(local).is_err(),
        "the listener still accepts after close"
    );
}

#[test]
fn named_ports_deployments_and_pods_are_reached() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let world = World::start(1);
    let pod = world.wait_ready(1).remove(0);
    let tunnels = world.tunnels();
    for t in [
        target(
            Resource::Service("charts".into()),
            PortRef::Name("repo".into()),
        ),
        target(
            Resource::Deployment("charts".into()),
            PortRef::Name("http".into()),
        ),
        target(Resource::Deployment("charts".into()), PortRef::Number(8080)),
        target(Resource::Pod(pod.clone()), PortRef::Name("http".into())),
    ] {
        let local = tunnels.open(&t).unwrap();
        let response = get(local, "/x");
        assert!(response.ends_with("hello from /x"), "{t}: {response}");
        assert_eq!(tunnels.pod(&t).as_deref(), Some(pod.as_str()), "{t}");
    }
    drop(tunnels);
    assert_nothing_left();
}

#[test]
fn errors_name_the_part_of_the_target_that_is_wrong() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let world = World::start(1);
    world.create(
        "",
        "services",
        json!({"metadata": {"name": "empty"},
            "spec": {"selector": {"app": "nothing"}, "ports": [{"port": 80}]}}),
    );
    let tunnels = world.tunnels();
    let error = |t: Target| -> String {
        match tunnels.open(&t) {
            Ok(local) => panic!("{t} opened on {local}"),
            Err(e) => e.to_string(),
        }
    };
    let in_ns = |ns: &str| Target {
        namespace: ns.into(),
        ..service()
    };
    assert_eq!(error(in_ns("infra")), "namespace infra does not exist");
    assert_eq!(
        error(target(
            Resource::Service("nope".into()),
            PortRef::Number(80)
        )),
        "service nope does not exist in namespace default"
    );
    assert_eq!(
        error(target(
            Resource::Service("empty".into()),
            PortRef::Number(80)
        )),
        "no ready pod behind svc/empty in namespace default (no pod matches app=nothing)"
    );
    assert_eq!(
        error(target(
            Resource::Service("charts".into()),
            PortRef::Number(80)
        )),
        "service charts in namespace default has no port 80 (its ports: 8879 (repo))"
    );
    let message = error(target(
        Resource::Deployment("charts".into()),
        PortRef::Name("admin".into()),
    ));
    assert!(
        message.ends_with("has no container port named admin"),
        "{message}"
    );
    assert_eq!(
        error(target(Resource::Pod("gone".into()), PortRef::Number(8080))),
        "pod gone does not exist in namespace default"
    );

    // No pod ready at all.
    world.scale(0);
    world.wait_ready(0);
    // (The pod may still be terminating: then the selector matches it, not ready.)
    let message = error(service());
    assert!(
        message.starts_with("no ready pod behind svc/charts in namespace default ("),
        "{message}"
    );
    assert!(matches!(
        tunnels.open(&service()),
        Err(ForwardError::NoReadyPod { .. })
    ));
}

#[test]
fn a_pod_gone_with_no_other_to_take_over_is_reported_after_waiting() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let world = World::start(1);
    let tunnels = world
        .tunnels()
        .with_reconnect_wait(Duration::from_millis(500));
    let local = tunnels.open(&service()).unwrap();
    assert!(get(local, "/one").ends_with("hello from /one"));
    world.scale(0);
    world.wait_ready(0);
    assert_eq!(get(local, "/two"), "", "nothing to forward to");
    let failure = tunnels.take_failure(&service()).expect("a reason");
    assert!(
        failure.starts_with("no ready pod behind svc/charts in namespace default ("),
        "{failure}"
    );
    assert_eq!(tunnels.take_failure(&service()), None, "read once");

    // A pod that comes back within the wait is used.
    let tunnels = world.tunnels().with_reconnect_wait(Duration::from_secs(30));
    world.scale(1);
    world.wait_ready(1);
    let local = tunnels.open(&service()).unwrap();
    world.delete("", "pods", &tunnels.pod(&service()).unwrap());
    assert!(get(local, "/three").ends_with("hello from /three"));
    drop(tunnels);
    assert_nothing_left();
}

#[test]
fn a_port_nothing_listens_on_is_reported() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let world = World::start(1);
    let tunnels = world.tunnels();
    let t = target(Resource::Deployment("charts".into()), PortRef::Number(9090));
    let local = tunnels.open(&t).unwrap();
    assert_eq!(get(local, "/"), "");
    // The bridge records the reason as the forwarded stream ends, which may be just after
    // the client saw its connection close.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let failure = loop {
        match tunnels.take_failure(&t) {
            Some(failure) => break failure,
            None if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20))
            }
            None => panic!("no reason recorded for the failed connection"),
        }
    };
    assert!(
        failure.contains("could not be reached on port 9090")
            && failure.contains("failed to connect to localhost:9090"),
        "{failure}"
    );
    drop(tunnels);
    assert_nothing_left();
}
