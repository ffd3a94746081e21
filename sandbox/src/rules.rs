//! Per-type rules of the API server's registry strategies: what create resets, defaults,
//! validation of metadata and of the fields charts get wrong most, immutable fields, and
//! how each type is deleted.

use serde_json::{Map, Value, json};

use crate::meta;
use crate::resources::ResourceDef;
use crate::status::Cause;

fn is(def: &ResourceDef, group: &str, plural: &str) -> bool {
    def.group == group && def.plural == plural && def.custom.is_none()
}

/// What create resets: status starts empty (or at the type's first phase).
pub fn prepare_create(def: &ResourceDef, object: &mut Value) {
    let Some(map) = object.as_object_mut() else {
        return;
    };
    if def.has_status()
        || def.custom.is_some() && def.custom.as_ref().is_some_and(|c| !c.status.is_empty())
    {
        map.shift_remove("status");
    }
    if def.custom.is_some() {
        return;
    }
    match (def.group.as_str(), def.plural.as_str()) {
        ("", "pods") => {
            let qos = qos_class(map.get("spec").unwrap_or(&Value::Null));
            map.insert(
                "status".into(),
                json!({"phase": "Pending", "qosClass": qos}),
            );
        }
        ("", "namespaces") => {
            map.insert("status".into(), json!({"phase": "Active"}));
            map.insert("spec".into(), json!({"finalizers": ["kubernetes"]}));
        }
        ("", "persistentvolumeclaims") => {
            map.insert("status".into(), json!({"phase": "Pending"}));
            add_finalizer(object, crate::controllers::volumes::PVC_PROTECTION);
        }
        ("", "persistentvolumes") => {
            map.insert("status".into(), json!({"phase": "Pending"}));
            add_finalizer(object, crate::controllers::volumes::PV_PROTECTION);
        }
        ("", "services") => {
            map.insert("status".into(), json!({"loadBalancer": {}}));
        }
        ("apps", _) | ("batch", _) | ("autoscaling", _) | ("policy", _) => {
            map.insert("status".into(), json!({}));
        }
        ("apiextensions.k8s.io", "customresourcedefinitions") => {
            map.insert(
                "status".into(),
                json!({"acceptedNames": {"kind": "", "plural": ""}, "conditions": [], "storedVersions": []}),
            );
            add_finalizer(object, crate::controllers::crds::CLEANUP);
        }
        _ => {}
    }
}

/// Adds a finalizer the API server's admission puts on new objects of a type.
fn add_finalizer(object: &mut Value, name: &str) {
    let mut f = meta::finalizers(object);
    if !f.iter().any(|x| x == name) {
        f.push(name.to_string());
        meta::set_finalizers(object, &f);
    }
}

/// The pod's quality of service class, from its containers' requests and limits.
fn qos_class(spec: &Value) -> &'static str {
    let containers: Vec<&Value> = ["initContainers", "containers"]
        .iter()
        .flat_map(|l| spec[*l].as_array().into_iter().flatten())
        .collect();
    let mut any = false;
    let mut guaranteed = true;
    for c in &containers {
        let requests = c["resources"]["requests"].as_object();
        let limits = c["resources"]["limits"].as_object();
        for r in ["cpu", "memory"] {
            let req = requests.and_then(|m| m.get(r));
            let lim = limits.and_then(|m| m.get(r));
            if req.is_some() || lim.is_some() {
                any = true;
            }
            match (req, lim) {
                (_, None) => guaranteed = false,
                (Some(q), Some(l)) if q != l => guaranteed = false,
                _ => {}
            }
        }
    }
    if !any {
        "BestEffort"
    } else if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

fn obj<'a>(v: &'a mut Value, key: &str) -> &'a mut Map<String, Value> {
    if !v.get(key).is_some_and(Value::is_object) {
        v[key] = json!({});
    }
    v[key].as_object_mut().expect("an object")
}

fn default(m: &mut Map<String, Value>, key: &str, value: Value) {
    if m.get(key).is_none_or(Value::is_null) {
        m.insert(key.to_string(), value);
    }
}

