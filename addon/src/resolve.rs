//! Picking versions for an addon and every addon it depends on, transitively.
//!
//! A backtracking search: addons are decided in the order they are first required (the
//! requested addon first), each trying its versions newest first among those that satisfy
//! every range required of it so far and the cluster's versions; a choice that leaves a
//! later addon without a version is undone and the next one tried. Every dead end is
//! recorded in words, so when nothing works the user reads which requirement failed and
//! why, not just "unsatisfiable".

use std::collections::BTreeMap;
use std::fmt;

use chartkit_version::{Version, VersionRange};

use crate::annotations::{
    ADDON_DEPENDENCIES, AnnotationError, SYSTEM_KUBERNETES, SYSTEM_VELA, decode_dependencies,
};

/// One version of an addon as a registry offers it.
#[derive(Debug, Clone)]
pub struct AddonVersion {
    pub name: String,
    pub version: Version,
    pub dependencies: Vec<Requirement>,
    /// The KubeVela versions it works with (`system.vela`); `None`: any.
    pub vela: Option<VersionRange>,
    /// The Kubernetes versions it works with (`system.kubernetes`); `None`: any.
    pub kubernetes: Option<VersionRange>,
}

/// A dependency on another addon; no range means any released version.
#[derive(Debug, Clone)]
pub struct Requirement {
    pub name: String,
    pub range: Option<VersionRange>,
}

impl AddonVersion {
    /// An addon version from an index entry: its name, version and annotations
    /// (see [`crate::annotations`]). An entry without addon annotations is an addon with
    /// no dependencies and no system requirements.
    pub fn from_annotations(
        name: &str,
        version: &str,
        annotations: &BTreeMap<String, String>,
    ) -> Result<AddonVersion, AnnotationError> {
        let context = |why: String| AnnotationError(format!("{name} {version}: {why}"));
        let parsed = Version::parse(version).map_err(|e| context(e.to_string()))?;
        let range = |key: &str| -> Result<Option<VersionRange>, AnnotationError> {
            match annotations.get(key).map(|s| s.trim()) {
                None | Some("") => Ok(None),
                Some(text) => VersionRange::parse(text)
                    .map(Some)
                    .map_err(|e| context(format!("annotation `{key}`: {e}"))),
            }
        };
        let mut dependencies = Vec::new();
        if let Some(text) = annotations.get(ADDON_DEPENDENCIES) {
            for dependency in decode_dependencies(text).map_err(|e| context(e.0))? {
                let range =
                    if dependency.version.is_empty() {
                        None
                    } else {
                        Some(VersionRange::parse(&dependency.version).map_err(|e| {
                            context(format!("dependency `{}`: {e}", dependency.name))
                        })?)
                    };
                dependencies.push(Requirement {
                    name: dependency.name,
                    range,
                });
            }
        }
        Ok(AddonVersion {
            name: name.to_owned(),
            version: parsed,
            dependencies,
            vela: range(SYSTEM_VELA)?,
            kubernetes: range(SYSTEM_KUBERNETES)?,
        })
    }

    fn label(&self) -> String {
        format!("{} {}", self.name, self.version.original())
    }
}

/// A picked addon version, with the picked addons that depend on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picked {
    pub name: String,
    pub version: Version,
    /// `NAME VERSION` of each picked addon that requires this one; empty for the addon
    /// that was asked for.
    pub required_by: Vec<String>,
}

/// Why no set of versions works: every dead end the search met, in the order it met
/// them (at most [`MAX_REASONS`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Unsatisfiable {
    /// What was asked for (`velaux ^1.2`).
    pub request: String,
    pub reasons: Vec<String>,
}

impl fmt::Display for Unsatisfiable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot resolve addon {}", self.request)?;
        match self.reasons.as_slice() {
            [] => Ok(()),
            [one] => write!(f, ": {one}"),
            many => {
                f.write_str(":")?;
                for reason in many {
                    write!(f, "\n  - {reason}")?;
                }
                Ok(())
            }
        }
    }
}

