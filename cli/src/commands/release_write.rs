//! `install`, `upgrade`, `uninstall` and `rollback`: parse the flags, find the chart,
//! hand the work to chartkit-engine, and print what helm prints.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use chartkit_cluster::Propagation;
use chartkit_engine::{
    DryRun, Engine, InstallOptions, Rendering, RollbackOptions, TestOptions, UninstallOptions,
    UpgradeOptions, ValuesMode, Waiting, Writing,
};
use chartkit_release::{Driver, Release, Storage, views};

use super::release_colour;
use crate::cli::{
    DryRunArgs, GlobalArgs, InstallArgs, KubeArgs, ReleaseOutput, ReleasePrintArgs, RenderArgs,
    RollbackArgs, TestArgs, UninstallArgs, UpgradeArgs, WaitArgs, WritingArgs,
};
use crate::env;
use crate::error::{Error, Result};
use crate::wait_view::WaitView;

pub(super) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Error::new)
}

pub(super) async fn engine(kube: &KubeArgs, operation: &str) -> Result<Engine> {
    let lock = env::release_lock(operation)?;
    let driver = Driver::from_name(&env::helm_driver()).map_err(Error::new)?;
    let connection = crate::kube::options(kube)
        .connect()
        .await
        .map_err(Error::new)?;
    let storage = Storage::new(
        connection.client.clone(),
        driver,
        Some(connection.namespace.as_str()),
    );
    let mut engine = Engine::new(
        connection.client.clone(),
        storage,
        &connection.namespace,
        Box::new(WaitView::new()),
    );
    engine.lock = lock;
    Ok(engine)
}

/// Go's `time.ParseDuration` for the units helm users write: `5m`, `90s`, `1m30s`,
/// `1h`, `500ms`.
pub fn parse_go_duration(text: &str) -> Option<Duration> {
    let mut rest = text.trim();
    if rest == "0" {
        return Some(Duration::ZERO);
    }
    let mut total = 0f64;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let number: f64 = rest[..end].parse().ok()?;
        rest = &rest[end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            "us" | "µs" => 0.000_001,
            "ns" => 0.000_000_001,
            _ => return None,
        };
        total += number * scale;
        rest = &rest[unit_end..];
    }
    Duration::try_from_secs_f64(total).ok()
}

/// `--rollback-on-failure`, or its deprecated name `--atomic` (with cobra's notice, as
/// helm prints it).
pub(super) fn rollback_on_failure(rollback_on_failure: bool, atomic: bool) -> bool {
    if atomic {
        crate::output::errln!(
            "Flag --atomic has been deprecated, use --rollback-on-failure instead"
        );
    }
    rollback_on_failure || atomic
}

pub(super) fn timeout(text: &str) -> Result<Duration> {
    parse_go_duration(text).ok_or_else(|| {
        Error::msg(format!("invalid argument {text:?} for \"--timeout\" flag"))
            .with_hint("give a Go duration such as 5m, 90s or 1m30s")
    })
}

/// helm's precedence of the value flags: `--reset-values` wins over `--reuse-values`,
/// which wins over `--reset-then-reuse-values`.
pub(super) fn values_mode(reuse: bool, reset: bool, reset_then_reuse: bool) -> ValuesMode {
    match (reuse, reset, reset_then_reuse) {
        (_, true, _) => ValuesMode::Reset,
        (true, false, _) => ValuesMode::Reuse,
        (false, false, true) => ValuesMode::ResetThenReuse,
        _ => ValuesMode::Default,
    }
}

pub(super) fn writing(args: &WritingArgs) -> Writing {
    Writing {
        server_side: match args.server_side.as_str() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        },
        force_conflicts: args.force_conflicts,
        force_replace: args.force_replace,
    }
}

