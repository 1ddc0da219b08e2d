#!/usr/bin/env bash
# `capi-ext dev` as an author runs it, outside the repository in a temporary HOME (the CLI
# installed from the checkout as the README says): a new project's `make dev` runs it under a real
# Cluster API (etcd, kube-apiserver and CAPI's managers from the shared cache, the providers
# played); render/'s Cluster is created, upgraded and deleted through its hooks, a handler edited
# and its new answer given to the running manager without restarting CAPI, then `capi-ext dev
# down` leaves nothing running. A KubeadmControlPlaneTemplate (external etcd, no surge) added
# to render/templates.yaml makes it run KubeadmControlPlane's manager too, and a Cluster of a
# ClusterClass with that template is created (three control plane Machines, kubeadm and the
# etcd Secrets played), updated in place through CanUpdateMachine and UpdateMachine, and deleted
# through the hooks. The project's GenerateUpgradePlan plans the upgrade (render/'s ClusterClass names it),
# its scaffolded CanUpdateMachineSet refuses the upgrade's change of md-0 (the Machines are
# replaced); edited to accept every template change, it has a later change of md-0's template
# carried out in place by UpdateMachine on the same Machines. Prints the start, the time to the
# Cluster's first hook and the edit-to-new-answer time.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill -- "-$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
# The caches stay where they are (the programs capi-ext dev builds, Go's modules and builds);
# everything else is new.
export CAPI_EXT_CACHE=${CAPI_EXT_CACHE:-$HOME/.cache/capi-ext}
GOMODCACHE=$(go env GOMODCACHE) GOCACHE=$(go env GOCACHE) GOPATH=$(go env GOPATH)
export GOMODCACHE GOCACHE GOPATH
# shellcheck source=../../scripts/new-user.sh
source "$root/scripts/new-user.sh"
step() { echo "== $*" >&2; }
fail() { echo "dev: $*" >&2; echo "---- dev.log" >&2; cat "$HOME/dev-ext/dev.log" >&2; exit 1; }
# wait_for SECONDS PATTERN [COUNT]: until dev.log has COUNT (default 1) lines matching PATTERN.
wait_for() {
  local deadline=$(( $(date +%s) + $1 ))
  until [ "$(grep -cE "$2" dev.log)" -ge "${3:-1}" ]; do
    [ "$(date +%s)" -lt "$deadline" ] || fail "no line matching '$2' within $1 s"
    kill -0 "$pid" 2>/dev/null || fail "capi-ext dev exited before a line matching '$2'"
    sleep 0.5
  done
}

step "capi-ext init dev-ext"
cd "$HOME"
capi-ext init dev-ext --hooks BeforeClusterCreate,GeneratePatches,AfterControlPlaneInitialized,BeforeClusterUpgrade,AfterClusterUpgrade,BeforeClusterDelete,GenerateUpgradePlan,CanUpdateMachineSet,CanUpdateMachine,UpdateMachine 2> init.log || { cat init.log >&2; exit 1; }
cd dev-ext
# An author's provider templates beside the scaffolded ones: a KubeadmControlPlaneTemplate
# (capi-ext dev runs KCP's manager for it; external etcd, so KCP's preflight checks pass without
# a kubelet, and no surge, so a rollout moves Machines in place) and a machine pool's, which a MachinePool class of the
# ClusterClass and a MachinePool of the Cluster use.
sed -i 's/^  workers:$/  workers:\
    machinePools:\
    - class: default-pool\
      bootstrap: {templateRef: {apiVersion: bootstrap.cluster.x-k8s.io\/v1beta2, kind: GenericBootstrapConfigTemplate, name: render-worker-bootstrap}}\
      infrastructure: {templateRef: {apiVersion: infrastructure.cluster.x-k8s.io\/v1beta2, kind: GenericInfrastructureMachinePoolTemplate, name: render-worker-pool}}/' render/clusterclass.yaml
sed -i 's/^    workers:$/    workers:\
      machinePools: [{class: default-pool, name: mp-0, replicas: 2}]/' render/cluster.yaml
