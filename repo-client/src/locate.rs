//! Every command that takes a chart (`show`, `template`, `install`, `upgrade`, `diff
//! upgrade`, `pull`) turns its argument into a chart here, as helm's `LocateChart` does:
//! a [`ChartSource`] says where the argument points (one variant per kind of place, so
//! a new scheme is one variant, its parsing in [`ChartSource::parse`] and its fetching
//! in [`ChartSource::locate`]), and [`Located`] is what was found there, verified when
//! asked, ready to load. A chart repository behind a scheme a getter plugin serves
//! (`git+https://`, `s3://`) is no new kind of place: it is a repository whose bytes
//! the network fetches by running the plugin (`crate::Getters`).

use chartkit_yaml::goslog;
use std::path::{Path, PathBuf};

use chartkit_chart::{Chart, LoadError, LoadOptions};
use chartkit_signing::{Keyring, Verification, VerifyError};

use crate::client::{Client, Resolved};
use crate::error::ClientError;
use crate::reference::ChartRef;
use crate::settings::RepoEntry;

/// Where a chart argument points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChartSource {
    /// A chart directory or package that exists on disk.
    Local(PathBuf),
    /// A chart in a chart repository over HTTP(S), a `portforward://` tunnel or a
    /// scheme a getter plugin serves: `REPO/NAME`, `NAME` with `--repo URL`, or a
    /// package URL. Which scheme is served, and how, is the network's to say
    /// (`crate::Getters`), so a scheme nobody serves is refused when fetched.
    Repository(ChartRef),
    /// A chart in an OCI registry: `oci://HOST/PATH/NAME[:TAG][@DIGEST]`.
    Oci(chartkit_oci::Reference),
}

impl ChartSource {
    /// Reads a chart argument by helm's rule: without `--repo`, an existing path is a
    /// local chart, and an absolute path or one starting with `.` that does not exist is
    /// an error naming it; anything else is a repository reference.
    pub fn parse(argument: &str, repo_url: Option<&str>) -> Result<ChartSource, LocateError> {
        let argument = argument.trim();
        let repo_url = repo_url.filter(|u| !u.is_empty());
        if repo_url.is_none() {
            let path = Path::new(argument);
            if path.exists() {
                return Ok(ChartSource::Local(path.to_owned()));
            }
            if path.is_absolute() || argument.starts_with('.') {
                return Err(LocateError::NoSuchPath {
                    path: argument.to_owned(),
                });
            }
        }
        ChartSource::remote(argument, repo_url)
    }

    /// Reads a chart argument as a repository reference only (`pull`, which never
    /// reads the disk).
    pub fn remote(argument: &str, repo_url: Option<&str>) -> Result<ChartSource, LocateError> {
        let argument = argument.trim();
        let repo_url = repo_url.filter(|u| !u.is_empty());
        if repo_url.is_none() && chartkit_oci::is_oci(argument) {
            return chartkit_oci::Reference::parse(argument)
                .map(ChartSource::Oci)
                .map_err(|e| LocateError::Client(Box::new(e.into())));
        }
        if repo_url.is_none() && !argument.contains("://") && !argument.contains('/') {
            return Err(LocateError::NotAReference {
                argument: argument.to_owned(),
            });
        }
        Ok(ChartSource::Repository(ChartRef::parse(
            argument, repo_url,
        )?))
    }

    /// True when locating needs the repository client (the network or its cache).
    pub fn needs_client(&self) -> bool {
        !matches!(self, ChartSource::Local(_))
    }

    /// Finds the chart: a local one as it is (its package verified against the `.prov`
    /// beside it with `--verify`), a repository's by helm's version rules from the
    /// content store or downloaded, with its `.prov` fetched and checked when asked.
    /// `client` is needed only when [`ChartSource::needs_client`] says so.
    pub fn locate(
        &self,
        client: Option<&Client>,
        options: &LocateOptions<'_>,
    ) -> Result<Located, LocateError> {
        match self {
            ChartSource::Local(path) => locate_local(path, options),
            ChartSource::Repository(reference) => {
                let client = client.ok_or(LocateError::NoClient)?;
                locate_in_repository(client, reference, options)
            }
            ChartSource::Oci(reference) => {
                let client = client.ok_or(LocateError::NoClient)?;
                locate_in_registry(client, reference, options)
            }
        }
    }
}

