use std::borrow::Cow;
use std::collections::HashMap;

use base64::Engine as _;
use saphyr_parser::{Event, Parser, ScalarStyle, Span, Tag};

use crate::error::Error;
use crate::gonum;

mod deep_flow;
mod go_errors;
mod pieces;
use crate::goscan::{self, GO_YAML_MAX_DEPTH};
use crate::resolve::{Scalar, resolve_plain};
use crate::value::{Map, Value};
pub use pieces::{CommitResult, DecodePair, PieceReader};

/// saphyr-parser counts open flow collections in a `u8`.
const SAPHYR_MAX_FLOW_DEPTH: usize = 255;

/// A parsed YAML node with go-yaml v2's resolved scalar types and its source position.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kind: NodeKind,
    /// 1-based line where the node starts.
    pub line: usize,
    /// 1-based column where the node starts.
    pub column: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer too large for i64 but within u64, which go-yaml keeps as uint64.
    Uint(u64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    /// Key/value pairs in document order, merge keys (`<<`) already expanded. A key may
    /// repeat; as in go-yaml, the last occurrence wins.
    Map(Vec<(Node, Node)>),
}

/// Like [`Value`]'s: nodes nest as deep as go-yaml allows, and are dropped without
/// recursing when little stack is left.
impl Drop for Node {
    fn drop(&mut self) {
        if !matches!(self.kind, NodeKind::Seq(_) | NodeKind::Map(_)) || crate::stack_is_ample() {
            return;
        }
        let mut pending: Vec<Node> = Vec::new();
        self.move_children(&mut pending);
        while let Some(mut node) = pending.pop() {
            node.move_children(&mut pending);
        }
    }
}

impl Node {
    /// Moves the collections this node holds to `pending`.
    fn move_children(&mut self, pending: &mut Vec<Node>) {
        let is_collection = |n: &Node| matches!(n.kind, NodeKind::Seq(_) | NodeKind::Map(_));
        match &mut self.kind {
            NodeKind::Seq(items) => pending.extend(items.drain(..).filter(is_collection)),
            NodeKind::Map(pairs) => pending.extend(
                pairs
                    .drain(..)
                    .flat_map(|(k, v)| [k, v])
                    .filter(is_collection),
            ),
            _ => {}
        }
    }

    /// The kind, leaving null in its place.
    fn take_kind(&mut self) -> NodeKind {
        std::mem::replace(&mut self.kind, NodeKind::Null)
    }

    fn new(kind: NodeKind, span: &Span) -> Node {
        Node {
            kind,
            line: span.start.line(),
            column: span.start.col() + 1,
        }
    }

    fn subtree_size(&self) -> usize {
        let mut size = 0;
        let mut pending = vec![self];
        while let Some(node) = pending.pop() {
            size += 1;
            match &node.kind {
                NodeKind::Seq(items) => pending.extend(items),
                NodeKind::Map(pairs) => pending.extend(pairs.iter().flat_map(|(k, v)| [k, v])),
                _ => {}
            }
        }
        size
    }

    /// The value of the last pair whose key is the string `key`.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            NodeKind::Map(pairs) => pairs
                .iter()
                .rev()
                .find(|(k, _)| k.as_map_key().as_deref() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// What this node becomes when decoded into a Go `string` field through
    /// `sigs.k8s.io/yaml`: scalars are converted to text (floats at 32-bit precision, which
    /// is why an unquoted `appVersion: 1.10` reads as `"1.1"`); null is the empty string;
    /// lists and maps cannot be strings.
    pub fn to_go_string(&self) -> Option<String> {
        Some(match &self.kind {
            NodeKind::Null => String::new(),
            NodeKind::Bool(b) => b.to_string(),
            NodeKind::Int(i) => i.to_string(),
            NodeKind::Uint(u) => u.to_string(),
            NodeKind::Float(f) => gonum::format_g(*f, true),
            NodeKind::Str(s) => s.clone(),
            NodeKind::Seq(_) | NodeKind::Map(_) => return None,
        })
    }

    /// The JSON object key `sigs.k8s.io/yaml` makes of this node, if it can be one.
    pub fn as_map_key(&self) -> Option<String> {
        Some(match &self.kind {
            NodeKind::Str(s) => s.clone(),
            NodeKind::Bool(b) => b.to_string(),
            NodeKind::Int(i) => i.to_string(),
            NodeKind::Uint(u) => u.to_string(),
            NodeKind::Float(f) => match gonum::format_g(*f, true).as_str() {
                "+Inf" => ".inf".to_owned(),
                "-Inf" => "-.inf".to_owned(),
                "NaN" => ".nan".to_owned(),
                other => other.to_owned(),
            },
            NodeKind::Null | NodeKind::Seq(_) | NodeKind::Map(_) => return None,
        })
    }

    /// A short description of the node's kind for error messages.
    /// The value as Go's `%#v` prints what go-yaml decodes it to (`[]interface {}{"a", 1}`),
    /// for go-yaml's errors that show a value.
    pub fn go_syntax(&self) -> String {
        let join = |items: Vec<String>| items.join(", ");
        match &self.kind {
            NodeKind::Null => "interface {}(nil)".to_owned(),
            NodeKind::Bool(b) => b.to_string(),
            NodeKind::Int(i) => i.to_string(),
            NodeKind::Uint(u) => u.to_string(),
            NodeKind::Float(f) => gonum::format_g(*f, false),
            NodeKind::Str(s) => crate::gofmt::quote(s),
            NodeKind::Seq(items) => format!(
                "[]interface {{}}{{{}}}",
                join(
                    items
                        .iter()
                        .map(|i| crate::with_stack(|| i.go_syntax()))
                        .collect()
                )
            ),
            NodeKind::Map(pairs) => {
                // fmt prints a map's entries sorted by key.
                let mut entries: Vec<(String, String)> = pairs
                    .iter()
                    .map(|(k, v)| (k.go_syntax(), crate::with_stack(|| v.go_syntax())))
                    .collect();
                entries.sort();
                format!(
                    "map[interface {{}}]interface {{}}{{{}}}",
                    join(
                        entries
                            .into_iter()
                            .map(|(k, v)| format!("{k}:{v}"))
                            .collect()
                    )
                )
            }
        }
    }

    pub fn kind_name(&self) -> &'static str {
        match &self.kind {
            NodeKind::Null => "null",
            NodeKind::Bool(_) => "a boolean",
            NodeKind::Int(_) | NodeKind::Uint(_) | NodeKind::Float(_) => "a number",
            NodeKind::Str(_) => "a string",
            NodeKind::Seq(_) => "a list",
            NodeKind::Map(_) => "a map",
        }
    }

