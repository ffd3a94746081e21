//! `chartkit repo index` indexes exactly the packages `helm repo index` indexes, on a set
//! of hostile and odd archives made here. Each case records what helm 4 does; with helm
//! installed the record itself is checked against it, so the table cannot drift.

use std::io::Write;

use chartkit_tests::archive::{Entry, build, chart_yaml};
use chartkit_tests::{TestContext, stderr};

struct Case {
    name: &'static str,
    archive: Vec<u8>,
    /// Whether helm indexes it.
    indexed: bool,
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap()
}

fn gunzip(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(data), &mut out).unwrap();
    out
}

/// A tar made by the tar crate's builder, which writes long names as GNU or PAX records.
fn tar_with_long_name(pax: bool) -> Vec<u8> {
    let chart = chart_yaml("odd");
    let long = format!("odd/templates/{}.yaml", "x".repeat(180));
    let mut builder = tar::Builder::new(Vec::new());
    for (path, data) in [
        ("odd/Chart.yaml", chart.as_bytes()),
        (long.as_str(), b"a: 1\n"),
    ] {
        let mut header = if pax {
            tar::Header::new_ustar()
        } else {
            tar::Header::new_gnu()
        };
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        if pax && path.len() > 100 {
            builder
                .append_pax_extensions([("path", path.as_bytes())])
                .unwrap();
            header.set_path("odd/templates/long.yaml").unwrap();
            header.set_cksum();
            builder.append(&header, data).unwrap();
        } else {
            builder.append_data(&mut header, path, data).unwrap();
        }
    }
    gzip(&builder.into_inner().unwrap())
}

