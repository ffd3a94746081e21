//! Sprig's key and certificate generation: `genPrivateKey`, `genCA`, `genSelfSignedCert`,
//! `genSignedCert`, their `WithKey` variants and `buildCustomCert`.
//!
//! Certificates are built like Go's `x509.CreateCertificate` does for Sprig's template:
//! a random 128-bit serial, the common name as subject, validity from now for the given
//! number of days, key usage, server and client auth, basic constraints, a subject key
//! identifier for CAs and subject alternative names. Output is random by nature, so it
//! can only match Helm in structure, never byte for byte.

use std::any::Any;
use std::rc::Rc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chrono::{Datelike, Timelike, Utc};
use rand::RngCore;
use rand::rngs::OsRng;
use sha2::Digest;

use super::Registry;
use super::arg::{int, str};
use crate::value::{Ty, Value};

const S: Ty = Ty::String;
const I: Ty = Ty::Int;
const L: Ty = Ty::List;
const CERT: Ty = Ty::Object("sprig.certificate");

pub(crate) fn register(r: &mut Registry<'_>) {
    r.pure("genPrivateKey", &[S], |a| {
        Ok(Value::string(gen_private_key(str(&a[0]))))
    });
    r.pure("buildCustomCert", &[S, S], |a| {
        build_custom_cert(str(&a[0]), str(&a[1]))
    });
    r.pure("genCA", &[S, I], |a| {
        let key = Key::rsa(2048)?;
        gen_ca(str(&a[0]), int(&a[1]), key)
    });
    r.pure("genCAWithKey", &[S, I, S], |a| {
        let key = Key::from_pem(str(&a[2])).map_err(|e| format!("parsing private key: {e}"))?;
        gen_ca(str(&a[0]), int(&a[1]), key)
    });
    r.pure("genSelfSignedCert", &[S, L, L, I], |a| {
        let key = Key::rsa(2048)?;
        gen_self_signed(str(&a[0]), &a[1], &a[2], int(&a[3]), key)
    });
    r.pure("genSelfSignedCertWithKey", &[S, L, L, I, S], |a| {
        let key = Key::from_pem(str(&a[4])).map_err(|e| format!("parsing private key: {e}"))?;
        gen_self_signed(str(&a[0]), &a[1], &a[2], int(&a[3]), key)
    });
    r.pure("genSignedCert", &[S, L, L, I, CERT], |a| {
        let key = Key::rsa(2048)?;
        gen_signed(str(&a[0]), &a[1], &a[2], int(&a[3]), &a[4], key)
    });
    r.pure("genSignedCertWithKey", &[S, L, L, I, CERT, S], |a| {
        let key = Key::from_pem(str(&a[5])).map_err(|e| format!("parsing private key: {e}"))?;
        gen_signed(str(&a[0]), &a[1], &a[2], int(&a[3]), &a[4], key)
    });
}

/// Sprig's `certificate` struct: PEM text of a certificate and its key.
#[derive(Debug, Clone)]
pub(crate) struct Certificate {
    cert: String,
    key: String,
}

impl crate::value::Object for Certificate {
    fn type_name(&self) -> String {
        "sprig.certificate".into()
    }

    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "Cert" => Some(Value::str(&self.cert)),
            "Key" => Some(Value::str(&self.key)),
            _ => None,
        }
    }

    fn struct_fields(&self) -> Option<Vec<crate::value::Field>> {
        use crate::value::Field;
        Some(vec![
            Field::new("Cert", Value::str(&self.cert)),
            Field::new("Key", Value::str(&self.key)),
        ])
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn cert_value(cert: String, key: String) -> Value {
    Value::Object(Rc::new(Certificate { cert, key }))
}

// DER encoding.

fn der_len(out: &mut Vec<u8>, len: usize) {
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes: Vec<u8> = len
            .to_be_bytes()
            .into_iter()
            .skip_while(|b| *b == 0)
            .collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
}

fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    der_len(&mut out, content.len());
    out.extend_from_slice(content);
    out
}