/// The most dead ends an explanation lists; beyond them the search still runs.
pub const MAX_REASONS: usize = 20;
/// Search steps (versions tried) before giving up on a pathological repository.
const MAX_STEPS: usize = 200_000;

/// Whether `have` (a cluster's Kubernetes or KubeVela version) satisfies `range`, as
/// KubeVela's `checkSemVer` decides: a leading `v` is ignored, and a pre-release or
/// vendor build such as `1.28.3-gke.1200` that a plain range refuses is judged by its
/// release `1.28.3`, except against `>=1.28.3` itself.
pub fn system_version_matches(range: &VersionRange, have: &Version) -> bool {
    if range.matches(have) {
        return true;
    }
    let text = range.as_str();
    if !have.is_prerelease() || text.contains('-') {
        return false;
    }
    let release = Version::new(have.major, have.minor, have.patch, "", "");
    if let Some((_, after)) = text.split_once(">=")
        && Version::parse(after.trim()).is_ok_and(|v| v == release)
    {
        return false;
    }
    range.matches(&release)
}

/// Picks versions for `root` (within `range`, or its newest release) and all its
/// dependencies, transitively, such that every dependency range is met and, when the
/// cluster's versions are given, every `system` requirement. Newer versions are
/// preferred, the requested addon's first. The result starts with the requested addon,
/// then the others in the order they were first required.
pub fn resolve(
    root: &str,
    range: Option<&VersionRange>,
    kube_version: Option<&Version>,
    vela_version: Option<&Version>,
    available: &[AddonVersion],
) -> Result<Vec<Picked>, Unsatisfiable> {
    let mut by_name: BTreeMap<&str, Vec<&AddonVersion>> = BTreeMap::new();
    for addon in available {
        by_name.entry(addon.name.as_str()).or_default().push(addon);
    }
    for versions in by_name.values_mut() {
        // Stable, so of two entries with one version the first in the index wins.
        versions.sort_by(|a, b| b.version.cmp(&a.version));
    }
    let mut search = Search {
        by_name,
        kube_version,
        vela_version,
        reasons: Vec::new(),
        steps: 0,
    };
    let start = State {
        picked: Vec::new(),
        constraints: vec![Constraint {
            name: root,
            range,
            from: None,
        }],
        order: vec![root],
    };
    let request = match range {
        Some(range) => format!("{root} {range}"),
        None => root.to_owned(),
    };
    match search.run(start) {
        Some(picked) => Ok(picked
            .iter()
            .map(|addon| Picked {
                name: addon.name.clone(),
                version: addon.version.clone(),
                required_by: picked
                    .iter()
                    .filter(|p| p.dependencies.iter().any(|d| d.name == addon.name))
                    .map(|p| p.label())
                    .collect(),
            })
            .collect()),
        None => Err(Unsatisfiable {
            request,
            reasons: search.reasons,
        }),
    }
}

#[derive(Clone, Copy)]
struct Constraint<'a> {
    name: &'a str,
    range: Option<&'a VersionRange>,
    /// The addon version that requires it; `None` for the user's request.
    from: Option<&'a AddonVersion>,
}

impl Constraint<'_> {
    fn admits(&self, version: &Version) -> bool {
        match self.range {
            Some(range) => range.matches(version),
            None => !version.is_prerelease(),
        }
    }

    /// `fluxcd ^2.0 required by velaux 1.2.0`
    fn describe(&self) -> String {
        let wanted = match self.range {
            Some(range) => format!("{} {range}", self.name),
            None => self.name.to_owned(),
        };
        match self.from {
            Some(from) => format!("{wanted} required by {}", from.label()),
            None => format!("{wanted} was asked for"),
        }
    }
}

#[derive(Clone)]
struct State<'a> {
    picked: Vec<&'a AddonVersion>,
    constraints: Vec<Constraint<'a>>,
    /// Addon names in the order they were first required.
    order: Vec<&'a str>,
}

