//! A set of parsed templates sharing their `define`s, as Helm builds one per render.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use rustc_hash::FxHashMap;

use crate::budget::{self, DEFAULT_MEMORY_LIMIT, MemoryBudget};
use crate::error::{Error, ParseError};
use crate::exec::{Exec, MissingKey};
use crate::funcs::{FuncMap, helm_functions};
use crate::gostr::{GoBuf, Output};
use crate::parse::{self, ast::Tree};
use crate::value::Value;

/// The name of Helm's root template, which error messages mention
/// (`associated with template "gotpl"`) and which `tpl` parses its text under.
pub const ROOT_NAME: &str = "gotpl";

fn functions() -> &'static FuncMap {
    static FUNCS: OnceLock<FuncMap> = OnceLock::new();
    FUNCS.get_or_init(helm_functions)
}

/// A template to parse: its name, its text, and whether the text carries bytes that are
/// not UTF-8 (`gostr::source_text`).
type Source<'a> = (&'a str, &'a str, bool);

/// Parsed templates by name. Parsing happens once; the set can then render any number of
/// times, from any thread, with different data.
pub struct TemplateSet {
    trees: FxHashMap<String, Arc<Tree>>,
    pub(crate) funcs: &'static FuncMap,
    pub(crate) missing_key: MissingKey,
    pub(crate) lint_mode: bool,
    memory_limit: u64,
    /// What Helm logs while executing (lint mode's `required` and `fail`), as lines of
    /// its log (`chartkit_yaml::goslog`), until [`TemplateSet::take_log`].
    log: std::sync::Mutex<Vec<String>>,
}

impl Default for TemplateSet {
    fn default() -> Self {
        Self::new()
    }
}

