//! A plan as `chartkit diff` reports it: one entry per object that changes, with the
//! lines of its YAML that change, following helm-diff's rules (which objects count,
//! the order, how Secrets are masked, what `--suppress` and
//! `--suppress-output-line-regex` do). Drawing the entries (colours, context, formats)
//! is the command line's.

use base64::Engine as _;
use chartkit_regexp::Regexp;
use serde_json::{Map, Value};
use similar::{Algorithm, DiffOp};

use crate::ownership::RESOURCE_POLICY;
use crate::plan::{Plan, Planned};

/// How a plan is compared.
#[derive(Debug, Default)]
pub struct CompareOptions {
    /// Secret values as the objects have them (base64 `data`), unmasked.
    pub show_secrets: bool,
    /// Secret values decoded, under `stringData`.
    pub show_secrets_decoded: bool,
    /// Kinds whose changes are reported without their lines.
    pub suppressed_kinds: Vec<String>,
    /// Lines matching one of these are left out of the diff.
    pub suppressed_lines: Vec<Regexp>,
    /// Hooks are compared too (helm-diff's default; `--no-hooks` leaves them out).
    pub hooks: bool,
    /// Test hooks are compared too (`--include-tests`).
    pub tests: bool,
}

/// What happens to an object (helm-diff's change types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeType {
    Add,
    Remove,
    Modify,
    /// Changed, but every changed line matched `--suppress-output-line-regex`.
    ModifySuppressed,
}

impl ChangeType {
    /// helm-diff's name for it (`--output json`).
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeType::Add => "ADD",
            ChangeType::Remove => "REMOVE",
            ChangeType::Modify => "MODIFY",
            ChangeType::ModifySuppressed => "MODIFY_SUPPRESSED",
        }
    }
}

/// Whether a line of the diff is on both sides, only before, or only after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delta {
    Common,
    Removed,
    Added,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub delta: Delta,
    pub text: String,
}

/// One object that changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The apiVersion without its version: the group (`apps`), or `v1` for the core group,
    /// as helm-diff shows it.
    pub api: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub change: ChangeType,
    /// The kind is in `--suppress`: the change is reported, its lines are not.
    pub suppressed: bool,
    /// The whole object, before and after, line by line.
    pub lines: Vec<Line>,
}

impl Entry {
    /// helm-diff's name of the object: `default, web, Deployment (apps)`.
    pub fn key(&self) -> String {
        format!(
            "{}, {}, {} ({})",
            self.namespace, self.name, self.kind, self.api
        )
    }
}

/// The changes of a plan, in helm-diff's order: changed objects, then removed ones,
/// then added ones, each by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    pub entries: Vec<Entry>,
}

impl Comparison {
    /// Whether anything changes (line suppression does not make a change none, as in
    /// helm-diff: `--detailed-exitcode` still reports it).
    pub fn has_changes(&self) -> bool {
        !self.entries.is_empty()
    }
}

/// The fields that differ between any live object and a dry run's answer for it without
/// saying anything about the change, left out of the comparison: `status` (the
/// controllers', not the chart's), and in `metadata`: `managedFields` (timestamps of
/// every write), `resourceVersion`, `generation` (bumped by any spec change, already
/// shown by the spec's own lines), `uid` and `creationTimestamp` (a dry-run create
/// makes up new ones). helm-diff drops the same fields.
const CHURN: [&str; 5] = [
    "managedFields",
    "resourceVersion",
    "generation",
    "uid",
    "creationTimestamp",
];

/// Compares each object of a plan.
pub fn compare(plan: &Plan, options: &CompareOptions) -> Comparison {
    let mut modified = Vec::new();
    let mut removed = Vec::new();
    let mut added = Vec::new();
    for planned in &plan.objects {
        if !options.hooks && !planned.hook_events.is_empty() {
            continue;
        }
        if !options.tests && planned.hook_events.iter().any(|e| is_test_event(e)) {
            continue;
        }
        if let Some(entry) = compare_one(planned, options) {
            match entry.change {
                ChangeType::Add => added.push(entry),
                ChangeType::Remove => removed.push(entry),
                _ => modified.push(entry),
            }
        }
    }
    let mut entries = Vec::new();
    for mut group in [modified, removed, added] {
        group.sort_by_key(Entry::key);
        entries.extend(group);
    }
    for entry in &mut entries {
        suppress_lines(entry, &options.suppressed_lines);
    }
    Comparison { entries }
}

/// `test`, and Helm 2's `test-success`, which helm-diff also leaves out.
fn is_test_event(event: &str) -> bool {
    event == "test" || event == "test-success"
}

