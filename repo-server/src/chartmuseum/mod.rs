//! ChartMuseum's configuration read as ChartMuseum reads it, and turned into `chartkit
//! serve`'s, so a deployment that starts `chartmuseum` with its flags, environment or
//! config file starts chartkit unchanged.
//!
//! Values are taken as ChartMuseum takes them (urfave/cli over viper): a flag given on the
//! command line, else its environment variable, else the config file's key, else
//! ChartMuseum's default. A setting chartkit cannot honour is refused by name whenever it
//! differs from its default, so nothing a deployment asks for is silently dropped.

mod auth_transport;
#[cfg(test)]
mod behaviour_tests;
mod settings;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use settings::{Kind, SETTINGS, Setting, Support};

use crate::storage::S3Options;

/// Why ChartMuseum's configuration cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum ChartMuseumError {
    #[error("unknown ChartMuseum flag `{0}`")]
    UnknownFlag(String),
    #[error("ChartMuseum flag `--{0}` needs a value")]
    MissingValue(String),
    #[error("unexpected argument `{0}`: ChartMuseum takes only flags")]
    Positional(String),
    #[error("{setting} is `{value}`, not {expected}")]
    BadValue {
        setting: String,
        value: String,
        expected: &'static str,
    },
    #[error("{setting} = `{value}` is not supported: {reason}")]
    Unsupported {
        setting: String,
        value: String,
        reason: String,
    },
    #[error("missing required setting {0}")]
    Missing(String),
    #[error("cannot read the ChartMuseum config file {path}: {message}")]
    ConfigFile { path: String, message: String },
    #[error("unknown key `{key}` in the ChartMuseum config file {path}")]
    UnknownKey { path: String, key: String },
    #[error("cannot create the storage directory {path}: {source}")]
    StorageDir {
        path: String,
        source: std::io::Error,
    },
}

/// One user and password in plain text, as ChartMuseum's `--basic-auth-user/-pass` take it.
#[derive(Clone, PartialEq, Eq)]
pub struct PlainUser {
    pub user: String,
    pub password: String,
}

impl std::fmt::Debug for PlainUser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PlainUser({}, ***)", self.user)
    }
}

/// ChartMuseum's configuration in `chartkit serve`'s terms.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Personality {
    /// `chartkit serve`'s own arguments (what follows `serve`).
    pub serve_args: Vec<String>,
    /// `--basic-auth-user` and `--basic-auth-pass`.
    pub basic_auth: Option<PlainUser>,
    /// The S3 settings ChartMuseum takes as flags rather than from `AWS_*` variables.
    pub s3: S3Options,
    /// `--debug`: log at debug level.
    pub debug: bool,
    /// What ChartMuseum would warn of at start (deprecated settings given).
    pub warnings: Vec<String>,
    /// `--gen-index`: write the index to stdout and exit rather than serve.
    pub gen_index: bool,
    /// A local storage directory to create before serving, as ChartMuseum does.
    pub create_dir: Option<PathBuf>,
}

/// Where a value came from, to name it in errors as the user wrote it.
#[derive(Debug, Clone)]
enum Source {
    Flag,
    Env,
    File,
}

#[derive(Debug, Clone)]
struct Given {
    value: String,
    source: Source,
}

/// The values given, by setting key.
struct Values {
    given: BTreeMap<&'static str, Given>,
}

impl Values {
    fn name(setting: &Setting, source: &Source) -> String {
        match source {
            Source::Flag => format!("--{}", setting.flag),
            Source::Env => setting.env.to_owned(),
            Source::File => format!("`{}` in the config file", setting.key),
        }
    }

