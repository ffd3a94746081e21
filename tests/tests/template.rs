//! `chartkit template` against every case of the corpus: the recorded `helm template`
//! command line is run with `chartkit` in place of `helm`, from the corpus directory.
//!
//! - exit code 0: stdout must equal the golden byte for byte; documents `cases.tsv`
//!   lists as non-deterministic (random secrets, certificates and checksums of them) must
//!   be at the same position with the same structure (keys, list lengths, value types).
//! - other exit codes: chartkit must fail too.

use chartkit_tests::TestContext;
use chartkit_tests::corpus::{Case, cases, corpus_or_skip};
use chartkit_yaml::{NodeKind, parse_documents};

#[test]
fn template_reproduces_every_corpus_case() {
    let Some(corpus) = corpus_or_skip("template_reproduces_every_corpus_case") else {
        return;
    };
    let context = TestContext::new();
    let mut passed = 0;
    let mut failures = Vec::new();
    for case in cases(&corpus) {
        match check_case(&context, &corpus, &case) {
            Ok(()) => passed += 1,
            Err(reason) => failures.push(format!("{}/{}: {reason}", case.chart, case.name)),
        }
    }
    println!("{passed} passed, {} failed", failures.len());
    for failure in &failures {
        println!("FAILED {failure}");
    }
    assert!(
        failures.is_empty(),
        "{} corpus case(s) differ from helm",
        failures.len()
    );
}

fn check_case(context: &TestContext, corpus: &std::path::Path, case: &Case) -> Result<(), String> {
    let mut words = case.command.split_whitespace();
    if words.next() != Some("helm") {
        return Err(format!("unexpected command {:?}", case.command));
    }
    let output = context
        .chartkit()
        .current_dir(corpus)
        .args(words)
        .output()
        .map_err(|e| format!("cannot run chartkit: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if case.exit_code != 0 {
        return if output.status.success() {
            Err("helm fails on this case, chartkit succeeded".into())
        } else {
            Ok(())
        };
    }
    if !output.status.success() {
        return Err(format!("chartkit failed: {}", stderr.trim()));
    }
    let golden_path = corpus.join(case.stdout_golden.as_deref().ok_or("no golden recorded")?);
    let golden = std::fs::read_to_string(&golden_path)
        .map_err(|e| format!("{}: {e}", golden_path.display()))?;
    if stdout == golden {
        return Ok(());
    }
    if case.deterministic {
        return Err(first_difference(&stdout, &golden));
    }
    compare_masked(&stdout, &golden, &case.nondeterministic_documents)
}

/// Document by document; the listed sources only need the same structure.
fn compare_masked(ours: &str, golden: &str, random: &[String]) -> Result<(), String> {
    let ours = chartkit_tests::corpus::documents(ours);
    let theirs = chartkit_tests::corpus::documents(golden);
    if ours.len() != theirs.len() {
        return Err(format!(
            "{} documents, helm printed {}",
            ours.len(),
            theirs.len()
        ));
    }
    for (i, ((our_source, our_doc), (their_source, their_doc))) in
        ours.iter().zip(&theirs).enumerate()
    {
        if our_source != their_source {
            return Err(format!(
                "document {i} comes from {our_source}, helm's from {their_source}"
            ));
        }
        if our_doc == their_doc {
            continue;
        }
        if !random.iter().any(|r| r == our_source) {
            return Err(first_difference(our_doc, their_doc));
        }
        let (a, b) = (parse_documents(our_doc), parse_documents(their_doc));
        match (a, b) {
            (Ok(a), Ok(b))
                if a.len() == b.len()
                    && a.iter().zip(&b).all(|(x, y)| same_shape(&x.kind, &y.kind)) => {}
            _ => {
                return Err(format!(
                    "non-deterministic document {our_source} differs in structure: {}",
                    first_difference(our_doc, their_doc)
                ));
            }
        }
    }
    Ok(())
}

fn same_shape(a: &NodeKind, b: &NodeKind) -> bool {
    match (a, b) {
        (NodeKind::Map(x), NodeKind::Map(y)) => {
            x.len() == y.len()
                && x.iter().zip(y).all(|((ka, va), (kb, vb))| {
                    ka.as_map_key() == kb.as_map_key() && same_shape(&va.kind, &vb.kind)
                })
        }
        (NodeKind::Seq(x), NodeKind::Seq(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_shape(&p.kind, &q.kind))
        }
        (NodeKind::Str(x), NodeKind::Str(y)) => x.is_empty() == y.is_empty(),
        _ => std::mem::discriminant(a) == std::mem::discriminant(b),
    }
}

fn first_difference(ours: &str, golden: &str) -> String {
    for (n, (a, b)) in ours.lines().zip(golden.lines()).enumerate() {
        if a != b {
            return format!("line {}: chartkit {a:?}, helm {b:?}", n + 1);
        }
    }
    format!(
        "chartkit printed {} lines, helm {} (or the final newline differs)",
        ours.lines().count(),
        golden.lines().count()
    )
}