    /// The error `sigs.k8s.io/yaml` gives converting this document to JSON when a map
    /// key in it is null (the first in document order), which callers that do not
    /// convert the document must still report: Helm converts every document it decodes.
    pub fn json_key_error(&self) -> Option<Error> {
        let mut pending = vec![self];
        while let Some(node) = pending.pop() {
            match &node.kind {
                NodeKind::Seq(items) => pending.extend(items.iter().rev()),
                NodeKind::Map(pairs) => {
                    if let Some((key, value)) = pairs.iter().find(|(k, _)| k.kind == NodeKind::Null)
                    {
                        return Some(null_key(key, value));
                    }
                    pending.extend(pairs.iter().rev().map(|(_, v)| v));
                }
                _ => {}
            }
        }
        None
    }

    /// Converts to a JSON-like value the way Helm reads values: YAML to JSON, then JSON
    /// decoded into `interface{}`, so every number becomes a float64 and every key a string.
    pub fn to_value(&self) -> Result<Value, Error> {
        Ok(match &self.kind {
            NodeKind::Null => Value::Null,
            NodeKind::Bool(b) => Value::Bool(*b),
            NodeKind::Int(i) => Value::Float(*i as f64),
            NodeKind::Uint(u) => Value::Float(*u as f64),
            NodeKind::Float(f) if f.is_finite() => Value::Float(*f),
            NodeKind::Float(_) => {
                return Err(Error::at(
                    self.line,
                    self.column,
                    "infinity and NaN cannot be represented in JSON; quote the value to keep it as a string",
                ));
            }
            NodeKind::Str(s) => Value::String(s.clone()),
            NodeKind::Seq(items) => Value::Seq(
                items
                    .iter()
                    .map(|item| crate::with_stack(|| item.to_value()))
                    .collect::<Result<_, _>>()?,
            ),
            NodeKind::Map(pairs) => {
                let mut map = Map::new();
                for (key, value) in pairs {
                    let Some(name) = key.as_map_key() else {
                        let message = match &key.kind {
                            // go-yaml's decoder refuses collections as keys, in Go's
                            // syntax for the key.
                            NodeKind::Seq(_) | NodeKind::Map(_) => {
                                format!("invalid map key: {}", key.go_syntax())
                            }
                            NodeKind::Null => return Err(null_key(key, value)),
                            _ => format!(
                                "a map key must be a string, number or boolean, found {}",
                                key.kind_name()
                            ),
                        };
                        return Err(Error::at(key.line, key.column, message));
                    };
                    map.insert(name, crate::with_stack(|| value.to_value())?);
                }
                Value::Map(map)
            }
        })
    }
}

/// The error for a null map `key`, naming its `value` as Go's `%#v` prints it.
fn null_key(key: &Node, value: &Node) -> Error {
    let value = match value.kind {
        NodeKind::Null => "<nil>".to_owned(),
        _ => value.go_syntax(),
    };
    Error::at(
        key.line,
        key.column,
        format!("{}{value}", crate::error::NULL_KEY),
    )
}

/// Parses every document in a YAML stream. A stream with no documents gives an empty list.
pub fn parse_documents(text: &str) -> Result<Vec<Node>, Error> {
    parse(text, usize::MAX)
}

/// [`parse_documents`] for callers that read only the top `depth` levels of each
/// document (Helm reading a manifest's kind, name and annotations), which is most of
/// the work of rendering charts with large custom resource definitions. The whole text
/// is still parsed and checked, and gives the same errors; a collection nested deeper
/// than `depth` comes back empty, with its kind and position. Aliases and merge keys
/// can carry deep content up to shallow levels, so text that uses them is parsed in
/// full instead.
pub fn parse_documents_to_depth(text: &str, depth: usize) -> Result<Vec<Node>, Error> {
    parse(text, depth)
}

fn parse(text: &str, depth: usize) -> Result<Vec<Node>, Error> {
    parse_prepared(text, depth, false, Documents::All)
}

/// How many documents of a stream are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Documents {
    All,
    /// The first, as go-yaml's `Unmarshal` reads a stream: what follows its end is not
    /// read, so it cannot be an error.
    First,
}

