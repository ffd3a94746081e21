//! index.yaml as the server sends it: put together from one rendered part per chart, so
//! that a change to one chart renders only that chart again, and a response sends shared
//! pieces instead of copying the whole index into one buffer.
//!
//! Consecutive parts are grouped into blocks, each joined and deflated once. Deflated
//! blocks end on a byte boundary without closing the stream (a sync flush, as pigz does),
//! so they join into one valid deflate stream; a gzip header, a closing piece and a
//! trailer with the CRC-32 (combined from the blocks' CRCs) and length make it a gzip file
//! that any single-member reader accepts. A block is a few dozen charts, not one: deflate
//! needs context to compress well (one small part per block gave 80 % of the text's size,
//! a block of dozens gives the whole file's ratio), and a response of thousands of tiny
//! pieces cost a third of the throughput.
//!
//! Where a block ends depends only on the parts' own digests (after a part whose digest
//! is 0 modulo [`BLOCK_PARTS`], or once a block passes [`BLOCK_BYTES`]), so a change to
//! one chart changes only the block that holds it: the others keep their boundaries and
//! are found again in the cache by the digests of their parts.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use flate2::{Compress, Compression, FlushCompress};
use hyper::body::{Body, Frame, SizeHint};
use sha2::{Digest, Sha256};

/// On average, how many charts' parts a block holds.
const BLOCK_PARTS: u8 = 32;

/// A block that reaches this many bytes of text ends after the part that took it there,
/// so that charts with many versions do not make blocks slow to deflate again.
const BLOCK_BYTES: usize = 256 * 1024;

/// One chart's rendered part of index.yaml and its digest.
#[derive(Debug)]
pub struct Part {
    text: Bytes,
    hash: [u8; 32],
}

impl Part {
    pub fn new(text: String) -> Part {
        Part {
            hash: Sha256::digest(text.as_bytes()).into(),
            text: Bytes::from(text),
        }
    }
}

/// Text joined and deflated once, with what joining it to other pieces needs.
#[derive(Debug)]
pub struct Piece {
    text: Bytes,
    deflated: Bytes,
    crc: flate2::Crc,
}

impl Piece {
    fn new(text: Bytes, flush: FlushCompress) -> Piece {
        let mut crc = flate2::Crc::new();
        crc.update(&text);
        Piece {
            deflated: deflate(&text, flush),
            text,
            crc,
        }
    }
}

