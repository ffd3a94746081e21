//! Loading charts from directories, archives and in-memory files, step for step as Helm's
//! loader does, so later stages see the same chart Helm would.

use std::collections::BTreeMap;
use std::path::Path;

use std::sync::Arc;

use crate::archive::{self, EntryRules, Limits, ReadOptions, Retain, RetainBudget};
use crate::chart::{CHART_FILE, Chart, SCHEMA_FILE, VALUES_FILE};
use crate::error::LoadError;
use crate::file::File;
use crate::helmignore::{HELMIGNORE, Rules};
use crate::lock::Lock;
use crate::metadata::{ApiVersion, Metadata, MetadataYamlError};

/// Options for loading charts.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    pub limits: Limits,
    /// Which archive entries are accepted (strict by default).
    pub rules: EntryRules,
    /// Which files' contents are kept from archives (all by default).
    pub retain: Retain,
    /// With [`Retain::LoaderFiles`], a bound on kept bytes shared with other loads.
    pub budget: Option<Arc<RetainBudget>>,
    /// Refuse a chart whose apiVersion Helm 4's loader does not know (anything but v1,
    /// v2, v3 or none), before any other check, as `helm template` and `helm package` do.
    /// Subcharts are not checked, and `helm show`, `helm lint` and `helm repo index` read
    /// charts of any apiVersion.
    pub check_api_version: bool,
}

impl LoadOptions {
    /// The options that judge a package as `helm repo index` does and keep only what an
    /// index entry needs: Helm's archive rules, and only the files Helm's loader reads.
    pub fn for_index(limits: Limits) -> LoadOptions {
        LoadOptions {
            limits,
            rules: EntryRules::Helm,
            retain: Retain::LoaderFiles,
            budget: None,
            check_api_version: false,
        }
    }

    fn read_options(&self) -> ReadOptions {
        ReadOptions {
            limits: self.limits,
            rules: self.rules,
            retain: self.retain,
            budget: self.budget.clone(),
        }
    }
}

/// Loads a chart from a directory or an archive file.
pub fn load(path: &Path, options: &LoadOptions) -> Result<Chart, LoadError> {
    let io = |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let metadata = std::fs::metadata(path).map_err(io)?;
    if metadata.is_dir() {
        return load_dir(path, options);
    }
    // Compressed data is never much larger than what it expands to, so a file beyond the
    // chart limit cannot hold a chart within it: refused before it is read.
    if metadata.len() > options.limits.max_total_size.saturating_add(1 << 20) {
        return Err(LoadError::TooLarge {
            origin: path.display().to_string(),
            limit: options.limits.max_total_size,
        });
    }
    let bytes = std::fs::read(path).map_err(io)?;
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        let name = path.to_string_lossy();
        let reason = if name.ends_with(".yaml") || name.ends_with(".yml") {
            "looks like a YAML file, but a chart directory or .tgz archive was expected".to_owned()
        } else {
            "is not a chart: expected a chart directory or a gzipped .tgz archive".to_owned()
        };
        return Err(LoadError::NotAChart {
            path: path.to_path_buf(),
            reason,
        });
    }
    load_archive(&bytes, &path.display().to_string(), options)
}

/// Loads a chart from archive bytes; `origin` names the archive in errors.
pub fn load_archive(bytes: &[u8], origin: &str, options: &LoadOptions) -> Result<Chart, LoadError> {
    let files = archive::read_archive(bytes, &options.read_options()).map_err(|source| {
        LoadError::Archive {
            origin: origin.to_owned(),
            source,
        }
    })?;
    load_files(files, origin, options)
}

