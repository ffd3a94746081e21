//! Helm plugins, with helm 4 as the oracle: both tools share one plugin directory (helm's
//! default under the test's XDG_DATA_HOME), so a plugin installed by either is listed,
//! run and removed by the other; bad plugins are refused with nothing left behind.
//!
//! The fixtures are shaped like Helm's own example plugins (its `hello-legacy`,
//! `hello-v1` and `postrenderer-v1` test data): a Helm 3 file with shell hooks, a Helm 4
//! file with per-platform commands and hooks, and a sed post-renderer.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use chartkit_tests::gpg::keyrings_or_skip;
use chartkit_tests::sandbox::{run_ok, write_file};
use chartkit_tests::{TestContext, stderr, stdout};

const NAME: &str = "plugins";

/// The plugin directory both tools use in a context.
fn plugins_dir(ctx: &TestContext) -> PathBuf {
    ctx.path(".home/data/helm/plugins")
}

/// A script that reports what a plugin is given: its arguments and helm's variables,
/// then exits with `$EXIT` (default 0).
const REPORT_SCRIPT: &str = r#"#!/bin/sh
echo "args: $*"
for v in HELM_PLUGIN_NAME HELM_PLUGIN_DIR HELM_NAMESPACE HELM_KUBECONTEXT HELM_DEBUG HELM_PLUGINS HELM_DATA_HOME HELM_CONFIG_HOME HELM_CACHE_HOME HELM_REPOSITORY_CONFIG HELM_REPOSITORY_CACHE HELM_REGISTRY_CONFIG HELM_CONTENT_CACHE HELM_MAX_HISTORY HELM_BURST_LIMIT HELM_QPS HELM_KUBEASGROUPS HELM_KUBEINSECURE_SKIP_TLS_VERIFY; do
  eval "echo $v=\$$v"
done
[ -n "$HELM_BIN" ] && echo "HELM_BIN is set"
exit "${EXIT:-0}"
"#;

/// A Helm 3 plugin: `command`, shell `hooks` (the shell expands their variables).
fn legacy_plugin(ctx: &TestContext) -> PathBuf {
    let dir = ctx.path("src/greet-legacy");
    write_file(
        &dir,
        "plugin.yaml",
        "name: greet-legacy\nversion: 0.1.0\nusage: report what a plugin gets\ndescription: |-\n  reports\ncommand: $HELM_PLUGIN_DIR/report.sh\nhooks:\n  install: echo \"installing $HELM_PLUGIN_NAME\"\n  update: echo \"updating $HELM_PLUGIN_NAME\"\n  delete: echo \"removing $HELM_PLUGIN_NAME\"\n",
    );
    executable(&dir.join("report.sh"), REPORT_SCRIPT);
    dir
}

/// A Helm 4 plugin: a command per platform, a platform hook, a usage line (whose first
/// word, helm's way, is the command that runs it).
fn versioned_plugin(ctx: &TestContext) -> PathBuf {
    let dir = ctx.path("src/greet-v1");
    write_file(
        &dir,
        "plugin.yaml",
        r#"---
name: "greet-v1"
version: "0.2.0"
type: cli/v1
apiVersion: v1
runtime: subprocess
sourceURL: https://example.com/greet
config:
  usage: greet [params]...
  shortHelp: "report what a plugin gets"
  ignoreFlags: false
runtimeConfig:
  platformCommand:
    - os: linux
      arch:
      command: "${HELM_PLUGIN_DIR}/report.sh"
      args: ["fixed"]
    - os: darwin
      command: "${HELM_PLUGIN_DIR}/report.sh"
      args: ["fixed"]
  platformHooks:
    install:
      - os: linux
        arch: ""
        command: "sh"
        args: ["-c", 'echo "installing..."']
      - os: darwin
        command: "sh"
        args: ["-c", 'echo "installing..."']
"#,
    );
    executable(&dir.join("report.sh"), REPORT_SCRIPT);
    dir
}

fn executable(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write script");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
}

/// What both tools print, with the line that differs by design (which binary ran)
/// checked to be there.
fn both(output: &Output) -> (String, String, Option<i32>) {
    (stdout(output), stderr(output), output.status.code())
}

