//! `chartkit mirror` with OCI registries (Debian's `docker-registry`) on either side:
//! signed charts and their dependencies moved from index repositories into a registry
//! in one command, helm pulling, verifying and installing them from there, and back out
//! of the registry into a directory served as an index repository, following
//! dependencies that live in the registry. Errors leave the target as it was.

use std::path::{Path, PathBuf};
use std::process::Output;

use chartkit_tests::registry::{RegistryOptions, RegistryProcess};
use chartkit_tests::sandbox::{SandboxProcess, run_ok};
use chartkit_tests::server::ServeProcess;
use chartkit_tests::{TestContext, peers, stderr, stdout};

const USER: &str = "alice";
const PASSWORD: &str = "wonderland";

fn users() -> RegistryOptions {
    RegistryOptions {
        users: vec![(USER.into(), PASSWORD.into())],
        ..Default::default()
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Packages chart `name` at `version` (with `extra` appended to Chart.yaml and the
/// packages in `vendored` put in its charts/) into `out`, signed with the key in `keys`.
fn publish(
    ctx: &TestContext,
    out: &Path,
    name: &str,
    version: &str,
    extra: &str,
    vendored: &[&Path],
    keys: &Path,
) -> PathBuf {
    let src = ctx.path(&format!("src/{name}-{version}"));
    write(
        &src.join("Chart.yaml"),
        &format!(
            "apiVersion: v2\nname: {name}\nversion: {version}\ndescription: {name} for the mirror\n{extra}"
        ),
    );
    write(
        &src.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-{{ .Chart.Name }}\n",
    );
    for package in vendored {
        let target = src.join("charts").join(package.file_name().unwrap());
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(package, target).unwrap();
    }
    run_ok(
        ctx.chartkit()
            .arg("package")
            .arg(&src)
            .arg("-d")
            .arg(out)
            .args(["--sign", "--key", "mirror@example.com", "--keyring"])
            .arg(keys.join("secret.asc")),
    );
    out.join(format!("{name}-{version}.tgz"))
}

fn keys(ctx: &TestContext) -> PathBuf {
    let keys = ctx.path("keys");
    run_ok(
        ctx.chartkit()
            .args([
                "key",
                "generate",
                "--name",
                "Mirror",
                "--email",
                "mirror@example.com",
                "-o",
            ])
            .arg(&keys),
    );
    keys
}

fn configure(ctx: &TestContext, repos: &[(&str, &str)]) {
    let mut text =
        String::from("apiVersion: \"\"\ngenerated: \"0001-01-01T00:00:00Z\"\nrepositories:\n");
    for (name, url) in repos {
        text.push_str(&format!("- name: {name}\n  url: {url}\n"));
    }
    write(&ctx.path(".home/config/helm/repositories.yaml"), &text);
}

fn login(ctx: &TestContext, host: &str) {
    run_ok(ctx.chartkit().args([
        "registry",
        "login",
        host,
        "-u",
        USER,
        "-p",
        PASSWORD,
        "--plain-http",
    ]));
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn failed(output: &Output) -> String {
    assert_eq!(
        output.status.code(),
        Some(1),
        "expected a failure: {}{}",
        stdout(output),
        stderr(output)
    );
    stderr(output)
}

/// The repositories the registry stores (none before the first push).
fn stored_repositories(registry: &RegistryProcess) -> Vec<String> {
    let root = registry.dir.join("data/docker/registry/v2/repositories");
    let mut found = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_name() == "_manifests" {
                found.push(dir.strip_prefix(&root).unwrap().display().to_string());
            } else if path.is_dir() && !entry.file_name().to_string_lossy().starts_with('_') {
                stack.push(path);
            }
        }
    }
    found.sort();
    found
}

#[test]
fn mirror_moves_signed_charts_and_dependencies_into_a_registry_and_back() {
    const NAME: &str = "mirror_moves_signed_charts_and_dependencies_into_a_registry_and_back";
    let ctx = TestContext::new();
    let Some(registry) = RegistryProcess::start_or_skip(NAME, ctx.dir(), &users()) else {
        return;
    };
    let keys = keys(&ctx);
    // base in one index repository, app (which depends on it by URL) in another.
    let libs_dir = ctx.path("libs");
    let base = publish(&ctx, &libs_dir, "base", "1.0.0", "", &[], &keys);
    publish(&ctx, &libs_dir, "base", "2.0.0", "", &[], &keys);
    let libs = ServeProcess::start(ctx.chartkit(), &[libs_dir.to_str().unwrap()], ctx.dir());
    let apps_dir = ctx.path("apps");
    let needs_base = format!(
        "dependencies:\n- name: base\n  version: ~1.0\n  repository: {}\n",
        libs.url
    );
    let app = publish(
        &ctx,
        &apps_dir,
        "app",
        "0.1.0",
        &needs_base,
        &[&base],
        &keys,
    );
    let apps = ServeProcess::start(ctx.chartkit(), &[apps_dir.to_str().unwrap()], ctx.dir());
    configure(&ctx, &[("apps", &apps.url)]);
    login(&ctx, &registry.host);

    // Index repositories into the registry, in one command.
    let target = registry.oci("mirror");
    let mirror_in = || {
        run_ok(ctx.chartkit().args([
            "mirror",
            "apps",
            "--with-dependencies",
            "--to",
            &target,
            "--plain-http",
        ]))
    };
    let out = mirror_in();
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "Pushed {}/mirror/app:0.1.0 (sha256:",
            registry.host
        )) && text.contains(&format!(
            "Pushed {}/mirror/base:1.0.0 (sha256:",
            registry.host
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "Mirrored into {target}: 2 new chart(s), 2 provenance file(s), 0 already present"
        )),
        "{text}"
    );
    assert_eq!(
        stored_repositories(&registry),
        ["mirror/app", "mirror/base"]
    );
    // Again: the registry has each manifest already, nothing is pushed.
    let again = stdout(&mirror_in());
    assert!(
        again.contains("0 new chart(s), 0 provenance file(s), 2 already present")
            && !again.contains("Pushed"),
        "{again}"
    );

    // helm pulls the chart from the registry, verifies it with the .prov layer the
    // mirror pushed, and gets the original bytes; then installs it into a cluster.
    let Some(_) = peers::helm_or_skip(NAME) else {
        return;
    };
    let pulled = ctx.path("helm-pulled");
    std::fs::create_dir_all(&pulled).unwrap();
    let helm_pull = run_ok(
        ctx.helm()
            .unwrap()
            .args([
                "pull",
                &registry.oci("mirror/app"),
                "--version",
                "^0.1",
                "--plain-http",
                "--verify",
                "--keyring",
            ])
            .arg(keys.join("public.gpg"))
            .arg("-d")
            .arg(&pulled),
    );
    assert!(
        stdout(&helm_pull).contains("Signed by: Mirror"),
        "{}",
        stdout(&helm_pull)
    );
    assert_eq!(
        std::fs::read(pulled.join("app-0.1.0.tgz")).unwrap(),
        std::fs::read(&app).unwrap()
    );
    let sandbox = SandboxProcess::start(&ctx, &[]);
    run_ok(sandbox.helm(&ctx, NAME).unwrap().args([
        "install",
        "app",
        &registry.oci("mirror/app"),
        "--version",
        "0.1.0",
        "--plain-http",
    ]));
    let list = run_ok(
        sandbox
            .helm(&ctx, NAME)
            .unwrap()
            .args(["list", "-o", "json"]),
    );
    assert!(
        stdout(&list).contains("\"chart\":\"app-0.1.0\""),
        "{}",
        stdout(&list)
    );

    // A chart whose dependency lives in the registry, pushed there; the apps repository
    // goes away, so app can only come from the registry.
    let front_dir = ctx.path("front");
    let needs_app =
        format!("dependencies:\n- name: app\n  version: ^0.1\n  repository: {target}\n");
    let front = publish(
        &ctx,
        &front_dir,
        "front",
        "1.0.0",
        &needs_app,
        &[&app],
        &keys,
    );
    run_ok(
        ctx.chartkit()
            .arg("push")
            .arg(&front)
            .args([&registry.oci("shop"), "--plain-http"]),
    );
    apps.terminate();

    // The registry back out into a directory: front, app from the registry (its OCI
    // dependency), base from the index repository app names, each with its .prov.
    let back = ctx.path("back");
    let out = run_ok(
        ctx.chartkit()
            .args([
                "mirror",
                &registry.oci("shop/front"),
                "--with-dependencies",
                "--plain-http",
                "--to",
            ])
            .arg(&back),
    );
    assert!(
        stdout(&out).contains("3 new package(s), 3 provenance file(s), 0 already present"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        files(&back),
        [
            "app-0.1.0.tgz",
            "app-0.1.0.tgz.prov",
            "base-1.0.0.tgz",
            "base-1.0.0.tgz.prov",
            "front-1.0.0.tgz",
            "front-1.0.0.tgz.prov",
            "index.yaml"
        ]
    );
    for (file, original) in [("app-0.1.0.tgz", &app), ("front-1.0.0.tgz", &front)] {
        assert_eq!(
            std::fs::read(back.join(file)).unwrap(),
            std::fs::read(original).unwrap(),
            "{file}"
        );
    }
    libs.terminate();
    let served = ServeProcess::start(ctx.chartkit(), &[back.to_str().unwrap()], ctx.dir());
    run_ok(
        ctx.helm()
            .unwrap()
            .args(["repo", "add", "back", &served.url]),
    );
    let again = ctx.path("helm-again");
    std::fs::create_dir_all(&again).unwrap();
    run_ok(
        ctx.helm()
            .unwrap()
            .args(["pull", "back/app", "--verify", "--keyring"])
            .arg(keys.join("public.gpg"))
            .arg("-d")
            .arg(&again),
    );
    assert_eq!(
        std::fs::read(again.join("app-0.1.0.tgz")).unwrap(),
        std::fs::read(&app).unwrap()
    );
}

