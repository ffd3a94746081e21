//! GnuPG keyrings made for a test with the real `gpg`, in the files helm's `--keyring`
//! reads (the secret keyring for signing, the public one for verifying).

use std::path::PathBuf;
use std::process::Command;

use crate::TestContext;

/// The keyring files a test signs and verifies with.
pub struct Keyrings {
    /// `secring.gpg` in the context's directory.
    pub secret: PathBuf,
    /// `pubring.gpg` in the context's directory.
    pub public: PathBuf,
}

/// Makes an Ed25519 signing key for `user_id` (`Name <email>`, no passphrase) in a GnuPG
/// home of the context's own and exports it to `secring.gpg` and `pubring.gpg` there;
/// `None`, with a skip message, when gpg is not installed.
pub fn keyrings_or_skip(ctx: &TestContext, test: &str, user_id: &str) -> Option<Keyrings> {
    let Some(gpg) = crate::on_path("gpg") else {
        crate::skip(test, "gpg is not installed (apt-get install -y gnupg)");
        return None;
    };
    let gnupg = ctx.path("gnupg");
    std::fs::create_dir_all(&gnupg).expect("GnuPG home");
    let gpg = |args: &[&str]| {
        crate::sandbox::run_ok(
            Command::new(&gpg)
                .env("GNUPGHOME", &gnupg)
                .args(["--batch", "--pinentry-mode", "loopback", "--passphrase", ""])
                .args(args),
        )
        .stdout
    };
    gpg(&["--quick-gen-key", user_id, "ed25519", "sign", "never"]);
    let keyrings = Keyrings {
        secret: ctx.path("secring.gpg"),
        public: ctx.path("pubring.gpg"),
    };
    std::fs::write(&keyrings.secret, gpg(&["--export-secret-keys"])).expect("secring.gpg");
    std::fs::write(&keyrings.public, gpg(&["--export"])).expect("pubring.gpg");
    Some(keyrings)
}
