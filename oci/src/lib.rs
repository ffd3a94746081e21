//! OCI registries as Helm uses them for charts.
//!
//! - [`Reference`]: `oci://HOST[:PORT]/PATH/NAME[:TAG][@sha256:DIGEST]` read as helm
//!   reads it (`+` in a version is `_` in a tag).
//! - [`tags`]: which tag a `--version` (a version, a range, nothing, `--devel`) means.
//! - [`manifest`]: Helm's chart manifest, written byte for byte as `helm push` writes it
//!   ([`HelmArtifact`]) and read back ([`ChartManifest`]).
//! - [`Registry`]: the distribution API (tags with paging, manifests, blobs, uploads)
//!   with Basic auth and the Bearer token flow; every read checked against its digest.
//! - [`plugin`]: Helm plugins kept in a registry (`plugin install oci://…`).
//! - [`CredentialsFile`]: helm's registry config (docker's `config.json`, credential
//!   helpers).
//!
//! No cache and no policy live here: the repository client keeps manifests and blobs in
//! its content store and decides when the network may be used.

pub mod auth;
pub mod credentials;
mod error;
pub mod manifest;
pub mod plugin;
pub mod reference;
pub mod registry;
pub mod tags;

pub use auth::Credentials;
pub use credentials::CredentialsFile;
pub use error::OciError;
pub use manifest::{ChartManifest, Descriptor, HelmArtifact};
pub use reference::{Reference, is_oci};
pub use registry::Registry;
