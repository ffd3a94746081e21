//! Sprig's `urlParse` and `urlJoin`, with Go's `net/url` parsing and escaping.

use std::rc::Rc;

use super::Registry;
use super::arg::str;
use crate::value::{Entries, Ty, Value};

pub(crate) fn register(r: &mut Registry<'_>) {
    r.pure("urlParse", &[Ty::String], |a| url_parse(str(&a[0])));
    r.pure("urlJoin", &[Ty::Map], |a| url_join(&a[0]));
}

#[derive(Default)]
struct Url {
    scheme: String,
    opaque: String,
    user: Option<(String, Option<String>)>,
    host: String,
    path: String,
    omit_host: bool,
    raw_query: String,
    force_query: bool,
    fragment: String,
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Path,
    Host,
    UserPassword,
    Fragment,
}

fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if mode == Mode::Host
        && matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
        )
    {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            Mode::Path => c == b'?',
            Mode::UserPassword => matches!(c, b'@' | b'/' | b'?' | b':'),
            Mode::Fragment => false,
            Mode::Host => true,
        },
        b'!' | b'(' | b')' | b'*' if mode == Mode::Fragment => false,
        _ => true,
    }
}

fn escape(s: &str, mode: Mode) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if should_escape(b, mode) {
            out.push_str(&format!("%{b:02X}"));
        } else {
            out.push(b as char);
        }
    }
    out
}

