//! Builds the application (database, router, Leptos SSR) and serves it.

use std::{net::SocketAddr, sync::Arc};

use anyhow::Context;
use axum::Router;
use leptos::prelude::LeptosOptions;
use leptos_axum::{LeptosRoutes, generate_route_list};
use tokio::net::TcpListener;
use tower_http::trace::TraceLayer;
use tower_sessions::{Expiry, SessionManagerLayer, cookie::SameSite};
use tower_sessions_sqlx_store::SqliteStore;

use crate::{api, config::Config, state::AppState, store::Store};

pub struct Application {
    listener: TcpListener,
    router: Router,
}

impl Application {
    pub async fn build(config: Config) -> anyhow::Result<Self> {
        let store = Store::connect(&config.database_url).await?;
        let sessions = SqliteStore::new(store.pool().clone());
        sessions.migrate().await.context("failed to create the session table")?;

        let listener = TcpListener::bind(config.addr)
            .await
            .with_context(|| format!("failed to listen on {}", config.addr))?;
        let addr = listener.local_addr()?;
        let leptos_options = LeptosOptions::builder()
            .output_name(app::OUTPUT_NAME)
            .site_root(config.site_root.to_string_lossy().into_owned())
            .site_addr(addr)
            .build();
        let state = AppState { leptos_options, store, config: Arc::new(config) };

        let session_layer = SessionManagerLayer::new(sessions)
            .with_same_site(SameSite::Lax)
            .with_http_only(true)
            .with_secure(false)
            .with_expiry(Expiry::OnInactivity(tower_sessions::cookie::time::Duration::days(7)));

        let routes = generate_route_list(app::App);
        let router = Router::new()
            .merge(api::router())
            .leptos_routes(&state, routes, {
                let options = state.leptos_options.clone();
                move || app::shell(options.clone())
            })
            .fallback(leptos_axum::file_and_error_handler::<AppState, _>(app::shell))
            .layer(session_layer)
            .layer(TraceLayer::new_for_http())
            .with_state(state);
        Ok(Self { listener, router })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().expect("BUG: a bound listener has an address")
    }

    /// Serves until Ctrl-C / SIGTERM.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        // Printed on stdout (not only logged) so scripts and tests can find the chosen port.
        println!("Countersign listening on http://{}", self.local_addr());
        axum::serve(self.listener, self.router)
            .with_graceful_shutdown(shutdown_signal())
            .await
            .context("server error")
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        if let Ok(mut sig) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            sig.recv().await;
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = terminate => {} }
    tracing::info!("shutting down");
}
