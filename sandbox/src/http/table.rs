//! Server-side printing: the `Table` objects kubectl asks for (`as=Table`) and prints as
//! its columns. Each built-in type has the API server's columns (names, types, formats,
//! priorities) and cells; a CRD's types use its `additionalPrinterColumns`; anything else
//! gets `NAME`/`CREATED AT`, as the API server's default table convertor gives.
//!
//! The per-type printers live in `table_pod`, `table_apps` (workloads), `table_net`
//! (services and networking) and `table_cluster` (everything else); this module holds
//! the Table itself and the formatting they share.

use serde_json::{Map, Value, json};

use crate::meta;
use crate::resources::ResourceDef;
use crate::status::{ApiError, ApiResult};

/// How much of each object rides along in a row (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Include {
    None,
    Metadata,
    Object,
}

impl Include {
    /// `includeObject` as the API server reads it: unset means Metadata, anything but
    /// the three values is a bad request.
    pub fn parse(s: Option<&str>) -> ApiResult<Include> {
        match s {
            None | Some("") | Some("Metadata") => Ok(Include::Metadata),
            Some("None") => Ok(Include::None),
            Some("Object") => Ok(Include::Object),
            Some(other) => Err(ApiError::bad_request(format!(
                "Unable to convert to Table as requested: includeObject: Invalid value: {other:?}: must be 'Metadata', 'Object', 'None', or empty"
            ))),
        }
    }
}

/// A column: its name, type, format, priority (1 = `-o wide` only) and description.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub name: &'static str,
    pub ty: &'static str,
    pub format: &'static str,
    pub priority: u8,
    pub description: &'static str,
}

/// A column shown by default.
pub const fn col(name: &'static str, ty: &'static str, description: &'static str) -> Column {
    Column {
        name,
        ty,
        format: "",
        priority: 0,
        description,
    }
}

/// A column shown with `-o wide` only.
pub const fn wide(name: &'static str, ty: &'static str, description: &'static str) -> Column {
    Column {
        name,
        ty,
        format: "",
        priority: 1,
        description,
    }
}

/// The first column of nearly every table.
pub const NAME: Column = Column {
    name: "Name",
    ty: "string",
    format: "name",
    priority: 0,
    description: "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated.",
};

/// The Age column (a human duration since creation).
pub const AGE: Column = col(
    "Age",
    "string",
    "CreationTimestamp is a timestamp representing the server time when this object was created.",
);

pub const CONTAINERS: Column = wide(
    "Containers",
    "string",
    "Names of each container in the template.",
);
pub const IMAGES: Column = wide(
    "Images",
    "string",
    "Images referenced by each container in the template.",
);

/// The cells of one object.
pub type Cells = fn(&Value) -> Vec<Value>;

/// How one type is printed: its columns, the cells of one object, and (for a few types)
/// the order rows are listed in.
pub struct Printer {
    pub columns: &'static [Column],
    pub cells: Cells,
    /// Reorders a list before printing (flow schemas by matching precedence).
    pub sort: Option<fn(&mut Vec<&Value>)>,
}

/// The printer of a built-in type, if the API server has one for it.
fn printer(group: &str, plural: &str) -> Option<Printer> {
    super::table_pod::printer(group, plural)
        .or_else(|| super::table_apps::printer(group, plural))
        .or_else(|| super::table_net::printer(group, plural))
        .or_else(|| super::table_cluster::printer(group, plural))
}

/// Whether an Accept header asks for a Table.
pub fn wants_table(accept: &str) -> bool {
    accept.split(',').any(|p| {
        let p = p.replace(' ', "");
        p.contains("as=Table") && p.contains("g=meta.k8s.io")
    })
}

pub const TABLE_CONTENT_TYPE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

/// A Table of `objects` (each as served at `version`).
pub fn table(
    def: &ResourceDef,
    version: &str,
    objects: &[Value],
    include: Include,
    list_meta: Value,
) -> Value {
    let (definitions, rows) = match &def.custom {
        Some(custom) => {
            let columns = super::table_custom::columns(custom.columns.get(version));
            let rows = objects
                .iter()
                .map(|o| (super::table_custom::cells(&columns, o), Value::Null, o))
                .collect::<Vec<_>>();
            (super::table_custom::definitions(&columns), rows)
        }
        None => {
            let printer = printer(&def.group, &def.plural).unwrap_or(Printer {
                columns: DEFAULT_COLUMNS,
                cells: default_cells,
                sort: None,
            });
            let mut ordered: Vec<&Value> = objects.iter().collect();
            if let Some(sort) = printer.sort {
                sort(&mut ordered);
            }
            let rows = ordered
                .into_iter()
                .map(|o| ((printer.cells)(o), row_conditions(def, o), o))
                .collect::<Vec<_>>();
            (definitions(printer.columns), rows)
        }
    };
    let api_version = def.api_version(version);
    let rows: Vec<Value> = rows
        .into_iter()
        .map(|(cells, conditions, o)| {
            let mut row = json!({ "cells": cells });
            if !conditions.is_null() {
                row["conditions"] = conditions;
            }
            match include {
                Include::None => row["object"] = Value::Null,
                Include::Metadata => {
                    row["object"] = json!({
                        "kind": "PartialObjectMetadata",
                        "apiVersion": "meta.k8s.io/v1",
                        "metadata": o["metadata"],
                    });
                }
                Include::Object => row["object"] = with_type_meta(o, &def.kind, &api_version),
            }
            row
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": definitions,
        "rows": rows,
    })
}

