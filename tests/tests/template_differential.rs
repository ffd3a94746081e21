//! The differential suite: over a thousand small template expressions (Go's template
//! language, every Sprig and Helm function, value typing, the built-in objects), each
//! rendered by chartkit and by helm, and compared byte for byte.
//!
//! Each expression is wrapped as `define "eN"` and written out through
//! `include "eN" . | b64enc`, so whatever text it renders (`<no value>`, newlines, bytes
//! that are not YAML) reaches the comparison exactly, and many expressions share one
//! `helm template` run. A group whose render fails is run again one expression at a time:
//! then both tools failing counts as agreement (the texts are compared and reported, not
//! required to match).
//!
//! Expressions whose results differ today are listed, with the reason, in
//! `tests/differential/known_differences.txt`: the test fails when any other expression
//! differs, and when a listed one agrees again (so the list only shrinks).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use chartkit_tests::TestContext;

/// Expressions run with the same `template` flags.
struct Group {
    name: &'static str,
    flags: Vec<String>,
    expressions: Vec<String>,
}

fn quote(text: &str) -> String {
    format!("{text:?}")
}

/// Inputs the string functions are applied to.
const STRINGS: &[&str] = &[
    "",
    "abc",
    "Hello World",
    "  padded  ",
    "ñandú été",
    "snake_case-and-kebab",
    "CamelCaseString",
    "a,b,,c",
    "line1\nline2",
    "123",
    "1.50",
    "true",
    "<b>&'\"",
    "日本語テキスト",
    // "à" is C3 A0: functions that read bytes as Latin-1 see A0 as a space.
    "là bas",
];

/// Functions of one string argument.
const STRING_FUNCTIONS: &[&str] = &[
    "upper",
    "lower",
    "title",
    "untitle",
    "trim",
    "trimAll \"a\"",
    "trimPrefix \"a\"",
    "trimSuffix \"c\"",
    "snakecase",
    "camelcase",
    "kebabcase",
    "swapcase",
    "shuffle | len",
    "initials",
    "nospace",
    "trunc 3",
    "trunc -3",
    "abbrev 5",
    "abbrevboth 2 6",
    "quote",
    "squote",
    "cat \"x\"",
    "indent 2",
    "nindent 2",
    "replace \"a\" \"X\"",
    "plural \"one\" | printf \"%s\"",
    "len",
    "b64enc",
    "b64enc | b64dec",
    "b32enc",
    "b32enc | b32dec",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "adler32sum",
    "toJson",
    "toYaml",
    "toString",
    "toStrings",
    "wrap 4",
    "wrapWith 3 \"|\"",
    "contains \"a\"",
    "hasPrefix \"a\"",
    "hasSuffix \"c\"",
    "splitList \",\"",
    "split \",\"",
    "splitn \",\" 2",
    "repeat 2",
    "urlquery",
    "htmlEscape",
    "js",
    "html",
    "print",
    "println",
    "empty",
    "typeOf",
    "kindOf",
    "default \"dflt\"",
    "required \"needed\"",
    "toDecimal",
    "atoi",
    "int",
    "int64",
    "float64",
    "toRawJson",
    "regexQuoteMeta",
    "sha256sum | trunc 8",
    "fromYaml",
    "fromJson",
    "substr 1 3",
    "mustToJson",
    "toPrettyJson",
];

/// Values as values.yaml gives them (go-yaml v2, then JSON: numbers are float64).
const VALUES_YAML: &str = r#"int: 42
negative: -7
zero: 0
float: 3.25
bigint: 12345678901234567890
huge: 1e+21
small: 0.000001
exp: 1e6
octal: 010
hex: 0x1F
str: "hello"
numstr: "42"
emptystr: ""
yes: yes
no: no
bool: true
nullval: null
tilde: ~
date: 2024-01-02
time: 2024-01-02T03:04:05Z
list: [3, 1, 2]
strlist: ["b", "a", "c", "a"]
mixed: [1, "two", 3.5, true, null, {k: v}]
emptylist: []
map: {b: 2, a: 1, c: {d: [1, 2]}}
emptymap: {}
nested:
  deep:
    deeper:
      value: found
  list:
  - name: first
    port: 80
  - name: second
    port: 443
multiline: |
  first line
  second line
folded: >
  folded
  text
quoted: 'single ''quoted'''
special: "tab\there"
unicode: "ünïcödé"
key with spaces: spaced
1: numeric-key
"#;