fn deflate(text: &[u8], flush: FlushCompress) -> Bytes {
    let mut compress = Compress::new(Compression::default(), false);
    let mut out = Vec::with_capacity(text.len() / 4 + 64);
    let mut input = text;
    loop {
        if out.len() == out.capacity() {
            out.reserve(out.capacity().max(64));
        }
        let before = compress.total_in();
        let status = compress
            .compress_vec(input, &mut out, flush)
            .expect("deflating into memory cannot fail");
        input = &input[(compress.total_in() - before) as usize..];
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

/// Deflated blocks kept from one render to the next, by the digests of their parts.
#[derive(Debug, Default)]
pub struct BlockCache {
    blocks: HashMap<[u8; 32], Arc<Piece>>,
}

impl BlockCache {
    /// Groups `parts` (in index order) into blocks, taking those that did not change from
    /// the cache, and keeps only the blocks of this index for next time. Returns each block
    /// with its key.
    pub fn blocks(&mut self, parts: &[Arc<Part>]) -> Vec<([u8; 32], Arc<Piece>)> {
        let mut blocks = Vec::new();
        let mut fresh = HashMap::new();
        let mut start = 0;
        let mut bytes = 0;
        for (i, part) in parts.iter().enumerate() {
            bytes += part.text.len();
            let last = i + 1 == parts.len();
            if !(last || part.hash[0] % BLOCK_PARTS == 0 || bytes >= BLOCK_BYTES) {
                continue;
            }
            let members = &parts[start..=i];
            let mut key = Sha256::new();
            for member in members {
                key.update(member.hash);
            }
            let key: [u8; 32] = key.finalize().into();
            let block = match self.blocks.get(&key) {
                Some(block) => Arc::clone(block),
                None => {
                    let mut text = Vec::with_capacity(bytes);
                    for member in members {
                        text.extend_from_slice(&member.text);
                    }
                    Arc::new(Piece::new(Bytes::from(text), FlushCompress::Sync))
                }
            };
            fresh.insert(key, Arc::clone(&block));
            blocks.push((key, block));
            start = i + 1;
            bytes = 0;
        }
        self.blocks = fresh;
        blocks
    }
}

/// The gzip header: deflate, no name or time, unknown operating system.
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// A complete index.yaml made of pieces, in both encodings, with strong ETags.
#[derive(Debug)]
pub struct IndexBody {
    pieces: Vec<Arc<Piece>>,
    gzip_trailer: Bytes,
    pub etag: String,
    pub len: u64,
    pub gzip_len: u64,
}

impl IndexBody {
    /// Joins `head`, the charts' blocks and `tail` (the only piece made anew each time).
    pub fn new(head: &str, blocks: Vec<([u8; 32], Arc<Piece>)>, tail: String) -> IndexBody {
        // The ETag covers every block through its key (the digests of its parts), so it
        // costs one small hash per block rather than hashing the whole text again.
        let mut etag = Sha256::new();
        etag.update(head.as_bytes());
        etag.update(tail.as_bytes());
        let mut pieces = Vec::with_capacity(blocks.len() + 2);
        pieces.push(Arc::new(Piece::new(
            Bytes::copy_from_slice(head.as_bytes()),
            FlushCompress::Sync,
        )));
        for (key, block) in blocks {
            etag.update(key);
            pieces.push(block);
        }
        pieces.push(Arc::new(Piece::new(
            Bytes::from(tail),
            FlushCompress::Finish,
        )));
        let mut crc = flate2::Crc::new();
        let mut len = 0u64;
        let mut gzip_len = GZIP_HEADER.len() as u64 + 8;
        for piece in &pieces {
            crc.combine(&piece.crc);
            len += piece.text.len() as u64;
            gzip_len += piece.deflated.len() as u64;
        }
        let mut trailer = Vec::with_capacity(8);
        trailer.extend_from_slice(&crc.sum().to_le_bytes());
        trailer.extend_from_slice(&(len as u32).to_le_bytes());
        IndexBody {
            pieces,
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
        Pieces::new(self.pieces.iter().map(|p| p.text.clone()).collect())
    }

    /// The whole text, joined.
    pub fn text(&self) -> Vec<u8> {
        self.pieces
            .iter()
            .flat_map(|p| p.text.iter().copied())
            .collect()
    }

    /// The gzip form as a response body.
    pub fn gzip(&self) -> Pieces {
        let mut pieces = Vec::with_capacity(self.pieces.len() + 2);
        pieces.push(Bytes::from_static(&GZIP_HEADER));
        pieces.extend(self.pieces.iter().map(|p| p.deflated.clone()));
        pieces.push(self.gzip_trailer.clone());
        Pieces::new(pieces)
    }

    /// The whole text in one buffer.
    pub fn to_bytes(&self) -> Bytes {
        let mut out = Vec::with_capacity(self.len as usize);
        for piece in &self.pieces {
            out.extend_from_slice(&piece.text);
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

    fn parts(texts: &[String]) -> Vec<Arc<Part>> {
        texts
            .iter()
            .map(|t| Arc::new(Part::new(t.clone())))
            .collect()
    }

    fn charts(count: usize, version: usize) -> Vec<String> {
        (0..count)
            .map(|i| format!("  chart{i}:\n  - version: {version}.0.0\n    name: chart{i}\n"))
            .collect()
    }

    #[test]
    fn the_gzip_form_is_one_stream_of_the_same_text() {
        let mut texts = charts(500, 1);
        texts.push((0..20_000).map(|i| format!("  - v{i}\n")).collect());
        texts.push(String::new());
        let mut cache = BlockCache::default();
        let blocks = cache.blocks(&parts(&texts));
        assert!(blocks.len() > 3 && blocks.len() < 100, "{}", blocks.len());
        let index = IndexBody::new(
            "apiVersion: v1\nentries:\n",
            blocks,
            "generated: now\n".into(),
        );
        let text = collect(index.identity());
        assert_eq!(text, index.to_bytes());
        assert_eq!(
            text,
            format!(
                "apiVersion: v1\nentries:\n{}generated: now\n",
                texts.concat()
            )
            .as_bytes()
        );
        let gzip = collect(index.gzip());
        assert_eq!(gzip.len() as u64, index.gzip_len);
        // About as small as the whole text compressed at once.
        let mut whole = flate2::write::GzEncoder::new(Vec::new(), Compression::default());
        std::io::Write::write_all(&mut whole, &text).unwrap();
        let whole = whole.finish().unwrap().len();
        assert!(
            gzip.len() * 10 < whole * 11,
            "{} against {whole}",
            gzip.len()
        );
        // A single-member reader sees all of it: the blocks are one deflate stream.
        let mut inflated = Vec::new();
        flate2::read::GzDecoder::new(&gzip[..])
            .read_to_end(&mut inflated)
            .unwrap();
        assert_eq!(inflated, text);
    }

    #[test]
    fn a_changed_chart_changes_only_its_block() {
        let mut texts = charts(2000, 1);
        let mut cache = BlockCache::default();
        let before: Vec<[u8; 32]> = cache.blocks(&parts(&texts)).iter().map(|b| b.0).collect();
        texts[1000] = charts(1001, 2).pop().unwrap();
        let after: Vec<[u8; 32]> = cache.blocks(&parts(&texts)).iter().map(|b| b.0).collect();
        assert_eq!(before.len(), after.len());
        let changed = before.iter().zip(&after).filter(|(a, b)| a != b).count();
        assert_eq!(changed, 1);
    }

    #[test]
    fn the_etag_follows_the_content() {
        let body = |texts: &[String]| {
            let mut cache = BlockCache::default();
            IndexBody::new("head\n", cache.blocks(&parts(texts)), "tail\n".into())
        };
        let one = body(&charts(10, 1));
        assert_eq!(one.etag, body(&charts(10, 1)).etag);
        assert_ne!(one.etag, body(&charts(10, 2)).etag);
        assert_ne!(one.etag, one.gzip_etag());
    }
}
