//! How controllers read and write objects: through [`Cluster`] with the field manager
//! of the component they play, never past the API's rules.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::Ctx;
use crate::cluster::{DeleteOptions, Target, WriteOptions};
use crate::meta;
use crate::status::ApiResult;
use crate::store::ObjectKey;

/// A target for a built-in or registered resource; `None` for an unknown one.
pub fn target(ctx: &Ctx, group: &str, plural: &str, ns: &str, name: &str) -> Option<Target> {
    let def = ctx
        .cluster
        .registry()
        .by_key(&format!("{group}/{plural}"))?;
    Some(Target {
        version: def.versions[0].clone(),
        namespace: if def.namespaced {
            ns.to_string()
        } else {
            String::new()
        },
        def,
        name: name.to_string(),
        subresource: String::new(),
    })
}

/// A target for an object key.
pub fn key_target(ctx: &Ctx, key: &ObjectKey) -> Option<Target> {
    let (group, plural) = key.resource.split_once('/')?;
    target(ctx, group, plural, &key.namespace, &key.name)
}

pub fn key(resource: &str, ns: &str, name: &str) -> ObjectKey {
    ObjectKey {
        resource: resource.to_string(),
        namespace: ns.to_string(),
        name: name.to_string(),
    }
}

/// The key of a stored object of `resource`.
pub fn key_of(resource: &str, object: &Value) -> ObjectKey {
    key(resource, meta::namespace(object), meta::name(object))
}

pub fn get(ctx: &Ctx, group: &str, plural: &str, ns: &str, name: &str) -> Option<Arc<Value>> {
    ctx.cluster
        .store
        .get(&key(&format!("{group}/{plural}"), ns, name))
}

/// Objects of a resource in a namespace (`""`: all of them).
pub fn list(ctx: &Ctx, group: &str, plural: &str, ns: &str) -> Vec<Arc<Value>> {
    let resource = format!("{group}/{plural}");
    let ns = (!ns.is_empty()).then_some(ns);
    ctx.cluster.store.list(&resource, ns).0
}

/// Creates an object as `manager`.
pub fn create(
    ctx: &Ctx,
    group: &str,
    plural: &str,
    ns: &str,
    object: Value,
    manager: &str,
) -> ApiResult<Value> {
    let Some(t) = target(ctx, group, plural, ns, "") else {
        return Err(crate::status::ApiError::no_route());
    };
    let opts = WriteOptions {
        manager: manager.to_string(),
        validation: crate::cluster::FieldValidation::Ignore,
        ..WriteOptions::default()
    };
    ctx.cluster.create(&t, object, &opts).map(|w| w.object)
}

/// Deletes an object; one already gone is not an error.
pub fn delete(
    ctx: &Ctx,
    group: &str,
    plural: &str,
    ns: &str,
    name: &str,
    propagation: Option<&str>,
    grace: Option<i64>,
) -> ApiResult<()> {
    let Some(t) = target(ctx, group, plural, ns, name) else {
        return Ok(());
    };
    delete_target(ctx, &t, propagation, grace, None)
}

/// Deletes the object at `t` if it still has `uid` (when given).
pub fn delete_target(
    ctx: &Ctx,
    t: &Target,
    propagation: Option<&str>,
    grace: Option<i64>,
    uid: Option<&str>,
) -> ApiResult<()> {
    let opts = DeleteOptions {
        propagation: propagation.map(String::from),
        grace_period: grace,
        precondition_uid: uid.map(String::from),
        ..DeleteOptions::default()
    };
    match ctx.cluster.delete(t, &opts) {
        Ok(_) => Ok(()),
        Err(e) if e.code == 404 || e.code == 409 => Ok(()),
        Err(e) => Err(e),
    }
}

/// A read-modify-write of the main resource; `change` returns whether it changed
/// anything. Returns whether a write happened.
pub fn update(
    ctx: &Ctx,
    group: &str,
    plural: &str,
    ns: &str,
    name: &str,
    manager: &str,
    change: impl FnOnce(&mut Value) -> bool,
) -> bool {
    write(ctx, group, plural, ns, name, "", manager, change)
}

/// A read-modify-write of the status subresource.
pub fn update_status(
    ctx: &Ctx,
    group: &str,
    plural: &str,
    ns: &str,
    name: &str,
    manager: &str,
    change: impl FnOnce(&mut Value) -> bool,
) -> bool {
    write(ctx, group, plural, ns, name, "status", manager, change)
}

#[allow(clippy::too_many_arguments)]
fn write(
    ctx: &Ctx,
    group: &str,
    plural: &str,
    ns: &str,
    name: &str,
    subresource: &str,
    manager: &str,
    change: impl FnOnce(&mut Value) -> bool,
) -> bool {
    let Some(mut t) = target(ctx, group, plural, ns, name) else {
        return false;
    };
    t.subresource = subresource.to_string();
    match ctx.cluster.mutate(&t, manager, change) {
        Ok(w) => w.is_some(),
        Err(e) => {
            tracing::debug!(plural, name, error = %e, "controller write");
            false
        }
    }
}

/// An ownerReference to `owner` (a stored object, which carries its kind).
pub fn owner_ref(owner: &Value, controller: bool) -> Value {
    json!({
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta::name(owner),
        "uid": meta::uid(owner),
        "controller": controller,
        "blockOwnerDeletion": true,
    })
}

/// The ownerReference with `controller: true`, if any.
pub fn controller_ref(object: &Value) -> Option<&Value> {
    owner_refs(object)
        .iter()
        .find(|r| r["controller"].as_bool() == Some(true))
}

