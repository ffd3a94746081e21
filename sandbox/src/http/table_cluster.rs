//! Rows of the remaining types with printers: nodes, namespaces, events, config maps,
//! secrets, service accounts, storage, RBAC bindings, admission configuration, flow
//! control, leases, priority and runtime classes, quotas, CSRs and API services.

use serde_json::{Value, json};

use super::table::{
    AGE, Cells, Column, NAME, Printer, age, col, human_duration, int, len, name, since, text,
    text_or, wide,
};
use crate::meta;

const fn named(name: &'static str, ty: &'static str, description: &'static str) -> Column {
    col(name, ty, description)
}

const NODE: &[Column] = &[
    NAME,
    named("Status", "string", "The status of the node"),
    named("Roles", "string", "The roles of the node"),
    AGE,
    named("Version", "string", "Kubelet Version reported by the node."),
    wide(
        "Internal-IP",
        "string",
        "List of addresses reachable to the node.",
    ),
    wide(
        "External-IP",
        "string",
        "List of addresses reachable to the node.",
    ),
    wide(
        "OS-Image",
        "string",
        "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
    ),
    wide(
        "Kernel-Version",
        "string",
        "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
    ),
    wide(
        "Container-Runtime",
        "string",
        "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
    ),
];

const NAMESPACE: &[Column] = &[
    NAME,
    named("Status", "string", "The status of the namespace"),
    AGE,
];

const EVENT: &[Column] = &[
    named(
        "Last Seen",
        "string",
        "The time at which the most recent occurrence of this event was recorded.",
    ),
    named("Type", "string", "Type of this event (Normal, Warning)."),
    named(
        "Reason",
        "string",
        "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
    ),
    named("Object", "string", "The object that this event is about."),
    wide(
        "Subobject",
        "string",
        "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.",
    ),
    wide("Source", "string", "The component reporting this event."),
    named(
        "Message",
        "string",
        "A human-readable description of the status of this operation.",
    ),
    wide(
        "First Seen",
        "string",
        "The time at which the event was first recorded.",
    ),
    wide(
        "Count",
        "string",
        "The number of times this event has occurred.",
    ),
    Column {
        priority: 1,
        ..NAME
    },
];

const CONFIG_MAP: &[Column] = &[
    NAME,
    named("Data", "string", "Data contains the configuration data."),
    AGE,
];

const SECRET: &[Column] = &[
    NAME,
    named(
        "Type",
        "string",
        "Used to facilitate programmatic handling of secret data.",
    ),
    named("Data", "string", "Data contains the secret data."),
    AGE,
];

const SERVICE_ACCOUNT: &[Column] = &[
    NAME,
    named(
        "Secrets",
        "string",
        "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.",
    ),
    AGE,
];

const PERSISTENT_VOLUME: &[Column] = &[
    NAME,
    named(
        "Capacity",
        "string",
        "capacity is the description of the persistent volume's resources and capacity.",
    ),
    named(
        "Access Modes",
        "string",
        "accessModes contains all ways the volume can be mounted.",
    ),
    named(
        "Reclaim Policy",
        "string",
        "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim.",
    ),
    named(
        "Status",
        "string",
        "phase indicates if a volume is available, bound to a claim, or released by a claim.",
    ),
    named(
        "Claim",
        "string",
        "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.",
    ),
    named("StorageClass", "string", "StorageClass of the pv"),
    named(
        "VolumeAttributesClass",
        "string",
        "VolumeAttributesClass of the pv",
    ),
    named(
        "Reason",
        "string",
        "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.",
    ),
    AGE,
    wide(
        "VolumeMode",
        "string",
        "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state.",
    ),
];

const PERSISTENT_VOLUME_CLAIM: &[Column] = &[
    NAME,
    named(
        "Status",
        "string",
        "phase represents the current phase of PersistentVolumeClaim.",
    ),
    named(
        "Volume",
        "string",
        "volumeName is the binding reference to the PersistentVolume backing this claim.",
    ),
    named(
        "Capacity",
        "string",
        "capacity represents the actual resources of the underlying volume.",
    ),
    named(
        "Access Modes",
        "string",
        "accessModes contains the actual access modes the volume backing the PVC has.",
    ),
    named("StorageClass", "string", "StorageClass of the pvc"),
    named(
        "VolumeAttributesClass",
        "string",
        "VolumeAttributesClass of the pvc",
    ),
    AGE,
    wide(
        "VolumeMode",
        "string",
        "volumeMode defines what type of volume is required by the claim.",
    ),
];

const STORAGE_CLASS: &[Column] = &[
    NAME,
    named(
        "Provisioner",
        "string",
        "provisioner indicates the type of the provisioner.",
    ),
    named(
        "ReclaimPolicy",
        "string",
        "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class.",
    ),
    named(
        "VolumeBindingMode",
        "string",
        "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.",
    ),
    named(
        "AllowVolumeExpansion",
        "string",
        "allowVolumeExpansion shows whether the storage class allow volume expand.",
    ),
    AGE,
];

