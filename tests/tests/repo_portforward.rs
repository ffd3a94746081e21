//! A chart repository that lives only inside a cluster: a real `chartkit serve` (basic
//! auth on reads) stands behind Deployment + Service `charts` in a sandbox, whose pods
//! forward (the sandbox's forward annotation) to it, and chartkit reaches it with
//! `portforward://` URLs alone: `repo add`, `search repo`, `install --repo ... --wait`,
//! `upgrade`, `pull`, with helm seeing the release. The sandbox runs in this process, so
//! its live port-forward counters show that no tunnel outlives a command (nor stays open
//! while `install --wait` waits); its audit log shows the tunnels were the only route.
//! The backing pods are deleted in the middle of a package download: chartkit recovers
//! through the pods the Deployment brings back, or says there is no ready pod. Bad URLs
//! are refused naming the part that is wrong.
//!
//! The live counters are per process, so the tests take turns.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chartkit_sandbox::cluster::{DeleteOptions, ListOptions, WriteOptions};
use chartkit_sandbox::portforward::{FORWARD_ANNOTATION, live};
use chartkit_sandbox::selector::LabelSelector;
use chartkit_sandbox::{Options, Sandbox, Settings};
use chartkit_tests::TestContext;
use chartkit_tests::archive::{Entry, build};
use chartkit_tests::server::ServeProcess;
use serde_json::{Value, json};

static SERIAL: Mutex<()> = Mutex::new(());

const URL: &str = "portforward://default/svc/charts:8879";

/// Chart `app` at `version`: a ConfigMap saying the version and a Deployment (so
/// `--wait` has something to wait for), with a file of incompressible text so a
/// download takes more than one read.
fn app_package(version: &str) -> Vec<u8> {
    let chart = format!("apiVersion: v2\nname: app\nversion: {version}\nappVersion: {version}\n");
    let configmap = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  version: {{ .Chart.Version | quote }}\n";
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: {{ .Release.Name }}}\n  template:\n    metadata:\n      labels: {app: {{ .Release.Name }}}\n    spec:\n      containers:\n      - name: app\n        image: nginx\n";
    let mut noise = String::new();
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    while noise.len() < 16 * 1024 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        noise.push_str(&format!("{state:016x}\n"));
    }
    build(&[
        Entry::File("app/Chart.yaml", chart.as_bytes()),
        Entry::File("app/values.yaml", b"{}\n"),
        Entry::File("app/templates/configmap.yaml", configmap.as_bytes()),
        Entry::File("app/templates/deployment.yaml", deployment.as_bytes()),
        Entry::File("app/files/noise.txt", noise.as_bytes()),
    ])
}

/// What the test tells the relay to do to one package download.
struct Trap {
    /// `GET PATH` to catch.
    request: String,
    /// Told when the download is held, after its headers and some of its body.
    held: Sender<()>,
    /// Answered when the connection is to be cut.
    cut: Receiver<()>,
}

/// A relay in front of `chartkit serve`, where the pods' forward annotation points: it
/// copies bytes both ways, and with a trap set, holds one download midway and then cuts
/// its connection, as a container killed mid-transfer does.
struct Relay {
    addr: SocketAddr,
    trap: Arc<Mutex<Option<Trap>>>,
}

impl Relay {
    fn start(backend: SocketAddr) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let trap: Arc<Mutex<Option<Trap>>> = Arc::new(Mutex::new(None));
        let traps = Arc::clone(&trap);
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(backend) else {
                    continue;
                };
                relay(client, server, Arc::clone(&traps));
            }
        });
        Relay { addr, trap }
    }

    /// Holds the next download of `path`; returns (held, cut).
    fn arm(&self, path: &str) -> (Receiver<()>, Sender<()>) {
        let (held_tx, held_rx) = channel();
        let (cut_tx, cut_rx) = channel();
        *self.trap.lock().unwrap() = Some(Trap {
            request: format!("GET {path} "),
            held: held_tx,
            cut: cut_rx,
        });
        (held_rx, cut_tx)
    }
}

