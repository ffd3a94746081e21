//! What helm logs while rendering, `chartkit template` prints as warnings in the same
//! words: coalescing's notices (`skipped value for X: Not a table.`), conditions and
//! tags that are not booleans, `import-values` naming a table that is not there, hooks
//! of unknown events. Helm writes them as log lines (`level=WARN msg="..." key=value`);
//! chartkit writes `warning: ` and the message with its attributes. Each case is checked
//! against the lines helm 4.1.4 printed and, when installed, against helm itself.

use chartkit_tests::peers::helm_or_skip;
use chartkit_tests::{TestContext, stderr};

/// helm's log lines as chartkit prints them: `level=X msg="text" attrs` becomes
/// `warning: text attrs` (without doubling a `warning: ` the text starts with).
fn from_helm_log(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|line| line.strip_prefix("level="))
        .map(|line| {
            let rest = line.split_once(" msg=").expect("a message").1;
            let (message, attributes) = if let Some(quoted) = rest.strip_prefix('"') {
                let mut end = 0;
                let mut escaped = false;
                for (i, c) in quoted.char_indices() {
                    match c {
                        _ if escaped => escaped = false,
                        '\\' => escaped = true,
                        '"' => {
                            end = i;
                            break;
                        }
                        _ => {}
                    }
                }
                let message: String =
                    serde_json::from_str(&format!("\"{}\"", &quoted[..end])).expect("Go quote");
                (message, &quoted[end + 1..])
            } else {
                match rest.split_once(' ') {
                    Some((message, attributes)) => (message.to_owned(), attributes),
                    None => (rest.to_owned(), ""),
                }
            };
            let line = format!("{message}{attributes}");
            if line.starts_with("warning: ") {
                line
            } else {
                format!("warning: {line}")
            }
        })
        .collect()
}

fn warnings(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .map(str::to_owned)
        .collect()
}

/// A chart whose values, dependency and hooks make helm log everything it logs while
/// rendering.
fn noisy_chart(context: &TestContext) -> String {
    context.demo_chart(&[
        (
            "Chart.yaml",
            "apiVersion: v2\nname: demo\nversion: 0.1.0\ndependencies:\n- name: sub\n  version: 0.1.0\n  condition: sub.enabled,other.flag\n  tags: [t1]\n  import-values: [missing, {child: nope.x, parent: y}]\n",
        ),
        (
            "values.yaml",
            "sub:\n  enabled: \"yes\"\ntags:\n  t1: x\nother:\n  flag: true\nm: 1\nt:\n  k: {a: 1}\nglobal:\n  g: 1\n",
        ),
        (
            "charts/sub/Chart.yaml",
            "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
        ),
        ("charts/sub/values.yaml", "global:\n  g: {a: 1}\n"),
        (
            "templates/hook.yaml",
            "kind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    helm.sh/hook: pre-install, bogus\n",
        ),
        ("templates/cm.yaml", "kind: ConfigMap\nmetadata:\n  name: b\n"),
    ])
}

