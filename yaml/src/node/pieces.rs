//! [`parse_node_in_pieces`]: a streamed map cut at its keys and read on several threads.
//!
//! The scanner is the part of a streamed parse that cannot be shared out: one thread reads
//! the text while another builds what it reads, and on a large index the reading takes
//! half as long again as the building. When the streamed map is written as Helm and
//! chartkit write an index (block style, each key on a line of its own, every line of
//! the map indented at least as far as its keys), its text is cut at those key lines and
//! each piece is parsed as a document of its own, on as many threads as there are cores
//! (two to four); the pairs then go out in document order.
//!
//! Why a piece reads as it does in the whole document: a piece starts at a line holding
//! only a key at the map's indentation and holds only lines indented at least that far
//! (or blank). In the whole document the parser is, at such a line, between two pairs of
//! the map, with nothing open but the root map around it; in the piece it is at the start
//! of a map at the same indentation. Nothing in the piece is less indented than its keys,
//! so the root map around it never comes into play, and whatever the piece leaves open at
//! its end (a quoted text, a flow collection) is an error in the piece, which makes the
//! caller read the text in one piece. The text around the map (before its first key and
//! after its last line) is parsed as one document, in which the map's key must come out
//! as a key of the root map, at the line where the text was cut, with no value.
//!
//! Positions (lines, character indexes) are those of the whole text, except for an empty
//! value that ends a piece: the parser places an empty value at what it reads next, here
//! the piece's end rather than the next key. (Positions only ever name where an error is;
//! a caller reads the text in one piece again when anything fails.)

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use saphyr_parser::{Marker, Parser, ScanError, Span};

use super::{Builder, Node, NodeKind, Unstreamable, scan_error, stream_event};
use crate::goscan;

/// [`super::parse_node_streaming`] for a map written in block style with each key on a
/// line of its own (see the module documentation): its text is cut at key lines into
/// pieces of about `piece_size` bytes, parsed on several threads at once. `decode` runs on
/// the thread that parsed a pair; `commit` gets what it returns in document order, and
/// returns false to stop. What `commit` received is void when this fails.
///
/// Fails with [`Unstreamable::NotInPieces`] when the map is not written so, or is in one
/// piece anyway. Any failure means "read it in one piece": a piece can fail where the
/// whole text does not (a flow collection that goes on at the root's indentation is
/// cut short), never the other way round, and what succeeds here is what
/// [`super::parse_node_streaming`] gives.
pub fn parse_node_in_pieces<R: Send>(
    text: &str,
    key: &str,
    piece_size: usize,
    decode: &(dyn Fn(Node, Node) -> Option<R> + Sync),
    commit: &mut (dyn FnMut(R) -> bool + Send),
) -> Result<Node, Unstreamable> {
    let trimmed = text.strip_prefix('\u{feff}').unwrap_or(text);
    let prepared = goscan::prepare(trimmed, false).map_err(Unstreamable::Syntax)?;
    if let Some(error) = prepared.deferred {
        return Err(Unstreamable::Syntax(error));
    }
    let text: &str = &prepared.text;
    let cut = cut(text, key, piece_size).ok_or(Unstreamable::NotInPieces)?;
    let unterminated_end = (!text.ends_with(['\n', '\r'])).then(|| text.chars().count());
    let root = parse_around(text, key, &cut, unterminated_end)?;

    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, 4)
        .min(cut.pieces.len());
    let next_piece = AtomicUsize::new(0);
    let order = Mutex::new(Order {
        done: BTreeMap::new(),
        next: 0,
        failed: None,
        commit,
    });
    let turn = Condvar::new();
    let work = || {
        loop {
            let i = next_piece.fetch_add(1, Ordering::Relaxed);
            let Some(piece) = cut.pieces.get(i) else {
                return;
            };
            {
                // Pieces parsed ahead of the one next in order wait in memory; a thread
                // stays at most a few pieces ahead.
                let mut order = order.lock().unwrap_or_else(|e| e.into_inner());
                while order.failed.is_none() && i >= order.next + PIECES_AHEAD {
                    order = turn.wait(order).unwrap_or_else(|e| e.into_inner());
                }
                if order.failed.is_some() {
                    return;
                }
            }
            let parsed = parse_piece(text, piece, unterminated_end, decode);
            let mut order = order.lock().unwrap_or_else(|e| e.into_inner());
            match parsed {
                Ok(results) => {
                    order.done.insert(i, results);
                    order.commit_ready();
                }
                Err(error) => {
                    order.failed.get_or_insert(error);
                }
            }
            let failed = order.failed.is_some();
            drop(order);
            turn.notify_all();
            if failed {
                return;
            }
        }
    };
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..workers).map(|_| scope.spawn(work)).collect();
        work();
        for helper in helpers {
            helper
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        }
    });
    let order = order.into_inner().unwrap_or_else(|e| e.into_inner());
    match order.failed {
        Some(error) => Err(error),
        None if order.next == cut.pieces.len() => Ok(root),
        None => Err(Unstreamable::Unusual("a piece was not parsed")),
    }
}

