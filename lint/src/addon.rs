//! Linting a KubeVela addon directory: metadata.yaml in place of Chart.yaml.
//!
//! Helm has no rules for addons (`helm lint` on such a directory only says Chart.yaml is
//! missing). chartkit checks the addon's metadata with `chartkit-addon`'s strict reading
//! and validation, then Helm's Chart.yaml rules on the Chart.yaml its package will carry.

use std::path::Path;

use chartkit_addon::{AddonMetadata, METADATA_FILE};

use crate::{Findings, Severity};

/// A directory is linted as an addon when it has metadata.yaml and no Chart.yaml, the
/// same test the chart loader makes.
pub(crate) fn is_addon_dir(dir: &Path) -> bool {
    dir.join(METADATA_FILE).is_file() && !dir.join(crate::rules::CHART_YAML).exists()
}

pub(crate) fn metadata(findings: &mut Findings, dir: &Path) {
    let path = dir.join(METADATA_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => {
            findings.add(
                Severity::Error,
                METADATA_FILE,
                format!("cannot read {}: {e}", path.display()),
            );
            return;
        }
    };
    let meta = match AddonMetadata::from_yaml(&text) {
        Ok(meta) => meta,
        Err(e) => {
            findings.add(Severity::Error, METADATA_FILE, e.to_string());
            return;
        }
    };
    let problems = meta.validate();
    for problem in &problems {
        findings.add(Severity::Error, METADATA_FILE, problem.to_string());
    }
    if meta.description.is_empty() {
        findings.add(
            Severity::Info,
            METADATA_FILE,
            "description is recommended: KubeVela shows it in addon listings",
        );
    }
    let has_template = ["template.cue", "template.yaml"]
        .iter()
        .any(|name| dir.join(name).is_file());
    let has_content = ["resources", "definitions", "schemas", "views"]
        .iter()
        .any(|name| dir.join(name).is_dir());
    if !has_template && !has_content {
        findings.add(
            Severity::Warning,
            METADATA_FILE,
            "the addon has no template.cue or template.yaml and no resources/, definitions/, schemas/ or views/: it installs nothing",
        );
    }
    if problems.is_empty() {
        crate::rules::chart_text(findings, &meta.chart_yaml(), "Chart.yaml");
    }
}
