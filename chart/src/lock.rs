//! `Chart.lock` (and `requirements.lock` for v1 charts): the resolved dependencies.

use chartkit_yaml::{Map, Value};
use sha2::{Digest as _, Sha256};

use crate::metadata::{Dependency, MetadataError, MetadataYamlError, decode_locked_dependencies};
use crate::yaml_fields::{Decoding, Fields};

/// A dependency lock file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lock {
    /// When the lock was generated, as RFC 3339 text normalised the way Go prints it.
    pub generated: String,
    /// Digest of the dependency declarations the lock was made from.
    pub digest: String,
    pub dependencies: Vec<Dependency>,
}

impl Lock {
    pub fn from_yaml(text: &str) -> Result<Lock, MetadataYamlError> {
        let node = chartkit_yaml::parse_node(text).map_err(MetadataYamlError::Yaml)?;
        if let Some(error) = node.json_key_error() {
            return Err(MetadataYamlError::Yaml(error));
        }
        let fields = Fields::document(
            &node,
            &["generated", "digest", "dependencies"],
            Decoding::LENIENT,
        )
        .map_err(|e| MetadataYamlError::Metadata(e.into()))?;
        let generated_node = fields.get("generated");
        let generated = fields
            .string("generated")
            .map_err(|e| MetadataYamlError::Metadata(e.into()))?;
        let generated = if generated.is_empty() {
            "0001-01-01T00:00:00Z".to_owned()
        } else {
            normalize_rfc3339(&generated).ok_or_else(|| {
                MetadataYamlError::Metadata(MetadataError::Invalid(format!(
                    "line {}: `generated` must be an RFC 3339 time such as 2024-01-02T15:04:05Z, found {generated:?}",
                    generated_node.map_or(0, |n| n.line)
                )))
            })?
        };
        Ok(Lock {
            generated,
            digest: fields
                .string("digest")
                .map_err(|e| MetadataYamlError::Metadata(e.into()))?,
            dependencies: decode_locked_dependencies(&fields)
                .map_err(MetadataYamlError::Metadata)?,
        })
    }

    /// The lock as Helm serialises it (all three keys always present).
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("generated".into(), Value::from(self.generated.as_str()));
        map.insert("digest".into(), Value::from(self.digest.as_str()));
        map.insert(
            "dependencies".into(),
            Value::Seq(self.dependencies.iter().map(Dependency::to_value).collect()),
        );
        Value::Map(map)
    }

    pub fn to_yaml(&self) -> String {
        chartkit_yaml::to_yaml(&self.to_value())
    }
}

/// Helm's `HashReq`: `sha256:` and the hex SHA-256 of the JSON Go writes for the pair
/// `[requested, locked]`. `requested` is `None` when Chart.yaml has no `dependencies` key
/// (Go's nil slice, written `null`). Helm compares this with a lock's `digest` to tell
/// whether the lock still belongs to Chart.yaml, so every byte must be Go's.
pub fn dependencies_digest(requested: Option<&[Dependency]>, locked: &[Dependency]) -> String {
    let mut json = String::from("[");
    match requested {
        None => json.push_str("null"),
        Some(list) => write_dependency_list(&mut json, list),
    }
    json.push(',');
    write_dependency_list(&mut json, locked);
    json.push(']');
    format!("sha256:{}", hex::encode(Sha256::digest(json.as_bytes())))
}

/// Helm's `HashV2Req`, the digest Helm 2 wrote into requirements.lock:
/// `{"dependencies": requested}`.
pub fn dependencies_digest_v2(requested: Option<&[Dependency]>) -> String {
    let mut json = String::from("{\"dependencies\":");
    match requested {
        None => json.push_str("null"),
        Some(list) => write_dependency_list(&mut json, list),
    }
    json.push('}');
    format!("sha256:{}", hex::encode(Sha256::digest(json.as_bytes())))
}

fn write_dependency_list(out: &mut String, list: &[Dependency]) {
    out.push('[');
    for (i, dependency) in list.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_dependency(out, dependency);
    }
    out.push(']');
}

/// One `chart.Dependency` as `encoding/json` writes it: struct field order, `omitempty`
/// on everything but `name` and `repository`.
fn write_dependency(out: &mut String, d: &Dependency) {
    out.push_str("{\"name\":");
    chartkit_yaml::gojson::write_string(out, &d.name);
    if !d.version.is_empty() {
        out.push_str(",\"version\":");
        chartkit_yaml::gojson::write_string(out, &d.version);
    }
    out.push_str(",\"repository\":");
    chartkit_yaml::gojson::write_string(out, &d.repository);
    if !d.condition.is_empty() {
        out.push_str(",\"condition\":");
        chartkit_yaml::gojson::write_string(out, &d.condition);
    }
    if !d.tags.is_empty() {
        out.push_str(",\"tags\":[");
        for (i, tag) in d.tags.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            chartkit_yaml::gojson::write_string(out, tag);
        }
        out.push(']');
    }
    if d.enabled {
        out.push_str(",\"enabled\":true");
    }
    if !d.import_values.is_empty() {
        out.push_str(",\"import-values\":");
        chartkit_yaml::gojson::write_value(out, &Value::Seq(d.import_values.clone()));
    }
    if !d.alias.is_empty() {
        out.push_str(",\"alias\":");
        chartkit_yaml::gojson::write_string(out, &d.alias);
    }
    out.push('}');
}

