//! Several charts in one command against a real registry (Debian's `docker-registry`):
//! `pull A B C` as helm's loop over its arguments prints and writes it (and stops at the
//! first failure as helm does), `push a.tgz b.tgz oci://...` giving the manifests helm's
//! pushes give, uploads without existence checks for small blobs; `registry login`
//! asking for what was not given; `--dependency-update` handing `--plain-http` to
//! `oci://` dependencies.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Output, Stdio};

use chartkit_tests::charts::{configmap_chart, package_into};
use chartkit_tests::registry::{RegistryOptions, RegistryProcess};
use chartkit_tests::sandbox::run_ok;
use chartkit_tests::{TestContext, peers, stderr, stdout};

fn files(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Charts `a`..`e` at 1.0.0 and 1.1.0, packaged by helm into `packages/`.
fn packages(ctx: &TestContext, helm: &dyn Fn() -> std::process::Command) -> Vec<PathBuf> {
    let mut packages = Vec::new();
    for name in ["a", "b", "c", "d", "e"] {
        for version in ["1.0.0", "1.1.0"] {
            let chart = configmap_chart(ctx, name, version);
            packages.push(package_into(&mut helm(), &chart, &ctx.path("packages")));
        }
    }
    packages
}

#[test]
fn pull_of_several_charts_prints_and_writes_what_helms_loop_does() {
    const NAME: &str = "pull_of_several_charts_prints_and_writes_what_helms_loop_does";
    let ctx = TestContext::new();
    let Some(registry) = RegistryProcess::start_or_skip(NAME, ctx.dir(), &Default::default())
    else {
        return;
    };
    let Some(_) = peers::helm_or_skip(NAME) else {
        return;
    };
    let helm = || ctx.helm().unwrap();
    for package in packages(&ctx, &helm) {
        run_ok(
            helm()
                .arg("push")
                .arg(&package)
                .args([&registry.oci("charts"), "--plain-http"]),
        );
    }
    let pull = |tool: &mut std::process::Command, charts: &[&str], dir: &str| -> Output {
        let dir = ctx.path(dir);
        std::fs::create_dir_all(&dir).unwrap();
        let references: Vec<String> = charts.iter().map(|c| registry.oci(c)).collect();
        tool.arg("pull")
            .args(&references)
            .args(["--version", "^1", "--plain-http", "-d"])
            .arg(dir)
            .output()
            .unwrap()
    };

    // Five charts, one of them twice: the same lines in the same order, the same files.
    let charts = [
        "charts/e", "charts/a", "charts/d", "charts/b", "charts/a", "charts/c",
    ];
    let ours = pull(&mut ctx.chartkit(), &charts, "ours");
    let theirs = pull(&mut helm(), &charts, "theirs");
    assert!(ours.status.success(), "{}", stderr(&ours));
    assert_eq!(stderr(&ours), stderr(&theirs));
    assert_eq!(stdout(&ours), stdout(&theirs));
    assert_eq!(stderr(&ours).matches("Pulled: ").count(), 6);
    assert!(
        stderr(&ours).starts_with(&format!("Pulled: {}/charts/e:1.1.0\n", registry.host)),
        "{}",
        stderr(&ours)
    );
    assert_eq!(files(&ctx.path("ours")), files(&ctx.path("theirs")));
    assert_eq!(files(&ctx.path("ours")).len(), 5);
    for file in files(&ctx.path("ours")) {
        assert_eq!(
            std::fs::read(ctx.path("ours").join(&file)).unwrap(),
            std::fs::read(ctx.path("packages").join(&file)).unwrap()
        );
    }

    // By digest, helm names the file after the reference (`NAME@sha256-HEX.tgz`).
    let digest = chartkit_tests::digest_line(&theirs); // charts/e's, pulled first
    let by_digest = |tool: &mut std::process::Command, dir: &str| -> Output {
        let dir = ctx.path(dir);
        std::fs::create_dir_all(&dir).unwrap();
        run_ok(
            tool.args(["pull", &registry.oci(&format!("charts/e@{digest}"))])
                .args(["--plain-http", "-d"])
                .arg(dir),
        )
    };
    let ours = by_digest(&mut ctx.chartkit(), "ours-digest");
    let theirs = by_digest(&mut helm(), "theirs-digest");
    assert_eq!(stderr(&ours), stderr(&theirs));
    assert_eq!(
        files(&ctx.path("ours-digest")),
        [format!("e@{}.tgz", digest.replace(':', "-"))]
    );
    assert_eq!(
        files(&ctx.path("ours-digest")),
        files(&ctx.path("theirs-digest"))
    );

    // A chart the registry does not have, in the middle: those before it are pulled and
    // written, those after it are not, and the command fails as helm's does.
    let charts = ["charts/b", "charts/nosuch", "charts/c"];
    let ours = pull(&mut ctx.chartkit(), &charts, "ours-failed");
    let theirs = pull(&mut helm(), &charts, "theirs-failed");
    assert_eq!(ours.status.code(), Some(1));
    assert_eq!(theirs.status.code(), Some(1));
    let pulled = |output: &Output| -> Vec<String> {
        (stderr(output).lines())
            .filter(|l| l.starts_with("Pulled: ") || l.starts_with("Digest: "))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(pulled(&ours), pulled(&theirs));
    assert_eq!(pulled(&ours).len(), 2);
    assert!(
        stderr(&ours).contains("Error: ") && stderr(&ours).contains("charts/nosuch"),
        "{}",
        stderr(&ours)
    );
    assert_eq!(files(&ctx.path("ours-failed")), ["b-1.1.0.tgz"]);
    assert_eq!(
        files(&ctx.path("ours-failed")),
        files(&ctx.path("theirs-failed"))
    );
}

#[test]
fn push_of_several_packages_gives_the_manifests_helm_pushes_give() {
    const NAME: &str = "push_of_several_packages_gives_the_manifests_helm_pushes_give";
    let ctx = TestContext::new();
    let Some(registry) = RegistryProcess::start_or_skip(NAME, ctx.dir(), &Default::default())
    else {
        return;
    };
    let Some(_) = peers::helm_or_skip(NAME) else {
        return;
    };
    let helm = || ctx.helm().unwrap();
    let packages = packages(&ctx, &helm);

    let mut expected = String::new();
    for package in &packages {
        let output = run_ok(
            helm()
                .arg("push")
                .arg(package)
                .args([&registry.oci("by-helm"), "--plain-http"]),
        );
        expected.push_str(&stderr(&output));
    }
    let before = registry.log().lines().count();
    let output = run_ok(
        ctx.chartkit()
            .arg("push")
            .args(&packages)
            .args([&registry.oci("by-chartkit"), "--plain-http"]),
    );
    // helm's lines for each package, in the order given, with helm's digests.
    assert_eq!(stderr(&output), expected.replace("by-helm", "by-chartkit"));
    assert_eq!(stderr(&output).matches("Pushed: ").count(), packages.len());

    // Small blobs are not asked for before they are sent: no HEAD. distribution 2.8
    // answers a monolithic POST by opening a session, so each blob is a POST and a PUT.
    let log = registry.log();
    let requests: Vec<&str> = (log.lines().skip(before))
        .filter(|l| l.contains("\"POST ") || l.contains("\"PUT ") || l.contains("\"HEAD "))
        .collect();
    assert!(
        !requests.iter().any(|l| l.contains("\"HEAD ")),
        "{requests:#?}"
    );
    assert_eq!(
        requests
            .iter()
            .filter(|l| l.contains("/manifests/"))
            .count(),
        packages.len()
    );

    // helm pulls what chartkit pushed.
    let out = ctx.path("helm-pulled");
    std::fs::create_dir_all(&out).unwrap();
    run_ok(
        helm()
            .args(["pull", &registry.oci("by-chartkit/c"), "--version", "1.0.0"])
            .args(["--plain-http", "-d"])
            .arg(&out),
    );
    assert_eq!(
        std::fs::read(out.join("c-1.0.0.tgz")).unwrap(),
        std::fs::read(ctx.path("packages/c-1.0.0.tgz")).unwrap()
    );

    // One package that is not there: the ones before it are pushed and reported, then
    // the error; a chart repository takes one package per push.
    let output = ctx
        .chartkit()
        .arg("push")
        .arg(&packages[0])
        .arg(ctx.path("packages/missing-1.0.0.tgz"))
        .args([&registry.oci("partial"), "--plain-http"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stderr(&output).matches("Pushed: ").count(), 1);
    assert!(
        stderr(&output).contains("missing-1.0.0.tgz: no such file"),
        "{}",
        stderr(&output)
    );
    let output = ctx
        .chartkit()
        .arg("push")
        .args(&packages[..2])
        .arg("http://127.0.0.1:9/")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("a chart repository takes one package per push"),
        "{}",
        stderr(&output)
    );
}

/// `registry login HOST` fed `answers` on stdin (a pipe, not a terminal).
fn login_answering(ctx: &TestContext, host: &str, extra: &[&str], answers: &str) -> Output {
    let mut child = ctx
        .chartkit()
        .args(["registry", "login", host, "--plain-http"])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(answers.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn registry_login_asks_for_the_username_and_password_it_was_not_given() {
    const NAME: &str = "registry_login_asks_for_the_username_and_password_it_was_not_given";
    let ctx = TestContext::new();
    let options = RegistryOptions {
        users: vec![("alice".into(), "wonderland".into())],
        ..RegistryOptions::default()
    };
    let Some(registry) = RegistryProcess::start_or_skip(NAME, ctx.dir(), &options) else {
        return;
    };
    let config = ctx.path(".home/config/helm/registry/config.json");

    // Both asked for, as helm asks (the password prompt followed by a line break).
    let output = login_answering(&ctx, &registry.host, &[], "alice\nwonderland\n");
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), "Username: Password: \n");
    assert_eq!(stderr(&output), "Login Succeeded\n");
    let stored = std::fs::read_to_string(&config).unwrap();
    // base64("alice:wonderland")
    assert!(stored.contains("YWxpY2U6d29uZGVybGFuZA=="), "{stored}");
    std::fs::remove_file(&config).unwrap();

    // -u given: only the password is asked for; a wrong one is refused, nothing stored.
    let output = login_answering(&ctx, &registry.host, &["-u", "alice"], "wrong\n");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout(&output), "Password: \n");
    assert!(
        stderr(&output).contains("refused the credentials"),
        "{}",
        stderr(&output)
    );
    assert!(!config.exists());
    // An empty answer, in helm's words.
    let output = login_answering(&ctx, &registry.host, &["-u", "alice"], "\n");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stderr(&output), "Error: password required\n");
}

