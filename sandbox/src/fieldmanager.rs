//! Managed fields and server-side apply, as the API server's field manager keeps them:
//! one entry per manager, operation (`Apply` or `Update`), apiVersion (for updates) and
//! subresource, each with the set of fields it owns; updates take the fields they change;
//! applies merge their configuration, conflict with other owners unless forced, and remove
//! the fields their manager stops applying when nobody else owns them.

use serde_json::{Map, Value, json};

use crate::fieldset::{PathElement, Set, path_string, walk};
use crate::meta;
use crate::resources::{ResourceDef, split_api_version};
use crate::schema::{self, Node};
use crate::status::{ApiError, ApiResult};

const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// Updaters beyond this many are folded into `ancient-changes` entries.
const MAX_UPDATE_MANAGERS: usize = 10;

#[derive(Debug, Clone)]
struct Entry {
    manager: String,
    apply: bool,
    api_version: String,
    subresource: String,
    time: Option<String>,
    set: Set,
}

impl Entry {
    /// Entries are one per manager, operation and subresource, and for updates per
    /// apiVersion too.
    fn same_owner(&self, other: &Entry) -> bool {
        self.manager == other.manager
            && self.apply == other.apply
            && self.subresource == other.subresource
            && (self.apply || self.api_version == other.api_version)
    }

    /// How conflicts name the owner: `"kubectl-client-side-apply" using apps/v1`.
    fn describe(&self) -> String {
        let mut s = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            s.push_str(&format!(" with subresource {:?}", self.subresource));
        }
        if !self.apply {
            s.push_str(&format!(" using {}", self.api_version));
        }
        s
    }

    /// The identifier the API server sorts conflicting owners by (its JSON form).
    fn identifier(&self) -> String {
        let mut m = Map::new();
        m.insert("manager".into(), json!(self.manager));
        m.insert(
            "operation".into(),
            json!(if self.apply { "Apply" } else { "Update" }),
        );
        if !self.apply {
            m.insert("apiVersion".into(), json!(self.api_version));
        }
        if !self.subresource.is_empty() {
            m.insert("subresource".into(), json!(self.subresource));
        }
        Value::Object(m).to_string()
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("manager".into(), json!(self.manager));
        m.insert(
            "operation".into(),
            json!(if self.apply { "Apply" } else { "Update" }),
        );
        m.insert("apiVersion".into(), json!(self.api_version));
        if let Some(t) = &self.time {
            m.insert("time".into(), json!(t));
        }
        m.insert("fieldsType".into(), json!("FieldsV1"));
        m.insert("fieldsV1".into(), self.set.to_fields_v1());
        if !self.subresource.is_empty() {
            m.insert("subresource".into(), json!(self.subresource));
        }
        Value::Object(m)
    }
}

/// Reads `metadata.managedFields`; the API server's errors for malformed entries.
fn decode(list: Option<&Value>) -> Result<Vec<Entry>, String> {
    let mut out: Vec<Entry> = Vec::new();
    let Some(list) = list else { return Ok(out) };
    let Value::Array(items) = list else {
        return Err("managedFields must be a list".into());
    };
    for (i, item) in items.iter().enumerate() {
        let apply = match item["operation"].as_str() {
            Some("Apply") => true,
            Some("Update") => false,
            _ => return Err("operation must be `Apply` or `Update`".into()),
        };
        let api_version = item["apiVersion"].as_str().unwrap_or("");
        if api_version.is_empty() {
            return Err("apiVersion must not be empty".into());
        }
        match item["fieldsType"].as_str().unwrap_or("") {
            "FieldsV1" => {}
            "" => return Err(format!("missing fieldsType in managed fields entry {i}")),
            other => {
                return Err(format!(
                    "invalid fieldsType {other:?} in managed fields entry {i}"
                ));
            }
        }
        let set = Set::from_fields_v1(&item["fieldsV1"])
            .map_err(|e| format!("error decoding versioned set: {e}"))?;
        let entry = Entry {
            manager: item["manager"].as_str().unwrap_or("").to_string(),
            apply,
            api_version: api_version.to_string(),
            subresource: item["subresource"].as_str().unwrap_or("").to_string(),
            time: item["time"].as_str().map(String::from),
            set,
        };
        out.retain(|e| !e.same_owner(&entry));
        out.push(entry);
    }
    Ok(out)
}

