//! The runtime value of template execution.
//!
//! Go templates see Helm's data as `map[string]interface{}` trees plus a few typed values
//! and host objects. Charts rely on Go's reference semantics (`set`, `merge` and `unset`
//! mutate a map that other variables and later templates also see), so maps are shared
//! and mutable (`Rc<MapCell>`), lists and strings are shared and immutable, and cloning a
//! `Value` never copies data.

use std::any::Any;
use std::cell::{Ref, RefCell, RefMut};
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

use chartkit_yaml::Value as Data;

/// Map entries, in Go's sorted key order.
pub type Entries = BTreeMap<Rc<str>, Value>;

#[derive(Clone, Default)]
pub enum Value {
    /// Go's untyped nil: a missing map key, an unset variable, `nil`.
    #[default]
    Nil,
    Bool(bool),
    /// Go `int`: literals, `len`, `atoi`, `int`.
    Int(i64),
    /// Go `int64`: Sprig arithmetic, `int64`, values given with `--set`.
    Int64(i64),
    /// Go `uint8`: `index` into a string.
    Uint8(u8),
    /// Go `float64`: every number read from YAML or JSON.
    Float(f64),
    String(Rc<str>),
    /// A Go `string` whose bytes are not UTF-8 (never valid UTF-8: such strings are
    /// `String`). See [`crate::gostr`].
    RawStr(Rc<[u8]>),
    /// Go `[]byte`.
    Bytes(Rc<[u8]>),
    List(Rc<List>),
    Map(Rc<MapCell>),
    /// A value with Go methods or struct fields supplied by the host (`.Files`,
    /// `.Capabilities`, certificates, times).
    Object(Rc<dyn Object>),
}

/// The element type of a Go slice, which `typeOf`, `%T` and argument checks can see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    /// `[]interface {}`
    Interface,
    /// `[]string`
    String,
    /// `[]int`
    Int,
    /// `[][]interface {}`: what `chunk` returns.
    Lists,
}

/// A Go slice. Its elements are shared and never change once it is made.
#[derive(Clone)]
pub struct List {
    pub kind: ListKind,
    items: Items,
    /// A nil slice (`var s []string`), as `regexFindAll` returns when nothing matches:
    /// empty, but `null` to `toJson` and `toYaml` and `[]string(nil)` to `%#v`.
    nil: bool,
}

/// How a list holds its elements. A Go `[]int` (from `until`, `untilStep`) keeps plain
/// numbers: a third of the size of values, which matters for long ranges.
#[derive(Clone)]
enum Items {
    Values(Vec<Value>),
    Ints(Vec<i64>),
}

impl List {
    /// A list of `kind` holding `items`.
    pub fn new(kind: ListKind, items: Vec<Value>) -> List {
        List {
            kind,
            items: Items::Values(items),
            nil: false,
        }
    }

    /// A nil slice of `kind`.
    pub fn nil(kind: ListKind) -> List {
        List {
            kind,
            items: Items::Values(Vec::new()),
            nil: true,
        }
    }

    /// Whether this is a nil slice (rather than an empty one).
    pub fn is_nil(&self) -> bool {
        self.nil
    }

    /// A Go `[]int`.
    pub fn ints(items: Vec<i64>) -> List {
        List {
            kind: ListKind::Int,
            items: Items::Ints(items),
            nil: false,
        }
    }

