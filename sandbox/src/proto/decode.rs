//! A typed protobuf message to the JSON the API server would write for it: the Go struct
//! the generated code fills, encoded by `encoding/json`.
//!
//! Go's generated `Marshal` writes every non-pointer scalar, zero or not, and a pointer
//! only when it is set, so what reaches the JSON follows the Go field, not the wire:
//! - a non-pointer scalar is its value or its zero value, left out when zero under
//!   `omitempty` (an empty string never becomes `""` where JSON would omit it);
//! - a pointer is left out when absent under `omitempty` (`null` without), and written
//!   when present, zero or not;
//! - a struct is always written (`omitempty` does nothing to structs), unless `omitzero`
//!   and zero;
//! - a slice or map is left out when empty under `omitempty`, `null` without;
//! - `[]byte` is base64, a map's keys sorted, an embedded struct's fields inlined.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::{Map, Value};

use super::table::{Field, Kind, MsgId, Scalar, Table, Type};
use super::wellknown;
use super::wire::{Reader, WireError, WireValue};

/// Messages within messages, at most: JSON schemas nest, but not this deep, and the
/// bound keeps a hostile body from exhausting the stack.
pub const MAX_DEPTH: usize = 100;

/// Why a message could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecodeError {
    #[error(transparent)]
    Wire(#[from] WireError),
    #[error("proto: wrong wireType = {wire} for field {field}")]
    WireType { wire: u8, field: String },
    #[error("{0}")]
    Value(String),
    #[error("the object nests deeper than {MAX_DEPTH} messages")]
    TooDeep,
}

/// Reads messages described by a table.
pub struct Decoder<'t> {
    pub table: &'t Table,
}

