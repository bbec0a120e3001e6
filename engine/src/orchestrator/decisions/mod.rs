//! [`Decisions`]: what people, rules and deadlines decide about what waits, a file for each kind
//! of decision, each one write under the authority rules (`authority.rs`).

mod abort;
mod authority;
mod confirm;
mod decide;
mod escalate;
mod grants;
mod reclassify;
mod time_out;
mod waiting;

use std::sync::Arc;

use super::{TaskDriver, context::Context};
use crate::limits::Limits;

pub use authority::{Actor, Decision, SYSTEM, four_eyes};
pub use confirm::{ChatAnswer, Reply};
pub use reclassify::Reclassified;

pub(super) use authority::{decider_in, pending_approval};
pub(super) use confirm::question;

/// What people, rules and deadlines decide about the calls and tasks that wait: approve or reject
/// (`decide.rs`), answer in chat (`confirm.rs`), escalate (`escalate.rs`), time out
/// (`time_out.rs`), remind (`waiting.rs`), revoke a grant (`grants.rs`), abort (`abort.rs`), and
/// look again at what waits when the rules changed (`reclassify.rs`). Each is one write under the
/// authority rules (`authority.rs`); a task that may go on is then handed to its driver, the
/// [`TaskDriver`].
#[derive(Clone)]
pub struct Decisions {
    /// The store, configuration and tools, shared with the task driver.
    pub(super) ctx: Arc<Context>,
    /// Where a task that may go on after a decision is driven.
    driver: Arc<TaskDriver>,
    /// Each person's decisions per minute, counted by every entry point a person decides through
    /// ([`Decisions::count_attempt`]).
    limits: Arc<Limits>,
}

impl Decisions {
    pub fn new(driver: &Arc<TaskDriver>, limits: Arc<Limits>) -> Self {
        Self { ctx: Arc::clone(&driver.ctx), driver: Arc::clone(driver), limits }
    }

    /// The driver the tasks decided here go on in.
    pub fn driver(&self) -> &Arc<TaskDriver> {
        &self.driver
    }
}