fn compare_one(planned: &Planned, options: &CompareOptions) -> Option<Entry> {
    let current = planned.current.as_ref().map(tidy);
    let target = planned.target.as_ref().map(tidy);
    let change = match (&current, &target) {
        (None, None) => return None,
        (Some(c), Some(t)) if c == t => return None,
        (Some(_), Some(_)) => ChangeType::Modify,
        (None, Some(_)) => ChangeType::Add,
        (Some(c), None) => {
            // helm-diff, like the release, leaves kept objects alone.
            let policy = c["metadata"]["annotations"][RESOURCE_POLICY].as_str();
            if policy.is_some_and(|p| p.trim().eq_ignore_ascii_case("keep")) {
                return None;
            }
            ChangeType::Remove
        }
    };
    let (current, target) = if planned.kind == "Secret" {
        present_secrets(current, target, options)
    } else {
        (current, target)
    };
    let before = current.as_ref().map(yaml_lines).unwrap_or_default();
    let after = target.as_ref().map(yaml_lines).unwrap_or_default();
    let lines = diff_lines(&before, &after);
    if !lines.iter().any(|l| l.delta != Delta::Common) {
        return None;
    }
    Some(Entry {
        api: api_base(&planned.api_version).to_string(),
        kind: planned.kind.clone(),
        namespace: planned.namespace.clone(),
        name: planned.name.clone(),
        change,
        suppressed: options.suppressed_kinds.contains(&planned.kind),
        lines,
    })
}

/// `apps/v1` → `apps`, `v1` → `v1`.
fn api_base(api_version: &str) -> &str {
    api_version
        .rsplit_once('/')
        .map_or(api_version, |(group, _)| group)
}

/// The object without the fields in [`CHURN`] and `status`.
fn tidy(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(map) = object.as_object_mut() {
        map.remove("status");
    }
    if let Some(metadata) = object["metadata"].as_object_mut() {
        for field in CHURN {
            metadata.remove(field);
        }
    }
    object
}

/// Secrets with their values masked as helm-diff masks them: each key of `data` and
/// `stringData` (merged, as the API server merges them) shown as
/// `REDACTED # (N bytes)` when both sides have the same value, else as
/// `-------- # (N bytes)` before and `++++++++ # (N bytes)` after, under `data`. With
/// `--show-secrets-decoded`, the decoded values under `stringData`; with
/// `--show-secrets`, the objects as they are.
fn present_secrets(
    current: Option<Value>,
    target: Option<Value>,
    options: &CompareOptions,
) -> (Option<Value>, Option<Value>) {
    if options.show_secrets && !options.show_secrets_decoded {
        return (current, target);
    }
    let old = current.as_ref().map(secret_values);
    let new = target.as_ref().map(secret_values);
    let shown =
        |object: Option<Value>, values: &Option<Values>, other: &Option<Values>, changed: &str| {
            let mut object = object?;
            let values = values.as_ref()?;
            let mut shown = Map::new();
            for (key, value) in values {
                let text = if options.show_secrets_decoded {
                    String::from_utf8_lossy(value).into_owned()
                } else if other.as_ref().and_then(|o| o.get(key)) == Some(value) {
                    format!("REDACTED # ({} bytes)", value.len())
                } else {
                    format!("{changed} # ({} bytes)", value.len())
                };
                shown.insert(key.clone(), Value::String(text));
            }
            let map = object.as_object_mut()?;
            map.remove("data");
            map.remove("stringData");
            if !shown.is_empty() {
                let field = if options.show_secrets_decoded {
                    "stringData"
                } else {
                    "data"
                };
                map.insert(field.to_string(), Value::Object(shown));
            }
            Some(object)
        };
    let before = shown(current.clone(), &old, &new, "--------").or(current);
    let after = shown(target.clone(), &new, &old, "++++++++").or(target);
    (before, after)
}

type Values = std::collections::BTreeMap<String, Vec<u8>>;

/// A Secret's values, decoded: `data` with `stringData` over it, as the API server
/// merges them.
fn secret_values(secret: &Value) -> Values {
    let mut values = Values::new();
    if let Some(data) = secret["data"].as_object() {
        for (key, value) in data {
            let encoded = value.as_str().unwrap_or_default();
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                // Not base64: the API server would have refused it; show it as it is.
                .unwrap_or_else(|_| encoded.as_bytes().to_vec());
            values.insert(key.clone(), decoded);
        }
    }
    if let Some(data) = secret["stringData"].as_object() {
        for (key, value) in data {
            let text = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            values.insert(key.clone(), text.into_bytes());
        }
    }
    values
}

