//! A repository cannot exhaust memory or disk (issue #29): an index download is bounded
//! (`--max-index-size`, CHARTKIT_MAX_INDEX_SIZE, 512 MiB by default), reading an index
//! holds at most a chart's text at a time (or a small index whole), and no temporary
//! file outlives a failure, even one left by a run that was killed.
//!
//! The indexes are generated as they are served, never written to disk: the one that
//! broke was 2 GiB, and made `repo update` grow to 13 GB and abort.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use chartkit_tests::TestContext;
use chartkit_tests::memory::run_measuring_peak;

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;
/// What any of these commands may reach; the index reading alone was 13 GB.
const PEAK_LIMIT: u64 = 300 * MIB;

/// The shape of a generated index.
#[derive(Clone, Copy)]
enum Shape {
    /// A valid index of one chart, and nothing more.
    Small,
    /// Charts in name order, twenty versions each, written as helm writes an index.
    Realistic,
    /// One chart whose versions go on to the end.
    OneEnormousChart,
    /// One line that goes on to the end.
    OneHugeLine,
    /// Flow sequences nested ever deeper, on lines of their own, to the end.
    DeeplyNested,
}

/// Serves `GET /index.yaml` as `size` bytes of an index of `shape`, generated as it is
/// written; with `announce`, a Content-Length says the size up front, otherwise the end
/// of the connection ends the body. Anything else is 404.
fn serve(shape: Shape, size: u64, announce: bool) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || answer(stream, shape, size, announce));
        }
    });
    url
}

fn answer(mut stream: TcpStream, shape: Shape, size: u64, announce: bool) {
    let mut request_line = String::new();
    let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
            break;
        }
    }
    if !request_line.starts_with("GET /index.yaml ") {
        let _ = stream
            .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
    }
    let length = if announce {
        format!("Content-Length: {size}\r\n")
    } else {
        String::new()
    };
    let head =
        format!("HTTP/1.1 200 OK\r\nContent-Type: text/yaml\r\n{length}Connection: close\r\n\r\n");
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    let mut generator = Generator::new(shape);
    let mut sent = 0u64;
    let mut buffer = Vec::with_capacity(1 << 20);
    while sent < size {
        buffer.clear();
        if !generator.fill(&mut buffer, 1 << 20) && buffer.is_empty() {
            return;
        }
        let take = buffer.len().min((size - sent) as usize);
        // The client stops reading at its limit: the write fails, and that is the end.
        if stream.write_all(&buffer[..take]).is_err() {
            return;
        }
        sent += take as u64;
    }
}

/// Index text of a shape, a buffer at a time.
struct Generator {
    shape: Shape,
    started: bool,
    chart: u64,
}

impl Generator {
    fn new(shape: Shape) -> Generator {
        Generator {
            shape,
            started: false,
            chart: 0,
        }
    }

    /// Appends at least `at_least` bytes of the index to `out`, or the rest of it; false
    /// once there is no more.
    fn fill(&mut self, out: &mut Vec<u8>, at_least: usize) -> bool {
        if let Shape::Small = self.shape {
            if !self.started {
                self.started = true;
                out.extend_from_slice(b"apiVersion: v1\nentries:\n  web:\n  - name: web\n    version: 1.0.0\n    urls: [web-1.0.0.tgz]\n");
            }
            return false;
        }
        if !self.started {
            self.started = true;
            out.extend_from_slice(b"apiVersion: v1\nentries:\n");
            match self.shape {
                Shape::Small | Shape::Realistic => {}
                Shape::OneEnormousChart => out.extend_from_slice(b"  huge:\n"),
                Shape::OneHugeLine => out
                    .extend_from_slice(b"  huge:\n  - {name: huge, version: 1.0.0, description: "),
                Shape::DeeplyNested => out.extend_from_slice(b"  huge:\n  - "),
            }
        }
        while out.len() < at_least {
            match self.shape {
                Shape::Small => {}
                Shape::Realistic => {
                    let name = format!("chart-{:07}", self.chart);
                    self.chart += 1;
                    out.extend_from_slice(format!("  {name}:\n").as_bytes());
                    for patch in (0..20).rev() {
                        let version = format!("1.{}.{patch}", self.chart % 50);
                        out.extend_from_slice(format!(
                            "  - apiVersion: v2\n    appVersion: {version}\n    created: \"2024-05-01T10:00:00.123456789Z\"\n    description: A generated chart, one of very many\n    digest: {:064x}\n    home: https://example.com/charts\n    keywords:\n    - generated\n    maintainers:\n    - email: team@example.com\n      name: team\n    name: {name}\n    type: application\n    urls:\n    - https://charts.example.com/{name}-{version}.tgz\n    version: {version}\n",
                            self.chart * 100 + patch
                        ).as_bytes());
                    }
                }
                Shape::OneEnormousChart => {
                    let n = self.chart;
                    self.chart += 1;
                    out.extend_from_slice(
                        format!("  - name: huge\n    version: 1.0.{n}\n    urls: [https://charts.example.com/huge-1.0.{n}.tgz]\n")
                            .as_bytes(),
                    );
                }
                Shape::OneHugeLine => out.extend_from_slice(&[b'x'; 4096]),
                Shape::DeeplyNested => {
                    out.extend_from_slice(&[b'['; 63]);
                    out.extend_from_slice(b"\n    ");
                }
            }
        }
        true
    }
}

