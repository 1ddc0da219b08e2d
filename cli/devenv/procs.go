package devenv

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

// Process is a component the harness started; it is stopped by its PID at the end.
type Process struct {
	Name string
	Cmd  *exec.Cmd
	Log  string
	done chan struct{}
}

func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

type Processes struct {
	Dir  string
	mu   sync.Mutex // start and stopAll may race when an interrupt arrives
	list []*Process
}

func (ps *Processes) Start(name, bin string, args ...string) *Process {
	return ps.StartWith(name, nil, bin, args...)
}

// StartWith is start with more environment variables (`NAME=value`). An extension (a process
// given --webhook-cert-dir) must require CAPI's client certificate: every call of every
// scenario goes through the mTLS check, and a scenario that forgets it fails here.
func (ps *Processes) StartWith(name string, env []string, bin string, args ...string) *Process {
	joined := " " + strings.Join(args, " ")
	if strings.Contains(joined, " --webhook-cert-dir") && !strings.Contains(joined, " --webhook-client-ca-name") && !strings.Contains(joined, "--feature-gates") {
		panic(fmt.Sprintf("%s is an extension started without --webhook-client-ca-name: every extension here requires CAPI's client certificate", name))
	}
	return ps.spawn(name, env, bin, args...)
}

// StartPeer starts an extension written elsewhere that has no option to require a client
// certificate (Go's test extension, the peer the port is compared with); the README says
// which calls these are.
func (ps *Processes) StartPeer(name string, env []string, bin string, args ...string) *Process {
	return ps.spawn(name, env, bin, args...)
}

func (ps *Processes) spawn(name string, env []string, bin string, args ...string) *Process {
	logPath := filepath.Join(ps.Dir, name+".log")
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
	p := &Process{Name: name, Cmd: cmd, Log: logPath, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); _ = f.Close(); close(p.done) }()
	ps.list = append(ps.list, p)
	fmt.Printf("started %s (pid %d)\n", name, cmd.Process.Pid)
	return p
}

// Stop stops one process by its PID and waits for it: SIGTERM, then SIGKILL to its process
// group after 10 s.
func (p *Process) Stop() {
	_ = syscall.Kill(p.Cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// StopAll stops every process by PID, last started first: SIGTERM, then SIGKILL after 10 s.
func (ps *Processes) StopAll() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for i := len(ps.list) - 1; i >= 0; i-- {
		p := ps.list[i]
		if p.Exited() {
			continue
		}
		p.Stop()
		fmt.Printf("stopped %s (pid %d)\n", p.Name, p.Cmd.Process.Pid)
	}
}

// DumpLogs prints the end of every component's log.
func (ps *Processes) DumpLogs(lines int) {
	for _, p := range ps.list {
		f, err := os.Open(p.Log)
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
		fmt.Printf("\n===== %s (last %d lines of %s) =====\n%s\n", p.Name, len(all), p.Log, strings.Join(all, "\n"))
	}
}

func FreePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func HTTPClient(caPEM []byte, certFile, keyFile string) *http.Client {
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

// WaitHTTP polls url until it answers 200.
func WaitHTTP(client *http.Client, url string, timeout time.Duration, p *Process) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if p != nil && p.Exited() {
			return fmt.Errorf("%s exited: %s", p.Name, p.Cmd.ProcessState)
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
