//! `/metrics` in the OpenMetrics text format (Prometheus scrapes it) and `/readyz`.
//! Counters and histograms are this process's (Prometheus sums replicas); pending approvals by
//! gate are read from the database at scrape time, so every replica reports the shared queue.

use axum::{
    Json, Router,
    extract::State,
    http::{StatusCode, header},
    response::IntoResponse,
    routing::get,
};
use prometheus_client::{
    encoding::{EncodeLabelSet, text::encode},
    metrics::{
        counter::Counter,
        family::Family,
        gauge::Gauge,
        histogram::{Histogram, exponential_buckets},
    },
    registry::Registry,
};
use serde_json::json;

use crate::state::AppState;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct GateLabel {
    pub gate: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabel {
    pub outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ToolLabel {
    pub tool: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ActionLabel {
    pub action: String,
}

fn tool_histogram() -> Histogram {
    // 1 ms … ~33 s
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

pub struct Metrics {
    registry: Registry,
    pub pending_approvals: Family<GateLabel, Gauge>,
    pub decisions: Family<OutcomeLabel, Counter>,
    pub time_to_decision: Histogram,
    pub tool_duration: Family<ToolLabel, Histogram, fn() -> Histogram>,
    pub sse_clients: Gauge,
    pub timeouts: Family<ActionLabel, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("countersign");
        let pending_approvals = Family::<GateLabel, Gauge>::default();
        registry.register("pending_approvals", "Approvals waiting for a human, by gate (from the database)", pending_approvals.clone());
        let decisions = Family::<OutcomeLabel, Counter>::default();
        registry.register("decisions", "Approval decisions by outcome (humans, chat answers and timeouts)", decisions.clone());
        // 1 s … ~9 h
        let time_to_decision = Histogram::new(exponential_buckets(1.0, 2.0, 16));
        registry.register("time_to_decision_seconds", "Seconds from approval request to decision", time_to_decision.clone());
        let tool_duration = Family::<ToolLabel, Histogram, fn() -> Histogram>::new_with_constructor(tool_histogram);
        registry.register("tool_duration_seconds", "How long tool calls take, by tool", tool_duration.clone());
        let sse_clients = Gauge::default();
        registry.register("sse_clients", "Open conversation and queue event streams", sse_clients.clone());
        let timeouts = Family::<ActionLabel, Counter>::default();
        registry.register("timeouts_fired", "Approval deadlines that passed, by timeout action", timeouts.clone());
        Self { registry, pending_approvals, decisions, time_to_decision, tool_duration, sse_clients, timeouts }
    }
}

impl Metrics {
    pub fn decided(&self, outcome: &str, seconds: f64) {
        self.decisions.get_or_create(&OutcomeLabel { outcome: outcome.to_owned() }).inc();
        self.time_to_decision.observe(seconds.max(0.0));
    }

    pub fn tool_ran(&self, tool: &str, seconds: f64) {
        self.tool_duration.get_or_create(&ToolLabel { tool: tool.to_owned() }).observe(seconds);
    }

    pub fn timed_out(&self, action: &str) {
        self.timeouts.get_or_create(&ActionLabel { action: action.to_owned() }).inc();
    }

    /// Counts an open event stream until the guard is dropped.
    pub fn sse_client(self: &std::sync::Arc<Self>) -> SseClient {
        self.sse_clients.inc();
        SseClient(std::sync::Arc::clone(self))
    }
}

pub struct SseClient(std::sync::Arc<Metrics>);

impl Drop for SseClient {
    fn drop(&mut self) {
        self.0.sse_clients.dec();
    }
}

pub fn router() -> Router<AppState> {
    Router::new().route("/metrics", get(metrics)).route("/readyz", get(readyz))
}

async fn metrics(State(state): State<AppState>) -> Result<impl IntoResponse, crate::api::ApiError> {
    let metrics = state.orchestrator.metrics();
    let pending = crate::store::approvals::pending_by_gate(state.store.pool()).await?;
    metrics.pending_approvals.clear();
    for (gate, count) in pending {
        metrics.pending_approvals.get_or_create(&GateLabel { gate }).set(count);
    }
    let mut text = String::new();
    encode(&mut text, &metrics.registry).map_err(|e| anyhow::anyhow!("cannot encode metrics: {e}"))?;
    Ok(([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], text))
}

/// Ready to take traffic: the database answers.
async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    match state.store.ping().await {
        Ok(()) => (StatusCode::OK, Json(json!({ "status": "ready" }))),
        Err(err) => {
            tracing::warn!(error = ?err, "readiness check failed");
            let body = json!({ "error": { "code": "unavailable", "message": "the database does not answer" } });
            (StatusCode::SERVICE_UNAVAILABLE, Json(body))
        }
    }
}
