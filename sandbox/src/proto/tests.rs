//! Bodies encoded as Go's generated code encodes them (every non-pointer scalar written,
//! zero or not), decoded to the JSON encoding/json writes for the same struct.

use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

use super::*;

/// A protobuf message under construction.
#[derive(Default, Clone)]
struct Enc(Vec<u8>);

impl Enc {
    fn new() -> Enc {
        Enc::default()
    }

    fn key(mut self, field: u32, wire: u8) -> Enc {
        self.put_varint(u64::from(field) << 3 | u64::from(wire));
        self
    }

    fn put_varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    fn varint(self, field: u32, v: u64) -> Enc {
        let mut e = self.key(field, 0);
        e.put_varint(v);
        e
    }

    fn int(self, field: u32, v: i64) -> Enc {
        self.varint(field, v as u64)
    }

    fn bytes(self, field: u32, b: &[u8]) -> Enc {
        let mut e = self.key(field, 2);
        e.put_varint(b.len() as u64);
        e.0.extend_from_slice(b);
        e
    }

    fn str(self, field: u32, s: &str) -> Enc {
        self.bytes(field, s.as_bytes())
    }

    fn msg(self, field: u32, m: Enc) -> Enc {
        self.bytes(field, &m.0)
    }

    fn double(self, field: u32, f: f64) -> Enc {
        let mut e = self.key(field, 1);
        e.0.extend_from_slice(&f.to_bits().to_le_bytes());
        e
    }

    /// A map entry `key → value` (value already encoded as field 2).
    fn entry(self, field: u32, key: &str, value: Enc) -> Enc {
        let mut entry = Enc::new().str(1, key);
        entry.0.extend_from_slice(&value.0);
        self.msg(field, entry)
    }

    fn str_entry(self, field: u32, key: &str, value: &str) -> Enc {
        self.entry(field, key, Enc::new().str(2, value))
    }
}

fn envelope(api_version: &str, kind: &str, raw: &Enc) -> Vec<u8> {
    let mut out = b"k8s\0".to_vec();
    let unknown = Enc::new()
        .msg(1, Enc::new().str(1, api_version).str(2, kind))
        .bytes(2, &raw.0)
        .str(3, "")
        .str(4, "");
    out.extend_from_slice(&unknown.0);
    out
}

/// ObjectMeta as Go writes it: every string, the generation, an empty creationTimestamp.
fn object_meta(name: &str, namespace: &str) -> Enc {
    Enc::new()
        .str(1, name)
        .str(2, "")
        .str(3, namespace)
        .str(4, "")
        .str(5, "")
        .str(6, "")
        .varint(7, 0)
        .msg(8, Enc::new())
}

fn decode(body: &[u8]) -> Value {
    decode_object(body, None).unwrap_or_else(|f| panic!("{f:?}"))
}

#[test]
fn a_secret_keeps_its_data_as_base64_and_drops_zero_values() {
    let secret = Enc::new()
        .msg(1, object_meta("s", "default").str_entry(11, "app", "x"))
        .entry(2, "k", Enc::new().bytes(2, b"v"))
        .entry(2, "empty", Enc::new())
        .str(3, "Opaque");
    let v = decode(&envelope("v1", "Secret", &secret));
    assert_eq!(
        v,
        json!({
            "kind": "Secret",
            "apiVersion": "v1",
            "metadata": {"name": "s", "namespace": "default", "labels": {"app": "x"}},
            "data": {"empty": "", "k": "dg=="},
            "type": "Opaque",
        })
    );
    // kind and apiVersion come first, as a JSON client writes them.
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys[..2], ["kind", "apiVersion"]);
}

#[test]
fn a_deployment_reads_as_kubectl_would_send_it_in_json() {
    let labels = |e: Enc| e.str_entry(11, "app", "web");
    let container = Enc::new()
        .str(1, "nginx")
        .str(2, "nginx:1.27")
        .str(5, "")
        .msg(8, Enc::new())
        .str(13, "")
        .str(14, "")
        .varint(16, 0)
        .varint(17, 0)
        .varint(18, 0)
        .str(20, "");
    let pod_spec = Enc::new()
        .msg(2, container)
        .str(3, "")
        .str(6, "")
        .str(8, "")
        .str(9, "")
        .str(10, "")
        .varint(11, 0)
        .varint(12, 0)
        .varint(13, 0)
        .str(16, "")
        .str(17, "")
        .str(19, "")
        .str(24, "");
    let spec = Enc::new()
        .varint(1, 2)
        .msg(2, Enc::new().str_entry(1, "app", "web"))
        .msg(
            3,
            Enc::new()
                .msg(1, labels(object_meta("", "")))
                .msg(2, pod_spec),
        )
        .msg(4, Enc::new().str(1, ""))
        .varint(5, 0)
        .varint(7, 0);
    let deployment = Enc::new()
        .msg(1, labels(object_meta("web", "")))
        .msg(2, spec)
        .msg(3, Enc::new().varint(1, 0).varint(2, 0));
    let v = decode(&envelope("apps/v1", "Deployment", &deployment));
    assert_eq!(
        v,
        json!({
            "kind": "Deployment",
            "apiVersion": "apps/v1",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27", "resources": {}}]},
                },
                "strategy": {},
            },
            "status": {},
        })
    );
}

