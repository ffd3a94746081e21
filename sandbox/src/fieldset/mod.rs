//! Sets of field paths, as structured-merge-diff keeps them for managed fields: a trie of
//! path elements (`f:name` fields, `k:{...}` items of keyed lists, `v:...` items of sets,
//! `i:N` indexes), its FieldsV1 JSON form, and the set operations server-side apply uses.
//! [`walk`] computes sets from objects and a schema, compares, merges and prunes objects.

pub mod walk;

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

/// One step of a path.
#[derive(Debug, Clone)]
pub enum PathElement {
    Field(String),
    /// A keyed list's item: its key fields and values, sorted by field name.
    Key(Vec<(String, Value)>),
    /// A set's item.
    Value(Value),
    Index(usize),
}

impl PathElement {
    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }

    /// The element as paths print in messages: `.name`, `[name="x"]`, `[="v"]`, `[0]`.
    pub fn display(&self) -> String {
        match self {
            PathElement::Field(f) => format!(".{f}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{k}={}", value_string(v)))
                    .collect();
                format!("[{}]", parts.join(","))
            }
            PathElement::Value(v) => format!("[={}]", value_string(v)),
            PathElement::Index(i) => format!("[{i}]"),
        }
    }

    /// The element as FieldsV1 writes it: `f:name`, `k:{"name":"x"}`, `v:"x"`, `i:0`.
    pub fn encode(&self) -> String {
        match self {
            PathElement::Field(f) => format!("f:{f}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| {
                        format!("{}:{}", json_text(&Value::String(k.clone())), json_text(v))
                    })
                    .collect();
                format!("k:{{{}}}", parts.join(","))
            }
            PathElement::Value(v) => format!("v:{}", json_text(v)),
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    /// Reads an element FieldsV1 wrote; `Ok(None)` for a kind of element not known here
    /// (skipped, as structured-merge-diff skips them).
    pub fn decode(s: &str) -> Result<Option<PathElement>, String> {
        let b = s.as_bytes();
        if b.len() < 2 {
            return Err(format!("key must be 2 characters long: {s}"));
        }
        if b[1] != b':' {
            return Err(format!("missing colon: {s}"));
        }
        let rest = &s[2..];
        Ok(Some(match b[0] {
            b'f' => PathElement::Field(rest.to_string()),
            b'v' => PathElement::Value(serde_json::from_str(rest).map_err(|e| e.to_string())?),
            b'k' => {
                let v: Value = serde_json::from_str(rest).map_err(|e| e.to_string())?;
                let Value::Object(m) = v else {
                    return Err(format!("expected an object in {s}"));
                };
                let mut fields: Vec<(String, Value)> = m.into_iter().collect();
                fields.sort_by(|a, b| a.0.cmp(&b.0));
                PathElement::Key(fields)
            }
            b'i' => PathElement::Index(rest.parse().map_err(|_| format!("bad index: {s}"))?),
            _ => return Ok(None),
        }))
    }
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => {
                for ((ka, va), (kb, vb)) in a.iter().zip(b) {
                    let c = ka.cmp(kb).then_with(|| compare_values(va, vb));
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                a.len().cmp(&b.len())
            }
            (PathElement::Value(a), PathElement::Value(b)) => compare_values(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

/// A path as messages print it: `.spec.template.spec.containers[name="web"].image`.
pub fn path_string(path: &[PathElement]) -> String {
    path.iter().map(PathElement::display).collect()
}

/// structured-merge-diff's order of values: numbers (ints and floats compared as
/// numbers), then strings, booleans, lists, maps, null.
pub fn compare_values(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) if !x.is_f64() && !y.is_f64() => i.cmp(&j),
            _ => {
                let (f, g) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
                f.partial_cmp(&g).unwrap_or(Ordering::Equal)
            }
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let c = compare_values(p, q);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            let mut xs: Vec<(&String, &Value)> = x.iter().collect();
            let mut ys: Vec<(&String, &Value)> = y.iter().collect();
            xs.sort_by(|p, q| p.0.cmp(q.0));
            ys.sort_by(|p, q| p.0.cmp(q.0));
            for ((kp, vp), (kq, vq)) in xs.iter().zip(&ys) {
                let c = kp.cmp(kq).then_with(|| compare_values(vp, vq));
                if c != Ordering::Equal {
                    return c;
                }
            }
            xs.len().cmp(&ys.len())
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

/// Equality as structured-merge-diff sees it: `1` and `1.0` are the same number.
pub fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => compare_values(a, b) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| values_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| values_equal(v, w)))
        }
        _ => a == b,
    }
}

