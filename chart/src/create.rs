//! `create`: a working starter chart, written by us.

use std::path::{Path, PathBuf};

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

/// Why a chart could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    #[error(
        "chart name {0:?} is invalid: use letters, digits, `.`, `_` and `-` (at most 250 characters)"
    )]
    InvalidName(String),
    #[error("`{0}` already exists and is not empty; choose another name or remove it first")]
    Exists(PathBuf),
    #[error("cannot write `{path}`: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Creates a starter chart in `path`; the chart is named after the last path component.
/// An existing non-empty directory is never touched.
pub fn create(path: &Path) -> Result<PathBuf, CreateError> {
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
    for (relative, text) in STARTER {
        let target = path.join(relative);
        let io = |source| CreateError::Io {
            path: target.clone(),
            source,
        };
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::write(&target, text.replace("__NAME__", &name)).map_err(io)?;
    }
    std::fs::create_dir_all(path.join("charts")).map_err(|source| CreateError::Io {
        path: path.join("charts"),
        source,
    })?;
    Ok(path.to_path_buf())
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
        assert_eq!(chart.templates.len(), 8);
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
