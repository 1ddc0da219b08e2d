//! sprig's helpers from goutils v1.1.1 (`abbrev`, `abbrevboth`, `initials`, `swapcase`, `wrap`,
//! `wrapWith`) and xstrings v1.5.0 (`snakecase`, `kebabcase`, `camelcase`), ported as they are:
//! goutils works on bytes, xstrings on characters.

use super::super::unicode::{
    is_letter, is_lower, is_number, is_punct, is_space, is_title, is_upper, to_lower, to_title,
    to_upper,
};
use super::super::value::{Value, go_bytes, go_string};
use super::{Out, Table, Ty, int, sig, string, text};

pub(super) const TABLE: Table = &[
    sig("abbrev", &[Ty::Int, Ty::Str], None),
    sig("abbrevboth", &[Ty::Int, Ty::Int, Ty::Str], None),
    sig("initials", &[Ty::Str], None),
    sig("swapcase", &[Ty::Str], None),
    sig("wrap", &[Ty::Int, Ty::Str], None),
    sig("wrapWith", &[Ty::Int, Ty::Str, Ty::Str], None),
    sig("snakecase", &[Ty::Str], None),
    sig("kebabcase", &[Ty::Str], None),
    sig("camelcase", &[Ty::Str], None),
];

pub(super) fn call(name: &str, args: Vec<Value>) -> Out {
    match name {
        "abbrev" => {
            let (width, s) = (int(&args[0]), text(&args[1]));
            if width < 4 {
                return string(s);
            }
            string(abbreviate(&go_bytes(s), 0, width)?.unwrap_or_default())
        }
        "abbrevboth" => {
            let (left, right, s) = (int(&args[0]), int(&args[1]), text(&args[2]));
            if right < 4 || left > 0 && right < 7 {
                return string(s);
            }
            string(abbreviate(&go_bytes(s), left, right)?.unwrap_or_default())
        }
        "initials" => string(initials(text(&args[0]))),
        "swapcase" => string(swap_case(text(&args[0]))),
        "wrap" => string(wrap(&go_bytes(text(&args[1])), int(&args[0]), "", false)?),
        "wrapWith" => string(wrap(
            &go_bytes(text(&args[2])),
            int(&args[0]),
            text(&args[1]),
            true,
        )?),
        "snakecase" => string(to_lower_case(text(&args[0]), '_')),
        "kebabcase" => string(to_lower_case(text(&args[0]), '-')),
        "camelcase" => string(to_pascal_case(text(&args[0]))),
        _ => unreachable!("{name} is in the table"),
    }
}

fn bounds(from: i64, to: i64, len: usize) -> Result<(usize, usize), String> {
    if from < 0 || to < from || to > len as i64 {
        return Err(format!(
            "runtime error: slice bounds out of range [{from}:{to}]"
        ));
    }
    Ok((from as usize, to as usize))
}

/// goutils' `AbbreviateFull`; `None` for its errors (sprig ignores them and prints "").
fn abbreviate(s: &[u8], offset: i64, max_width: i64) -> Result<Option<String>, String> {
    let len = s.len() as i64;
    if s.is_empty() {
        return Ok(Some(String::new()));
    }
    if max_width < 4 {
        return Ok(None);
    }
    if len <= max_width {
        return Ok(Some(go_string(s)));
    }
    // Go's int arithmetic wraps.
    let mut offset = offset.min(len);
    if len.wrapping_sub(offset) < max_width.wrapping_sub(3) {
        offset = len.wrapping_sub(max_width.wrapping_sub(3));
    }
    if offset <= 4 {
        let (a, b) = bounds(0, max_width - 3, s.len())?;
        return Ok(Some(format!("{}...", go_string(&s[a..b]))));
    }
    if max_width < 7 {
        return Ok(None);
    }
    if offset.wrapping_add(max_width).wrapping_sub(3) < len {
        let (a, b) = bounds(offset, len, s.len())?;
        let rest = abbreviate(&s[a..b], 0, max_width - 3)?.unwrap_or_default();
        return Ok(Some(format!("...{rest}")));
    }
    let (a, b) = bounds(len - (max_width - 3), len, s.len())?;
    Ok(Some(format!("...{}", go_string(&s[a..b]))))
}

