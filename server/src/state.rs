//! The one application state shared by every handler.

use std::sync::Arc;

use axum::extract::FromRef;
use leptos::prelude::LeptosOptions;

use engine::reads::Reads;

use crate::{auth::limits::Limits, config::Config, orchestrator::TaskDriver, streams::OpenStreams};

/// Cloned for every request (axum's `State`), so it is one reference count: [`Shared`] behind an
/// `Arc`, read through `Deref` (`state.reads`).
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl AppState {
    pub fn new(shared: Shared) -> Self {
        Self(Arc::new(shared))
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

// What leptos_axum and the health check take from the state.
impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos_options.clone()
    }
}

impl FromRef<AppState> for Reads {
    fn from_ref(state: &AppState) -> Self {
        state.reads.clone()
    }
}

pub struct Shared {
    pub leptos_options: LeptosOptions,
    /// What the read-only routes ask the engine (engine/src/reads).
    pub reads: Reads,
    /// Drives tasks (engine/src/orchestrator).
    pub task_driver: Arc<TaskDriver>,
    /// What people, rules and deadlines decide about what waits: every door decides through it.
    pub decisions: engine::orchestrator::Decisions,
    /// Calls an outside client proposes (the MCP gateway).
    pub client_calls: engine::orchestrator::ClientCalls,
    /// The conversations the protocol gateways open (server/src/protocols).
    pub conversations: engine::orchestrator::Conversations,
    /// Signed decision links as recorded: issued, emailed to their person, revoked (the server
    /// signs them: server/src/links).
    pub decision_links: engine::orchestrator::DecisionLinks,
    /// What the notification channels sent (server/src/channels), recorded.
    pub notifications: engine::orchestrator::Notifications,
    /// Groups and delegations: who may decide (engine/src/people).
    pub people: Arc<crate::people::People>,
    /// A person's API tokens made and revoked, and logouts told to every replica
    /// (engine/src/people/credentials.rs).
    pub accounts: crate::people::Accounts,
    pub config: Arc<Config>,
    /// Logins and the MCP gateway's proposed calls count here; a person's decisions are counted
    /// by `decisions`, with the same limits.
    pub limits: Arc<Limits>,
    pub streams: OpenStreams,
    /// The key signed decision links are signed with (server/src/links).
    pub links: std::sync::Arc<crate::links::token::LinkKey>,
    /// Where people reach this server (`COUNTERSIGN_PUBLIC_URL`, else the address it listens on),
    /// for links in messages.
    pub base_url: std::sync::Arc<str>,
    /// The organisation's identity provider (`[oidc]`), when people log in through it.
    pub oidc: Option<std::sync::Arc<crate::auth::oidc::provider::Oidc>>,
    /// The Slack-compatible workspace approvals are posted to (`[slack]`), if any.
    pub slack: Option<std::sync::Arc<crate::channels::slack_workspace::Slack>>,
    /// A hash of the browser bundle this server serves (server/src/assets.rs).
    pub build_id: std::sync::Arc<str>,
    /// The work beside the requests, and its health (`/readyz`).
    pub background: engine::background::Background,
    /// When this server started (Unix ms, on the database's clock): the draft in shadow's hits
    /// are counted from then (`GET /api/policy`, the Policy page).
    pub started_ms: i64,
}
