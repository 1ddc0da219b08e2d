package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/tsdb"
	"sigs.k8s.io/yaml"
)

type labelFlags map[string]string

func (l labelFlags) String() string { return fmt.Sprint(map[string]string(l)) }
func (l labelFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("-label %q: want name=value", v)
	}
	l[k] = val
	return nil
}

type alert struct {
	Name string `json:"name"`
	For  string `json:"for"`
	// The series for which the condition holds at the time of the last scrape.
	Holds []string `json:"holds"`
}

func alerts(args []string) ([]alert, error) {
	fs := flag.NewFlagSet("alerts", flag.ContinueOnError)
	rulesFile := fs.String("rules", "", "a Prometheus rule file or a PrometheusRule object")
	extra := labelFlags{}
	fs.Var(extra, "label", "a target label added to every scraped series (name=value; repeatable)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *rulesFile == "" || fs.NArg() == 0 {
		return nil, fmt.Errorf("alerts needs -rules and at least one scrape")
	}
	groups, err := readRules(*rulesFile)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "promcheck-tsdb-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	db, err := tsdb.Open(dir, nil, nil, tsdb.DefaultOptions(), nil)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var last int64
	for _, path := range fs.Args() {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var r report
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r.Families = map[string]family{}
		if err := parse(&r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		app := db.Appender(context.Background())
		for _, sm := range r.Samples {
			b := labels.NewBuilder(labels.EmptyLabels())
			for k, v := range sm.Labels {
				b.Set(k, v)
			}
			for k, v := range extra {
				b.Set(k, v)
			}
			b.Set(model.MetricNameLabel, sm.Name)
			if _, err := app.Append(0, b.Labels(), r.ScrapedAt, sm.Value); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", path, sm.Name, err)
			}
		}
		if err := app.Commit(); err != nil {
			return nil, err
		}
		last = max(last, r.ScrapedAt)
	}
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 1_000_000, Timeout: 30 * time.Second, LookbackDelta: 5 * time.Minute})
	var out []alert
	for _, g := range groups.Groups {
		for _, rule := range g.Rules {
			if rule.Alert == "" {
				continue
			}
			q, err := engine.NewInstantQuery(context.Background(), db, nil, rule.Expr, time.UnixMilli(last))
			if err != nil {
				return nil, fmt.Errorf("alert %s: %w", rule.Alert, err)
			}
			res := q.Exec(context.Background())
			if res.Err != nil {
				return nil, fmt.Errorf("alert %s: %w", rule.Alert, res.Err)
			}
			vector, err := res.Vector()
			if err != nil {
				return nil, fmt.Errorf("alert %s: %w", rule.Alert, err)
			}
			a := alert{Name: rule.Alert, For: rule.For.String(), Holds: []string{}}
			for _, s := range vector {
				a.Holds = append(a.Holds, s.Metric.String())
			}
			sort.Strings(a.Holds)
			out = append(out, a)
			q.Close()
		}
	}
	return out, nil
}

// readRules reads a Prometheus rule file, or the spec of a PrometheusRule object, with
// Prometheus's rulefmt (which also parses every expression).
func readRules(path string) (*rulefmt.RuleGroups, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var object struct {
		Kind string          `json:"kind"`
		Spec json.RawMessage `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &object); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if object.Kind == "PrometheusRule" {
		if data, err = yaml.JSONToYAML(object.Spec); err != nil {
			return nil, err
		}
	}
	groups, errs := rulefmt.Parse(data, false, model.UTF8Validation, parser.NewParser(parser.Options{}), nil)
	if len(errs) > 0 {
		var msgs []string
		for _, e := range errs {
			msgs = append(msgs, e.Error())
		}
		return nil, fmt.Errorf("%s: %s", path, strings.Join(msgs, "; "))
	}
	return groups, nil
}
