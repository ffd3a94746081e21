//! `diff upgrade`, `diff rollback` and `diff revision`: parse the flags, ask
//! chartkit-engine for the plan and its comparison, and print them as the helm-diff
//! plugin prints its reports (`diff`, `simple` and `json` output, helm-diff's colours),
//! so scripts written for `helm diff` read chartkit's the same way.

use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::process::ExitCode;

use chartkit_engine::compare::{ChangeType, CompareOptions, Comparison, Delta, Entry, compare};
use chartkit_engine::{InstallOptions, Plan, RollbackOptions, UpgradeOptions};

use super::release_write::{engine, labels, rendering, runtime, values_mode, writing};
use crate::cli::{
    DiffOutputArgs, DiffRevisionArgs, DiffRollbackArgs, DiffUpgradeArgs, GlobalArgs, KubeArgs,
};
use crate::env;
use crate::error::{Error, Result};
use crate::output::errln;

pub fn upgrade(
    args: DiffUpgradeArgs,
    kube: &KubeArgs,
    global: &GlobalArgs,
    offline: bool,
) -> Result<ExitCode> {
    let chart = super::chart_source::load(
        &args.chart,
        &args.source,
        args.dependency_update,
        true,
        offline,
    )?;
    let user_values = super::template::merge_values(&args.values)?;
    chartkit_render::check_installable(&chart)?;
    let values_mode = values_mode(
        args.reuse_values,
        args.reset_values,
        args.reset_then_reuse_values,
    );
    let labels = labels(&args.labels)?;
    let options = UpgradeOptions {
        name: args.release.clone(),
        values_mode,
        writing: writing(&args.writing),
        take_ownership: args.take_ownership,
        labels: labels.clone(),
        rendering: rendering(&args.render)?,
        ..Default::default()
    };
    let install = args.install.then(|| InstallOptions {
        name: args.release.clone(),
        writing: options.writing,
        labels,
        take_ownership: args.take_ownership,
        rendering: options.rendering.clone(),
        ..Default::default()
    });
    let compare_options = compare_options(&args.diff, !args.no_hooks)?;
    let plan = runtime()?.block_on(async {
        let engine = engine(kube, "diff").await?;
        engine
            .plan_upgrade(chart, &user_values, &options, install.as_ref())
            .await
            .map_err(Error::new)
    })?;
    report(&plan, &compare_options, &args.diff, global)
}

pub fn rollback(args: DiffRollbackArgs, kube: &KubeArgs, global: &GlobalArgs) -> Result<ExitCode> {
    let options = RollbackOptions {
        name: args.release.clone(),
        revision: args.revision.unwrap_or(0),
        writing: writing(&args.writing),
        ..Default::default()
    };
    let compare_options = compare_options(&args.diff, false)?;
    let plan = runtime()?.block_on(async {
        let engine = engine(kube, "diff").await?;
        engine.plan_rollback(&options).await.map_err(Error::new)
    })?;
    report(&plan, &compare_options, &args.diff, global)
}

pub fn revision(args: DiffRevisionArgs, kube: &KubeArgs, global: &GlobalArgs) -> Result<ExitCode> {
    let compare_options = compare_options(&args.diff, false)?;
    let (from, to) = match args.revisions.as_slice() {
        [one] => (*one, None),
        [one, two] => (*one, Some(*two)),
        _ => unreachable!("clap takes one or two revisions"),
    };
    let plan = runtime()?.block_on(async {
        let engine = engine(kube, "diff").await?;
        engine
            .plan_revisions(&args.release, from, to)
            .await
            .map_err(Error::new)
    })?;
    report(&plan, &compare_options, &args.diff, global)
}

fn compare_options(args: &DiffOutputArgs, hooks: bool) -> Result<CompareOptions> {
    let mut suppressed_kinds = args.suppress.clone();
    if args.suppress_secrets {
        suppressed_kinds.push("Secret".to_string());
    }
    let suppressed_lines = args
        .suppress_output_line_regex
        .iter()
        .map(|pattern| {
            chartkit_regexp::Regexp::new(pattern).map_err(|e| {
                Error::msg(format!("--suppress-output-line-regex {pattern:?}: {e}"))
                    .with_hint("give a regular expression in Go's syntax, such as '^\\s+revision:'")
            })
        })
        .collect::<Result<_>>()?;
    Ok(CompareOptions {
        show_secrets: args.show_secrets,
        show_secrets_decoded: args.show_secrets_decoded,
        suppressed_kinds,
        suppressed_lines,
        hooks,
        tests: args.include_tests,
    })
}

