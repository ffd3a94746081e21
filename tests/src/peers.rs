//! The reference tools (`helm`, `kubectl`), found on PATH or where
//! `../shared/tools/get-peers` installs them.

use std::path::PathBuf;

fn find(name: &str) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("CHARTKIT_PEERS") {
        candidates.push(PathBuf::from(dir).join(name));
    }
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|dir| dir.join(name)));
    }
    if let Some(home) = std::env::var_os("HOME") {
        candidates.push(PathBuf::from(home).join(".cache/chartkit-peers").join(name));
    }
    candidates.into_iter().find(|p| p.is_file())
}

/// The reference `helm`, if installed.
pub fn helm() -> Option<PathBuf> {
    find("helm")
}

/// Returns helm, or prints why the calling test is skipped.
pub fn helm_or_skip(test: &str) -> Option<PathBuf> {
    let helm = helm();
    if helm.is_none() {
        crate::skip(
            test,
            "helm is not installed (run ../shared/tools/get-peers)",
        );
    }
    helm
}

/// The reference `kubectl`, if installed.
pub fn kubectl() -> Option<PathBuf> {
    find("kubectl")
}

/// Returns kubectl, or prints why the calling test is skipped.
pub fn kubectl_or_skip(test: &str) -> Option<PathBuf> {
    let kubectl = kubectl();
    if kubectl.is_none() {
        crate::skip(
            test,
            "kubectl is not installed (run ../shared/tools/get-peers)",
        );
    }
    kubectl
}
