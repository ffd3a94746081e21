//! Port-forward tunnels for the length of a command: a local listener on 127.0.0.1
//! whose every connection becomes a new port-forward stream (kube-rs, through the API
//! server) to a pod of the target, as `kubectl port-forward` reaches it.
//!
//! - [`Target`]: a service, deployment or pod in a namespace, and a port (number or
//!   name).
//! - [`Tunnels`]: the tunnels of one process, opened on first use with their own small
//!   runtime so blocking callers (the repository client) can use them, and all closed by
//!   [`Tunnels::close`] or when dropped: listeners stop, streams end with a WebSocket
//!   close, and the runtime is shut down.
//!
//! The pod is chosen as kubectl chooses it (`choose`): a ready pod behind the service's
//! selector or the deployment's, the one ready the longest first, with the service's
//! `targetPort` resolved in that pod (named ports too). Each new connection checks that
//! the pod is still running and ready; if it went away, the next ready pod is chosen,
//! waiting a while for one as a rollout or a restart brings it (`bridge`).

mod bridge;
mod choose;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub use choose::label_selector;

use crate::connect::{ConnectError, KubeOptions};

/// How long a reconnection waits for a ready pod by default.
pub const RECONNECT_WAIT: Duration = Duration::from_secs(20);

/// How long closing waits for streams to end cleanly before cutting them.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// What a tunnel reaches.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Resource {
    Service(String),
    Pod(String),
    Deployment(String),
}

impl Resource {
    pub fn name(&self) -> &str {
        match self {
            Resource::Service(n) | Resource::Pod(n) | Resource::Deployment(n) => n,
        }
    }

    /// `svc/NAME`, as kubectl writes it.
    pub fn short(&self) -> String {
        let kind = match self {
            Resource::Service(_) => "svc",
            Resource::Pod(_) => "pod",
            Resource::Deployment(_) => "deploy",
        };
        format!("{kind}/{}", self.name())
    }

    fn noun(&self) -> &'static str {
        match self {
            Resource::Service(_) => "service",
            Resource::Pod(_) => "pod",
            Resource::Deployment(_) => "deployment",
        }
    }
}

/// A port: a number, or the name of a service port (for a service) or of a container
/// port (for a pod or a deployment's pods).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PortRef {
    Number(u16),
    Name(String),
}

impl std::fmt::Display for PortRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PortRef::Number(n) => write!(f, "{n}"),
            PortRef::Name(n) => f.write_str(n),
        }
    }
}

/// Where a tunnel leads.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    pub namespace: String,
    pub resource: Resource,
    pub port: PortRef,
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{} in namespace {}",
            self.resource.short(),
            self.port,
            self.namespace
        )
    }
}

/// Why a tunnel cannot be opened or used; each names the part of the target at fault.
#[derive(Debug, thiserror::Error)]
pub enum ForwardError {
    #[error("cannot connect to the cluster: {0}")]
    Connect(#[from] ConnectError),
    #[error("namespace {namespace} does not exist")]
    NoNamespace { namespace: String },
    #[error("{} {} does not exist in namespace {namespace}", resource.noun(), resource.name())]
    NotFound {
        resource: Resource,
        namespace: String,
    },
    #[error("{} in namespace {namespace} has no selector, so no pods are behind it", resource.short())]
    NoSelector {
        resource: Resource,
        namespace: String,
    },
    #[error(
        "no ready pod behind {} in namespace {namespace} ({})",
        resource.short(),
        match matching {
            0 => format!("no pod matches {selector}"),
            1 => format!("the one pod matching {selector} is not running and ready"),
            n => format!("none of the {n} pods matching {selector} is running and ready"),
        }
    )]
    NoReadyPod {
        resource: Resource,
        namespace: String,
        /// How many pods the selector matches, ready or not.
        matching: usize,
        selector: String,
    },
    #[error("pod {pod} in namespace {namespace} is not ready: {state}")]
    PodNotReady {
        pod: String,
        namespace: String,
        state: String,
    },
    #[error(
        "service {service} in namespace {namespace} has no port {port}{}",
        if known.is_empty() { String::new() } else { format!(" (its ports: {})", known.join(", ")) }
    )]
    NoServicePort {
        service: String,
        namespace: String,
        port: String,
        known: Vec<String>,
    },
    #[error("pod {pod} in namespace {namespace} has no container port named {port}")]
    NoContainerPort {
        pod: String,
        namespace: String,
        port: String,
    },
    #[error("cannot read {what}: {message}")]
    Api { what: String, message: String },
    #[error("cannot listen on 127.0.0.1 for the tunnel: {0}")]
    Listen(std::io::Error),
    #[error("cannot start the tunnels' runtime: {0}")]
    Runtime(std::io::Error),
}

