use std::process::ExitCode;

use crate::error::Context;
use chartkit_render::{
    OutputOptions, RenderError, RenderOptions, check_installable, parse_kube_version, render_logged,
};
use chartkit_values::ValueOptions;

use crate::cli::{KubeArgs, TemplateArgs, ValueArgs};
use crate::report::with_hint;

/// The user's values from the value flags, in Helm's order.
pub fn value_options(args: &ValueArgs) -> ValueOptions {
    ValueOptions {
        value_files: args.values.clone(),
        json_values: args.set_json.clone(),
        values: args.set.clone(),
        string_values: args.set_string.clone(),
        file_values: args.set_file.clone(),
        literal_values: args.set_literal.clone(),
    }
}

/// The user's values, with `-f` and `--set-file` URLs fetched as helm fetches them
/// (its `readFile`): http(s) and the schemes getter plugins serve through the
/// repository client's network; anything else is a path on disk.
pub fn merge_values(args: &ValueArgs) -> crate::error::Result<chartkit_yaml::Map> {
    let mut fetch = |path: &str| -> Option<Result<Vec<u8>, String>> {
        chartkit_plugin::getter::scheme_of(path)?;
        let client = match super::repo_support::client(false, 120) {
            Ok(client) => client,
            Err(error) => return Some(Err(error.to_string())),
        };
        let chartkit_repo_client::Network::Online(http) = &client.network else {
            return None;
        };
        let is_http = path.starts_with("http://") || path.starts_with("https://");
        if !is_http && http.getters().serving(path).is_none() {
            return None;
        }
        let entry = chartkit_repo_client::RepoEntry::for_url(path);
        Some(match http.get(path, &entry, false, None, None) {
            Ok(chartkit_repo_client::Fetched::Body { bytes, .. }) => Ok(bytes),
            Ok(chartkit_repo_client::Fetched::NotModified) => Ok(Vec::new()),
            Err(error) => Err(error.to_string()),
        })
    };
    Ok(value_options(args).merge_with(&mut super::StdinOnDemand, &mut fetch)?)
}

/// `--validate`: the cluster the chart is rendered for and checked against.
struct Cluster {
    runtime: tokio::runtime::Runtime,
    engine: chartkit_engine::Engine,
}

impl Cluster {
    /// Connects with the Kubernetes flags (`kube`, or their variables when the command was
    /// parsed without them), in the namespace the chart is rendered for.
    fn connect(kube: Option<&KubeArgs>, namespace: &str) -> crate::error::Result<Cluster> {
        let mut kube = kube.cloned().unwrap_or_else(KubeArgs::from_env);
        kube.namespace = Some(namespace.to_string());
        let runtime = super::release_write::runtime()?;
        let engine = runtime.block_on(super::release_write::engine(&kube, "template"))?;
        Ok(Cluster { runtime, engine })
    }
}

/// `helm template`'s `--dry-run`: whether it asks for the server's dry run (`server`,
/// as --validate does). Template is always a dry run, so `none` and false are refused;
/// a bare flag and true are `client`, with helm's warning that they are deprecated.
fn dry_run_is_server(value: Option<&str>) -> crate::error::Result<bool> {
    let quoted = |value: &str| chartkit_yaml::gofmt::quote(value);
    let refused = |value: &str| {
        crate::error::err!(
            "invalid dry-run value ({}). Must be \"server\" or \"client\"",
            quoted(value)
        )
    };
    match value {
        None | Some("client") => Ok(false),
        Some("server") => Ok(true),
        Some("unset") => {
            crate::log::warn(
                "--dry-run is deprecated and should be replaced with '--dry-run=client'",
            );
            Ok(false)
        }
        Some("none") => Err(refused("none")),
        // Go's strconv.ParseBool.
        Some(value @ ("1" | "t" | "T" | "TRUE" | "true" | "True")) => {
            crate::log::warn(&format!(
                "boolean '--dry-run={value}' flag is deprecated and must be replaced with '--dry-run=client'"
            ));
            Ok(false)
        }
        Some(value @ ("0" | "f" | "F" | "FALSE" | "false" | "False")) => Err(refused(value)),
        Some(other) => Err(crate::error::err!(
            "invalid dry-run value ({}). Must be \"none\", \"server\", or \"client\"",
            quoted(other)
        )),
    }
}

