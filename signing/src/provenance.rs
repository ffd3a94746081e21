use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use chartkit_yaml::{Map, Value};
use pgp::composed::{ArmorOptions, CleartextSignedMessage};
use pgp::crypto::hash::HashAlgorithm;
use pgp::packet::{Signature, SignatureConfig, SignatureType, Subpacket, SubpacketData};
use pgp::types::{KeyDetails, KeyVersion, Password, SecretParams, SigningKey, Timestamp};
use sha2::{Digest as _, Sha256};

use crate::error::{KeyError, VerifyError};
use crate::key::{Component, Key, format_date, issued_by, now_unix};
use crate::keyring::Keyring;

/// The SHA-256 digest of a chart package, as a `.prov` file records it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sha256Digest([u8; 32]);

impl Sha256Digest {
    /// Digest of bytes held in memory.
    pub fn of(bytes: &[u8]) -> Self {
        Self(Sha256::digest(bytes).into())
    }

    /// Digest of everything `reader` yields, for packages too large to hold in memory.
    pub fn from_reader(mut reader: impl Read) -> std::io::Result<Self> {
        let mut hasher = Sha256::new();
        std::io::copy(&mut reader, &mut hasher)?;
        Ok(Self(hasher.finalize().into()))
    }

    /// Lowercase hex, as Helm writes it after `sha256:`.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// Parses 64 hex digits; `None` for anything else.
    pub fn from_hex(text: &str) -> Option<Self> {
        let bytes = hex::decode(text).ok()?;
        Some(Sha256Digest(bytes.try_into().ok()?))
    }
}

impl fmt::Display for Sha256Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Sha256Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sha256Digest({})", self.to_hex())
    }
}

/// The name Helm gives a package's provenance file: the package file name plus `.prov`.
pub fn provenance_file_name(package_file_name: &str) -> String {
    format!("{package_file_name}.prov")
}

/// The text Helm signs: the chart metadata YAML, a `...` line (YAML's document end marker;
/// a `---` line would read as an armor boundary inside a clearsigned message), then a YAML
/// map `files:` from the package file name to `sha256:<hex>`.
///
/// `metadata_yaml` is Helm's `yaml.Marshal` of the chart metadata. `helm show chart`
/// prints that text followed by one extra newline; trailing newlines are normalized to
/// one, so either form gives Helm's exact body.
pub fn provenance_body(
    metadata_yaml: &str,
    package_file_name: &str,
    digest: &Sha256Digest,
) -> String {
    let metadata_yaml = metadata_yaml.trim_end_matches('\n');
    let mut files = Map::new();
    files.insert(
        package_file_name.to_owned(),
        Value::String(format!("sha256:{digest}")),
    );
    let mut sums = Map::new();
    sums.insert("files".to_owned(), Value::Map(files));
    format!(
        "{metadata_yaml}\n\n...\n{}",
        chartkit_yaml::to_yaml(&Value::Map(sums))
    )
}

/// Signs a chart package: returns the `.prov` text Helm's `helm package --sign` writes,
/// a clearsigned message with a SHA-512 text signature.
///
/// `package_file_name` is the package's base name (`mychart-0.1.0.tgz`); `key` must hold
/// a secret key that may sign, unlocked with `passphrase` when it is protected.
pub fn sign_chart(
    metadata_yaml: &str,
    package_file_name: &str,
    package_bytes: &[u8],
    key: &Key,
    passphrase: Option<&str>,
) -> Result<String, KeyError> {
    sign_chart_digest(
        metadata_yaml,
        package_file_name,
        &Sha256Digest::of(package_bytes),
        key,
        passphrase,
    )
}

/// [`sign_chart`] for a package whose digest was computed already.
pub fn sign_chart_digest(
    metadata_yaml: &str,
    package_file_name: &str,
    digest: &Sha256Digest,
    key: &Key,
    passphrase: Option<&str>,
) -> Result<String, KeyError> {
    let body = provenance_body(metadata_yaml, package_file_name, digest);
    let password = Password::from(passphrase.unwrap_or_default());
    match signing_key(key, passphrase, &password)? {
        SigningPart::Primary(k) => clearsign(&body, k, &password, key.fingerprint()),
        SigningPart::Subkey(k, fingerprint) => clearsign(&body, k, &password, &fingerprint),
    }
}

/// Checks that `key` can sign now with `passphrase` — it holds a usable secret key and
/// the passphrase unlocks it — without signing anything, so a command can fail before
/// doing other work. Returns the same errors [`sign_chart`] would.
pub fn check_signing_key(key: &Key, passphrase: Option<&str>) -> Result<(), KeyError> {
    let password = Password::from(passphrase.unwrap_or_default());
    signing_key(key, passphrase, &password).map(|_| ())
}

