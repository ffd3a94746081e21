//! OpenPGP keys and Helm provenance (`.prov`) files.
//!
//! Helm signs a chart package by writing `NAME-VERSION.tgz.prov` beside it: a PGP
//! clearsigned message whose text is the chart's metadata YAML, a `...` line, and a
//! `files:` map from the package file name to its SHA-256 digest. This crate writes and
//! verifies those files byte-compatibly with `helm package --sign` and `helm verify`, and
//! manages the keys involved, using the `pgp` crate (rPGP) for all cryptography.
//!
//! - Keys: [`generate_key`] makes Ed25519 keys; [`Keyring::from_bytes`] reads GnuPG exports
//!   (binary or armored, public or secret, Ed25519 or RSA, many keys per file);
//!   [`Keyring::find`] selects a key by name, email or fingerprint.
//! - Signing: [`sign_chart`] returns the `.prov` text.
//! - Verifying: [`verify`] checks a package against its `.prov`, returning the signer and
//!   digest `helm verify` prints, or a [`VerifyError`] saying what failed.
//!
//! Nothing here touches the file system except the explicitly file-based helpers
//! ([`write_secret_key_file`], [`write_public_key_file`], [`verify_package_file`]).

mod error;
mod key;
mod keyring;
mod provenance;

pub use error::{KeyError, VerifyError};
pub use key::{
    Algorithm, GeneratedKey, Key, PublicKeyArmored, SecretKeyArmored, format_date, generate_key,
    write_public_key_file, write_public_keyring_file, write_secret_key_file,
};
pub use keyring::Keyring;
pub use provenance::{
    Provenance, Sha256Digest, Verification, check_signing_key, provenance_body,
    provenance_file_name, sign_chart, sign_chart_digest, verify, verify_digest,
    verify_package_file,
};
