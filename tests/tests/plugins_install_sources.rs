//! `plugin install` from a registry (`oci://`) and from a git repository, with helm 4 as
//! the oracle: the same artifact or repository installed by each tool gives the same
//! output, the same files and the same listing, and each tool's install is run and
//! removed by the other.
//!
//! Helm 4.1.4 has no command that pushes a plugin; publishers use `oras push
//! --artifact-type application/vnd.helm.plugin.v1+json`, which the registry helper
//! reproduces (an OCI image manifest, the empty config, tar layers titled
//! `NAME-VERSION.tgz` and `NAME-VERSION.tgz.prov`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use chartkit_tests::gpg::keyrings_or_skip;
use chartkit_tests::registry::{RegistryOptions, RegistryProcess, login};
use chartkit_tests::sandbox::{run_ok, write_file};
use chartkit_tests::{TestContext, stderr, stdout};

const NAME: &str = "plugins_install_sources";
const PLUGIN_TYPE: &str = "application/vnd.helm.plugin.v1+json";
const USER: &str = "alice";
const PASSWORD: &str = "wonderland";

fn plugins_dir(ctx: &TestContext) -> PathBuf {
    ctx.path(".home/data/helm/plugins")
}

fn failed(output: &Output) -> String {
    assert!(
        !output.status.success(),
        "expected a failure: {}{}",
        stdout(output),
        stderr(output)
    );
    stderr(output)
}

