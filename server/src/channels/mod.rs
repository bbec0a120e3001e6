//! Where deciders are reached besides the app: email (`email.rs`) and a Slack-compatible
//! workspace (`slack.rs`; its Web API client and signature check: `slack_workspace.rs`). Messages
//! wait in the outbox with the write that asked for them (store/src/outbox.rs), so none is lost
//! or sent twice by two replicas; each carries signed decision links (server/src/links).
//! Requester text in them is made inert first (`neutral.rs`).

pub mod email;
pub mod neutral;
pub mod slack;
pub mod slack_workspace;