fn unescape(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()));
            let Some(hex) = hex else {
                let end = (i + 3).min(s.len());
                return Err(format!(
                    "invalid URL escape {}",
                    crate::print::quote(&s[i..end])
                ));
            };
            out.push(u8::from_str_radix(hex, 16).unwrap_or(0));
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn parse(raw: &str) -> Result<Url, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    let (rest, frag) = raw.split_once('#').unwrap_or((raw, ""));
    let mut u = Url::default();
    if rest == "*" {
        u.path = "*".into();
        return Ok(u);
    }
    let mut rest = rest;
    if let Some(colon) = rest.find(':') {
        let candidate = &rest[..colon];
        let valid = candidate.bytes().enumerate().all(|(i, c)| {
            c.is_ascii_alphabetic()
                || (i > 0 && (c.is_ascii_digit() || matches!(c, b'+' | b'-' | b'.')))
        });
        if colon == 0 {
            return Err("missing protocol scheme".into());
        }
        if valid {
            u.scheme = candidate.to_ascii_lowercase();
            rest = &rest[colon + 1..];
        } else if !candidate
            .bytes()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
            && candidate
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
        {
            return Err("missing protocol scheme".into());
        }
    }
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        u.force_query = true;
        rest = &rest[..rest.len() - 1];
    } else if let Some((r, q)) = rest.split_once('?') {
        u.raw_query = q.to_owned();
        rest = r;
    }
    if !rest.starts_with('/') {
        if !u.scheme.is_empty() {
            u.opaque = rest.to_owned();
            u.fragment = unescape(frag)?;
            return Ok(u);
        }
        let segment = rest.split('/').next().unwrap_or("");
        if segment.contains(':') {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    if (!u.scheme.is_empty() || !rest.starts_with("///")) && rest.starts_with("//") {
        let authority_and_path = &rest[2..];
        let (authority, path) = match authority_and_path.find('/') {
            Some(i) => (&authority_and_path[..i], &authority_and_path[i..]),
            None => (authority_and_path, ""),
        };
        match authority.rfind('@') {
            Some(i) => {
                let info = &authority[..i];
                u.host = authority[i + 1..].to_owned();
                u.user = Some(match info.split_once(':') {
                    Some((name, pass)) => (unescape(name)?, Some(unescape(pass)?)),
                    None => (unescape(info)?, None),
                });
            }
            None => u.host = authority.to_owned(),
        }
        rest = path;
    } else if !u.scheme.is_empty() && rest.starts_with('/') {
        u.omit_host = true;
    }
    u.path = unescape(rest)?;
    u.fragment = unescape(frag)?;
    Ok(u)
}

fn user_string(user: &(String, Option<String>)) -> String {
    let mut s = escape(&user.0, Mode::UserPassword);
    if let Some(p) = &user.1 {
        s.push(':');
        s.push_str(&escape(p, Mode::UserPassword));
    }
    s
}

fn hostname(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match host.rfind(':') {
        Some(i) if host[i + 1..].bytes().all(|b| b.is_ascii_digit()) => &host[..i],
        _ => host,
    }
}

fn url_parse(raw: &str) -> Result<Value, String> {
    let u = parse(raw).map_err(|e| {
        format!(
            "unable to parse url: parse {}: {e}",
            crate::print::quote(raw)
        )
    })?;
    let mut m = Entries::new();
    let mut put = |k: &str, v: String| {
        m.insert(Rc::from(k), Value::string(v));
    };
    put("scheme", u.scheme.clone());
    put("host", u.host.clone());
    put("hostname", hostname(&u.host).to_owned());
    put("path", u.path.clone());
    put("query", u.raw_query.clone());
    put("opaque", u.opaque.clone());
    put("fragment", u.fragment.clone());
    put(
        "userinfo",
        u.user.as_ref().map(user_string).unwrap_or_default(),
    );
    Ok(Value::map(m))
}

fn url_string(u: &Url) -> String {
    let mut buf = String::new();
    if !u.scheme.is_empty() {
        buf.push_str(&u.scheme);
        buf.push(':');
    }
    if !u.opaque.is_empty() {
        buf.push_str(&u.opaque);
    } else {
        if (!u.scheme.is_empty() || !u.host.is_empty() || u.user.is_some())
            && (!u.omit_host || !u.host.is_empty() || u.user.is_some())
        {
            if !u.host.is_empty() || !u.path.is_empty() || u.user.is_some() {
                buf.push_str("//");
            }
            if let Some(user) = &u.user {
                buf.push_str(&user_string(user));
                buf.push('@');
            }
            buf.push_str(&escape(&u.host, Mode::Host));
        }
        let path = if u.path == "*" {
            "*".to_owned()
        } else {
            escape(&u.path, Mode::Path)
        };
        if !path.is_empty() && !path.starts_with('/') && !u.host.is_empty() {
            buf.push('/');
        }
        if buf.is_empty() && path.split('/').next().unwrap_or("").contains(':') {
            buf.push_str("./");
        }
        buf.push_str(&path);
    }
    if u.force_query || !u.raw_query.is_empty() {
        buf.push('?');
        buf.push_str(&u.raw_query);
    }
    if !u.fragment.is_empty() {
        buf.push('#');
        buf.push_str(&escape(&u.fragment, Mode::Fragment));
    }
    buf
}

fn dict_string(d: &Value, key: &str) -> Result<String, String> {
    let Value::Map(m) = d else {
        return Ok(String::new());
    };
    match m.get(key) {
        None => Ok(String::new()),
        Some(v @ (Value::String(_) | Value::RawStr(_))) => {
            Ok(v.go_text().unwrap_or_default().into_owned())
        }
        Some(other) => Err(format!(
            "unable to parse {key} key, must be of type string, but {} found",
            crate::funcs::lists::kind_for_error(&other)?
        )),
    }
}

fn url_join(d: &Value) -> Result<Value, String> {
    let mut u = Url {
        scheme: dict_string(d, "scheme")?,
        host: dict_string(d, "host")?,
        path: dict_string(d, "path")?,
        raw_query: dict_string(d, "query")?,
        opaque: dict_string(d, "opaque")?,
        fragment: dict_string(d, "fragment")?,
        ..Url::default()
    };
    let userinfo = dict_string(d, "userinfo")?;
    if !userinfo.is_empty() {
        let temp = parse(&format!("proto://{userinfo}@host"))
            .map_err(|e| format!("unable to parse userinfo in dict: {e}"))?;
        u.user = temp.user;
    }
    Ok(Value::string(url_string(&u)))
}
