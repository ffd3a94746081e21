//! Verification failures, passphrases, key files and key lookup, without external tools:
//! every way a `.prov` can be wrong maps to the matching `VerifyError` variant.

use std::sync::OnceLock;

use chartkit_signing::{
    GeneratedKey, KeyError, Keyring, Provenance, Sha256Digest, VerifyError, generate_key,
    provenance_body, provenance_file_name, sign_chart, verify, verify_package_file,
    write_public_key_file, write_secret_key_file,
};

const METADATA: &str =
    "apiVersion: v2\ndescription: A tiny chart\nkeywords:\n- tiny\nname: tiny\nversion: 0.1.0\n";
const FILE_NAME: &str = "tiny-0.1.0.tgz";
const PACKAGE: &[u8] = b"\x1f\x8b\x08\x00 stand-in for a chart archive: only its digest is signed";

fn signer() -> &'static GeneratedKey {
    static KEY: OnceLock<GeneratedKey> = OnceLock::new();
    KEY.get_or_init(|| generate_key("Tiny Signer", "tiny@example.com", None).unwrap())
}

fn public_ring() -> Keyring {
    Keyring::from_bytes(signer().public.as_str().as_bytes()).unwrap()
}

fn signed_prov() -> String {
    let ring = Keyring::from_bytes(signer().secret.expose().as_bytes()).unwrap();
    sign_chart(METADATA, FILE_NAME, PACKAGE, &ring.keys()[0], None).unwrap()
}

#[test]
fn untampered_chart_verifies_with_signer_and_digest() {
    let v = verify(&signed_prov(), PACKAGE, FILE_NAME, &public_ring()).unwrap();
    assert_eq!(v.signer, "Tiny Signer <tiny@example.com>");
    assert_eq!(v.fingerprint, signer().fingerprint);
    assert_eq!(v.file_name, FILE_NAME);
    assert_eq!(v.sha256, Sha256Digest::of(PACKAGE).to_hex());
    assert_eq!(
        v.to_string(),
        format!(
            "Signed by: Tiny Signer <tiny@example.com>\nUsing Key With Fingerprint: {}\nChart Hash Verified: sha256:{}\n",
            signer().fingerprint,
            v.sha256
        )
    );
}

#[test]
fn prov_body_is_metadata_then_dots_then_files() {
    let digest = Sha256Digest::of(PACKAGE);
    assert_eq!(
        provenance_body(METADATA, FILE_NAME, &digest),
        format!("{METADATA}\n...\nfiles:\n  {FILE_NAME}: sha256:{digest}\n")
    );
    let prov = signed_prov();
    assert!(
        prov.starts_with("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\napiVersion: v2\n")
    );
    assert!(
        prov.contains("\nkeywords:\n- - tiny\n"),
        "dash-escaped: {prov}"
    );
    let parsed = Provenance::parse(&prov).unwrap();
    assert_eq!(parsed.metadata_yaml(), METADATA);
    assert_eq!(parsed.files()[FILE_NAME], format!("sha256:{digest}"));
    assert_eq!(parsed.signer_key_ids().len(), 1);
}

#[test]
fn tampered_package_byte_fails_with_digest_mismatch() {
    let mut package = PACKAGE.to_vec();
    package[20] ^= 1;
    let err = verify(&signed_prov(), &package, FILE_NAME, &public_ring()).unwrap_err();
    let VerifyError::DigestMismatch {
        ref expected,
        ref actual,
        ..
    } = err
    else {
        panic!("{err:?}")
    };
    assert_eq!(*expected, format!("sha256:{}", Sha256Digest::of(PACKAGE)));
    assert_eq!(*actual, format!("sha256:{}", Sha256Digest::of(&package)));
    let message = err.to_string();
    assert!(
        message.contains(expected) && message.contains(actual),
        "{message}"
    );
}

#[test]
fn tampered_signed_text_fails_with_bad_signature() {
    let prov = signed_prov();
    for (from, to) in [
        ("version: 0.1.0", "version: 0.1.1"),
        ("description: A tiny chart", "description: A tiny Chart"),
        (": sha256:", ": sha256:0"),
    ] {
        let tampered = prov.replacen(from, to, 1);
        assert_ne!(tampered, prov);
        let err = verify(&tampered, PACKAGE, FILE_NAME, &public_ring()).unwrap_err();
        assert!(
            matches!(err, VerifyError::BadSignature { .. }),
            "{from}: {err:?}"
        );
        assert!(err.to_string().contains(&signer().fingerprint), "{err}");
    }
}

