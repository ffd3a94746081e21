//! Helm's ownership marks on a release's objects, and the check that keeps a release from
//! silently taking over an object that belongs to another one.

use chartkit_cluster::Target;
use chartkit_cluster::manifest::Object;
use serde_json::Value;

use crate::EngineError;

pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
pub const RELEASE_NAME: &str = "meta.helm.sh/release-name";
pub const RELEASE_NAMESPACE: &str = "meta.helm.sh/release-namespace";
pub const RESOURCE_POLICY: &str = "helm.sh/resource-policy";

/// Adds the label and annotations helm puts on every object of a release.
pub fn mark(object: &mut Object, release: &str, namespace: &str) {
    let metadata = &mut object.value["metadata"];
    for (field, key, value) in [
        ("labels", MANAGED_BY, "Helm"),
        ("annotations", RELEASE_NAME, release),
        ("annotations", RELEASE_NAMESPACE, namespace),
    ] {
        if !metadata[field].is_object() {
            metadata[field] = Value::Object(Default::default());
        }
        metadata[field][key] = Value::String(value.to_string());
    }
}

/// Whether the object asks to be left in place when its release lets go of it.
pub fn keep(object: &Object) -> bool {
    object.value["metadata"]["annotations"][RESOURCE_POLICY]
        .as_str()
        .is_some_and(|p| p.trim().eq_ignore_ascii_case("keep"))
}

/// Fails when a live object exists that is not marked as this release's, in helm's words
/// (`... exists and cannot be imported into the current release: invalid ownership
/// metadata; ...`).
pub fn check_live(
    operation: &str,
    target: &Target,
    live: &Value,
    release: &str,
    namespace: &str,
) -> Result<(), EngineError> {
    let metadata = &live["metadata"];
    let mut problems = Vec::new();
    let mut check = |field: &str, what: &str, key: &str, want: &str| match metadata[field][key]
        .as_str()
    {
        None => problems.push(format!(
            "{what} validation error: missing key {key:?}: must be set to {want:?}"
        )),
        Some(have) if have != want => problems.push(format!(
            "{what} validation error: key {key:?} must equal {want:?}: current value is {have:?}"
        )),
        Some(_) => {}
    };
    check("labels", "label", MANAGED_BY, "Helm");
    check("annotations", "annotation", RELEASE_NAME, release);
    check("annotations", "annotation", RELEASE_NAMESPACE, namespace);
    if problems.is_empty() {
        return Ok(());
    }
    Err(EngineError::msg(format!(
        "unable to continue with {operation}: {} {:?} in namespace {:?} exists and cannot be imported into the current release: invalid ownership metadata; {}",
        target.resource.api.kind,
        target.name,
        target.namespace.as_deref().unwrap_or(""),
        problems.join("; ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_added_beside_existing_labels() {
        let mut object = Object {
            source: None,
            value: serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "c", "labels": {"app": "x"}}}),
        };
        mark(&mut object, "web", "apps");
        let meta = &object.value["metadata"];
        assert_eq!(meta["labels"]["app"], "x");
        assert_eq!(meta["labels"][MANAGED_BY], "Helm");
        assert_eq!(meta["annotations"][RELEASE_NAME], "web");
        assert_eq!(meta["annotations"][RELEASE_NAMESPACE], "apps");
    }

    #[test]
    fn keep_policy_is_case_and_space_insensitive() {
        let object = Object {
            source: None,
            value: serde_json::json!({"metadata": {"annotations": {RESOURCE_POLICY: " Keep "}}}),
        };
        assert!(keep(&object));
    }
}
