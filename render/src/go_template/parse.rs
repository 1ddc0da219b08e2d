//! Go's `text/template/parse` parser: the tokens into a tree per template (`define` and `block`
//! add named ones), with Go's checks: functions that exist, variables that are declared,
//! `break`/`continue` inside `range`, one definition per name.

use super::functions;
use super::lex::{Item, Kind, lex};
use std::collections::BTreeMap;

/// A number constant written in the template, read every way Go reads it.
#[derive(Clone, Debug, Default)]
pub(super) struct Number {
    pub text: String,
    pub is_int: bool,
    pub is_uint: bool,
    pub is_float: bool,
    pub int: i64,
    pub uint: u64,
    pub float: f64,
}

/// An operand.
#[derive(Clone, Debug)]
pub(super) enum Arg {
    /// `.a.b`
    Field(Vec<String>),
    /// `$x.a.b` (the first element is the variable's name).
    Variable(Vec<String>),
    /// `(pipeline).a.b`
    Chain(Box<Arg>, Vec<String>),
    Identifier(String),
    Dot,
    Nil,
    Bool(bool),
    Number(Number),
    String(String),
    Pipe(Pipe),
}

impl Arg {
    /// The operand as Go prints it in errors (`String()` of its node).
    pub fn describe(&self) -> String {
        match self {
            Arg::Field(path) => path.iter().map(|s| format!(".{s}")).collect(),
            Arg::Variable(path) => path.join("."),
            Arg::Chain(arg, fields) => {
                let inner = match **arg {
                    Arg::Pipe(_) => format!("({})", arg.describe()),
                    _ => arg.describe(),
                };
                format!(
                    "{inner}{}",
                    fields.iter().map(|s| format!(".{s}")).collect::<String>()
                )
            }
            Arg::Identifier(name) => name.clone(),
            Arg::Dot => ".".into(),
            Arg::Nil => "nil".into(),
            Arg::Bool(b) => b.to_string(),
            Arg::Number(n) => n.text.clone(),
            Arg::String(s) => format!("{s:?}"),
            Arg::Pipe(p) => p
                .cmds
                .iter()
                .map(|c| c.iter().map(Arg::describe).collect::<Vec<_>>().join(" "))
                .collect::<Vec<_>>()
                .join(" | "),
        }
    }
}

/// A command: a function or value and its arguments.
pub(super) type Command = Vec<Arg>;

/// A pipeline, with the variables it declares (`$x :=`) or assigns (`$x =`).
#[derive(Clone, Debug, Default)]
pub(super) struct Pipe {
    pub is_assign: bool,
    pub decl: Vec<String>,
    pub cmds: Vec<Command>,
    pub line: usize,
}

/// A node of a template's tree.
#[derive(Clone, Debug)]
pub(super) enum Node {
    Text(String),
    Action(Pipe),
    If(Pipe, Vec<Node>, Option<Vec<Node>>),
    Range(Pipe, Vec<Node>, Option<Vec<Node>>),
    With(Pipe, Vec<Node>, Option<Vec<Node>>),
    Template(String, Option<Pipe>, usize),
    Break,
    Continue,
}

/// The templates of one text: the main one (named `name`) and those it defines.
#[derive(Debug, Default)]
pub(super) struct Templates {
    pub trees: BTreeMap<String, Vec<Node>>,
}

/// How deep parentheses and blocks may nest. Go's parser stops at 10,000; render parses
/// recursively and stops far earlier, before the stack of a worker thread would (found by
/// fuzzing: a few thousand `(` overflowed it).
pub(super) const MAX_DEPTH: usize = 100;

/// A parse error, as Go words it (`template: NAME:LINE: ...`).
type Result<T> = std::result::Result<T, String>;

enum Stop {
    End,
    Else,
    ElseIf,
    ElseWith,
}

struct Parser<'a> {
    name: &'a str,
    sprig: bool,
    items: Vec<Item>,
    pos: usize,
    vars: Vec<String>,
    range_depth: usize,
    depth: usize,
    trees: BTreeMap<String, Vec<Node>>,
}

/// Parses `text` as Go's `template.New(name).Funcs(sprig).Parse(text)` does (without
/// `.Funcs(sprig)` when `sprig` is false).
pub(super) fn parse(name: &str, text: &str, sprig: bool) -> Result<Templates> {
    let mut p = Parser {
        name,
        sprig,
        items: lex(text),
        pos: 0,
        vars: vec!["$".into()],
        range_depth: 0,
        depth: 0,
        trees: BTreeMap::new(),
    };
    let root = p.parse_root()?;
    p.add(name.to_string(), root)?;
    Ok(Templates { trees: p.trees })
}

