//! Interoperability with the real `helm` (v4) and GnuPG: charts signed here verify with
//! `helm verify`, and charts signed by `helm package --sign` verify here.

mod common;

use std::process::Command;

use chartkit_signing::{
    Algorithm, Keyring, generate_key, provenance_file_name, sign_chart, verify_package_file,
};
use common::{Gpg, helm_chart, helm_verify, run};

/// The text of a `.prov` up to its signature block: everything but the signature bytes.
fn signed_part(prov: &str) -> &str {
    &prov[..prov.find("-----BEGIN PGP SIGNATURE-----").unwrap()]
}

#[test]
fn chartkit_ed25519_signature_passes_helm_verify_with_gpg_exported_keyring() {
    let (helm, gpg) = require!(helm, gpg);
    let chart = helm_chart(&helm);
    let generated = generate_key("Chart Signer", "signer@example.com", None).unwrap();
    let secret_ring = Keyring::from_bytes(generated.secret.expose().as_bytes()).unwrap();
    let key = secret_ring.find("signer@example.com").unwrap();
    assert_eq!(key.algorithm(), Algorithm::Ed25519);

    let package = std::fs::read(&chart.package).unwrap();
    let prov = sign_chart(&chart.metadata_yaml, &chart.file_name, &package, key, None).unwrap();
    let prov_path = chart
        .package
        .with_file_name(provenance_file_name(&chart.file_name));
    std::fs::write(&prov_path, &prov).unwrap();

    // The public key goes through GnuPG and comes back out the way GnuPG exports it.
    let gnupg = Gpg::new(gpg);
    gnupg.import(generated.public.as_str().as_bytes());
    assert_eq!(
        gnupg.fingerprint("signer@example.com"),
        generated.fingerprint
    );
    let keyring = chart.dir.path().join("pubring.gpg");
    std::fs::write(&keyring, gnupg.export(false)).unwrap();
    let (ok, output) = helm_verify(&helm, &keyring, &chart.package);
    assert!(
        ok,
        "helm verify rejected chartkit's .prov:\n{output}\n{prov}"
    );

    // chartkit agrees, and reports exactly what helm printed.
    let ring = Keyring::from_bytes(&std::fs::read(&keyring).unwrap()).unwrap();
    let verification = verify_package_file(&chart.package, &ring).unwrap();
    assert_eq!(verification.to_string(), output);
}

/// helm v4.1.4 reads only binary keyrings: an armored one (`gpg --export --armor`) fails
/// with "failed to load keyring: openpgp: invalid data: tag byte does not have MSB set".
/// chartkit reads both; this pins helm's behaviour so a helm upgrade that changes it is
/// noticed.
#[test]
fn helm_4_1_rejects_armored_keyrings_that_chartkit_reads() {
    let (helm, gpg) = require!(helm, gpg);
    let chart = helm_chart(&helm);
    let generated = generate_key("Chart Signer", "signer@example.com", None).unwrap();
    let ring = Keyring::from_bytes(generated.secret.expose().as_bytes()).unwrap();
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
        prov,
    )
    .unwrap();
    let gnupg = Gpg::new(gpg);
    gnupg.import(generated.public.as_str().as_bytes());
    let armored = chart.dir.path().join("pubring.asc");
    std::fs::write(&armored, gnupg.export(true)).unwrap();

    let (ok, output) = helm_verify(&helm, &armored, &chart.package);
    assert!(!ok && output.contains("failed to load keyring"), "{output}");
    let ring = Keyring::from_bytes(&std::fs::read(&armored).unwrap()).unwrap();
    verify_package_file(&chart.package, &ring).unwrap();
}

