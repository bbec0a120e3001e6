//! One module per page of the app.
pub mod chat;
pub mod not_found;
