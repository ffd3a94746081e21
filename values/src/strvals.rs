//! `--set` and friends, parsed as Helm's `pkg/strvals` parses them.
//!
//! The grammar is Helm's, quirks included: `\` escapes any character in keys and values,
//! `,` separates assignments, `a.b` nests maps, `a[0]` indexes lists (growing them with
//! nulls), `{x,y}` is a list value, and `--set` types `true`/`false`/`null`/integers while
//! the other flags keep strings. Errors carry Helm's wording, including the Go panics
//! Helm turns into errors (`interface conversion: interface {} is string, not
//! map[string]interface {}`) when a path runs into a value of another type.

use chartkit_yaml::{Map, Value};

/// Helm's limits on list indexes and key nesting.
pub const MAX_INDEX: i64 = 65536;
pub const MAX_NESTED_NAME_LEVEL: usize = 30;

/// Why a `--set` expression could not be applied; the text is Helm's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StrvalsError(pub String);

/// Turns the text of a value into what ends up in the values.
type Reader<'a> = dyn FnMut(&str) -> Result<Value, String> + 'a;

/// `--set`: values typed as Helm types them (`true`, `false`, `null`, integers).
pub fn parse_set(text: &str, dest: &mut Map) -> Result<(), StrvalsError> {
    Parser::new(text, Mode::Typed(&mut |s: &str| Ok(typed_value(s)))).parse(dest)
}

/// `--set-string`: every value is a string.
pub fn parse_set_string(text: &str, dest: &mut Map) -> Result<(), StrvalsError> {
    Parser::new(
        text,
        Mode::Typed(&mut |s: &str| Ok(Value::String(s.to_owned()))),
    )
    .parse(dest)
}

/// `--set-file`: each value is a path, and `read` returns the file's contents, a Go
/// string of its bytes (`Value::Bytes` when they are not UTF-8).
pub fn parse_set_file(
    text: &str,
    dest: &mut Map,
    read: &mut dyn FnMut(&str) -> Result<Vec<u8>, String>,
) -> Result<(), StrvalsError> {
    let mut typed = |s: &str| {
        read(s).map(|bytes| match String::from_utf8(bytes) {
            Ok(text) => Value::String(text),
            Err(e) => Value::Bytes(e.into_bytes()),
        })
    };
    Parser::new(text, Mode::Typed(&mut typed)).parse(dest)
}

/// `--set-json` in its `key=json` form: each value is one JSON document.
pub fn parse_set_json(text: &str, dest: &mut Map) -> Result<(), StrvalsError> {
    Parser::new(text, Mode::Json).parse(dest)
}

/// `--set-literal`: one assignment, the value taken verbatim to the end of the text.
pub fn parse_set_literal(text: &str, dest: &mut Map) -> Result<(), StrvalsError> {
    Parser::new(text, Mode::Literal).parse(dest)
}

/// Helm's `typedVal` for `--set`.
pub fn typed_value(text: &str) -> Value {
    if text.eq_ignore_ascii_case("true") {
        return Value::Bool(true);
    }
    if text.eq_ignore_ascii_case("false") {
        return Value::Bool(false);
    }
    if text.eq_ignore_ascii_case("null") {
        return Value::Null;
    }
    if text == "0" {
        return Value::Int(0);
    }
    if !text.is_empty()
        && !text.starts_with('0')
        && let Some(int) = parse_go_int(text)
    {
        return Value::Int(int);
    }
    Value::String(text.to_owned())
}

/// `strconv.ParseInt(s, 10, 64)`: an optional sign and ASCII digits, in range.
fn parse_go_int(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.strip_prefix('+').unwrap_or(text).parse().ok()
}

enum Mode<'a> {
    Typed(&'a mut Reader<'a>),
    Json,
    Literal,
}

/// How a read stopped: at one of the stop characters, or at the end of the text.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    At(char),
    End,
}

enum Failure {
    /// The text ended where Helm's reader returns `io.EOF`; the top loop treats that as
    /// a clean end.
    Eof,
    Error(String),
}

impl From<String> for Failure {
    fn from(text: String) -> Self {
        Failure::Error(text)
    }
}

type Step<T> = Result<T, Failure>;

struct Parser<'a> {
    text: Vec<char>,
    pos: usize,
    mode: Mode<'a>,
}

