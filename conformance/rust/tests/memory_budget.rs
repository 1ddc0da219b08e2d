//! The memory budget of requests in flight, measured on a real server process: 40 concurrent
//! GeneratePatches requests of 19 MiB each against `capi-ext-conformance bench-server`. Every
//! request is answered, and the process's peak RSS (VmHWM) stays within the budget plus a fixed
//! overhead; with the budget the scaffolded Deployment gets by default (half its 128 MiB
//! limit), within that limit. The figures are printed. (Without a budget the same burst peaks
//! near 900 MiB.) Over HTTP/2 too, on one connection as CAPI sends it and on several: there,
//! with flow-control windows that let the requests waiting for the budget take the whole
//! connection window, the one request admitted could not receive its body and every stream
//! stalled until the body read timeout.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The runtime, allocator slack, connection buffers, the answers being written.
const OVERHEAD: usize = 96 << 20;
const BODY: usize = 19 << 20;
const CLIENTS: usize = 40;

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A GeneratePatches request of about `size` bytes: templates of 16 KiB each.
fn request(size: usize) -> Vec<u8> {
    let filler = "x".repeat(16 << 10);
    let count = size / (filler.len() + 300);
    let items: Vec<serde_json::Value> = (0..count)
        .map(|i| {
            serde_json::json!({
                "uid": format!("uid-{i}"),
                "holderReference": {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
                    "namespace": "default", "name": format!("md-{i}"), "fieldPath": "spec.template.spec.infrastructureRef"},
                "object": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "GenericInfrastructureMachineTemplate",
                    "metadata": {"name": format!("t-{i}")}, "spec": {"template": {"spec": {"data": filler}}}},
            })
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1",
        "kind": "GeneratePatchesRequest",
        "items": items,
    }))
    .unwrap()
}

fn status_kib(pid: u32, field: &str) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_default()
}

/// POSTs the body over HTTP/1.1 and returns the status code.
fn post(port: u16, body: &[u8]) -> u16 {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "POST /hooks.runtime.cluster.x-k8s.io/v1alpha1/generatepatches/generate-patches HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(body).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let head = String::from_utf8_lossy(&answer[..answer.len().min(64)]).into_owned();
    head.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// Starts the bench server with `budget` on free ports; returns it and its port. The two tests
/// of this file run at once, and a port found free may be taken by the other's server before
/// this one binds it: a server that exits at start is started again on other ports.
fn start(budget: usize) -> (Server, u16) {
    for _ in 0..5 {
        let (port, probes) = (free_port(), free_port());
        let mut server = Server(
            Command::new(env!("CARGO_BIN_EXE_capi-ext-conformance"))
                .args([
                    "bench-server",
                    "--insecure-serve-plaintext-for-development",
                    "--webhook-host",
                    "127.0.0.1",
                    "--webhook-port",
                    &port.to_string(),
                    "--metrics-bind-address",
                    "0",
                    "--health-probe-bind-address",
                    &format!("127.0.0.1:{probes}"),
                    "--max-in-flight-body-bytes",
                    &budget.to_string(),
                    "--body-read-timeout",
                    "300s",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                // The port may be the other test's server: ours must still be running.
                std::thread::sleep(Duration::from_millis(200));
                if server.0.try_wait().unwrap().is_none() {
                    return (server, port);
                }
                break;
            }
            if server.0.try_wait().unwrap().is_some() {
                break; // a port was taken: try others
            }
            assert!(Instant::now() < deadline, "the server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    panic!("the server exited at start five times");
}

/// POSTs every body over `connections` HTTP/2 connections (prior knowledge, the streams of
/// each multiplexed as CAPI's client does) and returns the status codes.
fn post_h2(port: u16, body: &[u8], requests: usize, connections: usize) -> Vec<u16> {
    use http_body_util::Full;
    use hyper::body::Bytes;
    use hyper_util::rt::{TokioExecutor, TokioIo};
    let body = Bytes::copy_from_slice(body);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(async move {
            let mut senders = Vec::new();
            for _ in 0..connections {
                let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
                let (sender, connection) =
                    hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
                        .await
                        .unwrap();
                tokio::spawn(connection);
                senders.push(sender);
            }
            let calls: Vec<_> = (0..requests)
                .map(|i| {
                    let mut sender = senders[i % connections].clone();
                    let request = hyper::Request::post(format!("http://127.0.0.1:{port}/hooks.runtime.cluster.x-k8s.io/v1alpha1/generatepatches/generate-patches"))
                        .header("content-length", body.len())
                        .body(Full::new(body.clone()))
                        .unwrap();
                    tokio::spawn(async move {
                        match sender.send_request(request).await {
                            Ok(response) => response.status().as_u16(),
                            Err(_) => 0,
                        }
                    })
                })
                .collect();
            let mut codes = Vec::new();
            for call in calls {
                codes.push(call.await.unwrap());
            }
            codes
        })
}

/// How the burst reaches the server.
#[derive(Clone, Copy, Debug)]
enum Transport {
    /// One HTTP/1.1 connection per request.
    Http1,
    /// This many HTTP/2 connections, the requests spread over them.
    Http2(usize),
}

/// Runs the burst against a server with `budget`; returns the peak RSS in bytes.
fn burst(budget: usize, transport: Transport) -> usize {
    let (server, port) = start(budget);
    let pid = server.0.id();
    let idle = status_kib(pid, "VmRSS:");
    let body = Arc::new(request(BODY));
    let started = Instant::now();
    let codes: Vec<u16> = match transport {
        Transport::Http1 => {
            let clients: Vec<_> = (0..CLIENTS)
                .map(|_| {
                    let body = body.clone();
                    std::thread::spawn(move || post(port, &body))
                })
                .collect();
            clients.into_iter().map(|c| c.join().unwrap()).collect()
        }
        Transport::Http2(connections) => post_h2(port, &body, CLIENTS, connections),
    };
    let peak = status_kib(pid, "VmHWM:");
    println!(
        "{CLIENTS} concurrent requests of {} MiB over {transport:?}, budget {} MiB: idle RSS {} MiB, peak RSS {} MiB, all answered in {:.1}s",
        body.len() >> 20,
        budget >> 20,
        idle >> 10,
        peak >> 10,
        started.elapsed().as_secs_f64()
    );
    assert!(codes.iter().all(|c| *c == 200), "{codes:?}");
    peak << 10
}

#[test]
fn forty_concurrent_19_mib_requests_stay_within_the_budget() {
    let budget = 128 << 20;
    let peak = burst(budget, Transport::Http1);
    assert!(
        peak <= budget + OVERHEAD,
        "peak RSS {} MiB is over the budget of {} MiB plus {} MiB",
        peak >> 20,
        budget >> 20,
        OVERHEAD >> 20
    );
}

#[test]
fn the_default_budget_of_a_128_mib_container_keeps_it_under_its_limit() {
    // Half the scaffolded Deployment's 128Mi limit: the default there.
    let budget = 64 << 20;
    let peak = burst(budget, Transport::Http1);
    assert!(
        peak <= 128 << 20,
        "peak RSS {} MiB is over the Deployment's limit of 128 MiB",
        peak >> 20
    );
}

#[test]
fn over_http2_the_budget_holds_on_one_connection_and_on_several() {
    let budget = 64 << 20;
    for connections in [1, 4] {
        let peak = burst(budget, Transport::Http2(connections));
        assert!(
            peak <= 128 << 20,
            "over {connections} HTTP/2 connection(s), peak RSS {} MiB is over the Deployment's limit of 128 MiB",
            peak >> 20
        );
    }
}
