//! The `format`s a custom resource's schema may name and the API server checks: the
//! formats apiextensions-apiserver keeps from kube-openapi's strfmt registry, with the
//! registry's rules (Go's `net`, `net/mail`, `time` and govalidator's). A format outside
//! that list is ignored, as the API server strips it from the schema it validates with.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

use chartkit_regexp::Regexp;

/// Whether `s` is a valid value of `format`; `None` when the API server does not check
/// the format.
pub fn string_matches(format: &str, s: &str) -> Option<bool> {
    // strfmt looks formats up with dashes and underscores removed (`date-time`).
    let name: String = format
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .collect::<String>()
        .to_ascii_lowercase();
    let ok = match name.as_str() {
        "bsonobjectid" => s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()),
        "uri" => is_request_uri(s),
        "email" => is_email(s),
        "hostname" => is_hostname(s),
        "ipv4" => parse_go_ip(s).is_some() && s.contains('.'),
        "ipv6" => parse_go_ip(s).is_some() && s.contains(':'),
        "cidr" => is_cidr(s),
        "mac" => is_mac(s),
        "uuid" => re(&UUID, r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
            .is_match(s),
        "uuid3" => re(&UUID3, r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
            .is_match(s),
        "uuid4" => re(&UUID4, r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
            .is_match(s),
        "uuid5" => re(&UUID5, r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
            .is_match(s),
        "isbn" => is_isbn10(s) || is_isbn13(s),
        "isbn10" => is_isbn10(s),
        "isbn13" => is_isbn13(s),
        "creditcard" => is_credit_card(s),
        "ssn" => re(&SSN, r"^\d{3}[- ]?\d{2}[- ]?\d{4}$").is_match(s),
        "hexcolor" => re(&HEXCOLOR, r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$").is_match(s),
        "rgbcolor" => re(
            &RGBCOLOR,
            r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$",
        )
        .is_match(s),
        "byte" => re(
            &BASE64,
            r"^(?:[A-Za-z0-9+\/]{4})*(?:[A-Za-z0-9+\/]{2}==|[A-Za-z0-9+\/]{3}=|[A-Za-z0-9+\/]{4})$",
        )
        .is_match(s),
        "password" => true,
        "date" => is_date(s),
        "datetime" => is_date_time(s),
        "duration" => is_duration(s),
        // Kubernetes 1.34's own: a DNS label and a DNS subdomain.
        "k8sshortname" => crate::meta::check_name(s, crate::meta::NameRule::Label).is_empty(),
        "k8slongname" => crate::meta::check_name(s, crate::meta::NameRule::Subdomain).is_empty(),
        _ => return None,
    };
    Some(ok)
}

/// The API server's complaint when an integer or number does not fit its `format`
/// (kube-openapi's range check), or `None` when it fits.
pub fn number_out_of_range(
    ty: &str,
    format: &str,
    n: &serde_json::Number,
    path: &str,
) -> Option<String> {
    let fits = match (ty, format) {
        ("integer", "int32") => n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()),
        ("integer", "uint32") => n.as_u64().is_some_and(|i| u32::try_from(i).is_ok()),
        ("integer", "uint64") => n.as_u64().is_some(),
        ("integer", _) => n.as_i64().is_some() || n.as_f64().is_some_and(|f| f.abs() < 9.2e18),
        ("number", "float" | "float32") => n.as_f64().is_some_and(|f| f.abs() <= f32::MAX as f64),
        _ => true,
    };
    if fits {
        return None;
    }
    Some(
        if format.is_empty()
            || (ty == "integer" && !matches!(format, "int32" | "uint32" | "uint64" | "int64"))
        {
            format!("Checked value must be of type {ty} (default format) in {path}")
        } else {
            format!("Checked value must be of type {ty} with format {format} in {path}")
        },
    )
}

static UUID: OnceLock<Regexp> = OnceLock::new();
static UUID3: OnceLock<Regexp> = OnceLock::new();
static UUID4: OnceLock<Regexp> = OnceLock::new();
static UUID5: OnceLock<Regexp> = OnceLock::new();
static SSN: OnceLock<Regexp> = OnceLock::new();
static HEXCOLOR: OnceLock<Regexp> = OnceLock::new();
static RGBCOLOR: OnceLock<Regexp> = OnceLock::new();
static BASE64: OnceLock<Regexp> = OnceLock::new();
static HOSTNAME: OnceLock<Regexp> = OnceLock::new();

fn re(cell: &'static OnceLock<Regexp>, pattern: &str) -> &'static Regexp {
    cell.get_or_init(|| Regexp::new(pattern).expect("a valid format pattern"))
}

/// Go's `net.ParseIP`: dotted IPv4 without leading zeros, or IPv6 (possibly ending in
/// dotted IPv4), with no zone.
fn parse_go_ip(s: &str) -> Option<IpAddr> {
    if let Ok(v4) = s.parse::<Ipv4Addr>() {
        return Some(IpAddr::V4(v4));
    }
    s.parse::<Ipv6Addr>().ok().map(IpAddr::V6)
}

fn is_cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Some(ip) = parse_go_ip(ip) else {
        return false;
    };
    if bits.is_empty()
        || !bits.bytes().all(|b| b.is_ascii_digit())
        || (bits.len() > 1 && bits.starts_with('0'))
    {
        return false;
    }
    let max = if ip.is_ipv4() { 32 } else { 128 };
    bits.parse::<u32>().is_ok_and(|b| b <= max)
}

/// Go's `net.ParseMAC`: 6, 8 or 20 octets as `xx:xx:..`, `xx-xx-..` or `xxxx.xxxx...`.
fn is_mac(s: &str) -> bool {
    let groups_ok = |sep: char, width: usize| {
        let parts: Vec<&str> = s.split(sep).collect();
        let octets = parts.len() * width / 2;
        matches!(octets, 6 | 8 | 20)
            && parts
                .iter()
                .all(|p| p.len() == width && p.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    if s.len() < 14 {
        return false;
    }
    match s.as_bytes()[2] {
        b':' => groups_ok(':', 2),
        b'-' => groups_ok('-', 2),
        _ if s.as_bytes()[4] == b'.' => groups_ok('.', 4),
        _ => false,
    }
}

fn is_hostname(s: &str) -> bool {
    let pattern = r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z0-9\p{S}\p{L}])(-?[a-zA-Z0-9\p{S}\p{L}]){1,62})$";
    re(&HOSTNAME, pattern).is_match(s) && s.len() <= 255 && s.split('.').all(|p| p.len() <= 63)
}

/// Go's `url.ParseRequestURI`: an absolute URI or an absolute path, no control
/// characters, no spaces in the authority.
fn is_request_uri(s: &str) -> bool {
    if s.is_empty() || s.chars().any(|c| c.is_control()) {
        return false;
    }
    if s.starts_with('/') {
        return true;
    }
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    if !chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return false;
    }
    if let Some(after) = rest.strip_prefix("//") {
        let authority = after.split(['/', '?', '#']).next().unwrap_or("");
        let host = authority.rsplit('@').next().unwrap_or("");
        return !host.contains(' ') && !host.contains('%') || host.starts_with('[');
    }
    // "scheme:opaque" must not be followed by nothing but a path that is relative
    // without a scheme: `mailto:x` is fine, `x:` alone is too.
    true
}

/// `net/mail.ParseAddress` for the common shapes: `local@domain` or
/// `Name <local@domain>`.
fn is_email(s: &str) -> bool {
    let s = s.trim();
    let addr = match (s.rfind('<'), s.ends_with('>')) {
        (Some(i), true) => &s[i + 1..s.len() - 1],
        (None, false) => s,
        _ => return false,
    };
    let Some((local, domain)) = addr.rsplit_once('@') else {
        return false;
    };
    let atext = |c: char| c.is_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c);
    let dot_atom =
        |t: &str| !t.is_empty() && t.split('.').all(|p| !p.is_empty() && p.chars().all(atext));
    let quoted_local = local.len() >= 2 && local.starts_with('"') && local.ends_with('"');
    (dot_atom(local) || quoted_local)
        && (dot_atom(domain) || (domain.starts_with('[') && domain.ends_with(']')))
}

