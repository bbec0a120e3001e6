//! One module per page of the app.
pub mod audit;
pub mod chat;
pub mod groups;
pub mod login;
pub mod not_found;
pub mod policy;
pub mod queue;