enum SigningPart<'k> {
    Primary(&'k pgp::packet::SecretKey),
    Subkey(&'k pgp::packet::SecretSubkey, String),
}

/// Picks the secret key that signs: the primary when it may sign, otherwise a signing
/// subkey whose secret part is present; and checks that the passphrase unlocks it.
fn signing_key<'k>(
    key: &'k Key,
    passphrase: Option<&str>,
    password: &Password,
) -> Result<SigningPart<'k>, KeyError> {
    let secret = key.secret().ok_or_else(|| KeyError::NoSecretKey {
        fingerprint: key.fingerprint().to_owned(),
    })?;
    let primary = key.primary();
    let usable = |c: &Component| c.can_sign && !c.revoked && !expired(c);
    if usable(primary) {
        let k = &secret.primary_key;
        check_unlock(k.secret_params(), passphrase, &primary.fingerprint, || {
            k.unlock(password, |_, _| Ok(())).is_ok()
        })?;
        return Ok(SigningPart::Primary(k));
    }
    for sub in &secret.secret_subkeys {
        let fingerprint = format!("{:X}", sub.key.fingerprint());
        let Some(component) = key.subkeys().iter().find(|c| c.fingerprint == fingerprint) else {
            continue;
        };
        if !usable(component) {
            continue;
        }
        let k = &sub.key;
        check_unlock(k.secret_params(), passphrase, &fingerprint, || {
            k.unlock(password, |_, _| Ok(())).is_ok()
        })?;
        return Ok(SigningPart::Subkey(k, fingerprint));
    }
    let reason = if key.is_revoked() {
        "it has been revoked by its owner".to_owned()
    } else if let Some(t) = key.expires().filter(|&t| t <= now_unix()) {
        format!("it expired on {}", format_date(t))
    } else {
        "neither its primary key nor a secret subkey in the keyring may sign (self-signature key flags, revoked or expired subkeys)".to_owned()
    };
    Err(KeyError::CannotSign {
        fingerprint: key.fingerprint().to_owned(),
        reason,
    })
}

/// Fails early, with a typed error, when the key is locked and the passphrase is missing
/// or wrong, rather than letting signing fail with a generic library error.
fn check_unlock(
    params: &SecretParams,
    passphrase: Option<&str>,
    fingerprint: &str,
    unlocks: impl FnOnce() -> bool,
) -> Result<(), KeyError> {
    if !matches!(params, SecretParams::Encrypted(_)) {
        return Ok(());
    }
    if passphrase.is_none() {
        return Err(KeyError::PassphraseRequired {
            fingerprint: fingerprint.to_owned(),
        });
    }
    if !unlocks() {
        return Err(KeyError::WrongPassphrase {
            fingerprint: fingerprint.to_owned(),
        });
    }
    Ok(())
}

fn clearsign(
    body: &str,
    key: &impl SigningKey,
    password: &Password,
    fingerprint: &str,
) -> Result<String, KeyError> {
    let fail = |e: pgp::errors::Error| KeyError::Sign {
        fingerprint: fingerprint.to_owned(),
        reason: e.to_string(),
    };
    let mut config = if key.version() == KeyVersion::V4 {
        // Helm signs with SHA-512 (its default hash), whatever the key prefers.
        SignatureConfig::v4(SignatureType::Text, key.algorithm(), HashAlgorithm::Sha512)
    } else {
        SignatureConfig::from_key(rand::rngs::OsRng, key, SignatureType::Text).map_err(fail)?
    };
    config.hashed_subpackets = vec![
        Subpacket::regular(SubpacketData::SignatureCreationTime(Timestamp::now())).map_err(fail)?,
        Subpacket::regular(SubpacketData::IssuerFingerprint(key.fingerprint())).map_err(fail)?,
    ];
    if key.version() == KeyVersion::V4 {
        config.unhashed_subpackets = vec![
            Subpacket::regular(SubpacketData::IssuerKeyId(key.legacy_key_id())).map_err(fail)?,
        ];
    }
    let message = CleartextSignedMessage::new(body, config, key, password).map_err(fail)?;
    let mut text = message
        .to_armored_string(ArmorOptions {
            headers: None,
            // Helm's Go OpenPGP library writes no CRC-24 line; RFC 9580 deprecates it.
            include_checksum: false,
        })
        .map_err(fail)?;
    // Helm's .prov files end right after the armor footer, with no newline.
    if text.ends_with('\n') {
        text.pop();
    }
    Ok(text)
}