/// Whether `--wait[=STRATEGY]` waits for readiness; helm's boolean values still work,
/// with its warning that they are deprecated.
pub(super) fn wait_enabled(value: Option<&str>) -> Result<bool> {
    Ok(match value {
        None | Some("hookOnly") => false,
        Some("watcher" | "legacy") => true,
        Some("true") => {
            crate::log::warn(
                "--wait=true is deprecated (boolean value) and can be replaced with --wait=watcher",
            );
            true
        }
        Some("false") => {
            crate::log::warn(
                "--wait=false is deprecated (boolean value) and can be replaced with --wait=hookOnly",
            );
            false
        }
        Some(other) => {
            let quoted = chartkit_yaml::gofmt::quote(other);
            return Err(Error::msg(format!(
                "invalid argument {quoted} for \"--wait\" flag: invalid wait input {quoted}. Valid inputs are watcher, hookOnly, and legacy"
            )));
        }
    })
}

fn waiting(args: &WaitArgs) -> Result<Waiting> {
    let wait = wait_enabled(args.wait.as_deref())?;
    Ok(Waiting {
        wait,
        wait_for_jobs: args.wait_for_jobs,
        timeout: timeout(&args.timeout)?,
    })
}

/// helm's `--dry-run[=MODE]`: `client`, `server` or `none`, or (with helm's warning that
/// they are deprecated) a bare flag or a boolean.
fn dry_run(args: &DryRunArgs) -> Result<DryRun> {
    let Some(value) = args.dry_run.as_deref() else {
        return Ok(DryRun::None);
    };
    let legacy = match value {
        "unset" => {
            crate::log::warn(
                "--dry-run is deprecated and should be replaced with '--dry-run=client'",
            );
            return Ok(DryRun::Client);
        }
        "client" => return Ok(DryRun::Client),
        "server" => return Ok(DryRun::Server),
        "none" => return Ok(DryRun::None),
        // Go's strconv.ParseBool.
        "1" | "t" | "T" | "TRUE" | "true" | "True" => DryRun::Client,
        "0" | "f" | "F" | "FALSE" | "false" | "False" => DryRun::None,
        other => {
            return Err(Error::msg(format!(
                "invalid dry-run value ({other:?}). Must be \"none\", \"server\", or \"client\""
            )));
        }
    };
    let mode = if legacy == DryRun::Client {
        "client"
    } else {
        "none"
    };
    crate::log::warn(&format!(
        "boolean '--dry-run={value}' flag is deprecated and must be replaced with '--dry-run={mode}'"
    ));
    Ok(legacy)
}

pub(super) fn rendering(args: &RenderArgs) -> crate::error::Result<Rendering> {
    Ok(Rendering {
        subchart_notes: args.render_subchart_notes,
        skip_schema_validation: args.skip_schema_validation,
        hide_secret: args.hide_secret,
        post_renderer: super::plugin::post_renderer(&args.post_render)?,
    })
}

/// How install and upgrade print the release: the `-o` format and `--hide-notes`, and
/// from the global flags `--debug` (with the values computed for the chart) and colour.
struct Printing<'a> {
    print: &'a ReleasePrintArgs,
    /// `--debug`: the chart, to compute the values from (the record does not keep
    /// subcharts, whose defaults helm shows too).
    chart: Option<chartkit_chart::Chart>,
    colour: bool,
}

impl<'a> Printing<'a> {
    fn new(
        print: &'a ReleasePrintArgs,
        global: &GlobalArgs,
        chart: &chartkit_chart::Chart,
    ) -> Self {
        let table = print.output == ReleaseOutput::Table;
        Printing {
            print,
            chart: (global.debug && table).then(|| chart.clone()),
            colour: table && release_colour::enabled(global.color.as_deref()),
        }
    }

    /// The release as helm's install and upgrade print it (a dry run's table has its
    /// hooks and manifest, which `status_text` adds for the "Dry run complete"
    /// description; `--debug` adds them always, with the values).
    fn print(&self, release: &Release) -> Result<()> {
        let text = match self.print.output {
            ReleaseOutput::Json => views::release_json(release),
            ReleaseOutput::Yaml => views::release_yaml(release),
            ReleaseOutput::Table => {
                let mut shown = release.clone();
                if self.print.hide_notes
                    && let Some(info) = shown.info.as_mut()
                {
                    info.notes.clear();
                }
                let text = match &self.chart {
                    Some(chart) => {
                        // helm coalesces the config over the chart as dependency
                        // processing left it (disabled subcharts gone, imports merged).
                        let config = release.config.clone().unwrap_or_default();
                        let options = chartkit_render::RenderOptions {
                            skip_schema_validation: true,
                            ..Default::default()
                        };
                        let computed = chartkit_render::prepare(chart.clone(), &config, &options)
                            .map(|(_, values)| values)
                            .unwrap_or(config);
                        views::debug_status_text(&shown, &computed)
                    }
                    None => views::status_text(&shown, None, None),
                };
                if self.colour {
                    release_colour::status_table(&text, release)
                } else {
                    text
                }
            }
        };
        crate::output::stdout_bytes(text.as_bytes())?;
        Ok(())
    }
}

