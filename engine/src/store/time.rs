//! Times are stored as Unix milliseconds and sent as RFC 3339 strings.

use chrono::{DateTime, SecondsFormat, Utc};

pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
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
pub fn new_call_id() -> app::domain::CallId {
    format!("call_{}", uuid::Uuid::now_v7().simple()).into()
}
