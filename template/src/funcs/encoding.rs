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

/// `base64.StdEncoding.DecodeString`: newlines are ignored, and an error names the
/// offset of the first bad input byte.
pub(crate) fn b64_decode(s: &str) -> Result<Vec<u8>, String> {
    let cleaned: Vec<(usize, u8)> = s
        .bytes()
        .enumerate()
        .filter(|(_, b)| *b != b'\n' && *b != b'\r')
        .collect();
    let text: Vec<u8> = cleaned.iter().map(|(_, b)| *b).collect();
    match STANDARD.decode(&text) {
        Ok(v) => Ok(v),
        Err(e) => {
            let at = match e {
                base64::DecodeError::InvalidByte(i, _) => i,
                base64::DecodeError::InvalidLastSymbol(i, _) => i,
                base64::DecodeError::InvalidLength(n) => n - n % 4,
                base64::DecodeError::InvalidPadding => first_bad_padding(&text),
            };
            let offset = cleaned.get(at).map_or(s.len(), |(i, _)| *i);
            Err(format!("illegal base64 data at input byte {offset}"))
        }
    }
}

fn first_bad_padding(text: &[u8]) -> usize {
    text.iter().position(|&b| b == b'=').unwrap_or(text.len())
}

fn b32_decode(s: &str) -> Result<Vec<u8>, String> {
    let text: Vec<u8> = s.bytes().filter(|b| *b != b'\n' && *b != b'\r').collect();
    data_encoding::BASE32
        .decode(&text)
        .map_err(|e| format!("illegal base32 data at input byte {}", e.position))
}
