//! Go's `fmt.Sprintf`, for the `printf` builtin and Sprig functions that format.
//!
//! Flags, width, precision, argument indexes and Go's in-band error notation
//! (`%!d(string=x)`, `%!s(MISSING)`, `%!(EXTRA int=1)`) are reproduced; pointer and
//! complex verbs have no Helm use and are reported as bad verbs.

use chartkit_yaml::gonum;

use crate::gostr::GoBuf;
use crate::print::{quote, quote_ascii, quote_rune};
use std::rc::Rc;

use crate::value::{Object, Value};

#[derive(Default, Clone, Copy)]
struct Flags {
    plus: bool,
    minus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    plus_v: bool,
    sharp_v: bool,
    wid: Option<usize>,
    prec: Option<usize>,
}

struct Printer {
    out: GoBuf,
    f: Flags,
    /// Output longer than this stops the formatting (see [`sprintf_within`]).
    limit: usize,
}

const DIGITS_LOWER: &[u8] = b"0123456789abcdefx";
const DIGITS_UPPER: &[u8] = b"0123456789ABCDEFX";

/// `fmt.Sprintf(format, args...)`.
/// As text: bytes that are not UTF-8 read as U+FFFD (see [`crate::gostr::go_lossy`]).
pub fn sprintf(format: &str, args: &[Value]) -> String {
    let mut p = Printer {
        out: GoBuf::with_capacity(format.len() + 16),
        f: Flags::default(),
        limit: usize::MAX,
    };
    p.do_printf(format, args);
    p.out.into_output().into_text_lossy()
}

/// [`sprintf`] that gives up, returning `None`, once its output passes `limit` bytes.
/// Go bounds each width and precision (a million), not how many verbs a format has, so a
/// format made by `repeat` can ask for any amount of padding.
/// The result is a Go string: bytes that are not UTF-8 are kept.
pub(crate) fn sprintf_within(format: &str, args: &[Value], limit: usize) -> Option<Value> {
    let mut p = Printer {
        out: GoBuf::with_capacity(format.len().min(limit) + 16),
        f: Flags::default(),
        limit,
    };
    p.do_printf(format, args);
    (p.out.len() <= limit).then(|| p.out.into_value())
}

fn parse_num(s: &[u8], start: usize, end: usize) -> (Option<usize>, usize) {
    if start >= end {
        return (None, end);
    }
    let mut num: usize = 0;
    let mut newi = start;
    let mut isnum = false;
    while newi < end && s[newi].is_ascii_digit() {
        if num > 1_000_000 {
            return (None, end);
        }
        num = num * 10 + (s[newi] - b'0') as usize;
        isnum = true;
        newi += 1;
    }
    (if isnum { Some(num) } else { None }, newi)
}

/// Parses `[n]`: returns (index, width consumed, ok).
fn parse_arg_number(s: &[u8]) -> (usize, usize, bool) {
    if s.len() < 3 {
        return (0, 1, false);
    }
    for i in 1..s.len() {
        if s[i] == b']' {
            let (n, newi) = parse_num(s, 1, i);
            return match n {
                Some(n) if newi == i && n >= 1 => (n - 1, i + 1, true),
                Some(_) if newi == i => (usize::MAX, i + 1, true),
                _ => (0, i + 1, false),
            };
        }
    }
    (0, 1, false)
}

fn int_from_arg(args: &[Value], arg_num: &mut usize) -> Option<i64> {
    let mut result = None;
    if *arg_num < args.len() {
        result = match &args[*arg_num] {
            Value::Int(i) | Value::Int64(i) => Some(*i),
            Value::Uint8(u) => Some(*u as i64),
            _ => None,
        };
        *arg_num += 1;
        if result.is_some_and(|n| n.unsigned_abs() > 1_000_000) {
            result = None;
        }
    }
    result
}

