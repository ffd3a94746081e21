use std::cmp::Ordering;
use std::fmt;

/// Why a version string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// The string is empty.
    #[error("version is empty")]
    Empty,
    /// The string is not shaped like `MAJOR[.MINOR[.PATCH]][-PRERELEASE][+BUILD]`.
    #[error("`{0}` is not a semantic version (expected MAJOR.MINOR.PATCH, e.g. 1.2.3)")]
    Invalid(String),
    /// A numeric segment has a leading zero, which SemVer 2 forbids.
    #[error("`{0}`: a version segment starts with 0")]
    LeadingZero(String),
    /// A numeric segment does not fit in 64 bits.
    #[error("`{0}`: a version segment is too large")]
    Overflow(String),
}

/// A parsed semantic version. Equality and ordering follow Masterminds/semver: build
/// metadata is ignored, a pre-release sorts before its release.
#[derive(Debug, Clone)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    /// Pre-release identifiers after `-`, without the dash; empty for a release.
    pub pre: String,
    /// Build metadata after `+`, without the plus; empty when absent.
    pub metadata: String,
    original: String,
}

fn is_identifier_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

/// Dot-separated, non-empty identifiers of `[0-9A-Za-z-]`.
fn valid_identifiers(text: &str) -> bool {
    text.split('.')
        .all(|part| !part.is_empty() && part.bytes().all(is_identifier_char))
}

/// Numeric pre-release identifiers must not have leading zeros.
fn valid_prerelease(text: &str) -> bool {
    text.split('.').all(|part| {
        !(part.len() > 1 && part.starts_with('0') && part.bytes().all(|b| b.is_ascii_digit()))
    })
}

impl Version {
    /// Parses leniently, as Helm does for Chart.yaml versions and repository indexes
    /// (`semver.NewVersion`): an optional `v`, one to three numeric segments (missing ones
    /// are 0), leading zeros allowed in them.
    pub fn parse(text: &str) -> Result<Version, VersionError> {
        let invalid = || VersionError::Invalid(text.to_owned());
        let mut rest = text.strip_prefix('v').unwrap_or(text);
        let mut metadata = "";
        if let Some((head, tail)) = rest.split_once('+') {
            if !valid_identifiers(tail) {
                return Err(invalid());
            }
            metadata = tail;
            rest = head;
        }
        let mut pre = "";
        if let Some((head, tail)) = rest.split_once('-') {
            if !valid_identifiers(tail) {
                return Err(invalid());
            }
            pre = tail;
            rest = head;
        }
        let segments: Vec<&str> = rest.split('.').collect();
        if segments.len() > 3
            || segments
                .iter()
                .any(|s| s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err(invalid());
        }
        let number = |i: usize| -> Result<u64, VersionError> {
            segments.get(i).map_or(Ok(0), |s| {
                s.parse()
                    .map_err(|_| VersionError::Overflow(text.to_owned()))
            })
        };
        if !valid_prerelease(pre) {
            return Err(VersionError::LeadingZero(text.to_owned()));
        }
        Ok(Version {
            major: number(0)?,
            minor: number(1)?,
            patch: number(2)?,
            pre: pre.to_owned(),
            metadata: metadata.to_owned(),
            original: text.to_owned(),
        })
    }

    /// Parses a strict SemVer 2 version (`semver.StrictNewVersion`): exactly three
    /// segments, no `v`, no leading zeros. `helm lint` warns about anything less.
    pub fn parse_strict(text: &str) -> Result<Version, VersionError> {
        if text.is_empty() {
            return Err(VersionError::Empty);
        }
        if text.starts_with('v') {
            return Err(VersionError::Invalid(text.to_owned()));
        }
        let version = Version::parse(text)?;
        let core = text.split(['-', '+']).next().unwrap_or(text);
        let segments: Vec<&str> = core.split('.').collect();
        if segments.len() != 3 {
            return Err(VersionError::Invalid(text.to_owned()));
        }
        if segments.iter().any(|s| s.len() > 1 && s.starts_with('0')) {
            return Err(VersionError::LeadingZero(text.to_owned()));
        }
        Ok(version)
    }

    /// Builds a version from its parts; `original` is the canonical text.
    pub fn new(major: u64, minor: u64, patch: u64, pre: &str, metadata: &str) -> Version {
        let mut version = Version {
            major,
            minor,
            patch,
            pre: pre.to_owned(),
            metadata: metadata.to_owned(),
            original: String::new(),
        };
        version.original = version.to_string();
        version
    }

