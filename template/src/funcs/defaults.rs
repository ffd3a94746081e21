//! Sprig's defaults: `default`, `empty`, `coalesce`, `all`, `any`, `ternary`.

use super::Registry;
use crate::value::{Ty, Value};

const A: Ty = Ty::Any;

pub(crate) fn register(r: &mut Registry<'_>) {
    r.variadic("default", &[A], A, |a| {
        Ok(match a.get(1) {
            Some(given) if !empty(given) => given.clone(),
            _ => a[0].clone(),
        })
    });
    r.pure("empty", &[A], |a| Ok(Value::Bool(empty(&a[0]))));
    r.variadic("coalesce", &[], A, |a| {
        Ok(a.iter().find(|v| !empty(v)).cloned().unwrap_or(Value::Nil))
    });
    r.variadic("all", &[], A, |a| {
        Ok(Value::Bool(a.iter().all(|v| !empty(v))))
    });
    r.variadic("any", &[], A, |a| {
        Ok(Value::Bool(a.iter().any(|v| !empty(v))))
    });
    r.pure("ternary", &[A, A, Ty::Bool], |a| {
        Ok(if matches!(a[2], Value::Bool(true)) {
            a[0].clone()
        } else {
            a[1].clone()
        })
    });
}

/// Sprig's `empty`: the zero value of its type (structs never are).
pub(crate) fn empty(v: &Value) -> bool {
    match v {
        Value::Object(o) => match o.underlying() {
            Some(u) => empty(&u),
            None => false,
        },
        other => !other.truth(),
    }
}
