//! Prometheus metrics of the hook server: the requests, and what an operator watches next to
//! them: open connections against their cap, failed TLS handshakes, the memory budget in use
//! and the requests waiting for it, and the serving certificate's expiry and reloads.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::sync::RwLock;

/// Labels of a finished request.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// Hook name, `unknown` when the path matched none.
    pub hook: String,
    /// Handler name.
    pub handler: String,
    /// `Success`, `Failure`, or `Error` when no hook response was produced.
    pub status: String,
    /// HTTP status code.
    pub code: String,
}

/// Labels of a handler.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct HandlerLabels {
    /// Hook name.
    pub hook: String,
    /// Handler name.
    pub handler: String,
}

/// Labels of a failed TLS handshake.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReasonLabels {
    /// `error` or `timeout`.
    pub reason: String,
}

/// Labels of a certificate reload.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabels {
    /// `success` or `error`.
    pub result: String,
}

/// The server's metrics and their registry.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    duration: Family<HandlerLabels, Histogram>,
    in_flight: Gauge,
    pub(crate) connections_open: Gauge,
    pub(crate) connections_max: Gauge,
    pub(crate) connection_cap_reached: Counter,
    handshake_failures: Family<ReasonLabels, Counter>,
    evictions: Family<ReasonLabels, Counter>,
    pub(crate) budget_bytes: Gauge,
    pub(crate) budget_used_bytes: Gauge,
    pub(crate) budget_waiting: Gauge,
    certificate_expiry: Gauge,
    certificate_reloads: Family<ResultLabels, Counter>,
    /// The request series met so far, so that counting a request builds no labels (a family
    /// looks a series up by an owned label set: four strings made and hashed per request).
    series: RwLock<Vec<Series>>,
}

/// One request series: its labels and the counter and histogram the families hold for them
/// (a clone shares its value with the family's).
struct Series {
    hook: String,
    handler: String,
    status: String,
    code: u16,
    requests: Counter,
    duration: Histogram,
}

/// Series kept beyond this many are looked up in the families each time (hook, handler,
/// status and code are few in practice: this only bounds an unusual extension).
const MAX_SERIES_KEPT: usize = 256;

/// Counts one in the series of `reason`.
fn count(family: &Family<ReasonLabels, Counter>, reason: &str) {
    family
        .get_or_create(&ReasonLabels {
            reason: reason.to_string(),
        })
        .inc();
}

/// CAPI's own buckets for `capi_runtime_sdk_request_duration_seconds`, so both sides line up.
const BUCKETS: [f64; 23] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("capi_ext");
        let requests = Family::<RequestLabels, Counter>::default();
        let duration =
            Family::<HandlerLabels, Histogram>::new_with_constructor(|| Histogram::new(BUCKETS));
        let in_flight = Gauge::default();
        registry.register(
            "requests",
            "Hook requests served, by hook, handler, response status and HTTP code",
            requests.clone(),
        );
        registry.register(
            "request_duration_seconds",
            "Time to answer a hook request",
            duration.clone(),
        );
        registry.register(
            "requests_in_flight",
            "Hook requests being served",
            in_flight.clone(),
        );
        let gauge = |registry: &mut Registry, name: &str, help: &str| {
            let gauge = Gauge::default();
            registry.register(name, help, gauge.clone());
            gauge
        };
        let connections_open = gauge(
            &mut registry,
            "connections_open",
            "Connections accepted and not yet closed (TLS handshakes included)",
        );
        let connections_max = gauge(
            &mut registry,
            "connections_max",
            "The cap on open connections (--max-connections)",
        );
        let connection_cap_reached = Counter::default();
        registry.register(
            "connection_cap_reached",
            "Times accepting waited because every allowed connection was open with a request in flight (none could be evicted)",
            connection_cap_reached.clone(),
        );
        // Every label value exists from the start at 0, so that the first one counted is an
        // increase Prometheus sees (a series appearing at 1 has no increase).
        let reason_counters =
            |registry: &mut Registry, name: &str, help: &str, reasons: &[&str]| {
                let family = Family::<ReasonLabels, Counter>::default();
                registry.register(name, help, family.clone());
                for reason in reasons {
                    let _ = family.get_or_create(&ReasonLabels {
                        reason: (*reason).into(),
                    });
                }
                family
            };
        let evictions = reason_counters(
            &mut registry,
            "connections_evicted",
            "Connections closed at the connection cap to make room for a new one (reason=handshake: still in its TLS handshake, oldest first; reason=idle: no request in flight, idle longest first)",
            &["handshake", "idle"],
        );
        let handshake_failures = reason_counters(
            &mut registry,
            "tls_handshake_failures",
            "TLS handshakes that failed (reason=error: e.g. a client that does not trust the certificate or, with mTLS, one without a valid client certificate) or timed out (reason=timeout)",
            &["error", "timeout"],
        );
        let budget_bytes = gauge(
            &mut registry,
            "request_body_budget_bytes",
            "The memory budget of requests in flight (--max-in-flight-body-bytes or its default)",
        );
        let budget_used_bytes = gauge(
            &mut registry,
            "request_body_budget_used_bytes",
            "Bytes of the budget charged to requests in flight (three times each body)",
        );
        let budget_waiting = gauge(
            &mut registry,
            "request_body_budget_waiting",
            "Requests waiting for room in the memory budget",
        );
        let certificate_expiry = gauge(
            &mut registry,
            "certificate_expiration_timestamp_seconds",
            "When the serving certificate in use stops being valid (its notAfter, Unix seconds)",
        );
        let certificate_reloads = Family::<ResultLabels, Counter>::default();
        registry.register(
            "certificate_reloads",
            "Changes of the certificate files seen, by result (success: now in use; error: unusable, the previous one is kept)",
            certificate_reloads.clone(),
        );
        for result in ["success", "error"] {
            let _ = certificate_reloads.get_or_create(&ResultLabels {
                result: result.into(),
            });
        }
        Metrics {
            registry,
            requests,
            duration,
            in_flight,
            connections_open,
            connections_max,
            connection_cap_reached,
            handshake_failures,
            evictions,
            budget_bytes,
            budget_used_bytes,
            budget_waiting,
            certificate_expiry,
            certificate_reloads,
            series: RwLock::default(),
        }
    }
}

