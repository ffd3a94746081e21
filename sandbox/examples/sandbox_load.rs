//! Load client for `bench/sandbox.sh`: concurrent HTTP/1.1 keep-alive requests against a
//! running sandbox, and its startup time.
//!
//! ```text
//! sandbox_load load URL PID [--count N] [--concurrency C] [--kind configmap|pod]
//! sandbox_load startup CHARTKIT RUNS [sandbox up args...]
//! ```
//!
//! `load` creates N objects, gets, lists, patches them, and watches: the replay of every
//! change from before the creates, and live delivery during the patches. It prints one
//! Markdown table row per phase (requests/s, p50 and p99 latency) and the server's
//! resident memory (VmRSS of PID) before and after the creates.
//!
//! `startup` starts `CHARTKIT sandbox up --addr 127.0.0.1:0 --state-file F --kubeconfig K
//! [args]` RUNS times and reports how long from the spawn until the state file with the
//! address appears, and until `GET /version` answers.
//!
//! The client is a minimal HTTP/1.1 one on tokio (Content-Length and chunked bodies
//! only) so that on a small machine it takes little of the CPU the server is measured on.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;

type Error = Box<dyn std::error::Error + Send + Sync>;

/// One keep-alive HTTP/1.1 connection.
struct Conn {
    reader: BufReader<tokio::net::tcp::OwnedReadHalf>,
    writer: tokio::net::tcp::OwnedWriteHalf,
}

impl Conn {
    async fn open(addr: &str) -> Result<Conn, Error> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let (r, w) = stream.into_split();
        Ok(Conn {
            reader: BufReader::with_capacity(1 << 16, r),
            writer: w,
        })
    }

    async fn send(
        &mut self,
        method: &str,
        path: &str,
        content_type: &str,
        body: &[u8],
    ) -> Result<(), Error> {
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: sandbox\r\nAccept: application/json\r\n\
             User-Agent: sandbox-load\r\nContent-Length: {}\r\n",
            body.len()
        );
        if !content_type.is_empty() {
            head.push_str(&format!("Content-Type: {content_type}\r\n"));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body);
        self.writer.write_all(&bytes).await?;
        Ok(())
    }

    /// The status and the headers that matter; the body is read by the caller.
    async fn head(&mut self) -> Result<(u16, Option<usize>, bool), Error> {
        let mut line = String::new();
        self.reader.read_line(&mut line).await?;
        let status: u16 = line.get(9..12).ok_or("no status line")?.parse()?;
        let (mut length, mut chunked) = (None, false);
        loop {
            line.clear();
            self.reader.read_line(&mut line).await?;
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let (name, value) = l.split_once(':').ok_or("bad header")?;
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = Some(value.parse()?);
            } else if name.eq_ignore_ascii_case("transfer-encoding") && value == "chunked" {
                chunked = true;
            }
        }
        Ok((status, length, chunked))
    }

    async fn request(
        &mut self,
        method: &str,
        path: &str,
        content_type: &str,
        body: &[u8],
    ) -> Result<(u16, Vec<u8>), Error> {
        self.send(method, path, content_type, body).await?;
        let (status, length, chunked) = self.head().await?;
        let mut out = Vec::new();
        if chunked {
            while let Some(chunk) = self.chunk().await? {
                out.extend_from_slice(&chunk);
            }
        } else {
            out.resize(length.unwrap_or(0), 0);
            self.reader.read_exact(&mut out).await?;
        }
        Ok((status, out))
    }

    /// The next chunk of a chunked body, `None` at its end.
    async fn chunk(&mut self) -> Result<Option<Vec<u8>>, Error> {
        let mut line = String::new();
        self.reader.read_line(&mut line).await?;
        let size = usize::from_str_radix(line.trim_end().split(';').next().unwrap_or(""), 16)?;
        let mut data = vec![0; size + 2];
        self.reader.read_exact(&mut data).await?;
        data.truncate(size);
        Ok((size > 0).then_some(data))
    }
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// A ConfigMap like one a chart ships: labels, annotations, and a config file of about
/// 1.5 KiB.
fn configmap(name: &str) -> Value {
    let mut file = String::new();
    for i in 0..40 {
        file.push_str(&format!("setting_{i:02}: value-{i:04}-{name}\n"));
    }
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "labels": {"app.kubernetes.io/name": "bench", "app.kubernetes.io/instance": "load", "app.kubernetes.io/managed-by": "Helm"},
            "annotations": {"meta.helm.sh/release-name": "load", "meta.helm.sh/release-namespace": "default"},
        },
        "data": {"app.yaml": file, "LOG_LEVEL": "info", "FEATURE_FLAGS": "a,b,c"},
    })
}

