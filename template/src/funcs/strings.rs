//! Sprig's string functions. Several of Sprig's helpers work on bytes rather than
//! characters (`trunc`, `substr`, `wrap`, `nospace`, `initials`); that is kept, so
//! multi-byte text comes out as Go's does.

use std::rc::Rc;

use rand::Rng;

use super::Registry;
use super::arg::{bytes, int, str, sub};
use crate::budget;
use crate::gostr::GoBuf;
use crate::print;
use crate::value::{Entries, List, ListKind, MapKind, Ty, Value};

const S: Ty = Ty::String;
const I: Ty = Ty::Int;
const A: Ty = Ty::Any;

pub(crate) fn register(r: &mut Registry<'_>) {
    r.pure("hello", &[], |_| Ok(Value::str("Hello!")));
    r.pure("abbrev", &[I, S], |a| Ok(abbrev(int(&a[0]), &a[1])));
    r.pure("abbrevboth", &[I, I, S], |a| {
        Ok(abbrev_both(int(&a[0]), int(&a[1]), &a[2]))
    });
    r.pure("trunc", &[I, S], |a| Ok(trunc(int(&a[0]), &a[1])));
    r.pure("trim", &[S], |a| {
        Ok(match &a[0] {
            Value::String(s) => Value::str(s.trim()),
            raw => {
                let (start, end) = trim_go_string(bytes(raw), char::is_whitespace);
                sub(raw, start, end)
            }
        })
    });
    r.pure("upper", &[S], |a| Ok(Value::string(go_upper(str(&a[0])))));
    r.pure("lower", &[S], |a| Ok(Value::string(go_lower(str(&a[0])))));
    r.pure("title", &[S], |a| Ok(Value::string(title(str(&a[0])))));
    r.pure("untitle", &[S], |a| Ok(Value::string(untitle(str(&a[0])))));
    r.pure("substr", &[I, I, S], |a| {
        substr(int(&a[0]), int(&a[1]), &a[2])
    });
    r.pure("repeat", &[I, S], |a| match &a[1] {
        Value::String(s) => repeat(int(&a[0]), s).map(Value::string),
        raw => repeat_bytes(int(&a[0]), bytes(raw)).map(Value::from_go_bytes),
    });
    for name in ["trimall", "trimAll"] {
        r.pure(name, &[S, S], |a| {
            Ok(match (&a[0], &a[1]) {
                (Value::String(cutset), Value::String(s)) => Value::str(trim_set(s, cutset)),
                (cutset, raw) => {
                    let cutset = cutset.go_text().unwrap_or_default();
                    let (start, end) = trim_go_string(bytes(raw), |c| cutset.contains(c));
                    sub(raw, start, end)
                }
            })
        });
    }
    r.pure("trimSuffix", &[S, S], |a| {
        let (suffix, s) = (bytes(&a[0]), bytes(&a[1]));
        Ok(match s.strip_suffix(suffix) {
            Some(rest) => sub(&a[1], 0, rest.len()),
            None => a[1].clone(),
        })
    });
    r.pure("trimPrefix", &[S, S], |a| {
        let (prefix, s) = (bytes(&a[0]), bytes(&a[1]));
        Ok(match s.strip_prefix(prefix) {
            Some(_) => sub(&a[1], prefix.len(), s.len()),
            None => a[1].clone(),
        })
    });
    r.pure("nospace", &[S], |a| {
        let text = bytes(&a[0]);
        Ok(if text.iter().any(|&b| latin1_is_space(b)) {
            Value::string(delete_white_space(text))
        } else {
            a[0].clone()
        })
    });
    r.pure("initials", &[S], |a| {
        Ok(Value::string(initials(bytes(&a[0]))))
    });
    r.pure("randAlphaNum", &[I], |a| {
        random_from(int(&a[0]), |c| c.is_ascii_alphanumeric()).map(Value::string)
    });
    r.pure("randAlpha", &[I], |a| {
        random_from(int(&a[0]), |c| c.is_ascii_alphabetic()).map(Value::string)
    });
    r.pure("randNumeric", &[I], |a| {
        random_from(int(&a[0]), |c| c.is_ascii_digit()).map(Value::string)
    });
    r.pure("randAscii", &[I], |a| {
        random_from(int(&a[0]), |c| (' '..='~').contains(&c)).map(Value::string)
    });
    r.pure("swapcase", &[S], |a| {
        Ok(Value::string(swap_case(str(&a[0]))))
    });
    r.pure("shuffle", &[S], |a| Ok(Value::string(shuffle(str(&a[0])))));
    r.pure("snakecase", &[S], |a| {
        Ok(Value::string(camel_to_lower(str(&a[0]), '_')))
    });
    r.pure("kebabcase", &[S], |a| {
        Ok(Value::string(camel_to_lower(str(&a[0]), '-')))
    });
    r.pure("camelcase", &[S], |a| {
        Ok(Value::string(to_camel_case(str(&a[0]))))
    });
    r.pure("wrap", &[I, S], |a| {
        Ok(wrap(bytes(&a[1]), int(&a[0]), b"\n", false))
    });
    r.pure("wrapWith", &[I, S, S], |a| {
        let sep = if bytes(&a[1]).is_empty() {
            b"\n"
        } else {
            bytes(&a[1])
        };
        let (s, width) = (bytes(&a[2]), int(&a[0]).max(1) as u64);
        // A break every `width` bytes at most, each adding the separator.
        let breaks = s.len() as u64 / width + 1;
        budget::reserve(s.len() as u64 + breaks.saturating_mul(sep.len() as u64))?;
        Ok(wrap(s, int(&a[0]), sep, true))
    });
    r.pure("contains", &[S, S], |a| {
        Ok(Value::Bool(
            memchr::memmem::find(bytes(&a[1]), bytes(&a[0])).is_some(),
        ))
    });
    r.pure("hasPrefix", &[S, S], |a| {
        Ok(Value::Bool(bytes(&a[1]).starts_with(bytes(&a[0]))))
    });
    r.pure("hasSuffix", &[S, S], |a| {
        Ok(Value::Bool(bytes(&a[1]).ends_with(bytes(&a[0]))))
    });
    r.variadic("quote", &[], A, |a| {
        budget::check_args(a)?;
        let parts: Vec<String> = a
            .iter()
            .filter(|v| !v.is_nil())
            .map(|v| match strval(v) {
                Value::String(s) => print::quote(&s),
                raw => print::quote_bytes(bytes(&raw)),
            })
            .collect();
        Ok(Value::string(parts.join(" ")))
    });
    r.variadic("squote", &[], A, |a| {
        budget::check_args(a)?;
        let mut out = GoBuf::new();
        for (i, v) in a.iter().filter(|v| !v.is_nil()).enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push('\'');
            out.push_go_str(&print::sprint_value(v));
            out.push('\'');
        }
        Ok(out.into_value())
    });
    r.variadic("cat", &[], A, |a| {
        budget::check_args(a)?;
        let mut out = GoBuf::new();
        for (i, v) in a.iter().filter(|v| !v.is_nil()).enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push_go_str(&print::sprint_value(v));
        }
        Ok(out.into_value())
    });
    r.pure("indent", &[I, S], |a| indent(int(&a[0]), &a[1], ""));
    r.pure("nindent", &[I, S], |a| indent(int(&a[0]), &a[1], "\n"));
    r.pure("replace", &[S, S, S], |a| match (&a[2], &a[0], &a[1]) {
        (Value::String(s), Value::String(old), Value::String(new)) => {
            replace(s, old, new).map(Value::string)
        }
        (s, old, new) => replace_bytes(bytes(s), bytes(old), bytes(new)).map(Value::from_go_bytes),
    });
    r.pure("plural", &[S, S, I], |a| {
        Ok(if int(&a[2]) == 1 {
            a[0].clone()
        } else {
            a[1].clone()
        })
    });
    r.pure("toString", &[A], |a| {
        budget::check_args(a)?;
        Ok(strval(&a[0]))
    });
    r.pure("split", &[S, S], |a| {
        reserve_parts(bytes(&a[1]), bytes(&a[0]), -1)?;
        Ok(indexed_parts(go_split_value(&a[1], bytes(&a[0]), -1)))
    });
    r.pure("splitn", &[S, I, S], |a| {
        reserve_parts(bytes(&a[2]), bytes(&a[0]), int(&a[1]))?;
        Ok(indexed_parts(go_split_value(
            &a[2],
            bytes(&a[0]),
            int(&a[1]),
        )))
    });
    r.pure("splitList", &[S, S], |a| {
        reserve_parts(bytes(&a[1]), bytes(&a[0]), -1)?;
        Ok(Value::List(Rc::new(List::new(
            ListKind::String,
            go_split_value(&a[1], bytes(&a[0]), -1),
        ))))
    });
    r.pure("toStrings", &[A], |a| {
        budget::check_args(a)?;
        Ok(string_list(strslice(&a[0])))
    });
    r.pure("join", &[S, A], |a| join(&a[1], &a[0]));
    r.pure("sortAlpha", &[A], |a| {
        budget::check_args(a)?;
        let mut items = match a[0].plain() {
            Value::List(_) | Value::Bytes(_) => strslice(&a[0]),
            other => vec![strval(&other)],
        };
        items.sort_by(|x, y| bytes(x).cmp(bytes(y)));
        Ok(string_list(items))
    });
}

