//! The streamed reading of an index (`parse_index_to_compact`) gives exactly what the whole
//! reading gives: the same compact bytes and warnings, or the same error.

use chartkit_index::compact::SourceStamp;
use chartkit_index::{CompactReader, IndexFile, parse_index, parse_index_to_compact};
use proptest::prelude::*;

const STAMP: SourceStamp = SourceStamp {
    sha256: [9; 32],
    size: 1234,
    file_stamp: 5678,
};

/// The compact encoder as first written (the whole index at once), kept here as the
/// reference the incremental encoder must match byte for byte; since the entries moved
/// to follow the header (so they can be written as they are decoded), with its sections
/// in that order; since format 2, with the entries Helm skips (the warnings of an index
/// read from `src.yaml`) at the end.
fn reference_encode(index: &IndexFile, warnings: &[String], stamp: SourceStamp) -> Vec<u8> {
    const HEADER_LEN: usize = 8 + 32 + 8 + 8 + 4 + 4 + 8 + 8 + 8 + 8 + 8;
    const CHART_ROW: usize = 24;
    const VERSION_ROW: usize = 24;
    let put_u32 = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
    let put_u64 = |out: &mut Vec<u8>, v: u64| out.extend_from_slice(&v.to_le_bytes());
    let names: Vec<&String> = index.entries.keys().collect();
    let names_len: usize = names.iter().map(|n| n.len()).sum();
    let (mut strings, mut entries, mut charts, mut rows) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for name in &names {
        strings.extend_from_slice(name.as_bytes());
    }
    let mut name_offset = 0u32;
    for versions in index.entries.values() {
        for version in versions {
            entries.extend_from_slice(chartkit_index::entry_to_json(version).as_bytes());
        }
    }
    let table_offset = (HEADER_LEN + entries.len()) as u64;
    let rows_base = table_offset + (names.len() * CHART_ROW) as u64;
    let mut entry_offset = 0u64;
    for (name, versions) in &index.entries {
        let block_start = strings.len();
        let rows_offset = rows_base + rows.len() as u64;
        for version in versions {
            let text = version.version().as_bytes();
            put_u32(&mut rows, (strings.len() - block_start) as u32);
            put_u32(&mut rows, text.len() as u32);
            strings.extend_from_slice(text);
            let json = chartkit_index::entry_to_json(version);
            put_u64(&mut rows, entry_offset);
            put_u32(&mut rows, json.len() as u32);
            put_u32(&mut rows, 0);
            entry_offset += json.len() as u64;
        }
        put_u32(&mut charts, name_offset);
        put_u32(&mut charts, name.len() as u32);
        put_u64(&mut charts, rows_offset);
        put_u32(&mut charts, versions.len() as u32);
        put_u32(&mut charts, (strings.len() - block_start) as u32);
        name_offset += name.len() as u32;
    }
    let strings_offset = rows_base + rows.len() as u64;
    let skipped_offset = strings_offset + strings.len() as u64;
    let mut skipped = Vec::new();
    put_u32(&mut skipped, warnings.len() as u32);
    for warning in warnings {
        let (what, why) = warning
            .split_once(" from src.yaml: ")
            .expect("a skipped entry");
        for text in [what, why] {
            put_u32(&mut skipped, text.len() as u32);
            skipped.extend_from_slice(text.as_bytes());
        }
    }
    let total_len = skipped_offset + skipped.len() as u64;
    let mut out = Vec::new();
    out.extend_from_slice(b"CKIDX\x02\0\0");
    out.extend_from_slice(&stamp.sha256);
    put_u64(&mut out, stamp.size);
    put_u64(&mut out, stamp.file_stamp);
    put_u32(&mut out, names.len() as u32);
    put_u32(&mut out, names_len as u32);
    put_u64(&mut out, table_offset);
    put_u64(&mut out, strings_offset);
    put_u64(&mut out, HEADER_LEN as u64);
    put_u64(&mut out, total_len);
    put_u64(&mut out, skipped_offset);
    out.extend_from_slice(&entries);
    out.extend_from_slice(&charts);
    out.extend_from_slice(&rows);
    out.extend_from_slice(&strings);
    out.extend_from_slice(&skipped);
    let (mut block, mut row) = (names_len, rows_base as usize);
    for versions in index.entries.values() {
        if !versions.is_empty() {
            out[row + 20..row + 24].copy_from_slice(&(block as u32).to_le_bytes());
        }
        block += versions.iter().map(|v| v.version().len()).sum::<usize>();
        row += versions.len() * VERSION_ROW;
    }
    out
}

