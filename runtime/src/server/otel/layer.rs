//! A handler's own `tracing` spans, exported as children of the hook call's span: the call's
//! `request` span carries the call's trace context ([`attach`]); every span opened inside it
//! (at INFO or above, in the handler or in what it calls) gets a span id of its own and, when it
//! closes, is exported with its fields as attributes, `SPAN_KIND_INTERNAL`, its parent the span
//! it was opened in.

use super::context::Ids;
use super::otlp::{AttributeValue, SpanData};
use super::{Sink, unix_nanos};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Subscriber, span};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// The trace context of a span being recorded: its trace, its own id, where it is exported.
#[derive(Clone)]
pub(crate) struct HookContext {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub trace_state: String,
    pub sink: Arc<Sink>,
    pub ids: Arc<Ids>,
}

/// A handler's span while it is open.
struct Open {
    parent_span_id: [u8; 8],
    start: SystemTime,
    attributes: Vec<(&'static str, AttributeValue)>,
}

struct Fields<'a>(&'a mut Vec<(&'static str, AttributeValue)>);

impl Fields<'_> {
    fn set(&mut self, field: &Field, value: AttributeValue) {
        self.0.retain(|(k, _)| *k != field.name());
        self.0.push((field.name(), value));
    }
}

impl Visit for Fields<'_> {
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.set(field, AttributeValue::Int(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        match i64::try_from(value) {
            Ok(v) => self.set(field, AttributeValue::Int(v)),
            Err(_) => self.set(field, AttributeValue::String(value.to_string())),
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.set(field, AttributeValue::String(value.to_string()));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.set(field, AttributeValue::String(format!("{value:?}")));
    }
}

/// Whether a tracer exports spans. Until one starts, [`HandlerSpans`] asks for no span, and a
/// hook call's span is not made at all when the logs' level leaves it out: the span's bookkeeping
/// was about a twentieth of a small hook call's server CPU.
static EXPORTING: AtomicBool = AtomicBool::new(false);

/// Whether spans are exported (a tracer started).
pub(crate) fn exporting() -> bool {
    EXPORTING.load(Ordering::Relaxed)
}

/// Marks spans as exported, from then on.
pub(crate) fn start_exporting() {
    EXPORTING.store(true, Ordering::Relaxed);
}

/// The layer that records handlers' spans (installed by the server's logging; it enables spans
/// at INFO and above once spans are [`exporting`]).
pub(crate) struct HandlerSpans;

impl<S: Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for HandlerSpans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let Some(hook) = span
            .parent()
            .and_then(|parent| parent.extensions().get::<HookContext>().cloned())
        else {
            return;
        };
        let mut attributes = Vec::new();
        attrs.record(&mut Fields(&mut attributes));
        let mut extensions = span.extensions_mut();
        extensions.insert(Open {
            parent_span_id: hook.span_id,
            start: SystemTime::now(),
            attributes,
        });
        extensions.insert(HookContext {
            span_id: hook.ids.span_id(),
            ..hook
        });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(open) = span.extensions_mut().get_mut::<Open>()
        {
            values.record(&mut Fields(&mut open.attributes));
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else {
            return;
        };
        let mut extensions = span.extensions_mut();
        let (Some(open), Some(hook)) = (
            extensions.remove::<Open>(),
            extensions.remove::<HookContext>(),
        ) else {
            return;
        };
        hook.sink.send(SpanData {
            trace_id: hook.trace_id,
            span_id: hook.span_id,
            parent_span_id: Some(open.parent_span_id),
            trace_state: hook.trace_state,
            name: span.name().to_string(),
            start_unix_nanos: unix_nanos(open.start),
            end_unix_nanos: unix_nanos(SystemTime::now()),
            attributes: open.attributes,
            error: None,
            server: false,
        });
    }
}

/// Gives the call's `request` span its trace context, so the spans opened inside it are
/// exported as children of the call's span. Does nothing when the process's subscriber is not
/// the server's (an extension that set up its own).
pub(crate) fn attach(request: &span::Span, context: HookContext) {
    request.with_subscriber(|(id, dispatch)| {
        if let Some(registry) = dispatch.downcast_ref::<tracing_subscriber::Registry>()
            && let Some(data) = registry.span(id)
        {
            data.extensions_mut().insert(context);
        }
    });
}
