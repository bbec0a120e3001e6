//! Countersign server: HTTP API, SSE, server-side rendering and the durable approval engine.
#![recursion_limit = "256"]

pub mod agents;
pub mod api;
pub mod auth;
pub mod bus;
pub mod cli;
pub mod config;
pub mod metrics;
pub mod model;
pub mod orchestrator;
pub mod page_data;
pub mod pages;
pub mod policy;
pub mod security_headers;
pub mod startup;
pub mod state;
pub mod store;
pub mod telemetry;
pub mod tools;
pub mod webhooks;