/// Every temporary file chartkit left under the context's home (caches included).
fn temp_files(ctx: &TestContext) -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, found);
            } else if entry.file_name().to_string_lossy().ends_with(".tmp") {
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(ctx.dir(), &mut found);
    found
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs `command`, which must fail within the memory bound and leave no temporary
/// file; its standard error.
fn fails_within_bounds(ctx: &TestContext, what: &str, command: &mut Command) -> String {
    let (output, peak) = run_measuring_peak(command);
    // `repo update` reports each repository's failure on stdout, as helm does.
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        stderr(&output)
    );
    assert_eq!(output.status.code(), Some(1), "{what}: {text}");
    assert!(
        peak < PEAK_LIMIT,
        "{what}: peak resident memory {} MiB, over {} MiB; {text}",
        peak / MIB,
        PEAK_LIMIT / MIB
    );
    eprintln!("{what}: peak resident memory {} MiB", peak / MIB);
    assert_eq!(
        temp_files(ctx),
        Vec::<PathBuf>::new(),
        "{what} left temporary files"
    );
    text
}

/// The error names the repository, the URL, the limit and how to raise it.
fn says_too_large(text: &str, repo: &str, url: &str, limit: &str) {
    for part in [
        repo,
        &format!("{url}/index.yaml"),
        &format!("larger than the {limit} limit on index downloads"),
        "--max-index-size",
        "CHARTKIT_MAX_INDEX_SIZE",
    ] {
        assert!(text.contains(part), "`{part}` is not in: {text}");
    }
    assert!(text.contains("Error: "), "{text}");
}

