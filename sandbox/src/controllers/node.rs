//! The kubelet's node status: a node registered without one (as the sandbox seeds its
//! nodes) gets the status its kubelet would post: Ready and pressure conditions,
//! capacity, addresses and node info.

use serde_json::json;

use super::{Ctx, objects};
use crate::meta;
use crate::store::ObjectKey;

pub fn reconcile(ctx: &Ctx, key: &ObjectKey) {
    let Some(node) = ctx.cluster.store.get(key) else {
        return;
    };
    if node["status"]["conditions"].is_array() {
        return;
    }
    let now = meta::now();
    let version = ctx.cluster.settings.kubernetes_version.git_version();
    let condition = |ty: &str, status: &str, reason: &str, message: &str| json!({"type": ty, "status": status, "reason": reason, "message": message, "lastHeartbeatTime": now, "lastTransitionTime": now});
    let conditions = json!([
        condition(
            "MemoryPressure",
            "False",
            "KubeletHasSufficientMemory",
            "kubelet has sufficient memory available"
        ),
        condition(
            "DiskPressure",
            "False",
            "KubeletHasNoDiskPressure",
            "kubelet has no disk pressure"
        ),
        condition(
            "PIDPressure",
            "False",
            "KubeletHasSufficientPID",
            "kubelet has sufficient PID available"
        ),
        condition(
            "Ready",
            "True",
            "KubeletReady",
            "kubelet is posting ready status"
        ),
    ]);
    let name = key.name.clone();
    objects::update_status(
        ctx,
        "",
        "nodes",
        "",
        &key.name,
        super::kubelet::MANAGER,
        |n| {
            let resources = json!({"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi", "hugepages-1Gi": "0", "hugepages-2Mi": "0"});
            n["status"] = json!({
                "capacity": resources,
                "allocatable": resources,
                "conditions": conditions,
                "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": name}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "nodeInfo": {
                    "kubeletVersion": version,
                    "osImage": "chartkit sandbox",
                    "kernelVersion": "",
                    "containerRuntimeVersion": "containerd://simulated",
                    "operatingSystem": "linux",
                    "architecture": "amd64",
                    "machineID": "", "systemUUID": "", "bootID": "",
                    "kubeProxyVersion": "",
                },
            });
            true
        },
    );
}
