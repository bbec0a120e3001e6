//! Builds the application (database, agents, task driver, router, Leptos SSR) and serves it
//! with its background sweeper beside it.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use anyhow::Context;
use axum::{Router, extract::DefaultBodyLimit, middleware, serve::ListenerExt};
use engine::{
    background::Background,
    database::{Database, Upkeep},
    people::Accounts,
    reads::Reads,
};
use leptos::prelude::LeptosOptions;
use tokio::net::TcpListener;
use tower_http::{
    CompressionLevel,
    compression::CompressionLayer,
    request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer},
    trace::TraceLayer,
};
use tower_sessions::{ExpiredDeletion, Expiry, SessionManagerLayer, cookie::SameSite};

use crate::{
    agents::AgentsConfig,
    api,
    auth::{self, limits::Rate},
    config::Config,
    model::{Model, Models},
    orchestrator::{BeforeCommitHook, ClientCalls, Decisions, sweeper},
    people::Role,
    state::AppState,
    tools::Registry,
};

/// Parts tests (and later, configuration) may replace.
#[derive(Default)]
pub struct Parts {
    pub model: Option<Arc<dyn Model>>,
    pub before_commit: Option<BeforeCommitHook>,
}

pub struct Application {
    listener: TcpListener,
    router: Router,
    decisions: Decisions,
    people: Arc<crate::people::People>,
    sweep_interval: std::time::Duration,
    write_stall_limit: std::time::Duration,
    /// Where the outbox's deliveries go (engine/src/delivery.rs).
    channels: Vec<Arc<dyn engine::delivery::Channel>>,
    background: Background,
    /// The deliveries start on it once the server runs.
    database: Database,
}

impl Application {
    pub async fn build(config: Config) -> anyhow::Result<Self> {
        Self::build_with(config, Parts::default()).await
    }

