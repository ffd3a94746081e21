//! The whole pipeline on one chart exercising aliases, conditions, import-values, a
//! library subchart, globals, null handling, hooks and kind order. The expected text is
//! what `helm template rel r -n ns --set sub.enabled=false --set a.w=null` printed.

use chartkit_chart::{File, LoadOptions, load_files};
use chartkit_render::{OutputOptions, RenderOptions, render, template_output};

const FILES: &[(&str, &str)] = &[
    (
        "Chart.yaml",
        "apiVersion: v2\nname: r\nversion: 0.1.0\ndependencies:\n- name: sub\n  version: ~0.1.0\n  alias: other\n  import-values:\n  - child: exported\n    parent: imported\n- name: sub\n  version: 0.1.0\n  condition: sub.enabled\n- name: lib\n  version: 1.0.0\n",
    ),
    (
        "charts/lib/Chart.yaml",
        "apiVersion: v2\nname: lib\nversion: 1.0.0\ntype: library\n",
    ),
    (
        "charts/lib/templates/_h.tpl",
        "{{- define \"lib.hello\" }}hello from {{ .Chart.Name }}{{ end -}}\n",
    ),
    ("charts/lib/templates/x.yaml", "kind: Ignored\n"),
    (
        "charts/sub/Chart.yaml",
        "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
    ),
    (
        "charts/sub/templates/v.yaml",
        "kind: Service\nmetadata:\n  name: {{ .Chart.Name }}\nvalues: {{ toJson .Values }}\n",
    ),
    (
        "charts/sub/values.yaml",
        "s1: default\ns2: null\nexported: {e: 1, mine: 2}\nglobal:\n  g: {c: 2}\n",
    ),
    (
        "templates/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: {{ .Release.Namespace }}\n",
    ),
    (
        "templates/hook.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: hook\n  annotations:\n    helm.sh/hook: post-install\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: test\n  annotations:\n    helm.sh/hook: test\n",
    ),
    (
        "templates/v.yaml",
        "# {{ include \"lib.hello\" . }}\nvalues: {{ toJson .Values }}\nchart: {{ toJson .Chart.Dependencies }}\nchartinfo: {{ list .Chart.IsRoot .Chart.Name .Chart.Maintainers | toJson }}\nrelease: {{ toJson .Release }}\ntemplate: {{ toJson .Template }}\nsubcharts: {{ keys .Subcharts | sortAlpha | toJson }}\n",
    ),
    (
        "values.yaml",
        "a:\n  x: 1\n  nn: null\ntop: null\nother:\n  s1: fromparent\nimported:\n  mine: 1\nglobal:\n  g: {p: 1}\n",
    ),
];

const HELM_OUTPUT: &str = "---\n# Source: r/templates/cm.yaml\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n---\n# Source: r/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: rel-cm\n---\n# Source: r/charts/other/templates/v.yaml\nkind: Service\nmetadata:\n  name: other\nvalues: {\"exported\":{\"e\":1,\"mine\":2},\"global\":{\"g\":{\"c\":2,\"p\":1}},\"s1\":\"fromparent\"}\n---\n# Source: r/templates/v.yaml\n# hello from r\nvalues: {\"a\":{\"nn\":null,\"w\":null,\"x\":1},\"global\":{\"g\":{\"p\":1}},\"imported\":{\"e\":1,\"mine\":1},\"lib\":{\"global\":{\"g\":{\"p\":1}}},\"other\":{\"exported\":{\"e\":1,\"mine\":2},\"global\":{\"g\":{\"c\":2,\"p\":1}},\"s1\":\"fromparent\"},\"sub\":{\"enabled\":false},\"top\":null}\nchart: [{\"Alias\":\"other\",\"Condition\":\"\",\"Enabled\":true,\"ImportValues\":[{\"child\":\"exported\",\"parent\":\"imported\"}],\"Name\":\"other\",\"Repository\":\"\",\"Tags\":[],\"Version\":\"~0.1.0\"},{\"Alias\":\"\",\"Condition\":\"\",\"Enabled\":true,\"ImportValues\":[],\"Name\":\"lib\",\"Repository\":\"\",\"Tags\":[],\"Version\":\"1.0.0\"}]\nchartinfo: [true,\"r\",[]]\nrelease: {\"IsInstall\":true,\"IsUpgrade\":false,\"Name\":\"rel\",\"Namespace\":\"ns\",\"Revision\":1,\"Service\":\"Helm\"}\ntemplate: {\"BasePath\":\"r/templates\",\"Name\":\"r/templates/v.yaml\"}\nsubcharts: [\"lib\",\"other\"]\n---\n# Source: r/templates/hook.yaml\napiVersion: v1\nkind: Pod\nmetadata:\n  name: test\n  annotations:\n    helm.sh/hook: test\n---\n# Source: r/templates/hook.yaml\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: hook\n  annotations:\n    helm.sh/hook: post-install\n";

