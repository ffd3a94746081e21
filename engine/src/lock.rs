//! One operation at a time per release: a Lease named after the release, held while an
//! install, upgrade, rollback or uninstall runs and renewed in the background.
//!
//! Helm has no such lock: two upgrades interleave their records, and an upgrade killed
//! half-way leaves its revision `pending-upgrade` for ever, so every later operation fails
//! until someone edits the release Secret by hand. Here a crashed operation stops renewing
//! its lease; once the lease has expired the next operation takes it over and marks the
//! orphaned pending revision failed (see `recover`), then proceeds. When the holder ran on
//! this machine and its process is gone (`holder`), there is nothing to wait for: the
//! lease is taken over at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::{self, SignedDuration, Timestamp};
use kube::Api;
use kube::api::{DeleteParams, PostParams, Preconditions};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

use crate::EngineError;
use crate::holder::{Liveness, ProcessIdentity};

/// The annotation on the Lease naming the holder's process (`ProcessIdentity`'s text).
const PROCESS_ANNOTATION: &str = "chartkit.dev/holder-process";

/// How long a lease lasts without renewal, and who the holder says it is.
#[derive(Debug, Clone)]
pub struct LockSettings {
    /// A holder that stops renewing loses the lease after this long. Renewed every third.
    pub ttl: Duration,
    /// Written into the lease so that a user who meets it can tell whose it is.
    pub holder: String,
    /// This process, recorded so that another process on this machine can tell when the
    /// holder has died; None where that cannot be known.
    pub process: Option<ProcessIdentity>,
}

impl Default for LockSettings {
    fn default() -> Self {
        LockSettings {
            ttl: Duration::from_secs(30),
            holder: format!("chartkit (pid {})", std::process::id()),
            process: ProcessIdentity::current(),
        }
    }
}

/// The Lease guarding release `release`: a name of its own, so it never collides with the
/// release Secrets (`sh.helm.release.v1.*`) or the chart's objects.
pub fn lease_name(release: &str) -> String {
    format!("chartkit.release.{release}")
}

/// A lease this process took over from a holder that had stopped renewing it.
#[derive(Debug, Clone)]
pub(crate) struct Abandoned {
    pub holder: String,
    pub why: Why,
}

/// How a holder was found to have given up.
#[derive(Debug, Clone)]
pub(crate) enum Why {
    /// It stopped renewing the lease, which expired then.
    Expired(Timestamp),
    /// Its process on this machine is gone, though the lease had not expired yet.
    ProcessGone,
}

impl std::fmt::Display for Abandoned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.why {
            Why::Expired(at) => write!(
                f,
                "{} stopped renewing the release lock, which expired at {at}",
                self.holder
            ),
            Why::ProcessGone => write!(
                f,
                "{} ended without finishing (its process is gone from this machine)",
                self.holder
            ),
        }
    }
}

/// A held lease. `release` gives it back; if the process dies instead, the lease expires.
pub(crate) struct ReleaseLock {
    api: Api<Lease>,
    name: String,
    holder: String,
    /// The lease as last written by us: its resourceVersion makes each write conditional.
    current: Arc<Mutex<Lease>>,
    lost: Arc<AtomicBool>,
    renewer: JoinHandle<()>,
    pub abandoned: Option<Abandoned>,
}

fn micro_now() -> MicroTime {
    MicroTime(Timestamp::now())
}

/// When a lease stops protecting its holder; None when nobody holds it.
pub(crate) fn expiry(lease: &Lease) -> Option<(String, Timestamp)> {
    let spec = lease.spec.as_ref()?;
    let holder = spec.holder_identity.clone().filter(|h| !h.is_empty())?;
    let renewed = spec
        .renew_time
        .as_ref()
        .or(spec.acquire_time.as_ref())
        .map(|t| t.0)
        .unwrap_or(Timestamp::UNIX_EPOCH);
    let seconds = spec.lease_duration_seconds.unwrap_or(0).max(0);
    let until = renewed
        .checked_add(SignedDuration::from_secs(i64::from(seconds)))
        .unwrap_or(renewed);
    Some((holder, until))
}

