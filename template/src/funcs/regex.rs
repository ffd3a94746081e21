//! Sprig's regular-expression functions.
//!
//! Go uses RE2 syntax, which Rust's `regex` crate shares almost entirely. The
//! difference that matters for charts is that Go's `\d`, `\w`, `\s` and `\b` are
//! ASCII-only while Rust's are Unicode-aware; patterns are rewritten to Go's ASCII
//! classes before compiling. Remaining differences: compile errors are worded by the
//! Rust crate, and a few exotic constructs Go rejects (e.g. `\pN` spelled differently)
//! or accepts (`\C`) are not reproduced.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use regex::Regex;

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
        Ok(Value::Bool(compile_err(str(&a[0]))?.is_match(str(&a[1]))))
    });
    r.pure("regexFindAll", &[S, S, I], |a| {
        find_all(&*must(str(&a[0]))?, str(&a[1]), int(&a[2]))
    });
    r.pure("mustRegexFindAll", &[S, S, I], |a| {
        find_all(&*compile_err(str(&a[0]))?, str(&a[1]), int(&a[2]))
    });
    r.pure("regexFind", &[S, S], |a| {
        Ok(Value::str(
            must(str(&a[0]))?
                .find(str(&a[1]))
                .map_or("", |m| m.as_str()),
        ))
    });
    r.pure("mustRegexFind", &[S, S], |a| {
        Ok(Value::str(
            compile_err(str(&a[0]))?
                .find(str(&a[1]))
                .map_or("", |m| m.as_str()),
        ))
    });
    r.pure("regexReplaceAll", &[S, S, S], |a| {
        replace_all(&*must(str(&a[0]))?, str(&a[1]), str(&a[2]), false).map(Value::string)
    });
    r.pure("mustRegexReplaceAll", &[S, S, S], |a| {
        replace_all(&*compile_err(str(&a[0]))?, str(&a[1]), str(&a[2]), false).map(Value::string)
    });
    r.pure("regexReplaceAllLiteral", &[S, S, S], |a| {
        replace_all(&*must(str(&a[0]))?, str(&a[1]), str(&a[2]), true).map(Value::string)
    });
    r.pure("mustRegexReplaceAllLiteral", &[S, S, S], |a| {
        replace_all(&*compile_err(str(&a[0]))?, str(&a[1]), str(&a[2]), true).map(Value::string)
    });
    r.pure("regexSplit", &[S, S, I], |a| {
        split(&*must(str(&a[0]))?, str(&a[1]), int(&a[2]))
    });
    r.pure("mustRegexSplit", &[S, S, I], |a| {
        split(&*compile_err(str(&a[0]))?, str(&a[1]), int(&a[2]))
    });
    r.pure("regexQuoteMeta", &[S], |a| {
        Ok(Value::string(quote_meta(str(&a[0]))))
    });
}

thread_local! {
    static CACHE: RefCell<HashMap<String, Result<Rc<Regex>, String>>> = RefCell::new(HashMap::new());
}

/// Compiles with a per-thread cache: templates call the same patterns for every item.
/// The cache hands out shared handles, not clones: a cloned `Regex` starts with an empty
/// matching cache, and building one cost more than the match.
fn compile(pattern: &str) -> Result<Rc<Regex>, String> {
    CACHE.with(|cache| {
        if let Some(r) = cache.borrow().get(pattern) {
            return r.clone();
        }
        let compiled = Regex::new(&translate(pattern)).map(Rc::new).map_err(|e| {
            let msg = e.to_string();
            let last = msg.lines().last().unwrap_or(&msg).trim().to_owned();
            format!(
                "error parsing regexp: {}: `{pattern}`",
                last.trim_start_matches("error: ")
            )
        });
        let mut cache = cache.borrow_mut();
        if cache.len() > 1024 {
            cache.clear();
        }
        cache.insert(pattern.to_owned(), compiled.clone());
        compiled
    })
}

fn compile_err(pattern: &str) -> Result<Rc<Regex>, String> {
    compile(pattern)
}

/// `regexp.MustCompile`, whose panic Go's template engine reports as the error.
fn must(pattern: &str) -> Result<Rc<Regex>, String> {
    compile(pattern).map_err(|e| {
        let shown = if pattern.contains('`') {
            crate::print::quote(pattern)
        } else {
            format!("`{pattern}`")
        };
        format!("regexp: Compile({shown}): {e}")
    })
}

