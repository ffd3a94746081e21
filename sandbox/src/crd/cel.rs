//! `x-kubernetes-validations`: the CEL rules of a custom resource's schema, evaluated
//! with cel-rust (the `cel` crate) as the API server evaluates them with cel-go.
//!
//! `self` is the value at the rule's schema node, typed by the schema (`number` as
//! double, `integer` as int, objects as maps); a transition rule (one naming `oldSelf`)
//! runs only on an update where the old object has a value at the same place (object
//! properties and map keys by name, `x-kubernetes-list-type: map` items by their keys).
//! A rule that fails gives the API server's error: the rule's `reason` (Invalid by
//! default) at the node's path plus its `fieldPath`, with `messageExpression`'s string,
//! else `message`, else `failed rule: RULE`; an evaluation error is Invalid too
//! (`no such key: x evaluating rule: RULE`).
//!
//! Of Kubernetes' CEL libraries, cel-rust has the standard functions and macros
//! (`size`, `has`, `matches`, `all`, `exists`, `exists_one`, `map`, `filter`,
//! `startsWith`, `endsWith`, `contains`, `timestamp`, `duration`, `int`, `string`...)
//! and cel-go's strings extension (`lowerAscii`, `split`, `join`, `indexOf`, `replace`,
//! `substring`, `trim`, `format`...); this module adds the lists library's `isSorted`,
//! `sum`, `min`, `max`, the regex library's `find`/`findAll` (Go's RE2 syntax through
//! chartkit-regexp) and the sets library (`sets.contains`, `sets.intersects`,
//! `sets.equivalent`). Missing: lists' `indexOf`/`lastIndexOf`, the URL, IP/CIDR,
//! quantity, semver, format and authorizer libraries, optional types and cost limits.
//! A rule that needs what is missing (or that cel-rust cannot parse) is not evaluated:
//! the write is accepted with a warning naming the rule, since the API server accepted
//! the CRD and a real cluster would judge the object, so refusing would be wrong and
//! accepting silently would hide that nothing was checked.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use cel::extractors::{Arguments, This};
use cel::objects::Key;
use cel::{Context, Env, ExecutionError, Value as Cel};
use serde_json::{Value, json};

use crate::status::Cause;

/// What the rules of one object said: errors, and the rules not evaluated.
#[derive(Debug, Default)]
pub struct Outcome {
    pub causes: Vec<Cause>,
    pub warnings: Vec<String>,
}

/// Whether a schema has a rule anywhere.
pub fn has_rules(schema: &Value) -> bool {
    match schema {
        Value::Object(m) => {
            m.get("x-kubernetes-validations")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
                || ["properties", "additionalProperties", "items"]
                    .iter()
                    .any(|k| match m.get(*k) {
                        Some(Value::Object(props)) if *k == "properties" => {
                            props.values().any(has_rules)
                        }
                        Some(s) => has_rules(s),
                        None => false,
                    })
        }
        _ => false,
    }
}

/// Evaluates every rule of `schema` over `new` (and `old`, for transition rules).
pub fn check(schema: &Value, new: &Value, old: Option<&Value>, out: &mut Outcome) {
    walk(schema, new, old, &mut Vec::new(), true, out);
}

