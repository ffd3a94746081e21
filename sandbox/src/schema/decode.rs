//! A built-in type's request body checked the way the API server turns it into its Go
//! struct, so a value of the wrong JSON type is refused with the server's words:
//!
//! - [`json_error`]: Go's `encoding/json` (the API server's fork of it), which create,
//!   update, JSON patch and merge patch decode with: the first custom decoder's error, or
//!   else the first type mismatch in document order, named by the innermost struct and
//!   the JSON field names from the root;
//! - [`converter_error`]: `runtime.DefaultUnstructuredConverter`, which a strategic merge
//!   patch's result goes through, with its own wording and no path.
//!
//! Server-side apply checks types with structured-merge-diff instead
//! (`fieldset::walk::validate`), which formats values with [`go_value`] and
//! [`go_syntax`].

use serde_json::Value;

use super::node::Node;

/// What a position decodes into, as far as type checks go.
#[derive(Debug, Clone, Copy)]
enum Shape<'a> {
    /// A Go struct, by definition name.
    Struct(&'a str),
    Map,
    List,
    String,
    Int32,
    Int64,
    Float64,
    Bool,
    /// `[]byte`: base64 text.
    Bytes,
    IntOrString,
    Quantity,
    Time,
    /// Anything goes (`RawExtension`, `FieldsV1`, untyped positions).
    Any,
}

const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

fn shape<'a>(node: &Node<'a>) -> Shape<'a> {
    if node.is_bare_scalar() {
        return Shape::String;
    }
    if node.is_deduced() {
        return Shape::Any;
    }
    let definition = node.definition();
    match definition {
        Some(INT_OR_STRING) => return Shape::IntOrString,
        Some(QUANTITY) => return Shape::Quantity,
        Some(
            "io.k8s.apimachinery.pkg.apis.meta.v1.Time"
            | "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
        ) => return Shape::Time,
        Some(d)
            if d.starts_with("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON")
                && d != "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps" =>
        {
            // JSON, JSONSchemaPropsOrArray, OrBool, OrStringArray: their own decoders take
            // more than one shape.
            return Shape::Any;
        }
        _ => {}
    }
    match node.declared_format() {
        (Some("object"), _) | (None, _) if node.properties().is_some() => {
            Shape::Struct(definition.unwrap_or(""))
        }
        (Some("object"), _) if node.is_plain_map() => Shape::Map,
        (Some("array"), _) => Shape::List,
        (Some("string"), Some("byte")) => Shape::Bytes,
        (Some("string"), Some("date-time")) => Shape::Time,
        (Some("string"), _) => Shape::String,
        (Some("integer"), Some("int32")) => Shape::Int32,
        (Some("integer"), _) => Shape::Int64,
        (Some("number"), _) => Shape::Float64,
        (Some("boolean"), _) => Shape::Bool,
        _ => Shape::Any,
    }
}

/// Go's name of a definition's type: its package's last segment and its own
/// (`io.k8s.api.apps.v1.DeploymentSpec` → `v1.DeploymentSpec`).
fn go_struct_name(definition: &str) -> String {
    let mut parts = definition.rsplit('.');
    let name = parts.next().unwrap_or("");
    match parts.next() {
        Some(package) => format!("{package}.{name}"),
        None => name.to_string(),
    }
}

fn short_name(definition: &str) -> &str {
    definition.rsplit('.').next().unwrap_or(definition)
}

