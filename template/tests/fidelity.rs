//! Details where chartkit rendered differently from helm (issue #18, "Template engine
//! and values"), each checked against what helm renders or the error it prints.

mod common;

use common::{Case, check_cases, check_cases_against_helm, helm_binary, helm_error, render_error};

/// Sprig's details.
const SPRIG: &[Case] = &[
    // `seq` with three numbers is first, increment, last.
    (
        "{{ seq 0 3 10 }}|{{ seq 10 -3 0 }}|{{ seq 0 10 3 }}|{{ seq 1 2 }}|{{ seq 5 }}|{{ seq -3 }}|{{ seq 0 0 5 }}|{{ seq 5 1 0 }}|{{ seq 0 -1 5 }}|{{ seq 3 3 }}|{{ seq 1 2 3 4 }}|{{ seq }}|{{ seq 0 }}",
        "",
        "0 3 6 9|10 7 4 1|0|1 2|1 2 3 4 5|1 0 -1 -2 -3||||3|||1 0",
    ),
    // Out-of-range floats and NaN become the smallest int64, as on amd64.
    (
        "{{ int64 1e300 }}|{{ int 1e300 }}|{{ int64 -1e300 }}|{{ int (float64 \"NaN\") }}|{{ int64 (float64 \"Inf\") }}|{{ int 9.3e18 }}|{{ int 9.2e18 }}|{{ int64 \"1e300\" }}|{{ add 1 1e300 }}",
        "",
        "-9223372036854775808|-9223372036854775808|-9223372036854775808|-9223372036854775808|-9223372036854775808|-9223372036854775808|9200000000000000000|0|-9223372036854775807",
    ),
    // toYaml goes through JSON and go-yaml reads that back: `<<` is a plain string,
    // DEL and the C1 controls make it fail, NEL folds.
    (
        "{{ toYaml \"<<\" }}|{{ toYaml (dict \"<<\" 1) }}|{{ toYamlPretty \"<<\" }}|{{ toYaml \"a\\x7fb\" }}|{{ toYaml (list \"a\" \"\\u0086\") }}|{{ toYaml (dict \"k\" \"\\uffff\") }}|{{ toYamlPretty \"a\\x7fb\" }}",
        "",
        "<<|<<: 1|<<||||\"a\\x7Fb\"",
    ),
    (
        "{{ toYaml \"\\u0085\" }}|{{ toYaml \"a \\u0085  \\u0085 \\u0085b \" }}|{{ toYaml (dict \"k\\u0085\" 1) }}|{{ toYaml \"\\u00a0\\ufeff\" }}",
        "",
        "' '|\"a\\n\\nb \"||\"\u{a0}\\uFEFF\"",
    ),
    // BurntSushi/toml writes floats with Go's shortest %g and times unquoted; it reads
    // date-times as time.Time in zones that remember the TOML form.
    (
        "{{ toToml (dict \"f\" 1e6 \"g\" 1.5 \"h\" 1e21 \"i\" 100.0 \"j\" 1e-7 \"z\" 0.0 \"b\" 123456789.0 \"n\" (float64 \"NaN\") \"m\" (float64 \"-Inf\")) }}",
        "",
        "b = 1.23456789e+08\nf = 1e+06\ng = 1.5\nh = 1e+21\ni = 100.0\nj = 1e-07\nm = -inf\nn = nan\nz = 0.0\n",
    ),
    (
        "{{ toToml (dict \"d\" (toDate \"2006-01-02\" \"2020-05-06\")) }}",
        "",
        "d = 2020-05-06T00:00:00Z\n",
    ),
    (
        "{{ $t := fromToml \"d = 1979-05-27T07:32:00Z\\nl = 1979-05-27T07:32:00\\nld = 1979-05-27\\nlt = 07:32:00\\no = 1979-05-27T00:32:00.999999-07:00\\nu = 1979-05-27T00:32:00+00:00\" }}{{ typeOf $t.d }}|{{ $t.d }}|{{ $t.l }}|{{ $t.ld }}|{{ $t.lt }}|{{ $t.o }}|{{ $t.u }}|{{ toJson $t }}\n{{ toToml $t }}",
        "",
        "time.Time|1979-05-27 07:32:00 +0000 UTC|1979-05-27 07:32:00 +0000 datetime-local|1979-05-27 00:00:00 +0000 date-local|0000-01-01 07:32:00 +0000 time-local|1979-05-27 00:32:00.999999 -0700 -0700|1979-05-27 00:32:00 +0000 UTC|{\"d\":\"1979-05-27T07:32:00Z\",\"l\":\"1979-05-27T07:32:00Z\",\"ld\":\"1979-05-27T00:00:00Z\",\"lt\":\"0000-01-01T07:32:00Z\",\"o\":\"1979-05-27T00:32:00.999999-07:00\",\"u\":\"1979-05-27T00:32:00Z\"}\nd = 1979-05-27T07:32:00Z\nl = 1979-05-27T07:32:00\nld = 1979-05-27\nlt = 07:32:00\no = 1979-05-27T00:32:00.999999-07:00\nu = 1979-05-27T00:32:00Z\n",
    ),
    // encoding/json goes on past a number too large for a float64, leaving nil, and
    // reports the first one.
    (
        "{{ fromJson \"{\\\"a\\\": 1e400, \\\"b\\\": 2, \\\"c\\\": [1e999, 3]}\" | toJson }}|{{ fromJsonArray \"[1e400, 2]\" | toJson }}",
        "",
        "{\"Error\":\"json: cannot unmarshal number 1e400 into Go value of type float64\",\"a\":null,\"b\":2,\"c\":[null,3]}|[\"json: cannot unmarshal number 1e400 into Go value of type float64\"]",
    ),
    ("{{ len (genPrivateKey \"ed25519\") }}", "", "119"),
];

