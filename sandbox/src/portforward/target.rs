//! Where a pod's ports really are, and which pod and port a service request reaches.
//!
//! No container runs, so a pod's ports are whatever its `sandbox.chartkit.dev/forward`
//! annotation says: `CONTAINERPORT=HOST:PORT[,...]`. Pods made by a controller carry
//! their template's annotations, so the annotation may sit on a Deployment's template.

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::FORWARD_ANNOTATION;
use crate::cluster::{Cluster, ListOptions};
use crate::meta;
use crate::selector::LabelSelector;
use crate::status::ApiError;

/// The `HOST:PORT` the annotation gives for a container port.
pub fn forward_address(pod: &Value, port: u16) -> Option<String> {
    let text = meta::annotation(pod, FORWARD_ANNOTATION)?;
    parse_forward(text)
        .ok()?
        .into_iter()
        .find_map(|(p, addr)| (p == port).then_some(addr))
}

/// Reads `CONTAINERPORT=HOST:PORT[,...]`; whitespace around entries is allowed.
pub fn parse_forward(text: &str) -> Result<Vec<(u16, String)>, String> {
    let mut out = Vec::new();
    for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (port, addr) = entry
            .split_once('=')
            .ok_or_else(|| format!("{entry:?}: expected CONTAINERPORT=HOST:PORT"))?;
        let port: u16 = port
            .trim()
            .parse()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| format!("{entry:?}: {port:?} is not a port number"))?;
        let addr = addr.trim();
        let (host, target) = addr
            .rsplit_once(':')
            .ok_or_else(|| format!("{entry:?}: expected HOST:PORT after '='"))?;
        if host.is_empty() || target.parse::<u16>().ok().filter(|p| *p > 0).is_none() {
            return Err(format!("{entry:?}: expected HOST:PORT after '='"));
        }
        out.push((port, addr.to_string()));
    }
    Ok(out)
}

/// The id the container runtime would give the pod's sandbox: stable per pod.
pub fn sandbox_id(pod: &Value) -> String {
    hex::encode(Sha256::digest(meta::uid(pod).as_bytes()))
}