#[test]
fn tampered_signature_fails_with_bad_signature() {
    let prov = signed_prov();
    let armor_start = prov.find("-----BEGIN PGP SIGNATURE-----").unwrap();
    let last_line_start = prov[..prov.rfind("\n-----END").unwrap()]
        .rfind('\n')
        .unwrap()
        + 1;
    assert!(last_line_start > armor_start);
    // A character in the last base64 line encodes bits of the signature value itself.
    let at = last_line_start + 8;
    let mut bytes = prov.into_bytes();
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(bytes).unwrap();
    let err = verify(&tampered, PACKAGE, FILE_NAME, &public_ring()).unwrap_err();
    assert!(matches!(err, VerifyError::BadSignature { .. }), "{err:?}");
}

#[test]
fn wrong_keyring_fails_with_unknown_signer_naming_the_key() {
    let other = generate_key("Someone Else", "else@example.com", None).unwrap();
    let ring = Keyring::from_bytes(other.public.as_str().as_bytes()).unwrap();
    let err = verify(&signed_prov(), PACKAGE, FILE_NAME, &ring).unwrap_err();
    let VerifyError::UnknownSigner {
        ref key_id,
        ref fingerprint,
    } = err
    else {
        panic!("{err:?}")
    };
    assert_eq!(*key_id, signer().fingerprint[24..]);
    assert_eq!(fingerprint.as_deref(), Some(signer().fingerprint.as_str()));
    assert!(err.to_string().contains(key_id.as_str()), "{err}");
}

#[test]
fn package_name_not_in_prov_fails_with_file_not_listed() {
    let err = verify(&signed_prov(), PACKAGE, "renamed-0.1.0.tgz", &public_ring()).unwrap_err();
    let VerifyError::FileNotListed { ref listed, .. } = err else {
        panic!("{err:?}")
    };
    assert_eq!(listed, &[FILE_NAME.to_owned()]);
    assert!(err.to_string().contains("renamed-0.1.0.tgz"), "{err}");
}

#[test]
fn package_without_prov_fails_with_missing_provenance() {
    let dir = tempfile::tempdir().unwrap();
    let package = dir.path().join(FILE_NAME);
    std::fs::write(&package, PACKAGE).unwrap();
    let err = verify_package_file(&package, &public_ring()).unwrap_err();
    let VerifyError::MissingProvenance { ref path } = err else {
        panic!("{err:?}")
    };
    assert_eq!(*path, dir.path().join(provenance_file_name(FILE_NAME)));

    std::fs::write(path, signed_prov()).unwrap();
    verify_package_file(&package, &public_ring()).unwrap();
}

#[test]
fn malformed_prov_says_what_is_malformed() {
    let prov = signed_prov();
    let sig_at = prov.find("-----BEGIN PGP SIGNATURE-----").unwrap();
    let cases = [
        (
            "".to_owned(),
            "no `-----BEGIN PGP SIGNED MESSAGE-----` line",
        ),
        (
            "apiVersion: v2\n".to_owned(),
            "no `-----BEGIN PGP SIGNED MESSAGE-----` line",
        ),
        (
            prov[..sig_at].to_owned(),
            "no `-----BEGIN PGP SIGNATURE-----` block",
        ),
        (
            prov.replace("-----END PGP SIGNATURE-----", ""),
            "not closed by a `-----END PGP SIGNATURE-----` line",
        ),
        (
            format!(
                "{}\n!!!!\n-----END PGP SIGNATURE-----",
                &prov[..sig_at + 30]
            ),
            "cannot decode the clearsigned message",
        ),
    ];
    for (text, expected) in cases {
        let err = verify(&text, PACKAGE, FILE_NAME, &public_ring()).unwrap_err();
        assert!(
            matches!(err, VerifyError::MalformedProvenance { .. }),
            "{expected}: {err:?}"
        );
        assert!(err.to_string().contains(expected), "{expected}: {err}");
    }
}

