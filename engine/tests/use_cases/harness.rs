//! The engine without HTTP: a real database, the task driver over it with the scripted model,
//! and a restart that drops the process's part (drivers, pools) and opens the same database
//! again, as a new server would. The database is a SQLite file in a temporary directory, or, when
//! `COUNTERSIGN_TEST_POSTGRES` names a PostgreSQL server (scripts/test.sh starts one with
//! scripts/pg.sh and runs this suite a second time), a fresh database on it, made for each
//! [`Engine`] and remembered in its directory so that a restart opens the same one again (as the
//! server's suite does: server/tests/api/helpers.rs, `postgres` and `database_url`).

use std::{sync::Arc, time::Duration};

use domain::{ApprovalId, CallId, Event, EventBody, Role, TaskId, TaskStatus, UserId, wire::Conversation};
use engine::{
    agents::AgentsConfig,
    bus::Bus,
    clock::now_ms,
    limits::{Limits, Rate},
    model::Models,
    orchestrator::{Actor, BeforeCommitHook, Decision, Decisions, TaskDriver, sweeper},
    store::{
        NativePool, Store,
        approvals::{self, ApprovalRow},
        calls::{self, CallRow},
        conversations, events,
        orders::{self, OrderRow},
        tasks, users,
    },
    tools::{Registry, Tool},
};

/// The PostgreSQL server the suite runs against, when `COUNTERSIGN_TEST_POSTGRES` names one.
pub fn postgres() -> Option<String> {
    std::env::var("COUNTERSIGN_TEST_POSTGRES").ok().filter(|u| !u.is_empty())
}

/// The database of the engine whose files are in `dir`: SQLite in that directory, or a fresh
/// PostgreSQL database made on first use and remembered in the directory (so a restart finds it
/// again).
async fn database_url(dir: &std::path::Path) -> String {
    let Some(server) = postgres() else { return format!("sqlite://{}?mode=rwc", dir.join("countersign.db").display()) };
    let remembered = dir.join("database-url");
    if let Ok(url) = std::fs::read_to_string(&remembered) {
        return url;
    }
    use sqlx::Connection;
    let name = format!("cs_{}", uuid::Uuid::now_v7().simple());
    let mut admin = sqlx::PgConnection::connect(&server).await.expect("connect to the test PostgreSQL");
    sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut admin).await.expect("create a test database");
    admin.close().await.expect("the admin connection closes");
    let url = format!("{}/{name}", server.rsplit_once('/').expect("a URL with a database name").0);
    std::fs::write(&remembered, &url).expect("remember the database");
    url
}

/// A person, as the doors name one to the engine (no address, no session); their decisions are
/// counted under their name (any key of theirs will do).
pub fn actor(name: &str, role: Role) -> Actor {
    Actor {
        name: name.into(),
        user_id: Some(UserId::new(name)),
        role: Some(role),
        ip: None,
        user_agent: None,
        on_behalf_of: None,
        via: None,
        signed_in_at: None,
    }
}

/// Approving a call as proposed.
pub fn approve() -> Decision {
    Decision::Approve { args: None, grant: None }
}

/// How long a use case may take to settle before the test fails (nothing in them is slow).
const SETTLE_LIMIT: Duration = Duration::from_secs(20);

pub struct Engine {
    dir: Arc<tempfile::TempDir>,
    agents_toml: String,
    extra: Extra,
    pub store: Store,
    pub task_driver: Arc<TaskDriver>,
    pub decisions: Decisions,
}

/// Tools beside the built-in ones, the test hook before commits, and each person's decisions a
/// minute (none: as many as they like).
#[derive(Clone, Default)]
pub struct Extra {
    pub tools: Vec<Arc<dyn Tool>>,
    pub before_commit: Option<BeforeCommitHook>,
    pub decisions_per_minute: Option<u32>,
}

impl Engine {
    /// A fresh database, the agents of `agents_toml`.
    pub async fn start(agents_toml: &str) -> Self {
        Self::start_with(agents_toml, Extra::default()).await
    }

