//! Charts in OCI registries against a real registry (Debian's `docker-registry`, the CNCF
//! distribution registry) and the real helm both ways: helm pushes and chartkit pulls,
//! shows, templates and installs by range, tag and digest; errors name the reference and
//! leave nothing behind; a digest once pulled needs no network.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use chartkit_tests::charts::{configmap_chart, package_into};
use chartkit_tests::registry::{RegistryOptions, RegistryProcess};
use chartkit_tests::sandbox::{SandboxProcess, run_ok};
use chartkit_tests::{TestContext, peers, stderr, stdout};

const USER: &str = "alice";
const PASSWORD: &str = "wonderland";

fn users() -> RegistryOptions {
    RegistryOptions {
        users: vec![(USER.into(), PASSWORD.into())],
        ..RegistryOptions::default()
    }
}

fn failed(output: &Output) -> String {
    assert!(
        !output.status.success(),
        "expected a failure: {}{}",
        stdout(output),
        stderr(output)
    );
    assert_eq!(output.status.code(), Some(1));
    stderr(output)
}

#[test]
fn helm_pushes_and_chartkit_pulls_shows_and_templates_by_range_tag_and_digest() {
    const NAME: &str = "helm_pushes_and_chartkit_pulls_shows_and_templates_by_range_tag_and_digest";
    let ctx = TestContext::new();
    let Some(registry) = RegistryProcess::start_or_skip(NAME, ctx.dir(), &users()) else {
        return;
    };
    let Some(_) = peers::helm_or_skip(NAME) else {
        return;
    };
    let helm = || ctx.helm().unwrap();
    helm_login(&ctx, &registry.host, &["--plain-http"]);

    let packages = ctx.path("packages");
    let mut pushed = Vec::new();
    for version in ["0.1.0", "0.2.0", "0.3.0-rc.1", "1.0.0+build.7"] {
        let package = package_into(
            &mut helm(),
            &configmap_chart(&ctx, "web", version),
            &packages,
        );
        let output = run_ok(
            helm()
                .args(["push"])
                .arg(&package)
                .args([&registry.oci("charts"), "--plain-http"]),
        );
        pushed.push((version, package, chartkit_tests::digest_line(&output)));
    }

    // A range, resolved from the tags as helm resolves it: the newest stable version,
    // with build metadata sent as `_` in the tag.
    let out = ctx.path("pulled");
    let pull = run_ok(
        ctx.chartkit()
            .args(["pull", &registry.oci("charts/web"), "--plain-http", "-d"])
            .arg(&out),
    );
    let (_, package, digest) = &pushed[3];
    let helm_pull = run_ok(
        helm()
            .args(["pull", &registry.oci("charts/web"), "--plain-http"])
            .current_dir(ctx.path("packages")),
    );
    assert_eq!(stderr(&pull), stderr(&helm_pull));
    assert!(stderr(&pull).starts_with(&format!(
        "Pulled: {}/charts/web:1.0.0_build.7\nDigest: {digest}\n",
        registry.host
    )));
    assert_eq!(
        std::fs::read(out.join("web-1.0.0+build.7.tgz")).unwrap(),
        std::fs::read(package).unwrap()
    );
    let helm_out = ctx.path("helm-pulled");
    std::fs::create_dir_all(&helm_out).unwrap();
    run_ok(
        helm()
            .args(["pull", &registry.oci("charts/web"), "--plain-http", "-d"])
            .arg(&helm_out),
    );
    assert!(helm_out.join("web-1.0.0+build.7.tgz").exists());

    let ranged = run_ok(
        ctx.chartkit()
            .args([
                "pull",
                &registry.oci("charts/web"),
                "--version",
                "~0.1",
                "--plain-http",
                "-d",
            ])
            .arg(&out),
    );
    assert_eq!(chartkit_tests::digest_line(&ranged), pushed[0].2);
    // --prov with no provenance layer: helm's warning, and the package alone.
    let unsigned = ctx.path("unsigned");
    let prov = run_ok(
        ctx.chartkit()
            .args([
                "pull",
                &registry.oci("charts/web:0.1.0"),
                "--prov",
                "--plain-http",
                "-d",
            ])
            .arg(&unsigned),
    );
    assert!(
        stderr(&prov).contains("Verification not found for oci://"),
        "{}",
        stderr(&prov)
    );
    assert_eq!(std::fs::read_dir(&unsigned).unwrap().count(), 1);
    let devel = run_ok(
        ctx.chartkit()
            .args([
                "pull",
                &registry.oci("charts/web"),
                "--version",
                "^0.3.0-0",
                "--plain-http",
                "--untar",
                "-d",
            ])
            .arg(ctx.path("untarred")),
    );
    assert_eq!(chartkit_tests::digest_line(&devel), pushed[2].2);
    assert!(
        std::fs::read_to_string(ctx.path("untarred/web/Chart.yaml"))
            .unwrap()
            .contains("0.3.0-rc.1")
    );

    // A tag, and show/template as helm prints them.
    let tagged = registry.oci("charts/web:0.2.0");
    let ours = run_ok(
        ctx.chartkit()
            .args(["show", "chart", &tagged, "--plain-http"]),
    );
    let theirs = run_ok(helm().args(["show", "chart", &tagged, "--plain-http"]));
    assert_eq!(stdout(&ours), stdout(&theirs));
    let ours = run_ok(
        ctx.chartkit()
            .args(["template", "t", &tagged, "--plain-http"]),
    );
    let theirs = run_ok(helm().args(["template", "t", &tagged, "--plain-http"]));
    assert_eq!(stdout(&ours), stdout(&theirs));
    assert!(stdout(&ours).contains("version: \"0.2.0\""));

    // A digest: once cached, it is used with the registry gone.
    let by_digest = format!("{}@{}", registry.oci("charts/web"), pushed[1].2);
    let first = run_ok(
        ctx.chartkit()
            .args(["template", "t", &by_digest, "--plain-http"]),
    );
    assert_eq!(stdout(&first), stdout(&theirs));
    // A tag and a digest that disagree: the digest wins only if the tag agrees.
    let wrong = format!("{}:0.1.0@{}", registry.oci("charts/web"), pushed[1].2);
    let error = failed(
        &ctx.chartkit()
            .args(["template", "t", &wrong, "--plain-http"])
            .output()
            .unwrap(),
    );
    assert!(error.contains("digest mismatch"), "{error}");
    let repository = registry.oci("charts/web");
    registry.stop();
    let again = run_ok(
        ctx.chartkit()
            .args(["template", "t", &by_digest, "--plain-http"]),
    );
    assert_eq!(stdout(&again), stdout(&first));
    // --offline resolves a range from the tags last seen, and says how old they are.
    let offline = run_ok(ctx.chartkit().args([
        "show",
        "chart",
        "--offline",
        &repository,
        "--version",
        "~0.1",
        "--plain-http",
    ]));
    assert!(
        stdout(&offline).contains("version: 0.1.0"),
        "{}",
        stdout(&offline)
    );
    assert!(
        stderr(&offline).contains("resolved from what the registry said"),
        "{}",
        stderr(&offline)
    );
}