/// Writes the entries back, ordered as the API server orders them: applies first, then
/// by time, manager, apiVersion and subresource.
fn encode(entries: &mut Vec<Entry>) -> Option<Value> {
    entries.retain(|e| !e.set.is_empty());
    if entries.is_empty() {
        return None;
    }
    entries.sort_by(|a, b| {
        b.apply
            .cmp(&a.apply)
            .then_with(|| seconds(&a.time).cmp(&seconds(&b.time)))
            .then_with(|| a.manager.cmp(&b.manager))
            .then_with(|| a.api_version.cmp(&b.api_version))
            .then_with(|| a.subresource.cmp(&b.subresource))
    });
    Some(Value::Array(entries.iter().map(Entry::to_json).collect()))
}

fn seconds(time: &Option<String>) -> i64 {
    time.as_deref()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map_or(0, |t| t.timestamp())
}

fn set_managed(object: &mut Value, entries: &mut Vec<Entry>) {
    let m = meta::meta_mut(object);
    match encode(entries) {
        Some(list) => {
            m.insert("managedFields".into(), list);
        }
        None => {
            m.shift_remove("managedFields");
        }
    }
}

fn take_managed(object: &mut Value) -> Option<Value> {
    object
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
        .and_then(|m| m.shift_remove("managedFields"))
}

/// The fields nobody owns: type, identity and bookkeeping metadata.
fn strip_set() -> Set {
    let mut set = Set::new();
    let f = |s: &str| PathElement::Field(s.to_string());
    set.insert(&[f("apiVersion")]);
    set.insert(&[f("kind")]);
    set.insert(&[f("metadata")]);
    for field in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        set.insert(&[f("metadata"), f(field)]);
    }
    set
}

/// Fields a request to this (sub)resource does not own: a status through the main
/// resource, the spec through `/status`.
fn reset_set(def: &ResourceDef, subresource: &str) -> Set {
    let mut set = Set::new();
    match subresource {
        "" if def.has_status() || def.custom.as_ref().is_some_and(|c| !c.status.is_empty()) => {
            set.insert(&[PathElement::Field("status".into())]);
        }
        "status" => set.insert(&[PathElement::Field("spec".into())]),
        _ => {}
    }
    set
}

fn node_for<'a>(def: &'a ResourceDef, version: &str) -> Node<'a> {
    schema::type_for(def, version).unwrap_or_else(schema::untyped)
}

/// Takes the fields `changed` from every other owner: an update or apply owns what it
/// changed. Returns the conflicts it found (other owners' fields that changed).
fn take_changed(
    entries: &mut [Entry],
    me: &Entry,
    changed: &walk::Comparison,
) -> Vec<(Entry, Set)> {
    let touched = changed.modified.union(&changed.added);
    let mut conflicts = Vec::new();
    for e in entries.iter_mut() {
        if e.same_owner(me) {
            continue;
        }
        let conflict = e.set.intersection(&touched);
        if !conflict.is_empty() {
            conflicts.push((e.clone(), conflict.clone()));
        }
        e.set = e.set.difference(&conflict).difference(&changed.removed);
    }
    conflicts
}

/// Folds the oldest updaters into `ancient-changes` when there are too many.
fn cap_updaters(entries: &mut Vec<Entry>) {
    let mut updaters: Vec<usize> = (0..entries.len()).filter(|&i| !entries[i].apply).collect();
    if updaters.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    updaters.sort_by(|&a, &b| {
        seconds(&entries[a].time)
            .cmp(&seconds(&entries[b].time))
            .then_with(|| entries[a].identifier().cmp(&entries[b].identifier()))
    });
    let excess = updaters.len() - MAX_UPDATE_MANAGERS;
    let mut folded: Vec<Entry> = Vec::new();
    let mut remove = Vec::new();
    for &i in updaters.iter().take(excess + 1) {
        let e = &entries[i];
        match folded.iter_mut().find(|f| f.api_version == e.api_version) {
            Some(bucket) => {
                bucket.set = bucket.set.union(&e.set);
                bucket.time = e.time.clone();
            }
            None => folded.push(Entry {
                manager: "ancient-changes".into(),
                apply: false,
                api_version: e.api_version.clone(),
                subresource: String::new(),
                time: e.time.clone(),
                set: e.set.clone(),
            }),
        }
        remove.push(i);
    }
    let mut i = 0;
    entries.retain(|_| {
        let keep = !remove.contains(&i);
        i += 1;
        keep
    });
    entries.extend(folded);
}

