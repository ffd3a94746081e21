//! Coalescing: the user's values over each chart's defaults, down through subcharts, with
//! globals copied from parents to children, as Helm 4's `pkg/chart/common/util` does.
//!
//! Two flavours exist, as in Helm: *coalescing* (a null from a higher-priority source
//! deletes the key) and *merging* (nulls are kept, because a later coalesce will act on
//! them). Helm 4.1 also keeps nulls written in the top chart's own values.yaml and drops
//! null defaults of subcharts so they cannot shadow globals.

use chartkit_chart::Chart;
use chartkit_yaml::{Map, Value};

/// A problem Helm reports while coalescing; the text is Helm's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CoalesceError(pub String);

/// Helm's `CoalesceValues`: `values` (the user's) over the chart's defaults and its
/// subcharts'; nulls delete keys.
pub fn coalesce_values(chart: &Chart, values: &Map) -> Result<Map, CoalesceError> {
    let mut dest = values.clone();
    coalesce(chart, &mut dest, "", false)?;
    Ok(dest)
}

/// Helm's `MergeValues`: like [`coalesce_values`], keeping nulls.
pub fn merge_values(chart: &Chart, values: &Map) -> Result<Map, CoalesceError> {
    let mut dest = values.clone();
    coalesce(chart, &mut dest, "", true)?;
    Ok(dest)
}

/// Helm's `CoalesceTables`: `src` under `dst`, nulls in `dst` deleting keys.
pub fn coalesce_tables(dst: &mut Map, src: Map) {
    coalesce_tables_full_key(dst, src, "", false);
}

/// Helm's `MergeTables`: `src` under `dst`, keeping nulls.
pub fn merge_tables(dst: &mut Map, src: Map) {
    coalesce_tables_full_key(dst, src, "", true);
}

fn concat_prefix(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_owned()
    } else {
        format!("{a}.{b}")
    }
}

fn coalesce(chart: &Chart, dest: &mut Map, prefix: &str, merge: bool) -> Result<(), CoalesceError> {
    coalesce_chart_values(chart, dest, prefix, merge);
    coalesce_dependencies(chart, dest, prefix, merge)
}

fn coalesce_dependencies(
    chart: &Chart,
    dest: &mut Map,
    prefix: &str,
    merge: bool,
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
        let Some(Value::Map(mut section)) = dest.remove(name) else {
            continue;
        };
        let sub_prefix = concat_prefix(prefix, chart.name());
        coalesce_globals(&mut section, dest);
        coalesce(sub, &mut section, &sub_prefix, merge)?;
        dest.insert(name.to_owned(), Value::Map(section));
    }
    Ok(())
}

/// Copies the parent's `global` into a subchart's section; the parent's globals win.
fn coalesce_globals(dest: &mut Map, src: &Map) {
    let mut dg = match dest.get("global") {
        None => Map::new(),
        Some(Value::Map(m)) => m.clone(),
        Some(_) => return,
    };
    let sg = match src.get("global") {
        None => Map::new(),
        Some(Value::Map(m)) => m.clone(),
        Some(_) => return,
    };
    for (key, value) in sg {
        match value {
            Value::Map(parent) => match dg.get(&key) {
                None => {
                    dg.insert(key, Value::Map(parent));
                }
                Some(Value::Map(child)) => {
                    let mut merged = parent;
                    coalesce_tables_full_key(&mut merged, child.clone(), "", true);
                    dg.insert(key, Value::Map(merged));
                }
                Some(_) => {}
            },
            other => {
                if !matches!(dg.get(&key), Some(Value::Map(_))) {
                    dg.insert(key, other);
                }
            }
        }
    }
    dest.insert("global".into(), Value::Map(dg));
}

/// The chart's own defaults under `v`.
fn coalesce_chart_values(chart: &Chart, v: &mut Map, prefix: &str, merge: bool) {
    let is_subchart_default = !merge && !prefix.is_empty();
    for (key, default) in &chart.values {
        match v.get_mut(key) {
            Some(Value::Null) if !merge => {
                v.remove(key);
            }
            Some(Value::Map(dest)) => {
                if let Value::Map(src) = default {
                    let merge = merge || chart.dependencies.iter().any(|d| d.name() == key);
                    let mut src = src.clone();
                    if !merge && !prefix.is_empty() {
                        clean_nil_values(&mut src);
                    }
                    coalesce_tables_full_key(dest, src, "", merge);
                }
            }
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

fn coalesce_tables_full_key(dst: &mut Map, mut src: Map, prefix: &str, merge: bool) {
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
            Some(Value::Map(inner)) => {
                if let Value::Map(value) = value {
                    coalesce_tables_full_key(inner, value, &concat_prefix(prefix, &key), merge);
                }
            }
            Some(_) => {}
        }
    }
}

/// Removes nulls, recursively, from a subchart's defaults.
fn clean_nil_values(map: &mut Map) {
    map.retain(|_, v| !v.is_null());
    for value in map.values_mut() {
        if let Value::Map(inner) = value {
            clean_nil_values(inner);
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
        let values = coalesce_values(&parent(), &user("a: {w: null}\n")).unwrap();
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
        )
        .unwrap();
        assert_eq!(
            yaml(&values),
            "a:\n  nn: null\nglobal:\n  g:\n    c: 9\n    p: 1\nsub:\n  global:\n    g:\n      c: 9\n      p: 1\n  nested:\n    j: 2\ntop: null\n"
        );
    }

    #[test]
    fn merging_keeps_nulls() {
        let values = merge_values(&parent(), &user("a: {x: null}\n")).unwrap();
        assert_eq!(values["a"].lookup("x"), Some(&Value::Null));
        assert_eq!(values["sub"].lookup("s2"), Some(&Value::Null));
    }

    #[test]
    fn a_scalar_where_a_subchart_section_belongs_is_an_error() {
        let err = coalesce_values(&parent(), &user("sub: 3\n")).unwrap_err();
        assert_eq!(err.0, "type mismatch on sub: %!t(float64=3)");
    }

    #[test]
    fn tables_coalesce_with_dst_winning() {
        let mut dst = user("a: 1\nm: {x: 1, gone: null}\n");
        coalesce_tables(&mut dst, user("a: 2\nb: 2\nm: {w: 2, gone: 5}\n"));
        assert_eq!(yaml(&dst), "a: 1\nb: 2\nm:\n  w: 2\n  x: 1\n");
        let mut dst = user("m: {gone: null}\n");
        merge_tables(&mut dst, user("m: {gone: 5}\n"));
        assert_eq!(yaml(&dst), "m:\n  gone: null\n");
    }
}
