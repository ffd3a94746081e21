//! `chartkit completion SHELL` and the hidden `__complete` it calls back, in helm's
//! protocol (cobra's): the words typed so far, the word being completed last; one
//! candidate a line (`NAME<TAB>description`), then `:DIRECTIVE`. Commands and flags come
//! from clap's description of the command line, release names from the cluster, charts
//! (`REPO/NAME`) and repository names from the cached indexes and repository list, plugin
//! names and helm's variables from where those commands read them.

use std::process::ExitCode;

use clap::CommandFactory as _;

use crate::cli::{Cli, KubeArgs};
use crate::cli_helm::{CompleteArgs, CompletionArgs};
use crate::output::{out, outln};

/// cobra's directives.
const DIRECTIVE_DEFAULT: u32 = 0;
const DIRECTIVE_NO_FILE: u32 = 4;
/// cobra's `ShellCompDirectiveNoSpace`: no space after the completion (`REPO/`).
const DIRECTIVE_NO_SPACE: u32 = 2;

/// Commands whose first argument is a release name.
const RELEASE_COMMANDS: &[&[&str]] = &[
    &["upgrade"],
    &["status"],
    &["history"],
    &["hist"],
    &["uninstall"],
    &["un"],
    &["delete"],
    &["del"],
    &["rollback"],
    &["test"],
    &["get", "all"],
    &["get", "values"],
    &["get", "manifest"],
    &["get", "hooks"],
    &["get", "notes"],
    &["get", "metadata"],
    &["diff", "upgrade"],
    &["diff", "rollback"],
    &["diff", "revision"],
];

pub fn complete(args: CompleteArgs, kube: &KubeArgs) -> crate::error::Result<ExitCode> {
    let mut words = args.words;
    let current = words.pop().unwrap_or_default();
    let (candidates, directive) = candidates(&words, &current, kube);
    for candidate in candidates
        .iter()
        .filter(|c| c.split('\t').next().unwrap_or("").starts_with(&current))
    {
        outln!("{candidate}")?;
    }
    outln!(":{directive}")?;
    Ok(ExitCode::SUCCESS)
}

