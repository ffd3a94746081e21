//! saphyr-parser's errors said as go-yaml says them, at the position go-yaml names.
//!
//! Helm prints go-yaml's text (`yaml: line N: problem`), and go-yaml's line depends on
//! the kind of error: a scanner error names the line of the character it stopped at
//! (1-based), a parser error the line of the token it did not expect (0-based); see
//! [`Error::go_yaml_message`]. The message says which kind it is by its context
//! (`while scanning …` or `while parsing …`), so each translation below picks go-yaml's
//! context as well as its words. Where saphyr-parser stops somewhere else than go-yaml
//! (at the start of a quoted scalar rather than where it ran out), the position is
//! found again in the text.

use saphyr_parser::ScanError;

use super::{GO_YAML_MAX_DEPTH, SAPHYR_MAX_FLOW_DEPTH};
use crate::error::Error;

/// `error` as go-yaml reports the same problem in `text` (the text saphyr-parser read).
pub(super) fn said_as_go_yaml(error: &ScanError, text: &str) -> Error {
    let marker = error.marker();
    let (line, column) = (marker.line(), marker.col() + 1);
    let at = |line: usize, message: &str| Error::at(line, column, message);
    let offset = byte_offset(text, marker.index());
    match error.info() {
        "recursion limit exceeded" => at(
            line,
            &format!(
                "flow collections ([...] and {{...}}) are nested deeper than {SAPHYR_MAX_FLOW_DEPTH} levels, which chartkit's YAML parser cannot read (go-yaml allows {GO_YAML_MAX_DEPTH}); write the inner levels in block style"
            ),
        ),
        // go-yaml stops where the text ends; saphyr-parser names the scalar's start.
        message @ "while scanning a quoted scalar, found unexpected end of stream" => {
            at(end_line(text), message)
        }
        message @ "while scanning a quoted scalar, found unexpected document indicator" => {
            at(indicator_line(text, offset).unwrap_or(line), message)
        }
        "while parsing a quoted scalar, did not find expected hexadecimal number" => at(
            line,
            // Sic: go-yaml's spelling.
            "while scanning a quoted scalar, did not find expected hexdecimal number",
        ),
        "while parsing a tag, found an invalid escape sequence" => {
            at(line, "while scanning a tag, did not find URI escaped octet")
        }
        "the handle wasn't declared" => {
            at(line, "while parsing a node, found undefined tag handle")
        }
        "the TAG directive must only be given at most once per handle in the same document" => at(
            line,
            "while parsing a document start, found duplicate %TAG directive",
        ),
        // go-yaml reads `-` in a flow collection as a block entry, which the parser
        // then finds where it expects a node.
        r#""-" is only valid inside a block"# => at(
            line,
            "while parsing a node, did not find expected node content",
        ),
        // A `]` or `}` outside any flow collection is a token the block parser does not
        // expect where it is.
        "misplaced bracket" => at(line, misplaced_bracket(text, offset)),
        // A `:` after a flow collection's entry that cannot be a key (it spans lines):
        // go-yaml's parser finds a value where it wants a separator or the end.
        "illegal placement of ':' indicator" => at(
            line,
            match innermost_flow(&text[..offset]) {
                Some(b'{') => "while parsing a flow mapping, did not find expected ',' or '}'",
                _ => "while parsing a flow sequence, did not find expected ',' or ']'",
            },
        ),
        // A quoted scalar that spans lines cannot be a key: its `:` is a value indicator
        // where none may be.
        "invalid trailing content after double-quoted scalar"
            if text[offset..]
                .trim_start_matches([' ', '\t'])
                .starts_with(':') =>
        {
            at(
                line,
                if key_is_required(text, offset) {
                    "while scanning a simple key, could not find expected ':'"
                } else {
                    "while scanning a simple key, mapping values are not allowed in this context"
                },
            )
        }
        // Errors inside quoted scalars and tags are the scanner's in go-yaml.
        message
            if message.starts_with("while parsing a quoted scalar, ")
                || message.starts_with("while parsing a tag, ") =>
        {
            at(
                line,
                &message.replacen("while parsing", "while scanning", 1),
            )
        }
        message if message.starts_with("unexpected character: ") => at(
            line,
            "while scanning for the next token, found character that cannot start any token",
        ),
        other => at(line, other),
    }
}

/// go-yaml's error for a key left out before a `:` (`: value`), which YAML 1.2 reads as
/// an empty key: the character at `at` (in characters) is that `:`, and no `?` comes
/// before it. go-yaml's parser wanted a key there, or in a flow mapping a node.
pub(super) fn empty_key(text: &str, at: usize) -> Option<Error> {
    let offset = byte_offset(text, at);
    if !text[offset..].starts_with(':') || text[..offset].trim_end().ends_with('?') {
        return None;
    }
    let line = text[..offset].matches('\n').count() + 1;
    let column = offset - text[..offset].rfind('\n').map_or(0, |n| n + 1) + 1;
    let message = match innermost_flow(&text[..offset]) {
        Some(_) => "while parsing a flow mapping, did not find expected node content",
        None => "while parsing a block mapping, did not find expected key",
    };
    Some(Error::at(line, column, message))
}