/// Renders a chart and prints it as `helm template` does.
pub fn run(
    args: TemplateArgs,
    offline: bool,
    kube: Option<&KubeArgs>,
) -> crate::error::Result<ExitCode> {
    // helm template presets the name `release-name` before it looks at
    // --generate-name, so the flag changes nothing there except refusing a given name.
    let (name, chart) = match args.positionals.as_slice() {
        [chart] => (None, chart.clone()),
        [name, chart] => (Some(name.clone()), chart.clone()),
        [_, _, extra @ ..] => crate::error::bail!(
            "expected at most two arguments, unexpected arguments: {}",
            extra.join(", ")
        ),
        [] => crate::error::bail!("\"chartkit template\" requires at least 1 argument"),
    };
    // Install's flags, checked as helm's flag parser checks them, before anything else.
    let install = &args.install;
    super::release_write::wait_enabled(install.wait.wait.as_deref())?;
    super::release_write::timeout(&install.wait.timeout)?;
    let labels = super::release_write::labels(&install.labels)?;
    super::release_write::rollback_on_failure(install.rollback_on_failure, install.atomic);
    let mut kube_version = match &args.kube_version {
        Some(text) => parse_kube_version(text)
            .map_err(|e| crate::error::err!("invalid kube version '{text}': {e}"))?,
        None => Default::default(),
    };
    let server_dry_run = dry_run_is_server(install.dry_run.as_deref())?;
    let (release_name, chart_path) = match (name, args.generate_name) {
        (None, _) => match &install.name_template {
            Some(template) => (
                chartkit_engine::template_name(template).map_err(crate::error::Error::new)?,
                chart,
            ),
            None => ("release-name".to_owned(), chart),
        },
        (Some(_), true) => {
            crate::error::bail!("cannot set --generate-name and also specify a name")
        }
        (Some(_), false) if install.name_template.is_some() => {
            crate::error::bail!("cannot set --name-template and also specify a name")
        }
        (Some(name), false) => (name, chart),
    };
    let mut api_versions = args.api_versions.clone();
    let user_values = merge_values(&args.values)?;
    let path = std::path::Path::new(&chart_path);
    if args.dependency_update && args.source.repo.is_none() && path.is_dir() {
        super::dependency::update_before(
            path,
            true,
            &super::repo_support::access(&args.source.access),
            offline,
        )?;
    }
    let chart = super::chart_source::load(&chart_path, &args.source, false, true, offline)?;
    // In helm's order: installable, then the apiVersion, then the release name.
    check_installable(&chart)?;
    if chart.metadata.api_version == chartkit_chart::API_VERSION_V3 {
        return Err(with_hint(
            crate::error::err!(
                "invalid chart apiVersion: v3 is Helm 4's experimental chart format, which helm does not render"
            ),
            "set `apiVersion: v2` in Chart.yaml",
        ));
    }
    validate_release_name(&release_name)?;
    chartkit_engine::check_user_labels(&labels).map_err(crate::error::Error::new)?;
    let cluster = match args.validate || server_dry_run {
        true => Some(Cluster::connect(kube, &args.namespace)?),
        false => None,
    };
    if let Some(cluster) = &cluster {
        // As helm's install does, the cluster's capabilities replace the flags'.
        (kube_version, api_versions) = cluster
            .runtime
            .block_on(cluster.engine.capabilities())
            .map_err(crate::error::Error::new)?;
        if !chartkit_render::crd_files(&chart).is_empty() {
            crate::log::warn(
                "This chart or one of its subcharts contains CRDs. Rendering may fail or contain inaccuracies.",
            );
        }
    }
    let options = RenderOptions {
        release_name: release_name.clone(),
        namespace: args.namespace.clone(),
        is_upgrade: args.is_upgrade,
        kube_version,
        api_versions,
        api_versions_from_cluster: cluster.is_some(),
        skip_schema_validation: args.skip_schema_validation,
        subchart_notes: args.render_subchart_notes,
        // The process ends after printing; let the OS reclaim the parse trees.
        free_on_return: false,
        memory_limit: super::memory_limit()?,
        post_renderer: super::plugin::post_renderer(&args.post_render)?,
        ..Default::default()
    };
    let mut warnings = Vec::new();
    let result = render_logged(chart, &user_values, &options, &mut warnings);
    for warning in &warnings {
        crate::log::line(warning);
    }
    let rendered = match result {
        Ok(rendered) => rendered,
        Err(RenderError::InvalidOutput { message, raw }) if args.debug => {
            crate::output::stdout_bytes(&raw)?;
            crate::error::bail!("{message}");
        }
        Err(RenderError::MemoryLimit { message, limit }) => {
            return Err(with_hint(
                crate::error::err!("{message}"),
                super::memory_limit_hint(limit),
            ));
        }
        Err(error) if error.has_debug_hint() && !args.debug => {
            return Err(with_hint(
                error,
                "run with --debug to print the rendered output even when it is not valid YAML",
            ));
        }
        Err(error) => return Err(crate::error::Error::new(error)),
    };
    if let Some(cluster) = &cluster {
        let manifest = chartkit_engine::release_manifest(&rendered, false);
        cluster
            .runtime
            .block_on(cluster.engine.validate_manifest(&release_name, &manifest))
            .map_err(crate::error::Error::new)?;
    }
    let output = OutputOptions {
        include_crds: args.include_crds,
        skip_tests: args.skip_tests,
        no_hooks: args.no_hooks,
        show_only: args.show_only.clone(),
    };
    let text = match &args.output_dir {
        Some(dir) => {
            let written = chartkit_render::write_output_dir(
                &rendered,
                &output,
                dir,
                args.use_release_name.then_some(release_name.as_str()),
            )
            .with_context(|| format!("cannot write to `{}`", dir.display()))?;
            if let Some(pattern) = args.show_only.first() {
                // helm writes every file, then looks for the --show-only templates in
                // what is left for stdout, which is nothing, and fails on the first.
                let written = written.strip_suffix('\n').unwrap_or(&written);
                crate::output::stdout_bytes(written.as_bytes())?;
                return Err(with_hint(
                    chartkit_render::ShowOnlyError(pattern.replace('\\', "/")),
                    "--output-dir writes every template; --show-only works only without it",
                ));
            }
            written
        }
        None => chartkit_render::template_output(&rendered, &output)?,
    };
    crate::output::stdout_bytes(text.as_bytes())?;
    // Same reason: freeing the rendered chart would only delay the exit.
    std::mem::forget(rendered);
    Ok(ExitCode::SUCCESS)
}

/// Helm's release name rule: a lowercase RFC 1123 subdomain of at most 53 characters.
fn validate_release_name(name: &str) -> crate::error::Result<()> {
    let label_ok = |label: &str| {
        !label.is_empty()
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    if name.is_empty() || name.len() > 53 || !name.split('.').all(label_ok) {
        crate::error::bail!(
            "release name {name:?}: invalid release name, must match regex ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ and the length must not be longer than 53"
        );
    }
    Ok(())
}
