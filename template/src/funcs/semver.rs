//! Sprig's `semver` and `semverCompare` over Masterminds/semver v3.4.0, the version
//! Helm 4.1.4 uses. Parsing and range matching come from `chartkit-version`, which
//! implements that library for the whole workspace; this module adds the template side:
//! the `*semver.Version` object with its methods, and Masterminds' error texts.

use std::any::Any;
use std::cmp::Ordering;
use std::rc::Rc;

use super::Registry;
use super::arg::str;
use crate::value::{MethodSig, Object, Ty, Value};

pub(crate) fn register(r: &mut Registry<'_>) {
    r.pure("semver", &[Ty::String], |a| {
        let v = Version::parse(str(&a[0]))?;
        Ok(Value::Object(Rc::new(v)))
    });
    r.pure("semverCompare", &[Ty::String, Ty::String], |a| {
        Ok(Value::Bool(semver_compare(str(&a[0]), str(&a[1]))?))
    });
}

pub(crate) fn semver_compare(constraint: &str, version: &str) -> Result<bool, String> {
    let range = chartkit_version::VersionRange::parse(constraint).map_err(|e| match e {
        chartkit_version::RangeError::Improper { part, .. } => {
            format!("improper constraint: {part}")
        }
        chartkit_version::RangeError::BadVersion { .. } => "constraint parser error".to_owned(),
    })?;
    let v = chartkit_version::Version::parse(version).map_err(version_error)?;
    Ok(range.matches(&v))
}

/// Masterminds' wording for a version it refuses.
fn version_error(e: chartkit_version::VersionError) -> String {
    match e {
        chartkit_version::VersionError::LeadingZero(_) => "version segment starts with 0".into(),
        _ => INVALID.into(),
    }
}

/// A parsed semantic version; in templates it is Masterminds' `*semver.Version`.
#[derive(Debug, Clone)]
pub(crate) struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: String,
    metadata: String,
    original: String,
    /// A `semver.Version` rather than a `*semver.Version`: what `IncMinor` and
    /// `SetPrerelease` return. Not addressable, so methods with pointer receivers
    /// (`Original`, the comparisons) cannot be called on it, as in Go.
    by_value: bool,
}

const INVALID: &str = "invalid semantic version";

fn parse_segment(s: &str) -> Result<u64, String> {
    s.parse::<u64>().map_err(|_| {
        format!(
            "error parsing version segment: strconv.ParseUint: parsing {}: value out of range",
            crate::print::quote(s)
        )
    })
}

impl Version {
    pub(crate) fn parse(s: &str) -> Result<Version, String> {
        match chartkit_version::Version::parse(s) {
            Ok(v) => Ok(Version {
                major: v.major,
                minor: v.minor,
                patch: v.patch,
                pre: v.pre,
                metadata: v.metadata,
                original: s.to_owned(),
                by_value: false,
            }),
            // Masterminds reads the numbers before it checks the pre-release, so a number
            // too large for 64 bits is reported first, with the segment that overflowed.
            Err(
                e @ (chartkit_version::VersionError::Overflow(_)
                | chartkit_version::VersionError::LeadingZero(_)),
            ) => {
                let core = s.strip_prefix('v').unwrap_or(s);
                let core = core.split(['+', '-']).next().unwrap_or(core);
                for segment in core.split('.') {
                    parse_segment(segment)?;
                }
                Err(version_error(e))
            }
            Err(e) => Err(version_error(e)),
        }
    }

    fn compare(&self, o: &Version) -> Ordering {
        self.major
            .cmp(&o.major)
            .then(self.minor.cmp(&o.minor))
            .then(self.patch.cmp(&o.patch))
            .then_with(|| match (self.pre.is_empty(), o.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => compare_prerelease(&self.pre, &o.pre),
            })
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        if !self.metadata.is_empty() {
            write!(f, "+{}", self.metadata)?;
        }
        Ok(())
    }
}