impl<'a> Parser<'a> {
    fn new(text: &str, mode: Mode<'a>) -> Parser<'a> {
        Parser {
            text: text.chars().collect(),
            pos: 0,
            mode,
        }
    }

    fn literal(&self) -> bool {
        matches!(self.mode, Mode::Literal)
    }

    fn json(&self) -> bool {
        matches!(self.mode, Mode::Json)
    }

    fn parse(mut self, dest: &mut Map) -> Result<(), StrvalsError> {
        loop {
            match self.key(dest, 0) {
                Ok(()) => continue,
                Err(Failure::Eof) => return Ok(()),
                Err(Failure::Error(text)) => return Err(StrvalsError(text)),
            }
        }
    }

    fn read(&mut self) -> Option<char> {
        let c = self.text.get(self.pos).copied();
        if c.is_some() {
            self.pos += 1;
        }
        c
    }

    /// Helm's `runesUntil`: characters up to a stop character (consumed), with `\`
    /// escaping the next character except in literal mode.
    fn until(&mut self, stop: &[char]) -> (String, Stop) {
        let mut out = String::new();
        loop {
            let Some(c) = self.read() else {
                return (out, Stop::End);
            };
            if stop.contains(&c) {
                return (out, Stop::At(c));
            }
            if c == '\\' && !self.literal() {
                match self.read() {
                    Some(next) => out.push(next),
                    None => return (out, Stop::End),
                }
                continue;
            }
            out.push(c);
        }
    }

    fn key(&mut self, data: &mut Map, level: usize) -> Step<()> {
        let stop: &[char] = if self.literal() {
            &['=', '[', '.']
        } else {
            &['=', '[', ',', '.']
        };
        let (key, last) = self.until(stop);
        match last {
            Stop::End => {
                if key.is_empty() {
                    Err(Failure::Eof)
                } else {
                    Err(format!("key {key:?} has no value").into())
                }
            }
            Stop::At('[') => {
                let index = self
                    .key_index()
                    .map_err(|e| Failure::Error(format!("error parsing index: {e}")))?;
                let list = match data.get(&key) {
                    None => Vec::new(),
                    Some(Value::Seq(items)) => items.clone(),
                    Some(other) => return Err(conversion(other, "[]interface {}")),
                };
                let (list, result) = self.list_item(list, index, level);
                set(data, &key, list.map_or(Value::Null, Value::Seq));
                result
            }
            Stop::At('=') => {
                if self.literal() {
                    let value: String = self.text[self.pos..].iter().collect();
                    self.pos = self.text.len();
                    set(data, &key, Value::String(value));
                    return Ok(());
                }
                if self.json() {
                    if self.empty_value() {
                        set(data, &key, Value::Null);
                        return Ok(());
                    }
                    let value = self.json_value()?;
                    set(data, &key, value);
                    self.empty_value();
                    return Ok(());
                }
                match self.value_list()? {
                    Some(ListOrEnd::List(list)) => {
                        set(data, &key, Value::Seq(list));
                        Ok(())
                    }
                    Some(ListOrEnd::End) => {
                        set(data, &key, Value::String(String::new()));
                        Err(Failure::Eof)
                    }
                    None => {
                        let (text, _) = self.until(&[',']);
                        let value = self.convert(&text);
                        match value {
                            Ok(value) => {
                                set(data, &key, value);
                                Ok(())
                            }
                            Err(e) => Err(Failure::Error(e)),
                        }
                    }
                }
            }
            Stop::At(',') => {
                set(data, &key, Value::String(String::new()));
                Err(format!("key {key:?} has no value (cannot end with ,)").into())
            }
            Stop::At(_) => {
                let level = level + 1;
                if level > MAX_NESTED_NAME_LEVEL {
                    return Err(format!(
                        "value name nested level is greater than maximum supported nested level of {MAX_NESTED_NAME_LEVEL}"
                    )
                    .into());
                }
                let mut inner = match data.get(&key) {
                    None => Map::new(),
                    Some(Value::Map(m)) => m.clone(),
                    Some(other) => return Err(conversion(other, "map[string]interface {}")),
                };
                let result = self.key(&mut inner, level);
                if result.is_ok() && inner.is_empty() {
                    return Err(format!("key map {key:?} has no value").into());
                }
                if !inner.is_empty() {
                    set(data, &key, Value::Map(inner));
                }
                result
            }
        }
    }

    fn convert(&mut self, text: &str) -> Result<Value, String> {
        match &mut self.mode {
            Mode::Typed(reader) => reader(text),
            Mode::Json | Mode::Literal => Ok(Value::String(text.to_owned())),
        }
    }

    fn key_index(&mut self) -> Result<i64, String> {
        let (text, last) = self.until(&[']']);
        if last == Stop::End {
            return Err("EOF".into());
        }
        go_atoi(&text)
    }

    /// Helm's `listItem`: what follows `name[i]`. Returns the list to store (None when
    /// Helm stores nil) with the outcome.
    fn list_item(
        &mut self,
        mut list: Vec<Value>,
        index: i64,
        level: usize,
    ) -> (Option<Vec<Value>>, Step<()>) {
        if index < 0 {
            return (
                Some(list),
                Err(format!("negative {index} index not allowed").into()),
            );
        }
        let (rest, last) = self.until(&['[', '.', '=']);
        if !rest.is_empty() {
            return (
                Some(list),
                Err(format!("unexpected data at end of array index: {}", go_runes(&rest)).into()),
            );
        }
        match last {
            Stop::End => (Some(list), Err(Failure::Eof)),
            Stop::At('=') => {
                let value = if self.literal() {
                    let value: String = self.text[self.pos..].iter().collect();
                    self.pos = self.text.len();
                    Value::String(value)
                } else if self.json() {
                    if self.empty_value() {
                        Value::Null
                    } else {
                        let value = match self.json_value() {
                            Ok(v) => v,
                            Err(e) => return (Some(list), Err(e)),
                        };
                        if let Err(e) = set_index(&mut list, index, value) {
                            return (Some(list), Err(e.into()));
                        }
                        self.empty_value();
                        return (Some(list), Ok(()));
                    }
                } else {
                    match self.value_list() {
                        Err(e) => return (Some(list), Err(e)),
                        Ok(Some(ListOrEnd::List(items))) => Value::Seq(items),
                        Ok(Some(ListOrEnd::End)) => Value::String(String::new()),
                        Ok(None) => {
                            let (text, _) = self.until(&[',']);
                            match self.convert(&text) {
                                Ok(v) => v,
                                Err(e) => return (Some(list), Err(e.into())),
                            }
                        }
                    }
                };
                let result = set_index(&mut list, index, value).map_err(Failure::Error);
                (Some(list), result)
            }
            Stop::At('[') => {
                let next = match self.key_index() {
                    Ok(i) => i,
                    Err(e) => {
                        return (Some(list), Err(format!("error parsing index: {e}").into()));
                    }
                };
                let current = match list.get(index as usize) {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Seq(items)) => items.clone(),
                    Some(other) => {
                        let failure = conversion(other, "[]interface {}");
                        return (Some(list), Err(failure));
                    }
                };
                let (inner, result) = self.list_item(current, next, level);
                if let Err(e) = result {
                    return (Some(list), Err(e));
                }
                let value = inner.map_or(Value::Null, Value::Seq);
                let result = set_index(&mut list, index, value).map_err(Failure::Error);
                (Some(list), result)
            }
            Stop::At('.') => {
                let mut inner = match list.get(index as usize) {
                    Some(Value::Map(m)) => m.clone(),
                    _ => Map::new(),
                };
                if let Err(e) = self.key(&mut inner, level) {
                    return (Some(list), Err(e));
                }
                let result = set_index(&mut list, index, Value::Map(inner)).map_err(Failure::Error);
                (Some(list), result)
            }
            Stop::At(c) => (
                None,
                Err(format!("parse error: unexpected token {}", c as u32).into()),
            ),
        }
    }

