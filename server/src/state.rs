//! The one application state shared by every handler.

use axum::extract::FromRef;
use leptos::prelude::LeptosOptions;

use crate::{config::Config, store::Store};

#[derive(Clone, FromRef)]
pub struct AppState {
    pub leptos_options: LeptosOptions,
    pub store: Store,
    pub config: std::sync::Arc<Config>,
}
