package main

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"fmt"
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/Masterminds/sprig/v3"
)

type gen struct {
	r     *rand.Rand
	funcs []string
}

func (g *gen) pick(xs []string) string { return xs[g.r.Intn(len(xs))] }

var strs = []string{"", "a", "abc", "Hello World", "héllo wörld", "v1.2.3", "1.5", "42", "0x1f", "010", " padded ", "a,b,c", "a/b/c.txt", "<tag>&\"q\"", "line1\nline2", "MixedCase_word", "true", "aGVsbG8=", "a-b_c d", "x.y.z", "日本", "12.000", "-7", "HTTPServer", "getHTTPResponse2Code", "snake_case word", "ÉtéÀ ǅ", "  leading  spaces", "The quick brown fox jumps over the lazy dog", "id-42abc", "v1.2-rc.1+meta"}
var nums = []float64{0, 1, -1, 2.5, 3, 1e6, 0.1, 100, -0.5, 1e21, 1e-7, 7, 123456.789, 0.3}
var versions = []string{"v1.30.0", "1.29.3", "v1.31.0-rc.1", "v1.32.1+build.5", "1.2", "v2", "bad", "v1.30.0-alpha.0", "1.31.2", "v1.28.15"}

func (g *gen) data() map[string]any {
	v := g.pick(versions)
	return map[string]any{
		"s": g.pick(strs), "t": g.pick(strs), "e": "", "n": nums[g.r.Intn(len(nums))],
		"i": float64(g.r.Intn(7) - 2), "b": g.r.Intn(2) == 0,
		"l": []any{g.pick(strs), g.pick(strs)}, "nums": []any{1.0, 2.5, -3.0}, "empty": []any{},
		"m":    map[string]any{"a": g.pick(strs), "b": nums[g.r.Intn(len(nums))], "c": map[string]any{"d": true}},
		"none": nil, "v": v, "mixed": []any{"x", 1.0, nil, true, map[string]any{"k": "v"}},
		"builtin": map[string]any{
			"cluster":      map[string]any{"name": "c1", "namespace": "ns", "topology": map[string]any{"version": v, "class": "quick-start"}},
			"controlPlane": map[string]any{"version": v, "replicas": 3.0, "name": "c1-cp"},
		},
	}
}

// classData: CAPI's builtins plus values for the variables real ClusterClasses read.
func (g *gen) classData() map[string]any {
	d := g.data()
	v := g.pick(versions)
	d["builtin"] = map[string]any{
		"cluster":           map[string]any{"name": "c1", "namespace": "ns", "topology": map[string]any{"version": v, "class": "quick-start"}, "network": map[string]any{"ipFamily": "IPv4"}},
		"controlPlane":      map[string]any{"version": v, "replicas": 3.0, "name": "c1-cp", "machineTemplate": map[string]any{"infrastructureRef": map[string]any{"name": "t"}}},
		"machineDeployment": map[string]any{"version": v, "class": "default-worker", "name": "md-0", "topologyName": "md-0", "replicas": 2.0},
		"machinePool":       map[string]any{"version": v, "class": "default-worker", "name": "mp-0", "topologyName": "mp-0", "replicas": 1.0},
	}
	d["imageRepository"] = g.pick([]string{"", "registry.example.com", "kindest"})
	d["podSecurityStandard"] = map[string]any{"enabled": g.r.Intn(2) == 0, "enforce": g.pick([]string{"baseline", "restricted"}), "audit": "restricted", "warn": "restricted"}
	d["kubeadmControlPlaneMaxSurge"] = g.pick([]string{"", "1", "0"})
	d["etcdImageTag"] = g.pick([]string{"", "3.5.3-0"})
	d["coreDNSImageTag"] = g.pick([]string{"", "v1.8.5"})
	d["lbImageRepository"] = "kindest"
	d["kubeControlPlaneLogLevel"] = g.pick([]string{"", "2"})
	d["kubeletLogLevel"] = g.pick([]string{"", "4"})
	d["preLoadImages"] = []any{"a", "b"}
	d["workerKubeletExtraArgs"] = map[string]any{"k": "v"}
	return d
}