/// Methods and printing of the values Helm passes to templates.
const BUILT_INS: &[Case] = &[
    // `.Values`, `.` and `.Template` are `common.Values`, whose methods come before keys.
    (
        "{{ .Values.YAML | quote }}|{{ typeOf (.Values.Table \"a\") }}|{{ typeOf .Values.AsMap }}|{{ typeOf .AsMap }}|{{ typeOf .Template }}|{{ .Template.AsMap }}",
        "YAML: 1\na: {b: 1, c: {d: x}}",
        "\"YAML: 1\\na:\\n  b: 1\\n  c:\\n    d: x\\n\"|common.Values|map[string]interface {}|map[string]interface {}|common.Values|map[BasePath:c/templates Name:c/templates/t.yaml]",
    ),
    (
        "{{ dig \"a\" \"b\" \"\" .Values.AsMap }}|{{ .Values.PathValue \"a.b\" }}|{{ .Values.PathValue \"YAML\" }}|{{ .Values.Table \"a.c\" }}|{{ .Values.PathValue \"a.c.d\" }}|{{ typeOf (.Values.Table \"a.c\") }}|{{ (.Values.Table \"a\").YAML | quote }}",
        "YAML: 1\na: {b: 1, c: {d: x}}",
        "1|1|1|map[d:x]|x|common.Values|\"b: 1\\nc:\\n  d: x\\n\"",
    ),
    // What Table and AsMap return is the same map.
    (
        "{{ $t := .Values.Table \"a\" }}{{ $_ := set $t \"z\" 5 }}{{ $m := .Values.AsMap }}{{ $_ := set $m \"q\" 6 }}{{ .Values.a.z }}|{{ .Values.q }}|{{ .Values.AsMap | toJson }}",
        "a: {b: 1}",
        "5|6|{\"a\":{\"b\":1,\"z\":5},\"q\":6}",
    ),
    (
        "{{ .Values.YAML | quote }}|{{ .Values.AsMap | toJson }}",
        "",
        "\"{}\\n\"|{}",
    ),
    // `.Capabilities.KubeVersion` is a struct whose String method has a pointer
    // receiver: printed as a field it is the version, passed to a function its fields;
    // JSON keeps Go's field order.
    (
        "{{ .Capabilities.KubeVersion }}|{{ .Capabilities.KubeVersion | quote }}|{{ toString .Capabilities.KubeVersion }}|{{ printf \"%v|%+v|%s|%q\" .Capabilities.KubeVersion .Capabilities.KubeVersion .Capabilities.KubeVersion .Capabilities.KubeVersion }}",
        "",
        "v1.35.0|\"{v1.35.0 v1.35.0 1 35}\"|{v1.35.0 v1.35.0 1 35}|{v1.35.0 v1.35.0 1 35}|{Version:v1.35.0 normalizedVersion:v1.35.0 Major:1 Minor:35}|{v1.35.0 v1.35.0 1 35}|{\"v1.35.0\" \"v1.35.0\" \"1\" \"35\"}",
    ),
    (
        "{{ printf \"%#v\" .Capabilities.KubeVersion }}|{{ toJson .Capabilities.KubeVersion }}|{{ toYaml .Capabilities.KubeVersion | quote }}|{{ deepCopy .Capabilities.KubeVersion }}|{{ .Capabilities.KubeVersion.GitVersion }}|{{ .Capabilities.KubeVersion.String }}|{{ kindOf .Capabilities.KubeVersion }}",
        "",
        "common.KubeVersion{Version:\"v1.35.0\", normalizedVersion:\"v1.35.0\", Major:\"1\", Minor:\"35\"}|{\"Version\":\"v1.35.0\",\"Major\":\"1\",\"Minor\":\"35\"}|\"Major: \\\"1\\\"\\nMinor: \\\"35\\\"\\nVersion: v1.35.0\"|{v1.35.0  1 35}|v1.35.0|v1.35.0|struct",
    ),
    (
        "{{ toJson .Capabilities.HelmVersion }}|{{ .Capabilities.HelmVersion }}|{{ printf \"%+v\" .Capabilities.HelmVersion }}|{{ typeOf .Capabilities.Copy }}|{{ .Capabilities.Copy.KubeVersion.Major }}|{{ kindOf .Capabilities }}",
        "",
        "{\"version\":\"v4.1.4\",\"git_commit\":\"05fa37973dc9e42b76e1d2883494c87174b6074f\",\"git_tree_state\":\"clean\",\"go_version\":\"go1.25.9\",\"kube_client_version\":\"v1.35\"}|{v4.1.4 05fa37973dc9e42b76e1d2883494c87174b6074f clean go1.25.9 v1.35}|{Version:v4.1.4 GitCommit:05fa37973dc9e42b76e1d2883494c87174b6074f GitTreeState:clean GoVersion:go1.25.9 KubeClientVersion:v1.35}|*common.Capabilities|1|ptr",
    ),
    // time.Time and the Duration, Month, Weekday and Location values of its methods.
    (
        "{{ $t := toDate \"2006-01-02T15:04:05Z07:00\" \"2024-02-29T13:14:15.123456789+02:00\" }}{{ $u := toDate \"2006-01-02T15:04:05Z07:00\" \"2024-01-01T00:00:00Z\" }}{{ $t }}|{{ $t.UTC }}|{{ $t.AddDate 1 0 0 }}|{{ $t.AddDate 0 -1 1 }}|{{ $t.Add 3600000000000 }}|{{ $t.Sub $u }}|{{ typeOf ($t.Sub $u) }}|{{ ($t.Sub $u).Hours }}|{{ ($t.Sub $u).Seconds }}|{{ ($t.Sub $u).Milliseconds }}|{{ ($t.Sub $u).Round 3600000000000 }}|{{ ($t.Sub $u) | toJson }}",
        "",
        "2024-02-29 13:14:15.123456789 +0200 +0200|2024-02-29 11:14:15.123456789 +0000 UTC|2025-03-01 13:14:15.123456789 +0200 +0200|2024-01-30 13:14:15.123456789 +0200 +0200|2024-02-29 14:14:15.123456789 +0200 +0200|1427h14m15.123456789s|time.Duration|1427.2375342935525|5.138055123456789e+06|5138055123|1427h0m0s|5138055123456789",
    ),
    (
        "{{ $t := toDate \"2006-01-02T15:04:05Z07:00\" \"2024-02-29T13:14:15.123456789+02:00\" }}{{ $u := toDate \"2006-01-02T15:04:05Z07:00\" \"2024-01-01T00:00:00Z\" }}{{ $t.Month }}|{{ typeOf $t.Month }}|{{ printf \"%d %v %q\" $t.Month $t.Month $t.Month }}|{{ $t.Weekday }}|{{ eq $t.Month 2 }}|{{ $t.Month | toJson }}|{{ $t.Location }}|{{ $u.Location }}|{{ typeOf $t.Location }}|{{ $t.After $u }}|{{ $t.Equal $t }}|{{ $t.Compare $u }}|{{ $t.Unix }}|{{ $t.UnixMilli }}|{{ $t.Round 3600000000000 }}|{{ $t.Truncate 60000000000 }}|{{ $t.In $u.Location }}",
        "",
        "February|time.Month|2 February \"February\"|Thursday|true|2||UTC|*time.Location|true|true|1|1709205255|1709205255123|2024-02-29 13:00:00 +0200 +0200|2024-02-29 13:14:00 +0200 +0200|2024-02-29 11:14:15.123456789 +0000 UTC",
    ),
    (
        "{{ $t := toDate \"2006-01-02T15:04:05Z07:00\" \"2024-02-29T13:14:15.123456789+02:00\" }}{{ printf \"%#v\" $t }}|{{ printf \"%#v\" $t.UTC }}|{{ $t.MarshalText | toString }}|{{ $t.MarshalBinary }}|{{ $t.AppendFormat nil \"2006\" }}|{{ $t.YearDay }}|{{ $t.IsDST }}|{{ $t | toJson }}",
        "",
        "time.Date(2024, time.February, 29, 13, 14, 15, 123456789, time.Location(\"\"))|time.Date(2024, time.February, 29, 11, 14, 15, 123456789, time.UTC)|2024-02-29T13:14:15.123456789+02:00|[1 0 0 0 14 221 114 94 7 7 91 205 21 0 120]|[50 48 50 52]|60|false|\"2024-02-29T13:14:15.123456789+02:00\"",
    ),
];

