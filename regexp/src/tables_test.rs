//! Every Unicode class name Go 1.25 accepts, with and without `(?i)`, and the `(?i)`
//! orbit of every cased character, compared with what helm's Go matches.
//!
//! With helm installed (`$CHARTKIT_HELM`, `PATH`, or `~/.cache/chartkit-peers/helm`) the
//! comparison is made range by range: helm runs a chart whose template lists, for each
//! class, the runs of consecutive code points it matches in a string of every code
//! point. Without helm, digests recorded from such a run are compared.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

use regex_syntax::hir::{Class, HirKind};

use crate::syntax;

/// Every name helm 4.1.4 accepts in `\p{...}`: Go's special names, categories, their
/// aliases, and the one-word scripts of Unicode 15.0 (spellings checked against helm).
const NAMES: &[&str] = &[
    "Any",
    "Assigned",
    "ASCII",
    "C",
    "Cc",
    "Cf",
    "Cn",
    "Co",
    "Cs",
    "L",
    "LC",
    "Ll",
    "Lm",
    "Lo",
    "Lt",
    "Lu",
    "M",
    "Mc",
    "Me",
    "Mn",
    "N",
    "Nd",
    "Nl",
    "No",
    "P",
    "Pc",
    "Pd",
    "Pe",
    "Pf",
    "Pi",
    "Po",
    "Ps",
    "S",
    "Sc",
    "Sk",
    "Sm",
    "So",
    "Z",
    "Zl",
    "Zp",
    "Zs",
    "Other",
    "Control",
    "cntrl",
    "Format",
    "Unassigned",
    "Private_Use",
    "Surrogate",
    "Letter",
    "Cased_Letter",
    "Lowercase_Letter",
    "Modifier_Letter",
    "Other_Letter",
    "Titlecase_Letter",
    "Uppercase_Letter",
    "Mark",
    "Combining_Mark",
    "Spacing_Mark",
    "Enclosing_Mark",
    "Nonspacing_Mark",
    "Number",
    "Decimal_Number",
    "digit",
    "Letter_Number",
    "Other_Number",
    "Punctuation",
    "punct",
    "Connector_Punctuation",
    "Dash_Punctuation",
    "Close_Punctuation",
    "Final_Punctuation",
    "Initial_Punctuation",
    "Other_Punctuation",
    "Open_Punctuation",
    "Symbol",
    "Currency_Symbol",
    "Modifier_Symbol",
    "Math_Symbol",
    "Other_Symbol",
    "Separator",
    "Line_Separator",
    "Paragraph_Separator",
    "Space_Separator",
    "Adlam",
    "Ahom",
    "Arabic",
    "Armenian",
    "Avestan",
    "Balinese",
    "Bamum",
    "Batak",
    "Bengali",
    "Bhaiksuki",
    "Bopomofo",
    "Brahmi",
    "Braille",
    "Buginese",
    "Buhid",
    "Carian",
    "Chakma",
    "Cham",
    "Cherokee",
    "Chorasmian",
    "Common",
    "Coptic",
    "Cuneiform",
    "Cypriot",
    "Cyrillic",
    "Deseret",
    "Devanagari",
    "Dogra",
    "Duployan",
    "Elbasan",
    "Elymaic",
    "Ethiopic",
    "Georgian",
    "Glagolitic",
    "Gothic",
    "Grantha",
    "Greek",
    "Gujarati",
    "Gurmukhi",
    "Han",
    "Hangul",
    "Hanunoo",
    "Hatran",
    "Hebrew",
    "Hiragana",
    "Inherited",
    "Javanese",
    "Kaithi",
    "Kannada",
    "Katakana",
    "Kawi",
    "Kharoshthi",
    "Khmer",
    "Khojki",
    "Khudawadi",
    "Lao",
    "Latin",
    "Lepcha",
    "Limbu",
    "Lisu",
    "Lycian",
    "Lydian",
    "Mahajani",
    "Makasar",
    "Malayalam",
    "Mandaic",
    "Manichaean",
    "Marchen",
    "Medefaidrin",
    "Miao",
    "Modi",
    "Mongolian",
    "Mro",
    "Multani",
    "Myanmar",
    "Nabataean",
    "Nandinagari",
    "Newa",
    "Nko",
    "Nushu",
    "Ogham",
    "Oriya",
    "Osage",
    "Osmanya",
    "Palmyrene",
    "Phoenician",
    "Rejang",
    "Runic",
    "Samaritan",
    "Saurashtra",
    "Sharada",
    "Shavian",
    "Siddham",
    "Sinhala",
    "Sogdian",
    "Soyombo",
    "Sundanese",
    "Syriac",
    "Tagalog",
    "Tagbanwa",
    "Takri",
    "Tamil",
    "Tangsa",
    "Tangut",
    "Telugu",
    "Thaana",
    "Thai",
    "Tibetan",
    "Tifinagh",
    "Tirhuta",
    "Toto",
    "Ugaritic",
    "Vai",
    "Vithkuqi",
    "Wancho",
    "Yezidi",
    "Yi",
];

