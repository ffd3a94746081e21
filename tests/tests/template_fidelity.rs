//! What templates see of the built-in objects the render pipeline fills (`.Chart`,
//! `.Capabilities`), checked against recorded helm output and, when helm is installed,
//! against helm itself.

use chartkit_tests::peers::helm_or_skip;
use chartkit_tests::{TestContext, stderr, stdout};

/// Renders `demo` with chartkit (and helm, when present), expecting `expected` as the
/// output of `templates/t.yaml`.
fn renders_like_helm(test: &str, context: &TestContext, args: &[&str], expected: &str) {
    let chart = context.path("demo").display().to_string();
    let mut full = vec!["template", "rel", chart.as_str()];
    full.extend_from_slice(args);
    let ours = context.run(&full);
    assert!(ours.status.success(), "{}", stderr(&ours));
    let want = format!("---\n# Source: demo/templates/t.yaml\n{expected}");
    assert_eq!(stdout(&ours), want);
    if helm_or_skip(test).is_some() {
        let helm = context.helm().unwrap().args(&full).output().unwrap();
        assert_eq!(stdout(&helm), want, "{}", stderr(&helm));
    }
}

/// `.Chart` is Helm 4's metadata map: no annotations is a nil map, `null` in JSON.
#[test]
fn chart_metadata_encodes_like_helm() {
    let context = TestContext::new();
    context.demo_chart(&[(
        "templates/t.yaml",
        "a: {{ .Chart | toJson }}\nb: {{ .Chart.Annotations | toJson }} {{ typeOf .Chart.Annotations }} {{ printf \"%#v\" .Chart.Annotations }} {{ empty .Chart.Annotations }}\n",
    )]);
    renders_like_helm(
        "chart_metadata_encodes_like_helm",
        &context,
        &[],
        "a: {\"APIVersion\":\"v2\",\"Annotations\":null,\"AppVersion\":\"\",\"Condition\":\"\",\"Dependencies\":[],\"Deprecated\":false,\"Description\":\"\",\"Home\":\"\",\"Icon\":\"\",\"IsRoot\":true,\"Keywords\":[],\"KubeVersion\":\"\",\"Maintainers\":[],\"Name\":\"demo\",\"Sources\":[],\"Tags\":\"\",\"Type\":\"\",\"Version\":\"0.1.0\"}\nb: null map[string]string map[string]string(nil) true\n",
    );
}

/// `--kube-version` keeps the text given as `.KubeVersion.Version`; the version printed
/// (its `String`) is the numbers alone.
#[test]
fn kube_version_keeps_its_suffix_like_helm() {
    let context = TestContext::new();
    context.demo_chart(&[(
        "templates/t.yaml",
        "a: {{ .Capabilities.KubeVersion }} {{ .Capabilities.KubeVersion.Version }} {{ .Capabilities.KubeVersion.GitVersion }} {{ .Capabilities.KubeVersion | toString }} {{ .Capabilities.KubeVersion | toJson }}\n",
    )]);
    renders_like_helm(
        "kube_version_keeps_its_suffix_like_helm",
        &context,
        &["--kube-version", "1.33.4-gke.1245000"],
        "a: v1.33.4 v1.33.4-gke.1245000 v1.33.4-gke.1245000 {v1.33.4-gke.1245000 v1.33.4 1 33} {\"Version\":\"v1.33.4-gke.1245000\",\"Major\":\"1\",\"Minor\":\"33\"}\n",
    );
}

/// Bytes that are not UTF-8: a keystore read with `.Files.Get` and one given with
/// `--set-file` reach `b64enc`, `len` and `sha256sum` whole, as in Go.
#[test]
fn binary_files_keep_their_bytes_like_helm() {
    let context = TestContext::new();
    context.demo_chart(&[(
        "templates/t.yaml",
        "a: {{ .Files.Get \"files/k.jks\" | b64enc }} {{ .Files.Get \"files/k.jks\" | len }} {{ .Files.Get \"files/k.jks\" | sha256sum | trunc 12 }}\nb: {{ .Values.k | b64enc }} {{ len .Values.k }} {{ .Values.k | toJson }}\n",
    )]);
    let keystore = b"\xff\xfe\x00abc\xe2\x82\n\xc0x";
    let path = context.path("demo/files/k.jks");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, keystore).unwrap();
    let set_file = format!("k={}", path.display());
    renders_like_helm(
        "binary_files_keep_their_bytes_like_helm",
        &context,
        &["--set-file", &set_file],
        "a: //4AYWJj4oIKwHg= 11 60b8aeb5fce9\nb: //4AYWJj4oIKwHg= 11 \"\\ufffd\\ufffd\\u0000abc\\ufffd\\ufffd\\n\\ufffdx\"\n",
    );
}