/// Go's type string for a position (`[]v1.Container`, `map[string]string`).
fn go_type(node: &Node<'_>) -> String {
    match shape(node) {
        Shape::Struct(d) => go_struct_name(d),
        Shape::Map => {
            let element = node.element();
            match element.as_ref().map(shape) {
                // Every map of quantities in the built-in types is core's ResourceList.
                Some(Shape::Quantity) => "v1.ResourceList".into(),
                _ => format!(
                    "map[string]{}",
                    element.map_or_else(|| "interface {}".into(), |e| go_type(&e))
                ),
            }
        }
        Shape::List => format!("[]{}", go_type(&node.items())),
        Shape::String => "string".into(),
        Shape::Int32 => "int32".into(),
        Shape::Int64 => "int64".into(),
        Shape::Float64 => "float64".into(),
        Shape::Bool => "bool".into(),
        Shape::Bytes => "[]uint8".into(),
        Shape::IntOrString => "intstr.IntOrString".into(),
        Shape::Quantity => "resource.Quantity".into(),
        Shape::Time => "v1.Time".into(),
        Shape::Any => "interface {}".into(),
    }
}

/// The JSON type names Go's decoder uses (`number`, `object`, ...).
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Where the decoder is, for its error context: the innermost struct and the JSON field
/// names from the root.
struct Context<'a> {
    structure: Option<&'a str>,
    fields: Vec<&'a str>,
}

/// A decoding failure: a type mismatch the decoder notes and goes on after, or a custom
/// decoder's error, which stops it.
enum Failure {
    Mismatch(String),
    Fatal(String),
}

fn mismatch(context: &Context<'_>, what: String, go_type: &str) -> Failure {
    Failure::Mismatch(match context.structure {
        Some(s) if !context.fields.is_empty() => format!(
            "json: cannot unmarshal {what} into Go struct field {}.{} of type {go_type}",
            short_name(s),
            context.fields.join(".")
        ),
        _ => format!("json: cannot unmarshal {what} into Go value of type {go_type}"),
    })
}

/// The error Go's JSON decoder gives for `value` decoded into the type at `node` (a
/// resource's root), or `None` when it decodes.
pub fn json_error(node: &Node<'_>, value: &Value) -> Option<String> {
    let mut failures = Vec::new();
    let mut context = Context {
        structure: None,
        fields: Vec::new(),
    };
    json_walk(node, value, &mut context, &mut failures);
    // A custom decoder's error ends decoding and wins over mismatches noted before it.
    let fatal = failures.iter().find_map(|f| match f {
        Failure::Fatal(m) => Some(m.clone()),
        Failure::Mismatch(_) => None,
    });
    fatal.or_else(|| {
        failures.into_iter().find_map(|f| match f {
            Failure::Mismatch(m) => Some(m),
            Failure::Fatal(_) => None,
        })
    })
}

fn json_walk<'a>(
    node: &Node<'a>,
    value: &'a Value,
    context: &mut Context<'a>,
    failures: &mut Vec<Failure>,
) {
    if value.is_null() || failures.iter().any(|f| matches!(f, Failure::Fatal(_))) {
        return;
    }
    let shape = shape(node);
    let wrong = |context: &Context<'_>| mismatch(context, json_kind(value).into(), &go_type(node));
    match (shape, value) {
        (Shape::Any, _) => {}
        (Shape::Struct(name), Value::Object(map)) => {
            for (key, child) in map {
                let Some(field) = node.field(key) else {
                    continue;
                };
                let outer = context.structure.replace(name);
                context.fields.push(key);
                json_walk(&field, child, context, failures);
                context.fields.pop();
                context.structure = outer;
            }
        }
        (Shape::Map, Value::Object(map)) => {
            if let Some(element) = node.element() {
                for child in map.values() {
                    json_walk(&element, child, context, failures);
                }
            }
        }
        (Shape::List | Shape::Bytes, Value::Array(items)) => {
            if matches!(shape, Shape::Bytes) {
                for item in items {
                    if let Some(what) = integer_mismatch(item, 0, 255) {
                        failures.push(mismatch(context, what, "uint8"));
                    }
                }
                return;
            }
            let item_node = node.items();
            for item in items {
                json_walk(&item_node, item, context, failures);
            }
        }
        (Shape::String, Value::String(_))
        | (Shape::Float64, Value::Number(_))
        | (Shape::Bool, Value::Bool(_)) => {}
        (Shape::Int32 | Shape::Int64, Value::Number(_)) => {
            let (low, high) = match shape {
                Shape::Int32 => (i32::MIN as i64, i32::MAX as i64),
                _ => (i64::MIN, i64::MAX),
            };
            if let Some(what) = integer_mismatch(value, low, high) {
                failures.push(mismatch(context, what, &go_type(node)));
            }
        }
        (Shape::Bytes, Value::String(text)) => {
            if let Err(at) = go_base64(text.as_bytes()) {
                failures.push(Failure::Mismatch(format!(
                    "illegal base64 data at input byte {at}"
                )));
            }
        }
        (Shape::IntOrString | Shape::Quantity | Shape::Time, _) => {
            if let Some(e) = custom_decoder_error(shape, value) {
                failures.push(Failure::Fatal(e));
            }
        }
        _ => failures.push(wrong(context)),
    }
}

