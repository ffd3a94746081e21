//! Malformed indexes give a clear error or a warning, never a panic.

use chartkit_index::{IndexError, parse_index};
use proptest::prelude::*;

const GOOD: &str = "apiVersion: v1\nentries:\n  web:\n  - apiVersion: v2\n    name: web\n    version: 1.2.3\n    urls: [web-1.2.3.tgz]\n    digest: abc\n    created: \"2024-01-01T00:00:00Z\"\ngenerated: \"2024-01-01T00:00:00Z\"\n";

#[test]
fn truncated_indexes_fail_cleanly() {
    for cut in 0..GOOD.len() {
        let _ = parse_index(&GOOD.as_bytes()[..cut], "truncated");
    }
    assert!(matches!(parse_index(b"", "e"), Err(IndexError::Empty)));
}

#[test]
fn wrong_types_name_the_field_and_line() {
    let text = GOOD.replace("urls: [web-1.2.3.tgz]", "urls: web-1.2.3.tgz");
    let err = parse_index(text.as_bytes(), "x").unwrap_err().to_string();
    assert!(err.contains("entries.web[0].urls"), "{err}");
    assert!(err.contains("line 7"), "{err}");
    let text = GOOD.replace("created: \"2024-01-01T00:00:00Z\"", "created: yesterday");
    assert!(parse_index(text.as_bytes(), "x").is_err());
}

#[test]
fn unknown_and_duplicate_keys_are_refused_like_helm() {
    let text = GOOD.replace("digest: abc", "digest: abc\n    extra: 1");
    let err = parse_index(text.as_bytes(), "x").unwrap_err().to_string();
    assert!(err.contains("unknown field \"extra\""), "{err}");
    let text = GOOD.replace("digest: abc", "digest: abc\n    digest: def");
    let err = parse_index(text.as_bytes(), "x").unwrap_err().to_string();
    assert!(err.contains("already set"), "{err}");
}

#[test]
fn invalid_and_null_entries_are_skipped_with_a_warning() {
    let text = GOOD.replace(
        "  web:\n",
        "  web:\n  - null\n  - name: web\n    version: not-a-version\n",
    );
    let loaded = parse_index(text.as_bytes(), "x").unwrap();
    assert_eq!(loaded.index.entries["web"].len(), 1);
    assert_eq!(loaded.warnings.len(), 2, "{:?}", loaded.warnings);
    assert!(
        loaded.warnings[0].contains("empty entry") || loaded.warnings[1].contains("empty entry")
    );
}

/// What helm v4.1.4 loads from the same index (checked by `repo/tests/helm_conformance.rs`
/// through `helm repo index --merge`): of `Name` and `name` the greater key wins, an entry
/// whose only fault is a repeated dependency is kept with its null item, and the warnings
/// come in Helm's order and words.
#[test]
fn awkward_entries_load_as_helm_loads_them() {
    let text = "apiVersion: v1\nentries:\n  web:\n  - apiVersion: v2\n    name: web\n    version: 1.0.0\n    dependencies: [{name: x}, {name: x}, null]\n  - null\n  - {name: web, version: not-a-version}\n  - {apiVersion: v2, name: web, version: 2.0.0, maintainers: [null]}\n  - {apiVersion: v2, Name: web, name: web2, version: 3.0.0}\n";
    let loaded = parse_index(text.as_bytes(), "old.yaml").unwrap();
    let kept: Vec<&str> = loaded.index.entries["web"]
        .iter()
        .map(|v| v.name())
        .collect();
    assert_eq!(kept, ["web2", "web"]);
    let repeated = &loaded.index.entries["web"][1];
    assert_eq!(repeated.metadata.dependencies.len(), 3);
    assert!(repeated.metadata.dependencies[2].is_none());
    assert!(chartkit_index::to_yaml(&loaded.index).contains("    - null\n"));
    assert_eq!(
        loaded.warnings,
        [
            "skipping loading invalid entry for chart \"web\" \"2.0.0\" from old.yaml: validation: maintainers must not contain empty or null nodes",
            "skipping loading invalid entry for chart \"web\" \"not-a-version\" from old.yaml: validation: chart.metadata.version \"not-a-version\" is invalid",
            "skipping loading invalid entry for chart \"web\" from old.yaml: empty entry",
        ]
    );
}

#[test]
fn json_indexes_are_read_with_json_rules() {
    // Unknown keys are fine in JSON, numbers are not strings, and of two spellings of a
    // field the later wins.
    let json = r#"{"apiVersion":"v1","entries":{"web":[{"apiVersion":"v2","name":"a","Name":"web","version":"1.0.0","extra":1}]}}"#;
    let loaded = parse_index(json.as_bytes(), "j").unwrap();
    assert_eq!(loaded.index.entries["web"][0].name(), "web");
    let json = r#"{"apiVersion":"v1","entries":{"web":[{"name":"web","version":1}]}}"#;
    let err = parse_index(json.as_bytes(), "j").unwrap_err().to_string();
    assert!(
        err.starts_with("entries.web[0].version: must be a string, found a number"),
        "{err}"
    );
}

#[test]
fn missing_api_version_is_an_error() {
    let text = GOOD.replace("apiVersion: v1\n", "");
    assert!(matches!(
        parse_index(text.as_bytes(), "x"),
        Err(IndexError::NoApiVersion)
    ));
}

#[test]
fn alias_bombs_are_refused() {
    let mut text = String::from("apiVersion: v1\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for level in 1..12 {
        let prev = level - 1;
        let refs = vec![format!("*a{prev}"); 10].join(", ");
        text.push_str(&format!("a{level}: &a{level} [{refs}]\n"));
    }
    let err = parse_index(text.as_bytes(), "bomb")
        .unwrap_err()
        .to_string();
    assert!(err.contains("aliasing"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = parse_index(&bytes, "fuzz");
    }

    #[test]
    fn mutated_indexes_never_panic(cut in 0usize..300, insert in "[ -~\n]{0,12}") {
        let mut text = GOOD.to_owned();
        let at = cut.min(text.len());
        text.insert_str(at, &insert);
        let _ = parse_index(text.as_bytes(), "fuzz");
    }

    #[test]
    fn ranges_never_panic(text in "[ 0-9xX*vV.,|<>=!~^+a-z-]{0,40}", version in "[0-9]{1,2}\\.[0-9]{1,2}\\.[0-9]{1,2}(-[a-z0-9.]{1,6})?") {
        if let Ok(range) = chartkit_version::VersionRange::parse(&text)
            && let Ok(v) = chartkit_version::Version::parse(&version)
        {
            let _ = range.matches(&v);
        }
    }
}
