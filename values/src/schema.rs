//! values.schema.json validation with Helm 4's messages.
//!
//! Helm 4 validates with santhosh-tekuri/jsonschema v6 and prints its error tree:
//! `- at '/age': minimum: got -5, want 0`, one line per failure, nested two spaces under
//! a `validation failed` (or `'anyOf' failed`, ...) line when one subschema failed in
//! several ways. Validation itself is the `jsonschema` crate's; this module rebuilds
//! v6's tree and wording from its errors.
//!
//! v6 compiles `pattern` with Go's regexp, not as ECMA-262: `^[\w-\.]+$` is valid,
//! `\s` does not match `\v`, `a{1001}` is an invalid schema. So before the crate sees a
//! schema, each `pattern` is checked with `chartkit-regexp` and moved to a keyword of
//! ours that matches it the Go way ([`GO_PATTERN`]). `patternProperties` keys are still
//! the crate's ECMA-262 regexes.

use std::fmt::Write as _;

use std::sync::Arc;

use chartkit_chart::Chart;
use chartkit_regexp::Regexp;
use chartkit_yaml::{Map, Value};
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{ValidationError, Validator};

/// Helm's `ValidateAgainstSchema`: the chart's schema against `values`, then each
/// subchart's against its section. Returns the combined report (`name:\n- at ...\n`
/// per failing chart), as Helm builds it.
pub fn validate_against_schema(chart: &Chart, values: &Map) -> Result<(), String> {
    let mut report = String::new();
    validate_tree(chart, values, &mut report);
    if report.is_empty() {
        Ok(())
    } else {
        Err(report)
    }
}

/// The error `helm template` prints for a failed validation.
pub fn validate_chart_values(chart: &Chart, values: &Map) -> Result<(), String> {
    validate_against_schema(chart, values).map_err(|report| {
        format!("values don't meet the specifications of the schema(s) in the following chart(s):\n{report}")
    })
}

fn validate_tree(chart: &Chart, values: &Map, report: &mut String) {
    if let Some(schema) = &chart.schema
        && let Err(text) = validate_single(values, schema)
    {
        let _ = write!(report, "{}:\n{text}", chart.name());
    }
    for sub in &chart.dependencies {
        match values.get(sub.name()) {
            None | Some(Value::Null) => continue,
            Some(Value::Map(section)) => validate_tree(sub, section, report),
            Some(other) => {
                let _ = writeln!(
                    report,
                    "{}:\ninvalid type for values: expected object (map), got {}",
                    sub.name(),
                    go_type(other)
                );
            }
        }
    }
}

/// One schema against one values map: `Ok` or v6's lines (each ending in a newline).
pub fn validate_single(values: &Map, schema: &[u8]) -> Result<(), String> {
    let schema: serde_json::Value = serde_json::from_slice(schema).map_err(|e| e.to_string())?;
    let validator = build_validator(schema)?;
    let instance = to_json(&Value::Map(values.clone()));
    let mut failures = type_first(
        validator
            .iter_errors(&instance)
            .map(|e| Failure::from(&e))
            .collect(),
    );
    if failures.is_empty() {
        return Ok(());
    }
    // Helm iterates Go maps, whose order is random; fix one: structural errors of an
    // object before its properties, properties by name.
    failures.sort_by_cached_key(|f| (f.segments(), f.late));
    let mut out = String::new();
    write_tree(&failures, "", 0, &mut out);
    // v6 prints the causes under a header line that Helm cuts off; what remains starts
    // with a newline per cause and gets one more at the end.
    Err(format!("{}\n", out.trim_start_matches('\n')))
}

/// v6 fetches metaschemas it does not know (`"$schema": "http://json-schema.org/schema"`
/// names the latest draft); offline, such a schema is validated as draft 2020-12, v6's
/// default.
fn build_validator(mut schema: serde_json::Value) -> Result<Validator, String> {
    take_patterns(&mut schema, &mut String::new())?;
    let options = || jsonschema::options().with_keyword(GO_PATTERN, go_pattern_keyword);
    match options().build(&schema) {
        Ok(validator) => Ok(validator),
        Err(e) if e.to_string().starts_with("Unknown specification") => {
            if let Some(root) = schema.as_object_mut() {
                root.remove("$schema");
            }
            options()
                .with_draft(jsonschema::Draft::Draft202012)
                .build(&schema)
                .map_err(|e| invalid_schema(&e))
        }
        Err(e) => Err(invalid_schema(&e)),
    }
}