fn string_list(items: Vec<Value>) -> Value {
    Value::List(Rc::new(List::new(ListKind::String, items)))
}

/// Sprig's `strval`: strings as they are, byte slices as a string of their bytes,
/// objects through their `String` method, anything else as `%v` prints it. A Go string:
/// bytes that are not UTF-8 are kept.
pub(crate) fn strval(v: &Value) -> Value {
    match v {
        Value::String(_) | Value::RawStr(_) => v.clone(),
        Value::Bytes(b) => Value::from_go_slice(b),
        other => print::sprint_value(other),
    }
}

/// [`strval`] as text, for map keys.
pub(crate) fn strval_text(v: &Value) -> String {
    match strval(v) {
        Value::String(s) => s.to_string(),
        other => other.go_text().unwrap_or_default().into_owned(),
    }
}

/// Sprig's `strslice`: a list of strings from any slice, dropping nils.
pub(crate) fn strslice(v: &Value) -> Vec<Value> {
    match v.plain() {
        Value::List(l) => l
            .iter()
            .filter(|i| !i.is_nil())
            .map(|i| strval(&i))
            .collect(),
        Value::Bytes(b) => b.iter().map(|b| Value::string(b.to_string())).collect(),
        Value::Nil => Vec::new(),
        other => vec![strval(&other)],
    }
}

