//! The character tables of Go 1.25's `regexp/syntax`: Unicode 15.0.0 categories and
//! scripts with Go's name lookup, case folding, and the ASCII Perl and POSIX classes.
//!
//! regex-syntax carries Unicode 16.0.0 tables. Go 1.25 has Unicode 15.0.0, so every
//! class here is regex-syntax's with the characters assigned in 15.1 and 16.0 taken out
//! (or, for the classes that hold unassigned code points, put in: to Go those characters
//! are still unassigned). The same goes for case folding: Unicode 16 gave a few old
//! letters new case partners (`ƛ` and `Ƛ`, U+A7DC), which Go does not know.
//! `tests/unicode_tables.rs` compares every class and fold orbit with helm.

use std::sync::OnceLock;

use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, HirKind};

/// A class of code points. Surrogates never appear: Go can name them (`\x{D800}`) but a
/// decoded string never holds one, so leaving them out changes no match.
pub(crate) type Set = ClassUnicode;

/// The class regex-syntax gives for a pattern made of one class, such as `\p{Lu}`.
fn rust_class(pattern: &str) -> Set {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .unwrap_or_else(|e| panic!("regex-syntax knows {pattern}: {e}"));
    match hir.into_kind() {
        HirKind::Class(Class::Unicode(class)) => class,
        // A class of one character (`\p{Zl}`) comes back as a literal.
        HirKind::Literal(literal) => std::str::from_utf8(&literal.0)
            .ok()
            .and_then(|s| s.chars().next())
            .map(|c| Set::new([ClassUnicodeRange::new(c, c)]))
            .unwrap_or_else(Set::empty),
        // An empty class (`\p{Cs}` without surrogates) comes back as "fail".
        _ => Set::empty(),
    }
}

/// The characters Unicode assigned after 15.0.0 (in 15.1.0 and 16.0.0).
fn after_unicode_15() -> &'static Set {
    static SET: OnceLock<Set> = OnceLock::new();
    SET.get_or_init(|| {
        let mut set = rust_class(r"\p{age=16.0}");
        set.difference(&rust_class(r"\p{age=15.0}"));
        set
    })
}

/// A Unicode 16 class as Go 1.25 (Unicode 15.0) has it.
fn unicode_15(mut set: Set) -> Set {
    // U+0378 has never been assigned: a class holding it holds the unassigned code
    // points, among which Go counts everything assigned after 15.0.
    let holds_unassigned = contains(&set, '\u{378}');
    set.difference(after_unicode_15());
    if holds_unassigned {
        set.union(after_unicode_15());
    }
    set
}

/// Whether `set` holds `c`.
pub(crate) fn contains(set: &Set, c: char) -> bool {
    let ranges = set.ranges();
    let i = ranges.partition_point(|r| r.end() < c);
    ranges.get(i).is_some_and(|r| r.start() <= c)
}

/// The characters that have no simple case folding in Unicode 15.0 but may in
/// regex-syntax's tables: those assigned later, and three pairs of old characters that
/// Unicode 15.1 made equivalent (ΐ and ΐ, ΰ and ΰ, ﬅ and ﬆ).
fn unfolded_in_unicode_15() -> &'static Set {
    static SET: OnceLock<Set> = OnceLock::new();
    SET.get_or_init(|| {
        let mut set = after_unicode_15().clone();
        set.union(&set_of(&[
            (0x390, 0x390),
            (0x3B0, 0x3B0),
            (0x1FD3, 0x1FD3),
            (0x1FE3, 0x1FE3),
            (0xFB05, 0xFB06),
        ]));
        set
    })
}

/// `set` with every character Go's `unicode.SimpleFold` orbit puts beside its members,
/// as `(?i)` makes of a literal or class.
pub(crate) fn fold(set: &Set) -> Set {
    let mut foldable = set.clone();
    foldable.difference(unfolded_in_unicode_15());
    foldable.case_fold_simple();
    foldable.difference(unfolded_in_unicode_15());
    let mut folded = set.clone();
    folded.union(&foldable);
    folded
}

