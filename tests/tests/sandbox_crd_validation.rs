//! Custom resources against their CRD's schema in the sandbox, as a real API server
//! judges them: a CRD with a rich schema (types, required, enums, formats, list types,
//! an embedded resource, CEL rules with and without `oldSelf`), good objects accepted
//! and generated wrong variants refused with 422 `Invalid` by every write path (create,
//! PUT, the status subresource, JSON patch, merge patch, server-side apply), kubectl
//! showing the API server's message, and every custom resource the corpus renders
//! still accepted.

// The CRD is one large `json!` literal.
#![recursion_limit = "256"]

use std::collections::BTreeSet;
use std::process::Command;

use chartkit_tests::TestContext;
use chartkit_tests::corpus::corpus_or_skip;
use chartkit_tests::sandbox::{SandboxProcess, run_ok, write_file};
use reqwest::blocking::Client;
use serde_json::{Value, json};

/// What the API server answers (500, no reason) to an apply it cannot type.
const TYPED_PATCH: &str = "failed to create typed patch object";

const BASE: &str = "/apis/example.com/v1/namespaces/default/widgets";

fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "x-kubernetes-validations": [
                        {"rule": "self.metadata.name.startsWith('w-')", "message": "names start with w-"},
                    ],
                    "properties": {
                        "spec": {
                            "type": "object",
                            "required": ["size", "owner"],
                            "x-kubernetes-validations": [
                                {"rule": "self.minReplicas <= self.maxReplicas", "message": "minReplicas must not exceed maxReplicas"},
                                {"rule": "self.size != 'huge' || self.maxReplicas >= 3", "fieldPath": ".maxReplicas", "reason": "FieldValueForbidden",
                                 "messageExpression": "'a huge widget needs 3 replicas, not ' + string(self.maxReplicas)"},
                                {"rule": "self.owner.endsWith('@example.com')"},
                                {"rule": "self.size == oldSelf.size", "message": "size is immutable"},
                                {"rule": "!has(self.tags) || self.tags.all(t, t.matches('^[a-z]+$'))", "message": "tags are lowercase words"},
                            ],
                            "properties": {
                                "size": {"type": "string", "enum": ["small", "medium", "huge"]},
                                "minReplicas": {"type": "integer", "format": "int32", "minimum": 0},
                                "maxReplicas": {"type": "integer", "format": "int32"},
                                "owner": {"type": "string", "format": "email"},
                                "id": {"type": "string", "format": "uuid"},
                                "since": {"type": "string", "format": "date-time"},
                                "day": {"type": "string", "format": "date"},
                                "ttl": {"type": "string", "format": "duration"},
                                "address": {"type": "string", "format": "ipv4"},
                                "address6": {"type": "string", "format": "ipv6"},
                                "network": {"type": "string", "format": "cidr"},
                                "host": {"type": "string", "format": "hostname"},
                                "data": {"type": "string", "format": "byte"},
                                "link": {"type": "string", "format": "uri"},
                                "ratio": {"type": "number", "maximum": 1},
                                "enabled": {"type": "boolean"},
                                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                                "ports": {
                                    "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                                    "items": {"type": "object", "required": ["name"], "properties": {
                                        "name": {"type": "string"},
                                        "port": {"type": "integer", "minimum": 1, "maximum": 65535},
                                    }},
                                },
                                "labels": {"type": "object", "x-kubernetes-map-type": "granular", "additionalProperties": {"type": "string"}},
                                "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
                            },
                        },
                        "status": {
                            "type": "object",
                            "properties": {
                                "phase": {"type": "string", "enum": ["Pending", "Ready"]},
                                "observed": {"type": "integer", "format": "int32"},
                                "since": {"type": "string", "format": "date-time"},
                            },
                        },
                    },
                }},
            }],
        },
    })
}

fn good_spec() -> Value {
    json!({
        "size": "medium",
        "minReplicas": 1,
        "maxReplicas": 3,
        "owner": "ops@example.com",
        "id": "123e4567-e89b-12d3-a456-426614174000",
        "since": "2024-05-01T10:00:00Z",
        "day": "2024-02-29",
        "ttl": "1h30m",
        "address": "10.0.0.1",
        "address6": "fe80::1",
        "network": "10.0.0.0/8",
        "host": "db.example.com",
        "data": "aGVsbG8=",
        "link": "https://example.com/docs",
        "ratio": 0.5,
        "enabled": true,
        "tags": ["blue", "green"],
        "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}],
        "labels": {"team": "a"},
        "template": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}},
    })
}

