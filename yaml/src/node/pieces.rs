//! [`PieceReader`]: a streamed map cut at its keys and read on several threads, as its
//! text arrives.
//!
//! The scanner is the part of a streamed parse that cannot be shared out: one thread reads
//! the text while another builds what it reads, and on a large index the reading takes
//! half as long again as the building. When the streamed map is written as Helm and
//! chartkit write an index (block style, each key on a line of its own, every line of
//! the map indented at least as far as its keys), its text is cut at those key lines and
//! each piece is parsed as a document of its own, on as many threads as there are cores
//! (two to four), as soon as it has arrived; the pairs then go out in document order.
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
//! as a key of the root map, at the line where the text was cut, with no value. Every
//! part must be one saphyr-parser reads as go-yaml does without rewriting
//! ([`goscan::is_plain`]), which makes the whole text one too.
//!
//! Positions (lines, character indexes) are those of the whole text, except for an empty
//! value that ends a piece: the parser places an empty value at what it reads next, here
//! the piece's end rather than the next key. (Positions only ever name where an error is;
//! a caller reads the text in one piece again when anything fails.)

use std::collections::BTreeMap;
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use saphyr_parser::{Marker, Parser, ScanError, Span};

use super::{Builder, Node, NodeKind, Unstreamable, scan_error, stream_event};
use crate::goscan;

/// What a [`PieceReader`] does with each pair of the map, on the thread that parsed it:
/// a result, or nothing to stop.
pub type DecodePair<R> = dyn Fn(Node, Node) -> Option<R> + Send + Sync;

/// What a [`PieceReader`] does with each result, in document order: false stops.
pub type CommitResult<R> = dyn FnMut(R) -> bool + Send;

/// Reads a document given in parts of any size ([`PieceReader::push`]) like
/// [`super::parse_node_streaming`], for a map written in block style with each key on a
/// line of its own (see the module documentation): the map's text is cut at key lines
/// into pieces of about `piece_size` bytes, each parsed on another thread as soon as it
/// has arrived. `decode` runs on the thread that parsed a pair; `commit` gets what it
/// returns in document order.
///
/// [`PieceReader::finish`] fails with [`Unstreamable::NotInPieces`] when the map is not
/// written so. Any failure means "read it in one piece", and what `commit` received is
/// then void: a piece can fail where the whole text does not (a flow collection that goes
/// on at the root's indentation is cut short), never the other way round, and what
/// succeeds here is what [`super::parse_node_streaming`] gives.
pub struct PieceReader<R: Send + 'static> {
    key: String,
    piece_size: usize,
    /// The longest line, piece, or text around the map kept (see [`PieceReader::limit`]).
    max_part: usize,
    /// The line being received, when it came in more than one part.
    partial: Vec<u8>,
    stage: Stage,
    /// Lines and characters received (complete lines only).
    lines: usize,
    chars: usize,
    /// The text before the map and after it.
    head: Vec<u8>,
    tail: Vec<u8>,
    /// The line holding the map's key, and the keys' indentation.
    key_line: usize,
    indent: usize,
    /// Where the map starts and ends: lines and characters before it, and after its end.
    region_start: (usize, usize),
    region_end: Option<(usize, usize)>,
    /// The piece being gathered, and the lines and characters before it.
    piece: Vec<u8>,
    piece_start: (usize, usize),
    pieces_sent: usize,
    decode: Arc<DecodePair<R>>,
    commit: Option<Box<CommitResult<R>>>,
    pool: Option<Pool<R>>,
    failed: Option<Unstreamable>,
}

/// Where the reader is in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Looking for the map's key, alone on a line at the root's indentation.
    Key,
    /// Looking for the map's first key.
    FirstKey,
    Map,
    /// After the map.
    Tail,
}

