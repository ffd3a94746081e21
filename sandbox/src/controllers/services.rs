//! Services: the API server's allocation of cluster IPs (10.96.0.0/12; 10.96.0.1 is
//! the `kubernetes` Service's) and node ports (30000-32767), LoadBalancers getting an
//! ingress IP shortly after they are made (as a cloud provider would give them), and
//! the endpoints and endpointslice controllers: Endpoints and
//! `discovery.k8s.io/v1` EndpointSlices follow the ready and not-ready pods the
//! selector matches, with named target ports resolved against the pods' containers.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::sync::Mutex;

use rand::Rng as _;
use serde_json::{Map, Value, json};

use super::kubelet::{ip_string, parse_ip};
use super::{Ctx, MANAGER, events, objects};
use crate::cluster::Cluster;
use crate::meta;
use crate::selector::LabelSelector;
use crate::status::{ApiError, ApiResult, Cause};
use crate::store::{Change, ObjectKey};

const SERVICE_NET: u32 = (10 << 24) | (96 << 16);
const SERVICE_NET_SIZE: u32 = 1 << 20;
const NODE_PORTS: std::ops::RangeInclusive<i64> = 30000..=32767;
const LB_NET: u32 = (172 << 24) | (18 << 16) | (255 << 8);
const SLICE_MANAGER: &str = "endpointslice-controller.k8s.io";

/// LoadBalancers seen but not yet given an address.
#[derive(Default)]
pub struct State {
    ensuring: Mutex<HashSet<String>>,
}

fn services(cluster: &Cluster) -> Vec<Arc<Value>> {
    cluster.store.list("/services", None).0
}

fn needs_node_ports(spec: &Value) -> bool {
    match spec["type"].as_str() {
        Some("NodePort") => true,
        Some("LoadBalancer") => spec["allocateLoadBalancerNodePorts"] != false,
        _ => false,
    }
}

fn invalid(object: &Value, causes: Vec<Cause>) -> ApiError {
    ApiError::invalid("Service", "", meta::name(object), causes)
}

