//! Uploads: ChartMuseum's two request shapes (a raw package, or multipart with `chart` and
//! `prov` parts), and checking that what arrived is a chart worth storing before anything
//! is written. The body itself is read by `upload_body`.

use axum::http::{HeaderMap, header};
use bytes::Bytes;
use chartkit_index::ChartVersion;
use chartkit_signing::{Keyring, Provenance, Sha256Digest};

use crate::error::ApiError;
use crate::names;

/// What an upload request carried.
#[derive(Debug, Default)]
pub struct Parts {
    pub chart: Option<(Option<String>, Bytes)>,
    pub prov: Option<(Option<String>, Bytes)>,
}

/// The multipart fields an upload's package and provenance come in besides `chart` and
/// `prov` (ChartMuseum's `--chart-post-form-field-name` and `--prov-post-form-field-name`,
/// which add a name rather than replace the usual one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormFields {
    pub chart: String,
    pub prov: String,
}

impl Default for FormFields {
    fn default() -> FormFields {
        FormFields {
            chart: "chart".to_owned(),
            prov: "prov".to_owned(),
        }
    }
}

/// Splits a body into its parts: multipart (`chart`, `prov` fields, or those `fields`
/// names) or a single raw file, taken as `raw_field`.
pub async fn parts(
    headers: &HeaderMap,
    body: Bytes,
    raw_field: &str,
    fields: &FormFields,
) -> Result<Parts, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let mut parts = Parts::default();
    if !content_type
        .to_ascii_lowercase()
        .starts_with("multipart/form-data")
    {
        let part = Some((None, body));
        if raw_field == "prov" {
            parts.prov = part;
        } else {
            parts.chart = part;
        }
        return Ok(parts);
    }
    let boundary = multer::parse_boundary(content_type)
        .map_err(|e| ApiError::bad_request(format!("bad multipart request: {e}")))?;
    let stream = futures::stream::once(async move { Ok::<Bytes, std::io::Error>(body) });
    let mut multipart = multer::Multipart::new(stream, boundary);
    while let Some(field) = multipart
        .next_field()
        .await
        .map_err(|e| ApiError::bad_request(format!("bad multipart request: {e}")))?
    {
        let name = field.name().unwrap_or("").to_owned();
        let file_name = field.file_name().map(str::to_owned);
        let data = field
            .bytes()
            .await
            .map_err(|e| ApiError::bad_request(format!("bad multipart part `{name}`: {e}")))?;
        let slot = match name.as_str() {
            "chart" => &mut parts.chart,
            "prov" => &mut parts.prov,
            "" => continue,
            other if other == fields.chart => &mut parts.chart,
            other if other == fields.prov => &mut parts.prov,
            _ => continue,
        };
        // Keeping one of two silently would store something the client did not mean.
        if slot.is_some() {
            return Err(ApiError::bad_request(format!(
                "the request has more than one `{name}` part; send one chart package (and at most one provenance file) per request"
            )));
        }
        *slot = Some((file_name, data));
    }
    Ok(parts)
}

/// A package that passed every check, ready to store.
#[derive(Debug)]
pub struct CheckedPackage {
    pub file: String,
    pub name: String,
    pub version: String,
    pub data: Bytes,
    pub digest: Sha256Digest,
    /// Its index entry (with `created` to be set from the stored file).
    pub entry: ChartVersion,
}

/// Checks what the judge made of a package: a safe file name equal to
/// `NAME-VERSION.tgz`, and (when an upload names its file) that name.
pub fn check_package(
    data: Bytes,
    entry: ChartVersion,
    sent_name: Option<&str>,
) -> Result<CheckedPackage, ApiError> {
    let name = entry.name().to_owned();
    let version = entry.version().to_owned();
    let file = names::package_file(&name, &version);
    if names::classify(&file) != Some(names::FileKind::Package) {
        return Err(ApiError::bad_request(format!(
            "chart name `{name}` and version `{version}` do not make a safe file name"
        )));
    }
    if let Some(sent) = sent_name {
        let base = sent.rsplit(['/', '\\']).next().unwrap_or(sent);
        if sent.contains("..") || base != file {
            return Err(ApiError::bad_request(format!(
                "file name `{sent}` does not match the chart inside it; a package of {name} {version} must be named `{file}`"
            )));
        }
    }
    let digest = Sha256Digest::from_hex(&entry.digest)
        .ok_or_else(|| ApiError::internal("the package digest is not hex"))?;
    Ok(CheckedPackage {
        file,
        name,
        version,
        data,
        digest,
        entry,
    })
}

/// A provenance file that parsed, with the package file it belongs to.
#[derive(Debug)]
pub struct CheckedProvenance {
    /// `NAME-VERSION.tgz.prov`
    pub file: String,
    pub package_file: String,
    /// The chart name and version its metadata gives.
    pub chart: (String, String),
    pub text: String,
    /// The digest it lists for its package (`sha256:<hex>`), if it lists one.
    pub package_digest: Option<String>,
}

impl CheckedProvenance {
    /// Whether this provenance is for exactly these package bytes.
    pub fn signs(&self, digest: &Sha256Digest) -> bool {
        self.package_digest.as_deref() == Some(format!("sha256:{digest}").as_str())
    }

    /// Refuses a provenance that is not for these package bytes, whatever the server's
    /// signature policy: a `.prov` that does not match its package can only fail
    /// `helm verify`.
    pub fn require_match(&self, digest: &Sha256Digest) -> Result<(), ApiError> {
        if self.signs(digest) {
            return Ok(());
        }
        Err(ApiError::bad_request(match &self.package_digest {
            Some(listed) => format!(
                "the provenance file is for other bytes than {}: it lists {listed}, but the package is sha256:{digest}; sign this package again",
                self.package_file
            ),
            None => format!(
                "the provenance file does not list {} in its `files:`; sign this package again",
                self.package_file
            ),
        }))
    }
}

/// Parses a `.prov` and works out which package it signs (from the metadata it carries).
pub fn check_provenance(data: &[u8]) -> Result<CheckedProvenance, ApiError> {
    let text = std::str::from_utf8(data)
        .map_err(|_| ApiError::bad_request("the provenance file is not UTF-8 text"))?
        .to_owned();
    let provenance = Provenance::parse(&text)
        .map_err(|e| ApiError::bad_request(format!("not a valid provenance file: {e}")))?;
    let metadata = chartkit_chart::Metadata::from_yaml(provenance.metadata_yaml())
        .map_err(|e| ApiError::bad_request(format!("provenance metadata: {e}")))?;
    let package_file = names::package_file(&metadata.name, &metadata.version);
    if names::classify(&package_file) != Some(names::FileKind::Package) {
        return Err(ApiError::bad_request(format!(
            "provenance names chart `{}` version `{}`, which do not make a safe file name",
            metadata.name, metadata.version
        )));
    }
    let package_digest = provenance.files().get(&package_file).cloned();
    Ok(CheckedProvenance {
        file: format!("{package_file}.prov"),
        package_file,
        chart: (metadata.name, metadata.version),
        text,
        package_digest,
    })
}

/// Verifies a provenance against a package digest with the server's keyring.
pub fn verify(
    provenance: &CheckedProvenance,
    digest: &Sha256Digest,
    keyring: &Keyring,
) -> Result<(), ApiError> {
    chartkit_signing::verify_digest(&provenance.text, digest, &provenance.package_file, keyring)
        .map(drop)
        .map_err(|e| ApiError::bad_request(format!("signature check failed: {e}")))
}
