package devenv

import (
	"strings"
	"testing"
)

// An extension started without --webhook-client-ca-name would take calls without checking
// CAPI's client certificate, and every scenario's "over mTLS" would be untrue: starting one
// must fail, before anything runs.
func TestAnExtensionWithoutTheClientCAIsRefused(t *testing.T) {
	ps := &Processes{Dir: t.TempDir()}
	defer ps.StopAll()
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), "without --webhook-client-ca-name") {
			t.Fatalf("started an extension without the client CA (recovered %v)", r)
		}
	}()
	ps.StartWith("ext", nil, "/bin/true", "--webhook-host=127.0.0.1", "--webhook-cert-dir=/nowhere", "--metrics-bind-address=0")
}

// The guard lets an extension that requires the client certificate start.
func TestAnExtensionWithTheClientCAStarts(t *testing.T) {
	ps := &Processes{Dir: t.TempDir()}
	defer ps.StopAll()
	p := ps.StartWith("ext", nil, "/bin/true", "--webhook-cert-dir=/nowhere", "--webhook-client-ca-name=client-ca.crt")
	<-p.Done()
}
