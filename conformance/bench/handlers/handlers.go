// Package handlers holds the Go side of the side-by-side benchmark: the same two handlers the
// Rust side serves, written against Cluster API's own types.
package handlers

import (
	"context"
	"encoding/json"

	hooks "sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1"
)

// BeforeClusterCreate answers Success.
func BeforeClusterCreate(_ context.Context, _ *hooks.BeforeClusterCreateRequest, resp *hooks.BeforeClusterCreateResponse) {
	resp.Status = hooks.ResponseStatusSuccess
}

type op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value string `json:"value"`
}

// GeneratePatches decodes every template and answers one label patch per item.
func GeneratePatches(_ context.Context, req *hooks.GeneratePatchesRequest, resp *hooks.GeneratePatchesResponse) {
	for _, item := range req.Items {
		var obj map[string]interface{}
		if err := json.Unmarshal(item.Object.Raw, &obj); err != nil {
			resp.Status = hooks.ResponseStatusFailure
			resp.Message = err.Error()
			return
		}
		patch, err := json.Marshal([]op{{Op: "add", Path: "/spec/template/metadata/labels/patched", Value: "true"}})
		if err != nil {
			resp.Status = hooks.ResponseStatusFailure
			resp.Message = err.Error()
			return
		}
		resp.Items = append(resp.Items, hooks.GeneratePatchesResponseItem{UID: item.UID, PatchType: hooks.JSONPatchType, Patch: patch})
	}
	resp.Status = hooks.ResponseStatusSuccess
}
