//! Coalescing: the user's values over each chart's defaults, down through subcharts, with
//! globals copied from parents to children, as Helm 4's `pkg/chart/common/util` does.
//!
//! Two flavours exist, as in Helm: *coalescing* (a null from a higher-priority source
//! deletes the key) and *merging* (nulls are kept, because a later coalesce will act on
//! them). Helm 4.1 also keeps nulls written in the top chart's own values.yaml and drops
//! null defaults of subcharts so they cannot shadow globals.
//!
//! What Helm logs while coalescing (a table given where a chart's default is not one,
//! and the like) is added, in Helm's words, to a list of warnings the caller passes.

use chartkit_chart::Chart;
use chartkit_yaml::{Map, Value};

use crate::golog::go_quote;

/// Notes a notice of coalescing as Helm logs it: its `log.Printf`, which Go's slog
/// default logger writes at `INFO` with the whole text as the message.
fn log(warnings: &mut Vec<String>, text: impl AsRef<str>) {
    warnings.push(crate::golog::info(text.as_ref(), &[]));
}

/// A problem Helm reports while coalescing; the text is Helm's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CoalesceError(pub String);

/// Helm's `CoalesceValues`: `values` (the user's) over the chart's defaults and its
/// subcharts'; nulls delete keys. What Helm would log is added to `warnings`.
pub fn coalesce_values(
    chart: &Chart,
    values: &Map,
    warnings: &mut Vec<String>,
) -> Result<Map, CoalesceError> {
    let mut dest = values.clone();
    coalesce(chart, &mut dest, "", false, warnings)?;
    Ok(dest)
}

/// Helm's `MergeValues`: like [`coalesce_values`], keeping nulls.
pub fn merge_values(
    chart: &Chart,
    values: &Map,
    warnings: &mut Vec<String>,
) -> Result<Map, CoalesceError> {
    let mut dest = values.clone();
    coalesce(chart, &mut dest, "", true, warnings)?;
    Ok(dest)
}

/// Helm's `CoalesceTables`: `src` under `dst`, nulls in `dst` deleting keys.
pub fn coalesce_tables(dst: &mut Map, src: Map, warnings: &mut Vec<String>) {
    coalesce_tables_full_key(dst, src, "", false, warnings);
}

/// Helm's `MergeTables`: `src` under `dst`, keeping nulls.
pub fn merge_tables(dst: &mut Map, src: Map, warnings: &mut Vec<String>) {
    coalesce_tables_full_key(dst, src, "", true, warnings);
}

fn concat_prefix(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_owned()
    } else {
        format!("{a}.{b}")
    }
}

fn coalesce(
    chart: &Chart,
    dest: &mut Map,
    prefix: &str,
    merge: bool,
    warnings: &mut Vec<String>,
) -> Result<(), CoalesceError> {
    coalesce_chart_values(chart, dest, prefix, merge, warnings);
    coalesce_dependencies(chart, dest, prefix, merge, warnings)
}

fn coalesce_dependencies(
    chart: &Chart,
    dest: &mut Map,
    prefix: &str,
    merge: bool,
    warnings: &mut Vec<String>,
) -> Result<(), CoalesceError> {
    for sub in &chart.dependencies {
        let name = sub.name();
        match dest.get(name) {
            None => {
                dest.insert(name.to_owned(), Value::Map(Map::new()));
            }
            Some(Value::Map(_)) => {}
            Some(other) => {
                return Err(CoalesceError(format!(
                    "type mismatch on {name}: %!t({})",
                    go_type_and_value(other)
                )));
            }
        }
        let Some(mut section) = dest.remove(name).and_then(|mut v| v.take_map()) else {
            continue;
        };
        let sub_prefix = concat_prefix(prefix, chart.name());
        coalesce_globals(&mut section, dest, &sub_prefix, warnings);
        coalesce(sub, &mut section, &sub_prefix, merge, warnings)?;
        dest.insert(name.to_owned(), Value::Map(section));
    }
    Ok(())
}

/// Copies the parent's `global` into a subchart's section; the parent's globals win.
fn coalesce_globals(dest: &mut Map, src: &Map, prefix: &str, warnings: &mut Vec<String>) {
    let mut dg = match dest.get("global") {
        None => Map::new(),
        Some(Value::Map(m)) => m.clone(),
        Some(_) => {
            log(
                warnings,
                "warning: skipping globals because destination global is not a table.",
            );
            return;
        }
    };
    let sg = match src.get("global") {
        None => Map::new(),
        Some(Value::Map(m)) => m.clone(),
        Some(_) => {
            log(
                warnings,
                "warning: skipping globals because source global is not a table.",
            );
            return;
        }
    };
    for (key, mut value) in sg {
        match value.take_map() {
            Some(parent) => match dg.get(&key) {
                None => {
                    dg.insert(key, Value::Map(parent));
                }
                Some(Value::Map(child)) => {
                    let mut merged = parent;
                    let sub_prefix = concat_prefix(prefix, &key);
                    coalesce_tables_full_key(
                        &mut merged,
                        child.clone(),
                        &sub_prefix,
                        true,
                        warnings,
                    );
                    dg.insert(key, Value::Map(merged));
                }
                Some(_) => log(
                    warnings,
                    format!(
                        "Conflict: cannot merge map onto non-map for {}. Skipping.",
                        go_quote(&key)
                    ),
                ),
            },
            None => {
                if matches!(dg.get(&key), Some(Value::Map(_))) {
                    log(warnings, format!("key {key} is table. Skipping"));
                } else {
                    dg.insert(key, value);
                }
            }
        }
    }
    dest.insert("global".into(), Value::Map(dg));
}

