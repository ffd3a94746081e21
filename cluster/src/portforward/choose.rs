//! Which pod and port a target reaches, as `kubectl port-forward` decides: a service's
//! selector (or a deployment's) gives the pods, the ready ones are ranked as kubectl
//! ranks them, and a service port is turned into the container port its `targetPort`
//! names in the chosen pod.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Pod, Service};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::{Api, ListParams};

use super::{ForwardError, PortRef, Resource, Target};

/// A pod and the container port in it that the target's port means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    pub pod: String,
    pub port: u16,
}

/// Chooses the pod and port for `target` now; the error says which part is wrong.
pub async fn choose(client: &kube::Client, target: &Target) -> Result<Chosen, ForwardError> {
    let ns = &target.namespace;
    match &target.resource {
        Resource::Pod(name) => {
            let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
            let pod = get(client, &pods, target).await?;
            if !usable(&pod) {
                return Err(ForwardError::PodNotReady {
                    pod: name.clone(),
                    namespace: ns.clone(),
                    state: describe_state(&pod),
                });
            }
            let port = container_port(&pod, &target.port)?;
            Ok(Chosen {
                pod: name.clone(),
                port,
            })
        }
        Resource::Deployment(_) => {
            let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns);
            let deployment = get(client, &deployments, target).await?;
            let selector = deployment
                .spec
                .as_ref()
                .map(|s| label_selector(&s.selector))
                .unwrap_or_default();
            if selector.is_empty() {
                return Err(ForwardError::NoSelector {
                    resource: target.resource.clone(),
                    namespace: ns.clone(),
                });
            }
            let pods = ready_pods(client, target, &selector).await?;
            let mut last = None;
            for pod in &pods {
                match container_port(pod, &target.port) {
                    Ok(port) => {
                        return Ok(Chosen {
                            pod: name_of(pod),
                            port,
                        });
                    }
                    Err(e) => last = Some(e),
                }
            }
            Err(last.expect("ready_pods returns at least one pod"))
        }
        Resource::Service(name) => {
            let services: Api<Service> = Api::namespaced(client.clone(), ns);
            let service = get(client, &services, target).await?;
            let spec = service.spec.clone().unwrap_or_default();
            let ports = spec.ports.clone().unwrap_or_default();
            let service_port = ports.iter().find(|p| match &target.port {
                PortRef::Number(n) => p.port == i32::from(*n),
                PortRef::Name(wanted) => p.name.as_deref() == Some(wanted.as_str()),
            });
            let Some(service_port) = service_port else {
                return Err(ForwardError::NoServicePort {
                    service: name.clone(),
                    namespace: ns.clone(),
                    port: target.port.to_string(),
                    known: ports
                        .iter()
                        .map(|p| match &p.name {
                            Some(n) if !n.is_empty() => format!("{} ({n})", p.port),
                            _ => p.port.to_string(),
                        })
                        .collect(),
                });
            };
            let selector: BTreeMap<String, String> = spec.selector.clone().unwrap_or_default();
            if selector.is_empty() {
                return Err(ForwardError::NoSelector {
                    resource: target.resource.clone(),
                    namespace: ns.clone(),
                });
            }
            let selector = selector
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",");
            let pods = ready_pods(client, target, &selector).await?;
            let mut last = None;
            for pod in &pods {
                // A headless service's port is the pod's port, as kubectl takes it.
                let port = if spec.cluster_ip.as_deref() == Some("None") {
                    u16::try_from(service_port.port).ok()
                } else {
                    match &service_port.target_port {
                        None | Some(IntOrString::Int(0)) => u16::try_from(service_port.port).ok(),
                        Some(IntOrString::Int(n)) => u16::try_from(*n).ok(),
                        Some(IntOrString::String(named)) => {
                            match container_port(pod, &PortRef::Name(named.clone())) {
                                Ok(p) => Some(p),
                                Err(e) => {
                                    last = Some(e);
                                    None
                                }
                            }
                        }
                    }
                };
                if let Some(port) = port.filter(|p| *p > 0) {
                    return Ok(Chosen {
                        pod: name_of(pod),
                        port,
                    });
                }
            }
            Err(last.unwrap_or_else(|| ForwardError::NoServicePort {
                service: name.clone(),
                namespace: ns.clone(),
                port: target.port.to_string(),
                known: Vec::new(),
            }))
        }
    }
}

