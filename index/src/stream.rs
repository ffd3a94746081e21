//! Reading an index straight into its compact form, one chart at a time.
//!
//! [`crate::parse_index`] builds the YAML tree of the whole file, then the whole model; for
//! a 50 MB index that is half a gigabyte, most of it the tree. Here the YAML events under
//! `entries:` become the tree of one chart's version list at a time, which goes through the
//! same decoder (so every field rule, warning and skipped entry is the same), is sorted as
//! Helm sorts it, handed to the compact [`Encoder`] and dropped. Scanning runs on one
//! thread and building, decoding and encoding on another (see
//! [`chartkit_yaml::parse_node_streaming`]), which is what two cores allow.
//!
//! This is only an optimisation: whenever the streamed reading could differ from the whole
//! one, or fails in any way, the index is read whole instead, which gives the answer or the
//! error `parse_index` gives. That covers JSON, text that is not UTF-8 or needs go-yaml's
//! corrections, anchors, aliases, merge keys, tags, several documents, repeated keys,
//! a top-level key that could also name `entries`, and every decoding error.

use std::collections::HashSet;

use chartkit_chart::Decoding;
use chartkit_yaml::{Node, NodeKind};

use crate::compact::{Encoder, SourceStamp};
use crate::decode::{IndexError, decode_chart, decode_index};

/// An index read into the compact encoder, ready to be finished once the source's stamp is
/// known (after the index file is written).
#[derive(Debug)]
pub struct CompactDraft {
    encoder: Encoder,
    /// The warnings Helm would log for skipped entries, as [`crate::parse_index`] gives them.
    pub warnings: Vec<String>,
    /// Whether the index was streamed (false: it was read whole).
    pub streamed: bool,
}

impl CompactDraft {
    /// The compact form, stamped with its source.
    pub fn finish(self, stamp: SourceStamp) -> Vec<u8> {
        self.encoder.finish(stamp)
    }
}

/// Reads an index as [`crate::parse_index`] does (same errors, same warnings) into the
/// form [`crate::compact::encode`] would write from its result, holding one chart's tree at
/// a time when it can.
pub fn parse_index_to_compact(bytes: &[u8], source: &str) -> Result<CompactDraft, IndexError> {
    if let Some(draft) = stream(bytes, source) {
        return Ok(draft);
    }
    let loaded = crate::parse_index(bytes, source)?;
    let mut encoder = Encoder::default();
    for (name, versions) in &loaded.index.entries {
        encoder.add_chart(name, versions);
    }
    Ok(CompactDraft {
        encoder,
        warnings: loaded.warnings,
        streamed: false,
    })
}

/// The streamed reading, or nothing when the index must be read whole.
fn stream(bytes: &[u8], source: &str) -> Option<CompactDraft> {
    // Helm reads valid JSON as JSON; JSON that is a map starts with `{`, and any other
    // JSON is not a map in YAML either, so a text starting otherwise is read as YAML.
    let first = bytes
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))?;
    if matches!(first, b'{' | b'[') {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    let mut decoded = Some((Encoder::default(), Vec::new(), HashSet::new()));
    let root = chartkit_yaml::parse_node_streaming(text, "entries", &mut |key, list| {
        let added = decoded.as_mut().and_then(|(encoder, warnings, names)| {
            add_chart(encoder, warnings, names, key, &list, source)
        });
        if added.is_none() {
            decoded = None;
        }
        added.is_some()
    })
    .ok()?;
    let (encoder, warnings, _) = decoded?;
    // Another key that `encoding/json` would match to `entries` (case-insensitively)
    // competes with the streamed one; let the whole reading settle it.
    let NodeKind::Map(pairs) = &root.kind else {
        return None;
    };
    let rival = pairs.iter().any(|(key, _)| match key.as_map_key() {
        Some(name) => {
            name != "entries" && (name.eq_ignore_ascii_case("entries") || !name.is_ascii())
        }
        None => false,
    });
    if rival {
        return None;
    }
    // The rest of the document (its `entries` now empty) decodes as usual: repeated keys,
    // unknown fields, types and `apiVersion` are checked exactly as for the whole index.
    let index = decode_index(&root, Decoding::STRICT, source, &mut Vec::new()).ok()?;
    if index.api_version.is_empty() || !index.entries.is_empty() {
        return None;
    }
    Some(CompactDraft {
        encoder,
        warnings,
        streamed: true,
    })
}

/// Decodes one chart into the encoder; nothing when it must be left to the whole reading.
fn add_chart(
    encoder: &mut Encoder,
    warnings: &mut Vec<String>,
    names: &mut HashSet<String>,
    key: Node,
    list: &Node,
    source: &str,
) -> Option<()> {
    // Repeated names (or keys that are not names) are refused or merged by the whole
    // reading; either way it decides.
    let name = key.as_map_key()?;
    if !names.insert(name.clone())
        || chartkit_chart::yaml_fields::reject_duplicate_keys(list, "").is_err()
    {
        return None;
    }
    let mut versions = decode_chart(&name, list, Decoding::STRICT, source, warnings).ok()?;
    crate::gosort::sort_newest_first(&mut versions);
    encoder.add_chart(&name, &versions);
    Some(())
}
