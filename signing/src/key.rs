use std::fmt;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use pgp::composed::{
    ArmorOptions, EncryptionCaps, KeyType, SecretKeyParamsBuilder, SignedPublicKey, SignedSecretKey,
};
use pgp::crypto::hash::HashAlgorithm;
use pgp::crypto::sym::SymmetricKeyAlgorithm;
use pgp::packet::{Signature, SignatureType, SubpacketData};
use pgp::types::{CompressionAlgorithm, KeyDetails, PublicParams, Tag};
use rsa::traits::PublicKeyParts;
use zeroize::Zeroizing;

use crate::error::KeyError;

/// An ASCII-armored OpenPGP secret key (`-----BEGIN PGP PRIVATE KEY BLOCK-----`).
///
/// Its `Debug` output is redacted and its memory is wiped on drop, so it can sit in
/// structs and error paths without leaking key material.
#[derive(Clone)]
pub struct SecretKeyArmored(Zeroizing<String>);

impl SecretKeyArmored {
    /// The armored text, for writing to a file (see [`write_secret_key_file`]).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SecretKeyArmored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKeyArmored(<redacted>)")
    }
}

/// An ASCII-armored OpenPGP public key (`-----BEGIN PGP PUBLIC KEY BLOCK-----`), the
/// form `gpg --import` and `helm verify --keyring` accept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicKeyArmored(String);

impl PublicKeyArmored {
    /// The armored text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PublicKeyArmored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A freshly generated key pair.
#[derive(Debug, Clone)]
pub struct GeneratedKey {
    /// The secret key, passphrase-protected when a passphrase was given.
    pub secret: SecretKeyArmored,
    /// The public key to hand to people who verify charts.
    pub public: PublicKeyArmored,
    /// The same public key as binary OpenPGP packets (what `gpg --export` writes), the
    /// only keyring form `helm verify --keyring` reads.
    pub public_binary: Vec<u8>,
    /// Fingerprint of the new key, uppercase hex.
    pub fingerprint: String,
    /// The user id, `Name <email>`.
    pub user_id: String,
}

/// Generates a new Ed25519 signing key for `Name <email>`.
///
/// The key is a v4 key using the EdDSA algorithm id that GnuPG 2.2 and Helm's Go OpenPGP
/// library both read (RFC 9580's newer Ed25519 id is unknown to GnuPG 2.2). It is one
/// primary key allowed to certify and sign, like `gpg --quick-gen-key ... ed25519 sign`.
/// With a passphrase the secret key is protected with AES-256 and an iterated, salted
/// SHA-256 S2K, the protection GnuPG itself uses.
pub fn generate_key(
    name: &str,
    email: &str,
    passphrase: Option<&str>,
) -> Result<GeneratedKey, KeyError> {
    let user_id = user_id(name, email)?;
    let mut params = SecretKeyParamsBuilder::default();
    params
        .key_type(KeyType::Ed25519Legacy)
        .can_certify(true)
        .can_sign(true)
        .can_encrypt(EncryptionCaps::None)
        .primary_user_id(user_id.clone())
        .passphrase(passphrase.map(str::to_owned))
        .preferred_hash_algorithms(
            [
                HashAlgorithm::Sha512,
                HashAlgorithm::Sha384,
                HashAlgorithm::Sha256,
            ]
            .into_iter()
            .collect(),
        )
        .preferred_symmetric_algorithms(
            [
                SymmetricKeyAlgorithm::AES256,
                SymmetricKeyAlgorithm::AES192,
                SymmetricKeyAlgorithm::AES128,
            ]
            .into_iter()
            .collect(),
        )
        .preferred_compression_algorithms(
            [
                CompressionAlgorithm::ZLIB,
                CompressionAlgorithm::BZip2,
                CompressionAlgorithm::ZIP,
            ]
            .into_iter()
            .collect(),
        );
    let params = params
        .build()
        .map_err(|e| KeyError::Generate(e.to_string()))?;
    let secret = params
        .generate(rand::rngs::OsRng)
        .map_err(|e| KeyError::Generate(e.to_string()))?;
    let public = secret.to_public_key();
    let secret_text = secret
        .to_armored_string(ArmorOptions::default())
        .map_err(|e| KeyError::Generate(e.to_string()))?;
    let public_text = public
        .to_armored_string(ArmorOptions::default())
        .map_err(|e| KeyError::Generate(e.to_string()))?;
    let public_binary =
        pgp::ser::Serialize::to_bytes(&public).map_err(|e| KeyError::Generate(e.to_string()))?;
    Ok(GeneratedKey {
        secret: SecretKeyArmored(Zeroizing::new(secret_text)),
        public: PublicKeyArmored(public_text),
        public_binary,
        fingerprint: format!("{:X}", secret.fingerprint()),
        user_id,
    })
}

fn user_id(name: &str, email: &str) -> Result<String, KeyError> {
    let invalid = |field, value: &str, reason| KeyError::InvalidUserId {
        field,
        value: value.to_owned(),
        reason,
    };
    let name = name.trim();
    let email = email.trim();
    if name.is_empty() {
        return Err(invalid("name", name, "it is empty"));
    }
    if name.contains(['<', '>']) || name.chars().any(char::is_control) {
        return Err(invalid(
            "name",
            name,
            "it must not contain '<', '>' or control characters",
        ));
    }
    let well_formed = email
        .split_once('@')
        .is_some_and(|(local, domain)| !local.is_empty() && !domain.is_empty());
    if !well_formed
        || email.contains(['<', '>'])
        || email.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(invalid(
            "email",
            email,
            "it must look like user@example.com, without spaces or '<' '>'",
        ));
    }
    Ok(format!("{name} <{email}>"))
}

