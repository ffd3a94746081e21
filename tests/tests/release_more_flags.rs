//! The release flags helm 4 users' scripts pass, against a sandbox with helm as the
//! oracle: dry runs of upgrade, rollback and uninstall print what helm prints and change
//! nothing; `--hide-secret`, `--labels` on upgrade, `--name-template`,
//! `--generate-name`, `--ignore-not-found`, `--dependency-update`,
//! `--render-subchart-notes`, `--skip-schema-validation`, `--debug`, `--color`; the
//! repository flags of `--repo` charts; and the flags that existed untested
//! (`--wait-for-jobs`, `--skip-crds`, `--keep-history`, `--cascade orphan`, the `keep`
//! resource policy, `--history-max`) leave the cluster and the records as helm's do.
//! Outputs are compared with their LAST DEPLOYED times (and generated names) blanked.

use std::path::Path;
use std::process::{Command, Output};

use chartkit_tests::TestContext;
use chartkit_tests::sandbox::{SandboxProcess, run_ok, write_file};
use chartkit_tests::server::ServeProcess;
use chartkit_tests::stdout as text;
use serde_json::Value;

const NAME: &str = "release_more_flags";

/// The `Error: ` line of a failed command's stderr (helm logs other lines around it).
fn error_line(output: &Output) -> String {
    assert!(
        !output.status.success(),
        "expected a failure: {}",
        text(output)
    );
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .find(|l| l.starts_with("Error: "))
        .unwrap_or_default()
        .to_string()
}

/// The two tools, pointed at one sandbox.
struct Tools<'a> {
    ctx: &'a TestContext,
    sandbox: &'a SandboxProcess,
}

