//! Helm's `Values.Table` and `Values.PathValue`: dotted paths into values.

use chartkit_yaml::{Map, Value};

/// The map at a dotted path (`a.b`), if every step is a map.
pub fn table<'a>(values: &'a Map, path: &str) -> Option<&'a Map> {
    let mut current = values;
    for key in path.split('.') {
        match current.get(key) {
            Some(Value::Map(m)) => current = m,
            _ => return None,
        }
    }
    Some(current)
}

/// The non-map value at a dotted path; maps and missing keys give `None`.
pub fn path_value<'a>(values: &'a Map, path: &str) -> Option<&'a Value> {
    if path.is_empty() {
        return None;
    }
    let (parent, key) = match path.rsplit_once('.') {
        Some((parent, key)) => (table(values, parent)?, key),
        None => (values, path),
    };
    match parent.get(key) {
        Some(Value::Map(_)) | None => None,
        Some(value) => Some(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_maps_only() {
        let values = chartkit_yaml::parse_values("a: {b: {c: true}, s: x}\n").unwrap();
        assert!(table(&values, "a.b").is_some());
        assert!(table(&values, "a.s").is_none());
        assert_eq!(path_value(&values, "a.b.c"), Some(&Value::Bool(true)));
        assert_eq!(path_value(&values, "a.b"), None);
        assert_eq!(path_value(&values, "a.s.x"), None);
        assert_eq!(path_value(&values, ""), None);
    }
}
