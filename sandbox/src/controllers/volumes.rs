//! PersistentVolumeClaims and PersistentVolumes: the persistentvolume controller binds
//! a claim to an Available volume that fits, or has the claim's StorageClass
//! provision one (`pvc-<claim uid>`, a host path), both then `Bound`; a claim naming a
//! StorageClass that does not exist stays `Pending` with a `ProvisioningFailed`
//! event, one whose class waits for a first consumer stays `Pending` until a pod uses
//! it. Released volumes are deleted or kept by their reclaim policy. The protection
//! controllers hold a claim's deletion while a pod uses it, and a volume's while a
//! claim is bound to it.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{Ctx, MANAGER, events, objects};
use crate::meta;
use crate::store::{Change, ObjectKey};

pub const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";
pub const PV_PROTECTION: &str = "kubernetes.io/pv-protection";

fn claim_names(pod: &Value) -> Vec<String> {
    pod["spec"]["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| {
            v["persistentVolumeClaim"]["claimName"]
                .as_str()
                .map(String::from)
        })
        .collect()
}

pub fn route(ctx: &Ctx, change: &Change) {
    let k = &change.key;
    match k.resource.as_str() {
        "/pods" => {
            for o in [change.object.as_deref(), change.previous.as_deref()]
                .into_iter()
                .flatten()
            {
                for c in claim_names(o) {
                    ctx.queue
                        .add(objects::key("/persistentvolumeclaims", &k.namespace, &c));
                }
            }
        }
        "/persistentvolumeclaims" => {
            // Pods waiting for the claim, and the volume it was bound to.
            for p in objects::list(ctx, "", "pods", &k.namespace) {
                if p["spec"]["nodeName"].as_str().is_none_or(str::is_empty)
                    && claim_names(&p).contains(&k.name)
                {
                    ctx.queue.add(objects::key_of("/pods", &p));
                }
            }
            if let Some(v) = change.subject()["spec"]["volumeName"].as_str() {
                ctx.queue.add(objects::key("/persistentvolumes", "", v));
            }
        }
        "/persistentvolumes" => {
            let r = &change.subject()["spec"]["claimRef"];
            if let (Some(ns), Some(name)) = (r["namespace"].as_str(), r["name"].as_str()) {
                ctx.queue
                    .add(objects::key("/persistentvolumeclaims", ns, name));
            }
        }
        _ => {}
    }
}

fn in_use(ctx: &Ctx, ns: &str, claim: &str) -> bool {
    objects::list(ctx, "", "pods", ns).iter().any(|p| {
        !matches!(p["status"]["phase"].as_str(), Some("Succeeded" | "Failed"))
            && claim_names(p).iter().any(|c| c == claim)
    })
}

fn remove_finalizer(ctx: &Ctx, plural: &str, ns: &str, name: &str, finalizer: &str) {
    objects::update(ctx, "", plural, ns, name, MANAGER, |o| {
        let mut f = meta::finalizers(o);
        let before = f.len();
        f.retain(|x| x != finalizer);
        meta::set_finalizers(o, &f);
        f.len() != before
    });
}

fn request(claim: &Value) -> Value {
    claim["spec"]["resources"]["requests"]["storage"].clone()
}

/// Bytes of a quantity (`1Gi`, `500M`, `1e3`), for matching volumes to claims.
fn bytes(q: &Value) -> f64 {
    let s = match q {
        Value::String(s) => s.as_str(),
        Value::Number(n) => return n.as_f64().unwrap_or(0.0),
        _ => return 0.0,
    };
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let n: f64 = s[..split].parse().unwrap_or(0.0);
    let scale = match &s[split..] {
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "m" => 1e-3,
        _ => 1.0,
    };
    n * scale
}

