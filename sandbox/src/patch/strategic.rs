//! Strategic merge patch: like a merge patch, but lists of the built-in types merge by
//! their merge keys (containers by name, ports by containerPort, ...) and directives
//! (`$patch`, `$retainKeys`, `$deleteFromPrimitiveList`, `$setElementOrder`) are honoured,
//! with the semantics and errors of apimachinery's strategicpatch as the API server
//! applies it.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use crate::resources::{ResourceDef, split_api_version};
use crate::schema::Node;
use crate::status::{ApiError, ApiResult};

const DIRECTIVE: &str = "$patch";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER: &str = "$setElementOrder";
const RETAIN_KEYS: &str = "$retainKeys";

/// Why a patch could not be applied, with the status the API server answers.
#[derive(Debug)]
enum Error {
    /// 400: malformed directives.
    BadRequest(&'static str),
    /// 422 (the API server drops the text).
    Unprocessable,
    /// Any other error: a 500 carrying the message.
    Other(String),
}

type Result<T> = std::result::Result<T, Error>;

impl From<Error> for ApiError {
    fn from(e: Error) -> ApiError {
        match e {
            Error::BadRequest(m) => ApiError::bad_request(m),
            Error::Unprocessable => ApiError::new(
                422,
                "Invalid",
                "the server rejected our request due to an error in our request",
            )
            .with_details(serde_json::json!({})),
            Error::Other(m) => ApiError::new(500, "", m),
        }
    }
}

const BAD_PRIMITIVE_LIST: &str = "invalid patch format of primitive list";
const BAD_RETAIN_KEYS: &str = "invalid patch format of retainKeys";
const BAD_SET_ORDER: &str = "invalid patch format of setElementOrder list";

/// Applies a strategic merge patch to `doc` (an object of the built-in type `def`).
pub fn strategic_merge_patch(def: &ResourceDef, doc: &Value, patch: &Value) -> ApiResult<Value> {
    let version = doc
        .get("apiVersion")
        .and_then(Value::as_str)
        .map(|v| split_api_version(v).1.to_string())
        .unwrap_or_else(|| def.versions[0].clone());
    let node = crate::schema::type_for(def, &version).unwrap_or_else(crate::schema::untyped);
    let (Value::Object(original), Value::Object(patch)) = (doc, patch) else {
        return Err(ApiError::bad_request("invalid JSON document"));
    };
    let merged = merge_map(original.clone(), patch.clone(), &Meta::of(node))?;
    Ok(Value::Object(merged))
}

/// What the patch logic knows of a position: the type, looked up as the Go struct tags
/// are.
#[derive(Clone, Copy)]
struct Meta<'a> {
    node: Node<'a>,
}

impl<'a> Meta<'a> {
    fn of(node: Node<'a>) -> Meta<'a> {
        Meta { node }
    }

    /// The Go type's kind as errors name it.
    fn kind_name(&self) -> &'static str {
        if self.node.is_plain_map() {
            "map"
        } else {
            "struct"
        }
    }

    /// The field `key` of a struct: its type and patch strategy and merge key.
    fn lookup(&self, key: &str) -> Result<(Meta<'a>, Vec<&'a str>, &'a str)> {
        if self.node.is_deduced() {
            return Ok((Meta::of(Node::deduced_like(&self.node)), Vec::new(), ""));
        }
        if !self.node.is_struct() {
            return Err(Error::Other(format!(
                "merging an object in json but data type is not struct, instead is: {}",
                self.kind_name()
            )));
        }
        match self.node.field(key) {
            Some(child) => {
                let (strategies, merge_key) = child.patch_meta();
                Ok((Meta::of(child), strategies, merge_key))
            }
            None => Err(Error::Other(format!(
                "unable to find api field in struct {} for the json field {key:?}",
                self.node.type_name()
            ))),
        }
    }

    /// The field `key` of a struct, when it is a list: its items' type.
    fn lookup_slice(&self, key: &str) -> Result<(Meta<'a>, Vec<&'a str>, &'a str)> {
        let (child, strategies, merge_key) = self.lookup(key)?;
        Ok((Meta::of(child.node.items()), strategies, merge_key))
    }
}

