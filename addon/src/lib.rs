//! KubeVela addons in chart repositories ("versioned addon registries").
//!
//! KubeVela reads a Helm-style `index.yaml` whose entries are addon packages: each package
//! is a chart archive whose top directory also holds the addon's `metadata.yaml`,
//! `template.cue|yaml`, `parameter.cue`, `resources/`, `definitions/`, `schemas/` and
//! `views/`. This crate, which does no I/O, owns what makes such a package:
//!
//! - [`AddonMetadata`]: `metadata.yaml`, read strictly (unknown and repeated keys refused,
//!   every error naming its line and field) and validated.
//! - [`AddonMetadata::chart_yaml`]: the Chart.yaml a package carries so Helm reads it as a
//!   chart, with KubeVela's annotations (see [`annotations`]).
//! - [`resolve`]: versions for an addon and all its dependencies that satisfy every
//!   range and the cluster's Kubernetes and KubeVela versions, or why there are none.

pub mod annotations;
mod metadata;
mod resolve;

pub use annotations::{AnnotationError, chart_yaml_for};
pub use metadata::{AddonMetadata, Dependency, METADATA_FILE, MetadataError, SystemRequirements};
pub use resolve::{
    AddonVersion, Picked, Requirement, Unsatisfiable, resolve, system_version_matches,
};
