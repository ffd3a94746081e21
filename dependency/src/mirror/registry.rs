//! The registry side of a mirror: which tags of a source repository to copy, and pushing
//! copies to a target registry with `push`'s own function (Helm's manifest), skipping a
//! chart whose manifest the target already has.

use chartkit_oci::tags::versions;
use chartkit_oci::{HelmArtifact, Reference};
use chartkit_repo_client::Client;
use chartkit_version::{Version, VersionRange};

use super::{Copy, MirrorError, MirrorOptions, MirrorReport, Wanted};

/// The charts a registry source names: its tag or digest, else each version tag (in
/// `range` when given; `--versions` beside a tag is checked against it by the fetch).
pub(super) fn seed(
    client: &Client,
    reference: &Reference,
    options: &MirrorOptions,
    range: Option<&VersionRange>,
) -> Result<Vec<Wanted>, MirrorError> {
    if reference.tag.is_some() || reference.digest.is_some() {
        return Ok(vec![Wanted::Registry {
            reference: reference.clone(),
            version: options.versions.clone(),
        }]);
    }
    let registry = client.registry(&reference.registry, &options.access)?;
    let tags = registry.tags(&reference.repository)?;
    let chosen: Vec<Wanted> = versions(&tags)
        .iter()
        .filter(|v| match range {
            None => true,
            Some(range) => Version::parse(v).is_ok_and(|p| range.matches(&p)),
        })
        .map(|v| Wanted::Registry {
            reference: reference.with_tag(v),
            version: None,
        })
        .collect();
    if chosen.is_empty() {
        return Err(MirrorError::NoMatch {
            chart: reference.name().to_owned(),
            repo: format!("oci://{}", reference.locator()),
            range: options.versions.clone().unwrap_or_else(|| "*".to_owned()),
        });
    }
    Ok(chosen)
}

/// Checks that the target registry answers and accepts our credentials, before anything
/// is fetched.
pub(super) fn check_target(
    client: &Client,
    base: &str,
    access: &chartkit_repo_client::Access,
) -> Result<(), MirrorError> {
    let probe = Reference::parse(&format!("{base}/chart"))?;
    client.registry(&probe.registry, access)?.ping()?;
    Ok(())
}

/// Pushes each copy as `push` would push its package, unless the target already has the
/// very manifest under the chart's version tag.
pub(super) fn push_all(
    client: &Client,
    base: &str,
    options: &MirrorOptions,
    copies: &[Copy],
    report: &mut MirrorReport,
    notify: &mut dyn FnMut(&str),
) -> Result<(), MirrorError> {
    let failed = |file: &str, reason: String| MirrorError::Push {
        file: file.to_owned(),
        target: base.to_owned(),
        reason,
    };
    let probe = Reference::parse(&format!("{base}/chart"))?;
    let registry = client.registry(&probe.registry, &options.access)?;
    for copy in copies {
        let chart = chartkit_chart::load_archive(&copy.package, &copy.file, &options.load)
            .map_err(|e| failed(&copy.file, e.to_string()))?;
        // A chart with no creation time gets the time of this push, as a package file
        // just written would in helm.
        let created = copy
            .created
            .clone()
            .unwrap_or_else(|| chartkit_oci::manifest::rfc3339(std::time::SystemTime::now()));
        let metadata = &chart.metadata;
        let target = Reference::parse(&format!("{base}/{}:{}", metadata.name, metadata.version))?;
        let digest =
            HelmArtifact::new(metadata, copy.package.clone(), copy.prov.clone(), &created).digest();
        let tag = target.tag.clone().unwrap_or_default();
        if registry
            .manifest_digest(&target.repository, &tag)
            .ok()
            .flatten()
            .is_some_and(|there| there == digest)
        {
            report.present += 1;
            continue;
        }
        let pushed = client.push_oci(
            &chart,
            copy.package.clone(),
            copy.prov.clone(),
            base,
            &created,
            &options.access,
        )?;
        notify(&format!("Pushed {} ({})", pushed.reference, pushed.digest));
        if copy.prov.is_some() {
            report.provenance.push(format!("{}.prov", copy.file));
        }
        report.copied.push(pushed.reference.to_string());
    }
    Ok(())
}
