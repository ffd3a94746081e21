//! What a connection may cost the server: a limit on how many are open, and timeouts for
//! each way a client can hold one without making progress.
//!
//! Every accepted connection takes a slot ([`Connections::claim`]) and runs under a
//! watchdog ([`supervise`]) that closes it when
//! - its request head is not complete `read_header` after the connection opened (or after
//!   the head's first byte arrived, on a keep-alive connection): clients that send nothing
//!   or trickle headers;
//! - it has had no request in flight for `idle`: keep-alive connections left open;
//! - its TLS handshake is not done within `tls_handshake` (enforced around the handshake).
//!
//! A request body must arrive within `read_body` of its head ([`DeadlineBody`]); a handler
//! reading it past that gets [`BodyTimedOut`], which uploads answer with 408.
//!
//! When every slot is taken, the connection that has been idle longest is closed to make
//! room, the way nginx reuses keep-alive connections: idle clients cannot lock out a new
//! one, so `/health` keeps answering. Only when every connection has a request in flight
//! does the server stop accepting until one ends (new clients wait in the listen backlog).

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::http::{Request, Response, Version};
use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// How long the server waits for a client at each stage of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// From a connection's start (after TLS), or from the first byte of the next request
    /// on a keep-alive connection, until the request head (line and headers) is complete.
    pub read_header: Duration,
    /// From a request's head until its whole body has arrived.
    pub read_body: Duration,
    /// How long a connection may stay open with no request in flight.
    pub idle: Duration,
    /// From accepting a connection until its TLS handshake is done.
    pub tls_handshake: Duration,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            read_header: Duration::from_secs(10),
            read_body: Duration::from_secs(60),
            idle: Duration::from_secs(120),
            tls_handshake: Duration::from_secs(10),
        }
    }
}

/// A request body that stopped arriving: it did not end within `--read-timeout`.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {0:?} (--read-timeout)")]
pub struct BodyTimedOut(pub Duration);

/// The open-file limit `chartkit serve` runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFiles {
    /// The soft limit the process started with.
    pub before: u64,
    /// The soft limit now.
    pub now: u64,
}

/// Raises the soft limit on open files to the hard limit (at most 2^20, the usual kernel
/// ceiling, where the hard limit is unlimited). Every connection is a descriptor, and the
/// usual soft limit of 1,024 is far below what a server needs.
#[cfg(unix)]
pub fn raise_open_files_limit() -> io::Result<OpenFiles> {
    let (before, _) = rlimit::getrlimit(rlimit::Resource::NOFILE)?;
    let now = rlimit::increase_nofile_limit(1 << 20)?;
    Ok(OpenFiles { before, now })
}

/// Raises the soft limit on open files (nothing to raise on this platform).
#[cfg(not(unix))]
pub fn raise_open_files_limit() -> io::Result<OpenFiles> {
    Ok(OpenFiles {
        before: 8192,
        now: 8192,
    })
}

/// Descriptors kept for everything that is not a connection: the listener, the runtime,
/// stdio, and storage files (a download or upload opens its file on the blocking pool, at
/// most 512 threads; the periodic sync reads 32 at once).
const RESERVED_DESCRIPTORS: u64 = 512 + 64;

/// Beyond this many connections, memory (tens of KiB each under load) runs out before
/// descriptors do on hosts whose limit is in the millions.
const MAX_DEFAULT_CONNECTIONS: u64 = 65_536;

/// The default `--max-connections` for an open-file limit: the limit less the descriptors
/// kept for storage and the runtime (half the limit, when it is small), and no more than
/// 65,536.
pub fn default_max_connections(open_files: u64) -> usize {
    let reserved = RESERVED_DESCRIPTORS.min(open_files / 2);
    let connections = open_files
        .saturating_sub(reserved)
        .clamp(1, MAX_DEFAULT_CONNECTIONS);
    usize::try_from(connections).unwrap_or(usize::MAX)
}

/// Raises the soft open-file limit to the hard one, and returns how many connections to
/// allow: `requested`, or else [`default_max_connections`] for the raised limit. Logs the
/// outcome.
pub fn connection_limit(requested: Option<usize>) -> usize {
    let limit = raise_open_files_limit()
        .inspect_err(|error| {
            tracing::warn!(%error, "cannot read or raise the limit on open files");
        })
        .ok();
    let max_connections =
        requested.unwrap_or_else(|| default_max_connections(limit.map_or(1024, |l| l.now)));
    match limit {
        Some(limit) if limit.now > limit.before => tracing::info!(
            open_files = limit.now,
            raised_from = limit.before,
            max_connections,
            "connection limit"
        ),
        Some(limit) => tracing::info!(open_files = limit.now, max_connections, "connection limit"),
        None => tracing::info!(max_connections, "connection limit"),
    }
    max_connections
}

