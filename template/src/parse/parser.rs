//! Go's text/template parser: the same grammar, the same three-token look-ahead and the
//! same error messages, so that `helm template` parse errors come out identical.

use std::sync::Arc;

use super::ast::*;
use super::lexer::{Item, Kind, Lexer};
use super::number::parse_number;
use super::unquote::unquote;
use crate::error::ParseError;
use crate::gostr::source_byte;

/// Deeper parenthesised nesting than this is refused. Go allows 10000; no real template
/// comes near either limit and a lower one keeps stack use bounded.
const MAX_PAREN_DEPTH: usize = 1000;

/// Parses one file. Returns its top-level tree (named `name`) first, then every
/// `define`/`block` it contains, in source order.
pub fn parse(
    name: &str,
    text: &str,
    has_function: &dyn Fn(&str) -> bool,
) -> Result<Vec<Tree>, ParseError> {
    parse_source(name, text, false, has_function)
}

/// [`parse`] of a source `gostr::source_text` made: `binary` when it carries bytes that
/// are not UTF-8.
pub fn parse_source(
    name: &str,
    text: &str,
    binary: bool,
    has_function: &dyn Fn(&str) -> bool,
) -> Result<Vec<Tree>, ParseError> {
    if text.len() > super::lexer::MAX_INPUT {
        return Err(ParseError {
            name: name.to_owned(),
            line: 1,
            message: "template is larger than 4 GiB".to_owned(),
        });
    }
    let shared: Arc<str> = Arc::from(text);
    let parse_name: Arc<str> = Arc::from(name);
    let mut parser = Parser {
        lexer: Lexer::new(text, !has_function("break"), !has_function("continue"))
            .carrying_bytes(binary),
        token: [Item::EOF; 3],
        peek_count: 0,
        vars: vec!["$"],
        action_line: 0,
        range_depth: 0,
        paren_depth: 0,
        parse_name: parse_name.clone(),
        has_function,
        defined: Vec::new(),
        text: shared.clone(),
        binary,
        node_stack: Vec::new(),
        command_stack: Vec::new(),
        arg_stack: Vec::new(),
    };
    let root = parser.parse_top()?;
    let top = Tree {
        name: name.to_owned(),
        parse_name,
        text: shared,
        binary,
        root: Arc::new(root),
    };
    let mut trees = vec![top];
    // Go checks the file's own tree against same-named definitions in it.
    let defined = std::mem::take(&mut parser.defined);
    for tree in defined {
        parser.add(&mut trees, tree)?;
    }
    Ok(trees)
}

enum Parsed {
    Node(Node),
    End,
    Else(Pos),
}

impl Parsed {
    fn describe(&self) -> &'static str {
        match self {
            Parsed::End => "{{end}}",
            Parsed::Else(_) => "{{else}}",
            Parsed::Node(_) => "node",
        }
    }
}

struct Parser<'f> {
    lexer: Lexer<'f>,
    token: [Item; 3],
    peek_count: usize,
    vars: Vec<&'f str>,
    action_line: usize,
    range_depth: usize,
    paren_depth: usize,
    parse_name: Arc<str>,
    has_function: &'f dyn Fn(&str) -> bool,
    defined: Vec<Tree>,
    text: Arc<str>,
    binary: bool,
    /// Nodes, commands and arguments of the lists being parsed, innermost last: a list
    /// is gathered here and moved into a vector of its exact size when it ends, one
    /// allocation instead of a growing vector and a shrink.
    node_stack: Vec<Node>,
    command_stack: Vec<CommandNode>,
    arg_stack: Vec<Arg>,
}

type PResult<T> = Result<T, ParseError>;

/// The parts of `a.b.c`, allocated at their exact count: a large chart has a hundred
/// thousand of these lists, and a vector's first growth would reserve four.
fn names(dotted: &str) -> Vec<Name> {
    let mut names = Vec::with_capacity(dotted.split('.').count());
    names.extend(dotted.split('.').map(Name::from));
    names
}

impl<'f> Parser<'f> {
    fn next(&mut self) -> Item {
        if self.peek_count > 0 {
            self.peek_count -= 1;
        } else {
            self.token[0] = self.lexer.next_item();
        }
        self.token[self.peek_count]
    }