    pub async fn build_with(config: Config, parts: Parts) -> anyhow::Result<Self> {
        let mut registry = Registry::builtin();
        let agents = Arc::new(match &config.agents_path {
            Some(path) => AgentsConfig::load(path, &registry)?,
            None => AgentsConfig::demo(&registry)?,
        });
        // What `countersign policy check` warns about, said once at start-up too.
        for warning in engine::policy_warnings::warnings(&agents, &registry) {
            tracing::warn!("policy: {warning}");
        }
        // A draft every call is also put to, its differences recorded as shadow hits
        // (engine/src/draft.rs): checked as the live file is, and an error stops the start-up too.
        let draft = match &config.agents_draft_path {
            Some(path) => {
                let draft = AgentsConfig::load(path, &registry)
                    .with_context(|| format!("the draft policy COUNTERSIGN_AGENTS_DRAFT={}", path.display()))?;
                for warning in engine::policy_warnings::warnings(&draft, &registry) {
                    tracing::warn!("draft: {warning}");
                }
                if draft.version == agents.version {
                    tracing::warn!("draft: {} is the live configuration: it can differ on no call", path.display());
                }
                tracing::info!(draft_version = draft.version, live_version = agents.version, "a draft policy shadows the live one");
                Some(Arc::new(draft))
            }
            None => None,
        };
        for tool in agents.delegate_tools() {
            registry.add(tool)?;
        }
        for server in &agents.mcp_servers {
            let client = crate::tools::mcp::connect(server).await?;
            let wanted = agents.mcp_tools.get(&server.name).cloned().unwrap_or_default();
            for tool in crate::tools::mcp::tools(server, client, &wanted).await? {
                registry.add(tool)?;
            }
            tracing::info!(server = server.name, tools = wanted.len(), "connected MCP server");
        }
        let tools = Arc::new(registry);
        let webhooks = agents.webhooks.iter().map(crate::webhooks::Webhook::from_config).collect::<anyhow::Result<Vec<_>>>()?;
        let database = Database::open(&config.database_url, &webhooks).await?;
        let reads = database.reads();
        let accounts = database.accounts();
        if config.demo_accounts {
            seed_demo_accounts(&reads, &accounts).await?;
        }
        let sessions =
            crate::auth::session_store::Sessions::open(database.session_pool()).await.context("failed to create the session table")?;
        // Deadlines, reminders, escalations and outbox leases are on the database's clock.
        let ahead = database.follow_database_clock().await?;
        if ahead.abs() > 1000 {
            tracing::warn!(ahead_ms = ahead, "this host's clock differs from the database's; following the database's");
        }
        let background = Background::default();
        // The database's clock, SQLite's checkpoints and write-back, and on PostgreSQL other
        // replicas' events and the audit chain (engine/src/database.rs).
        let upkeep = Upkeep {
            clock_every: Duration::from_secs(30),
            checkpoint_every: Duration::from_millis(500),
            write_back_every: Duration::from_millis(20),
        };
        database.start_upkeep(&background, upkeep)?;
        // Expired sessions are deleted hourly so the table does not grow without bound.
        let expired = sessions.clone();
        background.start("expired sessions", |_| async move {
            if let Err(err) = expired.continuously_delete_expired(tokio::time::Duration::from_secs(3600)).await {
                tracing::error!(error = ?err, "deleting expired sessions stopped");
            }
        });

        if agents.sends_email() && config.smtp_url.is_none() {
            anyhow::bail!("a gate has notify = [\"email\"]: set COUNTERSIGN_SMTP_URL (e.g. smtp://127.0.0.1:25) so it can be sent");
        }
        let slack = agents.slack.clone().map(crate::channels::slack_workspace::Slack::new).transpose()?.map(Arc::new);
        let models = Models::build(&agents, parts.model)?;
        let people = Arc::new(database.people(&agents));
        let oidc_config = agents.oidc.clone();
        let fresh_sign_in = engine::policy_warnings::asks_fresh_sign_in(&agents).then(|| agents.clone());
        // Before any call is put to the draft: its hits are counted from here (the Policy page).
        let started_ms = engine::clock::now_ms();
        let task_driver = database.task_driver(models, tools, agents, draft, parts.before_commit, config.task_lease);
        background.start("task claims", |pulse| Arc::clone(&task_driver).renew_claims(pulse));

        let listener = TcpListener::bind(config.addr).await.with_context(|| format!("failed to listen on {}", config.addr))?;
        let addr = listener.local_addr()?;
        // The bundle is served under a path named by its contents (server/src/assets.rs).
        let build_id: Arc<str> = crate::assets::build_id(&config.site_root).into();
        let leptos_options = LeptosOptions::builder()
            .output_name(app::OUTPUT_NAME)
            .site_root(config.site_root.to_string_lossy().into_owned())
            .site_pkg_dir(format!("pkg/{build_id}"))
            .site_addr(addr)
            .build();
        crate::plain_page::use_build(&build_id);
        let sweep_interval = config.sweep_interval;
        let write_stall_limit = config.write_stall_limit;
        let body_limit = config.body_limit;
        let secure_cookies = config.secure_cookies;
        let trusted_proxies = auth::client_ip::TrustedProxies(Arc::new(config.trusted_proxies.clone()));
        let limits = Arc::new(database.limits(
            Rate { limit: config.login_failures_per_name, window: config.login_window },
            Rate { limit: config.login_failures_per_address, window: config.login_window },
            Rate { limit: config.decisions_per_minute, window: Duration::from_secs(60) },
        ));
        background.start("rate limits", |_| limits.clone().forget_old_counters());
        // A person's decisions are counted where they are made
        // (engine/src/orchestrator/decisions/authority.rs).
        let decisions = Decisions::new(&task_driver, limits.clone());
        if let Some(key) = config.audit_key.clone() {
            database.start_audit_anchors(&background, key, config.audit_checkpoint_every, config.audit_retention);
        }
        let streams = crate::streams::OpenStreams::new(config.streams_per_user, config.stream_lifetime);
        let links = Arc::new(crate::links::key(&config, &database.decision_links()).await?);
        let base_url: Arc<str> = config.public_url.clone().unwrap_or_else(|| format!("http://{addr}")).into();
        let oidc = crate::auth::oidc::provider::configured(oidc_config, &base_url)?.map(Arc::new);
        // A gate that asks for a fresh sign-in needs the provider's auth_time: said once its
        // discovery is read, in the background so that a provider that is down holds nothing up
        // (docs/sign-in.md, "Signing in again for risky gates").
        if let (Some(oidc), Some(agents)) = (oidc.clone(), fresh_sign_in) {
            tokio::spawn(async move {
                if let Ok(claims) = oidc.claims_supported().await {
                    for warning in engine::policy_warnings::fresh_sign_in_warnings(&agents, claims.as_deref()) {
                        tracing::warn!("policy: {warning}");
                    }
                }
            });
        }
        let state = AppState::new(crate::state::Shared {
            links,
            base_url,
            slack: slack.clone(),
            oidc,
            build_id,
            leptos_options,
            streams,
            reads,
            task_driver: task_driver.clone(),
            decisions: decisions.clone(),
            client_calls: ClientCalls::new(&task_driver),
            conversations: database.conversations(),
            decision_links: database.decision_links(),
            notifications: database.notifications(),
            people: people.clone(),
            accounts,
            background: background.clone(),
            config: Arc::new(config),
            limits: limits.clone(),
            started_ms,
        });

        let mut channels: Vec<Arc<dyn engine::delivery::Channel>> = Vec::new();
        if let Some(webhooks) = crate::webhooks::Webhooks::channel(webhooks) {
            channels.push(Arc::new(webhooks));
        }
        if let Some(slack) = slack {
            channels.push(Arc::new(crate::channels::slack::SlackMessages { state: state.clone(), slack: (*slack).clone() }));
        }
        if let Some(url) = &state.config.smtp_url {
            let mailer = crate::channels::email::Mailer::new(url, &state.config.mail_from)?;
            channels.push(Arc::new(crate::channels::email::Emails { state: state.clone(), mailer }));
        }

        let session_layer = SessionManagerLayer::new(sessions)
            .with_name(crate::auth::SESSION_COOKIE)
            .with_same_site(SameSite::Lax)
            .with_http_only(true)
            .with_secure(secure_cookies)
            .with_expiry(Expiry::OnInactivity(tower_sessions::cookie::time::Duration::days(7)));

        let router = Router::new()
            .merge(api::router())
            .merge(crate::pages::router(&state))
            .merge(crate::links::page::router())
            .merge(crate::forms::router())
            .merge(crate::channels::slack::router())
            .merge(crate::auth::oidc::router())
            .merge(crate::protocols::a2a::router())
            .merge(crate::protocols::ag_ui::router())
            .merge(crate::protocols::mcp::router(&state))
            .merge(crate::assets::router())
            .fallback(leptos_axum::file_and_error_handler_with_context::<AppState, _>(crate::pages::nonce_context, app::shell))
            .layer(DefaultBodyLimit::max(body_limit))
            .layer(axum::Extension(api::BodyLimit(body_limit)))
            .layer(axum::Extension(trusted_proxies))
            // Outermost last: sessions, then who is asking, then the cross-site and login checks.
            .layer(middleware::from_fn(auth::pages::require_login))
            .layer(middleware::from_fn(auth::csrf::same_origin_only))
            .layer(middleware::from_fn_with_state(state.clone(), auth::resolve))
            .layer(session_layer)
            .layer(middleware::from_fn(api::refuse_nul))
            .layer(middleware::from_fn(api::close_after_too_large))
            .layer(middleware::from_fn(crate::security_headers::add))
            .layer(middleware::from_fn_with_state(state.clone(), crate::assets::label))
            // Pages and JSON answers compressed by `Accept-Encoding` (brotli, else gzip). Event
            // streams are not (each event must reach the client when written), nor the bundle,
            // which is served precompressed (server/src/assets.rs), nor tiny answers.
            .layer(CompressionLayer::new().br(true).gzip(true).quality(CompressionLevel::Precise(4)))
            // Every request gets an id (or keeps the caller's `x-request-id`); its span carries the
            // id into the logs of everything it starts, a task's driver included.
            .layer(TraceLayer::new_for_http().make_span_with(|request: &axum::http::Request<_>| {
                let id = request.headers().get("x-request-id").and_then(|v| v.to_str().ok()).unwrap_or_default();
                let uri = crate::links::loggable_path(request.uri().path());
                tracing::info_span!("request", method = %request.method(), uri = %uri, request_id = %id)
            }))
            .layer(PropagateRequestIdLayer::x_request_id())
            .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
            .with_state(state);
        Ok(Self { listener, router, decisions, people, sweep_interval, write_stall_limit, channels, background, database })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().expect("BUG: a bound listener has an address")
    }

