//! SPDY/3.1 framing as kubectl's SPDY library (moby/spdystream) writes and reads it:
//! control frames with zlib-compressed header blocks sharing one compression context per
//! direction (primed with the SPDY/3 dictionary), and data frames.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

/// The protocol version every frame carries.
const VERSION: u16 = 3;

const SYN_STREAM: u16 = 1;
const SYN_REPLY: u16 = 2;
const RST_STREAM: u16 = 3;
const SETTINGS: u16 = 4;
const PING: u16 = 6;
const GOAWAY: u16 = 7;
const HEADERS: u16 = 8;
const WINDOW_UPDATE: u16 = 9;

/// FLAG_FIN on data frames and on SYN_STREAM/SYN_REPLY.
const FLAG_FIN: u8 = 0x01;

/// RST_STREAM status codes used here.
pub const RST_PROTOCOL_ERROR: u32 = 1;
pub const RST_REFUSED_STREAM: u32 = 3;
pub const RST_CANCEL: u32 = 5;

/// Largest frame accepted from a client. The length field allows 16 MiB; kubectl writes
/// at most what one `io.Copy` read returns (32 KiB), so a bound well above that keeps a
/// session's memory small without refusing a real client.
pub const MAX_FRAME: usize = 1 << 20;

/// Largest decompressed header block accepted (kubectl's are a few dozen bytes).
const MAX_HEADER_BLOCK: usize = 64 * 1024;

/// A frame read from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    SynStream {
        stream_id: u32,
        fin: bool,
        headers: Vec<(String, String)>,
    },
    Data {
        stream_id: u32,
        fin: bool,
        data: Bytes,
    },
    RstStream {
        stream_id: u32,
        status: u32,
    },
    Ping(u32),
    GoAway,
    /// SYN_REPLY, HEADERS, SETTINGS, WINDOW_UPDATE: nothing a port-forward server acts on
    /// (kubectl's library does no flow control either).
    Ignored,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FrameError {
    #[error("unsupported SPDY version {0}")]
    Version(u16),
    #[error("frame of {0} bytes exceeds the limit")]
    TooLarge(usize),
    #[error("malformed {0} frame")]
    Malformed(&'static str),
    #[error("header block: {0}")]
    Headers(String),
}

/// The SPDY/3 header compression dictionary (draft-mbelshe-httpbis-spdy-00 §2.6.10.1):
/// common header names and values, each a 4-byte big-endian length and the bytes, then
/// a run of status codes, reason phrases, dates and content types without lengths.
pub fn dictionary() -> &'static [u8] {
    static DICT: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    DICT.get_or_init(|| {
        const WORDS: &[&str] = &[
            "options",
            "head",
            "post",
            "put",
            "delete",
            "trace",
            "accept",
            "accept-charset",
            "accept-encoding",
            "accept-language",
            "accept-ranges",
            "age",
            "allow",
            "authorization",
            "cache-control",
            "connection",
            "content-base",
            "content-encoding",
            "content-language",
            "content-length",
            "content-location",
            "content-md5",
            "content-range",
            "content-type",
            "date",
            "etag",
            "expect",
            "expires",
            "from",
            "host",
            "if-match",
            "if-modified-since",
            "if-none-match",
            "if-range",
            "if-unmodified-since",
            "last-modified",
            "location",
            "max-forwards",
            "pragma",
            "proxy-authenticate",
            "proxy-authorization",
            "range",
            "referer",
            "retry-after",
            "server",
            "te",
            "trailer",
            "transfer-encoding",
            "upgrade",
            "user-agent",
            "vary",
            "via",
            "warning",
            "www-authenticate",
            "method",
            "get",
            "status",
            "200 OK",
            "version",
            "HTTP/1.1",
            "url",
            "public",
            "set-cookie",
            "keep-alive",
            "origin",
        ];
        const TAIL: &[&str] = &[
            "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505",
            "203 Non-Authoritative Information",
            "204 No Content",
            "301 Moved Permanently",
            "400 Bad Request",
            "401 Unauthorized",
            "403 Forbidden",
            "404 Not Found",
            "500 Internal Server Error",
            "501 Not Implemented",
            "503 Service Unavailable",
            "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 ",
            "Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT",
            "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,text/javascript,",
            "publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.",
        ];
        let mut d = Vec::with_capacity(1423);
        for w in WORDS {
            d.extend_from_slice(&(w.len() as u32).to_be_bytes());
            d.extend_from_slice(w.as_bytes());
        }
        for t in TAIL {
            d.extend_from_slice(t.as_bytes());
        }
        d
    })
}