pub fn owner_refs(object: &Value) -> &[Value] {
    object["metadata"]["ownerReferences"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Whether `object`'s controller is the object with `uid`.
pub fn controlled_by(object: &Value, uid: &str) -> bool {
    controller_ref(object).is_some_and(|r| r["uid"] == uid)
}

/// Objects of `group/plural` in `ns` that `owner` controls, and orphans its selector
/// matches, which it adopts (as controllers adopt what they select).
pub fn claim(
    ctx: &Ctx,
    group: &str,
    plural: &str,
    owner: &Value,
    selector: &crate::selector::LabelSelector,
) -> Vec<Arc<Value>> {
    let ns = meta::namespace(owner);
    let uid = meta::uid(owner);
    let mut out = Vec::new();
    for o in list(ctx, group, plural, ns) {
        if controlled_by(&o, uid) {
            out.push(o);
        } else if controller_ref(&o).is_none()
            && !meta::is_deleting(&o)
            && !meta::is_deleting(owner)
            && !selector.is_empty()
            && selector.matches_object(&o)
        {
            let reference = owner_ref(owner, true);
            let adopted = update(ctx, group, plural, ns, meta::name(&o), MANAGER_ADOPT, |x| {
                let m = meta::meta_mut(x);
                let refs = m.entry("ownerReferences").or_insert_with(|| json!([]));
                if let Some(a) = refs.as_array_mut() {
                    a.push(reference.clone());
                }
                true
            });
            if adopted && let Some(o) = get(ctx, group, plural, ns, meta::name(&o)) {
                out.push(o);
            }
        }
    }
    out
}

const MANAGER_ADOPT: &str = super::MANAGER;

/// Sets a condition in a list of conditions, keeping `lastTransitionTime` when the
/// status did not change (as the controllers' `SetCondition` helpers do). Returns
/// whether anything changed. `condition` carries type, status, reason and message.
pub fn set_condition(conditions: &mut Vec<Value>, mut condition: Value, times: &[&str]) -> bool {
    let ty = condition["type"].clone();
    let now = meta::now();
    if let Some(i) = conditions.iter().position(|c| c["type"] == ty) {
        let current = &conditions[i];
        if current["status"] == condition["status"]
            && current["reason"] == condition["reason"]
            && current["message"] == condition["message"]
        {
            return false;
        }
        for t in times {
            let keep = *t == "lastTransitionTime" && current["status"] == condition["status"];
            condition[*t] = if keep {
                current[*t].clone()
            } else {
                json!(now)
            };
        }
        conditions.remove(i);
    } else {
        for t in times {
            condition[*t] = json!(now);
        }
    }
    conditions.push(condition);
    true
}

/// `status.conditions` as a list.
pub fn conditions(object: &Value) -> Vec<Value> {
    object["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

pub fn condition<'a>(object: &'a Value, ty: &str) -> Option<&'a Value> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == ty)
}

/// Sets `key` in a status map to `n`, or removes it when zero (Go's `omitempty`).
pub fn set_count(status: &mut Map<String, Value>, key: &str, n: i64) {
    if n == 0 {
        status.shift_remove(key);
    } else {
        status.insert(key.to_string(), json!(n));
    }
}

/// Template labels, annotations and spec for a new pod owned by `owner`.
pub fn pod_from_template(
    owner: &Value,
    template: &Value,
    name: Option<&str>,
    generate_name: &str,
) -> Value {
    let mut metadata = Map::new();
    match name {
        Some(n) => {
            metadata.insert("name".into(), json!(n));
        }
        None => {
            metadata.insert("generateName".into(), json!(generate_name));
        }
    }
    metadata.insert("namespace".into(), json!(meta::namespace(owner)));
    for k in ["labels", "annotations", "finalizers"] {
        if let Some(v) = template["metadata"].get(k).filter(|v| !v.is_null()) {
            metadata.insert(k.into(), v.clone());
        }
    }
    metadata.insert("ownerReferences".into(), json!([owner_ref(owner, true)]));
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": template["spec"].clone(),
    })
}

/// `intstr` values (`3`, `"25%"`) resolved against `total`, rounding up or down.
pub fn int_or_percent(v: &Value, total: i64, round_up: bool) -> i64 {
    match v {
        Value::Number(n) => n.as_i64().unwrap_or(0),
        Value::String(s) => match s.strip_suffix('%').and_then(|p| p.parse::<i64>().ok()) {
            Some(p) => {
                let scaled = p * total;
                if round_up {
                    (scaled + 99).div_euclid(100)
                } else {
                    scaled.div_euclid(100)
                }
            }
            None => s.parse().unwrap_or(0),
        },
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_as_the_controllers_do() {
        assert_eq!(int_or_percent(&json!("25%"), 3, true), 1);
        assert_eq!(int_or_percent(&json!("25%"), 3, false), 0);
        assert_eq!(int_or_percent(&json!("25%"), 4, false), 1);
        assert_eq!(int_or_percent(&json!(2), 4, false), 2);
    }

    #[test]
    fn conditions_keep_their_transition_time_while_the_status_holds() {
        let mut c = vec![
            json!({"type": "A", "status": "True", "reason": "X", "lastTransitionTime": "old"}),
        ];
        assert!(set_condition(
            &mut c,
            json!({"type": "A", "status": "True", "reason": "Y"}),
            &["lastTransitionTime"]
        ));
        assert_eq!(c[0]["lastTransitionTime"], "old");
        assert!(!set_condition(
            &mut c,
            json!({"type": "A", "status": "True", "reason": "Y"}),
            &["lastTransitionTime"]
        ));
        assert!(set_condition(
            &mut c,
            json!({"type": "A", "status": "False", "reason": "Y"}),
            &["lastTransitionTime"]
        ));
        assert_ne!(c[0]["lastTransitionTime"], "old");
    }
}
