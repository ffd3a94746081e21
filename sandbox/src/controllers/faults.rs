//! Failure injection: annotations that make the simulated kubelet misbehave for one
//! pod, or for every pod of a workload (pods inherit their template's annotations, so
//! the annotation goes on a Deployment's, StatefulSet's, DaemonSet's or Job's
//! `spec.template.metadata.annotations`, or on the pod itself).
//!
//! | annotation | value | what the pod does |
//! |---|---|---|
//! | `sandbox.chartkit.dev/fail` | `crashloop` | its first container exits with code 1 after running for the ready delay and restarts with a growing back-off: `CrashLoopBackOff`, a growing `restartCount`, `lastState.terminated` |
//! | | `image-pull` | its first container's image cannot be pulled: `ErrImagePull`, then `ImagePullBackOff`; the pod stays `Pending` |
//! | | `never-ready` | it runs, but its containers never become ready (`Ready` stays `False`) |
//! | | `job-fail` | its containers exit with code 1 (reason `Error`) when they would have completed, so the pod is `Failed` and a Job counts a failure |
//! | `sandbox.chartkit.dev/ready-delay` | a duration (`500ms`, `5s`, `1m`) | how long its containers run before they are ready, instead of the sandbox's `--pod-ready-delay` |
//! | `sandbox.chartkit.dev/run-duration` | a duration | how long a pod that runs to completion (a Job's pod, a `helm test` pod: `restartPolicy` `Never` or `OnFailure`) runs, instead of the sandbox's job duration |
//! | `sandbox.chartkit.dev/cron-interval` | a duration | on a CronJob: create a Job every interval instead of at the times its schedule names |
//!
//! An unknown `fail` value is ignored (the pod behaves), as the sandbox never refuses a
//! manifest for its annotations.

use std::time::Duration;

use serde_json::Value;

use crate::meta;

/// Makes a pod fail in one of the ways of [`Fault`].
pub const FAIL: &str = "sandbox.chartkit.dev/fail";
/// Overrides how long a pod takes to become ready.
pub const READY_DELAY: &str = "sandbox.chartkit.dev/ready-delay";
/// Overrides how long a run-to-completion pod runs.
pub const RUN_DURATION: &str = "sandbox.chartkit.dev/run-duration";
/// Makes a CronJob fire at this interval.
pub const CRON_INTERVAL: &str = "sandbox.chartkit.dev/cron-interval";

/// How a pod misbehaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    None,
    CrashLoop,
    ImagePull,
    NeverReady,
    JobFail,
}

/// The fault a pod's annotations ask for.
pub fn fault(pod: &Value) -> Fault {
    match meta::annotation(pod, FAIL).map(str::trim) {
        Some("crashloop") => Fault::CrashLoop,
        Some("image-pull") => Fault::ImagePull,
        Some("never-ready") => Fault::NeverReady,
        Some("job-fail") => Fault::JobFail,
        _ => Fault::None,
    }
}

/// A duration annotation's value, if it parses.
pub fn duration(object: &Value, annotation: &str) -> Option<Duration> {
    parse_duration(meta::annotation(object, annotation)?)
}

/// `250ms`, `5s`, `1.5m`, `1h`, or a Go-style sequence such as `1m30s`.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    let mut total = 0.0f64;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 {
            return None;
        }
        let n: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += n * scale;
    }
    Duration::try_from_secs_f64(total).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn durations_parse_like_go() {
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("5"), None);
        assert_eq!(parse_duration("x"), None);
    }

    #[test]
    fn faults_come_from_the_annotation() {
        let pod = json!({"metadata": {"annotations": {FAIL: "crashloop"}}});
        assert_eq!(fault(&pod), Fault::CrashLoop);
        let pod = json!({"metadata": {"annotations": {FAIL: "what"}}});
        assert_eq!(fault(&pod), Fault::None);
    }
}
