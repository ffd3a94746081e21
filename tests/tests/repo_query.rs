//! `chartkit repo query` keeps its parsed-index cache in chartkit's cache directory, as the
//! README says, and still answers when that directory cannot be used.

use chartkit_tests::{TestContext, stderr, stdout};

const INDEX: &str = "apiVersion: v1\nentries:\n  web:\n  - apiVersion: v2\n    appVersion: \"1.0\"\n    description: d\n    name: web\n    urls: [web-0.1.0.tgz]\n    version: 0.1.0\ngenerated: \"2024-01-01T00:00:00Z\"\n";
const ANSWER: &str =
    "[{\"name\":\"web\",\"version\":\"0.1.0\",\"app_version\":\"1.0\",\"description\":\"d\"}]\n";

fn cache_files(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_parsed_index_is_cached_in_the_cache_directory() {
    let context = TestContext::new();
    std::fs::create_dir_all(context.path("repo")).unwrap();
    std::fs::write(context.path("repo/index.yaml"), INDEX).unwrap();
    for _ in 0..2 {
        let output = context.run(&["repo", "query", "repo/index.yaml", "web"]);
        assert!(output.status.success(), "{}", stderr(&output));
        assert_eq!(stdout(&output), ANSWER);
        assert_eq!(stderr(&output), "");
    }
    assert_eq!(
        context.tree(),
        ["repo", "repo/index.yaml"],
        "nothing beside it"
    );
    // The hermetic context sets XDG_CACHE_HOME to .home/cache.
    let bucket = context.path(".home/cache/chartkit/index-v1");
    let files = cache_files(&bucket);
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].ends_with(".ckidx"), "{files:?}");

    // CHARTKIT_CACHE_HOME wins over XDG_CACHE_HOME.
    let output = context
        .chartkit()
        .env("CHARTKIT_CACHE_HOME", context.path(".home/mine"))
        .args(["repo", "query", "repo/index.yaml", "web"])
        .output()
        .unwrap();
    assert_eq!(stdout(&output), ANSWER);
    assert_eq!(cache_files(&context.path(".home/mine/index-v1")).len(), 1);
}

#[test]
fn an_unusable_cache_directory_only_warns() {
    let context = TestContext::new();
    std::fs::write(context.path("index.yaml"), INDEX).unwrap();
    std::fs::write(context.path("blocker"), "a file, not a directory").unwrap();
    let output = context
        .chartkit()
        .env("CHARTKIT_CACHE_HOME", context.path("blocker"))
        .args(["repo", "query", "index.yaml", "web"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), ANSWER);
    let warning = stderr(&output);
    assert!(
        warning.starts_with(
            "level=WARN msg=\"not caching the parsed index: cannot create the cache directory"
        ),
        "{warning}"
    );
    assert!(
        warning.contains("hint: set CHARTKIT_CACHE_HOME"),
        "{warning}"
    );
    // Without any cache directory at all (no HOME either) it still answers, silently.
    let output = context
        .chartkit()
        .env_remove("HOME")
        .env_remove("XDG_CACHE_HOME")
        .args(["repo", "query", "index.yaml", "web"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), ANSWER);
    assert_eq!(stderr(&output), "");
}

const SEARCH_INDEX: &str = r#"apiVersion: v1
entries:
  web:
  - apiVersion: v2
    appVersion: ""
    description: A very long description that goes well beyond fifty characters for the table
    name: web
    urls: [web-1.0.0.tgz]
    version: 1.0.0
  - apiVersion: v2
    appVersion: "1.16.0"
    description: A very long description that goes well beyond fifty characters for the table
    name: web
    urls: [web-0.2.0-rc.1.tgz]
    version: 0.2.0-rc.1
  - apiVersion: v2
    appVersion: "1.0"
    description: 日本語の説明がとても長いので表の幅を超えてしまうかもしれませんがどうでしょうか
    name: web
    urls: [web-0.1.0.tgz]
    version: 0.1.0