#[test]
fn plugins_installed_by_either_tool_are_listed_run_and_removed_by_both() {
    let ctx = TestContext::new();
    let Some(mut helm_install) = ctx.helm_or_skip(NAME) else {
        return;
    };
    let legacy = legacy_plugin(&ctx);
    let versioned = versioned_plugin(&ctx);

    // helm installs the legacy plugin, chartkit the versioned one; each prints what the
    // other would.
    let by_helm = run_ok(helm_install.args(["plugin", "install"]).arg(&legacy));
    assert_eq!(
        stdout(&by_helm),
        "Installing plugin from local directory (development mode)\ninstalling greet-legacy\nInstalled plugin: greet-legacy\n"
    );
    let by_chartkit = run_ok(ctx.chartkit().args(["plugin", "install"]).arg(&versioned));
    assert_eq!(
        stdout(&by_chartkit),
        "Installing plugin from local directory (development mode)\ninstalling...\nInstalled plugin: greet-v1\n"
    );
    // As helm does, the plugin is a link to its directory.
    let link = std::fs::read_link(plugins_dir(&ctx).join("greet-v1")).expect("a link");
    assert_eq!(link, versioned);

    // The same table from both.
    let list = stdout(&run_ok(ctx.chartkit().args(["plugin", "list"])));
    let helm_list = stdout(&run_ok(
        ctx.helm_or_skip(NAME).unwrap().args(["plugin", "list"]),
    ));
    assert_eq!(list, helm_list);
    assert!(
        list.contains("greet-legacy\t0.1.0  \tcli/v1\tlegacy    \tlocal dev "),
        "{list}"
    );
    assert!(list.contains("https://example.com/greet"), "{list}");
    let only_post = stdout(&run_ok(ctx.chartkit().args([
        "plugin",
        "list",
        "--type",
        "postrenderer/v1",
    ])));
    assert_eq!(
        only_post,
        stdout(&run_ok(ctx.helm_or_skip(NAME).unwrap().args([
            "plugin",
            "list",
            "--type",
            "postrenderer/v1"
        ])))
    );

    // Each plugin runs the same through both tools: arguments (helm's own flags after
    // the name are taken out and set the plugin's settings), every variable, the exit
    // status and the error.
    for (plugin, args) in [
        ("greet-legacy", vec!["a", "--flag", "-n", "apps", "b c"]),
        // helm names a versioned plugin's command after the first word of its usage
        // line.
        ("greet", vec!["x", "--kube-context", "prod", "y"]),
    ] {
        for exit in ["0", "3"] {
            let run = |mut command: Command| {
                command
                    .arg(plugin)
                    .args(&args)
                    .env("EXIT", exit)
                    .output()
                    .expect("run the plugin")
            };
            let ours = run(ctx.chartkit());
            let theirs = run(ctx.helm_or_skip(NAME).unwrap());
            assert_eq!(both(&ours), both(&theirs), "{plugin} exiting {exit}");
            assert!(stdout(&ours).contains("HELM_BIN is set"));
            assert_eq!(ours.status.code(), Some(exit.parse().unwrap()));
        }
    }
    let namespaced = stdout(&run_ok(
        ctx.chartkit()
            .args(["greet-legacy", "-n", "apps"])
            .env("HELM_KUBEASGROUPS", "a,b"),
    ));
    assert!(namespaced.contains("HELM_NAMESPACE=apps\n"), "{namespaced}");
    assert!(
        namespaced.contains("HELM_KUBEASGROUPS=a,b\n"),
        "{namespaced}"
    );
    assert!(namespaced.contains("args: \n"), "{namespaced}");

    // A linked plugin is current already: update runs its update hook (helm only
    // updates plugins it cloned from a VCS repository, and fails here).
    let updated = run_ok(ctx.chartkit().args(["plugin", "update", "greet-legacy"]));
    assert_eq!(
        stdout(&updated),
        "updating greet-legacy\nUpdated plugin: greet-legacy\n"
    );

    // chartkit removes what helm installed (running its delete hook), helm what chartkit
    // installed; the directory is left empty, the plugins' own directories intact.
    let removed = run_ok(ctx.chartkit().args(["plugin", "uninstall", "greet-legacy"]));
    assert_eq!(
        stdout(&removed),
        "removing greet-legacy\nUninstalled plugin: greet-legacy\n"
    );
    run_ok(
        ctx.helm_or_skip(NAME)
            .unwrap()
            .args(["plugin", "uninstall", "greet-v1"]),
    );
    assert_eq!(
        std::fs::read_dir(plugins_dir(&ctx)).unwrap().count(),
        0,
        "nothing is left in the plugin directory"
    );
    assert!(versioned.join("plugin.yaml").is_file() && legacy.join("report.sh").is_file());
    let gone = ctx.run(&["plugin", "uninstall", "greet-v1"]);
    assert_eq!(gone.status.code(), Some(1));
    assert_eq!(stderr(&gone), "Error: plugin: greet-v1 not found\n");
}

