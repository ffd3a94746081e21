//! The storage codec: a record's JSON, gzipped (best compression, as Helm) and
//! base64-encoded into one string. Reading accepts what Helm accepts: the string is
//! base64, and the bytes inside are gzip when they start with gzip's magic, plain JSON
//! otherwise (records written before Helm compressed them).

use std::io::{Read as _, Write as _};

use base64::Engine as _;

use crate::model::{RecordJsonError, Release};

/// The most a record may inflate to. Helm sets no bound; a Secret holds at most 1 MiB,
/// and gzip inflates at most ~1000×, so nothing a cluster can hold is refused.
const MAX_INFLATED: u64 = 1 << 30;

const GZIP_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];

/// A stored string that is not a record.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    #[error("illegal base64 data: {0}")]
    Base64(#[from] base64::DecodeError),
    #[error("gzip: {0}")]
    Gzip(std::io::Error),
    #[error("gzip: the record inflates past {MAX_INFLATED} bytes")]
    TooLarge,
    #[error(transparent)]
    Json(#[from] RecordJsonError),
}

/// The stored form of `release`.
pub fn encode(release: &Release) -> String {
    let json = release.to_json();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    // Writing into a Vec cannot fail.
    let _ = gz.write_all(json.as_bytes());
    let bytes = gz.finish().unwrap_or_default();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The record's JSON inside a stored string.
pub fn decode_json(data: &str) -> Result<Vec<u8>, CodecError> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(data)?;
    // Helm checks for more than three bytes before looking for the magic.
    if bytes.len() > 3 && bytes[..3] == GZIP_MAGIC {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .take(MAX_INFLATED + 1)
            .read_to_end(&mut out)
            .map_err(CodecError::Gzip)?;
        if out.len() as u64 > MAX_INFLATED {
            return Err(CodecError::TooLarge);
        }
        return Ok(out);
    }
    Ok(bytes)
}

/// The record inside a stored string.
pub fn decode(data: &str) -> Result<Release, CodecError> {
    Ok(Release::from_json(&decode_json(data)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_and_decodes() {
        let rel = Release {
            name: "a".into(),
            version: 1,
            ..Release::default()
        };
        let stored = encode(&rel);
        let raw = base64::engine::general_purpose::STANDARD
            .decode(&stored)
            .unwrap();
        assert_eq!(raw[..3], GZIP_MAGIC);
        assert_eq!(decode(&stored).unwrap(), rel);
        assert_eq!(
            decode_json(&stored).unwrap(),
            br#"{"name":"a","version":1}"#
        );
    }

    #[test]
    fn accepts_uncompressed_json() {
        let stored = base64::engine::general_purpose::STANDARD.encode(br#"{"name":"b"}"#);
        assert_eq!(decode(&stored).unwrap().name, "b");
    }

    #[test]
    fn refuses_what_helm_refuses() {
        assert!(matches!(decode("not base64!"), Err(CodecError::Base64(_))));
        let truncated = base64::engine::general_purpose::STANDARD.encode([0x1f, 0x8b, 0x08, 0, 1]);
        assert!(matches!(decode(&truncated), Err(CodecError::Gzip(_))));
        let text = base64::engine::general_purpose::STANDARD.encode(b"[]");
        assert!(matches!(decode(&text), Err(CodecError::Json(_))));
    }
}
