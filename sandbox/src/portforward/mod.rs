//! `pods/portforward` and `services|pods/proxy`: connections to local addresses a pod
//! declares with the `sandbox.chartkit.dev/forward` annotation, so that a server on this
//! machine can stand behind a sandbox pod or service.
//!
//! Port forwarding answers the three ways clients ask for it: SPDY/3.1 (kubectl's
//! fallback), SPDY tunnelled through a WebSocket (kubectl's first choice) and the
//! WebSocket channel protocol (kube-rs). Checks the API server makes come back as
//! `Status` objects; what the kubelet would answer comes back as its plain text.

mod forward;
pub mod proxy;
pub mod spdy;
pub mod target;
pub mod websocket;

use std::io;
use std::sync::Arc;

use axum::body::Body;
use bytes::Bytes;
use hyper::{Method, Request, Response};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncWrite, AsyncWriteExt};

use crate::cluster::{Cluster, Target};
use crate::status::{ApiError, ApiResult};
use forward::PodRef;
pub use forward::{Live, live};

/// The annotation that tells the sandbox where a pod's ports really are:
/// `CONTAINERPORT=HOST:PORT[,...]`.
pub const FORWARD_ANNOTATION: &str = "sandbox.chartkit.dev/forward";

/// The one port-forward protocol the kubelet speaks.
const PORTFORWARD_V1: &str = "portforward.k8s.io";

/// Where a session writes the bytes of its protocol.
pub trait ByteSink: Send + 'static {
    fn send(&mut self, bytes: Bytes) -> impl Future<Output = io::Result<()>> + Send;
    fn close(&mut self) -> impl Future<Output = ()> + Send;
}

/// A raw upgraded connection's write half.
struct IoSink<W>(W);

impl<W: AsyncWrite + Unpin + Send + 'static> ByteSink for IoSink<W> {
    async fn send(&mut self, bytes: Bytes) -> io::Result<()> {
        self.0.write_all(&bytes).await?;
        self.0.flush().await
    }

    async fn close(&mut self) {
        let _ = self.0.shutdown().await;
    }
}

/// `GET|POST .../pods/NAME/portforward`.
pub async fn handle(
    cluster: Arc<Cluster>,
    t: Target,
    mut req: Request<Body>,
) -> ApiResult<Response<Body>> {
    if req.method() != Method::GET && req.method() != Method::POST {
        return Err(ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource",
        ));
    }
    let pod_target = Target {
        subresource: String::new(),
        ..t.clone()
    };
    let pod = cluster.get(&pod_target)?;
    if pod["spec"]["nodeName"].as_str().unwrap_or("").is_empty() {
        return Err(ApiError::bad_request(format!(
            "pod {} does not have a host assigned",
            t.name
        )));
    }
    if matches!(target::phase(&pod), "Succeeded" | "Failed") {
        // The runtime has stopped the pod's sandbox; the kubelet's answer passes through.
        return Ok(text_response(
            500,
            "rpc error: code = Unknown desc = sandbox container is not running",
        ));
    }
    let pod_ref = PodRef {
        namespace: t.namespace.clone(),
        name: t.name.clone(),
    };
    let headers = req.headers().clone();
    if websocket::is_upgrade(&headers) {
        return websocket_upgrade(cluster, pod_ref, &mut req, &headers);
    }
    if is_spdy_upgrade(&headers) {
        let protocol = match negotiate_spdy(&headers) {
            Ok(p) => p,
            Err(resp) => return Ok(resp),
        };
        let on_upgrade = hyper::upgrade::on(&mut req);
        tokio::spawn(async move {
            let Ok(upgraded) = on_upgrade.await else {
                return;
            };
            let (rd, wr) = tokio::io::split(TokioIo::new(upgraded));
            let input = tokio_util::io::ReaderStream::new(rd);
            spdy::serve(input, IoSink(wr), cluster, pod_ref).await;
        });
        return Ok(Response::builder()
            .status(101)
            .header("connection", "Upgrade")
            .header("upgrade", "SPDY/3.1")
            .header("x-stream-protocol-version", protocol)
            .body(Body::empty())
            .expect("a valid response"));
    }
    Err(ApiError::bad_request("Upgrade request required"))
}

