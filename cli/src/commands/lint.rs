use std::process::ExitCode;

use chartkit_lint::{LintOptions, Severity, lint};

use crate::cli::LintArgs;

/// Prints findings in `helm lint`'s format; fails when any chart fails.
pub fn run(args: LintArgs) -> crate::error::Result<ExitCode> {
    let kube_version = match &args.kube_version {
        Some(text) => Some(
            chartkit_render::parse_kube_version(text)
                .map_err(|e| crate::error::err!("invalid kube version '{text}': {e}"))?,
        ),
        None => None,
    };
    let values = super::template::value_options(&args.values).merge(&mut super::StdinOnDemand)?;
    let options = LintOptions {
        limits: super::limits()?,
        values,
        namespace: args.namespace.clone(),
        kube_version,
        skip_schema_validation: args.skip_schema_validation,
        memory_limit: super::memory_limit()?,
    };
    let mut failed = 0;
    for path in &args.paths {
        let report = lint(path, &options);
        for warning in &report.warnings {
            super::print_warning(warning);
        }
        let chart_failed = report.failed(args.strict);
        if chart_failed {
            failed += 1;
        }
        let shown: Vec<_> = report
            .messages
            .iter()
            .filter(|m| !args.quiet || m.severity >= Severity::Warning)
            .collect();
        if args.quiet && shown.is_empty() {
            continue;
        }
        println!("==> Linting {}", report.chart);
        for message in shown {
            println!("{message}");
        }
        println!();
    }
    let summary = format!(
        "{} chart(s) linted, {failed} chart(s) failed",
        args.paths.len()
    );
    if failed > 0 {
        eprintln!("error: {summary}");
        return Ok(ExitCode::FAILURE);
    }
    println!("{summary}");
    Ok(ExitCode::SUCCESS)
}
