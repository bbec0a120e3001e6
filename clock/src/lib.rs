//! The one clock of the engine and the store, and new ids. It is the database's clock: this
//! host's, corrected by how far the database's runs ahead of it, as last measured (see
//! [`follow_database_clock`]). Times are stored as Unix milliseconds and sent as RFC 3339 strings.

use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, SecondsFormat, Utc};

/// How far the database's clock runs ahead of this host's, in ms, as last measured
/// ([`crate::store::Store::follow_database_clock`]). Process-wide, like the host clock it corrects.
static DATABASE_AHEAD_MS: AtomicI64 = AtomicI64::new(0);

/// Now on the database's clock, in Unix ms. Every time Countersign reasons with — deadlines,
/// reminders, escalations, retries, outbox leases — comes from here, so replicas whose host
/// clocks differ agree on them (docs/reliability.md, "One clock").
pub fn now_ms() -> i64 {
    host_now_ms() + DATABASE_AHEAD_MS.load(Ordering::Relaxed)
}

/// This host's own clock (only to measure the database's against).
pub fn host_now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// Sets how far the database's clock runs ahead of this host's.
pub fn follow_database_clock(ahead_ms: i64) {
    DATABASE_AHEAD_MS.store(ahead_ms, Ordering::Relaxed);
}

pub fn rfc3339(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or_default().to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// A new id of any kind (`let id: TaskId = new_id();`), ordered by creation time.
pub fn new_id<Id: From<String>>() -> Id {
    uuid::Uuid::now_v7().to_string().into()
}

/// Countersign's id for a tool call. A model provider's own call ids are only unique within one
/// response (some servers number them `call_1`, `call_2` in every reply), so they are not kept.
pub fn new_call_id() -> domain::CallId {
    format!("call_{}", uuid::Uuid::now_v7().simple()).into()
}
