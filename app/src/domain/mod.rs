//! Domain types shared by the server and the browser: the conversation event log, the views
//! folded from it, and the wire types of the REST API.

pub mod event;
pub mod fold;
pub mod rules;
pub mod wire;

pub use event::{ApprovalOutcome, Event, EventBody, Risk, TaskStatus};
pub use fold::{Card, CardStatus, ConversationView, GrantView, Item, fold};
