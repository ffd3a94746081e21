//! One tunnel: the local listener, and each accepted connection bridged to a new
//! port-forward stream to the pod in use, another pod being chosen when that one went
//! away.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use super::choose::{Chosen, choose, still_usable};
use super::{ForwardError, Target};

/// How long a stream may take to close cleanly once its connection is done.
const STREAM_CLOSE_WAIT: Duration = Duration::from_secs(2);

/// How often a reconnection looks for a ready pod.
const POLL: Duration = Duration::from_millis(250);

/// What a tunnel's connections share.
pub struct Shared {
    client: kube::Client,
    target: Target,
    reconnect_wait: Duration,
    /// The pod in use, checked before each connection.
    chosen: Mutex<Option<Chosen>>,
    /// Why the latest connection could not be forwarded.
    failure: Mutex<Option<String>>,
}

impl Shared {
    pub fn take_failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    pub fn pod(&self) -> Option<String> {
        self.remembered().map(|c| c.pod)
    }

    fn fail(&self, reason: String) {
        *self.failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason);
    }

    fn remembered(&self) -> Option<Chosen> {
        self.chosen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn remember(&self, chosen: Option<Chosen>) {
        *self.chosen.lock().unwrap_or_else(|e| e.into_inner()) = chosen;
    }

    /// The pod for the next connection: the one in use while it is running and ready,
    /// else another ready one, waiting up to `reconnect_wait` for one to appear.
    async fn current(&self, cancel: &CancellationToken) -> Result<Chosen, ForwardError> {
        if let Some(chosen) = self.remembered() {
            if still_usable(&self.client, &self.target.namespace, &chosen.pod).await {
                return Ok(chosen);
            }
            self.remember(None);
        }
        let deadline = Instant::now() + self.reconnect_wait;
        loop {
            match choose(&self.client, &self.target).await {
                Ok(chosen) => {
                    self.remember(Some(chosen.clone()));
                    return Ok(chosen);
                }
                Err(e) if Instant::now() >= deadline => return Err(e),
                Err(e) => {
                    tokio::select! {
                        () = tokio::time::sleep(POLL) => {}
                        () = cancel.cancelled() => return Err(e),
                    }
                }
            }
        }
    }
}

/// Chooses the pod (failing at once when the target has none to offer), binds
/// 127.0.0.1:0 and starts accepting; the listener stops when `cancel` fires.
pub async fn listen(
    client: kube::Client,
    target: Target,
    reconnect_wait: Duration,
    cancel: CancellationToken,
    alive: tokio::sync::mpsc::Sender<()>,
) -> Result<(SocketAddr, Arc<Shared>), ForwardError> {
    let chosen = choose(&client, &target).await?;
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(ForwardError::Listen)?;
    let local = listener.local_addr().map_err(ForwardError::Listen)?;
    let shared = Arc::new(Shared {
        client,
        target,
        reconnect_wait,
        chosen: Mutex::new(Some(chosen)),
        failure: Mutex::new(None),
    });
    tokio::spawn(accept(listener, Arc::clone(&shared), cancel, alive));
    Ok((local, shared))
}

async fn accept(
    listener: TcpListener,
    shared: Arc<Shared>,
    cancel: CancellationToken,
    alive: tokio::sync::mpsc::Sender<()>,
) {
    loop {
        let socket = tokio::select! {
            () = cancel.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((socket, _)) => socket,
                // Out of descriptors and the like: give it a moment rather than spin.
                Err(_) => {
                    tokio::time::sleep(POLL).await;
                    continue;
                }
            },
        };
        let (shared, cancel, alive) = (Arc::clone(&shared), cancel.clone(), alive.clone());
        tokio::spawn(async move {
            connection(socket, &shared, &cancel).await;
            drop(alive);
        });
    }
    // The listener is dropped here: its port refuses connections from now on.
}

/// Forwards one local connection through a new port-forward stream. A stream that
/// cannot be opened (the pod went away between the check and the request) is tried
/// once more with the pod chosen again; a connection that cannot be forwarded is closed
/// with its reason recorded for the client to report.
async fn connection(mut local: TcpStream, shared: &Shared, cancel: &CancellationToken) {
    let _ = local.set_nodelay(true);
    let pods: Api<Pod> = Api::namespaced(shared.client.clone(), &shared.target.namespace);
    let mut tries = 0;
    let (mut forwarder, chosen) = loop {
        tries += 1;
        let chosen = match shared.current(cancel).await {
            Ok(chosen) => chosen,
            Err(e) => {
                shared.fail(e.to_string());
                return;
            }
        };
        match pods.portforward(&chosen.pod, &[chosen.port]).await {
            Ok(forwarder) => break (forwarder, chosen),
            Err(e) if tries >= 2 => {
                shared.fail(format!(
                    "cannot port-forward to pod {} in namespace {}: {e}",
                    chosen.pod, shared.target.namespace
                ));
                return;
            }
            Err(_) => shared.remember(None),
        }
    };
    let Some(mut stream) = forwarder.take_stream(chosen.port) else {
        return;
    };
    let error = forwarder.take_error(chosen.port);
    {
        let copy = tokio::io::copy_bidirectional(&mut local, &mut stream);
        tokio::pin!(copy);
        let error = async move {
            match error {
                Some(error) => error.await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(error);
        let mut error_open = true;
        loop {
            tokio::select! {
                _ = &mut copy => break,
                message = &mut error, if error_open => {
                    error_open = false;
                    // The error channel also ends, empty, when the stream closes: the
                    // bytes still buffered must reach the client then.
                    if let Some(message) = message {
                        shared.fail(format!(
                            "pod {} in namespace {} could not be reached on port {}: {}",
                            chosen.pod,
                            shared.target.namespace,
                            chosen.port,
                            message.trim()
                        ));
                        break;
                    }
                }
                () = cancel.cancelled() => break,
            }
        }
    }
    // Ending our side makes kube-rs send the WebSocket close.
    drop(stream);
    drop(local);
    let _ = tokio::time::timeout(STREAM_CLOSE_WAIT, forwarder.join()).await;
}
