//! Shared helpers: rendering a template the way Helm does, and asking the real `helm`
//! for its output when it is installed.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use chartkit_template::objects::{Capabilities, Files, HelmVersion};
use chartkit_template::{Entries, MapKind, TemplateSet, Value};

/// The data Helm passes to a chart template, for a chart named `c` released as `rel` in
/// namespace `ns`.
pub fn helm_data(values_yaml: &str, template_name: &str) -> Value {
    let values = chartkit_yaml::parse_values(values_yaml).expect("values parse");
    let mut top = Entries::new();
    top.insert("Values".into(), Value::values_from_data(&values));
    let mut release = Entries::new();
    release.insert("Name".into(), Value::str("rel"));
    release.insert("Namespace".into(), Value::str("ns"));
    release.insert("IsInstall".into(), Value::Bool(true));
    release.insert("IsUpgrade".into(), Value::Bool(false));
    release.insert("Revision".into(), Value::Int(1));
    release.insert("Service".into(), Value::str("Helm"));
    top.insert("Release".into(), Value::map(release));
    let mut chart = Entries::new();
    chart.insert("Name".into(), Value::str("c"));
    chart.insert("Version".into(), Value::str("0.1.0"));
    chart.insert("APIVersion".into(), Value::str("v2"));
    chart.insert("AppVersion".into(), Value::str(""));
    chart.insert("IsRoot".into(), Value::Bool(true));
    top.insert("Chart".into(), Value::map(chart));
    let mut tmpl = Entries::new();
    tmpl.insert("Name".into(), Value::str(template_name));
    tmpl.insert("BasePath".into(), Value::str("c/templates"));
    top.insert("Template".into(), Value::map_of(MapKind::Values, tmpl));
    top.insert("Capabilities".into(), capabilities());
    top.insert(
        "Files".into(),
        Files::new(CHART_FILES.iter().map(|(n, d)| (n.to_string(), d.to_vec()))).into_value(),
    );
    Value::map_of(MapKind::Values, top)
}

/// Non-template files of the test chart, visible through `.Files`; `bin/k.jks` is not
/// UTF-8 (and starts like UTF-16 to go-yaml).
pub const CHART_FILES: &[(&str, &[u8])] = &[
    ("files/a.conf", b"x=1\n"),
    ("files/b.conf", b"y=2\n"),
    ("files/sub/c.txt", b"hello\nworld\n"),
    ("bin/k.jks", b"\xff\xfe\x00abc\xe2\x82\n\xc0x"),
];

/// `helm template`'s default capabilities (only the API versions the tests ask about).
pub fn capabilities() -> Value {
    Capabilities {
        kube_version: "v1.35.0".into(),
        kube_normalized_version: "v1.35.0".into(),
        kube_major: "1".into(),
        kube_minor: "35".into(),
        api_versions: vec!["v1".into(), "apps/v1".into(), "batch/v1".into()],
        helm_version: HelmVersion {
            version: "v4.1.4".into(),
            git_commit: "05fa37973dc9e42b76e1d2883494c87174b6074f".into(),
            git_tree_state: "clean".into(),
            go_version: "go1.25.9".into(),
            kube_client_version: "v1.35".into(),
        },
    }
    .into_value()
}

/// Renders `tpl` as Go's executor outputs it (before Helm removes `<no value>`), as the
/// body of a `define` called through `include`, which is what [`helm_raw`] observes.
pub fn render_raw(tpl: &str, values_yaml: &str) -> Result<String, String> {
    let mut set = TemplateSet::new();
    set.add("c/templates/t.yaml", tpl)
        .map_err(|e| e.to_string())?;
    set.execute(
        "c/templates/t.yaml",
        helm_data(values_yaml, "c/templates/t.yaml"),
    )
    .map_err(|e| e.to_string())
}

pub fn helm_binary() -> Option<PathBuf> {
    let mut candidates = vec![std::env::var_os("CHARTKIT_HELM").map(PathBuf::from)];
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|dir| Some(dir.join("helm"))));
    }
    candidates.push(
        std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache/chartkit-peers/helm")),
    );
    candidates.into_iter().flatten().find(|p| p.is_file())
}

/// Runs the real helm on many template snippets sharing one values file, returning each
/// snippet's raw executor output (or helm's error text for the whole run).
pub fn helm_raw(snippets: &[&str], values_yaml: &str) -> Option<Result<Vec<String>, String>> {
    use base64::Engine as _;
    let helm = helm_binary()?;
    let dir = tempdir();
    let chart = dir.join("c");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(chart.join("values.yaml"), values_yaml).unwrap();
    for (name, data) in CHART_FILES {
        let path = chart.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, data).unwrap();
    }
    let mut main = String::new();
    for (i, s) in snippets.iter().enumerate() {
        std::fs::write(
            chart.join(format!("templates/_b{i}.tpl")),
            format!("{{{{- define \"b{i}\" -}}}}{s}{{{{- end -}}}}"),
        )
        .unwrap();
        main.push_str(&format!("c{i}: {{{{ include \"b{i}\" . | b64enc }}}}\n"));
    }
    std::fs::write(chart.join("templates/t.yaml"), main).unwrap();
    let out = Command::new(helm)
        .args(["template", "rel"])
        .arg(&chart)
        .args(["--namespace", "ns"])
        .output()
        .expect("run helm");
    std::fs::remove_dir_all(&dir).ok();
    if !out.status.success() {
        return Some(Err(String::from_utf8_lossy(&out.stderr).into_owned()));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut results = vec![String::new(); snippets.len()];
    for line in stdout.lines() {
        if let Some(rest) = line.strip_prefix('c')
            && let Some((i, b64)) = rest.split_once(": ")
            && let Ok(i) = i.parse::<usize>()
        {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64.trim().trim_matches('"'))
                .unwrap_or_default();
            results[i] = String::from_utf8_lossy(&bytes).into_owned();
        }
    }
    Some(Ok(results))
}

