//! Dynamic completion compared with helm's `__complete` on one sandbox and one
//! repository list: namespaces for `-n`, kube contexts, output formats, repository names,
//! `REPO/` then `REPO/CHART` for chart arguments, and the same lines seen through real
//! bash and zsh completion.

use chartkit_tests::sandbox::{SandboxProcess, run_ok};
use chartkit_tests::{TestContext, stdout};

const NAME: &str = "completion_vs_helm";

/// `__complete` lines (candidates, then `:DIRECTIVE`); with `sorted`, the candidates in
/// order, for lists helm builds from a Go map.
fn lines(output: &std::process::Output, sorted: bool) -> Vec<String> {
    let mut lines: Vec<String> = stdout(output).lines().map(str::to_owned).collect();
    if sorted {
        let directive = lines.pop();
        lines.sort();
        lines.extend(directive);
    }
    lines
}

#[test]
fn namespaces_contexts_formats_repositories_and_charts_complete_as_helm_completes_them() {
    let ctx = TestContext::new();
    let sandbox = SandboxProcess::start(&ctx, &[]);
    let Some(_) = sandbox.helm(&ctx, NAME) else {
        return;
    };
    run_ok(sandbox.chartkit(&ctx).args(["create", "starter"]));
    run_ok(sandbox.chartkit(&ctx).args(["create", "other"]));
    run_ok(
        sandbox
            .chartkit(&ctx)
            .args(["install", "alpha", "starter", "-n", "default"]),
    );
    run_ok(sandbox.chartkit(&ctx).args([
        "install",
        "beta",
        "starter",
        "-n",
        "team-a",
        "--create-namespace",
    ]));
    for chart in ["starter", "other"] {
        run_ok(ctx.chartkit().args(["package", chart, "-d", "repo"]));
    }
    run_ok(ctx.chartkit().args(["repo", "index", "repo"]));
    let server = chartkit_tests::counting_server::CountingServer::start(&ctx.path("repo"));
    run_ok(
        ctx.chartkit()
            .args(["repo", "add", "shop", server.url.as_str()]),
    );
    run_ok(
        ctx.chartkit()
            .args(["repo", "add", "store", server.url.as_str()]),
    );

    let cases: &[(&[&str], bool)] = &[
        (&["status", "-n", ""], false),
        (&["upgrade", "--namespace", ""], false),
        (&["list", "--kube-context", ""], true),
        (&["status", "alpha", "-o", ""], false),
        (&["history", "alpha", "--output", ""], false),
        (&["repo", "remove", ""], false),
        (&["install", "web", ""], false),
        (&["install", "web", "s"], false),
        (&["install", "web", "sh"], false),
        (&["install", "web", "shop/"], true),
        (&["template", "web", "store/"], true),
        (&["show", "values", ""], false),
        (&["pull", ""], false),
        (&["pull", "o"], false),
        (&["install", "web", "oci://"], false),
    ];
    // chartkit's `__complete` keeps only what starts with the typed word everywhere; helm
    // leaves that to the shell for some lists (`repo remove st` gives every repository),
    // so the cases compared here are those where both give the same lines by design.
    for (words, sorted) in cases {
        let theirs = sandbox
            .helm(&ctx, NAME)
            .unwrap()
            .arg("__complete")
            .args(*words)
            .output()
            .unwrap();
        let ours = sandbox
            .chartkit(&ctx)
            .arg("__complete")
            .args(*words)
            .output()
            .unwrap();
        assert_eq!(
            lines(&ours, *sorted),
            lines(&theirs, *sorted),
            "__complete {words:?}"
        );
    }
    // The namespaces really are the cluster's, the new one included.
    let namespaces = stdout(
        &sandbox
            .chartkit(&ctx)
            .args(["__complete", "status", "-n", ""])
            .output()
            .unwrap(),
    );
    assert!(namespaces.contains("\nteam-a\n"), "{namespaces}");

    // Through bash's completion, as a user sees it.
    let bash = chartkit_tests::shells::bash_completions(
        &ctx,
        &[
            "chartkit status -n te",
            "chartkit list --kube-context ",
            "chartkit status alpha -o j",
            "chartkit install web sh",
            "chartkit install web shop/",
            "chartkit repo remove st",
        ],
        &sandbox.kubeconfig,
    );
    assert_eq!(
        bash,
        "complete -F _chartkit chartkit\nchartkit status -n te|team-a\nchartkit list --kube-context |chartkit-sandbox\nchartkit status alpha -o j|json\nchartkit install web sh|shop/\nchartkit install web shop/|shop/other shop/starter\nchartkit repo remove st|store\n"
    );

    // zsh's widget on a pseudo-terminal: `chartkit status -n <TAB>` lists the namespaces.
    let Some(screen) = chartkit_tests::shells::zsh_screen_after_tab(
        &ctx,
        "chartkit status -n ",
        &sandbox.kubeconfig,
    ) else {
        chartkit_tests::skip(NAME, "zsh is not installed (apt-get install zsh)");
        return;
    };
    assert!(screen.contains("team-a"), "{screen}");
    assert!(screen.contains("kube-system"), "{screen}");
}