var literals = []string{`"abc"`, `""`, `"a,b"`, `","`, `"v1.30.0"`, `">= 1.30"`, `"~1.29"`, `"^1.2"`, `"1.x"`, `"< 2, >= 1.2 || 3.x"`, `"[a-z]+"`, `"(\\w+)-(\\d+)"`, `"${1}x"`, `"$1"`, `"a*"`, `"\\s+"`, `0`, `1`, `2`, `-1`, `3`, `10`, `2.5`, `-0.5`, `1e3`, `0x10`, `'a'`, `true`, `false`, `nil`, "`raw\\n`", `"%d-%s"`, `"x"`, `"k"`, `"a"`, `"_0"`, `"1.5"`, `"aGVsbG8="`, `"/"`, `"."`, `"v"`, `"1h30m"`, `"-2.5h"`, `"1.5µs"`, `"3d"`, `"300ms"`, `"0"`, `"720h0.5s"`, `"9223372036854775807ns"`, `(int64 "90000000000")`}
var fields = []string{".s", ".t", ".e", ".n", ".i", ".b", ".l", ".nums", ".empty", ".m", ".m.a", ".m.c", ".none", ".missing", ".v", ".mixed", ".builtin.cluster.name", ".builtin.controlPlane.replicas", ".", "$", ".m.missing.x"}
var subs = []string{`(list 1 "a" 2.5)`, `(list)`, `(dict "k" "v" "n" 1)`, `(int .n)`, `(int64 .i)`, `(add 1 2)`, `(splitList "," "a,b,c")`, `(semver "v1.2.3")`, `(toStrings .nums)`, `(until 3)`, `(split "," "x,y")`, `(atoi "12")`, `(float64 "1.5")`, `(list .s .n)`, `(semver .v)`, `(dict)`, `(index .l 0)`, `(len .s)`, `(dict "k" "" "c" (dict "d" 1 "e" "x"))`, `(dict "l" (list 1) "m" (dict) "k" nil)`, `(dict "a" (dict "b" 1 "c" "") "n" 0)`}

func (g *gen) arg() string {
	switch g.r.Intn(10) {
	case 0, 1, 2, 3:
		return g.pick(literals)
	case 4, 5, 6, 7:
		return g.pick(fields)
	default:
		return g.pick(subs)
	}
}

// Arguments by the Go type of a parameter.
var argsOfType = map[reflect.Kind][]string{
	reflect.String:  {`"abc"`, `""`, `","`, `"v1.30.0"`, `">= 1.30"`, `"~1.29"`, `"^1.2"`, `"[a-z]+"`, `"(\\w+)-(\\d+)"`, `"${1}x"`, `"a*"`, `"k"`, `"1.5"`, `"aGVsbG8="`, `"/"`, ".s", ".t", ".e", ".v", ".m.a", ".builtin.cluster.name", "(index .l 0)", "(toString .n)", `"Hello World"`, `"a/b/c.txt"`},
	reflect.Int:     {"0", "1", "2", "3", "-1", "5", "10", "(int .i)", "(len .s)", "(atoi \"4\")", "(len .l)"},
	reflect.Float64: {"2.5", "0.5", "-1.5", "1e3", ".n", ".i", "(float64 \"1.5\")"},
	reflect.Bool:    {"true", "false", ".b", "(empty .e)", "(eq .s \"a\")"},
	// derivePassword's counter: only an unsigned constant converts (cut to 32 bits).
	reflect.Uint32: {"0", "1", "2", "4294967297", "1e3", "'a'", "-1", "1.5", ".i"},
	// time.Time (sprig's unixEpoch, mustDateModify).
	reflect.Struct: {`(toDate "2006-01-02" "2017-12-31")`, `(toDate "2006-01-02T15:04:05Z07:00" "2017-12-31T23:59:58.5+01:30")`, `(mustToDate "Jan _2 15:04:05 MST 2006" "Feb  3 04:05:06 PST 2021")`, `(toDate "x" "y")`, `(toDate "-0700" "+0100")`, `(mustDateModify "-1h30m" (toDate "2006" "2000"))`, `(toDate "2006-002 15 Z07" "0001-001 00 Z")`},
	reflect.Map:    {".m", ".m.c", `(dict "k" "v" "n" 1)`, `(dict)`, `(dict "k" "" "c" (dict "d" 1 "e" "x"))`, `(dict "a" (dict "b" 1 "c" "") "n" 0)`},
}