grep -q "generateUpgradePlanExtension: generate-upgrade-plan.dev-ext" render/clusterclass.yaml && grep -q "class: default-pool" render/clusterclass.yaml && grep -q "name: mp-0" render/cluster.yaml || { echo "dev: the scaffolded render/ files changed shape" >&2; exit 1; }
# A provider's CRD in crds/, as the scaffold's crds/README.md asks: Docker's machine template CRD
# of CAPI's own test module, at the newest release the suite proves (no contract label there).
# shellcheck source=../versions.env
source "$root/conformance/versions.env"
capi_version=${CAPI_MATRIX%%:*}
test_module=$(go mod download -json "sigs.k8s.io/cluster-api/test@$capi_version" | python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')
cp "$test_module/infrastructure/docker/config/crd/bases/infrastructure.cluster.x-k8s.io_dockermachinetemplates.yaml" crds/
cat >> render/templates.yaml <<'YAML'
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: GenericInfrastructureMachinePoolTemplate
metadata:
  name: render-worker-pool
  namespace: default
spec:
  template:
    spec: {}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlaneTemplate
metadata:
  name: render-kubeadm-control-plane
  namespace: default
spec:
  template:
    spec:
      kubeadmConfigSpec:
        format: cloud-config
        clusterConfiguration:
          etcd:
            external:
              endpoints: ["https://127.0.0.1:2379"]
              caFile: /etc/kubernetes/pki/etcd/ca.crt
              certFile: /etc/kubernetes/pki/apiserver-etcd-client.crt
              keyFile: /etc/kubernetes/pki/apiserver-etcd-client.key
      rollout: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0}}}
YAML