#[test]
fn an_unknown_command_is_still_an_error_when_no_plugin_has_its_name() {
    let ctx = TestContext::new();
    let out = ctx.run(&["no-such-command", "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).starts_with("Error: unrecognized subcommand 'no-such-command'"),
        "{}",
        stderr(&out)
    );
    // A plugin of another type is not a command.
    let dir = ctx.path("src/pr");
    write_file(
        &dir,
        "plugin.yaml",
        "apiVersion: v1\nname: pr\ntype: postrenderer/v1\nruntime: subprocess\nversion: 1.0.0\nruntimeConfig:\n  platformCommand:\n  - command: cat\n",
    );
    run_ok(ctx.chartkit().args(["plugin", "install"]).arg(&dir));
    let out = ctx.run(&["pr"]);
    assert!(stderr(&out).starts_with("Error: unrecognized subcommand 'pr'"));
    // HELM_NO_PLUGINS=1 turns plugins off, as in helm.
    let cli = ctx.path("src/hi");
    write_file(&cli, "plugin.yaml", "name: hi\ncommand: echo hi\n");
    run_ok(ctx.chartkit().args(["plugin", "install"]).arg(&cli));
    assert_eq!(stdout(&run_ok(ctx.chartkit().arg("hi"))), "hi\n");
    let off = ctx
        .chartkit()
        .arg("hi")
        .env("HELM_NO_PLUGINS", "1")
        .output()
        .unwrap();
    assert_eq!(off.status.code(), Some(1));
}

/// Each bad plugin is refused with a sentence naming it, and leaves nothing in the
/// plugin directory.
#[test]
fn bad_plugins_are_refused_and_leave_nothing_installed() {
    let ctx = TestContext::new();
    let cases: [(&str, &str, Option<&str>, &str); 7] = [
        ("malformed", "name: [oops\n", None, "failed to load plugin"),
        (
            "unknown-field",
            "apiVersion: v1\nname: unknown-field\ntype: cli/v1\nruntime: subprocess\nversion: 1.0.0\ncommand: x\n",
            None,
            "field command not found in plugin metadata",
        ),
        (
            "bad-version",
            "name: bad-version\nversion: one\ncommand: echo\n",
            None,
            "invalid plugin version \"one\": must be valid semver",
        ),
        (
            "missing-binary",
            "name: missing-binary\ncommand: $HELM_PLUGIN_DIR/not-there.sh\n",
            None,
            "not-there.sh",
        ),
        (
            "clash",
            "name: install\ncommand: echo\n",
            None,
            "plugin name \"install\" is the name of a built-in command",
        ),
        (
            "failing-hook",
            "name: failing-hook\ncommand: echo\nhooks:\n  install: exit 4\n",
            None,
            "plugin install hook for \"failing-hook\" exited with error",
        ),
        (
            "no-metadata",
            "",
            Some("not a plugin"),
            "plugin metadata (plugin.yaml) missing",
        ),
    ];
    for (dir_name, yaml, other_file, expected) in cases {
        let dir = ctx.path(&format!("bad/{dir_name}"));
        std::fs::create_dir_all(&dir).unwrap();
        match other_file {
            Some(text) => write_file(&dir, "README", text),
            None => write_file(&dir, "plugin.yaml", yaml),
        };
        let out = ctx
            .chartkit()
            .args(["plugin", "install"])
            .arg(&dir)
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{dir_name}: {err}");
        assert!(
            err.starts_with("Error: cannot install the plugin `"),
            "{dir_name}: {err}"
        );
        assert!(err.contains(expected), "{dir_name}: {err}");
        assert!(!err.contains("{ "), "no Debug text: {err}");
        let left = std::fs::read_dir(plugins_dir(&ctx))
            .map(|d| d.count())
            .unwrap_or(0);
        assert_eq!(left, 0, "{dir_name} left something in the plugin directory");
    }
    // Installing over an installed plugin is refused too, and keeps the first.
    let good = ctx.path("src/twice");
    write_file(&good, "plugin.yaml", "name: twice\ncommand: echo\n");
    run_ok(ctx.chartkit().args(["plugin", "install"]).arg(&good));
    let again = ctx.run(&["plugin", "install", good.to_str().unwrap()]);
    assert!(
        stderr(&again).contains("plugin already exists"),
        "{}",
        stderr(&again)
    );
    assert!(plugins_dir(&ctx).join("twice/plugin.yaml").is_file());
}

/// A kustomize-style post-renderer plugin: adds a label to every object that has a block
/// of labels, with sed, and a second label from its first argument when it has one; `FAIL=1` makes it fail, `EMPTY=1`
/// write nothing.
fn post_renderer_plugin(ctx: &TestContext) -> PathBuf {
    let dir = ctx.path("src/add-label");
    write_file(
        &dir,
        "plugin.yaml",
        "apiVersion: v1\nname: add-label\ntype: postrenderer/v1\nruntime: subprocess\nversion: 1.2.3\nconfig: {}\nruntimeConfig:\n  platformCommand:\n    - command: \"${HELM_PLUGIN_DIR}/add-label.sh\"\n",
    );
    executable(
        &dir.join("add-label.sh"),
        r#"#!/bin/sh
[ -n "$FAIL" ] && { echo "add-label: told to fail" >&2; exit 5; }
[ -n "$EMPTY" ] && { cat >/dev/null; exit 0; }
extra=""
[ $# -gt 0 ] && extra="\n    stage: $1"
sed "s/^  labels:\$/  labels:\n    team: blue$extra/"
"#,
    );
    dir
}

/// A chart whose output exercises what the round trip through kyaml changes and keeps:
/// four-space indents, sequences, comments, quoting styles, flow collections, block
/// scalars, an empty document, a hook and a partial.
fn styled_chart(ctx: &TestContext) -> String {
    let dir = ctx.path("styled");
    write_file(
        &dir,
        "Chart.yaml",
        "apiVersion: v2\nname: styled\nversion: 0.1.0\n",
    );
    write_file(&dir, "values.yaml", "greeting: hello\n");
    write_file(
        &dir,
        "templates/_helpers.tpl",
        "{{- define \"x\" }}x{{ end }}\n",
    );
    write_file(
        &dir,
        "templates/config.yaml",
        r#"# {{ .Release.Name }}'s settings
apiVersion: v1
kind: ConfigMap
metadata:
    name: {{ .Release.Name }}-config   # the name
    labels: {app: "styled", tier: web}
data:
    greeting: {{ .Values.greeting | quote }}
    single: 'it''s'
    long: a plain scalar that is longer than eighty columns, which go-yaml would wrap if it could
    script: |
        #!/bin/sh
        echo "{{ .Values.greeting }}"
    folded: >-
        folded
        text
    joined: plain
        over two lines
    list:
    -   one
    -   - nested
        - list
    -   key: value
        other: 2
    empty:
    none: []
---
apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-secret
  labels:
    app: styled
  annotations:
    "note": "kept"
stringData:
  token: abc
---
---
# only a comment
"#,
    );
    write_file(
        &dir,
        "templates/hook.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}-hook\n  annotations:\n    \"helm.sh/hook\": test\nspec:\n  containers:\n  - name: check\n    image: busybox\n    command: ['true']\n",
    );
    dir.display().to_string()
}

#[test]
fn post_rendered_templates_are_helms_byte_for_byte() {
    let ctx = TestContext::new();
    let Some(mut helm_install) = ctx.helm_or_skip(NAME) else {
        return;
    };
    let plugin = post_renderer_plugin(&ctx);
    run_ok(helm_install.args(["plugin", "install"]).arg(&plugin));
    run_ok(ctx.chartkit().args(["create", "starter"]));
    let styled = styled_chart(&ctx);
    // A document without metadata gets one for the mark, which goes again after.
    write_file(
        Path::new(&styled),
        "templates/nometa.yaml",
        "apiVersion: v1\nkind: ServiceAccount\n",
    );
    for chart in ["starter", styled.as_str()] {
        for extra in [&[][..], &["--post-renderer-args", "canary"][..]] {
            let args = [
                &["template", "rel", chart, "--post-renderer", "add-label"][..],
                extra,
            ]
            .concat();
            let ours = run_ok(ctx.chartkit().args(&args));
            let theirs = run_ok(ctx.helm_or_skip(NAME).unwrap().args(&args));
            assert_eq!(stdout(&ours), stdout(&theirs), "{chart} {extra:?}");
            assert!(stdout(&ours).contains("team: blue"));
            assert_eq!(
                stdout(&ours).contains("stage: canary"),
                !extra.is_empty(),
                "the plugin got its arguments"
            );
        }
    }
    // The plugin's failures, as helm reports them.
    for (variable, expected) in [
        (
            "FAIL",
            "Error: error while running post render on files: failed to invoke post-renderer plugin \"add-label\": plugin \"add-label\" exited with error\n",
        ),
        (
            "EMPTY",
            "Error: error while running post render on files: post-renderer \"add-label\" produced empty output\n",
        ),
    ] {
        let args = [
            "template",
            "rel",
            styled.as_str(),
            "--post-renderer",
            "add-label",
        ];
        let ours = ctx
            .chartkit()
            .args(args)
            .env(variable, "1")
            .output()
            .unwrap();
        let theirs = ctx
            .helm_or_skip(NAME)
            .unwrap()
            .args(args)
            .env(variable, "1")
            .output()
            .unwrap();
        assert_eq!(ours.status.code(), Some(1));
        assert_eq!(theirs.status.code(), Some(1));
        assert!(stderr(&ours).ends_with(expected), "{}", stderr(&ours));
        // helm's template adds its advice to use --debug, which would not help here.
        assert!(stderr(&theirs).contains(expected), "{}", stderr(&theirs));
    }
    // An unknown plugin is an error in both; an executable path (Helm 3's form) only in
    // helm 4, while chartkit still runs it.
    let unknown = ctx.run(&["template", "rel", &styled, "--post-renderer", "nope"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        stderr(&unknown).contains("invalid argument \"nope\" for \"--post-renderer\" flag"),
        "{}",
        stderr(&unknown)
    );
    let script = plugin.join("add-label.sh");
    let by_path = run_ok(
        ctx.chartkit()
            .args(["template", "rel", &styled, "--post-renderer"])
            .arg(&script),
    );
    let by_name =
        run_ok(
            ctx.chartkit()
                .args(["template", "rel", &styled, "--post-renderer", "add-label"]),
        );
    assert_eq!(stdout(&by_path), stdout(&by_name));
    let helm_path = ctx
        .helm_or_skip(NAME)
        .unwrap()
        .args(["template", "rel", &styled, "--post-renderer"])
        .arg(&script)
        .output()
        .unwrap();
    assert_eq!(
        helm_path.status.code(),
        Some(1),
        "helm 4 takes plugin names only"
    );
}

/// A revision's `helm.sh/release.v1` Secret, as kubectl reads it.
fn release_secret(
    cluster: &chartkit_tests::sandbox::SandboxProcess,
    ctx: &TestContext,
    release: &str,
    revision: u32,
) -> serde_json::Value {
    let out = run_ok(cluster.kubectl(ctx, NAME).expect("kubectl").args([
        "get",
        "secret",
        &format!("sh.helm.release.v1.{release}.v{revision}"),
        "-o",
        "json",
    ]));
    serde_json::from_slice(&out.stdout).expect("kubectl's JSON")
}

/// The differences between the records of one revision in the two clusters.
fn record_differences(
    ours: &chartkit_tests::sandbox::SandboxProcess,
    theirs: &chartkit_tests::sandbox::SandboxProcess,
    ctx: &TestContext,
    revision: u32,
) -> Vec<String> {
    use chartkit_tests::records::{record, value_differences};
    let a = record(&release_secret(ours, ctx, "rel", revision));
    let b = record(&release_secret(theirs, ctx, "rel", revision));
    let mut differences = Vec::new();
    value_differences("", &a, &b, ["chartkit", "helm"], &mut differences);
    differences
}

#[test]
fn install_and_upgrade_record_the_post_rendered_manifest_as_helm_does() {
    use chartkit_tests::sandbox::SandboxProcess;
    let ctx = TestContext::new();
    if ctx.helm_or_skip(NAME).is_none() || chartkit_tests::peers::kubectl_or_skip(NAME).is_none() {
        return;
    }
    let plugin = post_renderer_plugin(&ctx);
    run_ok(ctx.chartkit().args(["plugin", "install"]).arg(&plugin));
    // Helm's starter chart: a Deployment, a Service, a ServiceAccount and a test hook.
    run_ok(ctx.chartkit().args(["create", "starter"]));
    let chart = ctx.path("starter").display().to_string();
    let ours = SandboxProcess::start(&ctx, &[]);
    let theirs = SandboxProcess::start(&ctx, &[]);
    let install = [
        "install",
        "rel",
        chart.as_str(),
        "--post-renderer",
        "add-label",
    ];
    run_ok(ours.chartkit(&ctx).args(install));
    run_ok(theirs.helm(&ctx, NAME).unwrap().args(install));
    assert_eq!(
        record_differences(&ours, &theirs, &ctx, 1),
        Vec::<String>::new()
    );
    let manifest = stdout(&run_ok(
        ours.chartkit(&ctx).args(["get", "manifest", "rel"]),
    ));
    assert!(manifest.contains("team: blue"), "{manifest}");
    let hooks = stdout(&run_ok(ours.chartkit(&ctx).args(["get", "hooks", "rel"])));
    assert!(
        hooks.contains("team: blue"),
        "helm 4 post-renders hooks too: {hooks}"
    );
    let labelled = stdout(&run_ok(ours.kubectl(&ctx, NAME).unwrap().args([
        "get",
        "service",
        "rel-starter",
        "-o",
        "jsonpath={.metadata.labels.team}",
    ])));
    assert_eq!(labelled, "blue", "the cluster has the post-rendered object");

    // Whatever the upgrade would change is what the diff shows: nothing with the same
    // post-renderer, the extra label with an argument.
    let diff = |extra: &[&str]| {
        ours.chartkit(&ctx)
            .args([
                "diff",
                "upgrade",
                "rel",
                chart.as_str(),
                "--detailed-exitcode",
                "--no-color",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let same = diff(&["--post-renderer", "add-label"]);
    assert_eq!(
        same.status.code(),
        Some(0),
        "{}{}",
        stdout(&same),
        stderr(&same)
    );
    let changed = diff(&[
        "--post-renderer",
        "add-label",
        "--post-renderer-args",
        "canary",
    ]);
    assert_eq!(changed.status.code(), Some(2), "{}", stderr(&changed));
    assert!(
        stdout(&changed)
            .lines()
            .any(|l| l.starts_with('+') && l.ends_with(" stage: canary")),
        "{}",
        stdout(&changed)
    );

    let upgrade = [
        "upgrade",
        "rel",
        chart.as_str(),
        "--post-renderer",
        "add-label",
        "--post-renderer-args",
        "canary",
    ];
    run_ok(ours.chartkit(&ctx).args(upgrade));
    run_ok(theirs.helm(&ctx, NAME).unwrap().args(upgrade));
    assert_eq!(
        record_differences(&ours, &theirs, &ctx, 2),
        Vec::<String>::new()
    );
    let manifest = stdout(&run_ok(
        ours.chartkit(&ctx).args(["get", "manifest", "rel"]),
    ));
    assert!(manifest.contains("stage: canary"), "{manifest}");
}

/// A shell session's answer to `chartkit upgrade <TAB>`, run against a sandbox holding
/// two releases: bash through the completion function the script registers (as
/// readline calls it), zsh through its real completion system in a pseudo-terminal.
#[test]
fn completion_scripts_offer_the_clusters_release_names_in_real_shells() {
    use chartkit_tests::sandbox::SandboxProcess;
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    run_ok(ctx.chartkit().args(["create", "starter"]));
    for name in ["alpha", "beta"] {
        run_ok(sandbox.chartkit(&ctx).args(["install", name, "starter"]));
    }
    // A repository with the starter chart, for chart and repository names.
    run_ok(ctx.chartkit().args(["package", "starter", "-d", "repo"]));
    run_ok(ctx.chartkit().args(["repo", "index", "repo"]));
    let server = chartkit_tests::counting_server::CountingServer::start(&ctx.path("repo"));
    run_ok(
        ctx.chartkit()
            .args(["repo", "add", "shop", server.url.as_str()]),
    );
    let path = chartkit_tests::shells::path_with_chartkit();
    let bash =
        run_ok(
            sandbox
                .chartkit(&ctx)
                .env("PATH", &path)
                .args(["__complete", "upgrade", ""]),
        );
    assert_eq!(stdout(&bash), "alpha\nbeta\n:4\n");
    let bash = chartkit_tests::shells::bash_completions(
        &ctx,
        &[
            "chartkit upgrade ",
            "chartkit upgrade al",
            "chartkit get manifest ",
            "chartkit up",
            "chartkit completion ",
            "chartkit install web sh",
            "chartkit repo remove ",
        ],
        &sandbox.kubeconfig,
    );
    assert_eq!(
        bash,
        "complete -F _chartkit chartkit\nchartkit upgrade |alpha beta\nchartkit upgrade al|alpha\nchartkit get manifest |alpha beta\nchartkit up|upgrade\nchartkit completion |bash zsh fish powershell\nchartkit install web sh|shop/\nchartkit repo remove |shop\n"
    );

    // zsh's completion widget, in an interactive shell on a pseudo-terminal (zpty): the
    // line `chartkit upgrade ` is typed with a TAB, and the listing zsh shows must name
    // both releases.
    let Some(screen) = chartkit_tests::shells::zsh_screen_after_tab(
        &ctx,
        "chartkit upgrade ",
        &sandbox.kubeconfig,
    ) else {
        chartkit_tests::skip(NAME, "zsh is not installed (apt-get install zsh)");
        return;
    };
    assert!(screen.contains("alpha  beta"), "{screen}");
}

#[test]
fn env_and_version_print_what_helm_prints() {
    let ctx = TestContext::new();
    let Some(_) = ctx.helm_or_skip(NAME) else {
        return;
    };
    let setups: [&[(&str, &str)]; 3] = [
        &[],
        &[
            ("HELM_NAMESPACE", "apps"),
            ("HELM_KUBEASGROUPS", "a,b"),
            ("HELM_DEBUG", "true"),
        ],
        &[
            ("HELM_PLUGINS", "/p1:/p2"),
            ("KUBECONFIG", "/k/config"),
            ("HELM_QPS", "2.5"),
        ],
    ];
    for variables in setups {
        let run = |mut command: Command, args: &[&str]| {
            stdout(&run_ok(command.args(args).envs(variables.iter().copied())))
        };
        let ours = run(ctx.chartkit(), &["env"]);
        let theirs = run(ctx.helm_or_skip(NAME).unwrap(), &["env"]);
        // HELM_BIN names the program that runs; everything else is the same.
        let without_bin = |text: &str| -> String {
            text.lines()
                .filter(|l| !l.starts_with("HELM_BIN="))
                .map(|l| format!("{l}\n"))
                .collect()
        };
        assert_eq!(without_bin(&ours), without_bin(&theirs), "{variables:?}");
        assert!(ours.contains("HELM_BIN=\""));
        let flagged = run(
            ctx.chartkit(),
            &["--kubeconfig", "/flag/config", "env", "KUBECONFIG"],
        );
        assert_eq!(
            flagged,
            run(
                ctx.helm_or_skip(NAME).unwrap(),
                &["--kubeconfig", "/flag/config", "env", "KUBECONFIG"]
            )
        );
        for name in [
            "HELM_NAMESPACE",
            "HELM_PLUGINS",
            "HELM_QPS",
            "KUBECONFIG",
            "NOT_A_SETTING",
        ] {
            assert_eq!(
                run(ctx.chartkit(), &["env", name]),
                run(ctx.helm_or_skip(NAME).unwrap(), &["env", name]),
                "{name} {variables:?}"
            );
        }
    }
    // The helm release chartkit follows, with chartkit's own version as build metadata,
    // in helm's forms (plugins branch on the major version).
    let version = format!("4.1.4+chartkit.{}", env!("CARGO_PKG_VERSION"));
    assert_eq!(
        stdout(&run_ok(ctx.chartkit().args(["version", "--short"]))),
        format!("v{version}\n")
    );
    let full = stdout(&run_ok(ctx.chartkit().arg("version")));
    assert!(
        full.starts_with(&format!(
            "version.BuildInfo{{Version:\"v{version}\", GitCommit:"
        )),
        "{full}"
    );
    let helm_full = stdout(&run_ok(ctx.helm_or_skip(NAME).unwrap().arg("version")));
    let shape = |text: &str| -> Vec<String> {
        text.split(", ")
            .map(|field| field.split(':').next().unwrap_or("").to_owned())
            .collect()
    };
    assert_eq!(
        shape(&full),
        shape(&helm_full),
        "the same fields in the same order"
    );
    assert_eq!(
        stdout(&run_ok(ctx.chartkit().args([
            "version",
            "--template",
            "{{.Version}}|{{.KubeClientVersion}}"
        ]))),
        format!("v{version}|v1.34")
    );
}

/// Plugin tarballs: signed by `helm plugin package --sign` with a GnuPG key, installed by
/// either tool with the same verification lines and listed `signed` by both; unsigned
/// ones only with `--verify=false`; hostile ones refused with nothing left behind.
#[test]
fn plugin_tarballs_are_verified_installed_and_refused_as_helm_does() {
    use chartkit_tests::archive::{Entry, build};
    let ctx = TestContext::new();
    let Some(_) = ctx.helm_or_skip(NAME) else {
        return;
    };
    if keyrings_or_skip(&ctx, NAME, "Plug <plug@example.com>").is_none() {
        return;
    }
    let plugin = legacy_plugin(&ctx);
    run_ok(
        ctx.helm_or_skip(NAME)
            .unwrap()
            .args(["plugin", "package"])
            .arg(&plugin)
            .args([
                "--sign",
                "--key",
                "plug@example.com",
                "--keyring",
                "secring.gpg",
                "-d",
                "signed",
            ]),
    );
    run_ok(
        ctx.helm_or_skip(NAME)
            .unwrap()
            .args(["plugin", "package"])
            .arg(&plugin)
            .args(["--sign=false", "-d", "unsigned"]),
    );
    let signed = "signed/greet-legacy-0.1.0.tgz";
    let install = ["plugin", "install", signed, "--keyring", "pubring.gpg"];
    let ours = stdout(&run_ok(ctx.chartkit().args(install)));
    let list = stdout(&run_ok(ctx.chartkit().args(["plugin", "list"])));
    assert!(list.contains("\tsigned    \t"), "{list}");
    assert_eq!(
        list,
        stdout(&run_ok(
            ctx.helm_or_skip(NAME).unwrap().args(["plugin", "list"])
        ))
    );
    run_ok(ctx.chartkit().args(["greet-legacy", "x"]));
    run_ok(ctx.chartkit().args(["plugin", "uninstall", "greet-legacy"]));
    let theirs = stdout(&run_ok(ctx.helm_or_skip(NAME).unwrap().args(install)));
    assert_eq!(ours, theirs);
    assert!(ours.starts_with("Verifying plugin signature...\nSigned by: Plug <plug@example.com>\nUsing Key With Fingerprint: "), "{ours}");
    assert!(
        ours.ends_with("installing greet-legacy\nInstalled plugin: greet-legacy\n"),
        "{ours}"
    );
    // What helm unpacked, chartkit removes: directory, kept tarball and .prov.
    run_ok(ctx.chartkit().args(["plugin", "uninstall", "greet-legacy"]));
    assert_eq!(std::fs::read_dir(plugins_dir(&ctx)).unwrap().count(), 0);

    // chartkit packages and signs as helm does: helm verifies and installs it, the
    // signed text is helm's up to the digest, and each tool verifies the other's.
    let packaged = stdout(&run_ok(
        ctx.chartkit()
            .args(["plugin", "package"])
            .arg(&plugin)
            .args([
                "--key",
                "plug@example.com",
                "--keyring",
                "secring.gpg",
                "-d",
                "ours",
            ]),
    ));
    assert_eq!(
        packaged,
        "Successfully signed. Signature written to: ours/greet-legacy-0.1.0.tgz.prov\nSuccessfully packaged plugin and saved it to: ours/greet-legacy-0.1.0.tgz\n"
    );
    let until_digest = |path: &str| {
        let text = std::fs::read_to_string(ctx.path(path)).unwrap();
        text[..text.find("sha256:").unwrap()].to_owned()
    };
    assert_eq!(
        until_digest("ours/greet-legacy-0.1.0.tgz.prov"),
        until_digest("signed/greet-legacy-0.1.0.tgz.prov")
    );
    let verify = [
        "plugin",
        "verify",
        "ours/greet-legacy-0.1.0.tgz",
        "--keyring",
        "pubring.gpg",
    ];
    assert_eq!(
        stdout(&run_ok(ctx.helm_or_skip(NAME).unwrap().args(verify))),
        stdout(&run_ok(ctx.chartkit().args(verify)))
    );
    let verify = ["plugin", "verify", signed, "--keyring", "pubring.gpg"];
    assert_eq!(
        stdout(&run_ok(ctx.helm_or_skip(NAME).unwrap().args(verify))),
        stdout(&run_ok(ctx.chartkit().args(verify)))
    );
    run_ok(ctx.helm_or_skip(NAME).unwrap().args([
        "plugin",
        "install",
        "ours/greet-legacy-0.1.0.tgz",
        "--keyring",
        "pubring.gpg",
    ]));
    run_ok(ctx.chartkit().args(["plugin", "uninstall", "greet-legacy"]));

    // Unsigned: refused unless verification is turned off.
    let unsigned = "unsigned/greet-legacy-0.1.0.tgz";
    let refused = ctx.run(&["plugin", "install", unsigned]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("plugin verification failed: no provenance file (.prov) found"),
        "{}",
        stderr(&refused)
    );
    let ok = stdout(&run_ok(ctx.chartkit().args([
        "plugin",
        "install",
        unsigned,
        "--verify=false",
    ])));
    assert!(
        ok.starts_with("WARNING: Skipping plugin signature verification\n"),
        "{ok}"
    );
    assert!(
        stdout(&run_ok(
            ctx.helm_or_skip(NAME).unwrap().args(["plugin", "list"])
        ))
        .contains("\tunsigned  \t")
    );
    let update = ctx.run(&["plugin", "update", "greet-legacy"]);
    assert_eq!(update.status.code(), Some(1));
    assert!(stderr(&update).contains("only plugins linked from a local directory or installed from a VCS repository can be updated"));
    run_ok(
        ctx.helm_or_skip(NAME)
            .unwrap()
            .args(["plugin", "uninstall", "greet-legacy"]),
    );

    // Hostile tarballs: a path out of the archive, an absolute one, a link.
    let yaml: &[u8] = b"name: evil\ncommand: echo\n";
    for (file, entries) in [
        (
            "dotdot.tgz",
            vec![
                Entry::File("evil/plugin.yaml", yaml),
                Entry::File("evil/../../../escaped", b"x"),
            ],
        ),
        (
            "absolute.tgz",
            vec![
                Entry::File("evil/plugin.yaml", yaml),
                Entry::File("/tmp/escaped-chartkit", b"x"),
            ],
        ),
        (
            "link.tgz",
            vec![
                Entry::File("evil/plugin.yaml", yaml),
                Entry::Symlink("evil/passwd", "/etc/passwd"),
            ],
        ),
    ] {
        std::fs::write(ctx.path(file), build(&entries)).unwrap();
        let out = ctx.run(&["plugin", "install", file, "--verify=false"]);
        assert_eq!(out.status.code(), Some(1), "{file}");
        assert!(
            stderr(&out).contains("so nothing was installed"),
            "{file}: {}",
            stderr(&out)
        );
        assert_eq!(
            std::fs::read_dir(plugins_dir(&ctx)).unwrap().count(),
            0,
            "{file} left something"
        );
    }
    assert!(!ctx.path("escaped").exists() && !Path::new("/tmp/escaped-chartkit").exists());
}

/// Artifact Hub's answer to a search, in its JSON shapes: one package with its page
/// URL, one without (helm then makes `ENDPOINT/charts/ID`).
const HUB_ANSWER: &str = r#"{"data":[
 {"id":"ingress-nginx/ingress-nginx","artifactHub":{"packageUrl":"https://artifacthub.io/packages/helm/ingress-nginx/ingress-nginx"},"type":"chart",
  "attributes":{"name":"ingress-nginx","repo":{"name":"ingress-nginx","url":"https://kubernetes.github.io/ingress-nginx"},"description":"Ingress controller for Kubernetes using NGINX as a reverse proxy & load balancer <fast>","home":"https://github.com/kubernetes/ingress-nginx","keywords":["ingress","nginx"],"icon":""},
  "links":{"self":"/v1/charts/ingress-nginx/ingress-nginx"},
  "relationships":{"latestChartVersion":{"data":{"version":"4.11.3","app_version":"1.11.3","created":"2024-10-08T10:00:00Z","digest":"","urls":[]},"links":{"self":""}}}},
 {"id":"bitnami/nginx","type":"chart",
  "attributes":{"name":"nginx","repo":{"name":"bitnami","url":"https://charts.bitnami.com/bitnami"},"description":"NGINX Open Source — a web server","keywords":[]},
  "relationships":{"latestChartVersion":{"data":{"version":"18.2.4","app_version":"1.27.2"}}}}
]}"#;

#[test]
fn search_hub_prints_what_helm_prints_from_a_hub() {
    use chartkit_tests::counting_server::CountingServer;
    let ctx = TestContext::new();
    let Some(_) = ctx.helm_or_skip(NAME) else {
        return;
    };
    write_file(
        &ctx.path("hub"),
        "api/chartsvc/v1/charts/search",
        HUB_ANSWER,
    );
    write_file(
        &ctx.path("empty"),
        "api/chartsvc/v1/charts/search",
        r#"{"data":[]}"#,
    );
    let hub = CountingServer::start(&ctx.path("hub"));
    let empty = CountingServer::start(&ctx.path("empty"));
    for extra in [
        &[][..],
        &["--max-col-width", "20"][..],
        &["--max-col-width", "0", "--list-repo-url"][..],
        &["-o", "json"][..],
        &["-o", "yaml"][..],
    ] {
        let args = [
            &[
                "search",
                "hub",
                "nginx",
                "ingress/x",
                "--endpoint",
                hub.url.as_str(),
            ][..],
            extra,
        ]
        .concat();
        let ours = stdout(&run_ok(ctx.chartkit().args(&args)));
        let theirs = stdout(&run_ok(ctx.helm_or_skip(NAME).unwrap().args(&args)));
        assert_eq!(ours, theirs, "{extra:?}");
    }
    let asked: Vec<String> = hub.requests().into_iter().collect();
    assert!(
        asked
            .iter()
            .all(|r| r == "/api/chartsvc/v1/charts/search?q=nginx+ingress%2Fx"),
        "{asked:?}"
    );
    for extra in [&[][..], &["--fail-on-no-result"][..], &["-o", "json"][..]] {
        let args = [
            &["search", "hub", "nothing", "--endpoint", empty.url.as_str()][..],
            extra,
        ]
        .concat();
        let ours = ctx.chartkit().args(&args).output().unwrap();
        let theirs = ctx
            .helm_or_skip(NAME)
            .unwrap()
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(stdout(&ours), stdout(&theirs), "{extra:?}");
        assert_eq!(ours.status.code(), theirs.status.code(), "{extra:?}");
        assert_eq!(stderr(&ours), stderr(&theirs), "{extra:?}");
    }
}

/// Plugins call back the tool that runs them (`$HELM_BIN`) with helm's settings in their
/// environment, some of them empty (HELM_KUBECAFILE=""), and branch on its major version
/// as helm-secrets does (`case $($HELM_BIN version --short) in v3*|v4*`).
#[test]
fn plugins_can_run_the_tool_that_runs_them() {
    let ctx = TestContext::new();
    let dir = ctx.path("src/callback");
    write_file(
        &dir,
        "plugin.yaml",
        "name: callback\nversion: 0.1.0\ncommand: $HELM_PLUGIN_DIR/callback.sh\n",
    );
    executable(
        &dir.join("callback.sh"),
        "#!/bin/sh\nset -e\ncase $(\"$HELM_BIN\" version --short) in\n  v4*) echo \"helm 4\" ;;\n  *) echo unsupported; exit 1 ;;\nesac\n\"$HELM_BIN\" env HELM_NAMESPACE\n",
    );
    run_ok(ctx.chartkit().args(["plugin", "install"]).arg(&dir));
    let ours = run_ok(ctx.chartkit().args(["callback", "-n", "apps"]));
    assert_eq!(stdout(&ours), "helm 4\napps\n");
    if let Some(mut helm) = ctx.helm() {
        assert_eq!(
            stdout(&run_ok(helm.args(["callback", "-n", "apps"]))),
            "helm 4\napps\n"
        );
    }
}
