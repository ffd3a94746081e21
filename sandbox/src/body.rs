//! Request bodies: JSON, or YAML read as `sigs.k8s.io/yaml` reads it (go-yaml, then
//! JSON, integers kept as integers).

use chartkit_yaml::{Node, NodeKind};
use serde_json::{Map, Value};

/// JSON when the text is JSON, otherwise YAML.
pub fn parse_yaml_or_json(body: &[u8]) -> Result<Value, String> {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return Ok(v);
    }
    let text = std::str::from_utf8(body).map_err(|_| "the body is not UTF-8".to_string())?;
    let node = chartkit_yaml::parse_node(text).map_err(|e| e.to_string())?;
    node_to_json(&node)
}

/// What an endpoint reads its body as: the kind it fills in where a protobuf envelope
/// leaves it out and names in errors, and whether it takes protobuf at all.
#[derive(Debug, Clone, PartialEq)]
pub struct Expect {
    pub gvk: crate::proto::Gvk,
    pub protobuf: bool,
}

impl Expect {
    /// The object a write to this target carries: the resource's own kind, or the
    /// request type of a subresource.
    pub fn for_target(t: &crate::cluster::Target) -> Expect {
        use crate::proto::Gvk;
        let def = &t.def;
        let own = Gvk::new(&def.group, &t.version, &def.kind);
        let (gvk, protobuf) = match t.subresource.as_str() {
            // The scale subresource is served with the built-in Scale type, custom
            // resources' included.
            "scale" => (Gvk::new("autoscaling", "v1", "Scale"), true),
            "eviction" => (Gvk::new("policy", "v1", "Eviction"), true),
            "token" => (
                Gvk::new("authentication.k8s.io", "v1", "TokenRequest"),
                true,
            ),
            "binding" => (Gvk::new("", "v1", "Binding"), true),
            _ => (own, def.custom.is_none()),
        };
        Expect { gvk, protobuf }
    }

    /// DeleteOptions, which every resource takes in every encoding.
    pub fn delete_options() -> Expect {
        Expect {
            gvk: crate::proto::Gvk::new("meta.k8s.io", "v1", "DeleteOptions"),
            protobuf: true,
        }
    }
}

/// A request body for an endpoint that expects `expect` (JSON, YAML, or protobuf where the
/// endpoint reads it).
pub fn parse_object_for(
    expect: &Expect,
    content_type: &str,
    body: &[u8],
) -> Result<Value, crate::status::ApiError> {
    parse_body(
        &expect.gvk.kind,
        Some(expect),
        !expect.protobuf,
        content_type,
        body,
    )
}

/// A request body in the given Content-Type (JSON or YAML), decoded for an object of
/// `kind`; a body that does not decode fails as the API server's decoder fails it.
pub fn parse_object(
    content_type: &str,
    body: &[u8],
    kind: &str,
    custom: bool,
) -> Result<Value, crate::status::ApiError> {
    parse_body(kind, None, custom, content_type, body)
}