/// Pushes `web` 0.1.0 and 0.2.0 with helm, logged in; the packages and manifest digests.
fn helm_pushes(ctx: &TestContext, registry: &RegistryProcess) -> Vec<(PathBuf, String)> {
    helm_login(ctx, &registry.host, &["--plain-http"]);
    let packages = ctx.path("packages");
    ["0.1.0", "0.2.0"]
        .iter()
        .map(|version| {
            let package = package_into(
                &mut ctx.helm().unwrap(),
                &configmap_chart(ctx, "web", version),
                &packages,
            );
            let output = run_ok(
                ctx.helm()
                    .unwrap()
                    .arg("push")
                    .arg(&package)
                    .args([&registry.oci("charts"), "--plain-http"]),
            );
            (package, chartkit_tests::digest_line(&output))
        })
        .collect()
}

fn helm_login(ctx: &TestContext, host: &str, extra: &[&str]) {
    use std::io::Write;
    let mut login = ctx.helm().unwrap();
    login
        .args(["registry", "login", host, "-u", USER, "--password-stdin"])
        .args(extra)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = login.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(PASSWORD.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
}

#[test]
fn registry_errors_name_the_reference_and_leave_nothing_behind() {
    const NAME: &str = "registry_errors_name_the_reference_and_leave_nothing_behind";
    let ctx = TestContext::new();
    let Some(registry) = RegistryProcess::start_or_skip(NAME, ctx.dir(), &users()) else {
        return;
    };
    if peers::helm_or_skip(NAME).is_none() {
        return;
    }
    let pushed = helm_pushes(&ctx, &registry);
    let out = ctx.path("out");
    std::fs::create_dir_all(&out).unwrap();
    let pull = |reference: &str, extra: &[&str]| {
        ctx.chartkit()
            .args(["pull", reference, "--plain-http", "-d"])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap()
    };
    let host = &registry.host;

    let error = failed(&pull(
        &registry.oci("charts/web"),
        &["--username", USER, "--password", "wrong"],
    ));
    assert!(
        error.starts_with(&format!(
            "Error: {host} refused the credentials given for it"
        )),
        "{error}"
    );
    assert!(
        error.contains(&format!("chartkit registry login {host}")),
        "{error}"
    );

    // Without helm's login (another registry config), no credentials at all.
    let error = failed(&pull(
        &registry.oci("charts/web"),
        &["--registry-config", "/nonexistent/config.json"],
    ));
    assert!(
        error.starts_with(&format!(
            "Error: {host} refused the request without credentials"
        )),
        "{error}"
    );

    let error = failed(&pull(&registry.oci("charts/nothing"), &[]));
    assert!(
        error.starts_with(&format!(
            "Error: repository charts/nothing not found in {host}"
        )),
        "{error}"
    );
    let error = failed(&pull(&registry.oci("charts/web:9.9.9"), &[]));
    assert!(
        error.starts_with(&format!(
            "Error: manifest charts/web:9.9.9 not found in {host}"
        )),
        "{error}"
    );
    let error = failed(&pull(&registry.oci("charts/web"), &["--version", "^5"]));
    assert!(
        error.contains("could not locate a version matching provided version string ^5"),
        "{error}"
    );

    // A registry that serves other bytes than the manifest names: its stored chart
    // layer is changed behind its back.
    let layer = chartkit_tests::sha256_file(&pushed[1].0);
    let data = registry.dir.join(format!(
        "data/docker/registry/v2/blobs/sha256/{}/{layer}/data",
        &layer[..2]
    ));
    let mut bytes = std::fs::read(&data).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&data, &bytes).unwrap();
    let error = failed(&pull(&registry.oci("charts/web:0.2.0"), &[]));
    assert!(
        error.starts_with(&format!("Error: the chart from {host}/charts/web does not match its digest: expected sha256:{layer}")),
        "{error}"
    );
    assert_eq!(
        std::fs::read_dir(&out).unwrap().count(),
        0,
        "a failed pull wrote something"
    );
    let stored = ctx.path(&format!(
        ".home/cache/chartkit/content/sha256/{}/{layer}",
        &layer[..2]
    ));
    assert!(!stored.exists());
}

