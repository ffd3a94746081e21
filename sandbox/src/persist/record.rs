//! The record format shared by log segments and snapshots.
//!
//! A frame is `length: u32 LE`, `crc: u32 LE`, then `length` bytes of payload; the CRC-32C
//! covers the length bytes and the payload, so a torn or overwritten frame, or a length
//! that was itself damaged, fails the check instead of being read as another record.
//!
//! A payload is `rv: u64 LE`, `op: u8` (1 = the object after the change, 2 = deleted),
//! the key as three `u16 LE`-length-prefixed UTF-8 strings (resource, namespace, name),
//! and for op 1 the object as JSON.

use crate::store::ObjectKey;

/// Bytes before a frame's payload.
pub const FRAME_HEADER: usize = 8;

/// The largest payload accepted: far above any object the API takes (request bodies are
/// limited to 3 MiB), so a larger length can only be damage.
pub const MAX_PAYLOAD: usize = 64 * 1024 * 1024;

const OP_PUT: u8 = 1;
const OP_DELETE: u8 = 2;

/// One decoded record; `object` is the JSON text, parsed by the caller (possibly on
/// another thread).
#[derive(Debug)]
pub struct Record<'a> {
    pub rv: u64,
    pub key: ObjectKey,
    pub object: Option<&'a [u8]>,
}

/// Appends a frame holding one change to `out`.
pub fn encode(out: &mut Vec<u8>, rv: u64, key: &ObjectKey, object: Option<&serde_json::Value>) {
    let start = out.len();
    out.extend_from_slice(&[0; FRAME_HEADER]);
    out.extend_from_slice(&rv.to_le_bytes());
    out.push(if object.is_some() { OP_PUT } else { OP_DELETE });
    for part in [&key.resource, &key.namespace, &key.name] {
        // Resource names, namespaces and object names are limited to a few hundred bytes
        // by validation; a longer one would be a bug, so it is cut rather than misframed.
        let bytes = &part.as_bytes()[..part.len().min(u16::MAX as usize)];
        out.extend_from_slice(&(bytes.len() as u16).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    if let Some(object) = object {
        serde_json::to_writer(&mut *out, object).expect("JSON values serialise");
    }
    let length = (out.len() - start - FRAME_HEADER) as u32;
    out[start..start + 4].copy_from_slice(&length.to_le_bytes());
    let crc = crc32c_append(crc32c(&length.to_le_bytes()), &out[start + FRAME_HEADER..]);
    out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
}

/// Why a frame could not be read.
#[derive(Debug, Clone, PartialEq)]
pub enum FrameError {
    /// The bytes end inside the frame.
    Short,
    /// The length is beyond any record's.
    TooLong(usize),
    /// The checksum does not match.
    Checksum,
    /// The checksum matches but the payload is not a record.
    Malformed(&'static str),
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::Short => f.write_str("the record is cut short"),
            FrameError::TooLong(n) => write!(f, "the record claims {n} bytes"),
            FrameError::Checksum => f.write_str("the record's checksum does not match"),
            FrameError::Malformed(why) => write!(f, "the record is malformed ({why})"),
        }
    }
}

/// Reads the frame at the start of `bytes`: the payload and the frame's whole length.
pub fn frame(bytes: &[u8]) -> Result<(&[u8], usize), FrameError> {
    if bytes.len() < FRAME_HEADER {
        return Err(FrameError::Short);
    }
    let length = u32::from_le_bytes(bytes[0..4].try_into().expect("4 bytes")) as usize;
    let crc = u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes"));
    if length > MAX_PAYLOAD {
        return Err(FrameError::TooLong(length));
    }
    let Some(payload) = bytes.get(FRAME_HEADER..FRAME_HEADER + length) else {
        return Err(FrameError::Short);
    };
    if crc32c_append(crc32c(&bytes[0..4]), payload) != crc {
        return Err(FrameError::Checksum);
    }
    Ok((payload, FRAME_HEADER + length))
}

/// Decodes a payload.
pub fn decode(payload: &[u8]) -> Result<Record<'_>, FrameError> {
    let mut rest = payload;
    let mut take = |n: usize| -> Result<&[u8], FrameError> {
        if rest.len() < n {
            return Err(FrameError::Malformed("too short"));
        }
        let (head, tail) = rest.split_at(n);
        rest = tail;
        Ok(head)
    };
    let rv = u64::from_le_bytes(take(8)?.try_into().expect("8 bytes"));
    let op = take(1)?[0];
    let mut parts = [String::new(), String::new(), String::new()];
    for part in &mut parts {
        let n = u16::from_le_bytes(take(2)?.try_into().expect("2 bytes")) as usize;
        *part = std::str::from_utf8(take(n)?)
            .map_err(|_| FrameError::Malformed("a key is not UTF-8"))?
            .to_string();
    }
    let [resource, namespace, name] = parts;
    let key = ObjectKey {
        resource,
        namespace,
        name,
    };
    let object = match op {
        OP_PUT => Some(rest),
        OP_DELETE if rest.is_empty() => None,
        OP_DELETE => return Err(FrameError::Malformed("a deletion carries an object")),
        _ => return Err(FrameError::Malformed("unknown operation")),
    };
    Ok(Record { rv, key, object })
}

