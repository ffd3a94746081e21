//! Reading an index straight into its compact form, one chart at a time.
//!
//! [`crate::parse_index`] builds the YAML tree of the whole file, then the whole model; for
//! a 50 MB index that is half a gigabyte, most of it the tree. Here the YAML events under
//! `entries:` become the tree of one chart's version list at a time, which goes through the
//! same decoder (so every field rule, warning and skipped entry is the same), is sorted as
//! Helm sorts it, handed to the compact [`Encoder`] and dropped. An index written in lines
//! (as Helm and chartkit write them) is cut at its charts into pieces that several threads
//! scan, build, decode and encode at once, the encoder taking the charts in order (see
//! [`chartkit_yaml::parse_node_in_pieces`]); any other is scanned on one thread and built,
//! decoded and encoded on another ([`chartkit_yaml::parse_node_streaming`]), and so is one
//! whose pieces fail for any reason.
//!
//! This is only an optimisation: whenever the streamed reading could differ from the whole
//! one, or fails in any way, the index is read whole instead, which gives the answer or the
//! error `parse_index` gives. That covers JSON, text that is not UTF-8 or needs go-yaml's
//! corrections, anchors, aliases, merge keys, tags, several documents, repeated keys,
//! a top-level key that could also name `entries`, and every decoding error.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use chartkit_chart::Decoding;
use chartkit_yaml::{Node, NodeKind};

use crate::compact::{CompactSink, EncodedChartVersions, Encoder, SkippedEntry, SourceStamp};
use crate::decode::{IndexError, decode_chart, decode_index};

/// An index read into the compact encoder, ready to be finished once the source's stamp is
/// known (after the index file is written).
#[derive(Debug)]
pub struct CompactDraft<S: CompactSink = Vec<u8>> {
    encoder: Encoder<S>,
    /// The warnings Helm would log for skipped entries, as [`crate::parse_index`] gives them.
    pub warnings: Vec<String>,
    /// Whether the index was streamed (false: it was read whole).
    pub streamed: bool,
    /// What the warnings name the index by.
    source: String,
}

impl<S: CompactSink> CompactDraft<S> {
    /// Completes the compact form, stamped with its source, in the sink it was written to;
    /// the entries skipped with a warning are kept in it.
    pub fn finish(mut self, stamp: SourceStamp) -> S {
        let skipped = (self.warnings.iter())
            .filter_map(|w| SkippedEntry::from_warning(w, &self.source))
            .collect();
        self.encoder.keep_skipped(skipped);
        self.encoder.finish(stamp)
    }
}

/// Reads an index as [`crate::parse_index`] does (same errors, same warnings) into the
/// form [`crate::compact::encode`] would write from its result, holding one chart's tree at
/// a time when it can.
pub fn parse_index_to_compact(bytes: &[u8], source: &str) -> Result<CompactDraft, IndexError> {
    parse_index_to_compact_into(bytes, source, Vec::new())
}

/// [`parse_index_to_compact`] writing the compact form to `sink` as it goes (which is
/// emptied first): when charts come in name order, their entries are written as they are
/// decoded and not kept in memory. The bytes written are the same whichever way the
/// index is read.
pub fn parse_index_to_compact_into<S: CompactSink + Send + 'static>(
    bytes: &[u8],
    source: &str,
    sink: S,
) -> Result<CompactDraft<S>, IndexError> {
    let sink = match stream(bytes, source, sink) {
        Ok(draft) => return Ok(draft),
        Err(sink) => sink,
    };
    crate::limits::check_whole_reading(bytes.len() as u64)?;
    let loaded = crate::parse_index(bytes, source)?;
    let mut encoder = Encoder::new(sink);
    for (name, versions) in &loaded.index.entries {
        encoder.add_chart(name, versions);
    }
    Ok(CompactDraft {
        encoder,
        warnings: loaded.warnings,
        streamed: false,
        source: source.to_owned(),
    })
}

/// The streamed reading, or the sink back when the index must be read whole.
fn stream<S: CompactSink + Send + 'static>(
    bytes: &[u8],
    source: &str,
    sink: S,
) -> Result<CompactDraft<S>, S> {
    // Helm reads valid JSON as JSON; JSON that is a map starts with `{`, and any other
    // JSON is not a map in YAML either, so a text starting otherwise is read as YAML.
    let Some(first) = bytes
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    else {
        return Err(sink);
    };
    if matches!(first, b'{' | b'[') {
        return Err(sink);
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Err(sink);
    };
    // In pieces on several threads when the index is written in lines, as every index
    // Helm or chartkit writes is; failing that (whatever the reason), in one piece, which
    // gives the answer or finds the reason.
    let mut reader = CompactReader::new(sink, source, Some(bytes.len() as u64));
    reader.push(bytes);
    let sink = match reader.finish() {
        Ok(draft) => return Ok(draft),
        Err(sink) => sink,
    };
    // Read on one thread, a chart's tree may be as large as the whole (one chart may be
    // all of it), so this is a whole reading as far as memory goes.
    if crate::limits::check_whole_reading(bytes.len() as u64).is_err() {
        return Err(sink);
    }
    let mut encoder = Encoder::new(sink);
    let mut warnings = Vec::new();
    let mut names = HashSet::new();
    let mut refused = false;
    let root = chartkit_yaml::parse_node_streaming(text, "entries", &mut |key, list| {
        refused = refused
            || add_chart(&mut encoder, &mut warnings, &mut names, key, &list, source).is_none();
        !refused
    });
    match root {
        Ok(root) if !refused && accepts_the_rest(&root, source) => Ok(CompactDraft {
            encoder,
            warnings,
            streamed: true,
            source: source.to_owned(),
        }),
        _ => Err(encoder.into_sink()),
    }
}