#[test]
fn chartkit_installs_and_upgrades_from_a_registry_and_helm_sees_the_release() {
    const NAME: &str = "chartkit_installs_and_upgrades_from_a_registry_and_helm_sees_the_release";
    let ctx = TestContext::new();
    let Some(registry) = RegistryProcess::start_or_skip(NAME, ctx.dir(), &users()) else {
        return;
    };
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.helm(&ctx, NAME).is_none() {
        return;
    }
    helm_pushes(&ctx, &registry);
    let chart = registry.oci("charts/web");
    run_ok(sandbox.chartkit(&ctx).args([
        "install",
        "web",
        &chart,
        "--version",
        "~0.1",
        "--plain-http",
        "-n",
        "apps",
        "--create-namespace",
    ]));
    let list = run_ok(
        sandbox
            .helm(&ctx, NAME)
            .unwrap()
            .args(["list", "-n", "apps", "-o", "json"]),
    );
    assert!(
        stdout(&list).contains("\"chart\":\"web-0.1.0\""),
        "{}",
        stdout(&list)
    );
    run_ok(sandbox.chartkit(&ctx).args([
        "upgrade",
        "--install",
        "web",
        &format!("{chart}:0.2.0"),
        "--plain-http",
        "-n",
        "apps",
    ]));
    let list = run_ok(
        sandbox
            .helm(&ctx, NAME)
            .unwrap()
            .args(["list", "-n", "apps", "-o", "json"]),
    );
    assert!(
        stdout(&list).contains("\"chart\":\"web-0.2.0\""),
        "{}",
        stdout(&list)
    );
    assert!(
        stdout(&list).contains("\"revision\":\"2\""),
        "{}",
        stdout(&list)
    );
    // diff upgrade reads the chart from the registry too, and shows the version going back.
    let diff = run_ok(sandbox.chartkit(&ctx).args([
        "diff",
        "upgrade",
        "web",
        &format!("{chart}:0.1.0"),
        "--plain-http",
        "-n",
        "apps",
    ]));
    assert!(
        stdout(&diff).contains("-   version: 0.2.0"),
        "{}",
        stdout(&diff)
    );
    assert!(
        stdout(&diff).contains("+   version: 0.1.0"),
        "{}",
        stdout(&diff)
    );
    // helm upgrades the same release from the same registry afterwards.
    run_ok(sandbox.helm(&ctx, NAME).unwrap().args([
        "upgrade",
        "web",
        &chart,
        "--version",
        "0.1.0",
        "--plain-http",
        "-n",
        "apps",
    ]));
}