/// Go's `parse.IsEmptyTree`: only whitespace text (and comments).
fn is_empty_tree(nodes: &[Node]) -> bool {
    nodes.iter().all(|n| match n {
        Node::Text(t) => {
            t.trim_matches([' ', '\t', '\r', '\n', '\u{b}', '\u{c}'])
                .is_empty()
                && t.trim().is_empty()
        }
        _ => false,
    })
}

impl Parser<'_> {
    fn line(&self) -> usize {
        self.items
            .get(self.pos.saturating_sub(1))
            .or(self.items.last())
            .map_or(1, |i| i.line)
    }

    fn error(&self, message: impl std::fmt::Display) -> String {
        format!("template: {}:{}: {message}", self.name, self.line())
    }

    fn next(&mut self) -> Item {
        let last = self.items.len() - 1;
        let item = self.items[self.pos.min(last)].clone();
        self.pos += 1;
        item
    }

    fn backup(&mut self) {
        self.pos -= 1;
    }

    fn peek(&mut self) -> Item {
        let item = self.next();
        self.backup();
        item
    }

    fn next_non_space(&mut self) -> Item {
        loop {
            let item = self.next();
            if item.kind != Kind::Space {
                return item;
            }
        }
    }

    fn peek_non_space(&mut self) -> Item {
        let item = self.next_non_space();
        self.backup();
        item
    }

    fn unexpected(&self, item: &Item, context: &str) -> String {
        if item.kind == Kind::Error {
            return self.error(&item.val);
        }
        self.error(format!("unexpected {} in {context}", item.describe()))
    }

    fn expect(&mut self, kind: Kind, context: &str) -> Result<Item> {
        let item = self.next_non_space();
        if item.kind != kind {
            return Err(self.unexpected(&item, context));
        }
        Ok(item)
    }

    fn deeper(&mut self) -> Result<()> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(format!(
                "the template nests more than {MAX_DEPTH} levels deep (parentheses, `if`, `range`, `with`, `else if`): render does not parse deeper"
            )));
        }
        self.depth += 1;
        Ok(())
    }

    /// Go's `Tree.add`: a second non-empty definition of a name is an error; an empty one
    /// does not replace a full one.
    fn add(&mut self, name: String, nodes: Vec<Node>) -> Result<()> {
        match self.trees.get(&name) {
            Some(existing) if !is_empty_tree(existing) => {
                if !is_empty_tree(&nodes) {
                    return Err(self.error(format!(
                        "template: multiple definition of template {name:?}"
                    )));
                }
            }
            _ => {
                self.trees.insert(name, nodes);
            }
        }
        Ok(())
    }

    fn parse_root(&mut self) -> Result<Vec<Node>> {
        let mut root = Vec::new();
        while self.peek().kind != Kind::Eof {
            if self.peek().kind == Kind::LeftDelim {
                let start = self.pos;
                self.next();
                if self.next_non_space().kind == Kind::Define {
                    self.parse_definition()?;
                    continue;
                }
                self.pos = start;
            }
            match self.text_or_action()? {
                Parsed::Node(n) => root.push(n),
                Parsed::None => {}
                Parsed::Stop(Stop::End) => return Err(self.error("unexpected {{end}}")),
                Parsed::Stop(_) => return Err(self.error("unexpected {{else}}")),
            }
        }
        Ok(root)
    }

    fn parse_definition(&mut self) -> Result<()> {
        let context = "define clause";
        let item = self.next_non_space();
        if !matches!(item.kind, Kind::String | Kind::RawString) {
            return Err(self.unexpected(&item, context));
        }
        let name = unquote(&item.val).map_err(|e| self.error(e))?;
        self.expect(Kind::RightDelim, context)?;
        let list = self.template_body(context)?;
        self.add(name, list)
    }

    /// The body of a `define` or `block`: a template of its own (only `$` declared, outside
    /// any range), up to its `{{end}}`.
    fn template_body(&mut self, context: &str) -> Result<Vec<Node>> {
        let saved_vars = std::mem::replace(&mut self.vars, vec!["$".into()]);
        let saved_range = std::mem::take(&mut self.range_depth);
        let result = self.item_list();
        self.vars = saved_vars;
        self.range_depth = saved_range;
        match result? {
            (list, Stop::End) => Ok(list),
            _ => Err(self.error(format!("unexpected {{{{else}}}} in {context}"))),
        }
    }

    fn item_list(&mut self) -> Result<(Vec<Node>, Stop)> {
        let mut list = Vec::new();
        while self.peek_non_space().kind != Kind::Eof {
            match self.text_or_action()? {
                Parsed::Node(n) => list.push(n),
                Parsed::None => {}
                Parsed::Stop(stop) => return Ok((list, stop)),
            }
        }
        Err(self.error("unexpected EOF"))
    }

    fn text_or_action(&mut self) -> Result<Parsed> {
        let item = self.next_non_space();
        match item.kind {
            Kind::Text => Ok(Parsed::Node(Node::Text(item.val))),
            Kind::LeftDelim => self.action(),
            _ => Err(self.unexpected(&item, "input")),
        }
    }

    fn action(&mut self) -> Result<Parsed> {
        let item = self.next_non_space();
        Ok(match item.kind {
            Kind::Block => Parsed::Node(self.block_control()?),
            Kind::Break | Kind::Continue => {
                let what = if item.kind == Kind::Break {
                    "break"
                } else {
                    "continue"
                };
                let next = self.next_non_space();
                if next.kind != Kind::RightDelim {
                    return Err(self.unexpected(&next, &format!("{{{{{what}}}}}")));
                }
                if self.range_depth == 0 {
                    return Err(self.error(format!("{{{{{what}}}}} outside {{{{range}}}}")));
                }
                Parsed::Node(if item.kind == Kind::Break {
                    Node::Break
                } else {
                    Node::Continue
                })
            }
            Kind::Else => {
                let peek = self.peek_non_space();
                if peek.kind == Kind::If {
                    Parsed::Stop(Stop::ElseIf)
                } else if peek.kind == Kind::With {
                    Parsed::Stop(Stop::ElseWith)
                } else {
                    self.expect(Kind::RightDelim, "else")?;
                    Parsed::Stop(Stop::Else)
                }
            }
            Kind::End => {
                self.expect(Kind::RightDelim, "end")?;
                Parsed::Stop(Stop::End)
            }
            Kind::If => Parsed::Node(self.control("if")?),
            Kind::Range => Parsed::Node(self.control("range")?),
            Kind::With => Parsed::Node(self.control("with")?),
            Kind::Template => {
                let context = "template clause";
                let token = self.next_non_space();
                let name = self.template_name(&token, context)?;
                let pipe = if self.next_non_space().kind != Kind::RightDelim {
                    self.backup();
                    Some(self.pipeline(context, Kind::RightDelim)?)
                } else {
                    None
                };
                Parsed::Node(Node::Template(name, pipe, token.line))
            }
            _ => {
                self.backup();
                let pipe = self.pipeline("command", Kind::RightDelim)?;
                Parsed::Node(Node::Action(pipe))
            }
        })
    }

    fn template_name(&self, token: &Item, context: &str) -> Result<String> {
        match token.kind {
            Kind::String | Kind::RawString => unquote(&token.val).map_err(|e| self.error(e)),
            _ => Err(self.unexpected(token, context)),
        }
    }

    fn block_control(&mut self) -> Result<Node> {
        let context = "block clause";
        let token = self.next_non_space();
        let name = self.template_name(&token, context)?;
        let pipe = self.pipeline(context, Kind::RightDelim)?;
        let list = self.template_body(context)?;
        self.add(name.clone(), list)?;
        Ok(Node::Template(name, Some(pipe), token.line))
    }

    fn control(&mut self, context: &'static str) -> Result<Node> {
        self.deeper()?;
        let vars = self.vars.len();
        let result = self.control_inner(context);
        self.vars.truncate(vars);
        self.depth -= 1;
        result
    }

    fn control_inner(&mut self, context: &'static str) -> Result<Node> {
        let pipe = self.pipeline(context, Kind::RightDelim)?;
        if context == "range" {
            self.range_depth += 1;
        }
        let (list, stop) = self.item_list()?;
        if context == "range" {
            self.range_depth -= 1;
        }
        let else_list = match stop {
            Stop::End => None,
            Stop::ElseIf if context == "if" => {
                self.next_non_space();
                Some(vec![self.control("if")?])
            }
            Stop::ElseWith if context == "with" => {
                self.next_non_space();
                Some(vec![self.control("with")?])
            }
            Stop::ElseIf | Stop::ElseWith => {
                // `else if` inside range/with: Go reads `{{else` then expects `}}`.
                let item = self.next_non_space();
                return Err(self.unexpected(&item, "else"));
            }
            Stop::Else => {
                let (list, stop) = self.item_list()?;
                if !matches!(stop, Stop::End) {
                    return Err(self.error("expected end; found {{else}}"));
                }
                Some(list)
            }
        };
        Ok(match context {
            "if" => Node::If(pipe, list, else_list),
            "range" => Node::Range(pipe, list, else_list),
            _ => Node::With(pipe, list, else_list),
        })
    }

    fn pipeline(&mut self, context: &str, end: Kind) -> Result<Pipe> {
        let line = self.peek_non_space().line;
        let mut pipe = Pipe {
            line,
            ..Pipe::default()
        };
        loop {
            let v = self.peek_non_space();
            if v.kind != Kind::Variable {
                break;
            }
            let before = self.pos;
            self.next();
            let after_variable = self.peek();
            let next = self.peek_non_space();
            match next.kind {
                Kind::Assign | Kind::Declare => {
                    pipe.is_assign = next.kind == Kind::Assign;
                    self.next_non_space();
                    pipe.decl.push(v.val.clone());
                    self.vars.push(v.val.clone());
                    break;
                }
                Kind::Char if next.val == "," => {
                    self.next_non_space();
                    pipe.decl.push(v.val.clone());
                    self.vars.push(v.val.clone());
                    if context == "range" && pipe.decl.len() < 2 {
                        match self.peek_non_space().kind {
                            Kind::Variable | Kind::RightDelim | Kind::RightParen => continue,
                            _ => return Err(self.error("range can only initialize variables")),
                        }
                    }
                    return Err(self.error(format!("too many declarations in {context}")));
                }
                _ => {
                    let _ = after_variable;
                    self.pos = before;
                    break;
                }
            }
        }
        loop {
            let item = self.next_non_space();
            match item.kind {
                k if k == end => {
                    if pipe.cmds.is_empty() {
                        return Err(self.error(format!("missing value for {context}")));
                    }
                    for (i, cmd) in pipe.cmds.iter().enumerate().skip(1) {
                        if matches!(
                            cmd[0],
                            Arg::Bool(_) | Arg::Dot | Arg::Nil | Arg::Number(_) | Arg::String(_)
                        ) {
                            return Err(self.error(format!(
                                "non executable command in pipeline stage {}",
                                i + 1
                            )));
                        }
                    }
                    return Ok(pipe);
                }
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
                    pipe.cmds.push(cmd);
                }
                _ => return Err(self.unexpected(&item, context)),
            }
        }
    }

    fn command(&mut self) -> Result<Command> {
        let mut cmd = Vec::new();
        loop {
            self.peek_non_space();
            if let Some(operand) = self.operand()? {
                cmd.push(operand);
            }
            let item = self.next();
            match item.kind {
                Kind::Space => continue,
                Kind::RightDelim | Kind::RightParen => self.backup(),
                Kind::Pipe => {}
                _ => return Err(self.unexpected(&item, "operand")),
            }
            break;
        }
        if cmd.is_empty() {
            return Err(self.error("empty command"));
        }
        Ok(cmd)
    }

    fn operand(&mut self) -> Result<Option<Arg>> {
        let Some(node) = self.term()? else {
            return Ok(None);
        };
        if self.peek().kind != Kind::Field {
            return Ok(Some(node));
        }
        let mut fields = Vec::new();
        while self.peek().kind == Kind::Field {
            let item = self.next();
            fields.extend(item.val[1..].split('.').map(String::from));
        }
        Ok(Some(match node {
            Arg::Field(mut path) => {
                path.extend(fields);
                Arg::Field(path)
            }
            Arg::Variable(mut path) => {
                path.extend(fields);
                Arg::Variable(path)
            }
            Arg::Bool(_) | Arg::String(_) | Arg::Number(_) | Arg::Nil | Arg::Dot => {
                return Err(self.error(format!("unexpected . after term {:?}", node.describe())));
            }
            other => Arg::Chain(Box::new(other), fields),
        }))
    }

    fn term(&mut self) -> Result<Option<Arg>> {
        let item = self.next_non_space();
        Ok(Some(match item.kind {
            Kind::Identifier => {
                if !functions::exists(&item.val, self.sprig) {
                    return Err(self.error(format!("function {:?} not defined", item.val)));
                }
                Arg::Identifier(item.val)
            }
            Kind::Dot => Arg::Dot,
            Kind::Nil => Arg::Nil,
            Kind::Variable => {
                let path: Vec<String> = item.val.split('.').map(String::from).collect();
                if !self.vars.contains(&path[0]) {
                    return Err(self.error(format!("undefined variable {:?}", path[0])));
                }
                Arg::Variable(path)
            }
            Kind::Field => Arg::Field(item.val[1..].split('.').map(String::from).collect()),
            Kind::Bool => Arg::Bool(item.val == "true"),
            Kind::CharConstant | Kind::Complex | Kind::Number => {
                Arg::Number(number(&item.val, item.kind).map_err(|e| self.error(e))?)
            }
            Kind::LeftParen => {
                self.deeper()?;
                let pipe = self.pipeline("parenthesized pipeline", Kind::RightParen);
                self.depth -= 1;
                Arg::Pipe(pipe?)
            }
            Kind::String | Kind::RawString => {
                Arg::String(unquote(&item.val).map_err(|e| self.error(e))?)
            }
            _ => {
                self.backup();
                return Ok(None);
            }
        }))
    }
}

