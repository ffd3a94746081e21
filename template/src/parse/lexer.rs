//! Tokens of Go's text/template, produced on demand.
//!
//! The token boundaries, the trim-marker rules (`{{- ` and ` -}}` need a space, tab or
//! newline next to the dash) and the error texts follow Go's `text/template/parse`
//! lexer, because parse errors surface verbatim in Helm's output.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Error,
    Bool,
    Char,
    CharConstant,
    Complex,
    Assign,
    Declare,
    Eof,
    Field,
    Identifier,
    LeftDelim,
    LeftParen,
    Number,
    Pipe,
    RawString,
    RightDelim,
    RightParen,
    Space,
    String,
    Text,
    Variable,
    // Keywords.
    Block,
    Break,
    Continue,
    Dot,
    Define,
    Else,
    End,
    If,
    Nil,
    Range,
    Template,
    With,
}

impl Kind {
    /// Every kind, in declaration order: `ALL[k as usize] == k`.
    const ALL: [Kind; 33] = [
        Kind::Error,
        Kind::Bool,
        Kind::Char,
        Kind::CharConstant,
        Kind::Complex,
        Kind::Assign,
        Kind::Declare,
        Kind::Eof,
        Kind::Field,
        Kind::Identifier,
        Kind::LeftDelim,
        Kind::LeftParen,
        Kind::Number,
        Kind::Pipe,
        Kind::RawString,
        Kind::RightDelim,
        Kind::RightParen,
        Kind::Space,
        Kind::String,
        Kind::Text,
        Kind::Variable,
        Kind::Block,
        Kind::Break,
        Kind::Continue,
        Kind::Dot,
        Kind::Define,
        Kind::Else,
        Kind::End,
        Kind::If,
        Kind::Nil,
        Kind::Range,
        Kind::Template,
        Kind::With,
    ];

    pub(crate) fn is_keyword(self) -> bool {
        matches!(
            self,
            Kind::Block
                | Kind::Break
                | Kind::Continue
                | Kind::Dot
                | Kind::Define
                | Kind::Else
                | Kind::End
                | Kind::If
                | Kind::Nil
                | Kind::Range
                | Kind::Template
                | Kind::With
        )
    }
}

fn keyword(word: &str) -> Option<Kind> {
    Some(match word {
        "." => Kind::Dot,
        "block" => Kind::Block,
        "break" => Kind::Break,
        "continue" => Kind::Continue,
        "define" => Kind::Define,
        "else" => Kind::Else,
        "end" => Kind::End,
        "if" => Kind::If,
        "range" => Kind::Range,
        "nil" => Kind::Nil,
        "template" => Kind::Template,
        "with" => Kind::With,
        _ => return None,
    })
}

/// One token: its kind and where it is in the input ([`Lexer::text`] gives its text). It
/// is four small integers so that passing it around and keeping the parser's look-ahead
/// is copying two registers; an error token's message is kept by the lexer
/// ([`Lexer::error_message`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Item {
    pub kind: Kind,
    pub pos: u32,
    pub len: u32,
    pub line: u32,
}

impl Item {
    pub(crate) const EOF: Item = Item {
        kind: Kind::Eof,
        pos: 0,
        len: 0,
        line: 1,
    };

    pub(crate) fn pos(&self) -> usize {
        self.pos as usize
    }

    /// The item as two words. A 16-byte struct of four fields comes back from a call
    /// through memory, written as narrow stores and read as one wide load, which the CPU
    /// cannot forward: a stall per token. Two words come back in registers.
    #[inline(always)]
    fn pack(self) -> (u64, u64) {
        (
            self.kind as u64 | u64::from(self.pos) << 32,
            u64::from(self.len) | u64::from(self.line) << 32,
        )
    }

    #[inline(always)]
    fn unpack((first, second): (u64, u64)) -> Item {
        Item {
            kind: Kind::ALL
                .get(first as u8 as usize)
                .copied()
                .unwrap_or(Kind::Error),
            pos: (first >> 32) as u32,
            len: second as u32,
            line: (second >> 32) as u32,
        }
    }
}

/// Templates larger than this are refused before lexing, so that positions fit in a `u32`.
pub(crate) const MAX_INPUT: usize = u32::MAX as usize;

