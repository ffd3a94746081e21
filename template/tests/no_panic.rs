//! A randomized no-panic check that runs on stable Rust (the libFuzzer targets in
//! `fuzz/` need nightly): random sequences of template fragments, valid and broken,
//! are parsed and, when they parse, rendered. Any panic fails the test; errors are fine.

use chartkit_template::{Entries, MapKind, TemplateSet, Value};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const FRAGMENTS: &[&str] = &[
    "{{",
    "}}",
    "{{-",
    "-}}",
    " ",
    "\n",
    "text",
    ".",
    ".Values",
    ".a",
    ".b",
    ".c",
    ".d",
    "$",
    "$x",
    ":=",
    "=",
    "|",
    "(",
    ")",
    "\"s\"",
    "`r`",
    "'c'",
    "1",
    "-2",
    "3.5",
    "0x1F",
    "1e3",
    "nil",
    "true",
    "if",
    "else",
    "end",
    "with",
    "define",
    "\"n\"",
    "block",
    "break",
    "continue",
    "and",
    "or",
    "not",
    "eq",
    "ne",
    "lt",
    "index",
    "slice",
    "len",
    "print",
    "printf",
    "\"%v %d %s\"",
    "quote",
    "default",
    "toYaml",
    "toJson",
    "fromYaml",
    "fromJson",
    "dict",
    "list",
    "set",
    "get",
    "keys",
    "merge",
    "upper",
    "trunc",
    "substr",
    "indent",
    "nindent",
    "b64enc",
    "b64dec",
    "sha256sum",
    "regexMatch",
    "\"[a-z]+\"",
    "semverCompare",
    "\">=1.0\"",
    "toString",
    "int",
    "float64",
    "add",
    "div",
    "mod",
    "first",
    "last",
    "dig",
    "hasKey",
    "empty",
    "coalesce",
    "ternary",
    "kindOf",
    "typeOf",
    "deepEqual",
    "splitList",
    "join",
    "required",
    "fail",
    "/*",
    "*/",
    ",",
    "{{/* c */}}",
];

fn random_template(rng: &mut StdRng) -> String {
    let n = rng.gen_range(1..40);
    (0..n)
        .map(|_| FRAGMENTS[rng.gen_range(0..FRAGMENTS.len())])
        .collect::<Vec<_>>()
        .join(if rng.gen_bool(0.5) { " " } else { "" })
}

#[test]
fn random_templates_never_panic() {
    let mut rng = StdRng::seed_from_u64(0x5eed);
    let values =
        chartkit_yaml::parse_values("a: 1\nb: [x, 2.5, null]\nc: {d: true}\n").expect("values");
    let (mut parsed, mut rendered) = (0, 0);
    for _ in 0..20_000 {
        let text = random_template(&mut rng);
        let mut set = TemplateSet::new();
        if set.add("t.yaml", &text).is_err() {
            continue;
        }
        parsed += 1;
        let mut top = Entries::new();
        top.insert("Values".into(), Value::values_from_data(&values));
        if set
            .render("t.yaml", Value::map_of(MapKind::Values, top))
            .is_ok()
        {
            rendered += 1;
        }
    }
    eprintln!("20000 random templates: {parsed} parsed, {rendered} rendered without error");
    assert!(parsed > 100);
}

#[test]
fn deeply_nested_input_is_refused_not_crashed() {
    let mut set = TemplateSet::new();
    let text = format!("{{{{ {}1{} }}}}", "(".repeat(5000), ")".repeat(5000));
    let err = set.add("t", &text).unwrap_err();
    assert_eq!(err.message, "max expression depth exceeded");
    // Go allows control structures to nest without limit; so do we.
    let depth = 20_000;
    let text = format!(
        "{}x{}",
        "{{ if 1 }}".repeat(depth),
        "{{ end }}".repeat(depth)
    );
    set.add("u", &text).unwrap();
    assert_eq!(set.render("u", chartkit_template::Value::Nil).unwrap(), "x");
    // Unbalanced input fails cleanly.
    assert!(set.add("v", &"{{ if 1 }}".repeat(depth)).is_err());
}
