//! `create`: a new chart from Helm 4's starter (the files `helm create` writes, byte for
//! byte) or from a starter chart of the user's (`--starter`).

use std::path::{Path, PathBuf};

use crate::chart::{Chart, VALUES_FILE};
use crate::load::{LoadOptions, load};
use crate::metadata::Metadata;
use crate::package::{PackageError, package_to_bytes};

/// The starter's files, with `__NAME__` standing for the chart name.
const STARTER: &[(&str, &str)] = &[
    ("Chart.yaml", include_str!("starter/Chart.yaml")),
    ("values.yaml", include_str!("starter/values.yaml")),
    (".helmignore", include_str!("starter/.helmignore")),
    (
        "templates/_helpers.tpl",
        include_str!("starter/templates/_helpers.tpl"),
    ),
    (
        "templates/deployment.yaml",
        include_str!("starter/templates/deployment.yaml"),
    ),
    (
        "templates/service.yaml",
        include_str!("starter/templates/service.yaml"),
    ),
    (
        "templates/serviceaccount.yaml",
        include_str!("starter/templates/serviceaccount.yaml"),
    ),
    (
        "templates/ingress.yaml",
        include_str!("starter/templates/ingress.yaml"),
    ),
    (
        "templates/httproute.yaml",
        include_str!("starter/templates/httproute.yaml"),
    ),
    (
        "templates/hpa.yaml",
        include_str!("starter/templates/hpa.yaml"),
    ),
    (
        "templates/NOTES.txt",
        include_str!("starter/templates/NOTES.txt"),
    ),
    (
        "templates/tests/test-connection.yaml",
        include_str!("starter/templates/tests/test-connection.yaml"),
    ),
];

/// What a starter chart's templates and values.yaml say where the new chart's name goes.
pub const STARTER_PLACEHOLDER: &str = "<CHARTNAME>";

/// Why a chart could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    #[error(
        "chart name {0:?} is invalid: use letters, digits, `.`, `_` and `-` (at most 250 characters)"
    )]
    InvalidName(String),
    #[error("`{0}` already exists and is not empty; choose another name or remove it first")]
    Exists(PathBuf),
    #[error("could not load the starter `{path}`: {source}")]
    Starter {
        path: PathBuf,
        source: Box<crate::error::LoadError>,
    },
    #[error("cannot package the starter's subchart `{name}`: {source}")]
    Subchart {
        name: String,
        source: Box<PackageError>,
    },
    #[error("cannot write `{path}`: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Creates Helm's starter chart in `path`; the chart is named after the last path
/// component. An existing non-empty directory is never touched.
pub fn create(path: &Path) -> Result<PathBuf, CreateError> {
    let name = chart_name(path)?;
    let mut files: Vec<(String, Vec<u8>)> = STARTER
        .iter()
        .map(|(relative, text)| {
            (
                (*relative).to_owned(),
                text.replace("__NAME__", &name).into(),
            )
        })
        .collect();
    files.push(("charts/".to_owned(), Vec::new()));
    write_files(path, &files)?;
    Ok(path.to_path_buf())
}

/// Creates a chart in `path` from the starter chart `starter` (a directory or an
/// archive), as `helm create --starter` does: Chart.yaml is replaced by a new chart's
/// (version 0.1.0, appVersion 0.1.0), [`STARTER_PLACEHOLDER`] in templates and
/// values.yaml becomes the chart's name, every other file is copied as it is, and
/// subcharts are written as packages under `charts/`.
pub fn create_from(
    path: &Path,
    starter: &Path,
    options: &LoadOptions,
) -> Result<PathBuf, CreateError> {
    let name = chart_name(path)?;
    let chart = load(starter, options).map_err(|source| CreateError::Starter {
        path: starter.to_path_buf(),
        source: Box::new(source),
    })?;
    write_files(path, &starter_files(&chart, &name)?)?;
    Ok(path.to_path_buf())
}

