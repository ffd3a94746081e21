//! YAML as go-yaml v2 reads it (what Helm reads values, Chart.yaml, rendered manifests and
//! `fromYaml` with): tabs after a key's `:` are separation and after `-` an error, NEL,
//! LS and PS end lines, control characters, `\/` and `%YAML 1.2` are refused, and values
//! nest 10,000 levels deep. Every case runs through chartkit and, when installed, helm;
//! the expected results are what helm 4.1.4 gave.

use std::collections::BTreeMap;
use std::process::Command;

use chartkit_tests::peers::helm_or_skip;
use chartkit_tests::{TestContext, stderr, stdout};

/// `(name, YAML text, what fromYaml gives as JSON)`, as helm 4.1.4 read each text.
const FROM_YAML_CASES: &[(&str, &str, &str)] = &[
    // A block scalar that ends the text without a line break has none in its value.
    ("block_eof_literal", "a: |\n  x", "{\"a\":\"x\"}"),
    ("block_eof_folded", "a: >\n  x\n  y", "{\"a\":\"x y\"}"),
    ("block_eof_keep", "a: |+\n  x", "{\"a\":\"x\"}"),
    (
        "block_eof_then_key",
        "a: |\n  x\nb: 1",
        "{\"a\":\"x\\n\",\"b\":1}",
    ),
    // go-yaml does not ask the lines of a flow collection or a quoted scalar to be
    // indented past the block they are in.
    ("flow_under_indented", "a: [1,\n2]\n", "{\"a\":[1,2]}"),
    (
        "flow_under_indented_nested",
        "k:\n  d: [1,\n  2]\n",
        "{\"k\":{\"d\":[1,2]}}",
    ),
    (
        "flow_map_under_indented",
        "k:\n  d: {a: 1,\n b: 2}\n",
        "{\"k\":{\"d\":{\"a\":1,\"b\":2}}}",
    ),
    (
        "quoted_under_indented",
        "k:\n  a: \"x\n y\"\n",
        "{\"k\":{\"a\":\"x y\"}}",
    ),
    (
        "c1",
        "a: x\u{80}y\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: control characters are not allowed\"}",
    ),
    (
        "ctrl",
        "a: x\u{1}y\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: control characters are not allowed\"}",
    ),
    (
        "ctrl_dq",
        "a: \"x\u{1}y\"\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: control characters are not allowed\"}",
    ),
    (
        "ctrl_in_comment",
        "a: 1 # \u{2}\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: control characters are not allowed\"}",
    ),
    (
        "del",
        "a: x\u{7f}y\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: control characters are not allowed\"}",
    ),
    (
        "esc_bs_slash",
        "a: \"x\\\\\\\\/y\"\n",
        "{\"a\":\"x\\\\\\\\/y\"}",
    ),
    (
        "esc_slash",
        "a: \"x\\/y\"\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: found unknown escape character\"}",
    ),
    ("esc_sq", "a: \"it\\\\'s\"\n", "{\"a\":\"it\\\\'s\"}"),
    ("esc_sq_key", "\"k\\\\'\": v\n", "{\"k\\\\'\":\"v\"}"),
    (
        "fffe",
        "a: x\u{fffe}y\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: control characters are not allowed\"}",
    ),
    ("ls_comment", "a: 1 # c\u{2028}b: 2\n", "{\"a\":1,\"b\":2}"),
    ("ls_dq", "a: \"x\u{2028}y\"\n", "{\"a\":\"x\\u2028y\"}"),
    (
        "ls_plain",
        "a: x\u{2028}y\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: line 3: could not find expected ':'\"}",
    ),
    ("ls_sq", "a: 'x\u{2028}y'\n", "{\"a\":\"x\\u2028y\"}"),
    ("nel_between", "a: 1\u{85}b: 2\n", "{\"a\":1,\"b\":2}"),
    (
        "nel_block",
        "a: |\n  x\u{85}y\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: line 4: could not find expected ':'\"}",
    ),
    ("nel_dq", "a: \"x\u{85}y\"\n", "{\"a\":\"x y\"}"),
    (
        "nel_plain",
        "a: x\u{85}y\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: line 3: could not find expected ':'\"}",
    ),
    (
        "ps_block",
        "a: |\n  x\u{2029}y\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: line 4: could not find expected ':'\"}",
    ),
    ("tab_after_block_hdr", "a: |-\t\n  x\n", "{\"a\":\"x\"}"),
    (
        "tab_after_seq_dash_nl",
        "a:\n-\t\n  b\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: line 2: found character that cannot start any token\"}",
    ),
    (
        "tab_after_spaces",
        "a:\n  \tb: 1\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: line 2: found character that cannot start any token\"}",
    ),
    ("tab_alias", "x: &a 1\ny:\t*a\n", "{\"true\":1,\"x\":1}"),
    (
        "tab_anchor",
        "a: &x\tb\nc: *x\n",
        "{\"a\":\"b\",\"c\":\"b\"}",
    ),
    ("tab_before_colon_dq", "\"a\"\t:\tb\n", "{\"a\":\"b\"}"),
    (
        "tab_between_keys",
        "a: 1\nb:\t2\nc: 3\n",
        "{\"a\":1,\"b\":2,\"c\":3}",
    ),
    (
        "tab_blank_line",
        "a: 1\n\t\nb: 2\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: line 2: found a tab character that violates indentation\"}",
    ),
    (
        "tab_block",
        "a: |\n  x\n\ty\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: line 3: found a tab character where an indentation space is expected\"}",
    ),
    (
        "tab_block_blank",
        "a: |\n  x\n\t\n  y\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: line 3: found a tab character where an indentation space is expected\"}",
    ),
    (
        "tab_block_content",
        "a: |\n  x\n  \ty\n",
        "{\"a\":\"x\\n\\ty\\n\"}",
    ),
    ("tab_colon_alpha", "a:\tb\n", "{\"a\":\"b\"}"),
    ("tab_colon_dash", "a:\t-b\n", "{\"a\":\"-b\"}"),
    ("tab_colon_nl", "a:\t\n  b: 1\n", "{\"a\":{\"b\":1}}"),
    ("tab_colon_num", "a:\t1\n", "{\"a\":1}"),
    ("tab_colon_quote", "a:\t\"x\"\n", "{\"a\":\"x\"}"),
    ("tab_comment_after", "a: b\t#\tc\n", "{\"a\":\"b\"}"),
    (
        "tab_comment_line",
        "a: 1\n\t# c\nb: 2\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: line 2: found a tab character that violates indentation\"}",
    ),
    (
        "tab_complex_colon",
        "? a\n:\tb\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: line 2: found character that cannot start any token\"}",
    ),
    ("tab_cr", "a:\tb\nc:\td\n", "{\"a\":\"b\",\"c\":\"d\"}"),
    (
        "tab_dash",
        "l:\n-\tb\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: line 2: found character that cannot start any token\"}",
    ),
    (
        "tab_dash2",
        "l:\n- \tb\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: line 2: found character that cannot start any token\"}",
    ),
    (
        "tab_doc",
        "---\ta: 1\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: mapping values are not allowed in this context\"}",
    ),
    ("tab_doc_end", "a: 1\n...\t\n", "{\"a\":1}"),
    ("tab_dq_cont", "a: \"x\n\ty\"\n", "{\"a\":\"x y\"}"),
    ("tab_dq_in", "a: \"x\\\ty\"\n", "{\"a\":\"x\\ty\"}"),
    ("tab_dq_multiline", "a: \"x\n\t\ty\"\n", "{\"a\":\"x y\"}"),
    (
        "tab_first",
        "\ta: 1\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: found character that cannot start any token\"}",
    ),
    ("tab_flow", "a: [1,\t2,\n\t3]\n", "{\"a\":[1,2,3]}"),
    (
        "tab_flow_seq_line",
        "a: [\n\t1\n\t]\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: line 3: found a tab character that violates indentation\"}",
    ),
    ("tab_flowmap", "{a:\tb}\n", "{\"a\":\"b\"}"),
    (
        "tab_folded",
        "a: >\n  x\ty\n  z\n",
        "{\"a\":\"x\\ty z\\n\"}",
    ),
    ("tab_header", "a: |\t# c\n  x\n", "{\"a\":\"x\\n\"}"),
    ("tab_in_plain", "a: x\ty\n", "{\"a\":\"x\\ty\"}"),
    (
        "tab_indent",
        "a:\n\tb: 1\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: line 2: found character that cannot start any token\"}",
    ),
    ("tab_key", "a\t: b\n", "{\"a\":\"b\"}"),
    ("tab_key_flow", "{a\t: 1, b:\t2}\n", "{\"a\":1,\"b\":2}"),
    ("tab_multi_plain", "a: x\n   \t y\n", "{\"a\":\"x y\"}"),
    (
        "tab_nested",
        "a:\n  b:\tc\n  d:\t[1,\t2]\n",
        "{\"a\":{\"b\":\"c\",\"d\":[1,2]}}",
    ),
    (
        "tab_only",
        "\t\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: found character that cannot start any token\"}",
    ),
    ("tab_plain_cont", "a: x\n  \ty\n", "{\"a\":\"x y\"}"),
    (
        "tab_plain_cont0",
        "a: x\n\ty\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: line 2: found a tab character that violates indentation\"}",
    ),
    (
        "tab_q",
        "?\ta\n: b\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: found character that cannot start any token\"}",
    ),
    (
        "tab_qm_flow",
        "[?\ta]\n",
        "{\"Error\":\"error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}\"}",
    ),
    ("tab_seq_colon", "l:\n- a:\tb\n", "{\"l\":[{\"a\":\"b\"}]}"),
    (
        "tab_seq_in_map",
        "a:\n- x\n-\ty\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: line 3: found character that cannot start any token\"}",
    ),
    (
        "tab_seq_map",
        "- a:\t1\n  b:\t2\n",
        "{\"Error\":\"error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}\"}",
    ),
    ("tab_sq_key", "'a':\tb\n", "{\"a\":\"b\"}"),
    ("tab_sq_multiline", "a: 'x\n\ty'\n", "{\"a\":\"x y\"}"),
    ("tab_tag", "a: !!str\t1\n", "{\"a\":\"1\"}"),
    ("tab_trailing", "a: 1\t\nb: 2\t# c\n", "{\"a\":1,\"b\":2}"),
    ("yaml11", "%YAML 1.1\n---\na: 1\n", "{\"a\":1}"),
    (
        "yaml11_dup",
        "%YAML 1.1\n%YAML 1.1\n---\na: 1\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: line 1: found duplicate %YAML directive\"}",
    ),
    (
        "yaml12",
        "%YAML 1.2\n---\na: 1\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: found incompatible YAML document\"}",
    ),
    (
        "yaml_nodoc",
        "%YAML 1.1\na: 1\n",
        "{\"Error\":\"error converting YAML to JSON: yaml: line 1: did not find expected \\u003cdocument start\\u003e\"}",
    ),
];

