//! Parse and execution errors, worded as `helm template` prints them.

mod common;

use common::{helm_binary, helm_error, render_error};

type ErrorCase = (&'static [(&'static str, &'static str)], &'static str);

const CASES: &[ErrorCase] = &[
    // Parse errors.
    (
        &[("t.yaml", "x: {{ if }}")],
        "parse error at (c/templates/t.yaml:1): missing value for if",
    ),
    (
        &[("t.yaml", "{{ nope }}")],
        "parse error at (c/templates/t.yaml:1): function \"nope\" not defined",
    ),
    (
        &[("t.yaml", "a\n{{ .X")],
        "parse error at (c/templates/t.yaml:2): unclosed action",
    ),
    (
        &[("t.yaml", "{{ if true }}x")],
        "parse error at (c/templates/t.yaml:1): unexpected EOF",
    ),
    (
        &[("t.yaml", "{{ end }}")],
        "parse error at (c/templates/t.yaml:1): unexpected {{end}}",
    ),
    (
        &[("t.yaml", "{{ $x }}")],
        "parse error at (c/templates/t.yaml:1): undefined variable \"$x\"",
    ),
    (
        &[("t.yaml", "{{ break }}")],
        "parse error at (c/templates/t.yaml:1): {{break}} outside {{range}}",
    ),
    (
        &[("t.yaml", "{{ \"a\" | 3 }}")],
        "parse error at (c/templates/t.yaml:1): non executable command in pipeline stage 2",
    ),
    (
        &[("t.yaml", "{{ range $a, $b, $c := . }}{{ end }}")],
        "parse error at (c/templates/t.yaml:1): too many declarations in range",
    ),
    (
        &[("t.yaml", "{{ (1 }}")],
        "parse error at (c/templates/t.yaml:1): unclosed left paren",
    ),
    (
        &[("t.yaml", "{{ 1.x }}")],
        "parse error at (c/templates/t.yaml:1): \"1.x\"",
    ),
    (
        &[("t.yaml", "{{ \"a\".b }}")],
        "parse error at (c/templates/t.yaml:1): unexpected . after term \"\\\"a\\\"\"",
    ),
    (
        &[(
            "t.yaml",
            "{{ define \"a\" }}x{{ end }}{{ define \"a\" }}y{{ end }}",
        )],
        "parse error at (c/templates/t.yaml:1): multiple definition of template \"a\"",
    ),
    // fail and required.
    (
        &[("t.yaml", "{{ fail \"boom\" }}")],
        "execution error at (c/templates/t.yaml:1:3): boom",
    ),
    (
        &[("t.yaml", "x: {{ required \"need x\" .Values.x }}")],
        "execution error at (c/templates/t.yaml:1:6): need x",
    ),
    (
        &[
            (
                "_h.tpl",
                "{{ define \"a\" }}{{ fail \"inner\\nline\" }}{{ end }}",
            ),
            ("t.yaml", "x: {{ include \"a\" . }}"),
        ],
        "execution error at (c/templates/t.yaml:1:6): inner\nline",
    ),
    // Execution errors, as Helm 4's multi-line trace.
    (
        &[("t.yaml", "a: {{ .Values.x.y }}")],
        "c/templates/t.yaml:1:13\n  executing \"c/templates/t.yaml\" at <.Values.x.y>:\n    nil pointer evaluating interface {}.y",
    ),
    (
        &[("t.yaml", "{{ $s := \"str\" }}{{ $s.y }}")],
        "c/templates/t.yaml:1:22\n  executing \"c/templates/t.yaml\" at <$s.y>:\n    can't evaluate field y in type string",
    ),
    (
        &[("t.yaml", "x: {{ upper 3 }}")],
        "c/templates/t.yaml:1:12\n  executing \"c/templates/t.yaml\" at <3>:\n    expected string; found 3",
    ),
    (
        &[("t.yaml", "x: {{ repeat .Values.n \"a\" }}")],
        "c/templates/t.yaml:1:20\n  executing \"c/templates/t.yaml\" at <.Values.n>:\n    wrong type for value; expected int; got interface {}",
    ),
    (
        &[("t.yaml", "x: {{ upper }}")],
        "c/templates/t.yaml:1:6\n  executing \"c/templates/t.yaml\" at <upper>:\n    wrong number of args for upper: want 1 got 0",
    ),
    (
        &[("t.yaml", "x: {{ template \"nope\" }}")],
        "c/templates/t.yaml:1:15\n  executing \"c/templates/t.yaml\" at <{{template \"nope\"}}>:\n    template \"nope\" not defined",
    ),
    (
        &[("t.yaml", "x: {{ include \"nope\" . }}")],
        "c/templates/t.yaml:1:6\n  executing \"c/templates/t.yaml\" at <include \"nope\" .>:\n    error calling include:\ntemplate: no template \"nope\" associated with template \"gotpl\"",
    ),
    (
        &[
            ("_h.tpl", "{{ define \"a\" }}{{ .x.y }}{{ end }}"),
            ("t.yaml", "x: {{ include \"a\" (dict \"x\" nil) }}"),
        ],
        "c/templates/t.yaml:1:6\n  executing \"c/templates/t.yaml\" at <include \"a\" (dict \"x\" nil)>:\n    error calling include:\nc/templates/_h.tpl:1:21\n  executing \"a\" at <.x.y>:\n    nil pointer evaluating interface {}.y",
    ),
    (
        &[("t.yaml", "x: {{ hasKey .Values.missing \"x\" }}")],
        "c/templates/t.yaml:1:20\n  executing \"c/templates/t.yaml\" at <.Values.missing>:\n    wrong type for value; expected map[string]interface {}; got interface {}",
    ),
    (
        &[(
            "t.yaml",
            "{{ $x := .Values.missing }}x: {{ repeat $x \"a\" }}",
        )],
        "c/templates/t.yaml:1:40\n  executing \"c/templates/t.yaml\" at <$x>:\n    invalid value; expected int",
    ),
    (
        &[("t.yaml", "x: {{ range 1.5 }}{{ end }}")],
        "c/templates/t.yaml:1:12\n  executing \"c/templates/t.yaml\" at <1.5>:\n    range can't iterate over 1.5",
    ),
    // Execution errors Helm 4 leaves in Go's one-line form.
    // Go's checks before it allocates: panics that text/template reports as the
    // function's error, at once (larger counts that Go accepts meet the memory budget).
    (
        &[("t.yaml", "x: {{ indent -2 \"a\" }}")],
        "template: c/templates/t.yaml:1:6: executing \"c/templates/t.yaml\" at <indent -2 \"a\">: error calling indent: strings: negative Repeat count",
    ),
    (
        &[("t.yaml", "x: {{ nindent -2 \"a\" }}")],
        "template: c/templates/t.yaml:1:6: executing \"c/templates/t.yaml\" at <nindent -2 \"a\">: error calling nindent: strings: negative Repeat count",
    ),
    (
        &[("t.yaml", "x: {{ repeat 9223372036854775807 \"ab\" }}")],
        "template: c/templates/t.yaml:1:6: executing \"c/templates/t.yaml\" at <repeat 9223372036854775807 \"ab\">: error calling repeat: strings: Repeat output length overflow",
    ),
    (
        &[("t.yaml", "x: {{ repeat 1000000000000000 \"a\" }}")],
        "template: c/templates/t.yaml:1:6: executing \"c/templates/t.yaml\" at <repeat 1000000000000000 \"a\">: error calling repeat: runtime error: makeslice: len out of range",
    ),
    (
        &[("t.yaml", "x: {{ indent 1000000000000000 \"a\" }}")],
        "template: c/templates/t.yaml:1:6: executing \"c/templates/t.yaml\" at <indent 1000000000000000 \"a\">: error calling indent: runtime error: makeslice: len out of range",
    ),
    (
        &[("t.yaml", "x: {{ randAlpha 100000000000000 }}")],
        "template: c/templates/t.yaml:1:6: executing \"c/templates/t.yaml\" at <randAlpha 100000000000000>: error calling randAlpha: runtime error: makeslice: len out of range",
    ),
    (
        &[("t.yaml", "x: {{ randBytes 1000000000000000000 }}")],
        "template: c/templates/t.yaml:1:6: executing \"c/templates/t.yaml\" at <randBytes 1000000000000000000>: error calling randBytes: runtime error: makeslice: len out of range",
    ),
    (
        &[("t.yaml", "a: {{ eq 1 \"a\" }}")],
        "template: c/templates/t.yaml:1:6: executing \"c/templates/t.yaml\" at <eq 1 \"a\">: error calling eq: incompatible types for comparison: int and string",
    ),
    (
        &[("t.yaml", "x: {{ tpl \"{{ .Values.a.b }}\" . }}")],
        "template: c/templates/t.yaml:1:6: executing \"c/templates/t.yaml\" at <tpl \"{{ .Values.a.b }}\" .>: error calling tpl: error during tpl function execution for \"{{ .Values.a.b }}\": template: gotpl:1:10: executing \"gotpl\" at <.Values.a.b>: nil pointer evaluating interface {}.b",
    ),
    (
        &[("t.yaml", "x: {{ tpl \"{{ if }}\" . }}")],
        "template: c/templates/t.yaml:1:6: executing \"c/templates/t.yaml\" at <tpl \"{{ if }}\" .>: error calling tpl: cannot parse template \"{{ if }}\": template: gotpl:1: missing value for if",
    ),
    (
        &[("t.yaml", "{{ semverCompare \"bad\" \"1.0.0\" }}")],
        "template: c/templates/t.yaml:1:3: executing \"c/templates/t.yaml\" at <semverCompare \"bad\" \"1.0.0\">: error calling semverCompare: improper constraint: bad",
    ),
    (
        &[("t.yaml", "{{ semverCompare \">=1.0\" \"x.y\" }}")],
        "template: c/templates/t.yaml:1:3: executing \"c/templates/t.yaml\" at <semverCompare \">=1.0\" \"x.y\">: error calling semverCompare: invalid semantic version",
    ),
    (
        &[("t.yaml", "{{ semver \"nope\" }}")],
        "template: c/templates/t.yaml:1:3: executing \"c/templates/t.yaml\" at <semver \"nope\">: error calling semver: invalid semantic version",
    ),
    (
        &[("t.yaml", "x: {{ first nil }}")],
        "template: c/templates/t.yaml:1:6: executing \"c/templates/t.yaml\" at <first nil>: error calling first: runtime error: invalid memory address or nil pointer dereference",
    ),
    (
        &[("t.yaml", "x: {{ dig \"a\" \"d\" .Values }}")],
        "template: c/templates/t.yaml:1:6: executing \"c/templates/t.yaml\" at <dig \"a\" \"d\" .Values>: error calling dig: interface conversion: interface {} is common.Values, not map[string]interface {}",
    ),
    (
        &[("t.yaml", "x: {{ len nil }}")],
        "template: c/templates/t.yaml:1:6: executing \"c/templates/t.yaml\" at <len nil>: error calling len: reflect: call of reflect.Value.Type on zero Value",
    ),
    (
        &[("t.yaml", "x: {{ div 1 0 }}")],
        "template: c/templates/t.yaml:1:6: executing \"c/templates/t.yaml\" at <div 1 0>: error calling div: runtime error: integer divide by zero",
    ),
    (
        &[("t.yaml", "x: {{ index (list 1) 5 }}")],
        "template: c/templates/t.yaml:1:6: executing \"c/templates/t.yaml\" at <index (list 1) 5>: error calling index: index out of range: 5",
    ),
    (
        &[
            ("t.yaml", "x: {{ eq .Values.replicas 1 }}"),
            ("../values.yaml", "replicas: 1\n"),
        ],
        "template: c/templates/t.yaml:1:6: executing \"c/templates/t.yaml\" at <eq .Values.replicas 1>: error calling eq: incompatible types for comparison: float64 and int",
    ),
    (
        &[("t.yaml", "x: {{ lt 1 2.5 }}")],
        "template: c/templates/t.yaml:1:6: executing \"c/templates/t.yaml\" at <lt 1 2.5>: error calling lt: incompatible types for comparison: int and float64",
    ),
    (
        &[("t.yaml", "x: {{ lt true false }}")],
        "template: c/templates/t.yaml:1:6: executing \"c/templates/t.yaml\" at <lt true false>: error calling lt: invalid type for comparison",
    ),
    (
        &[
            ("t.yaml", "x: {{ call .Values.f 1 }}"),
            ("../values.yaml", "f: 1\n"),
        ],
        "template: c/templates/t.yaml:1:6: executing \"c/templates/t.yaml\" at <call .Values.f 1>: error calling call: non-function .Values.f of type float64",
    ),
];

#[test]
fn errors_read_like_helms() {
    let mut failures = Vec::new();
    for (files, expected) in CASES {
        let got = render_error(files);
        if got != *expected {
            failures.push(format!(
                "files: {files:?}\n  expected: {expected:?}\n  got:      {got:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn expected_errors_are_helms() {
    if helm_binary().is_none() {
        eprintln!("skipping helm comparison: no helm binary (set CHARTKIT_HELM)");
        return;
    }
    let mut failures = Vec::new();
    for (files, expected) in CASES {
        let helm = helm_error(files).expect("helm present");
        if helm != *expected {
            failures.push(format!(
                "files: {files:?}\n  expected: {expected:?}\n  helm:     {helm:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) differ from helm:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn include_recursion_is_cut_off_like_helm() {
    let got = render_error(&[
        ("_h.tpl", "{{ define \"r\" }}{{ include \"r\" . }}{{ end }}"),
        ("t.yaml", "{{ include \"r\" . }}"),
    ]);
    assert!(
        got.ends_with("error calling include: rendering template has a nested reference name: r: unable to execute template"),
        "{}",
        &got[got.len().saturating_sub(300)..]
    );
}
