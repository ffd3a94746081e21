//! Choosing a version for each dependency, by Helm's rules (`resolveRepoNames`,
//! `ensureMissingRepos` and `Resolver.Resolve`). Pure: indexes are handed in by the
//! caller, which decides whether they come from the network or the cache.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chartkit_chart::Dependency;
use chartkit_index::ChartVersion;
use chartkit_version::{Version, VersionRange};

use crate::reference::{Repository, is_request_uri, same_url};

/// A repository from the user's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Configured {
    pub name: String,
    pub url: String,
}

/// Where a dependency's chart comes from, once the repository field is understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Already in `charts/NAME`.
    Vendored,
    /// A chart directory, packaged on the fly.
    Local(PathBuf),
    /// A configured repository.
    Configured(Configured),
    /// A repository URL the user has not configured (Helm fetches its index anyway).
    Unconfigured(String),
    /// An OCI registry path (`oci://HOST/PATH`; the chart is `PATH/NAME` in it).
    Oci(String),
}

impl Source {
    /// The repository URL whose index is needed, if any.
    pub fn index_url(&self) -> Option<&str> {
        match self {
            Source::Configured(c) => Some(&c.url),
            Source::Unconfigured(url) => Some(url),
            Source::Vendored | Source::Local(_) | Source::Oci(_) => None,
        }
    }
}

/// Why dependencies could not be resolved. Messages are Helm's where Helm has one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error("directory {} not found", .0.display())]
    LocalPathMissing(PathBuf),
    #[error("could not retrieve list of tags for repository {repository}: {reason}")]
    OciTags { repository: String, reason: String },
    #[error("no repository definition for {}. Please add them via 'chartkit repo add'{}", .missing.join(", "), if *.bare_name { "\nNote that repositories must be URLs or aliases. For example, to refer to the \"example\"\nrepository, use \"https://charts.example.com/\" or \"@example\" instead of\n\"example\". Don't forget to add the repo, too ('chartkit repo add')." } else { "" })]
    NoRepositoryDefinition {
        missing: Vec<String>,
        bare_name: bool,
    },
    #[error("dependency {name:?} has an invalid version/constraint format: {reason}")]
    BadConstraint { name: String, reason: String },
    #[error("{name} chart not found in repo {repository}")]
    ChartNotInRepo { name: String, repository: String },
    #[error("cannot load the chart {}: {reason}", .path.display())]
    LocalChart { path: PathBuf, reason: String },
    #[error(
        "can't get a valid version for {} subchart(s): {}. Make sure a matching chart version exists in the repo, or change the version constraint in Chart.yaml",
        .0.len(),
        .0.join(", ")
    )]
    NoValidVersion(Vec<String>),
}

/// The path a `file://` repository (or `charts/NAME`) names, relative to the chart.
pub fn local_path(chart_dir: &Path, path: &str) -> Result<PathBuf, ResolveError> {
    let full = if path.starts_with('/') {
        PathBuf::from(path)
    } else {
        chart_dir.join(path)
    };
    if !full.exists() {
        return Err(ResolveError::LocalPathMissing(full));
    }
    Ok(full)
}

