//! The YAML-error category of the differential suite: broken YAML (every class of error
//! go-yaml's scanner and parser report: quotes, escapes, indentation, tabs, `:` and `-`
//! where they may not be, unclosed or stray flow brackets, anchors, aliases, tags,
//! directives, document markers, empty keys), each read by chartkit and by helm in the
//! four places Helm reads YAML: a values file given with `-f`, the chart's values.yaml,
//! Chart.yaml, and a template's rendered output. Each fragment is also tried after two
//! good lines and nested under a key, since go-yaml's line numbers depend on where the
//! problem is. The error lines must be helm's, prefix and line number included;
//! chartkit names the chart's files by path where helm names them alone, and that
//! prefix is the one difference allowed.
//!
//! Cases whose result differs today are listed with the reason in
//! `tests/differential/known_yaml_error_differences.txt`; helm's answers are kept in
//! `tests/differential/yaml_errors.json`, so the cases are checked without helm too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use chartkit_tests::TestContext;

/// Broken YAML fragments, by name.
const FRAGMENTS: &[(&str, &str)] = &[
    ("dq_unterminated", "a: \"abc\n"),
    ("dq_unterminated_multiline", "a: \"abc\nb: 1\n"),
    ("sq_unterminated", "a: 'abc\n"),
    ("sq_unterminated_multiline", "a: 'abc\nb: 1\nc: 2\n"),
    ("dq_doc_marker", "a: \"abc\n---\n\"\n"),
    ("sq_doc_marker", "a: 'abc\n...\n'\n"),
    ("dq_bad_escape", "a: \"x\\qy\"\n"),
    ("dq_bad_hex", "a: \"\\x4g\"\n"),
    ("dq_bad_unicode", "a: \"\\ud800\"\n"),
    ("dq_bad_U", "a: \"\\U00110000\"\n"),
    ("dq_short_u", "a: \"\\u12\"\n"),
    ("bad_indent_key", "a:\n  b: 1\n c: 2\n"),
    ("bad_indent_deeper", "a:\n  b: 1\n    c: 2\n"),
    ("bad_indent_seq", "a:\n  - 1\n - 2\n"),
    ("seq_then_map", "- a\nb: 1\n"),
    ("map_then_seq", "a: 1\n- b\n"),
    ("map_then_seq_nested", "a:\n  b: 1\n  - c\n"),
    ("seq_in_map_value_same_line", "a: - b\n"),
    ("mapping_values_same_line", "a: b: c\n"),
    ("mapping_values_plain_multiline", "a: b\n  c: d\n"),
    ("mapping_values_in_seq", "- a: b: c\n"),
    ("plain_no_colon", "a: 1\nb\n"),
    ("plain_no_colon_end", "a: 1\nb\nc: 2\n"),
    ("key_no_colon_first", "abc\nd: 1\n"),
    ("flow_seq_unclosed", "a: [1, 2\n"),
    ("flow_seq_unclosed_next", "a: [1, 2\nb: 3\n"),
    ("flow_map_unclosed", "a: {x: 1\n"),
    ("flow_map_unclosed_next", "a: {x: 1\nb: 2\n"),
    ("flow_seq_extra_close", "a: [1]]\n"),
    ("flow_map_extra_close", "a: {x: 1}}\n"),
    ("flow_seq_close_map", "a: [1}\n"),
    ("flow_map_close_seq", "a: {x: 1]\n"),
    ("flow_seq_missing_comma", "a: [1 2: 3 4]\n"),
    ("flow_map_missing_comma", "a: {x: 1 y: 2}\n"),
    ("flow_seq_double_comma", "a: [1,,2]\n"),
    ("flow_map_double_comma", "a: {x: 1,, y: 2}\n"),
    ("flow_seq_open_only", "a: [\n"),
    ("flow_map_open_only", "a: {\n"),
    ("flow_stray_close", "]\n"),
    ("flow_stray_close_brace", "a: 1\n}\n"),
    ("flow_multiline_key", "a: {x\n: 1}\n"),
    ("anchor_empty", "a: & b\n"),
    ("alias_empty", "a: *\n"),
    ("alias_unknown", "a: *nothere\n"),
    ("alias_unknown_later", "a: 1\nb:\n  c: *nothere\n"),
    ("anchor_bad_char", "a: &\u{e9} 1\n"),
    ("two_anchors", "a: &x &y 1\n"),
    ("alias_with_anchor", "a: &x *y\n"),
    ("alias_as_key_unknown", "*x : 1\n"),
    ("tag_undefined_handle", "a: !e!foo 1\n"),
    ("tag_verbatim_unclosed", "a: !<tag:x 1\n"),
    ("tag_bad_uri_escape", "a: !!str%zz 1\n"),
    ("directive_yaml11", "%YAML 1.1\na: 1\n"),
    ("directive_yaml11_doc", "%YAML 1.1\n---\na: 1\n"),
    ("directive_yaml12_doc", "%YAML 1.2\n---\na: 1\n"),
    ("directive_yaml20_doc", "%YAML 2.0\n---\na: 1\n"),
    ("directive_yaml_dup", "%YAML 1.1\n%YAML 1.1\n---\na: 1\n"),
    (
        "directive_tag",
        "%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n",
    ),
    (
        "directive_tag_nodoc",
        "%TAG !e! tag:example.com,2000:\na: 1\n",
    ),
    (
        "directive_tag_dup",
        "%TAG !e! tag:a,2000:\n%TAG !e! tag:b,2000:\n---\na: 1\n",
    ),
    ("directive_unknown", "%FOO bar\n---\na: 1\n"),
    ("directive_no_name", "% x\n---\na: 1\n"),
    ("directive_bad_version", "%YAML x\n---\na: 1\n"),
    ("directive_long_version", "%YAML 1.12345678901\n---\na: 1\n"),
    ("directive_version_trailing", "%YAML 1.1 x\n---\na: 1\n"),
    ("directive_tag_bad_handle", "%TAG e! tag:x\n---\na: 1\n"),
    ("directive_after_content", "a: 1\n%YAML 1.1\n---\nb: 2\n"),
    ("doc_end_then_content", "a: 1\n...\nb\n"),
    ("doc_start_inline_map", "--- a: 1\nb: 2\n"),
    ("tab_indent", "a:\n\tb: 1\n"),
    ("tab_indent_seq", "a:\n  -\tb\n\t- c\n"),
    ("tab_before_key", "a: 1\n\tb: 2\n"),
    ("tab_in_flow_start", "a:\n\t[1]\n"),
    ("block_scalar_indent_zero", "a: |0\n  x\n"),
    ("block_scalar_header_junk", "a: |x\n  y\n"),
    ("block_scalar_double_indicator", "a: |22\n  y\n"),
    ("block_scalar_less_indented", "a:\n  b: |\n    x\n   y\n"),
    ("block_scalar_tab", "a: |\n\tx\n"),
    ("complex_key_unclosed", "? a\n? b\n- c\n"),
    ("complex_key_in_flow", "a: [? x : y, ?]\n"),
    ("question_in_block_value", "a: ? b\n"),
    ("dash_in_flow", "a: [- 1]\n"),
    ("at_sign", "a: @x\n"),
    ("backtick", "a: `x\n"),
    ("at_key", "@a: 1\n"),
    ("percent_mid", "a:\n%b\n"),
    ("pipe_key", "|: 1\n"),
    ("colon_start", ": 1\n"),
    ("colon_start_later", "a: 1\n: 2\n"),
    ("seq_key_missing", "- a\n  b: 1\n"),
    ("seq_bad_indent_value", "a:\n- b\n  - c\n"),
    ("map_in_seq_bad", "- a: 1\n   b: 2\n"),
    ("map_in_seq_dedent", "- a: 1\n b: 2\n"),
    ("scalar_then_map", "a\nb: 1\n"),
    ("two_scalars_doc", "a\n---\nb: [\n"),
    ("second_doc_error", "a: 1\n---\nb: {\n"),
    ("comment_no_space", "a: 1#c\nb: [\n"),
    (
        "deep_error_line10",
        "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6\ng: 7\nh: 8\ni: 9\nj: [\n",
    ),
    ("empty_key_flow", "a: {: 1, : 2}\nb: [\n"),
    ("quoted_key_multiline", "\"a\nb\": 1\n"),
    ("plain_multiline_key", "a\nb: 1\nc: 2\n"),
    ("dup_key", "a: 1\na: 2\n"),
    ("map_key_flow_seq", "[a, b]: 1\nc: [\n"),
    ("anchor_on_key_then_bad", "&a a: 1\nb: *c\n"),
    ("flow_in_block_key_multiline", "a: [1,\n2\nb: 3\n"),
    ("dq_eof_in_flow", "a: [\"x, 1]\n"),
    ("sq_eof_noeol", "a: 'x"),
    ("flow_eof_noeol", "a: [1"),
    ("bom_middle", "a: 1\n\u{feff}b: 2\n"),
    ("ctrl_char", "a: \u{1}\n"),
    ("seq_entry_after_value", "a: b\n- c\n"),
    ("indicator_bang_space", "a: ! 1\nb: [\n"),
    // go-yaml reads `?` in a flow collection as a key indicator wherever it stands.
    ("key_indicator_no_blank_in_flow", "a: [?x]\nb: [\n"),
    ("key_indicator_ends_plain_in_flow", "a: [http://x?y=1]\n"),
    ("key_indicator_after_entry_in_flow_map", "a: {b: \"c\" ?}\n"),
    // sigs.k8s.io/yaml refuses null keys when it turns YAML into JSON.
    ("null_key", "a:\n  ~: 3\n"),
    ("null_key_flow", "a: [?, : b]\n"),
    (
        "null_key_deep",
        "a:\n  b:\n    c:\n      d:\n        ~: [1]\n",
    ),
    // Documents that are not maps.
    ("number_doc", "1\n"),
    ("list_doc", "- a\n"),
    ("bool_doc", "true\n"),
];