/// Loads a chart from a directory, skipping what `.helmignore` ignores.
pub fn load_dir(dir: &Path, options: &LoadOptions) -> Result<Chart, LoadError> {
    let origin = dir.display().to_string();
    let ignore_path = dir.join(HELMIGNORE);
    let rules = match std::fs::read_to_string(&ignore_path) {
        Ok(text) => Rules::parse(&text).map_err(|source| LoadError::HelmIgnore {
            origin: origin.clone(),
            source,
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Rules::default(),
        Err(source) => {
            return Err(LoadError::Io {
                path: ignore_path,
                source,
            });
        }
    }
    .with_defaults();

    let limits = &options.limits;
    let mut files = Vec::new();
    let mut notices = Vec::new();
    let mut total: u64 = 0;
    let absolute_dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut walker = walkdir::WalkDir::new(dir)
        .follow_links(true)
        .sort_by_file_name()
        .min_depth(1)
        .into_iter();
    while let Some(entry) = walker.next() {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(dir).to_path_buf();
            LoadError::Io {
                path,
                source: e
                    .into_io_error()
                    .unwrap_or_else(|| std::io::Error::other("symbolic link loop")),
            }
        })?;
        let relative = entry.path().strip_prefix(dir).unwrap_or(entry.path());
        let name = relative.to_string_lossy().replace('\\', "/");
        let file_type = entry.file_type();
        // Helm's walk logs every link it meets, ignored or not, before its rules run.
        if entry.path_is_symlink() {
            notices.push(symlink_notice(&absolute_dir, &name, entry.path()));
        }
        if file_type.is_dir() {
            if rules.ignores(&name, true) {
                walker.skip_current_dir();
            }
            continue;
        }
        if rules.ignores(&name, false) {
            continue;
        }
        if !file_type.is_file() {
            return Err(LoadError::IrregularFile(entry.path().to_path_buf()));
        }
        let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
        if size > limits.max_file_size {
            return Err(LoadError::FileTooLarge {
                path: entry.path().to_path_buf(),
                limit: limits.max_file_size,
            });
        }
        total += size;
        if total > limits.max_total_size {
            return Err(LoadError::TooLarge {
                origin,
                limit: limits.max_total_size,
            });
        }
        let mut data = std::fs::read(entry.path()).map_err(|source| LoadError::Io {
            path: entry.path().to_path_buf(),
            source,
        })?;
        if data.starts_with(b"\xEF\xBB\xBF") {
            data.drain(..3);
        }
        files.push(File {
            name,
            data: data.into(),
        });
    }
    addon_chart_yaml(&mut files, &origin)?;
    let mut chart = load_files(files, &origin, options)?;
    chart.warnings.extend(notices);
    Ok(chart)
}

/// A KubeVela addon directory (metadata.yaml, no Chart.yaml) is a chart whose Chart.yaml
/// is made from its metadata, so that it packs into a package both Helm and KubeVela
/// read. Only directories: a package always carries its Chart.yaml.
fn addon_chart_yaml(files: &mut Vec<File>, origin: &str) -> Result<(), LoadError> {
    if files.iter().any(|f| f.name == CHART_FILE) {
        return Ok(());
    }
    let Some(metadata) = files
        .iter()
        .find(|f| f.name == chartkit_addon::METADATA_FILE)
    else {
        return Ok(());
    };
    let chart_yaml =
        chartkit_addon::chart_yaml_for(&metadata.text()).map_err(|source| LoadError::Addon {
            file: format!("{origin}/{}", chartkit_addon::METADATA_FILE),
            source,
        })?;
    files.push(File::new(CHART_FILE, chart_yaml));
    Ok(())
}

/// What Helm's loader logs of a symbolic link it follows (links can bring files from
/// anywhere into a chart, so the user hears of each one): the link under the chart's
/// absolute path, and where it leads.
fn symlink_notice(absolute_dir: &Path, name: &str, path: &Path) -> String {
    let link = absolute_dir.join(name).display().to_string();
    let resolved = std::fs::canonicalize(path)
        .map(|target| target.display().to_string())
        .unwrap_or_default();
    chartkit_yaml::goslog::info(
        "found symbolic link in path. Contents of linked file included and used",
        &[("path", &link), ("resolved", &resolved)],
    )
}

/// The apiVersions Helm 4's loader reads: v1 and v2 (and none, taken as v1) as charts of
/// today, v3 as Helm 4's experimental format, which it loads and then refuses to render or
/// package ([`API_VERSION_V3`]).
fn is_loadable_api_version(api_version: &str) -> bool {
    matches!(api_version, "" | "v1" | "v2" | API_VERSION_V3)
}

/// Helm 4's experimental chart format: Helm's loader reads such a chart, and then
/// `helm template`, `helm install` and `helm package` refuse it ("invalid chart apiVersion").
pub const API_VERSION_V3: &str = "v3";