fn tempdir() -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let p = std::env::temp_dir().join(format!(
        "chartkit-template-oracle-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&p).unwrap();
    p
}

/// A table of cases: template, values, expected raw output (or `ERR:` + error text).
pub type Case = (&'static str, &'static str, &'static str);

/// Checks every case against our renderer.
pub fn check_cases(cases: &[Case]) {
    let mut failures = Vec::new();
    for (tpl, values, expected) in cases {
        let got = match render_raw(tpl, values) {
            Ok(s) => s,
            Err(e) => format!("ERR:{e}"),
        };
        let matches = if let Some(err) = expected.strip_prefix("ERR:") {
            got.starts_with("ERR:") && got.contains(err)
        } else {
            got == *expected
        };
        if !matches {
            failures.push(format!(
                "template: {tpl:?}\n  expected: {expected:?}\n  got:      {got:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Checks that the expected outputs of non-error cases are what helm itself produces.
/// Skips, saying so, when helm is not installed.
pub fn check_cases_against_helm(cases: &[Case]) {
    if helm_binary().is_none() {
        eprintln!("skipping helm comparison: no helm binary (set CHARTKIT_HELM)");
        return;
    }
    let mut by_values: std::collections::BTreeMap<&str, Vec<&Case>> = Default::default();
    // A `define` cannot sit inside the `define` the comparison wraps each case in.
    for case in cases
        .iter()
        .filter(|c| !c.2.starts_with("ERR:") && !c.0.contains("{{ define"))
    {
        by_values.entry(case.1).or_default().push(case);
    }
    let mut failures = Vec::new();
    for (values, cases) in by_values {
        let snippets: Vec<&str> = cases.iter().map(|c| c.0).collect();
        match helm_raw(&snippets, values).expect("helm present") {
            Ok(outputs) => {
                for (case, out) in cases.iter().zip(outputs) {
                    if out != case.2 {
                        failures.push(format!(
                            "template: {:?}\n  expected: {:?}\n  helm:     {:?}",
                            case.0, case.2, out
                        ));
                    }
                }
            }
            Err(e) => failures.push(format!("helm failed for values {values:?}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) differ from helm:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

pub fn path_exists(p: &str) -> bool {
    Path::new(p).exists()
}

/// Renders the chart `c` made of `files` (paths under `templates/`) and returns the
/// message `helm template` prints for the first failing template, as our engine words
/// it. Templates render in Helm's order: `t.yaml` files are what the cases use.
pub fn render_error(files: &[(&str, &str)]) -> String {
    let mut set = TemplateSet::new();
    let values = files
        .iter()
        .find(|(n, _)| *n == "../values.yaml")
        .map_or("", |(_, t)| *t);
    let named: Vec<(String, &str)> = files
        .iter()
        .filter(|(n, _)| !n.starts_with("../"))
        .map(|(n, t)| (format!("c/templates/{n}"), *t))
        .collect();
    if let Err(e) = set.add_all(named.iter().map(|(n, t)| (n.as_str(), *t))) {
        return e.helm_message();
    }
    let mut names: Vec<&String> = named
        .iter()
        .map(|(n, _)| n)
        .filter(|n| !n.rsplit('/').next().unwrap_or("").starts_with('_'))
        .collect();
    names.sort_by(|a, b| chartkit_template::helm_parse_order(a, b));
    for name in names {
        if let Err(e) = set.render(name, helm_data(values, name)) {
            return e.helm_message();
        }
    }
    "no error".into()
}

/// The error `helm template` prints for the chart `c` made of `files`, without the
/// `Error: ` prefix and the `--debug` hint.
pub fn helm_error(files: &[(&str, &str)]) -> Option<String> {
    let helm = helm_binary()?;
    let dir = tempdir();
    let chart = dir.join("c");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    )
    .unwrap();
    for (name, text) in files {
        std::fs::write(chart.join("templates").join(name), text).unwrap();
    }
    let out = Command::new(helm)
        .args(["template", "rel"])
        .arg(&chart)
        .args(["--namespace", "ns"])
        .output()
        .expect("run helm");
    std::fs::remove_dir_all(&dir).ok();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let msg = stderr.strip_prefix("Error: ").unwrap_or(&stderr);
    let msg = msg
        .strip_suffix("\n\nUse --debug flag to render out invalid YAML\n")
        .unwrap_or(msg);
    Some(msg.trim_end_matches('\n').to_owned())
}
