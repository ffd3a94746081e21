//! `dependency list`: each declared dependency and the state of its chart in `charts/`,
//! judged as Helm judges it, without touching the network.

use std::path::{Path, PathBuf};

use chartkit_chart::{Chart, Dependency, LoadOptions};
use chartkit_version::{Version, VersionRange};

/// One row of the table: a declared dependency and its status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub name: String,
    pub version: String,
    pub repository: String,
    pub status: Status,
}

/// Helm's words for a dependency's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// One archive `charts/NAME-*.tgz` holds a chart of that name in the range.
    Ok,
    /// No archive, and no unpacked chart of that name.
    Missing,
    /// The chart found is outside the declared range.
    WrongVersion,
    /// The archive's chart has another name.
    Misnamed,
    /// The chart is a directory under `charts/` (or an archive not named by version).
    Unpacked,
    /// The range or the chart's version does not parse.
    InvalidVersion,
    /// The archive does not load.
    Corrupt,
    /// Several `NAME-VERSION.tgz` archives.
    TooManyMatches,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Missing => "missing",
            Status::WrongVersion => "wrong version",
            Status::Misnamed => "misnamed",
            Status::Unpacked => "unpacked",
            Status::InvalidVersion => "invalid version",
            Status::Corrupt => "corrupt",
            Status::TooManyMatches => "too many matches",
        }
    }
}

/// What `dependency list` reports about a chart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listing {
    /// The chart declares no dependencies (Helm: `WARNING: no dependencies at DIR/charts`).
    NoDependencies { charts_dir: PathBuf },
    Rows {
        rows: Vec<Row>,
        /// Entries of `charts/` that are not charts, or charts no dependency names.
        warnings: Vec<String>,
    },
}

/// Lists the dependencies of the chart at `path` (a directory or an archive), already
/// loaded as `chart`. `declared` says whether the chart has a `dependencies` list at all
/// (see [`crate::declares_dependencies`]).
pub fn list(path: &Path, chart: &Chart, declared: bool, options: &LoadOptions) -> Listing {
    let charts_dir = path.join("charts");
    if !declared {
        return Listing::NoDependencies { charts_dir };
    }
    let rows = chart
        .metadata
        .dependencies
        .iter()
        .flatten()
        .map(|d| Row {
            name: d.name.clone(),
            version: d.version.clone(),
            repository: d.repository.clone(),
            status: status(&charts_dir, d, chart, options),
        })
        .collect();
    Listing::Rows {
        rows,
        warnings: extra_charts(&charts_dir, chart, options),
    }
}

/// Helm's `CheckDependencies`: the declared dependencies whose chart is not among the
/// loaded subcharts (by name), which `--dependency-update` then fetches.
pub fn missing(chart: &Chart) -> Vec<String> {
    chart
        .metadata
        .dependencies
        .iter()
        .flatten()
        .filter(|d| !chart.dependencies.iter().any(|c| c.name() == d.name))
        .map(|d| d.name.clone())
        .collect()
}

/// Helm's `dependencyStatus`: archives named `NAME-*.tgz` first, then unpacked subcharts.
fn status(charts_dir: &Path, d: &Dependency, parent: &Chart, options: &LoadOptions) -> Status {
    let prefix = format!("{}-", d.name);
    let archives: Vec<PathBuf> = sorted_entries(charts_dir)
        .into_iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".tgz"))
        })
        .collect();
    let archive = match archives.len() {
        0 => None,
        1 => Some(&archives[0]),
        _ => {
            // Several: only those whose name ends in a strict version count.
            let versioned: Vec<&PathBuf> = archives
                .iter()
                .filter(|p| {
                    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    let version = &name[prefix.len()..name.len() - ".tgz".len()];
                    Version::parse_strict(version).is_ok()
                })
                .collect();
            match versioned.len() {
                1 => Some(versioned[0]),
                0 => None,
                _ => return Status::TooManyMatches,
            }
        }
    };
    if let Some(archive) = archive {
        return match chartkit_chart::load(archive, options) {
            Err(_) => Status::Corrupt,
            Ok(c) if c.name() != d.name => Status::Misnamed,
            Ok(c) => version_status(&c.metadata.version, &d.version).unwrap_or(Status::Ok),
        };
    }
    match parent
        .dependencies
        .iter()
        .rev()
        .find(|c| c.name() == d.name)
    {
        None => Status::Missing,
        Some(c) => version_status(&c.metadata.version, &d.version).unwrap_or(Status::Unpacked),
    }
}