#[test]
fn dependency_update_hands_plain_http_to_oci_dependencies() {
    const NAME: &str = "dependency_update_hands_plain_http_to_oci_dependencies";
    let ctx = TestContext::new();
    let Some(registry) = RegistryProcess::start_or_skip(NAME, ctx.dir(), &Default::default())
    else {
        return;
    };
    let library = configmap_chart(&ctx, "lib", "1.2.0");
    let package = package_into(&mut ctx.chartkit(), &library, &ctx.path("packages"));
    run_ok(
        ctx.chartkit()
            .arg("push")
            .arg(&package)
            .args([&registry.oci("deps"), "--plain-http"]),
    );
    let app = |dir: &str| {
        let chart = ctx.path(dir);
        std::fs::create_dir_all(chart.join("templates")).unwrap();
        std::fs::write(
            chart.join("Chart.yaml"),
            format!(
                "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- name: lib\n  version: ~1.2\n  repository: {}\n",
                registry.oci("deps")
            ),
        )
        .unwrap();
        chart
    };

    // template and install: without --plain-http the dependency is asked for over
    // https, which a plain-http registry cannot answer; with it, the update works.
    let chart = app("template-app");
    let output = ctx
        .chartkit()
        .args(["template", "t"])
        .arg(&chart)
        .arg("--dependency-update")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert!(!chart.join("charts/lib-1.2.0.tgz").exists());
    let output = run_ok(
        ctx.chartkit()
            .args(["template", "t"])
            .arg(&chart)
            .args(["--dependency-update", "--plain-http"]),
    );
    assert!(
        stdout(&output).contains("name: t-cm"),
        "{}",
        stdout(&output)
    );
    assert!(chart.join("charts/lib-1.2.0.tgz").exists());

    let chart = app("install-app");
    let output = run_ok(ctx.chartkit().args(["install", "i"]).arg(&chart).args([
        "--dependency-update",
        "--plain-http",
        "--dry-run=client",
    ]));
    assert!(
        stdout(&output).contains("name: i-cm"),
        "{}",
        stdout(&output)
    );
    assert!(chart.join("charts/lib-1.2.0.tgz").exists());
}
