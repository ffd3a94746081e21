//! Go's comparison builtins: `eq` with several operands, `ne`, `lt`, `le`, `gt`, `ge`.

use crate::format::sprintf;
use crate::value::Value;

#[derive(PartialEq, Eq, Clone, Copy)]
enum Basic {
    Invalid,
    Bool,
    Int,
    Uint,
    Float,
    Complex,
    String,
}

fn basic_kind(v: &Value) -> Basic {
    match v {
        Value::Bool(_) => Basic::Bool,
        Value::Int(_) | Value::Int64(_) => Basic::Int,
        Value::Uint8(_) => Basic::Uint,
        Value::Float(_) => Basic::Float,
        Value::String(_) | Value::RawStr(_) => Basic::String,
        Value::Object(o) if crate::complex::parts(o).is_some() => Basic::Complex,
        _ => Basic::Invalid,
    }
}

fn int_of(v: &Value) -> i64 {
    super::arg::int(v)
}

/// Whether Go's reflection sees the same kind, for comparing non-basic values.
fn same_reflect_kind(a: &Value, b: &Value) -> bool {
    a.is_nil() || b.is_nil() || a.kind_name() == b.kind_name()
}

/// `a == b`, as Go's `eq` decides it for one pair.
pub(crate) fn equal(a: &Value, b: &Value) -> Result<bool, String> {
    let (a, b) = (a.plain(), b.plain());
    let (k1, k2) = (basic_kind(&a), basic_kind(&b));
    if k1 != k2 {
        return match (k1, k2) {
            (Basic::Int, Basic::Uint) => Ok(int_of(&a) >= 0 && int_of(&a) == int_of(&b)),
            (Basic::Uint, Basic::Int) => Ok(int_of(&b) >= 0 && int_of(&a) == int_of(&b)),
            _ if !a.is_nil() && !b.is_nil() => Err(format!(
                "incompatible types for comparison: {} and {}",
                a.type_name(),
                b.type_name()
            )),
            _ => Ok(false),
        };
    }
    Ok(match (&a, &b) {
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Object(x), Value::Object(y)) if k1 == Basic::Complex => {
            crate::complex::parts(x) == crate::complex::parts(y)
        }
        (x, y) if k1 == Basic::String => x.go_str_bytes() == y.go_str_bytes(),
        _ if k1 == Basic::Int || k1 == Basic::Uint => int_of(&a) == int_of(&b),
        _ => {
            if !same_reflect_kind(&a, &b) {
                return Err(format!(
                    "non-comparable types {}: {}, {}: {}",
                    sprintf("%s", std::slice::from_ref(&a)),
                    a.type_name(),
                    b.type_name(),
                    sprintf("%v", std::slice::from_ref(&b))
                ));
            }
            if a.is_nil() || b.is_nil() {
                a.is_nil() == b.is_nil()
            } else {
                match (&a, &b) {
                    (Value::Object(x), Value::Object(y)) => std::rc::Rc::ptr_eq(x, y),
                    _ => {
                        return Err(format!(
                            "non-comparable type {}: {}",
                            sprintf("%s", std::slice::from_ref(&b)),
                            b.type_name()
                        ));
                    }
                }
            }
        }
    })
}

pub(crate) fn eq(args: &[Value]) -> Result<Value, String> {
    if args.len() < 2 {
        return Err("missing argument for comparison".into());
    }
    for other in &args[1..] {
        if equal(&args[0], other)? {
            return Ok(Value::Bool(true));
        }
    }
    Ok(Value::Bool(false))
}

pub(crate) fn ne(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Bool(!equal(&args[0], &args[1])?))
}

fn less(a: &Value, b: &Value) -> Result<bool, String> {
    let (a, b) = (a.plain(), b.plain());
    let (k1, k2) = (basic_kind(&a), basic_kind(&b));
    if [k1, k2]
        .iter()
        .any(|k| matches!(k, Basic::Invalid | Basic::Complex))
    {
        return Err("invalid type for comparison".into());
    }
    if k1 != k2 {
        return match (k1, k2) {
            (Basic::Int, Basic::Uint) => Ok(int_of(&a) < 0 || int_of(&a) < int_of(&b)),
            (Basic::Uint, Basic::Int) => Ok(int_of(&b) >= 0 && int_of(&a) < int_of(&b)),
            _ => Err(format!(
                "incompatible types for comparison: {} and {}",
                a.type_name(),
                b.type_name()
            )),
        };
    }
    Ok(match (&a, &b) {
        (Value::Bool(_), Value::Bool(_)) => return Err("invalid type for comparison".into()),
        (Value::Float(x), Value::Float(y)) => x < y,
        (Value::String(x), Value::String(y)) => x < y,
        (x, y) if k1 == Basic::String => x.go_str_bytes() < y.go_str_bytes(),
        _ => int_of(&a) < int_of(&b),
    })
}

pub(crate) fn lt(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Bool(less(&args[0], &args[1])?))
}

pub(crate) fn le(args: &[Value]) -> Result<Value, String> {
    let lt = less(&args[0], &args[1])?;
    Ok(Value::Bool(lt || equal(&args[0], &args[1])?))
}

pub(crate) fn gt(args: &[Value]) -> Result<Value, String> {
    let lt = less(&args[0], &args[1])?;
    Ok(Value::Bool(!(lt || equal(&args[0], &args[1])?)))
}

pub(crate) fn ge(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Bool(!less(&args[0], &args[1])?))
}
