// Command soak keeps an extension server under a mixed load for a long time, the way the CAPI
// manager's runtime client calls it (HTTP/2 over TLS, one shared transport, no Content-Type,
// ?timeout=), while rotating its serving certificate, and records how it holds up.
//
//	soak -dir DIR -c 50 -d 10m -rotate 1m -window 10s -small S.json -large L.json -- SERVER ARGS...
//
// It makes a CA and a serving certificate in DIR (ca.crt, tls.crt, tls.key), starts the server
// (the command after --, which must read its certificate from DIR; its output goes to
// DIR/server.log),
// waits for Discovery, then runs -c clients, each sending Discovery, BeforeClusterCreate (-small)
// and GeneratePatches (-large) in turn, for -d. Every -rotate it writes a new serving certificate
// (same CA, new serial) and checks, with new TLS connections, that the server serves it within
// -served-within (20 s: a reload interval of 10 s plus margin), recording how long it took. Every -window it prints one JSON line: the window's requests, errors, p50/p99 per hook and
// overall, the server's RSS and CPU seconds, the certificate serial a new connection sees.
package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const apiPrefix = "/hooks.runtime.cluster.x-k8s.io/v1alpha1/"

type pki struct {
	dir    string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	serial int64
}

func newPKI(dir string) *pki {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "soak-ca"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(err)
	ca, err := x509.ParseCertificate(der)
	must(err)
	must(os.MkdirAll(dir, 0o755))
	writeAtomically(filepath.Join(dir, "ca.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	p := &pki{dir: dir, ca: ca, caKey: key, serial: 1}
	p.rotate()
	return p
}

// rotate writes a new serving certificate (key first, then certificate, each renamed into place)
// and returns its serial.
func (p *pki) rotate() int64 {
	p.serial++
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(p.serial), Subject: pkix.Name{CommonName: "127.0.0.1"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(24 * time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	must(err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	must(err)
	writeAtomically(filepath.Join(p.dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	writeAtomically(filepath.Join(p.dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	return p.serial
}

func writeAtomically(path string, data []byte) {
	must(os.WriteFile(path+".tmp", data, 0o600))
	must(os.Rename(path+".tmp", path))
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
}

// servedSerial opens a new TLS connection and returns the serial of the certificate served.
func servedSerial(addr string, roots *x509.CertPool) (int64, error) {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", NextProtos: []string{"h2"}})
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64(), nil
}

type sample struct {
	hook    string
	latency time.Duration
	err     string
}

func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return float64(sorted[int(p*float64(len(sorted)-1))].Microseconds()) / 1000
}

// procStat reads the server's resident memory (KiB) and CPU seconds.
func procStat(pid int) (rssKiB int64, cpu float64) {
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "VmRSS:") {
				rssKiB, _ = strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			}
		}
	}
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		fields := strings.Fields(string(data)[strings.LastIndexByte(string(data), ')')+1:])
		utime, _ := strconv.ParseFloat(fields[11], 64)
		stime, _ := strconv.ParseFloat(fields[12], 64)
		cpu = (utime + stime) / 100 // USER_HZ
	}
	return
}

func main() {
	dir := flag.String("dir", "", "directory for the CA and the serving certificate (the server reads it)")
	port := flag.Int("port", 0, "the port the server listens on")
	conc := flag.Int("c", 50, "concurrent clients")
	dur := flag.Duration("d", 10*time.Minute, "duration of the load")
	rotate := flag.Duration("rotate", time.Minute, "certificate rotation interval")
	window := flag.Duration("window", 10*time.Second, "reporting window")
	within := flag.Duration("served-within", 20*time.Second, "how soon after a rotation a new connection must get the new certificate (the server's reload interval, plus margin)")
	small := flag.String("small", "", "BeforeClusterCreate request body")
	large := flag.String("large", "", "GeneratePatches request body")
	flag.Parse()
	if *dir == "" || *port == 0 || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: soak -dir DIR -port PORT [flags] -- SERVER ARGS...")
		os.Exit(2)
	}
	smallBody, err := os.ReadFile(*small)
	must(err)
	largeBody, err := os.ReadFile(*large)
	must(err)
	p := newPKI(*dir)
	roots := x509.NewCertPool()
	roots.AddCert(p.ca)

	server := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	serverLog, err := os.Create(filepath.Join(*dir, "server.log"))
	must(err)
	defer serverLog.Close()
	server.Stdout, server.Stderr = serverLog, serverLog
	server.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	must(server.Start())
	defer func() { _ = server.Process.Signal(syscall.SIGTERM); _ = server.Wait() }()

	addr := fmt.Sprintf("127.0.0.1:%d", *port)
	base := "https://" + addr + apiPrefix
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{ForceAttemptHTTP2: true,
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	post := func(path string, body []byte) error {
		resp, err := client.Post(base+path+"?timeout=10s", "", bytes.NewReader(body))
		if err != nil {
			return err
		}
		data, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != 200 || !bytes.Contains(data, []byte(`"status":"Success"`)) {
			return fmt.Errorf("%s: HTTP %d %s: %.200s", path, resp.StatusCode, resp.Proto, data)
		}
		if resp.ProtoMajor != 2 {
			return fmt.Errorf("%s: answered over %s, not HTTP/2", path, resp.Proto)
		}
		return nil
	}
	discovery := []byte(`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"DiscoveryRequest"}`)
	start := time.Now()
	for post("discovery", discovery) != nil {
		if time.Since(start) > 30*time.Second {
			must(fmt.Errorf("the server did not answer Discovery within 30 s"))
		}
		time.Sleep(10 * time.Millisecond)
	}

	hooks := []struct {
		name, path string
		body       []byte
	}{{"Discovery", "discovery", discovery}, {"BeforeClusterCreate", "beforeclustercreate/before-cluster-create", smallBody},
		{"GeneratePatches", "generatepatches/generate-patches", largeBody}}
	var mu sync.Mutex
	var samples []sample
	start = time.Now()
	deadline := start.Add(*dur)
	var wg sync.WaitGroup
	for i := 0; i < *conc; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for n := i; time.Now().Before(deadline); n++ {
				h := hooks[n%len(hooks)]
				t := time.Now()
				err := post(h.path, h.body)
				s := sample{hook: h.name, latency: time.Since(t)}
				if err != nil {
					s.err = err.Error()
				}
				mu.Lock()
				samples = append(samples, s)
				mu.Unlock()
			}
		}(i)
	}

	// Windows, rotations, and the final line.
	enc := json.NewEncoder(os.Stdout)
	var rotations, rotationFailures int
	rotationErrors := []string{}
	servedAfter := []float64{}
	nextRotate := time.Now().Add(*rotate)
	for w := 1; ; w++ {
		end := start.Add(time.Duration(w) * *window)
		for time.Now().Before(end) {
			if time.Now().After(nextRotate) && time.Now().Before(deadline) {
				want := p.rotate()
				rotations++
				seen, ok := int64(0), false
				t := time.Now()
				for ; time.Since(t) < *within; time.Sleep(100 * time.Millisecond) {
					if got, err := servedSerial(addr, roots); err == nil && got == want {
						seen, ok = got, true
						break
					} else if err == nil {
						seen = got
					}
				}
				if ok {
					servedAfter = append(servedAfter, time.Since(t).Seconds())
				} else {
					rotationFailures++
					rotationErrors = append(rotationErrors, fmt.Sprintf("rotation %d: wrote serial %d, a new connection still saw %d after %s", rotations, want, seen, *within))
				}
				nextRotate = nextRotate.Add(*rotate)
			}
			time.Sleep(50 * time.Millisecond)
		}
		mu.Lock()
		batch := samples
		samples = nil
		mu.Unlock()
		byHook := map[string][]time.Duration{}
		var all []time.Duration
		errs := 0
		var firstErr string
		for _, s := range batch {
			if s.err != "" {
				errs++
				if firstErr == "" {
					firstErr = s.err
				}
				continue
			}
			byHook[s.hook] = append(byHook[s.hook], s.latency)
			all = append(all, s.latency)
		}
		sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
		line := map[string]any{"t_s": time.Since(start).Seconds(), "requests": len(all), "errors": errs, "first_error": firstErr,
			"p50_ms": percentile(all, 0.50), "p99_ms": percentile(all, 0.99), "max_ms": percentile(all, 1)}
		for hook, l := range byHook {
			sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
			line["p99_ms_"+hook] = percentile(l, 0.99)
			line["requests_"+hook] = len(l)
		}
		rss, cpu := procStat(server.Process.Pid)
		line["rss_kib"], line["cpu_s"] = rss, cpu
		if serial, err := servedSerial(addr, roots); err == nil {
			line["serial"] = serial
		}
		must(enc.Encode(line))
		if !end.Before(deadline) {
			wg.Wait()
			break
		}
	}
	must(enc.Encode(map[string]any{"summary": true, "rotations": rotations, "rotation_failures": rotationFailures, "rotation_errors": rotationErrors, "served_after_s": servedAfter, "served_within_s": within.Seconds(),
		"server_exited": server.ProcessState != nil}))
}
