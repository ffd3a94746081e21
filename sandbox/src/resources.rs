//! The resource types the sandbox serves: the built-in ones charts use, and the ones
//! CustomResourceDefinitions add once they are Established.
//!
//! The names, short names, verbs, categories and subresources are what a real API server
//! of Kubernetes 1.34 reports in discovery, because kubectl resolves `deploy`, `all` and
//! `po/x` from them.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

/// One resource (a plural under a group) and the versions it is served at.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceDef {
    /// `""` for the core group.
    pub group: String,
    /// Served versions; the first is the preferred one and the one objects are stored at.
    pub versions: Vec<String>,
    pub kind: String,
    pub plural: String,
    pub singular: String,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub namespaced: bool,
    pub verbs: Vec<String>,
    pub subresources: Vec<String>,
    /// Set for types a CustomResourceDefinition defines.
    pub custom: Option<Arc<CustomInfo>>,
}

/// What a CustomResourceDefinition says beyond names: schemas and columns per version.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CustomInfo {
    /// The CRD's name (`plural.group`).
    pub crd_name: String,
    /// `openAPIV3Schema` per served version.
    pub schemas: HashMap<String, Value>,
    /// `additionalPrinterColumns` per served version.
    pub columns: HashMap<String, Vec<Value>>,
    /// Versions with a status subresource.
    pub status: Vec<String>,
    /// Versions with a scale subresource, with its paths.
    pub scale: HashMap<String, Value>,
}

impl ResourceDef {
    /// `apps/v1`, or `v1` for the core group.
    pub fn api_version(&self, version: &str) -> String {
        if self.group.is_empty() {
            version.to_string()
        } else {
            format!("{}/{}", self.group, version)
        }
    }

    /// The storage version's apiVersion.
    pub fn storage_api_version(&self) -> String {
        self.api_version(&self.versions[0])
    }

    /// `deployments.apps`, or `pods` for the core group: how errors name a resource.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// The key objects of this resource are stored under, whatever version they are
    /// served at.
    pub fn key(&self) -> String {
        format!("{}/{}", self.group, self.plural)
    }

    pub fn has_subresource(&self, name: &str) -> bool {
        self.subresources.iter().any(|s| s == name)
    }

    pub fn has_status(&self) -> bool {
        self.has_subresource("status")
    }

    pub fn serves(&self, version: &str) -> bool {
        self.versions.iter().any(|v| v == version)
    }

    pub fn allows(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    /// Whether writes to this resource count `metadata.generation` up on spec changes.
    pub fn tracks_generation(&self) -> bool {
        self.custom.is_some()
            || matches!(
                (self.group.as_str(), self.plural.as_str()),
                ("", "pods")
                    | ("", "replicationcontrollers")
                    | ("apps", _)
                    | ("batch", _)
                    | ("autoscaling", _)
                    | ("policy", "poddisruptionbudgets")
                    | ("networking.k8s.io", "networkpolicies")
                    | ("networking.k8s.io", "ingresses")
                    | ("apiextensions.k8s.io", _)
                    | ("admissionregistration.k8s.io", _)
            )
    }
}

const ALL: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
const NO_COLLECTION: &[&str] = &[
    "create", "delete", "get", "list", "patch", "update", "watch",
];
const CREATE: &[&str] = &["create"];
const READ: &[&str] = &["get", "list"];

struct Builtin {
    group: &'static str,
    versions: &'static [&'static str],
    kind: &'static str,
    plural: &'static str,
    short: &'static [&'static str],
    namespaced: bool,
    verbs: &'static [&'static str],
    sub: &'static [&'static str],
    categories: &'static [&'static str],
}

macro_rules! builtin {
    ($group:expr, [$($v:expr),+], $kind:expr, $plural:expr, [$($s:expr),*], $ns:expr, $verbs:expr, [$($sub:expr),*], [$($cat:expr),*]) => {
        Builtin {
            group: $group,
            versions: &[$($v),+],
            kind: $kind,
            plural: $plural,
            short: &[$($s),*],
            namespaced: $ns,
            verbs: $verbs,
            sub: &[$($sub),*],
            categories: &[$($cat),*],
        }
    };
}