/// What may come next after `words`, and the directive for the shell.
fn candidates(words: &[String], current: &str, kube: &KubeArgs) -> (Vec<String>, u32) {
    let root = Cli::command();
    let mut command = &root;
    let mut path: Vec<String> = Vec::new();
    let mut positionals = 0usize;
    let mut iter = words.iter();
    while let Some(word) = iter.next() {
        if word == "--" {
            positionals += iter.len();
            break;
        }
        if let Some(flag) = word.strip_prefix('-') {
            let takes_value = !word.contains('=')
                && find_flag(command, &root, flag)
                    .is_some_and(|arg| arg.get_action().takes_values());
            if takes_value {
                iter.next();
            }
            continue;
        }
        if positionals == 0
            && let Some(sub) = command
                .get_subcommands()
                .find(|c| c.get_name() == word || c.get_all_aliases().any(|a| a == word))
        {
            command = sub;
            path.push(word.clone());
            continue;
        }
        positionals += 1;
    }

    if let Some(flag) = value_wanted(words, command, &root) {
        return flag_values(flag, kube);
    }
    if current.starts_with('-') {
        let mut flags = Vec::new();
        for arg in command
            .get_arguments()
            .chain(root.get_arguments().filter(|a| a.is_global_set()))
        {
            if arg.is_hide_set() {
                continue;
            }
            let about = arg
                .get_help()
                .map(|h| first_line(&h.to_string()))
                .unwrap_or_default();
            if let Some(long) = arg.get_long() {
                flags.push(format!("--{long}\t{about}"));
            }
            if let Some(short) = arg.get_short() {
                flags.push(format!("-{short}\t{about}"));
            }
        }
        flags.sort();
        flags.dedup();
        return (flags, DIRECTIVE_NO_FILE);
    }
    if positionals == 0 && command.has_subcommands() {
        let names = command
            .get_subcommands()
            .filter(|c| !c.is_hide_set())
            .map(|c| {
                let about = c
                    .get_about()
                    .map(|h| first_line(&h.to_string()))
                    .unwrap_or_default();
                format!("{}\t{about}", c.get_name())
            })
            .collect();
        return (names, DIRECTIVE_NO_FILE);
    }
    let path: Vec<&str> = path.iter().map(String::as_str).collect();
    if positionals == 0 && RELEASE_COMMANDS.contains(&path.as_slice()) {
        // A cluster that cannot be reached offers nothing, as in helm.
        let names = super::release_read::release_names(kube).unwrap_or_default();
        return (names, DIRECTIVE_NO_FILE);
    }
    let chart_position = match path.as_slice() {
        ["install" | "upgrade" | "template" | "diff"] | ["diff", "upgrade"] => Some(1),
        ["pull" | "fetch"] | ["show", _] => Some(0),
        _ => None,
    };
    if chart_position == Some(positionals) {
        // helm's `pull` completes no local files.
        let include_files = !matches!(path.as_slice(), ["pull" | "fetch"]);
        return chart_candidates(current, include_files);
    }
    match path.as_slice() {
        ["repo", "remove" | "rm" | "update" | "up"] => (repository_names(), DIRECTIVE_NO_FILE),
        ["plugin", "uninstall" | "rm" | "remove" | "update"] => {
            let found = chartkit_plugin::find_plugins(&crate::env::helm_plugins(), None);
            let names = found
                .map(|f| f.plugins.into_iter().map(|p| p.metadata.name).collect())
                .unwrap_or_default();
            (names, DIRECTIVE_NO_FILE)
        }
        ["env"] if positionals == 0 => {
            let names = super::helm_env::settings(kube, &Default::default())
                .into_keys()
                .collect();
            (names, DIRECTIVE_NO_FILE)
        }
        ["completion"] if positionals == 0 => (
            ["bash", "zsh", "fish", "powershell"]
                .map(str::to_owned)
                .to_vec(),
            DIRECTIVE_NO_FILE,
        ),
        _ => (Vec::new(), DIRECTIVE_DEFAULT),
    }
}

/// The repositories of the repository list, for `repo remove` and `repo update`:
/// `NAME\tURL` of each, as helm's `compListRepos`.
fn repository_names() -> Vec<String> {
    super::repo_support::client(true, 5)
        .map(|client| {
            client
                .repos
                .repositories
                .iter()
                .map(|r| format!("{}\t{}", r.name, r.url))
                .collect()
        })
        .unwrap_or_default()
}

/// `REPO/NAME` of every chart in the cached indexes (nothing is downloaded), where a
/// command takes a chart; files are offered too, as a chart may be a path.
/// A chart argument as helm's `compListCharts` completes it: `REPO/` for each repository
/// the word could start (no space after it), the charts of the repository the word
/// names, the URL schemes, and local files and path prefixes where a local chart fits.
fn chart_candidates(current: &str, include_files: bool) -> (Vec<String>, u32) {
    let mut candidates = Vec::new();
    let (mut no_space, mut no_file) = (false, false);
    if let Ok(client) = super::repo_support::client(true, 5) {
        for entry in &client.repos.repositories {
            let with_slash = format!("{}/", entry.name);
            if current.starts_with(&with_slash) {
                if let Ok(index) = client.load_index(entry, chartkit_repo_client::Refresh::Never) {
                    candidates.extend(
                        index
                            .index
                            .chart_names()
                            .map(|n| format!("{with_slash}{n}")),
                    );
                }
                no_space = false;
                break;
            } else if entry.name.starts_with(current) {
                candidates.push(format!("{with_slash}\t{}", entry.url));
                no_space = true;
            }
        }
    }
    for url in [
        "oci://\tChart OCI prefix",
        "https://\tChart URL prefix",
        "http://\tChart URL prefix",
        "file://\tChart local URL prefix",
    ] {
        // helm compares the word with the whole line, description included, so a typed
        // `oci://` is still offered `oci://` (and file completion stays on).
        if current.starts_with(url) {
            no_file = true;
            no_space = true;
        } else if url.starts_with(current) {
            candidates.push(url.to_owned());
            no_space = true;
        }
    }
    if include_files
        && !candidates.is_empty()
        && !current.is_empty()
        && let Ok(entries) = std::fs::read_dir(".")
    {
        let mut files: Vec<String> = entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with(current))
            .collect();
        files.sort();
        candidates.extend(files);
    }
    if include_files && current.is_empty() {
        candidates.push("./\tRelative path prefix to local chart".to_owned());
        candidates.push("/\tAbsolute path prefix to local chart".to_owned());
    }
    let mut directive = DIRECTIVE_DEFAULT;
    if no_file || !include_files {
        directive |= DIRECTIVE_NO_FILE;
    }
    if no_space {
        directive |= DIRECTIVE_NO_SPACE;
    }
    (candidates, directive)
}