    /// Resumes interrupted tasks, then serves until Ctrl-C / SIGTERM with the sweeper beside it.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        self.run_until(shutdown_signal()).await
    }

    /// Like [`Self::run_until_stopped`], but stops when `stop` completes instead of on a signal.
    /// Servers inside another program (the integration tests) use it, so that the program's own
    /// Ctrl-C / SIGTERM handling stays in charge.
    pub async fn run_until(self, stop: impl std::future::Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
        // Approvals asked (and grants made) under another configuration are checked against this one.
        let reclassified = self.decisions.reclassify_at_start_up().await?;
        if reclassified != Default::default() {
            tracing::info!(
                kept = reclassified.kept,
                canceled = reclassified.canceled,
                grants_ended = reclassified.grants_ended,
                "checked what earlier configurations left against this one"
            );
        }
        // The file's groups may have changed since the approvals that name them were asked.
        let moved = self.people.reresolve_configured_groups().await?;
        if moved > 0 {
            tracing::info!(pending_approvals = moved, "re-resolved the configuration file's groups");
        }
        let resumed = sweeper::resume_at_start_up(self.decisions.driver()).await?;
        if resumed > 0 {
            tracing::info!(resumed, "resumed tasks left mid-way");
        }
        let (decisions, every) = (self.decisions.clone(), self.sweep_interval);
        self.background.start("sweeper", |pulse| sweeper::run(decisions, every, pulse));
        if !self.channels.is_empty() {
            self.database.start_deliveries(&self.background, self.channels.clone());
        }
        // Printed on stdout (not only logged) so scripts and tests can find the chosen port.
        println!("Countersign listening on http://{}", self.local_addr());
        let service = self.router.into_make_service_with_connect_info::<crate::stalled_writes::PeerAddr>();
        // No Nagle delay: small SSE frames and JSON answers go out at once (it cost ~40 ms each).
        let listener = self.listener.tap_io(|tcp| {
            if let Err(err) = tcp.set_nodelay(true) {
                tracing::warn!(error = %err, "cannot set TCP_NODELAY");
            }
        });
        // A client that stops reading is dropped (src/stalled_writes.rs).
        let listener = crate::stalled_writes::StallLimit { inner: listener, limit: self.write_stall_limit };
        // Graceful shutdown waits for open connections, but an open page's event stream never
        // ends by itself: after a short grace period the process stops anyway (clients reconnect
        // with Last-Event-ID to the next server; nothing lives only in memory).
        let (stopping_tx, mut stopping) = tokio::sync::watch::channel(false);
        let server = axum::serve(listener, service).with_graceful_shutdown(async move {
            stop.await;
            let _ = stopping_tx.send(true);
        });
        let grace = async move {
            let _ = stopping.wait_for(|s| *s).await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
            tracing::info!("stopping with event streams still open");
        };
        let stopped = tokio::select! {
            result = server => result.context("server error"),
            () = grace => Ok(()),
        };
        self.background.stop();
        stopped
    }
}

/// The accounts the README documents for trying the demo: `demo` (user) and `admin`.
async fn seed_demo_accounts(reads: &Reads, accounts: &Accounts) -> anyhow::Result<()> {
    for (name, password, role) in [("demo", "demo-password", Role::User), ("admin", "admin-password", Role::Admin)] {
        if reads.credentials(name).await?.is_none() {
            match crate::cli::add_user(accounts, name, password.to_owned(), role).await {
                Ok(_) => tracing::info!(user = name, "created demo account"),
                // Another replica starting at the same moment created it first.
                Err(_) if reads.credentials(name).await?.is_some() => {}
                Err(err) => return Err(err),
            }
        }
    }
    Ok(())
}

/// How long requests in flight get to finish after Ctrl-C / SIGTERM.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

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