fn indexed_parts(parts: Vec<Value>) -> Value {
    let mut entries = Entries::new();
    for (i, p) in parts.into_iter().enumerate() {
        entries.insert(Rc::from(format!("_{i}")), p);
    }
    Value::map_of(MapKind::String, entries)
}

/// `strings.SplitN` of a Go string, its parts as string values.
fn go_split_value(s: &Value, sep: &[u8], n: i64) -> Vec<Value> {
    match (s, std::str::from_utf8(sep)) {
        (Value::String(text), Ok(sep)) => go_split(text, sep, n)
            .into_iter()
            .map(Value::string)
            .collect(),
        _ => go_split_bytes(bytes(s), sep, n)
            .into_iter()
            .map(Value::from_go_slice)
            .collect(),
    }
}

/// `strings.SplitN` on bytes: with an empty separator, the parts are Go's characters
/// (each byte that is not UTF-8 one of them).
fn go_split_bytes<'a>(s: &'a [u8], sep: &[u8], n: i64) -> Vec<&'a [u8]> {
    if n == 0 {
        return Vec::new();
    }
    let limit = if n < 0 { usize::MAX } else { n as usize };
    let mut parts = Vec::new();
    if sep.is_empty() {
        let mut at = 0;
        for width in go_char_widths(s) {
            if parts.len() + 1 == limit {
                break;
            }
            parts.push(&s[at..at + width]);
            at += width;
        }
        if at < s.len() {
            parts.push(&s[at..]);
        }
        return parts;
    }
    let mut last = 0;
    for at in memchr::memmem::find_iter(s, sep) {
        if parts.len() + 1 == limit {
            break;
        }
        if at < last {
            continue;
        }
        parts.push(&s[last..at]);
        last = at + sep.len();
    }
    parts.push(&s[last..]);
    parts
}

/// The byte lengths of a Go string's characters, each byte that is not UTF-8 one.
fn go_char_widths(s: &[u8]) -> impl Iterator<Item = usize> + '_ {
    s.utf8_chunks().flat_map(|chunk| {
        chunk
            .valid()
            .chars()
            .map(char::len_utf8)
            .chain(chunk.invalid().iter().map(|_| 1))
    })
}

/// The part of a Go string left by `strings.TrimFunc`: characters for which `cut` holds
/// are removed from both ends; a byte that is not UTF-8 (U+FFFD to Go) is cut only if
/// `cut('\u{FFFD}')`.
fn trim_go_string(s: &[u8], cut: impl Fn(char) -> bool) -> (usize, usize) {
    let mut chars: Vec<(usize, usize, char)> = Vec::new();
    let mut at = 0;
    for chunk in s.utf8_chunks() {
        for c in chunk.valid().chars() {
            chars.push((at, c.len_utf8(), c));
            at += c.len_utf8();
        }
        for _ in chunk.invalid() {
            chars.push((at, 1, char::REPLACEMENT_CHARACTER));
            at += 1;
        }
    }
    let first = chars.iter().position(|&(_, _, c)| !cut(c));
    let Some(first) = first else {
        return (0, 0);
    };
    let last = chars
        .iter()
        .rposition(|&(_, _, c)| !cut(c))
        .unwrap_or(first);
    (chars[first].0, chars[last].0 + chars[last].1)
}

/// `strings.SplitN` (`n < 0`: all parts, `n == 0`: none).
pub(crate) fn go_split(s: &str, sep: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if sep.is_empty() {
        let chars: Vec<String> = s.chars().map(String::from).collect();
        if n > 0 && chars.len() > n as usize {
            let mut head: Vec<String> = chars[..n as usize - 1].to_vec();
            let consumed: usize = head.iter().map(String::len).sum();
            head.push(s[consumed..].to_owned());
            return head;
        }
        return chars;
    }
    if n < 0 {
        s.split(sep).map(str::to_owned).collect()
    } else {
        s.splitn(n as usize, sep).map(str::to_owned).collect()
    }
}

