//! Logging through `tracing`, filtered by `RUST_LOG`-style directives.

use tracing_subscriber::{EnvFilter, fmt};

/// Installs the global subscriber. Safe to call more than once (tests start several apps).
pub fn init(filter: &str, json: bool) {
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = fmt().with_env_filter(filter).with_target(true);
    let _ = if json { builder.json().try_init() } else { builder.try_init() };
}