fn cases() -> Vec<Case> {
    let chart = chart_yaml("odd");
    let chart = chart.as_bytes();
    let five_mib = vec![0u8; 5 * 1024 * 1024];
    let plain = build(&[Entry::File("odd/Chart.yaml", chart)]);
    let mut cases = vec![
        Case {
            name: "plain",
            archive: plain.clone(),
            indexed: true,
        },
        Case {
            name: "traversal",
            archive: build(&[
                Entry::File("odd/Chart.yaml", chart),
                Entry::File("odd/../../escaped", b"x"),
            ]),
            indexed: false,
        },
        Case {
            // `..` that stays inside the chart once cleaned.
            name: "inner-parent",
            archive: build(&[
                Entry::File("odd/Chart.yaml", chart),
                Entry::File("odd/a/../b", b"x"),
            ]),
            indexed: true,
        },
        Case {
            // The first component is dropped, even an empty one.
            name: "absolute",
            archive: build(&[
                Entry::File("odd/Chart.yaml", chart),
                Entry::File("/tmp/escaped", b"x"),
            ]),
            indexed: true,
        },
        Case {
            name: "drive",
            archive: build(&[
                Entry::File("odd/Chart.yaml", chart),
                Entry::File("odd/c:/x", b"x"),
            ]),
            indexed: false,
        },
        Case {
            name: "file-beside-the-top-directory",
            archive: build(&[
                Entry::File("odd/Chart.yaml", chart),
                Entry::File("README", b"x"),
            ]),
            indexed: false,
        },
        Case {
            name: "symlink",
            archive: build(&[
                Entry::File("odd/Chart.yaml", chart),
                Entry::Symlink("odd/templates/l.yaml", "/etc/passwd"),
            ]),
            indexed: true,
        },
        Case {
            name: "hardlink",
            archive: build(&[
                Entry::File("odd/Chart.yaml", chart),
                Entry::HardLink("odd/values.yaml", "/etc/shadow"),
            ]),
            indexed: true,
        },
        Case {
            name: "device-and-fifo",
            archive: build(&[
                Entry::File("odd/Chart.yaml", chart),
                Entry::CharDevice("odd/null"),
                Entry::Fifo("odd/pipe"),
            ]),
            indexed: true,
        },
        Case {
            name: "repeated-path",
            archive: build(&[
                Entry::File("odd/Chart.yaml", chart),
                Entry::File("odd/values.yaml", b"a: 1\n"),
                Entry::File("odd/values.yaml", b"a: 2\n"),
            ]),
            indexed: true,
        },
        Case {
            name: "chart-yaml-at-top",
            archive: build(&[Entry::File("Chart.yaml", chart)]),
            indexed: false,
        },
        Case {
            name: "dot-slash",
            archive: build(&[Entry::File("./Chart.yaml", chart)]),
            indexed: true,
        },
        Case {
            name: "two-top-directories",
            archive: build(&[
                Entry::File("a/Chart.yaml", chart),
                Entry::File("b/values.yaml", b"a: 1\n"),
            ]),
            indexed: true,
        },
        Case {
            name: "windows-separators",
            archive: build(&[
                Entry::File("odd\\Chart.yaml", chart),
                Entry::File("odd\\templates\\a.yaml", b"a: 1\n"),
            ]),
            indexed: true,
        },
        Case {
            name: "byte-order-mark",
            archive: build(&[Entry::File(
                "odd/Chart.yaml",
                &[b"\xEF\xBB\xBF".as_slice(), chart].concat(),
            )]),
            indexed: true,
        },
        Case {
            name: "empty",
            archive: build(&[Entry::Dir("odd/")]),
            indexed: false,
        },
        Case {
            name: "not-gzip",
            archive: chart.to_vec(),
            indexed: false,
        },
        Case {
            name: "truncated",
            archive: {
                let mut bytes = build(&[
                    Entry::File("odd/Chart.yaml", chart),
                    Entry::File("odd/values.yaml", &[b'a'; 5000]),
                ]);
                bytes.truncate(bytes.len() / 2);
                bytes
            },
            indexed: false,
        },
        Case {
            name: "trailing-garbage",
            archive: [plain.as_slice(), b"garbage"].concat(),
            indexed: true,
        },
        Case {
            name: "multi-member-gzip",
            archive: {
                let tar = gunzip(&plain);
                [gzip(&tar[..1024]), gzip(&tar[1024..])].concat()
            },
            indexed: true,
        },
        Case {
            name: "gnu-long-name",
            archive: tar_with_long_name(false),
            indexed: true,
        },
        Case {
            name: "pax-long-name",
            archive: tar_with_long_name(true),
            indexed: true,
        },
        Case {
            name: "file-over-5-mib",
            archive: build(&[
                Entry::File("odd/Chart.yaml", chart),
                Entry::File("odd/big", &vec![0u8; 5 * 1024 * 1024 + 1]),
            ]),
            indexed: false,
        },
        Case {
            name: "file-of-exactly-5-mib",
            archive: build(&[
                Entry::File("odd/Chart.yaml", chart),
                Entry::File("odd/big", &five_mib),
            ]),
            indexed: true,
        },
        Case {
            name: "bad-values",
            archive: build(&[
                Entry::File("odd/Chart.yaml", chart),
                Entry::File("odd/values.yaml", b"a: [1\n"),
            ]),
            indexed: false,
        },
        Case {
            name: "deep-values",
            archive: {
                let deep: String = (0..1500)
                    .map(|i| format!("{}k:\n", " ".repeat(i)))
                    .chain([format!("{}x\n", " ".repeat(1500))])
                    .collect();
                build(&[
                    Entry::File("odd/Chart.yaml", chart),
                    Entry::File("odd/values.yaml", deep.as_bytes()),
                ])
            },
            indexed: true,
        },
        Case {
            name: "bad-lock",
            archive: build(&[
                Entry::File("odd/Chart.yaml", chart),
                Entry::File("odd/Chart.lock", b"- x\n"),
            ]),
            indexed: false,
        },
        Case {
            name: "bad-subchart",
            archive: build(&[
                Entry::File("odd/Chart.yaml", chart),
                Entry::File("odd/charts/sub/Chart.yaml", b"name: sub\n"),
            ]),
            indexed: false,
        },
        Case {
            name: "subchart-archive-not-gzip",
            archive: build(&[
                Entry::File("odd/Chart.yaml", chart),
                Entry::File("odd/charts/sub-1.0.0.tgz", b"not gzip"),
            ]),
            indexed: false,
        },
        Case {
            name: "name-dot-dot",
            archive: build(&[Entry::File(
                "odd/Chart.yaml",
                b"apiVersion: v2\nname: ..\nversion: 0.1.0\n",
            )]),
            indexed: false,
        },
        Case {
            name: "name-with-slash",
            archive: build(&[Entry::File(
                "odd/Chart.yaml",
                b"apiVersion: v2\nname: a/b\nversion: 0.1.0\n",
            )]),
            indexed: false,
        },
        Case {
            name: "long-version",
            archive: build(&[Entry::File(
                "odd/Chart.yaml",
                format!(
                    "apiVersion: v2\nname: odd\nversion: 1.0.0-{}\n",
                    "a".repeat(300)
                )
                .as_bytes(),
            )]),
            indexed: true,
        },
        Case {
            name: "two-chart-yamls",
            archive: build(&[
                Entry::File("odd/Chart.yaml", b"apiVersion: v2\nname: odd\n"),
                Entry::File("odd/Chart.yaml", b"version: 2.0.0\n"),
            ]),
            indexed: true,
        },
    ];
    // Helm's total limit is strict: exactly 100 MiB is too much.
    let names: Vec<String> = (0..19).map(|i| format!("odd/zeros-{i}")).collect();
    let rest = vec![0u8; 5 * 1024 * 1024 - chart.len()];
    let mut total = vec![Entry::File("odd/Chart.yaml", chart)];
    total.extend(names.iter().map(|name| Entry::File(name, &five_mib)));
    total.push(Entry::File("odd/rest", &rest));
    cases.push(Case {
        name: "exactly-100-mib",
        archive: build(&total),
        indexed: false,
    });
    cases
}