/// Where a case is read.
const PLACES: &[&str] = &["values", "chart-values", "chart-yaml", "template"];

/// Every case: each fragment as it is, after two good lines, and nested under a key
/// (fragments with directives, document markers, tabs or a byte order mark stay as they
/// are: their meaning depends on where they start).
pub fn cases() -> Vec<(String, String)> {
    let mut fragments: Vec<(String, String)> = FRAGMENTS
        .iter()
        .map(|(name, text)| ((*name).to_owned(), (*text).to_owned()))
        .collect();
    // A simple key longer than go-yaml's 1024 characters.
    fragments.push((
        "long_simple_key".to_owned(),
        format!("{}: 1\n", "a".repeat(1030)),
    ));
    let mut cases = Vec::new();
    for (name, text) in fragments {
        let movable = !text.starts_with('%') && !text.contains("---") && !text.contains("...");
        if movable {
            cases.push((format!("{name}.after"), format!("x: 1\ny: 2\n{text}")));
            if !text.contains(['\t', '\u{feff}']) {
                let nested: String = text
                    .split_inclusive('\n')
                    .map(|l| format!("  {l}"))
                    .collect();
                cases.push((format!("{name}.nested"), format!("top:\n{nested}")));
            }
        }
        cases.push((name, text));
    }
    cases
}

