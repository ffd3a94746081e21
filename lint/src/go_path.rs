//! Paths as Go's `filepath.Abs` makes them: Helm lints the absolute path of a chart and
//! names it (and files in it) that way in its findings.

use std::path::{Component, Path, PathBuf};

/// `filepath.Abs`: relative paths joined to the working directory, then cleaned without
/// looking at the file system (symbolic links are kept, `a/..` is dropped).
pub(crate) fn abs(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return clean(path);
    }
    clean(&working_dir().join(path))
}

/// `filepath.Join(dir, name)`: the joined path cleaned (`./web` and `Chart.yaml` give
/// `web/Chart.yaml`).
pub(crate) fn join(dir: &Path, name: &str) -> PathBuf {
    let joined = dir.join(name);
    let kept: PathBuf = joined
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    if dir.is_absolute() {
        clean(&kept)
    } else {
        kept
    }
}

/// An I/O error as Go's `syscall.Errno` words it (`no such file or directory`).
pub(crate) fn io_error_text(error: &std::io::Error) -> String {
    let text = error.to_string();
    let text = match text.find(" (os error ") {
        Some(end) => &text[..end],
        None => &text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// `os.Getwd`: `$PWD` when it names the working directory (so a path through a symbolic
/// link stays as the shell shows it), else the resolved one.
fn working_dir() -> PathBuf {
    let resolved = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    #[cfg(unix)]
    if let Some(pwd) = std::env::var_os("PWD").map(PathBuf::from)
        && pwd.is_absolute()
    {
        use std::os::unix::fs::MetadataExt;
        let same = |a: &Path, b: &Path| match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        };
        if same(&pwd, Path::new(".")) {
            return pwd;
        }
    }
    resolved
}

/// `filepath.Clean` for an absolute path.
fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_paths_are_cleaned_lexically() {
        assert_eq!(abs(Path::new("/a/./b/../c/")), PathBuf::from("/a/c"));
        assert_eq!(abs(Path::new("/../x")), PathBuf::from("/x"));
        assert!(abs(Path::new("chart")).is_absolute());
        assert!(abs(Path::new("chart")).ends_with("chart"));
    }

    #[test]
    fn joins_and_errors_read_as_go_prints_them() {
        assert_eq!(
            join(Path::new("./web"), "Chart.yaml"),
            PathBuf::from("web/Chart.yaml")
        );
        let missing = std::fs::metadata("/nonexistent/chartkit").unwrap_err();
        assert_eq!(io_error_text(&missing), "no such file or directory");
    }
}
