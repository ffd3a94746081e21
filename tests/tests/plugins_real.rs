//! Real plugins, vendored under `tests/fixtures/plugins` (see its README): helm-git (a
//! shell getter for `git+file://` and friends), the parts of helm-secrets that run
//! without sops, and Helm 4.1.4's own shell test-data plugins. Each is installed with
//! chartkit in one context and with helm in another, and run through both tools in
//! both, so a plugin installed by either is listed and run by the other with the same
//! output and exit status. helm-git serves a git repository the test makes, through
//! `repo add`, `pull`, `template --repo`, dependencies and `mirror`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use chartkit_tests::sandbox::{run_ok, write_file};
use chartkit_tests::{TestContext, stderr, stdout};

const NAME: &str = "plugins_real";

fn fixtures() -> PathBuf {
    chartkit_tests::workspace_root().join("tests/fixtures/plugins")
}

/// Copies the fixture `relative` into the context (links kept, as helm-secrets'
/// sub-plugins link to its scripts) and returns the copy.
fn copy_fixture(ctx: &TestContext, relative: &str) -> PathBuf {
    let target = ctx.path("src");
    std::fs::create_dir_all(&target).unwrap();
    run_ok(
        Command::new("cp")
            .arg("-a")
            .arg(fixtures().join(relative))
            .arg(&target),
    );
    target.join(Path::new(relative).file_name().unwrap())
}

/// The two contexts: plugins installed by helm in the first, by chartkit in the second.
struct Pair {
    by_helm: TestContext,
    by_chartkit: TestContext,
}

impl Pair {
    /// Installs the fixture `relative` in both contexts, checking that both tools say
    /// the same about it.
    fn install(&self, relative: &str) {
        self.install_part(relative, "");
    }

    /// Installs the plugin at `part` inside the fixture `relative` (copied whole).
    fn install_part(&self, relative: &str, part: &str) {
        let source = copy_fixture(&self.by_helm, relative).join(part);
        let theirs = run_ok(
            self.by_helm
                .helm_or_skip(NAME)
                .unwrap()
                .args(["plugin", "install"])
                .arg(&source),
        );
        let source = copy_fixture(&self.by_chartkit, relative).join(part);
        let ours = run_ok(
            self.by_chartkit
                .chartkit()
                .args(["plugin", "install"])
                .arg(&source),
        );
        assert_eq!(stdout(&ours), stdout(&theirs), "installing {relative}");
    }