/// The managed fields an update starts from: those sent with it when it sent some (as
/// kubectl does to move a client-side apply's fields to server-side apply), else the live
/// object's.
fn live_or_new(old: Option<&Value>, sent: Option<Value>, subresource: &str) -> Vec<Entry> {
    let live = || decode(old.and_then(|o| meta::meta(o)?.get("managedFields"))).unwrap_or_default();
    if !subresource.is_empty() {
        return live();
    }
    match sent {
        Some(Value::Array(items)) if items.is_empty() => Vec::new(),
        Some(Value::Array(items))
            if items.len() == 1 && items[0].as_object().is_some_and(Map::is_empty) =>
        {
            Vec::new()
        }
        Some(list @ Value::Array(_)) => match decode(Some(&list)) {
            Ok(entries) if !entries.is_empty() => entries,
            _ => live(),
        },
        _ => live(),
    }
}

/// Records an `Update` by `manager` in `new`'s managedFields: the manager owns the fields
/// it changed, which other owners lose.
pub fn record_update(
    def: &ResourceDef,
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    api_version: &str,
    subresource: &str,
) {
    let sent = take_managed(new);
    let mut entries = live_or_new(old, sent, subresource);
    // Objects that have no managed fields (made before they were tracked) stay so.
    if entries.is_empty() && old.is_some() {
        return;
    }
    let version = split_api_version(api_version).1;
    let node = node_for(def, version);
    let mut live = match old {
        Some(o) => o.clone(),
        None => schema::zero_object(&node),
    };
    take_managed(&mut live);
    let mut changes = walk::compare(&node, &live, new);
    changes.exclude(&reset_set(def, subresource));
    let me = Entry {
        manager: if manager.is_empty() {
            "unknown"
        } else {
            manager
        }
        .to_string(),
        apply: false,
        api_version: api_version.to_string(),
        subresource: subresource.to_string(),
        time: None,
        set: Set::new(),
    };
    take_changed(&mut entries, &me, &changes);
    let current = changes
        .modified
        .union(&changes.added)
        .difference(&strip_set());
    match entries.iter_mut().find(|e| e.same_owner(&me)) {
        Some(e) => {
            e.set = e.set.difference(&changes.removed);
            if !current.is_empty() {
                e.set = e.set.union(&current);
                e.time = Some(meta::now());
            }
        }
        None if !current.is_empty() => entries.push(Entry {
            time: Some(meta::now()),
            set: current,
            ..me
        }),
        None => {}
    }
    entries.retain(|e| !e.set.is_empty());
    cap_updaters(&mut entries);
    set_managed(new, &mut entries);
}

/// structured-merge-diff's typed check of an applied object, then the conversion to the
/// Go type of what it lets through: plain errors (500) in the API server's words.
pub fn check_applied(def: &ResourceDef, applied: &Value, api_version: &str) -> ApiResult<()> {
    let version = split_api_version(api_version).1;
    let node = node_for(def, version);
    let errors = walk::validate(&node, applied);
    let gvk = format!("{}/{}, Kind={}", def.group, version, def.kind);
    let what = format!(
        "{}/{}; {gvk}",
        meta::namespace(applied),
        meta::name(applied)
    );
    if !errors.is_empty() {
        let text = if errors.len() == 1 {
            errors[0].clone()
        } else {
            format!("errors:\n  {}", errors.join("\n  "))
        };
        return Err(ApiError::new(
            500,
            "",
            format!("failed to create typed patch object ({what}): {text}"),
        ));
    }
    // What the typed check lets through (any scalar for an int-or-string, a quantity or a
    // time; any number for an integer) fails converting the result to the Go type.
    if def.custom.is_none()
        && let Some(e) = crate::schema::decode::converter_error(&node, applied)
    {
        return Err(ApiError::new(
            500,
            "",
            format!(
                "failed to convert new object ({what}) to proper version: unable to convert unstructured object to {gvk}: {e}"
            ),
        ));
    }
    Ok(())
}

