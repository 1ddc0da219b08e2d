//! Reading JSON text without decoding it: a top-level string member (a template's `kind` and
//! `apiVersion`), the top-level keys, and whether a text is another's encoding with other whitespace or escapes.
//! The text is valid JSON (a `RawValue`, or `serde_json`'s output); on anything else the
//! readers stop with `None` or `false` rather than panic.

use std::borrow::Cow;

/// The string value of the top-level member `key` of the object `text` (valid JSON, as a
/// `RawValue` holds), `None` when `text` is not an object, has no such member or its
/// value is not a string. Stops at the member: Kubernetes' encoders write `apiVersion`
/// and `kind` first.
pub(crate) fn top_level_string<'a>(text: &'a str, key: &str) -> Option<Cow<'a, str>> {
    let (_, value) =
        Members::of(text)?.find(|(name, _)| decode_string(name).as_deref() == Some(key))?;
    value
        .starts_with('"')
        .then(|| decode_string(value))
        .flatten()
}

/// The keys of the top-level members of the object `text` (valid JSON), in its order; `None`
/// when `text` is not an object.
pub(crate) fn top_level_keys(text: &str) -> Option<Vec<Cow<'_, str>>> {
    Members::of(text)?
        .map(|(name, _)| decode_string(name))
        .collect()
}

/// The top-level members of an object's text: each key's string literal and its value's text.
/// Ends at the object's end, or early on text that is not valid JSON.
struct Members<'a> {
    text: &'a str,
    at: usize,
    done: bool,
}

impl<'a> Members<'a> {
    /// The members of `text`, `None` when it is not an object.
    fn of(text: &'a str) -> Option<Self> {
        let at = skip_ws(text.as_bytes(), 0);
        (text.as_bytes().get(at) == Some(&b'{')).then_some(Members {
            text,
            at: at + 1,
            done: false,
        })
    }
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        self.done = true;
        let (text, bytes) = (self.text, self.text.as_bytes());
        let at = skip_ws(bytes, self.at);
        if bytes.get(at) != Some(&b'"') {
            return None; // `}`: no more members
        }
        let key_end = string_end(bytes, at)?;
        let colon = skip_ws(bytes, key_end);
        if bytes.get(colon) != Some(&b':') {
            return None;
        }
        let value_at = skip_ws(bytes, colon + 1);
        let value_end = value_end(bytes, value_at)?;
        let next = skip_ws(bytes, value_end);
        if bytes.get(next) == Some(&b',') {
            self.at = next + 1;
            self.done = false;
        }
        Some((&text[at..key_end], &text[value_at..value_end]))
    }
}

/// A JSON string literal's value, borrowed when it has no escapes.
pub(crate) fn decode_string(literal: &str) -> Option<Cow<'_, str>> {
    let inner = &literal[1..literal.len() - 1];
    if inner.contains('\\') {
        serde_json::from_str::<String>(literal).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

pub(crate) fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\n' | b'\r' | b'\t')) {
        at += 1;
    }
    at
}

/// Just past the string literal starting at `at` (a `"`). Most of a template's bytes are in
/// its strings (scripts, files): they are skipped to the next quote or backslash at once.
pub(crate) fn string_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    at += 1;
    loop {
        at += memchr::memchr2(b'"', b'\\', bytes.get(at..)?)?;
        match bytes[at] {
            b'"' => return Some(at + 1),
            _ => at += 2,
        }
    }
}

