//! The golden index written by `helm repo index` reads back and writes out byte for byte.

use std::path::PathBuf;

fn corpus() -> Option<PathBuf> {
    let dir = std::env::var_os("CHARTKIT_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus"));
    dir.join("golden").is_dir().then_some(dir)
}

#[test]
fn golden_index_round_trips_byte_for_byte() {
    let Some(corpus) = corpus() else {
        eprintln!("skipped: corpus not found (set CHARTKIT_CORPUS)");
        return;
    };
    let path = corpus.join("golden/helm-4.1.4/repo-index/index.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let loaded = chartkit_index::parse_index(text.as_bytes(), "golden").unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let written = chartkit_index::to_yaml(&loaded.index);
    if written != text {
        let diff: Vec<_> = written
            .lines()
            .zip(text.lines())
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .take(10)
            .collect();
        panic!("first differences (line, ours, helm's): {diff:#?}");
    }
    let json = chartkit_index::to_json(&loaded.index);
    let again = chartkit_index::parse_index(json.as_bytes(), "json").unwrap();
    assert_eq!(again.index, loaded.index, "JSON form reads back the same");
}
