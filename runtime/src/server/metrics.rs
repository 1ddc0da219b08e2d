//! Prometheus metrics of the hook server.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

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

/// The server's metrics and their registry.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    duration: Family<HandlerLabels, Histogram>,
    in_flight: Gauge,
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
        Metrics {
            registry,
            requests,
            duration,
            in_flight,
        }
    }
}

impl Metrics {
    /// Marks a request as started; the guard marks it finished when dropped.
    pub fn start(&self) -> InFlight {
        self.in_flight.inc();
        InFlight(self.in_flight.clone())
    }

    /// Records a finished request.
    pub fn observe(&self, hook: &str, handler: &str, status: &str, code: u16, seconds: f64) {
        self.requests
            .get_or_create(&RequestLabels {
                hook: hook.to_string(),
                handler: handler.to_string(),
                status: status.to_string(),
                code: code.to_string(),
            })
            .inc();
        self.duration
            .get_or_create(&HandlerLabels {
                hook: hook.to_string(),
                handler: handler.to_string(),
            })
            .observe(seconds);
    }

    /// The metrics in the Prometheus text format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("writing to a String cannot fail");
        out
    }
}

/// Decrements the in-flight gauge when dropped.
pub struct InFlight(Gauge);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
