// Command loadgen sends the same POST the way CAPI's runtime client does (no Content-Type,
// ?timeout=, HTTP/2 or HTTP/1.1 over TLS) from N concurrent clients for a fixed duration, and
// prints requests, errors and latency percentiles as JSON (and the latency at each of a fixed
// list of percentiles, for plots). With -ready and a server command after `--`, it starts the
// server itself and polls Discovery with a new connection every 200 µs, printing how long the
// first success took after the exec (nothing of this program's own start is counted).
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"
)

func client(ca []byte, proto string, conns int) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	t := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, MaxIdleConnsPerHost: conns, MaxConnsPerHost: 0}
	if proto == "h2" {
		t.ForceAttemptHTTP2 = true
	} else {
		t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	return &http.Client{Transport: t, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func post(c *http.Client, url string, body []byte) error {
	resp, err := c.Post(url, "", bytes.NewReader(body))
	if err != nil {
		return err
	}
	data, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 || !bytes.Contains(data, []byte(`"status":"Success"`)) {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, data)
	}
	return nil
}

func main() {
	url := flag.String("url", "", "handler URL")
	caFile := flag.String("ca", "", "CA bundle")
	proto := flag.String("proto", "h2", "h2 or h1")
	conc := flag.Int("c", 1, "concurrent clients")
	dur := flag.Duration("d", 5*time.Second, "duration")
	bodyFile := flag.String("body", "", "request body file")
	ready := flag.Bool("ready", false, "poll Discovery until it answers; print the time taken")
	flag.Parse()
	ca, err := os.ReadFile(*caFile)
	if err != nil {
		panic(err)
	}
	if *ready {
		discovery := []byte(`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"DiscoveryRequest"}`)
		c := client(ca, *proto, 1)
		// Warm this side first (TLS stack, the CA pool), against nothing, so the first poll
		// after the exec costs what every poll costs.
		_ = post(c, *url, discovery)
		c.CloseIdleConnections()
		var cmd *exec.Cmd
		if args := flag.Args(); len(args) > 0 {
			// Its output goes nowhere (nil: the null device), so it keeps no pipe of ours
			// open once this program has printed its answer and left it running.
			cmd = exec.Command(args[0], args[1:]...)
		}
		start := time.Now()
		if cmd != nil {
			if err := cmd.Start(); err != nil {
				panic(err)
			}
		}
		for time.Since(start) < 30*time.Second {
			if post(c, *url, discovery) == nil {
				took := time.Since(start)
				pid := 0
				if cmd != nil {
					pid = cmd.Process.Pid
				}
				fmt.Printf(`{"ready_ms": %.3f, "pid": %d}`+"\n", float64(took.Microseconds())/1000, pid)
				return
			}
			c.CloseIdleConnections()
			time.Sleep(200 * time.Microsecond)
		}
		fmt.Println(`{"ready_ms": null}`)
		if cmd != nil {
			_ = cmd.Process.Kill()
		}
		os.Exit(1)
	}
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		panic(err)
	}
	c := client(ca, *proto, *conc)
	if err := post(c, *url, body); err != nil {
		fmt.Fprintln(os.Stderr, "warm-up:", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	var lat []time.Duration
	errors := 0
	var firstErr string
	deadline := time.Now().Add(*dur)
	var wg sync.WaitGroup
	for i := 0; i < *conc; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, 4096)
			localErr := 0
			var le string
			for time.Now().Before(deadline) {
				t := time.Now()
				if err := post(c, *url, body); err != nil {
					localErr++
					le = err.Error()
					continue
				}
				local = append(local, time.Since(t))
			}
			mu.Lock()
			lat = append(lat, local...)
			errors += localErr
			if le != "" && firstErr == "" {
				firstErr = le
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
	}
	// The latency distribution, for plots: the percentiles a log-scaled tail shows well.
	dist := [][2]float64{}
	for _, p := range []float64{0, 10, 20, 30, 40, 50, 60, 70, 75, 80, 85, 90, 92.5, 95, 96, 97, 98, 99, 99.5, 99.8, 99.9, 100} {
		dist = append(dist, [2]float64{p, pct(p / 100)})
	}
	out := map[string]interface{}{
		"requests": len(lat), "errors": errors, "first_error": strings.TrimSpace(firstErr),
		"rps": float64(len(lat)) / dur.Seconds(), "p50_ms": pct(0.50), "p99_ms": pct(0.99), "max_ms": pct(1.0),
		"distribution_ms": dist,
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
}
