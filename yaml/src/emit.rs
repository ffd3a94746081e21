//! go-yaml v2's emitter, as Helm reaches it through `sigs.k8s.io/yaml`: keys sorted in
//! go-yaml's "natural" order, sequences not indented under their key, multi-line strings as
//! literal blocks, strings quoted only when they would read back as something else, and
//! long scalars folded at spaces after column 80.

use std::cmp::Ordering;

use crate::gonum;
use crate::resolve::needs_quotes;
use crate::value::{Map, Value};

const BEST_WIDTH: usize = 80;
const BEST_INDENT: usize = 2;
/// Keys longer than this (in bytes) or spanning lines are written as `? key`.
const MAX_SIMPLE_KEY: usize = 128;

/// Writes a value as go-yaml v2 marshals it after the JSON round trip Helm makes, ending
/// with a newline. Infinite and NaN floats, which Helm refuses earlier, are written as
/// `.inf` and `.nan`.
pub fn to_yaml(value: &Value) -> String {
    emit(value, Style2::V2)
}

/// Writes a value as go-yaml v3's encoder does with `SetIndent(2)`, which is Helm's
/// `toYamlPretty`: sequences are indented under their key, long lines are not folded and
/// floats keep Go's `%g` form (`1e+06`) because the value is not first turned into JSON.
pub fn to_yaml_pretty(value: &Value) -> String {
    emit(value, Style2::V3)
}

/// A map's entries as go-yaml v2 writes them when the map is the value of a key at
/// `indent - 2` columns: every line indented by `indent`, no newline at the end. The
/// document a map is part of can then be put together from such pieces written
/// separately, byte for byte as [`to_yaml`] writes it whole (each piece holding one or more
/// of the map's keys, in go-yaml's key order), because folding long scalars depends only
/// on the column, which is the same.
pub fn to_yaml_nested_map(map: &Map, indent: usize) -> String {
    let mut emitter = Emitter {
        out: " ".repeat(indent),
        column: indent,
        flavour: Style2::V2,
        width: BEST_WIDTH,
    };
    emitter.map(map, indent);
    emitter.out
}

/// Which go-yaml encoder to imitate.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style2 {
    V2,
    V3,
}

fn emit(value: &Value, flavour: Style2) -> String {
    let mut emitter = Emitter {
        out: String::new(),
        column: 0,
        flavour,
        width: if flavour == Style2::V3 {
            usize::MAX
        } else {
            BEST_WIDTH
        },
    };
    match value {
        Value::Map(map) if !map.is_empty() => emitter.map(map, 0),
        Value::Seq(items) if !items.is_empty() => emitter.seq(items, 0),
        scalar => emitter.scalar(scalar, BEST_INDENT, false),
    }
    emitter.out.push('\n');
    emitter.out
}

/// go-yaml v2's key order: runs of digits compare as numbers (`a2` < `a10`), and at the
/// first difference a non-letter sorts before a letter.
pub fn compare_keys(a: &str, b: &str) -> Ordering {
    // Maps are sorted with this on every toYaml; keys are nearly always ASCII, where
    // bytes are the characters and nothing needs collecting.
    if a.is_ascii() && b.is_ascii() {
        return compare_key_chars(a.as_bytes(), b.as_bytes());
    }
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    compare_key_chars(&ar, &br)
}