fn seq(parts: &[Vec<u8>]) -> Vec<u8> {
    tlv(0x30, &parts.concat())
}

fn integer(bytes_be: &[u8]) -> Vec<u8> {
    let mut b: Vec<u8> = bytes_be.iter().copied().skip_while(|x| *x == 0).collect();
    if b.is_empty() {
        b.push(0);
    }
    if b[0] & 0x80 != 0 {
        b.insert(0, 0);
    }
    tlv(0x02, &b)
}

fn oid(arcs: &[u64]) -> Vec<u8> {
    let mut body = vec![(arcs[0] * 40 + arcs[1]) as u8];
    for &arc in &arcs[2..] {
        let mut stack = vec![(arc & 0x7f) as u8];
        let mut v = arc >> 7;
        while v > 0 {
            stack.push(((v & 0x7f) as u8) | 0x80);
            v >>= 7;
        }
        stack.reverse();
        body.extend(stack);
    }
    tlv(0x06, &body)
}

fn bit_string(bytes: &[u8], unused: u8) -> Vec<u8> {
    let mut body = vec![unused];
    body.extend_from_slice(bytes);
    tlv(0x03, &body)
}

fn asn1_string(s: &str) -> Vec<u8> {
    let printable = s
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b" '()+,-./:=?".contains(&b));
    tlv(if printable { 0x13 } else { 0x0c }, s.as_bytes())
}

fn time(t: chrono::DateTime<Utc>) -> Vec<u8> {
    if (1950..2050).contains(&t.year()) {
        let s = format!(
            "{:02}{:02}{:02}{:02}{:02}{:02}Z",
            t.year() % 100,
            t.month(),
            t.day(),
            t.hour(),
            t.minute(),
            t.second()
        );
        tlv(0x17, s.as_bytes())
    } else {
        let s = format!(
            "{:04}{:02}{:02}{:02}{:02}{:02}Z",
            t.year(),
            t.month(),
            t.day(),
            t.hour(),
            t.minute(),
            t.second()
        );
        tlv(0x18, s.as_bytes())
    }
}

fn pem_encode(label: &str, der: &[u8]) -> String {
    let b64 = STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or(""));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

fn pem_decode(text: &str) -> Option<(String, Vec<u8>)> {
    let start = text.find("-----BEGIN ")?;
    let rest = &text[start + 11..];
    let label_end = rest.find("-----")?;
    let label = rest[..label_end].to_owned();
    let body_start = label_end + 5;
    let end_marker = format!("-----END {label}-----");
    let body_end = rest.find(&end_marker)?;
    let body: String = rest[body_start..body_end]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let der = STANDARD.decode(body).ok()?;
    Some((label, der))
}

// Keys.

enum Key {
    Rsa(Box<rsa::RsaPrivateKey>),
    Ecdsa(p256::SecretKey),
    Ed25519(ed25519_dalek::SigningKey),
    Dsa(Box<dsa::SigningKey>),
}

impl Key {
    fn rsa(bits: usize) -> Result<Key, String> {
        // Our own prime search on every core for the usual sizes (see `rsa_keys`), the
        // `rsa` crate for any other.
        let key = super::rsa_keys::generate(bits).unwrap_or_else(|| {
            rsa::RsaPrivateKey::new(&mut OsRng, bits)
                .map_err(|e| format!("error generating rsa key: {e}"))
        })?;
        Ok(Key::Rsa(Box::new(key)))
    }

