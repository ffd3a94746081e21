use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::output::{errln, outln};

use chartkit_lint::{LintOptions, Severity, lint};

use crate::cli::LintArgs;

/// Prints findings in `helm lint`'s format; fails when any chart fails.
pub fn run(args: LintArgs, offline: bool) -> crate::error::Result<ExitCode> {
    let kube_version = match &args.kube_version {
        Some(text) => Some(
            chartkit_render::parse_kube_version(text)
                .map_err(|e| crate::error::err!("invalid kube version '{text}': {e}"))?,
        ),
        None => None,
    };
    let values = super::template::merge_values(&args.values)?;
    let options = LintOptions {
        limits: super::limits()?,
        values,
        namespace: args.namespace.clone(),
        kube_version,
        skip_schema_validation: args.skip_schema_validation,
        memory_limit: super::memory_limit()?,
    };
    if args.dependency_update {
        for path in args.paths.iter().filter(|p| p.is_dir()) {
            super::dependency::update_before(path, true, &Default::default(), offline)?;
        }
    }
    let mut paths = args.paths.clone();
    if args.with_subcharts {
        for path in &args.paths {
            paths.extend(subcharts(path));
        }
    }
    let mut failed = 0;
    let mut warned = 0;
    for path in &paths {
        let report = lint(path, &options);
        for warning in &report.warnings {
            crate::log::line(warning);
        }
        if report.failed(args.strict) {
            failed += 1;
        }
        let noteworthy = report.has_warnings_or_errors();
        if noteworthy {
            warned += 1;
        }
        if args.quiet && !noteworthy {
            continue;
        }
        outln!("==> Linting {}", report.chart)?;
        // A chart that could not be linted has no findings, only why (helm's `Error` lines).
        if report.messages.is_empty() {
            for error in &report.errors {
                outln!("Error {error}")?;
            }
        }
        for message in report
            .messages
            .iter()
            .filter(|m| !args.quiet || m.severity >= Severity::Warning)
        {
            outln!("{message}")?;
        }
        outln!()?;
    }
    let summary = format!("{} chart(s) linted, {failed} chart(s) failed", paths.len());
    if failed > 0 {
        errln!("Error: {summary}");
        return Ok(ExitCode::FAILURE);
    }
    // helm says nothing more of charts `--quiet` found nothing to say about.
    if !args.quiet || warned > 0 {
        outln!("{summary}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What `helm lint --with-subcharts` adds for a chart: walking CHART/charts in lexical
/// order without following links, each directory that holds a Chart.yaml and each
/// `.tgz`/`.tar.gz`, at any depth.
fn subcharts(chart: &Path) -> Vec<PathBuf> {
    let root = super::go_clean(&chart.join("charts"));
    walkdir::WalkDir::new(&root)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let path = entry.path();
            if entry.file_name() == "Chart.yaml" {
                path.parent().map(Path::to_path_buf)
            } else {
                let name = path.to_string_lossy();
                (name.ends_with(".tgz") || name.ends_with(".tar.gz")).then(|| path.to_path_buf())
            }
        })
        .collect()
}