/// One connection: upstream bytes are watched for the trapped request; once it is seen,
/// the response is let through up to 256 bytes past its headers, then held until the
/// test says to cut, and both sides are closed.
fn relay(client: TcpStream, server: TcpStream, traps: Arc<Mutex<Option<Trap>>>) {
    // Set by the upstream copy when the trapped request goes by.
    let caught: Arc<Mutex<Option<Trap>>> = Arc::new(Mutex::new(None));
    {
        let (mut from, mut to) = (client.try_clone().unwrap(), server.try_clone().unwrap());
        let caught = Arc::clone(&caught);
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            let mut buf = [0u8; 16 * 1024];
            loop {
                let n = match from.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                seen.extend_from_slice(&buf[..n]);
                let mut armed = traps.lock().unwrap();
                let hit = armed
                    .as_ref()
                    .is_some_and(|t| String::from_utf8_lossy(&seen).contains(&t.request));
                if hit {
                    *caught.lock().unwrap() = armed.take();
                }
                drop(armed);
                if seen.len() > 64 * 1024 {
                    seen.drain(..32 * 1024);
                }
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            let _ = to.shutdown(Shutdown::Write);
        });
    }
    std::thread::spawn(move || {
        let (mut from, mut to) = (server, client);
        let mut buf = [0u8; 16 * 1024];
        // Bytes of the trapped response so far.
        let mut response: Vec<u8> = Vec::new();
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let chunk = &buf[..n];
            let trapped = caught.lock().unwrap().take();
            if let Some(trap) = trapped {
                response.extend_from_slice(chunk);
                let head = response
                    .windows(4)
                    .position(|w| w == b"\r\n\r\n")
                    .map(|i| i + 4);
                match head {
                    Some(head) if response.len() > head + 256 => {
                        let keep = chunk.len() - (response.len() - (head + 256));
                        let _ = to.write_all(&chunk[..keep]);
                        let _ = trap.held.send(());
                        let _ = trap.cut.recv_timeout(Duration::from_secs(120));
                        let _ = to.shutdown(Shutdown::Both);
                        let _ = from.shutdown(Shutdown::Both);
                        return;
                    }
                    _ => *caught.lock().unwrap() = Some(trap),
                }
            }
            if to.write_all(chunk).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}

/// An in-process sandbox on its own runtime, with `chartkit serve` (basic auth on
/// reads, packages app 1.2.0, 1.4.1 and 2.0.0) behind the relay, behind Deployment and
/// Service `charts`.
struct World {
    ctx: TestContext,
    /// Runs the sandbox's server and controllers.
    _runtime: tokio::runtime::Runtime,
    sandbox: Sandbox,
    kubeconfig: PathBuf,
    audit: PathBuf,
    relay: Relay,
    _serve: ServeProcess,
}

impl World {
    fn start(pod_ready_delay: Duration) -> World {
        let ctx = TestContext::new();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let audit = ctx.path("audit.jsonl");
        let sandbox = runtime
            .block_on(Sandbox::start(Options {
                settings: Settings {
                    pod_ready_delay,
                    ..Settings::default()
                },
                audit_log: Some(audit.clone()),
                ..Options::default()
            }))
            .unwrap();
        let kubeconfig = ctx.path("kubeconfig");
        std::fs::write(&kubeconfig, sandbox.kubeconfig()).unwrap();

        let storage = ctx.path("storage");
        std::fs::create_dir(&storage).unwrap();
        for version in ["1.2.0", "1.4.1", "2.0.0"] {
            std::fs::write(
                storage.join(format!("app-{version}.tgz")),
                app_package(version),
            )
            .unwrap();
        }
        let htpasswd = ctx.path("htpasswd");
        std::fs::write(
            &htpasswd,
            format!("ci:{}\n", bcrypt::hash("let-me-in", 4).unwrap()),
        )
        .unwrap();
        let serve = ServeProcess::start(
            ctx.chartkit(),
            &[
                storage.to_str().unwrap(),
                "--basic-auth-file",
                htpasswd.to_str().unwrap(),
                "--auth-reads",
            ],
            ctx.dir(),
        );
        let backend: SocketAddr = serve.url.strip_prefix("http://").unwrap().parse().unwrap();
        let relay = Relay::start(backend);
        let world = World {
            ctx,
            _runtime: runtime,
            sandbox,
            kubeconfig,
            audit,
            relay,
            _serve: serve,
        };
        world.create(
            "apps",
            "deployments",
            json!({
                "metadata": {"name": "charts"},
                "spec": {
                    "replicas": 2,
                    "selector": {"matchLabels": {"app": "charts"}},
                    "template": {
                        "metadata": {"labels": {"app": "charts"},
                            "annotations": {FORWARD_ANNOTATION: format!("8080={}", world.relay.addr)}},
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
                    "ports": [{"name": "http", "port": 8879, "targetPort": "http"}]},
            }),
        );
        world.wait_ready_charts(2);
        world
    }

    fn create(&self, group: &str, plural: &str, object: Value) {
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

    /// The `app=charts` pods, each with whether it is ready and not being deleted.
    fn charts_pods(&self) -> Vec<(String, bool)> {
        let cluster = &self.sandbox.cluster;
        let list = cluster
            .list(
                &cluster.resource("", "pods", "default", ""),
                &ListOptions {
                    labels: LabelSelector::parse("app=charts").unwrap(),
                    ..ListOptions::default()
                },
            )
            .unwrap();
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let ready = p["metadata"]["deletionTimestamp"].is_null()
                    && p["status"]["conditions"].as_array().is_some_and(|c| {
                        c.iter()
                            .any(|c| c["type"] == "Ready" && c["status"] == "True")
                    });
                (p["metadata"]["name"].as_str().unwrap().to_owned(), ready)
            })
            .collect()
    }

    fn wait_ready_charts(&self, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.charts_pods().iter().filter(|(_, r)| *r).count() != n {
            assert!(
                Instant::now() < deadline,
                "{n} ready charts pods never came"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Deletes every `app=charts` pod (the Deployment makes new ones unless scaled to
    /// 0 first).
    fn delete_charts_pods(&self) -> Vec<String> {
        let cluster = &self.sandbox.cluster;
        let names: Vec<String> = self.charts_pods().into_iter().map(|(n, _)| n).collect();
        for name in &names {
            cluster
                .delete(
                    &cluster.resource("", "pods", "default", name),
                    &DeleteOptions::default(),
                )
                .unwrap();
        }
        names
    }

    fn scale_charts(&self, replicas: u32) {
        let cluster = &self.sandbox.cluster;
        cluster
            .mutate(
                &cluster.resource("apps", "deployments", "default", "charts"),
                "test",
                |d| {
                    d["spec"]["replicas"] = json!(replicas);
                    true
                },
            )
            .unwrap();
    }

    /// `chartkit ARGS` with the sandbox's kubeconfig.
    fn chartkit(&self, args: &[&str]) -> Command {
        let mut command = self.ctx.chartkit();
        command.env("KUBECONFIG", &self.kubeconfig).args(args);
        command
    }

    /// Runs `chartkit ARGS`, and checks no tunnel is left open in the sandbox after.
    fn run(&self, args: &[&str]) -> Output {
        let out = self.chartkit(args).output().expect("run chartkit");
        assert_nothing_left(args);
        out
    }

    fn run_ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "chartkit {args:?} failed:\n{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    /// The request URIs of the audit log so far.
    fn audited(&self) -> Vec<String> {
        std::fs::read_to_string(&self.audit)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .map(|v| v["requestURI"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    fn port_forwards(&self) -> Vec<String> {
        self.audited()
            .into_iter()
            .filter(|uri| uri.contains("/portforward"))
            .collect()
    }

    /// Whether a release record of `name` exists (helm's Secret driver).
    fn has_release_record(&self, name: &str) -> bool {
        let cluster = &self.sandbox.cluster;
        let list = cluster
            .list(
                &cluster.resource("", "secrets", "default", ""),
                &ListOptions {
                    labels: LabelSelector::parse(&format!("owner=helm,name={name}")).unwrap(),
                    ..ListOptions::default()
                },
            )
            .unwrap();
        list["items"].as_array().is_some_and(|i| !i.is_empty())
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Waits until the sandbox has no port-forward session or forwarded connection (they
/// end as the client's connection closes, which takes the server a moment to notice).
fn assert_nothing_left(what: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let now = live();
        if now.sessions == 0 && now.connections == 0 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "a port-forward is still open after chartkit {what:?}: {now:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_repository_inside_the_cluster_is_used_through_port_forwards_only() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let world = World::start(Duration::from_millis(800));

    let added = world.run_ok(&[
        "repo",
        "add",
        "charts",
        URL,
        "--username",
        "ci",
        "--password",
        "let-me-in",
    ]);
    assert_eq!(added, "\"charts\" has been added to your repositories\n");
    let forwards = world.port_forwards().len();
    assert!(forwards >= 1, "repo add used no port-forward");

    let found = world.run_ok(&["search", "repo", "charts/app", "--versions"]);
    let versions: Vec<&str> = found
        .lines()
        .skip(1)
        .filter_map(|row| row.split_whitespace().nth(1))
        .collect();
    assert_eq!(versions, ["2.0.0", "1.4.1", "1.2.0"], "{found}");
    assert_eq!(
        world.port_forwards().len(),
        forwards,
        "search reads the cache"
    );

    // While install waits for its Deployment, the tunnel is already closed: the
    // repository client (and its tunnels) is done once the chart is loaded.
    let mut install = world
        .chartkit(&[
            "install",
            "web",
            "app",
            "--repo",
            URL,
            "--version",
            "^1.2",
            "--wait",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut open_while_waiting = Vec::new();
    let mut saw_record = false;
    while install.try_wait().unwrap().is_none() {
        if world.has_release_record("web") {
            saw_record = true;
            let now = live();
            if now.sessions > 0 {
                open_while_waiting.push(now);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let installed = install.wait_with_output().unwrap();
    assert!(
        installed.status.success(),
        "{}{}",
        text(&installed.stdout),
        text(&installed.stderr)
    );
    assert!(saw_record, "the install finished before it was watched");
    assert!(
        open_while_waiting.is_empty(),
        "port-forwards open while install waited: {open_while_waiting:?}"
    );
    assert_nothing_left(&["install"]);
    let out = text(&installed.stdout);
    assert!(
        out.starts_with("NAME: web\n") && out.contains("STATUS: deployed\nREVISION: 1\n"),
        "{out}"
    );

    let upgraded = world.run_ok(&[
        "upgrade",
        "web",
        "app",
        "--repo",
        URL,
        "--version",
        "2.0.0",
        "--wait",
    ]);
    assert!(
        upgraded.contains("STATUS: deployed\nREVISION: 2\n"),
        "{upgraded}"
    );

    // The configured repository by name, through the tunnel, into the content cache.
    world.run_ok(&["pull", "charts/app", "--version", "1.2.0", "-d", "pulled"]);
    assert!(world.ctx.path("pulled/app-1.2.0.tgz").exists());

    // A dependency in the in-cluster repository, and a mirror of it.
    let parent = world.ctx.path("parent");
    std::fs::create_dir_all(parent.join("templates")).unwrap();
    std::fs::write(
        parent.join("Chart.yaml"),
        format!(
            "apiVersion: v2\nname: parent\nversion: 0.1.0\ndependencies:\n- name: app\n  version: ^1.2\n  repository: {URL}\n"
        ),
    )
    .unwrap();
    world.run_ok(&["dependency", "update", parent.to_str().unwrap()]);
    assert!(parent.join("charts/app-1.4.1.tgz").exists());
    let lock = std::fs::read_to_string(parent.join("Chart.lock")).unwrap();
    assert!(lock.contains(&format!("repository: {URL}\n")), "{lock}");
    let mirrored = world.run_ok(&["mirror", URL, "--to", "mirrored", "--versions", "^1.2"]);
    assert!(mirrored.contains("2 new package(s)"), "{mirrored}");
    assert!(world.ctx.path("mirrored/app-1.2.0.tgz").exists());
    assert!(world.ctx.path("mirrored/index.yaml").exists());

    // Offline, the cache answers and no tunnel is opened.
    let before = world.port_forwards().len();
    world.run_ok(&[
        "pull",
        "charts/app",
        "--version",
        "1.4.1",
        "-d",
        "offline",
        "--offline",
    ]);
    assert!(world.ctx.path("offline/app-1.4.1.tgz").exists());
    assert_eq!(
        world.port_forwards().len(),
        before,
        "--offline opened a tunnel"
    );

    // Credentials went with the index and the packages (the server wants them for
    // reads): without them, the same URL is refused by the server, through the tunnel.
    let refused = world.run(&[
        "pull",
        "app",
        "--repo",
        "portforward://default/svc/charts:http/",
    ]);
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("answered 401"),
        "{}",
        text(&refused.stderr)
    );

    // The only route to the repository was the port-forwards: no proxy requests.
    let audited = world.audited();
    assert!(
        !audited.iter().any(|uri| uri.contains("/proxy")),
        "{audited:?}"
    );
    assert!(
        world.port_forwards().iter().all(|uri| uri
            .starts_with("/api/v1/namespaces/default/pods/charts-")
            && uri.contains("/portforward?")
            && uri.ends_with("ports=8080")),
        "{:?}",
        world.port_forwards()
    );

    // helm sees the release chartkit installed and upgraded from the in-cluster
    // repository.
    let Some(helm) = chartkit_tests::peers::helm_or_skip(
        "a_repository_inside_the_cluster_is_used_through_port_forwards_only",
    ) else {
        return;
    };
    let listed = world
        .ctx
        .hermetic(&helm)
        .env("KUBECONFIG", &world.kubeconfig)
        .args(["list", "-o", "json"])
        .output()
        .unwrap();
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let releases: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(releases[0]["name"], "web", "{releases}");
    assert_eq!(releases[0]["revision"], "2", "{releases}");
    assert_eq!(releases[0]["chart"], "app-2.0.0", "{releases}");
    assert_eq!(releases[0]["status"], "deployed", "{releases}");
}

#[test]
fn pods_deleted_mid_download_are_replaced_or_reported() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let world = World::start(Duration::from_millis(300));
    world.run_ok(&[
        "repo",
        "add",
        "charts",
        URL,
        "--username",
        "ci",
        "--password",
        "let-me-in",
    ]);

    // Recovery: the Deployment brings new pods, and the download starts again on one.
    let (held, cut) = world.relay.arm("/charts/app-1.4.1.tgz");
    let install = world
        .chartkit(&["install", "web", "charts/app", "--version", "1.4.1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    held.recv_timeout(Duration::from_secs(60))
        .expect("the download was never held");
    let deleted = world.delete_charts_pods();
    cut.send(()).unwrap();
    let installed = install.wait_with_output().unwrap();
    assert!(
        installed.status.success(),
        "{}{}",
        text(&installed.stdout),
        text(&installed.stderr)
    );
    assert!(text(&installed.stdout).contains("STATUS: deployed"));
    assert_nothing_left(&["install"]);
    let last = world.port_forwards().pop().unwrap();
    assert!(
        !deleted
            .iter()
            .any(|pod| last.contains(&format!("/pods/{pod}/"))),
        "the download started again on a deleted pod: {last} (deleted {deleted:?})"
    );

    // The same for an index download (a repository not cached yet, by another spelling
    // of the URL: the service port's name).
    world.wait_ready_charts(2);
    let (held, cut) = world.relay.arm("/index.yaml");
    let pull = world
        .chartkit(&[
            "pull",
            "app",
            "--repo",
            "portforward://default/svc/charts:http",
            "--username",
            "ci",
            "--password",
            "let-me-in",
            "--version",
            "2.0.0",
            "-d",
            "index-cut",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    held.recv_timeout(Duration::from_secs(60))
        .expect("the index download was never held");
    world.delete_charts_pods();
    cut.send(()).unwrap();
    let pulled = pull.wait_with_output().unwrap();
    assert!(pulled.status.success(), "{}", text(&pulled.stderr));
    assert!(world.ctx.path("index-cut/app-2.0.0.tgz").exists());
    assert_nothing_left(&["pull"]);

    // No pod comes back: after waiting for one, chartkit says so.
    world.wait_ready_charts(2);
    let (held, cut) = world.relay.arm("/charts/app-1.2.0.tgz");
    let pull = world
        .chartkit(&["pull", "charts/app", "--version", "1.2.0", "-d", "lost"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    held.recv_timeout(Duration::from_secs(60))
        .expect("the download was never held");
    world.scale_charts(0);
    world.delete_charts_pods();
    cut.send(()).unwrap();
    let pulled = pull.wait_with_output().unwrap();
    assert!(!pulled.status.success());
    let stderr = text(&pulled.stderr);
    assert!(
        stderr.starts_with(&format!(
            "Error: cannot port-forward to {URL}/charts/app-1.2.0.tgz: no ready pod behind svc/charts in namespace default ("
        )),
        "{stderr}"
    );
    assert!(!world.ctx.path("lost/app-1.2.0.tgz").exists());
    assert_nothing_left(&["pull"]);
}

#[test]
fn bad_urls_name_the_part_that_is_wrong() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let world = World::start(Duration::from_millis(300));
    world.create(
        "",
        "services",
        json!({"metadata": {"name": "empty"},
            "spec": {"selector": {"app": "nothing"}, "ports": [{"port": 80}]}}),
    );
    let error = |args: &[&str]| -> String {
        let out = world.run(args);
        assert!(!out.status.success(), "{args:?} succeeded");
        text(&out.stderr)
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(
        error(&["repo", "add", "x", "portforward://default/svc/charts"]),
        "Error: looks like \"portforward://default/svc/charts\" is not a valid chart repository or cannot be reached: invalid URL `portforward://default/svc/charts`: `svc/charts` has no port: add `:PORT`, the service port's number or name; write portforward://NAMESPACE/svc/NAME:PORT[/PATH] (or pod/NAME, deploy/NAME)"
    );
    assert_eq!(
        error(&[
            "install",
            "web",
            "app",
            "--repo",
            "portforward://infra/svc/charts:8879"
        ]),
        "Error: INSTALLATION FAILED: cannot port-forward to portforward://infra/svc/charts:8879/index.yaml: namespace infra does not exist"
    );
    assert_eq!(
        error(&[
            "pull",
            "app",
            "--repo",
            "portforward://default/svc/nope:8879"
        ]),
        "Error: cannot port-forward to portforward://default/svc/nope:8879/index.yaml: service nope does not exist in namespace default"
    );
    assert_eq!(
        error(&[
            "pull",
            "app",
            "--repo",
            "portforward://default/svc/empty:80"
        ]),
        "Error: cannot port-forward to portforward://default/svc/empty:80/index.yaml: no ready pod behind svc/empty in namespace default (no pod matches app=nothing)"
    );
    assert_eq!(
        error(&[
            "pull",
            "app",
            "--repo",
            "portforward://default/svc/charts:9999"
        ]),
        "Error: cannot port-forward to portforward://default/svc/charts:9999/index.yaml: service charts in namespace default has no port 9999 (its ports: 8879 (http))"
    );
    assert_eq!(
        error(&[
            "pull",
            "app",
            "--repo",
            "portforward://default/ingress/charts:80"
        ]),
        "Error: invalid URL `portforward://default/ingress/charts:80`: `ingress` is not something chartkit port-forwards to: use svc, pod or deploy; write portforward://NAMESPACE/svc/NAME:PORT[/PATH] (or pod/NAME, deploy/NAME)"
    );
}
