//! Helm's engine: every template of the chart and its enabled subcharts parsed into one
//! set, then each non-partial template executed with its chart's data, in Helm's order.

use std::collections::BTreeMap;
use std::rc::Rc;

use chartkit_chart::Chart;
use chartkit_template::objects::Files;
use chartkit_template::{Entries, MapKind, MissingKey, TemplateSet, Value, helm_parse_order};
use chartkit_yaml::Map;

use crate::chart_data::chart_value;

/// What every chart's templates see besides their own values and metadata.
pub struct RenderContext {
    pub release: Value,
    pub capabilities: Value,
    pub strict: bool,
    pub lint_mode: bool,
    /// See `RenderOptions::free_on_return`.
    pub free_on_return: bool,
}

/// One template to render: its full name, the chart it belongs to (index into the
/// chart data) and its text.
struct Source<'a> {
    name: String,
    base_path: String,
    scope: usize,
    /// Borrowed from the chart unless the file is not valid UTF-8.
    text: std::borrow::Cow<'a, str>,
}

/// Renders every template; returns each template's output by full name
/// (`chart/templates/x.yaml`, `chart/charts/sub/templates/y.yaml`).
pub fn render_templates(
    chart: &Chart,
    values: &Map,
    context: &RenderContext,
) -> Result<BTreeMap<String, String>, String> {
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
    set.add_all(sources.iter().map(|s| (s.name.as_str(), &*s.text)))
        .map_err(|e| e.helm_message())?;

    sources.sort_by(|a, b| helm_parse_order(&a.name, &b.name));
    let mut rendered = BTreeMap::new();
    for source in &sources {
        let base = source.name.rsplit('/').next().unwrap_or(&source.name);
        if base.starts_with('_') {
            continue;
        }
        let data = scopes[source.scope].clone();
        set_template(&data, &source.name, &source.base_path);
        let out = set
            .render(&source.name, data)
            .map_err(|e| e.helm_message())?;
        rendered.insert(source.name.clone(), out);
    }
    if !context.free_on_return {
        std::mem::forget(set);
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
        sources.push(Source {
            name: format!("{path}/{}", template.name),
            base_path: format!("{path}/templates"),
            scope,
            text: template.text(),
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
