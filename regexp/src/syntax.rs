//! Go's regular expression syntax (`regexp/syntax` with the `Perl` flags that
//! `regexp.Compile` uses), read the way Go 1.25 reads it and written out as
//! regex-syntax's HIR, so that no pattern text is ever re-escaped for another parser.
//!
//! The parser is a left-to-right scan with a stack of open groups, like Go's: errors are
//! found in the same order and name the same piece of the pattern.

use regex_syntax::hir::{self, Class, Dot, Hir, Look};

use crate::unicode::{self, Set};
use crate::{Error, ErrorCode};

/// The largest count of a repetition `x{n,m}`, and of the product of nested counts.
const MAX_REPEAT: i64 = 1000;
/// The deepest tree Go accepts.
const MAX_HEIGHT: u32 = 1000;
/// The largest program Go accepts, in instructions (128 MiB of 40-byte instructions).
const MAX_SIZE: u64 = (128 << 20) / 40;

/// A parsed pattern.
pub(crate) struct Parsed {
    pub hir: Hir,
    /// Go's `SubexpNames`: "" for the whole match and unnamed groups.
    pub names: Vec<String>,
    /// For each of Go's groups, the group of the HIR that carries it. `None` for groups
    /// Go simplifies away (inside `x{0}`), which never match.
    pub groups: Vec<Option<usize>>,
}

#[derive(Clone, Copy, Debug)]
struct Flags {
    /// `(?i)`
    fold_case: bool,
    /// `(?s)`
    dot_nl: bool,
    /// Not `(?m)`: `^` and `$` match only at the beginning and end of the text.
    one_line: bool,
    /// `(?U)`
    non_greedy: bool,
}

const PERL: Flags = Flags {
    fold_case: false,
    dot_nl: false,
    one_line: true,
    non_greedy: false,
};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum RepeatOp {
    Star,
    Plus,
    Quest,
    /// `{n}`, `{n,}`, `{n,m}`
    Counted,
}

#[derive(Debug)]
enum Kind {
    Empty,
    /// A run of literal runes (which may be surrogates, written as `\x{D800}`).
    Literal {
        runes: Vec<u32>,
        fold: bool,
    },
    Class(Set),
    AnyChar,
    AnyCharNotNl,
    Look(Look),
    Capture {
        index: usize,
        sub: Box<Node>,
    },
    Repeat {
        op: RepeatOp,
        min: u32,
        max: Option<u32>,
        greedy: bool,
        sub: Box<Node>,
    },
    Concat(Vec<Node>),
    Alternate(Vec<Node>),
}

/// A node of the parse tree with Go's measures of it: the tree's height and the size of
/// the program it compiles to.
#[derive(Debug)]
struct Node {
    kind: Kind,
    height: u32,
    size: u64,
}

impl Node {
    fn new(kind: Kind) -> Node {
        let subs: &[Node] = match &kind {
            Kind::Capture { sub, .. } | Kind::Repeat { sub, .. } => std::slice::from_ref(sub),
            Kind::Concat(subs) | Kind::Alternate(subs) => subs,
            _ => &[],
        };
        let height = 1 + subs.iter().map(|s| s.height).max().unwrap_or(0);
        let sub_size = subs.first().map_or(0, |s| s.size);
        let size = match &kind {
            Kind::Literal { runes, .. } => runes.len() as u64,
            Kind::Capture { .. }
            | Kind::Repeat {
                op: RepeatOp::Star, ..
            } => 2 + sub_size,
            Kind::Repeat {
                op: RepeatOp::Plus | RepeatOp::Quest,
                ..
            } => 1 + sub_size,
            Kind::Repeat { min, max, .. } => match max {
                None if *min == 0 => 2 + sub_size,
                None => 1 + u64::from(*min) * sub_size,
                Some(max) => u64::from(*max) * sub_size + u64::from(max - min),
            },
            Kind::Concat(subs) => subs.iter().map(|s| s.size).sum(),
            Kind::Alternate(subs) => {
                subs.iter().map(|s| s.size).sum::<u64>() + subs.len() as u64 - 1
            }
            _ => 0,
        };
        Node {
            kind,
            height,
            size: size.max(1),
        }
    }

    fn subs(&self) -> &[Node] {
        match &self.kind {
            Kind::Capture { sub, .. } | Kind::Repeat { sub, .. } => std::slice::from_ref(sub),
            Kind::Concat(subs) | Kind::Alternate(subs) => subs,
            _ => &[],
        }
    }
}