/// Allocates a new Service's cluster IP and node ports, or checks the ones it asks for.
pub fn allocate(cluster: &Cluster, object: &mut Value) -> ApiResult<()> {
    let existing = services(cluster);
    let spec = object["spec"].clone();
    let ty = spec["type"].as_str().unwrap_or("ClusterIP");
    if ty == "ExternalName" {
        return Ok(());
    }
    let used_ips: HashSet<u32> = existing
        .iter()
        .filter_map(|s| s["spec"]["clusterIP"].as_str().and_then(parse_ip))
        .collect();
    let asked = spec["clusterIP"]
        .as_str()
        .filter(|s| !s.is_empty())
        .or_else(|| spec["clusterIPs"][0].as_str().filter(|s| !s.is_empty()))
        .map(String::from);
    let ip = match asked.as_deref() {
        Some("None") => "None".to_string(),
        Some(ip) => {
            let bad = |why: &str| {
                invalid(
                    object,
                    vec![Cause {
                        reason: "FieldValueInvalid",
                        field: "spec.clusterIPs".into(),
                        value: Some(format!("[]string{{{ip:?}}}")),
                        detail: format!("failed to allocate IP {ip}: {why}"),
                    }],
                )
            };
            let Some(n) = parse_ip(ip) else {
                return Err(invalid(
                    object,
                    vec![Cause::invalid(
                        "spec.clusterIPs[0]",
                        &json!(ip),
                        "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                    )],
                ));
            };
            if !(SERVICE_NET..SERVICE_NET + SERVICE_NET_SIZE).contains(&n) {
                return Err(bad("the provided network does not match the current range"));
            }
            if used_ips.contains(&n) {
                return Err(bad("provided IP is already allocated"));
            }
            ip.to_string()
        }
        None => {
            let mut rng = rand::thread_rng();
            let mut pick = None;
            for _ in 0..64 {
                // The upper part of the range, as the allocator prefers for dynamic IPs.
                let n = SERVICE_NET + rng.gen_range(16..SERVICE_NET_SIZE - 1);
                if !used_ips.contains(&n) {
                    pick = Some(n);
                    break;
                }
            }
            let n = pick
                .or_else(|| {
                    (SERVICE_NET + 2..SERVICE_NET + SERVICE_NET_SIZE - 1)
                        .find(|n| !used_ips.contains(n))
                })
                .ok_or_else(|| {
                    ApiError::internal("failed to allocate a serviceIP: range is full")
                })?;
            ip_string(n)
        }
    };
    object["spec"]["clusterIP"] = json!(ip);
    object["spec"]["clusterIPs"] = json!([ip]);
    if needs_node_ports(&spec) {
        let mut used: HashSet<i64> = existing
            .iter()
            .flat_map(|s| {
                s["spec"]["ports"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p["nodePort"].as_i64())
                    .chain(s["spec"]["healthCheckNodePort"].as_i64())
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut causes = Vec::new();
        if let Some(ports) = object["spec"]["ports"].as_array_mut() {
            for (i, p) in ports.iter_mut().enumerate() {
                match p["nodePort"].as_i64() {
                    Some(n) if !NODE_PORTS.contains(&n) => causes.push(Cause::invalid(
                        format!("spec.ports[{i}].nodePort"),
                        &json!(n),
                        "provided port is not in the valid range. The range of valid ports is 30000-32767",
                    )),
                    Some(n) if !used.insert(n) => causes.push(Cause::invalid(
                        format!("spec.ports[{i}].nodePort"),
                        &json!(n),
                        "provided port is already allocated",
                    )),
                    Some(_) => {}
                    None => {
                        if let Some(n) = free_port(&used) {
                            used.insert(n);
                            p["nodePort"] = json!(n);
                        }
                    }
                }
            }
        }
        if !causes.is_empty() {
            return Err(invalid(object, causes));
        }
        if spec["type"] == "LoadBalancer"
            && spec["externalTrafficPolicy"] == "Local"
            && spec["healthCheckNodePort"].is_null()
            && let Some(n) = free_port(&used)
        {
            object["spec"]["healthCheckNodePort"] = json!(n);
        }
    }
    Ok(())
}

fn free_port(used: &HashSet<i64>) -> Option<i64> {
    let mut rng = rand::thread_rng();
    for _ in 0..64 {
        let n = rng.gen_range(NODE_PORTS);
        if !used.contains(&n) {
            return Some(n);
        }
    }
    NODE_PORTS.clone().find(|n| !used.contains(n))
}

/// An update that leaves out what was allocated keeps it (the API server's
/// `patchAllocatedValues`).
pub fn keep_allocated(current: &Value, new: &mut Value) {
    let old = &current["spec"];
    let ty = new["spec"]["type"]
        .as_str()
        .unwrap_or("ClusterIP")
        .to_string();
    if ty != "ExternalName" && old["type"] != "ExternalName" {
        if new["spec"]["clusterIP"].as_str().is_none_or(str::is_empty)
            && let Some(ip) = old["clusterIP"].as_str()
        {
            new["spec"]["clusterIP"] = json!(ip);
            if new["spec"]["clusterIPs"].is_null() {
                new["spec"]["clusterIPs"] = old["clusterIPs"].clone();
            }
        }
        if new["spec"]["clusterIPs"].is_null()
            && let Some(ip) = new["spec"]["clusterIP"].as_str()
        {
            new["spec"]["clusterIPs"] = json!([ip]);
        }
    }
    if needs_node_ports(&new["spec"]) {
        let old_ports = old["ports"].as_array().cloned().unwrap_or_default();
        if let Some(ports) = new["spec"]["ports"].as_array_mut() {
            for p in ports {
                if !p["nodePort"].is_null() {
                    continue;
                }
                let same = old_ports.iter().find(|o| {
                    o["port"] == p["port"]
                        && o["protocol"] == p["protocol"]
                        && o["nodePort"].is_number()
                });
                if let Some(o) = same {
                    p["nodePort"] = o["nodePort"].clone();
                }
            }
        }
        if new["spec"]["healthCheckNodePort"].is_null() && old["healthCheckNodePort"].is_number() {
            new["spec"]["healthCheckNodePort"] = old["healthCheckNodePort"].clone();
        }
    }
}

/// Pods changing wake the Services that select them.
pub fn route(ctx: &Ctx, change: &Change) {
    if change.key.resource != "/pods" {
        return;
    }
    let labels: Vec<Map<String, Value>> = [change.object.as_deref(), change.previous.as_deref()]
        .into_iter()
        .flatten()
        .map(meta::labels)
        .collect();
    for svc in objects::list(ctx, "", "services", &change.key.namespace) {
        let Some(sel) = svc["spec"]["selector"]
            .as_object()
            .filter(|s| !s.is_empty())
        else {
            continue;
        };
        let selector = LabelSelector::from_map(sel);
        if labels.iter().any(|l| selector.matches(l)) {
            ctx.queue.add(objects::key_of("/services", &svc));
        }
    }
}

pub fn reconcile(ctx: &Ctx, key: &ObjectKey) {
    let Some(svc) = ctx.cluster.store.get(key) else {
        // The endpoints controller deletes the Endpoints of a Service that is gone.
        if let Some(ep) = objects::get(ctx, "", "endpoints", &key.namespace, &key.name)
            && meta::annotation(&ep, "endpoints.kubernetes.io/last-change-trigger-time").is_some()
        {
            let _ = objects::delete(ctx, "", "endpoints", &key.namespace, &key.name, None, None);
        }
        return;
    };
    if meta::is_deleting(&svc) {
        return;
    }
    load_balancer(ctx, key, &svc);
    if let Some(sel) = svc["spec"]["selector"]
        .as_object()
        .filter(|s| !s.is_empty())
    {
        let selector = LabelSelector::from_map(sel);
        endpoints(ctx, key, &svc, &selector);
    }
}

fn load_balancer(ctx: &Ctx, key: &ObjectKey, svc: &Value) {
    let uid = meta::uid(svc).to_string();
    let has_ingress = svc["status"]["loadBalancer"]["ingress"]
        .as_array()
        .is_some_and(|a| !a.is_empty());
    if svc["spec"]["type"] != "LoadBalancer" {
        if has_ingress {
            objects::update_status(
                ctx,
                "",
                "services",
                &key.namespace,
                &key.name,
                MANAGER,
                |o| {
                    o["status"]["loadBalancer"] = json!({});
                    true
                },
            );
        }
        return;
    }
    if has_ingress {
        return;
    }
    let first = ctx
        .state
        .services
        .ensuring
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(uid.clone());
    if first {
        events::normal(
            ctx,
            svc,
            events::SERVICE,
            "EnsuringLoadBalancer",
            "Ensuring load balancer",
        );
        ctx.requeue(key, ctx.cluster.settings.pod_ready_delay);
        return;
    }
    let used: HashSet<String> = objects::list(ctx, "", "services", "")
        .iter()
        .flat_map(|s| {
            s["status"]["loadBalancer"]["ingress"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|i| i["ip"].as_str().map(String::from))
                .collect::<Vec<_>>()
        })
        .collect();
    let ip = (200..=254)
        .chain(2..200)
        .map(|n| ip_string(LB_NET + n))
        .find(|ip| !used.contains(ip))
        .unwrap_or_else(|| ip_string(LB_NET + 200));
    let ingress = json!([{"ip": ip, "ipMode": "VIP"}]);
    let written = objects::update_status(
        ctx,
        "",
        "services",
        &key.namespace,
        &key.name,
        MANAGER,
        |o| {
            o["status"]["loadBalancer"] = json!({"ingress": ingress});
            true
        },
    );
    if written {
        ctx.state
            .services
            .ensuring
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&uid);
        events::normal(
            ctx,
            svc,
            events::SERVICE,
            "EnsuredLoadBalancer",
            "Ensured load balancer",
        );
    }
}

/// One pod's endpoint: where it is and how ready.
struct Endpoint {
    ip: String,
    node: String,
    name: String,
    uid: String,
    ready: bool,
    terminating: bool,
}

/// The service's ports as a pod serves them, or `None` when a named target port is
/// not among its containers' ports.
fn resolve_ports(svc: &Value, pod: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for p in svc["spec"]["ports"].as_array().into_iter().flatten() {
        let protocol = p["protocol"].as_str().unwrap_or("TCP");
        let port = match &p["targetPort"] {
            Value::Number(n) => n.as_i64(),
            Value::String(name) => match name.parse::<i64>() {
                Ok(n) => Some(n),
                Err(_) => pod["spec"]["containers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .flat_map(|c| c["ports"].as_array().cloned().unwrap_or_default())
                    .find(|cp| {
                        cp["name"] == *name && cp["protocol"].as_str().unwrap_or("TCP") == protocol
                    })
                    .and_then(|cp| cp["containerPort"].as_i64()),
            },
            _ => p["port"].as_i64(),
        };
        let Some(port) = port else {
            continue;
        };
        let mut v = json!({"port": port, "protocol": protocol});
        if let Some(n) = p["name"].as_str() {
            v["name"] = json!(n);
        }
        if let Some(a) = p["appProtocol"].as_str() {
            v["appProtocol"] = json!(a);
        }
        out.push(v);
    }
    out
}

fn endpoints(ctx: &Ctx, key: &ObjectKey, svc: &Value, selector: &LabelSelector) {
    let publish_not_ready = svc["spec"]["publishNotReadyAddresses"] == true;
    // Pods grouped by the ports they resolve to.
    let mut groups: BTreeMap<String, (Vec<Value>, Vec<Endpoint>)> = BTreeMap::new();
    for pod in objects::list(ctx, "", "pods", &key.namespace) {
        if !selector.matches_object(&pod) {
            continue;
        }
        let Some(ip) = pod["status"]["podIP"].as_str().filter(|s| !s.is_empty()) else {
            continue;
        };
        if matches!(
            pod["status"]["phase"].as_str(),
            Some("Succeeded" | "Failed")
        ) {
            continue;
        }
        let ports = resolve_ports(svc, &pod);
        let ep = Endpoint {
            ip: ip.to_string(),
            node: pod["spec"]["nodeName"].as_str().unwrap_or("").to_string(),
            name: meta::name(&pod).to_string(),
            uid: meta::uid(&pod).to_string(),
            ready: super::replicaset::is_ready(&pod),
            terminating: meta::is_deleting(&pod),
        };
        let g = groups
            .entry(Value::Array(ports.clone()).to_string())
            .or_insert_with(|| (ports, Vec::new()));
        g.1.push(ep);
    }
    let headless = svc["spec"]["clusterIP"] == "None";
    let mut labels = meta::labels(svc);
    if headless {
        labels.insert("service.kubernetes.io/headless".into(), json!(""));
    }
    let target_ref = |e: &Endpoint| json!({"kind": "Pod", "namespace": key.namespace, "name": e.name, "uid": e.uid});
    // Endpoints.
    let mut subsets = Vec::new();
    for (ports, eps) in groups.values() {
        let mut ready = Vec::new();
        let mut not_ready = Vec::new();
        for e in eps.iter().filter(|e| !e.terminating) {
            let mut a = json!({"ip": e.ip, "targetRef": target_ref(e)});
            if !e.node.is_empty() {
                a["nodeName"] = json!(e.node);
            }
            if e.ready || publish_not_ready {
                ready.push(a);
            } else {
                not_ready.push(a);
            }
        }
        if ready.is_empty() && not_ready.is_empty() {
            continue;
        }
        ready.sort_by(|a, b| a["ip"].as_str().cmp(&b["ip"].as_str()));
        not_ready.sort_by(|a, b| a["ip"].as_str().cmp(&b["ip"].as_str()));
        let mut s = Map::new();
        if !ready.is_empty() {
            s.insert("addresses".into(), json!(ready));
        }
        if !not_ready.is_empty() {
            s.insert("notReadyAddresses".into(), json!(not_ready));
        }
        if !ports.is_empty() {
            s.insert("ports".into(), json!(ports));
        }
        subsets.push(Value::Object(s));
    }
    let now = meta::now();
    let ep_labels = labels.clone();
    match objects::get(ctx, "", "endpoints", &key.namespace, &key.name) {
        Some(ep) => {
            let want_subsets = json!(subsets);
            let current = ep.get("subsets").cloned().unwrap_or(json!([]));
            if current != want_subsets || meta::labels(&ep) != ep_labels {
                objects::update(
                    ctx,
                    "",
                    "endpoints",
                    &key.namespace,
                    &key.name,
                    MANAGER,
                    |o| {
                        if subsets.is_empty() {
                            if let Some(m) = o.as_object_mut() {
                                m.shift_remove("subsets");
                            }
                        } else {
                            o["subsets"] = want_subsets.clone();
                        }
                        let m = meta::meta_mut(o);
                        m.insert("labels".into(), Value::Object(ep_labels.clone()));
                        let ann = m.entry("annotations").or_insert_with(|| json!({}));
                        ann["endpoints.kubernetes.io/last-change-trigger-time"] = json!(now);
                        true
                    },
                );
            }
        }
        None => {
            let mut ep = json!({
                "apiVersion": "v1",
                "kind": "Endpoints",
                "metadata": {
                    "name": key.name,
                    "namespace": key.namespace,
                    "labels": ep_labels,
                    "annotations": {"endpoints.kubernetes.io/last-change-trigger-time": now},
                },
            });
            if !subsets.is_empty() {
                ep["subsets"] = json!(subsets);
            }
            let _ = objects::create(ctx, "", "endpoints", &key.namespace, ep, MANAGER);
        }
    }
    // EndpointSlices: one per group of ports.
    let mut slice_labels = labels;
    slice_labels.insert("kubernetes.io/service-name".into(), json!(key.name));
    slice_labels.insert(
        "endpointslice.kubernetes.io/managed-by".into(),
        json!(SLICE_MANAGER),
    );
    let mut wanted: Vec<(Value, Value)> = Vec::new();
    for (ports, eps) in groups.values() {
        let mut list: Vec<&Endpoint> = eps.iter().collect();
        list.sort_by(|a, b| a.ip.cmp(&b.ip));
        let endpoints: Vec<Value> = list
            .iter()
            .map(|e| {
                let serving = e.ready || publish_not_ready;
                let mut v = json!({
                    "addresses": [e.ip],
                    "conditions": {
                        "ready": serving && !e.terminating,
                        "serving": serving,
                        "terminating": e.terminating,
                    },
                    "targetRef": target_ref(e),
                });
                if !e.node.is_empty() {
                    v["nodeName"] = json!(e.node);
                }
                v
            })
            .collect();
        let ports: Vec<Value> = ports
            .iter()
            .map(|p| {
                let mut q = p.clone();
                if q.get("name").is_none() {
                    q["name"] = json!("");
                }
                q
            })
            .collect();
        wanted.push((json!(endpoints), json!(ports)));
    }
    if wanted.is_empty() {
        wanted.push((json!([]), Value::Null));
    }
    let mut existing: Vec<Arc<Value>> =
        objects::list(ctx, "discovery.k8s.io", "endpointslices", &key.namespace)
            .into_iter()
            .filter(|s| {
                let l = meta::labels(s);
                l.get("kubernetes.io/service-name") == Some(&json!(key.name))
                    && l.get("endpointslice.kubernetes.io/managed-by")
                        == Some(&json!(SLICE_MANAGER))
                    && !meta::is_deleting(s)
            })
            .collect();
    existing.sort_by_key(|s| meta::name(s).to_string());
    for (i, (eps, ports)) in wanted.iter().enumerate() {
        match existing.get(i) {
            Some(slice) => {
                let same = slice["endpoints"] == *eps
                    && slice.get("ports").cloned().unwrap_or(Value::Null) == *ports
                    && meta::labels(slice) == slice_labels;
                if same {
                    continue;
                }
                let labels = slice_labels.clone();
                objects::update(
                    ctx,
                    "discovery.k8s.io",
                    "endpointslices",
                    &key.namespace,
                    meta::name(slice),
                    MANAGER,
                    |o| {
                        o["endpoints"] = eps.clone();
                        match ports {
                            Value::Null => {
                                if let Some(m) = o.as_object_mut() {
                                    m.shift_remove("ports");
                                }
                            }
                            p => o["ports"] = p.clone(),
                        }
                        let m = meta::meta_mut(o);
                        m.insert("labels".into(), Value::Object(labels.clone()));
                        let ann = m.entry("annotations").or_insert_with(|| json!({}));
                        ann["endpoints.kubernetes.io/last-change-trigger-time"] = json!(now);
                        true
                    },
                );
            }
            None => {
                let mut slice = json!({
                    "apiVersion": "discovery.k8s.io/v1",
                    "kind": "EndpointSlice",
                    "metadata": {
                        "generateName": format!("{}-", key.name),
                        "namespace": key.namespace,
                        "labels": slice_labels,
                        "annotations": {"endpoints.kubernetes.io/last-change-trigger-time": now},
                        "ownerReferences": [objects::owner_ref(svc, true)],
                    },
                    "addressType": "IPv4",
                    "endpoints": eps,
                });
                if !ports.is_null() {
                    slice["ports"] = ports.clone();
                }
                let _ = objects::create(
                    ctx,
                    "discovery.k8s.io",
                    "endpointslices",
                    &key.namespace,
                    slice,
                    MANAGER,
                );
            }
        }
    }
    for extra in existing.iter().skip(wanted.len()) {
        let _ = objects::delete(
            ctx,
            "discovery.k8s.io",
            "endpointslices",
            &key.namespace,
            meta::name(extra),
            None,
            None,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_target_ports_resolve_against_the_pod() {
        let svc = json!({"spec": {"ports": [{"name": "http", "port": 80, "targetPort": "web", "protocol": "TCP"}]}});
        let pod =
            json!({"spec": {"containers": [{"ports": [{"name": "web", "containerPort": 8080}]}]}});
        assert_eq!(resolve_ports(&svc, &pod)[0]["port"], 8080);
        let other = json!({"spec": {"containers": [{}]}});
        assert!(resolve_ports(&svc, &other).is_empty());
    }

    #[test]
    fn updates_keep_allocated_values() {
        let current = json!({"spec": {"type": "NodePort", "clusterIP": "10.96.5.5", "clusterIPs": ["10.96.5.5"], "ports": [{"port": 80, "protocol": "TCP", "nodePort": 30080}]}});
        let mut new =
            json!({"spec": {"type": "NodePort", "ports": [{"port": 80, "protocol": "TCP"}]}});
        keep_allocated(&current, &mut new);
        assert_eq!(new["spec"]["clusterIP"], "10.96.5.5");
        assert_eq!(new["spec"]["ports"][0]["nodePort"], 30080);
    }
}
