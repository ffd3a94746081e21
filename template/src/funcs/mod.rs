//! Template functions: Go's builtins, Sprig v3 as Helm registers it, and Helm's own.

use rustc_hash::FxHashMap;

use crate::error::Error;
use crate::exec::Exec;
use crate::value::{Ty, Value};

pub(crate) mod builtins;
pub(crate) mod certs;
pub(crate) mod compare;
pub(crate) mod convert;
pub(crate) mod crypto;
pub(crate) mod date;
pub(crate) mod defaults;
pub(crate) mod dicts;
pub(crate) mod encoding;
pub(crate) mod gotime;
pub(crate) mod helm;
pub(crate) mod json;
pub(crate) mod lists;
pub(crate) mod math;
pub(crate) mod paths;
pub(crate) mod reflection;
pub(crate) mod regex;
mod rsa_keys;
pub(crate) mod semver;
pub(crate) mod strings;
pub(crate) mod toml;
mod toml_read;
pub(crate) mod url;

/// Why a function call failed. The executor adds `error calling NAME: `.
#[derive(Debug)]
pub struct FuncError {
    pub message: String,
    /// The template error behind the failure, for `include` and `tpl`.
    pub cause: Option<Box<Error>>,
}

impl From<String> for FuncError {
    fn from(message: String) -> Self {
        FuncError {
            message,
            cause: None,
        }
    }
}

impl From<&str> for FuncError {
    fn from(message: &str) -> Self {
        FuncError::from(message.to_owned())
    }
}

pub type PureFn = fn(&[Value]) -> Result<Value, String>;
pub type ExecFn = fn(&mut Exec<'_>, &[Value]) -> Result<Value, FuncError>;

pub enum Imp {
    /// A function of its arguments alone.
    Pure(PureFn),
    /// A function that needs the running render (`include`, `tpl`).
    Exec(ExecFn),
    /// Go's short-circuiting `and` (false) and `or` (true).
    AndOr(bool),
    /// Go's `call`.
    Call,
}

/// A function with its Go parameter types, which decide argument conversion and errors.
pub struct Func {
    pub params: &'static [Ty],
    pub variadic: Option<Ty>,
    pub imp: Imp,
    /// Whether it takes the bytes of `string` arguments that are not UTF-8
    /// (`Value::RawStr`) as they are. Other functions get such arguments as text, each
    /// byte that is not UTF-8 read as U+FFFD, which is what Go's character-by-character
    /// string functions see.
    pub raw_strings: bool,
}

/// The functions that work on the bytes of their `string` arguments, as Go's do.
pub(crate) const RAW_STRING_FUNCTIONS: &[&str] = &[
    "len",
    "index",
    "slice",
    "trunc",
    "substr",
    "abbrev",
    "abbrevboth",
    "wrap",
    "wrapWith",
    "trim",
    "trimAll",
    "trimall",
    "trimPrefix",
    "trimSuffix",
    "contains",
    "hasPrefix",
    "hasSuffix",
    "replace",
    "repeat",
    "indent",
    "nindent",
    "nospace",
    "initials",
    "split",
    "splitn",
    "splitList",
    "join",
    "b64enc",
    "b32enc",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "adler32sum",
    "fromYaml",
    "fromYamlArray",
    "fromToml",
    "tpl",
    "encryptAES",
    "decryptAES",
];

/// Looked up for every function call and every identifier the parser meets; the
/// names are short and trusted, so a fast non-keyed hash fits.
pub(crate) type FuncMap = FxHashMap<&'static str, Func>;

pub(crate) struct Registry<'a>(&'a mut FuncMap);

impl Registry<'_> {
    pub(crate) fn pure(&mut self, name: &'static str, params: &'static [Ty], f: PureFn) {
        self.0.insert(
            name,
            Func {
                params,
                variadic: None,
                imp: Imp::Pure(f),
                raw_strings: false,
            },
        );
    }

    pub(crate) fn variadic(
        &mut self,
        name: &'static str,
        params: &'static [Ty],
        rest: Ty,
        f: PureFn,
    ) {
        self.0.insert(
            name,
            Func {
                params,
                variadic: Some(rest),
                imp: Imp::Pure(f),
                raw_strings: false,
            },
        );
    }

    pub(crate) fn exec(
        &mut self,
        name: &'static str,
        params: &'static [Ty],
        variadic: Option<Ty>,
        f: ExecFn,
    ) {
        self.0.insert(
            name,
            Func {
                params,
                variadic,
                imp: Imp::Exec(f),
                raw_strings: false,
            },
        );
    }

    pub(crate) fn special(
        &mut self,
        name: &'static str,
        params: &'static [Ty],
        variadic: Option<Ty>,
        imp: Imp,
    ) {
        self.0.insert(
            name,
            Func {
                params,
                variadic,
                imp,
                raw_strings: false,
            },
        );
    }
}

/// Every function a Helm template can call.
pub(crate) fn helm_functions() -> FuncMap {
    let mut map = FuncMap::default();
    let mut r = Registry(&mut map);
    builtins::register(&mut r);
    strings::register(&mut r);
    convert::register(&mut r);
    math::register(&mut r);
    defaults::register(&mut r);
    lists::register(&mut r);
    dicts::register(&mut r);
    encoding::register(&mut r);
    paths::register(&mut r);
    reflection::register(&mut r);
    regex::register(&mut r);
    semver::register(&mut r);
    date::register(&mut r);
    crypto::register(&mut r);
    json::register(&mut r);
    toml::register(&mut r);
    url::register(&mut r);
    helm::register(&mut r);
    for name in RAW_STRING_FUNCTIONS {
        if let Some(func) = map.get_mut(name) {
            func.raw_strings = true;
        }
    }
    map
}

/// Argument accessors. The executor has already checked arguments against the declared
/// parameter types, so these only see the types they expect.
pub(crate) mod arg {
    use crate::value::Value;

    pub fn str(v: &Value) -> &str {
        v.as_str().unwrap_or("")
    }

    /// The bytes of a Go string argument, text or not (for functions registered as
    /// taking raw strings, see [`super::RAW_STRING_FUNCTIONS`]).
    pub fn bytes(v: &Value) -> &[u8] {
        v.go_str_bytes().unwrap_or(&[])
    }

    /// Bytes `start..end` of a Go string argument, as a string value: a slice of text
    /// on character boundaries stays text without checking it again.
    pub fn sub(v: &Value, start: usize, end: usize) -> Value {
        match v {
            Value::String(s) if s.is_char_boundary(start) && s.is_char_boundary(end) => {
                Value::str(&s[start..end])
            }
            _ => Value::from_go_slice(&bytes(v)[start..end]),
        }
    }

    pub fn int(v: &Value) -> i64 {
        match v {
            Value::Int(i) | Value::Int64(i) => *i,
            Value::Uint8(u) => *u as i64,
            _ => 0,
        }
    }
}
