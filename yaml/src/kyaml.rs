//! YAML documents read and written back as Helm 4's post-render step does it, through
//! kustomize's kyaml (go-yaml v3 nodes): styles kept (quotes, flow collections, literal
//! and folded blocks), comments kept (head comments of keys and items, comments at the
//! end of a line), everything re-indented by two with sequences in their parent's column
//! (`key:\n- a`), plain scalars that ran over several lines joined on one, complex keys
//! written as plain ones, and documents that hold only comments dropped. Lines are never
//! wrapped.
//!
//! What it does not keep as go-yaml v3 does: comments at the end of a block (foot
//! comments) are dropped, and anchors and aliases are refused.

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

/// A node of a document, with the style and comments it was written with.
#[derive(Debug, Clone, PartialEq)]
pub struct YNode {
    pub kind: YKind,
    /// An explicit tag, as written (`!!binary`).
    pub tag: Option<String>,
    /// Whole-line comments before the node (with their `#`).
    pub head: Vec<String>,
    /// The comment after the node on its last line.
    pub line_comment: Option<String>,
    start_line: usize,
    end_line: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum YKind {
    Scalar {
        value: String,
        style: Style,
    },
    Seq {
        items: Vec<YNode>,
        flow: bool,
    },
    Map {
        pairs: Vec<(YNode, YNode)>,
        flow: bool,
    },
}

/// How a scalar is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

impl YNode {
    /// A plain or quoted string scalar.
    pub fn scalar(value: &str, style: Style) -> YNode {
        YNode {
            kind: YKind::Scalar {
                value: value.to_owned(),
                style,
            },
            tag: None,
            head: Vec::new(),
            line_comment: None,
            start_line: 0,
            end_line: 0,
        }
    }

    /// An empty block mapping.
    pub fn map() -> YNode {
        YNode {
            kind: YKind::Map {
                pairs: Vec::new(),
                flow: false,
            },
            ..YNode::scalar("", Style::Plain)
        }
    }

