// Command otel checks the extension's OpenTelemetry traces with an OTLP/HTTP receiver built
// from the official protobuf definitions (go.opentelemetry.io/proto/otlp): it starts the
// receiver, starts the extension with the standard OTEL_* variables pointing at it (once per
// protocol: http/protobuf, then http/json), makes hook calls with and without W3C trace
// context, and checks every span the receiver decoded.
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"golang.org/x/net/http2"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// span is what the checks read of a decoded span.
type span struct {
	traceID, spanID, parentSpanID, name, traceState string
	kind                                            tracepb.Span_SpanKind
	attributes                                      map[string]string
	statusCode                                      tracepb.Status_StatusCode
	statusMessage                                   string
	resource                                        map[string]string
	start, end                                      uint64
}

type receiver struct {
	mu           sync.Mutex
	spans        []span
	contentTypes map[string]int
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil || req.URL.Path != "/v1/traces" || req.Method != http.MethodPost {
		http.Error(w, "POST /v1/traces", http.StatusNotFound)
		return
	}
	msg := &collectortrace.ExportTraceServiceRequest{}
	contentType := req.Header.Get("Content-Type")
	switch contentType {
	case "application/x-protobuf":
		err = proto.Unmarshal(body, msg)
	case "application/json":
		// OTLP/JSON writes trace and span ids as hex where proto3 JSON has base64; the
		// Collector's decoder does this same translation.
		var fixed []byte
		if fixed, err = hexIDsToBase64(body); err == nil {
			err = protojson.UnmarshalOptions{DiscardUnknown: false}.Unmarshal(fixed, msg)
		}
	default:
		err = fmt.Errorf("unexpected Content-Type %q", contentType)
	}
	if err != nil {
		fmt.Printf("receiver: cannot decode a %s export: %v\n", contentType, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.contentTypes[contentType]++
	for _, rs := range msg.ResourceSpans {
		resource := attributes(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				r.spans = append(r.spans, span{
					traceID: hex.EncodeToString(s.TraceId), spanID: hex.EncodeToString(s.SpanId),
					parentSpanID: hex.EncodeToString(s.ParentSpanId), name: s.Name, kind: s.Kind,
					traceState: s.TraceState, attributes: attributes(s.Attributes),
					statusCode: s.GetStatus().GetCode(), statusMessage: s.GetStatus().GetMessage(),
					resource: resource, start: s.StartTimeUnixNano, end: s.EndTimeUnixNano,
				})
			}
		}
	}
	w.Header().Set("Content-Type", contentType)
	_, _ = w.Write([]byte("{}"))
}

func attributes(kvs []*commonpb.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		v := kv.GetValue()
		switch {
		case v.GetStringValue() != "":
			out[kv.Key] = v.GetStringValue()
		default:
			out[kv.Key] = fmt.Sprint(v.GetIntValue())
		}
	}
	return out
}

func hexIDsToBase64(body []byte) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	for _, rs := range list(doc["resourceSpans"]) {
		for _, ss := range list(rs.(map[string]any)["scopeSpans"]) {
			for _, s := range list(ss.(map[string]any)["spans"]) {
				m := s.(map[string]any)
				for _, field := range []string{"traceId", "spanId", "parentSpanId"} {
					if h, ok := m[field].(string); ok {
						b, err := hex.DecodeString(h)
						if err != nil {
							return nil, fmt.Errorf("%s %q is not hex: %v", field, h, err)
						}
						m[field] = base64.StdEncoding.EncodeToString(b)
					}
				}
			}
		}
	}
	return json.Marshal(doc)
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

var failures []string

func check(ok bool, format string, args ...any) {
	if !ok {
		failures = append(failures, fmt.Sprintf(format, args...))
	}
}

