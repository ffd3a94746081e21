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
    // Methods and fields of host objects.
    (
        "{{ .Capabilities.KubeVersion }}|{{ .Capabilities.KubeVersion.Version }}|{{ .Capabilities.KubeVersion.GitVersion }}|{{ .Capabilities.KubeVersion.Major }}.{{ .Capabilities.KubeVersion.Minor }}|{{ .Capabilities.APIVersions.Has \"apps/v1\" }}|{{ .Capabilities.APIVersions.Has \"nope/v1\" }}|{{ .Capabilities.HelmVersion.Version }}|{{ typeOf .Capabilities }}|{{ semverCompare \">=1.20-0\" .Capabilities.KubeVersion.GitVersion }}",
        "",
        "v1.35.0|v1.35.0|v1.35.0|1.35|true|false|v4.1.4|*common.Capabilities|true",
    ),
    (
        "{{ .Files.Get \"files/a.conf\" }}|{{ .Files.Get \"nope\" }}|{{ .Files.GetBytes \"files/a.conf\" }}|{{ .Files.Lines \"files/sub/c.txt\" }}|{{ range $k, $v := .Files.Glob \"files/*.conf\" }}{{ $k }};{{ end }}",
        "",
        "x=1\n||[120 61 49 10]|[hello world]|files/a.conf;files/b.conf;",
    ),
    (
        "{{ (.Files.Glob \"files/*.conf\").AsConfig }}|{{ (.Files.Glob \"files/**.txt\").AsSecrets }}|{{ typeOf .Files }}|{{ len (.Files.Glob \"files/**\") }}",
        "",
        "a.conf: |\n  x=1\nb.conf: |\n  y=2|c.txt: aGVsbG8Kd29ybGQK|engine.files|3",
    ),
    (
        "{{ .Capabilities.KubeVersion.Nope }}",
        "",
        "ERR:can't evaluate field Nope in type common.KubeVersion",
    ),
    (
        "{{ .Files.Get }}",
        "",
        "ERR:wrong number of args for Get: want 1 got 0",
    ),
    (
        "{{ .Values.a.b \"x\" }}",
        "a: {b: 1}",
        "ERR:b is not a method but has arguments",
    ),
    // printf and Go value printing.
    (
        "{{ printf \"%5.2f|%-5s|%05d|%+d|%x|%X|%o|%b|%c|%q|%e|%g|%t|%8.3e|%-8d|\" 3.14159 \"ab\" 42 5 255 \"hi\" 8 5 65 \"q\" 1234.5678 0.000012 true 1234.5678 7 }}",
        "",
        " 3.14|ab   |00042|+5|ff|6869|10|101|A|\"q\"|1.234568e+03|1.2e-05|true|1.235e+03|7       |",
    ),
    (
        "{{ printf \"%v|%+v|%#v|%T\" .Values.m .Values.m .Values.m .Values.m }}",
        "m: {a: 1, b: [x, true]}",
        "map[a:1 b:[x true]]|map[a:1 b:[x true]]|map[string]interface {}{\"a\":1, \"b\":[]interface {}{\"x\", true}}|map[string]interface {}",
    ),
    (
        "{{ printf \"%d|%s|%s %s|%s\" \"x\" 1 \"a\" }}|{{ printf \"%s\" \"a\" 1 2.5 }}|{{ printf \"%!|%z|%\" 1 }}|{{ printf \"%[2]s-%[1]s\" \"a\" \"b\" }}|{{ printf \"%*d|%.*f\" 5 42 2 3.14159 }}",
        "",
        "%!d(string=x)|%!s(int=1)|a %!s(MISSING)|%!s(MISSING)|a%!(EXTRA int=1, float64=2.5)|%!!(int=1)|%!z(MISSING)|%!(NOVERB)|b-a|   42|3.14",
    ),
    (
        "{{ printf \"%v %v %v %v\" 1e6 1e21 100000.0 0.00001 }}|{{ 1e6 }}|{{ .Values.f }}|{{ printf \"%.2f %6.1f %g\" .Values.f .Values.f .Values.f }}",
        "f: 2.5",
        "1e+06 1e+21 100000 1e-05|1e+06|2.5|2.50    2.5 2.5",
    ),
    (
        "{{ printf \"%s|%v|%d\" .Values.l .Values.l .Values.l }}|{{ printf \"%q\" .Values.l }}|{{ printf \"%x\" \"héllo\" }}|{{ printf \"%5t|%-7v|\" true nil }}",
        "l: [a, 1, null]",
        "[a %!s(float64=1) <nil>]|[a 1 <nil>]|[%!d(string=a) %!d(float64=1) <nil>]|[\"a\" %!q(float64=1) <nil>]|68c3a96c6c6f| true|<nil>  |",
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