fn compare_prerelease(a: &str, b: &str) -> Ordering {
    let ap: Vec<&str> = a.split('.').collect();
    let bp: Vec<&str> = b.split('.').collect();
    for i in 0..ap.len().max(bp.len()) {
        let d = compare_pre_part(
            ap.get(i).copied().unwrap_or(""),
            bp.get(i).copied().unwrap_or(""),
        );
        if d != Ordering::Equal {
            return d;
        }
    }
    Ordering::Equal
}

fn compare_pre_part(s: &str, o: &str) -> Ordering {
    if s == o {
        return Ordering::Equal;
    }
    let numeric = |x: &str| x.parse::<u64>().ok();
    if o.is_empty() {
        return if numeric(s).is_some() {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    if s.is_empty() {
        return if numeric(o).is_some() {
            Ordering::Greater
        } else {
            Ordering::Less
        };
    }
    match (numeric(s), numeric(o)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => s.cmp(o),
    }
}

const METHODS0: MethodSig = MethodSig {
    params: &[],
    variadic: None,
};
const METHOD_VERSION: MethodSig = MethodSig {
    params: &[Ty::Object("*semver.Version")],
    variadic: None,
};
const METHOD_STRING: MethodSig = MethodSig {
    params: &[Ty::String],
    variadic: None,
};

/// Masterminds/semver's check of a prerelease (`metadata` false) or build metadata:
/// dot-separated parts of ASCII letters, digits and `-`, none empty; a numeric
/// prerelease part has no leading zero.
fn check_suffix(text: &str, metadata: bool) -> Result<(), &'static str> {
    let invalid = if metadata {
        "invalid metadata string"
    } else {
        "invalid prerelease string"
    };
    if text.is_empty() {
        return Ok(());
    }
    for part in text.split('.') {
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return Err(invalid);
        }
        let numeric = part.bytes().all(|b| b.is_ascii_digit());
        if !metadata && numeric && part.len() > 1 && part.starts_with('0') {
            return Err("version segment starts with 0");
        }
    }
    Ok(())
}

impl Object for Version {
    fn type_name(&self) -> String {
        if self.by_value {
            "semver.Version".into()
        } else {
            "*semver.Version".into()
        }
    }