/// Go's dynamic types of decoded JSON, which the patch logic compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GoType {
    Map,
    Slice,
    String,
    Int,
    Float,
    Bool,
    Nil,
}

fn go_type(v: &Value) -> GoType {
    match v {
        Value::Object(_) => GoType::Map,
        Value::Array(_) => GoType::Slice,
        Value::String(_) => GoType::String,
        Value::Number(n) if n.is_f64() => GoType::Float,
        Value::Number(_) => GoType::Int,
        Value::Bool(_) => GoType::Bool,
        Value::Null => GoType::Nil,
    }
}

fn go_type_name(t: GoType) -> &'static str {
    match t {
        GoType::Map => "map[string]interface {}",
        GoType::Slice => "[]interface {}",
        GoType::String => "string",
        GoType::Int => "int64",
        GoType::Float => "float64",
        GoType::Bool => "bool",
        GoType::Nil => "<nil>",
    }
}

/// A value as Go's `%v` prints it (`map[image:nginx name:web]`).
pub fn go_format(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", go_format(&m[k])))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(go_format).collect::<Vec<_>>().join(" ")
        ),
        Value::String(s) => s.clone(),
        Value::Null => "<nil>".into(),
        Value::Number(n) if n.is_f64() => go_float(n.as_f64().unwrap_or(0.0)),
        other => other.to_string(),
    }
}

/// A float as Go's `%v` prints it: shortest digits, an exponent below 1e-4 or from 1e6.
fn go_float(f: f64) -> String {
    if f == 0.0 {
        return "0".into();
    }
    let exp = f.abs().log10().floor() as i32;
    if !(-4..6).contains(&exp) {
        let s = format!("{f:e}");
        let (mantissa, e) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        let sign = if e < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", e.abs());
    }
    let s = format!("{f}");
    s.strip_suffix(".0").map(String::from).unwrap_or(s)
}

fn no_merge_key(m: &Map<String, Value>, key: &str) -> Error {
    Error::Other(format!(
        "map: {} does not contain declared merge key: {key}",
        go_format(&Value::Object(m.clone()))
    ))
}

fn bad_arg_type(expected: GoType, actual: &Value) -> Error {
    Error::Other(format!(
        "expected a {}, but received a {}",
        go_type_name(expected),
        go_type_name(go_type(actual))
    ))
}

fn bad_patch_type(t: &Value, m: &Map<String, Value>) -> Error {
    Error::Other(format!(
        "unknown patch type: {} in map: {}",
        go_format(t),
        go_format(&Value::Object(m.clone()))
    ))
}

/// The strategy other than retainKeys among a field's strategies.
fn strategy_without_retain_keys(strategies: &[&str]) -> Result<String> {
    match strategies {
        [] => Ok(String::new()),
        ["retainKeys"] => Ok(String::new()),
        [one] => Ok(one.to_string()),
        ["retainKeys", other] | [other, "retainKeys"] => Ok(other.to_string()),
        _ => Err(Error::Other(format!(
            "unexpected patch strategy: [{}]",
            strategies.join(" ")
        ))),
    }
}

fn extract_key<'k>(key: &'k str, prefix: &str, error: &'static str) -> Result<&'k str> {
    match key.split_once('/') {
        Some((p, rest)) if p == prefix => Ok(rest),
        _ => Err(Error::BadRequest(error)),
    }
}

fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    meta: &Meta<'_>,
) -> Result<Map<String, Value>> {
    if let Some(directive) = patch.get(DIRECTIVE).cloned() {
        return match directive.as_str() {
            Some("replace") => {
                patch.shift_remove(DIRECTIVE);
                Ok(patch)
            }
            Some("delete") => Ok(Map::new()),
            _ => Err(bad_patch_type(&directive, &patch)),
        };
    }
    apply_retain_keys(&mut original, &mut patch)?;
    merge_set_element_order(&mut original, &mut patch, meta)?;
    let keys: Vec<String> = patch.keys().cloned().collect();
    for key in keys {
        let Some(patch_value) = patch.shift_remove(&key) else {
            continue;
        };
        let (k, delete_list) = if key.starts_with(DELETE_FROM_PRIMITIVE_LIST) {
            (
                extract_key(&key, DELETE_FROM_PRIMITIVE_LIST, BAD_PRIMITIVE_LIST)?.to_string(),
                true,
            )
        } else {
            (key.clone(), false)
        };
        if patch_value.is_null() {
            original.shift_remove(&k);
            continue;
        }
        let Some(current) = original.get(&k) else {
            if !delete_list {
                let mut v = patch_value;
                discard_nulls(&mut v);
                if let Some(v) = remove_directives(v) {
                    original.insert(k, v);
                }
            }
            continue;
        };
        if go_type(current) != go_type(&patch_value) {
            if !delete_list {
                let mut v = patch_value;
                discard_nulls(&mut v);
                match remove_directives(v) {
                    Some(v) => {
                        original.insert(k, v);
                    }
                    None => {
                        original.shift_remove(&k);
                    }
                }
            }
            continue;
        }
        let current = original.shift_remove(&k).unwrap_or(Value::Null);
        let merged = match (current, patch_value) {
            (Value::Object(o), Value::Object(p)) => {
                let (child, strategies, _) = meta.lookup(&k)?;
                let strategy = strategy_without_retain_keys(&strategies)?;
                if strategy == "replace" {
                    Some(Value::Object(p))
                } else {
                    Some(Value::Object(merge_map(o, p, &child)?))
                }
            }
            (Value::Array(o), Value::Array(p)) => {
                let (child, strategies, merge_key) = meta.lookup_slice(&k)?;
                let strategy = strategy_without_retain_keys(&strategies)?;
                if strategy == "merge" || delete_list {
                    Some(Value::Array(merge_slice(
                        o,
                        p,
                        &child,
                        merge_key,
                        delete_list,
                    )?))
                } else {
                    Some(Value::Array(p))
                }
            }
            (_, p) => remove_directives(p),
        };
        if let Some(v) = merged {
            original.insert(k, v);
        }
    }
    Ok(original)
}

fn discard_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, v| !v.is_null());
            m.values_mut().for_each(discard_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(discard_nulls),
        _ => {}
    }
}

/// Drops directive maps from a value taken whole; `None` when the value itself is one.
fn remove_directives(v: Value) -> Option<Value> {
    match v {
        Value::Object(m) => {
            if m.contains_key(DIRECTIVE) {
                return None;
            }
            let mut out = Map::new();
            for (k, v) in m {
                if let Some(v) = remove_directives(v) {
                    out.insert(k, v);
                }
            }
            Some(Value::Object(out))
        }
        Value::Array(items) => Some(Value::Array(
            items.into_iter().filter_map(remove_directives).collect(),
        )),
        other => Some(other),
    }
}

fn apply_retain_keys(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
) -> Result<()> {
    let Some(retain) = patch.shift_remove(RETAIN_KEYS) else {
        return Ok(());
    };
    let Value::Array(list) = retain else {
        return Err(Error::BadRequest(BAD_RETAIN_KEYS));
    };
    let kept = |k: &str| list.iter().any(|v| v.as_str() == Some(k));
    for (k, v) in patch.iter() {
        if v.is_null()
            || k.starts_with(DELETE_FROM_PRIMITIVE_LIST)
            || k.starts_with(SET_ELEMENT_ORDER)
        {
            continue;
        }
        if !kept(k) {
            return Err(Error::BadRequest(BAD_RETAIN_KEYS));
        }
    }
    original.retain(|k, _| kept(k));
    Ok(())
}

