//! Sanity check against real output: each corpus chart's templates rendered with the
//! chart's own default values, compared document by document with the recorded
//! `helm template` output for the `default` case.
//!
//! Values coalescing is the render pipeline's job; this harness does a rough version
//! (case values over chart defaults, parent sections and globals into subcharts) that is
//! enough for the corpus. Templates helm itself renders differently on every run
//! (listed in `cases.tsv`) are skipped; every other template must match exactly.

mod corpus;

use std::collections::BTreeMap;

use chartkit_template::TemplateSet;

const GOLDEN: &str = "/work/shared/corpus/golden/helm-4.1.4";
const CASES: &str = "/work/shared/corpus/cases.tsv";

/// Templates whose `default` output helm itself does not reproduce from run to run
/// (random passwords, certificates, names, and checksums of those), from `cases.tsv`.
fn nondeterministic_templates(chart: &str) -> Vec<String> {
    let Ok(cases) = std::fs::read_to_string(CASES) else {
        return Vec::new();
    };
    let Some(row) = cases.lines().find(|l| {
        let cols: Vec<&str> = l.split('\t').collect();
        cols.len() > 9 && cols[0] == chart && cols[1] == "default"
    }) else {
        return Vec::new();
    };
    let column = row.split('\t').nth(9).unwrap_or("-");
    column
        .split("; ")
        .filter_map(|d| d.split_once(' ').map(|(t, _)| t.to_owned()))
        .collect()
}

/// The values file of a chart's `default` case, if it has one.
fn default_case_values(chart: &str) -> Option<chartkit_yaml::Map> {
    let cases = std::fs::read_to_string(CASES).ok()?;
    let row = cases.lines().find(|l| {
        let cols: Vec<&str> = l.split('\t').collect();
        cols.len() > 3 && cols[0] == chart && cols[1] == "default"
    })?;
    let file = row.split('\t').nth(3)?;
    if file == "-" {
        return None;
    }
    let text = std::fs::read_to_string(format!("/work/shared/corpus/{file}")).ok()?;
    chartkit_yaml::parse_values(&text).ok()
}

/// A rough version of Helm's value coalescing for subcharts: each subchart's defaults are
/// overlaid with its parent's section for it, the parent's `global` is overlaid on the
/// subchart's, and the parent then sees the coalesced section. Enough to render most subchart templates as Helm does; the real
/// coalescing (import-values, aliases, tags) belongs to the render pipeline.
fn scope_subchart_values(charts: &mut [corpus::Chart]) {
    let mut order: Vec<usize> = (0..charts.len()).collect();
    order.sort_by_key(|&i| charts[i].path.len());
    for &i in &order {
        let Some((parent_path, name)) = charts[i].path.rsplit_once("/charts/") else {
            continue;
        };
        let (parent_path, name) = (parent_path.to_owned(), name.to_owned());
        let Some(parent) = charts.iter().find(|c| c.path == parent_path) else {
            continue;
        };
        let section = parent.values.get(&name).cloned();
        let global = parent.values.get("global").cloned();
        let child = &mut charts[i].values;
        if let Some(chartkit_yaml::Value::Map(section)) = section {
            overlay(child, &section);
        }
        if let Some(chartkit_yaml::Value::Map(global)) = global {
            let mut merged = match child.get("global") {
                Some(chartkit_yaml::Value::Map(g)) => g.clone(),
                _ => chartkit_yaml::Map::new(),
            };
            overlay(&mut merged, &global);
            child.insert("global".into(), chartkit_yaml::Value::Map(merged));
        }
        // The parent sees the coalesced section, subchart defaults included.
        let coalesced = chartkit_yaml::Value::Map(child.clone());
        if let Some(parent) = charts.iter_mut().find(|c| c.path == parent_path) {
            parent.values.insert(name, coalesced);
        }
    }
}

