//! Completion as a user meets it: chartkit's completion scripts loaded in real bash and zsh,
//! with the built binary first on PATH and the test's cluster as the kube config.

use std::path::Path;

use crate::TestContext;
use crate::sandbox::{run_ok, write_file};

/// PATH with the built chartkit first.
pub fn path_with_chartkit() -> String {
    let bin_dir = crate::chartkit_bin().parent().unwrap().to_owned();
    format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// What bash's completion function offers for each line (`LINE|REPLY…`, one per line), after
/// `complete -p chartkit`'s line, which says the function is registered.
pub fn bash_completions(ctx: &TestContext, lines: &[&str], kubeconfig: &Path) -> String {
    let quoted: Vec<String> = lines.iter().map(|line| format!("\"{line}\"")).collect();
    write_file(
        ctx.dir(),
        "complete.bash",
        &format!(
            r#"source <(chartkit completion bash)
complete -p chartkit
for line in {}; do
  read -r -a COMP_WORDS <<< "$line"
  [[ $line == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
  COMPREPLY=()
  _chartkit
  echo "$line|${{COMPREPLY[*]}}"
done
"#,
            quoted.join(" ")
        ),
    );
    let mut bash = ctx.hermetic(Path::new("bash"));
    bash.arg("complete.bash")
        .env("PATH", path_with_chartkit())
        .env("KUBECONFIG", kubeconfig);
    crate::stdout(&run_ok(&mut bash))
}

/// The screen of an interactive zsh (on a pseudo-terminal, through zpty) after `line` is
/// typed with a TAB; `None` when zsh is not installed.
pub fn zsh_screen_after_tab(ctx: &TestContext, line: &str, kubeconfig: &Path) -> Option<String> {
    if std::process::Command::new("zsh")
        .arg("-c")
        .arg("true")
        .output()
        .is_err()
    {
        return None;
    }
    write_file(
        ctx.dir(),
        "complete.zsh",
        &format!(
            r#"zmodload zsh/zpty
zpty -b shell 'zsh -f -i'
zpty -w shell 'PS1="%% "; autoload -U compinit; compinit -u; source <(chartkit completion zsh)'
sleep 1
zpty -w -n shell $'{line}\t'
screen=""
for i in {{1..50}}; do
  sleep 0.1
  while zpty -r -t shell chunk; do screen+=$chunk; done
done
print -r -- "$screen"
zpty -d shell
"#
        ),
    );
    let mut zsh = ctx.hermetic(Path::new("zsh"));
    zsh.arg("-f")
        .arg("complete.zsh")
        .env("PATH", path_with_chartkit())
        .env("KUBECONFIG", kubeconfig);
    Some(crate::stdout(&run_ok(&mut zsh)))
}