/// The API server's defaults for the built-in types charts use most.
pub fn apply_defaults(def: &ResourceDef, _version: &str, object: &mut Value) {
    if def.custom.is_some() {
        crate::crd::apply_schema_defaults(def, object);
        return;
    }
    match (def.group.as_str(), def.plural.as_str()) {
        ("", "pods") => {
            let spec = obj(object, "spec");
            default_pod_spec(spec);
        }
        ("", "podtemplates") => {
            let template = obj(object, "template");
            default_pod_spec(obj_map(template, "spec"));
        }
        ("", "secrets") => {
            if let Some(m) = object.as_object_mut() {
                default(m, "type", json!("Opaque"));
                // stringData is write-only: decoding merges it into data (its keys win).
                if let Some(Value::Object(strings)) = m.shift_remove("stringData") {
                    use base64::Engine as _;
                    let data = match m.get_mut("data") {
                        Some(Value::Object(d)) => d,
                        _ => {
                            m.insert("data".into(), json!({}));
                            m["data"].as_object_mut().expect("an object")
                        }
                    };
                    for (k, v) in strings {
                        let text = v.as_str().unwrap_or("");
                        data.insert(
                            k,
                            json!(base64::engine::general_purpose::STANDARD.encode(text)),
                        );
                    }
                }
            }
        }
        ("", "services") => {
            let spec = obj(object, "spec");
            default(spec, "type", json!("ClusterIP"));
            let external_name = spec["type"] == "ExternalName";
            if !external_name {
                default(spec, "sessionAffinity", json!("None"));
                default(spec, "internalTrafficPolicy", json!("Cluster"));
                default(spec, "ipFamilyPolicy", json!("SingleStack"));
                default(spec, "ipFamilies", json!(["IPv4"]));
            }
            if matches!(spec["type"].as_str(), Some("NodePort" | "LoadBalancer")) {
                default(spec, "externalTrafficPolicy", json!("Cluster"));
            }
            if spec["type"] == "LoadBalancer" {
                default(spec, "allocateLoadBalancerNodePorts", json!(true));
            }
            if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
                for p in ports {
                    if let Some(p) = p.as_object_mut() {
                        default(p, "protocol", json!("TCP"));
                        if !external_name {
                            let port = p.get("port").cloned().unwrap_or(Value::Null);
                            default(p, "targetPort", port);
                        }
                    }
                }
            }
        }
        ("", "persistentvolumeclaims") => {
            let spec = obj(object, "spec");
            default(spec, "volumeMode", json!("Filesystem"));
            default(spec, "storageClassName", json!("standard"));
        }
        ("", "serviceaccounts") | ("", "configmaps") | ("", "namespaces") => {}
        ("apps", "deployments") => {
            let spec = obj(object, "spec");
            default(spec, "replicas", json!(1));
            default(spec, "revisionHistoryLimit", json!(10));
            default(spec, "progressDeadlineSeconds", json!(600));
            let strategy = obj_map(spec, "strategy");
            default(strategy, "type", json!("RollingUpdate"));
            if strategy["type"] == "RollingUpdate" {
                let ru = obj_map(strategy, "rollingUpdate");
                default(ru, "maxUnavailable", json!("25%"));
                default(ru, "maxSurge", json!("25%"));
            }
            default_template(spec);
        }
        ("apps", "replicasets") => {
            let spec = obj(object, "spec");
            default(spec, "replicas", json!(1));
            default_template(spec);
        }
        ("apps", "statefulsets") => {
            let spec = obj(object, "spec");
            default(spec, "replicas", json!(1));
            default(spec, "podManagementPolicy", json!("OrderedReady"));
            default(spec, "revisionHistoryLimit", json!(10));
            default(
                spec,
                "persistentVolumeClaimRetentionPolicy",
                json!({"whenDeleted": "Retain", "whenScaled": "Retain"}),
            );
            let strategy = obj_map(spec, "updateStrategy");
            default(strategy, "type", json!("RollingUpdate"));
            if strategy["type"] == "RollingUpdate" {
                let ru = obj_map(strategy, "rollingUpdate");
                default(ru, "partition", json!(0));
            }
            default_template(spec);
        }
        ("apps", "daemonsets") => {
            let spec = obj(object, "spec");
            default(spec, "revisionHistoryLimit", json!(10));
            let strategy = obj_map(spec, "updateStrategy");
            default(strategy, "type", json!("RollingUpdate"));
            if strategy["type"] == "RollingUpdate" {
                let ru = obj_map(strategy, "rollingUpdate");
                default(ru, "maxUnavailable", json!(1));
                default(ru, "maxSurge", json!(0));
            }
            default_template(spec);
        }
        ("batch", "jobs") => {
            let uid = meta::uid(object).to_string();
            let name = meta::name(object).to_string();
            let spec = obj(object, "spec");
            default_job_spec(spec, &uid, &name);
        }
        ("batch", "cronjobs") => {
            let spec = obj(object, "spec");
            default(spec, "concurrencyPolicy", json!("Allow"));
            default(spec, "suspend", json!(false));
            default(spec, "successfulJobsHistoryLimit", json!(3));
            default(spec, "failedJobsHistoryLimit", json!(1));
            let jt = obj_map(spec, "jobTemplate");
            let jspec = obj_map(jt, "spec");
            default(jspec, "backoffLimit", json!(6));
            default(jspec, "completionMode", json!("NonIndexed"));
            default(jspec, "suspend", json!(false));
            default(jspec, "podReplacementPolicy", json!("TerminatingOrFailed"));
            let t = obj_map(jspec, "template");
            default_pod_spec(obj_map(t, "spec"));
        }
        ("networking.k8s.io", "ingresses") => {
            let spec = obj(object, "spec");
            if let Some(rules) = spec.get_mut("rules").and_then(Value::as_array_mut) {
                for r in rules {
                    if let Some(paths) = r["http"]["paths"].as_array_mut() {
                        for p in paths {
                            if let Some(p) = p.as_object_mut() {
                                default(p, "pathType", json!("ImplementationSpecific"));
                            }
                        }
                    }
                }
            }
        }
        ("networking.k8s.io", "networkpolicies") => {
            let spec = obj(object, "spec");
            if spec.get("policyTypes").is_none() {
                let mut types = vec![json!("Ingress")];
                if spec.get("egress").is_some() {
                    types.push(json!("Egress"));
                }
                spec.insert("policyTypes".into(), Value::Array(types));
            }
        }
        ("autoscaling", "horizontalpodautoscalers") => {
            let spec = obj(object, "spec");
            default(spec, "minReplicas", json!(1));
        }
        ("apiextensions.k8s.io", "customresourcedefinitions") => {
            let spec = obj(object, "spec");
            let conversion = obj_map(spec, "conversion");
            default(conversion, "strategy", json!("None"));
        }
        ("rbac.authorization.k8s.io", "rolebindings" | "clusterrolebindings") => {
            if let Some(subjects) = object.get_mut("subjects").and_then(Value::as_array_mut) {
                for s in subjects {
                    if let Some(s) = s.as_object_mut()
                        && matches!(
                            s.get("kind").and_then(Value::as_str),
                            Some("User" | "Group")
                        )
                    {
                        default(s, "apiGroup", json!("rbac.authorization.k8s.io"));
                    }
                }
            }
        }
        _ => {}
    }
}

