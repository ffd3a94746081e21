//! Which API resource serves an `apiVersion` and `kind`: its plural name, whether it is
//! namespaced, and its verbs. Kept per group-version, fetched when first needed, and
//! fetched again when a kind is missing from what is kept (a CRD installed since), so
//! installing CRDs needs no explicit refresh; [`Discovery::invalidate`] forgets all.

use std::collections::HashMap;
use std::sync::Mutex;

use kube::discovery::ApiResource;

/// One served resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// kube-rs's description (group, version, apiVersion, kind, plural).
    pub api: ApiResource,
    pub namespaced: bool,
    /// `get`, `list`, `watch`, `create`, `patch`, `delete`...
    pub verbs: Vec<String>,
    /// Subresources it serves (`status`, `scale`...).
    pub subresources: Vec<String>,
}

impl Resource {
    pub fn supports(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }
}

/// Why a kind could not be mapped.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    /// The API server does not serve this kind in this version.
    #[error("no matches for kind \"{kind}\" in version \"{api_version}\"")]
    NoMatch { api_version: String, kind: String },
    /// The discovery request failed.
    #[error(
        "cannot list the resources of {api_version}: {}",
        crate::kube_error::describe(source)
    )]
    Request {
        api_version: String,
        #[source]
        source: kube::Error,
    },
}

impl DiscoveryError {
    /// The kind is not served (as opposed to the cluster not answering).
    pub fn is_no_match(&self) -> bool {
        matches!(self, DiscoveryError::NoMatch { .. })
    }
}

/// An object whose kind could not be mapped, named as helm names it.
#[derive(Debug, thiserror::Error)]
#[error(
    "resource mapping not found for name: \"{name}\" namespace: \"{namespace}\" from \"{source_path}\": \
     {error}\nensure CRDs are installed first"
)]
pub struct MappingError {
    pub name: String,
    pub namespace: String,
    pub source_path: String,
    #[source]
    pub error: DiscoveryError,
}

/// What one group-version serves, or that it is not served at all.
type Served = Option<Vec<Resource>>;

/// The cache of discovered resources, shared by everything using one client.
pub struct Discovery {
    client: kube::Client,
    by_group_version: Mutex<HashMap<String, Served>>,
    /// OpenAPI v3 documents by group-version, for client-side merges (None: the server
    /// has none for it).
    openapi: Mutex<HashMap<String, Option<std::sync::Arc<serde_json::Value>>>>,
}

impl Discovery {
    pub fn new(client: kube::Client) -> Discovery {
        Discovery {
            client,
            by_group_version: Mutex::new(HashMap::new()),
            openapi: Mutex::new(HashMap::new()),
        }
    }

    /// The server's OpenAPI v3 document of a group-version (`v1`, `apps/v1`), fetched once
    /// per process; None when the server does not publish one (then client-side merges
    /// replace lists whole).
    pub async fn openapi(&self, api_version: &str) -> Option<std::sync::Arc<serde_json::Value>> {
        let cached = self
            .openapi
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(api_version)
            .cloned();
        if let Some(document) = cached {
            return document;
        }
        let path = if api_version.contains('/') {
            format!("/openapi/v3/apis/{api_version}")
        } else {
            format!("/openapi/v3/api/{api_version}")
        };
        let document = match http::Request::get(path).body(Vec::new()) {
            Ok(request) => self
                .client
                .request::<serde_json::Value>(request)
                .await
                .ok()
                .map(std::sync::Arc::new),
            Err(_) => None,
        };
        self.openapi
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(api_version.to_string(), document.clone());
        document
    }

