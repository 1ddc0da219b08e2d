package devenv

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// machinePoolLabel marks the Nodes played for a MachinePool with the MachinePool's name.
const machinePoolLabel = "capi-ext.dev/machine-pool"

// PlayMachinePools does one round of what an infrastructure provider of
// GenericInfrastructureMachinePools and the kubelets of its instances do (Providers.MachinePools):
// once the MachinePool's bootstrap data is there, as many Ready Nodes as its replicas, named
// <MachinePool>-<version>-<index>, with provider IDs and the kubelet at the MachinePool's
// version (a scale takes one round; a new version replaces every Node in one round, with new
// names and provider IDs, as a provider's rolling replacement would; CAPI's topology
// controller counts a MachinePool upgraded when its Nodes' kubelets are at its version), their
// provider IDs in the infrastructure machine pool's spec.providerIDList, which is reported
// provisioned (and ready). CAPI's MachinePool controller then finds the Nodes by provider ID;
// it deletes them when the MachinePool goes.
func (p *Providers) PlayMachinePools(ctx context.Context) {
	pools, err := p.Kube.List(ctx, ClusterV, "MachinePool", p.Namespace, nil)
	if err != nil {
		return
	}
	for i := range pools {
		p.playMachinePool(ctx, &pools[i])
	}
}

func (p *Providers) playMachinePool(ctx context.Context, mp *unstructured.Unstructured) {
	spec := func(fields ...string) string {
		v, _, _ := unstructured.NestedString(mp.Object, append([]string{"spec", "template", "spec"}, fields...)...)
		return v
	}
	if !mp.GetDeletionTimestamp().IsZero() || spec("infrastructureRef", "kind") != "GenericInfrastructureMachinePool" || spec("bootstrap", "dataSecretName") == "" {
		return
	}
	if p.HoldMachinePool != nil && p.HoldMachinePool(mp) {
		return
	}
	version := spec("version")
	replicas, found, _ := unstructured.NestedInt64(mp.Object, "spec", "replicas")
	if !found {
		replicas = 1
	}
	infra, err := p.Kube.Get(ctx, InfrastructureV, "GenericInfrastructureMachinePool", mp.GetNamespace(), spec("infrastructureRef", "name"))
	if err != nil {
		return
	}
	// Each instance is named after the version its kubelet runs: a new version replaces the
	// instances (new Nodes, new provider IDs), as an infrastructure provider's rolling
	// replacement does, and the MachinePool controller sees its nodeRefs change.
	tag := strings.ToLower(version)
	if tag == "" {
		tag = "unversioned"
	}
	ids := make([]string, 0, replicas)
	want := map[string]bool{}
	changed := false
	for i := int64(0); i < replicas; i++ {
		name := mp.GetName() + "-" + tag + "-" + strconv.FormatInt(i, 10)
		want[name] = true
		ids = append(ids, "played://"+name)
		_, err := p.Kube.Get(ctx, "v1", "Node", "", name)
		switch {
		case apierrors.IsNotFound(err):
			if _, err := p.Kube.Apply(ctx, fmt.Sprintf("apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {%s: %s}}\nspec: {providerID: %q}\n",
				name, machinePoolLabel, mp.GetName(), "played://"+name)); err != nil {
				return
			}
			if p.Kube.MergePatch(ctx, "v1", "Node", "", name, nodeStatus(time.Now(), version), true) != nil {
				return
			}
			changed = true
		case err != nil:
			return
		}
	}
	nodes, err := p.Kube.List(ctx, "v1", "Node", "", map[string]string{machinePoolLabel: mp.GetName()})
	if err != nil {
		return
	}
	for _, n := range nodes {
		if !want[n.GetName()] {
			if p.Kube.Delete(ctx, "v1", "Node", "", n.GetName()) != nil {
				return
			}
			changed = true
		}
	}
	listed, _, _ := unstructured.NestedStringSlice(infra.Object, "spec", "providerIDList")
	provisioned, _, _ := unstructured.NestedBool(infra.Object, "status", "initialization", "provisioned")
	if !changed && provisioned && fmt.Sprint(listed) == fmt.Sprint(ids) {
		return
	}
	list, _ := json.Marshal(ids)
	if p.Kube.MergePatch(ctx, InfrastructureV, "GenericInfrastructureMachinePool", infra.GetNamespace(), infra.GetName(), fmt.Sprintf(`{"spec":{"providerIDList":%s}}`, list), false) != nil {
		return
	}
	// Both contracts' readiness: v1.14's MachinePool controller still reads status.ready.
	if p.Kube.MergePatch(ctx, InfrastructureV, "GenericInfrastructureMachinePool", infra.GetNamespace(), infra.GetName(),
		fmt.Sprintf(`{"status":{"initialization":{"provisioned":true},"ready":true,"replicas":%d,"readyReplicas":%d}}`, replicas, replicas), true) == nil {
		p.played(fmt.Sprintf("machine pool, %d Ready Nodes at %s", replicas, version), mp)
	}
}