pub(super) fn labels(pairs: &[String]) -> Result<BTreeMap<String, String>> {
    pairs
        .iter()
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => Ok((k.to_string(), v.to_string())),
            // pflag's words for a `stringToString` flag.
            None => Err(Error::msg(format!(
                "invalid argument {} for \"-l, --labels\" flag: {p} must be formatted as key=value",
                chartkit_yaml::gofmt::quote(p)
            ))),
        })
        .collect()
}

/// `install`; failures read `INSTALLATION FAILED: ...`, as helm's do.
pub fn install(
    args: InstallArgs,
    kube: &KubeArgs,
    global: &GlobalArgs,
    offline: bool,
) -> Result<ExitCode> {
    run_install(args, kube, global, offline).map_err(|e| e.context("INSTALLATION FAILED"))
}

/// The release name and the chart, from NAME CHART or CHART with --name-template or
/// --generate-name, in helm's order of preference and with its refusals.
fn name_and_chart(args: &InstallArgs) -> Result<(String, String)> {
    match args.positionals.as_slice() {
        [name, chart] => {
            if args.generate_name {
                return Err(Error::msg(
                    "cannot set --generate-name and also specify a name",
                ));
            }
            if args.name_template.is_some() {
                return Err(Error::msg(
                    "cannot set --name-template and also specify a name",
                ));
            }
            Ok((name.clone(), chart.clone()))
        }
        [chart] => {
            let name = if let Some(template) = &args.name_template {
                chartkit_engine::template_name(template).map_err(Error::new)?
            } else if args.generate_name {
                chartkit_engine::generated_name(chart, chrono::Utc::now().timestamp())
            } else {
                return Err(Error::msg(
                    "must either provide a name or specify --generate-name",
                ));
            };
            Ok((name, chart.clone()))
        }
        _ => Err(Error::msg(
            "\"chartkit install\" requires at most 2 arguments",
        )),
    }
}

fn run_install(
    args: InstallArgs,
    kube: &KubeArgs,
    global: &GlobalArgs,
    offline: bool,
) -> Result<ExitCode> {
    let (name, chart_ref) = name_and_chart(&args)?;
    let dry_run = dry_run(&args.dry_run)?;
    let chart = super::chart_source::load(
        &chart_ref,
        &args.source,
        args.dependency_update,
        true,
        offline,
    )?;
    let user_values = super::template::merge_values(&args.values)?;
    chartkit_render::check_installable(&chart)?;
    let options = InstallOptions {
        name,
        create_namespace: args.create_namespace,
        waiting: waiting(&args.wait)?,
        no_hooks: args.no_hooks,
        skip_crds: args.skip_crds,
        description: args.description.clone(),
        dry_run,
        atomic: rollback_on_failure(args.rollback_on_failure, args.atomic),
        writing: writing(&args.writing),
        labels: labels(&args.labels)?,
        take_ownership: args.take_ownership,
        replace: args.replace,
        rendering: rendering(&args.render)?,
    };
    let printing = Printing::new(&args.print, global, &chart);
    if dry_run == DryRun::Client {
        // No cluster at all: helm's default capabilities, and the namespace as given.
        let namespace = kube
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_string());
        let (release, warnings) =
            chartkit_engine::install_offline(chart, &user_values, &options, &namespace)
                .map_err(Error::new)?;
        for w in &warnings {
            crate::log::line(w);
        }
        printing.print(&release)?;
        return Ok(ExitCode::SUCCESS);
    }
    let (release, warnings) = runtime()?.block_on(async {
        let engine = engine(kube, "install").await?;
        engine
            .install(chart, &user_values, &options)
            .await
            .map_err(engine_error)
    })?;
    for w in &warnings {
        crate::log::line(w);
    }
    printing.print(&release)?;
    Ok(ExitCode::SUCCESS)
}