fn user_values(sets: &[&str]) -> chartkit_yaml::Map {
    let mut values = chartkit_yaml::Map::new();
    for s in sets {
        chartkit_values::parse_set(s, &mut values).unwrap();
    }
    values
}

fn render_with(sets: &[&str], output: &OutputOptions) -> String {
    let chart = load_files(
        FILES
            .iter()
            .map(|(n, d)| File::new(*n, d.as_bytes()))
            .collect(),
        "r",
        &LoadOptions::default(),
    )
    .unwrap();
    let options = RenderOptions {
        release_name: "rel".into(),
        namespace: "ns".into(),
        ..Default::default()
    };
    let rendered = render(chart, &user_values(sets), &options).unwrap();
    template_output(&rendered, output).unwrap()
}

#[test]
fn the_pipeline_matches_helm() {
    let ours = render_with(
        &["sub.enabled=false", "a.w=null"],
        &OutputOptions::default(),
    );
    assert_eq!(ours, HELM_OUTPUT);
}

#[test]
fn output_switches_filter_like_helm() {
    let sets = ["sub.enabled=false", "a.w=null"];
    let no_tests = render_with(
        &sets,
        &OutputOptions {
            skip_tests: true,
            ..Default::default()
        },
    );
    assert!(!no_tests.contains("name: test\n"));
    assert!(no_tests.contains("name: hook\n"));
    let no_hooks = render_with(
        &sets,
        &OutputOptions {
            no_hooks: true,
            ..Default::default()
        },
    );
    assert!(!no_hooks.contains("helm.sh/hook"));
    let only = render_with(
        &sets,
        &OutputOptions {
            show_only: vec!["templates/cm.yaml".into()],
            ..Default::default()
        },
    );
    assert_eq!(
        only,
        "---\n# Source: r/templates/cm.yaml\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n---\n# Source: r/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: rel-cm\n"
    );
}

/// Values nested as deep as go-yaml reads them (10,000 levels) go through coalescing,
/// a subchart's section, the templates (`toJson`, `fromYaml`, `deepCopy`) and the
/// manifest checks on a thread with a worker's 2 MiB stack (the lengths are what
/// helm 4.1.4 printed for the same chart).
#[test]
fn values_nested_to_go_yamls_depth_render_on_a_worker_stack() {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let deep = format!("a:\n{}x\n", "- ".repeat(9_998));
            let files = vec![
                File::new(
                    "Chart.yaml",
                    b"apiVersion: v2\nname: d\nversion: 0.1.0\n".as_slice(),
                ),
                File::new("values.yaml", format!("sub:\n  {}", deep.replace('\n', "\n  ")).into_bytes()),
                File::new("deep.txt", deep.clone().into_bytes()),
                File::new(
                    "charts/sub/Chart.yaml",
                    b"apiVersion: v2\nname: sub\nversion: 0.1.0\n".as_slice(),
                ),
                File::new(
                    "charts/sub/templates/cm.yaml",
                    b"kind: ConfigMap\ndata:\n  j: \"{{ toJson .Values | len }}\"\n  f: \"{{ $.Files.Get \"deep.txt\" | fromYaml | deepCopy | toJson | len }}\"\n".as_slice(),
                ),
                File::new("charts/sub/deep.txt", deep.into_bytes()),
            ];
            let chart = load_files(files, "d", &LoadOptions::default()).unwrap();
            let user = chartkit_yaml::parse_values(&format!(
                "sub:\n  a:\n  {}y\n",
                "- ".repeat(9_997)
            ))
            .unwrap();
            let rendered = render(chart, &user, &RenderOptions::default()).unwrap();
            assert_eq!(
                rendered.manifests[0].content,
                "kind: ConfigMap\ndata:\n  j: \"20016\"\n  f: \"20005\""
            );
        })
        .unwrap()
        .join()
        .unwrap();
}
