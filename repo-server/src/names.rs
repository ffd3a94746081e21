//! The file names a repository holds. Names come from URLs and uploads, so they are checked
//! before any storage sees them: one path component, no dot files, a small alphabet.

/// What a stored file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// `NAME-VERSION.tgz`
    Package,
    /// `NAME-VERSION.tgz.prov`
    Provenance,
}

/// Whether `name` is a file the repository serves, and which kind.
pub fn classify(name: &str) -> Option<FileKind> {
    if !is_safe(name) {
        return None;
    }
    if name.ends_with(".tgz.prov") {
        Some(FileKind::Provenance)
    } else if name.ends_with(".tgz") {
        Some(FileKind::Package)
    } else {
        None
    }
}

/// One path component of letters, digits and `._+-`, not starting with a dot: no
/// traversal, no hidden files, nothing a shell or URL treats specially.
pub fn is_safe(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'+' | b'-'))
        && !name.contains("..")
}

/// The package file name Helm gives a chart version.
pub fn package_file(name: &str, version: &str) -> String {
    format!("{name}-{version}.tgz")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_package_and_provenance_names_are_served() {
        assert_eq!(classify("nginx-1.2.3.tgz"), Some(FileKind::Package));
        assert_eq!(
            classify("nginx-1.2.3+build.1.tgz.prov"),
            Some(FileKind::Provenance)
        );
        for bad in [
            "../etc/passwd.tgz",
            "a/b.tgz",
            ".hidden.tgz",
            "a..b.tgz",
            "x.tgz%00",
            "index.yaml",
            "",
            "a b.tgz",
        ] {
            assert_eq!(classify(bad), None, "{bad}");
        }
    }
}