/// A Pod as a Deployment's template makes one: two containers with probes, resources,
/// env, volume mounts.
fn pod(name: &str) -> Value {
    let container = |cname: &str, image: &str| {
        json!({
            "name": cname,
            "image": image,
            "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
            "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}, {"name": "LOG_LEVEL", "value": "info"}],
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 10},
            "readinessProbe": {"httpGet": {"path": "/ready", "port": "http"}, "periodSeconds": 5},
            "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}],
        })
    };
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {"app.kubernetes.io/name": "bench", "pod-template-hash": "5d8f7c9b6d"},
        },
        "spec": {
            "containers": [container("app", "registry.example/app:1.4.2"), container("sidecar", "registry.example/proxy:2.0.1")],
            "volumes": [{"name": "config", "configMap": {"name": "app-config"}}],
            "serviceAccountName": "default",
        },
    })
}

struct Phase {
    name: String,
    latencies: Vec<Duration>,
    wall: Duration,
}

impl Phase {
    fn row(&mut self) -> String {
        self.latencies.sort_unstable();
        let pct = |p: f64| {
            let i = ((self.latencies.len() as f64 - 1.0) * p).round() as usize;
            self.latencies
                .get(i)
                .map(|d| d.as_secs_f64() * 1000.0)
                .unwrap_or(0.0)
        };
        format!(
            "| {} | {} | {:.0} | {:.2} | {:.2} |",
            self.name,
            self.latencies.len(),
            self.latencies.len() as f64 / self.wall.as_secs_f64(),
            pct(0.5),
            pct(0.99)
        )
    }
}

/// Runs `count` requests made by `make(i)` on `concurrency` connections.
async fn run<F>(
    addr: &str,
    name: &str,
    count: usize,
    concurrency: usize,
    make: F,
) -> Result<Phase, Error>
where
    F: Fn(usize) -> (String, String, String, Vec<u8>, u16) + Send + Sync + 'static,
{
    let make = Arc::new(make);
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let make = Arc::clone(&make);
        let next = Arc::clone(&next);
        let mut conn = Conn::open(addr).await?;
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= count {
                    return Ok::<_, Error>(latencies);
                }
                let (method, path, content_type, body, want) = make(i);
                let t = Instant::now();
                let (status, response) = conn.request(&method, &path, &content_type, &body).await?;
                latencies.push(t.elapsed());
                if status != want {
                    return Err(format!(
                        "{method} {path}: {status} {}",
                        String::from_utf8_lossy(&response)
                    )
                    .into());
                }
            }
        }));
    }
    let mut latencies = Vec::new();
    for t in tasks {
        latencies.extend(t.await??);
    }
    Ok(Phase {
        name: name.to_string(),
        latencies,
        wall: start.elapsed(),
    })
}

/// Reads a watch until `want` events arrived; the time it took.
async fn watch_events(addr: &str, path: &str, want: usize) -> Result<Duration, Error> {
    let mut conn = Conn::open(addr).await?;
    let start = Instant::now();
    conn.send("GET", path, "", b"").await?;
    let (status, _, chunked) = conn.head().await?;
    if status != 200 || !chunked {
        return Err(format!("watch {path}: {status}").into());
    }
    let mut seen = 0;
    let mut pending = Vec::new();
    while seen < want {
        let Some(chunk) = conn.chunk().await? else {
            return Err(format!("the watch ended after {seen} of {want} events").into());
        };
        pending.extend_from_slice(&chunk);
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let event: Value = serde_json::from_slice(&line)?;
            if event["type"] == "ERROR" {
                return Err(format!("watch error: {event}").into());
            }
            if event["type"] != "BOOKMARK" {
                seen += 1;
            }
        }
    }
    Ok(start.elapsed())
}