/// `$setElementOrder/<list>`: merges the list and orders it as the directive says.
fn merge_set_element_order(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    meta: &Meta<'_>,
) -> Result<()> {
    let keys: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(SET_ELEMENT_ORDER))
        .cloned()
        .collect();
    for key in keys {
        let order = patch.shift_remove(&key).unwrap_or(Value::Null);
        let Value::Array(order) = order else {
            return Err(bad_arg_type(GoType::Slice, &order));
        };
        let field = extract_key(&key, SET_ELEMENT_ORDER, BAD_SET_ORDER)?.to_string();
        let original_list = match original.get(&field) {
            Some(Value::Array(l)) => Some(l.clone()),
            Some(other) => return Err(bad_arg_type(GoType::Slice, other)),
            None => None,
        };
        let patch_list = match patch.get(&field) {
            Some(Value::Array(l)) => Some(l.clone()),
            Some(other) => return Err(bad_arg_type(GoType::Slice, other)),
            None => None,
        };
        let (child, strategies, merge_key) = meta.lookup_slice(&field)?;
        let strategy = strategy_without_retain_keys(&strategies)?;
        validate_order(patch_list.as_deref().unwrap_or(&[]), &order, merge_key)?;
        let merged = match (&original_list, &patch_list) {
            (Some(o), None) => o.clone(),
            (None, Some(p)) => match remove_directives(Value::Array(p.clone())) {
                Some(Value::Array(v)) => v,
                _ => continue,
            },
            (Some(o), Some(p)) => {
                if strategy == "merge" {
                    merge_slice(o.clone(), p.clone(), &child, merge_key, false)?
                } else {
                    p.clone()
                }
            }
            (None, None) => continue,
        };
        let (in_patch, server_only) = partition(&merged, &order, merge_key)?;
        let all: Vec<&Value> = original_list
            .iter()
            .flatten()
            .chain(patch_list.iter().flatten())
            .collect();
        let kind = element_type(&all)?;
        let both = normalize_order(
            in_patch,
            server_only,
            &order,
            original_list.as_deref().unwrap_or(&[]),
            merge_key,
            kind,
        )?;
        original.insert(field.clone(), Value::Array(both));
        patch.shift_remove(&field);
    }
    Ok(())
}

fn validate_order(patch: &[Value], order: &[Value], merge_key: &str) -> Result<()> {
    if order.is_empty() || patch.is_empty() {
        return Ok(());
    }
    let non_delete: Vec<&Value> = if merge_key.is_empty() {
        patch.iter().collect()
    } else {
        let (keep, _) = split_deletes(patch)?;
        keep
    };
    let (mut pi, mut oi) = (0, 0);
    while pi < non_delete.len() && oi < order.len() {
        if non_delete[pi].get(DIRECTIVE).is_some() {
            pi += 1;
            continue;
        }
        if merge_key_equal(non_delete[pi], &order[oi], merge_key)? {
            pi += 1;
        }
        oi += 1;
    }
    if pi < non_delete.len() && oi >= order.len() {
        return Err(Error::Other(format!(
            "The order in patch list:\n{}\n doesn't match $setElementOrder list:\n{}\n",
            go_format(&Value::Array(patch.to_vec())),
            go_format(&Value::Array(order.to_vec()))
        )));
    }
    Ok(())
}

fn merge_key_equal(a: &Value, b: &Value, key: &str) -> Result<bool> {
    if key.is_empty() {
        return Ok(a == b);
    }
    let am = a.as_object().ok_or_else(|| bad_arg_type(GoType::Map, a))?;
    let bm = b.as_object().ok_or_else(|| bad_arg_type(GoType::Map, b))?;
    let av = am.get(key).ok_or_else(|| no_merge_key(am, key))?;
    let bv = bm.get(key).ok_or_else(|| no_merge_key(bm, key))?;
    Ok(av == bv)
}

/// Items to keep and items with `$patch: delete`.
fn split_deletes(list: &[Value]) -> Result<(Vec<&Value>, Vec<&Value>)> {
    let mut keep = Vec::new();
    let mut delete = Vec::new();
    for v in list {
        let m = v.as_object().ok_or_else(|| bad_arg_type(GoType::Map, v))?;
        if m.get(DIRECTIVE).and_then(Value::as_str) == Some("delete") {
            delete.push(v);
        } else {
            keep.push(v);
        }
    }
    Ok((keep, delete))
}

