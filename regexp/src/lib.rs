//! Go's `regexp` package, as Helm's templates and values schemas see it: patterns in
//! Go 1.25's RE2 syntax with its Perl flags, matched with leftmost-first semantics, and
//! Go's way of finding all matches, replacing (with `Expand`'s `$name` templates) and
//! splitting.
//!
//! Go's syntax differs from the `regex` crate's in ways that change what a pattern
//! means, not only whether it compiles: `[\w-.]` is a class of `\w`, `-` and `.` in Go
//! and an error or a range elsewhere; `\s` has no `\v`; `\d`, `\w`, `\b` and the POSIX
//! classes are ASCII; `(?U)` swaps greediness; names such as `\p{Old_Italic}` are
//! errors in Go 1.25; character classes are Unicode 15.0's. So patterns are parsed here
//! by a port of Go's parser ([`syntax`]) into regex-syntax's HIR, with Go's tables
//! ([`unicode`]), and only matched by regex-automata. A pattern Go rejects fails with
//! Go's error text; one Go accepts is matched as Go matches it, or, if the engine cannot
//! build it, fails with [`ErrorCode::EngineLimit`].

mod syntax;
#[cfg(test)]
mod tables_test;
mod unicode;

use std::fmt;

use regex_automata::Input;
use regex_automata::meta;
use regex_automata::util::captures::Captures;

/// Why a pattern does not compile: Go's `*syntax.Error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: ErrorCode,
    /// The part of the pattern the error is about (Go's `Expr`).
    pub expr: String,
}

impl fmt::Display for Error {
    /// Go's wording: ``error parsing regexp: missing closing ): `(a` ``.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.code {
            ErrorCode::EngineLimit(why) => write!(
                f,
                "regular expression `{}` is too large for chartkit's engine: {why}",
                self.expr
            ),
            code => write!(f, "error parsing regexp: {code}: `{}`", self.expr),
        }
    }
}

impl std::error::Error for Error {}

/// Go's `syntax.ErrorCode`s, plus the one way a pattern Go accepts can fail here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorCode {
    InvalidCharClass,
    InvalidCharRange,
    InvalidEscape,
    InvalidNamedCapture,
    InvalidPerlOp,
    InvalidRepeatOp,
    InvalidRepeatSize,
    MissingBracket,
    MissingParen,
    MissingRepeatArgument,
    TrailingBackslash,
    UnexpectedParen,
    NestingDepth,
    Large,
    /// Go accepts the pattern but regex-automata could not build it within chartkit's
    /// limits (a very large program); the text says which limit.
    EngineLimit(String),
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ErrorCode::InvalidCharClass => "invalid character class",
            ErrorCode::InvalidCharRange => "invalid character class range",
            ErrorCode::InvalidEscape => "invalid escape sequence",
            ErrorCode::InvalidNamedCapture => "invalid named capture",
            ErrorCode::InvalidPerlOp => "invalid or unsupported Perl syntax",
            ErrorCode::InvalidRepeatOp => "invalid nested repetition operator",
            ErrorCode::InvalidRepeatSize => "invalid repeat count",
            ErrorCode::MissingBracket => "missing closing ]",
            ErrorCode::MissingParen => "missing closing )",
            ErrorCode::MissingRepeatArgument => "missing argument to repetition operator",
            ErrorCode::TrailingBackslash => "trailing backslash at end of expression",
            ErrorCode::UnexpectedParen => "unexpected )",
            ErrorCode::NestingDepth => "expression nests too deeply",
            ErrorCode::Large => "expression too large",
            ErrorCode::EngineLimit(why) => why,
        })
    }
}

/// The most memory the compiled forms of one pattern may take. Go's own limit is a
/// program of 128 MiB; regex-automata's default (10 MiB) refuses patterns Go accepts,
/// such as `\pL{1000}`.
const ENGINE_SIZE_LIMIT: usize = 256 << 20;

/// A compiled pattern: Go's `*regexp.Regexp`.
#[derive(Debug)]
pub struct Regexp {
    expr: String,
    re: meta::Regex,
    /// Go's `SubexpNames()`.
    names: Vec<String>,
    /// The engine's group for each of Go's groups (`None`: simplified away, never set).
    groups: Vec<Option<usize>>,
}