    /// The text this version was parsed from (keeps a leading `v` or short form).
    pub fn original(&self) -> &str {
        &self.original
    }

    /// True for versions with a pre-release part.
    pub fn is_prerelease(&self) -> bool {
        !self.pre.is_empty()
    }
}

/// Masterminds' comparison of one pre-release identifier: numbers compare numerically and
/// sort before words; a side that has run out of identifiers sorts first.
fn compare_prerelease_part(s: &str, o: &str) -> Ordering {
    if s == o {
        return Ordering::Equal;
    }
    if s.is_empty() {
        return Ordering::Less;
    }
    if o.is_empty() {
        return Ordering::Greater;
    }
    let numeric = |p: &str| {
        if p.bytes().all(|b| b.is_ascii_digit()) {
            p.parse::<u64>().ok()
        } else {
            None
        }
    };
    match (numeric(s), numeric(o)) {
        (Some(a), Some(b)) => a.cmp(&b),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => s.cmp(o),
    }
}

pub(crate) fn compare_prerelease(s: &str, o: &str) -> Ordering {
    let sparts: Vec<&str> = s.split('.').collect();
    let oparts: Vec<&str> = o.split('.').collect();
    for i in 0..sparts.len().max(oparts.len()) {
        let a = sparts.get(i).copied().unwrap_or("");
        let b = oparts.get(i).copied().unwrap_or("");
        match compare_prerelease_part(a, b) {
            Ordering::Equal => continue,
            other => return other,
        }
    }
    Ordering::Equal
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => compare_prerelease(&self.pre, &other.pre),
            })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Version {}

/// The canonical form `MAJOR.MINOR.PATCH[-PRE][+META]` (no `v`, all three segments).
impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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

impl std::str::FromStr for Version {
    type Err = VersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Version::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    #[test]
    fn lenient_forms_helm_accepts() {
        assert_eq!(v("1").to_string(), "1.0.0");
        assert_eq!(v("v1.2").to_string(), "1.2.0");
        assert_eq!(v("01.02.03").to_string(), "1.2.3");
        assert_eq!(v("1.2.3-rc.1+build.5").to_string(), "1.2.3-rc.1+build.5");
        assert_eq!(v("v1.2").original(), "v1.2");
    }

    #[test]
    fn invalid_versions() {
        for text in [
            "",
            "1.2.3.4",
            "a.b.c",
            "1..2",
            "1.2.3-",
            "1.2.3+",
            "1.2.3-a..b",
            "V1.2.3",
            "1.2.3-01",
            " 1.2.3",
        ] {
            assert!(Version::parse(text).is_err(), "{text:?} should be invalid");
        }
        // Numbers must fit 64 bits, however long the text.
        assert!(Version::parse(&"1".repeat(300)).is_err());
    }

    #[test]
    fn long_versions_parse_as_masterminds_does() {
        // Masterminds has no length limit, and Helm indexes such charts.
        let long = format!("1.0.0-{}", "a".repeat(300));
        assert_eq!(Version::parse(&long).unwrap().to_string(), long);
    }

    #[test]
    fn strict_semver_2() {
        assert!(Version::parse_strict("1.2.3").is_ok());
        assert!(Version::parse_strict("1.2.3-alpha.1+meta").is_ok());
        for text in ["1", "1.2", "v1.2.3", "01.2.3", ""] {
            assert!(
                Version::parse_strict(text).is_err(),
                "{text:?} is not strict SemVer 2"
            );
        }
    }

    #[test]
    fn ordering_follows_masterminds() {
        let mut versions: Vec<Version> = [
            "1.0.0",
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-beta",
            "1.0.0-alpha.beta",
            "0.9.9",
            "1.0.0-2",
            "1.0.0-10",
            "2.0.0",
        ]
        .iter()
        .map(|t| v(t))
        .collect();
        versions.sort();
        let sorted: Vec<String> = versions.iter().map(ToString::to_string).collect();
        assert_eq!(
            sorted,
            [
                "0.9.9",
                "1.0.0-2",
                "1.0.0-10",
                "1.0.0-alpha",
                "1.0.0-alpha.1",
                "1.0.0-alpha.beta",
                "1.0.0-beta",
                "1.0.0",
                "2.0.0"
            ]
        );
        assert_eq!(v("1.2.3+a"), v("1.2.3+b"), "build metadata is ignored");
    }
}