fn walk(
    schema: &Value,
    v: &Value,
    old: Option<&Value>,
    path: &mut Vec<String>,
    root: bool,
    out: &mut Outcome,
) {
    if v.is_null() {
        return;
    }
    if let Some(rules) = schema["x-kubernetes-validations"].as_array() {
        let this = if root { root_self(v) } else { v.clone() };
        let old_this = old.map(|o| if root { root_self(o) } else { o.clone() });
        for rule in rules {
            evaluate(schema, rule, &this, old_this.as_ref(), path, out);
        }
    }
    match v {
        Value::Object(map) => {
            let props = schema["properties"].as_object();
            let extra = schema["additionalProperties"].as_object().map(|e| {
                // Cloned once per object, not per key.
                Value::Object(e.clone())
            });
            for (k, child) in map {
                if root && (k == "metadata" || k == "apiVersion" || k == "kind") {
                    continue;
                }
                let sub = props.and_then(|p| p.get(k)).or(extra.as_ref());
                if let Some(sub) = sub {
                    let old_child = old.and_then(|o| o.get(k));
                    path.push(format!(".{k}"));
                    walk(sub, child, old_child, path, false, out);
                    path.pop();
                }
            }
        }
        Value::Array(items) if schema["items"].is_object() => {
            let keys: Vec<&str> = if schema["x-kubernetes-list-type"] == "map" {
                schema["x-kubernetes-list-map-keys"]
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default()
            } else {
                Vec::new()
            };
            for (i, item) in items.iter().enumerate() {
                let old_item = if keys.is_empty() {
                    None
                } else {
                    old.and_then(Value::as_array).and_then(|olds| {
                        olds.iter()
                            .find(|o| keys.iter().all(|k| o.get(*k) == item.get(*k)))
                    })
                };
                path.push(format!("[{i}]"));
                walk(&schema["items"], item, old_item, path, false, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// At the root, rules see only `metadata.name` and `metadata.generateName`.
fn root_self(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.retain(|k, _| k == "name" || k == "generateName");
    }
    v
}

fn path_text(path: &[String]) -> String {
    let s: String = path.concat();
    s.strip_prefix('.').map(String::from).unwrap_or(s)
}

fn evaluate(
    schema: &Value,
    rule: &Value,
    this: &Value,
    old: Option<&Value>,
    path: &[String],
    out: &mut Outcome,
) {
    let Some(text) = rule["rule"].as_str() else {
        return;
    };
    let transition = text.contains("oldSelf");
    if transition && old.is_none() {
        return;
    }
    let where_ = if path.is_empty() {
        "the object".to_string()
    } else {
        path_text(path)
    };
    let program = match env().compile(text) {
        Ok(p) => p,
        Err(e) => {
            out.warnings.push(format!(
                "x-kubernetes-validations rule {text:?} at {where_} was not evaluated: the sandbox's CEL cannot parse it ({})",
                first_line(&e.to_string())
            ));
            return;
        }
    };
    let mut context = Context::with_env(env().clone());
    add_functions(&mut context);
    context.add_variable_from_value("self", to_cel(schema, this));
    if let Some(old) = old {
        context.add_variable_from_value("oldSelf", to_cel(schema, old));
    }
    let ty = schema["type"].as_str().unwrap_or("");
    let mut field: Vec<String> = path.to_vec();
    if let Some(fp) = rule["fieldPath"].as_str() {
        field.extend(split_field_path(fp));
    }
    let field = if field.is_empty() {
        "<nil>".to_string()
    } else {
        path_text(&field)
    };
    match program.execute(&context) {
        Ok(Cel::Bool(true)) => {}
        Ok(Cel::Bool(false)) => {
            let message = rule["messageExpression"]
                .as_str()
                .and_then(|m| message_from(m, &context))
                .or_else(|| {
                    rule["message"]
                        .as_str()
                        .filter(|m| !m.trim().is_empty())
                        .map(String::from)
                })
                .unwrap_or_else(|| format!("failed rule: {}", text.trim()));
            out.causes
                .push(cause_for(rule["reason"].as_str(), field, ty, message));
        }
        Ok(other) => out.causes.push(Cause::invalid(
            field,
            &json!(ty),
            format!(
                "rule evaluated to {} instead of a bool: {}",
                other.type_of(),
                text.trim()
            ),
        )),
        Err(e) => {
            if let Some(missing) = missing_function(&e) {
                out.warnings.push(format!(
                    "x-kubernetes-validations rule {text:?} at {where_} was not evaluated: the sandbox's CEL has no {missing}"
                ));
            } else {
                out.causes.push(Cause::invalid(
                    field,
                    &json!(ty),
                    format!("{} evaluating rule: {}", go_error(&e), text.trim()),
                ));
            }
        }
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

fn cause_for(reason: Option<&str>, field: String, ty: &str, message: String) -> Cause {
    match reason {
        Some("FieldValueForbidden") => Cause::forbidden(field, message),
        Some("FieldValueRequired") => Cause::required(field, message),
        Some("FieldValueDuplicate") => Cause {
            reason: "FieldValueDuplicate",
            field,
            value: Some(format!("{ty:?}")),
            detail: String::new(),
        },
        _ => Cause::invalid(field, &json!(ty), message),
    }
}

/// `messageExpression`'s string, or `None` when it fails or is blank (the API server
/// then falls back to `message`).
fn message_from(expression: &str, context: &Context) -> Option<String> {
    let program = env().compile(expression).ok()?;
    match program.execute(context) {
        Ok(Cel::String(s)) if !s.trim().is_empty() => Some(s.to_string()),
        _ => None,
    }
}

/// A rule's `fieldPath` (`.spec.x`, `['a.b']`, `.items[0]`) as path segments.
fn split_field_path(fp: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = fp;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']").unwrap_or(r.len());
            out.push(format!(".{}", &r[..end]));
            rest = r.get(end + 2..).unwrap_or("");
        } else if rest.starts_with('[') {
            let end = rest.find(']').map(|e| e + 1).unwrap_or(rest.len());
            out.push(rest[..end].to_string());
            rest = &rest[end..];
        } else {
            let r = rest.strip_prefix('.').unwrap_or(rest);
            let end = r.find(['.', '[']).unwrap_or(r.len());
            out.push(format!(".{}", &r[..end]));
            rest = &r[end..];
        }
    }
    out
}

/// cel-go's wording of the runtime errors rules most often hit.
fn go_error(e: &ExecutionError) -> String {
    match e {
        ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
        ExecutionError::DivisionByZero(_) => "division by zero".to_string(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_string(),
        ExecutionError::IndexOutOfBounds(i) => format!("index out of bounds: {}", cel_text(i)),
        other => other.to_string(),
    }
}

fn cel_text(v: &Cel) -> String {
    match v {
        Cel::Int(i) => i.to_string(),
        Cel::UInt(u) => u.to_string(),
        Cel::String(s) => s.to_string(),
        other => format!("{other:?}"),
    }
}

/// Kubernetes' CEL functions cel-rust and this module lack: the name, when `e` says a
/// rule needed one of them.
fn missing_function(e: &ExecutionError) -> Option<String> {
    const LACKING: &[&str] = &[
        "url",
        "isURL",
        "getScheme",
        "getHost",
        "getHostname",
        "getPort",
        "getEscapedPath",
        "getQuery",
        "quantity",
        "isQuantity",
        "ip",
        "isIP",
        "cidr",
        "isCIDR",
        "semver",
        "isSemver",
        "format.named",
        "validate",
        "indexOf",
        "lastIndexOf",
        "optional.of",
        "optional.none",
        "orValue",
        "hasValue",
        "authorizer",
    ];
    match e {
        ExecutionError::UndeclaredReference(name)
            if name.as_str() != "self" && name.as_str() != "oldSelf" =>
        {
            Some(format!("function or name '{name}'"))
        }
        ExecutionError::NoSuchOverload(o) if LACKING.contains(&o.function()) => {
            Some(format!("function '{}' for these arguments", o.function()))
        }
        ExecutionError::NotSupportedAsMethod { method, .. }
            if LACKING.contains(&method.as_str()) =>
        {
            Some(format!("method '{method}'"))
        }
        _ => None,
    }
}

fn env() -> &'static Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        env.add_extension(cel::extensions::strings)
            .expect("the strings extension declares once");
        Arc::new(env)
    })
}

/// A JSON value as CEL sees it under its schema.
fn to_cel(schema: &Value, v: &Value) -> Cel {
    match v {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => {
            if schema["type"] == "number" {
                Cel::Float(n.as_f64().unwrap_or(0.0))
            } else if let Some(i) = n.as_i64() {
                Cel::Int(i)
            } else if let Some(u) = n.as_u64() {
                Cel::UInt(u)
            } else {
                Cel::Float(n.as_f64().unwrap_or(0.0))
            }
        }
        Value::String(s) => Cel::String(Arc::new(s.clone())),
        Value::Array(items) => Cel::List(Arc::new(
            items.iter().map(|i| to_cel(&schema["items"], i)).collect(),
        )),
        Value::Object(map) => {
            let props = schema["properties"].as_object();
            let extra = &schema["additionalProperties"];
            let m: HashMap<Key, Cel> = map
                .iter()
                .map(|(k, child)| {
                    let sub = props.and_then(|p| p.get(k)).unwrap_or(extra);
                    (Key::from(k.clone()), to_cel(sub, child))
                })
                .collect();
            Cel::from(m)
        }
    }
}

/// The Kubernetes CEL functions cel-rust does not have and are cheap to add.
fn add_functions(context: &mut Context) {
    // Each name is new to the environment, so none of these can fail.
    let _ = context.add_function("isSorted", is_sorted);
    let _ = context.add_function("sum", sum);
    let _ = context.add_function("min", list_min);
    let _ = context.add_function("max", list_max);
    let _ = context.add_function("find", find);
    let _ = context.add_function("findAll", find_all);
    let _ = context.add_function("sets.contains", sets_contains);
    let _ = context.add_function("sets.intersects", sets_intersects);
    let _ = context.add_function("sets.equivalent", sets_equivalent);
}

/// A CEL list value's items.
type CelList = Arc<Vec<Cel>>;

fn list_of(v: &Cel, function: &str) -> Result<Arc<Vec<Cel>>, ExecutionError> {
    match v {
        Cel::List(l) => Ok(l.clone()),
        _ => Err(ExecutionError::function_error(function, "expected a list")),
    }
}

fn is_sorted(This(this): This<Cel>) -> Result<bool, ExecutionError> {
    let l = list_of(&this, "isSorted")?;
    for pair in l.windows(2) {
        match pair[0].partial_cmp(&pair[1]) {
            Some(std::cmp::Ordering::Greater) => return Ok(false),
            Some(_) => {}
            None => {
                return Err(ExecutionError::ValuesNotComparable(
                    pair[0].clone(),
                    pair[1].clone(),
                ));
            }
        }
    }
    Ok(true)
}

fn sum(This(this): This<Cel>) -> Result<Cel, ExecutionError> {
    let l = list_of(&this, "sum")?;
    let mut total = match l.first() {
        Some(Cel::Float(_)) => Cel::Float(0.0),
        Some(Cel::UInt(_)) => Cel::UInt(0),
        Some(Cel::Duration(_)) => Cel::Duration(chrono::Duration::zero()),
        _ => Cel::Int(0),
    };
    for x in l.iter() {
        total = match (&total, x) {
            (Cel::Int(a), Cel::Int(b)) => Cel::Int(
                a.checked_add(*b)
                    .ok_or_else(|| ExecutionError::function_error("sum", "integer overflow"))?,
            ),
            (Cel::UInt(a), Cel::UInt(b)) => Cel::UInt(
                a.checked_add(*b)
                    .ok_or_else(|| ExecutionError::function_error("sum", "integer overflow"))?,
            ),
            (Cel::Float(a), Cel::Float(b)) => Cel::Float(a + b),
            (Cel::Duration(a), Cel::Duration(b)) => Cel::Duration(*a + *b),
            _ => return Err(ExecutionError::function_error("sum", "mixed element types")),
        };
    }
    Ok(total)
}

fn extreme(this: &Cel, function: &str, want: std::cmp::Ordering) -> Result<Cel, ExecutionError> {
    let l = list_of(this, function)?;
    let mut best = l
        .first()
        .cloned()
        .ok_or_else(|| ExecutionError::function_error(function, "list is empty"))?;
    for x in l.iter().skip(1) {
        match x.partial_cmp(&best) {
            Some(o) if o == want => best = x.clone(),
            Some(_) => {}
            None => return Err(ExecutionError::ValuesNotComparable(x.clone(), best)),
        }
    }
    Ok(best)
}

fn list_min(This(this): This<Cel>) -> Result<Cel, ExecutionError> {
    extreme(&this, "min", std::cmp::Ordering::Less)
}

fn list_max(This(this): This<Cel>) -> Result<Cel, ExecutionError> {
    extreme(&this, "max", std::cmp::Ordering::Greater)
}

fn regexp(pattern: &str, function: &str) -> Result<chartkit_regexp::Regexp, ExecutionError> {
    chartkit_regexp::Regexp::new(pattern).map_err(|e| ExecutionError::function_error(function, e))
}

fn find(This(this): This<Arc<String>>, pattern: Arc<String>) -> Result<Cel, ExecutionError> {
    let re = regexp(&pattern, "find")?;
    Ok(Cel::String(Arc::new(
        re.find(&this).unwrap_or("").to_string(),
    )))
}

fn find_all(
    This(this): This<Arc<String>>,
    Arguments(args): Arguments,
) -> Result<Cel, ExecutionError> {
    let pattern = match args.first() {
        Some(Cel::String(p)) => p.clone(),
        _ => {
            return Err(ExecutionError::function_error(
                "findAll",
                "expected a pattern",
            ));
        }
    };
    let limit = match args.get(1) {
        Some(Cel::Int(n)) => *n,
        _ => -1,
    };
    let re = regexp(&pattern, "findAll")?;
    let found: Vec<Cel> = re
        .find_all_index(&this, limit)
        .into_iter()
        .map(|(a, b)| Cel::String(Arc::new(this[a..b].to_string())))
        .collect();
    Ok(Cel::List(Arc::new(found)))
}

fn two_lists(args: &[Cel], function: &str) -> Result<(CelList, CelList), ExecutionError> {
    match args {
        [a, b] => Ok((list_of(a, function)?, list_of(b, function)?)),
        _ => Err(ExecutionError::function_error(
            function,
            "expected two lists",
        )),
    }
}

fn sets_contains(Arguments(args): Arguments) -> Result<bool, ExecutionError> {
    let (a, b) = two_lists(&args, "sets.contains")?;
    Ok(b.iter().all(|x| a.contains(x)))
}

fn sets_intersects(Arguments(args): Arguments) -> Result<bool, ExecutionError> {
    let (a, b) = two_lists(&args, "sets.intersects")?;
    Ok(b.iter().any(|x| a.contains(x)))
}

fn sets_equivalent(Arguments(args): Arguments) -> Result<bool, ExecutionError> {
    let (a, b) = two_lists(&args, "sets.equivalent")?;
    Ok(b.iter().all(|x| a.contains(x)) && a.iter().all(|x| b.contains(x)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        json!({"type": "object", "properties": {"spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.min <= self.max", "message": "min must not exceed max"},
                {"rule": "self.name.matches('^[a-z]+$')", "fieldPath": ".name", "reason": "FieldValueForbidden", "message": "lowercase only"},
                {"rule": "size(self.tags) <= 3"},
                {"rule": "self.tags.isSorted()", "messageExpression": "'tags must be sorted, got ' + self.tags.join(',')"},
                {"rule": "self.max == oldSelf.max || self.max > oldSelf.max", "message": "max may only grow"},
                {"rule": "url(self.name).getHost() == 'x'"},
            ],
            "properties": {
                "min": {"type": "integer"}, "max": {"type": "integer"},
                "name": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
        }}})
    }

    fn messages(out: &Outcome) -> Vec<String> {
        out.causes.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn rules_refuse_in_the_api_servers_words() {
        let good = json!({"spec": {"min": 1, "max": 2, "name": "abc", "tags": ["a", "b"]}});
        let mut out = Outcome::default();
        check(&schema(), &good, None, &mut out);
        assert!(out.causes.is_empty(), "{:?}", messages(&out));
        assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
        assert!(out.warnings[0].contains("'url'"), "{:?}", out.warnings);

        let bad =
            json!({"spec": {"min": 3, "max": 1, "name": "ABC", "tags": ["d", "c", "b", "a"]}});
        let mut out = Outcome::default();
        check(&schema(), &bad, Some(&good), &mut out);
        assert_eq!(
            messages(&out),
            [
                "spec: Invalid value: \"object\": min must not exceed max",
                "spec.name: Forbidden: lowercase only",
                "spec: Invalid value: \"object\": failed rule: size(self.tags) <= 3",
                "spec: Invalid value: \"object\": tags must be sorted, got d,c,b,a",
                "spec: Invalid value: \"object\": max may only grow",
            ]
        );
    }

    #[test]
    fn evaluation_errors_and_kubernetes_functions() {
        let s = json!({"type": "object", "properties": {"spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.missing == 1"},
                {"rule": "self.xs.sum() == 6 && self.xs.min() == 1 && self.xs.max() == 3"},
                {"rule": "'a1b22'.findAll('[0-9]+') == ['1', '22'] && 'abc'.find('b.') == 'bc'"},
                {"rule": "sets.contains(self.xs, [1, 2]) && !sets.intersects(self.xs, [9])"},
            ],
            "properties": {"xs": {"type": "array", "items": {"type": "integer"}}},
        }}});
        let mut out = Outcome::default();
        check(&s, &json!({"spec": {"xs": [3, 1, 2]}}), None, &mut out);
        assert_eq!(
            messages(&out),
            [
                "spec: Invalid value: \"object\": no such key: missing evaluating rule: self.missing == 1"
            ]
        );
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    }
}
