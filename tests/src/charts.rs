//! Charts several end-to-end tests install.

use crate::TestContext;

/// A chart with a ConfigMap `NAME-cm` (holding the value `value`) and a Deployment `NAME`
/// whose pod, with `stuck=true`, runs but never becomes ready (the sandbox's
/// `never-ready` fault), so a `--wait` on it times out. `name` may be a template
/// (`{{ .Release.Name }}`). Returns the chart's directory.
pub fn never_ready_chart(ctx: &TestContext, name: &str) -> String {
    let config_map = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}-cm\ndata:\n  value: {{{{ .Values.value | quote }}}}\n"
    );
    let deployment = format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: 1
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
      {{{{- if .Values.stuck }}}}
      annotations:
        sandbox.chartkit.dev/fail: never-ready
      {{{{- end }}}}
    spec:
      containers:
        - name: app
          image: nginx:1.27
"#
    );
    ctx.demo_chart(&[
        ("values.yaml", "stuck: false\nvalue: one\n"),
        ("templates/configmap.yaml", config_map.as_str()),
        ("templates/deployment.yaml", deployment.as_str()),
    ])
}

/// A chart directory `NAME` at `version` (under `src/NAME-VERSION/`) with one ConfigMap
/// template, and Chart.yaml text that Go's JSON escapes differently from serde (`<`, `&`),
/// so registry manifests built from it show whether helm's bytes are reproduced.
pub fn configmap_chart(ctx: &TestContext, name: &str, version: &str) -> std::path::PathBuf {
    let dir = ctx.path(&format!("src/{name}-{version}/{name}"));
    std::fs::create_dir_all(dir.join("templates")).unwrap();
    std::fs::write(
        dir.join("Chart.yaml"),
        format!(
            "apiVersion: v2\nname: {name}\nversion: {version}\ndescription: A <test> chart & more\nappVersion: \"1.0\"\nmaintainers:\n  - name: Ann\n    email: ann@example.com\nsources:\n  - https://example.com/src\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.join("values.yaml"), "greeting: hello\n").unwrap();
    std::fs::write(
        dir.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  greeting: {{ .Values.greeting | quote }}\n  version: {{ .Chart.Version | quote }}\n",
    )
    .unwrap();
    dir
}

/// [`configmap_chart`] packaged by `command` (helm or chartkit) into the context's `out/`;
/// the package's path.
pub fn configmap_package(
    ctx: &TestContext,
    command: &mut std::process::Command,
    name: &str,
    version: &str,
) -> std::path::PathBuf {
    package_into(
        command,
        &configmap_chart(ctx, name, version),
        &ctx.path("out"),
    )
}

/// `package` of `chart` into `out` by `command` (helm or chartkit, which print the same
/// line); the package's path.
pub fn package_into(
    command: &mut std::process::Command,
    chart: &std::path::Path,
    out: &std::path::Path,
) -> std::path::PathBuf {
    std::fs::create_dir_all(out).unwrap();
    let output = crate::sandbox::run_ok(command.arg("package").arg(chart).arg("-d").arg(out));
    std::path::PathBuf::from(crate::stdout(&output).rsplit(": ").next().unwrap().trim())
}