    /// Helm's `emptyVal`: skips spaces; true (consuming a comma) at a comma or the end.
    fn empty_value(&mut self) -> bool {
        loop {
            match self.text.get(self.pos) {
                None => return true,
                Some(',') => {
                    self.pos += 1;
                    return true;
                }
                Some(c) if c.is_whitespace() => self.pos += 1,
                Some(_) => return false,
            }
        }
    }

    /// One JSON document from the current position, as Go's `json.Decoder` reads it.
    fn json_value(&mut self) -> Step<Value> {
        let rest: String = self.text[self.pos..].iter().collect();
        let mut stream = serde_json::Deserializer::from_str(&rest).into_iter::<serde_json::Value>();
        match stream.next() {
            Some(Ok(value)) => {
                let consumed = rest[..stream.byte_offset()].chars().count();
                self.pos += consumed;
                Ok(from_json(&value))
            }
            Some(Err(e)) => Err(Failure::Error(e.to_string())),
            None => Err(Failure::Error("EOF".into())),
        }
    }

    /// Helm's `valList`: `{a,b}` as a list; `None` when the value is not a list.
    fn value_list(&mut self) -> Step<Option<ListOrEnd>> {
        match self.text.get(self.pos) {
            None => return Ok(Some(ListOrEnd::End)),
            Some('{') => self.pos += 1,
            Some(_) => return Ok(None),
        }
        let mut list = Vec::new();
        loop {
            let (text, last) = self.until(&[',', '}']);
            match last {
                Stop::End => return Err("list must terminate with '}'".to_owned().into()),
                Stop::At('}') => {
                    if self.text.get(self.pos) == Some(&',') {
                        self.pos += 1;
                    }
                    let value = self.convert(&text).map_err(Failure::Error)?;
                    list.push(value);
                    return Ok(Some(ListOrEnd::List(list)));
                }
                Stop::At(_) => {
                    let value = self.convert(&text).map_err(Failure::Error)?;
                    list.push(value);
                }
            }
        }
    }
}

