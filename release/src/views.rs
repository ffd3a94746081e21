//! What helm's read-only release commands print, as data: the JSON each writes with
//! `json.Encoder` (compact, one line), the value its YAML comes from, the rows of its
//! tables, and the plain-text reports of `status`, `get all` and the other `get`s.

use std::fmt::Write as _;

use chartkit_yaml::gojson;
use chartkit_yaml::{Map, Value};

use crate::json::Obj;
use crate::model::Release;
use crate::time::{GoTime, LocalZone, ZERO_ANSIC, ZERO_RFC3339};

/// One line of `helm list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListElement {
    pub name: String,
    pub namespace: String,
    pub revision: String,
    pub updated: String,
    pub status: String,
    pub chart: String,
    pub app_version: String,
}

/// `helm list`'s elements; `updated` is Go's `Time.String()` in `local`, or `-` for a
/// release never deployed. (`--time-format` layouts are the caller's, through `format`.)
pub fn list_elements(
    releases: &[Release],
    local: &LocalZone,
    format: Option<&dyn Fn(&GoTime) -> String>,
) -> Vec<ListElement> {
    releases
        .iter()
        .map(|r| ListElement {
            name: r.name.clone(),
            namespace: r.namespace.clone(),
            revision: r.version.to_string(),
            updated: match (r.last_deployed(), format) {
                (None, _) => "-".to_owned(),
                (Some(t), Some(f)) => f(&t),
                (Some(t), None) => t.go_string(local),
            },
            status: r.status().as_str().to_owned(),
            chart: r.chart_label(),
            app_version: r.app_version_label(),
        })
        .collect()
}

/// `helm list -o json`.
pub fn list_json(elements: &[ListElement]) -> String {
    let mut out = String::from("[");
    for (i, e) in elements.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let mut o = Obj::start(&mut out);
        o.string("name", &e.name);
        o.string("namespace", &e.namespace);
        o.string("revision", &e.revision);
        o.string("updated", &e.updated);
        o.string("status", &e.status);
        o.string("chart", &e.chart);
        o.string("app_version", &e.app_version);
        o.end();
    }
    out.push_str("]\n");
    out
}

/// `helm list -o yaml`.
pub fn list_yaml(elements: &[ListElement]) -> String {
    let items = elements
        .iter()
        .map(|e| {
            string_map(&[
                ("name", &e.name),
                ("namespace", &e.namespace),
                ("revision", &e.revision),
                ("updated", &e.updated),
                ("status", &e.status),
                ("chart", &e.chart),
                ("app_version", &e.app_version),
            ])
        })
        .collect();
    chartkit_yaml::to_yaml(&Value::Seq(items))
}

/// `helm list`'s table rows, header first unless `no_headers`.
pub fn list_rows(elements: &[ListElement], no_headers: bool) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    if !no_headers {
        rows.push(strings(&[
            "NAME",
            "NAMESPACE",
            "REVISION",
            "UPDATED",
            "STATUS",
            "CHART",
            "APP VERSION",
        ]));
    }
    for e in elements {
        rows.push(vec![
            e.name.clone(),
            e.namespace.clone(),
            e.revision.clone(),
            e.updated.clone(),
            e.status.clone(),
            e.chart.clone(),
            e.app_version.clone(),
        ]);
    }
    rows
}

/// `helm list -q -o json`: the names.
pub fn names_json(releases: &[Release]) -> String {
    let mut out = String::from("[");
    for (i, r) in releases.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        gojson::write_string(&mut out, &r.name);
    }
    out.push_str("]\n");
    out
}

/// `helm list -q -o yaml`.
pub fn names_yaml(releases: &[Release]) -> String {
    let items = releases
        .iter()
        .map(|r| Value::String(r.name.clone()))
        .collect();
    chartkit_yaml::to_yaml(&Value::Seq(items))
}

/// `helm history -o json` of revisions oldest first.
pub fn history_json(history: &[Release]) -> String {
    let mut out = String::from("[");
    for (i, r) in history.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let mut o = Obj::start(&mut out);
        o.int("revision", r.version);
        o.time_nonzero("updated", &r.last_deployed());
        o.string("status", r.status().as_str());
        o.string("chart", &r.chart_label());
        o.string("app_version", &r.app_version_label());
        o.string("description", description(r));
        o.end();
    }
    out.push_str("]\n");
    out
}

