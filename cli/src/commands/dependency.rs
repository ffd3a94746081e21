use std::process::ExitCode;

use chartkit_dependency::Listing;

use crate::cli::DependencyListArgs;
use crate::output::{out, outln};

/// `dependency list`: helm's table, a blank line, then helm's warnings about charts in
/// charts/ that are not charts or that no dependency names.
pub fn list(args: DependencyListArgs) -> crate::error::Result<ExitCode> {
    let chart = super::load_chart(&args.chart, false)?;
    let declared = chartkit_dependency::declares_dependencies(&chart);
    let options = super::load_options()?;
    match chartkit_dependency::list(&args.chart, &chart, declared, &options) {
        Listing::NoDependencies { charts_dir } => {
            outln!("WARNING: no dependencies at {}", charts_dir.display())?;
        }
        Listing::Rows { rows, warnings } => {
            let mut table = vec![
                ["NAME", "VERSION", "REPOSITORY", "STATUS"]
                    .map(String::from)
                    .to_vec(),
            ];
            table.extend(rows.into_iter().map(|r| {
                vec![
                    r.name,
                    r.version,
                    r.repository,
                    r.status.as_str().to_owned(),
                ]
            }));
            out!("{}", crate::table::uitable(&table, args.max_col_width))?;
            outln!()?;
            for warning in warnings {
                outln!("{warning}")?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