/// Binary data written into a manifest fails as go-yaml fails on it in Helm, instead of
/// being written out with U+FFFD in place of its bytes; `--debug` prints the bytes.
#[test]
fn binary_output_fails_like_helm() {
    let context = TestContext::new();
    let chart = context.demo_chart(&[
        ("templates/ok.yaml", "kind: ConfigMap\n"),
        (
            "templates/t.yaml",
            "kind: Secret\ndata: {{ .Files.Get \"files/k.jks\" }}\n",
        ),
    ]);
    let path = context.path("demo/files/k.jks");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, b"ab\xe2\x82\n").unwrap();
    // The document is trimmed, so the character is cut short at its end.
    let message = "YAML parse error on demo/templates/t.yaml: error converting YAML to JSON: yaml: incomplete UTF-8 octet sequence\n";
    let ours = context.run(&["template", "rel", &chart]);
    assert!(!ours.status.success());
    assert!(
        stderr(&ours)
            .strip_prefix("Error: ")
            .is_some_and(|e| e.starts_with(message)),
        "{}",
        stderr(&ours)
    );
    // Helm prints the files in Go's random map order; both hold the bytes.
    let raw: &[u8] = b"# Source: demo/templates/t.yaml\nkind: Secret\ndata: ab\xe2\x82\n";
    let contains = |out: &[u8]| out.windows(raw.len()).any(|w| w == raw);
    let debug = context.run(&["template", "rel", &chart, "--debug"]);
    assert!(contains(&debug.stdout), "{}", stdout(&debug));
    if helm_or_skip("binary_output_fails_like_helm").is_some() {
        let helm = context
            .helm()
            .unwrap()
            .args(["template", "rel", &chart])
            .output()
            .unwrap();
        assert!(
            stderr(&helm)
                .strip_prefix("Error: ")
                .is_some_and(|e| e.starts_with(message)),
            "{}",
            stderr(&helm)
        );
        let helm_debug = context
            .helm()
            .unwrap()
            .args(["template", "rel", &chart, "--debug"])
            .output()
            .unwrap();
        assert!(contains(&helm_debug.stdout), "{}", stdout(&helm_debug));
    }
}

