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
