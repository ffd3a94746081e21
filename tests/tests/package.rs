//! `chartkit create`, `lint` and `package`, checked against the reference helm.

use std::path::{Path, PathBuf};
use std::process::Command;

use chartkit_tests::corpus::{cases, corpus_or_skip, documents, packages};
use chartkit_tests::peers::helm_or_skip;
use chartkit_tests::{TestContext, sha256_file, stderr, stdout};

fn unpack(package: &Path, into: &Path) -> PathBuf {
    let bytes = std::fs::read(package).expect("read package");
    chartkit_chart::archive::unpack(&bytes, into, &Default::default()).expect("unpack corpus chart")
}

#[test]
fn packaging_the_same_directory_twice_gives_the_same_digest() {
    let context = TestContext::new();
    assert!(context.run(&["create", "demo"]).status.success());
    assert!(
        context
            .run(&["package", "demo", "-d", "first"])
            .status
            .success()
    );
    // New modification times must not change the bytes.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let values = context.path("demo/values.yaml");
    std::fs::write(&values, std::fs::read(&values).unwrap()).unwrap();
    assert!(
        context
            .run(&["package", "demo", "-d", "second"])
            .status
            .success()
    );
    let first = sha256_file(&context.path("first/demo-0.1.0.tgz"));
    assert_eq!(first, sha256_file(&context.path("second/demo-0.1.0.tgz")));

    // A real chart unpacked twice into different places packs to the same digest too.
    if let Some(corpus) = corpus_or_skip("packaging_the_same_directory_twice_gives_the_same_digest")
    {
        let package = corpus.join("charts/wordpress-27.0.0.tgz");
        let a = unpack(&package, &context.path("a"));
        let b = unpack(&package, &context.path("b"));
        for (dir, out) in [(&a, "out-a"), (&b, "out-b")] {
            let output = context.run(&["package", dir.to_str().unwrap(), "-d", out]);
            assert!(output.status.success(), "{}", stderr(&output));
        }
        assert_eq!(
            sha256_file(&context.path("out-a/wordpress-27.0.0.tgz")),
            sha256_file(&context.path("out-b/wordpress-27.0.0.tgz"))
        );
    }
}

#[test]
fn create_lint_package_is_accepted_by_helm() {
    let context = TestContext::new();
    let created = context.run(&["create", "demo"]);
    assert_eq!(stdout(&created), "Creating demo\n");
    let lint = context.run(&["lint", "demo"]);
    assert!(lint.status.success(), "{}", stderr(&lint));
    assert_eq!(
        stdout(&lint),
        "==> Linting demo\n[INFO] Chart.yaml: icon is recommended\n\n1 chart(s) linted, 0 chart(s) failed\n"
    );
    let package = context.run(&["package", "demo"]);
    let expected = context.dir().canonicalize().unwrap().join("demo-0.1.0.tgz");
    assert_eq!(
        stdout(&package),
        format!(
            "Successfully packaged chart and saved it to: {}\n",
            expected.display()
        )
    );
    assert!(context.run(&["lint", "demo-0.1.0.tgz"]).status.success());

    let Some(_) = helm_or_skip("create_lint_package_is_accepted_by_helm") else {
        return;
    };
    let helm_lint = context
        .helm()
        .unwrap()
        .args(["lint", "demo-0.1.0.tgz", "--strict"])
        .output()
        .unwrap();
    assert!(
        helm_lint.status.success(),
        "{}{}",
        stdout(&helm_lint),
        stderr(&helm_lint)
    );
    for sets in [
        &[][..],
        &[
            "--set",
            "ingress.enabled=true,autoscaling.enabled=true,service.type=NodePort",
        ][..],
        &[
            "--set",
            "serviceAccount.create=false,service.type=LoadBalancer,ingress.enabled=true,ingress.tls[0].secretName=t,ingress.tls[0].hosts[0]=a",
        ][..],
    ] {
        let rendered = context
            .helm()
            .unwrap()
            .args(["template", "rel", "./demo-0.1.0.tgz"])
            .args(sets)
            .output()
            .unwrap();
        assert!(
            rendered.status.success(),
            "helm template {sets:?}: {}",
            stderr(&rendered)
        );
        assert!(stdout(&rendered).contains("kind: Deployment"));
        let installed = context
            .helm()
            .unwrap()
            .args(["install", "--dry-run=client", "rel", "./demo-0.1.0.tgz"])
            .args(sets)
            .output()
            .unwrap();
        assert!(
            stdout(&installed).contains("1. Get the application URL by running these commands:"),
            "NOTES.txt renders: {}",
            stderr(&installed)
        );
    }
}

#[test]
fn package_names_missing_dependencies() {
    let context = TestContext::new();
    chartkit_tests::archive::write(
        &context.path("app/Chart.yaml"),
        b"apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n- name: db\n  version: 1.x\n  repository: https://example.com\n",
    );
    let output = context.run(&["package", "app"]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("found in Chart.yaml, but missing in charts/ directory: db"),
        "{}",
        stderr(&output)
    );
    assert!(stderr(&output).contains("hint: "), "{}", stderr(&output));
    assert!(
        !context.path("app-1.0.0.tgz").exists(),
        "nothing is written on failure"
    );
}

