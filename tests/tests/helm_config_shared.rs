//! chartkit and helm share one repository configuration: helm's repositories.yaml and
//! index cache by default (or where HELM_REPOSITORY_CONFIG, HELM_REPOSITORY_CACHE,
//! --repository-config and --repository-cache say), so a repository added by either is
//! listed, updated, searched, pulled and installed from by both, and both can add
//! repositories at the same time. CHARTKIT_CONFIG_HOME keeps chartkit apart.

use std::path::PathBuf;
use std::process::Command;

use chartkit_tests::counting_server::CountingServer;
use chartkit_tests::sandbox::run_ok;
use chartkit_tests::{TestContext, stdout};

/// A repository directory with `web` 1.0.0 and 1.1.0 and `db` 3.0.0, indexed.
fn repository(ctx: &TestContext, name: &str) -> PathBuf {
    let repo = ctx.path(name);
    std::fs::create_dir_all(&repo).unwrap();
    for chart in ["web", "db"] {
        if !ctx.path(chart).exists() {
            run_ok(ctx.chartkit().args(["create", chart]));
        }
    }
    for (chart, version) in [("web", "1.0.0"), ("web", "1.1.0"), ("db", "3.0.0")] {
        run_ok(
            ctx.chartkit()
                .args(["package", chart, "--version", version, "-d"])
                .arg(&repo),
        );
    }
    run_ok(ctx.chartkit().arg("repo").arg("index").arg(&repo));
    repo
}

fn helm(ctx: &TestContext, test: &str) -> Option<Command> {
    chartkit_tests::peers::helm_or_skip(test)?;
    ctx.helm()
}

/// helm's default places in the hermetic context (XDG_CONFIG_HOME, XDG_CACHE_HOME).
fn helm_config(ctx: &TestContext) -> PathBuf {
    ctx.path(".home/config/helm/repositories.yaml")
}

fn helm_cache(ctx: &TestContext) -> PathBuf {
    ctx.path(".home/cache/helm/repository")
}

#[test]
fn a_repository_helm_added_is_used_by_chartkit_at_once() {
    let test = "a_repository_helm_added_is_used_by_chartkit_at_once";
    let ctx = TestContext::new();
    let repo = repository(&ctx, "repo");
    let server = CountingServer::start(&repo);
    let Some(mut add) = helm(&ctx, test) else {
        return;
    };
    run_ok(add.args(["repo", "add", "theirs", &server.url]));
    assert!(helm_cache(&ctx).join("theirs-index.yaml").exists());
    server.reset();
    // No `repo update`, no import: the list and the cached index are helm's.
    let listed = run_ok(ctx.chartkit().args(["repo", "list"]));
    assert!(
        stdout(&listed).contains(&format!("theirs\t{}", server.url)),
        "{}",
        stdout(&listed)
    );
    let theirs = run_ok(
        helm(&ctx, test)
            .unwrap()
            .args(["search", "repo", "theirs/", "-o", "json"]),
    );
    let ours = run_ok(
        ctx.chartkit()
            .args(["search", "repo", "theirs/", "-o", "json"]),
    );
    assert_eq!(stdout(&ours), stdout(&theirs));
    assert!(stdout(&ours).contains("\"name\":\"theirs/web\",\"version\":\"1.1.0\""));
    let shown = run_ok(
        ctx.chartkit()
            .args(["show", "chart", "theirs/web", "--version", "~1.0"]),
    );
    assert!(stdout(&shown).contains("version: 1.0.0\n"));
    run_ok(
        ctx.chartkit()
            .args(["pull", "theirs/db", "-d"])
            .arg(ctx.path("pulled")),
    );
    assert!(ctx.path("pulled/db-3.0.0.tgz").exists());
    let rendered = run_ok(
        ctx.chartkit()
            .args(["install", "r1", "theirs/web", "--dry-run=client"]),
    );
    assert!(stdout(&rendered).contains("helm.sh/chart: web-1.1.0"));
    assert!(
        !server.requests().iter().any(|r| r.contains("index.yaml")),
        "chartkit used helm's cached index without asking again: {:?}",
        server.requests()
    );
    // chartkit's update of helm's repository leaves files helm still reads.
    run_ok(ctx.chartkit().args(["repo", "update"]));
    assert!(server.requests().iter().any(|r| r.contains("index.yaml")));
    let after = run_ok(
        helm(&ctx, test)
            .unwrap()
            .args(["search", "repo", "theirs/", "-o", "json"]),
    );
    assert_eq!(stdout(&after), stdout(&theirs));
    run_ok(helm(&ctx, test).unwrap().args(["repo", "update"]));
    run_ok(ctx.chartkit().args(["show", "chart", "theirs/web"]));
}

