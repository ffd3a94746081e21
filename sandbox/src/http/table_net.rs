//! Rows of services and networking: services, endpoints, endpoint slices, ingresses,
//! ingress classes, network policies, service CIDRs and IP addresses.

use serde_json::{Value, json};

use super::table::{
    AGE, Cells, Column, NAME, Printer, age, col, format_label_selector, format_labels, int,
    list_with_more, name, text, wide,
};

const SERVICE: &[Column] = &[
    NAME,
    col(
        "Type",
        "string",
        "type determines how the Service is exposed. Defaults to ClusterIP.",
    ),
    col(
        "Cluster-IP",
        "string",
        "clusterIP is the IP address of the service and is usually assigned randomly.",
    ),
    col(
        "External-IP",
        "string",
        "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.",
    ),
    col(
        "Port(s)",
        "string",
        "The list of ports that are exposed by this service.",
    ),
    AGE,
    wide(
        "Selector",
        "string",
        "Route service traffic to pods with label keys and values matching this selector.",
    ),
];

const ENDPOINTS: &[Column] = &[
    NAME,
    col(
        "Endpoints",
        "string",
        "The set of all endpoints is the union of all subsets.",
    ),
    AGE,
];

const ENDPOINT_SLICE: &[Column] = &[
    NAME,
    col(
        "AddressType",
        "string",
        "addressType specifies the type of address carried by this EndpointSlice.",
    ),
    col(
        "Ports",
        "string",
        "ports specifies the list of network ports exposed by each endpoint in this slice.",
    ),
    col(
        "Endpoints",
        "string",
        "endpoints is a list of unique endpoints in this slice.",
    ),
    AGE,
];

const INGRESS: &[Column] = &[
    NAME,
    col(
        "Class",
        "string",
        "The name of the IngressClass resource that should be used for additional configuration",
    ),
    col(
        "Hosts",
        "string",
        "Hosts that incoming requests are matched against before the ingress rule",
    ),
    col(
        "Address",
        "string",
        "Address is a list containing ingress points for the load-balancer",
    ),
    col("Ports", "string", "Ports of TLS configurations that open"),
    AGE,
];

const INGRESS_CLASS: &[Column] = &[
    NAME,
    col(
        "Controller",
        "string",
        "Controller that is responsible for handling this class",
    ),
    col(
        "Parameters",
        "string",
        "A reference to a resource with additional parameters",
    ),
    AGE,
];

const NETWORK_POLICY: &[Column] = &[
    NAME,
    col(
        "Pod-Selector",
        "string",
        "podSelector selects the pods to which this NetworkPolicy object applies.",
    ),
    AGE,
];

const SERVICE_CIDR: &[Column] = &[
    NAME,
    col(
        "CIDRs",
        "string",
        "cidrs defines the IP blocks in CIDR notation from which to assign service cluster IPs.",
    ),
    AGE,
];

const IP_ADDRESS: &[Column] = &[
    NAME,
    col(
        "ParentRef",
        "string",
        "ParentRef references the resource that an IPAddress is attached to.",
    ),
    AGE,
];

pub fn printer(group: &str, plural: &str) -> Option<Printer> {
    let (columns, cells): (&'static [Column], Cells) = match (group, plural) {
        ("", "services") => (SERVICE, service),
        ("", "endpoints") => (ENDPOINTS, endpoints),
        ("discovery.k8s.io", "endpointslices") => (ENDPOINT_SLICE, endpoint_slice),
        ("networking.k8s.io", "ingresses") => (INGRESS, ingress),
        ("networking.k8s.io", "ingressclasses") => (INGRESS_CLASS, ingress_class),
        ("networking.k8s.io", "networkpolicies") => (NETWORK_POLICY, network_policy),
        ("networking.k8s.io", "servicecidrs") => (SERVICE_CIDR, service_cidr),
        ("networking.k8s.io", "ipaddresses") => (IP_ADDRESS, ip_address),
        _ => return None,
    };
    Some(Printer {
        columns,
        cells,
        sort: None,
    })
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(text).collect())
        .unwrap_or_default()
}