/// Asserts that both readings of `text` agree; returns whether it was streamed.
fn check(text: &str) -> bool {
    check_bytes(text.as_bytes())
}

fn check_bytes(bytes: &[u8]) -> bool {
    let whole = parse_index(bytes, "src.yaml");
    let draft = parse_index_to_compact(bytes, "src.yaml");
    match (whole, draft) {
        (Ok(loaded), Ok(draft)) => {
            assert_eq!(
                draft.warnings,
                loaded.warnings,
                "warnings of {:?}",
                String::from_utf8_lossy(bytes)
            );
            let streamed = draft.streamed;
            let ours = draft.finish(STAMP);
            assert!(
                ours == reference_encode(&loaded.index, &loaded.warnings, STAMP),
                "compact bytes differ for {:?}",
                String::from_utf8_lossy(bytes)
            );
            streamed
        }
        (Err(whole), Err(draft)) => {
            assert_eq!(
                draft,
                whole,
                "errors of {:?}",
                String::from_utf8_lossy(bytes)
            );
            false
        }
        (whole, draft) => panic!(
            "the readings disagree on {:?}: whole {:?}, streamed {:?}",
            String::from_utf8_lossy(bytes),
            whole.map(|l| l.warnings),
            draft.map(|d| d.warnings)
        ),
    }
}

/// The index given to a [`CompactReader`] in parts of `part` bytes: when it is read in
/// pieces, the whole reading's compact bytes and warnings; whether it was.
fn check_in_parts(text: &str, part: usize) -> bool {
    let mut reader = CompactReader::new(Vec::new(), "src.yaml", Some(text.len() as u64));
    for chunk in text.as_bytes().chunks(part) {
        reader.push(chunk);
    }
    let Ok(draft) = reader.finish() else {
        return false;
    };
    let loaded = parse_index(text.as_bytes(), "src.yaml").expect("read in pieces, read whole");
    assert_eq!(draft.warnings, loaded.warnings, "warnings of {text:?}");
    assert!(
        draft.finish(STAMP) == reference_encode(&loaded.index, &loaded.warnings, STAMP),
        "compact bytes differ for {text:?} in parts of {part}"
    );
    true
}

const GOOD: &str = "apiVersion: v1\nentries:\n  web:\n  - apiVersion: v2\n    name: web\n    version: 1.2.3\n    urls: [web-1.2.3.tgz]\n    digest: abc\n    created: \"2024-01-01T00:00:00Z\"\n  - apiVersion: v2\n    name: web\n    version: 1.10.0\n    urls: [web-1.10.0.tgz]\n  db:\n  - name: db\n    version: 0.1.0-rc.1\n    deprecated: true\n    annotations: {a: b}\ngenerated: \"2024-01-01T00:00:00Z\"\n";