#[test]
fn a_repository_chartkit_added_is_used_by_helm() {
    let test = "a_repository_chartkit_added_is_used_by_helm";
    let ctx = TestContext::new();
    let repo = repository(&ctx, "repo");
    let server = CountingServer::start(&repo);
    run_ok(ctx.chartkit().args(["repo", "add", "ours", &server.url]));
    // Written where helm looks, in helm's format, with helm's cache files.
    let config = std::fs::read_to_string(helm_config(&ctx)).unwrap();
    assert!(
        config.contains(&format!(
            "  name: ours\n  pass_credentials_all: false\n  password: \"\"\n  url: {}\n",
            server.url
        )),
        "{config}"
    );
    assert_eq!(
        std::fs::read_to_string(helm_cache(&ctx).join("ours-charts.txt")).unwrap(),
        "db\nweb\n"
    );
    assert!(helm_cache(&ctx).join("ours-index.yaml").exists());
    let Some(mut list) = helm(&ctx, test) else {
        return;
    };
    let listed = run_ok(list.args(["repo", "list", "-o", "json"]));
    assert_eq!(
        stdout(&listed),
        stdout(&run_ok(ctx.chartkit().args(["repo", "list", "-o", "json"])))
    );
    let theirs = run_ok(
        helm(&ctx, test)
            .unwrap()
            .args(["search", "repo", "ours/", "--versions"]),
    );
    assert!(
        stdout(&theirs).contains("ours/web\t1.0.0"),
        "{}",
        stdout(&theirs)
    );
    // helm writes only into a directory that exists.
    std::fs::create_dir_all(ctx.path("helm-pulled")).unwrap();
    run_ok(
        helm(&ctx, test)
            .unwrap()
            .args(["pull", "ours/web", "--version", "^1.0", "-d"])
            .arg(ctx.path("helm-pulled")),
    );
    assert!(ctx.path("helm-pulled/web-1.1.0.tgz").exists());
    let rendered =
        run_ok(
            helm(&ctx, test)
                .unwrap()
                .args(["install", "r1", "ours/db", "--dry-run=client"]),
        );
    assert!(stdout(&rendered).contains("helm.sh/chart: db-3.0.0"));
    run_ok(helm(&ctx, test).unwrap().args(["repo", "update", "ours"]));
    // Removed by chartkit: gone for helm too, with its cache files.
    run_ok(ctx.chartkit().args(["repo", "remove", "ours"]));
    let listed = helm(&ctx, test)
        .unwrap()
        .args(["repo", "list"])
        .output()
        .unwrap();
    assert!(!stdout(&listed).contains("ours"));
    assert!(!helm_cache(&ctx).join("ours-index.yaml").exists());
    assert!(!helm_cache(&ctx).join("ours-charts.txt").exists());
}

#[test]
fn helm_and_chartkit_add_repositories_at_the_same_time_and_none_is_lost() {
    let test = "helm_and_chartkit_add_repositories_at_the_same_time_and_none_is_lost";
    let ctx = TestContext::new();
    let repo = repository(&ctx, "repo");
    let server = CountingServer::start(&repo);
    let helm_present = helm(&ctx, test).is_some();
    let mut children = Vec::new();
    for i in 0..6 {
        let mut command = if helm_present && i % 2 == 1 {
            ctx.helm().unwrap()
        } else {
            ctx.chartkit()
        };
        command
            .args(["repo", "add", &format!("r{i}"), &server.url])
            .stdout(std::process::Stdio::null());
        children.push(command.spawn().unwrap());
    }
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let listed = stdout(&run_ok(ctx.chartkit().args(["repo", "list"])));
    for i in 0..6 {
        let name = format!("r{i}");
        assert!(
            listed
                .lines()
                .any(|l| l.split_whitespace().next() == Some(&name)),
            "{name} lost:\n{listed}"
        );
    }
    assert!(ctx.path(".home/config/helm/repositories.lock").exists());
}