impl TemplateSet {
    pub fn new() -> Self {
        TemplateSet {
            trees: FxHashMap::default(),
            funcs: functions(),
            missing_key: MissingKey::Zero,
            lint_mode: false,
            memory_limit: DEFAULT_MEMORY_LIMIT,
            log: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Notes a line of Helm's log.
    pub(crate) fn log(&self, line: String) {
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(line);
    }

    /// What executions logged since the last call, in order.
    pub fn take_log(&self) -> Vec<String> {
        std::mem::take(&mut *self.log.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Sets how many bytes each [`TemplateSet::execute`] or [`TemplateSet::render`] may
    /// build (see [`MemoryBudget`]); [`DEFAULT_MEMORY_LIMIT`] unless set.
    pub fn set_memory_limit(&mut self, bytes: u64) {
        self.memory_limit = bytes;
    }

    /// Sets what a missing map key evaluates to: Helm renders with `Zero` and lints
    /// with `--strict` using `Error`.
    pub fn set_missing_key(&mut self, missing_key: MissingKey) {
        self.missing_key = missing_key;
    }

    /// Helm's lint mode: `required` and `fail` render "" instead of failing, so that
    /// linting with default values reports every other problem.
    pub fn set_lint_mode(&mut self, lint_mode: bool) {
        self.lint_mode = lint_mode;
    }

    /// Whether a template function of this name exists (what the parser checks).
    pub fn has_function(name: &str) -> bool {
        functions().contains_key(name)
    }

    /// All function names, sorted.
    pub fn function_names() -> Vec<&'static str> {
        let mut names: Vec<&'static str> = functions().keys().copied().collect();
        names.sort_unstable();
        names
    }

    /// Parses `text` as the template `name` and adds it with the templates it defines.
    /// A later definition of a name replaces an earlier one unless it is empty, as in Go.
    pub fn add(&mut self, name: &str, text: &str) -> Result<(), ParseError> {
        let trees = self.parse(name, text)?;
        for tree in trees {
            self.associate(tree);
        }
        Ok(())
    }

    pub(crate) fn parse(&self, name: &str, text: &str) -> Result<Vec<Tree>, ParseError> {
        let funcs = self.funcs;
        parse::parse(name, text, &|f| funcs.contains_key(f))
    }

    /// [`Self::parse`] of a Go string's bytes, which need not be UTF-8: bytes that are
    /// not reach the output as they are (`gostr::source_text`).
    pub(crate) fn parse_bytes(&self, name: &str, bytes: &[u8]) -> Result<Vec<Tree>, ParseError> {
        let (text, binary) = crate::gostr::source_text(bytes);
        self.parse_source(name, &text, binary)
    }

    fn parse_source(&self, name: &str, text: &str, binary: bool) -> Result<Vec<Tree>, ParseError> {
        let funcs = self.funcs;
        parse::parse_source(name, text, binary, &|f| funcs.contains_key(f))
    }

    fn associate(&mut self, tree: Tree) {
        if tree.is_empty() && self.trees.contains_key(&tree.name) {
            return;
        }
        self.trees.insert(tree.name.clone(), Arc::new(tree));
    }

    /// Adds a chart's templates in the order Helm parses them, so that the same
    /// definition wins when several files define a name: deeper paths first, and
    /// within a depth in reverse lexical order (parent charts override subcharts).
    pub fn add_all<'a>(
        &mut self,
        templates: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<(), ParseError> {
        self.add_all_sources(
            templates
                .into_iter()
                .map(|(name, text)| (name, text, false)),
        )
    }

    /// [`Self::add_all`] of sources `gostr::source_text` made: each with whether it
    /// carries bytes that are not UTF-8.
    pub fn add_all_sources<'a>(
        &mut self,
        templates: impl IntoIterator<Item = (&'a str, &'a str, bool)>,
    ) -> Result<(), ParseError> {
        let mut templates: Vec<Source<'_>> = templates.into_iter().collect();
        templates.sort_by(|a, b| helm_parse_order(a.0, b.0));
        for trees in self.parse_all(&templates) {
            for tree in trees? {
                self.associate(tree);
            }
        }
        Ok(())
    }

    /// Parses every template, in the given order; each result keeps its place, so the
    /// first error is the one Go reports.
    ///
    /// Subcharts often vendor the same library chart (wordpress holds three copies of
    /// Bitnami's `common`: 44 of its template files repeat another's text), so a text is
    /// parsed once and later files with the same text share its trees under their own
    /// name. The trees differ only in that name and the file name errors cite.
    fn parse_all(&self, templates: &[Source<'_>]) -> Vec<Result<Vec<Tree>, ParseError>> {
        let mut first_with_text: FxHashMap<&str, usize> = FxHashMap::default();
        let mut unique = Vec::with_capacity(templates.len());
        let mut copy_of = vec![None; templates.len()];
        for (i, &(_, text, _)) in templates.iter().enumerate() {
            match first_with_text.entry(text) {
                std::collections::hash_map::Entry::Occupied(first) => {
                    copy_of[i] = Some(*first.get());
                }
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(i);
                    unique.push(templates[i]);
                }
            }
        }
        let mut parsed = self.parse_each(&unique).into_iter();
        let mut results: Vec<Result<Vec<Tree>, ParseError>> = Vec::with_capacity(templates.len());
        for (i, &(name, text, binary)) in templates.iter().enumerate() {
            let result = match copy_of[i] {
                None => parsed
                    .next()
                    .unwrap_or_else(|| self.parse_source(name, text, binary)),
                Some(first) => match &results[first] {
                    Ok(trees) => renamed(trees, templates[first].0, name)
                        .map_or_else(|| self.parse_source(name, text, binary), Ok),
                    Err(_) => self.parse_source(name, text, binary),
                },
            };
            results.push(result);
        }
        results
    }

    /// Parses templates independently, so a chart with much template text
    /// (kube-prometheus-stack has 1.6 MB) is parsed on several cores.
    fn parse_each(&self, templates: &[Source<'_>]) -> Vec<Result<Vec<Tree>, ParseError>> {
        // Below this, starting a thread costs about what it saves.
        const PARALLEL_BYTES: usize = 48 * 1024;
        let total: usize = templates.iter().map(|(_, text, _)| text.len()).sum();
        // Counting cores reads cgroup files; small charts never need to know.
        let workers = if total < PARALLEL_BYTES {
            1
        } else {
            crate::cores().min(4)
        };
        if workers < 2 {
            return templates
                .iter()
                .map(|&(name, text, binary)| self.parse_source(name, text, binary))
                .collect();
        }
        let next = AtomicUsize::new(0);
        let work = || {
            let mut done = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(name, text, binary)) = templates.get(i) else {
                    return done;
                };
                done.push((i, self.parse_source(name, text, binary)));
            }
        };
        let mut done = std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..workers).map(|_| scope.spawn(work)).collect();
            let mut done = work();
            for helper in helpers {
                done.extend(
                    helper
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                );
            }
            done
        });
        done.sort_unstable_by_key(|(i, _)| *i);
        done.into_iter().map(|(_, result)| result).collect()
    }

    pub fn contains(&self, name: &str) -> bool {
        self.trees.contains_key(name)
    }

    pub(crate) fn tree(&self, name: &str) -> Option<Arc<Tree>> {
        self.trees.get(name).cloned()
    }

    /// Executes the template `name` with `data` as dot and returns Go's raw output,
    /// `<no value>` markers included, within a fresh budget of the set's memory limit.
    /// Bytes that are not UTF-8 read as U+FFFD ([`TemplateSet::execute_output_within`]
    /// keeps them).
    pub fn execute(&self, name: &str, data: Value) -> Result<String, Error> {
        self.execute_within(name, data, &mut MemoryBudget::new(self.memory_limit))
    }

    /// Executes like [`TemplateSet::execute`], counting what it builds in `budget`, which
    /// can carry what earlier renders used (a chart's templates share one budget).
    pub fn execute_within(
        &self,
        name: &str,
        data: Value,
        budget: &mut MemoryBudget,
    ) -> Result<String, Error> {
        self.execute_output_within(name, data, budget)
            .map(Output::into_text_lossy)
    }

    /// Executes like [`TemplateSet::execute_within`], returning the output as Go wrote
    /// it: text, or bytes when a template wrote bytes that are not UTF-8.
    pub fn execute_output_within(
        &self,
        name: &str,
        data: Value,
        budget: &mut MemoryBudget,
    ) -> Result<Output, Error> {
        let Some(tree) = self.tree(name) else {
            return Err(Error::NoTemplate {
                name: name.to_owned(),
                set: ROOT_NAME.to_owned(),
            });
        };
        let _scope = budget::Scope::enter(budget);
        let mut out = GoBuf::new();
        let mut exec = Exec::new(self);
        if let Err(message) = exec.nest() {
            return Err(Error::Exec(crate::error::ExecError {
                template: name.to_owned(),
                location: None,
                context: None,
                message,
                cause: None,
            }));
        }
        let result = exec.execute(&tree, data, &mut out);
        exec.unnest();
        result.map_err(|e| *e)?;
        Ok(out.into_output())
    }

    /// Executes like [`TemplateSet::execute`] and then removes every `<no value>`, as
    /// Helm's engine does with each rendered file.
    pub fn render(&self, name: &str, data: Value) -> Result<String, Error> {
        self.render_within(name, data, &mut MemoryBudget::new(self.memory_limit))
    }

    /// [`TemplateSet::render`] counting in `budget`, as [`TemplateSet::execute_within`].
    pub fn render_within(
        &self,
        name: &str,
        data: Value,
        budget: &mut MemoryBudget,
    ) -> Result<String, Error> {
        self.render_output_within(name, data, budget)
            .map(Output::into_text_lossy)
    }

    /// [`TemplateSet::render_within`], returning the output as Go wrote it (see
    /// [`TemplateSet::execute_output_within`]).
    pub fn render_output_within(
        &self,
        name: &str,
        data: Value,
        budget: &mut MemoryBudget,
    ) -> Result<Output, Error> {
        Ok(match self.execute_output_within(name, data, budget)? {
            Output::Text(out) if out.contains(NO_VALUE) => Output::Text(out.replace(NO_VALUE, "")),
            Output::Binary(out) => Output::Binary(remove_no_value(&out)),
            text => text,
        })
    }
}