/// The files of a chart named `name` made from `starter`.
fn starter_files(starter: &Chart, name: &str) -> Result<Vec<(String, Vec<u8>)>, CreateError> {
    let metadata = Metadata {
        name: name.to_owned(),
        description: "A Helm chart for Kubernetes".to_owned(),
        chart_type: "application".to_owned(),
        version: "0.1.0".to_owned(),
        app_version: "0.1.0".to_owned(),
        api_version: "v2".to_owned(),
        ..Metadata::default()
    };
    let mut files = vec![("Chart.yaml".to_owned(), metadata.to_yaml().into_bytes())];
    if let Some(values) = starter.raw_file(VALUES_FILE) {
        files.push((VALUES_FILE.to_owned(), with_name(&values.data, name)));
    }
    if let Some(schema) = &starter.schema {
        files.push((crate::chart::SCHEMA_FILE.to_owned(), schema.to_vec()));
    }
    for template in &starter.templates {
        files.push((template.name.clone(), with_name(&template.data, name)));
    }
    for file in &starter.files {
        files.push((file.name.clone(), file.data.to_vec()));
    }
    for subchart in &starter.dependencies {
        let bytes = package_to_bytes(subchart, 0).map_err(|source| CreateError::Subchart {
            name: subchart.name().to_owned(),
            source: Box::new(source),
        })?;
        let file = format!(
            "charts/{}-{}.tgz",
            subchart.name(),
            subchart.metadata.version
        );
        files.push((file, bytes));
    }
    Ok(files)
}

/// `data` with every [`STARTER_PLACEHOLDER`] replaced by `name`.
fn with_name(data: &[u8], name: &str) -> Vec<u8> {
    let placeholder = STARTER_PLACEHOLDER.as_bytes();
    let mut out = Vec::with_capacity(data.len());
    let mut rest = data;
    while let Some(at) = rest
        .windows(placeholder.len())
        .position(|window| window == placeholder)
    {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(name.as_bytes());
        rest = &rest[at + placeholder.len()..];
    }
    out.extend_from_slice(rest);
    out
}

/// The chart's name, the last component of `path`, checked by Helm's rule, and `path`
/// checked to be new or an empty directory.
fn chart_name(path: &Path) -> Result<String, CreateError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let valid = !name.is_empty()
        && name.len() <= 250
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if !valid {
        return Err(CreateError::InvalidName(name));
    }
    if let Ok(mut entries) = std::fs::read_dir(path) {
        if entries.next().is_some() {
            return Err(CreateError::Exists(path.to_path_buf()));
        }
    } else if path.exists() {
        return Err(CreateError::Exists(path.to_path_buf()));
    }
    Ok(name)
}

/// Writes `files` (paths relative to `dir`; one ending in `/` is a directory) with
/// Helm's modes, 0644 files in 0755 directories.
fn write_files(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<(), CreateError> {
    for (relative, data) in files {
        let target = dir.join(relative);
        let io = |source| CreateError::Io {
            path: target.clone(),
            source,
        };
        if relative.ends_with('/') {
            std::fs::create_dir_all(&target).map_err(io)?;
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::write(&target, data).map_err(io)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{LoadOptions, load_dir};

    #[test]
    fn creates_a_loadable_chart() {
        let temp = tempfile::tempdir().unwrap();
        let dir = create(&temp.path().join("demo")).unwrap();
        let chart = load_dir(&dir, &LoadOptions::default()).unwrap();
        assert_eq!(chart.name(), "demo");
        assert_eq!(chart.templates.len(), 9);
        assert!(
            chart
                .templates
                .iter()
                .all(|t| !t.text().contains("__NAME__"))
        );
        assert!(matches!(create(&dir), Err(CreateError::Exists(_))));
        assert!(matches!(
            create(&temp.path().join("bad name")),
            Err(CreateError::InvalidName(_))
        ));
    }
}

#[cfg(test)]
mod starter_tests {
    use super::*;

    #[test]
    fn placeholders_become_the_chart_name() {
        assert_eq!(
            with_name(b"<CHARTNAME>-x <CHARTNAME><CHARTNAME", "web"),
            b"web-x web<CHARTNAME"
        );
        assert_eq!(with_name(b"\xff<CHARTNAME>", "a"), b"\xffa");
    }
}