/// The object as YAML (keys sorted, as helm-diff's `sigs.k8s.io/yaml` writes them),
/// line by line.
fn yaml_lines(object: &Value) -> Vec<String> {
    chartkit_yaml::to_yaml(&yaml_value(object))
        .lines()
        .map(str::to_string)
        .collect()
}

/// JSON as the YAML writer's value, integers kept integers.
fn yaml_value(value: &Value) -> chartkit_yaml::Value {
    use chartkit_yaml::Value as Y;
    match value {
        Value::Null => Y::Null,
        Value::Bool(b) => Y::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Y::Int(i),
            None => Y::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => Y::String(s.clone()),
        Value::Array(items) => Y::Seq(items.iter().map(yaml_value).collect()),
        Value::Object(map) => Y::Map(
            map.iter()
                .map(|(k, v)| (k.clone(), yaml_value(v)))
                .collect(),
        ),
    }
}

/// The lines of `before` and `after` in order, each marked as on both sides or on one.
fn diff_lines(before: &[String], after: &[String]) -> Vec<Line> {
    let mut lines = Vec::new();
    let line = |delta, text: &String| Line {
        delta,
        text: text.clone(),
    };
    for op in similar::capture_diff_slices(Algorithm::Myers, before, after) {
        match op {
            DiffOp::Equal { old_index, len, .. } => lines.extend(
                before[old_index..old_index + len]
                    .iter()
                    .map(|t| line(Delta::Common, t)),
            ),
            DiffOp::Delete {
                old_index, old_len, ..
            } => lines.extend(
                before[old_index..old_index + old_len]
                    .iter()
                    .map(|t| line(Delta::Removed, t)),
            ),
            DiffOp::Insert {
                new_index, new_len, ..
            } => lines.extend(
                after[new_index..new_index + new_len]
                    .iter()
                    .map(|t| line(Delta::Added, t)),
            ),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                lines.extend(
                    before[old_index..old_index + old_len]
                        .iter()
                        .map(|t| line(Delta::Removed, t)),
                );
                lines.extend(
                    after[new_index..new_index + new_len]
                        .iter()
                        .map(|t| line(Delta::Added, t)),
                );
            }
        }
    }
    lines
}

