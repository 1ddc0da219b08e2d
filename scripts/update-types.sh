#!/usr/bin/env bash
# Regenerates types/src/*.rs, the built-in template types of the capi-ext-types crate, with
# `capi-ext generate types` from the CRDs of the Cluster API release in conformance/versions.env
# (root module: KubeadmControlPlaneTemplate, KubeadmConfigTemplate; test module: the Docker and
# Dev templates). With a directory argument, writes there instead (the round trip checks the
# crate against a fresh run).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../conformance/versions.env
source "$root/conformance/versions.env"
out=${1:-$root/types}
module_dir() { go mod download -json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])'; }
capi=$(module_dir "sigs.k8s.io/cluster-api@$CAPI_VERSION")
test_module=$(module_dir "sigs.k8s.io/cluster-api/test@$CAPI_VERSION")
cargo build --quiet -p capi-ext-cli --manifest-path "$root/Cargo.toml"
target_dir=$(cargo metadata --manifest-path "$root/Cargo.toml" --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The CRDs, copied under names that do not hold this machine's paths.
kubeadm="cluster-api-$CAPI_VERSION-kubeadm-crds"
docker="cluster-api-test-$CAPI_VERSION-docker-crds"
mkdir -p "$work/$kubeadm" "$work/$docker" "$out/src/kubeadm" "$out/src/docker"
cp "$capi"/controlplane/kubeadm/config/crd/bases/controlplane.cluster.x-k8s.io_kubeadmcontrolplanetemplates.yaml \
   "$capi"/bootstrap/kubeadm/config/crd/bases/bootstrap.cluster.x-k8s.io_kubeadmconfigtemplates.yaml "$work/$kubeadm/"
cp "$test_module"/infrastructure/docker/config/crd/bases/*templates.yaml "$work/$docker/"
generate() { # out-file crd-dir version
  (cd "$work" && "$target_dir/debug/capi-ext" generate types --project "$out" --crd "$2" --version "$3" --out "src/$1")
}
generate kubeadm/v1beta2.rs "$kubeadm" v1beta2
generate kubeadm/v1beta1.rs "$kubeadm" v1beta1
generate docker/v1beta2.rs "$docker" v1beta2
echo "$CAPI_VERSION" > "$out/src/CAPI_VERSION"
