//! Headless Chromium driven through chromedriver (WebDriver), for tests of what a browser
//! does with the server's pages: which scripts run, what a person sees, screenshots.
//!
//! Both come from Debian's `chromium` and `chromium-driver` packages (`.ci/run` installs
//! them). A test without them skips with a printed reason, and fails under `CI=true`, as
//! the helm-backed tests do.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::wd::Capabilities;

/// The window every test sees, so screenshots are the same size on every machine.
pub const WINDOW_SIZE: (u32, u32) = (1280, 1000);

/// A headless Chromium session; the driver (and with it the browser) is killed on drop.
pub struct Browser {
    pub client: fantoccini::Client,
    _driver: Driver,
    /// The browser's profile, fresh for each session so nothing is cached between tests.
    _profile: tempfile::TempDir,
}

/// The chromedriver process, with every browser it started: killed when dropped, even when
/// a test panicked before closing its session.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        // The driver leads its own process group, which the browsers it starts join.
        let group = format!("-{}", self.0.id());
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stderr(Stdio::null())
            .status();
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Browser {
    /// Starts chromedriver on a port of its choosing on 127.0.0.1 and opens a headless
    /// Chromium session, or prints why `test` is skipped and returns `None`.
    pub async fn start_or_skip(test: &str) -> Option<Browser> {
        let Some(chromium) = chromium() else {
            crate::skip(
                test,
                "chromium is not installed (apt-get install chromium chromium-driver)",
            );
            return None;
        };
        let Some(chromedriver) = crate::on_path("chromedriver") else {
            crate::skip(
                test,
                "chromedriver is not installed (apt-get install chromium-driver)",
            );
            return None;
        };
        Some(Browser::start(&chromium, &chromedriver).await)
    }

    async fn start(chromium: &Path, chromedriver: &Path) -> Browser {
        let mut command = Command::new(chromedriver);
        // `--port=0`: the driver binds a free loopback port itself and prints it, so no
        // other process can take the port between our choosing it and the driver binding.
        command
            .args(["--port=0", "--allowed-ips=127.0.0.1"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut driver =
            Driver(command.spawn().unwrap_or_else(|error| {
                panic!("cannot start `{}`: {error}", chromedriver.display())
            }));
        let port = driver_port(&mut driver.0);
        wait_until_listening(port);
        let profile = tempfile::Builder::new()
            .prefix("chartkit-chromium")
            .tempdir()
            .expect("browser profile directory");
        let client = connect(port, chromium, profile.path()).await;
        client
            .set_window_size(WINDOW_SIZE.0, WINDOW_SIZE.1)
            .await
            .expect("set the browser window size");
        Browser {
            client,
            _driver: driver,
            _profile: profile,
        }
    }

    /// Opens `url` and waits for it to load.
    pub async fn goto(&self, url: &str) {
        self.client
            .goto(url)
            .await
            .unwrap_or_else(|error| panic!("browser cannot open {url}: {error}"));
    }

    /// Runs `script` in the page (a function body: `return ...;`) and returns its value.
    pub async fn eval(&self, script: &str) -> serde_json::Value {
        self.client
            .execute(script, Vec::new())
            .await
            .unwrap_or_else(|error| panic!("script `{script}` failed in the page: {error}"))
    }

    /// The text of an alert, confirm or prompt dialog the page opened, if one is open.
    pub async fn open_dialog(&self) -> Option<String> {
        match self.client.get_alert_text().await {
            Ok(text) => Some(text),
            Err(error) if error.is_no_such_alert() => None,
            Err(error) => panic!("cannot ask the browser for a dialog: {error}"),
        }
    }

    /// Writes what the window shows to `target/web-screenshots/NAME.png` and returns the
    /// path.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self
            .client
            .screenshot()
            .await
            .unwrap_or_else(|error| panic!("screenshot {name}: {error}"));
        let dir = screenshot_dir();
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|error| panic!("create `{}`: {error}", dir.display()));
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png)
            .unwrap_or_else(|error| panic!("write `{}`: {error}", path.display()));
        path
    }

    /// Ends the session (the browser quits) and stops the driver.
    pub async fn close(self) {
        let _ = self.client.close().await;
    }
}

/// Chromium on PATH, under the names distributions give it.
pub fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find_map(crate::on_path)
}

/// Where screenshots go: `web-screenshots/` in the build's target directory
/// (`CARGO_TARGET_DIR`, or the one holding this test binary).
pub fn screenshot_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            // target/<profile>/deps/<test binary>
            std::env::current_exe()
                .ok()
                .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.to_path_buf()))
                .unwrap_or_else(|| crate::workspace_root().join("target"))
        });
    target.join("web-screenshots")
}

/// Reads the driver's "started successfully on port N" line.
fn driver_port(driver: &mut Child) -> u16 {
    let stdout = driver.stdout.take().expect("chromedriver stdout");
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(port) = line
                .split("on port ")
                .nth(1)
                .and_then(|rest| rest.trim_end_matches('.').trim().parse::<u16>().ok())
                .filter(|port| *port != 0)
            {
                let _ = sender.send(Ok(port));
            }
            seen.push(line);
        }
        let _ = sender.send(Err(seen.join("\n")));
    });
    match receiver.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok(port)) => port,
        Ok(Err(output)) => panic!("chromedriver exited without listening:\n{output}"),
        Err(_) => panic!("chromedriver did not say which port it listens on within 60 s"),
    }
}

async fn connect(port: u16, chromium: &Path, profile: &Path) -> fantoccini::Client {
    let mut capabilities = Capabilities::new();
    capabilities.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({
            "binary": chromium,
            "args": [
                "--headless=new",
                // Tests run as root in CI, where Chromium's sandbox refuses to start.
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--hide-scrollbars",
                format!("--window-size={},{}", WINDOW_SIZE.0, WINDOW_SIZE.1),
                format!("--user-data-dir={}", profile.display()),
            ],
        }),
    );
    let address = format!("http://127.0.0.1:{port}");
    fantoccini::ClientBuilder::rustls()
        .expect("TLS roots for the WebDriver client")
        .capabilities(capabilities)
        .connect(&address)
        .await
        .unwrap_or_else(|error| {
            panic!("no browser session from chromedriver at {address}: {error}")
        })
}

/// Waits until the driver accepts connections on `port`: it prints the port a moment
/// before it answers on a loaded machine.
fn wait_until_listening(port: u16) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "chromedriver did not answer on 127.0.0.1:{port} within 30 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
