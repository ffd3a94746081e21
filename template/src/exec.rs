//! Executing parsed templates with Go's semantics.
//!
//! This follows `text/template`'s evaluator step by step: argument checking against
//! parameter types, the order in which errors are detected, `missingkey=zero` for map
//! lookups and the distinction between a nil interface (from a map) and no value at all,
//! which decides between `<no value>` and `nil pointer evaluating interface {}.x`.

use rustc_hash::FxHashMap;
use std::sync::Arc;

use crate::budget;
use crate::error::{Error, ExecError};
use crate::funcs::{Func, FuncError, Imp};
use crate::gostr::GoBuf;
use crate::objects::ValuesMethods;
use crate::parse::ast::*;
use crate::print;
use crate::set::TemplateSet;
use crate::value::{ListKind, MapKind, Ty, Value};
use crate::value::{MethodSig, Object};
use std::rc::Rc;

/// Go's limit on nested `{{template}}` calls.
const MAX_EXEC_DEPTH: usize = 100_000;
/// Stack to keep free before recursing into another template; below it, a new segment is
/// allocated on the heap so deep `include` chains cannot overflow the thread's stack.
const STACK_RED_ZONE: usize = 256 * 1024;
const STACK_SEGMENT: usize = 4 * 1024 * 1024;
/// How deep `include` and `tpl` calls may nest, together. Helm stops an `include` of a
/// name nested in itself 1000 times, and has no limit on `tpl`, which Go then runs
/// until its stack overflows. Each level's error repeats the text of the errors inside
/// it, so the text of an error from deep down grows with the square of the depth: this
/// keeps it to a few hundred megabytes while letting two names recurse into each other
/// as far as Helm lets them.
const MAX_CALL_DEPTH: usize = 2000;

/// What a missing map key evaluates to (Go's `missingkey` option).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingKey {
    /// The element type's zero value: nil for Helm's maps. Helm's default.
    #[default]
    Zero,
    /// An error, as Helm's `--strict` linting uses.
    Error,
}

/// A value together with whether Go sees it through an `interface{}`: elements of
/// `[]interface{}` and `map[string]interface{}` are, results of pipelines are not. It
/// decides whether `.x` on a nil is an error and how type errors name the type.
#[derive(Clone, Debug)]
pub(crate) struct Slot {
    pub v: Value,
    pub iface: bool,
}

impl Slot {
    fn plain(v: Value) -> Slot {
        Slot { v, iface: false }
    }
}

pub(crate) enum Flow {
    Break,
    Continue,
    Fail(Box<Error>),
}

impl From<Box<Error>> for Flow {
    fn from(e: Box<Error>) -> Self {
        Flow::Fail(e)
    }
}

type EResult<T> = Result<T, Box<Error>>;

/// Per-render state shared by every template executed during one render: the template
/// set, templates added by `tpl`, and Helm's `include` recursion counters.
pub struct Exec<'s> {
    pub(crate) set: &'s TemplateSet,
    overlays: Vec<FxHashMap<String, Arc<Tree>>>,
    /// How deep each name is in `include`s now, to stop runaway recursion as Helm does.
    pub(crate) include_counts: FxHashMap<Box<str>, usize>,
    /// How deep `include` and `tpl` calls are nested now.
    call_depth: usize,
    /// For the call being made, which arguments (bit i for argument i) are nil read
    /// through an `interface {}`: Go's reflection tells such a nil (a valid value of
    /// interface kind) from no value at all, and `len` words its error by that.
    pub(crate) nil_interfaces: u64,
}

/// One template invocation: its tree, its variables and the node being evaluated.
struct Frame<'t> {
    tree: &'t Tree,
    vars: Vec<(Name, Slot)>,
    node: Option<NodeRef<'t>>,
    depth: usize,
}

impl<'s> Exec<'s> {
    pub(crate) fn new(set: &'s TemplateSet) -> Self {
        Exec {
            set,
            overlays: Vec::new(),
            include_counts: FxHashMap::default(),
            call_depth: 0,
            nil_interfaces: 0,
        }
    }

    pub(crate) fn lookup(&self, name: &str) -> Option<Arc<Tree>> {
        for overlay in self.overlays.iter().rev() {
            if let Some(t) = overlay.get(name) {
                return Some(t.clone());
            }
        }
        self.set.tree(name)
    }

    /// Makes `trees` visible to lookups while `body` runs (the templates a `tpl` string
    /// defines), applying Go's rule that an empty definition does not replace a real one.
    pub(crate) fn with_overlay<T>(
        &mut self,
        trees: Vec<Tree>,
        body: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let mut overlay = FxHashMap::default();
        for tree in trees {
            let keep_old = tree.is_empty() && self.lookup(&tree.name).is_some();
            if !keep_old {
                overlay.insert(tree.name.clone(), Arc::new(tree));
            }
        }
        self.overlays.push(overlay);
        let result = body(self);
        self.overlays.pop();
        result
    }