/// How Go's decoder words a JSON value that is not an integer in `low..=high`.
fn integer_mismatch(value: &Value, low: i64, high: i64) -> Option<String> {
    match value {
        Value::Number(n) => {
            let fits = n.as_i64().is_some_and(|i| (low..=high).contains(&i));
            (!fits).then(|| format!("number {n}"))
        }
        other => Some(json_kind(other).into()),
    }
}

/// The error of a type's own JSON decoder (`IntOrString`, `Quantity`, `Time`).
fn custom_decoder_error(shape: Shape<'_>, value: &Value) -> Option<String> {
    match shape {
        Shape::IntOrString => match value {
            Value::String(_) => None,
            other => integer_mismatch(other, i32::MIN as i64, i32::MAX as i64)
                .map(|what| format!("json: cannot unmarshal {what} into Go value of type int32")),
        },
        Shape::Quantity => {
            let text = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            parse_quantity(text.trim()).err().map(str::to_string)
        }
        Shape::Time => match value {
            Value::String(s) => (chrono::DateTime::parse_from_rfc3339(s).is_err()).then(|| {
                format!(
                    "parsing time {s:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse {s:?} as \"2006\""
                )
            }),
            other => Some(format!(
                "json: cannot unmarshal {} into Go value of type string",
                json_kind(other)
            )),
        },
        _ => None,
    }
}

