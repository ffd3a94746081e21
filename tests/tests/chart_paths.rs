//! Paths built from chart data stay where they belong, symbolic links are reported, and
//! oversized chart files are refused before they are read.

use chartkit_tests::{TestContext, stderr, stdout};

fn write(context: &TestContext, path: &str, text: &str) {
    let path = context.path(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_chart_named_dot_dot_is_refused_and_nothing_is_written_outside_the_output() {
    let context = TestContext::new();
    write(
        &context,
        "work/evil/Chart.yaml",
        "apiVersion: v2\nname: ..\nversion: 0.1.0\n",
    );
    write(
        &context,
        "work/evil/templates/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    );
    std::fs::create_dir_all(context.path("work/out")).unwrap();
    let before = context.tree();
    for args in [
        &["template", "evil", "--output-dir", "out"][..],
        &["package", "evil", "-d", "out"][..],
        &["lint", "evil"][..],
    ] {
        let output = context
            .chartkit()
            .current_dir(context.path("work"))
            .args(args)
            .output()
            .unwrap();
        assert!(!output.status.success(), "{args:?} should fail");
        let text = format!("{}{}", stdout(&output), stderr(&output));
        assert!(
            text.contains("chart.metadata.name \"..\" is not allowed"),
            "{args:?}: {text}"
        );
    }
    assert_eq!(context.tree(), before, "nothing may be written");
}

#[test]
fn symbolic_links_in_a_chart_directory_are_reported() {
    let context = TestContext::new();
    write(
        &context,
        "linked/Chart.yaml",
        "apiVersion: v2\nname: linked\nversion: 0.1.0\n",
    );
    write(&context, "outside.yaml", "secret: from-outside\n");
    std::os::unix::fs::symlink("../outside.yaml", context.path("linked/values.yaml")).unwrap();
    let output = context.run(&["show", "values", "linked"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), "secret: from-outside\n\n");
    // helm's loader logs each link it follows, under the chart's absolute path.
    let dir = context.dir();
    let expected = format!(
        "level=INFO msg=\"found symbolic link in path. Contents of linked file included and used\" path={} resolved={}\n",
        dir.join("linked/values.yaml").display(),
        std::fs::canonicalize(dir)
            .unwrap()
            .join("outside.yaml")
            .display()
    );
    assert_eq!(stderr(&output), expected);
    if chartkit_tests::peers::helm_or_skip("symbolic_links_in_a_chart_directory_are_reported")
        .is_some()
    {
        let helm = context
            .helm()
            .unwrap()
            .current_dir(dir)
            .args(["show", "values", "linked"])
            .output()
            .unwrap();
        assert_eq!(stderr(&helm), expected);
    }
}

#[test]
fn lint_refuses_an_oversized_values_file_without_reading_it() {
    let context = TestContext::new();
    write(
        &context,
        "big/Chart.yaml",
        "apiVersion: v2\nname: big\nversion: 0.1.0\n",
    );
    // 400 MiB, sparse: reading it whole takes more address space than allowed below.
    let values = std::fs::File::create(context.path("big/values.yaml")).unwrap();
    values.set_len(400 << 20).unwrap();
    let output = context.chartkit().args(["lint", "big"]).output().unwrap();
    let all = format!("{}{}", stdout(&output), stderr(&output));
    assert!(!output.status.success(), "{all}");
    assert!(
        all.contains("chart file \"values.yaml\" is larger than the maximum file size 5242880"),
        "{all}"
    );
    // With at most 200 MiB of address space, reading the file whole would fail.
    let limited = std::process::Command::new("sh")
        .current_dir(context.dir())
        .arg("-c")
        .arg(format!(
            "ulimit -v 204800 && exec '{}' lint big",
            chartkit_tests::chartkit_bin().display()
        ))
        .env("HOME", context.path(".home"))
        .output()
        .unwrap();
    let all = format!("{}{}", stdout(&limited), stderr(&limited));
    assert!(
        all.contains("is larger than the maximum file size 5242880"),
        "{all}"
    );
    assert!(!all.contains("memory allocation"), "{all}");
}