/// Digests of the dumps below, from helm 4.1.4 (Go 1.25.9, Unicode 15.0.0).
const CLASSES_DIGEST: u64 = 0x9784b5a50256e211;
const FOLDS_DIGEST: u64 = 0xa7b5531baa3c5341;

/// The flag prefixes each class is checked with.
const PREFIXES: &[&str] = &["", "(?i)"];

/// The code points a pattern made of one class matches, as ranges.
fn class_ranges(pattern: &str) -> Vec<(u32, u32)> {
    let parsed = syntax::parse(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
    match parsed.hir.into_kind() {
        HirKind::Class(Class::Unicode(class)) => class
            .ranges()
            .iter()
            .map(|r| (r.start() as u32, r.end() as u32))
            .collect(),
        HirKind::Literal(bytes) => {
            let c = std::str::from_utf8(&bytes.0)
                .unwrap()
                .chars()
                .next()
                .unwrap() as u32;
            vec![(c, c)]
        }
        HirKind::Class(Class::Bytes(_)) => Vec::new(),
        other => panic!("{pattern} is not a class: {other:?}"),
    }
}

/// Ranges as the dump writes them, joined over the surrogate gap (which the string of
/// every code point skips).
fn dump_ranges(ranges: &[(u32, u32)]) -> String {
    let mut joined: Vec<(u32, u32)> = Vec::new();
    for &(lo, hi) in ranges {
        match joined.last_mut() {
            Some(last) if last.1 == 0xD7FF && lo == 0xE000 => last.1 = hi,
            _ => joined.push((lo, hi)),
        }
    }
    let mut out = String::new();
    for (lo, hi) in joined {
        write!(out, " {lo:x}-{hi:x}").unwrap();
    }
    out
}

fn classes_dump() -> Vec<String> {
    let mut lines = Vec::new();
    for prefix in PREFIXES {
        for name in NAMES {
            let ranges = class_ranges(&format!(r"{prefix}\p{{{name}}}"));
            lines.push(format!("{prefix}{name}:{}", dump_ranges(&ranges)));
        }
    }
    lines
}

/// Characters with a case: those regex-syntax folds to others, and those with a
/// lower or upper case of their own.
fn cased() -> Vec<char> {
    (0..=0x10FFFFu32)
        .filter_map(char::from_u32)
        .filter(|&c| {
            let mut one =
                regex_syntax::hir::ClassUnicode::new([regex_syntax::hir::ClassUnicodeRange::new(
                    c, c,
                )]);
            one.case_fold_simple();
            one.ranges().len() > 1
                || one.ranges()[0].start() != one.ranges()[0].end()
                || c.to_lowercase().ne(std::iter::once(c))
                || c.to_uppercase().ne(std::iter::once(c))
        })
        .collect()
}

fn folds_dump(cased: &[char]) -> Vec<String> {
    cased
        .iter()
        .map(|&c| {
            let ranges = class_ranges(&format!("(?i){}", crate::quote_meta(&c.to_string())));
            let mut line = format!("{:x}:", c as u32);
            for &other in cased {
                let o = other as u32;
                if ranges.iter().any(|&(lo, hi)| lo <= o && o <= hi) {
                    write!(line, " {o:x}").unwrap();
                }
            }
            line
        })
        .collect()
}

fn digest(lines: &[String]) -> u64 {
    // FNV-1a.
    let mut hash: u64 = 0xcbf29ce484222325;
    for line in lines {
        for b in line.bytes().chain([b'\n']) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x100000001b3);
        }
    }
    hash
}

fn helm_binary() -> Option<PathBuf> {
    let mut candidates = vec![std::env::var_os("CHARTKIT_HELM").map(PathBuf::from)];
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|dir| Some(dir.join("helm"))));
    }
    candidates.push(
        std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache/chartkit-peers/helm")),
    );
    candidates.into_iter().flatten().find(|p| p.is_file())
}