/// The keyword a schema's `pattern` is moved to, so that it is matched as Go's regexp.
const GO_PATTERN: &str = "chartkit:goPattern";

/// Keywords whose value is a schema, a list of schemas, or a map of names to schemas:
/// where a `pattern` keyword can be. (`dependencies` maps to schemas or to lists of
/// names; a list of names holds no object.)
const SUBSCHEMA_KEYWORDS: &[&str] = &[
    "additionalItems",
    "additionalProperties",
    "allOf",
    "anyOf",
    "contains",
    "contentSchema",
    "definitions",
    "$defs",
    "dependencies",
    "dependentSchemas",
    "else",
    "if",
    "items",
    "not",
    "oneOf",
    "patternProperties",
    "prefixItems",
    "properties",
    "propertyNames",
    "then",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// Moves each `pattern` of the schema at `at` (a JSON pointer) and of its subschemas to
/// [`GO_PATTERN`], after checking that Go's regexp compiles it: v6 checks patterns with
/// the `regex` format of its metaschema, which is Go's regexp.
fn take_patterns(schema: &mut serde_json::Value, at: &mut String) -> Result<(), String> {
    let serde_json::Value::Object(object) = schema else {
        return Ok(());
    };
    if let Some(serde_json::Value::String(pattern)) = object.get("pattern") {
        if let Err(e) = Regexp::new(pattern) {
            return Err(format!(
                "jsonschema: invalid schema at '{at}/pattern': {} is not valid regex: {e}",
                quote(pattern)
            ));
        }
        if let Some(pattern) = object.remove("pattern") {
            object.insert(GO_PATTERN.to_owned(), pattern);
        }
    }
    for (keyword, value) in object.iter_mut() {
        if !SUBSCHEMA_KEYWORDS.contains(&keyword.as_str()) {
            continue;
        }
        let len = at.len();
        at.push('/');
        at.push_str(&keyword.replace('~', "~0").replace('/', "~1"));
        let result = match value {
            serde_json::Value::Array(items) => {
                items.iter_mut().enumerate().try_for_each(|(i, item)| {
                    let len = at.len();
                    let _ = write!(at, "/{i}");
                    let result = take_patterns(item, at);
                    at.truncate(len);
                    result
                })
            }
            serde_json::Value::Object(map)
                if matches!(
                    keyword.as_str(),
                    "properties"
                        | "patternProperties"
                        | "definitions"
                        | "$defs"
                        | "dependencies"
                        | "dependentSchemas"
                ) =>
            {
                map.iter_mut().try_for_each(|(name, sub)| {
                    let len = at.len();
                    let _ = write!(at, "/{}", name.replace('~', "~0").replace('/', "~1"));
                    let result = take_patterns(sub, at);
                    at.truncate(len);
                    result
                })
            }
            sub => take_patterns(sub, at),
        };
        at.truncate(len);
        result?;
    }
    Ok(())
}

/// A `pattern` matched as Go's regexp matches it, with v6's message.
struct GoPattern {
    pattern: String,
    regexp: Arc<Regexp>,
}

impl<'i> jsonschema::Keyword<'i> for GoPattern {
    fn validate(&self, instance: &'i serde_json::Value) -> Result<(), ValidationError<'i>> {
        match instance {
            serde_json::Value::String(text) if !self.regexp.is_match(text) => {
                Err(ValidationError::custom(format!(
                    "{} does not match pattern {}",
                    quote(text),
                    quote(&self.pattern)
                )))
            }
            _ => Ok(()),
        }
    }

    fn is_valid(&self, instance: &'i serde_json::Value) -> bool {
        instance
            .as_str()
            .is_none_or(|text| self.regexp.is_match(text))
    }
}

fn go_pattern_keyword<'a>(
    _parent: &'a serde_json::Map<String, serde_json::Value>,
    value: &'a serde_json::Value,
    _path: jsonschema::paths::Location,
) -> Result<Box<dyn for<'i> jsonschema::Keyword<'i>>, ValidationError<'a>> {
    let pattern = value.as_str().unwrap_or_default().to_owned();
    // Checked by `take_patterns`.
    let regexp = Regexp::new(&pattern).map_err(|e| ValidationError::custom(e.to_string()))?;
    Ok(Box::new(GoPattern {
        pattern,
        regexp: Arc::new(regexp),
    }))
}