/// A validly signed message whose body is not a Helm provenance body.
fn clearsign_raw(body: &str) -> String {
    use pgp::composed::{CleartextSignedMessage, Deserializable, SignedSecretKey};
    let (key, _) = SignedSecretKey::from_string(signer().secret.expose()).unwrap();
    let message =
        CleartextSignedMessage::sign(rand::rngs::OsRng, body, &key.primary_key, &"".into())
            .unwrap();
    message.to_armored_string(Default::default()).unwrap()
}

#[test]
fn validly_signed_but_malformed_body_says_what_is_malformed() {
    for (body, expected) in [
        ("apiVersion: v2\nname: tiny\n", "no `...` line"),
        (
            "name: tiny\n\n...\nfiles: [a, b]\n",
            "`files:` must map file names",
        ),
        (
            "name: tiny\n\n...\nfiles:\n  tiny-0.1.0.tgz: [x]\n",
            "must be a string",
        ),
        ("name: tiny\n\n...\nfiles: {a: b\n", "not valid YAML"),
    ] {
        let err = verify(&clearsign_raw(body), PACKAGE, FILE_NAME, &public_ring()).unwrap_err();
        assert!(
            matches!(err, VerifyError::MalformedProvenance { .. }),
            "{expected}: {err:?}"
        );
        assert!(err.to_string().contains(expected), "{expected}: {err}");
    }
}

#[test]
fn passphrase_protected_key_needs_the_right_passphrase() {
    let key = generate_key("Locked", "locked@example.com", Some("correct horse")).unwrap();
    let ring = Keyring::from_bytes(key.secret.expose().as_bytes()).unwrap();
    let k = ring.find(&key.fingerprint).unwrap();
    let sign = |pass| sign_chart(METADATA, FILE_NAME, PACKAGE, k, pass);

    let err = sign(Some("battery staple")).unwrap_err();
    assert!(
        matches!(err, KeyError::WrongPassphrase { ref fingerprint } if *fingerprint == key.fingerprint)
    );
    assert_eq!(
        err.to_string(),
        format!("wrong passphrase for secret key {}", key.fingerprint)
    );
    assert!(matches!(
        sign(None).unwrap_err(),
        KeyError::PassphraseRequired { .. }
    ));

    let prov = sign(Some("correct horse")).unwrap();
    let public = Keyring::from_bytes(key.public.as_str().as_bytes()).unwrap();
    verify(&prov, PACKAGE, FILE_NAME, &public).unwrap();
}

#[test]
fn signing_with_a_public_key_is_a_no_secret_key_error() {
    let err = sign_chart(METADATA, FILE_NAME, PACKAGE, &public_ring().keys()[0], None).unwrap_err();
    assert!(matches!(err, KeyError::NoSecretKey { .. }), "{err:?}");
}

#[cfg(unix)]
#[test]
fn secret_key_file_is_written_owner_only_and_replaced_atomically() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secret.asc");
    // An existing, world-readable file is replaced, not rewritten in place.
    std::fs::write(&path, "old").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();

    write_secret_key_file(&path, &signer().secret).unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        signer().secret.expose()
    );

    let public = dir.path().join("public.asc");
    write_public_key_file(&public, &signer().public).unwrap();
    assert_eq!(
        std::fs::metadata(&public).unwrap().permissions().mode() & 0o777,
        0o644
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "no temporary files left behind: {names:?}");
    // The written file reads back as a usable key.
    let ring = Keyring::from_bytes(&std::fs::read(&path).unwrap()).unwrap();
    assert!(ring.keys()[0].has_secret());
}

#[test]
fn secret_key_file_in_missing_directory_is_an_io_error_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no/such/dir/secret.asc");
    let err = write_secret_key_file(&path, &signer().secret).unwrap_err();
    assert!(matches!(err, KeyError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("secret.asc"), "{err}");
}

#[test]
fn secret_material_never_appears_in_debug_output() {
    let secret = signer().secret.expose();
    let base64_lines: Vec<&str> = secret
        .lines()
        .filter(|l| l.len() > 40 && !l.starts_with("-----"))
        .collect();
    assert!(!base64_lines.is_empty());
    let ring = Keyring::from_bytes(secret.as_bytes()).unwrap();
    let debug = [
        format!("{:?}", signer()),
        format!("{:#?}", signer().secret),
        format!("{ring:?}"),
        format!("{:?}", ring.keys()[0]),
    ];
    for text in &debug {
        assert!(!text.contains("PRIVATE KEY"), "{text}");
        for line in &base64_lines {
            assert!(
                !text.contains(&line[..40]),
                "secret bytes in debug output: {text}"
            );
        }
    }
    assert!(debug[1].contains("redacted"));
}

