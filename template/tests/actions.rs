//! Go text/template actions, checked against what Go (through helm) outputs.

mod common;

use common::{Case, check_cases, check_cases_against_helm};

const CASES: &[Case] = &[
    // Text, comments and trimming.
    ("a {{/* c */}} b", "", "a  b"),
    ("a  {{- /* c */ -}}  b", "", "ab"),
    ("x\n  {{- 1 -}}\n  y", "", "x1y"),
    ("{{- \"a\" }} {{- \"b\" -}} c", "", "abc"),
    ("{{ 3 }}{{-3}}", "", "3-3"),
    // Printing.
    (
        "{{ .Values.missing }}|{{ .Values.s }}|{{ 1.5 }}|{{ 1e6 }}|{{ true }}",
        "s: str",
        "<no value>|str|1.5|1e+06|true",
    ),
    (
        "{{ .Values.big }} {{ .Values.i }} {{ .Values.f }}",
        "big: 1000000\ni: 3\nf: 2.50",
        "1e+06 3 2.5",
    ),
    (
        "{{ .Values.l }} {{ .Values.m }}",
        "l: [a, 1, null]\nm: {b: 2, a: x}",
        "[a 1 <nil>] map[a:x b:2]",
    ),
    ("{{ .Values.nul }}", "nul: null", "<no value>"),
    ("{{ printf \"%v\" .Values.missing }}", "", "<nil>"),
    (
        "{{ 'a' }} {{ 0x1F }} {{ 010 }} {{ 1_000 }}",
        "",
        "97 31 8 1000",
    ),
    ("{{ \"\\u00e9\\t\" }}{{ `raw\\n` }}", "", "é\traw\\n"),
    // Variables.
    ("{{ $x := 1 }}{{ $x }}{{ $x = 2 }}{{ $x }}", "", "12"),
    ("{{ $ := 5 }}{{ $ }}", "", "5"),
    ("{{ with $x := \"a\" }}{{ $x }}{{ end }}", "", "a"),
    ("{{ $.Values.a }}", "a: 1", "1"),
    ("{{ $x := .Values.missing }}{{ $x.foo }}", "", "<no value>"),
    // if / else if / else.
    (
        "{{ if .Values.a }}A{{ else if .Values.b }}B{{ else }}C{{ end }}",
        "b: 1",
        "B",
    ),
    (
        "{{ if 0 }}a{{ else }}b{{ end }}{{ if \"\" }}c{{ end }}{{ if .Values.l }}d{{ end }}{{ if .Values.m }}e{{ end }}",
        "l: []\nm: {}",
        "b",
    ),
    (
        "{{ if 0.0 }}a{{ end }}{{ if .Values.z }}b{{ end }}{{ if .Values.t }}c{{ end }}",
        "z: 0\nt: true",
        "c",
    ),
    // with.
    (
        "{{ with .Values.a }}{{ . }}{{ else }}none{{ end }}",
        "a: x",
        "x",
    ),
    (
        "{{ with .Values.a }}{{ . }}{{ else with .Values.b }}b={{ . }}{{ else }}none{{ end }}",
        "b: 2",
        "b=2",
    ),
    ("{{ with .Values.missing }}x{{ end }}", "", ""),
    // range.
    (
        "{{ range .Values.l }}[{{ . }}]{{ end }}",
        "l: [a, b]",
        "[a][b]",
    ),
    (
        "{{ range $i, $v := .Values.l }}{{ $i }}={{ $v }};{{ end }}",
        "l: [a, b]",
        "0=a;1=b;",
    ),
    (
        "{{ range $k, $v := .Values.m }}{{ $k }}={{ $v }};{{ end }}",
        "m: {b: 2, a: 1, c: 3}",
        "a=1;b=2;c=3;",
    ),
    (
        "{{ range .Values.l }}x{{ else }}empty{{ end }}",
        "l: []",
        "empty",
    ),
    (
        "{{ range .Values.missing }}x{{ else }}empty{{ end }}",
        "",
        "empty",
    ),
    ("{{ range 3 }}{{ . }}{{ end }}", "", "012"),
    ("{{ range $i := 3 }}{{ $i }}{{ end }}", "", "012"),
    (
        "{{ range .Values.l }}{{ if eq . \"b\" }}{{ break }}{{ end }}{{ . }}{{ end }}",
        "l: [a, b, c]",
        "a",
    ),
    (
        "{{ range .Values.l }}{{ if eq . \"b\" }}{{ continue }}{{ end }}{{ . }}{{ end }}",
        "l: [a, b, c]",
        "ac",
    ),
    (
        "{{ $v := 0 }}{{ range $v = .Values.l }}{{ end }}{{ $v }}",
        "l: [a, b]",
        "b",
    ),
    (
        "{{ range $k, $v := .Values.l }}{{ $k }}{{ end }}{{ $k := 1 }}{{ $k }}",
        "l: [a]",
        "01",
    ),
    // define / template / block.
    // Pipelines and parentheses.
    ("{{ \"a\" | printf \"%s-%s\" \"b\" }}", "", "b-a"),
    ("{{ (printf \"%d\" 3) | len }}", "", "1"),
    ("{{ (.Values.m).a }}", "m: {a: 7}", "7"),
    (
        "{{ and 1 0 2 }} {{ or 0 \"\" 3 }} {{ and 1 2 }} {{ or 0 false }} {{ not 0 }}",
        "",
        "0 3 2 false true",
    ),
    (
        "{{ and false .Values.x.y.z }}{{ or true .Values.x.y.z }}",
        "",
        "falsetrue",
    ),
    // Comparisons.
    (
        "{{ eq 1 1 }} {{ eq 1 2 1 }} {{ ne \"a\" \"b\" }} {{ lt 1 2 }} {{ le 2 2 }} {{ gt 1.5 2.5 }} {{ ge \"b\" \"a\" }}",
        "",
        "true true true true true false true",
    ),
    (
        "{{ eq .Values.missing nil }} {{ eq .Values.s \"x\" }} {{ eq .Values.f 1.0 }}",
        "s: x\nf: 1",
        "true true true",
    ),
    ("{{ eq .Values.missing \"x\" }}", "", "false"),
    // index, slice, len.
    (
        "{{ index .Values.l 1 }} {{ index .Values.m \"a\" }} {{ index .Values.nn \"a\" \"b\" }} {{ index .Values.m \"zz\" }}",
        "l: [a, b]\nm: {a: 1}\nnn: {a: {b: deep}}",
        "b 1 deep <no value>",
    ),
    (
        "{{ index \"abc\" 1 }} {{ slice .Values.l 1 }} {{ len .Values.l }} {{ len \"héllo\" }}",
        "l: [a, b, c]",
        "98 [b c] 3 6",
    ),
    // print family.
    (
        "{{ print 1 2 \"a\" 3 }}|{{ println 1 \"a\" }}|{{ printf \"%05.1f|%x|%q\" 3.14159 \"hi\" \"q\" }}",
        "",
        "1 2a3|1 a\n|003.1|6869|\"q\"",
    ),
    (
        "{{ html \"<a href='x'>&\\\"\" }} {{ js \"it's <b> = \\\"x\\\"\" }} {{ urlquery \"a b&c=d/é\" }}",
        "",
        "&lt;a href=&#39;x&#39;&gt;&amp;&#34; it\\'s \\u003Cb\\u003E \\u003D \\\"x\\\" a+b%26c%3Dd%2F%C3%A9",
    ),
    // Field access on maps and nested maps.
    ("{{ .Values.a.b.c }}", "a: {b: {c: deep}}", "deep"),
    (
        "{{ .Release.Name }}-{{ .Release.Namespace }}-{{ .Chart.Name }}-{{ .Template.Name }}",
        "",
        "rel-ns-c-c/templates/t.yaml",
    ),
];

/// Cases that cannot run inside the `define` the helm comparison wraps them in.
const LOCAL_CASES: &[Case] = &[
    (
        "{{ define \"x\" }}X{{ . }}{{ end }}{{ template \"x\" 1 }}{{ template \"x\" }}",
        "",
        "X1X<no value>",
    ),
    (
        "{{ block \"blk\" . }}B{{ .Values.a }}{{ end }}",
        "a: 1",
        "B1",
    ),
    (
        "{{ define \"y\" }}{{ $ }}{{ end }}{{ template \"y\" \"dollar\" }}",
        "",
        "dollar",
    ),
];

#[test]
fn actions_render_like_go() {
    check_cases(CASES);
    check_cases(LOCAL_CASES);
}

#[test]
fn expected_outputs_are_helms() {
    check_cases_against_helm(CASES);
}
