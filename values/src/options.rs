//! The user's values from the command line, merged in Helm 4's order: `-f` files, then
//! `--set-json`, `--set`, `--set-string`, `--set-file`, `--set-literal`, each in the order
//! given.

use std::io::Read;

use chartkit_yaml::{Map, Value};

use crate::strvals;

/// Reads a value file given as a URL: `Some` with its bytes (or why not) when the
/// fetcher serves the argument, `None` for a path on disk.
pub type Fetch<'a> = &'a mut dyn FnMut(&str) -> Option<Result<Vec<u8>, String>>;

/// The value flags of `helm template`/`install`/`lint`.
#[derive(Debug, Clone, Default)]
pub struct ValueOptions {
    /// `-f/--values`: paths, `-` for stdin.
    pub value_files: Vec<String>,
    /// `--set-json`: `key=json` assignments or whole JSON objects.
    pub json_values: Vec<String>,
    /// `--set`.
    pub values: Vec<String>,
    /// `--set-string`.
    pub string_values: Vec<String>,
    /// `--set-file`: `key=path`.
    pub file_values: Vec<String>,
    /// `--set-literal`.
    pub literal_values: Vec<String>,
}

/// Why the user's values could not be read. Messages are Helm's.
#[derive(Debug, thiserror::Error)]
pub enum OptionsError {
    #[error("open {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("failed to parse {path}: {}", error.helm_values_message())]
    Parse {
        path: String,
        // Not the error's `source`: its text is part of this message already.
        error: chartkit_yaml::Error,
    },
    /// A URL the caller's fetcher serves could not be fetched; `reason` names it.
    #[error("{reason}")]
    Fetch { url: String, reason: String },
    #[error("failed parsing --set-json data JSON: {0}")]
    JsonObject(String),
    #[error("failed parsing --set-json data {0}")]
    Json(String),
    #[error("failed parsing {flag} data: {source}")]
    Set {
        flag: &'static str,
        source: strvals::StrvalsError,
    },
}

impl ValueOptions {
    pub fn is_empty(&self) -> bool {
        self.value_files.is_empty()
            && self.json_values.is_empty()
            && self.values.is_empty()
            && self.string_values.is_empty()
            && self.file_values.is_empty()
            && self.literal_values.is_empty()
    }

    /// Merges every source into one map, reading `-` from `stdin`.
    pub fn merge(&self, stdin: &mut dyn Read) -> Result<Map, OptionsError> {
        self.merge_with(stdin, &mut |_| None)
    }

    /// [`ValueOptions::merge`], with `-f` and `--set-file` arguments that `fetch`
    /// serves (helm's getters: http(s) and plugins' schemes) read through it; it
    /// answers `None` for anything to read from disk.
    pub fn merge_with(&self, stdin: &mut dyn Read, fetch: Fetch<'_>) -> Result<Map, OptionsError> {
        let mut base = Map::new();
        let mut stdin_read = false;
        // Files and stdin are bytes, as Go reads them.
        let mut read = |path: &str| -> Result<Vec<u8>, OptionsError> {
            if path.trim() == "-" {
                if !stdin_read {
                    let mut data = Vec::new();
                    stdin
                        .read_to_end(&mut data)
                        .map_err(|e| OptionsError::Read {
                            path: "-".into(),
                            reason: e.to_string(),
                        })?;
                    stdin_read = true;
                    return Ok(data);
                }
                // Go's ReadAll of an exhausted stdin gives nothing the second time.
                return Ok(Vec::new());
            }
            if let Some(fetched) = fetch(path) {
                return fetched.map_err(|reason| OptionsError::Fetch {
                    url: path.to_owned(),
                    reason,
                });
            }
            read_file(path)
        };
        for path in &self.value_files {
            let text = String::from_utf8_lossy(&read(path)?).into_owned();
            let current =
                chartkit_yaml::parse_values(&text).map_err(|error| OptionsError::Parse {
                    path: path.clone(),
                    error,
                })?;
            merge_maps(&mut base, current);
        }
        for value in &self.json_values {
            let trimmed = value.trim();
            if trimmed.starts_with('{') {
                let parsed: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_str(trimmed)
                        .map_err(|_| OptionsError::JsonObject(value.clone()))?;
                let Some(map) = strvals::from_json(&serde_json::Value::Object(parsed)).take_map()
                else {
                    unreachable!("a JSON object converts to a map")
                };
                merge_maps(&mut base, map);
            } else {
                strvals::parse_set_json(value, &mut base)
                    .map_err(|_| OptionsError::Json(value.clone()))?;
            }
        }
        for value in &self.values {
            strvals::parse_set(value, &mut base).map_err(|source| OptionsError::Set {
                flag: "--set",
                source,
            })?;
        }
        for value in &self.string_values {
            strvals::parse_set_string(value, &mut base).map_err(|source| OptionsError::Set {
                flag: "--set-string",
                source,
            })?;
        }
        for value in &self.file_values {
            let mut failure = None;
            let result = strvals::parse_set_file(value, &mut base, &mut |path| {
                read(path).map_err(|e| {
                    let text = e.to_string();
                    failure = Some(e);
                    text
                })
            });
            if let Some(e) = failure {
                return Err(e);
            }
            result.map_err(|source| OptionsError::Set {
                flag: "--set-file",
                source,
            })?;
        }
        for value in &self.literal_values {
            strvals::parse_set_literal(value, &mut base).map_err(|source| OptionsError::Set {
                flag: "--set-literal",
                source,
            })?;
        }
        Ok(base)
    }
}

