//! Go's `text/template` executor: pipelines evaluated, fields looked up, functions called with
//! Go's argument conversions, blocks, variables, `range` with `break`/`continue`, templates
//! called, values printed as `fmt.Fprint` prints them.

use super::format::print;
use super::functions::{self, Func, Ty};
use super::parse::{Arg, Node, Number, Pipe, Templates};
use super::value::{MapElem, UintType, Value};

/// How deep `{{template}}` calls may nest (Go allows 100,000; render stops before the stack).
const MAX_TEMPLATE_DEPTH: usize = 200;

/// Why a walk stopped early.
pub(super) enum Flow {
    Break,
    Continue,
    Error(String),
}

impl From<String> for Flow {
    fn from(message: String) -> Flow {
        Flow::Error(message)
    }
}

type Result<T> = std::result::Result<T, Flow>;

pub(super) struct State<'a> {
    pub templates: &'a Templates,
    /// What the program named the template (`template.New(root)`), for errors.
    pub root: &'a str,
    /// sprig's functions are given.
    pub sprig: bool,
    /// `Option("missingkey=error")`: a missing map key is an error, not "no value".
    pub missing_key_error: bool,
    pub name: String,
    pub vars: Vec<(String, Value)>,
    pub out: String,
    pub depth: usize,
    pub line: usize,
    pub context: String,
}

