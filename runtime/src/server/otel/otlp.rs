//! The OTLP trace export request (`opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest`),
//! written by hand in both encodings OTLP/HTTP accepts: protobuf (field numbers from
//! `opentelemetry/proto/trace/v1/trace.proto` and `common/v1/common.proto`) and JSON (the
//! proto3 JSON mapping with OTLP's exceptions: ids as lowercase hex, enums as integers).
//! The conformance suite decodes both with the official Go definitions.

use serde_json::{Value, json};

/// An attribute value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AttributeValue {
    /// `string_value`.
    String(String),
    /// `int_value`.
    Int(i64),
}

/// One finished span.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SpanData {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub parent_span_id: Option<[u8; 8]>,
    pub trace_state: String,
    pub name: String,
    pub start_unix_nanos: u64,
    pub end_unix_nanos: u64,
    pub attributes: Vec<(&'static str, AttributeValue)>,
    /// `STATUS_CODE_ERROR` with this message, or unset.
    pub error: Option<String>,
    /// The hook call's own span (`SPAN_KIND_SERVER`), or a span of the handler inside it
    /// (`SPAN_KIND_INTERNAL`).
    pub server: bool,
}

/// `Span.SpanKind.SPAN_KIND_INTERNAL`.
const SPAN_KIND_INTERNAL: u64 = 1;
/// `Span.SpanKind.SPAN_KIND_SERVER`.
const SPAN_KIND_SERVER: u64 = 2;

fn kind(span: &SpanData) -> u64 {
    if span.server {
        SPAN_KIND_SERVER
    } else {
        SPAN_KIND_INTERNAL
    }
}
/// `Status.StatusCode.STATUS_CODE_ERROR`.
const STATUS_CODE_ERROR: u64 = 2;
/// The instrumentation scope.
const SCOPE: &str = "capi-ext";

/// A protobuf message being written: tag, then value, per field.
#[derive(Default)]
struct Message(Vec<u8>);