fn widget(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec})
}

/// One wrong variant of the good spec: a field set to a value (or removed), and what
/// the API server's message says.
struct Mutation {
    what: String,
    field: &'static str,
    value: Option<Value>,
    expect: String,
    /// Only an update can break it (a transition rule).
    update_only: bool,
    /// Server-side apply cannot even type it (a wrong type, a duplicate key): the API
    /// server answers the apply with its typed-patch error before validating.
    typed: bool,
}

fn mutation(field: &'static str, value: Option<Value>, expect: impl Into<String>) -> Mutation {
    Mutation {
        what: format!(
            "spec.{field} = {}",
            value
                .as_ref()
                .map(Value::to_string)
                .unwrap_or("(removed)".into())
        ),
        field,
        value,
        expect: expect.into(),
        update_only: false,
        typed: false,
    }
}

/// Every field with a wrong type for each type it does not have, every format field
/// with a value outside its format, and the other constraints broken one at a time.
fn mutations() -> Vec<Mutation> {
    let schema = crd();
    let props = schema["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["properties"]
        .as_object()
        .unwrap()
        .clone();
    let samples: [(&str, Value); 6] = [
        ("string", json!("text")),
        ("integer", json!(7)),
        ("number", json!(2.5)),
        ("boolean", json!(true)),
        ("array", json!(["x"])),
        ("object", json!({"x": "y"})),
    ];
    let mut out = Vec::new();
    for (name, prop) in &props {
        let ty = prop["type"].as_str().unwrap();
        let name: &'static str = Box::leak(name.clone().into_boxed_str());
        for (sample_ty, sample) in &samples {
            let accepted = *sample_ty == ty || (ty == "number" && *sample_ty == "integer");
            if !accepted {
                let mut m = mutation(
                    name,
                    Some(sample.clone()),
                    format!("spec.{name} in body must be of type {ty}"),
                );
                m.typed = true;
                out.push(m);
            }
        }
    }
    let formats = [
        ("owner", "not-an-address", "email"),
        ("id", "abc", "uuid"),
        ("since", "yesterday", "date-time"),
        ("day", "2023-02-29", "date"),
        ("ttl", "soon", "duration"),
        ("address", "300.1.1.1", "ipv4"),
        ("address6", "10.0.0.1", "ipv6"),
        ("network", "10.0.0.0/33", "cidr"),
        ("host", "-bad-.example.com", "hostname"),
        ("data", "not base64!", "byte"),
        ("link", "relative/path", "uri"),
    ];
    for (field, bad, format) in formats {
        out.push(mutation(
            field,
            Some(json!(bad)),
            format!("spec.{field}: Invalid value: \"{bad}\": spec.{field} in body must be of type {format}: \"{bad}\""),
        ));
    }
    out.push(mutation(
        "size",
        Some(json!("giant")),
        "spec.size: Unsupported value: \"giant\": supported values: \"small\", \"medium\", \"huge\"",
    ));
    out.push(mutation("size", None, "spec.size: Required value"));
    out.push(mutation("owner", None, "spec.owner: Required value"));
    out.push(mutation(
        "minReplicas",
        Some(json!(-1)),
        "spec.minReplicas in body should be greater than or equal to 0",
    ));
    out.push(mutation(
        "maxReplicas",
        Some(json!(3_000_000_000_i64)),
        "Checked value must be of type integer with format int32 in spec.maxReplicas",
    ));
    out.push(mutation(
        "ratio",
        Some(json!(2)),
        "spec.ratio in body should be less than or equal to 1",
    ));
    out.push(typed(mutation(
        "tags",
        Some(json!(["blue", "green", "blue"])),
        "spec.tags[2]: Duplicate value: \"blue\"",
    )));
    out.push(typed(mutation(
        "ports",
        Some(json!([{"name": "http", "port": 80}, {"name": "http", "port": 81}])),
        "spec.ports[1]: Duplicate value: map[string]interface {}{\"name\":\"http\"}",
    )));
    out.push(mutation(
        "ports",
        Some(json!([{"name": "http", "port": 70000}])),
        "spec.ports[0].port in body should be less than or equal to 65535",
    ));
    out.push(typed(mutation(
        "ports",
        Some(json!([{"port": 80}])),
        "spec.ports[0].name: Required value",
    )));
    out.push(typed(mutation(
        "labels",
        Some(json!({"team": 5})),
        "spec.labels.team in body must be of type string",
    )));
    out.push(mutation(
        "template",
        Some(json!({"apiVersion": "v1", "kind": "", "metadata": {"name": "cm"}})),
        "spec.template.kind: Invalid value: \"\": must not be empty",
    ));
    out.push(mutation(
        "template",
        Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name"}})),
        "spec.template.metadata.name: Invalid value: \"Bad_Name\"",
    ));
    out.push(mutation(
        "minReplicas",
        Some(json!(5)),
        "spec: Invalid value: \"object\": minReplicas must not exceed maxReplicas",
    ));
    out.push(mutation(
        "owner",
        Some(json!("ops@elsewhere.org")),
        "spec: Invalid value: \"object\": failed rule: self.owner.endsWith('@example.com')",
    ));
    out.push(mutation(
        "tags",
        Some(json!(["Blue"])),
        "spec: Invalid value: \"object\": tags are lowercase words",
    ));
    let mut huge = mutation(
        "size",
        Some(json!("huge")),
        "spec.maxReplicas: Forbidden: a huge widget needs 3 replicas, not 2",
    );
    // maxReplicas is lowered with it below; a create breaks no transition rule.
    huge.what = "spec.size = huge with maxReplicas 2".into();
    out.push(huge);
    let mut immutable = mutation(
        "size",
        Some(json!("small")),
        "spec: Invalid value: \"object\": size is immutable",
    );
    immutable.update_only = true;
    out.push(immutable);
    out
}

fn typed(mut m: Mutation) -> Mutation {
    m.typed = true;
    m
}

fn mutated_spec(m: &Mutation) -> Value {
    let mut spec = good_spec();
    match &m.value {
        Some(v) => spec[m.field] = v.clone(),
        None => {
            spec.as_object_mut().unwrap().remove(m.field);
        }
    }
    if m.what.contains("maxReplicas 2") {
        spec["maxReplicas"] = json!(2);
        spec["minReplicas"] = json!(1);
    }
    spec
}

struct Api {
    client: Client,
    url: String,
}

impl Api {
    fn send(&self, method: &str, path: &str, content_type: &str, body: &Value) -> (u16, Value) {
        let request = self
            .client
            .request(method.parse().unwrap(), format!("{}{path}", self.url))
            .header("Content-Type", content_type)
            .body(body.to_string());
        let response = request.send().expect("request to the sandbox");
        let status = response.status().as_u16();
        let text = response.text().unwrap_or_default();
        (
            status,
            serde_json::from_str(&text).unwrap_or(json!({"raw": text})),
        )
    }

    fn ok(&self, method: &str, path: &str, content_type: &str, body: &Value) -> Value {
        let (status, answer) = self.send(method, path, content_type, body);
        assert!(
            (200..300).contains(&status),
            "{method} {path} answered {status}: {answer}"
        );
        answer
    }
}

/// The ways a change reaches a custom resource: (path name, method, path suffix,
/// content type, body for an object whose spec becomes `spec`).
fn write_paths(
    name: &str,
    spec: &Value,
    m: Option<&Mutation>,
    current: &Value,
) -> Vec<(String, String, String, &'static str, Value)> {
    let item = format!("{BASE}/{name}");
    let mut put = current.clone();
    put["spec"] = spec.clone();
    let mut merge_spec = serde_json::Map::new();
    let mut json_patch = Vec::new();
    match m {
        Some(m) => {
            merge_spec.insert(m.field.into(), m.value.clone().unwrap_or(Value::Null));
            match &m.value {
                Some(v) => json_patch.push(
                    json!({"op": "replace", "path": format!("/spec/{}", m.field), "value": v}),
                ),
                None => {
                    json_patch.push(json!({"op": "remove", "path": format!("/spec/{}", m.field)}))
                }
            }
            if m.what.contains("maxReplicas 2") {
                merge_spec.insert("maxReplicas".into(), json!(2));
                json_patch.push(json!({"op": "replace", "path": "/spec/maxReplicas", "value": 2}));
            }
        }
        None => {
            merge_spec.insert("ratio".into(), json!(0.25));
            json_patch.push(json!({"op": "replace", "path": "/spec/ratio", "value": 0.25}));
        }
    }
    let removal = m.is_some_and(|m| m.value.is_none());
    let mut paths = vec![
        (
            "update (PUT)".into(),
            "PUT".into(),
            item.clone(),
            "application/json",
            put,
        ),
        (
            "merge patch".into(),
            "PATCH".into(),
            item.clone(),
            "application/merge-patch+json",
            json!({"spec": Value::Object(merge_spec)}),
        ),
        (
            "JSON patch".into(),
            "PATCH".into(),
            item.clone(),
            "application/json-patch+json",
            Value::Array(json_patch),
        ),
        (
            "server-side apply".into(),
            "PATCH".into(),
            format!("{item}?fieldManager=tester&force=true"),
            "application/apply-patch+yaml",
            widget(name, spec.clone()),
        ),
    ];
    if removal {
        // An applied configuration without a field removes it only when no other
        // manager owns it; the other writers do, so the API server keeps it too.
        paths.pop();
    }
    paths
}

#[test]
fn custom_resources_are_judged_by_their_schema_on_every_write_path() {
    let test = "custom_resources_are_judged_by_their_schema_on_every_write_path";
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let api = Api {
        client: Client::new(),
        url: sandbox.url.clone(),
    };
    api.ok(
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        "application/json",
        &crd(),
    );
    // Established at once or within moments.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (status, _) = api.send("GET", BASE, "application/json", &Value::Null);
        if status == 200 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the Widget type was never served"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    // Good objects: created, then changed by every path.
    let created = api.ok(
        "POST",
        BASE,
        "application/json",
        &widget("w-good", good_spec()),
    );
    assert_eq!(created["spec"]["owner"], "ops@example.com");
    let mut accepted = 1;
    for (path_name, method, path, content_type, body) in
        write_paths("w-good", &good_spec(), None, &created)
    {
        let (status, answer) = api.send(&method, &path, content_type, &body);
        assert!(
            (200..300).contains(&status),
            "a good {path_name} was refused ({status}): {answer}"
        );
        accepted += 1;
    }
    let status_ok = api.ok(
        "PATCH",
        &format!("{BASE}/w-good/status"),
        "application/merge-patch+json",
        &json!({"status": {"phase": "Ready", "observed": 1, "since": "2024-05-01T10:00:00Z"}}),
    );
    assert_eq!(status_ok["status"]["phase"], "Ready");
    accepted += 1;

    // Wrong variants, by every path.
    let mut tried = 0;
    let mut refused = 0;
    let mut failures = Vec::new();
    let mut typed_refusals = 0;
    let mut judge =
        |how: &str, what: &str, expect: &str, typed: bool, (status, answer): (u16, Value)| {
            tried += 1;
            let message = answer["message"].as_str().unwrap_or("").to_string();
            if status == 422 && answer["reason"] == "Invalid" && message.contains(expect) {
                refused += 1;
            } else if typed && status == 500 && message.contains(TYPED_PATCH) {
                typed_refusals += 1;
            } else {
                failures.push(format!(
                    "{how} of {what}: {status} {}: {message}\n  expected: {expect}",
                    answer["reason"]
                ));
            }
        };
    for (i, m) in mutations().iter().enumerate() {
        let spec = mutated_spec(m);
        if !m.update_only {
            let answer = api.send(
                "POST",
                BASE,
                "application/json",
                &widget(&format!("w-bad-{i}"), spec.clone()),
            );
            judge("create", &m.what, &m.expect, false, answer);
        }
        let current = api.ok(
            "GET",
            &format!("{BASE}/w-good"),
            "application/json",
            &Value::Null,
        );
        for (path_name, method, path, content_type, body) in
            write_paths("w-good", &spec, Some(m), &current)
        {
            let answer = api.send(&method, &path, content_type, &body);
            // Apply may stop earlier, at typing, as the API server's does.
            let typed = m.typed && path_name == "server-side apply";
            judge(&path_name, &m.what, &m.expect, typed, answer);
        }
    }
    // The status subresource is judged by the same schema.
    let status_variants = [
        (
            json!({"phase": "Lost"}),
            "status.phase: Unsupported value: \"Lost\": supported values: \"Pending\", \"Ready\"",
        ),
        (
            json!({"observed": "one"}),
            "status.observed in body must be of type integer: \"string\"",
        ),
        (
            json!({"since": "later"}),
            "status.since in body must be of type date-time: \"later\"",
        ),
    ];
    for (status, expect) in &status_variants {
        let current = api.ok(
            "GET",
            &format!("{BASE}/w-good"),
            "application/json",
            &Value::Null,
        );
        let mut put = current.clone();
        put["status"] = status.clone();
        let what = format!("status {status}");
        judge(
            "status update (PUT)",
            &what,
            expect,
            false,
            api.send(
                "PUT",
                &format!("{BASE}/w-good/status"),
                "application/json",
                &put,
            ),
        );
        judge(
            "status merge patch",
            &what,
            expect,
            false,
            api.send(
                "PATCH",
                &format!("{BASE}/w-good/status"),
                "application/merge-patch+json",
                &json!({"status": status}),
            ),
        );
    }
    // A root rule sees metadata.name.
    judge(
        "create",
        "a name without w-",
        "<nil>: Invalid value: \"object\": names start with w-",
        false,
        api.send(
            "POST",
            BASE,
            "application/json",
            &widget("other", good_spec()),
        ),
    );
    println!(
        "{test}: good writes accepted: {accepted}; wrong variants tried: {tried}, refused with 422 Invalid and the API server's message: {refused}, applies refused with the API server's typed-patch error: {typed_refusals}"
    );
    assert!(
        failures.is_empty(),
        "{} of {tried} wrong variants were not refused as expected:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(tried >= 300, "only {tried} variants were generated");
    // Nothing refused was stored, and the good object is intact.
    let list = api.ok("GET", BASE, "application/json", &Value::Null);
    let names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names, ["w-good"]);
    let current = api.ok(
        "GET",
        &format!("{BASE}/w-good"),
        "application/json",
        &Value::Null,
    );
    assert_eq!(current["spec"]["size"], "medium");
    assert_eq!(current["status"]["phase"], "Ready");

    // kubectl shows the API server's message for a bad custom resource.
    let Some(mut kubectl) = sandbox.kubectl(&ctx, test) else {
        return;
    };
    let mut bad = good_spec();
    bad["minReplicas"] = json!(9);
    bad["ratio"] = json!(2);
    let file = write_file(
        ctx.dir(),
        "bad-widget.json",
        &widget("w-bad", bad).to_string(),
    );
    let out = kubectl
        .args(["apply", "-f"])
        .arg(&file)
        .output()
        .expect("run kubectl");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "kubectl applied a bad widget");
    assert!(
        stderr.contains(
            "The Widget \"w-bad\" is invalid: \n* spec.ratio: Invalid value: 2: spec.ratio in body should be less than or equal to 1\n* spec: Invalid value: \"object\": minReplicas must not exceed maxReplicas"
        ),
        "{stderr}"
    );
}

