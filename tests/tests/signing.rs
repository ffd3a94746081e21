//! `chartkit key`, `chartkit verify` and `chartkit package --sign`, run as a user would,
//! and checked against `helm verify` / `helm package --sign` when helm and gpg are present.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn chartkit() -> Command {
    Command::new(chartkit_tests::chartkit_bin())
}

fn helm() -> Option<PathBuf> {
    chartkit_tests::peers::helm()
}

fn gpg() -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join("gpg"))
        .find(|p| p.is_file())
}

fn ok(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// A minimal chart directory, written in code so the tests need no helm.
fn write_chart(dir: &Path) -> PathBuf {
    let chart = dir.join("tiny");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: tiny\nversion: 0.1.0\ndescription: A tiny chart\nkeywords:\n- tiny\n",
    )
    .unwrap();
    std::fs::write(chart.join("values.yaml"), "replicas: 1\n").unwrap();
    std::fs::write(
        chart.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tiny\n",
    )
    .unwrap();
    chart
}

/// Generates a key with `chartkit key generate` into `dir/keys`.
fn generate(dir: &Path, extra: &[&str]) -> PathBuf {
    let keys = dir.join("keys");
    ok(chartkit()
        .args([
            "key",
            "generate",
            "--name",
            "Cli Signer",
            "--email",
            "cli@example.com",
            "-o",
        ])
        .arg(&keys)
        .args(extra));
    keys
}

fn package_signed(dir: &Path, keys: &Path, extra: &[&str]) -> PathBuf {
    let chart = write_chart(dir);
    let out = dir.join("out");
    ok(chartkit()
        .arg("package")
        .arg(&chart)
        .args(["--sign", "--key", "cli@example.com", "--keyring"])
        .arg(keys.join("secret.asc"))
        .arg("-d")
        .arg(&out)
        .args(extra));
    out.join("tiny-0.1.0.tgz")
}

#[cfg(unix)]
#[test]
fn key_generate_writes_owner_only_secret_key_and_refuses_to_overwrite_it() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let keys = generate(dir.path(), &[]);
    let mode = |name: &str| {
        std::fs::metadata(keys.join(name))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode("secret.asc"), 0o600);
    assert_eq!(mode("public.asc"), 0o644);
    assert_eq!(mode("public.gpg"), 0o644);
    let secret = std::fs::read_to_string(keys.join("secret.asc")).unwrap();
    assert!(secret.starts_with("-----BEGIN PGP PRIVATE KEY BLOCK-----"));

    let again = chartkit()
        .args([
            "key",
            "generate",
            "--name",
            "X",
            "--email",
            "x@example.com",
            "-o",
        ])
        .arg(&keys)
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("refusing to overwrite"));
    assert_eq!(
        std::fs::read_to_string(keys.join("secret.asc")).unwrap(),
        secret
    );
}

#[test]
fn key_list_shows_algorithm_fingerprint_and_user_id() {
    let dir = tempfile::tempdir().unwrap();
    let keys = generate(dir.path(), &[]);
    let out = stdout(&ok(chartkit()
        .args(["key", "list", "--keyring"])
        .arg(keys.join("secret.asc"))));
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("sec   ed25519 20"), "{out}");
    assert_eq!(lines[1].trim().len(), 40, "{out}");
    assert_eq!(lines[2], "uid   Cli Signer <cli@example.com>");
    let out = stdout(&ok(chartkit()
        .args(["key", "list", "--keyring"])
        .arg(keys.join("public.asc"))));
    assert!(out.starts_with("pub   ed25519 "), "{out}");
}

#[test]
fn package_sign_and_verify_round_trip_and_tampering_fails() {
    let dir = tempfile::tempdir().unwrap();
    let keys = generate(dir.path(), &[]);
    let package = package_signed(dir.path(), &keys, &[]);
    let prov = PathBuf::from(format!("{}.prov", package.display()));
    assert!(prov.is_file());

    let out = stdout(&ok(chartkit()
        .arg("verify")
        .arg(&package)
        .arg("--keyring")
        .arg(keys.join("public.asc"))));
    assert!(
        out.starts_with("Signed by: Cli Signer <cli@example.com>\nUsing Key With Fingerprint: "),
        "{out}"
    );
    assert!(out.contains("\nChart Hash Verified: sha256:"), "{out}");

    let mut bytes = std::fs::read(&package).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&package, bytes).unwrap();
    let failed = chartkit()
        .arg("verify")
        .arg(&package)
        .arg("--keyring")
        .arg(keys.join("public.asc"))
        .output()
        .unwrap();
    assert!(!failed.status.success());
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(
        stderr.contains("sha256 digest of tiny-0.1.0.tgz does not match"),
        "{stderr}"
    );

    std::fs::remove_file(&prov).unwrap();
    let failed = chartkit()
        .arg("verify")
        .arg(&package)
        .arg("--keyring")
        .arg(keys.join("public.asc"))
        .output()
        .unwrap();
    assert!(!failed.status.success());
    assert!(String::from_utf8_lossy(&failed.stderr).contains("no provenance file"));
}

