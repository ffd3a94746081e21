//! `.Capabilities` as `helm template` 4.1.4 fakes it: Kubernetes v1.35.0, Helm's built-in
//! list of API versions plus `--api-versions`, and helm's own build information.

use chartkit_template::Value;
use chartkit_template::objects::{Capabilities, HelmVersion};

/// The Kubernetes version `helm template` assumes without `--kube-version`.
pub const DEFAULT_KUBE_VERSION: &str = "v1.35.0";

/// The API versions Helm 4.1.4 reports without a cluster, in its order.
pub const DEFAULT_API_VERSIONS: &[&str] = &[
    "v1",
    "admissionregistration.k8s.io/v1",
    "admissionregistration.k8s.io/v1alpha1",
    "admissionregistration.k8s.io/v1beta1",
    "internal.apiserver.k8s.io/v1alpha1",
    "apps/v1",
    "apps/v1beta1",
    "apps/v1beta2",
    "authentication.k8s.io/v1",
    "authentication.k8s.io/v1alpha1",
    "authentication.k8s.io/v1beta1",
    "authorization.k8s.io/v1",
    "authorization.k8s.io/v1beta1",
    "autoscaling/v1",
    "autoscaling/v2",
    "autoscaling/v2beta1",
    "autoscaling/v2beta2",
    "batch/v1",
    "batch/v1beta1",
    "certificates.k8s.io/v1",
    "certificates.k8s.io/v1beta1",
    "certificates.k8s.io/v1alpha1",
    "coordination.k8s.io/v1alpha2",
    "coordination.k8s.io/v1beta1",
    "coordination.k8s.io/v1",
    "discovery.k8s.io/v1",
    "discovery.k8s.io/v1beta1",
    "events.k8s.io/v1",
    "events.k8s.io/v1beta1",
    "extensions/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1",
    "flowcontrol.apiserver.k8s.io/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1beta2",
    "flowcontrol.apiserver.k8s.io/v1beta3",
    "networking.k8s.io/v1",
    "networking.k8s.io/v1beta1",
    "node.k8s.io/v1",
    "node.k8s.io/v1alpha1",
    "node.k8s.io/v1beta1",
    "policy/v1",
    "policy/v1beta1",
    "rbac.authorization.k8s.io/v1",
    "rbac.authorization.k8s.io/v1beta1",
    "rbac.authorization.k8s.io/v1alpha1",
    "resource.k8s.io/v1",
    "resource.k8s.io/v1beta2",
    "resource.k8s.io/v1beta1",
    "resource.k8s.io/v1alpha3",
    "scheduling.k8s.io/v1alpha1",
    "scheduling.k8s.io/v1beta1",
    "scheduling.k8s.io/v1",
    "storage.k8s.io/v1beta1",
    "storage.k8s.io/v1",
    "storage.k8s.io/v1alpha1",
    "storagemigration.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1",
];

/// A Kubernetes version as Helm keeps it: `v1.29.3`, major `1`, minor `29`, and the
/// version as it was given (`v1.29.3-gke.1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeVersion {
    /// The numbers alone (Helm's `normalizedVersion`, what `String` gives and version
    /// constraints are checked against).
    pub version: String,
    pub major: String,
    pub minor: String,
    /// The text given, with `v` put in front if it had none (Helm's `Version`).
    pub git_version: String,
}

impl Default for KubeVersion {
    fn default() -> Self {
        KubeVersion {
            version: DEFAULT_KUBE_VERSION.into(),
            major: "1".into(),
            minor: "35".into(),
            git_version: DEFAULT_KUBE_VERSION.into(),
        }
    }
}

/// Helm's `ParseKubeVersion` (Kubernetes' generic version parser): optional spaces and
/// `v`, at least two dot-separated numbers without leading zeros; anything after the
/// numbers is dropped.
pub fn parse_kube_version(text: &str) -> Result<KubeVersion, String> {
    let trimmed = text.trim_start();
    let body = trimmed.strip_prefix('v').unwrap_or(trimmed);
    let numeric_end = body
        .char_indices()
        .find(|(i, c)| {
            !(c.is_ascii_digit()
                || (*c == '.' && body[i + 1..].starts_with(|d: char| d.is_ascii_digit()) && *i > 0))
        })
        .map_or(body.len(), |(i, _)| i);
    let numbers = &body[..numeric_end];
    if numbers.is_empty() || !body.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(format!("could not parse {text:?} as version"));
    }
    let parts: Vec<&str> = numbers.split('.').collect();
    if parts.len() < 2 {
        return Err(format!("illegal version string {text:?}"));
    }
    let mut components = Vec::new();
    for part in &parts {
        if part.len() > 1 && part.starts_with('0') {
            return Err(format!(
                "illegal zero-prefixed version component {part:?} in {text:?}"
            ));
        }
        let n: u64 = part
            .parse()
            .map_err(|_| format!("illegal version string {text:?}"))?;
        components.push(n.to_string());
    }
    Ok(KubeVersion {
        version: format!("v{}", components.join(".")),
        major: components[0].clone(),
        minor: components[1].clone(),
        git_version: if text.starts_with('v') {
            text.to_owned()
        } else {
            format!("v{text}")
        },
    })
}

/// The `.Capabilities` object for a render: `api_versions` over Helm's defaults, or alone
/// when they are a cluster's (`from_cluster`).
pub fn capabilities(kube: &KubeVersion, api_versions: &[String], from_cluster: bool) -> Value {
    let mut all: Vec<String> = Vec::new();
    if !from_cluster {
        all.extend(DEFAULT_API_VERSIONS.iter().map(|s| s.to_string()));
    }
    all.extend(api_versions.iter().cloned());
    let api_versions = all;
    Capabilities {
        kube_version: kube.git_version.clone(),
        kube_normalized_version: kube.version.clone(),
        kube_major: kube.major.clone(),
        kube_minor: kube.minor.clone(),
        api_versions,
        helm_version: HelmVersion {
            version: "v4.1.4".into(),
            git_commit: "05fa37973dc9e42b76e1d2883494c87174b6074f".into(),
            git_tree_state: "clean".into(),
            go_version: "go1.25.9".into(),
            kube_client_version: "v1.35".into(),
        },
    }
    .into_value()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Outputs of `helm template --kube-version X` 4.1.4.
    #[test]
    fn kube_versions_parse_like_helm() {
        let v = |t: &str| parse_kube_version(t).map(|k| (k.version, k.major, k.minor));
        assert_eq!(v("1.29"), Ok(("v1.29".into(), "1".into(), "29".into())));
        assert_eq!(v("v1.29.3-gke.1").unwrap().0, "v1.29.3");
        assert_eq!(
            parse_kube_version("1.29.3-gke.1").unwrap().git_version,
            "v1.29.3-gke.1"
        );
        assert_eq!(v("1.2.3.4").unwrap().0, "v1.2.3.4");
        assert_eq!(v("1.29.x").unwrap().0, "v1.29");
        assert_eq!(v(" 1.30").unwrap().0, "v1.30");
        assert_eq!(v("1").unwrap_err(), "illegal version string \"1\"");
        assert_eq!(v("abc").unwrap_err(), "could not parse \"abc\" as version");
        assert_eq!(
            v("01.030.1").unwrap_err(),
            "illegal zero-prefixed version component \"01\" in \"01.030.1\""
        );
    }
}