    fn kind(&self) -> &'static str {
        if self.by_value { "struct" } else { "ptr" }
    }

    fn method(&self, name: &str) -> Option<MethodSig> {
        match name {
            "Major" | "Minor" | "Patch" | "Prerelease" | "Metadata" | "String" | "IncMajor"
            | "IncMinor" | "IncPatch" | "MarshalJSON" | "MarshalText" | "Value" => Some(METHODS0),
            "SetPrerelease" | "SetMetadata" => Some(METHOD_STRING),
            "Original" if !self.by_value => Some(METHODS0),
            "LessThan" | "GreaterThan" | "Equal" | "Compare" | "LessThanEqual"
            | "GreaterThanEqual"
                if !self.by_value =>
            {
                Some(METHOD_VERSION)
            }
            _ => None,
        }
    }

    fn call(&self, name: &str, args: &[Value]) -> Result<Value, String> {
        let other = || -> Result<Version, String> {
            match args.first() {
                Some(Value::Object(o)) => o
                    .as_any()
                    .downcast_ref::<Version>()
                    .cloned()
                    .ok_or_else(|| "not a version".to_owned()),
                _ => Err("runtime error: invalid memory address or nil pointer dereference".into()),
            }
        };
        let bump = |major: u64, minor: u64, patch: u64| {
            let mut v = Version {
                major,
                minor,
                patch,
                pre: String::new(),
                metadata: String::new(),
                original: String::new(),
                by_value: true,
            };
            v.original = v.to_string();
            Value::Object(Rc::new(v))
        };
        let with_suffix = |text: &str, metadata: bool| -> Result<Value, String> {
            check_suffix(text, metadata)?;
            let mut v = self.clone();
            if metadata {
                v.metadata = text.to_owned();
            } else {
                v.pre = text.to_owned();
            }
            v.by_value = true;
            // Go keeps a `v` the original had.
            let prefix = if self.original.starts_with('v') {
                "v"
            } else {
                ""
            };
            v.original = format!("{prefix}{v}");
            Ok(Value::Object(Rc::new(v)))
        };
        let text_arg = || {
            args.first()
                .map(super::arg::str)
                .unwrap_or_default()
                .to_owned()
        };
        Ok(match name {
            "Major" => Value::Int64(self.major as i64),
            "Minor" => Value::Int64(self.minor as i64),
            "Patch" => Value::Int64(self.patch as i64),
            "Prerelease" => Value::str(&self.pre),
            "Metadata" => Value::str(&self.metadata),
            "Original" => Value::str(&self.original),
            "String" | "Value" => Value::string(self.to_string()),
            "MarshalText" => Value::Bytes(Rc::from(self.to_string().as_bytes())),
            "MarshalJSON" => Value::Bytes(Rc::from(format!("\"{self}\"").as_bytes())),
            "SetPrerelease" => with_suffix(&text_arg(), false)?,
            "SetMetadata" => with_suffix(&text_arg(), true)?,
            "IncMajor" => bump(self.major + 1, 0, 0),
            "IncMinor" => bump(self.major, self.minor + 1, 0),
            "IncPatch" => {
                if self.pre.is_empty() {
                    bump(self.major, self.minor, self.patch + 1)
                } else {
                    bump(self.major, self.minor, self.patch)
                }
            }
            "LessThan" => Value::Bool(self.compare(&other()?) == Ordering::Less),
            "GreaterThan" => Value::Bool(self.compare(&other()?) == Ordering::Greater),
            "Equal" => Value::Bool(self.compare(&other()?) == Ordering::Equal),
            "LessThanEqual" => Value::Bool(self.compare(&other()?) != Ordering::Greater),
            "GreaterThanEqual" => Value::Bool(self.compare(&other()?) != Ordering::Less),
            "Compare" => Value::Int(match self.compare(&other()?) {
                Ordering::Less => -1,
                Ordering::Equal => 0,
                Ordering::Greater => 1,
            }),
            other => return Err(format!("no method {other}")),
        })
    }

    fn format(&self) -> String {
        self.to_string()
    }

    fn to_data(&self) -> Value {
        Value::string(self.to_string())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constraints_like_masterminds() {
        let cases = [
            (">=1.19-0", "v1.35.0", true),
            ("<1.25.0-0", "v1.35.0", false),
            (">=1.16.0-0", "1.29.0", true),
            ("^1.2.3", "1.9.0", true),
            ("^1.2.3", "2.0.0", false),
            ("~1.2.3", "1.2.9", true),
            ("~1.2.3", "1.3.0", false),
            (">= 1.2, < 3.0.0 || >= 4.2.3", "4.5.0", true),
            ("1.2 - 1.4.5", "1.4.5", true),
            ("1.2.x", "1.2.99", true),
            ("!=4.1", "4.1.5", false),
            (">=1.2.0", "1.3.0-beta", false),
            (">=1.2.0-0", "1.3.0-beta", true),
            (">=1.0.0-0, <2.0.0", "1.5.0-beta", true),
            ("<2.0.0", "1.5.0-beta", false),
            ("*", "0.0.1", true),
        ];
        for (c, v, want) in cases {
            assert_eq!(semver_compare(c, v).unwrap(), want, "{c} {v}");
        }
        assert_eq!(
            semver_compare("foo", "1.0.0").unwrap_err(),
            "improper constraint: foo"
        );
        assert_eq!(
            semver_compare(">1", "x").unwrap_err(),
            "invalid semantic version"
        );
        assert_eq!(
            semver_compare(">=1.0.0-01", "1.2.3").unwrap_err(),
            "constraint parser error"
        );
        assert_eq!(
            Version::parse("1.2.3-01").unwrap_err(),
            "version segment starts with 0"
        );
        // helm 4.1.4 reports the overflow even when the pre-release is also bad.
        assert_eq!(
            Version::parse("99999999999999999999.1.0-01").unwrap_err(),
            "error parsing version segment: strconv.ParseUint: parsing \"99999999999999999999\": value out of range"
        );
    }
}
