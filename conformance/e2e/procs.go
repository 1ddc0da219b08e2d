package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is a component the harness started; it is stopped by its PID at the end.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

type processes struct {
	dir  string
	mu   sync.Mutex // start and stopAll may race when an interrupt arrives
	list []*process
}

func (ps *processes) start(name, bin string, args ...string) *process {
	return ps.startWith(name, nil, bin, args...)
}

// startWith is start with more environment variables (`NAME=value`). An extension (a process
// given --webhook-cert-dir) must require CAPI's client certificate: every call of every
// scenario goes through the mTLS check, and a scenario that forgets it fails here.
func (ps *processes) startWith(name string, env []string, bin string, args ...string) *process {
	joined := " " + strings.Join(args, " ")
	if strings.Contains(joined, " --webhook-cert-dir") && !strings.Contains(joined, " --webhook-client-ca-name") && !strings.Contains(joined, "--feature-gates") {
		panic(fmt.Sprintf("%s is an extension started without --webhook-client-ca-name: every extension here requires CAPI's client certificate", name))
	}
	return ps.spawn(name, env, bin, args...)
}

// startPeer starts an extension written elsewhere that has no option to require a client
// certificate (Go's test extension, the peer the port is compared with); the README says
// which calls these are.
func (ps *processes) startPeer(name string, env []string, bin string, args ...string) *process {
	return ps.spawn(name, env, bin, args...)
}

func (ps *processes) spawn(name string, env []string, bin string, args ...string) *process {
	logPath := filepath.Join(ps.dir, name+".log")
	f, err := os.Create(logPath)
	must(err)
	cmd := exec.Command(bin, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	must(cmd.Start())
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); _ = f.Close(); close(p.done) }()
	ps.list = append(ps.list, p)
	fmt.Printf("started %s (pid %d)\n", name, cmd.Process.Pid)
	return p
}

// stopAll stops every process by PID, last started first: SIGTERM, then SIGKILL after 10 s.
func (ps *processes) stopAll() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for i := len(ps.list) - 1; i >= 0; i-- {
		p := ps.list[i]
		if p.exited() {
			continue
		}
		_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
		fmt.Printf("stopped %s (pid %d)\n", p.name, p.cmd.Process.Pid)
	}
}

// dumpLogs prints the end of every component's log.
func (ps *processes) dumpLogs(lines int) {
	for _, p := range ps.list {
		f, err := os.Open(p.log)
		if err != nil {
			continue
		}
		var all []string
		s := bufio.NewScanner(f)
		s.Buffer(make([]byte, 1<<20), 1<<20)
		for s.Scan() {
			all = append(all, s.Text())
		}
		_ = f.Close()
		if len(all) > lines {
			all = all[len(all)-lines:]
		}
		fmt.Printf("\n===== %s (last %d lines of %s) =====\n%s\n", p.name, len(all), p.log, strings.Join(all, "\n"))
	}
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func httpClient(caPEM []byte, certFile, keyFile string) *http.Client {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caPEM != nil {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(caPEM)
		cfg.RootCAs = pool
	}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		must(err)
		cfg.Certificates = []tls.Certificate{pair}
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

// waitHTTP polls url until it answers 200.
func waitHTTP(client *http.Client, url string, timeout time.Duration, p *process) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if p != nil && p.exited() {
			return fmt.Errorf("%s exited: %s", p.name, p.cmd.ProcessState)
		}
		resp, err := client.Get(url)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer 200 within %s", url, timeout)
}