impl Printer {
    fn do_printf(&mut self, format: &str, args: &[Value]) {
        let s = format.as_bytes();
        let end = s.len();
        let mut arg_num = 0usize;
        let mut after_index;
        let mut reordered = false;
        let mut good_arg_num;
        let mut i = 0;
        while i < end {
            if self.out.len() > self.limit {
                return;
            }
            good_arg_num = true;
            let lasti = i;
            while i < end && s[i] != b'%' {
                i += 1;
            }
            if i > lasti {
                self.out.push_str(&format[lasti..i]);
            }
            if i >= end {
                break;
            }
            i += 1;
            self.f = Flags::default();
            while i < end {
                match s[i] {
                    b'#' => self.f.sharp = true,
                    b'0' => self.f.zero = !self.f.minus,
                    b'+' => self.f.plus = true,
                    b'-' => {
                        self.f.minus = true;
                        self.f.zero = false;
                    }
                    b' ' => self.f.space = true,
                    _ => break,
                }
                i += 1;
            }
            // Argument index.
            let mut arg_index = |i: &mut usize, arg_num: &mut usize, good: &mut bool| -> bool {
                if *i >= end || s[*i] != b'[' {
                    return false;
                }
                reordered = true;
                let (index, wid, ok) = parse_arg_number(&s[*i..]);
                *i += wid;
                if ok && index < args.len() {
                    *arg_num = index;
                    return true;
                }
                *good = false;
                ok
            };
            after_index = arg_index(&mut i, &mut arg_num, &mut good_arg_num);
            // Width.
            if i < end && s[i] == b'*' {
                i += 1;
                match int_from_arg(args, &mut arg_num) {
                    Some(w) => {
                        if w < 0 {
                            self.f.minus = true;
                            self.f.zero = false;
                        }
                        self.f.wid = Some(w.unsigned_abs() as usize);
                    }
                    None => self.out.push_str("%!(BADWIDTH)"),
                }
                after_index = false;
            } else {
                let (w, newi) = parse_num(s, i, end);
                self.f.wid = w;
                i = newi;
                if after_index && w.is_some() {
                    good_arg_num = false;
                }
            }
            // Precision.
            if i + 1 < end && s[i] == b'.' {
                i += 1;
                if after_index {
                    good_arg_num = false;
                }
                after_index = arg_index(&mut i, &mut arg_num, &mut good_arg_num);
                if i < end && s[i] == b'*' {
                    i += 1;
                    match int_from_arg(args, &mut arg_num) {
                        Some(p) if p >= 0 => self.f.prec = Some(p as usize),
                        Some(_) => self.f.prec = None,
                        None => self.out.push_str("%!(BADPREC)"),
                    }
                    after_index = false;
                } else {
                    let (p, newi) = parse_num(s, i, end);
                    self.f.prec = Some(p.unwrap_or(0));
                    i = newi;
                }
            }
            if !after_index {
                after_index = arg_index(&mut i, &mut arg_num, &mut good_arg_num);
            }
            let _ = after_index;
            if i >= end {
                self.out.push_str("%!(NOVERB)");
                break;
            }
            let verb = format[i..].chars().next().unwrap_or('?');
            i += verb.len_utf8();
            if verb == '%' {
                self.out.push('%');
            } else if !good_arg_num {
                self.out.push_str(&format!("%!{verb}(BADINDEX)"));
            } else if arg_num >= args.len() {
                self.out.push_str(&format!("%!{verb}(MISSING)"));
            } else {
                if verb == 'v' {
                    self.f.sharp_v = self.f.sharp;
                    self.f.sharp = false;
                    self.f.plus_v = self.f.plus;
                    self.f.plus = false;
                }
                self.print_arg(&args[arg_num], verb);
                arg_num += 1;
            }
        }
        if !reordered && arg_num < args.len() {
            self.f = Flags::default();
            self.out.push_str("%!(EXTRA ");
            for (n, arg) in args[arg_num..].iter().enumerate() {
                if n > 0 {
                    self.out.push_str(", ");
                }
                if arg.is_nil() {
                    self.out.push_str("<nil>");
                } else {
                    self.out.push_str(&arg.type_name());
                    self.out.push('=');
                    self.print_arg(arg, 'v');
                }
            }
            self.out.push(')');
        }
    }

    fn pad(&mut self, s: &str) {
        let width = self.f.wid.unwrap_or(0);
        let n = s.chars().count();
        if width <= n {
            self.out.push_str(s);
            return;
        }
        let fill = if self.f.zero && !self.f.minus {
            '0'
        } else {
            ' '
        };
        if self.f.minus {
            self.out.push_str(s);
            self.out.push_str(&" ".repeat(width - n));
        } else {
            self.out.push_str(&fill.to_string().repeat(width - n));
            self.out.push_str(s);
        }
    }

    fn bad_verb(&mut self, verb: char, arg: &Value) {
        self.out.push_str("%!");
        self.out.push(verb);
        self.out.push('(');
        if arg.is_nil() {
            self.out.push_str("<nil>");
        } else {
            self.out.push_str(&arg.type_name());
            self.out.push('=');
            let saved = self.f;
            self.f.sharp_v = false;
            self.f.plus_v = false;
            self.print_arg(arg, 'v');
            self.f = saved;
        }
        self.out.push(')');
    }

