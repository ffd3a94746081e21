//! The render pipeline: what `helm install` does up to the point where it talks to a
//! cluster, and what `helm template` prints.
//!
//! [`render`] takes a loaded chart and the user's values and returns the release's
//! manifests and hooks in Helm's install order; [`template_output`] prints them as
//! `helm template` does. Install, upgrade and lint call [`render`] too.

mod capabilities;
mod chart_data;
mod engine;
mod manifests;
mod output;
mod post_render;

use std::collections::BTreeMap;
use std::rc::Rc;

use chartkit_chart::Chart;
use chartkit_template::{Entries, Output, Value};
use chartkit_yaml::Map;

pub use capabilities::{
    DEFAULT_API_VERSIONS, DEFAULT_KUBE_VERSION, KubeVersion, parse_kube_version,
};
/// The memory limit of a render unless the caller sets one.
pub use chartkit_template::DEFAULT_MEMORY_LIMIT;
pub use manifests::{
    Head, Hook, INSTALL_ORDER, Manifest, UNINSTALL_ORDER, kind_order, parse_head, sort_manifests,
    split_manifests, uninstall_kind_order,
};
pub use output::{OutputOptions, ShowOnlyError, glob_match, template_output, write_output_dir};
pub use post_render::{FILENAME_ANNOTATION, PostRenderer};

/// Release facts and switches for one render.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    pub release_name: String,
    pub namespace: String,
    pub revision: i64,
    pub is_upgrade: bool,
    pub kube_version: KubeVersion,
    /// Added to Helm's default API versions (`--api-versions`), or with
    /// `api_versions_from_cluster` the whole set.
    pub api_versions: Vec<String>,
    /// `api_versions` is what a cluster serves, which replaces Helm's defaults as it does
    /// in helm's install (and `template --validate`).
    pub api_versions_from_cluster: bool,
    pub skip_schema_validation: bool,
    /// `missingkey=error`, as `helm lint --strict` renders.
    pub strict: bool,
    /// Helm's lint mode: `required` and `fail` do not fail.
    pub lint_mode: bool,
    /// Render subcharts' NOTES.txt too.
    pub subchart_notes: bool,
    /// Whether the parsed templates are freed when rendering ends (the default). A
    /// process that exits right after rendering sets it to false: freeing a large
    /// chart's parse trees costs more than parsing them did (an eighth of a
    /// kube-prometheus-stack render), and the operating system reclaims the memory at
    /// exit anyway, as clang's `-disable-free` does for the same reason.
    pub free_on_return: bool,
    /// The bytes rendering may build: template output and the strings and lists that
    /// template functions make (`chartkit_template::MemoryBudget`). Going over it fails
    /// the render with [`RenderError::MemoryLimit`].
    pub memory_limit: u64,
    /// `--post-renderer`: the rendered files (hooks too) go through it before they are
    /// sorted, as in helm 4.
    pub post_renderer: Option<PostRenderer>,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            release_name: "release-name".into(),
            namespace: "default".into(),
            revision: 1,
            is_upgrade: false,
            kube_version: KubeVersion::default(),
            api_versions: Vec::new(),
            api_versions_from_cluster: false,
            skip_schema_validation: false,
            strict: false,
            lint_mode: false,
            subchart_notes: false,
            free_on_return: true,
            memory_limit: chartkit_template::DEFAULT_MEMORY_LIMIT,
            post_renderer: None,
        }
    }
}

/// A rendered release.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The chart after dependency processing (disabled subcharts removed, aliases
    /// applied, imports merged into values).
    pub chart: Chart,
    /// The values templates saw (`.Values` of the top chart).
    pub values: Map,
    /// Ordinary documents in install order.
    pub manifests: Vec<Manifest>,
    /// Hook documents in install order.
    pub hooks: Vec<Hook>,
    pub notes: String,
    /// Every template's raw output by name, NOTES.txt excluded (for linting).
    pub files: BTreeMap<String, String>,
    /// What Helm logs while rendering, in its words and order: a deprecated chart,
    /// coalescing's notices (`warning: skipped value for X: Not a table.`), conditions
    /// and tags that are not booleans, `import-values` naming a table that is not there,
    /// hooks of unknown events skipped. Each is the line Helm's log writes
    /// (`level=WARN msg="..." key=value`, made by `chartkit_values::golog`).
    pub warnings: Vec<String>,
}