/// Documents of a multi-document YAML file, with their top-level `kind`.
fn documents(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines().chain(std::iter::once("---")) {
        if line == "---" || line.starts_with("--- ") {
            let kind = current
                .lines()
                .find_map(|l| l.strip_prefix("kind: "))
                .unwrap_or("")
                .trim()
                .to_string();
            if !kind.is_empty() {
                out.push((kind, std::mem::take(&mut current)));
            }
            current.clear();
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    out
}

fn top(doc: &str, key: &str) -> String {
    doc.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}: ")))
        .unwrap_or("")
        .trim()
        .trim_matches('"')
        .to_string()
}

#[test]
fn every_custom_resource_the_corpus_renders_is_still_accepted() {
    let test = "every_custom_resource_the_corpus_renders_is_still_accepted";
    let Some(corpus) = corpus_or_skip(test) else {
        return;
    };
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    if sandbox.kubectl(&ctx, test).is_none() {
        return;
    }
    let kubectl = || -> Command { sandbox.kubectl(&ctx, test).expect("kubectl") };
    let mut goldens: Vec<_> = std::fs::read_dir(corpus.join("golden/helm-4.1.4"))
        .expect("goldens")
        .flatten()
        .flat_map(|chart| {
            std::fs::read_dir(chart.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    goldens.sort();
    let mut crds = Vec::new();
    let mut seen = BTreeSet::new();
    let mut others = Vec::new();
    for golden in &goldens {
        for (kind, doc) in documents(&std::fs::read_to_string(golden).expect("golden")) {
            if is_crd(&doc, &kind) {
                if seen.insert(crd_name(&doc)) {
                    crds.push(doc);
                }
            } else {
                others.push(doc);
            }
        }
    }
    // Charts keep most CRDs in crds/, which `template` leaves out.
    for package in chartkit_tests::corpus::packages(&corpus) {
        let out = ctx
            .chartkit()
            .args(["show", "crds"])
            .arg(&package)
            .output()
            .expect("run chartkit");
        for (kind, doc) in documents(&String::from_utf8_lossy(&out.stdout)) {
            if is_crd(&doc, &kind) && seen.insert(crd_name(&doc)) {
                crds.push(doc);
            }
        }
    }
    let crd_file = write_file(ctx.dir(), "crds.yaml", &crds.join("---\n"));
    run_ok(
        kubectl()
            .args(["apply", "--server-side", "--force-conflicts", "-f"])
            .arg(&crd_file),
    );
    run_ok(kubectl().args([
        "wait",
        "--for",
        "condition=established",
        "crd",
        "--all",
        "--timeout",
        "60s",
    ]));
    // The groups the CRDs define: a document of one of them is a custom resource.
    let groups: BTreeSet<String> = crds
        .iter()
        .map(|d| {
            d.lines()
                .skip_while(|l| *l != "spec:")
                .find_map(|l| l.strip_prefix("  group: "))
                .unwrap_or("")
                .trim()
                .to_string()
        })
        .collect();
    let customs: Vec<&String> = others
        .iter()
        .filter(|d| {
            let api = top(d, "apiVersion");
            api.split_once('/').is_some_and(|(g, _)| groups.contains(g))
        })
        .collect();
    let namespaces: BTreeSet<String> = customs
        .iter()
        .filter_map(|d| {
            d.lines()
                .skip_while(|l| *l != "metadata:")
                .take_while(|l| *l == "metadata:" || l.starts_with(' '))
                .find_map(|l| l.strip_prefix("  namespace: "))
                .map(|n| n.trim().trim_matches('"').to_string())
        })
        .collect();
    for namespace in &namespaces {
        if namespace != "default" {
            run_ok(kubectl().args(["create", "namespace", namespace]));
        }
    }
    let mut accepted = 0;
    let mut warned = 0;
    let mut refusals = Vec::new();
    for (i, doc) in customs.iter().enumerate() {
        let file = write_file(ctx.dir(), &format!("cr-{i}.yaml"), doc);
        let out = kubectl()
            .args(["create", "--dry-run=server", "-o", "name", "-f"])
            .arg(&file)
            .output()
            .expect("run kubectl");
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            accepted += 1;
            if stderr.contains("Warning:") {
                warned += 1;
            }
        } else {
            refusals.push(format!(
                "{} {}: {stderr}",
                top(doc, "kind"),
                top(doc, "apiVersion")
            ));
        }
    }
    println!(
        "{test}: {} CRDs installed from {} goldens; {} custom resources sent, {accepted} accepted ({warned} with a warning for a rule not evaluated), {} refused",
        crds.len(),
        goldens.len(),
        customs.len(),
        refusals.len()
    );
    assert!(!crds.is_empty(), "the corpus renders no CRD");
    assert!(
        refusals.is_empty(),
        "custom resources of the corpus were refused:\n{}",
        refusals.join("\n")
    );
}

/// Whether a rendered document is an `apiextensions.k8s.io/v1` CustomResourceDefinition.
fn is_crd(doc: &str, kind: &str) -> bool {
    kind == "CustomResourceDefinition" && top(doc, "apiVersion") == "apiextensions.k8s.io/v1"
}

/// A CRD document's `metadata.name`, read from its text.
fn crd_name(doc: &str) -> String {
    doc.lines()
        .skip_while(|l| *l != "metadata:")
        .find_map(|l| l.strip_prefix("  name: "))
        .unwrap_or("")
        .trim()
        .to_string()
}
