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