/// A Table of a Scale (`kubectl get --subresource=scale`): its name (not marked as the
/// name column, as in the API server), desired and current replicas, and age.
pub fn scale_table(scale: &Value, include: Include, list_meta: Value) -> Value {
    const SCALE: &[Column] = &[
        Column { format: "", ..NAME },
        col(
            "Desired",
            "integer",
            "desired number of instances for the scaled object.",
        ),
        col(
            "Available",
            "integer",
            "actual number of observed instances of the scaled object.",
        ),
        AGE,
    ];
    let cells = vec![
        name(scale),
        json!(int(&scale["spec"]["replicas"])),
        json!(int(&scale["status"]["replicas"])),
        age(scale),
    ];
    let mut row = json!({ "cells": cells });
    row["object"] = match include {
        Include::None => Value::Null,
        Include::Metadata => json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": scale["metadata"],
        }),
        Include::Object => scale.clone(),
    };
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": definitions(SCALE),
        "rows": [row],
    })
}

/// An object with kind and apiVersion first (list items are served without them, but a
/// row's object is a whole object: kubectl's `--sort-by` decodes it).
fn with_type_meta(o: &Value, kind: &str, api_version: &str) -> Value {
    let mut out = Map::new();
    out.insert("kind".into(), json!(kind));
    out.insert("apiVersion".into(), json!(api_version));
    if let Some(m) = o.as_object() {
        for (k, v) in m {
            if k != "kind" && k != "apiVersion" {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

/// Row conditions: a pod that has finished is marked Completed.
fn row_conditions(def: &ResourceDef, o: &Value) -> Value {
    if !(def.group.is_empty() && def.plural == "pods") {
        return Value::Null;
    }
    match o["status"]["phase"].as_str() {
        Some("Succeeded") => json!([{
            "type": "Completed", "status": "True", "reason": "Succeeded",
            "message": "The pod has completed successfully.",
        }]),
        Some("Failed") => json!([{
            "type": "Completed", "status": "True", "reason": "Failed",
            "message": "The pod failed.",
        }]),
        _ => Value::Null,
    }
}

fn definitions(columns: &[Column]) -> Vec<Value> {
    columns
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "type": c.ty,
                "format": c.format,
                "description": c.description,
                "priority": c.priority,
            })
        })
        .collect()
}

/// The default table convertor's columns, for types the API server has no printer for
/// (roles, limit ranges, CRDs...).
const DEFAULT_COLUMNS: &[Column] = &[
    NAME,
    Column {
        name: "Created At",
        ty: "date",
        format: "",
        priority: 0,
        description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
    },
];

fn default_cells(o: &Value) -> Vec<Value> {
    vec![
        json!(meta::name(o)),
        match o["metadata"]["creationTimestamp"].as_str() {
            Some(t) => json!(t),
            None => json!("0001-01-01T00:00:00Z"),
        },
    ]
}

// ---- formatting shared by the printers ----

/// Kubernetes' short human duration (`duration.HumanDuration`), as the Age column shows it.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// Time since a timestamp field, or `<unknown>` when it is unset.
pub fn since(v: &Value) -> String {
    v.as_str()
        .filter(|t| !t.is_empty())
        .and_then(meta::age_seconds)
        .map(human_duration)
        .unwrap_or_else(|| "<unknown>".into())
}

/// Seconds between two timestamps, if both parse.
pub fn between(from: &Value, to: &Value) -> Option<i64> {
    let parse = |v: &Value| {
        chrono::DateTime::parse_from_rfc3339(v.as_str()?)
            .ok()
            .map(|t| t.timestamp())
    };
    Some(parse(to)? - parse(from)?)
}

/// The Age cell of an object.
pub fn age(o: &Value) -> Value {
    json!(since(&o["metadata"]["creationTimestamp"]))
}