/// An open group: `(`, `(?:`, `(?P<name>` or the whole pattern.
struct Frame {
    /// The flags when the group opened, restored when it closes.
    flags: Flags,
    /// Go's group number, for capturing groups.
    capture: Option<usize>,
    /// Alternatives finished by `|`.
    alternatives: Vec<Node>,
    /// The current alternative, one item per atom or repetition.
    items: Vec<Node>,
}

impl Frame {
    fn new(flags: Flags, capture: Option<usize>) -> Frame {
        Frame {
            flags,
            capture,
            alternatives: Vec::new(),
            items: Vec::new(),
        }
    }
}

struct Parser<'p> {
    whole: &'p str,
    flags: Flags,
    frames: Vec<Frame>,
    names: Vec<String>,
    /// Nodes made, the product of counted repetitions seen (at most [`MAX_SIZE`]), and
    /// whether program sizes are being checked: Go's `numRegexp`, `repeats` and
    /// `size != nil`.
    nodes: u64,
    repeats: u64,
    measuring: bool,
}

fn error(code: ErrorCode, expr: &str) -> Error {
    Error {
        code,
        expr: expr.to_owned(),
    }
}

/// `s` up to where `rest` starts (`rest` being a suffix of `s`).
fn consumed<'s>(s: &'s str, rest: &str) -> &'s str {
    &s[..s.len() - rest.len()]
}

/// Go's `nextRune`: the first character and the rest; at the end of the text, U+FFFD
/// and nothing consumed.
fn next_rune(s: &str) -> (u32, &str) {
    match s.chars().next() {
        Some(c) => (c as u32, &s[c.len_utf8()..]),
        None => (0xFFFD, s),
    }
}

fn unhex(c: u32) -> Option<u32> {
    char::from_u32(c).and_then(|c| c.to_digit(16))
}