/// A dependency entry takes the first subchart it describes (name and range); another
/// subchart it also describes is dropped, not rendered with its own values, as in Helm's
/// `ProcessDependencies`. "First" is the directory order for chartkit; Helm's order is
/// random (see below), so chartkit's is one of the outcomes Helm can give.
#[test]
fn a_subchart_a_range_describes_but_does_not_pick_is_dropped_like_helm() {
    let context = TestContext::new();
    let template =
        "kind: ConfigMap\nname: {{ .Chart.Name }}-{{ .Chart.Version }}-{{ .Values.v }}\n";
    let mut files: Vec<(String, String)> = vec![(
        "Chart.yaml".into(),
        "apiVersion: v2\nname: demo\nversion: 0.1.0\ndependencies:\n- name: sub\n  version: \">=1.0.0\"\n- name: sub\n  version: \">=1.0.0\"\n  alias: old\n".into(),
    )];
    for (dir, version) in [("sub-1", "1.0.0"), ("sub-2", "2.0.0")] {
        files.push((
            format!("charts/{dir}/Chart.yaml"),
            format!("apiVersion: v2\nname: sub\nversion: {version}\n"),
        ));
        files.push((
            format!("charts/{dir}/values.yaml"),
            format!("v: {version}\n"),
        ));
        files.push((format!("charts/{dir}/templates/cm.yaml"), template.into()));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let chart = context.demo_chart(&files);
    let expected = "---\n# Source: demo/charts/old/templates/cm.yaml\nkind: ConfigMap\nname: old-1.0.0-1.0.0\n---\n# Source: demo/charts/sub/templates/cm.yaml\nkind: ConfigMap\nname: sub-1.0.0-1.0.0\n";
    let ours = context.run(&["template", "rel", &chart]);
    assert!(ours.status.success(), "{}", stderr(&ours));
    assert_eq!(stdout(&ours), expected);
    if helm_or_skip("a_subchart_a_range_describes_but_does_not_pick_is_dropped_like_helm").is_some()
    {
        let helm = context
            .helm()
            .unwrap()
            .args(["template", "rel", &chart])
            .output()
            .unwrap();
        // Helm groups subcharts in a Go map before ordering them, so which of two
        // described subcharts comes "first" varies from run to run; only the shape holds:
        // both entries pick the same subchart and render nothing else.
        let other = expected.replace("1.0.0", "2.0.0");
        let helm_out = stdout(&helm);
        assert!(
            helm_out == expected || helm_out == other,
            "{helm_out}{}",
            stderr(&helm)
        );
    }
}

/// Every kind of key and certificate the crypto functions make is read back by OpenSSL
/// (`openssl pkey`, `openssl x509`), for chartkit's output and helm's alike: a PEM header
/// says nothing of whether a reader accepts what follows (an EC key without its curve
/// has the right header and is refused).
#[test]
fn generated_keys_and_certificates_are_read_by_openssl() {
    let test = "generated_keys_and_certificates_are_read_by_openssl";
    if std::process::Command::new("openssl")
        .arg("version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var_os("CI").is_none(),
            "{test}: openssl is needed under CI"
        );
        eprintln!("skipping {test}: openssl is not installed");
        return;
    }
    let context = TestContext::new();
    let mut template = String::new();
    for kind in ["rsa", "dsa", "ecdsa", "ed25519"] {
        template.push_str(&format!(
            "{kind}-key: {{{{ genPrivateKey \"{kind}\" | b64enc }}}}\n"
        ));
        // Go's x509 makes no certificate for a DSA key.
        if kind != "dsa" {
            template.push_str(&format!(
                "{kind}-cert: {{{{ genSelfSignedCertWithKey \"x\" nil nil 3 (genPrivateKey \"{kind}\") | toJson | b64enc }}}}\n"
            ));
        }
    }
    template.push_str(
        "{{- $ca := genCA \"ca\" 3 }}\n\
         ca: {{ $ca | toJson | b64enc }}\n\
         self: {{ genSelfSignedCert \"x\" nil nil 3 | toJson | b64enc }}\n\
         signed: {{ genSignedCert \"x\" nil nil 3 $ca | toJson | b64enc }}\n",
    );
    context.demo_chart(&[("templates/t.yaml", template.as_str())]);
    let chart = context.path("demo").display().to_string();
    let args = [
        "template",
        "rel",
        chart.as_str(),
        "--show-only",
        "templates/t.yaml",
    ];
    let mut outputs = vec![("chartkit", context.run(&args))];
    if helm_or_skip(test).is_some() {
        outputs.push(("helm", context.helm().unwrap().args(args).output().unwrap()));
    }
    for (tool, output) in outputs {
        assert!(output.status.success(), "{tool}: {}", stderr(&output));
        let text = stdout(&output);
        let mut checked = 0;
        for line in text.lines() {
            let Some((name, value)) = line.split_once(": ") else {
                continue;
            };
            use base64::Engine as _;
            let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(value) else {
                continue;
            };
            let decoded = String::from_utf8(decoded).unwrap();
            // A key alone, or a certificate's JSON with `Cert` and `Key` PEM texts.
            let pems: Vec<(&str, String)> = if name.ends_with("-key") {
                vec![("pkey", decoded)]
            } else {
                let json: serde_json::Value = serde_json::from_str(&decoded).unwrap();
                vec![
                    ("x509", json["Cert"].as_str().unwrap().to_string()),
                    ("pkey", json["Key"].as_str().unwrap().to_string()),
                ]
            };
            for (command, pem) in pems {
                let file = context.path(&format!("{tool}-{name}-{command}.pem"));
                std::fs::write(&file, &pem).unwrap();
                let read = std::process::Command::new("openssl")
                    .args([command, "-noout", "-in"])
                    .arg(&file)
                    .output()
                    .unwrap();
                assert!(
                    read.status.success(),
                    "{tool}'s {name} ({command}) is refused by openssl: {}\n{pem}",
                    String::from_utf8_lossy(&read.stderr)
                );
                checked += 1;
            }
        }
        // Four keys alone; three certificates with their keys, and a CA, a self-signed
        // and a signed certificate with theirs.
        assert_eq!(
            checked,
            4 + 3 * 2 + 3 * 2,
            "{tool}: PEM blocks read:\n{text}"
        );
    }
}