fn spec(holder: &str, ttl: Duration) -> LeaseSpec {
    let now = micro_now();
    LeaseSpec {
        holder_identity: Some(holder.to_string()),
        lease_duration_seconds: Some(i32::try_from(ttl.as_secs().max(1)).unwrap_or(i32::MAX)),
        acquire_time: Some(now.clone()),
        renew_time: Some(now),
        ..Default::default()
    }
}

/// The process recorded as the lease's holder, when it ran on this machine and is gone.
fn holder_gone(lease: &Lease, here: Option<&ProcessIdentity>) -> bool {
    let Some(here) = here else {
        return false;
    };
    lease
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(PROCESS_ANNOTATION))
        .and_then(|text| text.parse::<ProcessIdentity>().ok())
        .is_some_and(|holder| holder.liveness(here) == Liveness::Gone)
}

/// Records (or, with None, forgets) the holder's process on the lease.
fn set_process(metadata: &mut ObjectMeta, process: Option<&ProcessIdentity>) {
    let annotations = metadata.annotations.get_or_insert_with(Default::default);
    match process {
        Some(process) => {
            annotations.insert(PROCESS_ANNOTATION.to_string(), process.to_string());
        }
        None => {
            annotations.remove(PROCESS_ANNOTATION);
        }
    }
}

fn conflict(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 409)
}

fn not_found(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 404)
}

impl ReleaseLock {
    /// Takes the lease of `release` in `namespace`, or says who holds it and until when.
    /// None when the namespace does not exist: no release can be there to protect yet.
    pub(crate) async fn acquire(
        client: &kube::Client,
        namespace: &str,
        release: &str,
        settings: &LockSettings,
    ) -> Result<Option<ReleaseLock>, EngineError> {
        let api: Api<Lease> = Api::namespaced(client.clone(), namespace);
        let name = lease_name(release);
        // Each pass either wins or sees a newer lease; a few passes settle any race.
        for _ in 0..8 {
            let (written, abandoned) = match api.get_opt(&name).await? {
                None => {
                    let mut lease = Lease {
                        metadata: ObjectMeta {
                            name: Some(name.clone()),
                            labels: Some(
                                [
                                    ("app.kubernetes.io/managed-by", "chartkit"),
                                    ("chartkit.dev/release", release),
                                ]
                                .into_iter()
                                .map(|(k, v)| (k.to_string(), v.to_string()))
                                .collect(),
                            ),
                            ..Default::default()
                        },
                        spec: Some(spec(&settings.holder, settings.ttl)),
                    };
                    set_process(&mut lease.metadata, settings.process.as_ref());
                    match api.create(&PostParams::default(), &lease).await {
                        Ok(written) => (written, None),
                        Err(e) if conflict(&e) => continue,
                        Err(e) if not_found(&e) => return Ok(None),
                        Err(e) => return Err(e.into()),
                    }
                }
                Some(mut lease) => {
                    let abandoned = match expiry(&lease) {
                        Some((holder, until))
                            if until > Timestamp::now()
                                && holder_gone(&lease, settings.process.as_ref()) =>
                        {
                            Some(Abandoned {
                                holder,
                                why: Why::ProcessGone,
                            })
                        }
                        Some((holder, until)) if until > Timestamp::now() => {
                            // Whole seconds read better, and round up so the time given
                            // is never before the lease really expires.
                            let until = until
                                .round(
                                    jiff::TimestampRound::new()
                                        .smallest(jiff::Unit::Second)
                                        .mode(jiff::RoundMode::Ceil),
                                )
                                .unwrap_or(until);
                            return Err(EngineError::msg(format!(
                                "another operation is in progress on release {release} (lease {namespace}/{name} held by {holder} until {until}); wait for it to finish, or run this again after {until} if that operation was interrupted"
                            )));
                        }
                        Some((holder, expired_at)) => Some(Abandoned {
                            holder,
                            why: Why::Expired(expired_at),
                        }),
                        None => None,
                    };
                    lease.spec = Some(spec(&settings.holder, settings.ttl));
                    set_process(&mut lease.metadata, settings.process.as_ref());
                    match api.replace(&name, &PostParams::default(), &lease).await {
                        Ok(written) => (written, abandoned),
                        Err(e) if conflict(&e) || not_found(&e) => continue,
                        Err(e) => return Err(e.into()),
                    }
                }
            };
            let current = Arc::new(Mutex::new(written));
            let lost = Arc::new(AtomicBool::new(false));
            let renewer = tokio::spawn(renew(
                api.clone(),
                name.clone(),
                settings.holder.clone(),
                settings.ttl,
                current.clone(),
                lost.clone(),
            ));
            return Ok(Some(ReleaseLock {
                api,
                name,
                holder: settings.holder.clone(),
                current,
                lost,
                renewer,
                abandoned,
            }));
        }
        Err(EngineError::msg(format!(
            "cannot lock release {release}: lease {namespace}/{name} kept changing while chartkit tried to take it; try again"
        )))
    }