/// goutils' `Initials`: byte by byte, each byte read as the character of that code point.
fn initials(s: &str) -> String {
    let mut out = String::new();
    let mut gap = true;
    for &b in go_bytes(s).iter() {
        let c = char::from(b);
        if is_space(c) {
            gap = true;
        } else if gap {
            out.push(c);
            gap = false;
        }
    }
    out
}

/// goutils' `SwapCase`.
fn swap_case(s: &str) -> String {
    let mut whitespace = true;
    s.chars()
        .map(|c| {
            if is_upper(c) || is_title(c) {
                whitespace = false;
                to_lower(c)
            } else if is_lower(c) {
                // The first letter of a word takes its titlecase form.
                let out = if whitespace { to_title(c) } else { to_upper(c) };
                whitespace = false;
                out
            } else {
                whitespace = is_space(c);
                c
            }
        })
        .collect()
}

/// goutils' `WrapCustom` (words split at ' ', bytes counted).
fn wrap(s: &[u8], length: i64, newline: &str, long_words: bool) -> Result<String, String> {
    if s.is_empty() {
        return Ok(String::new());
    }
    let newline = if newline.is_empty() { "\n" } else { newline };
    let length = length.max(1) as usize;
    let len = s.len();
    let mut offset = 0usize;
    let mut out: Vec<u8> = Vec::new();
    while len - offset > length {
        if s[offset] == b' ' {
            offset += 1;
            continue;
        }
        let end = length.saturating_add(offset + 1).min(len);
        let space = s[offset..end].iter().rposition(|&b| b == b' ');
        if let Some(at) = space.map(|i| i + offset) {
            out.extend_from_slice(&s[offset..at]);
            out.extend_from_slice(newline.as_bytes());
            offset = at + 1;
        } else if long_words {
            let end = length + offset;
            out.extend_from_slice(&s[offset..end]);
            out.extend_from_slice(newline.as_bytes());
            offset += length;
        } else {
            let end = length + offset;
            match s[end..].iter().position(|&b| b == b' ') {
                None => {
                    out.extend_from_slice(&s[offset..]);
                    offset = len;
                }
                Some(i) => {
                    let at = i + end;
                    out.extend_from_slice(&s[offset..at]);
                    out.extend_from_slice(newline.as_bytes());
                    offset = at + 1;
                }
            }
        }
    }
    out.extend_from_slice(&s[offset.min(len)..]);
    Ok(go_string(&out))
}

fn is_connector(c: char) -> bool {
    c == '-' || c == '_' || is_space(c)
}

/// xstrings' `isAlphabet`: letters, but not the CJK ideographs.
fn is_alphabet(c: char) -> bool {
    if !is_letter(c) {
        return false;
    }
    let r = c as u32;
    !(r >= 0x3400
        && ((0x4e00..=0x9fcc).contains(&r)
            || (0x3400..=0x4d85).contains(&r)
            || (0x20000..=0x2b81d).contains(&r)))
}