impl<'a> State<'a> {
    fn picked(&self, name: &str) -> Option<&'a AddonVersion> {
        self.picked.iter().copied().find(|p| p.name == name)
    }

    /// The dependency path from the picked addon `from` to the addon named `to`, through
    /// picked addons, if there is one.
    fn path(
        &self,
        from: &'a AddonVersion,
        to: &str,
        seen: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        if seen.contains(&from.name.as_str()) {
            return None;
        }
        seen.push(&from.name);
        for dependency in &from.dependencies {
            if dependency.name == to {
                return Some(vec![from.label(), to.to_owned()]);
            }
            if let Some(next) = self.picked(&dependency.name)
                && let Some(mut rest) = self.path(next, to, seen)
            {
                rest.insert(0, from.label());
                return Some(rest);
            }
        }
        None
    }
}

struct Search<'a> {
    by_name: BTreeMap<&'a str, Vec<&'a AddonVersion>>,
    kube_version: Option<&'a Version>,
    vela_version: Option<&'a Version>,
    reasons: Vec<String>,
    steps: usize,
}

impl<'a> Search<'a> {
    fn dead_end(&mut self, reason: String) {
        if self.reasons.len() < MAX_REASONS && !self.reasons.contains(&reason) {
            self.reasons.push(reason);
        }
    }