#[test]
fn helms_variables_and_flags_move_the_shared_files() {
    let test = "helms_variables_and_flags_move_the_shared_files";
    let ctx = TestContext::new();
    let repo = repository(&ctx, "repo");
    let server = CountingServer::start(&repo);
    let (config, cache) = (ctx.path("team/repositories.yaml"), ctx.path("team/cache"));
    let with_env = |mut command: Command| {
        command
            .env("HELM_REPOSITORY_CONFIG", &config)
            .env("HELM_REPOSITORY_CACHE", &cache);
        command
    };
    run_ok(with_env(ctx.chartkit()).args(["repo", "add", "team", &server.url]));
    assert!(config.exists() && cache.join("team-index.yaml").exists());
    assert!(!helm_config(&ctx).exists());
    // The flags name the same files.
    let flags = |command: &mut Command| {
        command
            .arg("--repository-config")
            .arg(&config)
            .arg("--repository-cache")
            .arg(&cache);
    };
    let mut shown = ctx.chartkit();
    flags(&mut shown);
    run_ok(shown.args(["show", "chart", "team/db"]));
    if let Some(helm) = helm(&ctx, test) {
        let found = run_ok(with_env(helm).args(["search", "repo", "team/db"]));
        assert!(stdout(&found).contains("team/db"));
        let mut helm = ctx.helm().unwrap();
        flags(&mut helm);
        run_ok(helm.args(["show", "chart", "team/db"]));
    }
    // HELM_CONFIG_HOME and HELM_CACHE_HOME move helm's defaults, for both tools.
    run_ok(
        ctx.chartkit()
            .env("HELM_CONFIG_HOME", ctx.path("hch"))
            .env("HELM_CACHE_HOME", ctx.path("hca"))
            .args(["repo", "add", "moved", &server.url]),
    );
    assert!(ctx.path("hch/repositories.yaml").exists());
    assert!(ctx.path("hca/repository/moved-index.yaml").exists());
    // The registry configuration is accepted as helm takes it (for OCI registries).
    run_ok(
        ctx.chartkit()
            .arg("--registry-config")
            .arg(ctx.path("registry.json"))
            .args(["repo", "list"])
            .env("HELM_CONFIG_HOME", ctx.path("hch")),
    );
}

#[test]
fn chartkit_config_home_keeps_chartkit_apart_and_import_helm_copies_into_it() {
    let test = "chartkit_config_home_keeps_chartkit_apart_and_import_helm_copies_into_it";
    let ctx = TestContext::new();
    let repo = repository(&ctx, "repo");
    let server = CountingServer::start(&repo);
    run_ok(ctx.chartkit().args(["repo", "add", "shared", &server.url]));
    let apart = |mut command: Command| {
        command.env("CHARTKIT_CONFIG_HOME", ctx.path("apart"));
        command
    };
    let listed = apart(ctx.chartkit())
        .args(["repo", "list"])
        .output()
        .unwrap();
    assert!(!stdout(&listed).contains("shared"), "{}", stdout(&listed));
    run_ok(apart(ctx.chartkit()).args(["repo", "add", "own", &server.url]));
    assert!(ctx.path("apart/repositories.yaml").exists());
    // Its indexes go to chartkit's cache, not helm's.
    assert!(!helm_cache(&ctx).join("own-index.yaml").exists());
    assert!(
        ctx.path(".home/cache/chartkit/repository/own-index.yaml")
            .exists()
    );
    let imported = run_ok(apart(ctx.chartkit()).args(["repo", "import-helm"]));
    assert!(stdout(&imported).contains("\"shared\" has been added to your repositories"));
    let listed = stdout(&run_ok(apart(ctx.chartkit()).args(["repo", "list"])));
    assert!(
        listed.contains("shared") && listed.contains("own"),
        "{listed}"
    );
    // Without it, chartkit's list is helm's: there is nothing to import.
    let nothing = run_ok(ctx.chartkit().args(["repo", "import-helm"]));
    assert!(
        stdout(&nothing).contains("chartkit already uses Helm's repository list"),
        "{}",
        stdout(&nothing)
    );
    if let Some(mut helm) = helm(&ctx, test) {
        let theirs = stdout(&run_ok(helm.args(["repo", "list"])));
        assert!(
            theirs.contains("shared") && !theirs.contains("own"),
            "{theirs}"
        );
    }
}