#[test]
fn pointers_keep_zero_values_and_absent_non_omitempty_fields_are_null() {
    // replicas: 0 is a set pointer; containers (no omitempty) absent is null.
    let spec = Enc::new().varint(1, 0);
    let deployment = Enc::new().msg(2, spec);
    let v = decode(&envelope("apps/v1", "Deployment", &deployment));
    assert_eq!(v["spec"]["replicas"], 0);
    assert_eq!(v["spec"]["template"]["spec"]["containers"], Value::Null);
    assert!(v["spec"].get("paused").is_none());
    // A Container's name has no omitempty: "" stays.
    let pod = Enc::new().msg(2, Enc::new().msg(2, Enc::new().str(1, "")));
    let v = decode(&envelope("v1", "Pod", &pod));
    assert_eq!(
        v["spec"]["containers"],
        json!([{"name": "", "resources": {}}])
    );
}

#[test]
fn times_int_or_strings_and_quantities_take_their_json_forms() {
    let meta = Enc::new()
        .str(1, "p")
        .msg(8, Enc::new().int(1, 1_700_000_000).int(2, 999))
        .msg(9, Enc::new());
    let ports = |e: Enc| {
        e.msg(
            1,
            Enc::new()
                .str(1, "a")
                .varint(3, 80)
                .msg(4, Enc::new().varint(1, 0).varint(2, 8080)),
        )
        .msg(
            1,
            Enc::new()
                .str(1, "b")
                .varint(3, 81)
                .msg(4, Enc::new().varint(1, 1).str(3, "http")),
        )
        .msg(1, Enc::new().str(1, "c").varint(3, 82))
    };
    let service = Enc::new().msg(1, meta).msg(2, ports(Enc::new()));
    let v = decode(&envelope("v1", "Service", &service));
    assert_eq!(v["metadata"]["creationTimestamp"], "2023-11-14T22:13:20Z");
    // A set pointer to a zero Time is null, not left out.
    assert_eq!(v["metadata"]["deletionTimestamp"], Value::Null);
    assert!(
        v["metadata"]
            .as_object()
            .unwrap()
            .contains_key("deletionTimestamp")
    );
    let ports = &v["spec"]["ports"];
    assert_eq!(ports[0]["targetPort"], 8080);
    assert_eq!(ports[1]["targetPort"], "http");
    // A non-pointer IntOrString is always written.
    assert_eq!(ports[2]["targetPort"], 0);

    let limits = Enc::new().entry(1, "cpu", Enc::new().msg(2, Enc::new().str(1, "100m")));
    let container = Enc::new().str(1, "c").msg(8, limits);
    let pod = Enc::new().msg(2, Enc::new().msg(2, container));
    let v = decode(&envelope("v1", "Pod", &pod));
    assert_eq!(
        v["spec"]["containers"][0]["resources"],
        json!({"limits": {"cpu": "100m"}})
    );

    let lease = Enc::new().msg(
        2,
        Enc::new().msg(3, Enc::new().int(1, 1_700_000_000).int(2, 123_456_789)),
    );
    let v = decode(&envelope("coordination.k8s.io/v1", "Lease", &lease));
    assert_eq!(v["spec"]["acquireTime"], "2023-11-14T22:13:20.123456Z");
}