/// `--suppress-output-line-regex`: matching lines go, whichever side they are on; a
/// change left with no changed line keeps its header (helm-diff's "has changed, but
/// diff is empty after suppression" for a modification).
fn suppress_lines(entry: &mut Entry, patterns: &[Regexp]) {
    if patterns.is_empty() {
        return;
    }
    entry
        .lines
        .retain(|line| !patterns.iter().any(|p| p.is_match(&line.text)));
    if entry.lines.iter().all(|l| l.delta == Delta::Common) {
        entry.lines.clear();
        if entry.change == ChangeType::Modify {
            entry.change = ChangeType::ModifySuppressed;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn planned(kind: &str, current: Option<Value>, target: Option<Value>) -> Planned {
        Planned {
            api_version: if kind == "Deployment" {
                "apps/v1"
            } else {
                "v1"
            }
            .to_string(),
            kind: kind.to_string(),
            namespace: "default".to_string(),
            name: "web".to_string(),
            current,
            target,
            hook_events: Vec::new(),
        }
    }

    fn text(entry: &Entry) -> Vec<String> {
        entry
            .lines
            .iter()
            .map(|l| {
                let mark = match l.delta {
                    Delta::Common => " ",
                    Delta::Removed => "-",
                    Delta::Added => "+",
                };
                format!("{mark}{}", l.text)
            })
            .collect()
    }

    #[test]
    fn churning_fields_make_no_change() {
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "web", "resourceVersion": "5", "uid": "a",
                "managedFields": [{"manager": "x"}], "generation": 1,
                "creationTimestamp": "2024-01-01T00:00:00Z"},
            "data": {"a": "1"}, "status": {"x": 1}});
        let answer = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "web", "resourceVersion": "6", "uid": "b"},
            "data": {"a": "1"}});
        let plan = Plan {
            objects: vec![planned("ConfigMap", Some(live), Some(answer))],
            warnings: Vec::new(),
        };
        assert!(!compare(&plan, &CompareOptions::default()).has_changes());
    }

    #[test]
    fn a_changed_field_is_a_removed_and_an_added_line_among_common_ones() {
        let before = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"}, "spec": {"replicas": 1}});
        let after = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"}, "spec": {"replicas": 3}});
        let plan = Plan {
            objects: vec![planned("Deployment", Some(before), Some(after))],
            warnings: Vec::new(),
        };
        let comparison = compare(&plan, &CompareOptions::default());
        let entry = &comparison.entries[0];
        assert_eq!(entry.key(), "default, web, Deployment (apps)");
        assert_eq!(entry.change, ChangeType::Modify);
        assert_eq!(
            text(entry),
            [
                " apiVersion: apps/v1",
                " kind: Deployment",
                " metadata:",
                "   name: web",
                " spec:",
                "-  replicas: 1",
                "+  replicas: 3",
            ]
        );
    }

    #[test]
    fn entries_come_modified_then_removed_then_added_each_by_name() {
        let object = |name: &str, value: &str| {
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                "data": {"a": value}})
        };
        let mut objects = Vec::new();
        for (name, current, target) in [
            ("z-added", None, Some(object("z-added", "1"))),
            ("a-added", None, Some(object("a-added", "1"))),
            ("m-removed", Some(object("m-removed", "1")), None),
            (
                "y-changed",
                Some(object("y-changed", "1")),
                Some(object("y-changed", "2")),
            ),
        ] {
            let mut p = planned("ConfigMap", current, target);
            p.name = name.to_string();
            objects.push(p);
        }
        let comparison = compare(
            &Plan {
                objects,
                warnings: Vec::new(),
            },
            &CompareOptions::default(),
        );
        let order: Vec<_> = comparison
            .entries
            .iter()
            .map(|e| (e.name.as_str(), e.change.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                ("y-changed", "MODIFY"),
                ("m-removed", "REMOVE"),
                ("a-added", "ADD"),
                ("z-added", "ADD"),
            ]
        );
    }

    #[test]
    fn secrets_are_masked_with_their_sizes() {
        let before = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "web"},
            "data": {"same": "c2FtZQ==", "pw": "b2xk"}});
        let after = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "web"},
            "data": {"same": "c2FtZQ=="}, "stringData": {"pw": "newer"}});
        let plan = Plan {
            objects: vec![planned("Secret", Some(before), Some(after))],
            warnings: Vec::new(),
        };
        let comparison = compare(&plan, &CompareOptions::default());
        let lines = text(&comparison.entries[0]);
        assert!(
            lines.contains(&"-  pw: '-------- # (3 bytes)'".to_string()),
            "{lines:?}"
        );
        assert!(lines.contains(&"+  pw: '++++++++ # (5 bytes)'".to_string()));
        assert!(lines.contains(&"   same: 'REDACTED # (4 bytes)'".to_string()));
        assert!(
            !lines
                .iter()
                .any(|l| l.contains("b2xk") || l.contains("newer"))
        );

        let shown = compare(
            &plan,
            &CompareOptions {
                show_secrets: true,
                ..Default::default()
            },
        );
        let lines = text(&shown.entries[0]);
        assert!(lines.contains(&"-  pw: b2xk".to_string()), "{lines:?}");
        assert!(lines.contains(&"+  pw: newer".to_string()));
    }

    #[test]
    fn an_equal_secret_is_no_change_and_an_unchanged_masked_one_is_none_either() {
        let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "web"},
            "data": {"pw": "b2xk"}});
        let plan = Plan {
            objects: vec![planned("Secret", Some(secret.clone()), Some(secret))],
            warnings: Vec::new(),
        };
        assert!(!compare(&plan, &CompareOptions::default()).has_changes());
    }

    #[test]
    fn suppressed_lines_leave_a_header_and_still_count_as_a_change() {
        let before = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web"},
            "data": {"version": "1"}});
        let after = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web"},
            "data": {"version": "2"}});
        let plan = Plan {
            objects: vec![planned("ConfigMap", Some(before), Some(after))],
            warnings: Vec::new(),
        };
        let options = CompareOptions {
            suppressed_lines: vec![Regexp::new("version: ").unwrap()],
            ..Default::default()
        };
        let comparison = compare(&plan, &options);
        assert!(comparison.has_changes());
        assert_eq!(comparison.entries[0].change, ChangeType::ModifySuppressed);
        assert!(comparison.entries[0].lines.is_empty());
    }

    #[test]
    fn kept_objects_are_not_removed_and_hooks_follow_the_options() {
        let kept = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "web", "annotations": {"helm.sh/resource-policy": "keep"}}});
        let mut hook = planned(
            "ConfigMap",
            None,
            Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "h"}})),
        );
        hook.hook_events = vec!["test".to_string()];
        let plan = Plan {
            objects: vec![planned("ConfigMap", Some(kept), None), hook],
            warnings: Vec::new(),
        };
        let options = CompareOptions {
            hooks: true,
            ..Default::default()
        };
        assert!(!compare(&plan, &options).has_changes());
        let options = CompareOptions {
            hooks: true,
            tests: true,
            ..Default::default()
        };
        assert_eq!(compare(&plan, &options).entries.len(), 1);
    }
}
