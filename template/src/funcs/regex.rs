//! Sprig's regular-expression functions, on Go's `regexp` as `chartkit-regexp` gives it:
//! Go's syntax, errors, Unicode 15.0 classes, and Go's loops for finding, replacing
//! (`$1`, `${name}` expanded as Go's `Expand` does) and splitting.
//!
//! Sprig calls `regexp.MustCompile` in `regexFind`, `regexFindAll`, `regexReplaceAll`,
//! `regexReplaceAllLiteral` and `regexSplit`, so a bad pattern there is Go's panic text,
//! `regexp: Compile(...): error parsing regexp: ...`; the `must` variants return the
//! error itself, and `regexMatch` is false.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use chartkit_regexp::Regexp;

use super::Registry;
use super::arg::{int, str};
use crate::budget::Meter;
use crate::value::{List, ListKind, Ty, Value};

const S: Ty = Ty::String;
const I: Ty = Ty::Int;

pub(crate) fn register(r: &mut Registry<'_>) {
    r.pure("regexMatch", &[S, S], |a| {
        Ok(Value::Bool(
            compile(str(&a[0])).is_ok_and(|re| re.is_match(str(&a[1]))),
        ))
    });
    r.pure("mustRegexMatch", &[S, S], |a| {
        Ok(Value::Bool(compile(str(&a[0]))?.is_match(str(&a[1]))))
    });
    r.pure("regexFindAll", &[S, S, I], |a| {
        find_all(&*must(str(&a[0]))?, str(&a[1]), int(&a[2]))
    });
    r.pure("mustRegexFindAll", &[S, S, I], |a| {
        find_all(&*compile(str(&a[0]))?, str(&a[1]), int(&a[2]))
    });
    r.pure("regexFind", &[S, S], |a| {
        Ok(Value::str(must(str(&a[0]))?.find(str(&a[1])).unwrap_or("")))
    });
    r.pure("mustRegexFind", &[S, S], |a| {
        Ok(Value::str(
            compile(str(&a[0]))?.find(str(&a[1])).unwrap_or(""),
        ))
    });
    r.pure("regexReplaceAll", &[S, S, S], |a| {
        replace_all(&*must(str(&a[0]))?, str(&a[1]), str(&a[2]), false)
    });
    r.pure("mustRegexReplaceAll", &[S, S, S], |a| {
        replace_all(&*compile(str(&a[0]))?, str(&a[1]), str(&a[2]), false)
    });
    r.pure("regexReplaceAllLiteral", &[S, S, S], |a| {
        replace_all(&*must(str(&a[0]))?, str(&a[1]), str(&a[2]), true)
    });
    r.pure("mustRegexReplaceAllLiteral", &[S, S, S], |a| {
        replace_all(&*compile(str(&a[0]))?, str(&a[1]), str(&a[2]), true)
    });
    r.pure("regexSplit", &[S, S, I], |a| {
        split(&*must(str(&a[0]))?, str(&a[1]), int(&a[2]))
    });
    r.pure("mustRegexSplit", &[S, S, I], |a| {
        split(&*compile(str(&a[0]))?, str(&a[1]), int(&a[2]))
    });
    r.pure("regexQuoteMeta", &[S], |a| {
        Ok(Value::string(chartkit_regexp::quote_meta(str(&a[0]))))
    });
}

thread_local! {
    static CACHE: RefCell<HashMap<String, Result<Rc<Regexp>, String>>> = RefCell::new(HashMap::new());
}

/// `regexp.Compile`, with a per-thread cache: templates call the same patterns for every
/// item. The cache hands out shared handles: the engine's matching caches live in the
/// compiled pattern and would start empty in a copy.
fn compile(pattern: &str) -> Result<Rc<Regexp>, String> {
    CACHE.with(|cache| {
        if let Some(r) = cache.borrow().get(pattern) {
            return r.clone();
        }
        let compiled = Regexp::new(pattern).map(Rc::new).map_err(|e| e.to_string());
        let mut cache = cache.borrow_mut();
        if cache.len() > 1024 {
            cache.clear();
        }
        cache.insert(pattern.to_owned(), compiled.clone());
        compiled
    })
}

/// `regexp.MustCompile`, whose panic Go's template engine reports as the error.
fn must(pattern: &str) -> Result<Rc<Regexp>, String> {
    compile(pattern).map_err(|e| format!("regexp: Compile({}): {e}", go_quote(pattern)))
}

/// The `quote` of Go's regexp package: backquoted when `strconv.CanBackquote` allows,
/// else `strconv.Quote`.
fn go_quote(s: &str) -> String {
    let can_backquote = s
        .chars()
        .all(|c| !matches!(c, '`' | '\u{7F}' | '\u{FEFF}') && (c >= ' ' || c == '\t'));
    if can_backquote {
        format!("`{s}`")
    } else {
        crate::print::quote(s)
    }
}

/// A Go `[]string`; `None` is Go's nil slice.
fn string_list(items: Option<Vec<&str>>) -> Value {
    Value::List(Rc::new(match items {
        Some(items) => List::new(
            ListKind::String,
            items.into_iter().map(Value::str).collect(),
        ),
        None => List::nil(ListKind::String),
    }))
}

/// What a found or split part takes beyond its bytes: its slot and its allocation.
const PART_BYTES: u64 = 48;

/// `ReplaceAllString` or `ReplaceAllLiteralString`. Each match can add the whole
/// replacement, so the result is checked against the budget as it grows.
fn replace_all(re: &Regexp, s: &str, repl: &str, literal: bool) -> Result<Value, String> {
    let meter = Meter::new();
    re.replace_all(s, repl, literal, |out| meter.check(out.len() as u64))
        .map(Value::string)
}

/// `FindAllString(s, n)`: all matches if `n < 0`; nil when there are none.
fn find_all(re: &Regexp, s: &str, n: i64) -> Result<Value, String> {
    let meter = Meter::new();
    let mut size = 0;
    let mut found = Vec::new();
    let mut over = Ok(());
    re.all_matches(s, n, |(start, end)| {
        size += (end - start) as u64 + PART_BYTES;
        over = meter.check(size);
        found.push(&s[start..end]);
        over.is_ok()
    });
    over?;
    Ok(string_list(if found.is_empty() {
        None
    } else {
        Some(found)
    }))
}

/// `Split(s, n)`.
fn split(re: &Regexp, s: &str, n: i64) -> Result<Value, String> {
    let meter = Meter::new();
    let mut size = 0;
    let mut pieces = Vec::new();
    let mut over = Ok(());
    let not_nil = re.split_each(s, n, |piece| {
        size += piece.len() as u64 + PART_BYTES;
        over = meter.check(size);
        pieces.push(piece);
        over.is_ok()
    });
    over?;
    Ok(string_list(not_nil.then_some(pieces)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compile_errors_read_as_go_and_sprig_report_them() {
        assert_eq!(
            compile("(").unwrap_err(),
            "error parsing regexp: missing closing ): `(`"
        );
        assert_eq!(
            must("a**").unwrap_err(),
            "regexp: Compile(`a**`): error parsing regexp: invalid nested repetition operator: `**`"
        );
        assert_eq!(
            must("`(").unwrap_err(),
            "regexp: Compile(\"`(\"): error parsing regexp: missing closing ): ``(`"
        );
    }
}