impl Metrics {
    /// Marks a request as started; the guard marks it finished when dropped.
    pub fn start(&self) -> InFlight {
        InFlight {
            _held: Held::new(&self.in_flight),
        }
    }

    /// Records a finished request.
    pub fn observe(&self, hook: &str, handler: &str, status: &str, code: u16, seconds: f64) {
        let matches = |s: &Series| {
            s.code == code && s.hook == hook && s.handler == handler && s.status == status
        };
        let seen = self.series.read().ok().and_then(|series| {
            series
                .iter()
                .find(|s| matches(s))
                .map(|s| (s.requests.clone(), s.duration.clone()))
        });
        let (requests, duration) = seen.unwrap_or_else(|| {
            let requests = self
                .requests
                .get_or_create(&RequestLabels {
                    hook: hook.to_string(),
                    handler: handler.to_string(),
                    status: status.to_string(),
                    code: code.to_string(),
                })
                .clone();
            let duration = self
                .duration
                .get_or_create(&HandlerLabels {
                    hook: hook.to_string(),
                    handler: handler.to_string(),
                })
                .clone();
            if let Ok(mut series) = self.series.write()
                && series.len() < MAX_SERIES_KEPT
                && !series.iter().any(matches)
            {
                series.push(Series {
                    hook: hook.to_string(),
                    handler: handler.to_string(),
                    status: status.to_string(),
                    code,
                    requests: requests.clone(),
                    duration: duration.clone(),
                });
            }
            (requests, duration)
        });
        requests.inc();
        duration.observe(seconds);
    }

    /// Counts a connection closed at the cap (`reason`: `handshake` or `idle`).
    pub fn evicted(&self, reason: &str) {
        count(&self.evictions, reason);
    }

    /// Counts a failed TLS handshake (`reason`: `error` or `timeout`).
    pub fn handshake_failed(&self, reason: &str) {
        count(&self.handshake_failures, reason);
    }

    /// Records the serving certificate now in use: its `notAfter` in Unix seconds, when it
    /// could be read.
    pub fn certificate_in_use(&self, not_after: Option<i64>) {
        if let Some(not_after) = not_after {
            self.certificate_expiry.set(not_after);
        }
    }

    /// Counts a change of the certificate files (`result`: `success` or `error`).
    pub fn certificate_reloaded(&self, result: &str) {
        self.certificate_reloads
            .get_or_create(&ResultLabels {
                result: result.to_string(),
            })
            .inc();
    }

    /// The metrics in the Prometheus text format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("writing to a String cannot fail");
        out
    }
}

/// Counts one in a gauge (connections open, requests waiting) for as long as it lives.
pub(crate) struct Held(Gauge);

impl Held {
    pub(crate) fn new(gauge: &Gauge) -> Self {
        gauge.inc();
        Held(gauge.clone())
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// Counts a request in the in-flight gauge until dropped.
pub struct InFlight {
    _held: Held,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_seen_before_counts_into_the_same_counter_and_histogram() {
        let m = Metrics::default();
        for code in [200, 200, 500, 200] {
            let status = if code == 200 { "Success" } else { "Error" };
            m.observe("BeforeClusterCreate", "create", status, code, 0.01);
        }
        m.observe("BeforeClusterCreate", "other", "Success", 200, 0.01);
        let text = m.encode();
        for series in [
            r#"capi_ext_requests_total{hook="BeforeClusterCreate",handler="create",status="Success",code="200"} 3"#,
            r#"capi_ext_requests_total{hook="BeforeClusterCreate",handler="create",status="Error",code="500"} 1"#,
            r#"capi_ext_requests_total{hook="BeforeClusterCreate",handler="other",status="Success",code="200"} 1"#,
            r#"capi_ext_request_duration_seconds_count{hook="BeforeClusterCreate",handler="create"} 4"#,
            r#"capi_ext_request_duration_seconds_count{hook="BeforeClusterCreate",handler="other"} 1"#,
        ] {
            assert!(text.contains(series), "{series} in\n{text}");
        }
    }

    #[test]
    fn encodes_counters_histograms_and_gauge() {
        let m = Metrics::default();
        let guard = m.start();
        m.observe("BeforeClusterCreate", "create", "Success", 200, 0.01);
        let text = m.encode();
        assert!(text.contains(r#"capi_ext_requests_total{hook="BeforeClusterCreate",handler="create",status="Success",code="200"} 1"#), "{text}");
        assert!(text.contains("capi_ext_requests_in_flight 1"), "{text}");
        assert!(
            text.contains("capi_ext_request_duration_seconds_bucket"),
            "{text}"
        );
        drop(guard);
        assert!(m.encode().contains("capi_ext_requests_in_flight 0"));
    }
}
