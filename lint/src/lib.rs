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

use chartkit_chart::archive::{Limits, UnpackError};

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
    /// Why the chart could not be linted at all (not a chart, an archive that does not
    /// open), in Helm's words; Helm prints these as `Error ...` lines.
    pub errors: Vec<String>,
}

impl Report {
    /// Whether the chart fails: it could not be linted, or has an error, or with
    /// `strict` a warning.
    pub fn failed(&self, strict: bool) -> bool {
        let threshold = if strict {
            Severity::Warning
        } else {
            Severity::Error
        };
        !self.errors.is_empty() || self.messages.iter().any(|m| m.severity >= threshold)
    }

    /// Whether there is more to say than information: what `--quiet` still shows.
    pub fn has_warnings_or_errors(&self) -> bool {
        !self.errors.is_empty() || self.messages.iter().any(|m| m.severity > Severity::Info)
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
/// directory first, as Helm does). As in Helm, a path ending in `.tgz` or `.tar.gz` is a
/// package and anything else a directory.
pub fn lint(path: &Path, options: &LintOptions) -> Report {
    let mut report = Report {
        chart: path.display().to_string(),
        messages: Vec::new(),
        warnings: Vec::new(),
        errors: Vec::new(),
    };
    let name = path.to_string_lossy();
    let _unpacked;
    let dir = if name.ends_with(".tgz") || name.ends_with(".tar.gz") {
        match unpack_for_lint(path, options) {
            Ok((temp, dir)) => {
                _unpacked = temp;
                dir
            }
            Err(text) => {
                report.errors.push(text);
                return report;
            }
        }
    } else {
        path.to_path_buf()
    };
    // Helm lints only a directory holding a Chart.yaml (chartkit also a KubeVela addon's).
    let chart_yaml = go_path::join(&dir, rules::CHART_YAML);
    if let Err(e) = std::fs::metadata(&chart_yaml)
        && !addon::is_addon_dir(&dir)
    {
        report.errors.push(format!(
            "unable to check Chart.yaml file in chart: stat {}: {}",
            chart_yaml.display(),
            go_path::io_error_text(&e)
        ));
        return report;
    }
    (report.messages, report.warnings) = lint_chart_dir_logged(&dir, options);
    report
}

fn unpack_for_lint(
    path: &Path,
    options: &LintOptions,
) -> Result<(tempfile::TempDir, PathBuf), String> {
    let open_error = |e: std::io::Error| {
        format!(
            "unable to open tarball: open {}: {}",
            path.display(),
            go_path::io_error_text(&e)
        )
    };
    // A package larger than any chart within the limits is refused before it is read.
    let largest = options.limits.max_total_size.saturating_add(1 << 20);
    let size = std::fs::metadata(path).map_err(open_error)?.len();
    if size > largest {
        return Err(format!(
            "unable to open tarball: it is {size} bytes, larger than any chart within the {}-byte chart size limit",
            options.limits.max_total_size
        ));
    }
    let bytes = std::fs::read(path).map_err(open_error)?;
    // Go's gzip reader: a header is ten bytes and starts with the magic number.
    if bytes.len() < 10 {
        return Err("unable to extract tarball: unexpected EOF".into());
    }
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Err("unable to extract tarball: gzip: invalid header".into());
    }
    let temp = tempfile::Builder::new()
        .prefix("chartkit-lint")
        .tempdir()
        .map_err(|e| format!("unable to create temp dir to extract tarball: {e}"))?;
    let dir = chartkit_chart::archive::unpack(&bytes, temp.path(), &options.limits).map_err(
        |e| match e {
            UnpackError::Archive(e) => {
                format!("unable to extract tarball: {}", helm_errors::archive(&e))
            }
            other => format!("unable to extract tarball: {other}"),
        },
    )?;
    Ok((temp, dir))
}