/// The chart's own defaults under `v`.
fn coalesce_chart_values(
    chart: &Chart,
    v: &mut Map,
    prefix: &str,
    merge: bool,
    warnings: &mut Vec<String>,
) {
    let is_subchart_default = !merge && !prefix.is_empty();
    let sub_prefix = concat_prefix(prefix, chart.name());
    for (key, default) in &chart.values {
        match v.get_mut(key) {
            Some(Value::Null) if !merge => {
                v.remove(key);
            }
            Some(Value::Map(dest)) => match default {
                Value::Map(src) => {
                    let merge = merge || chart.dependencies.iter().any(|d| d.name() == key);
                    let mut src = src.clone();
                    if !merge && !prefix.is_empty() {
                        clean_nil_values(&mut src);
                    }
                    let full_key = concat_prefix(&sub_prefix, key);
                    coalesce_tables_full_key(dest, src, &full_key, merge, warnings);
                }
                Value::Null => {}
                _ => log(
                    warnings,
                    format!("warning: skipped value for {sub_prefix}.{key}: Not a table."),
                ),
            },
            Some(_) => {}
            None => {
                if is_subchart_default {
                    match default {
                        Value::Null => continue,
                        Value::Map(m) => {
                            let mut m = m.clone();
                            clean_nil_values(&mut m);
                            v.insert(key.clone(), Value::Map(m));
                            continue;
                        }
                        _ => {}
                    }
                }
                v.insert(key.clone(), default.clone());
            }
        }
    }
}

fn coalesce_tables_full_key(
    dst: &mut Map,
    mut src: Map,
    prefix: &str,
    merge: bool,
    warnings: &mut Vec<String>,
) {
    let src_non_nil: std::collections::HashSet<String> = src
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, _)| k.clone())
        .collect();
    for (key, value) in dst.iter() {
        if value.is_null() {
            src.insert(key.clone(), Value::Null);
        }
    }
    for (key, value) in src {
        match dst.get_mut(&key) {
            Some(Value::Null) if !merge && src_non_nil.contains(&key) => {
                dst.remove(&key);
            }
            None => {
                dst.insert(key, value);
            }
            Some(Value::Map(inner)) => match value {
                mut value @ Value::Map(_) => {
                    let value = value.take_map().unwrap_or_default();
                    let full_key = concat_prefix(prefix, &key);
                    chartkit_yaml::with_stack(|| {
                        coalesce_tables_full_key(inner, value, &full_key, merge, warnings)
                    });
                }
                Value::Null => {}
                other => log(
                    warnings,
                    format!(
                        "warning: destination for {} is a table. Ignoring non-table value ({})",
                        concat_prefix(prefix, &key),
                        go_value(&other)
                    ),
                ),
            },
            Some(_) => {
                if let Value::Map(_) = value {
                    log(
                        warnings,
                        format!(
                            "warning: cannot overwrite table with non table for {} ({})",
                            concat_prefix(prefix, &key),
                            go_value(&value)
                        ),
                    );
                }
            }
        }
    }
}

/// Removes nulls, recursively, from a subchart's defaults.
fn clean_nil_values(map: &mut Map) {
    map.retain(|_, v| !v.is_null());
    for value in map.values_mut() {
        if let Value::Map(inner) = value {
            chartkit_yaml::with_stack(|| clean_nil_values(inner));
        }
    }
}

/// Go's `%v` of a value decoded from YAML or JSON (`map[a:1 b:[x y]]`).
pub(crate) fn go_value(value: &Value) -> String {
    let mut out = String::new();
    write_go_value(value, &mut out);
    out
}

fn write_go_value(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) => out.push_str(&chartkit_yaml::gonum::format_g(*f, false)),
        Value::String(s) => out.push_str(s),
        // Printed into a warning, which is text.
        Value::Bytes(b) => out.push_str(&chartkit_yaml::go_lossy(b)),
        Value::Seq(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                chartkit_yaml::with_stack(|| write_go_value(item, out));
            }
            out.push(']');
        }
        Value::Map(map) => {
            out.push_str("map[");
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(key);
                out.push(':');
                chartkit_yaml::with_stack(|| write_go_value(item, out));
            }
            out.push(']');
        }
    }
}

