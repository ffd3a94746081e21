//! Dynamic completion compared with helm's `__complete` on one sandbox and one
//! repository list: namespaces for `-n`, kube contexts, output formats, repository names,
//! `REPO/` then `REPO/CHART` for chart arguments, and the same lines seen through real
//! bash and zsh completion.

use std::path::Path;
use std::process::Command;

use chartkit_tests::sandbox::{SandboxProcess, run_ok, write_file};
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
    let bin_dir = chartkit_tests::chartkit_bin().parent().unwrap().to_owned();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    write_file(
        ctx.dir(),
        "complete.bash",
        r#"source <(chartkit completion bash)
for line in "chartkit status -n te" "chartkit list --kube-context " "chartkit status alpha -o j" "chartkit install web sh" "chartkit install web shop/" "chartkit repo remove st"; do
  read -r -a COMP_WORDS <<< "$line"
  [[ $line == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
  COMPREPLY=()
  _chartkit
  echo "$line|${COMPREPLY[*]}"
done
"#,
    );
    let mut bash = ctx.hermetic(Path::new("bash"));
    bash.arg("complete.bash")
        .env("PATH", &path)
        .env("KUBECONFIG", &sandbox.kubeconfig);
    assert_eq!(
        stdout(&run_ok(&mut bash)),
        "chartkit status -n te|team-a\nchartkit list --kube-context |chartkit-sandbox\nchartkit status alpha -o j|json\nchartkit install web sh|shop/\nchartkit install web shop/|shop/other shop/starter\nchartkit repo remove st|store\n"
    );

    if Command::new("zsh").arg("-c").arg("true").output().is_err() {
        chartkit_tests::skip(NAME, "zsh is not installed (apt-get install zsh)");
        return;
    }
    // zsh's widget on a pseudo-terminal: `chartkit status -n <TAB>` lists the namespaces.
    write_file(
        ctx.dir(),
        "complete.zsh",
        r#"zmodload zsh/zpty
zpty -b shell 'zsh -f -i'
zpty -w shell 'PS1="%% "; autoload -U compinit; compinit -u; source <(chartkit completion zsh)'
sleep 1
zpty -w -n shell $'chartkit status -n \t'
screen=""
for i in {1..50}; do
  sleep 0.1
  while zpty -r -t shell chunk; do screen+=$chunk; done
done
print -r -- "$screen"
zpty -d shell
"#,
    );
    let mut zsh = ctx.hermetic(Path::new("zsh"));
    zsh.arg("-f")
        .arg("complete.zsh")
        .env("PATH", &path)
        .env("KUBECONFIG", &sandbox.kubeconfig);
    let screen = stdout(&run_ok(&mut zsh));
    assert!(screen.contains("team-a"), "{screen}");
    assert!(screen.contains("kube-system"), "{screen}");
}
