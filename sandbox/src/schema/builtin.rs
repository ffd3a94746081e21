//! The built-in types' schemas: the structure and descriptions k8s-openapi's schemars
//! schemas give, completed with the extensions of the API server's OpenAPI v3 that they
//! lack (list types and keys, patch strategies and merge keys, map types, the defaults of
//! list keys) from [`super::facts`], and written as the API server writes them (a
//! reference with a description beside it becomes `allOf: [{$ref}]`).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use k8s_openapi::schemars::generate::{SchemaGenerator, SchemaSettings};
use k8s_openapi::schemars::{JsonSchema, Schema};
use serde_json::{Map, Value, json};

use super::facts;

/// A root type: its definition's name and how to generate its schemas.
type Root = (
    fn() -> Cow<'static, str>,
    fn(&mut SchemaGenerator) -> Schema,
);

macro_rules! roots {
    ($($path:ty),* $(,)?) => {
        &[ $( (<$path as JsonSchema>::schema_name, SchemaGenerator::subschema_for::<$path>) ),* ]
    };
}

use k8s_openapi::api::{
    admissionregistration::v1 as admission, apps::v1 as apps, authentication::v1 as authn,
    authorization::v1 as authz, autoscaling::v1 as as1, autoscaling::v2 as as2, batch::v1 as batch,
    certificates::v1 as certs, coordination::v1 as coord, core::v1 as core, discovery::v1 as disc,
    events::v1 as events, flowcontrol::v1 as flow, networking::v1 as net, node::v1 as node,
    policy::v1 as policy, rbac::v1 as rbac, resource::v1 as dra, scheduling::v1 as sched,
    storage::v1 as storage,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as ext;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1 as reg;

/// The served built-in types, and the meta types documents and custom resources use.
const ROOTS: &[Root] = roots!(
    core::Binding,
    core::ComponentStatus,
    core::ConfigMap,
    core::Endpoints,
    core::Event,
    core::LimitRange,
    core::Namespace,
    core::Node,
    core::PersistentVolumeClaim,
    core::PersistentVolume,
    core::Pod,
    core::PodTemplate,
    core::ReplicationController,
    core::ResourceQuota,
    core::Secret,
    core::ServiceAccount,
    core::Service,
    admission::MutatingWebhookConfiguration,
    admission::ValidatingAdmissionPolicy,
    admission::ValidatingAdmissionPolicyBinding,
    admission::ValidatingWebhookConfiguration,
    ext::CustomResourceDefinition,
    reg::APIService,
    apps::ControllerRevision,
    apps::DaemonSet,
    apps::Deployment,
    apps::ReplicaSet,
    apps::StatefulSet,
    authn::SelfSubjectReview,
    authn::TokenReview,
    authz::LocalSubjectAccessReview,
    authz::SelfSubjectAccessReview,
    authz::SelfSubjectRulesReview,
    authz::SubjectAccessReview,
    as2::HorizontalPodAutoscaler,
    as1::HorizontalPodAutoscaler,
    as1::Scale,
    batch::CronJob,
    batch::Job,
    certs::CertificateSigningRequest,
    coord::Lease,
    disc::EndpointSlice,
    events::Event,
    flow::FlowSchema,
    flow::PriorityLevelConfiguration,
    net::IngressClass,
    net::Ingress,
    net::IPAddress,
    net::NetworkPolicy,
    net::ServiceCIDR,
    node::RuntimeClass,
    policy::PodDisruptionBudget,
    policy::Eviction,
    rbac::ClusterRoleBinding,
    rbac::ClusterRole,
    rbac::RoleBinding,
    rbac::Role,
    dra::DeviceClass,
    dra::ResourceClaim,
    dra::ResourceClaimTemplate,
    dra::ResourceSlice,
    sched::PriorityClass,
    storage::CSIDriver,
    storage::CSINode,
    storage::CSIStorageCapacity,
    storage::StorageClass,
    storage::VolumeAttachment,
    storage::VolumeAttributesClass,
    meta::ObjectMeta,
    meta::Status,
    meta::DeleteOptions,
    meta::ListMeta,
);

/// The definitions a root type reaches (itself included), built on first need: one type's
/// are a fraction of a millisecond to build, all of them tens.
pub(super) fn for_root(name: &str) -> Option<&'static Map<String, Value>> {
    static BUILT: OnceLock<Vec<OnceLock<Map<String, Value>>>> = OnceLock::new();
    let built = BUILT.get_or_init(|| ROOTS.iter().map(|_| OnceLock::new()).collect());
    let i = ROOTS
        .iter()
        .position(|(root_name, _)| root_name() == name)?;
    Some(built[i].get_or_init(|| build(&[ROOTS[i]])))
}

/// The names of every root type.
#[cfg(test)]
pub(super) fn root_names() -> impl Iterator<Item = Cow<'static, str>> {
    ROOTS.iter().map(|(name, _)| name())
}