    fn print_arg(&mut self, arg: &Value, verb: char) {
        if arg.is_nil() {
            match verb {
                'T' | 'v' => self.pad("<nil>"),
                _ => self.bad_verb(verb, arg),
            }
            return;
        }
        if verb == 'T' {
            let t = arg.type_name();
            let saved = self.f;
            self.f.zero = false;
            self.fmt_s(&t);
            self.f = saved;
            return;
        }
        match arg {
            Value::Bool(b) => match verb {
                't' | 'v' => self.pad(if *b { "true" } else { "false" }),
                _ => self.bad_verb(verb, arg),
            },
            Value::Int(i) | Value::Int64(i) => self.fmt_integer(*i as i128, true, verb, arg),
            Value::Uint8(u) => self.fmt_integer(*u as i128, false, verb, arg),
            Value::Float(x) => self.fmt_float_verb(*x, verb, arg),
            Value::String(s) => self.fmt_string(s, verb, arg),
            Value::RawStr(b) => self.fmt_raw_string(b, verb, arg),
            Value::Bytes(b) => self.fmt_bytes(b, verb, arg),
            Value::List(_) | Value::Map(_) => self.print_value(arg, verb, 0),
            Value::Object(o) => self.print_object(o, arg, verb, 0),
            Value::Nil => {}
        }
    }

