//! Sprig's reflection functions and Go's `reflect.DeepEqual`.

use super::Registry;
use super::arg::str;
use crate::value::{Ty, Value};

pub(crate) fn register(r: &mut Registry<'_>) {
    r.pure("typeOf", &[Ty::Any], |a| {
        Ok(Value::string(a[0].type_name()))
    });
    r.pure("typeIs", &[Ty::String, Ty::Any], |a| {
        Ok(Value::Bool(str(&a[0]) == a[1].type_name()))
    });
    r.pure("typeIsLike", &[Ty::String, Ty::Any], |a| {
        let t = a[1].type_name();
        let target = str(&a[0]);
        Ok(Value::Bool(target == t || format!("*{target}") == t))
    });
    r.pure("kindOf", &[Ty::Any], |a| Ok(Value::str(a[0].kind_name())));
    r.pure("kindIs", &[Ty::String, Ty::Any], |a| {
        Ok(Value::Bool(str(&a[0]) == a[1].kind_name()))
    });
    r.pure("deepEqual", &[Ty::Any, Ty::Any], |a| {
        Ok(Value::Bool(deep_equal(&a[0], &a[1])))
    });
}

/// `reflect.DeepEqual`: same Go type and equal contents.
pub(crate) fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Nil, Value::Nil) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) | (Value::Int64(x), Value::Int64(y)) => x == y,
        (Value::Uint8(x), Value::Uint8(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::RawStr(x), Value::RawStr(y)) => x == y,
        (Value::Bytes(x), Value::Bytes(y)) => x == y,
        (Value::List(x), Value::List(y)) => {
            // reflect.DeepEqual: a nil slice is not an empty one.
            x.kind == y.kind
                && x.is_nil() == y.is_nil()
                && x.len() == y.len()
                && x.iter().zip(y.iter()).all(|(p, q)| deep_equal(&p, &q))
        }
        (Value::Map(x), Value::Map(y)) => {
            if std::rc::Rc::ptr_eq(x, y) {
                return true;
            }
            let (xm, ym) = (x.borrow(), y.borrow());
            x.kind == y.kind
                && xm.len() == ym.len()
                && xm
                    .iter()
                    .all(|(k, v)| ym.get(k).is_some_and(|w| deep_equal(v, w)))
        }
        (Value::Object(x), Value::Object(y)) => {
            std::rc::Rc::ptr_eq(x, y)
                || (x.type_name() == y.type_name() && deep_equal(&x.to_data(), &y.to_data()))
        }
        _ => false,
    }
}