fn indexed_digests(index: &std::path::Path) -> usize {
    std::fs::read_to_string(index)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.trim_start().starts_with("digest: "))
        .count()
}

#[test]
fn repo_index_indexes_exactly_what_helm_indexes() {
    let context = TestContext::new();
    let helm = chartkit_tests::peers::helm_or_skip("repo_index_indexes_exactly_what_helm_indexes");
    let mut wrong = Vec::new();
    for case in cases() {
        let ours = context.path(&format!("ours/{}", case.name));
        std::fs::create_dir_all(&ours).unwrap();
        std::fs::write(ours.join(format!("{}.tgz", case.name)), &case.archive).unwrap();
        let output = context
            .chartkit()
            .args(["repo", "index"])
            .arg(&ours)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}: {}",
            case.name,
            stderr(&output)
        );
        let chartkit_indexed = indexed_digests(&ours.join("index.yaml")) == 1;
        if chartkit_indexed != case.indexed {
            wrong.push(format!(
                "chartkit {} {}",
                if chartkit_indexed {
                    "indexed"
                } else {
                    "skipped"
                },
                case.name
            ));
        }
        if helm.is_some() {
            let theirs = context.path(&format!("helm/{}", case.name));
            std::fs::create_dir_all(&theirs).unwrap();
            std::fs::write(theirs.join(format!("{}.tgz", case.name)), &case.archive).unwrap();
            let output = context
                .helm()
                .unwrap()
                .args(["repo", "index"])
                .arg(&theirs)
                .output()
                .unwrap();
            assert!(
                output.status.success(),
                "helm on {}: {}",
                case.name,
                stderr(&output)
            );
            let helm_indexed = indexed_digests(&theirs.join("index.yaml")) == 1;
            if helm_indexed != case.indexed {
                wrong.push(format!(
                    "helm {} {} (the table says otherwise)",
                    if helm_indexed { "indexed" } else { "skipped" },
                    case.name
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn the_server_skips_stored_packages_repo_index_or_its_clients_refuse() {
    // The same table through `chartkit serve`'s storage sync: the packages it skips at
    // start are the ones `repo index` (and helm) skip, and those chartkit's own clients
    // refuse to load (`show`, like `pull --untar`, reads archives by the strict rules):
    // a server serves only what its clients can use.
    let context = TestContext::new();
    let dir = context.path("storage");
    std::fs::create_dir_all(&dir).unwrap();
    let mut expected = Vec::new();
    for case in cases() {
        let file = dir.join(format!("{}.tgz", case.name));
        std::fs::write(&file, &case.archive).unwrap();
        let clients_refuse = !context
            .run(&["show", "chart", file.to_str().unwrap()])
            .status
            .success();
        if !case.indexed || clients_refuse {
            expected.push(format!("{}.tgz", case.name));
        }
    }
    let server = chartkit_tests::server::ServeProcess::start(
        context.chartkit(),
        &[dir.to_str().unwrap()],
        context.dir(),
    );
    let mut skipped: Vec<String> = server
        .startup
        .iter()
        .filter_map(|line| line.trim().strip_prefix("skipped "))
        .filter_map(|rest| rest.split_once(':').map(|(file, _)| file.to_owned()))
        .collect();
    skipped.sort();
    expected.sort();
    assert_eq!(skipped, expected, "{:#?}", server.startup);
}
