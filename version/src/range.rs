//! Version ranges with the semantics of Masterminds/semver v3.4.0 `Constraints`, the library
//! Helm uses for `--version`, dependency versions and `kubeVersion`.
//!
//! Grammar, as that library accepts it:
//! - alternatives separated by `||`; inside one, comparisons separated by spaces or one comma;
//! - a comparison is an operator (`=`, `!=`, `>`, `<`, `>=`, `=>`, `<=`, `=<`, `~`, `~>`, `^`,
//!   or none) and a version that may be partial (`1`, `1.2`), use wildcards (`x`, `X`, `*`),
//!   carry a `v` prefix, a pre-release and build metadata;
//! - `A - B` (spaces required around the dash) means `>= A, <= B`.
//!
//! A version with a pre-release only matches an alternative that names a pre-release in one
//! of its comparisons; the `-0` trick (`>0.0.0-0`) is how Helm's `--devel` opts in.
//!
//! Some results are surprising but are what Helm does, so they are kept: `^*` only matches
//! `0.0.0`, `<=*` matches `0.0.x`, `!=*` means `!=0.0.0`, `>1.2` means "minor above 2".

use std::cmp::Ordering;
use std::fmt;

use crate::version::{Version, compare_prerelease};

/// Why a range was refused. Positions are byte offsets into the text as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    /// A comparison is not shaped like `OPERATOR VERSION`.
    #[error(
        "invalid version range `{range}`: `{part}` is not a version comparison\nhint: write comparisons like `>=1.2.3`, `^1.2`, `~1.2.x` or `1.2 - 1.4`, separated by spaces or commas, alternatives by `||`"
    )]
    Improper {
        /// The whole range as given.
        range: String,
        /// The comparison (or alternative) that could not be read.
        part: String,
    },
    /// A comparison is shaped right but its version is not one (`1x`, `1.2.3-01`).
    #[error(
        "invalid version range `{range}`: `{part}` does not name a valid version\nhint: version numbers are digits or one of `x`, `X`, `*`; pre-release numbers have no leading zeros"
    )]
    BadVersion {
        /// The whole range as given.
        range: String,
        /// The comparison whose version is invalid.
        part: String,
    },
}

/// A parsed version range: alternatives (OR) of comparison sets (AND).
#[derive(Debug, Clone)]
pub struct VersionRange {
    alternatives: Vec<Alternative>,
    text: String,
}

#[derive(Debug, Clone)]
struct Alternative {
    comparisons: Vec<Comparison>,
    /// Set when a comparison names a pre-release: only then may pre-releases match.
    admits_prereleases: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// `=` or no operator; with a wildcard it acts like `~`.
    Exact,
    NotEqual,
    Greater,
    Less,
    GreaterOrEqual,
    LessOrEqual,
    Tilde,
    Caret,
}

/// How much of the version was given. Masterminds calls these "dirty" flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Given {
    /// `1.2.3`
    Full,
    /// `1.2` or `1.2.x`
    MajorMinor,
    /// `1` or `1.x`
    Major,
    /// `*` or `x` as the major number
    Nothing,
}

#[derive(Debug, Clone)]
struct Comparison {
    op: Op,
    version: Version,
    given: Given,
}

impl VersionRange {
    /// Parses a range as Masterminds `NewConstraint` does.
    pub fn parse(text: &str) -> Result<VersionRange, RangeError> {
        let rewritten = rewrite_hyphen_ranges(text);
        let mut alternatives = Vec::new();
        for part in rewritten.split("||") {
            let Some(atoms) = split_comparisons(part) else {
                return Err(RangeError::Improper {
                    range: text.to_owned(),
                    part: locate_bad_part(part),
                });
            };
            let mut comparisons = Vec::with_capacity(atoms.len());
            for atom in atoms {
                let comparison =
                    Comparison::parse(&atom).ok_or_else(|| RangeError::BadVersion {
                        range: text.to_owned(),
                        part: format!("{}{}", atom.op, atom.version),
                    })?;
                comparisons.push(comparison);
            }
            let admits_prereleases = comparisons.iter().any(|c| c.version.is_prerelease());
            alternatives.push(Alternative {
                comparisons,
                admits_prereleases,
            });
        }
        Ok(VersionRange {
            alternatives,
            text: text.to_owned(),
        })
    }

