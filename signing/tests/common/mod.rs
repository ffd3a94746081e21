//! Helpers for tests that run the real `helm` and `gpg`. A test that needs a missing tool
//! prints why it is skipped and returns.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

/// `helm` from `$CHARTKIT_PEERS` or `~/.cache/chartkit-peers` (where
/// `shared/tools/get-peers` installs it), else from `PATH`.
pub fn helm() -> Option<PathBuf> {
    let dir = std::env::var_os("CHARTKIT_PEERS")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/chartkit-peers")));
    if let Some(path) = dir.map(|d| d.join("helm")).filter(|p| p.is_file()) {
        return Some(path);
    }
    on_path("helm")
}

pub fn gpg() -> Option<PathBuf> {
    on_path("gpg")
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Returns the tools a test needs, or prints the reason it is skipped.
#[macro_export]
macro_rules! require {
    ($($tool:ident),+) => {
        ($(
            match common::$tool() {
                Some(path) => path,
                None => {
                    eprintln!(
                        "SKIPPED: `{}` is not installed ({})",
                        stringify!($tool),
                        match stringify!($tool) {
                            "helm" => "run shared/tools/get-peers",
                            _ => "apt-get install -y gnupg",
                        }
                    );
                    return;
                }
            }
        ),+)
    };
}

pub fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A throwaway GnuPG home directory.
pub struct Gpg {
    pub bin: PathBuf,
    pub home: TempDir,
}

impl Gpg {
    pub fn new(bin: PathBuf) -> Self {
        let home = tempfile::Builder::new().prefix("gnupg").tempdir().unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        Gpg { bin, home }
    }

    pub fn cmd(&self) -> Command {
        let mut cmd = Command::new(&self.bin);
        cmd.env("GNUPGHOME", self.home.path()).args([
            "--batch",
            "--no-tty",
            "--pinentry-mode",
            "loopback",
        ]);
        cmd
    }

    /// Creates a key for `uid` with `algo` (`ed25519`, `rsa3072`) protected by
    /// `passphrase` (empty for none); returns its fingerprint.
    pub fn generate(&self, uid: &str, algo: &str, passphrase: &str) -> String {
        run(self.cmd().args([
            "--passphrase",
            passphrase,
            "--quick-gen-key",
            uid,
            algo,
            "sign",
            "never",
        ]));
        self.fingerprint(uid)
    }

    pub fn fingerprint(&self, uid: &str) -> String {
        let out = run(self.cmd().args(["--with-colons", "--list-keys", uid]));
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("fpr:::::::::"))
            .map(|f| f.trim_end_matches(':').to_owned())
            .expect("gpg listed no fingerprint")
    }

    pub fn import(&self, key: &[u8]) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("key");
        std::fs::write(&file, key).unwrap();
        run(self.cmd().arg("--import").arg(&file));
    }

    /// `gpg --export`, binary unless `armor`.
    pub fn export(&self, armor: bool) -> Vec<u8> {
        let mut cmd = self.cmd();
        if armor {
            cmd.arg("--armor");
        }
        run(cmd.arg("--export")).stdout
    }

    /// `gpg --export-secret-keys`: the legacy secret keyring Helm's `--keyring` reads.
    pub fn export_secret(&self, passphrase: &str) -> Vec<u8> {
        run(self
            .cmd()
            .args(["--passphrase", passphrase, "--export-secret-keys"]))
        .stdout
    }
}

/// A chart made with `helm create` and packaged with `helm package`, with keywords,
/// maintainers and sources so its metadata has YAML lines starting with `-` (which the
/// clearsign framing must dash-escape).
pub struct Chart {
    pub dir: TempDir,
    pub package: PathBuf,
    pub file_name: String,
    pub metadata_yaml: String,
}

pub fn helm_chart(helm: &Path) -> Chart {
    let dir = tempfile::tempdir().unwrap();
    run(Command::new(helm)
        .current_dir(dir.path())
        .args(["create", "signme"]));
    let chart_yaml = dir.path().join("signme/Chart.yaml");
    let mut text = std::fs::read_to_string(&chart_yaml).unwrap();
    text.push_str(
        "keywords:\n- provenance\n- signing\nmaintainers:\n- name: Jane Doe\n  email: jane@example.com\nsources:\n- https://example.com/signme\n",
    );
    std::fs::write(&chart_yaml, text).unwrap();
    let out_dir = dir.path().join("out");
    run(Command::new(helm)
        .current_dir(dir.path())
        .args(["package", "signme", "-d"])
        .arg(&out_dir));
    let file_name = "signme-0.1.0.tgz".to_owned();
    let package = out_dir.join(&file_name);
    let metadata_yaml =
        String::from_utf8(run(Command::new(helm).arg("show").arg("chart").arg(&package)).stdout)
            .unwrap();
    Chart {
        dir,
        package,
        file_name,
        metadata_yaml,
    }
}

/// Runs `helm verify --keyring KEYRING PACKAGE`, returning (success, stdout + stderr).
pub fn helm_verify(helm: &Path, keyring: &Path, package: &Path) -> (bool, String) {
    let out = Command::new(helm)
        .arg("verify")
        .arg("--keyring")
        .arg(keyring)
        .arg(package)
        .output()
        .unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}
