//! Sprig's path functions: `base`, `dir`, `clean`, `ext`, `isAbs` (Go's `path`) and
//! their `os*` twins (`path/filepath`, which on Linux behave the same).

use super::Registry;
use super::arg::str;
use crate::value::{Ty, Value};

pub(crate) fn register(r: &mut Registry<'_>) {
    for name in ["base", "osBase"] {
        r.pure(name, &[Ty::String], |a| Ok(Value::string(base(str(&a[0])))));
    }
    for name in ["dir", "osDir"] {
        r.pure(name, &[Ty::String], |a| Ok(Value::string(dir(str(&a[0])))));
    }
    for name in ["clean", "osClean"] {
        r.pure(name, &[Ty::String], |a| {
            Ok(Value::string(clean(str(&a[0]))))
        });
    }
    for name in ["ext", "osExt"] {
        r.pure(name, &[Ty::String], |a| Ok(Value::str(ext(str(&a[0])))));
    }
    for name in ["isAbs", "osIsAbs"] {
        r.pure(name, &[Ty::String], |a| {
            Ok(Value::Bool(str(&a[0]).starts_with('/')))
        });
    }
}

/// `path.Clean`: lexical simplification of slashes, `.` and `..`.
pub(crate) fn clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

fn base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let trimmed = p.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/".into();
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed).to_owned()
}

fn dir(p: &str) -> String {
    let cut = p.rfind('/').map_or(0, |i| i + 1);
    clean(&p[..cut])
}

fn ext(p: &str) -> &str {
    for (i, c) in p.char_indices().rev() {
        if c == '/' {
            break;
        }
        if c == '.' {
            return &p[i..];
        }
    }
    ""
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_path_semantics() {
        assert_eq!(clean("a//b/../c/."), "a/c");
        assert_eq!(clean("/../x"), "/x");
        assert_eq!(clean("../../a"), "../../a");
        assert_eq!(base("/a/b/"), "b");
        assert_eq!(base(""), ".");
        assert_eq!(dir("/a/b"), "/a");
        assert_eq!(dir("x"), ".");
        assert_eq!(ext("a/b.tar.gz"), ".gz");
        assert_eq!(ext("a.b/c"), "");
    }
}