    /// True when `version` satisfies the range (`Constraints.Check`).
    pub fn matches(&self, version: &Version) -> bool {
        self.matches_with(version, false)
    }

    /// Like [`VersionRange::matches`], but with `include_prereleases` every alternative
    /// admits pre-releases (Masterminds' `IncludePrerelease`).
    pub fn matches_with(&self, version: &Version, include_prereleases: bool) -> bool {
        self.alternatives.iter().any(|alt| {
            let admit = include_prereleases || alt.admits_prereleases;
            if version.is_prerelease() && !admit {
                return false;
            }
            alt.comparisons.iter().all(|c| c.matches(version))
        })
    }

    /// The range as it was written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl std::str::FromStr for VersionRange {
    type Err = RangeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        VersionRange::parse(s)
    }
}

impl fmt::Display for VersionRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Go's `\s`: ASCII space, tab, newline, form feed and carriage return, not vertical tab.
fn is_space(c: char) -> bool {
    c.is_ascii_whitespace()
}

fn is_number_char(c: char) -> bool {
    // The library's character class `[0-9|x|X|\*]` also admits `|`; such versions then fail
    // to parse, which is the error Helm reports too.
    c.is_ascii_digit() || matches!(c, '|' | 'x' | 'X' | '*')
}

fn is_identifier_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

/// The pieces of a version as a range writes it: `v?N(.N)?(.N)?(-PRE)?(+META)?`.
#[derive(Debug, Default, PartialEq, Eq)]
struct VersionParts<'a> {
    major: &'a str,
    minor: Option<&'a str>,
    patch: Option<&'a str>,
    /// Pre-release including its leading `-`, or empty.
    pre: &'a str,
}

/// Reads the longest prefix of `text` that is a range version, preferring to take each
/// optional piece, as the library's regular expression does. Returns the pieces and the
/// length consumed; `None` when not even a major number is there.
fn scan_version(text: &str) -> Option<(VersionParts<'_>, usize)> {
    let bytes = text.as_bytes();
    let mut pos = usize::from(bytes.first() == Some(&b'v'));
    let number = |from: usize| {
        text[from..]
            .char_indices()
            .find(|&(_, c)| !is_number_char(c))
            .map_or(text.len(), |(i, _)| from + i)
    };
    let major_end = number(pos);
    if major_end == pos {
        return None;
    }
    let mut parts = VersionParts {
        major: &text[pos..major_end],
        ..VersionParts::default()
    };
    pos = major_end;
    for slot in [&mut parts.minor, &mut parts.patch] {
        if bytes.get(pos) == Some(&b'.') {
            let end = number(pos + 1);
            if end > pos + 1 {
                *slot = Some(&text[pos + 1..end]);
                pos = end;
                continue;
            }
        }
        break;
    }
    if bytes.get(pos) == Some(&b'-')
        && let Some(len) = scan_identifiers(&text[pos + 1..])
    {
        parts.pre = &text[pos..pos + 1 + len];
        pos += 1 + len;
    }
    if bytes.get(pos) == Some(&b'+')
        && let Some(len) = scan_identifiers(&text[pos + 1..])
    {
        pos += 1 + len;
    }
    Some((parts, pos))
}

/// Length of the longest prefix shaped `ID(.ID)*` with `ID = [0-9A-Za-z-]+`.
fn scan_identifiers(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let run = |from: usize| {
        bytes[from..]
            .iter()
            .position(|&b| !is_identifier_char(b as char))
            .map_or(bytes.len(), |i| from + i)
    };
    let mut end = run(0);
    if end == 0 {
        return None;
    }
    while bytes.get(end) == Some(&b'.') {
        let next = run(end + 1);
        if next == end + 1 {
            break;
        }
        end = next;
    }
    Some(end)
}

/// Rewrites every `A - B` into `>= A, <= B `, replacing the first occurrence of each match's
/// text in turn, exactly as the library does (a match may start inside a word).
fn rewrite_hyphen_ranges(text: &str) -> String {
    let mut matches = Vec::new();
    let mut start = 0;
    while start < text.len() {
        match hyphen_range_at_or_after(text, start) {
            Some((from, to, low, high)) => {
                matches.push((&text[from..to], low, high));
                start = to;
            }
            None => break,
        }
    }
    let mut out = text.to_owned();
    for (matched, low, high) in matches {
        out = out.replacen(matched, &format!(">= {low}, <= {high} "), 1);
    }
    out
}