/// How to find and check a chart: helm's chart flags.
#[derive(Default)]
pub struct LocateOptions<'a> {
    /// `--version`: an exact version or a range; empty or `None` is the newest stable.
    pub version: Option<&'a str>,
    /// `--devel`: pre-releases count when no version is given.
    pub devel: bool,
    /// Credentials and TLS over the repository's stored settings.
    pub access: Access,
    /// `--verify`: the package must be signed by one of these keys.
    pub verify: Option<&'a Keyring>,
    /// Fetch the `.prov` even without verifying (`pull --prov`).
    pub provenance: bool,
}

/// helm's repository flags (`--username`, `--ca-file`...), laid over what
/// repositories.yaml says for the repository.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Access {
    pub username: Option<String>,
    pub password: Option<String>,
    pub token: Option<String>,
    pub ca_file: Option<PathBuf>,
    pub cert_file: Option<PathBuf>,
    pub key_file: Option<PathBuf>,
    pub insecure_skip_tls_verify: bool,
    pub pass_credentials: bool,
    /// `--plain-http`: talk to an OCI registry over http://.
    pub plain_http: bool,
}

impl Access {
    /// The flags given over `entry`'s stored settings.
    pub fn apply(&self, entry: &mut RepoEntry) {
        let set = |slot: &mut String, value: &Option<String>| {
            if let Some(v) = value {
                slot.clone_from(v);
            }
        };
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        set(&mut entry.username, &self.username);
        set(&mut entry.password, &self.password);
        set(&mut entry.token, &self.token);
        set(&mut entry.ca_file, &path(&self.ca_file));
        set(&mut entry.cert_file, &path(&self.cert_file));
        set(&mut entry.key_file, &path(&self.key_file));
        entry.insecure_skip_tls_verify |= self.insecure_skip_tls_verify;
        entry.pass_credentials_all |= self.pass_credentials;
    }
}

/// A chart found, not yet loaded.
#[derive(Debug)]
pub struct Located {
    pub content: Content,
    /// The package's provenance file, when it was fetched.
    pub provenance: Option<Vec<u8>>,
    /// Who signed it, with `--verify`.
    pub verification: Option<Verification>,
    /// The repository version chosen (`None` for a local chart).
    pub resolved: Option<Resolved>,
    /// Things the user should know, as lines of Helm's log (`chartkit_yaml::goslog`):
    /// helm's fall-back from a requested version to a range's match, an index taken from
    /// the cache because the server could not be reached, a missing digest.
    pub warnings: Vec<String>,
    /// For a chart from an OCI registry, the reference and manifest digest pulled, which
    /// helm reports (`Pulled: ...`, `Digest: ...`).
    pub pulled: Option<(String, String)>,
}

/// What a chart is made of.
#[derive(Debug)]
pub enum Content {
    /// A directory or package on disk.
    Path(PathBuf),
    /// A package's bytes (from the content store), with its file name.
    Package { bytes: Vec<u8>, file_name: String },
}

impl Located {
    /// Loads the chart with Helm's loader rules.
    pub fn load(&self, options: &LoadOptions) -> Result<Chart, LocateError> {
        match &self.content {
            Content::Path(path) => {
                chartkit_chart::load(path, options).map_err(|source| LocateError::Load {
                    what: format!("the chart at `{}`", path.display()),
                    source: Box::new(source),
                })
            }
            Content::Package { bytes, file_name } => {
                chartkit_chart::load_archive(bytes, file_name, options).map_err(|source| {
                    LocateError::Load {
                        what: format!("the chart {file_name}"),
                        source: Box::new(source),
                    }
                })
            }
        }
    }
}

fn locate_local(path: &Path, options: &LocateOptions<'_>) -> Result<Located, LocateError> {
    let mut verification = None;
    if let Some(keyring) = options.verify {
        if path.is_dir() {
            return Err(LocateError::UnpackedNotVerifiable {
                path: path.to_owned(),
            });
        }
        // Absolute, as helm names the .prov it looked for.
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let verified = chartkit_signing::verify_package_file(&absolute, keyring);
        verification = Some(verified.map_err(|error| LocateError::Verify {
            file_name: path.display().to_string(),
            error: Box::new(error),
        })?);
    }
    Ok(Located {
        content: Content::Path(path.to_owned()),
        provenance: None,
        verification,
        resolved: None,
        warnings: Vec::new(),
        pulled: None,
    })
}

