//! The part of Go's `text/template` (with sprig's common functions) that ClusterClass inline
//! patches use in `enabledIf` and `valueFrom.template`: text, `{{ .path }}`, pipelines,
//! `if`/`else if`/`else`, `range`, `with`, and the functions listed in [`FUNCTIONS`]. Anything
//! else is an error that names it, never a silent guess.

mod exec;
mod format;
mod functions;
mod parse;

pub use format::go_float;
pub use functions::FUNCTIONS;

use serde_json::Value;

/// Renders `template` with `data` as `.`.
///
/// ```
/// use capi_ext_render::go_template::render;
/// let data = serde_json::json!({"builtin": {"cluster": {"name": "c1"}}, "ha": true});
/// assert_eq!(render("{{ .builtin.cluster.name }}-lb", &data).unwrap(), "c1-lb");
/// assert_eq!(render("{{ if .ha }}3{{ else }}1{{ end }}", &data).unwrap(), "3");
/// assert!(render("{{ toYaml . }}", &data).unwrap_err().contains("`toYaml`"));
/// ```
pub fn render(template: &str, data: &Value) -> Result<String, String> {
    let mut pieces = parse::split(template)?;
    pieces.reverse();
    let (nodes, end) = parse::parse_nodes(&mut pieces, 0)?;
    if let Some(end) = end {
        return Err(format!("unexpected {{{{{end}}}}}"));
    }
    let mut out = String::new();
    exec::exec(&nodes, Some(&as_go_data(data)), &mut out)?;
    Ok(out)
}

