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
	"strings"
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

func scrape(promcheck, url string) (*scraped, error) {
	out, err := exec.Command(promcheck, url).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return nil, fmt.Errorf("promcheck %s: %v: %s", url, err, ee.Stderr)
		}
		return nil, fmt.Errorf("promcheck %s: %v", url, err)
	}
	var s scraped
	if err := json.Unmarshal(out, &s); err != nil {
		return nil, fmt.Errorf("promcheck %s: %v", url, err)
	}
	return &s, nil
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
	ours, err := scrape(s.promcheck, s.extMetricsURL)
	if err != nil {
		return err
	}
	if len(ours.Lint) > 0 {
		return fmt.Errorf("promlint on the extension's metrics:\n%s", strings.Join(ours.Lint, "\n"))
	}
	capi, err := scrape(s.promcheck, s.metricsURL)
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
	return nil
}
