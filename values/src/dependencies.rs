//! Dependency processing before a render, as Helm 4's `ProcessDependencies`: subcharts
//! are matched to Chart.yaml entries (name and version range), copied under their alias,
//! enabled or disabled by `tags` and `condition`, and `import-values` copy values from
//! children into parents.

use chartkit_chart::{Chart, Dependency};
use chartkit_version::{Version, VersionRange};
use chartkit_yaml::{Map, Value};

use crate::coalesce::{CoalesceError, coalesce_values, merge_tables, merge_values};
use crate::golog::{go_quote, warn};
use crate::path::{path_value, table};

/// Helm's `ProcessDependencies`: removes disabled subcharts (recursively) and applies
/// `import-values`, updating each chart's default values. What Helm would log (a
/// condition or tag that is not a boolean, an import of a table that is not there,
/// coalescing's warnings) is added to `warnings` in Helm's words.
pub fn process_dependencies(
    chart: &mut Chart,
    values: &Map,
    warnings: &mut Vec<String>,
) -> Result<(), CoalesceError> {
    process_enabled(chart, values, "", warnings)?;
    process_imports(chart, warnings);
    Ok(())
}

/// Helm's `IsCompatibleRange`: whether `version` satisfies `constraint`; unparsable
/// versions or constraints never do.
pub fn is_compatible_range(constraint: &str, version: &str) -> bool {
    let (Ok(version), Ok(range)) = (Version::parse(version), VersionRange::parse(constraint))
    else {
        return false;
    };
    range.matches(&version)
}

fn declares(dependency: &Dependency, chart: &Chart) -> bool {
    chart.name() == dependency.name
        && is_compatible_range(&dependency.version, &chart.metadata.version)
}

fn process_enabled(
    chart: &mut Chart,
    values: &Map,
    path: &str,
    warnings: &mut Vec<String>,
) -> Result<(), CoalesceError> {
    if chart.metadata.dependencies.is_empty() {
        return Ok(());
    }
    // Subcharts that no Chart.yaml entry describes stay as they are; described ones are
    // replaced by a copy per entry (the first subchart the entry describes), renamed to
    // the entry's alias. A described subchart no entry picks first is dropped, as in
    // Helm (`>=1.0.0` describes both sub-1.0.0 and sub-2.0.0, and takes sub-1.0.0).
    // A subchart is moved to its last user and cloned only for the entries before it
    // (one chart under several aliases).
    let mut existing: Vec<Option<Chart>> = std::mem::take(&mut chart.dependencies)
        .into_iter()
        .map(Some)
        .collect();
    let users: Vec<Option<usize>> = chart
        .metadata
        .dependencies()
        .map(|d| {
            existing
                .iter()
                .position(|sub| sub.as_ref().is_some_and(|sub| declares(d, sub)))
        })
        .collect();
    let mut subcharts: Vec<Chart> = existing
        .iter_mut()
        .filter(|slot| {
            slot.as_ref()
                .is_some_and(|sub| !(chart.metadata.dependencies()).any(|d| declares(d, sub)))
        })
        .filter_map(Option::take)
        .collect();
    let entries = chart.metadata.dependencies.iter_mut().flatten();
    for (k, dependency) in entries.enumerate() {
        if let Some(index) = users[k] {
            let copy = if users[k + 1..].contains(&Some(index)) {
                existing[index].clone()
            } else {
                existing[index].take()
            };
            if let Some(mut copy) = copy {
                if !dependency.alias.is_empty() {
                    copy.metadata.name = dependency.alias.clone();
                }
                subcharts.push(copy);
            }
        }
        if !dependency.alias.is_empty() {
            dependency.name = dependency.alias.clone();
        }
    }
    chart.dependencies = subcharts;
    for dependency in chart.metadata.dependencies.iter_mut().flatten() {
        dependency.enabled = true;
    }

    let coalesced = coalesce_values(chart, values, warnings)?;
    apply_tags(&mut chart.metadata.dependencies, &coalesced, warnings);
    apply_conditions(&mut chart.metadata.dependencies, &coalesced, path, warnings);

    let disabled: Vec<String> = chart
        .metadata
        .dependencies()
        .filter(|d| !d.enabled)
        .map(|d| d.name.clone())
        .collect();
    chart
        .dependencies
        .retain(|sub| !disabled.iter().any(|n| n == sub.name()));
    chart
        .metadata
        .dependencies
        .retain(|d| d.as_ref().is_some_and(|d| !disabled.contains(&d.name)));
    for sub in &mut chart.dependencies {
        let sub_path = format!("{path}{}.", sub.name());
        process_enabled(sub, &coalesced, &sub_path, warnings)?;
    }
    Ok(())
}

