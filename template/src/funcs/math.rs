//! Sprig's integer and float arithmetic. Operands convert with `spf13/cast` rules
//! (strings parse, bools are 0 or 1, nil is 0); float operations go through exact
//! decimals as Sprig's `shopspring/decimal` does, so `addf 0.1 0.2` is `0.3`.

use super::Registry;
use super::arg::int;
use super::convert::{to_float64, to_int64};
use crate::budget;
use crate::value::{List, ListKind, Ty, Value};

const A: Ty = Ty::Any;
const I: Ty = Ty::Int;

pub(crate) fn register(r: &mut Registry<'_>) {
    r.pure("add1", &[A], |a| {
        Ok(Value::Int64(to_int64(&a[0]).wrapping_add(1)))
    });
    r.variadic("add", &[], A, |a| {
        Ok(Value::Int64(
            a.iter().fold(0i64, |acc, v| acc.wrapping_add(to_int64(v))),
        ))
    });
    r.pure("sub", &[A, A], |a| {
        Ok(Value::Int64(to_int64(&a[0]).wrapping_sub(to_int64(&a[1]))))
    });
    r.pure("div", &[A, A], |a| {
        let d = to_int64(&a[1]);
        if d == 0 {
            return Err("runtime error: integer divide by zero".into());
        }
        Ok(Value::Int64(to_int64(&a[0]).wrapping_div(d)))
    });
    r.pure("mod", &[A, A], |a| {
        let d = to_int64(&a[1]);
        if d == 0 {
            return Err("runtime error: integer divide by zero".into());
        }
        Ok(Value::Int64(to_int64(&a[0]).wrapping_rem(d)))
    });
    r.variadic("mul", &[A], A, |a| {
        Ok(Value::Int64(
            a[1..]
                .iter()
                .fold(to_int64(&a[0]), |acc, v| acc.wrapping_mul(to_int64(v))),
        ))
    });
    r.pure("randInt", &[I, I], |a| {
        let (lo, hi) = (int(&a[0]), int(&a[1]));
        if hi - lo <= 0 {
            return Err("invalid argument to Intn".into());
        }
        use rand::Rng;
        Ok(Value::Int(rand::thread_rng().gen_range(lo..hi)))
    });
    r.pure("add1f", &[A], |a| {
        Ok(decimal_op(&a[0], &[Value::Int(1)], Op::Add))
    });
    r.variadic("addf", &[], A, |a| {
        Ok(decimal_op(&Value::Float(0.0), a, Op::Add))
    });
    r.variadic("subf", &[A], A, |a| Ok(decimal_op(&a[0], &a[1..], Op::Sub)));
    r.variadic("mulf", &[A], A, |a| Ok(decimal_op(&a[0], &a[1..], Op::Mul)));
    r.variadic("divf", &[A], A, |a| {
        if a[1..].iter().any(|v| to_float64(v) == 0.0) {
            return Err("decimal division by 0".into());
        }
        Ok(decimal_op(&a[0], &a[1..], Op::Div))
    });
    let max = |a: &[Value]| {
        Ok(Value::Int64(
            a[1..].iter().map(to_int64).fold(to_int64(&a[0]), i64::max),
        ))
    };
    r.variadic("max", &[A], A, max);
    r.variadic("biggest", &[A], A, max);
    r.variadic("min", &[A], A, |a| {
        Ok(Value::Int64(
            a[1..].iter().map(to_int64).fold(to_int64(&a[0]), i64::min),
        ))
    });
    r.variadic("maxf", &[A], A, |a| {
        Ok(Value::Float(
            a[1..]
                .iter()
                .map(to_float64)
                .fold(to_float64(&a[0]), go_max),
        ))
    });
    r.variadic("minf", &[A], A, |a| {
        Ok(Value::Float(
            a[1..]
                .iter()
                .map(to_float64)
                .fold(to_float64(&a[0]), go_min),
        ))
    });
    r.pure("ceil", &[A], |a| Ok(Value::Float(to_float64(&a[0]).ceil())));
    r.pure("floor", &[A], |a| {
        Ok(Value::Float(to_float64(&a[0]).floor()))
    });
    r.variadic("round", &[A, I], Ty::Float64, |a| {
        let round_on = match a.get(2) {
            Some(Value::Float(f)) => *f,
            _ => 0.5,
        };
        let val = to_float64(&a[0]);
        let pow = 10f64.powf(int(&a[1]) as f64);
        let digit = pow * val;
        let frac = digit.fract();
        let rounded = if frac >= round_on {
            digit.ceil()
        } else {
            digit.floor()
        };
        Ok(Value::Float(rounded / pow))
    });
    r.pure("until", &[I], |a| {
        let n = int(&a[0]);
        int_list(0, n, if n < 0 { -1 } else { 1 })
    });
    r.pure("untilStep", &[I, I, I], |a| {
        int_list(int(&a[0]), int(&a[1]), int(&a[2]))
    });
    r.variadic("seq", &[], I, |a| {
        seq(&a.iter().map(int).collect::<Vec<_>>()).map(Value::string)
    });
}