/// Whether an accept failed because the process (or the system) is out of descriptors.
pub(crate) fn out_of_descriptors(error: &io::Error) -> bool {
    // EMFILE and ENFILE on Linux and the BSDs.
    matches!(error.raw_os_error(), Some(23 | 24))
}

/// Logs a repeated warning at most once per interval, with how many were left out.
pub(crate) struct Throttle {
    interval: Duration,
    last: Option<Instant>,
    suppressed: u64,
}

impl Throttle {
    pub(crate) fn new(interval: Duration) -> Throttle {
        Throttle {
            interval,
            last: None,
            suppressed: 0,
        }
    }

    /// `Some(n)` when the warning should be logged now, `n` being how many were not logged
    /// since the last one.
    pub(crate) fn ready(&mut self, now: Instant) -> Option<u64> {
        if self
            .last
            .is_some_and(|last| now.duration_since(last) < self.interval)
        {
            self.suppressed += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.suppressed))
    }
}

/// The open connections, for the limit and for choosing which idle one makes room.
pub(crate) struct Connections {
    slots: Arc<Semaphore>,
    limit: usize,
    epoch: Instant,
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Activity>>>,
}

/// One connection's place under the limit; given back when dropped.
pub(crate) struct Slot {
    connections: Arc<Connections>,
    activity: Arc<Activity>,
    _permit: OwnedSemaphorePermit,
}

impl Slot {
    pub(crate) fn activity(&self) -> &Arc<Activity> {
        &self.activity
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.connections.lock().remove(&self.activity.id);
    }
}