/// bench/make_inputs.py's synthetic index, small: the shape the benchmark measures.
fn synthetic(charts: usize) -> String {
    let mut seed = 42u64;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        seed >> 11
    };
    let mut out = String::from("apiVersion: v1\nentries:\n");
    for chart in 0..charts {
        let name = format!("chart-{chart:04}");
        out.push_str(&format!("  {name}:\n"));
        for major in (0..4).rev() {
            for minor in (0..13).rev() {
                for patch in [2, 1, 0] {
                    let rc = if next() % 10 == 0 { "-rc.1" } else { "" };
                    let v = format!("{major}.{minor}.{patch}{rc}");
                    let digest = format!(
                        "{:016x}{:016x}{:016x}{:016x}",
                        next(),
                        next(),
                        next(),
                        next()
                    );
                    out.push_str(&format!(
                        "  - apiVersion: v2\n    appVersion: {major}.{minor}.{}\n    created: \"2024-05-01T10:00:00.123456789Z\"\n    description: A synthetic chart number {chart}\n    digest: {digest}\n    home: https://example.com/charts\n    keywords:\n    - bench\n    - synthetic\n    maintainers:\n    - email: team@example.com\n      name: team\n    name: {name}\n    sources:\n    - https://github.com/example/charts\n    type: application\n    urls:\n    - https://charts.example.com/{name}-{v}.tgz\n    version: {v}\n",
                        patch + 10
                    ));
                }
            }
        }
    }
    out.push_str("generated: \"2024-05-01T10:00:00Z\"\n");
    out
}

#[test]
fn plain_indexes_are_streamed_and_give_the_same_compact_form() {
    assert!(check(GOOD));
    assert!(check(&synthetic(6)));
    // Entries before apiVersion, flow style, CRLF line ends, a byte order mark, quoted keys.
    assert!(check(
        "entries:\n  web: [{name: web, version: 1.0.0}]\napiVersion: v1\n"
    ));
    assert!(check(&GOOD.replace('\n', "\r\n")));
    assert!(check(&format!("\u{feff}{GOOD}")));
    assert!(check(&GOOD.replace("  web:", "  \"web\":")));
    assert!(check(&GOOD.replace("entries:", "\"entries\":")));
    // The top-level fields beside entries are decoded and checked as before.
    assert!(check(&format!(
        "{GOOD}serverInfo: {{contextPath: /x}}\npublicKeys: [k]\nannotations: {{a: b}}\n"
    )));
    // A tab go-yaml skips (rewritten before parsing, for both readings).
    assert!(check(&GOOD.replace("digest: abc", "digest:\tabc")));
    // Non-ASCII text and a chart whose name is a number.
    assert!(check(
        &GOOD.replace("abc", "ä€😀").replace("  db:", "  1.5:")
    ));
}

#[test]
fn an_index_given_in_parts_cut_anywhere_reads_as_the_whole() {
    let synthetic = synthetic(4);
    let crlf = GOOD.replace('\n', "\r\n");
    for text in [GOOD, &synthetic, &crlf] {
        for part in (1..50).chain([997, 4096, text.len()]) {
            assert!(check_in_parts(text, part), "{part}");
        }
    }
    // Not written in lines: not read in pieces (the caller reads it another way).
    assert!(!check_in_parts(
        "entries:\n  web: [{name: web, version: 1.0.0}]\napiVersion: v1\n",
        7
    ));
}

