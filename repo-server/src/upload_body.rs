//! An upload's request body read within `--max-upload-size`, and what happens to the rest
//! of a body over it.
//!
//! A server that answers 413 and closes while the client is still sending leaves unread
//! bytes in its socket, so the kernel resets the connection: helm's Go client and a
//! `curl` told not to wait for `100 Continue` then report a broken pipe or a reset
//! instead of the server's words. So the rest of an oversized body is read and thrown
//! away before answering, within a bound of bytes and of time; past either the
//! connection is given up. A client that sent `Expect: 100-continue` with a
//! Content-Length over the limit is answered at once: it sends nothing until told to,
//! and the 413 tells it not to. The sandbox does the same for its API server's bound
//! (`sandbox/src/http/request_body.rs`), in its own error type.

use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, header};
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt as _;

use crate::error::ApiError;

/// Bytes past the limit that are drained at least, whatever the limit.
const DRAIN_AT_LEAST: u64 = 16 * 1024 * 1024;

/// How long the rest of an oversized body may take to arrive. Longer than a client on a
/// good link needs for [`drain_bound`]'s bytes, short enough that an upload turn held
/// meanwhile is soon given back.
const DRAIN_TIME: Duration = Duration::from_secs(10);

/// How much of a body past `limit` is read and dropped: as much again as the limit (a
/// package twice the limit still hears why), and at least [`DRAIN_AT_LEAST`].
fn drain_bound(limit: usize) -> u64 {
    (limit as u64).max(DRAIN_AT_LEAST)
}

/// Reads a whole body, refusing more than `limit` bytes with 413 once the rest has been
/// drained (see the module's comment), and answering 408 when it stops arriving (the
/// connection gives each body a deadline, `--read-timeout`).
pub async fn read_body(headers: &HeaderMap, body: Body, limit: usize) -> Result<Bytes, ApiError> {
    read_body_within(headers, body, limit, drain_bound(limit), DRAIN_TIME).await
}

async fn read_body_within(
    headers: &HeaderMap,
    mut body: Body,
    limit: usize,
    drain_at_most: u64,
    drain_time: Duration,
) -> Result<Bytes, ApiError> {
    let declared = declared_length(headers);
    if let Some(declared) = declared
        && declared > limit as u64
    {
        let past_limit = declared - limit as u64;
        if !expects_continue(headers) && past_limit <= drain_at_most {
            drain(body, declared, drain_time).await;
        }
        return Err(too_large(limit));
    }
    // Within the limit here: a declared length is at most `limit`.
    let mut read = BytesMut::with_capacity(declared.unwrap_or(0) as usize);
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(unreadable)?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if read.len() + data.len() > limit {
            drain(body, drain_at_most, drain_time).await;
            return Err(too_large(limit));
        }
        read.extend_from_slice(&data);
    }
    Ok(read.freeze())
}

fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "request body is larger than the server's limit of {limit} bytes (--max-upload-size)"
        ),
    )
}

/// Why a body could not be read: its deadline (408), or the connection's failure.
fn unreadable(error: axum::Error) -> ApiError {
    match timed_out(&error) {
        Some(timed_out) => ApiError::new(StatusCode::REQUEST_TIMEOUT, timed_out.to_string()),
        None => ApiError::bad_request(format!("cannot read the request body: {error}")),
    }
}

/// Reads and drops up to `at_most` more bytes of `body`, stopping early at its end, at
/// an error (the body's own deadline among them) or after `time`.
async fn drain(mut body: Body, at_most: u64, time: Duration) {
    let reading = async {
        let mut dropped = 0u64;
        while let Some(Ok(frame)) = body.frame().await {
            if let Some(data) = frame.data_ref() {
                dropped += data.len() as u64;
                if dropped >= at_most {
                    return;
                }
            }
        }
    };
    let _ = tokio::time::timeout(time, reading).await;
}

fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

fn expects_continue(headers: &HeaderMap) -> bool {
    headers
        .get(header::EXPECT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("100-continue"))
}