/// Writes an armored secret key to `path` readable by its owner only (mode 0600).
///
/// The key is written to a temporary file in the same directory, synced, and renamed over
/// `path`, so a crash never leaves a truncated key or a moment where the key is readable
/// by others.
pub fn write_secret_key_file(path: &Path, key: &SecretKeyArmored) -> Result<(), KeyError> {
    write_atomically(path, key.expose().as_bytes(), 0o600)
}

/// Writes an armored public key to `path` (mode 0644), atomically like
/// [`write_secret_key_file`].
pub fn write_public_key_file(path: &Path, key: &PublicKeyArmored) -> Result<(), KeyError> {
    write_atomically(path, key.as_str().as_bytes(), 0o644)
}

/// Writes a binary public keyring (as `gpg --export` does), readable by everyone.
pub fn write_public_keyring_file(path: &Path, keyring: &[u8]) -> Result<(), KeyError> {
    write_atomically(path, keyring, 0o644)
}

fn write_atomically(path: &Path, bytes: &[u8], mode: u32) -> Result<(), KeyError> {
    chartkit_durable::write_with(path, bytes, chartkit_durable::Options { mode: Some(mode) })
        .map_err(|e| KeyError::Io {
            action: "writing",
            path: e.path,
            source: e.source,
        })
}

/// The public-key algorithm of a key, named the way `gpg --list-keys` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Algorithm {
    /// Ed25519, in either its legacy EdDSA or its RFC 9580 encoding.
    Ed25519,
    /// Ed448 (RFC 9580).
    Ed448,
    /// RSA with a modulus of `bits` bits.
    Rsa {
        /// Modulus size, e.g. 3072.
        bits: usize,
    },
    /// DSA, found only in old keys.
    Dsa,
    /// ECDSA on a NIST or Brainpool curve.
    Ecdsa,
    /// Any other algorithm, by its OpenPGP algorithm id.
    Other(u8),
}

