//! `chartkit template --output-dir` writes the same files with the same contents and
//! prints the same `wrote` lines as `helm template --output-dir`, hooks and the
//! `--release-name` layout included.

use chartkit_tests::peers::helm_or_skip;
use chartkit_tests::{TestContext, stdout};

fn files_under(root: &std::path::Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let relative = path.strip_prefix(root).unwrap().display().to_string();
                out.push((relative, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
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
        let written = files_under(&context.path("ours"));
        assert_eq!(written.len(), 4, "{written:?}");

        if helm_or_skip("output_dir_matches_helm").is_none() {
            continue;
        }
        let mut helm_args = vec!["template", "rel", "web", "--output-dir", "helm"];
        helm_args.extend_from_slice(extra);
        let helm = context.helm().unwrap().args(&helm_args).output().unwrap();
        assert!(helm.status.success());
        assert_eq!(printed.replace("ours/", "helm/"), stdout(&helm));
        assert_eq!(written, files_under(&context.path("helm")));
        std::fs::remove_dir_all(context.path("ours")).unwrap();
        std::fs::remove_dir_all(context.path("helm")).unwrap();
    }
}