#[test]
fn odd_entries_are_streamed_with_the_same_warnings() {
    // Null, invalid and repeated versions, a chart with no versions, Helm's case rules.
    let awkward = "apiVersion: v1\nentries:\n  web:\n  - apiVersion: v2\n    name: web\n    version: 1.0.0\n    dependencies: [{name: x}, {name: x}, null]\n  - null\n  - {name: web, version: not-a-version}\n  - {apiVersion: v2, name: web, version: 2.0.0, maintainers: [null]}\n  - {apiVersion: v2, Name: web, name: web2, version: 3.0.0}\n  - {name: web, version: 1.0.0, digest: second}\n  - {name: web, version: v1.0.0, digest: third}\n  empty: []\n  nothing:\n  other: [null, null]\n";
    assert!(check(awkward));
    let loaded = parse_index(awkward.as_bytes(), "x").unwrap();
    assert_eq!(loaded.warnings.len(), 5, "{:?}", loaded.warnings);
    assert!(check("apiVersion: v1\nentries: {}\n"));
    assert!(check("apiVersion: v1\nentries:\n"));
    assert!(check("apiVersion: v1\n"));
    // Every field an entry can have.
    assert!(check(
        "apiVersion: v1\nentries:\n  full:\n  - apiVersion: v2\n    name: full\n    home: h\n    sources: [s]\n    version: 1.0.0\n    description: d\n    keywords: [k]\n    maintainers: [{name: n, email: e, url: u}]\n    icon: i\n    appVersion: 1.10\n    deprecated: true\n    annotations: {x: y}\n    kubeVersion: '>=1.20'\n    dependencies: [{name: d, version: 1.x, repository: r, condition: c, tags: [t], enabled: true, import-values: [a, {child: c, parent: p}], alias: al}]\n    type: library\n    urls: null\n    created: 2024-01-01T00:00:00.5+01:00\n    removed: true\n    digest: x\n    checksum: c\n    engine: gotpl\n    tillerVersion: '>2'\n    url: u\n"
    ));
}

#[test]
fn errors_are_the_whole_readings_errors() {
    for text in [
        GOOD.replace("digest: abc", "digest: abc\n    extra: 1"),
        GOOD.replace("digest: abc", "digest: abc\n    digest: def"),
        GOOD.replace("urls: [web-1.2.3.tgz]", "urls: web-1.2.3.tgz"),
        GOOD.replace("created: \"2024-01-01T00:00:00Z\"", "created: yesterday"),
        GOOD.replace("apiVersion: v1\n", ""),
        GOOD.replace("generated:", "unknown: 1\ngenerated:"),
        format!("{GOOD}entries: {{}}\n"),
        GOOD.replace("  db:", "  web:"),
        GOOD.replace("  db:\n", "  db: 3\n"),
        "apiVersion: v1\nentries: [1]\n".to_owned(),
        format!("{GOOD}  : [\n"),
        // An empty key (go-yaml refuses it), at the top and inside a chart's list.
        format!("{GOOD}\n:"),
        GOOD.replace("    digest: abc\n", "    digest: abc\n    : x\n"),
        GOOD.replace("version: 1.2.3", "version: [1"),
        "apiVersion: v1\nentries:\n  a: []\n  a: []\n".to_owned(),
        "apiVersion: v1\nentries:\n  1: []\n  0x1: []\n".to_owned(),
        String::new(),
        "- a\n".to_owned(),
        "just text\n".to_owned(),
    ] {
        assert!(!check(&text), "{text:?} was streamed");
        assert!(parse_index(text.as_bytes(), "x").is_err(), "{text:?}");
    }
}

#[test]
fn unusual_indexes_are_read_whole() {
    for text in [
        // Anchors and aliases can tie one chart to another.
        format!("{GOOD}x: &a 1\n"),
        "apiVersion: v1\nentries:\n  a: &v [{name: a, version: 1.0.0}]\n  b: *v\n".to_owned(),
        "apiVersion: v1\nentries:\n  a:\n  - &e {name: a, version: 1.0.0}\n  - <<: *e\n    version: 2.0.0\n".to_owned(),
        // Tags, several documents, JSON, a key that also names `entries`.
        GOOD.replace("version: 1.2.3", "version: !!str 1.2.3"),
        format!("{GOOD}---\nother: 1\n"),
        r#"{"apiVersion":"v1","entries":{"web":[{"name":"web","version":"1.0.0","extra":1}]}}"#.to_owned(),
        "{apiVersion: v1, entries: {web: [{name: web, version: 1.0.0}]}}".to_owned(),
        format!("{GOOD}Entries:\n  more: [{{name: more, version: 1.0.0}}]\n"),
        // Quoted lines that go-yaml reads unindented.
        "apiVersion: v1\nentries:\n  web:\n  - name: web\n    version: 1.0.0\n    description: \"a\n  b\"\n".to_owned(),
    ] {
        assert!(!check(&text), "{text:?} was streamed");
    }
    // Bytes that are not UTF-8 are read (lossily) as before.
    let mut bytes = GOOD.as_bytes().to_vec();
    let at = GOOD.find("abc").unwrap();
    bytes[at] = 0xff;
    assert!(!check_bytes(&bytes));
}

