//! `--offline` with `oci://` references: after a first pull the registry stops, and a
//! range is still resolved from the tags last listed (the output says how old that list
//! is), a digest from the content store; a tag never seen fails naming it and the tags
//! that were seen, and writes nothing.

use chartkit_tests::registry::{RegistryOptions, RegistryProcess};
use chartkit_tests::sandbox::run_ok;
use chartkit_tests::{TestContext, stderr, stdout};

#[test]
fn offline_pulls_resolve_ranges_and_digests_from_what_the_registry_said() {
    const NAME: &str = "offline_pulls_resolve_ranges_and_digests_from_what_the_registry_said";
    let ctx = TestContext::new();
    let Some(registry) =
        RegistryProcess::start_or_skip(NAME, ctx.dir(), &RegistryOptions::default())
    else {
        return;
    };
    let packages = ctx.path("packages");
    let mut digests = Vec::new();
    for version in ["0.1.0", "0.2.0"] {
        let src = ctx.path(&format!("src/{version}/web"));
        std::fs::create_dir_all(src.join("templates")).unwrap();
        std::fs::write(
            src.join("Chart.yaml"),
            format!("apiVersion: v2\nname: web\nversion: {version}\n"),
        )
        .unwrap();
        run_ok(
            ctx.chartkit()
                .arg("package")
                .arg(&src)
                .arg("-d")
                .arg(&packages),
        );
        let pushed = run_ok(
            ctx.chartkit()
                .arg("push")
                .arg(packages.join(format!("web-{version}.tgz")))
                .args([&registry.oci("charts"), "--plain-http"]),
        );
        digests.push(chartkit_tests::digest_line(&pushed));
    }
    // Online: a range (the tags are listed) and a tag.
    let web = registry.oci("charts/web");
    let online = ctx.path("online");
    run_ok(
        ctx.chartkit()
            .args(["pull", &web, "--version", "^0", "--plain-http", "-d"])
            .arg(&online),
    );
    run_ok(
        ctx.chartkit()
            .args(["pull", &web, "--version", "0.1.0", "--plain-http", "-d"])
            .arg(&online),
    );
    registry.stop();

    let out = ctx.path("offline");
    let pull = |args: &[&str]| {
        ctx.chartkit()
            .args(["pull", "--offline", "--plain-http", "-d"])
            .arg(&out)
            .args(args)
            .output()
            .unwrap()
    };
    // A range, from the tags listed before.
    let ranged = pull(&[&web, "--version", "~0.1"]);
    assert!(ranged.status.success(), "{}", stderr(&ranged));
    assert_eq!(chartkit_tests::digest_line(&ranged), digests[0]);
    assert!(
        stderr(&ranged).contains(&format!(
            "offline: oci://{}/charts/web resolved from what the registry said ",
            registry_host(&web)
        )) && stderr(&ranged).contains(" ago"),
        "{}",
        stderr(&ranged)
    );
    let newest = pull(&[&web]);
    assert!(newest.status.success(), "{}", stderr(&newest));
    assert_eq!(chartkit_tests::digest_line(&newest), digests[1]);
    assert_eq!(
        std::fs::read(out.join("web-0.2.0.tgz")).unwrap(),
        std::fs::read(packages.join("web-0.2.0.tgz")).unwrap()
    );
    // A digest, from the content store alone.
    let by_digest = pull(&[&format!("{web}@{}", digests[0])]);
    assert!(by_digest.status.success(), "{}", stderr(&by_digest));
    assert!(
        stderr(&by_digest).contains(&digests[0]),
        "{}",
        stderr(&by_digest)
    );

    // A tag never seen: named, with the tags that were, and nothing written.
    std::fs::remove_dir_all(&out).unwrap();
    let unseen = pull(&[&format!("{web}:0.3.0")]);
    assert_eq!(unseen.status.code(), Some(1), "{}", stdout(&unseen));
    let error = stderr(&unseen);
    assert!(
        error.starts_with("Error: the tag 0.3.0 of oci://")
            && error.contains("the tags the registry listed")
            && error.contains("0.1.0")
            && error.contains("0.2.0")
            && error.contains("chartkit is offline"),
        "{error}"
    );
    assert!(!out.join("web-0.3.0.tgz").exists());
    let unmatched = pull(&[&web, "--version", "^1"]);
    assert_eq!(unmatched.status.code(), Some(1));
    assert!(
        stderr(&unmatched)
            .contains("could not locate a version matching provided version string ^1"),
        "{}",
        stderr(&unmatched)
    );
}

fn registry_host(oci: &str) -> &str {
    oci.trim_start_matches("oci://").split('/').next().unwrap()
}
