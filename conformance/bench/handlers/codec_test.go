package handlers

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	hooks "sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1"
)

// BenchmarkGeneratePatchesCodec is decode → handle → encode of the benchmark payload, in
// process: what the Go server does per request besides HTTP and TLS.
func BenchmarkGeneratePatchesCodec(b *testing.B) {
	body, err := os.ReadFile(os.Getenv("PAYLOAD"))
	if err != nil {
		b.Skip("set PAYLOAD to the GeneratePatches request file")
	}
	b.SetBytes(int64(len(body)))
	for i := 0; i < b.N; i++ {
		req := &hooks.GeneratePatchesRequest{}
		if err := json.Unmarshal(body, req); err != nil {
			b.Fatal(err)
		}
		resp := &hooks.GeneratePatchesResponse{}
		GeneratePatches(context.Background(), req, resp)
		if _, err := json.Marshal(resp); err != nil {
			b.Fatal(err)
		}
	}
}
