//! Request bodies read within the API server's size bound, and what happens to the rest
//! of a body over it.
//!
//! A server that answers 413 and closes the connection while the client is still sending
//! leaves unread bytes in its socket, so the kernel resets the connection: kubectl and
//! helm then report a broken pipe or a reset instead of the Status. So the rest of an
//! oversized body is read and thrown away before answering, within a bound of bytes and
//! of time; past either the connection is given up as before. A client that sent
//! `Expect: 100-continue` with a Content-Length over the bound is answered at once: it
//! sends nothing more until told to, and the 413 tells it not to.

use std::time::Duration;

use axum::body::Body;
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt as _;
use hyper::HeaderMap;
use hyper::header::{CONTENT_LENGTH, EXPECT};

use crate::status::{ApiError, ApiResult};

/// Largest request body accepted, as the API server's limit (3 MiB).
pub const MAX_BODY: usize = 3 * 1024 * 1024;

/// How much of an oversized body, past [`MAX_BODY`], is read and dropped so the 413
/// reaches the client.
const DRAIN_AT_MOST: u64 = 4 * MAX_BODY as u64;

/// How long the rest of an oversized body may take to arrive.
const DRAIN_TIME: Duration = Duration::from_secs(10);

/// Reads a whole body within [`MAX_BODY`]; a larger one is refused with the API server's
/// 413 once the rest of it has been drained (see the module's comment).
pub async fn read_body(headers: &HeaderMap, body: Body) -> ApiResult<Bytes> {
    read_body_within(headers, body, MAX_BODY, DRAIN_AT_MOST).await
}

async fn read_body_within(
    headers: &HeaderMap,
    mut body: Body,
    limit: usize,
    drain_at_most: u64,
) -> ApiResult<Bytes> {
    let declared = declared_length(headers);
    if let Some(declared) = declared
        && declared > limit as u64
    {
        let past_limit = declared - limit as u64;
        if !expects_continue(headers) && past_limit <= drain_at_most {
            drain(body, declared).await;
        }
        return Err(ApiError::too_large(limit));
    }
    let mut read = BytesMut::with_capacity(declared.unwrap_or(0) as usize);
    while let Some(frame) = body.frame().await {
        let frame =
            frame.map_err(|e| ApiError::bad_request(format!("reading the request body: {e}")))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if read.len() + data.len() > limit {
            drain(body, drain_at_most).await;
            return Err(ApiError::too_large(limit));
        }
        read.extend_from_slice(&data);
    }
    Ok(read.freeze())
}

/// Reads and drops up to `at_most` more bytes of `body`, stopping early at its end, at
/// an error or after [`DRAIN_TIME`].
async fn drain(mut body: Body, at_most: u64) {
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
    let _ = tokio::time::timeout(DRAIN_TIME, reading).await;
}

fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

fn expects_continue(headers: &HeaderMap) -> bool {
    headers
        .get(EXPECT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("100-continue"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt as _;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

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

    #[tokio::test]
    async fn a_body_within_the_limit_is_read_whole() {
        let (body, _) = counted_body(4, 10);
        let bytes = read_body_within(&HeaderMap::new(), body, 40, 100)
            .await
            .unwrap();
        assert_eq!(bytes.len(), 40);
    }

    #[tokio::test]
    async fn the_rest_of_an_oversized_body_is_drained_before_the_413() {
        let (body, taken) = counted_body(10, 10);
        let err = read_body_within(&HeaderMap::new(), body, 25, 1000)
            .await
            .unwrap_err();
        assert_eq!(err.code, 413);
        assert_eq!(err.message, "Request entity too large: limit is 25");
        assert_eq!(taken.load(Ordering::SeqCst), 10, "every chunk is read");
    }

    #[tokio::test]
    async fn draining_stops_at_its_bound() {
        let (body, taken) = counted_body(100, 10);
        let err = read_body_within(&HeaderMap::new(), body, 25, 30)
            .await
            .unwrap_err();
        assert_eq!(err.code, 413);
        // Three chunks to pass the limit, three more to drain 30 bytes.
        assert_eq!(taken.load(Ordering::SeqCst), 6);
    }

    #[tokio::test]
    async fn a_declared_length_over_the_limit_is_drained_when_the_client_sends_anyway() {
        let (body, taken) = counted_body(10, 10);
        let h = headers(&[("content-length", "100")]);
        let err = read_body_within(&h, body, 25, 1000).await.unwrap_err();
        assert_eq!(err.code, 413);
        assert_eq!(taken.load(Ordering::SeqCst), 10);
    }

    #[tokio::test]
    async fn a_client_waiting_for_100_continue_is_answered_without_reading() {
        let (body, taken) = counted_body(10, 10);
        let h = headers(&[("content-length", "100"), ("expect", "100-continue")]);
        let err = read_body_within(&h, body, 25, 1000).await.unwrap_err();
        assert_eq!(err.code, 413);
        assert_eq!(taken.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn a_declared_length_past_the_drain_bound_is_answered_without_reading() {
        let (body, taken) = counted_body(10, 10);
        let h = headers(&[("content-length", "100")]);
        let err = read_body_within(&h, body, 25, 50).await.unwrap_err();
        assert_eq!(err.code, 413);
        assert_eq!(taken.load(Ordering::SeqCst), 0);
    }
}
