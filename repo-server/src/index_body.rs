//! index.yaml as the server sends it: put together from one rendered part per chart, so
//! that a change to one chart re-renders only that chart, and a response streams the
//! shared parts instead of copying them into one buffer.
//!
//! The gzip form is built the same way. Each part is also kept deflated on its own, ending
//! on a byte boundary without closing the stream (a sync flush, as pigz does), so the parts
//! can be joined into one valid deflate stream; a gzip header, a closing part and a trailer
//! with the CRC-32 (combined from the parts' CRCs) and length make it a gzip file that any
//! single-member reader accepts.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use flate2::{Compress, Compression, FlushCompress};
use hyper::body::{Body, Frame, SizeHint};
use sha2::{Digest, Sha256};

/// Text rendered once, with its deflated form and what joining needs.
#[derive(Debug)]
pub struct Part {
    pub text: Bytes,
    deflated: Bytes,
    crc: flate2::Crc,
    hash: [u8; 32],
}

impl Part {
    /// A part in the middle of the stream (deflated with a sync flush).
    pub fn new(text: String) -> Part {
        Part::make(text, FlushCompress::Sync)
    }

    /// The last part (deflated to the end of the stream).
    fn last(text: String) -> Part {
        Part::make(text, FlushCompress::Finish)
    }

    fn make(text: String, flush: FlushCompress) -> Part {
        let text = Bytes::from(text);
        let mut crc = flate2::Crc::new();
        crc.update(&text);
        Part {
            deflated: deflate(&text, flush),
            hash: Sha256::digest(&text).into(),
            text,
            crc,
        }
    }

    pub fn len(&self) -> usize {
        self.text.len()
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }
}

fn deflate(text: &[u8], flush: FlushCompress) -> Bytes {
    let mut compress = Compress::new(Compression::fast(), false);
    let mut out = Vec::with_capacity(text.len() / 4 + 64);
    let mut input = text;
    loop {
        if out.len() == out.capacity() {
            out.reserve(out.capacity().max(64));
        }
        let before_in = compress.total_in();
        let status = compress
            .compress_vec(input, &mut out, flush)
            .expect("deflating into memory cannot fail");
        input = &input[(compress.total_in() - before_in) as usize..];
        let done = match flush {
            FlushCompress::Finish => status == flate2::Status::StreamEnd,
            // A sync flush is complete once all input is taken and the output had room
            // left (zlib's rule: a full buffer means there may be more to come).
            _ => input.is_empty() && out.len() < out.capacity(),
        };
        if done {
            break;
        }
    }
    Bytes::from(out)
}

/// The gzip header: deflate, no name or time, unknown operating system.
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// A complete index.yaml made of parts, in both encodings, with strong ETags.
#[derive(Debug)]
pub struct IndexBody {
    parts: Vec<Arc<Part>>,
    gzip_trailer: Bytes,
    pub etag: String,
    pub len: u64,
    pub gzip_len: u64,
}

impl IndexBody {
    /// Joins `head`, the charts' parts and `tail` (the only part made anew each time).
    pub fn new(head: Arc<Part>, charts: Vec<Arc<Part>>, tail: String) -> IndexBody {
        let tail = Arc::new(Part::last(tail));
        let mut parts = Vec::with_capacity(charts.len() + 2);
        parts.push(head);
        parts.extend(charts);
        parts.push(tail);
        // The ETag covers every part's content through the parts' own digests, so it
        // costs one small hash per chart rather than hashing the whole text again.
        let mut etag = Sha256::new();
        let mut crc = flate2::Crc::new();
        let mut len = 0u64;
        let mut gzip_len = GZIP_HEADER.len() as u64 + 8;
        for part in &parts {
            etag.update(part.hash);
            crc.combine(&part.crc);
            len += part.text.len() as u64;
            gzip_len += part.deflated.len() as u64;
        }
        let mut trailer = Vec::with_capacity(8);
        trailer.extend_from_slice(&crc.sum().to_le_bytes());
        trailer.extend_from_slice(&(len as u32).to_le_bytes());
        IndexBody {
            parts,
            gzip_trailer: Bytes::from(trailer),
            etag: format!("\"{}\"", &hex::encode(etag.finalize())[..32]),
            len,
            gzip_len,
        }
    }