/// A match and its groups as byte ranges, Go's `[]int` of a submatch search.
type Submatches = Vec<Option<(usize, usize)>>;

impl Regexp {
    /// `regexp.Compile`.
    pub fn new(pattern: &str) -> Result<Regexp, Error> {
        let parsed = syntax::parse(pattern)?;
        let config = meta::Config::new()
            .nfa_size_limit(Some(ENGINE_SIZE_LIMIT))
            .onepass_size_limit(Some(ENGINE_SIZE_LIMIT));
        let re = meta::Builder::new()
            .configure(config)
            .build_from_hir(&parsed.hir)
            .map_err(|e| Error {
                code: ErrorCode::EngineLimit(e.to_string()),
                expr: pattern.to_owned(),
            })?;
        Ok(Regexp {
            expr: pattern.to_owned(),
            re,
            names: parsed.names,
            groups: parsed.groups,
        })
    }

    /// The pattern, as given.
    pub fn as_str(&self) -> &str {
        &self.expr
    }

    /// Go's `NumSubexp()`: the number of groups, simplified away or not.
    pub fn num_subexp(&self) -> usize {
        self.names.len() - 1
    }

    /// Go's `SubexpNames()`.
    pub fn subexp_names(&self) -> &[String] {
        &self.names
    }

    /// `MatchString`.
    pub fn is_match(&self, s: &str) -> bool {
        self.re.is_match(s)
    }

    /// The leftmost-first match starting at or after `pos`, with the text before `pos`
    /// as context for `^`, `\b` and the like (Go's `doExecute` at `pos`).
    fn find_at(&self, s: &str, pos: usize) -> Option<(usize, usize)> {
        self.re
            .search(&Input::new(s).span(pos..s.len()))
            .map(|m| (m.start(), m.end()))
    }

    fn captures_at(&self, s: &str, pos: usize, caps: &mut Captures) -> Option<(usize, usize)> {
        self.re
            .search_captures(&Input::new(s).span(pos..s.len()), caps);
        caps.get_match().map(|m| (m.start(), m.end()))
    }

    /// Go's groups of the last search in `caps`.
    fn submatches(&self, caps: &Captures) -> Submatches {
        self.groups
            .iter()
            .map(|g| {
                g.and_then(|g| caps.get_group(g))
                    .map(|span| (span.start, span.end))
            })
            .collect()
    }

