//! Walks of objects along their schema, as structured-merge-diff does them: the set of
//! fields an object has, the fields two objects differ in, an applied configuration
//! merged into a live object, and fields removed from an object.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::{PathElement, Set, path_string, values_equal};
use crate::schema::decode::go_value;
use crate::schema::{Atom, ListKind, Node};

/// The identity of a list item: its key fields, or itself for a set.
pub fn item_element(list: &Node<'_>, item: &Value) -> Result<PathElement, String> {
    match list.list_kind() {
        ListKind::Atomic => Err("invalid indexing of non-associative list".into()),
        ListKind::Set => match item {
            Value::Object(_) => {
                Err("associative list without keys has an element that's a map type".into())
            }
            Value::Array(_) => Err("not supported: associative list with lists as elements".into()),
            Value::Null => {
                Err("associative list without keys has an element that's an explicit null".into())
            }
            v => Ok(PathElement::Value(v.clone())),
        },
        ListKind::Keyed(keys) => {
            let m = match item {
                Value::Object(m) => m,
                Value::Null => {
                    return Err("associative list with keys may not have a null element".into());
                }
                _ => return Err("associative list with keys may not have non-map elements".into()),
            };
            let items = list.items();
            let mut fields = Vec::new();
            for key in &keys {
                if let Some(v) = m.get(*key) {
                    fields.push((key.to_string(), v.clone()));
                } else if let Some(d) = items.default_of(key) {
                    fields.push((key.to_string(), d.clone()));
                }
            }
            if !keys.is_empty() && fields.is_empty() {
                let quoted: Vec<String> = keys.iter().map(|k| format!("{k:?}")).collect();
                return Err(format!(
                    "associative list with keys has an element that omits all key fields [{}] (and doesn't have default values for any key fields)",
                    quoted.join(" ")
                ));
            }
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(PathElement::Key(fields))
        }
    }
}

/// The atom of a value at a node, with a value of the wrong shape read as a leaf.
fn shape(node: &Node<'_>, value: Option<&Value>) -> Atom {
    let atom = node.atom(value);
    match (atom, value) {
        (Atom::Map, Some(Value::Object(_)) | None | Some(Value::Null)) => Atom::Map,
        (Atom::List, Some(Value::Array(_)) | None | Some(Value::Null)) => Atom::List,
        (Atom::Map | Atom::List, _) => Atom::Leaf,
        (other, _) => other,
    }
}

/// The fields `value` sets: every leaf, every item of a granular list, every empty or
/// null field and every key of a map.
pub fn to_set(node: &Node<'_>, value: &Value) -> Set {
    let mut set = Set::new();
    fields_of(node, value, &mut Vec::new(), &mut set);
    set
}

fn fields_of(node: &Node<'_>, value: &Value, path: &mut Vec<PathElement>, set: &mut Set) {
    match shape(node, Some(value)) {
        Atom::Scalar | Atom::Leaf => set.insert(path),
        Atom::List => {
            if node.list_kind() == ListKind::Atomic {
                set.insert(path);
                return;
            }
            let Value::Array(items) = value else { return };
            let mut seen = BTreeSet::new();
            let mut duplicates = BTreeSet::new();
            let pes: Vec<Option<PathElement>> =
                items.iter().map(|i| item_element(node, i).ok()).collect();
            for pe in pes.iter().flatten() {
                if !seen.insert(pe.clone()) && duplicates.insert(pe.clone()) {
                    path.push(pe.clone());
                    set.insert(path);
                    path.pop();
                }
            }
            let item_node = node.items();
            for (item, pe) in items.iter().zip(pes) {
                let Some(pe) = pe else { continue };
                if duplicates.contains(&pe) {
                    continue;
                }
                path.push(pe);
                fields_of(&item_node, item, path, set);
                set.insert(path);
                path.pop();
            }
        }
        Atom::Map => {
            if node.map_atomic() {
                set.insert(path);
                return;
            }
            let Value::Object(m) = value else { return };
            for (key, child) in m {
                path.push(PathElement::Field(key.clone()));
                let declared = node.field(key);
                if let Some(next) = declared.or_else(|| node.element()) {
                    fields_of(&next, child, path, set);
                }
                let empty = child.is_null() || child.as_object().is_some_and(Map::is_empty);
                if empty || declared.is_none() {
                    set.insert(path);
                }
                path.pop();
            }
        }
    }
}

