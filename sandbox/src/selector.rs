//! Label and field selectors, parsed as the API server parses them.

use serde_json::Value;

use crate::status::ApiError;

#[derive(Debug, Clone, PartialEq)]
enum Op {
    Equals(String),
    NotEquals(String),
    In(Vec<String>),
    NotIn(Vec<String>),
    Exists,
    DoesNotExist,
    Gt(i64),
    Lt(i64),
}

/// `app=web,tier in (a,b),!legacy`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LabelSelector {
    requirements: Vec<(String, Op)>,
}

impl LabelSelector {
    pub fn parse(text: &str) -> Result<LabelSelector, ApiError> {
        let mut requirements = Vec::new();
        let mut rest = text.trim();
        while !rest.is_empty() {
            let (req, tail) = parse_requirement(rest)?;
            requirements.push(req);
            rest = tail.trim_start();
            if let Some(t) = rest.strip_prefix(',') {
                rest = t.trim_start();
                if rest.is_empty() {
                    return Err(selector_error(text, "found '', expected: identifier"));
                }
            } else if !rest.is_empty() {
                return Err(selector_error(
                    text,
                    &format!("found '{rest}', expected: ',' or 'end of string'"),
                ));
            }
        }
        Ok(LabelSelector { requirements })
    }

    /// From a `metav1.LabelSelector` object (matchLabels and matchExpressions).
    pub fn from_object(selector: &Value) -> Option<LabelSelector> {
        let mut requirements = Vec::new();
        if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
            for (k, v) in labels {
                requirements.push((k.clone(), Op::Equals(v.as_str().unwrap_or("").to_string())));
            }
        }
        if let Some(exprs) = selector.get("matchExpressions").and_then(Value::as_array) {
            for e in exprs {
                let key = e.get("key")?.as_str()?.to_string();
                let values: Vec<String> = e
                    .get("values")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default();
                let op = match e.get("operator")?.as_str()? {
                    "In" => Op::In(values),
                    "NotIn" => Op::NotIn(values),
                    "Exists" => Op::Exists,
                    "DoesNotExist" => Op::DoesNotExist,
                    _ => return None,
                };
                requirements.push((key, op));
            }
        }
        Some(LabelSelector { requirements })
    }

    /// A selector matching exactly these labels (a Service's or ReplicationController's).
    pub fn from_map(labels: &serde_json::Map<String, Value>) -> LabelSelector {
        LabelSelector {
            requirements: labels
                .iter()
                .map(|(k, v)| (k.clone(), Op::Equals(v.as_str().unwrap_or("").to_string())))
                .collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    pub fn matches(&self, labels: &serde_json::Map<String, Value>) -> bool {
        self.requirements.iter().all(|(key, op)| {
            let value = labels.get(key).and_then(Value::as_str);
            match op {
                Op::Equals(v) => value == Some(v.as_str()),
                Op::NotEquals(v) => value != Some(v.as_str()),
                Op::In(vs) => value.is_some_and(|x| vs.iter().any(|v| v == x)),
                Op::NotIn(vs) => value.is_none_or(|x| !vs.iter().any(|v| v == x)),
                Op::Exists => value.is_some(),
                Op::DoesNotExist => value.is_none(),
                Op::Gt(n) => value
                    .and_then(|x| x.parse::<i64>().ok())
                    .is_some_and(|x| x > *n),
                Op::Lt(n) => value
                    .and_then(|x| x.parse::<i64>().ok())
                    .is_some_and(|x| x < *n),
            }
        })
    }

    /// Whether an object's labels match.
    pub fn matches_object(&self, object: &Value) -> bool {
        self.is_empty() || self.matches(&crate::meta::labels(object))
    }
}

fn selector_error(text: &str, why: &str) -> ApiError {
    ApiError::bad_request(format!(
        "unable to parse requirement: {why} (in selector {text:?})"
    ))
}

fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/')
}

fn parse_requirement(text: &str) -> Result<((String, Op), &str), ApiError> {
    let s = text.trim_start();
    if let Some(rest) = s.strip_prefix('!') {
        let rest = rest.trim_start();
        let end = rest.find(|c: char| !is_key_char(c)).unwrap_or(rest.len());
        if end == 0 {
            return Err(selector_error(text, "found '', expected: identifier"));
        }
        return Ok(((rest[..end].to_string(), Op::DoesNotExist), &rest[end..]));
    }
    let end = s.find(|c: char| !is_key_char(c)).unwrap_or(s.len());
    if end == 0 {
        return Err(selector_error(
            text,
            &format!("found '{s}', expected: !, identifier, or 'end of string'"),
        ));
    }
    let key = s[..end].to_string();
    let keyerrs = crate::meta::check_qualified_name(&key);
    if let Some(e) = keyerrs.first() {
        return Err(ApiError::bad_request(format!(
            "unable to parse requirement: values[0][{key}]: Invalid value: \"{key}\": {e}"
        )));
    }
    let rest = s[end..].trim_start();
    let value_end = |r: &str| r.find([',', ' ', ')']).unwrap_or(r.len());
    for (token, make) in [("==", 0u8), ("!=", 1), ("=", 0), (">", 2), ("<", 3)] {
        if let Some(r) = rest.strip_prefix(token) {
            let r = r.trim_start();
            let e = value_end(r);
            let v = r[..e].to_string();
            let op = match make {
                0 => Op::Equals(v),
                1 => Op::NotEquals(v),
                2 | 3 => {
                    let n = v.parse::<i64>().map_err(|_| {
                        selector_error(
                            text,
                            &format!("for 'Gt', 'Lt' operators, the value must be an integer"),
                        )
                    })?;
                    if make == 2 { Op::Gt(n) } else { Op::Lt(n) }
                }
                _ => unreachable!(),
            };
            return Ok(((key, op), &r[e..]));
        }
    }
    for (word, negated) in [("notin", true), ("in", false)] {
        if let Some(r) = rest.strip_prefix(word)
            && r.starts_with([' ', '('])
        {
            let r = r.trim_start();
            let Some(r) = r.strip_prefix('(') else {
                return Err(selector_error(text, "found '', expected: '('"));
            };
            let Some(close) = r.find(')') else {
                return Err(selector_error(text, "found '', expected: ')'"));
            };
            let values: Vec<String> = r[..close]
                .split(',')
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .collect();
            let op = if negated {
                Op::NotIn(values)
            } else {
                Op::In(values)
            };
            return Ok(((key, op), &r[close + 1..]));
        }
    }
    Ok(((key, Op::Exists), rest))
}

