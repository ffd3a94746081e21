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
    /// Parses a label selector as `labels.Parse` does, failing with its words.
    pub fn parse(text: &str) -> Result<LabelSelector, ApiError> {
        parse_labels(text)
            .map(|requirements| LabelSelector { requirements })
            .map_err(ApiError::bad_request)
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

#[derive(Debug, Clone, Copy, PartialEq)]
enum Token {
    End,
    ClosedPar,
    Comma,
    Not,
    DoubleEquals,
    Equals,
    Greater,
    Identifier,
    In,
    Less,
    NotEquals,
    NotIn,
    OpenPar,
    Error,
}

fn symbol_token(s: &str) -> Option<Token> {
    Some(match s {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::Not,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::Greater,
        "<" => Token::Less,
        "!=" => Token::NotEquals,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_special(c: u8) -> bool {
    matches!(c, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

/// The selector's tokens, as the API server's lexer splits them.
fn lex(text: &str) -> Vec<(Token, String)> {
    let b = text.as_bytes();
    let mut pos = 0;
    let mut out = Vec::new();
    loop {
        while pos < b.len() && is_space(b[pos]) {
            pos += 1;
        }
        if pos >= b.len() {
            out.push((Token::End, String::new()));
            return out;
        }
        if is_special(b[pos]) {
            // The longest run of symbols that is a token.
            let start = pos;
            let mut last: Option<(Token, usize)> = None;
            while pos < b.len() && is_special(b[pos]) {
                let candidate = &text[start..=pos];
                if let Some(t) = symbol_token(candidate) {
                    last = Some((t, pos + 1));
                } else if last.is_some() {
                    break;
                }
                pos += 1;
            }
            match last {
                Some((t, end)) => {
                    out.push((t, text[start..end].to_string()));
                    pos = end;
                }
                None => out.push((
                    Token::Error,
                    format!("error expected: keyword found '{}'", &text[start..pos]),
                )),
            }
        } else {
            let start = pos;
            while pos < b.len() && !is_special(b[pos]) && !is_space(b[pos]) {
                pos += 1;
            }
            let word = String::from_utf8_lossy(&b[start..pos]).into_owned();
            let t = match word.as_str() {
                "in" => Token::In,
                "notin" => Token::NotIn,
                _ => Token::Identifier,
            };
            out.push((t, word));
        }
    }
}

struct Parser {
    items: Vec<(Token, String)>,
    pos: usize,
}

/// In a value position `in` and `notin` are plain words.
fn as_value(t: Token) -> Token {
    match t {
        Token::In | Token::NotIn => Token::Identifier,
        t => t,
    }
}

impl Parser {
    fn peek(&self, values: bool) -> (Token, String) {
        let (t, lit) = self.items[self.pos.min(self.items.len() - 1)].clone();
        (if values { as_value(t) } else { t }, lit)
    }

    fn next(&mut self, values: bool) -> (Token, String) {
        let item = self.peek(values);
        if self.pos < self.items.len() - 1 {
            self.pos += 1;
        }
        item
    }

    fn requirement(&mut self) -> Result<(String, Op), String> {
        let (mut t, mut key) = self.next(true);
        let negated = t == Token::Not;
        if negated {
            (t, key) = self.next(true);
        }
        if t != Token::Identifier {
            return Err(format!("found '{key}', expected: identifier"));
        }
        let key_errors = crate::meta::check_qualified_name(&key);
        if !key_errors.is_empty() {
            return Err(format!(
                "<nil>: Invalid value: {key:?}: {}",
                key_errors.join("; ")
            ));
        }
        if negated {
            return Ok((key, Op::DoesNotExist));
        }
        let (after, _) = self.peek(true);
        if after == Token::End || after == Token::Comma {
            return Ok((key, Op::Exists));
        }
        let (op, lit) = self.next(false);
        let values = match op {
            Token::In | Token::NotIn => self.set_values()?,
            Token::Equals
            | Token::DoubleEquals
            | Token::NotEquals
            | Token::Greater
            | Token::Less => self.exact_value()?,
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        };
        let mut values: Vec<String> = values;
        values.sort();
        values.dedup();
        let mut errors = Vec::new();
        let mut numbers = Vec::new();
        if matches!(op, Token::Greater | Token::Less) {
            for (i, v) in values.iter().enumerate() {
                match v.parse::<i64>() {
                    Ok(n) => numbers.push(n),
                    Err(_) => errors.push(format!(
                        "values[{i}]: Invalid value: {v:?}: for 'Gt', 'Lt' operators, the value must be an integer"
                    )),
                }
            }
        }
        for (i, v) in values.iter().enumerate() {
            let e = crate::meta::check_label_value(v);
            if !e.is_empty() {
                errors.push(format!(
                    "values[{i}][{key}]: Invalid value: {v:?}: {}",
                    e.join("; ")
                ));
            }
        }
        match errors.len() {
            0 => {}
            1 => return Err(errors.remove(0)),
            _ => return Err(format!("[{}]", errors.join(", "))),
        }
        let single = || values.first().cloned().unwrap_or_default();
        Ok((
            key,
            match op {
                Token::In => Op::In(values.clone()),
                Token::NotIn => Op::NotIn(values.clone()),
                Token::NotEquals => Op::NotEquals(single()),
                Token::Greater => Op::Gt(numbers[0]),
                Token::Less => Op::Lt(numbers[0]),
                _ => Op::Equals(single()),
            },
        ))
    }

    fn set_values(&mut self) -> Result<Vec<String>, String> {
        let (t, lit) = self.next(true);
        if t != Token::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (t, lit) = self.peek(true);
        match t {
            Token::Identifier | Token::Comma => {
                let values = self.identifiers()?;
                let (t, _) = self.next(true);
                if t != Token::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(values)
            }
            Token::ClosedPar => {
                self.next(true);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    fn identifiers(&mut self) -> Result<Vec<String>, String> {
        let mut values: Vec<String> = Vec::new();
        loop {
            let (t, lit) = self.next(true);
            match t {
                Token::Identifier => {
                    values.push(lit);
                    let (t2, lit2) = self.peek(true);
                    match t2 {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(values),
                        _ => return Err(format!("found '{lit2}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if values.is_empty() {
                        values.push(String::new());
                    }
                    let (t2, _) = self.peek(true);
                    if t2 == Token::ClosedPar {
                        values.push(String::new());
                        return Ok(values);
                    }
                    if t2 == Token::Comma {
                        self.next(true);
                        values.push(String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn exact_value(&mut self) -> Result<Vec<String>, String> {
        let (t, _) = self.peek(true);
        if t == Token::End || t == Token::Comma {
            return Ok(vec![String::new()]);
        }
        let (t, lit) = self.next(true);
        if t == Token::Identifier {
            Ok(vec![lit])
        } else {
            Err(format!("found '{lit}', expected: identifier"))
        }
    }
}

/// The requirements of a selector, or the API server's parse error.
fn parse_labels(text: &str) -> Result<Vec<(String, Op)>, String> {
    let mut p = Parser {
        items: lex(text),
        pos: 0,
    };
    let mut requirements = Vec::new();
    loop {
        let (t, lit) = p.peek(true);
        match t {
            Token::Identifier | Token::Not => {
                let r = p
                    .requirement()
                    .map_err(|e| format!("unable to parse requirement: {e}"))?;
                requirements.push(r);
                let (t, lit) = p.next(true);
                match t {
                    Token::End => break,
                    Token::Comma => {
                        let (t2, lit2) = p.peek(true);
                        if t2 != Token::Identifier && t2 != Token::Not {
                            return Err(format!("found '{lit2}', expected: identifier after ','"));
                        }
                    }
                    _ => return Err(format!("found '{lit}', expected: ',' or 'end of string'")),
                }
            }
            Token::End => break,
            _ => {
                return Err(format!(
                    "found '{lit}', expected: !, identifier, or 'end of string'"
                ));
            }
        }
    }
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(requirements)
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
            // The first operator from the left decides, as `fields.ParseSelector` reads it.
            let found = (0..part.len())
                .filter(|i| part.is_char_boundary(*i))
                .find_map(|i| {
                    ["!=", "==", "="]
                        .iter()
                        .find(|op| part[i..].starts_with(**op))
                        .map(|op| (i, *op))
                });
            let Some((at, op)) = found else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{text}'; can't understand '{part}'"
                )));
            };
            let value = unescape(&part[at + op.len()..]).map_err(ApiError::bad_request)?;
            terms.push((part[..at].to_string(), op == "!=", value));
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
    if escaped {
        parts.last_mut().expect("one part").push('\\');
    }
    parts
}

/// A field selector value with its escapes (`\\`, `\,`, `\=`) undone, or the API
/// server's error for a bad escape or an unescaped `,` or `=`.
fn unescape(value: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(n @ ('\\' | ',' | '=')) => out.push(n),
                Some(n) => {
                    return Err(format!(
                        "invalid field selector: invalid escape sequence: \\{n}"
                    ));
                }
                None => {
                    return Err("invalid field selector: invalid escape sequence: \\".into());
                }
            },
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                ));
            }
            c => out.push(c),
        }
    }
    Ok(out)
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
        assert!(
            LabelSelector::parse("env in (),x")
                .unwrap()
                .matches(&labels(json!({"env": "", "x": "1"})))
        );
        assert!(
            LabelSelector::parse("n>3")
                .unwrap()
                .matches(&labels(json!({"n": "4"})))
        );
    }

    #[test]
    fn label_selector_errors_are_worded_as_the_api_servers() {
        let msg = |s: &str| LabelSelector::parse(s).unwrap_err().message;
        assert_eq!(
            msg("bad selector!"),
            "unable to parse requirement: found 'selector', expected: in, notin, =, ==, !=, gt, lt"
        );
        assert_eq!(msg("a=b,"), "found '', expected: identifier after ','");
        assert_eq!(msg("a=b c"), "found 'c', expected: ',' or 'end of string'");
        assert_eq!(
            msg("=a"),
            "found '=', expected: !, identifier, or 'end of string'"
        );
        assert_eq!(
            msg("a in b"),
            "unable to parse requirement: found 'b' expected: '('"
        );
        assert!(msg("x>y").contains("values[0]: Invalid value: \"y\": for 'Gt', 'Lt' operators, the value must be an integer"));
        assert!(msg("a=-x").starts_with("unable to parse requirement: values[0][a]: Invalid value: \"-x\": a valid label must be"));
        assert!(
            msg("A B/c/d").starts_with("unable to parse requirement: <nil>: Invalid value: \"A\"")
                || msg("-a")
                    .starts_with("unable to parse requirement: <nil>: Invalid value: \"-a\"")
        );
        assert_eq!(
            LabelSelector::parse("!a=b").unwrap_err().message,
            "found '=', expected: ',' or 'end of string'"
        );
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