#[test]
fn chartkit_pushes_what_helm_pushes_byte_for_byte_and_helm_pulls_verifies_and_installs_it() {
    const NAME: &str =
        "chartkit_pushes_what_helm_pushes_byte_for_byte_and_helm_pulls_verifies_and_installs_it";
    let ctx = TestContext::new();
    let Some(registry) = RegistryProcess::start_or_skip(NAME, ctx.dir(), &users()) else {
        return;
    };
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.helm(&ctx, NAME).is_none() {
        return;
    }
    helm_login(&ctx, &registry.host, &["--plain-http"]);
    // A signed package: its .prov beside it goes up as Helm's provenance layer.
    let keys = ctx.path("keys");
    run_ok(
        ctx.chartkit()
            .args([
                "key",
                "generate",
                "--name",
                "Oci Signer",
                "--email",
                "oci@example.com",
                "-o",
            ])
            .arg(&keys),
    );
    let out = ctx.path("out");
    run_ok(
        ctx.chartkit()
            .arg("package")
            .arg(configmap_chart(&ctx, "web", "1.2.3+meta"))
            .args(["--sign", "--key", "oci@example.com", "--keyring"])
            .arg(keys.join("secret.asc"))
            .arg("-d")
            .arg(&out),
    );
    let package = out.join("web-1.2.3+meta.tgz");
    assert!(out.join("web-1.2.3+meta.tgz.prov").exists());

    let ours = run_ok(ctx.chartkit().arg("push").arg(&package).args([
        &registry.oci("ck"),
        "--plain-http",
        "--username",
        USER,
        "--password",
        PASSWORD,
    ]));
    let theirs = run_ok(
        ctx.helm()
            .unwrap()
            .arg("push")
            .arg(&package)
            .args([&registry.oci("hm"), "--plain-http"]),
    );
    assert_eq!(
        chartkit_tests::digest_line(&ours),
        chartkit_tests::digest_line(&theirs)
    );
    assert_eq!(stdout(&ours), "");
    assert_eq!(
        stderr(&ours),
        stderr(&theirs).replace(
            &format!("{}/hm/", registry.host),
            &format!("{}/ck/", registry.host)
        )
    );
    assert!(
        stderr(&ours).contains("contains an underscore"),
        "{}",
        stderr(&ours)
    );
    // skopeo, a third client, reads the manifest chartkit stored: the bytes of the digest.
    match chartkit_tests::on_path("skopeo") {
        Some(skopeo) => {
            let raw = run_ok(Command::new(skopeo).args([
                "inspect",
                "--raw",
                "--tls-verify=false",
                "--creds",
                &format!("{USER}:{PASSWORD}"),
                &format!("docker://{}/ck/web:1.2.3_meta", registry.host),
            ]));
            use sha2::Digest;
            assert_eq!(
                format!("sha256:{}", hex::encode(sha2::Sha256::digest(&raw.stdout))),
                chartkit_tests::digest_line(&ours)
            );
        }
        None => chartkit_tests::skip(NAME, "skopeo is not installed"),
    }

    // helm pulls chartkit's push and verifies its provenance layer; chartkit verifies
    // helm's.
    let pulled = ctx.path("helm-pulled");
    std::fs::create_dir_all(&pulled).unwrap();
    let verified = run_ok(
        ctx.helm()
            .unwrap()
            .args([
                "pull",
                &registry.oci("ck/web"),
                "--version",
                "1.2.3+meta",
                "--plain-http",
                "--verify",
                "--keyring",
            ])
            .arg(keys.join("public.gpg"))
            .arg("-d")
            .arg(&pulled),
    );
    assert!(
        stdout(&verified).contains("Signed by: Oci Signer"),
        "{}",
        stdout(&verified)
    );
    assert_eq!(
        std::fs::read(pulled.join("web-1.2.3+meta.tgz")).unwrap(),
        std::fs::read(&package).unwrap()
    );
    let ours = run_ok(
        ctx.chartkit()
            .args([
                "pull",
                &registry.oci("hm/web"),
                "--plain-http",
                "--verify",
                "--keyring",
            ])
            .arg(keys.join("public.gpg"))
            .arg("-d")
            .arg(ctx.path("ours")),
    );
    assert!(
        stdout(&ours).contains("Signed by: Oci Signer"),
        "{}",
        stdout(&ours)
    );
    assert!(ctx.path("ours/web-1.2.3+meta.tgz").exists());

    // helm installs what chartkit pushed.
    run_ok(sandbox.helm(&ctx, NAME).unwrap().args([
        "install",
        "hw",
        &registry.oci("ck/web"),
        "--plain-http",
        "-n",
        "apps",
        "--create-namespace",
    ]));
    let list = run_ok(
        sandbox
            .helm(&ctx, NAME)
            .unwrap()
            .args(["list", "-n", "apps", "-o", "json"]),
    );
    assert!(
        stdout(&list).contains("\"chart\":\"web-1.2.3+meta\""),
        "{}",
        stdout(&list)
    );
}