fn digits_only(s: &str) -> String {
    s.chars().filter(|c| *c != ' ' && *c != '-').collect()
}

fn is_isbn10(s: &str) -> bool {
    let d = digits_only(s);
    let b = d.as_bytes();
    if b.len() != 10 || !b[..9].iter().all(u8::is_ascii_digit) {
        return false;
    }
    let last = match b[9] {
        b'X' => 10,
        c if c.is_ascii_digit() => u32::from(c - b'0'),
        _ => return false,
    };
    let sum: u32 = b[..9]
        .iter()
        .enumerate()
        .map(|(i, c)| (i as u32 + 1) * u32::from(c - b'0'))
        .sum::<u32>()
        + 10 * last;
    sum.is_multiple_of(11)
}

fn is_isbn13(s: &str) -> bool {
    let d = digits_only(s);
    let b = d.as_bytes();
    if b.len() != 13 || !b.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let sum: u32 = b[..12]
        .iter()
        .enumerate()
        .map(|(i, c)| u32::from(c - b'0') * if i % 2 == 0 { 1 } else { 3 })
        .sum();
    (10 - sum % 10) % 10 == u32::from(b[12] - b'0')
}

/// govalidator's `IsCreditCard`: a known issuer's number shape and the Luhn checksum.
fn is_credit_card(s: &str) -> bool {
    let d: String = s.chars().filter(char::is_ascii_digit).collect();
    if s.chars()
        .any(|c| !c.is_ascii_digit() && c != ' ' && c != '-')
        || d.len() < 12
        || d.len() > 19
    {
        return false;
    }
    let mut sum = 0;
    for (i, c) in d.bytes().rev().enumerate() {
        let mut x = u32::from(c - b'0');
        if i % 2 == 1 {
            x *= 2;
            if x > 9 {
                x -= 9;
            }
        }
        sum += x;
    }
    sum.is_multiple_of(10)
}

