//! Parse and render time for the largest chart in the shared corpus.

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "../tests/corpus/mod.rs"]
mod corpus;

use chartkit_template::TemplateSet;

const CHART: &str = "kube-prometheus-stack-88.5.3.tgz";

fn bench(c: &mut Criterion) {
    let path = std::path::Path::new(corpus::CORPUS).join(CHART);
    if !path.exists() {
        eprintln!("skipping: {} not found", path.display());
        return;
    }
    let entries = corpus::files(&path);
    let charts = corpus::charts(&entries);
    let templates: Vec<(String, String)> = charts
        .iter()
        .flat_map(|c| c.templates.iter().cloned())
        .collect();
    let bytes: usize = templates.iter().map(|(_, t)| t.len()).sum();
    eprintln!(
        "{CHART}: {} templates, {} KiB",
        templates.len(),
        bytes / 1024
    );

    c.bench_function("parse kube-prometheus-stack", |b| {
        b.iter(|| {
            let mut set = TemplateSet::new();
            set.add_all(templates.iter().map(|(n, t)| (n.as_str(), t.as_str())))
                .expect("parses");
            set
        })
    });

    let mut set = TemplateSet::new();
    set.add_all(templates.iter().map(|(n, t)| (n.as_str(), t.as_str())))
        .expect("parses");
    let root = charts.iter().map(|c| c.path.len()).min().unwrap_or(0);
    let jobs: Vec<(String, &corpus::Chart, bool)> = charts
        .iter()
        .flat_map(|c| {
            c.templates
                .iter()
                .filter(|(n, _)| !n.rsplit('/').next().unwrap_or("").starts_with('_'))
                .map(move |(n, _)| (n.clone(), c, c.path.len() == root))
        })
        .collect();
    let ok = jobs
        .iter()
        .filter(|(n, c, r)| set.render(n, corpus::render_data(c, *r, n)).is_ok())
        .count();
    eprintln!(
        "rendering {} templates ({ok} succeed with each chart's own defaults)",
        jobs.len()
    );
    c.bench_function("render kube-prometheus-stack", |b| {
        b.iter(|| {
            let mut out = 0usize;
            for (name, chart, is_root) in &jobs {
                if let Ok(s) = set.render(name, corpus::render_data(chart, *is_root, name)) {
                    out += s.len();
                }
            }
            out
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