// typedArg: an argument of the type of parameter i of a sprig function ("" for builtins and
// interface{} parameters).
func (g *gen) typedArg(name string, i int) string {
	fn, ok := sprig.HermeticTxtFuncMap()[name]
	if !ok {
		return ""
	}
	t := reflect.TypeOf(fn)
	var p reflect.Type
	switch {
	case i < t.NumIn()-1 || (!t.IsVariadic() && i < t.NumIn()):
		p = t.In(i)
	case t.IsVariadic():
		p = t.In(t.NumIn() - 1).Elem()
	default:
		return ""
	}
	options := argsOfType[p.Kind()]
	if len(options) == 0 {
		return ""
	}
	return g.pick(options)
}

var mutators = map[string]bool{"set": true, "merge": true, "mustMerge": true, "mergeOverwrite": true, "mustMergeOverwrite": true}

var builtinArity = map[string][2]int{"and": {1, -1}, "or": {1, -1}, "not": {1, 1}, "call": {1, -1}, "html": {0, -1}, "js": {0, -1}, "urlquery": {0, -1}, "index": {1, -1}, "len": {1, 1}, "print": {0, -1}, "printf": {1, -1}, "println": {0, -1}, "eq": {1, -1}, "ne": {2, 2}, "lt": {2, 2}, "le": {2, 2}, "gt": {2, 2}, "ge": {2, 2}}

// arity: how many arguments Go's signature wants (at least, at most; -1: variadic).
func arity(name string) (int, int) {
	if a, ok := builtinArity[name]; ok {
		return a[0], a[1]
	}
	t := reflect.TypeOf(sprig.HermeticTxtFuncMap()[name])
	if t.IsVariadic() {
		return t.NumIn() - 1, -1
	}
	return t.NumIn(), t.NumIn()
}

func (g *gen) call(name string) string {
	lo, hi := arity(name)
	n := lo
	if hi < 0 {
		n = lo + g.r.Intn(4)
	}
	if g.r.Intn(8) == 0 {
		n += g.r.Intn(3) - 1
	}
	if n < 0 {
		n = 0
	}
	args := make([]string, n)
	for i := range args {
		args[i] = g.arg()
		// Mostly an argument of the type Go's signature wants, so that most cases get past
		// the argument checks and exercise the function itself.
		if typed := g.typedArg(name, i); typed != "" && g.r.Intn(4) != 0 {
			args[i] = typed
		}
		// A map that receives itself (`set . "k" .`, `merge .m .`) makes Go's fmt and the
		// oracle recurse until they die: what functions that change a map store comes from
		// literals and new values only.
		for i > 0 && mutators[name] && !strings.HasPrefix(args[i], "(") && strings.HasPrefix(args[i], ".") || i > 0 && mutators[name] && args[i] == "$" {
			args[i] = g.pick(append(append([]string{}, literals...), subs...))
		}
	}
	if name == "until" || name == "untilStep" || name == "seq" {
		// .n may be 1e21: int(.n) is then the minimum int64, and counting down to it makes
		// Go allocate until it is killed (render refuses past a million numbers).
		for i := range args {
			if strings.Contains(args[i], ".n") {
				args[i] = "(int .i)"
			}
		}
	}
	if name == "printf" && n > 0 && g.r.Intn(2) == 0 {
		args[0] = g.format()
	}
	if (name == "toDate" || name == "mustToDate") && n == 2 && g.r.Intn(4) != 0 {
		args[0], args[1] = g.layoutAndValue()
	}
	if name == "urlParse" && n > 0 && g.r.Intn(4) != 0 {
		args[0] = strconv.Quote(g.url())
	}
	if name == "urlJoin" && n > 0 && g.r.Intn(4) != 0 {
		args[0] = g.urlDict()
	}
	if name == "decryptAES" && n == 2 && g.r.Intn(4) != 0 {
		args[0], args[1] = g.aesPair()
	}
	if name == "derivePassword" && n == 5 && g.r.Intn(2) != 0 {
		args[1] = strconv.Quote(g.pick([]string{"long", "maximum", "medium", "short", "basic", "pin", "nope", "Long"}))
	}
	if (name == "mustDateModify" || name == "must_date_modify") && n > 0 && g.r.Intn(4) != 0 {
		args[0] = g.pick(durations)
	}
	expr := strings.TrimSpace(name + " " + strings.Join(args, " "))
	if name == "keys" || name == "values" {
		// Go's map order is random: only the sorted result is comparable.
		expr = "sortAlpha (" + expr + ")"
	}
	return expr
}