step "make dev (the project's target: capi-ext dev --cluster)"
started=$(date +%s.%N)
state=$work/state
# DEV_FLAGS: more flags of capi-ext dev (`DEV_FLAGS=--no-watch` must fail at the edit).
setsid make dev DEV_FLAGS="--state-dir $state ${DEV_FLAGS:-}" > dev.log 2>&1 &
pid=$!
wait_for 1800 "^ready in "
ready=$(date +%s.%N)
grep -q "before-cluster-create.dev-ext (BeforeClusterCreate)" dev.log || fail "discovery did not list the BeforeClusterCreate handler"
grep -qE "started kcp-manager \(pid [0-9]+\)" dev.log || fail "KubeadmControlPlane's manager was not started for render/'s KubeadmControlPlaneTemplate"
grep -q "1 CRDs established: dockermachinetemplates.infrastructure.cluster.x-k8s.io" dev.log || fail "crds/'s CRD was not installed"
# render/cluster.yaml's Cluster, created by the real manager through the extension's hooks.
wait_for 120 "BeforeClusterCreate +before-cluster-create +default/render +Success +200"
first_hook=$(date +%s.%N)
wait_for 120 "GeneratePatches +generate-patches +default/render +Success +200"
kubeconfig=$(cat "$state/ready")
test -s "$kubeconfig"
api() { # METHOD PATH [BODY [CONTENT-TYPE]]: the API server with the admin's certificate
  curl -sS --fail-with-body --cacert "$state/pki/ca.crt" --cert "$state/pki/admin.crt" --key "$state/pki/admin.key" \
    -X "$1" -H "Content-Type: ${4:-application/yaml}" "$(sed -n 's/.*server: "\([^"]*\)".*/\1/p' "$kubeconfig")$2" ${3:+--data-binary "$3"}
}
# crds/'s CRD, served with the contract label CAPI reads.
api GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/dockermachinetemplates.infrastructure.cluster.x-k8s.io | python3 -c '
import json, sys
crd = json.load(sys.stdin)
assert "v1beta2" in crd["metadata"]["labels"]["cluster.x-k8s.io/v1beta2"].split("_"), crd["metadata"]["labels"]
' || fail "crds/'s CRD is not served with a cluster.x-k8s.io/v1beta2 contract label"
# The topology controller sets the Cluster's infrastructureRef after GeneratePatches answered, in
# the same reconcile: read until it is there.
has_infrastructure() {
  api GET /apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters/render | python3 -c '
import json, sys
c = json.load(sys.stdin)
ref = c["spec"].get("infrastructureRef") or {}
assert ref.get("kind") == "GenericInfrastructureCluster", f"the topology controller did not create the infrastructure cluster: {c}"
'
}
for _ in $(seq 1 60); do has_infrastructure 2>/dev/null && break; sleep 1; done
has_infrastructure || fail "the Cluster has no infrastructure cluster from its topology 60 s after GeneratePatches"

# The providers played: the control plane initialized, md-0's two Machines provisioned, mp-0's
# two Nodes, which CAPI's MachinePool controller found.
wait_for 120 "AfterControlPlaneInitialized +after-control-plane-initialized +default/render +Success +200"
wait_for 120 "machine provisioned, Node Ready: default/render-md-0-" 2
wait_for 120 "machine pool, 2 Ready Nodes at v1.34.0: default/render-mp-0-"
pool_ready() { # VERSION: render's MachinePool has two Nodes CAPI found, at VERSION
  api GET /apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinepools | python3 -c '
import json, sys
pools = [p for p in json.load(sys.stdin)["items"] if p["metadata"]["name"].startswith("render-mp-0-")]
assert len(pools) == 1, [p["metadata"]["name"] for p in pools]
p = pools[0]
ok = len(p.get("status", {}).get("nodeRefs") or []) == 2 and p["status"].get("readyReplicas") == 2 and p["spec"]["template"]["spec"]["version"] == sys.argv[1]
sys.exit(0 if ok else 1)' "$1"
}
pool_state() { # what CAPI says of render's MachinePool, and its infrastructure's status
  api GET /apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinepools | python3 -c '
import json, sys
for p in json.load(sys.stdin)["items"]:
    print(p["metadata"]["name"], json.dumps(p["spec"].get("providerIDList")), json.dumps(p.get("status")))'
  api GET /apis/infrastructure.cluster.x-k8s.io/v1beta2/namespaces/default/genericinfrastructuremachinepools
}
for _ in $(seq 1 120); do pool_ready v1.34.0 && break; sleep 1; done
pool_ready v1.34.0 || fail "CAPI's MachinePool controller did not find mp-0's two Nodes within 120 s: $(pool_state)"
# The label selectors of render's md-0 Machines and of the KubeadmControlPlane Cluster's
# control plane Machines.
md0=cluster.x-k8s.io/cluster-name%3Drender,topology.cluster.x-k8s.io/deployment-name%3Dmd-0
kcp_cp=cluster.x-k8s.io/cluster-name%3Dkcp,cluster.x-k8s.io/control-plane
machines() { # SELECTOR: the names of the Machines (not being deleted), sorted
  api GET "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machines?labelSelector=$1" | python3 -c '
import json, sys
print(" ".join(sorted(m["metadata"]["name"] for m in json.load(sys.stdin)["items"] if not m["metadata"].get("deletionTimestamp"))))'
}
# until_machines SECONDS SELECTOR CONDITION: until CONDITION (a python expression over `names`,
# the Machines) holds
until_machines() {
  local names
  for _ in $(seq 1 "$1"); do
    names=$(machines "$2")
    python3 -c 'import sys; names = sys.argv[1].split(); sys.exit(0 if eval(sys.argv[2]) else 1)' "$names" "$3" && return 0
    sleep 1
  done
  fail "the Machines of $2 are [$names] after $1 s, want $3"
}
until_machines 60 "$md0" "len(names) == 2"
md0_created=$(machines "$md0")

class=$(sed -n 's/^  name: \(.*-render\)$/\1/p' render/clusterclass.yaml)

step "upgrade the Cluster to v1.35.0 through GenerateUpgradePlan, BeforeClusterUpgrade and AfterClusterUpgrade"
api PATCH /apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters/render '{"spec":{"topology":{"version":"v1.35.0"}}}' application/merge-patch+json > /dev/null
wait_for 120 "BeforeClusterUpgrade +before-cluster-upgrade +default/render +Success +200"
wait_for 300 "AfterClusterUpgrade +after-cluster-upgrade +default/render +Success +200"
# CAPI asked the project's GenerateUpgradePlan for the plan, and its CanUpdateMachineSet about
# md-0's new version: the scaffolded answer patches nothing, so CAPI replaced md-0's Machines.
wait_for 5 "GenerateUpgradePlan +generate-upgrade-plan +default/render +Success +200"
wait_for 5 "CanUpdateMachineSet +can-update-machine-set +default/render-md-0-[a-z0-9-]+ +Success +200"
until_machines 120 "$md0" "len(names) == 2 and not set(names) & set('$md0_created'.split())"
md0_upgraded=$(machines "$md0")
# CAPI called AfterClusterUpgrade only once the MachinePool's Nodes were at the new version.
pool_upgraded=$(grep -nE "machine pool, 2 Ready Nodes at v1.35.0: default/render-mp-0-" dev.log | head -1 | cut -d: -f1)
after_upgrade=$(grep -nE "AfterClusterUpgrade +after-cluster-upgrade +default/render" dev.log | head -1 | cut -d: -f1)
[ -n "$pool_upgraded" ] && [ "$pool_upgraded" -lt "$after_upgrade" ] || fail "AfterClusterUpgrade came before mp-0's Nodes were at v1.35.0"
pool_ready v1.35.0 || fail "mp-0 is not at v1.35.0 with its two Nodes after AfterClusterUpgrade"

step "a Cluster whose control plane is a KubeadmControlPlane: created through the hooks, kubeadm played"
api POST /apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusterclasses "$(sed -e "s/^  name: $class\$/  name: kcp/" \
  -e 's/kind: GenericControlPlaneTemplate/kind: KubeadmControlPlaneTemplate/' -e 's/name: render-control-plane$/name: render-kubeadm-control-plane/' render/clusterclass.yaml)" > /dev/null
api POST /apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters '
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: kcp, namespace: default}
spec:
  topology:
    classRef: {name: kcp}
    version: v1.34.0
    controlPlane: {replicas: 3}
    workers:
      machineDeployments: [{class: default-worker, name: md-0, replicas: 1}]
' > /dev/null
wait_for 120 "BeforeClusterCreate +before-cluster-create +default/kcp +Success +200"
wait_for 60 "external etcd Secrets: default/kcp$"
wait_for 180 "AfterControlPlaneInitialized +after-control-plane-initialized +default/kcp +Success +200"
# KCP's preflight checks pass (external etcd): its three Machines join one after the other.
wait_for 300 "machine provisioned, Node Ready: default/kcp-[a-z0-9]{5}-[a-z0-9]{5}$" 3
! grep -q "runs stacked etcd" dev.log || fail "a stacked-etcd warning for a KubeadmControlPlane with external etcd"
until_machines 60 "$kcp_cp" "len(names) == 3"
api GET /api/v1/namespaces/kube-system/configmaps/kubeadm-config > /dev/null || fail "kubeadm was not played: no kubeadm-config ConfigMap"
wait_for 120 "machine provisioned, Node Ready: default/kcp-md-0-"

step "edit the BeforeClusterCreate, CanUpdateMachineSet and CanUpdateMachine handlers; the running manager gets the new answers"
in_place_calls=$(grep -cE "CanUpdateMachineSet +can-update-machine-set" dev.log)
python3 - "$(grep -rl 'fn before_cluster_create' src)" "$(grep -rl 'fn can_update_machine_set' src)" "$(grep -rl 'fn can_update_machine(' src)" <<'PY'
import re, sys
edits = [
    (r"\n    BeforeClusterCreateResponse::success\(\)\n\}", '\n    BeforeClusterCreateResponse::failure("refused by the edited handler")\n}'),
    # Every change in place: the patches that turn the current objects into the desired ones
    # (CAPI compares their spec after applying them); CanUpdateMachineSet is asked about a
    # MachineSet's templates, CanUpdateMachine (by KubeadmControlPlane) about a Machine's objects.
    *[(rf"\n    let _ = &req;\n    {hook}Response::success\(\)\n\}}", f"""
    let patch = |current: &serde_json::Value, desired: &serde_json::Value| Some(Patch::Json(capi_ext::patches::diff(current, desired)));
    {hook}Response {{
        infrastructure_{infra}_patch: patch(&req.current.infrastructure_{infra}, &req.desired.infrastructure_{infra}),
        bootstrap_{bootstrap}_patch: patch(&req.current.bootstrap_{bootstrap}, &req.desired.bootstrap_{bootstrap}),
        ..{hook}Response::success()
    }}
}}""") for hook, infra, bootstrap in [("CanUpdateMachineSet", "machine_template", "config_template"), ("CanUpdateMachine", "machine", "config")]],
]
for path, (pattern, replacement) in zip(sys.argv[1:], edits):
    text = open(path).read()
    text, n = re.subn(pattern, lambda _: replacement, text)
    assert n == 1, f"{path}: the scaffolded handler's answer was not found"
    open(path, "w").write(text)
PY
edited=$(date +%s.%N)
wait_for 180 "extension restarted"
api POST /apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters "$(sed 's/name: render$/name: edited/' render/cluster.yaml)" > /dev/null
wait_for 120 "BeforeClusterCreate +before-cluster-create +default/edited +Failure"
answered=$(date +%s.%N)
# CAPI took the new answer: the Cluster is held with the handler's message (before v1.14, CAPI
# writes a Failure's message only in its log).
release=$(sed -n 's/^== Cluster API \(v[0-9.]*\),.*/\1/p' dev.log | head -1)
took_answer() {
  case $release in
    v1.1[0-3].*) grep -q "refused by the edited handler" "$state/logs/capi-manager.log" ;;
    *) api GET /apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters/edited | grep -q "refused by the edited handler" ;;
  esac
}
for _ in $(seq 1 60); do took_answer && break; sleep 1; done
took_answer || fail "the Cluster (Cluster API $release) does not carry the edited handler's message"

