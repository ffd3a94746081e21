use std::process::ExitCode;

use crate::output::out;

use crate::error::Context;
use chartkit_signing::verify_package_file;

use crate::cli::VerifyArgs;

pub fn run(args: VerifyArgs) -> crate::error::Result<ExitCode> {
    let (_, keyring) = super::keyring_or_default(args.keyring.as_deref(), "gpg --export")?;
    let verification = verify_package_file(&args.chart, &keyring)
        .with_context(|| format!("`{}` failed verification", args.chart.display()))?;
    // The same lines `helm verify` prints.
    out!("{verification}")?;
    Ok(ExitCode::SUCCESS)
}
