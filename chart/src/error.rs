use std::io;
use std::path::PathBuf;

use crate::archive::ArchiveError;
use crate::helmignore::RuleError;
use crate::metadata::{MetadataYamlError, ValidationError};

/// Why a chart could not be loaded. Every variant names the file it is about.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Reading a file or directory failed.
    #[error("cannot read `{path}`: {source}")]
    Io { path: PathBuf, source: io::Error },
    /// A path given as a chart is neither a chart directory nor a chart archive.
    #[error("`{path}` {reason}")]
    NotAChart { path: PathBuf, reason: String },
    /// The archive is damaged or hostile.
    #[error("`{origin}`: {source}")]
    Archive {
        origin: String,
        source: ArchiveError,
    },
    /// `.helmignore` has a pattern Helm refuses.
    #[error("`{origin}/.helmignore`: {source}")]
    HelmIgnore { origin: String, source: RuleError },
    /// Devices, sockets and other non-regular files cannot be part of a chart.
    #[error("cannot load `{0}`: it is not a regular file (device, socket or fifo)")]
    IrregularFile(PathBuf),
    /// One file beyond the per-file limit.
    #[error("`{path}` is larger than the {limit}-byte limit per chart file")]
    FileTooLarge { path: PathBuf, limit: u64 },
    /// The chart's files together beyond the total limit.
    #[error("the chart in `{origin}` is larger than the {limit}-byte limit")]
    TooLarge { origin: String, limit: u64 },
    /// No Chart.yaml at the top of the chart.
    #[error("`{origin}` has no Chart.yaml; a chart needs Chart.yaml at its top level")]
    MissingChartYaml { origin: String },
    /// The metadata.yaml of an addon directory (no Chart.yaml) is not valid addon metadata.
    #[error(
        "`{file}`: {source}\nhint: a directory with metadata.yaml and no Chart.yaml is read as a KubeVela addon, whose Chart.yaml is made from metadata.yaml; fix metadata.yaml (or add a Chart.yaml if this is a chart)"
    )]
    Addon {
        file: String,
        source: chartkit_addon::MetadataError,
    },
    /// Chart.yaml or requirements.yaml is not valid YAML or has wrongly typed fields.
    #[error("`{file}`: {source}")]
    Metadata {
        file: String,
        source: MetadataYamlError,
    },
    /// Chart.yaml names an apiVersion Helm's loader does not know (with
    /// [`crate::LoadOptions::check_api_version`]).
    #[error(
        "`{file}`: unsupported chart version: apiVersion {api_version:?} is not one Helm loads (v1, v2 or v3)\nhint: set `apiVersion: v2` in Chart.yaml"
    )]
    UnsupportedApiVersion { file: String, api_version: String },
    /// Chart.yaml breaks one of the rules every chart must follow.
    #[error("`{file}`: {source}\nhint: {}", source.hint())]
    Invalid {
        file: String,
        source: ValidationError,
    },
    /// Chart.lock or requirements.lock cannot be read.
    #[error("`{file}`: {source}")]
    Lock {
        file: String,
        source: MetadataYamlError,
    },
    /// values.yaml is not valid YAML or not a map.
    #[error("`{file}`: {}", error.helm_values_message())]
    Values {
        file: String,
        // Not the error's `source`: its text is part of this message already.
        error: chartkit_yaml::Error,
    },
    /// An archive under `charts/` holds something other than the expected file.
    #[error("`{origin}`: subchart archive `{expected}` is malformed (found `{found}`)")]
    SubchartLayout {
        origin: String,
        expected: String,
        found: String,
    },
}

impl LoadError {
    /// Whether the load stopped only because other loads held the shared memory budget
    /// (see [`crate::archive::RetainBudget`]): the chart may be fine, and a retry may pass.
    pub fn is_busy(&self) -> bool {
        matches!(
            self,
            LoadError::Archive {
                source: ArchiveError::Busy { .. },
                ..
            }
        )
    }
}
