//! `chartkit mirror`: a repository copied for an air-gapped network, served by
//! `chartkit serve` and used by helm with the original gone; re-runs copy only what is new.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use chartkit_tests::counting_server::CountingServer;
use chartkit_tests::server::ServeProcess;
use chartkit_tests::{TestContext, stderr, stdout};

fn ok(command: &mut Command) -> Output {
    let output = command.output().expect("run command");
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}{}",
        stdout(&output),
        stderr(&output)
    );
    output
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Packages chart `name` at `version` (with `extra` appended to Chart.yaml) into `repo`,
/// signed with the key in `keys` when given.
fn publish(
    ctx: &TestContext,
    repo: &Path,
    name: &str,
    version: &str,
    extra: &str,
    keys: Option<&Path>,
) {
    let src = ctx.path(&format!("src/{name}-{version}"));
    write(
        &src.join("Chart.yaml"),
        &format!("apiVersion: v2\nname: {name}\nversion: {version}\n{extra}"),
    );
    write(
        &src.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-{{ .Chart.Name }}\n",
    );
    if extra.contains("name: base") {
        // Vendored, as packaging requires; the mirror still follows Chart.yaml.
        let vendored = src.join("charts/base-1.0.0.tgz");
        std::fs::create_dir_all(vendored.parent().unwrap()).unwrap();
        std::fs::copy(ctx.path("libs/base-1.0.0.tgz"), vendored).unwrap();
    }
    let mut package = ctx.chartkit();
    package.arg("package").arg(&src).arg("-d").arg(repo);
    if let Some(keys) = keys {
        package
            .args(["--sign", "--key", "mirror@example.com", "--keyring"])
            .arg(keys.join("secret.asc"));
    }
    ok(&mut package);
}

fn configure(ctx: &TestContext, repos: &[(&str, &str)]) {
    let mut text =
        String::from("apiVersion: \"\"\ngenerated: \"0001-01-01T00:00:00Z\"\nrepositories:\n");
    for (name, url) in repos {
        text.push_str(&format!("- name: {name}\n  url: {url}\n"));
    }
    write(&ctx.path(".home/config/helm/repositories.yaml"), &text);
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

#[test]
fn mirror_serves_signed_packages_to_helm_with_the_original_stopped() {
    let test = "mirror_serves_signed_packages_to_helm_with_the_original_stopped";
    let ctx = TestContext::new();
    let keys = ctx.path("keys");
    ok(ctx
        .chartkit()
        .args([
            "key",
            "generate",
            "--name",
            "Mirror",
            "--email",
            "mirror@example.com",
            "-o",
        ])
        .arg(&keys));
    let origin_dir = ctx.path("origin");
    for version in ["1.0.0", "1.1.0", "2.0.0"] {
        publish(&ctx, &origin_dir, "web", version, "", Some(&keys));
    }
    let origin = ServeProcess::start(ctx.chartkit(), &[origin_dir.to_str().unwrap()], ctx.dir());
    configure(&ctx, &[("origin", &origin.url)]);
    let mirror_dir = ctx.path("mirror");
    let out = ok(ctx
        .chartkit()
        .args(["mirror", "origin/web", "--versions", "^1", "--to"])
        .arg(&mirror_dir));
    assert!(
        stdout(&out).contains("2 new package(s), 2 provenance file(s)"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        files(&mirror_dir),
        [
            "index.yaml",
            "web-1.0.0.tgz",
            "web-1.0.0.tgz.prov",
            "web-1.1.0.tgz",
            "web-1.1.0.tgz.prov"
        ]
    );
    // The mirror's index is what `repo index` writes for the directory.
    let index = std::fs::read_to_string(mirror_dir.join("index.yaml")).unwrap();
    assert!(index.contains("- web-1.1.0.tgz\n"), "{index}");
    origin.terminate();

    let served = ServeProcess::start(ctx.chartkit(), &[mirror_dir.to_str().unwrap()], ctx.dir());
    let Some(mut helm) = ctx.helm() else {
        chartkit_tests::skip(test, "helm is not installed (shared/tools/get-peers)");
        return;
    };
    ok(helm.args(["repo", "add", "mirrored", &served.url]));
    let pulled = ctx.path("pulled");
    std::fs::create_dir_all(&pulled).unwrap();
    ok(ctx
        .helm()
        .unwrap()
        .args([
            "pull",
            "mirrored/web",
            "--version",
            "^1",
            "--verify",
            "--keyring",
        ])
        .arg(keys.join("public.gpg"))
        .arg("-d")
        .arg(&pulled));
    assert!(pulled.join("web-1.1.0.tgz").exists());
    assert_eq!(
        std::fs::read(pulled.join("web-1.1.0.tgz")).unwrap(),
        std::fs::read(origin_dir.join("web-1.1.0.tgz")).unwrap()
    );
}

#[test]
fn rerun_copies_only_what_is_new_and_dependencies_come_along() {
    let ctx = TestContext::new();
    let libs_dir = ctx.path("libs");
    publish(&ctx, &libs_dir, "base", "1.0.0", "", None);
    publish(&ctx, &libs_dir, "base", "1.1.0", "", None);
    publish(&ctx, &libs_dir, "base", "2.0.0", "", None);
    ok(ctx.chartkit().arg("repo").arg("index").arg(&libs_dir));
    let libs = CountingServer::start(&libs_dir);

    let apps_dir = ctx.path("apps");
    // A dependency in another repository, named by URL (not configured).
    let needs_base = format!(
        "dependencies:\n- name: base\n  version: ~1.0\n  repository: {}\n",
        libs.url
    );
    publish(&ctx, &apps_dir, "app", "0.1.0", &needs_base, None);
    ok(ctx.chartkit().arg("repo").arg("index").arg(&apps_dir));
    let apps = CountingServer::start(&apps_dir);
    configure(&ctx, &[("apps", &apps.url)]);

    let mirror_dir = ctx.path("mirror");
    let mirror = || {
        ok(ctx
            .chartkit()
            .args(["mirror", "apps", "--with-dependencies", "--to"])
            .arg(&mirror_dir))
    };
    mirror();
    assert_eq!(
        files(&mirror_dir),
        ["app-0.1.0.tgz", "base-1.0.0.tgz", "index.yaml"]
    );
    assert!(libs.requests().contains(&"/base-1.0.0.tgz".to_owned()));

    // Nothing new: only the indexes are asked for.
    apps.reset();
    libs.reset();
    mirror();
    assert_eq!(apps.requests(), ["/index.yaml"]);
    assert_eq!(libs.requests(), ["/index.yaml"]);

    // A new version: it alone is downloaded (its .prov asked for, absent).
    publish(&ctx, &apps_dir, "app", "0.2.0", &needs_base, None);
    ok(ctx.chartkit().arg("repo").arg("index").arg(&apps_dir));
    apps.reset();
    libs.reset();
    let out = mirror();
    assert!(
        stdout(&out).contains("1 new package(s)"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        apps.requests(),
        ["/index.yaml", "/app-0.2.0.tgz", "/app-0.2.0.tgz.prov"]
    );
    assert_eq!(libs.requests(), ["/index.yaml"]);
    let index = std::fs::read_to_string(mirror_dir.join("index.yaml")).unwrap();
    assert!(
        index.contains("version: 0.2.0") && index.contains("name: base"),
        "{index}"
    );
    let _: PathBuf = mirror_dir;
}