pub(crate) const NO_VALUE: &str = "<no value>";

/// `strings.ReplaceAll(s, "<no value>", "")` on bytes.
pub(crate) fn remove_no_value(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut last = 0;
    for at in memchr::memmem::find_iter(bytes, NO_VALUE.as_bytes()) {
        out.extend_from_slice(&bytes[last..at]);
        last = at + NO_VALUE.len();
    }
    out.extend_from_slice(&bytes[last..]);
    out
}

/// The trees of the file `old` as the trees of the file `new` with the same text: the
/// file's own tree renamed, every tree citing the new file. `None` in the odd case where
/// the file also defines a template named like itself, which then parses normally.
fn renamed(trees: &[Tree], old: &str, new: &str) -> Option<Vec<Tree>> {
    let (own, defined) = trees.split_first()?;
    if own.name != old || defined.iter().any(|tree| tree.name == old) {
        return None;
    }
    let parse_name: Arc<str> = Arc::from(new);
    Some(
        trees
            .iter()
            .enumerate()
            .map(|(i, tree)| Tree {
                name: if i == 0 {
                    new.to_owned()
                } else {
                    tree.name.clone()
                },
                parse_name: parse_name.clone(),
                text: tree.text.clone(),
                binary: tree.binary,
                root: tree.root.clone(),
            })
            .collect(),
    )
}