#[test]
fn package_sign_with_passphrase_file_and_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let pass = dir.path().join("pass");
    std::fs::write(&pass, "open sesame\nignored second line\n").unwrap();
    let keys = generate(dir.path(), &["--passphrase-file", pass.to_str().unwrap()]);

    // Without the passphrase nothing is written, not even the unsigned archive.
    let chart = write_chart(dir.path());
    let out_dir = dir.path().join("unsigned");
    let failed = chartkit()
        .arg("package")
        .arg(&chart)
        .args(["--sign", "--key", "Cli Signer", "--keyring"])
        .arg(keys.join("secret.asc"))
        .arg("-d")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(!failed.status.success());
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(
        stderr.contains("protected by a passphrase") && stderr.contains("--passphrase-file"),
        "{stderr}"
    );
    assert!(!out_dir.exists());

    let package = package_signed(
        dir.path(),
        &keys,
        &["--passphrase-file", pass.to_str().unwrap()],
    );
    ok(chartkit()
        .arg("verify")
        .arg(&package)
        .arg("--keyring")
        .arg(keys.join("public.asc")));
}

#[test]
fn chartkit_signed_package_passes_helm_verify() {
    let (Some(helm), Some(gpg)) = (helm(), gpg()) else {
        eprintln!(
            "SKIPPED: needs helm (shared/tools/get-peers) and gpg (apt-get install -y gnupg)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let keys = generate(dir.path(), &[]);
    let package = package_signed(dir.path(), &keys, &[]);

    // helm 4.1 reads only binary keyrings: import into GnuPG and export the binary form.
    let home = dir.path().join("gnupg");
    std::fs::create_dir(&home).unwrap();
    let gpg = |args: &[&str]| {
        let mut cmd = Command::new(&gpg);
        cmd.env("GNUPGHOME", &home).arg("--batch").args(args);
        ok(&mut cmd)
    };
    gpg(&["--import", keys.join("public.asc").to_str().unwrap()]);
    let keyring = dir.path().join("pubring.gpg");
    std::fs::write(&keyring, gpg(&["--export"]).stdout).unwrap();

    let helm_out = stdout(&ok(Command::new(&helm)
        .arg("verify")
        .arg("--keyring")
        .arg(&keyring)
        .arg(&package)));
    let ours = stdout(&ok(chartkit()
        .arg("verify")
        .arg(&package)
        .arg("--keyring")
        .arg(&keyring)));
    assert_eq!(ours, helm_out);
}

/// `key generate` also writes `public.gpg`, the binary keyring helm reads as it is.
#[test]
fn generated_binary_keyring_works_with_helm_verify() {
    let dir = tempfile::tempdir().unwrap();
    let keys = generate(dir.path(), &[]);
    let keyring = keys.join("public.gpg");
    assert!(keyring.is_file());
    let package = package_signed(dir.path(), &keys, &[]);
    let ours = stdout(&ok(chartkit()
        .arg("verify")
        .arg(&package)
        .arg("--keyring")
        .arg(&keyring)));
    assert!(ours.contains("Chart Hash Verified: sha256:"), "{ours}");
    let Some(helm) = helm() else {
        eprintln!("SKIPPED (helm part): needs helm (shared/tools/get-peers)");
        return;
    };
    let helm_out = stdout(&ok(Command::new(&helm)
        .arg("verify")
        .arg("--keyring")
        .arg(&keyring)
        .arg(&package)));
    assert_eq!(ours, helm_out);
}

#[test]
fn package_sign_signs_the_same_metadata_as_helm_package_sign() {
    let (Some(helm), Some(gpg)) = (helm(), gpg()) else {
        eprintln!(
            "SKIPPED: needs helm (shared/tools/get-peers) and gpg (apt-get install -y gnupg)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("gnupg");
    std::fs::create_dir(&home).unwrap();
    let gpg = |args: &[&str]| {
        let mut cmd = Command::new(&gpg);
        cmd.env("GNUPGHOME", &home)
            .args(["--batch", "--pinentry-mode", "loopback", "--passphrase", ""])
            .args(args);
        ok(&mut cmd)
    };
    gpg(&[
        "--quick-gen-key",
        "Both <cli@example.com>",
        "ed25519",
        "sign",
        "never",
    ]);
    let secring = dir.path().join("secring.gpg");
    std::fs::write(&secring, gpg(&["--export-secret-keys"]).stdout).unwrap();
    let chart = write_chart(dir.path());
    let sign = |cmd: &mut Command, out: &Path| {
        ok(cmd
            .arg("package")
            .arg(&chart)
            .args(["--sign", "--key", "cli@example.com", "--keyring"])
            .arg(&secring)
            .arg("-d")
            .arg(out));
        std::fs::read_to_string(out.join("tiny-0.1.0.tgz.prov")).unwrap()
    };
    let ours = sign(&mut chartkit(), &dir.path().join("ours"));
    let helms = sign(&mut Command::new(&helm), &dir.path().join("helm"));
    // The archives' digests differ (helm stamps the current time into them); everything
    // before the digest — header, metadata, `...`, file name — is the same text.
    let until_digest = |p: &str| p[..p.find("sha256:").unwrap()].to_owned();
    assert_eq!(until_digest(&ours), until_digest(&helms));
}

#[test]
fn verify_and_package_sign_default_to_gnupgs_keyring_as_helm() {
    use chartkit_tests::TestContext;
    let context = TestContext::new();
    write_chart(context.dir());
    let keys = generate(context.dir(), &[]);
    let gnupg = context.path(".home/.gnupg");

    // No --keyring and no ~/.gnupg/pubring.gpg: a clear error naming the file.
    let missing = context.run(&["package", "tiny", "--sign", "--key", "cli@example.com"]);
    assert_eq!(missing.status.code(), Some(1));
    let message = chartkit_tests::stderr(&missing);
    assert!(
        message.starts_with(&format!(
            "Error: no --keyring given, and the default keyring `{}` (GnuPG's, as helm uses) does not exist\nhint: pass --keyring FILE",
            gnupg.join("pubring.gpg").display()
        )),
        "{message}"
    );
    assert!(!context.path("tiny-0.1.0.tgz").exists());

    // helm's default for both is ~/.gnupg/pubring.gpg: signing reads the secret key there.
    std::fs::create_dir_all(&gnupg).unwrap();
    std::fs::copy(keys.join("secret.asc"), gnupg.join("pubring.gpg")).unwrap();
    let signed = context.run(&["package", "tiny", "--sign", "--key", "cli@example.com"]);
    assert!(
        signed.status.success(),
        "{}",
        chartkit_tests::stderr(&signed)
    );
    assert!(context.path("tiny-0.1.0.tgz.prov").exists());

    std::fs::copy(keys.join("public.gpg"), gnupg.join("pubring.gpg")).unwrap();
    let verified = context.run(&["verify", "tiny-0.1.0.tgz"]);
    assert!(
        verified.status.success(),
        "{}",
        chartkit_tests::stderr(&verified)
    );
    assert!(stdout(&verified).starts_with("Signed by: Cli Signer <cli@example.com>\n"));

    // GNUPGHOME moves it, as for helm and gpg.
    let elsewhere = context.path("gnupg-home");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let moved = context
        .chartkit()
        .env("GNUPGHOME", &elsewhere)
        .args(["verify", "tiny-0.1.0.tgz"])
        .output()
        .unwrap();
    assert_eq!(moved.status.code(), Some(1));
    assert!(
        chartkit_tests::stderr(&moved)
            .contains(&format!("`{}`", elsewhere.join("pubring.gpg").display())),
        "{}",
        chartkit_tests::stderr(&moved)
    );

    // helm's help names the same defaults, and helm verify reads the same file.
    if let Some(mut helm) = context.helm() {
        let default = format!("(default \"{}\")", gnupg.join("pubring.gpg").display());
        let help = stdout(&ok(helm.args(["verify", "--help"])));
        assert!(help.contains(&default), "{help}");
        let help = stdout(&ok(context.helm().unwrap().args(["package", "--help"])));
        assert!(help.contains(&default), "{help}");
        let theirs = ok(context.helm().unwrap().args(["verify", "tiny-0.1.0.tgz"]));
        assert_eq!(stdout(&theirs), stdout(&verified));
    }
}