impl Parser<'_> {
    fn items(&mut self) -> &mut Vec<Node> {
        &mut self.frames.last_mut().expect("the root frame stays").items
    }

    /// Go's `maybeConcat`: the literal on top joins the literal below it once something
    /// else is pushed, so that a repetition only ever takes the last rune.
    fn merge_literals(&mut self) {
        let items = self.items();
        let n = items.len();
        if n < 2 {
            return;
        }
        let same = matches!(
            (&items[n - 2].kind, &items[n - 1].kind),
            (Kind::Literal { fold: a, .. }, Kind::Literal { fold: b, .. }) if a == b
        );
        if !same {
            return;
        }
        let Some(Node {
            kind: Kind::Literal { runes: top, .. },
            ..
        }) = items.pop()
        else {
            return;
        };
        if let Some(Node {
            kind: Kind::Literal { runes, fold },
            ..
        }) = items.pop()
        {
            let mut runes = runes;
            runes.extend(top);
            items.push(Node::new(Kind::Literal { runes, fold }));
        }
    }

    /// Go's `checkLimits` for a new node. Like Go, the program size is only measured
    /// once the nodes made so far times the product of the counted repetitions could
    /// exceed the limit.
    fn check(&mut self, node: &Node) -> Result<(), Error> {
        self.nodes += 1;
        if !self.measuring {
            if let Kind::Repeat {
                op: RepeatOp::Counted,
                min,
                max,
                ..
            } = node.kind
            {
                let n = u64::from(max.unwrap_or(min)).max(1);
                self.repeats = if n > MAX_SIZE / self.repeats {
                    MAX_SIZE
                } else {
                    self.repeats * n
                };
            }
            self.measuring = self.nodes >= MAX_SIZE / self.repeats;
        }
        if self.measuring && node.size > MAX_SIZE {
            return Err(error(ErrorCode::Large, self.whole));
        }
        if node.height > MAX_HEIGHT {
            return Err(error(ErrorCode::NestingDepth, self.whole));
        }
        Ok(())
    }

    fn push(&mut self, kind: Kind) -> Result<(), Error> {
        self.merge_literals();
        let node = Node::new(kind);
        self.check(&node)?;
        self.items().push(node);
        Ok(())
    }

    fn literal(&mut self, rune: u32) -> Result<(), Error> {
        self.push(Kind::Literal {
            runes: vec![rune],
            fold: self.flags.fold_case,
        })
    }

    /// `class`, folded first when `(?i)` is on and then negated if asked.
    fn group(&self, mut class: Set, negated: bool) -> Set {
        if self.flags.fold_case {
            class = unicode::fold(&class);
        }
        if negated {
            class.negate();
        }
        class
    }

    /// Go's `concat` of the current alternative: nothing is the empty match, one item
    /// stands for itself.
    fn concat(&mut self) -> Result<Node, Error> {
        self.merge_literals();
        let mut items = std::mem::take(self.items());
        if items.len() == 1 {
            return Ok(items.pop().expect("one item"));
        }
        let node = Node::new(if items.is_empty() {
            Kind::Empty
        } else {
            Kind::Concat(items)
        });
        self.check(&node)?;
        Ok(node)
    }

    fn vertical_bar(&mut self) -> Result<(), Error> {
        let node = self.concat()?;
        self.frames
            .last_mut()
            .expect("the root frame stays")
            .alternatives
            .push(node);
        Ok(())
    }

    /// Closes the innermost frame into one node.
    fn close_frame(&mut self) -> Result<Frame, Error> {
        let last = self.concat()?;
        let mut frame = self.frames.pop().expect("the root frame stays");
        frame.alternatives.push(last);
        let mut alternatives = std::mem::take(&mut frame.alternatives);
        let node = if alternatives.len() == 1 {
            alternatives.pop().expect("one alternative")
        } else {
            let node = Node::new(Kind::Alternate(alternatives));
            self.check(&node)?;
            node
        };
        frame.items.push(node);
        Ok(frame)
    }

    fn right_paren(&mut self) -> Result<(), Error> {
        if self.frames.len() < 2 {
            return Err(error(ErrorCode::UnexpectedParen, self.whole));
        }
        let mut frame = self.close_frame()?;
        self.flags = frame.flags;
        let node = frame.items.pop().expect("the closed group");
        match frame.capture {
            Some(index) => self.push(Kind::Capture {
                index,
                sub: Box::new(node),
            }),
            None => {
                self.merge_literals();
                self.items().push(node);
                Ok(())
            }
        }
    }

    fn open_group(&mut self, capture: Option<usize>) {
        self.merge_literals();
        self.frames.push(Frame::new(self.flags, capture));
    }

    fn open_capture(&mut self, name: &str) {
        self.names.push(name.to_owned());
        let index = self.names.len() - 1;
        self.open_group(Some(index));
    }

    /// Go's `repeat`: applies `*`, `+`, `?` or `{n,m}` to the last item. `before` starts
    /// at the operator, `after` just past it; returns the text after a `?` that makes
    /// the repetition non-greedy.
    fn repeat<'t>(
        &mut self,
        op: RepeatOp,
        min: i64,
        max: i64,
        before: &'t str,
        after: &'t str,
        last_repeat: &str,
    ) -> Result<&'t str, Error> {
        let mut after = after;
        let mut non_greedy = self.flags.non_greedy;
        if let Some(rest) = after.strip_prefix('?') {
            after = rest;
            non_greedy = !non_greedy;
        }
        if !last_repeat.is_empty() {
            // `a**` is an error in Perl, not a doubled star; `a++` would be possessive.
            return Err(error(
                ErrorCode::InvalidRepeatOp,
                &last_repeat[..last_repeat.len() - after.len()],
            ));
        }
        let Some(sub) = self.items().pop() else {
            return Err(error(
                ErrorCode::MissingRepeatArgument,
                consumed(before, after),
            ));
        };
        let node = Node::new(Kind::Repeat {
            op,
            min: min as u32,
            max: u32::try_from(max).ok(),
            greedy: !non_greedy,
            sub: Box::new(sub),
        });
        self.check(&node)?;
        if op == RepeatOp::Counted && (min >= 2 || max >= 2) && !repeat_is_valid(&node, MAX_REPEAT)
        {
            return Err(error(ErrorCode::InvalidRepeatSize, consumed(before, after)));
        }
        self.items().push(node);
        Ok(after)
    }

    /// `(?flags)`, `(?flags:`, `(?P<name>` and `(?<name>`. `s` starts with `(?`.
    fn parse_perl_flags<'t>(&mut self, s: &'t str) -> Result<&'t str, Error> {
        let b = s.as_bytes();
        let starts_with_p = b.len() > 4 && b[2] == b'P' && b[3] == b'<';
        let starts_with_name = b.len() > 3 && b[2] == b'<';
        if starts_with_p || starts_with_name {
            let start = if starts_with_p { 4 } else { 3 };
            let Some(end) = s.find('>') else {
                return Err(error(ErrorCode::InvalidNamedCapture, s));
            };
            let name = &s[start..end];
            if !is_valid_capture_name(name) {
                return Err(error(ErrorCode::InvalidNamedCapture, &s[..=end]));
            }
            self.open_capture(name);
            return Ok(&s[end + 1..]);
        }

        let mut t = &s[2..];
        let mut flags = self.flags;
        let mut negative = false;
        let mut saw_flag = false;
        while !t.is_empty() {
            let (c, rest) = next_rune(t);
            t = rest;
            let set = !negative;
            match char::from_u32(c).unwrap_or('\u{FFFD}') {
                'i' => {
                    flags.fold_case = set;
                    saw_flag = true;
                }
                'm' => {
                    flags.one_line = !set;
                    saw_flag = true;
                }
                's' => {
                    flags.dot_nl = set;
                    saw_flag = true;
                }
                'U' => {
                    flags.non_greedy = set;
                    saw_flag = true;
                }
                '-' => {
                    if negative {
                        break;
                    }
                    negative = true;
                    saw_flag = false;
                }
                c @ (':' | ')') => {
                    if negative && !saw_flag {
                        break;
                    }
                    if c == ':' {
                        // The group remembers the flags from before it.
                        self.open_group(None);
                    }
                    self.flags = flags;
                    return Ok(t);
                }
                _ => break,
            }
        }
        Err(error(ErrorCode::InvalidPerlOp, consumed(s, t)))
    }

    /// `\pN`, `\p{Name}`, `\PN`, `\P{^Name}`: the class and the rest, if `s` starts with
    /// one.
    fn parse_unicode_class<'t>(&self, s: &'t str) -> Result<Option<(Set, &'t str)>, Error> {
        let negated = match s.as_bytes() {
            [b'\\', b'p', ..] => false,
            [b'\\', b'P', ..] => true,
            _ => return Ok(None),
        };
        let mut negated = negated;
        let (c, t) = next_rune(&s[2..]);
        let (seq, mut name, rest) = if c != u32::from('{') {
            let seq = consumed(s, t);
            (seq, &seq[2..], t)
        } else {
            let Some(end) = s.find('}') else {
                return Err(error(ErrorCode::InvalidCharRange, s));
            };
            (&s[..=end], &s[3..end], &s[end + 1..])
        };
        if let Some(rest) = name.strip_prefix('^') {
            negated = !negated;
            name = rest;
        }
        let Some(table) = unicode::unicode_class(name) else {
            return Err(error(ErrorCode::InvalidCharRange, seq));
        };
        let mut set = table.set;
        if self.flags.fold_case && table.folds {
            set = unicode::fold(&set);
        }
        if negated != table.negated {
            set.negate();
        }
        Ok(Some((set, rest)))
    }

    /// `\d`, `\D`, `\s`, `\S`, `\w`, `\W`.
    fn parse_perl_class_escape<'t>(&self, s: &'t str) -> Option<(Set, &'t str)> {
        let [b'\\', letter, ..] = s.as_bytes() else {
            return None;
        };
        let (ranges, negated) = unicode::perl_class(*letter)?;
        Some((self.group(unicode::set_of(ranges), negated), &s[2..]))
    }

    /// `[:alpha:]` and `[:^alpha:]` at the start of `s`.
    fn parse_named_class<'t>(&self, s: &'t str) -> Result<Option<(Set, &'t str)>, Error> {
        let Some(i) = s[2..].find(":]") else {
            return Ok(None);
        };
        let (name, rest) = s.split_at(i + 4);
        let Some((ranges, negated)) = unicode::posix_class(name) else {
            return Err(error(ErrorCode::InvalidCharRange, name));
        };
        Ok(Some((self.group(unicode::set_of(ranges), negated), rest)))
    }

    /// A bracketed class. `s` starts with `[`.
    fn parse_class<'t>(&mut self, s: &'t str) -> Result<&'t str, Error> {
        let mut t = &s[1..];
        let mut class = Set::empty();
        let mut negated = false;
        if let Some(rest) = t.strip_prefix('^') {
            negated = true;
            t = rest;
        }
        // `]` and `-` are members when they come first.
        let mut first = true;
        while t.is_empty() || !t.starts_with(']') || first {
            first = false;
            if t.len() > 2
                && t.starts_with("[:")
                && let Some((set, rest)) = self.parse_named_class(t)?
            {
                class.union(&set);
                t = rest;
                continue;
            }
            if let Some((set, rest)) = self.parse_unicode_class(t)? {
                class.union(&set);
                t = rest;
                continue;
            }
            if let Some((set, rest)) = self.parse_perl_class_escape(t) {
                class.union(&set);
                t = rest;
                continue;
            }
            // A character or a range. `[a-]` is `a` and `-`; `[\w-.]` is `\w`, `-`, `.`
            // because `\w` was taken above.
            let range_start = t;
            let (lo, rest) = parse_class_char(t, s)?;
            t = rest;
            let mut hi = lo;
            if t.len() >= 2 && t.as_bytes()[0] == b'-' && t.as_bytes()[1] != b']' {
                let (h, rest) = parse_class_char(&t[1..], s)?;
                hi = h;
                t = rest;
                if hi < lo {
                    return Err(error(ErrorCode::InvalidCharRange, consumed(range_start, t)));
                }
            }
            let mut range = Set::empty();
            unicode::push_range(&mut range, lo, hi);
            class.union(&self.group(range, false));
        }
        if negated {
            class.negate();
        }
        self.push(Kind::Class(class))?;
        Ok(&t[1..])
    }
}