fn locate_in_repository(
    client: &Client,
    reference: &ChartRef,
    options: &LocateOptions<'_>,
) -> Result<Located, LocateError> {
    let (mut entry, refresh) = client.entry_for(reference)?;
    options.access.apply(&mut entry);
    let (resolved, warnings) = match reference {
        ChartRef::Direct { url } => (client.direct(url, entry), Vec::new()),
        _ => {
            let loaded = client.load_index(&entry, refresh)?;
            let resolved = client.resolve_in(&loaded, reference, options.version, options.devel)?;
            let mut warnings: Vec<String> = (loaded.warnings.iter())
                .map(|warning| goslog::warn(warning, &[]))
                .collect();
            // Helm's `IndexFile.Get` says so when `--version` was a range, or a version
            // written otherwise than the entry's.
            if let Some(requested) = options.version.filter(|v| !v.is_empty())
                && requested != resolved.version
            {
                warnings.push(goslog::warn(
                    "unable to find exact version requested; falling back to closest available version",
                    &[
                        ("chart", &resolved.name),
                        ("requested", requested),
                        ("selected", &resolved.version),
                    ],
                ));
            }
            // A malformed digest is an error (`resolve_in`); only a missing one is let
            // through, and said.
            if resolved.digest.is_none() {
                warnings.push(goslog::warn(
                    &format!(
                        "chart \"{}\" version \"{}\" has no digest in the index of {}: the package cannot be checked against it",
                        resolved.name, resolved.version, resolved.repo_url
                    ),
                    &[],
                ));
            }
            (resolved, warnings)
        }
    };
    let package = client.fetch_package(&resolved)?;
    let file_name = resolved.file_name();
    let provenance = if options.verify.is_some() || options.provenance {
        let prov = client
            .fetch_prov(&resolved)
            .map_err(|source| LocateError::Provenance {
                url: resolved.prov_url(),
                source: Box::new(source),
            })?;
        Some(prov)
    } else {
        None
    };
    let verification = match (options.verify, &provenance) {
        (Some(keyring), Some(prov)) => Some(
            chartkit_signing::verify(
                &String::from_utf8_lossy(prov),
                &package.bytes,
                &file_name,
                keyring,
            )
            .map_err(|error| LocateError::Verify {
                file_name: file_name.clone(),
                error: Box::new(error),
            })?,
        ),
        _ => None,
    };
    Ok(Located {
        content: Content::Package {
            bytes: package.bytes,
            file_name,
        },
        provenance,
        verification,
        resolved: Some(resolved),
        warnings,
        pulled: None,
    })
}

fn locate_in_registry(
    client: &Client,
    reference: &chartkit_oci::Reference,
    options: &LocateOptions<'_>,
) -> Result<Located, LocateError> {
    let provenance = match (options.verify.is_some(), options.provenance) {
        (true, _) => crate::oci::Provenance::Required,
        (false, true) => crate::oci::Provenance::IfPresent,
        (false, false) => crate::oci::Provenance::Skip,
    };
    let chart = client.fetch_oci(
        reference,
        options.version,
        options.devel,
        &options.access,
        provenance,
    )?;
    let file_name = chart.file_name();
    let mut warnings: Vec<String> = (chart.warnings.iter())
        .map(|warning| goslog::warn(warning, &[]))
        .collect();
    if provenance == crate::oci::Provenance::IfPresent && chart.prov.is_none() {
        warnings.push(goslog::warn(
            &format!(
                "Verification not found for oci://{}: manifest does not contain a layer with mediatype {}",
                reference.locator(),
                chartkit_oci::manifest::PROV_MEDIA_TYPE
            ),
            &[],
        ));
    }
    let verification = match (options.verify, &chart.prov) {
        (Some(keyring), Some(prov)) => Some(
            chartkit_signing::verify(
                &String::from_utf8_lossy(prov),
                &chart.package,
                &file_name,
                keyring,
            )
            .map_err(|error| LocateError::Verify {
                file_name: file_name.clone(),
                error: Box::new(error),
            })?,
        ),
        _ => None,
    };
    Ok(Located {
        content: Content::Package {
            bytes: chart.package,
            file_name,
        },
        provenance: chart.prov,
        verification,
        resolved: None,
        warnings,
        pulled: Some((chart.reference.to_string(), chart.digest)),
    })
}

