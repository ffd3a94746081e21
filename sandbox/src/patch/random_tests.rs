//! Random objects and patches (a fixed-seed generator, so runs repeat): strategic merge
//! patch, merge patch, JSON patch, server-side apply and update tracking never panic, and
//! an apply of an object onto itself changes nothing. The fuzz target
//! `fuzz/fuzz_targets/sandbox_patch.rs` explores the same operations with libFuzzer.

use serde_json::{Map, Value, json};

use crate::resources::Registry;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const KEYS: &[&str] = &[
    "spec",
    "template",
    "containers",
    "name",
    "image",
    "env",
    "ports",
    "containerPort",
    "protocol",
    "metadata",
    "labels",
    "finalizers",
    "replicas",
    "strategy",
    "rollingUpdate",
    "volumes",
    "$patch",
    "$retainKeys",
    "$setElementOrder/containers",
    "$deleteFromPrimitiveList/finalizers",
    "tolerations",
    "selector",
    "matchLabels",
    "value",
    "args",
    "x",
];
const WORDS: &[&str] = &["a", "web", "replace", "delete", "merge", "TCP", "", "name"];

fn value(rng: &mut Rng, depth: usize) -> Value {
    match if depth > 4 {
        rng.below(4)
    } else {
        rng.below(7)
    } {
        0 => Value::Null,
        1 => json!(rng.below(100)),
        2 => json!(rng.pick(WORDS)),
        3 => json!(rng.below(2) == 0),
        4 | 5 => {
            let mut m = Map::new();
            for _ in 0..rng.below(4) {
                m.insert(rng.pick(KEYS).to_string(), value(rng, depth + 1));
            }
            Value::Object(m)
        }
        _ => Value::Array((0..rng.below(4)).map(|_| value(rng, depth + 1)).collect()),
    }
}

/// An object shaped like a Deployment, with random parts.
fn object(rng: &mut Rng) -> Value {
    let mut containers = Vec::new();
    for _ in 0..rng.below(3) {
        let mut c = json!({"name": rng.pick(WORDS), "image": "nginx"});
        if rng.below(2) == 0 {
            c["ports"] = json!([{"containerPort": rng.below(3)}]);
        }
        if rng.below(3) == 0 {
            c[rng.pick(KEYS)] = value(rng, 3);
        }
        containers.push(c);
    }
    let mut d = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "finalizers": ["a"]},
        "spec": {"replicas": 1, "template": {"spec": {"containers": containers}}},
    });
    if rng.below(2) == 0 {
        d["spec"][rng.pick(KEYS)] = value(rng, 2);
    }
    d
}

#[test]
fn random_documents_and_patches_never_panic() {
    let registry = Registry::with_builtins();
    let mut rng = Rng(0x5eed_1234_abcd_9876);
    for key in ["apps/deployments", "/pods", "/configmaps"] {
        let def = registry.by_key(key).unwrap();
        let api_version = def.api_version(&def.versions[0]);
        for _ in 0..300 {
            let doc = object(&mut rng);
            let patch = if rng.below(2) == 0 {
                object(&mut rng)
            } else {
                value(&mut rng, 0)
            };
            let _ = super::strategic_merge_patch(&def, &doc, &patch);
            let _ = super::merge_patch(&doc, &patch);
            let _ = super::json_patch(
                &doc,
                &json!([{"op": "add", "path": "/spec/x", "value": patch}]),
            );
            let _ = crate::fieldmanager::apply(
                &def,
                Some(&doc),
                &patch,
                "one",
                &api_version,
                "",
                rng.below(2) == 0,
            );
            let mut new = patch.clone();
            if new.is_object() {
                crate::fieldmanager::record_update(
                    &def,
                    Some(&doc),
                    &mut new,
                    "two",
                    &api_version,
                    "",
                );
            }
            // Applying an object that is valid for the type onto itself changes nothing.
            if let Ok(applied) =
                crate::fieldmanager::apply(&def, None, &doc, "one", &api_version, "", false)
                && let Ok(again) = crate::fieldmanager::apply(
                    &def,
                    Some(&applied),
                    &doc,
                    "one",
                    &api_version,
                    "",
                    false,
                )
            {
                let strip = |v: &Value| {
                    let mut v = v.clone();
                    v["metadata"]
                        .as_object_mut()
                        .map(|m| m.shift_remove("managedFields"));
                    v
                };
                assert_eq!(strip(&applied), strip(&again), "{doc}");
            }
        }
    }
}