/// Builds the definitions the given roots reach, by name.
fn build(roots: &[Root]) -> Map<String, Value> {
    let mut generator = SchemaGenerator::new(SchemaSettings::default().with(|s| {
        s.definitions_path = "/components/schemas".into();
        s.meta_schema = None;
    }));
    for (_, generate) in roots {
        generate(&mut generator);
    }
    let mut defs = generator.take_definitions(false);
    complete(&mut defs);
    defs
}

/// Every definition of every root.
#[cfg(test)]
pub(super) fn build_all() -> Map<String, Value> {
    build(ROOTS)
}

type FactIndex = HashMap<(&'static str, &'static str), &'static facts::FieldFact>;

/// Adds what the schemars schemas lack and rewrites references as the API server does.
fn complete(defs: &mut Map<String, Value>) {
    let index: FactIndex = facts::FIELDS.iter().map(|f| ((f.0, f.1), f)).collect();
    let defaults: HashMap<(&str, &str), &str> = facts::KEY_DEFAULTS
        .iter()
        .map(|(d, f, v)| ((*d, *f), *v))
        .collect();
    for (name, schema) in defs.iter_mut() {
        if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            for (field, prop) in props.iter_mut() {
                wrap_references(prop);
                let Some(m) = prop.as_object_mut() else {
                    continue;
                };
                if let Some(&&(_, _, strategy, key, list_type, keys, map_type)) =
                    index.get(&(name.as_str(), field.as_str()))
                {
                    if !key.is_empty() {
                        m.insert("x-kubernetes-patch-merge-key".into(), json!(key));
                    }
                    if !strategy.is_empty() {
                        m.insert("x-kubernetes-patch-strategy".into(), json!(strategy));
                    }
                    if !keys.is_empty() {
                        m.insert("x-kubernetes-list-map-keys".into(), json!(keys));
                    }
                    if !list_type.is_empty() {
                        m.insert("x-kubernetes-list-type".into(), json!(list_type));
                    }
                    if !map_type.is_empty() {
                        m.insert("x-kubernetes-map-type".into(), json!(map_type));
                    }
                }
                if let Some(default) = defaults.get(&(name.as_str(), field.as_str()))
                    && let Ok(v) = serde_json::from_str::<Value>(default)
                {
                    m.insert("default".into(), v);
                }
            }
        }
        if facts::ATOMIC_STRUCTS.contains(&name.as_str())
            && let Some(m) = schema.as_object_mut()
        {
            m.insert("x-kubernetes-map-type".into(), json!("atomic"));
        }
    }
    // The two types that are not what their Go structs look like, as the API server's
    // OpenAPI v3 describes them.
    if let Some(Value::Object(m)) = defs.get_mut("io.k8s.apimachinery.pkg.util.intstr.IntOrString")
    {
        m.shift_remove("x-kubernetes-int-or-string");
        m.insert("format".into(), json!("int-or-string"));
        m.insert(
            "oneOf".into(),
            json!([{"type": "integer"}, {"type": "string"}]),
        );
    }
    if let Some(Value::Object(m)) = defs.get_mut("io.k8s.apimachinery.pkg.api.resource.Quantity") {
        m.shift_remove("x-kubernetes-int-or-string");
        m.insert(
            "oneOf".into(),
            json!([{"type": "string"}, {"type": "number"}]),
        );
    }
}

/// `{"$ref": R, "description": D}` → `{"allOf": [{"$ref": R}], "description": D}`, in
/// a schema and the schemas of its items and values.
fn wrap_references(schema: &mut Value) {
    let Value::Object(m) = schema else { return };
    if m.len() > 1
        && let Some(r) = m.shift_remove("$ref")
    {
        m.insert("allOf".into(), json!([{ "$ref": r }]));
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = m.get_mut(key) {
            wrap_references(child);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fact_names_a_field_the_schemas_have() {
        let defs = build_all();
        let mut missing = Vec::new();
        for (def, field, ..) in facts::FIELDS {
            // Types the sandbox does not serve are not built.
            let Some(schema) = defs.get(*def) else {
                continue;
            };
            if schema["properties"].get(*field).is_none() {
                missing.push(format!("{def}.{field}"));
            }
        }
        assert!(missing.is_empty(), "{missing:?}");
    }

    #[test]
    fn containers_carry_their_merge_metadata() {
        let defs = build_all();
        let containers = &defs["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
        assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
        assert_eq!(containers["x-kubernetes-patch-strategy"], "merge");
        assert_eq!(containers["x-kubernetes-list-type"], "map");
        let selector = &defs["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["selector"];
        assert!(selector["allOf"][0]["$ref"].is_string(), "{selector}");
        assert_eq!(
            defs["io.k8s.api.core.v1.ContainerPort"]["properties"]["protocol"]["default"],
            "TCP"
        );
        assert_eq!(
            defs["io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"]["x-kubernetes-map-type"],
            "atomic"
        );
    }
}
