//! Decode → handle → encode of a ~200 KiB GeneratePatches request with 50 items, through the
//! same dispatch path the server uses (no socket), and the codec alone for comparison.
//!
//! Run with `make bench` (or `cargo bench -p capi-ext --bench generate_patches`).

mod common;

use capi_ext::hooks::v1alpha1::*;
use capi_ext::{Extension, Registration};
use criterion::{Criterion, Throughput, criterion_main};
use std::hint::black_box;

/// The shared benchmark payload: a GeneratePatches request of 50 DockerMachineTemplate-like items
/// (~215 KiB), also used by the side-by-side benchmark against CAPI's Go server.
fn request_body() -> Vec<u8> {
    include_bytes!("../../testdata/bench/generatepatches-request.json").to_vec()
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
    let path = GeneratePatches::info().path("label");
    let mut group = c.benchmark_group("generate_patches_200KiB_50_items");
    group.throughput(Throughput::Bytes(body.len() as u64));
    common::dispatch(&mut group, &extension, &path, &body);
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