    /// A fresh database, the agents of `agents_toml`, with `extra`.
    pub async fn start_with(agents_toml: &str, extra: Extra) -> Self {
        let dir = Arc::new(tempfile::tempdir().expect("a temporary directory"));
        Self::open(dir, agents_toml.to_owned(), extra).await
    }

    async fn open(dir: Arc<tempfile::TempDir>, agents_toml: String, extra: Extra) -> Self {
        let url = database_url(dir.path()).await;
        let store = Store::connect(&url, Bus::default()).await.expect("the store opens");
        let mut registry = Registry::builtin();
        for tool in &extra.tools {
            registry.add(Arc::clone(tool)).expect("an extra tool joins the registry");
        }
        let agents = Arc::new(AgentsConfig::parse(&agents_toml, "test", &registry).expect("the agents parse"));
        let models = Models::build(&agents, None).expect("the models build");
        let hook = extra.before_commit.clone();
        let task_driver = TaskDriver::new(store.clone(), models, Arc::new(registry), agents, None, hook, Duration::from_secs(30));
        sweeper::resume_at_start_up(&task_driver).await.expect("resuming at start-up");
        let rule = Rate { limit: extra.decisions_per_minute.unwrap_or(u32::MAX), window: Duration::from_secs(60) };
        let decisions = Decisions::new(&task_driver, Arc::new(Limits::new(store.clone(), rule, rule, rule)));
        Self { dir, agents_toml, extra, store, task_driver, decisions }
    }

    /// Stops this process's part and starts a new one on the same database.
    pub async fn restart(self) -> Self {
        let Self { dir, agents_toml, extra, store, task_driver, decisions } = self;
        drop((task_driver, decisions));
        store.testing().writer().close().await;
        // PostgreSQL: the pool is the writer (closed above); the migrations' own pool goes too,
        // so nothing of this process is left connected when the next one starts.
        if let NativePool::Postgres(native) = store.native() {
            native.close().await;
        }
        drop(store);
        Self::open(dir, agents_toml, extra).await
    }

    /// A user (role `user`, made if new) and a conversation of theirs with `agent`.
    pub async fn conversation(&self, user: &str, agent: &str) -> Conversation {
        let owner = self.user(user, Role::User).await;
        conversations::create(&self.store, "a test chat", agent, &owner, None).await.expect("a conversation")
    }

    /// The account `name`, made with `role` if there is none yet.
    pub async fn user(&self, name: &str, role: Role) -> users::User {
        if let Some(made) = users::insert(&self.store, name, "not a password hash", role).await.expect("inserting a user") {
            return made;
        }
        users::credentials(&self.store, name).await.expect("reading a user").expect("the user exists").user
    }

    /// Starts a turn with `text` that a gate stops: its task (waiting) and its one pending approval.
    pub async fn ask(&self, conversation: &Conversation, text: &str) -> (TaskId, ApprovalRow) {
        let task = self.say(conversation, text).await;
        assert_eq!(self.status(&task).await, TaskStatus::InputRequired, "{text:?} waits for a decision");
        let mut pending = self.pending(&task).await;
        assert_eq!(pending.len(), 1, "{text:?} asks once: {pending:#?}");
        (task, pending.pop().expect("one approval"))
    }

    /// Starts a turn with `text` and waits until it settles.
    pub async fn say(&self, conversation: &Conversation, text: &str) -> TaskId {
        let task = self.task_driver.start_turn(conversation, text, None).await.expect("the turn starts");
        self.settle(&task).await;
        task
    }

