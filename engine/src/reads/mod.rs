//! The read side: what the server's routes, protocol gateways, link pages and notification
//! channels ask the engine, one file per concern. Each method answers with what its caller shows
//! (a `domain::wire` type, or a store row the caller converts), read through the store's existing
//! queries: no SQL of its own, and nothing written but the view caches `views.rs` refreshes.
//!
//! - `audit.rs`: the audit trail's pages, its export and its verification.
//! - `conversations.rs`: one conversation, for the visibility checks of the routes below, one of
//!   its owner's (the protocol gateways), and the list of someone's (or everyone's).
//! - `views.rs`: a conversation's folded view, whole or the page a reload shows.
//! - `tasks.rs`: one task, and the task as the API shows it.
//! - `approvals.rs`: one approval, the queue (its filter and order), those pending in a task, a
//!   conversation or its chat, and those handed to someone.
//! - `events.rs`: a conversation's events, after a point or of one task.
//! - `client_calls.rs`: what the MCP gateway reads about its clients' calls and names.
//! - `grants.rs`: one standing grant.
//! - `delegations.rs`: the delegations someone gave or received.
//! - `people.rs`: accounts (by name, email address, id or API token), a person's tokens, and whom
//!   someone stands in for now.
//! - `shadow_hits.rs`: the calls shadow gates (and the draft) would have stopped.
//! - `replay.rs`: a draft replayed against the calls recorded, and the draft in shadow's hits.
//! - `orders.rs`: the demo orders.
//! - `service.rs`: whether the database answers, and the pending approvals by gate (`/metrics`).
//! - `decision_links.rs`: a pair of signed decision links as recorded, and whether someone sees an
//!   approval (whom a link, or a chat app's button, may decide for).
//! - `channels.rs`: where an approval's Slack message was posted (the notification channels).
//!
//! It also hands out the bus ([`Reads::bus`]): what was committed, here or on another replica,
//! is announced there, so a reader waiting for a change subscribes before it looks.

mod approvals;
mod audit;
mod channels;
mod client_calls;
mod conversations;
mod decision_links;
mod delegations;
mod events;
mod grants;
mod orders;
mod people;
mod replay;
mod service;
mod shadow_hits;
mod tasks;
mod views;

use crate::{bus::Bus, store::Store};

pub use approvals::{ApprovalRow, Filter, QueueOrder, StateFilter};
pub use audit::{ExternalAnchor, Verification};
pub use client_calls::ClientCall;
pub use decision_links::LinkRow;
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
