//! Flow collections nested deeper than saphyr-parser can count.
//!
//! saphyr-parser keeps the number of open flow collections in a `u8` and refuses a
//! 256th `[` or `{`; go-yaml reads 10,000 levels, and Helm with it. Rather than carry a
//! patched copy of the parser for texts no one writes by hand, such a text is read in
//! parts: every flow collection that opens at [`CUT_DEPTH`] is cut out and read on its
//! own (recursively, if it is deeper still), a placeholder scalar stands in its place
//! while the rest is read, and the parts' nodes then take the placeholders' places.
//! go-yaml's own limit is checked on the whole text before (`goscan::flow_depth_error`).

use std::collections::HashMap;

use super::{Documents, GO_YAML_MAX_DEPTH, Node, NodeKind, parse_prepared};
use crate::error::Error;

/// The depth at which collections are cut out: well below saphyr-parser's 255, so the
/// part around them (which may hold block collections too) stays readable.
const CUT_DEPTH: usize = 128;

/// What stands in a cut-out collection's place; `text` must not contain it.
const PLACEHOLDER: &str = "chartkit-deep-flow-";

/// Reads `text`, whose flow collections nest too deep for saphyr-parser, in parts; `None`
/// when it cannot be cut (no collection found at the cut depth, or the placeholder is
/// part of the text), and the parser's error stands.
pub(super) fn parse_in_parts(
    text: &str,
    depth: usize,
    documents: Documents,
) -> Option<Result<Vec<Node>, Error>> {
    if text.contains(PLACEHOLDER) {
        return None;
    }
    let cuts = deep_collections(text);
    if cuts.is_empty() {
        return None;
    }
    let mut outer = String::with_capacity(text.len());
    let mut parts = HashMap::new();
    let mut from = 0;
    for (n, &(start, end)) in cuts.iter().enumerate() {
        outer.push_str(&text[from..start]);
        let name = format!("{PLACEHOLDER}{n}");
        outer.push_str(&name);
        let inner = &text[start..end];
        // Keep the lines where they are, so positions after the part stay right.
        outer.extend(std::iter::repeat_n('\n', inner.matches('\n').count()));
        let line = text[..start].matches('\n').count();
        let node = match parse_prepared(inner, usize::MAX, false, Documents::First) {
            Ok(nodes) => nodes.into_iter().next(),
            Err(mut error) => {
                if error.line != 0 {
                    error.line += line;
                }
                return Some(Err(error));
            }
        };
        if let Some(mut node) = node {
            shift_lines(&mut node, line);
            parts.insert(name, node);
        }
        from = end;
    }
    outer.push_str(&text[from..]);
    Some(
        parse_prepared(&outer, depth, false, documents).and_then(|mut nodes| {
            for node in &mut nodes {
                put_back(node, &mut parts);
                check_depth(node)?;
            }
            Ok(nodes)
        }),
    )
}

/// The parts were read each on its own; together they must still nest no deeper than
/// Helm decodes (see `too_deep`).
fn check_depth(root: &Node) -> Result<(), Error> {
    let mut pending = vec![(root, 1)];
    while let Some((node, depth)) = pending.pop() {
        let children: Vec<&Node> = match &node.kind {
            NodeKind::Seq(items) => items.iter().collect(),
            NodeKind::Map(pairs) => pairs.iter().flat_map(|(k, v)| [k, v]).collect(),
            _ => continue,
        };
        if depth > GO_YAML_MAX_DEPTH {
            let kind = if matches!(node.kind, NodeKind::Map(_)) {
                "a map"
            } else {
                "a list"
            };
            return Err(Error::at(
                node.line,
                node.column,
                format!("{kind} is nested deeper than {GO_YAML_MAX_DEPTH} levels"),
            ));
        }
        pending.extend(children.into_iter().map(|child| (child, depth + 1)));
    }
    Ok(())
}

/// The byte ranges of the flow collections that open at [`CUT_DEPTH`], found as go-yaml's
/// scanner finds flow indicators: outside quoted scalars and comments, and in block
/// context only where a token starts.
fn deep_collections(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut ranges = Vec::new();
    let mut level = 0usize;
    let mut start = 0;
    let mut previous = b'\n';
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let token_start = b" \t\r\n[{,:".contains(&previous);
        match b {
            b'[' | b'{' if level > 0 || token_start => {
                level += 1;
                if level == CUT_DEPTH {
                    start = i;
                }
            }
            b']' | b'}' if level > 0 => {
                if level == CUT_DEPTH {
                    ranges.push((start, i + 1));
                }
                level -= 1;
            }
            b'#' if b" \t\r\n".contains(&previous) => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                previous = b'\n';
                continue;
            }
            b'"' | b'\'' if token_start => {
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
    ranges
}

fn shift_lines(node: &mut Node, lines: usize) {
    let mut pending = vec![node];
    while let Some(node) = pending.pop() {
        node.line += lines;
        match &mut node.kind {
            NodeKind::Seq(items) => pending.extend(items.iter_mut()),
            NodeKind::Map(pairs) => pending.extend(pairs.iter_mut().flat_map(|(k, v)| [k, v])),
            _ => {}
        }
    }
}

/// Puts the parts' nodes in their placeholders' places.
fn put_back(node: &mut Node, parts: &mut HashMap<String, Node>) {
    let mut pending = vec![node];
    while let Some(node) = pending.pop() {
        if let NodeKind::Str(name) = &node.kind
            && let Some(part) = parts.remove(name)
        {
            *node = part;
            continue;
        }
        match &mut node.kind {
            NodeKind::Seq(items) => pending.extend(items.iter_mut()),
            NodeKind::Map(pairs) => pending.extend(pairs.iter_mut().flat_map(|(k, v)| [k, v])),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Value, parse_node, parse_values};

    fn nested(levels: usize) -> String {
        format!("a: {}1{}\n", "[".repeat(levels), "]".repeat(levels))
    }

    #[test]
    fn flow_collections_nest_past_255_levels_up_to_go_yamls_limit() {
        for levels in [255, 256, 300, 1_000, 9_999] {
            let values = parse_values(&nested(levels)).unwrap();
            let mut value = &values["a"];
            let mut depth = 0;
            while let Value::Seq(items) = value {
                depth += 1;
                value = &items[0];
            }
            assert_eq!((depth, value), (levels, &Value::Float(1.0)));
        }
        let maps = format!("{}1{}\n", "{a: ".repeat(600), "}".repeat(600));
        assert!(parse_node(&maps).is_ok());
    }

    #[test]
    fn flow_collections_past_go_yamls_limit_are_refused_in_its_words() {
        let error = parse_values(&nested(10_001)).unwrap_err();
        assert_eq!(error.go_yaml_message(), "exceeded max depth of 10000");
        // go-yaml reads 10,000 lists in the values map, which JSON cannot decode.
        let error = parse_values(&nested(10_000)).unwrap_err();
        assert_eq!(error.json_depth_character(), Some('['));
    }

    #[test]
    fn errors_inside_a_deep_part_name_their_line_in_the_whole_text() {
        let text = format!("a: 1\nb: {}\n  @x{}\n", "[".repeat(300), "]".repeat(300));
        let error = parse_node(&text).unwrap_err();
        assert_eq!(error.line, 3, "{error:?}");
    }
}