/// Fields added, removed and changed between two objects.
#[derive(Debug, Default)]
pub struct Comparison {
    pub added: Set,
    pub removed: Set,
    pub modified: Set,
}

impl Comparison {
    /// Removes the fields of `exclude` (and everything below them) from all three sets.
    pub fn exclude(&mut self, exclude: &Set) {
        self.added = self.added.recursive_difference(exclude);
        self.removed = self.removed.recursive_difference(exclude);
        self.modified = self.modified.recursive_difference(exclude);
    }
}

/// Compares `lhs` (before) with `rhs` (after).
pub fn compare(node: &Node<'_>, lhs: &Value, rhs: &Value) -> Comparison {
    let mut c = Comparison::default();
    compare_at(node, Some(lhs), Some(rhs), &mut Vec::new(), &mut c);
    c
}

fn compare_at(
    node: &Node<'_>,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    path: &mut Vec<PathElement>,
    c: &mut Comparison,
) {
    let (al, ar) = (shape(node, lhs), shape(node, rhs));
    let atom = match (lhs, rhs) {
        (_, None) => al,
        (None, _) => ar,
        _ if al == ar => ar,
        _ => Atom::Leaf,
    };
    let in_leaf = match atom {
        Atom::Scalar | Atom::Leaf => true,
        Atom::List => {
            let l = lhs.and_then(Value::as_array);
            let r = rhs.and_then(Value::as_array);
            let empty = l.is_none_or(Vec::is_empty) && r.is_none_or(Vec::is_empty);
            if node.list_kind() == ListKind::Atomic || empty {
                true
            } else {
                compare_items(node, l, r, path, c);
                false
            }
        }
        Atom::Map => {
            let l = lhs.and_then(Value::as_object);
            let r = rhs.and_then(Value::as_object);
            let empty = l.is_none_or(Map::is_empty) && r.is_none_or(Map::is_empty);
            if node.map_atomic() || empty {
                true
            } else {
                for (key, lv, rv) in zip_maps(l, r) {
                    let Some(next) = node.child(key).or_else(|| Some(Node::deduced_like(node)))
                    else {
                        continue;
                    };
                    path.push(PathElement::Field(key.to_string()));
                    compare_at(&next, lv, rv, path, c);
                    path.pop();
                }
                false
            }
        }
    };
    if in_leaf {
        match (lhs, rhs) {
            (None, _) => c.added.insert(path),
            (_, None) => c.removed.insert(path),
            (Some(l), Some(r)) if !values_equal(l, r) => c.modified.insert(path),
            _ => {}
        }
    } else if lhs.is_none() {
        c.added.insert(path);
    } else if rhs.is_none() {
        c.removed.insert(path);
    }
}

/// The keys of two maps, the left's first, with each side's value.
fn zip_maps<'v>(
    l: Option<&'v Map<String, Value>>,
    r: Option<&'v Map<String, Value>>,
) -> Vec<(&'v str, Option<&'v Value>, Option<&'v Value>)> {
    let mut out = Vec::new();
    if let Some(l) = l {
        for (k, v) in l {
            out.push((k.as_str(), Some(v), r.and_then(|r| r.get(k))));
        }
    }
    if let Some(r) = r {
        for (k, v) in r {
            if l.is_none_or(|l| !l.contains_key(k)) {
                out.push((k.as_str(), None, Some(v)));
            }
        }
    }
    out
}

/// Items by identity, in first-seen order, with every item of each identity.
fn index_items<'v>(
    node: &Node<'_>,
    items: Option<&'v Vec<Value>>,
) -> Vec<(PathElement, Vec<&'v Value>)> {
    let mut out: Vec<(PathElement, Vec<&Value>)> = Vec::new();
    for item in items.into_iter().flatten() {
        let Ok(pe) = item_element(node, item) else {
            continue;
        };
        match out.iter_mut().find(|(p, _)| *p == pe) {
            Some((_, list)) => list.push(item),
            None => out.push((pe, vec![item])),
        }
    }
    out
}

