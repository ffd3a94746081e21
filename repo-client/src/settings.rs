//! `repositories.yaml`, in Helm's format and with Helm's field names, so the file can be
//! shared with helm or copied from it.

use std::path::{Path, PathBuf};

use chartkit_yaml::Value;

use crate::error::{ClientError, Result};

/// Where chartkit keeps its settings and caches. The command line fills it from the
/// flags and the environment: by default the repository list and downloaded indexes are
/// Helm's own (`~/.config/helm/repositories.yaml`, `~/.cache/helm/repository`), while
/// the content store and compact indexes stay under chartkit's cache.
#[derive(Debug, Clone)]
pub struct Paths {
    /// Holds `repositories.yaml`.
    pub config_home: PathBuf,
    /// Holds `repository/` (downloaded indexes), `content/` (packages by digest) and the
    /// compact index cache.
    pub cache_home: PathBuf,
    /// A repository list to use instead of `config_home`'s (helm's `--repository-config`).
    pub repositories: Option<PathBuf>,
    /// A directory of downloaded indexes to use instead of `cache_home`'s `repository/`
    /// (helm's `--repository-cache`; helm's own cache has the same layout).
    pub indexes: Option<PathBuf>,
    /// Helm's registry credentials file (`--registry-config`), for OCI registries.
    pub registry_config: Option<PathBuf>,
}

impl Paths {
    pub fn repositories_file(&self) -> PathBuf {
        self.repositories
            .clone()
            .unwrap_or_else(|| self.config_home.join("repositories.yaml"))
    }

    /// The directory of downloaded indexes and their validators.
    pub fn index_dir(&self) -> PathBuf {
        self.indexes
            .clone()
            .unwrap_or_else(|| self.cache_home.join("repository"))
    }

    /// The content-addressed store: `content/sha256/<2 hex>/<64 hex>`.
    pub fn content_dir(&self) -> PathBuf {
        self.cache_home.join("content").join("sha256")
    }
}

/// One configured repository: the fields of Helm's `repo.Entry`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepoEntry {
    pub name: String,
    pub url: String,
    pub username: String,
    pub password: String,
    pub cert_file: String,
    pub key_file: String,
    pub ca_file: String,
    pub insecure_skip_tls_verify: bool,
    pub pass_credentials_all: bool,
    /// A bearer token (chartkit's own field `token`, which helm ignores when reading).
    pub token: String,
}

impl RepoEntry {
    /// An entry for a repository that is only known by its URL (helm's `--repo`, a
    /// Chart.yaml dependency's `repository: https://...`), without credentials.
    pub fn for_url(url: &str) -> RepoEntry {
        RepoEntry {
            url: url.to_owned(),
            ..RepoEntry::default()
        }
    }

    /// True for an entry made by [`RepoEntry::for_url`] (no name).
    pub fn is_unnamed(&self) -> bool {
        self.name.is_empty()
    }
}

/// The repository list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoFile {
    pub api_version: String,
    /// Kept as text: helm writes the time the file was made, or Go's zero time.
    pub generated: String,
    pub repositories: Vec<RepoEntry>,
}

impl Default for RepoFile {
    /// What helm starts from when the file does not exist yet.
    fn default() -> RepoFile {
        RepoFile {
            api_version: String::new(),
            generated: "0001-01-01T00:00:00Z".to_owned(),
            repositories: Vec::new(),
        }
    }
}

