//! `chartkit template` failures say what Helm says: the file and line of a failing
//! template, or the path of the value that breaks the schema. Each case also runs the
//! real helm, when installed, and checks that chartkit prints helm's message.

use chartkit_tests::peers::helm_or_skip;
use chartkit_tests::{TestContext, stderr, stdout};

/// Writes a chart named `demo` with the given files and returns its directory.
fn chart(context: &TestContext, files: &[(&str, &str)]) -> String {
    context.demo_chart(files)
}

/// Runs chartkit (and helm, if present) on the chart; returns chartkit's error message
/// after checking it contains helm's.
fn failure(context: &TestContext, chart: &str, extra: &[&str], test: &str) -> String {
    let mut args = vec!["template", "rel", chart];
    args.extend_from_slice(extra);
    let ours = context.run(&args);
    assert!(!ours.status.success(), "chartkit should fail");
    let message = stderr(&ours);
    let message = message.strip_prefix("Error: ").unwrap_or(&message);
    let message = message
        .split("\nhint: ")
        .next()
        .unwrap()
        .trim_end()
        .to_owned();
    if helm_or_skip(test).is_some() {
        let helm = context.helm().unwrap().args(&args).output().unwrap();
        assert!(!helm.status.success(), "helm should fail");
        let theirs = stderr(&helm);
        let theirs = theirs.strip_prefix("Error: ").unwrap_or(&theirs);
        let theirs = theirs
            .split("\n\nUse --debug flag")
            .next()
            .unwrap()
            .trim_end();
        assert_eq!(message, theirs, "chartkit's message differs from helm's");
    }
    message
}