/// How many pieces a thread may parse ahead of the next one to hand out.
const PIECES_AHEAD: usize = 4;

/// The pieces parsed, waiting to be handed out in order.
struct Order<'a, R> {
    done: BTreeMap<usize, Vec<R>>,
    /// The piece to hand out next.
    next: usize,
    failed: Option<Unstreamable>,
    commit: &'a mut (dyn FnMut(R) -> bool + Send),
}

impl<R> Order<'_, R> {
    /// Hands out the pieces that are next in order.
    fn commit_ready(&mut self) {
        while self.failed.is_none() {
            let Some(results) = self.done.remove(&self.next) else {
                return;
            };
            for result in results {
                if !(self.commit)(result) {
                    self.failed = Some(Unstreamable::Stopped);
                    return;
                }
            }
            self.next += 1;
        }
    }
}

/// Where the streamed map's text was cut.
#[derive(Debug)]
struct Cut {
    /// The line (1-based) holding the map's key.
    key_line: usize,
    /// The map's text: from its first key's line to the end of its last line.
    region: Range<usize>,
    /// The lines and characters of the region.
    region_lines: usize,
    region_chars: usize,
    /// The keys' indentation.
    indent: usize,
    pieces: Vec<Piece>,
}

#[derive(Debug)]
struct Piece {
    range: Range<usize>,
    /// Lines and characters of the text before the piece.
    lines_before: usize,
    chars_before: usize,
}

/// Cuts the map under `key` into pieces, or says it cannot (or that there would be only
/// one).
fn cut(text: &str, key: &str, piece_size: usize) -> Option<Cut> {
    // The cut goes by lines as `\n` ends them; a text with other line breaks is read in
    // one piece.
    if has_other_line_breaks(text.as_bytes()) {
        return None;
    }
    let mut lines = Lines {
        text,
        at: 0,
        line: 1,
    };
    // The key, alone on a line at the root's indentation.
    let key_line = loop {
        let (line, number) = lines.next()?;
        let rest = line.strip_prefix(key).and_then(|r| r.strip_prefix(':'));
        if rest.is_some_and(is_blank) {
            break number;
        }
    };
    // Blank lines before the first key stay with the text around the map.
    let (mut start, mut first) = (lines.at, lines.line);
    let indent = loop {
        let (line, _) = lines.next()?;
        if is_blank(line) {
            (start, first) = (lines.at, lines.line);
            continue;
        }
        let indent = indentation(line);
        if indent == 0 || !is_key_line(line, indent) {
            return None;
        }
        break indent;
    };
    let mut pieces = vec![start];
    let mut end = text.len();
    let mut end_line = None;
    loop {
        let at = lines.at;
        let Some((line, number)) = lines.next() else {
            break;
        };
        if is_blank(line) {
            continue;
        }
        match indentation(line) {
            0 => {
                // A comment at the root's indentation may still be inside the map.
                if line.starts_with(['#', '\t']) {
                    return None;
                }
                end = at;
                end_line = Some(number);
                break;
            }
            n if n < indent => return None,
            n if n == indent
                && is_key_line(line, indent)
                && at - pieces.last().copied().unwrap_or(start) >= piece_size =>
            {
                pieces.push(at);
            }
            _ => {}
        }
    }
    if pieces.len() < 2 {
        return None;
    }
    let region_lines = end_line.unwrap_or(lines.line) - first;
    let mut chars_before = text[..start].chars().count();
    let mut lines_before = first - 1;
    let mut cut_pieces = Vec::with_capacity(pieces.len());
    for (i, &from) in pieces.iter().enumerate() {
        let to = pieces.get(i + 1).copied().unwrap_or(end);
        let piece = &text[from..to];
        cut_pieces.push(Piece {
            range: from..to,
            lines_before,
            chars_before,
        });
        lines_before += piece.bytes().filter(|&b| b == b'\n').count();
        chars_before += piece.chars().count();
    }
    let region_chars = chars_before - cut_pieces[0].chars_before;
    Some(Cut {
        key_line,
        region: start..end,
        region_lines,
        region_chars,
        indent,
        pieces: cut_pieces,
    })
}

