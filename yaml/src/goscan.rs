//! The characters go-yaml v2 reads differently from saphyr-parser, and a text rewritten
//! so that saphyr-parser reads it as go-yaml does.
//!
//! saphyr-parser follows YAML 1.2; Helm reads YAML with go-yaml v2, whose scanner is
//! libyaml's YAML 1.1 one. They disagree about a handful of characters:
//!
//! - **Tabs.** go-yaml skips a tab between tokens only in flow collections or where a
//!   simple key cannot start (after a key's `:`, a scalar, an anchor, `---`); anywhere
//!   else (after `-`, `?`, at the start of a line) the tab is "a character that cannot
//!   start any token". saphyr-parser refuses `key:<TAB>value` and accepts `-<TAB>a`.
//!   Tabs go-yaml skips are turned into spaces (the same for go-yaml, and then read the
//!   same way by both), tabs it refuses become its error.
//! - **Line breaks.** NEL (U+0085), LS (U+2028) and PS (U+2029) end lines in YAML 1.1
//!   and are ordinary characters in 1.2. NEL becomes CR LF (which go-yaml reads as the
//!   same `\n` and which keeps every position); LS and PS become `\n` outside quoted
//!   scalars, where they end lines for go-yaml (inside quotes both keep the character).
//! - **Control characters** (C0 and C1 controls but tab and line breaks, DEL, U+FFFE,
//!   U+FFFF) are refused anywhere by go-yaml's reader.
//! - **Escapes.** In double quotes go-yaml knows `\'` and not `\/`; YAML 1.2 the other
//!   way round.
//! - **Directives.** `%YAML` other than 1.1 is refused, and so are directives go-yaml's
//!   scanner cannot read (unknown names, malformed versions and tag handles).
//! - **Anchor names** ending at a character go-yaml does not allow there, and **keys that
//!   span lines** in flow collections, which go-yaml's scanner drops: both are errors.
//!
//! Known differences left: where go-yaml keeps an LS or PS that ended a line of a plain or
//! block scalar as a character of the value (`a: x<LS>  y` is `"x\u2028y"`), the value
//! here has the space or newline a line break folds into; blanks after an LS inside
//! quotes are kept; a byte order mark inside a plain scalar is refused (go-yaml keeps it).
//!
//! Finding out which tabs go-yaml skips needs the scanner's state (flow level, whether a
//! simple key may start, block indentation, where scalars end), so [`prepare`] runs a
//! small model of go-yaml's scanner over texts that have any of these characters. Nearly
//! every text has none, and costs one pass over its bytes.

use std::borrow::Cow;

use crate::error::Error;

/// go-yaml's limit on nested block collections and on nested flow collections.
pub(crate) const GO_YAML_MAX_DEPTH: usize = 10_000;

/// A text ready for saphyr-parser.
pub(crate) struct Prepared<'a> {
    pub text: Cow<'a, str>,
    /// An error go-yaml reports at this position, unless the parser meets an earlier one.
    pub deferred: Option<Error>,
}

impl Prepared<'_> {
    /// The error to report when the parser found `error`: go-yaml's error found by the
    /// model if it comes first.
    ///
    /// saphyr-parser names the start of a scalar for some errors inside it, so its
    /// complaints about tabs (which the model judges as go-yaml does) and about a
    /// comment between the lines of a plain scalar (a YAML 1.2 rule) never win.
    pub fn first_error(&mut self, error: Error) -> Error {
        match self.deferred.take() {
            Some(deferred)
                if (deferred.line, deferred.column) <= (error.line, error.column)
                    || error.message.contains("tab")
                    || error.message.contains("comment intercepting")
                    || error.message.contains("before directive") =>
            {
                deferred
            }
            _ => error,
        }
    }
}

const TAB: u8 = 1;
const CONTROL: u8 = 2;
const NON_ASCII: u8 = 4;
const BACKSLASH: u8 = 8;

/// The classes of bytes present in `bytes`. Every text Helm reads goes through this, so
/// it is written to be vectorised: comparisons OR-ed over blocks, no early exits.
fn classes(bytes: &[u8]) -> u8 {
    let (mut tab, mut control, mut high, mut backslash) = (false, false, false, false);
    for chunk in bytes.chunks(64) {
        for &b in chunk {
            tab |= b == b'\t';
            control |= ((b < 0x20) & (b != b'\t') & (b != b'\n') & (b != b'\r')) | (b == 0x7f);
            high |= b >= 0x80;
            backslash |= b == b'\\';
        }
    }
    let class = |present: bool, class: u8| if present { class } else { 0 };
    class(tab, TAB) | class(control, CONTROL) | class(high, NON_ASCII) | class(backslash, BACKSLASH)
}