/// CRC-32C (Castagnoli), as storage formats use for its error detection on short runs;
/// computed eight bytes at a time from tables built at compile time.
pub fn crc32c(bytes: &[u8]) -> u32 {
    crc32c_append(0, bytes)
}

/// Continues `crc` over `bytes`.
pub fn crc32c_append(crc: u32, bytes: &[u8]) -> u32 {
    let mut crc = !crc;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let low = crc ^ u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        crc = TABLES[7][(low & 0xff) as usize]
            ^ TABLES[6][((low >> 8) & 0xff) as usize]
            ^ TABLES[5][((low >> 16) & 0xff) as usize]
            ^ TABLES[4][(low >> 24) as usize]
            ^ TABLES[3][c[4] as usize]
            ^ TABLES[2][c[5] as usize]
            ^ TABLES[1][c[6] as usize]
            ^ TABLES[0][c[7] as usize];
    }
    for &b in chunks.remainder() {
        crc = TABLES[0][((crc ^ b as u32) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

const TABLES: [[u32; 256]; 8] = tables();

const fn tables() -> [[u32; 256]; 8] {
    const POLY: u32 = 0x82f6_3b78;
    let mut t = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
            bit += 1;
        }
        t[0][i] = crc;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            i += 1;
        }
        k += 1;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key() -> ObjectKey {
        ObjectKey {
            resource: "/configmaps".into(),
            namespace: "default".into(),
            name: "a".into(),
        }
    }

    #[test]
    fn crc32c_matches_the_published_check_value() {
        // The check value of CRC-32C over the ASCII digits 1 to 9.
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
        let long: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
        let whole = crc32c(&long);
        assert_eq!(crc32c_append(crc32c(&long[..13]), &long[13..]), whole);
    }

    #[test]
    fn frames_round_trip_and_reject_damage() {
        let mut out = Vec::new();
        encode(&mut out, 7, &key(), Some(&json!({"data": {"k": "v"}})));
        encode(&mut out, 8, &key(), None);
        let (payload, n) = frame(&out).unwrap();
        let r = decode(payload).unwrap();
        assert_eq!(
            (r.rv, r.key, r.object),
            (7, key(), Some(&br#"{"data":{"k":"v"}}"#[..]))
        );
        let (payload, m) = frame(&out[n..]).unwrap();
        assert_eq!(n + m, out.len());
        assert_eq!(decode(payload).unwrap().object, None);

        assert_eq!(frame(&out[..n - 1]), Err(FrameError::Short));
        let mut flipped = out.clone();
        flipped[FRAME_HEADER + 3] ^= 1;
        assert_eq!(frame(&flipped), Err(FrameError::Checksum));
        let mut longer = out.clone();
        longer[0] = longer[0].wrapping_add(1);
        assert!(frame(&longer).is_err());
    }
}