/// A value as structured-merge-diff prints it in paths (`"x"`, `80`, `true`).
fn value_string(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::String(s) => format!("{s:?}"),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(value_string).collect::<Vec<_>>().join(",")
        ),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| format!("{k}={}", value_string(v)))
            .collect(),
        other => json_text(other),
    }
}

/// JSON as Go writes it: integral floats without a fraction, `<`, `>` and `&` escaped.
fn json_text(v: &Value) -> String {
    match v {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(0.0);
            if f.fract() == 0.0 && f.abs() < 1e21 {
                format!("{}", f as i64)
            } else {
                n.to_string()
            }
        }
        Value::String(s) => {
            let text = serde_json::to_string(s).unwrap_or_default();
            text.replace('<', "\\u003c")
                .replace('>', "\\u003e")
                .replace('&', "\\u0026")
                .replace('\u{2028}', "\\u2028")
                .replace('\u{2029}', "\\u2029")
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(json_text).collect::<Vec<_>>().join(",")
        ),
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| {
                    format!(
                        "{}:{}",
                        json_text(&Value::String(k.clone())),
                        json_text(&m[k])
                    )
                })
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        other => other.to_string(),
    }
}

/// A set of field paths. A path is a member when the field itself is owned; children
/// hold the paths below an element.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Set {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, Set>,
}

impl Set {
    pub fn new() -> Set {
        Set::default()
    }

    /// Adds a path (its parents are not added). The empty path (the whole object) is
    /// never tracked.
    pub fn insert(&mut self, path: &[PathElement]) {
        let Some((last, parents)) = path.split_last() else {
            return;
        };
        let mut set = self;
        for pe in parents {
            set = set.children.entry(pe.clone()).or_default();
        }
        set.members.insert(last.clone());
    }

    pub fn has(&self, path: &[PathElement]) -> bool {
        let Some((last, parents)) = path.split_last() else {
            return false;
        };
        let mut set = self;
        for pe in parents {
            match set.children.get(pe) {
                Some(s) => set = s,
                None => return false,
            }
        }
        set.members.contains(last)
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.values().all(Set::is_empty)
    }

    /// The paths below `pe`, without it.
    pub fn with_prefix(&self, pe: &PathElement) -> Option<&Set> {
        self.children.get(pe).filter(|s| !s.is_empty())
    }