/// Whether the pod chosen earlier can still take connections.
pub async fn still_usable(client: &kube::Client, namespace: &str, pod: &str) -> bool {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    matches!(pods.get_opt(pod).await, Ok(Some(p)) if usable(&p))
}

/// The target object, or an error saying whether the namespace or the object is
/// missing.
async fn get<K>(client: &kube::Client, api: &Api<K>, target: &Target) -> Result<K, ForwardError>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    match api.get_opt(target.resource.name()).await {
        Ok(Some(object)) => Ok(object),
        Ok(None) => {
            let namespaces: Api<Namespace> = Api::all(client.clone());
            // Without the right to read namespaces, the object is what is missing.
            if let Ok(None) = namespaces.get_opt(&target.namespace).await {
                return Err(ForwardError::NoNamespace {
                    namespace: target.namespace.clone(),
                });
            }
            Err(ForwardError::NotFound {
                resource: target.resource.clone(),
                namespace: target.namespace.clone(),
            })
        }
        Err(e) => Err(ForwardError::Api {
            what: format!(
                "{} in namespace {}",
                target.resource.short(),
                target.namespace
            ),
            message: crate::kube_error::describe(&e),
        }),
    }
}

/// The ready pods `selector` matches, best first; an error when there is none.
async fn ready_pods(
    client: &kube::Client,
    target: &Target,
    selector: &str,
) -> Result<Vec<Pod>, ForwardError> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), &target.namespace);
    let list = pods
        .list(&ListParams::default().labels(selector))
        .await
        .map_err(|e| ForwardError::Api {
            what: format!(
                "the pods behind {} in namespace {}",
                target.resource.short(),
                target.namespace
            ),
            message: crate::kube_error::describe(&e),
        })?;
    let matching = list.items.len();
    let mut ready: Vec<Pod> = list.items.into_iter().filter(usable).collect();
    if ready.is_empty() {
        return Err(ForwardError::NoReadyPod {
            resource: target.resource.clone(),
            namespace: target.namespace.clone(),
            matching,
            selector: selector.to_owned(),
        });
    }
    ready.sort_by_key(rank);
    Ok(ready)
}

/// kubectl's order among ready pods (its `ActivePods`, best first): ready the longest,
/// fewest restarts, oldest.
type Rank = (
    bool,
    Option<k8s_openapi::jiff::Timestamp>,
    i32,
    bool,
    Option<k8s_openapi::jiff::Timestamp>,
);

fn rank(pod: &Pod) -> Rank {
    let ready_since = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Ready" && c.status == "True"))
        .and_then(|c| c.last_transition_time.as_ref())
        .map(|t| t.0);
    let restarts = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .map(|c| c.iter().map(|c| c.restart_count).max().unwrap_or(0))
        .unwrap_or(0);
    let created = pod.metadata.creation_timestamp.as_ref().map(|t| t.0);
    (
        ready_since.is_none(),
        ready_since,
        restarts,
        created.is_none(),
        created,
    )
}