func (g *gen) format() string {
	verbs := []string{"%v", "%d", "%s", "%q", "%5.2f", "%-6s|", "%x", "%X", "%o", "%O", "%b", "%e", "%E", "%g", "%G", "%t", "%c", "%U", "%#U", "%+d", "%08.3f", "%[1]v", "%[2]d", "%*d", "%.*f", "%%", "%T", "%#v", "%+v", "%#x", "% x", "%10v", "%-10q", "%z", "%!", "%.0f", "%.3e", "%6.2g", "%#q", "%+q", "%.2s", "%05d", "%x", "% d", "%#o", "%#g", "%.1f", "%[3]*[1]d", "%[0]d", "%-08d"}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < 1+g.r.Intn(3); i++ {
		if g.r.Intn(3) == 0 {
			b.WriteString(g.pick([]string{"a", "-", " ", "x=", "|"}))
		}
		b.WriteString(g.pick(verbs))
	}
	if g.r.Intn(10) == 0 {
		b.WriteString("%")
	}
	b.WriteByte('"')
	return b.String()
}

func (g *gen) function() string {
	if g.r.Intn(4) == 0 {
		return g.pick([]string{"printf", "print", "index", "slice", "eq", "lt", "len", "and", "or", "not", "default", "semverCompare", "semver", "regexReplaceAll", "toJson", "dict", "list", "ternary", "indent", "nindent", "quote", "join"})
	}
	return g.pick(g.funcs)
}

// action: one expression in one of the forms a template uses it.
func (g *gen) action() string {
	f := g.function()
	c := g.call(f)
	switch g.r.Intn(8) {
	case 0:
		return "{{ " + c + " | toJson }}"
	case 1:
		return "{{ printf \"%v|%T\" (" + c + ") (" + c + ") }}"
	case 2:
		piped := g.arg()
		if mutators[f] {
			// The piped value is stored too: never a map of the data (see call).
			piped = g.pick(subs)
		}
		return "{{ " + piped + " | " + c + " }}"
	case 3:
		return "{{ if " + c + " }}y{{ else }}n{{ end }}"
	default:
		return "{{ " + c + " }}"
	}
}

func (g *gen) text() string {
	return g.pick([]string{"", "x", " ", "\n", "  - ", "a\n  b", ": "})
}

func (g *gen) open() string {
	if g.r.Intn(5) == 0 {
		return "{{- "
	}
	return "{{ "
}

func (g *gen) close() string {
	if g.r.Intn(5) == 0 {
		return " -}}"
	}
	return " }}"
}