pub fn reconcile_claim(ctx: &Ctx, key: &ObjectKey) {
    let Some(claim) = ctx.cluster.store.get(key) else {
        return;
    };
    if meta::is_deleting(&claim) {
        if meta::finalizers(&claim).iter().any(|f| f == PVC_PROTECTION)
            && !in_use(ctx, &key.namespace, &key.name)
        {
            remove_finalizer(
                ctx,
                "persistentvolumeclaims",
                &key.namespace,
                &key.name,
                PVC_PROTECTION,
            );
        }
        return;
    }
    if claim["status"]["phase"] == "Bound" {
        return;
    }
    let class = claim["spec"]["storageClassName"]
        .as_str()
        .unwrap_or("")
        .to_string();
    if let Some(volume) = claim["spec"]["volumeName"]
        .as_str()
        .filter(|v| !v.is_empty())
    {
        if let Some(pv) = objects::get(ctx, "", "persistentvolumes", "", volume) {
            bind(ctx, key, &claim, &pv);
        }
        return;
    }
    // An Available volume that fits comes first.
    let fits = objects::list(ctx, "", "persistentvolumes", "")
        .into_iter()
        .find(|pv| {
            pv["status"]["phase"] == "Available"
                && pv["spec"]["claimRef"].is_null()
                && pv["spec"]["storageClassName"].as_str().unwrap_or("") == class
                && bytes(&pv["spec"]["capacity"]["storage"]) >= bytes(&request(&claim))
                && claim["spec"]["accessModes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .all(|m| {
                        pv["spec"]["accessModes"]
                            .as_array()
                            .is_some_and(|a| a.contains(m))
                    })
        });
    if let Some(pv) = fits {
        bind(ctx, key, &claim, &pv);
        return;
    }
    if class.is_empty() {
        events::normal(
            ctx,
            &claim,
            events::VOLUME,
            "FailedBinding",
            "no persistent volumes available for this claim and no storage class is set",
        );
        return;
    }
    let Some(sc) = objects::get(ctx, "storage.k8s.io", "storageclasses", "", &class) else {
        events::warning(
            ctx,
            &claim,
            events::VOLUME,
            "ProvisioningFailed",
            &format!("storageclass.storage.k8s.io \"{class}\" not found"),
        );
        return;
    };
    if sc["volumeBindingMode"] == "WaitForFirstConsumer" && !in_use(ctx, &key.namespace, &key.name)
    {
        events::normal(
            ctx,
            &claim,
            events::VOLUME,
            "WaitForFirstConsumer",
            "waiting for first consumer to be created before binding",
        );
        return;
    }
    provision(ctx, key, &claim, &sc);
}

fn provision(ctx: &Ctx, key: &ObjectKey, claim: &Value, sc: &Value) {
    let provisioner = sc["provisioner"].as_str().unwrap_or("").to_string();
    let name = format!("pvc-{}", meta::uid(claim));
    events::normal(
        ctx,
        claim,
        events::VOLUME,
        "ExternalProvisioning",
        &format!(
            "Waiting for a volume to be created either by the external provisioner '{provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered."
        ),
    );
    let pv = json!({
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {
            "name": name,
            "annotations": {"pv.kubernetes.io/provisioned-by": provisioner},
        },
        "spec": {
            "capacity": {"storage": request(claim)},
            "accessModes": claim["spec"]["accessModes"],
            "persistentVolumeReclaimPolicy": sc["reclaimPolicy"].as_str().unwrap_or("Delete"),
            "storageClassName": sc["metadata"]["name"],
            "volumeMode": claim["spec"]["volumeMode"].as_str().unwrap_or("Filesystem"),
            "hostPath": {"path": format!("/var/lib/chartkit-sandbox/{name}_{}_{}", key.namespace, key.name), "type": "DirectoryOrCreate"},
            "claimRef": {
                "kind": "PersistentVolumeClaim",
                "namespace": key.namespace,
                "name": key.name,
                "uid": meta::uid(claim),
                "apiVersion": "v1",
                "resourceVersion": meta::resource_version(claim),
            },
        },
    });
    let created = match objects::create(
        ctx,
        "",
        "persistentvolumes",
        "",
        pv,
        &provisioner_manager(&provisioner),
    ) {
        Ok(v) => v,
        Err(e) if e.code == 409 => match objects::get(ctx, "", "persistentvolumes", "", &name) {
            Some(v) => (*v).clone(),
            None => return,
        },
        Err(e) => {
            events::warning(ctx, claim, events::VOLUME, "ProvisioningFailed", &e.message);
            return;
        }
    };
    events::normal(
        ctx,
        claim,
        events::Source {
            component: "sandbox-provisioner",
            manager: MANAGER,
        },
        "ProvisioningSucceeded",
        &format!("Successfully provisioned volume {name}"),
    );
    let pv = objects::get(ctx, "", "persistentvolumes", "", meta::name(&created));
    if let Some(pv) = pv {
        bind(ctx, key, claim, &pv);
    }
}

fn provisioner_manager(provisioner: &str) -> String {
    if provisioner.is_empty() {
        MANAGER.to_string()
    } else {
        "sandbox-provisioner".to_string()
    }
}