fn trim_set<'a>(s: &'a str, cutset: &str) -> &'a str {
    s.trim_matches(|c| cutset.contains(c))
}

/// `strings.Repeat`, failing where Go panics (negative counts, lengths past `int`,
/// slices past Go's largest allocation) and then where the result would not fit in the
/// render's memory budget, before anything is allocated.
pub(crate) fn repeat(count: i64, s: &str) -> Result<String, String> {
    match count {
        0 => return Ok(String::new()),
        1 => return Ok(s.to_owned()),
        _ if count < 0 => return Err("strings: negative Repeat count".into()),
        _ => {}
    }
    let total = (s.len() as u64)
        .checked_mul(count as u64)
        .filter(|&n| n <= i64::MAX as u64)
        .ok_or("strings: Repeat output length overflow")?;
    // Go returns an empty `s` as it is, without allocating.
    if total > 0 {
        budget::go_make(Some(total))?;
    }
    Ok(s.repeat(count as usize))
}

/// [`repeat`] of bytes.
fn repeat_bytes(count: i64, s: &[u8]) -> Result<Vec<u8>, String> {
    if count > 1 {
        // The same checks, on a text of the same length.
        let total = (s.len() as u64).checked_mul(count as u64);
        if total.is_none_or(|n| n > i64::MAX as u64) {
            return Err("strings: Repeat output length overflow".into());
        }
        budget::go_make(total)?;
    } else if count < 0 {
        return Err("strings: negative Repeat count".into());
    }
    Ok(s.repeat(count as usize))
}

/// Sprig's `indent` (`lead` "") and `nindent` (`lead` "\n"): `lead`, then the text with
/// `spaces` spaces before every line. The padding is `strings.Repeat`, so a negative
/// width fails as it does in Go; the size of the result is checked before it is built.
fn indent(spaces: i64, v: &Value, lead: &str) -> Result<Value, String> {
    let s = bytes(v);
    let pad = repeat(spaces, " ")?;
    let lines = memchr::memchr_iter(b'\n', s).count() as u64 + 1;
    let total = lines
        .checked_mul(pad.len() as u64)
        .and_then(|n| n.checked_add((s.len() + lead.len()) as u64));
    budget::go_make(total)?;
    let mut out = Vec::with_capacity(total.unwrap_or(0) as usize);
    out.extend_from_slice(lead.as_bytes());
    out.extend_from_slice(pad.as_bytes());
    for (i, line) in s.split(|&b| b == b'\n').enumerate() {
        if i > 0 {
            out.push(b'\n');
            out.extend_from_slice(pad.as_bytes());
        }
        out.extend_from_slice(line);
    }
    // Padding text keeps text text.
    Ok(match v {
        Value::String(_) => String::from_utf8(out)
            .map(Value::string)
            .unwrap_or_else(|e| Value::from_go_bytes(e.into_bytes())),
        _ => Value::from_go_bytes(out),
    })
}

/// `strings.Replace(s, old, new, -1)`. When the text grows, the number of replacements
/// is counted first, as Go does to size its buffer, and the size checked against the
/// budget.
fn replace(s: &str, old: &str, new: &str) -> Result<String, String> {
    if new.len() > old.len() {
        let count = if old.is_empty() {
            s.chars().count() + 1
        } else {
            s.matches(old).count()
        } as u64;
        let total = count
            .checked_mul((new.len() - old.len()) as u64)
            .and_then(|n| n.checked_add(s.len() as u64));
        budget::go_make(total)?;
    }
    Ok(s.replace(old, new))
}

/// [`replace`] of bytes: with an empty `old`, `new` goes before each Go character (a
/// byte that is not UTF-8 is one) and at the end.
fn replace_bytes(s: &[u8], old: &[u8], new: &[u8]) -> Result<Vec<u8>, String> {
    let matches: Vec<usize> = if old.is_empty() {
        let mut at = 0;
        let mut positions = vec![0];
        for width in go_char_widths(s) {
            at += width;
            positions.push(at);
        }
        positions
    } else {
        let mut positions = Vec::new();
        let mut next = 0;
        for at in memchr::memmem::find_iter(s, old) {
            if at >= next {
                positions.push(at);
                next = at + old.len();
            }
        }
        positions
    };
    if new.len() > old.len() {
        let total = (matches.len() as u64)
            .checked_mul((new.len() - old.len()) as u64)
            .and_then(|n| n.checked_add(s.len() as u64));
        budget::go_make(total)?;
    }
    let mut out = Vec::with_capacity(s.len());
    let mut last = 0;
    for at in matches {
        out.extend_from_slice(&s[last..at]);
        out.extend_from_slice(new);
        last = at + old.len();
    }
    out.extend_from_slice(&s[last.min(s.len())..]);
    Ok(out)
}

