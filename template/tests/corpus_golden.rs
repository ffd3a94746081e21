//! Sanity check against real output: every successful case of the shared corpus
//! (`cases.tsv`) is rendered and compared, document by document, with the recorded
//! `helm template` output.
//!
//! Values coalescing is the render pipeline's job; this harness does a rough version
//! (case values over chart defaults, parent sections and globals into subcharts) that is
//! enough for the corpus. Cases using `--set` are skipped (parsing `--set` is also the
//! pipeline's), and so are templates helm itself renders differently on every run
//! (listed in `cases.tsv`). Every other template must match exactly.

mod corpus;

use std::collections::BTreeMap;

use chartkit_template::TemplateSet;

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

/// One row of `cases.tsv`.
struct Case {
    chart: String,
    name: String,
    package: String,
    values: Vec<String>,
    command: String,
    golden: String,
    random: Vec<String>,
}

fn cases() -> Vec<Case> {
    let Ok(text) = std::fs::read_to_string(corpus::root().join("cases.tsv")) else {
        return Vec::new();
    };
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            if cols.len() < 10 || cols[5] != "0" {
                return None;
            }
            Some(Case {
                chart: cols[0].to_owned(),
                name: cols[1].to_owned(),
                package: cols[2].to_owned(),
                values: if cols[3] == "-" {
                    Vec::new()
                } else {
                    cols[3].split(',').map(str::to_owned).collect()
                },
                command: cols[4].to_owned(),
                golden: cols[6].to_owned(),
                random: cols[9]
                    .split("; ")
                    .filter_map(|d| d.split_once(' ').map(|(t, _)| t.to_owned()))
                    .collect(),
            })
        })
        .collect()
}

fn flag<'a>(command: &'a str, name: &str) -> Option<&'a str> {
    let mut words = command.split_whitespace();
    while let Some(w) = words.next() {
        if w == name {
            return words.next();
        }
    }
    None
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

/// A rough version of Helm's value coalescing for subcharts: each subchart's defaults are
/// overlaid with its parent's section for it, the parent's `global` is overlaid on the
/// subchart's, and the parent then sees the coalesced section.
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
        if let Some(chartkit_yaml::Value::Map(section)) = &section {
            overlay(child, section);
        }
        if let Some(chartkit_yaml::Value::Map(global)) = &global {
            let mut merged = match child.get("global") {
                Some(chartkit_yaml::Value::Map(g)) => g.clone(),
                _ => chartkit_yaml::Map::new(),
            };
            overlay(&mut merged, global);
            child.insert("global".into(), chartkit_yaml::Value::Map(merged));
        }
        let coalesced = chartkit_yaml::Value::Map(child.clone());
        if let Some(parent) = charts.iter_mut().find(|c| c.path == parent_path) {
            parent.values.insert(name, coalesced);
        }
    }
}

/// Renders one case; returns (templates compared, templates identical, first mismatch).
fn run_case(case: &Case) -> (usize, usize, Option<String>) {
    let Ok(golden_text) = std::fs::read_to_string(corpus::root().join(&case.golden)) else {
        return (0, 0, None);
    };
    let golden = golden_documents(&golden_text);
    let entries = corpus::files(&corpus::root().join(&case.package));
    let mut charts = corpus::charts(&entries);
    if let Some(root) = charts.iter_mut().min_by_key(|c| c.path.len()) {
        for file in &case.values {
            let text = std::fs::read_to_string(corpus::root().join(file)).expect("values");
            overlay(
                &mut root.values,
                &chartkit_yaml::parse_values(&text).expect("values"),
            );
        }
    }
    scope_subchart_values(&mut charts);
    let kube = flag(&case.command, "--kube-version").unwrap_or("1.35.0");
    let apis: Vec<&str> = flag(&case.command, "--api-versions").into_iter().collect();

    let mut set = TemplateSet::new();
    let all: Vec<(String, String)> = charts
        .iter()
        .flat_map(|c| c.templates.iter().cloned())
        .collect();
    set.add_all(all.iter().map(|(n, t)| (n.as_str(), t.as_str())))
        .expect("corpus templates parse");
    let root_len = charts.iter().map(|c| c.path.len()).min().unwrap_or(0);
    // Helm renders every template in its parse order with one data map per chart, so
    // templates that `set` values affect the ones rendered after them.
    let datas: Vec<_> = charts
        .iter()
        .map(|c| {
            corpus::render_data_with(
                c,
                c.path.len() == root_len,
                "",
                corpus::capabilities_for(kube, &apis),
            )
        })
        .collect();
    // `.Subcharts` maps each direct subchart's name to that subchart's own data.
    for (i, c) in charts.iter().enumerate() {
        if let Some((parent, name)) = c.path.rsplit_once("/charts/")
            && let Some(p) = charts.iter().position(|x| x.path == parent)
            && let chartkit_template::Value::Map(top) = &datas[p]
            && let Some(chartkit_template::Value::Map(subs)) = top.get("Subcharts")
        {
            subs.borrow_mut().insert(name.into(), datas[i].clone());
        }
    }
    let mut order: Vec<(usize, &String)> = charts
        .iter()
        .enumerate()
        .flat_map(|(i, c)| c.templates.iter().map(move |(n, _)| (i, n)))
        .collect();
    order.sort_by(|a, b| chartkit_template::helm_parse_order(a.1, b.1));
    let (mut compared, mut matched, mut mismatch) = (0, 0, None);
    for (i, name) in order {
        if name.rsplit('/').next().unwrap_or("").starts_with('_') {
            continue;
        }
        let data = datas[i].clone();
        corpus::set_template(&data, &charts[i], name);
        let result = set.render(name, data);
        let Some(expected) = golden.get(name).filter(|_| !case.random.contains(name)) else {
            continue;
        };
        compared += 1;
        let ours = match result {
            Ok(out) => split_documents(&out),
            Err(e) => {
                mismatch.get_or_insert_with(|| format!("{name}: {}", e.helm_message()));
                continue;
            }
        };
        let (mut ours, mut theirs) = (ours, expected.clone());
        ours.sort();
        theirs.sort();
        if ours == theirs {
            matched += 1;
        } else {
            mismatch.get_or_insert_with(|| {
                format!(
                    "{name} differs:\n--- ours\n{}\n--- helm\n{}",
                    ours.join("\n---\n"),
                    theirs.join("\n---\n")
                )
            });
        }
    }
    (compared, matched, mismatch)
}

#[test]
fn corpus_cases_match_helm_output() {
    let cases = cases();
    if cases.is_empty() {
        eprintln!(
            "skipping: corpus not found at {} (set CHARTKIT_CORPUS)",
            corpus::root().display()
        );
        return;
    }
    let (mut compared, mut matched, mut failures) = (0, 0, Vec::new());
    let mut ran = 0;
    for case in &cases {
        if case.command.contains("--set") || !corpus::root().join(&case.package).exists() {
            continue;
        }
        ran += 1;
        let (c, m, mismatch) = run_case(case);
        compared += c;
        matched += m;
        if let Some(detail) = mismatch {
            failures.push(format!("{}/{}: {detail}", case.chart, case.name));
        }
    }
    eprintln!(
        "{ran} cases: {matched}/{compared} deterministic templates identical to helm's output"
    );
    assert!(compared > 700, "too few templates compared: {compared}");
    assert!(
        failures.is_empty(),
        "{} case(s) differ:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
