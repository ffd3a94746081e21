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
/// satisfies `version` as a range. An empty `version` means `*` (newest stable).
pub fn get<'a>(
    versions: &'a [ChartVersion],
    version: &str,
) -> Result<&'a ChartVersion, SelectError> {
    if versions.is_empty() {
        return Err(SelectError::Empty);
    }
    let range = VersionRange::parse(if version.is_empty() { "*" } else { version })?;
    if !version.is_empty()
        && let Some(exact) = versions.iter().find(|v| v.version() == version)
    {
        return Ok(exact);
    }
    versions
        .iter()
        .find(|v| {
            v.parsed_version()
                .is_some_and(|parsed| range.matches(&parsed))
        })
        .ok_or_else(|| SelectError::NoMatch {
            name: versions[0].name().to_owned(),
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
pub fn search<'a>(
    versions: &'a [ChartVersion],
    range: Option<&str>,
    devel: bool,
    all_versions: bool,
) -> Result<Vec<&'a ChartVersion>, RangeError> {
    let text = match range {
        Some(r) if !r.is_empty() => r,
        _ if devel => DEVEL_RANGE,
        _ => STABLE_SEARCH_RANGE,
    };
    let range = VersionRange::parse(text)?;
    // Helm's search index is keyed by version text, so of two entries with the same text
    // only the later one in sorted order survives.
    let mut kept: Vec<(&ChartVersion, Version)> = Vec::new();
    for v in versions {
        let Some(parsed) = v.parsed_version() else {
            continue;
        };
        if let Some(slot) = kept.iter_mut().find(|(k, _)| k.version() == v.version()) {
            *slot = (v, parsed);
        } else {
            kept.push((v, parsed));
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