    fn to_pem(&self) -> Result<String, String> {
        use rsa::pkcs1::EncodeRsaPrivateKey;
        Ok(match self {
            Key::Rsa(k) => pem_encode(
                "RSA PRIVATE KEY",
                k.to_pkcs1_der().map_err(|e| e.to_string())?.as_bytes(),
            ),
            // Go's `MarshalECPrivateKey` (RFC 5915) names the curve; p256's SEC 1 writer
            // leaves the optional parameters out, which OpenSSL and Go refuse to read.
            Key::Ecdsa(k) => {
                use p256::elliptic_curve::sec1::ToEncodedPoint;
                let point = k.public_key().to_encoded_point(false);
                let mut bits = vec![0u8];
                bits.extend_from_slice(point.as_bytes());
                let der = seq(&[
                    integer(&[1]),
                    tlv(0x04, &k.to_bytes()),
                    tlv(0xA0, &oid(&[1, 2, 840, 10045, 3, 1, 7])),
                    tlv(0xA1, &tlv(0x03, &bits)),
                ]);
                pem_encode("EC PRIVATE KEY", &der)
            }
            // Go's `MarshalPKCS8PrivateKey` writes the seed alone (PKCS #8 v1), not the
            // public key that RFC 8410's v2 form may add.
            Key::Ed25519(k) => {
                let seed = k.to_bytes();
                let der = seq(&[
                    integer(&[0]),
                    seq(&[oid(&[1, 3, 101, 112])]),
                    tlv(0x04, &tlv(0x04, &seed)),
                ]);
                pem_encode("PRIVATE KEY", &der)
            }
            Key::Dsa(k) => {
                let v = k.verifying_key();
                let c = v.components();
                let der = seq(&[
                    integer(&[0]),
                    integer(&c.p().to_bytes_be()),
                    integer(&c.q().to_bytes_be()),
                    integer(&c.g().to_bytes_be()),
                    integer(&v.y().to_bytes_be()),
                    integer(&k.x().to_bytes_be()),
                ]);
                pem_encode("DSA PRIVATE KEY", &der)
            }
        })
    }

    /// Sprig's `parsePrivateKeyPEM`.
    fn from_pem(text: &str) -> Result<Key, String> {
        use rsa::pkcs1::DecodeRsaPrivateKey;
        use rsa::pkcs8::DecodePrivateKey;
        let (label, der) = pem_decode(text).ok_or("no PEM data in input")?;
        if label == "PRIVATE KEY" {
            if let Ok(k) = rsa::RsaPrivateKey::from_pkcs8_der(&der) {
                return Ok(Key::Rsa(Box::new(k)));
            }
            if let Ok(k) = p256::SecretKey::from_pkcs8_der(&der) {
                return Ok(Key::Ecdsa(k));
            }
            if let Ok(k) = ed25519_dalek::SigningKey::from_pkcs8_der(&der) {
                return Ok(Key::Ed25519(k));
            }
            return Err("decoding PEM as PKCS#8: x509: failed to parse private key".into());
        }
        let Some(kind) = label.strip_suffix(" PRIVATE KEY") else {
            return Err(format!("no private key data in PEM block of type {label}"));
        };
        match kind {
            "RSA" => rsa::RsaPrivateKey::from_pkcs1_der(&der)
                .map(|k| Key::Rsa(Box::new(k)))
                .map_err(|e| format!("parsing RSA private key from PEM: {e}")),
            "EC" => p256::SecretKey::from_sec1_der(&der)
                .map(Key::Ecdsa)
                .map_err(|e| format!("parsing EC private key from PEM: {e}")),
            "DSA" => Err(
                "parsing DSA private key from PEM: keys of this type cannot sign certificates"
                    .into(),
            ),
            _ => Err(format!("invalid private key type {label}")),
        }
    }

    fn public_key_der(&self) -> Result<Vec<u8>, String> {
        use rsa::pkcs8::EncodePublicKey;
        Ok(match self {
            Key::Rsa(k) => k
                .to_public_key()
                .to_public_key_der()
                .map_err(|e| e.to_string())?
                .into_vec(),
            Key::Ecdsa(k) => k
                .public_key()
                .to_public_key_der()
                .map_err(|e| e.to_string())?
                .into_vec(),
            Key::Ed25519(k) => k
                .verifying_key()
                .to_public_key_der()
                .map_err(|e| e.to_string())?
                .into_vec(),
            Key::Dsa(_) => {
                return Err("x509: only RSA, ECDSA and Ed25519 keys supported".into());
            }
        })
    }

