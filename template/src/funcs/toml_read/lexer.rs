//! BurntSushi/toml's lexer: states that push items (tokens, or one error) onto a queue.

use std::collections::VecDeque;

use crate::print::{quote, quote_bytes, quote_rune};

const EOF: u32 = 0;
const RUNE_ERROR: u32 = 0xFFFD;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    Error,
    Eof,
    Text,
    String,
    StringEsc,
    RawString,
    MultilineString,
    RawMultilineString,
    Bool,
    Integer,
    Float,
    Datetime,
    Array,
    ArrayEnd,
    TableStart,
    TableEnd,
    ArrayTableStart,
    ArrayTableEnd,
    KeyStart,
    KeyEnd,
    CommentStart,
    InlineTableStart,
    InlineTableEnd,
}

#[derive(Debug)]
pub(super) struct Item {
    pub(super) kind: Kind,
    pub(super) val: String,
    pub(super) line: usize,
}

#[derive(Clone, Copy)]
struct State(fn(&mut Lexer<'_>) -> Option<State>);

type Next = Option<State>;

pub(super) struct Lexer<'a> {
    input: &'a [u8],
    start: usize,
    pos: usize,
    line: usize,
    state: Option<State>,
    items: VecDeque<Item>,
    esc: bool,
    prev_widths: [usize; 4],
    nprev: usize,
    at_eof: bool,
    stack: Vec<State>,
}

/// Go's `utf8.DecodeRune`: an invalid byte is `RuneError` of width 1.
fn decode_rune(bytes: &[u8]) -> (u32, usize) {
    let window = &bytes[..bytes.len().min(4)];
    let valid = match std::str::from_utf8(window) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&window[..e.valid_up_to()]).unwrap_or(""),
    };
    match valid.chars().next() {
        Some(c) => (c as u32, c.len_utf8()),
        None => (RUNE_ERROR, 1),
    }
}

fn char_of(r: u32) -> char {
    char::from_u32(r).unwrap_or('\u{FFFD}')
}

/// Go's `%q` of a rune.
pub(super) fn q(r: u32) -> String {
    quote_rune(char_of(r))
}

fn is_whitespace(r: u32) -> bool {
    r == '\t' as u32 || r == ' ' as u32
}
fn is_nl(r: u32) -> bool {
    r == '\n' as u32 || r == '\r' as u32
}
fn is_control(r: u32) -> bool {
    match r {
        0x09 | 0x0d | 0x0a => false,
        _ => r <= 0x1f || r == 0x7f,
    }
}
fn is_digit(r: u32) -> bool {
    (b'0' as u32..=b'9' as u32).contains(&r)
}
fn is_binary(r: u32) -> bool {
    r == '0' as u32 || r == '1' as u32
}
fn is_octal(r: u32) -> bool {
    (b'0' as u32..=b'7' as u32).contains(&r)
}
pub(super) fn is_hex(r: u32) -> bool {
    is_digit(r) || ((r | 0x20) >= 'a' as u32 && (r | 0x20) <= 'f' as u32)
}
fn is_bare_key_char(r: u32) -> bool {
    char::from_u32(r).is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}
fn is_letter(r: u32) -> bool {
    char::from_u32(r).is_some_and(chartkit_regexp::is_letter)
}

