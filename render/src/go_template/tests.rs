//! Expectations are what Go's text/template (and sprig v3.3.0) printed for the same template and
//! data; the differential in `conformance/` checks far more of them.

use super::*;
use serde_json::json;

fn r(template: &str) -> Result<String, String> {
    render(
        template,
        &json!({"builtin": {"cluster": {"name": "c1"}, "controlPlane": {"replicas": 3, "version": "v1.31.2"}}, "zones": ["a", "b"], "flag": false, "empty": "", "none": null}),
    )
}

#[test]
fn fields_conditions_loops_and_functions() {
    assert_eq!(r("{{ .builtin.cluster.name }}").unwrap(), "c1");
    assert_eq!(r("{{ .missing }}").unwrap(), "<no value>");
    assert_eq!(
        r("{{ .none }} {{ print .none }}").unwrap(),
        "<no value> <nil>"
    );
    assert!(
        r("{{ .none.x }}")
            .unwrap_err()
            .contains("nil pointer evaluating")
    );
    assert_eq!(r("{{ .missing.x }}").unwrap(), "<no value>");
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
        r("{{ range $i, $z := .zones }}{{ $i }}={{ $z }};{{ end }}").unwrap(),
        "0=a;1=b;"
    );
    assert_eq!(
        r("{{ range $z := .zones }}{{ if eq $z \"a\" }}{{ continue }}{{ end }}{{ $z }}{{ end }}")
            .unwrap(),
        "b"
    );
    assert_eq!(
        r("{{ range .zones }}{{ . }}{{ break }}{{ end }}").unwrap(),
        "a"
    );
    assert_eq!(r("{{ range 3 }}{{ . }}{{ end }}").unwrap(), "012");
    assert_eq!(
        r("{{ with .builtin.cluster }}{{ .name }}{{ end }}").unwrap(),
        "c1"
    );
    assert_eq!(
        r("{{ $x := 1 }}{{ $x = 2 }}{{ $x }} {{ $.flag }}").unwrap(),
        "2 false"
    );
    assert_eq!(
        r("{{ define \"n\" }}[{{ . }}]{{ end }}{{ template \"n\" .builtin.cluster.name }}")
            .unwrap(),
        "[c1]"
    );
    assert_eq!(
        r("{{ block \"b\" . }}{{ .flag }}{{ end }}").unwrap(),
        "false"
    );
    assert_eq!(r("a {{- /* c */ -}} b").unwrap(), "ab");
    assert_eq!(
        r("{{ .builtin.cluster.name | upper | quote }}").unwrap(),
        "\"C1\""
    );
    assert_eq!(
        r("{{ printf \"%s-%d\" .builtin.cluster.name 7 }}").unwrap(),
        "c1-7"
    );
    assert_eq!(
        r("{{ join \",\" .zones }} {{ len .zones }} {{ index .zones 1 }}").unwrap(),
        "a,b 2 b"
    );
    assert_eq!(
        r("{{ .zones }} {{ .builtin.cluster }}").unwrap(),
        "[a b] map[name:c1]"
    );
    assert_eq!(r("{{ slice .zones 1 }}").unwrap(), "[b]");
}

