//! Why a registry operation failed. Every message names the reference, registry or file.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum OciError {
    /// Not a reference helm would accept.
    #[error("invalid OCI reference \"{reference}\": {reason}")]
    BadReference { reference: String, reason: String },
    /// The registry refused the credentials (or asked for some and none were given).
    #[error("{registry} refused {}: {reason}", if *had_credentials { "the credentials given for it" } else { "the request without credentials" })]
    Unauthorized {
        registry: String,
        had_credentials: bool,
        reason: String,
    },
    /// The credentials are not allowed to do this (403).
    #[error("{registry} denied access to {what}: {reason}")]
    Denied {
        registry: String,
        what: String,
        reason: String,
    },
    /// The repository, tag, manifest or blob does not exist.
    #[error("{what} not found in {registry}")]
    NotFound { registry: String, what: String },
    /// Any other error answer.
    #[error("{url} answered {status}{}", if detail.is_empty() { String::new() } else { format!(": {detail}") })]
    Status {
        url: String,
        status: u16,
        detail: String,
    },
    /// No answer.
    #[error("cannot reach {url}: {reason}")]
    Unreachable { url: String, reason: String },
    /// A token service's answer is not a token.
    #[error("the token service {realm} gave no usable token: {reason}")]
    Token { realm: String, reason: String },
    /// The registry sent bytes other than the digest names.
    #[error(
        "{what} from {reference} does not match its digest: expected {expected}, the registry sent {actual}; nothing was kept"
    )]
    DigestMismatch {
        reference: String,
        what: String,
        expected: String,
        actual: String,
    },
    /// The manifest is not a Helm chart manifest.
    #[error("{reference} is not a Helm chart: {reason}")]
    NotAChart { reference: String, reason: String },
    /// The manifest is not a Helm plugin artifact.
    #[error("{reference} is not a Helm plugin: {reason}")]
    NotAPlugin { reference: String, reason: String },
    /// No tag of the repository is a version (or the repository has no tag).
    #[error("unable to locate any tags in provided repository: oci://{locator}")]
    NoTags { locator: String },
    /// No tag satisfies the version asked for.
    #[error(
        "could not locate a version matching provided version string {version} in oci://{locator}"
    )]
    NoMatchingVersion { locator: String, version: String },
    /// A reference's tag and `--version` disagree.
    #[error("chart reference and version mismatch: {version} is not {tag}")]
    VersionMismatch { version: String, tag: String },
    /// `--version` is neither a version nor a range.
    #[error("an invalid version/constraint format: {0}")]
    Range(#[from] chartkit_version::RangeError),
    /// The registry credentials file cannot be read or written.
    #[error("the registry credentials file `{path}`: {reason}")]
    Credentials { path: PathBuf, reason: String },
    /// A `docker-credential-*` helper failed.
    #[error("the credential helper `docker-credential-{helper}` failed for {registry}: {reason}")]
    Helper {
        helper: String,
        registry: String,
        reason: String,
    },
    /// A file could not be read or written.
    #[error("`{path}`: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Write(#[from] chartkit_durable::WriteError),
    /// `--offline` and the cache does not hold it.
    #[error("{missing} is not in the cache and chartkit is offline")]
    Offline { missing: String },
}
