//! The engine without HTTP: a real SQLite database in a temporary directory, the orchestrator
//! over it with the scripted model, and a restart that drops the process's part (drivers,
//! pools) and opens the same database again, as a new server would.

use std::{sync::Arc, time::Duration};

use domain::{ApprovalId, Event, Role, TaskId, TaskStatus, wire::Conversation};
use engine::{
    agents::AgentsConfig,
    bus::Bus,
    model::Models,
    orchestrator::{Actor, BeforeCommitHook, Decision, Decisions, Orchestrator, sweeper},
    store::{
        Store,
        approvals::{self, ApprovalRow},
        conversations, events, tasks, users,
    },
    tools::{Registry, Tool},
};

/// How long a use case may take to settle before the test fails (nothing in them is slow).
const SETTLE_LIMIT: Duration = Duration::from_secs(20);

pub struct Engine {
    dir: Arc<tempfile::TempDir>,
    agents_toml: String,
    extra: Extra,
    pub store: Store,
    pub orchestrator: Arc<Orchestrator>,
    pub decisions: Decisions,
}

/// Tools beside the built-in ones, and the test hook before commits.
#[derive(Clone, Default)]
pub struct Extra {
    pub tools: Vec<Arc<dyn Tool>>,
    pub before_commit: Option<BeforeCommitHook>,
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
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("countersign.db").display());
        let store = Store::connect(&url, Bus::default()).await.expect("the store opens");
        let mut registry = Registry::builtin();
        for tool in &extra.tools {
            registry.add(Arc::clone(tool)).expect("an extra tool joins the registry");
        }
        let agents = Arc::new(AgentsConfig::parse(&agents_toml, "test", &registry).expect("the agents parse"));
        let models = Models::build(&agents, None).expect("the models build");
        let hook = extra.before_commit.clone();
        let orchestrator = Orchestrator::new(store.clone(), models, Arc::new(registry), agents, None, hook, Duration::from_secs(30));
        sweeper::resume_at_start_up(&orchestrator).await.expect("resuming at start-up");
        let decisions = Decisions::new(&orchestrator);
        Self { dir, agents_toml, extra, store, orchestrator, decisions }
    }

    /// Stops this process's part and starts a new one on the same database.
    pub async fn restart(self) -> Self {
        let Self { dir, agents_toml, extra, store, orchestrator, decisions } = self;
        drop((orchestrator, decisions));
        store.testing().writer().close().await;
        Self::open(dir, agents_toml, extra).await
    }

    /// A user (role `user`) and a conversation of theirs with `agent`.
    pub async fn conversation(&self, user: &str, agent: &str) -> Conversation {
        let owner =
            users::insert(&self.store, user, "not a password hash", Role::User).await.expect("inserting a user").expect("a new user");
        conversations::create(&self.store, "a test chat", agent, &owner, None).await.expect("a conversation")
    }

    /// Starts a turn with `text` and waits until it settles.
    pub async fn say(&self, conversation: &Conversation, text: &str) -> TaskId {
        let task = self.orchestrator.start_turn(conversation, text, None).await.expect("the turn starts");
        self.settle(&task).await;
        task
    }

    /// Waits until no driver works on the task and it is not `working`; its status then.
    pub async fn settle(&self, task: &TaskId) -> TaskStatus {
        let settled = async {
            loop {
                let row = tasks::get(self.store.testing().pool(), task).await.expect("reading the task").expect("the task exists");
                if row.status() != TaskStatus::Working && !self.orchestrator.is_running(task) {
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

    /// A person deciding (what the card, the queue and every other door end in).
    pub async fn decide(&self, approval: &ApprovalId, decision: Decision, by: &str, role: Role) -> engine::Result<()> {
        let actor =
            Actor { name: by.into(), role: Some(role), ip: None, user_agent: None, on_behalf_of: None, via: None, signed_in_at: None };
        self.decisions.decide(approval, decision, &actor).await.map(drop)
    }

    /// One pass of the sweeper (timeout actions, escalations, reminders).
    pub async fn sweep(&self) {
        sweeper::sweep(&self.decisions).await.expect("the sweep went well");
    }
}