/// Checks `text` as go-yaml's reader does and rewrites what saphyr-parser would read
/// differently from go-yaml's scanner (see the module documentation).
///
/// With `indent_quotes`, the text is also rewritten where saphyr-parser wants the lines
/// of a quoted scalar or a flow collection indented and go-yaml does not: each such
/// line gets spaces in front, which both skip. This is for texts saphyr-parser refused
/// for that reason.
pub(crate) fn prepare(text: &str, indent_quotes: bool) -> Result<Prepared<'_>, Error> {
    let bytes = text.as_bytes();
    let seen = classes(bytes);
    let mut interesting = seen & TAB != 0;
    if seen & CONTROL != 0 {
        return Err(control_characters());
    }
    if seen & NON_ASCII != 0 {
        // The characters that matter start with one of three bytes (C1 controls and NEL
        // C2 xx, LS and PS E2 80 xx, U+FFFE and U+FFFF EF BF xx); most texts with other
        // UTF-8 have none of them.
        for at in memchr::memchr3_iter(0xc2, 0xe2, 0xef, bytes) {
            match (bytes[at], bytes.get(at + 1), bytes.get(at + 2)) {
                (0xc2, Some(0x85), _) => interesting = true,
                (0xc2, Some(0x80..=0x9f), _) => return Err(control_characters()),
                (0xe2, Some(0x80), Some(0xa8 | 0xa9)) => interesting = true,
                (0xef, Some(0xbf), Some(0xbe | 0xbf)) => return Err(control_characters()),
                // A byte order mark past the start, which go-yaml skips at a line's start.
                (0xef, Some(0xbb), Some(0xbf)) if at > 0 => interesting = true,
                _ => {}
            }
        }
    }
    if !interesting {
        // A flow collection that goes on past its line, where a key that spans lines is
        // one go-yaml drops (and YAML 1.2 keeps).
        interesting = memchr::memchr2(b'[', b'{', bytes).is_some() && flow_open_past_a_line(bytes);
    }
    if !interesting {
        // An anchor or alias name go-yaml ends at a character that cannot end it.
        interesting = memchr::memchr2_iter(b'&', b'*', bytes).any(|at| bad_anchor_name(bytes, at));
    }
    if seen & BACKSLASH != 0 && !interesting {
        interesting = memchr::memchr_iter(b'\\', bytes)
            .any(|at| matches!(bytes.get(at + 1), Some(b'/' | b'\'')));
    }
    if !interesting
        && (bytes.first() == Some(&b'%') || memchr::memmem::find(bytes, b"\n%").is_some())
    {
        interesting = true;
    }
    if !interesting {
        // A `?` that may be in a flow collection, where go-yaml reads it as a key
        // indicator whatever follows it, and ends a plain scalar at it.
        interesting =
            memchr::memchr(b'?', bytes).is_some() && memchr::memchr2(b'[', b'{', bytes).is_some();
    }
    if !interesting && !indent_quotes {
        return Ok(Prepared {
            text: Cow::Borrowed(text),
            deferred: None,
        });
    }
    let mut scanner = Scanner::new(bytes);
    scanner.indent_quotes = indent_quotes;
    let deferred = match scanner.run() {
        Stop::End | Stop::Unmodelled => None,
        Stop::Error(error) => Some(error),
    };
    // Tabs after a plain scalar's last word are rewritten when the scalar ends, after
    // any edits inside it; `apply` wants text order.
    scanner.edits.sort_by_key(|edit| edit.at);
    Ok(Prepared {
        text: apply(text, &scanner.edits),
        deferred,
    })
}

/// go-yaml's error for `text` when its flow collections nest deeper than go-yaml reads
/// (`exceeded max depth of 10000`), found by running the model over the whole text; for
/// when saphyr-parser has given up at its own, lower, limit.
pub(crate) fn flow_depth_error(text: &str) -> Option<Error> {
    match Scanner::new(text.as_bytes()).run() {
        Stop::Error(error) if error.message.starts_with("exceeded max depth") => Some(error),
        _ => None,
    }
}

/// Whether saphyr-parser reads `text` as go-yaml does as it is: [`prepare`] would neither
/// refuse it, nor rewrite it, nor defer an error. Said of the parts of a text cut at the
/// start of lines where go-yaml's scanner is in the same state as at the start of a
/// part read alone (outside flow collections, quotes and block scalars, at a line no
/// less indented than the part's lines), it is said of the text: control characters,
/// line breaks, escapes and directives are judged within their line, and tabs by that
/// state.
pub(crate) fn is_plain(text: &str) -> bool {
    matches!(
        prepare(text, false),
        Ok(Prepared {
            text: Cow::Borrowed(_),
            deferred: None,
        })
    )
}

/// What go-yaml's scanner finds wrong with a directive line (`%` included), if anything:
/// a name of letters, digits, `-` and `_`; `YAML` with a version of one to nine digits
/// on each side of a dot; `TAG` with a `!` handle and a prefix; nothing else (go-yaml
/// refuses directives it does not know); then only a comment.
fn directive_syntax(line: &str) -> Option<&'static str> {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let is_blank = |c: char| c == ' ' || c == '\t';
    let rest = &line[1..];
    let name_end = rest.find(|c| !is_name(c)).unwrap_or(rest.len());
    let (name, mut rest) = rest.split_at(name_end);
    if name.is_empty() {
        return Some("could not find expected directive name");
    }
    if rest.starts_with(|c| !is_blank(c)) {
        return Some("found unexpected non-alphabetical character");
    }
    match name {
        "YAML" => {
            rest = rest.trim_start_matches(is_blank);
            for part in 0..2 {
                let digits = rest
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(rest.len());
                if digits > 9 {
                    return Some("found extremely long version number");
                }
                if digits == 0 {
                    return Some("did not find expected version number");
                }
                rest = &rest[digits..];
                if part == 0 {
                    match rest.strip_prefix('.') {
                        Some(after) => rest = after,
                        None => return Some("did not find expected digit or '.' character"),
                    }
                }
            }
        }
        "TAG" => {
            rest = rest.trim_start_matches(is_blank);
            let Some(handle) = rest.strip_prefix('!') else {
                return Some("did not find expected '!'");
            };
            let handle_end = handle.find(|c| !is_name(c)).unwrap_or(handle.len());
            let after_name = &handle[handle_end..];
            rest = match after_name.strip_prefix('!') {
                Some(after) => after,
                // A handle is `!`, or `!name!`.
                None if handle_end == 0 => after_name,
                None => return Some("did not find expected '!'"),
            };
            if !rest.starts_with(is_blank) {
                return Some("did not find expected whitespace");
            }
            rest = rest.trim_start_matches(is_blank);
            let prefix_end = rest.find(is_blank).unwrap_or(rest.len());
            if prefix_end == 0 {
                return Some("did not find expected tag URI");
            }
            rest = &rest[prefix_end..];
        }
        _ => return Some("found unknown directive name"),
    }
    let rest = rest.trim_start_matches(is_blank);
    if rest.is_empty() || rest.starts_with('#') {
        None
    } else {
        Some("did not find expected comment or line break")
    }
}

