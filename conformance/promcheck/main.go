// Command promcheck is Prometheus's side of the e2e, from Prometheus's own packages.
//
// `promcheck URL` scrapes a metrics endpoint the way Prometheus does and prints what Prometheus
// reads from it, as JSON: the parser Prometheus picks for the answer's Content-Type
// (model/textparse), the families' types and help, every sample, what client_golang's promlint
// (the linter behind `promtool check metrics`) says of the names, and the answer itself with
// the time of the scrape. It exits 1 when Prometheus could not parse the answer.
//
// `promcheck alerts -rules FILE [-label k=v]... SCRAPE.json...` loads those scrapes into a
// Prometheus TSDB at the times they were made (each series with the labels given, as the
// scrape's target labels), reads the rule file (a Prometheus rule file, or a prometheus-operator
// PrometheusRule object) with Prometheus's rulefmt, and evaluates every alert's expression with
// the PromQL engine at the time of the last scrape. It prints, as JSON, each alert's name and
// the series for which its condition holds (it is pending then, and fires once that has lasted
// its `for`).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
	"google.golang.org/protobuf/proto"
)

// The Accept header of Prometheus's scrapes with its default scrape protocols.
const accept = "application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1"

type family struct {
	Type string `json:"type"`
	Help string `json:"help"`
}

type sample struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
	Value  float64           `json:"value"`
}

type report struct {
	URL         string            `json:"url"`
	ScrapedAt   int64             `json:"scrapedAtMillis"`
	Body        string            `json:"body"`
	ContentType string            `json:"contentType"`
	Families    map[string]family `json:"families"`
	Samples     []sample          `json:"samples"`
	Lint        []string          `json:"lint"`
}

func main() {
	var out any
	var err error
	switch {
	case len(os.Args) >= 2 && os.Args[1] == "alerts":
		out, err = alerts(os.Args[2:])
	case len(os.Args) == 2:
		out, err = check(os.Args[1])
	default:
		fmt.Fprintln(os.Stderr, "usage: promcheck URL | promcheck alerts -rules FILE [-label k=v]... SCRAPE.json...")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "promcheck:", err)
		os.Exit(1)
	}
	text, _ := json.MarshalIndent(out, "", "  ")
	fmt.Println(string(text))
}

func check(url string) (*report, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	scrapedAt := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	r := &report{URL: url, ScrapedAt: scrapedAt.UnixMilli(), Body: string(body), ContentType: resp.Header.Get("Content-Type"), Families: map[string]family{}, Lint: []string{}}
	if err := parse(r); err != nil {
		return nil, err
	}
	problems, err := promlint.NewWithMetricFamilies(families(r)).Lint()
	if err != nil {
		return nil, err
	}
	for _, pr := range problems {
		r.Lint = append(r.Lint, pr.Metric+": "+pr.Text)
	}
	return r, nil
}

// parse reads r.Body as Prometheus's scrape loop does, into r's families and samples.
func parse(r *report) error {
	p, err := textparse.New([]byte(r.Body), r.ContentType, labels.NewSymbolTable(), textparse.ParserOptions{})
	if err != nil {
		return fmt.Errorf("Content-Type %q: %w", r.ContentType, err)
	}
	for {
		entry, err := p.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("Prometheus cannot parse the answer: %w", err)
		}
		switch entry {
		case textparse.EntryType:
			name, typ := p.Type()
			f := r.Families[string(name)]
			f.Type = string(typ)
			r.Families[string(name)] = f
		case textparse.EntryHelp:
			name, help := p.Help()
			f := r.Families[string(name)]
			f.Help = string(help)
			r.Families[string(name)] = f
		case textparse.EntrySeries:
			_, _, value := p.Series()
			var lset labels.Labels
			p.Labels(&lset)
			m := lset.Map()
			name := m[model.MetricNameLabel]
			delete(m, model.MetricNameLabel)
			r.Samples = append(r.Samples, sample{Name: name, Labels: m, Value: value})
		case textparse.EntryHistogram:
			return errors.New("native histograms are not expected here")
		}
	}
	return nil
}

// families are the parsed families as client_golang would expose them in the text format
// (a counter's name ends in _total there), for promlint.
func families(r *report) []*dto.MetricFamily {
	var names []string
	for name := range r.Families {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []*dto.MetricFamily
	for _, name := range names {
		f := r.Families[name]
		mf := &dto.MetricFamily{Name: proto.String(name), Help: proto.String(f.Help)}
		switch f.Type {
		case "counter":
			if !strings.HasSuffix(name, "_total") {
				mf.Name = proto.String(name + "_total")
			}
			mf.Type = dto.MetricType_COUNTER.Enum()
			mf.Metric = []*dto.Metric{{Counter: &dto.Counter{Value: proto.Float64(0)}}}
		case "gauge":
			mf.Type = dto.MetricType_GAUGE.Enum()
			mf.Metric = []*dto.Metric{{Gauge: &dto.Gauge{Value: proto.Float64(0)}}}
		case "histogram":
			mf.Type = dto.MetricType_HISTOGRAM.Enum()
			mf.Metric = []*dto.Metric{{Histogram: &dto.Histogram{SampleCount: proto.Uint64(0), SampleSum: proto.Float64(0)}}}
		default:
			mf.Type = dto.MetricType_UNTYPED.Enum()
			mf.Metric = []*dto.Metric{{Untyped: &dto.Untyped{Value: proto.Float64(0)}}}
		}
		out = append(out, mf)
	}
	return out
}