/// The leftmost `\s*V\s+-\s+V\s*` at or after `start`: (start, end, low, high).
fn hyphen_range_at_or_after(text: &str, start: usize) -> Option<(usize, usize, &str, &str)> {
    let mut from = start;
    while from < text.len() {
        if let Some((end, low, high)) = hyphen_range_at(text, from) {
            return Some((from, end, low, high));
        }
        from += text[from..].chars().next().map_or(1, char::len_utf8);
    }
    None
}

fn hyphen_range_at(text: &str, from: usize) -> Option<(usize, &str, &str)> {
    let skip_spaces = |pos: usize| {
        text[pos..]
            .char_indices()
            .find(|&(_, c)| !is_space(c))
            .map_or(text.len(), |(i, _)| pos + i)
    };
    let low_start = skip_spaces(from);
    // The low version must run right up to the spaces before the dash, so it is the whole
    // word; any shorter reading would leave a non-space before the dash.
    let low_end = text[low_start..]
        .char_indices()
        .find(|&(_, c)| is_space(c))
        .map(|(i, _)| low_start + i)?;
    let (_, consumed) = scan_version(&text[low_start..low_end])?;
    if consumed != low_end - low_start {
        return None;
    }
    let dash = skip_spaces(low_end);
    if text.as_bytes().get(dash) != Some(&b'-') {
        return None;
    }
    let high_start = skip_spaces(dash + 1);
    if high_start == dash + 1 {
        return None;
    }
    let (_, consumed) = scan_version(&text[high_start..])?;
    let high_end = high_start + consumed;
    Some((
        skip_spaces(high_end),
        &text[low_start..low_end],
        &text[high_start..high_end],
    ))
}

/// One comparison as written: operator text and version text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Atom {
    op: String,
    version: String,
}

const OPERATORS: [&str; 12] = [
    "", "=", "!=", ">", "<", ">=", "=>", "<=", "=<", "~", "~>", "^",
];

fn is_operator_char(c: char) -> bool {
    matches!(c, '=' | '!' | '>' | '<' | '~' | '^')
}

/// Splits one alternative into comparisons, or `None` if it does not follow the grammar
/// `\s*OP\s*V\s*((\s+|,\s*)OP\s*V\s*)*`. A comparison's version runs to the next space or
/// comma and must be a range version in full; anything else cannot satisfy the grammar.
fn split_comparisons(part: &str) -> Option<Vec<Atom>> {
    let mut atoms = Vec::new();
    let mut rest = part.trim_start_matches(is_space);
    loop {
        let op_len = rest.find(|c| !is_operator_char(c)).unwrap_or(rest.len());
        let op = &rest[..op_len];
        if !OPERATORS.contains(&op) {
            return None;
        }
        rest = rest[op_len..].trim_start_matches(is_space);
        let word_len = rest
            .find(|c: char| is_space(c) || c == ',')
            .unwrap_or(rest.len());
        let word = &rest[..word_len];
        match scan_version(word) {
            Some((_, consumed)) if consumed == word.len() => {}
            _ => return None,
        }
        atoms.push(Atom {
            op: op.to_owned(),
            version: word.to_owned(),
        });
        let after = &rest[word_len..];
        rest = after.trim_start_matches(is_space);
        if rest.is_empty() {
            return Some(atoms);
        }
        if let Some(tail) = rest.strip_prefix(',') {
            rest = tail.trim_start_matches(is_space);
        } else if rest.len() == after.len() {
            return None;
        }
    }
}

/// Names the first comparison of a refused alternative that cannot be read, for the error.
fn locate_bad_part(part: &str) -> String {
    let trimmed = part.trim_matches(is_space);
    for piece in trimmed.split(|c: char| is_space(c) || c == ',') {
        if piece.is_empty() {
            continue;
        }
        let version = piece.trim_start_matches(is_operator_char);
        let op = &piece[..piece.len() - version.len()];
        let version_ok = version.is_empty()
            || matches!(scan_version(version), Some((_, n)) if n == version.len());
        if !OPERATORS.contains(&op) || !version_ok {
            return piece.to_owned();
        }
    }
    trimmed.to_owned()
}

