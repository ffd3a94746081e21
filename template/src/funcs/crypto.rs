//! Sprig's hashing, password and encryption functions, plus `uuidv4` and `randBytes`.
//! Certificate and key generation live in [`super::certs`].

use aes::cipher::{BlockDecryptMut, BlockEncryptMut, KeyIvInit};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::Mac;
use rand::RngCore;
use sha1::Digest;

use super::Registry;
use super::arg::{bytes, int, str};
use crate::value::{Ty, Value};

const S: Ty = Ty::String;

pub(crate) fn register(r: &mut Registry<'_>) {
    r.pure("sha1sum", &[S], |a| {
        Ok(Value::string(hex(&sha1::Sha1::digest(bytes(&a[0])))))
    });
    r.pure("sha256sum", &[S], |a| {
        Ok(Value::string(hex(&sha2::Sha256::digest(bytes(&a[0])))))
    });
    r.pure("sha512sum", &[S], |a| {
        Ok(Value::string(hex(&sha2::Sha512::digest(bytes(&a[0])))))
    });
    r.pure("adler32sum", &[S], |a| {
        Ok(Value::string(adler32(bytes(&a[0])).to_string()))
    });
    r.pure("bcrypt", &[S], |a| {
        Ok(Value::string(bcrypt_hash(str(&a[0]))))
    });
    r.pure("htpasswd", &[S, S], |a| {
        let user = str(&a[0]);
        if user.contains(':') {
            return Ok(Value::string(format!("invalid username: {user}")));
        }
        Ok(Value::string(format!("{user}:{}", bcrypt_hash(str(&a[1])))))
    });
    r.pure("derivePassword", &[Ty::Uint32, S, S, S, S], |a| {
        Ok(Value::string(derive_password(
            int(&a[0]) as u32,
            str(&a[1]),
            str(&a[2]),
            str(&a[3]),
            str(&a[4]),
        )))
    });
    r.pure("encryptAES", &[S, S], |a| {
        Ok(Value::string(encrypt_aes(bytes(&a[0]), bytes(&a[1]))))
    });
    r.pure("decryptAES", &[S, S], |a| {
        let crypt64 = String::from_utf8_lossy(bytes(&a[1]));
        decrypt_aes(bytes(&a[0]), &crypt64).map(Value::from_go_bytes)
    });
    r.pure("randBytes", &[Ty::Int], |a| {
        let n = int(&a[0]);
        // Sprig makes a `[]byte` of `n`, then its base64 text.
        let bytes = u64::try_from(n).ok();
        crate::budget::go_make_len(bytes)?;
        crate::budget::reserve(bytes.unwrap_or(0).div_ceil(3) * 4 + bytes.unwrap_or(0))?;
        let mut buf = vec![0u8; n as usize];
        rand::thread_rng().fill_bytes(&mut buf);
        Ok(Value::string(STANDARD.encode(buf)))
    });
    r.pure("uuidv4", &[], |_| Ok(Value::string(uuid_v4())));
    super::certs::register(r);
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 0xf) as usize] as char);
    }
    out
}

fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65521;
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in data.chunks(5552) {
        for &byte in chunk {
            a += byte as u32;
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

/// Go's `bcrypt.GenerateFromPassword` at the default cost, in the `$2a$` form.
fn bcrypt_hash(input: &str) -> String {
    match bcrypt::hash_with_result(input, 10) {
        Ok(h) => h.format_for_version(bcrypt::Version::TwoA),
        Err(e) => format!("failed to encrypt string with bcrypt: {e}"),
    }
}

fn uuid_v4() -> String {
    let mut b = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex(&b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

const MASTER_PASSWORD_SEED: &str = "com.lyndir.masterpassword";

fn password_templates(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "maximum" => &["anoxxxxxxxxxxxxxxxxx", "axxxxxxxxxxxxxxxxxno"],
        "long" => &[
            "CvcvnoCvcvCvcv",
            "CvcvCvcvnoCvcv",
            "CvcvCvcvCvcvno",
            "CvccnoCvcvCvcv",
            "CvccCvcvnoCvcv",
            "CvccCvcvCvcvno",
            "CvcvnoCvccCvcv",
            "CvcvCvccnoCvcv",
            "CvcvCvccCvcvno",
            "CvcvnoCvcvCvcc",
            "CvcvCvcvnoCvcc",
            "CvcvCvcvCvccno",
            "CvccnoCvccCvcv",
            "CvccCvccnoCvcv",
            "CvccCvccCvcvno",
            "CvcvnoCvccCvcc",
            "CvcvCvccnoCvcc",
            "CvcvCvccCvccno",
            "CvccnoCvcvCvcc",
            "CvccCvcvnoCvcc",
            "CvccCvcvCvccno",
        ],
        "medium" => &["CvcnoCvc", "CvcCvcno"],
        "short" => &["Cvcn"],
        "basic" => &["aaanaaan", "aannaaan", "aaannaaa"],
        "pin" => &["nnnn"],
        _ => return None,
    })
}

fn template_characters(class: u8) -> &'static [u8] {
    match class {
        b'V' => b"AEIOU",
        b'C' => b"BCDFGHJKLMNPQRSTVWXYZ",
        b'v' => b"aeiou",
        b'c' => b"bcdfghjklmnpqrstvwxyz",
        b'A' => b"AEIOUBCDFGHJKLMNPQRSTVWXYZ",
        b'a' => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz",
        b'n' => b"0123456789",
        b'o' => b"@&%?,=[]_:-+*$#!'^~;()/.",
        b'x' => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()",
        _ => b"",
    }
}

/// The Master Password algorithm Sprig's `derivePassword` implements.
fn derive_password(counter: u32, kind: &str, password: &str, user: &str, site: &str) -> String {
    let Some(templates) = password_templates(kind) else {
        return format!("cannot find password template {kind}");
    };
    let mut salt = MASTER_PASSWORD_SEED.as_bytes().to_vec();
    salt.extend_from_slice(&(user.len() as u32).to_be_bytes());
    salt.extend_from_slice(user.as_bytes());
    let mut key = [0u8; 64];
    let params = match scrypt::Params::new(15, 8, 2, 64) {
        Ok(p) => p,
        Err(e) => return format!("failed to derive password: {e}"),
    };
    if let Err(e) = scrypt::scrypt(password.as_bytes(), &salt, &params, &mut key) {
        return format!("failed to derive password: {e}");
    }
    let mut message = MASTER_PASSWORD_SEED.as_bytes().to_vec();
    message.extend_from_slice(&(site.len() as u32).to_be_bytes());
    message.extend_from_slice(site.as_bytes());
    message.extend_from_slice(&counter.to_be_bytes());
    let Ok(mut mac) = hmac::Hmac::<sha2::Sha256>::new_from_slice(&key) else {
        return "failed to derive password: invalid key".into();
    };
    mac.update(&message);
    let seed = mac.finalize().into_bytes();
    let template = templates[seed[0] as usize % templates.len()];
    template
        .bytes()
        .enumerate()
        .map(|(i, class)| {
            let chars = template_characters(class);
            chars[seed[i + 1] as usize % chars.len()] as char
        })
        .collect()
}

/// The 32-byte AES-256 key Sprig derives from a password: its bytes, truncated or padded
/// with zeros.
fn aes_key(password: &[u8]) -> [u8; 32] {
    let mut key = [0u8; 32];
    let n = password.len().min(32);
    key[..n].copy_from_slice(&password[..n]);
    key
}

/// Both arguments are Go strings taken as bytes, so text that is not UTF-8 is encrypted
/// as it is.
fn encrypt_aes(password: &[u8], plaintext: &[u8]) -> String {
    if plaintext.is_empty() {
        return String::new();
    }
    let mut iv = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut iv);
    let key = aes_key(password);
    let encryptor = cbc::Encryptor::<aes::Aes256>::new(&key.into(), &iv.into());
    let ciphertext =
        encryptor.encrypt_padded_vec_mut::<aes::cipher::block_padding::Pkcs7>(plaintext);
    let mut out = iv.to_vec();
    out.extend_from_slice(&ciphertext);
    STANDARD.encode(out)
}

fn decrypt_aes(password: &[u8], crypt64: &str) -> Result<Vec<u8>, String> {
    if crypt64.is_empty() {
        return Ok(Vec::new());
    }
    let data = super::encoding::b64_decode(crypt64)?;
    if data.len() < 16 {
        return Err("runtime error: slice bounds out of range".into());
    }
    let (iv, body) = data.split_at(16);
    if body.len() % 16 != 0 {
        return Err("crypto/cipher: input not full blocks".into());
    }
    let key = aes_key(password);
    let decryptor = cbc::Decryptor::<aes::Aes256>::new(&key.into(), iv.into());
    let mut buf = body.to_vec();
    let plain = decryptor
        .decrypt_padded_mut::<aes::cipher::block_padding::NoPadding>(&mut buf)
        .map_err(|e| e.to_string())?;
    // Sprig trusts the last byte as the padding length without checking it.
    let pad = plain.last().copied().unwrap_or(0) as usize;
    if pad > plain.len() {
        return Err(format!(
            "runtime error: slice bounds out of range [:{}]",
            plain.len() as i64 - pad as i64
        ));
    }
    Ok(plain[..plain.len() - pad].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums() {
        assert_eq!(adler32(b"hello world"), 436929629);
        assert_eq!(
            hex(&sha2::Sha256::digest(b"abc"))[..8].to_owned(),
            "ba7816bf"
        );
    }

    #[test]
    fn aes_round_trip() {
        let c = encrypt_aes(b"secretkey", b"plaintext");
        assert_eq!(decrypt_aes(b"secretkey", &c).unwrap(), b"plaintext");
        let c = encrypt_aes(b"k", b"caf\xe9");
        assert_eq!(decrypt_aes(b"k", &c).unwrap(), b"caf\xe9");
    }

    #[test]
    fn uuid_shape() {
        let u = uuid_v4();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
    }
}