/// Builds a chart from its files (names relative to the chart root), loading subcharts
/// from `charts/` recursively. `origin` names the chart in errors.
pub fn load_files(
    files: Vec<File>,
    origin: &str,
    options: &LoadOptions,
) -> Result<Chart, LoadError> {
    let path_of = |name: &str| format!("{origin}/{name}");
    let texts = |name: &str| -> Vec<std::borrow::Cow<'_, str>> {
        files
            .iter()
            .filter(|f| f.name == name)
            .map(File::text)
            .collect()
    };
    let chart_yamls = texts(CHART_FILE);
    if chart_yamls.is_empty() {
        return Err(LoadError::MissingChartYaml {
            origin: origin.to_owned(),
        });
    }
    // Helm reads every Chart.yaml first wherever it is in the file list (an archive may
    // repeat one), then lays requirements.yaml over it (for every apiVersion, warning for
    // v2).
    let requirements = texts("requirements.yaml");
    let mut metadata = Metadata::from_chart_files(
        chart_yamls.iter().map(|t| t.as_ref()),
        requirements.iter().map(|t| t.as_ref()),
    )
    .map_err(|e| LoadError::Metadata {
        file: path_of(e.file),
        source: match e.source {
            MetadataYamlError::Metadata(error)
                if options.check_api_version && e.file == CHART_FILE =>
            {
                MetadataYamlError::Metadata(error.read_first_for_api_version())
            }
            other => other,
        },
    })?;
    drop((chart_yamls, requirements));
    if options.check_api_version && !is_loadable_api_version(&metadata.api_version) {
        return Err(LoadError::UnsupportedApiVersion {
            file: path_of(CHART_FILE),
            api_version: metadata.api_version,
        });
    }

    let mut chart = Chart::default();
    let mut subcharts: BTreeMap<String, Vec<File>> = BTreeMap::new();
    for file in &files {
        chart.raw.push(file.clone());
    }
    for file in files {
        let name = file.name.as_str();
        match name {
            CHART_FILE => {}
            "Chart.lock" => chart.lock = Some(lock(&file, &path_of(name))?),
            VALUES_FILE => {
                let values_error = |error| LoadError::Values {
                    file: path_of(name),
                    error,
                };
                if options.retain == Retain::LoaderFiles {
                    // Judging a package: whether Helm could read the values is all that
                    // matters, and checking allows go-yaml's full nesting depth.
                    chartkit_yaml::check_values(&file.text()).map_err(values_error)?;
                } else {
                    chart.values =
                        chartkit_yaml::parse_values(&file.text()).map_err(values_error)?;
                }
            }
            SCHEMA_FILE => chart.schema = Some(file.data),
            "requirements.yaml" | "requirements.lock" => {
                // requirements.yaml was laid over Chart.yaml above.
                if name == "requirements.lock" {
                    chart.lock = Some(lock(&file, &path_of(name))?);
                }
                // v1 charts keep these files; v2 charts should not have them at all.
                if metadata.api() == ApiVersion::V1 {
                    chart.files.push(file);
                } else {
                    chart.warnings.push(chartkit_yaml::goslog::warn(
                        &format!(
                            "{}: since apiVersion v2, dependencies and their lock belong in Chart.yaml and Chart.lock; move them there",
                            path_of(name)
                        ),
                        &[],
                    ));
                }
            }
            _ if name.starts_with("templates/") => chart.templates.push(file),
            _ if name.starts_with("charts/") => {
                if name.ends_with(".prov") {
                    chart.files.push(file);
                    continue;
                }
                let inner = &name["charts/".len()..];
                let group = inner.split('/').next().unwrap_or(inner).to_owned();
                let inner = inner.to_owned();
                subcharts.entry(group).or_default().push(File {
                    name: inner,
                    data: file.data,
                });
            }
            _ => chart.files.push(file),
        }
    }

    metadata.validate().map_err(|source| LoadError::Invalid {
        file: path_of(CHART_FILE),
        source,
    })?;
    chart.metadata = metadata;

    // Helm's loader looks at the apiVersion of the chart it was given, not its subcharts'.
    let sub_options;
    let options = if options.check_api_version {
        sub_options = LoadOptions {
            check_api_version: false,
            ..options.clone()
        };
        &sub_options
    } else {
        options
    };
    for (group, files) in subcharts {
        // Helm skips entries such as `charts/_helpers` or `charts/.git`.
        if group.starts_with('_') || group.starts_with('.') {
            continue;
        }
        let sub_origin = format!("{origin}/charts/{group}");
        let subchart = if group.ends_with(".tgz") {
            let [file] = files.as_slice() else {
                let found = files
                    .iter()
                    .map(|f| f.name.as_str())
                    .find(|n| *n != group)
                    .unwrap_or(&group)
                    .to_owned();
                return Err(LoadError::SubchartLayout {
                    origin: origin.to_owned(),
                    expected: group,
                    found,
                });
            };
            if file.name != group {
                return Err(LoadError::SubchartLayout {
                    origin: origin.to_owned(),
                    expected: group,
                    found: file.name.clone(),
                });
            }
            load_archive(&file.data, &sub_origin, options)?
        } else {
            let inner: Vec<File> = files
                .into_iter()
                .filter_map(|f| {
                    let (_, rest) = f.name.split_once('/')?;
                    Some(File {
                        name: rest.to_owned(),
                        data: f.data,
                    })
                })
                .collect();
            load_files(inner, &sub_origin, options)?
        };
        chart.dependencies.push(subchart);
    }
    Ok(chart)
}

