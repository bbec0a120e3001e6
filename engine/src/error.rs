//! What can go wrong in a use case, named for the domain: the doors (REST, links, chat, Slack,
//! email, A2A, AG-UI, MCP) each say it their own way (`server/src/error.rs` turns it into HTTP
//! statuses, `server/src/protocols/a2a/` into JSON-RPC codes).

use domain::{TaskId, wire::FieldProblem};

use crate::limits::LimitRefusal;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No such approval, task, grant, group or delegation.
    #[error("{0}")]
    Unknown(String),
    /// The authority rules do not let this actor do this (checked inside the use case's write).
    #[error("{0}")]
    NotAllowed(String),
    /// The thing exists, but its state no longer (or not yet) allows this: already decided,
    /// already exists, the tool is gone, the deadline passed.
    #[error("{0}")]
    WrongState(String),
    /// A new turn while the conversation's current one (this task) has not finished.
    #[error("the conversation's current task {0} has not finished")]
    TurnUnfinished(TaskId),
    /// The request itself is wrong; each problem names its field (a JSON pointer).
    #[error("{message}")]
    Invalid { message: String, details: Vec<FieldProblem> },
    /// A driver's write found its task's lease gone (it ran out, or another driver claimed the
    /// task): the write was dropped and nothing of it was stored.
    #[error("the lease on task {0} is no longer held by this driver; its write was dropped")]
    LeaseLost(TaskId),
    /// The person used up their decisions for now (`crate::limits`): the doors answer 429 with
    /// `Retry-After`, or their protocol's own refusal.
    #[error("{message}")]
    Limited { message: String, retry_after_secs: u64 },
    /// The store or a tool failed: nothing the caller can fix.
    #[error(transparent)]
    Internal(anyhow::Error),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A request whose field `path` (a JSON pointer) is wrong, and why.
    pub fn invalid(path: &str, message: String) -> Self {
        Self::Invalid { details: vec![FieldProblem::new(path, message.clone())], message }
    }
}

/// Keeps an engine error's variant when it passed through code that speaks `anyhow`, and says the
/// store's lost lease as `LeaseLost`; anything else is internal.
impl From<anyhow::Error> for Error {
    fn from(err: anyhow::Error) -> Self {
        match err.downcast::<Error>() {
            Ok(err) => err,
            Err(err) => match err.downcast::<store::LeaseLost>() {
                Ok(store::LeaseLost(task)) => Error::LeaseLost(task),
                Err(err) => Error::Internal(err),
            },
        }
    }
}

/// Over the limit is `Limited`; counters that could not be read are internal.
impl From<LimitRefusal> for Error {
    fn from(refusal: LimitRefusal) -> Self {
        match refusal {
            LimitRefusal::Limited { message, retry_after_secs } => Self::Limited { message, retry_after_secs },
            LimitRefusal::Failed(err) => Self::Internal(err),
        }
    }
}

impl From<sqlx::Error> for Error {
    fn from(err: sqlx::Error) -> Self {
        Self::Internal(err.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_lease_stays_one_through_anyhow() {
        let lost: anyhow::Error = Error::LeaseLost(TaskId::new("t1")).into();
        assert!(matches!(Error::from(lost), Error::LeaseLost(id) if id.as_str() == "t1"));
        let from_the_store = anyhow::Error::from(store::LeaseLost(TaskId::new("t2"))).context("failed to commit");
        assert!(matches!(Error::from(from_the_store), Error::LeaseLost(id) if id.as_str() == "t2"));
        let other = Error::from(anyhow::anyhow!("disk full"));
        assert!(matches!(other, Error::Internal(e) if e.to_string() == "disk full"));
    }
}
