//! `chartkit dependency list|update|build` end to end, against `chartkit serve` and a
//! request-counting static server, and against helm: each tool accepts the other's
//! Chart.lock and the vendored charts render the same.

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

/// A repository directory with alpha 1.0.0/1.2.0/1.3.0-beta.1 and beta 0.1.0/0.2.0, and
/// its index.yaml.
fn repository(ctx: &TestContext) -> PathBuf {
    let repo = ctx.path("repo");
    for (name, version) in [
        ("alpha", "1.0.0"),
        ("alpha", "1.2.0"),
        ("alpha", "1.3.0-beta.1"),
        ("beta", "0.1.0"),
        ("beta", "0.2.0"),
    ] {
        let src = ctx.path(&format!("src/{name}-{version}"));
        write(
            &src.join("Chart.yaml"),
            &format!("apiVersion: v2\nname: {name}\nversion: {version}\n"),
        );
        write(&src.join("values.yaml"), "greeting: hello\n");
        write(
            &src.join("templates/cm.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-{{ .Chart.Name }}\ndata:\n  version: {{ .Chart.Version | quote }}\n  greeting: {{ .Values.greeting | quote }}\n",
        );
        ok(ctx.chartkit().arg("package").arg(&src).arg("-d").arg(&repo));
    }
    ok(ctx.chartkit().arg("repo").arg("index").arg(&repo));
    repo
}

/// The parent chart: alpha by repository name, beta by URL, and a local chart by path.
fn parent(ctx: &TestContext, url: &str) -> PathBuf {
    let dir = ctx.path("parent");
    write(
        &dir.join("Chart.yaml"),
        &format!(
            "apiVersion: v2\nname: parent\nversion: 0.1.0\ndependencies:\n- name: alpha\n  version: ^1.0.0\n  repository: \"@local\"\n  condition: alpha.enabled\n- name: beta\n  version: \">=0.1.0\"\n  repository: {url}\n  alias: b\n- name: sub\n  version: ~0.3\n  repository: file://../sub\n"
        ),
    );
    write(
        &dir.join("values.yaml"),
        "alpha:\n  greeting: from parent\n",
    );
    let sub = ctx.path("sub");
    write(
        &sub.join("Chart.yaml"),
        "apiVersion: v2\nname: sub\nversion: 0.3.1\n",
    );
    write(
        &sub.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-sub\n",
    );
    dir
}

/// Configures the repository `local` for chartkit (its settings file in helm's format).
fn configure(ctx: &TestContext, url: &str) {
    write(
        &ctx.path(".home/config/helm/repositories.yaml"),
        &format!(
            "apiVersion: \"\"\ngenerated: \"0001-01-01T00:00:00Z\"\nrepositories:\n- name: local\n  url: {url}\n"
        ),
    );
}

fn lock_of(chart: &Path) -> String {
    std::fs::read_to_string(chart.join("Chart.lock")).expect("Chart.lock")
}

fn without_generated(lock: &str) -> String {
    lock.lines()
        .filter(|l| !l.starts_with("generated:"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn charts_dir(chart: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(chart.join("charts"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn update_vendors_packages_and_writes_a_lock_with_helms_digest() {
    let ctx = TestContext::new();
    let repo = repository(&ctx);
    let server = ServeProcess::start(ctx.chartkit(), &[repo.to_str().unwrap()], ctx.dir());
    configure(&ctx, &server.url);
    let chart = parent(&ctx, &format!("{}/", server.url));
    // A stale archive of an old version is removed, as helm removes it.
    let stale = ctx.path("stale");
    write(
        &stale.join("Chart.yaml"),
        "apiVersion: v2\nname: alpha\nversion: 0.9.0\n",
    );
    ok(ctx
        .chartkit()
        .arg("package")
        .arg(&stale)
        .arg("-d")
        .arg(chart.join("charts")));
    let out = ok(ctx.chartkit().args(["dependency", "update"]).arg(&chart));
    assert!(stdout(&out).contains("Saving 3 charts"), "{}", stdout(&out));
    assert_eq!(
        charts_dir(&chart),
        ["alpha-1.2.0.tgz", "beta-0.2.0.tgz", "sub-0.3.1.tgz"]
    );
    let lock = lock_of(&chart);
    assert!(
        lock.starts_with(&format!(
            "dependencies:\n- name: alpha\n  repository: {0}\n  version: 1.2.0\n- name: beta\n  repository: {0}/\n  version: 0.2.0\n- name: sub\n  repository: file://../sub\n  version: 0.3.1\ndigest: sha256:",
            server.url
        )),
        "{lock}"
    );
    let Some(mut helm) = ctx.helm() else {
        chartkit_tests::skip(
            "update_vendors_packages_and_writes_a_lock_with_helms_digest",
            "helm is not installed (shared/tools/get-peers)",
        );
        return;
    };
    // helm, configured alike, resolves the same versions with the same digest.
    ok(helm.args(["repo", "add", "local", &server.url]));
    let twin = ctx.path("twin");
    std::fs::create_dir_all(&twin).unwrap();
    std::fs::copy(chart.join("Chart.yaml"), twin.join("Chart.yaml")).unwrap();
    ok(ctx
        .helm()
        .unwrap()
        .args(["dependency", "update"])
        .arg(&twin));
    assert_eq!(without_generated(&lock_of(&twin)), without_generated(&lock));
}

#[test]
fn each_tool_accepts_the_others_lock_and_the_charts_render_the_same() {
    let test = "each_tool_accepts_the_others_lock_and_the_charts_render_the_same";
    let ctx = TestContext::new();
    let Some(mut helm) = ctx.helm() else {
        chartkit_tests::skip(test, "helm is not installed (shared/tools/get-peers)");
        return;
    };
    let repo = repository(&ctx);
    let server = ServeProcess::start(ctx.chartkit(), &[repo.to_str().unwrap()], ctx.dir());
    configure(&ctx, &server.url);
    ok(helm.args(["repo", "add", "local", &server.url]));
    let chart = parent(&ctx, &server.url);

    // chartkit's lock, helm's build.
    ok(ctx.chartkit().args(["dependency", "update"]).arg(&chart));
    let ours = lock_of(&chart);
    std::fs::remove_dir_all(chart.join("charts")).unwrap();
    ok(ctx
        .helm()
        .unwrap()
        .args(["dependency", "build"])
        .arg(&chart));
    assert_eq!(
        lock_of(&chart),
        ours,
        "helm build must not rewrite the lock"
    );
    assert_eq!(
        charts_dir(&chart),
        ["alpha-1.2.0.tgz", "beta-0.2.0.tgz", "sub-0.3.1.tgz"]
    );
    let rendered = |tool: &mut Command| stdout(&ok(tool.args(["template", "rel"]).arg(&chart)));
    let helm_render = rendered(&mut ctx.helm().unwrap());
    assert_eq!(rendered(&mut ctx.chartkit()), helm_render);
    assert!(helm_render.contains("from parent"), "{helm_render}");

    // helm's lock, chartkit's build.
    std::fs::remove_dir_all(chart.join("charts")).unwrap();
    std::fs::remove_file(chart.join("Chart.lock")).unwrap();
    ok(ctx
        .helm()
        .unwrap()
        .args(["dependency", "update"])
        .arg(&chart));
    let helms = lock_of(&chart);
    assert_eq!(without_generated(&helms), without_generated(&ours));
    std::fs::remove_dir_all(chart.join("charts")).unwrap();
    ok(ctx.chartkit().args(["dependency", "build"]).arg(&chart));
    assert_eq!(lock_of(&chart), helms);
    assert_eq!(rendered(&mut ctx.chartkit()), helm_render);
}

#[test]
fn build_uses_the_cache_without_the_network() {
    let ctx = TestContext::new();
    let repo = repository(&ctx);
    let server = CountingServer::start(&repo);
    configure(&ctx, &server.url);
    let chart = parent(&ctx, &server.url);
    ok(ctx.chartkit().args(["dependency", "update"]).arg(&chart));
    assert!(!server.requests().is_empty());

    // Everything is cached: build makes no request at all, without being told.
    server.reset();
    std::fs::remove_dir_all(chart.join("charts")).unwrap();
    ok(ctx.chartkit().args(["dependency", "build"]).arg(&chart));
    assert_eq!(server.requests(), Vec::<String>::new());
    assert_eq!(
        charts_dir(&chart),
        ["alpha-1.2.0.tgz", "beta-0.2.0.tgz", "sub-0.3.1.tgz"]
    );

    // With the server gone, build still works; with --offline too.
    let url = server.url.clone();
    drop(server);
    std::fs::remove_dir_all(chart.join("charts")).unwrap();
    ok(ctx.chartkit().args(["dependency", "build"]).arg(&chart));
    std::fs::remove_dir_all(chart.join("charts")).unwrap();
    ok(ctx
        .chartkit()
        .args(["dependency", "build", "--offline"])
        .arg(&chart));
    assert_eq!(charts_dir(&chart).len(), 3, "{url}");
}

#[test]
fn offline_makes_no_request_and_names_what_is_missing() {
    let ctx = TestContext::new();
    let repo = repository(&ctx);
    let server = CountingServer::start(&repo);
    configure(&ctx, &server.url);
    let chart = parent(&ctx, &server.url);
    // Resolve once in another cache, so the chart has a lock but this cache is empty.
    ok(ctx
        .chartkit()
        .env("CHARTKIT_CACHE_HOME", ctx.path("other-cache"))
        .args(["dependency", "update"])
        .arg(&chart));
    std::fs::remove_dir_all(chart.join("charts")).unwrap();
    server.reset();
    for offline in [
        ctx.chartkit()
            .args(["dependency", "build", "--offline"])
            .arg(&chart)
            .output(),
        ctx.chartkit()
            .env("CHARTKIT_OFFLINE", "1")
            .args(["dependency", "build"])
            .arg(&chart)
            .output(),
    ] {
        let output = offline.unwrap();
        assert!(!output.status.success());
        let text = stderr(&output);
        assert!(
            text.contains("is not in the cache and chartkit is offline"),
            "{text}"
        );
        assert!(text.contains("repository \"local\""), "{text}");
        assert!(
            text.contains("chartkit dependency build")
                && text.contains("chartkit repo update local"),
            "{text}"
        );
    }
    assert_eq!(server.requests(), Vec::<String>::new());
    assert!(!chart.join("charts").join("alpha-1.2.0.tgz").exists());

    // The index is cached but a package is not: the message names the package.
    ok(ctx
        .chartkit()
        .args(["dependency", "update", "--skip-refresh"])
        .arg(&chart));
    let blobs = ctx.path(".home/cache/chartkit/content");
    std::fs::remove_dir_all(&blobs).unwrap();
    std::fs::remove_dir_all(chart.join("charts")).unwrap();
    server.reset();
    let output = ctx
        .chartkit()
        .args(["dependency", "build", "--offline"])
        .arg(&chart)
        .output()
        .unwrap();
    let text = stderr(&output);
    assert!(!output.status.success());
    assert!(
        text.contains("version 1.2.0") || text.contains("version 0.2.0"),
        "{text}"
    );
    assert!(text.contains("chartkit dependency build"), "{text}");
    assert_eq!(server.requests(), Vec::<String>::new());
}

#[test]
fn build_refuses_a_lock_out_of_sync_with_chart_yaml() {
    let ctx = TestContext::new();
    let repo = repository(&ctx);
    let server = CountingServer::start(&repo);
    configure(&ctx, &server.url);
    let chart = parent(&ctx, &server.url);
    ok(ctx.chartkit().args(["dependency", "update"]).arg(&chart));
    let yaml = std::fs::read_to_string(chart.join("Chart.yaml")).unwrap();
    write(&chart.join("Chart.yaml"), &yaml.replace("^1.0.0", "~1.0.0"));
    let output = ctx
        .chartkit()
        .args(["dependency", "build"])
        .arg(&chart)
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("Error: the lock file (Chart.lock) is out of sync with the dependencies file (Chart.yaml)"),
        "{}",
        stderr(&output)
    );
    // update resolves again and picks the version the new range allows.
    ok(ctx.chartkit().args(["dependency", "update"]).arg(&chart));
    assert!(lock_of(&chart).contains("version: 1.0.0"));
    assert!(charts_dir(&chart).contains(&"alpha-1.0.0.tgz".to_owned()));
    assert!(!charts_dir(&chart).contains(&"alpha-1.2.0.tgz".to_owned()));
}

#[test]
fn list_prints_helms_table() {
    let ctx = TestContext::new();
    let repo = repository(&ctx);
    let server = CountingServer::start(&repo);
    configure(&ctx, &server.url);
    let chart = parent(&ctx, &server.url);
    let before = stdout(&ok(ctx.chartkit().args(["dependency", "list"]).arg(&chart)));
    assert!(before.contains("alpha\t^1.0.0 \t@local"), "{before}");
    assert_eq!(before.matches("missing").count(), 3, "{before}");
    ok(ctx.chartkit().args(["dependency", "update"]).arg(&chart));
    let after = stdout(&ok(ctx.chartkit().args(["dependency", "list"]).arg(&chart)));
    assert_eq!(after.matches("\tok").count(), 3, "{after}");
    if let Some(mut helm) = ctx.helm() {
        let helms = stdout(&ok(helm.args(["dependency", "list"]).arg(&chart)));
        assert_eq!(after, helms);
    }
    assert!(server.requests().len() >= 2);
}

#[test]
fn template_and_package_update_dependencies_first() {
    let ctx = TestContext::new();
    let repo = repository(&ctx);
    let server = CountingServer::start(&repo);
    configure(&ctx, &server.url);
    let chart = parent(&ctx, &server.url);
    let missing = ctx
        .chartkit()
        .args(["template", "rel"])
        .arg(&chart)
        .output()
        .unwrap();
    assert!(!missing.status.success());
    let rendered = stdout(&ok(ctx
        .chartkit()
        .args(["template", "rel"])
        .arg(&chart)
        .arg("--dependency-update")));
    assert!(rendered.contains("rel-alpha"), "{rendered}");
    assert!(chart.join("Chart.lock").exists());
    std::fs::remove_dir_all(chart.join("charts")).unwrap();
    let out = ctx.path("out");
    ok(ctx
        .chartkit()
        .args(["package", "-u", "-d"])
        .arg(&out)
        .arg(&chart));
    assert!(out.join("parent-0.1.0.tgz").exists());
    assert_eq!(charts_dir(&chart).len(), 3);
}

/// An apiVersion v1 chart keeps its dependencies in requirements.yaml and gets a
/// requirements.lock; helm, configured alike, writes the same lock, and each tool builds
/// from the other's.
#[test]
fn a_v1_chart_uses_requirements_yaml_and_lock_like_helm() {
    let test = "a_v1_chart_uses_requirements_yaml_and_lock_like_helm";
    let ctx = TestContext::new();
    let repo = repository(&ctx);
    let server = ServeProcess::start(ctx.chartkit(), &[repo.to_str().unwrap()], ctx.dir());
    configure(&ctx, &server.url);
    let chart = ctx.path("old");
    write(
        &chart.join("Chart.yaml"),
        "apiVersion: v1\nname: old\nversion: 0.1.0\n",
    );
    write(
        &chart.join("requirements.yaml"),
        "dependencies:\n- name: alpha\n  version: ~1.0.0\n  repository: \"@local\"\n- name: beta\n  version: 0.1.0\n  repository: \"@local\"\n",
    );
    ok(ctx.chartkit().args(["dependency", "update"]).arg(&chart));
    assert!(!chart.join("Chart.lock").exists());
    let lock = std::fs::read_to_string(chart.join("requirements.lock")).unwrap();
    assert!(
        lock.starts_with(&format!(
            "dependencies:\n- name: alpha\n  repository: {0}\n  version: 1.0.0\n- name: beta\n  repository: {0}\n  version: 0.1.0\ndigest: sha256:",
            server.url
        )),
        "{lock}"
    );
    assert_eq!(charts_dir(&chart), ["alpha-1.0.0.tgz", "beta-0.1.0.tgz"]);

    // --verify needs a keyring, then a .prov for every package; these have none.
    let verify = |keyring: Option<&Path>| {
        let mut command = ctx.chartkit();
        command
            .args(["dependency", "update", "--verify"])
            .arg(&chart);
        if let Some(keyring) = keyring {
            command.arg("--keyring").arg(keyring);
        }
        command.output().unwrap()
    };
    let no_keyring = verify(None);
    assert!(!no_keyring.status.success());
    assert!(
        stderr(&no_keyring).contains("--keyring"),
        "{}",
        stderr(&no_keyring)
    );
    let keys = ctx.path("keys");
    ok(ctx
        .chartkit()
        .args([
            "key",
            "generate",
            "--name",
            "CI",
            "--email",
            "ci@example.com",
            "-o",
        ])
        .arg(&keys));
    let unsigned = verify(Some(&keys.join("public.asc")));
    assert!(!unsigned.status.success());
    assert!(stderr(&unsigned).contains(".prov"), "{}", stderr(&unsigned));
    assert_eq!(charts_dir(&chart), ["alpha-1.0.0.tgz", "beta-0.1.0.tgz"]);

    let Some(mut helm) = ctx.helm() else {
        chartkit_tests::skip(test, "helm is not installed (shared/tools/get-peers)");
        return;
    };
    ok(helm.args(["repo", "add", "local", &server.url]));
    let twin = ctx.path("twin");
    write(
        &twin.join("Chart.yaml"),
        "apiVersion: v1\nname: old\nversion: 0.1.0\n",
    );
    std::fs::copy(
        chart.join("requirements.yaml"),
        twin.join("requirements.yaml"),
    )
    .unwrap();
    ok(ctx
        .helm()
        .unwrap()
        .args(["dependency", "update"])
        .arg(&twin));
    let theirs = std::fs::read_to_string(twin.join("requirements.lock")).unwrap();
    assert_eq!(without_generated(&theirs), without_generated(&lock));
    // chartkit builds from helm's lock, with nothing to fetch.
    std::fs::remove_dir_all(twin.join("charts")).unwrap();
    ok(ctx.chartkit().args(["dependency", "build"]).arg(&twin));
    assert_eq!(charts_dir(&twin), ["alpha-1.0.0.tgz", "beta-0.1.0.tgz"]);
    let rendered =
        |tool: &mut Command, dir: &Path| stdout(&ok(tool.args(["template", "rel"]).arg(dir)));
    assert_eq!(
        rendered(&mut ctx.chartkit(), &twin),
        rendered(&mut ctx.helm().unwrap(), &chart)
    );
}