fn parse_body(
    kind: &str,
    expect: Option<&Expect>,
    custom: bool,
    content_type: &str,
    body: &[u8],
) -> Result<Value, crate::status::ApiError> {
    let media = content_type.split(';').next().unwrap_or("").trim();
    let unrecognized = |why: String| {
        crate::status::ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {kind}): {why} ({})",
            summarize(body)
        ))
    };
    match media {
        "" | "application/json" | "*/*" => {
            if let Some(e) = crate::gojson::syntax_error(body) {
                return Err(unrecognized(format!(
                    "couldn't get version/kind; json parse error: {e}"
                )));
            }
            match serde_json::from_slice::<Value>(body) {
                Ok(Value::Null) => Ok(Value::Object(Map::new())),
                Ok(v @ Value::Object(_)) => Ok(v),
                Ok(other) => Err(unrecognized(format!(
                    "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}",
                    go_json_type(&other)
                ))),
                // Syntax the scanner accepts but serde does not (numbers out of range).
                Err(e) => Err(unrecognized(format!(
                    "couldn't get version/kind; json parse error: {}",
                    go_json_error(&e)
                ))),
            }
        }
        "application/yaml" | "application/x-yaml" | "text/yaml" => match parse_yaml_or_json(body) {
            Ok(Value::Null) => Ok(Value::Object(Map::new())),
            Ok(v @ Value::Object(_)) => Ok(v),
            Ok(other) => Err(unrecognized(format!(
                "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}",
                go_json_type(&other)
            ))),
            Err(e) => Err(unrecognized(format!("error converting YAML to JSON: {e}"))),
        },
        crate::proto::MEDIA_TYPE if !custom => {
            crate::proto::decode_object(body, expect.map(|e| &e.gvk))
                .map_err(|f| crate::status::ApiError::bad_request(protobuf_error(kind, &f, body)))
        }
        _ => Err(crate::status::ApiError::unsupported_body_type(custom)),
    }
}

/// How the API server words a protobuf body it could not decode (`transformDecodeError`).
fn protobuf_error(kind: &str, f: &crate::proto::Failure, body: &[u8]) -> String {
    match &f.gvk {
        Some(gvk) if !gvk.kind.is_empty() => format!(
            "{} in version {:?} cannot be handled as a {kind}: {}",
            gvk.kind, gvk.version, f.message
        ),
        _ => format!(
            "the object provided is unrecognized (must be of type {kind}): {} ({})",
            f.message,
            summarize(body)
        ),
    }
}

/// How the API server's decoder refuses a body whose kind or apiVersion is not the
/// resource's: a kind the scheme does not know, one it cannot convert, or a known kind in
/// another API version. `None` when the body's type is the resource's (or unset).
pub fn type_mismatch(
    registry: &crate::resources::Registry,
    t: &crate::cluster::Target,
    body: &Map<String, Value>,
) -> Option<crate::status::ApiError> {
    let want_kind = t.def.kind.as_str();
    let want_api = t.def.api_version(&t.version);
    let field = |k: &str| {
        body.get(k)
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
    };
    let api = field("apiVersion").map_or(want_api.clone(), String::from);
    let kind = field("kind").unwrap_or(want_kind);
    if api == want_api && kind == want_kind {
        return None;
    }
    let bad = crate::status::ApiError::bad_request;
    if t.def.custom.is_some() {
        // Custom resources decode as unstructured objects, whatever their kind says.
        return (api != want_api).then(|| {
            bad(format!(
                "the API version in the data ({api}) does not match the expected API version ({want_api})"
            ))
        });
    }
    let (group, version) = crate::resources::split_api_version(&api);
    let known_version = |d: &crate::resources::ResourceDef| {
        d.serves(version) || {
            // Versions the scheme still holds types for though nothing serves them.
            let rest = version.strip_prefix('v').unwrap_or("");
            let digits = rest.trim_start_matches(|c: char| c.is_ascii_digit());
            digits != rest
                && ["alpha", "beta"].iter().any(|p| {
                    digits
                        .strip_prefix(p)
                        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                })
        }
    };
    let registered = registry
        .by_kind(group, kind)
        .is_some_and(|d| d.custom.is_none() && known_version(&d));
    if !registered {
        return Some(bad(format!(
            "{kind} in version {version:?} cannot be handled as a {want_kind}: no kind {kind:?} is registered for version {api:?} in scheme \"pkg/api/legacyscheme/scheme.go:30\""
        )));
    }
    if kind != want_kind {
        let internal = if t.def.group.is_empty() {
            "core"
        } else {
            t.def.group.split('.').next().unwrap_or("")
        };
        return Some(bad(format!(
            "{kind} in version {version:?} cannot be handled as a {want_kind}: converting ({version}.{kind}) to ({internal}.{want_kind}): unknown conversion"
        )));
    }
    Some(bad(format!(
        "the API version in the data ({api}) does not match the expected API version ({want_api})"
    )))
}