    /// Runs a template with `data` as dot and `$`, appending its output to `out`.
    /// Callers that nest it in a running template (`include`, `tpl`) hold its stack in
    /// the budget first ([`Exec::nest`]).
    pub(crate) fn execute(&mut self, tree: &Tree, data: Value, out: &mut GoBuf) -> EResult<()> {
        let dot = Slot::plain(data);
        let mut frame = Frame {
            tree,
            vars: vec![(Name::const_new("$"), dot.clone())],
            node: None,
            depth: 0,
        };
        stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
            match self.walk_list(&mut frame, &dot, &tree.root, out) {
                Ok(()) => Ok(()),
                Err(Flow::Fail(e)) => Err(e),
                // The parser rejects break/continue outside range.
                Err(Flow::Break | Flow::Continue) => Ok(()),
            }
        })
    }

    /// Holds a nested template's stack in the budget while it runs; [`Exec::unnest`]
    /// gives it back.
    pub(crate) fn nest(&mut self) -> Result<(), String> {
        budget::charge(budget::NESTING_BYTES, "another nested template")
    }

    pub(crate) fn unnest(&mut self) {
        budget::release(budget::NESTING_BYTES);
    }

    /// [`Exec::nest`] for an `include` or `tpl` call, which also counts towards
    /// [`MAX_CALL_DEPTH`]; [`Exec::unnest_call`] ends it.
    pub(crate) fn nest_call(&mut self) -> Result<(), String> {
        if self.call_depth >= MAX_CALL_DEPTH {
            return Err(format!(
                "include and tpl calls are nested more than {MAX_CALL_DEPTH} deep"
            ));
        }
        self.nest()?;
        self.call_depth += 1;
        Ok(())
    }

    pub(crate) fn unnest_call(&mut self) {
        self.call_depth -= 1;
        self.unnest();
    }

    fn walk_list<'t>(
        &mut self,
        f: &mut Frame<'t>,
        dot: &Slot,
        list: &'t ListNode,
        out: &mut GoBuf,
    ) -> Result<(), Flow> {
        for node in &list.nodes {
            self.walk(f, dot, node, out)?;
        }
        Ok(())
    }

    fn walk<'t>(
        &mut self,
        f: &mut Frame<'t>,
        dot: &Slot,
        node: &'t Node,
        out: &mut GoBuf,
    ) -> Result<(), Flow> {
        f.node = Some(NodeRef::Node(node));
        match node {
            Node::Text { start, end, .. } => {
                let text = &f.tree.text[*start..*end];
                if let Err(message) = budget::charge(text.len() as u64, "the output") {
                    return Err(self.output_error(f, *start, text, message).into());
                }
                if f.tree.binary {
                    out.push_bytes(&crate::gostr::source_bytes(text));
                } else {
                    out.push_str(text);
                }
            }
            Node::Action(a) => {
                let v = self.eval_pipeline(f, dot, &a.pipe)?;
                if a.pipe.decl.is_empty() {
                    f.node = Some(NodeRef::Node(node));
                    if let Err(message) = print_value(out, &v) {
                        return Err(self.errorf(f, message).into());
                    }
                }
            }
            Node::If(b) | Node::With(b) => {
                let mark = f.vars.len();
                let result = stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
                    self.walk_if_or_with(f, dot, b, matches!(node, Node::With(_)), out)
                });
                f.vars.truncate(mark);
                result?;
            }
            Node::Range(b) => {
                let mark = f.vars.len();
                let result = stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
                    self.walk_range(f, dot, b, node, out)
                });
                f.vars.truncate(mark);
                result?;
            }
            Node::Template(t) => self.walk_template(f, dot, t, node, out)?,
            Node::Break { .. } => return Err(Flow::Break),
            Node::Continue { .. } => return Err(Flow::Continue),
        }
        Ok(())
    }

    fn walk_if_or_with<'t>(
        &mut self,
        f: &mut Frame<'t>,
        dot: &Slot,
        b: &'t BranchNode,
        is_with: bool,
        out: &mut GoBuf,
    ) -> Result<(), Flow> {
        let v = self.eval_pipeline(f, dot, &b.pipe)?;
        if v.truth() {
            if is_with {
                self.walk_list(f, &Slot::plain(v), &b.list, out)
            } else {
                self.walk_list(f, dot, &b.list, out)
            }
        } else if let Some(else_list) = &b.else_list {
            self.walk_list(f, dot, else_list, out)
        } else {
            Ok(())
        }
    }

    fn walk_range<'t>(
        &mut self,
        f: &mut Frame<'t>,
        dot: &Slot,
        r: &'t BranchNode,
        node: &'t Node,
        out: &mut GoBuf,
    ) -> Result<(), Flow> {
        f.node = Some(NodeRef::Node(node));
        let val = self.eval_pipeline(f, dot, &r.pipe)?.plain();
        let mark = f.vars.len();
        // Elements are taken one at a time: a range over `until 100000000` or over a
        // large number holds no copy of what it iterates over.
        let items = match &val {
            Value::List(l) => Ranged::List(l.clone()),
            Value::Bytes(b) => Ranged::Bytes(b.clone()),
            Value::Map(m) => {
                // Go takes the sorted keys first, so changes made while ranging do not
                // change the iteration.
                let iface = m.kind != MapKind::String;
                Ranged::Map(
                    m.borrow()
                        .iter()
                        .map(|(k, v)| {
                            (
                                Slot::plain(Value::String(k.clone())),
                                Slot {
                                    v: v.clone(),
                                    iface,
                                },
                            )
                        })
                        .collect(),
                )
            }
            Value::Int(_) | Value::Int64(_) | Value::Uint8(_) => {
                if r.pipe.decl.len() > 1 {
                    return Err(self
                        .errorf(
                            f,
                            format!(
                                "can't use {} to iterate over more than one variable",
                                print::sprint(&val)
                            ),
                        )
                        .into());
                }
                Ranged::Count(val.clone())
            }
            Value::Nil => Ranged::Map(Vec::new()),
            other => {
                return Err(self
                    .errorf(
                        f,
                        format!("range can't iterate over {}", print::sprint(other)),
                    )
                    .into());
            }
        };
        let len = items.len();
        if len == 0 {
            if let Some(else_list) = &r.else_list {
                return self.walk_list(f, dot, else_list, out);
            }
            return Ok(());
        }
        let decl = &r.pipe.decl;
        for i in 0..len {
            let (index, elem) = items.get(i);
            if !decl.is_empty() {
                if r.pipe.is_assign {
                    let target = if decl.len() > 1 { &index } else { &elem };
                    self.set_var(f, &decl[0].idents[0], target.clone())?;
                } else {
                    let n = f.vars.len();
                    f.vars[n - 1].1 = elem.clone();
                }
            }
            if decl.len() > 1 {
                if r.pipe.is_assign {
                    self.set_var(f, &decl[1].idents[0], elem.clone())?;
                } else {
                    let n = f.vars.len();
                    f.vars[n - 2].1 = index.clone();
                }
            }
            let result = self.walk_list(f, &elem, &r.list, out);
            f.vars.truncate(mark);
            match result {
                Ok(()) | Err(Flow::Continue) => {}
                Err(Flow::Break) => break,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn walk_template<'t>(
        &mut self,
        f: &mut Frame<'t>,
        dot: &Slot,
        t: &'t TemplateNode,
        node: &'t Node,
        out: &mut GoBuf,
    ) -> Result<(), Flow> {
        f.node = Some(NodeRef::Node(node));
        let Some(tree) = self.lookup(&t.name) else {
            return Err(self
                .errorf(f, format!("template {} not defined", print::quote(&t.name)))
                .into());
        };
        if f.depth == MAX_EXEC_DEPTH {
            return Err(self
                .errorf(
                    f,
                    format!("exceeded maximum template depth ({MAX_EXEC_DEPTH})"),
                )
                .into());
        }
        let new_dot = match &t.pipe {
            Some(p) => Slot::plain(self.eval_pipeline(f, dot, p)?),
            None => Slot::plain(Value::Nil),
        };
        if let Err(message) = self.nest() {
            return Err(self.errorf(f, message).into());
        }
        let mut frame = Frame {
            tree: &tree,
            vars: vec![(Name::const_new("$"), new_dot.clone())],
            node: None,
            depth: f.depth + 1,
        };
        let result = stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || {
            match self.walk_list(&mut frame, &new_dot, &tree.root, out) {
                Err(Flow::Break | Flow::Continue) => Ok(()),
                other => other,
            }
        });
        self.unnest();
        result
    }

    /// The budget error for a text node's output. The text itself can be long and span
    /// lines, so the error shows its start, quoted.
    fn output_error(&self, f: &Frame<'_>, pos: Pos, text: &str, message: String) -> Box<Error> {
        let excerpt: String = text.chars().take(24).collect();
        let ellipsis = if excerpt.len() < text.len() {
            "..."
        } else {
            ""
        };
        Box::new(Error::Exec(ExecError {
            template: f.tree.name.clone(),
            location: Some(f.tree.location(pos)),
            context: Some(format!("{}{ellipsis}", print::quote(&excerpt))),
            message,
            cause: None,
        }))
    }

    /// Builds an execution error at the frame's current node.
    fn errorf(&self, f: &Frame<'_>, message: String) -> Box<Error> {
        self.error_with(f, message, None)
    }

    fn error_with(&self, f: &Frame<'_>, message: String, cause: Option<Box<Error>>) -> Box<Error> {
        let (location, context) = match f.node {
            Some(n) => (
                Some(f.tree.location(n.pos())),
                Some(match n {
                    NodeRef::Node(node) => node_context(node, &f.tree.text),
                    other => other.to_string(),
                }),
            ),
            None => (None, None),
        };
        Box::new(Error::Exec(ExecError {
            template: f.tree.name.clone(),
            location,
            context,
            message,
            cause,
        }))
    }

    fn var_value(&self, f: &Frame<'_>, name: &str) -> EResult<Slot> {
        match f.vars.iter().rev().find(|(n, _)| n == name) {
            Some((_, v)) => Ok(v.clone()),
            None => Err(self.errorf(f, format!("undefined variable: {name}"))),
        }
    }

    fn set_var(&self, f: &mut Frame<'_>, name: &str, value: Slot) -> EResult<()> {
        match f.vars.iter_mut().rev().find(|(n, _)| n == name) {
            Some(slot) => {
                slot.1 = value;
                Ok(())
            }
            None => Err(self.errorf(f, format!("undefined variable: {name}"))),
        }
    }

    fn eval_pipeline<'t>(
        &mut self,
        f: &mut Frame<'t>,
        dot: &Slot,
        pipe: &'t PipeNode,
    ) -> EResult<Value> {
        f.node = Some(NodeRef::Pipe(pipe));
        let mut value: Option<Value> = None;
        for cmd in &pipe.cmds {
            value = Some(self.eval_command(f, dot, cmd, value)?);
        }
        let value = value.unwrap_or_default();
        for v in &pipe.decl {
            if pipe.is_assign {
                self.set_var(f, &v.idents[0], Slot::plain(value.clone()))?;
            } else {
                f.vars
                    .push((v.idents[0].clone(), Slot::plain(value.clone())));
            }
        }
        Ok(value)
    }

    fn not_a_function(
        &self,
        f: &Frame<'_>,
        args: &[Arg],
        final_value: &Option<Value>,
    ) -> EResult<()> {
        if args.len() > 1 || final_value.is_some() {
            let head = args.first().map(|a| a.to_string()).unwrap_or_default();
            return Err(self.errorf(f, format!("can't give argument to non-function {head}")));
        }
        Ok(())
    }

    fn eval_command<'t>(
        &mut self,
        f: &mut Frame<'t>,
        dot: &Slot,
        cmd: &'t CommandNode,
        final_value: Option<Value>,
    ) -> EResult<Value> {
        let first = &cmd.args[0];
        match first {
            Arg::Field(field) => {
                return Ok(self
                    .eval_field_node(f, dot, field, first, &cmd.args, final_value)?
                    .v);
            }
            Arg::Chain(chain) => {
                return Ok(self
                    .eval_chain_node(f, dot, chain, first, &cmd.args, final_value)?
                    .v);
            }
            Arg::Identifier { pos: _, name } => {
                return self.eval_function(
                    f,
                    dot,
                    name,
                    first,
                    NodeRef::Command(cmd),
                    &cmd.args,
                    final_value,
                );
            }
            Arg::Pipe(p) => {
                self.not_a_function(f, &cmd.args, &final_value)?;
                return self.eval_pipeline(f, dot, p);
            }
            Arg::Variable(v) => {
                return Ok(self
                    .eval_variable_node(f, dot, v, first, &cmd.args, final_value)?
                    .v);
            }
            _ => {}
        }
        f.node = Some(NodeRef::Arg(first));
        self.not_a_function(f, &cmd.args, &final_value)?;
        match first {
            Arg::Bool(_, b) => Ok(Value::Bool(*b)),
            Arg::Dot(_) => Ok(dot.v.clone()),
            Arg::Nil(_) => Err(self.errorf(f, "nil is not a command".into())),
            Arg::Number(n) => self.ideal_constant(f, n),
            Arg::String { .. } => Ok(string_literal(first)),
            other => Err(self.errorf(
                f,
                format!(
                    "can't evaluate command {}",
                    print::quote(&other.to_string())
                ),
            )),
        }
    }

    fn ideal_constant(&self, f: &Frame<'_>, n: &NumberNode) -> EResult<Value> {
        if n.is_complex {
            return Ok(crate::complex::complex_value(n.complex.0, n.complex.1));
        }
        let text = &n.text;
        let is_hex_int = text.len() > 2
            && text.starts_with('0')
            && matches!(text.as_bytes()[1], b'x' | b'X')
            && !text.contains(['p', 'P']);
        let is_rune = text.starts_with('\'');
        if let Some(fl) = n.float
            && !is_hex_int
            && !is_rune
            && text.contains(['.', 'e', 'E', 'p', 'P'])
        {
            return Ok(Value::Float(fl));
        }
        if let Some(i) = n.int {
            return Ok(Value::Int(i));
        }
        if n.uint.is_some() {
            return Err(self.errorf(f, format!("{text} overflows int")));
        }
        Ok(Value::Nil)
    }

    fn eval_field_node<'t>(
        &mut self,
        f: &mut Frame<'t>,
        dot: &Slot,
        field: &'t FieldNode,
        node: &'t Arg,
        args: &'t [Arg],
        final_value: Option<Value>,
    ) -> EResult<Slot> {
        f.node = Some(NodeRef::Arg(node));
        self.eval_field_chain(f, dot, dot.clone(), node, &field.idents, args, final_value)
    }

    fn eval_chain_node<'t>(
        &mut self,
        f: &mut Frame<'t>,
        dot: &Slot,
        chain: &'t ChainNode,
        node: &'t Arg,
        args: &'t [Arg],
        final_value: Option<Value>,
    ) -> EResult<Slot> {
        f.node = Some(NodeRef::Arg(node));
        if matches!(*chain.node, Arg::Nil(_)) {
            return Err(self.errorf(f, format!("indirection through explicit nil in {node}")));
        }
        let receiver = self.eval_arg(f, dot, None, &chain.node)?;
        self.eval_field_chain(
            f,
            dot,
            Slot::plain(receiver),
            node,
            &chain.fields,
            args,
            final_value,
        )
    }

    fn eval_variable_node<'t>(
        &mut self,
        f: &mut Frame<'t>,
        dot: &Slot,
        var: &'t VariableNode,
        node: &'t Arg,
        args: &'t [Arg],
        final_value: Option<Value>,
    ) -> EResult<Slot> {
        f.node = Some(NodeRef::Arg(node));
        let value = self.var_value(f, &var.idents[0])?;
        if var.idents.len() == 1 {
            if args.is_empty() && final_value.is_some() {
                return Err(self.errorf(f, format!("can't give argument to non-function {node}")));
            }
            self.not_a_function(f, args, &final_value)?;
            return Ok(value);
        }
        self.eval_field_chain(f, dot, value, node, &var.idents[1..], args, final_value)
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_field_chain<'t>(
        &mut self,
        f: &mut Frame<'t>,
        dot: &Slot,
        mut receiver: Slot,
        node: &'t Arg,
        idents: &'t [Name],
        args: &'t [Arg],
        final_value: Option<Value>,
    ) -> EResult<Slot> {
        let n = idents.len();
        for ident in &idents[..n - 1] {
            receiver = self.eval_field(f, dot, ident, node, &[], None, receiver)?;
        }
        self.eval_field(f, dot, &idents[n - 1], node, args, final_value, receiver)
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_field<'t>(
        &mut self,
        f: &mut Frame<'t>,
        dot: &Slot,
        name: &str,
        node: &'t Arg,
        args: &'t [Arg],
        final_value: Option<Value>,
        receiver: Slot,
    ) -> EResult<Slot> {
        if receiver.v.is_nil() {
            if receiver.iface {
                return Err(self.errorf(f, format!("nil pointer evaluating interface {{}}.{name}")));
            }
            if self.set.missing_key == MissingKey::Error {
                return Err(self.errorf(
                    f,
                    format!("nil data; no entry for key {}", print::quote(name)),
                ));
            }
            return Ok(Slot::plain(Value::Nil));
        }
        let has_args = args.len() > 1 || final_value.is_some();
        match &receiver.v {
            Value::Object(o) => {
                if let Some(reason) = o.uncallable(name) {
                    return Err(self.errorf(f, reason));
                }
                if let Some(sig) = o.method(name) {
                    let callee = Callee::Method(o.clone(), sig);
                    let v = self.eval_call(
                        f,
                        dot,
                        callee,
                        name,
                        NodeRef::Arg(node),
                        args,
                        final_value,
                    )?;
                    return Ok(Slot::plain(v));
                }
                if let Some(v) = o.field(name) {
                    if has_args {
                        let msg = if o.is_map() {
                            format!("{name} is not a method but has arguments")
                        } else {
                            format!("{name} has arguments but cannot be invoked as function")
                        };
                        return Err(self.errorf(f, msg));
                    }
                    return Ok(Slot {
                        v,
                        iface: o.is_map(),
                    });
                }
                if o.is_map() {
                    if has_args {
                        return Err(
                            self.errorf(f, format!("{name} is not a method but has arguments"))
                        );
                    }
                    return self.missing_key(f, name, true);
                }
                if o.unexported_field(name) {
                    return Err(self.errorf(
                        f,
                        format!(
                            "{name} is an unexported field of struct type {}",
                            o.type_name().trim_start_matches('*')
                        ),
                    ));
                }
            }
            // Helm's `common.Values` has methods, which Go finds before the keys.
            Value::Map(m)
                if m.kind == MapKind::Values
                    && let Some(sig) = ValuesMethods::method(name) =>
            {
                let callee = Callee::Method(Rc::new(ValuesMethods(m.clone())), sig);
                let v =
                    self.eval_call(f, dot, callee, name, NodeRef::Arg(node), args, final_value)?;
                return Ok(Slot::plain(v));
            }
            Value::Map(m) => {
                if has_args {
                    return Err(self.errorf(f, format!("{name} is not a method but has arguments")));
                }
                let string_map = m.kind == MapKind::String;
                return match m.get(name) {
                    Some(v) => Ok(Slot {
                        v,
                        iface: !string_map,
                    }),
                    None if string_map && self.set.missing_key == MissingKey::Zero => {
                        Ok(Slot::plain(Value::str("")))
                    }
                    None => self.missing_key(f, name, true),
                };
            }
            _ => {}
        }
        let typ = if receiver.iface {
            "interface {}".to_owned()
        } else {
            receiver.v.type_name()
        };
        Err(self.errorf(f, format!("can't evaluate field {name} in type {typ}")))
    }

    fn missing_key(&self, f: &Frame<'_>, name: &str, iface: bool) -> EResult<Slot> {
        match self.set.missing_key {
            MissingKey::Zero => Ok(Slot {
                v: Value::Nil,
                iface,
            }),
            MissingKey::Error => Err(self.errorf(
                f,
                format!("map has no entry for key {}", print::quote(name)),
            )),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_function<'t>(
        &mut self,
        f: &mut Frame<'t>,
        dot: &Slot,
        name: &str,
        ident: &'t Arg,
        node: NodeRef<'t>,
        args: &'t [Arg],
        final_value: Option<Value>,
    ) -> EResult<Value> {
        f.node = Some(NodeRef::Arg(ident));
        let Some(func) = self.set.funcs.get(name) else {
            return Err(self.errorf(
                f,
                format!("{} is not a defined function", print::quote(name)),
            ));
        };
        self.eval_call(f, dot, Callee::Func(func), name, node, args, final_value)
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_call<'t>(
        &mut self,
        f: &mut Frame<'t>,
        dot: &Slot,
        callee: Callee<'_>,
        name: &str,
        node: NodeRef<'t>,
        args: &'t [Arg],
        final_value: Option<Value>,
    ) -> EResult<Value> {
        let args = if args.is_empty() { args } else { &args[1..] };
        let num_in = args.len() + usize::from(final_value.is_some());
        let (params, variadic) = callee.signature();
        let num_fixed = params.len();
        if variadic.is_some() {
            if num_in < num_fixed {
                return Err(self.errorf(
                    f,
                    format!(
                        "wrong number of args for {name}: want at least {num_fixed} got {}",
                        args.len()
                    ),
                ));
            }
        } else if num_in != num_fixed {
            return Err(self.errorf(
                f,
                format!("wrong number of args for {name}: want {num_fixed} got {num_in}"),
            ));
        }

        if let Callee::Func(Func {
            imp: Imp::AndOr(is_or),
            ..
        }) = callee
        {
            let is_or = *is_or;
            let mut v = Value::Nil;
            for arg in args {
                v = self.eval_arg(f, dot, Some(Ty::Reflect), arg)?;
                if v.truth() == is_or {
                    return Ok(v);
                }
            }
            if let Some(fv) = final_value {
                v = fv;
            }
            return Ok(v);
        }

        let mut argv = Vec::with_capacity(num_in);
        let mut nil_interfaces = 0u64;
        for (i, arg) in args.iter().enumerate() {
            let ty = if i < num_fixed {
                params[i]
            } else {
                variadic.unwrap_or(Ty::Any)
            };
            let slot = self.eval_arg_slot(f, dot, Some(ty), arg)?;
            if slot.iface && slot.v.is_nil() && i < 64 {
                nil_interfaces |= 1 << i;
            }
            argv.push(callee.string_arg(ty, slot.v));
        }
        self.nil_interfaces = nil_interfaces;
        if let Some(fv) = final_value {
            let ty = match variadic {
                Some(v) if num_in > num_fixed => v,
                _ => params[num_in - 1],
            };
            let v = self.validate_type(f, fv, false, ty)?;
            argv.push(callee.string_arg(ty, v));
        }

        // Results are counted by what they add (see `budget`); `include` and `tpl`
        // counted their output as they wrote it.
        let counted = |v: Value| match budget::charge_result(&v, &argv) {
            Ok(()) => Ok(v),
            Err(message) => Err(FuncError::from(message)),
        };
        let result = match callee {
            Callee::Func(func) => match &func.imp {
                Imp::Pure(fun) => fun(&argv).map_err(FuncError::from).and_then(counted),
                Imp::Exec(fun) => fun(self, &argv),
                Imp::Call => self.builtin_call(f, args, &argv),
                Imp::AndOr(_) => Ok(Value::Nil),
            },
            Callee::Method(o, _) => o
                .call(name, &argv)
                .map_err(FuncError::from)
                .and_then(counted),
        };
        match result {
            Ok(v) => Ok(v),
            Err(e) => {
                f.node = Some(node);
                Err(self.error_with(f, format!("error calling {name}: {}", e.message), e.cause))
            }
        }
    }

    /// Go's `call` builtin. Helm data holds no function values, so every call fails the
    /// way Go's does for a non-function.
    fn builtin_call(
        &self,
        _f: &Frame<'_>,
        args: &[Arg],
        argv: &[Value],
    ) -> Result<Value, FuncError> {
        let name = args.first().map(|a| a.to_string()).unwrap_or_default();
        match argv.first() {
            None | Some(Value::Nil) => Err("call of nil".into()),
            Some(v) => Err(format!("non-function {name} of type {}", v.type_name()).into()),
        }
    }

    /// Checks an evaluated argument against its parameter type (Go's `validateType`).
    /// A nil read from a map or slice element is a nil `interface {}`, which only an
    /// `interface {}` parameter accepts; an absent value is accepted by any nillable one.
    fn validate_type(&self, f: &Frame<'_>, value: Value, iface: bool, ty: Ty) -> EResult<Value> {
        if value.is_nil() {
            if iface && !matches!(ty, Ty::Any | Ty::Reflect) {
                return Err(self.errorf(
                    f,
                    format!(
                        "wrong type for value; expected {}; got interface {{}}",
                        ty.go_name()
                    ),
                ));
            }
            if ty.nillable() {
                return Ok(Value::Nil);
            }
            return Err(self.errorf(f, format!("invalid value; expected {}", ty.go_name())));
        }
        let ok = match (ty, &value) {
            (Ty::Any | Ty::Reflect, _) => true,
            (Ty::String, Value::String(_) | Value::RawStr(_)) => true,
            (Ty::Int, Value::Int(_)) => true,
            (Ty::Int64, Value::Int64(_)) => true,
            (Ty::Float64, Value::Float(_)) => true,
            (Ty::Bool, Value::Bool(_)) => true,
            (Ty::Map, Value::Map(m)) => m.kind != MapKind::String,
            (Ty::List, Value::List(l)) => l.kind == ListKind::Interface,
            (Ty::Bytes, Value::Bytes(_)) => true,
            (Ty::NamedInt(name) | Ty::Object(name), Value::Object(o)) => o.type_name() == name,
            _ => false,
        };
        if ok {
            return Ok(value);
        }
        Err(self.errorf(
            f,
            format!(
                "wrong type for value; expected {}; got {}",
                ty.go_name(),
                value.type_name()
            ),
        ))
    }

    /// Evaluates one argument for a parameter of type `ty` (`None`: no conversion, as for
    /// the head of a chain).
    fn eval_arg<'t>(
        &mut self,
        f: &mut Frame<'t>,
        dot: &Slot,
        ty: Option<Ty>,
        arg: &'t Arg,
    ) -> EResult<Value> {
        self.eval_arg_slot(f, dot, ty, arg).map(|slot| slot.v)
    }

    /// [`Exec::eval_arg`], also telling whether the value was read through an
    /// `interface {}` (a field, variable or dot), which Go's builtins can observe.
    fn eval_arg_slot<'t>(
        &mut self,
        f: &mut Frame<'t>,
        dot: &Slot,
        ty: Option<Ty>,
        arg: &'t Arg,
    ) -> EResult<Slot> {
        f.node = Some(NodeRef::Arg(arg));
        let check = |this: &Self, f: &Frame<'_>, slot: Slot| {
            let iface = slot.iface;
            let v = match ty {
                Some(t) => this.validate_type(f, slot.v, iface, t)?,
                None => slot.v,
            };
            Ok(Slot { v, iface })
        };
        match arg {
            Arg::Dot(_) => return check(self, f, dot.clone()),
            Arg::Nil(_) => {
                return match ty {
                    Some(t) if !t.nillable() => {
                        Err(self.errorf(f, format!("cannot assign nil to {}", t.go_name())))
                    }
                    _ => Ok(Slot::plain(Value::Nil)),
                };
            }
            Arg::Field(field) => {
                let slot =
                    self.eval_field_node(f, dot, field, arg, std::slice::from_ref(arg), None)?;
                return check(self, f, slot);
            }
            Arg::Variable(var) => {
                let slot = self.eval_variable_node(f, dot, var, arg, &[], None)?;
                return check(self, f, slot);
            }
            Arg::Pipe(p) => {
                let v = self.eval_pipeline(f, dot, p)?;
                return check(self, f, Slot::plain(v));
            }
            Arg::Identifier { name, .. } => {
                let v = self.eval_function(f, dot, name, arg, NodeRef::Arg(arg), &[], None)?;
                return check(self, f, Slot::plain(v));
            }
            Arg::Chain(chain) => {
                let slot = self.eval_chain_node(f, dot, chain, arg, &[], None)?;
                return check(self, f, slot);
            }
            _ => {}
        }
        self.eval_literal_arg(f, ty, arg).map(Slot::plain)
    }

    /// A constant argument converted to its parameter type, as Go's `evalArg` does.
    fn eval_literal_arg(&self, f: &Frame<'_>, ty: Option<Ty>, arg: &Arg) -> EResult<Value> {
        let ty = ty.unwrap_or(Ty::Any);
        match ty {
            Ty::Bool => match arg {
                Arg::Bool(_, b) => Ok(Value::Bool(*b)),
                _ => Err(self.errorf(f, format!("expected bool; found {arg}"))),
            },
            Ty::Float64 => match arg {
                Arg::Number(n) if let Some(x) = n.float => Ok(Value::Float(x)),
                _ => Err(self.errorf(f, format!("expected float; found {arg}"))),
            },
            Ty::Int | Ty::Int64 | Ty::NamedInt(_) => match arg {
                Arg::Number(n) if let Some(i) = n.int => Ok(match ty {
                    Ty::Int => Value::Int(i),
                    Ty::NamedInt(name) => crate::funcs::gotime::named_int(name, i),
                    _ => Value::Int64(i),
                }),
                _ => Err(self.errorf(f, format!("expected integer; found {arg}"))),
            },
            Ty::Uint32 => match arg {
                Arg::Number(n) if let Some(u) = n.uint => Ok(Value::Int64(u as u32 as i64)),
                _ => Err(self.errorf(f, format!("expected unsigned integer; found {arg}"))),
            },
            Ty::String => match arg {
                Arg::String { .. } => Ok(string_literal(arg)),
                _ => Err(self.errorf(f, format!("expected string; found {arg}"))),
            },
            Ty::Any | Ty::Reflect => match arg {
                Arg::Bool(_, b) => Ok(Value::Bool(*b)),
                Arg::Number(n) => self.ideal_constant(f, n),
                Arg::String { .. } => Ok(string_literal(arg)),
                _ => Err(self.errorf(
                    f,
                    format!("can't handle assignment of {arg} to empty interface argument"),
                )),
            },
            Ty::Map | Ty::List | Ty::Bytes | Ty::Object(_) => Err(self.errorf(
                f,
                format!("can't handle {arg} for arg of type {}", ty.go_name()),
            )),
        }
    }
}

