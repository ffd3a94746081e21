//! Helm's own template functions: `include`, `tpl`, `required`, `fail`, the YAML, JSON
//! and TOML converters, and the offline `lookup` and `getHostByName`.

use std::rc::Rc;

use super::arg::{bytes, str};
use super::{FuncError, Registry, json};
use crate::budget::check_expansion;
use crate::error::{Error, helm_warning};
use crate::exec::Exec;
use crate::gostr::GoBuf;
use crate::print::quote_bytes;
use crate::set::ROOT_NAME;
use crate::value::{Entries, Ty, Value};

/// Helm refuses to nest one template name deeper than this through `include`.
const RECURSION_MAX: usize = 1000;

const S: Ty = Ty::String;
use chartkit_yaml::with_stack;

const A: Ty = Ty::Any;

pub(crate) fn register(r: &mut Registry<'_>) {
    r.exec("include", &[S, A], None, include);
    r.exec("tpl", &[S, A], None, tpl);
    r.exec("required", &[S, A], None, required);
    r.exec("fail", &[S], None, fail);
    // The `to*` forms turn encoding errors into "", but not a value too large to write.
    r.pure("toYaml", &[A], |a| {
        check_expansion(&a[0])?;
        Ok(Value::string(to_yaml(&a[0]).unwrap_or_default()))
    });
    r.pure("mustToYaml", &[A], |a| {
        check_expansion(&a[0])?;
        to_yaml(&a[0]).map(Value::string)
    });
    r.pure("toYamlPretty", &[A], |a| {
        check_expansion(&a[0])?;
        Ok(Value::string(to_yaml_pretty(&a[0]).unwrap_or_default()))
    });
    // go-yaml reads bytes: UTF-16 after its byte order mark, else UTF-8 or nothing.
    r.pure("fromYaml", &[S], |a| {
        Ok(match yaml_text(&a[0]) {
            Ok(text) => {
                crate::budget::reserve_decoded(&text)?;
                from_yaml(&text)
            }
            Err(problem) => error_map(problem),
        })
    });
    r.pure("fromYamlArray", &[S], |a| {
        Ok(match yaml_text(&a[0]) {
            Ok(text) => {
                crate::budget::reserve_decoded(&text)?;
                from_yaml_array(&text)
            }
            Err(problem) => Value::list(vec![Value::string(problem)]),
        })
    });
    r.pure("toJson", &[A], |a| {
        check_expansion(&a[0])?;
        Ok(Value::string(
            json::encode(&a[0], true, None).unwrap_or_default(),
        ))
    });
    r.pure("fromJson", &[S], |a| {
        crate::budget::reserve_decoded(str(&a[0]))?;
        Ok(from_json(str(&a[0])))
    });
    r.pure("fromJsonArray", &[S], |a| {
        crate::budget::reserve_decoded(str(&a[0]))?;
        Ok(from_json_array(str(&a[0])))
    });
    r.pure("lookup", &[S, S, S, S], |_| Ok(Value::empty_map()));
    r.pure("getHostByName", &[S], |_| Ok(Value::str("")));
}

/// `required`: fails on nil or "", except when linting, where Helm logs the message and
/// lets it pass as "".
fn required(exec: &mut Exec<'_>, a: &[Value]) -> Result<Value, FuncError> {
    let missing = match &a[1] {
        Value::Nil => Some("missing required value"),
        Value::String(s) if s.is_empty() => Some("missing required values"),
        _ => None,
    };
    let Some(what) = missing else {
        return Ok(a[1].clone());
    };
    if exec.set.lint_mode {
        exec.set.log(chartkit_yaml::goslog::warn(
            what,
            &[("message", str(&a[0]))],
        ));
        return Ok(Value::str(""));
    }
    Err(helm_warning(str(&a[0])).into())
}

