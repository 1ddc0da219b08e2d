//! Go's `text/template/parse` lexer: the template cut into text, delimiters (with their trim
//! markers), comments and the tokens of actions.

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Error,
    Bool,
    Char,
    CharConstant,
    Complex,
    Assign,
    Declare,
    Eof,
    Field,
    Identifier,
    LeftDelim,
    LeftParen,
    Number,
    Pipe,
    RawString,
    RightDelim,
    RightParen,
    Space,
    String,
    Text,
    Variable,
    // Keywords.
    Block,
    Break,
    Continue,
    Dot,
    Define,
    Else,
    End,
    If,
    Nil,
    Range,
    Template,
    With,
}

/// A token: its kind, its text and the line it starts on.
#[derive(Clone, Debug)]
pub(super) struct Item {
    pub kind: Kind,
    pub val: String,
    pub line: usize,
}

impl Item {
    /// How Go names the token in "unexpected ..." errors.
    pub fn describe(&self) -> String {
        match self.kind {
            Kind::Eof => "EOF".into(),
            Kind::Error => self.val.clone(),
            k if k as u8 >= Kind::Block as u8 => format!("<{}>", self.val),
            _ if self.val.chars().count() > 10 => {
                let short: String = self.val.chars().take(10).collect();
                format!("{short:?}...")
            }
            _ => format!("{:?}", self.val),
        }
    }
}

fn keyword(word: &str) -> Option<Kind> {
    Some(match word {
        "." => Kind::Dot,
        "block" => Kind::Block,
        "break" => Kind::Break,
        "continue" => Kind::Continue,
        "define" => Kind::Define,
        "else" => Kind::Else,
        "end" => Kind::End,
        "if" => Kind::If,
        "range" => Kind::Range,
        "nil" => Kind::Nil,
        "template" => Kind::Template,
        "with" => Kind::With,
        _ => return None,
    })
}

const LEFT: &str = "{{";
const RIGHT: &str = "}}";

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || c.is_numeric()
}

fn has_left_trim(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0] == b'-' && is_space(b[1] as char)
}

fn has_right_trim(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && is_space(b[0] as char) && b[1] == b'-'
}

fn trim_right_len(s: &str) -> usize {
    s.len() - s.trim_end_matches(is_space).len()
}

fn trim_left_len(s: &str) -> usize {
    s.len() - s.trim_start_matches(is_space).len()
}

struct Lexer<'a> {
    input: &'a str,
    pos: usize,
    start: usize,
    line: usize,
    start_line: usize,
    paren_depth: i32,
    items: Vec<Item>,
}

enum State {
    Text,
    LeftDelim,
    Comment,
    RightDelim,
    InsideAction,
    Done,
}

/// Lexes the whole template (the parser reads the tokens in order; a lexing error is the last
/// token).
pub(super) fn lex(input: &str) -> Vec<Item> {
    let mut l = Lexer {
        input,
        pos: 0,
        start: 0,
        line: 1,
        start_line: 1,
        paren_depth: 0,
        items: Vec::new(),
    };
    let mut state = State::Text;
    loop {
        state = match state {
            State::Text => l.lex_text(),
            State::LeftDelim => l.lex_left_delim(),
            State::Comment => l.lex_comment(),
            State::RightDelim => l.lex_right_delim(),
            State::InsideAction => l.lex_inside_action(),
            State::Done => break,
        };
    }
    l.items
}

