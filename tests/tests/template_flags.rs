//! `chartkit template` flags whose effect is easy to get wrong, checked against helm.

use chartkit_tests::peers::helm_or_skip;
use chartkit_tests::{TestContext, stderr, stdout};

/// helm template presets the release name before it reads --generate-name: the output
/// still says `release-name`, and a NAME together with the flag is refused.
#[test]
fn generate_name_keeps_release_name_like_helm() {
    let context = TestContext::new();
    assert!(context.run(&["create", "web"]).status.success());
    let generated = context.run(&["template", "-g", "web"]);
    assert!(generated.status.success(), "{}", stderr(&generated));
    let plain = context.run(&["template", "web"]);
    assert_eq!(stdout(&generated), stdout(&plain));
    assert!(stdout(&plain).contains("app.kubernetes.io/instance: release-name"));

    let both = context.run(&["template", "mine", "web", "-g"]);
    assert!(!both.status.success());
    assert!(
        stderr(&both).contains("cannot set --generate-name and also specify a name"),
        "{}",
        stderr(&both)
    );

    if helm_or_skip("generate_name_keeps_release_name_like_helm").is_some() {
        let helm = context
            .helm()
            .unwrap()
            .args(["template", "-g", "web"])
            .output()
            .unwrap();
        assert_eq!(stdout(&generated), stdout(&helm));
    }
}
