//! The JSONPath subset CRD printer columns use: `.a.b`, `.a[0]`, `.a[*].b` and filters
//! `[?(@.type=="Ready")]`.

use serde_json::Value;

/// The value at `path` in `object` (the first match for a filter or wildcard), or null.
pub fn simple(object: &Value, path: &str) -> Value {
    let path = path.trim().trim_start_matches('{').trim_end_matches('}');
    let mut current = vec![object.clone()];
    let mut rest = path.trim_start_matches('$');
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            let field = &r[..end];
            if !field.is_empty() {
                current = current
                    .iter()
                    .filter_map(|v| v.get(field).cloned())
                    .collect();
            }
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let Some(close) = find_close(r) else {
                return Value::Null;
            };
            let inner = &r[..close];
            rest = &r[close + 1..];
            current = if inner == "*" {
                current
                    .iter()
                    .flat_map(|v| v.as_array().cloned().unwrap_or_default())
                    .collect()
            } else if let Some(filter) = inner.strip_prefix("?(").and_then(|f| f.strip_suffix(')'))
            {
                current
                    .iter()
                    .flat_map(|v| v.as_array().cloned().unwrap_or_default())
                    .filter(|item| filter_matches(item, filter))
                    .collect()
            } else if let Ok(i) = inner.parse::<i64>() {
                current
                    .iter()
                    .filter_map(|v| {
                        let a = v.as_array()?;
                        let idx = if i < 0 { a.len() as i64 + i } else { i };
                        a.get(usize::try_from(idx).ok()?).cloned()
                    })
                    .collect()
            } else {
                let key = inner.trim_matches(['\'', '"']);
                current.iter().filter_map(|v| v.get(key).cloned()).collect()
            };
        } else {
            return Value::Null;
        }
    }
    current.into_iter().next().unwrap_or(Value::Null)
}

fn find_close(s: &str) -> Option<usize> {
    let mut depth = 0;
    let mut quote = None;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '(') => depth += 1,
            (None, ')') => depth -= 1,
            (None, ']') if depth == 0 => return Some(i),
            (None, ']') => depth -= 1,
            _ => {}
        }
    }
    None
}

fn filter_matches(item: &Value, filter: &str) -> bool {
    let (lhs, op, rhs) = if let Some((l, r)) = filter.split_once("==") {
        (l, "==", r)
    } else if let Some((l, r)) = filter.split_once("!=") {
        (l, "!=", r)
    } else {
        let v = simple(item, filter.trim().trim_start_matches('@'));
        return !v.is_null();
    };
    let got = simple(item, lhs.trim().trim_start_matches('@'));
    let want = rhs.trim().trim_matches(['\'', '"']);
    let got_s = match &got {
        Value::String(s) => s.clone(),
        Value::Null => return op == "!=",
        other => other.to_string(),
    };
    (got_s == want) == (op == "==")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn printer_column_paths_read_values() {
        let o = json!({"spec": {"replicas": 3}, "status": {"conditions": [{"type": "A", "status": "False"}, {"type": "Ready", "status": "True"}]}});
        assert_eq!(simple(&o, ".spec.replicas"), json!(3));
        assert_eq!(
            simple(&o, ".status.conditions[?(@.type==\"Ready\")].status"),
            json!("True")
        );
        assert_eq!(simple(&o, ".status.conditions[0].type"), json!("A"));
        assert_eq!(simple(&o, ".missing"), Value::Null);
    }
}