    fn setting(key: &str) -> &'static Setting {
        settings::by_key(key).unwrap_or_else(|| panic!("no ChartMuseum setting {key}"))
    }

    /// The value's text: the given one or the default.
    fn text(&self, key: &str) -> String {
        self.given.get(key).map_or_else(
            || Self::setting(key).default.to_owned(),
            |g| g.value.clone(),
        )
    }

    fn is_given(&self, key: &str) -> bool {
        self.given.contains_key(key)
    }

    fn describe(&self, key: &str) -> String {
        let setting = Self::setting(key);
        match self.given.get(key) {
            Some(given) => Self::name(setting, &given.source),
            None => format!("--{}", setting.flag),
        }
    }

    fn bad(&self, key: &str, expected: &'static str) -> ChartMuseumError {
        ChartMuseumError::BadValue {
            setting: self.describe(key),
            value: self.text(key),
            expected,
        }
    }

    fn bool(&self, key: &str) -> Result<bool, ChartMuseumError> {
        parse_bool(&self.text(key)).ok_or_else(|| self.bad(key, "true or false"))
    }

    fn int(&self, key: &str) -> Result<i64, ChartMuseumError> {
        self.text(key)
            .trim()
            .parse()
            .map_err(|_| self.bad(key, "a whole number"))
    }

    fn duration(&self, key: &str) -> Result<f64, ChartMuseumError> {
        parse_go_duration(&self.text(key))
            .ok_or_else(|| self.bad(key, "a duration such as 30s or 5m"))
    }

    /// The value, or the error naming the flag as ChartMuseum's "Missing required flags".
    fn required(&self, key: &str) -> Result<String, ChartMuseumError> {
        let value = self.text(key);
        if value.is_empty() {
            return Err(ChartMuseumError::Missing(format!(
                "--{} ({})",
                Self::setting(key).flag,
                Self::setting(key).env
            )));
        }
        Ok(value)
    }
}