/// Rewrites Go's ASCII-only Perl classes into explicit ASCII classes.
fn translate(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        if c == '\\' {
            let Some(&e) = chars.peek() else {
                out.push(c);
                break;
            };
            chars.next();
            let replacement = match (e, in_class) {
                ('d', false) => Some("[0-9]"),
                ('D', false) => Some("[^0-9]"),
                ('w', false) => Some("[0-9A-Za-z_]"),
                ('W', false) => Some("[^0-9A-Za-z_]"),
                ('s', false) => Some("[\\t\\n\\f\\r ]"),
                ('S', false) => Some("[^\\t\\n\\f\\r ]"),
                ('b', false) => Some("(?-u:\\b)"),
                ('B', false) => Some("(?-u:\\B)"),
                ('d', true) => Some("0-9"),
                ('w', true) => Some("0-9A-Za-z_"),
                ('s', true) => Some("\\t\\n\\f\\r "),
                ('D', true) => Some("[^0-9]"),
                ('W', true) => Some("[^0-9A-Za-z_]"),
                ('S', true) => Some("[^\\t\\n\\f\\r ]"),
                _ => None,
            };
            match replacement {
                Some(r) => out.push_str(r),
                None => {
                    out.push('\\');
                    out.push(e);
                }
            }
            continue;
        }
        if c == '[' && !in_class {
            in_class = true;
            out.push(c);
            // A leading ']' (after an optional '^') is a literal member.
            if chars.peek() == Some(&'^') {
                out.push('^');
                chars.next();
            }
            if chars.peek() == Some(&']') {
                out.push_str("\\]");
                chars.next();
            }
            continue;
        }
        if c == '[' && in_class && chars.peek() == Some(&':') {
            // POSIX class like [:alpha:]: copy through to the closing ":]".
            out.push(c);
            for d in chars.by_ref() {
                out.push(d);
                if d == ']' {
                    break;
                }
            }
            continue;
        }
        if c == '[' && in_class {
            out.push_str("\\[");
            continue;
        }
        if c == ']' && in_class {
            in_class = false;
        }
        out.push(c);
    }
    out
}

fn string_list(items: Vec<String>) -> Value {
    Value::List(Rc::new(List::new(
        ListKind::String,
        items.into_iter().map(Value::string).collect(),
    )))
}

/// Go's `FindAllString(s, n)`: a negative `n` means all matches.
/// What a found or split part takes beyond its bytes: its slot and its allocation.
const PART_BYTES: u64 = 48;

/// `Regexp.ReplaceAllString` (`$1` and `${name}` expanded) or `ReplaceAllLiteralString`.
/// Each match can add the whole replacement, so the result is checked against the
/// budget as it grows.
fn replace_all(re: &Regex, s: &str, rep: &str, literal: bool) -> Result<String, String> {
    let meter = Meter::new();
    let literal = literal || !rep.contains('$');
    let mut out = String::new();
    let mut last = 0;
    let mut push = |out: &mut String, start: usize, end: usize| {
        out.push_str(&s[last..start]);
        last = end;
    };
    if literal {
        for m in re.find_iter(s) {
            push(&mut out, m.start(), m.end());
            out.push_str(rep);
            meter.check(out.len() as u64)?;
        }
    } else {
        for caps in re.captures_iter(s) {
            let Some(m) = caps.get(0) else { continue };
            push(&mut out, m.start(), m.end());
            caps.expand(rep, &mut out);
            meter.check(out.len() as u64)?;
        }
    }
    out.push_str(&s[last..]);
    Ok(out)
}

fn find_all(re: &Regex, s: &str, n: i64) -> Result<Value, String> {
    if n == 0 {
        return Ok(string_list(Vec::new()));
    }
    let limit = if n < 0 { usize::MAX } else { n as usize };
    let meter = Meter::new();
    let mut size = 0;
    let mut found = Vec::new();
    for m in re.find_iter(s).take(limit) {
        size += m.len() as u64 + PART_BYTES;
        meter.check(size)?;
        found.push(m.as_str().to_owned());
    }
    Ok(string_list(found))
}

/// Go's `Regexp.Split`.
fn split(re: &Regex, s: &str, n: i64) -> Result<Value, String> {
    if n == 0 {
        return Ok(string_list(Vec::new()));
    }
    if !re.as_str().is_empty() && s.is_empty() {
        return Ok(string_list(vec![String::new()]));
    }
    let limit = if n < 0 { usize::MAX } else { n as usize };
    let meter = Meter::new();
    let mut size = 0;
    let mut out = Vec::new();
    let (mut beg, mut end) = (0, 0);
    for m in re.find_iter(s).take(limit) {
        if n > 0 && out.len() == limit - 1 {
            break;
        }
        end = m.start();
        if m.end() != 0 {
            size += (end - beg) as u64 + PART_BYTES;
            meter.check(size)?;
            out.push(s[beg..end].to_owned());
        }
        beg = m.end();
    }
    if end != s.len() {
        out.push(s[beg..].to_owned());
    }
    Ok(string_list(out))
}

/// `regexp.QuoteMeta`.
fn quote_meta(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_classes_like_go() {
        let re = compile(r"^\w+$").unwrap();
        assert!(re.is_match("abc_1"));
        assert!(!re.is_match("héllo"));
        assert!(compile(r"[\d.]+").unwrap().is_match("1.2"));
        assert_eq!(quote_meta("a.b*c"), r"a\.b\*c");
    }
}
