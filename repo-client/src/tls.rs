//! TLS for chartkit as a client (`--ca-file` of `push`, `repo add`, `pull`).
//!
//! A CA file's certificates are the only roots, as in helm. One case needs more than
//! webpki: a server whose certificate is itself one of those roots, as a self-signed
//! certificate made with `openssl req -x509` is (it says CA:TRUE). helm (Go's
//! crypto/x509) and curl (OpenSSL) trust such a certificate; webpki refuses a CA
//! certificate as a server's (`CaUsedAsEndEntity`). [`CaFileVerifier`] accepts exactly
//! that case, after checking the certificate's validity period, names and extended key
//! usage as Go does, and leaves every other certificate to webpki's verifier unchanged.

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

/// A client certificate and its private key (`--cert-file`, `--key-file`).
pub type ClientIdentity = (
    Vec<CertificateDer<'static>>,
    rustls::pki_types::PrivateKeyDer<'static>,
);

/// A client configuration that trusts only `roots` (the certificates of a CA file),
/// presenting `identity` when the server asks for a client certificate.
pub fn client_config(
    roots: Vec<CertificateDer<'static>>,
    identity: Option<ClientIdentity>,
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
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier));
    let mut config = match identity {
        Some((chain, key)) => config.with_client_auth_cert(chain, key)?,
        None => config.with_no_client_auth(),
    };
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
        // there is no chain to build; what is left to check is when, for whom and for
        // what it is valid, as Go's crypto/x509 checks a root used as a leaf. The
        // handshake signature, checked below, proves the server holds its key.
        let facts = certificate_facts(end_entity.as_ref()).ok_or(
            rustls::Error::InvalidCertificate(CertificateError::BadEncoding),
        )?;
        let now = now.as_secs();
        if now < facts.not_before {
            return Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidYet,
            ));
        }
        if now > facts.not_after {
            return Err(rustls::Error::InvalidCertificate(CertificateError::Expired));
        }
        if !facts.for_servers {
            return Err(rustls::Error::InvalidCertificate(
                CertificateError::InvalidPurpose,
            ));
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

/// What [`CaFileVerifier`] checks of a certificate it trusts as it is.
struct Facts {
    /// The validity period, in seconds since the epoch.
    not_before: u64,
    not_after: u64,
    /// No extended key usage extension, or one that allows TLS servers.
    for_servers: bool,
}

/// A certificate's validity period and extended key usage, read from its DER:
/// Certificate → TBSCertificate → [0] version, serialNumber, signature, issuer, validity,
/// subject, subjectPublicKeyInfo, [1] and [2] unique ids, [3] extensions.
fn certificate_facts(der: &[u8]) -> Option<Facts> {
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
    let (tag, validity, after) = element(rest)?;
    if tag != SEQUENCE {
        return None;
    }
    rest = after;
    let (tag, not_before, after) = element(validity)?;
    let not_before = time(tag, not_before)?;
    let (tag, not_after, _) = element(after)?;
    let not_after = time(tag, not_after)?;
    // subject, subjectPublicKeyInfo.
    for _ in 0..2 {
        let (tag, _, after) = element(rest)?;
        if tag != SEQUENCE {
            return None;
        }
        rest = after;
    }
    let mut for_servers = true;
    while !rest.is_empty() {
        let (tag, contents, after) = element(rest)?;
        rest = after;
        if tag == EXTENSIONS {
            for_servers = extended_key_usage(contents)?.unwrap_or(true);
        }
    }
    Some(Facts {
        not_before,
        not_after,
        for_servers,
    })
}

/// Whether the extended key usage extension among `extensions` (the contents of `[3]`)
/// allows TLS servers (serverAuth or anyExtendedKeyUsage); `Some(None)` when there is no
/// such extension, `None` when the DER is malformed.
fn extended_key_usage(extensions: &[u8]) -> Option<Option<bool>> {
    let (tag, mut list, _) = element(extensions)?;
    if tag != SEQUENCE {
        return None;
    }
    while !list.is_empty() {
        let (tag, extension, after) = element(list)?;
        list = after;
        if tag != SEQUENCE {
            return None;
        }
        let (tag, id, fields) = element(extension)?;
        if tag != OID {
            return None;
        }
        if id != OID_EXTENDED_KEY_USAGE {
            continue;
        }
        let (mut tag, mut value, after) = element(fields)?;
        if tag == BOOLEAN {
            (tag, value, _) = element(after)?;
        }
        if tag != OCTET_STRING {
            return None;
        }
        let (tag, mut purposes, _) = element(value)?;
        if tag != SEQUENCE {
            return None;
        }
        let mut allows = false;
        while !purposes.is_empty() {
            let (tag, purpose, after) = element(purposes)?;
            purposes = after;
            if tag != OID {
                return None;
            }
            allows |= purpose == OID_SERVER_AUTH || purpose == OID_ANY_EXTENDED_KEY_USAGE;
        }
        return Some(Some(allows));
    }
    Some(None)
}

const BOOLEAN: u8 = 0x01;
const INTEGER: u8 = 0x02;
const OCTET_STRING: u8 = 0x04;
const OID: u8 = 0x06;
const SEQUENCE: u8 = 0x30;
const VERSION: u8 = 0xa0;
const EXTENSIONS: u8 = 0xa3;
/// 2.5.29.37, id-ce-extKeyUsage.
const OID_EXTENDED_KEY_USAGE: &[u8] = &[0x55, 0x1d, 0x25];
/// 2.5.29.37.0, anyExtendedKeyUsage.
const OID_ANY_EXTENDED_KEY_USAGE: &[u8] = &[0x55, 0x1d, 0x25, 0x00];
/// 1.3.6.1.5.5.7.3.1, id-kp-serverAuth.
const OID_SERVER_AUTH: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x01];
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

    /// A DER element.
    fn tlv(tag: u8, contents: &[u8]) -> Vec<u8> {
        let mut out = vec![tag, u8::try_from(contents.len()).unwrap()];
        out.extend_from_slice(contents);
        out
    }

    /// The contents of `[3]` with one extended key usage extension listing `purposes`.
    fn extensions_with_purposes(critical: bool, purposes: &[&[u8]]) -> Vec<u8> {
        let list: Vec<u8> = purposes.iter().flat_map(|p| tlv(OID, p)).collect();
        let mut extension = tlv(OID, OID_EXTENDED_KEY_USAGE);
        if critical {
            extension.extend(tlv(BOOLEAN, &[0xff]));
        }
        extension.extend(tlv(OCTET_STRING, &tlv(SEQUENCE, &list)));
        let basic_constraints = [
            tlv(OID, &[0x55, 0x1d, 0x13]),
            tlv(OCTET_STRING, &[0x30, 0x00]),
        ]
        .concat();
        tlv(
            SEQUENCE,
            &[tlv(SEQUENCE, &basic_constraints), tlv(SEQUENCE, &extension)].concat(),
        )
    }

    #[test]
    fn extended_key_usage_must_allow_servers_when_present() {
        const CLIENT_AUTH: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x02];
        let check = |critical, purposes: &[&[u8]]| {
            extended_key_usage(&extensions_with_purposes(critical, purposes))
        };
        assert_eq!(check(false, &[CLIENT_AUTH]), Some(Some(false)));
        assert_eq!(
            check(true, &[CLIENT_AUTH, OID_SERVER_AUTH]),
            Some(Some(true))
        );
        assert_eq!(
            check(false, &[OID_ANY_EXTENDED_KEY_USAGE]),
            Some(Some(true))
        );
        let none = tlv(
            SEQUENCE,
            &tlv(
                SEQUENCE,
                &[
                    tlv(OID, &[0x55, 0x1d, 0x13]),
                    tlv(OCTET_STRING, &[0x30, 0x00]),
                ]
                .concat(),
            ),
        );
        assert_eq!(extended_key_usage(&none), Some(None));
        assert_eq!(extended_key_usage(&[0x30, 0x05, 0x30]), None);
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