    fn signature_algorithm(&self) -> Vec<u8> {
        match self {
            Key::Rsa(_) => seq(&[oid(&[1, 2, 840, 113549, 1, 1, 11]), vec![0x05, 0x00]]),
            Key::Ecdsa(_) => seq(&[oid(&[1, 2, 840, 10045, 4, 3, 2])]),
            Key::Ed25519(_) | Key::Dsa(_) => seq(&[oid(&[1, 3, 101, 112])]),
        }
    }

    fn sign(&self, tbs: &[u8]) -> Result<Vec<u8>, String> {
        match self {
            Key::Rsa(k) => {
                let digest = sha2::Sha256::digest(tbs);
                match super::rsa_keys::sign_sha256(k, &digest) {
                    Some(signature) => Ok(signature),
                    None => k
                        .sign(rsa::Pkcs1v15Sign::new::<sha2::Sha256>(), &digest)
                        .map_err(|e| e.to_string()),
                }
            }
            Key::Ecdsa(k) => {
                use p256::ecdsa::signature::Signer;
                let signing = p256::ecdsa::SigningKey::from(k);
                let sig: p256::ecdsa::Signature = signing.sign(tbs);
                Ok(sig.to_der().as_bytes().to_vec())
            }
            Key::Ed25519(k) => {
                use ed25519_dalek::Signer;
                Ok(k.sign(tbs).to_bytes().to_vec())
            }
            Key::Dsa(_) => Err("x509: only RSA, ECDSA and Ed25519 keys supported".into()),
        }
    }
}

fn gen_private_key(kind: &str) -> String {
    let key = match kind {
        "" | "rsa" => Key::rsa(4096),
        "ecdsa" => Ok(Key::Ecdsa(p256::SecretKey::random(&mut OsRng))),
        "ed25519" => Ok(Key::Ed25519(ed25519_dalek::SigningKey::generate(
            &mut OsRng,
        ))),
        "dsa" => {
            let components = dsa::Components::generate(&mut OsRng, dsa::KeySize::DSA_2048_256);
            Ok(Key::Dsa(Box::new(dsa::SigningKey::generate(
                &mut OsRng, components,
            ))))
        }
        other => return format!("Unknown type {other}"),
    };
    match key.and_then(|k| k.to_pem()) {
        Ok(pem) => pem,
        Err(e) => format!("failed to generate private key: {e}"),
    }
}

/// What Sprig's `getBaseCertTemplate` and Go's certificate builder need.
struct Template {
    cn: String,
    ips: Vec<Vec<u8>>,
    dns: Vec<String>,
    days: i64,
    is_ca: bool,
}

fn template(cn: &str, ips: &Value, dns: &Value, days: i64) -> Result<Template, String> {
    let list = |v: &Value| -> Vec<Value> {
        match v {
            Value::List(l) => l.to_vec(),
            _ => Vec::new(),
        }
    };
    let mut ip_bytes = Vec::new();
    for ip in list(ips) {
        let Some(s) = ip.go_text() else {
            return Err(format!(
                "error parsing ip: {} is not a string",
                crate::print::sprint(&ip)
            ));
        };
        let parsed: std::net::IpAddr = s.parse().map_err(|_| format!("error parsing ip: {s}"))?;
        ip_bytes.push(match parsed {
            std::net::IpAddr::V4(v4) => v4.octets().to_vec(),
            std::net::IpAddr::V6(v6) => v6.octets().to_vec(),
        });
    }
    let mut names = Vec::new();
    for d in list(dns) {
        let Some(s) = d.go_text() else {
            return Err(format!(
                "error processing alternate dns name: {} is not a string",
                crate::print::sprint(&d)
            ));
        };
        names.push(s.to_string());
    }
    Ok(Template {
        cn: cn.to_owned(),
        ips: ip_bytes,
        dns: names,
        days,
        is_ca: false,
    })
}