/// The value of a string literal: its text, or the bytes it stands for when they are
/// not UTF-8.
fn string_literal(arg: &Arg) -> Value {
    match arg {
        Arg::String {
            binary: true,
            quoted,
            ..
        } => match crate::parse::unquote_bytes(quoted) {
            Some(bytes) => Value::from_go_bytes(bytes),
            None => Value::Nil,
        },
        Arg::String { text, .. } => Value::str(text),
        _ => Value::Nil,
    }
}

/// The text Go prints for an action-level node in error messages.
fn node_context(node: &Node, text: &str) -> String {
    struct WithText<'a>(&'a Node, &'a str);
    impl std::fmt::Display for WithText<'_> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            crate::parse::ast::fmt_node_with_text(self.0, self.1, f)
        }
    }
    WithText(node, text).to_string()
}

/// Go's `printValue`: an absent value prints as `<no value>`. The bytes written count
/// in the budget; a list or map is checked before it is written, as its text can be far
/// larger than what building it counted.
fn print_value(out: &mut GoBuf, v: &Value) -> Result<(), String> {
    let before = out.len();
    match v {
        Value::Nil => out.push_str("<no value>"),
        Value::String(s) => {
            budget::reserve(s.len() as u64)?;
            out.push_str(s);
        }
        Value::RawStr(b) => {
            budget::reserve(b.len() as u64)?;
            out.push_raw(b);
        }
        Value::Object(o) if let Some(text) = o.template_format() => out.push_str(&text),
        other => {
            budget::check_expansion(other)?;
            print::write_value(out, other);
        }
    }
    budget::charge((out.len() - before) as u64, "the output")
}