enum Parsed {
    Node(Node),
    #[allow(dead_code)]
    None,
    Stop(Stop),
}

/// Go's `strconv.Unquote` for "..." and `...` strings.
pub(super) fn unquote(text: &str) -> std::result::Result<String, String> {
    if let Some(raw) = text.strip_prefix('`').and_then(|t| t.strip_suffix('`')) {
        return Ok(raw.replace('\r', ""));
    }
    let inner = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .ok_or("invalid syntax")?;
    let mut out = String::new();
    let mut chars = inner.chars().peekable();
    while chars.peek().is_some() {
        let (c, _) = unquote_char(&mut chars, '"')?;
        out.push(c);
    }
    Ok(out)
}

/// One character of a quoted string or character constant (Go's `strconv.UnquoteChar`).
fn unquote_char(
    chars: &mut std::iter::Peekable<std::str::Chars>,
    quote: char,
) -> std::result::Result<(char, bool), String> {
    let bad = || "invalid syntax".to_string();
    let c = chars.next().ok_or_else(bad)?;
    if c == quote && (quote == '\'' || quote == '"') {
        return Err(bad());
    }
    if c != '\\' {
        return Ok((c, false));
    }
    let e = chars.next().ok_or_else(bad)?;
    let hex = |chars: &mut std::iter::Peekable<std::str::Chars>,
               n: usize|
     -> std::result::Result<u32, String> {
        let mut v = 0u32;
        for _ in 0..n {
            let d = chars.next().and_then(|c| c.to_digit(16)).ok_or_else(bad)?;
            v = v * 16 + d;
        }
        Ok(v)
    };
    let c = match e {
        'a' => '\u{7}',
        'b' => '\u{8}',
        'f' => '\u{c}',
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        'v' => '\u{b}',
        '\\' => '\\',
        'x' => {
            let v = hex(chars, 2)?;
            if v >= 0x80 {
                return Err(
                    "render reads only UTF-8 text: a \\x escape above 7f makes a byte string"
                        .into(),
                );
            }
            char::from_u32(v).ok_or_else(bad)?
        }
        'u' => char::from_u32(hex(chars, 4)?).ok_or_else(bad)?,
        'U' => char::from_u32(hex(chars, 8)?).ok_or_else(bad)?,
        '0'..='7' => {
            let mut v = e.to_digit(8).unwrap_or_default();
            for _ in 0..2 {
                let d = chars.next().and_then(|c| c.to_digit(8)).ok_or_else(bad)?;
                v = v * 8 + d;
            }
            if v > 255 {
                return Err(bad());
            }
            if v >= 0x80 {
                return Err(
                    "render reads only UTF-8 text: an octal escape above 177 makes a byte string"
                        .into(),
                );
            }
            char::from_u32(v).ok_or_else(bad)?
        }
        '\'' | '"' if e == quote => e,
        _ => return Err(bad()),
    };
    Ok((c, true))
}

