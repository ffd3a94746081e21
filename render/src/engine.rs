//! Helm's engine: every template of the chart and its enabled subcharts parsed into one
//! set, then each non-partial template executed with its chart's data, in Helm's order.

use std::collections::BTreeMap;
use std::rc::Rc;

use chartkit_chart::Chart;
use chartkit_template::objects::Files;
use chartkit_template::{
    Entries, MapKind, MemoryBudget, MissingKey, Output, TemplateSet, Value, helm_parse_order,
};
use chartkit_yaml::Map;

use crate::RenderError;
use crate::chart_data::chart_value;

/// What every chart's templates see besides their own values and metadata.
pub struct RenderContext {
    pub release: Value,
    pub capabilities: Value,
    pub strict: bool,
    pub lint_mode: bool,
    /// See `RenderOptions::free_on_return`.
    pub free_on_return: bool,
    /// See `RenderOptions::memory_limit`.
    pub memory_limit: u64,
}

/// One template to render: its full name, the chart it belongs to (index into the
/// chart data) and its text.
struct Source<'a> {
    name: String,
    base_path: String,
    scope: usize,
    /// Borrowed from the chart unless the file is not valid UTF-8, when its bytes are
    /// carried as `chartkit_template::gostr::source_text` says (`binary`).
    text: std::borrow::Cow<'a, str>,
    binary: bool,
}

/// Renders every template; returns each template's output by full name
/// (`chart/templates/x.yaml`, `chart/charts/sub/templates/y.yaml`): text, or bytes when
/// a template wrote bytes that are not UTF-8.
///
/// What the templates log on the way (lint mode's `required` and `fail`) is added to
/// `log`, also when a template fails.
pub fn render_templates(
    chart: &Chart,
    values: &Map,
    context: &RenderContext,
    log: &mut Vec<String>,
) -> Result<BTreeMap<String, Output>, RenderError> {
    let mut sources = Vec::new();
    let mut scopes = Vec::new();
    let root_values = Value::values_from_data(values);
    collect(
        chart,
        chart.name().to_owned(),
        true,
        root_values,
        context,
        &mut sources,
        &mut scopes,
    );

    let mut set = TemplateSet::new();
    if context.strict {
        set.set_missing_key(MissingKey::Error);
    }
    set.set_lint_mode(context.lint_mode);
    set.add_all_sources(
        sources
            .iter()
            .map(|s| (s.name.as_str(), &*s.text, s.binary)),
    )
    .map_err(|e| RenderError::Render(e.helm_message()))?;

    sources.sort_by(|a, b| helm_parse_order(&a.name, &b.name));
    // One budget for the chart: each template may build what the outputs kept so far
    // leave of the limit. What a template built and dropped is free again after it.
    let mut budget = MemoryBudget::new(context.memory_limit);
    let mut kept: u64 = 0;
    let result = execute_all(&set, &sources, &scopes, context, &mut budget, &mut kept);
    log.extend(set.take_log());
    let rendered = result?;
    if !context.free_on_return {
        std::mem::forget(set);
    }
    Ok(rendered)
}