/// A Helm 3 plugin named `name` at `version`, whose command prints its version and
/// whose install hook says it ran.
fn plugin_source(dir: &Path, name: &str, version: &str) {
    write_file(
        dir,
        "plugin.yaml",
        &format!(
            "name: {name}\nversion: {version}\nusage: say the version\ndescription: says its version\ncommand: $HELM_PLUGIN_DIR/run.sh\nhooks:\n  install: echo \"installed hook of $HELM_PLUGIN_NAME\"\n"
        ),
    );
    let script = dir.join("run.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho \"{name} {version}: $*\"\n"),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// Every file under `dir` (relative path and bytes), `.git` left out: what a plugin
/// install put there.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let relative = path.strip_prefix(root).unwrap().display().to_string();
            if relative.ends_with(".git") {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.push((relative, std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    if dir.exists() {
        walk(dir, dir, &mut out);
    }
    out
}

#[test]
fn plugins_from_a_registry_install_with_both_tools() {
    let ctx = TestContext::new();
    if ctx.helm_or_skip(NAME).is_none()
        || keyrings_or_skip(&ctx, NAME, "Plug <plug@example.com>").is_none()
    {
        return;
    }
    let options = RegistryOptions {
        users: vec![(USER.into(), PASSWORD.into())],
        ..RegistryOptions::default()
    };
    let Some(registry) = RegistryProcess::start_or_skip(NAME, ctx.dir(), &options) else {
        return;
    };
    // A signed plugin, packaged by helm, pushed as a plugin artifact.
    plugin_source(&ctx.path("src/greet"), "greet", "0.3.0");
    run_ok(ctx.helm_or_skip(NAME).unwrap().args([
        "plugin",
        "package",
        "src/greet",
        "--sign",
        "--key",
        "plug@example.com",
        "--keyring",
        "secring.gpg",
        "-d",
        "pkg",
    ]));
    let tarball = std::fs::read(ctx.path("pkg/greet-0.3.0.tgz")).unwrap();
    let prov = std::fs::read(ctx.path("pkg/greet-0.3.0.tgz.prov")).unwrap();
    registry.push_artifact(
        "plugins/greet",
        "0.3.0",
        PLUGIN_TYPE,
        &[
            ("greet-0.3.0.tgz", &tarball),
            ("greet-0.3.0.tgz.prov", &prov),
        ],
        Some((USER, PASSWORD)),
    );
    let reference = registry.oci("plugins/greet:0.3.0");
    let install = |command: &mut Command, flags: &[&str]| -> Output {
        run_ok(
            command
                .args(["plugin", "install", &reference, "--plain-http"])
                .args(flags)
                .args(["--keyring", "pubring.gpg"]),
        )
    };

    // Without credentials the registry refuses, and the error names it.
    let refused = failed(
        &ctx.chartkit()
            .args(["plugin", "install", &reference, "--plain-http"])
            .args(["--keyring", "pubring.gpg"])
            .output()
            .unwrap(),
    );
    assert!(refused.contains(&registry.host), "{refused}");
    assert!(tree(&plugins_dir(&ctx)).is_empty());

    // chartkit with --username/--password (helm 4.1.4 accepts these flags but does not
    // send them; it needs `registry login`).
    let ours = install(
        &mut ctx.chartkit(),
        &["--username", USER, "--password", PASSWORD],
    );
    let our_files = tree(&plugins_dir(&ctx));
    let our_list = stdout(&run_ok(ctx.chartkit().args(["plugin", "list"])));
    assert_eq!(
        stdout(&run_ok(
            ctx.helm_or_skip(NAME).unwrap().args(["greet", "hi"])
        )),
        "greet 0.3.0: hi\n"
    );
    run_ok(
        ctx.helm_or_skip(NAME)
            .unwrap()
            .args(["plugin", "uninstall", "greet"]),
    );
    assert!(tree(&plugins_dir(&ctx)).is_empty());

    login(
        &mut ctx.helm_or_skip(NAME).unwrap(),
        &registry.host,
        USER,
        PASSWORD,
    );
    let theirs = install(&mut ctx.helm_or_skip(NAME).unwrap(), &[]);
    assert_eq!(stdout(&ours), stdout(&theirs));
    assert!(
        stdout(&ours).starts_with(
            "Verifying plugin signature...\nSigned by: Plug <plug@example.com>\nUsing Key With Fingerprint: "
        ),
        "{}",
        stdout(&ours)
    );
    assert!(
        stdout(&ours).ends_with("installed hook of greet\nInstalled plugin: greet\n"),
        "{}",
        stdout(&ours)
    );
    // The same files (the plugin, the kept tarball and .prov) and the same listing.
    assert_eq!(our_files, tree(&plugins_dir(&ctx)));
    assert!(
        our_files
            .iter()
            .any(|(path, _)| path == "greet-0.3.0.tgz.prov"),
        "{:?}",
        our_files.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    assert!(
        our_list.contains("greet\t0.3.0  \tcli/v1\tlegacy    \tsigned"),
        "{our_list}"
    );
    assert_eq!(
        our_list,
        stdout(&run_ok(
            ctx.helm_or_skip(NAME).unwrap().args(["plugin", "list"])
        ))
    );
    assert_eq!(
        stdout(&run_ok(ctx.chartkit().args(["greet", "there"]))),
        "greet 0.3.0: there\n"
    );
    run_ok(ctx.chartkit().args(["plugin", "uninstall", "greet"]));
    assert!(tree(&plugins_dir(&ctx)).is_empty());

    // The credentials helm's `registry login` stored serve chartkit too.
    assert_eq!(stdout(&install(&mut ctx.chartkit(), &[])), stdout(&ours));
    run_ok(ctx.chartkit().args(["plugin", "uninstall", "greet"]));

    // Without a provenance layer, both refuse to install unverified, and both install
    // with --verify=false.
    plugin_source(&ctx.path("src/bare"), "bare", "1.0.0");
    run_ok(ctx.helm_or_skip(NAME).unwrap().args([
        "plugin",
        "package",
        "src/bare",
        "--sign=false",
        "-d",
        "pkg",
    ]));
    let bare = std::fs::read(ctx.path("pkg/bare-1.0.0.tgz")).unwrap();
    registry.push_artifact(
        "plugins/bare",
        "1.0.0",
        PLUGIN_TYPE,
        &[("bare-1.0.0.tgz", &bare)],
        Some((USER, PASSWORD)),
    );
    let bare_ref = registry.oci("plugins/bare:1.0.0");
    for tool in [ctx.chartkit(), ctx.helm_or_skip(NAME).unwrap()] {
        let mut tool = tool;
        let error = failed(
            &tool
                .args(["plugin", "install", &bare_ref, "--plain-http"])
                .output()
                .unwrap(),
        );
        assert!(
            error.contains("plugin verification failed: no provenance file (.prov) found"),
            "{error}"
        );
    }
    assert!(tree(&plugins_dir(&ctx)).is_empty());
    let unverified = |mut tool: Command| {
        stdout(&run_ok(tool.args([
            "plugin",
            "install",
            &bare_ref,
            "--plain-http",
            "--verify=false",
        ])))
    };
    let ours = unverified(ctx.chartkit());
    let files = tree(&plugins_dir(&ctx));
    run_ok(ctx.chartkit().args(["plugin", "uninstall", "bare"]));
    assert_eq!(ours, unverified(ctx.helm_or_skip(NAME).unwrap()));
    assert_eq!(files, tree(&plugins_dir(&ctx)));
    run_ok(ctx.chartkit().args(["plugin", "uninstall", "bare"]));

    // A chart is not a plugin: both say which media type they expected.
    run_ok(ctx.helm_or_skip(NAME).unwrap().args(["create", "web"]));
    run_ok(
        ctx.helm_or_skip(NAME)
            .unwrap()
            .args(["package", "web", "-d", "pkg"]),
    );
    run_ok(ctx.helm_or_skip(NAME).unwrap().args([
        "push",
        "pkg/web-0.1.0.tgz",
        &registry.oci("plugins"),
        "--plain-http",
    ]));
    let chart_ref = registry.oci("plugins/web:0.1.0");
    for tool in [ctx.chartkit(), ctx.helm_or_skip(NAME).unwrap()] {
        let mut tool = tool;
        let error = failed(
            &tool
                .args([
                    "plugin",
                    "install",
                    &chart_ref,
                    "--plain-http",
                    "--verify=false",
                ])
                .output()
                .unwrap(),
        );
        assert!(
            error.contains("expected config media type application/vnd.helm.plugin.v1+json for legacy compatibility, got application/vnd.cncf.helm.config.v1+json"),
            "{error}"
        );
    }
    assert!(tree(&plugins_dir(&ctx)).is_empty());
}

/// A git repository with three states of one plugin: tag v1.0.0, tag v1.1.0, and an
/// untagged 1.2.0-dev at the head of `main`.
fn git_repository(ctx: &TestContext) -> Option<PathBuf> {
    let Some(git) = chartkit_tests::on_path("git") else {
        chartkit_tests::skip(NAME, "git is not installed");
        return None;
    };
    let dir = ctx.path("repos/gitplug");
    std::fs::create_dir_all(&dir).unwrap();
    let run = |args: &[&str]| {
        run_ok(
            Command::new(&git)
                .current_dir(&dir)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
                .args(args),
        );
    };
    run(&["init", "-q", "-b", "main"]);
    for (version, tag) in [
        ("1.0.0", Some("v1.0.0")),
        ("1.1.0", Some("v1.1.0")),
        ("1.2.0-dev", None),
    ] {
        plugin_source(&dir, "gitplug", version);
        run(&["add", "."]);
        run(&["commit", "-q", "-m", version]);
        if let Some(tag) = tag {
            run(&["tag", tag]);
        }
    }
    Some(dir)
}

#[test]
fn plugins_from_a_git_repository_install_with_both_tools_at_a_tag() {
    let ctx = TestContext::new();
    if ctx.helm_or_skip(NAME).is_none() {
        return;
    }
    let Some(repository) = git_repository(&ctx) else {
        return;
    };
    let url = format!("file://{}", repository.display());
    let installed = plugins_dir(&ctx).join("gitplug");

    // Without --verify=false both refuse: a repository has no signature.
    for tool in [ctx.chartkit(), ctx.helm_or_skip(NAME).unwrap()] {
        let mut tool = tool;
        let error = failed(&tool.args(["plugin", "install", &url]).output().unwrap());
        assert!(
            error.starts_with("Error: plugin source does not support verification. Use --verify=false to skip verification\n"),
            "{error}"
        );
    }
    assert!(!installed.exists());

    // The default branch, a tag, a range: each tool installs the same state (helm first,
    // chartkit after it on the clone helm left in the shared cache, then the reverse).
    for (version, expected) in [("", "1.2.0-dev"), ("v1.0.0", "1.0.0"), ("^1.0.0", "1.1.0")] {
        let install = |mut tool: Command| -> (String, Vec<(String, Vec<u8>)>, String) {
            let output = run_ok(tool.args([
                "plugin",
                "install",
                &url,
                "--verify=false",
                "--version",
                version,
            ]));
            let files = tree(&installed);
            let run = stdout(&run_ok(ctx.chartkit().args(["gitplug", "x"])));
            (stdout(&output), files, run)
        };
        let theirs = install(ctx.helm_or_skip(NAME).unwrap());
        assert_eq!(
            theirs.2,
            format!("gitplug {expected}: x\n"),
            "helm --version {version:?}"
        );
        run_ok(ctx.chartkit().args(["plugin", "uninstall", "gitplug"]));
        let ours = install(ctx.chartkit());
        assert_eq!(ours, theirs, "--version {version:?}");
        assert!(
            installed.join(".git").is_dir(),
            "a VCS install keeps its work tree"
        );
        run_ok(
            ctx.helm_or_skip(NAME)
                .unwrap()
                .args(["plugin", "uninstall", "gitplug"]),
        );
        assert!(!installed.exists());
    }
    assert_eq!(
        stdout(&run_ok(ctx.chartkit().args([
            "plugin",
            "install",
            &url,
            "--verify=false",
            "--version",
            "v1.0.0"
        ]))),
        "WARNING: Skipping plugin signature verification\ninstalled hook of gitplug\nInstalled plugin: gitplug\n"
    );
    run_ok(ctx.chartkit().args(["plugin", "uninstall", "gitplug"]));

    // A version nothing satisfies: both say so, and nothing is installed.
    for tool in [ctx.chartkit(), ctx.helm_or_skip(NAME).unwrap()] {
        let mut tool = tool;
        let error = failed(
            &tool
                .args([
                    "plugin",
                    "install",
                    &url,
                    "--verify=false",
                    "--version",
                    "^2",
                ])
                .output()
                .unwrap(),
        );
        assert!(
            error.contains(&format!(
                "requested version \"^2\" does not exist for plugin \"{url}\""
            )),
            "{error}"
        );
    }
    assert!(!installed.exists());

    // Without git on PATH, the error says what is missing.
    let empty = ctx.path("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let error = failed(
        &ctx.chartkit()
            .env("PATH", &empty)
            .args(["plugin", "install", &url, "--verify=false"])
            .output()
            .unwrap(),
    );
    assert!(error.contains("needs `git` on PATH"), "{error}");
    assert!(!installed.exists());
}