/// Whether a `[` or `{` may still be open where its line ends (brackets in quotes
/// count too: this only decides whether the model runs). One pass: at a line's end,
/// some bracket is open if the count of opens less closes is above its lowest point.
fn flow_open_past_a_line(bytes: &[u8]) -> bool {
    let (mut balance, mut lowest) = (0isize, 0isize);
    for &b in bytes {
        match b {
            b'[' | b'{' => balance += 1,
            b']' | b'}' => {
                balance -= 1;
                lowest = lowest.min(balance);
            }
            b'\n' if balance > lowest => return true,
            b'\n' => (balance, lowest) = (0, 0),
            _ => {}
        }
    }
    false
}

/// Whether `&` or `*` at `at` would start an anchor or alias whose name go-yaml refuses
/// (if it starts a token at all, which the scanner model finds out).
fn bad_anchor_name(bytes: &[u8], at: usize) -> bool {
    let is_name = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-');
    let name = bytes[at + 1..].iter().take_while(|b| is_name(b)).count();
    match bytes.get(at + 1 + name) {
        None | Some(b' ' | b'\t' | b'\r' | b'\n') => name == 0,
        Some(b'?' | b':' | b',' | b']' | b'}' | b'%' | b'@' | b'`') => name == 0,
        Some(_) => true,
    }
}

fn control_characters() -> Error {
    Error::at(0, 0, "control characters are not allowed")
}

/// A replacement of `len` bytes at `at`.
struct Edit {
    at: usize,
    len: usize,
    with: Cow<'static, str>,
}

fn apply<'a>(text: &'a str, edits: &[Edit]) -> Cow<'a, str> {
    if edits.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + edits.len());
    let mut from = 0;
    for edit in edits {
        out.push_str(&text[from..edit.at]);
        out.push_str(&edit.with);
        from = edit.at + edit.len;
    }
    out.push_str(&text[from..]);
    Cow::Owned(out)
}

/// How a scan ended.
enum Stop {
    /// The end of the text.
    End,
    /// go-yaml fails here for a reason the model leaves to saphyr-parser (which fails
    /// too, with go-yaml's message mapped by [`Error::go_yaml_message`]).
    Unmodelled,
    /// go-yaml fails here with this error.
    Error(Error),
}

/// A place where a simple key (`key:` without `?`) may have started.
#[derive(Clone, Copy, Default)]
struct SimpleKey {
    possible: bool,
    required: bool,
    line: usize,
    column: usize,
    index: usize,
}

/// A model of go-yaml v2's scanner that keeps only what decides how tabs and line
/// breaks are read: no tokens are made.
struct Scanner<'a> {
    text: &'a [u8],
    pos: usize,
    /// 0-based line, column and character index, as go-yaml counts them.
    line: usize,
    column: usize,
    index: usize,
    flow_level: usize,
    /// The brackets of the open flow collections.
    flow_kinds: Vec<u8>,
    simple_key_allowed: bool,
    indent: isize,
    indents: Vec<isize>,
    /// One per flow level, and one for the block context.
    simple_keys: Vec<SimpleKey>,
    edits: Vec<Edit>,
    /// Whether a `%YAML` directive was seen in the current document.
    version_seen: bool,
    /// See [`prepare`].
    indent_quotes: bool,
    /// Whether the last token in a flow collection completed a node (a scalar, an alias,
    /// a closed collection), so that go-yaml's parser wants a `,` or the end next.
    after_node: bool,
}