fn go_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a > b || (a == b && b.is_sign_negative()) {
        a
    } else {
        b
    }
}

fn go_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a < b || (a == b && a.is_sign_negative()) {
        a
    } else {
        b
    }
}

/// `untilStep` as a Go `[]int`, its length checked against the memory budget before
/// anything is allocated (Sprig appends one element at a time, so in Helm a long range
/// grows until the machine runs out of memory).
fn int_list(start: i64, stop: i64, step: i64) -> Result<Value, String> {
    let count = until_step_len(start, stop, step);
    budget::reserve(budget::list_bytes(ListKind::Int, count))?;
    Ok(Value::List(std::rc::Rc::new(List::ints(
        until_step(start, stop, step).collect(),
    ))))
}

/// How many numbers Sprig's `untilStep(start, stop, step)` gives.
pub(crate) fn until_step_len(start: i64, stop: i64, step: i64) -> u64 {
    let (span, step) = if stop < start {
        if step >= 0 {
            return 0;
        }
        (start.abs_diff(stop), step.unsigned_abs())
    } else {
        if step <= 0 {
            return 0;
        }
        (stop.abs_diff(start), step.unsigned_abs())
    };
    span.div_ceil(step)
}

/// Sprig's `untilStep`: from `start` towards `stop` (excluded) by `step`; nothing when
/// `step` goes the other way.
pub(crate) fn until_step(start: i64, stop: i64, step: i64) -> impl Iterator<Item = i64> {
    let count = until_step_len(start, stop, step);
    (0..count).map(move |i| start.wrapping_add((i as i64).wrapping_mul(step)))
}

/// Sprig's `seq`, like the Unix command: numbers from 1 or `start` to `end` inclusive,
/// joined by spaces. The text is at most 21 bytes a number (a sign, 19 digits and a
/// space), which is checked against the budget first.
fn seq(params: &[i64]) -> Result<String, String> {
    let (start, stop, step) = match *params {
        [end] => {
            let inc = if end < 1 { -1 } else { 1 };
            (1, end.wrapping_add(inc), inc)
        }
        [start, end] => {
            let step = if end < start { -1 } else { 1 };
            (start, end.wrapping_add(step), step)
        }
        // Sprig reads three numbers as first, increment, last, like the Unix command.
        [start, step, end] => {
            let mut inc = 1;
            if end < start {
                inc = -1;
                if step > 0 {
                    return Ok(String::new());
                }
            }
            (start, end.wrapping_add(inc), step)
        }
        _ => return Ok(String::new()),
    };
    let widest = start.to_string().len().max(stop.to_string().len()) as u64 + 1;
    budget::reserve(until_step_len(start, stop, step).saturating_mul(widest))?;
    let mut out = String::new();
    for (i, n) in until_step(start, stop, step).enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(itoa::Buffer::new().format(n));
    }
    Ok(out)
}

#[derive(Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

/// A decimal number `mantissa × 10^exp`.
#[derive(Clone, Copy, Debug)]
struct Decimal {
    mantissa: i128,
    exp: i32,
}

impl Decimal {
    /// The shortest decimal that reads back as `f` (`decimal.NewFromFloat`).
    fn from_f64(f: f64) -> Option<Decimal> {
        if !f.is_finite() {
            return None;
        }
        if f == 0.0 {
            return Some(Decimal {
                mantissa: 0,
                exp: 0,
            });
        }
        let s = format!("{f:e}");
        let (m, e) = s.split_once('e')?;
        let e: i32 = e.parse().ok()?;
        let neg = m.starts_with('-');
        let digits: String = m.chars().filter(char::is_ascii_digit).collect();
        let frac_len = m.split_once('.').map_or(0, |(_, fr)| fr.len()) as i32;
        let mut mantissa: i128 = digits.parse().ok()?;
        if neg {
            mantissa = -mantissa;
        }
        Some(Decimal {
            mantissa,
            exp: e - frac_len,
        })
    }

