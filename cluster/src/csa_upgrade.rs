//! Handing a client-side writer's fields to its server-side apply entry, as client-go's
//! `csaupgrade` does and helm 4 does before it applies server-side to objects it wrote
//! client-side (an upgrade from a client-side revision, every rollback, an install
//! adopting objects).
//!
//! The API server keeps one managedFields entry per manager *and operation*: `helm`'s
//! client-side writes are an `Update` entry, its applies an `Apply` entry, and an apply
//! that changes a field the `Update` entry owns conflicts with it as with any other
//! manager. Moving the `Update` entry's fields into the `Apply` entry first makes the
//! apply the fields' one owner, so it changes and removes them freely.

use serde_json::{Map, Value};

/// The annotation kubectl's client-side apply keeps, which never belongs to an applier.
const LAST_APPLIED_FIELD: &str = "f:kubectl.kubernetes.io/last-applied-configuration";

/// The object's managedFields with `manager`'s `Update` entries (of the main resource,
/// not a subresource) merged into its `Apply` entry, which is made from the newest
/// `Update` entry when there is none yet; `None` when there is nothing to move.
pub fn upgraded_managed_fields(entries: &[Value], manager: &str) -> Option<Vec<Value>> {
    let is = |entry: &Value, operation: &str| {
        entry["manager"] == manager
            && entry["operation"] == operation
            && entry["subresource"].as_str().unwrap_or("").is_empty()
    };
    let updates: Vec<usize> = (0..entries.len())
        .filter(|&i| is(&entries[i], "Update"))
        .collect();
    if updates.is_empty() {
        return None;
    }
    let mut entries = entries.to_vec();
    // The API server lists the newest entry first, so the first is the one converted.
    let target = match entries.iter().position(|e| is(e, "Apply")) {
        Some(index) => index,
        None => {
            let index = updates[0];
            entries[index]["operation"] = Value::String("Apply".into());
            index
        }
    };
    // Only the fields of an Update entry of the Apply entry's apiVersion are merged (the
    // field paths of another version may not mean the same thing); the others go too.
    let api_version = entries[target]["apiVersion"].clone();
    let mut fields = entries[target]["fieldsV1"].clone();
    if let Some(same_version) = updates
        .iter()
        .find(|&&i| i != target && entries[i]["apiVersion"] == api_version)
    {
        union(&mut fields, &entries[*same_version]["fieldsV1"]);
    }
    remove_last_applied(&mut fields);
    entries[target]["fieldsV1"] = fields;
    entries[target]["fieldsType"] = Value::String("FieldsV1".into());
    let mut kept = Vec::with_capacity(entries.len());
    for (index, entry) in entries.into_iter().enumerate() {
        if index == target || !is(&entry, "Update") {
            kept.push(entry);
        }
    }
    Some(kept)
}

/// The field manager chartkit wrote under before it wrote as helm (issue #28). Objects a
/// release of that time holds still carry its entries, which an apply by `helm` without
/// force conflicts with.
pub const LEGACY_MANAGER: &str = "chartkit";

/// The object's managedFields with [`LEGACY_MANAGER`]'s entries of the main resource
/// handed to `manager`: renamed, joined to `manager`'s entry of the same operation (and,
/// for updates, apiVersion), then its `Update` fields moved into its `Apply` entry as
/// [`upgraded_managed_fields`] does; `None` when there is no such entry.
pub fn adopted_legacy_fields(entries: &[Value], manager: &str) -> Option<Vec<Value>> {
    let legacy = |entry: &Value| {
        entry["manager"] == LEGACY_MANAGER && entry["subresource"].as_str().unwrap_or("").is_empty()
    };
    if !entries.iter().any(legacy) {
        return None;
    }
    // The API server refuses two entries with one identity (manager and operation, and
    // the apiVersion of an update), so a renamed entry joins an existing one.
    let same = |a: &Value, b: &Value| {
        a["manager"] == b["manager"]
            && a["operation"] == b["operation"]
            && a["subresource"] == b["subresource"]
            && (a["operation"] == "Apply" || a["apiVersion"] == b["apiVersion"])
    };
    let mut adopted: Vec<Value> = Vec::with_capacity(entries.len());
    for entry in entries {
        let mut entry = entry.clone();
        if legacy(&entry) {
            entry["manager"] = Value::String(manager.into());
        }
        match adopted.iter_mut().find(|kept| same(kept, &entry)) {
            Some(kept) => union(&mut kept["fieldsV1"], &entry["fieldsV1"]),
            None => adopted.push(entry),
        }
    }
    Some(upgraded_managed_fields(&adopted, manager).unwrap_or(adopted))
}

