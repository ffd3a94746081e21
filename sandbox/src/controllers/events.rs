//! Events as the kubelet, the scheduler and the controllers record them: core v1
//! Events named `<object>.<hex time>`, and a repeat of the same event (same object,
//! reason, message and source) counted up on the one already recorded instead of
//! added, as client-go's event correlator does.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use super::{Ctx, objects};
use crate::meta;

/// Who records an event: `source.component` and the field manager it writes as.
#[derive(Debug, Clone, Copy)]
pub struct Source {
    pub component: &'static str,
    pub manager: &'static str,
}

pub const KUBELET: Source = Source {
    component: "kubelet",
    manager: "kubelet",
};
pub const SCHEDULER: Source = Source {
    component: "default-scheduler",
    manager: "kube-scheduler",
};
pub const DEPLOYMENT: Source = controller("deployment-controller");
pub const REPLICASET: Source = controller("replicaset-controller");
pub const STATEFULSET: Source = controller("statefulset-controller");
pub const DAEMONSET: Source = controller("daemonset-controller");
pub const JOB: Source = controller("job-controller");
pub const CRONJOB: Source = controller("cronjob-controller");
pub const VOLUME: Source = controller("persistentvolume-controller");
pub const SERVICE: Source = controller("service-controller");

const fn controller(component: &'static str) -> Source {
    Source {
        component,
        manager: super::MANAGER,
    }
}

/// Events recorded so far, by what makes them the same event.
#[derive(Default)]
pub struct Recorder {
    seen: Mutex<HashMap<String, String>>,
    sequence: AtomicU64,
}

/// Records a `Normal` event about `object` (a stored object).
pub fn normal(ctx: &Ctx, object: &Value, source: Source, reason: &str, message: &str) {
    record(ctx, object, None, source, "Normal", reason, message, None);
}

/// Records a `Warning` event about `object`.
pub fn warning(ctx: &Ctx, object: &Value, source: Source, reason: &str, message: &str) {
    record(ctx, object, None, source, "Warning", reason, message, None);
}

/// Records an event about one of a pod's containers, from the kubelet on `host`.
pub fn container(
    ctx: &Ctx,
    pod: &Value,
    field_path: &str,
    host: &str,
    warning: bool,
    reason: &str,
    message: &str,
) {
    let ty = if warning { "Warning" } else { "Normal" };
    record(
        ctx,
        pod,
        Some(field_path),
        KUBELET,
        ty,
        reason,
        message,
        Some(host),
    );
}

#[allow(clippy::too_many_arguments)]
pub fn record(
    ctx: &Ctx,
    object: &Value,
    field_path: Option<&str>,
    source: Source,
    ty: &str,
    reason: &str,
    message: &str,
    host: Option<&str>,
) {
    let ns = match meta::namespace(object) {
        "" => "default",
        ns => ns,
    };
    let uid = meta::uid(object);
    let identity = format!(
        "{ns}\u{0}{uid}\u{0}{}\u{0}{reason}\u{0}{message}\u{0}{}\u{0}{ty}",
        field_path.unwrap_or(""),
        source.component
    );
    let now = meta::now();
    let recorder = &ctx.state.events;
    let existing = recorder
        .seen
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&identity)
        .cloned();
    if let Some(name) = existing {
        let counted = objects::update(ctx, "", "events", ns, &name, source.manager, |e| {
            let count = e["count"].as_i64().unwrap_or(1) + 1;
            e["count"] = json!(count);
            e["lastTimestamp"] = json!(now);
            true
        });
        if counted {
            return;
        }
    }
    let nanos = chrono::Utc::now()
        .timestamp_nanos_opt()
        .unwrap_or_default()
        .unsigned_abs()
        + recorder.sequence.fetch_add(1, Ordering::Relaxed);
    let name = format!("{}.{nanos:x}", meta::name(object));
    let mut involved = json!({
        "kind": object["kind"],
        "namespace": meta::namespace(object),
        "name": meta::name(object),
        "uid": uid,
        "apiVersion": object["apiVersion"],
        "resourceVersion": meta::resource_version(object),
    });
    if meta::namespace(object).is_empty()
        && let Some(m) = involved.as_object_mut()
    {
        m.shift_remove("namespace");
    }
    if let Some(f) = field_path {
        involved["fieldPath"] = json!(f);
    }
    let mut src = json!({"component": source.component});
    if let Some(h) = host {
        src["host"] = json!(h);
    }
    let event = json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": ns},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "source": src,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "type": ty,
        "eventTime": null,
        "reportingComponent": source.component,
        "reportingInstance": host.unwrap_or(""),
    });
    if objects::create(ctx, "", "events", ns, event, source.manager).is_ok() {
        recorder
            .seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(identity, name);
    }
}
