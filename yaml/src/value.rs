use std::collections::BTreeMap;

/// A map of values. Go maps have no order and every Helm output sorts keys, so a sorted
/// map loses nothing and keeps output deterministic.
pub type Map = BTreeMap<String, Value>;

/// A JSON-like value: what Helm's values, `fromYaml` and `fromJson` produce.
///
/// `Int` and `Float` are distinct because Go keeps them apart: YAML numbers read through
/// `sigs.k8s.io/yaml` are always float64 (`1000000` prints as `1e+06`), while `--set` and
/// template arithmetic give int64.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(String),
    /// A Go string whose bytes are not UTF-8 (a binary file given with `--set-file`).
    /// JSON and YAML see each byte that is not UTF-8 as U+FFFD.
    Bytes(Vec<u8>),
    Seq(Vec<Value>),
    Map(Map),
}

/// A Go string's bytes as text: each byte that is not UTF-8 is U+FFFD, as Go's JSON
/// encoder writes it.
pub fn go_lossy(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for _ in chunk.invalid() {
            out.push(char::REPLACEMENT_CHARACTER);
        }
    }
    out
}

impl Value {
    /// A short description of the kind of value, for error messages ("a list", "a string").
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) | Value::Float(_) => "a number",
            Value::String(_) | Value::Bytes(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a map",
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&Map> {
        match self {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_map_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[Value]> {
        match self {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Looks up a dotted path of map keys (`a.b.c`); `None` when any step is missing or is
    /// not a map.
    pub fn lookup(&self, path: &str) -> Option<&Value> {
        path.split('.')
            .try_fold(self, |value, key| value.as_map()?.get(key))
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Self {
        Value::Int(i)
    }
}

impl From<f64> for Value {
    fn from(f: f64) -> Self {
        Value::Float(f)
    }
}

impl From<Map> for Value {
    fn from(m: Map) -> Self {
        Value::Map(m)
    }
}

impl From<Vec<Value>> for Value {
    fn from(v: Vec<Value>) -> Self {
        Value::Seq(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_follows_map_keys_only() {
        let mut inner = Map::new();
        inner.insert("c".into(), Value::Int(3));
        let mut outer = Map::new();
        outer.insert("b".into(), Value::Map(inner));
        outer.insert("s".into(), Value::from("x"));
        let value = Value::Map(outer);
        assert_eq!(value.lookup("b.c"), Some(&Value::Int(3)));
        assert_eq!(value.lookup("b.d"), None);
        assert_eq!(value.lookup("s.x"), None);
    }
}
