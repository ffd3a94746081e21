//! Helm's host objects as templates see them: `.Files` and `.Capabilities`.
//!
//! The render pipeline fills them; their methods, printing and Go type names are
//! template behaviour, so they live here.

use std::any::Any;
use std::collections::BTreeMap;
use std::rc::Rc;

use bytes::Bytes;

use crate::value::{
    Entries, Field, List, ListKind, MapCell, MapKind, MethodSig, Object, Ty, Value,
};

const NO_ARGS: MethodSig = MethodSig {
    params: &[],
    variadic: None,
};
const ONE_STRING: MethodSig = MethodSig {
    params: &[Ty::String],
    variadic: None,
};

/// `.Files`: the chart's non-template files (Helm's `engine.files`, a
/// `map[string][]byte` with methods).
#[derive(Debug, Clone, Default)]
pub struct Files {
    /// Shared with the loaded chart: building `.Files` for every chart copies no data.
    files: BTreeMap<String, Bytes>,
}

impl Files {
    pub fn new<D: Into<Bytes>>(files: impl IntoIterator<Item = (String, D)>) -> Files {
        Files {
            files: files
                .into_iter()
                .map(|(name, data)| (name, data.into()))
                .collect(),
        }
    }

    pub fn into_value(self) -> Value {
        Value::Object(Rc::new(self))
    }

    fn bytes(&self, name: &str) -> Bytes {
        self.files.get(name).cloned().unwrap_or_default()
    }

    fn base_map(&self, encode: impl Fn(&[u8]) -> Value) -> String {
        let mut m = Entries::new();
        for (name, data) in &self.files {
            let base = name.rsplit('/').next().unwrap_or(name);
            m.insert(Rc::from(base), encode(data));
        }
        crate::funcs::helm::to_yaml(&Value::map(m)).unwrap_or_default()
    }
}

/// A file's contents as a template `[]byte`, copied only when a template asks for them.
fn bytes_value(data: &Bytes) -> Value {
    Value::Bytes(Rc::from(&data[..]))
}

impl Object for Files {
    fn type_name(&self) -> String {
        "engine.files".into()
    }

