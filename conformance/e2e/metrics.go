package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// scraped is what promcheck (conformance/promcheck) read of a metrics endpoint with
// Prometheus's own parser: families, samples, and promlint's findings.
type scraped struct {
	ContentType string                           `json:"contentType"`
	Families    map[string]struct{ Type string } `json:"families"`
	Samples     []struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
		Value  float64           `json:"value"`
	} `json:"samples"`
	Lint []string `json:"lint"`
}

// scrape reads url with promcheck; when keep is not empty, the scrape is also written there
// (for promcheck alerts).
func scrape(promcheck, url, keep string) (*scraped, error) {
	out, err := runPromcheck(promcheck, url)
	if err != nil {
		return nil, err
	}
	var s scraped
	if err := json.Unmarshal(out, &s); err != nil {
		return nil, fmt.Errorf("promcheck %s: %v", url, err)
	}
	if keep != "" {
		if err := os.WriteFile(keep, out, 0o644); err != nil {
			return nil, err
		}
	}
	return &s, nil
}

func runPromcheck(promcheck string, args ...string) ([]byte, error) {
	out, err := exec.Command(promcheck, args...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return nil, fmt.Errorf("promcheck %s: %v: %s", strings.Join(args, " "), err, ee.Stderr)
		}
		return nil, fmt.Errorf("promcheck %s: %v", strings.Join(args, " "), err)
	}
	return out, nil
}

// scaffoldedRules is the PrometheusRule of the project the manifests scenario scaffolds.
func (s *scenarios) scaffoldedRules() (string, string, error) {
	project := filepath.Join(s.work, "scaffolded", "admitted")
	rules := filepath.Join(project, "config", "prometheus", "prometheusrule.yaml")
	if _, err := os.Stat(rules); err != nil {
		return "", "", fmt.Errorf("the manifests scenario's project has no alerting rules (run it first): %w", err)
	}
	return rules, filepath.Base(project), nil
}

// alertsHolding evaluates the scaffolded project's alerting rules with Prometheus's engine over
// scrapes of a running extension, its series labelled as the project's PodMonitor labels its
// Pods, and returns the alerts whose condition holds, with their series.
func (s *scenarios) alertsHolding(scrapes ...string) (map[string][]string, error) {
	rules, name, err := s.scaffoldedRules()
	if err != nil {
		return nil, err
	}
	out, err := runPromcheck(s.promcheck, append([]string{"alerts", "-rules", rules, "-label", "app_kubernetes_io_name=" + name}, scrapes...)...)
	if err != nil {
		return nil, err
	}
	var evaluated []struct {
		Name  string
		Holds []string
	}
	if err := json.Unmarshal(out, &evaluated); err != nil {
		return nil, err
	}
	if len(evaluated) == 0 {
		return nil, fmt.Errorf("%s: no alert", rules)
	}
	holding := map[string][]string{}
	for _, a := range evaluated {
		if len(a.Holds) > 0 {
			holding[a.Name] = a.Holds
		}
	}
	return holding, nil
}

// expectAlerts says which alerts hold, and fails unless exactly want do.
func expectAlerts(holding map[string][]string, want ...string) error {
	var got []string
	for name := range holding {
		got = append(got, name)
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		return fmt.Errorf("alerts whose condition holds: %v; expected %v (%v)", got, want, holding)
	}
	return nil
}

// value sums the samples of name whose labels include all of want; -1 when there is none.
func (s *scraped) value(name string, want map[string]string) float64 {
	sum, found := 0.0, false
	for _, sm := range s.Samples {
		if sm.Name != name {
			continue
		}
		match := true
		for k, v := range want {
			if sm.Labels[k] != v {
				match = false
			}
		}
		if match {
			sum, found = sum+sm.Value, true
		}
	}
	if !found {
		return -1
	}
	return sum
}

