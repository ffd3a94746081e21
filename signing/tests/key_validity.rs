//! Keys whose state matters for signing and verifying: signing subkeys, revoked keys and
//! expired keys, made with GnuPG and checked against `helm verify`.

mod common;

use chartkit_signing::{
    KeyError, Keyring, VerifyError, provenance_body, provenance_file_name, sign_chart,
    verify_package_file,
};
use common::{Gpg, helm_chart, helm_verify, run};

#[test]
fn gnupg_key_with_signing_subkey_signs_with_the_subkey_and_helm_verifies() {
    let (helm, gpg) = require!(helm, gpg);
    let chart = helm_chart(&helm);
    let gnupg = Gpg::new(gpg);
    // A certify-only primary key with a separate signing subkey, a common GnuPG setup.
    run(gnupg.cmd().args([
        "--passphrase",
        "",
        "--quick-gen-key",
        "Sub Signer <sub@example.com>",
        "ed25519",
        "cert",
        "never",
    ]));
    let primary = gnupg.fingerprint("sub@example.com");
    run(gnupg.cmd().args([
        "--passphrase",
        "",
        "--quick-add-key",
        &primary,
        "ed25519",
        "sign",
        "never",
    ]));

    let ring = Keyring::from_bytes(&gnupg.export_secret("")).unwrap();
    let key = ring.find("Sub Signer").unwrap();
    let package = std::fs::read(&chart.package).unwrap();
    let prov = sign_chart(&chart.metadata_yaml, &chart.file_name, &package, key, None).unwrap();
    std::fs::write(
        chart
            .package
            .with_file_name(provenance_file_name(&chart.file_name)),
        &prov,
    )
    .unwrap();

    let keyring = chart.dir.path().join("pubring.gpg");
    std::fs::write(&keyring, gnupg.export(false)).unwrap();
    let (ok, output) = helm_verify(&helm, &keyring, &chart.package);
    assert!(ok, "{output}");
    let ring = Keyring::from_bytes(&std::fs::read(&keyring).unwrap()).unwrap();
    let verification = verify_package_file(&chart.package, &ring).unwrap();
    assert_eq!(verification.fingerprint, primary);
    assert_ne!(verification.signing_key_fingerprint, primary);
    assert_eq!(verification.to_string(), output);
}

#[test]
fn revoked_gnupg_key_fails_verify_as_signer_not_valid() {
    let (helm, gpg) = require!(helm, gpg);
    let chart = helm_chart(&helm);
    let gnupg = Gpg::new(gpg);
    let fingerprint = gnupg.generate("Revoked <revoked@example.com>", "ed25519", "");
    let ring = Keyring::from_bytes(&gnupg.export_secret("")).unwrap();
    let package = std::fs::read(&chart.package).unwrap();
    let prov = sign_chart(
        &chart.metadata_yaml,
        &chart.file_name,
        &package,
        &ring.keys()[0],
        None,
    )
    .unwrap();
    std::fs::write(
        chart
            .package
            .with_file_name(provenance_file_name(&chart.file_name)),
        &prov,
    )
    .unwrap();

    // GnuPG stores a ready revocation certificate with its armor lines escaped by ':'.
    let rev = gnupg
        .home
        .path()
        .join(format!("openpgp-revocs.d/{fingerprint}.rev"));
    let rev = std::fs::read_to_string(rev)
        .unwrap()
        .replace(":-----", "-----");
    gnupg.import(rev.as_bytes());
    let keyring = chart.dir.path().join("pubring.gpg");
    std::fs::write(&keyring, gnupg.export(false)).unwrap();

    let ring = Keyring::from_bytes(&std::fs::read(&keyring).unwrap()).unwrap();
    assert!(ring.keys()[0].is_revoked());
    let err = verify_package_file(&chart.package, &ring).unwrap_err();
    assert!(
        matches!(err, VerifyError::SignerNotValid { ref problem, .. } if problem.contains("revoked")),
        "{err:?}"
    );
    let (ok, output) = helm_verify(&helm, &keyring, &chart.package);
    assert!(!ok, "helm also refuses a revoked key: {output}");

    let secret = Keyring::from_bytes(&gnupg.export_secret("")).unwrap();
    let err = sign_chart("name: x\n", "x-1.tgz", b"x", &secret.keys()[0], None).unwrap_err();
    assert!(
        matches!(err, KeyError::CannotSign { ref reason, .. } if reason.contains("revoked")),
        "{err:?}"
    );
}

#[test]
fn expired_gnupg_key_fails_verify_as_signer_not_valid() {
    let (helm, gpg) = require!(helm, gpg);
    let chart = helm_chart(&helm);
    let gnupg = Gpg::new(gpg);
    // Made in 2020, valid for one day.
    run(gnupg.cmd().args([
        "--faked-system-time",
        "20200101T000000!",
        "--passphrase",
        "",
        "--quick-gen-key",
        "Expired <expired@example.com>",
        "ed25519",
        "sign",
        "1d",
    ]));
    let secret = gnupg.export_secret("");
    let ring = Keyring::from_bytes(&secret).unwrap();
    let key = &ring.keys()[0];
    assert_eq!(key.expires(), Some(1_577_836_800 + 86_400));
    let package = std::fs::read(&chart.package).unwrap();
    let err = sign_chart(&chart.metadata_yaml, &chart.file_name, &package, key, None).unwrap_err();
    assert!(
        matches!(err, KeyError::CannotSign { ref reason, .. } if reason.contains("expired on 2020-01-02")),
        "{err:?}"
    );

    // A signature made while the key was still valid, made directly with the library.
    use pgp::composed::{CleartextSignedMessage, Deserializable, SignedSecretKey};
    let (sk, _) = SignedSecretKey::from_reader_single(secret.as_slice()).unwrap();
    let body = provenance_body(
        &chart.metadata_yaml,
        &chart.file_name,
        &chartkit_signing::Sha256Digest::of(&package),
    );
    let message =
        CleartextSignedMessage::sign(rand::rngs::OsRng, &body, &sk.primary_key, &"".into())
            .unwrap();
    std::fs::write(
        chart
            .package
            .with_file_name(provenance_file_name(&chart.file_name)),
        message.to_armored_string(Default::default()).unwrap(),
    )
    .unwrap();
    let keyring = chart.dir.path().join("pubring.gpg");
    std::fs::write(&keyring, gnupg.export(false)).unwrap();
    let ring = Keyring::from_bytes(&std::fs::read(&keyring).unwrap()).unwrap();
    let err = verify_package_file(&chart.package, &ring).unwrap_err();
    assert!(
        matches!(err, VerifyError::SignerNotValid { ref problem, .. } if problem.contains("expired on 2020-01-02")),
        "{err:?}"
    );
    let (ok, output) = helm_verify(&helm, &keyring, &chart.package);
    assert!(!ok, "helm also refuses an expired key: {output}");
}