/// What one part of a split string takes beyond its bytes: its slot in the list or map
/// and its own allocation.
const PART_BYTES: u64 = 48;

/// Checks that splitting `s` at `sep` (into at most `n` parts when `n` > 0) fits the
/// budget. Splitting a long string into single bytes multiplies its size by the cost of
/// a part, so the parts are counted before they are made.
fn reserve_parts(s: &[u8], sep: &[u8], n: i64) -> Result<(), String> {
    // Small texts cannot split into anything large.
    if (s.len() as u64) < 4096 {
        return Ok(());
    }
    let mut parts = if sep.is_empty() {
        go_char_widths(s).count() as u64
    } else {
        memchr::memmem::find_iter(s, sep).count() as u64 + 1
    };
    if n > 0 {
        parts = parts.min(n as u64);
    }
    budget::reserve(parts * PART_BYTES + s.len() as u64)
}

/// Sprig's `join`: the list's elements as strings (`strslice`), joined by `sep`. The
/// elements can repeat one large value, so the printed list is checked first, then the
/// joined length, which Go computes (and checks for overflow) before it allocates.
fn join(list: &Value, sep: &Value) -> Result<Value, String> {
    let sep = bytes(sep);
    budget::check_args(std::slice::from_ref(list))?;
    if let Value::List(l) = list.plain() {
        budget::reserve((l.len().saturating_sub(1) as u64).saturating_mul(sep.len() as u64))?;
    }
    let parts = strslice(list);
    let separators = (parts.len().saturating_sub(1) as u64)
        .checked_mul(sep.len() as u64)
        .filter(|&n| n <= i64::MAX as u64);
    let total = separators.and_then(|separators| {
        parts.iter().try_fold(separators, |total, part| {
            total
                .checked_add(bytes(part).len() as u64)
                .filter(|&n| n <= i64::MAX as u64)
        })
    });
    let Some(total) = total else {
        return Err("strings: Join output length overflow".into());
    };
    budget::go_make(Some(total))?;
    let mut out = GoBuf::with_capacity(total as usize);
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push_bytes(sep);
        }
        out.push_go_str(part);
    }
    Ok(out.into_value())
}