// block: a random composition of the language, depth-limited.
func (g *gen) block(depth int, vars []string, inRange bool) string {
	var b strings.Builder
	for i := 0; i < 1+g.r.Intn(3); i++ {
		b.WriteString(g.text())
		k := g.r.Intn(12)
		if depth > 2 {
			k = g.r.Intn(4)
		}
		switch k {
		case 0, 1:
			b.WriteString(g.action())
		case 2:
			if len(vars) > 0 {
				b.WriteString(g.open() + g.pick(vars) + g.close())
			} else {
				b.WriteString(g.open() + g.pick(fields) + g.close())
			}
		case 3:
			b.WriteString("{{/* note */}}")
		case 4:
			name := fmt.Sprintf("$v%d", depth*10+i)
			b.WriteString(g.open() + name + " := " + g.call(g.function()) + g.close())
			vars = append(vars, name)
		case 5:
			b.WriteString(g.open() + "if " + g.cond() + g.close() + g.block(depth+1, vars, inRange))
			if g.r.Intn(2) == 0 {
				b.WriteString("{{ else if " + g.cond() + " }}" + g.block(depth+1, vars, inRange))
			}
			if g.r.Intn(2) == 0 {
				b.WriteString("{{ else }}" + g.block(depth+1, vars, inRange))
			}
			b.WriteString("{{ end }}")
		case 6, 7:
			over := g.pick([]string{".l", ".nums", ".m", ".mixed", ".empty", "(until 3)", "3", ".i", ".none", ".missing", "(list 1 2)", ".s", "(dict \"a\" 1 \"b\" 2)"})
			iv, ev := fmt.Sprintf("$i%d", depth), fmt.Sprintf("$e%d", depth)
			head := "range " + over
			inner := vars
			switch g.r.Intn(3) {
			case 0:
				head = "range " + iv + ", " + ev + " := " + over
				inner = append(append([]string{}, vars...), iv, ev)
			case 1:
				head = "range " + ev + " := " + over
				inner = append(append([]string{}, vars...), ev)
			}
			body := g.block(depth+1, inner, true)
			if g.r.Intn(3) == 0 {
				body = "{{ if " + g.cond() + " }}{{ " + g.pick([]string{"break", "continue"}) + " }}{{ end }}" + body
			}
			b.WriteString(g.open() + head + g.close() + body)
			if g.r.Intn(3) == 0 {
				b.WriteString("{{ else }}" + g.block(depth+1, vars, inRange))
			}
			b.WriteString("{{ end }}")
		case 8:
			b.WriteString(g.open() + "with " + g.pick(fields) + g.close() + g.block(depth+1, vars, inRange))
			if g.r.Intn(2) == 0 {
				b.WriteString("{{ else with " + g.pick(fields) + " }}" + g.block(depth+1, vars, inRange))
			}
			b.WriteString("{{ end }}")
		case 9:
			b.WriteString("{{ template \"t\" " + g.pick(fields) + " }}")
		case 10:
			if len(vars) > 0 {
				b.WriteString(g.open() + g.pick(vars) + " = " + g.call(g.function()) + g.close())
			}
		case 11:
			if inRange {
				b.WriteString("{{ " + g.pick([]string{"break", "continue"}) + " }}")
			}
		}
	}
	return b.String()
}

func (g *gen) cond() string {
	return g.pick([]string{".b", ".s", "not .b", "eq .s \"a\"", "gt (len .l) 1", ".none", ".missing", "and .b .s", "or .e .n", "semverCompare \">= 1.30\" .v", "lt .n 1.0", "eq .i 0.0", "empty .m", "hasKey .m \"a\""})
}

func (g *gen) next(i int) testCase {
	var tpl, origin string
	switch {
	case i%18 == 4:
		tpl, origin = g.timeCase(), "dates"
	case i%18 == 13:
		tpl, origin = g.urlCase(), "urls"
	case i%3 != 2:
		f := g.funcs[(i/3)%len(g.funcs)]
		if g.r.Intn(2) == 0 {
			f = g.pick(g.funcs)
		}
		tpl = "{{ " + g.call(f) + " }}"
		if g.r.Intn(3) == 0 {
			tpl = "{{ printf \"%v|%T\" (" + g.call(f) + ") (" + g.call(f) + ") }}"
		}
		origin = "function " + f
	default:
		tpl = g.block(0, nil, false)
		if g.r.Intn(4) == 0 {
			tpl = "{{ define \"t\" }}[{{ . }}]{{ end }}" + tpl
		} else if strings.Contains(tpl, "template \"t\"") {
			tpl = "{{ block \"t\" . }}<{{ .s }}>{{ end }}" + tpl
		}
		origin = "composition"
	}
	return testCase{Template: tpl, Data: g.data(), origin: origin}
}

