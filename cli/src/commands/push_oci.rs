//! `push PACKAGE oci://HOST/PATH`: helm's OCI push. The package (and the `.prov` beside
//! it, as helm takes it whenever it exists) goes up with Helm's manifest, so the same
//! file pushed by helm and by chartkit has one digest.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use chartkit_repo_client::{Access, Client, OciPushed};

use super::in_order::{CONCURRENCY, run_in_order};
use super::repo_support::{client, client_error};
use crate::cli::PushArgs;
use crate::error::Context;
use crate::output::errln;
use crate::report::with_hint;

pub fn run(args: PushArgs) -> crate::error::Result<ExitCode> {
    let access = Access {
        username: args.username.clone(),
        password: args.password.clone(),
        ca_file: args.ca_file.clone(),
        cert_file: args.cert_file.clone(),
        key_file: args.key_file.clone(),
        insecure_skip_tls_verify: args.insecure_skip_tls_verify,
        plain_http: args.plain_http,
        ..Access::default()
    };
    let client = client(false, args.timeout)?;
    // Several packages (chartkit's addition; helm takes one) go up concurrently and are
    // reported in the order given, as a loop of `helm push` would report them.
    run_in_order(
        &args.charts,
        CONCURRENCY,
        |chart| push(&client, chart, &args.repo, &access),
        |pushed| {
            let reference = pushed.reference.to_string();
            errln!("Pushed: {reference}");
            errln!("Digest: {}", pushed.digest);
            if reference.contains('_') {
                errln!("{reference} contains an underscore.");
                errln!("{}", chartkit_oci::reference::UNDERSCORE_MESSAGE);
            }
            Ok(())
        },
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Pushes one package (with the `.prov` beside it, if any).
fn push(
    client: &Client,
    chart: &Path,
    destination: &str,
    access: &Access,
) -> crate::error::Result<OciPushed> {
    let shown = chart.display().to_string();
    let metadata = match std::fs::metadata(chart) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(with_hint(
                crate::error::err!("{shown}: no such file"),
                "check the path; `chartkit package DIR` writes NAME-VERSION.tgz",
            ));
        }
        Err(e) => return Err(crate::error::err!("cannot read `{shown}`: {e}")),
    };
    if metadata.is_dir() {
        return Err(with_hint(
            crate::error::err!("cannot push directory, must provide chart archive (.tgz)"),
            format!("package it first: chartkit package {shown}"),
        ));
    }
    let package = std::fs::read(chart).with_context(|| format!("cannot read `{shown}`"))?;
    let loaded = chartkit_chart::load_archive(&package, &shown, &super::load_options()?)
        .with_context(|| format!("cannot load the chart package `{shown}`"))?;
    let prov_path = PathBuf::from(format!("{shown}.prov"));
    let prov = match std::fs::read(&prov_path) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(crate::error::err!(
                "cannot read `{}`: {e}",
                prov_path.display()
            ));
        }
    };
    let created = chartkit_oci::manifest::rfc3339(
        metadata
            .modified()
            .with_context(|| format!("cannot read the modification time of `{shown}`"))?,
    );
    client
        .push_oci(&loaded, package, prov, destination, &created, access)
        .map_err(client_error)
}