#[test]
fn sprig_functions_real_classes_use() {
    let v = "{{ if semverCompare \">= v1.30\" .builtin.controlPlane.version }}enforce{{ else }}none{{ end }}";
    assert_eq!(r(v).unwrap(), "enforce");
    assert_eq!(
        r("{{ $v := semver .builtin.controlPlane.version }}{{ $v.Major }}.{{ $v.Minor }}").unwrap(),
        "1.31"
    );
    assert_eq!(
        r("{{ regexReplaceAll \"v([0-9]+)\\\\..*\" .builtin.controlPlane.version \"${1}\" }}")
            .unwrap(),
        "1"
    );
    assert_eq!(
        r("{{ dict \"a\" 1 \"b\" (list 1 2) | toJson }}").unwrap(),
        "{\"a\":1,\"b\":[1,2]}"
    );
    assert_eq!(r("{{ \"x\\ny\" | nindent 2 }}").unwrap(), "\n  x\n  y");
    assert_eq!(
        r("{{ b64enc \"hello\" }} {{ b64dec \"aGVsbG8=\" }}").unwrap(),
        "aGVsbG8= hello"
    );
    assert_eq!(
        r("{{ sha256sum \"\" }}").unwrap(),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(
        r("{{ toYaml . }}").unwrap_err(),
        "template: tpl:1: function \"toYaml\" not defined"
    );
}

#[test]
fn go_types_decide_what_functions_accept() {
    // Data numbers are float64; template constants are int.
    assert!(
        r("{{ eq .builtin.controlPlane.replicas 3 }}")
            .unwrap_err()
            .contains("incompatible types for comparison")
    );
    assert_eq!(
        r("{{ eq .builtin.controlPlane.replicas 3.0 }}").unwrap(),
        "true"
    );
    assert!(
        r("{{ repeat .builtin.controlPlane.replicas \"x\" }}")
            .unwrap_err()
            .contains("wrong type for value; expected int; got float64")
    );
    assert!(
        r("{{ repeat (add 1 2) \"x\" }}")
            .unwrap_err()
            .contains("expected int; got int64")
    );
    assert_eq!(
        r("{{ repeat (int .builtin.controlPlane.replicas) \"x\" }}").unwrap(),
        "xxx"
    );
    assert!(
        r("{{ ternary 1 2 .empty }}")
            .unwrap_err()
            .contains("expected bool")
    );
    assert_eq!(
        r("{{ add1 .builtin.controlPlane.replicas }} {{ div 7 2 }} {{ addf 0.1 0.2 }}").unwrap(),
        "4 3 0.3"
    );
}

#[test]
fn printf_as_go_prints() {
    let data = json!({"x": 1000000, "h": 0.5, "s": "a\"b", "two": 2});
    for (template, go) in [
        ("{{ .x }}", "1e+06"),
        ("{{ printf \"%d\" .two }}", "%!d(float64=2)"),
        (
            "{{ printf \"%5.2f|%-4d|%04d|%x|%X|%o|%#x|%+d\" .h 7 7 255 255 8 255 3 }}",
            " 0.50|7   |0007|ff|FF|10|0xff|+3",
        ),
        (
            "{{ printf \"%q %v %T %t\" .s .two .two true }}",
            "\"a\\\"b\" 2 float64 true",
        ),
        (
            "{{ printf \"%e %g %.3g %G\" 123456.789 0.000012 3.14159 1e21 }}",
            "1.234568e+05 1.2e-05 3.14 1E+21",
        ),
        ("{{ printf \"%[2]d %[1]d\" 1 2 }}", "2 1"),
        ("{{ printf \"%d\" }}", "%!d(MISSING)"),
        ("{{ printf \"%d\" 1 2 }}", "1%!(EXTRA int=2)"),
        ("{{ printf \"%z\" 1 }}", "%!z(int=1)"),
        ("{{ printf \"%c%U\" 65 65 }}", "AU+0041"),
    ] {
        assert_eq!(render(template, &data).as_deref(), Ok(go), "{template}");
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
fn parse_errors_name_what_is_wrong() {
    assert!(r("{{ if .flag }}a").unwrap_err().contains("unexpected EOF"));
    assert!(r("{{ .x ").unwrap_err().contains("unclosed action"));
    assert!(
        r("{{ $y }}")
            .unwrap_err()
            .contains("undefined variable \"$y\"")
    );
    assert!(
        r("{{ break }}")
            .unwrap_err()
            .contains("{{break}} outside {{range}}")
    );
    assert!(r("{{ end }}").unwrap_err().contains("unexpected {{end}}"));
}

/// Found by fuzzing (`fuzz/fuzz_targets/go_template.rs`): these panicked.
#[test]
fn empty_parenthesized_pipelines_are_errors() {
    let data = json!({"a": "x"});
    for template in ["{{ join() }}", "{{ () }}", "{{ upper (| .a) }}"] {
        assert!(render(template, &data).is_err(), "{template}");
    }
    // Go reads a trailing `|` before `)` as nothing.
    assert_eq!(render("{{ (.a |) }}", &data).unwrap(), "x");
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
            assert!(render(&format!("{{{{ if gt{} }}}}", "(".repeat(5000)), &data).is_err());
            let deep = [
                format!("{{{{ {}.a{} }}}}", "(".repeat(101), ")".repeat(101)),
                "{{ with .net }}".repeat(5000),
                format!(
                    "{{{{ if .a }}}}{}{{{{ end }}}}",
                    "{{ else if .a }}".repeat(200)
                ),
                "{{ define \"r\" }}{{ template \"r\" }}{{ end }}{{ template \"r\" }}".to_string(),
            ];
            for template in &deep {
                let err = render(template, &data).unwrap_err();
                assert!(err.contains("more than"), "{err}");
            }
            for crash in [
                &include_bytes!("../../tests/fuzz-crashes/go_template/stack-overflow-0.txt")[..],
                include_bytes!("../../tests/fuzz-crashes/go_template/stack-overflow-1.txt"),
                include_bytes!("../../tests/fuzz-crashes/go_template/stack-overflow-2.txt"),
            ] {
                let _ = render(&String::from_utf8_lossy(crash), &data);
            }
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

/// Cases the differential against Go found (Go's output, as Go printed it).
#[test]
fn found_by_the_differential() {
    let data = json!({"i": 4, "l": ["x", "y"], "n": 1.5, "s": "0x1f"});
    for (template, go) in [
        (
            "{{ printf \"%v|%T\" (index \"v1\" 0) (index \"v1\" 0) }}",
            "118|uint8",
        ),
        (
            "{{ printf \"%.*f\" (int64 -2) 1.5 }}",
            "%!(BADPREC)1.500000",
        ),
        // `until 3` has capacity 4: sprig's slice reaches it, past the length it holds zeros.
        ("{{ slice (until 3) 0 4 }}", "[0 1 2 0]"),
        (
            "{{ chunk -1 .l }} {{ chunk 2 (list 1 2 3) }}",
            "[] [[1 2] [3]]",
        ),
        ("{{ round 1e3 97 }}", "1000"),
        ("{{ int64 \"1.5\" }} {{ int \".5\" }}", "1 0"),
        ("{{ deepCopy (semver \"v1.2.3\") }}", "0.0.0"),
        (
            "{{ printf \"%x\" 1.5 }} {{ printf \"%#q\" 123456 }}",
            "0x1.8p+00 '\\U0001e240'",
        ),
        ("{{ js nil 1 }}", "\\u003Cno value\\u003E1"),
        ("{{ $b := b64dec \"tru=\" }}ok", "ok"),
    ] {
        assert_eq!(render(template, &data).as_deref(), Ok(go), "{template}");
    }
    assert!(
        render("{{ b64dec \"tru=\" }}", &data)
            .unwrap_err()
            .contains("not UTF-8")
    );
    assert!(render("{{ index . .none }}", &data).is_err());
}

/// goutils' and xstrings' helpers, with the outputs Go printed.
#[test]
fn word_and_case_helpers_as_go() {
    let data = json!({});
    for (template, go) in [
        (
            "{{ snakecase \"getHTTPResponse2Code\" }} {{ kebabcase \"HTTPServer id-42abc\" }} {{ camelcase \"snake_case word\" }}",
            "get_http_response2_code http-server-id-42abc SnakeCaseWord",
        ),
        (
            "{{ swapcase \"Hello wORLD ǆx\" }} {{ initials \"The quick  brown\" }} {{ title \"ǆemal ǳ\" }}",
            "hELLO World ǅX Tqb ǅemal ǲ",
        ),
        (
            "{{ wrap 10 \"The quick brown fox jumps over the lazy dog\" }}",
            "The quick\nbrown fox\njumps over\nthe lazy\ndog",
        ),
        (
            "{{ wrapWith 5 \"|\" \"abcdefghij klm\" }} {{ abbrev 8 \"The quick brown fox\" }} {{ abbrevboth 5 10 \"The quick brown fox jumps\" }}",
            "abcde|fghij|klm The q... ...uick...",
        ),
    ] {
        assert_eq!(render(template, &data).as_deref(), Ok(go), "{template}");
    }
}

/// mergo's merge rules, with the outputs Go printed (dst is changed in place).
#[test]
fn merge_as_go() {
    let data = json!({"m": {"a": "q", "c": {"d": true}}});
    for (template, go) in [
        (
            r#"{{ $d := dict "a" (dict "x" 1 "y" "") "l" (list) "s" "" }}{{ merge $d (dict "a" (dict "y" "Y" "z" 3) "l" (list 9) "s" "S" "n" nil) | toJson }} {{ $d | toJson }}"#,
            r#"{"a":{"x":1,"y":"Y","z":3},"l":[9],"s":"S"} {"a":{"x":1,"y":"Y","z":3},"l":[9],"s":"S"}"#,
        ),
        (
            r#"{{ mergeOverwrite (dict "a" (dict "x" 1) "l" (list 1) "s" "keep") (dict "a" (dict "x" 2) "l" (list 2) "s" "new" "n" nil) | toJson }}"#,
            r#"{"a":{"x":2},"l":[2],"n":null,"s":"new"}"#,
        ),
        (
            r#"{{ merge .missing (dict "k" 1) | toJson }} {{ merge (dict "a" "x") .m | toJson }}"#,
            r#"{"k":1} {"a":"x","c":{"d":true}}"#,
        ),
    ] {
        assert_eq!(render(template, &data).as_deref(), Ok(go), "{template}");
    }
}

/// A map that holds itself (Go's fmt recurses until the program dies): an error, on a worker's
/// 2 MiB stack.
#[test]
fn a_map_that_holds_itself_is_an_error() {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let data = json!({});
            let cyclic = r#"{{ $d := dict "a" 1 }}{{ $_ := set $d "self" $d }}"#;
            let err = render(&format!("{cyclic}{{{{ $d }}}}"), &data).unwrap_err();
            assert!(err.contains("contains itself"), "{err}");
            let err = render(&format!("{cyclic}{{{{ mustToJson $d }}}}"), &data).unwrap_err();
            assert!(err.contains("cycle"), "{err}");
            let ok = render(
                &format!("{cyclic}{{{{ deepEqual $d $d }}}} {{{{ len (deepCopy $d) }}}}"),
                &data,
            );
            assert_eq!(ok.as_deref(), Ok("true 2"));
        })
        .unwrap()
        .join()
        .unwrap();
}

/// Extreme integers wrap as Go's do, never a panic (outputs as Go printed them).
#[test]
fn extreme_integers_wrap_as_go() {
    let data = json!({});
    for (template, go) in [
        (
            r#"{{ abbrevboth (int 1e21) 10 "The quick brown fox jumps" }}"#,
            "...x jumps",
        ),
        (
            r#"{{ trunc (int 1e21) "abc" }}|{{ seq 1 9223372036854775807 }}|{{ abbrev 9223372036854775807 "abc" }}"#,
            "abc||abc",
        ),
        (
            r#"{{ wrap 9223372036854775807 "a b c" }}|{{ wrapWith 9223372036854775807 "|" "a b" }}"#,
            "a b c|a b",
        ),
    ] {
        assert_eq!(render(template, &data).as_deref(), Ok(go), "{template}");
    }
}

/// Bytes that are not UTF-8 keep Go's byte semantics until the output (as Go printed them), and
/// `durationRound` reads Go's durations.
#[test]
fn go_strings_are_bytes() {
    let template = r#"{{ b64dec "gICA" | toJson }} {{ len (b64dec "gICA") }} {{ b64dec "gICA" | b64enc }} {{ printf "%q %x" (b64dec "gICA") (b64dec "gICA") }} {{ durationRound "720h0.5s" }} {{ durationRound "1h30m" }}"#;
    assert_eq!(
        render(template, &json!({})).as_deref(),
        Ok(r#""\ufffd\ufffd\ufffd" 3 gICA "\x80\x80\x80" 808080 1mo 1h"#)
    );
}

#[test]
fn counting_past_a_million_is_an_error_not_an_allocation_without_end() {
    let data = json!({"n": 1e21});
    for template in ["{{ until (int .n) }}", "{{ untilStep 0 (int .n) -1 }}"] {
        let err = render(template, &data).unwrap_err();
        assert!(
            err.contains("more than 1048576 numbers"),
            "{template}: {err}"
        );
    }
    assert_eq!(
        render("{{ len (until 1048576) }}", &data).as_deref(),
        Ok("1048576")
    );
    // Go's seq overflows its bound to the maximum and counts nothing.
    assert_eq!(render("{{ seq (int .n) }}", &data).as_deref(), Ok(""));
}

#[test]
fn dates_as_sprig_makes_them() {
    // Expected outputs as Go 1.26 and sprig 3.3 print them (TZ unset, no /etc/localtime).
    let data = json!({});
    for (template, go) in [
        (
            r#"{{ toDate "2006-01-02" "2017-12-31" }}"#,
            "2017-12-31 00:00:00 +0000 UTC",
        ),
        (
            r#"{{ toDate "2006-01-02" "2017-13-31" }}"#,
            "0001-01-01 00:00:00 +0000 UTC",
        ),
        (
            r#"{{ toDate "2006-01-02 15:04 -0700" "2017-12-31 10:00 +0530" | toJson }}"#,
            "\"2017-12-31T10:00:00+05:30\"",
        ),
        (
            r#"{{ toDate "2006-01-02" "2017-12-31" | mustDateModify "-1h30m" | unixEpoch }}"#,
            "1514673000",
        ),
        (
            r#"{{ printf "%#v|%T" (toDate "Jan 2 2006 MST" "Feb 3 2021 PST") (toDate "" "") }}"#,
            "time.Date(2021, time.February, 3, 0, 0, 0, 0, time.Location(\"PST\"))|time.Time",
        ),
        (
            r#"{{ eq (toDate "-0700" "+0100") (toDate "-0700" "+0100") }} {{ eq (toDate "MST" "PST") (toDate "MST" "PST") }}"#,
            "true false",
        ),
    ] {
        assert_eq!(render(template, &data).as_deref(), Ok(go), "{template}");
    }
    let err = render(r#"{{ mustToDate "2006-01-02" "2017-1-31" }}"#, &data).unwrap_err();
    assert!(
        err.contains(r#"parsing time "2017-1-31" as "2006-01-02": cannot parse "1-31" as "01""#),
        "{err}"
    );
    let err = render(r#"{{ printf "%d" (toDate "2006" "2017") }}"#, &data).unwrap_err();
    assert!(err.contains("memory address"), "{err}");
}

#[test]
fn urls_as_sprig_parses_and_joins_them() {
    // Expected outputs as Go 1.26 (a module saying go 1.26) and sprig 3.3 give them.
    let data = json!({});
    for (template, go) in [
        (
            r#"{{ urlParse "https://u:p%40x@example.com:8443/a%2Fb?x=1#f%20g" | toJson }}"#,
            r#"{"fragment":"f g","host":"example.com:8443","hostname":"example.com","opaque":"","path":"/a/b","query":"x=1","scheme":"https","userinfo":"u:p%40x"}"#,
        ),
        (
            r#"{{ urlJoin (dict "scheme" "https" "host" "hé:443" "path" "a b" "query" "x=1" "fragment" "f g" "userinfo" "u@x:p") }}"#,
            "https://u%40x:p@h%C3%A9:443/a%20b?x=1#f%20g",
        ),
        (
            r#"{{ urlJoin (dict "opaque" "x" "scheme" "mailto" "path" "/ignored") }}"#,
            "mailto:x",
        ),
        (r#"{{ urlJoin (dict "path" "p:q") }}"#, "./p:q"),
    ] {
        assert_eq!(render(template, &data).as_deref(), Ok(go), "{template}");
    }
    let err = render(r#"{{ urlJoin (dict "host" 1) }}"#, &data).unwrap_err();
    assert!(
        err.contains("must be of type string, but int found"),
        "{err}"
    );
    // Two colons in an http host: Go 1.26 refuses (Cluster API 1.14), Go 1.25 reads the last
    // as the port's (1.12, 1.13).
    let two_colons = r#"{{ (urlParse "http://a:1:2/").hostname }}"#;
    let err = render(two_colons, &data).unwrap_err();
    assert!(err.contains(r#"invalid port ":1:2" after host"#), "{err}");
    let older = super::Options::inline_patch(capi_ext::CapiVersion::new(1, 13));
    assert_eq!(
        super::render_with(two_colons, &data, older).as_deref(),
        Ok("a:1")
    );
}