// Go's layouts, its constants and others of every element (year days, 12-hour clocks, fractions
// of both kinds, every zone form).
var layouts = []string{time.Layout, time.ANSIC, time.UnixDate, time.RubyDate, time.RFC822, time.RFC822Z, time.RFC850, time.RFC1123, time.RFC1123Z, time.RFC3339, time.RFC3339Nano, time.Kitchen, time.Stamp, time.StampMilli, time.StampMicro, time.StampNano, time.DateTime, time.DateOnly, time.TimeOnly,
	"2006-002", "2006 __2 15:04", "06-1-2 3:4:5.999 pm -07", "January 2, 2006 at 3:04:05,000 PM Z07:00:00", "Monday 02/01/2006 15h04 -070000", "2006-01-02T15:04:05.00Z0700", "_2 Jan 2006 Z070000", "15:04:05 -07:00:00 MST", "2006-01-02 15:04 GMT", "Mon Jan 2 2006 15:04:05.9"}

// Zones the values are written in: UTC, whole and half hours, seconds, the two extremes.
var zones = []*time.Location{time.UTC, time.FixedZone("", 3600), time.FixedZone("", -5*3600), time.FixedZone("", 5*3600+1800), time.FixedZone("PST", -8*3600), time.FixedZone("CEST", 2*3600), time.FixedZone("", -(3*3600 + 25*60 + 30)), time.FixedZone("", 14*3600), time.FixedZone("GMT+3", 3*3600)}

var durations = []string{"1h30m", "-2.5h", "1.5µs", "3d", "300ms", "0", "720h0.5s", "9223372036854775807ns", "-876000h", "87600h", "", "1h1h", ".5s", "-0"}

// layoutAndValue: a layout and a time written with it (so that most parse), sometimes spoiled.
func (g *gen) layoutAndValue() (string, string) {
	layout := g.pick(layouts)
	at := time.Date(g.r.Intn(10000), time.Month(1+g.r.Intn(12)), 1+g.r.Intn(31), g.r.Intn(24), g.r.Intn(60), g.r.Intn(60), g.r.Intn(1e9), zones[g.r.Intn(len(zones))])
	if g.r.Intn(4) == 0 {
		at = at.Truncate(time.Second)
	}
	value := at.Format(layout)
	switch g.r.Intn(8) {
	case 0:
		// One byte changed, dropped or added.
		i := g.r.Intn(len(value) + 1)
		c := g.pick([]string{"0", "9", " ", ".", ":", "x", "Z", "+", "-", "é", "61", "24"})
		switch g.r.Intn(3) {
		case 0:
			if i < len(value) {
				value = value[:i] + c + value[i+1:]
			}
		case 1:
			if i < len(value) {
				value = value[:i] + value[i+1:]
			}
		default:
			value = value[:i] + c + value[i:]
		}
	case 1:
		// Another layout's value.
		value = at.Format(g.pick(layouts))
	case 2:
		value = strings.ToLower(value)
	}
	return strconv.Quote(layout), strconv.Quote(value)
}

