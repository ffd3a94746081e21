//! Which command a plugin runs, and its arguments, as Helm prepares them.

use std::collections::BTreeMap;

use crate::metadata::PlatformCommand;

/// The operating system and architecture in Go's names, which plugin files use.
pub fn go_platform() -> (&'static str, &'static str) {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    };
    (os, arch)
}

/// The command for this platform: an exact os and arch match wins, then the first entry
/// for this os with no arch, then the first entry with neither (Helm's order). The
/// command text is split at spaces, the first word being the program.
fn choose<'a>(
    commands: &'a [PlatformCommand],
    platform: (&str, &str),
) -> Option<(Vec<&'a str>, &'a [String])> {
    let (os, arch) = platform;
    let mut any: Option<&PlatformCommand> = None;
    let mut for_os: Option<&PlatformCommand> = None;
    for c in commands {
        if c.os.eq_ignore_ascii_case(os) && c.arch.eq_ignore_ascii_case(arch) {
            return Some((c.command.split(' ').collect(), &c.args));
        }
        if (!c.os.is_empty() && !c.os.eq_ignore_ascii_case(os)) || !c.arch.is_empty() {
            continue;
        }
        if for_os.is_none() && !c.os.is_empty() {
            for_os = Some(c);
        } else if any.is_none() {
            any = Some(c);
        }
    }
    for_os
        .or(any)
        .map(|c| (c.command.split(' ').collect(), c.args.as_slice()))
}

/// The program and its arguments: the chosen command with `$VAR`/`${VAR}` expanded from
/// `env` (in the arguments only when `expand_args`), then `extra` as given.
pub fn prepare(
    commands: &[PlatformCommand],
    expand_args: bool,
    extra: &[String],
    env: &BTreeMap<String, String>,
) -> Option<(String, Vec<String>)> {
    let (parts, args) = choose(commands, go_platform())?;
    let program = parts.first().filter(|p| !p.is_empty())?;
    let lookup = |name: &str| env.get(name).cloned().unwrap_or_default();
    let program = expand(program, lookup);
    let mut argv = Vec::new();
    for part in parts[1..]
        .iter()
        .map(|s| s.to_string())
        .chain(args.iter().cloned())
    {
        argv.push(if expand_args {
            expand(&part, lookup)
        } else {
            part
        });
    }
    argv.extend(extra.iter().cloned());
    Some((program, argv))
}

/// Go's `os.Expand`: `${NAME}` and `$NAME` (letters, digits, `_`), `$` followed by one
/// of the shell's special characters or a digit as that one-character name; a `$` with
/// nothing usable after it is kept, a bad `${` is dropped.
pub fn expand(text: &str, lookup: impl Fn(&str) -> String) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'$' && i + 1 < bytes.len() {
            out.push_str(&text[start..i]);
            let (name, width) = shell_name(&text[i + 1..]);
            if name.is_none() && width > 0 {
                // A bad `${...}`: Go drops it.
            } else if name.is_none() {
                out.push('$');
            } else if let Some(name) = name {
                out.push_str(&lookup(name));
            }
            i += 1 + width;
            start = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&text[start..]);
    out
}

fn shell_name(s: &str) -> (Option<&str>, usize) {
    let bytes = s.as_bytes();
    if bytes[0] == b'{' {
        if bytes.len() > 2 && is_special(bytes[1]) && bytes[2] == b'}' {
            return (Some(&s[1..2]), 3);
        }
        for (i, &b) in bytes.iter().enumerate().skip(1) {
            if b == b'}' {
                if i == 1 {
                    return (None, 2);
                }
                return (Some(&s[1..i]), i + 1);
            }
        }
        return (None, 1);
    }
    if is_special(bytes[0]) {
        return (Some(&s[0..1]), 1);
    }
    let len = bytes
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .count();
    if len == 0 {
        (None, 0)
    } else {
        (Some(&s[..len]), len)
    }
}

fn is_special(b: u8) -> bool {
    matches!(b, b'*' | b'#' | b'$' | b'@' | b'!' | b'?' | b'-') || b.is_ascii_digit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_as_go_does() {
        let env = |n: &str| match n {
            "HOME" => "/h".to_string(),
            "1" => "one".to_string(),
            _ => String::new(),
        };
        assert_eq!(expand("$HOME/x", env), "/h/x");
        assert_eq!(expand("${HOME}x", env), "/hx");
        assert_eq!(expand("a$", env), "a$");
        assert_eq!(expand("$1z", env), "onez");
        assert_eq!(expand("$UNSET.", env), ".");
        assert_eq!(expand("a$ b", env), "a$ b");
    }

    #[test]
    fn platform_choice_prefers_an_exact_match() {
        let (os, arch) = go_platform();
        let cmds = vec![
            PlatformCommand {
                command: "generic".into(),
                ..Default::default()
            },
            PlatformCommand {
                os: os.into(),
                command: "os only".into(),
                ..Default::default()
            },
            PlatformCommand {
                os: os.into(),
                arch: arch.into(),
                command: "exact".into(),
                args: vec!["$X".into()],
            },
        ];
        let env = BTreeMap::from([("X".to_string(), "x".to_string())]);
        assert_eq!(
            prepare(&cmds, true, &["e".into()], &env).unwrap(),
            ("exact".to_string(), vec!["x".to_string(), "e".to_string()])
        );
        assert_eq!(
            prepare(&cmds[..2], false, &[], &env).unwrap(),
            ("os".to_string(), vec!["only".to_string()])
        );
        assert!(prepare(&[], true, &[], &env).is_none());
    }
}
