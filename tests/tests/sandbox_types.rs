//! The sandbox decodes every write of a built-in kind against the kind's type, as the API
//! server does: every object the corpus's charts render is accepted, and wrong-typed
//! variants of them (each field given a value of every other JSON type) are refused by
//! create, update, each patch type and server-side apply with the API server's status and
//! reason. kubectl, chartkit and helm see the API server's message for the most common
//! chart bug, an unquoted number in a ConfigMap's data.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use chartkit_tests::corpus::{cases, corpus_or_skip, documents};
use chartkit_tests::sandbox::{SandboxProcess, run_ok};
use chartkit_tests::{TestContext, stderr};
use serde_json::{Value, json};

fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("HTTP client")
}

/// A served built-in resource: where its objects live.
#[derive(Debug, Clone)]
struct Resource {
    /// `/api/v1` or `/apis/GROUP/VERSION`.
    prefix: String,
    plural: String,
    namespaced: bool,
}

impl Resource {
    fn collection(&self, url: &str, namespace: &str) -> String {
        if self.namespaced {
            format!(
                "{url}{}/namespaces/{namespace}/{}",
                self.prefix, self.plural
            )
        } else {
            format!("{url}{}/{}", self.prefix, self.plural)
        }
    }
}

/// The resources the sandbox serves, by `apiVersion` and kind (read before any custom
/// resource definition is created, so only built-in kinds are in it).
fn builtin_resources(
    client: &reqwest::blocking::Client,
    url: &str,
) -> HashMap<(String, String), Resource> {
    let get = |path: &str| -> Value {
        client
            .get(format!("{url}{path}"))
            .send()
            .and_then(|r| r.json())
            .unwrap_or_else(|e| panic!("GET {path}: {e}"))
    };
    let mut prefixes = vec![("v1".to_string(), "/api/v1".to_string())];
    for group in get("/apis")["groups"].as_array().expect("groups") {
        for version in group["versions"].as_array().expect("versions") {
            let gv = version["groupVersion"].as_str().expect("groupVersion");
            prefixes.push((gv.to_string(), format!("/apis/{gv}")));
        }
    }
    let mut out = HashMap::new();
    for (api_version, prefix) in prefixes {
        for r in get(&prefix)["resources"].as_array().expect("resources") {
            let plural = r["name"].as_str().unwrap_or("");
            if plural.contains('/') {
                continue;
            }
            out.insert(
                (
                    api_version.clone(),
                    r["kind"].as_str().unwrap_or("").to_string(),
                ),
                Resource {
                    prefix: prefix.clone(),
                    plural: plural.to_string(),
                    namespaced: r["namespaced"].as_bool().unwrap_or(false),
                },
            );
        }
    }
    out
}

/// The OpenAPI v3 component schemas the sandbox publishes, and the schema name of each
/// kind (`x-kubernetes-group-version-kind`).
struct Schemas {
    defs: serde_json::Map<String, Value>,
    roots: HashMap<(String, String), String>,
}

fn schemas(client: &reqwest::blocking::Client, url: &str) -> Schemas {
    let index: Value = client
        .get(format!("{url}/openapi/v3"))
        .send()
        .and_then(|r| r.json())
        .expect("openapi index");
    let mut defs = serde_json::Map::new();
    let mut roots = HashMap::new();
    for (_, entry) in index["paths"].as_object().expect("paths") {
        let relative = entry["serverRelativeURL"]
            .as_str()
            .expect("serverRelativeURL");
        let doc: Value = client
            .get(format!("{url}{relative}"))
            .send()
            .and_then(|r| r.json())
            .expect("openapi document");
        for (name, schema) in doc["components"]["schemas"]
            .as_object()
            .into_iter()
            .flatten()
        {
            for gvk in schema["x-kubernetes-group-version-kind"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let group = gvk["group"].as_str().unwrap_or("");
                let version = gvk["version"].as_str().unwrap_or("");
                let api_version = if group.is_empty() {
                    version.to_string()
                } else {
                    format!("{group}/{version}")
                };
                roots.insert(
                    (api_version, gvk["kind"].as_str().unwrap_or("").to_string()),
                    name.clone(),
                );
            }
            defs.insert(name.clone(), schema.clone());
        }
    }
    Schemas { defs, roots }
}

