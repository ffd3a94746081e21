//! HTTP/1.1 over a plain socket, for clients a library would not imitate: one that sends
//! a whole request before reading anything, as helm's and kubectl's Go clients do with a
//! body and no `Expect: 100-continue`.

use std::io::{Read, Write};
use std::net::TcpStream;

/// An answer read to the connection's end.
pub struct Answer {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Answer {
    /// The body as JSON, which it must be.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("the answer is not JSON ({e}): {}", self.body))
    }
}

/// Sends `head` (ending in the blank line) and then `body` to `host_port` without reading,
/// then reads the answer to the connection's end. Panics on a broken pipe or a reset:
/// those are what a server that stops reading a body gives such a client.
pub fn send_whole(host_port: &str, head: &str, body: &[u8]) -> Answer {
    let mut stream = TcpStream::connect(host_port).expect("connect to the server");
    stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body))
        .expect("the whole body is taken before the answer (no broken pipe)");
    let mut answer = Vec::new();
    stream
        .read_to_end(&mut answer)
        .expect("the answer is read (no reset)");
    let text = String::from_utf8_lossy(&answer);
    let (head, body) = text.split_once("\r\n\r\n").expect("a response head");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("a status line: {head}"));
    Answer {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    }
}

/// `body` in chunked transfer encoding, `chunk` bytes a chunk.
pub fn chunked(body: &[u8], chunk: usize) -> Vec<u8> {
    let mut encoded = Vec::new();
    for part in body.chunks(chunk) {
        write!(encoded, "{:x}\r\n", part.len()).expect("write to a Vec");
        encoded.extend_from_slice(part);
        encoded.extend_from_slice(b"\r\n");
    }
    encoded.extend_from_slice(b"0\r\n\r\n");
    encoded
}
