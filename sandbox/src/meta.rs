//! Object metadata as the API server manages it: names and their rules, uids, timestamps,
//! generated names.

use rand::Rng as _;
use serde_json::{Map, Value};

/// `metadata` of an object, if it is a map.
pub fn meta(object: &Value) -> Option<&Map<String, Value>> {
    object.get("metadata")?.as_object()
}

/// `metadata`, created if missing.
pub fn meta_mut(object: &mut Value) -> &mut Map<String, Value> {
    if !object.get("metadata").is_some_and(Value::is_object) {
        object["metadata"] = Value::Object(Map::new());
    }
    object["metadata"]
        .as_object_mut()
        .expect("metadata is a map")
}

pub fn name(object: &Value) -> &str {
    str_field(object, "name")
}

pub fn namespace(object: &Value) -> &str {
    str_field(object, "namespace")
}

pub fn uid(object: &Value) -> &str {
    str_field(object, "uid")
}

pub fn resource_version(object: &Value) -> &str {
    str_field(object, "resourceVersion")
}

fn str_field<'a>(object: &'a Value, field: &str) -> &'a str {
    meta(object)
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Labels as a map (empty when absent).
pub fn labels(object: &Value) -> Map<String, Value> {
    meta(object)
        .and_then(|m| m.get("labels"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

pub fn annotation<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    meta(object)?.get("annotations")?.get(key)?.as_str()
}

pub fn finalizers(object: &Value) -> Vec<String> {
    meta(object)
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

pub fn set_finalizers(object: &mut Value, finalizers: &[String]) {
    let meta = meta_mut(object);
    if finalizers.is_empty() {
        meta.remove("finalizers");
    } else {
        meta.insert(
            "finalizers".into(),
            finalizers.iter().cloned().map(Value::String).collect(),
        );
    }
}

pub fn is_deleting(object: &Value) -> bool {
    meta(object).is_some_and(|m| m.get("deletionTimestamp").is_some_and(|t| !t.is_null()))
}

/// A random version 4 UUID, as the API server gives each object.
pub fn new_uid() -> String {
    let mut b: [u8; 16] = rand::thread_rng().r#gen();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// Now, as metadata timestamps are written (RFC 3339, seconds, UTC).
pub fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Now with microseconds, as `MicroTime` fields (leases, events' eventTime) hold it.
pub fn now_micro() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

/// Seconds since a metadata timestamp, if it parses.
pub fn age_seconds(timestamp: &str) -> Option<i64> {
    let t = chrono::DateTime::parse_from_rfc3339(timestamp).ok()?;
    Some((chrono::Utc::now() - t.with_timezone(&chrono::Utc)).num_seconds())
}

/// `prefix` and five random characters from the alphabet the API server uses (no vowels
/// or characters that look alike), as for `generateName`.
pub fn generate_name(prefix: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    // Names are at most 63 characters in the strictest rule; the prefix is cut to leave
    // room for the suffix, as the API server does.
    let prefix: String = prefix.chars().take(58).collect();
    let mut rng = rand::thread_rng();
    let suffix: String = (0..5)
        .map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char)
        .collect();
    format!("{prefix}{suffix}")
}

/// A short hash suffix as controllers name what they create (pod-template-hash).
/// The value is hashed with its keys sorted: objects keep the key order their writer
/// sent, and the same template applied by two clients (helm sorts keys, chartkit keeps
/// the chart's order) must get the same hash, as the API server's hash of Go structs does.
pub fn hash_suffix(value: &Value) -> String {
    use sha2::Digest as _;
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let digest = sha2::Sha256::digest(sorted_keys(value).to_string().as_bytes());
    let mut n = u64::from_be_bytes(digest[..8].try_into().expect("8 bytes"));
    let mut out = String::new();
    for _ in 0..10 {
        out.push(ALPHABET[(n % ALPHABET.len() as u64) as usize] as char);
        n /= ALPHABET.len() as u64;
    }
    out
}

/// `value` with the keys of every object in sorted order.
fn sorted_keys(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted_keys(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted_keys).collect()),
        other => other.clone(),
    }
}

/// How a resource's names are checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NameRule {
    /// Lowercase RFC 1123 subdomain (most resources).
    Subdomain,
    /// Lowercase RFC 1123 label (namespaces).
    Label,
    /// RFC 1035 label (services).
    Dns1035,
    /// Path segment: anything but `.`, `..`, `/` and `%` (RBAC, custom resources' fallbacks).
    PathSegment,
}

/// The rule for a resource's names, as its validation in the API server has it.
pub fn name_rule(group: &str, plural: &str, custom: bool) -> NameRule {
    if custom {
        return NameRule::Subdomain;
    }
    match (group, plural) {
        ("", "namespaces") => NameRule::Label,
        ("", "services") => NameRule::Dns1035,
        ("rbac.authorization.k8s.io", _) => NameRule::PathSegment,
        _ => NameRule::Subdomain,
    }
}

/// Why a `generateName` prefix breaks `rule`: the prefix is checked as a name with a
/// trailing dash masked, as the API server checks it.
pub fn check_generate_name(prefix: &str, rule: NameRule) -> Vec<String> {
    // `maskTrailingDash`: the dash and the character before it become one `a`.
    if rule != NameRule::PathSegment
        && prefix.len() > 1
        && prefix.ends_with('-')
        && prefix.is_char_boundary(prefix.len() - 2)
    {
        return check_name(&format!("{}a", &prefix[..prefix.len() - 2]), rule);
    }
    check_name(prefix, rule)
}

/// Why `name` breaks `rule`, in the API server's words (empty when it is valid).
pub fn check_name(name: &str, rule: NameRule) -> Vec<String> {
    match rule {
        NameRule::Subdomain => check_subdomain(name),
        NameRule::Label => check_label(name),
        NameRule::Dns1035 => check_dns1035(name),
        NameRule::PathSegment => {
            if name == "." || name == ".." {
                vec![format!("may not be '{name}'")]
            } else {
                ["/", "%"]
                    .iter()
                    .filter(|c| name.contains(*c))
                    .map(|c| format!("may not contain '{c}'"))
                    .collect()
            }
        }
    }
}

fn is_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

fn is_subdomain(s: &str) -> bool {
    s.split('.').all(is_label)
}

/// A regex failure, worded as `validation.RegexError` words it (Kubernetes 1.34): each
/// example is followed by `, ` and joined by ` or `, hence the two spaces.
fn regex_error(msg: &str, regex: &str, examples: &[&str]) -> String {
    let shown: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{msg} (e.g. {}regex used for validation is '{regex}')",
        shown.join(" or ")
    )
}