step "a new template for md-0 in the ClusterClass: the edited CanUpdateMachineSet accepts it, UpdateMachine carries it out on the same Machines"
# md-0 rolls out without a surge Machine (by default CAPI adds one new Machine and moves the
# other in place), so both of its Machines are moved to the new MachineSet and updated in place.
api PATCH /apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters/render \
  '[{"op": "add", "path": "/spec/topology/workers/machineDeployments/0/rollout", "value": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}}}]' application/json-patch+json > /dev/null
api POST /apis/infrastructure.cluster.x-k8s.io/v1beta2/namespaces/default/genericinfrastructuremachinetemplates '
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: GenericInfrastructureMachineTemplate
metadata: {name: render-worker-machine-motd, namespace: default}
spec: {template: {spec: {motd: updated in place}}}
' > /dev/null
api PATCH "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusterclasses/$class" \
  '[{"op": "replace", "path": "/spec/workers/machineDeployments/0/infrastructure/templateRef/name", "value": "render-worker-machine-motd"}]' application/json-patch+json > /dev/null
wait_for 120 "CanUpdateMachineSet +can-update-machine-set +default/render-md-0-[a-z0-9-]+ +Success +200" $((in_place_calls + 1))
wait_for 180 "UpdateMachine +update-machine +default/render-md-0-[a-z0-9-]+ +Success +200" 2
motds() { # SELECTOR: the Machines and the motd of their infrastructure machines
  for m in $(machines "$1"); do
    infra=$(api GET "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machines/$m" | python3 -c 'import json, sys; print(json.load(sys.stdin)["spec"]["infrastructureRef"]["name"])')
    printf '%s=%s ' "$m" "$(api GET "/apis/infrastructure.cluster.x-k8s.io/v1beta2/namespaces/default/genericinfrastructuremachines/$infra" | python3 -c 'import json, sys; print(json.load(sys.stdin)["spec"].get("motd", ""))')"
  done
}
# in_place SELECTOR BEFORE COUNT: the same Machines as BEFORE, COUNT of them with the new motd
in_place() {
  for _ in $(seq 1 120); do
    [ "$(machines "$1")" = "$2" ] && [ "$(motds "$1" | grep -o "=updated in place" | wc -l)" -eq "$3" ] && return 0
    sleep 1
  done
  [ "$(machines "$1")" = "$2" ] || fail "Machines replaced ([$2] became [$(machines "$1")]), not updated in place"
  fail "the infrastructure machines did not get the new template's motd: $(motds "$1")"
}
in_place "$md0" "$md0_upgraded" 2