/// Go's `%!t(type=value)` operands for the type-mismatch error.
fn go_type_and_value(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => format!("bool={b}"),
        Value::Int(i) => format!("int64={i}"),
        Value::Float(f) => format!("float64={}", chartkit_yaml::gonum::format_g(*f, false)),
        Value::String(s) => format!("string={s}"),
        Value::Bytes(b) => format!("string={}", chartkit_yaml::go_lossy(b)),
        Value::Seq(_) => "[]interface {}=[...]".into(),
        Value::Map(_) => "map[string]interface {}=map[...]".into(),
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
            "p",
            &LoadOptions::default(),
        )
        .unwrap()
    }

    fn parent() -> Chart {
        chart(&[
            ("Chart.yaml", "apiVersion: v2\nname: p\nversion: 0.1.0\n"),
            (
                "values.yaml",
                "a: {x: 1, nn: null}\ntop: null\nsub: {s1: fromparent}\nglobal: {g: {p: 1}}\n",
            ),
            (
                "charts/sub/Chart.yaml",
                "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
            ),
            (
                "charts/sub/values.yaml",
                "s1: default\ns2: null\nnested: {k: null, j: 2}\nglobal: {g: {c: 2}}\n",
            ),
        ])
    }

    fn yaml(map: &Map) -> String {
        chartkit_yaml::to_yaml(&Value::Map(map.clone()))
    }

    fn user(text: &str) -> Map {
        chartkit_yaml::parse_values(text).unwrap()
    }

    /// Checked against `helm template` 4.1.4 with `{{ toYaml .Values }}`.
    #[test]
    fn coalesces_like_helm() {
        let values = coalesce_values(&parent(), &user("a: {w: null}\n"), &mut Vec::new()).unwrap();
        assert_eq!(
            yaml(&values),
            "a:\n  nn: null\n  w: null\n  x: 1\nglobal:\n  g:\n    p: 1\nsub:\n  global:\n    g:\n      c: 2\n      p: 1\n  nested:\n    j: 2\n  s1: fromparent\ntop: null\n"
        );
    }

    #[test]
    fn null_deletes_a_default_and_parent_globals_win() {
        let values = coalesce_values(
            &parent(),
            &user("a: {x: null}\nsub: {s1: null}\nglobal: {g: {c: 9}}\n"),
            &mut Vec::new(),
        )
        .unwrap();
        assert_eq!(
            yaml(&values),
            "a:\n  nn: null\nglobal:\n  g:\n    c: 9\n    p: 1\nsub:\n  global:\n    g:\n      c: 9\n      p: 1\n  nested:\n    j: 2\ntop: null\n"
        );
    }

    #[test]
    fn merging_keeps_nulls() {
        let values = merge_values(&parent(), &user("a: {x: null}\n"), &mut Vec::new()).unwrap();
        assert_eq!(values["a"].lookup("x"), Some(&Value::Null));
        assert_eq!(values["sub"].lookup("s2"), Some(&Value::Null));
    }

    /// Maps nested `depth` levels under `k`, with `leaf` at the bottom.
    fn nested(depth: usize, leaf: Value) -> Map {
        let mut map = Map::from([("leaf".to_owned(), leaf)]);
        for _ in 1..depth {
            map = Map::from([("k".to_owned(), Value::Map(map))]);
        }
        map
    }

    /// Values nest as deep as go-yaml reads them (10,000 levels); coalescing them, with
    /// the warning at the bottom, fits a worker thread's 2 MiB stack.
    #[test]
    fn values_nested_to_go_yamls_depth_coalesce_on_a_worker_stack() {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                let mut c = parent();
                c.values = nested(9_999, Value::Map(Map::new()));
                let mut warnings = Vec::new();
                let user = nested(9_999, Value::Int(1));
                let values = coalesce_values(&c, &user, &mut warnings).unwrap();
                assert_eq!(values.get("k"), user.get("k"));
                let path = vec!["k"; 9_998].join(".");
                assert_eq!(
                    warnings,
                    [format!(
                        "level=INFO msg=\"warning: cannot overwrite table with non table for p.{path}.leaf (map[])\""
                    )]
                );
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn a_scalar_where_a_subchart_section_belongs_is_an_error() {
        let err = coalesce_values(&parent(), &user("sub: 3\n"), &mut Vec::new()).unwrap_err();
        assert_eq!(err.0, "type mismatch on sub: %!t(float64=3)");
    }

    #[test]
    fn tables_coalesce_with_dst_winning() {
        let mut dst = user("a: 1\nm: {x: 1, gone: null}\n");
        coalesce_tables(
            &mut dst,
            user("a: 2\nb: 2\nm: {w: 2, gone: 5}\n"),
            &mut Vec::new(),
        );
        assert_eq!(yaml(&dst), "a: 1\nb: 2\nm:\n  w: 2\n  x: 1\n");
        let mut dst = user("m: {gone: null}\n");
        merge_tables(&mut dst, user("m: {gone: 5}\n"), &mut Vec::new());
        assert_eq!(yaml(&dst), "m:\n  gone: null\n");
    }
}