impl Connections {
    pub(crate) fn new(limit: usize) -> Arc<Connections> {
        let limit = limit.clamp(1, Semaphore::MAX_PERMITS);
        Arc::new(Connections {
            slots: Arc::new(Semaphore::new(limit)),
            limit,
            epoch: Instant::now(),
            next_id: AtomicU64::new(0),
            open: Mutex::new(HashMap::new()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Activity>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn slot(self: &Arc<Self>, permit: OwnedSemaphorePermit) -> Slot {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let activity = Arc::new(Activity::new(id, self.epoch));
        self.lock().insert(id, Arc::clone(&activity));
        Slot {
            connections: Arc::clone(self),
            activity,
            _permit: permit,
        }
    }

    /// A slot for a new connection. At the limit, the longest-idle connection is closed to
    /// make room; when none is idle, this waits until a connection ends, logging (at most
    /// every 10 seconds) that the limit holds clients back.
    pub(crate) async fn claim(self: &Arc<Self>, full: &mut Throttle) -> Slot {
        loop {
            if let Ok(permit) = Arc::clone(&self.slots).try_acquire_owned() {
                return self.slot(permit);
            }
            if !self.evict_idlest()
                && let Some(suppressed) = full.ready(Instant::now())
            {
                tracing::warn!(
                    limit = self.limit,
                    suppressed,
                    "connection limit reached and every connection has a request in flight; new connections wait (--max-connections)"
                );
            }
            tokio::select! {
                permit = Arc::clone(&self.slots).acquire_owned() => {
                    if let Ok(permit) = permit {
                        return self.slot(permit);
                    }
                }
                // An evicted connection that turned busy keeps its slot: look again.
                () = tokio::time::sleep(Duration::from_millis(50)) => {}
            }
        }
    }

    /// Asks the connection that has been idle longest (no request in flight) to close.
    /// False when no connection is idle.
    pub(crate) fn evict_idlest(&self) -> bool {
        let open = self.lock();
        let idlest = open
            .values()
            .filter(|a| a.in_flight.load(Ordering::Acquire) == 0)
            .filter(|a| !a.evicting.load(Ordering::Acquire))
            .min_by_key(|a| a.idle_since.load(Ordering::Acquire));
        match idlest {
            Some(activity) => {
                activity.evicting.store(true, Ordering::Release);
                activity.wake.notify_one();
                true
            }
            None => false,
        }
    }
}

/// What one connection is doing, as its watchdog and the eviction see it. Times are
/// milliseconds since the server's epoch.
pub(crate) struct Activity {
    id: u64,
    epoch: Instant,
    in_flight: AtomicUsize,
    /// When the connection last had no request in flight (opened, or a response ended).
    idle_since: AtomicU64,
    /// One more than when the head of the next request began to arrive; 0 while none has.
    head_since: AtomicU64,
    /// HTTP/2 multiplexes control frames with requests, so bytes arriving on an idle HTTP/2
    /// connection do not mean a request head has started.
    http2: AtomicBool,
    /// Asked to close to make room for a new connection.
    evicting: AtomicBool,
    /// In its TLS handshake, which has its own timeout.
    handshaking: AtomicBool,
    wake: Notify,
}

/// Why the watchdog closed a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Closed {
    HeaderTimeout,
    IdleTimeout,
    Evicted,
}

impl Closed {
    fn reason(self) -> &'static str {
        match self {
            Closed::HeaderTimeout => "request head not received within --read-header-timeout",
            Closed::IdleTimeout => "idle for --idle-timeout",
            Closed::Evicted => "idle, closed to make room for a new connection",
        }
    }
}

/// What the watchdog should do next.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// Look again at this time (milliseconds since the epoch).
    WaitUntil(u64),
    Close(Closed),
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl Activity {
    fn new(id: u64, epoch: Instant) -> Activity {
        let activity = Activity {
            id,
            epoch,
            in_flight: AtomicUsize::new(0),
            idle_since: AtomicU64::new(0),
            head_since: AtomicU64::new(0),
            http2: AtomicBool::new(false),
            evicting: AtomicBool::new(false),
            handshaking: AtomicBool::new(false),
            wake: Notify::new(),
        };
        activity.restart();
        activity
    }

    fn now(&self) -> u64 {
        millis(Instant::now().duration_since(self.epoch))
    }

    /// The connection is ready for its first request (accepted, or its TLS handshake is
    /// done): the first head must arrive within the header timeout.
    pub(crate) fn restart(&self) {
        let now = self.now();
        self.idle_since.store(now, Ordering::Release);
        self.head_since.store(now + 1, Ordering::Release);
        if self.handshaking.swap(false, Ordering::AcqRel) {
            self.wake.notify_one();
        }
    }

    /// The TLS handshake begins: until [`Activity::restart`], only its own timeout and
    /// eviction apply.
    pub(crate) fn begin_handshake(&self) {
        self.handshaking.store(true, Ordering::Release);
    }

    /// Bytes arrived: on an idle HTTP/1 connection they begin the next request's head.
    fn bytes_arrived(&self) {
        if self.in_flight.load(Ordering::Acquire) == 0
            && !self.http2.load(Ordering::Relaxed)
            && self.head_since.load(Ordering::Acquire) == 0
        {
            self.head_since.store(self.now() + 1, Ordering::Release);
            // The header deadline may come before the idle one the watchdog sleeps until.
            self.wake.notify_one();
        }
    }

    fn request_started(self: &Arc<Self>, version: Version) -> InFlight {
        if version == Version::HTTP_2 {
            self.http2.store(true, Ordering::Relaxed);
        }
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.head_since.store(0, Ordering::Release);
        InFlight(Arc::clone(self))
    }

    fn verdict(&self, timeouts: &Timeouts, now: u64) -> Verdict {
        let busy = self.in_flight.load(Ordering::Acquire) > 0;
        if self.evicting.load(Ordering::Acquire) {
            if !busy {
                return Verdict::Close(Closed::Evicted);
            }
            // A request arrived after the eviction chose this connection: keep it.
            self.evicting.store(false, Ordering::Release);
        }
        if self.handshaking.load(Ordering::Acquire) {
            return Verdict::WaitUntil(now.saturating_add(millis(timeouts.idle)));
        }
        decide(
            busy,
            self.idle_since.load(Ordering::Acquire),
            self.head_since.load(Ordering::Acquire),
            timeouts,
            now,
        )
    }
}

/// The watchdog's rule, on plain numbers (milliseconds since the epoch).
fn decide(busy: bool, idle_since: u64, head_since: u64, timeouts: &Timeouts, now: u64) -> Verdict {
    if busy {
        // Nothing expires while a request is in flight (its body has its own deadline);
        // when it ends the idle clock starts from then, so looking again after the idle
        // timeout is never late. A head starting wakes the watchdog itself.
        return Verdict::WaitUntil(now.saturating_add(millis(timeouts.idle)));
    }
    let (deadline, closed) = match head_since {
        0 => (
            idle_since.saturating_add(millis(timeouts.idle)),
            Closed::IdleTimeout,
        ),
        started => (
            (started - 1).saturating_add(millis(timeouts.read_header)),
            Closed::HeaderTimeout,
        ),
    };
    if now >= deadline {
        Verdict::Close(closed)
    } else {
        Verdict::WaitUntil(deadline)
    }
}

/// Runs a connection until it ends, or until its watchdog closes it (by dropping it, which
/// closes the socket): `Err` says why.
pub(crate) async fn supervise<F: Future>(
    connection: F,
    activity: &Activity,
    timeouts: &Timeouts,
) -> Result<F::Output, &'static str> {
    tokio::pin!(connection);
    let mut look_at = activity.now().saturating_add(millis(timeouts.read_header));
    loop {
        let at = activity.epoch + Duration::from_millis(look_at);
        tokio::select! {
            biased;
            output = &mut connection => return Ok(output),
            () = activity.wake.notified() => {}
            () = tokio::time::sleep_until(at) => {}
        }
        match activity.verdict(timeouts, activity.now()) {
            Verdict::Close(closed) => return Err(closed.reason()),
            Verdict::WaitUntil(next) => look_at = next,
        }
    }
}

/// A request in flight on a connection; ends when its response body is dropped (sent, or
/// abandoned).
pub(crate) struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle_since.store(self.0.now(), Ordering::Release);
            self.0.head_since.store(0, Ordering::Release);
        }
    }
}

