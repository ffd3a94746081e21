//! Running `chartkit serve` (and an S3 server for it) as real processes on 127.0.0.1.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `chartkit serve`; killed when dropped.
pub struct ServeProcess {
    pub child: Child,
    /// `http://127.0.0.1:PORT` (or https).
    pub url: String,
    pub stderr_log: PathBuf,
    /// What the server printed before it listened (what it found in its storage).
    pub startup: Vec<String>,
}

impl ServeProcess {
    /// Starts `chartkit serve ARGS --addr 127.0.0.1:0` from `command` (a hermetic chartkit
    /// command) and waits for its "Listening on" line.
    pub fn start(command: Command, args: &[&str], log_dir: &Path) -> ServeProcess {
        ServeProcess::start_at(command, args, "127.0.0.1:0", log_dir)
    }

    /// Starts `chartkit serve STORAGE EXTRA...` over a directory (made if missing) from
    /// `ctx`'s hermetic chartkit, logging into `ctx`'s directory.
    pub fn start_on(ctx: &crate::TestContext, storage: &Path, extra: &[&str]) -> ServeProcess {
        std::fs::create_dir_all(storage).expect("storage directory");
        let mut args = vec![storage.to_str().expect("a UTF-8 path")];
        args.extend_from_slice(extra);
        ServeProcess::start(ctx.chartkit(), &args, ctx.dir())
    }

    /// Starts `chartkit serve ARGS --addr ADDR` and waits for its "Listening on" line.
    pub fn start_at(
        mut command: Command,
        args: &[&str],
        addr: &str,
        log_dir: &Path,
    ) -> ServeProcess {
        command.arg("serve").args(args).args(["--addr", addr]);
        ServeProcess::spawn(command, log_dir)
    }

    /// Runs `command` as it is (a server started another way, such as through a
    /// `chartmuseum` link) and waits for its "Listening on" line.
    pub fn spawn(command: Command, log_dir: &Path) -> ServeProcess {
        ServeProcess::try_spawn(command, log_dir)
            .unwrap_or_else(|log| panic!("chartkit serve did not start: {log}"))
    }

    /// [`ServeProcess::spawn`] for a server that may refuse its settings: what it logged
    /// when it did not start.
    pub fn try_spawn(mut command: Command, log_dir: &Path) -> Result<ServeProcess, String> {
        static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let stderr_log = log_dir.join(format!("serve-{}-{n}.log", std::process::id()));
        let log = std::fs::File::create(&stderr_log).expect("server log file");
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("start chartkit serve");
        let stdout = child.stdout.take().expect("server stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut startup = Vec::new();
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("Listening on ") {
                    let _ = tx.send((url.trim_end_matches('/').to_owned(), startup.clone()));
                }
                startup.push(line);
            }
        });
        let (url, startup) = match rx.recv_timeout(Duration::from_secs(120)) {
            Ok(found) => found,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(std::fs::read_to_string(&stderr_log).unwrap_or_default());
            }
        };
        Ok(ServeProcess {
            child,
            url,
            stderr_log,
            startup,
        })
    }

    /// `127.0.0.1:PORT`: the server as an OCI registry host.
    pub fn host(&self) -> String {
        let host = self.url.trim_start_matches("http://");
        host.trim_start_matches("https://").to_owned()
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr_log).unwrap_or_default()
    }

    /// Sends SIGTERM and waits for the exit status.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("run kill");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for server") {
                return status;
            }
            assert!(Instant::now() < deadline, "server ignored SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A moto S3 server on 127.0.0.1, if `moto_server` is installed (`pip install 'moto[server]'`).
pub struct S3Server {
    child: Child,
    pub endpoint: String,
}

impl S3Server {
    pub fn start_or_skip(test: &str) -> Option<S3Server> {
        let Some(program) = find_on_path("moto_server") else {
            crate::skip(
                test,
                "moto_server is not installed (pip install 'moto[server]')",
            );
            return None;
        };
        let port = free_port();
        let child = Command::new(program)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start moto_server");
        let endpoint = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "moto_server did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(S3Server { child, endpoint })
    }

    /// Creates a bucket (moto accepts any credentials).
    pub fn create_bucket(&self, bucket: &str) {
        let response = reqwest::blocking::Client::new()
            .put(format!("{}/{bucket}", self.endpoint))
            .send()
            .expect("create bucket");
        assert!(
            response.status().is_success(),
            "create bucket: {}",
            response.status()
        );
    }

    /// `chartkit serve ARGS` with this server's endpoint and credentials, from `ctx`'s
    /// hermetic chartkit.
    pub fn serve(&self, ctx: &crate::TestContext, args: &[&str]) -> ServeProcess {
        let mut command = ctx.chartkit();
        self.configure(&mut command);
        ServeProcess::start(command, args, ctx.dir())
    }

    /// Points a chartkit command at this server.
    pub fn configure(&self, command: &mut Command) {
        command
            .env("AWS_ENDPOINT_URL", &self.endpoint)
            .env("AWS_ACCESS_KEY_ID", "test")
            .env("AWS_SECRET_ACCESS_KEY", "test")
            .env("AWS_REGION", "us-east-1");
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// A blocking HTTP client for talking to a server a test started: a minute per request,
/// long enough for a loaded machine, short enough that a hung server fails the test.
pub fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(std::time::Duration::from_secs(60))
        .build()
        .unwrap()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

/// A small valid chart package: `name`/`version` with one ConfigMap template.
pub fn chart_package(name: &str, version: &str) -> Vec<u8> {
    let chart_yaml = format!(
        "apiVersion: v2\nname: {name}\nversion: {version}\ndescription: test chart {name}\n"
    );
    let template = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n";
    crate::archive::build(&[
        crate::archive::Entry::File(&format!("{name}/Chart.yaml"), chart_yaml.as_bytes()),
        crate::archive::Entry::File(&format!("{name}/values.yaml"), b"a: 1\n"),
        crate::archive::Entry::File(
            &format!("{name}/templates/configmap.yaml"),
            template.as_bytes(),
        ),
    ])
}

/// Writes an htpasswd file at `path` with each user's bcrypt hash (cost 4, fast for tests),
/// as `--basic-auth-file` and the registry read it.
pub fn write_htpasswd(path: &Path, users: &[(&str, &str)]) {
    let lines: String = users
        .iter()
        .map(|(user, password)| format!("{user}:{}\n", bcrypt::hash(password, 4).expect("bcrypt")))
        .collect();
    std::fs::write(path, lines).expect("write htpasswd");
}

/// `POST URL/api/charts` with a package as the body (ChartMuseum's upload).
pub fn upload(url: &str, package: Vec<u8>) -> reqwest::blocking::Response {
    client()
        .post(format!("{url}/api/charts"))
        .body(package)
        .send()
        .expect("upload")
}

/// The text of `URL/index.yaml`, which must be served (200).
pub fn index_yaml(url: &str) -> String {
    let response = client()
        .get(format!("{url}/index.yaml"))
        .send()
        .expect("index.yaml");
    let status = response.status();
    let text = response.text().expect("index.yaml's body");
    assert_eq!(status, 200, "GET {url}/index.yaml: {text}");
    text
}