/// A schema that cannot be compiled, with the JSON pointer of the offending part of the
/// schema, as v6 names it (`- at '/properties/x/type'`), so that it can be found.
fn invalid_schema(error: &ValidationError) -> String {
    let at = error.instance_path().as_str();
    if at.is_empty() {
        format!("jsonschema: invalid schema: {error}")
    } else {
        format!("jsonschema: invalid schema at '{at}': {error}")
    }
}

/// One validation failure, reduced to what v6's report needs.
#[derive(Clone)]
struct Failure {
    /// JSON pointer of the failing value.
    path: String,
    /// v6's text for it.
    text: String,
    /// The missing property, for `required` failures, which v6 reports together.
    required: Option<String>,
    /// `anyOf`/`oneOf`/`not` failures sort after the other failures at the same place.
    late: bool,
    /// The failures of each `anyOf`/`oneOf` alternative.
    causes: Vec<Vec<Failure>>,
    /// The schema object whose keyword failed (its JSON pointer without the keyword).
    schema: String,
    /// A `type` failure: v6 stops checking that schema object's other keywords there.
    is_type: bool,
}

impl Failure {
    fn from(error: &ValidationError) -> Failure {
        use ValidationErrorKind as K;
        let kind = error.kind();
        let (late, causes) = match kind {
            K::AnyOf { context } | K::OneOfNotValid { context } => (
                true,
                context
                    .iter()
                    .map(|alternative| type_first(alternative.iter().map(Failure::from).collect()))
                    .collect(),
            ),
            K::OneOfMultipleValid { .. } | K::Not { .. } => (true, Vec::new()),
            _ => (false, Vec::new()),
        };
        let required = match kind {
            K::Required { property } => Some(
                property
                    .as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| property.to_string()),
            ),
            _ => None,
        };
        Failure {
            path: error.instance_path().as_str().to_owned(),
            text: message(kind, error.instance()),
            required,
            late,
            causes,
            schema: schema_object(error.schema_path().as_str()).to_owned(),
            is_type: matches!(kind, K::Type { .. }),
        }
    }

    fn segments(&self) -> Vec<String> {
        segments(&self.path)
    }
}

/// The schema object a keyword's failure belongs to: its schema path without the keyword.
fn schema_object(keyword_path: &str) -> &str {
    keyword_path
        .rsplit_once('/')
        .map_or("", |(object, _)| object)
}

/// v6 checks `type` first and, when the value has the wrong type, reports only that for
/// the schema object (`got null, want string`, not also `value must be one of ...`);
/// the other keywords' failures of that object at that value are dropped.
fn type_first(failures: Vec<Failure>) -> Vec<Failure> {
    let wrong_type: Vec<(String, String)> = failures
        .iter()
        .filter(|f| f.is_type)
        .map(|f| (f.path.clone(), f.schema.clone()))
        .collect();
    if wrong_type.is_empty() {
        return failures;
    }
    failures
        .into_iter()
        .filter(|f| {
            f.is_type
                || !wrong_type
                    .iter()
                    .any(|(path, schema)| *path == f.path && *schema == f.schema)
        })
        .collect()
}

fn segments(pointer: &str) -> Vec<String> {
    pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect()
}

/// Writes failures below the instance location `at`: the ones about `at` itself, then
/// each child location, grouped under `validation failed` when it failed more than once.
fn write_tree(failures: &[Failure], at: &str, indent: usize, out: &mut String) {
    let depth = segments(at).len();
    let merged = merge_required(failures);
    let failures = merged.as_slice();
    let mut i = 0;
    while i < failures.len() {
        let failure = &failures[i];
        let path = failure.path.as_str();
        if path == at || segments(path).len() <= depth {
            write_failure(out, indent, failure);
            i += 1;
            continue;
        }
        let child = segments(path)[depth].clone();
        let prefix = format!("{at}/{}", escape(&child));
        let mut j = i;
        while j < failures.len() && within(&failures[j].path, &prefix) {
            j += 1;
        }
        if j - i == 1 {
            write_failure(out, indent, failure);
        } else {
            write_line(out, indent, &prefix, "validation failed");
            write_tree(&failures[i..j], &prefix, indent + 1, out);
        }
        i = j;
    }
}

fn within(path: &str, prefix: &str) -> bool {
    path == prefix || path.starts_with(&format!("{prefix}/"))
}

fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Consecutive `required` failures at one location become one line, as v6 reports all
/// missing properties together.
fn merge_required(failures: &[Failure]) -> Vec<Failure> {
    let mut out: Vec<Failure> = Vec::new();
    let mut missing: Vec<String> = Vec::new();
    for failure in failures {
        if let Some(name) = &failure.required {
            if let Some(last) = out.last_mut()
                && last.required.is_some()
                && last.path == failure.path
                && !missing.is_empty()
            {
                missing.push(name.clone());
                let names: Vec<String> = missing.iter().map(|m| quote(m)).collect();
                last.text = format!("missing properties {}", names.join(", "));
                continue;
            }
            missing = vec![name.clone()];
        } else {
            missing.clear();
        }
        out.push(failure.clone());
    }
    out
}

fn write_line(out: &mut String, indent: usize, path: &str, text: &str) {
    out.push('\n');
    for _ in 0..indent {
        out.push_str("  ");
    }
    let _ = write!(out, "- at {}: {text}", quote(path));
}

/// One failure and, for `anyOf`/`oneOf`, the failures of each alternative below it.
fn write_failure(out: &mut String, indent: usize, failure: &Failure) {
    write_line(out, indent, &failure.path, &failure.text);
    for alternative in &failure.causes {
        match alternative.as_slice() {
            [] => {}
            [only] => write_failure(out, indent + 1, only),
            group => {
                write_line(out, indent + 1, &failure.path, "validation failed");
                write_tree(group, &failure.path, indent + 2, out);
            }
        }
    }
}