step "a new machine template for the KubeadmControlPlane in its ClusterClass: CanUpdateMachine accepts it, UpdateMachine carries it out on the same three Machines"
kcp_created=$(machines "$kcp_cp")
api POST /apis/infrastructure.cluster.x-k8s.io/v1beta2/namespaces/default/genericinfrastructuremachinetemplates '
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: GenericInfrastructureMachineTemplate
metadata: {name: render-control-plane-machine-motd, namespace: default}
spec: {template: {spec: {motd: updated in place}}}
' > /dev/null
api PATCH /apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusterclasses/kcp \
  '[{"op": "replace", "path": "/spec/controlPlane/machineInfrastructure/templateRef/name", "value": "render-control-plane-machine-motd"}]' application/json-patch+json > /dev/null
wait_for 300 "UpdateMachine +update-machine +default/kcp-[a-z0-9]{5}-[a-z0-9]{5} +Success +200" 3
grep -qE "CanUpdateMachine +can-update-machine +default/kcp-[a-z0-9]{5}-[a-z0-9]{5} +Success +200" dev.log || fail "KCP did not call CanUpdateMachine"
in_place "$kcp_cp" "$kcp_created" 3

step "delete the first Cluster and the KubeadmControlPlane's through BeforeClusterDelete"
for cluster in render kcp; do
  api DELETE /apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters/$cluster > /dev/null
  wait_for 120 "BeforeClusterDelete +before-cluster-delete +default/$cluster +Success +200"
