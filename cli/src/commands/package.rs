use std::process::ExitCode;

use chartkit_chart::{PackageOptions, package_all};

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
    }
    let (packaged, failure) = package_all(&args.paths, &options);
    for done in &packaged {
        for warning in &done.chart.warnings {
            eprintln!("warning: {warning}");
        }
        println!(
            "Successfully packaged chart and saved it to: {}",
            done.path.display()
        );
    }
    if let Some((path, error)) = failure {
        return Err(
            anyhow::Error::new(error).context(format!("cannot package `{}`", path.display()))
        );
    }
    Ok(ExitCode::SUCCESS)
}