const VOLUME_ATTRIBUTES_CLASS: &[Column] = &[
    NAME,
    named("DriverName", "string", "Name of the CSI driver"),
    AGE,
];

const ROLE_BINDING: &[Column] = &[
    NAME,
    named(
        "Role",
        "string",
        "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace.",
    ),
    AGE,
    wide("Users", "string", "Users in the roleBinding"),
    wide("Groups", "string", "Groups in the roleBinding"),
    wide(
        "ServiceAccounts",
        "string",
        "ServiceAccounts in the roleBinding",
    ),
];

const CLUSTER_ROLE_BINDING: &[Column] = &[
    NAME,
    named(
        "Role",
        "string",
        "RoleRef can only reference a ClusterRole in the global namespace.",
    ),
    AGE,
    wide("Users", "string", "Users in the clusterRoleBinding"),
    wide("Groups", "string", "Groups in the clusterRoleBinding"),
    wide(
        "ServiceAccounts",
        "string",
        "ServiceAccounts in the clusterRoleBinding",
    ),
];

const CSR: &[Column] = &[
    NAME,
    AGE,
    named(
        "SignerName",
        "string",
        "signerName indicates the requested signer, and is a qualified name.",
    ),
    named(
        "Requestor",
        "string",
        "request contains an x509 certificate signing request encoded in a \"CERTIFICATE REQUEST\" PEM block.",
    ),
    named(
        "RequestedDuration",
        "string",
        "expirationSeconds is the requested duration of validity of the issued certificate.",
    ),
    named("Condition", "string", "conditions applied to the request."),
];

const LEASE: &[Column] = &[
    NAME,
    named(
        "Holder",
        "string",
        "holderIdentity contains the identity of the holder of a current lease.",
    ),
    AGE,
];

const PRIORITY_CLASS: &[Column] = &[
    NAME,
    named(
        "Value",
        "integer",
        "value represents the integer value of this priority class.",
    ),
    named(
        "Global-Default",
        "boolean",
        "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class.",
    ),
    AGE,
    named(
        "PreemptionPolicy",
        "string",
        "preemptionPolicy is the Policy for preempting pods with lower priority.",
    ),
];

const RUNTIME_CLASS: &[Column] = &[
    NAME,
    named(
        "Handler",
        "string",
        "handler specifies the underlying runtime and configuration that the CRI implementation will use to handle pods of this class.",
    ),
    AGE,
];

const RESOURCE_QUOTA: &[Column] = &[
    NAME,
    named(
        "Request",
        "string",
        "Request represents a minimum amount of cpu/memory that a container may consume.",
    ),
    named(
        "Limit",
        "string",
        "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
    ),
    AGE,
];

const WEBHOOK_CONFIGURATION: &[Column] = &[
    NAME,
    named(
        "Webhooks",
        "integer",
        "Webhooks indicates the number of webhooks registered in this configuration",
    ),
    AGE,
];

const VALIDATING_ADMISSION_POLICY: &[Column] = &[
    NAME,
    named(
        "Validations",
        "integer",
        "Validations indicates the number of validation rules defined in this configuration",
    ),
    named(
        "ParamKind",
        "string",
        "ParamKind specifies the kind of resources used to parameterize this policy",
    ),
    AGE,
];

const VALIDATING_ADMISSION_POLICY_BINDING: &[Column] = &[
    NAME,
    named(
        "PolicyName",
        "string",
        "PolicyName references a ValidatingAdmissionPolicy name which the ValidatingAdmissionPolicyBinding binds to.",
    ),
    named(
        "ParamRef",
        "string",
        "ParamRef specifies the parameter resource used to configure the admission control policy.",
    ),
    AGE,
];

const FLOW_SCHEMA: &[Column] = &[
    NAME,
    named(
        "PriorityLevel",
        "string",
        "`name` is the name of the priority level configuration being referenced",
    ),
    named(
        "MatchingPrecedence",
        "string",
        "`matchingPrecedence` is used to choose among the FlowSchemas that match a given request.",
    ),
    named(
        "DistinguisherMethod",
        "string",
        "`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema.",
    ),
    AGE,
    named(
        "MissingPL",
        "string",
        "references a broken or non-existent PriorityLevelConfiguration",
    ),
];

const PRIORITY_LEVEL: &[Column] = &[
    NAME,
    named(
        "Type",
        "string",
        "`type` indicates whether this priority level is subject to limitation on request execution.",
    ),
    named(
        "NominalConcurrencyShares",
        "string",
        "`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level.",
    ),
    named(
        "Queues",
        "string",
        "`queues` is the number of queues for this priority level.",
    ),
    named(
        "HandSize",
        "string",
        "`handSize` is a small positive number that configures the shuffle sharding of requests into queues.",
    ),
    named(
        "QueueLengthLimit",
        "string",
        "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time.",
    ),
    AGE,
];