const NS: bool = true;
const CLUSTER: bool = false;

#[rustfmt::skip]
const BUILTINS: &[Builtin] = &[
    builtin!("", ["v1"], "Binding", "bindings", [], NS, CREATE, [], []),
    builtin!("", ["v1"], "ComponentStatus", "componentstatuses", ["cs"], CLUSTER, READ, [], []),
    builtin!("", ["v1"], "ConfigMap", "configmaps", ["cm"], NS, ALL, [], []),
    builtin!("", ["v1"], "Endpoints", "endpoints", ["ep"], NS, ALL, [], []),
    builtin!("", ["v1"], "Event", "events", ["ev"], NS, ALL, [], []),
    builtin!("", ["v1"], "LimitRange", "limitranges", ["limits"], NS, ALL, [], []),
    builtin!("", ["v1"], "Namespace", "namespaces", ["ns"], CLUSTER, NO_COLLECTION, ["finalize", "status"], []),
    builtin!("", ["v1"], "Node", "nodes", ["no"], CLUSTER, ALL, ["proxy", "status"], []),
    builtin!("", ["v1"], "PersistentVolumeClaim", "persistentvolumeclaims", ["pvc"], NS, ALL, ["status"], []),
    builtin!("", ["v1"], "PersistentVolume", "persistentvolumes", ["pv"], CLUSTER, ALL, ["status"], []),
    builtin!("", ["v1"], "Pod", "pods", ["po"], NS, ALL, ["attach", "binding", "ephemeralcontainers", "eviction", "exec", "log", "portforward", "proxy", "resize", "status"], ["all"]),
    builtin!("", ["v1"], "PodTemplate", "podtemplates", [], NS, ALL, [], []),
    builtin!("", ["v1"], "ReplicationController", "replicationcontrollers", ["rc"], NS, ALL, ["scale", "status"], ["all"]),
    builtin!("", ["v1"], "ResourceQuota", "resourcequotas", ["quota"], NS, ALL, ["status"], []),
    builtin!("", ["v1"], "Secret", "secrets", [], NS, ALL, [], []),
    builtin!("", ["v1"], "ServiceAccount", "serviceaccounts", ["sa"], NS, ALL, ["token"], []),
    builtin!("", ["v1"], "Service", "services", ["svc"], NS, ALL, ["proxy", "status"], ["all"]),
    builtin!("admissionregistration.k8s.io", ["v1"], "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", [], CLUSTER, ALL, [], ["api-extensions"]),
    builtin!("admissionregistration.k8s.io", ["v1"], "ValidatingAdmissionPolicy", "validatingadmissionpolicies", [], CLUSTER, ALL, ["status"], ["api-extensions"]),
    builtin!("admissionregistration.k8s.io", ["v1"], "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings", [], CLUSTER, ALL, [], ["api-extensions"]),
    builtin!("admissionregistration.k8s.io", ["v1"], "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", [], CLUSTER, ALL, [], ["api-extensions"]),
    builtin!("apiextensions.k8s.io", ["v1"], "CustomResourceDefinition", "customresourcedefinitions", ["crd", "crds"], CLUSTER, ALL, ["status"], ["api-extensions"]),
    builtin!("apiregistration.k8s.io", ["v1"], "APIService", "apiservices", [], CLUSTER, ALL, ["status"], ["api-extensions"]),
    builtin!("apps", ["v1"], "ControllerRevision", "controllerrevisions", [], NS, ALL, [], []),
    builtin!("apps", ["v1"], "DaemonSet", "daemonsets", ["ds"], NS, ALL, ["status"], ["all"]),
    builtin!("apps", ["v1"], "Deployment", "deployments", ["deploy"], NS, ALL, ["scale", "status"], ["all"]),
    builtin!("apps", ["v1"], "ReplicaSet", "replicasets", ["rs"], NS, ALL, ["scale", "status"], ["all"]),
    builtin!("apps", ["v1"], "StatefulSet", "statefulsets", ["sts"], NS, ALL, ["scale", "status"], ["all"]),
    builtin!("authentication.k8s.io", ["v1"], "SelfSubjectReview", "selfsubjectreviews", [], CLUSTER, CREATE, [], []),
    builtin!("authentication.k8s.io", ["v1"], "TokenReview", "tokenreviews", [], CLUSTER, CREATE, [], []),
    builtin!("authorization.k8s.io", ["v1"], "LocalSubjectAccessReview", "localsubjectaccessreviews", [], NS, CREATE, [], []),
    builtin!("authorization.k8s.io", ["v1"], "SelfSubjectAccessReview", "selfsubjectaccessreviews", [], CLUSTER, CREATE, [], []),
    builtin!("authorization.k8s.io", ["v1"], "SelfSubjectRulesReview", "selfsubjectrulesreviews", [], CLUSTER, CREATE, [], []),
    builtin!("authorization.k8s.io", ["v1"], "SubjectAccessReview", "subjectaccessreviews", [], CLUSTER, CREATE, [], []),
    builtin!("autoscaling", ["v2", "v1"], "HorizontalPodAutoscaler", "horizontalpodautoscalers", ["hpa"], NS, ALL, ["status"], ["all"]),
    builtin!("batch", ["v1"], "CronJob", "cronjobs", ["cj"], NS, ALL, ["status"], ["all"]),
    builtin!("batch", ["v1"], "Job", "jobs", [], NS, ALL, ["status"], ["all"]),
    builtin!("certificates.k8s.io", ["v1"], "CertificateSigningRequest", "certificatesigningrequests", ["csr"], CLUSTER, ALL, ["approval", "status"], []),
    builtin!("coordination.k8s.io", ["v1"], "Lease", "leases", [], NS, ALL, [], []),
    builtin!("discovery.k8s.io", ["v1"], "EndpointSlice", "endpointslices", [], NS, ALL, [], []),
    builtin!("events.k8s.io", ["v1"], "Event", "events", ["ev"], NS, ALL, [], []),
    builtin!("flowcontrol.apiserver.k8s.io", ["v1"], "FlowSchema", "flowschemas", [], CLUSTER, ALL, ["status"], []),
    builtin!("flowcontrol.apiserver.k8s.io", ["v1"], "PriorityLevelConfiguration", "prioritylevelconfigurations", [], CLUSTER, ALL, ["status"], []),
    builtin!("networking.k8s.io", ["v1"], "IngressClass", "ingressclasses", [], CLUSTER, ALL, [], []),
    builtin!("networking.k8s.io", ["v1"], "Ingress", "ingresses", ["ing"], NS, ALL, ["status"], []),
    builtin!("networking.k8s.io", ["v1"], "IPAddress", "ipaddresses", ["ip"], CLUSTER, ALL, [], []),
    builtin!("networking.k8s.io", ["v1"], "NetworkPolicy", "networkpolicies", ["netpol"], NS, ALL, [], []),
    builtin!("networking.k8s.io", ["v1"], "ServiceCIDR", "servicecidrs", [], CLUSTER, ALL, ["status"], []),
    builtin!("node.k8s.io", ["v1"], "RuntimeClass", "runtimeclasses", [], CLUSTER, ALL, [], []),
    builtin!("policy", ["v1"], "PodDisruptionBudget", "poddisruptionbudgets", ["pdb"], NS, ALL, ["status"], []),
    builtin!("rbac.authorization.k8s.io", ["v1"], "ClusterRoleBinding", "clusterrolebindings", [], CLUSTER, ALL, [], []),
    builtin!("rbac.authorization.k8s.io", ["v1"], "ClusterRole", "clusterroles", [], CLUSTER, ALL, [], []),
    builtin!("rbac.authorization.k8s.io", ["v1"], "RoleBinding", "rolebindings", [], NS, ALL, [], []),
    builtin!("rbac.authorization.k8s.io", ["v1"], "Role", "roles", [], NS, ALL, [], []),
    builtin!("resource.k8s.io", ["v1"], "DeviceClass", "deviceclasses", [], CLUSTER, ALL, [], []),
    builtin!("resource.k8s.io", ["v1"], "ResourceClaim", "resourceclaims", [], NS, ALL, ["status"], []),
    builtin!("resource.k8s.io", ["v1"], "ResourceClaimTemplate", "resourceclaimtemplates", [], NS, ALL, [], []),
    builtin!("resource.k8s.io", ["v1"], "ResourceSlice", "resourceslices", [], CLUSTER, ALL, [], []),
    builtin!("scheduling.k8s.io", ["v1"], "PriorityClass", "priorityclasses", ["pc"], CLUSTER, ALL, [], []),
    builtin!("storage.k8s.io", ["v1"], "CSIDriver", "csidrivers", [], CLUSTER, ALL, [], []),
    builtin!("storage.k8s.io", ["v1"], "CSINode", "csinodes", [], CLUSTER, ALL, [], []),
    builtin!("storage.k8s.io", ["v1"], "CSIStorageCapacity", "csistoragecapacities", [], NS, ALL, [], []),
    builtin!("storage.k8s.io", ["v1"], "StorageClass", "storageclasses", ["sc"], CLUSTER, ALL, [], []),
    builtin!("storage.k8s.io", ["v1"], "VolumeAttachment", "volumeattachments", [], CLUSTER, ALL, ["status"], []),
    builtin!("storage.k8s.io", ["v1"], "VolumeAttributesClass", "volumeattributesclasses", ["vac"], CLUSTER, ALL, [], []),
];

