//! Parse and render time for the largest chart in the shared corpus.

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "../tests/corpus/mod.rs"]
mod corpus;

use chartkit_template::TemplateSet;

const CHART: &str = "kube-prometheus-stack-88.5.3.tgz";

fn bench(c: &mut Criterion) {
    let path = corpus::charts_dir().join(CHART);
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
    let mut jobs: Vec<(String, usize)> = charts
        .iter()
        .enumerate()
        .flat_map(|(i, c)| {
            c.templates
                .iter()
                .filter(|(n, _)| !n.rsplit('/').next().unwrap_or("").starts_with('_'))
                .map(move |(n, _)| (n.clone(), i))
        })
        .collect();
    jobs.sort_by(|a, b| chartkit_template::helm_parse_order(&a.0, &b.0));
    // One data map per chart per render, as Helm builds it: values are converted from
    // YAML data once per render, then every template of the chart shares them.
    let render_all = |set: &TemplateSet| {
        let datas: Vec<_> = charts
            .iter()
            .map(|c| corpus::render_data(c, c.path.len() == root, ""))
            .collect();
        let (mut ok, mut bytes) = (0usize, 0usize);
        for (name, i) in &jobs {
            corpus::set_template(&datas[*i], &charts[*i], name);
            if let Ok(s) = set.render(name, datas[*i].clone()) {
                ok += 1;
                bytes += s.len();
            }
        }
        (ok, bytes)
    };
    let (ok, bytes) = render_all(&set);
    eprintln!(
        "rendering {} templates: {ok} succeed with each chart's own defaults, {} KiB out",
        jobs.len(),
        bytes / 1024
    );
    c.bench_function("render kube-prometheus-stack", |b| {
        b.iter(|| render_all(&set))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