const LEFT_DELIM: &str = "{{";
const RIGHT_DELIM: &str = "}}";
const LEFT_COMMENT: &str = "/*";
const RIGHT_COMMENT: &str = "*/";
const TRIM_MARKER: u8 = b'-';
const TRIM_MARKER_LEN: usize = 2;

#[derive(Clone, Copy)]
enum State {
    Text,
    LeftDelim,
    Comment,
    RightDelim,
    InsideAction,
    Space,
    Identifier,
    Field,
    Variable,
    Char,
    Number,
    Quote,
    RawQuote,
    Done,
}

pub(crate) struct Lexer<'a> {
    input: &'a str,
    pos: usize,
    start: usize,
    /// Width of the last rune read, so `backup` can undo one `next`.
    width: usize,
    paren_depth: usize,
    line: usize,
    start_line: usize,
    /// `break`/`continue` are keywords only when no function of that name exists.
    break_ok: bool,
    continue_ok: bool,
    state: State,
    /// The message of the error token, once one has been produced.
    error: String,
    /// Whether the input carries bytes that are not UTF-8 (`gostr::source_text`).
    binary: bool,
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn is_space_byte(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

pub(crate) fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || is_go_digit(c)
}

/// Go's `unicode.IsDigit` is the Nd category; Rust's `is_numeric` is wider (it includes
/// letter-like numbers such as Ⅻ), so only decimal digits of any script are accepted.
fn is_go_digit(c: char) -> bool {
    c.is_ascii_digit() || (!c.is_ascii() && is_nd(c))
}

/// Decimal-digit (Nd) characters outside ASCII: every Nd block is a run of ten code points
/// starting at a zero; these are the starts of the blocks Go recognises.
fn is_nd(c: char) -> bool {
    const ZEROS: &[u32] = &[
        0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6,
        0x0D66, 0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0,
        0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0,
        0xAA50, 0xABF0, 0xFF10, 0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0,
        0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0,
        0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0,
        0x1E950, 0x1FBF0,
    ];
    let cp = c as u32;
    ZEROS.iter().any(|&z| (z..z + 10).contains(&cp))
}

fn has_left_trim_marker(s: &[u8]) -> bool {
    s.len() >= 2 && s[0] == TRIM_MARKER && is_space_byte(s[1])
}

fn has_right_trim_marker(s: &[u8]) -> bool {
    s.len() >= 2 && is_space_byte(s[0]) && s[1] == TRIM_MARKER
}

/// Text between actions is most of a template, so these two scans are the lexer's
/// inner loops: a byte count the compiler vectorises, and a SIMD search for `{`.
fn count_newlines(s: &str) -> usize {
    s.bytes().filter(|&b| b == b'\n').count()
}