impl Lexer<'_> {
    fn rest(&self) -> &str {
        &self.input[self.pos..]
    }

    fn next(&mut self) -> Option<char> {
        let c = self.rest().chars().next()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn backup(&mut self, c: Option<char>) {
        if let Some(c) = c {
            self.pos -= c.len_utf8();
            if c == '\n' {
                self.line -= 1;
            }
        }
    }

    fn emit(&mut self, kind: Kind) {
        self.items.push(Item {
            kind,
            val: self.input[self.start..self.pos].to_string(),
            line: self.start_line,
        });
        self.start = self.pos;
        self.start_line = self.line;
    }

    fn ignore(&mut self) {
        self.line += self.input[self.start..self.pos].matches('\n').count();
        self.start = self.pos;
        self.start_line = self.line;
    }

    fn error(&mut self, message: String) -> State {
        self.items.push(Item {
            kind: Kind::Error,
            val: message,
            line: self.start_line,
        });
        State::Done
    }

    fn accept(&mut self, valid: &str) -> bool {
        match self.next() {
            Some(c) if valid.contains(c) => true,
            other => {
                self.backup(other);
                false
            }
        }
    }

    fn accept_run(&mut self, valid: &str) {
        while self.accept(valid) {}
    }

    fn lex_text(&mut self) -> State {
        if let Some(x) = self.rest().find(LEFT) {
            if x > 0 {
                self.pos += x;
                let delim_end = self.pos + LEFT.len();
                let trim = if has_left_trim(&self.input[delim_end..]) {
                    trim_right_len(&self.input[self.start..self.pos])
                } else {
                    0
                };
                self.pos -= trim;
                self.line += self.input[self.start..self.pos].matches('\n').count();
                let text = self.input[self.start..self.pos].to_string();
                let line = self.start_line;
                self.start = self.pos;
                self.start_line = self.line;
                self.pos += trim;
                self.ignore();
                if !text.is_empty() {
                    self.items.push(Item {
                        kind: Kind::Text,
                        val: text,
                        line,
                    });
                }
            }
            return State::LeftDelim;
        }
        self.pos = self.input.len();
        if self.pos > self.start {
            self.line += self.input[self.start..self.pos].matches('\n').count();
            self.emit(Kind::Text);
        }
        self.emit(Kind::Eof);
        State::Done
    }

    fn at_right_delim(&self) -> (bool, bool) {
        let rest = self.rest();
        if has_right_trim(rest) && rest[2..].starts_with(RIGHT) {
            return (true, true);
        }
        (rest.starts_with(RIGHT), false)
    }

    fn lex_left_delim(&mut self) -> State {
        self.pos += LEFT.len();
        let trim = has_left_trim(self.rest());
        let after = if trim { 2 } else { 0 };
        if self.input[self.pos + after..].starts_with("/*") {
            self.pos += after;
            self.ignore();
            return State::Comment;
        }
        self.emit(Kind::LeftDelim);
        self.pos += after;
        self.ignore();
        self.paren_depth = 0;
        State::InsideAction
    }

    fn lex_comment(&mut self) -> State {
        self.pos += 2;
        let Some(x) = self.rest().find("*/") else {
            return self.error("unclosed comment".into());
        };
        self.pos += x + 2;
        let (delim, trim) = self.at_right_delim();
        if !delim {
            return self.error("comment ends before closing delimiter".into());
        }
        if trim {
            self.pos += 2;
        }
        self.pos += RIGHT.len();
        if trim {
            self.pos += trim_left_len(self.rest());
        }
        self.ignore();
        State::Text
    }

    fn lex_right_delim(&mut self) -> State {
        let (_, trim) = self.at_right_delim();
        if trim {
            self.pos += 2;
            self.ignore();
        }
        self.pos += RIGHT.len();
        self.emit(Kind::RightDelim);
        if trim {
            self.pos += trim_left_len(self.rest());
            self.ignore();
        }
        State::Text
    }

    fn lex_inside_action(&mut self) -> State {
        let (delim, _) = self.at_right_delim();
        if delim {
            if self.paren_depth == 0 {
                return State::RightDelim;
            }
            return self.error("unclosed left paren".into());
        }
        let Some(c) = self.next() else {
            return self.error("unclosed action".into());
        };
        match c {
            c if is_space(c) => {
                self.backup(Some(c));
                self.lex_space()
            }
            '=' => {
                self.emit(Kind::Assign);
                State::InsideAction
            }
            ':' => {
                if self.next() != Some('=') {
                    return self.error("expected :=".into());
                }
                self.emit(Kind::Declare);
                State::InsideAction
            }
            '|' => {
                self.emit(Kind::Pipe);
                State::InsideAction
            }
            '"' => self.lex_quote(),
            '`' => self.lex_raw_quote(),
            '$' => self.lex_variable(),
            '\'' => self.lex_char(),
            '.' if self.peek().is_some_and(|c| !c.is_ascii_digit()) => {
                self.lex_field_or_variable(Kind::Field)
            }
            '.' | '+' | '-' | '0'..='9' => {
                self.backup(Some(c));
                self.lex_number()
            }
            c if is_alphanumeric(c) => {
                self.backup(Some(c));
                self.lex_identifier()
            }
            '(' => {
                self.paren_depth += 1;
                self.emit(Kind::LeftParen);
                State::InsideAction
            }
            ')' => {
                self.paren_depth -= 1;
                if self.paren_depth < 0 {
                    return self.error("unexpected right paren".into());
                }
                self.emit(Kind::RightParen);
                State::InsideAction
            }
            c if c.is_ascii() && !c.is_ascii_control() => {
                self.emit(Kind::Char);
                State::InsideAction
            }
            c => self.error(format!(
                "unrecognized character in action: U+{:04X}",
                c as u32
            )),
        }
    }

    fn lex_space(&mut self) -> State {
        let mut spaces = 0;
        while self.peek().is_some_and(is_space) {
            self.next();
            spaces += 1;
        }
        let before = &self.input[self.pos - 1..];
        if has_right_trim(before) && before[2..].starts_with(RIGHT) {
            let c = self.input[..self.pos].chars().next_back();
            self.backup(c);
            if spaces == 1 {
                return State::RightDelim;
            }
        }
        self.emit(Kind::Space);
        State::InsideAction
    }

    fn at_terminator(&self) -> bool {
        match self.peek() {
            None => true,
            Some(c) if is_space(c) => true,
            Some('.' | ',' | '|' | ':' | ')' | '(') => true,
            _ => self.rest().starts_with(RIGHT),
        }
    }

    fn lex_identifier(&mut self) -> State {
        loop {
            let c = self.next();
            if c.is_some_and(is_alphanumeric) {
                continue;
            }
            self.backup(c);
            let word = &self.input[self.start..self.pos];
            if !self.at_terminator() {
                return self.error(format!("bad character {}", describe_rune(c)));
            }
            let kind = match keyword(word) {
                Some(k) => k,
                None if word.starts_with('.') => Kind::Field,
                None if word == "true" || word == "false" => Kind::Bool,
                None => Kind::Identifier,
            };
            self.emit(kind);
            return State::InsideAction;
        }
    }

    fn lex_variable(&mut self) -> State {
        if self.at_terminator() {
            self.emit(Kind::Variable);
            return State::InsideAction;
        }
        self.lex_field_or_variable(Kind::Variable)
    }

    fn lex_field_or_variable(&mut self, kind: Kind) -> State {
        if self.at_terminator() {
            self.emit(if kind == Kind::Variable {
                Kind::Variable
            } else {
                Kind::Dot
            });
            return State::InsideAction;
        }
        let mut c;
        loop {
            c = self.next();
            if !c.is_some_and(is_alphanumeric) {
                self.backup(c);
                break;
            }
        }
        if !self.at_terminator() {
            return self.error(format!("bad character {}", describe_rune(c)));
        }
        self.emit(kind);
        State::InsideAction
    }

    fn lex_char(&mut self) -> State {
        self.lex_escaped('\'', Kind::CharConstant, "unterminated character constant")
    }

    /// A quoted string or character constant: backslash escapes, no newline.
    fn lex_escaped(&mut self, quote: char, kind: Kind, unterminated: &str) -> State {
        loop {
            match self.next() {
                Some('\\') => {
                    let c = self.next();
                    if c.is_some() && c != Some('\n') {
                        continue;
                    }
                    return self.error(unterminated.into());
                }
                None | Some('\n') => return self.error(unterminated.into()),
                Some(c) if c == quote => break,
                _ => {}
            }
        }
        self.emit(kind);
        State::InsideAction
    }

    fn lex_number(&mut self) -> State {
        if !self.scan_number() {
            let text = self.input[self.start..self.pos].to_string();
            return self.error(format!("bad number syntax: {text:?}"));
        }
        if matches!(self.peek(), Some('+' | '-')) {
            if !self.scan_number() || !self.input[..self.pos].ends_with('i') {
                let text = self.input[self.start..self.pos].to_string();
                return self.error(format!("bad number syntax: {text:?}"));
            }
            self.emit(Kind::Complex);
            return State::InsideAction;
        }
        self.emit(Kind::Number);
        State::InsideAction
    }

    fn scan_number(&mut self) -> bool {
        self.accept("+-");
        let mut digits = "0123456789_";
        if self.accept("0") {
            if self.accept("xX") {
                digits = "0123456789abcdefABCDEF_";
            } else if self.accept("oO") {
                digits = "01234567_";
            } else if self.accept("bB") {
                digits = "01_";
            }
        }
        self.accept_run(digits);
        if self.accept(".") {
            self.accept_run(digits);
        }
        if digits.len() == 11 && self.accept("eE") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        if digits.len() == 23 && self.accept("pP") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        self.accept("i");
        if self.peek().is_some_and(is_alphanumeric) {
            self.next();
            return false;
        }
        true
    }

    fn lex_quote(&mut self) -> State {
        self.lex_escaped('"', Kind::String, "unterminated quoted string")
    }

    fn lex_raw_quote(&mut self) -> State {
        loop {
            match self.next() {
                None => return self.error("unterminated raw quoted string".into()),
                Some('`') => break,
                _ => {}
            }
        }
        self.emit(Kind::RawString);
        State::InsideAction
    }
}

fn describe_rune(c: Option<char>) -> String {
    match c {
        Some(c) => format!("U+{:04X} '{c}'", c as u32),
        None => "EOF".into(),
    }
}