/// IPs or host names of load-balancer ingress points, each once, in order (a sorted set
/// in the API server).
fn load_balancer(status: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for ing in status["ingress"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let v = match ing["ip"].as_str().filter(|s| !s.is_empty()) {
            Some(ip) => ip.to_string(),
            None => text(&ing["hostname"]),
        };
        if !v.is_empty() {
            out.push(v);
        }
    }
    out.sort();
    out.dedup();
    out
}

fn service(o: &Value) -> Vec<Value> {
    let spec = &o["spec"];
    let ty = text(&spec["type"]);
    let cluster_ip = spec["clusterIPs"][0]
        .as_str()
        .or_else(|| spec["clusterIP"].as_str())
        .filter(|s| !s.is_empty())
        .unwrap_or("<none>");
    let external_ips = strings(&spec["externalIPs"]);
    let external = match ty.as_str() {
        "ClusterIP" | "NodePort" => {
            if external_ips.is_empty() {
                "<none>".to_string()
            } else {
                external_ips.join(",")
            }
        }
        "LoadBalancer" => {
            let mut ips = load_balancer(&o["status"]["loadBalancer"]);
            ips.extend(external_ips);
            if ips.is_empty() {
                "<pending>".to_string()
            } else {
                ips.join(",")
            }
        }
        "ExternalName" => text(&spec["externalName"]),
        _ => "<unknown>".to_string(),
    };
    let ports: Vec<String> = spec["ports"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|p| {
            let proto = text(&p["protocol"]);
            match int(&p["nodePort"]) {
                0 => format!("{}/{proto}", int(&p["port"])),
                np => format!("{}:{np}/{proto}", int(&p["port"])),
            }
        })
        .collect();
    let ports = if ports.is_empty() {
        "<none>".to_string()
    } else {
        ports.join(",")
    };
    vec![
        name(o),
        json!(ty),
        json!(cluster_ip),
        json!(external),
        json!(ports),
        age(o),
        json!(format_labels(&spec["selector"])),
    ]
}

