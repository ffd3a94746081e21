//! Writing to a pipe whose reader has gone (`chartkit show values big.tgz | head -1`) ends
//! chartkit as it ends helm: killed by SIGPIPE (the shell's 141), without a word, never a
//! panic (101).

use std::path::Path;
use std::process::Command;

use chartkit_tests::{TestContext, chartkit_bin, stderr};

/// Runs `PROGRAM ARGS | head -1` in bash and returns the program's exit status as the
/// shell reports it and what it wrote to stderr.
fn into_closed_pipe(context: &TestContext, program: &Path, args: &str) -> (i32, String) {
    let err = context.path("pipe-stderr");
    let output = Command::new("bash")
        .current_dir(context.dir())
        .arg("-c")
        .arg(format!(
            "\"$0\" {args} 2>\"$1\" | head -1 >/dev/null; echo \"${{PIPESTATUS[0]}}\""
        ))
        .arg(program)
        .arg(&err)
        .env("HOME", context.path(".home"))
        .env("NO_COLOR", "1")
        .output()
        .expect("run bash");
    assert!(output.status.success(), "{}", stderr(&output));
    let status = String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .expect("an exit status");
    (status, std::fs::read_to_string(&err).unwrap_or_default())
}

/// A chart whose values.yaml is far larger than a pipe's buffer, packaged as big-0.1.0.tgz.
fn big_chart(context: &TestContext) {
    let mut values = String::from("text: |\n");
    for i in 0..8000 {
        values.push_str(&format!(
            "  line {i} of a values file much larger than a pipe\n"
        ));
    }
    context.demo_chart(&[
        ("values.yaml", values.as_str()),
        (
            "templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  text: {{ .Values.text | quote }}\n",
        ),
    ]);
    std::fs::rename(context.path("demo"), context.path("big")).unwrap();
    std::fs::write(
        context.path("big/Chart.yaml"),
        "apiVersion: v2\nname: big\nversion: 0.1.0\n",
    )
    .unwrap();
    let packaged = context.run(&["package", "big"]);
    assert!(packaged.status.success(), "{}", stderr(&packaged));
}

#[test]
fn show_values_and_lint_into_a_closed_pipe_exit_quietly_as_helm_does() {
    let context = TestContext::new();
    big_chart(&context);
    let mut statuses = std::collections::BTreeMap::new();
    for args in ["show values big-0.1.0.tgz", "lint big"] {
        for _ in 0..100 {
            let (status, err) = into_closed_pipe(&context, chartkit_bin(), args);
            assert_ne!(status, 101, "`chartkit {args}` panicked: {err}");
            assert!(
                status == 0 || status == 141,
                "`chartkit {args}` exited {status}: {err}"
            );
            assert_eq!(err, "", "`chartkit {args}` said something");
            *statuses.entry((args, status)).or_insert(0) += 1;
        }
    }
    // values.yaml is 400 KiB: the write cannot fit in the pipe, so every run meets the
    // closed pipe and is killed by SIGPIPE.
    assert_eq!(
        statuses.get(&("show values big-0.1.0.tgz", 141)),
        Some(&100)
    );

    if let Some(helm) = chartkit_tests::peers::helm_or_skip(
        "show_values_and_lint_into_a_closed_pipe_exit_quietly_as_helm_does",
    ) {
        let (status, err) = into_closed_pipe(&context, &helm, "show values big-0.1.0.tgz");
        assert_eq!((status, err.as_str()), (141, ""), "helm's own behaviour");
    }
}

#[test]
fn every_command_writes_through_the_closed_pipe_check() {
    // Output written in one piece after the work (template) and error output to a closed
    // stderr end the same way.
    let context = TestContext::new();
    big_chart(&context);
    let (status, err) = into_closed_pipe(&context, chartkit_bin(), "template big");
    assert_eq!((status, err.as_str()), (141, ""));
    let script = "\"$0\" lint missing-chart 2>&1 | true; echo \"${PIPESTATUS[0]}\"";
    let output = Command::new("bash")
        .current_dir(context.dir())
        .args(["-c", script])
        .arg(chartkit_bin())
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    assert!(status == "1" || status == "141", "{status}");
}