/// Runs `helm` with the arguments of a recorded corpus command, from the corpus directory,
/// with the package replaced.
fn helm_template(
    helm: &Path,
    corpus: &Path,
    command: &str,
    package: &str,
    replacement: &Path,
) -> std::process::Output {
    let args: Vec<String> = command
        .split_whitespace()
        .skip(1)
        .map(|a| {
            if a == package {
                replacement.display().to_string()
            } else {
                a.to_owned()
            }
        })
        .collect();
    Command::new(helm)
        .current_dir(corpus)
        .args(&args)
        .env("HOME", replacement.parent().unwrap())
        .output()
        .expect("run helm")
}

#[test]
fn repackaged_corpus_charts_render_and_lint_like_the_originals() {
    let Some(corpus) =
        corpus_or_skip("repackaged_corpus_charts_render_and_lint_like_the_originals")
    else {
        return;
    };
    let Some(helm) = helm_or_skip("repackaged_corpus_charts_render_and_lint_like_the_originals")
    else {
        return;
    };
    let context = TestContext::new();
    let repacked_dir = context.path("repacked");
    let all_cases = cases(&corpus);
    let mut repacked = std::collections::HashMap::new();
    for (i, package) in packages(&corpus).iter().enumerate() {
        let dir = unpack(package, &context.path(&format!("src/{i}")));
        let out = repacked_dir.join(i.to_string());
        let output = context.run(&[
            "package",
            dir.to_str().unwrap(),
            "-d",
            out.to_str().unwrap(),
        ]);
        assert!(
            output.status.success(),
            "{}: {}",
            package.display(),
            stderr(&output)
        );
        let file = std::fs::read_dir(&out)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        repacked.insert(
            package.strip_prefix(&corpus).unwrap().display().to_string(),
            file,
        );
    }

    let mut failures = Vec::new();
    for case in &all_cases {
        let Some(package) = repacked.get(&case.package) else {
            failures.push(format!(
                "{}/{}: package {} not found",
                case.chart, case.name, case.package
            ));
            continue;
        };
        let output = helm_template(&helm, &corpus, &case.command, &case.package, package);
        if case.exit_code != 0 {
            if output.status.success() {
                failures.push(format!(
                    "{}/{}: expected helm to fail",
                    case.chart, case.name
                ));
            }
            continue;
        }
        let golden =
            std::fs::read_to_string(corpus.join(case.stdout_golden.as_ref().unwrap())).unwrap();
        let rendered = stdout(&output);
        let same = if case.deterministic {
            rendered == golden
        } else {
            let stable = |text: &str| -> Vec<(String, String)> {
                documents(text)
                    .into_iter()
                    .filter(|(source, _)| !case.nondeterministic_documents.contains(source))
                    .collect()
            };
            stable(&rendered) == stable(&golden)
        };
        if !same {
            failures.push(format!(
                "{}/{}: helm template output differs from the original's",
                case.chart, case.name
            ));
        }
    }

    // helm lint gives the same verdict and messages (temporary paths aside).
    let normalize = |text: String| -> String {
        text.lines()
            .filter(|l| l.starts_with('['))
            .map(|l| match l.find("/tmp/helm-lint") {
                Some(start) => {
                    let rest = &l[start..];
                    let end = rest.find(": ").unwrap_or(rest.len());
                    format!("{}<chart>{}", &l[..start], &rest[end..])
                }
                None => l.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    for package in packages(&corpus) {
        let key = package.strip_prefix(&corpus).unwrap().display().to_string();
        let original = Command::new(&helm)
            .arg("lint")
            .arg(&package)
            .output()
            .unwrap();
        let ours = Command::new(&helm)
            .arg("lint")
            .arg(&repacked[&key])
            .output()
            .unwrap();
        if original.status.success() != ours.status.success() {
            failures.push(format!(
                "{key}: helm lint verdict differs after repackaging"
            ));
        }
        let (a, b) = (normalize(stdout(&original)), normalize(stdout(&ours)));
        let sorted = |s: &str| {
            let mut v: Vec<String> = s
                .lines()
                .map(|l| {
                    // Helm lists missing subcharts in map order; compare them as sets.
                    match l.rsplit_once(": ") {
                        Some((head, list)) if head.contains("missing these dependencies") => {
                            let mut names: Vec<&str> = list.split(',').collect();
                            names.sort();
                            format!("{head}: {}", names.join(","))
                        }
                        _ => l.to_owned(),
                    }
                })
                .collect();
            v.sort();
            v
        };
        if sorted(&a) != sorted(&b) {
            failures.push(format!("{key}: helm lint messages differ:\n{a}\n---\n{b}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