pub fn name(o: &Value) -> Value {
    json!(meta::name(o))
}

/// A string field, or `""`.
pub fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A string field, or `fallback` when unset or empty.
pub fn text_or(v: &Value, fallback: &str) -> String {
    match v.as_str() {
        Some(s) if !s.is_empty() => s.to_string(),
        _ => fallback.to_string(),
    }
}

/// An integer field (0 when unset).
pub fn int(v: &Value) -> i64 {
    v.as_i64()
        .or_else(|| v.as_f64().map(|f| f as i64))
        .unwrap_or(0)
}

/// The length of an array field (0 when unset).
pub fn len(v: &Value) -> i64 {
    v.as_array().map_or(0, |a| a.len() as i64)
}

/// `True`/`False`, or `<unset>` for a missing optional boolean.
pub fn bool_ptr(v: &Value) -> String {
    match v.as_bool() {
        Some(true) => "True".into(),
        Some(false) => "False".into(),
        None => "<unset>".into(),
    }
}

/// An int-or-string field (`1`, `25%`).
pub fn int_or_string(v: &Value) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        _ => String::new(),
    }
}

/// A label map as `k=v,k2=v2` in key order, or `<none>` (`labels.FormatLabels`).
pub fn format_labels(v: &Value) -> String {
    let Some(m) = v.as_object().filter(|m| !m.is_empty()) else {
        return "<none>".into();
    };
    let mut parts: Vec<String> = m.iter().map(|(k, v)| format!("{k}={}", text(v))).collect();
    parts.sort();
    parts.join(",")
}

/// A `metav1.LabelSelector` as the selector string the API server prints (requirements
/// in key order, set values sorted), `""` when it selects everything or is unset, and
/// `None` when it is invalid.
pub fn selector_string(sel: &Value) -> Option<String> {
    let Some(sel) = sel.as_object() else {
        return Some(String::new());
    };
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(m) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            reqs.push((k.clone(), format!("{k}={}", text(v))));
        }
    }
    if let Some(exprs) = sel.get("matchExpressions").and_then(Value::as_array) {
        for e in exprs {
            let key = text(&e["key"]);
            let mut values: Vec<String> = e["values"]
                .as_array()
                .map(|a| a.iter().map(text).collect())
                .unwrap_or_default();
            values.sort();
            values.dedup();
            let s = match e["operator"].as_str()? {
                "In" => format!("{key} in ({})", values.join(",")),
                "NotIn" => format!("{key} notin ({})", values.join(",")),
                "Exists" => key.clone(),
                "DoesNotExist" => format!("!{key}"),
                _ => return None,
            };
            reqs.push((key, s));
        }
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    Some(
        reqs.into_iter()
            .map(|(_, s)| s)
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// `metav1.FormatLabelSelector`: the selector string, `<none>` when empty, `<error>`
/// when invalid.
pub fn format_label_selector(sel: &Value) -> String {
    match selector_string(sel) {
        None => "<error>".into(),
        Some(s) if s.is_empty() => "<none>".into(),
        Some(s) => s,
    }
}

/// A pod template's container names and images, comma-separated.
pub fn containers(list: &Value) -> (Value, Value) {
    let items = list.as_array().map(Vec::as_slice).unwrap_or_default();
    let names: Vec<String> = items.iter().map(|c| text(&c["name"])).collect();
    let images: Vec<String> = items.iter().map(|c| text(&c["image"])).collect();
    (json!(names.join(",")), json!(images.join(",")))
}

/// Whether a condition of `type` is `True` (the first condition of that type decides).
pub fn condition_true(conditions: &Value, ty: &str) -> bool {
    conditions
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == ty))
        .is_some_and(|c| c["status"] == "True")
}