fn compare_items(
    node: &Node<'_>,
    lhs: Option<&Vec<Value>>,
    rhs: Option<&Vec<Value>>,
    path: &mut Vec<PathElement>,
    c: &mut Comparison,
) {
    let left = index_items(node, lhs);
    let right = index_items(node, rhs);
    let mut all: Vec<&PathElement> = left.iter().map(|(pe, _)| pe).collect();
    for (pe, _) in &right {
        if !left.iter().any(|(p, _)| p == pe) {
            all.push(pe);
        }
    }
    let item_node = node.items();
    for pe in all {
        let l: &[&Value] = left.iter().find(|(p, _)| p == pe).map_or(&[], |(_, v)| v);
        let r: &[&Value] = right.iter().find(|(p, _)| p == pe).map_or(&[], |(_, v)| v);
        path.push(pe.clone());
        match (l.len(), r.len()) {
            (0..=1, 0..=1) => {
                compare_at(&item_node, l.first().copied(), r.first().copied(), path, c)
            }
            (2.., 2..) => {
                let same = l.len() == r.len() && l.iter().zip(r).all(|(a, b)| values_equal(a, b));
                if !same {
                    c.modified.insert(path);
                }
            }
            (2.., _) => {
                if let Some(first) = r.first() {
                    compare_at(&item_node, None, Some(first), path, c);
                }
                c.removed.insert(path);
            }
            (_, _) => {
                if let Some(first) = l.first() {
                    compare_at(&item_node, Some(first), None, path, c);
                }
                c.added.insert(path);
            }
        }
        path.pop();
    }
}

/// Merges an applied configuration (`rhs`) into a live object (`lhs`): the
/// configuration's values win, keyed list items merge by key.
pub fn merge(node: &Node<'_>, lhs: &Value, rhs: &Value) -> Result<Value, String> {
    Ok(merge_at(node, Some(lhs), Some(rhs), &mut Vec::new())?.unwrap_or(Value::Null))
}

fn merge_at(
    node: &Node<'_>,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    path: &mut Vec<PathElement>,
) -> Result<Option<Value>, String> {
    let (al, ar) = (shape(node, lhs), shape(node, rhs));
    let atom = match (lhs, rhs) {
        (_, None) => al,
        (None, _) => ar,
        _ if al == ar => ar,
        _ => Atom::Leaf,
    };
    let leaf = || Ok(rhs.or(lhs).cloned());
    match atom {
        Atom::Scalar | Atom::Leaf => leaf(),
        Atom::List => {
            let l = lhs.and_then(Value::as_array);
            let r = rhs.and_then(Value::as_array);
            let empty = l.is_none_or(Vec::is_empty) && r.is_none_or(Vec::is_empty);
            if node.list_kind() == ListKind::Atomic || empty {
                return leaf();
            }
            merge_items(node, l, r, path)
        }
        Atom::Map => {
            let l = lhs.and_then(Value::as_object);
            let r = rhs.and_then(Value::as_object);
            let empty = l.is_none_or(Map::is_empty) && r.is_none_or(Map::is_empty);
            if node.map_atomic() || empty {
                return leaf();
            }
            let mut out = Map::new();
            for (key, lv, rv) in zip_maps(l, r) {
                let next = node.child(key).unwrap_or_else(|| Node::deduced_like(node));
                path.push(PathElement::Field(key.to_string()));
                let merged = merge_at(&next, lv, rv, path)?;
                path.pop();
                if let Some(v) = merged {
                    out.insert(key.to_string(), v);
                }
            }
            Ok((!out.is_empty()).then_some(Value::Object(out)))
        }
    }
}

