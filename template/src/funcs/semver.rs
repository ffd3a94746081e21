//! Sprig's `semver` and `semverCompare`, following Masterminds/semver v3: versions
//! may have a `v` prefix and omit minor and patch; constraints support `=`, `!=`,
//! `>`, `<`, `>=`, `<=`, `~`, `^`, wildcards, hyphen ranges, `,`/space (and) and `||`
//! (or), and a prerelease version only satisfies a constraint that names a prerelease.

use std::any::Any;
use std::cmp::Ordering;
use std::rc::Rc;
use std::sync::OnceLock;

use regex::Regex;

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
    let c = Constraints::parse(constraint)?;
    let v = Version::parse(version)?;
    Ok(c.check(&v))
}

const VERSION_PATTERN: &str = r"v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?";
const CONSTRAINT_VERSION: &str = r"v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?";
const OPS: &str = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^";

struct Patterns {
    version: Regex,
    constraint: Regex,
    range: Regex,
    find: Regex,
    valid: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        let compile = |p: String| Regex::new(&p).unwrap_or_else(|e| panic!("semver pattern: {e}"));
        Patterns {
            version: compile(format!("^{VERSION_PATTERN}$")),
            constraint: compile(format!(r"^\s*({OPS})\s*({CONSTRAINT_VERSION})\s*$")),
            range: compile(format!(
                r"\s*({CONSTRAINT_VERSION})\s+-\s+({CONSTRAINT_VERSION})\s*"
            )),
            find: compile(format!(r"({OPS})\s*({CONSTRAINT_VERSION})")),
            valid: compile(format!(
                r"^(\s*({OPS})\s*({CONSTRAINT_VERSION})\s*)((?:\s+|,\s*)({OPS})\s*({CONSTRAINT_VERSION})\s*)*$"
            )),
        }
    })
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
}

const INVALID: &str = "Invalid Semantic Version";

fn parse_segment(s: &str) -> Result<u64, String> {
    s.parse::<u64>().map_err(|_| {
        format!(
            "Error parsing version segment: strconv.ParseUint: parsing {}: value out of range",
            crate::print::quote(s)
        )
    })
}

