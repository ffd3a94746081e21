//! The JSON plumbing of records: reading a decoded JSON tree the way Go's
//! `encoding/json` fills a struct (keys matched without regard to ASCII case, the last
//! match winning, `null` leaving a field at its zero value), and writing objects field by
//! field with Go's escapes and number forms.

use chartkit_yaml::gojson;
use serde_json::Value as Json;

use crate::time::GoTime;

/// A record field whose JSON does not have the type Go's struct needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("json: cannot unmarshal {found} into Go struct field {field} of type {want}")]
pub struct FieldTypeError {
    pub field: String,
    pub found: &'static str,
    pub want: &'static str,
}

/// Go's name for the JSON type of `value`, as its unmarshal errors say it.
fn json_kind(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "bool",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

/// One JSON object being read into a Go struct named `owner`.
pub(crate) struct Fields<'a> {
    owner: &'static str,
    map: Option<&'a serde_json::Map<String, Json>>,
}

impl<'a> Fields<'a> {
    /// `value` as the object of a struct; `null` is a struct with every field zero.
    pub(crate) fn of(owner: &'static str, value: &'a Json) -> Result<Fields<'a>, FieldTypeError> {
        match value {
            Json::Object(map) => Ok(Fields {
                owner,
                map: Some(map),
            }),
            Json::Null => Ok(Fields { owner, map: None }),
            other => Err(FieldTypeError {
                field: owner.to_owned(),
                found: json_kind(other),
                want: "struct",
            }),
        }
    }

    /// The field's value, `None` when absent or `null`.
    pub(crate) fn get(&self, name: &str) -> Option<&'a Json> {
        let map = self.map?;
        // Go matches keys to fields without regard to case, and a later key overwrites
        // what an earlier one set.
        let found = map
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
            .next_back();
        found.filter(|v| !v.is_null())
    }

    pub(crate) fn error(&self, name: &str, value: &Json, want: &'static str) -> FieldTypeError {
        FieldTypeError {
            field: format!("{}.{}", self.owner, name),
            found: json_kind(value),
            want,
        }
    }

    pub(crate) fn string(&self, name: &str) -> Result<String, FieldTypeError> {
        match self.get(name) {
            None => Ok(String::new()),
            Some(Json::String(s)) => Ok(s.clone()),
            Some(other) => Err(self.error(name, other, "string")),
        }
    }

    pub(crate) fn bool(&self, name: &str) -> Result<bool, FieldTypeError> {
        match self.get(name) {
            None => Ok(false),
            Some(Json::Bool(b)) => Ok(*b),
            Some(other) => Err(self.error(name, other, "bool")),
        }
    }

    pub(crate) fn int(&self, name: &str) -> Result<i64, FieldTypeError> {
        match self.get(name) {
            None => Ok(0),
            Some(v @ Json::Number(n)) => n.as_i64().ok_or_else(|| self.error(name, v, "int")),
            Some(other) => Err(self.error(name, other, "int")),
        }
    }

    pub(crate) fn time(&self, name: &str) -> Result<Option<GoTime>, FieldTypeError> {
        match self.get(name) {
            None => Ok(None),
            // Helm 4 reads an empty string as the zero time (records some tools wrote).
            Some(Json::String(s)) if s.is_empty() => Ok(None),
            Some(v @ Json::String(s)) => {
                GoTime::parse(s).map_err(|_| self.error(name, v, "time.Time"))
            }
            Some(other) => Err(self.error(name, other, "time.Time")),
        }
    }

    /// A `[]byte`: base64 in a JSON string; `None` for null or absent (Go's nil slice).
    pub(crate) fn bytes(&self, name: &str) -> Result<Option<Vec<u8>>, FieldTypeError> {
        use base64::Engine as _;
        match self.get(name) {
            None => Ok(None),
            Some(v @ Json::String(s)) => base64::engine::general_purpose::STANDARD
                .decode(s)
                .map(Some)
                .map_err(|_| self.error(name, v, "[]uint8")),
            Some(other) => Err(self.error(name, other, "[]uint8")),
        }
    }

    pub(crate) fn strings(&self, name: &str) -> Result<Vec<String>, FieldTypeError> {
        match self.get(name) {
            None => Ok(Vec::new()),
            Some(Json::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Json::String(s) => Ok(s.clone()),
                    Json::Null => Ok(String::new()),
                    other => Err(self.error(name, other, "string")),
                })
                .collect(),
            Some(other) => Err(self.error(name, other, "[]string")),
        }
    }

    pub(crate) fn string_map(
        &self,
        name: &str,
    ) -> Result<std::collections::BTreeMap<String, String>, FieldTypeError> {
        match self.get(name) {
            None => Ok(Default::default()),
            Some(Json::Object(map)) => map
                .iter()
                .map(|(k, v)| match v {
                    Json::String(s) => Ok((k.clone(), s.clone())),
                    Json::Null => Ok((k.clone(), String::new())),
                    other => Err(self.error(name, other, "string")),
                })
                .collect(),
            Some(other) => Err(self.error(name, other, "map[string]string")),
        }
    }

    /// A `map[string]interface{}`: `None` for null or absent (Go's nil map), numbers as
    /// float64.
    pub(crate) fn values(&self, name: &str) -> Result<Option<chartkit_yaml::Map>, FieldTypeError> {
        match self.get(name) {
            None => Ok(None),
            Some(v @ Json::Object(_)) => Ok(Some(
                chartkit_values::strvals::from_json(v)
                    .take_map()
                    .unwrap_or_default(),
            )),
            Some(other) => Err(self.error(name, other, "map[string]interface {}")),
        }
    }

    /// A slice field: `None` for null or absent (Go's nil slice).
    pub(crate) fn array(&self, name: &str) -> Result<Option<&'a Vec<Json>>, FieldTypeError> {
        match self.get(name) {
            None => Ok(None),
            Some(Json::Array(items)) => Ok(Some(items)),
            Some(other) => Err(self.error(name, other, "slice")),
        }
    }
}