/// Go's `repeatIsValid`: the counted repetitions nested in `node`, multiplied, stay
/// within `n`.
fn repeat_is_valid(node: &Node, mut n: i64) -> bool {
    if let Kind::Repeat {
        op: RepeatOp::Counted,
        min,
        max,
        ..
    } = node.kind
    {
        let mut m = max.map_or(-1, i64::from);
        if m == 0 {
            return true;
        }
        if m < 0 {
            m = i64::from(min);
        }
        if m > n {
            return false;
        }
        if m > 0 {
            n /= m;
        }
    }
    node.subs().iter().all(|sub| repeat_is_valid(sub, n))
}

/// Go's `isValidCaptureName`: one or more ASCII letters, digits and underscores.
fn is_valid_capture_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b == b'_' || b.is_ascii_alphanumeric())
}

/// A character of a bracketed class, escaped or not. `whole` is the class, for the
/// error when it never closes.
fn parse_class_char<'t>(s: &'t str, whole: &str) -> Result<(u32, &'t str), Error> {
    if s.is_empty() {
        return Err(error(ErrorCode::MissingBracket, whole));
    }
    if s.starts_with('\\') {
        return parse_escape(s);
    }
    Ok(next_rune(s))
}

/// Go's `parseEscape`: a single-character escape at the start of `s`.
fn parse_escape(s: &str) -> Result<(u32, &str), Error> {
    let mut t = &s[1..];
    if t.is_empty() {
        return Err(error(ErrorCode::TrailingBackslash, ""));
    }
    let (c, rest) = next_rune(t);
    t = rest;
    let is_octal = |t: &str| {
        t.as_bytes()
            .first()
            .is_some_and(|b| (b'0'..=b'7').contains(b))
    };
    match char::from_u32(c).unwrap_or('\u{FFFD}') {
        // Punctuation stands for itself (`\_` too); letters and digits are reserved.
        c if c.is_ascii() && !c.is_ascii_alphanumeric() => return Ok((c as u32, t)),
        // Octal: `\0` and up to two more digits, or a digit 1-7 followed by an octal
        // digit. A lone `\1` would be a backreference, which RE2 does not have.
        d @ '0'..='7' if d == '0' || is_octal(t) => {
            let mut r = d as u32 - u32::from('0');
            for _ in 1..3 {
                if !is_octal(t) {
                    break;
                }
                r = r * 8 + u32::from(t.as_bytes()[0] - b'0');
                t = &t[1..];
            }
            return Ok((r, t));
        }
        'x' if !t.is_empty() => {
            let (c, rest) = next_rune(t);
            t = rest;
            if c == u32::from('{') {
                // Any number of hex digits in braces, at least one, at most U+10FFFF.
                let mut digits = 0;
                let mut r = 0u32;
                loop {
                    if t.is_empty() {
                        return Err(error(ErrorCode::InvalidEscape, consumed(s, t)));
                    }
                    let (c, rest) = next_rune(t);
                    t = rest;
                    if c == u32::from('}') {
                        break;
                    }
                    let Some(v) = unhex(c) else {
                        return Err(error(ErrorCode::InvalidEscape, consumed(s, t)));
                    };
                    r = r * 16 + v;
                    if r > 0x10FFFF {
                        return Err(error(ErrorCode::InvalidEscape, consumed(s, t)));
                    }
                    digits += 1;
                }
                if digits == 0 {
                    return Err(error(ErrorCode::InvalidEscape, consumed(s, t)));
                }
                return Ok((r, t));
            }
            // Exactly two hex digits.
            let x = unhex(c);
            let (c, rest) = next_rune(t);
            t = rest;
            if let (Some(x), Some(y)) = (x, unhex(c)) {
                return Ok((x * 16 + y, t));
            }
        }
        // C escapes; no `\b` (a word boundary outside classes, an error inside).
        'a' => return Ok((0x07, t)),
        'f' => return Ok((0x0C, t)),
        'n' => return Ok((0x0A, t)),
        'r' => return Ok((0x0D, t)),
        't' => return Ok((0x09, t)),
        'v' => return Ok((0x0B, t)),
        _ => {}
    }
    Err(error(ErrorCode::InvalidEscape, consumed(s, t)))
}