fn parse_prepared(
    text: &str,
    depth: usize,
    indent_quotes: bool,
    documents: Documents,
) -> Result<Vec<Node>, Error> {
    let trimmed = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut prepared = goscan::prepare(trimmed, indent_quotes)?;
    let mut builder = Builder::new(depth);
    if !prepared.text.ends_with(['\n', '\r']) {
        builder.unterminated_end = Some(prepared.text.chars().count());
    }
    for event in Parser::new_from_str(&prepared.text) {
        let (event, span) = match event {
            Ok(event) => event,
            // go-yaml does not ask the lines of a quoted scalar or of a flow
            // collection to be indented.
            Err(e)
                if !indent_quotes
                    && matches!(
                        e.info(),
                        "invalid indentation in quoted scalar"
                            | "invalid indentation in flow construct"
                            | "invalid indentation"
                    ) =>
            {
                return parse_prepared(text, depth, true, documents);
            }
            // A directive ends the document before it for go-yaml, as a `...` line
            // would; read alone, the first document ends there.
            Err(e)
                if documents == Documents::First
                    && e.info() == "missing explicit document end marker before directive" =>
            {
                // Unless go-yaml's scanner refuses the directive.
                if let Some(error) = prepared.deferred.take_if(|d| d.line <= e.marker().line()) {
                    return Err(error);
                }
                let end = go_errors::byte_offset(&prepared.text, e.marker().index());
                return parse_prepared(&prepared.text[..end], depth, indent_quotes, documents);
            }
            Err(e) => {
                // saphyr-parser stops nesting flow collections far below go-yaml's limit:
                // past that limit, go-yaml's own error.
                if e.info() == "recursion limit exceeded" {
                    if let Some(error) = goscan::flow_depth_error(trimmed) {
                        return Err(error);
                    }
                    if let Some(parsed) =
                        deep_flow::parse_in_parts(&prepared.text, depth, documents)
                    {
                        return parsed;
                    }
                }
                let mut error = go_errors::said_as_go_yaml(&e, &prepared.text);
                if e.info() == "while parsing node, found unknown anchor" {
                    // go-yaml names the anchor: the alias at the error's position.
                    let name: String = prepared
                        .text
                        .chars()
                        .skip(e.marker().index())
                        .skip_while(|&c| c != '*')
                        .skip(1)
                        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
                        .collect();
                    error.message = format!("unknown anchor '{name}' referenced");
                }
                return Err(prepared.first_error(error));
            }
        };
        if let Event::Scalar(value, ScalarStyle::Plain, _, None) = &event
            && value.is_empty()
            && builder.expects_key()
            && let Some(error) = go_errors::empty_key(&prepared.text, span.start.index())
        {
            return Err(prepared.first_error(error));
        }
        let document_end = matches!(event, Event::DocumentEnd).then_some(span.start);
        match builder.event(event, span) {
            Ok(Shallow::Possible) => {}
            Ok(Shallow::NotPossible) => {
                return parse_prepared(text, usize::MAX, indent_quotes, documents);
            }
            Err(error) => return Err(prepared.first_error(error)),
        }
        if let Some(end) = document_end
            && documents == Documents::First
        {
            // What go-yaml's model found wrong past the first document is not read.
            return match prepared.deferred {
                Some(error) if (error.line, error.column) < (end.line(), end.col() + 1) => {
                    Err(error)
                }
                _ => Ok(builder.documents),
            };
        }
    }
    match prepared.deferred {
        Some(error) => Err(error),
        None => Ok(builder.documents),
    }
}

/// saphyr-parser's error in a piece of a text that is not at hand: the words are
/// go-yaml's, the position saphyr-parser's. Callers read the whole text again with
/// [`parse_node`] to report an error.
fn scan_error(error: &saphyr_parser::ScanError) -> Error {
    go_errors::said_as_go_yaml(error, "")
}

/// What [`Builder::skip`] met.
#[derive(Debug, PartialEq, Eq)]
enum Skipped {
    Checked,
    NullKey,
}

/// Whether a depth-limited parse can go on.
#[derive(Debug, PartialEq, Eq)]
enum Shallow {
    Possible,
    NotPossible,
}

/// Parses the first document of a YAML stream, as go-yaml's `Unmarshal` does; an empty
/// stream is null.
pub fn parse_node(text: &str) -> Result<Node, Error> {
    parse_first_document(text, usize::MAX)
}

/// [`parse_node`] reading only the top `depth` levels, as [`parse_documents_to_depth`].
pub fn parse_first_document(text: &str, depth: usize) -> Result<Node, Error> {
    let documents = parse_prepared(text, depth, false, Documents::First)?;
    Ok(documents.into_iter().next().unwrap_or(Node {
        kind: NodeKind::Null,
        line: 1,
        column: 1,
    }))
}