fn extension(id: &[u64], critical: bool, value: Vec<u8>) -> Vec<u8> {
    let mut parts = vec![oid(id)];
    if critical {
        parts.push(tlv(0x01, &[0xff]));
    }
    parts.push(tlv(0x04, &value));
    seq(&parts)
}

/// Builds and signs a certificate; returns the PEM certificate and the signee's PEM key.
fn create(
    t: &Template,
    signee: &Key,
    issuer_name: Option<Vec<u8>>,
    issuer_key_id: Option<Vec<u8>>,
    signer: &Key,
) -> Result<(String, String), String> {
    let mut serial = [0u8; 16];
    OsRng.fill_bytes(&mut serial);
    let subject = seq(&[tlv(0x31, &seq(&[oid(&[2, 5, 4, 3]), asn1_string(&t.cn)]))]);
    let issuer = issuer_name.unwrap_or_else(|| subject.clone());
    let now = Utc::now();
    let not_after = now + chrono::Duration::hours(24 * t.days);
    let spki = signee
        .public_key_der()
        .map_err(|e| format!("error creating certificate: {e}"))?;

    let mut extensions = Vec::new();
    let (usage, unused) = if t.is_ca { (0xA4u8, 2u8) } else { (0xA0, 5) };
    extensions.push(extension(
        &[2, 5, 29, 15],
        true,
        bit_string(&[usage], unused),
    ));
    extensions.push(extension(
        &[2, 5, 29, 37],
        false,
        seq(&[
            oid(&[1, 3, 6, 1, 5, 5, 7, 3, 1]),
            oid(&[1, 3, 6, 1, 5, 5, 7, 3, 2]),
        ]),
    ));
    let basic = if t.is_ca {
        seq(&[tlv(0x01, &[0xff])])
    } else {
        seq(&[])
    };
    extensions.push(extension(&[2, 5, 29, 19], true, basic));
    if t.is_ca {
        let key_bits = spki_key_bits(&spki);
        let skid = sha1::Sha1::digest(key_bits).to_vec();
        extensions.push(extension(&[2, 5, 29, 14], false, tlv(0x04, &skid)));
    }
    if let Some(akid) = issuer_key_id {
        extensions.push(extension(&[2, 5, 29, 35], false, seq(&[tlv(0x80, &akid)])));
    }
    if !t.dns.is_empty() || !t.ips.is_empty() {
        let mut names: Vec<Vec<u8>> = t.dns.iter().map(|d| tlv(0x82, d.as_bytes())).collect();
        names.extend(t.ips.iter().map(|ip| tlv(0x87, ip)));
        extensions.push(extension(&[2, 5, 29, 17], false, seq(&names)));
    }

    let tbs = seq(&[
        tlv(0xa0, &integer(&[2])),
        integer(&serial),
        signer.signature_algorithm(),
        issuer,
        seq(&[time(now), time(not_after)]),
        subject,
        spki,
        tlv(0xa3, &seq(&extensions)),
    ]);
    let signature = signer
        .sign(&tbs)
        .map_err(|e| format!("error creating certificate: {e}"))?;
    let cert = seq(&[tbs, signer.signature_algorithm(), bit_string(&signature, 0)]);
    let key_pem = signee
        .to_pem()
        .map_err(|e| format!("error pem-encoding key: {e}"))?;
    Ok((pem_encode("CERTIFICATE", &cert), key_pem))
}