/// A parsed `.prov` file. Parsing does not verify the signature; use [`verify`] for that.
#[derive(Debug, Clone)]
pub struct Provenance {
    message: CleartextSignedMessage,
    metadata_yaml: String,
    files: BTreeMap<String, String>,
}

impl Provenance {
    /// Parses a `.prov` file's text: the clearsign framing, the signature packets, and the
    /// signed body (metadata, `...`, `files:`).
    pub fn parse(prov_text: &str) -> Result<Self, VerifyError> {
        let message = parse_clearsigned(prov_text)?;
        let (metadata_yaml, files) = parse_body(&message)?;
        Ok(Provenance {
            message,
            metadata_yaml,
            files,
        })
    }

    /// The chart metadata YAML from the signed text (before the `...` line).
    pub fn metadata_yaml(&self) -> &str {
        &self.metadata_yaml
    }

    /// Package file names and their digests as written (`sha256:<hex>`).
    pub fn files(&self) -> &BTreeMap<String, String> {
        &self.files
    }

    /// Key ids (16 hex digits) of the keys that made the signatures.
    pub fn signer_key_ids(&self) -> Vec<String> {
        self.message
            .signatures()
            .iter()
            .map(|sig| issuer_key_id(sig).unwrap_or_default())
            .collect()
    }
}

/// The outcome of a successful verification: what `helm verify` prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    /// The signer's primary user id (`Name <email>`).
    pub signer: String,
    /// All user ids of the signing key, primary first.
    pub user_ids: Vec<String>,
    /// Fingerprint of the signer's primary key, uppercase hex.
    pub fingerprint: String,
    /// Fingerprint of the key that made the signature: the primary or a signing subkey.
    pub signing_key_fingerprint: String,
    /// The package file name the digest was checked for.
    pub file_name: String,
    /// The package's verified SHA-256 digest, lowercase hex.
    pub sha256: String,
}

impl Verification {
    /// The digest as Helm prints it, `sha256:<hex>`.
    pub fn file_hash(&self) -> String {
        format!("sha256:{}", self.sha256)
    }
}

impl fmt::Display for Verification {
    /// The lines `helm verify` prints on success.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for user_id in &self.user_ids {
            writeln!(f, "Signed by: {user_id}")?;
        }
        writeln!(f, "Using Key With Fingerprint: {}", self.fingerprint)?;
        writeln!(f, "Chart Hash Verified: {}", self.file_hash())
    }
}

/// Verifies a chart package against its `.prov` text and a keyring of trusted keys, the
/// way `helm verify` does: the signature must be valid and made by a key in `keyring`,
/// and the `.prov` must list `package_file_name` (the package's base name) with the
/// package's SHA-256 digest.
pub fn verify(
    prov_text: &str,
    package_bytes: &[u8],
    package_file_name: &str,
    keyring: &Keyring,
) -> Result<Verification, VerifyError> {
    verify_digest(
        prov_text,
        &Sha256Digest::of(package_bytes),
        package_file_name,
        keyring,
    )
}

/// [`verify`] for a package whose digest was computed already.
pub fn verify_digest(
    prov_text: &str,
    digest: &Sha256Digest,
    package_file_name: &str,
    keyring: &Keyring,
) -> Result<Verification, VerifyError> {
    let message = parse_clearsigned(prov_text)?;
    let (key, component) = check_signature(&message, keyring)?;
    let (_, files) = parse_body(&message)?;
    let actual = format!("sha256:{digest}");
    let Some(expected) = files.get(package_file_name) else {
        return Err(VerifyError::FileNotListed {
            file_name: package_file_name.to_owned(),
            listed: files.into_keys().collect(),
        });
    };
    if *expected != actual {
        return Err(VerifyError::DigestMismatch {
            file_name: package_file_name.to_owned(),
            expected: expected.clone(),
            actual,
        });
    }
    Ok(Verification {
        signer: key.user_id().to_owned(),
        user_ids: key.user_ids().to_vec(),
        fingerprint: key.fingerprint().to_owned(),
        signing_key_fingerprint: component.fingerprint.clone(),
        file_name: package_file_name.to_owned(),
        sha256: digest.to_hex(),
    })
}