/// The flag whose value is being completed: the last word, when it is a flag taking a
/// value given without `=`.
fn value_wanted<'a>(
    words: &[String],
    command: &'a clap::Command,
    root: &'a clap::Command,
) -> Option<&'a clap::Arg> {
    let last = words.last()?;
    let flag = last.strip_prefix('-').filter(|_| !last.contains('='))?;
    if flag.is_empty() || flag == "-" {
        return None;
    }
    find_flag(command, root, flag).filter(|arg| arg.get_action().takes_values())
}

/// What helm offers as a flag's value: the cluster's namespaces, the kubeconfig's
/// contexts (with their clusters), output formats with helm's descriptions, and any
/// flag's fixed choices. Other values complete as files, as cobra's default.
fn flag_values(flag: &clap::Arg, kube: &KubeArgs) -> (Vec<String>, u32) {
    match flag.get_long() {
        Some("namespace") => match namespaces(kube) {
            Some(names) => (names, DIRECTIVE_NO_FILE),
            None => (Vec::new(), DIRECTIVE_DEFAULT),
        },
        Some("kube-context") => {
            let contexts = crate::kube::options(kube)
                .context_names()
                .map(|contexts| {
                    contexts
                        .into_iter()
                        .map(|(name, cluster)| format!("{name}\t{cluster}"))
                        .collect()
                })
                .unwrap_or_default();
            (contexts, DIRECTIVE_NO_FILE)
        }
        _ => {
            let values: Vec<String> = flag
                .get_possible_values()
                .iter()
                .filter(|v| !v.is_hide_set())
                .map(|v| v.get_name().to_owned())
                .collect();
            if values.is_empty() {
                return (Vec::new(), DIRECTIVE_DEFAULT);
            }
            let described: Vec<String> = values
                .iter()
                .map(|v| match (flag.get_long(), v.as_str()) {
                    (Some("output"), "table") => {
                        "table\tOutput result in human-readable format".to_owned()
                    }
                    (Some("output"), "json") => "json\tOutput result in JSON format".to_owned(),
                    (Some("output"), "yaml") => "yaml\tOutput result in YAML format".to_owned(),
                    _ => v.clone(),
                })
                .collect();
            let mut described = described;
            if flag.get_long() == Some("output") {
                // helm lists its formats sorted.
                described.sort();
            }
            (described, DIRECTIVE_NO_FILE)
        }
    }
}

/// The cluster's namespaces, or None when it cannot be asked (then, like helm, the
/// shell falls back to its own completion).
fn namespaces(kube: &KubeArgs) -> Option<Vec<String>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    runtime.block_on(async {
        let connection = crate::kube::options(kube).connect().await.ok()?;
        let names = tokio::time::timeout(
            std::time::Duration::from_secs(3),
            connection.namespace_names(),
        )
        .await
        .ok()?
        .ok()?;
        Some(names)
    })
}