/// Why a chart could not be found, fetched or loaded.
#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    /// A path (absolute, or starting with `.`) that does not exist.
    #[error("path \"{path}\" not found: there is no chart directory or package there")]
    NoSuchPath { path: String },
    /// Not a path on disk, and not a repository reference either.
    #[error(
        "\"{argument}\" is not a chart directory or package on disk, nor a chart in a repository (REPO/NAME, a URL, or NAME with --repo URL)"
    )]
    NotAReference { argument: String },
    /// `--verify` on a chart directory.
    #[error("unpacked charts cannot be verified (`{}` is a directory)", path.display())]
    UnpackedNotVerifiable { path: PathBuf },
    /// The `.prov` of a repository package could not be fetched.
    #[error("failed to fetch provenance \"{url}\"")]
    Provenance {
        url: String,
        source: Box<ClientError>,
    },
    /// The package `file_name` is not signed as `--verify` requires.
    #[error("{error}")]
    Verify {
        file_name: String,
        error: Box<VerifyError>,
    },
    /// Resolving or fetching in the repository failed.
    #[error(transparent)]
    Client(Box<ClientError>),
    /// The chart is not one Helm's loader accepts.
    #[error("cannot load {what}")]
    Load {
        what: String,
        #[source]
        source: Box<LoadError>,
    },
    /// A repository reference was located without a repository client.
    #[error("a chart in a repository was asked for without a repository client")]
    NoClient,
}

impl From<ClientError> for LocateError {
    fn from(error: ClientError) -> LocateError {
        LocateError::Client(Box::new(error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_read_by_helms_rule() {
        let dir = tempfile::tempdir().unwrap();
        let chart = dir.path().join("web");
        std::fs::create_dir(&chart).unwrap();
        let local = chart.display().to_string();
        assert_eq!(
            ChartSource::parse(&local, None).unwrap(),
            ChartSource::Local(chart.clone())
        );
        // With --repo the argument is a chart name, even if a path of that name exists.
        assert!(matches!(
            ChartSource::parse(&local, Some("http://h")).unwrap(),
            ChartSource::Repository(ChartRef::InRepo { .. })
        ));
        let missing = ChartSource::parse("./no-such-dir", None).unwrap_err();
        assert_eq!(
            missing.to_string(),
            "path \"./no-such-dir\" not found: there is no chart directory or package there"
        );
        assert!(matches!(
            ChartSource::parse("/no/such/chart.tgz", None).unwrap_err(),
            LocateError::NoSuchPath { .. }
        ));
        assert!(matches!(
            ChartSource::parse("myrepo/web", None).unwrap(),
            ChartSource::Repository(ChartRef::Named { .. })
        ));
        assert!(matches!(
            ChartSource::parse("https://h/web-1.0.0.tgz", None).unwrap(),
            ChartSource::Repository(ChartRef::Direct { .. })
        ));
        assert!(matches!(
            ChartSource::parse("web", None).unwrap_err(),
            LocateError::NotAReference { .. }
        ));
        assert_eq!(
            ChartSource::parse("oci://r:5000/charts/web:1.0.0", None).unwrap(),
            ChartSource::Oci(
                chartkit_oci::Reference::parse("oci://r:5000/charts/web:1.0.0").unwrap()
            )
        );
        // Any scheme is a repository URL here; the network says whether it serves it.
        assert_eq!(
            ChartSource::parse("git+file:///r@charts/web-1.0.0.tgz", None).unwrap(),
            ChartSource::Repository(ChartRef::Direct {
                url: "git+file:///r@charts/web-1.0.0.tgz".into()
            })
        );
        assert!(!ChartSource::Local(chart).needs_client());
    }

    #[test]
    fn a_directory_cannot_be_verified() {
        let dir = tempfile::tempdir().unwrap();
        let keyring = Keyring::default();
        let options = LocateOptions {
            verify: Some(&keyring),
            ..LocateOptions::default()
        };
        let error = ChartSource::Local(dir.path().to_owned())
            .locate(None, &options)
            .unwrap_err();
        assert!(matches!(error, LocateError::UnpackedNotVerifiable { .. }));
    }

    #[test]
    fn flags_override_stored_settings() {
        let mut entry = RepoEntry {
            username: "stored".into(),
            password: "pw".into(),
            ..RepoEntry::default()
        };
        Access {
            username: Some("given".into()),
            ca_file: Some("/ca.pem".into()),
            pass_credentials: true,
            ..Access::default()
        }
        .apply(&mut entry);
        assert_eq!(entry.username, "given");
        assert_eq!(entry.password, "pw");
        assert_eq!(entry.ca_file, "/ca.pem");
        assert!(entry.pass_credentials_all);
    }
}
