//! Why a repository operation failed.

use std::path::PathBuf;

/// Everything the client can fail at. Messages name the file, URL or chart involved;
/// hints for the user are added by the command line.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// repositories.yaml could not be read or understood.
    #[error("cannot read the repository list `{path}`: {reason}")]
    Settings { path: PathBuf, reason: String },
    /// A file could not be read or written.
    #[error("`{path}`: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Write(#[from] chartkit_durable::WriteError),
    /// The HTTP client could not be set up (a bad CA file, certificate or key).
    #[error("cannot set up the HTTP client for {url}: {reason}")]
    Setup { url: String, reason: String },
    /// A request did not get an answer.
    #[error("cannot reach {url}: {reason}")]
    Unreachable { url: String, reason: String },
    /// A `portforward://` repository's tunnel could not be opened or used; `reason`
    /// names the part of the target that is wrong.
    #[error("cannot port-forward to {url}: {reason}")]
    Tunnel { url: String, reason: String },
    /// A URL whose scheme neither chartkit nor an installed getter plugin serves.
    #[error("scheme \"{scheme}\" not supported")]
    UnsupportedScheme { scheme: String },
    /// A repository URL whose scheme neither chartkit nor a getter plugin serves.
    #[error("could not find protocol handler for: {scheme}")]
    NoProtocolHandler { scheme: String },
    /// The getter plugin serving a URL's scheme failed.
    #[error(transparent)]
    Getter(Box<chartkit_plugin::PluginError>),
    /// The server answered with an error status.
    #[error("{url} answered {status}")]
    Status { url: String, status: u16 },
    /// `--offline` (or CHARTKIT_OFFLINE) and the cache does not hold what is needed.
    #[error("{missing} is not in the cache and chartkit is offline")]
    Offline {
        /// What is missing, e.g. `the index of repository "stable"`.
        missing: String,
        /// The command that would fetch it, e.g. `chartkit repo update stable`.
        fetch: String,
    },
    /// No repository of that name in repositories.yaml.
    #[error("no repository named \"{name}\" in `{path}`")]
    NoSuchRepo { name: String, path: PathBuf },
    /// The index was never downloaded (and the network was not asked).
    #[error("no cached index for repository \"{name}\"")]
    NoCachedIndex { name: String },
    /// The index is larger than the client's bound on downloads ([`crate::Client::max_index_size`]);
    /// nothing of it was kept.
    #[error(
        "the index of {repo} at {url} is larger than the {} limit on index downloads{}; nothing of it was kept",
        chartkit_index::limits::human_size(*limit),
        announced.map(|a| format!(" (the server announced {})", chartkit_index::limits::human_size(a))).unwrap_or_default()
    )]
    IndexTooLarge {
        /// `repository "NAME" (URL)` or `the repository at URL`.
        repo: String,
        url: String,
        limit: u64,
        /// The length the server announced, when it did.
        announced: Option<u64>,
    },
    /// The downloaded or cached index is not a valid index.
    #[error("{url} does not hold a valid chart repository index: {source}")]
    BadIndex {
        url: String,
        source: chartkit_repo::CacheError,
    },
    /// A query on the compact index failed.
    #[error("{0}")]
    Query(#[from] chartkit_index::compact::QueryError),
    /// No version of the chart satisfies the request.
    #[error("chart \"{chart}\"{} not found in {repo}", version.as_ref().map(|v| format!(" version \"{v}\"")).unwrap_or_default())]
    ChartNotFound {
        chart: String,
        version: Option<String>,
        repo: String,
    },
    /// A version range that does not parse.
    #[error("an invalid version/constraint format: {0}")]
    Range(#[from] chartkit_version::RangeError),
    /// The entry has no download URL.
    #[error("chart \"{chart}\" version \"{version}\" has no downloadable URLs")]
    NoUrls { chart: String, version: String },
    /// A URL that cannot be parsed or resolved.
    #[error("invalid URL `{url}`: {reason}")]
    BadUrl { url: String, reason: String },
    /// An index entry whose digest is there but is not a sha256 the package could be
    /// checked against: nothing is downloaded rather than something unchecked.
    #[error(
        "{repo} lists chart \"{chart}\" version \"{version}\" with the digest {digest:?}, which is not a sha256 (64 hexadecimal characters, optionally after `sha256:`), so the package cannot be checked; nothing was downloaded"
    )]
    BadDigest {
        repo: String,
        chart: String,
        version: String,
        digest: String,
    },
    /// The package's bytes are not the ones the index describes.
    #[error(
        "the package downloaded from {url} does not match the repository index: the index says sha256:{expected}, the download is sha256:{actual}"
    )]
    DigestMismatch {
        url: String,
        expected: String,
        actual: String,
    },
    /// `search --regexp` with a pattern Go's regexp refuses.
    #[error("{0}")]
    Regexp(String),
    /// An OCI registry operation failed.
    #[error(transparent)]
    Registry(#[from] chartkit_oci::OciError),
    /// A chart reference that is neither `REPO/NAME`, a URL nor a name with a repository URL.
    #[error("{0}")]
    BadReference(String),
}

impl ClientError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> ClientError {
        let path = path.into();
        move |source| ClientError::Io { path, source }
    }
}

pub type Result<T, E = ClientError> = std::result::Result<T, E>;
