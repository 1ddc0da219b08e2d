//! Decode → handle → encode of a ~200 KiB GeneratePatches request with 50 items, through the
//! same dispatch path the server uses (no socket), and the codec alone for comparison.
//!
//! Run with `make bench` (or `cargo bench -p capi-ext --bench generate_patches`).

use capi_ext::hooks::v1alpha1::*;
use capi_ext::{Extension, Registration};
use criterion::{Criterion, Throughput, criterion_main};
use serde_json::json;
use std::hint::black_box;

/// A GeneratePatches request of 50 DockerMachineTemplate-like items padded to ~4 KiB each.
fn request_body() -> Vec<u8> {
    let items: Vec<_> = (0..50)
        .map(|i| {
            json!({
                "uid": format!("00000000-0000-0000-0000-{i:012}"),
                "holderReference": {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
                    "namespace": "default", "name": format!("md-{i}"), "fieldPath": "spec.template.spec.infrastructureRef"},
                "object": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DockerMachineTemplate",
                    "metadata": {"name": format!("tpl-{i}"), "namespace": "default", "labels": {"a": "b"}},
                    "spec": {"template": {"spec": {
                        "extraMounts": (0..20).map(|m| json!({"containerPath": format!("/var/lib/data-{m}"), "hostPath": format!("/mnt/disks/disk-{m}-{}", "x".repeat(100))})).collect::<Vec<_>>(),
                        "preLoadImages": (0..10).map(|n| format!("registry.example.com/team/image-{n}:v1.2.3")).collect::<Vec<_>>()
                    }}}},
                "variables": [{"name": "builtin", "value": {"machineDeployment": {"class": "default-worker", "name": format!("md-{i}"), "replicas": 3}}}]
            })
        })
        .collect();
    serde_json::to_vec(&json!({
        "apiVersion": API_VERSION, "kind": "GeneratePatchesRequest",
        "variables": [{"name": "builtin", "value": {"cluster": {"name": "c1", "namespace": "default"}}}],
        "items": items
    }))
    .unwrap()
}

async fn label_each_item(req: GeneratePatchesRequest) -> GeneratePatchesResponse {
    req.items
        .iter()
        .fold(GeneratePatchesResponse::success(), |resp, item| {
            resp.patch(
                item.uid.clone(),
                Patch::json().add("/spec/template/metadata/labels/patched", "true"),
            )
        })
}

fn bench(c: &mut Criterion) {
    let body = request_body();
    let extension = Extension::builder()
        .handler(Registration::new(GeneratePatches, "label", label_each_item))
        .build()
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let path = GeneratePatches::info().path("label");
    let mut group = c.benchmark_group("generate_patches_200KiB_50_items");
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.bench_function("dispatch", |b| {
        b.iter(|| {
            let reply =
                runtime.block_on(extension.dispatch(&path, Some("timeout=10s"), black_box(&body)));
            assert_eq!(reply.status, 200);
            black_box(reply.body)
        })
    });
    group.bench_function("codec_only", |b| {
        b.iter(|| {
            let req: GeneratePatchesRequest = serde_json::from_slice(black_box(&body)).unwrap();
            let resp = req
                .items
                .iter()
                .fold(GeneratePatchesResponse::success(), |resp, item| {
                    resp.patch(
                        item.uid.clone(),
                        Patch::json().add("/spec/template/metadata/labels/patched", "true"),
                    )
                });
            black_box(serde_json::to_vec(&resp).unwrap())
        })
    });
    group.finish();
    eprintln!("request body: {} bytes", body.len());
}

#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::bench);
}
use group::benches;
criterion_main!(benches);