const LABEL_REGEX: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const SUBDOMAIN_REGEX: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const QUALIFIED_NAME_REGEX: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

pub fn check_subdomain(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    if !is_subdomain(name) {
        errs.push(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            SUBDOMAIN_REGEX,
            &["example.com"],
        ));
    }
    errs
}

pub fn check_label(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !is_label(name) {
        if is_subdomain(name) {
            // A valid subdomain that is not a label can only be one with dots.
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
                LABEL_REGEX,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

pub fn check_dns1035(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !is_label(name) || !name.as_bytes()[0].is_ascii_lowercase() {
        errs.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            "[a-z]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// Whether `s` is a qualified name's name part.
fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// Why a label key (or, lowercased, an annotation key) is invalid: `validation.IsQualifiedName`.
pub fn check_qualified_name(key: &str) -> Vec<String> {
    let parts: Vec<&str> = key.split('/').collect();
    let mut errs = Vec::new();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(
                    check_subdomain(prefix)
                        .into_iter()
                        .map(|e| format!("prefix part {e}")),
                );
            }
            *name
        }
        _ => {
            return vec![format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    QUALIFIED_NAME_MSG,
                    QUALIFIED_NAME_REGEX,
                    &["MyName", "my.name", "123-abc"]
                )
            )];
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 characters".to_string());
    }
    if !is_qualified_name_part(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_MSG,
                QUALIFIED_NAME_REGEX,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// Why a label value is invalid: `validation.IsValidLabelValue`.
pub fn check_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        errs.push(regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?",
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_suffix_ignores_key_order() {
        let a: Value =
            serde_json::from_str(r#"{"spec": {"b": 1, "a": [{"y": 2, "x": 3}]}}"#).unwrap();
        let b: Value =
            serde_json::from_str(r#"{"spec": {"a": [{"x": 3, "y": 2}], "b": 1}}"#).unwrap();
        assert_eq!(hash_suffix(&a), hash_suffix(&b));
        let c: Value =
            serde_json::from_str(r#"{"spec": {"a": [{"x": 3, "y": 2}], "b": 2}}"#).unwrap();
        assert_ne!(hash_suffix(&a), hash_suffix(&c));
    }

    #[test]
    fn names_follow_the_api_servers_rules() {
        assert!(check_subdomain("web.example-1").is_empty());
        assert_eq!(check_subdomain("Web").len(), 1);
        assert!(check_label("a.b").len() == 1);
        assert!(check_dns1035("1abc").len() == 1);
        assert!(check_dns1035("abc").is_empty());
        assert!(check_qualified_name("app.kubernetes.io/name").is_empty());
        assert!(!check_qualified_name("/x").is_empty());
        assert!(check_label_value("").is_empty());
        assert!(!check_label_value("-x").is_empty());
        assert_eq!(check_label("a.b"), ["must not contain dots"]);
        assert_eq!(
            check_subdomain("Web"),
            [
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ]
        );
        assert_eq!(
            check_label("-x")[0],
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        );
        // An empty name part breaks both rules, as in the API server.
        assert_eq!(check_qualified_name("example.com/").len(), 2);
        assert_eq!(check_qualified_name("a/b/c").len(), 1);
        assert!(check_generate_name("web-", NameRule::Subdomain).is_empty());
        assert!(!check_generate_name("Web-", NameRule::Subdomain).is_empty());
    }

    #[test]
    fn uids_and_generated_names_look_right() {
        let uid = new_uid();
        assert_eq!(uid.len(), 36);
        assert_eq!(&uid[14..15], "4");
        let n = generate_name("web-");
        assert!(n.starts_with("web-") && n.len() == 9);
    }
}