fn obj_map<'a>(m: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    if !m.get(key).is_some_and(Value::is_object) {
        m.insert(key.to_string(), json!({}));
    }
    m[key].as_object_mut().expect("an object")
}

fn default_template(spec: &mut Map<String, Value>) {
    let template = obj_map(spec, "template");
    let tspec = obj_map(template, "spec");
    default_pod_spec(tspec);
}

fn default_job_spec(spec: &mut Map<String, Value>, uid: &str, name: &str) {
    default(spec, "parallelism", json!(1));
    default(spec, "backoffLimit", json!(6));
    default(spec, "completionMode", json!("NonIndexed"));
    default(spec, "suspend", json!(false));
    default(spec, "podReplacementPolicy", json!("TerminatingOrFailed"));
    if spec.get("completions").is_none()
        && spec.get("parallelism").and_then(Value::as_i64) == Some(1)
    {
        spec.insert("completions".into(), json!(1));
    }
    let manual = spec.get("manualSelector").and_then(Value::as_bool) == Some(true);
    if !manual && !uid.is_empty() {
        spec.insert(
            "selector".into(),
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}),
        );
        let template = obj_map(spec, "template");
        let tmeta = obj_map(template, "metadata");
        let labels = obj_map(tmeta, "labels");
        for (k, v) in [
            ("batch.kubernetes.io/controller-uid", uid),
            ("batch.kubernetes.io/job-name", name),
            ("controller-uid", uid),
            ("job-name", name),
        ] {
            labels.insert(k.into(), json!(v));
        }
    }
    let template = obj_map(spec, "template");
    default_pod_spec(obj_map(template, "spec"));
}

