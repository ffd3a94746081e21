//! CustomResourceDefinitions: the types they define once Established, and their
//! schemas' defaults and validation for custom resources.
//!
//! Validation runs in the API server's order (apiextensions-apiserver's
//! `customResourceStrategy.Validate`), each part in its words:
//! 1. the structural schema: `type` (with `nullable`, `x-kubernetes-int-or-string`,
//!    `x-kubernetes-preserve-unknown-fields`), `required`, `enum`, `pattern` (Go's regexp
//!    syntax), `format` (the formats the API server keeps, see `formats`; numbers against
//!    `int32`/`uint32`/`float` ranges), `minimum`/`maximum` (and their exclusive forms),
//!    `multipleOf`, `minLength`/`maxLength`, `minItems`/`maxItems`,
//!    `minProperties`/`maxProperties`, `properties`, `additionalProperties` and `items`;
//! 2. embedded resources (`x-kubernetes-embedded-resource`): `apiVersion` and `kind`
//!    present and well formed, `metadata` an object whose name, generateName and labels
//!    follow ObjectMeta's rules;
//! 3. `x-kubernetes-list-type` `set` and `map` uniqueness (`lists`);
//! 4. `x-kubernetes-validations` CEL rules (`cel`), with `oldSelf` on updates, unless an
//!    earlier error blocks them as it blocks the API server's.
//!
//! `x-kubernetes-map-type` changes no validation; it matters to merges, where
//! `schema/node.rs` reads it. Not checked: `uniqueItems` (the API server forbids it in a
//! structural schema), validation ratcheting (an update keeping an invalid value the old
//! object already had is refused here, accepted by Kubernetes 1.33+), and the CEL gaps
//! `cel` names.

mod cel;
mod formats;
mod lists;

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::resources::{CustomInfo, ResourceDef, compare_versions, split_api_version};
use crate::status::Cause;