    fn run(&mut self, state: State<'a>) -> Option<Vec<&'a AddonVersion>> {
        let Some(&name) = state.order.iter().find(|name| state.picked(name).is_none()) else {
            return Some(state.picked);
        };
        for candidate in self.candidates(name, &state) {
            if let Some(reason) = self.system_mismatch(candidate) {
                self.dead_end(reason);
                continue;
            }
            if let Some(reason) = conflict_with_picked(candidate, &state) {
                self.dead_end(reason);
                continue;
            }
            self.steps += 1;
            if self.steps > MAX_STEPS {
                self.dead_end(format!(
                    "gave up after trying {MAX_STEPS} versions; pin versions with narrower ranges"
                ));
                return None;
            }
            let mut next = state.clone();
            next.picked.push(candidate);
            for dependency in &candidate.dependencies {
                next.constraints.push(Constraint {
                    name: &dependency.name,
                    range: dependency.range.as_ref(),
                    from: Some(candidate),
                });
                if !next.order.contains(&dependency.name.as_str()) {
                    next.order.push(&dependency.name);
                }
            }
            if let Some(done) = self.run(next) {
                return Some(done);
            }
            if self.steps > MAX_STEPS {
                return None;
            }
        }
        None
    }

    /// The versions of `name` that meet every range required of it so far, newest first;
    /// when there are none, the reason is recorded.
    fn candidates(&mut self, name: &str, state: &State<'a>) -> Vec<&'a AddonVersion> {
        let constraints: Vec<Constraint<'a>> = state
            .constraints
            .iter()
            .copied()
            .filter(|c| c.name == name)
            .collect();
        let Some(versions) = self.by_name.get(name).cloned() else {
            let first = constraints[0];
            self.dead_end(match first.from {
                Some(from) => format!(
                    "{} needs addon {name}, which is not in the repository",
                    from.label()
                ),
                None => format!("addon {name} is not in the repository"),
            });
            return Vec::new();
        };
        let fitting: Vec<&'a AddonVersion> = versions
            .iter()
            .copied()
            .filter(|v| constraints.iter().all(|c| c.admits(&v.version)))
            .collect();
        if !fitting.is_empty() {
            return fitting;
        }
        let listed = list_versions(&versions);
        for constraint in &constraints {
            if !versions.iter().any(|v| constraint.admits(&v.version)) {
                let only = if constraint.range.is_none() {
                    "only pre-releases"
                } else {
                    "only"
                };
                self.dead_end(format!(
                    "{}, but {only} {listed} exist",
                    constraint.describe()
                ));
                return Vec::new();
            }
        }
        let wanted: Vec<String> = constraints.iter().map(Constraint::describe).collect();
        self.dead_end(format!(
            "no version of {name} meets every requirement: {}; available: {listed}",
            wanted.join(", ")
        ));
        Vec::new()
    }

    fn system_mismatch(&self, candidate: &AddonVersion) -> Option<String> {
        for (system, range, have) in [
            ("kubernetes", &candidate.kubernetes, self.kube_version),
            ("KubeVela", &candidate.vela, self.vela_version),
        ] {
            if let (Some(range), Some(have)) = (range, have)
                && !system_version_matches(range, have)
            {
                return Some(format!(
                    "addon {} needs {system} {range}, have {}",
                    candidate.label(),
                    have.original()
                ));
            }
        }
        None
    }
}

/// Why `candidate` cannot join the picked addons: one of its dependencies was picked at a
/// version outside its range, or it would close a dependency cycle.
fn conflict_with_picked(candidate: &AddonVersion, state: &State<'_>) -> Option<String> {
    for dependency in &candidate.dependencies {
        if dependency.name == candidate.name {
            return Some(format!(
                "dependency cycle: {} -> {}",
                candidate.label(),
                candidate.name
            ));
        }
        let Some(picked) = state.picked(&dependency.name) else {
            continue;
        };
        if let Some(mut path) = state.path(picked, &candidate.name, &mut Vec::new()) {
            path.insert(0, candidate.label());
            return Some(format!("dependency cycle: {}", path.join(" -> ")));
        }
        if let Some(range) = &dependency.range
            && !range.matches(&picked.version)
        {
            return Some(format!(
                "{} needs {} {range}, but {} was picked for {}",
                candidate.label(),
                dependency.name,
                picked.label(),
                requirers(state, &dependency.name)
            ));
        }
    }
    None
}

/// Who required an addon, in words (`velaux 1.2.0 and fluxcd 2.0.0`).
fn requirers(state: &State<'_>, name: &str) -> String {
    let labels: Vec<String> = state
        .constraints
        .iter()
        .filter(|c| c.name == name)
        .map(|c| match c.from {
            Some(from) => from.label(),
            None => "the request".to_owned(),
        })
        .collect();
    labels.join(" and ")
}

fn list_versions(versions: &[&AddonVersion]) -> String {
    let mut texts: Vec<&AddonVersion> = versions.to_vec();
    texts.sort_by(|a, b| a.version.cmp(&b.version));
    let texts: Vec<&str> = texts.iter().map(|v| v.version.original()).collect();
    texts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `name version [dep@range ...] [k8s:range] [vela:range]`
    fn addon(spec: &str) -> AddonVersion {
        let mut words = spec.split_whitespace();
        let name = words.next().unwrap().to_owned();
        let version = Version::parse(words.next().unwrap()).unwrap();
        let mut addon = AddonVersion {
            name,
            version,
            dependencies: Vec::new(),
            vela: None,
            kubernetes: None,
        };
        for word in words {
            if let Some(range) = word.strip_prefix("k8s:") {
                addon.kubernetes = Some(VersionRange::parse(range).unwrap());
            } else if let Some(range) = word.strip_prefix("vela:") {
                addon.vela = Some(VersionRange::parse(range).unwrap());
            } else {
                let (name, range) = word.split_once('@').unwrap_or((word, ""));
                addon.dependencies.push(Requirement {
                    name: name.to_owned(),
                    range: (!range.is_empty()).then(|| VersionRange::parse(range).unwrap()),
                });
            }
        }
        addon
    }

    fn repo(specs: &[&str]) -> Vec<AddonVersion> {
        specs.iter().map(|s| addon(s)).collect()
    }

    fn picks(result: &[Picked]) -> Vec<String> {
        result
            .iter()
            .map(|p| format!("{} {}", p.name, p.version.original()))
            .collect()
    }

    fn resolve_simple(
        available: &[AddonVersion],
        root: &str,
    ) -> Result<Vec<String>, Unsatisfiable> {
        resolve(root, None, None, None, available).map(|r| picks(&r))
    }

    #[test]
    fn picks_newest_versions() {
        let available = repo(&[
            "a 1.0.0 b@^1",
            "a 1.1.0 b@^1",
            "b 1.0.0",
            "b 1.5.0",
            "b 2.0.0",
        ]);
        assert_eq!(
            resolve_simple(&available, "a").unwrap(),
            ["a 1.1.0", "b 1.5.0"]
        );
        let range = VersionRange::parse("~1.0").unwrap();
        let result = resolve("a", Some(&range), None, None, &available).unwrap();
        assert_eq!(picks(&result), ["a 1.0.0", "b 1.5.0"]);
        assert_eq!(result[1].required_by, ["a 1.0.0"]);
    }

    #[test]
    fn diamond_meets_both_sides() {
        // top needs left and right; both need base, with ranges whose overlap is 1.2.x.
        let available = repo(&[
            "top 1.0.0 left@^1 right@^1",
            "left 1.0.0 base@>=1.1",
            "right 1.0.0 base@<1.3",
            "base 1.1.0",
            "base 1.2.5",
            "base 1.3.0",
        ]);
        let result = resolve("top", None, None, None, &available).unwrap();
        assert_eq!(
            picks(&result),
            ["top 1.0.0", "left 1.0.0", "right 1.0.0", "base 1.2.5"]
        );
        assert_eq!(result[3].required_by, ["left 1.0.0", "right 1.0.0"]);
    }

    #[test]
    fn diamond_backtracks_to_an_older_side() {
        // right 2.0.0 wants base 2, left only works with base 1: right falls back to 1.0.0.
        let available = repo(&[
            "top 1.0.0 left right",
            "left 1.0.0 base@^1",
            "right 1.0.0 base@^1",
            "right 2.0.0 base@^2",
            "base 1.0.0",
            "base 2.0.0",
        ]);
        assert_eq!(
            resolve_simple(&available, "top").unwrap(),
            ["top 1.0.0", "left 1.0.0", "right 1.0.0", "base 1.0.0"]
        );
    }

    #[test]
    fn already_picked_dependency_is_checked() {
        // top picks base first (listed first), then mid needs a base it cannot have.
        let available = repo(&[
            "top 1.0.0 base@^1 mid",
            "mid 1.0.0 base@^2",
            "base 1.0.0",
            "base 2.0.0",
        ]);
        let err = resolve("top", None, None, None, &available).unwrap_err();
        assert_eq!(
            err.reasons,
            ["mid 1.0.0 needs base ^2, but base 1.0.0 was picked for top 1.0.0"]
        );
        assert_eq!(
            err.to_string(),
            "cannot resolve addon top: mid 1.0.0 needs base ^2, but base 1.0.0 was picked for top 1.0.0"
        );
    }

    #[test]
    fn cycle_is_refused_and_shown() {
        let available = repo(&["a 1.0.0 b", "b 1.0.0 c", "c 1.0.0 a@^1"]);
        let err = resolve_simple(&available, "a").unwrap_err();
        assert_eq!(
            err.reasons,
            ["dependency cycle: c 1.0.0 -> a 1.0.0 -> b 1.0.0 -> c"]
        );
        let itself = repo(&["a 1.0.0 a"]);
        assert_eq!(
            resolve_simple(&itself, "a").unwrap_err().reasons,
            ["dependency cycle: a 1.0.0 -> a"]
        );
    }

    #[test]
    fn cycle_in_newest_version_only_falls_back() {
        let available = repo(&["a 1.0.0 b", "b 1.0.0", "b 2.0.0 a"]);
        assert_eq!(
            resolve_simple(&available, "a").unwrap(),
            ["a 1.0.0", "b 1.0.0"]
        );
    }

    #[test]
    fn unsatisfiable_range_is_explained() {
        let available = repo(&["velaux 1.2.0 fluxcd@^2.0", "fluxcd 1.0.0", "fluxcd 1.1.0"]);
        let err = resolve_simple(&available, "velaux").unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot resolve addon velaux: fluxcd ^2.0 required by velaux 1.2.0, but only 1.0.0, 1.1.0 exist"
        );
    }

    #[test]
    fn system_requirements_are_explained() {
        let available = repo(&["x 1.2.0 k8s:>=1.30", "x 1.1.0 vela:>=1.9"]);
        let kube = Version::parse("v1.28.0").unwrap();
        let vela = Version::parse("1.8.2").unwrap();
        let err = resolve("x", None, Some(&kube), Some(&vela), &available).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot resolve addon x:\n  - addon x 1.2.0 needs kubernetes >=1.30, have v1.28.0\n  - addon x 1.1.0 needs KubeVela >=1.9, have 1.8.2"
        );
        // Without the cluster's versions nothing is checked.
        assert_eq!(resolve_simple(&available, "x").unwrap(), ["x 1.2.0"]);
        // A vendor build of a new enough Kubernetes passes, as in KubeVela.
        let gke = Version::parse("v1.30.2-gke.1200").unwrap();
        let result = resolve("x", None, Some(&gke), None, &available).unwrap();
        assert_eq!(picks(&result), ["x 1.2.0"]);
    }