/// A pod spec's defaults (the ones `kubectl get -o yaml` shows on every pod).
pub fn default_pod_spec(spec: &mut Map<String, Value>) {
    default(spec, "restartPolicy", json!("Always"));
    default(spec, "terminationGracePeriodSeconds", json!(30));
    default(spec, "dnsPolicy", json!("ClusterFirst"));
    default(spec, "securityContext", json!({}));
    default(spec, "schedulerName", json!("default-scheduler"));
    for list in ["containers", "initContainers"] {
        if let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) {
            for c in containers {
                if let Some(c) = c.as_object_mut() {
                    default_container(c);
                }
            }
        }
    }
    if let Some(volumes) = spec.get_mut("volumes").and_then(Value::as_array_mut) {
        for v in volumes {
            for (source, field) in [
                ("configMap", "defaultMode"),
                ("secret", "defaultMode"),
                ("projected", "defaultMode"),
                ("downwardAPI", "defaultMode"),
            ] {
                if let Some(s) = v.get_mut(source).and_then(Value::as_object_mut) {
                    default(s, field, json!(420));
                }
            }
        }
    }
}

fn default_container(c: &mut Map<String, Value>) {
    let image = c.get("image").and_then(Value::as_str).unwrap_or("");
    let after_slash = image.rsplit('/').next().unwrap_or(image);
    let tag = after_slash
        .split('@')
        .next()
        .unwrap_or("")
        .split_once(':')
        .map(|(_, t)| t);
    let policy = if image.contains('@') {
        "IfNotPresent"
    } else if tag.is_none() || tag == Some("latest") {
        "Always"
    } else {
        "IfNotPresent"
    };
    default(c, "imagePullPolicy", json!(policy));
    default(c, "terminationMessagePath", json!("/dev/termination-log"));
    default(c, "terminationMessagePolicy", json!("File"));
    default(c, "resources", json!({}));
    if let Some(ports) = c.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports {
            if let Some(p) = p.as_object_mut() {
                default(p, "protocol", json!("TCP"));
            }
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = c.get_mut(probe).and_then(Value::as_object_mut) {
            default(p, "timeoutSeconds", json!(1));
            default(p, "periodSeconds", json!(10));
            default(p, "successThreshold", json!(1));
            default(p, "failureThreshold", json!(3));
            if let Some(h) = p.get_mut("httpGet").and_then(Value::as_object_mut) {
                default(h, "path", json!("/"));
                default(h, "scheme", json!("HTTP"));
            }
        }
    }
}

