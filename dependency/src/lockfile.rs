//! Reading what a chart declares and writing its lock file as Helm writes it.

use std::path::{Path, PathBuf};

use chartkit_chart::{ApiVersion, Chart, Dependency, Lock};

/// Whether the chart has a `dependencies` list, even an empty one. Helm tells a missing
/// or null list (Go's nil slice) from an empty one: the first means "no dependencies" to
/// `dependency list` and `update`, and hashes as `null` into the lock digest.
pub fn declares_dependencies(chart: &Chart) -> bool {
    if !chart.metadata.dependencies.is_empty() {
        return true;
    }
    ["Chart.yaml", "requirements.yaml"].iter().any(|file| {
        chart.raw_file(file).is_some_and(|f| {
            chartkit_yaml::parse_node(&f.text()).is_ok_and(|node| {
                node.get("dependencies")
                    .is_some_and(|d| !matches!(d.kind, chartkit_yaml::NodeKind::Null))
            })
        })
    })
}

/// The dependencies a chart declares, `None` when it declares none at all.
pub fn requested(chart: &Chart) -> Option<Vec<Dependency>> {
    declares_dependencies(chart).then(|| {
        chart
            .metadata
            .dependencies
            .iter()
            .flatten()
            .cloned()
            .collect()
    })
}

/// The lock file's name: requirements.lock for apiVersion v1 charts, else Chart.lock.
pub fn lock_file_name(chart: &Chart) -> &'static str {
    if chart.metadata.api() == ApiVersion::V1 {
        "requirements.lock"
    } else {
        "Chart.lock"
    }
}

/// Now, as Go's `time.Now()` marshals to JSON: RFC 3339 with nanoseconds (trailing
/// zeros dropped) in the local zone, `Z` for UTC.
pub fn generated_now() -> String {
    let now = chrono::Local::now();
    let mut text = now.format("%Y-%m-%dT%H:%M:%S").to_string();
    let nanos = now.timestamp_subsec_nanos() % 1_000_000_000;
    if nanos != 0 {
        let fraction = format!("{nanos:09}");
        text.push('.');
        text.push_str(fraction.trim_end_matches('0'));
    }
    let offset = now.offset().local_minus_utc();
    if offset == 0 {
        text.push('Z');
    } else {
        let sign = if offset < 0 { '-' } else { '+' };
        let minutes = offset.abs() / 60;
        text.push_str(&format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60));
    }
    text
}

/// Why a lock file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteLockError {
    #[error("the {name} file is a symlink to {target:?}; replace it with a regular file")]
    Symlink { name: &'static str, target: PathBuf },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: chartkit_durable::WriteError,
    },
}

/// Writes the lock durably beside Chart.yaml. A lock that is a symbolic link is refused,
/// as Helm refuses it, rather than written through.
pub fn write_lock(chart_dir: &Path, name: &'static str, lock: &Lock) -> Result<(), WriteLockError> {
    let path = chart_dir.join(name);
    if let Ok(meta) = std::fs::symlink_metadata(&path)
        && meta.file_type().is_symlink()
    {
        return Err(WriteLockError::Symlink {
            name,
            target: std::fs::read_link(&path).unwrap_or_default(),
        });
    }
    chartkit_durable::write(&path, lock.to_yaml().as_bytes())
        .map_err(|source| WriteLockError::Write { path, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_is_rfc3339_that_the_lock_reader_accepts() {
        let text = generated_now();
        let lock = Lock::from_yaml(&format!("generated: \"{text}\"\n")).unwrap();
        assert_eq!(lock.generated, text);
    }

    #[test]
    fn declared_lists() {
        let load = |yaml: &str| {
            chartkit_chart::load_files(
                vec![chartkit_chart::File::new(
                    "Chart.yaml",
                    yaml.as_bytes().to_vec(),
                )],
                "c",
                &Default::default(),
            )
            .unwrap()
        };
        let base = "apiVersion: v2\nname: c\nversion: 1.0.0\n";
        assert!(!declares_dependencies(&load(base)));
        assert!(!declares_dependencies(&load(&format!(
            "{base}dependencies:\n"
        ))));
        assert!(declares_dependencies(&load(&format!(
            "{base}dependencies: []\n"
        ))));
        assert_eq!(
            requested(&load(&format!("{base}dependencies: []\n"))),
            Some(vec![])
        );
    }

    #[test]
    fn symlinked_lock_is_refused() {
        let temp = tempfile::tempdir().unwrap();
        std::fs::write(temp.path().join("elsewhere"), "x").unwrap();
        std::os::unix::fs::symlink("elsewhere", temp.path().join("Chart.lock")).unwrap();
        let error = write_lock(temp.path(), "Chart.lock", &Lock::default()).unwrap_err();
        assert!(error.to_string().contains("symlink"), "{error}");
        assert_eq!(
            std::fs::read_to_string(temp.path().join("elsewhere")).unwrap(),
            "x"
        );
    }
}
