//! Parse throughput of every file under a `templates/` directory below DIR (an unpacked
//! chart, or a tree of them), parsed ROUNDS times in this process.
//! Usage: cargo run --release -p chartkit-template --example parse_bench -- DIR [ROUNDS]
use std::time::Instant;
fn main() {
    let dir = std::env::args().nth(1).unwrap();
    let n: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(100);
    let mut files = Vec::new();
    for entry in walk(std::path::Path::new(&dir)) {
        let s = entry.to_string_lossy().to_string();
        if s.contains("/templates/") {
            files.push((
                s.clone(),
                std::fs::read_to_string(&entry).unwrap_or_default(),
            ));
        }
    }
    let bytes: usize = files.iter().map(|f| f.1.len()).sum();
    let t = Instant::now();
    for _ in 0..n {
        for (name, text) in &files {
            let trees = chartkit_template::parse::parse(name, text, &|f| {
                chartkit_template::TemplateSet::has_function(f)
            });
            std::hint::black_box(&trees);
        }
    }
    let e = t.elapsed();
    eprintln!(
        "{} files {} bytes: {:?} per round, {:.1} MB/s",
        files.len(),
        bytes,
        e / n as u32,
        bytes as f64 * n as f64 / e.as_secs_f64() / 1e6
    );
}
fn walk(p: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(p).unwrap() {
        let e = e.unwrap().path();
        if e.is_dir() {
            out.extend(walk(&e));
        } else {
            out.push(e);
        }
    }
    out
}