/// The public key bits inside a SubjectPublicKeyInfo, which the subject key identifier
/// hashes.
fn spki_key_bits(spki: &[u8]) -> &[u8] {
    let Some((_, body)) = read_tlv(spki) else {
        return spki;
    };
    let Some((_, rest)) = skip_tlv(body) else {
        return spki;
    };
    match read_tlv(rest) {
        Some((bits, _)) if !bits.is_empty() => &bits[1..],
        _ => spki,
    }
}

/// Splits one DER element off `data`: (its content, the rest after it).
fn read_tlv(data: &[u8]) -> Option<(&[u8], &[u8])> {
    let (_, content, rest) = read_element(data)?;
    Some((content, rest))
}

fn skip_tlv(data: &[u8]) -> Option<(&[u8], &[u8])> {
    let (whole, _, rest) = read_element(data)?;
    Some((whole, rest))
}

/// (the whole element, its content, the rest).
fn read_element(data: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let mut i = 1;
    let first = *data.get(i)?;
    i += 1;
    let len = if first < 0x80 {
        first as usize
    } else {
        let n = (first & 0x7f) as usize;
        let mut len = 0usize;
        for _ in 0..n {
            len = (len << 8) | *data.get(i)? as usize;
            i += 1;
        }
        len
    };
    let end = i.checked_add(len)?;
    if end > data.len() {
        return None;
    }
    Some((&data[..end], &data[i..end], &data[end..]))
}

/// The subject name and subject key identifier of a DER certificate.
fn issuer_of(der: &[u8]) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
    let (cert, _) = read_tlv(der)?;
    let (tbs, _) = read_tlv(cert)?;
    let mut rest = tbs;
    if rest.first() == Some(&0xa0) {
        rest = skip_tlv(rest)?.1;
    }
    rest = skip_tlv(rest)?.1; // serial
    rest = skip_tlv(rest)?.1; // signature algorithm
    rest = skip_tlv(rest)?.1; // issuer
    rest = skip_tlv(rest)?.1; // validity
    let (subject, mut rest) = skip_tlv(rest)?;
    rest = skip_tlv(rest)?.1; // subject public key info
    let mut skid = None;
    while let Some((element, content, after)) = read_element(rest) {
        if element[0] == 0xa3 {
            let (exts, _) = read_tlv(content)?;
            let mut e = exts;
            while let Some((ext, after_ext)) = read_tlv(e) {
                let skid_oid = oid(&[2, 5, 29, 14]);
                if ext.starts_with(&skid_oid) {
                    let mut inner = &ext[skid_oid.len()..];
                    if inner.first() == Some(&0x01) {
                        inner = skip_tlv(inner)?.1;
                    }
                    let (octets, _) = read_tlv(inner)?;
                    let (id, _) = read_tlv(octets)?;
                    skid = Some(id.to_vec());
                }
                e = after_ext;
            }
        }
        rest = after;
    }
    Some((subject.to_vec(), skid))
}

fn gen_ca(cn: &str, days: i64, key: Key) -> Result<Value, String> {
    let mut t = template(cn, &Value::Nil, &Value::Nil, days)?;
    t.is_ca = true;
    let (cert, key_pem) = create(&t, &key, None, None, &key)?;
    Ok(cert_value(cert, key_pem))
}

fn gen_self_signed(
    cn: &str,
    ips: &Value,
    dns: &Value,
    days: i64,
    key: Key,
) -> Result<Value, String> {
    let t = template(cn, ips, dns, days)?;
    let (cert, key_pem) = create(&t, &key, None, None, &key)?;
    Ok(cert_value(cert, key_pem))
}