    /// A host object, as `fmt` prints its Go value: through its `String` method for the
    /// string verbs, as a struct, or as the slice, map or number it is made of.
    fn print_object(&mut self, o: &Rc<dyn Object>, arg: &Value, verb: char, depth: usize) {
        if let Some((re, im)) = crate::complex::parts(o) {
            return self.fmt_complex(re, im, verb, arg);
        }
        if self.f.sharp_v
            && let Some(s) = o.go_string()
        {
            self.out.push_str(&s);
            return;
        }
        if o.stringer() && matches!(verb, 'v' | 's' | 'q' | 'x' | 'X') && !self.f.sharp_v {
            let s = o.format();
            self.fmt_string(&s, verb, arg);
            return;
        }
        if let Some(fields) = o.struct_fields() {
            let type_name = o.type_name();
            if o.kind() == "ptr" {
                self.out.push('&');
            }
            if self.f.sharp_v {
                self.out.push_str(type_name.trim_start_matches('*'));
            }
            self.out.push('{');
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(if self.f.sharp_v { ", " } else { " " });
                }
                if self.f.plus_v || self.f.sharp_v {
                    self.out.push_str(field.name);
                    self.out.push(':');
                }
                self.print_value(&field.value, verb, depth + 1);
            }
            self.out.push('}');
            return;
        }
        match o.underlying() {
            Some(u @ (Value::List(_) | Value::Map(_))) if self.f.sharp_v => {
                self.print_container(&u, &o.type_name(), verb, depth)
            }
            Some(u) if depth == 0 => self.print_arg(&u, verb),
            Some(u) => self.print_value(&u, verb, depth),
            None if matches!(verb, 'v' | 's') => {
                let s = o.format();
                self.pad(&s);
            }
            None => self.bad_verb(verb, arg),
        }
    }

    /// Printing inside containers (Go's reflection path).
    fn print_value(&mut self, v: &Value, verb: char, depth: usize) {
        match v {
            Value::List(_) | Value::Map(_) => self.print_container(v, &v.type_name(), verb, depth),
            Value::Object(o) if depth > 0 => self.print_object(o, v, verb, depth),
            other => self.print_leaf(other, verb, depth),
        }
    }

    /// A slice or map, under `type_name` in Go syntax.
    fn print_container(&mut self, v: &Value, type_name: &str, verb: char, depth: usize) {
        match v {
            Value::List(l) if l.is_nil() && self.f.sharp_v => {
                self.out.push_str(type_name);
                self.out.push_str("(nil)");
            }
            Value::List(l) => {
                if self.f.sharp_v {
                    self.out.push_str(type_name);
                    self.out.push('{');
                    for (i, item) in l.iter().enumerate() {
                        if i > 0 {
                            self.out.push_str(", ");
                        }
                        chartkit_yaml::with_stack(|| self.print_value(&item, verb, depth + 1));
                    }
                    self.out.push('}');
                } else {
                    self.out.push('[');
                    for (i, item) in l.iter().enumerate() {
                        if i > 0 {
                            self.out.push(' ');
                        }
                        chartkit_yaml::with_stack(|| self.print_value(&item, verb, depth + 1));
                    }
                    self.out.push(']');
                }
            }
            Value::Map(m) => {
                if self.f.sharp_v {
                    self.out.push_str(type_name);
                    if m.is_nil() {
                        self.out.push_str("(nil)");
                        return;
                    }
                    self.out.push('{');
                } else {
                    self.out.push_str("map[");
                }
                for (i, (k, item)) in m.borrow().iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(if self.f.sharp_v { ", " } else { " " });
                    }
                    self.print_value(&Value::String(k.clone()), verb, depth + 1);
                    self.out.push(':');
                    chartkit_yaml::with_stack(|| self.print_value(item, verb, depth + 1));
                }
                self.out.push(if self.f.sharp_v { '}' } else { ']' });
            }
            other => self.print_leaf(other, verb, depth),
        }
    }

    /// Anything but a slice or map, at any depth.
    fn print_leaf(&mut self, v: &Value, verb: char, depth: usize) {
        match v {
            Value::Nil if depth > 0 => {
                self.out.push_str(if self.f.sharp_v {
                    "interface {}(nil)"
                } else {
                    "<nil>"
                });
            }
            other => self.print_arg(other, verb),
        }
    }

    fn fmt_string(&mut self, s: &str, verb: char, arg: &Value) {
        match verb {
            'v' => {
                if self.f.sharp_v {
                    self.fmt_q(s);
                } else {
                    self.fmt_s(s);
                }
            }
            's' => self.fmt_s(s),
            'x' => self.fmt_sx(s.as_bytes(), DIGITS_LOWER),
            'X' => self.fmt_sx(s.as_bytes(), DIGITS_UPPER),
            'q' => self.fmt_q(s),
            _ => self.bad_verb(verb, arg),
        }
    }

    /// A Go string that is not UTF-8: `%s` and `%v` write its bytes, `%q` escapes the
    /// ones that are not UTF-8, `%x` writes them in hex. Each of those bytes counts as
    /// one character for widths and precisions, as Go counts them.
    fn fmt_raw_string(&mut self, b: &[u8], verb: char, arg: &Value) {
        let kept = match self.f.prec {
            Some(p) if matches!(verb, 'v' | 's' | 'q') => go_prefix(b, p),
            _ => b,
        };
        match verb {
            'v' | 's' | 'q' if self.f.sharp_v || verb == 'q' => {
                let quoted = crate::print::quote_bytes_with(kept, self.f.plus);
                self.pad(&quoted);
            }
            'v' | 's' => {
                let width = self.f.wid.unwrap_or(0);
                let n = crate::gostr::go_lossy(kept).chars().count();
                let fill = if self.f.zero && !self.f.minus {
                    "0"
                } else {
                    " "
                };
                if !self.f.minus && width > n {
                    self.out.push_str(&fill.repeat(width - n));
                }
                self.out.push_bytes(kept);
                if self.f.minus && width > n {
                    self.out.push_str(&" ".repeat(width - n));
                }
            }
            'x' => self.fmt_sx(b, DIGITS_LOWER),
            'X' => self.fmt_sx(b, DIGITS_UPPER),
            _ => self.bad_verb(verb, arg),
        }
    }

    fn truncate<'a>(&self, s: &'a str) -> &'a str {
        match self.f.prec {
            Some(p) => match s.char_indices().nth(p) {
                Some((i, _)) => &s[..i],
                None => s,
            },
            None => s,
        }
    }

    fn fmt_s(&mut self, s: &str) {
        let s = self.truncate(s).to_owned();
        self.pad(&s);
    }

    fn fmt_q(&mut self, s: &str) {
        let s = self.truncate(s);
        let quoted = if self.f.sharp
            && !s.contains('`')
            && s.chars().all(|c| c == '\t' || !c.is_control())
        {
            format!("`{s}`")
        } else if self.f.plus {
            quote_ascii(s)
        } else {
            quote(s)
        };
        self.pad(&quoted);
    }

    fn fmt_sx(&mut self, b: &[u8], digits: &[u8]) {
        let len = match self.f.prec {
            Some(p) if p < b.len() => p,
            _ => b.len(),
        };
        let mut out = String::new();
        for (i, byte) in b[..len].iter().enumerate() {
            if self.f.space && i > 0 {
                out.push(' ');
            }
            if self.f.sharp && (self.f.space || i == 0) {
                out.push('0');
                out.push(digits[16] as char);
            }
            out.push(digits[(byte >> 4) as usize] as char);
            out.push(digits[(byte & 0xf) as usize] as char);
        }
        self.pad(&out);
    }

    fn fmt_bytes(&mut self, b: &[u8], verb: char, arg: &Value) {
        match verb {
            'v' | 'd' => {
                if self.f.sharp_v {
                    let mut s = String::from("[]byte{");
                    for (i, byte) in b.iter().enumerate() {
                        if i > 0 {
                            s.push_str(", ");
                        }
                        s.push_str(&format!("0x{byte:x}"));
                    }
                    s.push('}');
                    self.out.push_str(&s);
                } else {
                    self.out.push('[');
                    for (i, byte) in b.iter().enumerate() {
                        if i > 0 {
                            self.out.push(' ');
                        }
                        self.fmt_integer(*byte as i128, false, verb, arg);
                    }
                    self.out.push(']');
                }
            }
            's' => match std::str::from_utf8(b) {
                Ok(text) => self.fmt_s(text),
                Err(_) => self.fmt_raw_string(b, 's', arg),
            },
            'x' => self.fmt_sx(b, DIGITS_LOWER),
            'X' => self.fmt_sx(b, DIGITS_UPPER),
            'q' => match std::str::from_utf8(b) {
                Ok(text) => self.fmt_q(text),
                Err(_) => self.fmt_raw_string(b, 'q', arg),
            },
            _ => {
                self.out.push('[');
                for (i, byte) in b.iter().enumerate() {
                    if i > 0 {
                        self.out.push(' ');
                    }
                    self.fmt_integer(*byte as i128, false, verb, &Value::Uint8(*byte));
                }
                self.out.push(']');
            }
        }
    }

    fn fmt_integer(&mut self, v: i128, signed: bool, verb: char, arg: &Value) {
        match verb {
            'v' => {
                if self.f.sharp_v && !signed {
                    self.fmt_int_base(v, 16, true, DIGITS_LOWER);
                } else {
                    self.fmt_int_base(v, 10, false, DIGITS_LOWER);
                }
            }
            'd' => self.fmt_int_base(v, 10, false, DIGITS_LOWER),
            'b' => self.fmt_int_base(v, 2, false, DIGITS_LOWER),
            'o' | 'O' => {
                if verb == 'O' {
                    self.f.sharp = false;
                }
                self.fmt_int_base_prefixed(v, 8, verb == 'O', DIGITS_LOWER)
            }
            'x' => self.fmt_int_base(v, 16, false, DIGITS_LOWER),
            'X' => self.fmt_int_base(v, 16, false, DIGITS_UPPER),
            'c' => {
                let c = u32::try_from(v)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{FFFD}');
                self.pad(&c.to_string());
            }
            'q' => {
                let c = u32::try_from(v)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{FFFD}');
                self.pad(&quote_rune(c));
            }
            'U' => {
                let mut s = format!("U+{:04X}", v);
                if self.f.sharp
                    && let Some(c) = u32::try_from(v).ok().and_then(char::from_u32)
                    && crate::print::is_print(c)
                {
                    s.push_str(&format!(" '{c}'"));
                }
                self.pad(&s);
            }
            _ => self.bad_verb(verb, arg),
        }
    }

    fn fmt_int_base_prefixed(&mut self, v: i128, base: u32, force_0o: bool, digits: &[u8]) {
        if force_0o {
            // %O always writes the 0o prefix.
            let neg = v < 0;
            let body = to_base(v.unsigned_abs(), base, digits);
            let mut s = String::new();
            if neg {
                s.push('-');
            } else if self.f.plus {
                s.push('+');
            } else if self.f.space {
                s.push(' ');
            }
            s.push_str("0o");
            s.push_str(&body);
            self.pad(&s);
        } else {
            self.fmt_int_base(v, base, false, digits);
        }
    }

    fn fmt_int_base(&mut self, v: i128, base: u32, sharp_v_hex: bool, digits: &[u8]) {
        let neg = v < 0;
        let mut body = to_base(v.unsigned_abs(), base, digits);
        // Precision is the minimum number of digits; zero padding to the width acts as one.
        let mut prec = self.f.prec;
        if prec.is_none() && self.f.zero && !self.f.minus && self.f.wid.is_some() {
            let mut p = self.f.wid.unwrap_or(0);
            if neg || self.f.plus || self.f.space {
                p = p.saturating_sub(1);
            }
            prec = Some(p);
        }
        if let Some(p) = prec {
            if p == 0 && v == 0 {
                body.clear();
            }
            while body.len() < p {
                body.insert(0, '0');
            }
        }
        let mut s = String::new();
        if neg {
            s.push('-');
        } else if self.f.plus {
            s.push('+');
        } else if self.f.space {
            s.push(' ');
        }
        if self.f.sharp || sharp_v_hex {
            match base {
                2 => s.push_str("0b"),
                8 if !body.starts_with('0') => s.push('0'),
                16 => {
                    s.push('0');
                    s.push(digits[16] as char);
                }
                _ => {}
            }
        }
        s.push_str(&body);
        let saved = self.f.zero;
        self.f.zero = false;
        self.pad(&s);
        self.f.zero = saved;
    }

    fn fmt_float_verb(&mut self, x: f64, verb: char, arg: &Value) {
        match verb {
            'v' => self.fmt_float(x, 'g', None),
            'b' | 'g' | 'G' | 'x' | 'X' => self.fmt_float(x, verb, None),
            'f' | 'F' | 'e' | 'E' => self.fmt_float(x, verb, Some(6)),
            _ => self.bad_verb(verb, arg),
        }
    }

    /// Go's `fmtComplex`: both parts with the float verb (and its width and precision),
    /// the imaginary part always signed.
    fn fmt_complex(&mut self, re: f64, im: f64, verb: char, arg: &Value) {
        if !matches!(
            verb,
            'v' | 'b' | 'g' | 'G' | 'x' | 'X' | 'f' | 'F' | 'e' | 'E'
        ) {
            return self.bad_verb(verb, arg);
        }
        let plus = self.f.plus;
        self.out.push('(');
        self.fmt_float_verb(re, verb, arg);
        self.f.plus = true;
        self.fmt_float_verb(im, verb, arg);
        self.out.push_str("i)");
        self.f.plus = plus;
    }

    fn fmt_float(&mut self, x: f64, verb: char, default_prec: Option<usize>) {
        if x.is_nan() || x.is_infinite() {
            let body = if x.is_nan() { "NaN" } else { "Inf" };
            let sign = if x < 0.0 {
                "-"
            } else if self.f.plus {
                "+"
            } else if self.f.space {
                " "
            } else if x.is_nan() {
                ""
            } else {
                "+"
            };
            let saved = self.f.zero;
            self.f.zero = false;
            self.pad(&format!("{sign}{body}"));
            self.f.zero = saved;
            return;
        }
        let prec = self.f.prec.or(default_prec);
        let num = format_float(x, verb, prec);
        let (sign, body) = match num.strip_prefix('-') {
            Some(rest) => ("-", rest.to_owned()),
            None if self.f.plus => ("+", num.clone()),
            None if self.f.space => (" ", num.clone()),
            None => ("", num.clone()),
        };
        let full = format!("{sign}{body}");
        if self.f.zero && !self.f.minus && !sign.is_empty() {
            let width = self.f.wid.unwrap_or(0);
            if width > full.len() {
                self.out.push_str(sign);
                self.out.push_str(&"0".repeat(width - full.len()));
                self.out.push_str(&body);
                return;
            }
        }
        self.pad(&full);
    }
}