fn is_spdy_upgrade(headers: &hyper::HeaderMap) -> bool {
    let connection = headers.get_all("connection").iter().any(|v| {
        v.to_str()
            .unwrap_or("")
            .to_ascii_lowercase()
            .contains("upgrade")
    });
    let upgrade = headers.get_all("upgrade").iter().any(|v| {
        v.to_str()
            .unwrap_or("")
            .to_ascii_lowercase()
            .contains("spdy/3.1")
    });
    connection && upgrade
}

/// The `X-Stream-Protocol-Version` handshake, as the kubelet answers it.
#[allow(clippy::result_large_err)]
fn negotiate_spdy(headers: &hyper::HeaderMap) -> Result<&'static str, Response<Body>> {
    let values: Vec<&str> = headers
        .get_all("x-stream-protocol-version")
        .iter()
        .map(|v| v.to_str().unwrap_or(""))
        .collect();
    if values.is_empty() {
        return Err(text_response(
            400,
            &format!(
                "unable to upgrade: header X-Stream-Protocol-Version does not exist in request with {} headers",
                headers.keys_len()
            ),
        ));
    }
    let offered = values
        .iter()
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>();
    negotiate(&offered).ok_or_else(|| {
        let mut resp = text_response(
            403,
            &format!(
                "unable to upgrade: unable to negotiate protocol: client supports [{}], server accepts [{PORTFORWARD_V1}]",
                offered.join(" ")
            ),
        );
        resp.headers_mut().insert(
            "x-accepted-stream-protocol-versions",
            hyper::header::HeaderValue::from_static(PORTFORWARD_V1),
        );
        resp
    })
}

fn negotiate(offered: &[&str]) -> Option<&'static str> {
    offered.contains(&PORTFORWARD_V1).then_some(PORTFORWARD_V1)
}

fn websocket_upgrade(
    cluster: Arc<Cluster>,
    pod_ref: PodRef,
    req: &mut Request<Body>,
    headers: &hyper::HeaderMap,
) -> ApiResult<Response<Body>> {
    let Some(key) = headers.get("sec-websocket-key") else {
        return Ok(text_response(
            400,
            "websocket: not a websocket handshake: 'Sec-WebSocket-Key' header is missing or invalid",
        ));
    };
    let accept = websocket::accept_key(key.as_bytes());
    let offered = websocket::subprotocols(headers);
    let tunnelled: Vec<&str> = offered
        .iter()
        .filter_map(|p| p.strip_prefix(websocket::TUNNEL_PREFIX))
        .filter(|p| p.ends_with(".k8s.io"))
        .collect();
    enum Mode {
        Tunnel,
        Channels { base64: bool, ports: Vec<u16> },
    }
    let (mode, protocol) = if !tunnelled.is_empty() {
        match negotiate(&tunnelled) {
            Some(p) => (Mode::Tunnel, format!("{}{p}", websocket::TUNNEL_PREFIX)),
            None => {
                return Ok(text_response(
                    403,
                    &format!(
                        "unable to upgrade: unable to negotiate protocol: client supports [{}], server accepts [{PORTFORWARD_V1}]",
                        tunnelled.join(" ")
                    ),
                ));
            }
        }
    } else {
        let ports = query_ports(req.uri().query())?;
        let chosen = if offered.is_empty() {
            Some("")
        } else {
            offered.iter().find_map(|p| match p.as_str() {
                websocket::CHANNEL_V4 => Some(websocket::CHANNEL_V4),
                websocket::BASE64_CHANNEL_V4 => Some(websocket::BASE64_CHANNEL_V4),
                _ => None,
            })
        };
        let Some(chosen) = chosen else {
            return Ok(text_response(
                403,
                &format!(
                    "requested protocol(s) are not supported: [{}]; supports [ {} {}]",
                    offered.join(" "),
                    websocket::CHANNEL_V4,
                    websocket::BASE64_CHANNEL_V4
                ),
            ));
        };
        (
            Mode::Channels {
                base64: chosen == websocket::BASE64_CHANNEL_V4,
                ports,
            },
            chosen.to_string(),
        )
    };
    let on_upgrade = hyper::upgrade::on(req);
    tokio::spawn(async move {
        let Ok(upgraded) = on_upgrade.await else {
            return;
        };
        let ws = websocket::server(TokioIo::new(upgraded)).await;
        match mode {
            Mode::Tunnel => {
                let (sink, stream) = futures::StreamExt::split(ws);
                let input = websocket::tunnel_input(stream);
                spdy::serve(input, websocket::TunnelSink(sink), cluster, pod_ref).await;
            }
            Mode::Channels { base64, ports } => {
                websocket::serve_channels(ws, base64, ports, cluster, pod_ref).await;
            }
        }
    });
    let mut resp = Response::builder()
        .status(101)
        .header("upgrade", "websocket")
        .header("connection", "Upgrade")
        .header("sec-websocket-accept", accept);
    if !protocol.is_empty() {
        resp = resp.header("sec-websocket-protocol", protocol);
    }
    Ok(resp.body(Body::empty()).expect("a valid response"))
}