/// The pod's network namespace path, as containerd names it (`cni-` and a UUID).
pub fn netns(pod: &Value) -> String {
    let h = hex::encode(Sha256::digest(
        format!("netns/{}", meta::uid(pod)).as_bytes(),
    ));
    format!(
        "/var/run/netns/cni-{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

pub fn phase(pod: &Value) -> &str {
    pod["status"]["phase"].as_str().unwrap_or("Pending")
}

/// Running, Ready and not being deleted: what the endpoints controller lists as ready.
pub fn is_ready(pod: &Value) -> bool {
    phase(pod) == "Running"
        && !meta::is_deleting(pod)
        && pod["status"]["conditions"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

/// A pod's IP for messages (`10.244.0.5`), or a placeholder when none was assigned.
pub fn pod_ip(pod: &Value) -> String {
    pod["status"]["podIP"]
        .as_str()
        .filter(|ip| !ip.is_empty())
        .unwrap_or("<none>")
        .to_string()
}

/// A container port by its name, in any container.
pub fn container_port_by_name(pod: &Value, name: &str) -> Option<u16> {
    pod["spec"]["containers"]
        .as_array()?
        .iter()
        .flat_map(|c| c["ports"].as_array().cloned().unwrap_or_default())
        .find(|p| p["name"] == name)
        .and_then(|p| p["containerPort"].as_u64())
        .and_then(|p| u16::try_from(p).ok())
}

/// The first declared container port, which `pods/NAME/proxy` uses without a port.
pub fn first_container_port(pod: &Value) -> Option<u16> {
    pod["spec"]["containers"]
        .as_array()?
        .iter()
        .find_map(|c| c["ports"][0]["containerPort"].as_u64())
        .and_then(|p| u16::try_from(p).ok())
}

/// `NAME`, `NAME:PORT` or `SCHEME:NAME:PORT` (scheme `http` or `https`), as the API
/// server splits a proxy request's name.
pub fn split_scheme_name_port(id: &str) -> Option<(&str, &str, &str)> {
    let parts: Vec<&str> = id.split(':').collect();
    let (scheme, name, port) = match parts.as_slice() {
        [name] => ("", *name, ""),
        [name, port] => ("", *name, *port),
        [scheme, name, port] => (*scheme, *name, *port),
        _ => return None,
    };
    (!name.is_empty() && matches!(scheme, "" | "http" | "https")).then_some((scheme, name, port))
}

/// A pod and container port a service request reaches.
pub struct Endpoint {
    pub pod: Value,
    pub port: u16,
}

/// Picks a ready pod behind `service` for its port `port` (a number, a port name, or
/// empty for an unnamed port), as the API server's service proxy picks an endpoint.
pub fn service_endpoint(
    cluster: &Cluster,
    namespace: &str,
    service: &str,
    port: &str,
    id: &str,
) -> Result<Endpoint, ApiError> {
    let svc = cluster.get(&cluster.resource("", "services", namespace, service))?;
    let ports = svc["spec"]["ports"].as_array().cloned().unwrap_or_default();
    let svc_port = if let Ok(number) = port.parse::<i64>() {
        ports
            .iter()
            .find(|p| p["port"].as_i64() == Some(number))
            .ok_or_else(|| {
                ApiError::new(
                    503,
                    "ServiceUnavailable",
                    format!("no service port {number} found for service \"{service}\""),
                )
            })?
    } else {
        match ports
            .iter()
            .find(|p| p["name"].as_str().unwrap_or("") == port)
        {
            Some(p) => p,
            None => return Err(no_endpoints(id)),
        }
    };
    let pods = selected_pods(cluster, namespace, &svc);
    if pods.is_empty() {
        return Err(no_endpoints(service));
    }
    let mut candidates: Vec<Endpoint> = pods
        .into_iter()
        .filter_map(|pod| {
            let port = target_port(svc_port, &pod)?;
            Some(Endpoint { pod, port })
        })
        .collect();
    if candidates.is_empty() {
        return Err(no_endpoints(id));
    }
    let pick = rand::random::<usize>() % candidates.len();
    Ok(candidates.swap_remove(pick))
}

fn no_endpoints(what: &str) -> ApiError {
    ApiError::new(
        503,
        "ServiceUnavailable",
        format!("no endpoints available for service \"{what}\""),
    )
}

/// The ready pods a service's selector matches (none without a selector: such services
/// have hand-made endpoints, which no sandbox pod backs).
fn selected_pods(cluster: &Cluster, namespace: &str, svc: &Value) -> Vec<Value> {
    let Some(selector) = svc["spec"]["selector"]
        .as_object()
        .filter(|s| !s.is_empty())
    else {
        return Vec::new();
    };
    let selector = LabelSelector::from_map(selector);
    let t = cluster.resource("", "pods", namespace, "");
    let Ok(list) = cluster.list(&t, &ListOptions::default()) else {
        return Vec::new();
    };
    list["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|p| selector.matches(&meta::labels(p)) && is_ready(p))
        .collect()
}

/// A service port's target on one pod: its `targetPort` number, the pod's container port
/// of that name, or the service port itself.
pub fn target_port(svc_port: &Value, pod: &Value) -> Option<u16> {
    match &svc_port["targetPort"] {
        Value::Number(n) => n
            .as_u64()
            .and_then(|p| u16::try_from(p).ok())
            .filter(|p| *p > 0),
        Value::String(s) => match s.parse::<u16>() {
            Ok(p) if p > 0 => Some(p),
            _ => container_port_by_name(pod, s),
        },
        _ => svc_port["port"]
            .as_u64()
            .and_then(|p| u16::try_from(p).ok()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn forward_annotations_parse() {
        assert_eq!(
            parse_forward(" 8080=127.0.0.1:39000, 9090=[::1]:9091 ").unwrap(),
            vec![
                (8080, "127.0.0.1:39000".into()),
                (9090, "[::1]:9091".into())
            ]
        );
        assert!(parse_forward("8080").is_err());
        assert!(parse_forward("x=127.0.0.1:1").is_err());
        assert!(parse_forward("80=127.0.0.1").is_err());
        assert!(parse_forward("80=:1").is_err());
        let pod = json!({"metadata": {"annotations": {FORWARD_ANNOTATION: "8080=127.0.0.1:1234"}}});
        assert_eq!(
            forward_address(&pod, 8080).as_deref(),
            Some("127.0.0.1:1234")
        );
        assert_eq!(forward_address(&pod, 8081), None);
    }

    #[test]
    fn proxy_names_split_as_the_api_server_splits_them() {
        assert_eq!(split_scheme_name_port("web"), Some(("", "web", "")));
        assert_eq!(
            split_scheme_name_port("web:8080"),
            Some(("", "web", "8080"))
        );
        assert_eq!(
            split_scheme_name_port("https:web:443"),
            Some(("https", "web", "443"))
        );
        assert_eq!(split_scheme_name_port("ftp:web:21"), None);
        assert_eq!(split_scheme_name_port(":80"), None);
        assert_eq!(split_scheme_name_port("a:b:c:d"), None);
    }

    #[test]
    fn target_ports_resolve_numbers_names_and_defaults() {
        let pod = json!({"spec": {"containers": [{"name": "a", "ports": [{"name": "http", "containerPort": 8080}]}]}});
        assert_eq!(
            target_port(&json!({"port": 80, "targetPort": 9000}), &pod),
            Some(9000)
        );
        assert_eq!(
            target_port(&json!({"port": 80, "targetPort": "http"}), &pod),
            Some(8080)
        );
        assert_eq!(
            target_port(&json!({"port": 80, "targetPort": "grpc"}), &pod),
            None
        );
        assert_eq!(target_port(&json!({"port": 80}), &pod), Some(80));
        assert_eq!(first_container_port(&pod), Some(8080));
    }

    #[test]
    fn readiness_needs_running_and_the_ready_condition() {
        let ready = json!({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}});
        assert!(is_ready(&ready));
        let pending = json!({"status": {"phase": "Pending"}});
        assert!(!is_ready(&pending));
        let mut deleting = ready.clone();
        deleting["metadata"] = json!({"deletionTimestamp": "2024-01-01T00:00:00Z"});
        assert!(!is_ready(&deleting));
    }
}
