//! The process's metrics, in the OpenMetrics text format (served at `/metrics` by
//! `api/metrics.rs`). Counters and histograms are this process's (Prometheus sums replicas);
//! pending approvals by gate are read from the database at scrape time and handed to `render`,
//! so every replica reports the shared queue.

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
pub struct EventLabel {
    pub event: String,
}

/// 0.25 ms … ~1.9 s in steps of a quarter, fine enough to read a fan-out's p99 from.
fn send_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.00025, 1.25, 41))
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
    /// From an event's publication on this process's bus to a stream handing its frame to the
    /// connection, per stream, by event name: the server's share of a fan-out's latency.
    pub sse_send: Family<EventLabel, Histogram, fn() -> Histogram>,
    /// Reads of the event log by conversation streams: one when a stream opens and one per gap;
    /// a live event that comes in order costs none.
    pub sse_store_reads: Counter,
    pub timeouts: Family<ActionLabel, Counter>,
    /// Calls a shadow gate (`mode = "shadow"`) would have stopped, by gate.
    pub shadow_hits: Family<GateLabel, Counter>,
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
        let sse_send = Family::<EventLabel, Histogram, fn() -> Histogram>::new_with_constructor(send_histogram);
        registry.register(
            "sse_send_seconds",
            "Seconds from a live event's publication to each stream handing its frame to the connection, by event",
            sse_send.clone(),
        );
        let sse_store_reads = Counter::default();
        registry.register(
            "sse_store_reads",
            "Event-log reads by conversation streams (on opening and on a gap; none for a live event in order)",
            sse_store_reads.clone(),
        );
        let timeouts = Family::<ActionLabel, Counter>::default();
        registry.register("timeouts_fired", "Approval deadlines that passed, by timeout action", timeouts.clone());
        let shadow_hits = Family::<GateLabel, Counter>::default();
        registry.register("shadow_hits", "Calls a shadow gate would have stopped (they ran unasked), by gate", shadow_hits.clone());
        Self {
            registry,
            pending_approvals,
            decisions,
            time_to_decision,
            tool_duration,
            sse_clients,
            sse_send,
            sse_store_reads,
            timeouts,
            shadow_hits,
        }
    }
}

impl Metrics {
    /// The scrape: every metric in the OpenMetrics text format, with the pending approvals per
    /// gate as the database counts them now.
    pub fn render(&self, pending_by_gate: Vec<(String, i64)>) -> anyhow::Result<String> {
        self.pending_approvals.clear();
        for (gate, count) in pending_by_gate {
            self.pending_approvals.get_or_create(&GateLabel { gate }).set(count);
        }
        let mut text = String::new();
        encode(&mut text, &self.registry).map_err(|e| anyhow::anyhow!("cannot encode metrics: {e}"))?;
        Ok(text)
    }

    pub fn decided(&self, outcome: &str, seconds: f64) {
        self.decisions.get_or_create(&OutcomeLabel { outcome: outcome.to_owned() }).inc();
        self.time_to_decision.observe(seconds.max(0.0));
    }

    pub fn tool_ran(&self, tool: &str, seconds: f64) {
        self.tool_duration.get_or_create(&ToolLabel { tool: tool.to_owned() }).observe(seconds);
    }

    pub fn shadow_hit(&self, gate: &str) {
        self.shadow_hits.get_or_create(&GateLabel { gate: gate.to_owned() }).inc();
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

impl SseClient {
    /// This stream is handing a live event's frame to its connection now.
    pub fn sent(&self, published: &crate::bus::Published) {
        let event = EventLabel { event: published.event.body.name().to_owned() };
        self.0.sse_send.get_or_create(&event).observe(published.at.elapsed().as_secs_f64());
    }

    /// This stream is reading the event log (it opened, or it found a gap).
    pub fn reads_store(&self) {
        self.0.sse_store_reads.inc();
    }
}

impl Drop for SseClient {
    fn drop(&mut self) {
        self.0.sse_clients.dec();
    }
}
