//! Support for end-to-end tests: a hermetic context that runs the `chartkit` binary, the
//! reference `helm` when installed, the shared corpus, and archive builders for fixtures.

pub mod archive;
pub mod browser;
pub mod chartmuseum;
pub mod charts;
pub mod cluster_state;
pub mod corpus;
pub mod counting_server;
pub mod emulators;
pub mod gpg;
pub mod memory;
pub mod peers;
pub mod raw_http;
pub mod records;
pub mod registry;
pub mod sandbox;
pub mod server;
pub mod shells;
pub mod token_service;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// Skips a test whose peer (helm, moto, the corpus) is missing: prints why and returns,
/// except under CI (`CI=true`), where a missing peer is a failure, not a skip.
pub fn skip(test: &str, reason: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{test} cannot run under CI: {reason}");
    }
    eprintln!("skipping {test}: {reason}");
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is inside the workspace")
        .to_path_buf()
}

/// The `chartkit` binary of this build, built on first use if `cargo test` did not build
/// it already (it does when the whole workspace is tested).
pub fn chartkit_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable path");
        // target/<profile>/deps/<test> → target/<profile>/chartkit
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("target profile directory");
        let bin = profile_dir.join(format!("chartkit{}", std::env::consts::EXE_SUFFIX));
        let profile = profile_dir
            .file_name()
            .and_then(OsStr::to_str)
            .unwrap_or("debug");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        build
            .current_dir(workspace_root())
            .args(["build", "--quiet", "-p", "chartkit", "--bin", "chartkit"]);
        if profile == "release" {
            build.arg("--release");
        }
        let status = build
            .status()
            .expect("run cargo build for the chartkit binary");
        assert!(status.success(), "building the chartkit binary failed");
        assert!(
            bin.exists(),
            "chartkit binary not found at {}",
            bin.display()
        );
        bin
    })
}

/// A temporary, hermetic place to run commands.
pub struct TestContext {
    pub temp: tempfile::TempDir,
}

impl Default for TestContext {
    fn default() -> Self {
        Self::new()
    }
}

impl TestContext {
    pub fn new() -> TestContext {
        TestContext {
            temp: tempfile::Builder::new()
                .prefix("chartkit-e2e")
                .tempdir()
                .expect("temp dir"),
        }
    }

    /// The working directory for commands.
    pub fn dir(&self) -> &Path {
        self.temp.path()
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir().join(relative)
    }

    pub fn hermetic(&self, program: &Path) -> Command {
        let mut command = Command::new(program);
        command.current_dir(self.dir());
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy().into_owned();
            if key.starts_with("CHARTKIT_")
                || key.starts_with("HELM_")
                || key == "SOURCE_DATE_EPOCH"
                || key == "KUBECONFIG"
            {
                command.env_remove(key);
            }
        }
        let home = self.dir().join(".home");
        std::fs::create_dir_all(&home).expect("home dir");
        command
            .env("HOME", &home)
            .env("XDG_CACHE_HOME", home.join("cache"))
            .env("XDG_CONFIG_HOME", home.join("config"));
        command
            .env("XDG_DATA_HOME", home.join("data"))
            .env("NO_COLOR", "1");
        command
    }

    /// A `chartkit` command in this context.
    pub fn chartkit(&self) -> Command {
        self.hermetic(chartkit_bin())
    }

    /// A `chartkit` command that a shell starts after running `script`, for process
    /// settings that only a shell makes without unsafe code (`ulimit -n 256`); the
    /// shell then `exec`s chartkit with the command's arguments, so the process is
    /// chartkit itself.
    pub fn chartkit_after_shell(&self, script: &str) -> Command {
        let mut command = self.hermetic(Path::new("sh"));
        command
            .arg("-c")
            .arg(format!("{script} && exec \"$0\" \"$@\""))
            .arg(chartkit_bin());
        command
    }

    /// A `helm` command in this context, if helm is installed.
    pub fn helm(&self) -> Option<Command> {
        peers::helm().map(|helm| self.hermetic(&helm))
    }

    /// [`TestContext::helm`], with a skip message for `test` when helm is not installed.
    pub fn helm_or_skip(&self, test: &str) -> Option<Command> {
        let command = self.helm();
        if command.is_none() {
            skip(
                test,
                "helm is not installed (run ../shared/tools/get-peers)",
            );
        }
        command
    }

    /// Writes a chart named `demo` (apiVersion v2, version 0.1.0) with the given files
    /// (paths inside the chart) and returns its directory.
    pub fn demo_chart(&self, files: &[(&str, &str)]) -> String {
        let dir = self.path("demo");
        std::fs::create_dir_all(dir.join("templates")).expect("chart directory");
        std::fs::write(
            dir.join("Chart.yaml"),
            "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
        )
        .expect("write Chart.yaml");
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().expect("a file in the chart"))
                .expect("chart directory");
            std::fs::write(path, text).expect("write chart file");
        }
        dir.display().to_string()
    }

    /// Runs `chartkit ARGS` and returns its output.
    pub fn run(&self, args: &[&str]) -> Output {
        self.chartkit().args(args).output().expect("run chartkit")
    }

    /// Every file under the context directory, relative, sorted (for "nothing was written"
    /// checks).
    pub fn tree(&self) -> Vec<String> {
        let mut files = Vec::new();
        collect(self.dir(), self.dir(), &mut files);
        files.sort();
        files
    }
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.file_name() == Some(OsStr::new(".home")) {
            continue;
        }
        out.push(
            path.strip_prefix(root)
                .unwrap_or(&path)
                .display()
                .to_string(),
        );
        if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            collect(root, &path, out);
        }
    }
}

/// Text of stdout.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Text of stderr.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Lower-case hex sha256 of a file.
pub fn sha256_file(path: &Path) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(
        std::fs::read(path).expect("read file to hash"),
    ))
}

/// A program on PATH, if there is one.
pub fn on_path(program: &str) -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
}

/// The `Digest: sha256:...` line a push or pull prints (helm and chartkit alike).
pub fn digest_line(output: &Output) -> String {
    let text = format!("{}{}", stdout(output), stderr(output));
    text.lines()
        .find_map(|l| l.strip_prefix("Digest: "))
        .unwrap_or_else(|| panic!("no Digest line in {text}"))
        .trim()
        .to_owned()
}
