//! The port's `generate-patches` in process: decode → the typed patches → encode of the
//! GeneratePatches request CAPI makes for its runtimesdk quick-start ClusterClass, through the
//! same dispatch path the server uses (no socket).
//!
//! The request is the one `make bench-compare` builds with `capi-ext render --write-requests`
//! and writes compact, as CAPI's client sends it (results/<timestamp>/testext-payload/); its
//! `payload` phase writes only that. Name it in `CAPI_TEST_EXTENSION_REQUEST` (a relative path
//! is read from the workspace's root, where the command runs, not from this package's folder,
//! where cargo runs the bench):
//!
//! ```text
//! BENCH_PHASES=payload make bench-compare
//! CAPI_TEST_EXTENSION_REQUEST=results/latest/testext-payload/generatepatches-request.json \
//!   cargo bench -p capi-ext-example-capi-test-extension --bench generate_patches
//! ```

use capi_ext::clusters::Clusters;
use capi_ext::hooks::v1alpha1::*;
use criterion::{Criterion, Throughput, criterion_main};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let Some(path) = std::env::var_os("CAPI_TEST_EXTENSION_REQUEST") else {
        eprintln!(
            "CAPI_TEST_EXTENSION_REQUEST names no request: run `BENCH_PHASES=payload make bench-compare` once and name its \
             results/latest/testext-payload/generatepatches-request.json"
        );
        std::process::exit(2);
    };
    let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(path);
    let body = std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let extension = capi_ext_example_capi_test_extension::extension(Clusters::infer())
        .build()
        .expect("the test extension builds");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let hook = GeneratePatches::info().path("generate-patches");
    let reply = runtime.block_on(extension.dispatch(&hook, Some("timeout=10s"), &body));
    let answer: GeneratePatchesResponse =
        serde_json::from_slice(&reply.body).expect("a GeneratePatches answer");
    assert_eq!(answer.status, ResponseStatus::Success, "{}", answer.message);
    let mut group = c.benchmark_group("capi_test_extension_generate_patches");
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.bench_function("dispatch", |b| {
        b.iter(|| {
            let reply =
                runtime.block_on(extension.dispatch(&hook, Some("timeout=10s"), black_box(&body)));
            assert_eq!(reply.status, 200);
            black_box(reply.body)
        })
    });
    let patches = capi_ext_example_capi_test_extension::patches::patch_set();
    group.bench_function("decode", |b| {
        b.iter(|| {
            let request: GeneratePatchesRequest =
                serde_json::from_slice(black_box(&body)).expect("a GeneratePatches request");
            black_box(request)
        })
    });
    let request: GeneratePatchesRequest =
        serde_json::from_slice(&body).expect("a GeneratePatches request");
    group.bench_function("patches", |b| {
        b.iter(|| {
            // A fresh request each time: the templates are decoded on first read.
            let request = request.clone();
            black_box(patches.generate(black_box(&request)))
        })
    });
    group.bench_function("clone_request", |b| b.iter(|| black_box(request.clone())));
    group.bench_function("encode", |b| {
        b.iter(|| black_box(serde_json::to_vec(black_box(&answer)).expect("encodes")))
    });
    group.finish();
    eprintln!(
        "request body: {} bytes, {} items patched",
        body.len(),
        answer.items.len()
    );
}

#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::bench);
}
use group::benches;
criterion_main!(benches);