/// Helm's `resolveRepoNames`: where each dependency comes from, by its position in
/// `dependencies`. `@NAME`/`alias:NAME` repositories are replaced by the configured URL in
/// `dependencies`, as Helm replaces them before computing the lock's digest.
pub fn sources(
    chart_dir: &Path,
    dependencies: &mut [Dependency],
    configured: &[Configured],
) -> Result<Vec<Source>, ResolveError> {
    let mut out = Vec::with_capacity(dependencies.len());
    let mut missing = Vec::new();
    for d in dependencies.iter_mut() {
        let source = match Repository::of(&d.repository) {
            Repository::Vendored => Source::Vendored,
            Repository::Local(path) => Source::Local(local_path(chart_dir, path)?),
            Repository::Oci(repository) => Source::Oci(repository.to_owned()),
            Repository::Named(_) | Repository::Url(_) => {
                let found = configured
                    .iter()
                    .find(|c| match Repository::of(&d.repository) {
                        Repository::Named(name) => name == c.name,
                        _ => same_url(&c.url, &d.repository),
                    });
                match found {
                    Some(c) => {
                        if matches!(Repository::of(&d.repository), Repository::Named(_)) {
                            d.repository = c.url.clone();
                        }
                        Source::Configured(c.clone())
                    }
                    None if matches!(Repository::of(&d.repository), Repository::Url(_))
                        && is_request_uri(&d.repository) =>
                    {
                        Source::Unconfigured(d.repository.clone())
                    }
                    None => {
                        missing.push(d.repository.clone());
                        Source::Vendored
                    }
                }
            }
        };
        out.push(source);
    }
    if !missing.is_empty() {
        let bare_name = missing
            .iter()
            .any(|r| !r.contains("//") && !r.starts_with('@') && !r.starts_with("alias:"));
        return Err(ResolveError::NoRepositoryDefinition { missing, bare_name });
    }
    Ok(out)
}

/// Helm's `Resolver.Resolve`: the locked form of each dependency. `versions_of(url, name)`
/// gives a chart's versions in a repository's index (configured or not), newest first;
/// `None` when the index has no such chart. `tags_of(oci_repository, name)` gives the
/// versions an OCI registry's tags name, newest first.
pub fn resolve(
    chart_dir: &Path,
    dependencies: &[Dependency],
    sources: &[Source],
    versions_of: impl Fn(&str, &str) -> Option<Vec<ChartVersion>>,
    tags_of: impl Fn(&str, &str) -> Result<Vec<String>, String>,
) -> Result<Vec<Dependency>, ResolveError> {
    let mut locked = Vec::with_capacity(dependencies.len());
    let mut missing = Vec::new();
    let mut note_missing = |d: &Dependency| {
        missing.push(format!(
            "{:?} (repository {:?}, version {:?})",
            d.name, d.repository, d.version
        ))
    };
    for (d, source) in dependencies.iter().zip(sources) {
        let range = VersionRange::parse(&d.version).map_err(|e| ResolveError::BadConstraint {
            name: d.name.clone(),
            reason: e.to_string(),
        })?;
        let lock = |version: &str| Dependency {
            name: d.name.clone(),
            repository: d.repository.clone(),
            version: version.to_owned(),
            ..Dependency::default()
        };
        match source {
            Source::Vendored => {
                local_path(chart_dir, &format!("charts/{}", d.name))?;
                locked.push(lock(&d.version));
            }
            Source::Local(path) => {
                let chart = chartkit_chart::load_dir(path, &Default::default()).map_err(|e| {
                    ResolveError::LocalChart {
                        path: path.clone(),
                        reason: e.to_string(),
                    }
                })?;
                match Version::parse(&chart.metadata.version) {
                    Ok(v) if range.matches(&v) => locked.push(lock(&chart.metadata.version)),
                    _ => note_missing(d),
                }
            }
            // As helm: an exact version is locked as it is; a range takes the newest tag
            // in it, and when none is, the range itself is locked (helm's resolver counts
            // an OCI dependency as found), so the download names what is missing.
            Source::Oci(repository) => {
                if Version::parse(&d.version).is_ok() {
                    locked.push(lock(&d.version));
                    continue;
                }
                let tags =
                    tags_of(repository, &d.name).map_err(|reason| ResolveError::OciTags {
                        repository: d.repository.clone(),
                        reason,
                    })?;
                let chosen = tags
                    .iter()
                    .find(|t| Version::parse(t).is_ok_and(|v| range.matches(&v)));
                locked.push(lock(chosen.unwrap_or(&d.version)));
            }
            Source::Configured(_) | Source::Unconfigured(_) => {
                let url = source.index_url().unwrap_or_default();
                let versions =
                    versions_of(url, &d.name).ok_or_else(|| ResolveError::ChartNotInRepo {
                        name: d.name.clone(),
                        repository: d.repository.clone(),
                    })?;
                match newest_in_range(&versions, &range) {
                    Some(v) => locked.push(lock(v.original())),
                    None => note_missing(d),
                }
            }
        }
    }
    if !missing.is_empty() {
        return Err(ResolveError::NoValidVersion(missing));
    }
    Ok(locked)
}