impl Version {
    pub(crate) fn parse(s: &str) -> Result<Version, String> {
        let m = patterns().version.captures(s).ok_or(INVALID)?;
        let group = |i: usize| m.get(i).map_or("", |g| g.as_str());
        let v = Version {
            major: parse_segment(group(1))?,
            minor: if group(2).is_empty() {
                0
            } else {
                parse_segment(&group(2)[1..])?
            },
            patch: if group(3).is_empty() {
                0
            } else {
                parse_segment(&group(3)[1..])?
            },
            pre: group(5).to_owned(),
            metadata: group(8).to_owned(),
            original: s.to_owned(),
        };
        for part in v.pre.split('.') {
            if part.len() > 1 && part.starts_with('0') && part.bytes().all(|b| b.is_ascii_digit()) {
                return Err("Version segment starts with 0".into());
            }
        }
        Ok(v)
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

impl Object for Version {
    fn type_name(&self) -> String {
        "*semver.Version".into()
    }

    fn kind(&self) -> &'static str {
        "ptr"
    }

    fn method(&self, name: &str) -> Option<MethodSig> {
        match name {
            "Major" | "Minor" | "Patch" | "Prerelease" | "Metadata" | "Original" | "String"
            | "IncMajor" | "IncMinor" | "IncPatch" => Some(METHODS0),
            "LessThan" | "GreaterThan" | "Equal" | "Compare" | "LessThanEqual"
            | "GreaterThanEqual" => Some(METHOD_VERSION),
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
            };
            v.original = v.to_string();
            Value::Object(Rc::new(v))
        };
        Ok(match name {
            "Major" => Value::Int64(self.major as i64),
            "Minor" => Value::Int64(self.minor as i64),
            "Patch" => Value::Int64(self.patch as i64),
            "Prerelease" => Value::str(&self.pre),
            "Metadata" => Value::str(&self.metadata),
            "Original" => Value::str(&self.original),
            "String" => Value::string(self.to_string()),
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

struct Constraint {
    con: Version,
    op: String,
    minor_dirty: bool,
    patch_dirty: bool,
    dirty: bool,
}

struct Constraints {
    or: Vec<Vec<Constraint>>,
}

fn is_x(s: &str) -> bool {
    matches!(s, "x" | "X" | "*")
}

impl Constraints {
    fn parse(text: &str) -> Result<Constraints, String> {
        let p = patterns();
        let mut rewritten = text.to_owned();
        for caps in p.range.captures_iter(text) {
            let whole = caps.get(0).map_or("", |m| m.as_str());
            let replacement = format!(">= {}, <= {}", &caps[1], &caps[11]);
            rewritten = rewritten.replacen(whole, &replacement, 1);
        }
        let mut or = Vec::new();
        for part in rewritten.split("||") {
            if !p.valid.is_match(part) {
                return Err(format!("improper constraint: {part}"));
            }
            let found: Vec<&str> = p.find.find_iter(part).map(|m| m.as_str()).collect();
            let pieces = if found.is_empty() { vec![part] } else { found };
            let mut and = Vec::new();
            for piece in pieces {
                and.push(Constraint::parse(piece)?);
            }
            or.push(and);
        }
        Ok(Constraints { or })
    }

    fn check(&self, v: &Version) -> bool {
        self.or.iter().any(|and| and.iter().all(|c| c.check(v)))
    }
}

impl Constraint {
    fn parse(text: &str) -> Result<Constraint, String> {
        if text.is_empty() {
            return Ok(Constraint {
                con: Version::parse("0.0.0")?,
                op: String::new(),
                minor_dirty: false,
                patch_dirty: false,
                dirty: true,
            });
        }
        let m = patterns()
            .constraint
            .captures(text)
            .ok_or_else(|| format!("improper constraint: {text}"))?;
        let group = |i: usize| m.get(i).map_or("", |g| g.as_str());
        let (mut minor_dirty, mut patch_dirty, mut dirty) = (false, false, false);
        let mut ver = group(2).to_owned();
        let (g3, g4, g5, g6) = (group(3), group(4), group(5), group(6));
        if is_x(g3) || g3.is_empty() {
            ver = format!("0.0.0{g6}");
            dirty = true;
        } else if is_x(g4.trim_start_matches('.')) || g4.is_empty() {
            minor_dirty = true;
            dirty = true;
            ver = format!("{g3}.0.0{g6}");
        } else if is_x(g5.trim_start_matches('.')) || g5.is_empty() {
            dirty = true;
            patch_dirty = true;
            ver = format!("{g3}{g4}.0{g6}");
        }
        let con = Version::parse(&ver).map_err(|_| "constraint Parser Error".to_owned())?;
        Ok(Constraint {
            con,
            op: group(1).to_owned(),
            minor_dirty,
            patch_dirty,
            dirty,
        })
    }

    fn check(&self, v: &Version) -> bool {
        let c = &self.con;
        if !v.pre.is_empty() && c.pre.is_empty() {
            return false;
        }
        match self.op.as_str() {
            "" | "=" => {
                if self.dirty {
                    self.tilde(v)
                } else {
                    v.compare(c) == Ordering::Equal
                }
            }
            "!=" => self.not_equal(v),
            ">" => self.greater(v),
            "<" => v.compare(c) == Ordering::Less,
            ">=" | "=>" => v.compare(c) != Ordering::Less,
            "<=" | "=<" => self.less_equal(v),
            "~" | "~>" => self.tilde(v),
            "^" => self.caret(v),
            _ => false,
        }
    }

    fn not_equal(&self, v: &Version) -> bool {
        let c = &self.con;
        if self.dirty {
            if c.major != v.major {
                return true;
            }
            if c.minor != v.minor && !self.minor_dirty {
                return true;
            } else if self.minor_dirty {
                return false;
            } else if c.patch != v.patch && !self.patch_dirty {
                return true;
            } else if self.patch_dirty {
                if !v.pre.is_empty() || !c.pre.is_empty() {
                    return compare_prerelease(&v.pre, &c.pre) != Ordering::Equal;
                }
                return false;
            }
        }
        v.compare(c) != Ordering::Equal
    }

    fn greater(&self, v: &Version) -> bool {
        let c = &self.con;
        if !self.dirty {
            return v.compare(c) == Ordering::Greater;
        }
        if v.major > c.major {
            true
        } else if v.major < c.major || self.minor_dirty {
            false
        } else if self.patch_dirty {
            v.minor > c.minor
        } else {
            v.compare(c) == Ordering::Greater
        }
    }

    fn less_equal(&self, v: &Version) -> bool {
        let c = &self.con;
        if !self.dirty {
            return v.compare(c) != Ordering::Greater;
        }
        if v.major > c.major {
            return false;
        }
        !(v.major == c.major && v.minor > c.minor && !self.minor_dirty)
    }

    fn tilde(&self, v: &Version) -> bool {
        let c = &self.con;
        if v.compare(c) == Ordering::Less {
            return false;
        }
        if c.major == 0 && c.minor == 0 && c.patch == 0 && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        if v.major != c.major {
            return false;
        }
        v.minor == c.minor || self.minor_dirty
    }

    fn caret(&self, v: &Version) -> bool {
        let c = &self.con;
        if v.compare(c) == Ordering::Less {
            return false;
        }
        if c.major > 0 || self.minor_dirty {
            return v.major == c.major;
        }
        if c.major == 0 && v.major > 0 {
            return false;
        }
        if c.minor > 0 || self.patch_dirty {
            return v.minor == c.minor;
        }
        if c.minor == 0 && v.minor > 0 {
            return false;
        }
        c.patch == v.patch
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
            ("*", "0.0.1", true),
        ];
        for (c, v, want) in cases {
            assert_eq!(semver_compare(c, v).unwrap(), want, "{c} {v}");
        }
        assert_eq!(
            semver_compare("foo", "1.0.0").unwrap_err(),
            "improper constraint: foo"
        );
        assert_eq!(semver_compare(">1", "x").unwrap_err(), INVALID);
    }
}
