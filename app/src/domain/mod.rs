//! Domain types shared by the server and the browser: the conversation event log, the views
//! folded from it, and the wire types of the REST API.

pub mod args_form;
pub mod event;
pub mod fold;
pub mod ids;
pub mod naming;
pub mod page;
pub mod rules;
pub mod states;
pub mod wire;
pub mod wording;

pub use event::{ApprovalOutcome, Event, EventBody};
pub use fold::{Card, CardStatus, ConversationView, GrantView, Item, fold};
pub use ids::{ApprovalId, CallId, ConversationId, GrantId, TaskId, UserId};
pub use states::{ApprovalState, AuditKind, CallState, IllegalMove, Machine, Risk, Role, TaskStatus, TimeoutAction, UnknownName};