/// Reads frames out of the bytes a client sent, keeping the header decompression
/// context across frames.
pub struct Reader {
    buf: BytesMut,
    inflate: Decompress,
}

impl Default for Reader {
    fn default() -> Self {
        Reader {
            buf: BytesMut::new(),
            inflate: Decompress::new(true),
        }
    }
}

impl Reader {
    /// Adds bytes read from the connection.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete frame, or `None` until more bytes arrive.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, FrameError> {
        if self.buf.len() < 8 {
            return Ok(None);
        }
        let length = u32::from_be_bytes([0, self.buf[5], self.buf[6], self.buf[7]]) as usize;
        if length > MAX_FRAME {
            return Err(FrameError::TooLarge(length));
        }
        if self.buf.len() < 8 + length {
            return Ok(None);
        }
        let mut head = self.buf.split_to(8);
        let body = self.buf.split_to(length).freeze();
        let first = head.get_u32();
        let flags = head.get_u8();
        if first & 0x8000_0000 == 0 {
            let stream_id = first & 0x7fff_ffff;
            if stream_id == 0 {
                return Err(FrameError::Malformed("DATA"));
            }
            return Ok(Some(Frame::Data {
                stream_id,
                fin: flags & FLAG_FIN != 0,
                data: body,
            }));
        }
        let version = ((first >> 16) & 0x7fff) as u16;
        if version != VERSION {
            return Err(FrameError::Version(version));
        }
        let kind = (first & 0xffff) as u16;
        let mut body = body;
        match kind {
            SYN_STREAM => {
                if body.len() < 10 {
                    return Err(FrameError::Malformed("SYN_STREAM"));
                }
                let stream_id = body.get_u32() & 0x7fff_ffff;
                body.advance(6); // associated stream, priority, slot
                let headers = self.headers(&body)?;
                if stream_id == 0 {
                    return Err(FrameError::Malformed("SYN_STREAM"));
                }
                Ok(Some(Frame::SynStream {
                    stream_id,
                    fin: flags & FLAG_FIN != 0,
                    headers,
                }))
            }
            SYN_REPLY | HEADERS => {
                // Their header blocks still advance the shared decompression context.
                if body.len() < 4 {
                    return Err(FrameError::Malformed("HEADERS"));
                }
                body.advance(4);
                self.headers(&body)?;
                Ok(Some(Frame::Ignored))
            }
            RST_STREAM => {
                if body.len() != 8 {
                    return Err(FrameError::Malformed("RST_STREAM"));
                }
                let stream_id = body.get_u32() & 0x7fff_ffff;
                let status = body.get_u32();
                Ok(Some(Frame::RstStream { stream_id, status }))
            }
            PING => {
                if body.len() != 4 {
                    return Err(FrameError::Malformed("PING"));
                }
                Ok(Some(Frame::Ping(body.get_u32())))
            }
            GOAWAY => Ok(Some(Frame::GoAway)),
            SETTINGS | WINDOW_UPDATE => Ok(Some(Frame::Ignored)),
            // SPDY/3 says unknown control frames are ignored.
            _ => Ok(Some(Frame::Ignored)),
        }
    }

    fn headers(&mut self, compressed: &[u8]) -> Result<Vec<(String, String)>, FrameError> {
        let mut out = Vec::with_capacity(256);
        let mut input = compressed;
        loop {
            if out.len() == out.capacity() {
                if out.len() >= MAX_HEADER_BLOCK {
                    return Err(FrameError::Headers("header block too large".into()));
                }
                out.reserve(out.len().max(256));
            }
            let before_in = self.inflate.total_in();
            let result = self
                .inflate
                .decompress_vec(input, &mut out, FlushDecompress::Sync);
            let used = (self.inflate.total_in() - before_in) as usize;
            input = &input[used..];
            match result {
                Ok(Status::StreamEnd) => break,
                Ok(_) if input.is_empty() && out.len() < out.capacity() => break,
                Ok(_) => {}
                Err(e) if e.needs_dictionary().is_some() => {
                    self.inflate
                        .set_dictionary(dictionary())
                        .map_err(|e| FrameError::Headers(e.to_string()))?;
                }
                Err(e) => return Err(FrameError::Headers(e.to_string())),
            }
        }
        parse_header_block(&out)
    }
}