impl Algorithm {
    fn of(key: &impl KeyDetails) -> Self {
        match key.public_params() {
            PublicParams::EdDSALegacy(_) | PublicParams::Ed25519(_) => Algorithm::Ed25519,
            PublicParams::Ed448(_) => Algorithm::Ed448,
            PublicParams::RSA(p) => Algorithm::Rsa {
                bits: p.key.n().bits(),
            },
            PublicParams::DSA(_) => Algorithm::Dsa,
            PublicParams::ECDSA(_) => Algorithm::Ecdsa,
            _ => Algorithm::Other(u8::from(key.algorithm())),
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Algorithm::Ed25519 => f.write_str("ed25519"),
            Algorithm::Ed448 => f.write_str("ed448"),
            Algorithm::Rsa { bits } => write!(f, "rsa{bits}"),
            Algorithm::Dsa => f.write_str("dsa"),
            Algorithm::Ecdsa => f.write_str("ecdsa"),
            Algorithm::Other(id) => write!(f, "algorithm {id}"),
        }
    }
}

/// What the key's own self-signatures say about one component key (the primary or a
/// subkey). Only self-signatures that verify count, so a forged user id or capability
/// appended to an exported key has no effect.
#[derive(Debug, Clone)]
pub(crate) struct Component {
    pub fingerprint: String,
    pub key_id: String,
    /// Whether signatures by this component are acceptable at all: for subkeys this needs
    /// a valid binding with the signing flag and the subkey's own back-signature.
    pub can_sign: bool,
    pub revoked: bool,
    /// Unix time at which the component expires, if it does.
    pub expires: Option<u64>,
}

/// One OpenPGP key (certificate) from a keyring: the public key, and the secret key when
/// the keyring holds it.
pub struct Key {
    public: SignedPublicKey,
    secret: Option<SignedSecretKey>,
    user_ids: Vec<String>,
    primary: Component,
    subkeys: Vec<Component>,
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Deliberately not derived: the secret key packets must never be printed.
        f.debug_struct("Key")
            .field("fingerprint", &self.primary.fingerprint)
            .field("user_ids", &self.user_ids)
            .field("algorithm", &self.algorithm())
            .field("has_secret", &self.has_secret())
            .finish()
    }
}

impl Key {
    pub(crate) fn from_public(public: SignedPublicKey) -> Self {
        Self::new(public, None)
    }

    pub(crate) fn from_secret(secret: SignedSecretKey) -> Self {
        Self::new(secret.to_public_key(), Some(secret))
    }

