//! Sprig and Helm functions, each checked against what helm renders.

mod common;

use common::{Case, check_cases, check_cases_against_helm};

const CASES: &[Case] = &[
    // Strings.
    (
        "{{ abbrev 5 \"hello world\" }}|{{ abbrevboth 5 10 \"1234 5678 9123\" }}|{{ trunc 5 \"hello world\" }}|{{ trunc -5 \"hello world\" }}",
        "",
        "he...|...5678...|hello|world",
    ),
    (
        "{{ trim \"  a b  \" }}|{{ upper \"abc\" }}|{{ lower \"ABC\" }}|{{ title \"hello wor-ld x_y\" }}|{{ untitle \"Hello World\" }}",
        "",
        "a b|ABC|abc|Hello Wor-Ld X_y|hello world",
    ),
    (
        "{{ substr 1 3 \"hello\" }}|{{ substr -1 2 \"hello\" }}|{{ substr 2 -1 \"hello\" }}|{{ repeat 3 \"ab\" }}",
        "",
        "el|he|llo|ababab",
    ),
    (
        "{{ trimAll \"$\" \"$5.00$\" }}|{{ trimSuffix \"-\" \"a-\" }}|{{ trimPrefix \"-\" \"-a\" }}|{{ nospace \" a b\tc \" }}|{{ initials \"First Try\" }}",
        "",
        "5.00|a|a|abc|FT",
    ),
    (
        "{{ swapcase \"This Is A.Test\" }}|{{ snakecase \"FirstName\" }}|{{ camelcase \"http_server\" }}|{{ kebabcase \"FirstName\" }}",
        "",
        "tHIS iS a.tEST|first_name|HttpServer|first-name",
    ),
    (
        "{{ wrap 5 \"Hello World\" }}|{{ wrapWith 5 \"\\t\" \"Hello World\" }}",
        "",
        "Hello\nWorld|Hello\tWorld",
    ),
    (
        "{{ contains \"cat\" \"catch\" }}|{{ hasPrefix \"cat\" \"catch\" }}|{{ hasSuffix \"cat\" \"catch\" }}",
        "",
        "true|true|false",
    ),
    (
        "{{ quote \"a\" 1 nil \"b\\\"c\" }}|{{ squote \"a\" 2 }}|{{ cat \"a\" nil 2 \"b\" }}",
        "",
        "\"a\" \"1\" \"b\\\"c\"|'a' '2'|a 2 b",
    ),
    (
        "{{ indent 2 \"a\\nb\" }}|{{ nindent 2 \"a\" }}|{{ replace \" \" \"-\" \"a b c\" }}|{{ plural \"one\" \"many\" 2 }}|{{ plural \"one\" \"many\" 1 }}",
        "",
        "  a\n  b|\n  a|a-b-c|many|one",
    ),
    (
        "{{ toString 1.5 }}|{{ toString .Values.l }}|{{ split \"$\" \"a$b\" }}|{{ (split \"$\" \"a$b\")._1 }}|{{ splitList \",\" \"a,b\" }}|{{ splitn \"$\" 2 \"a$b$c\" }}",
        "l: [1, x]",
        "1.5|[1 x]|map[_0:a _1:b]|b|[a b]|map[_0:a _1:b$c]",
    ),
    (
        "{{ join \"-\" (list \"a\" 1 nil \"b\") }}|{{ sortAlpha (list \"c\" \"a\" \"b\") }}|{{ toStrings (list 1 2) }}|{{ typeOf (toStrings (list 1)) }}",
        "",
        "a-1-b|[a b c]|[1 2]|[]string",
    ),
    ("{{ hello }}", "", "Hello!"),
    // Lists.
    (
        "{{ list 1 \"a\" }}|{{ append (list 1) 2 }}|{{ prepend (list 1) 0 }}|{{ first (list 1 2) }}|{{ last (list 1 2) }}|{{ rest (list 1 2 3) }}|{{ initial (list 1 2 3) }}",
        "",
        "[1 a]|[1 2]|[0 1]|1|2|[2 3]|[1 2]",
    ),
    (
        "{{ reverse (list 1 2 3) }}|{{ compact (list 1 \"\" 0 nil \"a\") }}|{{ uniq (list 1 1 2 \"a\" \"a\") }}|{{ without (list 1 2 3) 2 }}|{{ has 2 (list 1 2) }}|{{ has \"x\" nil }}",
        "",
        "[3 2 1]|[1 a]|[1 2 a]|[1 3]|true|false",
    ),
    (
        "{{ slice (list 1 2 3) 1 }}|{{ slice (list 1 2 3) 0 2 }}|{{ concat (list 1) (list 2 3) }}|{{ chunk 2 (list 1 2 3) }}|{{ first (list) }}|{{ rest (list) }}",
        "",
        "[2 3]|[1 2]|[1 2 3]|[[1 2] [3]]|<no value>|[]",
    ),
    (
        "{{ has 1.0 .Values.l }}|{{ has 1 .Values.l }}|{{ last .Values.l }}",
        "l: [1, 2]",
        "true|false|2",
    ),
    (
        "{{ until 3 }}|{{ untilStep 1 10 4 }}|{{ seq 3 }}|{{ seq 2 -2 }}|{{ typeOf (until 2) }}",
        "",
        "[0 1 2]|[1 5 9]|1 2 3|2 1 0 -1 -2|[]int",
    ),
    // `until` lists are stored as plain numbers; every way of reading them sees []int.
    (
        "{{ $l := untilStep 2 12 3 }}{{ index $l 1 }}|{{ len $l }}|{{ toJson $l }}|{{ slice $l 1 3 }}|{{ typeOf (slice $l 1 3) }}|{{ append $l 99 }}|{{ typeOf (append $l 99) }}|{{ typeOf (deepCopy $l) }}|{{ last $l }}|{{ has 5 $l }}|{{ join \",\" $l }}|{{ range $i, $v := $l }}{{ $i }}={{ $v }} {{ end }}|{{ printf \"%v %d %#v\" $l $l $l }}|{{ deepEqual $l (untilStep 2 12 3) }}|{{ toYaml (until 2) }}|{{ until -3 }}|{{ untilStep 5 0 -2 }}",
        "",
        "5|4|[2,5,8,11]|[5 8]|[]int|[2 5 8 11 99]|[]interface {}|[]int|11|true|2,5,8,11|0=2 1=5 2=8 3=11 |[2 5 8 11] [2 5 8 11] []int{2, 5, 8, 11}|true|- 0\n- 1|[0 -1 -2]|[5 3 1]",
    ),
    // Dicts.
    (
        "{{ $d := dict \"a\" 1 \"b\" 2 }}{{ $d }}|{{ get $d \"a\" }}|{{ get $d \"z\" }}|{{ hasKey $d \"b\" }}|{{ $_ := set $d \"c\" 3 }}{{ $d }}|{{ $_ := unset $d \"a\" }}{{ $d }}",
        "",
        "map[a:1 b:2]|1||true|map[a:1 b:2 c:3]|map[b:2 c:3]",
    ),
    (
        "{{ keys (dict \"b\" 1 \"a\" 2) | sortAlpha }}|{{ pick (dict \"a\" 1 \"b\" 2) \"a\" }}|{{ omit (dict \"a\" 1 \"b\" 2) \"a\" }}|{{ pluck \"a\" (dict \"a\" 1) (dict \"a\" 2) (dict) }}",
        "",
        "[a b]|map[a:1]|map[b:2]|[1 2]",
    ),
    (
        "{{ dict \"a\" }}|{{ dict 1 2 }}|{{ dig \"a\" \"b\" \"def\" (dict \"a\" (dict \"b\" \"x\")) }}|{{ dig \"a\" \"z\" \"def\" (dict \"a\" (dict \"b\" \"x\")) }}",
        "",
        "map[a:]|map[1:2]|x|def",
    ),
    (
        "{{ mergeOverwrite (dict \"a\" 1 \"b\" \"x\" \"c\" (list 1)) (dict \"a\" 0 \"b\" \"\" \"c\" (list) \"d\" nil) | toJson }}|{{ merge (dict \"a\" \"\" \"l\" (list 1) \"s\" \"keep\" \"z\" 0) (dict \"a\" \"y\" \"l\" (list 2) \"m\" (dict \"k\" 1) \"s\" (dict \"x\" 1) \"z\" 5) | toJson }}",
        "",
        "{\"a\":0,\"b\":\"\",\"c\":[],\"d\":null}|{\"a\":\"y\",\"l\":[1],\"m\":{\"k\":1},\"s\":\"keep\",\"z\":5}",
    ),
    (
        "{{ $d := dict \"m\" (dict \"a\" 1) }}{{ $_ := merge $d (dict \"m\" (dict \"b\" 2)) }}{{ $d | toJson }}|{{ mergeOverwrite (dict \"m\" (dict \"a\" 1 \"b\" 1)) (dict \"m\" (dict \"a\" 2) \"x\" (list)) | toJson }}",
        "",
        "{\"m\":{\"a\":1,\"b\":2}}|{\"m\":{\"a\":2,\"b\":1},\"x\":[]}",
    ),
    (
        "{{ $c := deepCopy .Values.m }}{{ $_ := set $c \"x\" 1 }}{{ .Values.m }}|{{ $c }}|{{ typeOf (deepCopy .Values) }}",
        "m: {a: 1}",
        "map[a:1]|map[a:1 x:1]|common.Values",
    ),
    (
        "{{ $_ := set .Values \"added\" \"yes\" }}{{ .Values.added }}",
        "",
        "yes",
    ),
    // Math.
    (
        "{{ add 1 2 3 }}|{{ add1 5 }}|{{ sub 5 3 }}|{{ div 7 2 }}|{{ mod 7 3 }}|{{ mul 2 3 4 }}|{{ max 1 5 3 }}|{{ min 4 2 8 }}|{{ biggest 1 9 }}",
        "",
        "6|6|2|3|1|24|5|2|9",
    ),
    (
        "{{ add \"3\" 2.7 \"0x10\" }}|{{ int64 \"3.0\" }}|{{ float64 \"1e3\" }}|{{ toDecimal \"0777\" }}|{{ int .Values.f }}|{{ typeOf (add 1 1) }}|{{ atoi \"12\" }}|{{ atoi \"x\" }}",
        "f: 3.9",
        "21|3|1000|511|3|int64|12|0",
    ),
    (
        "{{ addf 0.1 0.2 }}|{{ divf 10 3 }}|{{ mulf 1.1 3 }}|{{ subf 1 0.9 }}|{{ add1f 1.5 }}|{{ maxf 1 2.5 }}|{{ minf 1 0.5 }}",
        "",
        "0.3|3.3333333333333335|3.3|0.1|2.5|2.5|0.5",
    ),
    (
        "{{ round 2.345 2 }}|{{ round 2.5 0 }}|{{ ceil 1.2 }}|{{ floor \"2.8\" }}|{{ round 1.2345 3 0.4 }}",
        "",
        "2.35|3|2|2|1.235",
    ),
    // Defaults.
    (
        "{{ default \"d\" .Values.missing }}|{{ default \"d\" \"\" }}|{{ default \"d\" 0 }}|{{ default \"d\" false }}|{{ default \"d\" \"x\" }}|{{ \"y\" | default \"d\" }}|{{ default \"d\" }}",
        "",
        "d|d|d|d|x|y|d",
    ),
    (
        "{{ empty \"\" }}|{{ empty 0 }}|{{ empty (list) }}|{{ empty (dict) }}|{{ empty \"a\" }}|{{ empty .Values.missing }}|{{ empty false }}",
        "",
        "true|true|true|true|false|true|true",
    ),
    (
        "{{ coalesce nil \"\" 0 \"x\" }}|{{ coalesce nil }}|{{ all 1 \"a\" }}|{{ all 1 \"\" }}|{{ any 0 \"\" \"x\" }}|{{ any }}|{{ ternary \"y\" \"n\" true }}|{{ ternary \"y\" \"n\" false }}",
        "",
        "x|<no value>|true|false|true|false|y|n",
    ),
    // Reflection.
    (
        "{{ typeOf 1 }}|{{ typeOf 1.5 }}|{{ typeOf \"s\" }}|{{ typeOf .Values.l }}|{{ typeOf .Values.m }}|{{ typeOf nil }}|{{ kindOf .Values.l }}|{{ kindOf .Values.m }}|{{ kindOf nil }}",
        "l: [1]\nm: {a: 1}",
        "int|float64|string|[]interface {}|map[string]interface {}|<nil>|slice|map|invalid",
    ),
    (
        "{{ kindIs \"int\" 1 }}|{{ typeIs \"string\" \"a\" }}|{{ typeIsLike \"string\" \"a\" }}|{{ deepEqual (list 1 2) (list 1 2) }}|{{ deepEqual 1 1.0 }}",
        "",
        "true|true|true|true|false",
    ),
    // JSON.
    (
        "{{ toJson .Values }}|{{ toRawJson (dict \"a\" \"<b>&\") }}|{{ toJson (dict \"a\" \"<b>&\") }}",
        "b: [1, 2.5, x]\na: {c: null}",
        "{\"a\":{\"c\":null},\"b\":[1,2.5,\"x\"]}|{\"a\":\"<b>&\"}|{\"a\":\"\\u003cb\\u003e\\u0026\"}",
    ),
    (
        "{{ toPrettyJson (dict \"a\" (list 1 2) \"b\" (dict)) }}",
        "",
        "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {}\n}",
    ),
    (
        "{{ (fromJson \"{\\\"a\\\": [1, 2]}\").a }}|{{ fromJson \"[1]\" }}|{{ fromJson \"{bad\" }}|{{ fromJsonArray \"[1, \\\"x\\\"]\" }}|{{ fromJsonArray \"{}\" }}",
        "",
        "[1 2]|map[Error:json: cannot unmarshal array into Go value of type map[string]interface {}]|map[Error:invalid character 'b' looking for beginning of object key string]|[1 x]|[json: cannot unmarshal object into Go value of type []interface {}]",
    ),
    (
        "{{ mustFromJson \"[1]\" }}|{{ toJson 1000000.0 }}|{{ toJson 1e21 }}|{{ toJson \"\\u2028\" }}",
        "",
        "[1]|1000000|1e+21|\"\\u2028\"",
    ),
    // YAML.
    (
        "{{ toYaml .Values }}",
        "b: [1, 2.5, x]\na: {c: null, long: 1000000}",
        "a:\n  c: null\n  long: 1000000\nb:\n- 1\n- 2.5\n- x",
    ),
    (
        "{{ toYaml \"a\" }}|{{ toYaml nil }}|{{ toYaml (list) }}|{{ toYaml (dict \"k\" \"yes\") }}",
        "",
        "a|null|[]|k: \"yes\"",
    ),
    (
        "{{ (fromYaml \"a: 1\\nb: [x]\").b }}|{{ fromYaml \"- 1\" }}|{{ fromYamlArray \"- 1\\n- a\" }}|{{ fromYaml \"\" }}",
        "",
        "[x]|map[Error:error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}]|[1 a]|map[]",
    ),
    (
        "{{ fromYamlArray \"a: 1\" }}|{{ fromYamlArray \"\" }}|{{ fromYaml \"a: null\" }}",
        "",
        "[error unmarshaling JSON: while decoding JSON: json: cannot unmarshal object into Go value of type []interface {}]|[]|map[a:<nil>]",
    ),
    (
        "{{ toYamlPretty (dict \"a\" (list 1 2) \"b\" (dict \"c\" 1.5)) }}",
        "",
        "a:\n  - 1\n  - 2\nb:\n  c: 1.5",
    ),
    // Helm.
    (
        "{{ define \"x\" }}[{{ . }}]{{ end }}{{ include \"x\" 1 }}{{ include \"x\" (dict \"a\" 1) | upper }}",
        "",
        "[1][MAP[A:1]]",
    ),
    (
        "{{ tpl \"{{ .Values.a }}-{{ .Release.Name }}\" . }}|{{ tpl \"{{ .missing }}\" (dict) }}|{{ tpl \"{{ define \\\"inner\\\" }}I{{ end }}{{ include \\\"inner\\\" . }}\" . }}",
        "a: va",
        "va-rel||I",
    ),
    (
        "{{ required \"msg\" \"ok\" }}|{{ required \"msg\" 0 }}|{{ lookup \"v1\" \"Pod\" \"ns\" \"x\" }}|{{ getHostByName \"example.com\" }}",
        "",
        "ok|0|map[]|",
    ),
    // Encoding and paths.
    (
        "{{ b64enc \"hello\" }}|{{ b64dec \"aGVsbG8=\" }}|{{ b64dec \"!!\" }}|{{ b32enc \"hello\" }}|{{ b32dec \"NBSWY3DP\" }}",
        "",
        "aGVsbG8=|hello|illegal base64 data at input byte 0|NBSWY3DP|hello",
    ),
    (
        "{{ base \"a/b.txt\" }}|{{ dir \"a/b.txt\" }}|{{ clean \"a//b/../c\" }}|{{ ext \"a/b.tar.gz\" }}|{{ isAbs \"/a\" }}|{{ osBase \"/x/y\" }}",
        "",
        "b.txt|a|a/c|.gz|true|y",
    ),
    // Semver.
    (
        "{{ semverCompare \">=1.19-0\" \"v1.35.0\" }}|{{ semver \"1.2.3-beta+x\" }}|{{ (semver \"v1.2.3\").Major }}|{{ typeOf (semver \"1.0.0\") }}|{{ semverCompare \"^1.2\" \"1.3.0\" }}|{{ semverCompare \"<1.25.0-0\" \"1.29.0\" }}|{{ (semver \"1.2.3\").LessThan (semver \"1.3.0\") }}",
        "",
        "true|1.2.3-beta+x|1|*semver.Version|true|false|true",
    ),
    (
        "{{ semverCompare \">=1.0.0-0, <2.0.0\" \"1.5.0-beta\" }}|{{ semverCompare \"~1.2\" \"1.2.9\" }}|{{ semverCompare \">1.0 || <0.5\" \"0.4.0\" }}|{{ semverCompare \"1.x\" \"1.9.9\" }}|{{ semverCompare \"!=1.2.3\" \"1.2.3\" }}|{{ semverCompare \"^0.2.3\" \"0.3.0\" }}|{{ semverCompare \">=1.0\" \"01.2.3\" }}",
        "",
        "true|true|true|true|false|false|true",
    ),
    // Regular expressions.
    (
        "{{ regexMatch \"^\\\\w+$\" \"héllo\" }}|{{ regexFindAll \"[0-9]+\" \"a1b22c333\" 2 }}|{{ regexReplaceAll \"a(x*)b\" \"-ab-axxb-\" \"${1}W\" }}|{{ regexSplit \"a\" \"banana\" -1 }}|{{ regexQuoteMeta \"a.b\" }}|{{ regexFind \"b+\" \"abbbc\" }}|{{ regexReplaceAllLiteral \"a\" \"banana\" \"$1\" }}",
        "",
        "false|[1 22]|-W-xxW-|[b n n ]|a\\.b|bbb|b$1n$1n$1",
    ),
    // Dates (fixed inputs only; `now` differs between runs).
    (
        "{{ toDate \"2006-01-02\" \"2023-03-04\" | date \"Jan 2, 2006 15:04 MST\" }}|{{ duration \"95\" }}|{{ durationRound \"2h10m\" }}|{{ toDate \"2006-01-02\" \"2023-03-04\" | unixEpoch }}|{{ dateInZone \"2006-01-02 15:04 MST\" (toDate \"2006-01-02\" \"2023-03-04\") \"America/New_York\" }}|{{ htmlDate 0 }}|{{ duration 95 }}",
        "",
        "Mar 4, 2023 00:00 UTC|1m35s|2h|1677888000|2023-03-03 19:00 EST|1970-01-01|0s",
    ),
    (
        "{{ dateModify \"1h30m\" (toDate \"2006-01-02\" \"2023-03-04\") | date \"15:04\" }}|{{ (toDate \"2006-01-02T15:04:05Z07:00\" \"2023-03-04T05:06:07+02:00\").Unix }}|{{ typeOf now }}|{{ now | date \"2006\" | len }}",
        "",
        "01:30|1677899167|time.Time|4",
    ),
    // Crypto with deterministic results; random ones are checked for shape.
    (
        "{{ sha1sum \"abc\" }}|{{ sha256sum \"abc\" }}|{{ sha512sum \"abc\" | trunc 16 }}|{{ adler32sum \"hello world\" }}",
        "",
        "a9993e364706816aba3e25717850c26c9cd0d89d|ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad|ddaf35a193617aba|436929629",
    ),
    (
        "{{ derivePassword 1 \"long\" \"password\" \"user\" \"example.com\" }}|{{ derivePassword 2 \"maximum\" \"pw\" \"u\" \"s\" }}|{{ derivePassword 1 \"nope\" \"pw\" \"u\" \"s\" }}",
        "",
        "ZedaFaxcZaso9*|S2$TYTKe9bU9YXWCqT@%|cannot find password template nope",
    ),
    (
        "{{ decryptAES \"secretkey\" \"RAITOCyZ037X6tIg4dueTy+bWQV4mTJI/R7Io1/oSj0=\" }}|{{ encryptAES \"k\" \"hello\" | decryptAES \"k\" }}|{{ encryptAES \"k\" \"\" }}",
        "",
        "plaintext|hello|",
    ),
    (
        "{{ bcrypt \"x\" | len }}|{{ bcrypt \"x\" | trunc 7 }}|{{ htpasswd \"a:b\" \"x\" }}|{{ randBytes 3 | len }}|{{ uuidv4 | len }}|{{ randAlphaNum 8 | len }}|{{ randNumeric 4 | regexMatch \"^[0-9]{4}$\" }}",
        "",
        "60|$2a$10$|invalid username: a:b|4|36|8|true",
    ),
    // TOML.
    (
        "{{ toToml (dict \"b\" 1 \"a\" \"x\" \"t\" (dict \"k\" true \"n\" (dict \"z\" 1.5)) \"l\" (list 1 2)) }}|{{ toToml .Values }}|{{ fromToml \"a = 1\\nb = \\\"x\\\"\\n[t]\\nc = [1,2]\" }}|{{ toToml \"x\" }}",
        "b: 1\nlt: [{a: 1}, {b: 2}]",
        "a = \"x\"\nb = 1\nl = [1, 2]\n\n[t]\n  k = true\n  [t.n]\n    z = 1.5\n|b = 1.0\n\n[[lt]]\n  a = 1.0\n\n[[lt]]\n  b = 2.0\n|map[a:1 b:x t:map[c:[1 2]]]|\"x\"",
    ),
    // URLs.
    (
        "{{ urlParse \"https://user:p%40ss@example.com:8080/a%20b/c?x=1&y=2#fr%20ag\" }}|{{ urlJoin (dict \"scheme\" \"https\" \"host\" \"example.com:80\" \"path\" \"/a b\" \"query\" \"q=1\" \"fragment\" \"f g\" \"userinfo\" \"u:p\") }}|{{ urlParse \"mailto:x@y.com\" }}|{{ urlJoin (dict \"host\" \"h\" \"path\" \"p\") }}",
        "",
        "map[fragment:fr ag host:example.com:8080 hostname:example.com opaque: path:/a b/c query:x=1&y=2 scheme:https userinfo:user:p%40ss]|https://u:p@example.com:80/a%20b?q=1#f%20g|map[fragment: host: hostname: opaque:x@y.com path: query: scheme:mailto userinfo:]|//h/p",
    ),
    // Certificates and keys: random, so only their shape is compared.
    (
        "{{ $ca := genCA \"x\" 1 }}{{ typeOf $ca }}|{{ $ca.Cert | trunc 27 }}|{{ $ca.Key | trunc 31 }}|{{ (genSelfSignedCert \"a\" nil nil 1).Cert | trunc 27 }}|{{ $b := buildCustomCert ($ca.Cert | b64enc) ($ca.Key | b64enc) }}{{ eq $b.Cert $ca.Cert }}|{{ genPrivateKey \"ecdsa\" | trunc 30 }}|{{ genPrivateKey \"ed25519\" | trunc 27 }}|{{ genPrivateKey \"x\" }}|{{ (genSignedCertWithKey \"s\" nil nil 1 $ca (genPrivateKey \"ecdsa\")).Key | trunc 30 }}|{{ kindOf $ca }}",
        "",
        "sprig.certificate|-----BEGIN CERTIFICATE-----|-----BEGIN RSA PRIVATE KEY-----|-----BEGIN CERTIFICATE-----|true|-----BEGIN EC PRIVATE KEY-----|-----BEGIN PRIVATE KEY-----|Unknown type x|-----BEGIN EC PRIVATE KEY-----|struct",
    ),
    // toYaml edge cases: quoting, literal blocks, folding, nesting, numbers.
    (
        "{{ toYaml .Values }}",
        "s1: \"yes\"\ns2: \"1.0\"\ns3: \"0777\"\ns4: \"~\"\ns5: \"\"\ns6: \" lead\"\ns7: \"a: b\"\ns8: \"multi\\nline\\n\"\ns9: \"trail \\nx\"\ne1: \"😀\"\nl: [{a: 1, b: [x, {c: d}]}, [], {}]\nlong: \"aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp qqqq rrrr\"\nf: 1.5e-7\nbig: 12345678901234567890",
        "big: 12345678901234567000\ne1: \"\\U0001F600\"\nf: 1.5e-07\nl:\n- a: 1\n  b:\n  - x\n  - c: d\n- []\n- {}\nlong: aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp\n  qqqq rrrr\ns1: \"yes\"\ns2: \"1.0\"\ns3: \"0777\"\ns4: \"~\"\ns5: \"\"\ns6: ' lead'\ns7: 'a: b'\ns8: |\n  multi\n  line\ns9: \"trail \\nx\"",
    ),
    // The remaining aliases and `must` variants.
    (
        "{{ tuple 1 \"a\" }}|{{ push (list 1) 2 }}|{{ mustPush (list 1) 2 }}|{{ mustAppend (list 1) 2 }}|{{ mustPrepend (list 1) 0 }}|{{ mustFirst (list 1 2) }}|{{ mustLast (list 1 2) }}|{{ mustRest (list 1 2) }}|{{ mustInitial (list 1 2) }}|{{ mustReverse (list 1 2) }}|{{ mustUniq (list 1 1) }}|{{ mustWithout (list 1 2) 1 }}|{{ mustHas 1 (list 1) }}|{{ mustSlice (list 1 2 3) 1 2 }}|{{ mustCompact (list 0 1) }}|{{ mustChunk 1 (list 1 2) }}",
        "",
        "[1 a]|[1 2]|[1 2]|[1 2]|[0 1]|1|2|[2]|[1]|[2 1]|[1]|[2]|true|[2]|[1]|[[1] [2]]",
    ),
    (
        "{{ mustAppend \"x\" 1 }}",
        "",
        "ERR:error calling mustAppend: Cannot push on type string",
    ),
    (
        "{{ $d := dict \"a\" 1 \"b\" 2 }}{{ $_ := unset $d \"b\" }}{{ values $d }}|{{ mustMerge (dict \"a\" 1) (dict \"a\" 2 \"b\" 3) }}|{{ mustMergeOverwrite (dict \"a\" 1) (dict \"a\" 2) }}|{{ mustDeepCopy (dict \"a\" (list 1)) }}",
        "",
        "[1]|map[a:1 b:3]|map[a:2]|map[a:[1]]",
    ),
    (
        "{{ mustRegexMatch \"^a\" \"ab\" }}|{{ mustRegexFind \"b+\" \"abb\" }}|{{ mustRegexFindAll \"b\" \"abb\" -1 }}|{{ mustRegexReplaceAll \"b\" \"abb\" \"c\" }}|{{ mustRegexReplaceAllLiteral \"b\" \"abb\" \"$1\" }}|{{ mustRegexSplit \"b\" \"abba\" -1 }}",
        "",
        "true|bb|[b b]|acc|a$1$1|[a  a]",
    ),
    (
        "{{ mustRegexMatch \"(\" \"x\" }}",
        "",
        "ERR:error calling mustRegexMatch: error parsing regexp",
    ),
    (
        "{{ mustToJson (dict \"a\" \"<\") }}|{{ mustToRawJson (dict \"a\" \"<\") }}|{{ mustToPrettyJson (list 1) }}|{{ mustToYaml (list 1 \"a\") }}",
        "",
        "{\"a\":\"\\u003c\"}|{\"a\":\"<\"}|[\n  1\n]|- 1\n- a",
    ),
    (
        "{{ trimall \"-\" \"--a--\" }}|{{ osClean \"a//b/../c\" }}|{{ osDir \"/a/b\" }}|{{ osExt \"x.tgz\" }}|{{ osIsAbs \"a\" }}",
        "",
        "a|a/c|/a|.tgz|false",
    ),
    (
        "{{ $t := mustToDate \"2006-01-02\" \"2023-03-04\" }}{{ date_in_zone \"15:04 MST\" $t \"Asia/Tokyo\" }}|{{ htmlDateInZone $t \"America/Los_Angeles\" }}|{{ date_modify \"-1h\" $t | date \"2006-01-02 15\" }}|{{ mustDateModify \"30m\" $t | date \"15:04\" }}|{{ must_date_modify \"2h\" $t | date \"15:04\" }}|{{ dateModify \"bad\" $t | date \"15:04\" }}",
        "",
        "09:00 JST|2023-03-03|2023-03-03 23|00:30|02:00|00:00",
    ),
    (
        "{{ mustToDate \"2006-01-02\" \"bad\" }}",
        "",
        "ERR:error calling mustToDate: parsing time \"bad\" as \"2006-01-02\": cannot parse \"bad\" as \"2006\"",
    ),
    (
        "{{ ago now }}|{{ randAlpha 5 | len }}|{{ randAscii 7 | len }}|{{ shuffle \"abc\" | len }}|{{ randInt 3 4 }}",
        "",
        "0s|5|7|3|3",
    ),
    (
        "{{ $ca := genCA \"ca\" 1 }}{{ $k := genPrivateKey \"ecdsa\" }}{{ (genCAWithKey \"c2\" 1 $k).Key | eq $k }}|{{ (genSelfSignedCertWithKey \"s\" (list \"1.2.3.4\") (list \"a\") 1 $k).Cert | trunc 27 }}|{{ (genSignedCert \"x\" nil nil 1 $ca).Cert | trunc 27 }}|{{ (buildCustomCert ($ca.Cert | b64enc) ($ca.Key | b64enc)).Key | eq $ca.Key }}",
        "",
        "true|-----BEGIN CERTIFICATE-----|-----BEGIN CERTIFICATE-----|true",
    ),
    (
        "{{ mustToDate \"2006-01-02 15:04\" \"2023-03-04 1x\" }}",
        "",
        "ERR:error calling mustToDate: parsing time \"2023-03-04 1x\" as \"2006-01-02 15:04\": cannot parse \"x\" as \":\"",
    ),
    (
        "{{ (toDate \"Jan _2 3:04PM\" \"Mar  4 5:06AM\").Format \"2006-01-02T15:04\" }}|{{ (toDate \"02/01/06 15:04:05.000\" \"04/03/23 10:11:12.345\").Format \"2006-01-02 15:04:05.999\" }}",
        "",
        "0000-03-04T05:06|2023-03-04 10:11:12.345",
    ),
];

#[test]
fn functions_render_like_helm() {
    check_cases(CASES);
}

#[test]
fn expected_outputs_are_helms() {
    check_cases_against_helm(CASES);
}
