//! Errors a person can read (issue #29): each input that once printed Rust `Debug` text
//! — an install into a missing namespace, an API server on a closed port, a
//! self-signed server certificate, a 100 MiB values file — now gives one `Error:` line
//! naming the namespace, URL or release, with helm's words and exit status where helm
//! has them, and a hint. Losing the API server during `--wait` costs little CPU and is
//! reported once; `--wait` piped prints nothing on stderr unless `--debug`.

use std::net::TcpListener;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use chartkit_tests::TestContext;
use chartkit_tests::sandbox::{SandboxProcess, run_ok, write_file};
use chartkit_tests::{stderr, stdout};

/// Text that only Rust's `Debug` formatting produces (kube's `Status` dump, hyper's and
/// rustls' enum names).
const DEBUG_MARKS: &[&str] = &[
    "Status {",
    "Some(",
    "None,",
    "ListMeta",
    "ServiceError",
    "client error (Connect)",
    "OtherError",
    "ApiError",
    "HyperError",
];

fn assert_readable(what: &str, text: &str) {
    for mark in DEBUG_MARKS {
        assert!(!text.contains(mark), "{what}: `{mark}` in:\n{text}");
    }
}

/// The first line of stderr, which must be the `Error:` line.
fn error_line(output: &Output) -> String {
    let text = stderr(output);
    text.lines()
        .find(|l| l.starts_with("Error: "))
        .unwrap_or_else(|| panic!("no Error: line in:\n{text}"))
        .to_string()
}

fn hint_line(output: &Output) -> String {
    let text = stderr(output);
    text.lines()
        .find(|l| l.starts_with("hint: "))
        .unwrap_or_else(|| panic!("no hint in:\n{text}"))
        .to_string()
}

/// A chart with a Deployment named after the release; its pod never turns ready with
/// `stuck=true`.
fn chart(ctx: &TestContext) -> String {
    chartkit_tests::charts::never_ready_chart(ctx, "{{ .Release.Name }}")
}

#[test]
fn install_into_a_missing_namespace_reads_as_helms() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let chart = chart(&ctx);
    let ours = sandbox
        .chartkit(&ctx)
        .args(["install", "web", &chart, "-n", "nope"])
        .output()
        .unwrap();
    assert_eq!(ours.status.code(), Some(1), "{}", stderr(&ours));
    assert_readable("missing namespace", &stderr(&ours));
    assert_eq!(
        error_line(&ours),
        "Error: INSTALLATION FAILED: create: failed to create: namespaces \"nope\" not found"
    );
    assert_eq!(
        hint_line(&ours),
        "hint: create the namespace first (`kubectl create namespace nope`), or pass --create-namespace"
    );
    let test = "install_into_a_missing_namespace_reads_as_helms";
    let Some(mut helm) = sandbox.helm(&ctx, test) else {
        return;
    };
    let theirs = helm
        .args(["install", "web", &chart, "-n", "nope"])
        .output()
        .unwrap();
    assert_eq!(theirs.status.code(), ours.status.code());
    assert_eq!(error_line(&theirs), error_line(&ours));
}