/// The tunnels of one process (or command), opened on first use and closed together.
pub struct Tunnels {
    options: KubeOptions,
    reconnect_wait: Duration,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    running: Option<Running>,
    forwards: HashMap<Target, Open>,
}

/// What exists once the first tunnel is opened.
struct Running {
    runtime: tokio::runtime::Runtime,
    client: kube::Client,
    cancel: CancellationToken,
    /// Every listener and connection task holds a clone; when all are dropped,
    /// `gone` says so.
    alive: tokio::sync::mpsc::Sender<()>,
    gone: tokio::sync::mpsc::Receiver<()>,
}

struct Open {
    local: SocketAddr,
    shared: Arc<bridge::Shared>,
}

impl Tunnels {
    /// Tunnels that connect to the cluster `options` describe when the first one opens.
    pub fn new(options: KubeOptions) -> Tunnels {
        Tunnels {
            options,
            reconnect_wait: RECONNECT_WAIT,
            state: Mutex::new(State::default()),
        }
    }

    /// How long a connection waits for a ready pod when the one in use went away.
    pub fn with_reconnect_wait(mut self, wait: Duration) -> Tunnels {
        self.reconnect_wait = wait;
        self
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The local address whose connections reach `target`: the tunnel is opened the
    /// first time (the cluster connected, a pod chosen, a listener bound), and the same
    /// address is returned after. Blocks; may be called from any thread.
    pub fn open(&self, target: &Target) -> Result<SocketAddr, ForwardError> {
        let mut state = self.state();
        if let Some(open) = state.forwards.get(target) {
            return Ok(open.local);
        }
        if state.running.is_none() {
            state.running = Some(start(&self.options)?);
        }
        let running = state.running.as_ref().expect("started above");
        let (done, result) = std::sync::mpsc::channel();
        let listen = bridge::listen(
            running.client.clone(),
            target.clone(),
            self.reconnect_wait,
            running.cancel.clone(),
            running.alive.clone(),
        );
        running.runtime.spawn(async move {
            let _ = done.send(listen.await);
        });
        let (local, shared) = result.recv().map_err(|_| {
            ForwardError::Runtime(std::io::Error::other("the tunnel's task ended early"))
        })??;
        state
            .forwards
            .insert(target.clone(), Open { local, shared });
        Ok(local)
    }

    /// Why the latest connection through the tunnel to `target` could not be
    /// forwarded, if it could not (no ready pod came back, the pod refused the port);
    /// read once.
    pub fn take_failure(&self, target: &Target) -> Option<String> {
        let state = self.state();
        state.forwards.get(target)?.shared.take_failure()
    }

    /// The pod the tunnel to `target` is using now (`None` before it opens, or while it
    /// looks for another).
    pub fn pod(&self, target: &Target) -> Option<String> {
        let state = self.state();
        state.forwards.get(target)?.shared.pod()
    }

    /// Closes every tunnel: the listeners stop (their ports refuse connections), open
    /// streams end with a WebSocket close (cut after a few seconds if the server does
    /// not answer), and the runtime stops. Opening again starts afresh.
    pub fn close(&self) {
        let running = {
            let mut state = self.state();
            state.forwards.clear();
            state.running.take()
        };
        let Some(Running {
            runtime,
            client,
            cancel,
            alive,
            mut gone,
        }) = running
        else {
            return;
        };
        cancel.cancel();
        drop(alive);
        drop(client);
        let (done, finished) = std::sync::mpsc::channel();
        runtime.spawn(async move {
            while gone.recv().await.is_some() {}
            let _ = done.send(());
        });
        let _ = finished.recv_timeout(CLOSE_WAIT);
        runtime.shutdown_background();
    }
}

impl Drop for Tunnels {
    fn drop(&mut self) {
        self.close();
    }
}

/// The runtime and the cluster connection. The runtime is the tunnels' own, so that
/// callers need none and may block: one worker carries the listeners and streams.
fn start(options: &KubeOptions) -> Result<Running, ForwardError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("chartkit-tunnel")
        .enable_all()
        .build()
        .map_err(ForwardError::Runtime)?;
    let (done, connected) = std::sync::mpsc::channel();
    let options = options.clone();
    runtime.spawn(async move {
        let _ = done.send(options.connect().await);
    });
    let connection = match connected.recv() {
        Ok(Ok(connection)) => connection,
        failed => {
            // Not dropped: dropping a runtime panics when the caller is itself async.
            runtime.shutdown_background();
            return Err(match failed {
                Ok(Err(e)) => e.into(),
                _ => ForwardError::Runtime(std::io::Error::other("connecting ended early")),
            });
        }
    };
    let (alive, gone) = tokio::sync::mpsc::channel(1);
    Ok(Running {
        runtime,
        client: connection.client,
        cancel: CancellationToken::new(),
        alive,
        gone,
    })
}