/// Why [`parse_node_streaming`] gave up; the caller then parses with [`parse_node`],
/// which gives the answer (or the error) for such a text.
#[derive(Debug, Clone, PartialEq)]
pub enum Unstreamable {
    /// The text does not parse (or may parse only after go-yaml's corrections).
    Syntax(Error),
    /// Something that makes one part depend on another, or that a streaming reader does
    /// not expect: anchors, aliases, merge keys, tags, several documents, a root that is
    /// not a map.
    Unusual(&'static str),
    /// The sink refused a pair.
    Stopped,
    /// [`PieceReader`] only: the streamed map is not written so that it can be cut into
    /// pieces; [`parse_node_streaming`] reads it in one.
    NotInPieces,
    /// [`PieceReader`] only: a line, one key's value, or the text around the map is
    /// longer than the reader's limit ([`PieceReader::limit`]), so reading it would take
    /// memory out of proportion; nothing more is kept once this is known.
    TooLarge,
}

/// Parses the first document of `text`, which must be a map, like [`parse_node`], except
/// that the pairs of the map under the root key `key` are handed to `sink` one at a
/// time as they complete, in document order, instead of being kept: the returned root
/// holds that map empty. A large document with one big map (an index's `entries`) is so
/// read with one pair in memory at a time.
///
/// Only plain texts are streamed; for anything where the result could depend on more
/// than one pair (see [`Unstreamable`]) it gives up, possibly after handing out some
/// pairs, so callers must treat what the sink received as void then. `sink` returns
/// false to stop; it runs on a second thread, beside the scanner.
pub fn parse_node_streaming(
    text: &str,
    key: &str,
    sink: &mut (dyn FnMut(Node, Node) -> bool + Send),
) -> Result<Node, Unstreamable> {
    let trimmed = text.strip_prefix('\u{feff}').unwrap_or(text);
    let prepared = goscan::prepare(trimmed, false).map_err(Unstreamable::Syntax)?;
    if let Some(error) = prepared.deferred {
        return Err(Unstreamable::Syntax(error));
    }
    let mut builder = Builder::new(usize::MAX);
    builder.stream_key = Some(key.to_owned());
    if !prepared.text.ends_with(['\n', '\r']) {
        builder.unterminated_end = Some(prepared.text.chars().count());
    }
    // Scanning and building (with what the sink does) take about as long as each other,
    // so the events go in batches to a second thread that builds and hands out the pairs;
    // a short queue keeps only a few batches in memory.
    std::thread::scope(|scope| {
        let (send, receive) = std::sync::mpsc::sync_channel::<Vec<(Event<'_>, Span)>>(4);
        // Emptied batches go back to the scanner: a batch is half a megabyte, and a new
        // one each time is memory the allocator hands back to the system when the other
        // thread frees it, so every batch would fault in fresh pages (an eighth of the
        // scanning thread's time on a large index).
        let (recycle, recycled) = std::sync::mpsc::channel::<Vec<(Event<'_>, Span)>>();
        let building = scope.spawn(move || {
            for mut batch in receive {
                for (event, span) in batch.drain(..) {
                    stream_event(&mut builder, event, span, sink)?;
                }
                // The scanner may have finished and gone; the batch is then just freed.
                let _ = recycle.send(batch);
            }
            builder
                .documents
                .into_iter()
                .next()
                .ok_or(Unstreamable::Unusual("no document"))
        });
        let mut scanned = Ok(());
        let mut batch = Vec::with_capacity(STREAM_BATCH);
        for event in Parser::new_from_str(&prepared.text) {
            match event {
                Ok(event) => batch.push(event),
                Err(e) => {
                    scanned = Err(Unstreamable::Syntax(go_errors::said_as_go_yaml(
                        &e,
                        &prepared.text,
                    )));
                    break;
                }
            }
            if batch.len() == STREAM_BATCH {
                let next = recycled
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(STREAM_BATCH));
                let full = std::mem::replace(&mut batch, next);
                if send.send(full).is_err() {
                    // The builder gave up; its answer says why.
                    break;
                }
            }
        }
        if scanned.is_ok() {
            let _ = send.send(batch);
        }
        drop(send);
        let built = building
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        scanned.and(built)
    })
}

/// Events per batch between the scanning and the building thread.
const STREAM_BATCH: usize = 4096;

/// One event of a streaming parse: refused if unusual, else built, and a completed pair
/// of the streamed map handed to the sink.
fn stream_event(
    builder: &mut Builder,
    event: Event<'_>,
    span: Span,
    sink: &mut (dyn FnMut(Node, Node) -> bool + Send),
) -> Result<(), Unstreamable> {
    match &event {
        Event::Alias(_) => return Err(Unstreamable::Unusual("an alias")),
        Event::Scalar(_, _, anchor, _)
        | Event::SequenceStart(anchor, _)
        | Event::MappingStart(anchor, _)
            if *anchor != 0 =>
        {
            return Err(Unstreamable::Unusual("an anchor"));
        }
        Event::Scalar(_, _, _, Some(_))
        | Event::SequenceStart(_, Some(_))
        | Event::MappingStart(_, Some(_)) => return Err(Unstreamable::Unusual("a tag")),
        Event::Scalar(text, ScalarStyle::Plain, _, None) if text == "<<" => {
            return Err(Unstreamable::Unusual("a merge key"));
        }
        // An empty key is go-yaml's error unless a `?` introduced it; the whole reading
        // tells which (and words the error as go-yaml does).
        Event::Scalar(text, ScalarStyle::Plain, _, None)
            if text.is_empty() && builder.expects_key() =>
        {
            return Err(Unstreamable::Unusual("an empty key"));
        }
        Event::DocumentStart(_) if builder.document_started => {
            return Err(Unstreamable::Unusual("several documents"));
        }
        Event::DocumentStart(_) => builder.document_started = true,
        Event::Scalar(..) | Event::SequenceStart(..) if builder.stack.is_empty() => {
            return Err(Unstreamable::Unusual("a root that is not a map"));
        }
        _ => {}
    }
    builder.event(event, span).map_err(Unstreamable::Syntax)?;
    if let Some((key, value)) = builder.streamed_pair.take()
        && !sink(key, value)
    {
        return Err(Unstreamable::Stopped);
    }
    Ok(())
}

enum Frame {
    Seq {
        node: Node,
        anchor: usize,
        items: Vec<Node>,
    },
    Map {
        node: Node,
        anchor: usize,
        pairs: Vec<(Node, Node)>,
        key: Option<Node>,
        merge: bool,
        /// The map whose pairs a streaming parse hands out instead of keeping.
        streamed: bool,
    },
}

struct Builder {
    documents: Vec<Node>,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Node>,
    /// Nodes created so far, counting every node an alias copies.
    expanded: usize,
    /// Nodes that appear literally in the text.
    parsed: usize,
    /// Collections opened below this many open collections are checked but not kept.
    keep_depth: usize,
    /// The outermost collection not kept (a map?, where it starts), and how many
    /// collections are open inside it.
    skipped: Option<(bool, Span)>,
    skipped_depth: usize,
    /// For each collection open inside the one not kept: for a map, whether its next
    /// node is a key (`None` for a sequence).
    skipped_keys: Vec<Option<bool>>,
    /// Where the text ends (in characters), when it does not end with a line break.
    unterminated_end: Option<usize>,
    /// In a streaming parse, the key of the root map whose map value is streamed.
    stream_key: Option<String>,
    /// A pair of the streamed map, completed by the last event and not yet handed out.
    streamed_pair: Option<(Node, Node)>,
    /// In a streaming parse, whether a document has started.
    document_started: bool,
    /// In a parse of one piece of a streamed map, the root map is the streamed one.
    stream_root: bool,
    /// Collections open around this parse in the whole document (a piece of a streamed
    /// map is read inside two), counted against go-yaml's depth limit.
    outer_depth: usize,
}

impl Builder {
    /// Whether the next node is a map's key.
    fn expects_key(&self) -> bool {
        matches!(self.stack.last(), Some(Frame::Map { key: None, .. }))
    }

    fn new(keep_depth: usize) -> Builder {
        Builder {
            documents: Vec::new(),
            stack: Vec::new(),
            anchors: HashMap::new(),
            expanded: 0,
            parsed: 0,
            keep_depth,
            skipped: None,
            skipped_depth: 0,
            skipped_keys: Vec::new(),
            unterminated_end: None,
            stream_key: None,
            streamed_pair: None,
            document_started: false,
            stream_root: false,
            outer_depth: 0,
        }
    }

    /// Whether a map opening now is the streamed one: the value of the stream key in the
    /// root map.
    fn stream_next_map(&self) -> bool {
        if self.stream_root && self.stack.is_empty() {
            return true;
        }
        let Some(stream_key) = &self.stream_key else {
            return false;
        };
        matches!(
            self.stack.as_slice(),
            [Frame::Map { key: Some(Node { kind: NodeKind::Str(key), .. }), .. }] if key == stream_key
        )
    }

    fn event(&mut self, event: Event<'_>, span: Span) -> Result<Shallow, Error> {
        let shallow = self.keep_depth != usize::MAX;
        match &event {
            Event::Alias(_) if shallow => return Ok(Shallow::NotPossible),
            Event::Scalar(text, ScalarStyle::Plain, _, None) if shallow && text == "<<" => {
                return Ok(Shallow::NotPossible);
            }
            _ => {}
        }
        if self.skipped.is_some() {
            if self.skip(event, span)? == Skipped::NullKey {
                // sigs.k8s.io/yaml refuses the whole document for it, with the key's
                // value in its words: the caller needs the whole tree.
                return Ok(Shallow::NotPossible);
            }
        } else {
            self.keep(event, span)?;
        }
        Ok(Shallow::Possible)
    }

    /// An event inside a collection that is not kept: only what can fail is checked,
    /// and whether it is a null map key.
    fn skip(&mut self, event: Event<'_>, span: Span) -> Result<Skipped, Error> {
        match event {
            Event::Scalar(text, style, _, tag) => {
                let is_key = self.skipped_node_done();
                if tag.is_some() {
                    let node = scalar(text, style, tag.as_deref(), &span)?;
                    if is_key && node.kind == NodeKind::Null {
                        return Ok(Skipped::NullKey);
                    }
                } else if is_key
                    && style == ScalarStyle::Plain
                    && matches!(resolve_plain(&text), Scalar::Null)
                {
                    return Ok(Skipped::NullKey);
                }
            }
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                if self.outer_depth + self.stack.len() + self.skipped_depth >= GO_YAML_MAX_DEPTH {
                    let is_map = matches!(event, Event::MappingStart(..));
                    return Err(too_deep(&span, is_map));
                }
                self.skipped_depth += 1;
                self.skipped_keys
                    .push(matches!(event, Event::MappingStart(..)).then_some(true));
            }
            Event::SequenceEnd | Event::MappingEnd => {
                self.skipped_keys.pop();
                self.skipped_node_done();
                self.skipped_depth -= 1;
                if self.skipped_depth == 0
                    && let Some((is_map, start)) = self.skipped.take()
                {
                    let kind = if is_map {
                        NodeKind::Map(Vec::new())
                    } else {
                        NodeKind::Seq(Vec::new())
                    };
                    self.finish(Node::new(kind, &start), 0, false)?;
                }
            }
            _ => {}
        }
        Ok(Skipped::Checked)
    }

    /// Notes that a node inside a collection not kept is complete; whether it was a
    /// map's key.
    fn skipped_node_done(&mut self) -> bool {
        match self.skipped_keys.last_mut() {
            Some(Some(awaits_key)) => {
                let was_key = *awaits_key;
                *awaits_key = !was_key;
                was_key
            }
            _ => false,
        }
    }

    fn keep(&mut self, event: Event<'_>, span: Span) -> Result<(), Error> {
        if let Event::SequenceStart(..) | Event::MappingStart(..) = event
            && self.stack.len() >= self.keep_depth
        {
            self.skipped = Some((matches!(event, Event::MappingStart(..)), span));
            self.skipped_depth = 1;
            self.skipped_keys.clear();
            self.skipped_keys
                .push(matches!(event, Event::MappingStart(..)).then_some(true));
            return Ok(());
        }
        match event {
            Event::Scalar(mut text, style, anchor, tag) => {
                self.parsed += 1;
                self.expanded += 1;
                // A block scalar whose last line ends the text without a line break has
                // no final line break for go-yaml; saphyr-parser adds one.
                if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded)
                    && self.unterminated_end == Some(span.end.index())
                    && text.ends_with('\n')
                {
                    text.to_mut().pop();
                }
                let merge = style == ScalarStyle::Plain && tag.is_none() && text == "<<";
                let node = scalar(text, style, tag.as_deref(), &span)?;
                self.finish(node, anchor, merge)
            }
            Event::SequenceStart(anchor, _) => self.open(
                Frame::Seq {
                    node: Node::new(NodeKind::Null, &span),
                    anchor,
                    items: Vec::new(),
                },
                &span,
            ),
            Event::MappingStart(anchor, _) => self.open(
                Frame::Map {
                    node: Node::new(NodeKind::Null, &span),
                    anchor,
                    pairs: Vec::new(),
                    key: None,
                    merge: false,
                    streamed: self.stream_next_map(),
                },
                &span,
            ),
            Event::SequenceEnd | Event::MappingEnd => {
                let (node, anchor) = match self.stack.pop() {
                    Some(Frame::Seq {
                        mut node,
                        anchor,
                        items,
                    }) => {
                        node.kind = NodeKind::Seq(items);
                        (node, anchor)
                    }
                    Some(Frame::Map {
                        mut node,
                        anchor,
                        pairs,
                        ..
                    }) => {
                        node.kind = NodeKind::Map(pairs);
                        (node, anchor)
                    }
                    None => {
                        return Err(Error::at(
                            span.start.line(),
                            span.start.col() + 1,
                            "unbalanced collection end",
                        ));
                    }
                };
                self.finish(node, anchor, false)
            }
            Event::Alias(id) => {
                let Some(target) = self.anchors.get(&id) else {
                    return Err(Error::at(
                        span.start.line(),
                        span.start.col() + 1,
                        "unknown anchor referenced by alias",
                    ));
                };
                self.expanded += target.subtree_size();
                let budget = 10_000 + 100 * self.parsed;
                if self.expanded > budget {
                    return Err(Error::at(
                        span.start.line(),
                        span.start.col() + 1,
                        "document contains excessive aliasing (aliases expand to too many nodes)",
                    ));
                }
                let node = target.clone();
                self.finish(node, 0, false)
            }
            Event::DocumentStart(_) => {
                self.anchors.clear();
                Ok(())
            }
            Event::DocumentEnd => Ok(()),
            Event::StreamStart | Event::StreamEnd | Event::Nothing => Ok(()),
        }
    }