    fn contexts(&self) -> [(&'static str, &TestContext); 2] {
        [
            ("installed by helm", &self.by_helm),
            ("installed by chartkit", &self.by_chartkit),
        ]
    }

    /// Runs `args` with both tools in both contexts: the same stdout and exit status
    /// everywhere (stdout filtered by `keep`). Returns chartkit's output in the context
    /// where helm installed the plugins.
    fn same(&self, args: &[&str], keep: fn(&str) -> bool) -> Output {
        let shown = |output: &Output| {
            let text: Vec<String> = stdout(output)
                .lines()
                .filter(|l| keep(l))
                .map(str::to_owned)
                .collect();
            (text, output.status.code())
        };
        let mut first = None;
        for (how, ctx) in self.contexts() {
            let ours = ctx.chartkit().args(args).output().unwrap();
            let theirs = ctx.helm_or_skip(NAME).unwrap().args(args).output().unwrap();
            assert_eq!(
                shown(&ours),
                shown(&theirs),
                "{args:?} with the plugins {how}\nchartkit's stderr: {}\nhelm's stderr: {}",
                stderr(&ours),
                stderr(&theirs)
            );
            first.get_or_insert(ours);
        }
        first.unwrap()
    }
}

fn all_lines(_: &str) -> bool {
    true
}

#[test]
fn helms_own_test_plugins_work_the_same_installed_and_run_by_either_tool() {
    let pair = Pair {
        by_helm: TestContext::new(),
        by_chartkit: TestContext::new(),
    };
    if pair.by_helm.helm_or_skip(NAME).is_none() {
        return;
    }
    for plugin in [
        "args",
        "echo",
        "exitwith",
        "fullenv",
        "shortenv",
        "hello-legacy",
        "hello-v1",
        "postrenderer-v1",
        "getter",
        "downloader",
    ] {
        pair.install(&format!("helm-testdata/{plugin}"));
    }
    let list = pair.same(&["plugin", "list"], all_lines);
    assert!(
        stdout(&list).contains("downloader     \t1.2.3  \tgetter/v1      \tlegacy"),
        "{}",
        stdout(&list)
    );
    pair.same(&["plugin", "list", "--type", "getter/v1"], all_lines);

    let args = pair.same(&["args", "a", "--flag", "b c"], all_lines);
    assert_eq!(stdout(&args), "a --flag b c\n");
    let echo = pair.same(&["echo", "x"], all_lines);
    assert_eq!(stdout(&echo), "hello x\n");
    let exit = pair.same(&["exitwith", "5"], all_lines);
    assert_eq!(exit.status.code(), Some(5));
    assert_eq!(
        stderr(&exit),
        "Error: plugin \"exitwith\" exited with error\n"
    );
    pair.same(&["shortenv"], all_lines);
    // HELM_BIN names the binary that ran, which differs by design.
    let env = pair.same(&["fullenv"], |l| !l.starts_with("HELM_BIN="));
    assert!(stdout(&env).contains("HELM_PLUGIN_NAME=fullenv\n"));
    // The hello plugins ignore flags and then run `$HELM_BIN ls --all`, which has no
    // cluster here: the same greeting, then the same failure.
    let hello = pair.same(&["hello-legacy", "--ignored", "x"], all_lines);
    assert!(stdout(&hello).starts_with("Hello from a Helm plugin\nPARAMS\n"));
    pair.same(&["hello", "y"], all_lines);

    // The post-renderer, on a chart whose manifest it rewrites.
    for (_, ctx) in pair.contexts() {
        write_file(
            &ctx.path("chart"),
            "Chart.yaml",
            "apiVersion: v2\nname: pr\nversion: 0.1.0\n",
        );
        write_file(
            &ctx.path("chart"),
            "templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: FOOTEST\n",
        );
    }
    let rendered = pair.same(
        &[
            "template",
            "rel",
            "./chart",
            "--post-renderer",
            "postrenderer-v1",
        ],
        all_lines,
    );
    assert!(
        stdout(&rendered).contains("name: BARTEST"),
        "{}",
        stdout(&rendered)
    );
    let with_args = pair.same(
        &[
            "template",
            "rel",
            "./chart",
            "--post-renderer",
            "postrenderer-v1",
            "--post-renderer-args",
            "given",
        ],
        all_lines,
    );
    assert!(stdout(&with_args).contains("name: given"));

    // Helm's getter examples run `echo` from their own directory, where there is none:
    // both tools fail, and chartkit says which plugin, URL and program.
    // Both serve the same schemes: the first in the directory, `downloader`, wins in
    // both tools.
    for (plugin, scheme) in [("downloader", "myprotocol"), ("downloader", "myprotocols")] {
        let url = format!("{scheme}://charts.example/web-1.0.0.tgz");
        let failed = pair.same(&["pull", &url], all_lines);
        assert_eq!(failed.status.code(), Some(1));
        let text = stderr(&failed);
        assert!(
            text.starts_with(&format!(
                "Error: plugin \"{plugin}\" failed to fetch {url}: cannot run `"
            )),
            "{text}"
        );
        assert!(text.contains(&format!("/{plugin}/echo`")), "{text}");
    }
}

/// A git repository holding the chart `web` 0.1.0 under `charts/`, made with git.
fn git_repository(ctx: &TestContext) -> PathBuf {
    let repo = ctx.path("gitrepo");
    std::fs::create_dir_all(repo.join("charts")).unwrap();
    run_ok(
        ctx.chartkit()
            .args(["create", "web"])
            .current_dir(repo.join("charts")),
    );
    let git = |args: &[&str]| {
        run_ok(
            Command::new("git")
                .args(["-c", "user.email=test@example.com", "-c", "user.name=test"])
                .args(args)
                .current_dir(&repo)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", ctx.path(".home")),
        );
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "web 0.1.0"]);
    repo
}

