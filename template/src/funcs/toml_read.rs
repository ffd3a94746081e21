//! The TOML reader Helm's `fromToml` uses: BurntSushi/toml v1.6.0 (Helm 4.1.4's go.mod),
//! its lexer's states and its parser's bookkeeping followed step by step. `fromToml`
//! hands the reader's error text to the template as data (`.Error`), so the text must be
//! that reader's own, line number and "last key" included, and so must the choice of
//! what is an error at all (TOML 1.1's `\e`, `\x`, newlines and trailing commas in
//! inline tables, times without seconds are accepted; a table defined twice is not).
//!
//! The lexer is a state machine whose states push items (tokens or one error) onto a
//! queue; the parser takes items in order, so an error the lexer found after some
//! tokens is seen after the parser has used those tokens, as in Go, where the two talk
//! through a channel.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt::Write as _;
use std::rc::Rc;

use toml::value::{Date, Datetime, Offset, Time};

use crate::print::{quote, quote_bytes, quote_rune};

const EOF: u32 = 0;
const RUNE_ERROR: u32 = 0xFFFD;

/// What went wrong, as BurntSushi's `ParseError.Error()` words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseError {
    message: String,
    line: usize,
    last_key: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.last_key.is_empty() {
            write!(f, "toml: line {}: {}", self.line, self.message)
        } else {
            write!(
                f,
                "toml: line {} (last key {}): {}",
                self.line,
                quote(&self.last_key),
                self.message
            )
        }
    }
}

/// A value as the reader leaves it in Go: a table (`map[string]any`), an array of
/// tables made by `[[name]]` (`[]map[string]any`), or anything else.
#[derive(Clone, Debug)]
pub(crate) enum Node {
    Table(Table),
    Tables(Rc<RefCell<Vec<Table>>>),
    String(String),
    Integer(i64),
    Float(f64),
    Bool(bool),
    Datetime(Datetime),
    Array(Vec<Node>),
}

pub(crate) type Table = Rc<RefCell<HashMap<String, Node>>>;

fn new_table() -> Table {
    Rc::new(RefCell::new(HashMap::new()))
}

/// Reads a TOML document into its top-level table.
pub(crate) fn read(data: &[u8]) -> Result<Table, ParseError> {
    let data = if data.starts_with(b"\xff\xfe") || data.starts_with(b"\xfe\xff") {
        &data[2..]
    } else if data.starts_with(b"\xef\xbb\xbf") {
        &data[3..]
    } else {
        data
    };
    if data[..data.len().min(6)].contains(&0) {
        return Err(ParseError {
            message:
                "files cannot contain NULL bytes; probably using UTF-16; TOML files must be UTF-8"
                    .into(),
            line: 1,
            last_key: String::new(),
        });
    }
    let mut parser = Parser {
        lx: Lexer::new(data),
        context: Vec::new(),
        current_key: String::new(),
        pos_line: 0,
        arrays: HashMap::new(),
        mapping: new_table(),
        implicits: HashSet::new(),
    };
    loop {
        let item = parser.next()?;
        if item.kind == Kind::Eof {
            break;
        }
        parser.top_level(item)?;
    }
    Ok(parser.mapping)
}

// ---------------------------------------------------------------------------------
// Lexer

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
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
struct Item {
    kind: Kind,
    val: String,
    line: usize,
}

