//! Every template of every chart in the shared corpus parses.

mod corpus;

use chartkit_template::TemplateSet;

#[test]
fn every_corpus_template_parses() {
    let packages = corpus::packages();
    if packages.is_empty() {
        eprintln!(
            "skipping: corpus not found at {}",
            corpus::charts_dir().display()
        );
        return;
    }
    let mut total = 0;
    let mut failures = Vec::new();
    for pkg in &packages {
        let templates = corpus::templates(pkg);
        total += templates.len();
        let mut set = TemplateSet::new();
        if let Err(e) = set.add_all(templates.iter().map(|(n, t)| (n.as_str(), t.as_str()))) {
            failures.push(format!("{}: {}", pkg.display(), e.helm_message()));
        }
    }
    eprintln!("parsed {total} templates from {} charts", packages.len());
    assert!(
        total > 1000,
        "expected a large corpus, found {total} templates"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