/// Whether YAML sees a line break other than `\n` (or `\r\n`) in `bytes`: a lone `\r`,
/// or NEL, LS or PS, which some YAML readers take for one.
fn has_other_line_breaks(bytes: &[u8]) -> bool {
    memchr::memchr3_iter(b'\r', 0xc2, 0xe2, bytes).any(|at| {
        match (bytes[at], bytes.get(at + 1), bytes.get(at + 2)) {
            (b'\r', next, _) => next != Some(&b'\n'),
            (0xc2, Some(0x85), _) => true,
            (0xe2, Some(0x80), Some(0xa8 | 0xa9)) => true,
            _ => false,
        }
    })
}

/// Lines of a text, without their line break, with their 1-based numbers.
struct Lines<'a> {
    text: &'a str,
    /// Where the next line starts.
    at: usize,
    /// Its number.
    line: usize,
}

impl<'a> Iterator for Lines<'a> {
    type Item = (&'a str, usize);

    fn next(&mut self) -> Option<(&'a str, usize)> {
        if self.at >= self.text.len() {
            return None;
        }
        let rest = &self.text[self.at..];
        let (line, advance) = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(i) => (&rest[..i], i + 1),
            None => (rest, rest.len()),
        };
        let number = self.line;
        self.at += advance;
        self.line += 1;
        Some((line.strip_suffix('\r').unwrap_or(line), number))
    }
}

fn is_blank(line: &str) -> bool {
    line.bytes().all(|b| b == b' ')
}

fn indentation(line: &str) -> usize {
    line.bytes().take_while(|&b| b == b' ').count()
}

/// A line holding only a plain key that could be a chart name, then `:`.
fn is_key_line(line: &str, indent: usize) -> bool {
    let Some(name) = line[indent..].strip_suffix(':') else {
        // Spaces after the colon are fine too.
        return line[indent..]
            .split_once(':')
            .is_some_and(|(name, rest)| is_blank(rest) && is_plain_name(name));
    };
    is_plain_name(name)
}

fn is_plain_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphanumeric())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// `span` of a piece parsed on its own, as a position in the whole text.
fn shifted(span: Span, lines: usize, chars: usize) -> Span {
    let shift = |m: Marker| Marker::new(m.index() + chars, m.line() + lines, m.col());
    Span::new(shift(span.start), shift(span.end))
}

fn shifted_error(error: &ScanError, lines: usize, chars: usize) -> Unstreamable {
    let at = shifted(Span::empty(*error.marker()), lines, chars).start;
    Unstreamable::Syntax(scan_error(&ScanError::new(at, error.info().to_owned())))
}

