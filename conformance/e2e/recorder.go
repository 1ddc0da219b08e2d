package main

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
)

// recorder is a TLS proxy between the CAPI manager and the extension: the ExtensionConfig points
// at it, it forwards every call unchanged and keeps the last request body per hook path, so a
// scenario can compare what the real manager sent with what capi-ext builds.
type recorder struct {
	url      string
	upstream string
	client   *http.Client
	mu       sync.Mutex
	last     map[string][]byte
}

func startRecorder(upstream string, caPEM []byte, certFile, keyFile string) (*recorder, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		return nil, err
	}
	r := &recorder{url: fmt.Sprintf("https://%s", l.Addr().(*net.TCPAddr).String()), upstream: upstream,
		client: httpClient(caPEM, "", ""), last: map[string][]byte{}}
	go func() { _ = http.Serve(l, r) }()
	return r, nil
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	hook := req.URL.Path
	if i := strings.LastIndex(hook, "/"); i > 0 && strings.Count(hook, "/") > 3 {
		hook = hook[:i]
	}
	r.mu.Lock()
	r.last[hook] = body
	r.mu.Unlock()
	out, err := http.NewRequestWithContext(req.Context(), req.Method, r.upstream+req.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	resp, err := r.client.Do(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// lastRequest is the body of the last call to a hook (its path without the handler name).
func (r *recorder) lastRequest(hookPath string) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last[hookPath]
}
