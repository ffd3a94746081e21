use std::process::ExitCode;

use crate::output::out;

use crate::error::Context;
use chartkit_signing::verify_package_file;

use crate::cli::VerifyArgs;

pub fn run(args: VerifyArgs) -> crate::error::Result<ExitCode> {
    let keyring = super::read_keyring(&args.keyring)?;
    let verification = verify_package_file(&args.chart, &keyring)
        .with_context(|| format!("`{}` failed verification", args.chart.display()))?;
    // The same lines `helm verify` prints.
    out!("{verification}")?;
    Ok(ExitCode::SUCCESS)
}