// extensionMetrics reads the example extension's metrics as Prometheus scrapes them (the parser
// Prometheus picks for the answer's Content-Type), with promlint's verdict on the names, and holds
// them against what CAPI counted of its own calls and against the serving certificate as Go's
// crypto/x509 reads it.
func (s *scenarios) extensionMetrics(ctx context.Context) error {
	first := filepath.Join(s.work, "metrics-extension-1.json")
	ours, err := scrape(s.promcheck, s.extMetricsURL, first)
	if err != nil {
		return err
	}
	if len(ours.Lint) > 0 {
		return fmt.Errorf("promlint on the extension's metrics:\n%s", strings.Join(ours.Lint, "\n"))
	}
	capi, err := scrape(s.promcheck, s.metricsURL, "")
	if err != nil {
		return err
	}
	host := strings.TrimPrefix(s.extURL, "https://")
	var counted []string
	for _, hook := range exampleHooks {
		theirs := capi.value("capi_runtime_sdk_requests_total", map[string]string{"host": host, "hook": hook, "code": "200"})
		mine := ours.value("capi_ext_requests_total", map[string]string{"hook": hook, "code": "200"})
		if theirs < 1 || mine < theirs {
			return fmt.Errorf("%s: CAPI counted %v calls answered with HTTP 200, the extension %v (-1: no series)", hook, theirs, mine)
		}
		counted = append(counted, fmt.Sprintf("%s %v/%v", hook, mine, theirs))
	}
	fmt.Printf("  answered/CAPI's count: %s\n", strings.Join(counted, ", "))

	data, err := os.ReadFile(filepath.Join(s.extCertDir, "tls.crt"))
	if err != nil {
		return err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return fmt.Errorf("%s/tls.crt holds no PEM block", s.extCertDir)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return err
	}
	expiry := ours.value("capi_ext_certificate_expiration_timestamp_seconds", nil)
	if int64(expiry) != cert.NotAfter.Unix() {
		return fmt.Errorf("capi_ext_certificate_expiration_timestamp_seconds is %v; the certificate's notAfter is %d (%s)", expiry, cert.NotAfter.Unix(), cert.NotAfter)
	}
	fmt.Printf("  certificate expiry %s, as Go reads it\n", cert.NotAfter.UTC().Format("2006-01-02T15:04:05Z"))

	// The caller without a client certificate (the mTLS scenario) failed its handshake.
	if n := ours.value("capi_ext_tls_handshake_failures_total", map[string]string{"reason": "error"}); n < 1 {
		return fmt.Errorf("capi_ext_tls_handshake_failures_total{reason=\"error\"} is %v after a caller without a client certificate", n)
	}
	budget := ours.value("capi_ext_request_body_budget_bytes", nil)
	used := ours.value("capi_ext_request_body_budget_used_bytes", nil)
	open := ours.value("capi_ext_connections_open", nil)
	max := ours.value("capi_ext_connections_max", nil)
	if budget <= 0 || used < 0 || used > budget || open < 0 || max != 1024 || open > max {
		return fmt.Errorf("budget %v bytes with %v used; %v of %v connections open", budget, used, open, max)
	}
	fmt.Printf("  %d families (%s), promlint: no problem; budget %v MiB, %v connections open\n", len(ours.Families), ours.ContentType, budget/(1<<20), open)

	// The scaffold's alerting rules over two scrapes of this healthy extension: only the
	// certificate's (this one lives a day) holds.
	time.Sleep(2 * time.Second)
	second := filepath.Join(s.work, "metrics-extension-2.json")
	if _, err := scrape(s.promcheck, s.extMetricsURL, second); err != nil {
		return err
	}
	holding, err := s.alertsHolding(first, second)
	if err != nil {
		return err
	}
	if err := expectAlerts(holding, "CapiExtCertificateExpiresSoon"); err != nil {
		return err
	}
	fmt.Printf("  the scaffold's alerting rules, evaluated by Prometheus's engine: only CapiExtCertificateExpiresSoon holds (the certificate lives a day)\n")
	return nil
}
