use std::path::PathBuf;

/// Errors from creating, reading, selecting, unlocking and storing keys, and from signing.
///
/// No variant carries key material: secret keys are referred to by fingerprint only, and
/// messages from the OpenPGP library are about packet structure, never key bytes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The name or email given for a new key cannot form an OpenPGP user id
    /// `Name <email>`.
    #[error("invalid {field} {value:?} for a new key: {reason}")]
    InvalidUserId {
        /// `name` or `email`.
        field: &'static str,
        /// The value as given.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },

    /// The OpenPGP library failed to generate or serialize a new key.
    #[error("could not generate a key: {0}")]
    Generate(String),

    /// The keyring data is not an OpenPGP keyring that can be read.
    #[error("could not read keyring: {reason}")]
    Parse {
        /// What could not be read, in terms of the file's format.
        reason: String,
    },

    /// The keyring holds no keys at all.
    #[error(
        "the keyring contains no OpenPGP keys; export keys with `gpg --export` (public) or `gpg --export-secret-keys` (secret)"
    )]
    NoKeys,

    /// No key in the keyring matches the name, email or fingerprint asked for.
    #[error(
        "no key in the keyring matches {query:?}; pass a name, email or fingerprint of a key in it"
    )]
    NotFound {
        /// The name, email, key id or fingerprint that was looked up.
        query: String,
    },

    /// More than one key matches; the caller must be more specific.
    #[error("{query:?} matches more than one key ({}); pass the full fingerprint instead", candidates.join(", "))]
    Ambiguous {
        /// The lookup that matched several keys.
        query: String,
        /// `FINGERPRINT (user id)` of each matching key.
        candidates: Vec<String>,
    },

    /// Signing needs a secret key but the keyring holds only the public part.
    #[error(
        "the keyring has only the public part of key {fingerprint}; signing needs the secret key (export it with `gpg --export-secret-keys`)"
    )]
    NoSecretKey {
        /// Fingerprint of the public key that was found.
        fingerprint: String,
    },

    /// The key cannot make signatures now: it was revoked or has expired, or neither the
    /// primary key nor any secret subkey is allowed to sign.
    #[error("key {fingerprint} cannot sign: {reason}; use another key")]
    CannotSign {
        /// Fingerprint of the primary key.
        fingerprint: String,
        /// Why (`it has been revoked by its owner`, `it expired on 2025-01-01`, ...).
        reason: String,
    },

    /// The secret key is protected by a passphrase and none was given.
    #[error("secret key {fingerprint} is protected by a passphrase; supply the passphrase")]
    PassphraseRequired {
        /// Fingerprint of the protected key.
        fingerprint: String,
    },

    /// The passphrase given does not unlock the secret key.
    #[error("wrong passphrase for secret key {fingerprint}")]
    WrongPassphrase {
        /// Fingerprint of the key that could not be unlocked.
        fingerprint: String,
    },

    /// The OpenPGP library failed while making a signature with an unlocked key.
    #[error("signing with key {fingerprint} failed: {reason}")]
    Sign {
        /// Fingerprint of the signing key.
        fingerprint: String,
        /// The library's description of the failure.
        reason: String,
    },

    /// Reading or writing a key file failed.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was being done (`writing`, `reading`, ...).
        action: &'static str,
        /// The file concerned.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
}

/// Why a chart package failed provenance verification.
///
/// The variants follow the order Helm checks things in: the `.prov` must exist and parse,
/// its signature must come from a key in the keyring and be valid, and only then is the
/// package's digest compared with the one the signature covers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The package has no `.prov` file beside it.
    #[error(
        "no provenance file {}; the chart was not signed, or its .prov was not downloaded with it (`helm pull --prov`)",
        path.display()
    )]
    MissingProvenance {
        /// Where the `.prov` file was expected.
        path: PathBuf,
    },

    /// The `.prov` text is not a clearsigned Helm provenance document.
    #[error("malformed provenance file: {reason}")]
    MalformedProvenance {
        /// Which part is malformed and how.
        reason: String,
    },

    /// The signature was made by a key that is not in the keyring.
    #[error(
        "the provenance was signed by key {key_id}{}, which is not in the keyring; add the signer's public key to the keyring (`gpg --export KEY > keyring.gpg`)",
        fingerprint.as_ref().map(|f| format!(" (fingerprint {f})")).unwrap_or_default()
    )]
    UnknownSigner {
        /// 16-hex-digit id of the key that made the signature.
        key_id: String,
        /// Full fingerprint of that key, when the signature names it.
        fingerprint: Option<String>,
    },

    /// The signing key is in the keyring but the signature does not match the signed text:
    /// the `.prov` was altered after signing, or the signature is corrupt.
    #[error(
        "bad signature: the provenance text does not match the signature made by key {fingerprint} ({signer}); the .prov was modified after signing or is corrupt ({reason})"
    )]
    BadSignature {
        /// Fingerprint of the primary key of the signer.
        fingerprint: String,
        /// The signer's primary user id.
        signer: String,
        /// The library's description of the failure.
        reason: String,
    },

    /// The signer's key was revoked by its owner, or has expired, or is not allowed to sign.
    #[error("the signing key {fingerprint} ({signer}) {problem}; a signature by it is not trusted")]
    SignerNotValid {
        /// Fingerprint of the primary key of the signer.
        fingerprint: String,
        /// The signer's primary user id.
        signer: String,
        /// What is wrong with the key (`has been revoked`, `expired on ...`).
        problem: String,
    },

    /// The package's SHA-256 digest differs from the one in the signed provenance: the
    /// package was modified after signing, or belongs to another signature.
    #[error(
        "sha256 digest of {file_name} does not match the provenance: the .prov lists {expected}, the package is {actual}; the package was modified or the .prov belongs to another package"
    )]
    DigestMismatch {
        /// The package file name.
        file_name: String,
        /// The digest the `.prov` lists, as written there (`sha256:<hex>`).
        expected: String,
        /// The package's actual digest, `sha256:<hex>`.
        actual: String,
    },

    /// The `.prov` lists digests for other files but not for this package's name.
    #[error(
        "the provenance has no digest for a file named {file_name:?} (it lists: {}); the package was renamed or the .prov belongs to another package",
        if listed.is_empty() { "nothing".to_string() } else { listed.join(", ") }
    )]
    FileNotListed {
        /// The package file name that was looked for.
        file_name: String,
        /// The file names the `.prov` does list.
        listed: Vec<String>,
    },

    /// Reading the package or its `.prov` failed.
    #[error("reading {}: {source}", path.display())]
    Io {
        /// The file that could not be read.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
}