impl<R: Send + 'static> PieceReader<R> {
    pub fn new(
        key: &str,
        piece_size: usize,
        decode: Arc<DecodePair<R>>,
        commit: Box<CommitResult<R>>,
    ) -> PieceReader<R> {
        PieceReader {
            key: key.to_owned(),
            piece_size,
            max_part: usize::MAX,
            partial: Vec::new(),
            stage: Stage::Key,
            lines: 0,
            chars: 0,
            head: Vec::new(),
            tail: Vec::new(),
            key_line: 0,
            indent: 0,
            region_start: (0, 0),
            region_end: None,
            piece: Vec::new(),
            piece_start: (0, 0),
            pieces_sent: 0,
            decode,
            commit: Some(commit),
            pool: None,
            failed: None,
        }
    }

    /// Bounds the memory the reader holds: a line, a piece (one key's value, which
    /// is parsed into a tree whole) or the text before or after the map longer than
    /// `max_part` bytes fails the reading with [`Unstreamable::TooLarge`] at once, and
    /// the text then received is not kept. Unbounded by default.
    pub fn limit(mut self, max_part: usize) -> PieceReader<R> {
        self.max_part = max_part;
        self
    }

    /// Takes the next part of the text, cut anywhere.
    pub fn push(&mut self, mut bytes: &[u8]) {
        if self.failed.is_some() {
            return;
        }
        while let Some(end) = memchr::memchr(b'\n', bytes) {
            let (line, rest) = bytes.split_at(end + 1);
            if self.partial.is_empty() {
                self.line(line);
            } else {
                let mut whole = std::mem::take(&mut self.partial);
                whole.extend_from_slice(line);
                self.line(&whole);
                whole.clear();
                self.partial = whole;
            }
            if self.failed.is_some() {
                return;
            }
            bytes = rest;
        }
        if self.partial.len() + bytes.len() > self.max_part {
            return self.fail(Unstreamable::TooLarge);
        }
        self.partial.extend_from_slice(bytes);
    }

    /// The text is complete: the root of the document, with the map in it empty (as
    /// [`super::parse_node_streaming`] gives it), once every pair was committed.
    pub fn finish(mut self) -> Result<Node, Unstreamable> {
        let terminated = self.partial.is_empty();
        if !terminated {
            let last = std::mem::take(&mut self.partial);
            self.line(&last);
        }
        let unterminated_end = (!terminated).then_some(self.chars);
        match self.stage {
            Stage::Key | Stage::FirstKey => self.fail(Unstreamable::NotInPieces),
            Stage::Map => {
                self.region_end = Some((self.lines, self.chars));
                self.send_piece(unterminated_end);
            }
            Stage::Tail => {}
        }
        let pool = self.pool.take();
        let order = pool.map(Pool::finish);
        if let Some(failed) = self.failed.take() {
            return Err(failed);
        }
        match order {
            Some(Ok(committed)) if committed == self.pieces_sent => {}
            Some(Err(failed)) => return Err(failed),
            _ => return Err(Unstreamable::Unusual("a piece was not parsed")),
        }
        self.parse_around(unterminated_end)
    }

    /// One line, with its line break unless it is the last one.
    fn line(&mut self, mut line: &[u8]) {
        if self.lines == 0 && self.head.is_empty() {
            // A byte order mark starts no line of the text.
            line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
        }
        let content = line.strip_suffix(b"\n").unwrap_or(line);
        let content = content.strip_suffix(b"\r").unwrap_or(content);
        let Ok(content) = std::str::from_utf8(content) else {
            return self.fail(Unstreamable::NotInPieces);
        };
        // The cut goes by lines as `\n` ends them; a text with other line breaks is read
        // in one piece.
        if has_other_line_breaks(content.as_bytes()) {
            return self.fail(Unstreamable::NotInPieces);
        }
        let chars = if line.is_ascii() {
            line.len()
        } else {
            line.len() - line.iter().filter(|&&b| b & 0xc0 == 0x80).count()
        };
        match self.stage {
            Stage::Key => {
                self.head.extend_from_slice(line);
                let rest = content
                    .strip_prefix(self.key.as_str())
                    .and_then(|r| r.strip_prefix(':'));
                if rest.is_some_and(is_blank) {
                    self.key_line = self.lines + 1;
                    self.stage = Stage::FirstKey;
                }
            }
            Stage::FirstKey if is_blank(content) => self.head.extend_from_slice(line),
            Stage::FirstKey => {
                let indent = indentation(content);
                if indent == 0 || !is_key_line(content, indent) {
                    return self.fail(Unstreamable::NotInPieces);
                }
                self.indent = indent;
                self.stage = Stage::Map;
                self.region_start = (self.lines, self.chars);
                self.piece_start = self.region_start;
                self.piece.extend_from_slice(line);
            }
            Stage::Map if is_blank(content) => self.piece.extend_from_slice(line),
            Stage::Map => match indentation(content) {
                0 => {
                    // A comment at the root's indentation may still be inside the map.
                    if content.starts_with(['#', '\t']) {
                        return self.fail(Unstreamable::NotInPieces);
                    }
                    self.region_end = Some((self.lines, self.chars));
                    self.send_piece(None);
                    self.stage = Stage::Tail;
                    self.tail.extend_from_slice(line);
                }
                n if n < self.indent => return self.fail(Unstreamable::NotInPieces),
                n if n == self.indent
                    && self.piece.len() >= self.piece_size
                    && is_key_line(content, n) =>
                {
                    self.send_piece(None);
                    self.piece_start = (self.lines, self.chars);
                    self.piece.extend_from_slice(line);
                }
                _ => self.piece.extend_from_slice(line),
            },
            Stage::Tail => self.tail.extend_from_slice(line),
        }
        if self.piece.len().max(self.head.len()).max(self.tail.len()) > self.max_part {
            return self.fail(Unstreamable::TooLarge);
        }
        if line.ends_with(b"\n") {
            self.lines += 1;
        }
        self.chars += chars;
    }

    /// Fails the reading; what it gathered is void, so its memory goes at once.
    fn fail(&mut self, why: Unstreamable) {
        self.failed.get_or_insert(why);
        for gathered in [
            &mut self.partial,
            &mut self.piece,
            &mut self.head,
            &mut self.tail,
        ] {
            *gathered = Vec::new();
        }
    }

    /// Sends the piece gathered to be parsed.
    fn send_piece(&mut self, unterminated_end: Option<usize>) {
        let bytes = std::mem::take(&mut self.piece);
        let Ok(text) = String::from_utf8(bytes) else {
            return self.fail(Unstreamable::NotInPieces);
        };
        if !goscan::is_plain(&text) {
            return self.fail(Unstreamable::NotInPieces);
        }
        let piece = Piece {
            text,
            lines_before: self.piece_start.0,
            chars_before: self.piece_start.1,
            unterminated_end,
        };
        let index = self.pieces_sent;
        self.pieces_sent += 1;
        let pool = match &mut self.pool {
            Some(pool) => pool,
            None => {
                let commit = self.commit.take().expect("the pool starts once");
                self.pool
                    .insert(Pool::start(Arc::clone(&self.decode), commit))
            }
        };
        if !pool.send(index, piece) {
            self.fail(Unstreamable::Stopped);
        }
    }

    /// The text around the map parsed as one document; the map's key must be a key of
    /// its root map, where the text was cut, with no value. The root is returned with
    /// the map in place, empty, as a streamed parse leaves it.
    fn parse_around(&self, unterminated_end: Option<usize>) -> Result<Node, Unstreamable> {
        let (Ok(head), Ok(tail)) = (
            std::str::from_utf8(&self.head),
            std::str::from_utf8(&self.tail),
        ) else {
            return Err(Unstreamable::NotInPieces);
        };
        if !goscan::is_plain(head) || !goscan::is_plain(tail) {
            return Err(Unstreamable::NotInPieces);
        }
        let ((start_lines, start_chars), (end_lines, end_chars)) = (
            self.region_start,
            self.region_end.unwrap_or(self.region_start),
        );
        let (region_lines, region_chars) = (end_lines - start_lines, end_chars - start_chars);
        let around = format!("{head}{tail}");
        let mut builder = Builder::new(usize::MAX);
        builder.unterminated_end = unterminated_end;
        let in_tail = |index: usize| index >= start_chars;
        for event in Parser::new_from_str(&around) {
            let (event, span) = event.map_err(|e| {
                let (lines, chars) = if in_tail(e.marker().index()) {
                    (region_lines, region_chars)
                } else {
                    (0, 0)
                };
                shifted_error(&e, lines, chars)
            })?;
            let span = if in_tail(span.start.index()) {
                shifted(span, region_lines, region_chars)
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
                matches!(&k.kind, NodeKind::Str(s) if *s == self.key)
                    && (k.line, k.column) == (self.key_line, 1)
            })
            .map(|(_, v)| v)
            .filter(|v| v.kind == NodeKind::Null)
            .ok_or(Unstreamable::NotInPieces)?;
        // Where a streamed parse leaves the map: at its first key.
        *value = Node {
            kind: NodeKind::Map(Vec::new()),
            line: start_lines + 1,
            column: self.indent + 1,
        };
        Ok(root)
    }
}