/// `None` when the chart's version is the declared one or within its range.
fn version_status(found: &str, declared: &str) -> Option<Status> {
    if found == declared {
        return None;
    }
    let Ok(range) = VersionRange::parse(declared) else {
        return Some(Status::InvalidVersion);
    };
    let Ok(version) = Version::parse(found) else {
        return Some(Status::InvalidVersion);
    };
    (!range.matches(&version)).then_some(Status::WrongVersion)
}

/// Helm's `printMissing`: every directory or `.tgz` in `charts/` that is not a chart, or is
/// a chart no dependency names.
fn extra_charts(charts_dir: &Path, parent: &Chart, options: &LoadOptions) -> Vec<String> {
    let mut warnings = Vec::new();
    for path in sorted_entries(charts_dir) {
        let is_dir = path.is_dir();
        if !is_dir && path.extension().is_none_or(|e| e != "tgz") {
            continue;
        }
        let shown = path.display();
        match chartkit_chart::load(&path, options) {
            Err(_) => warnings.push(format!("WARNING: \"{shown}\" is not a chart.")),
            Ok(c) => {
                let named = parent
                    .metadata
                    .dependencies
                    .iter()
                    .flatten()
                    .any(|d| d.name == c.name());
                if !named {
                    warnings.push(format!("WARNING: \"{shown}\" is not in Chart.yaml."));
                }
            }
        }
    }
    warnings
}

/// The entries of a directory in name order, as Go's `filepath.Glob` returns them; none
/// when it cannot be read.
fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut entries: Vec<PathBuf> = read.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn chart_yaml(name: &str, version: &str) -> String {
        format!("apiVersion: v2\nname: {name}\nversion: {version}\n")
    }

    fn package(src: &Path, into: &Path) {
        chartkit_chart::package(
            src,
            &chartkit_chart::PackageOptions {
                destination: into.to_path_buf(),
                ..Default::default()
            },
        )
        .unwrap();
    }

    #[test]
    fn statuses_as_helm_reports_them() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("web");
        write(
            &root,
            "Chart.yaml",
            "apiVersion: v2\nname: web\nversion: 1.0.0\ndependencies:\n- {name: ok, version: ^1, repository: https://r}\n- {name: wrong, version: ^2, repository: https://r}\n- {name: gone, version: ^1, repository: https://r}\n- {name: dir, version: ~1.0, repository: ''}\n- {name: bad, version: 'not a range', repository: ''}\n- {name: other, version: ^1, repository: https://r}\n",
        );
        let src = temp.path().join("src");
        for (name, version) in [("ok", "1.2.0"), ("wrong", "1.0.0"), ("renamed", "1.0.0")] {
            write(&src.join(name), "Chart.yaml", &chart_yaml(name, version));
            package(&src.join(name), &root.join("charts"));
        }
        std::fs::rename(
            root.join("charts/renamed-1.0.0.tgz"),
            root.join("charts/other-1.0.0.tgz"),
        )
        .unwrap();
        write(&root, "charts/dir/Chart.yaml", &chart_yaml("dir", "1.0.3"));
        write(&root, "charts/bad/Chart.yaml", &chart_yaml("bad", "1.0.0"));
        write(
            &root,
            "charts/stray/Chart.yaml",
            &chart_yaml("stray", "0.1.0"),
        );
        let options = LoadOptions::default();
        let chart = chartkit_chart::load(&root, &options).unwrap();
        let Listing::Rows { rows, warnings } = list(&root, &chart, true, &options) else {
            panic!("rows expected");
        };
        let statuses: Vec<_> = rows.iter().map(|r| (r.name.as_str(), r.status)).collect();
        assert_eq!(
            statuses,
            [
                ("ok", Status::Ok),
                ("wrong", Status::WrongVersion),
                ("gone", Status::Missing),
                ("dir", Status::Unpacked),
                ("bad", Status::InvalidVersion),
                ("other", Status::Misnamed),
            ]
        );
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].ends_with("charts/other-1.0.0.tgz\" is not in Chart.yaml."));
        assert!(warnings[1].ends_with("charts/stray\" is not in Chart.yaml."));
    }

    #[test]
    fn no_dependencies() {
        let chart = Chart::default();
        assert_eq!(
            list(Path::new("c"), &chart, false, &LoadOptions::default()),
            Listing::NoDependencies {
                charts_dir: PathBuf::from("c/charts")
            }
        );
    }
}
