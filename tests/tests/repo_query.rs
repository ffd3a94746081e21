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
            "warning: not caching the parsed index: cannot create the cache directory"
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
