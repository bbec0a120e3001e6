//! The read side: what the server's read-only routes and protocol gateways ask the engine, one
//! file per concern. Each method answers with what its caller shows (a `domain::wire` type, or a
//! store row the caller converts), read through the store's existing queries: no SQL of its own,
//! and nothing written.
//!
//! - `audit.rs`: the audit trail's pages, its export and its verification.
//! - `conversations.rs`: one conversation, for the visibility checks of the routes below, and one
//!   of its owner's (the protocol gateways).
//! - `tasks.rs`: one task, and the task as the API shows it.
//! - `approvals.rs`: one approval, and those pending in a task or a conversation.
//! - `events.rs`: a conversation's events, after a point or of one task.
//! - `client_calls.rs`: what the MCP gateway reads about its clients' calls and names.
//! - `grants.rs`: one standing grant.
//! - `delegations.rs`: the delegations someone gave or received.
//! - `people.rs`: accounts (by name, email address, id or API token), a person's tokens, and whom
//!   someone stands in for now.
//! - `shadow_hits.rs`: the calls shadow gates (and the draft) would have stopped.
//! - `orders.rs`: the demo orders.
//! - `service.rs`: whether the database answers, and the pending approvals by gate (`/metrics`).
//!
//! It also hands out the bus ([`Reads::bus`]): what was committed, here or on another replica,
//! is announced there, so a reader waiting for a change subscribes before it looks.

mod approvals;
mod audit;
mod client_calls;
mod conversations;
mod delegations;
mod events;
mod grants;
mod orders;
mod people;
mod service;
mod shadow_hits;
mod tasks;

use crate::{bus::Bus, store::Store};

pub use approvals::ApprovalRow;
pub use audit::{ExternalAnchor, Verification};
pub use client_calls::ClientCall;
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

    /// The bus the store announces each commit and each revoked credential on: subscribe to it
    /// before reading, so no change after the read is missed.
    pub fn bus(&self) -> &Bus {
        self.store.bus()
    }
}