#[test]
fn raw_json_fields_are_parsed() {
    let revision = Enc::new()
        .msg(1, object_meta("r", "default"))
        .msg(2, Enc::new().bytes(1, br#"{"spec":{"a":[1,2]}}"#))
        .varint(3, 4);
    let v = decode(&envelope("apps/v1", "ControllerRevision", &revision));
    assert_eq!(v["data"], json!({"spec": {"a": [1, 2]}}));
    assert_eq!(v["revision"], 4);

    let managed = Enc::new()
        .str(1, "kubectl")
        .str(2, "Update")
        .str(3, "v1")
        .str(6, "FieldsV1")
        .msg(7, Enc::new().bytes(1, br#"{"f:data":{}}"#))
        .str(8, "");
    let cm = Enc::new().msg(1, object_meta("c", "default").msg(17, managed));
    let v = decode(&envelope("v1", "ConfigMap", &cm));
    assert_eq!(
        v["metadata"]["managedFields"],
        json!([{"manager": "kubectl", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {}}}])
    );

    let bad = Enc::new().msg(2, Enc::new().bytes(1, b"\x01\x02"));
    let err = decode_object(&envelope("apps/v1", "ControllerRevision", &bad), None).unwrap_err();
    assert!(
        err.message.contains("RawExtension does not hold JSON"),
        "{err:?}"
    );
}

#[test]
fn a_custom_resource_definition_keeps_its_schema_unions() {
    let string_schema = Enc::new().str(5, "string");
    let schema = Enc::new()
        .str(5, "object")
        .entry(
            29,
            "name",
            Enc::new().msg(
                2,
                string_schema.clone().msg(8, Enc::new().bytes(1, b"\"x\"")),
            ),
        )
        .entry(
            29,
            "list",
            Enc::new().msg(
                2,
                Enc::new()
                    .str(5, "array")
                    .msg(24, Enc::new().msg(1, string_schema.clone())),
            ),
        )
        .entry(
            29,
            "count",
            Enc::new().msg(
                2,
                Enc::new().str(5, "integer").double(9, 10.0).double(11, 0.5),
            ),
        )
        .msg(30, Enc::new().varint(1, 1).msg(2, string_schema))
        .msg(33, Enc::new().varint(1, 0))
        .varint(38, 1)
        .entry(32, "a", Enc::new().msg(2, Enc::new().str(2, "b")));
    let version = Enc::new()
        .str(1, "v1")
        .varint(2, 1)
        .varint(3, 1)
        .msg(4, Enc::new().msg(1, schema));
    let spec = Enc::new()
        .str(1, "example.com")
        .msg(3, Enc::new().str(1, "widgets").str(4, "Widget"))
        .str(4, "Namespaced")
        .msg(7, version);
    let crd = Enc::new()
        .msg(1, object_meta("widgets.example.com", ""))
        .msg(2, spec);
    let v = decode(&envelope(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        &crd,
    ));
    let schema = &v["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    assert_eq!(
        *schema,
        json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer", "maximum": 10, "minimum": 0.5},
                "list": {"type": "array", "items": {"type": "string"}},
                "name": {"type": "string", "default": "x"},
            },
            "additionalProperties": {"type": "string"},
            "dependencies": {"a": ["b"]},
            "additionalItems": false,
            "x-kubernetes-preserve-unknown-fields": true,
        })
    );
    assert_eq!(
        v["spec"]["names"],
        json!({"plural": "widgets", "kind": "Widget"})
    );
    assert_eq!(
        v["status"],
        json!({"conditions": null, "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": null})
    );
}

#[test]
fn repeated_numbers_read_packed_or_not() {
    let unpacked = Enc::new().varint(3, 1).varint(3, 2);
    let packed = Enc::new().bytes(3, &[3, 0x96, 0x01]);
    let decoder = decode::Decoder::new(Table::get());
    let id = Table::get()
        .message("k8s.io.api.batch.v1.PodFailurePolicyOnExitCodesRequirement")
        .unwrap();
    let a = decoder.object(id, &unpacked.0).unwrap();
    let b = decoder.object(id, &packed.0).unwrap();
    assert_eq!(a["values"], json!([1, 2]));
    assert_eq!(b["values"], json!([3, 150]));
}