/// `tags`: a dependency with only false tags is disabled; any true tag (or none set)
/// enables it.
fn apply_tags(dependencies: &mut [Option<Dependency>], values: &Map, warnings: &mut Vec<String>) {
    let Some(tags) = table(values, "tags") else {
        return;
    };
    for dependency in dependencies.iter_mut().flatten() {
        let (mut any_true, mut any_false) = (false, false);
        for tag in &dependency.tags {
            match tags.get(tag) {
                Some(Value::Bool(true)) => any_true = true,
                Some(Value::Bool(false)) => any_false = true,
                Some(_) => warnings.push(warn(
                    "returned non-bool value",
                    &[("tag", tag), ("chart", &dependency.name)],
                )),
                None => {}
            }
        }
        dependency.enabled = any_true || !any_false;
    }
}

/// `condition`: the first of the comma-separated paths holding a boolean decides.
fn apply_conditions(
    dependencies: &mut [Option<Dependency>],
    values: &Map,
    path: &str,
    warnings: &mut Vec<String>,
) {
    for dependency in dependencies.iter_mut().flatten() {
        for condition in dependency.condition.trim().split(',') {
            if condition.is_empty() {
                continue;
            }
            match path_value(values, &format!("{path}{condition}")) {
                Some(Value::Bool(enabled)) => {
                    dependency.enabled = *enabled;
                    break;
                }
                Some(_) => warnings.push(warn(
                    "returned non-bool value",
                    &[("path", condition), ("chart", &dependency.name)],
                )),
                None => {}
            }
        }
    }
}

/// Children first, then the chart itself.
fn process_imports(chart: &mut Chart, warnings: &mut Vec<String>) {
    for sub in &mut chart.dependencies {
        process_imports(sub, warnings);
    }
    import_values(chart, warnings);
}

fn import_values(chart: &mut Chart, warnings: &mut Vec<String>) {
    if chart.metadata.dependencies.is_empty() {
        return;
    }
    // Merging (not coalescing) keeps nulls for the coalesce that follows at render time.
    let Ok(merged) = merge_values(chart, &Map::new(), warnings) else {
        return;
    };
    let mut imported = Map::new();
    for dependency in chart.metadata.dependencies.iter_mut().flatten() {
        let mut normalised = Vec::new();
        for entry in &dependency.import_values {
            let (child, parent, long_form) = match entry {
                Value::Map(m) => (go_sprint(m.get("child")), go_sprint(m.get("parent")), true),
                Value::String(s) => (format!("exports.{s}"), ".".to_owned(), false),
                _ => continue,
            };
            let mut pair = Map::new();
            pair.insert("child".into(), Value::String(child.clone()));
            pair.insert("parent".into(), Value::String(parent.clone()));
            normalised.push(Value::Map(pair));
            let source = match table_or_missing(&merged, &format!("{}.{child}", dependency.name)) {
                Ok(source) => source,
                Err(missing) => {
                    let error = format!("{} is not a table", go_quote(missing));
                    warnings.push(if long_form {
                        warn(
                            "ImportValues missing table from chart",
                            &[("chart", &dependency.name), ("error", &error)],
                        )
                    } else {
                        warn("ImportValues missing table", &[("error", &error)])
                    });
                    continue;
                }
            };
            merge_tables(
                &mut imported,
                path_to_map(&parent, source.clone()),
                warnings,
            );
        }
        dependency.import_values = normalised;
    }
    // The parent's own values win over what it imports.
    let mut values = merged;
    merge_tables(&mut values, imported, warnings);
    chart.values = values;
}

/// Helm's `Values.Table`, whose error names the first key on the path that is not a
/// table.
fn table_or_missing<'a, 'p>(values: &'a Map, path: &'p str) -> Result<&'a Map, &'p str> {
    let mut current = values;
    for key in path.split('.') {
        match current.get(key) {
            Some(Value::Map(m)) => current = m,
            _ => return Err(key),
        }
    }
    Ok(current)
}

/// Helm's `pathToMap`: `a.b` and a table give `{a: {b: table}}`; `.` gives the table.
fn path_to_map(path: &str, data: Map) -> Map {
    if path == "." {
        return data;
    }
    let mut current = data;
    for key in path.split('.').rev() {
        let mut outer = Map::new();
        outer.insert(key.to_owned(), Value::Map(current));
        current = outer;
    }
    current
}