/// `helm history -o yaml`.
pub fn history_yaml(history: &[Release]) -> String {
    yaml_of_json(&history_json(history))
}

/// `helm history`'s table rows, header first.
pub fn history_rows(history: &[Release]) -> Vec<Vec<String>> {
    let mut rows = vec![strings(&[
        "REVISION",
        "UPDATED",
        "STATUS",
        "CHART",
        "APP VERSION",
        "DESCRIPTION",
    ])];
    for r in history {
        rows.push(vec![
            r.version.to_string(),
            ansic(&r.last_deployed()),
            r.status().as_str().to_owned(),
            r.chart_label(),
            r.app_version_label(),
            description(r).to_owned(),
        ]);
    }
    rows
}

fn description(r: &Release) -> &str {
    r.info
        .as_ref()
        .map(|i| i.description.as_str())
        .unwrap_or("")
}

fn notes(r: &Release) -> &str {
    r.info.as_ref().map(|i| i.notes.as_str()).unwrap_or("")
}

fn ansic(t: &Option<GoTime>) -> String {
    t.map(|t| t.ansic())
        .unwrap_or_else(|| ZERO_ANSIC.to_owned())
}

/// `helm status -o json`: the record without its chart, as `json.Encoder` writes it.
pub fn status_json(release: &Release) -> String {
    let mut shown = release.clone();
    shown.chart = None;
    let mut out = shown.to_json();
    out.push('\n');
    out
}

/// `helm status -o yaml`.
pub fn status_yaml(release: &Release) -> String {
    yaml_of_json(&status_json(release))
}

/// What `helm status` (`get_all` false) or `helm get all` (`get_all` true, with the
/// values `get values --all` computes) prints as text. `resources` is the RESOURCES
/// section's body when the caller printed one.
pub fn status_text(release: &Release, get_all: Option<&Map>, resources: Option<&str>) -> String {
    status_text_with(release, get_all.is_some(), get_all, resources)
}

/// The status as install and upgrade print it under helm's `--debug`: the values the
/// release was given and those computed from them (`computed`), its hooks and its
/// manifest, without `get all`'s chart lines.
pub fn debug_status_text(release: &Release, computed: &Map) -> String {
    status_text_with(release, false, Some(computed), None)
}

fn status_text_with(
    release: &Release,
    metadata: bool,
    computed: Option<&Map>,
    resources: Option<&str>,
) -> String {
    let mut out = String::new();
    let info = release.info.clone().unwrap_or_default();
    let _ = writeln!(out, "NAME: {}", release.name);
    if let Some(t) = &info.last_deployed {
        let _ = writeln!(out, "LAST DEPLOYED: {}", t.ansic());
    }
    let _ = writeln!(out, "NAMESPACE: {}", release.namespace);
    let _ = writeln!(out, "STATUS: {}", info.status);
    let _ = writeln!(out, "REVISION: {}", release.version);
    if metadata {
        let m = release.metadata().cloned().unwrap_or_default();
        let _ = writeln!(out, "CHART: {}", m.name);
        let _ = writeln!(out, "VERSION: {}", m.version);
        let _ = writeln!(out, "APP_VERSION: {}", m.app_version);
    }
    let _ = writeln!(out, "DESCRIPTION: {}", info.description);
    if let Some(resources) = resources {
        let _ = writeln!(out, "RESOURCES:\n{resources}");
    }
    let tests: Vec<_> = release
        .hooks
        .iter()
        .flatten()
        .filter(|h| h.events.iter().any(|e| e == "test"))
        .collect();
    if tests.is_empty() {
        out.push_str("TEST SUITE: None\n");
    } else {
        for h in tests {
            let Some(started) = &h.last_run.started_at else {
                continue;
            };
            let _ = write!(
                out,
                "TEST SUITE:     {}\nLast Started:   {}\nLast Completed: {}\nPhase:          {}\n",
                h.name,
                started.ansic(),
                ansic(&h.last_run.completed_at),
                h.last_run.phase
            );
        }
    }
    if let Some(computed) = computed {
        out.push_str("USER-SUPPLIED VALUES:\n");
        out.push_str(&values_yaml(&release.config));
        out.push('\n');
        out.push_str("COMPUTED VALUES:\n");
        out.push_str(&values_yaml(&Some(computed.clone())));
        out.push('\n');
    }
    if info.description.eq_ignore_ascii_case("Dry run complete") || computed.is_some() {
        out.push_str("HOOKS:\n");
        out.push_str(&hooks_text(release));
        let _ = writeln!(out, "MANIFEST:\n{}", release.manifest);
    }
    if !info.notes.is_empty() {
        let _ = writeln!(out, "NOTES:\n{}", info.notes.trim_matches(is_go_space));
    }
    out
}