const QUANTITY_FORMAT: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/// Whether `text` parses as a `resource.Quantity`, with `ParseQuantity`'s errors.
pub fn parse_quantity(text: &str) -> Result<(), &'static str> {
    if text.is_empty() {
        return Err(QUANTITY_FORMAT);
    }
    let bytes = text.as_bytes();
    let mut pos = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        pos += 1;
    }
    let digits = |from: usize| {
        from + bytes[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    pos = digits(pos);
    if pos < bytes.len() && bytes[pos] == b'.' {
        pos = digits(pos + 1);
    }
    let suffix_start = pos;
    pos += bytes[pos..]
        .iter()
        .take_while(|b| b"eEinumkKMGTP".contains(b))
        .count();
    if pos < bytes.len() && matches!(bytes[pos], b'+' | b'-') {
        pos += 1;
    }
    if digits(pos) != bytes.len() {
        return Err(QUANTITY_FORMAT);
    }
    let suffix = &text[suffix_start..];
    let known = matches!(
        suffix,
        "" | "Ki"
            | "Mi"
            | "Gi"
            | "Ti"
            | "Pi"
            | "Ei"
            | "n"
            | "u"
            | "m"
            | "k"
            | "M"
            | "G"
            | "T"
            | "P"
            | "E"
    ) || (suffix.len() > 1
        && (suffix.starts_with('e') || suffix.starts_with('E'))
        && suffix[1..].parse::<i64>().is_ok());
    if known {
        Ok(())
    } else {
        Err("unable to parse quantity's suffix")
    }
}

/// Go's `base64.StdEncoding.Decode`: the offset its `CorruptInputError` names.
fn go_base64(src: &[u8]) -> Result<(), usize> {
    let decodes = |b: u8| b.is_ascii_alphanumeric() || b == b'+' || b == b'/';
    let newline = |b: u8| b == b'\n' || b == b'\r';
    let mut si = 0;
    while si < src.len() {
        let mut j = 0;
        while j < 4 {
            if si == src.len() {
                return if j == 0 { Ok(()) } else { Err(si - j) };
            }
            let b = src[si];
            si += 1;
            if decodes(b) {
                j += 1;
                continue;
            }
            if newline(b) {
                continue;
            }
            if b != b'=' {
                return Err(si - 1);
            }
            // Padding: only after two or three characters, and nothing but newlines
            // after it.
            match j {
                0 | 1 => return Err(si - 1),
                2 => {
                    while si < src.len() && newline(src[si]) {
                        si += 1;
                    }
                    if si == src.len() {
                        return Err(src.len());
                    }
                    if src[si] != b'=' {
                        return Err(si - 1);
                    }
                    si += 1;
                }
                _ => {}
            }
            while si < src.len() && newline(src[si]) {
                si += 1;
            }
            return if si < src.len() { Err(si) } else { Ok(()) };
        }
    }
    Ok(())
}

/// The error `runtime.DefaultUnstructuredConverter` gives turning `value` (as JSON
/// numbers decode into an unstructured object: integers as int64, others float64) into
/// the type at `node`, or `None`.
pub fn converter_error(node: &Node<'_>, value: &Value) -> Option<String> {
    if value.is_null() {
        return None;
    }
    let shape = shape(node);
    let kind = unstructured_kind(value);
    match (shape, value) {
        (Shape::Any, _) => None,
        (Shape::IntOrString | Shape::Quantity | Shape::Time, _) => {
            custom_decoder_error(shape, value)
        }
        (Shape::Struct(_), Value::Object(map)) => map.iter().find_map(|(key, child)| {
            node.field(key)
                .and_then(|field| converter_error(&field, child))
        }),
        (Shape::Struct(_), _) => Some(format!("cannot restore struct from: {kind}")),
        (Shape::Map, Value::Object(map)) => {
            let element = node.element()?;
            map.values()
                .find_map(|child| converter_error(&element, child))
        }
        (Shape::Map, _) => Some(format!("cannot restore map from {kind}")),
        (Shape::Bytes, Value::String(text)) => go_base64(text.as_bytes())
            .err()
            .map(|at| format!("error decoding from json: illegal base64 data at input byte {at}")),
        (Shape::Bytes, Value::Array(items)) => items
            .iter()
            .find_map(|item| simple_conversion(Shape::Int32, "uint8", item)),
        (Shape::List, Value::Array(items)) => {
            let item_node = node.items();
            items
                .iter()
                .find_map(|item| converter_error(&item_node, item))
        }
        (Shape::List | Shape::Bytes, _) => Some(format!("cannot restore slice from {kind}")),
        (simple, _) => simple_conversion(simple, &go_type(node), value),
    }
}

/// Go's reflect kind of an unstructured value.
fn unstructured_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "invalid",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "slice",
        Value::Object(_) => "map",
    }
}

/// The converter's rules for scalars: JSON's four groups (bools, integers, floats,
/// strings) do not mix, except integers into floats and whole floats into integers.
fn simple_conversion(shape: Shape<'_>, go_type: &str, value: &Value) -> Option<String> {
    let kind = unstructured_kind(value);
    let integer = |s: Shape<'_>| matches!(s, Shape::Int32 | Shape::Int64);
    let ok = match value {
        Value::String(_) => matches!(shape, Shape::String),
        Value::Bool(_) => matches!(shape, Shape::Bool),
        Value::Number(n) if n.is_i64() => integer(shape) || matches!(shape, Shape::Float64),
        Value::Number(n) => {
            matches!(shape, Shape::Float64)
                || (integer(shape) && n.as_f64().is_some_and(|f| f == f.trunc()))
        }
        _ => false,
    };
    if ok {
        return None;
    }
    // Go's reflect calls an int64 convertible to a string (a rune) and a float to an
    // integer; those fail in the converter's own words, the rest fall through to
    // "unrecognized type".
    let convertible = match (kind, shape) {
        ("int64", Shape::String) => true,
        ("float64", s) => integer(s),
        _ => false,
    };
    let dest_kind = match shape {
        Shape::String => "string",
        Shape::Int32 if go_type == "uint8" => "uint8",
        Shape::Int32 => "int32",
        Shape::Int64 => "int64",
        Shape::Float64 => "float64",
        Shape::Bool => "bool",
        _ => "interface",
    };
    Some(if convertible {
        format!("cannot convert {kind} to {go_type}")
    } else {
        format!("unrecognized type: {dest_kind}")
    })
}