    fn kind(&self) -> &'static str {
        "map"
    }

    fn is_map(&self) -> bool {
        true
    }

    fn field(&self, name: &str) -> Option<Value> {
        self.files.get(name).map(bytes_value)
    }

    fn method(&self, name: &str) -> Option<MethodSig> {
        match name {
            "Get" | "GetBytes" | "Glob" | "Lines" => Some(ONE_STRING),
            "AsConfig" | "AsSecrets" => Some(NO_ARGS),
            _ => None,
        }
    }

    fn call(&self, name: &str, args: &[Value]) -> Result<Value, String> {
        let arg = || args.first().and_then(Value::as_str).unwrap_or("");
        Ok(match name {
            // A Go string of the file's bytes, binary or not.
            "Get" => Value::from_go_slice(&self.bytes(arg())),
            "GetBytes" => bytes_value(&self.bytes(arg())),
            "Glob" => {
                let pattern = glob::Pattern::new(arg());
                Files {
                    files: self
                        .files
                        .iter()
                        .filter(|(n, _)| pattern.matches(n))
                        .map(|(n, d)| (n.clone(), d.clone()))
                        .collect(),
                }
                .into_value()
            }
            "Lines" => {
                let Some(data) = self.files.get(arg()) else {
                    return Ok(Value::string_list(Vec::new()));
                };
                let data = data.strip_suffix(b"\n").unwrap_or(data);
                Value::List(Rc::new(List::new(
                    ListKind::String,
                    data.split(|&b| b == b'\n')
                        .map(Value::from_go_slice)
                        .collect(),
                )))
            }
            "AsConfig" => Value::string(self.base_map(Value::from_go_slice)),
            "AsSecrets" => Value::string(self.base_map(|d| {
                use base64::Engine as _;
                Value::string(base64::engine::general_purpose::STANDARD.encode(d))
            })),
            other => return Err(format!("no method {other}")),
        })
    }

    fn format(&self) -> String {
        crate::print::sprint(&self.underlying().unwrap_or_default())
    }

    fn to_data(&self) -> Value {
        self.underlying().unwrap_or_default()
    }

    fn underlying(&self) -> Option<Value> {
        Some(Value::map(
            self.files
                .iter()
                .map(|(k, v)| (Rc::from(k.as_str()), bytes_value(v)))
                .collect(),
        ))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// gobwas/glob with `/` as separator, as `Files.Glob` uses it: `*` and `?` stay within
/// a path segment, `**` crosses segments, `[...]`/`[!...]` are classes and `{a,b}`
/// alternatives. An invalid pattern matches everything, as Helm falls back to `**`.
mod glob {
    #[derive(Debug, Clone)]
    enum Token {
        Literal(char),
        Any,
        AnyDeep,
        One,
        Class(bool, Vec<(char, char)>),
        Alt(Vec<Vec<Token>>),
    }

    pub struct Pattern(Option<Vec<Token>>);

    impl Pattern {
        pub fn new(pattern: &str) -> Pattern {
            let chars: Vec<char> = pattern.chars().collect();
            let mut i = 0;
            Pattern(parse(&chars, &mut i, false))
        }

        pub fn matches(&self, text: &str) -> bool {
            match &self.0 {
                Some(tokens) => {
                    let chars: Vec<char> = text.chars().collect();
                    match_tokens(tokens, &chars)
                }
                None => true,
            }
        }
    }

    fn parse(chars: &[char], i: &mut usize, in_alt: bool) -> Option<Vec<Token>> {
        let mut out = Vec::new();
        while *i < chars.len() {
            let c = chars[*i];
            match c {
                '*' => {
                    if chars.get(*i + 1) == Some(&'*') {
                        *i += 1;
                        out.push(Token::AnyDeep);
                    } else {
                        out.push(Token::Any);
                    }
                }
                '?' => out.push(Token::One),
                '\\' => {
                    *i += 1;
                    out.push(Token::Literal(*chars.get(*i)?));
                }
                '[' => {
                    *i += 1;
                    let negate = chars.get(*i) == Some(&'!');
                    if negate {
                        *i += 1;
                    }
                    let mut ranges = Vec::new();
                    loop {
                        let c = *chars.get(*i)?;
                        if c == ']' {
                            break;
                        }
                        if chars.get(*i + 1) == Some(&'-')
                            && chars.get(*i + 2).is_some_and(|c| *c != ']')
                        {
                            ranges.push((c, chars[*i + 2]));
                            *i += 3;
                        } else {
                            ranges.push((c, c));
                            *i += 1;
                        }
                    }
                    out.push(Token::Class(negate, ranges));
                }
                '{' => {
                    *i += 1;
                    let mut alts = Vec::new();
                    loop {
                        alts.push(parse(chars, i, true)?);
                        match chars.get(*i) {
                            Some(',') => *i += 1,
                            Some('}') => break,
                            _ => return None,
                        }
                    }
                    out.push(Token::Alt(alts));
                }
                ',' | '}' if in_alt => return Some(out),
                c => out.push(Token::Literal(c)),
            }
            *i += 1;
        }
        if in_alt { None } else { Some(out) }
    }

    fn match_tokens(tokens: &[Token], text: &[char]) -> bool {
        let Some((first, rest)) = tokens.split_first() else {
            return text.is_empty();
        };
        match first {
            Token::Literal(c) => text.first() == Some(c) && match_tokens(rest, &text[1..]),
            Token::One => text.first().is_some_and(|c| *c != '/') && match_tokens(rest, &text[1..]),
            Token::Class(negate, ranges) => {
                text.first().is_some_and(|c| {
                    let inside = ranges.iter().any(|(lo, hi)| (lo..=hi).contains(&c));
                    inside != *negate
                }) && match_tokens(rest, &text[1..])
            }
            Token::Any => (0..=text.len())
                .take_while(|&n| n == 0 || text[n - 1] != '/')
                .any(|n| match_tokens(rest, &text[n..])),
            Token::AnyDeep => (0..=text.len()).any(|n| match_tokens(rest, &text[n..])),
            Token::Alt(alts) => alts.iter().any(|alt| {
                let mut joined = alt.clone();
                joined.extend_from_slice(rest);
                match_tokens(&joined, text)
            }),
        }
    }
}

/// `.Capabilities`: the Kubernetes version and API versions a render targets (Helm's
/// `*common.Capabilities`).
#[derive(Debug, Clone)]
pub struct Capabilities {
    /// The version as given (`v1.33.4-gke.1245000`): `.KubeVersion.Version`.
    pub kube_version: String,
    /// The version reduced to its numbers (`v1.33.4`): what `.KubeVersion` prints and
    /// version constraints are checked against.
    pub kube_normalized_version: String,
    pub kube_major: String,
    pub kube_minor: String,
    pub api_versions: Vec<String>,
    pub helm_version: HelmVersion,
}

/// Helm's build information (`.Capabilities.HelmVersion`, a `version.BuildInfo`).
#[derive(Debug, Clone)]
pub struct HelmVersion {
    pub version: String,
    pub git_commit: String,
    pub git_tree_state: String,
    pub go_version: String,
    pub kube_client_version: String,
}

impl Capabilities {
    pub fn into_value(self) -> Value {
        Value::Object(Rc::new(self))
    }

    fn kube(&self) -> KubeVersion {
        KubeVersion {
            version: self.kube_version.clone(),
            normalized: self.kube_normalized_version.clone(),
            major: self.kube_major.clone(),
            minor: self.kube_minor.clone(),
            addressable: true,
        }
    }
}

/// `common.KubeVersion`, a struct whose `String` method has a pointer receiver: printed
/// from `.Capabilities` it is its normalized version, passed to a function its fields.
#[derive(Debug, Clone)]
struct KubeVersion {
    version: String,
    normalized: String,
    major: String,
    minor: String,
    /// Reached through `.Capabilities`, so printed through a pointer.
    addressable: bool,
}

impl Object for KubeVersion {
    fn type_name(&self) -> String {
        "common.KubeVersion".into()
    }

    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "Version" => Some(Value::str(&self.version)),
            "Major" => Some(Value::str(&self.major)),
            "Minor" => Some(Value::str(&self.minor)),
            _ => None,
        }
    }

    fn method(&self, name: &str) -> Option<MethodSig> {
        matches!(name, "String" | "GitVersion").then_some(NO_ARGS)
    }

    fn call(&self, name: &str, _args: &[Value]) -> Result<Value, String> {
        Ok(Value::str(match name {
            "GitVersion" => &self.version,
            _ => self.string(),
        }))
    }

    fn struct_fields(&self) -> Option<Vec<Field>> {
        Some(vec![
            Field::new("Version", Value::str(&self.version)),
            Field::unexported("normalizedVersion", Value::str(&self.normalized)),
            Field::new("Major", Value::str(&self.major)),
            Field::new("Minor", Value::str(&self.minor)),
        ])
    }

    fn template_format(&self) -> Option<String> {
        self.addressable.then(|| self.string().to_owned())
    }

    fn deep_copy(&self) -> Option<Value> {
        Some(Value::Object(Rc::new(KubeVersion {
            normalized: String::new(),
            addressable: false,
            ..self.clone()
        })))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl KubeVersion {
    /// Helm's `String`: the normalized version, or the version when there is none.
    fn string(&self) -> &str {
        if self.normalized.is_empty() {
            &self.version
        } else {
            &self.normalized
        }
    }
}

/// `common.VersionSet`, a named `[]string` with a `Has` method.
#[derive(Debug, Clone)]
struct VersionSet(Vec<String>);

impl Object for VersionSet {
    fn type_name(&self) -> String {
        "common.VersionSet".into()
    }

    fn kind(&self) -> &'static str {
        "slice"
    }

    fn method(&self, name: &str) -> Option<MethodSig> {
        (name == "Has").then_some(ONE_STRING)
    }

    fn call(&self, _name: &str, args: &[Value]) -> Result<Value, String> {
        let wanted = args.first().and_then(Value::as_str).unwrap_or("");
        Ok(Value::Bool(self.0.iter().any(|v| v == wanted)))
    }

    fn format(&self) -> String {
        format!("[{}]", self.0.join(" "))
    }

    fn to_data(&self) -> Value {
        self.underlying().unwrap_or_default()
    }

    fn underlying(&self) -> Option<Value> {
        Some(Value::List(Rc::new(List::new(
            ListKind::String,
            self.0.iter().map(|s| Value::str(s)).collect(),
        ))))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Object for HelmVersion {
    fn type_name(&self) -> String {
        "version.BuildInfo".into()
    }

    fn field(&self, name: &str) -> Option<Value> {
        Some(Value::str(match name {
            "Version" => &self.version,
            "GitCommit" => &self.git_commit,
            "GitTreeState" => &self.git_tree_state,
            "GoVersion" => &self.go_version,
            "KubeClientVersion" => &self.kube_client_version,
            _ => return None,
        }))
    }

    fn struct_fields(&self) -> Option<Vec<Field>> {
        let field = |name, json, value: &String| Field {
            name,
            json: Some(json),
            value: Value::str(value),
        };
        Some(vec![
            field("Version", "version", &self.version),
            field("GitCommit", "git_commit", &self.git_commit),
            field("GitTreeState", "git_tree_state", &self.git_tree_state),
            field("GoVersion", "go_version", &self.go_version),
            field(
                "KubeClientVersion",
                "kube_client_version",
                &self.kube_client_version,
            ),
        ])
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Object for Capabilities {
    fn type_name(&self) -> String {
        "*common.Capabilities".into()
    }

    fn kind(&self) -> &'static str {
        "ptr"
    }

    fn field(&self, name: &str) -> Option<Value> {
        Some(match name {
            "KubeVersion" => Value::Object(Rc::new(self.kube())),
            "APIVersions" => Value::Object(Rc::new(VersionSet(self.api_versions.clone()))),
            "HelmVersion" => Value::Object(Rc::new(self.helm_version.clone())),
            _ => return None,
        })
    }

    fn method(&self, name: &str) -> Option<MethodSig> {
        (name == "Copy").then_some(NO_ARGS)
    }

    fn call(&self, _name: &str, _args: &[Value]) -> Result<Value, String> {
        Ok(self.clone().into_value())
    }

    fn struct_fields(&self) -> Option<Vec<Field>> {
        Some(
            ["KubeVersion", "APIVersions", "HelmVersion"]
                .into_iter()
                .map(|name| Field::new(name, self.field(name).unwrap_or_default()))
                .collect(),
        )
    }

    fn deep_copy(&self) -> Option<Value> {
        let mut copy = self.clone();
        copy.kube_normalized_version.clear();
        Some(copy.into_value())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The methods of Helm's `common.Values` (`.`, `.Values`, `.Template` and what
/// `Table` returns), which Go finds before the map's keys.
pub(crate) struct ValuesMethods(pub(crate) Rc<MapCell>);

impl ValuesMethods {
    /// The signature of a `common.Values` method.
    pub(crate) fn method(name: &str) -> Option<MethodSig> {
        match name {
            "YAML" | "AsMap" => Some(NO_ARGS),
            "Table" | "PathValue" => Some(ONE_STRING),
            "Encode" => Some(MethodSig {
                params: &[Ty::Object("io.Writer")],
                variadic: None,
            }),
            _ => None,
        }
    }

    /// Helm's `Table`: the map under a dotted path of keys, each a map.
    fn table(&self, path: &str) -> Result<Rc<MapCell>, String> {
        let mut table = self.0.clone();
        for key in path.split('.') {
            let next = match table.get(key) {
                Some(Value::Map(m)) if m.kind != MapKind::String => m,
                _ => return Err(format!("{} is not a table", crate::print::quote(key))),
            };
            table = next;
        }
        Ok(table)
    }

    /// Helm's `PathValue`: the value (not a table) under a dotted path.
    fn path_value(&self, path: &str) -> Result<Value, String> {
        if path.is_empty() {
            return Err("YAML path cannot be empty".into());
        }
        let (table, key) = match path.rsplit_once('.') {
            Some((parent, key)) => (self.table(parent).ok(), key),
            None => (Some(self.0.clone()), path),
        };
        // A table is a `map[string]interface {}`.
        match table.and_then(|t| t.get(key)) {
            Some(Value::Map(m)) if m.kind == MapKind::Interface => {}
            Some(v) => return Ok(v),
            None => {}
        }
        Err(format!("{} is not a value", crate::print::quote(key)))
    }
}

impl Object for ValuesMethods {
    fn type_name(&self) -> String {
        "common.Values".into()
    }

    fn kind(&self) -> &'static str {
        "map"
    }

    fn method(&self, name: &str) -> Option<MethodSig> {
        ValuesMethods::method(name)
    }

    fn call(&self, name: &str, args: &[Value]) -> Result<Value, String> {
        let arg = || args.first().and_then(Value::as_str).unwrap_or("");
        Ok(match name {
            "YAML" => {
                let yaml = crate::funcs::helm::to_yaml(&Value::Map(self.0.clone()))?;
                Value::string(format!("{yaml}\n"))
            }
            "AsMap" if self.0.is_empty() => Value::empty_map(),
            "AsMap" => Value::Map(Rc::new(self.0.retyped(MapKind::Interface))),
            "Table" => Value::Map(Rc::new(self.table(arg())?.retyped(MapKind::Values))),
            "PathValue" => self.path_value(arg())?,
            other => return Err(format!("no method {other}")),
        })
    }

    fn underlying(&self) -> Option<Value> {
        Some(Value::Map(self.0.clone()))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::glob::Pattern;

    #[test]
    fn globs_like_gobwas() {
        assert!(Pattern::new("files/*.conf").matches("files/a.conf"));
        assert!(!Pattern::new("files/*.conf").matches("files/x/a.conf"));
        assert!(Pattern::new("files/**.conf").matches("files/x/a.conf"));
        assert!(Pattern::new("{a,b}/[!x]?").matches("b/yz"));
        assert!(Pattern::new("[").matches("anything"));
    }
}