#[test]
fn warnings_helm_logs_while_rendering_are_printed_in_its_words() {
    let context = TestContext::new();
    let dir = noisy_chart(&context);
    let args = ["template", &dir, "--set", "m.x=1", "--set", "t.k=2"];
    let ours = context.run(&args);
    assert!(ours.status.success(), "{}", stderr(&ours));
    let expected = [
        "warning: skipped value for demo.m: Not a table.",
        "warning: cannot overwrite table with non table for demo.t.k (map[a:1])",
        "warning: cannot overwrite table with non table for demo.sub.global.g (map[a:1])",
        "warning: returned non-bool value tag=t1 chart=sub",
        "warning: returned non-bool value path=sub.enabled chart=sub",
        "warning: cannot overwrite table with non table for demo.sub.global.g (map[a:1])",
        "warning: ImportValues missing table error=\"\\\"exports\\\" is not a table\"",
        "warning: ImportValues missing table from chart chart=sub error=\"\\\"nope\\\" is not a table\"",
        "warning: skipped value for demo.m: Not a table.",
        "warning: cannot overwrite table with non table for demo.t.k (map[a:1])",
        "warning: cannot overwrite table with non table for demo.sub.global.g (map[a:1])",
        "warning: skipping unknown hooks hookTypes=\"pre-install, bogus\"",
    ];
    assert_eq!(warnings(&stderr(&ours)), expected);
    if helm_or_skip("warnings_helm_logs_while_rendering_are_printed_in_its_words").is_some() {
        let helm = context.helm().unwrap().args(args).output().unwrap();
        assert!(helm.status.success(), "{}", stderr(&helm));
        // Helm walks Go maps, whose order is random: its lines come in another order
        // from run to run. chartkit's order is the keys' (the same every time).
        let mut theirs = from_helm_log(&stderr(&helm));
        let mut ours = expected.map(str::to_owned).to_vec();
        theirs.sort();
        ours.sort();
        assert_eq!(theirs, ours);
    }
}

/// Helm logs as it goes, so what it logged before a failure is printed with the error.
#[test]
fn warnings_before_a_failed_render_are_printed_too() {
    let context = TestContext::new();
    let dir = context.demo_chart(&[
        ("values.yaml", "m: 1\n"),
        (
            "templates/cm.yaml",
            "kind: ConfigMap\n{{ fail \"stop\" }}\n",
        ),
    ]);
    let args = ["template", &dir, "--set", "m.x=1"];
    let ours = context.run(&args);
    assert!(!ours.status.success());
    let expected = ["warning: skipped value for demo.m: Not a table."];
    assert_eq!(warnings(&stderr(&ours)), expected);
    if helm_or_skip("warnings_before_a_failed_render_are_printed_too").is_some() {
        let helm = context.helm().unwrap().args(args).output().unwrap();
        assert!(!helm.status.success());
        assert_eq!(from_helm_log(&stderr(&helm)), expected);
    }
}

/// `lint` prints what helm logs while linting: the values check's coalescing, then the
/// template check's dependency processing and its two more coalescings (no hook
/// sorting there, so no word about unknown hooks).
#[test]
fn lint_prints_the_warnings_helm_logs_while_linting() {
    let context = TestContext::new();
    let dir = noisy_chart(&context);
    let args = ["lint", &dir, "--set", "m.x=1"];
    let ours = context.run(&args);
    assert!(ours.status.success(), "{}", stderr(&ours));
    let expected = [
        "warning: destination for m is a table. Ignoring non-table value (1)",
        "warning: skipped value for demo.m: Not a table.",
        "warning: cannot overwrite table with non table for demo.sub.global.g (map[a:1])",
        "warning: returned non-bool value tag=t1 chart=sub",
        "warning: returned non-bool value path=sub.enabled chart=sub",
        "warning: cannot overwrite table with non table for demo.sub.global.g (map[a:1])",
        "warning: ImportValues missing table error=\"\\\"exports\\\" is not a table\"",
        "warning: ImportValues missing table from chart chart=sub error=\"\\\"nope\\\" is not a table\"",
        "warning: skipped value for demo.m: Not a table.",
        "warning: cannot overwrite table with non table for demo.sub.global.g (map[a:1])",
        "warning: skipped value for demo.m: Not a table.",
        "warning: cannot overwrite table with non table for demo.sub.global.g (map[a:1])",
    ];
    assert_eq!(warnings(&stderr(&ours)), expected);
    if helm_or_skip("lint_prints_the_warnings_helm_logs_while_linting").is_some() {
        let helm = context.helm().unwrap().args(args).output().unwrap();
        assert!(helm.status.success(), "{}", stderr(&helm));
        let mut theirs = from_helm_log(&stderr(&helm));
        let mut ours = expected.map(str::to_owned).to_vec();
        theirs.sort();
        ours.sort();
        assert_eq!(theirs, ours);
    }
}
