//! ChartMuseum's settings: every configuration key with its flag, environment variable,
//! type and default (ChartMuseum's `pkg/config/vars.go`), and what chartkit does with it.

/// How a setting's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bool,
    Int,
    Text,
    /// Go's `time.Duration` text (`30s`, `5m`, `1h30m`).
    Duration,
}

/// What chartkit does with a setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// Mapped onto `chartkit serve`'s configuration.
    Mapped,
    /// Accepted at any value because chartkit already behaves as every value asks.
    Moot,
    /// Accepted only at its default; any other value is refused with this reason.
    DefaultOnly(&'static str),
}

/// One ChartMuseum setting.
#[derive(Debug)]
pub struct Setting {
    /// The configuration file's key (viper's, dotted for nested maps).
    pub key: &'static str,
    /// The flag's name without dashes.
    pub flag: &'static str,
    pub env: &'static str,
    pub kind: Kind,
    /// The default as ChartMuseum's text for it.
    pub default: &'static str,
    pub support: Support,
}

const fn setting(
    key: &'static str,
    flag: &'static str,
    env: &'static str,
    kind: Kind,
    default: &'static str,
    support: Support,
) -> Setting {
    Setting {
        key,
        flag,
        env,
        kind,
        default,
        support,
    }
}

use Kind::{Bool, Duration, Int, Text};
use Support::{DefaultOnly, Mapped, Moot};

const NO_CACHE: &str =
    "chartkit keeps the repository in its own memory; there is no external cache";
const ONLY_LOCAL_AND_S3: &str =
    "chartkit stores charts in a local directory, S3, Google Cloud Storage or Azure Blob Storage";

