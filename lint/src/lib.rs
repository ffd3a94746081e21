//! `helm lint` rules, including the template checks that render the chart.
//!
//! Each rule reports with the same severity, path label and wording as Helm, so that a
//! user switching tools sees the same findings.

mod addon;
mod go_path;
mod helm_errors;
mod json_stream;
mod rules;
mod templates;

pub(crate) use rules::Findings;

use std::fmt;
use std::path::{Path, PathBuf};

use chartkit_chart::archive::Limits;

pub use rules::{lint_chart_dir, lint_chart_dir_logged};

/// How serious a finding is. Only errors fail a lint (warnings too with `--strict`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "INFO",
            Severity::Warning => "WARNING",
            Severity::Error => "ERROR",
        })
    }
}

/// One finding: `[SEVERITY] path: text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub severity: Severity,
    /// What the finding is about: a file (`Chart.yaml`), a directory (`templates/`) or the
    /// chart itself.
    pub path: String,
    pub text: String,
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}: {}", self.severity, self.path, self.text)
    }
}

/// The findings for one chart.
#[derive(Debug, Clone)]
pub struct Report {
    /// The path as the user gave it.
    pub chart: String,
    pub messages: Vec<Message>,
    /// What Helm logs while linting the chart, in its words and order (coalescing's
    /// notices, conditions and tags that are not booleans, `import-values` naming a
    /// table that is not there); one line each, for the user's terminal.
    pub warnings: Vec<String>,
}

impl Report {
    /// Whether the chart fails: any error, or with `strict` any warning.
    pub fn failed(&self, strict: bool) -> bool {
        let threshold = if strict {
            Severity::Warning
        } else {
            Severity::Error
        };
        self.messages.iter().any(|m| m.severity >= threshold)
    }

    pub fn highest(&self) -> Option<Severity> {
        self.messages.iter().map(|m| m.severity).max()
    }
}

/// Options for a lint run.
#[derive(Debug, Clone)]
pub struct LintOptions {
    pub limits: Limits,
    /// The user's values (`-f`, `--set`, ...), over the chart's defaults.
    pub values: chartkit_yaml::Map,
    /// `.Release.Namespace` for the render.
    pub namespace: String,
    /// `.Capabilities.KubeVersion` and the version deprecations are judged against.
    pub kube_version: Option<chartkit_render::KubeVersion>,
    pub skip_schema_validation: bool,
    /// The render's memory limit (`chartkit_render::RenderOptions::memory_limit`).
    pub memory_limit: u64,
}

impl Default for LintOptions {
    fn default() -> Self {
        LintOptions {
            limits: Limits::default(),
            values: chartkit_yaml::Map::new(),
            namespace: "default".into(),
            kube_version: None,
            skip_schema_validation: false,
            memory_limit: chartkit_render::DEFAULT_MEMORY_LIMIT,
        }
    }
}

/// Lints a chart directory or a packaged chart (which is unpacked into a temporary
/// directory first, as Helm does).
pub fn lint(path: &Path, options: &LintOptions) -> Report {
    let chart = path.display().to_string();
    if path.is_dir() {
        let (messages, warnings) = lint_chart_dir_logged(path, options);
        return Report {
            chart,
            messages,
            warnings,
        };
    }
    let (messages, warnings) = match unpack_for_lint(path, options) {
        Ok((_temp, dir)) => lint_chart_dir_logged(&dir, options),
        Err(text) => (
            vec![Message {
                severity: Severity::Error,
                path: chart.clone(),
                text,
            }],
            Vec::new(),
        ),
    };
    Report {
        chart,
        messages,
        warnings,
    }
}

fn unpack_for_lint(
    path: &Path,
    options: &LintOptions,
) -> Result<(tempfile::TempDir, PathBuf), String> {
    // A package larger than any chart within the limits is refused before it is read.
    let largest = options.limits.max_total_size.saturating_add(1 << 20);
    let size = std::fs::metadata(path)
        .map_err(|e| format!("unable to open tarball: {e}"))?
        .len();
    if size > largest {
        return Err(format!(
            "unable to open tarball: it is {size} bytes, larger than any chart within the {}-byte chart size limit",
            options.limits.max_total_size
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("unable to open tarball: {e}"))?;
    let temp = tempfile::Builder::new()
        .prefix("chartkit-lint")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let dir = chartkit_chart::archive::unpack(&bytes, temp.path(), &options.limits)
        .map_err(|e| format!("unable to extract tarball: {e}"))?;
    Ok((temp, dir))
}
