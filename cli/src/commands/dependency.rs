use std::process::ExitCode;

use chartkit_dependency::Listing;
use chartkit_dependency::manager::{DependencyError, Options, Verify};

use crate::cli::{DependencyFetchArgs, DependencyListArgs};
use crate::env;
use crate::output::{out, outln};

/// `dependency list`: helm's table, a blank line, then helm's warnings about charts in
/// charts/ that are not charts or that no dependency names.
pub fn list(args: DependencyListArgs) -> crate::error::Result<ExitCode> {
    let chart = super::load_chart(&args.chart, false)?;
    let declared = chartkit_dependency::declares_dependencies(&chart);
    let options = super::load_options()?;
    match chartkit_dependency::list(&args.chart, &chart, declared, &options) {
        Listing::NoDependencies { charts_dir } => {
            outln!("WARNING: no dependencies at {}", charts_dir.display())?;
        }
        Listing::Rows { rows, warnings } => {
            let mut table = vec![
                ["NAME", "VERSION", "REPOSITORY", "STATUS"]
                    .map(String::from)
                    .to_vec(),
            ];
            table.extend(rows.into_iter().map(|r| {
                vec![
                    r.name,
                    r.version,
                    r.repository,
                    r.status.as_str().to_owned(),
                ]
            }));
            out!("{}", super::table::layout(&table, args.max_col_width))?;
            outln!()?;
            for warning in warnings {
                outln!("{warning}")?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn manager_options<'k>(
    verify: Verify,
    keyring: Option<&'k chartkit_signing::Keyring>,
    skip_refresh: bool,
    registry: &chartkit_repo_client::Access,
) -> crate::error::Result<Options<'k>> {
    Ok(Options {
        verify,
        keyring,
        skip_refresh,
        load: super::load_options()?,
        mtime: env::number(env::SOURCE_DATE_EPOCH)?.unwrap_or(0),
        registry: registry.clone(),
    })
}

/// `dependency update` and `dependency build`, printing helm's progress lines.
pub fn fetch(
    args: DependencyFetchArgs,
    build: bool,
    offline: bool,
) -> crate::error::Result<ExitCode> {
    let client = super::repo_support::client(offline, 120)?;
    let keyring = if args.verify {
        Some(super::keyring_or_default(args.keyring.as_deref(), "gpg --export")?.1)
    } else {
        None
    };
    let verify = match (args.verify, build) {
        (false, _) => Verify::Never,
        (true, true) => Verify::IfPossible,
        (true, false) => Verify::Always,
    };
    let registry = super::repo_support::access(&args.access);
    let options = manager_options(verify, keyring.as_ref(), args.skip_refresh, &registry)?;
    // Progress goes to stdout as helm prints it; what helm logs through slog (the
    // manager hands those over as finished log lines) goes to stderr.
    let mut notify = |line: &str| {
        if line.starts_with("level=") {
            crate::log::line(line);
        } else {
            let _ = outln!("{line}");
        }
    };
    let result = if build {
        chartkit_dependency::manager::build(&client, &args.chart, &options, &mut notify)
    } else {
        chartkit_dependency::manager::update(&client, &args.chart, &options, &mut notify)
    };
    result.map_err(|e| explain(e, &args.chart))?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `dependency update` for `--dependency-update`, quietly as helm does for package.
/// `registry` is the command's registry flags, for `oci://` dependencies.
pub fn update_before(
    chart: &std::path::Path,
    only_if_missing: bool,
    registry: &chartkit_repo_client::Access,
    offline: bool,
) -> crate::error::Result<()> {
    if only_if_missing && !missing_dependencies(chart)? {
        return Ok(());
    }
    let client = super::repo_support::client(offline, 120)?;
    update_with(&client, chart, registry, &mut |_| {})
}

/// Whether the chart directory names dependencies charts/ does not hold. Only that is
/// looked at: the caller loads the chart itself and prints its warnings then, so they
/// are not printed twice.
pub fn missing_dependencies(chart: &std::path::Path) -> crate::error::Result<bool> {
    use crate::error::Context;
    let loaded = chartkit_chart::load(chart, &super::load_options()?)
        .with_context(|| format!("cannot load the chart at `{}`", chart.display()))?;
    Ok(!chartkit_dependency::list::missing(&loaded).is_empty())
}

/// `dependency update` of `chart` through `client` (whose repository settings may be
/// the caller's), with `registry`'s credentials and TLS for `oci://` dependencies (the
/// caller's `--plain-http`, `--ca-file`..., as helm hands its registry client on),
/// telling `notify` what it does.
pub fn update_with(
    client: &chartkit_repo_client::Client,
    chart: &std::path::Path,
    registry: &chartkit_repo_client::Access,
    notify: &mut dyn FnMut(&str),
) -> crate::error::Result<()> {
    let options = manager_options(Verify::Never, None, false, registry)?;
    chartkit_dependency::manager::update(client, chart, &options, notify)
        .map_err(|e| explain(e, chart))?;
    Ok(())
}

/// The error with its next step: for an offline miss, the command that would fetch it.
fn explain(error: DependencyError, chart: &std::path::Path) -> crate::error::Error {
    let hint = match &error {
        e if e.offline().is_some() => Some(format!(
            "run `chartkit dependency build {}` without --offline (and CHARTKIT_OFFLINE unset) to fetch it{}",
            chart.display(),
            e.offline()
                .map(|(_, fetch)| fetch)
                .filter(|f| !f.is_empty())
                .map(|f| format!(", or `{f}`"))
                .unwrap_or_default()
        )),
        DependencyError::OutOfSync { .. } => Some(format!(
            "run `chartkit dependency update {}` to resolve Chart.yaml again",
            chart.display()
        )),
        DependencyError::Client(client) => match client.as_ref() {
            chartkit_repo_client::ClientError::IndexTooLarge { limit, .. } => {
                Some(super::repo_support::index_limit_hint(*limit))
            }
            _ => None,
        },
        _ => None,
    };
    let error = crate::error::Error::new(error);
    match hint {
        Some(hint) => error.with_hint(hint),
        None => error,
    }
}