/// A port of 127.0.0.1 nothing listens on.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn an_unreachable_api_server_is_named_as_helm_names_it() {
    let ctx = TestContext::new();
    let chart = chart(&ctx);
    let server = format!("https://127.0.0.1:{}", closed_port());
    let commands: [&[&str]; 4] = [
        &["install", "web", &chart],
        &["list"],
        &["status", "web"],
        &["upgrade", "web", &chart],
    ];
    let flags = [
        "--kube-apiserver",
        &server,
        "--kube-insecure-skip-tls-verify",
    ];
    let helm = chartkit_tests::peers::helm_or_skip("an_unreachable_api_server_is_named");
    for args in commands {
        let ours = ctx.chartkit().args(args).args(flags).output().unwrap();
        let line = error_line(&ours);
        assert_eq!(ours.status.code(), Some(1), "{args:?}: {line}");
        assert_readable(&format!("{args:?}"), &stderr(&ours));
        // helm: `kubernetes cluster unreachable: Get "https://127.0.0.1:PORT/version":
        // dial tcp 127.0.0.1:PORT: connect: connection refused`; ours names the request
        // that failed, which is not always /version.
        let address = server.trim_start_matches("https://");
        assert!(
            line.contains(&format!("kubernetes cluster unreachable: Get \"{server}/"))
                && line.ends_with(&format!(
                    "\": dial tcp {address}: connect: connection refused"
                )),
            "{args:?}: {line}"
        );
        assert!(
            hint_line(&ours).contains("check that the API server is running"),
            "{args:?}"
        );
        let prefix = match args[0] {
            "install" => "Error: INSTALLATION FAILED: ",
            "upgrade" => "Error: UPGRADE FAILED: ",
            _ => "Error: kubernetes",
        };
        assert!(line.starts_with(prefix), "{args:?}: {line}");
        if let Some(helm) = &helm {
            let theirs = ctx.hermetic(helm).args(args).args(flags).output().unwrap();
            let theirs_line = error_line(&theirs);
            assert_eq!(theirs.status.code(), ours.status.code(), "{args:?}");
            assert!(
                theirs_line.starts_with(prefix)
                    && theirs_line.contains("kubernetes cluster unreachable: Get \"")
                    && theirs_line
                        .ends_with(&format!("dial tcp {address}: connect: connection refused")),
                "helm {args:?}: {theirs_line}"
            );
        }
    }
}

#[test]
fn a_self_signed_server_certificate_is_one_readable_line() {
    let ctx = TestContext::new();
    // A certificate that is its own CA (CA:TRUE), as `openssl req -x509` makes by
    // default, served by a TLS listener (chartkit serve) standing in for the API server.
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).unwrap();
    let cert_file = write_file(ctx.dir(), "self.pem", &cert.pem());
    let key_file = write_file(ctx.dir(), "self.key", &key.serialize_pem());
    std::fs::create_dir_all(ctx.path("repo")).unwrap();
    let repo = ctx.path("repo");
    let server = chartkit_tests::server::ServeProcess::start(
        ctx.chartkit(),
        &[
            repo.to_str().unwrap(),
            "--tls-cert",
            cert_file.to_str().unwrap(),
            "--tls-key",
            key_file.to_str().unwrap(),
        ],
        ctx.dir(),
    );
    let ca = base64_of(cert.pem().as_bytes());
    let kubeconfig = write_file(
        ctx.dir(),
        "kubeconfig",
        &format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority-data: {ca}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\nusers:\n- name: u\n  user: {{token: abc}}\n",
            server.url
        ),
    );
    let ours = ctx
        .chartkit()
        .env("KUBECONFIG", &kubeconfig)
        .arg("list")
        .output()
        .unwrap();
    assert_eq!(ours.status.code(), Some(1));
    assert_readable("self-signed", &stderr(&ours));
    let line = error_line(&ours);
    assert!(
        line.starts_with(&format!(
            "Error: kubernetes cluster unreachable: Get \"{}/",
            server.url.trim_end_matches('/')
        )) && line.contains("tls: failed to verify certificate: ")
            && line.contains("CA certificate"),
        "{line}"
    );
    assert!(hint_line(&ours).contains("signed by that CA"));
    assert_eq!(stderr(&ours).lines().count(), 2, "{}", stderr(&ours));
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn a_100_mib_values_file_is_refused_in_one_readable_line() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let chart = chart(&ctx);
    // 100 MiB of values that do not compress (random text), as in the report.
    let values = ctx.path("big.yaml");
    {
        use std::io::Write as _;
        let mut file = std::io::BufWriter::new(std::fs::File::create(&values).unwrap());
        writeln!(file, "blob:").unwrap();
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut written = 0;
        let alphabet = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        let mut line = Vec::with_capacity(80);
        for index in 0.. {
            if written >= 100 << 20 {
                break;
            }
            line.clear();
            write!(line, "  k{index:07}: ").unwrap();
            for _ in 0..64 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                line.push(alphabet[(state % alphabet.len() as u64) as usize]);
            }
            line.push(b'\n');
            file.write_all(&line).unwrap();
            written += line.len();
        }
    }
    let ours = sandbox
        .chartkit(&ctx)
        .args(["install", "big", &chart, "-f"])
        .arg(&values)
        .output()
        .unwrap();
    assert_eq!(ours.status.code(), Some(1));
    let text = stderr(&ours);
    assert_readable("100 MiB values", &text);
    let line = error_line(&ours);
    assert!(
        line.starts_with(
            "Error: INSTALLATION FAILED: create: failed to create: the record of release \"big\" revision 1 is "
        ) && (line.ends_with(
            " MiB and the API server refused it as too large (Request entity too large: limit is 3145728)"
        ) || line.ends_with(
            // When the server closes the connection before the whole record is sent.
            " MiB and the API server refused it as too large (the connection was closed while the record was sent; API servers take at most 3 MiB by default)"
        )),
        "{line}"
    );
    assert!(hint_line(&ours).contains("keep large data out of values"));
    assert_eq!(text.lines().count(), 2, "{text}");
}