    /// The source text of a token.
    fn val(&self, token: &Item) -> &'f str {
        self.lexer.text(token)
    }

    fn backup(&mut self) {
        self.peek_count += 1;
    }

    fn backup2(&mut self, t1: Item) {
        self.token[1] = t1;
        self.peek_count = 2;
    }

    fn backup3(&mut self, t2: Item, t1: Item) {
        self.token[1] = t1;
        self.token[2] = t2;
        self.peek_count = 3;
    }

    fn peek(&mut self) -> Item {
        if self.peek_count > 0 {
            return self.token[self.peek_count - 1];
        }
        self.peek_count = 1;
        self.token[0] = self.lexer.next_item();
        self.token[0]
    }

    fn next_non_space(&mut self) -> Item {
        loop {
            let token = self.next();
            if token.kind != Kind::Space {
                return token;
            }
        }
    }

    fn peek_non_space(&mut self) -> Item {
        let token = self.next_non_space();
        self.backup();
        token
    }

    fn error<T>(&self, message: impl Into<String>) -> PResult<T> {
        Err(ParseError {
            name: self.parse_name.to_string(),
            line: self.token[0].line as usize,
            message: message.into(),
        })
    }

    fn expect(&mut self, expected: Kind, context: &str) -> PResult<Item> {
        let token = self.next_non_space();
        if token.kind != expected {
            return self.unexpected(&token, context);
        }
        Ok(token)
    }

    fn unexpected<T>(&self, token: &Item, context: &str) -> PResult<T> {
        if token.kind == Kind::Error {
            let mut extra = String::new();
            let message = self.lexer.error_message();
            if self.action_line != 0 && self.action_line != token.line as usize {
                extra = format!(
                    " in action started at {}:{}",
                    self.parse_name, self.action_line
                );
                if message.ends_with(" action") {
                    extra = extra[" in action".len()..].to_owned();
                }
            }
            return self.error(format!("{message}{extra}"));
        }
        self.error(format!(
            "unexpected {} in {context}",
            self.lexer.describe(token)
        ))
    }

    /// Records a definition, applying Go's rule for a name defined twice in one file.
    fn add(&self, trees: &mut Vec<Tree>, tree: Tree) -> PResult<()> {
        match trees.iter().position(|t| t.name == tree.name) {
            None => trees.push(tree),
            Some(i) if trees[i].is_empty() => trees[i] = tree,
            Some(_) if tree.is_empty() => {}
            Some(_) => {
                return Err(ParseError {
                    name: self.parse_name.to_string(),
                    line: self.token[0].line as usize,
                    message: format!(
                        "template: multiple definition of template {}",
                        crate::print::quote(&tree.name)
                    ),
                });
            }
        }
        Ok(())
    }

    fn parse_top(&mut self) -> PResult<ListNode> {
        let pos = self.peek().pos();
        let mut root = ListNode {
            pos,
            nodes: Vec::new(),
        };
        while self.peek().kind != Kind::Eof {
            if self.peek().kind == Kind::LeftDelim {
                let delim = self.next();
                if self.next_non_space().kind == Kind::Define {
                    self.parse_definition()?;
                    continue;
                }
                self.backup2(delim);
            }
            match self.text_or_action()? {
                Parsed::Node(n) => root.nodes.push(n),
                other => return self.error(format!("unexpected {}", other.describe())),
            }
        }
        Ok(root)
    }

    /// Runs `body` as the parse of a separate tree sharing the lexer: fresh variables and
    /// no enclosing range, as Go's nested `Tree` has.
    fn with_fresh_scope<T>(&mut self, body: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        let vars = std::mem::replace(&mut self.vars, vec!["$"]);
        let range_depth = std::mem::replace(&mut self.range_depth, 0);
        let result = body(self);
        self.vars = vars;
        self.range_depth = range_depth;
        result
    }

    fn parse_definition(&mut self) -> PResult<()> {
        const CONTEXT: &str = "define clause";
        self.with_fresh_scope(|p| {
            let token = p.next_non_space();
            if token.kind != Kind::String && token.kind != Kind::RawString {
                return p.unexpected(&token, CONTEXT);
            }
            let name = match unquote(p.val(&token)) {
                Ok(s) => s.unwrap_or_else(|b| crate::gostr::go_lossy(&b).into_owned()),
                Err(e) => return p.error(e),
            };
            p.expect(Kind::RightDelim, CONTEXT)?;
            let (root, end) = p.item_list()?;
            if !matches!(end, Parsed::End) {
                return p.error(format!("unexpected {} in {CONTEXT}", end.describe()));
            }
            let tree = Tree {
                name,
                parse_name: p.parse_name.clone(),
                text: p.text.clone(),
                binary: p.binary,
                root: Arc::new(root),
            };
            let mut defined = std::mem::take(&mut p.defined);
            let added = p.add(&mut defined, tree);
            p.defined = defined;
            added
        })
    }

    fn item_list(&mut self) -> PResult<(ListNode, Parsed)> {
        let pos = self.peek_non_space().pos();
        let mark = self.node_stack.len();
        while self.peek_non_space().kind != Kind::Eof {
            match self.text_or_action()? {
                Parsed::Node(n) => self.node_stack.push(n),
                end => {
                    let nodes = self.node_stack.drain(mark..).collect();
                    return Ok((ListNode { pos, nodes }, end));
                }
            }
        }
        self.error("unexpected EOF")
    }

    fn text_or_action(&mut self) -> PResult<Parsed> {
        let token = self.next_non_space();
        match token.kind {
            Kind::Text => {
                let start = token.pos();
                Ok(Parsed::Node(Node::Text {
                    pos: start,
                    start,
                    end: start + token.len as usize,
                }))
            }
            Kind::LeftDelim => {
                self.action_line = token.line as usize;
                let result = self.action();
                self.action_line = 0;
                result
            }
            _ => self.unexpected(&token, "input"),
        }
    }

    fn action(&mut self) -> PResult<Parsed> {
        let token = self.next_non_space();
        match token.kind {
            Kind::Block => return self.block_control(),
            Kind::Break => return self.break_control(token.pos(), "{{break}}"),
            Kind::Continue => return self.break_control(token.pos(), "{{continue}}"),
            Kind::Else => return self.else_control(),
            Kind::End => {
                self.expect(Kind::RightDelim, "end")?;
                return Ok(Parsed::End);
            }
            Kind::If => {
                return self
                    .branch_control("if")
                    .map(|b| Parsed::Node(Node::If(Box::new(b))));
            }
            Kind::Range => {
                return self
                    .branch_control("range")
                    .map(|b| Parsed::Node(Node::Range(Box::new(b))));
            }
            Kind::Template => return self.template_control(),
            Kind::With => {
                return self
                    .branch_control("with")
                    .map(|b| Parsed::Node(Node::With(Box::new(b))));
            }
            _ => {}
        }
        self.backup();
        let token = self.peek();
        let pipe = self.pipeline("command", Kind::RightDelim)?;
        Ok(Parsed::Node(Node::Action(ActionNode {
            pos: token.pos(),
            pipe,
        })))
    }

    fn break_control(&mut self, pos: Pos, what: &str) -> PResult<Parsed> {
        let token = self.next_non_space();
        if token.kind != Kind::RightDelim {
            return self.unexpected(&token, what);
        }
        if self.range_depth == 0 {
            return self.error(format!("{what} outside {{{{range}}}}"));
        }
        Ok(Parsed::Node(if what == "{{break}}" {
            Node::Break { pos }
        } else {
            Node::Continue { pos }
        }))
    }

    fn else_control(&mut self) -> PResult<Parsed> {
        let peek = self.peek_non_space();
        if peek.kind == Kind::If || peek.kind == Kind::With {
            return Ok(Parsed::Else(peek.pos()));
        }
        let token = self.expect(Kind::RightDelim, "else")?;
        Ok(Parsed::Else(token.pos()))
    }

    fn branch_control(&mut self, context: &str) -> PResult<BranchNode> {
        let mark = self.vars.len();
        // Control structures may nest arbitrarily deep, as in Go; grow the stack on the
        // heap rather than overflow it.
        let result = stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.branch_body(context));
        self.vars.truncate(mark);
        result
    }

    fn branch_body(&mut self, context: &str) -> PResult<BranchNode> {
        let pipe = self.pipeline(context, Kind::RightDelim)?;
        if context == "range" {
            self.range_depth += 1;
        }
        let listed = self.item_list();
        if context == "range" {
            self.range_depth -= 1;
        }
        let (list, next) = listed?;
        let else_list = match next {
            Parsed::End => None,
            Parsed::Else(pos) => {
                let follow = self.peek().kind;
                if context == "if" && follow == Kind::If {
                    self.next();
                    let inner = self.branch_control("if")?;
                    Some(ListNode {
                        pos,
                        nodes: vec![Node::If(Box::new(inner))],
                    })
                } else if context == "with" && follow == Kind::With {
                    self.next();
                    let inner = self.branch_control("with")?;
                    Some(ListNode {
                        pos,
                        nodes: vec![Node::With(Box::new(inner))],
                    })
                } else {
                    let (else_list, next) = self.item_list()?;
                    if !matches!(next, Parsed::End) {
                        return self.error(format!("expected end; found {}", next.describe()));
                    }
                    Some(else_list)
                }
            }
            Parsed::Node(_) => None,
        };
        Ok(BranchNode {
            pos: pipe.pos,
            pipe,
            list,
            else_list,
        })
    }

    fn template_name(&mut self, token: &Item, context: &str) -> PResult<String> {
        match token.kind {
            Kind::String | Kind::RawString => match unquote(self.val(token)) {
                Ok(s) => Ok(s.unwrap_or_else(|b| crate::gostr::go_lossy(&b).into_owned())),
                Err(e) => self.error(e),
            },
            _ => self.unexpected(token, context),
        }
    }

    fn block_control(&mut self) -> PResult<Parsed> {
        const CONTEXT: &str = "block clause";
        let token = self.next_non_space();
        let name = self.template_name(&token, CONTEXT)?;
        let pipe = self.pipeline(CONTEXT, Kind::RightDelim)?;
        let tree = self.with_fresh_scope(|p| {
            let (root, end) = p.item_list()?;
            if !matches!(end, Parsed::End) {
                return p.error(format!("unexpected {} in {CONTEXT}", end.describe()));
            }
            Ok(Tree {
                name: name.clone(),
                parse_name: p.parse_name.clone(),
                text: p.text.clone(),
                binary: p.binary,
                root: Arc::new(root),
            })
        })?;
        let mut defined = std::mem::take(&mut self.defined);
        let added = self.add(&mut defined, tree);
        self.defined = defined;
        added?;
        Ok(Parsed::Node(Node::Template(Box::new(TemplateNode {
            pos: token.pos(),
            name: name.into(),
            pipe: Some(pipe),
        }))))
    }

    fn template_control(&mut self) -> PResult<Parsed> {
        const CONTEXT: &str = "template clause";
        let token = self.next_non_space();
        let name = self.template_name(&token, CONTEXT)?;
        let pipe = if self.next_non_space().kind != Kind::RightDelim {
            self.backup();
            Some(self.pipeline(CONTEXT, Kind::RightDelim)?)
        } else {
            None
        };
        Ok(Parsed::Node(Node::Template(Box::new(TemplateNode {
            pos: token.pos(),
            name: name.into(),
            pipe,
        }))))
    }

    fn pipeline(&mut self, context: &str, end: Kind) -> PResult<PipeNode> {
        let token = self.peek_non_space();
        let mut pipe = PipeNode {
            pos: token.pos(),
            is_assign: false,
            decl: Vec::new(),
            cmds: Vec::new(),
        };
        loop {
            let v = self.peek_non_space();
            if v.kind != Kind::Variable {
                break;
            }
            self.next();
            let after_variable = self.peek();
            let next = self.peek_non_space();
            let declared = VariableNode {
                pos: v.pos(),
                idents: names(self.val(&v)),
            };
            if next.kind == Kind::Assign || next.kind == Kind::Declare {
                pipe.is_assign = next.kind == Kind::Assign;
                self.next_non_space();
                pipe.decl.push(declared);
                self.vars.push(self.val(&v));
                break;
            } else if next.kind == Kind::Char && self.val(&next) == "," {
                self.next_non_space();
                pipe.decl.push(declared);
                self.vars.push(self.val(&v));
                if context == "range" && pipe.decl.len() < 2 {
                    match self.peek_non_space().kind {
                        Kind::Variable | Kind::RightDelim | Kind::RightParen => continue,
                        _ => return self.error("range can only initialize variables"),
                    }
                }
                return self.error(format!("too many declarations in {context}"));
            } else if after_variable.kind == Kind::Space {
                self.backup3(v, after_variable);
            } else {
                self.backup2(v);
            }
            break;
        }
        let mark = self.command_stack.len();
        loop {
            let token = self.next_non_space();
            if token.kind == end {
                pipe.cmds = self.command_stack.drain(mark..).collect();
                self.check_pipeline(&pipe, context)?;
                return Ok(pipe);
            }
            match token.kind {
                Kind::Bool
                | Kind::CharConstant
                | Kind::Complex
                | Kind::Dot
                | Kind::Field
                | Kind::Identifier
                | Kind::Number
                | Kind::Nil
                | Kind::RawString
                | Kind::String
                | Kind::Variable
                | Kind::LeftParen => {
                    self.backup();
                    let cmd = self.command()?;
                    self.command_stack.push(cmd);
                }
                _ => return self.unexpected(&token, context),
            }
        }
    }

    fn check_pipeline(&self, pipe: &PipeNode, context: &str) -> PResult<()> {
        if pipe.cmds.is_empty() {
            return self.error(format!("missing value for {context}"));
        }
        for (i, c) in pipe.cmds.iter().enumerate().skip(1) {
            if matches!(
                c.args[0],
                Arg::Bool(..) | Arg::Dot(_) | Arg::Nil(_) | Arg::Number(_) | Arg::String { .. }
            ) {
                return self.error(format!(
                    "non executable command in pipeline stage {}",
                    i + 1
                ));
            }
        }
        Ok(())
    }

    fn command(&mut self) -> PResult<CommandNode> {
        let pos = self.peek_non_space().pos();
        let mark = self.arg_stack.len();
        loop {
            self.peek_non_space();
            if let Some(operand) = self.operand()? {
                self.arg_stack.push(operand);
            }
            let token = self.next();
            match token.kind {
                Kind::Space => continue,
                Kind::RightDelim | Kind::RightParen => self.backup(),
                Kind::Pipe => {}
                _ => return self.unexpected(&token, "operand"),
            }
            break;
        }
        if self.arg_stack.len() == mark {
            return self.error("empty command");
        }
        let args = self.arg_stack.drain(mark..).collect();
        Ok(CommandNode { pos, args })
    }

    fn operand(&mut self) -> PResult<Option<Arg>> {
        let Some(node) = self.term()? else {
            return Ok(None);
        };
        if self.peek().kind != Kind::Field {
            return Ok(Some(node));
        }
        let chain_pos = self.peek().pos();
        let mut fields = Vec::new();
        while self.peek().kind == Kind::Field {
            let field = self.next();
            fields.push(Name::from(&self.val(&field)[1..]));
        }
        Ok(Some(match node {
            Arg::Field(mut f) => {
                f.idents.extend(fields);
                f.idents.shrink_to_fit();
                Arg::Field(FieldNode {
                    pos: chain_pos,
                    idents: f.idents,
                })
            }
            Arg::Variable(mut v) => {
                v.idents.extend(fields);
                v.idents.shrink_to_fit();
                Arg::Variable(VariableNode {
                    pos: chain_pos,
                    idents: v.idents,
                })
            }
            Arg::Bool(..) | Arg::String { .. } | Arg::Number(_) | Arg::Nil(_) | Arg::Dot(_) => {
                return self.error(format!(
                    "unexpected . after term {}",
                    crate::print::quote(&node.to_string())
                ));
            }
            other => Arg::Chain(ChainNode {
                pos: chain_pos,
                node: Box::new(other),
                fields,
            }),
        }))
    }

    fn term(&mut self) -> PResult<Option<Arg>> {
        let token = self.next_non_space();
        Ok(Some(match token.kind {
            Kind::Identifier => {
                if !(self.has_function)(self.val(&token)) {
                    return self.error(format!(
                        "function {} not defined",
                        crate::print::quote(self.val(&token))
                    ));
                }
                Arg::Identifier {
                    pos: token.pos(),
                    name: Name::from(self.val(&token)),
                }
            }
            Kind::Dot => Arg::Dot(token.pos()),
            Kind::Nil => Arg::Nil(token.pos()),
            Kind::Variable => {
                let idents = names(self.val(&token));
                if !self.vars.iter().any(|v| *v == idents[0].as_str()) {
                    return self.error(format!(
                        "undefined variable {}",
                        crate::print::quote(&idents[0])
                    ));
                }
                Arg::Variable(VariableNode {
                    pos: token.pos(),
                    idents,
                })
            }
            Kind::Field => Arg::Field(FieldNode {
                pos: token.pos(),
                idents: names(&self.val(&token)[1..]),
            }),
            Kind::Bool => Arg::Bool(token.pos(), self.val(&token) == "true"),
            Kind::CharConstant | Kind::Complex | Kind::Number => {
                match parse_number(token.pos(), self.val(&token), token.kind) {
                    Ok(n) => Arg::Number(Box::new(n)),
                    Err(e) => return self.error(e),
                }
            }
            Kind::LeftParen => {
                if self.paren_depth >= MAX_PAREN_DEPTH {
                    return self.error("max expression depth exceeded");
                }
                self.paren_depth += 1;
                let pipe = stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
                    self.pipeline("parenthesized pipeline", Kind::RightParen)
                });
                self.paren_depth -= 1;
                Arg::Pipe(Box::new(pipe?))
            }
            Kind::String | Kind::RawString => match unquote(self.val(&token)) {
                // A raw literal holding bytes of a source that is not UTF-8 keeps them
                // (`quoted` now spells them with escapes); Go's `Unquote` of a quoted
                // one reads each as U+FFFD.
                Ok(Ok(text)) if self.binary && text.chars().any(|c| source_byte(c).is_some()) => {
                    let bytes = if token.kind == Kind::RawString {
                        crate::gostr::source_bytes(&text)
                    } else {
                        text.chars()
                            .map(|c| source_byte(c).map_or(c, |_| '\u{FFFD}'))
                            .collect::<String>()
                            .into_bytes()
                    };
                    Arg::String {
                        pos: token.pos(),
                        quoted: Name::from(crate::print::quote_bytes(&bytes)),
                        binary: std::str::from_utf8(&bytes).is_err(),
                        text: Name::from(crate::gostr::go_lossy(&bytes)),
                    }
                }
                Ok(Err(bytes))
                    if self.binary
                        && String::from_utf8_lossy(&bytes)
                            .chars()
                            .any(|c| source_byte(c).is_some()) =>
                {
                    // Escapes made bytes, and the source's own bytes are U+FFFD.
                    let mut fixed = Vec::with_capacity(bytes.len());
                    for chunk in bytes.utf8_chunks() {
                        for c in chunk.valid().chars() {
                            let c = source_byte(c).map_or(c, |_| '\u{FFFD}');
                            fixed.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                        }
                        fixed.extend_from_slice(chunk.invalid());
                    }
                    Arg::String {
                        pos: token.pos(),
                        quoted: Name::from(crate::print::quote_bytes(&fixed)),
                        binary: std::str::from_utf8(&fixed).is_err(),
                        text: Name::from(crate::gostr::go_lossy(&fixed)),
                    }
                }
                Ok(text) => Arg::String {
                    pos: token.pos(),
                    quoted: Name::from(self.val(&token)),
                    binary: text.is_err(),
                    text: Name::from(match text {
                        Ok(text) => text,
                        Err(bytes) => crate::gostr::go_lossy(&bytes).into_owned(),
                    }),
                },
                Err(e) => return self.error(e),
            },
            _ => {
                self.backup();
                return Ok(None);
            }
        }))
    }
}