/// `chartkit registry login`, password on stdin.
fn chartkit_login(ctx: &TestContext, host: &str, password: &str, extra: &[&str]) -> Output {
    use std::io::Write;
    let mut child = ctx
        .chartkit()
        .args(["registry", "login", host, "-u", USER, "--password-stdin"])
        .args(extra)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{password}\n").as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn logins_are_shared_with_helm_both_ways() {
    const NAME: &str = "logins_are_shared_with_helm_both_ways";
    let ctx = TestContext::new();
    let Some(registry) = RegistryProcess::start_or_skip(NAME, ctx.dir(), &users()) else {
        return;
    };
    if peers::helm_or_skip(NAME).is_none() {
        return;
    }
    let config = ctx.path(".home/config/helm/registry/config.json");
    let wrong = chartkit_login(&ctx, &registry.host, "wrong", &["--plain-http"]);
    let error = failed(&wrong);
    assert!(
        error.contains(&format!(
            "{} refused the credentials given for it",
            registry.host
        )),
        "{error}"
    );
    assert!(!config.exists(), "a refused login was stored");

    let ok = chartkit_login(&ctx, &registry.host, PASSWORD, &["--plain-http"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert_eq!(stderr(&ok), "Login Succeeded\n");
    let ours = std::fs::read_to_string(&config).unwrap();
    // helm writes the same file for the same login.
    std::fs::remove_file(&config).unwrap();
    helm_login(&ctx, &registry.host, &["--plain-http"]);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), ours);
    std::fs::write(&config, &ours).unwrap();

    // helm pushes with chartkit's login; chartkit logs out and helm is refused.
    let package = package_into(
        &mut ctx.helm().unwrap(),
        &configmap_chart(&ctx, "web", "0.1.0"),
        &ctx.path("packages"),
    );
    run_ok(
        ctx.helm()
            .unwrap()
            .arg("push")
            .arg(&package)
            .args([&registry.oci("charts"), "--plain-http"]),
    );
    let logout = run_ok(ctx.chartkit().args(["registry", "logout", &registry.host]));
    assert_eq!(
        stderr(&logout),
        format!("Removing login credentials for {}\n", registry.host)
    );
    let refused = ctx
        .helm()
        .unwrap()
        .args(["pull", &registry.oci("charts/web"), "--plain-http", "-d"])
        .arg(ctx.dir())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let error = failed(
        &ctx.chartkit()
            .args(["pull", &registry.oci("charts/web"), "--plain-http"])
            .output()
            .unwrap(),
    );
    assert!(error.contains("chartkit registry login"), "{error}");
}