    #[test]
    fn conflicting_ranges_are_listed() {
        let available = repo(&[
            "top 1.0.0 l r",
            "l 1.0.0 base@^1",
            "r 1.0.0 base@^2",
            "base 1.0.0",
            "base 2.0.0",
        ]);
        let err = resolve_simple(&available, "top").unwrap_err();
        assert_eq!(
            err.reasons,
            [
                "no version of base meets every requirement: base ^1 required by l 1.0.0, base ^2 required by r 1.0.0; available: 1.0.0, 2.0.0"
            ]
        );
    }

    #[test]
    fn missing_addons_and_prereleases() {
        let available = repo(&["a 1.0.0 ghost", "b 1.0.0-rc.1"]);
        assert_eq!(
            resolve_simple(&available, "a").unwrap_err().reasons,
            ["a 1.0.0 needs addon ghost, which is not in the repository"]
        );
        assert_eq!(
            resolve_simple(&available, "nope").unwrap_err().to_string(),
            "cannot resolve addon nope: addon nope is not in the repository"
        );
        assert_eq!(
            resolve_simple(&available, "b").unwrap_err().reasons,
            ["b was asked for, but only pre-releases 1.0.0-rc.1 exist"]
        );
        let range = VersionRange::parse(">=1.0.0-0").unwrap();
        assert!(resolve("b", Some(&range), None, None, &available).is_ok());
    }

    #[test]
    fn reads_index_annotations() {
        let mut annotations = BTreeMap::new();
        annotations.insert(SYSTEM_KUBERNETES.to_owned(), ">=1.20".to_owned());
        annotations.insert(
            ADDON_DEPENDENCIES.to_owned(),
            r#"[{"name":"fluxcd","version":"^1"}]"#.to_owned(),
        );
        let addon = AddonVersion::from_annotations("velaux", "1.0.0", &annotations).unwrap();
        assert_eq!(addon.dependencies[0].name, "fluxcd");
        assert_eq!(addon.kubernetes.unwrap().as_str(), ">=1.20");
        annotations.insert(SYSTEM_VELA.to_owned(), "nonsense!".to_owned());
        let err = AddonVersion::from_annotations("velaux", "1.0.0", &annotations).unwrap_err();
        assert!(
            err.0
                .starts_with("velaux 1.0.0: annotation `system.vela`: invalid version range"),
            "{err}"
        );
    }
}
