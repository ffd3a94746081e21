//! `--post-renderer` as helm 4 runs it: every rendered file (hooks included) merged into
//! one stream of documents, each marked with the file it came from, the stream sent
//! through the post-renderer, and what comes back split into files again by those marks
//! before hooks and manifests are sorted. Documents are read and written as kyaml does
//! (`chartkit_yaml::kyaml`), so the output is helm's byte for byte.

use std::collections::BTreeMap;
use std::sync::Arc;

use chartkit_template::Output;
use chartkit_yaml::kyaml::{self, Style, YNode};

use crate::RenderError;

/// The annotation that carries a document's file through the post-renderer.
pub const FILENAME_ANNOTATION: &str = "postrenderer.helm.sh/postrender-filename";

/// A program that rewrites a stream of manifests: the bytes in, the bytes out, or why
/// it failed (in helm's words).
#[derive(Clone)]
pub struct PostRenderer(Arc<RunFn>);

type RunFn = dyn Fn(&[u8]) -> Result<Vec<u8>, String> + Send + Sync;

impl PostRenderer {
    pub fn new(run: impl Fn(&[u8]) -> Result<Vec<u8>, String> + Send + Sync + 'static) -> Self {
        PostRenderer(Arc::new(run))
    }
}

impl std::fmt::Debug for PostRenderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PostRenderer")
    }
}

/// Sends the rendered files through `renderer` and returns the files it gave back.
pub fn apply(
    outputs: BTreeMap<String, Output>,
    renderer: &PostRenderer,
) -> Result<BTreeMap<String, Output>, RenderError> {
    let merged = merge(&outputs)
        .map_err(|e| RenderError::PostRender(format!("error merging manifests: {e}")))?;
    let rendered = (renderer.0)(merged.as_bytes()).map_err(|e| {
        RenderError::PostRender(format!("error while running post render on files: {e}"))
    })?;
    let files = split(&String::from_utf8_lossy(&rendered)).map_err(|e| {
        RenderError::PostRender(format!("error while parsing post rendered output: {e}"))
    })?;
    Ok(files
        .into_iter()
        .map(|(name, text)| (name, Output::Text(text)))
        .collect())
}

/// Helm's `annotateAndMerge`: the files in name order, partials and empty ones left out,
/// each document marked with its file.
pub fn merge(outputs: &BTreeMap<String, Output>) -> Result<String, String> {
    let mut docs = Vec::new();
    for (name, output) in outputs {
        let text = output.clone().into_text_lossy();
        let base = name.rsplit('/').next().unwrap_or(name);
        if base.starts_with('_') || text.trim().is_empty() {
            continue;
        }
        let parsed = kyaml::parse_stream(&fix_doc_separators(&text))
            .map_err(|e| format!("parsing {name}: {e}"))?;
        for mut doc in parsed {
            annotate(&mut doc, name).map_err(|e| format!("annotating {name}: {e}"))?;
            docs.push(doc);
        }
    }
    Ok(kyaml::emit_stream(&docs))
}

/// Helm's `splitAndDeannotate`: documents grouped by the file their mark names (a
/// document without one is `generated-by-postrender-N.yaml`, N its place in the
/// stream), the marks removed.
pub fn split(text: &str) -> Result<BTreeMap<String, String>, String> {
    let docs = kyaml::parse_stream(text).map_err(|e| format!("error parsing YAML: {e}"))?;
    let mut by_file: BTreeMap<String, Vec<YNode>> = BTreeMap::new();
    for (index, mut doc) in docs.into_iter().enumerate() {
        let name = take_annotation(&mut doc)
            .unwrap_or_else(|| format!("generated-by-postrender-{index}.yaml"));
        by_file.entry(name).or_default().push(doc);
    }
    Ok(by_file
        .into_iter()
        .map(|(name, docs)| (name, kyaml::emit_stream(&docs)))
        .collect())
}

fn annotate(doc: &mut YNode, file: &str) -> Result<(), String> {
    if !doc.is_map() {
        return Err("wrong node kind: expected MappingNode".to_owned());
    }
    if !doc.get("metadata").is_some_and(YNode::is_map) {
        doc.set("metadata", YNode::map());
    }
    let metadata = doc.get_mut("metadata").expect("set above");
    if !metadata.get("annotations").is_some_and(YNode::is_map) {
        metadata.set("annotations", YNode::map());
    }
    let annotations = metadata.get_mut("annotations").expect("set above");
    annotations.set(
        FILENAME_ANNOTATION,
        YNode::scalar(file, Style::SingleQuoted),
    );
    Ok(())
}

/// The file a document's mark names, the mark removed (and `annotations`, then
/// `metadata`, when nothing else is left in them).
fn take_annotation(doc: &mut YNode) -> Option<String> {
    let metadata = doc.get_mut("metadata")?;
    let annotations = metadata.get_mut("annotations")?;
    let name = annotations
        .get(FILENAME_ANNOTATION)?
        .scalar_value()?
        .to_owned();
    annotations.remove(FILENAME_ANNOTATION);
    if annotations.is_empty_map() {
        metadata.remove("annotations");
    }
    if metadata.is_empty_map() {
        doc.remove("metadata");
    }
    (!name.is_empty()).then_some(name)
}

/// Helm's `fixDocSeparators`: a `---` at the start of a line that template whitespace
/// trimming joined to the next line (`---apiVersion: v1`) gets its line break back.
fn fix_doc_separators(content: &str) -> String {
    let mut out = String::with_capacity(content.len());
    let mut remaining = content;
    while let Some(at) = remaining.find("---") {
        out.push_str(&remaining[..at + 3]);
        let at_line_start = at == 0 || remaining.as_bytes()[at - 1] == b'\n';
        remaining = &remaining[at + 3..];
        if at_line_start && remaining.starts_with(|c: char| !matches!(c, '\n' | '\r' | ' ' | '\t'))
        {
            out.push('\n');
        }
    }
    out.push_str(remaining);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_survive_the_round_trip_with_marks_removed() {
        let outputs = BTreeMap::from([
            (
                "c/templates/a.yaml".to_owned(),
                Output::Text("kind: A\nmetadata:\n  name: a\n---\nkind: B\n".into()),
            ),
            (
                "c/templates/_h.tpl".to_owned(),
                Output::Text("x: 1\n".into()),
            ),
            (
                "c/templates/empty.yaml".to_owned(),
                Output::Text("\n".into()),
            ),
        ]);
        let merged = merge(&outputs).unwrap();
        assert_eq!(
            merged,
            "kind: A\nmetadata:\n  name: a\n  annotations:\n    postrenderer.helm.sh/postrender-filename: 'c/templates/a.yaml'\n---\nkind: B\nmetadata:\n  annotations:\n    postrenderer.helm.sh/postrender-filename: 'c/templates/a.yaml'\n"
        );
        let files = split(&format!("{merged}---\nkind: New\n")).unwrap();
        assert_eq!(
            files["c/templates/a.yaml"],
            "kind: A\nmetadata:\n  name: a\n---\nkind: B\n"
        );
        assert_eq!(files["generated-by-postrender-2.yaml"], "kind: New\n");
    }

    #[test]
    fn joined_separators_are_split_again() {
        assert_eq!(
            fix_doc_separators("---a: 1\n---\nb: 2\nx---y"),
            "---\na: 1\n---\nb: 2\nx---y"
        );
    }
}
