use std::process::ExitCode;

use crate::cli::CreateArgs;

pub fn run(args: CreateArgs) -> crate::error::Result<ExitCode> {
    println!("Creating {}", args.name.display());
    chartkit_chart::create::create(&args.name)?;
    Ok(ExitCode::SUCCESS)
}