const CSI_DRIVER: &[Column] = &[
    NAME,
    named(
        "AttachRequired",
        "boolean",
        "attachRequired indicates this CSI volume driver requires an attach operation.",
    ),
    named(
        "PodInfoOnMount",
        "boolean",
        "podInfoOnMount indicates this CSI volume driver requires additional pod information during mount operations.",
    ),
    named(
        "StorageCapacity",
        "boolean",
        "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report.",
    ),
    named(
        "TokenRequests",
        "string",
        "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication.",
    ),
    named(
        "RequiresRepublish",
        "boolean",
        "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume.",
    ),
    named(
        "Modes",
        "string",
        "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports.",
    ),
    AGE,
];

const CSI_NODE: &[Column] = &[
    NAME,
    named(
        "Drivers",
        "integer",
        "Drivers indicates the number of CSI drivers registered on the node",
    ),
    AGE,
];

const CSI_STORAGE_CAPACITY: &[Column] = &[
    NAME,
    named(
        "StorageClassName",
        "string",
        "storageClassName represents the name of the StorageClass that the reported capacity applies to.",
    ),
    named(
        "Capacity",
        "string",
        "capacity is the value reported by the CSI driver in its GetCapacityResponse for a GetCapacityRequest with topology and parameters that match the previous fields.",
    ),
];

const VOLUME_ATTACHMENT: &[Column] = &[
    NAME,
    Column {
        format: "name",
        ..named(
            "Attacher",
            "string",
            "attacher indicates the name of the volume driver that MUST handle this request.",
        )
    },
    named(
        "PV",
        "string",
        "persistentVolumeName represents the name of the persistent volume to attach.",
    ),
    named(
        "Node",
        "string",
        "nodeName represents the node that the volume should be attached to.",
    ),
    named(
        "Attached",
        "boolean",
        "attached indicates the volume is successfully attached.",
    ),
    AGE,
];

const API_SERVICE: &[Column] = &[
    NAME,
    named(
        "Service",
        "string",
        "The reference to the service that hosts this API endpoint.",
    ),
    named("Available", "string", "Whether this service is available."),
    AGE,
];

const NAME_AGE: &[Column] = &[NAME, AGE];

const RESOURCE_CLAIM: &[Column] = &[
    NAME,
    named(
        "State",
        "string",
        "A summary of the current state (allocated, pending, reserved, etc.).",
    ),
    AGE,
];

const RESOURCE_SLICE: &[Column] = &[
    NAME,
    named(
        "Node",
        "string",
        "NodeName identifies the node which provides the resources in this pool.",
    ),
    named(
        "Driver",
        "string",
        "Driver identifies the DRA driver providing the capacity information.",
    ),
    named("Pool", "string", "Name is used to identify the pool."),
    AGE,
];

const COMPONENT_STATUS: &[Column] = &[
    NAME,
    named("Status", "string", "Status of the component conditions"),
    named("Message", "string", "Message of the component conditions"),
    named("Error", "string", "Error of the component conditions"),
];