/// The set of ranges `ranges` (inclusive code point pairs, surrogates dropped).
pub(crate) fn set_of(ranges: &[(u32, u32)]) -> Set {
    let mut set = Set::empty();
    for &(lo, hi) in ranges {
        push_range(&mut set, lo, hi);
    }
    set
}

/// Adds the code points `lo..=hi` to `set`, leaving out surrogates.
pub(crate) fn push_range(set: &mut Set, lo: u32, hi: u32) {
    let mut add = |lo: u32, hi: u32| {
        if let (Some(lo), Some(hi)) = (char::from_u32(lo), char::from_u32(hi))
            && lo <= hi
        {
            set.push(ClassUnicodeRange::new(lo, hi));
        }
    };
    if lo < 0xD800 && hi > 0xDFFF {
        add(lo, 0xD7FF);
        add(0xE000, hi);
    } else {
        add(lo, hi.min(0xD7FF));
        add(lo.max(0xE000), hi);
    }
}

/// Go's Perl classes, ASCII only: `\d`, `\s` (no `\v`), `\w`; and their negations.
/// The `bool` says whether the class is negated.
pub(crate) fn perl_class(letter: u8) -> Option<(&'static [(u32, u32)], bool)> {
    const DIGIT: &[(u32, u32)] = &[(0x30, 0x39)];
    const SPACE: &[(u32, u32)] = &[(0x09, 0x0A), (0x0C, 0x0D), (0x20, 0x20)];
    const WORD: &[(u32, u32)] = &[(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)];
    Some(match letter {
        b'd' => (DIGIT, false),
        b'D' => (DIGIT, true),
        b's' => (SPACE, false),
        b'S' => (SPACE, true),
        b'w' => (WORD, false),
        b'W' => (WORD, true),
        _ => return None,
    })
}

/// Go's POSIX classes (`[:alpha:]`, `[:^alpha:]`), ASCII only. `name` is the whole
/// bracketed name.
pub(crate) fn posix_class(name: &str) -> Option<(&'static [(u32, u32)], bool)> {
    let (negated, name) = match name.strip_prefix("[:^") {
        Some(rest) => (true, rest),
        None => (false, name.strip_prefix("[:")?),
    };
    let ranges: &[(u32, u32)] = match name.strip_suffix(":]")? {
        "alnum" => &[(0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)],
        "alpha" => &[(0x41, 0x5A), (0x61, 0x7A)],
        "ascii" => &[(0x00, 0x7F)],
        "blank" => &[(0x09, 0x09), (0x20, 0x20)],
        "cntrl" => &[(0x00, 0x1F), (0x7F, 0x7F)],
        "digit" => &[(0x30, 0x39)],
        "graph" => &[(0x21, 0x7E)],
        "lower" => &[(0x61, 0x7A)],
        "print" => &[(0x20, 0x7E)],
        "punct" => &[(0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)],
        "space" => &[(0x09, 0x0D), (0x20, 0x20)],
        "upper" => &[(0x41, 0x5A)],
        "word" => &[(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)],
        "xdigit" => &[(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)],
        _ => return None,
    };
    Some((ranges, negated))
}

/// Go's general categories (`unicode.Categories`): all of them canonical names but `LC`.
const CATEGORIES: &[&str] = &[
    "C", "Cc", "Cf", "Cn", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn",
    "N", "Nd", "Nl", "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm",
    "So", "Z", "Zl", "Zp", "Zs",
];