/// structured-merge-diff's list merge: items of both sides merge by identity, in the
/// order of the configuration, with the live object's other items kept in place.
fn merge_items(
    node: &Node<'_>,
    lhs: Option<&Vec<Value>>,
    rhs: Option<&Vec<Value>>,
    path: &mut Vec<PathElement>,
) -> Result<Option<Value>, String> {
    let pes =
        |items: Option<&Vec<Value>>, dup_ok: bool| -> Result<Vec<(PathElement, Value)>, String> {
            let mut out: Vec<(PathElement, Value)> = Vec::new();
            for (i, item) in items.into_iter().flatten().enumerate() {
                let pe = item_element(node, item).map_err(|e| format!("element {i}: {e}"))?;
                if let Some(existing) = out.iter_mut().find(|(p, _)| *p == pe) {
                    if !dup_ok {
                        return Err(format!("duplicate entries for key {}", pe.display()));
                    }
                    existing.1 = Value::Null;
                    out.push((pe, Value::Null));
                } else {
                    out.push((pe, item.clone()));
                }
            }
            Ok(out)
        };
    let rhs_pes = pes(rhs, false)?;
    let lhs_pes = pes(lhs, true)?;
    let observed_l = |pe: &PathElement| lhs_pes.iter().find(|(p, _)| p == pe).map(|(_, v)| v);
    let observed_r = |pe: &PathElement| rhs_pes.iter().find(|(p, _)| p == pe).map(|(_, v)| v);
    let mut shared: Vec<&PathElement> = rhs_pes
        .iter()
        .map(|(pe, _)| pe)
        .filter(|pe| observed_l(pe).is_some())
        .collect();
    shared.reverse();
    let mut next_shared = shared.pop();
    let item_node = node.items();
    let mut merged_rhs: Vec<PathElement> = Vec::new();
    let mut out = Vec::new();
    let (mut li, mut ri) = (0, 0);
    let merge_one = |pe: &PathElement,
                     l: Option<&Value>,
                     r: Option<&Value>,
                     path: &mut Vec<PathElement>,
                     out: &mut Vec<Value>|
     -> Result<(), String> {
        path.push(pe.clone());
        let v = merge_at(&item_node, l, r, path)?;
        path.pop();
        if let Some(v) = v {
            out.push(v);
        }
        Ok(())
    };
    while li < lhs_pes.len() || ri < rhs_pes.len() {
        if li < lhs_pes.len() && ri < rhs_pes.len() {
            let pe = &lhs_pes[li].0;
            if *pe == rhs_pes[ri].0 {
                merged_rhs.push(pe.clone());
                merge_one(pe, observed_l(pe), observed_r(pe), path, &mut out)?;
                li += 1;
                ri += 1;
                next_shared = shared.pop();
                continue;
            }
            if observed_r(pe).is_some() && next_shared.is_some_and(|n| n != pe) {
                li += 1;
                continue;
            }
        }
        if li < lhs_pes.len() {
            let pe = &lhs_pes[li].0;
            if observed_r(pe).is_none() {
                merge_one(pe, Some(&lhs_pes[li].1), None, path, &mut out)?;
                li += 1;
                continue;
            } else if merged_rhs.contains(pe) {
                li += 1;
            }
        }
        if ri < rhs_pes.len() {
            let pe = &rhs_pes[ri].0;
            merged_rhs.push(pe.clone());
            merge_one(pe, observed_l(pe), observed_r(pe), path, &mut out)?;
            ri += 1;
            if next_shared.is_some_and(|n| n == pe) {
                next_shared = shared.pop();
            }
        }
    }
    Ok((!out.is_empty()).then_some(Value::Array(out)))
}

/// `set` with every struct field that has owned fields below it made a member too (so
/// that removing the set's members removes whole structs).
pub fn with_named_fields(node: &Node<'_>, set: &Set) -> Set {
    let mut members = set.members().clone();
    let mut children = std::collections::BTreeMap::new();
    let is_map = node.atom(None) == Atom::Map || node.is_deduced();
    for (pe, child) in set.children() {
        let next = match pe {
            PathElement::Field(name) => {
                if is_map && node.field(name).is_some() {
                    members.insert(pe.clone());
                }
                node.child(name)
            }
            PathElement::Key(_) => Some(node.items()),
            _ => None,
        };
        let child = match next {
            Some(n) => with_named_fields(&n, child),
            None => child.clone(),
        };
        children.insert(pe.clone(), child);
    }
    Set::from_parts(members, children)
}

/// `value` without the fields of `remove` (a member removes everything below it). Lists
/// and maps left empty become null, as in structured-merge-diff.
pub fn remove_items(node: &Node<'_>, value: &Value, remove: &Set) -> Value {
    remove_at(node, value, remove).unwrap_or(Value::Null)
}