/// The `ports` query parameter (repeated, or comma-separated) as the API server converts
/// it into `PodPortForwardOptions` and the kubelet checks it.
fn query_ports(query: Option<&str>) -> ApiResult<Vec<u16>> {
    let mut ports = Vec::new();
    for (k, v) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        if k != "ports" {
            continue;
        }
        for p in v.split(',') {
            let port: u16 = p.parse().map_err(|_| {
                ApiError::bad_request(format!(
                    "cannot convert to []int32: strconv.ParseUint: parsing {p:?}: invalid syntax"
                ))
            })?;
            if port == 0 {
                return Err(ApiError::bad_request(format!("port {p:?} must be > 0")));
            }
            ports.push(port);
        }
    }
    if ports.is_empty() {
        return Err(ApiError::bad_request(
            "query parameter \"port\" is required",
        ));
    }
    Ok(ports)
}

/// A plain-text answer, as the kubelet writes its errors (the API server passes them on).
fn text_response(code: u16, text: &str) -> Response<Body> {
    Response::builder()
        .status(code)
        .header("content-type", "text/plain; charset=utf-8")
        .header("x-content-type-options", "nosniff")
        .body(Body::from(format!("{text}\n")))
        .expect("a valid response")
}

pub use proxy::proxy;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_come_from_the_query() {
        assert_eq!(
            query_ports(Some("ports=8080,9090")).unwrap(),
            vec![8080, 9090]
        );
        assert_eq!(query_ports(Some("ports=1&ports=2")).unwrap(), vec![1, 2]);
        assert_eq!(query_ports(Some("ports=0")).unwrap_err().code, 400);
        assert_eq!(query_ports(Some("ports=x")).unwrap_err().code, 400);
        assert_eq!(
            query_ports(None).unwrap_err().message,
            "query parameter \"port\" is required"
        );
    }

    #[test]
    fn spdy_handshakes_negotiate_the_one_protocol() {
        let mut h = hyper::HeaderMap::new();
        assert_eq!(negotiate_spdy(&h).unwrap_err().status(), 400);
        h.insert("x-stream-protocol-version", "v9.example".parse().unwrap());
        let refused = negotiate_spdy(&h).unwrap_err();
        assert_eq!(refused.status(), 403);
        assert_eq!(
            refused.headers()["x-accepted-stream-protocol-versions"],
            PORTFORWARD_V1
        );
        h.append("x-stream-protocol-version", PORTFORWARD_V1.parse().unwrap());
        assert_eq!(negotiate_spdy(&h).unwrap(), PORTFORWARD_V1);
    }
}
