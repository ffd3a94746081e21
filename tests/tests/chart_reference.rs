//! Charts by reference in every command that takes one (`show`, `template`, `pull`,
//! `install`, `upgrade`, `diff upgrade`): a directory, a package, `REPO/NAME`, a package
//! URL and `NAME --repo URL`, with `--version` ranges, `--devel` and `--verify`, against
//! a static repository on 127.0.0.1, with helm 4.1.4 as the oracle where it runs.

use std::path::{Path, PathBuf};
use std::process::Command;

use chartkit_tests::counting_server::CountingServer;
use chartkit_tests::sandbox::{SandboxProcess, run_ok};
use chartkit_tests::{TestContext, stderr, stdout};

/// A repository directory with signed packages of `web` (1.2.0, 1.2.3, 2.0.0 and the
/// pre-release 2.1.0-rc.1), indexed, and the chart directory itself (at 0.9.0); returns
/// the repository, the chart directory and the binary public keyring (helm reads only
/// that form).
fn signed_repository(ctx: &TestContext) -> (PathBuf, PathBuf, PathBuf) {
    let keys = ctx.path("keys");
    run_ok(
        ctx.chartkit()
            .args(["key", "generate", "--name", "Repo Signer", "--email"])
            .arg("signer@example.com")
            .arg("-o")
            .arg(&keys),
    );
    run_ok(ctx.chartkit().args(["create", "web"]));
    let chart_yaml = ctx.path("web/Chart.yaml");
    let text = std::fs::read_to_string(&chart_yaml)
        .unwrap()
        .replace("version: 0.1.0", "version: 0.9.0");
    std::fs::write(&chart_yaml, text).unwrap();
    std::fs::write(ctx.path("web/README.md"), "# web\nThe web chart.\n").unwrap();
    let repo = ctx.path("repo");
    std::fs::create_dir_all(&repo).unwrap();
    for version in ["1.2.0", "1.2.3", "2.0.0", "2.1.0-rc.1"] {
        run_ok(
            ctx.chartkit()
                .args(["package", "web", "--version", version, "--sign"])
                .args(["--key", "signer@example.com", "--keyring"])
                .arg(keys.join("secret.asc"))
                .arg("-d")
                .arg(&repo),
        );
    }
    run_ok(ctx.chartkit().arg("repo").arg("index").arg(&repo));
    (repo, ctx.path("web"), keys.join("public.gpg"))
}

/// Each way of naming a chart, and the chart version it must give.
fn reference_forms(
    url: &str,
    repo: &Path,
    dir: &Path,
    keyring: &Path,
) -> Vec<(String, Vec<String>, &'static str)> {
    let owned = |args: &[&str]| args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
    let keyring = keyring.display().to_string();
    vec![
        ("directory".into(), vec![dir.display().to_string()], "0.9.0"),
        (
            "package".into(),
            vec![repo.join("web-1.2.0.tgz").display().to_string()],
            "1.2.0",
        ),
        ("REPO/NAME".into(), owned(&["st/web"]), "2.0.0"),
        (
            "REPO/NAME --version range".into(),
            owned(&["st/web", "--version", "^1.2"]),
            "1.2.3",
        ),
        (
            "REPO/NAME --devel".into(),
            owned(&["st/web", "--devel"]),
            "2.1.0-rc.1",
        ),
        (
            "package URL".into(),
            vec![format!("{url}/web-1.2.0.tgz")],
            "1.2.0",
        ),
        (
            "--repo URL NAME --version range".into(),
            vec![
                "web".into(),
                "--repo".into(),
                url.into(),
                "--version".into(),
                "~1.2.0".into(),
            ],
            "1.2.3",
        ),
        (
            "REPO/NAME --verify".into(),
            vec![
                "st/web".into(),
                "--version".into(),
                "1.2.0".into(),
                "--verify".into(),
                "--keyring".into(),
                keyring.clone(),
            ],
            "1.2.0",
        ),
        (
            "package --verify".into(),
            vec![
                repo.join("web-2.0.0.tgz").display().to_string(),
                "--verify".into(),
                "--keyring".into(),
                keyring,
            ],
            "2.0.0",
        ),
    ]
}

fn helm_or_skip(ctx: &TestContext, test: &str) -> Option<Command> {
    chartkit_tests::peers::helm_or_skip(test)?;
    ctx.helm()
}

