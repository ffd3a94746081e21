//! The Helm chart: model, loader, `.helmignore`, packager and starter chart.
//!
//! Loading follows Helm's own loader step by step (file classification, subcharts, BOM
//! stripping, validation and its string sanitising) so that everything built on top —
//! rendering, indexing, signing — sees the same chart Helm would.

pub mod archive;
mod chart;
pub mod create;
mod error;
mod file;
pub mod helmignore;
mod inflate;
mod load;
mod lock;
mod metadata;
mod package;
pub mod yaml_fields;

pub use chart::{CHART_FILE, Chart, SCHEMA_FILE, VALUES_FILE};
pub use error::LoadError;
pub use file::File;
pub use load::{API_VERSION_V3, LoadOptions, load, load_archive, load_dir, load_files};
pub use lock::{Lock, dependencies_digest, dependencies_digest_v2};
pub use metadata::{
    ApiVersion, ChartFileError, ChartType, Dependency, Maintainer, Metadata, MetadataError,
    MetadataYamlError, ValidationError,
};
pub use package::{PackageError, PackageOptions, Packaged, package, package_all, package_to_bytes};
pub use yaml_fields::{Decoding, FieldError, FieldErrorKind, Fields};