fn compare_key_chars<C: Copy + PartialEq + Into<char>>(ar: &[C], br: &[C]) -> Ordering {
    let ch = |c: C| -> char { c.into() };
    let is_digit = |c: char| c.is_ascii_digit() || (!c.is_ascii() && c.is_numeric());
    let digit_value = |c: char| c.to_digit(10).unwrap_or(0) as i64;
    for i in 0..ar.len().min(br.len()) {
        if ar[i] == br[i] {
            continue;
        }
        let (a_i, b_i) = (ch(ar[i]), ch(br[i]));
        let a_letter = a_i.is_alphabetic();
        let b_letter = b_i.is_alphabetic();
        if a_letter && b_letter {
            return a_i.cmp(&b_i);
        }
        if a_letter || b_letter {
            return if b_letter {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if a_i == '0' || b_i == '0' {
            // A zero after a non-zero digit is part of a number; keep the comparison numeric.
            let mut j = i;
            while j > 0 && is_digit(ch(ar[j - 1])) {
                j -= 1;
                if ch(ar[j]) != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && is_digit(ch(ar[ai])) {
            an = an.wrapping_mul(10).wrapping_add(digit_value(ch(ar[ai])));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && is_digit(ch(br[bi])) {
            bn = bn.wrapping_mul(10).wrapping_add(digit_value(ch(br[bi])));
            bi += 1;
        }
        if an != bn {
            return an.cmp(&bn);
        }
        if ai != bi {
            return ai.cmp(&bi);
        }
        return a_i.cmp(&b_i);
    }
    ar.len().cmp(&br.len())
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

/// libyaml's scalar analysis: which styles can represent the text faithfully.
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// libyaml's `is_printable`, which notably excludes tabs and everything outside the Basic
/// Multilingual Plane (so emoji are written as `\U` escapes).
fn is_printable(c: char) -> bool {
    matches!(c as u32, 0x0A | 0x20..=0x7E | 0xA0..=0xD7FF | 0xE000..=0xFFFD) && c != '\u{FEFF}'
}

fn analyze(text: &str) -> Analysis {
    if text.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let mut block_indicators = text.starts_with("---") || text.starts_with("...");
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break, mut previous_space, mut previous_break) =
        (false, false, false, false);
    let (mut line_breaks, mut special_characters) = (false, false);
    let mut preceded_by_whitespace = true;
    // One character of look-ahead, without collecting the characters: scalars can be
    // long (CRD descriptions), and this runs for every one that toYaml writes.
    let mut chars = text.chars().peekable();
    let mut first = true;
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        let followed_by_whitespace = next.is_none_or(|n| is_blank(n) || is_break(n));
        let is_last = next.is_none();
        if first {
            if "#,[]{}&*!|>'\"%@`".contains(c) {
                block_indicators = true;
            }
            if (c == '?' || c == ':' || c == '-') && followed_by_whitespace {
                block_indicators = true;
            }
        } else if (c == ':' && followed_by_whitespace) || (c == '#' && preceded_by_whitespace) {
            block_indicators = true;
        }
        if !is_printable(c) {
            special_characters = true;
        }
        if is_break(c) {
            line_breaks = true;
        }
        if c == ' ' {
            leading_space |= first;
            trailing_space |= is_last;
            break_space |= previous_break;
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            leading_break |= first;
            trailing_break |= is_last;
            space_break |= previous_space;
            previous_break = true;
            previous_space = false;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = is_blank(c) || is_break(c);
        first = false;
    }
    let mut analysis = Analysis {
        multiline: line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        analysis.block_plain_allowed = false;
    }
    if trailing_space {
        analysis.block_allowed = false;
    }
    if break_space {
        analysis.block_plain_allowed = false;
        analysis.single_quoted_allowed = false;
    }
    if space_break || special_characters {
        analysis.block_plain_allowed = false;
        analysis.single_quoted_allowed = false;
        analysis.block_allowed = false;
    }
    if line_breaks || block_indicators {
        analysis.block_plain_allowed = false;
    }
    analysis
}

/// go-yaml picks plain, literal (for text with newlines) or double quotes (for text that
/// would resolve to another type); libyaml then downgrades what the text cannot survive.
fn choose_style(text: &str, analysis: &Analysis, simple_key: bool) -> Style {
    let mut style = if needs_quotes(text) {
        Style::DoubleQuoted
    } else if text.contains('\n') {
        Style::Literal
    } else {
        Style::Plain
    };
    if style == Style::Plain && !analysis.block_plain_allowed {
        style = Style::SingleQuoted;
    }
    if style == Style::SingleQuoted && !analysis.single_quoted_allowed {
        style = Style::DoubleQuoted;
    }
    if style == Style::Literal && (!analysis.block_allowed || simple_key) {
        style = Style::DoubleQuoted;
    }
    style
}

struct Emitter {
    out: String,
    /// Characters written since the last newline.
    column: usize,
    flavour: Style2,
    /// The column after which long scalars are folded.
    width: usize,
}

impl Emitter {
    fn write(&mut self, text: &str) {
        self.out.push_str(text);
        self.column += text.chars().count();
    }

    fn write_char(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    /// Starts a new line indented to `indent`.
    fn line(&mut self, indent: usize) {
        self.out.push('\n');
        self.column = 0;
        for _ in 0..indent {
            self.out.push(' ');
        }
        self.column = indent;
    }

    fn map(&mut self, map: &Map, indent: usize) {
        let mut entries: Vec<(&String, &Value)> = map.iter().collect();
        entries.sort_by(|(a, _), (b, _)| compare_keys(a, b));
        for (i, (key, value)) in entries.into_iter().enumerate() {
            if i > 0 {
                self.line(indent);
            }
            let simple = key.len() <= MAX_SIMPLE_KEY && !analyze(key).multiline;
            if simple {
                self.string(key, indent + BEST_INDENT, true);
                self.write_char(':');
            } else {
                self.write("? ");
                self.string(key, indent + BEST_INDENT, false);
                self.line(indent);
                self.write_char(':');
            }
            self.value_after_indicator(value, indent);
        }
    }

    /// Writes a mapping value after its `:`.
    fn value_after_indicator(&mut self, value: &Value, indent: usize) {
        match value {
            Value::Map(map) if !map.is_empty() => {
                self.line(indent + BEST_INDENT);
                crate::with_stack(|| self.map(map, indent + BEST_INDENT));
            }
            Value::Seq(items) if !items.is_empty() => {
                let indent = if self.flavour == Style2::V3 {
                    indent + BEST_INDENT
                } else {
                    indent
                };
                self.line(indent);
                crate::with_stack(|| self.seq(items, indent));
            }
            scalar => {
                self.write_char(' ');
                self.scalar(scalar, indent + BEST_INDENT, false);
            }
        }
    }

    fn seq(&mut self, items: &[Value], indent: usize) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.line(indent);
            }
            self.write("- ");
            match item {
                Value::Map(map) if !map.is_empty() => {
                    crate::with_stack(|| self.map(map, indent + BEST_INDENT))
                }
                Value::Seq(inner) if !inner.is_empty() => {
                    crate::with_stack(|| self.seq(inner, indent + BEST_INDENT))
                }
                scalar => self.scalar(scalar, indent + BEST_INDENT, false),
            }
        }
    }

    fn scalar(&mut self, value: &Value, indent: usize, simple_key: bool) {
        match value {
            Value::Null => self.write("null"),
            Value::Bool(b) => self.write(if *b { "true" } else { "false" }),
            Value::Int(i) => self.write(&i.to_string()),
            Value::Float(f) if self.flavour == Style2::V3 => {
                self.write(&match gonum::format_g(*f, false).as_str() {
                    "+Inf" => ".inf".to_owned(),
                    "-Inf" => "-.inf".to_owned(),
                    "NaN" => ".nan".to_owned(),
                    other => other.to_owned(),
                })
            }
            Value::Float(f) => self.write(&float_text(*f)),
            Value::String(s) => self.string(s, indent, simple_key),
            Value::Bytes(b) => self.string(&crate::value::go_lossy(b), indent, simple_key),
            Value::Seq(_) => self.write("[]"),
            Value::Map(_) => self.write("{}"),
        }
    }

    fn string(&mut self, text: &str, indent: usize, simple_key: bool) {
        let analysis = analyze(text);
        let allow_breaks = !simple_key;
        match choose_style(text, &analysis, simple_key) {
            Style::Plain => self.plain(text, indent, allow_breaks),
            Style::SingleQuoted => self.single_quoted(text, indent, allow_breaks),
            Style::DoubleQuoted => self.double_quoted(text, indent, allow_breaks),
            Style::Literal => self.literal(text, indent),
        }
    }

    fn plain(&mut self, text: &str, indent: usize, allow_breaks: bool) {
        // Only a space can become a line break; text without one is written whole.
        if !allow_breaks || !text.contains(' ') {
            self.out.push_str(text);
            self.column += text.chars().count();
            return;
        }
        let mut chars = text.chars().peekable();
        let mut spaces = false;
        while let Some(c) = chars.next() {
            if c == ' ' {
                let next_is_space = chars.peek() == Some(&' ');
                if !spaces && self.column > self.width && !next_is_space {
                    self.line(indent);
                } else {
                    self.write_char(c);
                }
                spaces = true;
            } else {
                self.write_char(c);
                spaces = false;
            }
        }
    }

    fn single_quoted(&mut self, text: &str, indent: usize, allow_breaks: bool) {
        let chars: Vec<char> = text.chars().collect();
        let last = chars.len().saturating_sub(1);
        self.write_char('\'');
        let mut spaces = false;
        let mut breaks = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_is_space = chars.get(i + 1) == Some(&' ');
                if allow_breaks
                    && !spaces
                    && self.column > self.width
                    && i != 0
                    && i != last
                    && !next_is_space
                {
                    self.line(indent);
                } else {
                    self.write_char(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.out.push('\n');
                }
                self.out.push(c);
                self.column = 0;
                breaks = true;
            } else {
                if breaks {
                    self.line_continuation(indent);
                }
                if c == '\'' {
                    self.write_char('\'');
                }
                self.write_char(c);
                spaces = false;
                breaks = false;
            }
        }
        self.write_char('\'');
    }

    /// Indents after a line break that was already written as content.
    fn line_continuation(&mut self, indent: usize) {
        for _ in 0..indent {
            self.out.push(' ');
        }
        self.column = indent;
    }

    fn double_quoted(&mut self, text: &str, indent: usize, allow_breaks: bool) {
        let chars: Vec<char> = text.chars().collect();
        let last = chars.len().saturating_sub(1);
        self.write_char('"');
        let mut spaces = false;
        // go-yaml's `is_bom` looks at the start of the string wherever it is asked about,
        // so after a leading byte order mark every character is written escaped.
        let bom = text.starts_with('\u{FEFF}');
        for (i, &c) in chars.iter().enumerate() {
            if bom || !is_printable(c) || is_break(c) || c == '"' || c == '\\' {
                self.write_char('\\');
                match c {
                    '\0' => self.write_char('0'),
                    '\u{7}' => self.write_char('a'),
                    '\u{8}' => self.write_char('b'),
                    '\t' => self.write_char('t'),
                    '\n' => self.write_char('n'),
                    '\u{b}' => self.write_char('v'),
                    '\u{c}' => self.write_char('f'),
                    '\r' => self.write_char('r'),
                    '\u{1b}' => self.write_char('e'),
                    '"' => self.write_char('"'),
                    '\\' => self.write_char('\\'),
                    '\u{85}' => self.write_char('N'),
                    '\u{a0}' => self.write_char('_'),
                    '\u{2028}' => self.write_char('L'),
                    '\u{2029}' => self.write_char('P'),
                    other => {
                        let code = other as u32;
                        let escaped = if code <= 0xFF {
                            format!("x{code:02X}")
                        } else if code <= 0xFFFF {
                            format!("u{code:04X}")
                        } else {
                            format!("U{code:08X}")
                        };
                        self.write(&escaped);
                    }
                }
                spaces = false;
            } else if c == ' ' {
                if allow_breaks && !spaces && self.column > self.width && i != 0 && i != last {
                    self.line(indent);
                    if chars.get(i + 1) == Some(&' ') {
                        self.write_char('\\');
                    }
                } else {
                    self.write_char(c);
                }
                spaces = true;
            } else {
                self.write_char(c);
                spaces = false;
            }
        }
        self.write_char('"');
    }

    fn literal(&mut self, text: &str, indent: usize) {
        self.write_char('|');
        let first = text.chars().next();
        if first.is_some_and(|c| c == ' ' || is_break(c)) {
            self.write(&BEST_INDENT.to_string());
        }
        let mut tail = text.chars().rev();
        let last = tail.next();
        let before_last = tail.next();
        if !last.is_some_and(is_break) {
            self.write_char('-');
        } else if before_last.is_none() || before_last.is_some_and(is_break) {
            self.write_char('+');
        }
        self.out.push('\n');
        self.column = 0;
        let mut breaks = true;
        for c in text.chars() {
            if is_break(c) {
                self.out.push('\n');
                self.column = 0;
                breaks = true;
            } else {
                if breaks {
                    self.line_continuation(indent);
                }
                self.write_char(c);
                breaks = false;
            }
        }
        // The block's final line break is implied by the chomping indicator.
        if self.out.ends_with('\n') && last.is_some_and(is_break) {
            self.out.pop();
            self.column = 0;
        }
    }
}

/// A float after Helm's JSON round trip: `encoding/json` writes it, go-yaml reads the text
/// back (integral text becomes an integer) and writes it again.
fn float_text(value: f64) -> String {
    let Some(json) = gonum::format_json(value) else {
        return if value.is_nan() {
            ".nan".to_owned()
        } else if value > 0.0 {
            ".inf".to_owned()
        } else {
            "-.inf".to_owned()
        };
    };
    if !json.contains(['.', 'e', 'E']) {
        if let Ok(i) = json.parse::<i64>() {
            return i.to_string();
        }
        if let Ok(u) = json.parse::<u64>() {
            return u.to_string();
        }
    }
    gonum::format_g(value, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_values;

    /// The byte path for ASCII keys orders exactly as the character path.
    #[test]
    fn ascii_keys_order_the_same_as_characters() {
        let alphabet = b"a0b19Z_-.0";
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut key = || {
            let mut k = String::new();
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            for i in 0..(state % 6) {
                k.push(alphabet[((state >> (8 * i)) % alphabet.len() as u64) as usize] as char);
            }
            k
        };
        for _ in 0..5000 {
            let (a, b) = (key(), key());
            let chars = |s: &str| s.chars().collect::<Vec<char>>();
            assert_eq!(
                compare_keys(&a, &b),
                compare_key_chars(&chars(&a), &chars(&b)),
                "{a:?} {b:?}"
            );
        }
    }

    fn yaml(text: &str) -> String {
        to_yaml(&Value::Map(parse_values(text).unwrap()))
    }

    #[test]
    fn key_order_is_go_yaml_natural_order() {
        let mut keys = vec![
            "a10", "a2", "A", "k10", "k2", "a_b", "ab", "a-b", "a.b", "b", "a01", "a1", "a001",
            "x10y", "x9z", "é", "e", "1", "_",
        ];
        keys.sort_by(|a, b| compare_keys(a, b));
        assert_eq!(
            keys,
            [
                "_", "1", "A", "a-b", "a.b", "a_b", "a1", "a01", "a001", "a2", "a10", "ab", "b",
                "e", "k2", "k10", "x9z", "x10y", "é"
            ]
        );
    }

    #[test]
    fn numbers_after_the_json_round_trip() {
        assert_eq!(
            yaml("a: 1000000\nb: 1.5\nc: 123456789.5\nd: 0.0000001\ne: 1e21\nf: -0\n"),
            "a: 1000000\nb: 1.5\nc: 1.234567895e+08\nd: 1e-07\ne: 1e+21\nf: 0\n"
        );
        assert_eq!(
            yaml("big: 12345678901234567890\n"),
            "big: 12345678901234567000\n"
        );
    }

    #[test]
    fn quoting_like_go_yaml() {
        let out = yaml(concat!(
            "amp: '&x'\nat: '@x'\ncolon: 'a: b'\ncomma: a,b\nctrl: \"a\\x01b\"\ndash: '- x'\n",
            "dash2: -x\nempty: ''\nhash: 'a #b'\nlead: ' lead'\nnum: '123'\nq: \"it's\"\n",
            "quest: '?x'\nqsp: '? x'\nsp_nl: \"a \\nb\"\nt: 'true'\ntab: \"a\\tb\"\ntilde: '~'\n",
            "trail: 'trail '\nuni: é\nemoji: \"\\U0001F600\"\nts: '2001-12-14'\n",
        ));
        assert_eq!(
            out,
            concat!(
                "amp: '&x'\nat: '@x'\ncolon: 'a: b'\ncomma: a,b\nctrl: \"a\\x01b\"\ndash: '- x'\n",
                "dash2: -x\nemoji: \"\\U0001F600\"\nempty: \"\"\nhash: 'a #b'\nlead: ' lead'\nnum: \"123\"\nq: it's\n",
                "qsp: '? x'\nquest: ?x\nsp_nl: \"a \\nb\"\nt: \"true\"\ntab: \"a\\tb\"\ntilde: \"~\"\n",
                "trail: 'trail '\nts: \"2001-12-14\"\nuni: é\n",
            )
        );
    }

    #[test]
    fn a_leading_byte_order_mark_escapes_the_whole_string() {
        assert_eq!(yaml("a: \"\\uFEFFx y\""), "a: \"\\uFEFF\\x78\\x20\\x79\"\n");
        assert_eq!(yaml("a: \"x\\uFEFF\""), "a: \"x\\uFEFF\"\n");
    }

    #[test]
    fn literal_blocks_and_chomping() {
        let out = yaml(
            "multi: \"line1\\nline2\\n\"\nmulti2: \"line1\\nline2\"\nmulti3: \"line1\\nline2\\n\\n\"\nnl_lead: \"\\nx\"\nnested: {k: \"a\\n  b\"}\n",
        );
        assert_eq!(
            out,
            "multi: |\n  line1\n  line2\nmulti2: |-\n  line1\n  line2\nmulti3: |+\n  line1\n  line2\n\nnested:\n  k: |-\n    a\n      b\nnl_lead: |2-\n\n  x\n"
        );
    }

    #[test]
    fn collections() {
        assert_eq!(
            yaml(
                "a: [[], {}, '']\nlm: [{a: 1, b: 2}]\nnested: [[1, 2], [3]]\nk: [{a: b, c: [1, 2]}]\n"
            ),
            "a:\n- []\n- {}\n- \"\"\nk:\n- a: b\n  c:\n  - 1\n  - 2\nlm:\n- a: 1\n  b: 2\nnested:\n- - 1\n  - 2\n- - 3\n"
        );
    }

    #[test]
    fn long_lines_fold_after_column_80() {
        let long = "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp qqqq rrrr ssss";
        assert_eq!(
            yaml(&format!("long: \"{long}\"\n")),
            "long: aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp\n  qqqq rrrr ssss\n"
        );
        assert_eq!(
            yaml(&format!("sq: \"'{long}\"\n")),
            "sq: '''aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo\n  pppp qqqq rrrr ssss'\n"
        );
        let tabbed = long.replacen("pppp qqqq", "pppp\tqqqq", 1);
        assert_eq!(
            yaml(&format!("dq: \"{}\"\n", tabbed.replace('\t', "\\t"))),
            "dq: \"aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp\\tqqqq\n  rrrr ssss\"\n"
        );
    }

    #[test]
    fn complex_keys() {
        let long_key = "k".repeat(130);
        let mut map = Map::new();
        map.insert("k\nk".into(), Value::Int(1));
        map.insert(long_key.clone(), Value::Int(2));
        assert_eq!(
            to_yaml(&Value::Map(map)),
            format!("? |-\n  k\n  k\n: 1\n? {long_key}\n: 2\n")
        );
    }

    #[test]
    fn pretty_indents_sequences_and_keeps_go_floats() {
        let mut inner = Map::new();
        inner.insert(
            "l".into(),
            Value::Seq(vec![Value::Int(1), Value::Float(1e6)]),
        );
        inner.insert("s".into(), Value::String("x ".repeat(60)));
        let mut outer = Map::new();
        outer.insert("m".into(), Value::Map(inner));
        let out = to_yaml_pretty(&Value::Map(outer));
        assert_eq!(
            out,
            format!(
                "m:\n  l:\n    - 1\n    - 1e+06\n  s: '{}'\n",
                "x ".repeat(60)
            )
        );
    }

    #[test]
    fn root_scalars() {
        assert_eq!(to_yaml(&Value::from("abc")), "abc\n");
        assert_eq!(to_yaml(&Value::from("a\nb")), "|-\n  a\n  b\n");
        assert_eq!(to_yaml(&Value::Int(1)), "1\n");
        assert_eq!(to_yaml(&Value::Null), "null\n");
        assert_eq!(to_yaml(&Value::Map(Map::new())), "{}\n");
    }
}