/// structured-merge-diff's check of a scalar position in an applied object (its
/// `validateScalar`): strings, numbers and booleans are typed; int-or-string, quantities
/// and times are any scalar.
pub fn apply_scalar_error(node: &Node<'_>, value: &Value) -> Option<String> {
    if value.is_null() {
        return None;
    }
    let scalar = matches!(value, Value::Bool(_) | Value::Number(_) | Value::String(_));
    match shape(node) {
        Shape::String | Shape::Bytes => (!value.is_string()).then(|| {
            format!(
                "expected string, got &value.valueUnstructured{{Value:{}}}",
                go_syntax(value)
            )
        }),
        Shape::Int32 | Shape::Int64 | Shape::Float64 => (!value.is_number())
            .then(|| format!("expected numeric (int or float), got {}", go_type_of(value))),
        Shape::Bool => {
            (!value.is_boolean()).then(|| format!("expected boolean, got &{{{}}}", go_value(value)))
        }
        Shape::IntOrString | Shape::Quantity | Shape::Time => {
            (!scalar).then(|| format!("expected any scalar, got &{{{}}}", go_value(value)))
        }
        Shape::Struct(_) | Shape::Map | Shape::List | Shape::Any => None,
    }
}

/// Go's `%v` of a value as structured-merge-diff holds an applied object's values (JSON
/// numbers as float64): `5`, `x`, `map[a:b]`, `[x y]`.
pub fn go_value(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_float(n),
        Value::String(s) => s.clone(),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(go_value).collect::<Vec<_>>().join(" ")
        ),
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", go_value(&map[k])))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

/// Go's `%#v` of such a value: `5`, `"x"`, `map[string]interface {}{"a":"b"}`.
pub fn go_syntax(value: &Value) -> String {
    match value {
        Value::Null => "interface {}(nil)".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_float(n),
        Value::String(s) => chartkit_yaml::gofmt::quote(s),
        Value::Array(items) => format!(
            "[]interface {{}}{{{}}}",
            items.iter().map(go_syntax).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", chartkit_yaml::gofmt::quote(k), go_syntax(&map[k])))
                .collect();
            format!("map[string]interface {{}}{{{}}}", parts.join(", "))
        }
    }
}

/// Go's `%T` of such a value.
pub fn go_type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