#[test]
fn show_template_install_and_pull_take_every_reference_form_as_helm_does() {
    let test = "show_template_install_and_pull_take_every_reference_form_as_helm_does";
    let ctx = TestContext::new();
    let (repo, dir, keyring) = signed_repository(&ctx);
    let server = CountingServer::start(&repo);
    run_ok(ctx.chartkit().args(["repo", "add", "st", &server.url]));
    let helm_present = chartkit_tests::peers::helm().is_some();
    if !helm_present {
        helm_or_skip(&ctx, test);
    }
    for (form, args, version) in reference_forms(&server.url, &repo, &dir, &keyring) {
        let chart_line = format!("version: {version}\n");
        // show chart, values, readme, all.
        for part in ["chart", "values", "readme", "all"] {
            let ours = run_ok(ctx.chartkit().args(["show", part]).args(&args));
            if part == "chart" {
                assert!(
                    stdout(&ours).contains(&chart_line),
                    "{form}: {}",
                    stdout(&ours)
                );
            }
            if helm_present {
                let theirs = run_ok(ctx.helm().unwrap().args(["show", part]).args(&args));
                assert_eq!(stdout(&ours), stdout(&theirs), "show {part} of {form}");
            }
        }
        // template, with a release name and the chart.
        let label = format!("helm.sh/chart: web-{version}\n");
        let ours = run_ok(ctx.chartkit().args(["template", "rel"]).args(&args));
        assert!(stdout(&ours).contains(&label), "template {form}");
        if helm_present {
            let theirs = run_ok(ctx.helm().unwrap().args(["template", "rel"]).args(&args));
            assert_eq!(stdout(&ours), stdout(&theirs), "template {form}");
        }
        // install, rendered without a cluster.
        let installed = run_ok(
            ctx.chartkit()
                .args(["install", "rel"])
                .args(&args)
                .arg("--dry-run=client"),
        );
        assert!(stdout(&installed).contains(&label), "install {form}");
    }
    // pull writes the very package helm writes, for each repository form.
    let pulls: [(&[&str], &str); 4] = [
        (&["st/web", "--version", "^1.2"], "web-1.2.3.tgz"),
        (&["st/web", "--devel"], "web-2.1.0-rc.1.tgz"),
        (
            &["web", "--repo", &server.url, "--version", "1.2.0"],
            "web-1.2.0.tgz",
        ),
        (&[&format!("{}/web-2.0.0.tgz", server.url)], "web-2.0.0.tgz"),
    ];
    for (i, (args, file)) in pulls.iter().enumerate() {
        let ours = ctx.path(&format!("ours-{i}"));
        run_ok(ctx.chartkit().arg("pull").args(*args).arg("-d").arg(&ours));
        assert_eq!(
            std::fs::read(ours.join(file)).unwrap(),
            std::fs::read(repo.join(file)).unwrap(),
            "pull {args:?}"
        );
        if helm_present {
            // helm writes only into a directory that exists.
            let theirs = ctx.path(&format!("theirs-{i}"));
            std::fs::create_dir_all(&theirs).unwrap();
            run_ok(
                ctx.helm()
                    .unwrap()
                    .arg("pull")
                    .args(*args)
                    .arg("-d")
                    .arg(&theirs),
            );
            assert_eq!(
                std::fs::read(ours.join(file)).unwrap(),
                std::fs::read(theirs.join(file)).unwrap(),
                "pull {args:?} as helm"
            );
        }
    }
    let verified = run_ok(
        ctx.chartkit()
            .args([
                "pull",
                "st/web",
                "--version",
                "1.2.3",
                "--verify",
                "--keyring",
            ])
            .arg(&keyring)
            .arg("-d")
            .arg(ctx.path("verified")),
    );
    assert!(
        stdout(&verified).contains("Repo Signer"),
        "{}",
        stdout(&verified)
    );
    assert!(ctx.path("verified/web-1.2.3.tgz.prov").exists());
}

#[test]
fn a_tampered_repository_package_fails_verify_in_every_command() {
    let ctx = TestContext::new();
    let (repo, _, keyring) = signed_repository(&ctx);
    // Another key signs nothing here: verification against it must fail.
    run_ok(
        ctx.chartkit()
            .args([
                "key",
                "generate",
                "--name",
                "Stranger",
                "--email",
                "s@example.com",
            ])
            .arg("-o")
            .arg(ctx.path("stranger")),
    );
    let server = CountingServer::start(&repo);
    run_ok(ctx.chartkit().args(["repo", "add", "st", &server.url]));
    let stranger = ctx.path("stranger/public.gpg").display().to_string();
    let keyring = keyring.display().to_string();
    let verify_with = |ring: &str| {
        vec!["st/web", "--version", "1.2.0", "--verify", "--keyring"]
            .into_iter()
            .map(str::to_owned)
            .chain([ring.to_owned()])
            .collect::<Vec<_>>()
    };
    for command in [
        &["show", "chart"][..],
        &["template", "rel"],
        &["install", "rel"],
    ] {
        let mut dry = vec![];
        if command[0] == "install" {
            dry.push("--dry-run=client");
        }
        let refused = ctx
            .chartkit()
            .args(command)
            .args(verify_with(&stranger))
            .args(&dry)
            .output()
            .unwrap();
        assert!(!refused.status.success(), "{command:?}");
        assert!(
            stderr(&refused).contains("openpgp: signature made by unknown entity"),
            "{command:?}: {}",
            stderr(&refused)
        );
        run_ok(
            ctx.chartkit()
                .args(command)
                .args(verify_with(&keyring))
                .args(&dry),
        );
    }
    // A chart directory cannot be verified, in helm's words.
    let unpacked = ctx
        .chartkit()
        .args(["template", "rel", "web", "--verify", "--keyring", &keyring])
        .output()
        .unwrap();
    assert!(stderr(&unpacked).contains("unpacked charts cannot be verified"));
}

