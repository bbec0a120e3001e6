//! The read side: what the server's read-only routes ask the engine, one file per concern. Each
//! method answers with what its route shows (a `domain::wire` type, or a store row the route
//! converts), read through the store's existing queries: no SQL of its own, and nothing written.
//!
//! - `audit.rs`: the audit trail's pages, its export and its verification.
//! - `conversations.rs`: one conversation, for the visibility checks of the routes below.
//! - `tasks.rs`: one task, and the task as the API shows it.
//! - `grants.rs`: one standing grant.
//! - `delegations.rs`: the delegations someone gave or received.
//! - `shadow_hits.rs`: the calls shadow gates (and the draft) would have stopped.
//! - `orders.rs`: the demo orders.
//! - `service.rs`: whether the database answers, and the pending approvals by gate (`/metrics`).

mod audit;
mod conversations;
mod delegations;
mod grants;
mod orders;
mod service;
mod shadow_hits;
mod tasks;

use crate::store::Store;

pub use audit::{ExternalAnchor, Verification};
pub use shadow_hits::Which;
pub use tasks::TaskRow;

/// The engine's read-only queries for the server's routes; a clone shares the store.
#[derive(Clone)]
pub struct Reads {
    store: Store,
}

impl Reads {
    /// The read side over `store`.
    pub fn new(store: Store) -> Self {
        Self { store }
    }
}
