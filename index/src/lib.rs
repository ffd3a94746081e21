//! Chart repository indexes (`index.yaml`) as Helm 4 reads, writes and queries them.
//!
//! - [`parse_index`]: bytes (YAML or JSON) to an [`IndexFile`], with Helm's tolerance for
//!   null and invalid entries (skipped with a warning) and its strictness elsewhere.
//! - [`to_yaml`] / [`to_json`]: deterministic output identical to `helm repo index`.
//! - [`select`]: version choice as `helm pull --version` and `helm search repo` make it.
//! - [`compact`]: a binary form of a parsed index that loads without parsing YAML;
//!   [`parse_index_to_compact`] reads a large index into it one chart at a time, within
//!   the memory [`limits`] allow.
//!
//! Chart metadata is `chartkit_chart::Metadata`, the model Chart.yaml is read into; an index
//! reads it with the chart crate's strict decoding. This crate does no I/O; `chartkit-repo`
//! reads and writes files with it.

pub mod compact;
mod decode;
mod encode;
pub mod gosort;
mod gotime;
pub mod limits;
mod model;
pub mod select;
mod stream;

pub use chartkit_chart::{Dependency, Maintainer, Metadata, ValidationError};
pub use decode::{IndexError, LoadedIndex, parse_entry_json, parse_index};
pub use encode::{chart_entries_yaml, entry_to_json, to_json, to_yaml};
pub use gotime::{GoTime, ZERO_TIME};
pub use stream::{
    CompactDraft, CompactReader, parse_index_to_compact, parse_index_to_compact_into,
};
/// The chart metadata of an index entry; the same type as [`Metadata`], under the name this
/// crate has always used.
pub type ChartMetadata = chartkit_chart::Metadata;
pub use model::{API_VERSION_V1, ChartVersion, IndexFile};