/// Go's `parseRepeat`: `{n}`, `{n,}` or `{n,m}` at the start of `s`, as (min, max, rest)
/// with max -1 for "no maximum"; min -1 when a number is too big. `None` when `s` does
/// not have that form, and the `{` is a literal.
fn parse_repeat(s: &str) -> Option<(i64, i64, &str)> {
    let mut t = s.strip_prefix('{')?;
    let (min, rest) = parse_int(t)?;
    t = rest;
    let mut min = min;
    let max;
    if let Some(rest) = t.strip_prefix(',') {
        t = rest;
        if t.starts_with('}') {
            max = -1;
        } else {
            let (m, rest) = parse_int(t)?;
            t = rest;
            max = m;
            if max < 0 {
                min = -1;
            }
        }
    } else {
        if t.is_empty() {
            return None;
        }
        max = min;
    }
    let rest = t.strip_prefix('}')?;
    Some((min, max, rest))
}

/// Go's `parseInt`: decimal digits without a leading zero; -1 when the number reaches
/// 10^8.
fn parse_int(s: &str) -> Option<(i64, &str)> {
    let b = s.as_bytes();
    if !b.first().is_some_and(u8::is_ascii_digit) {
        return None;
    }
    if b.len() >= 2 && b[0] == b'0' && b[1].is_ascii_digit() {
        return None;
    }
    let digits = b.iter().take_while(|b| b.is_ascii_digit()).count();
    let mut n: i64 = 0;
    for &d in &b[..digits] {
        if n >= 100_000_000 {
            n = -1;
            break;
        }
        n = n * 10 + i64::from(d - b'0');
    }
    Some((n, &s[digits..]))
}

