//! The sandbox starts, writes a kubeconfig kubectl accepts, and answers discovery.

use chartkit_tests::TestContext;
use chartkit_tests::sandbox::{SandboxProcess, run_ok};

#[test]
fn kubectl_lists_the_seeded_namespaces_and_node() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
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
}
