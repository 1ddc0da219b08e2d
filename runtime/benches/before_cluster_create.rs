//! Decode → handle → encode of a BeforeClusterCreate request (the ~1.6 KiB fixture of the CLI,
//! a Cluster with a topology), through the same dispatch path the server uses (no socket), and
//! the request's decoding alone: the work of a lifecycle hook besides the transport.
//!
//! Run with `make bench` (or `cargo bench -p capi-ext --bench before_cluster_create`).

mod common;

use capi_ext::hooks::v1alpha1::*;
use capi_ext::{Extension, Registration};
use criterion::{Criterion, Throughput, criterion_main};
use std::hint::black_box;

/// The payload `make bench-compare` sends to both servers for this hook.
fn request_body() -> Vec<u8> {
    include_bytes!("../../cli/fixtures/hooks/beforeclustercreate/request.json").to_vec()
}

async fn allow(req: BeforeClusterCreateRequest) -> BeforeClusterCreateResponse {
    black_box(&req.cluster);
    BeforeClusterCreateResponse::success()
}

fn bench(c: &mut Criterion) {
    let body = request_body();
    let extension = Extension::builder()
        .handler(Registration::new(BeforeClusterCreate, "allow", allow))
        .build()
        .unwrap();
    let path = BeforeClusterCreate::info().path("allow");
    let mut group = c.benchmark_group("before_cluster_create");
    group.throughput(Throughput::Bytes(body.len() as u64));
    common::dispatch(&mut group, &extension, &path, &body);
    group.bench_function("decode", |b| {
        b.iter(|| {
            let req: BeforeClusterCreateRequest = serde_json::from_slice(black_box(&body)).unwrap();
            black_box(req)
        })
    });
    group.finish();
}

#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::bench);
}
use group::benches;
criterion_main!(benches);