/// Why a render failed. `Display` gives Helm's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// Before templates run: dependencies and coalescing.
    #[error("{0}")]
    Values(String),
    /// The coalesced values break a chart's values.schema.json.
    #[error("{0}")]
    Schema(String),
    /// The chart itself cannot be installed (a library chart, missing dependencies).
    #[error("{0}")]
    Chart(String),
    /// Template parsing or execution, an incompatible kubeVersion, or output that is not
    /// YAML. Helm has created the release object by then, so `helm template` adds its
    /// hint about `--debug`.
    #[error("{0}")]
    Render(String),
    /// The templates ran but their output is not valid YAML. `raw` is what
    /// `helm template --debug` prints then, so the author can see the broken document:
    /// every non-empty output under its `# Source:` line, in name order.
    #[error("{message}")]
    InvalidOutput { message: String, raw: Vec<u8> },
    /// `--post-renderer` failed, or what it wrote could not be read back.
    #[error("{0}")]
    PostRender(String),
    /// A template went over the render's memory limit (`limit` bytes), which Helm does
    /// not have: its message names the template, line and function.
    #[error("{message}")]
    MemoryLimit { message: String, limit: u64 },
}

impl RenderError {
    /// Whether `helm template` appends "Use --debug flag to render out invalid YAML".
    pub fn has_debug_hint(&self) -> bool {
        matches!(
            self,
            RenderError::Render(_) | RenderError::InvalidOutput { .. }
        )
    }
}

/// Helm's `checkIfInstallable` and `CheckDependencies`, run before installing a chart.
pub fn check_installable(chart: &Chart) -> Result<(), RenderError> {
    let kind = chart.metadata.chart_type.as_str();
    if !(kind.is_empty() || kind == "application") {
        return Err(RenderError::Chart(format!(
            "{kind} charts are not installable"
        )));
    }
    let missing: Vec<&str> = chart
        .metadata
        .dependencies()
        .filter(|d| !chart.dependencies.iter().any(|c| c.name() == d.name))
        .map(|d| d.name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(RenderError::Chart(format!(
            "an error occurred while checking for chart dependencies. You may need to run `helm dependency build` to fetch missing dependencies: found in Chart.yaml, but missing in charts/ directory: {}",
            missing.join(", ")
        )));
    }
    Ok(())
}

/// Renders a chart as `helm install --dry-run=client` does.
pub fn render(
    chart: Chart,
    user_values: &Map,
    options: &RenderOptions,
) -> Result<Rendered, RenderError> {
    let mut warnings = Vec::new();
    let mut rendered = render_logged(chart, user_values, options, &mut warnings)?;
    rendered.warnings = warnings;
    Ok(rendered)
}

/// [`render`], adding what Helm would log on the way (see [`Rendered::warnings`]) to
/// `warnings` as it happens, so that a caller can print them also when rendering fails,
/// as Helm does. The returned [`Rendered::warnings`] is empty.
pub fn render_logged(
    chart: Chart,
    user_values: &Map,
    options: &RenderOptions,
    warnings: &mut Vec<String>,
) -> Result<Rendered, RenderError> {
    with_room_for_deep_values(user_values, || {
        render_with_stack(chart, user_values, options, warnings)
    })
}

/// Values may nest 10,000 levels deep (go-yaml's limit), and the template engine's
/// values and functions (`merge`, `toToml`, dropping a list of lists...) walk them
/// recursively. chartkit's own walks grow the stack level by level; for the rest a
/// render gets a large stack segment: always on a thread with less than a main
/// thread's stack left (rayon's and tokio's workers have 2 MiB), and also on the main
/// thread when the user's values are deep. Nothing is allocated for a shallow render
/// on the main thread. (A value `fromYaml` builds deep on the main thread relies on
/// the level-by-level growth alone.)
fn with_room_for_deep_values<R>(values: &Map, f: impl FnOnce() -> R) -> R {
    const MAIN_THREAD_STACK: usize = 6 << 20;
    const SEGMENT: usize = 64 << 20;
    const DEEP: usize = 1_000;
    if depth_exceeds(values, DEEP) {
        stacker::grow(SEGMENT, f)
    } else {
        stacker::maybe_grow(MAIN_THREAD_STACK, SEGMENT, f)
    }
}