/// Lists with more than `max` entries end in `+ N more...`.
pub fn list_with_more(list: &[String], max: usize, empty: &str) -> String {
    if list.is_empty() {
        return empty.to_string();
    }
    if list.len() > max {
        return format!("{} + {} more...", list[..max].join(","), list.len() - max);
    }
    list.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_as_kubectl_prints_them() {
        assert_eq!(human_duration(5), "5s");
        assert_eq!(human_duration(119), "119s");
        assert_eq!(human_duration(150), "2m30s");
        assert_eq!(human_duration(600), "10m");
        assert_eq!(human_duration(3 * 3600 + 60), "3h1m");
        assert_eq!(human_duration(9 * 3600), "9h");
        assert_eq!(human_duration(50 * 3600), "2d2h");
        assert_eq!(human_duration(30 * 86400), "30d");
        assert_eq!(human_duration(-5), "<invalid>");
    }

    #[test]
    fn selectors_print_in_key_order() {
        let sel = json!({
            "matchLabels": {"tier": "web", "app": "x"},
            "matchExpressions": [{"key": "env", "operator": "In", "values": ["b", "a"]},
                                 {"key": "legacy", "operator": "DoesNotExist"}],
        });
        assert_eq!(
            format_label_selector(&sel),
            "app=x,env in (a,b),!legacy,tier=web"
        );
        assert_eq!(format_label_selector(&json!({})), "<none>");
        assert_eq!(format_label_selector(&Value::Null), "<none>");
        assert_eq!(
            format_label_selector(&json!({"matchExpressions": [{"key": "a", "operator": "Is"}]})),
            "<error>"
        );
        assert_eq!(format_labels(&json!({"b": "2", "a": "1"})), "a=1,b=2");
        assert_eq!(format_labels(&json!({})), "<none>");
    }

    #[test]
    fn include_object_values_are_checked() {
        assert_eq!(Include::parse(None).unwrap(), Include::Metadata);
        assert_eq!(Include::parse(Some("None")).unwrap(), Include::None);
        assert_eq!(Include::parse(Some("bogus")).unwrap_err().code, 400);
    }

    #[test]
    fn scales_print_desired_and_available() {
        let scale = json!({"kind": "Scale", "metadata": {"name": "web"},
            "spec": {"replicas": 3}, "status": {"replicas": 1}});
        let t = scale_table(&scale, Include::None, json!({}));
        assert_eq!(t["columnDefinitions"][0]["format"], "");
        assert_eq!(t["columnDefinitions"][1]["name"], "Desired");
        assert_eq!(
            t["rows"][0]["cells"].as_array().unwrap()[..3],
            [json!("web"), json!(3), json!(1)]
        );
    }

    #[test]
    fn custom_resources_use_their_printer_columns_or_age() {
        use crate::resources::{CustomInfo, ResourceDef};
        use std::sync::Arc;
        let mut info = CustomInfo::default();
        info.columns.insert(
            "v1".into(),
            vec![
                json!({"name": "Size", "type": "integer", "jsonPath": ".spec.size"}),
                json!({"name": "Shiny", "type": "boolean", "jsonPath": ".spec.shiny", "priority": 1}),
            ],
        );
        let def = ResourceDef {
            group: "example.com".into(),
            versions: vec!["v1".into(), "v2".into()],
            kind: "Widget".into(),
            plural: "widgets".into(),
            singular: "widget".into(),
            short_names: vec![],
            categories: vec![],
            namespaced: true,
            verbs: vec![],
            subresources: vec![],
            custom: Some(Arc::new(info)),
        };
        let o = json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w", "creationTimestamp": "2020-01-01T00:00:00Z"},
            "spec": {"size": 3, "shiny": true}});
        let t = table(
            &def,
            "v1",
            std::slice::from_ref(&o),
            Include::Metadata,
            json!({}),
        );
        let names: Vec<&str> = t["columnDefinitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["Name", "Size", "Shiny"]);
        assert_eq!(t["columnDefinitions"][2]["priority"], 1);
        assert_eq!(t["rows"][0]["cells"], json!(["w", 3, true]));
        assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
        // A version without columns gets Age, a date column.
        let t = table(&def, "v2", &[o], Include::None, json!({}));
        assert_eq!(t["columnDefinitions"][1]["name"], "Age");
        assert_eq!(t["columnDefinitions"][1]["type"], "date");
        assert!(t["rows"][0]["cells"][1].as_str().unwrap().contains('y'));
        assert!(t["rows"][0]["object"].is_null());
    }

    #[test]
    fn types_without_a_printer_get_name_and_created_at() {
        let def = crate::resources::Registry::with_builtins()
            .lookup("rbac.authorization.k8s.io", "v1", "roles")
            .unwrap();
        let o = json!({"metadata": {"name": "r", "creationTimestamp": "2024-01-02T03:04:05Z"}});
        let t = table(
            &def,
            "v1",
            &[o],
            Include::Object,
            json!({"resourceVersion": "5"}),
        );
        assert_eq!(t["columnDefinitions"][1]["name"], "Created At");
        assert_eq!(t["columnDefinitions"][1]["type"], "date");
        assert_eq!(t["rows"][0]["cells"], json!(["r", "2024-01-02T03:04:05Z"]));
        assert_eq!(t["rows"][0]["object"]["kind"], "Role");
        assert_eq!(
            t["rows"][0]["object"]["apiVersion"],
            "rbac.authorization.k8s.io/v1"
        );
    }
}