    /// The ETag of the gzip form (distinct, as a strong validator must be per encoding).
    pub fn gzip_etag(&self) -> String {
        format!("{}-gzip\"", self.etag.trim_end_matches('"'))
    }

    /// The index as a response body.
    pub fn identity(&self) -> Pieces {
        Pieces::new(self.parts.iter().map(|p| p.text.clone()).collect())
    }

    /// The gzip form as a response body.
    pub fn gzip(&self) -> Pieces {
        let mut pieces = Vec::with_capacity(self.parts.len() + 2);
        pieces.push(Bytes::from_static(&GZIP_HEADER));
        pieces.extend(self.parts.iter().map(|p| p.deflated.clone()));
        pieces.push(self.gzip_trailer.clone());
        Pieces::new(pieces)
    }

    /// The whole text in one buffer.
    pub fn to_bytes(&self) -> Bytes {
        let mut out = Vec::with_capacity(self.len as usize);
        for part in &self.parts {
            out.extend_from_slice(&part.text);
        }
        Bytes::from(out)
    }
}

/// A response body sent piece by piece, with its exact length known up front (so it goes
/// out with `Content-Length`, not chunked).
pub struct Pieces {
    pieces: std::vec::IntoIter<Bytes>,
    remaining: u64,
}

impl Pieces {
    fn new(pieces: Vec<Bytes>) -> Pieces {
        let remaining = pieces.iter().map(|p| p.len() as u64).sum();
        Pieces {
            pieces: pieces.into_iter(),
            remaining,
        }
    }
}

impl Body for Pieces {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        for piece in self.pieces.by_ref() {
            if !piece.is_empty() {
                self.remaining -= piece.len() as u64;
                return Poll::Ready(Some(Ok(Frame::data(piece))));
            }
        }
        Poll::Ready(None)
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn collect(mut pieces: Pieces) -> Vec<u8> {
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        let mut out = Vec::new();
        let expected = pieces.size_hint().exact().unwrap();
        while let Poll::Ready(Some(Ok(frame))) = Pin::new(&mut pieces).poll_frame(&mut cx) {
            out.extend_from_slice(frame.data_ref().unwrap());
        }
        assert_eq!(out.len() as u64, expected);
        out
    }

    fn body(charts: &[&str]) -> IndexBody {
        IndexBody::new(
            Arc::new(Part::new("apiVersion: v1\nentries:\n".to_owned())),
            charts
                .iter()
                .map(|c| Arc::new(Part::new(c.to_string())))
                .collect(),
            "generated: now\n".to_owned(),
        )
    }

    #[test]
    fn the_gzip_form_is_one_stream_of_the_same_text() {
        let long: String = (0..20_000).map(|i| format!("  - v{i}\n")).collect();
        let index = body(&["  a:\n  - x\n", &long, "", "  c:\n  - z\n"]);
        let text = collect(index.identity());
        assert_eq!(text, index.to_bytes());
        assert!(text.starts_with(b"apiVersion: v1\nentries:\n  a:\n"));
        assert!(text.ends_with(b"  c:\n  - z\ngenerated: now\n"));
        let gzip = collect(index.gzip());
        assert_eq!(gzip.len() as u64, index.gzip_len);
        // A single-member reader sees all of it: the parts are one deflate stream.
        let mut inflated = Vec::new();
        flate2::read::GzDecoder::new(&gzip[..])
            .read_to_end(&mut inflated)
            .unwrap();
        assert_eq!(inflated, text);
    }

    #[test]
    fn the_etag_follows_the_content() {
        let one = body(&["  a:\n  - x\n"]);
        assert_eq!(one.etag, body(&["  a:\n  - x\n"]).etag);
        assert_ne!(one.etag, body(&["  a:\n  - y\n"]).etag);
        assert_ne!(one.etag, one.gzip_etag());
    }
}