pub fn printer(group: &str, plural: &str) -> Option<Printer> {
    let mut sort: Option<fn(&mut Vec<&Value>)> = None;
    let (columns, cells): (&'static [Column], Cells) = match (group, plural) {
        ("", "nodes") => (NODE, node),
        ("", "namespaces") => (NAMESPACE, namespace),
        ("", "events") | ("events.k8s.io", "events") => (EVENT, event),
        ("", "configmaps") => (CONFIG_MAP, config_map),
        ("", "secrets") => (SECRET, secret),
        ("", "serviceaccounts") => (SERVICE_ACCOUNT, service_account),
        ("", "persistentvolumes") => (PERSISTENT_VOLUME, persistent_volume),
        ("", "persistentvolumeclaims") => (PERSISTENT_VOLUME_CLAIM, persistent_volume_claim),
        ("", "resourcequotas") => (RESOURCE_QUOTA, resource_quota),
        ("", "componentstatuses") => (COMPONENT_STATUS, component_status),
        ("storage.k8s.io", "storageclasses") => (STORAGE_CLASS, storage_class),
        ("storage.k8s.io", "volumeattributesclasses") => {
            (VOLUME_ATTRIBUTES_CLASS, volume_attributes_class)
        }
        ("storage.k8s.io", "csidrivers") => (CSI_DRIVER, csi_driver),
        ("storage.k8s.io", "csinodes") => (CSI_NODE, csi_node),
        ("storage.k8s.io", "csistoragecapacities") => (CSI_STORAGE_CAPACITY, csi_storage_capacity),
        ("storage.k8s.io", "volumeattachments") => (VOLUME_ATTACHMENT, volume_attachment),
        ("rbac.authorization.k8s.io", "rolebindings") => (ROLE_BINDING, binding),
        ("rbac.authorization.k8s.io", "clusterrolebindings") => (CLUSTER_ROLE_BINDING, binding),
        ("certificates.k8s.io", "certificatesigningrequests") => (CSR, csr),
        ("coordination.k8s.io", "leases") => (LEASE, lease),
        ("scheduling.k8s.io", "priorityclasses") => (PRIORITY_CLASS, priority_class),
        ("node.k8s.io", "runtimeclasses") => (RUNTIME_CLASS, runtime_class),
        (
            "admissionregistration.k8s.io",
            "mutatingwebhookconfigurations" | "validatingwebhookconfigurations",
        ) => (WEBHOOK_CONFIGURATION, webhook_configuration),
        ("admissionregistration.k8s.io", "validatingadmissionpolicies") => {
            (VALIDATING_ADMISSION_POLICY, validating_admission_policy)
        }
        ("admissionregistration.k8s.io", "validatingadmissionpolicybindings") => (
            VALIDATING_ADMISSION_POLICY_BINDING,
            validating_admission_policy_binding,
        ),
        ("flowcontrol.apiserver.k8s.io", "flowschemas") => {
            sort = Some(sort_flow_schemas);
            (FLOW_SCHEMA, flow_schema)
        }
        ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations") => {
            (PRIORITY_LEVEL, priority_level)
        }
        ("apiregistration.k8s.io", "apiservices") => (API_SERVICE, api_service),
        ("resource.k8s.io", "deviceclasses" | "resourceclaimtemplates") => (NAME_AGE, name_age),
        ("resource.k8s.io", "resourceclaims") => (RESOURCE_CLAIM, resource_claim),
        ("resource.k8s.io", "resourceslices") => (RESOURCE_SLICE, resource_slice),
        _ => return None,
    };
    Some(Printer {
        columns,
        cells,
        sort,
    })
}

fn node(o: &Value) -> Vec<Value> {
    let (spec, status) = (&o["spec"], &o["status"]);
    let mut state = match status["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
    {
        Some(c) if c["status"] == "True" => "Ready".to_string(),
        Some(_) => "NotReady".to_string(),
        None => "Unknown".to_string(),
    };
    if spec["unschedulable"] == true {
        state.push_str(",SchedulingDisabled");
    }
    let mut roles: Vec<String> = meta::labels(o)
        .iter()
        .filter_map(|(k, v)| {
            if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
                (!role.is_empty()).then(|| role.to_string())
            } else if k == "kubernetes.io/role" {
                v.as_str().filter(|v| !v.is_empty()).map(String::from)
            } else {
                None
            }
        })
        .collect();
    roles.sort();
    roles.dedup();
    let roles = if roles.is_empty() {
        "<none>".to_string()
    } else {
        roles.join(",")
    };
    let address = |ty: &str| {
        status["addresses"]
            .as_array()
            .and_then(|a| a.iter().find(|x| x["type"] == ty))
            .map_or("<none>".to_string(), |x| text(&x["address"]))
    };
    let info = &status["nodeInfo"];
    vec![
        name(o),
        json!(state),
        json!(roles),
        age(o),
        json!(text(&info["kubeletVersion"])),
        json!(address("InternalIP")),
        json!(address("ExternalIP")),
        json!(text_or(&info["osImage"], "<unknown>")),
        json!(text_or(&info["kernelVersion"], "<unknown>")),
        json!(text_or(&info["containerRuntimeVersion"], "<unknown>")),
    ]
}

fn namespace(o: &Value) -> Vec<Value> {
    vec![name(o), json!(text(&o["status"]["phase"])), age(o)]
}

/// An event's fields under either API's names (core/v1 or events.k8s.io/v1).
fn either<'a>(o: &'a Value, core: &str, events: &str) -> &'a Value {
    if o[core].is_null() {
        &o[events]
    } else {
        &o[core]
    }
}

fn event_last_seen(o: &Value) -> String {
    let first = event_first_seen(o);
    let series = &o["series"];
    if series.is_object() {
        return since(&series["lastObservedTime"]);
    }
    let last = either(o, "lastTimestamp", "deprecatedLastTimestamp");
    if last.as_str().is_some_and(|s| !s.is_empty()) {
        since(last)
    } else {
        first
    }
}

fn event_first_seen(o: &Value) -> String {
    let first = either(o, "firstTimestamp", "deprecatedFirstTimestamp");
    if first.as_str().is_some_and(|s| !s.is_empty()) {
        since(first)
    } else {
        since(&o["eventTime"])
    }
}