    pub fn len(&self) -> usize {
        match &self.items {
            Items::Values(v) => v.len(),
            Items::Ints(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i`, if there is one.
    pub fn get(&self, i: usize) -> Option<Value> {
        match &self.items {
            Items::Values(v) => v.get(i).cloned(),
            Items::Ints(v) => v.get(i).map(|n| Value::Int(*n)),
        }
    }

    /// The elements in order. Values are shared, so each is a cheap clone.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Value> + '_ {
        let (values, ints) = match &self.items {
            Items::Values(v) => (v.as_slice(), &[][..]),
            Items::Ints(v) => (&[][..], v.as_slice()),
        };
        values
            .iter()
            .cloned()
            .chain(ints.iter().map(|n| Value::Int(*n)))
    }

    /// The elements as a vector of values.
    pub fn to_vec(&self) -> Vec<Value> {
        match &self.items {
            Items::Values(v) => v.clone(),
            Items::Ints(_) => self.iter().collect(),
        }
    }

    /// Elements `start..end`, as a list of the same kind.
    pub fn slice(&self, start: usize, end: usize) -> List {
        List {
            kind: self.kind,
            items: match &self.items {
                Items::Values(v) => Items::Values(v[start..end].to_vec()),
                Items::Ints(v) => Items::Ints(v[start..end].to_vec()),
            },
            // Slicing a nil slice gives a nil slice.
            nil: self.nil,
        }
    }

    /// The bytes its elements take.
    pub fn heap_bytes(&self) -> u64 {
        let (len, size) = match &self.items {
            Items::Values(v) => (v.len(), std::mem::size_of::<Value>()),
            Items::Ints(v) => (v.len(), std::mem::size_of::<i64>()),
        };
        len as u64 * size as u64
    }
}

/// The Go type of a map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapKind {
    /// `map[string]interface {}`
    Interface,
    /// `map[string]string`, from `split`.
    String,
    /// Helm's named `common.Values` map type (`.`, `.Values`, `.Template`).
    Values,
}

/// A Go map: its type, and entries that other views of the same map share.
pub struct MapCell {
    pub kind: MapKind,
    /// Shared with the views of the map as another map type: Helm's `Values.Table` and
    /// `Values.AsMap` give the same map under another type, and writes through either
    /// show in both.
    entries: Rc<RefCell<Entries>>,
    /// A nil map: it reads like an empty one, but encodes as `null`.
    nil: bool,
}

impl MapCell {
    pub fn new(kind: MapKind, entries: Entries) -> Self {
        MapCell {
            kind,
            entries: Rc::new(RefCell::new(entries)),
            nil: false,
        }
    }

    /// A nil map of `kind` (Helm's `.Chart.Annotations` without annotations).
    pub fn nil(kind: MapKind) -> Self {
        MapCell {
            nil: true,
            ..MapCell::new(kind, Entries::new())
        }
    }

    /// The same map seen as another map type (a Go conversion), sharing its entries.
    pub fn retyped(&self, kind: MapKind) -> MapCell {
        MapCell {
            kind,
            entries: self.entries.clone(),
            nil: self.nil,
        }
    }

    /// Whether this is a nil map.
    pub fn is_nil(&self) -> bool {
        self.nil
    }

    pub fn borrow(&self) -> Ref<'_, Entries> {
        self.entries.borrow()
    }

    pub fn borrow_mut(&self) -> RefMut<'_, Entries> {
        self.entries.borrow_mut()
    }

    /// A map key's value; Go's zero value for the element type when absent.
    pub fn get(&self, key: &str) -> Option<Value> {
        self.entries.borrow().get(key).cloned()
    }

    pub fn len(&self) -> usize {
        self.entries.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.borrow().is_empty()
    }
}

/// The parameter types of template functions and methods. Go checks each argument against
/// its parameter type before the call, and its error messages name these types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// `interface {}`: anything, nil included.
    Any,
    /// The `reflect.Value` parameters of Go's builtins: anything, nil included.
    Reflect,
    String,
    Int,
    Int64,
    Uint32,
    Float64,
    Bool,
    /// `map[string]interface {}`
    Map,
    /// `[]interface {}`
    List,
    /// `[]byte`.
    Bytes,
    /// A named integer type (`time.Duration`): integer constants convert to it, values
    /// must be of it.
    NamedInt(&'static str),
    /// A host object type, named as Go names it (`time.Time`, `sprig.certificate`);
    /// pointer types (`*time.Location`) take nil.
    Object(&'static str),
}

impl Ty {
    pub fn go_name(self) -> &'static str {
        match self {
            Ty::Any => "interface {}",
            Ty::Reflect => "reflect.Value",
            Ty::String => "string",
            Ty::Int => "int",
            Ty::Int64 => "int64",
            Ty::Uint32 => "uint32",
            Ty::Float64 => "float64",
            Ty::Bool => "bool",
            Ty::Map => "map[string]interface {}",
            Ty::List => "[]interface {}",
            Ty::Bytes => "[]uint8",
            Ty::NamedInt(name) | Ty::Object(name) => name,
        }
    }

    /// Whether Go can pass an untyped nil for this parameter.
    pub fn nillable(self) -> bool {
        match self {
            Ty::Any | Ty::Reflect | Ty::Map | Ty::List | Ty::Bytes => true,
            Ty::Object(name) => name.starts_with('*'),
            _ => false,
        }
    }
}

/// A method's parameter list.
#[derive(Debug, Clone, Copy)]
pub struct MethodSig {
    pub params: &'static [Ty],
    pub variadic: Option<Ty>,
}

/// A host value with Go methods or fields.
pub trait Object: Any {
    /// The Go type as `%T` and `typeOf` print it, e.g. `*common.Capabilities`.
    fn type_name(&self) -> String;
    /// The reflect kind as `kindOf` prints it: `struct`, `ptr`, `map`, `slice`.
    fn kind(&self) -> &'static str {
        "struct"
    }
    /// A struct field, or a map entry for map-typed objects. `None` when there is none.
    fn field(&self, _name: &str) -> Option<Value> {
        None
    }
    /// Whether the object is a map, so that unknown names read as missing keys instead
    /// of failing.
    fn is_map(&self) -> bool {
        false
    }
    /// The signature of a method, if the object has one by that name.
    fn method(&self, _name: &str) -> Option<MethodSig> {
        None
    }
    /// Why Go's templates cannot call a method the value has (it returns several
    /// values), in Go's words.
    fn uncallable(&self, _name: &str) -> Option<String> {
        None
    }
    /// Whether the value is a struct with an unexported field of this name, which Go
    /// refuses to read.
    fn unexported_field(&self, name: &str) -> bool {
        self.struct_fields()
            .is_some_and(|fields| fields.iter().any(|f| f.name == name && f.json.is_none()))
    }
    /// Calls a method after its arguments were checked against [`Object::method`].
    fn call(&self, name: &str, _args: &[Value]) -> Result<Value, String> {
        Err(format!("no method {name}"))
    }
    /// How `fmt.Sprint` prints the value: its `String` method, or a struct's fields.
    fn format(&self) -> String {
        match self.struct_fields() {
            Some(fields) => format_struct(self.kind() == "ptr", &fields),
            None => String::new(),
        }
    }
    /// Whether the value has a `String` method `fmt` calls (for `%v`, `%s`, `%q`, `%x`
    /// and `%X`), rather than printing its fields or elements.
    fn stringer(&self) -> bool {
        self.struct_fields().is_none() && self.underlying().is_none()
    }
    /// The value as `encoding/json` sees it, for `toJson`, `toYaml` and `deepCopy`: a
    /// struct's exported fields by default.
    fn to_data(&self) -> Value {
        match self.struct_fields() {
            Some(fields) => Value::map(
                fields
                    .into_iter()
                    .filter_map(|f| Some((Rc::from(f.json?), f.value)))
                    .collect(),
            ),
            None => Value::Nil,
        }
    }
    /// The plain slice or map underneath a named slice or map type, which `range`,
    /// `index`, `len` and printing use; the number underneath a named integer type
    /// (`time.Duration`), which comparisons and numeric verbs use.
    fn underlying(&self) -> Option<Value> {
        None
    }
    /// For a struct (or a pointer to one, when [`Object::kind`] is `ptr`) without a
    /// `String` method, its fields in declaration order, which `fmt` prints one by one
    /// (`{a b}`, `%+v`, `%#v`) and `encoding/json` writes in that order.
    fn struct_fields(&self) -> Option<Vec<Field>> {
        None
    }
    /// What text/template prints for the value when it differs from `fmt`: a value
    /// reached through a pointer (a field of `.Capabilities`) is printed through that
    /// pointer, so a `String` method with a pointer receiver applies.
    fn template_format(&self) -> Option<String> {
        None
    }
    /// `%#v`: the value's `GoString` method, if it has one.
    fn go_string(&self) -> Option<String> {
        None
    }
    /// What Sprig's `deepCopy` (copystructure) makes of the value: unexported struct
    /// fields are not copied.
    fn deep_copy(&self) -> Option<Value> {
        None
    }
    fn as_any(&self) -> &dyn Any;
}

/// A struct field as `fmt` and `encoding/json` see it.
#[derive(Debug, Clone)]
pub struct Field {
    /// The Go field name; unexported when it starts with a lower-case letter.
    pub name: &'static str,
    /// The name `encoding/json` writes it under, or `None` when it does not write it.
    pub json: Option<&'static str>,
    pub value: Value,
}

impl Field {
    /// An exported field written to JSON under its Go name.
    pub fn new(name: &'static str, value: Value) -> Field {
        Field {
            name,
            json: Some(name),
            value,
        }
    }

    /// An unexported field: printed, but neither written to JSON nor copied.
    pub fn unexported(name: &'static str, value: Value) -> Field {
        Field {
            name,
            json: None,
            value,
        }
    }
}

/// `fmt`'s `{a b}` for a struct's fields (with `&` before a pointer's), each printed
/// as `%v` prints it inside a struct.
pub fn format_struct(pointer: bool, fields: &[Field]) -> String {
    crate::format::sprintf(
        "%v",
        &[Value::Object(Rc::new(StructView {
            pointer,
            fields: fields.to_vec(),
        }))],
    )
}

/// A struct given by its fields alone, for [`format_struct`].
struct StructView {
    pointer: bool,
    fields: Vec<Field>,
}

impl Object for StructView {
    fn type_name(&self) -> String {
        "struct".into()
    }
    fn kind(&self) -> &'static str {
        if self.pointer { "ptr" } else { "struct" }
    }
    fn struct_fields(&self) -> Option<Vec<Field>> {
        Some(self.fields.clone())
    }
    fn format(&self) -> String {
        String::new()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Object(o) => write!(f, "Object({})", o.type_name()),
            other => write!(f, "{}", crate::print::go_syntax(other)),
        }
    }
}

impl PartialEq for Value {
    /// Go's `reflect.DeepEqual`.
    fn eq(&self, other: &Self) -> bool {
        crate::funcs::reflection::deep_equal(self, other)
    }
}

impl Value {
    pub fn str(s: &str) -> Value {
        Value::String(Rc::from(s))
    }