/// Go strings are bytes: binary file contents and decoded data keep theirs through
/// `b64enc`, `len`, checksums, slicing and the string functions that work on bytes.
const BYTES: &[Case] = &[
    (
        "{{ .Files.Get \"bin/k.jks\" | b64enc }}|{{ .Files.Get \"bin/k.jks\" | len }}|{{ .Files.GetBytes \"bin/k.jks\" | len }}|{{ .Files.Get \"bin/k.jks\" | sha256sum }}|{{ .Files.Get \"bin/k.jks\" | adler32sum }}|{{ .Files.Get \"bin/k.jks\" | b32enc }}",
        "",
        "//4AYWJj4oIKwHg=|11|11|60b8aeb5fce99000511f572f4fa57c424a296575572104b17e00772adcfc080d|628884938|777AAYLCMPRIECWAPA======",
    ),
    (
        "{{ .Files.Get \"bin/k.jks\" | toJson }}|{{ .Files.Get \"bin/k.jks\" | quote }}|{{ .Files.Get \"bin/k.jks\" | printf \"%q\" }}|{{ .Files.Get \"bin/k.jks\" | printf \"%x\" }}|{{ .Files.Lines \"bin/k.jks\" | toJson }}|{{ (.Files.Glob \"bin/*\").AsConfig | quote }}|{{ (.Files.Glob \"bin/*\").AsSecrets }}",
        "",
        "\"\\ufffd\\ufffd\\u0000abc\\ufffd\\ufffd\\n\\ufffdx\"|\"\\xff\\xfe\\x00abc\\xe2\\x82\\n\\xc0x\"|\"\\xff\\xfe\\x00abc\\xe2\\x82\\n\\xc0x\"|fffe00616263e2820ac078|[\"\\ufffd\\ufffd\\u0000abc\\ufffd\\ufffd\",\"\\ufffdx\"]|\"k.jks: \\\"��\\\\0abc��\\\\n�x\\\"\"|k.jks: //4AYWJj4oIKwHg=",
    ),
    (
        "{{ \"//4AYWJj4oI=\" | b64dec | b64enc }}|{{ \"//4AYWJj4oI=\" | b64dec | len }}|{{ \"//4AYWJj4oI=\" | b64dec | sha1sum }}|{{ \"\\xff\\xfe\" | b64enc }}|{{ \"a\\xffb\" | len }}|{{ printf \"%s|%5s|%.2s|%-4s|\" \"\\xffa\" \"\\xff\" \"\\xff\\xfeq\" \"\\xff\" | b64enc }}",
        "",
        "//4AYWJj4oI=|8|e713e43d424ba89c75e47e9c5c10e98f61c90ca6|//4=|3|/2F8ICAgIP98//58/yAgIHw=",
    ),
    // trunc, substr and abbrev cut bytes, through a character if need be.
    (
        "{{ trunc 2 \"héllo\" | b64enc }}|{{ substr 0 2 \"héllo\" | b64enc }}|{{ trunc -4 \"héllo\" | b64enc }}|{{ abbrev 5 \"héllo wörld\" | b64enc }}|{{ trunc 2 \"héllo\" | len }}|{{ index \"héllo\" 1 }}",
        "",
        "aMM=|aMM=|qWxsbw==|aMMuLi4=|2|195",
    ),
    (
        "{{ $k := .Files.Get \"bin/k.jks\" }}{{ $k | trim | b64enc }}|{{ $k | upper | b64enc }}|{{ cat $k \"x\" | b64enc }}|{{ list $k | toString | b64enc }}|{{ $k | squote | b64enc }}|{{ $k | replace \"abc\" \"Z\" | b64enc }}|{{ $k | nindent 2 | b64enc }}|{{ splitList \"c\" $k | toJson }}|{{ $k | trimSuffix \"\\xc0x\" | b64enc }}|{{ eq $k (printf \"%s\" $k) }}|{{ index $k 0 }}|{{ print $k 1 | b64enc }}|{{ join \"\\xff\" (list \"a\" \"b\") | b64enc }}",
        "",
        "//4AYWJj4oIKwHg=|77+977+9AEFCQ++/ve+/vQrvv71Y|//4AYWJj4oIKwHggeA==|W//+AGFiY+KCCsB4XQ==|J//+AGFiY+KCCsB4Jw==|//4AWuKCCsB4|CiAg//4AYWJj4oIKICDAeA==|[\"\\ufffd\\ufffd\\u0000ab\",\"\\ufffd\\ufffd\\n\\ufffdx\"]|//4AYWJj4oIK|true|255|//4AYWJj4oIKwHgx|Yf9i",
    ),
    // go-yaml reads UTF-16 after its byte order mark, and nothing else that is not
    // UTF-8.
    (
        "{{ (fromYaml (.Files.Get \"bin/k.jks\")).Error }}|{{ (fromYaml \"a: \\xff\").Error }}|{{ fromYamlArray \"- \\xe2\\x82\" }}",
        "",
        "error converting YAML to JSON: yaml: incomplete UTF-16 character|error converting YAML to JSON: yaml: invalid leading UTF-8 octet|[error converting YAML to JSON: yaml: incomplete UTF-8 octet sequence]",
    ),
];

