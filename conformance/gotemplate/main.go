// The template differential: render's Go-template engine against Go's text/template with the
// sprig version Cluster API pins, on the same templates and the same JSON data, executed as CAPI
// executes ClusterClass inline patches (template.New("tpl").Funcs(sprig.HermeticTxtFuncMap()),
// data decoded from JSON into interface{}). Templates are generated per function (every function
// render evaluates, with arguments of every Go type) and in random compositions of the language
// (variables, if/with/range with break and continue, define/template/block, trim markers,
// printf), plus the templates of ClusterClasses given with -classes. Output, and error-or-not,
// must agree everywhere.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"sort"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
)

type answer struct {
	Output *string `json:"output,omitempty"`
	Error  *string `json:"error,omitempty"`
}

type testCase struct {
	Template string         `json:"template"`
	Data     map[string]any `json:"data"`
	origin   string
}

// goRender is CAPI's renderValueTemplate without the YAML step.
func goRender(tpl string, data map[string]any) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	t, err := template.New("tpl").Funcs(sprig.HermeticTxtFuncMap()).Parse(tpl)
	if err != nil {
		return "", err
	}
	// CAPI decodes each variable from JSON: numbers are float64.
	raw, _ := json.Marshal(data)
	var decoded map[string]any
	if err := json.Unmarshal(raw, &decoded); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, decoded); err != nil {
		return "", err
	}
	return buf.String(), nil
}

var builtins = []string{"and", "or", "not", "call", "html", "js", "urlquery", "index", "slice", "len", "print", "printf", "println", "eq", "ne", "lt", "le", "gt", "ge"}

func main() {
	render := flag.String("render", "", "capi-ext-conformance binary (its go-template mode is render's engine)")
	seed := flag.Int64("seed", 1, "seed of the generated cases")
	cases := flag.Int("cases", 50000, "generated cases")
	classes := flag.String("classes", "", "ClusterClass YAML files whose inline patch templates are cases too (comma-separated)")
	failures := flag.String("failures", "", "folder for the cases that differ")
	printCase := flag.Int("print", -1, "print generated case N (template and data) and stop, to look at one")
	flag.Parse()

	supported, unsupported := functions(*render)
	checkCatalog(supported, unsupported)

	g := &gen{r: rand.New(rand.NewSource(*seed)), funcs: supported}
	var all []testCase
	for i := 0; i < *cases; i++ {
		all = append(all, g.next(i))
	}
	if *printCase >= 0 && *printCase < len(all) {
		data, _ := json.Marshal(all[*printCase].Data)
		fmt.Printf("%s\n%s\n", all[*printCase].Template, data)
		return
	}
	for _, file := range strings.Split(*classes, ",") {
		if file != "" {
			all = append(all, classCases(file, g)...)
		}
	}

	cmd := exec.Command(*render, "go-template")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		fatal("start %s: %v", *render, err)
	}
	go func() {
		w := bufio.NewWriter(stdin)
		enc := json.NewEncoder(w)
		for _, c := range all {
			if err := enc.Encode(c); err != nil {
				fatal("write: %v", err)
			}
		}
		w.Flush()
		stdin.Close()
	}()
	scanner := bufio.NewScanner(stdout)
	scanner.Buffer(make([]byte, 64<<20), 64<<20)
	diffs, goErrors, binary, byFunc := 0, 0, 0, map[string]int{}
	for i, c := range all {
		if !scanner.Scan() {
			fatal("render stopped answering at case %d (%s): %v", i, c.origin, scanner.Err())
		}
		var rust answer
		if err := json.Unmarshal(scanner.Bytes(), &rust); err != nil {
			fatal("case %d: unreadable answer: %v", i, err)
		}
		out, err := goRender(c.Template, c.Data)
		byFunc[c.origin]++
		if err != nil {
			goErrors++
		}
		same := (err != nil) == (rust.Error != nil) && (err != nil || rust.Output != nil && *rust.Output == out)
		if err == nil && !utf8.ValidString(out) {
			// Bytes that are not UTF-8 are no YAML value: CAPI's patch fails on them, render
			// refuses them.
			binary++
			same = rust.Error != nil
		}
		if same {
			continue
		}
		diffs++
		if diffs <= 20 {
			goSide := fmt.Sprintf("output %q", out)
			if err != nil {
				goSide = fmt.Sprintf("error %v", err)
			}
			rustSide := ""
			if rust.Error != nil {
				rustSide = "error " + *rust.Error
			} else if rust.Output != nil {
				rustSide = fmt.Sprintf("output %q", *rust.Output)
			}
			data, _ := json.Marshal(c.Data)
			fmt.Fprintf(os.Stderr, "DIFF case %d (%s)\n  template: %s\n  data: %s\n  go:     %s\n  render: %s\n", i, c.origin, c.Template, data, goSide, rustSide)
		}
		if *failures != "" {
			os.MkdirAll(*failures, 0o755)
			body, _ := json.MarshalIndent(map[string]any{"template": c.Template, "data": c.Data, "go": out, "goError": fmt.Sprint(err), "render": rust}, "", "  ")
			os.WriteFile(fmt.Sprintf("%s/case-%d.json", *failures, i), body, 0o644)
		}
	}
	cmd.Wait()
	fmt.Printf("seed %d: %d cases (%d generated, %d from ClusterClasses), %d that Go refuses, %d whose output is not UTF-8, %d differences; %d functions exercised, %d not evaluated by render\n",
		*seed, len(all), *cases, len(all)-*cases, goErrors, binary, diffs, len(supported), len(unsupported))
	if diffs > 0 {
		os.Exit(1)
	}
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(2)
}