// timeCase: a time parsed from a layout and a value, and what a template does with it: print it
// (String, GoString, quoted, hex), encode it, take its Unix time, move it, compare two.
func (g *gen) timeCase() string {
	fn := g.pick([]string{"toDate", "toDate", "mustToDate"})
	l, v := g.layoutAndValue()
	parsed := "(" + fn + " " + l + " " + v + ")"
	switch g.r.Intn(9) {
	case 0:
		return "{{ " + parsed + " | toJson }}"
	case 1:
		return "{{ printf " + g.pick([]string{`"%v|%T"`, `"%#v"`, `"%q"`, `"%x"`, `"%s|%10.4v"`, `"%-40v|"`}) + " " + parsed + " " + parsed + " }}"
	case 2:
		return "{{ unixEpoch " + parsed + " }}"
	case 3:
		return "{{ mustDateModify " + g.pick(durations) + " " + parsed + " }}"
	case 4:
		// Go's == on the results: the same location pointer or not.
		l2, v2 := l, v
		if g.r.Intn(2) == 0 {
			l2, v2 = g.layoutAndValue()
		}
		return "{{ eq " + parsed + " (" + fn + " " + l2 + " " + v2 + ") }}"
	case 6:
		// Any other function given the time: fmt's Stringer, cast, copystructure, reflect.
		// Not printf (its verbs other than %v %s %q %x %X print the struct's fields, a pointer
		// among them: render refuses) nor durationRound (time.Since: render refuses).
		f := g.pick(g.funcs)
		for f == "printf" || f == "durationRound" {
			f = g.pick(g.funcs)
		}
		lo, hi := arity(f)
		n := lo
		if hi < 0 {
			n = lo + g.r.Intn(3)
		}
		if n == 0 {
			n = 1
		}
		args := make([]string, n)
		for i := range args {
			args[i] = g.arg()
			if typed := g.typedArg(f, i); typed != "" && g.r.Intn(2) == 0 {
				args[i] = typed
			}
		}
		args[g.r.Intn(n)] = parsed
		return "{{ " + f + " " + strings.Join(args, " ") + " }}"
	case 5:
		return "{{ $t := " + parsed + " }}{{ $t }} {{ list $t $t | toJson }} {{ deepEqual $t " + parsed + " }}"
	default:
		return "{{ " + parsed + " }}"
	}
}

// URLs as configurations write them, and the edge cases of Go's net/url: IPv6 literals and
// zones, ports, userinfo, escapes (valid, invalid, in hosts), opaque and relative forms,
// control and non-ASCII bytes.
var urls = []string{"https://user:p%40ss@example.com:8443/a%2Fb/c?x=1&y=2#frag%20x", "http://[fe80::1%25en0]:80/", "http://[::1]:8080", "http://[::ffff:1.2.3.4]/", "http://[1.2.3.4]/",
	"http://[fe80::1%en0]/", "http://[::1", "http://[1::2::3]/", "http://[12345::]/", "http://x[::1]/", "http://[::1]x/", "http://[::1%25]/", "http://[1:2:3:4:5:6:7:8:9]/", "http://[::1.2.3]/",
	"mailto:a@b.c", "urn:isbn:0451450523", "file:///etc/hosts", "//host/path", "///triple", "/abs/path?q", "rel/path#f", "a:b/c", "1http:x", ":nope", "*", "", "?", "http://h?", "http://h/?a?b",
	"http://a:1:2/", "postgres://a:1,b:2/db", "http://h:port/", "http://h:/", "http://user@h", "http://us er@h", "http://u:p:q@h", "http://u@v@h", "http://h/%zz", "http://h/%2", "http://%41/",
	"http://h%c3%a9/", "http://hé/", "http://h/é?é#é", "http://h/a b", "HTTP://H/", "s3://bucket/key", "ftp://h/a;b,c", "http://h/#%20", "http://h/#a%2fb", "http://h/path%2Fx", "http://h\t/",
	"registry.example.com:5000/img:tag", "oci://ghcr.io/org/chart", "tcp://10.0.0.1:6443", "https://h/a/../b/./c", "http://h/#", "http://h/#!(x)*'", "http://[::1]:80:90/", "unix:///var/run/x.sock"}

var (
	urlSchemes  = []string{"", "http://", "https://", "HTTPS://", "s3://", "git+ssh://", "mailto:", "x:", "//"}
	urlUsers    = []string{"", "", "u@", "u:p@", "u%40x:p%3A@", "u:@", "@", "a b@", "é@", "u:p@q@"}
	urlHosts    = []string{"example.com", "h", "10.0.0.1", "[::1]", "[fe80::1%25eth0]", "h%41", "hé", "", "a_b", "h!$&'()*+,;=", "[::1"}
	urlPorts    = []string{"", "", ":443", ":", ":0", ":65536", ":x", ":1:2"}
	urlPaths    = []string{"", "/", "/a/b", "/a%2Fb", "/a b", "/é", "/%zz", "/a?", "/*", "/:x", "/a;b=c", "/%41%42"}
	urlQueries  = []string{"", "?", "?a=1&b=2", "?a b", "?%zz", "?é"}
	urlFragment = []string{"", "#", "#f", "#a b", "#%2F", "#é", "#%zz", "#!x"}
)