#[test]
fn a_missing_required_value_names_the_file_line_and_message() {
    let context = TestContext::new();
    let dir = chart(
        &context,
        &[(
            "templates/cm.yaml",
            "kind: ConfigMap\ndata:\n  who: {{ required \"A valid .Values.who entry required!\" .Values.who }}\n",
        )],
    );
    let message = failure(
        &context,
        &dir,
        &[],
        "a_missing_required_value_names_the_file_line_and_message",
    );
    assert_eq!(
        message,
        "execution error at (demo/templates/cm.yaml:3:10): A valid .Values.who entry required!"
    );
    // With the value set, the same chart renders.
    let ok = context.run(&["template", "rel", &dir, "--set", "who=me"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
}

#[test]
fn a_schema_violation_names_the_chart_and_value_path() {
    let context = TestContext::new();
    let dir = chart(
        &context,
        &[
            ("values.yaml", "age: 3\n"),
            (
                "values.schema.json",
                r#"{"type":"object","required":["name"],"properties":{"age":{"type":"integer","minimum":0}}}"#,
            ),
            ("templates/cm.yaml", "kind: ConfigMap\n"),
        ],
    );
    let message = failure(
        &context,
        &dir,
        &["--set", "age=-4"],
        "a_schema_violation_names_the_chart_and_value_path",
    );
    assert_eq!(
        message,
        "values don't meet the specifications of the schema(s) in the following chart(s):\ndemo:\n- at '': missing property 'name'\n- at '/age': minimum: got -4, want 0"
    );
    let skipped = context.run(&["template", "rel", &dir, "--skip-schema-validation"]);
    assert!(skipped.status.success(), "{}", stderr(&skipped));
}

#[test]
fn a_template_parse_error_names_the_file_and_line() {
    let context = TestContext::new();
    let dir = chart(
        &context,
        &[(
            "templates/cm.yaml",
            "kind: ConfigMap\ndata:\n  a: {{ .Values.a \n",
        )],
    );
    let message = failure(
        &context,
        &dir,
        &[],
        "a_template_parse_error_names_the_file_and_line",
    );
    assert_eq!(
        message,
        "parse error at (demo/templates/cm.yaml:4): unclosed action started at demo/templates/cm.yaml:3"
    );
}

#[test]
fn fail_reports_its_message_with_the_location() {
    let context = TestContext::new();
    let dir = chart(
        &context,
        &[
            (
                "templates/_helpers.tpl",
                "{{- define \"demo.check\" -}}\n{{- if not .Values.ok }}{{ fail \"set ok=true to render\" }}{{ end -}}\n{{- end -}}\n",
            ),
            (
                "templates/cm.yaml",
                "kind: ConfigMap\n{{ include \"demo.check\" . }}\n",
            ),
        ],
    );
    let message = failure(
        &context,
        &dir,
        &[],
        "fail_reports_its_message_with_the_location",
    );
    assert_eq!(
        message,
        "execution error at (demo/templates/cm.yaml:2:3): set ok=true to render"
    );
}

#[test]
fn output_that_is_not_yaml_names_the_template() {
    let context = TestContext::new();
    let dir = chart(&context, &[("templates/bad.yaml", "- just\n- a list\n")]);
    let message = failure(
        &context,
        &dir,
        &[],
        "output_that_is_not_yaml_names_the_template",
    );
    assert_eq!(
        message,
        "YAML parse error on demo/templates/bad.yaml: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type util.SimpleHead"
    );
}

/// Like `helm template --debug`, `--debug` prints the invalid output before the error;
/// without it, a hint says so.
#[test]
fn debug_prints_output_that_is_not_yaml() {
    let context = TestContext::new();
    let dir = chart(
        &context,
        &[
            (
                "templates/bad.yaml",
                "kind: Pod
metadata:
  name: x
invalid
",
            ),
            (
                "templates/good.yaml",
                "kind: ConfigMap
",
            ),
        ],
    );
    let plain = context.run(&["template", "rel", &dir]);
    assert!(!plain.status.success());
    assert!(stdout(&plain).is_empty());
    assert!(
        stderr(&plain).contains("\nhint: run with --debug"),
        "{}",
        stderr(&plain)
    );

    let debug = context.run(&["template", "rel", &dir, "--debug"]);
    assert!(!debug.status.success());
    let printed = stdout(&debug);
    assert_eq!(
        printed,
        "---\n# Source: demo/templates/bad.yaml\nkind: Pod\nmetadata:\n  name: x\ninvalid\n\n---\n# Source: demo/templates/good.yaml\nkind: ConfigMap\n"
    );
    assert!(stderr(&debug).starts_with("Error: YAML parse error on demo/templates/bad.yaml"));
    if helm_or_skip("debug_prints_output_that_is_not_yaml").is_some() {
        let helm = context
            .helm()
            .unwrap()
            .args(["template", "rel", &dir, "--debug"])
            .output()
            .unwrap();
        // Go prints the files in map order, so compare the documents as sets (each
        // without the blank line that separates it from the next).
        let normalise = |text: &str| {
            let mut documents: Vec<String> = chartkit_tests::corpus::documents(text)
                .into_iter()
                .map(|(_, document)| document.trim_end().to_owned())
                .collect();
            documents.sort();
            documents
        };
        assert_eq!(normalise(&printed), normalise(&stdout(&helm)));
    }
}

#[test]
fn schema_patterns_are_gos_regular_expressions() {
    let context = TestContext::new();
    // `[\w-\.]` is `\w`, `-` and `.` to Go's regexp (and an invalid ECMA-262 class);
    // `\s` has no `\v`.
    let dir = chart(
        &context,
        &[
            ("values.yaml", "name: my-app.v1\nspace: \" \"\n"),
            (
                "values.schema.json",
                r#"{"type":"object","properties":{"name":{"type":"string","pattern":"^[\\w-\\.]+$"},"space":{"pattern":"^\\s$"}}}"#,
            ),
            ("templates/cm.yaml", "kind: ConfigMap\n"),
        ],
    );
    let ok = context.run(&["template", "rel", &dir]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    // One failure at a time: helm lists several in Go's random map order.
    let message = failure(
        &context,
        &dir,
        &["--set", "name=a/b"],
        "schema_patterns_are_gos_regular_expressions",
    );
    assert_eq!(
        message,
        "values don't meet the specifications of the schema(s) in the following chart(s):\ndemo:\n- at '/name': 'a/b' does not match pattern '^[\\\\w-\\\\.]+$'"
    );
    let message = failure(
        &context,
        &dir,
        &["--set-json", r#"space="\u000b""#],
        "schema_patterns_are_gos_regular_expressions",
    );
    assert_eq!(
        message,
        "values don't meet the specifications of the schema(s) in the following chart(s):\ndemo:\n- at '/space': '\\v' does not match pattern '^\\\\s$'"
    );
}
