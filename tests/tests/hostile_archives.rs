//! Hostile chart archives are refused, each with a message naming the offending entry, and
//! nothing is written outside the places chartkit is asked to write.

use chartkit_tests::archive::{Entry, build, chart_yaml, write};
use chartkit_tests::{TestContext, stderr};

struct Case {
    name: &'static str,
    archive: Vec<u8>,
    /// Text the error must contain (the entry name or the limit).
    expected: &'static str,
}

fn cases() -> Vec<Case> {
    let chart = chart_yaml("evil");
    let chart = chart.as_bytes();
    let big = vec![b'x'; 6 * 1024 * 1024];
    vec![
        Case {
            name: "absolute-path",
            archive: build(&[
                Entry::File("evil/Chart.yaml", chart),
                Entry::File("/tmp/chartkit-evil-absolute", b"x"),
            ]),
            expected: "`/tmp/chartkit-evil-absolute`",
        },
        Case {
            name: "parent-reference",
            archive: build(&[
                Entry::File("evil/Chart.yaml", chart),
                Entry::File("evil/../../escaped.txt", b"x"),
            ]),
            expected: "`evil/../../escaped.txt`",
        },
        Case {
            name: "top-level-parent",
            archive: build(&[
                Entry::File("evil/Chart.yaml", chart),
                Entry::File("../escaped.txt", b"x"),
            ]),
            expected: "`../escaped.txt`",
        },
        Case {
            name: "symlink",
            archive: build(&[
                Entry::File("evil/Chart.yaml", chart),
                Entry::Symlink("evil/templates/link.yaml", "/etc/passwd"),
            ]),
            expected: "`evil/templates/link.yaml` is a link",
        },
        Case {
            name: "hardlink",
            archive: build(&[
                Entry::File("evil/Chart.yaml", chart),
                Entry::HardLink("evil/values.yaml", "/etc/shadow"),
            ]),
            expected: "`evil/values.yaml` is a link",
        },
        Case {
            name: "device",
            archive: build(&[
                Entry::File("evil/Chart.yaml", chart),
                Entry::CharDevice("evil/templates/null"),
            ]),
            expected: "`evil/templates/null` is a special file",
        },
        Case {
            name: "fifo",
            archive: build(&[
                Entry::File("evil/Chart.yaml", chart),
                Entry::Fifo("evil/pipe"),
            ]),
            expected: "`evil/pipe` is a special file",
        },
        Case {
            name: "duplicate",
            archive: build(&[
                Entry::File("evil/Chart.yaml", chart),
                Entry::File("evil/values.yaml", b"a: 1\n"),
                Entry::File("evil/values.yaml", b"a: 2\n"),
            ]),
            expected: "`evil/values.yaml` appears more than once",
        },
        Case {
            name: "oversized-file",
            archive: build(&[
                Entry::File("evil/Chart.yaml", chart),
                Entry::File("evil/huge.bin", &big),
            ]),
            expected: "`evil/huge.bin` is larger than the 5242880-byte limit per file",
        },
        Case {
            name: "chart-yaml-at-top",
            archive: build(&[Entry::File("Chart.yaml", chart)]),
            expected: "`Chart.yaml` is not inside a top directory",
        },
        Case {
            name: "empty",
            archive: build(&[Entry::Dir("evil/")]),
            expected: "archive contains no files",
        },
        Case {
            name: "not-gzip",
            archive: b"apiVersion: v2\n".to_vec(),
            expected: "gzip",
        },
        Case {
            name: "truncated-gzip",
            archive: {
                let mut bytes = build(&[
                    Entry::File("evil/Chart.yaml", chart),
                    Entry::File("evil/values.yaml", &[b'a'; 5000]),
                ]);
                bytes.truncate(bytes.len() / 2);
                bytes
            },
            expected: "not a valid chart archive",
        },
    ]
}

#[test]
fn hostile_archives_are_refused_naming_the_entry() {
    let context = TestContext::new();
    for case in cases() {
        let file = format!("{}.tgz", case.name);
        write(&context.path(&file), &case.archive);
        let before = context.tree();
        for command in [
            &["show", "chart", file.as_str()][..],
            &["lint", file.as_str()][..],
        ] {
            let output = context.run(command);
            assert!(
                !output.status.success(),
                "{} {command:?} should fail",
                case.name
            );
            let all = format!("{}{}", chartkit_tests::stdout(&output), stderr(&output));
            // lint reports a stream that stops short in helm lint's words.
            let expected = match (command[0], case.name) {
                ("lint", "truncated-gzip") => "unable to extract tarball: unexpected EOF",
                _ => case.expected,
            };
            assert!(
                all.contains(expected),
                "{} {command:?}: expected {expected:?} in:\n{all}",
                case.name,
            );
            assert!(!all.contains("panicked"), "{}: {all}", case.name);
        }
        assert_eq!(
            context.tree(),
            before,
            "{}: nothing may be written",
            case.name
        );
    }
    assert!(!std::path::Path::new("/tmp/chartkit-evil-absolute").exists());
    assert!(!context.dir().parent().unwrap().join("escaped.txt").exists());
}

#[test]
fn total_size_and_entry_limits_can_be_lowered() {
    let context = TestContext::new();
    let chart = chart_yaml("many");
    let names: Vec<String> = (0..50).map(|i| format!("many/files/f{i}.txt")).collect();
    let mut entries = vec![Entry::File("many/Chart.yaml", chart.as_bytes())];
    entries.extend(names.iter().map(|n| Entry::File(n, &[b'z'; 1000])));
    write(&context.path("many.tgz"), &build(&entries));
    assert!(
        context.run(&["show", "chart", "many.tgz"]).status.success(),
        "fits the default limits"
    );
    let output = context
        .chartkit()
        .args(["show", "chart", "many.tgz"])
        .env("CHARTKIT_MAX_CHART_SIZE", "20000")
        .output()
        .unwrap();
    assert!(
        stderr(&output).contains("archive expands to more than 20000 bytes"),
        "{}",
        stderr(&output)
    );
    let output = context
        .chartkit()
        .args(["show", "chart", "many.tgz"])
        .env("CHARTKIT_MAX_FILE_SIZE", "999")
        .output()
        .unwrap();
    assert!(
        stderr(&output).contains("is larger than the 999-byte limit per file"),
        "{}",
        stderr(&output)
    );
    let output = context
        .chartkit()
        .args(["show", "chart", "many.tgz"])
        .env("CHARTKIT_MAX_FILE_SIZE", "lots")
        .output()
        .unwrap();
    assert!(
        stderr(&output).contains("`CHARTKIT_MAX_FILE_SIZE` must be a whole number"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn unpacking_checks_every_entry_before_writing_anything() {
    let context = TestContext::new();
    let chart = chart_yaml("evil");
    let archive = build(&[
        Entry::File("evil/Chart.yaml", chart.as_bytes()),
        Entry::File("evil/templates/ok.yaml", b"kind: A\n"),
        Entry::File("evil/../../escaped.txt", b"x"),
    ]);
    let destination = context.path("out");
    std::fs::create_dir_all(&destination).unwrap();
    let result = chartkit_chart::archive::unpack(&archive, &destination, &Default::default());
    assert!(result.is_err());
    assert!(
        std::fs::read_dir(&destination).unwrap().next().is_none(),
        "no partial unpack"
    );
}