    /// Forgets everything discovered, so the next lookups ask the server.
    pub fn invalidate(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Served>> {
        // A panic elsewhere while holding the lock leaves a map that is still valid.
        self.by_group_version
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The resource serving `kind` in `api_version` (`v1`, `apps/v1`).
    pub async fn resolve(&self, api_version: &str, kind: &str) -> Result<Resource, DiscoveryError> {
        let cached = self.lock().get(api_version).cloned();
        if let Some(Some(served)) = &cached
            && let Some(found) = find(served, kind)
        {
            return Ok(found);
        }
        // Not known yet, or known without this kind: the group may have gained it since.
        let served = self.fetch(api_version).await?;
        self.lock().insert(api_version.to_string(), served.clone());
        served
            .as_deref()
            .and_then(|s| find(s, kind))
            .ok_or_else(|| DiscoveryError::NoMatch {
                api_version: api_version.to_string(),
                kind: kind.to_string(),
            })
    }

    /// The resource of a manifest object, or helm's "resource mapping not found" error
    /// naming it.
    pub async fn resolve_object(
        &self,
        object: &crate::manifest::Object,
    ) -> Result<Resource, MappingError> {
        self.resolve(object.api_version(), object.kind())
            .await
            .map_err(|error| MappingError {
                name: object.name().to_string(),
                namespace: object.namespace().unwrap_or("").to_string(),
                source_path: object.source.clone().unwrap_or_default(),
                error,
            })
    }

    async fn fetch(&self, api_version: &str) -> Result<Served, DiscoveryError> {
        let result = if api_version.contains('/') {
            self.client.list_api_group_resources(api_version).await
        } else {
            self.client.list_core_api_resources(api_version).await
        };
        match result {
            Ok(list) => Ok(Some(parse(api_version, &list))),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
            Err(source) => Err(DiscoveryError::Request {
                api_version: api_version.to_string(),
                source,
            }),
        }
    }
}

fn find(served: &[Resource], kind: &str) -> Option<Resource> {
    served.iter().find(|r| r.api.kind == kind).cloned()
}

/// The resources of a discovery document; subresources are attached to their parent.
fn parse(
    api_version: &str,
    list: &k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResourceList,
) -> Vec<Resource> {
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    };
    let mut resources: Vec<Resource> = list
        .resources
        .iter()
        .filter(|r| !r.name.contains('/'))
        .map(|r| Resource {
            api: ApiResource {
                group: r.group.clone().unwrap_or_else(|| group.to_string()),
                version: r.version.clone().unwrap_or_else(|| version.to_string()),
                api_version: api_version.to_string(),
                kind: r.kind.clone(),
                plural: r.name.clone(),
            },
            namespaced: r.namespaced,
            verbs: r.verbs.clone(),
            subresources: Vec::new(),
        })
        .collect();
    for r in &list.resources {
        if let Some((parent, sub)) = r.name.split_once('/')
            && let Some(p) = resources.iter_mut().find(|p| p.api.plural == parent)
        {
            p.subresources.push(sub.to_string());
        }
    }
    resources
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIResource, APIResourceList};

    fn resource(name: &str, kind: &str, namespaced: bool) -> APIResource {
        APIResource {
            name: name.into(),
            kind: kind.into(),
            namespaced,
            verbs: vec!["get".into(), "patch".into()],
            ..APIResource::default()
        }
    }

    #[test]
    fn discovery_documents_map_kinds_to_plurals_and_scope() {
        let list = APIResourceList {
            group_version: "apps/v1".into(),
            resources: vec![
                resource("deployments", "Deployment", true),
                resource("deployments/status", "Deployment", true),
                resource("deployments/scale", "Scale", true),
                resource("controllerrevisions", "ControllerRevision", true),
            ],
        };
        let served = parse("apps/v1", &list);
        assert_eq!(served.len(), 2);
        let deployment = find(&served, "Deployment").unwrap();
        assert_eq!(deployment.api.plural, "deployments");
        assert_eq!(deployment.api.group, "apps");
        assert_eq!(deployment.api.version, "v1");
        assert!(deployment.namespaced);
        assert!(deployment.supports("patch"));
        assert!(!deployment.supports("watch"));
        assert_eq!(deployment.subresources, ["status", "scale"]);
        assert!(find(&served, "Scale").is_none());
    }

    #[test]
    fn mapping_errors_read_like_helms() {
        let error = MappingError {
            name: "x".into(),
            namespace: "ns".into(),
            source_path: "c/templates/x.yaml".into(),
            error: DiscoveryError::NoMatch {
                api_version: "example.com/v1".into(),
                kind: "Widget".into(),
            },
        };
        assert_eq!(
            error.to_string(),
            "resource mapping not found for name: \"x\" namespace: \"ns\" from \
             \"c/templates/x.yaml\": no matches for kind \"Widget\" in version \
             \"example.com/v1\"\nensure CRDs are installed first"
        );
    }
}