    /// Waits until no driver works on the task and it is not `working`; its status then.
    pub async fn settle(&self, task: &TaskId) -> TaskStatus {
        let settled = async {
            loop {
                let row = tasks::get(self.store.testing().pool(), task).await.expect("reading the task").expect("the task exists");
                if row.status() != TaskStatus::Working && !self.task_driver.is_running(task) {
                    return row.status();
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        tokio::time::timeout(SETTLE_LIMIT, settled).await.unwrap_or_else(|_| panic!("task {task} did not settle in {SETTLE_LIMIT:?}"))
    }

    pub async fn status(&self, task: &TaskId) -> TaskStatus {
        tasks::get(self.store.testing().pool(), task).await.unwrap().expect("the task exists").status()
    }

    pub async fn pending(&self, task: &TaskId) -> Vec<ApprovalRow> {
        approvals::pending_for_task(self.store.testing().pool(), task).await.expect("reading pending approvals")
    }

    pub async fn approval(&self, id: &ApprovalId) -> ApprovalRow {
        approvals::get(self.store.testing().pool(), id).await.unwrap().expect("the approval exists")
    }

    pub async fn events(&self, conversation: &Conversation, task: &TaskId) -> Vec<Event> {
        events::of_task(self.store.testing().pool(), &conversation.id, task).await.expect("reading events")
    }

    /// The conversation's whole event log.
    pub async fn log(&self, conversation: &Conversation) -> Vec<Event> {
        events::after(self.store.testing().pool(), &conversation.id, 0).await.expect("reading the log")
    }

    /// How many times the call was started, over the conversation's whole log (each run of a
    /// tool is one `tool-started`).
    pub async fn runs(&self, conversation: &Conversation, call: &CallId) -> usize {
        let log = self.log(conversation).await;
        log.iter().filter(|e| matches!(&e.body, EventBody::ToolStarted { call_id, .. } if call_id == call)).count()
    }

    /// The tool call's row.
    pub async fn call(&self, id: &CallId) -> CallRow {
        calls::get(self.store.testing().pool(), id).await.expect("reading the call").expect("the call exists")
    }

    /// A demo order as it is now.
    pub async fn order(&self, id: i64) -> OrderRow {
        orders::get(self.store.testing().pool(), id).await.expect("reading the order").expect("the order exists")
    }

    /// Moves the approval's deadline into the past in the database, as if its time ran out.
    pub async fn run_out_of_time(&self, approval: &ApprovalId) {
        let moved = sqlx::query("UPDATE approvals SET deadline = $1 WHERE id = $2")
            .bind(now_ms() - 1000)
            .bind(approval.as_str())
            .execute(self.store.testing().writer().exec())
            .await
            .expect("the deadline moved");
        assert_eq!(moved.rows_affected(), 1);
    }

    /// A person deciding (what the card, the queue and every other door end in).
    pub async fn decide(&self, approval: &ApprovalId, decision: Decision, by: &str, role: Role) -> engine::Result<()> {
        self.decisions.decide(approval, decision, &actor(by, role)).await.map(drop)
    }

    /// One pass of the sweeper (timeout actions, escalations, reminders).
    pub async fn sweep(&self) {
        sweeper::sweep(&self.decisions).await.expect("the sweep went well");
    }
}

/// The support agent of the demo with one gate: every refund and cancellation waits for a
/// person (300 s, then rejected).
pub const SUPPORT: &str = r#"
[[agents]]
name = "support"
description = "refunds and cancels"
tools = ["get_order", "cancel_order", "process_refund"]

[[agents.gates]]
name = "refunds"
kind = "tools"
tools = ["cancel_order", "process_refund"]
"#;

/// The calls of the log (`tool-call` events) and their ids, in order.
pub fn proposed(log: &[Event]) -> Vec<(&str, &CallId)> {
    log.iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolCall { tool, call_id, .. } => Some((tool.as_str(), call_id)),
            _ => None,
        })
        .collect()
}

/// The last thing the assistant said in the log.
pub fn last_answer(log: &[Event]) -> &str {
    log.iter()
        .rev()
        .find_map(|e| match &e.body {
            EventBody::AssistantMessage { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .expect("the assistant answered")
}

/// The decisions recorded in the log about `approval` (`approval-decided` events).
pub fn decisions_of<'a>(log: &'a [Event], approval: &ApprovalId) -> Vec<&'a EventBody> {
    log.iter().map(|e| &e.body).filter(|b| matches!(b, EventBody::ApprovalDecided { approval_id, .. } if approval_id == approval)).collect()
}