/// The type all items share (lists of lists are not supported).
fn element_type(items: &[&Value]) -> Result<GoType> {
    let mut found = None;
    for v in items {
        let t = go_type(v);
        match found {
            None => {
                if t == GoType::Slice {
                    return Err(Error::Unprocessable);
                }
                found = Some(t);
            }
            Some(prev) if prev != t => {
                return Err(Error::Other("list element types are not identical".into()));
            }
            Some(_) => {}
        }
    }
    found.ok_or_else(|| Error::Other("no elements in any of the given slices".into()))
}

fn merge_slice(
    original: Vec<Value>,
    patch: Vec<Value>,
    meta: &Meta<'_>,
    merge_key: &str,
    delete_list: bool,
) -> Result<Vec<Value>> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let all: Vec<&Value> = original.iter().chain(&patch).collect();
    let kind = element_type(&all)?;
    // As in Go, the special items of a list of maps leave both lists changed for the
    // ordering that follows.
    let (merged, patch, original_order) = if kind != GoType::Map {
        if delete_list {
            return Ok(original
                .into_iter()
                .filter(|v| !patch.contains(v))
                .collect());
        }
        let order = original.clone();
        let mut both = original;
        both.extend(patch.iter().cloned());
        (dedup_scalars(both), patch, order)
    } else {
        if merge_key.is_empty() {
            return Err(Error::Other(
                "cannot merge lists without merge key for struct".into(),
            ));
        }
        let (original, rest) = merge_special_items(original, &patch, merge_key)?;
        let order = original.clone();
        let merged = merge_items_by_key(original, rest.clone(), merge_key, meta)?;
        (merged, rest, order)
    };
    let (in_patch, server_only) = partition(&merged, &patch, merge_key)?;
    normalize_order(
        in_patch,
        server_only,
        &patch,
        &original_order,
        merge_key,
        kind,
    )
}

/// Go's in-place deduplication (a later duplicate is replaced by the last item).
fn dedup_scalars(mut s: Vec<Value>) -> Vec<Value> {
    let mut i = 0;
    while i < s.len() {
        let mut j = i + 1;
        while j < s.len() {
            if s[i] == s[j] {
                let last = s.len() - 1;
                s.swap(j, last);
                s.pop();
            } else {
                j += 1;
            }
        }
        i += 1;
    }
    s
}

/// Handles `$patch: delete` and `$patch: replace` items; returns the original list as
/// they leave it and the patch without them.
fn merge_special_items(
    mut original: Vec<Value>,
    patch: &[Value],
    key: &str,
) -> Result<(Vec<Value>, Vec<Value>)> {
    let mut rest = Vec::new();
    let mut replace = false;
    for v in patch {
        let m = v.as_object().ok_or_else(|| bad_arg_type(GoType::Map, v))?;
        match m.get(DIRECTIVE) {
            None => rest.push(v.clone()),
            Some(d) => match d.as_str() {
                Some("delete") => {
                    let value = m.get(key).ok_or_else(|| no_merge_key(m, key))?;
                    for item in &original {
                        if !item.is_object() {
                            return Err(Error::Other("value for key is not a map".into()));
                        }
                    }
                    original.retain(|item| item.get(key) != Some(value));
                }
                Some("replace") => replace = true,
                Some("merge") => {
                    return Err(Error::Other(
                        "merging lists cannot yet be specified in the patch".into(),
                    ));
                }
                _ => return Err(bad_patch_type(d, m)),
            },
        }
    }
    if replace {
        return Ok((rest, Vec::new()));
    }
    Ok((original, rest))
}

fn merge_items_by_key(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    key: &str,
    meta: &Meta<'_>,
) -> Result<Vec<Value>> {
    for v in patch {
        let Value::Object(pm) = v else {
            return Err(bad_arg_type(GoType::Map, &v));
        };
        let value = pm.get(key).cloned().ok_or_else(|| no_merge_key(&pm, key))?;
        let mut found = None;
        for (i, item) in original.iter().enumerate() {
            let Some(m) = item.as_object() else {
                return Err(Error::Other(format!("value for key {i} is not a map")));
            };
            if m.get(key) == Some(&value) {
                found = Some(i);
                break;
            }
        }
        match found {
            Some(i) => {
                let Value::Object(om) = std::mem::take(&mut original[i]) else {
                    unreachable!("checked to be a map")
                };
                original[i] = Value::Object(merge_map(om, pm, meta)?);
            }
            None => original.push(Value::Object(pm)),
        }
    }
    Ok(original)
}