impl Comparison {
    fn parse(atom: &Atom) -> Option<Comparison> {
        let op = match atom.op.as_str() {
            "" | "=" => Op::Exact,
            "!=" => Op::NotEqual,
            ">" => Op::Greater,
            "<" => Op::Less,
            ">=" | "=>" => Op::GreaterOrEqual,
            "<=" | "=<" => Op::LessOrEqual,
            "~" | "~>" => Op::Tilde,
            "^" => Op::Caret,
            _ => return None,
        };
        let (parts, _) = scan_version(&atom.version)?;
        let wild = |s: &str| matches!(s, "x" | "X" | "*");
        let (text, given) = if wild(parts.major) {
            (format!("0.0.0{}", parts.pre), Given::Nothing)
        } else if parts.minor.is_none_or(wild) {
            (format!("{}.0.0{}", parts.major, parts.pre), Given::Major)
        } else if parts.patch.is_none_or(wild) {
            let minor = parts.minor.unwrap_or_default();
            (
                format!("{}.{minor}.0{}", parts.major, parts.pre),
                Given::MajorMinor,
            )
        } else {
            (atom.version.clone(), Given::Full)
        };
        let version = Version::parse(&text).ok()?;
        Some(Comparison { op, version, given })
    }

    fn matches(&self, v: &Version) -> bool {
        let c = &self.version;
        match self.op {
            Op::Exact if self.given != Given::Full => self.tilde(v),
            Op::Exact => v == c,
            Op::NotEqual => self.not_equal(v),
            Op::Greater => self.greater(v),
            Op::Less => v < c,
            Op::GreaterOrEqual => v >= c,
            Op::LessOrEqual => match self.given {
                Given::Full => v <= c,
                Given::Major => v.major <= c.major,
                Given::MajorMinor | Given::Nothing => {
                    v.major < c.major || (v.major == c.major && v.minor <= c.minor)
                }
            },
            Op::Tilde => self.tilde(v),
            Op::Caret => self.caret(v),
        }
    }

    fn not_equal(&self, v: &Version) -> bool {
        let c = &self.version;
        match self.given {
            Given::Full | Given::Nothing => {
                if self.given == Given::Nothing
                    && (c.major != v.major || c.minor != v.minor || c.patch != v.patch)
                {
                    return true;
                }
                v != c
            }
            Given::Major => c.major != v.major,
            Given::MajorMinor => {
                if c.major != v.major || c.minor != v.minor {
                    return true;
                }
                (v.is_prerelease() || c.is_prerelease())
                    && compare_prerelease(&v.pre, &c.pre) != Ordering::Equal
            }
        }
    }

    fn greater(&self, v: &Version) -> bool {
        let c = &self.version;
        match self.given {
            Given::Full | Given::Nothing => v > c,
            Given::Major => v.major > c.major,
            Given::MajorMinor => v.major > c.major || (v.major == c.major && v.minor > c.minor),
        }
    }

    fn tilde(&self, v: &Version) -> bool {
        let c = &self.version;
        if v < c {
            return false;
        }
        let major_only = matches!(self.given, Given::Major);
        if c.major == 0
            && c.minor == 0
            && c.patch == 0
            && matches!(self.given, Given::Full | Given::Nothing)
        {
            return true;
        }
        v.major == c.major && (major_only || v.minor == c.minor)
    }