pub fn uninstall(args: UninstallArgs, kube: &KubeArgs) -> Result<ExitCode> {
    let propagation = match args.cascade.as_str() {
        "background" => Propagation::Background,
        "foreground" => Propagation::Foreground,
        "orphan" => Propagation::Orphan,
        other => {
            return Err(Error::msg(format!(
                "invalid cascade value ({other}). Must be \"background\", \"foreground\", or \"orphan\""
            )));
        }
    };
    let wait = wait_enabled(args.wait.as_deref())?;
    let timeout = timeout(&args.timeout)?;
    runtime()?.block_on(async {
        let engine = engine(kube, "uninstall").await?;
        for name in &args.releases {
            let options = UninstallOptions {
                name: name.clone(),
                keep_history: args.keep_history,
                no_hooks: args.no_hooks,
                waiting: Waiting {
                    wait,
                    wait_for_jobs: false,
                    timeout,
                },
                propagation,
                description: args.description.clone(),
                dry_run: args.dry_run,
                ignore_not_found: args.ignore_not_found,
            };
            let done = engine.uninstall(&options).await.map_err(Error::new)?;
            let mut text = String::new();
            if !done.kept.is_empty() {
                text.push_str("These resources were kept due to the resource policy:\n");
                for k in &done.kept {
                    text.push_str(k);
                    text.push('\n');
                }
                text.push('\n');
            }
            // Also for a release --ignore-not-found let pass, as helm words it.
            text.push_str(&format!("release \"{name}\" uninstalled\n"));
            crate::output::stdout_bytes(text.as_bytes())?;
        }
        Ok::<_, Error>(())
    })?;
    Ok(ExitCode::SUCCESS)
}

pub fn upgrade(
    args: UpgradeArgs,
    kube: &KubeArgs,
    global: &GlobalArgs,
    offline: bool,
) -> Result<ExitCode> {
    let dry_run = dry_run(&args.dry_run)?;
    let chart = super::chart_source::load(
        &args.chart,
        &args.source,
        args.dependency_update,
        true,
        offline,
    )?;
    let user_values = super::template::merge_values(&args.values)?;
    chartkit_render::check_installable(&chart)?;
    let values_mode = values_mode(
        args.reuse_values,
        args.reset_values,
        args.reset_then_reuse_values,
    );
    let labels = labels(&args.labels)?;
    let options = UpgradeOptions {
        name: args.release.clone(),
        values_mode,
        waiting: waiting(&args.wait)?,
        no_hooks: args.no_hooks,
        atomic: rollback_on_failure(args.rollback_on_failure, args.atomic),
        cleanup_on_fail: args.cleanup_on_fail,
        writing: writing(&args.writing),
        take_ownership: args.take_ownership,
        upgrade_crds: args.upgrade_crds,
        max_history: args.history_max,
        recover: args.recover,
        description: args.description.clone(),
        dry_run: dry_run != DryRun::None,
        labels: labels.clone(),
        rendering: rendering(&args.render)?,
    };
    let install = args.install.then(|| InstallOptions {
        name: args.release.clone(),
        create_namespace: args.create_namespace,
        waiting: options.waiting,
        no_hooks: args.no_hooks,
        skip_crds: args.skip_crds,
        description: args.description.clone(),
        dry_run,
        atomic: options.atomic,
        writing: writing(&args.writing),
        labels,
        take_ownership: args.take_ownership,
        replace: false,
        rendering: options.rendering.clone(),
    });
    let printing = Printing::new(&args.print, global, &chart);
    let (release, warnings, installed) = runtime()?.block_on(async {
        let engine = engine(kube, "upgrade").await?;
        engine
            .upgrade(chart, &user_values, &options, install.as_ref())
            .await
            // helm words only the upgrade's own failures so, not those of finding the
            // chart or of the cluster connection.
            .map_err(|e| engine_error(e).context("UPGRADE FAILED"))
    })?;
    for w in &warnings {
        crate::log::line(w);
    }
    let heading = if installed {
        format!(
            "Release {:?} does not exist. Installing it now.\n",
            args.release
        )
    } else {
        format!(
            "Release {:?} has been upgraded. Happy Helming!\n",
            args.release
        )
    };
    if args.print.output == ReleaseOutput::Table {
        crate::output::stdout_bytes(heading.as_bytes())?;
    }
    printing.print(&release)?;
    Ok(ExitCode::SUCCESS)
}