enum ListOrEnd {
    List(Vec<Value>),
    End,
}

fn set(data: &mut Map, key: &str, value: Value) {
    if !key.is_empty() {
        data.insert(key.to_owned(), value);
    }
}

fn set_index(list: &mut Vec<Value>, index: i64, value: Value) -> Result<(), String> {
    if index < 0 {
        return Err(format!("negative {index} index not allowed"));
    }
    if index > MAX_INDEX {
        return Err(format!(
            "index of {index} is greater than maximum supported index of {MAX_INDEX}"
        ));
    }
    let index = index as usize;
    if list.len() <= index {
        list.resize(index + 1, Value::Null);
    }
    list[index] = value;
    Ok(())
}

/// The error Helm reports after recovering from a failed Go type assertion.
fn conversion(found: &Value, wanted: &str) -> Failure {
    let found = match found {
        Value::Null => "nil",
        Value::Bool(_) => "bool",
        Value::Int(_) => "int64",
        Value::Float(_) => "float64",
        Value::String(_) | Value::Bytes(_) => "string",
        Value::Seq(_) => "[]interface {}",
        Value::Map(_) => "map[string]interface {}",
    };
    Failure::Error(format!(
        "unable to parse key: interface conversion: interface {{}} is {found}, not {wanted}"
    ))
}

/// `strconv.Atoi` with its error text.
fn go_atoi(text: &str) -> Result<i64, String> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("strconv.Atoi: parsing {text:?}: invalid syntax"));
    }
    text.strip_prefix('+')
        .unwrap_or(text)
        .parse()
        .map_err(|_| format!("strconv.Atoi: parsing {text:?}: value out of range"))
}

/// Go's `%q` of a rune slice: `['a' 'b']`.
fn go_runes(text: &str) -> String {
    let items: Vec<String> = text
        .chars()
        .map(|c| match c {
            '\'' => "'\\''".to_owned(),
            '\\' => "'\\\\'".to_owned(),
            '\n' => "'\\n'".to_owned(),
            '\t' => "'\\t'".to_owned(),
            c if c.is_control() => format!("'\\x{:02x}'", c as u32),
            c => format!("'{c}'"),
        })
        .collect();
    format!("[{}]", items.join(" "))
}

