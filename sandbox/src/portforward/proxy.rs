//! `services/NAME[:PORT]/proxy/PATH` and `pods/NAME[:PORT]/proxy/PATH`: HTTP requests the
//! API server passes to a pod, here to the address the pod's forward annotation gives.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use hyper::{Method, Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;

use super::forward::{Counted, go_dial_error};
use super::target::{self, Endpoint};
use crate::cluster::{Cluster, Target};
use crate::status::{ApiError, ApiResult};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

/// Headers that belong to one hop, never passed on (Go's reverse proxy's list).
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "proxy-connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

pub async fn proxy(
    cluster: Arc<Cluster>,
    t: Target,
    req: Request<Body>,
) -> ApiResult<Response<Body>> {
    let kind = match t.def.plural.as_str() {
        "services" => "service",
        "pods" => "pod",
        _ => {
            // No kubelet listens behind a sandbox node.
            return Err(unreachable_error(&format!(
                "dial tcp 127.0.0.1:10250: {}",
                "connect: connection refused"
            )));
        }
    };
    let raw_path = req.uri().path().to_string();
    let rest = proxy_rest(&raw_path, &t.def.plural, &t.name);
    let (scheme, name, port) = target::split_scheme_name_port(&t.name)
        .ok_or_else(|| ApiError::bad_request(format!("invalid {kind} request {:?}", t.name)))?;
    let Endpoint { pod, port } = if kind == "service" {
        target::service_endpoint(&cluster, &t.namespace, name, port, &t.name)?
    } else {
        let pod = cluster.get(&cluster.resource("", "pods", &t.namespace, name))?;
        let port = pod_port(&pod, port)?;
        Endpoint { pod, port }
    };
    // The API server redirects a bare `.../proxy` so that relative links resolve.
    if rest.is_empty() && (req.method() == Method::GET || req.method() == Method::HEAD) {
        let query = req
            .uri()
            .query()
            .map(|q| format!("?{q}"))
            .unwrap_or_default();
        return Ok(Response::builder()
            .status(301)
            .header("location", format!("{raw_path}/{query}"))
            .body(Body::empty())
            .expect("a valid response"));
    }
    let running = target::phase(&pod) == "Running";
    let Some(address) = running
        .then(|| target::forward_address(&pod, port))
        .flatten()
    else {
        return Err(unreachable_error(&format!(
            "dial tcp {}:{port}: connect: connection refused",
            target::pod_ip(&pod)
        )));
    };
    if scheme == "https" {
        return Err(unreachable_error(&format!(
            "the sandbox proxies plain HTTP only, not https to {address}"
        )));
    }
    let stream =
        match tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(&address)).await
        {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                return Err(unreachable_error(&format!(
                    "dial tcp {address}: {}",
                    go_dial_error(&e)
                )));
            }
            Err(_) => {
                return Err(unreachable_error(&format!(
                    "dial tcp {address}: i/o timeout"
                )));
            }
        };
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| unreachable_error(&e.to_string()))?;
    tokio::spawn(async move {
        let _live = Counted::connection();
        let _ = conn.await;
    });

    let api_host = req
        .headers()
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("")
        .to_string();
    let prefix = raw_path[..raw_path.len() - rest.len()].to_string();
    let backend_req = backend_request(req, &rest, &address, &raw_path)?;
    let resp = sender
        .send_request(backend_req)
        .await
        .map_err(|e| unreachable_error(&e.to_string()))?;
    let (mut parts, body) = resp.into_parts();
    strip_hop_by_hop(&mut parts.headers);
    // As the API server's proxy transport: CORS is the API server's business, and a
    // redirect to a path on the backend is a path under the proxy prefix.
    let cors: Vec<_> = parts
        .headers
        .keys()
        .filter(|k| k.as_str().starts_with("access-control-"))
        .cloned()
        .collect();
    for k in cors {
        parts.headers.remove(k);
    }
    if let Some(location) = parts
        .headers
        .get("location")
        .and_then(|l| l.to_str().ok())
        .map(String::from)
    {
        let rewritten = rewrite_location(&location, &prefix, &address, &api_host);
        if let Ok(v) = hyper::header::HeaderValue::from_str(&rewritten) {
            parts.headers.insert("location", v);
        }
    }
    Ok(Response::from_parts(parts, Body::new(body)))
}

/// A pod proxy's port: the given number or name, else the first declared container port,
/// else 80.
fn pod_port(pod: &Value, port: &str) -> ApiResult<u16> {
    if port.is_empty() {
        return Ok(target::first_container_port(pod).unwrap_or(80));
    }
    if let Ok(p) = port.parse::<u16>() {
        return Ok(p);
    }
    target::container_port_by_name(pod, port).ok_or_else(|| {
        unreachable_error(&format!(
            "dial tcp: lookup {}:{port}: invalid port",
            target::pod_ip(pod)
        ))
    })
}

fn unreachable_error(detail: &str) -> ApiError {
    ApiError::new(
        503,
        "ServiceUnavailable",
        format!("error trying to reach service: {detail}"),
    )
}

