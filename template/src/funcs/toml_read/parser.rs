//! BurntSushi/toml's parser: items into tables, with its checks of keys defined twice
//! and its words for every error.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::rc::Rc;

use toml::value::{Date, Datetime, Offset, Time};

use super::lexer::{Item, Kind, Lexer, is_hex, q};
use super::{Node, ParseError, Table, new_table};
use crate::print::quote;

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

pub(super) struct Parser<'a> {
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

impl<'a> Parser<'a> {
    pub(super) fn new(data: &'a [u8]) -> Parser<'a> {
        Parser {
            lx: Lexer::new(data),
            context: Vec::new(),
            current_key: String::new(),
            pos_line: 0,
            arrays: HashMap::new(),
            mapping: new_table(),
            implicits: HashSet::new(),
        }
    }

    /// Reads the whole document into its top-level table.
    pub(super) fn run(mut self) -> PResult<Table> {
        loop {
            let item = self.next()?;
            if item.kind == Kind::Eof {
                break;
            }
            self.top_level(item)?;
        }
        Ok(self.mapping)
    }

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
