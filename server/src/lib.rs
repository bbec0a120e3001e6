//! Countersign server: the web layer (HTTP API, SSE, sessions, server-side rendering) over the
//! `engine` crate (the durable approval engine and its store). It opens the engine through
//! `engine::database::Database` and never holds the store itself (server/tests/api/layering.rs).
#![recursion_limit = "256"]

// The engine's modules under their usual names (`crate::orchestrator`, `countersign::people`…);
// not the store.
pub use engine::{
    Error as EngineError, agents, bus, config, metrics, model, orchestrator, people, policy, policy_warnings, replay, tools, webhooks,
};

pub mod api;
pub mod assets;
pub mod auth;
pub mod channels;
pub mod cli;
pub mod console;
pub mod error;
pub mod forms;
pub mod links;
pub mod page_data;
pub mod pages;
pub mod plain_page;
pub mod protocols;
pub mod remote;
pub mod security_headers;
pub mod stalled_writes;
pub mod startup;
pub mod state;
pub mod streams;
pub mod telemetry;