fn gen_signed(
    cn: &str,
    ips: &Value,
    dns: &Value,
    days: i64,
    ca: &Value,
    key: Key,
) -> Result<Value, String> {
    let ca = match ca {
        Value::Object(o) => o.as_any().downcast_ref::<Certificate>().cloned(),
        _ => None,
    }
    .unwrap_or(Certificate {
        cert: String::new(),
        key: String::new(),
    });
    let (_, ca_der) = pem_decode(&ca.cert).ok_or("unable to decode certificate")?;
    let (issuer, skid) = issuer_of(&ca_der)
        .ok_or("error parsing certificate: decodedSignerCert.Bytes: x509: malformed certificate")?;
    let signer = Key::from_pem(&ca.key).map_err(|e| format!("error parsing private key: {e}"))?;
    let t = template(cn, ips, dns, days)?;
    let (cert, key_pem) = create(&t, &key, Some(issuer), skid, &signer)?;
    Ok(cert_value(cert, key_pem))
}

fn build_custom_cert(b64cert: &str, b64key: &str) -> Result<Value, String> {
    let cert = STANDARD
        .decode(b64cert)
        .map_err(|_| "unable to decode base64 certificate")?;
    let key = STANDARD
        .decode(b64key)
        .map_err(|_| "unable to decode base64 private key")?;
    let cert = String::from_utf8_lossy(&cert).into_owned();
    let key = String::from_utf8_lossy(&key).into_owned();
    let (_, der) = pem_decode(&cert).ok_or("unable to decode certificate")?;
    if issuer_of(&der).is_none() {
        return Err(
            "error parsing certificate: decodedCert.Bytes: x509: malformed certificate".into(),
        );
    }
    if let Err(e) = Key::from_pem(&key)
        && !key.contains("DSA PRIVATE KEY")
    {
        return Err(format!("error parsing private key: {e}"));
    }
    Ok(cert_value(cert, key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ca_and_signed_cert_chain() {
        let key = Key::Ecdsa(p256::SecretKey::random(&mut OsRng));
        let ca = gen_ca("my-ca", 365, key).unwrap();
        let Value::Object(o) = &ca else {
            panic!("not a certificate")
        };
        let ca_cert = o.as_any().downcast_ref::<Certificate>().unwrap();
        assert!(ca_cert.cert.starts_with("-----BEGIN CERTIFICATE-----\n"));
        assert!(ca_cert.key.starts_with("-----BEGIN EC PRIVATE KEY-----\n"));
        let (_, der) = pem_decode(&ca_cert.cert).unwrap();
        let (subject, skid) = issuer_of(&der).unwrap();
        assert!(skid.is_some());
        assert!(subject.windows(5).any(|w| w == b"my-ca"));
        let leaf_key = Key::Ed25519(ed25519_dalek::SigningKey::generate(&mut OsRng));
        let leaf = gen_signed(
            "leaf",
            &Value::list(vec![Value::str("10.0.0.1")]),
            &Value::list(vec![Value::str("a.example")]),
            30,
            &ca,
            leaf_key,
        )
        .unwrap();
        let Value::Object(o) = &leaf else {
            panic!("not a certificate")
        };
        let leaf = o.as_any().downcast_ref::<Certificate>().unwrap();
        let (_, der) = pem_decode(&leaf.cert).unwrap();
        assert!(der.windows(9).any(|w| w == b"a.example"));
    }

    #[test]
    fn private_key_kinds() {
        assert!(gen_private_key("ecdsa").starts_with("-----BEGIN EC PRIVATE KEY-----"));
        assert!(gen_private_key("ed25519").starts_with("-----BEGIN PRIVATE KEY-----"));
        assert_eq!(gen_private_key("foo"), "Unknown type foo");
    }

    #[test]
    fn ed25519_keys_are_written_without_their_public_key_as_go_writes_them() {
        // helm's keys are 119 characters: 48 bytes of DER, the seed alone.
        let pem = gen_private_key("ed25519");
        assert_eq!(pem.len(), 119, "{pem}");
        let (label, der) = pem_decode(&pem).unwrap();
        assert_eq!(label, "PRIVATE KEY");
        assert_eq!(der.len(), 48);
        assert!(der.starts_with(&[0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03]));
        assert!(matches!(Key::from_pem(&pem), Ok(Key::Ed25519(_))));
    }
}