fn find_flag<'a>(
    command: &'a clap::Command,
    root: &'a clap::Command,
    flag: &str,
) -> Option<&'a clap::Arg> {
    let matches = |arg: &&clap::Arg| match flag.strip_prefix('-') {
        Some(long) => arg.get_long() == Some(long),
        None => flag.len() == 1 && arg.get_short() == flag.chars().next(),
    };
    command
        .get_arguments()
        .find(matches)
        .or_else(|| root.get_arguments().find(matches))
}

fn first_line(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or("")
        .trim_end_matches('.')
        .to_owned()
}

/// `chartkit completion SHELL`: the script for the shell, which asks `chartkit
/// __complete` for candidates.
pub fn script(args: CompletionArgs) -> crate::error::Result<ExitCode> {
    let text = match args.shell.as_str() {
        "bash" => BASH,
        "zsh" => ZSH,
        "fish" => FISH,
        _ => POWERSHELL,
    };
    out!("{text}")?;
    Ok(ExitCode::SUCCESS)
}

const BASH: &str = r#"# bash completion for chartkit (source it, or put it in bash-completion's directory)
_chartkit() {
    local cur=${COMP_WORDS[COMP_CWORD]}
    local out directive line
    out=$("${COMP_WORDS[0]}" __complete "${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" 2>/dev/null) || return
    directive=${out##*$'\n'}
    directive=${directive#:}
    if [[ $out == *$'\n'* ]]; then out=${out%$'\n'*}; else out=; fi
    COMPREPLY=()
    (( directive & 1 )) && return
    while IFS= read -r line; do
        [[ -n $line ]] && COMPREPLY+=("${line%%$'\t'*}")
    done <<< "$out"
    if (( ${#COMPREPLY[@]} == 0 )) && (( (directive & 4) == 0 )); then
        compopt -o default 2>/dev/null
        return
    fi
    (( directive & 2 )) && compopt -o nospace 2>/dev/null
    return 0
}
complete -F _chartkit chartkit
"#;

const ZSH: &str = r#"#compdef chartkit
# zsh completion for chartkit (put it in a directory of $fpath as _chartkit, or source it)
_chartkit() {
    local -a words_before candidates
    local out directive line
    words_before=("${(@)words[2,CURRENT-1]}")
    out=$("${words[1]}" __complete "${words_before[@]}" "${words[CURRENT]}" 2>/dev/null) || return 1
    directive=${${(f)out}[-1]#:}
    for line in "${(@)${(f)out}[1,-2]}"; do
        [[ -n $line ]] && candidates+=("${line/$'\t'/:}")
    done
    (( directive & 1 )) && return 1
    if (( ${#candidates} == 0 )); then
        (( directive & 4 )) || _files
        return
    fi
    _describe -t chartkit 'chartkit' candidates
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _chartkit "$@"
else
    compdef _chartkit chartkit
fi
"#;

const FISH: &str = r#"# fish completion for chartkit
function __chartkit_complete
    set -l words (commandline -opc)
    set -l current (commandline -ct)
    set -l out ($words[1] __complete $words[2..-1] $current 2>/dev/null)
    set -l directive (string replace ':' '' -- $out[-1])
    for line in $out[1..-2]
        echo $line
    end
end
complete -c chartkit -f -a '(__chartkit_complete)'
"#;

const POWERSHELL: &str = r#"# powershell completion for chartkit
Register-ArgumentCompleter -CommandName 'chartkit' -ScriptBlock {
    param($WordToComplete, $CommandAst, $CursorPosition)
    $words = $CommandAst.CommandElements | Select-Object -Skip 1 | ForEach-Object { "$_" }
    if ($WordToComplete -ne '') { $words = $words | Select-Object -SkipLast 1 }
    $out = & chartkit __complete @words "$WordToComplete" 2>$null
    $out | Where-Object { $_ -notlike ':*' } | ForEach-Object {
        $name, $description = $_ -split "`t", 2
        if (-not $description) { $description = $name }
        [System.Management.Automation.CompletionResult]::new($name, $name, 'ParameterValue', $description)
    }
}
"#;
