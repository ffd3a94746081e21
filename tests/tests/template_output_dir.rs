//! `chartkit template --output-dir` writes the same files with the same contents and
//! prints the same `wrote` lines as `helm template --output-dir`, hooks and the
//! `--release-name` layout included.

use chartkit_tests::peers::helm_or_skip;
use chartkit_tests::{TestContext, stdout};

/// Every file below `dir` in the context, relative to it, with its contents.
fn files_under(context: &TestContext, dir: &str) -> Vec<(String, String)> {
    let prefix = format!("{dir}/");
    context
        .tree()
        .into_iter()
        .filter_map(|path| {
            let relative = path.strip_prefix(&prefix)?.to_owned();
            let full = context.path(&path);
            full.is_file()
                .then(|| (relative, std::fs::read_to_string(full).unwrap()))
        })
        .collect()
}

#[test]
fn output_dir_matches_helm() {
    let context = TestContext::new();
    let created = context.run(&["create", "web"]);
    assert!(created.status.success());
    for extra in [&[][..], &["--release-name"][..]] {
        let mut ours_args = vec!["template", "rel", "web", "--output-dir", "ours"];
        ours_args.extend_from_slice(extra);
        let ours = context.run(&ours_args);
        assert!(ours.status.success(), "{}", chartkit_tests::stderr(&ours));
        let printed = stdout(&ours);
        // The hook (the chart's test pod) is written after the manifests, and the blank
        // line comes last.
        assert!(
            printed.ends_with("tests/test-connection.yaml\n\n"),
            "{printed}"
        );
        let written = files_under(&context, "ours");
        assert_eq!(written.len(), 4, "{written:?}");

        if helm_or_skip("output_dir_matches_helm").is_none() {
            continue;
        }
        let mut helm_args = vec!["template", "rel", "web", "--output-dir", "helm"];
        helm_args.extend_from_slice(extra);
        let helm = context.helm().unwrap().args(&helm_args).output().unwrap();
        assert!(helm.status.success());
        assert_eq!(printed.replace("ours/", "helm/"), stdout(&helm));
        assert_eq!(written, files_under(&context, "helm"));
        std::fs::remove_dir_all(context.path("ours")).unwrap();
        std::fs::remove_dir_all(context.path("helm")).unwrap();
    }
}

#[test]
fn output_dir_with_show_only_fails_as_helm_does() {
    // helm writes every file, then finds none of the --show-only templates in what is
    // left for stdout: the `wrote` lines, then the error, exit 1.
    let context = TestContext::new();
    assert!(context.run(&["create", "web"]).status.success());
    let args = |dir: &'static str| {
        [
            "template",
            "rel",
            "web",
            "--output-dir",
            dir,
            "--show-only",
            "templates/service.yaml",
        ]
    };
    let ours = context.run(&args("ours"));
    assert_eq!(ours.status.code(), Some(1));
    let message = chartkit_tests::stderr(&ours);
    assert!(
        message.starts_with("Error: could not find template templates/service.yaml in chart\n"),
        "{message}"
    );
    let printed = stdout(&ours);
    assert!(
        printed.starts_with("wrote ours/web/templates/"),
        "{printed}"
    );
    assert!(printed.ends_with("test-connection.yaml\n"), "{printed}");
    assert_eq!(files_under(&context, "ours").len(), 4);
    if helm_or_skip("output_dir_with_show_only_fails_as_helm_does").is_none() {
        return;
    }
    let helm = context.helm().unwrap().args(args("helm")).output().unwrap();
    assert_eq!(helm.status.code(), Some(1));
    assert_eq!(printed.replace("ours/", "helm/"), stdout(&helm));
    assert_eq!(
        chartkit_tests::stderr(&helm),
        "Error: could not find template templates/service.yaml in chart\n"
    );
    assert_eq!(files_under(&context, "ours"), files_under(&context, "helm"));
}