/// An engine error, with the next step when it has one.
fn engine_error(error: chartkit_engine::EngineError) -> Error {
    match &error {
        chartkit_engine::EngineError::Stuck(stuck) => {
            let hint = stuck.hint();
            Error::new(error).with_hint(hint)
        }
        chartkit_engine::EngineError::Wait(wait)
            if matches!(**wait, chartkit_cluster::WaitError::ConnectionLost { .. }) =>
        {
            Error::new(error).with_hint(
                "check that the API server is running; once it answers again, `chartkit history RELEASE` shows whether the release was left pending (`--recover` clears that)",
            )
        }
        chartkit_engine::EngineError::Storage(chartkit_release::StorageError::TooLarge {
            ..
        }) => Error::new(error).with_hint(
            "a release record holds the chart, the values and the rendered manifest, and must fit in one Secret (the API server takes 3 MiB a request, etcd 1.5 MiB an object): keep large data out of values, in a ConfigMap or volume of its own",
        ),
        _ => Error::new(error),
    }
}

pub fn rollback(args: RollbackArgs, kube: &KubeArgs) -> Result<ExitCode> {
    let options = RollbackOptions {
        name: args.release.clone(),
        revision: args.revision.unwrap_or(0),
        waiting: waiting(&args.wait)?,
        no_hooks: args.no_hooks,
        cleanup_on_fail: args.cleanup_on_fail,
        writing: writing(&args.writing),
        max_history: args.history_max,
        recover: args.recover,
        dry_run: dry_run(&args.dry_run)? != DryRun::None,
    };
    runtime()?.block_on(async {
        let engine = engine(kube, "rollback").await?;
        engine.rollback(&options).await.map_err(engine_error)
    })?;
    crate::output::stdout_bytes(b"Rollback was a success! Happy Helming!\n")?;
    Ok(ExitCode::SUCCESS)
}

/// `test`: prints the release's status with each test's phase (and the pods' logs with
/// `--logs`) whether or not a test failed, then fails if one did, as helm does.
pub fn test(args: TestArgs, kube: &KubeArgs) -> Result<ExitCode> {
    let mut options = TestOptions {
        name: args.release.clone(),
        timeout: timeout(&args.timeout)?,
        logs: args.logs,
        ..Default::default()
    };
    for filter in &args.filter {
        if let Some(name) = filter.strip_prefix("name=") {
            options.include.push(name.to_string());
        } else if let Some(name) = filter
            .strip_prefix('!')
            .map(str::trim_start)
            .and_then(|f| f.strip_prefix("name="))
        {
            options.exclude.push(name.to_string());
        }
    }
    let tested = runtime()?.block_on(async {
        let engine = engine(kube, "test").await?;
        engine.test(&options).await.map_err(Error::new)
    })?;
    let mut shown = tested.release.clone();
    if let Some(info) = shown.info.as_mut() {
        info.notes.clear();
    }
    let mut out = views::status_text(&shown, None, None);
    if let Some(logs) = &tested.logs {
        out.push('\n');
        out.push_str(logs);
    }
    crate::output::stdout_bytes(out.as_bytes())?;
    match tested.failure {
        Some(failure) => Err(Error::new(failure)),
        None => Ok(ExitCode::SUCCESS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration("5m"), Some(Duration::from_secs(300)));
        assert_eq!(parse_go_duration("5m0s"), Some(Duration::from_secs(300)));
        assert_eq!(parse_go_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_go_duration("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_go_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_go_duration("10"), None);
        assert_eq!(parse_go_duration("x"), None);
    }
}