fn event(o: &Value) -> Vec<Value> {
    let involved = either(o, "involvedObject", "regarding");
    let kind = text(&involved["kind"]).to_lowercase();
    let target = match involved["name"].as_str().filter(|n| !n.is_empty()) {
        Some(n) => format!("{kind}/{n}"),
        None => kind,
    };
    let count = if o["series"].is_object() {
        int(&o["series"]["count"])
    } else {
        match int(either(o, "count", "deprecatedCount")) {
            0 => 1,
            c => c,
        }
    };
    let source = either(o, "source", "deprecatedSource");
    let component = text_or(&source["component"], &text(&o["reportingController"]));
    let instance = text_or(&source["host"], &text(&o["reportingInstance"]));
    let source = if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    };
    vec![
        json!(event_last_seen(o)),
        json!(text(&o["type"])),
        json!(text(&o["reason"])),
        json!(target),
        json!(text(&involved["fieldPath"])),
        json!(source),
        json!(text(either(o, "message", "note")).trim()),
        json!(event_first_seen(o)),
        json!(count),
        name(o),
    ]
}

fn sort_flow_schemas(schemas: &mut Vec<&Value>) {
    schemas.sort_by(|a, b| {
        int(&a["spec"]["matchingPrecedence"])
            .cmp(&int(&b["spec"]["matchingPrecedence"]))
            .then_with(|| meta::name(a).cmp(meta::name(b)))
    });
}

fn count_keys(v: &Value) -> i64 {
    v.as_object().map_or(0, |m| m.len() as i64)
}

fn config_map(o: &Value) -> Vec<Value> {
    vec![
        name(o),
        json!(count_keys(&o["data"]) + count_keys(&o["binaryData"])),
        age(o),
    ]
}

fn secret(o: &Value) -> Vec<Value> {
    vec![
        name(o),
        json!(text(&o["type"])),
        json!(count_keys(&o["data"])),
        age(o),
    ]
}

fn service_account(o: &Value) -> Vec<Value> {
    vec![name(o), json!(len(&o["secrets"])), age(o)]
}

/// Access modes abbreviated, each once, in the API's order.
fn access_modes(v: &Value) -> String {
    let modes: Vec<&str> = v
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(m, _)| modes.contains(m))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

/// The storage class of a volume or claim: the beta annotation wins over the field.
fn class_of(o: &Value) -> String {
    meta::annotation(o, "volume.beta.kubernetes.io/storage-class")
        .map(String::from)
        .unwrap_or_else(|| text(&o["spec"]["storageClassName"]))
}

fn persistent_volume(o: &Value) -> Vec<Value> {
    let (spec, status) = (&o["spec"], &o["status"]);
    let claim = if spec["claimRef"].is_object() {
        format!(
            "{}/{}",
            text(&spec["claimRef"]["namespace"]),
            text(&spec["claimRef"]["name"])
        )
    } else {
        String::new()
    };
    let phase = if meta::is_deleting(o) {
        "Terminating".to_string()
    } else {
        text(&status["phase"])
    };
    vec![
        name(o),
        json!(quantity(&spec["capacity"]["storage"])),
        json!(access_modes(&spec["accessModes"])),
        json!(text(&spec["persistentVolumeReclaimPolicy"])),
        json!(phase),
        json!(claim),
        json!(class_of(o)),
        json!(text_or(&spec["volumeAttributesClassName"], "<unset>")),
        json!(text(&status["reason"])),
        age(o),
        json!(text_or(&spec["volumeMode"], "<unset>")),
    ]
}

/// A resource quantity as stored (the API server keeps them in canonical form).
fn quantity(v: &Value) -> String {
    match v {
        Value::Null => "0".into(),
        other => text(other),
    }
}

fn persistent_volume_claim(o: &Value) -> Vec<Value> {
    let (spec, status) = (&o["spec"], &o["status"]);
    let phase = if meta::is_deleting(o) {
        "Terminating".to_string()
    } else {
        text(&status["phase"])
    };
    let bound = spec["volumeName"].as_str().is_some_and(|v| !v.is_empty());
    let (capacity, modes) = if bound {
        (
            quantity(&status["capacity"]["storage"]),
            access_modes(&status["accessModes"]),
        )
    } else {
        (String::new(), String::new())
    };
    vec![
        name(o),
        json!(phase),
        json!(text(&spec["volumeName"])),
        json!(capacity),
        json!(modes),
        json!(class_of(o)),
        json!(text_or(&spec["volumeAttributesClassName"], "<unset>")),
        age(o),
        json!(text_or(&spec["volumeMode"], "<unset>")),
    ]
}