/// xstrings' `ToPascalCase`.
fn to_pascal_case(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    let mut first_upper = false;
    let mut r0 = None;
    for c in chars.by_ref() {
        if !is_connector(c) {
            first_upper = is_upper(c);
            r0 = Some(to_upper(c));
            break;
        }
        out.push(c);
    }
    let Some(mut r0) = r0 else {
        return out;
    };
    for c in chars {
        let r1 = r0;
        r0 = c;
        if is_connector(r0) && is_connector(r1) {
            out.push(r1);
            continue;
        }
        if is_connector(r1) {
            first_upper = is_upper(r0);
            r0 = to_upper(r0);
        } else {
            if first_upper {
                if is_upper(r0) {
                    r0 = to_lower(r0);
                } else {
                    first_upper = false;
                }
            }
            out.push(r1);
        }
    }
    out.push(r0);
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Word {
    Invalid,
    Number,
    Upper,
    Alphabet,
    Connector,
    Punct,
    Other,
}

/// xstrings' `nextWord`: the kind of the next word, the word, the rest.
fn next_word(s: &str) -> (Word, &str, &str) {
    let mut chars = s.char_indices().peekable();
    let Some((_, r)) = chars.next() else {
        return (Word::Invalid, "", "");
    };
    let mut end = r.len_utf8();
    let take_while = |end: &mut usize,
                      pred: &dyn Fn(char) -> bool,
                      chars: &mut std::iter::Peekable<std::str::CharIndices>| {
        while let Some(&(i, c)) = chars.peek() {
            if !pred(c) {
                break;
            }
            *end = i + c.len_utf8();
            chars.next();
        }
    };
    let kind = if is_connector(r) {
        take_while(&mut end, &is_connector, &mut chars);
        Word::Connector
    } else if is_punct(r) {
        take_while(&mut end, &is_punct, &mut chars);
        Word::Punct
    } else if is_upper(r) {
        if let Some(&(_, c)) = chars.peek() {
            if is_upper(c) {
                // A run of capitals; the last one starts the next word when a letter follows.
                let mut last_start = end;
                while let Some(&(i, c)) = chars.peek() {
                    if !is_upper(c) {
                        break;
                    }
                    last_start = i;
                    end = i + c.len_utf8();
                    chars.next();
                }
                if let Some(&(_, c)) = chars.peek()
                    && is_alphabet(c)
                {
                    end = last_start;
                }
            } else if is_alphabet(c) {
                take_while(&mut end, &|c| is_alphabet(c) && !is_upper(c), &mut chars);
            }
        }
        Word::Upper
    } else if is_alphabet(r) {
        take_while(&mut end, &|c| is_alphabet(c) && !is_upper(c), &mut chars);
        Word::Alphabet
    } else if is_number(r) {
        take_while(&mut end, &is_number, &mut chars);
        Word::Number
    } else {
        take_while(
            &mut end,
            &|c| !(is_connector(c) || is_alphabet(c) || is_number(c) || is_punct(c)),
            &mut chars,
        );
        Word::Other
    };
    (kind, &s[..end], &s[end..])
}

/// xstrings' `toLower` of one word.
fn lower_word(out: &mut String, kind: Word, word: &str, connector: char) {
    if kind != Word::Upper && kind != Word::Connector {
        out.push_str(word);
        return;
    }
    for c in word.chars() {
        if is_connector(c) {
            out.push(connector);
        } else if is_upper(c) {
            out.push(to_lower(c));
        } else {
            out.push(c);
        }
    }
}

/// xstrings' `camelCaseToLowerCase` (`snakecase`, `kebabcase`).
fn to_lower_case(s: &str, connector: char) -> String {
    let mut out = String::new();
    if s.is_empty() {
        return out;
    }
    let (mut wt, mut word, mut remaining) = next_word(s);
    while !remaining.is_empty() {
        if wt != Word::Connector {
            lower_word(&mut out, wt, word, connector);
        }
        let prev = wt;
        let last = word;
        (wt, word, remaining) = next_word(remaining);
        match prev {
            Word::Number => {
                while wt == Word::Alphabet || wt == Word::Number {
                    lower_word(&mut out, wt, word, connector);
                    (wt, word, remaining) = next_word(remaining);
                }
                if wt != Word::Invalid && wt != Word::Punct && wt != Word::Connector {
                    out.push(connector);
                }
            }
            Word::Connector => lower_word(&mut out, prev, last, connector),
            Word::Punct => {}
            _ => {
                if wt != Word::Number {
                    if wt != Word::Connector && wt != Word::Punct {
                        out.push(connector);
                    }
                    continue;
                }
                if remaining.is_empty() {
                    continue;
                }
                let last = word;
                (wt, word, remaining) = next_word(remaining);
                if wt != Word::Alphabet {
                    lower_word(&mut out, Word::Number, last, connector);
                    if wt != Word::Connector && wt != Word::Punct {
                        out.push(connector);
                    }
                    continue;
                }
                out.push(connector);
                lower_word(&mut out, Word::Number, last, connector);
                while wt == Word::Alphabet || wt == Word::Number {
                    lower_word(&mut out, wt, word, connector);
                    (wt, word, remaining) = next_word(remaining);
                }
                if wt != Word::Invalid && wt != Word::Connector && wt != Word::Punct {
                    out.push(connector);
                }
            }
        }
    }
    lower_word(&mut out, wt, word, connector);
    out
}