generated: "2024-01-01T00:00:00Z"
"#;

#[test]
fn repo_query_output_formats_match_helm_search_repo() {
    let context = TestContext::new();
    std::fs::write(context.path("index.yaml"), SEARCH_INDEX).unwrap();
    let query = |extra: &[&str]| {
        let mut args = vec![
            "repo",
            "query",
            "index.yaml",
            "web",
            "--versions",
            "--devel",
        ];
        args.extend_from_slice(extra);
        let output = context.run(&args);
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output)
    };
    let table = query(&["-o", "table"]);
    assert_eq!(
        table,
        "NAME\tCHART VERSION\tAPP VERSION\tDESCRIPTION                                       \n\
         web \t1.0.0        \t           \tA very long description that goes well beyond f...\n\
         web \t0.2.0-rc.1   \t1.16.0     \tA very long description that goes well beyond f...\n\
         web \t0.1.0        \t1.0        \t日本語の説明がとても長いので表の幅を超えてしまう...\n"
    );
    let json = query(&[]);
    assert_eq!(json, query(&["--output", "json"]));
    assert!(json.starts_with("[{\"name\":\"web\",\"version\":\"1.0.0\",\"app_version\":\"\",\"description\":\"A very long"));
    let yaml = query(&["-o", "yaml"]);
    assert!(
        yaml.starts_with("- app_version: \"\"\n  description: A very long description that goes well beyond fifty characters for\n    the table\n  name: web\n  version: 1.0.0\n"),
        "{yaml}"
    );
    let wide = query(&["-o", "table", "--max-col-width", "0"]);
    assert!(
        wide.contains(
            "\tA very long description that goes well beyond fifty characters for the table"
        ),
        "{wide}"
    );
    let none = context.run(&["repo", "query", "index.yaml", "nothing", "-o", "table"]);
    assert_eq!(stdout(&none), "No results found\n");
    for format in ["json", "yaml"] {
        let none = context.run(&["repo", "query", "index.yaml", "nothing", "-o", format]);
        assert_eq!(stdout(&none), "[]\n", "{format}");
    }

    // helm search repo, on the same index as a repository named `local`.
    let Some(helm) = context.helm() else {
        return;
    };
    drop(helm);
    let config = context.path(".home/config/helm");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("repositories.yaml"),
        "apiVersion: \"\"\ngenerated: \"0001-01-01T00:00:00Z\"\nrepositories:\n- name: local\n  url: http://127.0.0.1:9\n",
    )
    .unwrap();
    let cache = context.path(".home/cache/helm/repository");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(cache.join("local-index.yaml"), SEARCH_INDEX).unwrap();
    let search = |extra: &[&str]| {
        let mut args = vec!["search", "repo", "local/web", "--versions", "--devel"];
        args.extend_from_slice(extra);
        let output = context.helm().unwrap().args(&args).output().unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output)
    };
    // helm's names carry the repository; its NAME column is wider by as much.
    let theirs = search(&["-o", "table"]);
    let cells = |text: &str| -> Vec<Vec<String>> {
        text.lines()
            .map(|line| {
                let mut cells: Vec<String> = line.split('\t').map(str::to_owned).collect();
                cells[0] = cells[0].trim_end().trim_start_matches("local/").to_owned();
                cells
            })
            .collect()
    };
    assert_eq!(cells(&table), cells(&theirs));
    assert_eq!(
        json,
        search(&["-o", "json"]).replace("\"name\":\"local/", "\"name\":\"")
    );
    assert_eq!(
        yaml,
        search(&["-o", "yaml"]).replace("name: local/", "name: ")
    );
    let theirs_wide = search(&["-o", "table", "--max-col-width", "0"]);
    assert_eq!(cells(&wide), cells(&theirs_wide));
    let none = context
        .helm()
        .unwrap()
        .args(["search", "repo", "nothing"])
        .output()
        .unwrap();
    assert_eq!(stdout(&none), "No results found\n");
}
