//! An embedded Kubernetes API server for installing and testing charts with no cluster.
//!
//! It speaks the real REST protocol (discovery, OpenAPI, CRUD with resourceVersions,
//! watches, the four patch types, server-side apply, Tables) well enough that the real
//! kubectl and helm use it as a cluster, and simulates what controllers visibly do
//! (Deployments roll out to ready pods, Jobs complete, Services get IPs, namespaces and
//! owners cascade their deletions). No container runs.
//!
//! - [`Sandbox::start`] serves on an address until stopped; tests start one in-process.
//! - [`cluster::Cluster`] holds the API's semantics independent of HTTP.
//! - [`kubeconfig`] writes the context clients use to reach it.

pub mod body;
pub mod cluster;
pub mod controllers;
pub mod convert;
pub mod crd;
pub mod fieldmanager;
pub mod fieldset;
pub mod gojson;
pub mod http;
pub mod jsonpath;
pub mod kubeconfig;
pub mod meta;
pub mod patch;
pub mod persist;
pub mod pods;
pub mod portforward;
pub mod proto;
pub mod resources;
pub mod rules;
pub mod scale;
pub mod schema;
pub mod selector;
pub mod settings;
pub mod status;
pub mod store;
pub mod tls;
pub mod virtual_resources;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;

pub use cluster::Cluster;
pub use settings::Settings;
pub use tls::TlsMaterial;

/// Why a sandbox could not start.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    /// Making the TLS material failed.
    #[error("cannot set up TLS: {0}")]
    Tls(String),
    /// The data directory could not be read or written.
    #[error("data directory `{path}`: {message}")]
    Data { path: PathBuf, message: String },
    /// The data directory is locked by another sandbox, or its state is damaged.
    #[error(transparent)]
    Persist(#[from] persist::PersistError),
    /// `--audit-log`'s file could not be opened for appending.
    #[error("cannot open the audit log `{}`: {source}", path.display())]
    AuditLog {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// How to start a sandbox.
#[derive(Debug, Clone)]
pub struct Options {
    pub addr: SocketAddr,
    /// Serve HTTPS with a generated CA and require a bearer token.
    pub tls: bool,
    /// Keep the state in this directory, crash-safely.
    pub data: Option<PathBuf>,
    pub settings: Settings,
    /// A secret that lets a POST to [`http::SHUTDOWN_PATH`] stop the server.
    pub shutdown_token: Option<String>,
    /// Append one JSON line per request to this file (`--audit-log`).
    pub audit_log: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            tls: false,
            data: None,
            settings: Settings::default(),
            shutdown_token: None,
            audit_log: None,
        }
    }
}

/// A running sandbox.
pub struct Sandbox {
    pub cluster: Arc<Cluster>,
    addr: SocketAddr,
    tls: Option<TlsMaterial>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    /// The journal of `--data`, closed when the sandbox stops.
    wal: Option<Arc<persist::Wal>>,
    warnings: Vec<String>,
}

impl Sandbox {
    /// Binds, restores or seeds the state, starts the controllers and serves.
    pub async fn start(options: Options) -> Result<Sandbox, SandboxError> {
        let listener = tokio::net::TcpListener::bind(options.addr)
            .await
            .map_err(|source| SandboxError::Bind {
                addr: options.addr,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| SandboxError::Bind {
            addr: options.addr,
            source,
        })?;
        let tls = if options.tls {
            Some(TlsMaterial::generate()?)
        } else {
            None
        };
        let mut settings = options.settings.clone();
        if let Some(t) = &tls {
            settings.token = Some(t.token.clone());
        }
        let (cluster, wal, warnings) = match &options.data {
            None => {
                let cluster = Cluster::new(settings, store::Store::new());
                seed(&cluster);
                (cluster, None, Vec::new())
            }
            Some(dir) => {
                let opened = persist::open(dir, persist::Limits::default())?;
                let store = store::Store::restored(opened.rv, opened.objects);
                store.restore_log(opened.changes);
                let cluster = Cluster::new(settings, store);
                cluster
                    .store
                    .set_journal(Arc::clone(&opened.wal) as Arc<dyn store::Journal>);
                opened.wal.start(&cluster);
                // A restored cluster keeps what its users did to the seeded objects.
                if opened.fresh {
                    seed(&cluster);
                }
                (cluster, Some(opened.wal), opened.warnings)
            }
        };
        let audit = match &options.audit_log {
            Some(path) => Some(http::AuditLog::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|source| SandboxError::AuditLog {
                        path: path.clone(),
                        source,
                    })?,
            )),
            None => None,
        };
        controllers::spawn(Arc::clone(&cluster));
        let app = http::App::new(
            Arc::clone(&cluster),
            addr.to_string(),
            options.shutdown_token.clone(),
            audit,
        );
        let acceptor = tls.as_ref().map(TlsMaterial::acceptor).transpose()?;
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(serve(listener, app, acceptor, stop_rx));
        Ok(Sandbox {
            cluster,
            addr,
            tls,
            stop: Some(stop_tx),
            task: Some(task),
            wal,
            warnings,
        })
    }

    /// What starting found and repaired in the data directory (a torn last record).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT` or `https://...`.
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    pub fn tls(&self) -> Option<&TlsMaterial> {
        self.tls.as_ref()
    }

    /// A kubeconfig document with only this sandbox's context.
    pub fn kubeconfig(&self) -> String {
        kubeconfig::document(&self.url(), self.tls.as_ref())
    }

    /// Stops serving and waits for the server task.
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
        if let Some(wal) = self.wal.take() {
            wal.close();
        }
    }

    /// Waits until the server stops (never, unless it fails).
    pub async fn wait(mut self) {
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        // Writes what is queued and releases the data directory for the next sandbox.
        if let Some(wal) = self.wal.take() {
            wal.close();
        }
    }
}