impl<'a> Lexer<'a> {
    pub(super) fn new(input: &'a [u8]) -> Lexer<'a> {
        Lexer {
            input,
            start: 0,
            pos: 0,
            line: 1,
            state: Some(State(lex_top)),
            items: VecDeque::new(),
            esc: false,
            prev_widths: [0; 4],
            nprev: 0,
            at_eof: false,
            stack: Vec::new(),
        }
    }

    pub(super) fn next_item(&mut self) -> Item {
        loop {
            if let Some(item) = self.items.pop_front() {
                return item;
            }
            match self.state {
                Some(state) => self.state = (state.0)(self),
                // Go's lexer would be called again only after a bug of its own.
                None => {
                    return Item {
                        kind: Kind::Eof,
                        val: String::new(),
                        line: self.line,
                    };
                }
            }
        }
    }

    fn push(&mut self, state: fn(&mut Lexer<'_>) -> Next) {
        self.stack.push(State(state));
    }

    fn pop(&mut self) -> Next {
        self.stack.pop()
    }

    fn current(&self) -> String {
        if self.start > self.pos {
            return String::new();
        }
        String::from_utf8_lossy(&self.input[self.start..self.pos]).into_owned()
    }

    fn current_quoted(&self) -> String {
        if self.start > self.pos {
            return quote("");
        }
        quote_bytes(&self.input[self.start..self.pos])
    }

    fn emit(&mut self, kind: Kind) {
        if self.start > self.pos {
            let byte = self.input.get(self.pos).copied().unwrap_or(0);
            self.error(format!("invalid UTF-8 byte: 0x{byte:02x}"));
            return;
        }
        let val = self.current();
        self.items.push_back(Item {
            kind,
            val,
            line: self.line,
        });
        self.start = self.pos;
    }

    fn emit_trim(&mut self, kind: Kind) {
        let val = self.current().trim().to_owned();
        self.items.push_back(Item {
            kind,
            val,
            line: self.line,
        });
        self.start = self.pos;
    }

    fn next(&mut self) -> u32 {
        if self.at_eof {
            return EOF;
        }
        if self.pos >= self.input.len() {
            self.at_eof = true;
            return EOF;
        }
        if self.input[self.pos] == b'\n' {
            self.line += 1;
        }
        self.prev_widths[3] = self.prev_widths[2];
        self.prev_widths[2] = self.prev_widths[1];
        self.prev_widths[1] = self.prev_widths[0];
        if self.nprev < 4 {
            self.nprev += 1;
        }
        let (r, w) = decode_rune(&self.input[self.pos..]);
        if r == RUNE_ERROR && w == 1 {
            let byte = self.input[self.pos];
            self.error(format!("invalid UTF-8 byte: 0x{byte:02x}"));
            return RUNE_ERROR;
        }
        if is_control(r)
            || (r == '\r' as u32
                && (self.input.len() - 1 == self.pos || self.input[self.pos + 1] != b'\n'))
        {
            self.error_control_char(r);
            return RUNE_ERROR;
        }
        self.prev_widths[0] = w;
        self.pos += w;
        r
    }

    fn ignore(&mut self) {
        self.start = self.pos;
    }

    fn backup(&mut self) {
        if self.at_eof {
            self.at_eof = false;
            return;
        }
        if self.nprev < 1 {
            return;
        }
        let w = self.prev_widths[0];
        self.prev_widths[0] = self.prev_widths[1];
        self.prev_widths[1] = self.prev_widths[2];
        self.prev_widths[2] = self.prev_widths[3];
        self.nprev -= 1;
        self.pos = self.pos.saturating_sub(w);
        if self.pos < self.input.len() && self.input[self.pos] == b'\n' {
            self.line -= 1;
        }
    }

    fn accept(&mut self, valid: char) -> bool {
        if self.next() == valid as u32 {
            return true;
        }
        self.backup();
        false
    }

    fn peek(&mut self) -> u32 {
        let r = self.next();
        self.backup();
        r
    }

    fn skip(&mut self, pred: fn(u32) -> bool) {
        loop {
            let r = self.next();
            if pred(r) {
                continue;
            }
            self.backup();
            self.ignore();
            return;
        }
    }

    fn push_error(&mut self, line: usize, message: String) -> Next {
        self.items.push_back(Item {
            kind: Kind::Error,
            val: message,
            line,
        });
        None
    }

    fn error(&mut self, message: String) -> Next {
        if self.at_eof {
            return self.error_prev_line(message);
        }
        self.push_error(self.line, message)
    }

    fn error_prev_line(&mut self, message: String) -> Next {
        self.push_error(self.line - 1, message)
    }

    fn errorf(&mut self, message: String) -> Next {
        let mut line = self.line;
        if self.at_eof && self.pos >= 1 && self.input[self.pos - 1] == b'\n' {
            line -= 1;
        }
        self.push_error(line, message)
    }

    fn error_control_char(&mut self, r: u32) -> Next {
        self.push_error(
            self.line,
            format!("TOML files cannot contain control characters: '0x{r:02x}'"),
        )
    }
}

fn skip_to(lx: &mut Lexer<'_>, next: fn(&mut Lexer<'_>) -> Next) -> Next {
    lx.ignore();
    Some(State(next))
}

fn to(next: fn(&mut Lexer<'_>) -> Next) -> Next {
    Some(State(next))
}

fn lex_top(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    if is_whitespace(r) || is_nl(r) {
        return skip_to(lx, lex_top);
    }
    match char_of(r) {
        '#' => {
            lx.push(lex_top);
            return to(lex_comment_start);
        }
        '[' => return to(lex_table_start),
        _ if r == EOF => {
            if lx.pos > lx.start {
                return lx.errorf("unexpected EOF".into());
            }
            lx.emit(Kind::Eof);
            return None;
        }
        _ => {}
    }
    lx.backup();
    lx.push(lex_top_end);
    to(lex_key_start)
}

fn lex_top_end(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    if r == '#' as u32 {
        lx.push(lex_top);
        return to(lex_comment_start);
    }
    if is_whitespace(r) {
        return to(lex_top_end);
    }
    if is_nl(r) {
        lx.ignore();
        return to(lex_top);
    }
    if r == EOF {
        lx.emit(Kind::Eof);
        return None;
    }
    lx.errorf(format!(
        "expected a top-level item to end with a newline, comment, or EOF, but got {} instead",
        q(r)
    ))
}

fn lex_table_start(lx: &mut Lexer<'_>) -> Next {
    if lx.peek() == '[' as u32 {
        lx.next();
        lx.emit(Kind::ArrayTableStart);
        lx.push(lex_array_table_end);
    } else {
        lx.emit(Kind::TableStart);
        lx.push(lex_table_end);
    }
    to(lex_table_name_start)
}

fn lex_table_end(lx: &mut Lexer<'_>) -> Next {
    lx.emit(Kind::TableEnd);
    to(lex_top_end)
}

fn lex_array_table_end(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    if r != ']' as u32 {
        return lx.errorf(format!(
            "expected end of table array name delimiter ']', but got {} instead",
            q(r)
        ));
    }
    lx.emit(Kind::ArrayTableEnd);
    to(lex_top_end)
}

fn lex_table_name_start(lx: &mut Lexer<'_>) -> Next {
    lx.skip(is_whitespace);
    let r = lx.peek();
    if r == ']' as u32 || r == EOF {
        return lx.errorf("unexpected end of table name (table names cannot be empty)".into());
    }
    if r == '.' as u32 {
        return lx.errorf("unexpected table separator (table names cannot be empty)".into());
    }
    if r == '"' as u32 || r == '\'' as u32 {
        lx.ignore();
        lx.push(lex_table_name_end);
        return to(lex_quoted_name);
    }
    lx.push(lex_table_name_end);
    to(lex_bare_name)
}

fn lex_table_name_end(lx: &mut Lexer<'_>) -> Next {
    lx.skip(is_whitespace);
    let r = lx.next();
    if r == '.' as u32 {
        lx.ignore();
        return to(lex_table_name_start);
    }
    if r == ']' as u32 {
        return lx.pop();
    }
    lx.errorf(format!(
        "expected '.' or ']' to end table name, but got {} instead",
        q(r)
    ))
}

fn lex_bare_name(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    if is_bare_key_char(r) {
        return to(lex_bare_name);
    }
    lx.backup();
    lx.emit(Kind::Text);
    lx.pop()
}

fn lex_quoted_name(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    if r == '"' as u32 {
        lx.ignore();
        return to(lex_string);
    }
    if r == '\'' as u32 {
        lx.ignore();
        return to(lex_raw_string);
    }
    if is_whitespace(r) {
        return skip_to(lx, lex_value);
    }
    if r == EOF {
        return lx.errorf("unexpected EOF; expected value".into());
    }
    lx.errorf(format!("expected value but found {} instead", q(r)))
}

fn lex_key_start(lx: &mut Lexer<'_>) -> Next {
    lx.skip(is_whitespace);
    let r = lx.peek();
    if r == '=' as u32 || r == EOF {
        return lx.errorf("unexpected '=': key name appears blank".into());
    }
    if r == '.' as u32 {
        return lx.errorf("unexpected '.': keys cannot start with a '.'".into());
    }
    if r == '"' as u32 || r == '\'' as u32 {
        lx.ignore();
    }
    lx.emit(Kind::KeyStart);
    to(lex_key_name_start)
}

fn lex_key_name_start(lx: &mut Lexer<'_>) -> Next {
    lx.skip(is_whitespace);
    let r = lx.peek();
    if r == '"' as u32 || r == '\'' as u32 {
        lx.ignore();
        lx.push(lex_key_end);
        return to(lex_quoted_name);
    }
    if r == '=' as u32 || r == EOF {
        return lx.errorf("unexpected '='".into());
    }
    if r == '.' as u32 {
        return lx.errorf("unexpected '.'".into());
    }
    lx.push(lex_key_end);
    to(lex_bare_name)
}

fn lex_key_end(lx: &mut Lexer<'_>) -> Next {
    lx.skip(is_whitespace);
    let r = lx.next();
    if is_whitespace(r) {
        return skip_to(lx, lex_key_end);
    }
    if r == EOF {
        return lx.errorf("unexpected EOF; expected key separator '='".into());
    }
    if r == '.' as u32 {
        lx.ignore();
        return to(lex_key_name_start);
    }
    if r == '=' as u32 {
        lx.emit(Kind::KeyEnd);
        return skip_to(lx, lex_value);
    }
    let message = format!("expected '.' or '=', but got {} instead", q(r));
    if r == '\n' as u32 {
        return lx.error_prev_line(message);
    }
    lx.errorf(message)
}

fn lex_value(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    if is_whitespace(r) {
        return skip_to(lx, lex_value);
    }
    if is_digit(r) {
        lx.backup();
        return to(lex_number_or_date_start);
    }
    match char_of(r) {
        '[' => {
            lx.ignore();
            lx.emit(Kind::Array);
            return to(lex_array_value);
        }
        '{' => {
            lx.ignore();
            lx.emit(Kind::InlineTableStart);
            return to(lex_inline_table_value);
        }
        '"' => {
            if lx.accept('"') {
                if lx.accept('"') {
                    lx.ignore();
                    return to(lex_multiline_string);
                }
                lx.backup();
            }
            lx.ignore();
            return to(lex_string);
        }
        '\'' => {
            if lx.accept('\'') {
                if lx.accept('\'') {
                    lx.ignore();
                    return to(lex_multiline_raw_string);
                }
                lx.backup();
            }
            lx.ignore();
            return to(lex_raw_string);
        }
        '.' => return lx.errorf("floats must start with a digit, not '.'".into()),
        // The guard reads on as Go's condition does; when it fails, so does the match.
        'i' | 'n' if (lx.accept('n') && lx.accept('f')) || (lx.accept('a') && lx.accept('n')) => {
            lx.emit(Kind::Float);
            return lx.pop();
        }
        '-' | '+' => return to(lex_decimal_number_start),
        _ => {}
    }
    if is_letter(r) {
        lx.backup();
        return to(lex_bool);
    }
    if r == EOF {
        return lx.errorf("unexpected EOF; expected value".into());
    }
    let message = format!("expected value but found {} instead", q(r));
    if r == '\n' as u32 {
        return lx.error_prev_line(message);
    }
    lx.errorf(message)
}

fn lex_array_value(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    if is_whitespace(r) || is_nl(r) {
        return skip_to(lx, lex_array_value);
    }
    if r == '#' as u32 {
        lx.push(lex_array_value);
        return to(lex_comment_start);
    }
    if r == ',' as u32 {
        return lx.errorf("unexpected comma".into());
    }
    if r == ']' as u32 {
        return lex_array_end(lx);
    }
    lx.backup();
    lx.push(lex_array_value_end);
    to(lex_value)
}

fn rune_or_eof(r: u32) -> String {
    if r == EOF {
        "end of file".into()
    } else {
        format!("'{}'", char_of(r))
    }
}

fn lex_array_value_end(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    if is_whitespace(r) || is_nl(r) {
        return skip_to(lx, lex_array_value_end);
    }
    if r == '#' as u32 {
        lx.push(lex_array_value_end);
        return to(lex_comment_start);
    }
    if r == ',' as u32 {
        lx.ignore();
        return to(lex_array_value);
    }
    if r == ']' as u32 {
        return lex_array_end(lx);
    }
    lx.errorf(format!(
        "expected a comma (',') or array terminator (']'), but got {}",
        rune_or_eof(r)
    ))
}

fn lex_array_end(lx: &mut Lexer<'_>) -> Next {
    lx.ignore();
    lx.emit(Kind::ArrayEnd);
    lx.pop()
}

fn lex_inline_table_value(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    if is_whitespace(r) || is_nl(r) {
        return skip_to(lx, lex_inline_table_value);
    }
    if r == '#' as u32 {
        lx.push(lex_inline_table_value);
        return to(lex_comment_start);
    }
    if r == ',' as u32 {
        return lx.errorf("unexpected comma".into());
    }
    if r == '}' as u32 {
        return lex_inline_table_end(lx);
    }
    lx.backup();
    lx.push(lex_inline_table_value_end);
    to(lex_key_start)
}

fn lex_inline_table_value_end(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    if is_whitespace(r) || is_nl(r) {
        return skip_to(lx, lex_inline_table_value_end);
    }
    if r == '#' as u32 {
        lx.push(lex_inline_table_value_end);
        return to(lex_comment_start);
    }
    if r == ',' as u32 {
        lx.ignore();
        lx.skip(is_whitespace);
        if lx.peek() == '}' as u32 {
            return to(lex_inline_table_value_end);
        }
        return to(lex_inline_table_value);
    }
    if r == '}' as u32 {
        return lex_inline_table_end(lx);
    }
    lx.errorf(format!(
        "expected a comma or an inline table terminator '}}', but got {} instead",
        rune_or_eof(r)
    ))
}

fn lex_inline_table_end(lx: &mut Lexer<'_>) -> Next {
    lx.ignore();
    lx.emit(Kind::InlineTableEnd);
    lx.pop()
}

fn lex_string(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    if r == EOF {
        return lx.errorf("unexpected EOF; expected '\"'".into());
    }
    if is_nl(r) {
        return lx.error_prev_line("strings cannot contain newlines".into());
    }
    if r == '\\' as u32 {
        lx.push(lex_string);
        return to(lex_string_escape);
    }
    if r == '"' as u32 {
        lx.backup();
        if lx.esc {
            lx.esc = false;
            lx.emit(Kind::StringEsc);
        } else {
            lx.emit(Kind::String);
        }
        lx.next();
        lx.ignore();
        return lx.pop();
    }
    to(lex_string)
}

fn lex_multiline_string(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    if r == EOF {
        return lx.errorf("unexpected EOF; expected '\"\"\"'".into());
    }
    if r == '\\' as u32 {
        return to(lex_multiline_string_escape);
    }
    if r == '"' as u32 && lx.accept('"') {
        if lx.accept('"') {
            if lx.peek() == '"' as u32 {
                let current = lx.current();
                if current.ends_with("\"\"\"\"\"") && !current.ends_with("\\\"\"\"\"\"") {
                    return lx.errorf("unexpected '\"\"\"\"\"\"'".into());
                }
                lx.backup();
                lx.backup();
                return to(lex_multiline_string);
            }
            lx.backup();
            lx.backup();
            lx.backup();
            lx.esc = false;
            lx.emit(Kind::MultilineString);
            lx.next();
            lx.next();
            lx.next();
            lx.ignore();
            return lx.pop();
        }
        lx.backup();
    }
    to(lex_multiline_string)
}

fn lex_raw_string(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    if r == EOF {
        return lx.errorf("unexpected EOF; expected \"'\"".into());
    }
    if is_nl(r) {
        return lx.error_prev_line("strings cannot contain newlines".into());
    }
    if r == '\'' as u32 {
        lx.backup();
        lx.emit(Kind::RawString);
        lx.next();
        lx.ignore();
        return lx.pop();
    }
    to(lex_raw_string)
}

fn lex_multiline_raw_string(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    if r == EOF {
        return lx.errorf("unexpected EOF; expected \"'''\"".into());
    }
    if r == '\'' as u32 && lx.accept('\'') {
        if lx.accept('\'') {
            if lx.peek() == '\'' as u32 {
                if lx.current().ends_with("'''''") {
                    return lx.errorf("unexpected \"''''''\"".into());
                }
                lx.backup();
                lx.backup();
                return to(lex_multiline_raw_string);
            }
            lx.backup();
            lx.backup();
            lx.backup();
            lx.emit(Kind::RawMultilineString);
            lx.next();
            lx.next();
            lx.next();
            lx.ignore();
            return lx.pop();
        }
        lx.backup();
    }
    to(lex_multiline_raw_string)
}

fn lex_multiline_string_escape(lx: &mut Lexer<'_>) -> Next {
    if is_nl(lx.next()) {
        return to(lex_multiline_string);
    }
    lx.backup();
    lx.push(lex_multiline_string);
    lex_string_escape(lx)
}

fn lex_string_escape(lx: &mut Lexer<'_>) -> Next {
    lx.esc = true;
    let r = lx.next();
    match char_of(r) {
        'e' | 'b' | 't' | 'n' | 'f' | 'r' | '"' | ' ' | '\t' | '\\' if r != RUNE_ERROR => lx.pop(),
        'x' => to(lex_hex_escape),
        'u' => to(lex_short_unicode_escape),
        'U' => to(lex_long_unicode_escape),
        _ => lx.error(format!("invalid escape in string '\\{}'", char_of(r))),
    }
}

fn lex_digits_escape(lx: &mut Lexer<'_>, count: usize, words: &str, letter: char) -> Next {
    for _ in 0..count {
        let r = lx.next();
        if !is_hex(r) {
            let current = lx.current_quoted();
            return lx.errorf(format!(
                "expected {words} hexadecimal digits after '\\{letter}', but got {current} instead"
            ));
        }
    }
    lx.pop()
}

fn lex_hex_escape(lx: &mut Lexer<'_>) -> Next {
    lex_digits_escape(lx, 2, "two", 'x')
}

fn lex_short_unicode_escape(lx: &mut Lexer<'_>) -> Next {
    lex_digits_escape(lx, 4, "four", 'u')
}

fn lex_long_unicode_escape(lx: &mut Lexer<'_>) -> Next {
    lex_digits_escape(lx, 8, "eight", 'U')
}

fn lex_number_or_date_start(lx: &mut Lexer<'_>) -> Next {
    if lx.next() == '0' as u32 {
        return to(lex_base_number_or_date);
    }
    to(lex_number_or_date)
}

fn lex_number_or_date(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    if is_digit(r) {
        return to(lex_number_or_date);
    }
    match char_of(r) {
        '-' | ':' => return to(lex_datetime),
        '_' => return to(lex_decimal_number),
        '.' | 'e' | 'E' => return to(lex_float),
        _ => {}
    }
    lx.backup();
    lx.emit(Kind::Integer);
    lx.pop()
}

fn lex_datetime(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    if is_digit(r) {
        return to(lex_datetime);
    }
    if let '-' | ':' | 'T' | 't' | ' ' | '.' | 'Z' | 'z' | '+' = char_of(r) {
        return to(lex_datetime);
    }
    lx.backup();
    lx.emit_trim(Kind::Datetime);
    lx.pop()
}

fn lex_based_integer(lx: &mut Lexer<'_>, digit: fn(u32) -> bool) -> Option<Next> {
    let r = lx.next();
    if digit(r) || r == '_' as u32 {
        return None;
    }
    lx.backup();
    lx.emit(Kind::Integer);
    Some(lx.pop())
}

fn lex_hex_integer(lx: &mut Lexer<'_>) -> Next {
    lex_based_integer(lx, is_hex).unwrap_or_else(|| to(lex_hex_integer))
}

fn lex_octal_integer(lx: &mut Lexer<'_>) -> Next {
    lex_based_integer(lx, is_octal).unwrap_or_else(|| to(lex_octal_integer))
}

fn lex_binary_integer(lx: &mut Lexer<'_>) -> Next {
    lex_based_integer(lx, is_binary).unwrap_or_else(|| to(lex_binary_integer))
}

fn lex_decimal_number(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    if is_digit(r) {
        return to(lex_decimal_number);
    }
    match char_of(r) {
        '.' | 'e' | 'E' => return to(lex_float),
        '_' => return to(lex_decimal_number),
        _ => {}
    }
    lx.backup();
    lx.emit(Kind::Integer);
    lx.pop()
}

fn lex_decimal_number_start(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    match char_of(r) {
        'i' => {
            if !lx.accept('n') || !lx.accept('f') {
                let current = lx.current();
                return lx.errorf(format!("invalid float: '{current}'"));
            }
            lx.emit(Kind::Float);
            return lx.pop();
        }
        'n' => {
            if !lx.accept('a') || !lx.accept('n') {
                let current = lx.current();
                return lx.errorf(format!("invalid float: '{current}'"));
            }
            lx.emit(Kind::Float);
            return lx.pop();
        }
        '0' => {
            let p = lx.peek();
            if let 'b' | 'o' | 'x' = char_of(p) {
                let current = lx.current();
                return lx.errorf(format!(
                    "cannot use sign with non-decimal numbers: '{current}{}'",
                    char_of(p)
                ));
            }
        }
        '.' => return lx.errorf("floats must start with a digit, not '.'".into()),
        _ => {}
    }
    if is_digit(r) {
        return to(lex_decimal_number);
    }
    lx.errorf(format!("expected a digit but got {}", q(r)))
}

fn lex_base_number_or_date(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    if is_digit(r) {
        return to(lex_number_or_date);
    }
    let prefixed = |lx: &mut Lexer<'_>, digit: fn(u32) -> bool, what: &str| {
        let r = lx.peek();
        if !digit(r) {
            // Go's lexer reports this and goes on lexing; the parser stops at the report.
            let current = lx.current();
            lx.errorf(format!("not {what} number: '{current}{}'", char_of(r)));
        }
    };
    match char_of(r) {
        '_' => to(lex_decimal_number),
        '.' | 'e' | 'E' => to(lex_float),
        'b' => {
            prefixed(lx, is_binary, "a binary");
            to(lex_binary_integer)
        }
        'o' => {
            prefixed(lx, is_octal, "an octal");
            to(lex_octal_integer)
        }
        'x' => {
            prefixed(lx, is_hex, "a hexadecimal");
            to(lex_hex_integer)
        }
        _ => {
            lx.backup();
            lx.emit(Kind::Integer);
            lx.pop()
        }
    }
}

fn lex_float(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    if is_digit(r) {
        return to(lex_float);
    }
    if let '_' | '.' | '-' | '+' | 'e' | 'E' = char_of(r) {
        return to(lex_float);
    }
    lx.backup();
    lx.emit(Kind::Float);
    lx.pop()
}

fn lex_bool(lx: &mut Lexer<'_>) -> Next {
    let mut word = String::new();
    loop {
        let r = lx.next();
        if !is_letter(r) {
            lx.backup();
            break;
        }
        word.push(char_of(r));
    }
    if word == "true" || word == "false" {
        lx.emit(Kind::Bool);
        return lx.pop();
    }
    lx.errorf(format!("expected value but found {} instead", quote(&word)))
}

fn lex_comment_start(lx: &mut Lexer<'_>) -> Next {
    lx.ignore();
    lx.emit(Kind::CommentStart);
    to(lex_comment)
}

fn lex_comment(lx: &mut Lexer<'_>) -> Next {
    let r = lx.next();
    if is_nl(r) || r == EOF {
        lx.backup();
        lx.emit(Kind::Text);
        return lx.pop();
    }
    to(lex_comment)
}