    fn align(a: Decimal, b: Decimal) -> Option<(i128, i128, i32)> {
        let exp = a.exp.min(b.exp);
        let scale = |d: Decimal| -> Option<i128> {
            let shift = (d.exp - exp) as u32;
            10i128.checked_pow(shift)?.checked_mul(d.mantissa)
        };
        Some((scale(a)?, scale(b)?, exp))
    }

    fn apply(self, op: Op, other: Decimal) -> Option<Decimal> {
        match op {
            Op::Add | Op::Sub => {
                let (x, y, exp) = Decimal::align(self, other)?;
                let mantissa = match op {
                    Op::Add => x.checked_add(y)?,
                    _ => x.checked_sub(y)?,
                };
                Some(Decimal { mantissa, exp })
            }
            Op::Mul => Some(Decimal {
                mantissa: self.mantissa.checked_mul(other.mantissa)?,
                exp: self.exp + other.exp,
            }),
            Op::Div => {
                // shopspring/decimal divides to 16 decimal places, rounding half away
                // from zero.
                const PLACES: i32 = 16;
                let shift = self.exp - other.exp + PLACES + 1;
                let (num, den) = if shift >= 0 {
                    (
                        self.mantissa
                            .checked_mul(10i128.checked_pow(shift as u32)?)?,
                        other.mantissa,
                    )
                } else {
                    (
                        self.mantissa,
                        other
                            .mantissa
                            .checked_mul(10i128.checked_pow((-shift) as u32)?)?,
                    )
                };
                let q = num / den;
                let rounded = if q.abs() % 10 >= 5 {
                    q / 10 + q.signum()
                } else {
                    q / 10
                };
                Some(Decimal {
                    mantissa: rounded,
                    exp: -PLACES,
                })
            }
        }
    }

    fn to_f64(self) -> f64 {
        format!("{}e{}", self.mantissa, self.exp)
            .parse()
            .unwrap_or(f64::NAN)
    }
}

fn float_op(a: f64, b: f64, op: Op) -> f64 {
    match op {
        Op::Add => a + b,
        Op::Sub => a - b,
        Op::Mul => a * b,
        Op::Div => a / b,
    }
}

fn decimal_op(first: &Value, rest: &[Value], op: Op) -> Value {
    let mut acc = to_float64(first);
    let mut dec = Decimal::from_f64(acc);
    for v in rest {
        let x = to_float64(v);
        dec = match (dec, Decimal::from_f64(x)) {
            (Some(d), Some(e)) => d.apply(op, e),
            _ => None,
        };
        // Beyond 38 digits fall back to binary floating point.
        acc = match dec {
            Some(d) => d.to_f64(),
            None => float_op(acc, x, op),
        };
        if dec.is_none() {
            dec = Decimal::from_f64(acc);
        }
    }
    Value::Float(dec.map_or(acc, Decimal::to_f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_arithmetic_matches_sprig() {
        let f = |v: Value| match v {
            Value::Float(f) => f,
            _ => f64::NAN,
        };
        assert_eq!(
            f(decimal_op(
                &Value::Float(0.1),
                &[Value::Float(0.2)],
                Op::Add
            )),
            0.3
        );
        assert_eq!(
            f(decimal_op(&Value::Int(10), &[Value::Int(3)], Op::Div)),
            3.3333333333333335
        );
        assert_eq!(
            f(decimal_op(&Value::Float(1.1), &[Value::Int(3)], Op::Mul)),
            3.3
        );
        assert_eq!(
            f(decimal_op(&Value::Int(1), &[Value::Float(0.9)], Op::Sub)),
            0.1
        );
        assert_eq!(
            f(decimal_op(&Value::Int(2), &[Value::Int(3)], Op::Div)),
            0.6666666666666667
        );
    }

    #[test]
    fn sequences() {
        assert_eq!(seq(&[5]).unwrap(), "1 2 3 4 5");
        assert_eq!(seq(&[3, 1]).unwrap(), "3 2 1");
        assert_eq!(seq(&[0, 3, 10]).unwrap(), "0 3 6 9");
        assert_eq!(seq(&[10, -3, 0]).unwrap(), "10 7 4 1");
        assert_eq!(seq(&[0, 10, 3]).unwrap(), "0");
        assert_eq!(seq(&[0]).unwrap(), "1 0");
        assert_eq!(until_step(0, 10, 3).collect::<Vec<_>>(), vec![0, 3, 6, 9]);
    }
}