/// The first `n` characters of a Go string, each byte that is not UTF-8 counting as one.
fn go_prefix(b: &[u8], n: usize) -> &[u8] {
    let mut end = 0;
    let mut count = 0;
    for chunk in b.utf8_chunks() {
        for c in chunk.valid().chars() {
            if count == n {
                return &b[..end];
            }
            end += c.len_utf8();
            count += 1;
        }
        for _ in chunk.invalid() {
            if count == n {
                return &b[..end];
            }
            end += 1;
            count += 1;
        }
    }
    b
}

fn to_base(mut v: u128, base: u32, digits: &[u8]) -> String {
    if v == 0 {
        return "0".to_owned();
    }
    let mut buf = Vec::new();
    while v > 0 {
        buf.push(digits[(v % base as u128) as usize]);
        v /= base as u128;
    }
    buf.reverse();
    String::from_utf8(buf).unwrap_or_default()
}

/// Go's exponent notation: at least two exponent digits, explicit sign.
fn go_exponent(rust: &str, upper: bool) -> String {
    let (mantissa, exp) = rust.split_once('e').unwrap_or((rust, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let e = if upper { 'E' } else { 'e' };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}{e}{sign}{:02}", exp.unsigned_abs())
}

/// `strconv.FormatFloat(x, verb, prec, 64)`.
pub fn format_float(x: f64, verb: char, prec: Option<usize>) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    match verb {
        'f' | 'F' => match prec {
            Some(p) => format!("{x:.p$}"),
            // Shortest digits in positional form, which Rust's Display also gives.
            None => format!("{x}"),
        },
        'e' | 'E' => {
            let s = match prec {
                Some(p) => format!("{x:.p$e}"),
                None => format!("{x:e}"),
            };
            go_exponent(&s, verb == 'E')
        }
        'g' | 'G' => {
            let s = match prec {
                None => gonum::format_g(x, false),
                Some(p) => format_g_prec(x, p.max(1)),
            };
            if verb == 'G' { s.to_uppercase() } else { s }
        }
        'b' => format_binary_exponent(x),
        'x' | 'X' => format_hex_float(x, prec, verb == 'X'),
        _ => gonum::format_g(x, false),
    }
}