/// Verifies the package at `package_path` against `<package_path>.prov`, reading both
/// files; the file name checked in the `.prov` is the package's base name.
pub fn verify_package_file(
    package_path: &Path,
    keyring: &Keyring,
) -> Result<Verification, VerifyError> {
    let mut prov_path = package_path.as_os_str().to_owned();
    prov_path.push(".prov");
    let prov_path = PathBuf::from(prov_path);
    let prov_text = match std::fs::read(&prov_path) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| VerifyError::MalformedProvenance {
            reason: format!("{} is not UTF-8 text", prov_path.display()),
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(VerifyError::MissingProvenance { path: prov_path });
        }
        Err(source) => {
            return Err(VerifyError::Io {
                path: prov_path,
                source,
            });
        }
    };
    let file = std::fs::File::open(package_path).map_err(|source| VerifyError::Io {
        path: package_path.to_path_buf(),
        source,
    })?;
    let digest = Sha256Digest::from_reader(std::io::BufReader::new(file)).map_err(|source| {
        VerifyError::Io {
            path: package_path.to_path_buf(),
            source,
        }
    })?;
    let file_name = package_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    verify_digest(&prov_text, &digest, &file_name, keyring)
}

const SIGNED_MESSAGE_BEGIN: &str = "-----BEGIN PGP SIGNED MESSAGE-----";
const SIGNATURE_BEGIN: &str = "-----BEGIN PGP SIGNATURE-----";
const SIGNATURE_END: &str = "-----END PGP SIGNATURE-----";

fn malformed(reason: impl Into<String>) -> VerifyError {
    VerifyError::MalformedProvenance {
        reason: reason.into(),
    }
}

fn parse_clearsigned(prov_text: &str) -> Result<CleartextSignedMessage, VerifyError> {
    // Like Go's clearsign decoder, accept text before the header line.
    let start = if prov_text.starts_with(SIGNED_MESSAGE_BEGIN) {
        0
    } else {
        prov_text
            .find(&format!("\n{SIGNED_MESSAGE_BEGIN}"))
            .map(|i| i + 1)
            .ok_or_else(|| {
                malformed(format!(
                    "no `{SIGNED_MESSAGE_BEGIN}` line; a .prov file is a PGP clearsigned message"
                ))
            })?
    };
    let text = &prov_text[start..];
    let Some(sig_start) = text.find(&format!("\n{SIGNATURE_BEGIN}")) else {
        return Err(malformed(format!(
            "the signed message has no `{SIGNATURE_BEGIN}` block"
        )));
    };
    if !text[sig_start..].contains(SIGNATURE_END) {
        return Err(malformed(format!(
            "the signature block is not closed by a `{SIGNATURE_END}` line"
        )));
    }
    let (message, _headers) = CleartextSignedMessage::from_string(text)
        .map_err(|e| malformed(format!("cannot decode the clearsigned message: {e}")))?;
    if message.signatures().is_empty() {
        return Err(malformed("the signature block holds no signature"));
    }
    Ok(message)
}

fn parse_body(
    message: &CleartextSignedMessage,
) -> Result<(String, BTreeMap<String, String>), VerifyError> {
    let plaintext = message.signed_text().replace("\r\n", "\n");
    let Some((metadata, rest)) = plaintext.split_once("\n...\n") else {
        return Err(malformed(
            "the signed text has no `...` line separating the chart metadata from the `files:` digests",
        ));
    };
    // Helm reads only the part between the first and a possible second `...` line.
    let sums = rest.split("\n...\n").next().unwrap_or_default();
    let value = chartkit_yaml::parse_node(sums)
        .and_then(|node| node.to_value())
        .map_err(|e| malformed(format!("the `files:` section is not valid YAML: {e}")))?;
    let mut files = BTreeMap::new();
    let listed = match &value {
        Value::Map(map) => map.get("files"),
        Value::Null => None,
        other => {
            return Err(malformed(format!(
                "the section after `...` must be a map with `files:`, found {}",
                other.kind_name()
            )));
        }
    };
    match listed {
        None | Some(Value::Null) => {}
        Some(Value::Map(map)) => {
            for (name, digest) in map {
                let Value::String(digest) = digest else {
                    return Err(malformed(format!(
                        "the digest for {name:?} under `files:` must be a string like sha256:<hex>, found {}",
                        digest.kind_name()
                    )));
                };
                files.insert(name.clone(), digest.clone());
            }
        }
        Some(other) => {
            return Err(malformed(format!(
                "`files:` must map file names to digests, found {}",
                other.kind_name()
            )));
        }
    }
    Ok((metadata.to_owned(), files))
}

