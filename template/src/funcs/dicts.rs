//! Sprig's dictionary functions, with Go's map reference semantics: `set`, `unset`,
//! `merge` and `mergeOverwrite` change the map they are given, and every variable or
//! value holding that map sees the change.

use std::rc::Rc;

use super::Registry;
use super::arg::str;
use super::defaults::empty;
use super::strings::strval_text;
use crate::value::{Entries, List, ListKind, MapCell, MapKind, Ty, Value};

const A: Ty = Ty::Any;
const M: Ty = Ty::Map;
const S: Ty = Ty::String;

pub(crate) fn register(r: &mut Registry<'_>) {
    r.variadic("dict", &[], A, |a| {
        let mut entries = Entries::new();
        for pair in a.chunks(2) {
            let key: Rc<str> = Rc::from(strval_text(&pair[0]));
            let value = pair.get(1).cloned().unwrap_or_else(|| Value::str(""));
            entries.insert(key, value);
        }
        Ok(Value::map(entries))
    });
    r.pure("get", &[M, S], |a| {
        Ok(map_get(&a[0], str(&a[1])).unwrap_or_else(|| Value::str("")))
    });
    r.pure("set", &[M, S, A], |a| {
        let m = writable(&a[0])?;
        m.borrow_mut().insert(Rc::from(str(&a[1])), a[2].clone());
        Ok(a[0].clone())
    });
    r.pure("unset", &[M, S], |a| {
        if let Value::Map(m) = &a[0] {
            m.borrow_mut().remove(str(&a[1]));
        }
        Ok(a[0].clone())
    });
    r.pure("hasKey", &[M, S], |a| {
        Ok(Value::Bool(map_get(&a[0], str(&a[1])).is_some()))
    });
    r.variadic("pluck", &[S], M, |a| {
        let key = str(&a[0]);
        Ok(Value::list(
            a[1..].iter().filter_map(|d| map_get(d, key)).collect(),
        ))
    });
    r.variadic("keys", &[], M, |a| {
        let mut keys = Vec::new();
        for d in a {
            if let Value::Map(m) = d {
                keys.extend(m.borrow().keys().map(|k| Value::String(k.clone())));
            }
        }
        Ok(Value::List(Rc::new(List::new(ListKind::String, keys))))
    });
    r.pure("values", &[M], |a| {
        Ok(Value::list(match &a[0] {
            Value::Map(m) => m.borrow().values().cloned().collect(),
            _ => Vec::new(),
        }))
    });
    r.variadic("pick", &[M], S, |a| {
        let mut out = Entries::new();
        for k in &a[1..] {
            let k = str(k);
            if let Some(v) = map_get(&a[0], k) {
                out.insert(Rc::from(k), v);
            }
        }
        Ok(Value::map(out))
    });
    r.variadic("omit", &[M], S, |a| {
        let omit: Vec<&str> = a[1..].iter().map(str).collect();
        let mut out = Entries::new();
        if let Value::Map(m) = &a[0] {
            for (k, v) in m.borrow().iter() {
                if !omit.contains(&&**k) {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
        Ok(Value::map(out))
    });
    r.variadic("merge", &[M], M, |a| {
        Ok(merge_all(a, false).unwrap_or_else(|e| {
            let _ = e;
            Value::str("")
        }))
    });
    r.variadic("mustMerge", &[M], M, |a| merge_all(a, false));
    r.variadic("mergeOverwrite", &[M], M, |a| {
        Ok(merge_all(a, true).unwrap_or_else(|_| Value::str("")))
    });
    r.variadic("mustMergeOverwrite", &[M], M, |a| merge_all(a, true));
    r.variadic("dig", &[], A, dig);
    // A copy is a tree: parts the original shares are copied each time they appear.
    // copystructure asks for the type of what it copies, which Go's reflection cannot
    // give for nil: the panic is the error of both forms.
    for name in ["deepCopy", "mustDeepCopy"] {
        r.pure(name, &[A], |a| {
            if a[0].is_nil() {
                return Err(crate::funcs::builtins::ZERO_VALUE_TYPE.into());
            }
            crate::budget::check_expansion(&a[0])?;
            Ok(deep_copy(&a[0]))
        });
    }
}

fn map_get(d: &Value, key: &str) -> Option<Value> {
    match d {
        Value::Map(m) => m.get(key),
        _ => None,
    }
}

/// Writing to a nil map panics in Go.
fn writable(v: &Value) -> Result<&MapCell, String> {
    match v {
        Value::Map(m) => Ok(m),
        _ => Err("assignment to entry in nil map".into()),
    }
}

fn merge_all(a: &[Value], overwrite: bool) -> Result<Value, String> {
    // A nil destination map gets a fresh map (mergo sets the pointed-to map), and a nil
    // source merges nothing.
    let dst = match &a[0] {
        Value::Map(m) => m.clone(),
        _ => Rc::new(MapCell::new(MapKind::Interface, Entries::new())),
    };
    for src in &a[1..] {
        if let Value::Map(src) = src {
            merge_maps(&dst, src, overwrite);
        }
    }
    Ok(Value::Map(dst))
}

/// `mergo.Merge` / `mergo.MergeWithOverwrite` on `map[string]interface{}`: nested maps
/// merge recursively in place; without overwrite a key is only filled when the
/// destination lacks it or holds an empty value; with overwrite every source value
/// wins, empty ones included, except that a nil source value never replaces a map or
/// list, and a non-empty destination list is kept when merging without overwrite.
fn merge_maps(dst: &MapCell, src: &MapCell, overwrite: bool) {
    if std::ptr::eq(dst, src) {
        return;
    }
    let src_entries: Vec<(Rc<str>, Value)> = src
        .borrow()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let dst_was_empty = dst.is_empty();
    for (key, src_value) in src_entries {
        let dst_value = dst.get(&key);
        if src_value.is_nil() {
            if overwrite {
                dst.borrow_mut().insert(key, Value::Nil);
            }
            continue;
        }
        match (&src_value, &dst_value) {
            (Value::Map(s), Some(Value::Map(d))) => {
                merge_maps(d, s, overwrite);
                if !empty(dst_value.as_ref().unwrap_or(&Value::Nil)) {
                    continue;
                }
            }
            (Value::List(_), _) => {
                let keep_dst = !(overwrite || dst_was_empty);
                if let Some(d) = &dst_value
                    && keep_dst
                    && !empty(d)
                {
                    continue;
                }
                if overwrite || dst_value.as_ref().is_none_or(empty) {
                    dst.borrow_mut().insert(key, src_value);
                }
                continue;
            }
            _ => {}
        }
        if overwrite || dst_value.as_ref().is_none_or(empty) {
            dst.borrow_mut().insert(key, src_value);
        }
    }
}

/// Sprig's `dig`: keys, then a default, then a `map[string]interface{}`.
fn dig(a: &[Value]) -> Result<Value, String> {
    if a.len() < 3 {
        return Err("dig needs at least three arguments".into());
    }
    let dict = &a[a.len() - 1];
    let default = &a[a.len() - 2];
    let mut keys = Vec::new();
    for k in &a[..a.len() - 2] {
        match k {
            Value::String(s) => keys.push(s.clone()),
            other => {
                return Err(format!(
                    "interface conversion: interface {{}} is {}, not string",
                    type_for_assertion(other)
                ));
            }
        }
    }
    let mut cur = as_plain_map(dict)?;
    for (i, key) in keys.iter().enumerate() {
        let Some(step) = cur.get(key) else {
            return Ok(default.clone());
        };
        if i == keys.len() - 1 {
            return Ok(step);
        }
        cur = as_plain_map(&step)?;
    }
    Ok(Value::Map(cur))
}

fn type_for_assertion(v: &Value) -> String {
    match v {
        Value::Nil => "nil".into(),
        other => other.type_name(),
    }
}

/// A Go type assertion to `map[string]interface{}`, which named map types fail.
fn as_plain_map(v: &Value) -> Result<Rc<MapCell>, String> {
    match v {
        Value::Map(m) if m.kind == MapKind::Interface => Ok(m.clone()),
        other => Err(format!(
            "interface conversion: interface {{}} is {}, not map[string]interface {{}}",
            type_for_assertion(other)
        )),
    }
}

/// `copystructure.Copy`: maps and slices are copied all the way down.
pub(crate) fn deep_copy(v: &Value) -> Value {
    match v {
        Value::List(l) if l.is_nil() => v.clone(),
        Value::List(l) => Value::List(Rc::new(List::new(
            l.kind,
            (l.iter()
                .map(|item| chartkit_yaml::with_stack(|| deep_copy(&item))))
            .collect(),
        ))),
        Value::Map(m) if m.is_nil() => Value::nil_map(m.kind),
        Value::Map(m) => Value::map_of(
            m.kind,
            m.borrow()
                .iter()
                .map(|(k, v)| (k.clone(), chartkit_yaml::with_stack(|| deep_copy(v))))
                .collect(),
        ),
        Value::Object(o) => o.deep_copy().unwrap_or_else(|| v.clone()),
        other => other.clone(),
    }
}