#[test]
fn missing_paths_and_unknown_references_say_what_they_are() {
    let ctx = TestContext::new();
    let cases: [(&[&str], &str); 8] = [
        (
            &["install", "e1", "./no-such-dir", "--dry-run=client"],
            "path \"./no-such-dir\" not found: there is no chart directory or package there",
        ),
        (
            &["show", "values", "/no/such/chart.tgz"],
            "path \"/no/such/chart.tgz\" not found",
        ),
        (
            &["template", "x", "web"],
            "\"web\" is not a chart directory or package on disk, nor a chart in a repository",
        ),
        (
            &["show", "values", "myrepo/podinfo"],
            "no repository named \"myrepo\"",
        ),
        (
            &["show", "chart", "ftp://registry.example/web"],
            "Error: scheme \"ftp\" not supported",
        ),
        (
            &["show", "chart", "oci://registry.example/Web"],
            "invalid OCI reference \"oci://registry.example/Web\"",
        ),
        (
            &["push", "web", "http://127.0.0.1:9"],
            "`web` is not a chart package (NAME-VERSION.tgz)",
        ),
        (
            &["push", "./gone-1.0.0.tgz", "http://127.0.0.1:9"],
            "chart package `./gone-1.0.0.tgz` not found",
        ),
    ];
    for (args, expected) in cases {
        let output = ctx.run(args);
        assert!(!output.status.success(), "{args:?}");
        let text = stderr(&output);
        assert!(text.starts_with("Error: "), "{args:?}: {text}");
        assert!(text.contains(expected), "{args:?}: {text}");
        assert!(
            !text.contains("No such file or directory"),
            "{args:?}: {text}"
        );
        assert!(!text.contains("repo add ."), "{args:?}: {text}");
    }
    std::fs::create_dir_all(ctx.path("chart-dir")).unwrap();
    let dir = ctx.run(&["push", "chart-dir", "http://127.0.0.1:9"]);
    assert!(stderr(&dir).contains("is a directory; push takes a packaged chart"));
    assert!(stderr(&dir).contains("chartkit package chart-dir"));
}

#[test]
fn upgrade_and_diff_upgrade_take_repository_references() {
    let test = "upgrade_and_diff_upgrade_take_repository_references";
    let ctx = TestContext::new();
    let (repo, dir, keyring) = signed_repository(&ctx);
    let server = CountingServer::start(&repo);
    run_ok(ctx.chartkit().args(["repo", "add", "st", &server.url]));
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let chartkit = || sandbox.chartkit(&ctx);
    run_ok(chartkit().args(["install", "rel"]).arg(&dir));
    let steps: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["st/web".into(), "--version".into(), "^1.2".into()],
            "1.2.3",
        ),
        (
            vec![
                "web".into(),
                "--repo".into(),
                server.url.clone(),
                "--devel".into(),
            ],
            "2.1.0-rc.1",
        ),
        (vec![format!("{}/web-1.2.0.tgz", server.url)], "1.2.0"),
        (
            vec![
                "st/web".into(),
                "--version".into(),
                "2.0.0".into(),
                "--verify".into(),
                "--keyring".into(),
                keyring.display().to_string(),
            ],
            "2.0.0",
        ),
    ];
    for (args, version) in steps {
        // The diff names the chart label that changes, then the upgrade makes the change.
        let diff = run_ok(
            chartkit()
                .args(["diff", "upgrade", "rel"])
                .args(&args)
                .args(["--output", "diff", "--no-color"]),
        );
        let wanted = format!("helm.sh/chart: web-{version}");
        assert!(
            stdout(&diff)
                .lines()
                .any(|l| l.starts_with('+') && l.contains(&wanted)),
            "diff upgrade {args:?}:\n{}",
            stdout(&diff)
        );
        run_ok(chartkit().args(["upgrade", "rel"]).args(&args));
        let listed = run_ok(chartkit().args(["list", "-o", "json"]));
        assert!(
            stdout(&listed).contains(&format!("\"chart\":\"web-{version}\"")),
            "{}",
            stdout(&listed)
        );
        if let Some(mut helm) = sandbox.helm(&ctx, test) {
            let theirs = run_ok(helm.args(["list", "-o", "json"]));
            assert!(stdout(&theirs).contains(&format!("\"chart\":\"web-{version}\"")));
        }
    }
}