    pub fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (pe, child) in &other.children {
            let merged = match out.children.get(pe) {
                Some(mine) => mine.union(child),
                None => child.clone(),
            };
            out.children.insert(pe.clone(), merged);
        }
        out
    }

    pub fn intersection(&self, other: &Set) -> Set {
        let mut out = Set::new();
        out.members = self.members.intersection(&other.members).cloned().collect();
        for (pe, child) in &self.children {
            if let Some(theirs) = other.children.get(pe) {
                let both = child.intersection(theirs);
                if !both.is_empty() {
                    out.children.insert(pe.clone(), both);
                }
            }
        }
        out
    }

    /// Paths of `self` not in `other` (a parent in `other` does not remove its
    /// children).
    pub fn difference(&self, other: &Set) -> Set {
        let mut out = Set::new();
        out.members = self.members.difference(&other.members).cloned().collect();
        for (pe, child) in &self.children {
            let rest = match other.children.get(pe) {
                Some(theirs) => child.difference(theirs),
                None => child.clone(),
            };
            if !rest.is_empty() {
                out.children.insert(pe.clone(), rest);
            }
        }
        out
    }

    /// Paths of `self` not in `other`, where a member of `other` also removes everything
    /// below it.
    pub fn recursive_difference(&self, other: &Set) -> Set {
        let mut out = Set::new();
        out.members = self.members.difference(&other.members).cloned().collect();
        for (pe, child) in &self.children {
            if other.members.contains(pe) {
                continue;
            }
            let rest = match other.children.get(pe) {
                Some(theirs) => child.recursive_difference(theirs),
                None => child.clone(),
            };
            if !rest.is_empty() {
                out.children.insert(pe.clone(), rest);
            }
        }
        out
    }

    /// Every member path, parents before children and members before the children of
    /// the same level (structured-merge-diff's order).
    pub fn paths(&self) -> Vec<Vec<PathElement>> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Vec<PathElement>>) {
        for m in &self.members {
            let mut p = prefix.clone();
            p.push(m.clone());
            out.push(p);
        }
        for (pe, child) in &self.children {
            prefix.push(pe.clone());
            child.collect(prefix, out);
            prefix.pop();
        }
    }

    pub(crate) fn members(&self) -> &BTreeSet<PathElement> {
        &self.members
    }

    pub(crate) fn children(&self) -> &BTreeMap<PathElement, Set> {
        &self.children
    }

    pub(crate) fn from_parts(
        members: BTreeSet<PathElement>,
        children: BTreeMap<PathElement, Set>,
    ) -> Set {
        Set { members, children }
    }

    /// The FieldsV1 form: `{"f:spec": {"f:replicas": {}}, "f:metadata": {...}}`, a member
    /// that also has children marked with `".": {}`.
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(self.emit(false))
    }

    fn emit(&self, include_self: bool) -> Map<String, Value> {
        let mut out = Map::new();
        if include_self && !self.is_empty() {
            out.insert(".".into(), Value::Object(Map::new()));
        }
        let mut keys: BTreeSet<&PathElement> = self.members.iter().collect();
        keys.extend(
            self.children
                .iter()
                .filter(|(_, s)| !s.is_empty())
                .map(|(pe, _)| pe),
        );
        for pe in keys {
            let member = self.members.contains(pe);
            let value = match self.children.get(pe).filter(|s| !s.is_empty()) {
                Some(child) => child.emit(member),
                None => Map::new(),
            };
            out.insert(pe.encode(), Value::Object(value));
        }
        out
    }

    /// Reads the FieldsV1 form.
    pub fn from_fields_v1(fields: &Value) -> Result<Set, String> {
        match fields {
            Value::Object(m) => Ok(Set::read(m)?.0),
            Value::Null => Ok(Set::new()),
            _ => Err("FieldsV1 must be an object".into()),
        }
    }

    /// The set under a FieldsV1 object, and whether the object marks its own path.
    fn read(m: &Map<String, Value>) -> Result<(Set, bool), String> {
        let mut set = Set::new();
        let mut is_member = m.is_empty();
        for (key, value) in m {
            if key == "." {
                is_member = true;
                continue;
            }
            let Some(pe) = PathElement::decode(key)? else {
                continue;
            };
            let Value::Object(inner) = value else {
                return Err(format!("expected an object at {key}"));
            };
            let (child, child_member) = Set::read(inner)?;
            if child_member {
                set.members.insert(pe.clone());
            }
            if !child.is_empty() {
                set.children.insert(pe, child);
            }
        }
        Ok((set, is_member))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(name: &str) -> PathElement {
        PathElement::Field(name.into())
    }

    #[test]
    fn fields_v1_round_trips_in_order() {
        let text = json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {
                "f:replicas": {},
                "f:template": {"f:spec": {"f:containers": {
                    "k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}
                }}}
            }
        });
        let set = Set::from_fields_v1(&text).unwrap();
        assert!(set.has(&[f("spec"), f("replicas")]));
        assert!(set.has(&[f("metadata"), f("labels")]));
        assert!(!set.has(&[f("metadata")]));
        assert_eq!(set.to_fields_v1(), text);
        assert_eq!(
            serde_json::to_string(&set.to_fields_v1()).unwrap(),
            serde_json::to_string(&text).unwrap()
        );
    }

    #[test]
    fn keys_sort_and_print_as_the_api_server_does() {
        let pe = PathElement::Key(vec![
            ("containerPort".into(), json!(80)),
            ("protocol".into(), json!("TCP")),
        ]);
        assert_eq!(pe.encode(), r#"k:{"containerPort":80,"protocol":"TCP"}"#);
        assert_eq!(pe.display(), r#"[containerPort=80,protocol="TCP"]"#);
        assert!(f("z") < pe);
        assert!(PathElement::Value(json!(1)) < PathElement::Value(json!("a")));
    }

    #[test]
    fn differences_follow_structured_merge_diff() {
        let mut a = Set::new();
        a.insert(&[f("spec"), f("replicas")]);
        a.insert(&[f("spec"), f("paused")]);
        let mut b = Set::new();
        b.insert(&[f("spec")]);
        assert_eq!(a.difference(&b), a);
        assert!(a.recursive_difference(&b).is_empty());
        let mut c = Set::new();
        c.insert(&[f("spec"), f("paused")]);
        assert_eq!(
            a.difference(&c).paths(),
            vec![vec![f("spec"), f("replicas")]]
        );
        assert_eq!(a.intersection(&c), c);
    }
}
