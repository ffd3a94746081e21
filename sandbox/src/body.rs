//! Request bodies: JSON, YAML read as `sigs.k8s.io/yaml` reads it (go-yaml, then
//! JSON, integers kept as integers), or Kubernetes' protobuf (see [`crate::proto`]),
//! all read into the JSON a JSON client would have sent.

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

/// The media types the API server reads built-in objects in, in its order.
const BUILTIN_MEDIA_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    crate::proto::MEDIA_TYPE,
];
/// Custom resources have no protobuf form.
const CUSTOM_MEDIA_TYPES: &[&str] = &["application/json", "application/yaml"];

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

/// A request body in the given Content-Type (JSON, YAML or protobuf), where nothing is
/// known of the endpoint; see [`parse_object_for`].
pub fn parse_object(content_type: &str, body: &[u8]) -> Result<Value, crate::status::ApiError> {
    parse_body(None, content_type, body)
}

/// A request body in the given Content-Type, for an endpoint that expects `expect`.
pub fn parse_object_for(
    expect: &Expect,
    content_type: &str,
    body: &[u8],
) -> Result<Value, crate::status::ApiError> {
    parse_body(Some(expect), content_type, body)
}

fn parse_body(
    expect: Option<&Expect>,
    content_type: &str,
    body: &[u8],
) -> Result<Value, crate::status::ApiError> {
    use crate::status::ApiError;
    let media = content_type.split(';').next().unwrap_or("").trim();
    match media {
        "" | "application/json" | "*/*" => serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!(
                "error decoding the request body: {}",
                go_json_error(&e)
            ))
        }),
        "application/yaml" | "application/x-yaml" | "text/yaml" => parse_yaml_or_json(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}"))),
        crate::proto::MEDIA_TYPE if expect.is_none_or(|e| e.protobuf) => {
            crate::proto::decode_object(body, expect.map(|e| &e.gvk))
                .map_err(|f| ApiError::bad_request(protobuf_error(expect, &f, body)))
        }
        _ => Err(ApiError::unsupported_body_type(
            if expect.is_some_and(|e| !e.protobuf) {
                CUSTOM_MEDIA_TYPES
            } else {
                BUILTIN_MEDIA_TYPES
            },
        )),
    }
}

/// How the API server words a body it could not decode (`transformDecodeError`).
fn protobuf_error(expect: Option<&Expect>, f: &crate::proto::Failure, body: &[u8]) -> String {
    let Some(expect) = expect else {
        return format!("error decoding the request body: {}", f.message);
    };
    match &f.gvk {
        Some(gvk) if !gvk.kind.is_empty() => format!(
            "{} in version {:?} cannot be handled as a {}: {}",
            gvk.kind, gvk.version, expect.gvk.kind, f.message
        ),
        _ => {
            let summary = if body.is_empty() {
                "<empty>".to_string()
            } else if body.len() > 30 {
                format!("{} ...", hex::encode(&body[..30]))
            } else {
                hex::encode(body)
            };
            format!(
                "the object provided is unrecognized (must be of type {}): {} ({summary})",
                expect.gvk.kind, f.message
            )
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