/// Prints the comparison; with `--detailed-exitcode`, exit status 2 when something
/// changes, with helm-diff's message.
fn report(
    plan: &Plan,
    options: &CompareOptions,
    args: &DiffOutputArgs,
    global: &GlobalArgs,
) -> Result<ExitCode> {
    for warning in &plan.warnings {
        crate::log::line(warning);
    }
    let comparison = compare(plan, options);
    let colours = Colours {
        on: colour_enabled(args.no_color, global.color.as_deref()),
    };
    let context = args.context.unwrap_or_else(|| {
        env::var(env::HELM_DIFF_OUTPUT_CONTEXT)
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(-1)
    });
    let text = match args.output.as_str() {
        "simple" => simple(&comparison, colours),
        "json" => json(&comparison),
        _ => diff(&comparison, context, colours),
    };
    crate::output::stdout_bytes(text.as_bytes())?;
    if args.detailed_exitcode && comparison.has_changes() {
        errln!(
            "Error: identified at least one change, exiting with non-zero exit code (detailed-exitcode parameter enabled)"
        );
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

/// helm-diff's rule: `--no-color` wins, then `--color` (here chartkit's global
/// `--color=never|always`), then HELM_DIFF_COLOR; otherwise colour when stdout is a
/// terminal and TERM is not `dumb`. A non-empty NO_COLOR turns colour off, as it does
/// for the rest of chartkit.
fn colour_enabled(no_color: bool, flag: Option<&str>) -> bool {
    if no_color || env::var(env::NO_COLOR).is_some() {
        return false;
    }
    match flag {
        Some("always") => return true,
        Some("never") => return false,
        _ => {}
    }
    match env::var(env::HELM_DIFF_COLOR).as_deref() {
        Some("1" | "t" | "T" | "TRUE" | "true" | "True") => return true,
        Some("0" | "f" | "F" | "FALSE" | "false" | "False") => return false,
        _ => {}
    }
    std::io::stdout().is_terminal() && env::var(env::TERM).as_deref() != Some("dumb")
}

/// helm-diff's colours (those of the `ansi` Go package it uses).
#[derive(Clone, Copy)]
struct Colours {
    on: bool,
}

impl Colours {
    fn paint(&self, text: &str, colour: &str) -> String {
        if !self.on {
            return text.to_string();
        }
        let code = match colour {
            "red" => "31",
            "green" => "32",
            "yellow" => "33",
            "magenta" => "35",
            // `blue+h`: bright blue.
            _ => "94",
        };
        format!("\x1b[{code}m{text}\x1b[0m")
    }
}

fn change_colour(change: ChangeType) -> &'static str {
    match change {
        ChangeType::Add => "green",
        ChangeType::Remove => "red",
        ChangeType::Modify => "yellow",
        ChangeType::ModifySuppressed => "blue+h",
    }
}

/// `--output diff`: a header per object, then its lines (`+ `, `- `, two spaces for
/// common ones), with `...` for a run of lines further than `context` from any change.
fn diff(comparison: &Comparison, context: i64, colours: Colours) -> String {
    let mut out = String::new();
    for entry in &comparison.entries {
        let message = match entry.change {
            ChangeType::Add => "has been added:",
            ChangeType::Remove => "has been removed:",
            ChangeType::Modify => "has changed:",
            ChangeType::ModifySuppressed => "has changed, but diff is empty after suppression.",
        };
        let header = format!("{} {message}", entry.key());
        out.push_str(&colours.paint(&header, change_colour(entry.change)));
        out.push('\n');
        if entry.suppressed {
            let notice = format!(
                "+ Changes suppressed on sensitive content of type {}\n",
                entry.kind
            );
            out.push_str(&colours.paint(&notice, "yellow"));
            continue;
        }
        lines(&mut out, entry, context, colours);
    }
    out
}

fn lines(out: &mut String, entry: &Entry, context: i64, colours: Colours) {
    let distances = distances(entry);
    let mut omitting = false;
    for (line, distance) in entry.lines.iter().zip(distances) {
        if context >= 0 && distance > context as usize {
            if !omitting {
                out.push_str("...\n");
                omitting = true;
            }
            continue;
        }
        omitting = false;
        match line.delta {
            Delta::Added => out.push_str(&colours.paint(&format!("+ {}", line.text), "green")),
            Delta::Removed => out.push_str(&colours.paint(&format!("- {}", line.text), "red")),
            Delta::Common if line.text.is_empty() => {}
            Delta::Common => {
                out.push_str("  ");
                out.push_str(&line.text);
            }
        }
        out.push('\n');
    }
}

/// For each line, how many lines away the nearest changed one is.
fn distances(entry: &Entry) -> Vec<usize> {
    let n = entry.lines.len();
    let mut distances = vec![usize::MAX; n];
    let mut last = None;
    for (i, line) in entry.lines.iter().enumerate() {
        if line.delta != Delta::Common {
            last = Some(i);
        }
        if let Some(change) = last {
            distances[i] = i - change;
        }
    }
    last = None;
    for i in (0..n).rev() {
        if entry.lines[i].delta != Delta::Common {
            last = Some(i);
        }
        if let Some(change) = last {
            distances[i] = distances[i].min(change - i);
        }
    }
    distances
}

/// `--output simple`: a line per object, then the plan's counts.
fn simple(comparison: &Comparison, colours: Colours) -> String {
    let mut out = String::new();
    let (mut add, mut change, mut destroy) = (0, 0, 0);
    for entry in &comparison.entries {
        let message = match entry.change {
            ChangeType::Add => {
                add += 1;
                "to be added."
            }
            ChangeType::Remove => {
                destroy += 1;
                "to be removed."
            }
            ChangeType::Modify => {
                change += 1;
                "to be changed."
            }
            ChangeType::ModifySuppressed => "has changed, but diff is empty after suppression.",
        };
        let line = format!("{} {message}", entry.key());
        out.push_str(&colours.paint(&line, change_colour(entry.change)));
        out.push('\n');
    }
    // helm-diff counts ownership changes too; chartkit reports none (see the README).
    let _ = writeln!(
        out,
        "Plan: {add} to add, {change} to change, {destroy} to destroy, 0 to change ownership."
    );
    out
}

/// `--output json`: helm-diff's list, laid out as its template lays it out.
fn json(comparison: &Comparison) -> String {
    let quote = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    let items: Vec<String> = comparison
        .entries
        .iter()
        .map(|e| {
            format!(
                "{{\n  \"api\": {},\n  \"kind\": {},\n  \"namespace\": {},\n  \"name\": {},\n  \"change\": {}\n}}",
                quote(&e.api),
                quote(&e.kind),
                quote(&e.namespace),
                quote(&e.name),
                quote(e.change.as_str()),
            )
        })
        .collect();
    format!("[{}]\n", items.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chartkit_engine::compare::Line;

    fn entry(change: ChangeType, lines: &[(Delta, &str)]) -> Entry {
        Entry {
            api: "apps".into(),
            kind: "Deployment".into(),
            namespace: "default".into(),
            name: "web".into(),
            change,
            suppressed: false,
            lines: lines
                .iter()
                .map(|(delta, text)| Line {
                    delta: *delta,
                    text: text.to_string(),
                })
                .collect(),
        }
    }

    #[test]
    fn context_keeps_lines_near_changes_and_marks_the_rest() {
        let comparison = Comparison {
            entries: vec![entry(
                ChangeType::Modify,
                &[
                    (Delta::Common, "a"),
                    (Delta::Common, "b"),
                    (Delta::Common, "c"),
                    (Delta::Removed, "d: 1"),
                    (Delta::Added, "d: 2"),
                    (Delta::Common, "e"),
                    (Delta::Common, "f"),
                ],
            )],
        };
        let off = Colours { on: false };
        assert_eq!(
            diff(&comparison, 1, off),
            "default, web, Deployment (apps) has changed:\n...\n  c\n- d: 1\n+ d: 2\n  e\n...\n"
        );
        assert_eq!(
            diff(&comparison, -1, off),
            "default, web, Deployment (apps) has changed:\n  a\n  b\n  c\n- d: 1\n+ d: 2\n  e\n  f\n"
        );
        let on = diff(&comparison, 0, Colours { on: true });
        assert!(on.starts_with("\x1b[33mdefault, web, Deployment (apps) has changed:\x1b[0m\n"));
        assert!(on.contains("\x1b[31m- d: 1\x1b[0m\n\x1b[32m+ d: 2\x1b[0m\n"));
    }

    #[test]
    fn simple_and_json_outputs_read_as_helm_diffs() {
        let comparison = Comparison {
            entries: vec![entry(ChangeType::Modify, &[]), entry(ChangeType::Add, &[])],
        };
        assert_eq!(
            simple(&comparison, Colours { on: false }),
            "default, web, Deployment (apps) to be changed.\n\
             default, web, Deployment (apps) to be added.\n\
             Plan: 1 to add, 1 to change, 0 to destroy, 0 to change ownership.\n"
        );
        let text = json(&comparison);
        assert!(text.starts_with("[{\n  \"api\": \"apps\",\n  \"kind\": \"Deployment\",\n"));
        let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed[1]["change"], "ADD");
        assert_eq!(json(&Comparison::default()), "[]\n");
    }
}