/// A JSON object being written, fields in the order of the Go struct.
pub(crate) struct Obj<'a> {
    out: &'a mut String,
    any: bool,
}

impl<'a> Obj<'a> {
    pub(crate) fn start(out: &'a mut String) -> Obj<'a> {
        out.push('{');
        Obj { out, any: false }
    }

    /// Writes the key and gives the buffer for its value.
    pub(crate) fn key(&mut self, key: &str) -> &mut String {
        if self.any {
            self.out.push(',');
        }
        self.any = true;
        gojson::write_string(self.out, key);
        self.out.push(':');
        self.out
    }

    pub(crate) fn string(&mut self, key: &str, value: &str) {
        gojson::write_string(self.key(key), value);
    }

    /// A string field tagged `omitempty`.
    pub(crate) fn string_nonempty(&mut self, key: &str, value: &str) {
        if !value.is_empty() {
            self.string(key, value);
        }
    }

    pub(crate) fn int(&mut self, key: &str, value: i64) {
        let out = self.key(key);
        out.push_str(&value.to_string());
    }

    pub(crate) fn raw(&mut self, key: &str, json: &str) {
        self.key(key).push_str(json);
    }

    /// A time tagged `omitzero` (or written through a pointer that is nil when zero).
    pub(crate) fn time_nonzero(&mut self, key: &str, value: &Option<GoTime>) {
        if let Some(t) = value {
            self.string(key, &t.rfc3339_nano());
        }
    }

    /// A time written even when zero.
    pub(crate) fn time(&mut self, key: &str, value: &Option<GoTime>) {
        match value {
            Some(t) => self.string(key, &t.rfc3339_nano()),
            None => self.string(key, crate::time::ZERO_RFC3339),
        }
    }

    pub(crate) fn strings(&mut self, key: &str, values: &[String]) {
        let out = self.key(key);
        out.push('[');
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            gojson::write_string(out, v);
        }
        out.push(']');
    }

    pub(crate) fn string_map(
        &mut self,
        key: &str,
        map: &std::collections::BTreeMap<String, String>,
    ) {
        let out = self.key(key);
        write_string_map(out, map);
    }

    /// A `[]byte`: base64, or `null` for a nil slice.
    pub(crate) fn bytes(&mut self, key: &str, value: &Option<Vec<u8>>) {
        use base64::Engine as _;
        let out = self.key(key);
        match value {
            Some(b) => {
                out.push('"');
                out.push_str(&base64::engine::general_purpose::STANDARD.encode(b));
                out.push('"');
            }
            None => out.push_str("null"),
        }
    }

    pub(crate) fn values(&mut self, key: &str, value: &Option<chartkit_yaml::Map>) {
        let out = self.key(key);
        write_values(out, value);
    }

    pub(crate) fn end(self) {
        self.out.push('}');
    }
}

/// A `map[string]string`, keys sorted as Go sorts them.
pub(crate) fn write_string_map(out: &mut String, map: &std::collections::BTreeMap<String, String>) {
    out.push('{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        gojson::write_string(out, k);
        out.push(':');
        gojson::write_string(out, v);
    }
    out.push('}');
}

/// A `map[string]interface{}`, `null` when nil.
pub(crate) fn write_values(out: &mut String, value: &Option<chartkit_yaml::Map>) {
    match value {
        // A BTreeMap is in Go's key order already.
        Some(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                gojson::write_string(out, k);
                out.push(':');
                gojson::write_value(out, v);
            }
            out.push('}');
        }
        None => out.push_str("null"),
    }
}

/// Any JSON (objects read from the cluster) as `encoding/json` writes the `interface{}`
/// Go decoded it into: object keys sorted, integers as integers, other numbers in Go's
/// float form.
pub fn write_json(out: &mut String, value: &Json) {
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(n) => {
            if n.is_i64() || n.is_u64() {
                out.push_str(&n.to_string());
            } else {
                let f = n.as_f64().unwrap_or_default();
                out.push_str(
                    &chartkit_yaml::gonum::format_json(f).unwrap_or_else(|| "null".to_owned()),
                );
            }
        }
        Json::String(s) => gojson::write_string(out, s),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(out, item);
            }
            out.push(']');
        }
        Json::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                gojson::write_string(out, k);
                out.push(':');
                write_json(out, v);
            }
            out.push('}');
        }
    }
}