/// `fail`: fails, except when linting, where Helm logs the message and renders "".
fn fail(exec: &mut Exec<'_>, a: &[Value]) -> Result<Value, FuncError> {
    if exec.set.lint_mode {
        exec.set.log(chartkit_yaml::goslog::info(
            "funcMap fail",
            &[("message", str(&a[0]))],
        ));
        return Ok(Value::str(""));
    }
    Err(helm_warning(str(&a[0])).into())
}

fn include(exec: &mut Exec<'_>, a: &[Value]) -> Result<Value, FuncError> {
    let name = str(&a[0]);
    let count = match exec.include_counts.get_mut(name) {
        Some(count) => count,
        None => exec.include_counts.entry(name.into()).or_insert(0),
    };
    if *count > RECURSION_MAX {
        return Err(format!(
            "rendering template has a nested reference name: {name}: unable to execute template"
        )
        .into());
    }
    *count += 1;
    let result = run_include(exec, name, a[1].clone());
    if let Some(count) = exec.include_counts.get_mut(name) {
        *count = count.saturating_sub(1);
    }
    result
}

fn run_include(exec: &mut Exec<'_>, name: &str, data: Value) -> Result<Value, FuncError> {
    let Some(tree) = exec.lookup(name) else {
        let err = Error::NoTemplate {
            name: name.to_owned(),
            set: ROOT_NAME.to_owned(),
        };
        return Err(FuncError {
            message: err.to_string(),
            cause: Some(Box::new(err)),
        });
    };
    exec.nest_call()?;
    let mut out = GoBuf::new();
    let result = exec.execute(&tree, data, &mut out);
    exec.unnest_call();
    match result {
        Ok(()) => Ok(out.into_value()),
        Err(e) => Err(FuncError {
            message: e.to_string(),
            cause: Some(e),
        }),
    }
}

/// Helm's `tpl`: the text is parsed as a template named `gotpl` in a copy of the
/// template set (its `define`s are visible only while it runs) and executed with the
/// given data; `<no value>` is removed from the result.
fn tpl(exec: &mut Exec<'_>, a: &[Value]) -> Result<Value, FuncError> {
    let text = bytes(&a[0]);
    let mut trees = match exec.set.parse_bytes(ROOT_NAME, text) {
        Ok(t) => t,
        Err(e) => {
            return Err(FuncError {
                message: format!("cannot parse template {}: {e}", quote_bytes(text)),
                cause: Some(Box::new(Error::Parse(e))),
            });
        }
    };
    let main = trees.remove(0);
    let data = a[1].clone();
    exec.nest_call()?;
    let result = exec.with_overlay(trees, |exec| {
        let mut out = GoBuf::new();
        exec.execute(&main, data, &mut out).map(|()| out)
    });
    exec.unnest_call();
    match result {
        Ok(GoBuf::Text(out)) if out.contains(crate::set::NO_VALUE) => {
            Ok(Value::string(out.replace(crate::set::NO_VALUE, "")))
        }
        Ok(GoBuf::Text(out)) => Ok(Value::string(out)),
        Ok(GoBuf::Bytes(out)) => Ok(Value::from_go_bytes(crate::set::remove_no_value(&out))),
        Err(e) => Err(FuncError {
            message: format!(
                "error during tpl function execution for {}: {e}",
                quote_bytes(text)
            ),
            cause: Some(e),
        }),
    }
}

/// `toYaml`: the value's JSON form written by go-yaml v2, without the final newline.
/// Values JSON cannot hold (NaN) give an error, which `toYaml` turns into "".
pub(crate) fn to_yaml(v: &Value) -> Result<String, String> {
    json::check_encodable(v)?;
    let mut data = v.to_data();
    let mut scan = GoYamlScan::default();
    scan.value(&data);
    if scan.unreadable {
        return Err("yaml: control characters are not allowed".into());
    }
    if let Some(error) = scan.key_error {
        return Err(error);
    }
    if scan.nels > 0 {
        fold_nel(&mut data);
    }
    let out = chartkit_yaml::to_yaml(&data);
    Ok(out.strip_suffix('\n').unwrap_or(&out).to_owned())
}