impl RepoFile {
    /// Reads the file at `path`; a missing file is an empty list.
    pub fn load(path: &Path) -> Result<RepoFile> {
        match std::fs::read_to_string(path) {
            Ok(text) => RepoFile::parse(&text, path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(RepoFile::default()),
            Err(e) => Err(ClientError::Io {
                path: path.to_owned(),
                source: e,
            }),
        }
    }

    /// Parses repositories.yaml text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<RepoFile> {
        let bad = |reason: String| ClientError::Settings {
            path: path.to_owned(),
            reason,
        };
        if text.trim().is_empty() {
            return Ok(RepoFile::default());
        }
        let top = chartkit_yaml::parse_values(text).map_err(|e| bad(e.to_string()))?;
        let mut file = RepoFile::default();
        if let Some(v) = top.get("apiVersion").and_then(scalar) {
            file.api_version = v;
        }
        if let Some(v) = top.get("generated").and_then(scalar) {
            file.generated = v;
        }
        let repos = match top.get("repositories") {
            None | Some(Value::Null) => &[][..],
            Some(Value::Seq(items)) => items.as_slice(),
            Some(_) => return Err(bad("`repositories` must be a list".into())),
        };
        for (i, item) in repos.iter().enumerate() {
            let Some(map) = item.as_map() else {
                if matches!(item, Value::Null) {
                    continue;
                }
                return Err(bad(format!("repositories[{i}] must be a map")));
            };
            let text = |key: &str| map.get(key).and_then(scalar).unwrap_or_default();
            let flag = |key: &str| -> Result<bool> {
                match map.get(key) {
                    None | Some(Value::Null) => Ok(false),
                    Some(Value::Bool(b)) => Ok(*b),
                    Some(_) => Err(bad(format!(
                        "repositories[{i}].{key} must be true or false"
                    ))),
                }
            };
            file.repositories.push(RepoEntry {
                name: text("name"),
                url: text("url"),
                username: text("username"),
                password: text("password"),
                cert_file: text("certFile"),
                key_file: text("keyFile"),
                ca_file: text("caFile"),
                insecure_skip_tls_verify: flag("insecure_skip_tls_verify")?,
                pass_credentials_all: flag("pass_credentials_all")?,
                token: text("token"),
            });
        }
        Ok(file)
    }

    /// The file as helm writes it: through go-yaml v2 (keys sorted, as
    /// sigs.k8s.io/yaml's trip through JSON leaves them), every field present. `token`
    /// is written only when set.
    pub fn to_yaml(&self) -> String {
        let text = |s: &str| Value::String(s.to_owned());
        let map = |pairs: Vec<(&str, Value)>| {
            Value::Map(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
        };
        let repositories = self
            .repositories
            .iter()
            .map(|r| {
                let mut fields = vec![
                    ("caFile", text(&r.ca_file)),
                    ("certFile", text(&r.cert_file)),
                    (
                        "insecure_skip_tls_verify",
                        Value::Bool(r.insecure_skip_tls_verify),
                    ),
                    ("keyFile", text(&r.key_file)),
                    ("name", text(&r.name)),
                    ("pass_credentials_all", Value::Bool(r.pass_credentials_all)),
                    ("password", text(&r.password)),
                ];
                if !r.token.is_empty() {
                    fields.push(("token", text(&r.token)));
                }
                fields.push(("url", text(&r.url)));
                fields.push(("username", text(&r.username)));
                map(fields)
            })
            .collect();
        chartkit_yaml::to_yaml(&map(vec![
            ("apiVersion", text(&self.api_version)),
            ("generated", text(&self.generated)),
            ("repositories", Value::Seq(repositories)),
        ]))
    }

    /// Takes the lock helm takes before it changes the list (`repositories.lock` beside
    /// `repositories.yaml`: the file name with its extension replaced), waiting for it
    /// up to 30 seconds as helm does. Read the list after taking it and save before
    /// dropping it, so two writers (chartkit or helm) never lose each other's change.
    pub fn lock(path: &Path) -> Result<RepoFileLock> {
        let lock_path = lock_path(path);
        if let Some(dir) = lock_path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(ClientError::io(dir))?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&lock_path)
            .map_err(ClientError::io(&lock_path))?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(RepoFileLock { _file: file }),
                Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(ClientError::Settings {
                        path: path.to_owned(),
                        reason: format!(
                            "another process has held its lock `{}` for 30 seconds",
                            lock_path.display()
                        ),
                    });
                }
                Err(std::fs::TryLockError::Error(source)) => {
                    return Err(ClientError::Io {
                        path: lock_path,
                        source,
                    });
                }
            }
        }
    }

    /// Writes the file durably, readable by its owner only (it may hold passwords).
    pub fn save(&self, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(ClientError::io(dir))?;
        }
        chartkit_durable::write_with(
            path,
            self.to_yaml().as_bytes(),
            chartkit_durable::Options { mode: Some(0o600) },
        )?;
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&RepoEntry> {
        self.repositories.iter().find(|r| r.name == name)
    }

    /// Replaces the entry of the same name, or appends it (Helm's `File.Update`).
    pub fn update(&mut self, entry: RepoEntry) {
        match self.repositories.iter_mut().find(|r| r.name == entry.name) {
            Some(slot) => *slot = entry,
            None => self.repositories.push(entry),
        }
    }

    /// Removes the entry; false when there was none.
    pub fn remove(&mut self, name: &str) -> bool {
        let before = self.repositories.len();
        self.repositories.retain(|r| r.name != name);
        before != self.repositories.len()
    }

    /// The configured entry whose URL is `url` (ignoring a trailing slash), for the
    /// credentials of a repository given by URL.
    pub fn find_url(&self, url: &str) -> Option<&RepoEntry> {
        let url = url.trim_end_matches('/');
        self.repositories
            .iter()
            .find(|r| r.url.trim_end_matches('/') == url)
    }
}