/// Parses RFC 3339 and prints it as Go's `time.RFC3339Nano` does: fractional seconds
/// without trailing zeros, `Z` for a zero offset.
fn normalize_rfc3339(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes
            .get(range)
            .is_some_and(|s| s.iter().all(u8::is_ascii_digit))
    };
    if bytes.len() < 20
        || !digits(0..4)
        || bytes[4] != b'-'
        || !digits(5..7)
        || bytes[7] != b'-'
        || !digits(8..10)
        || !matches!(bytes[10], b'T' | b't')
        || !digits(11..13)
        || bytes[13] != b':'
        || !digits(14..16)
        || bytes[16] != b':'
        || !digits(17..19)
    {
        return None;
    }
    let mut rest = &text[19..];
    let mut fraction = "";
    if let Some(after_dot) = rest.strip_prefix('.') {
        let end = after_dot
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(after_dot.len());
        if end == 0 {
            return None;
        }
        fraction = after_dot[..end].trim_end_matches('0');
        rest = &after_dot[end..];
    }
    let zone = match rest {
        "Z" | "z" => "Z".to_owned(),
        zone if zone.len() == 6
            && matches!(zone.as_bytes()[0], b'+' | b'-')
            && zone.as_bytes()[3] == b':'
            && zone[1..3]
                .bytes()
                .chain(zone[4..6].bytes())
                .all(|b| b.is_ascii_digit()) =>
        {
            if &zone[1..] == "00:00" {
                "Z".to_owned()
            } else {
                zone.to_owned()
            }
        }
        _ => return None,
    };
    let mut out = String::from(&text[..10]);
    out.push('T');
    out.push_str(&text[11..19]);
    if !fraction.is_empty() {
        out.push('.');
        out.push_str(fraction);
    }
    out.push_str(&zone);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_like_helm() {
        let text = "dependencies:\n- name: memcached\n  repository: oci://r\n  version: 7.9.7\ndigest: sha256:90bb\ngenerated: \"2025-08-18T16:50:21.811944+02:00\"\n";
        let lock = Lock::from_yaml(text).unwrap();
        assert_eq!(lock.to_yaml(), text);
    }

    #[test]
    fn times_are_normalised() {
        assert_eq!(
            normalize_rfc3339("2024-01-02T03:04:05.120000000+00:00").unwrap(),
            "2024-01-02T03:04:05.12Z"
        );
        assert_eq!(
            normalize_rfc3339("2024-01-02T03:04:05-07:00").unwrap(),
            "2024-01-02T03:04:05-07:00"
        );
        assert!(normalize_rfc3339("yesterday").is_none());
        assert!(
            Lock::from_yaml("generated: soon\n")
                .unwrap_err()
                .to_string()
                .contains("RFC 3339")
        );
    }
}

#[cfg(test)]
mod digest_tests {
    use super::*;
    use crate::Metadata;

    fn requested(chart_yaml: &str) -> Vec<Dependency> {
        let metadata = Metadata::from_chart_files([chart_yaml], []).unwrap();
        metadata
            .dependencies
            .into_iter()
            .map(Option::unwrap)
            .collect()
    }

    /// The digest helm v4.1.4 wrote into Chart.lock for this Chart.yaml (after it replaced
    /// `@local` by the repository's URL, as it does before hashing).
    #[test]
    fn digest_matches_helm() {
        let chart_yaml = r#"apiVersion: v2
name: parent
version: 0.1.0
dependencies:
- name: alpha
  version: "^1.0 <2"
  repository: "http://127.0.0.1:18751"
  condition: alpha.enabled
  tags: [a, "b&c"]
  import-values:
  - child: x
    parent: y
  - data
  - child: n
    parent: 1.5
- name: beta
  version: ">=0.1.0"
  repository: http://127.0.0.1:18751/
  alias: b2
- name: alpha
  alias: alpha-two
  version: 1.0.0
  repository: http://127.0.0.1:18751
"#;
        let lock = Lock::from_yaml(
            "dependencies:\n- name: alpha\n  repository: http://127.0.0.1:18751\n  version: 1.2.0\n- name: beta\n  repository: http://127.0.0.1:18751/\n  version: 0.2.0\n- name: alpha\n  repository: http://127.0.0.1:18751\n  version: 1.0.0\n",
        )
        .unwrap();
        assert_eq!(
            dependencies_digest(Some(&requested(chart_yaml)), &lock.dependencies),
            "sha256:b47a2e83dc8ad690279708683b3f22e94873ad79f4a81d6ffed88c8b74820c02"
        );
    }
}
