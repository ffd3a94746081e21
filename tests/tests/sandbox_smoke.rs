//! The sandbox starts, writes a kubeconfig kubectl accepts, and answers discovery.

use chartkit_tests::TestContext;
use chartkit_tests::sandbox::{SandboxProcess, run_ok};

#[test]
fn kubectl_lists_the_seeded_namespaces_and_node() {
    let ctx = TestContext::new();
    let audit = ctx.path("audit.jsonl");
    let sandbox = SandboxProcess::start(&ctx, &["--audit-log", &audit.display().to_string()]);
    let Some(mut kubectl) = sandbox.kubectl(&ctx, "kubectl_lists_the_seeded_namespaces_and_node")
    else {
        return;
    };
    let out = run_ok(kubectl.args(["get", "namespaces", "-o", "name"]));
    let names = String::from_utf8_lossy(&out.stdout);
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        assert!(names.contains(&format!("namespace/{ns}")), "{names}");
    }
    let mut kubectl = sandbox.kubectl(&ctx, "").expect("kubectl");
    let out = run_ok(kubectl.args(["get", "nodes", "-o", "jsonpath={.items[*].metadata.name}"]));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "sandbox-node");

    // The audit log has a line per request, kubectl's among them.
    let log = std::fs::read_to_string(&audit).expect("audit log");
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let listed = lines
        .iter()
        .find(|l| {
            l["requestURI"]
                .as_str()
                .is_some_and(|u| u.starts_with("/api/v1/nodes"))
        })
        .expect("kubectl's list of nodes is logged");
    assert_eq!(listed["verb"], "get");
    assert_eq!(listed["responseStatus"]["code"], 200);
    assert!(
        listed["userAgent"]
            .as_str()
            .is_some_and(|a| a.starts_with("kubectl/")),
        "{listed}"
    );
}