async fn serve(
    listener: tokio::net::TcpListener,
    app: Arc<http::App>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    use hyper_util::server::conn::auto::Builder;

    let builder = Builder::new(TokioExecutor::new());
    let connections = tokio_util_like::Tracker::default();
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(c) => c,
                Err(_) => {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    continue;
                }
            },
            _ = &mut stop => break,
            () = app.shutdown.notified() => break,
        };
        let _ = stream.set_nodelay(true);
        let app = Arc::clone(&app);
        let builder = builder.clone();
        let tls = tls.clone();
        let guard = connections.enter();
        tokio::spawn(async move {
            let _guard = guard;
            let service =
                hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let app = Arc::clone(&app);
                    async move {
                        let req = req.map(axum::body::Body::new);
                        Ok::<_, std::convert::Infallible>(http::handle(app, req).await)
                    }
                });
            match tls {
                Some(acceptor) => {
                    if let Ok(Ok(s)) = tokio::time::timeout(
                        std::time::Duration::from_secs(10),
                        acceptor.accept(stream),
                    )
                    .await
                    {
                        let _ = builder
                            .serve_connection_with_upgrades(TokioIo::new(s), service)
                            .await;
                    }
                }
                None => {
                    let _ = builder
                        .serve_connection_with_upgrades(TokioIo::new(stream), service)
                        .await;
                }
            }
        });
    }
    connections.abort_all();
}

mod tokio_util_like {
    //! Connection tasks to stop when the server stops (watches would otherwise run on).
    use std::sync::{Arc, Mutex};

    #[derive(Default, Clone)]
    pub struct Tracker {
        stop: Arc<Mutex<Vec<tokio::sync::oneshot::Sender<()>>>>,
    }

    pub struct Guard;

    impl Tracker {
        pub fn enter(&self) -> Guard {
            Guard
        }

        pub fn abort_all(&self) {
            self.stop.lock().unwrap_or_else(|e| e.into_inner()).clear();
        }
    }
}

/// The objects every new cluster has: its namespaces, the `kubernetes` Service, a
/// Ready node per simulated node name, the default StorageClass and priority classes.
fn seed(cluster: &Cluster) {
    if !cluster.store.is_empty() {
        return;
    }
    let opts = cluster::WriteOptions {
        manager: "kube-apiserver".into(),
        ..cluster::WriteOptions::default()
    };
    let create = |group: &str, plural: &str, ns: &str, object: serde_json::Value| {
        let t = cluster.resource(group, plural, ns, "");
        if let Err(e) = cluster.create(&t, object, &opts) {
            tracing::warn!(error = %e, plural, "seeding the sandbox");
        }
    };
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        create(
            "",
            "namespaces",
            "",
            json!({"metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}}),
        );
    }
    for node in &cluster.settings.nodes {
        let object = controllers_node(node, &cluster.settings);
        let status = object["status"].clone();
        create("", "nodes", "", object);
        // Create resets a node's status, as the kubelet's first status update sets it.
        let mut t = cluster.resource("", "nodes", "", node);
        t.subresource = "status".into();
        if let Err(e) = cluster.mutate(&t, "kubelet", |n| {
            n["status"] = status;
            true
        }) {
            tracing::warn!(error = %e, "seeding the node's status");
        }
    }
    create(
        "",
        "services",
        "default",
        json!({
            "metadata": {"name": "kubernetes", "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {"clusterIP": "10.96.0.1", "ports": [{"name": "https", "port": 443, "targetPort": 6443}]},
        }),
    );
    create(
        "storage.k8s.io",
        "storageclasses",
        "",
        json!({
            "metadata": {"name": "standard", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": "sandbox.chartkit.dev/hostpath",
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "Immediate",
        }),
    );
    for (name, value) in [
        ("system-cluster-critical", 2000000000),
        ("system-node-critical", 2000001000),
    ] {
        create(
            "scheduling.k8s.io",
            "priorityclasses",
            "",
            json!({
                "metadata": {"name": name},
                "value": value,
                "globalDefault": false,
                "description": "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
                "preemptionPolicy": "PreemptLowerPriority",
            }),
        );
    }
}

fn controllers_node(name: &str, settings: &Settings) -> serde_json::Value {
    let now = meta::now();
    json!({
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "node-role.kubernetes.io/control-plane": "",
        }},
        "spec": {},
        "status": {
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"},
            "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status", "lastHeartbeatTime": now, "lastTransitionTime": now}],
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": name}],
            "nodeInfo": {
                "kubeletVersion": settings.kubernetes_version.git_version(),
                "osImage": "chartkit sandbox",
                "kernelVersion": "",
                "containerRuntimeVersion": "sandbox://simulated",
                "operatingSystem": "linux",
                "architecture": "amd64",
                "machineID": "", "systemUUID": "", "bootID": "",
                "kubeProxyVersion": "",
            },
        },
    })
}