#[test]
fn chartkit_prov_matches_helm_prov_byte_for_byte_outside_the_signature() {
    let (helm, gpg) = require!(helm, gpg);
    let chart = helm_chart(&helm);
    let gnupg = Gpg::new(gpg);
    gnupg.generate("Helm Signer <helm@example.com>", "ed25519", "");
    let secring = chart.dir.path().join("secring.gpg");
    std::fs::write(&secring, gnupg.export_secret("")).unwrap();
    let out_dir = chart.dir.path().join("helm-signed");
    run(Command::new(&helm)
        .current_dir(chart.dir.path())
        .args([
            "package",
            "signme",
            "--sign",
            "--key",
            "Helm Signer",
            "--keyring",
        ])
        .arg(&secring)
        .arg("-d")
        .arg(&out_dir));
    let helm_prov =
        std::fs::read_to_string(out_dir.join(provenance_file_name(&chart.file_name))).unwrap();
    let package = std::fs::read(out_dir.join(&chart.file_name)).unwrap();

    let ring = Keyring::from_bytes(&std::fs::read(&secring).unwrap()).unwrap();
    let key = ring.find("Helm Signer").unwrap();
    let ours = sign_chart(&chart.metadata_yaml, &chart.file_name, &package, key, None).unwrap();

    assert_eq!(signed_part(&ours), signed_part(&helm_prov));
    // Both end right after the armor footer, without a CRC line.
    assert!(helm_prov.ends_with("\n-----END PGP SIGNATURE-----"));
    assert!(ours.ends_with("\n-----END PGP SIGNATURE-----"));
    let armor_lines = |p: &str| -> Vec<usize> {
        p[p.find("-----BEGIN PGP SIGNATURE-----").unwrap()..]
            .lines()
            .map(str::len)
            .collect()
    };
    assert!(armor_lines(&ours).iter().all(|&n| n <= 64 || n == 29));
    assert!(!ours.contains("\n="), "no CRC-24 line, as Helm writes none");
    assert_eq!(
        armor_lines(&ours)[1],
        0,
        "blank line after the armor header"
    );
}

