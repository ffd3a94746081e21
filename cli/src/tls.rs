//! TLS for chartkit as a client (`push --ca-file`).
//!
//! A CA file's certificates are the only roots, as in helm. One case needs more than
//! webpki: a server whose certificate is itself one of those roots, as a self-signed
//! certificate made with `openssl req -x509` is (it says CA:TRUE). helm (Go's
//! crypto/x509) and curl (OpenSSL) trust such a certificate; webpki refuses a CA
//! certificate as a server's (`CaUsedAsEndEntity`). [`CaFileVerifier`] accepts exactly
//! that case, after checking the certificate's validity period and names, and leaves every
//! other certificate to webpki's verifier unchanged.

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};

/// Why the CA file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CaFileError {
    #[error("it holds no certificate that can be a root of trust")]
    NoRoots,
    #[error(transparent)]
    Verifier(#[from] rustls::client::VerifierBuilderError),
    #[error(transparent)]
    Tls(#[from] rustls::Error),
}

/// A client configuration that trusts only `roots` (the certificates of a CA file).
pub fn client_config(
    roots: Vec<CertificateDer<'static>>,
) -> Result<rustls::ClientConfig, CaFileError> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut store = rustls::RootCertStore::empty();
    let (added, _) = store.add_parsable_certificates(roots.iter().cloned());
    if added == 0 {
        return Err(CaFileError::NoRoots);
    }
    let webpki =
        WebPkiServerVerifier::builder_with_provider(Arc::new(store), Arc::clone(&provider))
            .build()?;
    let verifier = CaFileVerifier {
        anchors: roots,
        webpki,
    };
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    // reqwest leaves ALPN to a configuration it is given.
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// webpki's verifier, plus servers whose certificate is one of the trusted roots itself.
#[derive(Debug)]
struct CaFileVerifier {
    anchors: Vec<CertificateDer<'static>>,
    webpki: Arc<WebPkiServerVerifier>,
}

impl ServerCertVerifier for CaFileVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if !self
            .anchors
            .iter()
            .any(|a| a.as_ref() == end_entity.as_ref())
        {
            return self.webpki.verify_server_cert(
                end_entity,
                intermediates,
                server_name,
                ocsp_response,
                now,
            );
        }
        // The server presents a certificate the user trusts as it is, byte for byte, so
        // there is no chain to build; what is left to check is when and for whom it is
        // valid. The handshake signature, checked below, proves the server holds its key.
        let (not_before, not_after) = validity(end_entity.as_ref()).ok_or(
            rustls::Error::InvalidCertificate(CertificateError::BadEncoding),
        )?;
        let now = now.as_secs();
        if now < not_before {
            return Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidYet,
            ));
        }
        if now > not_after {
            return Err(rustls::Error::InvalidCertificate(CertificateError::Expired));
        }
        let cert = webpki::EndEntityCert::try_from(end_entity)
            .map_err(|_| rustls::Error::InvalidCertificate(CertificateError::BadEncoding))?;
        cert.verify_is_valid_for_subject_name(server_name)
            .map_err(|_| rustls::Error::InvalidCertificate(CertificateError::NotValidForName))?;
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// A certificate's validity period (notBefore, notAfter) in seconds since the epoch,
/// read from its DER: Certificate → TBSCertificate → [version], serialNumber, signature,
/// issuer, validity.
fn validity(der: &[u8]) -> Option<(u64, u64)> {
    let (tag, certificate, _) = element(der)?;
    if tag != SEQUENCE {
        return None;
    }
    let (tag, tbs, _) = element(certificate)?;
    if tag != SEQUENCE {
        return None;
    }
    let mut rest = tbs;
    let (tag, _, after) = element(rest)?;
    if tag == VERSION {
        rest = after;
    }
    // serialNumber, signature, issuer.
    for expected in [INTEGER, SEQUENCE, SEQUENCE] {
        let (tag, _, after) = element(rest)?;
        if tag != expected {
            return None;
        }
        rest = after;
    }
    let (tag, validity, _) = element(rest)?;
    if tag != SEQUENCE {
        return None;
    }
    let (tag, not_before, after) = element(validity)?;
    let not_before = time(tag, not_before)?;
    let (tag, not_after, _) = element(after)?;
    let not_after = time(tag, not_after)?;
    Some((not_before, not_after))
}

const INTEGER: u8 = 0x02;
const SEQUENCE: u8 = 0x30;
const VERSION: u8 = 0xa0;
const UTC_TIME: u8 = 0x17;
const GENERALIZED_TIME: u8 = 0x18;

/// One DER element: its tag, its contents and what follows it.
fn element(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, mut rest) = rest.split_first()?;
    let length = if first < 0x80 {
        usize::from(first)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let (bytes, after) = rest.split_at(count);
        rest = after;
        bytes.iter().fold(0usize, |n, &b| (n << 8) | usize::from(b))
    };
    if rest.len() < length {
        return None;
    }
    let (contents, after) = rest.split_at(length);
    Some((tag, contents, after))
}

/// A UTCTime (`YYMMDDHHMMSSZ`, years 1950-2049) or GeneralizedTime (`YYYYMMDDHHMMSSZ`)
/// in seconds since the epoch.
fn time(tag: u8, text: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(text).ok()?.strip_suffix('Z')?;
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (year, rest) = match (tag, text.len()) {
        (UTC_TIME, 12) => {
            let short: i64 = text[..2].parse().ok()?;
            (
                if short >= 50 {
                    1900 + short
                } else {
                    2000 + short
                },
                &text[2..],
            )
        }
        (GENERALIZED_TIME, 14) => (text[..4].parse().ok()?, &text[4..]),
        _ => return None,
    };
    let field = |i: usize| -> Option<i64> { rest[i..i + 2].parse().ok() };
    let (month, day, hour, minute, second) =
        (field(0)?, field(2)?, field(4)?, field(6)?, field(8)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
    u64::try_from(seconds).ok()
}

/// Days since 1970-01-01 of a date in the proleptic Gregorian calendar.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_count_days_from_the_epoch() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(2024, 2, 29), 19_782);
        assert_eq!(time(UTC_TIME, b"491231235959Z"), Some(2_524_607_999));
        assert_eq!(time(UTC_TIME, b"700101000000Z"), Some(0));
        assert_eq!(
            time(GENERALIZED_TIME, b"20380119031408Z"),
            Some(2_147_483_648)
        );
        assert_eq!(time(UTC_TIME, b"7001010000Z"), None);
        assert_eq!(time(UTC_TIME, b"701301000000Z"), None);
    }

    #[test]
    fn elements_stop_at_their_length() {
        assert_eq!(
            element(&[0x30, 0x02, 1, 2, 3]),
            Some((0x30, &[1u8, 2][..], &[3u8][..]))
        );
        assert_eq!(
            element(&[0x30, 0x81, 0x02, 1, 2]),
            Some((0x30, &[1u8, 2][..], &[][..]))
        );
        assert_eq!(element(&[0x30, 0x05, 1]), None);
        assert_eq!(element(&[0x30, 0x85, 1, 1, 1, 1, 1]), None);
    }
}
