//! Go text/template's predefined functions.

use std::rc::Rc;

use super::{FuncError, Imp, Registry, compare};
use crate::budget;
use crate::format::sprintf_within;
use crate::print;
use crate::value::{ListKind, MapKind, Ty, Value};

const R: Ty = Ty::Reflect;

pub(crate) fn register(r: &mut Registry<'_>) {
    r.special("and", &[R], Some(R), Imp::AndOr(false));
    r.special("or", &[R], Some(R), Imp::AndOr(true));
    r.special("call", &[R], Some(R), Imp::Call);
    r.pure("not", &[R], |a| Ok(Value::Bool(!a[0].truth())));
    r.exec("len", &[R], None, |exec, a| {
        len(a, exec.nil_interfaces & 1 != 0).map_err(FuncError::from)
    });
    r.variadic("index", &[R], R, index);
    r.variadic("slice", &[R], R, slice);
    r.variadic("eq", &[R], R, compare::eq);
    r.pure("ne", &[R, R], compare::ne);
    r.pure("lt", &[R, R], compare::lt);
    r.pure("le", &[R, R], compare::le);
    r.pure("gt", &[R, R], compare::gt);
    r.pure("ge", &[R, R], compare::ge);
    r.variadic("print", &[], Ty::Any, |a| {
        budget::check_args(a)?;
        Ok(print::sprint_args(a))
    });
    r.variadic("println", &[], Ty::Any, |a| {
        budget::check_args(a)?;
        Ok(print::sprintln_args(a))
    });
    r.variadic("printf", &[Ty::String], Ty::Any, |a| {
        budget::check_args(&a[1..])?;
        let meter = budget::Meter::new();
        match sprintf_within(super::arg::str(&a[0]), &a[1..], meter.room()) {
            Some(out) => Ok(out),
            None => Err(meter.exceeded()),
        }
    });
    r.variadic("html", &[], Ty::Any, |a| {
        budget::check_args(a)?;
        Ok(Value::string(html_escape(&eval_args(a))))
    });
    r.variadic("js", &[], Ty::Any, |a| {
        budget::check_args(a)?;
        Ok(Value::string(js_escape(&eval_args(a))))
    });
    r.variadic("urlquery", &[], Ty::Any, |a| {
        budget::check_args(a)?;
        Ok(Value::string(query_escape(&eval_args(a))))
    });
}

/// The text `html`, `js` and `urlquery` escape: a lone string as is, anything else
/// printed, with absent values printing as `<no value>`.
fn eval_args(args: &[Value]) -> String {
    if let [Value::String(s)] = args {
        return s.to_string();
    }
    let shown: Vec<Value> = args
        .iter()
        .map(|a| match a {
            Value::Nil => Value::str("<no value>"),
            other => other.clone(),
        })
        .collect();
    match print::sprint_args(&shown) {
        Value::String(s) => s.to_string(),
        other => other.go_text().unwrap_or_default().into_owned(),
    }
}

pub(crate) fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\0' => out.push('\u{FFFD}'),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

pub(crate) fn js_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u00{:02X}", c as u32)),
            c if c.is_ascii() || print::is_print(c) => out.push(c),
            c => out.push_str(&format!("\\u{:04X}", c as u32)),
        }
    }
    out
}

/// `url.QueryEscape`.
pub(crate) fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The panic of Go's reflection when a builtin asks for the type of an absent value.
pub(crate) const ZERO_VALUE_TYPE: &str = "reflect: call of reflect.Value.Type on zero Value";

/// Go's `len`. A nil read from a map or slice element is a nil interface, which Go
/// follows like a nil pointer; a nil with no type at all makes reflection panic.
fn len(a: &[Value], nil_interface: bool) -> Result<Value, String> {
    let n = match a[0].plain() {
        Value::Nil if nil_interface => return Err("len of nil pointer".into()),
        Value::String(s) => s.len(),
        Value::RawStr(b) | Value::Bytes(b) => b.len(),
        Value::List(l) => l.len(),
        Value::Map(m) => m.len(),
        Value::Nil => return Err(ZERO_VALUE_TYPE.into()),
        other => return Err(format!("len of type {}", other.type_name())),
    };
    Ok(Value::Int(n as i64))
}