/// Whether any value in `values` is nested more than `limit` levels deep.
fn depth_exceeds(values: &Map, limit: usize) -> bool {
    let mut pending: Vec<(&chartkit_yaml::Value, usize)> =
        values.values().map(|v| (v, 1)).collect();
    while let Some((value, depth)) = pending.pop() {
        if depth > limit {
            return true;
        }
        match value {
            chartkit_yaml::Value::Seq(items) => {
                pending.extend(items.iter().map(|v| (v, depth + 1)))
            }
            chartkit_yaml::Value::Map(map) => pending.extend(map.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    false
}

fn render_with_stack(
    chart: Chart,
    user_values: &Map,
    options: &RenderOptions,
    warnings: &mut Vec<String>,
) -> Result<Rendered, RenderError> {
    if chart.metadata.deprecated {
        warnings.push(chartkit_values::golog::warn(
            "this chart is deprecated",
            &[],
        ));
    }
    let (chart, values) = prepare_values(chart, user_values, warnings)?;
    // Schema validation (compiling the schemas is the slow part) does not depend on the
    // templates, so it runs beside them; its error still wins, as it comes first in Helm.
    let validate = !options.skip_schema_validation && has_schema(&chart);
    let (schema, files) = std::thread::scope(|scope| {
        let check = validate.then(|| {
            scope.spawn(|| {
                with_room_for_deep_values(&values, || {
                    chartkit_values::validate_chart_values(&chart, &values)
                })
            })
        });
        let files = check_kube_version(&chart, options)
            .and_then(|()| render_outputs_logged(&chart, &values, options, warnings));
        let schema = check.map(|handle| {
            handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
        (schema, files)
    });
    if let Some(Err(report)) = schema {
        return Err(RenderError::Schema(report));
    }
    let mut outputs = files?;

    let root_notes = format!("{}/templates/NOTES.txt", chart.name());
    let mut notes = String::new();
    let note_names: Vec<String> = outputs
        .keys()
        .filter(|k| k.ends_with("NOTES.txt"))
        .cloned()
        .collect();
    for name in note_names {
        let text = outputs
            .remove(&name)
            .map(Output::into_text_lossy)
            .unwrap_or_default();
        if options.subchart_notes || name == root_notes {
            if !notes.is_empty() {
                notes.push('\n');
            }
            notes.push_str(&text);
        }
    }

    if let Some(renderer) = &options.post_renderer {
        outputs = post_render::apply(outputs, renderer)?;
    }
    let (hooks, manifests) =
        sort_manifests(&outputs, warnings).map_err(|message| RenderError::InvalidOutput {
            message,
            raw: output::invalid_output(&outputs),
        })?;
    let files = outputs
        .into_iter()
        .map(|(name, output)| (name, output.into_text_lossy()))
        .collect();
    Ok(Rendered {
        chart,
        values,
        manifests,
        hooks,
        notes,
        files,
        warnings: Vec::new(),
    })
}

/// Dependency processing, coalescing and schema validation: the chart as templates will
/// see it, with the values of its top chart.
pub fn prepare(
    chart: Chart,
    user_values: &Map,
    options: &RenderOptions,
) -> Result<(Chart, Map), RenderError> {
    prepare_logged(chart, user_values, options, &mut Vec::new())
}

/// [`prepare`], adding what Helm logs on the way to `warnings`.
pub fn prepare_logged(
    chart: Chart,
    user_values: &Map,
    options: &RenderOptions,
    warnings: &mut Vec<String>,
) -> Result<(Chart, Map), RenderError> {
    let (chart, values) = prepare_values(chart, user_values, warnings)?;
    if !options.skip_schema_validation {
        chartkit_values::validate_chart_values(&chart, &values).map_err(RenderError::Schema)?;
    }
    Ok((chart, values))
}

/// [`prepare`] without the schema validation.
fn prepare_values(
    mut chart: Chart,
    user_values: &Map,
    warnings: &mut Vec<String>,
) -> Result<(Chart, Map), RenderError> {
    chartkit_values::process_dependencies(&mut chart, user_values, warnings)
        .map_err(|e| RenderError::Values(e.to_string()))?;
    let values = chartkit_values::coalesce_values(&chart, user_values, warnings)
        .map_err(|e| RenderError::Values(e.to_string()))?;
    Ok((chart, values))
}

fn has_schema(chart: &Chart) -> bool {
    chart.schema.is_some() || chart.dependencies.iter().any(has_schema)
}

/// The chart's `kubeVersion` constraint against the cluster's version.
fn check_kube_version(chart: &Chart, options: &RenderOptions) -> Result<(), RenderError> {
    if chart.metadata.kube_version.is_empty()
        || chartkit_values::is_compatible_range(
            &chart.metadata.kube_version,
            &options.kube_version.version,
        )
    {
        return Ok(());
    }
    Err(RenderError::Render(format!(
        "chart requires kubeVersion: {} which is incompatible with Kubernetes {}",
        chart.metadata.kube_version, options.kube_version.git_version
    )))
}

/// Executes every template of a prepared chart; each template's output by full name.
pub fn render_files(
    chart: &Chart,
    values: &Map,
    options: &RenderOptions,
) -> Result<BTreeMap<String, String>, RenderError> {
    Ok(render_outputs(chart, values, options)?
        .into_iter()
        .map(|(name, output)| (name, output.into_text_lossy()))
        .collect())
}

/// [`render_files`], each output as the template wrote it: text, or bytes that are not
/// UTF-8.
pub fn render_outputs(
    chart: &Chart,
    values: &Map,
    options: &RenderOptions,
) -> Result<BTreeMap<String, Output>, RenderError> {
    render_outputs_logged(chart, values, options, &mut Vec::new())
}

/// [`render_outputs`], adding what the templates log (lint mode's `required` and
/// `fail`) to `log`.
pub fn render_outputs_logged(
    chart: &Chart,
    values: &Map,
    options: &RenderOptions,
    log: &mut Vec<String>,
) -> Result<BTreeMap<String, Output>, RenderError> {
    let context = engine::RenderContext {
        release: release_value(options),
        capabilities: capabilities::capabilities(
            &options.kube_version,
            &options.api_versions,
            options.api_versions_from_cluster,
        ),
        strict: options.strict,
        lint_mode: options.lint_mode,
        free_on_return: options.free_on_return,
        memory_limit: options.memory_limit,
    };
    engine::render_templates(chart, values, &context, log)
}

fn release_value(options: &RenderOptions) -> Value {
    let mut release = Entries::new();
    release.insert(Rc::from("Name"), Value::str(&options.release_name));
    release.insert(Rc::from("Namespace"), Value::str(&options.namespace));
    release.insert(Rc::from("IsUpgrade"), Value::Bool(options.is_upgrade));
    release.insert(Rc::from("IsInstall"), Value::Bool(!options.is_upgrade));
    release.insert(Rc::from("Revision"), Value::Int(options.revision));
    release.insert(Rc::from("Service"), Value::str("Helm"));
    Value::map(release)
}

/// CRD files of the rendered chart and its enabled subcharts, named as Helm names them
/// (`chart/crds/x.yaml`, `chart/charts/sub/crds/y.yaml`), in load order.
pub fn crd_files(chart: &Chart) -> Vec<(String, String)> {
    let mut out = Vec::new();
    collect_crds(chart, chart.name().to_owned(), &mut out);
    out
}

fn collect_crds(chart: &Chart, path: String, out: &mut Vec<(String, String)>) {
    for file in &chart.files {
        let lower = file.name.to_ascii_lowercase();
        if file.name.starts_with("crds/")
            && (lower.ends_with(".yaml") || lower.ends_with(".yml") || lower.ends_with(".json"))
        {
            out.push((format!("{path}/{}", file.name), file.text().into_owned()));
        }
    }
    for sub in &chart.dependencies {
        collect_crds(sub, format!("{path}/charts/{}", sub.name()), out);
    }
}