/// The lock on a repository list, released when dropped.
pub struct RepoFileLock {
    _file: std::fs::File,
}

/// helm's lock file name: `repositories.yaml` locks through `repositories.lock`, a name
/// without an extension through `NAME.lock`.
pub fn lock_path(path: &Path) -> PathBuf {
    match path.extension() {
        Some(_) => path.with_extension("lock"),
        None => {
            let mut name = path.as_os_str().to_owned();
            name.push(".lock");
            PathBuf::from(name)
        }
    }
}

/// A scalar as text, the way Go reads it into a string field.
fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Int(i) => Some(i.to_string()),
        Value::Float(f) => Some(f.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_helms_format() {
        let text = "apiVersion: \"\"\ngenerated: \"0001-01-01T00:00:00Z\"\nrepositories:\n- caFile: \"\"\n  certFile: \"\"\n  insecure_skip_tls_verify: false\n  keyFile: \"\"\n  name: stable\n  pass_credentials_all: false\n  password: \"\"\n  url: https://charts.example.com/stable\n  username: \"\"\n";
        let file = RepoFile::parse(text, Path::new("r.yaml")).unwrap();
        assert_eq!(file.repositories[0].name, "stable");
        assert_eq!(file.to_yaml(), text);
        let mut file = file;
        file.repositories[0].password = "p: #x".into();
        file.repositories.clear();
        assert!(
            file.to_yaml().ends_with("repositories: []\n"),
            "{}",
            file.to_yaml()
        );
    }

    #[test]
    fn strings_are_quoted_as_go_yaml_quotes_them() {
        let mut file = RepoFile::default();
        file.update(RepoEntry {
            name: "a".into(),
            url: "http://h:1/x".into(),
            password: "p: #x".into(),
            username: "true".into(),
            ..RepoEntry::default()
        });
        let yaml = file.to_yaml();
        assert!(yaml.contains("  password: 'p: #x'\n"), "{yaml}");
        assert!(yaml.contains("  username: \"true\"\n"), "{yaml}");
        assert!(yaml.contains("  url: http://h:1/x\n"), "{yaml}");
    }

    #[test]
    fn update_replaces_and_remove_reports() {
        let mut file = RepoFile::default();
        file.update(RepoEntry {
            name: "a".into(),
            url: "http://x".into(),
            ..RepoEntry::default()
        });
        file.update(RepoEntry {
            name: "a".into(),
            url: "http://y".into(),
            ..RepoEntry::default()
        });
        assert_eq!(file.repositories.len(), 1);
        assert_eq!(file.get("a").unwrap().url, "http://y");
        assert!(file.remove("a"));
        assert!(!file.remove("a"));
    }

    #[test]
    fn the_lock_file_is_named_as_helms() {
        assert_eq!(
            lock_path(Path::new("/c/repositories.yaml")),
            Path::new("/c/repositories.lock")
        );
        assert_eq!(lock_path(Path::new("/c/repos")), Path::new("/c/repos.lock"));
    }

    #[test]
    fn a_held_lock_is_waited_for_then_taken() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sub/repositories.yaml");
        let held = RepoFile::lock(&file).unwrap();
        assert!(dir.path().join("sub/repositories.lock").exists());
        let waiter = {
            let file = file.clone();
            std::thread::spawn(move || {
                let started = std::time::Instant::now();
                let _lock = RepoFile::lock(&file).unwrap();
                started.elapsed()
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(300));
        drop(held);
        let waited = waiter.join().unwrap();
        assert!(
            waited >= std::time::Duration::from_millis(250),
            "{waited:?}"
        );
    }

    #[test]
    fn wrong_types_name_the_field() {
        let err = RepoFile::parse(
            "repositories:\n- name: a\n  insecure_skip_tls_verify: maybe\n",
            Path::new("r.yaml"),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("repositories[0].insecure_skip_tls_verify")
        );
    }
}