fn storage_class(o: &Value) -> Vec<Value> {
    let default = [
        "storageclass.kubernetes.io/is-default-class",
        "storageclass.beta.kubernetes.io/is-default-class",
    ]
    .iter()
    .any(|a| meta::annotation(o, a) == Some("true"));
    let shown = if default {
        format!("{} (default)", meta::name(o))
    } else {
        meta::name(o).to_string()
    };
    vec![
        json!(shown),
        json!(text(&o["provisioner"])),
        json!(text_or(&o["reclaimPolicy"], "Delete")),
        json!(text_or(&o["volumeBindingMode"], "Immediate")),
        json!(o["allowVolumeExpansion"].as_bool().unwrap_or(false)),
        age(o),
    ]
}

fn volume_attributes_class(o: &Value) -> Vec<Value> {
    vec![name(o), json!(text(&o["driverName"])), age(o)]
}

fn binding(o: &Value) -> Vec<Value> {
    let role = &o["roleRef"];
    let (mut users, mut groups, mut sas) = (Vec::new(), Vec::new(), Vec::new());
    for s in o["subjects"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        match s["kind"].as_str().unwrap_or("") {
            "ServiceAccount" => sas.push(format!("{}/{}", text(&s["namespace"]), text(&s["name"]))),
            "User" => users.push(text(&s["name"])),
            "Group" => groups.push(text(&s["name"])),
            _ => {}
        }
    }
    vec![
        name(o),
        json!(format!("{}/{}", text(&role["kind"]), text(&role["name"]))),
        age(o),
        json!(users.join(", ")),
        json!(groups.join(", ")),
        json!(sas.join(", ")),
    ]
}

fn csr(o: &Value) -> Vec<Value> {
    let (spec, status) = (&o["spec"], &o["status"]);
    let has = |ty: &str| {
        status["conditions"]
            .as_array()
            .is_some_and(|cs| cs.iter().any(|c| c["type"] == ty))
    };
    let mut condition = if has("Denied") {
        "Denied".to_string()
    } else if has("Approved") {
        "Approved".to_string()
    } else {
        "Pending".to_string()
    };
    if has("Failed") {
        condition.push_str(",Failed");
    }
    if status["certificate"]
        .as_str()
        .is_some_and(|c| !c.is_empty())
    {
        condition.push_str(",Issued");
    }
    let duration = match spec["expirationSeconds"].as_i64() {
        Some(s) => human_duration(s),
        None => "<none>".into(),
    };
    vec![
        name(o),
        age(o),
        json!(text_or(&spec["signerName"], "<none>")),
        json!(text(&spec["username"])),
        json!(duration),
        json!(condition),
    ]
}

fn lease(o: &Value) -> Vec<Value> {
    vec![name(o), json!(text(&o["spec"]["holderIdentity"])), age(o)]
}

fn priority_class(o: &Value) -> Vec<Value> {
    vec![
        name(o),
        json!(int(&o["value"])),
        json!(o["globalDefault"].as_bool().unwrap_or(false)),
        age(o),
        json!(text(&o["preemptionPolicy"])),
    ]
}

fn runtime_class(o: &Value) -> Vec<Value> {
    vec![name(o), json!(text(&o["handler"])), age(o)]
}

fn resource_quota(o: &Value) -> Vec<Value> {
    let status = &o["status"];
    let mut resources: Vec<&String> = status["hard"]
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    resources.sort();
    let (mut requests, mut limits) = (Vec::new(), Vec::new());
    for r in resources {
        let entry = format!(
            "{r}: {}/{}",
            quantity(&status["used"][r.as_str()]),
            quantity(&status["hard"][r.as_str()])
        );
        if r.split('.').next() == Some("limits") && r.contains('.') {
            limits.push(entry);
        } else {
            requests.push(entry);
        }
    }
    vec![
        name(o),
        json!(requests.join(", ")),
        json!(limits.join(", ")),
        age(o),
    ]
}

fn component_status(o: &Value) -> Vec<Value> {
    let healthy = o["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Healthy"));
    let (state, message, error) = match healthy {
        Some(c) => (
            match c["status"].as_str() {
                Some("True") => "Healthy",
                Some("False") => "Unhealthy",
                _ => "Unknown",
            },
            text(&c["message"]),
            text(&c["error"]),
        ),
        None => ("Unknown", String::new(), String::new()),
    };
    vec![name(o), json!(state), json!(message), json!(error)]
}

fn webhook_configuration(o: &Value) -> Vec<Value> {
    vec![name(o), json!(len(&o["webhooks"])), age(o)]
}

fn validating_admission_policy(o: &Value) -> Vec<Value> {
    let pk = &o["spec"]["paramKind"];
    let param_kind = if pk.is_object() {
        format!("{}/{}", text(&pk["apiVersion"]), text(&pk["kind"]))
    } else {
        "<unset>".to_string()
    };
    vec![
        name(o),
        json!(len(&o["spec"]["validations"])),
        json!(param_kind),
        age(o),
    ]
}

