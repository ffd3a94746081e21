//! The chart repository client: how `repo/app --version ^1.2` becomes a verified package
//! on disk, with or without a network.
//!
//! - [`Paths`], [`RepoFile`], [`RepoEntry`]: `repositories.yaml` in Helm's format and
//!   field names, and where the settings and caches live (the command line fills
//!   [`Paths`] from the environment).
//! - [`Network`]: `Online(Http)` or `Offline`, decided once; offline, anything that would
//!   open a connection fails with [`ClientError::Offline`], naming what is missing and
//!   the command that would fetch it.
//! - [`Client`]: settings, network and cache together.
//!   - [`Client::update_index`]: downloads a repository's index.yaml with
//!     `If-None-Match`/`If-Modified-Since` (a 304 transfers no body), checks it as Helm
//!     does and stores it with its compact form, so the first query after an update does
//!     not parse YAML.
//!   - [`Client::load_index`] → [`RepoIndex`]: the cached compact index and its age;
//!     [`Refresh`] says whether to ask the server first, and an unreachable server
//!     falls back to the cache with a warning saying how old it is.
//!   - [`Client::resolve`] (and [`Client::resolve_in`]): a [`ChartRef`] (`REPO/NAME`,
//!     a package URL, or a name in a repository given by URL, configured or not:
//!     [`ChartRef::InRepo`], [`Client::entry_for_url`]) and a version range to a
//!     [`Resolved`] version with Helm's selection (`chartkit_index::select`).
//!   - [`Client::fetch_package`] → [`Package`]: the package from the content-addressed
//!     store (`<cache>/content/sha256/<2 hex>/<64 hex>`) or downloaded, checked against
//!     the index digest (a mismatch is [`ClientError::DigestMismatch`] and stores
//!     nothing) and stored, so one version is fetched once across commands.
//!   - [`Client::fetch_prov`]: the `.prov` beside the package, cached with it.
//! - [`ChartSource`] (`locate`): the one resolver every command that takes a chart
//!   uses, helm's `LocateChart`: a local directory or package, or a repository
//!   reference, found ([`ChartSource::locate`]), verified with `--verify`, and loaded
//!   ([`Located::load`]) or handed over as package bytes (`pull`). A new kind of place is a
//!   new [`ChartSource`] variant; a repository behind a plugin's scheme is not one.
//! - [`search()`]: `helm search repo` over loaded indexes.
//! - [`tunnel`]: `portforward://NAMESPACE/svc/NAME:PORT[/PATH]` repositories inside a
//!   cluster: the URL stays the repository's identity (settings, cache keys, the base of
//!   relative index URLs); requests go through the [`Tunnels`] the network was given
//!   ([`Network::online_with_tunnels`]), and one whose connection broke is sent again.
//! - [`Getters`]: URL schemes served by `getter/v1` plugins (`git+https://`, `s3://`),
//!   run by the network for any fetch of such a URL, as helm runs them.
//! - [`tls`]: rustls configuration for `--ca-file` (including a self-signed server
//!   certificate that is itself in the CA file, as Go accepts).

mod cached_index;
mod client;
mod error;
mod getter;
mod hub;
mod locate;
mod network;
mod oci;
mod reference;
pub mod search;
mod settings;
pub mod tls;
pub mod tunnel;

pub use cached_index::{IndexFiles, IndexMeta, human_age};
pub use client::{
    Client, DEFAULT_MAX_INDEX_SIZE, IndexUpdate, Package, Refresh, RepoIndex, Resolved, index_url,
    resolve_reference_url,
};
pub use error::{ClientError, Result};
pub use getter::Getters;
pub use hub::{HubChart, HubError, search_hub};
pub use locate::{Access, ChartSource, Content, LocateError, LocateOptions, Located};
pub use network::{Body, Fetched, Http, Network, Opened, Progress, Validators, read_certs};
pub use oci::{OciChart, OciPushed, Provenance};
pub use reference::ChartRef;
pub use search::{Hit, SearchOptions, search};
pub use settings::{Paths, RepoEntry, RepoFile, RepoFileLock, lock_path};
pub use tunnel::{TunnelKind, TunnelPort, TunnelTarget, TunnelUrl, Tunnels, is_tunnel_url};