async fn revision(addr: &str, collection: &str) -> Result<u64, Error> {
    let mut conn = Conn::open(addr).await?;
    let (_, body) = conn
        .request("GET", &format!("{collection}?limit=1"), "", b"")
        .await?;
    let list: Value = serde_json::from_slice(&body)?;
    Ok(list["metadata"]["resourceVersion"]
        .as_str()
        .ok_or("no resourceVersion")?
        .parse()?)
}

async fn load(args: &[String]) -> Result<(), Error> {
    let url = args.first().ok_or("usage: load URL PID [options]")?;
    let pid: u32 = args.get(1).ok_or("usage: load URL PID")?.parse()?;
    let option = |name: &str, default: &str| -> String {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
            .unwrap_or_else(|| default.to_string())
    };
    let count: usize = option("--count", "10000").parse()?;
    let concurrency: usize = option("--concurrency", "16").parse()?;
    let kind = option("--kind", "configmap");
    let addr = url.trim_start_matches("http://").to_string();
    let (plural, make): (&str, fn(&str) -> Value) = match kind.as_str() {
        "configmap" => ("configmaps", configmap),
        "pod" => ("pods", pod),
        other => return Err(format!("unknown kind {other}").into()),
    };
    let ns = format!("load-{kind}");
    let collection = format!("/api/v1/namespaces/{ns}/{plural}");
    let mut conn = Conn::open(&addr).await?;
    let (status, body) = conn
        .request(
            "POST",
            "/api/v1/namespaces",
            "application/json",
            json!({"metadata": {"name": ns}}).to_string().as_bytes(),
        )
        .await?;
    if status != 201 {
        return Err(format!("namespace: {status} {}", String::from_utf8_lossy(&body)).into());
    }
    let sample = make("sample-name-00000").to_string().len();
    let rss_before = rss_kib(pid);
    let rv_before = revision(&addr, &collection).await?;

    let mut rows = Vec::new();
    let c = collection.clone();
    let k = kind.clone();
    let mut create = run(
        &addr,
        &format!("create {kind}"),
        count,
        concurrency,
        move |i| {
            let body = make(&format!("{k}-{i:05}")).to_string().into_bytes();
            (
                "POST".into(),
                c.clone(),
                "application/json".into(),
                body,
                201,
            )
        },
    )
    .await?;
    rows.push(create.row());
    // Let the allocator settle what the requests left behind.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let rss_after = rss_kib(pid);

    let c = collection.clone();
    let k = kind.clone();
    let mut get = run(
        &addr,
        &format!("get {kind}"),
        count,
        concurrency,
        move |i| {
            let name = format!("{k}-{:05}", (i * 7919) % count);
            (
                "GET".into(),
                format!("{c}/{name}"),
                String::new(),
                Vec::new(),
                200,
            )
        },
    )
    .await?;
    rows.push(get.row());

    let lists = 20.min(count).max(1);
    let c = collection.clone();
    let mut list = run(
        &addr,
        &format!("list {count} {plural}"),
        lists,
        2.min(concurrency),
        move |_| ("GET".into(), c.clone(), String::new(), Vec::new(), 200),
    )
    .await?;
    rows.push(list.row());

    // A live watch over the patches: from the revision before them, to every patch's
    // event.
    let rv_patches = revision(&addr, &collection).await?;
    let watch_path = format!("{collection}?watch=1&resourceVersion={rv_patches}");
    let live = {
        let addr = addr.clone();
        let path = watch_path.clone();
        tokio::spawn(async move { watch_events(&addr, &path, count).await })
    };
    let c = collection.clone();
    let k = kind.clone();
    let patch_start = Instant::now();
    let mut patch = run(
        &addr,
        &format!("merge-patch {kind}"),
        count,
        concurrency,
        move |i| {
            let name = format!("{k}-{i:05}");
            let body = json!({"metadata": {"labels": {"patched": i.to_string()}}})
                .to_string()
                .into_bytes();
            (
                "PATCH".into(),
                format!("{c}/{name}"),
                "application/merge-patch+json".into(),
                body,
                200,
            )
        },
    )
    .await?;
    rows.push(patch.row());
    live.await??;
    let live_wall = patch_start.elapsed();

    // Replay: every create and patch from the log, as a watch resuming after a restart.
    let replay = watch_events(
        &addr,
        &format!("{collection}?watch=1&resourceVersion={rv_before}"),
        2 * count,
    )
    .await?;

    println!("| phase | requests | requests/s | p50 ms | p99 ms |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    for r in rows {
        println!("{r}");
    }
    println!(
        "| watch: {count} live MODIFIED events during the patches | {count} | {:.0} events/s | | |",
        count as f64 / live_wall.as_secs_f64()
    );
    println!(
        "| watch: replay of {} events from the log | {} | {:.0} events/s | | |",
        2 * count,
        2 * count,
        (2 * count) as f64 / replay.as_secs_f64()
    );
    println!();
    println!(
        "{kind}: request body {sample} bytes; server RSS {:.1} MiB before, {:.1} MiB after {count} creates: {:.1} MiB per 10,000 objects",
        rss_before as f64 / 1024.0,
        rss_after as f64 / 1024.0,
        (rss_after.saturating_sub(rss_before)) as f64 / 1024.0 * 10_000.0 / count as f64
    );
    Ok(())
}

