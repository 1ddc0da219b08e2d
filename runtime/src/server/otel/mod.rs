//! OpenTelemetry traces: one server span per hook call (hook, handler, Cluster, outcome, HTTP
//! status), continuing the caller's trace when it sends W3C `traceparent`, exported over
//! OTLP/HTTP (protobuf or JSON) in batches.
//!
//! Off unless an endpoint is configured, by the standard environment variables of the
//! OpenTelemetry SDKs: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is) or
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/traces` appended); `OTEL_EXPORTER_OTLP[_TRACES]_PROTOCOL`
//! (`http/protobuf`, the default, or `http/json`; `grpc` is not supported),
//! `_HEADERS`, `_TIMEOUT` (ms), `_CERTIFICATE` (the CA of an `https` endpoint);
//! `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`; `OTEL_TRACES_SAMPLER` (`always_on`,
//! `always_off`, `traceidratio`, `parentbased_*` of those; default `parentbased_always_on`)
//! and `OTEL_TRACES_SAMPLER_ARG`; `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_BSP_MAX_QUEUE_SIZE`,
//! `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`; `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`
//! turn it off. Off, a request costs one branch.

mod context;
mod export;
mod layer;
mod otlp;

pub(crate) use layer::{HandlerSpans, attach, exporting};

use context::{Ids, Parent};
use http::{HeaderMap, Uri};
use otlp::{AttributeValue, SpanData};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc;

/// `OTEL_EXPORTER_OTLP_PROTOCOL`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Protocol {
    HttpProtobuf,
    HttpJson,
}

/// `OTEL_TRACES_SAMPLER`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Sampler {
    /// Sample when the trace id falls under the ratio (1.0: always, 0.0: never).
    Ratio(f64),
    /// Follow the caller's sampled flag; a root span uses the ratio.
    ParentBased(f64),
}

impl Sampler {
    fn sampled(self, parent: Option<&Parent>, trace_id: &[u8; 16]) -> bool {
        let ratio = |r: f64| {
            let mut first = [0; 8];
            first.copy_from_slice(&trace_id[8..]);
            // The low 8 bytes, as the specification's TraceIdRatioBased suggests.
            (u64::from_be_bytes(first) >> 1) < (r.clamp(0.0, 1.0) * (1u64 << 63) as f64) as u64
                || r >= 1.0
        };
        match (self, parent) {
            (Sampler::ParentBased(_), Some(p)) => p.sampled,
            (Sampler::Ratio(r) | Sampler::ParentBased(r), _) => ratio(r),
        }
    }
}

/// Where and how spans go.
#[derive(Debug)]
pub(crate) struct Config {
    pub endpoint: Uri,
    pub protocol: Protocol,
    pub headers: Vec<(String, String)>,
    pub timeout: Duration,
    pub tls: Option<Arc<rustls::ClientConfig>>,
    pub resource: Vec<(String, String)>,
    sampler: Sampler,
    pub schedule_delay: Duration,
    max_queue_size: usize,
    pub max_export_batch_size: usize,
}

fn pairs(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

impl Config {
    /// Reads the `OTEL_*` variables through `var`. `Ok(None)`: tracing is off.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Option<Config>, String> {
        let var = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let traces_or = |suffix: &str| {
            var(&format!("OTEL_EXPORTER_OTLP_TRACES_{suffix}"))
                .or_else(|| var(&format!("OTEL_EXPORTER_OTLP_{suffix}")))
        };
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
            || var("OTEL_TRACES_EXPORTER").is_some_and(|v| v == "none")
        {
            return Ok(None);
        }
        let endpoint = match (
            var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            var("OTEL_EXPORTER_OTLP_ENDPOINT"),
        ) {
            (Some(traces), _) => traces,
            (None, Some(base)) => format!("{}/v1/traces", base.trim_end_matches('/')),
            (None, None) => return Ok(None),
        };
        let expected = "expected http://HOST:PORT or https://HOST:PORT";
        let endpoint: Uri = endpoint
            .parse()
            .map_err(|e| format!("OTLP endpoint `{endpoint}`: {e}; {expected}"))?;
        if !matches!(endpoint.scheme_str(), Some("http" | "https")) || endpoint.host().is_none() {
            return Err(format!("OTLP endpoint `{endpoint}`: {expected}"));
        }
        let protocol = match traces_or("PROTOCOL").as_deref() {
            None | Some("http/protobuf") => Protocol::HttpProtobuf,
            Some("http/json") => Protocol::HttpJson,
            Some(other) => {
                return Err(format!(
                    "OTEL_EXPORTER_OTLP_PROTOCOL={other} is not supported: use http/protobuf (the default) or http/json; a Collector accepts both on port 4318"
                ));
            }
        };
        let tls = match (endpoint.scheme_str(), traces_or("CERTIFICATE")) {
            (Some("https"), Some(ca)) => {
                let pem = std::fs::read(&ca)
                    .map_err(|e| format!("OTEL_EXPORTER_OTLP_CERTIFICATE {ca}: {e}"))?;
                let mut roots = rustls::RootCertStore::empty();
                use rustls_pki_types::pem::PemObject;
                for cert in rustls_pki_types::CertificateDer::pem_slice_iter(&pem) {
                    let cert =
                        cert.map_err(|e| format!("OTEL_EXPORTER_OTLP_CERTIFICATE {ca}: {e}"))?;
                    roots
                        .add(cert)
                        .map_err(|e| format!("OTEL_EXPORTER_OTLP_CERTIFICATE {ca}: {e}"))?;
                }
                Some(Arc::new(
                    rustls::ClientConfig::builder_with_provider(crate::server::tls::provider())
                        .with_safe_default_protocol_versions()
                        .map_err(|e| e.to_string())?
                        .with_root_certificates(roots)
                        .with_no_client_auth(),
                ))
            }
            (Some("https"), None) => {
                return Err(format!(
                    "OTLP endpoint `{endpoint}` is https: set OTEL_EXPORTER_OTLP_CERTIFICATE to the CA that signed the collector's certificate (system roots are not loaded)"
                ));
            }
            _ => None,
        };
        let number = |name: &str, default: u64| -> Result<u64, String> {
            var(name).map_or(Ok(default), |v| {
                v.trim()
                    .parse()
                    .map_err(|_| format!("{name}={v}: expected a whole number"))
            })
        };
        let timeout = Duration::from_millis(
            traces_or("TIMEOUT")
                .map(|v| {
                    v.trim().parse().map_err(|_| {
                        format!("OTEL_EXPORTER_OTLP_TIMEOUT={v}: expected milliseconds")
                    })
                })
                .transpose()?
                .unwrap_or(10_000),
        );
        let ratio = match var("OTEL_TRACES_SAMPLER_ARG") {
            Some(v) => v
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|r| (0.0..=1.0).contains(r))
                .ok_or_else(|| {
                    format!("OTEL_TRACES_SAMPLER_ARG={v}: expected a ratio in [0, 1]")
                })?,
            None => 1.0,
        };
        let sampler = match var("OTEL_TRACES_SAMPLER")
            .as_deref()
            .unwrap_or("parentbased_always_on")
        {
            "always_on" => Sampler::Ratio(1.0),
            "always_off" => Sampler::Ratio(0.0),
            "traceidratio" => Sampler::Ratio(ratio),
            "parentbased_always_on" => Sampler::ParentBased(1.0),
            "parentbased_always_off" => Sampler::ParentBased(0.0),
            "parentbased_traceidratio" => Sampler::ParentBased(ratio),
            other => {
                return Err(format!(
                    "OTEL_TRACES_SAMPLER={other} is not supported: use always_on, always_off, traceidratio or parentbased_ with one of them"
                ));
            }
        };
        let mut resource = pairs(&var("OTEL_RESOURCE_ATTRIBUTES").unwrap_or_default());
        let service = var("OTEL_SERVICE_NAME")
            .or_else(|| {
                resource
                    .iter()
                    .find(|(k, _)| k == "service.name")
                    .map(|(_, v)| v.clone())
            })
            .unwrap_or_else(|| {
                let process = std::env::current_exe()
                    .ok()
                    .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
                    .unwrap_or_default();
                format!("unknown_service:{process}")
            });
        resource.retain(|(k, _)| k != "service.name");
        resource.insert(0, ("service.name".into(), service));
        resource.push(("telemetry.sdk.name".into(), "capi-ext".into()));
        resource.push(("telemetry.sdk.language".into(), "rust".into()));
        resource.push((
            "telemetry.sdk.version".into(),
            env!("CARGO_PKG_VERSION").into(),
        ));
        Ok(Some(Config {
            endpoint,
            protocol,
            headers: pairs(&traces_or("HEADERS").unwrap_or_default()),
            timeout,
            tls,
            resource,
            sampler,
            schedule_delay: Duration::from_millis(number("OTEL_BSP_SCHEDULE_DELAY", 5000)?.max(1)),
            max_queue_size: number("OTEL_BSP_MAX_QUEUE_SIZE", 2048)?.max(1) as usize,
            max_export_batch_size: number("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512)?.max(1) as usize,
        }))
    }
}

/// What the server knows about a call when it answers.
pub(crate) struct Call<'a> {
    pub hook: &'a str,
    pub handler: &'a str,
    pub cluster: Option<&'a str>,
    pub outcome: &'a str,
    pub status: u16,
    pub path: &'a str,
    pub http_version: http::Version,
    pub error: Option<String>,
}

/// Where finished spans go: the exporter's queue.
pub(crate) struct Sink {
    sender: std::sync::Mutex<Option<mpsc::Sender<SpanData>>>,
    dropped: AtomicU64,
}

impl Sink {
    /// Queues a span. Never waits: a full queue drops it.
    fn send(&self, span: SpanData) {
        let sender = self.sender.lock().expect("not poisoned").clone();
        if let Some(sender) = sender
            && sender.try_send(span).is_err()
            && self
                .dropped
                .fetch_add(1, Ordering::Relaxed)
                .is_multiple_of(1000)
        {
            tracing::warn!(
                dropped = self.dropped.load(Ordering::Relaxed),
                "the span queue is full (OTEL_BSP_MAX_QUEUE_SIZE): spans are dropped"
            );
        }
    }
}

/// Records spans and hands them to the exporter.
pub(crate) struct Tracer {
    sink: Arc<Sink>,
    exporter: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    ids: Arc<Ids>,
    sampler: Sampler,
}

/// A call's trace context, taken from its headers when it arrives, and its own span's ids.
pub(crate) struct Started {
    parent: Option<Parent>,
    at: SystemTime,
    trace_id: [u8; 16],
    span_id: [u8; 8],
    sampled: bool,
}

fn unix_nanos(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

impl Tracer {
    /// Starts the exporter (inside a tokio runtime).
    pub(crate) fn start(config: Config) -> Tracer {
        layer::start_exporting();
        let (sender, receiver) = mpsc::channel(config.max_queue_size);
        let sampler = config.sampler;
        tracing::info!(
            endpoint = %config.endpoint,
            protocol = ?config.protocol,
            service = %config.resource[0].1,
            "exporting traces over OTLP/HTTP"
        );
        let exporter = tokio::spawn(export::run(Arc::new(config), receiver));
        Tracer {
            sink: Arc::new(Sink {
                sender: std::sync::Mutex::new(Some(sender)),
                dropped: AtomicU64::new(0),
            }),
            exporter: std::sync::Mutex::new(Some(exporter)),
            ids: Arc::new(Ids::new()),
            sampler,
        }
    }

    /// Reads `traceparent`/`tracestate` of an arriving call; gives its span its ids and decides
    /// whether it is sampled.
    pub(crate) fn arrived(&self, headers: &HeaderMap) -> Started {
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let parent = header("traceparent").and_then(|tp| context::parse(tp, header("tracestate")));
        let trace_id = parent
            .as_ref()
            .map_or_else(|| self.ids.trace_id(), |p| p.trace_id);
        Started {
            sampled: self.sampler.sampled(parent.as_ref(), &trace_id),
            parent,
            at: SystemTime::now(),
            trace_id,
            span_id: self.ids.span_id(),
        }
    }

    /// What the spans a handler opens during the call need to be exported as its children;
    /// `None` when the call is not sampled.
    pub(crate) fn context(&self, started: &Started) -> Option<layer::HookContext> {
        started.sampled.then(|| layer::HookContext {
            trace_id: started.trace_id,
            span_id: started.span_id,
            trace_state: started
                .parent
                .as_ref()
                .map(|p| p.trace_state.clone())
                .unwrap_or_default(),
            sink: self.sink.clone(),
            ids: self.ids.clone(),
        })
    }

    /// Records the span of an answered call, if sampled. Never waits: a full queue drops it.
    pub(crate) fn answered(&self, started: Started, call: Call<'_>) {
        if !started.sampled {
            return;
        }
        let trace_id = started.trace_id;
        let mut attributes = vec![
            ("capi.hook", AttributeValue::String(call.hook.into())),
            ("capi.handler", AttributeValue::String(call.handler.into())),
            ("capi.outcome", AttributeValue::String(call.outcome.into())),
            ("http.request.method", AttributeValue::String("POST".into())),
            (
                "http.response.status_code",
                AttributeValue::Int(call.status.into()),
            ),
            ("url.path", AttributeValue::String(call.path.into())),
            (
                "network.protocol.version",
                AttributeValue::String(
                    match call.http_version {
                        http::Version::HTTP_2 => "2",
                        http::Version::HTTP_10 => "1.0",
                        _ => "1.1",
                    }
                    .into(),
                ),
            ),
        ];
        if let Some(cluster) = call.cluster {
            attributes.push(("capi.cluster", AttributeValue::String(cluster.into())));
        }
        let span = SpanData {
            trace_id,
            span_id: started.span_id,
            parent_span_id: started.parent.as_ref().map(|p| p.span_id),
            trace_state: started.parent.map(|p| p.trace_state).unwrap_or_default(),
            name: if call.hook.is_empty() {
                "unknown".into()
            } else {
                call.hook.into()
            },
            start_unix_nanos: unix_nanos(started.at),
            end_unix_nanos: unix_nanos(SystemTime::now()),
            attributes,
            error: call.error,
            server: true,
        };
        self.sink.send(span);
    }

    /// Sends what is queued and stops the exporter (at most `grace`).
    pub(crate) async fn shutdown(&self, grace: Duration) {
        self.sink.sender.lock().expect("not poisoned").take();
        let exporter = self.exporter.lock().expect("not poisoned").take();
        if let Some(exporter) = exporter
            && tokio::time::timeout(grace, exporter).await.is_err()
        {
            tracing::warn!("spans still unsent when the grace period ended");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(vars: &[(&str, &str)]) -> Result<Option<Config>, String> {
        Config::from_env(|name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn off_without_an_endpoint_or_when_disabled() {
        assert!(config(&[]).unwrap().is_none());
        assert!(
            config(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                ("OTEL_SDK_DISABLED", "true")
            ])
            .unwrap()
            .is_none()
        );
        assert!(
            config(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                ("OTEL_TRACES_EXPORTER", "none")
            ])
            .unwrap()
            .is_none()
        );
    }

    #[test]
    fn reads_the_standard_variables() {
        let c = config(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-tenant=a, auth = b"),
            ("OTEL_SERVICE_NAME", "my-ext"),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "service.name=ignored,k8s.namespace.name=capi",
            ),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(c.endpoint.to_string(), "http://collector:4318/v1/traces");
        assert_eq!(c.protocol, Protocol::HttpJson);
        assert_eq!(
            c.headers,
            [("x-tenant".into(), "a".into()), ("auth".into(), "b".into())]
        );
        assert_eq!(c.resource[0], ("service.name".into(), "my-ext".into()));
        assert!(
            c.resource
                .contains(&("k8s.namespace.name".into(), "capi".into()))
        );
        let c = config(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://ignored:4318"),
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://collector:4318/custom",
            ),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(c.endpoint.to_string(), "http://collector:4318/custom");
        assert_eq!(c.protocol, Protocol::HttpProtobuf);
    }

    #[test]
    fn unusable_values_are_errors_that_say_what_to_do() {
        let err = config(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ])
        .unwrap_err();
        assert!(err.contains("use http/protobuf"), "{err}");
        let err = config(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "https://c:4318")]).unwrap_err();
        assert!(err.contains("OTEL_EXPORTER_OTLP_CERTIFICATE"), "{err}");
        let err = config(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "c:4318")]).unwrap_err();
        assert!(err.contains("expected http://"), "{err}");
        let err = config(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            ("OTEL_TRACES_SAMPLER", "jaeger_remote"),
        ])
        .unwrap_err();
        assert!(err.contains("not supported"), "{err}");
    }

    #[test]
    fn the_default_sampler_follows_the_caller() {
        let parent = |sampled| Parent {
            trace_id: [1; 16],
            span_id: [1; 8],
            sampled,
            trace_state: String::new(),
        };
        let s = Sampler::ParentBased(1.0);
        assert!(s.sampled(None, &[7; 16]));
        assert!(s.sampled(Some(&parent(true)), &[1; 16]));
        assert!(!s.sampled(Some(&parent(false)), &[1; 16]));
        assert!(!Sampler::Ratio(0.0).sampled(None, &[0xff; 16]));
        assert!(Sampler::Ratio(0.5).sampled(None, &[0; 16]));
        assert!(!Sampler::Ratio(0.5).sampled(None, &[0xff; 16]));
    }
}
