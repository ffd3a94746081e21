//! Sprig's list functions. They accept any slice and, like Sprig, return
//! `[]interface{}`; the plain versions fail with the same message as the `must`
//! versions (Sprig panics and Go's template engine turns the panic into an error).

use std::rc::Rc;

use super::Registry;
use super::arg::int;
use super::convert::to_int64;
use super::defaults::empty;
use super::reflection::deep_equal;
use crate::value::{List, ListKind, Ty, Value};

const A: Ty = Ty::Any;

/// What Go's reflection calls the kind of a non-slice value, for Sprig's messages.
pub(crate) fn kind_for_error(v: &Value) -> Result<&'static str, String> {
    match v {
        Value::Nil => {
            Err("runtime error: invalid memory address or nil pointer dereference".into())
        }
        other => Ok(other.kind_name()),
    }
}

/// The elements of a slice, or Sprig's error naming the kind it got instead.
fn items(v: &Value, what: &str) -> Result<Vec<Value>, String> {
    match v.plain() {
        Value::List(l) => Ok(l.to_vec()),
        Value::Bytes(b) => Ok(b.iter().map(|b| Value::Uint8(*b)).collect()),
        other => Err(format!("Cannot {what} on type {}", kind_for_error(&other)?)),
    }
}

fn list(items: Vec<Value>) -> Value {
    Value::list(items)
}

/// A nil `[]interface{}`, which prints as `[]` but is empty.
fn nil_list() -> Value {
    Value::list(Vec::new())
}

pub(crate) fn register(r: &mut Registry<'_>) {
    r.variadic("list", &[], A, |a| Ok(list(a.to_vec())));
    r.variadic("tuple", &[], A, |a| Ok(list(a.to_vec())));
    for name in ["append", "push", "mustAppend", "mustPush"] {
        r.pure(name, &[A, A], |a| {
            let mut l = items(&a[0], "push")?;
            l.push(a[1].clone());
            Ok(list(l))
        });
    }
    for name in ["prepend", "mustPrepend"] {
        r.pure(name, &[A, A], |a| {
            let mut l = items(&a[0], "prepend")?;
            l.insert(0, a[1].clone());
            Ok(list(l))
        });
    }
    for name in ["first", "mustFirst"] {
        r.pure(name, &[A], |a| {
            Ok(items(&a[0], "find first")?
                .first()
                .cloned()
                .unwrap_or(Value::Nil))
        });
    }
    for name in ["last", "mustLast"] {
        r.pure(name, &[A], |a| {
            Ok(items(&a[0], "find last")?
                .last()
                .cloned()
                .unwrap_or(Value::Nil))
        });
    }
    for name in ["rest", "mustRest"] {
        r.pure(name, &[A], |a| {
            let l = items(&a[0], "find rest")?;
            Ok(if l.is_empty() {
                nil_list()
            } else {
                list(l[1..].to_vec())
            })
        });
    }
    for name in ["initial", "mustInitial"] {
        r.pure(name, &[A], |a| {
            let l = items(&a[0], "find initial")?;
            Ok(if l.is_empty() {
                nil_list()
            } else {
                list(l[..l.len() - 1].to_vec())
            })
        });
    }
    for name in ["reverse", "mustReverse"] {
        r.pure(name, &[A], |a| {
            let mut l = items(&a[0], "find reverse")?;
            l.reverse();
            Ok(list(l))
        });
    }
    for name in ["compact", "mustCompact"] {
        r.pure(name, &[A], |a| {
            let l = items(&a[0], "compact")?;
            Ok(list(l.into_iter().filter(|v| !empty(v)).collect()))
        });
    }
    for name in ["uniq", "mustUniq"] {
        r.pure(name, &[A], |a| {
            let mut out: Vec<Value> = Vec::new();
            for v in items(&a[0], "find uniq")? {
                if !out.iter().any(|o| deep_equal(&v, o)) {
                    out.push(v);
                }
            }
            Ok(list(out))
        });
    }
    for name in ["without", "mustWithout"] {
        r.variadic(name, &[A], A, |a| {
            let omit = &a[1..];
            let l = items(&a[0], "find without")?;
            Ok(list(
                l.into_iter()
                    .filter(|v| !omit.iter().any(|o| deep_equal(v, o)))
                    .collect(),
            ))
        });
    }
    for name in ["has", "mustHas"] {
        r.pure(name, &[A, A], |a| {
            if a[1].is_nil() {
                return Ok(Value::Bool(false));
            }
            let l = items(&a[1], "find has")?;
            Ok(Value::Bool(l.iter().any(|v| deep_equal(&a[0], v))))
        });
    }
    for name in ["slice", "mustSlice"] {
        r.variadic(name, &[A], A, slice);
    }
    r.variadic("concat", &[], A, |a| {
        // The lists can all be one list, given many times.
        let slots = a.iter().map(crate::budget::shallow_size).sum();
        crate::budget::reserve(slots)?;
        let mut out = Vec::new();
        for l in a {
            match l.plain() {
                Value::List(l) => out.extend(l.iter()),
                Value::Bytes(b) => out.extend(b.iter().map(|b| Value::Uint8(*b))),
                other => {
                    return Err(format!(
                        "Cannot concat type {} as list",
                        kind_for_error(&other)?
                    ));
                }
            }
        }
        Ok(list(out))
    });
    for name in ["chunk", "mustChunk"] {
        r.pure(name, &[Ty::Int, A], |a| {
            let size = int(&a[0]);
            let l = items(&a[1], "chunk")?;
            if size <= 0 && !l.is_empty() {
                return Err("runtime error: makeslice: len out of range".into());
            }
            let chunks: Vec<Value> = if l.is_empty() {
                Vec::new()
            } else {
                l.chunks(size as usize).map(|c| list(c.to_vec())).collect()
            };
            Ok(Value::List(Rc::new(List::new(ListKind::Lists, chunks))))
        });
    }
}

fn slice(a: &[Value]) -> Result<Value, String> {
    let v = a[0].plain();
    let (kind, elems) = match &v {
        Value::List(l) => (l.kind, l.to_vec()),
        Value::Bytes(b) => (
            ListKind::Interface,
            b.iter().map(|b| Value::Uint8(*b)).collect(),
        ),
        other => {
            return Err(format!(
                "list should be type of slice or array but {}",
                kind_for_error(other)?
            ));
        }
    };
    if elems.is_empty() {
        return Ok(Value::Nil);
    }
    let start = a.get(1).map_or(0, to_int64);
    let end = a.get(2).map_or(elems.len() as i64, to_int64);
    if start < 0 || end < start || end as usize > elems.len() {
        return Err("reflect.Value.Slice: slice index out of bounds".into());
    }
    if let Value::Bytes(b) = &v {
        return Ok(Value::Bytes(Rc::from(&b[start as usize..end as usize])));
    }
    Ok(Value::List(Rc::new(List::new(
        kind,
        elems[start as usize..end as usize].to_vec(),
    ))))
}