/// v6's text for one failure.
fn message(kind: &ValidationErrorKind, instance: &serde_json::Value) -> String {
    use ValidationErrorKind as K;
    match kind {
        K::Type { kind } => {
            let want: Vec<String> = match kind {
                TypeKind::Single(t) => vec![t.to_string()],
                TypeKind::Multiple(set) => {
                    let mut names: Vec<String> = set.iter().map(|t| t.to_string()).collect();
                    let order = [
                        "null", "boolean", "number", "integer", "string", "array", "object",
                    ];
                    names.sort_by_key(|n| order.iter().position(|o| o == n));
                    names
                }
            };
            format!("got {}, want {}", json_type(instance), want.join(" or "))
        }
        K::Required { property } => format!(
            "missing property {}",
            quote(property.as_str().unwrap_or_default())
        ),
        K::Minimum { limit } => {
            format!("minimum: got {}, want {}", number(instance), number(limit))
        }
        K::Maximum { limit } => {
            format!("maximum: got {}, want {}", number(instance), number(limit))
        }
        K::ExclusiveMinimum { limit } => {
            format!(
                "exclusiveMinimum: got {}, want {}",
                number(instance),
                number(limit)
            )
        }
        K::ExclusiveMaximum { limit } => {
            format!(
                "exclusiveMaximum: got {}, want {}",
                number(instance),
                number(limit)
            )
        }
        K::MultipleOf { multiple_of } => format!(
            "multipleOf: got {}, want {}",
            number(instance),
            chartkit_yaml::gonum::format_g(*multiple_of, false)
        ),
        K::MinLength { limit } => format!("minLength: got {}, want {limit}", char_count(instance)),
        K::MaxLength { limit } => format!("maxLength: got {}, want {limit}", char_count(instance)),
        K::MinItems { limit } => format!("minItems: got {}, want {limit}", item_count(instance)),
        K::MaxItems { limit } => format!("maxItems: got {}, want {limit}", item_count(instance)),
        K::MinProperties { limit } => {
            format!(
                "minProperties: got {}, want {limit}",
                property_count(instance)
            )
        }
        K::MaxProperties { limit } => {
            format!(
                "maxProperties: got {}, want {limit}",
                property_count(instance)
            )
        }
        K::Enum { options } => match options.as_array() {
            Some(items) if items.iter().all(|i| !i.is_array() && !i.is_object()) => {
                if items.len() == 1 {
                    format!("value must be {}", display(&items[0]))
                } else {
                    let want: Vec<String> = items.iter().map(display).collect();
                    format!("value must be one of {}", want.join(", "))
                }
            }
            _ => "'enum' failed".into(),
        },
        K::Constant { expected_value } => {
            if expected_value.is_array() || expected_value.is_object() {
                "'const' failed".into()
            } else {
                format!("value must be {}", display(expected_value))
            }
        }
        K::Pattern { pattern } => format!(
            "{} does not match pattern {}",
            quote(instance.as_str().unwrap_or_default()),
            quote(pattern)
        ),
        K::AdditionalProperties { unexpected } | K::UnevaluatedProperties { unexpected } => {
            format!(
                "additional properties {} not allowed",
                unexpected
                    .iter()
                    .map(|p| quote(p))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
        K::AdditionalItems { limit } => format!(
            "last {} additionalItem(s) not allowed",
            item_count(instance).saturating_sub(*limit)
        ),
        K::AnyOf { .. } => "'anyOf' failed".into(),
        K::OneOfNotValid { .. } => "'oneOf' failed, none matched".into(),
        K::OneOfMultipleValid { context } => {
            let matched: Vec<usize> = context
                .iter()
                .enumerate()
                .filter(|(_, errors)| errors.is_empty())
                .map(|(i, _)| i)
                .collect();
            match matched.as_slice() {
                [a, b, ..] => format!("'oneOf' failed, subschemas {a}, {b} matched"),
                _ => "'oneOf' failed".into(),
            }
        }
        K::Not { .. } => "'not' failed".into(),
        K::FalseSchema => "false schema".into(),
        K::Contains => "no items match contains schema".into(),
        K::UniqueItems => match duplicate_items(instance) {
            Some((a, b)) => format!("items at {a} and {b} are equal"),
            None => "items are not unique".into(),
        },
        K::Format { format } => format!("{} is not valid {}", display(instance), quote(format)),
        K::PropertyNames { error } => match error.instance().as_ref() {
            serde_json::Value::String(name) => format!("invalid propertyName {}", quote(name)),
            _ => "invalid propertyName".into(),
        },
        K::Custom { message, .. } => message.clone(),
        other => format!("{other:?}"),
    }
}

fn json_type(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// Go's `%v` of a number as v6 prints it (through float64).
fn number(value: &serde_json::Value) -> String {
    match value.as_f64() {
        Some(f) => chartkit_yaml::gonum::format_g(f, false),
        None => value.to_string(),
    }
}

fn char_count(value: &serde_json::Value) -> usize {
    value.as_str().map_or(0, |s| s.chars().count())
}

fn item_count(value: &serde_json::Value) -> usize {
    value.as_array().map_or(0, Vec::len)
}

fn property_count(value: &serde_json::Value) -> usize {
    value.as_object().map_or(0, serde_json::Map::len)
}

fn duplicate_items(value: &serde_json::Value) -> Option<(usize, usize)> {
    let items = value.as_array()?;
    for (i, a) in items.iter().enumerate() {
        for (j, b) in items.iter().enumerate().skip(i + 1) {
            if a == b {
                return Some((i, j));
            }
        }
    }
    None
}

/// v6's `display` for primitive values.
fn display(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => quote(s),
        serde_json::Value::Array(_) | serde_json::Value::Object(_) => "value".into(),
        serde_json::Value::Null => "<nil>".into(),
        serde_json::Value::Number(_) => number(value),
        serde_json::Value::Bool(b) => b.to_string(),
    }
}

/// v6's `quote`: Go's `%q` with double quotes unescaped, in single quotes.
fn quote(text: &str) -> String {
    let mut go = String::with_capacity(text.len() + 2);
    for c in text.chars() {
        // strconv.Quote's escapes for ASCII; Rust's debug escapes, close to Go's, beyond.
        match c {
            '\u{7}' => go.push_str("\\a"),
            '\u{8}' => go.push_str("\\b"),
            '\u{c}' => go.push_str("\\f"),
            '\u{b}' => go.push_str("\\v"),
            '\n' => go.push_str("\\n"),
            '\r' => go.push_str("\\r"),
            '\t' => go.push_str("\\t"),
            '\\' => go.push_str("\\\\"),
            '\'' => go.push_str("\\'"),
            '"' => go.push('"'),
            c if c < ' ' || c == '\u{7f}' => {
                let _ = write!(go, "\\x{:02x}", c as u32);
            }
            c => go.extend(c.escape_debug()),
        }
    }
    format!("'{go}'")
}

fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Int(_) => "int64",
        Value::Float(_) => "float64",
        Value::String(_) | Value::Bytes(_) => "string",
        Value::Seq(_) => "[]interface {}",
        Value::Map(_) => "map[string]interface {}",
    }
}