/// Go's `unicode.IsSpace` (what `strings.TrimSpace` trims).
fn is_go_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{85}' | '\u{a0}'
    ) || c.is_whitespace()
}

/// Values as `helm get values -o yaml` writes them (`null` for none).
pub fn values_yaml(values: &Option<Map>) -> String {
    match values {
        Some(map) => chartkit_yaml::to_yaml(&Value::Map(map.clone())),
        None => "null\n".to_owned(),
    }
}

/// Values as `helm get values -o json` writes them.
pub fn values_json(values: &Option<Map>) -> String {
    let mut out = String::new();
    crate::json::write_values(&mut out, values);
    out.push('\n');
    out
}

/// `helm get values` as a table: a heading, then the YAML.
pub fn values_text(values: &Option<Map>, all: bool) -> String {
    let heading = if all {
        "COMPUTED VALUES:"
    } else {
        "USER-SUPPLIED VALUES:"
    };
    format!("{heading}\n{}", values_yaml(values))
}

/// The values `helm get values --all` computes: the user's over the stored chart's
/// values (a record keeps no subcharts: their defaults are in those values, where
/// dependency processing put them before the record was written). `--reuse-values`
/// starts from these too.
pub fn computed_values(release: &Release) -> Map {
    let mut chart = chartkit_chart::Chart::default();
    if let Some(c) = &release.chart {
        chart.values = c.values.clone().unwrap_or_default();
        if let Some(m) = &c.metadata {
            chart.metadata.name = m.name.clone();
        }
    }
    let config = release.config.clone().unwrap_or_default();
    let mut warnings = Vec::new();
    chartkit_values::coalesce_values(&chart, &config, &mut warnings).unwrap_or(config)
}

/// `helm get manifest`.
pub fn manifest_text(release: &Release) -> String {
    format!("{}\n", release.manifest)
}

/// `helm get notes` (nothing when the release has no notes).
pub fn notes_text(release: &Release) -> String {
    let notes = notes(release);
    if notes.is_empty() {
        String::new()
    } else {
        format!("NOTES:\n{notes}\n")
    }
}

/// `helm get hooks`.
pub fn hooks_text(release: &Release) -> String {
    let mut out = String::new();
    for h in &release.hooks {
        let (path, manifest) = h
            .as_ref()
            .map(|h| (h.path.as_str(), h.manifest.as_str()))
            .unwrap_or_default();
        let _ = write!(out, "---\n# Source: {path}\n{manifest}\n");
    }
    out
}

/// `helm get metadata -o json`.
pub fn metadata_json(release: &Release) -> String {
    let m = release.metadata().cloned().unwrap_or_default();
    let mut out = String::new();
    let mut o = Obj::start(&mut out);
    o.string("name", &release.name);
    o.string("chart", &m.name);
    o.string("version", &m.version);
    o.string("appVersion", &m.app_version);
    if !m.annotations.is_empty() {
        o.string_map("annotations", &m.annotations);
    }
    if !release.labels.is_empty() {
        o.string_map("labels", &release.labels);
    }
    if !m.dependencies.is_empty() {
        let out = o.key("dependencies");
        out.push('[');
        for (i, d) in m.dependencies.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            match d {
                Some(d) => d.write(out),
                None => out.push_str("null"),
            }
        }
        out.push(']');
    }
    o.string("namespace", &release.namespace);
    o.int("revision", release.version);
    o.string("status", release.status().as_str());
    o.string("deployedAt", &deployed_at(release));
    o.string_nonempty("applyMethod", &release.apply_method);
    o.end();
    out.push('\n');
    out
}