/// A template, its values and the error helm prints for it.
type ErrorCase = (&'static str, &'static str, &'static str);

const ERRORS: &[ErrorCase] = &[
    (
        "{{ deepCopy .Values.missing }}",
        "",
        "template: c/templates/t.yaml:1:3: executing \"c/templates/t.yaml\" at <deepCopy .Values.missing>: error calling deepCopy: reflect: call of reflect.Value.Type on zero Value",
    ),
    (
        "{{ mustDeepCopy nil }}",
        "",
        "template: c/templates/t.yaml:1:3: executing \"c/templates/t.yaml\" at <mustDeepCopy nil>: error calling mustDeepCopy: reflect: call of reflect.Value.Type on zero Value",
    ),
    // A nil read from a map is a nil interface to Go's `len`; a nil with no type is
    // not.
    (
        "{{ len .Values.x }}",
        "x: null",
        "template: c/templates/t.yaml:1:3: executing \"c/templates/t.yaml\" at <len .Values.x>: error calling len: len of nil pointer",
    ),
    (
        "{{ len .Values.missing }}",
        "x: null",
        "template: c/templates/t.yaml:1:3: executing \"c/templates/t.yaml\" at <len .Values.missing>: error calling len: len of nil pointer",
    ),
    (
        "{{ range .Values.l }}{{ len . }}{{ end }}",
        "l: [null]",
        "template: c/templates/t.yaml:1:24: executing \"c/templates/t.yaml\" at <len .>: error calling len: len of nil pointer",
    ),
    (
        "{{ .Values.x | len }}",
        "x: null",
        "template: c/templates/t.yaml:1:15: executing \"c/templates/t.yaml\" at <len>: error calling len: reflect: call of reflect.Value.Type on zero Value",
    ),
    (
        "{{ $x := .Values.x }}{{ len $x }}",
        "x: null",
        "template: c/templates/t.yaml:1:24: executing \"c/templates/t.yaml\" at <len $x>: error calling len: reflect: call of reflect.Value.Type on zero Value",
    ),
    (
        "{{ mustToYaml (dict \"a\" \"x\\x7f\") }}",
        "",
        "template: c/templates/t.yaml:1:3: executing \"c/templates/t.yaml\" at <mustToYaml (dict \"a\" \"x\\x7f\")>: error calling mustToYaml: yaml: control characters are not allowed",
    ),
    (
        "{{ mustToYaml (dict \"a\" \"\\u0085\\u0085\" \"k\\u0085\" 1) }}",
        "",
        "template: c/templates/t.yaml:1:3: executing \"c/templates/t.yaml\" at <mustToYaml (dict \"a\" \"\\u0085\\u0085\" \"k\\u0085\" 1)>: error calling mustToYaml: yaml: line 3: did not find expected ',' or '}'",
    ),
    (
        "{{ mustFromJson \"{\\\"a\\\": 1e400}\" }}",
        "",
        "template: c/templates/t.yaml:1:3: executing \"c/templates/t.yaml\" at <mustFromJson \"{\\\"a\\\": 1e400}\">: error calling mustFromJson: json: cannot unmarshal number 1e400 into Go value of type float64",
    ),
    // Methods of built-in values.
    (
        "{{ .Values.Table \"a.b\" }}",
        "a: {b: 1}",
        "template: c/templates/t.yaml:1:10: executing \"c/templates/t.yaml\" at <.Values.Table>: error calling Table: \"b\" is not a table",
    ),
    (
        "{{ .Values.PathValue \"a\" }}",
        "a: {b: 1}",
        "template: c/templates/t.yaml:1:10: executing \"c/templates/t.yaml\" at <.Values.PathValue>: error calling PathValue: \"a\" is not a value",
    ),
    (
        "{{ .Values.PathValue \"\" }}",
        "",
        "template: c/templates/t.yaml:1:10: executing \"c/templates/t.yaml\" at <.Values.PathValue>: error calling PathValue: YAML path cannot be empty",
    ),
    (
        "{{ .Values.Encode }}",
        "",
        "c/templates/t.yaml:1:10\n  executing \"c/templates/t.yaml\" at <.Values.Encode>:\n    wrong number of args for Encode: want 1 got 0",
    ),
    (
        "{{ .Capabilities.KubeVersion.normalizedVersion }}",
        "",
        "c/templates/t.yaml:1:16\n  executing \"c/templates/t.yaml\" at <.Capabilities.KubeVersion.normalizedVersion>:\n    normalizedVersion is an unexported field of struct type common.KubeVersion",
    ),
    (
        "{{ now.Clock }}",
        "",
        "c/templates/t.yaml:1:3\n  executing \"c/templates/t.yaml\" at <now>:\n    function Clock has 3 return values; should be 1 or 2",
    ),
    (
        "{{ now.Zone }}",
        "",
        "c/templates/t.yaml:1:3\n  executing \"c/templates/t.yaml\" at <now>:\n    invalid function signature for Zone: second return value should be error; is int",
    ),
    (
        "{{ now.Add (int 5) }}",
        "",
        "c/templates/t.yaml:1:16\n  executing \"c/templates/t.yaml\" at <5>:\n    wrong type for value; expected time.Duration; got int",
    ),
    (
        "{{ now.In nil }}",
        "",
        "template: c/templates/t.yaml:1:6: executing \"c/templates/t.yaml\" at <now.In>: error calling In: time: missing Location in call to Time.In",
    ),
    (
        "{{ now.wall }}",
        "",
        "c/templates/t.yaml:1:3\n  executing \"c/templates/t.yaml\" at <now>:\n    wall is an unexported field of struct type time.Time",
    ),
];

fn chart_files(case: &ErrorCase) -> Vec<(&'static str, &'static str)> {
    vec![("t.yaml", case.0), ("../values.yaml", case.1)]
}

#[test]
fn sprig_details_render_like_helm() {
    check_cases(SPRIG);
}

#[test]
fn sprig_details_are_helms() {
    check_cases_against_helm(SPRIG);
}

#[test]
fn built_in_values_render_like_helm() {
    check_cases(BUILT_INS);
}

#[test]
fn built_in_values_are_helms() {
    check_cases_against_helm(BUILT_INS);
}

#[test]
fn strings_keep_their_bytes_like_helm() {
    check_cases(BYTES);
}

#[test]
fn strings_keep_their_bytes_in_helm() {
    check_cases_against_helm(BYTES);
}

#[test]
fn errors_read_like_helms() {
    let failures: Vec<String> = ERRORS
        .iter()
        .filter_map(|case| {
            let got = render_error(&chart_files(case));
            (got != case.2).then(|| {
                format!(
                    "{:?}\n  expected: {:?}\n  got:      {got:?}",
                    case.0, case.2
                )
            })
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn expected_errors_are_helms() {
    if helm_binary().is_none() {
        eprintln!("skipping helm comparison: no helm binary (set CHARTKIT_HELM)");
        return;
    }
    let failures: Vec<String> = ERRORS
        .iter()
        .filter_map(|case| {
            let helm = helm_error(&chart_files(case)).expect("helm present");
            (helm != case.2).then(|| {
                format!(
                    "{:?}\n  expected: {:?}\n  helm:     {helm:?}",
                    case.0, case.2
                )
            })
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