fn index_arg(index: &Value, cap: usize) -> Result<usize, String> {
    let x = match index {
        Value::Int(i) | Value::Int64(i) => *i,
        Value::Uint8(u) => *u as i64,
        Value::Nil => return Err("cannot index slice/array with nil".into()),
        other => {
            return Err(format!(
                "cannot index slice/array with type {}",
                other.type_name()
            ));
        }
    };
    if x < 0 || x as u64 > cap as u64 {
        return Err(format!("index out of range: {x}"));
    }
    Ok(x as usize)
}

fn index(a: &[Value]) -> Result<Value, String> {
    let mut item = a[0].plain();
    if item.is_nil() {
        return Err("index of untyped nil".into());
    }
    for idx in &a[1..] {
        item = match item.plain() {
            Value::Nil => return Err("index of nil pointer".into()),
            Value::List(l) => {
                let x = index_arg(idx, l.len())?;
                l.get(x)
                    .ok_or_else(|| "reflect: slice index out of range".to_owned())?
            }
            ref text @ (Value::String(_) | Value::RawStr(_)) => {
                let b = text.go_str_bytes().unwrap_or_default();
                let x = index_arg(idx, b.len())?;
                Value::Uint8(
                    *b.get(x)
                        .ok_or_else(|| "reflect: string index out of range".to_owned())?,
                )
            }
            Value::Bytes(b) => {
                let x = index_arg(idx, b.len())?;
                Value::Uint8(
                    *b.get(x)
                        .ok_or_else(|| "reflect: slice index out of range".to_owned())?,
                )
            }
            Value::Map(m) => {
                let key = match idx {
                    Value::String(s) => s.clone(),
                    Value::Nil => return Err("value is nil; should be of type string".into()),
                    other => {
                        return Err(format!(
                            "value has type {}; should be string",
                            other.type_name()
                        ));
                    }
                };
                match m.get(&key) {
                    Some(v) => v,
                    None if m.kind == MapKind::String => Value::str(""),
                    None => Value::Nil,
                }
            }
            other => return Err(format!("can't index item of type {}", other.type_name())),
        };
    }
    Ok(item)
}

fn slice(a: &[Value]) -> Result<Value, String> {
    let item = a[0].plain();
    if item.is_nil() {
        return Err("slice of untyped nil".into());
    }
    let indexes = &a[1..];
    if indexes.len() > 3 {
        return Err(format!("too many slice indexes: {}", indexes.len()));
    }
    let len = match &item {
        Value::String(_) | Value::RawStr(_) => {
            if indexes.len() == 3 {
                return Err("cannot 3-index slice a string".into());
            }
            super::arg::bytes(&item).len()
        }
        Value::List(l) => l.len(),
        Value::Bytes(b) => b.len(),
        other => return Err(format!("can't slice item of type {}", other.type_name())),
    };
    let mut idx = [0, len, len];
    for (i, index) in indexes.iter().enumerate() {
        idx[i] = index_arg(index, len)?;
    }
    if idx[0] > idx[1] {
        return Err(format!("invalid slice index: {} > {}", idx[0], idx[1]));
    }
    if indexes.len() == 3 && idx[1] > idx[2] {
        return Err(format!("invalid slice index: {} > {}", idx[1], idx[2]));
    }
    Ok(match item {
        Value::String(_) | Value::RawStr(_) => super::arg::sub(&item, idx[0], idx[1]),
        Value::Bytes(b) => Value::Bytes(Rc::from(&b[idx[0]..idx[1]])),
        Value::List(l) => Value::List(Rc::new(l.slice(idx[0], idx[1]))),
        _ => Value::Nil,
    })
}

#[allow(dead_code)]
const _: ListKind = ListKind::Interface;
