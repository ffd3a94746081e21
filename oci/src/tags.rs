//! Which tag a `--version` means, as helm's `ValidateReference`, `Tags` and
//! `GetTagMatchingVersionOrConstraint` decide: a version is its own tag; a range (or
//! nothing: the newest stable version) is looked for among the tags that are strict
//! semantic versions (`_` read as `+`), newest first.

use chartkit_version::{Version, VersionRange};

use crate::error::OciError;
use crate::reference::Reference;

/// What the registry must be asked for a version request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wanted {
    /// A tag or digest known without asking.
    Exact(Reference),
    /// A tag chosen from the repository's tags with [`choose_tag`] and this constraint
    /// (empty: the newest stable version).
    FromTags(String),
}

/// What to fetch for `reference` with `--version version` (`--devel` without a version
/// is helm's `>0.0.0-0`).
pub fn wanted(
    reference: &Reference,
    version: Option<&str>,
    devel: bool,
) -> Result<Wanted, OciError> {
    let mut version = version.map(str::trim).unwrap_or_default().to_owned();
    if version.is_empty() && devel {
        version = ">0.0.0-0".to_owned();
    }
    if version.is_empty() {
        if let Some(tag) = &reference.tag {
            version = tag.replace('_', "+");
        }
    } else if let Some(tag) = &reference.tag
        && tag.replace('_', "+") != version
        && *tag != version
    {
        return Err(OciError::VersionMismatch {
            version,
            tag: tag.clone(),
        });
    }
    if reference.digest.is_some() {
        // The digest wins; a tag beside it is checked against it by the caller.
        return Ok(Wanted::Exact(reference.clone()));
    }
    if !version.is_empty() && Version::parse(&version).is_ok() {
        return Ok(Wanted::Exact(reference.with_tag(&version)));
    }
    Ok(Wanted::FromTags(version))
}

/// The tags that are versions, newest first, as chart versions (`+`, not `_`).
pub fn versions(tags: &[String]) -> Vec<String> {
    let mut versions: Vec<Version> = tags
        .iter()
        .filter_map(|t| Version::parse_strict(&t.replace('_', "+")).ok())
        .collect();
    versions.sort_by(|a, b| b.cmp(a));
    versions.iter().map(|v| v.original().to_owned()).collect()
}

/// The first of `versions` (newest first) that `constraint` admits; an exact text wins.
pub fn choose_tag(
    versions: &[String],
    constraint: &str,
    locator: &str,
) -> Result<String, OciError> {
    if versions.is_empty() {
        return Err(OciError::NoTags {
            locator: locator.to_owned(),
        });
    }
    if !constraint.is_empty()
        && let Some(v) = versions.iter().find(|v| *v == constraint)
    {
        return Ok(v.clone());
    }
    let range = VersionRange::parse(if constraint.is_empty() {
        "*"
    } else {
        constraint
    })?;
    versions
        .iter()
        .find(|v| Version::parse(v).is_ok_and(|parsed| range.matches(&parsed)))
        .cloned()
        .ok_or_else(|| OciError::NoMatchingVersion {
            locator: locator.to_owned(),
            version: constraint.to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(list: &[&str]) -> Vec<String> {
        versions(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn tags_that_are_versions_are_sorted_newest_first() {
        assert_eq!(
            tags(&[
                "latest",
                "1.0.0",
                "1.10.0",
                "1.2.0_build.5",
                "v2.0.0",
                "1.2",
                "2.0.0-rc.1"
            ]),
            ["2.0.0-rc.1", "1.10.0", "1.2.0+build.5", "1.0.0"]
        );
    }

    #[test]
    fn ranges_choose_as_helm_chooses() {
        let list = tags(&["1.0.0", "1.1.0", "2.0.0-rc.1", "1.2.0_build.5"]);
        let choose = |c: &str| choose_tag(&list, c, "r/web").map_err(|e| e.to_string());
        assert_eq!(choose("").unwrap(), "1.2.0+build.5");
        assert_eq!(choose("~1.1").unwrap(), "1.1.0");
        assert_eq!(choose(">0.0.0-0").unwrap(), "2.0.0-rc.1");
        assert_eq!(
            choose("^3").unwrap_err(),
            "could not locate a version matching provided version string ^3 in oci://r/web"
        );
        assert!(
            choose("not a range")
                .unwrap_err()
                .contains("invalid version/constraint")
        );
        assert!(
            choose_tag(&[], "", "r/web")
                .unwrap_err()
                .to_string()
                .contains("unable to locate any tags")
        );
    }

    #[test]
    fn a_version_is_its_own_tag_and_must_agree_with_the_references() {
        let r = Reference::parse("oci://r/web").unwrap();
        assert_eq!(
            wanted(&r, Some("1.0.0+b"), false).unwrap(),
            Wanted::Exact(r.with_tag("1.0.0_b"))
        );
        assert_eq!(
            wanted(&r, Some("^1"), false).unwrap(),
            Wanted::FromTags("^1".into())
        );
        assert_eq!(
            wanted(&r, None, true).unwrap(),
            Wanted::FromTags(">0.0.0-0".into())
        );
        assert_eq!(
            wanted(&r, None, false).unwrap(),
            Wanted::FromTags(String::new())
        );
        let tagged = Reference::parse("oci://r/web:1.0.0").unwrap();
        assert_eq!(
            wanted(&tagged, None, false).unwrap(),
            Wanted::Exact(tagged.clone())
        );
        assert_eq!(
            wanted(&tagged, Some("2.0.0"), false)
                .unwrap_err()
                .to_string(),
            "chart reference and version mismatch: 2.0.0 is not 1.0.0"
        );
        let pinned =
            Reference::parse(&format!("oci://r/web:1.0.0@sha256:{}", "b".repeat(64))).unwrap();
        assert_eq!(
            wanted(&pinned, None, false).unwrap(),
            Wanted::Exact(pinned.clone())
        );
    }
}
