//! Countersign's core: the durable approval engine over its store (docs/architecture.md, "Module
//! map"). The store and the clock are crates below it (`store`, `clock`), re-exported here for
//! the engine's own modules and tests: the server names neither. The web layer (the `server` crate: axum routes, extractors, sessions, pages, SSE) uses it;
//! it never uses the web layer, and without axum among its dependencies it cannot.
#![recursion_limit = "256"]

pub mod agents;
pub mod approver_names;
pub mod background;
pub mod config;
pub mod database;
pub mod delivery;
pub mod draft;
mod error;
pub mod grant_cover;
pub mod limits;
pub mod metrics;
pub mod model;
pub mod orchestrator;
pub mod people;
pub mod policy;
pub mod policy_warnings;
pub mod reads;
pub mod replay;
pub mod tools;
pub mod webhooks;

pub use ::clock;
pub use ::store::{self, bus};
pub use error::{Error, Result};
