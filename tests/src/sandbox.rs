//! A `chartkit sandbox up` process for end-to-end tests, on an ephemeral port of
//! 127.0.0.1, with a kubeconfig of its own, and `kubectl`/`helm` commands pointed at it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::TestContext;

/// A running sandbox; stopped (killed) when dropped.
pub struct SandboxProcess {
    child: Child,
    /// `http://127.0.0.1:PORT` (or https with `--tls`).
    pub url: String,
    /// The kubeconfig holding its `chartkit-sandbox` context.
    pub kubeconfig: PathBuf,
    log: PathBuf,
}

impl SandboxProcess {
    /// Starts `chartkit sandbox up` in `ctx` with `extra` arguments and waits until it
    /// reports its address.
    pub fn start(ctx: &TestContext, extra: &[&str]) -> SandboxProcess {
        let dir = ctx.path(&format!("sandbox-{}", std::process::id()));
        let dir = unique(dir);
        std::fs::create_dir_all(&dir).expect("sandbox dir");
        let kubeconfig = dir.join("kubeconfig");
        let state = dir.join("state.json");
        let log = dir.join("sandbox.log");
        let log_file = std::fs::File::create(&log).expect("sandbox log");
        let child = ctx
            .chartkit()
            .args([
                "sandbox",
                "up",
                "--addr",
                "127.0.0.1:0",
                "--pod-ready-delay",
                "200ms",
            ])
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .arg("--state-file")
            .arg(&state)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().expect("log"))
            .stderr(log_file)
            .spawn()
            .expect("start chartkit sandbox up");
        let mut process = SandboxProcess {
            child,
            url: String::new(),
            kubeconfig,
            log,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(bytes) = std::fs::read(&state)
                && let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes)
            {
                process.url = v["url"]
                    .as_str()
                    .expect("url in the state file")
                    .to_string();
                return process;
            }
            if let Ok(Some(status)) = process.child.try_wait() {
                panic!("chartkit sandbox up exited ({status}):\n{}", process.log());
            }
            assert!(
                Instant::now() < deadline,
                "the sandbox did not start:\n{}",
                process.log()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// chartkit pointed at this sandbox (its kubeconfig in KUBECONFIG).
    pub fn chartkit(&self, ctx: &TestContext) -> Command {
        let mut command = ctx.chartkit();
        command.env("KUBECONFIG", &self.kubeconfig);
        command
    }

    /// What the sandbox printed.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// A kubectl command pointed at the sandbox, or `None` (with a skip message) when
    /// kubectl is not installed.
    pub fn kubectl(&self, ctx: &TestContext, test: &str) -> Option<Command> {
        let kubectl = crate::peers::kubectl_or_skip(test)?;
        let mut c = ctx.hermetic(&kubectl);
        c.env("KUBECONFIG", &self.kubeconfig);
        Some(c)
    }

    /// A helm command pointed at the sandbox (its own config, cache and data homes), or
    /// `None` (with a skip message) when helm is not installed.
    pub fn helm(&self, ctx: &TestContext, test: &str) -> Option<Command> {
        let helm = crate::peers::helm_or_skip(test)?;
        let mut c = ctx.hermetic(&helm);
        c.env("KUBECONFIG", &self.kubeconfig);
        Some(c)
    }

    /// Kills the sandbox process at once (SIGKILL), as a crash would.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for SandboxProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn unique(base: PathBuf) -> PathBuf {
    let mut n = 0;
    loop {
        let candidate = if n == 0 {
            base.clone()
        } else {
            PathBuf::from(format!("{}-{n}", base.display()))
        };
        if !candidate.exists() {
            return candidate;
        }
        n += 1;
    }
}

/// Runs a command and returns its output, failing the test with both streams when it
/// does not succeed.
pub fn run_ok(command: &mut Command) -> Output {
    let out = command.output().expect("run command");
    assert!(
        out.status.success(),
        "{:?} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        command,
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("directory");
    }
    std::fs::write(&path, text).expect("write file");
    path
}
