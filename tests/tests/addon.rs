//! KubeVela addons in chart repositories: an addon directory packs into a package that
//! helm reads as a chart, its index passes `helm repo add`/`helm search repo`, and
//! `chartkit addon resolve` picks dependency versions or explains why it cannot.

use std::io::Read;
use std::process::{Command, Output};

use chartkit_tests::server::ServeProcess;
use chartkit_tests::{TestContext, stderr, stdout};

fn run_ok(command: &mut Command) -> String {
    let output = command.output().expect("run command");
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Writes an addon directory `NAME-VERSION/` with the files a KubeVela addon has.
/// `dependencies` are `(name, range)`, an empty range meaning any version.
fn write_addon(
    ctx: &TestContext,
    name: &str,
    version: &str,
    dependencies: &[(&str, &str)],
    kubernetes: Option<&str>,
) -> String {
    let dir_name = format!("src/{name}-{version}");
    let dir = ctx.path(&dir_name);
    std::fs::create_dir_all(dir.join("resources")).unwrap();
    std::fs::create_dir_all(dir.join("definitions")).unwrap();
    let mut meta = format!(
        "name: {name}\nversion: {version}\ndescription: The {name} addon\nicon: https://example.com/{name}.png\nurl: https://example.com/{name}\ntags:\n  - test\n"
    );
    if !dependencies.is_empty() {
        meta.push_str("dependencies:\n");
        for (dep, range) in dependencies {
            meta.push_str(&format!("  - name: {dep}\n"));
            if !range.is_empty() {
                meta.push_str(&format!("    version: \"{range}\"\n"));
            }
        }
    }
    if let Some(range) = kubernetes {
        meta.push_str(&format!("system:\n  kubernetes: \"{range}\"\n"));
    }
    meta.push_str("needNamespace:\n  - vela-system\ninvisible: false\n");
    std::fs::write(dir.join("metadata.yaml"), meta).unwrap();
    std::fs::write(dir.join("template.cue"), "output: {\n\ttype: \"raw\"\n}\n").unwrap();
    std::fs::write(dir.join("parameter.cue"), "parameter: {}\n").unwrap();
    std::fs::write(dir.join("README.md"), format!("# {name}\n")).unwrap();
    std::fs::write(
        dir.join("resources/config.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("definitions/trait.cue"),
        "\"my-trait\": {type: \"trait\"}\n",
    )
    .unwrap();
    dir_name
}

fn archive_file(package: &std::path::Path, entry: &str) -> Option<String> {
    let bytes = std::fs::read(package).unwrap();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(&bytes[..]));
    for file in archive.entries().unwrap() {
        let mut file = file.unwrap();
        if file.path().unwrap().to_string_lossy() == entry {
            let mut text = String::new();
            file.read_to_string(&mut text).unwrap();
            return Some(text);
        }
    }
    None
}

#[test]
fn addon_directory_packs_into_a_chart_helm_reads() {
    let ctx = TestContext::new();
    let dir = write_addon(
        &ctx,
        "velaux",
        "1.2.0",
        &[("fluxcd", ">=1.0.0"), ("terraform", "")],
        Some(">=1.20"),
    );
    let out = run_ok(ctx.chartkit().args(["package", &dir, "-d", "out"]));
    assert!(out.contains("velaux-1.2.0.tgz"), "{out}");
    let package = ctx.path("out/velaux-1.2.0.tgz");
    for file in [
        "metadata.yaml",
        "template.cue",
        "parameter.cue",
        "README.md",
        "resources/config.yaml",
        "definitions/trait.cue",
    ] {
        assert!(
            archive_file(&package, &format!("velaux/{file}")).is_some(),
            "{file} missing from the package"
        );
    }
    let chart_yaml = archive_file(&package, "velaux/Chart.yaml").expect("Chart.yaml packaged");
    assert_eq!(
        chart_yaml,
        "annotations:\n  addon.dependencies: '[{\"name\":\"fluxcd\",\"version\":\">=1.0.0\"},{\"name\":\"terraform\"}]'\n  addon.name: velaux\n  system.kubernetes: '>=1.20'\napiVersion: v2\nappVersion: 1.2.0\ndescription: The velaux addon\nhome: https://example.com/velaux\nicon: https://example.com/velaux.png\nkeywords:\n- test\nname: velaux\ntype: library\nversion: 1.2.0\n"
    );

    // chartkit lint reads the addon's metadata; a broken one is explained by line and field.
    let lint = ctx.run(&["lint", &dir]);
    assert!(lint.status.success(), "{}", stdout(&lint));
    std::fs::write(
        ctx.path(&format!("{dir}/metadata.yaml")),
        "name: velaux\nversion: 1.2.0\ndependencies:\n  - name: fluxcd\n    version: \">>1\"\n",
    )
    .unwrap();
    let lint = ctx.run(&["lint", &dir]);
    assert_eq!(lint.status.code(), Some(1));
    assert!(
        stdout(&lint).contains(
            "[ERROR] metadata.yaml: line 5: `dependencies[0].version`: invalid version range `>>1`"
        ),
        "{}",
        stdout(&lint)
    );
    let package_again = ctx.run(&["package", &dir, "-d", "out2"]);
    assert_eq!(package_again.status.code(), Some(1));
    assert!(
        stderr(&package_again).contains("metadata.yaml`: line 5: `dependencies[0].version`"),
        "{}",
        stderr(&package_again)
    );

    let Some(_) =
        chartkit_tests::peers::helm_or_skip("addon_directory_packs_into_a_chart_helm_reads")
    else {
        return;
    };
    let shown = run_ok(ctx.helm().unwrap().args(["show", "chart"]).arg(&package));
    assert!(shown.contains("addon.name: velaux"), "{shown}");
    assert!(shown.contains("system.kubernetes: '>=1.20'"), "{shown}");
    assert!(shown.contains("type: library"), "{shown}");
    let ours = run_ok(ctx.chartkit().args(["show", "chart"]).arg(&package));
    assert_eq!(ours, shown);
    // Helm finds no fault beyond the missing templates/ an addon never has.
    let lint = ctx
        .helm()
        .unwrap()
        .args(["lint"])
        .arg(&package)
        .output()
        .unwrap();
    assert!(lint.status.success(), "{}", stdout(&lint));
    assert!(!stdout(&lint).contains("[ERROR]"), "{}", stdout(&lint));
}

/// Packages addons into `repo/` and indexes it:
/// - a diamond: velaux → fluxcd, terraform → common, with ranges meeting at common 1.2.x;
/// - a cycle: cyc-a → cyc-b → cyc-a;
/// - needy → fluxcd ^2.0, which does not exist;
/// - bigkube, which needs Kubernetes 1.30.
fn addon_repo(ctx: &TestContext) -> std::path::PathBuf {
    let dirs = [
        write_addon(
            ctx,
            "velaux",
            "1.0.0",
            &[("fluxcd", "^1"), ("terraform", "^1")],
            None,
        ),
        write_addon(ctx, "velaux", "0.9.0", &[("fluxcd", "^1")], None),
        write_addon(ctx, "fluxcd", "1.0.0", &[("common", ">=1.1")], None),
        write_addon(
            ctx,
            "fluxcd",
            "1.1.0",
            &[("common", ">=1.1")],
            Some(">=1.18"),
        ),
        write_addon(ctx, "terraform", "1.0.0", &[("common", "<1.3")], None),
        write_addon(ctx, "common", "1.0.0", &[], None),
        write_addon(ctx, "common", "1.2.0", &[], None),
        write_addon(ctx, "common", "1.3.0", &[], None),
        write_addon(ctx, "cyc-a", "1.0.0", &[("cyc-b", "")], None),
        write_addon(ctx, "cyc-b", "1.0.0", &[("cyc-a", "^1")], None),
        write_addon(ctx, "needy", "1.0.0", &[("fluxcd", "^2.0")], None),
        write_addon(ctx, "bigkube", "1.0.0", &[], Some(">=1.30")),
    ];
    let mut package = ctx.chartkit();
    package.arg("package").args(&dirs).args(["-d", "repo"]);
    run_ok(&mut package);
    run_ok(ctx.chartkit().args(["repo", "index", "repo"]));
    ctx.path("repo")
}

fn resolve(ctx: &TestContext, args: &[&str]) -> Output {
    ctx.chartkit()
        .args(["addon", "resolve"])
        .args(args)
        .args(["--index", "repo/index.yaml"])
        .output()
        .unwrap()
}

#[test]
fn addon_resolve_picks_transitive_versions_and_explains_failures() {
    let ctx = TestContext::new();
    addon_repo(&ctx);

    // The diamond: the newest fluxcd, and the one common both sides accept.
    let out = resolve(&ctx, &["velaux", "-o", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let picked: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        picked,
        serde_json::json!([
            {"name": "velaux", "version": "1.0.0", "requiredBy": []},
            {"name": "fluxcd", "version": "1.1.0", "requiredBy": ["velaux 1.0.0"]},
            {"name": "terraform", "version": "1.0.0", "requiredBy": ["velaux 1.0.0"]},
            {"name": "common", "version": "1.2.0", "requiredBy": ["fluxcd 1.1.0", "terraform 1.0.0"]},
        ])
    );
    let table = resolve(&ctx, &["velaux", "--version", "<1"]);
    assert_eq!(
        stdout(&table),
        "NAME  \tVERSION\tREQUIRED BY\nvelaux\t0.9.0\nfluxcd\t1.1.0  \tvelaux 0.9.0\ncommon\t1.3.0  \tfluxcd 1.1.0\n"
    );
    // An old cluster: fluxcd 1.1.0 needs Kubernetes 1.18, so 1.0.0 is taken.
    let old = resolve(&ctx, &["velaux", "--kube-version", "v1.16.3", "-o", "json"]);
    let picked: serde_json::Value = serde_json::from_str(&stdout(&old)).unwrap();
    assert_eq!(picked[1]["version"], "1.0.0", "{picked}");

    let cycle = resolve(&ctx, &["cyc-a"]);
    assert_eq!(cycle.status.code(), Some(1));
    assert_eq!(
        stderr(&cycle),
        "Error: cannot resolve addon cyc-a: dependency cycle: cyc-b 1.0.0 -> cyc-a 1.0.0 -> cyc-b\n"
    );
    assert!(stdout(&cycle).is_empty());

    let needy = resolve(&ctx, &["needy"]);
    assert_eq!(needy.status.code(), Some(1));
    assert_eq!(
        stderr(&needy),
        "Error: cannot resolve addon needy: fluxcd ^2.0 required by needy 1.0.0, but only 1.0.0, 1.1.0 exist\n"
    );
    let bigkube = resolve(&ctx, &["bigkube", "--kube-version", "v1.28.0"]);
    assert_eq!(
        stderr(&bigkube),
        "Error: cannot resolve addon bigkube: addon bigkube 1.0.0 needs kubernetes >=1.30, have v1.28.0\n"
    );
    let missing = resolve(&ctx, &["velaux", "--version", "^3"]);
    assert_eq!(
        stderr(&missing),
        "Error: cannot resolve addon velaux ^3: velaux ^3 was asked for, but only 0.9.0, 1.0.0 exist\n"
    );
}

/// A plain static file server for `dir` on 127.0.0.1: answers GET with the file's bytes
/// or 404, one connection at a time, until the test process ends.
fn static_server(dir: std::path::PathBuf) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request = String::new();
            if reader.read_line(&mut request).is_err() {
                continue;
            }
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                    break;
                }
            }
            let path = request.split_whitespace().nth(1).unwrap_or("/");
            let name = path.trim_start_matches('/').split('?').next().unwrap_or("");
            let file = (!name.contains("..")).then(|| std::fs::read(dir.join(name)).ok());
            let _ = match file.flatten() {
                Some(body) => stream
                    .write_all(
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                            body.len()
                        )
                        .as_bytes(),
                    )
                    .and_then(|()| stream.write_all(&body)),
                None => stream.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                ),
            };
        }
    });
    url
}