/// Parses `pattern` as Go's `regexp.Compile` does.
pub(crate) fn parse(pattern: &str) -> Result<Parsed, Error> {
    let mut p = Parser {
        whole: pattern,
        flags: PERL,
        frames: vec![Frame::new(PERL, None)],
        names: vec![String::new()],
        nodes: 0,
        repeats: 1,
        measuring: false,
    };
    let mut t = pattern;
    // The repetition operator just read, for "invalid nested repetition operator".
    let mut last_repeat: &str = "";
    while !t.is_empty() {
        let mut repeat: &str = "";
        match t.as_bytes()[0] {
            b'(' => {
                if t.as_bytes().get(1) == Some(&b'?') {
                    t = p.parse_perl_flags(t)?;
                } else {
                    p.open_capture("");
                    t = &t[1..];
                }
            }
            b'|' => {
                p.vertical_bar()?;
                t = &t[1..];
            }
            b')' => {
                p.right_paren()?;
                t = &t[1..];
            }
            b'^' => {
                p.push(Kind::Look(if p.flags.one_line {
                    Look::Start
                } else {
                    Look::StartLF
                }))?;
                t = &t[1..];
            }
            b'$' => {
                p.push(Kind::Look(if p.flags.one_line {
                    Look::End
                } else {
                    Look::EndLF
                }))?;
                t = &t[1..];
            }
            b'.' => {
                p.push(if p.flags.dot_nl {
                    Kind::AnyChar
                } else {
                    Kind::AnyCharNotNl
                })?;
                t = &t[1..];
            }
            b'[' => t = p.parse_class(t)?,
            op @ (b'*' | b'+' | b'?') => {
                let op = match op {
                    b'*' => RepeatOp::Star,
                    b'+' => RepeatOp::Plus,
                    _ => RepeatOp::Quest,
                };
                let (min, max) = match op {
                    RepeatOp::Plus => (1, -1),
                    RepeatOp::Quest => (0, 1),
                    _ => (0, -1),
                };
                let after = p.repeat(op, min, max, t, &t[1..], last_repeat)?;
                repeat = t;
                t = after;
            }
            b'{' => match parse_repeat(t) {
                None => {
                    p.literal(u32::from('{'))?;
                    t = &t[1..];
                }
                Some((min, max, after)) => {
                    if !(0..=MAX_REPEAT).contains(&min)
                        || max > MAX_REPEAT
                        || (max >= 0 && min > max)
                    {
                        return Err(error(ErrorCode::InvalidRepeatSize, consumed(t, after)));
                    }
                    let after = p.repeat(RepeatOp::Counted, min, max, t, after, last_repeat)?;
                    repeat = t;
                    t = after;
                }
            },
            b'\\' => t = p.parse_backslash(t)?,
            _ => {
                let (c, rest) = next_rune(t);
                p.literal(c)?;
                t = rest;
            }
        }
        last_repeat = repeat;
    }
    if p.frames.len() != 1 {
        return Err(error(ErrorCode::MissingParen, pattern));
    }
    let mut root = p.close_frame()?;
    let node = root.items.pop().expect("the whole pattern");

    let mut groups = vec![None; p.names.len()];
    groups[0] = Some(0);
    let mut next = 1;
    let hir = lower(node, &mut next, &mut groups);
    Ok(Parsed {
        hir,
        names: p.names,
        groups,
    })
}