fn remove_at(node: &Node<'_>, value: &Value, remove: &Set) -> Option<Value> {
    match shape(node, Some(value)) {
        Atom::Scalar => Some(value.clone()),
        Atom::Leaf => None,
        Atom::List => {
            let items = value.as_array().filter(|i| !i.is_empty())?;
            if node.list_kind() == ListKind::Atomic {
                return None;
            }
            let item_node = node.items();
            let mut out = Vec::new();
            for item in items {
                let Ok(pe) = item_element(node, item) else {
                    out.push(item.clone());
                    continue;
                };
                if remove.has(std::slice::from_ref(&pe)) {
                    continue;
                }
                match remove.with_prefix(&pe) {
                    Some(sub) => out.push(remove_at(&item_node, item, sub).unwrap_or(Value::Null)),
                    None => out.push(item.clone()),
                }
            }
            (!out.is_empty()).then_some(Value::Array(out))
        }
        Atom::Map => {
            let m = value.as_object().filter(|m| !m.is_empty())?;
            if node.map_atomic() {
                return None;
            }
            let mut out = Map::new();
            for (key, child) in m {
                let pe = PathElement::Field(key.clone());
                if remove.has(std::slice::from_ref(&pe)) {
                    continue;
                }
                let v = match remove.with_prefix(&pe) {
                    Some(sub) => {
                        let next = node.child(key).unwrap_or_else(|| Node::deduced_like(node));
                        remove_at(&next, child, sub).unwrap_or(Value::Null)
                    }
                    None => child.clone(),
                };
                out.insert(key.clone(), v);
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
    }
}

/// What structured-merge-diff refuses in an applied configuration: fields the schema
/// does not declare, values of the wrong kind, list items without keys or repeated.
pub fn validate(node: &Node<'_>, value: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    validate_at(node, value, &mut Vec::new(), &mut errors);
    errors
}

fn validate_at(
    node: &Node<'_>,
    value: &Value,
    path: &mut Vec<PathElement>,
    errors: &mut Vec<String>,
) {
    let at = |path: &[PathElement], msg: String| {
        if path.is_empty() {
            msg
        } else {
            format!("{}: {msg}", path_string(path))
        }
    };
    match node.atom(Some(value)) {
        Atom::Leaf => {}
        Atom::Scalar => {
            if let Some(e) = crate::schema::decode::apply_scalar_error(node, value) {
                errors.push(at(path, e));
            }
        }
        Atom::List => match value {
            Value::Array(items) => {
                let item_node = node.items();
                if node.list_kind() == ListKind::Atomic {
                    // Items of an atomic list are checked too, named by their index.
                    for (i, item) in items.iter().enumerate() {
                        path.push(PathElement::Index(i));
                        validate_at(&item_node, item, path, errors);
                        path.pop();
                    }
                    return;
                }
                let mut seen = BTreeSet::new();
                for (i, item) in items.iter().enumerate() {
                    match item_element(node, item) {
                        Err(e) => errors.push(at(path, format!("element {i}: {e}"))),
                        Ok(pe) => {
                            if !seen.insert(pe.clone()) {
                                errors.push(at(
                                    path,
                                    format!("duplicate entries for key {}", pe.display()),
                                ));
                                continue;
                            }
                            path.push(pe);
                            validate_at(&item_node, item, path, errors);
                            path.pop();
                        }
                    }
                }
            }
            Value::Null => {}
            other => errors.push(at(
                path,
                format!("expected list, got &{{{}}}", go_value(other)),
            )),
        },
        Atom::Map => match value {
            Value::Object(m) => {
                for (key, child) in m {
                    path.push(PathElement::Field(key.clone()));
                    match node.child(key) {
                        Some(next) => validate_at(&next, child, path, errors),
                        None => errors.push(at(path, "field not declared in schema".into())),
                    }
                    path.pop();
                }
            }
            Value::Null => {}
            other => errors.push(at(
                path,
                format!("expected map, got &{{{}}}", go_value(other)),
            )),
        },
    }
}

/// Removes null values from maps (what decoding into the Go types does with them).
pub fn drop_nulls(value: &mut Value) {
    match value {
        Value::Object(m) => {
            m.retain(|_, v| !v.is_null());
            for v in m.values_mut() {
                drop_nulls(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}
