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

/// A `--verify` failure of install or upgrade in helm's words (what scripts written for
/// helm match on), with chartkit's explanation of what it means as the hint. Failures
/// helm has no words for keep chartkit's.
pub fn in_helm_words(error: chartkit_signing::VerifyError) -> crate::error::Error {
    use chartkit_signing::VerifyError;
    let helm = match &error {
        VerifyError::MissingProvenance { path } => format!(
            "could not load provenance file {p}: stat {p}: no such file or directory",
            p = path.display()
        ),
        VerifyError::UnknownSigner { .. } => "openpgp: signature made by unknown entity".into(),
        // Go's %q and Rust's {:?} quote these (hex digits, file names) alike.
        VerifyError::DigestMismatch {
            file_name,
            expected,
            actual,
        } => format!("sha256 sum does not match for {file_name}: {expected:?} != {actual:?}"),
        VerifyError::FileNotListed { file_name, .. } => {
            format!("provenance does not contain a SHA for a file named {file_name:?}")
        }
        _ => return crate::error::Error::new(error),
    };
    crate::error::Error::msg(helm).with_hint(error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_mismatch_reads_as_helms() {
        let error = in_helm_words(chartkit_signing::VerifyError::DigestMismatch {
            file_name: "app-1.0.0.tgz".into(),
            expected: "sha256:aa".into(),
            actual: "sha256:bb".into(),
        });
        assert_eq!(
            error.to_string(),
            "sha256 sum does not match for app-1.0.0.tgz: \"sha256:aa\" != \"sha256:bb\""
        );
        assert!(error.hint().is_some_and(|h| h.contains("modified")));
    }
}