/// `time.Parse("2006-01-02", s)`: a real calendar day.
fn is_date(s: &str) -> bool {
    s.len() == 10 && chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok()
}

/// strfmt's date-time layouts: RFC 3339 with any fraction, with or without an offset
/// (and its colon), or to the minute.
fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let normal = s.replacen(['t', ' '], "T", 1);
    if chrono::DateTime::parse_from_rfc3339(&normal).is_ok() {
        return true;
    }
    for layout in [
        "%Y-%m-%dT%H:%M:%S%.f%z",
        "%Y-%m-%dT%H:%M%:z",
        "%Y-%m-%dT%H:%M%z",
    ] {
        if chrono::DateTime::parse_from_str(&normal, layout).is_ok() {
            return true;
        }
    }
    for layout in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
        if chrono::NaiveDateTime::parse_from_str(&normal, layout).is_ok() {
            return true;
        }
    }
    false
}

/// strfmt's `ParseDuration`: Go's `time.ParseDuration`, or any `<digits> <unit>` where
/// the unit is one strfmt knows (`3 days`, `1 week`).
fn is_duration(s: &str) -> bool {
    if is_go_duration(s) {
        return true;
    }
    const UNITS: &[&str] = &[
        "ns", "nano", "us", "µs", "micro", "ms", "milli", "s", "sec", "m", "min", "h", "hr",
        "hour", "d", "day", "w", "wk", "week",
    ];
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        let start = i;
        while i < chars.len() && (chars[i].is_ascii_alphabetic() || chars[i] == 'µ') {
            i += 1;
        }
        let unit: String = chars[start..i].iter().collect::<String>().to_lowercase();
        let singular = unit.strip_suffix('s').unwrap_or(&unit);
        if UNITS.contains(&unit.as_str()) || (unit.len() > 2 && UNITS.contains(&singular)) {
            return true;
        }
    }
    false
}

/// Go's `time.ParseDuration` grammar: `[-+]` then one or more `<decimal><unit>`, or `0`.
fn is_go_duration(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    if s == "0" {
        return true;
    }
    if s.is_empty() {
        return false;
    }
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let number = &rest[..digits];
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return false;
        }
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        if !matches!(
            &rest[..unit_len],
            "ns" | "us" | "µs" | "μs" | "ms" | "s" | "m" | "h"
        ) {
            return false;
        }
        rest = &rest[unit_len..];
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_judged_as_strfmt_judges_them() {
        let good = [
            ("uuid", "123e4567-e89b-12d3-a456-426614174000"),
            ("date", "2024-02-29"),
            ("date-time", "2024-02-29T10:00:00Z"),
            ("datetime", "2024-02-29T10:00:00.123+02:00"),
            ("byte", "aGVsbG8="),
            ("hostname", "example.com"),
            ("ipv4", "10.0.0.1"),
            ("ipv6", "fe80::1"),
            ("cidr", "10.0.0.0/8"),
            ("email", "a@example.com"),
            ("email", "Someone <a@example.com>"),
            ("uri", "https://example.com/x?y#z"),
            ("duration", "1h30m"),
            ("duration", "3 days"),
            ("mac", "00:1a:2b:3c:4d:5e"),
            ("isbn10", "0321751043"),
            ("isbn13", "978-0321751041"),
            ("hexcolor", "#fff"),
            ("password", "anything"),
        ];
        for (f, s) in good {
            assert_eq!(string_matches(f, s), Some(true), "{f} {s}");
        }
        let bad = [
            ("uuid", "abc"),
            ("date", "2023-02-29"),
            ("date-time", "yesterday"),
            ("byte", "not base64!"),
            ("hostname", "-bad-.com"),
            ("ipv4", "300.1.1.1"),
            ("ipv4", "fe80::1"),
            ("ipv6", "10.0.0.1"),
            ("cidr", "10.0.0.0/33"),
            ("email", "nobody"),
            ("uri", "relative/path"),
            ("duration", "soon"),
            ("mac", "00:1a:2b"),
            ("isbn10", "0321751044"),
            ("hexcolor", "#ffff"),
        ];
        for (f, s) in bad {
            assert_eq!(string_matches(f, s), Some(false), "{f} {s}");
        }
        assert_eq!(string_matches("my-own-format", "x"), None);
    }

    #[test]
    fn integers_must_fit_their_format() {
        let big = serde_json::Number::from(3_000_000_000_i64);
        assert_eq!(
            number_out_of_range("integer", "int32", &big, "spec.n").as_deref(),
            Some("Checked value must be of type integer with format int32 in spec.n")
        );
        assert_eq!(
            number_out_of_range("integer", "int64", &big, "spec.n"),
            None
        );
    }
}