fn validating_admission_policy_binding(o: &Value) -> Vec<Value> {
    let pr = &o["spec"]["paramRef"];
    let param = match pr["name"].as_str().filter(|n| !n.is_empty()) {
        _ if !pr.is_object() => "<unset>".to_string(),
        // Whether the parameter is cluster-scoped cannot be told here: `*/name`.
        Some(n) => match pr["namespace"].as_str().filter(|ns| !ns.is_empty()) {
            Some(ns) => format!("{ns}/{n}"),
            None => format!("*/{n}"),
        },
        None if pr["selector"].is_object() => go_label_selector(&pr["selector"]),
        None => "<unset>".to_string(),
    };
    vec![
        name(o),
        json!(text(&o["spec"]["policyName"])),
        json!(param),
        age(o),
    ]
}

/// A `metav1.LabelSelector` as its generated Go `String()` prints it.
fn go_label_selector(sel: &Value) -> String {
    let mut labels: Vec<(String, String)> = sel["matchLabels"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), text(v))).collect())
        .unwrap_or_default();
    labels.sort();
    let labels: String = labels.iter().map(|(k, v)| format!("{k}: {v},")).collect();
    let exprs: String = sel["matchExpressions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|e| {
            let values: Vec<String> = e["values"]
                .as_array()
                .map(|a| a.iter().map(text).collect())
                .unwrap_or_default();
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                text(&e["key"]),
                text(&e["operator"]),
                values.join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}"
    )
}

fn flow_schema(o: &Value) -> Vec<Value> {
    let spec = &o["spec"];
    let dangling = o["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Dangling"))
        .map_or("?".to_string(), |c| text(&c["status"]));
    vec![
        name(o),
        json!(text(&spec["priorityLevelConfiguration"]["name"])),
        json!(int(&spec["matchingPrecedence"])),
        json!(text_or(&spec["distinguisherMethod"]["type"], "<none>")),
        age(o),
        json!(dangling),
    ]
}

fn priority_level(o: &Value) -> Vec<Value> {
    let spec = &o["spec"];
    let none = || json!("<none>");
    let limited = &spec["limited"];
    let (ncs, queues, hand, qll) = if limited.is_object() {
        let q = &limited["limitResponse"]["queuing"];
        let ncs = json!(int(&limited["nominalConcurrencyShares"]));
        if q.is_object() {
            (
                ncs,
                json!(int(&q["queues"])),
                json!(int(&q["handSize"])),
                json!(int(&q["queueLengthLimit"])),
            )
        } else {
            (ncs, none(), none(), none())
        }
    } else {
        (none(), none(), none(), none())
    };
    vec![
        name(o),
        json!(text(&spec["type"])),
        ncs,
        queues,
        hand,
        qll,
        age(o),
    ]
}

fn csi_driver(o: &Value) -> Vec<Value> {
    let spec = &o["spec"];
    let modes: Vec<String> = spec["volumeLifecycleModes"]
        .as_array()
        .map(|a| a.iter().map(text).collect())
        .unwrap_or_default();
    let tokens = match spec["tokenRequests"].as_array() {
        Some(t) => t
            .iter()
            .map(|r| text(&r["audience"]))
            .collect::<Vec<_>>()
            .join(","),
        None => "<unset>".to_string(),
    };
    vec![
        name(o),
        json!(spec["attachRequired"].as_bool().unwrap_or(true)),
        json!(spec["podInfoOnMount"].as_bool().unwrap_or(false)),
        json!(spec["storageCapacity"].as_bool().unwrap_or(false)),
        json!(tokens),
        json!(spec["requiresRepublish"].as_bool().unwrap_or(false)),
        json!(if modes.is_empty() {
            "<none>".to_string()
        } else {
            modes.join(",")
        }),
        age(o),
    ]
}

fn csi_node(o: &Value) -> Vec<Value> {
    vec![name(o), json!(len(&o["spec"]["drivers"])), age(o)]
}

fn csi_storage_capacity(o: &Value) -> Vec<Value> {
    vec![
        name(o),
        json!(text(&o["storageClassName"])),
        json!(text_or(&o["capacity"], "<unset>")),
    ]
}

fn volume_attachment(o: &Value) -> Vec<Value> {
    let spec = &o["spec"];
    vec![
        name(o),
        json!(text(&spec["attacher"])),
        json!(text(&spec["source"]["persistentVolumeName"])),
        json!(text(&spec["nodeName"])),
        json!(o["status"]["attached"].as_bool().unwrap_or(false)),
        age(o),
    ]
}

fn name_age(o: &Value) -> Vec<Value> {
    vec![name(o), age(o)]
}

