//! RFC 6902 JSON patch, with the error texts of the library the API server uses.

use serde_json::Value;

use crate::status::{ApiError, ApiResult};

/// Applies the operations in order to a copy of `doc`.
pub fn json_patch(doc: &Value, patch: &Value) -> ApiResult<Value> {
    let ops = patch.as_array().ok_or_else(|| {
        ApiError::bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    })?;
    let mut doc = doc.clone();
    for op in ops {
        apply_op(&mut doc, op).map_err(|message| ApiError::new(422, "Invalid", message))?;
    }
    Ok(doc)
}

fn apply_op(doc: &mut Value, op: &Value) -> Result<(), String> {
    let kind = op.get("op").and_then(Value::as_str).unwrap_or("");
    let path = op
        .get("path")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{kind} operation missing path"))?;
    let value = || {
        op.get("value")
            .cloned()
            .ok_or_else(|| format!("{kind} operation missing value"))
    };
    match kind {
        "add" => add(doc, path, value()?),
        "remove" => remove(doc, path).map(|_| ()),
        "replace" => {
            let v = value()?;
            let target = get_mut(doc, path).ok_or_else(|| {
                format!(
                    "replace operation does not apply: doc is missing key: {path}: missing value"
                )
            })?;
            *target = v;
            Ok(())
        }
        "move" => {
            let from = op
                .get("from")
                .and_then(Value::as_str)
                .ok_or("move operation missing from")?;
            let v = remove(doc, from)?;
            add(doc, path, v)
        }
        "copy" => {
            let from = op
                .get("from")
                .and_then(Value::as_str)
                .ok_or("copy operation missing from")?;
            let v = get_mut(doc, from).cloned().ok_or_else(|| {
                format!(
                    "copy operation does not apply: doc is missing from path: {from}: missing value"
                )
            })?;
            add(doc, path, v)
        }
        "test" => {
            let v = value()?;
            match get_mut(doc, path) {
                Some(found) if *found == v => Ok(()),
                _ => Err(format!("testing value {path} failed: test failed")),
            }
        }
        other => Err(format!("Unexpected kind: {other}")),
    }
}

fn tokens(path: &str) -> Result<Vec<String>, String> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err(format!("invalid JSON pointer: {path:?}"));
    };
    Ok(rest
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn get_mut<'a>(doc: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    let mut v = doc;
    for t in tokens(path).ok()? {
        v = match v {
            Value::Object(m) => m.get_mut(&t)?,
            Value::Array(a) => {
                let i = index(&t, a.len())?;
                a.get_mut(i)?
            }
            _ => return None,
        };
    }
    Some(v)
}

fn index(token: &str, len: usize) -> Option<usize> {
    if token.len() > 1 && token.starts_with('0') {
        return None;
    }
    let i: usize = token.parse().ok()?;
    (i < len).then_some(i)
}

fn split_parent(path: &str) -> Result<(String, String), String> {
    let mut t = tokens(path)?;
    let last = t
        .pop()
        .ok_or_else(|| "cannot operate on the whole document".to_string())?;
    let parent = t
        .iter()
        .map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1")))
        .collect::<String>();
    Ok((parent, last))
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (parent, last) = split_parent(path)?;
    let missing =
        || format!("add operation does not apply: doc is missing path: \"{path}\": missing value");
    match get_mut(doc, &parent).ok_or_else(missing)? {
        Value::Object(m) => {
            m.insert(last, value);
            Ok(())
        }
        Value::Array(a) => {
            let i = if last == "-" {
                a.len()
            } else {
                let i: usize = last.parse().map_err(|_| missing())?;
                if i > a.len() {
                    return Err(format!(
                        "add operation does not apply: doc is missing path: \"{path}\": invalid index referenced: {i}"
                    ));
                }
                i
            };
            a.insert(i, value);
            Ok(())
        }
        _ => Err(missing()),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, String> {
    let (parent, last) = split_parent(path)?;
    let missing = || {
        format!("remove operation does not apply: doc is missing path: \"{path}\": missing value")
    };
    match get_mut(doc, &parent).ok_or_else(missing)? {
        Value::Object(m) => m.shift_remove(&last).ok_or_else(missing),
        Value::Array(a) => {
            let i = index(&last, a.len()).ok_or_else(missing)?;
            Ok(a.remove(i))
        }
        _ => Err(missing()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn operations_apply_in_order() {
        let doc = json!({"a": {"b": [1, 2]}, "c": 1});
        let patch = json!([
            {"op": "add", "path": "/a/b/-", "value": 3},
            {"op": "replace", "path": "/c", "value": 2},
            {"op": "remove", "path": "/a/b/0"},
            {"op": "copy", "from": "/c", "path": "/d"},
            {"op": "move", "from": "/d", "path": "/e"},
            {"op": "test", "path": "/e", "value": 2},
        ]);
        assert_eq!(
            json_patch(&doc, &patch).unwrap(),
            json!({"a": {"b": [2, 3]}, "c": 2, "e": 2})
        );
    }

    #[test]
    fn a_missing_path_is_422() {
        let e = json_patch(
            &json!({}),
            &json!([{"op": "replace", "path": "/x", "value": 1}]),
        )
        .unwrap_err();
        assert_eq!(e.code, 422);
    }
}