/// A finite float's sign, its mantissa with the implicit bit, and its unbiased exponent,
/// as Go's `genericFtoa` takes them apart.
fn float_parts(x: f64) -> (bool, u64, i32) {
    let bits = x.to_bits();
    let neg = bits >> 63 != 0;
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let mut mant = bits & ((1 << 52) - 1);
    let exp = if biased == 0 {
        // Subnormal: no implicit bit, and the exponent of the smallest normal.
        1 - 1023
    } else {
        mant |= 1 << 52;
        biased - 1023
    };
    (neg, mant, exp)
}

/// `strconv.FormatFloat(x, 'b', -1, 64)`: the integer mantissa and a binary exponent
/// (`4503599627370496p-51` for 2).
fn format_binary_exponent(x: f64) -> String {
    let (neg, mant, exp) = float_parts(x);
    let exp = exp - 52;
    format!(
        "{}{mant}p{}{exp}",
        if neg { "-" } else { "" },
        if exp >= 0 { "+" } else { "" }
    )
}

/// `strconv.FormatFloat(x, 'x', prec, 64)`: `0x1.cp+01`, the mantissa in hexadecimal
/// with a leading 1 (0 only for zero), shortest or rounded to `prec` hex digits (ties to
/// even), and at least two exponent digits.
fn format_hex_float(x: f64, prec: Option<usize>, upper: bool) -> String {
    let (neg, mut mant, mut exp) = float_parts(x);
    if mant == 0 {
        exp = 0;
    }
    // The leading 1, if any, at bit 60, leaving 15 hex digits of fraction below it.
    mant <<= 60 - 52;
    while mant != 0 && mant & (1 << 60) == 0 {
        mant <<= 1;
        exp -= 1;
    }
    if let Some(p) = prec.filter(|&p| p < 15) {
        let shift = (p * 4) as u32;
        let extra = (mant << shift) & ((1 << 60) - 1);
        mant >>= 60 - shift;
        if extra | (mant & 1) > 1 << 59 {
            mant += 1;
        }
        mant <<= 60 - shift;
        if mant & (1 << 61) != 0 {
            mant >>= 1;
            exp += 1;
        }
    }
    let digits: &[u8] = if upper { DIGITS_UPPER } else { DIGITS_LOWER };
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    out.push('0');
    out.push(if upper { 'X' } else { 'x' });
    out.push(if (mant >> 60) & 1 == 1 { '1' } else { '0' });
    mant <<= 4;
    let fraction_digits = match prec {
        None if mant != 0 => None,
        None => Some(0),
        Some(p) => Some(p),
    };
    match fraction_digits {
        None => {
            out.push('.');
            while mant != 0 {
                out.push(digits[((mant >> 60) & 15) as usize] as char);
                mant <<= 4;
            }
        }
        Some(0) => {}
        Some(p) => {
            out.push('.');
            for _ in 0..p {
                out.push(digits[((mant >> 60) & 15) as usize] as char);
                mant <<= 4;
            }
        }
    }
    out.push(if upper { 'P' } else { 'p' });
    out.push(if exp < 0 { '-' } else { '+' });
    out.push_str(&format!("{:02}", exp.unsigned_abs()));
    out
}