#[derive(Clone, Copy)]
struct State(fn(&mut Lexer<'_>) -> Option<State>);

type Next = Option<State>;

struct Lexer<'a> {
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
fn q(r: u32) -> String {
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
fn is_hex(r: u32) -> bool {
    is_digit(r) || ((r | 0x20) >= 'a' as u32 && (r | 0x20) <= 'f' as u32)
}
fn is_bare_key_char(r: u32) -> bool {
    char::from_u32(r).is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}
fn is_letter(r: u32) -> bool {
    char::from_u32(r).is_some_and(chartkit_regexp::is_letter)
}

impl<'a> Lexer<'a> {
    fn new(input: &'a [u8]) -> Lexer<'a> {
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

    fn next_item(&mut self) -> Item {
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

// ---------------------------------------------------------------------------------
// Parser

/// A key's text as BurntSushi's `Key.String()` writes it: parts joined with dots,
/// quoted (with its encoder's escapes) unless bare.
fn key_string(key: &[String]) -> String {
    let mut out = String::new();
    for (i, part) in key.iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        if part.is_empty() {
            out.push_str("\"\"");
        } else if part
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            out.push_str(part);
        } else {
            out.push('"');
            out.push_str(&double_quoted_escapes(part));
            out.push('"');
        }
    }
    out
}

/// BurntSushi's `dblQuotedReplacer`, which its encoder and its key names use.
pub(crate) fn double_quoted_escapes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

struct Parser<'a> {
    lx: Lexer<'a>,
    context: Vec<String>,
    current_key: String,
    /// The line of the last item read with `next_pos`, where `panicf` reports.
    pos_line: usize,
    /// Whether the last type recorded for a key (by its `Key.String()`) was an array.
    arrays: HashMap<String, bool>,
    mapping: Table,
    implicits: HashSet<String>,
}

type PResult<T> = Result<T, ParseError>;

impl Parser<'_> {
    fn current(&self) -> String {
        if self.current_key.is_empty() {
            return key_string(&self.context);
        }
        if self.context.is_empty() {
            return self.current_key.clone();
        }
        format!("{}.{}", key_string(&self.context), self.current_key)
    }

    fn error_at(&self, line: usize, message: String) -> ParseError {
        ParseError {
            message,
            line,
            last_key: self.current(),
        }
    }

    fn item_error<T>(&self, item: &Item, message: String) -> PResult<T> {
        Err(self.error_at(item.line, message))
    }

    fn errorf<T>(&self, message: String) -> PResult<T> {
        Err(self.error_at(self.pos_line, message))
    }

    fn bug<T>(&self, message: String) -> PResult<T> {
        Err(self.error_at(self.pos_line, format!("BUG: {message}")))
    }

    fn next(&mut self) -> PResult<Item> {
        let item = self.lx.next_item();
        if item.kind == Kind::Error {
            return Err(self.error_at(item.line, item.val));
        }
        Ok(item)
    }

    fn next_pos(&mut self) -> PResult<Item> {
        let item = self.next()?;
        self.pos_line = item.line;
        Ok(item)
    }

    fn expect(&mut self, kind: Kind) -> PResult<Item> {
        let item = self.next()?;
        if item.kind != kind {
            return self.bug(format!("Expected '{kind:?}' but got '{:?}'.", item.kind));
        }
        Ok(item)
    }

    /// Reads key parts up to `end`; `first` is the first part's item.
    fn key_parts(&mut self, first: Item, end: Kind) -> PResult<Vec<String>> {
        let mut key = Vec::new();
        let mut name = first;
        while name.kind != end && name.kind != Kind::Eof {
            key.push(self.key_part(&name)?);
            name = self.next()?;
        }
        if name.kind != end {
            return self.bug(format!("Expected '{end:?}' but got '{:?}'.", name.kind));
        }
        Ok(key)
    }

    fn top_level(&mut self, item: Item) -> PResult<()> {
        match item.kind {
            Kind::CommentStart => {
                self.expect(Kind::Text)?;
            }
            Kind::TableStart | Kind::ArrayTableStart => {
                let array = item.kind == Kind::ArrayTableStart;
                let end = if array {
                    Kind::ArrayTableEnd
                } else {
                    Kind::TableEnd
                };
                let name = self.next_pos()?;
                let key = self.key_parts(name, end)?;
                self.add_context(&key, array)?;
                self.set_type("", false);
            }
            Kind::KeyStart => {
                let outer_context = self.context.clone();
                let first = self.next_pos()?;
                let key = self.key_parts(first, Kind::KeyEnd)?;
                self.set_key(&key)?;
                let value_item = self.next()?;
                let (value, array) = self.value(value_item, false)?;
                let name = self.current_key.clone();
                self.set_value(&name, value)?;
                self.set_type(&name, array);
                self.context = outer_context;
                self.current_key.clear();
            }
            other => return self.bug(format!("Unexpected type at top level: {other:?}")),
        }
        Ok(())
    }

    /// Makes a dotted key's last part the current key and its other parts implicit
    /// tables, each in the one before.
    fn set_key(&mut self, key: &[String]) -> PResult<Vec<String>> {
        self.current_key = key.last().cloned().unwrap_or_default();
        let parents = key[..key.len().saturating_sub(1)].to_vec();
        for part in &parents {
            let mut implicit = self.context.clone();
            implicit.push(part.clone());
            self.add_implicit_context(&implicit)?;
        }
        Ok(parents)
    }

    fn key_part(&mut self, item: &Item) -> PResult<String> {
        match item.kind {
            Kind::Text => Ok(item.val.clone()),
            Kind::String
            | Kind::StringEsc
            | Kind::MultilineString
            | Kind::RawString
            | Kind::RawMultilineString => self.string_value(item),
            other => self.bug(format!("Unexpected key type: {other:?}")),
        }
    }

    fn string_value(&self, item: &Item) -> PResult<String> {
        match item.kind {
            Kind::StringEsc => self.replace_escapes(item, &item.val),
            Kind::MultilineString => {
                let stripped = strip_escaped_newlines(strip_first_newline(&item.val));
                self.replace_escapes(item, &stripped)
            }
            Kind::RawMultilineString => Ok(strip_first_newline(&item.val).to_owned()),
            _ => Ok(item.val.clone()),
        }
    }

    /// The value an item starts, and whether it is an array (`tomlArray`).
    fn value(&mut self, item: Item, parent_is_array: bool) -> PResult<(Node, bool)> {
        Ok(match item.kind {
            Kind::String
            | Kind::StringEsc
            | Kind::MultilineString
            | Kind::RawString
            | Kind::RawMultilineString => (Node::String(self.string_value(&item)?), false),
            Kind::Integer => (Node::Integer(self.integer(&item)?), false),
            Kind::Float => (Node::Float(self.float(&item)?), false),
            Kind::Bool => (Node::Bool(item.val == "true"), false),
            Kind::Datetime => {
                let text = item.val.replace('z', "Z").replace(['t', ' '], "T");
                match parse_datetime(&text) {
                    Some(datetime) => (Node::Datetime(datetime), false),
                    None => {
                        return self
                            .item_error(&item, format!("invalid datetime: {}", quote(&text)));
                    }
                }
            }
            Kind::Array => (self.array(&item)?, true),
            Kind::InlineTableStart => (self.inline_table(parent_is_array)?, false),
            other => return self.bug(format!("Unexpected value type: {other:?}")),
        })
    }

    fn integer(&self, item: &Item) -> PResult<i64> {
        let text = &item.val;
        if !underscores_ok(text) {
            return self.item_error(
                item,
                format!(
                    "Invalid integer {}: underscores must be surrounded by digits",
                    quote(text)
                ),
            );
        }
        if has_leading_zero(text) {
            return self.item_error(
                item,
                format!(
                    "Invalid integer {}: cannot have leading zeroes",
                    quote(text)
                ),
            );
        }
        match parse_int(text) {
            Ok(n) => Ok(n),
            Err(true) => self.item_error(item, format!("{text} is out of range for int64")),
            Err(false) => self.bug(format!("Expected integer value, but got '{text}'.")),
        }
    }

    fn float(&self, item: &Item) -> PResult<f64> {
        let text = &item.val;
        let parts: Vec<&str> = text
            .split(['.', 'e', 'E'])
            .filter(|p| !p.is_empty())
            .collect();
        if parts.iter().any(|part| !underscores_ok(part)) {
            return self.item_error(
                item,
                format!(
                    "Invalid float {}: underscores must be surrounded by digits",
                    quote(text)
                ),
            );
        }
        if parts.first().is_some_and(|first| has_leading_zero(first)) {
            return self.item_error(
                item,
                format!("Invalid float {}: cannot have leading zeroes", quote(text)),
            );
        }
        if !periods_ok(text) {
            return self.item_error(
                item,
                format!(
                    "Invalid float {}: '.' must be followed by one or more digits",
                    quote(text)
                ),
            );
        }
        let mut digits = text.replace('_', "");
        let mut negative_nan = false;
        if digits == "+nan" || digits == "-nan" {
            negative_nan = digits == "-nan";
            digits = "nan".into();
        }
        match go_parse_float(&digits) {
            Some(n) if n.is_infinite() && !digits.to_ascii_lowercase().contains("inf") => {
                self.item_error(item, format!("{text} is out of range for float64"))
            }
            Some(n) => Ok(if negative_nan { -n.abs() } else { n }),
            None => self.item_error(item, format!("Invalid float value: {}", quote(text))),
        }
    }

    fn array(&mut self, item: &Item) -> PResult<Node> {
        let key = self.current_key.clone();
        self.set_type(&key, true);
        let _ = item;
        let mut items = Vec::new();
        loop {
            let item = self.next()?;
            match item.kind {
                Kind::ArrayEnd => break,
                Kind::CommentStart => {
                    self.expect(Kind::Text)?;
                }
                _ => items.push(self.value(item, true)?.0),
            }
        }
        Ok(Node::Array(items))
    }

    fn inline_table(&mut self, parent_is_array: bool) -> PResult<Node> {
        let top = new_table();
        let outer_context = self.context.clone();
        let outer_key = self.current_key.clone();
        self.context.push(std::mem::take(&mut self.current_key));
        let prev_context = self.context.clone();
        self.add_implicit(&prev_context);
        self.add_context(&prev_context, parent_is_array)?;
        loop {
            let item = self.next()?;
            match item.kind {
                Kind::InlineTableEnd => break,
                Kind::CommentStart => {
                    self.expect(Kind::Text)?;
                    continue;
                }
                _ => {}
            }
            let first = self.next_pos()?;
            let key = self.key_parts(first, Kind::KeyEnd)?;
            let parents = self.set_key(&key)?;
            let value_item = self.next()?;
            let (value, array) = self.value(value_item, false)?;
            let name = self.current_key.clone();
            self.set_value(&name, value.clone())?;
            self.set_type(&name, array);
            let mut hash = top.clone();
            for part in &parents {
                let existing = hash.borrow().get(part).cloned();
                let next = match existing {
                    Some(Node::Table(t)) => t,
                    Some(_) => {
                        return self.errorf(format!(
                            "{} is not a table",
                            quote(&key_string(&self.context))
                        ));
                    }
                    None => {
                        let t = new_table();
                        hash.borrow_mut()
                            .insert(part.clone(), Node::Table(t.clone()));
                        t
                    }
                };
                hash = next;
            }
            hash.borrow_mut().insert(name, value);
            self.context = prev_context.clone();
        }
        self.context = outer_context;
        self.current_key = outer_key;
        Ok(Node::Table(top))
    }

    fn add_context(&mut self, key: &[String], array: bool) -> PResult<()> {
        let mut hash = self.mapping.clone();
        let mut key_context: Vec<String> = Vec::new();
        let (last, parents) = match key.split_last() {
            Some((last, parents)) => (last.clone(), parents),
            None => (String::new(), &[][..]),
        };
        for part in parents {
            key_context.push(part.clone());
            if !hash.borrow().contains_key(part) {
                self.add_implicit(&key_context);
                hash.borrow_mut()
                    .insert(part.clone(), Node::Table(new_table()));
            }
            let existing = hash.borrow().get(part).cloned();
            hash = match existing {
                Some(Node::Tables(list)) => match list.borrow().last() {
                    Some(t) => t.clone(),
                    None => return self.bug("empty array of tables".into()),
                },
                Some(Node::Table(t)) => t,
                _ => {
                    return self.errorf(format!(
                        "Key '{}' was already created as a hash.",
                        key_string(&key_context)
                    ));
                }
            };
        }
        self.context = key_context;
        if array {
            if !hash.borrow().contains_key(&last) {
                hash.borrow_mut().insert(
                    last.clone(),
                    Node::Tables(Rc::new(RefCell::new(Vec::new()))),
                );
            }
            let existing = hash.borrow().get(&last).cloned();
            match existing {
                Some(Node::Tables(list)) => list.borrow_mut().push(new_table()),
                _ => {
                    return self.errorf(format!(
                        "Key '{}' was already created and cannot be used as an array.",
                        key_string(key)
                    ));
                }
            }
        } else {
            self.set_value(&last, Node::Table(new_table()))?;
        }
        self.context.push(last);
        Ok(())
    }

    fn set_value(&mut self, key: &str, value: Node) -> PResult<()> {
        let mut hash = self.mapping.clone();
        let mut key_context: Vec<String> = Vec::new();
        for part in self.context.clone() {
            key_context.push(part.clone());
            let existing = hash.borrow().get(&part).cloned();
            hash = match existing {
                None => {
                    return self.bug(format!(
                        "Context for key '{}' has not been established.",
                        key_string(&key_context)
                    ));
                }
                Some(Node::Tables(list)) => match list.borrow().last() {
                    Some(t) => t.clone(),
                    None => return self.bug("empty array of tables".into()),
                },
                Some(Node::Table(t)) => t,
                Some(_) => {
                    return self.errorf(format!(
                        "Key '{}' has already been defined.",
                        key_string(&key_context)
                    ));
                }
            };
        }
        key_context.push(key.to_owned());
        let name = key_string(&key_context);
        if hash.borrow().contains_key(key) {
            if self.arrays.get(&name).copied().unwrap_or(false) {
                if !self.implicits.contains(&name) {
                    return self.errorf(format!("Key '{name}' has already been defined."));
                }
                self.implicits.remove(&name);
                hash.borrow_mut().insert(key.to_owned(), value);
                return Ok(());
            }
            if self.implicits.remove(&name) {
                return Ok(());
            }
            return self.errorf(format!("Key '{name}' has already been defined."));
        }
        hash.borrow_mut().insert(key.to_owned(), value);
        Ok(())
    }

    fn set_type(&mut self, key: &str, array: bool) {
        let mut key_context = self.context.clone();
        if !key.is_empty() {
            key_context.push(key.to_owned());
        }
        if key_context.is_empty() {
            key_context.push(String::new());
        }
        self.arrays.insert(key_string(&key_context), array);
    }

    fn add_implicit(&mut self, key: &[String]) {
        self.implicits.insert(key_string(key));
    }

    fn add_implicit_context(&mut self, key: &[String]) -> PResult<()> {
        self.add_implicit(key);
        self.add_context(key, false)
    }

    fn replace_escapes(&self, item: &Item, text: &str) -> PResult<String> {
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut skip = 0;
        for (i, c) in text.char_indices() {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            if c != '\\' {
                out.push(c);
                continue;
            }
            let Some(&code) = bytes.get(i + 1) else {
                return self.bug("Escape sequence at end of string.".into());
            };
            let (replacement, width) = match code {
                b' ' | b'\t' => {
                    return self.item_error(item, format!("invalid escape: '\\{}'", code as char));
                }
                b'b' => ('\u{8}', 1),
                b't' => ('\t', 1),
                b'n' => ('\n', 1),
                b'f' => ('\u{c}', 1),
                b'r' => ('\r', 1),
                b'e' => ('\u{1b}', 1),
                b'"' => ('"', 1),
                b'\\' => ('\\', 1),
                b'x' => (self.hex_escape(item, text.get(i + 2..i + 4))?, 3),
                b'u' => (self.hex_escape(item, text.get(i + 2..i + 6))?, 5),
                b'U' => (self.hex_escape(item, text.get(i + 2..i + 10))?, 9),
                other => {
                    return self.bug(format!(
                        "Expected valid escape code after \\, but got {}.",
                        q(other as u32)
                    ));
                }
            };
            out.push(replacement);
            skip = width;
        }
        Ok(out)
    }

    fn hex_escape(&self, item: &Item, digits: Option<&str>) -> PResult<char> {
        let Some(digits) = digits else {
            return self.bug("escape sequence cut short".into());
        };
        let Ok(code) = u32::from_str_radix(digits, 16) else {
            return self.bug(format!(
                "Could not parse '{digits}' as a hexadecimal number"
            ));
        };
        match char::from_u32(code) {
            Some(c) => Ok(c),
            None => self.item_error(
                item,
                format!("Escaped character '\\u{digits}' is not valid UTF-8."),
            ),
        }
    }
}

fn strip_first_newline(s: &str) -> &str {
    s.strip_prefix('\n')
        .or_else(|| s.strip_prefix("\r\n"))
        .unwrap_or(s)
}

/// Removes a line-ending backslash and the white space after it.
fn strip_escaped_newlines(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut s = s;
    let mut i = 0;
    loop {
        let Some(ix) = s[i..].find('\\') else {
            out.push_str(s);
            return out;
        };
        i += ix;
        if s.as_bytes().get(i + 1) == Some(&b'\\') {
            i += 2;
            continue;
        }
        let mut j = i + 1;
        while j < s.len() && matches!(s.as_bytes()[j], b' ' | b'\t' | b'\r' | b'\n') {
            j += 1;
        }
        if j == i + 1 || !s[i..j].contains('\n') {
            i += 1;
            continue;
        }
        out.push_str(&s[..i]);
        s = &s[j..];
        i = 0;
    }
}

fn has_leading_zero(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() > 1 && b[0] == b'0' && !matches!(b[1], b'b' | b'o' | b'x') {
        return true;
    }
    b.len() > 2 && (b[0] == b'-' || b[0] == b'+') && b[1] == b'0'
}

fn underscores_ok(s: &str) -> bool {
    if matches!(s, "nan" | "+nan" | "-nan" | "inf" | "-inf" | "+inf") {
        return true;
    }
    let mut accept = false;
    for c in s.chars() {
        if c == '_' && !accept {
            return false;
        }
        accept = is_hex(c as u32);
    }
    accept
}

fn periods_ok(s: &str) -> bool {
    let mut period = false;
    for c in s.chars() {
        if period && !c.is_ascii_digit() {
            return false;
        }
        period = c == '.';
    }
    !period
}

/// Go's `strconv.ParseInt(s, 0, 64)` on what the lexer lets through: `Err(true)` when
/// the number is out of range, `Err(false)` when it is no number.
fn parse_int(s: &str) -> Result<i64, bool> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = if let Some(rest) = body.strip_prefix("0x") {
        (16, rest)
    } else if let Some(rest) = body.strip_prefix("0o") {
        (8, rest)
    } else if let Some(rest) = body.strip_prefix("0b") {
        (2, rest)
    } else {
        (10, body)
    };
    let digits = digits.replace('_', "");
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(false);
    }
    let magnitude = u128::from_str_radix(&digits, radix).map_err(|_| true)?;
    let value = if negative {
        -(magnitude as i128)
    } else {
        magnitude as i128
    };
    i64::try_from(value).map_err(|_| true)
}

/// Go's `strconv.ParseFloat` on the lexer's float text (digits, `.`, `e`, signs, or
/// `inf`/`nan`).
fn go_parse_float(s: &str) -> Option<f64> {
    let body = s.trim_start_matches(['+', '-']);
    if s.len() - body.len() > 1 {
        return None;
    }
    match body {
        "inf" | "nan" => {}
        _ if !body
            .bytes()
            .all(|b| b.is_ascii_digit() || b"eE.+-".contains(&b)) =>
        {
            return None;
        }
        _ => {}
    }
    s.parse::<f64>().ok()
}

/// Reads two digits at `at`.
fn two_digits(b: &[u8], at: usize) -> Option<u32> {
    let pair = b.get(at..at + 2)?;
    pair.iter()
        .all(u8::is_ascii_digit)
        .then(|| u32::from(pair[0] - b'0') * 10 + u32::from(pair[1] - b'0'))
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The datetimes BurntSushi accepts, as Go's `time.ParseInLocation` reads its seven
/// layouts (RFC 3339 with or without zone, local date, local time, and TOML 1.1's times
/// without seconds), fields zero-padded.
fn parse_datetime(s: &str) -> Option<Datetime> {
    let b = s.as_bytes();
    let mut at = 0;
    let date = if b.len() >= 10 && b[4] == b'-' && b[7] == b'-' {
        let year = b[..4]
            .iter()
            .all(u8::is_ascii_digit)
            .then(|| s[..4].parse::<u32>().ok())??;
        let month = two_digits(b, 5)?;
        let day = two_digits(b, 8)?;
        if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
            return None;
        }
        at = 10;
        if at == b.len() {
            return Some(Datetime {
                date: Some(Date {
                    year: year as u16,
                    month: month as u8,
                    day: day as u8,
                }),
                time: None,
                offset: None,
            });
        }
        if b[at] != b'T' {
            return None;
        }
        at += 1;
        Some(Date {
            year: year as u16,
            month: month as u8,
            day: day as u8,
        })
    } else {
        None
    };
    let hour = two_digits(b, at)?;
    if b.get(at + 2) != Some(&b':') {
        return None;
    }
    let minute = two_digits(b, at + 3)?;
    at += 5;
    let (mut second, mut nanosecond) = (0, 0);
    if b.get(at) == Some(&b':') {
        second = two_digits(b, at + 1)?;
        at += 3;
        if b.get(at) == Some(&b'.') && b.get(at + 1).is_some_and(u8::is_ascii_digit) {
            at += 1;
            let digits = b[at..].iter().take_while(|c| c.is_ascii_digit()).count();
            let mut scaled = 0u32;
            for i in 0..9 {
                scaled = scaled * 10
                    + b.get(at + i)
                        .filter(|_| i < digits)
                        .map_or(0, |c| u32::from(c - b'0'));
            }
            nanosecond = scaled;
            at += digits;
        }
    }
    if hour >= 24 || minute >= 60 || second >= 60 {
        return None;
    }
    let time = Some(Time {
        hour: hour as u8,
        minute: minute as u8,
        second: second as u8,
        nanosecond,
    });
    let offset = match (b.get(at), date.is_some()) {
        (None, _) => None,
        (Some(b'Z'), true) if at + 1 == b.len() => Some(Offset::Z),
        (Some(sign @ (b'+' | b'-')), true) if at + 6 == b.len() && b[at + 3] == b':' => {
            let hours = two_digits(b, at + 1)?;
            let minutes = two_digits(b, at + 4)?;
            if hours > 24 || minutes > 60 {
                return None;
            }
            let total = (hours * 60 + minutes) as i16;
            Some(Offset::Custom {
                minutes: if *sign == b'-' { -total } else { total },
            })
        }
        _ => return None,
    };
    Some(Datetime { date, time, offset })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(input: &str) -> String {
        read(input.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn errors_are_burntsushis_words() {
        assert_eq!(
            error("a ="),
            "toml: line 1 (last key \"a\"): unexpected EOF; expected value"
        );
        assert_eq!(
            error("a = 1\na = 2"),
            "toml: line 2 (last key \"a\"): Key 'a' has already been defined."
        );
        assert_eq!(
            error("[t]\nx = 1\n[t]"),
            "toml: line 3: Key 't' has already been defined."
        );
    }

    #[test]
    fn values_are_read() {
        let table = read(b"a = 1\nb = 'x'\n[t]\nc = [1.5, true]\n[[l]]\nd = 1979-05-27").unwrap();
        let table = table.borrow();
        assert!(matches!(table.get("a"), Some(Node::Integer(1))));
        assert!(matches!(table.get("b"), Some(Node::String(s)) if s == "x"));
        assert!(matches!(table.get("t"), Some(Node::Table(_))));
        assert!(matches!(table.get("l"), Some(Node::Tables(l)) if l.borrow().len() == 1));
    }
}
