//! `chartkit create` writes what `helm create` writes, byte for byte, and `--starter`
//! makes a chart from a starter chart as helm does.

use std::path::Path;

use chartkit_tests::{TestContext, stderr, stdout};

/// Every file and directory under `dir`, relative, with the contents of files.
fn tree(dir: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap().flatten() {
            let path = entry.path();
            let relative = path.strip_prefix(dir).unwrap().display().to_string();
            if path.is_dir() {
                found.push((format!("{relative}/"), None));
                pending.push(path);
            } else {
                found.push((relative, Some(std::fs::read(&path).unwrap())));
            }
        }
    }
    found.sort();
    found
}

/// Helm 4's starter: the files `helm create` writes (charts/ is an empty directory).
const HELM_STARTER: &[&str] = &[
    ".helmignore",
    "Chart.yaml",
    "charts/",
    "templates/",
    "templates/NOTES.txt",
    "templates/_helpers.tpl",
    "templates/deployment.yaml",
    "templates/hpa.yaml",
    "templates/httproute.yaml",
    "templates/ingress.yaml",
    "templates/service.yaml",
    "templates/serviceaccount.yaml",
    "templates/tests/",
    "templates/tests/test-connection.yaml",
    "values.yaml",
];

#[test]
fn create_writes_what_helm_create_writes() {
    let context = TestContext::new();
    let output = context.run(&["create", "ours/web"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), "Creating ours/web\n");
    let ours = tree(&context.path("ours/web"));
    let names: Vec<&str> = ours.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, HELM_STARTER);
    let chart_yaml = String::from_utf8(ours[1].1.clone().unwrap()).unwrap();
    assert!(
        chart_yaml.starts_with("apiVersion: v2\nname: web\n"),
        "{chart_yaml}"
    );

    let Some(mut helm) = context.helm() else {
        return;
    };
    std::fs::create_dir(context.path("theirs")).unwrap();
    let theirs = helm.args(["create", "theirs/web"]).output().unwrap();
    assert!(theirs.status.success());
    assert_eq!(stdout(&theirs), "Creating theirs/web\n");
    let theirs = tree(&context.path("theirs/web"));
    for ((name, data), (their_name, their_data)) in ours.iter().zip(&theirs) {
        assert_eq!(name, their_name);
        assert!(data == their_data, "{name} differs from helm's");
    }
    assert_eq!(ours.len(), theirs.len());
}

/// A starter chart with placeholders, a schema, a README, CRDs, an ignored file, a lock
/// file and a subchart.
fn write_starter(dir: &Path) {
    let files: &[(&str, &str)] = &[
        (
            "Chart.yaml",
            "apiVersion: v2\nname: mystart\nversion: 9.9.9\ndescription: starter\nkeywords: [a]\ndependencies:\n- name: sub\n  version: 1.0.0\n",
        ),
        (
            "values.yaml",
            "# values for <CHARTNAME>\nname: <CHARTNAME>\nimage: {repo: \"x\"}\n",
        ),
        (
            "templates/cm.yaml",
            "kind: ConfigMap\nname: <CHARTNAME>-cm\n",
        ),
        ("README.md", "README <CHARTNAME>\n"),
        ("values.schema.json", "{\"type\":\"object\"}\n"),
        ("crds/c.yaml", "crd <CHARTNAME>\n"),
        (
            "charts/sub/Chart.yaml",
            "apiVersion: v2\nname: sub\nversion: 1.0.0\n",
        ),
        ("charts/sub/values.yaml", "x: 1\n"),
        (".helmignore", "*.bak\n"),
        ("a.bak", "ignored\n"),
        (
            "Chart.lock",
            "dependencies: []\ndigest: x\ngenerated: \"2020-01-01T00:00:00Z\"\n",
        ),
    ];
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

#[test]
fn create_from_a_starter_as_helm_does() {
    let context = TestContext::new();
    let starter = context.path("mystart");
    write_starter(&starter);
    // By absolute path, and by name under Helm's data directory.
    let output = context.run(&[
        "create",
        "ours/by-path",
        "--starter",
        starter.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let data_home = context.path(".home/data/helm/starters/mystart");
    write_starter(&data_home);
    let output = context.run(&["create", "ours/by-name", "-p", "mystart"]);
    assert!(output.status.success(), "{}", stderr(&output));

    let ours = tree(&context.path("ours/by-path"));
    let text = |name: &str| -> String {
        let (_, data) = ours.iter().find(|(n, _)| n == name).unwrap();
        String::from_utf8(data.clone().unwrap()).unwrap()
    };
    assert_eq!(
        text("Chart.yaml"),
        "apiVersion: v2\nappVersion: 0.1.0\ndescription: A Helm chart for Kubernetes\nname: by-path\ntype: application\nversion: 0.1.0\n"
    );
    assert_eq!(
        text("values.yaml"),
        "# values for by-path\nname: by-path\nimage: {repo: \"x\"}\n"
    );
    assert_eq!(
        text("templates/cm.yaml"),
        "kind: ConfigMap\nname: by-path-cm\n"
    );
    // Placeholders outside templates and values.yaml stay.
    assert_eq!(text("README.md"), "README <CHARTNAME>\n");
    let names: Vec<&str> = ours.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            ".helmignore",
            "Chart.yaml",
            "README.md",
            "charts/",
            "charts/sub-1.0.0.tgz",
            "crds/",
            "crds/c.yaml",
            "templates/",
            "templates/cm.yaml",
            "values.schema.json",
            "values.yaml",
        ]
    );
    let by_name = tree(&context.path("ours/by-name"));
    assert_eq!(by_name.len(), ours.len());

    // A starter that is not there.
    let missing = context.run(&["create", "ours/none", "--starter", "nope"]);
    assert_eq!(missing.status.code(), Some(1));
    let message = stderr(&missing);
    assert!(
        message.starts_with(&format!(
            "Error: could not load the starter `{}`",
            context.path(".home/data/helm/starters/nope").display()
        )),
        "{message}"
    );

    let Some(mut helm) = context.helm() else {
        return;
    };
    std::fs::create_dir(context.path("theirs")).unwrap();
    let theirs = helm
        .args([
            "create",
            "theirs/by-path",
            "--starter",
            starter.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(theirs.status.success(), "{}", stderr(&theirs));
    let theirs = tree(&context.path("theirs/by-path"));
    // The subchart package holds helm's current time; everything else is the same.
    let without_packages = |files: &[(String, Option<Vec<u8>>)]| -> Vec<(String, Option<Vec<u8>>)> {
        files
            .iter()
            .map(|(n, d)| {
                (
                    n.clone(),
                    if n.ends_with(".tgz") { None } else { d.clone() },
                )
            })
            .collect()
    };
    assert_eq!(without_packages(&ours), without_packages(&theirs));
}