/// Go's `strconv.ParseInt(text, 0, 64)` / `ParseUint`: base prefixes, a leading 0 for octal,
/// underscores only between digits (or after a prefix).
pub(super) fn parse_integer(text: &str) -> (Option<i64>, Option<u64>) {
    let (neg, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let signed = text.starts_with(['+', '-']);
    let lower = body.to_ascii_lowercase();
    let (base, digits, prefixed) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d.to_string(), true)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d.to_string(), true)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d.to_string(), true)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, lower[1..].to_string(), true)
    } else {
        (10, lower.clone(), false)
    };
    if !underscore_ok(&lower, prefixed) {
        return (None, None);
    }
    let digits = digits.replace('_', "");
    if digits.is_empty() {
        return (None, None);
    }
    let Ok(u) = u128::from_str_radix(&digits, base) else {
        return (None, None);
    };
    let uint = (!signed && u <= u64::MAX as u128).then_some(u as u64);
    let int = if neg {
        (u <= 1u128 << 63).then(|| (-(u as i128)) as i64)
    } else {
        (u <= i64::MAX as u128).then_some(u as i64)
    };
    (int, uint)
}

/// Go's `underscoreOK`: underscores only between digits, or between a base prefix and a digit.
fn underscore_ok(s: &str, prefixed: bool) -> bool {
    let b = s.as_bytes();
    let mut saw = '^';
    let mut i = 0;
    let mut hex = false;
    if b.len() >= 2 && b[0] == b'0' {
        let c = b[1];
        if matches!(c, b'x' | b'o' | b'b') {
            i = 2;
            saw = '0';
            hex = c == b'x';
        } else if prefixed {
            // A leading 0 (octal) counts as a prefix.
            i = 1;
            saw = '0';
        }
    }
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = '0';
        } else if c == b'_' {
            if saw != '0' {
                return false;
            }
            saw = '_';
        } else {
            if saw == '_' {
                return false;
            }
            saw = '!';
        }
        i += 1;
    }
    saw != '_'
}