/// Field sets in their managedFields form are tries of JSON objects (`".": {}` marking
/// a member that also has children): their union is the objects merged key by key.
fn union(into: &mut Value, other: &Value) {
    match (into, other) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, value) in b {
                match a.get_mut(key) {
                    Some(existing) => union(existing, value),
                    None => {
                        a.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (into @ Value::Null, other) => *into = other.clone(),
        _ => {}
    }
}

fn remove_last_applied(fields: &mut Value) {
    let Some(metadata) = fields.get_mut("f:metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let Some(annotations) = metadata
        .get_mut("f:annotations")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    if annotations.remove(LAST_APPLIED_FIELD).is_none() {
        return;
    }
    // A node left with no children and not a member itself is no longer in the set.
    if annotations.is_empty() {
        metadata.remove("f:annotations");
        if metadata.is_empty()
            && let Some(root) = fields.as_object_mut()
        {
            root.remove("f:metadata");
        }
    }
}

/// The merge patch that writes `entries` as the object's managedFields, holding only if
/// the object is still at `resource_version` (client-go sends the same two values as a
/// JSON patch; the API server stores the same).
pub fn managed_fields_patch(entries: Vec<Value>, resource_version: &str) -> Value {
    let mut metadata = Map::new();
    metadata.insert("managedFields".into(), Value::Array(entries));
    metadata.insert(
        "resourceVersion".into(),
        Value::String(resource_version.into()),
    );
    serde_json::json!({ "metadata": metadata })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(manager: &str, operation: &str, fields: Value) -> Value {
        json!({
            "manager": manager,
            "operation": operation,
            "apiVersion": "v1",
            "time": "2026-01-01T00:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": fields,
        })
    }

    #[test]
    fn legacy_chartkit_entries_are_handed_to_helm() {
        let entries = vec![
            entry("chartkit", "Apply", json!({"f:data": {"f:a": {}}})),
            entry("helm", "Apply", json!({"f:data": {"f:b": {}}})),
            entry("chartkit", "Update", json!({"f:data": {"f:c": {}}})),
            entry("kubectl-edit", "Update", json!({"f:data": {"f:d": {}}})),
        ];
        let adopted = adopted_legacy_fields(&entries, "helm").expect("something to adopt");
        assert_eq!(adopted.len(), 2, "{adopted:#?}");
        assert_eq!(adopted[0]["manager"], "helm");
        assert_eq!(adopted[0]["operation"], "Apply");
        assert_eq!(
            adopted[0]["fieldsV1"],
            json!({"f:data": {"f:a": {}, "f:b": {}, "f:c": {}}})
        );
        assert_eq!(adopted[1]["manager"], "kubectl-edit");
        assert!(adopted_legacy_fields(&adopted, "helm").is_none());
    }

    #[test]
    fn an_update_entry_alone_becomes_the_apply_entry() {
        let entries = vec![
            entry("helm", "Update", json!({"f:data": {"f:a": {}}})),
            entry("kubectl-edit", "Update", json!({"f:data": {"f:b": {}}})),
        ];
        let upgraded = upgraded_managed_fields(&entries, "helm").expect("an update to move");
        assert_eq!(
            upgraded,
            vec![
                entry("helm", "Apply", json!({"f:data": {"f:a": {}}})),
                entry("kubectl-edit", "Update", json!({"f:data": {"f:b": {}}})),
            ]
        );
    }

    #[test]
    fn update_fields_join_an_existing_apply_entry() {
        let entries = vec![
            entry(
                "helm",
                "Update",
                json!({"f:data": {"f:a": {}}, "f:metadata": {"f:annotations": {
                    "f:kubectl.kubernetes.io/last-applied-configuration": {}}}}),
            ),
            entry("helm", "Apply", json!({"f:data": {"f:b": {}}})),
        ];
        let upgraded = upgraded_managed_fields(&entries, "helm").expect("an update to move");
        assert_eq!(
            upgraded,
            vec![entry(
                "helm",
                "Apply",
                json!({"f:data": {"f:a": {}, "f:b": {}}})
            )]
        );
    }

    #[test]
    fn nothing_to_move_without_an_update_entry_of_the_manager() {
        let entries = vec![
            entry("helm", "Apply", json!({"f:data": {}})),
            entry("someone", "Update", json!({"f:data": {}})),
        ];
        assert_eq!(upgraded_managed_fields(&entries, "helm"), None);
    }
}