/// A connection's stream, noting when bytes arrive.
pub(crate) struct TimedIo<S> {
    inner: S,
    activity: Arc<Activity>,
}

impl<S> TimedIo<S> {
    pub(crate) fn new(inner: S, activity: Arc<Activity>) -> TimedIo<S> {
        TimedIo { inner, activity }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for TimedIo<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.bytes_arrived();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for TimedIo<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// The app as one connection's hyper service: counts requests in flight and gives each
/// request body its deadline.
#[derive(Clone)]
pub(crate) struct Tracked {
    app: axum::Router,
    /// The client's address, handed to handlers as axum's `ConnectInfo` (the request log
    /// names it).
    peer: std::net::SocketAddr,
    activity: Arc<Activity>,
    read_body: Duration,
}

impl Tracked {
    pub(crate) fn new(
        app: axum::Router,
        peer: std::net::SocketAddr,
        activity: Arc<Activity>,
        read_body: Duration,
    ) -> Tracked {
        Tracked {
            app,
            peer,
            activity,
            read_body,
        }
    }
}

type ResponseFuture =
    Pin<Box<dyn Future<Output = Result<Response<TrackedBody>, Infallible>> + Send>>;

impl hyper::service::Service<Request<Incoming>> for Tracked {
    type Response = Response<TrackedBody>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn call(&self, request: Request<Incoming>) -> ResponseFuture {
        let in_flight = self.activity.request_started(request.version());
        let deadline = Instant::now() + self.read_body;
        let read_body = self.read_body;
        let mut request = request.map(|body| {
            axum::body::Body::new(DeadlineBody {
                body,
                deadline,
                read_body,
                timer: None,
            })
        });
        let path = crate::request_log::OriginalPath(request.uri().path().to_owned());
        let extensions = request.extensions_mut();
        extensions.insert(axum::extract::ConnectInfo(self.peer));
        extensions.insert(path);
        let response = tower::ServiceExt::oneshot(self.app.clone(), request);
        Box::pin(async move {
            let response = response.await?;
            Ok(response.map(|body| TrackedBody {
                body,
                _in_flight: in_flight,
            }))
        })
    }
}

/// A response body that keeps its request counted as in flight until it is dropped.
pub(crate) struct TrackedBody {
    body: axum::body::Body,
    _in_flight: InFlight,
}

impl Body for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A request body that fails with [`BodyTimedOut`] once its deadline has passed.
struct DeadlineBody {
    body: Incoming,
    deadline: Instant,
    read_body: Duration,
    /// Made on the first wait, so requests whose body is already there (or empty) set no
    /// timer.
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Body for DeadlineBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        match Pin::new(&mut this.body).poll_frame(cx) {
            Poll::Ready(frame) => Poll::Ready(frame.map(|f| f.map_err(BoxError::from))),
            Poll::Pending => {
                let deadline = this.deadline;
                let timer = this
                    .timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                match timer.as_mut().poll(cx) {
                    Poll::Ready(()) => {
                        Poll::Ready(Some(Err(Box::new(BodyTimedOut(this.read_body)))))
                    }
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeouts() -> Timeouts {
        Timeouts {
            read_header: Duration::from_secs(10),
            read_body: Duration::from_secs(60),
            idle: Duration::from_secs(120),
            tls_handshake: Duration::from_secs(10),
        }
    }

    #[test]
    fn a_new_connection_must_send_its_head_within_the_header_timeout() {
        // Opened at 1 s: head_since = 1000 + 1.
        assert_eq!(
            decide(false, 1_000, 1_001, &timeouts(), 5_000),
            Verdict::WaitUntil(11_000)
        );
        assert_eq!(
            decide(false, 1_000, 1_001, &timeouts(), 11_000),
            Verdict::Close(Closed::HeaderTimeout)
        );
    }

    #[test]
    fn a_keep_alive_connection_waits_the_idle_timeout_until_a_head_starts() {
        assert_eq!(
            decide(false, 1_000, 0, &timeouts(), 60_000),
            Verdict::WaitUntil(121_000)
        );
        assert_eq!(
            decide(false, 1_000, 0, &timeouts(), 121_000),
            Verdict::Close(Closed::IdleTimeout)
        );
        // A head that began at 50 s has until 60 s.
        assert_eq!(
            decide(false, 1_000, 50_001, &timeouts(), 60_000),
            Verdict::Close(Closed::HeaderTimeout)
        );
    }

    #[test]
    fn nothing_expires_while_a_request_is_in_flight() {
        assert_eq!(
            decide(true, 0, 0, &timeouts(), 500_000),
            Verdict::WaitUntil(620_000)
        );
    }

    #[test]
    fn default_connection_limits_leave_descriptors_for_storage() {
        assert_eq!(default_max_connections(256), 128);
        assert_eq!(default_max_connections(1_024), 512);
        assert_eq!(default_max_connections(20_000), 20_000 - 576);
        assert_eq!(default_max_connections(1 << 20), 65_536);
        assert_eq!(default_max_connections(1), 1);
    }

    #[test]
    fn throttled_warnings_count_what_they_left_out() {
        let start = Instant::now();
        let mut throttle = Throttle::new(Duration::from_secs(10));
        assert_eq!(throttle.ready(start), Some(0));
        assert_eq!(throttle.ready(start + Duration::from_secs(1)), None);
        assert_eq!(throttle.ready(start + Duration::from_secs(2)), None);
        assert_eq!(throttle.ready(start + Duration::from_secs(11)), Some(2));
    }

    #[tokio::test]
    async fn eviction_picks_the_longest_idle_connection_and_spares_busy_ones() {
        tokio::time::pause();
        let connections = Connections::new(3);
        let mut full = Throttle::new(Duration::from_secs(10));
        let oldest = connections.claim(&mut full).await;
        tokio::time::advance(Duration::from_secs(1)).await;
        let busy_old = connections.claim(&mut full).await;
        let _request = busy_old.activity().request_started(Version::HTTP_11);
        tokio::time::advance(Duration::from_secs(1)).await;
        let newest = connections.claim(&mut full).await;

        assert!(connections.evict_idlest());
        assert!(oldest.activity().evicting.load(Ordering::Acquire));
        assert!(!busy_old.activity().evicting.load(Ordering::Acquire));
        assert_eq!(
            oldest
                .activity()
                .verdict(&timeouts(), oldest.activity().now()),
            Verdict::Close(Closed::Evicted)
        );
        // Next in line is the newest idle one, never the busy one.
        assert!(connections.evict_idlest());
        assert!(newest.activity().evicting.load(Ordering::Acquire));
        assert!(!connections.evict_idlest());
        drop(oldest);
        assert_eq!(connections.lock().len(), 2);
    }

    #[tokio::test]
    async fn an_idle_connection_is_closed_after_the_idle_timeout() {
        tokio::time::pause();
        let connections = Connections::new(1);
        let slot = connections
            .claim(&mut Throttle::new(Duration::from_secs(1)))
            .await;
        let activity = Arc::clone(slot.activity());
        drop(activity.request_started(Version::HTTP_11));
        let started = Instant::now();
        let outcome = supervise(std::future::pending::<()>(), &activity, &timeouts()).await;
        assert_eq!(outcome, Err(Closed::IdleTimeout.reason()));
        let waited = started.elapsed().as_secs_f64();
        assert!((119.9..=120.1).contains(&waited), "{waited}");
    }
}