/// Nesting past Go's limits is refused in Go's words, and up to them is read: 10,000
/// levels of JSON for `encoding/json` (`invalid character '[' exceeded max depth`), of
/// flow collections for go-yaml (`exceeded max depth of 10000`), which chartkit's YAML
/// scanner alone would refuse far earlier.
#[test]
fn nesting_limits_are_gos() {
    let context = TestContext::new();
    let nested = |open: &str, inner: &str, close: &str, levels: usize| {
        format!("{}{inner}{}", open.repeat(levels), close.repeat(levels))
    };
    let deep_array = nested("[", "", "]", 20_000);
    let deep_object = nested("{\"a\":", "1", "}", 20_000);
    let limit_array = nested("[", "", "]", 10_000);
    context.demo_chart(&[
        (
            "templates/t.yaml",
            "a: {{ .Files.Get \"deep.json\" | fromJsonArray | toJson }}\n\
             b: {{ .Files.Get \"object.json\" | fromJson | toJson }}\n\
             c: {{ .Files.Get \"deep.json\" | fromYamlArray | toJson }}\n\
             d: {{ .Files.Get \"deep.json\" | fromYaml | toJson }}\n\
             e: {{ .Files.Get \"limit.json\" | fromJsonArray | toJson | len }}\n",
        ),
        ("deep.json", deep_array.as_str()),
        ("object.json", deep_object.as_str()),
        ("limit.json", limit_array.as_str()),
    ]);
    renders_like_helm(
        "nesting_limits_are_gos",
        &context,
        &[],
        "a: [\"invalid character '[' exceeded max depth\"]\n\
         b: {\"Error\":\"invalid character '{' exceeded max depth\"}\n\
         c: [\"error converting YAML to JSON: yaml: exceeded max depth of 10000\"]\n\
         d: {\"Error\":\"error converting YAML to JSON: yaml: exceeded max depth of 10000\"}\n\
         e: 20000\n",
    );
}

/// Template text that is not UTF-8 keeps its bytes, as Go's parser (which reads bytes)
/// keeps them: `tpl` of `b64dec`'d text, a template file with such bytes in its text and
/// in a raw literal; a quoted literal's raw bytes are U+FFFD in Go, and here.
#[test]
fn tpl_and_templates_keep_bytes_that_are_not_utf8_like_helm() {
    let context = TestContext::new();
    context.demo_chart(&[
        (
            "templates/t.yaml",
            "a: {{ tpl (\"Y2Fm6Q==\" | b64dec) . | b64enc }}\nb: {{ tpl (printf \"%s{{ .Release.Name }}\" (\"Y2Fm6Q==\" | b64dec)) . | b64enc }}\nc: {{ tpl (\"e3sgImNhZu4iIH19\" | b64dec) . | b64enc }}\nd: {{ include \"binary\" . | b64enc }}\ne: {{ tpl (include \"binary\" .) . | len }}\n",
        ),
    ]);
    std::fs::write(
        context.path("demo/templates/_binary.tpl"),
        b"{{- define \"binary\" }}caf\xe9 {{ \"l\xe9\" }} {{ `r\xe9` }}{{ end -}}",
    )
    .unwrap();
    renders_like_helm(
        "tpl_and_templates_keep_bytes_that_are_not_utf8_like_helm",
        &context,
        &[],
        "a: Y2Fm6Q==\nb: Y2Fm6XJlbA==\nc: Y2Fm77+9\nd: Y2Fm6SBs77+9IHLp\ne: 12\n",
    );
}

/// `fromToml` hands templates BurntSushi/toml's error text as data, line and last key
/// included (the differential suite holds one document per error class).
#[test]
fn from_toml_errors_are_helms_words() {
    let context = TestContext::new();
    context.demo_chart(&[(
        "templates/t.yaml",
        "a: {{ (fromToml \"a =\").Error | toJson }}\nb: {{ (fromToml \"a = 1\\na = 2\").Error | toJson }}\nc: {{ (fromToml \"[t]\\nx = 1\\n[t]\").Error | toJson }}\nd: {{ (fromToml \"a = {x = 1 y = 2}\").Error | toJson }}\ne: {{ fromToml \"a.b = 1\\na = 2\" | toJson }}\n",
    )]);
    renders_like_helm(
        "from_toml_errors_are_helms_words",
        &context,
        &[],
        "a: \"toml: line 1 (last key \\\"a\\\"): unexpected EOF; expected value\"\nb: \"toml: line 2 (last key \\\"a\\\"): Key 'a' has already been defined.\"\nc: \"toml: line 3: Key 't' has already been defined.\"\nd: \"toml: line 1 (last key \\\"a.x\\\"): expected a comma or an inline table terminator '}', but got 'y' instead\"\ne: {\"a\":{\"b\":1}}\n",
    );
}