/// The resource type a CRD defines, or `None` when it serves no version.
pub fn resource_def(crd: &Value) -> Option<ResourceDef> {
    let spec = &crd["spec"];
    let names = &spec["names"];
    let group = spec["group"].as_str()?.to_string();
    let kind = names["kind"].as_str()?.to_string();
    let plural = names["plural"].as_str()?.to_string();
    let singular = names["singular"]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(String::from)
        .unwrap_or_else(|| kind.to_ascii_lowercase());
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut info = CustomInfo {
        crd_name: crate::meta::name(crd).to_string(),
        ..CustomInfo::default()
    };
    let mut served: Vec<String> = Vec::new();
    let mut storage = None;
    let mut subresources: Vec<String> = Vec::new();
    for v in spec["versions"].as_array().into_iter().flatten() {
        let Some(name) = v["name"].as_str() else {
            continue;
        };
        if v["storage"] == true {
            storage = Some(name.to_string());
        }
        if v["served"] != true {
            continue;
        }
        served.push(name.to_string());
        if let Some(schema) = v["schema"]["openAPIV3Schema"].as_object() {
            info.schemas
                .insert(name.to_string(), Value::Object(schema.clone()));
        }
        if let Some(cols) = v["additionalPrinterColumns"].as_array() {
            info.columns.insert(name.to_string(), cols.clone());
        }
        if v["subresources"]["status"].is_object() {
            info.status.push(name.to_string());
            if !subresources.iter().any(|s| s == "status") {
                subresources.push("status".into());
            }
        }
        if let Some(scale) = v["subresources"]["scale"].as_object() {
            info.scale
                .insert(name.to_string(), Value::Object(scale.clone()));
            if !subresources.iter().any(|s| s == "scale") {
                subresources.push("scale".into());
            }
        }
    }
    if served.is_empty() {
        return None;
    }
    served.sort_by(|a, b| compare_versions(b, a));
    // Objects are stored at the storage version, which leads the list.
    if let Some(s) = storage
        && let Some(i) = served.iter().position(|v| *v == s)
    {
        let s = served.remove(i);
        served.insert(0, s);
    }
    subresources.sort();
    Some(ResourceDef {
        group,
        versions: served,
        kind,
        plural,
        singular,
        short_names: strings(&names["shortNames"]),
        categories: strings(&names["categories"]),
        namespaced: spec["scope"] != "Cluster",
        verbs: [
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "create",
            "update",
            "watch",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        subresources,
        custom: Some(Arc::new(info)),
    })
}

/// What a CRD's create or update must satisfy beyond metadata, in the API server's
/// words.
pub fn validate_definition(crd: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let spec = &crd["spec"];
    let group = spec["group"].as_str().unwrap_or("");
    let plural = spec["names"]["plural"].as_str().unwrap_or("");
    if group.is_empty() {
        causes.push(Cause::required("spec.group", ""));
    } else if !group.contains('.') {
        causes.push(Cause::invalid(
            "spec.group",
            &json!(group),
            "should be a domain with at least one dot",
        ));
    }
    if plural.is_empty() {
        causes.push(Cause::required("spec.names.plural", ""));
    }
    if spec["names"]["kind"].as_str().is_none_or(str::is_empty) {
        causes.push(Cause::required("spec.names.kind", ""));
    }
    let name = crate::meta::name(crd);
    if !group.is_empty() && !plural.is_empty() && name != format!("{plural}.{group}") {
        causes.push(Cause::invalid(
            "metadata.name",
            &json!(name),
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    match spec["scope"].as_str() {
        Some("Namespaced" | "Cluster") => {}
        None => causes.push(Cause::required("spec.scope", "")),
        Some(other) => causes.push(Cause::not_supported(
            "spec.scope",
            &json!(other),
            &["Cluster", "Namespaced"],
        )),
    }
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    if versions.is_empty() {
        causes.push(Cause::invalid(
            "spec.versions",
            &Value::Null,
            "must have exactly one version marked as storage version",
        ));
    } else {
        let storage = versions.iter().filter(|v| v["storage"] == true).count();
        if storage != 1 {
            causes.push(Cause {
                reason: "FieldValueInvalid",
                field: "spec.versions".into(),
                value: Some(format!("{}", Value::Array(versions.clone()))),
                detail: "must have exactly one version marked as storage version".into(),
            });
        }
        if !versions.iter().any(|v| v["served"] == true) {
            causes.push(Cause {
                reason: "FieldValueInvalid",
                field: "spec.versions".into(),
                value: Some(format!("{}", Value::Array(versions.clone()))),
                detail: "must have at least one version marked as served".into(),
            });
        }
        for (i, v) in versions.iter().enumerate() {
            if v["schema"]["openAPIV3Schema"].is_null() {
                causes.push(Cause::required(
                    format!("spec.versions[{i}].schema.openAPIV3Schema"),
                    "schemas are required",
                ));
            }
        }
    }
    causes
}

fn schema_for<'a>(def: &'a ResourceDef, object: &Value) -> Option<&'a Value> {
    let custom = def.custom.as_ref()?;
    let version = object["apiVersion"]
        .as_str()
        .map(|a| split_api_version(a).1)
        .unwrap_or(&def.versions[0]);
    custom
        .schemas
        .get(version)
        .or_else(|| custom.schemas.get(&def.versions[0]))
}

/// Fills in the defaults the CRD's structural schema declares.
pub fn apply_schema_defaults(def: &ResourceDef, object: &mut Value) {
    let Some(schema) = schema_for(def, object).cloned() else {
        return;
    };
    default_into(&schema, object, true);
}

fn default_into(schema: &Value, value: &mut Value, root: bool) {
    match value {
        Value::Object(map) => {
            if let Some(props) = schema["properties"].as_object() {
                for (name, prop) in props {
                    if root && (name == "metadata" || name == "apiVersion" || name == "kind") {
                        continue;
                    }
                    if !map.contains_key(name)
                        && let Some(d) = prop.get("default")
                    {
                        map.insert(name.clone(), d.clone());
                    }
                    if let Some(child) = map.get_mut(name) {
                        default_into(prop, child, false);
                    }
                }
            }
            if let Some(extra) = schema["additionalProperties"].as_object() {
                let extra = Value::Object(extra.clone());
                for (_, child) in map.iter_mut() {
                    default_into(&extra, child, false);
                }
            }
        }
        Value::Array(items) if schema["items"].is_object() => {
            for item in items {
                default_into(&schema["items"], item, false);
            }
        }
        _ => {}
    }
}

/// What validating a custom resource found: the errors of a 422, and warnings for
/// rules the sandbox could not evaluate.
#[derive(Debug, Default)]
pub struct Validation {
    pub causes: Vec<Cause>,
    pub warnings: Vec<String>,
}

/// Validates a custom resource against the CRD's schema; `old` is the stored object on
/// an update, for transition rules.
pub fn validate_custom(def: &ResourceDef, object: &Value, old: Option<&Value>) -> Validation {
    let Some(schema) = schema_for(def, object) else {
        return Validation::default();
    };
    let mut causes = Vec::new();
    let mut patterns = HashMap::new();
    check(schema, object, "", true, &mut causes, &mut patterns);
    walk(schema, object, "", &mut |s, v, path| {
        if s["x-kubernetes-embedded-resource"] == true
            && let Value::Object(m) = v
        {
            check_embedded(m, path, &mut causes);
        }
    });
    walk(schema, object, "", &mut |s, v, path| {
        if let Value::Array(items) = v {
            lists::check(s, items, path, &mut causes);
        }
    });
    let mut warnings = Vec::new();
    if cel::has_rules(schema) {
        // The API server evaluates no rule once the object has one of these errors.
        let blocking = causes.iter().any(|c| {
            matches!(
                c.reason,
                "FieldValueNotSupported"
                    | "FieldValueRequired"
                    | "FieldValueTooLong"
                    | "FieldValueTooMany"
                    | "FieldValueTypeInvalid"
            )
        });
        if blocking {
            causes.push(Cause::invalid(
                "<nil>",
                &json!("null"),
                "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            ));
        } else {
            let mut out = cel::Outcome::default();
            cel::check(schema, object, old, &mut out);
            causes.extend(out.causes);
            warnings = out.warnings;
        }
    }
    Validation { causes, warnings }
}

/// Calls `visit` with every value of `v` that its schema describes, and that schema,
/// root first; the root's `apiVersion`, `kind` and `metadata` are skipped.
fn walk(schema: &Value, v: &Value, path: &str, visit: &mut dyn FnMut(&Value, &Value, &str)) {
    visit(schema, v, path);
    match v {
        Value::Object(map) => {
            let props = schema["properties"].as_object();
            let extra = &schema["additionalProperties"];
            for (k, value) in map {
                if path.is_empty() && (k == "metadata" || k == "apiVersion" || k == "kind") {
                    continue;
                }
                match props.and_then(|p| p.get(k)) {
                    Some(sub) => walk(sub, value, &child(path, k), visit),
                    None if extra.is_object() => walk(extra, value, &child(path, k), visit),
                    None => {}
                }
            }
        }
        Value::Array(items) if schema["items"].is_object() => {
            for (i, item) in items.iter().enumerate() {
                walk(&schema["items"], item, &format!("{path}[{i}]"), visit);
            }
        }
        _ => {}
    }
}

/// An embedded resource's type and metadata, as apiextensions-apiserver's `objectmeta`
/// checks them.
fn check_embedded(m: &Map<String, Value>, path: &str, causes: &mut Vec<Cause>) {
    if !m.contains_key("apiVersion") {
        causes.push(Cause::required(
            child(path, "apiVersion"),
            "must not be empty",
        ));
    }
    if !m.contains_key("kind") {
        causes.push(Cause::required(child(path, "kind"), "must not be empty"));
    }
    for (k, v) in m {
        let at = child(path, k);
        match k.as_str() {
            "apiVersion" => match v.as_str() {
                None => causes.push(Cause::invalid(at, v, "must be a string")),
                Some("") => causes.push(Cause::invalid(at, v, "must not be empty")),
                Some(a) if a.matches('/').count() > 1 || a.starts_with('/') || a.ends_with('/') => {
                    causes.push(Cause::invalid(
                        at,
                        v,
                        format!("unexpected GroupVersion string: {a}"),
                    ))
                }
                Some(_) => {}
            },
            "kind" => match v.as_str() {
                None => causes.push(Cause::invalid(at, v, "must be a string")),
                Some("") => causes.push(Cause::invalid(at, v, "must not be empty")),
                Some(kind) => {
                    let errs = crate::meta::check_name(
                        &kind.to_lowercase(),
                        crate::meta::NameRule::Dns1035,
                    );
                    if !errs.is_empty() {
                        causes.push(Cause::invalid(
                            at,
                            v,
                            format!(
                                "may have mixed case, but should otherwise match: {}",
                                errs.join(",")
                            ),
                        ));
                    }
                }
            },
            "metadata" => match v {
                Value::Object(meta) => check_embedded_meta(meta, &at, causes),
                Value::Null => {}
                _ => causes.push(Cause::invalid(at, v, "must be an object")),
            },
            _ => {}
        }
    }
}

fn check_embedded_meta(meta: &Map<String, Value>, at: &str, causes: &mut Vec<Cause>) {
    use crate::meta::{NameRule, check_generate_name, check_label_value, check_name};
    if let Some(name) = meta
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        for e in check_name(name, NameRule::Subdomain) {
            causes.push(Cause::invalid(child(at, "name"), &json!(name), e));
        }
    }
    if let Some(g) = meta
        .get("generateName")
        .and_then(Value::as_str)
        .filter(|g| !g.is_empty())
    {
        for e in check_generate_name(g, NameRule::Subdomain) {
            causes.push(Cause::invalid(child(at, "generateName"), &json!(g), e));
        }
    }
    if let Some(labels) = meta.get("labels").and_then(Value::as_object) {
        for (k, v) in labels {
            for e in crate::meta::check_qualified_name(k) {
                causes.push(Cause::invalid(child(at, "labels"), &json!(k), e));
            }
            if let Some(s) = v.as_str() {
                for e in check_label_value(s) {
                    causes.push(Cause::invalid(child(at, "labels"), &json!(s), e));
                }
            }
        }
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_ok(expected: &str, v: &Value) -> bool {
    match (expected, v) {
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        ("number", Value::Number(_)) => true,
        ("string", Value::String(_)) => true,
        ("boolean", Value::Bool(_)) => true,
        ("array", Value::Array(_)) => true,
        ("object", Value::Object(_)) => true,
        ("", _) => true,
        _ => false,
    }
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// How the schema errors name a value's place: `spec.replicas`, or `body` at the root.
fn in_body(path: &str) -> String {
    if path.is_empty() {
        "body".to_string()
    } else {
        format!("{path} in body")
    }
}

fn field_name(path: &str) -> String {
    if path.is_empty() {
        "<nil>".to_string()
    } else {
        path.to_string()
    }
}

fn invalid(path: &str, value: &Value, detail: String) -> Cause {
    Cause::invalid(field_name(path), value, detail)
}

fn number_text(n: &Value) -> String {
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
        Some(f) => format!("{f}"),
        None => n.to_string(),
    }
}

fn check(
    schema: &Value,
    v: &Value,
    path: &str,
    root: bool,
    causes: &mut Vec<Cause>,
    patterns: &mut HashMap<String, Option<chartkit_regexp::Regexp>>,
) {
    if v.is_null() && (schema["nullable"] == true || schema["type"].is_null()) {
        return;
    }
    if schema["x-kubernetes-int-or-string"] == true {
        if !matches!(v, Value::String(_)) && !type_ok("integer", v) {
            causes.push(Cause {
                reason: "FieldValueTypeInvalid",
                field: field_name(path),
                value: Some(format!("{:?}", type_name(v))),
                detail: format!(
                    "{} must be of type integer,string: {:?}",
                    in_body(path),
                    type_name(v)
                ),
            });
            return;
        }
    } else if let Some(ty) = schema["type"].as_str()
        && !type_ok(ty, v)
    {
        causes.push(Cause {
            reason: "FieldValueTypeInvalid",
            field: field_name(path),
            value: Some(format!("{:?}", type_name(v))),
            detail: format!("{} must be of type {ty}: {:?}", in_body(path), type_name(v)),
        });
        return;
    }
    if let Some(options) = schema["enum"].as_array()
        && !options.contains(v)
    {
        let supported: Vec<String> = options
            .iter()
            .map(|o| match o {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        let refs: Vec<&str> = supported.iter().map(String::as_str).collect();
        causes.push(Cause::not_supported(field_name(path), v, &refs));
    }
    match v {
        Value::String(s) => {
            if let Some(max) = schema["maxLength"].as_u64()
                && s.chars().count() as u64 > max
            {
                let unit = if max == 1 { "byte" } else { "bytes" };
                causes.push(Cause {
                    reason: "FieldValueTooLong",
                    field: field_name(path),
                    value: None,
                    detail: format!("Too long: may not be more than {max} {unit}"),
                });
            }
            if let Some(min) = schema["minLength"].as_u64()
                && (s.chars().count() as u64) < min
            {
                causes.push(invalid(
                    path,
                    v,
                    format!("{} should be at least {min} chars long", in_body(path)),
                ));
            }
            if let Some(p) = schema["pattern"].as_str() {
                let re = patterns
                    .entry(p.to_string())
                    .or_insert_with(|| chartkit_regexp::Regexp::new(p).ok());
                if let Some(re) = re
                    && !re.is_match(s)
                {
                    causes.push(invalid(
                        path,
                        v,
                        format!("{} should match '{p}'", in_body(path)),
                    ));
                }
            }
            if let Some(f) = schema["format"].as_str()
                && formats::string_matches(f, s) == Some(false)
            {
                // A type error to the API server (so it blocks CEL rules too).
                causes.push(Cause {
                    reason: "FieldValueTypeInvalid",
                    ..invalid(
                        path,
                        v,
                        format!("{} must be of type {f}: {:?}", in_body(path), s),
                    )
                });
            }
        }
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(0.0);
            if let Some(detail) = formats::number_out_of_range(
                schema["type"].as_str().unwrap_or(""),
                schema["format"].as_str().unwrap_or(""),
                n,
                path,
            ) {
                causes.push(Cause::invalid("<nil>", &json!(""), detail));
            }
            if let Some(min) = schema["minimum"].as_f64() {
                let exclusive = schema["exclusiveMinimum"] == true;
                if (exclusive && x <= min) || (!exclusive && x < min) {
                    let rel = if exclusive {
                        "greater than"
                    } else {
                        "greater than or equal to"
                    };
                    causes.push(invalid(
                        path,
                        v,
                        format!(
                            "{} should be {rel} {}",
                            in_body(path),
                            number_text(&schema["minimum"])
                        ),
                    ));
                }
            }
            if let Some(max) = schema["maximum"].as_f64() {
                let exclusive = schema["exclusiveMaximum"] == true;
                if (exclusive && x >= max) || (!exclusive && x > max) {
                    let rel = if exclusive {
                        "less than"
                    } else {
                        "less than or equal to"
                    };
                    causes.push(invalid(
                        path,
                        v,
                        format!(
                            "{} should be {rel} {}",
                            in_body(path),
                            number_text(&schema["maximum"])
                        ),
                    ));
                }
            }
            if let Some(m) = schema["multipleOf"].as_f64()
                && m > 0.0
                && (x / m).fract().abs() > 1e-9
            {
                causes.push(invalid(
                    path,
                    v,
                    format!(
                        "{} should be a multiple of {}",
                        in_body(path),
                        number_text(&schema["multipleOf"])
                    ),
                ));
            }
        }
        Value::Array(items) => {
            if let Some(max) = schema["maxItems"].as_u64()
                && items.len() as u64 > max
            {
                let unit = if max == 1 { "item" } else { "items" };
                causes.push(Cause {
                    reason: "FieldValueTooMany",
                    field: field_name(path),
                    value: None,
                    detail: format!("Too many: {}: must have at most {max} {unit}", items.len()),
                });
            }
            if let Some(min) = schema["minItems"].as_u64()
                && (items.len() as u64) < min
            {
                causes.push(invalid(
                    path,
                    v,
                    format!("{} should have at least {min} items", in_body(path)),
                ));
            }
            if schema["items"].is_object() {
                for (i, item) in items.iter().enumerate() {
                    check(
                        &schema["items"],
                        item,
                        &format!("{path}[{i}]"),
                        false,
                        causes,
                        patterns,
                    );
                }
            }
        }
        Value::Object(map) => {
            if schema["x-kubernetes-preserve-unknown-fields"] == true
                && schema["properties"].is_null()
            {
                return;
            }
            for r in schema["required"].as_array().into_iter().flatten() {
                if let Some(r) = r.as_str()
                    && !map.contains_key(r)
                    && !(root && (r == "metadata" || r == "apiVersion" || r == "kind"))
                {
                    causes.push(Cause::required(child(path, r), ""));
                }
            }
            if let Some(max) = schema["maxProperties"].as_u64()
                && map.len() as u64 > max
            {
                causes.push(invalid(
                    path,
                    v,
                    format!("{} should have at most {max} properties", in_body(path)),
                ));
            }
            if let Some(min) = schema["minProperties"].as_u64()
                && (map.len() as u64) < min
            {
                causes.push(invalid(
                    path,
                    v,
                    format!("{} should have at least {min} properties", in_body(path)),
                ));
            }
            let props = schema["properties"].as_object();
            let extra = schema["additionalProperties"].as_object();
            for (k, val) in map {
                if root && (k == "metadata" || k == "apiVersion" || k == "kind") {
                    continue;
                }
                if let Some(p) = props.and_then(|p| p.get(k)) {
                    check(p, val, &child(path, k), false, causes, patterns);
                } else if let Some(e) = extra {
                    check(
                        &Value::Object(e.clone()),
                        val,
                        &child(path, k),
                        false,
                        causes,
                        patterns,
                    );
                }
            }
        }
        _ => {}
    }
}

/// A CRD's `status.acceptedNames` for its names.
pub fn accepted_names(crd: &Value) -> Value {
    let names = &crd["spec"]["names"];
    let kind = names["kind"].as_str().unwrap_or("");
    let mut out = Map::new();
    out.insert("plural".into(), names["plural"].clone());
    out.insert(
        "singular".into(),
        json!(
            names["singular"]
                .as_str()
                .filter(|s| !s.is_empty())
                .map(String::from)
                .unwrap_or_else(|| kind.to_ascii_lowercase())
        ),
    );
    for k in ["shortNames", "categories"] {
        if names[k].is_array() {
            out.insert(k.into(), names[k].clone());
        }
    }
    out.insert("kind".into(), json!(kind));
    out.insert(
        "listKind".into(),
        json!(
            names["listKind"]
                .as_str()
                .filter(|s| !s.is_empty())
                .map(String::from)
                .unwrap_or_else(|| format!("{kind}List"))
        ),
    );
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd() -> Value {
        json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "scope": "Namespaced",
                "names": {"kind": "Widget", "plural": "widgets", "shortNames": ["wd"]},
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "required": ["size"], "properties": {
                            "size": {"type": "integer", "minimum": 1, "maximum": 10},
                            "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                            "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5},
                        }},
                    }}},
                }],
            },
        })
    }

    #[test]
    fn a_crd_defines_a_type() {
        let def = resource_def(&crd()).unwrap();
        assert_eq!(def.kind, "Widget");
        assert_eq!(def.singular, "widget");
        assert!(def.has_status());
        assert_eq!(def.short_names, ["wd"]);
        assert!(validate_definition(&crd()).is_empty());
    }

    #[test]
    fn defaults_fill_in_and_validation_speaks_like_the_api_server() {
        let def = resource_def(&crd()).unwrap();
        let mut o = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a"}, "spec": {"size": 3}});
        apply_schema_defaults(&def, &mut o);
        assert_eq!(o["spec"]["color"], "red");
        assert!(validate_custom(&def, &o, None).causes.is_empty());
        let bad = json!({"apiVersion": "example.com/v1", "spec": {"size": "3", "color": "green", "name": "ABCDEFG"}});
        let msgs: Vec<String> = validate_custom(&def, &bad, None)
            .causes
            .iter()
            .map(|c| c.to_string())
            .collect();
        assert!(msgs.contains(&"spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\"".to_string()), "{msgs:?}");
        assert!(
            msgs.contains(
                &"spec.color: Unsupported value: \"green\": supported values: \"red\", \"blue\""
                    .to_string()
            ),
            "{msgs:?}"
        );
        assert!(
            msgs.contains(&"spec.name: Too long: may not be more than 5 bytes".to_string()),
            "{msgs:?}"
        );
        assert!(
            msgs.contains(
                &"spec.name: Invalid value: \"ABCDEFG\": spec.name in body should match '^[a-z]+$'"
                    .to_string()
            ),
            "{msgs:?}"
        );
        let small = json!({"apiVersion": "example.com/v1", "spec": {"size": 0}});
        let msgs: Vec<String> = validate_custom(&def, &small, None)
            .causes
            .iter()
            .map(|c| c.to_string())
            .collect();
        assert_eq!(
            msgs,
            ["spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"]
        );
        let missing = json!({"apiVersion": "example.com/v1", "spec": {}});
        let msgs: Vec<String> = validate_custom(&def, &missing, None)
            .causes
            .iter()
            .map(|c| c.to_string())
            .collect();
        assert_eq!(msgs, ["spec.size: Required value"]);
    }

    #[test]
    fn formats_embedded_objects_lists_and_rules_are_checked_in_the_api_servers_order() {
        let mut c = crd();
        c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] = json!({
            "type": "object",
            "x-kubernetes-validations": [{"rule": "self.size < 5", "message": "too big"}],
            "properties": {
                "size": {"type": "integer"},
                "id": {"type": "string", "format": "uuid"},
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "inner": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
            },
        });
        let def = resource_def(&c).unwrap();
        let messages = |spec: Value| -> Vec<String> {
            let o = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a"}, "spec": spec});
            validate_custom(&def, &o, None)
                .causes
                .iter()
                .map(|c| c.to_string())
                .collect()
        };
        assert_eq!(
            messages(
                json!({"size": 9, "tags": ["a", "a"], "inner": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "A_B"}}})
            ),
            [
                "spec.inner.metadata.name: Invalid value: \"A_B\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "spec.tags[1]: Duplicate value: \"a\"",
                "spec: Invalid value: \"object\": too big",
            ]
        );
        // A missing field, or a format error (a type error), leaves the rules unevaluated.
        assert_eq!(
            messages(json!({"size": 9, "inner": {"kind": "ConfigMap"}})),
            [
                "spec.inner.apiVersion: Required value: must not be empty",
                "<nil>: Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            ]
        );
        assert_eq!(
            messages(json!({"size": 9, "id": "abc"})),
            [
                "spec.id: Invalid value: \"abc\": spec.id in body must be of type uuid: \"abc\"",
                "<nil>: Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            ]
        );
    }
}