    /// `FindString`: the leftmost match, "" if none.
    pub fn find<'s>(&self, s: &'s str) -> Option<&'s str> {
        self.find_at(s, 0).map(|(a, b)| &s[a..b])
    }

    /// `FindAllStringIndex(s, n)`: successive matches, at most `n` (all if `n < 0`), an
    /// empty match right after the previous match skipped.
    pub fn find_all_index(&self, s: &str, n: i64) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        self.all_matches(s, n, |m| {
            out.push(m);
            true
        });
        out
    }

    /// Go's `allMatches`, stopping early when `deliver` returns false.
    pub fn all_matches(&self, s: &str, n: i64, mut deliver: impl FnMut((usize, usize)) -> bool) {
        let n = if n < 0 { s.len() as i64 + 1 } else { n };
        let end = s.len();
        let (mut pos, mut i, mut prev_match_end) = (0, 0, None);
        while i < n && pos <= end {
            let Some((start, stop)) = self.find_at(s, pos) else {
                break;
            };
            let mut accept = true;
            if stop == pos {
                // An empty match: never right after the previous match.
                if Some(start) == prev_match_end {
                    accept = false;
                }
                pos += s[pos..]
                    .chars()
                    .next()
                    .map_or(end + 1 - pos, char::len_utf8);
            } else {
                pos = stop;
            }
            prev_match_end = Some(stop);
            if accept {
                if !deliver((start, stop)) {
                    return;
                }
                i += 1;
            }
        }
    }

    /// `ReplaceAllString` (`literal` false: `$1`, `${name}` expanded by [`Regexp::expand`])
    /// or `ReplaceAllLiteralString`. `check` sees the output as it grows and may stop
    /// the work with an error.
    pub fn replace_all<E>(
        &self,
        src: &str,
        repl: &str,
        literal: bool,
        mut check: impl FnMut(&str) -> Result<(), E>,
    ) -> Result<String, E> {
        let expand = !literal && repl.contains('$');
        let mut caps = self.re.create_captures();
        let mut out = String::new();
        let mut last_match_end = 0;
        let mut search_pos = 0;
        while search_pos <= src.len() {
            let found = if expand {
                self.captures_at(src, search_pos, &mut caps)
            } else {
                self.find_at(src, search_pos)
            };
            let Some((start, stop)) = found else { break };
            out.push_str(&src[last_match_end..start]);
            // No replacement for an empty match right after another match.
            if stop > last_match_end || start == 0 {
                if expand {
                    self.expand(&mut out, repl, src, &self.submatches(&caps));
                } else {
                    out.push_str(repl);
                }
                check(&out)?;
            }
            last_match_end = stop;
            // Always advance at least one character.
            let width = src[search_pos..].chars().next().map_or(0, char::len_utf8);
            if search_pos + width > stop {
                search_pos += width;
            } else if search_pos + 1 > stop {
                search_pos += 1;
            } else {
                search_pos = stop;
            }
        }
        out.push_str(&src[last_match_end..]);
        Ok(out)
    }

    /// Go's `Expand` of `template` for a match of `src`: `$$` is `$`; `$name` takes the
    /// longest run of letters, digits and `_` (`$1x` is the group named `1x`), `${name}`
    /// is braced; a number names a group by index (no leading zeros), anything else a
    /// group by name, the first of that name that matched. Unknown or unmatched groups
    /// expand to nothing; a `$` not followed by a name is itself.
    pub fn expand(
        &self,
        out: &mut String,
        template: &str,
        src: &str,
        groups: &[Option<(usize, usize)>],
    ) {
        let mut template = template;
        while let Some(at) = template.find('$') {
            out.push_str(&template[..at]);
            template = &template[at + 1..];
            if let Some(rest) = template.strip_prefix('$') {
                out.push('$');
                template = rest;
                continue;
            }
            let Some((name, number, rest)) = extract(template) else {
                out.push('$');
                continue;
            };
            template = rest;
            let group = match number {
                Some(n) => groups.get(n).copied().flatten(),
                None => self
                    .names
                    .iter()
                    .zip(groups)
                    .find(|(n, g)| n.as_str() == name && g.is_some())
                    .and_then(|(_, g)| *g),
            };
            if let Some((a, b)) = group {
                out.push_str(&src[a..b]);
            }
        }
        out.push_str(template);
    }

    /// `Split(s, n)`: the text between matches, at most `n` pieces (all if `n < 0`,
    /// none if `n == 0`: Go's nil slice, returned as `None`).
    pub fn split<'s>(&self, s: &'s str, n: i64) -> Option<Vec<&'s str>> {
        let mut pieces = Vec::new();
        self.split_each(s, n, |piece| {
            pieces.push(piece);
            true
        })
        .then_some(pieces)
    }

    /// [`Regexp::split`] one piece at a time, stopping early when `deliver` returns
    /// false. Returns false when Go's result is a nil slice (`n == 0`).
    pub fn split_each<'s>(
        &self,
        s: &'s str,
        n: i64,
        mut deliver: impl FnMut(&'s str) -> bool,
    ) -> bool {
        if n == 0 {
            return false;
        }
        if !self.expr.is_empty() && s.is_empty() {
            deliver("");
            return true;
        }
        let (mut count, mut beg, mut end) = (0, 0, 0);
        let mut stopped = false;
        self.all_matches(s, n, |(start, stop)| {
            if n > 0 && count == n - 1 {
                return false;
            }
            end = start;
            if stop != 0 {
                count += 1;
                if !deliver(&s[beg..end]) {
                    stopped = true;
                    return false;
                }
            }
            beg = stop;
            true
        });
        if !stopped && end != s.len() {
            deliver(&s[beg..]);
        }
        true
    }
}

