//! The objects of a release as `helm status` reads them from the cluster: every document
//! of the manifest fetched by kind and name, grouped by `version/Kind`, plus the pods
//! that workloads select (`v1/Pod(related)`, one PodList per distinct selector).

use std::collections::BTreeMap;

use kube::core::{DynamicObject, GroupVersionKind, Request};
use kube::discovery::Scope;
use serde_json::Value as Json;

/// The release's objects, keyed as helm keys them. Objects that cannot be fetched are
/// left out, as helm leaves them out.
pub async fn fetch(
    client: &kube::Client,
    manifest: &str,
    namespace: &str,
) -> BTreeMap<String, Vec<Json>> {
    fetch_as(client, manifest, namespace, false).await
}

/// The same objects as the server's Tables (what `kubectl get` prints), for the
/// RESOURCES section of `status`'s text.
pub async fn fetch_tables(
    client: &kube::Client,
    manifest: &str,
    namespace: &str,
) -> BTreeMap<String, Vec<Json>> {
    fetch_as(client, manifest, namespace, true).await
}

/// Asks for a Table, falling back to the object for servers that cannot make one.
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

fn as_table(mut request: http::Request<Vec<u8>>, tables: bool) -> http::Request<Vec<u8>> {
    if tables {
        request
            .headers_mut()
            .insert(http::header::ACCEPT, http::HeaderValue::from_static(TABLE));
    }
    request
}

async fn fetch_as(
    client: &kube::Client,
    manifest: &str,
    namespace: &str,
    tables: bool,
) -> BTreeMap<String, Vec<Json>> {
    let mut objects: BTreeMap<String, Vec<Json>> = BTreeMap::new();
    let mut selectors: Vec<BTreeMap<String, String>> = Vec::new();
    for doc in documents(manifest) {
        let Some(head) = Head::of(&doc) else { continue };
        let gvk = GroupVersionKind::gvk(&head.group, &head.version, &head.kind);
        let Ok((resource, caps)) = kube::discovery::pinned_kind(client, &gvk).await else {
            continue;
        };
        let ns = match caps.scope {
            Scope::Namespaced => Some(head.namespace.as_deref().unwrap_or(namespace)),
            Scope::Cluster => None,
        };
        let path = <DynamicObject as kube::Resource>::url_path(&resource, ns);
        let Ok(request) = Request::new(path).get(&head.name, &Default::default()) else {
            continue;
        };
        let Ok(object) = client.request::<Json>(as_table(request, tables)).await else {
            continue;
        };
        objects
            .entry(format!("{}/{}", head.version, head.kind))
            .or_default()
            .push(object);

        let Some(selector) = selector_of(&doc) else {
            continue;
        };
        if selectors.contains(&selector) {
            continue;
        }
        selectors.push(selector.clone());
        let pods_ns = ns.unwrap_or(namespace);
        let labels = selector
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        let params = kube::api::ListParams::default().labels(&labels);
        let Ok(request) = Request::new(format!("/api/v1/namespaces/{pods_ns}/pods")).list(&params)
        else {
            continue;
        };
        // helm's builder gives the whole list back as one object (a PodList), its items
        // given the list's kind as Go's list decoder gives them.
        if let Ok(mut list) = client.request::<Json>(as_table(request, tables)).await {
            if let Some(Json::Array(items)) = list.get_mut("items") {
                for item in items {
                    if let Json::Object(map) = item {
                        map.insert("apiVersion".into(), Json::String("v1".into()));
                        map.insert("kind".into(), Json::String("Pod".into()));
                    }
                }
            }
            objects
                .entry("v1/Pod(related)".to_owned())
                .or_default()
                .push(list);
        }
    }
    objects
}

/// The YAML documents of a manifest, each parsed.
fn documents(manifest: &str) -> Vec<chartkit_yaml::Map> {
    let mut docs = Vec::new();
    let mut current = String::new();
    let flush = |text: &mut String, docs: &mut Vec<chartkit_yaml::Map>| {
        if let Ok(map) = chartkit_yaml::parse_values(text)
            && !map.is_empty()
        {
            docs.push(map);
        }
        text.clear();
    };
    for line in manifest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            flush(&mut current, &mut docs);
        } else {
            current.push_str(line);
        }
    }
    flush(&mut current, &mut docs);
    docs
}

struct Head {
    group: String,
    version: String,
    kind: String,
    name: String,
    namespace: Option<String>,
}

impl Head {
    fn of(doc: &chartkit_yaml::Map) -> Option<Head> {
        let text = |v: Option<&chartkit_yaml::Value>| match v {
            Some(chartkit_yaml::Value::String(s)) if !s.is_empty() => Some(s.clone()),
            _ => None,
        };
        let api_version = text(doc.get("apiVersion"))?;
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g.to_owned(), v.to_owned()),
            None => (String::new(), api_version),
        };
        let metadata = match doc.get("metadata") {
            Some(chartkit_yaml::Value::Map(m)) => m,
            _ => return None,
        };
        Some(Head {
            group,
            version,
            kind: text(doc.get("kind"))?,
            name: text(metadata.get("name"))?,
            namespace: text(metadata.get("namespace")),
        })
    }
}

/// The pod selector of a workload in the manifest, as helm reads it.
fn selector_of(doc: &chartkit_yaml::Map) -> Option<BTreeMap<String, String>> {
    let kind = match doc.get("kind") {
        Some(chartkit_yaml::Value::String(k)) => k.as_str(),
        _ => return None,
    };
    let spec = match doc.get("spec") {
        Some(chartkit_yaml::Value::Map(m)) => m,
        _ => return None,
    };
    let selector = match kind {
        "ReplicaSet" | "Deployment" | "StatefulSet" | "DaemonSet" | "Job" => {
            match spec.get("selector") {
                Some(chartkit_yaml::Value::Map(s)) => s.get("matchLabels"),
                _ => None,
            }
        }
        "ReplicationController" => spec.get("selector"),
        _ => None,
    };
    match selector {
        Some(chartkit_yaml::Value::Map(m)) => Some(
            m.iter()
                .filter_map(|(k, v)| match v {
                    chartkit_yaml::Value::String(s) => Some((k.clone(), s.clone())),
                    _ => None,
                })
                .collect(),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_heads_and_selectors() {
        let manifest = "---\n# Source: a\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels:\n      app: web\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: other\n";
        let docs = documents(manifest);
        assert_eq!(docs.len(), 2);
        let head = Head::of(&docs[0]).unwrap();
        assert_eq!(
            (
                head.group.as_str(),
                head.version.as_str(),
                head.kind.as_str()
            ),
            ("apps", "v1", "Deployment")
        );
        assert_eq!(selector_of(&docs[0]).unwrap()["app"], "web");
        let service = Head::of(&docs[1]).unwrap();
        assert_eq!(service.group, "");
        assert_eq!(service.namespace.as_deref(), Some("other"));
        assert_eq!(selector_of(&docs[1]), None);
    }
}