/// Go's `unicode.ToUpper` maps one character to one; where Unicode upper-cases to
/// several (ß), Go leaves the character alone.
pub(crate) fn char_upper(c: char) -> char {
    let mut up = c.to_uppercase();
    match (up.next(), up.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

pub(crate) fn char_lower(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

pub(crate) fn go_upper(s: &str) -> String {
    s.chars().map(char_upper).collect()
}

pub(crate) fn go_lower(s: &str) -> String {
    s.chars().map(char_lower).collect()
}

fn is_go_upper(c: char) -> bool {
    c.is_uppercase() && char_lower(c) != c
}

fn is_go_lower(c: char) -> bool {
    c.is_lowercase() && char_upper(c) != c
}

fn is_title_case(c: char) -> bool {
    matches!(c as u32, 0x01C5 | 0x01C8 | 0x01CB | 0x01F2 | 0x1F88..=0x1F8F | 0x1F98..=0x1F9F | 0x1FA8..=0x1FAF | 0x1FBC | 0x1FCC | 0x1FFC)
}

fn to_title(c: char) -> char {
    match c as u32 {
        0x01C4..=0x01C6 => '\u{01C5}',
        0x01C7..=0x01C9 => '\u{01C8}',
        0x01CA..=0x01CC => '\u{01CB}',
        0x01F1..=0x01F3 => '\u{01F2}',
        _ => char_upper(c),
    }
}

/// `strings.Title`: upper-cases the first letter of each word.
fn title(s: &str) -> String {
    let is_separator = |c: char| {
        if c.is_ascii() {
            !(c.is_ascii_alphanumeric() || c == '_')
        } else if c.is_alphabetic() || c.is_numeric() {
            false
        } else {
            c.is_whitespace()
        }
    };
    let mut prev = ' ';
    s.chars()
        .map(|c| {
            let out = if is_separator(prev) { to_title(c) } else { c };
            prev = c;
            out
        })
        .collect()
}

fn untitle(s: &str) -> String {
    let mut next = true;
    s.chars()
        .map(|c| {
            if c.is_whitespace() {
                next = true;
                c
            } else if next {
                next = false;
                char_lower(c)
            } else {
                c
            }
        })
        .collect()
}

fn swap_case(s: &str) -> String {
    let mut whitespace = true;
    s.chars()
        .map(|c| {
            if is_go_upper(c) || is_title_case(c) {
                whitespace = false;
                char_lower(c)
            } else if is_go_lower(c) {
                if whitespace {
                    whitespace = false;
                    to_title(c)
                } else {
                    char_upper(c)
                }
            } else {
                whitespace = c.is_whitespace();
                c
            }
        })
        .collect()
}

/// Byte-wise helpers of goutils treat every byte as the character with that code.
fn latin1_is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ' | 0x85 | 0xA0)
}

/// goutils' `DeleteWhiteSpace` once it has found a space: each remaining byte is written
/// as the Latin-1 character it would be, so multi-byte text is re-encoded (Go does the
/// same; with no space at all it returns the string untouched).
fn delete_white_space(s: &[u8]) -> String {
    s.iter()
        .filter(|b| !latin1_is_space(**b))
        .map(|&b| b as char)
        .collect()
}

fn initials(s: &[u8]) -> String {
    let mut out = String::new();
    let mut gap = true;
    for &b in s {
        if latin1_is_space(b) {
            gap = true;
        } else if gap {
            out.push(b as char);
            gap = false;
        }
    }
    out
}

/// Sprig's `trunc`: the first `c` bytes, or the last `-c`, cut as Go cuts strings.
fn trunc(c: i64, s: &Value) -> Value {
    let len = bytes(s).len() as i64;
    if c < 0 && len + c > 0 {
        return sub(s, (len + c) as usize, len as usize);
    }
    if c >= 0 && len > c {
        return sub(s, 0, c as usize);
    }
    s.clone()
}

fn out_of_range(lo: i64, hi: i64, len: usize) -> String {
    if hi > len as i64 || hi < 0 {
        format!("runtime error: slice bounds out of range [:{hi}] with length {len}")
    } else {
        format!("runtime error: slice bounds out of range [{lo}:{hi}]")
    }
}

fn substr(start: i64, end: i64, s: &Value) -> Result<Value, String> {
    let b = bytes(s);
    let len = b.len() as i64;
    let (lo, hi) = if start < 0 {
        (0, end)
    } else if end < 0 || end > len {
        (start, len)
    } else {
        (start, end)
    };
    if hi < 0 || hi > len {
        return Err(out_of_range(lo, hi, b.len()));
    }
    if lo > hi {
        return Err(out_of_range(lo, hi, b.len()));
    }
    Ok(sub(s, lo as usize, hi as usize))
}

/// goutils `AbbreviateFull`, errors becoming the empty string as Sprig ignores them.
/// It cuts bytes, as Go strings are cut.
fn abbreviate_full(b: &[u8], mut offset: i64, max_width: i64) -> Vec<u8> {
    let len = b.len() as i64;
    if b.is_empty() || max_width < 4 {
        return Vec::new();
    }
    if len <= max_width {
        return b.to_vec();
    }
    if offset > len {
        offset = len;
    }
    if len - offset < max_width - 3 {
        offset = len - (max_width - 3);
    }
    let ellipsis = b"...";
    if offset <= 4 {
        return [&b[..(max_width - 3) as usize], ellipsis].concat();
    }
    if max_width < 7 {
        return Vec::new();
    }
    if offset + max_width - 3 < len {
        let rest = abbreviate_full(&b[offset as usize..], 0, max_width - 3);
        return [ellipsis.as_slice(), &rest].concat();
    }
    [ellipsis.as_slice(), &b[(len - (max_width - 3)) as usize..]].concat()
}

fn abbrev(width: i64, s: &Value) -> Value {
    if width < 4 {
        return s.clone();
    }
    Value::from_go_bytes(abbreviate_full(bytes(s), 0, width))
}

fn abbrev_both(left: i64, right: i64, s: &Value) -> Value {
    if right < 4 || (left > 0 && right < 7) {
        return s.clone();
    }
    Value::from_go_bytes(abbreviate_full(bytes(s), left, right))
}

/// goutils `WrapCustom`, which measures in bytes and breaks only at spaces.
fn wrap(b: &[u8], width: i64, newline: &[u8], wrap_long: bool) -> Value {
    if b.is_empty() {
        return Value::str("");
    }
    let width = width.max(1) as usize;
    let len = b.len();
    let mut offset = 0usize;
    let mut out: Vec<u8> = Vec::with_capacity(len + 8);
    while len - offset > width {
        if b[offset] == b' ' {
            offset += 1;
            continue;
        }
        let end = (width + offset + 1).min(len);
        let space = b[offset..end].iter().rposition(|&c| c == b' ');
        if let Some(sp) = space {
            let at = sp + offset;
            out.extend_from_slice(&b[offset..at]);
            out.extend_from_slice(newline);
            offset = at + 1;
        } else if wrap_long {
            let end = width + offset;
            out.extend_from_slice(&b[offset..end]);
            out.extend_from_slice(newline);
            offset += width;
        } else {
            let end = width + offset;
            match b[end..].iter().position(|&c| c == b' ') {
                Some(i) => {
                    let at = i + end;
                    out.extend_from_slice(&b[offset..at]);
                    out.extend_from_slice(newline);
                    offset = at + 1;
                }
                None => {
                    out.extend_from_slice(&b[offset..]);
                    offset = len;
                }
            }
        }
    }
    out.extend_from_slice(&b[offset..]);
    Value::from_go_bytes(out)
}

/// goutils' random strings. Sprig drops goutils' error for a negative count, which
/// gives "". goutils first makes a `[]rune` of `count` (four bytes each), which Go
/// refuses beyond its largest allocation; the string itself takes `count` bytes.
fn random_from(count: i64, keep: fn(char) -> bool) -> Result<String, String> {
    if count <= 0 {
        return Ok(String::new());
    }
    budget::go_make_len((count as u64).checked_mul(4))?;
    budget::reserve(count as u64)?;
    let alphabet: Vec<char> = (' '..='~').filter(|c| keep(*c)).collect();
    let mut rng = rand::thread_rng();
    Ok((0..count)
        .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
        .collect())
}

fn shuffle(s: &str) -> String {
    let mut chars: Vec<char> = s.chars().collect();
    let mut rng = rand::thread_rng();
    for i in (1..chars.len()).rev() {
        let j = rng.gen_range(0..=i);
        chars.swap(i, j);
    }
    chars.into_iter().collect()
}

fn is_connector(c: char) -> bool {
    c == '-' || c == '_' || c.is_whitespace()
}

/// xstrings' notion of an alphabet letter: letters other than CJK ideographs.
fn is_alphabet(c: char) -> bool {
    if !c.is_alphabetic() || c.is_numeric() {
        return false;
    }
    let cp = c as u32;
    if cp < 0x3400 {
        return true;
    }
    !((0x4E00..=0x9FCC).contains(&cp)
        || (0x3400..=0x4D85).contains(&cp)
        || (0x20000..=0x2B81D).contains(&cp))
}

fn is_punct(c: char) -> bool {
    c.is_ascii_punctuation() && !matches!(c, '$' | '+' | '<' | '=' | '>' | '^' | '`' | '|' | '~')
        || (!c.is_ascii()
            && !c.is_alphanumeric()
            && !c.is_whitespace()
            && !c.is_control()
            && matches!(c as u32, 0x2010..=0x2027 | 0x3001..=0x3003 | 0xFF01..=0xFF0F))
}

fn to_camel_case(s: &str) -> String {
    if s.is_empty() {
        return String::new();
    }
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut r0 = '\0';
    let mut first_upper = false;
    let mut found = false;
    while i < chars.len() {
        r0 = chars[i];
        i += 1;
        if !is_connector(r0) {
            first_upper = is_go_upper(r0);
            // Sprig's xstrings version upper-cases the first letter (Pascal case).
            r0 = char_upper(r0);
            found = true;
            break;
        }
        out.push(r0);
    }
    if i >= chars.len() {
        if found {
            out.push(r0);
        }
        return out;
    }
    while i < chars.len() {
        let r1 = r0;
        r0 = chars[i];
        i += 1;
        if is_connector(r0) && is_connector(r1) {
            out.push(r1);
            continue;
        }
        if is_connector(r1) {
            first_upper = is_go_upper(r0);
            r0 = char_upper(r0);
        } else {
            if first_upper {
                if is_go_upper(r0) {
                    r0 = char_lower(r0);
                } else {
                    first_upper = false;
                }
            }
            out.push(r1);
        }
    }
    out.push(r0);
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Word {
    Invalid,
    Number,
    Upper,
    Alphabet,
    Connector,
    Punct,
    Other,
}

/// Splits off the next word, as xstrings does for snake and kebab case.
fn next_word(s: &str) -> (Word, &str, &str) {
    let mut chars = s.char_indices().peekable();
    let Some((_, first)) = chars.next() else {
        return (Word::Invalid, "", "");
    };
    let end_of = |pred: &dyn Fn(char) -> bool, from: usize| -> usize {
        let mut end = from;
        for (i, c) in s[from..].char_indices() {
            if !pred(c) {
                return from + i;
            }
            end = from + i + c.len_utf8();
        }
        end
    };
    let start_next = first.len_utf8();
    let (kind, end) = if is_connector(first) {
        (Word::Connector, end_of(&is_connector, start_next))
    } else if is_punct(first) {
        (Word::Punct, end_of(&is_punct, start_next))
    } else if is_go_upper(first) {
        match s[start_next..].chars().next() {
            None => (Word::Upper, start_next),
            Some(c) if is_go_upper(c) => {
                let end = end_of(&is_go_upper, start_next);
                // "HTTPStatus" splits as "HTTP" + "Status".
                match s[end..].chars().next() {
                    Some(n) if is_alphabet(n) => {
                        let last = s[..end].chars().next_back().map_or(0, char::len_utf8);
                        (Word::Upper, end - last)
                    }
                    _ => (Word::Upper, end),
                }
            }
            Some(c) if is_alphabet(c) => (
                Word::Upper,
                end_of(&|c| is_alphabet(c) && !is_go_upper(c), start_next),
            ),
            Some(_) => (Word::Upper, start_next),
        }
    } else if is_alphabet(first) {
        (
            Word::Alphabet,
            end_of(&|c| is_alphabet(c) && !is_go_upper(c), start_next),
        )
    } else if first.is_numeric() {
        (Word::Number, end_of(&|c: char| c.is_numeric(), start_next))
    } else {
        (
            Word::Other,
            end_of(
                &|c| !(is_connector(c) || is_alphabet(c) || c.is_numeric() || is_punct(c)),
                start_next,
            ),
        )
    };
    (kind, &s[..end], &s[end..])
}

fn push_lower(out: &mut String, kind: Word, word: &str, connector: char) {
    if kind != Word::Upper && kind != Word::Connector {
        out.push_str(word);
        return;
    }
    for c in word.chars() {
        if is_connector(c) {
            out.push(connector);
        } else if is_go_upper(c) {
            out.push(char_lower(c));
        } else {
            out.push(c);
        }
    }
}

/// xstrings' `ToSnakeCase`/`ToKebabCase`.
fn camel_to_lower(s: &str, connector: char) -> String {
    if s.is_empty() {
        return String::new();
    }
    let mut out = String::with_capacity(s.len() + 4);
    let (mut wt, mut word, mut remaining) = next_word(s);
    while !remaining.is_empty() {
        if wt != Word::Connector {
            push_lower(&mut out, wt, word, connector);
        }
        let prev = wt;
        let last = word;
        (wt, word, remaining) = next_word(remaining);
        match prev {
            Word::Number => {
                while wt == Word::Alphabet || wt == Word::Number {
                    push_lower(&mut out, wt, word, connector);
                    (wt, word, remaining) = next_word(remaining);
                }
                if wt != Word::Invalid && wt != Word::Punct && wt != Word::Connector {
                    out.push(connector);
                }
            }
            Word::Connector => push_lower(&mut out, prev, last, connector),
            Word::Punct => {}
            _ => {
                if wt != Word::Number {
                    if wt != Word::Connector && wt != Word::Punct {
                        out.push(connector);
                    }
                    continue;
                }
                if remaining.is_empty() {
                    continue;
                }
                let last = word;
                (wt, word, remaining) = next_word(remaining);
                if wt != Word::Alphabet {
                    push_lower(&mut out, Word::Number, last, connector);
                    if wt != Word::Connector && wt != Word::Punct {
                        out.push(connector);
                    }
                    continue;
                }
                out.push(connector);
                push_lower(&mut out, Word::Number, last, connector);
                while wt == Word::Alphabet || wt == Word::Number {
                    push_lower(&mut out, wt, word, connector);
                    (wt, word, remaining) = next_word(remaining);
                }
                if wt != Word::Invalid && wt != Word::Connector && wt != Word::Punct {
                    out.push(connector);
                }
            }
        }
    }
    push_lower(&mut out, wt, word, connector);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_conversions_match_xstrings() {
        let snake = [
            ("FirstName", "first_name"),
            ("HTTPServer", "http_server"),
            ("NoHTTPS", "no_https"),
            ("GO_PATH", "go_path"),
            ("GO PATH", "go_path"),
            ("GO-PATH", "go_path"),
            ("http2xx", "http_2xx"),
            ("HTTP20xOK", "http_20x_ok"),
            ("Duration2m3s", "duration_2m3s"),
            ("Bld4Floor3rd", "bld4_floor_3rd"),
        ];
        for (input, want) in snake {
            assert_eq!(camel_to_lower(input, '_'), want, "{input}");
        }
        let camel = [
            ("some_words", "SomeWords"),
            ("http_server", "HttpServer"),
            ("no_https", "NoHttps"),
            ("_complex__case_", "_Complex_Case_"),
            ("some words", "SomeWords"),
            ("GOLANG_IS_GREAT", "GolangIsGreat"),
            ("a", "A"),
            ("ab_", "Ab_"),
        ];
        for (input, want) in camel {
            assert_eq!(to_camel_case(input), want, "{input}");
        }
    }

    #[test]
    fn wrap_breaks_at_spaces() {
        assert_eq!(
            wrap(b"Lorem ipsum dolor sit amet", 10, b"\n", false),
            Value::str("Lorem\nipsum\ndolor sit\namet")
        );
        assert_eq!(
            wrap(b"abcdefghij klm", 4, b"\n", true),
            Value::str("abcd\nefgh\nij\nklm")
        );
    }

    #[test]
    fn abbreviations() {
        assert_eq!(abbrev(5, &Value::str("hello world")), Value::str("he..."));
        assert_eq!(
            abbrev_both(5, 10, &Value::str("1234 5678 9123")),
            Value::str("...5678...")
        );
        // Bytes are cut as Go cuts them, through a character if need be.
        assert_eq!(
            abbrev(5, &Value::str("héllo")),
            Value::from_go_slice(b"h\xc3...")
        );
    }
}
