//! ServiceAccounts: every namespace gets a `default` ServiceAccount (the serviceaccount
//! controller) and the `kube-root-ca.crt` ConfigMap (the root CA cert publisher), and
//! both come back when deleted. Pods are admitted as the ServiceAccount admission
//! plugin admits them: the account defaults to `default`, must exist, and its token
//! is mounted through a projected `kube-api-access-*` volume.

use std::sync::OnceLock;

use serde_json::{Map, Value, json};

use super::{Ctx, MANAGER, namespace_key, objects};
use crate::cluster::{Cluster, Target};
use crate::meta;
use crate::status::{ApiError, ApiResult};
use crate::store::{Change, ObjectKey};

pub const ROOT_CA: &str = "kube-root-ca.crt";
const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";
const TOKEN_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The CA bundle published in every namespace (made once per process).
fn ca_pem() -> &'static str {
    static PEM: OnceLock<String> = OnceLock::new();
    PEM.get_or_init(|| {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
        let made = (|| -> Result<String, rcgen::Error> {
            let key = KeyPair::generate()?;
            let mut params = CertificateParams::new(Vec::<String>::new())?;
            params
                .distinguished_name
                .push(DnType::CommonName, "kubernetes");
            params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            Ok(params.self_signed(&key)?.pem())
        })();
        made.unwrap_or_default()
    })
}

pub fn reconcile_namespace(ctx: &Ctx, key: &ObjectKey) {
    let Some(ns) = ctx.cluster.store.get(key) else {
        return;
    };
    if meta::is_deleting(&ns) {
        return;
    }
    let name = &key.name;
    if objects::get(ctx, "", "serviceaccounts", name, "default").is_none() {
        let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": name}});
        let _ = objects::create(ctx, "", "serviceaccounts", name, sa, MANAGER);
    }
    if objects::get(ctx, "", "configmaps", name, ROOT_CA).is_none() {
        let cm = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": ROOT_CA, "namespace": name, "annotations": {"kubernetes.io/description": DESCRIPTION}},
            "data": {"ca.crt": ca_pem()},
        });
        let _ = objects::create(ctx, "", "configmaps", name, cm, MANAGER);
    }
}

/// A deleted `default` ServiceAccount or root CA ConfigMap is made again.
pub fn route(ctx: &Ctx, change: &Change) {
    if change.object.is_some() {
        return;
    }
    let k = &change.key;
    if (k.resource == "/serviceaccounts" && k.name == "default")
        || (k.resource == "/configmaps" && k.name == ROOT_CA)
    {
        ctx.queue.add(namespace_key(&k.namespace));
    }
}

/// The ServiceAccount admission plugin, for a pod being created.
pub fn admit_pod(cluster: &Cluster, t: &Target, pod: &mut Value) -> ApiResult<()> {
    let spec = match pod.get_mut("spec").and_then(Value::as_object_mut) {
        Some(s) => s,
        None => return Ok(()),
    };
    let account = match spec.get("serviceAccountName").and_then(Value::as_str) {
        Some(a) if !a.is_empty() => a.to_string(),
        _ => match spec.get("serviceAccount").and_then(Value::as_str) {
            Some(a) if !a.is_empty() => a.to_string(),
            _ => "default".to_string(),
        },
    };
    spec.insert("serviceAccountName".into(), json!(account));
    spec.insert("serviceAccount".into(), json!(account));
    // Mirror pods (static pods) are not checked; nothing here makes them.
    let key = ObjectKey {
        resource: "/serviceaccounts".into(),
        namespace: t.namespace.clone(),
        name: account.clone(),
    };
    let sa = cluster.store.get(&key);
    // The plugin retries the `default` account for a while, since the controller makes
    // it right after the namespace; here it is as good as there.
    if sa.is_none() && account != "default" {
        let name = match meta::name(pod) {
            "" => meta::meta(pod)
                .and_then(|m| m.get("generateName"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            n => n.to_string(),
        };
        return Err(ApiError::forbidden(
            "pods",
            "",
            &name,
            &format!(
                "error looking up service account {}/{account}: serviceaccount \"{account}\" not found",
                t.namespace
            ),
        ));
    }
    let spec = pod["spec"].as_object_mut().expect("spec is an object");
    let automount = spec
        .get("automountServiceAccountToken")
        .and_then(Value::as_bool)
        .or_else(|| {
            sa.as_ref()
                .and_then(|a| a["automountServiceAccountToken"].as_bool())
        })
        .unwrap_or(true);
    if !automount {
        return Ok(());
    }
    let mounted = |c: &Value| {
        c["volumeMounts"]
            .as_array()
            .is_some_and(|m| m.iter().any(|v| v["mountPath"] == TOKEN_PATH))
    };
    let volume = format!("kube-api-access-{}", &meta::generate_name("")[..5]);
    let mut used = false;
    for list in ["initContainers", "containers"] {
        if let Some(cs) = spec.get_mut(list).and_then(Value::as_array_mut) {
            for c in cs {
                if mounted(c) {
                    continue;
                }
                let Some(cm) = c.as_object_mut() else {
                    continue;
                };
                let mounts = cm.entry("volumeMounts").or_insert_with(|| json!([]));
                if let Some(m) = mounts.as_array_mut() {
                    m.push(json!({"name": volume, "readOnly": true, "mountPath": TOKEN_PATH}));
                    used = true;
                }
            }
        }
    }
    if used {
        let volumes = spec.entry("volumes").or_insert_with(|| json!([]));
        if let Some(v) = volumes.as_array_mut() {
            v.push(api_access_volume(&volume));
        }
    }
    Ok(())
}

fn api_access_volume(name: &str) -> Value {
    let mut projected = Map::new();
    projected.insert(
        "sources".into(),
        json!([
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": ROOT_CA, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
        ]),
    );
    projected.insert("defaultMode".into(), json!(420));
    json!({"name": name, "projected": projected})
}