/// The text around the map (before its first key, after its last line) parsed as one
/// document; the map's key must be a key of its root map, where the text was cut, with
/// no value. The root is returned with the map in place, empty, as a streamed parse
/// leaves it.
fn parse_around(
    text: &str,
    key: &str,
    cut: &Cut,
    unterminated_end: Option<usize>,
) -> Result<Node, Unstreamable> {
    let head = &text[..cut.region.start];
    let around = format!("{head}{}", &text[cut.region.end..]);
    let head_chars = cut.pieces[0].chars_before;
    let mut builder = Builder::new(usize::MAX);
    builder.unterminated_end = unterminated_end;
    for event in Parser::new_from_str(&around) {
        let (event, span) = event.map_err(|e| {
            let in_tail = e.marker().index() >= head_chars;
            let (lines, chars) = if in_tail {
                (cut.region_lines, cut.region_chars)
            } else {
                (0, 0)
            };
            shifted_error(&e, lines, chars)
        })?;
        let span = if span.start.index() >= head_chars {
            shifted(span, cut.region_lines, cut.region_chars)
        } else {
            span
        };
        stream_event(&mut builder, event, span, &mut |_, _| false)?;
    }
    let mut root = builder
        .documents
        .into_iter()
        .next()
        .ok_or(Unstreamable::Unusual("no document"))?;
    let NodeKind::Map(pairs) = &mut root.kind else {
        return Err(Unstreamable::NotInPieces);
    };
    let value = pairs
        .iter_mut()
        .find(|(k, _)| {
            matches!(&k.kind, NodeKind::Str(s) if s == key)
                && (k.line, k.column) == (cut.key_line, 1)
        })
        .map(|(_, v)| v)
        .filter(|v| v.kind == NodeKind::Null)
        .ok_or(Unstreamable::NotInPieces)?;
    // Where a streamed parse leaves the map: at its first key.
    *value = Node {
        kind: NodeKind::Map(Vec::new()),
        line: cut.pieces[0].lines_before + 1,
        column: cut.indent + 1,
    };
    Ok(root)
}

