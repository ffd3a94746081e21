//! One forwarded connection: reaching the address behind a pod port, with the kubelet's
//! words when that fails, and copying bytes both ways until either side is done.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use super::target;
use crate::cluster::Cluster;

/// How long one direction may go on after the other ended (containerd gives the same
/// second before it closes a forwarded connection).
const GRACE: Duration = Duration::from_secs(1);

/// How long connecting to the forwarded address may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

/// Bytes read from the target per chunk sent to the client.
const CHUNK: usize = 32 * 1024;

static SESSIONS: AtomicUsize = AtomicUsize::new(0);
static CONNECTIONS: AtomicUsize = AtomicUsize::new(0);

/// Live port-forward sessions (upgraded client connections) and forwarded connections
/// in this process, to check that none outlives its client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Live {
    pub sessions: usize,
    pub connections: usize,
}

pub fn live() -> Live {
    Live {
        sessions: SESSIONS.load(Ordering::SeqCst),
        connections: CONNECTIONS.load(Ordering::SeqCst),
    }
}

/// Counts a session or connection while it lives.
pub struct Counted(&'static AtomicUsize);

impl Counted {
    pub fn session() -> Counted {
        SESSIONS.fetch_add(1, Ordering::SeqCst);
        Counted(&SESSIONS)
    }

    pub fn connection() -> Counted {
        CONNECTIONS.fetch_add(1, Ordering::SeqCst);
        Counted(&CONNECTIONS)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The pod a session forwards to, read again for each connection (its annotation or
/// phase may have changed since the session began).
#[derive(Clone)]
pub struct PodRef {
    pub namespace: String,
    pub name: String,
}

impl PodRef {
    pub fn get(&self, cluster: &Cluster) -> Option<Value> {
        cluster
            .get(&cluster.resource("", "pods", &self.namespace, &self.name))
            .ok()
    }
}

/// Connects to what listens on `port` in the pod, or returns the text the kubelet puts on
/// the error stream (containerd's wording: nothing listening on a port in the pod's
/// network namespace is a refused connection on 127.0.0.1 and on ::1).
pub async fn connect(cluster: &Cluster, pod_ref: &PodRef, port: u16) -> Result<TcpStream, String> {
    let Some(pod) = pod_ref.get(cluster) else {
        return Err(format!(
            "error forwarding port {port} to pod {}, uid : failed to find sandbox in store: not found",
            pod_ref.name
        ));
    };
    let refused4 = format!("dial tcp4 127.0.0.1:{port}: connect: connection refused");
    let refused6 = format!("dial tcp6 [::1]:{port}: connect: connection refused");
    let address = (target::phase(&pod) == "Running")
        .then(|| target::forward_address(&pod, port))
        .flatten();
    let Some(address) = address else {
        if target::phase(&pod) == "Running" {
            tracing::info!(
                pod = %pod_ref.name,
                namespace = %pod_ref.namespace,
                port,
                "port-forward: the pod's {} annotation names no address for this port",
                super::FORWARD_ANNOTATION
            );
        }
        return Err(kubelet_error(&pod, port, &refused4, &refused6));
    };
    let attempt = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(&address)).await;
    match attempt {
        Ok(Ok(stream)) => {
            let _ = stream.set_nodelay(true);
            Ok(stream)
        }
        Ok(Err(e)) => Err(kubelet_error(
            &pod,
            port,
            &format!("dial tcp {address}: {}", go_dial_error(&e)),
            &refused6,
        )),
        Err(_) => Err(kubelet_error(
            &pod,
            port,
            &format!("dial tcp {address}: i/o timeout"),
            &refused6,
        )),
    }
}

fn kubelet_error(pod: &Value, port: u16, v4: &str, v6: &str) -> String {
    let id = target::sandbox_id(pod);
    format!(
        "error forwarding port {port} to pod {id}, uid : failed to execute portforward in network namespace \"{}\": failed to connect to localhost:{port} inside namespace \"{id}\", IPv4: {v4} IPv6 {v6} ",
        target::netns(pod)
    )
}

/// An I/O error as Go's net package words it after `dial tcp ADDR: `.
pub fn go_dial_error(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::ConnectionRefused => "connect: connection refused".into(),
        io::ErrorKind::TimedOut => "i/o timeout".into(),
        io::ErrorKind::HostUnreachable => "connect: no route to host".into(),
        io::ErrorKind::NetworkUnreachable => "connect: network is unreachable".into(),
        io::ErrorKind::AddrNotAvailable => "connect: cannot assign requested address".into(),
        _ => {
            // Resolution failures and the rest: the OS text without Rust's "(os error N)".
            let text = e.to_string();
            let text = text.split(" (os error").next().unwrap_or(&text).to_string();
            let mut chars = text.chars();
            match chars.next() {
                Some(c) => c.to_lowercase().chain(chars).collect(),
                None => text,
            }
        }
    }
}

/// Copies the client's bytes (`from_client`, ending when the client half-closes) to the
/// target and the target's to the client (through `to_client`, wrapped by `wrap`), until
/// one direction ends and the other has had [`GRACE`] to finish.
pub async fn pump<T: Send + 'static>(
    target: TcpStream,
    mut from_client: mpsc::Receiver<Bytes>,
    to_client: mpsc::Sender<T>,
    wrap: impl Fn(Bytes) -> T + Send,
) {
    let (mut rd, mut wr) = target.into_split();
    let up = async move {
        while let Some(chunk) = from_client.recv().await {
            if wr.write_all(&chunk).await.is_err() {
                return;
            }
        }
        let _ = wr.shutdown().await;
    };
    let down = async move {
        let mut buf = BytesMut::with_capacity(CHUNK);
        loop {
            buf.reserve(CHUNK);
            match rd.read_buf(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    if to_client.send(wrap(buf.split().freeze())).await.is_err() {
                        return;
                    }
                }
            }
        }
    };
    tokio::pin!(up, down);
    tokio::select! {
        () = &mut up => { let _ = tokio::time::timeout(GRACE, down).await; }
        () = &mut down => { let _ = tokio::time::timeout(GRACE, up).await; }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dial_errors_read_as_go_writes_them() {
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(go_dial_error(&refused), "connect: connection refused");
        let other = io::Error::other("Name or service not known (os error -2)");
        assert_eq!(go_dial_error(&other), "name or service not known");
    }

    #[test]
    fn kubelet_errors_name_the_sandbox_and_namespace() {
        let pod = serde_json::json!({"metadata": {"uid": "u-1"}});
        let text = kubelet_error(&pod, 8080, "A", "B");
        let id = target::sandbox_id(&pod);
        assert!(text.starts_with(&format!("error forwarding port 8080 to pod {id}, uid : failed to execute portforward in network namespace \"/var/run/netns/cni-")));
        assert!(text.ends_with(&format!(
            "failed to connect to localhost:8080 inside namespace \"{id}\", IPv4: A IPv6 B "
        )));
    }
}
