//! Releases left pending by an operation that did not finish and holds no release lock:
//! helm's (which has no lock), killed half-way. helm refuses every later operation on such
//! a release ("another operation (install/upgrade/rollback) is in progress") until someone
//! edits its record by hand. chartkit explains what it found, and with `--recover` marks
//! the revision failed, as it does for its own operations that died holding the lock.

use std::fmt;

use chartkit_release::{GoTime, Release, Status};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::Timestamp;
use kube::Api;

use crate::install::set_status;
use crate::{Engine, EngineError, lease_name, now};

/// The newest revision of a release, pending while no operation holds the release.
#[derive(Debug, Clone)]
pub struct Stuck {
    pub name: String,
    pub revision: i64,
    pub status: Status,
    /// When the pending revision was written.
    pub since: Option<GoTime>,
    /// Seconds between then and when this was found.
    pub age: Option<i64>,
}

impl Stuck {
    /// The release's newest revision, if it is pending.
    pub fn of(last: &Release) -> Option<Stuck> {
        if !last.status().is_pending() {
            return None;
        }
        let since = last.last_deployed();
        Some(Stuck {
            name: last.name.clone(),
            revision: last.version,
            status: last.status(),
            since,
            age: since.map(|t| now().unix() - t.unix()),
        })
    }

    /// The next step for a user whose upgrade or rollback met it.
    pub fn hint(&self) -> String {
        format!(
            "if no helm operation is running on release {}, run this again with --recover to mark revision {} failed and go on",
            self.name, self.revision
        )
    }

    /// The next step for a user who looked at the release (`status`).
    pub fn status_hint(&self) -> String {
        format!(
            "{self}\nhint: if no helm operation is running on it, `chartkit upgrade {name} CHART --recover` or `chartkit rollback {name} --recover` marks revision {} failed and goes on",
            self.revision,
            name = self.name,
        )
    }
}

/// `2026-11-27T22:30:01Z (3m20s ago)`, or "an unknown time" when the record has none.
fn since(stuck: &Stuck) -> String {
    let Some(at) = stuck.since else {
        return "an unknown time".to_string();
    };
    match stuck.age {
        Some(age) if age >= 0 => format!("{} ({} ago)", at.rfc3339(), ago(age)),
        _ => at.rfc3339(),
    }
}

fn ago(seconds: i64) -> String {
    let (hours, minutes, seconds) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    match (hours, minutes) {
        (0, 0) => format!("{seconds}s"),
        (0, _) => format!("{minutes}m{seconds}s"),
        _ => format!("{hours}h{minutes}m"),
    }
}

impl fmt::Display for Stuck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "release {} is stuck: revision {} has been {} since {}, and no operation holds it (chartkit's release lock is free); the operation that wrote it (helm's, which takes no lock) was interrupted, or is still running",
            self.name,
            self.revision,
            self.status.as_str(),
            since(self)
        )
    }
}

/// Who holds release `release`'s lock in `namespace` now, if anyone.
pub async fn lock_holder(
    client: &kube::Client,
    namespace: &str,
    release: &str,
) -> Result<Option<String>, EngineError> {
    let api: Api<Lease> = Api::namespaced(client.clone(), namespace);
    let Some(lease) = api.get_opt(&lease_name(release)).await? else {
        return Ok(None);
    };
    Ok(crate::lock::expiry(&lease)
        .filter(|(_, until)| *until > Timestamp::now())
        .map(|(holder, _)| holder))
}

impl Engine {
    /// Called holding the release's lock, with the release's newest revision: a pending
    /// one can only be an operation that took no lock. Refused, or with `recover` marked
    /// failed (in `last` and in the store) so the operation can go on.
    pub(crate) async fn settle_pending(
        &self,
        last: &mut Release,
        recover: bool,
        operation: &str,
    ) -> Result<(), EngineError> {
        let Some(stuck) = Stuck::of(last) else {
            return Ok(());
        };
        if !recover {
            return Err(EngineError::Stuck(Box::new(stuck)));
        }
        let description = format!(
            "Release {:?} was interrupted: revision {} was left {} since {} with no operation holding it, and chartkit {operation} --recover marked it failed",
            stuck.name,
            stuck.revision,
            stuck.status.as_str(),
            since(&stuck)
        );
        set_status(last, Status::Failed, &description);
        self.storage.update(last, now().unix()).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_as_durations() {
        assert_eq!(ago(7), "7s");
        assert_eq!(ago(200), "3m20s");
        assert_eq!(ago(3 * 3600 + 125), "3h2m");
    }
}