/// The first version, in the index's newest-first order, that has a download URL and
/// satisfies the range; Helm skips entries without URLs as not legitimate.
fn newest_in_range(versions: &[ChartVersion], range: &VersionRange) -> Option<Version> {
    versions
        .iter()
        .filter(|v| v.urls.as_ref().is_some_and(|u| !u.is_empty()))
        .filter_map(|v| Version::parse(v.version()).ok())
        .find(|v| range.matches(v))
}

/// Helm's `findVersionedEntry`: the first entry with a URL whose version equals the
/// locked one (as versions, or as text when the locked one does not parse).
pub fn locked_entry<'v>(versions: &'v [ChartVersion], version: &str) -> Option<&'v ChartVersion> {
    let wanted = Version::parse(version).ok();
    versions.iter().find(|v| {
        v.urls.as_ref().is_some_and(|u| !u.is_empty())
            && match &wanted {
                None => version.is_empty() || v.version() == version,
                Some(w) => Version::parse(v.version()).is_ok_and(|x| x == *w),
            }
    })
}

/// Per configured repository name, or URL of one that is not configured: the sources
/// that need its index, so each index is loaded once.
pub fn needed_indexes(sources: &[Source]) -> BTreeMap<String, Source> {
    let mut out = BTreeMap::new();
    for s in sources {
        if let Some(url) = s.index_url() {
            out.entry(url.to_owned()).or_insert_with(|| s.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> chartkit_index::IndexFile {
        let yaml = "apiVersion: v1\nentries:\n  alpha:\n  - {apiVersion: v2, name: alpha, version: 2.0.0-rc.1, urls: [alpha-2.0.0-rc.1.tgz]}\n  - {apiVersion: v2, name: alpha, version: 1.3.0, urls: []}\n  - {apiVersion: v2, name: alpha, version: 1.2.0, urls: [alpha-1.2.0.tgz]}\n  - {apiVersion: v2, name: alpha, version: 1.0.0, urls: [alpha-1.0.0.tgz]}\n";
        chartkit_index::parse_index(yaml.as_bytes(), "index.yaml")
            .unwrap()
            .index
    }

    fn dep(name: &str, version: &str, repository: &str) -> Dependency {
        Dependency {
            name: name.into(),
            version: version.into(),
            repository: repository.into(),
            ..Default::default()
        }
    }

    fn configured() -> Vec<Configured> {
        vec![Configured {
            name: "local".into(),
            url: "http://127.0.0.1:1".into(),
        }]
    }

    #[test]
    fn picks_the_newest_entry_with_urls_in_range() {
        let index = index();
        let mut deps = vec![
            dep("alpha", "^1.0", "@local"),
            dep("alpha", "~1.0.0", "http://127.0.0.1:1/"),
            dep("alpha", ">=1.0.0-0", "https://elsewhere.example/charts"),
        ];
        let sources = sources(Path::new("."), &mut deps, &configured()).unwrap();
        // `@local` became the URL, as Helm rewrites it before hashing.
        assert_eq!(deps[0].repository, "http://127.0.0.1:1");
        assert_eq!(
            sources[2],
            Source::Unconfigured("https://elsewhere.example/charts".into())
        );
        let locked = resolve(
            Path::new("."),
            &deps,
            &sources,
            |_, name| index.entries.get(name).cloned(),
            |_, _| Err(String::new()),
        )
        .unwrap();
        let versions: Vec<_> = locked.iter().map(|d| d.version.as_str()).collect();
        // 1.3.0 has no URLs, so `^1.0` skips it; a pre-release needs a range that admits one.
        assert_eq!(versions, ["1.2.0", "1.0.0", "2.0.0-rc.1"]);
        assert!(
            locked
                .iter()
                .all(|d| d.condition.is_empty() && d.alias.is_empty())
        );
    }

    #[test]
    fn unknown_repositories_are_explained() {
        let mut deps = vec![dep("a", "1", "stable"), dep("b", "1", "@nowhere")];
        let error = sources(Path::new("."), &mut deps, &configured()).unwrap_err();
        let text = error.to_string();
        assert!(
            text.starts_with("no repository definition for stable, @nowhere."),
            "{text}"
        );
        assert!(text.contains("use \"https://charts.example.com/\" or \"@example\""));
    }

    #[test]
    fn oci_dependencies_lock_an_exact_version_or_the_newest_tag_in_range() {
        let mut deps = vec![
            dep("a", "1.0.0", "oci://registry.example/charts"),
            dep("b", "~1.1", "oci://registry.example/charts"),
            dep("c", "^9", "oci://registry.example/charts"),
        ];
        let sources = sources(Path::new("."), &mut deps, &[]).unwrap();
        assert_eq!(
            sources[0],
            Source::Oci("oci://registry.example/charts".into())
        );
        let tags = |repository: &str, name: &str| {
            assert_eq!(
                (repository, name == "a"),
                ("oci://registry.example/charts", false)
            );
            Ok(vec![
                "1.2.0".to_owned(),
                "1.1.5".to_owned(),
                "1.1.0".to_owned(),
            ])
        };
        let locked = resolve(Path::new("."), &deps, &sources, |_, _| None, tags).unwrap();
        let versions: Vec<_> = locked.iter().map(|d| d.version.as_str()).collect();
        assert_eq!(versions, ["1.0.0", "1.1.5", "^9"]);
        let error = resolve(
            Path::new("."),
            &deps[1..2],
            &sources[1..2],
            |_, _| None,
            |_, _| Err("refused".to_owned()),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "could not retrieve list of tags for repository oci://registry.example/charts: refused"
        );
    }

    #[test]
    fn nothing_in_range_is_helms_error() {
        let index = index();
        let deps = vec![dep("alpha", "^3", "http://127.0.0.1:1")];
        let sources = vec![Source::Configured(configured()[0].clone())];
        let error = resolve(
            Path::new("."),
            &deps,
            &sources,
            |_, name| index.entries.get(name).cloned(),
            |_, _| Err(String::new()),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "can't get a valid version for 1 subchart(s): \"alpha\" (repository \"http://127.0.0.1:1\", version \"^3\"). Make sure a matching chart version exists in the repo, or change the version constraint in Chart.yaml"
        );
        let deps = vec![dep("gamma", "^3", "http://127.0.0.1:1")];
        let error = resolve(
            Path::new("."),
            &deps,
            &sources,
            |_, name| index.entries.get(name).cloned(),
            |_, _| Err(String::new()),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "gamma chart not found in repo http://127.0.0.1:1"
        );
    }

    #[test]
    fn locked_entries_match_by_version() {
        let index = index();
        assert_eq!(
            locked_entry(&index.entries["alpha"], "1.2")
                .unwrap()
                .version(),
            "1.2.0"
        );
        assert!(locked_entry(&index.entries["alpha"], "1.3.0").is_none());
    }

    #[test]
    fn local_charts_are_checked_against_the_range() {
        let temp = tempfile::tempdir().unwrap();
        let sub = temp.path().join("sub");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(
            sub.join("Chart.yaml"),
            "apiVersion: v2\nname: sub\nversion: 0.3.0\n",
        )
        .unwrap();
        let mut deps = vec![dep("sub", "~0.3", "file://sub")];
        let sources = sources(temp.path(), &mut deps, &[]).unwrap();
        let locked = resolve(
            temp.path(),
            &deps,
            &sources,
            |_, _| None,
            |_, _| Err(String::new()),
        )
        .unwrap();
        assert_eq!(locked[0].version, "0.3.0");
        assert_eq!(locked[0].repository, "file://sub");
        let mut deps = vec![dep("sub", "1", "file://missing")];
        assert!(matches!(
            super::sources(temp.path(), &mut deps, &[]),
            Err(ResolveError::LocalPathMissing(_))
        ));
    }
}
