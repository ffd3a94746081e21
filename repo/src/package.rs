//! Reading a chart package's metadata the way Helm's archive loader finds it, without
//! unpacking the rest: the gzip stream is inflated only up to the Chart.yaml entry.

use std::io::Read;

use chartkit_chart::{ChartFileError, Metadata, ValidationError};

/// Why a file is not indexed. Helm skips such files silently ("assume this is not a chart").
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    #[error("not a gzipped tar archive: {0}")]
    Archive(std::io::Error),
    #[error("chart illegally references a path outside its directory: `{0}`")]
    IllegalPath(String),
    #[error("Chart.yaml file is missing")]
    NoChartYaml,
    #[error("Chart.yaml is larger than Helm accepts")]
    TooLarge,
    #[error("cannot load {0}")]
    Metadata(#[from] ChartFileError),
    #[error("{0}")]
    Invalid(#[from] ValidationError),
}

/// Helm's per-file limit inside a chart archive.
const MAX_FILE: u64 = 5 * 1024 * 1024;

/// Reads and validates the metadata of a packaged chart (`.tgz` bytes).
///
/// Helm's loader also reads `requirements.yaml` over the metadata; for `apiVersion: v1`
/// charts, which keep their dependencies there, the stream is followed to that entry too.
pub fn read_package_metadata(bytes: &[u8]) -> Result<Metadata, PackageError> {
    if bytes.len() < 2 || bytes[0] != 0x1f || bytes[1] != 0x8b {
        return Err(PackageError::Archive(std::io::Error::other(
            "missing gzip magic",
        )));
    }
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    let mut chart_yaml: Option<String> = None;
    let mut requirements: Option<String> = None;
    for entry in archive.entries().map_err(PackageError::Archive)? {
        let mut entry = entry.map_err(PackageError::Archive)?;
        let kind = entry.header().entry_type();
        if kind.is_dir() || kind.is_pax_global_extensions() || kind.is_pax_local_extensions() {
            continue;
        }
        let raw = entry.path_bytes().into_owned();
        let name = String::from_utf8_lossy(&raw).into_owned();
        let delimiter = if name.contains('\\') { '\\' } else { '/' };
        let mut parts = name.split(delimiter);
        let first = parts.next().unwrap_or("");
        let rest: Vec<&str> = parts.collect();
        if first == "Chart.yaml" {
            return Err(PackageError::IllegalPath(name));
        }
        let inner = rest.join("/");
        if inner.starts_with('/') || inner.starts_with("..") {
            return Err(PackageError::IllegalPath(name));
        }
        let wanted = match inner.as_str() {
            "Chart.yaml" => &mut chart_yaml,
            "requirements.yaml" => &mut requirements,
            _ => continue,
        };
        if entry.size() > MAX_FILE {
            return Err(PackageError::TooLarge);
        }
        let mut data = Vec::with_capacity(entry.size() as usize);
        entry
            .read_to_end(&mut data)
            .map_err(PackageError::Archive)?;
        *wanted = Some(String::from_utf8_lossy(&data).into_owned());
        if let Some(text) = &chart_yaml {
            let metadata = Metadata::from_chart_files(text, requirements.as_deref())?;
            let v1 = metadata.api_version == chartkit_index::API_VERSION_V1;
            if !v1 || requirements.is_some() {
                return finish(metadata);
            }
        }
    }
    let text = chart_yaml.ok_or(PackageError::NoChartYaml)?;
    finish(Metadata::from_chart_files(&text, requirements.as_deref())?)
}

fn finish(mut metadata: Metadata) -> Result<Metadata, PackageError> {
    metadata.validate()?;
    Ok(metadata)
}