/// Whether the rest of a streamed document (its `entries` map empty) is an index as the
/// whole reading would read it.
fn accepts_the_rest(root: &Node, source: &str) -> bool {
    // Another key that `encoding/json` would match to `entries` (case-insensitively)
    // competes with the streamed one; let the whole reading settle it.
    let NodeKind::Map(pairs) = &root.kind else {
        return false;
    };
    let rival = pairs.iter().any(|(key, _)| match key.as_map_key() {
        Some(name) => {
            name != "entries" && (name.eq_ignore_ascii_case("entries") || !name.is_ascii())
        }
        None => false,
    });
    if rival {
        return false;
    }
    // Repeated keys, unknown fields, types and `apiVersion` are checked exactly as for
    // the whole index.
    decode_index(root, Decoding::STRICT, source, &mut Vec::new())
        .is_ok_and(|index| !index.api_version.is_empty() && index.entries.is_empty())
}

/// An index read into its compact form as its text arrives, for an index written in
/// lines (as Helm and chartkit write them): its charts are cut into pieces that several
/// threads scan, decode and encode as soon as they have arrived, and the encoder takes
/// them in order (see [`chartkit_yaml::PieceReader`]). Anything else, and any failure,
/// gives the sink back at [`CompactReader::finish`], for the index to be read another
/// way (with [`parse_index_to_compact_into`]).
pub struct CompactReader<S: CompactSink + Send + 'static> {
    reader: chartkit_yaml::PieceReader<DecodedChart>,
    state: Arc<Mutex<ReadState<S>>>,
    source: Arc<str>,
}

/// A chart decoded on a reading thread: its name, its versions encoded, and the warnings
/// for its skipped entries.
type DecodedChart = (String, EncodedChartVersions, Vec<String>);

/// What the charts committed so far made.
struct ReadState<S: CompactSink> {
    encoder: Encoder<S>,
    warnings: Vec<String>,
    names: HashSet<String>,
}

impl<S: CompactSink + Send + 'static> CompactReader<S> {
    /// A reader writing to `sink` (emptied first); `expected_len` is the index's length,
    /// when known, which sets the size of the pieces.
    pub fn new(sink: S, source: &str, expected_len: Option<u64>) -> CompactReader<S> {
        let source: Arc<str> = Arc::from(source);
        let state = Arc::new(Mutex::new(ReadState {
            encoder: Encoder::new(sink),
            warnings: Vec::new(),
            names: HashSet::new(),
        }));
        let decode_source = Arc::clone(&source);
        let committed = Arc::clone(&state);
        let reader = chartkit_yaml::PieceReader::new(
            "entries",
            piece_size(expected_len),
            Arc::new(move |key: Node, list: Node| decode_chart_part(key, &list, &decode_source)),
            Box::new(move |(name, chart, skipped): DecodedChart| {
                let mut state = committed.lock().unwrap_or_else(|e| e.into_inner());
                // A repeated name is merged or refused by the whole reading.
                if !state.names.insert(name.clone()) {
                    return false;
                }
                state.warnings.extend(skipped);
                state.encoder.add_encoded(&name, chart);
                true
            }),
        )
        .limit(crate::limits::MAX_CHART_TEXT);
        CompactReader {
            reader,
            state,
            source,
        }
    }

    /// Takes the next part of the index's bytes, cut anywhere.
    pub fn push(&mut self, bytes: &[u8]) {
        self.reader.push(bytes);
    }

    /// The index is complete: the draft, or the sink back (emptied or not) when the
    /// index must be read another way.
    pub fn finish(self) -> Result<CompactDraft<S>, S> {
        let CompactReader {
            reader,
            state,
            source,
        } = self;
        let root = reader.finish();
        // The reader's threads are done, and its last reference to the state with them.
        let state = match Arc::try_unwrap(state) {
            Ok(state) => state.into_inner().unwrap_or_else(|e| e.into_inner()),
            Err(_) => unreachable!("the reader is finished"),
        };
        match root {
            Ok(root) if accepts_the_rest(&root, &source) => Ok(CompactDraft {
                encoder: state.encoder,
                warnings: state.warnings,
                streamed: true,
                source: source.to_string(),
            }),
            _ => Err(state.encoder.into_sink()),
        }
    }
}

/// The size of the pieces an index of `len` bytes is cut into: a few hundred kilobytes,
/// or for a small index (and so in tests) as small as one chart, so that there are
/// pieces to share out.
fn piece_size(len: Option<u64>) -> usize {
    const LARGEST: u64 = 256 * 1024;
    len.map_or(LARGEST, |len| (len / 64).min(LARGEST)) as usize
}

/// A chart decoded, sorted and encoded, with its skipped entries' warnings; nothing when it
/// must be left to the whole reading. (Whether its name repeats another's is the caller's
/// to check.)
fn decode_chart_part(
    key: Node,
    list: &Node,
    source: &str,
) -> Option<(String, EncodedChartVersions, Vec<String>)> {
    let name = key.as_map_key()?;
    if chartkit_chart::yaml_fields::reject_duplicate_keys(list, "").is_err() {
        return None;
    }
    let mut warnings = Vec::new();
    let mut versions = decode_chart(&name, list, Decoding::STRICT, source, &mut warnings).ok()?;
    crate::gosort::sort_newest_first(&mut versions);
    Some((name, EncodedChartVersions::encode(&versions), warnings))
}

/// Decodes one chart into the encoder; nothing when it must be left to the whole reading.
fn add_chart<S: CompactSink>(
    encoder: &mut Encoder<S>,
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
