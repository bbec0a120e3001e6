//! One module per page of the app.
pub mod home;
pub mod not_found;