/// Reads a lock file (Chart.lock, or requirements.lock for v1 charts).
fn lock(file: &File, path: &str) -> Result<Lock, LoadError> {
    Lock::from_yaml(&file.text()).map_err(|source| LoadError::Lock {
        file: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(entries: &[(&str, &str)]) -> Vec<File> {
        entries
            .iter()
            .map(|(n, d)| File::new(*n, d.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn classifies_files_like_helm() {
        let chart = load_files(
            files(&[
                ("Chart.yaml", "apiVersion: v2\nname: web\nversion: 1.0.0\n"),
                ("values.yaml", "replicas: 2\n"),
                ("values.schema.json", "{}"),
                ("templates/a.yaml", "kind: A"),
                ("README.md", "# web"),
                ("crds/c.yaml", "kind: CRD"),
                (
                    "charts/sub/Chart.yaml",
                    "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
                ),
                ("charts/sub/templates/b.yaml", "kind: B"),
                ("charts/_skip/x", "ignored"),
                ("charts/sub-0.1.0.tgz.prov", "sig"),
            ]),
            "web",
            &LoadOptions::default(),
        )
        .unwrap();
        assert_eq!(chart.name(), "web");
        assert_eq!(chart.templates.len(), 1);
        assert_eq!(
            chart
                .files
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>(),
            ["README.md", "crds/c.yaml", "charts/sub-0.1.0.tgz.prov"]
        );
        assert_eq!(chart.dependencies.len(), 1);
        assert_eq!(chart.dependencies[0].templates[0].name, "templates/b.yaml");
        assert!(chart.schema.is_some());
        assert_eq!(chart.crds()[0].0, "web/crds/c.yaml");
        assert_eq!(chart.raw.len(), 10);
    }

    #[test]
    fn v1_charts_take_dependencies_from_requirements() {
        let chart = load_files(
            files(&[
                ("Chart.yaml", "name: old\nversion: 1.0.0\n"),
                (
                    "requirements.yaml",
                    "dependencies:\n- name: db\n  version: 1.x\n  repository: https://r\n",
                ),
            ]),
            "old",
            &LoadOptions::default(),
        )
        .unwrap();
        assert_eq!(chart.metadata.api_version, "v1");
        assert_eq!(chart.metadata.dependencies().next().unwrap().name, "db");
        assert_eq!(chart.files[0].name, "requirements.yaml");
    }

    #[test]
    fn errors_name_the_file() {
        let err = load_files(
            files(&[("values.yaml", "a: 1")]),
            "web",
            &LoadOptions::default(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "`web` has no Chart.yaml; a chart needs Chart.yaml at its top level"
        );
        let err = load_files(
            files(&[
                ("Chart.yaml", "apiVersion: v2\nname: web\nversion: 1.0.0\n"),
                ("values.yaml", "a: [1\n"),
            ]),
            "web",
            &LoadOptions::default(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "`web/values.yaml`: cannot unmarshal yaml document: error converting YAML to JSON: yaml: line 1: did not find expected ',' or ']'"
        );
        let err = load_files(
            files(&[
                ("Chart.yaml", "apiVersion: v2\nname: web\nversion: 1.0.0\n"),
                ("charts/sub/Chart.yaml", "apiVersion: v2\nname: sub\n"),
            ]),
            "web",
            &LoadOptions::default(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "`web/charts/sub/Chart.yaml`: validation: chart.metadata.version is required\nhint: add `version:` with a semantic version such as 0.1.0"
        );
    }
}