    fn caret(&self, v: &Version) -> bool {
        let c = &self.version;
        if v < c {
            return false;
        }
        if c.major > 0 || self.given == Given::Major {
            return v.major == c.major;
        }
        if v.major > 0 {
            return false;
        }
        if c.minor > 0 || self.given == Given::MajorMinor {
            return v.minor == c.minor;
        }
        v.minor == 0 && v.patch == c.patch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(range: &str, version: &str) -> bool {
        VersionRange::parse(range)
            .unwrap_or_else(|e| panic!("{range:?}: {e}"))
            .matches(&Version::parse(version).unwrap())
    }

    /// Cases from the library's documented behaviour and its test table.
    #[test]
    fn comparisons_match_like_masterminds() {
        let table: &[(&str, &str, bool)] = &[
            ("=2.0.0", "1.2.3", false),
            ("=2.0.0", "2.0.0", true),
            ("=2.0", "1.2.3", false),
            ("=2.0", "2.0.0", true),
            ("=2.0", "2.0.1", true),
            ("4.1", "4.1.0", true),
            ("!=4.1.0", "4.1.0", false),
            ("!=4.1.0", "4.1.1", true),
            ("!=4.1", "4.1.0", false),
            ("!=4.1", "4.1.1", false),
            ("!=4.1", "5.1.0-alpha.1", false),
            ("!=4.1-alpha", "4.1.0", true),
            ("!=4.1", "5.1.0", true),
            ("<11", "0.1.0", true),
            ("<11", "11.1.0", false),
            ("<1.1", "0.1.0", true),
            ("<1.1", "1.1.0", false),
            ("<1.1", "1.1.1", false),
            ("<=11", "1.2.3", true),
            ("<=11", "12.2.3", false),
            ("<=11", "11.2.3", true),
            ("<=1.1", "1.2.3", false),
            ("<=1.1", "0.1.0", true),
            ("<=1.1", "1.1.0", true),
            ("<=1.1", "1.1.1", true),
            (">1.1", "4.1.0", true),
            (">1.1", "1.1.0", false),
            (">0", "0", false),
            (">0", "1", true),
            (">0", "0.0.1-alpha", false),
            (">0.0", "0.0.1-alpha", false),
            (">0-0", "0.0.1-alpha", false),
            (">0.0-0", "0.0.1-alpha", false),
            (">0", "0.0.0-alpha", false),
            (">0-0", "0.0.0-alpha", false),
            (">0.0.0-0", "0.0.0-alpha", true),
            (">1.2.3-alpha.1", "1.2.3-alpha.2", true),
            (">1.2.3-alpha.1", "1.3.3-alpha.2", true),
            (">11", "11.1.0", false),
            (">11.1", "11.1.0", false),
            (">11.1", "11.1.1", false),
            (">11.1", "11.2.1", true),
            (">=11", "11.1.2", true),
            (">=11.1", "11.1.2", true),
            (">=11.1", "11.0.2", false),
            (">=1.1", "4.1.0", true),
            (">=1.1", "1.1.0", true),
            (">=1.1", "0.0.9", false),
            (">=0", "0.0.1-alpha", false),
            (">=0.0", "0.0.1-alpha", false),
            (">=0-0", "0.0.1-alpha", true),
            (">=0.0-0", "0.0.1-alpha", true),
            (">=0", "0.0.0-alpha", false),
            (">=0-0", "0.0.0-alpha", true),
            (">=0.0.0-0", "0.0.0-alpha", true),
            (">=0.0.0-0", "1.2.3", true),
            (">=0.0.0-0", "3.4.5-beta.1", true),
            ("<0", "0.0.0-alpha", false),
            ("<0-z", "0.0.0-alpha", true),
            (">=0", "0", true),
            ("=0", "1", false),
            ("*", "1", true),
            ("*", "4.5.6", true),
            ("*", "1.2.3-alpha.1", false),
            ("*-0", "1.2.3-alpha.1", true),
            ("2.*", "1", false),
            ("2.*", "3.4.5", false),
            ("2.*", "2.1.1", true),
            ("2.1.*", "2.1.1", true),
            ("2.1.*", "2.2.1", false),
            ("~1.2.3", "1.2.4", true),
            ("~1.2.3", "1.3.4", false),
            ("~1.2", "1.2.4", true),
            ("~1.2", "1.3.4", false),
            ("~1", "1.2.4", true),
            ("~1", "2.3.4", false),
            ("~0.2.3", "0.2.5", true),
            ("~0.2.3", "0.3.5", false),
            ("~1.2.3-beta.2", "1.2.3-beta.4", true),
            ("~1.2.3-beta.2", "1.2.4-beta.2", true),
            ("~1.2.3-beta.2", "1.3.4-beta.2", false),
            ("^1.2.3", "1.8.9", true),
            ("^1.2.3", "2.8.9", false),
            ("^1.2.3", "1.2.1", false),
            ("^1.1.0", "2.1.0", false),
            ("^1.2.0", "2.2.1", false),
            ("^1.2.0", "1.2.1-alpha.1", false),
            ("^1.2.1-alpha.1", "1.2.1-alpha.1", true),
            ("^1.2.1-alpha.1", "1.2.1-alpha.2", true),
            ("^1.2.1-alpha.1", "1.3.1-alpha.2", true),
            ("^1.2.1-alpha.1", "2.2.1-alpha.2", false),
            ("^1.2", "1.8.9", true),
            ("^1.2", "1.2.0", true),
            ("^1.2", "1.1.0", false),
            ("^1", "1.8.9", true),
            ("^1", "2.8.9", false),
            ("^1.x", "1.1.1", true),
            ("^1.x", "2.1.1", false),
            ("^2.x", "1.1.1", false),
            ("^0.0.1", "0.1.3", false),
            ("^0.0.1", "0.0.1", true),
            ("^0.0.1", "0.0.2", false),
            ("^0.1.2", "0.1.3", true),
            ("^0.1.2", "0.2.3", false),
            ("^0.2", "0.2.3", true),
            ("^0.2", "0.3.0", false),
            ("^0.0", "0.0.5", true),
            ("^0.0", "0.1.0", false),
            ("^0", "0.5.0", true),
            ("^0", "1.0.0", false),
            ("^0.x.x", "0.5.0", true),
            ("^*", "0.0.0", true),
            ("^*", "1.2.3", false),
            ("<=*", "0.0.5", true),
            ("<=*", "0.1.0", false),
            ("!=*", "0.0.0", false),
            ("!=*", "1.0.0", true),
            ("1.2.3 - 1.4.5", "1.3.0", true),
            ("1.2 - 1.4.5", "1.2.0", true),
            ("1.2 - 1.4.5", "1.4.6", false),
            ("1.2.3 - 1.4.5", "1.4.5+build", true),
            ("v1.2.3", "1.2.3", true),
            ("1.2.3+meta", "1.2.3+other", true),
            (">=1.1 <2 !=1.5.0", "1.5.0", false),
            (">=1.1, <2, !=1.5.0", "1.6.0", true),
            (">=1.1 <2 || >=3", "3.1.0", true),
            (">=1.1 <2 || >=3", "2.1.0", false),
            ("<2.0.0 || >=3.0.0-0", "3.0.0-rc.1", true),
            ("<2.0.0 || >=3.0.0-0", "1.9.0-rc.1", false),
        ];
        for &(range, version, want) in table {
            assert_eq!(check(range, version), want, "{range:?} vs {version:?}");
        }
    }

    #[test]
    fn hyphen_ranges_need_spaces_around_the_dash() {
        assert_eq!(rewrite_hyphen_ranges("1.2 - 1.4.5"), ">= 1.2, <= 1.4.5 ");
        assert_eq!(rewrite_hyphen_ranges("1.2-1.4.5"), "1.2-1.4.5");
        assert_eq!(
            rewrite_hyphen_ranges("1 - 2 || 3 - 4"),
            ">= 1, <= 2 ||>= 3, <= 4 "
        );
        assert!(check("1.2-1.4.5", "1.2.0-1.4.5"));
    }

    #[test]
    fn invalid_ranges_name_the_bad_part() {
        for (range, part) in [
            (">=1.2 <x.y", "<x.y"),
            ("1.2.3.4", "1.2.3.4"),
            (">>1", ">>1"),
            ("1,,2", "1,,2"),
            ("abc", "abc"),
            ("", ""),
            (">= 1.2 ||", ""),
        ] {
            match VersionRange::parse(range) {
                Err(RangeError::Improper { part: got, .. }) => {
                    assert_eq!(got, part, "{range:?}")
                }
                other => panic!("{range:?}: expected an improper range, got {other:?}"),
            }
        }
        for range in ["1x", "1.2.3-01", ">1|2", "1.xx.2"] {
            assert!(
                matches!(
                    VersionRange::parse(range),
                    Err(RangeError::BadVersion { .. })
                ),
                "{range:?}"
            );
        }
        let message = VersionRange::parse(">=1.2 <x.y").unwrap_err().to_string();
        assert!(message.contains("`<x.y`"), "{message}");
        assert!(message.contains("hint:"), "{message}");
    }

    #[test]
    fn separators_and_spacing() {
        assert!(check(" >= 1.2 , < 2 ", "1.5.0"));
        assert!(check(">=1.2,<2", "1.5.0"));
        assert!(check("> 1.2", "1.5.0"));
        assert!(check("=> 1.2", "1.5.0"));
        assert!(check("=< 1.2", "1.0.0"));
        assert!(check("~> 1.2", "1.2.9"));
        assert!(VersionRange::parse("1 ,2").is_ok());
        assert!(VersionRange::parse("1\t2").is_ok());
        assert!(
            VersionRange::parse("1\u{b}2").is_err(),
            "vertical tab is not \\s"
        );
    }
}
