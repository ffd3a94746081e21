//! How the sandbox behaves: timings of the simulated controllers and the simulated nodes.

use std::time::Duration;

/// Settings of one sandbox.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How long a pod takes from scheduled to Ready.
    pub pod_ready_delay: Duration,
    /// How long a Job's pods run before they succeed.
    pub job_duration: Duration,
    /// When set, every CronJob fires at this interval instead of at its schedule's times
    /// (per CronJob: the `sandbox.chartkit.dev/cron-interval` annotation).
    pub cron_interval: Option<Duration>,
    /// Names of the simulated nodes (DaemonSets put a pod on each).
    pub nodes: Vec<String>,
    /// The Kubernetes version `/version` reports.
    pub kubernetes_version: KubeVersion,
    /// Bearer token required of clients, when set.
    pub token: Option<String>,
}

/// A Kubernetes version, as `/version` reports it.
#[derive(Debug, Clone)]
pub struct KubeVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl KubeVersion {
    pub fn git_version(&self) -> String {
        format!("v{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            pod_ready_delay: Duration::from_millis(500),
            job_duration: Duration::from_millis(500),
            cron_interval: None,
            nodes: vec!["sandbox-node".to_string()],
            kubernetes_version: KubeVersion {
                major: 1,
                minor: 34,
                patch: 0,
            },
            token: None,
        }
    }
}