fn read_file(path: &str) -> Result<Vec<u8>, OptionsError> {
    std::fs::read(path).map_err(|e| OptionsError::Read {
        path: path.to_owned(),
        reason: go_io_reason(&e),
    })
}

/// The reason Go prints for a failed open.
fn go_io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::IsADirectory => "is a directory".into(),
        _ => e.to_string(),
    }
}

/// Helm's `MergeMaps`: maps merge key by key, anything else replaces.
pub fn merge_maps(base: &mut Map, over: Map) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(Value::Map(existing)), mut incoming @ Value::Map(_)) => {
                let incoming = incoming.take_map().unwrap_or_default();
                chartkit_yaml::with_stack(|| merge_maps(existing, incoming))
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_apply_in_helm_order_whatever_the_command_line_order() {
        let dir = std::env::temp_dir().join(format!("chartkit-values-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("v.yaml");
        std::fs::write(&file, "a: file\nb: file\nm: {x: 1, w: 2}\n").unwrap();
        let contents = dir.join("c.txt");
        std::fs::write(&contents, "from-file").unwrap();
        let options = ValueOptions {
            value_files: vec![file.display().to_string(), "-".into()],
            json_values: vec!["b={\"j\":1}".into(), "{\"m\": {\"w\": 3}}".into()],
            values: vec!["c=1".into()],
            string_values: vec!["c=1".into()],
            file_values: vec![format!("f={}", contents.display())],
            literal_values: vec!["f=lit,eral".into()],
        };
        let merged = options.merge(&mut "s: stdin\n".as_bytes()).unwrap();
        assert_eq!(
            chartkit_yaml::to_yaml(&Value::Map(merged)),
            "a: file\nb:\n  j: 1\nc: \"1\"\nf: lit,eral\nm:\n  w: 3\n  x: 1\ns: stdin\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn urls_the_fetcher_serves_are_read_through_it_and_the_rest_from_disk() {
        let options = ValueOptions {
            value_files: vec!["s3://b/v.yaml".into(), "s3://b/gone.yaml".into()],
            file_values: vec!["f=s3://b/f.txt".into()],
            ..Default::default()
        };
        let mut asked = Vec::new();
        let mut fetch = |url: &str| -> Option<Result<Vec<u8>, String>> {
            asked.push(url.to_owned());
            match url {
                "s3://b/v.yaml" => Some(Ok(b"a: fetched\n".to_vec())),
                "s3://b/f.txt" => Some(Ok(b"text".to_vec())),
                _ => Some(Err(format!("plugin \"s3\" failed to fetch {url}"))),
            }
        };
        let error = options
            .merge_with(&mut std::io::empty(), &mut fetch)
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "plugin \"s3\" failed to fetch s3://b/gone.yaml"
        );
        let options = ValueOptions {
            value_files: vec!["s3://b/v.yaml".into(), "/nonexistent/x.yaml".into()],
            ..Default::default()
        };
        let error = options
            .merge_with(&mut std::io::empty(), &mut |url| {
                (url == "s3://b/v.yaml").then(|| Ok(b"a: fetched\n".to_vec()))
            })
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "open /nonexistent/x.yaml: no such file or directory"
        );
        let options = ValueOptions {
            value_files: vec!["s3://b/v.yaml".into()],
            file_values: vec!["f=s3://b/f.txt".into()],
            ..Default::default()
        };
        let merged = options
            .merge_with(&mut std::io::empty(), &mut fetch)
            .unwrap();
        assert_eq!(
            chartkit_yaml::to_yaml(&Value::Map(merged)),
            "a: fetched\nf: text\n"
        );
        assert_eq!(asked[0], "s3://b/v.yaml");
    }

    #[test]
    fn errors_name_the_flag_and_file() {
        let options = ValueOptions {
            value_files: vec!["/nonexistent/values.yaml".into()],
            ..Default::default()
        };
        assert_eq!(
            options
                .merge(&mut std::io::empty())
                .unwrap_err()
                .to_string(),
            "open /nonexistent/values.yaml: no such file or directory"
        );
        let options = ValueOptions {
            values: vec!["a".into()],
            ..Default::default()
        };
        assert_eq!(
            options
                .merge(&mut std::io::empty())
                .unwrap_err()
                .to_string(),
            "failed parsing --set data: key \"a\" has no value"
        );
        let options = ValueOptions {
            json_values: vec!["a={".into()],
            ..Default::default()
        };
        assert_eq!(
            options
                .merge(&mut std::io::empty())
                .unwrap_err()
                .to_string(),
            "failed parsing --set-json data a={"
        );
    }
}
