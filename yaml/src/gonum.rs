//! Go's float formatting, which Helm output depends on: `%v` and `strconv.FormatFloat(f,
//! 'g', -1, _)` switch to exponent form from 1e+06, while `encoding/json` does so only
//! from 1e+21. Rust's own formatting gives the same shortest digits, so only the layout
//! is done here.

/// The shortest decimal digits that round-trip `value`, and the position of the decimal
/// point relative to them (Go's `decimalSlice`: value = 0.DIGITS × 10^point).
/// Zero has no digits.
fn shortest_digits(value: f64, single_precision: bool) -> (String, i32) {
    let scientific = if single_precision {
        format!("{:e}", (value as f32).abs())
    } else {
        format!("{:e}", value.abs())
    };
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if digits.bytes().all(|d| d == b'0') {
        return (String::new(), 0);
    }
    (digits, exponent + 1)
}

fn special(value: f64) -> Option<&'static str> {
    if value.is_nan() {
        Some("NaN")
    } else if value == f64::INFINITY {
        Some("+Inf")
    } else if value == f64::NEG_INFINITY {
        Some("-Inf")
    } else {
        None
    }
}

fn sign(value: f64) -> &'static str {
    if value.is_sign_negative() { "-" } else { "" }
}

/// `d.ddde±XX` with at least two exponent digits, as Go's `%e` writes it.
fn layout_exponent(out: &mut String, digits: &str, point: i32) {
    let digits = if digits.is_empty() { "0" } else { digits };
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    let exponent = if digits == "0" { 0 } else { point - 1 };
    out.push('e');
    out.push(if exponent < 0 { '-' } else { '+' });
    let magnitude = exponent.unsigned_abs();
    if magnitude < 10 {
        out.push('0');
    }
    out.push_str(&magnitude.to_string());
}

/// Plain decimal layout with exactly the significant digits (`%f` at shortest precision).
fn layout_decimal(out: &mut String, digits: &str, point: i32) {
    if digits.is_empty() {
        out.push('0');
        return;
    }
    let len = digits.len() as i32;
    if point <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-point) as usize));
        out.push_str(digits);
    } else if point >= len {
        out.push_str(digits);
        out.extend(std::iter::repeat_n('0', (point - len) as usize));
    } else {
        out.push_str(&digits[..point as usize]);
        out.push('.');
        out.push_str(&digits[point as usize..]);
    }
}

/// `strconv.FormatFloat(value, 'g', -1, bits)`, which is also what `%v` prints for a
/// float64 (`single_precision` selects bits = 32).
pub fn format_g(value: f64, single_precision: bool) -> String {
    if let Some(text) = special(value) {
        return text.to_owned();
    }
    let (digits, point) = shortest_digits(value, single_precision);
    let mut out = String::from(sign(value));
    let exponent = point - 1;
    if !digits.is_empty() && !(-4..6).contains(&exponent) {
        layout_exponent(&mut out, &digits, point);
    } else {
        layout_decimal(&mut out, &digits, point);
    }
    out
}

/// How Go's `encoding/json` writes a float64. `None` for NaN and infinities, which
/// `encoding/json` refuses ("json: unsupported value").
pub fn format_json(value: f64) -> Option<String> {
    if special(value).is_some() {
        return None;
    }
    let (digits, point) = shortest_digits(value, false);
    let mut out = String::from(sign(value));
    let abs = value.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        layout_exponent(&mut out, &digits, point);
        // encoding/json trims a leading zero from negative exponents: 1e-07 → 1e-7.
        if let Some(pos) = out.find("e-0") {
            out.remove(pos + 2);
        }
    } else {
        layout_decimal(&mut out, &digits, point);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_format_matches_go() {
        let cases = [
            (1000000.0, "1e+06"),
            (100000.0, "100000"),
            (1234567.0, "1.234567e+06"),
            (123456789.5, "1.234567895e+08"),
            (1.5, "1.5"),
            (0.0, "0"),
            (-0.0, "-0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1e21, "1e+21"),
            (1e100, "1e+100"),
            (-2.5, "-2.5"),
            (3.0, "3"),
            (f64::INFINITY, "+Inf"),
            (f64::NAN, "NaN"),
        ];
        for (value, expected) in cases {
            assert_eq!(format_g(value, false), expected, "{value}");
        }
    }

    #[test]
    fn g_format_single_precision_is_what_chart_yaml_strings_get() {
        assert_eq!(format_g(1.10, true), "1.1");
        assert_eq!(format_g(1.23456789, true), "1.2345679");
        assert_eq!(format_g(1000.0, true), "1000");
    }

    #[test]
    fn json_format_matches_go() {
        let cases = [
            (1000000.0, "1000000"),
            (123456789.5, "123456789.5"),
            (1e-7, "1e-7"),
            (1e21, "1e+21"),
            (1.2345678901234567e19, "12345678901234567000"),
            (0.000001, "0.000001"),
            (-0.0, "-0"),
            (0.0, "0"),
            (2.5e-10, "2.5e-10"),
        ];
        for (value, expected) in cases {
            assert_eq!(format_json(value).unwrap(), expected, "{value}");
        }
        assert_eq!(format_json(f64::NAN), None);
    }
}