/// Overlays user values on chart defaults the way Helm's coalescing does for the root
/// chart: maps merge key by key, other values replace, and null deletes.
fn overlay(base: &mut chartkit_yaml::Map, user: &chartkit_yaml::Map) {
    for (k, v) in user {
        match (base.get_mut(k), v) {
            (_, chartkit_yaml::Value::Null) => {
                base.remove(k);
            }
            (Some(chartkit_yaml::Value::Map(b)), chartkit_yaml::Value::Map(u)) => overlay(b, u),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Helm's `SplitManifests`: documents separated by `---` lines, trimmed, empty ones
/// dropped.
fn split_documents(text: &str) -> Vec<String> {
    let mut docs = Vec::new();
    let mut current = String::new();
    for line in text.trim().split_inclusive('\n') {
        if line.starts_with("---") {
            docs.push(std::mem::take(&mut current));
        } else {
            current.push_str(line);
        }
    }
    docs.push(current);
    docs.into_iter()
        .map(|d| d.trim().to_owned())
        .filter(|d| !d.is_empty())
        .collect()
}

/// Documents of a golden file grouped by their `# Source:` template.
fn golden_documents(text: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for doc in text
        .split("\n---\n")
        .flat_map(|d| d.strip_prefix("---\n").or(Some(d)))
    {
        let Some(rest) = doc.strip_prefix("# Source: ") else {
            continue;
        };
        let (source, body) = rest.split_once('\n').unwrap_or((rest, ""));
        out.entry(source.to_owned())
            .or_default()
            .push(body.trim().to_owned());
    }
    out
}

#[test]
fn corpus_templates_match_helm_output() {
    let packages = corpus::packages();
    if packages.is_empty() {
        eprintln!("skipping: corpus not found at {}", corpus::CORPUS);
        return;
    }
    let (mut compared, mut matched) = (0usize, 0usize);
    for pkg in &packages {
        let file = pkg.file_name().and_then(|f| f.to_str()).unwrap_or_default();
        let chart_name = file.rsplit_once('-').map_or(file, |(n, _)| n);
        let Ok(golden_text) =
            std::fs::read_to_string(format!("{GOLDEN}/{chart_name}/default.yaml"))
        else {
            continue;
        };
        let golden = golden_documents(&golden_text);
        let random = nondeterministic_templates(chart_name);
        let entries = corpus::files(pkg);
        let mut charts = corpus::charts(&entries);
        if let Some(user) = default_case_values(chart_name)
            && let Some(root) = charts.iter_mut().min_by_key(|c| c.path.len())
        {
            overlay(&mut root.values, &user);
        }
        scope_subchart_values(&mut charts);
        let mut set = TemplateSet::new();
        let all: Vec<(String, String)> = charts
            .iter()
            .flat_map(|c| c.templates.iter().cloned())
            .collect();
        set.add_all(all.iter().map(|(n, t)| (n.as_str(), t.as_str())))
            .expect("corpus templates parse");
        let root_len = charts.iter().map(|c| c.path.len()).min().unwrap_or(0);
        let (mut chart_compared, mut chart_matched) = (0, 0);
        // Helm renders every template in its parse order with one data map per chart,
        // so templates that `set` values affect the ones rendered after them.
        let datas: Vec<_> = charts
            .iter()
            .map(|c| corpus::render_data(c, c.path.len() == root_len, ""))
            .collect();
        let mut order: Vec<(usize, &String)> = charts
            .iter()
            .enumerate()
            .flat_map(|(i, c)| c.templates.iter().map(move |(n, _)| (i, n)))
            .collect();
        order.sort_by(|a, b| chartkit_template::helm_parse_order(a.1, b.1));
        for (i, name) in order {
            let chart = &charts[i];
            if name.rsplit('/').next().unwrap_or("").starts_with('_') {
                continue;
            }
            {
                let data = datas[i].clone();
                corpus::set_template(&data, chart, name);
                let Some(expected) = golden.get(name).filter(|_| !random.contains(name)) else {
                    let _ = set.render(name, data);
                    continue;
                };
                chart_compared += 1;
                let debug = std::env::var("CHARTKIT_GOLDEN_DEBUG").is_ok_and(|c| c == chart_name);
                let out = match set.render(name, data) {
                    Ok(out) => out,
                    Err(e) => {
                        if debug {
                            eprintln!("{name}: {}", e.helm_message());
                        }
                        continue;
                    }
                };
                let mut ours = split_documents(&out);
                let mut theirs = expected.clone();
                ours.sort();
                theirs.sort();
                if ours == theirs {
                    chart_matched += 1;
                } else if debug {
                    eprintln!(
                        "{name} differs:\n--- ours\n{}\n--- helm\n{}",
                        ours.join("\n---\n"),
                        theirs.join("\n---\n")
                    );
                }
            }
        }
        eprintln!("{chart_name}: {chart_matched}/{chart_compared} templates identical");
        compared += chart_compared;
        matched += chart_matched;
    }
    eprintln!(
        "total: {matched}/{compared} deterministic templates identical to helm's default render"
    );
    assert!(compared > 400, "too few templates compared: {compared}");
    assert_eq!(matched, compared, "templates differ from helm's output");
}