/// Just past the value starting at `at`.
pub(crate) fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            loop {
                match bytes.get(i)? {
                    b'"' => {
                        i = string_end(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let mut i = at;
            while !matches!(
                bytes.get(i),
                None | Some(b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
            ) {
                i += 1;
            }
            Some(i)
        }
    }
}

/// The JSON pointers of the empty lists (`[]`) that are members of objects in `text` (valid
/// JSON), in the order they appear; `None` when the text is not what it should be.
pub(crate) fn empty_lists(text: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    // Most templates have none: a `[` followed by `]` (whitespace aside) is looked for first,
    // strings and all; only a text with one is walked.
    let maybe =
        memchr::memchr_iter(b'[', bytes).any(|i| bytes.get(skip_ws(bytes, i + 1)) == Some(&b']'));
    if !maybe {
        return Some(out);
    }
    let at = skip_ws(bytes, 0);
    empty_lists_in(text, at, false, &mut Vec::new(), &mut out)?;
    Some(out)
}

/// A step of the way to a value: a member's key (its string literal) or a list index.
enum Step<'t> {
    Key(&'t str),
    Index(usize),
}

/// The JSON pointer of `steps`.
fn pointer(steps: &[Step<'_>]) -> Option<String> {
    let mut path = String::new();
    for step in steps {
        path.push('/');
        match step {
            Step::Key(literal) => {
                crate::hooks::v1alpha1::push_escaped_token(&mut path, &decode_string(literal)?)
            }
            Step::Index(i) => path.push_str(&i.to_string()),
        }
    }
    Some(path)
}

/// [`empty_lists`] of the value at `at`, reached by `steps` (a member of an object when
/// `member`: only those are counted, as lists of lists keep their empty items); just past the
/// value.
fn empty_lists_in<'t>(
    text: &'t str,
    at: usize,
    member: bool,
    steps: &mut Vec<Step<'t>>,
    out: &mut Vec<String>,
) -> Option<usize> {
    let bytes = text.as_bytes();
    let (close, object) = match bytes.get(at)? {
        b'{' => (b'}', true),
        b'[' => (b']', false),
        _ => return value_end(bytes, at),
    };
    let mut at = skip_ws(bytes, at + 1);
    if bytes.get(at) == Some(&close) {
        if !object && member {
            out.push(pointer(steps)?);
        }
        return Some(at + 1);
    }
    let mut index = 0usize;
    loop {
        if object {
            let key_end = string_end(bytes, at)?;
            steps.push(Step::Key(&text[at..key_end]));
            at = skip_ws(bytes, key_end);
            if bytes.get(at) != Some(&b':') {
                return None;
            }
            at = skip_ws(bytes, at + 1);
        } else {
            steps.push(Step::Index(index));
            index += 1;
        }
        at = skip_ws(bytes, empty_lists_in(text, at, object, steps, out)?);
        steps.pop();
        match bytes.get(at)? {
            b',' => at = skip_ws(bytes, at + 1),
            b if *b == close => return Some(at + 1),
            _ => return None,
        }
    }
}

/// Whether the JSON text `text` is `compact` (`serde_json`'s compact encoding) written with
/// whitespace between its tokens (as a request written indented has it) or with strings
/// escaped otherwise (Go's encoder, and so CAPI's manager, writes `<`, `>` and `&` as
/// `\u003c`, `\u003e` and `\u0026`): the same value then. `false` says nothing (a number
/// spelled another way, or members in another order, may still be the same value).
pub(crate) fn same_text(compact: &[u8], text: &str) -> bool {
    let text = text.as_bytes();
    if compact == text {
        return true;
    }
    let (mut i, mut j) = (0, 0);
    loop {
        j = skip_ws(text, j);
        match (compact.get(i), text.get(j)) {
            (None, None) => return true,
            (Some(b'"'), Some(b'"')) => {
                let (Some(end_i), Some(end_j)) = (string_end(compact, i), string_end(text, j))
                else {
                    return false;
                };
                let (ours, theirs) = (&compact[i..end_i], &text[j..end_j]);
                if ours != theirs && !same_string(ours, theirs) {
                    return false;
                }
                (i, j) = (end_i, end_j);
            }
            (Some(a), Some(b)) if a == b => (i, j) = (i + 1, j + 1),
            _ => return false,
        }
    }
}

/// Whether two JSON string literals hold the same string.
fn same_string(a: &[u8], b: &[u8]) -> bool {
    match (std::str::from_utf8(a), std::str::from_utf8(b)) {
        (Ok(a), Ok(b)) => {
            matches!((decode_string(a), decode_string(b)), (Some(a), Some(b)) if a == b)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{empty_lists, same_text, top_level_keys, top_level_string};

    #[test]
    fn finds_the_empty_lists_that_are_members_with_their_pointers() {
        let text = r#" { "a": [ ], "b/c": {"d~e": [], "s": "[]", "n": 1},
            "l": [[], {"x": []}, [1], {"y": [ 2 ]}], "\u0066": [] } "#;
        assert_eq!(
            empty_lists(text).unwrap(),
            ["/a", "/b~1c/d~0e", "/l/1/x", "/f"],
            "a list's own empty items are not members"
        );
        assert_eq!(empty_lists("[]").unwrap(), Vec::<String>::new());
        assert_eq!(empty_lists(r#"{"a": 1}"#).unwrap(), Vec::<String>::new());
        assert_eq!(empty_lists(r#"{"a" []}"#), None, "not JSON");
    }

    #[test]
    fn lists_the_top_level_keys_in_the_order_of_the_text() {
        let text = r#" { "machineDeployment": {"class": "a", "x": {"cluster": 1}},
            "l": [{"y": 2}], "c\u006custer" : "s,}", "n": -1 } "#;
        assert_eq!(
            top_level_keys(text).unwrap(),
            ["machineDeployment", "l", "cluster", "n"]
        );
        assert_eq!(top_level_keys(" {} ").unwrap(), Vec::<&str>::new());
        assert_eq!(top_level_keys("[{\"a\": 1}]"), None, "not an object");
        assert_eq!(top_level_keys("\"a\""), None);
    }

    #[test]
    fn finds_a_top_level_string_member_wherever_it_is_and_only_there() {
        let text = r#" { "metadata": {"kind": "no", "x": [1, {"kind": "no"}, "]}"]},
            "n": -1.5e3, "t": true, "z": null, "s": "a\"kind\"",
            "kind" : "Dock\u0065rMachineTemplate", "apiVersion": "v1" } "#;
        assert_eq!(
            top_level_string(text, "kind").as_deref(),
            Some("DockerMachineTemplate")
        );
        assert_eq!(top_level_string(text, "apiVersion").as_deref(), Some("v1"));
        assert_eq!(top_level_string(text, "x"), None);
        assert_eq!(top_level_string(text, "n"), None, "not a string");
        assert_eq!(top_level_string("[1]", "kind"), None);
        assert_eq!(top_level_string("{}", "kind"), None);
        assert_eq!(top_level_string("null", "kind"), None);
    }

    /// Random objects (nested `kind`s, escapes, every value type, pretty and compact)
    /// read by the scanner and by `serde_json` agree.
    #[test]
    fn agrees_with_serde_json_on_random_objects() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        fn value(next: &mut dyn FnMut(u64) -> u64, depth: u32) -> serde_json::Value {
            let strings = [
                "kind",
                "K",
                "a\"b",
                "\\",
                "é\u{1F600}",
                "}]",
                "",
                "apiVersion",
            ];
            match next(if depth > 3 { 4 } else { 6 }) {
                0 => serde_json::Value::Null,
                1 => (next(2) == 0).into(),
                2 => (next(2000) as f64 / 7.0 - 100.0).into(),
                3 => strings[next(strings.len() as u64) as usize].into(),
                4 => (0..next(4)).map(|_| value(next, depth + 1)).collect(),
                _ => (0..next(5))
                    .map(|_| {
                        let key = strings[next(strings.len() as u64) as usize].to_string();
                        (key, value(next, depth + 1))
                    })
                    .collect::<serde_json::Map<_, _>>()
                    .into(),
            }
        }
        for case in 0..5000 {
            let object = value(&mut next, 0);
            let text = if case % 2 == 0 {
                serde_json::to_string(&object).unwrap()
            } else {
                serde_json::to_string_pretty(&object).unwrap()
            };
            for key in ["kind", "apiVersion", "a\"b"] {
                let expected = object.get(key).and_then(serde_json::Value::as_str);
                assert_eq!(
                    top_level_string(&text, key).as_deref(),
                    expected,
                    "{key} in {text}"
                );
            }
        }
    }

    #[test]
    fn same_text_skips_whitespace_between_tokens_and_reads_escapes() {
        assert!(same_text(
            br#"{"a":[1,"x y"]}"#,
            "{ \"a\" :\n [1, \"x y\"] }"
        ));
        assert!(same_text(br#"{"a":"q\"b"}"#, r#"{"a": "q\"b"}"#));
        assert!(same_text(
            br#"{"a":"echo <x> && true"}"#,
            r#"{"a":"echo \u003cx\u003e \u0026\u0026 true"}"#
        ));
        assert!(same_text(br#"{"\u0001":"\n"}"#, r#"{"\u0001":"\u000a"}"#));
        assert!(!same_text(br#"{"a":"xy"}"#, r#"{"a":"x y"}"#));
        assert!(!same_text(br#"{"a":"<"}"#, r#"{"a":"\u003e"}"#));
        assert!(!same_text(br#"{"a":1}"#, r#"{"a":2}"#));
        assert!(!same_text(br#"{"a":1}"#, r#"{"a":1,"b":2}"#));
        assert!(!same_text(br#"{"a":1,"b":2}"#, r#"{"a":1}"#));
        assert!(!same_text(br#"{"a":1.0}"#, r#"{"a":1}"#));
        assert!(
            !same_text(br#"{"b":1,"a":2}"#, r#"{"a":2,"b":1}"#),
            "the order counts"
        );
    }
}