/// JSON as Go's `encoding/json` decodes it into `interface{}`: numbers are float64.
pub fn from_json(value: &serde_json::Value) -> Value {
    match value {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => Value::Float(n.as_f64().unwrap_or(0.0)),
        serde_json::Value::String(s) => Value::String(s.clone()),
        serde_json::Value::Array(items) => Value::Seq(items.iter().map(from_json).collect()),
        serde_json::Value::Object(map) => {
            Value::Map(map.iter().map(|(k, v)| (k.clone(), from_json(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set_yaml(exprs: &[&str]) -> String {
        let mut map = Map::new();
        for e in exprs {
            parse_set(e, &mut map).unwrap();
        }
        chartkit_yaml::to_yaml(&Value::Map(map))
    }

    fn set_err(expr: &str) -> String {
        let mut map = Map::new();
        parse_set(expr, &mut map).unwrap_err().0
    }

    #[test]
    fn set_types_values_as_helm() {
        assert_eq!(
            set_yaml(&["a=1,b=true,c=FALSE,d=null,e=007,f=1.5,g=-3,h=+4,i=0,j="]),
            "a: 1\nb: true\nc: false\nd: null\ne: \"007\"\nf: \"1.5\"\ng: -3\nh: 4\ni: 0\nj: \"\"\n"
        );
        let mut map = Map::new();
        parse_set("big=99999999999999999999", &mut map).unwrap();
        assert_eq!(map["big"], Value::String("99999999999999999999".into()));
        parse_set("n=12", &mut map).unwrap();
        assert_eq!(map["n"], Value::Int(12));
    }

    #[test]
    fn nesting_lists_and_escapes() {
        assert_eq!(
            set_yaml(&["a.b.c=1", "a.b.d=x"]),
            "a:\n  b:\n    c: 1\n    d: x\n"
        );
        assert_eq!(
            set_yaml(&["name=one\\,two,dotted\\.key=v"]),
            "dotted.key: v\nname: one,two\n"
        );
        assert_eq!(set_yaml(&["l={a,b,c}"]), "l:\n- a\n- b\n- c\n");
        assert_eq!(set_yaml(&["l[2]=x"]), "l:\n- null\n- null\n- x\n");
        assert_eq!(
            set_yaml(&["l[0].name=a,l[0].port=80,l[1].name=b"]),
            "l:\n- name: a\n  port: 80\n- name: b\n"
        );
        assert_eq!(set_yaml(&["m[0][1]=x"]), "m:\n- - null\n  - x\n");
        assert_eq!(set_yaml(&["l[0]={a,b}"]), "l:\n- - a\n  - b\n");
        // `a[0]` with nothing after it leaves an empty list, as in Helm.
        assert_eq!(set_yaml(&["a[0]"]), "a: []\n");
        assert_eq!(set_yaml(&[""]), "{}\n");
    }

    #[test]
    fn errors_are_worded_like_helm() {
        assert_eq!(set_err("a"), "key \"a\" has no value");
        assert_eq!(set_err("a,"), "key \"a\" has no value (cannot end with ,)");
        assert_eq!(
            set_err("q[x]=1"),
            "error parsing index: strconv.Atoi: parsing \"x\": invalid syntax"
        );
        assert_eq!(
            set_err("q[0]x=1"),
            "unexpected data at end of array index: ['x']"
        );
        assert_eq!(set_err("q[-1]=1"), "negative -1 index not allowed");
        assert_eq!(
            set_err("q[70000]=1"),
            "index of 70000 is greater than maximum supported index of 65536"
        );
        assert_eq!(set_err("l={a,b"), "list must terminate with '}'");
        let mut map = Map::new();
        parse_set("a.b=1", &mut map).unwrap();
        assert_eq!(
            parse_set("a.b.c=1", &mut map).unwrap_err().0,
            "unable to parse key: interface conversion: interface {} is int64, not map[string]interface {}"
        );
        parse_set("q[0]=1", &mut map).unwrap();
        assert_eq!(
            parse_set("q.b=1", &mut map).unwrap_err().0,
            "unable to parse key: interface conversion: interface {} is []interface {}, not map[string]interface {}"
        );
        let deep = (0..32)
            .map(|i| format!("k{i}"))
            .collect::<Vec<_>>()
            .join(".")
            + "=1";
        assert_eq!(
            set_err(&deep),
            "value name nested level is greater than maximum supported nested level of 30"
        );
    }

    #[test]
    fn string_file_json_and_literal_flags() {
        let mut map = Map::new();
        parse_set_string("a=true,b=1,c=null", &mut map).unwrap();
        assert_eq!(
            chartkit_yaml::to_yaml(&Value::Map(map)),
            "a: \"true\"\nb: \"1\"\nc: \"null\"\n"
        );

        let mut map = Map::new();
        parse_set_file("cfg=conf.txt,bin=b", &mut map, &mut |path| {
            Ok(match path {
                "b" => b"\xff\x00".to_vec(),
                _ => format!("<{path}>").into_bytes(),
            })
        })
        .unwrap();
        assert_eq!(map["cfg"], Value::String("<conf.txt>".into()));
        assert_eq!(map["bin"], Value::Bytes(b"\xff\x00".to_vec()));

        let mut map = Map::new();
        parse_set_json("a={\"x\":[1,\"y\"]},b=[1,2],c=\"s\",d=,l[1]=true", &mut map).unwrap();
        assert_eq!(
            chartkit_yaml::to_yaml(&Value::Map(map)),
            "a:\n  x:\n  - 1\n  - \"y\"\nb:\n- 1\n- 2\nc: s\nd: null\nl:\n- null\n- true\n"
        );
        let mut map = Map::new();
        assert!(parse_set_json("a={", &mut map).is_err());

        let mut map = Map::new();
        parse_set_literal("a.b=x,y=z\\,{1}", &mut map).unwrap();
        assert_eq!(
            map["a"].lookup("b"),
            Some(&Value::String("x,y=z\\,{1}".into()))
        );
    }
}
