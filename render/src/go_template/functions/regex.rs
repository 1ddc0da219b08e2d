//! sprig's regular expressions, with Go's `regexp` semantics: RE2 syntax with ASCII-only
//! `\d \w \s \b`, Go's rules for successive empty matches, `$1`/`${name}` expansion.

use super::super::value::{Elem, Value, appended_cap};
use super::{Out, Table, Ty, boolean, int, sig, string, text};
use crate::go_regex::compile;
use regex::Regex;

pub(super) const TABLE: Table = &[
    sig("regexMatch", &[Ty::Str, Ty::Str], None),
    sig("mustRegexMatch", &[Ty::Str, Ty::Str], None),
    sig("regexFindAll", &[Ty::Str, Ty::Str, Ty::Int], None),
    sig("mustRegexFindAll", &[Ty::Str, Ty::Str, Ty::Int], None),
    sig("regexFind", &[Ty::Str, Ty::Str], None),
    sig("mustRegexFind", &[Ty::Str, Ty::Str], None),
    sig("regexReplaceAll", &[Ty::Str, Ty::Str, Ty::Str], None),
    sig("mustRegexReplaceAll", &[Ty::Str, Ty::Str, Ty::Str], None),
    sig("regexReplaceAllLiteral", &[Ty::Str, Ty::Str, Ty::Str], None),
    sig(
        "mustRegexReplaceAllLiteral",
        &[Ty::Str, Ty::Str, Ty::Str],
        None,
    ),
    sig("regexSplit", &[Ty::Str, Ty::Str, Ty::Int], None),
    sig("mustRegexSplit", &[Ty::Str, Ty::Str, Ty::Int], None),
    sig("regexQuoteMeta", &[Ty::Str], None),
];

/// Go's `allMatches`: successive matches from the start; an empty match right after a
/// match is skipped.
fn all_matches<'s>(re: &Regex, s: &'s str, n: i64) -> Vec<regex::Captures<'s>> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut prev_end: Option<usize> = None;
    while (n < 0 || (out.len() as i64) < n) && pos <= s.len() {
        let Some(caps) = re.captures_at(s, pos) else {
            break;
        };
        let m = caps.get(0).expect("group 0");
        let mut accept = true;
        if m.end() == pos {
            if Some(m.start()) == prev_end {
                accept = false;
            }
            pos += s[pos..].chars().next().map_or(1, char::len_utf8);
        } else {
            pos = m.end();
        }
        prev_end = Some(m.end());
        if accept {
            out.push(caps);
        }
    }
    out
}

/// Go's `replaceAll`.
fn replace_all(re: &Regex, src: &str, repl: &str, literal: bool) -> String {
    let mut buf = String::new();
    let mut last_end = 0;
    let mut search = 0;
    while search <= src.len() {
        let Some(caps) = re.captures_at(src, search) else {
            break;
        };
        let m = caps.get(0).expect("group 0");
        buf.push_str(&src[last_end.min(m.start())..m.start()]);
        if m.end() > last_end || m.start() == 0 {
            if literal {
                buf.push_str(repl);
            } else {
                caps.expand(repl, &mut buf);
            }
        }
        last_end = m.end();
        let width = src[search..].chars().next().map_or(0, char::len_utf8);
        if search + width > m.end() {
            search += width;
        } else if search + 1 > m.end() {
            search += 1;
        } else {
            search = m.end();
        }
    }
    buf.push_str(&src[last_end.min(src.len())..]);
    buf
}

/// Go's `Regexp.Split`.
fn split(re: &Regex, pattern: &str, s: &str, n: i64) -> Value {
    if n == 0 {
        return Value::nil_slice(Elem::Str);
    }
    if !pattern.is_empty() && s.is_empty() {
        return Value::strings([String::new()]);
    }
    let matches = all_matches(re, s, n);
    let mut parts = Vec::new();
    let (mut beg, mut end) = (0, 0);
    for caps in &matches {
        if n > 0 && parts.len() as i64 == n - 1 {
            break;
        }
        let m = caps.get(0).expect("group 0");
        end = m.start();
        if m.end() != 0 {
            parts.push(s[beg..end].to_string());
        }
        beg = m.end();
    }
    if end != s.len() {
        parts.push(s[beg..].to_string());
    }
    // `make([]string, 0, len(matches))`, appended to.
    let cap = appended_cap(matches.len(), parts.len(), Elem::Str);
    Value::strings_with_cap(parts, cap)
}

/// Go's `regexp.QuoteMeta`.
fn quote_meta(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

pub(super) fn call(name: &str, args: Vec<Value>) -> Out {
    let must = name.starts_with("must");
    let s = |i: usize| text(&args[i]);
    if name == "regexQuoteMeta" {
        return string(quote_meta(s(0)));
    }
    let re = match compile(s(0)) {
        Ok(re) => re,
        // regexMatch ignores the error; the others panic (MustCompile) or return it.
        Err(_) if name == "regexMatch" => return boolean(false),
        Err(e) => return Err(e),
    };
    let _ = must;
    match name.trim_start_matches("must") {
        "regexMatch" | "RegexMatch" => boolean(re.is_match(s(1))),
        "regexFindAll" | "RegexFindAll" => {
            let found: Vec<String> = all_matches(&re, s(1), int(&args[2]))
                .iter()
                .map(|c| c[0].to_string())
                .collect();
            if found.is_empty() {
                return Ok(Value::nil_slice(Elem::Str));
            }
            // Go starts the result at capacity 10.
            let cap = appended_cap(10, found.len(), Elem::Str);
            Ok(Value::strings_with_cap(found, cap))
        }
        "regexFind" | "RegexFind" => string(re.find(s(1)).map_or("", |m| m.as_str())),
        "regexReplaceAll" | "RegexReplaceAll" => string(replace_all(&re, s(1), s(2), false)),
        "regexReplaceAllLiteral" | "RegexReplaceAllLiteral" => {
            string(replace_all(&re, s(1), s(2), true))
        }
        "regexSplit" | "RegexSplit" => Ok(split(&re, s(0), s(1), int(&args[2]))),
        _ => unreachable!("{name} is in the table"),
    }
}
