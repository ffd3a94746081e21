//! `chartkit lint` against the real `helm lint`, run live: stdout and exit code must be
//! the same chart by chart, on the corpus's copies of helm's own test charts and on chart
//! directories made here for each kind of finding where the two once differed (a chart
//! named unlike its directory, missing dependencies, Chart.yaml fields, repeated keys,
//! malformed templates, charts that do not load, paths that are not charts).
//! `scripts/lint-vs-helm` runs the same comparison over any tree of charts.

use std::path::Path;
use std::process::Command;

use chartkit_tests::TestContext;
use chartkit_tests::archive::{self, Entry};
use chartkit_tests::corpus::{corpus_or_skip, packages};
use chartkit_tests::peers::helm_or_skip;

/// Both tools unpack a package into a fresh temporary directory (`helm-lint1234`,
/// `chartkit-lintAbC123`) and name findings after it; that name is the one part of
/// their output that may differ.
fn normalised(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = ["/helm-lint", "/chartkit-lint"]
        .iter()
        .filter_map(|p| rest.find(p).map(|i| (i, p.len())))
        .min()
    {
        let (start, prefix) = at;
        out.push_str(&rest[..start]);
        out.push_str("/<unpacked>");
        let tail = &rest[start + prefix..];
        let end = tail
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(tail.len());
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

fn outcome(command: &mut Command) -> String {
    let output = command.output().expect("run lint");
    format!(
        "{}exit {:?}",
        normalised(&String::from_utf8_lossy(&output.stdout)),
        output.status.code()
    )
}

/// The difference between `helm lint ARGS` and `chartkit lint ARGS` run in `dir`, if any.
/// helm lists subcharts in Go's map order, which changes between runs, so a difference
/// is only one when none of a few more runs of helm prints what chartkit printed.
fn difference(ctx: &TestContext, helm: &Path, dir: &Path, args: &[&str]) -> Option<String> {
    let run_helm = || outcome(ctx.hermetic(helm).current_dir(dir).arg("lint").args(args));
    let ours = outcome(ctx.chartkit().current_dir(dir).arg("lint").args(args));
    let theirs = run_helm();
    if theirs == ours || (0..20).any(|_| run_helm() == ours) {
        return None;
    }
    Some(format!(
        "lint {}:\n--- helm\n{theirs}\n--- chartkit\n{ours}",
        args.join(" ")
    ))
}

#[test]
fn lint_matches_helm_on_the_corpus_helm_test_charts() {
    let test = "lint_matches_helm_on_the_corpus_helm_test_charts";
    let Some(corpus) = corpus_or_skip(test) else {
        return;
    };
    let Some(helm) = helm_or_skip(test) else {
        return;
    };
    let ctx = TestContext::new();
    let mut compared = 0;
    let mut differences = Vec::new();
    for package in packages(&corpus) {
        let relative = package.strip_prefix(&corpus).unwrap().to_string_lossy();
        if !relative.starts_with("charts/helm-testdata/") {
            continue;
        }
        for flags in [&[][..], &["--strict"]] {
            let args: Vec<&str> = flags.iter().copied().chain([relative.as_ref()]).collect();
            compared += 1;
            differences.extend(difference(&ctx, &helm, &corpus, &args));
        }
    }
    assert!(compared >= 60, "only {compared} lint runs compared");
    assert!(
        differences.is_empty(),
        "{} of {compared} lint runs differ from helm's:\n{}",
        differences.len(),
        differences.join("\n")
    );
}

const VALID_CHART: &str =
    "apiVersion: v2\nname: NAME\nversion: 0.1.0\nicon: https://example.com/i.png\n";
const CONFIG_MAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n";

/// Chart directories, one per case: (directory, files). A Chart.yaml or template left out
/// is a valid one.
fn cases() -> Vec<(&'static str, Vec<(&'static str, String)>)> {
    let chart = |text: &str| ("Chart.yaml", text.to_owned());
    let template = |text: &str| ("templates/t.yaml", text.to_owned());
    vec![
        // Directory and chart name differ: helm says nothing of it.
        ("other", vec![chart(&VALID_CHART.replace("NAME", "demo"))]),
        // Missing dependencies are named with the chart's absolute path.
        (
            "missing-deps",
            vec![
                chart(&format!(
                    "{}dependencies:\n- name: db\n  version: 1.x\n  repository: https://example.com\n",
                    VALID_CHART.replace("NAME", "missing-deps")
                )),
                (
                    "charts/extra/Chart.yaml",
                    "apiVersion: v2\nname: extra\nversion: 0.1.0\n".into(),
                ),
            ],
        ),
        // Chart.yaml fields of the wrong type, or not valid.
        (
            "field-types",
            vec![chart(
                "apiVersion: v2\nname: field-types\nversion: 0.1.0\nmaintainers: someone\n",
            )],
        ),
        (
            "nested-field-types",
            vec![chart(
                "apiVersion: v2\nname: nested-field-types\nversion: 0.1.0\ndependencies:\n- name: a\n  tags: [[1]]\n",
            )],
        ),
        (
            "field-values",
            vec![chart(
                "apiVersion: v3\nname: a/b\nversion: 1.0\nicon: not-a-url\nsources: [nope]\nmaintainers: [{email: x@y.z}]\n",
            )],
        ),
        // Of several wrongly typed fields, Go names the first in key order.
        (
            "field-types-in-key-order",
            vec![chart(
                "name: x\nversion: 0.1.0\nkeywords: {a: 1}\ndeprecated: x\napiVersion: v2\n",
            )],
        ),
        (
            "chart-type",
            vec![chart(
                "apiVersion: v2\nname: chart-type\nversion: 0.1.0\ntype: plugin\n",
            )],
        ),
        (
            "chart-yaml-syntax",
            vec![chart(
                "apiVersion: v2\nname: chart-yaml-syntax\nversion: 0.1.0\ndescription: a: b\n",
            )],
        ),
        // Repeated keys (go-yaml's `unmarshal errors:`), and fields helm does not know.
        (
            "duplicate-keys",
            vec![chart(
                "apiVersion: v2\nname: duplicate-keys\napiVersion: v1\nversion: 0.1.0\nmaintainers:\n- name: a\n  name: b\n",
            )],
        ),
        (
            "unknown-fields",
            vec![chart(
                "apiVersion: v2\nname: unknown-fields\nversion: 0.1.0\nzzz: 1\nmaintainers:\n- name: a\n  handle: b\n",
            )],
        ),
        // Templates that render to something Kubernetes' decoder cannot read.
        (
            "template-yaml",
            vec![template(
                "kind: ConfigMap\nmetadata:\n  name: x\n data: 1\n",
            )],
        ),
        (
            "template-json",
            vec![template("{ {- $name := .Release.Name -}}\n")],
        ),
        (
            "template-json-eof",
            vec![template("{\"kind\": \"ConfigMap\"\n")],
        ),
        (
            "template-json-then-yaml",
            vec![template("{\"a\": 1}\n---\n[1, 2]\n")],
        ),
        ("template-separator", vec![template("--- x\nkind: A\n")]),
        (
            "template-types",
            vec![template("kind: ConfigMap\nmetadata: [1]\n")],
        ),
        (
            "template-indent",
            vec![template("  kind: ConfigMap\n  metadata:\n    name: x\n")],
        ),
        // Values and subcharts that do not load.
        (
            "values-not-a-map",
            vec![("values.yaml", "name= \"value\"\n".into())],
        ),
        ("values-syntax", vec![("values.yaml", "a: [\n".into())]),
        (
            "bad-subchart",
            vec![(
                "charts/sub/Chart.yaml",
                "apiVersion: v2\nversion: 0.1.0\n".into(),
            )],
        ),
        (
            "template-json-falls-back-to-yaml",
            vec![template(
                "{\"kind\": \"ConfigMap\",\n \"metadata\": {\"name\": \"x\"},}\n",
            )],
        ),
        // Every .yaml and .yml template is checked, whatever the case of its extension.
        (
            "template-extensions",
            vec![
                ("templates/a.yml", "kind: Service\nmetadata:\n  name: Bad\n".into()),
                ("templates/b.YAML", "kind: Service\nmetadata:\n  name: Bad2\n".into()),
                ("templates/c.json", "{}\n".into()),
            ],
        ),
        // CRDs are read as templates are.
        (
            "crds",
            vec![(
                "crds/a.yaml",
                "apiVersion: v1\nkind: ConfigMap\n---\n{{ x }}\n".into(),
            )],
        ),
        // Values and schemas that do not read as helm reads them.
        // Of several fields of the wrong type, Go names the first it meets: keys sorted
        // at every level, list elements in order.
        (
            "nested-field-order",
            vec![chart(
                "apiVersion: v2\nname: nested-field-order\nversion: 0.1.0\ndependencies:\n- name: x\n  tags: {}\n  import-values: {}\n- {version: [], alias: {}}\n",
            )],
        ),
        (
            "nested-field-order-maintainers",
            vec![chart(
                "apiVersion: v2\nname: nested-field-order-maintainers\nversion: 0.1.0\nmaintainers:\n- {url: [], name: {}}\n- {email: []}\n",
            )],
        ),
        (
            "values-second-document",
            vec![("values.yaml", "a: 1\n---\nb: [\n".into())],
        ),
        (
            "schema-not-json",
            vec![
                ("values.yaml", "a: 1\n".into()),
                ("values.schema.json", "{\"type\": \"object\",".into()),
            ],
        ),
        (
            "schema-null-default",
            vec![
                ("values.yaml", "policy:\n".into()),
                (
                    "values.schema.json",
                    "{\"type\": \"object\", \"required\": [\"policy\"], \"properties\": {\"policy\": {\"type\": \"string\"}}}".into(),
                ),
            ],
        ),
        // Chart.yaml documents that are not maps, or have a null key.
        ("chart-yaml-string", vec![chart("a\n---\nb: [\n")]),
        ("chart-yaml-list", vec![chart("- a\n")]),
        (
            "chart-yaml-null-key",
            vec![chart(&format!(
                "{}~: 1\n",
                VALID_CHART.replace("NAME", "chart-yaml-null-key")
            ))],
        ),
        // .helmignore: blank lines are skipped without a word; patterns Helm refuses.
        (
            "helmignore-blank-lines",
            vec![(".helmignore", "\n  \n\t\n*.txt\n\n".into())],
        ),
        ("helmignore-bad-pattern", vec![(".helmignore", "[\n".into())]),
        ("helmignore-double-star", vec![(".helmignore", "a/**\n".into())]),
        // Not a chart at all.
        ("no-chart-yaml", vec![("values.yaml", "a: 1\n".into())]),
        ("chart-yaml-directory", vec![("Chart.yaml/x", "a: 1\n".into())]),
    ]
}

#[test]
fn lint_matches_helm_on_each_kind_of_difference() {
    let Some(helm) = helm_or_skip("lint_matches_helm_on_each_kind_of_difference") else {
        return;
    };
    let ctx = TestContext::new();
    let mut runs: Vec<Vec<String>> = Vec::new();
    for (dir, files) in cases() {
        let root = ctx.path(dir);
        std::fs::create_dir_all(&root).unwrap();
        let mut files = files;
        if dir != "no-chart-yaml" && !files.iter().any(|(name, _)| name.starts_with("Chart.yaml")) {
            files.push(("Chart.yaml", VALID_CHART.replace("NAME", dir)));
        }
        if !files.iter().any(|(name, _)| name.starts_with("templates/")) {
            files.push(("templates/t.yaml", CONFIG_MAP.to_owned()));
        }
        for (name, text) in files {
            let path = root.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        for flags in [&[][..], &["--strict"]] {
            runs.push(
                flags
                    .iter()
                    .map(|f| f.to_string())
                    .chain([dir.into()])
                    .collect(),
            );
        }
    }
    // Subchart packages: one that is not gzip, one whose own subchart is not valid (its
    // error wrapped once per level, naming each parent by its chart name).
    let archives = [
        ("bad-subchart-archive", b"garbage, not gzip\n".to_vec()),
        (
            "nested-subchart-archive",
            archive::build(&[
                Entry::File("sub/Chart.yaml", archive::chart_yaml("subname").as_bytes()),
                Entry::File(
                    "sub/charts/deep/Chart.yaml",
                    b"apiVersion: v2\nname: deep\nversion: 0.1.0\ntype: plugin\n",
                ),
            ]),
        ),
    ];
    for (dir, package) in archives {
        std::fs::create_dir_all(ctx.path(dir).join("templates")).unwrap();
        std::fs::write(ctx.path(dir).join("templates/t.yaml"), CONFIG_MAP).unwrap();
        std::fs::write(
            ctx.path(dir).join("Chart.yaml"),
            VALID_CHART.replace("NAME", dir),
        )
        .unwrap();
        archive::write(&ctx.path(dir).join("charts/sub-0.1.0.tgz"), &package);
        runs.push(vec![dir.into()]);
    }
    let absolute = ctx.path("missing-deps").display().to_string();
    runs.push(vec![absolute]);
    runs.push(vec!["--with-subcharts".into(), "./missing-deps".into()]);
    runs.push(vec![
        "--quiet".into(),
        "other".into(),
        "missing-deps".into(),
    ]);
    runs.push(vec!["not-there".into()]);
    runs.push(vec!["not-there.tgz".into()]);
    runs.push(vec![
        "--skip-schema-validation".into(),
        "schema-not-json".into(),
    ]);
    let mut differences = Vec::new();
    for args in &runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        differences.extend(difference(&ctx, &helm, ctx.dir(), &args));
    }
    assert!(
        differences.is_empty(),
        "{} of {} lint runs differ from helm's:\n{}",
        differences.len(),
        runs.len(),
        differences.join("\n")
    );
}

#[test]
fn unpack_directories_are_the_only_text_normalised() {
    assert_eq!(
        normalised(
            "[ERROR] /tmp/helm-lint1234/web: missing\n[ERROR] /tmp/chartkit-lintAbC9z/web: x\n"
        ),
        "[ERROR] /tmp/<unpacked>/web: missing\n[ERROR] /tmp/<unpacked>/web: x\n"
    );
    assert_eq!(
        normalised("[INFO] Chart.yaml: icon"),
        "[INFO] Chart.yaml: icon"
    );
}