    pub fn string(s: String) -> Value {
        Value::String(Rc::from(s))
    }

    /// A Go string from bytes: `String` when they are UTF-8, else `RawStr`.
    pub fn from_go_bytes(bytes: Vec<u8>) -> Value {
        match String::from_utf8(bytes) {
            Ok(text) => Value::string(text),
            Err(e) => Value::RawStr(Rc::from(e.into_bytes())),
        }
    }

    /// [`Value::from_go_bytes`] for borrowed bytes.
    pub fn from_go_slice(bytes: &[u8]) -> Value {
        match std::str::from_utf8(bytes) {
            Ok(text) => Value::str(text),
            Err(_) => Value::RawStr(Rc::from(bytes)),
        }
    }

    /// The bytes of a Go string (`String` or `RawStr`).
    pub fn go_str_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::String(s) => Some(s.as_bytes()),
            Value::RawStr(b) => Some(b),
            _ => None,
        }
    }

    /// Whether this is a Go `string`.
    pub fn is_go_string(&self) -> bool {
        matches!(self, Value::String(_) | Value::RawStr(_))
    }

    /// A Go string as Go's character-by-character functions see it: each byte that is
    /// not UTF-8 is U+FFFD.
    pub fn go_text(&self) -> Option<std::borrow::Cow<'_, str>> {
        match self {
            Value::String(s) => Some(std::borrow::Cow::Borrowed(s)),
            Value::RawStr(b) => Some(crate::gostr::go_lossy(b)),
            _ => None,
        }
    }

    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Rc::new(List::new(ListKind::Interface, items)))
    }

    pub fn string_list(items: Vec<String>) -> Value {
        Value::List(Rc::new(List::new(
            ListKind::String,
            items.into_iter().map(Value::string).collect(),
        )))
    }

    pub fn map(entries: Entries) -> Value {
        Value::Map(Rc::new(MapCell::new(MapKind::Interface, entries)))
    }

    pub fn map_of(kind: MapKind, entries: Entries) -> Value {
        Value::Map(Rc::new(MapCell::new(kind, entries)))
    }

    pub fn empty_map() -> Value {
        Value::map(Entries::new())
    }

    /// A nil map of `kind`.
    pub fn nil_map(kind: MapKind) -> Value {
        Value::Map(Rc::new(MapCell::nil(kind)))
    }

    pub fn is_nil(&self) -> bool {
        matches!(self, Value::Nil)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// Go's `isTrue`: the zero value of any type is false, structs are always true.
    pub fn truth(&self) -> bool {
        match self {
            Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(i) | Value::Int64(i) => *i != 0,
            Value::Uint8(u) => *u != 0,
            Value::Float(f) => *f != 0.0,
            Value::String(s) => !s.is_empty(),
            Value::RawStr(_) => true,
            Value::Bytes(b) => !b.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Map(m) => !m.is_empty(),
            Value::Object(o) => o.underlying().is_none_or(|u| u.truth()),
        }
    }

    /// The Go type name, as `%T` and `typeOf` print it.
    pub fn type_name(&self) -> String {
        match self {
            Value::Nil => "<nil>".into(),
            Value::Bool(_) => "bool".into(),
            Value::Int(_) => "int".into(),
            Value::Int64(_) => "int64".into(),
            Value::Uint8(_) => "uint8".into(),
            Value::Float(_) => "float64".into(),
            Value::String(_) | Value::RawStr(_) => "string".into(),
            Value::Bytes(_) => "[]uint8".into(),
            Value::List(l) => match l.kind {
                ListKind::Interface => "[]interface {}",
                ListKind::String => "[]string",
                ListKind::Int => "[]int",
                ListKind::Lists => "[][]interface {}",
            }
            .into(),
            Value::Map(m) => match m.kind {
                MapKind::Interface => "map[string]interface {}",
                MapKind::String => "map[string]string",
                MapKind::Values => "common.Values",
            }
            .into(),
            Value::Object(o) => o.type_name(),
        }
    }

    /// The reflect kind, as `kindOf` prints it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Nil => "invalid",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Int64(_) => "int64",
            Value::Uint8(_) => "uint8",
            Value::Float(_) => "float64",
            Value::String(_) | Value::RawStr(_) => "string",
            Value::Bytes(_) | Value::List(_) => "slice",
            Value::Map(_) => "map",
            Value::Object(o) => o.kind(),
        }
    }

    /// Replaces a host object by the plain slice or map it stands for, if any.
    pub fn plain(&self) -> Value {
        match self {
            Value::Object(o) => o.underlying().unwrap_or_else(|| self.clone()),
            other => other.clone(),
        }
    }

    /// Reads Helm data (values, `fromYaml` results) into a runtime value. Integers in the
    /// data are `int64`, which is what Helm's `--set` parser produces.
    pub fn from_data(data: &Data) -> Value {
        match data {
            Data::Null => Value::Nil,
            Data::Bool(b) => Value::Bool(*b),
            Data::Int(i) => Value::Int64(*i),
            Data::Float(f) => Value::Float(*f),
            Data::String(s) => Value::str(s),
            Data::Bytes(b) => Value::from_go_slice(b),
            // Values nest up to go-yaml's 10,000 levels: grow the stack as needed.
            Data::Seq(items) => Value::list(
                (items.iter())
                    .map(|v| chartkit_yaml::with_stack(|| Value::from_data(v)))
                    .collect(),
            ),
            Data::Map(map) => Value::map(
                map.iter()
                    .map(|(k, v)| {
                        (
                            k.as_str().into(),
                            chartkit_yaml::with_stack(|| Value::from_data(v)),
                        )
                    })
                    .collect(),
            ),
        }
    }

    /// Like [`Value::from_data`], with the top-level map typed as Helm's `common.Values`.
    pub fn values_from_data(data: &chartkit_yaml::Map) -> Value {
        Value::map_of(
            MapKind::Values,
            data.iter()
                .map(|(k, v)| (Rc::from(k.as_str()), Value::from_data(v)))
                .collect(),
        )
    }

    /// The value as `encoding/json` would serialise it, as plain data. Byte slices become
    /// base64 strings; host objects give their JSON view; nil slices are null.
    pub fn to_data(&self) -> Data {
        self.data(true)
    }

    /// The value as go-yaml v3 serialises it (`toYamlPretty`): as [`Value::to_data`],
    /// but a nil slice is an empty sequence.
    pub fn to_yaml_v3_data(&self) -> Data {
        self.data(false)
    }

    fn data(&self, nil_slices_are_null: bool) -> Data {
        match self {
            Value::Nil => Data::Null,
            Value::Bool(b) => Data::Bool(*b),
            Value::Int(i) | Value::Int64(i) => Data::Int(*i),
            Value::Uint8(u) => Data::Int(*u as i64),
            Value::Float(f) => Data::Float(*f),
            Value::String(s) => Data::String(s.to_string()),
            // Kept as bytes; JSON and YAML see each byte that is not UTF-8 as U+FFFD.
            Value::RawStr(b) => Data::Bytes(b.to_vec()),
            Value::Bytes(b) => {
                use base64::Engine as _;
                Data::String(base64::engine::general_purpose::STANDARD.encode(b))
            }
            Value::List(l) if l.is_nil() && nil_slices_are_null => Data::Null,
            Value::List(l) => Data::Seq(
                l.iter()
                    .map(|item| chartkit_yaml::with_stack(|| item.data(nil_slices_are_null)))
                    .collect(),
            ),
            Value::Map(m) if m.is_nil() => Data::Null,
            Value::Map(m) => Data::Map(
                m.borrow()
                    .iter()
                    .map(|(k, v)| {
                        let data = chartkit_yaml::with_stack(|| v.data(nil_slices_are_null));
                        (k.to_string(), data)
                    })
                    .collect(),
            ),
            Value::Object(o) => o.to_data().data(nil_slices_are_null),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::str(s)
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::string(s)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<&Data> for Value {
    fn from(d: &Data) -> Self {
        Value::from_data(d)
    }
}