/// Every file under `dir` with its contents, for comparing unpacked charts.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path.strip_prefix(dir).unwrap().display().to_string();
                out.push((name, std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn helm_git_serves_a_git_repository_to_both_tools() {
    if chartkit_tests::on_path("git").is_none() {
        chartkit_tests::skip(NAME, "git is not installed");
        return;
    }
    let pair = Pair {
        by_helm: TestContext::new(),
        by_chartkit: TestContext::new(),
    };
    if pair.by_helm.helm_or_skip(NAME).is_none() {
        return;
    }
    pair.install("helm-git");
    for (how, ctx) in pair.contexts() {
        let repo = git_repository(ctx);
        // With `localhost` for a host: helm takes a chart URL without a host
        // (`git+file:///...`) for `REPO/NAME` and fails ("repo  not found"); git
        // reads both forms.
        let repo_url = format!("git+file://localhost{}@charts?ref=main", repo.display());
        let package_url = format!(
            "git+file://localhost{}@charts/web-0.1.0.tgz?ref=main",
            repo.display()
        );

        // Each tool adds the repository under its own name; the same words.
        let ours = run_ok(ctx.chartkit().args(["repo", "add", "ck", &repo_url]));
        let theirs = run_ok(
            ctx.helm_or_skip(NAME)
                .unwrap()
                .args(["repo", "add", "hm", &repo_url]),
        );
        assert_eq!(
            stdout(&ours).replace("\"ck\"", "\"hm\""),
            stdout(&theirs),
            "{how}"
        );

        // The same chart from the repository, from a package URL, and from each
        // other's repository entry (the list is shared).
        let pulls: [(&str, Vec<&str>); 4] = [
            ("ck-repo", vec!["pull", "ck/web"]),
            ("hm-repo", vec!["pull", "hm/web"]),
            ("url", vec!["pull", &package_url]),
            ("repo-flag", vec!["pull", "web", "--repo", &repo_url]),
        ];
        for (label, args) in pulls {
            let ours_dir = ctx.path(&format!("pulled/chartkit-{label}"));
            let theirs_dir = ctx.path(&format!("pulled/helm-{label}"));
            let ours = run_ok(
                ctx.chartkit()
                    .args(&args)
                    .arg("--untar")
                    .arg("-d")
                    .arg(&ours_dir),
            );
            let theirs = run_ok(
                ctx.helm_or_skip(NAME)
                    .unwrap()
                    .args(&args)
                    .arg("--untar")
                    .arg("-d")
                    .arg(&theirs_dir),
            );
            assert_eq!(stdout(&ours), stdout(&theirs), "{how}: {args:?}");
            let chart = files(&ours_dir.join("web"));
            assert!(
                chart.iter().any(|(name, _)| name == "Chart.yaml"),
                "{how}: {args:?}"
            );
            assert_eq!(chart, files(&theirs_dir.join("web")), "{how}: {args:?}");
        }

        // Rendering a chart given by --repo.
        let template = ["template", "rel", "web", "--repo", &repo_url];
        let ours = run_ok(ctx.chartkit().args(template));
        let theirs = run_ok(ctx.helm_or_skip(NAME).unwrap().args(template));
        assert_eq!(stdout(&ours), stdout(&theirs), "{how}");
        assert!(stdout(&ours).contains("kind: Deployment"));

        // A dependency in the git repository: the same package contents and lock.
        for tool in ["chartkit", "helm"] {
            let parent = ctx.path(&format!("parent-{tool}"));
            write_file(
                &parent,
                "Chart.yaml",
                &format!(
                    "apiVersion: v2\nname: parent\nversion: 1.0.0\ndependencies:\n- name: web\n  version: 0.1.0\n  repository: \"{repo_url}\"\n"
                ),
            );
            let mut command = match tool {
                "chartkit" => ctx.chartkit(),
                _ => ctx.helm_or_skip(NAME).unwrap(),
            };
            run_ok(command.args(["dependency", "update"]).arg(&parent));
            let unpacked = ctx.path(&format!("dep-{tool}"));
            std::fs::create_dir_all(&unpacked).unwrap();
            run_ok(
                Command::new("tar")
                    .arg("-xzf")
                    .arg(parent.join("charts/web-0.1.0.tgz"))
                    .arg("-C")
                    .arg(&unpacked),
            );
        }
        assert_eq!(
            files(&ctx.path("dep-chartkit")),
            files(&ctx.path("dep-helm")),
            "{how}"
        );
        let lock = |tool: &str| {
            let text =
                std::fs::read_to_string(ctx.path(&format!("parent-{tool}/Chart.lock"))).unwrap();
            text.lines()
                .filter(|l| !l.starts_with("generated:"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(lock("chartkit"), lock("helm"), "{how}");
        assert!(lock("chartkit").contains(&repo_url));

        // `repo update` asks the plugin again; `dependency build` restores the
        // package from the lock through it.
        let updated = run_ok(ctx.chartkit().args(["repo", "update", "ck"]));
        assert!(
            stdout(&updated)
                .contains("Successfully got an update from the \"ck\" chart repository"),
            "{}",
            stdout(&updated)
        );
        let parent = ctx.path("parent-chartkit");
        std::fs::remove_dir_all(parent.join("charts")).unwrap();
        run_ok(ctx.chartkit().args(["dependency", "build"]).arg(&parent));
        assert!(parent.join("charts/web-0.1.0.tgz").is_file(), "{how}");

        // mirror copies what the plugin serves into a plain directory repository.
        let mirrored = ctx.path("mirror");
        let output = run_ok(ctx.chartkit().args(["mirror", "ck", "--to"]).arg(&mirrored));
        assert!(
            stdout(&output).contains("Copied web-0.1.0.tgz"),
            "{}",
            stdout(&output)
        );
        assert!(mirrored.join("web-0.1.0.tgz").is_file());
        assert!(mirrored.join("index.yaml").is_file());
    }
}

#[test]
fn the_parts_of_helm_secrets_that_need_no_sops_work_the_same() {
    let pair = Pair {
        by_helm: TestContext::new(),
        by_chartkit: TestContext::new(),
    };
    if pair.by_helm.helm_or_skip(NAME).is_none() {
        return;
    }
    // The sub-plugins link to the scripts at the top of the plugin's repository.
    pair.install_part("helm-secrets", "plugins/helm-secrets-cli");
    for (_, ctx) in pair.contexts() {
        let getter = ctx.path("src/helm-secrets/plugins/helm-secrets-getter");
        match std::ptr::eq(ctx, &pair.by_helm) {
            true => run_ok(
                ctx.helm_or_skip(NAME)
                    .unwrap()
                    .args(["plugin", "install"])
                    .arg(&getter),
            ),
            false => run_ok(ctx.chartkit().args(["plugin", "install"]).arg(&getter)),
        };
    }
    let version = pair.same(&["secrets", "--version"], all_lines);
    assert_eq!(stdout(&version), "4.8.0-dev\n");
    for (_, ctx) in pair.contexts() {
        write_file(ctx.dir(), "values.yaml", "password: plain\n");
        // A package for the getter to hand over: helm-secrets serves any file, and
        // without sops (or with its noop backend) serves it as it is.
        run_ok(ctx.chartkit().args(["create", "web"]));
        run_ok(ctx.chartkit().args(["package", "web"]));
    }
    // The getter's use: value files behind `secrets://` (not encrypted, so served as
    // they are; sops would decrypt them), for template, install and upgrade alike.
    for (_, ctx) in pair.contexts() {
        write_file(ctx.dir(), "secret-values.yaml", "replicaCount: 7\n");
    }
    let rendered = pair.same(
        &[
            "template",
            "rel",
            "./web",
            "-f",
            "secrets://secret-values.yaml",
        ],
        all_lines,
    );
    assert!(
        stdout(&rendered).contains("replicas: 7"),
        "{}",
        stdout(&rendered)
    );
    let missing = pair.same(
        &["template", "rel", "./web", "-f", "secrets://missing.yaml"],
        all_lines,
    );
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains(
            "Error: plugin \"secrets-getter\" failed to fetch secrets://missing.yaml: it exited with status 1: [helm-secrets] File does not exist: missing.yaml"
        ),
        "{}",
        stderr(&missing)
    );

    // sops is not installed: the default backend fails the same way in both tools.
    let failed = pair.same(&["secrets", "decrypt", "values.yaml"], all_lines);
    assert_eq!(failed.status.code(), Some(1));
    for (how, ctx) in pair.contexts() {
        let noop = |mut command: Command| {
            run_ok(
                command
                    .args(["secrets", "decrypt", "values.yaml"])
                    .env("HELM_SECRETS_BACKEND", "noop"),
            )
        };
        let ours = noop(ctx.chartkit());
        assert_eq!(stdout(&ours), "password: plain\n", "{how}");
        assert_eq!(
            stdout(&ours),
            stdout(&noop(ctx.helm_or_skip(NAME).unwrap())),
            "{how}"
        );

        // The getter: `secrets://PATH` pulled by both tools is the file itself.
        // With a host (`.`) and a path, as helm takes a URL for a package URL.
        let url = "secrets://./web-0.1.0.tgz";
        for (tool, mut command) in [
            ("chartkit", ctx.chartkit()),
            ("helm", ctx.helm_or_skip(NAME).unwrap()),
        ] {
            let dest = ctx.path(&format!("got-{tool}"));
            // helm pull does not create its destination.
            std::fs::create_dir_all(&dest).unwrap();
            run_ok(
                command
                    .args(["pull", url, "-d"])
                    .arg(&dest)
                    .env("HELM_SECRETS_BACKEND", "noop"),
            );
            assert_eq!(
                std::fs::read(dest.join("web-0.1.0.tgz")).unwrap(),
                std::fs::read(ctx.path("web-0.1.0.tgz")).unwrap(),
                "{how}: {tool}"
            );
        }
    }
}

/// A getter plugin `bad` serving `bad://` with the script `script`.
fn bad_getter(ctx: &TestContext, script: &str) -> PathBuf {
    let dir = ctx.path("src/bad");
    write_file(
        &dir,
        "plugin.yaml",
        "name: bad\nversion: 0.1.0\ndownloaders:\n- command: get.sh\n  protocols: [bad]\n",
    );
    let path = write_file(&dir, "get.sh", script);
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

#[test]
fn failing_getters_are_named_with_the_url_they_failed_on() {
    let ctx = TestContext::new();
    let Some(mut install) = ctx.helm_or_skip(NAME) else {
        return;
    };
    let dir = bad_getter(
        &ctx,
        "#!/bin/sh\ncase \"$4\" in\n  */index.yaml) echo 'entries: [not an index' ;;\n  *) echo 'no such chart in the bucket' >&2; exit 3 ;;\nesac\n",
    );
    run_ok(install.args(["plugin", "install"]).arg(&dir));

    // A non-zero exit: helm's status, the plugin, the URL and what it said.
    let url = "bad://bucket/web-1.0.0.tgz";
    let ours = ctx.run(&["pull", url]);
    let theirs = ctx
        .helm_or_skip(NAME)
        .unwrap()
        .args(["pull", url])
        .output()
        .unwrap();
    assert_eq!(ours.status.code(), theirs.status.code());
    assert_eq!(
        stderr(&ours),
        format!(
            "no such chart in the bucket\nError: plugin \"bad\" failed to fetch {url}: it exited with status 3: no such chart in the bucket\n"
        )
    );

    // Garbage for an index: named with the plugin, and nothing added.
    let added = ctx.run(&["repo", "add", "b", "bad://bucket"]);
    assert_eq!(added.status.code(), Some(1));
    let text = stderr(&added);
    assert!(
        text.contains("bad://bucket/index.yaml (as fetched by plugin \"bad\") does not hold a valid chart repository index"),
        "{text}"
    );
    let list = ctx.run(&["repo", "list"]);
    assert!(!stdout(&list).contains("bad://"), "{}", stdout(&list));

    // A scheme nobody serves: helm's words, then chartkit's hint.
    for args in [
        vec!["pull", "nope://h/web-1.0.0.tgz"],
        vec!["template", "rel", "nope://h/web-1.0.0.tgz"],
        vec!["repo", "add", "n", "nope://h"],
        vec!["pull", "web", "--repo", "nope://h"],
    ] {
        let ours = ctx.run(&args);
        let theirs = ctx
            .helm_or_skip(NAME)
            .unwrap()
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(ours.status.code(), theirs.status.code(), "{args:?}");
        let first = stderr(&ours).lines().next().unwrap_or_default().to_owned();
        assert_eq!(first, stderr(&theirs).trim_end(), "{args:?}");
        assert!(stderr(&ours).contains("hint: "), "{args:?}");
    }
}