/// How a line break inside a quoted scalar is rewritten: LS and PS stay characters there.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Within {
    Quotes,
    Elsewhere,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a [u8]) -> Scanner<'a> {
        Scanner {
            text,
            pos: 0,
            line: 0,
            column: 0,
            index: 0,
            flow_level: 0,
            flow_kinds: Vec::new(),
            simple_key_allowed: true,
            indent: -1,
            indents: Vec::new(),
            simple_keys: vec![SimpleKey::default()],
            edits: Vec::new(),
            version_seen: false,
            indent_quotes: false,
            after_node: false,
        }
    }

    fn at(&self, k: usize) -> u8 {
        self.text.get(self.pos + k).copied().unwrap_or(0)
    }

    fn is_end(&self, k: usize) -> bool {
        self.pos + k >= self.text.len()
    }

    /// The length of the line break at `pos + k`, if there is one (go-yaml's breaks).
    fn break_len(&self, k: usize) -> Option<usize> {
        match (self.at(k), self.at(k + 1), self.at(k + 2)) {
            (b'\r', b'\n', _) => Some(2),
            (b'\r' | b'\n', _, _) => Some(1),
            (0xc2, 0x85, _) => Some(2),
            (0xe2, 0x80, 0xa8 | 0xa9) => Some(3),
            _ => None,
        }
    }

    fn is_blank(&self, k: usize) -> bool {
        matches!(self.at(k), b' ' | b'\t')
    }

    fn is_breakz(&self, k: usize) -> bool {
        self.is_end(k) || self.break_len(k).is_some()
    }

    fn is_blankz(&self, k: usize) -> bool {
        self.is_blank(k) || self.is_breakz(k)
    }

    /// Moves over one character.
    fn skip(&mut self) {
        let len = match self.at(0) {
            0..=0x7f => 1,
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            _ => 4,
        };
        self.pos = (self.pos + len).min(self.text.len());
        self.column += 1;
        self.index += 1;
    }

    /// Moves over a tab that go-yaml reads as a space, making it one.
    fn skip_tab_as_space(&mut self) {
        self.edit(1, " ");
        self.skip();
    }

    fn edit(&mut self, len: usize, with: &'static str) {
        self.edits.push(Edit {
            at: self.pos,
            len,
            with: Cow::Borrowed(with),
        });
    }

    /// Moves over a line break, rewriting the ones saphyr-parser does not know.
    fn skip_break(&mut self, within: Within) {
        let Some(len) = self.break_len(0) else {
            return;
        };
        match self.at(0) {
            0xc2 => self.edit(2, "\r\n"),
            0xe2 if within == Within::Elsewhere => self.edit(3, "\n"),
            _ => {}
        }
        self.pos += len;
        self.line += 1;
        self.column = 0;
        self.index += 1;
    }

    fn error(&self, message: &str) -> Stop {
        Stop::Error(Error::at(self.line + 1, self.column + 1, message))
    }

    fn run(&mut self) -> Stop {
        loop {
            if let Some(stop) = self.skip_to_next_token() {
                return stop;
            }
            self.unroll_indent(self.column as isize);
            if self.is_end(0) {
                return Stop::End;
            }
            let c = self.at(0);
            let stop = if self.column == 0 && c == b'%' {
                self.directive()
            } else if self.column == 0 && self.document_indicator() {
                self.unroll_indent(-1);
                if !self.remove_simple_key() {
                    return Stop::Unmodelled;
                }
                self.simple_key_allowed = false;
                if c == b'-' {
                    self.version_seen = false;
                }
                for _ in 0..3 {
                    self.skip();
                }
                None
            } else {
                self.token(c)
            };
            if let Some(stop) = stop {
                return stop;
            }
        }
    }

    fn document_indicator(&self) -> bool {
        let c = self.at(0);
        (c == b'-' || c == b'.') && self.at(1) == c && self.at(2) == c && self.is_blankz(3)
    }

    /// go-yaml's `scan_to_next_token`: spaces, the tabs it allows, comments and line
    /// breaks. A tab it does not skip is the next "token", which is an error.
    fn skip_to_next_token(&mut self) -> Option<Stop> {
        loop {
            if self.column == 0 && self.text[self.pos..].starts_with("\u{feff}".as_bytes()) {
                // saphyr-parser refuses it inside a stream.
                if self.pos > 0 {
                    self.edits.push(Edit {
                        at: self.pos,
                        len: 3,
                        with: Cow::Borrowed(""),
                    });
                }
                self.skip();
            }
            loop {
                match self.at(0) {
                    b' ' => self.skip(),
                    b'\t' if self.flow_level > 0 || !self.simple_key_allowed => {
                        self.skip_tab_as_space()
                    }
                    _ => break,
                }
            }
            if self.at(0) == b'#' {
                while !self.is_breakz(0) {
                    self.skip();
                }
            }
            if self.break_len(0).is_some() {
                self.skip_break(Within::Elsewhere);
                if self.flow_level == 0 {
                    self.simple_key_allowed = true;
                } else {
                    self.indent_continuation();
                }
            } else {
                return None;
            }
        }
    }

    /// One token at the current position (not a directive or document indicator).
    fn token(&mut self, c: u8) -> Option<Stop> {
        let flow = self.flow_level > 0;
        let after_node = std::mem::replace(&mut self.after_node, false);
        match c {
            b'[' | b'{' => {
                if !self.save_simple_key() {
                    return Some(Stop::Unmodelled);
                }
                self.simple_keys.push(SimpleKey::default());
                self.flow_level += 1;
                self.flow_kinds.push(c);
                if self.flow_level > GO_YAML_MAX_DEPTH {
                    return Some(Stop::Error(Error::at(
                        self.line + 1,
                        self.column + 1,
                        format!("exceeded max depth of {GO_YAML_MAX_DEPTH}"),
                    )));
                }
                self.simple_key_allowed = true;
                self.skip();
            }
            b']' | b'}' => {
                if !self.remove_simple_key() {
                    return Some(Stop::Unmodelled);
                }
                if self.flow_level > 0 {
                    self.flow_level -= 1;
                    self.simple_keys.pop();
                    self.flow_kinds.pop();
                }
                self.simple_key_allowed = false;
                self.after_node = true;
                self.skip();
            }
            b',' => {
                if !self.remove_simple_key() {
                    return Some(Stop::Unmodelled);
                }
                self.simple_key_allowed = true;
                self.skip();
            }
            b'-' if self.is_blankz(1) => {
                if !flow {
                    if !self.simple_key_allowed {
                        return Some(
                            self.error("block sequence entries are not allowed in this context"),
                        );
                    }
                    if !self.roll_indent(self.column) {
                        return Some(Stop::Unmodelled);
                    }
                }
                if !self.remove_simple_key() {
                    return Some(Stop::Unmodelled);
                }
                self.simple_key_allowed = true;
                self.skip();
            }
            b'?' if flow || self.is_blankz(1) => {
                if flow && after_node {
                    // A key indicator where go-yaml's parser wants the entry to end; in
                    // YAML 1.2 (and saphyr-parser) this `?` is part of a plain scalar.
                    return Some(self.error(self.flow_entry_end_expected()));
                }
                if flow && !self.is_blankz(1) {
                    // go-yaml's key indicator needs no blank after it in a flow
                    // collection; saphyr-parser's does.
                    self.edits.push(Edit {
                        at: self.pos + 1,
                        len: 0,
                        with: Cow::Borrowed(" "),
                    });
                }
                if !flow {
                    if !self.simple_key_allowed {
                        return Some(self.error("mapping keys are not allowed in this context"));
                    }
                    if !self.roll_indent(self.column) {
                        return Some(Stop::Unmodelled);
                    }
                }
                if !self.remove_simple_key() {
                    return Some(Stop::Unmodelled);
                }
                self.simple_key_allowed = !flow;
                self.skip();
            }
            b':' if flow || self.is_blankz(1) => return self.value(),
            b'*' | b'&' => {
                if !self.save_simple_key() {
                    return Some(Stop::Unmodelled);
                }
                self.simple_key_allowed = false;
                self.skip();
                let start = self.pos;
                while self.at(0).is_ascii_alphanumeric() || matches!(self.at(0), b'_' | b'-') {
                    self.skip();
                }
                if self.pos == start
                    || !(self.is_blankz(0)
                        || matches!(
                            self.at(0),
                            b'?' | b':' | b',' | b']' | b'}' | b'%' | b'@' | b'`'
                        ))
                {
                    return Some(self.error(if c == b'&' {
                        "while scanning an anchor, did not find expected alphabetic or numeric character"
                    } else {
                        "while scanning an alias, did not find expected alphabetic or numeric character"
                    }));
                }
                self.after_node = c == b'*';
            }
            b'!' => {
                if !self.save_simple_key() {
                    return Some(Stop::Unmodelled);
                }
                self.simple_key_allowed = false;
                let ends_tag = |scanner: &Self| {
                    scanner.is_blankz(0)
                        || (flow && matches!(scanner.at(0), b',' | b']' | b'}' | b'[' | b'{'))
                };
                while !ends_tag(self) {
                    self.skip();
                }
            }
            b'|' | b'>' if !flow => {
                if !self.remove_simple_key() {
                    return Some(Stop::Unmodelled);
                }
                self.simple_key_allowed = true;
                return self.block_scalar();
            }
            b'\'' | b'"' => {
                if !self.save_simple_key() {
                    return Some(Stop::Unmodelled);
                }
                self.simple_key_allowed = false;
                self.after_node = true;
                return self.quoted_scalar(c == b'\'');
            }
            b'\t' => {
                return Some(self.error(
                    "while scanning for the next token, found character that cannot start any token",
                ));
            }
            _ if self.starts_plain(c) => {
                if !self.save_simple_key() {
                    return Some(Stop::Unmodelled);
                }
                self.simple_key_allowed = false;
                self.after_node = true;
                return self.plain_scalar();
            }
            _ => return Some(Stop::Unmodelled),
        }
        None
    }

    fn starts_plain(&self, c: u8) -> bool {
        let indicator = matches!(
            c,
            b'-' | b'?'
                | b':'
                | b','
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b'#'
                | b'&'
                | b'*'
                | b'!'
                | b'|'
                | b'>'
                | b'\''
                | b'"'
                | b'%'
                | b'@'
                | b'`'
        );
        !(self.is_blankz(0) || indicator)
            || (c == b'-' && !self.is_blank(1))
            || (self.flow_level == 0 && (c == b'?' || c == b':') && !self.is_blankz(1))
    }

    /// What go-yaml's parser says when the innermost flow collection's entry should
    /// end (with `,` or the closing bracket) and something else comes.
    fn flow_entry_end_expected(&self) -> &'static str {
        match self.flow_kinds.last() {
            Some(b'{') => "while parsing a flow mapping, did not find expected ',' or '}'",
            _ => "while parsing a flow sequence, did not find expected ',' or ']'",
        }
    }

    /// A `:` value indicator.
    fn value(&mut self) -> Option<Stop> {
        let flow = self.flow_level > 0;
        let (line, index) = (self.line, self.index);
        let key = self
            .simple_keys
            .last_mut()
            .expect("one simple key slot per level");
        let valid = key.possible && key.line == line && key.index + 1024 >= index;
        if key.possible && !valid && key.required {
            return Some(Stop::Unmodelled);
        }
        if key.possible && !valid && flow {
            // The key started on an earlier line, so go-yaml's scanner dropped it: the
            // `:` is a value with no key, after an entry that is already complete.
            return Some(self.error(self.flow_entry_end_expected()));
        }
        if valid {
            key.possible = false;
            let column = key.column;
            if !self.roll_indent(column) {
                return Some(Stop::Unmodelled);
            }
            self.simple_key_allowed = false;
        } else {
            key.possible = false;
            if !flow {
                if !self.simple_key_allowed {
                    return Some(self.error("mapping values are not allowed in this context"));
                }
                if !self.roll_indent(self.column) {
                    return Some(Stop::Unmodelled);
                }
            }
            self.simple_key_allowed = !flow;
        }
        self.skip();
        None
    }

    /// Whether a simple key could be saved (false: go-yaml fails, "could not find
    /// expected ':'").
    fn save_simple_key(&mut self) -> bool {
        if !self.simple_key_allowed {
            return true;
        }
        let required = self.flow_level == 0 && self.indent == self.column as isize;
        if !self.remove_simple_key() {
            return false;
        }
        *self
            .simple_keys
            .last_mut()
            .expect("one simple key slot per level") = SimpleKey {
            possible: true,
            required,
            line: self.line,
            column: self.column,
            index: self.index,
        };
        true
    }

    fn remove_simple_key(&mut self) -> bool {
        let key = self
            .simple_keys
            .last_mut()
            .expect("one simple key slot per level");
        if key.possible && key.required {
            // go-yaml gives up only if the key is stale; a required key that is still
            // valid here means a `:` is missing after it on this line.
            return false;
        }
        key.possible = false;
        true
    }

    fn roll_indent(&mut self, column: usize) -> bool {
        if self.flow_level > 0 {
            return true;
        }
        if self.indent < column as isize {
            self.indents.push(self.indent);
            self.indent = column as isize;
            if self.indents.len() > GO_YAML_MAX_DEPTH {
                return false;
            }
        }
        true
    }

    fn unroll_indent(&mut self, column: isize) {
        if self.flow_level > 0 {
            return;
        }
        while self.indent > column {
            self.indent = self.indents.pop().unwrap_or(-1);
        }
    }

    /// A directive line. `%YAML` must say 1.1, once per document.
    fn directive(&mut self) -> Option<Stop> {
        self.unroll_indent(-1);
        if !self.remove_simple_key() {
            return Some(Stop::Unmodelled);
        }
        self.simple_key_allowed = false;
        let start = (self.line, self.column);
        let line_end = self.text[self.pos..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
            .map_or(self.text.len(), |n| self.pos + n);
        let directive = String::from_utf8_lossy(&self.text[self.pos..line_end]).into_owned();
        if let Some(problem) = directive_syntax(&directive) {
            return Some(Stop::Error(Error::at(
                start.0 + 1,
                start.1 + 1,
                format!("while scanning a directive, {problem}"),
            )));
        }
        let mut words = directive.split([' ', '\t']).filter(|w| !w.is_empty());
        if words.next() == Some("%YAML") {
            let incompatible = match words.next() {
                Some(version) => version != "1.1",
                None => false,
            };
            let problem = if self.version_seen {
                Some("found duplicate %YAML directive")
            } else if incompatible {
                Some("found incompatible YAML document")
            } else {
                None
            };
            if let Some(problem) = problem {
                // A parser error: go-yaml names the directive's 0-based line.
                return Some(Stop::Error(Error::at(
                    start.0 + 1,
                    start.1 + 1,
                    format!("while parsing a document start, {problem}"),
                )));
            }
            self.version_seen = true;
        }
        while !self.is_breakz(0) {
            if self.at(0) == b'\t' {
                self.skip_tab_as_space();
            } else {
                self.skip();
            }
        }
        None
    }

    /// `|` or `>` and the block scalar's lines.
    fn block_scalar(&mut self) -> Option<Stop> {
        self.skip();
        let mut increment = 0usize;
        let digit = |b: u8| b.is_ascii_digit().then(|| (b - b'0') as usize);
        if matches!(self.at(0), b'+' | b'-') {
            self.skip();
            if let Some(d) = digit(self.at(0)) {
                if d == 0 {
                    return Some(Stop::Unmodelled);
                }
                increment = d;
                self.skip();
            }
        } else if let Some(d) = digit(self.at(0)) {
            if d == 0 {
                return Some(Stop::Unmodelled);
            }
            increment = d;
            self.skip();
            if matches!(self.at(0), b'+' | b'-') {
                self.skip();
            }
        }
        while self.is_blank(0) {
            if self.at(0) == b'\t' {
                self.skip_tab_as_space();
            } else {
                self.skip();
            }
        }
        if self.at(0) == b'#' {
            while !self.is_breakz(0) {
                self.skip();
            }
        }
        if !self.is_breakz(0) {
            return Some(Stop::Unmodelled);
        }
        self.skip_break(Within::Elsewhere);
        let mut indent = 0usize;
        if increment > 0 {
            indent = if self.indent >= 0 {
                self.indent as usize + increment
            } else {
                increment
            };
        }
        if let Some(stop) = self.block_scalar_breaks(&mut indent) {
            return Some(stop);
        }
        while self.column == indent && !self.is_end(0) {
            while !self.is_breakz(0) {
                self.skip();
            }
            if self.is_end(0) {
                break;
            }
            self.skip_break(Within::Elsewhere);
            if let Some(stop) = self.block_scalar_breaks(&mut indent) {
                return Some(stop);
            }
        }
        None
    }

    /// The indentation and empty lines before a block scalar's next line; works out the
    /// indentation from the first non-empty line if the header did not give it.
    fn block_scalar_breaks(&mut self, indent: &mut usize) -> Option<Stop> {
        let mut max_indent = 0;
        loop {
            while (*indent == 0 || self.column < *indent) && self.at(0) == b' ' {
                self.skip();
            }
            max_indent = max_indent.max(self.column);
            if (*indent == 0 || self.column < *indent) && self.at(0) == b'\t' {
                return Some(self.error(
                    "while scanning a block scalar, found a tab character where an indentation space is expected",
                ));
            }
            if self.break_len(0).is_none() {
                break;
            }
            self.skip_break(Within::Elsewhere);
        }
        if *indent == 0 {
            *indent = max_indent.max((self.indent + 1).max(1) as usize);
        }
        None
    }

    /// A single- or double-quoted scalar.
    fn quoted_scalar(&mut self, single: bool) -> Option<Stop> {
        let quote = if single { b'\'' } else { b'"' };
        self.skip();
        loop {
            if self.column == 0 && self.document_indicator() || self.is_end(0) {
                return Some(Stop::Unmodelled);
            }
            let mut leading_blanks = false;
            while !self.is_blankz(0) {
                let c = self.at(0);
                if single && c == b'\'' && self.at(1) == b'\'' {
                    self.skip();
                    self.skip();
                } else if c == quote {
                    break;
                } else if !single && c == b'\\' && self.break_len(1).is_some() {
                    self.skip();
                    // An escaped line break joins the lines; saphyr-parser must see a
                    // line break it knows there too.
                    if self.at(0) == 0xe2 {
                        self.edit(3, "\n");
                    }
                    self.skip_break(Within::Quotes);
                    leading_blanks = true;
                    break;
                } else if !single && c == b'\\' {
                    let code_length = match self.at(1) {
                        b'/' => {
                            return Some(self.error(
                                "while scanning a quoted scalar, found unknown escape character",
                            ));
                        }
                        b'\'' => {
                            self.edit(2, "\\x27");
                            0
                        }
                        b'x' => 2,
                        b'u' => 4,
                        b'U' => 8,
                        b'0' | b'a' | b'b' | b't' | b'\t' | b'n' | b'v' | b'f' | b'r' | b'e'
                        | b' ' | b'"' | b'\\' | b'N' | b'_' | b'L' | b'P' => 0,
                        _ => return Some(Stop::Unmodelled),
                    };
                    self.skip();
                    self.skip();
                    for _ in 0..code_length {
                        if !self.at(0).is_ascii_hexdigit() {
                            return Some(Stop::Unmodelled);
                        }
                        self.skip();
                    }
                } else {
                    self.skip();
                }
            }
            if self.at(0) == quote {
                self.skip();
                return None;
            }
            while self.is_blank(0) || self.break_len(0).is_some() {
                if self.at(0) == b'\t' && leading_blanks {
                    // Leading white space of a continuation line is not content.
                    self.skip_tab_as_space();
                } else if self.is_blank(0) {
                    self.skip();
                } else {
                    self.skip_break(Within::Quotes);
                    leading_blanks = true;
                    self.indent_continuation();
                }
            }
        }
    }

    /// A plain scalar, which may go on over several lines.
    fn plain_scalar(&mut self) -> Option<Stop> {
        let indent = self.indent + 1;
        let mut leading_blanks = false;
        // Tabs in the white space after the last word, which is content only if another
        // word follows on the same line.
        let mut trailing_tabs: Vec<usize> = Vec::new();
        loop {
            if self.column == 0 && self.document_indicator() || self.at(0) == b'#' {
                break;
            }
            while !self.is_blankz(0) {
                let c = self.at(0);
                if c == b':' && self.is_blankz(1) {
                    break;
                }
                if self.flow_level > 0 && matches!(c, b',' | b'?' | b'[' | b']' | b'{' | b'}') {
                    break;
                }
                leading_blanks = false;
                trailing_tabs.clear();
                self.skip();
            }
            if !(self.is_blank(0) || self.break_len(0).is_some()) {
                break;
            }
            while self.is_blank(0) || self.break_len(0).is_some() {
                if self.is_blank(0) {
                    let tab = self.at(0) == b'\t';
                    if tab && leading_blanks && (self.column as isize) < indent {
                        return Some(self.error(
                            "while scanning a plain scalar, found a tab character that violates indentation",
                        ));
                    }
                    if tab && leading_blanks {
                        self.skip_tab_as_space();
                    } else {
                        if tab {
                            trailing_tabs.push(self.pos);
                        }
                        self.skip();
                    }
                } else {
                    leading_blanks = true;
                    self.trailing_tabs_to_spaces(&mut trailing_tabs);
                    self.skip_break(Within::Elsewhere);
                    if self.flow_level > 0 {
                        self.indent_continuation();
                    }
                }
            }
            if self.flow_level == 0 && (self.column as isize) < indent {
                break;
            }
        }
        self.trailing_tabs_to_spaces(&mut trailing_tabs);
        if leading_blanks {
            self.simple_key_allowed = true;
        }
        None
    }

    /// With `indent_quotes`, spaces at the start of a line inside a quoted scalar or a
    /// flow collection, where leading white space means nothing to go-yaml and
    /// saphyr-parser wants the line indented past the enclosing block.
    fn indent_continuation(&mut self) {
        if self.indent_quotes {
            let spaces = (self.indent + 2).max(0) as usize;
            self.edits.push(Edit {
                at: self.pos,
                len: 0,
                with: Cow::Owned(" ".repeat(spaces)),
            });
        }
    }

    /// White space that go-yaml drops after a scalar's last word.
    fn trailing_tabs_to_spaces(&mut self, tabs: &mut Vec<usize>) {
        for at in tabs.drain(..) {
            self.edits.push(Edit {
                at,
                len: 1,
                with: Cow::Borrowed(" "),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepare(text: &str) -> Result<Prepared<'_>, Error> {
        super::prepare(text, false)
    }

    fn rewritten(text: &str) -> String {
        prepare(text).unwrap().text.into_owned()
    }

    fn deferred(text: &str) -> String {
        prepare(text)
            .unwrap()
            .deferred
            .expect("go-yaml refuses this")
            .go_yaml_message()
    }

    #[test]
    fn texts_without_special_characters_are_not_copied() {
        let text = "a: b\nc: [1, 2]\ndescription: \"quotes \\\" and é\"\n";
        assert!(matches!(prepare(text).unwrap().text, Cow::Borrowed(_)));
    }

    #[test]
    fn tabs_go_yaml_skips_become_spaces_and_content_tabs_stay() {
        assert_eq!(rewritten("a:\tb\n"), "a: b\n");
        assert_eq!(rewritten("a: x\ty\t# c\t\n"), "a: x\ty # c\t\n");
        assert_eq!(rewritten("a: \"x\ty\"\n"), "a: \"x\ty\"\n");
        assert_eq!(
            rewritten("a: |\n  x\ty\n\tz: 1\n").lines().nth(1),
            Some("  x\ty")
        );
        assert_eq!(rewritten("a: [1,\t2,\n\t3]\n"), "a: [1, 2,\n 3]\n");
        assert_eq!(rewritten("a: x\n  \ty\n"), "a: x\n   y\n");
        assert_eq!(rewritten("a: &x\tb\n"), "a: &x b\n");
    }

    #[test]
    fn tabs_go_yaml_refuses_are_its_errors() {
        assert_eq!(
            deferred("l:\n-\tb\n"),
            "line 2: found character that cannot start any token"
        );
        assert_eq!(
            deferred("? a\n:\tb\n"),
            "line 2: found character that cannot start any token"
        );
        assert_eq!(
            deferred("a: 1\n\t\nb: 2\n"),
            "line 2: found a tab character that violates indentation"
        );
        assert_eq!(
            deferred("a: |\n  x\n\ty\n"),
            "line 3: found a tab character where an indentation space is expected"
        );
        assert_eq!(
            deferred("\ta: 1\n"),
            "found character that cannot start any token"
        );
    }

    #[test]
    fn line_breaks_of_yaml_1_1() {
        assert_eq!(rewritten("a: x\u{85}y\n"), "a: x\r\ny\n");
        assert_eq!(rewritten("a: x\u{2028}y\n"), "a: x\ny\n");
        assert_eq!(rewritten("a: \"x\u{2028}y\"\n"), "a: \"x\u{2028}y\"\n");
    }

    #[test]
    fn control_characters_are_refused() {
        for text in ["a: x\u{1}y", "a: x\u{7f}", "a: \"\u{80}\"", "a: \u{fffe}"] {
            assert_eq!(
                prepare(text).err().map(|e| e.go_yaml_message()).as_deref(),
                Some("control characters are not allowed"),
                "{text:?}"
            );
        }
    }

    #[test]
    fn escapes_of_yaml_1_1() {
        assert_eq!(rewritten("a: \"it\\'s\"\n"), "a: \"it\\x27s\"\n");
        assert_eq!(rewritten("a: 'it\\'\n"), "a: 'it\\'\n");
        assert_eq!(deferred("a: \"x\\/y\"\n"), "found unknown escape character");
        assert!(prepare("a: x\\/y\n").unwrap().deferred.is_none());
    }

    #[test]
    fn yaml_directives() {
        assert!(
            prepare("%YAML 1.1\n---\na: 1\n")
                .unwrap()
                .deferred
                .is_none()
        );
        assert_eq!(
            deferred("%YAML 1.2\n---\na: 1\n"),
            "found incompatible YAML document"
        );
    }

    #[test]
    fn a_key_indicator_in_a_flow_collection_needs_no_blank_after_it() {
        assert_eq!(rewritten("a: [?x, ?]\n"), "a: [? x, ? ]\n");
        assert_eq!(rewritten("a: {?x: 1}\n"), "a: {? x: 1}\n");
        // Outside flow collections `?x` is a plain scalar for go-yaml too.
        assert!(matches!(
            prepare("a: ?x\nb: [1]\n").unwrap().text,
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_key_indicator_after_an_entry_in_a_flow_collection_is_go_yamls_error() {
        assert_eq!(
            deferred("a: [http://x?y=1]\n"),
            "did not find expected ',' or ']'"
        );
        assert_eq!(
            deferred("x: 1\na: [b ?]\n"),
            "line 1: did not find expected ',' or ']'"
        );
        assert_eq!(
            deferred("a: {b: \"c\"?}\n"),
            "did not find expected ',' or '}'"
        );
        assert!(prepare("a: [?, b?c]\n").unwrap().deferred.is_some());
        assert!(prepare("a: [\"b?c\", ? d]\n").unwrap().deferred.is_none());
    }
}
