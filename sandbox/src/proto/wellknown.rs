//! Messages whose Go types write their own JSON (`MarshalJSON`): times, durations,
//! quantities, int-or-strings, raw JSON, named slices and the JSON schema unions of
//! CustomResourceDefinitions.

use serde_json::Value;

use super::decode::{DecodeError, Decoder, concat, scalar, wire_type};
use super::table::{Kind, MsgId, Scalar, Type};
use super::wire::WireValue;

/// Seconds from the Unix epoch to Go's zero time (January 1, year 1, UTC).
const GO_ZERO_SECONDS: i64 = -62_135_596_800;

/// The JSON of a message of a kind other than [`Kind::Object`].
pub fn value(
    dec: &Decoder<'_>,
    id: MsgId,
    slots: &[Vec<WireValue<'_>>],
    depth: usize,
) -> Result<Value, DecodeError> {
    let msg = &dec.table.messages[id];
    let slot = |number: u32| -> &[WireValue<'_>] {
        msg.field(number).map_or(&[][..], |i| slots[i].as_slice())
    };
    let int = |number: u32| -> Result<i64, DecodeError> {
        match slot(number).last() {
            None => Ok(0),
            Some(WireValue::Varint(x)) => Ok(*x as i64),
            Some(other) => Err(wire_type(other, &msg.name)),
        }
    };
    let string = |number: u32| -> Result<Option<String>, DecodeError> {
        match slot(number).last() {
            None => Ok(None),
            Some(v) => match scalar(Scalar::String, *v, &msg.name)? {
                Value::String(s) => Ok(Some(s)),
                _ => Ok(None),
            },
        }
    };
    let bytes = |number: u32| -> Result<Option<Vec<u8>>, DecodeError> {
        let values = slot(number);
        if values.is_empty() {
            return Ok(None);
        }
        concat(&values[values.len() - 1..], &msg.name).map(Some)
    };
    let field_of = |number: u32| msg.field(number).map(|i| &msg.fields[i]);
    let sub_message = |number: u32| -> Result<Option<Value>, DecodeError> {
        let values = slot(number);
        let Some(field) = field_of(number) else {
            return Ok(None);
        };
        let Type::Message(sub) = field.ty else {
            return Ok(None);
        };
        if values.is_empty() {
            return Ok(None);
        }
        let b = concat(values, &field.json)?;
        dec.message(sub, &b, depth + 1).map(Some)
    };
    let list = |number: u32| -> Result<Vec<Value>, DecodeError> {
        match field_of(number) {
            Some(field) => dec.repeated(field, slot(number), depth),
            None => Ok(Vec::new()),
        }
    };

    Ok(match msg.kind {
        Kind::Object => unreachable_object(&msg.name)?,
        Kind::Time => {
            if slot(1).is_empty() && slot(2).is_empty() {
                return Ok(Value::Null);
            }
            // Nanoseconds are dropped, as the API server's Time drops them.
            time(int(1)?, 0, false)?
        }
        Kind::MicroTime => {
            if slot(1).is_empty() && slot(2).is_empty() {
                return Ok(Value::Null);
            }
            time(int(1)?, i64::from(int(2)? as i32), true)?
        }
        Kind::Duration => Value::String(go_duration(int(1)?)),
        Kind::Quantity => match string(1)? {
            None => Value::String("0".to_string()),
            Some(s) => {
                check_quantity(&s)?;
                Value::String(s)
            }
        },
        Kind::IntOrString => match int(1)? {
            0 => Value::from(i64::from(int(2)? as i32)),
            1 => Value::String(string(3)?.unwrap_or_default()),
            other => {
                return Err(DecodeError::Value(format!(
                    "impossible IntOrString.Type {other}"
                )));
            }
        },
        Kind::RawJson => match bytes(1)? {
            None => Value::Null,
            Some(b) if b.is_empty() => Value::Null,
            Some(b) => serde_json::from_slice(&b).map_err(|e| {
                DecodeError::Value(format!("{} does not hold JSON: {e}", short_name(&msg.name)))
            })?,
        },
        Kind::List => {
            let items = list(1)?;
            if items.is_empty() {
                Value::Null
            } else {
                Value::Array(items)
            }
        }
        Kind::OrBool => match sub_message(2)? {
            Some(schema) => schema,
            None => Value::Bool(int(1)? != 0),
        },
        Kind::OrArray => {
            let schemas = list(2)?;
            if !schemas.is_empty() {
                Value::Array(schemas)
            } else {
                sub_message(1)?.unwrap_or(Value::Null)
            }
        }
        Kind::OrStringArray => {
            let property = list(2)?;
            if !property.is_empty() {
                Value::Array(property)
            } else {
                sub_message(1)?.unwrap_or(Value::Null)
            }
        }
    })
}

fn unreachable_object(name: &str) -> Result<Value, DecodeError> {
    Err(DecodeError::Value(format!(
        "{name} is an object type, not a well-known one"
    )))
}

fn short_name(full: &str) -> &str {
    full.rsplit('.').next().unwrap_or(full)
}

/// `time.Unix(seconds, nanos)` as metav1.Time (RFC 3339) or MicroTime (six fractional
/// digits) writes it; `null` for Go's zero time.
fn time(seconds: i64, nanos: i64, micro: bool) -> Result<Value, DecodeError> {
    let nanos = if micro { nanos - nanos % 1000 } else { 0 };
    let total = i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
    let secs = total.div_euclid(1_000_000_000);
    let frac = total.rem_euclid(1_000_000_000) as u32;
    if secs == i128::from(GO_ZERO_SECONDS) && frac == 0 {
        return Ok(Value::Null);
    }
    let out_of_range = || {
        DecodeError::Value(format!(
            "Time.MarshalJSON: year outside of range [0,9999] ({seconds}s)"
        ))
    };
    let secs = i64::try_from(secs).map_err(|_| out_of_range())?;
    let t = chrono::DateTime::from_timestamp(secs, frac).ok_or_else(out_of_range)?;
    use chrono::Datelike as _;
    if !(0..=9999).contains(&t.year()) {
        return Err(out_of_range());
    }
    let format = if micro {
        "%Y-%m-%dT%H:%M:%S%.6fZ"
    } else {
        "%Y-%m-%dT%H:%M:%SZ"
    };
    Ok(Value::String(t.format(format).to_string()))
}

/// Go's `time.Duration.String`: `1h2m3.5s`, `150ms`, `0s`.
pub fn go_duration(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".to_string();
    }
    let neg = nanos < 0;
    let mut u = nanos.unsigned_abs();
    let mut out = String::new();
    if u < 1_000_000_000 {
        let (prec, unit) = if u < 1_000 {
            (0, "ns")
        } else if u < 1_000_000 {
            (3, "µs")
        } else {
            (6, "ms")
        };
        let (frac, int) = fraction(u, prec);
        out.push_str(&int.to_string());
        out.push_str(&frac);
        out.push_str(unit);
    } else {
        let (frac, secs) = fraction(u, 9);
        u = secs;
        let seconds = format!("{}{frac}s", u % 60);
        u /= 60;
        if u > 0 {
            let minutes = u % 60;
            u /= 60;
            if u > 0 {
                out.push_str(&format!("{u}h"));
            }
            out.push_str(&format!("{minutes}m"));
        }
        out.push_str(&seconds);
    }
    if neg {
        out.insert(0, '-');
    }
    out
}