impl Message {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    fn tag(&mut self, field: u64, wire_type: u64) {
        self.varint((field << 3) | wire_type);
    }
    fn bytes(&mut self, field: u64, bytes: &[u8]) {
        self.tag(field, 2);
        self.varint(bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }
    fn string(&mut self, field: u64, s: &str) {
        if !s.is_empty() {
            self.bytes(field, s.as_bytes());
        }
    }
    fn message(&mut self, field: u64, m: Message) {
        self.bytes(field, &m.0);
    }
    fn uint(&mut self, field: u64, v: u64) {
        if v != 0 {
            self.tag(field, 0);
            self.varint(v);
        }
    }
    fn fixed64(&mut self, field: u64, v: u64) {
        self.tag(field, 1);
        self.0.extend_from_slice(&v.to_le_bytes());
    }
}

fn key_value(key: &str, value: &AttributeValue) -> Message {
    let mut any = Message::default();
    match value {
        AttributeValue::String(s) => any.bytes(1, s.as_bytes()),
        AttributeValue::Int(i) => {
            any.tag(3, 0);
            any.varint(*i as u64);
        }
    }
    let mut kv = Message::default();
    kv.string(1, key);
    kv.message(2, any);
    kv
}

/// The request as protobuf (`Content-Type: application/x-protobuf`).
pub(crate) fn encode_protobuf(resource: &[(String, String)], spans: &[SpanData]) -> Vec<u8> {
    let mut resource_msg = Message::default();
    for (k, v) in resource {
        resource_msg.message(1, key_value(k, &AttributeValue::String(v.clone())));
    }
    let mut scope = Message::default();
    scope.string(1, SCOPE);
    scope.string(2, env!("CARGO_PKG_VERSION"));
    let mut scope_spans = Message::default();
    scope_spans.message(1, scope);
    for span in spans {
        let mut m = Message::default();
        m.bytes(1, &span.trace_id);
        m.bytes(2, &span.span_id);
        m.string(3, &span.trace_state);
        if let Some(parent) = &span.parent_span_id {
            m.bytes(4, parent);
        }
        m.string(5, &span.name);
        m.uint(6, kind(span));
        m.fixed64(7, span.start_unix_nanos);
        m.fixed64(8, span.end_unix_nanos);
        for (k, v) in &span.attributes {
            m.message(9, key_value(k, v));
        }
        if let Some(message) = &span.error {
            let mut status = Message::default();
            status.string(2, message);
            status.uint(3, STATUS_CODE_ERROR);
            m.message(15, status);
        }
        scope_spans.message(2, m);
    }
    let mut resource_spans = Message::default();
    resource_spans.message(1, resource_msg);
    resource_spans.message(2, scope_spans);
    let mut request = Message::default();
    request.message(1, resource_spans);
    request.0
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn json_attribute(key: &str, value: &AttributeValue) -> Value {
    match value {
        AttributeValue::String(s) => json!({"key": key, "value": {"stringValue": s}}),
        // proto3 JSON writes 64-bit integers as strings.
        AttributeValue::Int(i) => json!({"key": key, "value": {"intValue": i.to_string()}}),
    }
}

/// The request as OTLP JSON (`Content-Type: application/json`).
pub(crate) fn encode_json(resource: &[(String, String)], spans: &[SpanData]) -> Vec<u8> {
    let spans: Vec<Value> = spans
        .iter()
        .map(|span| {
            let mut s = json!({
                "traceId": hex(&span.trace_id),
                "spanId": hex(&span.span_id),
                "name": span.name,
                "kind": kind(span),
                "startTimeUnixNano": span.start_unix_nanos.to_string(),
                "endTimeUnixNano": span.end_unix_nanos.to_string(),
                "attributes": span.attributes.iter().map(|(k, v)| json_attribute(k, v)).collect::<Vec<_>>(),
            });
            if let Some(parent) = &span.parent_span_id {
                s["parentSpanId"] = json!(hex(parent));
            }
            if !span.trace_state.is_empty() {
                s["traceState"] = json!(span.trace_state);
            }
            if let Some(message) = &span.error {
                s["status"] = json!({"code": STATUS_CODE_ERROR, "message": message});
            }
            s
        })
        .collect();
    let resource: Vec<Value> = resource
        .iter()
        .map(|(k, v)| json_attribute(k, &AttributeValue::String(v.clone())))
        .collect();
    serde_json::to_vec(&json!({"resourceSpans": [{
        "resource": {"attributes": resource},
        "scopeSpans": [{"scope": {"name": SCOPE, "version": env!("CARGO_PKG_VERSION")}, "spans": spans}],
    }]}))
    .expect("JSON values serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_fields_are_written_as_protobuf_does() {
        let mut m = Message::default();
        m.uint(1, 300);
        assert_eq!(m.0, [0x08, 0xac, 0x02]);
        let mut m = Message::default();
        m.string(2, "hi");
        m.fixed64(7, 1);
        assert_eq!(m.0, [0x12, 2, b'h', b'i', 0x39, 1, 0, 0, 0, 0, 0, 0, 0]);
        let mut negative = Message::default();
        negative.message(9, key_value("n", &AttributeValue::Int(-1)));
        // A negative int64 is ten bytes of varint.
        assert_eq!(negative.0.len(), 2 + 3 + 2 + 11);
    }

    #[test]
    fn json_writes_ids_as_hex_and_64_bit_integers_as_strings() {
        let span = SpanData {
            trace_id: [0xab; 16],
            span_id: [1; 8],
            parent_span_id: None,
            trace_state: String::new(),
            name: "GeneratePatches".into(),
            start_unix_nanos: 1,
            end_unix_nanos: 2,
            attributes: vec![("http.response.status_code", AttributeValue::Int(200))],
            error: None,
            server: true,
        };
        let v: Value = serde_json::from_slice(&encode_json(&[], &[span])).unwrap();
        let s = &v["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        assert_eq!(s["traceId"], "abababababababababababababababab");
        assert_eq!(s["spanId"], "0101010101010101");
        assert_eq!(s["attributes"][0]["value"]["intValue"], "200");
        assert!(s.get("parentSpanId").is_none());
    }
}