/// Groups in the order a real API server lists them in `/apis` (which kubectl's
/// `api-resources` and shortname resolution follow).
pub const GROUP_ORDER: &[&str] = &[
    "",
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "resource.k8s.io",
];

/// The built-in resource types.
pub fn builtins() -> Vec<Arc<ResourceDef>> {
    BUILTINS
        .iter()
        .map(|b| {
            Arc::new(ResourceDef {
                group: b.group.to_string(),
                versions: b.versions.iter().map(|v| v.to_string()).collect(),
                kind: b.kind.to_string(),
                plural: b.plural.to_string(),
                singular: b.kind.to_ascii_lowercase(),
                short_names: b.short.iter().map(|s| s.to_string()).collect(),
                categories: b.categories.iter().map(|s| s.to_string()).collect(),
                namespaced: b.namespaced,
                verbs: b.verbs.iter().map(|s| s.to_string()).collect(),
                subresources: b.sub.iter().map(|s| s.to_string()).collect(),
                custom: None,
            })
        })
        .collect()
}

/// Every resource type being served, looked up the ways requests name them.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    defs: Vec<Arc<ResourceDef>>,
    /// `group/plural` → index in `defs`.
    by_key: HashMap<String, usize>,
}

impl Registry {
    pub fn with_builtins() -> Registry {
        let mut registry = Registry::default();
        for def in builtins() {
            registry.insert(def);
        }
        registry
    }