fn parse_header_block(mut block: &[u8]) -> Result<Vec<(String, String)>, FrameError> {
    let bad = || FrameError::Headers("truncated header block".into());
    let take = |block: &mut &[u8]| -> Result<String, FrameError> {
        if block.len() < 4 {
            return Err(bad());
        }
        let n = block.get_u32() as usize;
        if block.len() < n {
            return Err(bad());
        }
        let s = String::from_utf8_lossy(&block[..n]).into_owned();
        block.advance(n);
        Ok(s)
    };
    if block.len() < 4 {
        return Err(bad());
    }
    let count = block.get_u32() as usize;
    let mut headers = Vec::with_capacity(count.min(64));
    for _ in 0..count {
        let name = take(&mut block)?.to_ascii_lowercase();
        let value = take(&mut block)?;
        // Several values of one header travel NUL-separated.
        for v in value.split('\0') {
            headers.push((name.clone(), v.to_string()));
        }
    }
    Ok(headers)
}

/// Writes frames, keeping the header compression context across frames.
pub struct Writer {
    deflate: Compress,
}

impl Default for Writer {
    fn default() -> Self {
        let mut deflate = Compress::new(Compression::default(), true);
        deflate
            .set_dictionary(dictionary())
            .expect("a fresh deflate stream takes a dictionary");
        Writer { deflate }
    }
}

impl Writer {
    /// SYN_REPLY with an empty header block, as the kubelet accepts a stream.
    pub fn syn_reply(&mut self, out: &mut BytesMut, stream_id: u32) {
        let block = self.compress(&0u32.to_be_bytes());
        control_header(out, SYN_REPLY, 0, 4 + block.len());
        out.put_u32(stream_id & 0x7fff_ffff);
        out.put_slice(&block);
    }

    pub fn data(out: &mut BytesMut, stream_id: u32, data: &[u8], fin: bool) {
        out.put_u32(stream_id & 0x7fff_ffff);
        out.put_u32((u32::from(if fin { FLAG_FIN } else { 0 }) << 24) | data.len() as u32);
        out.put_slice(data);
    }

    pub fn rst_stream(out: &mut BytesMut, stream_id: u32, status: u32) {
        control_header(out, RST_STREAM, 0, 8);
        out.put_u32(stream_id & 0x7fff_ffff);
        out.put_u32(status);
    }

    pub fn ping(out: &mut BytesMut, id: u32) {
        control_header(out, PING, 0, 4);
        out.put_u32(id);
    }

    fn compress(&mut self, block: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(block.len() + 64);
        let mut input = block;
        loop {
            if out.len() == out.capacity() {
                out.reserve(64);
            }
            let before = self.deflate.total_in();
            self.deflate
                .compress_vec(input, &mut out, FlushCompress::Sync)
                .expect("deflate into memory");
            input = &input[(self.deflate.total_in() - before) as usize..];
            // A sync flush is complete once the input is consumed and output space remains.
            if input.is_empty() && out.len() < out.capacity() {
                return out;
            }
        }
    }
}