/// Go's `fmt.Sprintf("%v", x)` for the scalar `child`/`parent` fields.
fn go_sprint(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "<nil>".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Int(i)) => i.to_string(),
        Some(Value::Float(f)) => chartkit_yaml::gonum::format_g(*f, false),
        Some(other) => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chartkit_chart::{File, LoadOptions, load_files};

    fn chart(files: &[(&str, &str)]) -> Chart {
        load_files(
            files
                .iter()
                .map(|(n, d)| File::new(*n, d.as_bytes().to_vec()))
                .collect(),
            "parent",
            &LoadOptions::default(),
        )
        .unwrap()
    }

    fn family(values: &str) -> Chart {
        chart(&[
            (
                "Chart.yaml",
                "apiVersion: v2\nname: parent\nversion: 1.0.0\ndependencies:\n\
                 - {name: a, version: ^1.0.0, condition: a.enabled}\n\
                 - {name: b, version: '*', tags: [back]}\n\
                 - {name: a, version: 1.x, alias: a2, condition: 'missing.flag,a2.flag'}\n\
                 - {name: c, version: 1.0.0, import-values: [data, {child: deep.x, parent: fromc}]}\n",
            ),
            ("values.yaml", values),
            (
                "charts/a/Chart.yaml",
                "apiVersion: v2\nname: a\nversion: 1.2.0\n",
            ),
            ("charts/a/values.yaml", "flag: false\n"),
            (
                "charts/b/Chart.yaml",
                "apiVersion: v2\nname: b\nversion: 0.1.0\n",
            ),
            (
                "charts/c/Chart.yaml",
                "apiVersion: v2\nname: c\nversion: 1.0.0\n",
            ),
            (
                "charts/c/values.yaml",
                "exports: {data: {port: 80, host: c}}\ndeep: {x: {w: 1}}\n",
            ),
            (
                "charts/extra/Chart.yaml",
                "apiVersion: v2\nname: extra\nversion: 0.1.0\n",
            ),
        ])
    }

    fn names(chart: &Chart) -> Vec<&str> {
        let mut names: Vec<&str> = chart.dependencies.iter().map(Chart::name).collect();
        names.sort();
        names
    }

    #[test]
    fn conditions_tags_and_aliases() {
        let mut c = family("a: {enabled: false}\ntags: {back: false}\nhost: parent\n");
        process_dependencies(&mut c, &Map::new(), &mut Vec::new()).unwrap();
        // `a` is off by its condition, `b` by its only tag, `a2` by its own default
        // (`a2.flag: false` from the aliased chart's values); undeclared `extra` stays.
        assert_eq!(names(&c), ["c", "extra"]);
        let declared: Vec<&str> = c.metadata.dependencies().map(|d| d.name.as_str()).collect();
        assert_eq!(declared, ["c"]);

        let mut user = Map::new();
        crate::strvals::parse_set("a.enabled=true,tags.back=true,a2.flag=true", &mut user).unwrap();
        let mut c = family("a: {enabled: false}\ntags: {back: false}\n");
        process_dependencies(&mut c, &user, &mut Vec::new()).unwrap();
        assert_eq!(names(&c), ["a", "a2", "b", "c", "extra"]);
        assert!(c.metadata.dependencies().all(|d| d.enabled));
    }

    #[test]
    fn import_values_both_forms_and_parent_wins() {
        let mut c = family("host: parent\nfromc: {keep: 1}\n");
        process_dependencies(&mut c, &Map::new(), &mut Vec::new()).unwrap();
        assert_eq!(c.values.get("port"), Some(&Value::Float(80.0)));
        assert_eq!(c.values.get("host"), Some(&Value::String("parent".into())));
        assert_eq!(
            chartkit_yaml::to_yaml(c.values.get("fromc").unwrap()),
            "keep: 1\nw: 1\n"
        );
        let imports = &c
            .metadata
            .dependencies()
            .find(|d| d.name == "c")
            .unwrap()
            .import_values;
        assert_eq!(
            chartkit_yaml::to_yaml(&Value::Seq(imports.clone())),
            "- child: exports.data\n  parent: .\n- child: deep.x\n  parent: fromc\n"
        );
    }

    #[test]
    fn version_ranges_decide_which_subchart_an_entry_means() {
        assert!(is_compatible_range("^1.0.0", "1.2.0"));
        assert!(!is_compatible_range("~2.0", "1.2.0"));
        assert!(!is_compatible_range("^1.0.0", "not-a-version"));
    }
}