/// The data as Go's template sees it: CAPI decodes the variables from JSON into `interface{}`,
/// so every number is a float64 (numbers written in the template itself stay Go ints).
fn as_go_data(value: &Value) -> Value {
    match value {
        Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| value.clone(), Value::Number),
        Value::Array(items) => Value::Array(items.iter().map(as_go_data).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), as_go_data(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn r(template: &str) -> Result<String, String> {
        render(
            template,
            &json!({"builtin": {"cluster": {"name": "c1"}, "controlPlane": {"replicas": 3}}, "zones": ["a", "b"], "flag": false, "empty": ""}),
        )
    }

    #[test]
    fn fields_conditions_loops_and_functions() {
        assert_eq!(r("{{ .builtin.cluster.name }}").unwrap(), "c1");
        assert_eq!(r("{{ .missing }}").unwrap(), "<no value>");
        assert_eq!(r("{{ .builtin.controlPlane.replicas }}").unwrap(), "3");
        assert_eq!(
            r("{{ if gt .builtin.controlPlane.replicas 1.0 }}ha{{ end }}").unwrap(),
            "ha"
        );
        assert_eq!(
            r("{{ if .flag }}a{{ else if .empty }}b{{ else }}c{{ end }}").unwrap(),
            "c"
        );
        assert_eq!(
            r("{{- range .zones }}\n- {{ . }}{{ end }}").unwrap(),
            "\n- a\n- b"
        );
        assert_eq!(
            r("{{ with .builtin.cluster }}{{ .name }}{{ end }}").unwrap(),
            "c1"
        );
        assert_eq!(
            r("{{ .builtin.cluster.name | upper | quote }}").unwrap(),
            "\"C1\""
        );
        assert_eq!(
            r("{{ printf \"%s-%d\" .builtin.cluster.name 7 }}").unwrap(),
            "c1-7"
        );
        assert_eq!(r("{{ default \"x\" .missing }} {{ not .flag }} {{ eq .builtin.cluster.name \"c0\" \"c1\" }}").unwrap(), "x true true");
        assert_eq!(
            r("{{ join \",\" .zones }} {{ len .zones }} {{ index .zones 1 }}").unwrap(),
            "a,b 2 b"
        );
        assert_eq!(
            r("{{ .zones }} {{ .builtin.cluster }}").unwrap(),
            "[a b] map[name:c1]"
        );
    }

    /// Found by fuzzing (`fuzz/fuzz_targets/go_template.rs`): these panicked.
    #[test]
    fn empty_parenthesized_pipelines_are_errors() {
        let data = json!({"a": "x"});
        for template in [
            "{{ join() }}",
            "{{ () }}",
            "{{ (.a |) }}",
            "{{ upper (| .a) }}",
        ] {
            let err = render(template, &data).unwrap_err();
            assert!(
                err.contains("missing value") || err.contains("empty command"),
                "{template}: {err}"
            );
        }
        assert_eq!(render("{{ (.a) }}", &data).unwrap(), "x");
    }

    /// Found by fuzzing (`fuzz/fuzz_targets/go_template.rs`): thousands of `(` or of nested
    /// blocks overflowed the stack. The inputs AFL++ saved are replayed as they are, on a thread
    /// with a worker's 2 MiB stack.
    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                let data = json!({"a": "x", "net": {"mtu": 1500.0}});
                let deep = [
                    format!("{{{{ if gt{} }}}}", "(".repeat(5000)),
                    format!("{{{{ {}.a{} }}}}", "(".repeat(101), ")".repeat(101)),
                    "{{ with .net }}".repeat(5000),
                    format!(
                        "{{{{ if .a }}}}{}{{{{ end }}}}",
                        "{{ else if .a }}".repeat(200)
                    ),
                ];
                for template in &deep {
                    let err = render(template, &data).unwrap_err();
                    assert!(err.contains("nests more than 100 levels"), "{err}");
                }
                for crash in [
                    &include_bytes!("../../tests/fuzz-crashes/go_template/stack-overflow-0.txt")[..],
                    include_bytes!("../../tests/fuzz-crashes/go_template/stack-overflow-1.txt"),
                    include_bytes!("../../tests/fuzz-crashes/go_template/stack-overflow-2.txt"),
                ] {
                    let _ = render(&String::from_utf8_lossy(crash), &data);
                }
                // Within the limit, nesting still works.
                let ok = format!("{{{{ {}.a{} }}}}", "(".repeat(99), ")".repeat(99));
                assert_eq!(render(&ok, &data).unwrap(), "x");
                let chain = format!(
                    "{{{{ if not .a }}}}{}{{{{ else }}}}y{{{{ end }}}}",
                    "{{ else if not .a }}".repeat(50)
                );
                assert_eq!(render(&chain, &data).unwrap(), "y");
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn sprig_integer_arithmetic_truncates_floats_like_cast_to_int64() {
        let data = json!({"cpu": 2.0, "half": 2.5, "text": "7", "word": "x"});
        let r = |t: &str| render(t, &data);
        assert_eq!(r("{{ add1 .cpu }}").unwrap(), "3");
        assert_eq!(r("{{ add .half 1 .text }}").unwrap(), "10");
        assert_eq!(
            r("{{ sub .cpu 5 }} {{ mul .half 3 }} {{ div 7 .cpu }} {{ mod 7 .cpu }}").unwrap(),
            "-3 6 3 1"
        );
        assert_eq!(
            r("{{ max 1 .text .cpu }} {{ min .word 4 }}").unwrap(),
            "7 0"
        );
        assert!(r("{{ div 1 0 }}").unwrap_err().contains("divide by zero"));
    }

    /// Each expectation is what Go's text/template printed for the same template and data
    /// (the data decoded from JSON, as CAPI decodes variables, so every number is a float64).
    #[test]
    fn numbers_and_printf_as_go_prints_them() {
        let data = json!({"x": 1000000, "a": 123456, "b": 1234567, "h": 0.5, "t": 0.0001, "u": 0.00001,
            "big": 1e21, "c": 100, "n": -2.5, "two": 2, "tiny": 1.5e-7, "long": 123456789012u64,
            "s": "a\"b\\c\nd\te\u{e9}\u{1}", "zones": ["a", "b"]});
        for (template, go) in [
            ("{{ .x }}", "1e+06"),
            ("{{ .a }}", "123456"),
            ("{{ .b }}", "1.234567e+06"),
            ("{{ .h }}", "0.5"),
            ("{{ .t }}", "0.0001"),
            ("{{ .u }}", "1e-05"),
            ("{{ .big }}", "1e+21"),
            ("{{ .c }}", "100"),
            ("{{ .n }}", "-2.5"),
            ("{{ .tiny }}", "1.5e-07"),
            ("{{ .long }}", "1.23456789012e+11"),
            ("{{ printf \"%d\" .two }}", "%!d(float64=2)"),
            ("{{ printf \"%s\" .two }}", "%!s(float64=2)"),
            ("{{ printf \"%v\" .x }}", "1e+06"),
            (
                "{{ printf \"%q\" .s }}",
                "\"a\\\"b\\\\c\\nd\\te\u{e9}\\x01\"",
            ),
            ("{{ printf \"%d\" 7 }}", "7"),
            ("{{ printf \"%s\" 7 }}", "%!s(int=7)"),
            (
                "{{ printf \"%d\" .s }}",
                "%!d(string=a\"b\\c\nd\te\u{e9}\u{1})",
            ),
            ("{{ printf \"%d-%s\" }}", "%!d(MISSING)-%!s(MISSING)"),
            ("{{ print 1 2 }}", "1 2"),
            ("{{ print \"a\" 1 }}", "a1"),
            ("{{ print .two .c }}", "2 100"),
            ("{{ len .zones }}", "2"),
            ("{{ eq .two 2.0 }}", "true"),
            ("{{ index .zones 1 }}", "b"),
            ("{{ printf \"%v\" .zones }}", "[a b]"),
            ("{{ .zones }}", "[a b]"),
        ] {
            assert_eq!(render(template, &data).as_deref(), Ok(go), "{template}");
        }
        for (template, go_error) in [
            (
                "{{ eq .two 2 }}",
                "error calling eq: incompatible types for comparison: float64 and int",
            ),
            (
                "{{ lt .two 3 }}",
                "error calling lt: incompatible types for comparison: float64 and int",
            ),
        ] {
            let err = render(template, &data).unwrap_err();
            assert!(err.contains(go_error), "{template}: {err}");
        }
    }

    #[test]
    fn go_float_matches_strconv_shortest_g() {
        for (f, go) in [
            (0.0, "0"),
            (-0.0, "-0"),
            (1.0, "1"),
            (999999.0, "999999"),
            (1e6, "1e+06"),
            (1e100, "1e+100"),
            (0.1, "0.1"),
            (1e-4, "0.0001"),
            (1.25e-5, "1.25e-05"),
        ] {
            assert_eq!(go_float(f), go, "{f}");
        }
    }

    #[test]
    fn unsupported_constructs_are_named() {
        assert!(
            r("{{ b64enc .x }}")
                .unwrap_err()
                .contains("function `b64enc` is not supported")
        );
        assert!(
            r("{{ $x := 1 }}")
                .unwrap_err()
                .contains("template variables")
        );
        assert!(r("{{ if .flag }}a").unwrap_err().contains("without `end`"));
        assert!(r("{{ .x ").unwrap_err().contains("unclosed action"));
    }
}
