//! Go's `regexp` patterns run by the `regex` crate with Go's meaning: RE2 syntax, where the Perl
//! classes `\d \w \s` and the word boundaries `\b \B` are ASCII. Used by sprig's regex
//! functions and by CRD `pattern`s.

use regex::Regex;

/// A Go pattern as the `regex` crate reads it the same way: Perl classes and word boundaries
/// are ASCII in Go.
fn translate(pattern: &str) -> String {
    let mut out = String::new();
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(e) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let class = match e {
                    'd' => Some(("0-9", false)),
                    'D' => Some(("0-9", true)),
                    'w' => Some(("0-9A-Za-z_", false)),
                    'W' => Some(("0-9A-Za-z_", true)),
                    's' => Some(("\\t\\n\\f\\r ", false)),
                    'S' => Some(("\\t\\n\\f\\r ", true)),
                    _ => None,
                };
                match (class, e) {
                    (Some((set, negated)), _) => {
                        let neg = if negated { "^" } else { "" };
                        if in_class && !negated {
                            out.push_str(set);
                        } else {
                            out.push_str(&format!("[{neg}{set}]"));
                        }
                    }
                    (None, 'b') if !in_class => out.push_str("(?-u:\\b)"),
                    (None, 'B') if !in_class => out.push_str("(?-u:\\B)"),
                    (None, e) => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().expect("peeked"));
                }
                if chars.peek() == Some(&']') {
                    chars.next();
                    out.push_str("\\]");
                }
            }
            '[' if in_class && chars.peek() == Some(&':') => {
                // A POSIX class inside a bracket: copied to its closing `:]`.
                out.push('[');
                for d in chars.by_ref() {
                    out.push(d);
                    if d == ']' {
                        break;
                    }
                }
            }
            '[' => out.push_str("\\["),
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            c => out.push(c),
        }
    }
    out
}

/// Compiles a Go pattern (the error reads as Go's `regexp.Compile` error starts).
pub(crate) fn compile(pattern: &str) -> Result<Regex, String> {
    Regex::new(&translate(pattern)).map_err(|e| format!("error parsing regexp: {e}"))
}
