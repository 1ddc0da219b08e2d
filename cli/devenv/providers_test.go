package devenv

import (
	"encoding/json"
	"testing"
	"time"
)

func TestANodesStatusPatchCarriesTheKubeletsVersionOnlyWhenGiven(t *testing.T) {
	type status struct {
		Status struct {
			NodeInfo *struct {
				KubeletVersion string `json:"kubeletVersion"`
			} `json:"nodeInfo"`
			Conditions []struct{ Type, Status string } `json:"conditions"`
		} `json:"status"`
	}
	for _, version := range []string{"", "v1.35.0"} {
		var s status
		if err := json.Unmarshal([]byte(nodeStatus(time.Now(), version)), &s); err != nil {
			t.Fatalf("version %q: the patch is not JSON: %v", version, err)
		}
		if len(s.Status.Conditions) != 4 || s.Status.Conditions[0].Type != "Ready" || s.Status.Conditions[0].Status != "True" {
			t.Errorf("version %q: conditions %+v, want Ready and the three pressures", version, s.Status.Conditions)
		}
		switch {
		case version == "" && s.Status.NodeInfo != nil:
			t.Errorf("no version: nodeInfo %+v, want none", s.Status.NodeInfo)
		case version != "" && (s.Status.NodeInfo == nil || s.Status.NodeInfo.KubeletVersion != version):
			t.Errorf("version %q: nodeInfo %+v", version, s.Status.NodeInfo)
		}
	}
}