/// Helm's `sortTemplates` order: more path segments first, then reverse lexical.
pub fn helm_parse_order(a: &str, b: &str) -> std::cmp::Ordering {
    let (ca, cb) = (a.matches('/').count(), b.matches('/').count());
    cb.cmp(&ca).then_with(|| b.cmp(a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_sets_can_be_shared_between_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<TemplateSet>();
    }

    #[test]
    fn helm_order_puts_deeper_paths_first() {
        let mut names = vec![
            "c/templates/a.yaml",
            "c/charts/s/templates/_h.tpl",
            "c/templates/b.yaml",
        ];
        names.sort_by(|a, b| helm_parse_order(a, b));
        assert_eq!(
            names,
            [
                "c/charts/s/templates/_h.tpl",
                "c/templates/b.yaml",
                "c/templates/a.yaml"
            ]
        );
    }

    #[test]
    fn parent_definitions_override_subchart_ones() {
        let mut set = TemplateSet::new();
        set.add_all([
            ("c/templates/_h.tpl", r#"{{ define "x" }}parent{{ end }}"#),
            (
                "c/charts/s/templates/_h.tpl",
                r#"{{ define "x" }}child{{ end }}"#,
            ),
            ("c/templates/t.yaml", r#"{{ template "x" }}"#),
        ])
        .unwrap();
        assert_eq!(
            set.render("c/templates/t.yaml", Value::Nil).unwrap(),
            "parent"
        );
    }

    /// Files with the same text (a library chart vendored twice) share one parse, and
    /// each keeps its own name in trees and error locations.
    #[test]
    fn files_with_the_same_text_keep_their_own_names() {
        let text = r#"{{ define "lib.x" }}x{{ end }}{{ if .fail }}{{ fail "boom" }}{{ end }}"#;
        let mut set = TemplateSet::new();
        set.add_all([
            ("c/charts/a/charts/common/templates/_x.tpl", text),
            ("c/charts/b/charts/common/templates/_x.tpl", text),
            ("c/templates/t.yaml", r#"{{ include "lib.x" . }}"#),
        ])
        .unwrap();
        assert_eq!(set.render("c/templates/t.yaml", Value::Nil).unwrap(), "x");
        for chart in ["a", "b"] {
            let name = format!("c/charts/{chart}/charts/common/templates/_x.tpl");
            let tree = set.tree(&name).unwrap();
            assert_eq!(
                (tree.name.as_str(), &*tree.parse_name),
                (name.as_str(), name.as_str())
            );
            let data = Value::map([("fail".into(), Value::from(true))].into());
            let error = set.render(&name, data).unwrap_err().to_string();
            assert!(error.contains(&format!("{name}:1:")), "{error}");
            assert!(
                !error.contains(if chart == "a" {
                    "charts/b/"
                } else {
                    "charts/a/"
                }),
                "{error}"
            );
        }
        // The definition comes from the later file in Helm's order, which cites its own file.
        assert_eq!(
            &*set.tree("lib.x").unwrap().parse_name,
            "c/charts/a/charts/common/templates/_x.tpl"
        );
    }

    /// Enough files and text that parsing runs on several threads, as for a large chart;
    /// every text differs, as identical ones are parsed once.
    fn many_files(extra: &[(&str, &str)]) -> Vec<(String, String)> {
        let filler = format!("{}\n", "plain text line ".repeat(8));
        let mut files: Vec<(String, String)> = (0..200)
            .map(|i| {
                (
                    format!("c/charts/s{i:03}/templates/f.yaml"),
                    format!("{i}\n{}", filler.repeat(4)),
                )
            })
            .collect();
        files.extend(extra.iter().map(|(n, t)| (n.to_string(), t.to_string())));
        files
    }

    #[test]
    fn parsing_on_several_threads_keeps_helm_order() {
        let files = many_files(&[
            ("c/templates/_h.tpl", r#"{{ define "x" }}parent{{ end }}"#),
            (
                "c/charts/s100/templates/_h.tpl",
                r#"{{ define "x" }}child{{ end }}"#,
            ),
            ("c/templates/t.yaml", r#"{{ template "x" }}"#),
        ]);
        assert!(files.iter().map(|(_, t)| t.len()).sum::<usize>() > 100 * 1024);
        let mut set = TemplateSet::new();
        set.add_all(files.iter().map(|(n, t)| (n.as_str(), t.as_str())))
            .unwrap();
        assert_eq!(
            set.render("c/templates/t.yaml", Value::Nil).unwrap(),
            "parent"
        );
        assert!(set.contains("c/charts/s199/templates/f.yaml"));
    }

    #[test]
    fn parsing_on_several_threads_reports_the_first_error_in_helm_order() {
        let files = many_files(&[
            ("c/templates/a.yaml", "{{ if }}"),
            ("c/charts/s150/templates/b.yaml", "{{ end }}"),
        ]);
        let mut set = TemplateSet::new();
        let error = set
            .add_all(files.iter().map(|(n, t)| (n.as_str(), t.as_str())))
            .unwrap_err()
            .to_string();
        // Deeper paths parse first, so the subchart's error is the one Helm shows.
        assert!(error.contains("c/charts/s150/templates/b.yaml"), "{error}");
    }
}