/// Name, generateName, labels and annotations, as `ValidateObjectMeta` checks them.
pub fn validate_metadata(def: &ResourceDef, object: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let name = meta::name(object);
    let rule = meta::name_rule(&def.group, &def.plural, def.custom.is_some());
    for e in meta::check_name(name, rule) {
        causes.push(Cause::invalid("metadata.name", &json!(name), e));
    }
    let m = meta::meta(object).cloned().unwrap_or_default();
    if let Some(generate) = m
        .get("generateName")
        .and_then(Value::as_str)
        .filter(|g| !g.is_empty())
    {
        for e in meta::check_generate_name(generate, rule) {
            causes.push(Cause::invalid("metadata.generateName", &json!(generate), e));
        }
    }
    if let Some(labels) = m.get("labels") {
        match labels.as_object() {
            Some(labels) => {
                for (k, v) in labels {
                    for e in meta::check_qualified_name(k) {
                        causes.push(Cause::invalid("metadata.labels", &json!(k), e));
                    }
                    match v.as_str() {
                        Some(s) => {
                            for e in meta::check_label_value(s) {
                                causes.push(Cause::invalid("metadata.labels", &json!(s), e));
                            }
                        }
                        None => {
                            causes.push(Cause::invalid("metadata.labels", v, "must be a string"))
                        }
                    }
                }
            }
            None if labels.is_null() => {}
            None => causes.push(Cause::invalid("metadata.labels", labels, "must be a map")),
        }
    }
    if let Some(annotations) = m.get("annotations").and_then(Value::as_object) {
        let mut total = 0;
        for (k, v) in annotations {
            // Case does not matter in annotation keys.
            for e in meta::check_qualified_name(&k.to_lowercase()) {
                causes.push(Cause::invalid("metadata.annotations", &json!(k), e));
            }
            total += k.len() + v.as_str().map(str::len).unwrap_or(0);
        }
        if total > 256 * 1024 {
            causes.push(Cause {
                reason: "FieldValueTooLong",
                field: "metadata.annotations".into(),
                value: None,
                detail: "Too long: may not be more than 262144 bytes".into(),
            });
        }
    }
    causes
}

/// Checks of the fields charts most often get wrong, with the API server's messages.
pub fn validate(
    def: &ResourceDef,
    _version: &str,
    object: &Value,
    _old: Option<&Value>,
) -> Vec<Cause> {
    if def.custom.is_some() {
        // Custom resources are validated by `crd::validate_custom`, which also warns.
        return Vec::new();
    }
    let mut causes = Vec::new();
    let spec = &object["spec"];
    match (def.group.as_str(), def.plural.as_str()) {
        ("", "pods") => validate_pod_spec(spec, "spec", &mut causes),
        ("apps", "deployments" | "replicasets" | "statefulsets" | "daemonsets") => {
            if spec.get("selector").is_none_or(Value::is_null) {
                causes.push(Cause::required("spec.selector", ""));
            } else if let Some(sel) = crate::selector::LabelSelector::from_object(&spec["selector"])
            {
                let labels = spec["template"]["metadata"]["labels"]
                    .as_object()
                    .cloned()
                    .unwrap_or_default();
                if sel.is_empty() {
                    causes.push(Cause::invalid(
                        "spec.selector",
                        &spec["selector"],
                        "empty selector is invalid for deployment",
                    ));
                } else if !sel.matches(&labels) {
                    causes.push(Cause::invalid(
                        "spec.template.metadata.labels",
                        &json!(go_map(&labels)),
                        "`selector` does not match template `labels`",
                    ));
                }
            }
            if let Some(r) = spec.get("replicas").and_then(Value::as_i64)
                && r < 0
            {
                causes.push(Cause::invalid(
                    "spec.replicas",
                    &json!(r),
                    "must be greater than or equal to 0",
                ));
            }
            validate_pod_spec(&spec["template"]["spec"], "spec.template.spec", &mut causes);
        }
        ("batch", "jobs") => {
            validate_pod_spec(&spec["template"]["spec"], "spec.template.spec", &mut causes)
        }
        ("batch", "cronjobs") => {
            if spec
                .get("schedule")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                causes.push(Cause::required("spec.schedule", ""));
            }
            validate_pod_spec(
                &spec["jobTemplate"]["spec"]["template"]["spec"],
                "spec.jobTemplate.spec.template.spec",
                &mut causes,
            );
        }
        ("", "services") => {
            let ty = spec["type"].as_str().unwrap_or("ClusterIP");
            let headless = spec["clusterIP"] == "None";
            let ports = spec["ports"].as_array().cloned().unwrap_or_default();
            if ports.is_empty() && ty != "ExternalName" && !headless {
                causes.push(Cause::required("spec.ports", ""));
            }
            for (i, p) in ports.iter().enumerate() {
                match p["port"].as_i64() {
                    Some(n) if (1..=65535).contains(&n) => {}
                    Some(n) => causes.push(Cause::invalid(
                        format!("spec.ports[{i}].port"),
                        &json!(n),
                        "must be between 1 and 65535, inclusive",
                    )),
                    None => causes.push(Cause::required(format!("spec.ports[{i}].port"), "")),
                }
                if ports.len() > 1 && p["name"].as_str().is_none_or(str::is_empty) {
                    causes.push(Cause::required(format!("spec.ports[{i}].name"), ""));
                }
            }
            if !matches!(
                ty,
                "ClusterIP" | "NodePort" | "LoadBalancer" | "ExternalName"
            ) {
                causes.push(Cause::not_supported(
                    "spec.type",
                    &json!(ty),
                    &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"],
                ));
            }
        }
        ("apiextensions.k8s.io", "customresourcedefinitions") => {
            causes.extend(crate::crd::validate_definition(object));
        }
        ("", "configmaps") | ("", "secrets") => {
            for field in ["data", "binaryData", "stringData"] {
                if let Some(m) = object.get(field).and_then(Value::as_object) {
                    for k in m.keys() {
                        let ok = !k.is_empty()
                            && k.len() <= 253
                            && k.bytes().all(|c| {
                                c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.')
                            });
                        if !ok {
                            causes.push(Cause::invalid(
                                format!("{field}[{k}]"),
                                &json!(k),
                                "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
                            ));
                        }
                    }
                }
            }
        }
        _ => {}
    }
    causes
}