#[test]
fn tls_registries_need_their_ca_or_insecure() {
    const NAME: &str = "tls_registries_need_their_ca_or_insecure";
    let ctx = TestContext::new();
    let options = RegistryOptions {
        tls: true,
        ..users()
    };
    let Some(registry) = RegistryProcess::start_or_skip(NAME, ctx.dir(), &options) else {
        return;
    };
    let ca = registry.ca_file.clone().unwrap();
    let ca = ca.to_str().unwrap();
    let error = failed(&chartkit_login(&ctx, &registry.host, PASSWORD, &[]));
    assert!(
        error.contains(&format!("cannot reach https://{}/v2/", registry.host)),
        "{error}"
    );
    let ok = chartkit_login(&ctx, &registry.host, PASSWORD, &["--ca-file", ca]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let ok = chartkit_login(&ctx, &registry.host, PASSWORD, &["--insecure"]);
    assert!(ok.status.success(), "{}", stderr(&ok));

    // chartkit pushes over TLS and pulls back, with the CA or skipping verification.
    let out = ctx.path("packages");
    run_ok(
        ctx.chartkit()
            .arg("package")
            .arg(configmap_chart(&ctx, "web", "0.1.0"))
            .arg("-d")
            .arg(&out),
    );
    let pushed = run_ok(
        ctx.chartkit()
            .arg("push")
            .arg(out.join("web-0.1.0.tgz"))
            .args([&registry.oci("charts"), "--ca-file", ca]),
    );
    let digest = chartkit_tests::digest_line(&pushed);
    let pulled = run_ok(ctx.chartkit().args([
        "show",
        "chart",
        &registry.oci("charts/web"),
        "--ca-file",
        ca,
    ]));
    assert!(stdout(&pulled).contains("name: web"));
    assert_eq!(chartkit_tests::digest_line(&pulled), digest);
    let insecure = run_ok(ctx.chartkit().args([
        "template",
        "x",
        &registry.oci("charts/web:0.1.0"),
        "--insecure-skip-tls-verify",
    ]));
    assert!(stdout(&insecure).contains("name: x-cm"));
    if let Some(helm) = peers::helm() {
        let mut helm = ctx.hermetic(&helm);
        let shown = run_ok(helm.args([
            "show",
            "chart",
            &registry.oci("charts/web"),
            "--ca-file",
            ca,
        ]));
        assert_eq!(stdout(&shown), stdout(&pulled));
    }
}

#[test]
fn oci_dependencies_lock_as_helm_locks_them_and_build_offline_after_the_registry_stops() {
    const NAME: &str =
        "oci_dependencies_lock_as_helm_locks_them_and_build_offline_after_the_registry_stops";
    let ctx = TestContext::new();
    let Some(registry) = RegistryProcess::start_or_skip(NAME, ctx.dir(), &users()) else {
        return;
    };
    if peers::helm_or_skip(NAME).is_none() {
        return;
    }
    let pushed = helm_pushes(&ctx, &registry);
    let parent = |dir: &str| {
        let path = ctx.path(dir);
        std::fs::create_dir_all(path.join("templates")).unwrap();
        std::fs::write(
            path.join("Chart.yaml"),
            format!(
                "apiVersion: v2\nname: parent\nversion: 1.0.0\ndependencies:\n  - name: web\n    version: \"~0.1\"\n    repository: {}\n",
                registry.oci("charts")
            ),
        )
        .unwrap();
        path
    };
    let (ours, theirs) = (parent("ours"), parent("theirs"));
    let helm_update = run_ok(
        ctx.helm()
            .unwrap()
            .args(["dependency", "update"])
            .arg(&theirs)
            .arg("--plain-http"),
    );
    let update = run_ok(
        ctx.chartkit()
            .args(["dependency", "update"])
            .arg(&ours)
            .arg("--plain-http"),
    );
    assert_eq!(stdout(&update), stdout(&helm_update));
    let lock = |dir: &Path| {
        let text = std::fs::read_to_string(dir.join("Chart.lock")).unwrap();
        text.lines()
            .filter(|l| !l.starts_with("generated:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(lock(&ours), lock(&theirs));
    assert!(lock(&ours).contains("version: 0.1.0"));
    let vendored = std::fs::read(ours.join("charts/web-0.1.0.tgz")).unwrap();
    assert_eq!(
        vendored,
        std::fs::read(theirs.join("charts/web-0.1.0.tgz")).unwrap()
    );
    assert_eq!(vendored, std::fs::read(&pushed[0].0).unwrap());

    // helm builds from chartkit's lock; chartkit builds from helm's, then offline once the
    // registry is gone.
    std::fs::remove_dir_all(theirs.join("charts")).unwrap();
    std::fs::copy(ours.join("Chart.lock"), theirs.join("Chart.lock")).unwrap();
    run_ok(
        ctx.helm()
            .unwrap()
            .args(["dependency", "build"])
            .arg(&theirs)
            .arg("--plain-http"),
    );
    assert!(theirs.join("charts/web-0.1.0.tgz").exists());
    registry.stop();
    std::fs::remove_dir_all(ours.join("charts")).unwrap();
    let offline = run_ok(
        ctx.chartkit()
            .args(["dependency", "build", "--offline"])
            .arg(&ours),
    );
    assert!(
        stdout(&offline).contains("Using cached web from repo"),
        "{}",
        stdout(&offline)
    );
    assert_eq!(
        std::fs::read(ours.join("charts/web-0.1.0.tgz")).unwrap(),
        vendored
    );
}

#[cfg(unix)]
#[test]
fn a_credential_helper_named_by_helms_config_keeps_the_login_for_both_tools() {
    use std::os::unix::fs::PermissionsExt;
    const NAME: &str = "a_credential_helper_named_by_helms_config_keeps_the_login_for_both_tools";
    let ctx = TestContext::new();
    let Some(registry) = RegistryProcess::start_or_skip(NAME, ctx.dir(), &users()) else {
        return;
    };
    if peers::helm_or_skip(NAME).is_none() {
        return;
    }
    // A docker-credential helper that keeps one login in a file, by the helpers' protocol.
    let bin = ctx.path("bin");
    let store = ctx.path("helper-store.json");
    std::fs::create_dir_all(&bin).unwrap();
    let helper = bin.join("docker-credential-testing");
    std::fs::write(
        &helper,
        format!(
            "#!/bin/sh\nstore='{}'\ncase \"$1\" in\n  store) cat > \"$store\" ;;\n  get) read host; if [ -f \"$store\" ]; then cat \"$store\"; else echo 'credentials not found in native keychain'; exit 1; fi ;;\n  erase) rm -f \"$store\" ;;\n  list) echo '{{}}' ;;\nesac\n",
            store.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = ctx.path(".home/config/helm/registry/config.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "{\"credsStore\": \"testing\"}").unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );

    let mut login = ctx.chartkit();
    login.env("PATH", &path).args([
        "registry",
        "login",
        &registry.host,
        "-u",
        USER,
        "-p",
        PASSWORD,
        "--plain-http",
    ]);
    let output = run_ok(&mut login);
    assert!(
        stderr(&output).ends_with("Login Succeeded\n"),
        "{}",
        stderr(&output)
    );
    let stored = std::fs::read_to_string(&store).unwrap();
    assert!(
        stored.contains(&format!("\"Secret\":\"{PASSWORD}\"")),
        "{stored}"
    );
    assert!(!std::fs::read_to_string(&config).unwrap().contains("auths"));

    // helm finds the login through the same helper, and so does chartkit.
    let package = package_into(
        &mut ctx.helm().unwrap(),
        &configmap_chart(&ctx, "web", "0.1.0"),
        &ctx.path("packages"),
    );
    run_ok(
        ctx.helm()
            .unwrap()
            .env("PATH", &path)
            .arg("push")
            .arg(&package)
            .args([&registry.oci("charts"), "--plain-http"]),
    );
    run_ok(ctx.chartkit().env("PATH", &path).args([
        "show",
        "chart",
        &registry.oci("charts/web"),
        "--plain-http",
    ]));
    run_ok(
        ctx.chartkit()
            .env("PATH", &path)
            .args(["registry", "logout", &registry.host]),
    );
    assert!(!store.exists());
}

#[test]
fn a_registry_behind_a_token_service_gets_one_token_per_scope() {
    const NAME: &str = "a_registry_behind_a_token_service_gets_one_token_per_scope";
    let ctx = TestContext::new();
    let options = RegistryOptions {
        token: true,
        ..users()
    };
    let Some(registry) = RegistryProcess::start_or_skip(NAME, ctx.dir(), &options) else {
        return;
    };
    let issued = registry.token_service.as_ref().unwrap().issued.clone();
    let error = failed(&chartkit_login(
        &ctx,
        &registry.host,
        "wrong",
        &["--plain-http"],
    ));
    assert!(
        error.contains("refused the credentials given for it"),
        "{error}"
    );
    let ok = chartkit_login(&ctx, &registry.host, PASSWORD, &["--plain-http"]);
    assert!(ok.status.success(), "{}", stderr(&ok));

    let out = ctx.path("packages");
    run_ok(
        ctx.chartkit()
            .arg("package")
            .arg(configmap_chart(&ctx, "web", "0.1.0"))
            .arg("-d")
            .arg(&out),
    );
    let before = issued.load(std::sync::atomic::Ordering::SeqCst);
    let pushed = run_ok(
        ctx.chartkit()
            .arg("push")
            .arg(out.join("web-0.1.0.tgz"))
            .args([&registry.oci("charts"), "--plain-http"]),
    );
    // Blob checks, uploads and the manifest, all under one push token.
    assert_eq!(issued.load(std::sync::atomic::Ordering::SeqCst) - before, 1);
    let before = issued.load(std::sync::atomic::Ordering::SeqCst);
    let pulled = run_ok(
        ctx.chartkit()
            .args(["pull", &registry.oci("charts/web"), "--plain-http", "-d"])
            .arg(ctx.path("pulled")),
    );
    assert_eq!(
        chartkit_tests::digest_line(&pulled),
        chartkit_tests::digest_line(&pushed)
    );
    // Tags, manifest, config and chart layer: one pull token.
    assert_eq!(issued.load(std::sync::atomic::Ordering::SeqCst) - before, 1);
    // Anonymous callers get pull tokens: a public repository.
    let anonymous = run_ok(ctx.chartkit().args([
        "show",
        "chart",
        &registry.oci("charts/web:0.1.0"),
        "--plain-http",
        "--registry-config",
        "/nonexistent/config.json",
    ]));
    assert!(stdout(&anonymous).contains("name: web"));
    if let Some(helm) = peers::helm() {
        let shown = run_ok(ctx.hermetic(&helm).args([
            "show",
            "chart",
            &registry.oci("charts/web:0.1.0"),
            "--plain-http",
        ]));
        assert_eq!(stdout(&shown), stdout(&anonymous));
    }
}

#[test]
fn every_chart_yaml_field_gives_helms_manifest_digest() {
    const NAME: &str = "every_chart_yaml_field_gives_helms_manifest_digest";
    let ctx = TestContext::new();
    let Some(registry) = RegistryProcess::start_or_skip(NAME, ctx.dir(), &users()) else {
        return;
    };
    if peers::helm_or_skip(NAME).is_none() {
        return;
    }
    helm_login(&ctx, &registry.host, &["--plain-http"]);
    // Every field of Chart.yaml, escapes Go's JSON makes, a dependency with import-values
    // and an alias, and chart annotations over (and not over) the OCI ones.
    let chart = ctx.path("rich");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::create_dir_all(chart.join("charts/sub")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: rich\nversion: 2.0.0-beta.1+build.9\nkubeVersion: \">=1.20.0-0\"\ndescription: \"Rich & <complete>\"\ntype: application\nkeywords: [a, b]\nhome: https://example.com\nsources: [https://s1, https://s2]\ndependencies:\n  - name: sub\n    version: \"~1.0\"\n    repository: \"https://charts.example.com\"\n    condition: sub.enabled\n    tags: [x]\n    import-values:\n      - child: a\n        parent: b\n      - data\n    alias: subby\nmaintainers:\n  - name: Ann\n    email: ann@example.com\n    url: https://ann\n  - name: Bob\nicon: https://icon\nappVersion: \"3.1\"\ndeprecated: true\nannotations:\n  org.opencontainers.image.title: nope\n  org.opencontainers.image.url: https://override\n  category: \"Db & <x>\"\n",
    )
    .unwrap();
    std::fs::write(
        chart.join("charts/sub/Chart.yaml"),
        "apiVersion: v2\nname: sub\nversion: 1.0.3\n",
    )
    .unwrap();
    let package = package_into(&mut ctx.helm().unwrap(), &chart, &ctx.path("out"));
    let theirs = run_ok(
        ctx.helm()
            .unwrap()
            .arg("push")
            .arg(&package)
            .args([&registry.oci("helm"), "--plain-http"]),
    );
    let ours = run_ok(
        ctx.chartkit()
            .arg("push")
            .arg(&package)
            .args([&registry.oci("chartkit"), "--plain-http"]),
    );
    assert_eq!(
        chartkit_tests::digest_line(&ours),
        chartkit_tests::digest_line(&theirs)
    );
}
