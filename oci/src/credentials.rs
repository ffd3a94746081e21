//! helm's registry credentials file (`registry/config.json`, `HELM_REGISTRY_CONFIG`,
//! `--registry-config`): docker's `config.json`, read and written as helm (oras-go's
//! file store) does, so a `helm registry login` serves chartkit and the reverse.
//! Credentials go to a `docker-credential-*` helper when `credHelpers` names one for the
//! registry or `credsStore` names one for all; otherwise into `auths` as base64
//! `user:password`. Other fields of the file are kept as they are.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use base64::Engine;
use serde_json::{Map, Value};

use crate::auth::Credentials;
use crate::error::OciError;

/// The credentials file at `path` (a missing file is empty).
pub struct CredentialsFile {
    pub path: PathBuf,
    json: Map<String, Value>,
}

impl CredentialsFile {
    pub fn load(path: &Path) -> Result<CredentialsFile, OciError> {
        let bad = |reason: String| OciError::Credentials {
            path: path.to_owned(),
            reason,
        };
        let json = match std::fs::read(path) {
            Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => Map::new(),
            Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
                Ok(Value::Object(map)) => map,
                Ok(_) => return Err(bad("it is not a JSON object".into())),
                Err(e) => return Err(bad(format!("it is not valid JSON: {e}"))),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
            Err(e) => return Err(bad(format!("cannot read it: {e}"))),
        };
        Ok(CredentialsFile {
            path: path.to_owned(),
            json,
        })
    }

    /// The helper that keeps `host`'s credentials, if any.
    fn helper(&self, host: &str) -> Option<String> {
        self.json
            .get("credHelpers")
            .and_then(|h| h.get(host))
            .or_else(|| self.json.get("credsStore"))
            .and_then(|h| h.as_str())
            .filter(|h| !h.is_empty())
            .map(str::to_owned)
    }

    /// `host`'s credentials, from its helper or from `auths`.
    pub fn get(&self, host: &str) -> Result<Option<Credentials>, OciError> {
        if let Some(helper) = self.helper(host) {
            return helper_get(&helper, host);
        }
        let Some(auths) = self.json.get("auths").and_then(|a| a.as_object()) else {
            return Ok(None);
        };
        let keys = [
            host.to_owned(),
            format!("https://{host}"),
            format!("http://{host}"),
            format!("https://{host}/v1/"),
        ];
        let Some(entry) = keys.iter().find_map(|k| auths.get(k)) else {
            return Ok(None);
        };
        let field = |name: &str| {
            entry
                .get(name)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_owned()
        };
        let auth = field("auth");
        if !auth.is_empty() {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(auth.trim())
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .and_then(|s| s.split_once(':').map(|(u, p)| (u.to_owned(), p.to_owned())));
            let Some((username, password)) = decoded else {
                return Err(OciError::Credentials {
                    path: self.path.clone(),
                    reason: format!("the `auth` of {host} is not base64 of `user:password`"),
                });
            };
            return Ok(Some(Credentials { username, password }));
        }
        let (username, password) = (field("username"), field("password"));
        if !username.is_empty() || !password.is_empty() {
            return Ok(Some(Credentials { username, password }));
        }
        Ok(None)
    }

    /// Stores `credentials` for `host` (in its helper, or in `auths`) and writes the file.
    pub fn store(&mut self, host: &str, credentials: &Credentials) -> Result<(), OciError> {
        if let Some(helper) = self.helper(host) {
            let input = serde_json::json!({
                "ServerURL": host,
                "Username": credentials.username,
                "Secret": credentials.password,
            });
            return run_helper(&helper, "store", host, &input.to_string()).map(drop);
        }
        let auth = base64::engine::general_purpose::STANDARD
            .encode(format!("{}:{}", credentials.username, credentials.password));
        let auths = self
            .json
            .entry("auths")
            .or_insert_with(|| Value::Object(Map::new()));
        if !auths.is_object() {
            *auths = Value::Object(Map::new());
        }
        let mut entry = Map::new();
        entry.insert("auth".into(), Value::String(auth));
        auths
            .as_object_mut()
            .expect("made an object above")
            .insert(host.to_owned(), Value::Object(entry));
        self.save()
    }

