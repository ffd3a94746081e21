//! How long the pages take to render, without a server: the list of 5,000 charts (all,
//! and searched) and one chart's page with a README of a few KB, as `bench/web.sh` serves
//! them. Run in release, where `perf record` can look inside too:
//!
//! cargo run --release -p chartkit-web --example render_timing [CHARTS] [ROUNDS]

use chartkit_web::{
    ChartDetail, ChartSummary, ListQuery, Maintainer, Provenance, Site, VersionSummary, chart_page,
    list_page, list_results,
};
use std::hint::black_box;
use std::time::Instant;

const WORDS: &[&str] = &[
    "redis",
    "postgres",
    "mysql",
    "kafka",
    "nginx",
    "grafana",
    "prometheus",
    "loki",
    "vault",
    "consul",
    "etcd",
    "minio",
    "keycloak",
    "harbor",
    "argo",
    "istio",
    "envoy",
    "traefik",
    "jenkins",
    "mongodb",
    "rabbitmq",
    "nats",
    "airflow",
    "spark",
    "sentry",
    "jaeger",
    "thanos",
];
const KINDS: &[&str] = &[
    "operator", "exporter", "gateway", "proxy", "agent", "server",
];

fn summaries(count: usize) -> Vec<ChartSummary> {
    (0..count)
        .map(|i| {
            let word = WORDS[i % WORDS.len()];
            let kind = KINDS[(i / WORDS.len()) % KINDS.len()];
            ChartSummary {
                name: format!("{word}-{kind}-{i:04}"),
                latest_version: format!("1.{}.{}", i % 3, i % 10),
                app_version: Some(format!("2.{}.1", i % 13)),
                description: format!(
                    "{} {kind} for Kubernetes, with {} integration and {} metrics",
                    word.to_uppercase(),
                    WORDS[(i * 7) % WORDS.len()],
                    WORDS[(i * 11) % WORDS.len()]
                ),
                keywords: vec![
                    word.into(),
                    kind.into(),
                    WORDS[(i * 3) % WORDS.len()].into(),
                ],
                maintainers: vec![Maintainer {
                    name: "Grace Hopper".into(),
                    email: Some("grace@example.com".into()),
                    url: None,
                }],
                deprecated: i % 50 == 7,
                signed: i % 100 == 0,
                version_count: 1 + usize::from(i % 5 == 0),
                icon: None,
                search_text: Default::default(),
            }
        })
        .collect()
}

fn readme() -> String {
    let mut text = String::from(
        "# redis-operator\n\nRedis operator for Kubernetes.\n\n## TL;DR\n\n```console\nhelm repo add example https://charts.example.com\nhelm install my-release example/redis-operator\n```\n\n## Introduction\n\nThis chart bootstraps a deployment on a [Kubernetes](https://kubernetes.io) cluster using the [Helm](https://helm.sh) package manager. ",
    );
    for i in 0..120 {
        text.push_str(WORDS[i % WORDS.len()]);
        text.push(' ');
    }
    text.push_str(
        "\n\n## Parameters\n\n| Name | Description | Value |\n| ---- | ----------- | ----- |\n",
    );
    for i in 0..22 {
        text.push_str(&format!(
            "| `key.number{i}` | {} setting for the {} | `{}` |\n",
            WORDS[i % WORDS.len()],
            KINDS[i % KINDS.len()],
            i * 17
        ));
    }
    text.push_str("\n## Upgrading\n\nPersistence is *on* by default; see the [changelog](https://github.com/example/charts).\n");
    text
}

fn detail() -> ChartDetail {
    ChartDetail {
        name: "redis-operator-0000".into(),
        version: "1.2.0".into(),
        app_version: Some("4.2.0".into()),
        description: "Redis operator for Kubernetes".into(),
        home: Some("https://redis.example.com".into()),
        sources: vec!["https://github.com/example/redis-operator".into()],
        keywords: vec!["redis".into(), "operator".into()],
        maintainers: vec![Maintainer {
            name: "Grace Hopper".into(),
            email: Some("grace@example.com".into()),
            url: None,
        }],
        readme: Some(readme()),
        values_yaml: Some("replicaCount: 1\nimage:\n  repository: registry.example.com/redis\n  tag: \"4.2.0\"\nservice:\n  type: ClusterIP\n  port: 6379\n".repeat(4)),
        templates: vec![
            "templates/deployment.yaml".into(),
            "templates/service.yaml".into(),
            "templates/NOTES.txt".into(),
        ],
        versions: (0..3)
            .map(|minor| VersionSummary {
                version: format!("1.{}.0", 2 - minor),
                app_version: Some("4.2.0".into()),
                created: Some("2026-11-20T10:00:00Z".into()),
                provenance: Provenance::Verified {
                    signer: "Bench Signer <bench@example.com>".into(),
                },
                package_url: format!("/charts/redis-operator-0000-1.{}.0.tgz", 2 - minor),
            })
            .collect(),
        ..Default::default()
    }
}

/// Mean microseconds per call over `rounds` calls.
fn time(label: &str, rounds: u32, mut render: impl FnMut() -> usize) {
    let mut bytes = 0;
    let start = Instant::now();
    for _ in 0..rounds {
        bytes = black_box(render());
    }
    let micros = start.elapsed().as_secs_f64() * 1e6 / f64::from(rounds);
    println!("{label:<40} {micros:>9.1} µs  {bytes:>7} bytes");
}

fn main() {
    let mut args = std::env::args().skip(1);
    let count = args
        .next()
        .map_or(5000, |a| a.parse().expect("CHARTS is a number"));
    let rounds = args
        .next()
        .map_or(1000, |a| a.parse().expect("ROUNDS is a number"));
    let site = Site {
        repo_name: "bench".into(),
        repo_url: "http://127.0.0.1:8879".into(),
        oci_base: Some("oci://127.0.0.1:8879/charts".into()),
        base_path: String::new(),
    };
    let mut charts = summaries(count);
    // The server's list comes from the index, in name order.
    charts.sort_by(|a, b| a.name.cmp(&b.name));
    let all = ListQuery::default();
    let word = ListQuery {
        text: "postgres".into(),
        ..Default::default()
    };
    let two_words = ListQuery {
        text: "postgres grace".into(),
        ..Default::default()
    };
    let chart = detail();
    println!("{count} charts, {rounds} rounds");
    time("list page", rounds, || {
        list_page(&site, &charts, &all).len()
    });
    time("list page ?q=postgres", rounds, || {
        list_page(&site, &charts, &word).len()
    });
    time("list results ?q=postgres+grace", rounds, || {
        list_results(&site, &charts, &two_words).as_str().len()
    });
    time("chart page", rounds, || chart_page(&site, &chart).len());
}