/// What follows `/{plural}/{name}/proxy` in the raw path: `""`, `"/"` or `"/a/b"`.
fn proxy_rest(raw_path: &str, plural: &str, name: &str) -> String {
    let needle = format!("/{plural}/{name}/proxy");
    match raw_path.find(&needle) {
        Some(i) => raw_path[i + needle.len()..].to_string(),
        None => String::new(),
    }
}

fn backend_request(
    req: Request<Body>,
    rest: &str,
    address: &str,
    raw_path: &str,
) -> ApiResult<Request<Body>> {
    let (mut parts, body) = req.into_parts();
    let path = if rest.is_empty() { "/" } else { rest };
    let uri = match parts.uri.query() {
        Some(q) => format!("{path}?{q}"),
        None => path.to_string(),
    };
    parts.uri = uri
        .parse()
        .map_err(|_| ApiError::bad_request(format!("invalid proxy path {path:?}")))?;
    parts.version = hyper::Version::HTTP_11;
    strip_hop_by_hop(&mut parts.headers);
    // The API server consumed the credentials; they are not the backend's.
    parts.headers.remove("authorization");
    if let Ok(v) = hyper::header::HeaderValue::from_str(address) {
        parts.headers.insert("host", v);
    }
    if let Ok(v) = hyper::header::HeaderValue::from_str(raw_path) {
        parts.headers.insert("x-forwarded-uri", v);
    }
    Ok(Request::from_parts(parts, body))
}

fn strip_hop_by_hop(headers: &mut hyper::HeaderMap) {
    // Headers the Connection header names are hop-by-hop too.
    let named: Vec<String> = headers
        .get_all("connection")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
        .collect();
    for h in HOP_BY_HOP
        .iter()
        .copied()
        .chain(named.iter().map(String::as_str))
    {
        headers.remove(h);
    }
}

/// A backend's `Location`, as the API server's proxy rewrites it: absolute paths on the
/// backend (or on the API server's own host) gain the proxy prefix.
fn rewrite_location(location: &str, prefix: &str, backend: &str, api_host: &str) -> String {
    let (host, path) = if let Some(after) = location
        .strip_prefix("http://")
        .or_else(|| location.strip_prefix("https://"))
    {
        match after.find('/') {
            Some(i) => (&after[..i], &after[i..]),
            None => (after, ""),
        }
    } else {
        ("", location)
    };
    let different_host = !host.is_empty() && host != backend && host != api_host;
    if different_host || !path.starts_with('/') || path.starts_with(prefix) {
        return location.to_string();
    }
    // A redirect to the API server's own host keeps its scheme and host.
    let origin = if !host.is_empty() && host == api_host {
        &location[..location.len() - path.len()]
    } else {
        ""
    };
    format!("{origin}{}{path}", prefix.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rest_of_a_proxy_path_keeps_its_slashes() {
        let p = "/api/v1/namespaces/default/services/charts:8879/proxy/index.yaml";
        assert_eq!(proxy_rest(p, "services", "charts:8879"), "/index.yaml");
        let p = "/api/v1/namespaces/default/services/charts:8879/proxy/";
        assert_eq!(proxy_rest(p, "services", "charts:8879"), "/");
        let p = "/api/v1/namespaces/default/pods/web/proxy";
        assert_eq!(proxy_rest(p, "pods", "web"), "");
        let p = "/api/v1/namespaces/default/pods/web/proxy/a//b/";
        assert_eq!(proxy_rest(p, "pods", "web"), "/a//b/");
    }

    #[test]
    fn redirects_stay_under_the_proxy_prefix() {
        let prefix = "/api/v1/namespaces/default/services/web:80/proxy";
        assert_eq!(
            rewrite_location("/login", prefix, "127.0.0.1:9", "127.0.0.1:6443"),
            format!("{prefix}/login")
        );
        assert_eq!(
            rewrite_location("http://127.0.0.1:9/x/", prefix, "127.0.0.1:9", "h"),
            format!("{prefix}/x/")
        );
        assert_eq!(
            rewrite_location("https://example.com/x", prefix, "127.0.0.1:9", "h"),
            "https://example.com/x"
        );
        assert_eq!(rewrite_location("next", prefix, "b", "h"), "next");
        assert_eq!(
            rewrite_location("https://h/a", prefix, "b", "h"),
            format!("https://h{prefix}/a")
        );
    }

    #[test]
    fn hop_by_hop_headers_are_dropped() {
        let mut h = hyper::HeaderMap::new();
        h.insert("connection", "keep-alive, x-private".parse().unwrap());
        h.insert("x-private", "1".parse().unwrap());
        h.insert("keep-alive", "timeout=5".parse().unwrap());
        h.insert("content-type", "text/plain".parse().unwrap());
        strip_hop_by_hop(&mut h);
        assert_eq!(h.len(), 1);
        assert!(h.contains_key("content-type"));
    }
}