/// The JSON type names Go's decoder uses in its errors.
pub fn json_type_name(v: &Value) -> &'static str {
    go_json_type(v)
}

fn go_json_type(v: &Value) -> &'static str {
    match v {
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Object(_) => "object",
        Value::Null => "null",
    }
}

/// The start of a body as the API server quotes it in decode errors: as text when it
/// looks like a JSON object, in hex otherwise.
pub fn summarize(body: &[u8]) -> String {
    const MAX: usize = 30;
    match body.first() {
        None => "<empty>".into(),
        Some(b'{') => {
            let shown = String::from_utf8_lossy(&body[..body.len().min(MAX)]).into_owned();
            if body.len() > MAX {
                format!("{shown} ...")
            } else {
                shown
            }
        }
        Some(_) => {
            let shown = hex::encode(&body[..body.len().min(MAX)]);
            if body.len() > MAX {
                format!("{shown} ...")
            } else {
                shown
            }
        }
    }
}

fn node_to_json(node: &Node) -> Result<Value, String> {
    Ok(match &node.kind {
        NodeKind::Null => Value::Null,
        NodeKind::Bool(b) => Value::Bool(*b),
        NodeKind::Int(i) => Value::from(*i),
        NodeKind::Uint(u) => Value::from(*u),
        NodeKind::Float(f) => serde_json::Number::from_f64(*f)
            .map(Value::Number)
            .ok_or_else(|| format!("line {}: the number {f} has no JSON form", node.line))?,
        NodeKind::Str(s) => Value::String(s.clone()),
        NodeKind::Seq(items) => {
            Value::Array(items.iter().map(node_to_json).collect::<Result<_, _>>()?)
        }
        NodeKind::Map(pairs) => {
            let mut m = Map::new();
            for (k, v) in pairs {
                let key = match &k.kind {
                    NodeKind::Str(s) => s.clone(),
                    NodeKind::Null => "null".to_string(),
                    NodeKind::Bool(b) => b.to_string(),
                    NodeKind::Int(i) => i.to_string(),
                    NodeKind::Uint(u) => u.to_string(),
                    NodeKind::Float(f) => f.to_string(),
                    _ => return Err(format!("line {}: a map key must be a scalar", k.line)),
                };
                m.insert(key, node_to_json(v)?);
            }
            Value::Object(m)
        }
    })
}