#[test]
fn review_requests_and_delete_options_decode() {
    let attrs = Enc::new()
        .str(1, "default")
        .str(2, "create")
        .str(3, "")
        .str(4, "")
        .str(5, "pods")
        .str(6, "")
        .str(7, "");
    let review = Enc::new()
        .msg(1, object_meta("", ""))
        .msg(2, Enc::new().msg(1, attrs));
    let v = decode(&envelope(
        "authorization.k8s.io/v1",
        "SelfSubjectAccessReview",
        &review,
    ));
    assert_eq!(
        v,
        json!({
            "kind": "SelfSubjectAccessReview",
            "apiVersion": "authorization.k8s.io/v1",
            "metadata": {},
            "spec": {"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "pods"}},
            "status": {"allowed": false},
        })
    );

    // A group's own DeleteOptions is meta/v1's.
    let opts = Enc::new().int(1, 0).str(4, "Foreground");
    let v = decode(&envelope("apps/v1", "DeleteOptions", &opts));
    assert_eq!(
        v,
        json!({"kind": "DeleteOptions", "apiVersion": "apps/v1", "gracePeriodSeconds": 0, "propagationPolicy": "Foreground"})
    );
}

#[test]
fn the_endpoint_fills_a_kind_or_version_the_envelope_leaves_out() {
    let cm = Enc::new().msg(1, object_meta("c", "default"));
    let defaults = Gvk::new("", "v1", "ConfigMap");
    let v = decode_object(&envelope("", "", &cm), Some(&defaults)).unwrap();
    assert_eq!(
        (v["kind"].as_str(), v["apiVersion"].as_str()),
        (Some("ConfigMap"), Some("v1"))
    );
    let err = decode_object(&envelope("", "", &cm), None).unwrap_err();
    assert_eq!(
        err.message,
        "Object 'Kind' is missing in 'runtime.TypeMeta{APIVersion:\"\", Kind:\"\"}'"
    );
}

#[test]
fn bad_bodies_are_errors_that_say_why() {
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (vec![], "empty data"),
        (b"{}".to_vec(), "expected prefix [107 56 115 0]"),
        (b"k8s\0".to_vec(), "empty body"),
        (
            envelope("v1", "Widget", &Enc::new()),
            "no kind \"Widget\" is registered for version \"v1\"",
        ),
        (
            envelope("example.com/v1", "Widget", &Enc::new()),
            "for version \"example.com/v1\"",
        ),
        (
            envelope("v1", "Secret", &Enc::new().varint(1, 5)),
            "wrong wireType = 0 for field metadata",
        ),
        (
            envelope("v1", "Secret", &Enc::new().bytes(2, &[0x0a, 0x05, b'a'])),
            "unexpected EOF",
        ),
        (
            envelope(
                "v1",
                "Pod",
                &Enc::new().msg(
                    2,
                    Enc::new().msg(
                        2,
                        Enc::new().msg(
                            8,
                            Enc::new().entry(
                                1,
                                "cpu",
                                Enc::new().msg(2, Enc::new().str(1, "lots")),
                            ),
                        ),
                    ),
                ),
            ),
            "quantities must match",
        ),
        (
            envelope(
                "v1",
                "Service",
                &Enc::new().msg(
                    2,
                    Enc::new().msg(1, Enc::new().msg(4, Enc::new().varint(1, 7))),
                ),
            ),
            "impossible IntOrString.Type 7",
        ),
        (
            envelope(
                "v1",
                "Service",
                &Enc::new().msg(1, Enc::new().msg(8, Enc::new().int(1, i64::MAX))),
            ),
            "year outside of range",
        ),
    ];
    for (body, want) in cases {
        let err = decode_object(&body, None).unwrap_err();
        assert!(err.message.contains(want), "{want}: {err:?}");
    }
}

#[test]
fn deep_nesting_is_refused_not_recursed_into() {
    // JSONSchemaProps.not, nested far past the limit.
    let mut schema = Enc::new().str(5, "string");
    for _ in 0..(MAX_DEPTH + 10) {
        schema = Enc::new().msg(28, schema);
    }
    let validation = Enc::new().msg(1, schema);
    let crd = Enc::new().msg(2, Enc::new().msg(7, Enc::new().msg(4, validation)));
    let err = decode_object(
        &envelope("apiextensions.k8s.io/v1", "CustomResourceDefinition", &crd),
        None,
    )
    .unwrap_err();
    assert!(err.message.contains("nests deeper"), "{err:?}");
}

#[test]
fn random_and_mutated_bytes_never_panic() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(20);
    let secret = envelope(
        "v1",
        "Secret",
        &Enc::new()
            .msg(1, object_meta("s", "default").str_entry(11, "a", "b"))
            .entry(2, "k", Enc::new().bytes(2, b"v"))
            .str(3, "Opaque"),
    );
    let deployment = envelope(
        "apps/v1",
        "Deployment",
        &Enc::new().msg(
            2,
            Enc::new().varint(1, 2).msg(
                3,
                Enc::new().msg(2, Enc::new().msg(2, Enc::new().str(1, "c"))),
            ),
        ),
    );
    let kinds = [
        ("v1", "Pod"),
        ("v1", "Secret"),
        ("apps/v1", "Deployment"),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        ("v1", "Service"),
        ("batch/v1", "Job"),
    ];
    for i in 0..20_000 {
        let body: Vec<u8> = match i % 4 {
            0 => {
                let n = rng.gen_range(0..64);
                (0..n).map(|_| rng.r#gen()).collect()
            }
            1 => {
                let (api_version, kind) = kinds[rng.gen_range(0..kinds.len())];
                let n = rng.gen_range(0..96);
                let raw: Vec<u8> = (0..n).map(|_| rng.r#gen()).collect();
                let mut e = Enc::new();
                e.0 = raw;
                envelope(api_version, kind, &e)
            }
            _ => {
                let mut b = if i % 4 == 2 {
                    secret.clone()
                } else {
                    deployment.clone()
                };
                for _ in 0..rng.gen_range(1..4) {
                    if b.len() <= 4 {
                        break;
                    }
                    let at = rng.gen_range(4..b.len());
                    match rng.gen_range(0..3) {
                        0 => b[at] = rng.r#gen(),
                        1 => b.truncate(at),
                        _ => b.insert(at, rng.r#gen()),
                    }
                }
                b
            }
        };
        // Either outcome is fine; returning at all is the point.
        let _ = decode_object(&body, Some(&Gvk::new("", "v1", "Secret")));
    }
}