    fn open(&mut self, frame: Frame, span: &Span) -> Result<(), Error> {
        if self.outer_depth + self.stack.len() >= GO_YAML_MAX_DEPTH {
            return Err(too_deep(span, matches!(frame, Frame::Map { .. })));
        }
        self.parsed += 1;
        self.expanded += 1;
        self.stack.push(frame);
        Ok(())
    }

    /// Attaches a completed node to its parent (or makes it a document).
    fn finish(&mut self, node: Node, anchor: usize, is_merge_key: bool) -> Result<(), Error> {
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut() {
            None => self.documents.push(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map {
                pairs,
                key,
                merge,
                streamed,
                ..
            }) => match key.take() {
                None => {
                    *merge = is_merge_key;
                    *key = Some(node);
                }
                Some(k) if *merge => {
                    *merge = false;
                    merge_into(pairs, &k, node)?;
                }
                Some(k) if *streamed => self.streamed_pair = Some((k, node)),
                Some(k) => pairs.push((k, node)),
            },
        }
        Ok(())
    }
}

/// A collection one level deeper than Helm reads: go-yaml reads it, but decoding the
/// JSON it becomes fails (`encoding/json` stops at 10,000 levels too).
fn too_deep(span: &Span, is_map: bool) -> Error {
    let kind = if is_map { "a map" } else { "a list" };
    Error::at(
        span.start.line(),
        span.start.col() + 1,
        format!("{kind} is nested deeper than {GO_YAML_MAX_DEPTH} levels"),
    )
}