fn search_names(search_json: &str) -> Vec<String> {
    let found: serde_json::Value = serde_json::from_str(search_json).unwrap();
    found
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["name"].as_str().unwrap(),
                e["version"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn addon_index_passes_helm_repo_add_and_search() {
    let ctx = TestContext::new();
    let repo = addon_repo(&ctx);
    let index = std::fs::read_to_string(repo.join("index.yaml")).unwrap();
    // Only keys Helm's and KubeVela's strict readers know at the top level.
    let top: Vec<&str> = index
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('-'))
        .filter_map(|l| l.split(':').next())
        .collect();
    assert_eq!(top, ["apiVersion", "entries", "generated"], "{index}");
    assert!(
        index.contains("      addon.dependencies: '[{\"name\":\"common\",\"version\":\"<1.3\"}]'"),
        "{index}"
    );
    assert!(
        index.contains("      system.kubernetes: '>=1.30'"),
        "{index}"
    );

    // `repo index`'s file from a plain static server, and `chartkit serve`'s own index.
    let static_url = static_server(repo.clone());
    let server = ServeProcess::start(ctx.chartkit(), &[repo.to_str().unwrap()], ctx.dir());
    for url in [&static_url, &server.url] {
        let out = run_ok(
            ctx.chartkit()
                .args(["addon", "resolve", "velaux", "--repo", url, "-o", "json"]),
        );
        let picked: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(picked[3]["name"], "common", "{url}");
        assert_eq!(picked[3]["version"], "1.2.0", "{url}");
    }
    // A repository added with `repo add` is named; its cached index is read, also offline.
    run_ok(ctx.chartkit().args(["repo", "add", "addons", &server.url]));
    for offline in [false, true] {
        let mut resolve = ctx.chartkit();
        resolve.args([
            "addon", "resolve", "velaux", "--repo", "addons", "-o", "json",
        ]);
        if offline {
            resolve.arg("--offline");
        }
        let picked: serde_json::Value = serde_json::from_str(&run_ok(&mut resolve)).unwrap();
        assert_eq!(picked[0]["name"], "velaux");
        assert_eq!(picked[3]["version"], "1.2.0");
    }
    let unknown = ctx
        .chartkit()
        .args(["addon", "resolve", "velaux", "--repo", "nope"])
        .output()
        .unwrap();
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("nope"));

    let Some(_) =
        chartkit_tests::peers::helm_or_skip("addon_index_passes_helm_repo_add_and_search")
    else {
        return;
    };
    for (name, url) in [("static", &static_url), ("served", &server.url)] {
        run_ok(ctx.helm().unwrap().args(["repo", "add", name, url]));
        let search = run_ok(ctx.helm().unwrap().args([
            "search",
            "repo",
            &format!("{name}/"),
            "--versions",
            "-o",
            "json",
        ]));
        let names = search_names(&search);
        assert_eq!(names.len(), 12, "{name}: {names:?}");
        assert!(names.contains(&format!("{name}/velaux 1.0.0")), "{names:?}");
        assert!(names.contains(&format!("{name}/common 1.3.0")), "{names:?}");
        let pulled = ctx.path(&format!("pulled-{name}"));
        std::fs::create_dir(&pulled).unwrap();
        run_ok(
            ctx.helm()
                .unwrap()
                .args(["pull", &format!("{name}/velaux"), "-d"])
                .arg(&pulled),
        );
        assert!(
            archive_file(&pulled.join("velaux-1.0.0.tgz"), "velaux/metadata.yaml").is_some(),
            "the package helm pulls from {name} carries the addon's files"
        );
    }
}