/// Every setting ChartMuseum reads except `--config` itself.
#[rustfmt::skip]
pub static SETTINGS: &[Setting] = &[
    setting("genindex", "gen-index", "GEN_INDEX", Bool, "false", Mapped),
    setting("debug", "debug", "DEBUG", Bool, "false", Mapped),
    setting("logjson", "log-json", "LOG_JSON", Bool, "false", Mapped),
    setting("loghealth", "log-health", "LOG_HEALTH", Bool, "false", Mapped),
    setting("loglatencyinteger", "log-latency-integer", "LOG_LATENCY_INTEGER", Bool, "false", Mapped),
    // Deprecated by ChartMuseum, which reads only --enable-metrics: /metrics is served
    // with it and not without, whatever this says (a warning names it, as ChartMuseum's).
    setting("disablemetrics", "disable-metrics", "DISABLE_METRICS", Bool, "false", Mapped),
    setting("enablemetrics", "enable-metrics", "ENABLE_METRICS", Bool, "false", Mapped),
    setting("disableapi", "disable-api", "DISABLE_API", Bool, "false", Mapped),
    setting("disabledelete", "disable-delete", "DISABLE_DELETE", Bool, "false", Mapped),
    // ChartMuseum keeps its index in `index-cache.yaml` in the storage, to start from it.
    // chartkit writes no such file (nor reads one: only packages and `.prov` files count),
    // its index being rebuilt from the packages at start, which is what ChartMuseum does
    // with the option set.
    setting("disablestatefiles", "disable-statefiles", "DISABLE_STATEFILES", Bool, "false", Moot),
    setting("json-index", "json-index", "JSON_INDEX", Bool, "false", Mapped),
    setting("allowoverwrite", "allow-overwrite", "ALLOW_OVERWRITE", Bool, "false", Mapped),
    setting("disableforceoverwrite", "disable-force-overwrite", "DISABLE_FORCE_OVERWRITE", Bool, "false", Mapped),
    setting("port", "port", "PORT", Int, "8080", Mapped),
    setting("readtimeout", "read-timeout", "READ_TIMEOUT", Int, "30", Mapped),
    // chartkit never cuts a response short: a longer timeout (or none) is what it does,
    // a shorter one is refused (see `personality`).
    setting("writetimeout", "write-timeout", "WRITE_TIMEOUT", Int, "30", Mapped),
    setting("charturl", "chart-url", "CHART_URL", Text, "", Mapped),
    setting("basicauth.user", "basic-auth-user", "BASIC_AUTH_USER", Text, "", Mapped),
    setting("basicauth.pass", "basic-auth-pass", "BASIC_AUTH_PASS", Text, "", Mapped),
    setting("authanonymousget", "auth-anonymous-get", "AUTH_ANONYMOUS_GET", Bool, "false", Mapped),
    setting("tls.cert", "tls-cert", "TLS_CERT", Text, "", Mapped),
    setting("tls.key", "tls-key", "TLS_KEY", Text, "", Mapped),
    setting("tls.cacert", "tls-ca-cert", "TLS_CA_CERT", Text, "", Mapped),
    setting("cache.store", "cache", "CACHE", Text, "", DefaultOnly(NO_CACHE)),
    setting("cache.redis.addr", "cache-redis-addr", "CACHE_REDIS_ADDR", Text, "", DefaultOnly(NO_CACHE)),
    setting("cache.redis.password", "cache-redis-password", "CACHE_REDIS_PASSWORD", Text, "", DefaultOnly(NO_CACHE)),
    setting("cache.redis.db", "cache-redis-db", "CACHE_REDIS_DB", Int, "0", DefaultOnly(NO_CACHE)),
    setting("storage.backend", "storage", "STORAGE", Text, "", Mapped),
    // How far a cached index's times may drift from the storage's before ChartMuseum reads
    // a package again. chartkit has no cached index: it notices a changed package by its
    // ETag (or size and time) against the one it read, so there is no drift to tolerate.
    setting("storage.timestamptolerance", "storage-timestamp-tolerance", "STORAGE_TIMESTAMP_TOLERANCE", Duration, "0s", Moot),
    setting("storage.local.rootdir", "storage-local-rootdir", "STORAGE_LOCAL_ROOTDIR", Text, "", Mapped),
    setting("storage.amazon.bucket", "storage-amazon-bucket", "STORAGE_AMAZON_BUCKET", Text, "", Mapped),
    setting("storage.amazon.prefix", "storage-amazon-prefix", "STORAGE_AMAZON_PREFIX", Text, "", Mapped),
    setting("storage.amazon.region", "storage-amazon-region", "STORAGE_AMAZON_REGION", Text, "", Mapped),
    setting("storage.amazon.endpoint", "storage-amazon-endpoint", "STORAGE_AMAZON_ENDPOINT", Text, "", Mapped),
    setting("storage.amazon.sse", "storage-amazon-sse", "STORAGE_AMAZON_SSE", Text, "", DefaultOnly("chartkit does not ask S3 for server-side encryption")),
    setting("storage.amazon.forcepathstyle", "storage-amazon-force-path-style", "STORAGE_AMAZON_FORCE_PATH_STYLE", Bool, "true", Mapped),
    setting("storage.google.bucket", "storage-google-bucket", "STORAGE_GOOGLE_BUCKET", Text, "", Mapped),
    setting("storage.google.prefix", "storage-google-prefix", "STORAGE_GOOGLE_PREFIX", Text, "", Mapped),
    setting("storage.oracle.bucket", "storage-oracle-bucket", "STORAGE_ORACLE_BUCKET", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.oracle.prefix", "storage-oracle-prefix", "STORAGE_ORACLE_PREFIX", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.oracle.region", "storage-oracle-region", "STORAGE_ORACLE_REGION", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.oracle.compartmentid", "storage-oracle-compartmentid", "STORAGE_ORACLE_COMPARTMENTID", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.microsoft.container", "storage-microsoft-container", "STORAGE_MICROSOFT_CONTAINER", Text, "", Mapped),
    setting("storage.microsoft.prefix", "storage-microsoft-prefix", "STORAGE_MICROSOFT_PREFIX", Text, "", Mapped),
    setting("storage.alibaba.bucket", "storage-alibaba-bucket", "STORAGE_ALIBABA_BUCKET", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.alibaba.prefix", "storage-alibaba-prefix", "STORAGE_ALIBABA_PREFIX", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.alibaba.endpoint", "storage-alibaba-endpoint", "STORAGE_ALIBABA_ENDPOINT", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.alibaba.sse", "storage-alibaba-sse", "STORAGE_ALIBABA_SSE", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.openstack.container", "storage-openstack-container", "STORAGE_OPENSTACK_CONTAINER", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.openstack.prefix", "storage-openstack-prefix", "STORAGE_OPENSTACK_PREFIX", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.openstack.region", "storage-openstack-region", "STORAGE_OPENSTACK_REGION", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.openstack.cacert", "storage-openstack-cacert", "STORAGE_OPENSTACK_CACERT", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.openstack.auth", "storage-openstack-auth", "STORAGE_OPENSTACK_AUTH", Text, "auto", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.baidu.prefix", "storage-baidu-prefix", "STORAGE_BAIDU_PREFIX", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.baidu.bucket", "storage-baidu-bucket", "STORAGE_BAIDU_BUCKET", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.baidu.endpoint", "storage-baidu-endpoint", "STORAGE_BAIDU_ENDPOINT", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.etcd.endpoint", "storage-etcd-endpoint", "STORAGE_ETCD_ENDPOINT", Text, "http://localhost:2379", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.etcd.cafile", "storage-etcd-cafile", "STORAGE_ETCD_CAFILE", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.etcd.certfile", "storage-etcd-certfile", "STORAGE_ETCD_CERTFILE", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.etcd.keyfile", "storage-etcd-keyfile", "STORAGE_ETCD_KEYFILE", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.etcd.prefix", "storage-etcd-prefix", "STORAGE_ETCD_PREFIX", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.tencent.bucket", "storage-tencent-bucket", "STORAGE_TENCENT_BUCKET", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.tencent.prefix", "storage-tencent-prefix", "STORAGE_TENCENT_PREFIX", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("storage.tencent.endpoint", "storage-tencent-endpoint", "STORAGE_TENCENT_ENDPOINT", Text, "", DefaultOnly(ONLY_LOCAL_AND_S3)),
    setting("chartpostformfieldname", "chart-post-form-field-name", "CHART_POST_FORM_FIELD_NAME", Text, "chart", Mapped),
    setting("provpostformfieldname", "prov-post-form-field-name", "PROV_POST_FORM_FIELD_NAME", Text, "prov", Mapped),
    setting("maxstorageobjects", "max-storage-objects", "MAX_STORAGE_OBJECTS", Int, "0", Mapped),
    setting("maxuploadsize", "max-upload-size", "MAX_UPLOAD_SIZE", Int, "20971520", Mapped),
    setting("indexlimit", "index-limit", "INDEX_LIMIT", Int, "0", Mapped),
    setting("contextpath", "context-path", "CONTEXT_PATH", Text, "", Mapped),
    setting("depth", "depth", "DEPTH", Int, "0", Mapped),
    setting("bearerauth", "bearer-auth", "BEARER_AUTH", Bool, "false", Mapped),
    setting("authrealm", "auth-realm", "AUTH_REALM", Text, "", Mapped),
    setting("authservice", "auth-service", "AUTH_SERVICE", Text, "", Mapped),
    setting("authcertpath", "auth-cert-path", "AUTH_CERT_PATH", Text, "", Mapped),
    setting("authactionssearchpath", "auth-actions-search-path", "AUTH_ACTIONS_SEARCH_PATH", Text, "", Mapped),
    setting("depthdynamic", "depth-dynamic", "DEPTH_DYNAMIC", Bool, "false", Mapped),
    setting("cors.alloworigin", "cors-alloworigin", "CORS_ALLOW_ORIGIN", Text, "", Mapped),
    // Deprecated, and read by nothing in ChartMuseum; chartkit refuses versions helm
    // cannot read whatever it says.
    setting("enforce-semver2", "enforce-semver2", "ENFORCE_SEMVER2", Bool, "false", Moot),
    setting("cacheinterval", "cache-interval", "CACHE_INTERVAL", Duration, "5m0s", Mapped),
    setting("listen.host", "listen-host", "LISTEN_HOST", Text, "0.0.0.0", Mapped),
    setting("per-chart-limit", "per-chart-limit", "PER_CHART_LIMIT", Int, "0", Mapped),
    setting("web-template-path", "web-template-path", "WEB_TEMPLATE_PATH", Text, "", DefaultOnly("chartkit serves its own page at `/`; custom welcome pages are not implemented")),
    setting("artifact-hub-repo-id", "artifact-hub-repo-id", "ARTIFACT_HUB_REPO_ID", Text, "", Mapped),
    // chartkit's index follows storage by its own periodic sync, whatever this asks.
    setting("always-regenerate-chart-index", "always-regenerate-chart-index", "ALWAYS_REGENERATE_CHART_INDEX", Bool, "false", Moot),
];

pub fn by_flag(flag: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.flag == flag)
}

pub fn by_key(key: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.key == key)
}