impl State<'_> {
    fn error(&self, message: impl std::fmt::Display) -> Flow {
        Flow::Error(format!(
            "template: {}:{}: executing {:?} at <{}>: {message}",
            self.root, self.line, self.name, self.context
        ))
    }

    fn at(&mut self, arg: &Arg) {
        self.context = arg.describe();
    }

    pub fn walk(&mut self, dot: &Value, nodes: &[Node]) -> Result<()> {
        for node in nodes {
            match node {
                Node::Text(text) => self.out.push_str(text),
                Node::Action(pipe) => {
                    let value = self.eval_pipeline(dot, pipe)?;
                    if pipe.decl.is_empty() {
                        match value {
                            Value::Missing => self.out.push_str("<no value>"),
                            v => self.out.push_str(&print(&v)),
                        }
                    }
                }
                Node::Break => return Err(Flow::Break),
                Node::Continue => return Err(Flow::Continue),
                Node::If(pipe, list, else_list) | Node::With(pipe, list, else_list) => {
                    let mark = self.vars.len();
                    let value = self.eval_pipeline(dot, pipe)?;
                    let result = if value.truth() {
                        if matches!(node, Node::With(..)) {
                            self.walk(&value, list)
                        } else {
                            self.walk(dot, list)
                        }
                    } else if let Some(else_list) = else_list {
                        self.walk(dot, else_list)
                    } else {
                        Ok(())
                    };
                    self.vars.truncate(mark);
                    result?;
                }
                Node::Range(pipe, list, else_list) => {
                    let mark = self.vars.len();
                    let result = self.walk_range(dot, pipe, list, else_list.as_deref());
                    self.vars.truncate(mark);
                    match result {
                        Ok(()) | Err(Flow::Break) => {}
                        Err(other) => return Err(other),
                    }
                }
                Node::Template(name, pipe, line) => {
                    self.line = *line;
                    self.context = format!("{{{{template {name:?}}}}}");
                    let Some(tree) = self.templates.trees.get(name) else {
                        return Err(self.error(format!("template {name:?} not defined")));
                    };
                    if self.depth >= MAX_TEMPLATE_DEPTH {
                        return Err(self.error(format!(
                            "templates call each other more than {MAX_TEMPLATE_DEPTH} deep: render stops there"
                        )));
                    }
                    let value = match pipe {
                        Some(pipe) => self.eval_pipeline(dot, pipe)?,
                        None => Value::Missing,
                    };
                    let mut inner = State {
                        templates: self.templates,
                        root: self.root,
                        sprig: self.sprig,
                        missing_key_error: self.missing_key_error,
                        name: name.clone(),
                        vars: vec![("$".into(), value.clone())],
                        out: std::mem::take(&mut self.out),
                        depth: self.depth + 1,
                        line: *line,
                        context: String::new(),
                    };
                    let result = inner.walk(&value, tree);
                    self.out = inner.out;
                    match result {
                        Ok(()) => {}
                        Err(Flow::Error(e)) => return Err(Flow::Error(e)),
                        // Parsing keeps break/continue inside a range of the same template.
                        Err(other) => return Err(other),
                    }
                }
            }
        }
        Ok(())
    }

    fn walk_range(
        &mut self,
        dot: &Value,
        pipe: &Pipe,
        list: &[Node],
        else_list: Option<&[Node]>,
    ) -> Result<()> {
        let value = self.eval_pipeline(dot, pipe)?;
        let mark = self.vars.len();
        let mut items: Vec<(Value, Value)> = Vec::new();
        match &value {
            Value::Int(n) | Value::Int64(n) => {
                if pipe.decl.len() > 1 {
                    return Err(self.error(format!(
                        "can't use {n} to iterate over more than one variable"
                    )));
                }
                let make = |i: i64| match value {
                    Value::Int(_) => Value::Int(i),
                    _ => Value::Int64(i),
                };
                for i in 0..(*n).max(0) {
                    items.push((Value::Missing, make(i)));
                }
            }
            Value::Uint(n, kind) => {
                if pipe.decl.len() > 1 {
                    return Err(self.error(format!(
                        "can't use {n} to iterate over more than one variable"
                    )));
                }
                for i in 0..*n {
                    items.push((Value::Missing, Value::Uint(i, *kind)));
                }
            }
            Value::Slice(s) => {
                for (i, item) in s.items.iter().enumerate() {
                    items.push((Value::Int(i as i64), item.clone()));
                }
            }
            Value::Map(m) => {
                for (k, v) in m.entries.borrow().iter() {
                    items.push((Value::str(k.as_str()), v.clone()));
                }
            }
            Value::Missing | Value::Nil => {}
            other => {
                return Err(self.error(format!("range can't iterate over {}", print(other))));
            }
        }
        if items.is_empty() {
            if let Some(else_list) = else_list {
                return self.walk(dot, else_list);
            }
            return Ok(());
        }
        for (index, elem) in items {
            if !pipe.decl.is_empty() {
                if pipe.is_assign {
                    let first = if pipe.decl.len() > 1 {
                        index.clone()
                    } else {
                        elem.clone()
                    };
                    self.set_var(&pipe.decl[0], first)?;
                } else {
                    let n = self.vars.len();
                    self.vars[n - 1].1 = elem.clone();
                }
            }
            if pipe.decl.len() > 1 {
                if pipe.is_assign {
                    self.set_var(&pipe.decl[1], elem.clone())?;
                } else {
                    let n = self.vars.len();
                    self.vars[n - 2].1 = index.clone();
                }
            }
            let result = self.walk(&elem, list);
            self.vars.truncate(mark);
            match result {
                Ok(()) | Err(Flow::Continue) => {}
                Err(other) => return Err(other),
            }
        }
        Ok(())
    }

    fn set_var(&mut self, name: &str, value: Value) -> Result<()> {
        match self.vars.iter_mut().rev().find(|(n, _)| n == name) {
            Some(var) => {
                var.1 = value;
                Ok(())
            }
            None => Err(self.error(format!("undefined variable: {name}"))),
        }
    }

    fn var_value(&self, name: &str) -> Result<Value> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| self.error(format!("undefined variable: {name}")))
    }

    pub fn eval_pipeline(&mut self, dot: &Value, pipe: &Pipe) -> Result<Value> {
        self.line = pipe.line;
        let mut value: Option<Value> = None;
        for cmd in &pipe.cmds {
            let v = self.eval_command(dot, cmd, value.take())?;
            // An interface value is unwrapped: a nil interface becomes "no value".
            value = Some(match v {
                Value::Nil => Value::Missing,
                v => v,
            });
        }
        let value = value.unwrap_or(Value::Missing);
        for name in &pipe.decl {
            if pipe.is_assign {
                self.set_var(name, value.clone())?;
            } else {
                self.vars.push((name.clone(), value.clone()));
            }
        }
        Ok(value)
    }

    fn not_a_function(&self, args: &[Arg], final_: &Option<Value>) -> Result<()> {
        if args.len() > 1 || final_.is_some() {
            return Err(self.error(format!(
                "can't give argument to non-function {}",
                args[0].describe()
            )));
        }
        Ok(())
    }

    fn eval_command(&mut self, dot: &Value, cmd: &[Arg], final_: Option<Value>) -> Result<Value> {
        let first = &cmd[0];
        self.at(first);
        match first {
            Arg::Field(path) => self.eval_field_chain(dot, dot.clone(), path, cmd, final_),
            Arg::Chain(node, fields) => {
                if matches!(**node, Arg::Nil) {
                    return Err(self.error("indirection through explicit nil"));
                }
                let receiver = self.eval_arg(dot, None, node)?;
                self.eval_field_chain(dot, receiver, fields, cmd, final_)
            }
            Arg::Identifier(name) => self.eval_function(dot, name, &cmd[1..], final_),
            Arg::Pipe(pipe) => {
                self.not_a_function(cmd, &final_)?;
                self.eval_pipeline(dot, pipe)
            }
            Arg::Variable(path) => {
                let value = self.var_value(&path[0])?;
                if path.len() == 1 {
                    self.not_a_function(cmd, &final_)?;
                    return Ok(value);
                }
                self.eval_field_chain(dot, value, &path[1..], cmd, final_)
            }
            _ => {
                self.not_a_function(cmd, &final_)?;
                match first {
                    Arg::Bool(b) => Ok(Value::Bool(*b)),
                    Arg::Dot => Ok(dot.clone()),
                    Arg::Nil => Err(self.error("nil is not a command")),
                    Arg::Number(n) => self.ideal_constant(n),
                    Arg::String(s) => Ok(Value::str(s.as_str())),
                    _ => unreachable!("handled above"),
                }
            }
        }
    }

    fn ideal_constant(&self, n: &Number) -> Result<Value> {
        let hex_int = n.text.len() > 2
            && n.text.starts_with('0')
            && matches!(n.text.as_bytes()[1], b'x' | b'X')
            && !n.text.contains(['p', 'P']);
        if n.is_float
            && !hex_int
            && !n.text.starts_with('\'')
            && n.text.contains(['.', 'e', 'E', 'p', 'P'])
        {
            return Ok(Value::Float(n.float));
        }
        if n.is_int {
            return Ok(Value::Int(n.int));
        }
        if n.is_uint {
            return Err(self.error(format!("{} overflows int", n.text)));
        }
        Ok(Value::Missing)
    }

    fn eval_field_chain(
        &mut self,
        dot: &Value,
        mut receiver: Value,
        idents: &[String],
        args: &[Arg],
        final_: Option<Value>,
    ) -> Result<Value> {
        let n = idents.len();
        for ident in &idents[..n - 1] {
            receiver = self.eval_field(dot, ident, &[], None, receiver)?;
        }
        self.eval_field(dot, &idents[n - 1], args, final_, receiver)
    }

    fn eval_field(
        &mut self,
        dot: &Value,
        name: &str,
        args: &[Arg],
        final_: Option<Value>,
        receiver: Value,
    ) -> Result<Value> {
        let has_args = args.len() > 1 || final_.is_some();
        match &receiver {
            Value::Missing if self.missing_key_error => {
                Err(self.error(format!("nil data; no entry for key {name:?}")))
            }
            Value::Missing => Ok(Value::Missing),
            Value::Nil => Err(self.error(format!("nil pointer evaluating interface {{}}.{name}"))),
            Value::Version(_, pointer) => {
                let Some(method) = functions::semver_method(name, *pointer) else {
                    return Err(self.error(format!(
                        "can't evaluate field {name} in type {}",
                        receiver.type_name()
                    )));
                };
                let rest = if args.is_empty() { &[][..] } else { &args[1..] };
                self.eval_call(dot, &method, name, rest, final_, Some(receiver.clone()))
            }
            Value::Map(m) => {
                if has_args {
                    return Err(self.error(format!("{name} is not a method but has arguments")));
                }
                let found = m.entries.borrow().get(name).cloned();
                match found {
                    Some(value) => Ok(value),
                    None if self.missing_key_error => {
                        Err(self.error(format!("map has no entry for key {name:?}")))
                    }
                    None => Ok(Value::Missing),
                }
            }
            other => Err(self.error(format!(
                "can't evaluate field {name} in type {}",
                other.type_name()
            ))),
        }
    }

    fn eval_function(
        &mut self,
        dot: &Value,
        name: &str,
        args: &[Arg],
        final_: Option<Value>,
    ) -> Result<Value> {
        let Some(func) = functions::lookup(name, self.sprig) else {
            return Err(self.error(format!("{name:?} is not a defined function")));
        };
        if let Some(reason) = func.unsupported {
            return Err(self.error(format!(
                "error calling {name}: render does not evaluate `{name}`: {reason}"
            )));
        }
        if name == "and" || name == "or" {
            let mut value = Value::Missing;
            for arg in args {
                value = self.eval_arg(dot, Some(Ty::Reflect), arg)?;
                if value.truth() == (name == "or") {
                    return Ok(value);
                }
            }
            if let Some(last) = final_ {
                value = last;
            } else if args.is_empty() {
                return Err(self.error(format!(
                    "wrong number of args for {name}: want at least 1 got 0"
                )));
            }
            return Ok(value);
        }
        self.eval_call(dot, &func, name, args, final_, None)
    }

    fn eval_call(
        &mut self,
        dot: &Value,
        func: &Func,
        name: &str,
        args: &[Arg],
        final_: Option<Value>,
        receiver: Option<Value>,
    ) -> Result<Value> {
        let num_in = args.len() + usize::from(final_.is_some());
        let fixed = func.params.len();
        if func.variadic.is_some() {
            if num_in < fixed {
                return Err(self.error(format!(
                    "wrong number of args for {name}: want at least {fixed} got {}",
                    args.len()
                )));
            }
        } else if num_in != fixed {
            return Err(self.error(format!(
                "wrong number of args for {name}: want {fixed} got {num_in}"
            )));
        }
        let mut argv = Vec::with_capacity(num_in + 1);
        if let Some(receiver) = receiver {
            argv.push(receiver);
        }
        let ty_at = |i: usize| {
            if i < fixed {
                func.params[i]
            } else {
                func.variadic.expect("checked above")
            }
        };
        for (i, arg) in args.iter().enumerate() {
            let value = self.eval_arg(dot, Some(ty_at(i)), arg)?;
            argv.push(value);
        }
        if let Some(last) = final_ {
            let ty = ty_at(num_in - 1);
            let value = self.validate_type(last, Some(ty))?;
            argv.push(value);
        }
        func.call(argv)
            .map_err(|e| self.error(format!("error calling {name}: {e}")))
    }

    /// Go's `validateType`: a computed value handed to a parameter of type `ty`.
    fn validate_type(&self, value: Value, ty: Option<Ty>) -> Result<Value> {
        let Some(ty) = ty else {
            return Ok(value);
        };
        let wrong = |v: &Value| {
            self.error(format!(
                "wrong type for value; expected {}; got {}",
                ty.go_name(),
                if matches!(v, Value::Nil) {
                    "interface {}".to_string()
                } else {
                    v.type_name()
                }
            ))
        };
        if matches!(value, Value::Missing) {
            return match ty {
                Ty::Any => Ok(Value::Nil),
                Ty::Reflect => Ok(Value::Missing),
                Ty::Map => Ok(Value::nil_map(MapElem::Any)),
                Ty::VersionPtr => Ok(Value::Nil),
                _ => Err(self.error(format!("invalid value; expected {}", ty.go_name()))),
            };
        }
        let ok = match (ty, &value) {
            (Ty::Any | Ty::Reflect, _) => true,
            (Ty::Str, Value::Str(_)) => true,
            (Ty::Int, Value::Int(_)) => true,
            (Ty::Float, Value::Float(_)) => true,
            (Ty::Bool, Value::Bool(_)) => true,
            (Ty::Map, Value::Map(m)) => m.elem == MapElem::Any,
            (Ty::VersionPtr, Value::Version(_, true)) => true,
            (Ty::Time, Value::Time(_)) => true,
            _ => false,
        };
        if ok { Ok(value) } else { Err(wrong(&value)) }
    }

    fn eval_arg(&mut self, dot: &Value, ty: Option<Ty>, arg: &Arg) -> Result<Value> {
        self.at(arg);
        match arg {
            Arg::Dot => return self.validate_type(dot.clone(), ty),
            Arg::Nil => {
                return match ty {
                    None | Some(Ty::Any) => Ok(Value::Nil),
                    Some(Ty::Reflect) => Ok(Value::Missing),
                    Some(Ty::Map) => Ok(Value::nil_map(MapElem::Any)),
                    Some(Ty::VersionPtr) => Ok(Value::Nil),
                    Some(t) => Err(self.error(format!("cannot assign nil to {}", t.go_name()))),
                };
            }
            Arg::Field(path) => {
                let v =
                    self.eval_field_chain(dot, dot.clone(), path, std::slice::from_ref(arg), None)?;
                return self.validate_type(v, ty);
            }
            Arg::Variable(path) => {
                let value = self.var_value(&path[0])?;
                let v = if path.len() == 1 {
                    value
                } else {
                    self.eval_field_chain(dot, value, &path[1..], &[], None)?
                };
                return self.validate_type(v, ty);
            }
            Arg::Pipe(pipe) => {
                let v = self.eval_pipeline(dot, pipe)?;
                return self.validate_type(v, ty);
            }
            Arg::Identifier(name) => {
                let v = self.eval_function(dot, name, &[], None)?;
                return self.validate_type(v, ty);
            }
            Arg::Chain(node, fields) => {
                if matches!(**node, Arg::Nil) {
                    return Err(self.error("indirection through explicit nil"));
                }
                let receiver = self.eval_arg(dot, None, node)?;
                let v = self.eval_field_chain(dot, receiver, fields, &[], None)?;
                return self.validate_type(v, ty);
            }
            _ => {}
        }
        match ty.unwrap_or(Ty::Any) {
            Ty::Bool => match arg {
                Arg::Bool(b) => Ok(Value::Bool(*b)),
                _ => Err(self.error(format!("expected bool; found {}", arg.describe()))),
            },
            Ty::Float => match arg {
                Arg::Number(n) if n.is_float => Ok(Value::Float(n.float)),
                _ => Err(self.error(format!("expected float; found {}", arg.describe()))),
            },
            Ty::Int => match arg {
                Arg::Number(n) if n.is_int => Ok(Value::Int(n.int)),
                _ => Err(self.error(format!("expected integer; found {}", arg.describe()))),
            },
            // reflect's SetUint: the constant cut to 32 bits, as Go does.
            Ty::Uint32 => match arg {
                Arg::Number(n) if n.is_uint => Ok(Value::Uint(n.uint & 0xffff_ffff, UintType::U64)),
                _ => Err(self.error(format!(
                    "expected unsigned integer; found {}",
                    arg.describe()
                ))),
            },
            Ty::Str => match arg {
                Arg::String(s) => Ok(Value::str(s.as_str())),
                _ => Err(self.error(format!("expected string; found {}", arg.describe()))),
            },
            Ty::Any | Ty::Reflect => match arg {
                Arg::Bool(b) => Ok(Value::Bool(*b)),
                Arg::Number(n) => self.ideal_constant(n),
                Arg::String(s) => Ok(Value::str(s.as_str())),
                _ => Err(self.error(format!(
                    "can't handle assignment of {} to empty interface argument",
                    arg.describe()
                ))),
            },
            t => Err(self.error(format!(
                "can't handle {} for arg of type {}",
                arg.describe(),
                t.go_name()
            ))),
        }
    }
}