/// Items present in `by` (by merge key, or themselves) and the others.
fn partition(list: &[Value], by: &[Value], key: &str) -> Result<(Vec<Value>, Vec<Value>)> {
    let mut in_by = Vec::new();
    let mut others = Vec::new();
    for v in list {
        let present = if key.is_empty() {
            by.contains(v)
        } else {
            let m = v.as_object().ok_or_else(|| bad_arg_type(GoType::Map, v))?;
            let value = m.get(key).ok_or_else(|| no_merge_key(m, key))?;
            let mut hit = false;
            for (i, b) in by.iter().enumerate() {
                let bm = b
                    .as_object()
                    .ok_or_else(|| Error::Other(format!("value for key {i} is not a map")))?;
                if bm.get(key) == Some(value) {
                    hit = true;
                    break;
                }
            }
            hit
        };
        if present {
            in_by.push(v.clone());
        } else {
            others.push(v.clone());
        }
    }
    Ok((in_by, others))
}

fn index_of(list: &[Value], v: &Value, key: &str, kind: GoType) -> Option<usize> {
    let get = |x: &Value| -> Option<Value> {
        if kind == GoType::Map {
            x.as_object()
                .map(|m| m.get(key).cloned().unwrap_or(Value::Null))
        } else {
            Some(x.clone())
        }
    };
    let want = get(v);
    list.iter().position(|x| get(x) == want)
}

fn normalize_order(
    patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    key: &str,
    kind: GoType,
) -> Result<Vec<Value>> {
    let patch = sort_by_order(patch, patch_order, key, kind)?;
    let server_only = sort_by_order(server_only, server_order, key, kind)?;
    Ok(merge_sorted(server_only, patch, server_order, key, kind))
}

fn sort_by_order(
    mut items: Vec<Value>,
    order: &[Value],
    key: &str,
    kind: GoType,
) -> Result<Vec<Value>> {
    let mut deletes = Vec::new();
    if kind == GoType::Map {
        for v in items.iter().chain(order) {
            let m = v.as_object().ok_or_else(|| bad_arg_type(GoType::Map, v))?;
            if !m.contains_key(key) {
                return Err(no_merge_key(m, key));
            }
        }
        let (keep, delete): (Vec<Value>, Vec<Value>) = items
            .into_iter()
            .partition(|v| v.get(DIRECTIVE).and_then(Value::as_str) != Some("delete"));
        items = keep;
        deletes = delete;
    }
    // Go's sort.SliceStable with a "less" that is true whenever either item is missing
    // from the order: an insertion sort reproduces its outcome.
    let less = |a: &Value, b: &Value| -> bool {
        match (index_of(order, a, key, kind), index_of(order, b, key, kind)) {
            (Some(i), Some(j)) => i < j,
            _ => true,
        }
    };
    let mut sorted: Vec<Value> = Vec::with_capacity(items.len());
    for item in items {
        let mut pos = sorted.len();
        while pos > 0 && less(&item, &sorted[pos - 1]) {
            pos -= 1;
        }
        sorted.insert(pos, item);
    }
    sorted.extend(deletes);
    Ok(sorted)
}

fn merge_sorted(
    left: Vec<Value>,
    right: Vec<Value>,
    order: &[Value],
    key: &str,
    kind: GoType,
) -> Vec<Value> {
    let mut out = Vec::with_capacity(left.len() + right.len());
    let (mut i, mut j) = (0, 0);
    while i < left.len() || j < right.len() {
        if i >= left.len() {
            out.push(right[j].clone());
            j += 1;
        } else if j >= right.len() {
            out.push(left[i].clone());
            i += 1;
        } else {
            let li = index_of(order, &left[i], key, kind);
            let ri = index_of(order, &right[j], key, kind);
            if matches!((li, ri), (Some(a), Some(b)) if a.cmp(&b) == Ordering::Less) {
                out.push(left[i].clone());
                i += 1;
            } else {
                out.push(right[j].clone());
                j += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