/// Runs `program` on `text` read in `place`, in a chart of its own under `dir`; the
/// `Error:` lines it printed, or nothing when it succeeded.
fn error_in(mut program: Command, dir: &Path, place: &str, text: &str) -> String {
    let chart = dir.join("demo");
    std::fs::create_dir_all(chart.join("templates")).expect("chart directory");
    let write = |path: &Path, text: &str| std::fs::write(path, text).expect("write case");
    write(
        &chart.join("Chart.yaml"),
        "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
    );
    write(&chart.join("templates/cm.yaml"), "kind: ConfigMap\n");
    program.current_dir(dir).args(["template", "demo"]);
    match place {
        "values" => {
            write(&dir.join("case.yaml"), text);
            program.args(["-f", "case.yaml"]);
        }
        "chart-values" => write(&chart.join("values.yaml"), text),
        "chart-yaml" => write(&chart.join("Chart.yaml"), text),
        _ => write(&chart.join("templates/cm.yaml"), text),
    }
    let output = program.output().expect("run");
    if output.status.success() {
        return String::new();
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("Error: "))
        .collect();
    if lines.is_empty() {
        format!("(no Error: line) {stderr}")
    } else {
        normalise(&lines.join("\n"))
    }
}

/// The one allowed difference: chartkit names a chart file by its path
/// (`cannot load the chart at `demo`: `demo/Chart.yaml`: `), helm by its name
/// (`cannot load Chart.yaml: `), or not at all for metadata it finds invalid.
fn normalise(message: &str) -> String {
    for file in ["Chart.yaml", "values.yaml"] {
        let ours = format!("cannot load the chart at `demo`: `demo/{file}`: ");
        let theirs = format!("cannot load {file}: ");
        if let Some(rest) = message.strip_prefix(&ours) {
            return rest.to_owned();
        }
        if let Some(rest) = message.strip_prefix(&theirs) {
            return rest.to_owned();
        }
    }
    message.to_owned()
}