impl<'t> Decoder<'t> {
    pub fn new(table: &'t Table) -> Decoder<'t> {
        Decoder { table }
    }

    /// A message of an object type as a JSON object (for [`Kind::Object`] messages).
    pub fn object(&self, id: MsgId, bytes: &[u8]) -> Result<Map<String, Value>, DecodeError> {
        match self.message(id, bytes, 0)? {
            Value::Object(m) => Ok(m),
            other => Err(DecodeError::Value(format!(
                "{} is not an object type (its JSON is {other})",
                self.table.messages[id].name
            ))),
        }
    }

    /// One message as JSON.
    pub fn message(&self, id: MsgId, bytes: &[u8], depth: usize) -> Result<Value, DecodeError> {
        if depth > MAX_DEPTH {
            return Err(DecodeError::TooDeep);
        }
        let msg = &self.table.messages[id];
        let slots = self.collect(id, bytes)?;
        if msg.kind != Kind::Object {
            return wellknown::value(self, id, &slots, depth);
        }
        let mut out = Map::new();
        for (field, values) in msg.fields.iter().zip(&slots) {
            self.put(&mut out, field, values, depth)?;
        }
        Ok(Value::Object(out))
    }

    /// The wire values of each field of the message, in the table's order; fields the
    /// table does not know are skipped, as Go's generated code skips them.
    pub fn collect<'a>(
        &self,
        id: MsgId,
        bytes: &'a [u8],
    ) -> Result<Vec<Vec<WireValue<'a>>>, DecodeError> {
        let msg = &self.table.messages[id];
        let mut slots = vec![Vec::new(); msg.fields.len()];
        let mut reader = Reader::new(bytes);
        while let Some(field) = reader.field() {
            let (number, value) = field?;
            if let Some(i) = msg.field(number) {
                slots[i].push(value);
            }
        }
        Ok(slots)
    }

    fn put(
        &self,
        out: &mut Map<String, Value>,
        field: &Field,
        values: &[WireValue<'_>],
        depth: usize,
    ) -> Result<(), DecodeError> {
        if field.hidden {
            return Ok(());
        }
        let value = match &field.ty {
            Type::Map(value_type) => {
                let map = self.map(field, value_type, values, depth)?;
                if map.is_empty() {
                    if field.omitempty {
                        return Ok(());
                    }
                    Value::Null
                } else {
                    Value::Object(map)
                }
            }
            _ if field.repeated => {
                let items = self.repeated(field, values, depth)?;
                if items.is_empty() {
                    if field.omitempty {
                        return Ok(());
                    }
                    Value::Null
                } else {
                    Value::Array(items)
                }
            }
            Type::Scalar(s) => match self.singular_scalar(field, *s, values)? {
                Some(v) => v,
                None => return Ok(()),
            },
            Type::Message(id) => {
                if field.pointer && values.is_empty() {
                    if field.omitempty || field.inline {
                        return Ok(());
                    }
                    Value::Null
                } else {
                    let v = self.message_of(field, *id, values, depth)?;
                    if field.inline {
                        if let Value::Object(inner) = v {
                            for (k, v) in inner {
                                out.entry(k).or_insert(v);
                            }
                        }
                        return Ok(());
                    }
                    if self.table.messages[*id].kind == Kind::List
                        && field.omitempty
                        && v.as_array().is_none_or(Vec::is_empty)
                    {
                        return Ok(());
                    }
                    if field.omitzero && v == self.message(*id, &[], depth + 1)? {
                        return Ok(());
                    }
                    v
                }
            }
        };
        out.insert(field.json.clone(), value);
        Ok(())
    }

    /// A singular scalar field, or `None` when JSON leaves it out.
    fn singular_scalar(
        &self,
        field: &Field,
        s: Scalar,
        values: &[WireValue<'_>],
    ) -> Result<Option<Value>, DecodeError> {
        let Some(last) = values.last() else {
            // Absent: a nil pointer or nil []byte, or a non-pointer's zero value.
            if field.omitempty {
                return Ok(None);
            }
            if field.pointer || s == Scalar::Bytes {
                return Ok(Some(Value::Null));
            }
            return Ok(Some(zero(s)));
        };
        let v = scalar(s, *last, &field.json)?;
        if field.omitempty && !field.pointer && is_zero(&v) {
            return Ok(None);
        }
        Ok(Some(v))
    }

    pub(super) fn repeated(
        &self,
        field: &Field,
        values: &[WireValue<'_>],
        depth: usize,
    ) -> Result<Vec<Value>, DecodeError> {
        let mut items = Vec::with_capacity(values.len());
        for v in values {
            match (&field.ty, v) {
                (Type::Message(id), WireValue::Bytes(b)) => {
                    items.push(self.message(*id, b, depth + 1)?);
                }
                (Type::Message(_), other) => return Err(wire_type(other, &field.json)),
                (Type::Scalar(s), WireValue::Bytes(b))
                    if !matches!(s, Scalar::String | Scalar::Bytes) =>
                {
                    packed(*s, b, &field.json, &mut items)?;
                }
                (Type::Scalar(s), v) => items.push(scalar(*s, *v, &field.json)?),
                (Type::Map(_), _) => {
                    return Err(DecodeError::Value(format!(
                        "field {} is a repeated map",
                        field.json
                    )));
                }
            }
        }
        Ok(items)
    }

    fn map(
        &self,
        field: &Field,
        value_type: &Type,
        values: &[WireValue<'_>],
        depth: usize,
    ) -> Result<Map<String, Value>, DecodeError> {
        let mut entries = BTreeMap::new();
        for entry in values {
            let WireValue::Bytes(bytes) = entry else {
                return Err(wire_type(entry, &field.json));
            };
            let mut key = String::new();
            let mut raw = Vec::new();
            let mut reader = Reader::new(bytes);
            while let Some(f) = reader.field() {
                match f? {
                    (1, WireValue::Bytes(k)) => key = String::from_utf8_lossy(k).into_owned(),
                    (1, other) => return Err(wire_type(&other, &field.json)),
                    (2, v) => raw.push(v),
                    _ => {}
                }
            }
            let value = match value_type {
                Type::Scalar(Scalar::Bytes) if raw.is_empty() => Value::String(String::new()),
                Type::Scalar(s) => match raw.last() {
                    Some(v) => scalar(*s, *v, &field.json)?,
                    None => zero(*s),
                },
                Type::Message(id) => {
                    let bytes = concat(&raw, &field.json)?;
                    self.message(*id, &bytes, depth + 1)?
                }
                Type::Map(_) => {
                    return Err(DecodeError::Value(format!(
                        "field {} is a map of maps",
                        field.json
                    )));
                }
            };
            entries.insert(key, value);
        }
        Ok(entries.into_iter().collect())
    }

    /// A singular message field: its occurrences merged, as protobuf merges a message
    /// that appears twice (absent is the zero value).
    fn message_of(
        &self,
        field: &Field,
        id: MsgId,
        values: &[WireValue<'_>],
        depth: usize,
    ) -> Result<Value, DecodeError> {
        let bytes = concat(values, &field.json)?;
        self.message(id, &bytes, depth + 1)
    }
}

/// The payloads of length-delimited values, one after another.
pub fn concat(values: &[WireValue<'_>], field: &str) -> Result<Vec<u8>, DecodeError> {
    let mut out = Vec::new();
    for v in values {
        match v {
            WireValue::Bytes(b) => out.extend_from_slice(b),
            other => return Err(wire_type(other, field)),
        }
    }
    Ok(out)
}

pub fn wire_type(v: &WireValue<'_>, field: &str) -> DecodeError {
    DecodeError::WireType {
        wire: v.wire_type(),
        field: field.to_string(),
    }
}

/// A scalar's JSON.
pub fn scalar(s: Scalar, v: WireValue<'_>, field: &str) -> Result<Value, DecodeError> {
    Ok(match (s, v) {
        (Scalar::String, WireValue::Bytes(b)) => {
            // Go strings may hold any bytes; encoding/json writes U+FFFD for invalid UTF-8.
            Value::String(String::from_utf8_lossy(b).into_owned())
        }
        (Scalar::Bytes, WireValue::Bytes(b)) => {
            Value::String(base64::engine::general_purpose::STANDARD.encode(b))
        }
        (Scalar::Bool, WireValue::Varint(x)) => Value::Bool(x != 0),
        // Go's generated code shifts into an int32, keeping the low 32 bits.
        (Scalar::Int32, WireValue::Varint(x)) => Value::from(i64::from(x as i32)),
        (Scalar::Int64, WireValue::Varint(x)) => Value::from(x as i64),
        (Scalar::Double, WireValue::Fixed64(bits)) => float(f64::from_bits(bits))?,
        (_, other) => return Err(wire_type(&other, field)),
    })
}

/// A float64 as encoding/json writes it, read back as the JSON path reads it: integral
/// values are integers (Go writes `1`, not `1.0`).
pub fn float(f: f64) -> Result<Value, DecodeError> {
    if !f.is_finite() {
        return Err(DecodeError::Value(format!("json: unsupported value: {f}")));
    }
    if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 {
        return Ok(Value::from(f as i64));
    }
    Ok(serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number))
}

fn packed(s: Scalar, bytes: &[u8], field: &str, out: &mut Vec<Value>) -> Result<(), DecodeError> {
    let mut reader = Reader::new(bytes);
    if s == Scalar::Double {
        if !bytes.len().is_multiple_of(8) {
            return Err(WireError::Truncated.into());
        }
        for chunk in bytes.chunks_exact(8) {
            let mut b = [0u8; 8];
            b.copy_from_slice(chunk);
            out.push(float(f64::from_le_bytes(b))?);
        }
        return Ok(());
    }
    while reader.position() < bytes.len() {
        let x = reader.varint()?;
        out.push(scalar(s, WireValue::Varint(x), field)?);
    }
    Ok(())
}

fn zero(s: Scalar) -> Value {
    match s {
        Scalar::String => Value::String(String::new()),
        Scalar::Bytes => Value::Null,
        Scalar::Bool => Value::Bool(false),
        Scalar::Int32 | Scalar::Int64 | Scalar::Double => Value::from(0),
    }
}

/// Whether `omitempty` leaves a scalar out.
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}