/// What go-yaml makes of the JSON `encoding/json` writes for a value, as Helm's way to
/// YAML (`sigs.k8s.io/yaml`) reads it back; one walk, in JSON order. JSON escapes the
/// C0 controls but writes DEL, the C1 controls, U+FFFE and U+FFFF as they are, and
/// go-yaml refuses those (all but NEL, U+0085). NEL it reads as a line break: folded
/// inside a string (see [`fold_nel`]), but a map key that spans lines cannot be a key,
/// and go-yaml fails there, naming the line.
#[derive(Default)]
struct GoYamlScan {
    unreadable: bool,
    nels: usize,
    key_error: Option<String>,
}

impl GoYamlScan {
    fn value(&mut self, data: &chartkit_yaml::Value) {
        use chartkit_yaml::Value as Data;
        match data {
            Data::String(s) => self.text(s, false),
            Data::Bytes(b) => self.text(&crate::gostr::go_lossy(b), false),
            Data::Seq(items) => items
                .iter()
                .for_each(|item| with_stack(|| self.value(item))),
            Data::Map(map) => {
                for (key, item) in map {
                    self.text(key, true);
                    with_stack(|| self.value(item));
                }
            }
            _ => {}
        }
    }

    fn text(&mut self, s: &str, is_key: bool) {
        // In UTF-8 the refused characters are 7F, C2 80..9F but 85, and EF BF BE/BF.
        let b = s.as_bytes();
        self.unreadable |= !memchr::memchr3_iter(0x7f, 0xc2, 0xef, b).all(|i| {
            !matches!(
                (b[i], b.get(i + 1), b.get(i + 2)),
                (0x7f, ..)
                    | (0xc2, Some(0x80..=0x84 | 0x86..=0x9f), _)
                    | (0xef, Some(0xbf), Some(0xbe | 0xbf))
            )
        });
        // go-yaml stops at the first key holding a NEL: later ones are not counted.
        if self.key_error.is_none() {
            let count = memchr::memmem::find_iter(b, "\u{85}".as_bytes()).count();
            self.nels += count;
            if is_key && count > 0 {
                self.key_error = Some(format!(
                    "yaml: line {}: did not find expected ',' or '}}'",
                    self.nels
                ));
            }
        }
    }
}

/// Folds NEL as go-yaml reads it in a double-quoted scalar: spaces before a run of line
/// breaks are dropped and spaces after them skipped; one break becomes a space, `n`
/// breaks `n - 1` newlines.
fn fold_nel(data: &mut chartkit_yaml::Value) {
    fn fold(s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(at) = rest.find('\u{85}') {
            out.push_str(rest[..at].trim_end_matches(' '));
            let run = &rest[at..];
            let end = run.find(|c| c != ' ' && c != '\u{85}').unwrap_or(run.len());
            match run[..end].matches('\u{85}').count() {
                1 => out.push(' '),
                n => out.extend(std::iter::repeat_n('\n', n - 1)),
            }
            rest = &run[end..];
        }
        out.push_str(rest);
        out
    }
    match data {
        chartkit_yaml::Value::String(s) if s.contains('\u{85}') => *s = fold(s),
        chartkit_yaml::Value::Seq(items) => {
            items.iter_mut().for_each(|v| with_stack(|| fold_nel(v)))
        }
        chartkit_yaml::Value::Map(map) => map.values_mut().for_each(|v| with_stack(|| fold_nel(v))),
        _ => {}
    }
}

/// `toYamlPretty`: go-yaml v3 with two-space indentation, which indents sequences
/// under their key and does not fold long lines.
fn to_yaml_pretty(v: &Value) -> Result<String, String> {
    let out = chartkit_yaml::to_yaml_pretty(&v.to_yaml_v3_data());
    Ok(out.strip_suffix('\n').unwrap_or(&out).to_owned())
}

fn yaml_document(text: &str) -> Result<Value, String> {
    decoded_yaml(text).map(|data| Value::from_data(&data))
}

