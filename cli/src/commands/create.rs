use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::cli::CreateArgs;
use crate::env;
use crate::error::Context;
use crate::output::outln;

pub fn run(args: CreateArgs) -> crate::error::Result<ExitCode> {
    outln!("Creating {}", args.name.display())?;
    match &args.starter {
        None => {
            chartkit_chart::create::create(&args.name)?;
        }
        Some(starter) => {
            let path = starter_path(starter)?;
            chartkit_chart::create::create_from(&args.name, &path, &super::load_options()?)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Where `helm create --starter` looks: an absolute path as it is, anything else under
/// Helm's data directory's `starters/`.
fn starter_path(starter: &Path) -> crate::error::Result<PathBuf> {
    if starter.is_absolute() {
        return Ok(starter.to_path_buf());
    }
    let data_home = env::helm_data_home().context(
        "cannot locate Helm's data directory for --starter: none of HELM_DATA_HOME, XDG_DATA_HOME and HOME is set",
    )?;
    Ok(data_home.join("starters").join(starter))
}
