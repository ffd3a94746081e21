//! Choosing chart versions the way Helm's commands do. Every function expects the versions
//! of one chart sorted newest first, as loading leaves them.

use chartkit_version::{RangeError, Version, VersionRange};

use crate::model::ChartVersion;

/// The range Helm's `--devel` stands for: every version, pre-releases included.
pub const DEVEL_RANGE: &str = ">0.0.0-0";
/// The range `helm search repo` uses without `--version` or `--devel`.
pub const STABLE_SEARCH_RANGE: &str = ">0.0.0";

/// Why no version was chosen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    #[error(transparent)]
    Range(#[from] RangeError),
    /// The chart has no versions at all.
    #[error("no chart version found")]
    Empty,
    /// Nothing satisfies the requested version.
    #[error("no chart version found for {name}-{requested}")]
    NoMatch { name: String, requested: String },
}

/// Helm's `IndexFile.Get`, used by `helm pull`, `install` and dependency resolution: an entry
/// whose version text equals `version` exactly wins; otherwise the newest entry that
/// satisfies `version` as a range. An empty `version` means `*` (newest stable). Of
/// versions of equal precedence the first in Helm's load order wins, which is deterministic
/// (see [`crate::gosort`]), so this is the very entry `helm pull` downloads.
pub fn get<'a>(
    versions: &'a [ChartVersion],
    version: &str,
) -> Result<&'a ChartVersion, SelectError> {
    let name = versions.first().map_or("", |v| v.name());
    get_by(versions, version, name)
}

/// A version as selection sees it: its text. Lets the same rules run on parsed entries and
/// on the compact form.
pub trait Candidate {
    fn version_text(&self) -> &str;
}

impl Candidate for ChartVersion {
    fn version_text(&self) -> &str {
        self.version()
    }
}

/// [`get`] over any candidates; `name` only feeds the error message.
pub fn get_by<'a, T: Candidate>(
    versions: &'a [T],
    version: &str,
    name: &str,
) -> Result<&'a T, SelectError> {
    if versions.is_empty() {
        return Err(SelectError::Empty);
    }
    let range = VersionRange::parse(if version.is_empty() { "*" } else { version })?;
    if !version.is_empty()
        && let Some(exact) = versions.iter().find(|v| v.version_text() == version)
    {
        return Ok(exact);
    }
    versions
        .iter()
        .find(|v| Version::parse(v.version_text()).is_ok_and(|parsed| range.matches(&parsed)))
        .ok_or_else(|| SelectError::NoMatch {
            name: name.to_owned(),
            requested: version.to_owned(),
        })
}

/// The version request of `helm pull`/`install`: `--devel` without `--version` widens the
/// request to every version.
pub fn pull_request(version: Option<&str>, devel: bool) -> String {
    match version {
        Some(v) if !v.is_empty() => v.to_owned(),
        _ if devel => DEVEL_RANGE.to_owned(),
        _ => String::new(),
    }
}

/// `helm search repo` for one chart: with `all_versions` (`--versions`) every matching
/// version newest first, otherwise only the newest. The range defaults to newest stable
/// above 0.0.0, or to [`DEVEL_RANGE`] with `devel`.
///
/// Among versions of equal precedence (`1.0.0`, `v1.0.0`, `1.0`, `1.0.0+build`) helm's
/// order is random: its results come out of a Go map and are sorted by precedence with an
/// unstable sort, so each run lists a tie in a different order and `--version` picks any
/// one of it. This keeps the order [`get`] sees (Helm's load order), a deterministic answer
/// that is always one of helm's. `repo/tests/tie_order.rs` checks both against helm.
pub fn search<'a>(
    versions: &'a [ChartVersion],
    range: Option<&str>,
    devel: bool,
    all_versions: bool,
) -> Result<Vec<&'a ChartVersion>, RangeError> {
    search_by(versions, range, devel, all_versions)
}

/// [`search`] over any candidates.
pub fn search_by<'a, T: Candidate>(
    versions: &'a [T],
    range: Option<&str>,
    devel: bool,
    all_versions: bool,
) -> Result<Vec<&'a T>, RangeError> {
    let text = match range {
        Some(r) if !r.is_empty() => r,
        _ if devel => DEVEL_RANGE,
        _ => STABLE_SEARCH_RANGE,
    };
    let range = VersionRange::parse(text)?;
    // Helm's search index is keyed by version text, so of two entries with the same text
    // only the later one in sorted order survives.
    let mut kept: Vec<(&T, Version)> = Vec::new();
    let mut slots: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for v in versions {
        let Ok(parsed) = Version::parse(v.version_text()) else {
            continue;
        };
        match slots.get(v.version_text()) {
            Some(&slot) => kept[slot] = (v, parsed),
            None => {
                slots.insert(v.version_text(), kept.len());
                kept.push((v, parsed));
            }
        }
    }
    let mut found = Vec::new();
    for (v, parsed) in kept {
        if range.matches(&parsed) {
            found.push(v);
            if !all_versions {
                break;
            }
        }
    }
    Ok(found)
}

/// Every version, newest first (`helm search repo --versions` without a range filter).
pub fn all_versions(versions: &[ChartVersion]) -> impl Iterator<Item = &ChartVersion> {
    versions.iter()
}