/// Values as JSON for the validator.
pub fn to_json(value: &Value) -> serde_json::Value {
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Int(i) => serde_json::Value::from(*i),
        // Go's validator sees 1.0 as an integer; JSON numbers from YAML are floats.
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
            serde_json::Value::from(*f as i64)
        }
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(serde_json::Value::Number)
            .unwrap_or(serde_json::Value::Null),
        Value::String(s) => serde_json::Value::String(s.clone()),
        // Helm validates the JSON of the values, where such bytes are U+FFFD.
        Value::Bytes(b) => serde_json::Value::String(chartkit_yaml::go_lossy(b).into_owned()),
        Value::Seq(items) => serde_json::Value::Array(items.iter().map(to_json).collect()),
        Value::Map(map) => {
            serde_json::Value::Object(map.iter().map(|(k, v)| (k.clone(), to_json(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(schema: &str, values: &str) -> Result<(), String> {
        validate_single(
            &chartkit_yaml::parse_values(values).unwrap(),
            schema.as_bytes(),
        )
    }

    #[test]
    fn an_invalid_schema_names_the_bad_keyword() {
        let error = check(
            r#"{"type":"object","properties":{"replicaCount":{"type":5}}}"#,
            "replicaCount: 1\n",
        )
        .unwrap_err();
        assert!(
            error.starts_with("jsonschema: invalid schema at '/properties/replicaCount/type': "),
            "{error}"
        );
    }

    /// The texts below are what `helm template` 4.1.4 prints for the same inputs.
    #[test]
    fn patterns_are_gos_regexps() {
        let schema = |pattern: &str| {
            format!(
                r#"{{"type":"object","properties":{{"x":{{"type":"string","pattern":{pattern:?}}}}}}}"#
            )
        };
        // The issue's pattern: invalid ECMA-262, valid Go.
        assert_eq!(check(&schema(r"^[\w-\.]+$"), "x: ab-c.d\n"), Ok(()));
        assert_eq!(check(&schema("^[[:alpha:]]+$"), "x: ab\n"), Ok(()));
        assert_eq!(check(&schema("^(?i)abc$"), "x: ABC\n"), Ok(()));
        assert_eq!(
            check(&schema(r"^\s$"), "x: \"\\v\"\n"),
            Err("- at '/x': '\\v' does not match pattern '^\\\\s$'\n".into())
        );
        assert_eq!(
            check(&schema("^a{1001}$"), "x: a\n"),
            Err("jsonschema: invalid schema at '/properties/x/pattern': '^a{1001}$' is not valid regex: error parsing regexp: invalid repeat count: `{1001}`".into())
        );
        // Patterns in nested subschemas, and a property named "pattern".
        let nested = r#"{"properties":{"pattern":{"type":"string"},"l":{"items":{"pattern":"^[\\w-\\.]+$"}}}}"#;
        assert_eq!(
            check(nested, "pattern: x\nl: [a-b, c/d]\n"),
            Err("- at '/l/1': 'c/d' does not match pattern '^[\\\\w-\\\\.]+$'\n".into())
        );
    }

    #[test]
    fn messages_match_helm() {
        let schema = r#"{"type":"object","required":["name","employmentInfo"],
            "properties":{"age":{"type":"integer","minimum":0},"name":{"type":"string"},
            "kind":{"enum":["a","b"]},"tags":{"type":"array","maxItems":1}}}"#;
        assert_eq!(
            check(schema, "name: x\nage: -5\n").unwrap_err(),
            "- at '': missing property 'employmentInfo'\n- at '/age': minimum: got -5, want 0\n"
        );
        assert_eq!(
            check(schema, "age: x\nkind: c\ntags: [1, 2]\n").unwrap_err(),
            "- at '': missing properties 'name', 'employmentInfo'\n- at '/age': got string, want integer\n- at '/kind': value must be one of 'a', 'b'\n- at '/tags': maxItems: got 2, want 1\n"
        );
        assert!(check(schema, "name: x\nemploymentInfo: {}\nage: 3\n").is_ok());
    }

    /// A value of the wrong type gets only the type failure from its schema object, in
    /// alternatives too (helm 4.1.4's output for the same chart).
    #[test]
    fn a_wrong_type_hides_the_other_keywords_of_its_schema() {
        let schema = r#"{"properties":{"policy":{"type":"string","enum":["a","b"]},
            "m":{"anyOf":[{"type":"string","enum":["x"]},{"type":"integer","maximum":1}]}}}"#;
        assert_eq!(
            check(schema, "policy: null\nm: 5.5\n").unwrap_err(),
            "- at '/m': 'anyOf' failed\n  - at '/m': got number, want string\n  - at '/m': got number, want integer\n- at '/policy': got null, want string\n"
        );
        assert_eq!(
            check(schema, "policy: c\n").unwrap_err(),
            "- at '/policy': value must be one of 'a', 'b'\n"
        );
    }
}
