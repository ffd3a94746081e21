//! `chartkit serve` under hostile uploads: small uploads that expand hugely cost bounded
//! memory, each gets a 4xx, and the server goes on serving.

use std::time::Duration;

use chartkit_tests::TestContext;
use chartkit_tests::archive::{Entry, build};
use chartkit_tests::server::{ServeProcess, chart_package};

/// A tar of Chart.yaml and 35 files of 5 MiB zeros (175 MiB), about 180 KB compressed:
/// each file is within Helm's per-file limit, together they are far beyond its total.
fn bomb(path_of: impl Fn(usize) -> String) -> Vec<u8> {
    let zeros = vec![0u8; 5 * 1024 * 1024];
    let names: Vec<String> = (0..35).map(path_of).collect();
    let mut entries = vec![Entry::File(
        "bomb/Chart.yaml",
        b"apiVersion: v2\nname: bomb\nversion: 0.1.0\n",
    )];
    entries.extend(names.iter().map(|name| Entry::File(name, &zeros)));
    // Compressed again at the best level, as an attacker would.
    let mut tar = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(&build(&entries)[..]),
        &mut tar,
    )
    .unwrap();
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    std::io::Write::write_all(&mut encoder, &tar).unwrap();
    encoder.finish().unwrap()
}

/// The most memory the process has held (VmHWM), in bytes.
fn peak_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status");
    kib * 1024
}

fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap()
}

#[test]
fn fifty_concurrent_decompression_bombs_keep_the_server_under_300_mib() {
    if !std::path::Path::new("/proc/self/status").exists() {
        eprintln!("skipping: no /proc to read the server's peak memory from");
        return;
    }
    let context = TestContext::new();
    let storage = context.path("storage");
    std::fs::create_dir_all(&storage).unwrap();
    let server = ServeProcess::start(
        context.chartkit(),
        &[storage.to_str().unwrap()],
        context.dir(),
    );
    // Files Helm's loader only lists, then files it reads (values of subcharts), which
    // a check has to keep until the archive is known to be good.
    for bomb in [
        bomb(|i| format!("bomb/files/zeros-{i}")),
        bomb(|i| format!("bomb/charts/sub{i}/values.yaml")),
    ] {
        assert!(bomb.len() < 200_000, "{} bytes", bomb.len());
        let url = format!("{}/api/charts", server.url);
        let statuses: Vec<u16> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..50)
                .map(|_| {
                    let (url, bomb) = (&url, &bomb);
                    scope.spawn(move || {
                        // A 503 says the upload turns stayed taken past the server's wait
                        // (a loaded machine): a client respecting it sends again later.
                        let mut status = 0;
                        for _ in 0..5 {
                            status = client()
                                .post(url)
                                .body(bomb.clone())
                                .send()
                                .map(|r| r.status().as_u16())
                                .unwrap_or(0);
                            if status != 503 {
                                break;
                            }
                            std::thread::sleep(std::time::Duration::from_secs(1));
                        }
                        status
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(
            statuses.iter().all(|s| (400..500).contains(s)),
            "{statuses:?}"
        );
    }
    let peak = peak_memory(server.child.id());
    eprintln!("peak memory of the server: {} MiB", peak >> 20);
    assert!(peak < 300 << 20, "peak memory {} MiB", peak >> 20);
    // Nothing was stored, and the server serves normally.
    assert_eq!(std::fs::read_dir(&storage).unwrap().count(), 0);
    let created = client()
        .post(format!("{}/api/charts", server.url))
        .body(chart_package("fine", "1.0.0"))
        .send()
        .unwrap();
    assert_eq!(created.status().as_u16(), 201);
    let index = client()
        .get(format!("{}/index.yaml", server.url))
        .send()
        .unwrap()
        .text()
        .unwrap();
    assert!(index.contains("  fine:\n"), "{index}");
}
