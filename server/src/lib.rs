//! Countersign server: HTTP API, SSE, server-side rendering and the durable approval engine.

pub mod api;
pub mod config;
pub mod startup;
pub mod state;
pub mod store;
pub mod telemetry;