/// Running, ready and not being deleted: a pod that can take a forwarded connection.
pub fn usable(pod: &Pod) -> bool {
    let Some(status) = &pod.status else {
        return false;
    };
    pod.metadata.deletion_timestamp.is_none()
        && status.phase.as_deref() == Some("Running")
        && status
            .conditions
            .as_ref()
            .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

fn describe_state(pod: &Pod) -> String {
    if pod.metadata.deletion_timestamp.is_some() {
        return "it is being deleted".into();
    }
    let phase = pod
        .status
        .as_ref()
        .and_then(|s| s.phase.clone())
        .unwrap_or_else(|| "Pending".into());
    if phase == "Running" {
        "it is running but not ready".into()
    } else {
        format!("its phase is {phase}")
    }
}

/// The container port `port` means in `pod`: a number as it is, a name looked up in its
/// containers' ports (then its init containers', as kubectl looks).
fn container_port(pod: &Pod, port: &PortRef) -> Result<u16, ForwardError> {
    let name = match port {
        PortRef::Number(n) => return Ok(*n),
        PortRef::Name(name) => name,
    };
    let spec = pod.spec.clone().unwrap_or_default();
    let found = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .flat_map(|c| c.ports.iter().flatten())
        .find(|p| p.name.as_deref() == Some(name.as_str()))
        .and_then(|p| u16::try_from(p.container_port).ok());
    found.ok_or_else(|| ForwardError::NoContainerPort {
        pod: name_of(pod),
        namespace: pod.metadata.namespace.clone().unwrap_or_default(),
        port: name.clone(),
    })
}

fn name_of(pod: &Pod) -> String {
    pod.metadata.name.clone().unwrap_or_default()
}

/// A label selector as the API's `labelSelector` parameter writes it.
pub fn label_selector(selector: &LabelSelector) -> String {
    let mut parts: Vec<String> = selector
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for e in selector.match_expressions.iter().flatten() {
        let values = e.values.clone().unwrap_or_default().join(",");
        parts.push(match e.operator.as_str() {
            "In" => format!("{} in ({values})", e.key),
            "NotIn" => format!("{} notin ({values})", e.key),
            "Exists" => e.key.clone(),
            "DoesNotExist" => format!("!{}", e.key),
            other => format!("{} {other} ({values})", e.key),
        });
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{Container, ContainerPort, PodCondition, PodSpec, PodStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
        LabelSelectorRequirement, ObjectMeta, Time,
    };

    use super::*;

    fn time(text: &str) -> Time {
        Time(text.parse().unwrap())
    }

    fn pod(name: &str, phase: &str, ready_since: Option<&str>, created: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                creation_timestamp: Some(time(created)),
                ..ObjectMeta::default()
            },
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "app".into(),
                    ports: Some(vec![ContainerPort {
                        name: Some("http".into()),
                        container_port: 8080,
                        ..ContainerPort::default()
                    }]),
                    ..Container::default()
                }],
                ..PodSpec::default()
            }),
            status: Some(PodStatus {
                phase: Some(phase.into()),
                conditions: ready_since.map(|t| {
                    vec![PodCondition {
                        type_: "Ready".into(),
                        status: "True".into(),
                        last_transition_time: Some(time(t)),
                        ..PodCondition::default()
                    }]
                }),
                ..PodStatus::default()
            }),
        }
    }

    #[test]
    fn only_running_ready_pods_not_being_deleted_are_usable() {
        let ready = pod(
            "a",
            "Running",
            Some("2024-01-01T00:00:00Z"),
            "2024-01-01T00:00:00Z",
        );
        assert!(usable(&ready));
        assert!(!usable(&pod("b", "Running", None, "2024-01-01T00:00:00Z")));
        assert!(!usable(&pod("c", "Pending", None, "2024-01-01T00:00:00Z")));
        let mut deleting = ready.clone();
        deleting.metadata.deletion_timestamp = Some(time("2024-01-02T00:00:00Z"));
        assert!(!usable(&deleting));
        assert_eq!(describe_state(&deleting), "it is being deleted");
    }

    #[test]
    fn the_pod_ready_longest_comes_first_then_the_oldest() {
        let mut pods = [
            pod(
                "new",
                "Running",
                Some("2024-01-03T00:00:00Z"),
                "2024-01-01T00:00:00Z",
            ),
            pod(
                "long",
                "Running",
                Some("2024-01-01T00:00:00Z"),
                "2024-01-02T00:00:00Z",
            ),
            pod(
                "young",
                "Running",
                Some("2024-01-03T00:00:00Z"),
                "2024-01-02T00:00:00Z",
            ),
        ];
        pods.sort_by_key(rank);
        let names: Vec<String> = pods.iter().map(name_of).collect();
        assert_eq!(names, ["long", "new", "young"]);
    }

    #[test]
    fn named_ports_are_looked_up_in_the_pod() {
        let p = pod("a", "Running", None, "2024-01-01T00:00:00Z");
        assert_eq!(
            container_port(&p, &PortRef::Name("http".into())).unwrap(),
            8080
        );
        assert_eq!(container_port(&p, &PortRef::Number(9)).unwrap(), 9);
        let error = container_port(&p, &PortRef::Name("admin".into())).unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with("has no container port named admin"),
            "{error}"
        );
    }

    #[test]
    fn label_selectors_are_written_as_the_api_reads_them() {
        let selector = LabelSelector {
            match_labels: Some([("app".to_string(), "web".to_string())].into()),
            match_expressions: Some(vec![
                LabelSelectorRequirement {
                    key: "tier".into(),
                    operator: "In".into(),
                    values: Some(vec!["a".into(), "b".into()]),
                },
                LabelSelectorRequirement {
                    key: "canary".into(),
                    operator: "DoesNotExist".into(),
                    values: None,
                },
            ]),
        };
        assert_eq!(label_selector(&selector), "app=web,tier in (a,b),!canary");
    }
}