func main() {
	extension := flag.String("extension", "", "capi-ext-conformance")
	certDir := flag.String("cert-dir", "", "tls.crt, tls.key and ca.crt for the extension")
	flag.Parse()
	ca, err := os.ReadFile(*certDir + "/ca.crt")
	must(err)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	// CAPI's runtime client negotiates HTTP/2; so does this one.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http2.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}

	for _, protocol := range []string{"http/protobuf", "http/json"} {
		fmt.Printf("== %s\n", protocol)
		rec := &receiver{contentTypes: map[string]int{}}
		listener, err := net.Listen("tcp", "127.0.0.1:0")
		must(err)
		server := &http.Server{Handler: rec}
		go func() { _ = server.Serve(listener) }()

		port := freePort()
		cmd := exec.Command(*extension, "differential-extension", "--webhook-host", "127.0.0.1",
			"--webhook-port", fmt.Sprint(port), "--webhook-cert-dir", *certDir,
			"--metrics-bind-address", "0", "--health-probe-bind-address", "0")
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		cmd.Env = append(os.Environ(),
			"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+listener.Addr().String(),
			"OTEL_EXPORTER_OTLP_PROTOCOL="+protocol,
			"OTEL_SERVICE_NAME=differential-extension",
			"OTEL_RESOURCE_ATTRIBUTES=k8s.namespace.name=capi-ext-system",
			// Long for protobuf: its spans must arrive through the flush at shutdown.
			"OTEL_BSP_SCHEDULE_DELAY="+map[string]string{"http/protobuf": "600000", "http/json": "100"}[protocol])
		must(cmd.Start())
		base := fmt.Sprintf("https://127.0.0.1:%d/hooks.runtime.cluster.x-k8s.io/v1alpha1/", port)
		post := func(path, body string, header map[string]string) int {
			req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range header {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			if err != nil {
				return 0
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			return resp.StatusCode
		}
		deadline := time.Now().Add(20 * time.Second)
		for post("discovery", "{}", nil) != 200 {
			if time.Now().After(deadline) {
				fmt.Println(log.String())
				panic("the extension did not answer Discovery")
			}
			time.Sleep(100 * time.Millisecond)
		}
		const parentTrace, parentSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
		cluster := `{"name":"builtin","value":{"cluster":{"name":"c1","namespace":"ns1"}}}`
		ok := fmt.Sprintf(`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"ValidateTopologyRequest","variables":[%s],"items":[]}`, cluster)
		forbidden := fmt.Sprintf(`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"ValidateTopologyRequest","variables":[%s,{"name":"p1Region","value":"forbidden"}],"items":[]}`, cluster)
		check(post("validatetopology/validate", ok, map[string]string{
			"traceparent": "00-" + parentTrace + "-" + parentSpan + "-01", "tracestate": "vendor=abc"}) == 200, "the traced call failed")
		check(post("validatetopology/validate", forbidden, nil) == 200, "the Failure call failed")
		check(post("validatetopology/validate", ok, map[string]string{
			"traceparent": "00-" + parentTrace + "-" + parentSpan + "-00"}) == 200, "the unsampled call failed")
		check(post("nosuchhook/x", "{}", nil) == 404, "an unknown path did not answer 404")

		// SIGTERM: the extension drains, then sends what its exporter still holds.
		must(cmd.Process.Signal(syscall.SIGTERM))
		_ = cmd.Wait()
		_ = server.Close()

		rec.mu.Lock()
		spans := rec.spans
		rec.mu.Unlock()
		byName := map[string][]span{}
		for _, s := range spans {
			key := s.name + "/" + s.attributes["capi.outcome"]
			if s.parentSpanID != "" {
				key += "/child"
			}
			byName[key] = append(byName[key], s)
		}
		// Discovery polls, the traced call, the Failure, the unknown path; not the unsampled one.
		traced := byName["ValidateTopology/Success/child"]
		check(len(traced) == 1, "%s: %d spans continuing the caller's trace, want 1 (the unsampled call must not be exported)", protocol, len(traced))
		if len(traced) == 1 {
			s := traced[0]
			check(s.traceID == parentTrace && s.parentSpanID == parentSpan, "%s: trace %s parent %s, want the caller's %s/%s", protocol, s.traceID, s.parentSpanID, parentTrace, parentSpan)
			check(s.traceState == "vendor=abc", "%s: tracestate %q", protocol, s.traceState)
			check(s.kind == tracepb.Span_SPAN_KIND_SERVER, "%s: kind %v", protocol, s.kind)
			want := map[string]string{"capi.hook": "ValidateTopology", "capi.handler": "validate", "capi.cluster": "ns1/c1",
				"capi.outcome": "Success", "http.response.status_code": "200", "network.protocol.version": "2", "http.request.method": "POST"}
			for k, v := range want {
				check(s.attributes[k] == v, "%s: attribute %s = %q, want %q", protocol, k, s.attributes[k], v)
			}
			check(s.statusCode == tracepb.Status_STATUS_CODE_UNSET, "%s: a Success has status %v", protocol, s.statusCode)
			check(s.end >= s.start && s.start > uint64(time.Now().Add(-time.Hour).UnixNano()), "%s: times %d..%d", protocol, s.start, s.end)
			check(s.resource["service.name"] == "differential-extension" && s.resource["k8s.namespace.name"] == "capi-ext-system",
				"%s: resource %v", protocol, s.resource)
		}
		// The handler's own spans: children of the call's span, in its trace, not for the
		// unsampled call.
		checks := byName["check-regions//child"]
		check(len(checks) == 2, "%s: %d check-regions spans (the handler's own), want 2 (the traced call and the Failure)", protocol, len(checks))
		if len(traced) == 1 {
			var mine *span
			for i := range checks {
				if checks[i].traceID == parentTrace {
					mine = &checks[i]
				}
			}
			check(mine != nil, "%s: no check-regions span in the traced call's trace", protocol)
			if mine != nil {
				check(mine.parentSpanID == traced[0].spanID && mine.kind == tracepb.Span_SPAN_KIND_INTERNAL && mine.attributes["variables"] == "1",
					"%s: check-regions: parent %s (the call's span is %s), kind %v, attributes %v", protocol, mine.parentSpanID, traced[0].spanID, mine.kind, mine.attributes)
				check(mine.start >= traced[0].start && mine.end <= traced[0].end, "%s: check-regions outside the call's span", protocol)
				compares := 0
				for _, c := range byName["compare//child"] {
					if c.parentSpanID == mine.spanID && c.traceID == parentTrace {
						compares++
					}
				}
				check(compares == 1, "%s: %d compare spans inside the traced call's check-regions, want 1", protocol, compares)
			}
		}
		for _, c := range checks {
			if c.traceID != parentTrace {
				check(c.attributes["forbidden"] == "p1Region", "%s: the Failure's check-regions recorded forbidden=%q", protocol, c.attributes["forbidden"])
			}
		}
		failed := byName["ValidateTopology/Failure"]
		check(len(failed) == 1, "%s: %d Failure spans, want 1", protocol, len(failed))
		if len(failed) == 1 {
			check(failed[0].statusCode == tracepb.Status_STATUS_CODE_ERROR && strings.Contains(failed[0].statusMessage, "forbidden"),
				"%s: the Failure's span status %v %q", protocol, failed[0].statusCode, failed[0].statusMessage)
			check(len(failed[0].traceID) == 32 && failed[0].traceID != parentTrace, "%s: a call without traceparent starts a trace: %s", protocol, failed[0].traceID)
		}
		unknown := byName["unknown/Error"]
		check(len(unknown) == 1 && unknown[0].attributes["http.response.status_code"] == "404" && unknown[0].statusCode == tracepb.Status_STATUS_CODE_ERROR,
			"%s: the unknown path's span: %+v", protocol, unknown)
		check(len(byName["Discovery/Success"]) >= 1, "%s: no Discovery span", protocol)
		want := map[string]string{"http/protobuf": "application/x-protobuf", "http/json": "application/json"}[protocol]
		check(rec.contentTypes[want] >= 1 && len(rec.contentTypes) == 1, "%s: exports by content type %v", protocol, rec.contentTypes)
		fmt.Printf("  %d spans received (%v), decoded with the official OTLP definitions\n", len(spans), rec.contentTypes)
		if len(failures) > 0 {
			fmt.Println(log.String())
		}
	}
	if len(failures) > 0 {
		fmt.Printf("FAILED:\n  %s\n", strings.Join(failures, "\n  "))
		os.Exit(1)
	}
	fmt.Println("passed")
}