/// `ip:port` of each address and port, at most three, then `+ N more...`.
fn format_endpoints(o: &Value) -> String {
    let subsets = o["subsets"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if subsets.is_empty() {
        return "<none>".into();
    }
    let mut list = Vec::new();
    let mut count = 0;
    for ss in subsets {
        let addresses = ss["addresses"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let ports = ss["ports"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        if ports.is_empty() {
            count += addresses.len();
            for a in addresses {
                if list.len() < 3 {
                    list.push(text(&a["ip"]));
                }
            }
            continue;
        }
        for p in ports {
            count += addresses.len();
            for a in addresses {
                if list.len() < 3 {
                    let ip = text(&a["ip"]);
                    let host = if ip.contains(':') {
                        format!("[{ip}]")
                    } else {
                        ip
                    };
                    list.push(format!("{host}:{}", int(&p["port"])));
                }
            }
        }
    }
    if count > 3 {
        return format!("{} + {} more...", list.join(","), count - 3);
    }
    list.join(",")
}

fn endpoints(o: &Value) -> Vec<Value> {
    vec![name(o), json!(format_endpoints(o)), age(o)]
}

fn endpoint_slice(o: &Value) -> Vec<Value> {
    let ports: Vec<String> = o["ports"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|p| match (&p["port"], &p["name"]) {
            (Value::Number(n), _) => n.to_string(),
            (_, Value::String(n)) => n.clone(),
            _ => "*".to_string(),
        })
        .collect();
    let addresses: Vec<String> = o["endpoints"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .flat_map(|e| strings(&e["addresses"]))
        .collect();
    vec![
        name(o),
        json!(text(&o["addressType"])),
        json!(list_with_more(&ports, 3, "<unset>")),
        json!(list_with_more(&addresses, 3, "<unset>")),
        age(o),
    ]
}

fn ingress(o: &Value) -> Vec<Value> {
    let spec = &o["spec"];
    let rules = spec["rules"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let hosts: Vec<String> = rules
        .iter()
        .take(3)
        .filter_map(|r| r["host"].as_str().filter(|h| !h.is_empty()))
        .map(String::from)
        .collect();
    let hosts = if hosts.is_empty() {
        "*".to_string()
    } else if rules.len() > 3 {
        format!("{} + {} more...", hosts.join(","), rules.len() - 3)
    } else {
        hosts.join(",")
    };
    let tls = spec["tls"].as_array().is_some_and(|t| !t.is_empty());
    vec![
        name(o),
        json!(spec["ingressClassName"].as_str().unwrap_or("<none>")),
        json!(hosts),
        json!(load_balancer(&o["status"]["loadBalancer"]).join(",")),
        json!(if tls { "80, 443" } else { "80" }),
        age(o),
    ]
}

fn ingress_class(o: &Value) -> Vec<Value> {
    let p = &o["spec"]["parameters"];
    let parameters = if p.is_object() {
        let kind = match p["apiGroup"].as_str() {
            Some(g) => format!("{}.{g}", text(&p["kind"])),
            None => text(&p["kind"]),
        };
        format!("{kind}/{}", text(&p["name"]))
    } else {
        "<none>".to_string()
    };
    vec![
        name(o),
        json!(text(&o["spec"]["controller"])),
        json!(parameters),
        age(o),
    ]
}

fn network_policy(o: &Value) -> Vec<Value> {
    vec![
        name(o),
        json!(format_label_selector(&o["spec"]["podSelector"])),
        age(o),
    ]
}

fn service_cidr(o: &Value) -> Vec<Value> {
    vec![
        name(o),
        json!(strings(&o["spec"]["cidrs"]).join(",")),
        age(o),
    ]
}

fn ip_address(o: &Value) -> Vec<Value> {
    let p = &o["spec"]["parentRef"];
    let parent = if p.is_object() {
        let mut s = match p["group"].as_str().filter(|g| !g.is_empty()) {
            Some(g) => format!("{}.{g}", text(&p["resource"])),
            None => text(&p["resource"]),
        }
        .to_lowercase();
        if let Some(ns) = p["namespace"].as_str().filter(|n| !n.is_empty()) {
            s = format!("{s}/{ns}");
        }
        format!("{s}/{}", text(&p["name"]))
    } else {
        "<none>".to_string()
    };
    vec![name(o), json!(parent), age(o)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn services_show_ips_and_ports() {
        let lb = json!({"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer",
            "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
            "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"},
                      {"port": 53, "protocol": "UDP"}], "selector": {"b": "2", "a": "1"}},
            "status": {"loadBalancer": {}}});
        let c = service(&lb);
        assert_eq!(
            &c[1..5],
            &[
                json!("LoadBalancer"),
                json!("10.96.0.10"),
                json!("<pending>"),
                json!("80:30080/TCP,53/UDP")
            ]
        );
        assert_eq!(c[6], "a=1,b=2");
        let ext = json!({"metadata": {"name": "e"}, "spec": {"type": "ExternalName", "externalName": "x.example.com"}});
        let c = service(&ext);
        assert_eq!(
            &c[2..5],
            &[json!("<none>"), json!("x.example.com"), json!("<none>")]
        );
    }

    #[test]
    fn endpoints_list_at_most_three() {
        let ep = json!({"subsets": [{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}],
            "ports": [{"port": 80}, {"port": 443}]}]});
        assert_eq!(
            format_endpoints(&ep),
            "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more..."
        );
        assert_eq!(format_endpoints(&json!({})), "<none>");
    }

    #[test]
    fn ingresses_show_class_hosts_and_ports() {
        let ing = json!({"metadata": {"name": "i"}, "spec": {"ingressClassName": "nginx",
            "rules": [{"host": "a.example.com"}, {}], "tls": [{"hosts": ["a.example.com"]}]},
            "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}});
        let c = ingress(&ing);
        assert_eq!(
            &c[1..5],
            &[
                json!("nginx"),
                json!("a.example.com"),
                json!("1.2.3.4"),
                json!("80, 443")
            ]
        );
    }
}