/// What a field's declared type accepts, for choosing values it must refuse.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Class {
    String,
    Integer,
    Number,
    Boolean,
    /// An int-or-string or a quantity: strings and numbers are both fine.
    StringOrNumber,
    Object,
    Array,
    /// Anything, or values whose checks are not a matter of JSON types (times).
    Skip,
}

impl Schemas {
    /// A schema with its reference followed, and the name it had.
    fn resolve<'a>(&'a self, schema: &'a Value) -> (&'a Value, Option<&'a str>) {
        let reference = schema
            .get("$ref")
            .or_else(|| schema.get("allOf")?.get(0)?.get("$ref"))
            .and_then(Value::as_str);
        match reference {
            Some(r) => {
                let name = r.rsplit('/').next().unwrap_or(r);
                (self.defs.get(name).unwrap_or(&Value::Null), Some(name))
            }
            None => (schema, None),
        }
    }

    fn class(&self, schema: &Value) -> Class {
        let (schema, name) = self.resolve(schema);
        let name = name.unwrap_or("");
        if name.ends_with(".IntOrString") || name.ends_with(".Quantity") {
            return Class::StringOrNumber;
        }
        if schema.get("x-kubernetes-int-or-string").is_some()
            || schema.get("x-kubernetes-preserve-unknown-fields").is_some()
        {
            return Class::Skip;
        }
        match (
            schema.get("type").and_then(Value::as_str),
            schema.get("format").and_then(Value::as_str),
        ) {
            (Some("string"), Some("date-time" | "int-or-string")) => Class::Skip,
            (Some("string"), _) => Class::String,
            (Some("integer"), _) => Class::Integer,
            (Some("number"), _) => Class::Number,
            (Some("boolean"), _) => Class::Boolean,
            (Some("array"), _) => Class::Array,
            (Some("object"), _) if schema.get("properties").is_some() => Class::Object,
            (Some("object"), _) if schema["additionalProperties"].is_object() => Class::Object,
            (None, _) if schema.get("properties").is_some() => Class::Object,
            _ => Class::Skip,
        }
    }
}

/// Values of every JSON type a field of this class must refuse.
fn wrong_values(class: Class) -> Vec<Value> {
    let all = [
        ("string", json!("wrong")),
        ("number", json!(5)),
        ("bool", json!(true)),
        ("object", json!({"wrong": "x"})),
        ("array", json!(["wrong"])),
    ];
    let accepted: &[&str] = match class {
        Class::String => &["string"],
        Class::Integer | Class::Number => &["number"],
        Class::Boolean => &["bool"],
        Class::StringOrNumber => &["string", "number"],
        Class::Object => &["object"],
        Class::Array => &["array"],
        Class::Skip => return Vec::new(),
    };
    all.into_iter()
        .filter(|(kind, _)| !accepted.contains(kind))
        .map(|(_, v)| v)
        .collect()
}

/// One step of a path into an object.
#[derive(Debug, Clone)]
enum Step {
    Field(String),
    Index(usize),
}

/// A wrong-typed variant: the position changed and its new value.
struct Variant {
    path: Vec<Step>,
    value: Value,
    /// The value replaces an item of a list strategic merge patch merges (by key, or as
    /// a set): the patch's items and the live ones then differ in type, which the API
    /// server's strategic merge refuses before decoding, as a plain error (500).
    merged_list_item: bool,
}

/// Where the walk for variants is.
struct Position<'a> {
    schema: &'a Value,
    value: &'a Value,
    /// The field's path in the kind, without list positions or map keys.
    key: String,
    merged_list_item: bool,
}