fn find_left_delim(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(i) = memchr::memchr(b'{', &bytes[from..]) {
        let at = from + i;
        if bytes.get(at + 1) == Some(&b'{') {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

fn trailing_space_len(s: &str) -> usize {
    s.len() - s.trim_end_matches(is_space).len()
}

fn leading_space_len(s: &str) -> usize {
    s.len() - s.trim_start_matches(is_space).len()
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(input: &'a str, break_ok: bool, continue_ok: bool) -> Self {
        Lexer {
            input,
            pos: 0,
            start: 0,
            width: 0,
            paren_depth: 0,
            line: 1,
            start_line: 1,
            break_ok,
            continue_ok,
            state: State::Text,
            error: String::new(),
            binary: false,
        }
    }

    /// Reads `input` as carrying bytes that are not UTF-8 (`gostr::source_text`).
    pub(crate) fn carrying_bytes(mut self, binary: bool) -> Self {
        self.binary = binary;
        self
    }

    /// A character as an error names it: a carried byte is Go's `RuneError`, which is
    /// what Go's lexer decodes it to.
    fn shown(&self, c: char) -> String {
        match crate::gostr::source_byte(c) {
            Some(_) if self.binary => crate::print::unicode_notation('\u{FFFD}'),
            _ => crate::print::unicode_notation(c),
        }
    }

    /// The text of a token.
    pub(crate) fn text(&self, item: &Item) -> &'a str {
        &self.input[item.pos as usize..(item.pos + item.len) as usize]
    }

    /// The message of the error token produced last.
    pub(crate) fn error_message(&self) -> &str {
        &self.error
    }

    /// How Go names a token in "unexpected ..." parse errors.
    pub(crate) fn describe(&self, item: &Item) -> String {
        let text = self.text(item);
        match item.kind {
            Kind::Eof => "EOF".to_owned(),
            Kind::Error => self.error.clone(),
            k if k.is_keyword() => format!("<{text}>"),
            _ if text.chars().count() > 10 => {
                let head: String = text.chars().take(10).collect();
                format!("{}...", crate::print::quote(&head))
            }
            _ => crate::print::quote(text),
        }
    }

    fn rest(&self) -> &'a str {
        &self.input[self.pos..]
    }

    fn next_char(&mut self) -> Option<char> {
        let c = self.rest().chars().next();
        match c {
            Some(c) => {
                self.width = c.len_utf8();
                self.pos += self.width;
                if c == '\n' {
                    self.line += 1;
                }
            }
            None => self.width = 0,
        }
        c
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn backup(&mut self) {
        self.pos -= self.width;
        if self.width == 1 && self.input.as_bytes()[self.pos] == b'\n' {
            self.line -= 1;
        }
    }

    fn item(&mut self, kind: Kind) -> Item {
        let item = Item {
            kind,
            pos: self.start as u32,
            len: (self.pos - self.start) as u32,
            line: self.start_line as u32,
        };
        self.start = self.pos;
        self.start_line = self.line;
        item
    }

    fn ignore(&mut self) {
        self.line += count_newlines(&self.input[self.start..self.pos]);
        self.start = self.pos;
        self.start_line = self.line;
    }

    fn error(&mut self, message: String) -> Item {
        self.state = State::Done;
        self.error = message;
        Item {
            kind: Kind::Error,
            pos: self.start as u32,
            len: 0,
            line: self.start_line as u32,
        }
    }

    /// Skips a run of identifier characters. Templates are almost all ASCII, so bytes are
    /// scanned directly and only a non-ASCII byte goes through `char` decoding.
    fn skip_alphanumerics(&mut self) {
        loop {
            let rest = &self.input.as_bytes()[self.pos..];
            let ascii = rest
                .iter()
                .position(|&b| !(b.is_ascii_alphanumeric() || b == b'_'))
                .unwrap_or(rest.len());
            self.pos += ascii;
            self.width = 0;
            match self.peek() {
                Some(c) if !c.is_ascii() && is_alphanumeric(c) => {
                    self.next_char();
                }
                _ => return,
            }
        }
    }

    fn accept(&mut self, valid: &str) -> bool {
        match self.next_char() {
            Some(c) if valid.contains(c) => true,
            Some(_) => {
                self.backup();
                false
            }
            None => false,
        }
    }

    fn accept_run(&mut self, valid: &str) {
        while let Some(c) = self.next_char() {
            if !valid.contains(c) {
                self.backup();
                return;
            }
        }
    }

    /// The next token. After an error or EOF it keeps returning EOF.
    #[inline(always)]
    pub(crate) fn next_item(&mut self) -> Item {
        Item::unpack(self.next_packed())
    }

    #[inline(never)]
    fn next_packed(&mut self) -> (u64, u64) {
        self.lex_next().pack()
    }

    #[inline(always)]
    fn lex_next(&mut self) -> Item {
        loop {
            let produced = match self.state {
                State::Done => return self.item(Kind::Eof),
                State::Text => self.lex_text(),
                State::LeftDelim => self.lex_left_delim(),
                State::Comment => self.lex_comment(),
                State::RightDelim => self.lex_right_delim(),
                State::InsideAction => self.lex_inside_action(),
                State::Space => self.lex_space(),
                State::Identifier => self.lex_identifier(),
                State::Field => self.lex_field_or_variable(Kind::Field),
                State::Variable => self.lex_variable(),
                State::Char => self.lex_char(),
                State::Number => self.lex_number(),
                State::Quote => self.lex_quote(),
                State::RawQuote => self.lex_raw_quote(),
            };
            if let Some(item) = produced {
                return item;
            }
        }
    }

    fn lex_text(&mut self) -> Option<Item> {
        self.width = 0;
        if let Some(x) = find_left_delim(self.rest()) {
            self.pos += x;
            let after = &self.input.as_bytes()[self.pos + LEFT_DELIM.len()..];
            let trim = if has_left_trim_marker(after) {
                trailing_space_len(&self.input[self.start..self.pos])
            } else {
                0
            };
            self.pos -= trim;
            let mut out = None;
            if self.pos > self.start {
                self.line += count_newlines(&self.input[self.start..self.pos]);
                out = Some(self.item(Kind::Text));
            }
            self.pos += trim;
            self.ignore();
            self.state = State::LeftDelim;
            return out;
        }
        self.pos = self.input.len();
        if self.pos > self.start {
            self.line += count_newlines(&self.input[self.start..self.pos]);
            return Some(self.item(Kind::Text));
        }
        self.state = State::Done;
        Some(self.item(Kind::Eof))
    }

    fn at_right_delim(&self) -> (bool, bool) {
        let rest = self.rest().as_bytes();
        if has_right_trim_marker(rest)
            && rest[TRIM_MARKER_LEN..].starts_with(RIGHT_DELIM.as_bytes())
        {
            return (true, true);
        }
        (rest.starts_with(RIGHT_DELIM.as_bytes()), false)
    }

    fn lex_left_delim(&mut self) -> Option<Item> {
        self.pos += LEFT_DELIM.len();
        let trim = has_left_trim_marker(self.rest().as_bytes());
        let after_marker = if trim { TRIM_MARKER_LEN } else { 0 };
        if self.input[self.pos + after_marker..].starts_with(LEFT_COMMENT) {
            self.pos += after_marker;
            self.ignore();
            self.state = State::Comment;
            return None;
        }
        let item = self.item(Kind::LeftDelim);
        self.state = State::InsideAction;
        self.pos += after_marker;
        self.ignore();
        self.paren_depth = 0;
        Some(item)
    }

    fn lex_comment(&mut self) -> Option<Item> {
        self.pos += LEFT_COMMENT.len();
        let Some(i) = self.rest().find(RIGHT_COMMENT) else {
            return Some(self.error("unclosed comment".into()));
        };
        self.pos += i + RIGHT_COMMENT.len();
        let (delim, trim) = self.at_right_delim();
        if !delim {
            return Some(self.error("comment ends before closing delimiter".into()));
        }
        if trim {
            self.pos += TRIM_MARKER_LEN;
        }
        self.pos += RIGHT_DELIM.len();
        if trim {
            self.pos += leading_space_len(self.rest());
        }
        self.ignore();
        self.state = State::Text;
        None
    }

    fn lex_right_delim(&mut self) -> Option<Item> {
        let trim = has_right_trim_marker(self.rest().as_bytes());
        if trim {
            self.pos += TRIM_MARKER_LEN;
            self.ignore();
        }
        self.pos += RIGHT_DELIM.len();
        let item = self.item(Kind::RightDelim);
        if trim {
            self.pos += leading_space_len(self.rest());
            self.ignore();
        }
        self.state = State::Text;
        Some(item)
    }

    fn lex_inside_action(&mut self) -> Option<Item> {
        let (delim, _) = self.at_right_delim();
        if delim {
            if self.paren_depth == 0 {
                self.state = State::RightDelim;
                return None;
            }
            return Some(self.error("unclosed left paren".into()));
        }
        let Some(r) = self.next_char() else {
            return Some(self.error("unclosed action".into()));
        };
        let item = match r {
            c if is_space(c) => {
                self.backup();
                self.state = State::Space;
                return None;
            }
            '=' => self.item(Kind::Assign),
            ':' => {
                if self.next_char() != Some('=') {
                    return Some(self.error("expected :=".into()));
                }
                self.item(Kind::Declare)
            }
            '|' => self.item(Kind::Pipe),
            '"' => {
                self.state = State::Quote;
                return None;
            }
            '`' => {
                self.state = State::RawQuote;
                return None;
            }
            '$' => {
                self.state = State::Variable;
                return None;
            }
            '\'' => {
                self.state = State::Char;
                return None;
            }
            '.' if !matches!(self.rest().as_bytes().first(), Some(b'0'..=b'9')) => {
                self.state = State::Field;
                return None;
            }
            '.' | '+' | '-' | '0'..='9' => {
                self.backup();
                self.state = State::Number;
                return None;
            }
            c if is_alphanumeric(c) => {
                self.backup();
                self.state = State::Identifier;
                return None;
            }
            '(' => {
                self.paren_depth += 1;
                self.item(Kind::LeftParen)
            }
            ')' => {
                if self.paren_depth == 0 {
                    return Some(self.error(format!("unexpected right paren {}", self.shown(r))));
                }
                self.paren_depth -= 1;
                self.item(Kind::RightParen)
            }
            c if c.is_ascii() && !c.is_ascii_control() => self.item(Kind::Char),
            c => {
                return Some(self.error(format!(
                    "unrecognized character in action: {}",
                    self.shown(c)
                )));
            }
        };
        self.state = State::InsideAction;
        Some(item)
    }

    fn lex_space(&mut self) -> Option<Item> {
        let rest = &self.input.as_bytes()[self.pos..];
        let spaces = rest
            .iter()
            .position(|&b| !is_space_byte(b))
            .unwrap_or(rest.len());
        self.line += count_newlines(&self.input[self.pos..self.pos + spaces]);
        self.pos += spaces;
        self.width = 1;
        // A space may belong to a trim-marked closing delimiter (" -}}").
        let before = &self.input.as_bytes()[self.pos - 1..];
        if has_right_trim_marker(before)
            && before[TRIM_MARKER_LEN..].starts_with(RIGHT_DELIM.as_bytes())
        {
            self.backup();
            if spaces == 1 {
                self.state = State::RightDelim;
                return None;
            }
        }
        self.state = State::InsideAction;
        Some(self.item(Kind::Space))
    }

    fn at_terminator(&self) -> bool {
        match self.peek() {
            None => true,
            Some(c) if is_space(c) => true,
            Some('.' | ',' | '|' | ':' | ')' | '(') => true,
            Some(c) => RIGHT_DELIM.starts_with(c),
        }
    }

    fn bad_character(&mut self) -> Item {
        let shown = self.peek();
        let text = match shown {
            Some(c) => self.shown(c),
            None => "U+FFFFFFFFFFFFFFFF".to_owned(),
        };
        self.error(format!("bad character {text}"))
    }

    fn lex_identifier(&mut self) -> Option<Item> {
        self.skip_alphanumerics();
        if !self.at_terminator() {
            return Some(self.bad_character());
        }
        let word = &self.input[self.start..self.pos];
        let kind = match keyword(word) {
            Some(Kind::Break) if !self.break_ok => Kind::Identifier,
            Some(Kind::Continue) if !self.continue_ok => Kind::Identifier,
            Some(k) => k,
            None if word == "true" || word == "false" => Kind::Bool,
            None => Kind::Identifier,
        };
        self.state = State::InsideAction;
        Some(self.item(kind))
    }

    fn lex_variable(&mut self) -> Option<Item> {
        if self.at_terminator() {
            self.state = State::InsideAction;
            return Some(self.item(Kind::Variable));
        }
        self.lex_field_or_variable(Kind::Variable)
    }

    fn lex_field_or_variable(&mut self, kind: Kind) -> Option<Item> {
        if self.at_terminator() {
            self.state = State::InsideAction;
            let kind = if kind == Kind::Variable {
                Kind::Variable
            } else {
                Kind::Dot
            };
            return Some(self.item(kind));
        }
        self.skip_alphanumerics();
        if !self.at_terminator() {
            return Some(self.bad_character());
        }
        self.state = State::InsideAction;
        Some(self.item(kind))
    }

    fn lex_char(&mut self) -> Option<Item> {
        loop {
            match self.next_char() {
                Some('\\') => match self.next_char() {
                    None | Some('\n') => {
                        return Some(self.error("unterminated character constant".into()));
                    }
                    Some(_) => {}
                },
                None | Some('\n') => {
                    return Some(self.error("unterminated character constant".into()));
                }
                Some('\'') => break,
                Some(_) => {}
            }
        }
        self.state = State::InsideAction;
        Some(self.item(Kind::CharConstant))
    }

    fn lex_number(&mut self) -> Option<Item> {
        if !self.scan_number() {
            let text = self.input[self.start..self.pos].to_owned();
            return Some(self.error(format!("bad number syntax: {}", crate::print::quote(&text))));
        }
        let kind = if matches!(self.peek(), Some('+' | '-')) {
            if !self.scan_number() || !self.input[..self.pos].ends_with('i') {
                let text = self.input[self.start..self.pos].to_owned();
                return Some(
                    self.error(format!("bad number syntax: {}", crate::print::quote(&text))),
                );
            }
            Kind::Complex
        } else {
            Kind::Number
        };
        self.state = State::InsideAction;
        Some(self.item(kind))
    }

    fn scan_number(&mut self) -> bool {
        self.accept("+-");
        let mut digits = "0123456789_";
        if self.accept("0") {
            if self.accept("xX") {
                digits = "0123456789abcdefABCDEF_";
            } else if self.accept("oO") {
                digits = "01234567_";
            } else if self.accept("bB") {
                digits = "01_";
            }
        }
        self.accept_run(digits);
        if self.accept(".") {
            self.accept_run(digits);
        }
        if digits.len() == 11 && self.accept("eE") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        if digits.len() == 23 && self.accept("pP") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        self.accept("i");
        if self.peek().is_some_and(is_alphanumeric) {
            self.next_char();
            return false;
        }
        true
    }

    fn lex_quote(&mut self) -> Option<Item> {
        loop {
            let rest = &self.input.as_bytes()[self.pos..];
            let Some(at) = memchr::memchr3(b'"', b'\\', b'\n', rest) else {
                self.pos = self.input.len();
                return Some(self.error("unterminated quoted string".into()));
            };
            let found = rest[at];
            self.pos += at + 1;
            match found {
                b'"' => break,
                b'\\' => match self.next_char() {
                    None | Some('\n') => {
                        return Some(self.error("unterminated quoted string".into()));
                    }
                    Some(_) => {}
                },
                _ => return Some(self.error("unterminated quoted string".into())),
            }
        }
        self.state = State::InsideAction;
        Some(self.item(Kind::String))
    }

    fn lex_raw_quote(&mut self) -> Option<Item> {
        loop {
            match self.next_char() {
                None => return Some(self.error("unterminated raw quoted string".into())),
                Some('`') => break,
                Some(_) => {}
            }
        }
        self.state = State::InsideAction;
        Some(self.item(Kind::RawString))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_survive_packing() {
        for (index, &kind) in Kind::ALL.iter().enumerate() {
            assert_eq!(kind as usize, index);
            let item = Item {
                kind,
                pos: u32::MAX - index as u32,
                len: 7 + index as u32,
                line: u32::MAX,
            };
            assert_eq!(Item::unpack(item.pack()), item);
        }
    }

    fn kinds(input: &str) -> Vec<(Kind, String)> {
        let mut lexer = Lexer::new(input, true, true);
        let mut out = Vec::new();
        loop {
            let item = lexer.next_item();
            let done = matches!(item.kind, Kind::Eof | Kind::Error);
            let text = if item.kind == Kind::Error {
                lexer.error_message().to_owned()
            } else {
                lexer.text(&item).to_owned()
            };
            out.push((item.kind, text));
            if done {
                return out;
            }
        }
    }

    #[test]
    fn trim_markers_eat_surrounding_whitespace() {
        let got = kinds("a \n {{- .X -}} \n b");
        assert_eq!(got[0], (Kind::Text, "a".into()));
        assert_eq!(got[1].0, Kind::LeftDelim);
        assert_eq!(got[2], (Kind::Field, ".X".into()));
        assert_eq!(got[3].0, Kind::RightDelim);
        assert_eq!(got[4], (Kind::Text, "b".into()));
    }

    #[test]
    fn a_dash_without_space_is_a_number() {
        let got = kinds("{{-3}}");
        assert_eq!(got[1], (Kind::Number, "-3".into()));
    }

    #[test]
    fn comments_vanish_and_can_trim() {
        let got = kinds("a  {{- /* c */ -}}  b");
        assert_eq!(got[0], (Kind::Text, "a".into()));
        assert_eq!(got[1], (Kind::Text, "b".into()));
    }

    #[test]
    fn errors_match_go() {
        assert_eq!(
            kinds("{{ \"a }}").last().unwrap().1,
            "unterminated quoted string"
        );
        assert_eq!(kinds("{{ .X ").last().unwrap().1, "unclosed action");
        assert_eq!(kinds("{{ ( }}").last().unwrap().1, "unclosed left paren");
        assert_eq!(kinds("{{/* x }}").last().unwrap().1, "unclosed comment");
        assert_eq!(
            kinds("{{ 3x }}").last().unwrap().1,
            "bad number syntax: \"3x\""
        );
    }

    #[test]
    fn break_is_an_identifier_when_shadowed() {
        let mut lexer = Lexer::new("{{break}}", false, true);
        lexer.next_item();
        assert_eq!(lexer.next_item().kind, Kind::Identifier);
    }
}