impl Tools<'_> {
    /// Starts a sandbox, or `None` (with the harness's skip message) without the peers.
    fn check(ctx: &TestContext, sandbox: &SandboxProcess) -> bool {
        sandbox.helm(ctx, NAME).is_some() && sandbox.kubectl(ctx, NAME).is_some()
    }

    fn chartkit(&self) -> Command {
        let mut command = self.ctx.chartkit();
        command.env("KUBECONFIG", &self.sandbox.kubeconfig);
        command
    }

    fn helm(&self) -> Command {
        self.sandbox.helm(self.ctx, NAME).expect("helm")
    }

    fn kubectl(&self) -> Command {
        self.sandbox.kubectl(self.ctx, NAME).expect("kubectl")
    }

    fn ours(&self, args: &[&str]) -> Output {
        self.chartkit().args(args).output().expect("run chartkit")
    }

    fn theirs(&self, args: &[&str]) -> Output {
        self.helm().args(args).output().expect("run helm")
    }

    /// Runs `args` with both; both must succeed; their outputs, normalised.
    fn both_ok(&self, args: &[&str]) -> (String, String) {
        let ours = run_ok(self.chartkit().args(args));
        let theirs = run_ok(self.helm().args(args));
        (normalise(&text(&ours)), normalise(&text(&theirs)))
    }

    /// Runs `args` with both and asserts the same stdout.
    fn same(&self, args: &[&str]) -> String {
        let (ours, theirs) = self.both_ok(args);
        assert_eq!(ours, theirs, "{args:?}");
        ours
    }

    /// Runs `args` with both, both must fail, with the same `Error:` line.
    fn same_error(&self, args: &[&str]) -> String {
        let ours = error_line(&self.ours(args));
        let theirs = error_line(&self.theirs(args));
        assert_eq!(ours, theirs, "{args:?}");
        ours
    }

    fn json(&self, args: &[&str]) -> Value {
        let out = run_ok(self.kubectl().args(args).args(["-o", "json"]));
        serde_json::from_slice(&out.stdout).expect("kubectl json")
    }

    fn exists(&self, args: &[&str]) -> bool {
        self.kubectl()
            .args(args)
            .output()
            .expect("run kubectl")
            .status
            .success()
    }

    /// `helm history NAME -o json` as (revision, status, description).
    fn history(&self, release: &str) -> Vec<(i64, String, String)> {
        let out = run_ok(self.helm().args(["history", release, "-o", "json"]));
        let rows: Vec<Value> = serde_json::from_slice(&out.stdout).expect("history json");
        rows.iter()
            .map(|r| {
                (
                    r["revision"].as_i64().unwrap_or(0),
                    r["status"].as_str().unwrap_or_default().to_string(),
                    r["description"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    }

    /// The labels a record carries beyond the storage driver's own.
    fn user_labels(&self, release: &str) -> Value {
        let out = run_ok(self.helm().args(["get", "metadata", release, "-o", "json"]));
        let mut meta: Value = serde_json::from_slice(&out.stdout).expect("metadata json");
        let labels = meta["labels"].as_object_mut().expect("labels");
        for system in [
            "name",
            "owner",
            "status",
            "version",
            "createdAt",
            "modifiedAt",
        ] {
            labels.remove(system);
        }
        meta["labels"].take()
    }
}

/// Output with the parts that differ between runs blanked: LAST DEPLOYED times and the
/// Unix time of generated names.
fn normalise(output: &str) -> String {
    let mut out = String::new();
    for line in output.lines() {
        if line.starts_with("LAST DEPLOYED: ") {
            out.push_str("LAST DEPLOYED: <time>");
        } else {
            out.push_str(&blank_unix_times(line));
        }
        out.push('\n');
    }
    out
}

/// The output up to its notes, and the notes' paragraphs sorted.
fn notes_as_set(output: &str) -> (String, Vec<String>) {
    let (head, notes) = output.split_once("NOTES:\n").unwrap_or((output, ""));
    let mut paragraphs: Vec<String> = notes
        .split("\n\n")
        .map(|p| p.trim_end().to_string())
        .collect();
    paragraphs.sort();
    (head.to_string(), paragraphs)
}

/// `-1795709740` (a dash and ten digits) as `-<unix>`.
fn blank_unix_times(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find('-') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 10 {
            out.push_str("-<unix>");
            rest = &after[digits..];
        } else {
            out.push('-');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// A chart in `dir` named `name`: a ConfigMap, a Secret, a post-install hook and notes,
/// plus what `extra` adds.
fn chart(dir: &Path, name: &str, extra: &[(&str, &str)]) -> String {
    let root = dir.join(name);
    write_file(
        &root,
        "Chart.yaml",
        &format!("apiVersion: v2\nname: {name}\nversion: 0.1.0\n"),
    );
    write_file(&root, "values.yaml", "value: one\n");
    write_file(
        &root,
        "templates/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  value: {{ .Values.value | quote }}\n",
    );
    write_file(
        &root,
        "templates/secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-s\nstringData:\n  password: hunter2\n",
    );
    write_file(
        &root,
        "templates/hook.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-hook\n  annotations:\n    helm.sh/hook: post-install,post-upgrade\ndata: {}\n",
    );
    write_file(
        &root,
        "templates/NOTES.txt",
        "{{ .Release.Name }} is {{ .Values.value }}\n",
    );
    for (path, text) in extra {
        write_file(&root, path, text);
    }
    root.display().to_string()
}

#[test]
fn dry_runs_print_what_helm_prints_and_change_nothing() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if !Tools::check(&ctx, &sandbox) {
        return;
    }
    let tools = Tools {
        ctx: &ctx,
        sandbox: &sandbox,
    };
    let web = chart(ctx.dir(), "web", &[]);
    run_ok(tools.chartkit().args(["install", "dry", &web]));

    // upgrade: a bare --dry-run (helm's deprecated spelling), server with the secret
    // hidden, and a --description, which replaces "Dry run complete" and so the manifest.
    let bare = tools.ours(&["upgrade", "dry", &web, "--dry-run", "--set", "value=two"]);
    assert!(
        String::from_utf8_lossy(&bare.stderr)
            .contains("--dry-run is deprecated and should be replaced with '--dry-run=client'"),
        "{}",
        String::from_utf8_lossy(&bare.stderr)
    );
    let printed = tools.same(&["upgrade", "dry", &web, "--dry-run", "--set", "value=two"]);
    assert!(
        printed.contains("STATUS: pending-upgrade\nREVISION: 2\nDESCRIPTION: Dry run complete\n")
            && printed.contains("HOOKS:\n---\n# Source: web/templates/hook.yaml\n")
            && printed.contains("  password: hunter2")
            && printed.contains("  value: \"two\""),
        "{printed}"
    );
    let hidden = tools.same(&["upgrade", "dry", &web, "--dry-run=server", "--hide-secret"]);
    assert!(
        hidden.contains(
            "# Source: web/templates/secret.yaml\n# HIDDEN: The Secret output has been suppressed\n"
        ) && !hidden.contains("hunter2"),
        "{hidden}"
    );
    let described = tools.same(&[
        "upgrade",
        "dry",
        &web,
        "--dry-run=client",
        "--description",
        "planned",
    ]);
    assert!(
        described.contains("DESCRIPTION: planned\n") && !described.contains("MANIFEST:"),
        "{described}"
    );
    tools.same_error(&["upgrade", "dry", &web, "--hide-secret"]);
    tools.same_error(&["upgrade", "dry", &web, "--dry-run=maybe"]);

    // install: client (no cluster) and server dry runs of a new release.
    let client = tools.same(&[
        "install",
        "other",
        &web,
        "--dry-run=client",
        "--hide-secret",
        "-n",
        "elsewhere",
    ]);
    assert!(
        client.contains("NAMESPACE: elsewhere\nSTATUS: pending-install\n")
            && client.contains("# HIDDEN: The Secret output has been suppressed"),
        "{client}"
    );
    tools.same(&["install", "other", &web, "--dry-run=server"]);
    assert_eq!(
        tools.history("dry"),
        [(1, "deployed".into(), "Install complete".into())],
        "no dry run recorded a revision"
    );
    assert!(!tools.exists(&["get", "configmap", "other-cm"]));
    assert!(!tools.exists(&["get", "secret", "sh.helm.release.v1.other.v1"]));
    assert_eq!(
        tools.json(&["get", "configmap", "dry-cm"])["data"]["value"],
        "one"
    );

    // rollback: checks the revision, changes nothing.
    run_ok(
        tools
            .chartkit()
            .args(["upgrade", "dry", &web, "--set", "value=two"]),
    );
    tools.same(&["rollback", "dry", "1", "--dry-run"]);
    tools.same(&["rollback", "dry", "--dry-run=server"]);
    tools.same_error(&["rollback", "dry", "9", "--dry-run"]);
    assert_eq!(tools.history("dry").len(), 2);
    assert_eq!(
        tools.json(&["get", "configmap", "dry-cm"])["data"]["value"],
        "two"
    );

    // uninstall: a dry run finds the release and leaves it; --ignore-not-found lets a
    // missing one pass, with or without a dry run.
    assert_eq!(
        tools.same(&["uninstall", "dry", "--dry-run"]),
        "release \"dry\" uninstalled\n"
    );
    assert_eq!(tools.history("dry").len(), 2);
    assert!(tools.exists(&["get", "configmap", "dry-cm"]));
    tools.same_error(&["uninstall", "nope", "--dry-run"]);
    tools.same_error(&["uninstall", "nope"]);
    tools.same_error(&["uninstall", "Not_A_Name", "--ignore-not-found"]);
    assert_eq!(
        tools.same(&["uninstall", "nope", "--ignore-not-found"]),
        "release \"nope\" uninstalled\n"
    );
    tools.same(&["uninstall", "nope", "--dry-run", "--ignore-not-found"]);
    // A list of releases goes on past the missing one.
    assert_eq!(
        text(&run_ok(tools.chartkit().args([
            "uninstall",
            "nope",
            "dry",
            "--ignore-not-found"
        ]))),
        "release \"nope\" uninstalled\nrelease \"dry\" uninstalled\n"
    );
    assert!(!tools.exists(&["get", "configmap", "dry-cm"]));
}

#[test]
fn labels_and_release_names_are_helms() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if !Tools::check(&ctx, &sandbox) {
        return;
    }
    let tools = Tools {
        ctx: &ctx,
        sandbox: &sandbox,
    };
    let web = chart(ctx.dir(), "web", &[]);

    // upgrade --labels merges over the last revision's labels; `null` unsets one.
    for (tool, release) in [("chartkit", "lab-ours"), ("helm", "lab-helm")] {
        let run = |args: &[&str]| {
            let mut command = if tool == "chartkit" {
                tools.chartkit()
            } else {
                tools.helm()
            };
            run_ok(command.args(args));
        };
        run(&["install", release, &web, "-l", "team=a,tier=web"]);
        run(&["upgrade", release, &web, "--labels", "tier=null,stage=prod"]);
    }
    let ours = tools.user_labels("lab-ours");
    assert_eq!(ours, tools.user_labels("lab-helm"));
    assert_eq!(ours, serde_json::json!({"team": "a", "stage": "prod"}));
    let reserved = tools.same_error(&["upgrade", "lab-ours", &web, "-l", "owner=me"]);
    assert!(reserved.contains("System labels: [name owner status version createdAt modifiedAt]"));
    tools.same_error(&["install", "lab-new", &web, "-l", "status=x"]);

    // --name-template: Sprig, no data, and helm's refusals.
    let named = tools.same(&[
        "install",
        "--name-template",
        "{{ \"tmpl\" }}-{{ add 1 2 }}",
        &web,
        "--dry-run=client",
    ]);
    assert!(named.starts_with("NAME: tmpl-3\n"), "{named}");
    tools.same_error(&["install", "--name-template", "{{ bad", &web]);
    tools.same_error(&["install", "--name-template", "{{ .Missing }}", &web]);
    tools.same_error(&["install", "x", &web, "--name-template", "y"]);
    tools.same_error(&["install", "x", &web, "--generate-name"]);
    tools.same_error(&["install", &web]);

    // --generate-name: the chart argument's last part up to its first dot, and the time.
    let package = ctx.path("pkg");
    run_ok(tools.chartkit().args(["package", &web, "-d"]).arg(&package));
    let tgz = package.join("web-0.1.0.tgz").display().to_string();
    let generated = tools.same(&["install", "-g", &tgz, "--dry-run=client"]);
    assert!(generated.starts_with("NAME: web-0-<unix>\n"), "{generated}");
    // Each in a namespace of its own: within one second the two names are the same.
    for (namespace, mut command) in [("gen-ours", tools.chartkit()), ("gen-helm", tools.helm())] {
        run_ok(command.args([
            "install",
            "--generate-name",
            &web,
            "-n",
            namespace,
            "--create-namespace",
        ]));
    }
    let listed = text(&run_ok(tools.helm().args(["list", "-A", "-q"])));
    let generated: Vec<&str> = listed.lines().filter(|l| l.starts_with("web-")).collect();
    assert_eq!(generated.len(), 2, "{listed}");
    for name in generated {
        assert_eq!(blank_unix_times(name), "web-<unix>", "{listed}");
    }
}

#[test]
fn rendering_and_dependency_flags_are_helms() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if !Tools::check(&ctx, &sandbox) {
        return;
    }
    let tools = Tools {
        ctx: &ctx,
        sandbox: &sandbox,
    };
    // A parent whose dependency is a chart beside it (file://), in three copies: one
    // each for the tools to update, and one left without charts/.
    chart(
        ctx.dir(),
        "dep",
        &[
            ("templates/NOTES.txt", "dep notes for {{ .Release.Name }}\n"),
            (
                "templates/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-dep\ndata: {}\n",
            ),
            ("templates/secret.yaml", ""),
            ("templates/hook.yaml", ""),
        ],
    );
    let parent = |copy: &str| {
        let dir = ctx.path(copy);
        chart(
            &dir,
            "parent",
            &[(
                "Chart.yaml",
                "apiVersion: v2\nname: parent\nversion: 0.1.0\ndependencies:\n  - name: dep\n    version: 0.1.0\n    repository: file://../../dep\n    condition: dep.enabled\n",
            )],
        )
    };
    let (ours, theirs, bare) = (parent("a"), parent("b"), parent("c"));
    let args = |chart: &str| {
        [
            "install",
            "deps",
            chart,
            "--dependency-update",
            "--render-subchart-notes",
            "--dry-run=server",
            "--burst-limit",
            "50",
            "--qps",
            "20",
        ]
        .map(String::from)
    };
    let updated = normalise(&text(&run_ok(tools.chartkit().args(args(&ours)))));
    // helm joins the notes in Go's map order, which varies from run to run: they are
    // compared as a set. chartkit puts the subcharts' first.
    assert_eq!(
        notes_as_set(&updated),
        notes_as_set(&normalise(&text(&run_ok(tools.helm().args(args(&theirs))))))
    );
    assert!(
        updated.starts_with("Saving 1 charts\nDeleting outdated charts\nNAME: deps\n")
            && updated.ends_with("NOTES:\ndep notes for deps\n\ndeps is one\n"),
        "{updated}"
    );
    assert!(Path::new(&ours).join("charts/dep-0.1.0.tgz").exists());
    assert!(Path::new(&ours).join("Chart.lock").exists());
    let missing = tools.same_error(&["install", "deps", &bare]);
    assert!(
        missing.contains("missing in charts/ directory: dep"),
        "{missing}"
    );
    // Without the flag, subcharts' notes stay out.
    let plain = tools.same(&["install", "deps", &ours, "--dry-run=client"]);
    assert!(!plain.contains("dep notes"), "{plain}");
    // --debug adds the values (the subchart's defaults among them) and the manifest,
    // which an upgrade's dry run with a description otherwise leaves out.
    run_ok(tools.chartkit().args(["install", "deps", &ours]));
    let upgrade = [
        "upgrade",
        "deps",
        &ours,
        "--dry-run=server",
        "--description",
        "x",
        "--set",
        "a.b=1",
    ];
    assert!(!tools.same(&upgrade).contains("MANIFEST:"));
    let debug = tools.same(&[&upgrade[..], &["--debug"]].concat());
    assert!(
        debug.contains("USER-SUPPLIED VALUES:\na:\n  b: 1\n\nCOMPUTED VALUES:\n")
            && debug.contains("dep:\n  global: {}\n  value: one\n")
            && debug.contains("MANIFEST:\n"),
        "{debug}"
    );
    // A subchart its condition turns off leaves the computed values, as in helm (they are
    // computed from the chart as dependency processing left it, not as it was loaded).
    let off = tools.same(&[&upgrade[..], &["--debug", "--set", "dep.enabled=false"]].concat());
    assert!(
        off.contains("COMPUTED VALUES:\na:\n  b: 1\ndep:\n  enabled: false\nvalue: one\n"),
        "{off}"
    );

    // --skip-schema-validation
    let schema = chart(
        ctx.dir(),
        "strict",
        &[(
            "values.schema.json",
            r#"{"type": "object", "properties": {"value": {"type": "integer"}}}"#,
        )],
    );
    let refused = tools.same_error(&["install", "strict", &schema, "--dry-run=client"]);
    assert!(refused.contains("value"), "{refused}");
    tools.same(&[
        "install",
        "strict",
        &schema,
        "--dry-run=client",
        "--skip-schema-validation",
    ]);

    // --enable-dns: accepted; chartkit's getHostByName never resolves (helm's would).
    let dns = chart(
        ctx.dir(),
        "dns",
        &[(
            "templates/host.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: host\ndata:\n  host: {{ getHostByName \"localhost\" | quote }}\n",
        )],
    );
    let unresolved = tools.same(&["install", "dns", &dns, "--dry-run=client"]);
    assert!(unresolved.contains("  host: \"\"\n"), "{unresolved}");
    let enabled = text(&run_ok(tools.chartkit().args([
        "install",
        "dns",
        &dns,
        "--dry-run=client",
        "--enable-dns",
    ])));
    assert!(enabled.contains("  host: \"\"\n"), "{enabled}");

    // --disable-openapi-validation: the server still checks the fields written, for both.
    let bogus = chart(
        ctx.dir(),
        "bogus",
        &[(
            "templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\nbogus: field\n",
        )],
    );
    for release in ["bogus-ours", "bogus-helm"] {
        let args = ["install", release, &bogus, "--disable-openapi-validation"];
        let failed = if release == "bogus-ours" {
            tools.ours(&args)
        } else {
            tools.theirs(&args)
        };
        let error = error_line(&failed);
        assert!(
            error.contains(".bogus: field not declared in schema"),
            "{error}"
        );
    }
    for (release, mut command) in [("csa-ours", tools.chartkit()), ("csa-helm", tools.helm())] {
        run_ok(command.args([
            "install",
            release,
            &bogus,
            "--server-side=false",
            "--disable-openapi-validation",
        ]));
        assert!(tools.exists(&["get", "configmap", &format!("{release}-cm")]));
    }

    // --color/--colour: helm 4's colours, NO_COLOR unset.
    let web = chart(ctx.dir(), "web", &[]);
    let coloured = |mut command: Command, flag: &str| {
        text(&run_ok(command.env_remove("NO_COLOR").args([
            "install",
            "web",
            &web,
            "--dry-run=server",
            flag,
        ])))
    };
    let ours = normalise(&coloured(tools.chartkit(), "--color=always"));
    assert_eq!(ours, normalise(&coloured(tools.helm(), "--colour=always")));
    assert!(
        ours.contains(
            "NAMESPACE: \x1b[36mdefault\x1b[0m\nSTATUS: \x1b[33mpending-install\x1b[0m\n"
        ),
        "{ours}"
    );
    for mut command in [tools.chartkit(), tools.helm()] {
        // NO_COLOR wins over --color=always, for helm as for chartkit.
        let plain = text(&run_ok(command.env("NO_COLOR", "1").args([
            "install",
            "web",
            &web,
            "--dry-run=server",
            "--color=always",
        ])));
        assert!(!plain.contains('\x1b'), "{plain}");
    }
    assert!(!coloured(tools.chartkit(), "--color=never").contains('\x1b'));
    // helm logs this one rather than printing an `Error:` line.
    let bogus = ["list", "--color", "bogus"];
    assert!(!tools.theirs(&bogus).status.success());
    let refused = error_line(&tools.ours(&bogus));
    assert!(
        refused.contains("invalid color mode \"bogus\": must be one of: never, auto, always"),
        "{refused}"
    );
}

#[test]
fn repository_flags_are_pulls() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if !Tools::check(&ctx, &sandbox) {
        return;
    }
    let tools = Tools {
        ctx: &ctx,
        sandbox: &sandbox,
    };
    let htpasswd = ctx.path("htpasswd");
    std::fs::write(
        &htpasswd,
        format!("ci:{}\n", bcrypt::hash("let-me-in", 4).expect("bcrypt")),
    )
    .expect("htpasswd");
    let repo = ctx.path("repo");
    std::fs::create_dir(&repo).expect("repo dir");
    for version in ["1.2.0", "1.4.2", "2.1.0"] {
        std::fs::write(
            repo.join(format!("api-{version}.tgz")),
            chartkit_tests::server::chart_package("api", version),
        )
        .expect("package");
    }
    let server = ServeProcess::start(
        ctx.chartkit(),
        &[
            repo.to_str().expect("path"),
            "--basic-auth-file",
            htpasswd.to_str().expect("path"),
            "--auth-reads",
        ],
        ctx.dir(),
    );
    let url = server.url.clone();

    // --repo with credentials, as helm takes them.
    let with_repo = |release: &str, extra: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = [
            "install",
            release,
            "api",
            "--repo",
            &url,
            "--version",
            "^1.2",
            "--dry-run=server",
        ]
        .map(String::from)
        .to_vec();
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    let credentials = [
        "--username",
        "ci",
        "--password",
        "let-me-in",
        "--pass-credentials",
        "--plain-http",
        "--insecure-skip-tls-verify",
    ];
    // Refused without them (asked first: a refusal after a download is answered from
    // chartkit's cache, with a warning).
    let anonymous = with_repo("api", &[]);
    let anonymous: Vec<&str> = anonymous.iter().map(String::as_str).collect();
    let refused = error_line(&tools.ours(&anonymous));
    assert!(refused.contains("401"), "{refused}");
    assert!(!tools.theirs(&anonymous).status.success());
    let args = with_repo("api", &credentials);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let installed = tools.same(&args);
    assert!(installed.starts_with("NAME: api\n"), "{installed}");

    // REPO/NAME from a repository list and index cache of the caller's, in helm's
    // format and layout: both tools read the same files.
    let config = write_file(
        ctx.dir(),
        "elsewhere/repositories.yaml",
        &format!(
            "apiVersion: \"\"\ngenerated: \"0001-01-01T00:00:00Z\"\nrepositories:\n- name: mine\n  url: {url}\n  username: ci\n  password: let-me-in\n"
        ),
    );
    let cache = ctx.path("elsewhere/cache");
    let (config, cache) = (config.display().to_string(), cache.display().to_string());
    let located = [
        "--repository-config",
        config.as_str(),
        "--repository-cache",
        cache.as_str(),
    ];
    // helm reads only a cached index: it is fetched first (chartkit fetches a missing one).
    run_ok(tools.helm().args(["repo", "update"]).args(located));
    let mut args = vec![
        "upgrade",
        "mine",
        "mine/api",
        "--install",
        "--version",
        "~1.2",
        "--dry-run=server",
    ];
    args.extend(located);
    let upgraded = tools.same(&args);
    assert!(
        upgraded.contains("Release \"mine\" does not exist. Installing it now.\nNAME: mine\n"),
        "{upgraded}"
    );
    assert!(Path::new(&cache).join("mine-index.yaml").exists());
    assert!(
        !ctx.path(".home/config/helm/repositories.yaml").exists(),
        "the default repository list is left alone"
    );
    drop(server);
}

#[test]
fn existing_flags_leave_the_cluster_as_helm_does() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if !Tools::check(&ctx, &sandbox) {
        return;
    }
    let tools = Tools {
        ctx: &ctx,
        sandbox: &sandbox,
    };
    let workload = chart(
        ctx.dir(),
        "work",
        &[
            ("values.yaml", "value: one\njob: false\nkeep: false\n"),
            (
                "templates/deploy.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}-web\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: {{ .Release.Name }}}\n  template:\n    metadata:\n      labels: {app: {{ .Release.Name }}}\n    spec:\n      containers:\n        - name: web\n          image: nginx:1.27\n",
            ),
            (
                "templates/job.yaml",
                "{{- if .Values.job }}\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ .Release.Name }}-job\nspec:\n  template:\n    metadata:\n      annotations:\n        sandbox.chartkit.dev/run-duration: 3s\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: job\n          image: busybox\n{{- end }}\n",
            ),
            (
                "templates/kept.yaml",
                "{{- if .Values.keep }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-kept\n  annotations:\n    helm.sh/resource-policy: keep\ndata: {}\n{{- end }}\n",
            ),
            ("crds/gadgets.yaml", CRD),
        ],
    );
    let run = |tool: &str, args: &[&str]| -> String {
        let mut command = if tool == "chartkit" {
            tools.chartkit()
        } else {
            tools.helm()
        };
        text(&run_ok(command.args(args)))
    };
    let job_done = |release: &str| {
        tools.json(&["get", "job", &format!("{release}-job")])["status"]["succeeded"] == 1
    };

    // --skip-crds leaves the chart's CRD out, for both; a plain install brings it.
    for tool in ["chartkit", "helm"] {
        run(
            tool,
            &[
                "install",
                &format!("nocrd-{tool}"),
                &workload,
                "--skip-crds",
            ],
        );
        assert!(
            !tools.exists(&["get", "crd", "gadgets.example.com"]),
            "{tool}"
        );
    }

    // --wait-for-jobs: the install returns once the Job has completed; --wait alone does
    // not wait for it.
    for tool in ["chartkit", "helm"] {
        let release = format!("jobs-{tool}");
        run(
            tool,
            &[
                "install",
                &release,
                &workload,
                "--set",
                "job=true",
                "--wait",
                "--wait-for-jobs",
                "--skip-crds",
            ],
        );
        assert!(
            job_done(&release),
            "{tool}: the Job completed before it returned"
        );
    }
    run(
        "chartkit",
        &[
            "install",
            "nowait",
            &workload,
            "--set",
            "job=true",
            "--wait",
            "--skip-crds",
        ],
    );
    assert!(!job_done("nowait"), "--wait alone does not wait for Jobs");

    // --history-max 2: the oldest revisions are pruned as helm prunes them.
    for tool in ["chartkit", "helm"] {
        let release = format!("hist-{tool}");
        run(tool, &["install", &release, &workload]);
        assert!(tools.exists(&["get", "crd", "gadgets.example.com"]));
        for value in ["2", "3", "4"] {
            run(
                tool,
                &[
                    "upgrade",
                    &release,
                    &workload,
                    "--set",
                    &format!("value={value}"),
                    "--history-max",
                    "2",
                ],
            );
        }
    }
    let ours = tools.history("hist-chartkit");
    assert_eq!(ours, tools.history("hist-helm"));
    assert_eq!(
        ours.iter().map(|r| r.0).collect::<Vec<_>>(),
        [3, 4],
        "{ours:?}"
    );

    // uninstall --keep-history: the last record stays, marked uninstalled.
    for tool in ["chartkit", "helm"] {
        run(
            tool,
            &["uninstall", &format!("hist-{tool}"), "--keep-history"],
        );
    }
    let ours = tools.history("hist-chartkit");
    assert_eq!(ours, tools.history("hist-helm"));
    assert_eq!(
        ours.last(),
        Some(&(4, "uninstalled".into(), "Uninstallation complete".into()))
    );
    let uninstalled = text(&run_ok(tools.chartkit().args([
        "list",
        "--uninstalled",
        "-q",
    ])));
    assert!(uninstalled.contains("hist-chartkit"), "{uninstalled}");

    // --cascade orphan: the Deployment goes, its ReplicaSet stays.
    for tool in ["chartkit", "helm"] {
        let release = format!("orphan-{tool}");
        run(
            tool,
            &["install", &release, &workload, "--wait", "--skip-crds"],
        );
        let selector = format!("app={release}");
        let replica_sets = |tools: &Tools| {
            tools.json(&["get", "replicasets", "-l", &selector])["items"]
                .as_array()
                .map_or(0, Vec::len)
        };
        assert_eq!(replica_sets(&tools), 1, "{tool}");
        run(tool, &["uninstall", &release, "--cascade", "orphan"]);
        assert!(!tools.exists(&["get", "deployment", &format!("{release}-web")]));
        assert_eq!(
            replica_sets(&tools),
            1,
            "{tool}: the ReplicaSet is orphaned"
        );
    }

    // helm.sh/resource-policy: keep: the object stays and is listed as helm lists it.
    let mut said = Vec::new();
    for tool in ["chartkit", "helm"] {
        run(
            tool,
            &[
                "install",
                "kept",
                &workload,
                "--set",
                "keep=true",
                "--skip-crds",
            ],
        );
        said.push(run(tool, &["uninstall", "kept"]));
        assert!(tools.exists(&["get", "configmap", "kept-kept"]), "{tool}");
        assert!(!tools.exists(&["get", "configmap", "kept-cm"]), "{tool}");
        run_ok(tools.kubectl().args(["delete", "configmap", "kept-kept"]));
    }
    assert_eq!(said[0], said[1]);
    assert_eq!(
        said[0],
        "These resources were kept due to the resource policy:\n[ConfigMap] kept-kept\n\nrelease \"kept\" uninstalled\n"
    );
}

const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
"#;