/// Renders every case of `cases` through `fromYaml` in one chart; each case's result by
/// name. `program` is chartkit or helm, run in `context`.
fn from_yaml_results(
    context: &TestContext,
    mut program: Command,
    cases: &[(&str, &str, &str)],
) -> BTreeMap<String, String> {
    let mut files = vec![(
        "templates/cm.yaml".to_owned(),
        "kind: ConfigMap\ndata:\n{{- range $path, $_ := .Files.Glob \"cases/*\" }}\n  {{ base $path }}: {{ fromYaml ($.Files.Get $path) | toJson | quote }}\n{{- end }}\n".to_owned(),
    )];
    files.extend(
        cases
            .iter()
            .map(|(name, text, _)| (format!("cases/{name}"), (*text).to_owned())),
    );
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    let dir = context.demo_chart(&files);
    let output = program.args(["template", &dir]).output().expect("run");
    assert!(output.status.success(), "{}", stderr(&output));
    stdout(&output)
        .lines()
        .filter_map(|line| line.strip_prefix("  "))
        .map(|line| {
            let (name, quoted) = line.split_once(": ").expect("name: result");
            let json: String = serde_json::from_str(quoted).expect("a quoted result");
            (name.to_owned(), json)
        })
        .collect()
}

#[test]
fn from_yaml_reads_tabs_line_breaks_controls_escapes_and_directives_as_go_yaml_does() {
    let context = TestContext::new();
    let ours = from_yaml_results(&context, context.chartkit(), FROM_YAML_CASES);
    for (name, text, expected) in FROM_YAML_CASES {
        assert_eq!(
            ours.get(*name).map(String::as_str),
            Some(*expected),
            "{name}: {text:?}"
        );
    }
    if helm_or_skip(
        "from_yaml_reads_tabs_line_breaks_controls_escapes_and_directives_as_go_yaml_does",
    )
    .is_some()
    {
        let context = TestContext::new();
        let theirs = from_yaml_results(&context, context.helm().unwrap(), FROM_YAML_CASES);
        assert_eq!(ours, theirs);
    }
}