fn go_float(n: &serde_json::Number) -> String {
    chartkit_yaml::gonum::format_g(n.as_f64().unwrap_or(0.0), false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::Registry;
    use serde_json::json;

    fn check(group: &str, plural: &str, object: Value) -> Option<String> {
        let def = Registry::with_builtins()
            .by_key(&format!("{group}/{plural}"))
            .unwrap();
        let version = def.versions[0].clone();
        let node = crate::schema::type_for(&def, &version).unwrap();
        json_error(&node, &object)
    }

    fn convert(group: &str, plural: &str, object: Value) -> Option<String> {
        let def = Registry::with_builtins()
            .by_key(&format!("{group}/{plural}"))
            .unwrap();
        let version = def.versions[0].clone();
        let node = crate::schema::type_for(&def, &version).unwrap();
        converter_error(&node, &object)
    }

    #[test]
    fn a_number_in_a_config_maps_data_is_named_as_go_names_it() {
        assert_eq!(
            check("", "configmaps", json!({"data": {"a": 5}})).as_deref(),
            Some(
                "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
            )
        );
        assert_eq!(
            check("", "configmaps", json!({"data": ["x"]})).as_deref(),
            Some(
                "json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string"
            )
        );
        assert_eq!(
            check(
                "",
                "configmaps",
                json!({"data": {"a": "5"}, "binaryData": null})
            ),
            None
        );
    }

    #[test]
    fn nested_fields_name_the_innermost_struct_and_the_whole_path() {
        let deployment =
            |spec: Value| json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": spec});
        assert_eq!(
            check(
                "apps",
                "deployments",
                deployment(json!({"replicas": "three"}))
            )
            .as_deref(),
            Some(
                "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
            )
        );
        assert_eq!(
            check(
                "apps",
                "deployments",
                deployment(json!({"template": {"spec": {"containers": [{"name": "a"}, {"name": "b", "image": 7}]}}}))
            )
            .as_deref(),
            Some("json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.image of type string")
        );
        assert_eq!(
            check(
                "apps",
                "deployments",
                deployment(json!({"template": {"spec": {"containers": "x"}}}))
            )
            .as_deref(),
            Some(
                "json: cannot unmarshal string into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container"
            )
        );
        assert_eq!(
            check("apps", "deployments", deployment(json!({"selector": 5}))).as_deref(),
            Some(
                "json: cannot unmarshal number into Go struct field DeploymentSpec.spec.selector of type v1.LabelSelector"
            )
        );
        assert_eq!(
            check("apps", "deployments", deployment(json!({"replicas": 1.5}))).as_deref(),
            Some(
                "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32"
            )
        );
        assert_eq!(
            check(
                "apps",
                "deployments",
                deployment(json!({"replicas": 3000000000u64}))
            )
            .as_deref(),
            Some(
                "json: cannot unmarshal number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32"
            )
        );
        assert_eq!(
            check(
                "apps",
                "deployments",
                json!({"metadata": {"labels": {"a": true}}})
            )
            .as_deref(),
            Some(
                "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string"
            )
        );
    }

    #[test]
    fn the_first_mismatch_wins_unless_a_custom_decoder_fails_later() {
        let pod = json!({"spec": {"containers": [{"name": 1, "ports": [{"containerPort": "x"}]}]}});
        assert_eq!(
            check("", "pods", pod).as_deref(),
            Some(
                "json: cannot unmarshal number into Go struct field Container.spec.containers.name of type string"
            )
        );
        let pod = json!({"spec": {"containers": [{"name": 1, "resources": {"limits": {"cpu": "lots"}}}]}});
        assert_eq!(check("", "pods", pod).as_deref(), Some(QUANTITY_FORMAT));
    }

    #[test]
    fn types_with_their_own_decoders_use_their_words() {
        let service = |port: Value| json!({"spec": {"ports": [{"port": 80, "targetPort": port}]}});
        assert_eq!(check("", "services", service(json!("http"))), None);
        assert_eq!(check("", "services", service(json!(8080))), None);
        assert_eq!(
            check("", "services", service(json!(true))).as_deref(),
            Some("json: cannot unmarshal bool into Go value of type int32")
        );
        assert_eq!(
            check("", "services", service(json!({"a": 1}))).as_deref(),
            Some("json: cannot unmarshal object into Go value of type int32")
        );
        let limits = |cpu: Value| json!({"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": cpu}}}]}});
        for fine in [
            json!("500m"),
            json!(2),
            json!(0.5),
            json!("1Gi"),
            json!("1e3"),
        ] {
            assert_eq!(check("", "pods", limits(fine.clone())), None, "{fine}");
        }
        assert_eq!(
            check("", "pods", limits(json!(true))).as_deref(),
            Some(QUANTITY_FORMAT)
        );
        assert_eq!(
            check("", "pods", limits(json!("2x"))).as_deref(),
            Some(QUANTITY_FORMAT)
        );
        assert_eq!(
            check("", "pods", limits(json!("2Ki2"))).as_deref(),
            Some("unable to parse quantity's suffix")
        );
        assert_eq!(check("", "secrets", json!({"data": {"a": "aGk="}})), None);
        assert_eq!(
            check("", "secrets", json!({"data": {"a": "hi!"}})).as_deref(),
            Some("illegal base64 data at input byte 2")
        );
        assert_eq!(
            check("", "secrets", json!({"data": {"a": 5}})).as_deref(),
            Some("json: cannot unmarshal number into Go struct field Secret.data of type []uint8")
        );
        assert_eq!(
            check("", "pods", json!({"metadata": {"creationTimestamp": 5}})).as_deref(),
            Some("json: cannot unmarshal number into Go value of type string")
        );
        assert_eq!(
            check(
                "",
                "pods",
                json!({"metadata": {"creationTimestamp": "2024-01-02T03:04:05Z"}})
            ),
            None
        );
    }

    #[test]
    fn base64_errors_name_the_offset_go_names() {
        assert_eq!(go_base64(b"aGk="), Ok(()));
        assert_eq!(go_base64(b"aGVsbG8="), Ok(()));
        assert_eq!(go_base64(b""), Ok(()));
        assert_eq!(go_base64(b"aGk"), Err(0));
        assert_eq!(go_base64(b"aGVsbG8"), Err(4));
        assert_eq!(go_base64(b"a==="), Err(1));
        assert_eq!(go_base64(b"aG=="), Ok(()));
        assert_eq!(go_base64(b"aG="), Err(3));
        assert_eq!(go_base64(b"aGk=x"), Err(4));
    }

    #[test]
    fn the_unstructured_converter_words_mismatches_its_own_way() {
        assert_eq!(
            convert("", "configmaps", json!({"data": {"a": 5}})).as_deref(),
            Some("cannot convert int64 to string")
        );
        assert_eq!(
            convert("", "configmaps", json!({"data": {"a": true}})).as_deref(),
            Some("unrecognized type: string")
        );
        assert_eq!(
            convert("", "configmaps", json!({"data": "x"})).as_deref(),
            Some("cannot restore map from string")
        );
        assert_eq!(
            convert("apps", "deployments", json!({"spec": {"replicas": "x"}})).as_deref(),
            Some("unrecognized type: int32")
        );
        assert_eq!(
            convert("apps", "deployments", json!({"spec": {"replicas": 1.5}})).as_deref(),
            Some("cannot convert float64 to int32")
        );
        assert_eq!(
            convert("apps", "deployments", json!({"spec": {"replicas": 2.0}})),
            None
        );
        assert_eq!(
            convert("apps", "deployments", json!({"spec": [1]})).as_deref(),
            Some("cannot restore struct from: slice")
        );
        assert_eq!(
            convert(
                "apps",
                "deployments",
                json!({"spec": {"template": {"spec": {"containers": 5}}}})
            )
            .as_deref(),
            Some("cannot restore slice from int64")
        );
        assert_eq!(
            convert(
                "",
                "services",
                json!({"spec": {"ports": [{"targetPort": false}]}})
            )
            .as_deref(),
            Some("json: cannot unmarshal bool into Go value of type int32")
        );
    }

    #[test]
    fn go_formats_values_as_structured_merge_diff_prints_them() {
        let v = json!({"b": [1, "x"], "a": 1.5});
        assert_eq!(go_value(&v), "map[a:1.5 b:[1 x]]");
        assert_eq!(
            go_syntax(&v),
            "map[string]interface {}{\"a\":1.5, \"b\":[]interface {}{1, \"x\"}}"
        );
        assert_eq!(go_value(&json!(3000000000u64)), "3e+09");
        assert_eq!(go_type_of(&json!("x")), "string");
    }
}