/// Go's `%#v` of a `map[string]string`, as field errors print label maps.
fn go_map(m: &Map<String, Value>) -> String {
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    let parts: Vec<String> = keys
        .iter()
        .map(|k| format!("{k:?}:{:?}", m[*k].as_str().unwrap_or("")))
        .collect();
    format!("map[string]string{{{}}}", parts.join(", "))
}

fn validate_pod_spec(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    let containers = spec["containers"].as_array().cloned().unwrap_or_default();
    if containers.is_empty() {
        causes.push(Cause::required(format!("{path}.containers"), ""));
    }
    let mut names = std::collections::HashSet::new();
    for (list, items) in [
        ("containers", containers),
        (
            "initContainers",
            spec["initContainers"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
        ),
    ] {
        for (i, c) in items.iter().enumerate() {
            let name = c["name"].as_str().unwrap_or("");
            if name.is_empty() {
                causes.push(Cause::required(format!("{path}.{list}[{i}].name"), ""));
            } else {
                for e in meta::check_label(name) {
                    causes.push(Cause::invalid(
                        format!("{path}.{list}[{i}].name"),
                        &json!(name),
                        e,
                    ));
                }
                if !names.insert(name.to_string()) {
                    causes.push(Cause {
                        reason: "FieldValueDuplicate",
                        field: format!("{path}.{list}[{i}].name"),
                        value: Some(format!("{name:?}")),
                        detail: String::new(),
                    });
                }
            }
            if c["image"].as_str().is_none_or(|s| s.trim().is_empty()) {
                causes.push(Cause::required(format!("{path}.{list}[{i}].image"), ""));
            }
        }
    }
}

/// Fields that may not change after create.
pub fn validate_update(
    def: &ResourceDef,
    old: &Value,
    new: &Value,
    subresource: &str,
) -> Vec<Cause> {
    let mut causes = Vec::new();
    if !subresource.is_empty() || def.custom.is_some() {
        return causes;
    }
    let immutable = |causes: &mut Vec<Cause>, path: &[&str], field: &str| {
        let get = |v: &Value| path.iter().try_fold(v.clone(), |v, p| v.get(*p).cloned());
        let (a, b) = (get(old), get(new));
        if a != b && a.is_some() {
            causes.push(Cause::invalid(
                field,
                b.as_ref().unwrap_or(&Value::Null),
                "field is immutable",
            ));
        }
    };
    match (def.group.as_str(), def.plural.as_str()) {
        ("apps", "deployments" | "replicasets" | "daemonsets" | "statefulsets") => {
            immutable(&mut causes, &["spec", "selector"], "spec.selector");
        }
        ("batch", "jobs") => {
            immutable(&mut causes, &["spec", "selector"], "spec.selector");
            immutable(&mut causes, &["spec", "template"], "spec.template");
            immutable(&mut causes, &["spec", "completions"], "spec.completions");
        }
        ("", "services") => {
            let old_ip = old["spec"]["clusterIP"].as_str().unwrap_or("");
            let new_ip = new["spec"]["clusterIP"].as_str().unwrap_or("");
            if !old_ip.is_empty()
                && !new_ip.is_empty()
                && old_ip != new_ip
                && old["spec"]["type"] != "ExternalName"
            {
                causes.push(Cause::invalid(
                    "spec.clusterIPs[0]",
                    &json!(new_ip),
                    "may not change once set",
                ));
            }
        }
        ("", "configmaps" | "secrets") if old["immutable"] == true => {
            for field in ["data", "binaryData", "stringData"] {
                if old.get(field) != new.get(field) {
                    causes.push(Cause::forbidden(
                        field,
                        "field is immutable when `immutable` is set",
                    ));
                }
            }
        }
        ("", "persistentvolumeclaims") => {
            let strip = |v: &Value| {
                let mut s = v["spec"].clone();
                if let Some(m) = s.as_object_mut() {
                    m.shift_remove("resources");
                    m.shift_remove("volumeName");
                    m.shift_remove("volumeAttributesClassName");
                }
                s
            };
            if strip(old) != strip(new) {
                causes.push(Cause::forbidden("spec", "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"));
            }
        }
        _ => {}
    }
    causes
}

/// A status write keeps the stored metadata but for labels, annotations, finalizers and
/// owner references.
pub fn keep_metadata_for_status(kept: &mut Value, sent: &Value) {
    let sent_meta = meta::meta(sent).cloned().unwrap_or_default();
    let m = meta::meta_mut(kept);
    for k in [
        "labels",
        "annotations",
        "finalizers",
        "ownerReferences",
        "resourceVersion",
    ] {
        match sent_meta.get(k) {
            Some(v) => {
                m.insert(k.into(), v.clone());
            }
            None => {
                m.remove(k);
            }
        }
    }
}

/// The propagation policy used when a delete names none.
pub fn default_propagation(def: &ResourceDef) -> &'static str {
    // Before `propagationPolicy` existed, these orphaned their dependents by default, and
    // the API server keeps that for their old API versions only; every served version
    // here deletes in the background.
    let _ = def;
    "Background"
}

