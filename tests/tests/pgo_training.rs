//! The profile-guided optimisation workload that `scripts/build-release` runs: it must
//! keep working (a failure there fails the release build) and render what helm renders.

use std::process::Command;

use chartkit_tests::peers::helm_or_skip;
use chartkit_tests::{TestContext, chartkit_bin, stderr, stdout, workspace_root};

#[test]
fn training_workload_runs() {
    let script = workspace_root().join("scripts/pgo-training/run");
    let output = Command::new(&script).arg(chartkit_bin()).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
}

#[test]
fn training_chart_renders_like_helm() {
    let training = workspace_root().join("scripts/pgo-training");
    let context = TestContext::new();
    assert!(context.run(&["create", "app"]).status.success());
    let chart = context.path("app");
    for name in ["workload.yaml", "certs.yaml"] {
        let template = std::fs::read_to_string(training.join("templates").join(name)).unwrap();
        std::fs::write(
            chart.join("templates").join(name),
            template.replace("__NAME__", "app"),
        )
        .unwrap();
    }
    std::fs::copy(
        training.join("values.schema.json"),
        chart.join("values.schema.json"),
    )
    .unwrap();
    let mut values = std::fs::read_to_string(chart.join("values.yaml")).unwrap();
    values.push_str(&std::fs::read_to_string(training.join("values-workload.yaml")).unwrap());
    std::fs::write(chart.join("values.yaml"), values).unwrap();
    let override_file = training.join("values-override.yaml");
    let everything = context.run(&[
        "template",
        "rel",
        "app",
        "-f",
        override_file.to_str().unwrap(),
    ]);
    assert!(everything.status.success(), "{}", stderr(&everything));
    assert!(stdout(&everything).contains("type: kubernetes.io/tls"));

    // The certificates are random; the rest is compared with helm.
    let args = [
        "template",
        "rel",
        "app",
        "-f",
        override_file.to_str().unwrap(),
        "--show-only",
        "templates/workload.yaml",
    ];
    let ours = context.run(&args);
    assert!(ours.status.success(), "{}", stderr(&ours));
    let rendered = stdout(&ours);
    assert!(rendered.contains("name: rel-app-worker"), "{rendered}");
    assert!(
        rendered.contains("kind: HorizontalPodAutoscaler"),
        "{rendered}"
    );

    // The schema is enforced.
    let invalid = context.run(&["template", "rel", "app", "--set", "replicaCount=-1"]);
    assert!(!invalid.status.success());
    assert!(
        stderr(&invalid).contains("replicaCount"),
        "{}",
        stderr(&invalid)
    );

    if helm_or_skip("training_chart_renders_like_helm").is_some() {
        let helm = context.helm().unwrap().args(args).output().unwrap();
        assert!(helm.status.success(), "{}", stderr(&helm));
        assert_eq!(rendered, stdout(&helm));
    }
}