/// Runs helm on a chart whose `files/text` is `text` and whose template is `template`,
/// and returns its output lines of the form `key: ...`, with the `%x` dumps of strings
/// turned into code points.
fn helm_dump(helm: &PathBuf, text: &str, template: &str, hex_keys: bool) -> Vec<String> {
    // One directory per call: the tests of this file run helm side by side in one process,
    // and a shared directory let one test's chart overwrite or remove the other's.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "chartkit-regexp-tables-{}-{call}",
        std::process::id()
    ));
    let chart = dir.join("c");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::create_dir_all(chart.join("files")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(chart.join("files/text"), text).unwrap();
    std::fs::write(chart.join("templates/t.yaml"), template).unwrap();
    let out = Command::new(helm)
        .args(["template", "r"])
        .arg(&chart)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let code_point = |hex: &str| -> String {
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        let c = String::from_utf8(bytes).unwrap().chars().next().unwrap();
        format!("{:x}", c as u32)
    };
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.contains(':') && !l.starts_with('#'))
        .map(|line| {
            let (key, rest) = line.split_once(':').unwrap();
            let mut converted = if hex_keys {
                code_point(key)
            } else {
                key.to_owned()
            } + ":";
            for item in rest.split_whitespace() {
                converted.push(' ');
                let mut parts = item.split('-').map(code_point);
                converted.push_str(&parts.next().unwrap());
                if let Some(hi) = parts.next() {
                    converted.push('-');
                    converted.push_str(&hi);
                }
            }
            converted
        })
        .collect()
}

/// The code points a dump line lists (ranges `lo-hi` or single `c`).
fn members(line: &str) -> std::collections::BTreeSet<u32> {
    let mut set = std::collections::BTreeSet::new();
    for item in line
        .split_once(':')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
    {
        let (lo, hi) = item.split_once('-').unwrap_or((item, item));
        let (lo, hi) = (
            u32::from_str_radix(lo, 16).unwrap(),
            u32::from_str_radix(hi, 16).unwrap(),
        );
        set.extend((lo..=hi).filter(|c| !(0xD800..=0xDFFF).contains(c)));
    }
    set
}

fn compare(what: &str, ours: &[String], helms: &[String]) {
    let hex = |set: Vec<&u32>| {
        set.iter()
            .take(20)
            .map(|c| format!("{c:x}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let differing: Vec<String> = ours
        .iter()
        .zip(helms)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| {
            let (a_set, b_set) = (members(a), members(b));
            format!(
                "  {}: only ours: [{}] only helm's: [{}]",
                a.split_once(':').map_or("", |(k, _)| k),
                hex(a_set.difference(&b_set).collect()),
                hex(b_set.difference(&a_set).collect()),
            )
        })
        .collect();
    assert!(
        differing.is_empty() && ours.len() == helms.len(),
        "{what} differ from helm ({} vs {} lines):\n{}",
        ours.len(),
        helms.len(),
        differing.join("\n")
    );
}

#[test]
fn unicode_classes_are_gos() {
    let ours = classes_dump();
    let Some(helm) = helm_binary() else {
        assert_eq!(
            digest(&ours),
            CLASSES_DIGEST,
            "no helm to compare with: digests differ"
        );
        return;
    };
    let every: String = (0..=0x10FFFFu32).filter_map(char::from_u32).collect();
    let names: Vec<String> = NAMES.iter().map(|n| format!("{n:?}")).collect();
    let prefixes: Vec<String> = PREFIXES.iter().map(|p| format!("{p:?}")).collect();
    let template = format!(
        r#"{{{{- $s := .Files.Get "files/text" -}}}}
{{{{- range $f := list {} }}}}{{{{- range $n := list {} }}}}
{{{{ $f }}}}{{{{ $n }}}}:{{{{ range regexFindAll (printf "(?s)%s\\p{{%s}}+" $f $n) $s -1 }}}} {{{{ printf "%x" (regexFind "(?s)^." .) }}}}-{{{{ printf "%x" (regexFind "(?s).$" .) }}}}{{{{ end }}}}
{{{{- end }}}}{{{{ end }}}}
"#,
        prefixes.join(" "),
        names.join(" ")
    );
    let helms = helm_dump(&helm, &every, &template, false);
    // A single code point run is dumped by helm as `x-x`, as ours is.
    compare("Unicode classes", &ours, &helms);
    println!("classes digest: {:#x}", digest(&ours));
}

#[test]
fn case_folding_is_gos() {
    let cased = cased();
    let ours = folds_dump(&cased);
    let Some(helm) = helm_binary() else {
        assert_eq!(
            digest(&ours),
            FOLDS_DIGEST,
            "no helm to compare with: digests differ"
        );
        return;
    };
    let text: String = cased.iter().collect();
    let template = r#"{{- $s := .Files.Get "files/text" -}}
{{- range $c := regexSplit "" $s -1 }}
{{ printf "%x" $c }}:{{ range regexFindAll (printf "(?i)%s" (regexQuoteMeta $c)) $s -1 }} {{ printf "%x" . }}{{ end }}
{{- end }}
"#;
    let helms = helm_dump(&helm, &text, template, true);
    compare("case folding orbits", &ours, &helms);
    println!("folds digest: {:#x}", digest(&ours));
}