/// User and system CPU time of a process, in seconds, from `/proc/PID/stat` (also
/// readable while it is a zombie, before it is reaped).
fn cpu_seconds(pid: u32) -> Option<(f64, char)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces; fields follow the last `)`.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let state = fields.first()?.chars().next()?;
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    // Clock ticks per second: 100 on every Linux this runs on (USER_HZ).
    Some(((utime + stime) / 100.0, state))
}

#[test]
fn losing_the_api_server_during_wait_costs_little_cpu_and_is_reported_once() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let chart = chart(&ctx);
    let child = sandbox
        .chartkit(&ctx)
        .args(["install", "web", &chart, "--set", "stuck=true"])
        .args(["--wait", "--timeout", "10s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Kill the API server once the install is waiting: its Deployment exists.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = sandbox
            .chartkit(&ctx)
            .args(["status", "web"])
            .output()
            .unwrap();
        if stdout(&out).contains("STATUS: pending-install") {
            break;
        }
        assert!(Instant::now() < deadline, "the install never started");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    let killed = Instant::now();
    sandbox.kill();
    // Wait for chartkit to exit without reaping it, so its CPU time can still be read.
    let pid = child.id();
    let cpu = loop {
        let (cpu, state) = cpu_seconds(pid).expect("chartkit's /proc entry");
        if state == 'Z' {
            break cpu;
        }
        assert!(
            killed.elapsed() < Duration::from_secs(30),
            "chartkit did not end"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = child.wait_with_output().unwrap();
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    // helm spends 0.27 s of CPU here; chartkit spun at 0.4 of a core (3.75 s).
    assert!(cpu < 0.5, "chartkit used {cpu} s of CPU waiting:\n{text}");
    assert_readable("lost server", &text);
    assert_eq!(
        text.matches("kubernetes cluster unreachable").count(),
        1,
        "the lost connection once:\n{text}"
    );
    let line = error_line(&output);
    assert!(
        line.starts_with(
            "Error: INSTALLATION FAILED: timed out after 10s waiting for Deployment/web: the API server stopped answering during the wait: kubernetes cluster unreachable: "
        ),
        "{line}"
    );
    assert!(hint_line(&output).contains("check that the API server is running"));
}

#[test]
fn wait_progress_is_quiet_piped_unless_debug() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let chart = chart(&ctx);
    let quiet = run_ok(sandbox.chartkit(&ctx).args([
        "install",
        "quiet",
        &chart,
        "--wait",
        "--timeout",
        "60s",
    ]));
    assert_eq!(stderr(&quiet), "", "helm prints nothing on stderr here");
    let debug = run_ok(sandbox.chartkit(&ctx).args([
        "install",
        "loud",
        &chart,
        "--wait",
        "--timeout",
        "60s",
        "--debug",
    ]));
    assert!(
        stderr(&debug).contains("Deployment/loud: ready"),
        "{}",
        stderr(&debug)
    );
    if let Some(mut helm) = sandbox.helm(&ctx, "wait_progress_is_quiet_piped_unless_debug") {
        let theirs = run_ok(helm.args(["install", "theirs", &chart, "--wait", "--timeout", "60s"]));
        assert_eq!(stderr(&theirs), "");
    }
    // On a terminal (a pseudo-terminal from script(1)) the live view draws.
    if !std::path::Path::new("/usr/bin/script").exists() {
        chartkit_tests::skip(
            "wait_progress_is_quiet_piped_unless_debug (terminal part)",
            "script(1) is not installed",
        );
        return;
    }
    let command = format!(
        "{} install tty {chart} --wait --timeout 60s",
        chartkit_tests::chartkit_bin().display()
    );
    let tty = run_ok(
        Command::new("/usr/bin/script")
            .args(["-qec", &command, "/dev/null"])
            .env("KUBECONFIG", &sandbox.kubeconfig)
            .env("HOME", ctx.path(".home"))
            .env("NO_COLOR", "1")
            .stdin(Stdio::null()),
    );
    assert!(
        stdout(&tty).contains("Deployment/tty: "),
        "{}",
        stdout(&tty)
    );
}

/// Where Rust's `Debug` formatting (`{:?}`, `{:#?}`, `dbg!`) is allowed on a path a person
/// reads, each for a reason: a file and a phrase of the line it is on. Every one is a
/// string quoted the way Go's `%q` quotes it, in a message helm prints with `%q`
/// (or one written in that style), except where said.
const DEBUG_ALLOWED: &[(&str, &str)] = &[
    ("chart/src/yaml_fields.rs", "unknown field {key:?} at"),
    ("chart/src/yaml_fields.rs", "key {key:?} already set in map"),
    (
        "chart/src/metadata.rs",
        "validation: chart.metadata.name {0:?} is not allowed",
    ),
    (
        "chart/src/metadata.rs",
        "validation: chart.metadata.name {0:?} is invalid",
    ),
    (
        "chart/src/metadata.rs",
        "validation: chart.metadata.version {0:?} is invalid",
    ),
    (
        "chart/src/metadata.rs",
        "validation: dependency {0:?} has disallowed characters",
    ),
    ("chart/src/metadata.rs", "with name or alias {0:?}"),
    ("chart/src/create.rs", "chart name {0:?} is invalid"),
    (
        "chart/src/error.rs",
        "apiVersion {api_version:?} is not one Helm loads",
    ),
    ("cli/src/cli.rs", "invalid color mode {text:?}"),
    // The repository name as `helm repo update` prints it beside its spinner.
    ("cli/src/commands/repo_update.rs", "set_prefix(format!("),
    (
        "cli/src/commands/repo_update.rs",
        "Successfully got an update from the {:?} chart repository",
    ),
    (
        "cli/src/commands/repo_update.rs",
        "get an update from the {:?} chart repository",
    ),
    (
        "cli/src/commands/release_write.rs",
        "invalid argument {text:?} for",
    ),
    (
        "cli/src/commands/release_write.rs",
        "invalid dry-run value ({other:?})",
    ),
    (
        "cli/src/commands/release_write.rs",
        "Release {:?} does not exist. Installing it now.",
    ),
    (
        "cli/src/commands/release_write.rs",
        "Release {:?} has been upgraded. Happy Helming!",
    ),
    ("cli/src/commands/verify.rs", "{expected:?} != {actual:?}"),
    ("cli/src/commands/verify.rs", "a file named {file_name:?}"),
    (
        "cli/src/commands/diff.rs",
        "--suppress-output-line-regex {pattern:?}",
    ),
    (
        "cli/src/commands/template.rs",
        "release name {name:?}: invalid release name",
    ),
    (
        "cli/src/commands/sandbox.rs",
        "--pod-ready-delay {:?} is not a duration",
    ),
    (
        "cli/src/commands/sandbox.rs",
        "--job-duration {text:?} is not a duration",
    ),
    ("cli/src/commands/sandbox.rs", "subdomains, found {:?}"),
    (
        "cli/src/commands/repo_remove.rs",
        "no repo named {name:?} found",
    ),
    (
        "cli/src/commands/repo_remove.rs",
        "{name:?} has been removed from your repositories",
    ),
    (
        "cli/src/commands/repo_import_helm.rs",
        "{:?} already exists with the same configuration",
    ),
    (
        "cli/src/commands/repo_import_helm.rs",
        "{:?} is {} in chartkit and {} in Helm",
    ),
    (
        "cli/src/commands/repo_import_helm.rs",
        "{:?} has been added to your repositories",
    ),
    (
        "cli/src/commands/repo_add.rs",
        "{:?} already exists with the same configuration",
    ),
    (
        "cli/src/commands/repo_add.rs",
        "looks like {:?} is not a valid chart repository",
    ),
    (
        "cli/src/commands/repo_add.rs",
        "{:?} has been added to your repositories",
    ),
    (
        "dependency/src/resolve.rs",
        "dependency {name:?} has an invalid version/constraint format",
    ),
    ("dependency/src/lockfile.rs", "is a symlink to {target:?}"),
    ("dependency/src/mirror.rs", "invalid --versions {range:?}"),
    ("dependency/src/mirror.rs", "no chart named {chart:?} in"),
    ("release/src/driver.rs", "unknown driver {0:?}"),
    (
        "release/src/driver.rs",
        "the {0:?} storage driver is not supported",
    ),
    ("release/src/driver.rs", "failed to decode data {key:?}"),
    ("release/src/storage.rs", "{0:?} has no deployed releases"),
    ("release/src/storage.rs", "no revision for release {0:?}"),
    ("release/src/storage.rs", "invalid label value: {value:?}"),
    (
        "release/src/storage.rs",
        "the record of release {name:?} revision",
    ),
    ("release/src/time.rs", "parsing time {text:?} as RFC 3339"),
    (
        "repo-client/src/error.rs",
        "with the digest {digest:?}, which is not a sha256",
    ),
    // A Duration, whose Debug form is how people write one (`30s`, `1.5s`).
    (
        "repo-server/src/connections.rs",
        "did not arrive within {0:?}",
    ),
    (
        "signing/src/error.rs",
        "invalid {field} {value:?} for a new key",
    ),
    ("signing/src/error.rs", "in the keyring matches {query:?}"),
    (
        "signing/src/error.rs",
        "{query:?} matches more than one key",
    ),
    ("signing/src/error.rs", "a file named {file_name:?}"),
];

/// The lines of `text` a person may read: all of it under `cli/`, and in the libraries
/// their error messages (`#[error(...)]`) and `Display` impls. Tests are left out.
fn user_facing_lines(text: &str, whole_file: bool) -> Vec<(usize, &str)> {
    let mut end = text.len();
    let mut from = 0;
    while let Some(at) = text[from..].find("#[cfg(test)]") {
        let at = from + at;
        if text[at + "#[cfg(test)]".len()..]
            .trim_start()
            .starts_with("mod ")
        {
            end = at;
            break;
        }
        from = at + 1;
    }
    let lines: Vec<&str> = text[..end].lines().collect();
    if whole_file {
        return lines.into_iter().enumerate().collect();
    }
    let mut picked = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[error(") {
            let mut depth = 0i32;
            while index < lines.len() {
                depth += lines[index].matches('(').count() as i32;
                depth -= lines[index].matches(')').count() as i32;
                picked.push((index, lines[index]));
                index += 1;
                if depth <= 0 {
                    break;
                }
            }
            continue;
        }
        let is_display = trimmed.starts_with("impl")
            && (trimmed.contains(" Display for ") || trimmed.contains("::Display for "));
        if is_display {
            let indent = line.len() - trimmed.len();
            index += 1;
            while index < lines.len() {
                let inner = lines[index];
                let inner_indent = inner.len() - inner.trim_start().len();
                if inner_indent == indent && inner.trim_start().starts_with('}') {
                    break;
                }
                picked.push((index, inner));
                index += 1;
            }
        }
        index += 1;
    }
    picked
}

/// Debug placeholders (`{:?}`, `{x:#?}`) and `dbg!` calls on a line of code.
fn debug_uses(line: &str) -> Vec<String> {
    if line.trim_start().starts_with("//") {
        return Vec::new();
    }
    let mut found = Vec::new();
    let bytes = line.as_bytes();
    for (start, _) in line.match_indices('{') {
        let Some(length) = line[start + 1..].find(['{', '}']) else {
            continue;
        };
        let end = start + 1 + length;
        if bytes[end] != b'}' {
            continue;
        }
        let inside = &line[start + 1..end];
        if inside.ends_with(":?") || inside.ends_with(":#?") {
            found.push(line[start..=end].to_string());
        }
    }
    if line.contains("dbg!(") {
        found.push("dbg!(".to_string());
    }
    found
}

#[test]
fn no_debug_formatting_on_user_facing_error_paths() {
    let root = chartkit_tests::workspace_root();
    let mut crates: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("Cargo.toml").is_file() && p.join("src").is_dir())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            !matches!(name, "tests" | "fuzz" | "bench" | "target")
        })
        .collect();
    crates.sort();
    assert!(crates.len() > 10, "the workspace's crates: {crates:?}");
    let mut files = Vec::new();
    for dir in &crates {
        let mut pending = vec![dir.join("src")];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    pending.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    files.push(path);
                }
            }
        }
    }
    files.sort();
    let mut used = vec![false; DEBUG_ALLOWED.len()];
    let mut offending = Vec::new();
    let mut scanned = 0;
    for path in &files {
        let relative = path
            .strip_prefix(&root)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let name = path.file_name().unwrap().to_str().unwrap();
        // Test modules in files of their own.
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        let whole_file = relative.starts_with("cli/");
        for (index, line) in user_facing_lines(&text, whole_file) {
            scanned += 1;
            for found in debug_uses(line) {
                let allowed = DEBUG_ALLOWED
                    .iter()
                    .position(|(file, phrase)| *file == relative && line.contains(phrase));
                match allowed {
                    Some(entry) => used[entry] = true,
                    None => offending.push(format!(
                        "{relative}:{}: {found} in `{}`",
                        index + 1,
                        line.trim()
                    )),
                }
            }
        }
    }
    assert!(scanned > 1000, "only {scanned} lines scanned");
    assert!(
        offending.is_empty(),
        "Debug formatting on a path a person reads (word it, or add it to DEBUG_ALLOWED with a reason):\n{}",
        offending.join("\n")
    );
    let stale: Vec<_> = DEBUG_ALLOWED
        .iter()
        .zip(&used)
        .filter(|(_, used)| !**used)
        .map(|(entry, _)| format!("{entry:?}"))
        .collect();
    assert!(
        stale.is_empty(),
        "allowed uses no longer found (remove them):\n{}",
        stale.join("\n")
    );
}

#[test]
fn the_debug_scan_finds_what_it_looks_for() {
    assert_eq!(
        debug_uses(r#"format!("a {x:?} b {:#?} {}", y, z)"#),
        ["{x:?}", "{:#?}"]
    );
    assert_eq!(debug_uses("dbg!(value);"), ["dbg!("]);
    assert!(debug_uses("// Rust's {:?} quotes alike").is_empty());
    let text = "#[error(\"bad {0:?}\")]\nX(String),\nfn f() { format!(\"{y:?}\"); }\nimpl fmt::Display for A {\n    fn fmt() { write!(f, \"{z:?}\") }\n}\n#[cfg(test)]\nmod tests {\n#[error(\"{w:?}\")]\n}\n";
    let lines: Vec<_> = user_facing_lines(text, false)
        .into_iter()
        .map(|(_, l)| l.trim())
        .collect();
    assert_eq!(
        lines,
        [
            "#[error(\"bad {0:?}\")]",
            "fn fmt() { write!(f, \"{z:?}\") }"
        ]
    );
}
