use std::process::ExitCode;

use crate::output::out;

use chartkit_chart::{Chart, VALUES_FILE};

use crate::cli::ShowCommand;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Chart,
    Values,
    Readme,
    Crds,
    All,
}

pub fn run(command: ShowCommand, offline: bool) -> crate::error::Result<ExitCode> {
    let (part, args) = match command {
        ShowCommand::Chart(args) => (Part::Chart, args),
        ShowCommand::Values(args) => (Part::Values, args),
        ShowCommand::Readme(args) => (Part::Readme, args),
        ShowCommand::Crds(args) => (Part::Crds, args),
        ShowCommand::All(args) => (Part::All, args),
    };
    // helm show reads charts of any apiVersion.
    let chart = super::chart_source::load(&args.chart, &args.source, false, false, offline)?;
    out!("{}", render(&chart, part))?;
    Ok(ExitCode::SUCCESS)
}

/// The text `helm show` prints for a part of the chart.
fn render(chart: &Chart, part: Part) -> String {
    let all = part == Part::All;
    let mut out = String::new();
    if part == Part::Chart || all {
        out.push_str(&chart.metadata.to_yaml());
        out.push('\n');
    }
    if (part == Part::Values || all)
        && let Some(values) = chart.raw_file(VALUES_FILE)
    {
        if all {
            out.push_str("---\n");
        }
        out.push_str(&values.text());
        out.push('\n');
    }
    if (part == Part::Readme || all)
        && let Some(readme) = chart.readme()
    {
        if all {
            out.push_str("---\n");
        }
        out.push_str(&readme.text());
        out.push('\n');
    }
    if part == Part::Crds || all {
        for (_, crd) in chart.crds() {
            if !crd.data.starts_with(b"---") {
                out.push_str("---\n");
            }
            out.push_str(&crd.text());
            out.push('\n');
        }
    }
    out
}