/// One piece parsed as a document whose root map is the streamed one, each pair decoded.
fn parse_piece<R: Send>(
    text: &str,
    piece: &Piece,
    unterminated_end: Option<usize>,
    decode: &(dyn Fn(Node, Node) -> Option<R> + Sync),
) -> Result<Vec<R>, Unstreamable> {
    let mut builder = Builder::new(usize::MAX);
    builder.stream_root = true;
    // In the whole document the map's pairs sit inside the root map and the map.
    builder.outer_depth = 1;
    builder.unterminated_end = unterminated_end;
    let mut results = Vec::new();
    let (lines, chars) = (piece.lines_before, piece.chars_before);
    for event in Parser::new_from_str(&text[piece.range.clone()]) {
        let (event, span) = event.map_err(|e| shifted_error(&e, lines, chars))?;
        stream_event(
            &mut builder,
            event,
            shifted(span, lines, chars),
            &mut |key, value| match decode(key, value) {
                Some(result) => {
                    results.push(result);
                    true
                }
                None => false,
            },
        )?;
    }
    match builder.documents.as_slice() {
        [
            Node {
                kind: NodeKind::Map(pairs),
                ..
            },
        ] if pairs.is_empty() => Ok(results),
        _ => Err(Unstreamable::Unusual("a piece that is not one map")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both ways of streaming, pair for pair and root for root (positions included).
    fn streams_alike(text: &str, piece_size: usize) -> bool {
        let mut sequential = Vec::new();
        let whole = super::super::parse_node_streaming(text, "entries", &mut |k, v| {
            sequential.push((k, v));
            true
        });
        let mut pieces = Vec::new();
        let cut = parse_node_in_pieces(
            text,
            "entries",
            piece_size,
            &|k, v| Some((k, v)),
            &mut |pair| {
                pieces.push(pair);
                true
            },
        );
        match cut {
            Err(Unstreamable::NotInPieces) => false,
            Ok(root) => {
                assert_eq!(Ok(root), whole, "{text:?}");
                assert_eq!(pieces.len(), sequential.len(), "{text:?}");
                for ((k, v), (wk, wv)) in pieces.iter().zip(&sequential) {
                    assert!(alike(k, wk) && alike(v, wv), "{text:?}:\n{v:?}\n{wv:?}");
                }
                true
            }
            // The whole text may read in one piece; that is the caller's to find out.
            Err(_) => true,
        }
    }

    /// Equal, positions included, except those of empty values: the parser places one at
    /// the next thing it reads, which for the last value of a piece is the piece's end.
    fn alike(a: &Node, b: &Node) -> bool {
        let empty = |n: &Node| {
            matches!(&n.kind, NodeKind::Null) || matches!(&n.kind, NodeKind::Str(s) if s.is_empty())
        };
        let placed = empty(a) || (a.line, a.column) == (b.line, b.column);
        placed
            && match (&a.kind, &b.kind) {
                (NodeKind::Seq(x), NodeKind::Seq(y)) => {
                    x.len() == y.len() && x.iter().zip(y).all(|(a, b)| alike(a, b))
                }
                (NodeKind::Map(x), NodeKind::Map(y)) => {
                    x.len() == y.len()
                        && x.iter()
                            .zip(y)
                            .all(|((ak, av), (bk, bv))| alike(ak, bk) && alike(av, bv))
                }
                (x, y) => x == y,
            }
    }

    const INDEX: &str = "apiVersion: v1\nentries:\n  a:\n  - name: a\n    description: |\n      text\n\n  b-1.0:\n  - {name: b, urls: [x,\n      y]}\n  - name: b\n    note: \"two\n      lines é\"\n\n  c:\n    - name: c\n      keywords:\n      - k\n  d: []\n  e:\ngenerated: now\n";

    #[test]
    fn pieces_read_as_the_whole_does() {
        for size in [1, 20, 40, 80] {
            assert!(streams_alike(INDEX, size), "{size}");
        }
        assert!(streams_alike(&INDEX.replace('\n', "\r\n"), 1));
        assert!(streams_alike(&format!("\u{feff}{INDEX}"), 1));
        // No line break at the end, with a block text last.
        let open = "entries:\n  a:\n  - 1\n  b:\n    c: |\n      x\n      y";
        assert!(streams_alike(open, 1));
        // Keys after the map, and before it.
        assert!(streams_alike(
            "x: 1\nentries:\n  a:\n  - 1\n  b:\n    c: 2\ny: [1,\n  2]\n",
            1
        ));
    }

    #[test]
    fn broken_indexes_are_never_read_otherwise() {
        for text in [
            "entries:\n  a: \"open\n  b: 1\n",
            "entries:\n  a: [1,\n  b: 2]\n",
            "entries:\n  a: &x 1\n  b: *x\n",
            "entries:\n  a: 1\n  b: !!str 2\n",
            "entries:\n  a: 1\n  b: {<<: {c: 1}}\n",
            "entries:\n  a: 1\n  b: 2\n---\nc: 1\n",
            "entries:\n  a: 1\n  a: 2\n",
            "entries:\n  a: 1\n  b: 2\nentries: 3\n",
        ] {
            streams_alike(text, 1);
        }
    }

    #[test]
    fn maps_not_written_in_lines_are_not_cut() {
        for text in [
            "entries: {a: 1, b: 2}\n",
            "entries:\n  a: 1\n # comment\n  b: 2\n",
            "entries:\n  a: 1\n# comment\n  b: 2\n",
            "entries:\n  \"a\": 1\n",
            "entries:\n  a: 1\n",
            "x: |\n  y\nentries:\n  - 1\n",
            "entries:\n- a\n- b\n",
        ] {
            assert!(!streams_alike(text, 1), "{text:?}");
        }
        // The key inside a flow collection is not the root's key: not read in pieces
        // (here the text around the map does not even parse).
        let flow = "x: [\nentries:\n  a:\n  b:\n]\n";
        assert!(parse_node_in_pieces(flow, "entries", 1, &|_, _| Some(()), &mut |_| true).is_err());
        streams_alike(flow, 1);
    }

    /// Every small edit anywhere in an index: reading it in pieces never differs from
    /// reading it in one (or it is not read in pieces).
    #[test]
    fn edits_anywhere_read_alike() {
        let inserts = [
            "\n",
            " ",
            "  ",
            ":",
            ": ",
            "\"",
            "'",
            "[",
            "]",
            "{",
            "#",
            " #",
            "- ",
            "|",
            ">",
            "\n  x:\n",
            "\n  x: 1\n",
            "\nx:\n",
            "\n- ",
            "\n ",
            "\n   y:\n",
            "&a ",
            "*a",
            "!!str ",
            "---\n",
            "...\n",
            "\t",
            "\r",
            "é",
        ];
        let mut in_pieces = 0;
        for at in (0..=INDEX.len()).filter(|&at| INDEX.is_char_boundary(at)) {
            for insert in inserts {
                let mut text = INDEX.to_owned();
                text.insert_str(at, insert);
                if streams_alike(&text, 1) {
                    in_pieces += 1;
                }
            }
            let mut cut = INDEX.to_owned();
            if let Some(c) = cut[at..].chars().next() {
                cut.replace_range(at..at + c.len_utf8(), "");
                streams_alike(&cut, 1);
            }
        }
        assert!(in_pieces > 1000, "{in_pieces}");
    }
}