done
# The providers played the deletion too: the Clusters are gone.
for cluster in render kcp; do
  for _ in $(seq 1 120); do
    api GET /apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters/$cluster > /dev/null 2>&1 || break
    sleep 1
  done
  ! api GET /apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters/$cluster > /dev/null 2>&1 || fail "Cluster $cluster was not deleted within 120 s"
done

step "capi-ext dev down"
capi-ext dev down --state-dir "$state"
wait "$pid" || fail "capi-ext dev exited with $?"
pid=
grep -q "stopped capi-manager" dev.log || fail "the manager was not stopped"
[ ! -e "$state/engine.pid" ] || fail "the engine's pid file is left"
no_leftover() { # WHEN: no process capi-ext dev started is still running
  local p leftover
  for p in etcd kube-apiserver capi-manager kcp-manager extension; do
    leftover=$(grep -oE "started $p \(pid [0-9]+\)" dev.log | grep -oE "[0-9]+" | while read -r n; do kill -0 "$n" 2>/dev/null && echo "$n"; done || true)
    [ -z "$leftover" ] || fail "$p is still running $1 (pid $leftover)"
  done
}
no_leftover "after capi-ext dev down"
# What the manager called, by hook, and what the providers' player did.
grep -oE "^[0-9:]{8}  [A-Za-z]+ " dev.log | awk '{print $2}' | sort | uniq -c | awk '{printf "  %-30s %d\n", $2, $1}'
grep -oE "\(provider played\) +[^:]+" dev.log | sed -E 's/\(provider played\) +//' | sort | uniq -c | awk '{c=$1; $1=""; printf "  played:%s %d\n", $0, c}'
python3 -c 'import sys; s, r, h, e, a = map(float, sys.argv[1:]); print(f"dev: start to ready {r - s:.1f} s, to the first hook {h - s:.1f} s, edit to the new answer {a - e:.1f} s")' \
  "$started" "$ready" "$first_hook" "$edited" "$answered"

step "make dev again, stopped by Ctrl-C (SIGINT to its process group, as a terminal sends it)"
setsid make dev DEV_FLAGS="--state-dir $state --no-watch" >> dev.log 2>&1 &
pid=$!
wait_for 600 "^ready in " 2
kill -INT -- "-$pid"
for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
! kill -0 "$pid" 2>/dev/null || fail "make dev still runs 60 s after Ctrl-C"
wait "$pid" || true
pid=
[ "$(grep -c "stopped capi-manager" dev.log)" -eq 2 ] || fail "Ctrl-C did not stop the manager"
[ ! -e "$state/engine.pid" ] || fail "the engine's pid file is left after Ctrl-C"
no_leftover "after Ctrl-C"
echo "dev: Ctrl-C stopped every process"