/// Seconds a deleted object lingers before it is gone (pods only: the kubelet stops
/// their containers first), or `None` when it goes at once.
pub fn graceful_deletion(def: &ResourceDef, object: &Value, requested: Option<i64>) -> Option<i64> {
    if !is(def, "", "pods") {
        return None;
    }
    // A pod that never ran is deleted at once.
    if object["spec"]["nodeName"]
        .as_str()
        .is_none_or(str::is_empty)
    {
        return None;
    }
    let phase = object["status"]["phase"].as_str().unwrap_or("");
    if matches!(phase, "Succeeded" | "Failed") {
        return None;
    }
    let grace = requested
        .or_else(|| object["spec"]["terminationGracePeriodSeconds"].as_i64())
        .unwrap_or(30);
    if grace == 0 { None } else { Some(grace) }
}

/// What changes on an object when its deletion starts.
pub fn on_deletion_started(def: &ResourceDef, object: &mut Value) {
    if is(def, "", "namespaces") {
        object["status"]["phase"] = json!("Terminating");
    }
}

/// Whether a deleting object waits for something other than finalizers (a pod's grace
/// period, which the simulated kubelet ends).
pub fn waits_for_grace(object: &Value) -> bool {
    if object["kind"] == "Namespace" {
        return object["spec"]["finalizers"]
            .as_array()
            .is_some_and(|f| !f.is_empty());
    }
    meta::meta(object)
        .and_then(|m| m.get("deletionGracePeriodSeconds"))
        .and_then(Value::as_i64)
        .is_some_and(|g| g > 0)
}
