//! `.Chart` as Helm 4 builds it: the metadata struct turned into a map under its Go field
//! names (`Name`, `AppVersion`, `Maintainers[].Email`, ...) plus `IsRoot`.

use std::rc::Rc;

use chartkit_chart::{Dependency, Metadata};
use chartkit_template::{Entries, MapKind, Value};

fn string_list(items: &[String]) -> Value {
    Value::list(items.iter().map(|s| Value::str(s)).collect())
}

fn entry(map: &mut Entries, key: &str, value: Value) {
    map.insert(Rc::from(key), value);
}

fn dependency(d: &Dependency) -> Value {
    let mut m = Entries::new();
    entry(&mut m, "Name", Value::str(&d.name));
    entry(&mut m, "Version", Value::str(&d.version));
    entry(&mut m, "Repository", Value::str(&d.repository));
    entry(&mut m, "Condition", Value::str(&d.condition));
    entry(&mut m, "Tags", string_list(&d.tags));
    entry(&mut m, "Enabled", Value::Bool(d.enabled));
    entry(
        &mut m,
        "ImportValues",
        Value::list(d.import_values.iter().map(Value::from_data).collect()),
    );
    entry(&mut m, "Alias", Value::str(&d.alias));
    Value::map(m)
}

/// The `.Chart` map for a chart's templates.
pub fn chart_value(metadata: &Metadata, is_root: bool) -> Value {
    let mut m = Entries::new();
    entry(&mut m, "Name", Value::str(&metadata.name));
    entry(&mut m, "Home", Value::str(&metadata.home));
    entry(&mut m, "Sources", string_list(&metadata.sources));
    entry(&mut m, "Version", Value::str(&metadata.version));
    entry(&mut m, "Description", Value::str(&metadata.description));
    entry(&mut m, "Keywords", string_list(&metadata.keywords));
    let maintainers = metadata
        .maintainers()
        .map(|mt| {
            let mut e = Entries::new();
            entry(&mut e, "Name", Value::str(&mt.name));
            entry(&mut e, "Email", Value::str(&mt.email));
            entry(&mut e, "URL", Value::str(&mt.url));
            Value::map(e)
        })
        .collect();
    entry(&mut m, "Maintainers", Value::list(maintainers));
    entry(&mut m, "Icon", Value::str(&metadata.icon));
    entry(&mut m, "APIVersion", Value::str(&metadata.api_version));
    entry(&mut m, "Condition", Value::str(&metadata.condition));
    entry(&mut m, "Tags", Value::str(&metadata.tags));
    entry(&mut m, "AppVersion", Value::str(&metadata.app_version));
    entry(&mut m, "Deprecated", Value::Bool(metadata.deprecated));
    // A `map[string]string`, nil without annotations: it reads like an empty map, but
    // `toJson` writes `null`. (An explicit `annotations: {}` is an empty map in Helm,
    // which the metadata model does not tell from no annotations.)
    let annotations = if metadata.annotations.is_empty() {
        Value::nil_map(MapKind::String)
    } else {
        Value::map_of(
            MapKind::String,
            metadata
                .annotations
                .iter()
                .map(|(k, v)| (Rc::from(k.as_str()), Value::str(v)))
                .collect(),
        )
    };
    entry(&mut m, "Annotations", annotations);
    entry(&mut m, "KubeVersion", Value::str(&metadata.kube_version));
    entry(
        &mut m,
        "Dependencies",
        Value::list(metadata.dependencies().map(dependency).collect()),
    );
    entry(&mut m, "Type", Value::str(&metadata.chart_type));
    entry(&mut m, "IsRoot", Value::Bool(is_root));
    Value::map(m)
}