    /// Adds or replaces a resource type.
    pub fn insert(&mut self, def: Arc<ResourceDef>) {
        match self.by_key.get(&def.key()) {
            Some(&i) => self.defs[i] = def,
            None => {
                self.by_key.insert(def.key(), self.defs.len());
                self.defs.push(def);
            }
        }
    }

    /// Removes a resource type (a CRD being deleted).
    pub fn remove(&mut self, group: &str, plural: &str) -> Option<Arc<ResourceDef>> {
        let i = self.by_key.remove(&format!("{group}/{plural}"))?;
        let removed = self.defs.remove(i);
        for index in self.by_key.values_mut() {
            if *index > i {
                *index -= 1;
            }
        }
        Some(removed)
    }

    /// The resource `plural` of `group`, if one is served at `version`.
    pub fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceDef>> {
        let def = self
            .by_key
            .get(&format!("{group}/{plural}"))
            .map(|&i| &self.defs[i])?;
        def.serves(version).then(|| Arc::clone(def))
    }

    /// The resource stored under `key` (`group/plural`), at any version.
    pub fn by_key(&self, key: &str) -> Option<Arc<ResourceDef>> {
        self.by_key.get(key).map(|&i| Arc::clone(&self.defs[i]))
    }

    /// The resource for `kind` in `group` (any served version).
    pub fn by_kind(&self, group: &str, kind: &str) -> Option<Arc<ResourceDef>> {
        self.defs
            .iter()
            .find(|d| d.group == group && d.kind == kind && (d.group != "events.k8s.io"))
            .or_else(|| {
                self.defs
                    .iter()
                    .find(|d| d.group == group && d.kind == kind)
            })
            .cloned()
    }