    fn new(public: SignedPublicKey, secret: Option<SignedSecretKey>) -> Self {
        let primary_key = &public.primary_key;
        let mut user_ids = Vec::new();
        let mut primary_self_sig: Option<&Signature> = None;
        let mut primary_user_index = None;
        for user in &public.details.users {
            let revoked = user.signatures.iter().any(|sig| {
                sig.typ() == Some(SignatureType::CertRevocation)
                    && issued_by(sig, primary_key)
                    && sig
                        .verify_certification(primary_key, Tag::UserId, &user.id)
                        .is_ok()
            });
            if revoked {
                continue;
            }
            let newest = newest(user.signatures.iter().filter(|sig| {
                sig.is_certification()
                    && sig.typ() != Some(SignatureType::CertRevocation)
                    && issued_by(sig, primary_key)
                    && sig
                        .verify_certification(primary_key, Tag::UserId, &user.id)
                        .is_ok()
            }));
            let Some(sig) = newest else { continue };
            if primary_user_index.is_none() && sig.is_primary() {
                primary_user_index = Some(user_ids.len());
                primary_self_sig = Some(sig);
            }
            if primary_self_sig.is_none() {
                primary_self_sig = Some(sig);
            }
            user_ids.push(String::from_utf8_lossy(user.id.id()).into_owned());
        }
        if let Some(i) = primary_user_index {
            let uid = user_ids.remove(i);
            user_ids.insert(0, uid);
        }
        let direct =
            newest(
                public.details.direct_signatures.iter().filter(|sig| {
                    issued_by(sig, primary_key) && sig.verify_key(primary_key).is_ok()
                }),
            );
        let self_sig = primary_self_sig.or(direct);
        let revoked = public.details.revocation_signatures.iter().any(|sig| {
            sig.typ() == Some(SignatureType::KeyRevocation)
                && issued_by(sig, primary_key)
                && sig.verify_key(primary_key).is_ok()
        });
        let primary = Component {
            fingerprint: format!("{:X}", primary_key.fingerprint()),
            key_id: key_id_hex(primary_key),
            can_sign: self_sig.is_none_or(flags_allow_signing),
            revoked,
            expires: self_sig.and_then(|sig| expiry(primary_key, sig)),
        };

        let subkeys = public
            .public_subkeys
            .iter()
            .map(|sub| {
                let binding = newest(sub.signatures.iter().filter(|sig| {
                    sig.typ() == Some(SignatureType::SubkeyBinding)
                        && issued_by(sig, primary_key)
                        && sig.verify_subkey_binding(primary_key, &sub.key).is_ok()
                }));
                let revoked = sub.signatures.iter().any(|sig| {
                    sig.typ() == Some(SignatureType::SubkeyRevocation)
                        && issued_by(sig, primary_key)
                        && sig.verify_subkey_binding(primary_key, &sub.key).is_ok()
                });
                // A signing subkey must sign the primary back (RFC 9580 5.2.1), otherwise
                // anyone could attach someone else's signing key to their certificate.
                let can_sign = binding.is_some_and(|sig| {
                    sig.key_flags().sign()
                        && sig.embedded_signature().is_some_and(|back| {
                            back.verify_primary_key_binding(&sub.key, primary_key)
                                .is_ok()
                        })
                });
                Component {
                    fingerprint: format!("{:X}", sub.key.fingerprint()),
                    key_id: key_id_hex(&sub.key),
                    can_sign,
                    revoked: revoked || binding.is_none(),
                    expires: binding.and_then(|sig| expiry(&sub.key, sig)),
                }
            })
            .collect();

        Key {
            public,
            secret,
            user_ids,
            primary,
            subkeys,
        }
    }

    /// The primary user id (`Name <email>`), or an empty string for a key without one.
    pub fn user_id(&self) -> &str {
        self.user_ids.first().map_or("", String::as_str)
    }

    /// Every user id bound to the key by a valid self-signature, primary first.
    pub fn user_ids(&self) -> &[String] {
        &self.user_ids
    }

    /// The primary key's fingerprint, uppercase hex without spaces, as Helm prints it.
    pub fn fingerprint(&self) -> &str {
        &self.primary.fingerprint
    }

    /// The primary key's 16-hex-digit key id.
    pub fn key_id(&self) -> &str {
        &self.primary.key_id
    }

    /// The primary key's algorithm.
    pub fn algorithm(&self) -> Algorithm {
        Algorithm::of(&self.public.primary_key)
    }

    /// When the primary key was created, in seconds since the Unix epoch.
    pub fn created(&self) -> u64 {
        u64::from(self.public.primary_key.created_at().as_secs())
    }

    /// When the key expires, in seconds since the Unix epoch; `None` if it never does.
    pub fn expires(&self) -> Option<u64> {
        self.primary.expires
    }

    /// Whether the key's owner has revoked it.
    pub fn is_revoked(&self) -> bool {
        self.primary.revoked
    }

    /// Whether the keyring holds the secret key, so the key can sign.
    pub fn has_secret(&self) -> bool {
        self.secret.is_some()
    }

    /// The public key, ASCII-armored.
    pub fn public_key_armored(&self) -> Result<PublicKeyArmored, KeyError> {
        self.public
            .to_armored_string(ArmorOptions::default())
            .map(PublicKeyArmored)
            .map_err(|e| KeyError::Generate(e.to_string()))
    }

    pub(crate) fn public(&self) -> &SignedPublicKey {
        &self.public
    }

    pub(crate) fn secret(&self) -> Option<&SignedSecretKey> {
        self.secret.as_ref()
    }