fn control_header(out: &mut BytesMut, kind: u16, flags: u8, length: usize) {
    out.put_u16(0x8000 | VERSION);
    out.put_u16(kind);
    out.put_u32((u32::from(flags) << 24) | length as u32);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// What a client writes: SYN_STREAM with headers compressed in its own context.
    pub(crate) struct ClientWriter(Compress);

    impl ClientWriter {
        pub(crate) fn new() -> Self {
            let mut c = Compress::new(Compression::best(), true);
            c.set_dictionary(dictionary()).unwrap();
            ClientWriter(c)
        }

        pub(crate) fn syn_stream(&mut self, id: u32, headers: &[(&str, &str)]) -> Vec<u8> {
            let mut block = BytesMut::new();
            block.put_u32(headers.len() as u32);
            for (k, v) in headers {
                block.put_u32(k.len() as u32);
                block.put_slice(k.as_bytes());
                block.put_u32(v.len() as u32);
                block.put_slice(v.as_bytes());
            }
            let mut w = Writer {
                deflate: std::mem::replace(&mut self.0, Compress::new(Compression::none(), true)),
            };
            let compressed = w.compress(&block);
            self.0 = w.deflate;
            let mut out = BytesMut::new();
            control_header(&mut out, SYN_STREAM, 0, 10 + compressed.len());
            out.put_u32(id);
            out.put_u32(0);
            out.put_u16(0);
            out.put_slice(&compressed);
            out.to_vec()
        }
    }

    #[test]
    fn the_dictionary_is_spdy3s() {
        let d = dictionary();
        assert_eq!(d.len(), 1423);
        // zlib names a preset dictionary by its Adler-32; SPDY/3's is well known.
        let (mut a, mut b) = (1u32, 0u32);
        for &x in d {
            a = (a + u32::from(x)) % 65521;
            b = (b + a) % 65521;
        }
        assert_eq!((b << 16) | a, 0xe3c6_a7c2);
    }

    #[test]
    fn syn_streams_parse_across_one_compression_context() {
        let mut client = ClientWriter::new();
        let mut reader = Reader::default();
        let a = client.syn_stream(
            1,
            &[
                ("streamtype", "error"),
                ("port", "8080"),
                ("requestid", "0"),
            ],
        );
        let b = client.syn_stream(
            3,
            &[("streamtype", "data"), ("port", "8080"), ("requestid", "0")],
        );
        // Split arbitrarily: frames complete only when all their bytes are there.
        let all = [a, b].concat();
        reader.feed(&all[..5]);
        assert_eq!(reader.next_frame().unwrap(), None);
        reader.feed(&all[5..]);
        let Some(Frame::SynStream {
            stream_id, headers, ..
        }) = reader.next_frame().unwrap()
        else {
            panic!("a SYN_STREAM");
        };
        assert_eq!(stream_id, 1);
        assert!(headers.contains(&("streamtype".into(), "error".into())));
        let Some(Frame::SynStream {
            stream_id, headers, ..
        }) = reader.next_frame().unwrap()
        else {
            panic!("a second SYN_STREAM");
        };
        assert_eq!(stream_id, 3);
        assert!(headers.contains(&("streamtype".into(), "data".into())));
        assert_eq!(reader.next_frame().unwrap(), None);
    }

    #[test]
    fn replies_decompress_with_the_dictionary() {
        let mut w = Writer::default();
        let mut out = BytesMut::new();
        w.syn_reply(&mut out, 1);
        w.syn_reply(&mut out, 3);
        // Read them back as a client would: the first block names the dictionary.
        let mut d = Decompress::new(true);
        let mut buf = &out[..];
        for id in [1u32, 3] {
            assert_eq!(&buf[..4], &[0x80, 0x03, 0x00, 0x02]);
            let len = u32::from_be_bytes([0, buf[5], buf[6], buf[7]]) as usize;
            assert_eq!(u32::from_be_bytes(buf[8..12].try_into().unwrap()), id);
            let mut block = &buf[12..8 + len];
            let mut plain = Vec::with_capacity(64);
            loop {
                let before = d.total_in();
                if let Err(e) = d.decompress_vec(block, &mut plain, FlushDecompress::Sync) {
                    assert_eq!(e.needs_dictionary(), Some(0xe3c6_a7c2));
                    d.set_dictionary(dictionary()).unwrap();
                }
                block = &block[(d.total_in() - before) as usize..];
                if block.is_empty() {
                    break;
                }
            }
            assert_eq!(plain, vec![0, 0, 0, 0]);
            buf = &buf[8 + len..];
        }
    }

    #[test]
    fn data_and_control_frames_round_trip() {
        let mut out = BytesMut::new();
        Writer::data(&mut out, 3, b"hello", true);
        Writer::ping(&mut out, 7);
        Writer::rst_stream(&mut out, 5, RST_CANCEL);
        let mut r = Reader::default();
        r.feed(&out);
        assert_eq!(
            r.next_frame().unwrap(),
            Some(Frame::Data {
                stream_id: 3,
                fin: true,
                data: Bytes::from_static(b"hello")
            })
        );
        assert_eq!(r.next_frame().unwrap(), Some(Frame::Ping(7)));
        assert_eq!(
            r.next_frame().unwrap(),
            Some(Frame::RstStream {
                stream_id: 5,
                status: RST_CANCEL
            })
        );
    }

    #[test]
    fn oversized_and_foreign_frames_are_errors() {
        let mut r = Reader::default();
        r.feed(&[0, 0, 0, 1, 0, 0x7f, 0xff, 0xff]);
        assert!(matches!(r.next_frame(), Err(FrameError::TooLarge(_))));
        let mut r = Reader::default();
        r.feed(&[0x80, 0x02, 0x00, 0x06, 0, 0, 0, 4, 0, 0, 0, 1]);
        assert_eq!(r.next_frame(), Err(FrameError::Version(2)));
    }
}
