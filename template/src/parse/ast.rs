//! The parse tree. Nodes print themselves the way Go's `parse.Node.String` does, because
//! execution errors quote the failing node (`at <.Values.x.y>`).

use std::fmt;
use std::sync::Arc;

/// A byte offset into the template source.
pub type Pos = usize;

/// Names and literals in the tree. Almost all are short (`Values`, `include`, `image`),
/// and a compact string keeps those inline: a large chart's tree has hundreds of
/// thousands of them, and a heap allocation each made parsing allocation-bound.
pub type Name = compact_str::CompactString;

/// One named template: a file's top level or a `define`/`block` body.
#[derive(Debug)]
pub struct Tree {
    pub name: String,
    /// The name of the file the tree was parsed from, for error locations.
    pub parse_name: Arc<str>,
    /// The whole source the tree was parsed from; text nodes are ranges of it.
    pub text: Arc<str>,
    /// Whether `text` carries bytes that are not UTF-8 (`gostr::source_text`), which
    /// text nodes give back as bytes.
    pub binary: bool,
    /// Shared by the trees of files with the same text (see `TemplateSet::parse_all`).
    pub root: Arc<ListNode>,
}

impl Tree {
    /// Go's `ErrorContext` location: `name:line:col` with a 0-based byte column.
    pub fn location(&self, pos: Pos) -> String {
        let before = &self.text[..pos.min(self.text.len())];
        let line = 1 + before.matches('\n').count();
        let line_start = before.rfind('\n').map_or(0, |nl| nl + 1);
        // Go counts bytes; a carried byte is one character of four here.
        let column = if self.binary {
            crate::gostr::source_bytes(&before[line_start..]).len()
        } else {
            pos - line_start
        };
        format!("{}:{}:{}", self.parse_name, line, column)
    }

    /// Whether the tree holds nothing but white space and comments: Go lets a later empty
    /// definition keep an earlier one instead of replacing it.
    pub fn is_empty(&self) -> bool {
        self.root.nodes.iter().all(|node| match node {
            Node::Text { start, end, .. } => self.text[*start..*end].trim().is_empty(),
            _ => false,
        })
    }
}

#[derive(Debug, Default)]
pub struct ListNode {
    pub pos: Pos,
    pub nodes: Vec<Node>,
}

#[derive(Debug)]
pub enum Node {
    /// Literal text: `start..end` in the tree's source.
    Text {
        pos: Pos,
        start: usize,
        end: usize,
    },
    Action(ActionNode),
    // Boxed: a branch is twice the size of the other nodes, and every node pays for the
    // largest variant.
    If(Box<BranchNode>),
    Range(Box<BranchNode>),
    With(Box<BranchNode>),
    Template(Box<TemplateNode>),
    Break {
        pos: Pos,
    },
    Continue {
        pos: Pos,
    },
}

#[derive(Debug)]
pub struct ActionNode {
    pub pos: Pos,
    pub pipe: PipeNode,
}

/// `if`, `range` and `with`, which share their shape.
#[derive(Debug)]
pub struct BranchNode {
    pub pos: Pos,
    pub pipe: PipeNode,
    pub list: ListNode,
    pub else_list: Option<ListNode>,
}

#[derive(Debug)]
pub struct TemplateNode {
    pub pos: Pos,
    pub name: Name,
    pub pipe: Option<PipeNode>,
}

#[derive(Debug)]
pub struct PipeNode {
    pub pos: Pos,
    /// `$x = ...` rather than `$x := ...`.
    pub is_assign: bool,
    pub decl: Vec<VariableNode>,
    pub cmds: Vec<CommandNode>,
}

#[derive(Debug)]
pub struct CommandNode {
    pub pos: Pos,
    pub args: Vec<Arg>,
}

#[derive(Debug)]
pub struct VariableNode {
    pub pos: Pos,
    /// `$x.a.b` is `["$x", "a", "b"]`.
    pub idents: Vec<Name>,
}

#[derive(Debug)]
pub struct FieldNode {
    pub pos: Pos,
    pub idents: Vec<Name>,
}

#[derive(Debug)]
pub struct ChainNode {
    pub pos: Pos,
    pub node: Box<Arg>,
    pub fields: Vec<Name>,
}

/// A number literal with every interpretation Go's parser accepts for it.
#[derive(Debug, Clone)]
pub struct NumberNode {
    pub pos: Pos,
    pub text: String,
    pub int: Option<i64>,
    pub uint: Option<u64>,
    pub float: Option<f64>,
    pub is_complex: bool,
    /// The value of a complex literal (`1i`, `2+3i`), as (real, imaginary).
    pub complex: (f64, f64),
}

#[derive(Debug)]
pub enum Arg {
    Field(FieldNode),
    Variable(VariableNode),
    Chain(ChainNode),
    Identifier {
        pos: Pos,
        name: Name,
    },
    Pipe(Box<PipeNode>),
    Dot(Pos),
    Nil(Pos),
    Bool(Pos, bool),
    /// Boxed: the widest argument, and rare.
    Number(Box<NumberNode>),
    String {
        pos: Pos,
        quoted: Name,
        /// The text, or for a literal that stands for bytes that are not UTF-8, those
        /// bytes read as text (the bytes come from `quoted` when it is evaluated).
        text: Name,
        binary: bool,
    },
}