    /// Removes `host`'s credentials; false when there were none.
    pub fn remove(&mut self, host: &str) -> Result<bool, OciError> {
        if let Some(helper) = self.helper(host) {
            if helper_get(&helper, host)?.is_none() {
                return Ok(false);
            }
            run_helper(&helper, "erase", host, host)?;
            return Ok(true);
        }
        let removed = self
            .json
            .get_mut("auths")
            .and_then(|a| a.as_object_mut())
            .and_then(|a| a.shift_remove(host))
            .is_some();
        if removed {
            self.save()?;
        }
        Ok(removed)
    }

    /// Writes the file as helm does: tab-indented JSON, readable by its owner only.
    fn save(&self) -> Result<(), OciError> {
        let mut bytes = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(b"\t");
        let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, formatter);
        serde::Serialize::serialize(&self.json, &mut serializer).map_err(|e| {
            OciError::Credentials {
                path: self.path.clone(),
                reason: e.to_string(),
            }
        })?;
        if let Some(dir) = self.path.parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir).map_err(|source| OciError::Io {
                path: dir.to_owned(),
                source,
            })?;
        }
        chartkit_durable::write(&self.path, &bytes)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&self.path, std::fs::Permissions::from_mode(0o600));
        }
        Ok(())
    }
}

/// `docker-credential-HELPER get`: the credentials, or `None` when it has none.
fn helper_get(helper: &str, host: &str) -> Result<Option<Credentials>, OciError> {
    let output = match run_helper(helper, "get", host, host) {
        Ok(output) => output,
        // The helpers' protocol: this text on stdout with a failure status.
        Err(OciError::Helper { reason, .. }) if reason.contains("credentials not found") => {
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let json: Value = serde_json::from_slice(&output).map_err(|e| OciError::Helper {
        helper: helper.to_owned(),
        registry: host.to_owned(),
        reason: format!("its answer is not JSON: {e}"),
    })?;
    let field = |name: &str| {
        json.get(name)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_owned()
    };
    Ok(Some(Credentials {
        username: field("Username"),
        password: field("Secret"),
    }))
}

fn run_helper(helper: &str, action: &str, host: &str, input: &str) -> Result<Vec<u8>, OciError> {
    let failed = |reason: String| OciError::Helper {
        helper: helper.to_owned(),
        registry: host.to_owned(),
        reason,
    };
    let program = format!("docker-credential-{helper}");
    let mut child = Command::new(&program)
        .arg(action)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(format!("cannot run it: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input.as_bytes());
    }
    let output = child
        .wait_with_output()
        .map_err(|e| failed(format!("cannot run it: {e}")))?;
    if !output.status.success() {
        let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        let err = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        return Err(failed(if text.is_empty() { err } else { text }));
    }
    Ok(output.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logins_are_stored_as_helm_stores_them_and_other_fields_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("registry/config.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            r#"{"auths":{"other:1":{"auth":"eDp5"}},"HttpHeaders":{"X":"1"}}"#,
        )
        .unwrap();
        let mut file = CredentialsFile::load(&path).unwrap();
        let alice = Credentials {
            username: "alice".into(),
            password: "secret".into(),
        };
        file.store("127.0.0.1:5000", &alice).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "{\n\t\"auths\": {\n\t\t\"other:1\": {\n\t\t\t\"auth\": \"eDp5\"\n\t\t},\n\t\t\"127.0.0.1:5000\": {\n\t\t\t\"auth\": \"YWxpY2U6c2VjcmV0\"\n\t\t}\n\t},\n\t\"HttpHeaders\": {\n\t\t\"X\": \"1\"\n\t}\n}"
        );
        let file = CredentialsFile::load(&path).unwrap();
        assert_eq!(file.get("127.0.0.1:5000").unwrap(), Some(alice));
        assert_eq!(file.get("other:1").unwrap().unwrap().username, "x");
        assert_eq!(file.get("nowhere").unwrap(), None);
        let mut file = CredentialsFile::load(&path).unwrap();
        assert!(file.remove("127.0.0.1:5000").unwrap());
        assert!(!file.remove("127.0.0.1:5000").unwrap());
        assert_eq!(
            CredentialsFile::load(&path)
                .unwrap()
                .get("127.0.0.1:5000")
                .unwrap(),
            None
        );
    }

    #[test]
    fn a_broken_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        std::fs::write(&path, "{not json").unwrap();
        let error = CredentialsFile::load(&path).err().unwrap().to_string();
        assert!(
            error.contains("config.json") && error.contains("not valid JSON"),
            "{error}"
        );
    }
}