#[test]
fn keyring_merges_public_and_secret_copies_of_a_key() {
    let other = generate_key("Other", "other@example.com", None).unwrap();
    let text = format!(
        "{}\n{}\n{}",
        signer().public,
        other.public,
        signer().secret.expose()
    );
    let ring = Keyring::from_bytes(text.as_bytes()).unwrap();
    assert_eq!(ring.len(), 2);
    assert!(ring.find("tiny@example.com").unwrap().has_secret());
    assert!(!ring.find("Other").unwrap().has_secret());
}

#[test]
fn keyring_lookup_by_name_email_fingerprint_and_key_id() {
    let a = generate_key("Alice Example", "alice@example.com", None).unwrap();
    let b = generate_key("Alice Other", "alice.other@example.com", None).unwrap();
    let text = format!("{}{}", a.public, b.public);
    let ring = Keyring::from_bytes(text.as_bytes()).unwrap();
    let fp = |q: &str| ring.find(q).map(|k| k.fingerprint().to_owned());
    assert_eq!(fp("Alice Example").unwrap(), a.fingerprint);
    assert_eq!(fp("alice.other@example.com").unwrap(), b.fingerprint);
    assert_eq!(fp(&a.fingerprint.to_lowercase()).unwrap(), a.fingerprint);
    assert_eq!(
        fp(&format!("0x{}", &b.fingerprint[24..])).unwrap(),
        b.fingerprint
    );
    // An exact user id wins over other keys whose user ids merely contain it.
    assert_eq!(
        fp("Alice Example <alice@example.com>").unwrap(),
        a.fingerprint
    );

    let err = fp("Alice").unwrap_err();
    let KeyError::Ambiguous { ref candidates, .. } = err else {
        panic!("{err:?}")
    };
    assert_eq!(candidates.len(), 2);
    assert!(err.to_string().contains("full fingerprint"), "{err}");
    assert!(matches!(fp("Bob").unwrap_err(), KeyError::NotFound { .. }));
}

#[test]
fn unreadable_keyrings_are_clear_errors() {
    assert!(matches!(
        Keyring::from_bytes(b"").unwrap_err(),
        KeyError::NoKeys
    ));
    assert!(matches!(
        Keyring::from_bytes(b"  \n").unwrap_err(),
        KeyError::NoKeys
    ));
    let err = Keyring::from_bytes(b"hello, not a key").unwrap_err();
    assert!(matches!(err, KeyError::Parse { .. }), "{err:?}");
    let mut keybox = vec![0u8, 0, 0, 32, 1, 1, 0, 0];
    keybox.extend(b"KBXf");
    keybox.resize(32, 0);
    let err = Keyring::from_bytes(&keybox).unwrap_err();
    assert!(err.to_string().contains("gpg --export"), "{err}");
    let prov = signed_prov();
    let err = Keyring::from_bytes(prov.as_bytes()).unwrap_err();
    assert!(err.to_string().contains("found a SIGNED MESSAGE"), "{err}");
}

#[test]
fn generated_keys_are_ed25519_with_the_requested_user_id() {
    let key = generate_key("Jane Doe", "jane@example.com", None).unwrap();
    assert_eq!(key.user_id, "Jane Doe <jane@example.com>");
    assert!(
        key.public
            .as_str()
            .starts_with("-----BEGIN PGP PUBLIC KEY BLOCK-----")
    );
    let ring = Keyring::from_bytes(key.public.as_str().as_bytes()).unwrap();
    let k = &ring.keys()[0];
    assert_eq!(k.algorithm().to_string(), "ed25519");
    assert_eq!(k.user_id(), "Jane Doe <jane@example.com>");
    assert_eq!(k.fingerprint(), key.fingerprint);
    assert_eq!(k.fingerprint().len(), 40);
    assert!(!k.has_secret() && !k.is_revoked() && k.expires().is_none());
    assert!(matches!(
        generate_key("Jane", "not-an-email", None).unwrap_err(),
        KeyError::InvalidUserId { field: "email", .. }
    ));
}