/// Expands a merge key: the pairs of the merged map(s) are inserted where `<<` stood, so
/// keys written after it override them. In a list of maps earlier maps win, so they are
/// inserted last.
fn merge_into(pairs: &mut Vec<(Node, Node)>, key: &Node, mut value: Node) -> Result<(), Error> {
    let not_a_map = |node: &Node| {
        Error::at(
            node.line,
            node.column,
            "map merge requires a map or a list of maps as the value",
        )
    };
    match value.take_kind() {
        NodeKind::Map(merged) => pairs.extend(merged),
        NodeKind::Seq(items) => {
            for mut item in items.into_iter().rev() {
                match item.take_kind() {
                    NodeKind::Map(merged) => pairs.extend(merged),
                    _ => return Err(not_a_map(&item)),
                }
            }
        }
        _ => return Err(not_a_map(key)),
    }
    Ok(())
}

/// `text` is taken by value: the parser often hands over a string it built, which then
/// becomes the node's without a copy.
fn scalar(
    text: Cow<'_, str>,
    style: ScalarStyle,
    tag: Option<&Tag>,
    span: &Span,
) -> Result<Node, Error> {
    let kind = match tag {
        None if style == ScalarStyle::Plain => match resolve_plain(&text) {
            Scalar::Null => NodeKind::Null,
            Scalar::Bool(b) => NodeKind::Bool(b),
            Scalar::Int(i) => NodeKind::Int(i),
            Scalar::Uint(u) => NodeKind::Uint(u),
            Scalar::Float(f) => NodeKind::Float(f),
            Scalar::Str { .. } | Scalar::Merge => NodeKind::Str(text.into_owned()),
        },
        None => NodeKind::Str(text.into_owned()),
        Some(tag) if tag.is_yaml_core_schema() => core_tagged(&text, &tag.suffix, span)?,
        // Application tags (`!foo`) mean nothing to Helm: the text is kept as a string.
        Some(_) => NodeKind::Str(text.into_owned()),
    };
    Ok(Node::new(kind, span))
}