/// Unicode 15.0.0's property value aliases for general categories
/// (`unicode.CategoryAliases`), with the category each names.
const CATEGORY_ALIASES: &[(&str, &str)] = &[
    ("Other", "C"),
    ("Control", "Cc"),
    ("cntrl", "Cc"),
    ("Format", "Cf"),
    ("Unassigned", "Cn"),
    ("Private_Use", "Co"),
    ("Surrogate", "Cs"),
    ("Letter", "L"),
    ("Cased_Letter", "LC"),
    ("Lowercase_Letter", "Ll"),
    ("Modifier_Letter", "Lm"),
    ("Other_Letter", "Lo"),
    ("Titlecase_Letter", "Lt"),
    ("Uppercase_Letter", "Lu"),
    ("Mark", "M"),
    ("Combining_Mark", "M"),
    ("Spacing_Mark", "Mc"),
    ("Enclosing_Mark", "Me"),
    ("Nonspacing_Mark", "Mn"),
    ("Number", "N"),
    ("Decimal_Number", "Nd"),
    ("digit", "Nd"),
    ("Letter_Number", "Nl"),
    ("Other_Number", "No"),
    ("Punctuation", "P"),
    ("punct", "P"),
    ("Connector_Punctuation", "Pc"),
    ("Dash_Punctuation", "Pd"),
    ("Close_Punctuation", "Pe"),
    ("Final_Punctuation", "Pf"),
    ("Initial_Punctuation", "Pi"),
    ("Other_Punctuation", "Po"),
    ("Open_Punctuation", "Ps"),
    ("Symbol", "S"),
    ("Currency_Symbol", "Sc"),
    ("Modifier_Symbol", "Sk"),
    ("Math_Symbol", "Sm"),
    ("Other_Symbol", "So"),
    ("Separator", "Z"),
    ("Line_Separator", "Zl"),
    ("Paragraph_Separator", "Zp"),
    ("Space_Separator", "Zs"),
];

/// Unicode 15.0.0's scripts, spelled as the keys of Go's `unicode.Scripts`. Go looks a
/// name up after [`canonical_name`], which no key of more than one word survives: in
/// Go 1.25 `\p{Greek}` and `\p{greek}` work, `\p{Old_Italic}` is an error.
const SCRIPTS: &[&str] = &[
    "Adlam",
    "Ahom",
    "Anatolian_Hieroglyphs",
    "Arabic",
    "Armenian",
    "Avestan",
    "Balinese",
    "Bamum",
    "Bassa_Vah",
    "Batak",
    "Bengali",
    "Bhaiksuki",
    "Bopomofo",
    "Brahmi",
    "Braille",
    "Buginese",
    "Buhid",
    "Canadian_Aboriginal",
    "Carian",
    "Caucasian_Albanian",
    "Chakma",
    "Cham",
    "Cherokee",
    "Chorasmian",
    "Common",
    "Coptic",
    "Cuneiform",
    "Cypriot",
    "Cypro_Minoan",
    "Cyrillic",
    "Deseret",
    "Devanagari",
    "Dives_Akuru",
    "Dogra",
    "Duployan",
    "Egyptian_Hieroglyphs",
    "Elbasan",
    "Elymaic",
    "Ethiopic",
    "Georgian",
    "Glagolitic",
    "Gothic",
    "Grantha",
    "Greek",
    "Gujarati",
    "Gunjala_Gondi",
    "Gurmukhi",
    "Han",
    "Hangul",
    "Hanifi_Rohingya",
    "Hanunoo",
    "Hatran",
    "Hebrew",
    "Hiragana",
    "Imperial_Aramaic",
    "Inherited",
    "Inscriptional_Pahlavi",
    "Inscriptional_Parthian",
    "Javanese",
    "Kaithi",
    "Kannada",
    "Katakana",
    "Kawi",
    "Kayah_Li",
    "Kharoshthi",
    "Khitan_Small_Script",
    "Khmer",
    "Khojki",
    "Khudawadi",
    "Lao",
    "Latin",
    "Lepcha",
    "Limbu",
    "Linear_A",
    "Linear_B",
    "Lisu",
    "Lycian",
    "Lydian",
    "Mahajani",
    "Makasar",
    "Malayalam",
    "Mandaic",
    "Manichaean",
    "Marchen",
    "Masaram_Gondi",
    "Medefaidrin",
    "Meetei_Mayek",
    "Mende_Kikakui",
    "Meroitic_Cursive",
    "Meroitic_Hieroglyphs",
    "Miao",
    "Modi",
    "Mongolian",
    "Mro",
    "Multani",
    "Myanmar",
    "Nabataean",
    "Nag_Mundari",
    "Nandinagari",
    "New_Tai_Lue",
    "Newa",
    "Nko",
    "Nushu",
    "Nyiakeng_Puachue_Hmong",
    "Ogham",
    "Ol_Chiki",
    "Old_Hungarian",
    "Old_Italic",
    "Old_North_Arabian",
    "Old_Permic",
    "Old_Persian",
    "Old_Sogdian",
    "Old_South_Arabian",
    "Old_Turkic",
    "Old_Uyghur",
    "Oriya",
    "Osage",
    "Osmanya",
    "Pahawh_Hmong",
    "Palmyrene",
    "Pau_Cin_Hau",
    "Phags_Pa",
    "Phoenician",
    "Psalter_Pahlavi",
    "Rejang",
    "Runic",
    "Samaritan",
    "Saurashtra",
    "Sharada",
    "Shavian",
    "Siddham",
    "SignWriting",
    "Sinhala",
    "Sogdian",
    "Sora_Sompeng",
    "Soyombo",
    "Sundanese",
    "Syloti_Nagri",
    "Syriac",
    "Tagalog",
    "Tagbanwa",
    "Tai_Le",
    "Tai_Tham",
    "Tai_Viet",
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
    "Warang_Citi",
    "Yezidi",
    "Yi",
    "Zanabazar_Square",
];

