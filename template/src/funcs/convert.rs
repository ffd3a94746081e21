//! Type conversions: Sprig's `int`, `int64`, `float64`, `atoi`, `toDecimal`, with
//! `spf13/cast` semantics.

use super::Registry;
use super::arg::str;
use crate::parse::{parse_float, parse_int};
use crate::value::{Ty, Value};

pub(crate) fn register(r: &mut Registry<'_>) {
    r.pure("atoi", &[Ty::String], |a| {
        let s = str(&a[0]);
        Ok(Value::Int(atoi(s).unwrap_or(0)))
    });
    r.pure("int", &[Ty::Any], |a| Ok(Value::Int(to_int64(&a[0]))));
    r.pure("int64", &[Ty::Any], |a| Ok(Value::Int64(to_int64(&a[0]))));
    r.pure("float64", &[Ty::Any], |a| {
        Ok(Value::Float(to_float64(&a[0])))
    });
    r.pure("toDecimal", &[Ty::Any], |a| {
        let text = crate::print::sprint(&a[0]);
        Ok(Value::Int64(parse_radix(&text, 8).unwrap_or(0)))
    });
}

/// `strconv.Atoi`: decimal only, optional sign.
fn atoi(s: &str) -> Option<i64> {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `strconv.ParseInt(s, base, 64)` for an explicit base.
fn parse_radix(s: &str, base: u32) -> Option<i64> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if body.is_empty() || body.starts_with(['+', '-']) {
        return None;
    }
    let v = i64::from_str_radix(body, base).ok()?;
    Some(if neg { -v } else { v })
}

/// cast's `trimZeroDecimal`: "3.000" becomes "3" so that it parses as an integer.
fn trim_zero_decimal(s: &str) -> &str {
    match s.split_once('.') {
        Some((int_part, frac)) if !frac.is_empty() && frac.bytes().all(|b| b == b'0') => int_part,
        _ => s,
    }
}

/// `cast.ToInt64`: numbers truncate, strings parse (with base prefixes), bools are 0/1,
/// anything else is 0.
pub(crate) fn to_int64(v: &Value) -> i64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i,
        Value::Uint8(u) => *u as i64,
        Value::Float(f) => go_float_to_int(*f),
        Value::Bool(b) => *b as i64,
        Value::String(s) => parse_int(trim_zero_decimal(s)).unwrap_or(0),
        other => super::gotime::month_or_weekday(other).unwrap_or(0),
    }
}

/// Go's `int64(f)` on amd64: the integer part when it fits, and the CPU's "integer
/// indefinite" value, the smallest int64, for NaN and anything out of range (Rust's `as`
/// saturates instead).
pub(crate) fn go_float_to_int(f: f64) -> i64 {
    // 2^63 is exactly representable; every float below it truncates into range, and
    // NaN is in no range.
    const TWO_TO_63: f64 = 9_223_372_036_854_775_808.0;
    if !(-TWO_TO_63..TWO_TO_63).contains(&f) {
        return i64::MIN;
    }
    f as i64
}

/// `cast.ToFloat64`.
pub(crate) fn to_float64(v: &Value) -> f64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i as f64,
        Value::Uint8(u) => *u as f64,
        Value::Float(f) => *f,
        Value::Bool(b) => *b as i64 as f64,
        Value::String(s) => go_parse_float(s).unwrap_or(0.0),
        other => super::gotime::month_or_weekday(other).map_or(0.0, |n| n as f64),
    }
}

/// `strconv.ParseFloat(s, 64)`, including the special spellings Go accepts.
pub(crate) fn go_parse_float(s: &str) -> Option<f64> {
    let lower = s.to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['+', '-']);
    if matches!(unsigned, "inf" | "infinity") {
        return Some(if lower.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    if unsigned == "nan" {
        return Some(f64::NAN);
    }
    parse_float(s)
}