fn issuer_key_id(sig: &Signature) -> Option<String> {
    if let Some(id) = sig.issuer_key_id().first() {
        return Some(hex::encode_upper(id));
    }
    sig.issuer_fingerprint().first().map(|fp| {
        let hex = format!("{fp:X}");
        // A v4 key id is the fingerprint's last 16 hex digits; a v6 one its first 16.
        if fp.version() == Some(KeyVersion::V6) {
            hex[..16].to_owned()
        } else {
            hex[hex.len().saturating_sub(16)..].to_owned()
        }
    })
}

/// Finds the key that made one of the message's signatures and checks the signature and
/// the key's validity, reporting the most specific failure.
fn check_signature<'k>(
    message: &CleartextSignedMessage,
    keyring: &'k Keyring,
) -> Result<(&'k Key, &'k Component), VerifyError> {
    let signed_text = message.signed_text();
    let mut failure = None;
    for sig in message.signatures() {
        let mut known = false;
        for key in keyring.keys() {
            let public = key.public();
            let components = std::iter::once((key.primary(), &public.primary_key as &dyn Verifier))
                .chain(
                    key.subkeys()
                        .iter()
                        .zip(&public.public_subkeys)
                        .map(|(c, s)| (c, &s.key as &dyn Verifier)),
                );
            for (component, verifier) in components {
                if !verifier.issued(sig) {
                    continue;
                }
                known = true;
                match verifier.verify(sig, signed_text.as_bytes()) {
                    Ok(()) => return validate(key, component, sig),
                    Err(e) => {
                        failure.get_or_insert(VerifyError::BadSignature {
                            fingerprint: key.fingerprint().to_owned(),
                            signer: key.user_id().to_owned(),
                            reason: e.to_string(),
                        });
                    }
                }
            }
        }
        if !known && failure.is_none() {
            failure = Some(VerifyError::UnknownSigner {
                key_id: issuer_key_id(sig).unwrap_or_else(|| "(not named)".to_owned()),
                fingerprint: sig.issuer_fingerprint().first().map(|f| format!("{f:X}")),
            });
        }
    }
    Err(failure.unwrap_or_else(|| malformed("the signature block holds no signature")))
}

/// Object-safe view of the primary key and subkey packet types, so both can be tried in
/// one loop.
trait Verifier {
    fn issued(&self, sig: &Signature) -> bool;
    fn verify(&self, sig: &Signature, text: &[u8]) -> pgp::errors::Result<()>;
}

impl<K: pgp::types::VerifyingKey> Verifier for K {
    fn issued(&self, sig: &Signature) -> bool {
        issued_by(sig, self)
    }
    fn verify(&self, sig: &Signature, text: &[u8]) -> pgp::errors::Result<()> {
        sig.verify(self, text)
    }
}

fn expired(component: &Component) -> bool {
    component.expires.is_some_and(|t| t <= now_unix())
}

/// Rejects signatures from keys their owner revoked or that expired, and expired
/// signatures, as Helm's OpenPGP library does.
fn validate<'k>(
    key: &'k Key,
    component: &'k Component,
    sig: &Signature,
) -> Result<(&'k Key, &'k Component), VerifyError> {
    let is_subkey = component.fingerprint != key.fingerprint();
    let subkey_note = |what: &str| {
        if is_subkey {
            format!("{what} (signing subkey {})", component.fingerprint)
        } else {
            what.to_owned()
        }
    };
    let problem = if key.is_revoked() {
        Some("has been revoked by its owner".to_owned())
    } else if component.revoked {
        Some(subkey_note("has been revoked by its owner"))
    } else if !component.can_sign {
        Some(subkey_note("is not allowed to make signatures"))
    } else if let Some(t) = key.expires().filter(|&t| t <= now_unix()) {
        Some(format!("expired on {}", format_date(t)))
    } else if let Some(t) = component.expires.filter(|&t| t <= now_unix()) {
        Some(subkey_note(&format!("expired on {}", format_date(t))))
    } else {
        signature_expiry(sig)
            .filter(|&t| t <= now_unix())
            .map(|t| format!("made this signature, which expired on {}", format_date(t)))
    };
    match problem {
        Some(problem) => Err(VerifyError::SignerNotValid {
            fingerprint: key.fingerprint().to_owned(),
            signer: key.user_id().to_owned(),
            problem,
        }),
        None => Ok((key, component)),
    }
}

fn signature_expiry(sig: &Signature) -> Option<u64> {
    let secs = sig.signature_expiration_time()?.as_secs();
    let created = sig.created()?.as_secs();
    (secs != 0).then(|| u64::from(created) + u64::from(secs))
}