    /// Stops renewing and deletes the lease, unless someone else holds it by now. A failure
    /// here is harmless: the lease expires on its own.
    pub(crate) async fn release(self) {
        self.renewer.abort();
        let held = !self.lost.load(Ordering::SeqCst);
        let _ = self.renewer.await;
        if !held {
            return;
        }
        let current = self.current.lock().await;
        let ours = current
            .spec
            .as_ref()
            .and_then(|s| s.holder_identity.as_deref())
            == Some(self.holder.as_str());
        if !ours {
            return;
        }
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                resource_version: current.metadata.resource_version.clone(),
                uid: current.metadata.uid.clone(),
            }),
            ..Default::default()
        };
        let _ = self.api.delete(&self.name, &params).await;
    }
}

/// Renews the lease every third of its duration. A conditional write that conflicts means
/// someone wrote the lease: if the holder is no longer us, the lease is lost and renewal
/// stops; transient errors are retried at the next tick.
async fn renew(
    api: Api<Lease>,
    name: String,
    holder: String,
    ttl: Duration,
    current: Arc<Mutex<Lease>>,
    lost: Arc<AtomicBool>,
) {
    let period = (ttl / 3).max(Duration::from_millis(100));
    loop {
        tokio::time::sleep(period).await;
        let mut lease = current.lock().await;
        let mut next = lease.clone();
        if let Some(spec) = next.spec.as_mut() {
            spec.renew_time = Some(micro_now());
        }
        match api.replace(&name, &PostParams::default(), &next).await {
            Ok(written) => *lease = written,
            Err(e) if conflict(&e) || not_found(&e) => match api.get_opt(&name).await {
                Ok(Some(fresh))
                    if fresh
                        .spec
                        .as_ref()
                        .and_then(|s| s.holder_identity.as_deref())
                        == Some(holder.as_str()) =>
                {
                    *lease = fresh;
                }
                Ok(_) => {
                    lost.store(true, Ordering::SeqCst);
                    return;
                }
                Err(_) => {}
            },
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(holder: Option<&str>, renewed: Timestamp, seconds: i32) -> Lease {
        Lease {
            metadata: ObjectMeta::default(),
            spec: Some(LeaseSpec {
                holder_identity: holder.map(str::to_string),
                lease_duration_seconds: Some(seconds),
                renew_time: Some(MicroTime(renewed)),
                ..Default::default()
            }),
        }
    }

    #[test]
    fn a_lease_expires_its_duration_after_the_last_renewal() {
        let renewed: Timestamp = "2026-11-26T10:00:00Z".parse().unwrap();
        let (holder, until) = expiry(&lease(Some("a"), renewed, 30)).unwrap();
        assert_eq!(holder, "a");
        assert_eq!(until.to_string(), "2026-11-26T10:00:30Z");
    }

    #[test]
    fn a_lease_without_a_holder_protects_nothing() {
        let renewed = Timestamp::now();
        assert!(expiry(&lease(None, renewed, 30)).is_none());
        assert!(expiry(&lease(Some(""), renewed, 30)).is_none());
    }

    #[test]
    fn the_lease_name_is_apart_from_helm_record_names() {
        assert_eq!(lease_name("web"), "chartkit.release.web");
    }
}