/// Every case in every place, by `name [place]`, as `program` (made in a context)
/// reads it; four at a time.
fn results(program: &(dyn Fn(&TestContext) -> Command + Sync)) -> BTreeMap<String, String> {
    let jobs: Vec<(String, String, &str)> = cases()
        .into_iter()
        .flat_map(|(name, text)| PLACES.iter().map(move |p| (name.clone(), text.clone(), *p)))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let found = std::sync::Mutex::new(BTreeMap::new());
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                let context = TestContext::new();
                loop {
                    let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((name, text, place)) = jobs.get(n) else {
                        break;
                    };
                    let dir = context.path(&format!("case-{n}"));
                    let error = error_in(program(&context), &dir, place, text);
                    found
                        .lock()
                        .unwrap()
                        .insert(format!("{name} [{place}]"), error);
                }
            });
        }
    });
    found.into_inner().unwrap()
}

fn workspace_file(relative: &str) -> std::path::PathBuf {
    chartkit_tests::workspace_root().join(relative)
}

const GOLDEN: &str = "tests/differential/yaml_errors.json";
const KNOWN: &str = "tests/differential/known_yaml_error_differences.txt";

fn known_differences() -> BTreeSet<String> {
    std::fs::read_to_string(workspace_file(KNOWN))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split(" \t# ").next().unwrap_or(l).to_owned())
        .collect()
}

#[test]
fn yaml_errors_are_reported_as_helm_reports_them() {
    let ours = results(&|context: &TestContext| context.chartkit());
    let helm = chartkit_tests::peers::helm_or_skip(
        "yaml_errors_are_reported_as_helm_reports_them (compared with the kept answers of helm instead)",
    );
    let theirs: BTreeMap<String, String> = match helm {
        Some(_) => {
            let theirs = results(&|context: &TestContext| context.helm().unwrap());
            let kept = serde_json::to_string_pretty(&theirs).unwrap() + "\n";
            if std::fs::read_to_string(workspace_file(GOLDEN))
                .ok()
                .as_deref()
                != Some(&kept)
            {
                std::fs::write(workspace_file(GOLDEN), &kept).unwrap();
                eprintln!("{GOLDEN} updated with helm's answers: commit it");
            }
            theirs
        }
        None => serde_json::from_str(
            &std::fs::read_to_string(workspace_file(GOLDEN)).expect("helm's kept answers"),
        )
        .expect("helm's kept answers are JSON"),
    };
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>(),
        "the cases changed: run with helm installed to keep its answers"
    );
    let known = known_differences();
    let mut unexpected = Vec::new();
    let mut fixed = Vec::new();
    let mut agreed = 0;
    for (case, theirs) in &theirs {
        let ours = &ours[case];
        match (ours == theirs, known.contains(case)) {
            (true, false) => agreed += 1,
            (true, true) => fixed.push(case.clone()),
            (false, false) => unexpected.push(format!(
                "{case}\n    chartkit: {ours:?}\n    helm:     {theirs:?}"
            )),
            (false, true) => {}
        }
    }
    let failing_in_helm = theirs.values().filter(|e| !e.is_empty()).count();
    eprintln!(
        "yaml errors: {agreed} of {} cases agree with helm ({failing_in_helm} are errors in helm), {} known differences, {} new",
        theirs.len(),
        known.len(),
        unexpected.len()
    );
    assert!(theirs.len() >= 240, "only {} cases", theirs.len());
    assert!(
        unexpected.is_empty() && fixed.is_empty(),
        "{} new differences from helm:\n{}\n\n{} listed in {KNOWN} now agree with helm; remove them:\n{:#?}",
        unexpected.len(),
        unexpected.join("\n"),
        fixed.len(),
        fixed
    );
}