/// Go's `strconv.ParseFloat(text, 64)` for the decimal forms (hex floats are refused).
fn parse_float(text: &str) -> Option<f64> {
    let body = text.trim_start_matches(['+', '-']);
    let lower = body.to_ascii_lowercase();
    if lower.starts_with("0x") {
        return None;
    }
    if text.contains('_') {
        if !lower.starts_with("0") || lower.contains('.') || lower.contains('e') {
            // ParseFloat accepts underscores only with a base prefix.
            return None;
        }
        return None;
    }
    if lower == "inf" || lower == "infinity" || lower == "nan" || lower.is_empty() {
        return None;
    }
    text.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// Go's `parse.newNumber`.
fn number(text: &str, kind: Kind) -> std::result::Result<Number, String> {
    let mut n = Number {
        text: text.to_string(),
        ..Number::default()
    };
    if kind == Kind::CharConstant {
        let inner = &text[1..];
        let mut chars = inner.chars().peekable();
        let (c, _) = unquote_char(&mut chars, '\'')?;
        if chars.collect::<String>() != "'" {
            return Err(format!("malformed character constant: {text}"));
        }
        n.is_int = true;
        n.is_uint = true;
        n.is_float = true;
        n.int = c as i64;
        n.uint = c as u64;
        n.float = c as u32 as f64;
        return Ok(n);
    }
    if kind == Kind::Complex || text.ends_with('i') {
        return Err(format!(
            "complex constant {text:?}: render does not support complex numbers"
        ));
    }
    let (int, uint) = parse_integer(text);
    if let Some(u) = uint {
        n.is_uint = true;
        n.uint = u;
    }
    if let Some(i) = int {
        n.is_int = true;
        n.int = i;
        if i == 0 {
            n.is_uint = true;
            n.uint = 0;
        }
    }
    if n.is_int {
        n.is_float = true;
        n.float = n.int as f64;
    } else if n.is_uint {
        n.is_float = true;
        n.float = n.uint as f64;
    } else if let Some(f) = parse_float(text) {
        if !text.contains(['.', 'e', 'E', 'p', 'P']) {
            return Err(format!("integer overflow: {text:?}"));
        }
        n.is_float = true;
        n.float = f;
        if f.fract() == 0.0 && (-9.223372036854776e18..9.223372036854776e18).contains(&f) {
            n.is_int = true;
            n.int = f as i64;
        }
        if f.fract() == 0.0 && (0.0..1.8446744073709552e19).contains(&f) {
            n.is_uint = true;
            n.uint = f as u64;
        }
    }
    if !n.is_int && !n.is_uint && !n.is_float {
        return Err(format!("illegal number syntax: {text:?}"));
    }
    Ok(n)
}