impl Arg {
    pub fn pos(&self) -> Pos {
        match self {
            Arg::Field(f) => f.pos,
            Arg::Variable(v) => v.pos,
            Arg::Chain(c) => c.pos,
            Arg::Identifier { pos, .. }
            | Arg::Dot(pos)
            | Arg::Nil(pos)
            | Arg::Bool(pos, _)
            | Arg::String { pos, .. } => *pos,
            Arg::Pipe(p) => p.pos,
            Arg::Number(n) => n.pos,
        }
    }
}

/// A source of error context: any node an error can point at.
#[derive(Clone, Copy)]
pub enum NodeRef<'a> {
    Arg(&'a Arg),
    Command(&'a CommandNode),
    Pipe(&'a PipeNode),
    Node(&'a Node),
    Variable(&'a VariableNode),
}

impl NodeRef<'_> {
    pub fn pos(&self) -> Pos {
        match self {
            NodeRef::Arg(a) => a.pos(),
            NodeRef::Command(c) => c.pos,
            NodeRef::Pipe(p) => p.pos,
            NodeRef::Variable(v) => v.pos,
            NodeRef::Node(n) => match n {
                Node::Text { pos, .. } | Node::Break { pos } | Node::Continue { pos } => *pos,
                Node::Action(a) => a.pos,
                Node::If(b) | Node::Range(b) | Node::With(b) => b.pos,
                Node::Template(t) => t.pos,
            },
        }
    }
}

impl fmt::Display for NodeRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NodeRef::Arg(a) => a.fmt(f),
            NodeRef::Command(c) => c.fmt(f),
            NodeRef::Pipe(p) => p.fmt(f),
            NodeRef::Variable(v) => v.fmt(f),
            NodeRef::Node(n) => fmt_node(n, None, f),
        }
    }
}

/// Prints a node with its text, as Go's `Node.String` does.
pub fn fmt_node_with_text(node: &Node, text: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    fmt_node(node, Some(text), f)
}

fn fmt_list(list: &ListNode, text: Option<&str>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    for node in &list.nodes {
        fmt_node(node, text, f)?;
    }
    Ok(())
}

/// Text nodes need the source to print; without it (error context of a lone node) they
/// print nothing, which only affects messages about whole `if`/`range` nodes.
fn fmt_node(node: &Node, text: Option<&str>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match node {
        Node::Text { start, end, .. } => match text {
            Some(t) => f.write_str(&t[*start..*end]),
            None => Ok(()),
        },
        Node::Action(a) => write!(f, "{{{{{}}}}}", a.pipe),
        Node::If(b) => fmt_branch("if", b, text, f),
        Node::Range(b) => fmt_branch("range", b, text, f),
        Node::With(b) => fmt_branch("with", b, text, f),
        Node::Template(t) => match &t.pipe {
            Some(p) => write!(f, "{{{{template {} {}}}}}", crate::print::quote(&t.name), p),
            None => write!(f, "{{{{template {}}}}}", crate::print::quote(&t.name)),
        },
        Node::Break { .. } => f.write_str("{{break}}"),
        Node::Continue { .. } => f.write_str("{{continue}}"),
    }
}

fn fmt_branch(
    name: &str,
    b: &BranchNode,
    text: Option<&str>,
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    write!(f, "{{{{{name} {}}}}}", b.pipe)?;
    fmt_list(&b.list, text, f)?;
    if let Some(e) = &b.else_list {
        f.write_str("{{else}}")?;
        fmt_list(e, text, f)?;
    }
    f.write_str("{{end}}")
}

impl fmt::Display for PipeNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.decl.is_empty() {
            for (i, v) in self.decl.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                v.fmt(f)?;
            }
            f.write_str(if self.is_assign { " = " } else { " := " })?;
        }
        for (i, c) in self.cmds.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            c.fmt(f)?;
        }
        Ok(())
    }
}

impl fmt::Display for CommandNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, arg) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            match arg {
                Arg::Pipe(p) => write!(f, "({p})")?,
                other => other.fmt(f)?,
            }
        }
        Ok(())
    }
}

impl fmt::Display for VariableNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.idents.join("."))
    }
}

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arg::Field(field) => {
                for id in &field.idents {
                    write!(f, ".{id}")?;
                }
                Ok(())
            }
            Arg::Variable(v) => v.fmt(f),
            Arg::Chain(c) => {
                match &*c.node {
                    Arg::Pipe(p) => write!(f, "({p})")?,
                    other => other.fmt(f)?,
                }
                for field in &c.fields {
                    write!(f, ".{field}")?;
                }
                Ok(())
            }
            Arg::Identifier { name, .. } => f.write_str(name),
            Arg::Pipe(p) => p.fmt(f),
            Arg::Dot(_) => f.write_str("."),
            Arg::Nil(_) => f.write_str("nil"),
            Arg::Bool(_, b) => write!(f, "{b}"),
            Arg::Number(n) => f.write_str(&n.text),
            Arg::String { quoted, .. } => f.write_str(quoted),
        }
    }
}

/// Dropping deeply nested `if`/`range`/`with` bodies recursively could overflow the
/// stack, so nested lists are taken apart iteratively.
impl Drop for ListNode {
    fn drop(&mut self) {
        let mut pending = std::mem::take(&mut self.nodes);
        while let Some(node) = pending.pop() {
            if let Node::If(mut b) | Node::Range(mut b) | Node::With(mut b) = node {
                pending.append(&mut b.list.nodes);
                if let Some(mut e) = b.else_list.take() {
                    pending.append(&mut e.nodes);
                }
            }
        }
    }
}