func (g *gen) url() string {
	if g.r.Intn(3) == 0 {
		return g.pick(urls)
	}
	return g.pick(urlSchemes) + g.pick(urlUsers) + g.pick(urlHosts) + g.pick(urlPorts) + g.pick(urlPaths) + g.pick(urlQueries) + g.pick(urlFragment)
}

// urlDict: what urlJoin reads, some keys left out, sometimes a value that is not a string.
func (g *gen) urlDict() string {
	parts := map[string][]string{
		"scheme": {"https", "http", "", "s3", "HTTP"}, "host": {"example.com", "h:443", "[::1]:80", "hé", "a b", ""}, "path": {"/a/b", "a/b", "", "/a b", "p:q", "/é"},
		"query": {"a=1", "", "a b"}, "fragment": {"f", "", "a b", "é"}, "opaque": {"", "", "opaque:data", "x"}, "userinfo": {"", "u", "u:p", "u@x:p", "a b", "%zz", "u:p#x"},
	}
	keys := []string{"scheme", "host", "path", "query", "fragment", "opaque", "userinfo"}
	var b strings.Builder
	b.WriteString("(dict")
	for _, k := range keys {
		if g.r.Intn(4) == 0 {
			continue
		}
		v := strconv.Quote(g.pick(parts[k]))
		if g.r.Intn(30) == 0 {
			v = g.pick([]string{"1", "nil", "(list)", "true"})
		}
		b.WriteString(" " + strconv.Quote(k) + " " + v)
	}
	b.WriteString(")")
	return b.String()
}

// aesPair: a password and what sprig's encryptAES makes of a text with it (the IV drawn here),
// or that ciphertext broken: cut, misaligned, its padding byte wrong, the password changed.
func (g *gen) aesPair() (string, string) {
	password := g.pick([]string{"secretkey", "", "a-password-longer-than-thirty-two-bytes!", "k"})
	plain := []byte(g.pick(strs))
	pad := aes.BlockSize - len(plain)%aes.BlockSize
	plain = append(plain, bytes.Repeat([]byte{byte(pad)}, pad)...)
	key := make([]byte, 32)
	copy(key, password)
	block, _ := aes.NewCipher(key)
	crypt := make([]byte, aes.BlockSize+len(plain))
	g.r.Read(crypt[:aes.BlockSize])
	cipher.NewCBCEncrypter(block, crypt[:aes.BlockSize]).CryptBlocks(crypt[aes.BlockSize:], plain)
	switch g.r.Intn(8) {
	case 0:
		crypt = crypt[:g.r.Intn(len(crypt))]
	case 1:
		crypt = append(crypt, 0)
	case 2:
		crypt[len(crypt)-1] ^= byte(1 + g.r.Intn(255))
	case 3:
		password += "x"
	}
	text := base64.StdEncoding.EncodeToString(crypt)
	if g.r.Intn(20) == 0 && text != "" {
		text = text[1:]
	}
	return strconv.Quote(password), strconv.Quote(text)
}

// urlCase: a URL parsed, read, joined again, or a dict of parts joined.
func (g *gen) urlCase() string {
	u := strconv.Quote(g.url())
	switch g.r.Intn(5) {
	case 0:
		return "{{ urlParse " + u + " | toJson }}"
	case 1:
		return "{{ with urlParse " + u + " }}{{ .scheme }}|{{ .host }}|{{ .hostname }}|{{ .path }}|{{ .userinfo }}{{ end }}"
	case 2:
		return "{{ urlJoin (urlParse " + u + ") }}"
	default:
		return "{{ urlJoin " + g.urlDict() + " }}"
	}
}