    /// The value of the scalar key `key` in a mapping.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut YNode> {
        match &mut self.kind {
            YKind::Map { pairs, .. } => pairs
                .iter_mut()
                .find(|(k, _)| k.scalar_value() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value of the scalar key `key` in a mapping.
    pub fn get(&self, key: &str) -> Option<&YNode> {
        match &self.kind {
            YKind::Map { pairs, .. } => pairs
                .iter()
                .find(|(k, _)| k.scalar_value() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn scalar_value(&self) -> Option<&str> {
        match &self.kind {
            YKind::Scalar { value, .. } => Some(value),
            _ => None,
        }
    }

    /// Sets `key` to `value` in a mapping: replaced where it is, else added at the end.
    pub fn set(&mut self, key: &str, value: YNode) {
        if let Some(slot) = self.get_mut(key) {
            *slot = value;
            return;
        }
        if let YKind::Map { pairs, .. } = &mut self.kind {
            pairs.push((YNode::scalar(key, Style::Plain), value));
        }
    }

    /// Removes `key` from a mapping; whether it was there.
    pub fn remove(&mut self, key: &str) -> bool {
        if let YKind::Map { pairs, .. } = &mut self.kind {
            let before = pairs.len();
            pairs.retain(|(k, _)| k.scalar_value() != Some(key));
            return pairs.len() != before;
        }
        false
    }

    /// Whether this is a mapping with no pairs.
    pub fn is_empty_map(&self) -> bool {
        matches!(&self.kind, YKind::Map { pairs, .. } if pairs.is_empty())
    }

    pub fn is_map(&self) -> bool {
        matches!(self.kind, YKind::Map { .. })
    }
}

/// Why a stream could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KyamlError {
    #[error("yaml: line {line}: {message}")]
    Syntax { line: usize, message: String },
    #[error("yaml: line {line}: anchors and aliases are not supported here")]
    Alias { line: usize },
}

/// Reads every document of a stream; documents with no content (empty, or only
/// comments) are left out, as kyaml leaves them.
pub fn parse_stream(text: &str) -> Result<Vec<YNode>, KyamlError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut docs = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut root: Option<YNode> = None;
    let mut doc_first_line = 1;
    let mut events: Vec<(Event<'_>, Span)> = Vec::new();
    for item in Parser::new_from_str(text) {
        match item {
            Ok(pair) => events.push(pair),
            Err(error) => {
                return Err(KyamlError::Syntax {
                    line: error.marker().line(),
                    message: error.info().to_owned(),
                });
            }
        }
    }
    for (event, span) in events {
        let line = span.start.line();
        let is_map_start = matches!(event, Event::MappingStart(..));
        match event {
            Event::DocumentStart(explicit) => {
                root = None;
                if explicit {
                    doc_first_line = line;
                }
            }
            Event::DocumentEnd => {
                if let Some(mut node) = root.take() {
                    attach_comments(&mut node, &lines, doc_first_line, span.start.line());
                    if !is_null(&node) {
                        docs.push(node);
                    }
                }
                doc_first_line = span.end.line().max(span.start.line());
            }
            Event::Alias(_) => return Err(KyamlError::Alias { line }),
            Event::Scalar(value, style, anchor, tag) => {
                if anchor != 0 {
                    return Err(KyamlError::Alias { line });
                }
                let style = match style {
                    ScalarStyle::Plain => Style::Plain,
                    ScalarStyle::SingleQuoted => Style::SingleQuoted,
                    ScalarStyle::DoubleQuoted => Style::DoubleQuoted,
                    ScalarStyle::Literal => Style::Literal,
                    ScalarStyle::Folded => Style::Folded,
                };
                let end_line = match style {
                    Style::Literal | Style::Folded => {
                        line + value.trim_end_matches('\n').lines().count().max(1)
                    }
                    _ => span.end.line().max(line),
                };
                let mut node = YNode::scalar(&value, style);
                node.tag = tag.map(|t| tag_text(&t));
                node.start_line = line;
                node.end_line = end_line;
                push(&mut stack, &mut root, node);
            }
            Event::SequenceStart(anchor, tag) | Event::MappingStart(anchor, tag) => {
                if anchor != 0 {
                    return Err(KyamlError::Alias { line });
                }
                let first = char_at(&lines, line, span.start.col());
                let is_map = is_map_start;
                let flow = first == Some(if is_map { '{' } else { '[' });
                let kind = if is_map {
                    YKind::Map {
                        pairs: Vec::new(),
                        flow,
                    }
                } else {
                    YKind::Seq {
                        items: Vec::new(),
                        flow,
                    }
                };
                let mut node = YNode {
                    kind,
                    ..YNode::scalar("", Style::Plain)
                };
                node.tag = tag.map(|t| tag_text(&t));
                node.start_line = line;
                stack.push(Frame {
                    node,
                    pending_key: None,
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let mut frame = stack.pop().expect("a collection is open");
                frame.node.end_line = span.end.line().max(span.start.line());
                if let YKind::Seq { flow: true, .. } | YKind::Map { flow: true, .. } =
                    frame.node.kind
                {
                    frame.node.end_line = span.start.line();
                } else {
                    frame.node.end_line = last_line(&frame.node);
                }
                push(&mut stack, &mut root, frame.node);
            }
            Event::StreamStart | Event::StreamEnd | Event::Nothing => {}
        }
    }
    Ok(docs)
}

struct Frame {
    node: YNode,
    pending_key: Option<YNode>,
}

fn push(stack: &mut [Frame], root: &mut Option<YNode>, node: YNode) {
    let Some(frame) = stack.last_mut() else {
        *root = Some(node);
        return;
    };
    match &mut frame.node.kind {
        YKind::Seq { items, .. } => items.push(node),
        YKind::Map { pairs, .. } => match frame.pending_key.take() {
            None => frame.pending_key = Some(node),
            Some(key) => pairs.push((key, node)),
        },
        YKind::Scalar { .. } => unreachable!("scalars hold nothing"),
    }
}

fn last_line(node: &YNode) -> usize {
    match &node.kind {
        YKind::Scalar { .. } => node.end_line,
        YKind::Seq { items, .. } => items.last().map_or(node.start_line, last_line),
        YKind::Map { pairs, .. } => pairs.last().map_or(node.start_line, |(_, v)| last_line(v)),
    }
}

fn is_null(node: &YNode) -> bool {
    matches!(&node.kind, YKind::Scalar { value, style: Style::Plain } if value.is_empty() || value == "null" || value == "~")
}

fn tag_text(tag: &saphyr_parser::Tag) -> String {
    if tag.handle == "tag:yaml.org,2002:" {
        format!("!!{}", tag.suffix)
    } else {
        format!("{}{}", tag.handle, tag.suffix)
    }
}

fn char_at(lines: &[&str], line: usize, col: usize) -> Option<char> {
    lines.get(line.checked_sub(1)?)?.chars().nth(col)
}

/// Finds the comments of a document's lines and gives them to the nodes: a comment on a
/// line of its own to the next node (a key, an item or the document), one after content
/// to the scalar (or flow collection) that ends on that line, else to the key there.
fn attach_comments(root: &mut YNode, lines: &[&str], first: usize, last: usize) {
    let mut inside = std::collections::HashSet::new();
    mark_multiline(root, &mut inside);
    let mut pending: Vec<String> = Vec::new();
    let mut heads: Vec<(usize, Vec<String>)> = Vec::new();
    let mut trailing: Vec<(usize, String)> = Vec::new();
    let last = last.min(lines.len());
    for number in first.max(1)..=last {
        if inside.contains(&number) {
            continue;
        }
        let text = lines[number - 1];
        let trimmed = text.trim_start();
        if trimmed.starts_with('#') {
            pending.push(trimmed.trim_end().to_owned());
            continue;
        }
        if trimmed.is_empty() || trimmed == "---" || trimmed.starts_with("--- ") {
            continue;
        }
        if !pending.is_empty() {
            heads.push((number, std::mem::take(&mut pending)));
        }
        if let Some(comment) = line_comment(text) {
            trailing.push((number, comment));
        }
    }
    for (line, comments) in heads {
        if let Some(node) = first_starting_at(root, line) {
            node.head = comments;
        }
    }
    for (line, comment) in trailing {
        if let Some(node) = ending_at(root, line) {
            node.line_comment = Some(comment);
        }
    }
}

/// Lines inside multi-line scalars, where `#` is text.
fn mark_multiline(node: &YNode, inside: &mut std::collections::HashSet<usize>) {
    match &node.kind {
        YKind::Scalar { .. } => {
            for line in node.start_line + 1..=node.end_line {
                inside.insert(line);
            }
        }
        YKind::Seq { items, .. } => items.iter().for_each(|n| mark_multiline(n, inside)),
        YKind::Map { pairs, .. } => pairs.iter().for_each(|(k, v)| {
            mark_multiline(k, inside);
            mark_multiline(v, inside);
        }),
    }
}

/// The comment at the end of a line of content: `#` after a space, outside quotes.
fn line_comment(text: &str) -> Option<String> {
    let mut quote: Option<char> = None;
    let mut previous = ' ';
    for (at, c) in text.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if (c == '"' || c == '\'')
                && matches!(previous, ' ' | '[' | '{' | ',' | ':' | '-') =>
            {
                quote = Some(c)
            }
            None if c == '#' && (previous == ' ' || previous == '\t') => {
                return Some(text[at..].trim_end().to_owned());
            }
            None => {}
        }
        previous = c;
    }
    None
}

/// The outermost node, in document order, that starts on `line` (keys and items are
/// where head comments go).
fn first_starting_at(node: &mut YNode, line: usize) -> Option<&mut YNode> {
    if node.start_line == line {
        return Some(node);
    }
    match &mut node.kind {
        YKind::Scalar { .. } => None,
        YKind::Seq { items, .. } => items.iter_mut().find_map(|n| first_starting_at(n, line)),
        YKind::Map { pairs, .. } => pairs.iter_mut().find_map(|(k, v)| {
            if k.start_line == line {
                Some(k)
            } else {
                first_starting_at(v, line)
            }
        }),
    }
}

/// The node a comment at the end of `line` belongs to: the last scalar or flow
/// collection ending there, else a key on that line.
fn ending_at(node: &mut YNode, line: usize) -> Option<&mut YNode> {
    let flow = matches!(
        node.kind,
        YKind::Seq { flow: true, .. } | YKind::Map { flow: true, .. }
    );
    if flow && node.end_line == line {
        return Some(node);
    }
    if matches!(node.kind, YKind::Scalar { .. }) {
        return (node.end_line == line || node.start_line == line).then_some(node);
    }
    match &mut node.kind {
        YKind::Scalar { .. } => None,
        YKind::Seq { items, .. } => items.iter_mut().rev().find_map(|n| ending_at(n, line)),
        YKind::Map { pairs, .. } => {
            for (key, value) in pairs.iter_mut().rev() {
                let value_is_block_collection = matches!(
                    value.kind,
                    YKind::Seq { flow: false, .. } | YKind::Map { flow: false, .. }
                );
                if value_is_block_collection && key.start_line == line {
                    return Some(key);
                }
                if let Some(found) = ending_at(value, line) {
                    return Some(found);
                }
                if key.start_line == line {
                    return Some(key);
                }
            }
            None
        }
    }
}

/// Writes documents as kyaml's writer does: each document's text, joined by `---`.
pub fn emit_stream(docs: &[YNode]) -> String {
    let mut out = String::new();
    for (i, doc) in docs.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&emit_document(doc));
    }
    out
}

/// One document's text, ending in a newline.
pub fn emit_document(doc: &YNode) -> String {
    let mut out = String::new();
    for comment in &doc.head {
        out.push_str(comment);
        out.push('\n');
    }
    match &doc.kind {
        YKind::Map { flow: false, pairs } if !pairs.is_empty() => write_map(&mut out, pairs, 0),
        YKind::Seq { flow: false, items } if !items.is_empty() => write_seq(&mut out, items, 0),
        _ => {
            out.push_str(&inline(doc));
            push_comment(&mut out, doc);
            out.push('\n');
        }
    }
    out
}

fn push_comment(out: &mut String, node: &YNode) {
    if let Some(comment) = &node.line_comment {
        out.push(' ');
        out.push_str(comment);
    }
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

fn write_head(out: &mut String, node: &YNode, indent: usize) {
    for comment in &node.head {
        pad(out, indent);
        out.push_str(comment);
        out.push('\n');
    }
}

fn tag_prefix(node: &YNode) -> String {
    node.tag
        .as_ref()
        .map(|t| format!("{t} "))
        .unwrap_or_default()
}

fn write_map(out: &mut String, pairs: &[(YNode, YNode)], indent: usize) {
    for (i, (key, value)) in pairs.iter().enumerate() {
        if i > 0 {
            pad(out, indent);
        }
        write_pair(out, key, value, indent);
    }
}

/// `key: value` at the cursor, which is at `indent` (the head comment of the key first,
/// at the same indent, except for the first pair of an item whose `- ` is written).
fn write_pair(out: &mut String, key: &YNode, value: &YNode, indent: usize) {
    if !key.head.is_empty() {
        // The cursor is after the indent; the comments go on lines before it.
        let at = out.len() - indent;
        let mut comments = String::new();
        write_head(&mut comments, key, indent);
        out.insert_str(at, &comments);
    }
    out.push_str(&inline(key));
    out.push(':');
    write_value(out, value, indent, key);
}

fn write_value(out: &mut String, value: &YNode, indent: usize, key: &YNode) {
    match &value.kind {
        YKind::Map { flow: false, pairs } if !pairs.is_empty() => {
            push_comment(out, key);
            out.push('\n');
            pad(out, indent + 2);
            write_map(out, pairs, indent + 2);
        }
        YKind::Seq { flow: false, items } if !items.is_empty() => {
            push_comment(out, key);
            out.push('\n');
            pad(out, indent);
            write_seq(out, items, indent);
        }
        YKind::Scalar {
            value: text,
            style: Style::Plain,
        } if text.is_empty() && value.tag.is_none() => {
            push_comment(out, value);
            push_comment(out, key);
            out.push('\n');
        }
        YKind::Scalar {
            value: text,
            style: style @ (Style::Literal | Style::Folded),
        } => {
            out.push(' ');
            out.push_str(&tag_prefix(value));
            write_block_scalar(out, text, *style, indent + 2, value);
        }
        _ => {
            out.push(' ');
            out.push_str(&inline(value));
            push_comment(out, value);
            out.push('\n');
        }
    }
}

fn write_seq(out: &mut String, items: &[YNode], indent: usize) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 || !item.head.is_empty() {
            if i == 0 {
                // The cursor is after the indent: the comments go before it.
                let at = out.len() - indent;
                let mut comments = String::new();
                write_head(&mut comments, item, indent);
                out.insert_str(at, &comments);
            } else {
                write_head(out, item, indent);
                pad(out, indent);
            }
        }
        out.push_str("- ");
        match &item.kind {
            YKind::Map { flow: false, pairs } if !pairs.is_empty() => {
                write_map(out, pairs, indent + 2);
            }
            YKind::Seq { flow: false, items } if !items.is_empty() => {
                write_seq(out, items, indent + 2);
            }
            YKind::Scalar {
                value: text,
                style: style @ (Style::Literal | Style::Folded),
            } => {
                out.push_str(&tag_prefix(item));
                write_block_scalar(out, text, *style, indent + 2, item);
            }
            _ => {
                out.push_str(&inline(item));
                push_comment(out, item);
                out.push('\n');
            }
        }
    }
}

/// A literal or folded block: its indicator (with go-yaml's chomping and indentation
/// hints), then its lines at `indent`.
fn write_block_scalar(out: &mut String, text: &str, style: Style, indent: usize, node: &YNode) {
    out.push(if style == Style::Literal { '|' } else { '>' });
    if text.starts_with(' ') || text.starts_with('\n') {
        out.push('2');
    }
    let trailing = text.len() - text.trim_end_matches('\n').len();
    if trailing == 0 {
        out.push('-');
    } else if trailing > 1 || text.is_empty() {
        out.push('+');
    }
    push_comment(out, node);
    out.push('\n');
    let body = text.strip_suffix('\n').unwrap_or(text);
    let mut previous_text = false;
    for line in body.split('\n') {
        if style == Style::Folded && previous_text && !line.is_empty() && !line.starts_with(' ') {
            // A single line break in a folded block reads as a space: go-yaml writes
            // an empty line to keep it a break.
            out.push('\n');
        }
        if !line.is_empty() {
            pad(out, indent);
            out.push_str(line);
        }
        out.push('\n');
        previous_text = !line.is_empty() && !line.starts_with(' ');
    }
}

/// A scalar or a flow collection on one line.
fn inline(node: &YNode) -> String {
    let text = match &node.kind {
        YKind::Scalar { value, style } => match style {
            Style::Plain => value.clone(),
            Style::SingleQuoted => format!("'{}'", value.replace('\'', "''")),
            Style::DoubleQuoted => double_quoted(value),
            // A block scalar where only a line fits (a key, inside flow): go-yaml falls
            // back to double quotes.
            Style::Literal | Style::Folded => double_quoted(value),
        },
        YKind::Seq { items, .. } => {
            let parts: Vec<String> = items.iter().map(inline).collect();
            format!("[{}]", parts.join(", "))
        }
        YKind::Map { pairs, .. } => {
            let parts: Vec<String> = pairs
                .iter()
                .map(|(k, v)| {
                    let value = inline(v);
                    if value.is_empty() {
                        format!("{}:", inline(k))
                    } else {
                        format!("{}: {value}", inline(k))
                    }
                })
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
    };
    format!("{}{text}", tag_prefix(node))
}

/// go-yaml's double-quoted scalar: its escapes for quotes, backslashes, control
/// characters and the Unicode line breaks.
fn double_quoted(value: &str) -> String {
    let mut out = String::from("\"");
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{b}' => out.push_str("\\v"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '\u{1b}' => out.push_str("\\e"),
            '\u{85}' => out.push_str("\\N"),
            '\u{a0}' => out.push_str("\\_"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            '\u{feff}' => out.push_str("\\uFEFF"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02X}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(text: &str) -> String {
        emit_stream(&parse_stream(text).unwrap())
    }

    #[test]
    fn reindents_with_sequences_in_their_parents_column() {
        assert_eq!(
            round_trip(
                "a:\n    b:\n        - x\n        -   y: 1\n            z: 2\n        - - n\n          - m\n"
            ),
            "a:\n  b:\n  - x\n  - y: 1\n    z: 2\n  - - n\n    - m\n"
        );
    }

    #[test]
    fn keeps_styles_and_comments() {
        let text = "# head\nk: v # after\nq: \"1\"\ns: 'it''s'\nf: {x: \"1\", y: two}\nl: ['a']\ne:\nlit: |\n    one\n      two\nfold: >-\n    a\n    b\nm: plain\n    continued\n# before n\nn: []\n";
        assert_eq!(
            round_trip(text),
            "# head\nk: v # after\nq: \"1\"\ns: 'it''s'\nf: {x: \"1\", y: two}\nl: ['a']\ne:\nlit: |\n  one\n    two\nfold: >-\n  a b\nm: plain continued\n# before n\nn: []\n"
        );
    }

    #[test]
    fn comment_only_documents_are_dropped() {
        assert_eq!(
            round_trip("a: 1\n---\n# nothing\n---\nb: 2\n"),
            "a: 1\n---\nb: 2\n"
        );
    }

    #[test]
    fn double_quotes_are_escaped_as_go_yaml_does() {
        assert_eq!(double_quoted("a\"b\\\t\u{1}"), "\"a\\\"b\\\\\\t\\x01\"");
    }
}