/// `v / 10^prec` split into the fraction (".5", or "" when it is zero, trailing zeros
/// dropped) and the integer part.
fn fraction(mut v: u64, prec: u32) -> (String, u64) {
    let mut digits = Vec::new();
    let mut print = false;
    for _ in 0..prec {
        let digit = (v % 10) as u8;
        print = print || digit != 0;
        if print {
            digits.push(b'0' + digit);
        }
        v /= 10;
    }
    if !print {
        return (String::new(), v);
    }
    digits.reverse();
    (format!(".{}", String::from_utf8_lossy(&digits)), v)
}

/// A quantity's text as `resource.ParseQuantity` judges it, in its words: the same check
/// as JSON bodies get.
fn check_quantity(s: &str) -> Result<(), DecodeError> {
    crate::schema::decode::parse_quantity(s).map_err(|e| DecodeError::Value(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_go_writes_them() {
        let cases = [
            (0, "0s"),
            (1, "1ns"),
            (1_500, "1.5µs"),
            (150_000_000, "150ms"),
            (1_000_000_000, "1s"),
            (1_500_000_000, "1.5s"),
            (90_000_000_000, "1m30s"),
            (3_600_000_000_000, "1h0m0s"),
            (3_723_500_000_000, "1h2m3.5s"),
            (-2_000_000, "-2ms"),
            (i64::MIN, "-2562047h47m16.854775808s"),
        ];
        for (nanos, want) in cases {
            assert_eq!(go_duration(nanos), want, "{nanos}");
        }
    }

    #[test]
    fn times_are_rfc3339_and_go_zero_is_null() {
        assert_eq!(time(0, 0, false).unwrap(), "1970-01-01T00:00:00Z");
        assert_eq!(
            time(1_700_000_000, 5, false).unwrap(),
            "2023-11-14T22:13:20Z"
        );
        assert_eq!(
            time(1_700_000_000, 123_456_789, true).unwrap(),
            "2023-11-14T22:13:20.123456Z"
        );
        assert_eq!(time(GO_ZERO_SECONDS, 0, false).unwrap(), Value::Null);
        assert!(time(i64::MAX, 0, false).is_err());
        assert!(time(i64::MIN, -1, true).is_err());
    }

    #[test]
    fn quantities_are_checked_for_their_shape() {
        for ok in [
            "0",
            "1",
            "100m",
            "1.5Gi",
            "-2",
            "1e3",
            "5E-2",
            "128974848",
            ".5",
            // ParseQuantity reads a missing number as 0.
            "Gi",
        ] {
            assert!(check_quantity(ok).is_ok(), "{ok}");
        }
        for bad in ["", "1.2.3", "1Qi", "abc", "1e"] {
            assert!(check_quantity(bad).is_err(), "{bad}");
        }
    }
}