/// Every position of `object` given every value its type must refuse, one variant per
/// kind, field (list positions and map keys left out) and JSON type.
fn variants(
    schemas: &Schemas,
    root: &str,
    object: &Value,
    seen: &mut BTreeSet<String>,
    kind: &str,
) -> Vec<Variant> {
    fn walk(
        schemas: &Schemas,
        at: Position<'_>,
        path: &mut Vec<Step>,
        out: &mut Vec<Variant>,
        seen: &mut BTreeSet<String>,
    ) {
        let class = schemas.class(at.schema);
        if !path.is_empty() && !at.value.is_null() {
            for wrong in wrong_values(class) {
                if seen.insert(format!("{} {wrong}", at.key)) {
                    out.push(Variant {
                        path: path.clone(),
                        value: wrong,
                        merged_list_item: at.merged_list_item,
                    });
                }
            }
        }
        let (resolved, _) = schemas.resolve(at.schema);
        match at.value {
            Value::Object(map) if class == Class::Object => {
                for (field, child) in map {
                    // The type's identity, not its fields: checked against the URL first.
                    if path.is_empty() && ["apiVersion", "kind"].contains(&field.as_str()) {
                        continue;
                    }
                    if at.key.ends_with(".metadata")
                        && ["name", "namespace"].contains(&field.as_str())
                    {
                        continue;
                    }
                    let declared = resolved["properties"].get(field);
                    let Some(child_schema) = declared.or_else(|| {
                        resolved
                            .get("additionalProperties")
                            .filter(|a| a.is_object())
                    }) else {
                        continue;
                    };
                    let key = match declared {
                        Some(_) => format!("{}.{field}", at.key),
                        None => format!("{}.*", at.key),
                    };
                    path.push(Step::Field(field.clone()));
                    let child = Position {
                        schema: child_schema,
                        value: child,
                        key,
                        merged_list_item: false,
                    };
                    walk(schemas, child, path, out, seen);
                    path.pop();
                }
            }
            Value::Array(items) if class == Class::Array => {
                let merged = at
                    .schema
                    .get("x-kubernetes-patch-strategy")
                    .and_then(Value::as_str)
                    .is_some_and(|s| s.split(',').any(|s| s == "merge"));
                for (i, item) in items.iter().enumerate() {
                    path.push(Step::Index(i));
                    let child = Position {
                        schema: &resolved["items"],
                        value: item,
                        key: format!("{}[]", at.key),
                        merged_list_item: merged,
                    };
                    walk(schemas, child, path, out, seen);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    let schema = json!({"$ref": format!("#/components/schemas/{root}")});
    let at = Position {
        schema: &schema,
        value: object,
        key: kind.to_string(),
        merged_list_item: false,
    };
    walk(schemas, at, &mut Vec::new(), &mut out, seen);
    out
}

fn set_at(object: &mut Value, path: &[Step], value: Value) {
    let mut at = object;
    for step in path {
        at = match step {
            Step::Field(f) => &mut at[f.as_str()],
            Step::Index(i) => &mut at[*i],
        };
    }
    *at = value;
}

fn pointer(path: &[Step]) -> String {
    path.iter()
        .map(|s| match s {
            Step::Field(f) => format!("/{}", f.replace('~', "~0").replace('/', "~1")),
            Step::Index(i) => format!("/{i}"),
        })
        .collect()
}

/// A live object and the variants to try on it.
struct Target {
    url: String,
    collection: String,
    object: Value,
    variants: Vec<Variant>,
}

/// The ways a variant is sent, each with the status and reason the API server refuses it
/// with.
const METHODS: [(&str, u16, &str); 6] = [
    ("create", 400, "BadRequest"),
    ("update", 400, "BadRequest"),
    ("json-patch", 422, "Invalid"),
    ("merge-patch", 422, "Invalid"),
    ("strategic-merge-patch", 422, "Invalid"),
    ("apply", 500, ""),
];

fn send(
    client: &reqwest::blocking::Client,
    target: &Target,
    variant: &Variant,
    method: &str,
) -> (u16, Value) {
    let mut changed = target.object.clone();
    set_at(&mut changed, &variant.path, variant.value.clone());
    let request = match method {
        "create" => client.post(&target.collection).json(&changed),
        "update" => client.put(&target.url).json(&changed),
        "json-patch" => client
            .patch(&target.url)
            .header("Content-Type", "application/json-patch+json")
            .body(
                json!([{"op": "replace", "path": pointer(&variant.path), "value": variant.value}])
                    .to_string(),
            ),
        "merge-patch" => client
            .patch(&target.url)
            .header("Content-Type", "application/merge-patch+json")
            .body(changed.to_string()),
        "strategic-merge-patch" => client
            .patch(&target.url)
            .header("Content-Type", "application/strategic-merge-patch+json")
            .body(changed.to_string()),
        _ => client
            .patch(format!("{}?fieldManager=types-test&force=true", target.url))
            .header("Content-Type", "application/apply-patch+yaml")
            .body(changed.to_string()),
    };
    let response = request.send().expect("request");
    let status = response.status().as_u16();
    (status, response.json().unwrap_or(Value::Null))
}

const ALPINE_LABEL: &str = "Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string";

#[test]
fn corpus_objects_are_accepted_and_their_wrong_typed_variants_refused() {
    let test = "corpus_objects_are_accepted_and_their_wrong_typed_variants_refused";
    let Some(corpus) = corpus_or_skip(test) else {
        return;
    };
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let client = client();
    let url = sandbox.url.clone();
    let resources = builtin_resources(&client, &url);
    let schemas = schemas(&client, &url);

    // Every case of the corpus that helm renders, rendered by chartkit, each in a
    // namespace of its own; every object of a built-in kind created.
    let mut accepted = 0;
    let mut refused = Vec::new();
    let mut refused_as_on_a_cluster = 0;
    let mut kinds = BTreeMap::<String, usize>::new();
    let mut targets = Vec::new();
    let mut seen = BTreeSet::new();
    for (n, case) in cases(&corpus)
        .iter()
        .filter(|c| c.exit_code == 0)
        .enumerate()
    {
        let args: Vec<&str> = case.command.split_whitespace().skip(1).collect();
        let output = run_ok(ctx.chartkit().current_dir(&corpus).args(&args));
        let namespace = format!("case-{n}");
        let created = client
            .post(format!("{url}/api/v1/namespaces"))
            .json(
                &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
            )
            .send()
            .expect("create namespace");
        assert_eq!(created.status().as_u16(), 201);
        for (source, text) in documents(&String::from_utf8_lossy(&output.stdout)) {
            let Ok(mut object) = chartkit_sandbox::body::parse_yaml_or_json(text.as_bytes()) else {
                continue;
            };
            if !object.is_object() {
                continue;
            }
            let key = (
                object["apiVersion"].as_str().unwrap_or("").to_string(),
                object["kind"].as_str().unwrap_or("").to_string(),
            );
            let Some(resource) = resources.get(&key) else {
                continue;
            };
            if resource.namespaced {
                object["metadata"]["namespace"] = json!(namespace);
            }
            // A finished Job the sandbox would delete at once must outlive its variants.
            if object["spec"]["ttlSecondsAfterFinished"].is_number() {
                object["spec"]["ttlSecondsAfterFinished"] = json!(86400);
            }
            let collection = resource.collection(&url, &namespace);
            let response = client
                .post(&collection)
                .json(&object)
                .send()
                .expect("create");
            let status = response.status().as_u16();
            let body: Value = response.json().unwrap_or(Value::Null);
            // Cluster-scoped objects two cases both render are created once.
            if status == 409 && !resource.namespaced {
                continue;
            }
            if status != 201 {
                // helm's own test chart labels its pod with the chart's appVersion
                // unquoted (`app.kubernetes.io/version: 3.9`), a number where a label's
                // string goes: a real API server refuses it just so.
                if source == "alpine/templates/alpine-pod.yaml"
                    && status == 400
                    && body["message"] == ALPINE_LABEL
                {
                    refused_as_on_a_cluster += 1;
                    continue;
                }
                refused.push(format!(
                    "{}/{} {} ({source}): {status} {}",
                    case.chart, case.name, key.1, body["message"]
                ));
                continue;
            }
            accepted += 1;
            *kinds.entry(key.1.clone()).or_default() += 1;
            let Some(root) = schemas.roots.get(&key) else {
                continue;
            };
            let name = object["metadata"]["name"]
                .as_str()
                .unwrap_or("")
                .to_string();
            let found = variants(&schemas, root, &object, &mut seen, &key.1);
            if !found.is_empty() {
                targets.push(Target {
                    url: format!("{collection}/{name}"),
                    collection,
                    object,
                    variants: found,
                });
            }
        }
    }
    eprintln!(
        "corpus: {accepted} objects of {} built-in kinds accepted ({kinds:?}), {refused_as_on_a_cluster} refused as a real API server refuses them, {} refused wrongly",
        kinds.len(),
        refused.len()
    );
    assert_eq!(refused_as_on_a_cluster, 3, "the alpine chart's three cases");
    assert!(
        refused.is_empty(),
        "objects refused:\n{}",
        refused.join("\n")
    );
    assert!(accepted > 100, "only {accepted} objects were created");

    // Every variant by every method, on a few threads.
    let tried = Mutex::new(0usize);
    let failures = Mutex::new(Vec::<String>::new());
    let next = Mutex::new(0usize);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                let client = self::client();
                loop {
                    let i = {
                        let mut next = next.lock().unwrap();
                        *next += 1;
                        *next - 1
                    };
                    let Some(target) = targets.get(i) else {
                        break;
                    };
                    for variant in &target.variants {
                        for (method, code, reason) in METHODS {
                            // Known difference: the sandbox's strategic merge does not find
                            // the merge keys of a CRD's schema below `properties`, so it
                            // replaces such a list and decoding refuses the result (422)
                            // where the API server's merge refuses the mixed list (500).
                            let crd = target.url.contains("/customresourcedefinitions/");
                            let (code, reason) = if method == "strategic-merge-patch"
                                && variant.merged_list_item
                                && !crd
                            {
                                (500, "")
                            } else {
                                (code, reason)
                            };
                            let (status, body) = send(&client, target, variant, method);
                            *tried.lock().unwrap() += 1;
                            if status != code || body["reason"].as_str().unwrap_or("") != reason {
                                failures.lock().unwrap().push(format!(
                                    "{method} {} {} = {}: {status} {} {}",
                                    target.url,
                                    pointer(&variant.path),
                                    variant.value,
                                    body["reason"],
                                    body["message"]
                                ));
                            }
                        }
                    }
                }
            });
        }
    });
    let tried = tried.into_inner().unwrap();
    let failures = failures.into_inner().unwrap();
    let variant_count: usize = targets.iter().map(|t| t.variants.len()).sum();
    eprintln!(
        "wrong-typed variants: {variant_count} variants x {} methods = {tried} requests tried, {} refused with the API server's status and reason",
        METHODS.len(),
        tried - failures.len()
    );
    assert!(variant_count > 500, "only {variant_count} variants");
    assert!(
        failures.is_empty(),
        "{} of {tried} not refused as the API server refuses them:\n{}",
        failures.len(),
        failures
            .iter()
            .filter(|f| {
                // A few of each method's.
                let method = f.split(' ').next().unwrap_or("");
                failures
                    .iter()
                    .take_while(|g| g != f)
                    .filter(|g| g.starts_with(&format!("{method} ")))
                    .count()
                    < 12
            })
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

const UNQUOTED: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: 5\n";
const API_SERVER_MESSAGE: &str = "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string";

#[test]
fn kubectl_apply_of_an_unquoted_number_in_a_config_map_fails_as_on_a_cluster() {
    let test = "kubectl_apply_of_an_unquoted_number_in_a_config_map_fails_as_on_a_cluster";
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let Some(mut kubectl) = sandbox.kubectl(&ctx, test) else {
        return;
    };
    let file = ctx.path("configmap.yaml");
    std::fs::write(&file, UNQUOTED).expect("write manifest");
    let output = kubectl
        .arg("apply")
        .arg("-f")
        .arg(&file)
        .output()
        .expect("kubectl");
    assert!(!output.status.success(), "kubectl apply succeeded");
    let err = stderr(&output);
    assert!(
        err.contains(&format!(
            "Error from server (BadRequest): error when creating \"{}\": {API_SERVER_MESSAGE}",
            file.display()
        )),
        "{err}"
    );
    let mut kubectl = sandbox.kubectl(&ctx, test).expect("kubectl");
    let output = kubectl
        .args(["apply", "--server-side", "-f"])
        .arg(&file)
        .output()
        .expect("kubectl");
    assert!(
        !output.status.success(),
        "kubectl apply --server-side succeeded"
    );
    assert!(
        stderr(&output).contains("failed to create typed patch object (default/settings; /v1, Kind=ConfigMap): .data.a: expected string, got &value.valueUnstructured{Value:5}"),
        "{}",
        stderr(&output)
    );
}

fn chart_with_the_bug(ctx: &TestContext) -> String {
    ctx.demo_chart(&[("templates/configmap.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  port: {{ .Values.port }}\n"), ("values.yaml", "port: 8080\n")])
}

fn install_fails(command: &mut Command, what: &str) {
    let output = command.output().expect(what);
    assert_eq!(output.status.code(), Some(1), "{what}: {}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.contains("cannot unmarshal number into Go struct field ConfigMap.data of type string")
            || err
                .contains(".data.port: expected string, got &value.valueUnstructured{Value:8080}"),
        "{what}: {err}"
    );
}

#[test]
fn installing_a_chart_with_an_unquoted_number_in_a_config_map_fails() {
    let test = "installing_a_chart_with_an_unquoted_number_in_a_config_map_fails";
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let chart = chart_with_the_bug(&ctx);
    install_fails(
        sandbox.chartkit(&ctx).args(["install", "mine", &chart]),
        "chartkit install",
    );
    let Some(mut helm) = sandbox.helm(&ctx, test) else {
        return;
    };
    install_fails(helm.args(["install", "theirs", &chart]), "helm install");
}

/// A body that repeats a key is a strict decoding error under `fieldValidation=Strict`
/// (400, naming each repeated field's path), a warning under the default `Warn`, and
/// nothing under `Ignore`; the last value is the one kept, as Go's decoder keeps it.
#[test]
fn repeated_fields_in_a_body_are_strict_errors_or_warnings() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let client = client();
    let url = format!("{}/api/v1/namespaces/default/configmaps", sandbox.url);
    let body = |name: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","name":"{name}"}},"data":{{"a":"1","a":"2"}}}}"#
        )
    };
    let post = |query: &str, name: &str| {
        client
            .post(format!("{url}{query}"))
            .header("content-type", "application/json")
            .body(body(name))
            .send()
            .expect("POST")
    };

    let strict = post("?fieldValidation=Strict", "strict");
    assert_eq!(strict.status().as_u16(), 400);
    let status: Value = strict.json().expect("a Status");
    assert_eq!(status["reason"], "BadRequest");
    assert_eq!(
        status["message"],
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: duplicate field \"metadata.name\", duplicate field \"data.a\""
    );

    let warned = post("", "warned");
    assert_eq!(warned.status().as_u16(), 201);
    let warnings: Vec<String> = warned
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect();
    assert_eq!(
        warnings,
        [
            "299 - \"duplicate field \\\"metadata.name\\\"\"",
            "299 - \"duplicate field \\\"data.a\\\"\""
        ]
    );
    let stored: Value = warned.json().expect("the object");
    assert_eq!(stored["data"], json!({"a": "2"}));

    let ignored = post("?fieldValidation=Ignore", "ignored");
    assert_eq!(ignored.status().as_u16(), 201);
    assert!(ignored.headers().get("warning").is_none());
}
