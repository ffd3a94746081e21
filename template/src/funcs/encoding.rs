//! Sprig's base64 and base32 functions. Decoding failures return Go's error text as
//! the result, as Sprig does.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::Registry;
use super::arg::{bytes, str};
use crate::value::{Ty, Value};

pub(crate) fn register(r: &mut Registry<'_>) {
    // Decoded data is a Go string of its bytes, binary or not.
    r.pure("b64enc", &[Ty::String], |a| {
        Ok(Value::string(STANDARD.encode(bytes(&a[0]))))
    });
    r.pure("b64dec", &[Ty::String], |a| {
        Ok(match b64_decode(str(&a[0])) {
            Ok(bytes) => Value::from_go_bytes(bytes),
            Err(e) => Value::string(e),
        })
    });
    r.pure("b32enc", &[Ty::String], |a| {
        Ok(Value::string(data_encoding::BASE32.encode(bytes(&a[0]))))
    });
    r.pure("b32dec", &[Ty::String], |a| {
        Ok(match b32_decode(str(&a[0])) {
            Ok(bytes) => Value::from_go_bytes(bytes),
            Err(e) => Value::string(e),
        })
    });
}

/// `base64.StdEncoding.DecodeString`, quantum by quantum as Go decodes: line breaks are
/// skipped, and the error names the offset Go names — the bad byte, the start of a
/// quantum the input ends in (`aGk`: byte 0, its padding is missing), the end for a
/// missing second `=`, the byte after padding for anything that follows it.
pub(crate) fn b64_decode(s: &str) -> Result<Vec<u8>, String> {
    let src = s.as_bytes();
    let corrupt = |at: usize| format!("illegal base64 data at input byte {at}");
    let is_break = |b: u8| b == b'\n' || b == b'\r';
    let mut out = Vec::with_capacity(src.len() / 4 * 3);
    let mut si = 0;
    while si < src.len() {
        let mut quantum = [0u8; 4];
        let mut len = 0;
        let mut end = false;
        while len < 4 {
            let Some(&c) = src.get(si) else {
                if len == 0 {
                    return Ok(out);
                }
                // Standard encoding pads: a quantum cut short is corrupt from its start.
                return Err(corrupt(si - len));
            };
            si += 1;
            if let Some(v) = sextet(c) {
                quantum[len] = v;
                len += 1;
                continue;
            }
            if is_break(c) {
                continue;
            }
            if c != b'=' || len < 2 {
                return Err(corrupt(si - 1));
            }
            if len == 2 {
                // "==" is expected; the first is read.
                while src.get(si).is_some_and(|&b| is_break(b)) {
                    si += 1;
                }
                match src.get(si) {
                    None => return Err(corrupt(src.len())),
                    Some(b'=') => si += 1,
                    Some(_) => return Err(corrupt(si - 1)),
                }
            }
            while src.get(si).is_some_and(|&b| is_break(b)) {
                si += 1;
            }
            if si < src.len() {
                return Err(corrupt(si));
            }
            end = true;
            break;
        }
        let value = quantum
            .iter()
            .fold(0u32, |acc, &sextet| (acc << 6) | u32::from(sextet));
        let bytes = [(value >> 16) as u8, (value >> 8) as u8, value as u8];
        // Four characters make three bytes, three make two, two make one.
        out.extend_from_slice(&bytes[..len - 1]);
        if end {
            break;
        }
    }
    Ok(out)
}

/// The value of a character of the standard base64 alphabet.
fn sextet(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

fn b32_decode(s: &str) -> Result<Vec<u8>, String> {
    let text: Vec<u8> = s.bytes().filter(|b| *b != b'\n' && *b != b'\r').collect();
    data_encoding::BASE32
        .decode(&text)
        .map_err(|e| format!("illegal base32 data at input byte {}", e.position))
}

#[cfg(test)]
mod tests {
    use super::b64_decode;

    #[test]
    fn base64_errors_name_the_offsets_go_names() {
        let ok = |s: &str| String::from_utf8(b64_decode(s).unwrap()).unwrap();
        let at = |s: &str| b64_decode(s).unwrap_err();
        assert_eq!(ok("aGk="), "hi");
        assert_eq!(ok("aG=="), "h");
        assert_eq!(ok("aGVs\nbG8=\r\n"), "hello");
        assert_eq!(ok(""), "");
        assert_eq!(at("aGk"), "illegal base64 data at input byte 0");
        assert_eq!(at("aGVsbG8"), "illegal base64 data at input byte 4");
        assert_eq!(at("aGk=="), "illegal base64 data at input byte 4");
        assert_eq!(at("aG="), "illegal base64 data at input byte 3");
        assert_eq!(at("a==="), "illegal base64 data at input byte 1");
        assert_eq!(at("aGk!"), "illegal base64 data at input byte 3");
        assert_eq!(at("aG=x"), "illegal base64 data at input byte 2");
    }
}
