//! What the benches share: one request dispatched through the server's path (decode, the
//! handler's task, encode), with no socket.

use capi_ext::Extension;
use criterion::BenchmarkGroup;
use criterion::measurement::WallTime;
use std::hint::black_box;

/// Adds `dispatch` to `group`: `body` sent to `path` of `extension`, answered with HTTP 200.
pub fn dispatch(
    group: &mut BenchmarkGroup<'_, WallTime>,
    extension: &Extension,
    path: &str,
    body: &[u8],
) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    group.bench_function("dispatch", |b| {
        b.iter(|| {
            let reply =
                runtime.block_on(extension.dispatch(path, Some("timeout=10s"), black_box(body)));
            assert_eq!(reply.status, 200);
            black_box(reply.body)
        })
    });
}