/// serde_json's error in the words Go's encoding/json would use where they differ little
/// (the position is kept, since it helps).
pub fn go_json_error(e: &serde_json::Error) -> String {
    format!("{e}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bad_bodies_fail_with_the_decoders_words() {
        let e = parse_object("application/json", b"{oops", "ConfigMap", false).unwrap_err();
        assert_eq!(e.code, 400);
        assert_eq!(
            e.message,
            "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character 'o' looking for beginning of object key string ({oops)"
        );
        let e = parse_object("application/json", b"", "Pod", false).unwrap_err();
        assert!(
            e.message
                .ends_with("unexpected end of JSON input (<empty>)"),
            "{}",
            e.message
        );
        let e = parse_object("application/json", b"[1]", "Pod", false).unwrap_err();
        assert!(e.message.contains("cannot unmarshal array into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\""), "{}", e.message);
        assert!(e.message.ends_with("(5b315d)"), "{}", e.message);
        assert_eq!(
            parse_object("text/plain", b"{}", "Pod", false)
                .unwrap_err()
                .code,
            415
        );
    }

    #[test]
    fn yaml_keeps_integers_and_reads_yaml_1_1_booleans() {
        let v = parse_yaml_or_json(b"a: 1\nb: yes\nc: 1.5\nd: [x]\n").unwrap();
        assert_eq!(v, json!({"a": 1, "b": true, "c": 1.5, "d": ["x"]}));
    }

    fn target(plural: &str, custom: bool, subresource: &str) -> crate::cluster::Target {
        let mut def = (*crate::resources::builtins()
            .into_iter()
            .find(|d| d.plural == plural)
            .expect("a built-in resource"))
        .clone();
        if custom {
            def.group = "example.com".into();
            def.kind = "Widget".into();
            def.custom = Some(std::sync::Arc::default());
        }
        crate::cluster::Target {
            def: std::sync::Arc::new(def),
            version: "v1".into(),
            namespace: "default".into(),
            name: String::new(),
            subresource: subresource.into(),
        }
    }

    /// `k8s\0` + an Unknown naming apiVersion and kind, with an empty object.
    fn protobuf(api_version: &str, kind: &str) -> Vec<u8> {
        let mut type_meta = vec![0x0a, api_version.len() as u8];
        type_meta.extend(api_version.as_bytes());
        type_meta.extend([0x12, kind.len() as u8]);
        type_meta.extend(kind.as_bytes());
        let mut out = b"k8s\0\x0a".to_vec();
        out.push(type_meta.len() as u8);
        out.extend(type_meta);
        out
    }

    #[test]
    fn protobuf_bodies_read_for_built_ins_and_are_refused_for_custom_resources() {
        let cm = Expect::for_target(&target("configmaps", false, ""));
        let v =
            parse_object_for(&cm, crate::proto::MEDIA_TYPE, &protobuf("v1", "ConfigMap")).unwrap();
        assert_eq!(
            v,
            json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {}})
        );

        let widgets = Expect::for_target(&target("configmaps", true, ""));
        let err = parse_object_for(
            &widgets,
            "application/vnd.kubernetes.protobuf; charset=x",
            b"k8s\0",
        )
        .unwrap_err();
        assert_eq!((err.code, err.reason), (415, "UnsupportedMediaType"));
        assert_eq!(
            err.message,
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"
        );
        let err = parse_object_for(&cm, "text/plain", b"x").unwrap_err();
        assert_eq!(
            err.message,
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        );

        // A custom resource's scale subresource is the built-in Scale, protobuf included.
        let scale = Expect::for_target(&target("configmaps", true, "scale"));
        let v = parse_object_for(
            &scale,
            crate::proto::MEDIA_TYPE,
            &protobuf("autoscaling/v1", "Scale"),
        )
        .unwrap();
        assert_eq!(v["kind"], "Scale");
    }

    #[test]
    fn protobuf_errors_are_worded_as_the_api_server_words_them() {
        let cm = Expect::for_target(&target("configmaps", false, ""));
        let err = parse_object_for(&cm, crate::proto::MEDIA_TYPE, &protobuf("v1", "Secrett"))
            .unwrap_err();
        assert_eq!((err.code, err.reason), (400, "BadRequest"));
        assert_eq!(
            err.message,
            "Secrett in version \"v1\" cannot be handled as a ConfigMap: no kind \"Secrett\" is registered for version \"v1\" in scheme \"pkg/api/legacyscheme/scheme.go:30\""
        );
        let err = parse_object_for(&cm, crate::proto::MEDIA_TYPE, &[0x6b; 40]).unwrap_err();
        assert_eq!(
            err.message,
            format!(
                "the object provided is unrecognized (must be of type ConfigMap): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] ({} ...)",
                "6b".repeat(30)
            )
        );
        // The endpoint's kind fills an envelope that names none.
        let v = parse_object_for(&cm, crate::proto::MEDIA_TYPE, &protobuf("", "")).unwrap();
        assert_eq!(
            (v["kind"].as_str(), v["apiVersion"].as_str()),
            (Some("ConfigMap"), Some("v1"))
        );
    }
}