/// The body's deadline, if that is why reading it failed.
fn timed_out(error: &axum::Error) -> Option<&crate::connections::BodyTimedOut> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = cause {
        if let Some(timed_out) = error.downcast_ref() {
            return Some(timed_out);
        }
        cause = error.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt as _;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const TIME: Duration = Duration::from_secs(10);

    /// A body of `chunks` chunks of `size` bytes that counts the chunks taken from it.
    fn counted_body(chunks: usize, size: usize) -> (Body, Arc<AtomicUsize>) {
        let taken = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&taken);
        let stream = futures::stream::iter(0..chunks).map(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok::<_, std::io::Error>(Bytes::from(vec![b'x'; size]))
        });
        (Body::from_stream(stream), taken)
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.insert(*name, value.parse().unwrap());
        }
        h
    }

    fn assert_too_large(error: &ApiError, limit: usize) {
        assert_eq!(error.status, StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(
            error.message,
            format!(
                "request body is larger than the server's limit of {limit} bytes (--max-upload-size)"
            )
        );
    }

    #[tokio::test]
    async fn a_body_within_the_limit_is_read_whole() {
        let (body, _) = counted_body(4, 10);
        let h = headers(&[("content-length", "40")]);
        let bytes = read_body_within(&h, body, 40, 100, TIME).await.unwrap();
        assert_eq!(bytes.len(), 40);
    }

    #[tokio::test]
    async fn the_rest_of_an_oversized_body_is_drained_before_the_413() {
        let (body, taken) = counted_body(10, 10);
        let err = read_body_within(&HeaderMap::new(), body, 25, 1000, TIME)
            .await
            .unwrap_err();
        assert_too_large(&err, 25);
        assert_eq!(taken.load(Ordering::SeqCst), 10, "every chunk is read");
    }

    #[tokio::test]
    async fn draining_stops_at_its_bound() {
        let (body, taken) = counted_body(100, 10);
        let err = read_body_within(&HeaderMap::new(), body, 25, 30, TIME)
            .await
            .unwrap_err();
        assert_too_large(&err, 25);
        // Three chunks to pass the limit, three more to drain 30 bytes.
        assert_eq!(taken.load(Ordering::SeqCst), 6);
    }

    #[tokio::test(start_paused = true)]
    async fn draining_stops_at_its_time_bound() {
        // One chunk, then a body that never ends.
        let stream = futures::stream::once(async { Ok::<_, std::io::Error>(Bytes::from("xx")) })
            .chain(futures::stream::pending());
        let started = tokio::time::Instant::now();
        let err = read_body_within(
            &headers(&[("content-length", "100")]),
            Body::from_stream(stream),
            25,
            1000,
            TIME,
        )
        .await
        .unwrap_err();
        assert_too_large(&err, 25);
        assert_eq!(started.elapsed(), TIME);
    }

    #[tokio::test]
    async fn a_declared_length_over_the_limit_is_drained_when_the_client_sends_anyway() {
        let (body, taken) = counted_body(10, 10);
        let h = headers(&[("content-length", "100")]);
        let err = read_body_within(&h, body, 25, 1000, TIME)
            .await
            .unwrap_err();
        assert_too_large(&err, 25);
        assert_eq!(taken.load(Ordering::SeqCst), 10);
    }

    #[tokio::test]
    async fn a_client_waiting_for_100_continue_is_answered_without_reading() {
        let (body, taken) = counted_body(10, 10);
        let h = headers(&[("content-length", "100"), ("expect", "100-continue")]);
        let err = read_body_within(&h, body, 25, 1000, TIME)
            .await
            .unwrap_err();
        assert_too_large(&err, 25);
        assert_eq!(taken.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn a_declared_length_past_the_drain_bound_is_answered_without_reading() {
        let (body, taken) = counted_body(10, 10);
        let h = headers(&[("content-length", "100")]);
        let err = read_body_within(&h, body, 25, 50, TIME).await.unwrap_err();
        assert_too_large(&err, 25);
        assert_eq!(taken.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn the_drain_bound_is_the_limit_again_and_at_least_16_mib() {
        assert_eq!(drain_bound(100_000), 16 << 20);
        assert_eq!(drain_bound(20 << 20), 20 << 20);
    }
}