/// Server-side apply of `applied` by `manager` over `current` (absent on create).
pub fn apply(
    def: &ResourceDef,
    current: Option<&Value>,
    applied: &Value,
    manager: &str,
    api_version: &str,
    subresource: &str,
    force: bool,
) -> ApiResult<Value> {
    if meta::meta(applied)
        .and_then(|m| m.get("managedFields"))
        .is_some_and(|v| !v.is_null())
    {
        return Err(ApiError::bad_request("metadata.managedFields must be nil"));
    }
    check_applied(def, applied, api_version)?;
    let node = node_for(def, split_api_version(api_version).1);
    let mut live = current.cloned().unwrap_or_else(|| json!({}));
    let live_managed = take_managed(&mut live);
    let mut entries = decode(live_managed.as_ref())
        .map_err(|e| ApiError::internal(format!("failed to decode managed fields: {e}")))?;
    if entries.is_empty() && current.is_some() {
        // The fields set before the first apply belong to a manager of their own.
        let mut tracked = live.clone();
        record_update(
            def,
            None,
            &mut tracked,
            "before-first-apply",
            api_version,
            subresource,
        );
        entries = decode(take_managed(&mut tracked).as_ref()).unwrap_or_default();
    }
    let outcome = apply_entries(
        def,
        &node,
        &live,
        applied,
        &entries,
        manager,
        api_version,
        subresource,
        force,
    );
    let (mut object, mut entries) = match outcome {
        Err(Conflicts(list)) if manager == "kubectl" && !force => {
            // kubectl's own apply may take the fields its last client-side apply set.
            let allowed = last_applied_fields(&node, &live);
            if list
                .iter()
                .all(|(_, set)| set.paths().iter().all(|p| allowed.has(p)))
            {
                apply_entries(
                    def,
                    &node,
                    &live,
                    applied,
                    &entries,
                    manager,
                    api_version,
                    subresource,
                    true,
                )
                .map_err(|_| ApiError::internal("apply failed"))?
            } else {
                return Err(conflict_error(&list, Some(&allowed)));
            }
        }
        Err(Conflicts(list)) => return Err(conflict_error(&list, None)),
        Ok(done) => done,
    };
    if manager == "kubectl" && last_applied(&object).is_some() {
        let mut config = applied.clone();
        if let Some(a) = meta::meta_mut(&mut config)
            .get_mut("annotations")
            .and_then(Value::as_object_mut)
        {
            a.shift_remove(LAST_APPLIED);
            if a.is_empty() {
                meta::meta_mut(&mut config).shift_remove("annotations");
            }
        }
        let text = format!("{}\n", crate::patch::go_json(&config));
        if let Some(a) = meta::meta_mut(&mut object)
            .get_mut("annotations")
            .and_then(Value::as_object_mut)
        {
            a.insert(LAST_APPLIED.into(), json!(text));
        }
    }
    set_managed(&mut object, &mut entries);
    Ok(object)
}

struct Conflicts(Vec<(Entry, Set)>);

