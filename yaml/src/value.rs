use std::collections::BTreeMap;

/// A map of values. Go maps have no order and every Helm output sorts keys, so a sorted
/// map loses nothing and keeps output deterministic.
pub type Map = BTreeMap<String, Value>;

/// A JSON-like value: what Helm's values, `fromYaml` and `fromJson` produce.
///
/// `Int` and `Float` are distinct because Go keeps them apart: YAML numbers read through
/// `sigs.k8s.io/yaml` are always float64 (`1000000` prints as `1e+06`), while `--set` and
/// template arithmetic give int64.
///
/// Values may nest as deep as go-yaml allows (10,000 levels), so cloning and comparing
/// grow the stack as they go down (see [`crate::with_stack`]).
#[derive(Debug, Default)]
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

impl Clone for Value {
    fn clone(&self) -> Self {
        match self {
            Value::Null => Value::Null,
            Value::Bool(b) => Value::Bool(*b),
            Value::Int(i) => Value::Int(*i),
            Value::Float(f) => Value::Float(*f),
            Value::String(s) => Value::String(s.clone()),
            Value::Bytes(b) => Value::Bytes(b.clone()),
            Value::Seq(items) => Value::Seq(crate::with_stack(|| items.clone())),
            Value::Map(map) => Value::Map(crate::with_stack(|| map.clone())),
        }
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a == b,
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Bytes(a), Value::Bytes(b)) => a == b,
            (Value::Seq(a), Value::Seq(b)) => crate::with_stack(|| a == b),
            (Value::Map(a), Value::Map(b)) => crate::with_stack(|| a == b),
            _ => false,
        }
    }
}

/// Dropping a value nested deeper than the stack allows goes on without recursing: when
/// little stack is left, the nested collections are moved to a list on the heap, each
/// emptied before it is dropped. With room on the stack this is one comparison.
impl Drop for Value {
    fn drop(&mut self) {
        if !matches!(self, Value::Seq(_) | Value::Map(_)) || crate::stack_is_ample() {
            return;
        }
        let mut pending: Vec<Value> = Vec::new();
        self.move_children(&mut pending);
        while let Some(mut value) = pending.pop() {
            value.move_children(&mut pending);
        }
    }
}

/// A Go string's bytes as the text Go's `for _, r := range s` and its JSON encoder see:
/// every byte that does not start a valid UTF-8 sequence is one U+FFFD (Rust's
/// `from_utf8_lossy` replaces a whole invalid sequence by one U+FFFD instead). Valid
/// text is borrowed.
pub fn go_lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for _ in chunk.invalid() {
            out.push(char::REPLACEMENT_CHARACTER);
        }
    }
    std::borrow::Cow::Owned(out)
}

impl Value {
    /// Moves the collections this value holds to `pending`.
    fn move_children(&mut self, pending: &mut Vec<Value>) {
        let is_collection = |v: &Value| matches!(v, Value::Seq(_) | Value::Map(_));
        match self {
            Value::Seq(items) => pending.extend(items.drain(..).filter(is_collection)),
            Value::Map(map) => {
                pending.extend(std::mem::take(map).into_values().filter(is_collection))
            }
            _ => {}
        }
    }

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

    /// The map of a map value, leaving an empty map in its place.
    pub fn take_map(&mut self) -> Option<Map> {
        match self {
            Value::Map(map) => Some(std::mem::take(map)),
            _ => None,
        }
    }

    /// The items of a list value, leaving an empty list in its place.
    pub fn take_seq(&mut self) -> Option<Vec<Value>> {
        match self {
            Value::Seq(items) => Some(std::mem::take(items)),
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