/// Go's `extract`: the name after a `$` (without it), whether it is a group number, and
/// the rest of the template.
fn extract(s: &str) -> Option<(&str, Option<usize>, &str)> {
    let (braced, s) = match s.strip_prefix('{') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let len: usize = s
        .chars()
        .take_while(|&c| unicode::is_letter(c) || unicode::is_digit(c) || c == '_')
        .map(char::len_utf8)
        .sum();
    if len == 0 {
        return None;
    }
    let name = &s[..len];
    let rest = if braced {
        s[len..].strip_prefix('}')?
    } else {
        &s[len..]
    };
    let mut number = Some(0usize);
    for b in name.bytes() {
        number = match number {
            Some(n) if b.is_ascii_digit() && n < 100_000_000 => {
                Some(n * 10 + usize::from(b - b'0'))
            }
            _ => None,
        };
    }
    if name.len() > 1 && name.starts_with('0') {
        number = None;
    }
    Some((name, number, rest))
}

/// Go's `unicode.IsLetter` (category L), for other readers of Go text that need it.
pub fn is_letter(c: char) -> bool {
    unicode::is_letter(c)
}

/// `regexp.QuoteMeta`: a backslash before each of `\.+*?()|[]{}^$`.
pub fn quote_meta(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if r"\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(p: &str) -> Regexp {
        Regexp::new(p).unwrap()
    }

    fn replace(p: &str, s: &str, r: &str) -> String {
        re(p).replace_all(s, r, false, |_| Ok::<_, ()>(())).unwrap()
    }

    #[test]
    fn class_escapes_beside_a_hyphen_are_members() {
        assert!(re(r"^[\w-\.]+$").is_match("ab-c.d"));
        assert!(!re(r"^[\w-\.]+$").is_match("ab/c"));
    }

    #[test]
    fn find_all_skips_empty_matches_after_a_match() {
        let found: Vec<_> = re("a*")
            .find_all_index("baaab", -1)
            .into_iter()
            .map(|(a, b)| &"baaab"[a..b])
            .collect();
        assert_eq!(found, ["", "aaa", ""]);
        assert_eq!(re("a*").find_all_index("baaab", 2).len(), 2);
    }

    #[test]
    fn replace_all_like_go() {
        assert_eq!(replace("a*", "baaab", "X"), "XbXbX");
        assert_eq!(replace("(a)", "a", "$1x|${1}x|$$|$"), "|ax|$|$");
        assert_eq!(replace("(?P<n>a)", "a", "<$n>"), "<a>");
        assert_eq!(replace("(?P<n>x)?(?P<n>a)", "a", "<$n>"), "<a>");
        assert_eq!(replace("(a)", "a", "${1"), "${1");
        assert_eq!(replace("(a)", "a", "$01"), "");
        assert_eq!(replace("(?P<01>a)", "a", "$01"), "a");
    }

    #[test]
    fn split_like_go() {
        assert_eq!(re("a").split("banana", -1).unwrap(), ["b", "n", "n", ""]);
        assert_eq!(re("a").split("banana", 2).unwrap(), ["b", "nana"]);
        assert_eq!(re("x").split("", -1).unwrap(), [""]);
        assert!(re("").split("", -1).unwrap().is_empty());
        assert_eq!(re("").split("abc", -1).unwrap(), ["a", "b", "c"]);
        assert!(re("a").split("a", 0).is_none());
    }

    #[test]
    fn go_semantics() {
        // `\s` has no `\v`; `\d` is ASCII; `$` only at the very end without (?m).
        assert!(!re(r"\s").is_match("\u{b}"));
        assert!(!re(r"\d").is_match("٣"));
        assert!(!re("a$").is_match("a\n"));
        assert!(re("(?m)a$").is_match("a\n"));
        // (?U) swaps greediness.
        assert_eq!(re("(?U)a+").find("aaa"), Some("a"));
        assert_eq!(re("(?U)a+?").find("aaa"), Some("aaa"));
        // Kelvin sign.
        assert!(re("(?i)k").is_match("\u{212A}"));
        assert!(!re("(?i)i").is_match("İ"));
        // ASCII word boundary.
        assert!(!re(r"\bé").is_match("é"));
    }

    #[test]
    fn quote_meta_escapes_go_specials() {
        assert_eq!(quote_meta("a.b*c{1}$"), r"a\.b\*c\{1\}\$");
        assert_eq!(quote_meta("-é#"), "-é#");
    }
}
