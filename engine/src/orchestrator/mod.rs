//! The use cases that move tasks on, in three parts, and three beside them.
//!
//! - [`TaskDriver`] drives tasks from the event log (docs/architecture.md, decision 2): it runs
//!   approved calls, asks the model for the next step when nothing is pending, and stops when a
//!   gate asks for a human (`task_driver/`).
//! - [`ClientCalls`] are the calls an outside client proposes (`client_calls.rs`).
//! - [`Decisions`] are what people, rules and deadlines decide about what waits (`decisions/`).
//!
//! The three share one `Context` (`context.rs`): the store, the configuration, the models and
//! tools, the metrics. Decisions and client calls hold the task driver as well, only to hand it
//! the tasks that may go on (`trigger`, or a lease claimed in their write).
//!
//! - [`DecisionLinks`] issue, email and revoke signed decision links (`decision_links.rs`), and
//!   [`Notifications`] record what the notification channels sent (`notifications.rs`): writes
//!   about what waits that decide nothing.
//! - [`Conversations`] open the conversations the protocol gateways' turns and calls go to
//!   (`conversations.rs`).
//!
//! Nothing waits in memory for a decision: a decision is a database write followed by the
//! driver's `trigger`, and a restart resumes every task that was working.

mod client_calls;
mod context;
mod conversations;
mod decision_links;
mod decisions;
mod notifications;
pub mod sweeper;
mod task_driver;

use std::sync::Arc;

use self::context::Context;

pub use crate::store::outbox::EmailNotice;
pub use client_calls::Ran;
pub use conversations::{Conversations, IdFrom, gateway_id};
pub use decision_links::{DecisionLinks, IssuedLink, sees_approval};
pub use decisions::{Actor, ChatAnswer, Decision, Decisions, Reclassified, Reply, SYSTEM, four_eyes};
pub use notifications::{Notifications, SlackSent};
pub use task_driver::{MAX_FAILED_ATTEMPTS, TaskDriver};

/// Test hook run just before a transaction commits: with the call id after a built-in tool
/// applied its effect, with `step:<task id>` after a model step was recorded, with
/// `read:<tool> <args>` after a client's read that ran was recorded (perhaps with others).
pub type BeforeCommitHook = Arc<dyn Fn(&str) -> anyhow::Result<()> + Send + Sync>;

/// Calls an outside client (the MCP gateway) proposes (`client_calls.rs`): one that no gate stops
/// runs at once, without a driver; any other becomes a task for the [`TaskDriver`] to drive.
#[derive(Clone)]
pub struct ClientCalls {
    /// The store, configuration and tools, shared with the task driver.
    ctx: Arc<Context>,
    /// Where a gated call's task is driven.
    driver: Arc<TaskDriver>,
    waiting: Arc<client_calls::Waiting>,
}

impl ClientCalls {
    pub fn new(driver: &Arc<TaskDriver>) -> Self {
        Self { ctx: Arc::clone(&driver.ctx), driver: Arc::clone(driver), waiting: Arc::default() }
    }
}
