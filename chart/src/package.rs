//! Packaging charts into `.tgz` archives that Helm reads, reproducibly: entries in a fixed
//! order with fixed times, owners and modes, and a gzip header without a timestamp, so
//! the same chart always gives the same bytes and the same digest.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::{Compression, GzBuilder};
use sha2::{Digest, Sha256};

use crate::chart::{CHART_FILE, Chart, SCHEMA_FILE, VALUES_FILE};
use crate::error::LoadError;
use crate::load::{LoadOptions, load_dir};
use crate::metadata::ApiVersion;

/// The gzip "extra" field and comment Helm writes; tools use them to recognise charts.
const HELM_GZIP_EXTRA: &[u8] = b"+aHR0cHM6Ly95b3V0dS5iZS96OVV6MWljandyTQo=";
const HELM_GZIP_COMMENT: &str = "Helm";

/// Options for `package`.
#[derive(Debug, Clone, Default)]
pub struct PackageOptions {
    /// Overrides the chart version.
    pub version: Option<String>,
    /// Overrides the app version.
    pub app_version: Option<String>,
    /// Directory to write the archive into (created if missing).
    pub destination: PathBuf,
    /// Modification time written for every entry, in seconds since the epoch.
    pub mtime: u64,
    pub load: LoadOptions,
}

/// A written package.
#[derive(Debug, Clone)]
pub struct Packaged {
    pub path: PathBuf,
    /// Lower-case hex sha256 of the archive.
    pub sha256: String,
    pub chart: Chart,
}

/// Why packaging failed.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    #[error(transparent)]
    Load(#[from] LoadError),
    /// An apiVersion v3 chart: Helm 4's loader reads it, `helm package` refuses it.
    #[error(
        "`{0}/Chart.yaml`: invalid chart apiVersion: v3 is Helm 4's experimental chart format, which helm does not package\nhint: set `apiVersion: v2` in Chart.yaml"
    )]
    InvalidApiVersion(String),
    #[error("`--version {0}` is not a valid semantic version")]
    BadVersion(String),
    #[error("found in Chart.yaml, but missing in charts/ directory: {}\nhint: run `helm dependency build` (or add the charts to `charts/`) before packaging", .0.join(", "))]
    MissingDependencies(Vec<String>),
    #[error("`{chart}/values.schema.json` is not valid JSON: {source}")]
    InvalidSchema {
        chart: String,
        source: serde_json::Error,
    },
    #[error("`{0}` would appear twice in the package; two subcharts have the same name")]
    DuplicateEntry(String),
    #[error("cannot write `{path}`: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Loads the chart in `dir`, applies the overrides and writes
/// `<destination>/<name>-<version>.tgz` durably.
pub fn package(dir: &Path, options: &PackageOptions) -> Result<Packaged, PackageError> {
    let (packaged, bytes) = prepare(dir, options)?;
    write_packages(&[(packaged.path.clone(), bytes)])?;
    Ok(packaged)
}

/// Packages several chart directories: archives are built in parallel and written in one
/// durable batch. Like `helm package`, it stops at the first chart that fails; the
/// packages before it are written and returned with the error.
pub fn package_all(
    dirs: &[PathBuf],
    options: &PackageOptions,
) -> (Vec<Packaged>, Option<(PathBuf, PackageError)>) {
    use rayon::prelude::*;
    let prepared: Vec<_> = dirs.par_iter().map(|dir| prepare(dir, options)).collect();
    let mut done = Vec::new();
    let mut outputs = Vec::new();
    let mut failure = None;
    for (dir, result) in dirs.iter().zip(prepared) {
        match result {
            Ok((packaged, bytes)) => {
                outputs.push((packaged.path.clone(), bytes));
                done.push(packaged);
            }
            Err(e) => {
                failure = Some((dir.clone(), e));
                break;
            }
        }
    }
    if let Err(e) = write_packages(&outputs) {
        return (Vec::new(), Some((dirs[0].clone(), e)));
    }
    (done, failure)
}

fn write_packages(outputs: &[(PathBuf, Vec<u8>)]) -> Result<(), PackageError> {
    for (path, _) in outputs {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| PackageError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        }
    }
    chartkit_durable::write_all(outputs, chartkit_durable::Options::default()).map_err(|e| {
        PackageError::Io {
            path: e.path,
            source: e.source,
        }
    })
}

/// Loads, checks and serialises one chart, without writing it.
fn prepare(dir: &Path, options: &PackageOptions) -> Result<(Packaged, Vec<u8>), PackageError> {
    // As `helm package`: charts of an apiVersion Helm's loader does not know are refused
    // as they load, v3 charts once they have.
    let load = LoadOptions {
        check_api_version: true,
        ..options.load.clone()
    };
    let mut chart = load_dir(dir, &load)?;
    if chart.metadata.api_version == crate::API_VERSION_V3 {
        return Err(PackageError::InvalidApiVersion(dir.display().to_string()));
    }
    if let Some(version) = &options.version {
        chartkit_version::Version::parse(version)
            .map_err(|_| PackageError::BadVersion(version.clone()))?;
        chart.metadata.version = version.clone();
    }
    if let Some(app_version) = &options.app_version {
        chart.metadata.app_version = app_version.clone();
    }
    let missing: Vec<String> = chart
        .metadata
        .dependencies()
        .filter(|d| !chart.dependencies.iter().any(|sub| sub.name() == d.name))
        .map(|d| d.name.clone())
        .collect();
    if !missing.is_empty() {
        return Err(PackageError::MissingDependencies(missing));
    }
    let bytes = package_to_bytes(&chart, options.mtime)?;
    let file_name = format!("{}-{}.tgz", chart.name(), chart.metadata.version);
    let destination =
        std::path::absolute(&options.destination).map_err(|source| PackageError::Io {
            path: options.destination.clone(),
            source,
        })?;
    let path = destination.join(file_name);
    let sha256 = hex::encode(Sha256::digest(&bytes));
    Ok((
        Packaged {
            path,
            sha256,
            chart,
        },
        bytes,
    ))
}