/// What a `range` iterates over.
enum Ranged {
    List(Rc<crate::value::List>),
    Bytes(Rc<[u8]>),
    /// Key and value slots, taken when the range starts.
    Map(Vec<(Slot, Slot)>),
    /// `range N` over an integer of this type.
    Count(Value),
}

impl Ranged {
    fn len(&self) -> u64 {
        match self {
            Ranged::List(l) => l.len() as u64,
            Ranged::Bytes(b) => b.len() as u64,
            Ranged::Map(entries) => entries.len() as u64,
            Ranged::Count(Value::Int(n) | Value::Int64(n)) => (*n).max(0) as u64,
            Ranged::Count(Value::Uint8(n)) => *n as u64,
            Ranged::Count(_) => 0,
        }
    }

    /// The index and element slots of element `i` (< `len`).
    fn get(&self, i: u64) -> (Slot, Slot) {
        let index = || Slot::plain(Value::Int(i as i64));
        match self {
            Ranged::List(l) => (
                index(),
                Slot {
                    v: l.get(i as usize).unwrap_or_default(),
                    iface: l.kind == ListKind::Interface,
                },
            ),
            Ranged::Bytes(b) => (index(), Slot::plain(Value::Uint8(b[i as usize]))),
            Ranged::Map(entries) => entries[i as usize].clone(),
            // Go gives a range over an integer no index.
            Ranged::Count(n) => (
                Slot::plain(Value::Nil),
                Slot::plain(match n {
                    Value::Int(_) => Value::Int(i as i64),
                    Value::Int64(_) => Value::Int64(i as i64),
                    _ => Value::Uint8(i as u8),
                }),
            ),
        }
    }
}

/// What a call invokes: a template function or a host object's method.
#[derive(Clone)]
enum Callee<'a> {
    Func(&'a Func),
    Method(Rc<dyn Object>, MethodSig),
}

impl Callee<'_> {
    fn signature(&self) -> (&'static [Ty], Option<Ty>) {
        match self {
            Callee::Func(f) => (f.params, f.variadic),
            Callee::Method(_, sig) => (sig.params, sig.variadic),
        }
    }

    /// An argument for a `string` parameter as the callee takes it: a string that is
    /// not UTF-8 stays bytes for the functions that work on bytes, and is text (each
    /// stray byte U+FFFD, as Go's character-by-character functions see it) for others.
    fn string_arg(&self, ty: Ty, v: Value) -> Value {
        match (&v, ty, self) {
            (Value::RawStr(b), Ty::String, Callee::Method(..))
            | (
                Value::RawStr(b),
                Ty::String,
                Callee::Func(Func {
                    raw_strings: false, ..
                }),
            ) => Value::string(crate::gostr::go_lossy(b).into_owned()),
            _ => v,
        }
    }
}