#[allow(clippy::too_many_arguments)]
fn apply_entries(
    def: &ResourceDef,
    node: &Node<'_>,
    live: &Value,
    applied: &Value,
    entries: &[Entry],
    manager: &str,
    api_version: &str,
    subresource: &str,
    force: bool,
) -> Result<(Value, Vec<Entry>), Conflicts> {
    let mut entries = entries.to_vec();
    let reset = reset_set(def, subresource);
    let merged = walk::merge(node, live, applied).unwrap_or_else(|_| live.clone());
    let me = Entry {
        manager: manager.to_string(),
        apply: true,
        api_version: api_version.to_string(),
        subresource: subresource.to_string(),
        time: None,
        set: walk::to_set(node, applied).recursive_difference(&reset),
    };
    let last = entries
        .iter()
        .find(|e| e.same_owner(&me))
        .map(|e| e.set.clone())
        .unwrap_or_default();
    let previous_time = entries
        .iter()
        .find(|e| e.same_owner(&me))
        .and_then(|e| e.time.clone());
    entries.retain(|e| !e.same_owner(&me));
    entries.push(me.clone());
    let mut object = prune(node, &merged, &entries, &last);
    let mut changes = walk::compare(node, live, &object);
    changes.exclude(&reset);
    let mut others = entries.clone();
    let conflicts = take_changed(&mut others, &me, &changes);
    if !force && !conflicts.is_empty() {
        return Err(Conflicts(conflicts));
    }
    walk::drop_nulls(&mut object);
    let changed = !crate::fieldset::values_equal(live, &object);
    let mut entries = others;
    if let Some(e) = entries.iter_mut().find(|e| e.same_owner(&me)) {
        e.set = e.set.difference(&strip_set());
        e.time = if changed || previous_time.is_none() {
            Some(meta::now())
        } else {
            previous_time
        };
    }
    entries.retain(|e| !e.set.is_empty());
    Ok((object, entries))
}

/// Removes the fields the applier applied before and applies no more, unless another
/// manager owns them (structured-merge-diff's prune, step for step).
fn prune(node: &Node<'_>, merged: &Value, entries: &[Entry], last: &Set) -> Value {
    if last.is_empty() {
        return merged.clone();
    }
    let named = |s: &Set| walk::with_named_fields(node, s);
    let last_named = named(last);
    let first = walk::remove_items(node, merged, &last_named);
    let managed = entries.iter().fold(Set::new(), |acc, e| acc.union(&e.set));
    let merged_set = named(&walk::to_set(node, merged));
    let first_set = named(&walk::to_set(node, &first));
    let unowned = merged_set.difference(&first_set.union(&named(&managed)));
    let second = walk::remove_items(node, merged, &unowned);
    let second_set = named(&walk::to_set(node, &second));
    let dangling = merged_set.difference(&second_set).intersection(&last_named);
    walk::remove_items(node, merged, &dangling)
}

fn last_applied(object: &Value) -> Option<&str> {
    meta::meta(object)?
        .get("annotations")?
        .get(LAST_APPLIED)?
        .as_str()
        .filter(|s| !s.is_empty())
}

/// The fields kubectl's last client-side apply set and that still hold the values it set.
fn last_applied_fields(node: &Node<'_>, live: &Value) -> Set {
    let Some(text) = last_applied(live) else {
        return Set::new();
    };
    let Ok(config) = serde_json::from_str::<Value>(text) else {
        return Set::new();
    };
    let set = walk::to_set(node, &config);
    let diff = walk::compare(node, &config, live);
    set.difference(&diff.modified)
        .difference(&diff.added)
        .difference(&diff.removed)
}

/// The API server's 409 for conflicts: `Apply failed with 1 conflict: conflict with
/// "kubectl-client-side-apply" using apps/v1: .spec.replicas`.
fn conflict_error(list: &[(Entry, Set)], allowed: Option<&Set>) -> ApiError {
    let mut conflicts: Vec<(&Entry, Vec<PathElement>)> = Vec::new();
    let mut sorted: Vec<&(Entry, Set)> = list.iter().collect();
    sorted.sort_by_key(|(e, _)| e.identifier());
    for (entry, set) in sorted {
        for path in set.paths() {
            if allowed.is_some_and(|a| a.has(&path)) {
                continue;
            }
            conflicts.push((entry, path));
        }
    }
    let message = if conflicts.len() == 1 {
        format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            conflicts[0].0.describe(),
            path_string(&conflicts[0].1)
        )
    } else {
        let mut lines = Vec::new();
        let mut last = None;
        for (entry, path) in &conflicts {
            let id = entry.identifier();
            if last.as_ref() != Some(&id) {
                lines.push(format!("conflicts with {}:", entry.describe()));
                last = Some(id);
            }
            lines.push(format!("- {}", path_string(path)));
        }
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|(e, p)| {
            json!({
                "reason": "FieldManagerConflict",
                "message": format!("conflict with {}", e.describe()),
                "field": path_string(p),
            })
        })
        .collect();
    ApiError::new(409, "Conflict", message).with_details(json!({ "causes": causes }))
}

#[cfg(test)]
mod tests;