fn add_repo(ctx: &TestContext, name: &str, url: &str) {
    let out = ctx.run(&["repo", "add", name, url]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_two_gib_index_fails_repo_update_within_memory_and_leaves_no_temporary_file() {
    let ctx = TestContext::new();
    let small = serve(Shape::Small, GIB, false);
    // Added while it was small; then it grows to 2 GiB, sent without a length, so only
    // counting the bytes can stop it.
    add_repo(&ctx, "big", &small);
    let big = serve(Shape::Realistic, 2 * GIB, false);
    let repositories = std::fs::read_to_string(helm_repositories(&ctx)).unwrap();
    std::fs::write(helm_repositories(&ctx), repositories.replace(&small, &big)).unwrap();
    // As if by a run killed half way: a temporary file in the cache, old and unlocked.
    let planted = helm_cache(&ctx).join(".chartkit-killed123.tmp");
    std::fs::write(&planted, vec![b'x'; 1 << 20]).unwrap();
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&planted)
        .unwrap()
        .set_modified(an_hour_ago)
        .unwrap();
    let text = fails_within_bounds(
        &ctx,
        "repo update",
        ctx.chartkit().args(["repo", "update", "big"]),
    );
    says_too_large(&text, "repository \"big\"", &big, "512 MiB");
    assert!(
        !planted.exists(),
        "the killed run's temporary file is removed"
    );
}

#[test]
fn every_command_that_downloads_an_index_refuses_one_announced_over_the_limit() {
    let ctx = TestContext::new();
    let big = serve(Shape::Realistic, 2 * GIB, true);
    // repo add.
    let text = fails_within_bounds(
        &ctx,
        "repo add",
        ctx.chartkit().args(["repo", "add", "big", &big]),
    );
    says_too_large(&text, "repository \"big\"", &big, "512 MiB");
    assert!(text.contains("(the server announced 2 GiB)"), "{text}");
    // pull --repo.
    let text = fails_within_bounds(
        &ctx,
        "pull --repo",
        ctx.chartkit()
            .args(["pull", "chart-0000001", "--repo", &big]),
    );
    says_too_large(&text, &format!("the repository at {big}"), &big, "512 MiB");
    // dependency update.
    let chart = ctx.path("parent");
    std::fs::create_dir_all(&chart).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        format!("apiVersion: v2\nname: parent\nversion: 0.1.0\ndependencies:\n- name: chart-0000001\n  version: \"*\"\n  repository: {big}\n"),
    )
    .unwrap();
    let text = fails_within_bounds(
        &ctx,
        "dependency update",
        ctx.chartkit().args(["dependency", "update", "parent"]),
    );
    says_too_large(&text, &big, &big, "512 MiB");
    // template --repo, and the environment variable raising nothing enough.
    let text = fails_within_bounds(
        &ctx,
        "template --repo",
        ctx.chartkit().env("CHARTKIT_MAX_INDEX_SIZE", "1GiB").args([
            "template",
            "r",
            "chart-0000001",
            "--repo",
            &big,
        ]),
    );
    says_too_large(&text, &big, &big, "1 GiB");
    assert!(text.contains("--max-index-size 2GiB"), "{text}");
}

#[test]
fn the_limit_is_set_by_flag_or_environment_and_a_counted_download_stops_at_it() {
    let ctx = TestContext::new();
    let url = serve(Shape::Realistic, 2 * GIB, false);
    let text = fails_within_bounds(
        &ctx,
        "repo add --max-index-size",
        ctx.chartkit()
            .args(["repo", "add", "big", &url, "--max-index-size", "4MiB"]),
    );
    says_too_large(&text, "repository \"big\"", &url, "4 MiB");
    let text = fails_within_bounds(
        &ctx,
        "repo add with CHARTKIT_MAX_INDEX_SIZE",
        ctx.chartkit()
            .env("CHARTKIT_MAX_INDEX_SIZE", "3145728")
            .args(["repo", "add", "big", &url]),
    );
    says_too_large(&text, "repository \"big\"", &url, "3 MiB");
    // A value that is no size is refused, naming the variable.
    let bad = ctx
        .chartkit()
        .env("CHARTKIT_MAX_INDEX_SIZE", "a lot")
        .args(["repo", "add", "big", &url])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains("CHARTKIT_MAX_INDEX_SIZE"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn an_index_under_the_limit_that_cannot_be_read_a_chart_at_a_time_is_refused_within_memory() {
    for (shape, what) in [
        (Shape::OneEnormousChart, "one enormous chart"),
        (Shape::OneHugeLine, "one huge line"),
        (Shape::DeeplyNested, "deeply nested flow sequences"),
    ] {
        let ctx = TestContext::new();
        let url = serve(shape, 511 * MIB, false);
        let text = fails_within_bounds(
            &ctx,
            what,
            ctx.chartkit().args(["repo", "add", "big", &url]),
        );
        assert!(
            text.contains(&format!("{url}/index.yaml"))
                && text.contains("the index is 511 MiB and cannot be read one chart at a time")
                && text.contains("only up to 32 MiB"),
            "{what}: {text}"
        );
    }
}

fn helm_repositories(ctx: &TestContext) -> PathBuf {
    ctx.path(".home/config/helm/repositories.yaml")
}

fn helm_cache(ctx: &TestContext) -> PathBuf {
    ctx.path(".home/cache/helm/repository")
}