impl<R: Send + 'static> Drop for PieceReader<R> {
    /// A reader abandoned half way stops its threads.
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            let _ = pool.finish();
        }
    }
}

/// A piece of the map's text and where it is in the whole.
struct Piece {
    text: String,
    lines_before: usize,
    chars_before: usize,
    /// Where the text ends, when this piece ends it without a line break.
    unterminated_end: Option<usize>,
}

/// Pieces waiting to be parsed, at most: the reader waits when the threads fall behind.
const PIECES_QUEUED: usize = 4;

/// The threads parsing pieces, and the results waiting to be committed in order.
struct Pool<R> {
    pieces: Option<SyncSender<(usize, Piece)>>,
    threads: Vec<std::thread::JoinHandle<()>>,
    order: Arc<Mutex<Order<R>>>,
}

struct Order<R> {
    done: BTreeMap<usize, Vec<R>>,
    /// The piece to commit next.
    next: usize,
    failed: Option<Unstreamable>,
    commit: Box<CommitResult<R>>,
}

impl<R> Order<R> {
    /// Commits the pieces that are next in order.
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

impl<R: Send + 'static> Pool<R> {
    fn start(decode: Arc<DecodePair<R>>, commit: Box<CommitResult<R>>) -> Pool<R> {
        let (pieces, queue) = std::sync::mpsc::sync_channel(PIECES_QUEUED);
        let queue = Arc::new(Mutex::new(queue));
        let order = Arc::new(Mutex::new(Order {
            done: BTreeMap::new(),
            next: 0,
            failed: None,
            commit,
        }));
        let workers = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(2, 4);
        let threads = (0..workers)
            .filter_map(|_| {
                let (queue, order, decode) =
                    (Arc::clone(&queue), Arc::clone(&order), Arc::clone(&decode));
                std::thread::Builder::new()
                    .name("yaml-pieces".into())
                    .spawn(move || work(&queue, &order, &*decode))
                    .ok()
            })
            .collect::<Vec<_>>();
        let mut pool = Pool {
            pieces: Some(pieces),
            threads,
            order,
        };
        if pool.threads.is_empty() {
            // No thread could be started: nothing will parse the pieces.
            pool.lock().failed = Some(Unstreamable::Unusual("no thread to parse pieces"));
            pool.pieces = None;
        }
        pool
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Order<R>> {
        self.order.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues a piece; false once the reading has failed.
    fn send(&mut self, index: usize, piece: Piece) -> bool {
        if self.lock().failed.is_some() {
            return false;
        }
        self.pieces
            .as_ref()
            .is_some_and(|pieces| pieces.send((index, piece)).is_ok())
    }

    /// Waits for every piece: how many were committed, or why it failed.
    fn finish(mut self) -> Result<usize, Unstreamable> {
        self.pieces = None;
        for thread in self.threads.drain(..) {
            thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        }
        let mut order = self.lock();
        match order.failed.take() {
            Some(failed) => Err(failed),
            None => Ok(order.next),
        }
    }
}

/// A thread's work: parse the pieces it is given and commit what is next in order.
fn work<R: Send>(
    queue: &Mutex<Receiver<(usize, Piece)>>,
    order: &Mutex<Order<R>>,
    decode: &DecodePair<R>,
) {
    loop {
        let job = queue.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok((index, piece)) = job else {
            return;
        };
        if order
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .failed
            .is_some()
        {
            // Drain the queue so the reader never waits on it.
            continue;
        }
        let parsed = parse_piece(&piece, decode);
        drop(piece);
        let mut order = order.lock().unwrap_or_else(|e| e.into_inner());
        match parsed {
            Ok(results) => {
                order.done.insert(index, results);
                order.commit_ready();
            }
            Err(error) => {
                order.failed.get_or_insert(error);
            }
        }
    }
}

/// Whether YAML sees a line break other than `\n` (or `\r\n`) in a line: a lone `\r`, or
/// NEL, LS or PS, which some YAML readers take for one.
fn has_other_line_breaks(bytes: &[u8]) -> bool {
    memchr::memchr3_iter(b'\r', 0xc2, 0xe2, bytes).any(|at| {
        matches!(
            (bytes[at], bytes.get(at + 1), bytes.get(at + 2)),
            (b'\r', _, _) | (0xc2, Some(0x85), _) | (0xe2, Some(0x80), Some(0xa8 | 0xa9))
        )
    })
}

fn is_blank(line: &str) -> bool {
    line.bytes().all(|b| b == b' ')
}

fn indentation(line: &str) -> usize {
    line.bytes().take_while(|&b| b == b' ').count()
}

/// A line holding only a plain key that could be a chart name, then `:`.
fn is_key_line(line: &str, indent: usize) -> bool {
    line[indent..]
        .split_once(':')
        .is_some_and(|(name, rest)| is_blank(rest) && is_plain_name(name))
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

/// One piece parsed as a document whose root map is the streamed one, each pair decoded.
fn parse_piece<R: Send>(piece: &Piece, decode: &DecodePair<R>) -> Result<Vec<R>, Unstreamable> {
    let mut builder = Builder::new(usize::MAX);
    builder.stream_root = true;
    // In the whole document the map's pairs sit inside the root map and the map.
    builder.outer_depth = 1;
    builder.unterminated_end = piece.unterminated_end;
    let mut results = Vec::new();
    let (lines, chars) = (piece.lines_before, piece.chars_before);
    for event in Parser::new_from_str(&piece.text) {
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

    /// Reads `text` in pieces, given in parts of `part` bytes.
    fn read_in_pieces(
        text: &str,
        piece_size: usize,
        part: usize,
    ) -> (Result<Node, Unstreamable>, Vec<(Node, Node)>) {
        let pairs = Arc::new(Mutex::new(Vec::new()));
        let committed = Arc::clone(&pairs);
        let mut reader = PieceReader::new(
            "entries",
            piece_size,
            Arc::new(|k, v| Some((k, v))),
            Box::new(move |pair| {
                committed.lock().unwrap().push(pair);
                true
            }),
        );
        for chunk in text.as_bytes().chunks(part.max(1)) {
            reader.push(chunk);
        }
        let root = reader.finish();
        let pairs = std::mem::take(&mut *pairs.lock().unwrap());
        (root, pairs)
    }

    /// Both ways of streaming, pair for pair and root for root (positions included);
    /// whether it was read in pieces.
    fn streams_alike(text: &str, piece_size: usize) -> bool {
        streams_alike_in_parts(text, piece_size, usize::MAX)
    }

    fn streams_alike_in_parts(text: &str, piece_size: usize, part: usize) -> bool {
        let mut sequential = Vec::new();
        let whole = super::super::parse_node_streaming(text, "entries", &mut |k, v| {
            sequential.push((k, v));
            true
        });
        match read_in_pieces(text, piece_size, part) {
            (Ok(root), pieces) => {
                assert_eq!(Ok(root), whole, "{text:?}");
                assert_eq!(pieces.len(), sequential.len(), "{text:?}");
                for ((k, v), (wk, wv)) in pieces.iter().zip(&sequential) {
                    assert!(alike(k, wk) && alike(v, wv), "{text:?}:\n{v:?}\n{wv:?}");
                }
                true
            }
            // The whole text may read in one piece; that is the caller's to find out.
            (Err(_), _) => false,
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
        for size in [0, 20, 40, 80, 1000] {
            assert!(streams_alike(INDEX, size), "{size}");
        }
        assert!(streams_alike(&INDEX.replace('\n', "\r\n"), 0));
        assert!(streams_alike(&format!("\u{feff}{INDEX}"), 0));
        // No line break at the end, with a block text last.
        let open = "entries:\n  a:\n  - 1\n  b:\n    c: |\n      x\n      y";
        assert!(streams_alike(open, 0));
        // Keys after the map, and before it.
        assert!(streams_alike(
            "x: 1\nentries:\n  a:\n  - 1\n  b:\n    c: 2\ny: [1,\n  2]\n",
            0
        ));
    }

    #[test]
    fn parts_of_any_size_read_alike() {
        let bom = format!("\u{feff}{INDEX}");
        for text in [INDEX, &INDEX.replace('\n', "\r\n"), &bom] {
            for part in 1..12 {
                assert!(streams_alike_in_parts(text, 0, part), "{part}");
                assert!(streams_alike_in_parts(text, 30, part), "{part}");
            }
        }
    }

    #[test]
    fn broken_indexes_are_never_read_otherwise() {
        for text in [
            "entries:\n  a: \"open\n  b: 1\n",
            "entries:\n  a: [1,\n  b: 2]\n",
            "entries:\n  a:\n    &x 1\n  b: *x\n",
            "entries:\n  a:\n  - !!str 2\n  b:\n",
            "entries:\n  a:\n    <<: {c: 1}\n  b:\n",
            "entries:\n  a:\n  b:\n---\nc: 1\n",
            "entries:\n  a:\n  a:\n",
            "entries:\n  a:\n  b:\nentries: 3\n",
            "entries:\n  a:\n  - \u{1}\n  b:\n",
            "entries:\n  a:\n  - x\ty\n  b:\n",
        ] {
            streams_alike(text, 0);
        }
    }

    #[test]
    fn maps_not_written_in_lines_are_not_cut() {
        for text in [
            "entries: {a: 1, b: 2}\n",
            "entries:\n  a:\n # comment\n  b:\n",
            "entries:\n  a:\n# comment\n  b:\n",
            "entries:\n  \"a\": 1\n",
            "x: |\n  y\nentries:\n  - 1\n",
            "entries:\n- a\n- b\n",
            "entries:\n  a:\n  b:\r  c:\n",
            "entries:\n  a:\n  - x\u{2028}  b:\n",
        ] {
            let (root, _) = read_in_pieces(text, 0, usize::MAX);
            assert!(root.is_err(), "{text:?}");
        }
        // The key inside a flow collection is not the root's key.
        let (root, _) = read_in_pieces("x: [\nentries:\n  a:\n  b:\n]\n", 0, usize::MAX);
        assert!(root.is_err());
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
            "%",
            "\\'",
        ];
        let mut in_pieces = 0;
        for at in (0..=INDEX.len()).filter(|&at| INDEX.is_char_boundary(at)) {
            for insert in inserts {
                let mut text = INDEX.to_owned();
                text.insert_str(at, insert);
                if streams_alike(&text, 0) {
                    in_pieces += 1;
                }
            }
            let mut cut = INDEX.to_owned();
            if let Some(c) = cut[at..].chars().next() {
                cut.replace_range(at..at + c.len_utf8(), "");
                streams_alike(&cut, 0);
            }
        }
        assert!(in_pieces > 1000, "{in_pieces}");
    }

    #[test]
    fn a_refusal_stops_the_reading() {
        let mut reader = PieceReader::new(
            "entries",
            0,
            Arc::new(|k: Node, _| (k.as_map_key().as_deref() != Some("c")).then_some(())),
            Box::new(|()| true),
        );
        reader.push(INDEX.as_bytes());
        assert_eq!(reader.finish(), Err(Unstreamable::Stopped));
        let mut reader = PieceReader::new(
            "entries",
            0,
            Arc::new(|_, _| Some(())),
            Box::new(|()| false),
        );
        reader.push(INDEX.as_bytes());
        assert_eq!(reader.finish(), Err(Unstreamable::Stopped));
        // Dropped half way, it stops its threads.
        let mut reader =
            PieceReader::new("entries", 0, Arc::new(|_, _| Some(())), Box::new(|()| true));
        reader.push(&INDEX.as_bytes()[..120]);
        drop(reader);
    }

    #[test]
    fn a_part_over_the_limit_fails_the_reading_and_is_not_kept() {
        let reader = |limit| {
            PieceReader::new("entries", 0, Arc::new(|_, _| Some(())), Box::new(|()| true))
                .limit(limit)
        };
        // Within the limit, the whole index reads.
        let mut fits = reader(200);
        fits.push(INDEX.as_bytes());
        assert!(fits.finish().is_ok());
        // One chart's text longer than the limit.
        let big_chart = format!(
            "apiVersion: v1\nentries:\n  a:\n  - name: a\n{}  b: []\n",
            "    description: xxxxxxxxxx\n".repeat(20)
        );
        let mut too_big = reader(200);
        too_big.push(big_chart.as_bytes());
        assert_eq!(too_big.finish(), Err(Unstreamable::TooLarge));
        // A line that never ends, given in small parts: refused before it is all kept.
        let mut endless = reader(200);
        endless.push(b"apiVersion: v1\nentries:\n  a: ");
        for _ in 0..1000 {
            endless.push(&[b'x'; 64]);
            assert!(endless.partial.len() <= 200);
        }
        assert_eq!(endless.finish(), Err(Unstreamable::TooLarge));
        // Text before the map.
        let mut long_head = reader(200);
        long_head.push(format!("{}entries:\n  a: []\n", "k: v\n".repeat(100)).as_bytes());
        assert_eq!(long_head.finish(), Err(Unstreamable::TooLarge));
    }
}