fn resource_claim(o: &Value) -> Vec<Value> {
    let mut states = Vec::new();
    let deleting = meta::is_deleting(o);
    if deleting {
        states.push("deleted");
    }
    let status = &o["status"];
    if status["allocation"].is_null() {
        if !deleting {
            states.push("pending");
        }
    } else {
        states.push("allocated");
        if status["reservedFor"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
        {
            states.push("reserved");
        }
    }
    vec![name(o), json!(states.join(",")), age(o)]
}

fn resource_slice(o: &Value) -> Vec<Value> {
    let spec = &o["spec"];
    vec![
        name(o),
        json!(text(&spec["nodeName"])),
        json!(text(&spec["driver"])),
        json!(text(&spec["pool"]["name"])),
        age(o),
    ]
}

fn api_service(o: &Value) -> Vec<Value> {
    let svc = &o["spec"]["service"];
    let service = if svc.is_object() {
        format!("{}/{}", text(&svc["namespace"]), text(&svc["name"]))
    } else {
        "Local".to_string()
    };
    let available = match o["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Available"))
    {
        None => "Unknown".to_string(),
        Some(c) => {
            let status = text(&c["status"]);
            match c["reason"].as_str().filter(|r| !r.is_empty()) {
                Some(r) if status != "True" => format!("{status} ({r})"),
                _ => status,
            }
        }
    };
    vec![name(o), json!(service), json!(available), age(o)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_show_status_roles_and_addresses() {
        let n = json!({"metadata": {"name": "n", "labels": {
                "node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/control-plane": ""}},
            "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                "addresses": [{"type": "InternalIP", "address": "10.0.0.2"}],
                "nodeInfo": {"kubeletVersion": "v1.34.0"}}});
        let c = node(&n);
        assert_eq!(
            &c[1..3],
            &[
                json!("Ready,SchedulingDisabled"),
                json!("control-plane,worker")
            ]
        );
        assert_eq!(
            &c[4..8],
            &[
                json!("v1.34.0"),
                json!("10.0.0.2"),
                json!("<none>"),
                json!("<unknown>")
            ]
        );
    }

    #[test]
    fn events_show_object_source_and_count() {
        let e = json!({"metadata": {"name": "web.1"}, "type": "Normal", "reason": "Scheduled",
            "involvedObject": {"kind": "Pod", "name": "web"}, "message": " placed \n",
            "source": {"component": "default-scheduler"}, "count": 0,
            "firstTimestamp": "2024-01-01T00:00:00Z"});
        let c = event(&e);
        assert_eq!(
            &c[1..7],
            &[
                json!("Normal"),
                json!("Scheduled"),
                json!("pod/web"),
                json!(""),
                json!("default-scheduler"),
                json!("placed")
            ]
        );
        assert_eq!(c[0], c[7]);
        assert_eq!(c[8], 1);
        let new = json!({"metadata": {"name": "x"}, "regarding": {"kind": "Deployment", "name": "d"},
            "note": "n", "reportingController": "c", "reportingInstance": "i"});
        let c = event(&new);
        assert_eq!(
            (&c[3], &c[5], &c[6]),
            (&json!("deployment/d"), &json!("c, i"), &json!("n"))
        );
    }

    #[test]
    fn claims_and_volumes_abbreviate_access_modes() {
        assert_eq!(
            access_modes(&json!(["ReadWriteMany", "ReadWriteOnce"])),
            "RWO,RWX"
        );
        let pvc = json!({"metadata": {"name": "c"}, "spec": {"storageClassName": "standard",
            "volumeMode": "Filesystem"}, "status": {"phase": "Pending"}});
        let c = persistent_volume_claim(&pvc);
        assert_eq!(
            &c[1..7],
            &[
                json!("Pending"),
                json!(""),
                json!(""),
                json!(""),
                json!("standard"),
                json!("<unset>")
            ]
        );
    }

    #[test]
    fn policy_bindings_show_their_param_ref() {
        let b = |pr: Value| {
            validating_admission_policy_binding(&json!({"metadata": {"name": "b"},
                "spec": {"policyName": "p", "paramRef": pr}}))[2]
                .clone()
        };
        assert_eq!(b(json!({"name": "x", "namespace": "ns"})), "ns/x");
        assert_eq!(b(json!({"name": "x"})), "*/x");
        assert_eq!(
            b(json!({"selector": {"matchLabels": {"a": "b"}}})),
            "&LabelSelector{MatchLabels:map[string]string{a: b,},MatchExpressions:[]LabelSelectorRequirement{},}"
        );
        assert_eq!(b(Value::Null), "<unset>");
    }

    #[test]
    fn quotas_split_requests_and_limits() {
        let q = json!({"metadata": {"name": "q"}, "status": {
            "hard": {"pods": "10", "limits.cpu": "2", "requests.cpu": "1"},
            "used": {"pods": "1", "limits.cpu": "0", "requests.cpu": "0"}}});
        let c = resource_quota(&q);
        assert_eq!(c[1], "pods: 1/10, requests.cpu: 0/1");
        assert_eq!(c[2], "limits.cpu: 0/2");
    }
}
