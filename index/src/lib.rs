//! Chart repository indexes (`index.yaml`) as Helm 4 reads, writes and queries them.
//!
//! - [`parse_index`]: bytes (YAML or JSON) to an [`IndexFile`], with Helm's tolerance for
//!   null and invalid entries (skipped with a warning) and its strictness elsewhere.
//! - [`to_yaml`] / [`to_json`]: deterministic output identical to `helm repo index`.
//! - [`select`]: version choice as `helm pull --version` and `helm search repo` make it.
//! - [`compact`]: a binary form of a parsed index that loads without parsing YAML.
//!
//! This crate does no I/O; `chartkit-repo` reads and writes files with it.

pub mod compact;
mod decode;
mod encode;
pub mod gosort;
mod gotime;
mod metadata;
mod model;
pub mod select;

pub use decode::{IndexError, LoadedIndex, parse_chart_metadata, parse_entry_json, parse_index};
pub use encode::{entry_to_json, to_json, to_yaml};
pub use gotime::{GoTime, ZERO_TIME};
pub use metadata::{ChartMetadata, Dependency, Maintainer, MetadataError};
pub use model::{API_VERSION_V1, ChartVersion, IndexFile};