#[test]
fn the_corpus_index_is_streamed_alike() {
    let dir = std::env::var_os("CHARTKIT_CORPUS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus")
        });
    let path = dir.join("golden/helm-4.1.4/repo-index/index.yaml");
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!(
            "skipped: corpus not found at {} (set CHARTKIT_CORPUS)",
            dir.display()
        );
        return;
    };
    assert!(check(&text));
}

#[test]
fn indexes_chartkit_writes_are_streamed_alike() {
    // What `chartkit repo index` writes, and its JSON form, from a model with odd entries.
    let loaded = parse_index(GOOD.as_bytes(), "x").unwrap();
    assert!(check(&chartkit_index::to_yaml(&loaded.index)));
    assert!(!check(&chartkit_index::to_json(&loaded.index)));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// Text edits anywhere (new keys, broken syntax, changed types) never make the two
    /// readings disagree.
    #[test]
    fn edited_indexes_read_alike(cut in 0usize..400, insert in "[ -~\n]{0,12}") {
        let mut text = GOOD.to_owned();
        let at = cut.min(text.len());
        if text.is_char_boundary(at) {
            text.insert_str(at, &insert);
        }
        check(&text);
    }

    #[test]
    fn lines_removed_or_repeated_read_alike(line in 0usize..21, repeat in any::<bool>()) {
        let mut lines: Vec<&str> = GOOD.lines().collect();
        let at = line.min(lines.len() - 1);
        if repeat {
            lines.insert(at, lines[at]);
        } else {
            lines.remove(at);
        }
        check(&(lines.join("\n") + "\n"));
    }
}

/// An index with one chart whose versions' text is `chart_text` bytes, written in lines.
fn one_enormous_chart(chart_text: usize) -> String {
    let entry = "  - name: huge\n    version: 1.0.0\n    urls: [huge-1.0.0.tgz]\n";
    let mut out = String::from(
        "apiVersion: v1\nentries:\n  small:\n  - {name: small, version: 1.0.0}\n  huge:\n",
    );
    while out.len() < chart_text {
        out.push_str(entry);
    }
    out.push_str("  zz: []\n");
    out
}

#[test]
fn a_chart_over_the_piece_limit_is_read_whole_when_the_index_is_small_enough() {
    use chartkit_index::limits::{MAX_CHART_TEXT, MAX_WHOLE_READING};
    let text = one_enormous_chart(MAX_CHART_TEXT + 1024);
    assert!((text.len() as u64) < MAX_WHOLE_READING);
    // Not in pieces (the chart is over the limit), but read on one thread or whole, to
    // the same answer as the whole reading.
    assert!(!check_in_parts(&text, 64 * 1024));
    check(&text);
}

#[test]
fn an_index_too_large_to_read_whole_is_refused_with_its_size_and_the_limit() {
    use chartkit_index::IndexError;
    use chartkit_index::limits::MAX_WHOLE_READING;
    // One line longer than the whole-reading limit: no piece, and no whole reading.
    let text = format!(
        "apiVersion: v1\nentries:\n  web:\n  - {{name: web, version: 1.0.0, description: {}}}\n",
        "x".repeat(MAX_WHOLE_READING as usize)
    );
    let error = parse_index_to_compact(text.as_bytes(), "src.yaml").unwrap_err();
    assert_eq!(
        error,
        IndexError::TooLargeToReadWhole {
            size: text.len() as u64,
            limit: MAX_WHOLE_READING
        }
    );
    let message = error.to_string();
    assert!(
        message.contains("the index is 32 MiB") && message.contains("only up to 32 MiB"),
        "{message}"
    );
}