/// The YAML text decoded to data. Charts decode the same text again and again (a
/// labels helper's output in every template, istio's CRDs twice each), so each thread
/// remembers what it decoded, up to a bound on the text kept; every caller still gets
/// its own fresh maps from the shared data.
fn decoded_yaml(text: &str) -> Result<Rc<chartkit_yaml::Value>, String> {
    use std::cell::RefCell;

    type Decoded = Result<Rc<chartkit_yaml::Value>, String>;
    #[derive(Default)]
    struct Memo {
        /// Keyed by the whole text, so the hash must be cheap per byte: FxHash, not SipHash.
        entries: rustc_hash::FxHashMap<Box<str>, Decoded>,
        text_bytes: usize,
    }
    const MAX_TEXT_BYTES: usize = 16 << 20;
    thread_local! {
        static MEMO: RefCell<Memo> = RefCell::default();
    }

    if let Some(known) = MEMO.with_borrow(|memo| memo.entries.get(text).cloned()) {
        return known;
    }
    let decoded = chartkit_yaml::parse_node(text)
        .and_then(|node| node.to_value())
        .map(Rc::new)
        .map_err(|e| e.sigs_yaml_message());
    MEMO.with_borrow_mut(|memo| {
        if memo.text_bytes + text.len() <= MAX_TEXT_BYTES {
            memo.text_bytes += text.len();
            memo.entries.insert(text.into(), decoded.clone());
        }
    });
    decoded
}

/// The text go-yaml reads from a Go string, or its error as `sigs.k8s.io/yaml` words
/// it when the bytes are neither UTF-8 nor UTF-16.
fn yaml_text(text: &Value) -> Result<std::borrow::Cow<'_, str>, String> {
    match text {
        Value::RawStr(bytes) => crate::gostr::go_yaml_decode(bytes)
            .map_err(|problem| format!("error converting YAML to JSON: yaml: {problem}")),
        other => Ok(std::borrow::Cow::Borrowed(str(other))),
    }
}

fn error_map(message: String) -> Value {
    let mut m = Entries::new();
    m.insert(Rc::from("Error"), Value::string(message));
    Value::map(m)
}

fn from_yaml(text: &str) -> Value {
    match yaml_document(text) {
        Ok(Value::Map(m)) => Value::Map(m),
        Ok(Value::Nil) => Value::empty_map(),
        Ok(other) => error_map(format!(
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            json::json_kind(&other)
        )),
        Err(e) => error_map(e),
    }
}

fn from_yaml_array(text: &str) -> Value {
    match yaml_document(text) {
        Ok(Value::List(l)) => Value::List(l),
        Ok(Value::Nil) => Value::list(Vec::new()),
        Ok(other) => Value::list(vec![Value::string(format!(
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type []interface {{}}",
            json::json_kind(&other)
        ))]),
        Err(e) => Value::list(vec![Value::string(e)]),
    }
}

/// Helm's `fromJson`: what `json.Unmarshal` decoded into a map, with its error, if any,
/// under `Error`.
fn from_json(text: &str) -> Value {
    match json::decode_partial(text) {
        Ok((Value::Map(m), error)) => {
            if let Some(error) = error {
                m.borrow_mut()
                    .insert(Rc::from("Error"), Value::string(error));
            }
            Value::Map(m)
        }
        Ok((Value::Nil, None)) => Value::empty_map(),
        Ok((other, error)) => {
            // A number too large is nil here, but still a number to Go's type check.
            let kind = match (&other, error) {
                (Value::Nil, Some(_)) => "number",
                _ => json::json_kind(&other),
            };
            error_map(format!(
                "json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
            ))
        }
        Err(e) => error_map(e),
    }
}

fn from_json_array(text: &str) -> Value {
    match json::decode(text) {
        Ok(Value::List(l)) => Value::List(l),
        Ok(Value::Nil) => Value::list(Vec::new()),
        Ok(other) => Value::list(vec![Value::string(format!(
            "json: cannot unmarshal {} into Go value of type []interface {{}}",
            json::json_kind(&other)
        ))]),
        Err(e) => Value::list(vec![Value::string(e)]),
    }
}
