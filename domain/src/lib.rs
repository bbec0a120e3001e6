//! Countersign's domain, shared by the server, the engine and the browser: ids and states, the
//! conversation event log and the views folded from it, who may decide what (`rules`), the wire
//! types of the REST API, and time. Default features pull in no web framework and no database;
//! `sqlx` and `openapi` add the row and schema derives the server side needs.

pub mod args_form;
pub mod call_facts;
pub mod event;
pub mod fold;
pub mod ids;
pub mod naming;
pub mod page;
pub mod replay;
pub mod rules;
pub mod states;
pub mod time;
pub mod wire;
pub mod wording;

pub use event::{ApprovalOutcome, Event, EventBody};
pub use fold::{Card, CardStatus, ConversationView, GrantView, Item, fold};
pub use ids::{ApprovalId, CallId, ConversationId, GrantId, TaskId, UserId};
pub use states::{ApprovalState, AuditKind, CallState, IllegalMove, Machine, Risk, Role, TaskStatus, TimeoutAction, UnknownName};