/// Executes every template that is not a partial, in Helm's order.
fn execute_all(
    set: &TemplateSet,
    sources: &[Source<'_>],
    scopes: &[Value],
    context: &RenderContext,
    budget: &mut MemoryBudget,
    kept: &mut u64,
) -> Result<BTreeMap<String, Output>, RenderError> {
    let mut rendered = BTreeMap::new();
    for source in sources {
        let base = source.name.rsplit('/').next().unwrap_or(&source.name);
        if base.starts_with('_') {
            continue;
        }
        let data = scopes[source.scope].clone();
        set_template(&data, &source.name, &source.base_path);
        let out = set
            .render_output_within(&source.name, data, budget)
            .map_err(|e| {
                if e.is_memory_limit() {
                    RenderError::MemoryLimit {
                        message: e.helm_message(),
                        limit: context.memory_limit,
                    }
                } else {
                    RenderError::Render(e.helm_message())
                }
            })?;
        *kept += out.len() as u64;
        budget.used = *kept;
        rendered.insert(source.name.clone(), out);
    }
    Ok(rendered)
}

/// Helm's `recAllTpls`: builds the chart's data map (shared by all its templates and
/// exposed to its parent as `.Subcharts.NAME`) and lists its templates.
fn collect<'a>(
    chart: &'a Chart,
    path: String,
    is_root: bool,
    values: Value,
    context: &RenderContext,
    sources: &mut Vec<Source<'a>>,
    scopes: &mut Vec<Value>,
) -> Value {
    let subcharts = Value::empty_map();
    let mut top = Entries::new();
    top.insert(Rc::from("Chart"), chart_value(&chart.metadata, is_root));
    top.insert(
        Rc::from("Files"),
        Files::new(chart.files.iter().map(|f| (f.name.clone(), f.data.clone()))).into_value(),
    );
    top.insert(Rc::from("Release"), context.release.clone());
    top.insert(Rc::from("Capabilities"), context.capabilities.clone());
    top.insert(Rc::from("Values"), values.clone());
    top.insert(Rc::from("Subcharts"), subcharts.clone());
    let data = Value::map_of(MapKind::Values, top);
    let scope = scopes.len();
    scopes.push(data.clone());

    for sub in &chart.dependencies {
        let section = match &values {
            Value::Map(m) => match m.get(sub.name()) {
                Some(Value::Map(inner)) => Value::map_of(MapKind::Values, inner.borrow().clone()),
                _ => Value::map_of(MapKind::Values, Entries::new()),
            },
            _ => Value::map_of(MapKind::Values, Entries::new()),
        };
        let sub_path = format!("{path}/charts/{}", sub.name());
        let sub_data = collect(sub, sub_path, false, section, context, sources, scopes);
        if let Value::Map(m) = &subcharts {
            m.borrow_mut().insert(Rc::from(sub.name()), sub_data);
        }
    }

    let library = chart.metadata.chart_type.eq_ignore_ascii_case("library");
    for template in &chart.templates {
        let base = template.name.rsplit('/').next().unwrap_or(&template.name);
        if library && !base.starts_with('_') {
            continue;
        }
        let (text, binary) = chartkit_template::gostr::source_text(&template.data);
        sources.push(Source {
            name: format!("{path}/{}", template.name),
            base_path: format!("{path}/templates"),
            scope,
            text,
            binary,
        });
    }
    data
}

/// Helm sets `.Template` on the shared data map right before executing each file.
fn set_template(data: &Value, name: &str, base_path: &str) {
    if let Value::Map(m) = data {
        let mut template = Entries::new();
        template.insert(Rc::from("Name"), Value::str(name));
        template.insert(Rc::from("BasePath"), Value::str(base_path));
        m.borrow_mut().insert(
            Rc::from("Template"),
            Value::map_of(MapKind::Values, template),
        );
    }
}

#[cfg(test)]
mod tests {
    use chartkit_chart::{File, LoadOptions, load_files};

    use crate::{RenderError, RenderOptions, render_files};

    fn render_with_limit(templates: &[(&str, &str)], limit: u64) -> Result<usize, RenderError> {
        let mut files = vec![File::new(
            "Chart.yaml",
            b"apiVersion: v2\nname: c\nversion: 0.1.0\n".as_slice(),
        )];
        files.extend(
            templates.iter().map(|(name, text)| {
                File::new(format!("templates/{name}"), text.as_bytes().to_vec())
            }),
        );
        let chart = load_files(files, "c", &LoadOptions::default()).unwrap();
        let options = RenderOptions {
            memory_limit: limit,
            ..Default::default()
        };
        render_files(&chart, &chartkit_yaml::Map::new(), &options)
            .map(|files| files.values().map(String::len).sum())
    }

    /// Each template alone fits; the chart's outputs together do not, and the template
    /// whose output passes the limit is the one named.
    #[test]
    fn the_templates_of_a_chart_share_one_memory_limit() {
        let template = "{{ range 30 }}0123456789012345678901234567890123456789{{ end }}";
        let one = render_with_limit(&[("a.yaml", template)], 20_000).unwrap();
        assert_eq!(one, 1200);
        let many: Vec<(String, &str)> = (0..20)
            .map(|i| (format!("t{i:02}.yaml"), template))
            .collect();
        let many: Vec<(&str, &str)> = many.iter().map(|(n, t)| (n.as_str(), *t)).collect();
        match render_with_limit(&many, 20_000) {
            Err(RenderError::MemoryLimit { message, limit }) => {
                assert_eq!(limit, 20_000);
                // Helm renders in reverse name order, t19 first. After thirteen kept
                // outputs (15.6 KB) the fourteenth, t06, has no room for its 1200
                // bytes beside the 4 KiB a running template holds.
                assert!(
                    message.starts_with("c/templates/t06.yaml:1:14"),
                    "{message}"
                );
                assert!(message.contains("rendering memory limit of 19.5 KiB exceeded"));
            }
            other => panic!("expected the memory limit, got {other:?}"),
        }
    }
}
