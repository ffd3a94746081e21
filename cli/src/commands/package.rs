use std::process::ExitCode;

use anyhow::Context;
use chartkit_chart::{PackageOptions, package};

use crate::cli::PackageArgs;
use crate::env;

pub fn run(args: PackageArgs) -> anyhow::Result<ExitCode> {
    let options = PackageOptions {
        version: args.version,
        app_version: args.app_version,
        destination: args.destination,
        mtime: env::number(env::SOURCE_DATE_EPOCH)?.unwrap_or(0),
        load: super::load_options()?,
    };
    for path in &args.paths {
        if !path.is_dir() {
            anyhow::bail!(
                "`{}` is not a chart directory; `chartkit package` packs directories",
                path.display()
            );
        }
        let packaged = package(path, &options)
            .with_context(|| format!("cannot package `{}`", path.display()))?;
        for warning in &packaged.chart.warnings {
            eprintln!("warning: {warning}");
        }
        println!(
            "Successfully packaged chart and saved it to: {}",
            packaged.path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