/// The byte offset of the `chars`th character of `text`.
pub(super) fn byte_offset(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(offset, _)| offset)
}

/// The 1-based line where `text` ends.
fn end_line(text: &str) -> usize {
    let bytes = text.as_bytes();
    let lone_returns = memchr::memchr_iter(b'\r', bytes)
        .filter(|&at| bytes.get(at + 1) != Some(&b'\n'))
        .count();
    memchr::memchr_iter(b'\n', bytes).count() + lone_returns + 1
}

/// The 1-based line of the first `---` or `...` line after `offset`.
fn indicator_line(text: &str, offset: usize) -> Option<usize> {
    let before = text[..offset].matches('\n').count();
    text[offset..]
        .split('\n')
        .enumerate()
        .skip(1)
        .find(|(_, line)| {
            (line.starts_with("---") || line.starts_with("..."))
                && line[3..].chars().next().is_none_or(|c| c.is_whitespace())
        })
        .map(|(index, _)| before + index + 1)
}

/// Whether go-yaml requires the double-quoted key that ends before `offset` to be a key:
/// it starts a line at the indentation of the block mapping it is in, so a `:` must
/// follow on the same line (else go-yaml cannot find the `:` it expected).
fn key_is_required(text: &str, offset: usize) -> bool {
    let Some(close) = text[..offset].rfind('"') else {
        return false;
    };
    let bytes = text.as_bytes();
    let mut open = close;
    loop {
        match text[..open].rfind('"') {
            Some(at) if at > 0 && bytes[at - 1] == b'\\' => open = at,
            Some(at) => break open = at,
            None => return false,
        }
    }
    let line_start = text[..open].rfind('\n').map_or(0, |n| n + 1);
    let column = open - line_start;
    if !text[line_start..open].trim().is_empty() {
        return false;
    }
    let indent = |line: &str| line.len() - line.trim_start_matches(' ').len();
    text[..line_start]
        .lines()
        .rev()
        .filter(|line| {
            let content = line.trim_start();
            !content.is_empty() && !content.starts_with('#')
        })
        .find(|line| indent(line) <= column)
        .is_some_and(|line| indent(line) == column && !line.starts_with("---"))
}

/// What go-yaml's parser says on meeting `]` or `}` at `offset`, outside flow
/// collections: it wanted the document's node if nothing came before it, else the
/// next entry of the block collection the document is.
fn misplaced_bracket(text: &str, offset: usize) -> &'static str {
    let document = match text[..offset].rfind("\n---") {
        Some(at) => &text[at + 4..offset],
        None => text[..offset]
            .strip_prefix("---")
            .unwrap_or(&text[..offset]),
    };
    let content: Vec<&str> = document
        .lines()
        .map(|line| match line.find(" #") {
            Some(at) => &line[..at],
            None if line.trim_start().starts_with('#') => "",
            None => line,
        })
        .filter(|line| !line.trim().is_empty())
        .collect();
    let awaits_node = content
        .last()
        .is_none_or(|line| line.trim_end().ends_with([':', '-', '?']));
    match content.first() {
        _ if awaits_node => "while parsing a node, did not find expected node content",
        Some(first) if first.trim_start().starts_with('-') => {
            "while parsing a block collection, did not find expected '-' indicator"
        }
        _ => "while parsing a block mapping, did not find expected key",
    }
}

/// The bracket of the innermost flow collection open at the end of `text` (quoted
/// scalars and comments skipped, roughly as a scanner would).
fn innermost_flow(text: &str) -> Option<u8> {
    let mut open = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut previous = b'\n';
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'[' | b'{' => open.push(b),
            b']' | b'}' => {
                open.pop();
            }
            b'#' if previous.is_ascii_whitespace() => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'"' | b'\'' if b" \t\n[{,:".contains(&previous) => {
                i += 1;
                while i < bytes.len() && bytes[i] != b {
                    i += if b == b'"' && bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            _ => {}
        }
        previous = b;
        i += 1;
    }
    open.pop()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_innermost_flow_collection_skips_quotes_and_comments() {
        assert_eq!(innermost_flow("a: [1, {b: \"]\", c: '}'"), Some(b'{'));
        assert_eq!(innermost_flow("a: [1 # ]\n"), Some(b'['));
        assert_eq!(innermost_flow("a: [1]\n"), None);
    }

    #[test]
    fn document_indicators_and_ends_are_found_by_line() {
        assert_eq!(end_line("a\nb\n"), 3);
        assert_eq!(end_line("a"), 1);
        assert_eq!(indicator_line("a: 'x\n...\n'", 3), Some(2));
    }
}
