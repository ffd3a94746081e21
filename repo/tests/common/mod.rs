//! Test support: the real helm as an oracle, run hermetically against a repository served
//! from 127.0.0.1.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The reference helm, or `None` (the caller prints a skip message).
pub fn helm() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("CHARTKIT_HELM").map(PathBuf::from),
        std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/chartkit-peers/helm")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|p| p.is_file())
        .or_else(|| {
            let out = Command::new("helm").arg("version").output().ok()?;
            out.status.success().then(|| PathBuf::from("helm"))
        })
}

/// The corpus directory (`CHARTKIT_CORPUS`, default `../shared/corpus` from the workspace).
pub fn corpus() -> Option<PathBuf> {
    let dir = std::env::var_os("CHARTKIT_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus"));
    dir.join("charts").is_dir().then_some(dir)
}

/// Serves the files of `root` over HTTP on an ephemeral 127.0.0.1 port for the rest of the
/// test process. Returns the base URL.
pub fn serve(root: &Path) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let url = format!("http://{}", listener.local_addr().unwrap());
    let root = root.to_owned();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let root = root.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request = String::new();
                if reader.read_line(&mut request).is_err() {
                    return;
                }
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                let path = request.split(' ').nth(1).unwrap_or("/");
                let path = path.split('?').next().unwrap_or("").trim_start_matches('/');
                let file = root.join(path);
                let response = match std::fs::read(&file) {
                    Ok(body) if !path.contains("..") => {
                        let mut r = format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                            body.len()
                        )
                        .into_bytes();
                        r.extend(body);
                        r
                    }
                    _ => {
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            .to_vec()
                    }
                };
                let _ = stream.write_all(&response);
            });
        }
    });
    url
}

/// helm with every HELM_* directory in `home`, nothing from the user's environment.
pub struct Helm {
    pub binary: PathBuf,
    pub home: PathBuf,
}

impl Helm {
    pub fn new(binary: PathBuf, home: &Path) -> Helm {
        Helm {
            binary,
            home: home.to_owned(),
        }
    }

    pub fn run(&self, args: &[&str]) -> Output {
        let mut command = Command::new(&self.binary);
        command.args(args).env_clear();
        command
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("HELM_CONFIG_HOME", self.home.join("config"))
            .env("HELM_CACHE_HOME", self.home.join("cache"))
            .env("HELM_DATA_HOME", self.home.join("data"));
        command.output().expect("run helm")
    }

    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "helm {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// A minimal chart package: only `NAME/Chart.yaml`, with the given version and description.
pub fn chart_package(name: &str, version: &str, description: &str) -> Vec<u8> {
    let chart_yaml =
        format!("apiVersion: v2\nname: {name}\nversion: {version}\ndescription: {description}\n");
    let mut tar = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(chart_yaml.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    tar.append_data(
        &mut header,
        format!("{name}/Chart.yaml"),
        chart_yaml.as_bytes(),
    )
    .unwrap();
    let tar = tar.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&tar).unwrap();
    gz.finish().unwrap()
}