    /// The resource for an object's `apiVersion` and `kind`.
    pub fn for_object(&self, api_version: &str, kind: &str) -> Option<Arc<ResourceDef>> {
        let (group, version) = split_api_version(api_version);
        self.by_kind(group, kind).filter(|d| d.serves(version))
    }

    pub fn all(&self) -> &[Arc<ResourceDef>] {
        &self.defs
    }

    /// Groups being served, in discovery order: the built-in ones first, then custom
    /// groups by name.
    pub fn groups(&self) -> Vec<String> {
        let mut groups: Vec<String> = GROUP_ORDER.iter().map(|g| g.to_string()).collect();
        let mut custom: Vec<String> = self
            .defs
            .iter()
            .filter(|d| !GROUP_ORDER.contains(&d.group.as_str()))
            .map(|d| d.group.clone())
            .collect();
        custom.sort();
        custom.dedup();
        groups.extend(custom);
        groups
    }

    /// The versions `group` is served at, preferred first.
    pub fn group_versions(&self, group: &str) -> Vec<String> {
        let mut versions: Vec<String> = Vec::new();
        for def in self.defs.iter().filter(|d| d.group == group) {
            for v in &def.versions {
                if !versions.contains(v) {
                    versions.push(v.clone());
                }
            }
        }
        versions.sort_by(|a, b| compare_versions(b, a));
        versions
    }

    /// The resources of `group` served at `version`.
    pub fn resources_at(&self, group: &str, version: &str) -> Vec<Arc<ResourceDef>> {
        let mut list: Vec<Arc<ResourceDef>> = self
            .defs
            .iter()
            .filter(|d| d.group == group && d.serves(version))
            .cloned()
            .collect();
        list.sort_by(|a, b| a.plural.cmp(&b.plural));
        list
    }
}

/// `("apps", "v1")` from `apps/v1`, `("", "v1")` from `v1`.
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.rsplit_once('/') {
        Some((group, version)) => (group, version),
        None => ("", api_version),
    }
}

/// Kubernetes' version priority: GA before beta before alpha, higher numbers first
/// within each; anything else after, by name. `Greater` means `a` sorts later.
pub fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    fn parse(v: &str) -> (u8, u32, u32, &str) {
        let Some(rest) = v.strip_prefix('v') else {
            return (0, 0, 0, v);
        };
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let Ok(major) = rest[..digits].parse::<u32>() else {
            return (0, 0, 0, v);
        };
        let tail = &rest[digits..];
        if tail.is_empty() {
            return (3, major, 0, "");
        }
        for (prefix, rank) in [("beta", 2u8), ("alpha", 1u8)] {
            if let Some(n) = tail.strip_prefix(prefix)
                && let Ok(minor) = n.parse::<u32>()
            {
                return (rank, major, minor, "");
            }
        }
        (0, 0, 0, v)
    }
    let (ra, ma, na, sa) = parse(a);
    let (rb, mb, nb, sb) = parse(b);
    (ra, ma, na).cmp(&(rb, mb, nb)).then_with(|| sb.cmp(sa))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_by_kubernetes_priority() {
        let mut v = vec!["v1beta1", "v1", "v2alpha1", "v2", "foo", "v1beta2", "v10"];
        v.sort_by(|a, b| compare_versions(b, a));
        assert_eq!(
            v,
            ["v10", "v2", "v1", "v1beta2", "v1beta1", "v2alpha1", "foo"]
        );
    }

    #[test]
    fn lookups_find_builtins() {
        let r = Registry::with_builtins();
        assert!(r.lookup("apps", "v1", "deployments").is_some());
        assert!(r.lookup("apps", "v2", "deployments").is_none());
        assert_eq!(r.for_object("v1", "Event").unwrap().group, "");
        assert_eq!(r.group_versions("autoscaling"), ["v2", "v1"]);
    }
}