impl Parser<'_> {
    /// A backslash outside a class. `t` starts with `\`.
    fn parse_backslash<'t>(&mut self, t: &'t str) -> Result<&'t str, Error> {
        let look = match t.as_bytes().get(1) {
            Some(b'A') => Some(Look::Start),
            Some(b'z') => Some(Look::End),
            // Go's `\b` is an ASCII word boundary.
            Some(b'b') => Some(Look::WordAscii),
            Some(b'B') => Some(Look::WordAsciiNegate),
            // Any byte; RE2 does not support it.
            Some(b'C') => return Err(error(ErrorCode::InvalidEscape, &t[..2])),
            Some(b'Q') => {
                // `\Q...\E`: literal text up to `\E` or the end.
                let (literal, rest) = t[2..].split_once(r"\E").unwrap_or((&t[2..], ""));
                for c in literal.chars() {
                    self.literal(c as u32)?;
                }
                return Ok(rest);
            }
            _ => None,
        };
        if let Some(look) = look {
            self.push(Kind::Look(look))?;
            return Ok(&t[2..]);
        }
        if let Some((class, rest)) = self.parse_unicode_class(t)? {
            self.push(Kind::Class(class))?;
            return Ok(rest);
        }
        if let Some((class, rest)) = self.parse_perl_class_escape(t) {
            self.push(Kind::Class(class))?;
            return Ok(rest);
        }
        let (c, rest) = parse_escape(t)?;
        self.literal(c)?;
        Ok(rest)
    }
}