    pub(crate) fn primary(&self) -> &Component {
        &self.primary
    }

    pub(crate) fn subkeys(&self) -> &[Component] {
        &self.subkeys
    }

    /// Whether `hex` (upper or lower case) is the fingerprint or key id of the primary key
    /// or of a subkey.
    pub(crate) fn matches_hex(&self, hex: &str) -> bool {
        std::iter::once(&self.primary)
            .chain(&self.subkeys)
            .any(|c| {
                c.fingerprint.eq_ignore_ascii_case(hex)
                    || c.key_id.eq_ignore_ascii_case(hex)
                    || (hex.len() == 8 && c.key_id[8..].eq_ignore_ascii_case(hex))
            })
    }
}

pub(crate) fn key_id_hex(key: &impl KeyDetails) -> String {
    hex::encode_upper(key.legacy_key_id())
}

/// Whether `sig` claims to be made by `key`. A signature that names no issuer at all is
/// tried against the key anyway; the cryptographic check decides.
pub(crate) fn issued_by(sig: &Signature, key: &impl KeyDetails) -> bool {
    let fingerprints = sig.issuer_fingerprint();
    let key_ids = sig.issuer_key_id();
    if fingerprints.is_empty() && key_ids.is_empty() {
        return true;
    }
    let fingerprint = key.fingerprint();
    let key_id = key.legacy_key_id();
    fingerprints.iter().any(|f| **f == fingerprint) || key_ids.iter().any(|k| **k == key_id)
}

fn newest<'a>(sigs: impl Iterator<Item = &'a Signature>) -> Option<&'a Signature> {
    sigs.max_by_key(|sig| sig.created().map_or(0, |t| t.as_secs()))
}

/// Key flags restrict usage only when the self-signature carries them; a key without the
/// subpacket may be used for anything, as in GnuPG and Go's OpenPGP library.
fn flags_allow_signing(sig: &Signature) -> bool {
    let has_flags = sig.config().is_some_and(|config| {
        config
            .hashed_subpackets()
            .any(|p| matches!(p.data, SubpacketData::KeyFlags(_)))
    });
    !has_flags || sig.key_flags().sign()
}

fn expiry(key: &impl KeyDetails, sig: &Signature) -> Option<u64> {
    let secs = sig.key_expiration_time()?.as_secs();
    (secs != 0).then(|| u64::from(key.created_at().as_secs()) + u64::from(secs))
}

pub(crate) fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Formats a Unix time as a UTC calendar date, `YYYY-MM-DD`, the way GnuPG lists key
/// creation and expiry dates.
pub fn format_date(unix: u64) -> String {
    // Days-to-civil conversion from Howard Hinnant's public-domain date algorithms.
    let days = (unix / 86_400) as i64 + 719_468;
    let era = days.div_euclid(146_097);
    let doe = days.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_format_as_utc_calendar_days() {
        assert_eq!(format_date(0), "1970-01-01");
        assert_eq!(format_date(951_782_400), "2000-02-29");
        assert_eq!(format_date(1_767_225_599), "2025-12-31");
    }

    #[test]
    fn user_ids_are_validated() {
        assert_eq!(
            user_id(" Jane Doe ", "jane@example.com").unwrap(),
            "Jane Doe <jane@example.com>"
        );
        assert!(matches!(
            user_id("", "jane@example.com"),
            Err(KeyError::InvalidUserId { field: "name", .. })
        ));
        assert!(matches!(
            user_id("Jane <x>", "jane@example.com"),
            Err(KeyError::InvalidUserId { field: "name", .. })
        ));
        for email in [
            "jane",
            "@example.com",
            "jane@",
            "ja ne@example.com",
            "<j@e.com>",
        ] {
            assert!(
                matches!(
                    user_id("Jane", email),
                    Err(KeyError::InvalidUserId { field: "email", .. })
                ),
                "{email}"
            );
        }
    }
}