/// `%.Ng`: N significant digits, exponent form when the exponent is < -4 or >= N.
fn format_g_prec(x: f64, p: usize) -> String {
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let sci = format!("{:.*e}", p - 1, x);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let nd = digits.len() as i32;
    let dp = exp + 1;
    let mut eprec = p as i32;
    if eprec > nd && nd >= dp {
        eprec = nd;
    }
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if exp < -4 || exp >= eprec {
        out.push_str(&digits[..1]);
        if nd > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.unsigned_abs()));
        return out;
    }
    if dp <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-dp) as usize));
        out.push_str(digits);
    } else if dp >= nd {
        out.push_str(digits);
        out.extend(std::iter::repeat_n('0', (dp - nd) as usize));
    } else {
        out.push_str(&digits[..dp as usize]);
        out.push('.');
        out.push_str(&digits[dp as usize..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(format: &str, args: &[Value]) -> String {
        sprintf(format, args)
    }

    #[test]
    fn verbs() {
        assert_eq!(
            p(
                "%s-%d-%v",
                &[Value::str("a"), Value::Int(3), Value::Float(1.5)]
            ),
            "a-3-1.5"
        );
        assert_eq!(
            p(
                "%5.2f|%-5s|%05d|%+d",
                &[
                    Value::Float(3.14659),
                    Value::str("ab"),
                    Value::Int(42),
                    Value::Int(5)
                ]
            ),
            " 3.15|ab   |00042|+5"
        );
        assert_eq!(
            p(
                "%x %X %o %b %c",
                &[
                    Value::Int(255),
                    Value::str("hi"),
                    Value::Int(8),
                    Value::Int(5),
                    Value::Int(65)
                ]
            ),
            "ff 6869 10 101 A"
        );
        assert_eq!(
            p(
                "%q %e %g",
                &[
                    Value::str("a\"b"),
                    Value::Float(1234.5678),
                    Value::Float(1e21)
                ]
            ),
            "\"a\\\"b\" 1.234568e+03 1e+21"
        );
        assert_eq!(
            p(
                "%t %T %T",
                &[Value::Bool(true), Value::Float(1.0), Value::list(vec![])]
            ),
            "true float64 []interface {}"
        );
    }

    #[test]
    fn errors_in_band() {
        assert_eq!(p("%d", &[Value::str("x")]), "%!d(string=x)");
        assert_eq!(p("%s %s", &[Value::str("x")]), "x %!s(MISSING)");
        assert_eq!(
            p("%s", &[Value::str("x"), Value::Int(1)]),
            "x%!(EXTRA int=1)"
        );
        assert_eq!(p("%s", &[Value::Nil]), "%!s(<nil>)");
        assert_eq!(p("%v", &[Value::Nil]), "<nil>");
        assert_eq!(p("%z", &[Value::Int(1)]), "%!z(int=1)");
        assert_eq!(p("100%%", &[]), "100%");
        assert_eq!(p("%", &[]), "%!(NOVERB)");
    }

    #[test]
    fn containers_apply_the_verb_to_elements() {
        let l = Value::list(vec![Value::str("a"), Value::Int(1), Value::Nil]);
        assert_eq!(p("%s", std::slice::from_ref(&l)), "[a %!s(int=1) <nil>]");
        assert_eq!(p("%v", &[l]), "[a 1 <nil>]");
    }

    #[test]
    fn floats_in_hexadecimal_and_binary_exponent_form() {
        let f = |format: &str, x: f64| sprintf(format, &[Value::Float(x)]);
        assert_eq!(f("%x", 3.5), "0x1.cp+01");
        assert_eq!(f("%X", 1.0), "0X1P+00");
        assert_eq!(f("%x", 0.0), "0x0p+00");
        assert_eq!(f("%x", -1.5), "-0x1.8p+00");
        assert_eq!(f("%x", 1e300), "0x1.7e43c8800759cp+996");
        assert_eq!(f("%.1x", 1.96875), "0x1.0p+01");
        assert_eq!(f("%.3x", 1.0), "0x1.000p+00");
        assert_eq!(f("%b", 2.0), "4503599627370496p-51");
        assert_eq!(f("%b", -0.5), "-4503599627370496p-53");
        assert_eq!(f("%b", 0.0), "0p-1074");
        assert_eq!(f("%+x", 1.0), "+0x1p+00");
        assert_eq!(f("%10x", 1.0), "   0x1p+00");
    }

    #[test]
    fn g_precision() {
        assert_eq!(format_g_prec(1234567.0, 3), "1.23e+06");
        assert_eq!(format_g_prec(100.0, 5), "100");
        assert_eq!(format_g_prec(0.0001, 2), "0.0001");
        assert_eq!(format_g_prec(0.5, 1), "0.5");
    }
}