/// Writes the tree as HIR. Groups are numbered in the order they open, as Go numbers
/// them; those under `x{0}` are dropped, as Go's `Simplify` drops them.
fn lower(node: Node, next: &mut usize, groups: &mut [Option<usize>]) -> Hir {
    match node.kind {
        Kind::Empty => Hir::empty(),
        Kind::Literal { runes, fold: false } => {
            let text: Option<String> = runes.iter().map(|&r| char::from_u32(r)).collect();
            // A surrogate never matches a decoded string.
            text.map_or_else(Hir::fail, |text| Hir::literal(text.into_bytes()))
        }
        Kind::Literal { runes, fold: true } => Hir::concat(
            runes
                .into_iter()
                .map(|r| {
                    let mut set = Set::empty();
                    unicode::push_range(&mut set, r, r);
                    Hir::class(Class::Unicode(unicode::fold(&set)))
                })
                .collect(),
        ),
        Kind::Class(set) => Hir::class(Class::Unicode(set)),
        Kind::AnyChar => Hir::dot(Dot::AnyChar),
        Kind::AnyCharNotNl => Hir::dot(Dot::AnyCharExceptLF),
        Kind::Look(look) => Hir::look(look),
        Kind::Capture { index, sub } => {
            let group = *next;
            *next += 1;
            groups[index] = Some(group);
            Hir::capture(hir::Capture {
                index: group as u32,
                name: None,
                sub: Box::new(lower(*sub, next, groups)),
            })
        }
        Kind::Repeat { max: Some(0), .. } => Hir::empty(),
        Kind::Repeat {
            min,
            max,
            greedy,
            sub,
            ..
        } => Hir::repetition(hir::Repetition {
            min,
            max,
            greedy,
            sub: Box::new(lower(*sub, next, groups)),
        }),
        Kind::Concat(subs) => {
            Hir::concat(subs.into_iter().map(|s| lower(s, next, groups)).collect())
        }
        Kind::Alternate(subs) => {
            Hir::alternation(subs.into_iter().map(|s| lower(s, next, groups)).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(pattern: &str) -> String {
        match parse(pattern) {
            Ok(_) => "ok".into(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn errors_name_what_go_names() {
        let cases = [
            ("a**", "invalid nested repetition operator: `**`"),
            ("a*?*", "invalid nested repetition operator: `*?*`"),
            ("a{2}{3}", "invalid nested repetition operator: `{2}{3}`"),
            ("*", "missing argument to repetition operator: `*`"),
            ("a|*", "missing argument to repetition operator: `*`"),
            ("(?i)*", "missing argument to repetition operator: `*`"),
            ("a{1001}", "invalid repeat count: `{1001}`"),
            ("a{2,1}", "invalid repeat count: `{2,1}`"),
            ("(a{500}){3}", "invalid repeat count: `{3}`"),
            ("{1001}", "invalid repeat count: `{1001}`"),
            ("(", "missing closing ): `(`"),
            ("a)", "unexpected ): `a)`"),
            ("[a", "missing closing ]: `[a`"),
            ("x[]", "missing closing ]: `[]`"),
            ("[z-a]", "invalid character class range: `z-a`"),
            ("[[:foo:]]", "invalid character class range: `[:foo:]`"),
            (r"\p{Foo}", r"invalid character class range: `\p{Foo}`"),
            (r"\p{Greek", r"invalid character class range: `\p{Greek`"),
            (r"\p", r"invalid character class range: `\p`"),
            (r"\8", r"invalid escape sequence: `\8`"),
            (r"\1", r"invalid escape sequence: `\1`"),
            (r"\C", r"invalid escape sequence: `\C`"),
            (r"\Z", r"invalid escape sequence: `\Z`"),
            (r"\x{110000}", r"invalid escape sequence: `\x{110000`"),
            (r"\x{}", r"invalid escape sequence: `\x{}`"),
            (r"\xg", r"invalid escape sequence: `\xg`"),
            (r"[a-\d]", r"invalid escape sequence: `\d`"),
            (r"[\b]", r"invalid escape sequence: `\b`"),
            ("a\\", "trailing backslash at end of expression: ``"),
            ("(?x)", "invalid or unsupported Perl syntax: `(?x`"),
            ("(?i-)", "invalid or unsupported Perl syntax: `(?i-)`"),
            ("(?P=n)", "invalid or unsupported Perl syntax: `(?P`"),
            ("(?P<n", "invalid named capture: `(?P<n`"),
            ("(?P<a-b>x)", "invalid named capture: `(?P<a-b>`"),
            ("(?<>x)", "invalid named capture: `(?<>`"),
        ];
        for (pattern, want) in cases {
            assert_eq!(
                err(pattern),
                format!("error parsing regexp: {want}"),
                "{pattern}"
            );
        }
    }

    #[test]
    fn accepts_what_go_accepts() {
        for pattern in [
            "(?)",
            "(?i-i)",
            "a{,5}",
            "a{01}",
            "x{2}?",
            "^*",
            r"\Q*\E*",
            "a*(?i)*",
            "()",
            "|",
            "(?P<a>x)(?P<a>y)",
            "(?<n>x)",
            r"[\w-\.]",
            "[]a]",
            "[^]a]",
            "[a-]",
            r"\p{^Greek}",
            r"\PL",
            r"\pN",
            r"[\p{Lu}\d]",
            r"\x{10FFFF}",
            r"\x{D800}",
            r"\0",
            r"\123",
            "a{1000}",
            "(a{10}){100}",
        ] {
            assert_eq!(err(pattern), "ok", "{pattern}");
        }
    }

    #[test]
    fn groups_under_zero_repeats_are_dropped() {
        let parsed = parse("(a){0}(b)(?P<n>c)").unwrap();
        assert_eq!(parsed.groups, vec![Some(0), None, Some(1), Some(2)]);
        assert_eq!(parsed.names, vec!["", "", "", "n"]);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!("{}a{}", "(".repeat(5000), ")".repeat(5000));
        assert!(err(&deep).contains("expression nests too deeply"));
    }
}
