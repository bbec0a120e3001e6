//! The engine as a program opens it: the database, the store's upkeep beside the requests, and
//! the use cases over it. The server's start-up and its command line build everything through a
//! [`Database`] and never hold the store (server/tests/api/layering.rs, docs/architecture.md,
//! "Crates"), so the web layer can reach the database only through the engine's use cases.

use std::{path::Path, sync::Arc, time::Duration};

use anyhow::Context;

use crate::{
    agents::AgentsConfig,
    background::Background,
    bus::Bus,
    delivery::Channel,
    limits::{Limits, Rate},
    model::Models,
    orchestrator::{BeforeCommitHook, Conversations, DecisionLinks, Notifications, TaskDriver},
    people::{Accounts, People},
    reads::Reads,
    store::{Backend, Store, audit, audit_anchors, backup, outbox, replicas, sqlite},
    tools::Registry,
    webhooks::Webhook,
};

/// The pool tower-sessions keeps login sessions in: the same database, through its own driver
/// (server/src/auth/session_store.rs).
pub use crate::store::NativePool as SessionPool;
/// What audit anchors are signed with, and one of them (`countersign audit checkpoint`).
pub use crate::store::audit_anchors::{Anchor, AuditKey};

/// One opened database; a clone shares it.
#[derive(Clone)]
pub struct Database {
    store: Store,
}

/// How often the store's upkeep runs ([`Database::start_upkeep`]).
pub struct Upkeep {
    /// Reading the database's clock again.
    pub clock_every: Duration,
    /// SQLite: checkpointing the write-ahead log.
    pub checkpoint_every: Duration,
    /// SQLite: the write-back thread's syncs of what was written.
    pub write_back_every: Duration,
}

impl Database {
    /// Opens the database at `url` (`sqlite://…`, created if missing, or `postgres://…`) and
    /// applies pending migrations; an event `webhooks` want is queued in the write that appends it.
    pub async fn open(url: &str, webhooks: &[Webhook]) -> anyhow::Result<Self> {
        let targets = webhooks.iter().map(|h| outbox::Target { url: h.url.clone(), events: h.events.clone() }).collect();
        Ok(Self { store: Store::connect(url, Bus::default()).await?.with_webhooks(targets) })
    }

    /// Opens the database at `url` for reading only (`countersign policy replay`): it must exist
    /// with exactly this build's migrations, and nothing is migrated or written (store/read_only.rs).
    pub async fn open_read_only(url: &str) -> anyhow::Result<Self> {
        Ok(Self { store: Store::connect_read_only(url, Bus::default()).await? })
    }

    /// Makes `clock::now_ms` follow the database's clock (PostgreSQL); how far it runs ahead of
    /// this host's, in ms.
    pub async fn follow_database_clock(&self) -> anyhow::Result<i64> {
        self.store.follow_database_clock().await
    }

    /// Starts the store's upkeep on `background`: following the database's clock; on SQLite,
    /// checkpoints and the write-back thread (store/sqlite/writeback.rs), so those checkpoints
    /// find little left to sync; on PostgreSQL, other replicas' events and chaining the audit
    /// entries that commits staged.
    pub fn start_upkeep(&self, background: &Background, upkeep: Upkeep) -> anyhow::Result<()> {
        let store = &self.store;
        background.start("database clock", |pulse| store.clone().keep_following_database_clock(upkeep.clock_every, pulse));
        if store.backend() == Backend::Sqlite {
            background.start("checkpoints", |pulse| sqlite::checkpoint::keep_checkpointing(store.clone(), upkeep.checkpoint_every, pulse));
        }
        sqlite::writeback::keep_writing_back(store, upkeep.write_back_every).context("cannot start the write-back thread")?;
        if store.backend() == Backend::Postgres {
            background.start("replica events", |pulse| replicas::listen(store.clone(), pulse));
            background.start("audit chain", |pulse| audit::keep_chaining(store.clone(), pulse));
        }
        Ok(())
    }

    /// Starts signing the audit chain's head with `key` every `every`, and, with a `retention`,
    /// deleting the entries older than that behind a signed anchor (store/audit_anchors.rs).
    pub fn start_audit_anchors(&self, background: &Background, key: AuditKey, every: Duration, retention: Option<Duration>) {
        let store = self.store.clone();
        background.start("audit anchors", |pulse| audit_anchors::keep_anchoring(store, key, every, retention, pulse));
    }

    /// Starts the delivery worker (delivery.rs) for `channels`; it ends at once when there are none.
    pub fn start_deliveries(&self, background: &Background, channels: Vec<Arc<dyn Channel>>) {
        let store = self.store.clone();
        background.start("deliveries", |pulse| crate::delivery::run(store, channels, pulse));
    }

    /// The pool for tower-sessions' session store.
    pub fn session_pool(&self) -> &SessionPool {
        self.store.native()
    }

    /// Copies the database to `file`, which must not exist yet (SQLite); the copy's size in bytes.
    pub async fn backup_to(&self, file: &Path) -> anyhow::Result<u64> {
        backup::to_file(&self.store, file).await
    }

    /// Signs the audit chain's head with `key` unless the newest checkpoint covers it already.
    pub async fn audit_checkpoint(&self, key: &AuditKey) -> anyhow::Result<Option<Anchor>> {
        audit_anchors::checkpoint(&self.store, key).await
    }

    /// Deletes the audit entries older than `before_ms` behind an anchor signed with `key`; how
    /// many went.
    pub async fn audit_prune(&self, key: &AuditKey, before_ms: i64) -> anyhow::Result<u64> {
        audit_anchors::prune(&self.store, key, before_ms).await
    }

    /// The read side (reads/).
    pub fn reads(&self) -> Reads {
        Reads::new(self.store.clone())
    }

    /// API tokens made and revoked, accounts made (people/credentials.rs).
    pub fn accounts(&self) -> Accounts {
        Accounts::new(self.store.clone())
    }

    /// Groups and delegations, beside the configuration file's groups (people/).
    pub fn people(&self, agents: &AgentsConfig) -> People {
        People::new(self.store.clone(), agents)
    }

    /// The conversations the protocol gateways open (orchestrator/conversations.rs).
    pub fn conversations(&self) -> Conversations {
        Conversations::new(self.store.clone())
    }

    /// Signed decision links as recorded (orchestrator/decision_links.rs).
    pub fn decision_links(&self) -> DecisionLinks {
        DecisionLinks::new(self.store.clone())
    }

    /// What the notification channels sent, recorded (orchestrator/notifications.rs).
    pub fn notifications(&self) -> Notifications {
        Notifications::new(self.store.clone())
    }

    /// The task driver, which drives tasks holding each one's lease for `task_lease`.
    pub fn task_driver(
        &self,
        models: Models,
        tools: Arc<Registry>,
        agents: Arc<AgentsConfig>,
        draft: Option<Arc<AgentsConfig>>,
        before_commit: Option<BeforeCommitHook>,
        task_lease: Duration,
    ) -> Arc<TaskDriver> {
        TaskDriver::new(self.store.clone(), models, tools, agents, draft, before_commit, task_lease)
    }

    /// The attempt limits, counted in the database so replicas share them (limits.rs).
    pub fn limits(&self, login_per_name: Rate, login_per_address: Rate, decisions_per_user: Rate) -> Limits {
        Limits::new(self.store.clone(), login_per_name, login_per_address, decisions_per_user)
    }
}
