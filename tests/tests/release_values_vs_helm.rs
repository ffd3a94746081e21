//! The values a release record keeps, with helm 4 as the oracle. helm stores the chart
//! as dependency processing left it: its values hold every enabled subchart's defaults
//! (globals copied down, nested subcharts included) and the imported values, its
//! metadata only the enabled dependencies under their aliases. `get values --all` and
//! `get all` read them back from the record alone, and `--reuse-values` starts from
//! them. Each step runs with chartkit against one sandbox and with helm against another;
//! the records must be equal apart from times, and each tool must print the same values
//! from either record.

use std::path::Path;

use chartkit_tests::TestContext;
use chartkit_tests::corpus::corpus_or_skip;
use chartkit_tests::records::{record, value_differences};
use chartkit_tests::sandbox::{SandboxProcess, run_ok, write_file};
use chartkit_tests::stdout;
use serde_json::Value;

const NAME: &str = "release_values_vs_helm";

/// A parent chart with a library subchart, a regular subchart with defaults (nested maps,
/// globals, a null, its own subchart) that is also installed under an alias, a subchart
/// disabled by its condition, and `import-values` in both forms.
fn family_chart(ctx: &TestContext) -> String {
    let dir = ctx.path("parent");
    let values_configmap = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-{{ .Chart.Name }}
data:
  values.yaml: |
{{ toYaml .Values | indent 4 }}
"#;
    for (name, content) in [
        (
            "Chart.yaml",
            r#"apiVersion: v2
name: parent
version: 1.0.0
dependencies:
  - name: lib
    version: 0.1.0
  - name: backend
    version: ^1.0.0
    import-values:
      - data
      - child: nested.deep
        parent: imported
  - name: backend
    version: ^1.0.0
    alias: worker
  - name: extra
    version: 0.1.0
    condition: extra.enabled
"#,
        ),
        (
            "values.yaml",
            r#"global:
  region: eu
  tier: {name: gold}
backend:
  replicas: 3
  nested: {keep: parent}
worker:
  role: worker
extra:
  enabled: false
imported:
  own: parent
emptied: null
"#,
        ),
        (
            "templates/cm.yaml",
            r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "lib.fullname" . }}
data:
  values.yaml: |
{{ toYaml .Values | indent 4 }}
"#,
        ),
        (
            "charts/lib/Chart.yaml",
            "apiVersion: v2\nname: lib\nversion: 0.1.0\ntype: library\n",
        ),
        ("charts/lib/values.yaml", "libDefault: from-lib\n"),
        (
            "charts/lib/templates/_helpers.tpl",
            "{{- define \"lib.fullname\" -}}{{ .Release.Name }}-{{ .Chart.Name }}{{- end -}}\n",
        ),
        (
            "charts/backend/Chart.yaml",
            "apiVersion: v2\nname: backend\nversion: 1.2.0\ndependencies:\n  - name: leaf\n    version: 0.1.0\n",
        ),
        (
            "charts/backend/values.yaml",
            r#"replicas: 1
image: {repository: nginx, tag: "1.27"}
nested:
  keep: child
  deep: {a: 1, b: {c: two}}
  list: [1, 2]
exports:
  data: {port: 8080, proto: TCP}
global:
  region: us
  backendOnly: true
nothing: null
leaf:
  colour: green
"#,
        ),
        ("charts/backend/templates/cm.yaml", values_configmap),
        (
            "charts/backend/charts/leaf/Chart.yaml",
            "apiVersion: v2\nname: leaf\nversion: 0.1.0\n",
        ),
        (
            "charts/backend/charts/leaf/values.yaml",
            "colour: red\nshape: {sides: 4}\n",
        ),
        (
            "charts/extra/Chart.yaml",
            "apiVersion: v2\nname: extra\nversion: 0.1.0\n",
        ),
        ("charts/extra/values.yaml", "enabled: true\nsize: big\n"),
        ("charts/extra/templates/cm.yaml", values_configmap),
    ] {
        write_file(&dir, name, content);
    }
    dir.display().to_string()
}

/// chartkit's sandbox and helm's.
struct Clusters<'a> {
    ctx: &'a TestContext,
    chartkit: SandboxProcess,
    helm: SandboxProcess,
}