/// Serialises a loaded chart into Helm's package layout.
pub fn package_to_bytes(chart: &Chart, mtime: u64) -> Result<Vec<u8>, PackageError> {
    let gzip = GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .extra(HELM_GZIP_EXTRA)
        .comment(HELM_GZIP_COMMENT)
        .write(Vec::new(), Compression::default());
    let mut writer = TarWriter {
        builder: tar::Builder::new(gzip),
        mtime,
        seen: HashSet::new(),
    };
    write_chart(&mut writer, chart, "")?;
    let gzip = writer
        .builder
        .into_inner()
        .map_err(|source| PackageError::Io {
            path: PathBuf::from("<memory>"),
            source,
        })?;
    gzip.finish().map_err(|source| PackageError::Io {
        path: PathBuf::from("<memory>"),
        source,
    })
}

struct TarWriter<W: Write> {
    builder: tar::Builder<W>,
    mtime: u64,
    seen: HashSet<String>,
}

impl<W: Write> TarWriter<W> {
    fn add(&mut self, name: &str, data: &[u8]) -> Result<(), PackageError> {
        if !self.seen.insert(name.to_owned()) {
            return Err(PackageError::DuplicateEntry(name.to_owned()));
        }
        let mut header = tar::Header::new_ustar();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(self.mtime);
        header.set_uid(0);
        header.set_gid(0);
        header.set_entry_type(tar::EntryType::Regular);
        self.builder
            .append_data(&mut header, name, data)
            .map_err(|source| PackageError::Io {
                path: PathBuf::from(name),
                source,
            })
    }
}

/// The same entries in the same order as Helm's `chartutil.Save`: Chart.yaml as Helm
/// serialises the metadata, Chart.lock, values.yaml as written, the schema, templates,
/// other files, then each subchart as a directory under `charts/`.
fn write_chart<W: Write>(
    writer: &mut TarWriter<W>,
    chart: &Chart,
    prefix: &str,
) -> Result<(), PackageError> {
    let base = format!("{prefix}{}", chart.name());
    let mut metadata = chart.metadata.clone();
    if metadata.api() == ApiVersion::V1 {
        // v1 charts keep their dependencies in requirements.yaml, which is packaged as a file.
        metadata.dependencies.clear();
    }
    writer.add(
        &format!("{base}/{CHART_FILE}"),
        metadata.to_yaml().as_bytes(),
    )?;
    if metadata.api() == ApiVersion::V2
        && let Some(lock) = &chart.lock
    {
        writer.add(&format!("{base}/Chart.lock"), lock.to_yaml().as_bytes())?;
    }
    if let Some(values) = chart.raw_file(VALUES_FILE) {
        writer.add(&format!("{base}/{VALUES_FILE}"), &values.data)?;
    }
    if let Some(schema) = &chart.schema {
        serde_json::from_slice::<serde_json::Value>(schema).map_err(|source| {
            PackageError::InvalidSchema {
                chart: base.clone(),
                source,
            }
        })?;
        writer.add(&format!("{base}/{SCHEMA_FILE}"), schema)?;
    }
    for file in chart.templates.iter().chain(&chart.files) {
        writer.add(&format!("{base}/{}", file.name), &file.data)?;
    }
    for dependency in &chart.dependencies {
        write_chart(writer, dependency, &format!("{base}/charts/"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::File;
    use crate::load::{load_archive, load_files};

    fn sample() -> Chart {
        load_files(
            vec![
                File::new(
                    "Chart.yaml",
                    "apiVersion: v2\nname: web\nversion: 1.0.0\n# comment\n",
                ),
                File::new("values.yaml", "# keep me\nreplicas: 1\n"),
                File::new("templates/a.yaml", "kind: A\n"),
                File::new(
                    "charts/sub/Chart.yaml",
                    "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
                ),
            ],
            "web",
            &LoadOptions::default(),
        )
        .unwrap()
    }

    #[test]
    fn packages_are_reproducible_and_load_back() {
        let chart = sample();
        let first = package_to_bytes(&chart, 0).unwrap();
        let second = package_to_bytes(&chart, 0).unwrap();
        assert_eq!(first, second);
        let loaded = load_archive(&first, "web-1.0.0.tgz", &LoadOptions::default()).unwrap();
        assert_eq!(loaded.metadata, chart.metadata);
        assert_eq!(
            &loaded.raw_file("values.yaml").unwrap().data[..],
            b"# keep me\nreplicas: 1\n"
        );
        assert_eq!(loaded.dependencies[0].name(), "sub");
    }

    #[test]
    fn layout_matches_helm() {
        let bytes = package_to_bytes(&sample(), 0).unwrap();
        assert_eq!(
            &bytes[..4],
            &[0x1f, 0x8b, 0x08, 0x14],
            "gzip with extra field and comment"
        );
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(&bytes[..]));
        let names: Vec<String> = archive
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "web/Chart.yaml",
                "web/values.yaml",
                "web/templates/a.yaml",
                "web/charts/sub/Chart.yaml"
            ]
        );
    }
}