/// Binds the claim and the volume to each other, both `Bound`.
fn bind(ctx: &Ctx, key: &ObjectKey, claim: &Value, pv: &Arc<Value>) {
    let pv_name = meta::name(pv).to_string();
    let claim_ref = json!({
        "kind": "PersistentVolumeClaim",
        "namespace": key.namespace,
        "name": key.name,
        "uid": meta::uid(claim),
        "apiVersion": "v1",
        "resourceVersion": meta::resource_version(claim),
    });
    objects::update(ctx, "", "persistentvolumes", "", &pv_name, MANAGER, |o| {
        if o["spec"]["claimRef"]["uid"] == claim_ref["uid"] {
            return false;
        }
        o["spec"]["claimRef"] = claim_ref.clone();
        let m = meta::meta_mut(o);
        let ann = m.entry("annotations").or_insert_with(|| json!({}));
        ann["pv.kubernetes.io/bound-by-controller"] = json!("yes");
        true
    });
    objects::update_status(ctx, "", "persistentvolumes", "", &pv_name, MANAGER, |o| {
        if o["status"]["phase"] == "Bound" {
            return false;
        }
        o["status"] = json!({"phase": "Bound", "lastPhaseTransitionTime": meta::now()});
        true
    });
    let provisioner = meta::annotation(pv, "pv.kubernetes.io/provisioned-by").map(String::from);
    objects::update(
        ctx,
        "",
        "persistentvolumeclaims",
        &key.namespace,
        &key.name,
        MANAGER,
        |o| {
            o["spec"]["volumeName"] = json!(pv_name);
            let m = meta::meta_mut(o);
            let ann = m.entry("annotations").or_insert_with(|| json!({}));
            ann["pv.kubernetes.io/bind-completed"] = json!("yes");
            ann["pv.kubernetes.io/bound-by-controller"] = json!("yes");
            if let Some(p) = &provisioner {
                ann["volume.beta.kubernetes.io/storage-provisioner"] = json!(p);
                ann["volume.kubernetes.io/storage-provisioner"] = json!(p);
            }
            true
        },
    );
    let capacity = pv["spec"]["capacity"].clone();
    let modes = pv["spec"]["accessModes"].clone();
    objects::update_status(
        ctx,
        "",
        "persistentvolumeclaims",
        &key.namespace,
        &key.name,
        MANAGER,
        |o| {
            o["status"] = json!({"phase": "Bound", "accessModes": modes, "capacity": capacity});
            true
        },
    );
}

pub fn reconcile_volume(ctx: &Ctx, key: &ObjectKey) {
    let Some(pv) = ctx.cluster.store.get(key) else {
        return;
    };
    let claim_ref = &pv["spec"]["claimRef"];
    let claim = match (claim_ref["namespace"].as_str(), claim_ref["name"].as_str()) {
        (Some(ns), Some(name)) => objects::get(ctx, "", "persistentvolumeclaims", ns, name)
            .filter(|c| claim_ref["uid"].is_null() || c["metadata"]["uid"] == claim_ref["uid"]),
        _ => None,
    };
    if meta::is_deleting(&pv) {
        if claim.is_none() && meta::finalizers(&pv).iter().any(|f| f == PV_PROTECTION) {
            remove_finalizer(ctx, "persistentvolumes", "", &key.name, PV_PROTECTION);
        }
        return;
    }
    if claim_ref.is_null() {
        if pv["status"]["phase"] != "Available" {
            objects::update_status(ctx, "", "persistentvolumes", "", &key.name, MANAGER, |o| {
                o["status"] = json!({"phase": "Available", "lastPhaseTransitionTime": meta::now()});
                true
            });
        }
        return;
    }
    if claim.is_none() && !claim_ref["uid"].is_null() {
        // The claim went: the volume is released, then reclaimed.
        if pv["spec"]["persistentVolumeReclaimPolicy"] == "Delete" {
            let _ = objects::delete(ctx, "", "persistentvolumes", "", &key.name, None, None);
        } else if pv["status"]["phase"] != "Released" {
            objects::update_status(ctx, "", "persistentvolumes", "", &key.name, MANAGER, |o| {
                o["status"] = json!({"phase": "Released", "lastPhaseTransitionTime": meta::now()});
                true
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_compare_by_bytes() {
        assert!(bytes(&json!("1Gi")) > bytes(&json!("500Mi")));
        assert_eq!(bytes(&json!("1k")), 1000.0);
    }
}