/// Go's `strconv.ParseBool`, which urfave/cli and viper use.
fn parse_bool(text: &str) -> Option<bool> {
    match text.trim() {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// Go's `time.ParseDuration`, in seconds.
fn parse_go_duration(text: &str) -> Option<f64> {
    let text = text.trim();
    let (negative, mut rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest == "0" {
        return Some(0.0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total = 0.0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += number * scale;
        rest = &rest[unit_len..];
    }
    Some(if negative { -total } else { total })
}

/// Reads ChartMuseum's command line (`args`, without the program name), its environment
/// (through `env`) and the config file either names, and says how `chartkit serve` is to
/// run. Does no I/O but reading the config file.
pub fn read(
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Personality, ChartMuseumError> {
    let mut given = BTreeMap::new();
    let mut config: Option<String> = env("CONFIG").filter(|v| !v.is_empty());
    let mut flags: BTreeMap<&'static str, String> = BTreeMap::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        let Some(body) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) else {
            return Err(ChartMuseumError::Positional(arg.clone()));
        };
        if body.is_empty() {
            return Err(ChartMuseumError::Positional(arg.clone()));
        }
        let (name, inline) = match body.split_once('=') {
            Some((name, value)) => (name, Some(value.to_owned())),
            None => (body, None),
        };
        if name == "config" || name == "c" {
            let value = match inline {
                Some(value) => value,
                None => {
                    let value = args
                        .get(i)
                        .ok_or_else(|| ChartMuseumError::MissingValue("config".to_owned()))?;
                    i += 1;
                    value.clone()
                }
            };
            config = Some(value);
            continue;
        }
        let setting =
            settings::by_flag(name).ok_or_else(|| ChartMuseumError::UnknownFlag(arg.clone()))?;
        let value = match (inline, setting.kind) {
            (Some(value), _) => value,
            // A boolean flag takes no separate value, as in Go's flag package.
            (None, Kind::Bool) => "true".to_owned(),
            (None, _) => {
                let value = args
                    .get(i)
                    .ok_or_else(|| ChartMuseumError::MissingValue(setting.flag.to_owned()))?;
                i += 1;
                value.clone()
            }
        };
        flags.insert(setting.key, value);
    }
    if let Some(path) = &config {
        for (key, value) in read_config_file(Path::new(path))? {
            given.insert(
                key,
                Given {
                    value,
                    source: Source::File,
                },
            );
        }
    }
    for setting in SETTINGS {
        // urfave/cli takes the environment only for flags not on the command line; an
        // empty variable counts as unset.
        if let Some(value) = env(setting.env).filter(|v| !v.is_empty()) {
            given.insert(
                setting.key,
                Given {
                    value,
                    source: Source::Env,
                },
            );
        }
    }
    for (key, value) in flags {
        given.insert(
            key,
            Given {
                value,
                source: Source::Flag,
            },
        );
    }
    personality(&Values { given })
}

/// The config file's settings, by key: nested maps joined with dots, keys without regard
/// to case (as viper reads them).
fn read_config_file(path: &Path) -> Result<Vec<(&'static str, String)>, ChartMuseumError> {
    let shown = path.display().to_string();
    let failed = |message: String| ChartMuseumError::ConfigFile {
        path: shown.clone(),
        message,
    };
    let extension = path.extension().and_then(|e| e.to_str());
    if !matches!(extension, None | Some("yaml" | "yml")) {
        return Err(failed(
            "it must have a .yaml or .yml extension (or none)".to_owned(),
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| failed(e.to_string()))?;
    let map = chartkit_yaml::parse_values(&text).map_err(|e| failed(e.to_string()))?;
    let mut out = Vec::new();
    flatten(&map, "", &shown, &mut out)?;
    Ok(out)
}

fn flatten(
    map: &chartkit_yaml::Map,
    prefix: &str,
    path: &str,
    out: &mut Vec<(&'static str, String)>,
) -> Result<(), ChartMuseumError> {
    use chartkit_yaml::Value;
    for (key, value) in map {
        let key = format!("{prefix}{}", key.to_lowercase());
        let text = match value {
            Value::Map(inner) => {
                flatten(inner, &format!("{key}."), path, out)?;
                continue;
            }
            Value::Null => continue,
            Value::Bool(b) => b.to_string(),
            Value::Int(n) => n.to_string(),
            Value::Float(f) => f.to_string(),
            Value::String(s) => s.clone(),
            Value::Bytes(_) | Value::Seq(_) => {
                return Err(ChartMuseumError::ConfigFile {
                    path: path.to_owned(),
                    message: format!("`{key}` must be a single value"),
                });
            }
        };
        let setting = settings::by_key(&key).ok_or_else(|| ChartMuseumError::UnknownKey {
            path: path.to_owned(),
            key: key.clone(),
        })?;
        out.push((setting.key, text));
    }
    Ok(())
}

/// Checks every value and maps the supported ones.
fn personality(values: &Values) -> Result<Personality, ChartMuseumError> {
    for setting in SETTINGS {
        let Some(given) = values.given.get(setting.key) else {
            continue;
        };
        // Typed first, so `DEBUG=yes` is a bad value rather than a silent false.
        match setting.kind {
            Kind::Bool => drop(values.bool(setting.key)?),
            Kind::Int => drop(values.int(setting.key)?),
            Kind::Duration => drop(values.duration(setting.key)?),
            Kind::Text => {}
        }
        if let Support::DefaultOnly(reason) = setting.support {
            let is_default = match setting.kind {
                Kind::Bool => {
                    values.bool(setting.key)? == parse_bool(setting.default).unwrap_or(false)
                }
                Kind::Int => values.int(setting.key)?.to_string() == setting.default,
                Kind::Duration => {
                    values.duration(setting.key)?
                        == parse_go_duration(setting.default).unwrap_or(0.0)
                }
                Kind::Text => given.value == setting.default,
            };
            if !is_default {
                return Err(ChartMuseumError::Unsupported {
                    setting: Values::name(setting, &given.source),
                    value: given.value.clone(),
                    reason: reason.to_owned(),
                });
            }
        }
    }

    let mut out = Personality {
        debug: values.bool("debug")?,
        gen_index: values.bool("genindex")?,
        ..Personality::default()
    };
    let args = &mut out.serve_args;

    match values.required("storage.backend")?.to_lowercase().as_str() {
        "local" => {
            let dir = values.required("storage.local.rootdir")?;
            out.create_dir = Some(PathBuf::from(&dir));
            args.push(dir);
        }
        "amazon" => {
            let bucket = values.required("storage.amazon.bucket")?;
            args.push(bucket_url(
                "s3",
                &bucket,
                &values.text("storage.amazon.prefix"),
            ));
            let endpoint = values.text("storage.amazon.endpoint");
            let region = values.text("storage.amazon.region");
            // ChartMuseum's own fallback for S3-compatible servers.
            let region = if region.is_empty() && !endpoint.is_empty() {
                "us-east-1".to_owned()
            } else {
                region
            };
            if region.is_empty() {
                return Err(ChartMuseumError::Missing(
                    "--storage-amazon-region (STORAGE_AMAZON_REGION)".to_owned(),
                ));
            }
            out.s3 = S3Options {
                region: Some(region),
                endpoint: (!endpoint.is_empty()).then_some(endpoint),
                virtual_hosted_style: !values.bool("storage.amazon.forcepathstyle")?,
            };
        }
        // Credentials come from the variables ChartMuseum's backends read
        // (GOOGLE_APPLICATION_CREDENTIALS; AZURE_STORAGE_ACCOUNT, AZURE_STORAGE_ACCESS_KEY),
        // which the storage reads too.
        "google" => {
            let bucket = values.required("storage.google.bucket")?;
            args.push(bucket_url(
                "gs",
                &bucket,
                &values.text("storage.google.prefix"),
            ));
        }
        "microsoft" => {
            let container = values.required("storage.microsoft.container")?;
            args.push(bucket_url(
                "az",
                &container,
                &values.text("storage.microsoft.prefix"),
            ));
        }
        other => {
            return Err(ChartMuseumError::Unsupported {
                setting: values.describe("storage.backend"),
                value: other.to_owned(),
                reason: settings_reason_backend(other),
            });
        }
    }

    let port = values.int("port")?;
    let port = u16::try_from(port).map_err(|_| values.bad("port", "a port number (0 to 65535)"))?;
    let host = values.text("listen.host");
    // Go's `host:port` with an empty host listens on every interface.
    let host = if host.is_empty() {
        "0.0.0.0".to_owned()
    } else {
        host
    };
    let addr = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    args.extend(["--addr".to_owned(), addr]);

    let context_path = values.text("contextpath");
    if !context_path.is_empty() {
        args.extend(["--context-path".to_owned(), context_path.clone()]);
    }
    let chart_url = values.text("charturl");
    if !chart_url.is_empty() {
        // ChartMuseum's chart URLs are CHART_URL, then the context path as its server
        // normalises it, then the repository and `charts/FILE`.
        let context = context_path.trim_end_matches('/');
        let context = match context {
            "" => String::new(),
            c if c.starts_with('/') => c.to_owned(),
            c => format!("/{c}"),
        };
        args.extend(["--url".to_owned(), format!("{chart_url}{context}")]);
    }
    if values.bool("allowoverwrite")? {
        args.push("--allow-overwrite".to_owned());
    }
    if values.bool("disableforceoverwrite")? {
        args.push("--disable-force-overwrite".to_owned());
    }
    if values.bool("disabledelete")? {
        args.push("--disable-delete".to_owned());
    }
    if values.bool("disableapi")? {
        args.push("--disable-api".to_owned());
    }
    let depth = values.int("depth")?;
    if depth < 0 {
        return Err(values.bad("depth", "a number of path segments (0 or more)"));
    }
    if depth > 0 {
        args.extend(["--depth".to_owned(), depth.to_string()]);
    }
    if values.bool("depthdynamic")? {
        args.push("--depth-dynamic".to_owned());
    }
    repository_behaviours(values, args, &mut out.warnings)?;
    let max_upload = values.int("maxuploadsize")?;
    if max_upload <= 0 {
        return Err(values.bad("maxuploadsize", "a positive number of bytes"));
    }
    args.extend(["--max-upload-size".to_owned(), max_upload.to_string()]);
    let read_timeout = values.int("readtimeout")?;
    if read_timeout <= 0 {
        return Err(values.bad("readtimeout", "a positive number of seconds"));
    }
    args.extend(["--read-timeout".to_owned(), read_timeout.to_string()]);
    if values.is_given("cacheinterval") {
        let seconds = values.duration("cacheinterval")?;
        if seconds <= 0.0 {
            return Err(values.bad("cacheinterval", "a positive duration"));
        }
        args.extend(["--refresh-interval".to_owned(), seconds.to_string()]);
    }

    let cert = values.text("tls.cert");
    let key = values.text("tls.key");
    match (cert.is_empty(), key.is_empty()) {
        (true, true) => {}
        (false, false) => args.extend(["--tls-cert".to_owned(), cert, "--tls-key".to_owned(), key]),
        (true, false) => {
            return Err(ChartMuseumError::Missing(
                "--tls-cert (TLS_CERT)".to_owned(),
            ));
        }
        (false, true) => return Err(ChartMuseumError::Missing("--tls-key (TLS_KEY)".to_owned())),
    }

    let bearer = auth_transport::map(values, args)?;
    let (user, password) = if bearer {
        (String::new(), String::new())
    } else {
        (values.text("basicauth.user"), values.text("basicauth.pass"))
    };
    // ChartMuseum turns basic auth on only when both are set.
    if !user.is_empty() && !password.is_empty() {
        out.basic_auth = Some(PlainUser { user, password });
        if !values.bool("authanonymousget")? {
            args.push("--auth-reads".to_owned());
        }
    } else if !user.is_empty() || !password.is_empty() {
        let missing = if user.is_empty() {
            "--basic-auth-user (BASIC_AUTH_USER)"
        } else {
            "--basic-auth-pass (BASIC_AUTH_PASS)"
        };
        return Err(ChartMuseumError::Missing(format!(
            "{missing}: ChartMuseum would serve without authentication, chartkit refuses to"
        )));
    }
    Ok(out)
}

/// Limits, metrics, the Artifact Hub file and the write timeout, as `chartkit serve`'s
/// flags.
fn repository_behaviours(
    values: &Values,
    args: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> Result<(), ChartMuseumError> {
    // ChartMuseum bounds nothing at 0 or below, except the indexer, whose channel of a
    // negative size would not start.
    for (key, flag) in [
        ("maxstorageobjects", "--max-storage-objects"),
        ("per-chart-limit", "--per-chart-limit"),
        ("indexlimit", "--index-limit"),
    ] {
        let value = values.int(key)?;
        if key == "indexlimit" && value < 0 {
            return Err(values.bad(key, "a whole number, 0 or more"));
        }
        if value > 0 {
            args.extend([flag.to_owned(), value.to_string()]);
        }
    }
    for key in ["disablemetrics", "enforce-semver2"] {
        if values.is_given(key) {
            warnings.push(format!(
                "The configuration option {} has been deprecated",
                Values::setting(key).flag
            ));
        }
    }
    // ChartMuseum serves metrics with --enable-metrics only, its --disable-metrics being
    // read by nothing.
    // Its /metrics never asks for credentials, nor is it under --context-path.
    if values.bool("enablemetrics")? {
        args.push("--metrics-without-auth".to_owned());
    } else {
        args.push("--disable-metrics".to_owned());
    }
    let artifact_hub = values.text("artifact-hub-repo-id");
    if !artifact_hub.is_empty() {
        // ChartMuseum's `ID` (or `=ID`) is the ID of the repository at the root; `REPO=ID`
        // names a tenant's repository.
        let id = match artifact_hub.split_once('=') {
            None => artifact_hub.as_str(),
            Some(("", id)) => id,
            Some((repo, _)) => {
                return Err(ChartMuseumError::Unsupported {
                    setting: values.describe("artifact-hub-repo-id"),
                    value: artifact_hub.clone(),
                    reason: format!(
                        "`{repo}=` names a tenant's repository, and chartkit serves one repository; give the ID alone"
                    ),
                });
            }
        };
        args.extend(["--artifact-hub-repo-id".to_owned(), id.to_owned()]);
    }
    if values.bool("json-index")? {
        args.push("--json-index".to_owned());
    }
    for (key, flag) in [
        ("chartpostformfieldname", "--chart-form-field"),
        ("provpostformfieldname", "--prov-form-field"),
    ] {
        let name = values.text(key);
        if name != Values::setting(key).default {
            args.extend([flag.to_owned(), name]);
        }
    }
    // Go's write timeout cuts a response not finished in time; chartkit never cuts a
    // response that is being sent, which is what a longer timeout (or 0, none) asks.
    let write_timeout = values.int("writetimeout")?;
    if (1..30).contains(&write_timeout) {
        return Err(ChartMuseumError::Unsupported {
            setting: values.describe("writetimeout"),
            value: values.text("writetimeout"),
            reason: "chartkit never cuts a response short, so a write timeout below ChartMuseum's default of 30 seconds is not honoured".to_owned(),
        });
    }
    Ok(())
}

fn settings_reason_backend(backend: &str) -> String {
    format!(
        "chartkit stores charts in a local directory (`local`), S3 (`amazon`), Google Cloud Storage (`google`) or Azure Blob Storage (`microsoft`), not `{backend}`"
    )
}

/// `SCHEME://BUCKET[/PREFIX]`, the prefix without its outer slashes.
fn bucket_url(scheme: &str, bucket: &str, prefix: &str) -> String {
    let prefix = prefix.trim_matches('/');
    if prefix.is_empty() {
        format!("{scheme}://{bucket}")
    } else {
        format!("{scheme}://{bucket}/{prefix}")
    }
}

/// Creates the local storage directory if it is missing, as ChartMuseum does at start.
pub fn prepare(personality: &Personality) -> Result<(), ChartMuseumError> {
    if let Some(dir) = &personality.create_dir {
        std::fs::create_dir_all(dir).map_err(|source| ChartMuseumError::StorageDir {
            path: dir.display().to_string(),
            source,
        })?;
    }
    Ok(())
}
