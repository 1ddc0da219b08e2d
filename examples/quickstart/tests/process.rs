//! The example binary as a process: flags, TLS with dev certificates, SIGTERM.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_ready(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            use std::io::{Read, Write};
            let _ = s.write_all(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            let mut out = String::new();
            let _ = s.read_to_string(&mut out);
            if out.starts_with("HTTP/1.1 200") {
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("extension not ready on port {port}");
}

#[test]
fn starts_with_dev_certs_and_exits_cleanly_on_sigterm() {
    let dir = std::env::temp_dir().join(format!("quickstart-process-{}", std::process::id()));
    capi_ext::dev_certs::DevCerts::generate(&[])
        .unwrap()
        .write_to(&dir)
        .unwrap();
    let (port, probes) = (free_port(), free_port());
    let mut child = Command::new(env!("CARGO_BIN_EXE_quickstart"))
        .args([
            "--webhook-host",
            "127.0.0.1",
            "--webhook-port",
            &port.to_string(),
        ])
        .arg("--webhook-cert-dir")
        .arg(&dir)
        .args([
            "--metrics-bind-address",
            "0",
            "--health-probe-bind-address",
            &format!("127.0.0.1:{probes}"),
        ])
        .env("CAPI_EXT_LOG_FORMAT", "json")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_ready(probes);
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let stderr = child.stderr.take().unwrap();
    let lines: Vec<String> = BufReader::new(stderr)
        .lines()
        .map_while(Result::ok)
        .collect();
    let exit = child.wait().unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        exit.success(),
        "exit status {exit:?}; logs:\n{}",
        lines.join("\n")
    );
    let logs = lines.join("\n");
    assert!(
        logs.contains("\"message\":\"serving Runtime Extension\""),
        "JSON logs from the environment variable:\n{logs}"
    );
    assert!(
        logs.contains("draining in-flight requests") && logs.contains("\"message\":\"stopped\""),
        "{logs}"
    );
}

#[test]
fn refuses_to_start_without_certificates_and_says_where() {
    let output = Command::new(env!("CARGO_BIN_EXE_quickstart"))
        .args([
            "--webhook-cert-dir",
            "/nonexistent-capi-ext-dir",
            "--metrics-bind-address",
            "0",
            "--health-probe-bind-address",
            "0",
        ])
        .args(["--webhook-port", &free_port().to_string()])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("/nonexistent-capi-ext-dir/tls.crt: cannot read"),
        "{stderr}"
    );
}