/// `helm get metadata -o yaml`.
pub fn metadata_yaml(release: &Release) -> String {
    yaml_of_json(&metadata_json(release))
}

/// `helm get metadata` as text.
pub fn metadata_text(release: &Release) -> String {
    let m = release.metadata().cloned().unwrap_or_default();
    let selector = |map: &std::collections::BTreeMap<String, String>| {
        map.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut deps: Vec<&str> = m
        .dependencies
        .iter()
        .flatten()
        .map(|d| d.name.as_str())
        .collect();
    deps.sort_unstable();
    let apply = match release.apply_method.as_str() {
        "" => "client-side apply (defaulted)".to_owned(),
        "csa" => "client-side apply".to_owned(),
        "ssa" => "server-side apply".to_owned(),
        other => format!("unknown ({})", gojson::string(other)),
    };
    let mut out = String::new();
    let _ = writeln!(out, "NAME: {}", release.name);
    let _ = writeln!(out, "CHART: {}", m.name);
    let _ = writeln!(out, "VERSION: {}", m.version);
    let _ = writeln!(out, "APP_VERSION: {}", m.app_version);
    let _ = writeln!(out, "ANNOTATIONS: {}", selector(&m.annotations));
    let _ = writeln!(out, "LABELS: {}", selector(&release.labels));
    let _ = writeln!(out, "DEPENDENCIES: {}", deps.join(","));
    let _ = writeln!(out, "NAMESPACE: {}", release.namespace);
    let _ = writeln!(out, "REVISION: {}", release.version);
    let _ = writeln!(out, "STATUS: {}", release.status());
    let _ = writeln!(out, "DEPLOYED_AT: {}", deployed_at(release));
    let _ = writeln!(out, "APPLY_METHOD: {apply}");
    out
}

fn deployed_at(release: &Release) -> String {
    release
        .last_deployed()
        .map(|t| t.rfc3339())
        .unwrap_or_else(|| ZERO_RFC3339.to_owned())
}

/// `install`/`upgrade -o json`: the whole record, chart included, as helm's
/// `json.Encoder` writes it.
pub fn release_json(release: &Release) -> String {
    let mut out = release.to_json();
    out.push('\n');
    out
}

/// `install`/`upgrade -o yaml`.
pub fn release_yaml(release: &Release) -> String {
    yaml_of_json(&release_json(release))
}

/// YAML as `sigs.k8s.io/yaml` makes it from JSON text that this module wrote.
fn yaml_of_json(json: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(json) {
        Ok(v) => chartkit_yaml::to_yaml(&chartkit_values::strvals::from_json(&v)),
        Err(_) => String::new(),
    }
}

fn string_map(pairs: &[(&str, &String)]) -> Value {
    let map: Map = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Value::String((*v).clone())))
        .collect();
    Value::Map(map)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Chart, Hook, Info, Metadata};
    use crate::status::Status;

    fn release() -> Release {
        Release {
            name: "web".into(),
            namespace: "apps".into(),
            version: 2,
            info: Some(Info {
                last_deployed: GoTime::parse("2026-03-04T05:06:07.5Z").unwrap(),
                status: Status::Deployed,
                description: "Upgrade complete".into(),
                notes: "\n  hello <you>\n\n".into(),
                ..Info::default()
            }),
            chart: Some(Chart {
                metadata: Some(Metadata {
                    name: "podinfo".into(),
                    version: "1.2.3".into(),
                    app_version: "4.5".into(),
                    ..Metadata::default()
                }),
                values: Some(Map::from([
                    ("a".into(), Value::Float(1.0)),
                    ("b".into(), Value::Float(2.0)),
                ])),
                ..Chart::default()
            }),
            config: Some(Map::from([("a".into(), Value::Float(3.0))])),
            manifest: "---\nkind: A".into(),
            hooks: vec![Some(Hook {
                path: "p/t.yaml".into(),
                manifest: "kind: Pod".into(),
                events: vec!["test".into()],
                ..Hook::default()
            })],
            ..Release::default()
        }
    }

    #[test]
    fn list_shapes() {
        let rel = release();
        let elements = list_elements(std::slice::from_ref(&rel), &LocalZone::Utc, None);
        assert_eq!(
            list_json(&elements),
            "[{\"name\":\"web\",\"namespace\":\"apps\",\"revision\":\"2\",\"updated\":\"2026-03-04 05:06:07.5 +0000 UTC\",\"status\":\"deployed\",\"chart\":\"podinfo-1.2.3\",\"app_version\":\"4.5\"}]\n"
        );
        assert_eq!(
            list_yaml(&elements),
            "- app_version: \"4.5\"\n  chart: podinfo-1.2.3\n  name: web\n  namespace: apps\n  revision: \"2\"\n  status: deployed\n  updated: 2026-03-04 05:06:07.5 +0000 UTC\n"
        );
        assert_eq!(list_rows(&elements, true).len(), 1);
        assert_eq!(list_json(&[]), "[]\n");
        assert_eq!(names_json(&[rel]), "[\"web\"]\n");
    }

    #[test]
    fn history_shapes() {
        let rel = release();
        assert_eq!(
            history_json(std::slice::from_ref(&rel)),
            "[{\"revision\":2,\"updated\":\"2026-03-04T05:06:07.5Z\",\"status\":\"deployed\",\"chart\":\"podinfo-1.2.3\",\"app_version\":\"4.5\",\"description\":\"Upgrade complete\"}]\n"
        );
        assert_eq!(history_rows(&[rel])[1][1], "Wed Mar  4 05:06:07 2026");
    }

    #[test]
    fn status_and_get_all_text() {
        let rel = release();
        assert_eq!(
            status_text(&rel, None, None),
            "NAME: web\nLAST DEPLOYED: Wed Mar  4 05:06:07 2026\nNAMESPACE: apps\nSTATUS: deployed\nREVISION: 2\nDESCRIPTION: Upgrade complete\nNOTES:\nhello <you>\n"
        );
        let computed = computed_values(&rel);
        assert_eq!(computed["a"], Value::Float(3.0));
        assert_eq!(computed["b"], Value::Float(2.0));
        let all = status_text(&rel, Some(&computed), None);
        assert!(all.contains("CHART: podinfo\nVERSION: 1.2.3\nAPP_VERSION: 4.5\n"));
        assert!(all.contains("USER-SUPPLIED VALUES:\na: 3\n\nCOMPUTED VALUES:\na: 3\nb: 2\n\nHOOKS:\n---\n# Source: p/t.yaml\nkind: Pod\nMANIFEST:\n---\nkind: A\n"));
    }

    #[test]
    fn values_print_as_helm_prints_them() {
        // helm 4.1.4 printed these for `--set replicaCount=7 --set-json 'x={"n":1e21,"f":0.000001}'`.
        let json = br#"{"config":{"replicaCount":7,"x":{"f":0.000001,"n":1e+21}}}"#;
        let rel = Release::from_json(json).unwrap();
        assert_eq!(
            values_json(&rel.config),
            "{\"replicaCount\":7,\"x\":{\"f\":0.000001,\"n\":1e+21}}\n"
        );
        assert_eq!(
            values_text(&rel.config, false),
            "USER-SUPPLIED VALUES:\nreplicaCount: 7\nx:\n  f: 1e-06\n  \"n\": 1e+21\n"
        );
    }

    #[test]
    fn get_shapes() {
        let rel = release();
        assert_eq!(values_json(&rel.config), "{\"a\":3}\n");
        assert_eq!(values_json(&None), "null\n");
        assert_eq!(values_text(&None, false), "USER-SUPPLIED VALUES:\nnull\n");
        assert_eq!(notes_text(&rel), "NOTES:\n\n  hello <you>\n\n\n");
        assert_eq!(manifest_text(&rel), "---\nkind: A\n");
        assert_eq!(
            metadata_json(&rel),
            "{\"name\":\"web\",\"chart\":\"podinfo\",\"version\":\"1.2.3\",\"appVersion\":\"4.5\",\"namespace\":\"apps\",\"revision\":2,\"status\":\"deployed\",\"deployedAt\":\"2026-03-04T05:06:07Z\"}\n"
        );
        assert!(metadata_text(&rel).ends_with(
            "DEPLOYED_AT: 2026-03-04T05:06:07Z\nAPPLY_METHOD: client-side apply (defaulted)\n"
        ));
    }
}