#[test]
fn mirror_errors_name_the_cause_and_leave_the_target_as_it_was() {
    const NAME: &str = "mirror_errors_name_the_cause_and_leave_the_target_as_it_was";
    let ctx = TestContext::new();
    let Some(registry) = RegistryProcess::start_or_skip(NAME, ctx.dir(), &users()) else {
        return;
    };
    let keys = keys(&ctx);
    let apps_dir = ctx.path("apps");
    publish(&ctx, &apps_dir, "app", "0.1.0", "", &[], &keys);
    let apps = ServeProcess::start(ctx.chartkit(), &[apps_dir.to_str().unwrap()], ctx.dir());
    configure(&ctx, &[("apps", &apps.url)]);
    let target = registry.oci("mirror");
    let mirror = |source: &str, to: &str| {
        ctx.chartkit()
            .args(["mirror", source, "--plain-http", "--to", to])
            .output()
            .unwrap()
    };

    // No login: the registry's refusal, before anything is fetched.
    let error = failed(&mirror("apps", &target));
    assert!(
        error.starts_with("Error: ")
            && error.contains(&format!(
                "{} refused the request without credentials",
                registry.host
            )),
        "{error}"
    );
    // A wrong password in helm's registry config.
    write(
        &ctx.path(".home/config/helm/registry/config.json"),
        &format!(
            "{{\"auths\":{{\"{}\":{{\"auth\":\"YWxpY2U6d3Jvbmc=\"}}}}}}",
            registry.host
        ),
    );
    let error = failed(&mirror("apps", &target));
    assert!(
        error.contains(&format!(
            "{} refused the credentials given for it",
            registry.host
        )),
        "{error}"
    );
    assert!(stored_repositories(&registry).is_empty());

    login(&ctx, &registry.host);
    // A repository that is not configured, a chart it does not have.
    let error = failed(&mirror("nosuch", &target));
    assert!(
        error.contains("nosuch") && error.contains("chartkit repo add nosuch"),
        "{error}"
    );
    let error = failed(&mirror("apps/missing", &target));
    assert!(error.contains("no chart named \"missing\""), "{error}");
    assert!(stored_repositories(&registry).is_empty());

    // A registry repository that does not exist: the directory is not even created.
    let dir = ctx.path("out");
    let error = failed(&mirror(&registry.oci("nothing/web"), dir.to_str().unwrap()));
    assert!(
        error.contains("nothing/web") && error.contains("not found"),
        "{error}"
    );
    assert!(!dir.exists());
    // A range no tag satisfies.
    run_ok(
        ctx.chartkit()
            .args(["mirror", "apps", "--plain-http", "--to", &target]),
    );
    let error = failed(
        &ctx.chartkit()
            .args([
                "mirror",
                &registry.oci("mirror/app"),
                "--versions",
                "^9",
                "--plain-http",
                "--to",
            ])
            .arg(&dir)
            .output()
            .unwrap(),
    );
    assert!(
        error.contains(&format!(
            "no version of app in oci://{}/mirror/app matches ^9",
            registry.host
        )),
        "{error}"
    );
    assert!(!dir.exists());
}