/// Go's `canonicalName`: spaces, underscores and hyphens dropped, the first remaining
/// ASCII letter upper case and the other ASCII letters lower case.
fn canonical_name(name: &str) -> String {
    let mut out = Vec::with_capacity(name.len());
    let mut first = true;
    for &b in name.as_bytes() {
        match b {
            b'_' | b'-' | b' ' => {}
            _ if first => {
                out.push(b.to_ascii_uppercase());
                first = false;
            }
            _ => out.push(b.to_ascii_lowercase()),
        }
    }
    // Only ASCII bytes changed, so the bytes are still UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// Characters whose general category changed after Unicode 15.0 (to the first, from the
/// second, which Go has).
const CATEGORY_CHANGES: &[(char, &str, &str)] = &[
    // AHOM CONSONANT SIGN MEDIAL RA became a spacing mark in 16.0.
    ('\u{1171E}', "Mc", "Mn"),
];

/// The general category `key` (one of [`CATEGORIES`] or `LC`) as Unicode 15.0 has it.
fn category(key: &str) -> Set {
    // Surrogates: regex-syntax has no such class, and no decoded string holds one.
    if key == "Cs" {
        return Set::empty();
    }
    let mut set = unicode_15(rust_class(&format!(r"\p{{gc={key}}}")));
    for &(c, now, then) in CATEGORY_CHANGES {
        let one = Set::new([ClassUnicodeRange::new(c, c)]);
        if key == now {
            set.difference(&one);
        } else if key == then {
            set.union(&one);
        }
    }
    set
}

/// A class `\p{name}` names (Go's `unicodeTable`).
pub(crate) struct UnicodeClass {
    pub set: Set,
    /// `Assigned` is the negation of `Cn`.
    pub negated: bool,
    /// Whether `(?i)` folds it: Go has no fold table for `LC`, so `(?i)\p{LC}` does not
    /// take in U+0345, which folds to the Greek iota.
    pub folds: bool,
}

/// The class `\p{name}` names, or `None` for a name Go does not know.
pub(crate) fn unicode_class(name: &str) -> Option<UnicodeClass> {
    let name = canonical_name(name);
    let class = |set: Set| UnicodeClass {
        set,
        negated: false,
        folds: true,
    };
    match name.as_str() {
        "Any" => return Some(class(set_of(&[(0, 0x10FFFF)]))),
        "Assigned" => {
            return Some(UnicodeClass {
                negated: true,
                ..class(category("Cn"))
            });
        }
        "Ascii" => return Some(class(set_of(&[(0, 0x7F)]))),
        "Lc" => return Some(cased_letter()),
        _ => {}
    }
    if CATEGORIES.contains(&name.as_str()) {
        return Some(class(category(&name)));
    }
    if SCRIPTS.contains(&name.as_str()) {
        return Some(class(unicode_15(rust_class(&format!(r"\p{{sc={name}}}")))));
    }
    let (_, key) = CATEGORY_ALIASES
        .iter()
        .find(|(alias, _)| canonical_name(alias) == name)?;
    Some(if *key == "LC" {
        cased_letter()
    } else {
        class(category(key))
    })
}

fn cased_letter() -> UnicodeClass {
    UnicodeClass {
        set: category("LC"),
        negated: false,
        folds: false,
    }
}

/// Go's `unicode.IsLetter` (category L), which `Expand` uses to read `$name`.
pub(crate) fn is_letter(c: char) -> bool {
    static SET: OnceLock<Set> = OnceLock::new();
    c.is_ascii_alphabetic() || (!c.is_ascii() && contains(SET.get_or_init(|| category("L")), c))
}

/// Go's `unicode.IsDigit` (category Nd).
pub(crate) fn is_digit(c: char) -> bool {
    static SET: OnceLock<Set> = OnceLock::new();
    c.is_ascii_digit() || (!c.is_ascii() && contains(SET.get_or_init(|| category("Nd")), c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(set: &Set, c: u32) -> bool {
        contains(set, char::from_u32(c).unwrap())
    }

    #[test]
    fn names_resolve_like_go() {
        for name in [
            "L",
            "lu",
            "L_u",
            "Letter",
            "uppercase letter",
            "LC",
            "lc",
            "Greek",
        ] {
            assert!(unicode_class(name).is_some(), "{name}");
        }
        for name in [
            "Old_Italic",
            "OldItalic",
            "Latn",
            "Garay",
            "L&",
            "sc=Greek",
            "",
        ] {
            assert!(unicode_class(name).is_none(), "{name}");
        }
        assert!(unicode_class("Assigned").unwrap().negated);
        assert!(!unicode_class("Cased_Letter").unwrap().folds);
    }

    #[test]
    fn classes_are_unicode_15() {
        let lu = unicode_class("Lu").unwrap().set;
        assert!(has(&lu, 'A' as u32));
        // U+1C89 CYRILLIC CAPITAL LETTER TJE is new in Unicode 16.0.
        assert!(!has(&lu, 0x1C89));
        let cn = unicode_class("Cn").unwrap().set;
        assert!(has(&cn, 0x1C89) && has(&cn, 0x378) && !has(&cn, 'a' as u32));
        // U+31EF is new in 15.1.
        assert!(has(&cn, 0x31EF));
        let c = unicode_class("C").unwrap().set;
        assert!(has(&c, 0x1C89));
        let zl = unicode_class("Zl").unwrap().set;
        assert!(has(&zl, 0x2028));
    }

    #[test]
    fn folding_is_simple_folding_of_unicode_15() {
        let fold_of = |c: char| fold(&Set::new([ClassUnicodeRange::new(c, c)]));
        let k = fold_of('k');
        assert!(has(&k, 'K' as u32) && has(&k, 0x212A));
        assert!(has(&fold_of('ß'), 0x1E9E));
        // İ and ı have no simple case folding.
        assert_eq!(fold_of('İ').ranges().len(), 1);
        assert!(!has(&fold_of('i'), 0x130));
        // ƛ got its capital (U+A7DC) in Unicode 16.0, ΐ its twin U+1FD3 in 15.1.
        assert_eq!(fold_of('ƛ').ranges().len(), 1);
        assert_eq!(fold_of('\u{390}').ranges().len(), 1);
        assert_eq!(fold_of('\u{A7DC}').ranges().len(), 1);
    }

    #[test]
    fn expand_name_characters() {
        assert!(is_letter('é') && is_letter('x') && !is_letter('1') && !is_letter('_'));
        assert!(is_digit('٣') && !is_digit('²') && !is_letter('\u{1C89}'));
    }
}