/// Runs chartkit and, when installed, helm with `args` in `context`; checks they agree
/// on success, stdout and the error message, and returns chartkit's output.
fn both(context: &TestContext, args: &[&str], test: &str) -> (bool, String, String) {
    let ours = context.run(args);
    let message = |text: String, prefix: &str| {
        text.lines()
            .filter(|l| l.starts_with(prefix))
            .map(|l| l[prefix.len()..].to_owned())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let result = (
        ours.status.success(),
        stdout(&ours),
        message(stderr(&ours), "Error: "),
    );
    if helm_or_skip(test).is_some() {
        let helm = context.helm().unwrap().args(args).output().unwrap();
        assert_eq!(helm.status.success(), result.0, "{}", stderr(&helm));
        assert_eq!(stdout(&helm), result.1);
        assert_eq!(message(stderr(&helm), "Error: "), result.2);
    }
    result
}

#[test]
fn a_tab_after_a_keys_colon_is_read_in_values_chart_yaml_and_rendered_output() {
    let test = "a_tab_after_a_keys_colon_is_read_in_values_chart_yaml_and_rendered_output";
    let context = TestContext::new();
    let dir = context.demo_chart(&[
        ("values.yaml", "image:\n  tag:\tv1\t# pinned\nports:\t[80,\t443]\n"),
        (
            "templates/cm.yaml",
            "kind: ConfigMap\ndata:\n  tag:\t{{ .Values.image.tag }}\n  ports: {{ .Values.ports | toJson | quote }}\n",
        ),
    ]);
    let (ok, out, _) = both(&context, &["template", &dir], test);
    assert!(ok);
    assert_eq!(
        out,
        "---\n# Source: demo/templates/cm.yaml\nkind: ConfigMap\ndata:\n  tag:\tv1\n  ports: \"[80,443]\"\n"
    );
    std::fs::write(
        format!("{dir}/Chart.yaml"),
        "apiVersion:\tv2\nname:\tdemo\nversion:\t0.1.0\ndescription:\tTabs\tafter keys\n",
    )
    .unwrap();
    let (ok, out, _) = both(&context, &["show", "chart", &dir], test);
    assert!(ok);
    assert_eq!(
        out,
        // Helm's metadata check turns white space in a description into spaces.
        "apiVersion: v2\ndescription: Tabs after keys\nname: demo\nversion: 0.1.0\n\n"
    );
}

#[test]
fn a_tab_after_a_dash_or_as_indentation_is_refused_as_helm_refuses_it() {
    let test = "a_tab_after_a_dash_or_as_indentation_is_refused_as_helm_refuses_it";
    let context = TestContext::new();
    let dir = context.demo_chart(&[("templates/cm.yaml", "kind: ConfigMap\nl:\n-\ta\n")]);
    let (ok, _, message) = both(&context, &["template", &dir], test);
    assert!(!ok);
    assert_eq!(
        message,
        "YAML parse error on demo/templates/cm.yaml: error converting YAML to JSON: yaml: line 3: found character that cannot start any token"
    );
    let dir = context.demo_chart(&[
        ("values.yaml", "a: 1\n\t\nb: 2\n"),
        ("templates/cm.yaml", "kind: ConfigMap\n"),
    ]);
    let ours = context.run(&["template", &dir]);
    assert!(!ours.status.success());
    assert!(
        stderr(&ours).contains("found a tab character that violates indentation"),
        "{}",
        stderr(&ours)
    );
    if helm_or_skip(test).is_some() {
        let helm = context
            .helm()
            .unwrap()
            .args(["template", &dir])
            .output()
            .unwrap();
        assert!(stderr(&helm).contains("line 2: found a tab character that violates indentation"));
    }
}

#[test]
fn rendered_output_helm_refuses_as_invalid_yaml_is_refused_with_its_message() {
    let test = "rendered_output_helm_refuses_as_invalid_yaml_is_refused_with_its_message";
    let prefix =
        "YAML parse error on demo/templates/cm.yaml: error converting YAML to JSON: yaml: ";
    for (document, problem) in [
        (
            "kind: ConfigMap\ndata:\n  a: x\u{1}y\n",
            "control characters are not allowed",
        ),
        (
            "kind: ConfigMap\ndata:\n  a: x\u{9f}y\n",
            "control characters are not allowed",
        ),
        (
            "kind: ConfigMap\ndata:\n  a: x\u{2028}y\n",
            "line 5: could not find expected ':'",
        ),
        (
            "kind: ConfigMap\ndata:\n  a: x\u{85}y\n",
            "line 5: could not find expected ':'",
        ),
        (
            "%YAML 1.2\n---\nkind: ConfigMap\n",
            "found incompatible YAML document",
        ),
        (
            "kind: ConfigMap\ndata:\n  a: \"x\\/y\"\n",
            "line 3: found unknown escape character",
        ),
    ] {
        let context = TestContext::new();
        let dir = context.demo_chart(&[("templates/cm.yaml", document)]);
        let (ok, _, message) = both(&context, &["template", &dir], test);
        assert!(!ok, "{document:?}");
        assert_eq!(message, format!("{prefix}{problem}"), "{document:?}");
    }
    // What go-yaml reads that YAML 1.2 does not: `\'`, a line separator in quotes.
    let context = TestContext::new();
    let dir = context.demo_chart(&[(
        "templates/cm.yaml",
        "kind: ConfigMap\ndata:\n  a: \"it\\'s\"\n  b: \"x\u{2028}y\"\n",
    )]);
    let (ok, out, _) = both(&context, &["template", &dir], test);
    assert!(ok);
    assert!(
        out.ends_with("  a: \"it\\'s\"\n  b: \"x\u{2028}y\"\n"),
        "{out}"
    );
}

#[test]
fn values_nest_as_deep_as_go_yaml_allows() {
    let test = "values_nest_as_deep_as_go_yaml_allows";
    let context = TestContext::new();
    // The values map and 9,999 lists: 10,000 levels, helm's limit.
    let deep = format!("a:\n{}x\n", "- ".repeat(9_999));
    let dir = context.demo_chart(&[
        ("values.yaml", deep.as_str()),
        ("deep.txt", deep.as_str()),
        (
            "templates/cm.yaml",
            "kind: ConfigMap\ndata:\n  n: \"{{ len .Values.a }}\"\n  yaml: \"{{ toYaml .Values | len }}\"\n  json: \"{{ toJson .Values | len }}\"\n  print: \"{{ printf \"%v\" .Values | len }}\"\n  fromYaml: \"{{ .Files.Get \"deep.txt\" | fromYaml | toJson | len }}\"\n  deepCopy: \"{{ deepCopy .Values | toJson | len }}\"\n  valuesYaml: \"{{ .Values.YAML | len }}\"\n  pretty: \"{{ toYamlPretty .Values | len }}\"\n  toml: \"{{ toToml .Values | len }}\"\n  goSyntax: \"{{ printf \"%#v\" .Values | len }}\"\n",
        ),
    ]);
    let (ok, out, message) = both(&context, &["template", &dir], test);
    assert!(ok, "{message}");
    assert!(
        out.ends_with("  n: \"1\"\n  yaml: \"20002\"\n  json: \"20007\"\n  print: \"20006\"\n  fromYaml: \"20007\"\n  deepCopy: \"20007\"\n  valuesYaml: \"20003\"\n  pretty: \"20004\"\n  toml: \"20006\"\n  goSyntax: \"160006\"\n"),
        "{out}"
    );

    // A rendered document one level deeper is refused by the JSON decoder.
    let context = TestContext::new();
    let document = format!("kind: ConfigMap\ndata:\n  a:\n  {}x\n", "- ".repeat(9_999));
    let dir = context.demo_chart(&[("templates/cm.yaml", document.as_str())]);
    let (ok, _, message) = both(&context, &["template", &dir], test);
    assert!(!ok);
    assert_eq!(
        message,
        "YAML parse error on demo/templates/cm.yaml: error unmarshaling JSON: while decoding JSON: invalid character '[' exceeded max depth"
    );
}

/// Flow collections nest as deep as go-yaml reads them (10,000 levels; saphyr-parser,
/// underneath, counts only 255 and chartkit reads deeper ones in parts): in a values
/// file, the chart's values.yaml, a rendered template and `fromYaml`. One level more is
/// go-yaml's error; 10,000 lists in the values map are one level more than JSON
/// decodes.
#[test]
fn flow_collections_nest_to_go_yamls_10000_levels_and_no_deeper() {
    let test = "flow_collections_nest_to_go_yamls_10000_levels_and_no_deeper";
    let nested = |levels: usize| format!("{}1{}", "[".repeat(levels), "]".repeat(levels));
    for levels in [256, 300, 5_000, 9_999] {
        let context = TestContext::new();
        let values = format!("a: {}\n", nested(levels));
        let dir = context.demo_chart(&[
            ("values.yaml", values.as_str()),
            ("deep.txt", values.as_str()),
            (
                "templates/cm.yaml",
                "kind: ConfigMap\ndata:\n  values: \"{{ toJson .Values.a | len }}\"\n  fromYaml: \"{{ .Files.Get \"deep.txt\" | fromYaml | toJson | len }}\"\n",
            ),
        ]);
        let user = context.path("user.yaml");
        std::fs::write(&user, &values).unwrap();
        let (ok, out, message) = both(
            &context,
            &["template", &dir, "-f", &user.display().to_string()],
            test,
        );
        assert!(ok, "{levels}: {message}");
        let json = 2 * levels + 1;
        assert!(
            out.ends_with(&format!(
                "  values: \"{json}\"\n  fromYaml: \"{}\"\n",
                json + 6
            )),
            "{levels}: {out}"
        );
        // In a rendered document, under two maps.
        let document = format!("kind: ConfigMap\ndata:\n  a: {}\n", nested(levels - 2));
        std::fs::write(format!("{dir}/templates/cm.yaml"), &document).unwrap();
        std::fs::remove_file(format!("{dir}/values.yaml")).unwrap();
        let (ok, out, message) = both(&context, &["template", &dir], test);
        assert!(ok, "{levels}: {message}");
        assert!(out.ends_with(&document), "{levels}");
    }
    let context = TestContext::new();
    for (levels, error) in [
        (
            10_001,
            "error converting YAML to JSON: yaml: exceeded max depth of 10000",
        ),
        (
            10_000,
            "error unmarshaling JSON: while decoding JSON: invalid character '[' exceeded max depth",
        ),
    ] {
        let user = context.path("user.yaml");
        std::fs::write(&user, format!("a: {}\n", nested(levels))).unwrap();
        let dir = context.demo_chart(&[("templates/cm.yaml", "kind: ConfigMap\n")]);
        let (ok, _, message) = both(
            &context,
            &["template", &dir, "-f", &user.display().to_string()],
            test,
        );
        assert!(!ok);
        assert_eq!(
            message,
            format!(
                "failed to parse {}: cannot unmarshal yaml document: {error}",
                user.display()
            )
        );
    }
}

/// A directive in a values file: helm cuts the file at its `---` lines before go-yaml
/// reads it, so `%YAML 1.1` followed by `---` is a document of only a directive, which
/// go-yaml refuses; `%YAML 1.2` and other versions are incompatible, a repeated
/// directive is refused, `%TAG` needs its `---` too, and a directive go-yaml does not
/// know is an error of its scanner.
#[test]
fn directives_in_values_files_are_refused_as_helm_refuses_them() {
    let test = "directives_in_values_files_are_refused_as_helm_refuses_them";
    let prefix = "cannot unmarshal yaml document: error converting YAML to JSON: yaml: ";
    for (values, problem) in [
        (
            "%YAML 1.1\n---\na: 1\n",
            "line 1: did not find expected <document start>",
        ),
        (
            "%YAML 1.1\na: 1\n",
            "line 1: did not find expected <document start>",
        ),
        ("%YAML 1.2\n---\na: 1\n", "found incompatible YAML document"),
        ("%YAML 2.0\na: 1\n", "found incompatible YAML document"),
        (
            "%YAML 1.1\n%YAML 1.1\na: 1\n",
            "line 1: found duplicate %YAML directive",
        ),
        (
            "%TAG !e! tag:example.com,2000:\n---\na: 1\n",
            "line 1: did not find expected <document start>",
        ),
        (
            "%TAG !e! tag:a,2000:\n%TAG !e! tag:b,2000:\na: 1\n",
            "line 1: found duplicate %TAG directive",
        ),
        ("%FOO bar\n---\na: 1\n", "found unknown directive name"),
        ("%YAML x\na: 1\n", "did not find expected version number"),
        (
            "%YAML 1.1 x\na: 1\n",
            "did not find expected comment or line break",
        ),
        ("a:\n%b\n", "line 2: found unknown directive name"),
    ] {
        let context = TestContext::new();
        let dir = context.demo_chart(&[("templates/cm.yaml", "kind: ConfigMap\n")]);
        let user = context.path("user.yaml");
        std::fs::write(&user, values).unwrap();
        let user = user.display().to_string();
        let (ok, _, message) = both(&context, &["template", &dir, "-f", &user], test);
        assert!(!ok, "{values:?}");
        assert_eq!(
            message,
            format!("failed to parse {user}: {prefix}{problem}"),
            "{values:?}"
        );
        // The chart's own values.yaml, named by its path where helm names it alone.
        std::fs::write(format!("{dir}/values.yaml"), values).unwrap();
        let ours = context.run(&["template", &dir]);
        assert_eq!(
            stderr(&ours),
            format!(
                "Error: cannot load the chart at `{dir}`: `{dir}/values.yaml`: {prefix}{problem}\n"
            ),
            "{values:?}"
        );
    }
}

/// Values files with several documents, in the chart and given with `-f`: cut at lines
/// beginning with `---` (a comment may follow), each read up to its first document's
/// end, later ones merged over earlier ones with lists replaced, as helm 4 reads them.
#[test]
fn values_files_with_several_documents_merge_as_helm_merges_them() {
    let test = "values_files_with_several_documents_merge_as_helm_merges_them";
    let context = TestContext::new();
    let dir = context.demo_chart(&[
        (
            "values.yaml",
            "l: [1, 2]\nm: {x: 1, k: [a]}\n--- # second\nl: [3]\nm: {k: [b], z: 2}\n---\n---\nw: 1\n...\nignored: true\n",
        ),
        ("templates/t.yaml", "v: {{ toJson .Values }}\n"),
    ]);
    let user = context.path("user.yaml");
    std::fs::write(&user, "m: {x: null}\n---\nl: []\n").unwrap();
    let user = user.display().to_string();
    let (ok, out, _) = both(&context, &["template", &dir, "-f", &user], test);
    assert!(ok);
    assert_eq!(
        out,
        "---\n# Source: demo/templates/t.yaml\nv: {\"l\":[],\"m\":{\"k\":[\"b\"],\"z\":2},\"w\":1}\n"
    );
}