impl<'a> Clusters<'a> {
    fn start(ctx: &'a TestContext) -> Option<Clusters<'a>> {
        chartkit_tests::peers::helm_or_skip(NAME)?;
        chartkit_tests::peers::kubectl_or_skip(NAME)?;
        Some(Clusters {
            ctx,
            chartkit: SandboxProcess::start(ctx, &[]),
            helm: SandboxProcess::start(ctx, &[]),
        })
    }

    /// Runs `args` with chartkit on its cluster and with helm on its own.
    fn step(&self, args: &[&str]) {
        run_ok(self.chartkit.chartkit(self.ctx).args(args));
        run_ok(self.helm.helm(self.ctx, NAME).expect("helm").args(args));
    }

    /// The two clusters, by the name of the tool that wrote them.
    fn both(&self) -> [(&'static str, &SandboxProcess); 2] {
        [("chartkit", &self.chartkit), ("helm", &self.helm)]
    }

    /// `args` run by both tools on `cluster`, which must print the same bytes; the
    /// output.
    fn read(&self, writer: &str, cluster: &SandboxProcess, args: &[&str]) -> String {
        let ours = stdout(&run_ok(cluster.chartkit(self.ctx).args(args)));
        let helms = stdout(&run_ok(
            cluster.helm(self.ctx, NAME).expect("helm").args(args),
        ));
        assert_eq!(
            ours,
            helms,
            "`{}` on the release {writer} wrote: chartkit's output (left) differs from helm's",
            args.join(" ")
        );
        ours
    }

    /// Checks revision `revision` of `release`: the records equal apart from times, and
    /// `get values` (user-supplied and computed, YAML and JSON) and `get all` printed alike
    /// by both tools from both records. Returns the computed values.
    fn compare(&self, step: &str, release: &str, revision: u32) -> String {
        let records = self
            .both()
            .map(|(_, cluster)| record(&release_secret(cluster, self.ctx, release, revision)));
        let mut differences = Vec::new();
        value_differences(
            "record",
            &records[0],
            &records[1],
            ["chartkit", "helm"],
            &mut differences,
        );
        assert!(
            differences.is_empty(),
            "after {step}, revision {revision}'s record differs:\n{}",
            differences.join("\n")
        );

        let revision = revision.to_string();
        let mut computed = String::new();
        for args in [
            vec!["get", "values", release, "--revision", &revision],
            vec!["get", "values", release, "-a", "--revision", &revision],
            vec![
                "get",
                "values",
                release,
                "-a",
                "-o",
                "json",
                "--revision",
                &revision,
            ],
            vec!["get", "all", release, "--revision", &revision],
        ] {
            let printed = self
                .both()
                .map(|(writer, cluster)| self.read(writer, cluster, &args));
            // Only the time of the revision tells the two records apart.
            let [a, b] = printed.map(|text| without_times(&text));
            assert_eq!(
                a,
                b,
                "after {step}, `{}` prints differently from chartkit's record and helm's",
                args.join(" ")
            );
            if args[3] == "-a" && args[4] == "--revision" {
                computed = a;
            }
        }
        computed
    }
}

/// A revision's `helm.sh/release.v1` Secret, as kubectl reads it.
fn release_secret(
    cluster: &SandboxProcess,
    ctx: &TestContext,
    release: &str,
    revision: u32,
) -> Value {
    let out = run_ok(cluster.kubectl(ctx, NAME).expect("kubectl").args([
        "get",
        "secret",
        &format!("sh.helm.release.v1.{release}.v{revision}"),
        "-o",
        "json",
    ]));
    serde_json::from_slice(&out.stdout).expect("kubectl's JSON")
}

fn without_times(text: &str) -> String {
    text.lines()
        .filter(|line| !line.starts_with("LAST DEPLOYED:"))
        .map(|line| format!("{line}\n"))
        .collect()
}

#[test]
fn subcharts_defaults_and_imports_are_recorded_as_helm_records_them() {
    let ctx = TestContext::new();
    let Some(clusters) = Clusters::start(&ctx) else {
        return;
    };
    let chart = family_chart(&ctx);

    clusters.step(&[
        "install",
        "fam",
        &chart,
        "--set",
        "backend.nested.deep.a=5",
        "--set",
        "global.env=test",
    ]);
    let computed = clusters.compare("install", "fam", 1);
    // What the record alone gives back: the subcharts' defaults (the nested one's too,
    // under both names), globals copied into each, the imports, and no disabled subchart.
    for expected in [
        "libDefault: from-lib",
        "    colour: green",
        "    shape:\n      sides: 4",
        "  backendOnly: true",
        "port: 8080",
        "imported:\n  a: 1\n  b:\n    c: two\n  own: parent",
        "worker:\n  exports:",
        "extra:\n  enabled: false\n",
    ] {
        assert!(
            computed.contains(expected),
            "the computed values lack {expected:?}:\n{computed}"
        );
    }
    assert!(!computed.contains("size: big"), "{computed}");

    // --reuse-values starts from the previous record's values, not the new chart's:
    // defaults the new version changes keep their old values, and only keys that were
    // not there at all come from the new subchart's defaults.
    let parent_values = std::fs::read_to_string(Path::new(&chart).join("values.yaml"))
        .expect("the parent's values");
    write_file(
        Path::new(&chart),
        "values.yaml",
        &format!("{parent_values}parentFresh: new\n"),
    );
    write_file(
        Path::new(&chart),
        "charts/backend/values.yaml",
        "replicas: 7\nfresh: default\n",
    );
    clusters.step(&[
        "upgrade",
        "fam",
        &chart,
        "--reuse-values",
        "--set",
        "worker.role=updated",
    ]);
    clusters.compare("upgrade --reuse-values", "fam", 1);
    let computed = clusters.compare("upgrade --reuse-values", "fam", 2);
    assert!(!computed.contains("parentFresh"), "{computed}");
    assert!(
        computed.contains("  replicas: 1\n  role: updated\n"),
        "{computed}"
    );
    assert!(computed.contains("  fresh: default\n"), "{computed}");

    // --reset-then-reuse-values takes the new chart's defaults and the previous config,
    // here enabling the subchart that was off.
    clusters.step(&[
        "upgrade",
        "fam",
        &chart,
        "--reset-then-reuse-values",
        "--set",
        "extra.enabled=true",
    ]);
    let computed = clusters.compare("upgrade --reset-then-reuse-values", "fam", 3);
    assert!(computed.contains("parentFresh: new"), "{computed}");
    assert!(
        computed.contains("  replicas: 7\n  role: updated\n"),
        "{computed}"
    );
    assert!(computed.contains("size: big"), "{computed}");

    clusters.step(&["rollback", "fam", "1"]);
    clusters.compare("rollback", "fam", 4);

    // Each tool upgrades the release the other one recorded (both write as the field
    // manager `helm`, so neither needs --force-conflicts).
    let upgrade = [
        "upgrade",
        "fam",
        &chart,
        "--reuse-values",
        "--set",
        "leaf.extra=1",
    ];
    run_ok(
        clusters
            .chartkit
            .helm(&ctx, NAME)
            .expect("helm")
            .args(upgrade),
    );
    run_ok(clusters.helm.chartkit(&ctx).args(upgrade));
    clusters.compare("upgrades across tools", "fam", 5);
}

/// A corpus chart with a library subchart (redis with bitnami's common), with values
/// that render the same in every run.
#[test]
fn a_corpus_chart_with_subcharts_is_recorded_as_helm_records_it() {
    let Some(corpus) = corpus_or_skip(NAME) else {
        return;
    };
    let ctx = TestContext::new();
    let Some(clusters) = Clusters::start(&ctx) else {
        return;
    };
    let package = corpus.join("charts/redis-23.1.1.tgz");
    let values = corpus.join("values/redis/standalone-fixed-password.yaml");
    let (package, values) = (package.display().to_string(), values.display().to_string());
    clusters.step(&["install", "cache", &package, "-f", &values]);
    let computed = clusters.compare("install", "cache", 1);
    // bitnami's common has defaults of its own, kept under its name.
    assert!(computed.contains("\ncommon:\n"), "{computed}");
    clusters.step(&[
        "upgrade",
        "cache",
        &package,
        "--reuse-values",
        "--set",
        "master.count=1",
    ]);
    clusters.compare("upgrade --reuse-values", "cache", 2);
}