func functions(render string) ([]string, []string) {
	out, err := exec.Command(render, "go-template-functions").Output()
	if err != nil {
		fatal("%s go-template-functions: %v", render, err)
	}
	var lists struct{ Supported, Unsupported []string }
	if err := json.Unmarshal(out, &lists); err != nil {
		fatal("function lists: %v", err)
	}
	return lists.Supported, lists.Unsupported
}

// checkCatalog: every function of the hermetic map and every builtin is either evaluated or
// refused with a reason by render, and render names none that Go lacks.
func checkCatalog(supported, unsupported []string) {
	known := map[string]bool{}
	for _, n := range append(append([]string{}, supported...), unsupported...) {
		known[n] = true
	}
	want := map[string]bool{}
	for n := range sprig.HermeticTxtFuncMap() {
		want[n] = true
	}
	for _, n := range builtins {
		want[n] = true
	}
	var missing, extra []string
	for n := range want {
		if !known[n] {
			missing = append(missing, n)
		}
	}
	for n := range known {
		if !want[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing)+len(extra) > 0 {
		fatal("render's catalog differs from Go's: missing %v, not in Go %v", missing, extra)
	}
	fmt.Printf("catalog: %d functions of text/template and sprig's hermetic map: %d evaluated by render, %d refused with a reason\n", len(want), len(supported), len(unsupported))
}

// classCases: each inline patch template of a ClusterClass, executed on generated data shaped as
// CAPI's builtins and the class's variables.
func classCases(file string, g *gen) []testCase {
	body, err := os.ReadFile(file)
	if err != nil {
		fatal("%v", err)
	}
	var out []testCase
	for _, doc := range strings.Split(string(body), "\n---") {
		var obj map[string]any
		if yaml.Unmarshal([]byte(doc), &obj) != nil || obj["kind"] != "ClusterClass" {
			continue
		}
		var templates []string
		collect(obj, &templates)
		for _, tpl := range templates {
			for k := 0; k < 20; k++ {
				out = append(out, testCase{Template: tpl, Data: g.classData(), origin: "class " + file})
			}
		}
	}
	return out
}

func collect(v any, into *[]string) {
	switch v := v.(type) {
	case map[string]any:
		// In key order: Go's map order is random, and the data drawn for each template must
		// be the same at every run of a seed.
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			x := v[k]
			if s, ok := x.(string); ok && (k == "template" || k == "enabledIf") {
				*into = append(*into, s)
			}
			collect(x, into)
		}
	case []any:
		for _, x := range v {
			collect(x, into)
		}
	}
}