/// Signs a chart with `helm package --sign` using a GnuPG key of `algo`, then verifies it
/// with chartkit against keyrings exported by GnuPG in binary and armored form.
fn helm_signed_chart_passes_chartkit_verify(algo: &str) {
    let (helm, gpg) = require!(helm, gpg);
    let chart = helm_chart(&helm);
    let gnupg = Gpg::new(gpg);
    let uid = format!("Helm {algo} <{algo}@example.com>");
    let fingerprint = gnupg.generate(&uid, algo, "");
    // A second key in the same keyring, so lookup by the signature's issuer is exercised.
    gnupg.generate("Bystander <bystander@example.com>", "ed25519", "");
    let secring = chart.dir.path().join("secring.gpg");
    std::fs::write(&secring, gnupg.export_secret("")).unwrap();
    let signed_dir = chart.dir.path().join("signed");
    let out = Command::new(&helm)
        .current_dir(chart.dir.path())
        .args(["package", "signme", "--sign", "--key", &uid, "--keyring"])
        .arg(&secring)
        .arg("-d")
        .arg(&signed_dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "helm 4 could not sign with a GnuPG {algo} key: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let package = signed_dir.join(&chart.file_name);

    for (armor, name) in [(false, "pubring.gpg"), (true, "pubring.asc")] {
        let keyring_path = chart.dir.path().join(name);
        std::fs::write(&keyring_path, gnupg.export(armor)).unwrap();
        let ring = Keyring::from_bytes(&std::fs::read(&keyring_path).unwrap()).unwrap();
        assert_eq!(ring.len(), 2, "{name}");
        let verification = verify_package_file(&package, &ring).unwrap();
        assert_eq!(verification.fingerprint, fingerprint);
        assert_eq!(verification.signer, uid);
        assert_eq!(verification.file_name, chart.file_name);

        if !armor {
            let (ok, helm_output) = helm_verify(&helm, &keyring_path, &package);
            assert!(ok, "{helm_output}");
            assert_eq!(verification.to_string(), helm_output);
        }
    }
    // The secret keyring helm signed with works as a verification keyring too, as in helm.
    let ring = Keyring::from_bytes(&std::fs::read(&secring).unwrap()).unwrap();
    assert!(ring.keys().iter().all(|k| k.has_secret()));
    verify_package_file(&package, &ring).unwrap();
}

#[test]
fn helm_signed_ed25519_chart_passes_chartkit_verify() {
    helm_signed_chart_passes_chartkit_verify("ed25519");
}

#[test]
fn helm_signed_rsa3072_chart_passes_chartkit_verify() {
    helm_signed_chart_passes_chartkit_verify("rsa3072");
}

#[test]
fn gnupg_rsa_and_ed25519_keys_are_listed_with_their_details() {
    let gpg = require!(gpg);
    let gnupg = Gpg::new(gpg);
    let ed = gnupg.generate("Ed Key <ed@example.com>", "ed25519", "");
    let rsa = gnupg.generate("Rsa Key <rsa@example.com>", "rsa3072", "");
    for data in [
        gnupg.export(false),
        gnupg.export(true),
        gnupg.export_secret(""),
    ] {
        let ring = Keyring::from_bytes(&data).unwrap();
        let listed: Vec<(String, String, String)> = ring
            .keys()
            .iter()
            .map(|k| {
                (
                    k.user_id().to_owned(),
                    k.fingerprint().to_owned(),
                    k.algorithm().to_string(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                (
                    "Ed Key <ed@example.com>".to_owned(),
                    ed.clone(),
                    "ed25519".to_owned()
                ),
                (
                    "Rsa Key <rsa@example.com>".to_owned(),
                    rsa.clone(),
                    "rsa3072".to_owned()
                ),
            ]
        );
        assert!(ring.keys().iter().all(|k| k.created() > 1_600_000_000));
        assert_eq!(ring.find(&rsa).unwrap().fingerprint(), rsa);
        assert_eq!(
            ring.find(&ed[24..]).unwrap().fingerprint(),
            ed,
            "long key id"
        );
        assert_eq!(ring.find("Rsa Key").unwrap().fingerprint(), rsa);
    }
    // Concatenated armored exports, as `cat a.asc b.asc > ring.asc` makes them.
    let mut concatenated = gnupg.export(true);
    let other = Gpg::new(gnupg.bin.clone());
    other.generate("Third <third@example.com>", "ed25519", "");
    concatenated.extend(other.export(true));
    assert_eq!(Keyring::from_bytes(&concatenated).unwrap().len(), 3);
}

#[test]
fn gnupg_passphrase_protected_key_signs_with_the_right_passphrase_only() {
    let (helm, gpg) = require!(helm, gpg);
    let chart = helm_chart(&helm);
    let gnupg = Gpg::new(gpg);
    gnupg.generate("Locked <locked@example.com>", "ed25519", "s3cret pass");
    let ring = Keyring::from_bytes(&gnupg.export_secret("s3cret pass")).unwrap();
    let key = ring.find("locked@example.com").unwrap();
    let package = std::fs::read(&chart.package).unwrap();
    let sign = |pass| sign_chart(&chart.metadata_yaml, &chart.file_name, &package, key, pass);

    let err = sign(Some("wrong")).unwrap_err();
    assert!(
        matches!(err, chartkit_signing::KeyError::WrongPassphrase { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("wrong passphrase"), "{err}");
    assert!(matches!(
        sign(None).unwrap_err(),
        chartkit_signing::KeyError::PassphraseRequired { .. }
    ));

    let prov = sign(Some("s3cret pass")).unwrap();
    std::fs::write(
        chart
            .package
            .with_file_name(provenance_file_name(&chart.file_name)),
        prov,
    )
    .unwrap();
    let keyring = chart.dir.path().join("pubring.gpg");
    std::fs::write(&keyring, gnupg.export(false)).unwrap();
    let (ok, output) = helm_verify(&helm, &keyring, &chart.package);
    assert!(ok, "{output}");
}