fn language() -> Vec<String> {
    let mut e: Vec<String> = [
        // Printing values of every kind.
        "{{ .Values.int }}",
        "{{ .Values.negative }}",
        "{{ .Values.zero }}",
        "{{ .Values.float }}",
        "{{ .Values.bigint }}",
        "{{ .Values.huge }}",
        "{{ .Values.small }}",
        "{{ .Values.exp }}",
        "{{ .Values.octal }}",
        "{{ .Values.hex }}",
        "{{ .Values.str }}",
        "{{ .Values.numstr }}",
        "{{ .Values.emptystr }}",
        "{{ .Values.yes }}",
        "{{ .Values.no }}",
        "{{ .Values.bool }}",
        "{{ .Values.nullval }}",
        "{{ .Values.tilde }}",
        "{{ .Values.date }}",
        "{{ .Values.time }}",
        "{{ .Values.list }}",
        "{{ .Values.strlist }}",
        "{{ .Values.mixed }}",
        "{{ .Values.emptylist }}",
        "{{ .Values.map }}",
        "{{ .Values.emptymap }}",
        "{{ .Values.nested }}",
        "{{ .Values.multiline }}",
        "{{ .Values.folded }}",
        "{{ .Values.quoted }}",
        "{{ .Values.special }}",
        "{{ .Values.unicode }}",
        "{{ index .Values \"key with spaces\" }}",
        "{{ index .Values \"1\" }}",
        "{{ index .Values \"true\" }}",
        "{{ index .Values \"false\" }}",
        "{{ .Values.missing }}",
        "{{ .Values.missing.deeper }}",
        "{{ .Values.nested.deep.deeper.value }}",
        "{{ .Values.nested.list }}",
        "{{ (index .Values.nested.list 1).port }}",
        "{{ index .Values.list 0 }}",
        "{{ index .Values.map \"c\" \"d\" 1 }}",
        "{{ .Values }}",
        // Types as templates see them.
        "{{ typeOf .Values.int }}",
        "{{ typeOf .Values.float }}",
        "{{ typeOf .Values.bigint }}",
        "{{ typeOf .Values.str }}",
        "{{ typeOf .Values.bool }}",
        "{{ typeOf .Values.nullval }}",
        "{{ typeOf .Values.list }}",
        "{{ typeOf .Values.map }}",
        "{{ typeOf .Values.date }}",
        "{{ typeOf .Values.yes }}",
        "{{ typeOf .Values.octal }}",
        "{{ typeOf .Values.hex }}",
        "{{ typeOf .Values.missing }}",
        "{{ kindOf .Values.int }}",
        "{{ kindOf .Values.list }}",
        "{{ kindOf .Values.map }}",
        "{{ kindOf .Values.nullval }}",
        "{{ typeOf 1 }}",
        "{{ typeOf 1.5 }}",
        "{{ typeOf \"s\" }}",
        "{{ typeOf true }}",
        "{{ typeOf nil }}",
        "{{ typeOf 'a' }}",
        "{{ typeOf (list) }}",
        "{{ typeOf (dict) }}",
        "{{ typeOf (now) }}",
        // Literals and constants.
        "{{ 1 }}",
        "{{ -1 }}",
        "{{ 1.5 }}",
        "{{ 1e3 }}",
        "{{ 0x1F }}",
        "{{ 0o17 }}",
        "{{ 0b101 }}",
        "{{ 1_000 }}",
        "{{ 'a' }}",
        "{{ '\\n' }}",
        "{{ \"esc\\t\\\"q\\\"\" }}",
        "{{ `raw\\n` }}",
        "{{ true }}",
        "{{ nil | default \"x\" }}",
        "{{ 1i }}",
        "{{ 2+3i }} {{ -1e3-2.5e-3i }} {{ 0i }} {{ 1e21i }}",
        "{{ printf \"%T %v %s %d %.2f %5.1e\" 1i 1i 1i 1i 1.5i 2i }}",
        "{{ kindOf 1i }} {{ typeOf 2i }} {{ 1i | quote }} {{ list 1i 2 | toString }}",
        "{{ eq 1i 1i }} {{ eq 1i 2i }} {{ toJson 1i }}|{{ toYaml 1i }}",
        "{{ lt 1i 2i }}",
        "{{ add 0i 2 }} {{ 1+0i }}",
        // Pipelines, variables and parentheses.
        "{{ \"x\" | upper | quote }}",
        "{{ $x := 5 }}{{ $x }}",
        "{{ $x := 5 }}{{ $x = 6 }}{{ $x }}",
        "{{ $ := . }}{{ $.Release.Name }}",
        "{{ with $v := .Values.str }}{{ $v }}{{ end }}",
        "{{ (print \"a\" \"b\") | len }}",
        "{{ printf \"%d-%s\" 3 \"x\" }}",
        "{{ print 1 2 \"a\" \"b\" 3 }}",
        "{{ println \"a\" 1 }}",
        "{{ .Values.str | printf \"%q\" }}",
        // Whitespace trimming.
        "a  {{- \"b\" -}}  c",
        "a\n{{- \"b\" }}\nc",
        "{{- /* comment */ -}}x",
        "{{/* comment */}}y",
        // Conditionals.
        "{{ if .Values.bool }}yes{{ else }}no{{ end }}",
        "{{ if .Values.zero }}yes{{ else }}no{{ end }}",
        "{{ if .Values.emptystr }}yes{{ else }}no{{ end }}",
        "{{ if .Values.emptylist }}yes{{ else }}no{{ end }}",
        "{{ if .Values.emptymap }}yes{{ else }}no{{ end }}",
        "{{ if .Values.nullval }}yes{{ else }}no{{ end }}",
        "{{ if .Values.missing }}yes{{ else }}no{{ end }}",
        "{{ if .Values.no }}yes{{ else }}no{{ end }}",
        "{{ if .Values.float }}yes{{ else if .Values.int }}int{{ else }}no{{ end }}",
        "{{ if and .Values.int .Values.str }}both{{ end }}",
        "{{ if or .Values.zero .Values.emptystr }}one{{ else }}none{{ end }}",
        "{{ and 1 0 2 }}",
        "{{ or 0 \"\" \"x\" }}",
        "{{ and }}",
        "{{ not 0 }}",
        "{{ not .Values.list }}",
        "{{ if not .Values.missing }}absent{{ end }}",
        "{{ with .Values.map }}{{ .a }}{{ end }}",
        "{{ with .Values.missing }}x{{ else }}fallback{{ end }}",
        "{{ with .Values.missing }}x{{ else with .Values.str }}{{ . }}{{ end }}",
        // Range.
        "{{ range .Values.list }}{{ . }},{{ end }}",
        "{{ range $i, $v := .Values.list }}{{ $i }}={{ $v }};{{ end }}",
        "{{ range $k, $v := .Values.map }}{{ $k }}={{ $v }};{{ end }}",
        "{{ range .Values.emptylist }}x{{ else }}empty{{ end }}",
        "{{ range .Values.missing }}x{{ else }}none{{ end }}",
        "{{ range 3 }}{{ . }}{{ end }}",
        "{{ range $i, $c := \"ab\" }}{{ $i }}{{ $c }}{{ end }}",
        "{{ range until 5 }}{{ if eq . 2 }}{{ continue }}{{ end }}{{ if eq . 4 }}{{ break }}{{ end }}{{ . }}{{ end }}",
        "{{ range .Values.nested.list }}{{ .name }}:{{ .port }} {{ end }}",
        "{{ range $k, $v := dict \"b\" 1 \"a\" 2 \"c\" 3 }}{{ $k }}{{ end }}",
        "{{ range .Values.strlist | uniq }}{{ . }}{{ end }}",
        // Comparisons.
        "{{ eq 1 1 }}",
        "{{ eq .Values.int 42.0 }}",
        "{{ eq \"a\" \"a\" \"b\" }}",
        "{{ ne 1 2 }}",
        "{{ lt 1 2 }}",
        "{{ le 2 2 }}",
        "{{ gt \"b\" \"a\" }}",
        "{{ ge 1.5 1.5 }}",
        "{{ eq .Values.str \"hello\" }}",
        "{{ eq .Values.nullval nil }}",
        "{{ eq 1 1.0 }}",
        "{{ lt 1 \"a\" }}",
        "{{ eq (list 1) (list 1) }}",
        // Templates: define, template, block, include, tpl.
        "{{ template \"inner\" \"x\" }}",
        "{{ template \"blk\" . }}",
        "{{ template \"inner\" }}",
        "{{ include \"helper\" . }}",
        "{{ include \"helper\" . | upper }}",
        "{{ tpl \"{{ .Values.str }}\" . }}",
        "{{ tpl \"{{ .Template.Name }}\" . }}",
        "{{ tpl (toYaml .Values.map) . }}",
        "{{ template \"missing-template\" . }}",
        "{{ include \"missing-template\" . }}",
        // Built-in objects.
        "{{ .Release.Name }}",
        "{{ .Release.Namespace }}",
        "{{ .Release.Service }}",
        "{{ .Release.IsInstall }}",
        "{{ .Release.IsUpgrade }}",
        "{{ .Release.Revision }}",
        "{{ .Release }}",
        "{{ .Chart.Name }}",
        "{{ .Chart.Version }}",
        "{{ .Chart.AppVersion }}",
        "{{ .Chart.Description }}",
        "{{ .Chart.Keywords }}",
        "{{ .Chart.Annotations }}",
        "{{ .Chart.Maintainers }}",
        "{{ .Chart.APIVersion }}",
        "{{ .Chart.Type }}",
        "{{ .Chart.IsRoot }}",
        "{{ .Chart.Home }}",
        "{{ .Chart.Sources }}",
        "{{ .Chart.KubeVersion }}",
        "{{ .Chart.Deprecated }}",
        "{{ .Chart | toJson }}",
        "{{ .Template.Name }}",
        "{{ .Template.BasePath }}",
        // A survey of the exported methods and fields of the values Helm passes to
        // templates, and of the values their methods return.
        "{{ .Capabilities.KubeVersion.String }}",
        "{{ .Capabilities.KubeVersion.Patch }}",
        "{{ .Capabilities.KubeVersion.Original }}",
        "{{ .Capabilities.HelmVersion.GitCommit | len | lt 0 }}",
        "{{ .Capabilities.HelmVersion.GoVersion | len | lt 0 }}",
        "{{ .Capabilities.HelmVersion.GitTreeState }}",
        "{{ .Capabilities.APIVersions | len | lt 10 }}",
        "{{ .Capabilities.APIVersions.Has \"apps/v1/Deployment\" }}",
        "{{ .Release.IsInstall }} {{ .Release.IsUpgrade }} {{ .Release.Revision }} {{ .Release.Service }}",
        "{{ .Release | toJson }}",
        "{{ printf \"%v\" .Release }}",
        "{{ .Chart.Annotations.a }} {{ .Chart.IsRoot }}",
        "{{ .Chart.Metadata }}",
        "{{ printf \"%T\" .Chart }}",
        "{{ .Template | toJson }}",
        "{{ printf \"%T\" .Template }}",
        "{{ .Values.AsMap | typeOf }}",
        "{{ .Values.Encode }}",
        "{{ (.Values.Table \"b\").AsMap | toJson }}",
        "{{ (.Values.Table \"b\").YAML }}",
        "{{ .Files.Lines \"files/f.txt\" | toJson }}",
        "{{ (.Files.Glob \"files/*\").AsSecrets }}",
        "{{ (.Files.Glob \"files/*\").AsConfig }}",
        "{{ (.Files.Glob \"files/*\").Glob \"*.txt\" | len }}",
        "{{ .Files | len }}",
        "{{ printf \"%T\" .Files }}",
        "{{ (toDate \"2006-01-02\" \"2024-03-04\").YearDay }}",
        "{{ (toDate \"2006-01-02\" \"2024-03-04\").Weekday }}",
        "{{ (toDate \"2006-01-02\" \"2024-03-04\").Month }}",
        "{{ (toDate \"2006-01-02\" \"2024-03-04\").Month | int }}",
        "{{ (toDate \"2006-01-02\" \"2024-03-04\").Truncate 3600000000000 }}",
        "{{ (toDate \"2006-01-02\" \"2024-03-04\").UnixMilli }}",
        "{{ (toDate \"2006-01-02\" \"2024-03-04\").IsZero }}",
        "{{ (toDate \"2006-01-02\" \"2024-03-04\").Before now }}",
        "{{ (toDate \"2006-01-02\" \"2024-03-04\").Equal (toDate \"2006-01-02\" \"2024-03-04\") }}",
        "{{ (toDate \"2006-01-02\" \"2024-03-04\").MarshalJSON | toString }}",
        "{{ (toDate \"2006-01-02\" \"2024-03-04\").String }}",
        "{{ (toDate \"2006-01-02\" \"2024-03-04\").Round 3600000000000 }}",
        "{{ (toDate \"2006-01-02\" \"2024-03-04\").AppendFormat (list) \"2006\" }}",
        "{{ (semver \"1.2.3-beta+b\").Prerelease }} {{ (semver \"1.2.3\").IncMinor }}",
        "{{ (semver \"1.2.3\").Compare (semver \"1.3.0\") }}",
        "{{ (semver \"v1.2.3\").Original }} {{ (semver \"1.2\").String }}",
        "{{ (semver \"1.2.3\").LessThan (semver \"1.3.0\") }}",
        "{{ (semver \"1.2.3\").Metadata }}|{{ (semver \"1.2.3\").MarshalJSON | toString }}",
        "{{ (urlParse \"http://a/b?c=d\").query }}",
        "{{ duration 90 | typeOf }} {{ (duration 90).Minutes }}",
        "{{ (duration 90).String }} {{ (duration 90).Round 60000000000 }}",
        "{{ .Capabilities.KubeVersion.Version | semver | toJson }}",
        "{{ .Subcharts | toJson }}",
        "{{ .Values.PathValue \"b.c\" }}",
        "{{ (toDate \"2006-01-02\" \"2024-03-04\").Month | int }} {{ (toDate \"2006-01-02\" \"2024-03-04\").Month | int64 }} {{ (toDate \"2006-01-02\" \"2024-03-04\").Weekday | float64 }}",
        "{{ ((toDate \"2006-01-02\" \"2024-03-04\").Sub (toDate \"2006-01-02\" \"2024-03-03\")) | int64 }}",
        "{{ ((toDate \"2006-01-02\" \"2024-03-04\").Sub (toDate \"2006-01-02\" \"2024-03-03\")) | int }}",
        "{{ (toDate \"2006-01-02\" \"2024-03-04\").Month | toString }} {{ add (toDate \"2006-01-02\" \"2024-03-04\").Month 1 }}",
        "{{ (toDate \"2006-01-02\" \"2024-03-04\").Weekday | atoi }}",
        "{{ (semver \"1.2.3\").MarshalJSON | toString }} {{ (semver \"1.2.3\").MarshalText | toString }}",
        "{{ (semver \"1.2.3\").SetPrerelease \"rc.1\" }} {{ (semver \"1.2.3\").SetMetadata \"m\" }}",
        "{{ (semver \"1.2.3\").SetPrerelease \"r_c\" }}",
        "{{ (semver \"1.2.3\").Value }}",
        "{{ printf \"%T\" ((semver \"1.2.3\").SetPrerelease \"rc.1\") }} {{ printf \"%T\" (semver \"1.2.3\").MarshalJSON }}",
        "{{ (semver \"1.2.3\").IncMinor | printf \"%T\" }}",
        "{{ (semver \"v1.2.3\").SetMetadata \"a.b-c\" | toJson }} {{ (semver \"1.2.3\").SetPrerelease \"01\" }}",
        "{{ (semver \"1.2.3\").SetMetadata \"a..b\" }}",
        "{{ (semver \"1.2.3\").IncMinor.Original }}",
        "{{ (semver \"1.2.3\").IncMinor.LessThan (semver \"1.3.0\") }}",
        "{{ printf \"%v %s %+v\" ((semver \"1.2.3\").IncMinor) ((semver \"1.2.3\").IncMinor) ((semver \"1.2.3\").IncMinor) }}",
        "{{ (semver \"1.2.3\").IncMinor | kindOf }} {{ semver \"1.2.3\" | kindOf }}",
        "{{ (semver \"1.2.3-0a\").SetPrerelease \"\" }}",
        "{{ (semver \"1.2.3\").Value | printf \"%T\" }}",
        "{{ .Capabilities.KubeVersion }}",
        "{{ .Capabilities.KubeVersion.Version }}",
        "{{ .Capabilities.KubeVersion.Major }}",
        "{{ .Capabilities.KubeVersion.Minor }}",
        "{{ .Capabilities.KubeVersion.GitVersion }}",
        "{{ .Capabilities.KubeVersion | toJson }}",
        "{{ .Capabilities.KubeVersion | quote }}",
        "{{ printf \"%v\" .Capabilities.KubeVersion }}",
        "{{ .Capabilities.APIVersions.Has \"apps/v1\" }}",
        "{{ .Capabilities.APIVersions.Has \"apps/v1/Deployment\" }}",
        "{{ .Capabilities.APIVersions.Has \"nope/v9\" }}",
        "{{ .Capabilities.HelmVersion.Version | len | lt 0 }}",
        "{{ .Capabilities.HelmVersion | toJson | len | lt 10 }}",
        "{{ .Files.Get \"files/a.conf\" }}",
        "{{ .Files.Get \"files/missing\" }}",
        "{{ .Files.GetBytes \"files/a.conf\" | len }}",
        "{{ .Files.Get \"files/binary.bin\" | b64enc }}",
        "{{ .Files.Get \"files/binary.bin\" | len }}",
        "{{ .Files.Get \"files/binary.bin\" | sha256sum }}",
        "{{ .Files.GetBytes \"files/binary.bin\" | b64enc }}",
        "{{ range $path, $_ := .Files.Glob \"files/*.conf\" }}{{ $path }};{{ end }}",
        "{{ range $path, $_ := .Files.Glob \"files/**\" }}{{ $path }};{{ end }}",
        "{{ (.Files.Glob \"files/*.conf\").AsConfig }}",
        "{{ (.Files.Glob \"files/*.conf\").AsSecrets }}",
        "{{ (.Files.Glob \"files/*.bin\").AsSecrets }}",
        "{{ range .Files.Lines \"files/lines.txt\" }}[{{ . }}]{{ end }}",
        "{{ .Values.AsMap | len }}",
        "{{ dig \"nested\" \"deep\" \"deeper\" \"value\" \"dflt\" .Values.AsMap }}",
        "{{ .Values.YAML }}",
        "{{ .Values.Table \"nested.deep\" }}",
        "{{ .Values.PathValue \"nested.deep.deeper.value\" }}",
        // Misc language behaviour.
        "{{ len .Values.list }}",
        "{{ len .Values.str }}",
        "{{ len .Values.map }}",
        "{{ len .Values.nullval }}",
        "{{ index .Values.list 5 }}",
        "{{ slice .Values.list 1 }}",
        "{{ slice .Values.list 1 2 }}",
        "{{ slice .Values.str 1 3 }}",
        "{{ call .Values.str }}",
        "{{ html \"<a>\" }}",
        "{{ js \"it's\" }}",
        "{{ urlquery \"a b&c\" }}",
        "{{ print nil }}",
        "{{ printf \"%v %T\" nil nil }}",
        "{{ printf \"%5.2f|%-5d|%05d|%x|%X|%o|%b|%e|%g|%c|%U\" 3.14159 42 42 255 255 8 5 1234.5678 0.000001 65 65 }}",
        "{{ printf \"%s %v %d\" .Values.list .Values.map .Values.int }}",
        "{{ printf \"%v\" .Values.float }}",
        "{{ printf \"%q\" .Values.list }}",
        "{{ printf \"%+v\" .Values.nested.list }}",
        "{{ printf \"%#v\" .Values.str }}",
        "{{ printf \"%t\" true }}",
        "{{ printf \"%08.3f\" -3.5 }}",
        "{{ printf \"%x\" \"hi\" }}",
        "{{ printf \"%d\" \"notanumber\" }}",
        "{{ printf \"%!\" }}",
        "{{ printf \"%d %d\" 1 }}",
        "{{ printf \"%d\" 1 2 }}",
        "{{ printf \"%[2]d %[1]d\" 1 2 }}",
        "{{ printf \"%*d\" 5 42 }}",
        // Floats in hexadecimal and binary-exponent form, with flags, precision and width.
        "{{ printf \"%x|%X|%b\" 3.5 1.0 2.0 }}",
        "{{ printf \"%x|%x|%x|%b\" 0.0 -1.5 1e300 -0.5 }}",
        "{{ printf \"%.1x|%.3X|%+x|%10x|%-10x|\" 1.96875 1.0 1.0 1.0 1.0 }}",
        "{{ printf \"%x|%b\" 5e-324 .Values.float }}",
        "{{ printf \"%x %X %b\" 1.5i 2i 1i }}",
        "{{ typeOf (chunk 2 (list 1 2 3)) }} {{ printf \"%T %#v\" (chunk 2 (list 1 2 3)) (chunk 1 (list \"a\")) }}",
        // go-yaml's words for errors templates see as data.
        "{{ fromYaml \"a: *nope\" | toJson }}|{{ fromYaml \"a: [1, 2\" | toJson }}|{{ fromYaml \"a: {b: 1\" | toJson }}",
        "{{ fromYaml \"? [a]\\n: 1\" | toJson }}|{{ fromYaml \"? {b: [1, x], a: null}\\n: 1\" | toJson }}|{{ fromYaml \"x: &a 1\\ny: [*b, 2]\" | toJson }}",
        // A null key, which sigs.k8s.io/yaml refuses turning the document into JSON.
        "{{ fromYaml \"~: 1\" | toJson }}|{{ fromYamlArray \"- {~: [a]}\" | toJson }}|{{ fromYaml \"x:\\n  ~: {b: 1}\" | toJson }}|{{ fromYaml \"a: [?, : b]\" | toJson }}",
        // Base64 errors name the offset Go's quantum decoder names.
        "{{ b64dec \"aGk\" }}|{{ b64dec \"aGVsbG8\" }}|{{ b64dec \"aGk==\" }}|{{ b64dec \"aG=\" }}|{{ b64dec \"a===\" }}|{{ b64dec \"aG=x\" }}|{{ b64dec \"aGVs\\nbG8=\" }}",
        // A leading byte order mark makes go-yaml escape every character after it.
        "{{ toYaml (dict \"a\" \"\\ufeffx y\" \"b\" \"x\\ufeff\") }}",
        // Bytes that are not UTF-8 survive encryption.
        "{{ encryptAES \"k\" \"caf\\xe9\" | decryptAES \"k\" | b64enc }} {{ encryptAES \"\\xff\" \"v\" | decryptAES \"\\xff\" }}",
        "{{ kindOf (chunk 2 (list 1 2 3)) }} {{ typeOf (first (chunk 2 (list 1 2 3))) }} {{ typeOf (chunk 2 list) }}",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    // Integer and float arithmetic over the values' types.
    for (a, b) in [
        ("3", "2"),
        ("-7", "2"),
        (".Values.int", "5"),
        (".Values.float", "2"),
        ("\"7\"", "3"),
        ("7.9", "2"),
        (".Values.bigint", "1"),
    ] {
        for op in [
            "add", "sub", "mul", "div", "mod", "max", "min", "add1", "addf", "subf", "mulf",
            "divf", "maxf", "minf",
        ] {
            if op == "add1" {
                e.push(format!("{{{{ {op} {a} }}}}"));
            } else {
                e.push(format!("{{{{ {op} {a} {b} }}}}"));
            }
        }
    }
    e
}

fn functions() -> Vec<String> {
    let mut e = Vec::new();
    for f in STRING_FUNCTIONS {
        for s in STRINGS {
            e.push(format!("{{{{ {} | {f} }}}}", quote(s)));
        }
    }
    let lists = [
        "(list 3 1 2)",
        "(list \"b\" \"a\" \"c\" \"a\")",
        "(list)",
        ".Values.mixed",
        ".Values.strlist",
        "(list 1 (list 2 3) (list (list 4)))",
    ];
    for list in lists {
        for f in [
            "first",
            "last",
            "rest",
            "initial",
            "reverse",
            "uniq",
            "compact",
            "sortAlpha",
            "len",
            "toJson",
            "toYaml",
            "join \",\"",
            "has 1",
            "has \"a\"",
            "without 1 \"a\"",
            "append \"z\"",
            "prepend \"z\"",
            "concat (list 9)",
            "slice 1",
            "chunk 2",
            "empty",
            "typeOf",
            "mustFirst",
            "mustLast",
            "toStrings",
            "deepCopy",
            "flatten",
            "mustUniq",
        ] {
            e.push(format!("{{{{ {list} | {f} }}}}"));
        }
    }
    for expression in [
        "{{ list 1 2 3 | mustAppend 4 }}",
        "{{ until 5 }}",
        "{{ until -3 }}",
        "{{ untilStep 0 10 3 }}",
        "{{ untilStep 10 0 -3 }}",
        "{{ seq 5 }}",
        "{{ seq 2 5 }}",
        "{{ seq 0 3 10 }}",
        "{{ seq 10 -3 0 }}",
        "{{ seq 0 }}",
        "{{ dict \"a\" 1 \"b\" \"two\" }}",
        "{{ dict \"a\" 1 \"b\" }}",
        "{{ dict \"b\" 1 \"a\" 2 | keys | sortAlpha }}",
        "{{ dict \"b\" 1 \"a\" 2 | values | len }}",
        "{{ get (dict \"a\" 1) \"a\" }}",
        "{{ get (dict \"a\" 1) \"missing\" }}",
        "{{ set (dict \"a\" 1) \"b\" 2 }}",
        "{{ unset (dict \"a\" 1 \"b\" 2) \"a\" }}",
        "{{ hasKey (dict \"a\" 1) \"a\" }}",
        "{{ pluck \"a\" (dict \"a\" 1) (dict \"a\" 2) (dict \"b\" 3) }}",
        "{{ pick (dict \"a\" 1 \"b\" 2 \"c\" 3) \"a\" \"c\" }}",
        "{{ omit (dict \"a\" 1 \"b\" 2 \"c\" 3) \"a\" }}",
        "{{ merge (dict \"a\" 1 \"n\" (dict \"x\" 1)) (dict \"a\" 2 \"b\" 3 \"n\" (dict \"y\" 2)) }}",
        "{{ mergeOverwrite (dict \"a\" 1) (dict \"a\" 2 \"b\" 3) }}",
        "{{ deepCopy .Values.map }}",
        "{{ dig \"a\" \"b\" \"dflt\" (dict \"a\" (dict \"b\" \"found\")) }}",
        "{{ dig \"a\" \"x\" \"dflt\" (dict \"a\" (dict \"b\" \"found\")) }}",
        "{{ .Values.map | toYaml }}",
        "{{ .Values.map | toJson }}",
        "{{ .Values.map | toPrettyJson }}",
        "{{ .Values.map | toRawJson }}",
        "{{ .Values.mixed | toYaml }}",
        "{{ .Values.nested | toYaml }}",
        "{{ .Values | toYaml }}",
        "{{ .Values.map | toToml }}",
        "{{ .Values.nested | toToml }}",
        "{{ \"a: 1\\nb: [x, y]\" | fromYaml }}",
        "{{ \"- 1\\n- two\" | fromYamlArray }}",
        "{{ \"a: [\" | fromYaml }}",
        "{{ (\"a: [\" | fromYaml).Error }}",
        "{{ \"{\\\"a\\\": 1}\" | fromJson }}",
        "{{ \"[1, 2]\" | fromJsonArray }}",
        "{{ \"{bad\" | fromJson }}",
        "{{ (\"{bad\" | fromJson).Error }}",
        "{{ \"a = 1\\n[t]\\nb = 'x'\" | fromToml }}",
        "{{ toYaml \"<<\" }}",
        "{{ toYaml \"\\u007f\" }}",
        "{{ toYaml 1e6 }}",
        "{{ toToml (dict \"f\" 1e6 \"i\" 3) }}",
        "{{ toToml (dict \"\" \"x\" \"a b\" 1 \"é\" \"ü\" \"dot.key\" (dict \"k\" \"v\") \"e\" (dict)) }}",
        "{{ toToml (dict \"c\" \"\\x01\\x1b\\x7f\\t\\n\\r\\b\\f\\\"\\\\\") }}",
        "{{ toToml (dict \"k\" (list (dict \"a\" 1) (dict \"b\" (list (dict \"c\" 1))))) }}",
        "{{ toToml (dict \"m\" (list 1 (dict \"a\" 1)) \"l\" (list (list 1 2) (list \"a\"))) }}",
        "{{ toToml (dict \"n\" (list 1 nil)) }}",
        "{{ toToml (dict \"s\" (\"Y2Fm6Q==\" | b64dec)) }}",
        "{{ ternary \"yes\" \"no\" true }}",
        "{{ ternary \"yes\" \"no\" false }}",
        "{{ coalesce nil \"\" 0 \"first\" \"second\" }}",
        "{{ coalesce .Values.missing .Values.str }}",
        "{{ all 1 \"a\" true }}",
        "{{ all 1 \"\" true }}",
        "{{ any 0 \"\" \"x\" }}",
        "{{ any 0 \"\" }}",
        "{{ empty 0 }}",
        "{{ empty \"\" }}",
        "{{ empty (list) }}",
        "{{ empty (dict) }}",
        "{{ empty nil }}",
        "{{ empty false }}",
        "{{ empty .Values.missing }}",
        "{{ default \"d\" \"\" }}",
        "{{ default \"d\" 0 }}",
        "{{ default \"d\" false }}",
        "{{ default \"d\" (list) }}",
        "{{ default \"d\" \"v\" }}",
        "{{ .Values.missing | default \"d\" }}",
        "{{ required \"need it\" .Values.missing }}",
        "{{ required \"need it\" \"present\" }}",
        "{{ fail \"stop here\" }}",
        "{{ int \"12\" }}",
        "{{ int \"12.9\" }}",
        "{{ int 12.9 }}",
        "{{ int -12.9 }}",
        "{{ int \"x\" }}",
        "{{ int true }}",
        "{{ int64 \"0x10\" }}",
        "{{ int64 1e19 }}",
        "{{ int 1e300 }}",
        "{{ float64 \"1.5\" }}",
        "{{ float64 \"x\" }}",
        "{{ float64 3 }}",
        "{{ toString 1.0 }}",
        "{{ toString 1e20 }}",
        "{{ toString .Values.huge }}",
        "{{ toString nil }}",
        "{{ toString (list 1) }}",
        "{{ toDecimal \"0777\" }}",
        "{{ atoi \"12x\" }}",
        "{{ floor 1.7 }}",
        "{{ ceil 1.2 }}",
        "{{ round 1.55 1 }}",
        "{{ round 2.5 0 }}",
        "{{ round -2.5 0 }}",
        "{{ biggest 1 5 3 }}",
        "{{ addf 0.1 0.2 }}",
        "{{ mulf 1.1 3 }}",
        "{{ divf 1 3 }}",
        "{{ div 7 0 }}",
        "{{ mod 7 0 }}",
        "{{ randInt 1 2 }}",
        "{{ randAlpha 8 | len }}",
        "{{ randAlphaNum 8 | len }}",
        "{{ randNumeric 8 | len }}",
        "{{ randAscii 8 | len }}",
        "{{ uuidv4 | len }}",
        "{{ semver \"1.2.3-beta.1+build\" }}",
        "{{ (semver \"1.2.3\").Major }}",
        "{{ (semver \"v1.2\").String }}",
        "{{ semverCompare \">=1.2.0\" \"1.3.0\" }}",
        "{{ semverCompare \"~1.2\" \"1.3.0\" }}",
        "{{ semverCompare \"^1.2.3-0\" \"1.2.4-beta\" }}",
        "{{ semverCompare \">1.0\" \"not-a-version\" }}",
        "{{ semver \"bad\" }}",
        "{{ regexMatch \"^[a-z]+$\" \"abc\" }}",
        "{{ regexMatch \"^[\\\\w-\\\\.]+$\" \"ab-c.d\" }}",
        "{{ regexMatch \"\\\\d{3}\" \"a123\" }}",
        "{{ regexFind \"[0-9]+\" \"abc123def456\" }}",
        "{{ regexFindAll \"[0-9]\" \"a1b2c3\" -1 }}",
        "{{ regexFindAll \"[0-9]\" \"a1b2c3\" 2 }}",
        "{{ regexReplaceAll \"a(x*)b\" \"-ab-axxb-\" \"${1}W\" }}",
        "{{ regexReplaceAll \"a(x*)b\" \"-ab-axxb-\" \"$1W\" }}",
        "{{ regexReplaceAllLiteral \"a(x*)b\" \"-ab-axxb-\" \"${1}\" }}",
        "{{ regexSplit \"z+\" \"pizza\" -1 }}",
        "{{ regexSplit \"\" \"abc\" -1 }}",
        "{{ regexMatch \"[\" \"x\" }}",
        "{{ mustRegexMatch \"[\" \"x\" }}",
        "{{ regexMatch \"(?i)ABC\" \"abc\" }}",
        "{{ regexFindAll \"a*\" \"baaab\" -1 }}",
        "{{ regexReplaceAll \"a*\" \"baaab\" \"X\" }}",
        "{{ regexQuoteMeta \"1.5*[x]\" }}",
        "{{ date \"2006-01-02\" (toDate \"2006-01-02\" \"2024-03-04\") }}",
        "{{ toDate \"2006-01-02\" \"2024-03-04\" | date \"Jan 2, 2006 15:04 MST\" }}",
        "{{ dateInZone \"2006-01-02 15:04\" (toDate \"2006-01-02\" \"2024-03-04\") \"UTC\" }}",
        "{{ toDate \"2006-01-02\" \"2024-03-04\" | unixEpoch }}",
        "{{ toDate \"2006-01-02\" \"bad\" }}",
        "{{ mustToDate \"2006-01-02\" \"bad\" }}",
        "{{ dateModify \"+1h\" (toDate \"2006-01-02\" \"2024-03-04\") | date \"2006-01-02 15:04\" }}",
        "{{ duration \"95\" }}",
        "{{ duration 3600 }}",
        "{{ durationRound \"2h10m5s\" }}",
        "{{ ago (now) | len | lt 0 }}",
        "{{ now | date \"2006\" | len }}",
        "{{ htmlDate \"2024-03-04T05:06:07Z\" }}",
        "{{ toDate \"2006-01-02\" \"2024-03-04\" }}",
        "{{ (toDate \"2006-01-02\" \"2024-03-04\").Unix }}",
        "{{ (toDate \"2006-01-02\" \"2024-03-04\").AddDate 0 1 0 | date \"2006-01-02\" }}",
        "{{ (toDate \"2006-01-02\" \"2024-03-04\").UTC.Year }}",
        "{{ (toDate \"2006-01-02\" \"2024-03-04\").Format \"Mon Jan 2\" }}",
        "{{ b64dec \"not base64!\" }}",
        "{{ b64dec \"/w==\" | b64enc }}",
        "{{ b64dec \"/w==\" | len }}",
        "{{ b32dec \"!!\" }}",
        "{{ sha256sum (b64dec \"/w==\") }}",
        "{{ toJson (b64dec \"/w==\") }}",
        "{{ encryptAES \"secretkey\" \"plaintext\" | len | lt 0 }}",
        "{{ encryptAES \"secretkey\" \"plaintext\" | decryptAES \"secretkey\" }}",
        "{{ derivePassword 1 \"long\" \"password\" \"user\" \"example.com\" }}",
        "{{ bcrypt \"x\" | len }}",
        "{{ htpasswd \"user\" \"pass\" | len | lt 0 }}",
        "{{ genPrivateKey \"rsa\" | len | lt 100 }}",
        "{{ genPrivateKey \"ecdsa\" | len | lt 100 }}",
        "{{ genPrivateKey \"ed25519\" | len }}",
        "{{ genPrivateKey \"dsa\" | len | lt 100 }}",
        "{{ genPrivateKey \"nope\" }}",
        "{{ $ca := genCA \"ca\" 365 }}{{ $ca.Cert | len | lt 100 }}",
        "{{ $c := genSelfSignedCert \"x\" (list \"10.0.0.1\") (list \"x.local\") 365 }}{{ $c.Key | len | lt 100 }}",
        "{{ getHostByName \"localhost\" | len | lt 0 }}",
        "{{ base \"/a/b/c.txt\" }}",
        "{{ dir \"/a/b/c.txt\" }}",
        "{{ ext \"/a/b/c.txt\" }}",
        "{{ clean \"/a/../b/./c\" }}",
        "{{ isAbs \"/a\" }}",
        "{{ osBase \"a/b\" }}",
        "{{ urlParse \"https://u:p@host:8080/path?q=1#frag\" }}",
        "{{ (urlParse \"https://host/p\").host }}",
        "{{ urlJoin (dict \"scheme\" \"https\" \"host\" \"h\" \"path\" \"/p\") }}",
        "{{ lookup \"v1\" \"Pod\" \"ns\" \"x\" }}",
        "{{ lookup \"v1\" \"Pod\" \"ns\" \"x\" | len }}",
        "{{ toYaml (lookup \"v1\" \"Namespace\" \"\" \"\") }}",
        "{{ include \"helper\" . | indent 4 }}",
        "{{ list 1 2 | toJson | fromJsonArray | len }}",
        "{{ uniq (list 1 1.0 \"1\") }}",
        "{{ sortAlpha (list 10 9 \"b\" \"A\") }}",
        "{{ join \"-\" (list 1 nil \"a\" true) }}",
        "{{ join \"-\" \"notalist\" }}",
        "{{ cat \"a\" nil \"b\" 1 }}",
        "{{ catstr }}",
        "{{ nospace \"a b\\tc\\nd\" }}",
        "{{ trunc 300 \"abc\" }}",
        "{{ substr 1 100 \"abc\" }}",
        "{{ substr -1 2 \"abc\" }}",
        "{{ trunc 2 \"ñandú\" }}",
        "{{ substr 0 1 \"ñandú\" }}",
        "{{ repeat 3 \"ab\" }}",
        "{{ repeat -1 \"ab\" }}",
        "{{ indent -2 \"x\" }}",
        "{{ replace \"\" \"-\" \"abc\" }}",
        "{{ plural \"one\" \"many\" 1 }}",
        "{{ plural \"one\" \"many\" 2 }}",
        "{{ quote nil }}",
        "{{ quote 1 2.5 true }}",
        "{{ squote \"it's\" }}",
        "{{ upper 1 }}",
        "{{ len nil }}",
        "{{ deepCopy .Values.missing }}",
        "{{ mustDeepCopy .Values.missing }}",
        "{{ toStrings (list 1 nil \"a\" 2.5) }}",
        "{{ kindIs \"string\" \"a\" }}",
        "{{ typeIs \"float64\" .Values.int }}",
        "{{ typeIsLike \"float64\" .Values.int }}",
        "{{ deepEqual (list 1 2) (list 1 2) }}",
        "{{ max 1 2.5 }}",
        "{{ min \"3\" 2 }}",
        "{{ sub 1 2.9 }}",
        "{{ mul 2 \"3\" 4 }}",
        "{{ add 1 2 3 4 }}",
        "{{ adler32sum \"\" }}",
        "{{ list \"a\" | has \"a\" }}",
        "{{ first \"notalist\" }}",
        "{{ keys (dict) }}",
        "{{ values (dict \"a\" (list 1)) }}",
        "{{ dict | toYaml }}",
        "{{ list | toYaml }}",
        "{{ list nil | toYaml }}",
        "{{ dict \"k\" nil | toJson }}",
        "{{ toYaml (dict \"multi\" \"a\\nb\" \"lead\" \" x\" \"colon\" \"a: b\" \"num\" \"123\" \"bool\" \"yes\" \"empty\" \"\") }}",
        "{{ toYaml (dict \"long\" (repeat 100 \"word \")) }}",
        "{{ toJson 1.0 }}",
        "{{ toJson 1e21 }}",
        "{{ toJson .Values.float }}",
        "{{ toJson \"<tag>&\" }}",
        "{{ toRawJson \"<tag>&\" }}",
        "{{ toPrettyJson (dict \"b\" (list 1 2) \"a\" (dict)) }}",
        "{{ fromYaml \"key:\\tvalue\" }}",
        "{{ fromYaml \"- \\tx\" }}",
        "{{ (fromYaml \"a: 1\").a | typeOf }}",
        "{{ (fromJson \"{\\\"a\\\": 1}\").a | typeOf }}",
        "{{ (fromJson \"{\\\"a\\\": 12345678901234567890}\").a }}",
        "{{ get (fromYaml \"a: 010\") \"a\" }}",
        "{{ get (fromYaml \"a: 0o10\") \"a\" }}",
        "{{ get (fromYaml \"a: 1_000\") \"a\" }}",
        "{{ get (fromYaml \"a: .5\") \"a\" }}",
        "{{ get (fromYaml \"a: +1\") \"a\" }}",
        "{{ get (fromYaml \"a: Off\") \"a\" }}",
        "{{ get (fromYaml \"a: 2024-01-02\") \"a\" | typeOf }}",
    ] {
        e.push(expression.to_owned());
    }
    e
}

/// TOML documents for `fromToml`, one of each of BurntSushi/toml's lexer and parser
/// errors (and a few it accepts where other readers do not): its error texts reach
/// templates as data (`.Error`), line and last key included.
const TOML_DOCUMENTS: &[&[u8]] = &[
    b"a =",
    b"a = 1\na = 2",
    b"[t]\nx = 1\n[t]",
    b"a = 1 b = 2",
    b"= 1",
    b".a = 1",
    b"a. = 1",
    b"[]",
    b"[a.]",
    b"[[a]",
    b"[a]]x",
    b"a = \"abc",
    b"a = \"a\nb\"",
    b"a = 'abc",
    b"a = \"\"\"abc",
    b"a = '''abc",
    b"a = \"\\q\"",
    b"a = \"\\x4\"",
    b"a = \"\\u12\"",
    b"a = \"\\U1234567\"",
    b"a = \"\\uD800\"",
    b"a = 0x",
    b"a = 0o9",
    b"a = 0b2",
    b"a = +0x1",
    b"a = 01",
    b"a = 1__0",
    b"a = _1",
    b"a = 1_",
    b"a = 9223372036854775808",
    b"a = 1e400",
    b"a = 1.",
    b"a = .5",
    b"a = 1.e5",
    b"a = 1e",
    b"a = 01.5",
    b"a = 1.5-3",
    b"a = +inx",
    b"a = -nax",
    b"a = tru",
    b"a = foo",
    b"a = 1979-13-27",
    b"a = 1979-05-27T25:00:00",
    b"a = 1979-05-27T07:32:00+25:00",
    b"a = 1979-5-27",
    b"a = [1, 2",
    b"a = [1,,2]",
    b"a = [1 2]",
    b"a = {x = 1",
    b"a = {x = 1 y = 2}",
    b"a = {x = 1, x = 2}",
    b"a = {,}",
    b"a = 1\n[a]",
    b"[a]\n[a.b]\nc = 1\n[a]",
    b"a.b = 1\na = 2",
    b"a = [1]\n[[a]]",
    b"[[a]]\n[a]",
    b"a = {}\na.b = 1",
    b"x = 1 # ok\ny = \x01",
    b"a = \"\\x01\"",
    b"\xef\xbb\xbfa = =",
    b"a = \"\"\"abc\"\"\"\"\"\"",
    b"a = '''abc''''''",
    b"a = \"a\" \"b\"",
    b"\"a\"b = 1",
    b"a = 1\n\n\nb = ]",
    b"[a]\nb = 1\nb = 2",
    b"[a.b]\nc = 1\n[a]\nb = 2",
    b"a = \"\"\"x\\ y\"\"\"",
    b"a = 1979-05-27 07:32",
    b"a = 07:32:00.5",
    b"a = 1979-05-27T07:32:00.123456789123Z",
    b"a = 2024-02-30",
    b"a = 2023-02-29",
    b"a = 1979-05-27T07:32Z",
    b"a = inf\nb = -nan\nc = +inf",
    b"a = 0x_ff",
    b"a = 1_000\nb = 0xdead_beef\nc = 0o7_7\nd = 0b1_0",
    b"a = \"\\e\\x41\"",
    b"a = {x = 1,}",
    b"a = {\nx = 1\n}",
    b"k = \"caf\xe9\"",
    b"a = 1\r\nb = 2\r",
    b"a = \"\"\"\nx\\\n   y\"\"\"\nb = \'\'\'\nraw\'\'\'",
    b"[a]\n[[a.b]]\nc = 1\n[[a.b]]\nc = 2\n[a.b.d]\ne = 3",
    b"a = [1, \"x\", [2.5], {b = true}]\n\"q k\".\"\" = 3",
];

/// A Go string literal of `bytes`: printable ASCII as it is, everything else `\xHH`.
fn go_bytes_literal(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for &b in bytes {
        match b {
            b'"' | b'\\' => {
                out.push('\\');
                out.push(b as char);
            }
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

fn toml_documents() -> Vec<String> {
    TOML_DOCUMENTS
        .iter()
        .map(|document| format!("{{{{ fromToml {} | toJson }}}}", go_bytes_literal(document)))
        .collect()
}

/// Template text that is not UTF-8 (base64 of bytes such as `caf\xe9`), through `tpl`,
/// `include` of a file that is not UTF-8 (`_binary.tpl`), and literals: Go keeps the
/// bytes of text and raw literals and reads those of a quoted literal as U+FFFD.
fn non_utf8_templates() -> Vec<String> {
    [
        "{{ tpl (\"Y2Fm6Q==\" | b64dec) . }}",
        "{{ tpl (\"Y2Fm6Q==\" | b64dec) . | len }}",
        "{{ tpl (printf \"%s{{ 1 }}\" (\"Y2Fm6Q==\" | b64dec)) . }}",
        "{{ tpl (\"Y2Fm6SB7eyAuUmVsZWFzZS5OYW1lIH19IP8=\" | b64dec) . }}",
        "{{ tpl (\"e3sgImNhZu4iIH19\" | b64dec) . }}",
        "{{ tpl (\"e3sgYGNhZu5gIH19\" | b64dec) . }}",
        "{{ tpl (\"e3sgZGVmaW5lICJxIiB9fWNhZul7eyBlbmQgfX17eyBpbmNsdWRlICJxIiAuIH19\" | b64dec) . }}",
        "{{ tpl (\"e3sgIlx4ZTnpIiB9fQ==\" | b64dec) . }}",
        "{{ tpl (\"e3sgeOkgfX0=\" | b64dec) . }}",
        "{{ tpl (include \"binary\" .) . }}",
        "{{ include \"binary\" . }}",
        "{{ include \"binary\" . | len }}",
    ]
    .map(str::to_owned)
    .to_vec()
}

fn groups() -> Vec<Group> {
    let mut expressions = language();
    expressions.extend(functions());
    expressions.extend(toml_documents());
    expressions.extend(non_utf8_templates());
    vec![
        Group {
            name: "values.yaml",
            flags: Vec::new(),
            expressions,
        },
        Group {
            name: "--set and friends",
            flags: [
                "--set",
                "a=1,b=true,c=null,d=01,e=1e3,f=x y,g={1,2},h.i=j,k[1]=z,l=0x10,m=+5,n=1.50",
                "--set-string",
                "s=007,t=true",
                "--set-json",
                "j={\"n\":[1,2.5,null,\"x\"]}",
                "--set-literal",
                "lit={a,b}",
            ]
            .into_iter()
            .map(str::to_owned)
            .collect(),
            expressions: [
                "a", "b", "c", "d", "e", "f", "g", "h", "k", "l", "m", "n", "s", "t", "j", "lit",
            ]
            .iter()
            .flat_map(|key| {
                [
                    format!("{{{{ .Values.{key} }}}}"),
                    format!("{{{{ typeOf .Values.{key} }}}}"),
                    format!("{{{{ .Values.{key} | toJson }}}}"),
                ]
            })
            .collect(),
        },
    ]
}

const CHART_YAML: &str = "apiVersion: v2
name: diff
version: 1.2.3-rc.1+build.5
appVersion: \"2.0\"
description: the differential suite's chart
home: https://example.com
keywords: [one, two]
sources: [https://example.com/src]
maintainers:
- name: Someone
  email: someone@example.com
annotations:
  b: second
  a: first
kubeVersion: \">=1.20.0-0\"
type: application
";

/// Definitions the expressions use (`define` and `block` cannot be nested in the
/// expressions' own `define`).
const HELPERS: &str = "{{- define \"helper\" -}}helped {{ .Release.Name }}{{- end -}}
{{- define \"inner\" }}[{{ . }}]{{ end -}}
{{- block \"blk\" . }}block-default {{ .Chart.Name }}{{ end -}}
";

/// Writes the chart for `expressions` (numbered from `first`) and returns its directory.
fn write_chart(dir: &Path, expressions: &[(usize, &str)]) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("templates")).unwrap();
    std::fs::create_dir_all(dir.join("files")).unwrap();
    std::fs::write(dir.join("Chart.yaml"), CHART_YAML).unwrap();
    std::fs::write(dir.join("values.yaml"), VALUES_YAML).unwrap();
    std::fs::write(dir.join("templates/_helpers.tpl"), HELPERS).unwrap();
    std::fs::write(
        dir.join("templates/_binary.tpl"),
        b"{{- define \"binary\" }}caf\xe9 {{ \"l\xe9\" }} {{ `r\xe9` }} {{ \"\\xe9\" }}\xff{{ end -}}",
    )
    .unwrap();
    std::fs::write(dir.join("files/a.conf"), "x=1\n").unwrap();
    std::fs::write(dir.join("files/b.conf"), "y=2\n").unwrap();
    std::fs::write(dir.join("files/lines.txt"), "one\ntwo\n\nfour").unwrap();
    std::fs::write(
        dir.join("files/binary.bin"),
        [0u8, 0xff, 0xfe, 0x80, b'a', 0xc3],
    )
    .unwrap();
    for (n, expression) in expressions {
        std::fs::write(
            dir.join(format!("templates/e{n:04}.yaml")),
            format!(
                "{{{{- define \"e{n}\" }}}}{expression}{{{{ end -}}}}\ne{n}: {{{{ include \"e{n}\" . | b64enc | quote }}}}\n"
            ),
        )
        .unwrap();
    }
}

/// What a render gave for each expression number, or the error text.
fn render(
    command: Command,
    dir: &Path,
    flags: &[String],
) -> Result<BTreeMap<usize, Vec<u8>>, String> {
    let mut command = command;
    let output = command
        .args(["template", "rel"])
        .arg(dir)
        .args(["--namespace", "ns"])
        .args(flags)
        .output()
        .expect("run template");
    if !output.status.success() {
        let text = String::from_utf8_lossy(&output.stderr);
        return Err(text.lines().next().unwrap_or("").to_owned());
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut found = BTreeMap::new();
    for line in stdout.lines() {
        let Some(rest) = line.strip_prefix('e') else {
            continue;
        };
        let Some((number, value)) = rest.split_once(": ") else {
            continue;
        };
        let (Ok(number), Some(b64)) = (
            number.parse::<usize>(),
            value.strip_prefix('"').and_then(|v| v.strip_suffix('"')),
        ) else {
            continue;
        };
        found.insert(number, decode_base64(b64));
    }
    Ok(found)
}

fn decode_base64(text: &str) -> Vec<u8> {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let mut buffer = 0u32;
    let mut bits = 0;
    for byte in text.bytes() {
        let Some(value) = alphabet.iter().position(|&c| c == byte) else {
            continue;
        };
        buffer = (buffer << 6) | value as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
        }
    }
    out
}

/// Error texts without the tools' prefixes and the chart's temporary path.
fn normalise_error(text: &str, dir: &Path) -> String {
    text.trim_start_matches("Error: ")
        .trim_start_matches("error: ")
        .replace(&dir.display().to_string(), "<chart>")
}

#[derive(Default)]
struct Outcome {
    agreed: usize,
    both_failed: usize,
    failed_texts_differ: usize,
    /// Expressions both tools refuse, in other words: (expression, chartkit, helm).
    other_words: Vec<(String, String, String)>,
    differences: BTreeMap<String, String>,
}

fn known_differences() -> BTreeSet<String> {
    let path = chartkit_tests::workspace_root().join("tests/differential/known_differences.txt");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split(" \t# ").next().unwrap_or(l).to_owned())
        .collect()
}

#[test]
fn template_expressions_render_as_helm_renders_them() {
    let Some(_) =
        chartkit_tests::peers::helm_or_skip("template_expressions_render_as_helm_renders_them")
    else {
        return;
    };
    let context = TestContext::new();
    let mut outcome = Outcome::default();
    let mut total = 0;
    for group in groups() {
        let numbered: Vec<(usize, &str)> = group
            .expressions
            .iter()
            .enumerate()
            .map(|(i, e)| (total + i, e.as_str()))
            .collect();
        total += numbered.len();
        for batch in numbered.chunks(64) {
            run_batch(&context, &group, batch, &mut outcome);
        }
    }
    let failed = outcome.differences.len();
    eprintln!(
        "template differential: {} passed, {failed} failed ({} expressions; {} fail in both tools, {} of those with other words)",
        outcome.agreed, total, outcome.both_failed, outcome.failed_texts_differ
    );
    for (expression, ours, theirs) in &outcome.other_words {
        eprintln!("  both refuse {expression}\n    chartkit: {ours}\n    helm:     {theirs}");
    }
    let known = known_differences();
    let mut unexpected: Vec<String> = Vec::new();
    for (expression, difference) in &outcome.differences {
        if !known.contains(expression) {
            unexpected.push(format!("{expression}\n    {difference}"));
        }
    }
    let fixed: Vec<&String> = known
        .iter()
        .filter(|k| !outcome.differences.contains_key(*k) && all_expressions().contains(*k))
        .collect();
    assert!(total >= 1000, "only {total} expressions");
    assert!(
        unexpected.is_empty() && fixed.is_empty(),
        "{} new differences from helm:\n{}\n\n{} listed in tests/differential/known_differences.txt now agree with helm; remove them:\n{:#?}",
        unexpected.len(),
        unexpected.join("\n"),
        fixed.len(),
        fixed
    );
}

/// Renders a batch with both tools and compares; a batch that fails in either is split in
/// halves until the failing expressions stand alone.
fn run_batch(context: &TestContext, group: &Group, batch: &[(usize, &str)], outcome: &mut Outcome) {
    let dir = context.path("diff");
    write_chart(&dir, batch);
    let ours = render(context.chartkit(), &dir, &group.flags);
    let theirs = render(context.helm().unwrap(), &dir, &group.flags);
    match (ours, theirs) {
        (Ok(ours), Ok(theirs)) => {
            for (n, expression) in batch {
                compare_one(outcome, expression, group.name, ours.get(n), theirs.get(n));
            }
        }
        _ if batch.len() > 1 => {
            let (left, right) = batch.split_at(batch.len() / 2);
            run_batch(context, group, left, outcome);
            run_batch(context, group, right, outcome);
        }
        (Err(ours), Err(theirs)) => {
            outcome.both_failed += 1;
            outcome.agreed += 1;
            let (ours, theirs) = (normalise_error(&ours, &dir), normalise_error(&theirs, &dir));
            if ours != theirs {
                outcome.failed_texts_differ += 1;
                outcome
                    .other_words
                    .push((batch[0].1.to_owned(), ours, theirs));
            }
        }
        (ours, theirs) => {
            let (n, expression) = batch[0];
            let show = |r: Result<BTreeMap<usize, Vec<u8>>, String>| match r {
                Ok(found) => format!(
                    "rendered {:?}",
                    String::from_utf8_lossy(found.get(&n).map_or(&[][..], |v| v))
                ),
                Err(e) => format!("failed: {e}"),
            };
            outcome.differences.insert(
                expression.to_owned(),
                format!(
                    "[{}] chartkit {}; helm {}",
                    group.name,
                    show(ours),
                    show(theirs)
                ),
            );
        }
    }
}

fn all_expressions() -> BTreeSet<String> {
    groups().into_iter().flat_map(|g| g.expressions).collect()
}

fn compare_one(
    outcome: &mut Outcome,
    expression: &str,
    group: &str,
    ours: Option<&Vec<u8>>,
    theirs: Option<&Vec<u8>>,
) {
    if ours == theirs && ours.is_some() {
        outcome.agreed += 1;
        return;
    }
    let show = |v: Option<&Vec<u8>>| match v {
        Some(bytes) => format!("{:?}", String::from_utf8_lossy(bytes)),
        None => "nothing".to_owned(),
    };
    outcome.differences.insert(
        expression.to_owned(),
        format!("[{group}] chartkit {}; helm {}", show(ours), show(theirs)),
    );
}

#[path = "template_differential/yaml_errors.rs"]
mod yaml_errors;