fn startup(args: &[String]) -> Result<(), Error> {
    let chartkit = args
        .first()
        .ok_or("usage: startup CHARTKIT RUNS [args...]")?;
    let runs: usize = args.get(1).ok_or("usage: startup CHARTKIT RUNS")?.parse()?;
    let extra = &args[2..];
    let dir = std::env::temp_dir().join(format!("sandbox-startup-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let (mut to_state, mut to_version) = (Vec::new(), Vec::new());
    for run in 0..runs {
        let state = dir.join(format!("state-{run}.json"));
        let start = Instant::now();
        let mut child = std::process::Command::new(chartkit)
            .args(["sandbox", "up", "--addr", "127.0.0.1:0"])
            .arg("--state-file")
            .arg(&state)
            .arg("--kubeconfig")
            .arg(dir.join("kubeconfig"))
            .args(extra)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::inherit())
            .spawn()?;
        let record: Value = loop {
            if let Ok(bytes) = std::fs::read(&state)
                && let Ok(v) = serde_json::from_slice(&bytes)
            {
                break v;
            }
            if start.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                return Err("the sandbox did not start within 60 s".into());
            }
            if let Some(status) = child.try_wait()? {
                return Err(format!("the sandbox exited: {status}").into());
            }
            std::thread::sleep(Duration::from_micros(200));
        };
        to_state.push(start.elapsed());
        let url = record["url"].as_str().ok_or("no url")?;
        let addr = url.split("://").nth(1).ok_or("bad url")?;
        if url.starts_with("https") {
            // Only the TCP accept is timed for TLS; the handshake is the client's cost.
            std::net::TcpStream::connect(addr)?;
        } else {
            let mut s = std::net::TcpStream::connect(addr)?;
            std::io::Write::write_all(
                &mut s,
                b"GET /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            )?;
            let mut response = String::new();
            std::io::Read::read_to_string(&mut s, &mut response)?;
            if !response.starts_with("HTTP/1.1 200") {
                return Err(format!("/version: {response}").into());
            }
        }
        to_version.push(start.elapsed());
        // SIGTERM: a clean stop, so a --data directory is unlocked for the next run.
        let _ = std::process::Command::new("kill")
            .arg(child.id().to_string())
            .status();
        child.wait()?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    let stats = |v: &mut Vec<Duration>| {
        v.sort_unstable();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        format!(
            "median {:.1} ms, min {:.1} ms, max {:.1} ms",
            ms(v[v.len() / 2]),
            ms(v[0]),
            ms(v[v.len() - 1])
        )
    };
    println!(
        "startup [{}] over {runs} runs: state file {}; /version answered {}",
        extra.join(" "),
        stats(&mut to_state),
        stats(&mut to_version)
    );
    Ok(())
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("load") => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()?
            .block_on(load(&args[1..])),
        Some("startup") => startup(&args[1..]),
        _ => Err("usage: sandbox_load load URL PID [--count N] [--concurrency C] [--kind configmap|pod] | startup CHARTKIT RUNS [args...]".into()),
    }
}