/// The paths of keys a JSON body repeats within one object (`spec.replicas`,
/// `spec.containers[0].name`), in the order their repetitions appear: Go's decoder keeps
/// the last value as serde_json does, and the API server reports each repetition as a
/// strict decoding error (`duplicate field "spec.replicas"`). Empty when the body is not
/// JSON.
pub fn duplicate_fields(body: &[u8]) -> Vec<String> {
    let mut scan = DuplicateScan {
        bytes: body,
        pos: 0,
        path: String::new(),
        found: Vec::new(),
    };
    scan.skip_space();
    if scan.value(0).is_none() {
        return Vec::new();
    }
    scan.found
}

struct DuplicateScan<'a> {
    bytes: &'a [u8],
    pos: usize,
    path: String,
    found: Vec<String>,
}

impl DuplicateScan<'_> {
    fn skip_space(&mut self) {
        while self
            .bytes
            .get(self.pos)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.pos += 1;
        }
    }

    /// Reads one value at `pos`; `None` when the text is not JSON (or nests beyond what
    /// the parser would take anyway).
    fn value(&mut self, depth: usize) -> Option<()> {
        if depth > 10_000 {
            return None;
        }
        match *self.bytes.get(self.pos)? {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => self.string().map(drop),
            _ => {
                let start = self.pos;
                while self.bytes.get(self.pos).is_some_and(|b| {
                    !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    self.pos += 1;
                }
                (self.pos > start).then_some(())
            }
        }
    }

    fn object(&mut self, depth: usize) -> Option<()> {
        self.pos += 1;
        let mut seen = std::collections::HashSet::new();
        let base = self.path.len();
        loop {
            self.skip_space();
            match *self.bytes.get(self.pos)? {
                b'}' => {
                    self.pos += 1;
                    return Some(());
                }
                b',' => {
                    self.pos += 1;
                    continue;
                }
                b'"' => {}
                _ => return None,
            }
            let key = self.string()?;
            if base != 0 {
                self.path.push('.');
            }
            self.path.push_str(&key);
            if !seen.insert(key) {
                self.found.push(self.path.clone());
            }
            self.skip_space();
            if self.bytes.get(self.pos) != Some(&b':') {
                return None;
            }
            self.pos += 1;
            self.skip_space();
            let read = self.value(depth + 1);
            self.path.truncate(base);
            read?;
        }
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        self.pos += 1;
        let base = self.path.len();
        let mut index = 0;
        loop {
            self.skip_space();
            match *self.bytes.get(self.pos)? {
                b']' => {
                    self.pos += 1;
                    return Some(());
                }
                b',' => {
                    self.pos += 1;
                    continue;
                }
                _ => {}
            }
            self.path.push_str(&format!("[{index}]"));
            let read = self.value(depth + 1);
            self.path.truncate(base);
            read?;
            index += 1;
        }
    }

    /// A string's decoded text (escapes resolved, so `"a"` and `"\u0061"` are one key).
    fn string(&mut self) -> Option<String> {
        let start = self.pos;
        self.pos += 1;
        while let Some(&b) = self.bytes.get(self.pos) {
            match b {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return serde_json::from_slice(&self.bytes[start..self.pos]).ok();
                }
                _ => self.pos += 1,
            }
        }
        None
    }
}

#[cfg(test)]
mod duplicate_tests {
    use super::duplicate_fields;

    #[test]
    fn repeated_keys_are_found_with_their_paths() {
        let body = br#"{"kind":"Deployment","spec":{"replicas":1,"replicas":2,
            "template":{"spec":{"containers":[{"name":"a","image":"x","name":"b"}]}}},
            "kind":"Deployment","metadata":{"labels":{"a":"1","\u0061":"2"}}}"#;
        assert_eq!(
            duplicate_fields(body),
            [
                "spec.replicas",
                "spec.template.spec.containers[0].name",
                "kind",
                "metadata.labels.a"
            ]
        );
        assert!(duplicate_fields(br#"{"a":[{"b":1},{"b":2}],"c":{"b":3}}"#).is_empty());
        assert!(duplicate_fields(b"a: 1\na: 2\n").is_empty());
    }
}