/// `metadata.name=web,status.phase!=Running`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FieldSelector {
    terms: Vec<(String, bool, String)>,
}

impl FieldSelector {
    pub fn parse(text: &str) -> Result<FieldSelector, ApiError> {
        let mut terms = Vec::new();
        for part in split_unescaped(text, ',') {
            if part.is_empty() {
                continue;
            }
            let (field, negated, value) = if let Some((f, v)) = part.split_once("!=") {
                (f, true, v)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, false, v)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, false, v)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{text}'; can't understand '{part}'"
                )));
            };
            terms.push((field.trim().to_string(), negated, unescape(value.trim())));
        }
        Ok(FieldSelector { terms })
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Checks that every field is one the resource supports, as the API server does.
    pub fn check_supported(&self, group: &str, plural: &str) -> Result<(), ApiError> {
        for (field, _, _) in &self.terms {
            if field_value_path(group, plural, field).is_none() {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {field}"
                )));
            }
        }
        Ok(())
    }

    pub fn matches(&self, group: &str, plural: &str, object: &Value) -> bool {
        self.terms.iter().all(|(field, negated, want)| {
            let got = field_value_path(group, plural, field)
                .map(|path| lookup(object, &path))
                .unwrap_or_default();
            (got == *want) != *negated
        })
    }
}

fn split_unescaped(text: &str, sep: char) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut escaped = false;
    for c in text.chars() {
        if escaped {
            parts.last_mut().expect("one part").push('\\');
            parts.last_mut().expect("one part").push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == sep {
            parts.push(String::new());
        } else {
            parts.last_mut().expect("one part").push(c);
        }
    }
    parts
}

fn unescape(value: &str) -> String {
    let mut out = String::new();
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The object path a field selector reads, for the fields each resource supports.
fn field_value_path(group: &str, plural: &str, field: &str) -> Option<Vec<String>> {
    if matches!(field, "metadata.name" | "metadata.namespace") {
        return Some(field.split('.').map(String::from).collect());
    }
    let supported: &[&str] = match (group, plural) {
        ("", "pods") => &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
        ],
        ("", "events") | ("events.k8s.io", "events") => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        ("", "secrets") => &["type"],
        ("", "namespaces") => &["status.phase"],
        ("", "nodes") => &["spec.unschedulable"],
        ("", "replicationcontrollers") | ("apps", "replicasets") => &["status.replicas"],
        ("batch", "jobs") => &["status.successful"],
        ("certificates.k8s.io", "certificatesigningrequests") => &["spec.signerName"],
        _ => &[],
    };
    if supported.contains(&field) {
        let path = if field == "source" {
            vec!["source".to_string(), "component".to_string()]
        } else {
            field.split('.').map(String::from).collect()
        };
        Some(path)
    } else {
        None
    }
}

fn lookup(object: &Value, path: &[String]) -> String {
    let mut v = object;
    for p in path {
        match v.get(p) {
            Some(next) => v = next,
            None => return String::new(),
        }
    }
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(a) => a
            .first()
            .and_then(|x| x.get("ip"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(v: Value) -> serde_json::Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn label_selectors_parse_and_match() {
        let s = LabelSelector::parse("app=web, tier in (a, b),!legacy,env!=prod").unwrap();
        assert!(s.matches(&labels(json!({"app": "web", "tier": "a"}))));
        assert!(!s.matches(&labels(json!({"app": "web", "tier": "c"}))));
        assert!(!s.matches(&labels(json!({"app": "web", "tier": "a", "legacy": ""}))));
        assert!(!s.matches(&labels(json!({"app": "web", "tier": "a", "env": "prod"}))));
        assert!(
            LabelSelector::parse("app")
                .unwrap()
                .matches(&labels(json!({"app": "x"})))
        );
        assert!(LabelSelector::parse("app=web,").is_err());
    }

    #[test]
    fn field_selectors_check_supported_fields() {
        let s = FieldSelector::parse("status.phase!=Running,metadata.name=p").unwrap();
        assert!(s.check_supported("", "pods").is_ok());
        assert!(s.check_supported("", "configmaps").is_err());
        let pod = json!({"metadata": {"name": "p"}, "status": {"phase": "Pending"}});
        assert!(s.matches("", "pods", &pod));
    }
}