/// A scalar with an explicit `!!type` tag: the text must resolve to that type.
fn core_tagged(text: &str, suffix: &str, span: &Span) -> Result<NodeKind, Error> {
    let resolved = resolve_plain(text);
    let mismatch = || {
        Error::at(
            span.start.line(),
            span.start.col() + 1,
            format!("cannot decode `{text}` as a !!{suffix}"),
        )
    };
    Ok(match (suffix, resolved) {
        ("str" | "timestamp", _) => NodeKind::Str(text.to_owned()),
        ("binary", _) => {
            let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(compact)
                .map_err(|_| mismatch())?;
            NodeKind::Str(String::from_utf8_lossy(&bytes).into_owned())
        }
        ("int", Scalar::Int(i)) => NodeKind::Int(i),
        ("int", Scalar::Uint(u)) => NodeKind::Uint(u),
        ("float", Scalar::Float(f)) => NodeKind::Float(f),
        ("float", Scalar::Int(i)) => NodeKind::Float(i as f64),
        ("float", Scalar::Uint(u)) => NodeKind::Float(u as f64),
        ("bool", Scalar::Bool(b)) => NodeKind::Bool(b),
        ("null", Scalar::Null) => NodeKind::Null,
        ("int" | "float" | "bool" | "null", _) => return Err(mismatch()),
        _ => NodeKind::Str(text.to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str) -> Value {
        parse_node(text).unwrap().to_value().unwrap()
    }

    #[test]
    fn keys_follow_yaml_1_1_like_helm() {
        let v = value("y: yes\nn: ~\non: 1\n");
        let map = v.as_map().unwrap();
        assert_eq!(
            map.get("true"),
            Some(&Value::Float(1.0)),
            "`on: 1` overrides `y: yes`"
        );
        assert_eq!(map.get("false"), Some(&Value::Null));
        assert_eq!(
            map.len(),
            2,
            "`n` and `on` collapse into the keys false and true: {map:?}"
        );
    }

    #[test]
    fn numbers_become_floats_in_values() {
        assert_eq!(value("a: 1000000").lookup("a"), Some(&Value::Float(1e6)));
        assert_eq!(value("a: 0777").lookup("a"), Some(&Value::Float(511.0)));
        assert_eq!(value("a: '12'").lookup("a"), Some(&Value::from("12")));
        assert_eq!(value("a: !!str 12").lookup("a"), Some(&Value::from("12")));
        assert_eq!(
            value("a: 2001-12-14").lookup("a"),
            Some(&Value::from("2001-12-14"))
        );
    }

    #[test]
    fn duplicate_keys_last_one_wins() {
        assert_eq!(value("a: 1\na: 2\n").lookup("a"), Some(&Value::Float(2.0)));
    }

    #[test]
    fn merge_keys_and_aliases() {
        let v = value("base: &b {x: 1, z: 2}\nm:\n  x: 0\n  <<: *b\n  z: 3\nl: [*b]\n");
        assert_eq!(v.lookup("m.x"), Some(&Value::Float(1.0)));
        assert_eq!(v.lookup("m.z"), Some(&Value::Float(3.0)));
        assert_eq!(
            v.lookup("l").and_then(Value::as_seq).map(<[_]>::len),
            Some(1)
        );
        let v = value("a: &a {k: 1}\nb: &b {k: 2}\nm:\n  <<: [*a, *b]\n");
        assert_eq!(
            v.lookup("m.k"),
            Some(&Value::Float(1.0)),
            "earlier maps in a merge list win"
        );
    }

    #[test]
    fn alias_bombs_are_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..10 {
            let prev = level - 1;
            text.push_str(&format!("a{level}: &a{level} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"));
        }
        let err = parse_documents(&text).unwrap_err();
        assert!(err.message.contains("excessive aliasing"), "{err}");
    }

    #[test]
    fn deep_nesting_is_refused_not_a_crash() {
        let text = "[".repeat(10_000);
        assert!(parse_documents(&text).is_err());
    }

    #[test]
    fn syntax_errors_carry_a_position() {
        let err = parse_documents("a: b\n c: d: e\n").unwrap_err();
        assert_eq!(err.line, 2, "{err}");
    }

    #[test]
    fn go_string_conversion_of_scalars() {
        let node = parse_node("a: 1.10\nb: 1.0\nc: true\nd: 0x10\ne: ~\n").unwrap();
        let s = |k: &str| node.get(k).unwrap().to_go_string().unwrap();
        assert_eq!(s("a"), "1.1");
        assert_eq!(s("b"), "1");
        assert_eq!(s("c"), "true");
        assert_eq!(s("d"), "16");
        assert_eq!(s("e"), "");
    }

    #[test]
    fn infinity_is_refused_in_values() {
        assert!(parse_node("a: .inf").unwrap().to_value().is_err());
    }

    #[test]
    fn documents_are_split() {
        let docs = parse_documents("a: 1\n---\n---\nb: 2\n").unwrap();
        assert_eq!(docs.len(), 3);
        assert_eq!(docs[1].kind, NodeKind::Null);
        assert!(parse_documents("").unwrap().is_empty());
    }

    /// Cuts every collection deeper than `depth` down to an empty one, as the
    /// depth-limited parse returns it.
    fn cut(node: &Node, depth: usize) -> Node {
        let kind = match &node.kind {
            NodeKind::Seq(_) if depth == 0 => NodeKind::Seq(Vec::new()),
            NodeKind::Map(_) if depth == 0 => NodeKind::Map(Vec::new()),
            NodeKind::Seq(items) => {
                NodeKind::Seq(items.iter().map(|i| cut(i, depth - 1)).collect())
            }
            NodeKind::Map(pairs) => NodeKind::Map(
                pairs
                    .iter()
                    .map(|(k, v)| (cut(k, depth - 1), cut(v, depth - 1)))
                    .collect(),
            ),
            other => other.clone(),
        };
        Node {
            kind,
            ..node.clone()
        }
    }

    const DEEP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    a: '1'\n    b: {c: [1, 2]}\nspec:\n  x:\n    y:\n      z: [1, {w: 2}]\n---\n- [a, [b]]\n";

    #[test]
    fn a_depth_limited_parse_keeps_the_top_levels() {
        let full = parse_documents(DEEP).unwrap();
        let shallow = parse_documents_to_depth(DEEP, 3).unwrap();
        let expected: Vec<Node> = full.iter().map(|d| cut(d, 3)).collect();
        assert_eq!(shallow, expected);
        // The annotation holding a map is still a map, so a caller can refuse it.
        let b = shallow[0]
            .get("metadata")
            .unwrap()
            .get("annotations")
            .unwrap()
            .get("b");
        assert_eq!(b.unwrap().kind, NodeKind::Map(Vec::new()));
    }

    #[test]
    fn a_depth_limited_parse_fails_where_the_full_parse_fails() {
        for text in [
            "a:\n  b:\n    c:\n      d: [1, 2\n",
            "a:\n  b:\n    c:\n      d: !!int nope\n",
            "a:\n  b:\n    c:\n      d: \"unterminated\n",
            &"[".repeat(600),
        ] {
            let full = parse_documents(text).unwrap_err();
            let shallow = parse_documents_to_depth(text, 2).unwrap_err();
            assert_eq!(shallow.to_string(), full.to_string(), "{text}");
        }
    }

    #[test]
    fn aliases_and_merge_keys_are_parsed_in_full() {
        for text in [
            "deep: {a: {b: &x {c: 1}}}\nmetadata: *x\n",
            "metadata:\n  <<: {annotations: {a: '1'}}\n",
        ] {
            assert_eq!(
                parse_documents_to_depth(text, 2).unwrap(),
                parse_documents(text).unwrap(),
                "{text}"
            );
        }
    }

    #[test]
    fn a_streamed_map_is_handed_out_pair_by_pair() {
        let text = "a: 1\nentries:\n  x: [1, {y: 2}]\n  'z': {w: null}\nb: [entries]\n";
        let mut pairs = Vec::new();
        let root = parse_node_streaming(text, "entries", &mut |k, v| {
            pairs.push((k, v));
            true
        })
        .unwrap();
        let mut whole = parse_node(text).unwrap();
        let NodeKind::Map(top) = &mut whole.kind else {
            panic!("a map");
        };
        let NodeKind::Map(expected) = top[1].1.take_kind() else {
            panic!("a map");
        };
        top[1].1.kind = NodeKind::Map(Vec::new());
        assert_eq!(pairs, expected);
        assert_eq!(root, whole, "the root keeps the streamed map, empty");
    }

    #[test]
    fn streaming_gives_up_on_what_ties_parts_together() {
        for text in [
            "entries: {a: &x 1, b: *x}\n",
            "entries: {a: !!str 1}\n",
            "entries:\n  a: {<<: {b: 1}}\n",
            "entries: {}\n---\nb: 1\n",
            "- entries\n",
            "entries: [\n",
        ] {
            let streamed = parse_node_streaming(text, "entries", &mut |_, _| true);
            assert!(streamed.is_err(), "{text:?}");
        }
        let stopped = parse_node_streaming("entries: {a: 1}\n", "entries", &mut |_, _| false);
        assert_eq!(stopped, Err(Unstreamable::Stopped));
    }
}