#[test]
fn mirror_takes_registry_credentials_as_flags_over_a_stored_login() {
    const NAME: &str = "mirror_takes_registry_credentials_as_flags_over_a_stored_login";
    let ctx = TestContext::new();
    let Some(registry) = RegistryProcess::start_or_skip(NAME, ctx.dir(), &users()) else {
        return;
    };
    let keys = keys(&ctx);
    let apps_dir = ctx.path("apps");
    publish(&ctx, &apps_dir, "app", "0.1.0", "", &[], &keys);
    let apps = ServeProcess::start(ctx.chartkit(), &[apps_dir.to_str().unwrap()], ctx.dir());
    configure(&ctx, &[("apps", &apps.url)]);
    // A wrong password stored by a login: the flags win over it, as pull's and push's do.
    write(
        &ctx.path(".home/config/helm/registry/config.json"),
        &format!(
            "{{\"auths\":{{\"{}\":{{\"auth\":\"YWxpY2U6d3Jvbmc=\"}}}}}}",
            registry.host
        ),
    );
    let mirror = |credentials: &[&str]| {
        ctx.chartkit()
            .args([
                "mirror",
                "apps",
                "--plain-http",
                "--to",
                &registry.oci("mirror"),
            ])
            .args(credentials)
            .output()
            .unwrap()
    };
    let error = failed(&mirror(&["--username", USER, "--password", "nope"]));
    assert!(
        error.contains(&format!(
            "{} refused the credentials given for it",
            registry.host
        )),
        "{error}"
    );
    assert!(stored_repositories(&registry).is_empty());
    let out = mirror(&["--username", USER, "--password", PASSWORD]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("1 new chart(s), 1 provenance file(s)"),
        "{}",
        stdout(&out)
    );
    assert_eq!(stored_repositories(&registry), ["mirror/app"]);
}
