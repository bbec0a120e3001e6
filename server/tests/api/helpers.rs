//! `spawn_app()` and the small clients the integration tests share.

use domain::{ConversationId, TaskId};
use std::{sync::Arc, time::Duration};

use countersign::{
    config::Config,
    model::scripted::ScriptedModel,
    orchestrator::BeforeCommitHook,
    startup::{Application, Parts},
};
use domain::{
    Event, EventBody, TaskStatus,
    wire::{Approval, ConversationDetail, Order},
};
use eventsource_stream::Eventsource;
use futures::{Stream, StreamExt};
use serde_json::{Value, json};

#[derive(Clone)]
pub struct TestApp {
    pub base_url: String,
    /// Sends alice's API token (a plain user) unless made with `as_user`.
    pub client: reqwest::Client,
    pub model: Arc<ScriptedModel>,
    /// Kept alive for the whole test: dropping it deletes the database.
    pub data_dir: Arc<tempfile::TempDir>,
    /// API token of each test user: alice and bob (users), root (admin).
    pub tokens: Arc<std::collections::HashMap<String, String>>,
}

pub const PASSWORD: &str = "test-password-1";

/// Every client a test makes starts here, so no request can wait forever: a connection must open
/// within 5 s and a response (or the next piece of a streamed body) arrive within 30 s.
/// Event streams stay open longer than that: the server sends a keep-alive every 15 s.
pub fn test_client() -> reqwest::ClientBuilder {
    reqwest::Client::builder().connect_timeout(Duration::from_secs(5)).read_timeout(Duration::from_secs(30))
}

/// A client that sends `token` on every request.
pub fn client_with_token(token: &str) -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(reqwest::header::AUTHORIZATION, format!("Bearer {token}").parse().unwrap());
    test_client().default_headers(headers).build().unwrap()
}

/// Creates alice, bob (users) and root (admin), each with a token.
async fn create_users(database_url: &str) -> std::collections::HashMap<String, String> {
    use countersign::{auth::tokens, bus::Bus, cli::add_user, people::Accounts};
    use engine::store::{
        Store,
        users::{self, Role},
    };
    let store = Store::connect(database_url, Bus::default()).await.expect("store");
    let accounts = Accounts::new(store.clone());
    let mut map = std::collections::HashMap::new();
    for (name, role) in [("alice", Role::User), ("bob", Role::User), ("root", Role::Admin)] {
        let user = add_user(&accounts, name, PASSWORD.to_owned(), role).await.expect("user");
        let token = tokens::generate();
        users::insert_token(store.testing().pool(), &user.id, "tests", &tokens::digest(&token), "read decide call").await.expect("token");
        map.insert(name.to_owned(), token);
    }
    map
}

/// Agent configuration whose approvals time out after `secs`.
pub fn agents_with_timeout(secs: f64) -> String {
    format!(
        "[defaults]\ntimeout_secs = {secs}\n[[agents]]\nname = \"support\"\n\
         tools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n\
         require_approval = [\"cancel_order\", \"process_refund\"]\n"
    )
}

#[derive(Default)]
pub struct Options {
    pub agents_toml: Option<String>,
    /// `COUNTERSIGN_AGENTS_DRAFT`: a draft configuration every call is also put to.
    pub agents_draft_toml: Option<String>,
    pub before_commit: Option<BeforeCommitHook>,
    pub body_limit: Option<usize>,
    pub decisions_per_minute: Option<u32>,
    /// Use the models the agent config names instead of the counting scripted model.
    pub configured_models: bool,
    /// How often the sweeper applies timeouts (default 20 ms).
    pub sweep_ms: Option<u64>,
    /// `COUNTERSIGN_TRUSTED_PROXIES`.
    pub trusted_proxies: Option<String>,
    /// Failed logins allowed per user name and per address, and their window in ms.
    pub login_limits: Option<(u32, u32, u64)>,
    /// Event streams per user and their lifetime in ms.
    pub streams: Option<(usize, u64)>,
    /// `COUNTERSIGN_AUDIT_KEY` (checkpoints are then signed only on request: the interval is an hour).
    pub audit_key: Option<String>,
    /// `COUNTERSIGN_PAGE_ITEMS`: items a chat shows before "Show earlier".
    pub page_items: Option<usize>,
    /// `COUNTERSIGN_SMTP_URL`: where email notifications go.
    pub smtp_url: Option<String>,
    /// `COUNTERSIGN_WRITE_STALL_MS`: how long a client may take nothing written to it.
    pub write_stall_ms: Option<u64>,
    /// `COUNTERSIGN_SITE_ROOT`: where the browser bundle is (`pkg/`).
    pub site_root: Option<String>,
}

/// Starts the real application on 127.0.0.1:0 with a fresh database in a temporary directory.
pub async fn spawn_app() -> TestApp {
    spawn_app_with(Options::default()).await
}

/// The PostgreSQL server the suite runs against, when `COUNTERSIGN_TEST_POSTGRES` names one
/// (the test command starts one with scripts/pg.sh and runs the suite a second time).
pub fn postgres() -> Option<String> {
    std::env::var("COUNTERSIGN_TEST_POSTGRES").ok().filter(|u| !u.is_empty())
}

/// The database of the app whose files are in `data_dir`: SQLite in that directory, or a fresh
/// PostgreSQL database made on first use and remembered in the directory (so restarts and the
/// CLI find it again).
pub async fn database_url(data_dir: &std::path::Path) -> String {
    let Some(server) = postgres() else { return format!("sqlite://{}", data_dir.join("countersign.db").display()) };
    let remembered = data_dir.join("database-url");
    if let Ok(url) = std::fs::read_to_string(&remembered) {
        return url;
    }
    use sqlx::Connection;
    let name = format!("cs_{}", uuid::Uuid::now_v7().simple());
    let mut admin = sqlx::PgConnection::connect(&server).await.expect("connect to the test PostgreSQL");
    sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut admin).await.expect("create a test database");
    let url = format!("{}/{name}", server.rsplit_once('/').expect("a URL with a database name").0);
    std::fs::write(&remembered, &url).unwrap();
    url
}

/// Skips a test that inspects the SQLite file itself when the suite runs on PostgreSQL.
pub fn sqlite_only(test: &str) -> bool {
    if postgres().is_some() {
        eprintln!("{test}: checks the SQLite file itself; skipped on PostgreSQL");
        return false;
    }
    true
}

pub async fn spawn_app_with(options: Options) -> TestApp {
    let data_dir = tempfile::tempdir().expect("temp dir");
    let model = Arc::new(ScriptedModel::default());
    let (base_url, database_url, _serving) = serve(data_dir.path(), &options, model.clone(), std::future::pending()).await;
    let tokens = Arc::new(create_users(&database_url).await);
    TestApp { base_url, client: client_with_token(&tokens["alice"]), model, data_dir: Arc::new(data_dir), tokens }
}

/// Builds the application on the database of `data_dir` with `options` (its agent configuration
/// written there) and serves it on 127.0.0.1:0 until `stop` completes: its base URL, its database
/// URL, and the task that serves (it ends once the server has stopped).
async fn serve(
    data_dir: &std::path::Path,
    options: &Options,
    model: Arc<ScriptedModel>,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> (String, String, tokio::task::JoinHandle<anyhow::Result<()>>) {
    let database = database_url(data_dir).await;
    let agents_path = options.agents_toml.as_ref().map(|toml| {
        let path = data_dir.join("agents.toml");
        std::fs::write(&path, toml).expect("write agents.toml");
        path.display().to_string()
    });
    let agents_draft_path = options.agents_draft_toml.as_ref().map(|toml| {
        let path = data_dir.join("agents.draft.toml");
        std::fs::write(&path, toml).expect("write agents.draft.toml");
        path.display().to_string()
    });
    let body_limit = options.body_limit.map(|n| n.to_string());
    let decisions = options.decisions_per_minute.map(|n| n.to_string());
    let sweep = options.sweep_ms.unwrap_or(20).to_string();
    let login = options.login_limits.map(|(name, address, ms)| [name.to_string(), address.to_string(), ms.to_string()]);
    let login = |i: usize| login.as_ref().map(|l| l[i].clone());
    let streams = options.streams.map(|(n, ms)| (n.to_string(), ms.to_string()));
    let page_items = options.page_items.map(|n| n.to_string());
    let write_stall = options.write_stall_ms.map(|n| n.to_string());
    let config = Config::from_lookup(|key| match key {
        "COUNTERSIGN_ADDR" => Some("127.0.0.1:0".to_owned()),
        "COUNTERSIGN_DATA_DIR" => Some(data_dir.display().to_string()),
        "DATABASE_URL" => Some(database.clone()),
        "COUNTERSIGN_AGENTS" => agents_path.clone(),
        "COUNTERSIGN_AGENTS_DRAFT" => agents_draft_path.clone(),
        "COUNTERSIGN_BODY_LIMIT" => body_limit.clone(),
        "COUNTERSIGN_DECISIONS_PER_MINUTE" => decisions.clone(),
        "COUNTERSIGN_SWEEP_MS" => Some(sweep.clone()),
        "COUNTERSIGN_TRUSTED_PROXIES" => options.trusted_proxies.clone(),
        "COUNTERSIGN_LOGIN_FAILURES" => login(0),
        "COUNTERSIGN_LOGIN_FAILURES_PER_ADDRESS" => login(1),
        "COUNTERSIGN_LOGIN_WINDOW_MS" => login(2),
        "COUNTERSIGN_AUDIT_KEY" => options.audit_key.clone(),
        "COUNTERSIGN_AUDIT_CHECKPOINT_MS" => Some("3600000".to_owned()),
        "COUNTERSIGN_PAGE_ITEMS" => page_items.clone(),
        "COUNTERSIGN_SMTP_URL" => options.smtp_url.clone(),
        "COUNTERSIGN_STREAMS_PER_USER" => streams.as_ref().map(|s| s.0.clone()),
        "COUNTERSIGN_STREAM_LIFETIME_MS" => streams.as_ref().map(|s| s.1.clone()),
        "COUNTERSIGN_WRITE_STALL_MS" => write_stall.clone(),
        "COUNTERSIGN_SITE_ROOT" => options.site_root.clone(),
        "RUST_LOG" => Some(std::env::var("TEST_LOG").unwrap_or_else(|_| "error".to_owned())),
        _ => None,
    })
    .expect("test config");
    countersign::telemetry::init(&config.log_filter, false);
    let parts = Parts { model: (!options.configured_models).then_some(model as _), before_commit: options.before_commit.clone() };
    let database_url = config.database_url.clone();
    let app = Application::build_with(config, parts).await.expect("application builds");
    let base_url = format!("http://{}", app.local_addr());
    (base_url, database_url, tokio::spawn(app.run_until(stop)))
}

/// An in-process server that can be restarted on its database: [`Restartable::restart`] stops it
/// as SIGTERM does (open connections drained, background work stopped) and starts another with
/// the same options, data directory (so the same SQLite file or PostgreSQL database) and scripted
/// model, on a new port. Accounts, tokens and sessions are in the database: every client of the
/// first server works with the second (`app.base_url` is the new one).
pub struct Restartable {
    pub app: TestApp,
    options: Options,
    stop: tokio::sync::oneshot::Sender<()>,
    serving: tokio::task::JoinHandle<anyhow::Result<()>>,
}

/// Like [`spawn_app_with`], for a server to restart.
pub async fn spawn_restartable(options: Options) -> Restartable {
    let data_dir = tempfile::tempdir().expect("temp dir");
    let model = Arc::new(ScriptedModel::default());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (base_url, database_url, serving) = serve(data_dir.path(), &options, model.clone(), async move {
        let _ = stopped.await;
    })
    .await;
    let tokens = Arc::new(create_users(&database_url).await);
    let app = TestApp { base_url, client: client_with_token(&tokens["alice"]), model, data_dir: Arc::new(data_dir), tokens };
    Restartable { app, options, stop, serving }
}

impl Restartable {
    /// Stops this server (and waits until it has stopped), then starts the next on its database.
    pub async fn restart(self) -> Self {
        let Self { app, options, stop, serving } = self;
        let _ = stop.send(());
        serving.await.expect("the server's task").expect("the server stops cleanly");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (base_url, _, serving) = serve(app.data_dir.path(), &options, app.model.clone(), async move {
            let _ = stopped.await;
        })
        .await;
        Self { app: TestApp { base_url, ..app }, options, stop, serving }
    }
}

/// Polls until `check` returns Some, for at most 10 seconds.
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

impl TestApp {
    /// The same app seen by another test user (alice, bob or root).
    pub fn as_user(&self, name: &str) -> TestApp {
        TestApp { client: client_with_token(&self.tokens[name]), ..self.clone() }
    }

    /// The same app without credentials.
    pub fn anonymous(&self) -> TestApp {
        TestApp { client: test_client().build().unwrap(), ..self.clone() }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url, path)
    }

    pub async fn get_json(&self, path: &str) -> (u16, Value) {
        let response = self.client.get(self.url(path)).send().await.expect("GET");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// The audit entries of `kind`, once there are `count` of them. On PostgreSQL entries are
    /// chained just after their transaction commits, so a test that saw the event may be a moment
    /// ahead of the trail (docs/architecture.md).
    pub async fn audit_entries(&self, kind: &str, count: usize) -> Vec<Value> {
        let root = self.as_user("root");
        eventually(&format!("{count} audit entries of {kind}"), || async {
            let (_, page) = root.get_json(&format!("/api/audit?kind={kind}")).await;
            let entries = page["entries"].as_array().cloned().unwrap_or_default();
            (entries.len() == count).then_some(entries)
        })
        .await
    }

    pub async fn post_json(&self, path: &str, body: Value) -> (u16, Value) {
        let response = self.client.post(self.url(path)).json(&body).send().await.expect("POST");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    pub async fn create_conversation(&self) -> ConversationId {
        let (status, body) = self.post_json("/api/conversations", json!({ "title": "test" })).await;
        assert_eq!(status, 201, "{body}");
        body["id"].as_str().unwrap().into()
    }

    /// Posts a message and returns the new task id.
    pub async fn say(&self, conversation: &str, text: &str) -> TaskId {
        let (status, body) = self.post_json(&format!("/api/conversations/{conversation}/messages"), json!({ "text": text })).await;
        assert_eq!(status, 202, "{body}");
        body["task_id"].as_str().unwrap().into()
    }

    pub async fn detail(&self, conversation: &str) -> ConversationDetail {
        let (status, body) = self.get_json(&format!("/api/conversations/{conversation}?events=all")).await;
        assert_eq!(status, 200, "{body}");
        serde_json::from_value(body).expect("conversation detail")
    }

    pub async fn task_status(&self, task: &str) -> TaskStatus {
        let (status, body) = self.get_json(&format!("/api/tasks/{task}")).await;
        assert_eq!(status, 200, "{body}");
        serde_json::from_value(body["status"].clone()).unwrap()
    }

    /// Waits until the task reaches `status`.
    pub async fn wait_task(&self, task: &str, status: TaskStatus) {
        eventually(&format!("task {task} to be {}", status.as_str()), || async { (self.task_status(task).await == status).then_some(()) })
            .await
    }

    pub async fn pending_approvals_of(&self, task: &str) -> Vec<Approval> {
        let (status, body) = self.get_json("/api/approvals?status=pending").await;
        assert_eq!(status, 200, "{body}");
        let all: Vec<Approval> = serde_json::from_value(body).unwrap();
        all.into_iter().filter(|a| a.task_id == task).collect()
    }

    /// Starts a turn and waits until it stops on `n` pending approvals.
    pub async fn pending_turn(&self, conversation: &str, text: &str, n: usize) -> (TaskId, Vec<Approval>) {
        let task = self.say(conversation, text).await;
        self.wait_task(&task, TaskStatus::InputRequired).await;
        let mut approvals = self.pending_approvals_of(&task).await;
        assert_eq!(approvals.len(), n, "pending approvals: {approvals:?}");
        approvals.sort_by(|a, b| a.call_id.cmp(&b.call_id));
        (task, approvals)
    }

    /// Approves each of `approvals` (200 each) and waits for `task` to complete.
    pub async fn approve_each(&self, task: &str, approvals: &[Approval]) {
        for approval in approvals {
            let (status, body) = self.post_json(&format!("/api/approvals/{}/approve", approval.id), json!({})).await;
            assert_eq!(status, 200, "{body}");
        }
        self.wait_task(task, TaskStatus::Completed).await;
    }

    pub async fn order(&self, id: i64) -> Order {
        let (status, body) = self.get_json(&format!("/api/orders/{id}")).await;
        assert_eq!(status, 200, "{body}");
        serde_json::from_value(body).unwrap()
    }

    pub async fn sse(&self, path: &str, last_event_id: Option<&str>) -> impl Stream<Item = eventsource_stream::Event> + Unpin + use<> {
        let mut request = self.client.get(self.url(path)).header("accept", "text/event-stream");
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        let response = request.send().await.expect("SSE request");
        assert_eq!(response.status(), 200, "SSE status for {path}");
        let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(content_type.starts_with("text/event-stream"), "content type {content_type}");
        Box::pin(response.bytes_stream().eventsource().map(|e| e.expect("well-formed SSE")))
    }
}

/// Collects `n` events; fails after a generous timeout.
pub async fn take_events(stream: impl Stream<Item = eventsource_stream::Event> + Unpin, n: usize) -> Vec<eventsource_stream::Event> {
    tokio::time::timeout(Duration::from_secs(10), stream.take(n).collect::<Vec<_>>()).await.expect("SSE events within 10 s")
}

/// Events of one kind, by name.
pub fn named<'a>(events: &'a [Event], name: &str) -> Vec<&'a Event> {
    events.iter().filter(|e| e.body.name() == name).collect()
}

pub fn assistant_texts(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::AssistantMessage { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// Serves `router` on a free local port, in the background, and answers its URL with `path`
/// appended: a stand-in for a model, a webhook receiver…
pub async fn serve_locally(router: axum::Router, path: &str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}{path}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    url
}

/// A fake OpenAI-compatible model on a free local port: `completions` answers
/// `POST /v1/chat/completions` (e.g. `post(handler).with_state(state)`). Answers its base URL,
/// ending in `/v1`.
pub async fn start_model(completions: axum::routing::MethodRouter) -> String {
    serve_locally(axum::Router::new().route("/v1/chat/completions", completions), "/v1").await
}

/// A fake model's whole streamed answer: one chunk with `delta` (`{"content": …}` or
/// `{"tool_calls": […]}`), then `[DONE]`.
pub fn model_answer(delta: Value) -> axum::response::Response {
    use axum::response::IntoResponse;
    let chunk = json!({ "choices": [{ "index": 0, "delta": delta }] });
    ([("content-type", "text/event-stream")], format!("data: {chunk}\n\ndata: [DONE]\n\n")).into_response()
}

/// POSTs `body` as it is, with `content_type`; answers the status and the JSON body (`null` if
/// it is not JSON).
pub async fn raw_post(app: &TestApp, path: &str, content_type: &str, body: impl Into<reqwest::Body>) -> (u16, Value) {
    let response = app.client.post(app.url(path)).header("content-type", content_type).body(body).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Asserts the JSON error shape and returns the code.
pub fn error_code(body: &Value) -> &str {
    assert!(body["error"]["message"].is_string(), "error shape: {body}");
    body["error"]["code"].as_str().expect("error code")
}

/// The real `countersign` binary, for tests that kill and restart the process.
pub struct BinaryServer {
    child: tokio::process::Child,
    pub app: TestApp,
    /// What it logged (stdout), read as it goes so that the pipe never fills up and stalls it.
    logged: Arc<std::sync::Mutex<Vec<String>>>,
}

impl BinaryServer {
    /// Starts the binary on a free port with the database in `data_dir`.
    pub async fn start(data_dir: Arc<tempfile::TempDir>, agents_toml: Option<&str>) -> Self {
        Self::start_with_env(data_dir, agents_toml, &[]).await
    }

    /// Like `start`, with extra environment variables (e.g. a higher decision rate limit).
    pub async fn start_with_env(data_dir: Arc<tempfile::TempDir>, agents_toml: Option<&str>, env: &[(&str, &str)]) -> Self {
        use tokio::io::AsyncBufReadExt;
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_countersign"));
        command.env("DATABASE_URL", database_url(data_dir.path()).await).env("COUNTERSIGN_TASK_LEASE_MS", "1000");
        command.envs(env.iter().copied());
        command
            .env("COUNTERSIGN_ADDR", "127.0.0.1:0")
            .env("COUNTERSIGN_DATA_DIR", data_dir.path())
            .env("COUNTERSIGN_SWEEP_MS", "20")
            .env("RUST_LOG", "warn")
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true);
        if let Some(toml) = agents_toml {
            let path = data_dir.path().join("agents.toml");
            std::fs::write(&path, toml).unwrap();
            command.env("COUNTERSIGN_AGENTS", path);
        }
        let token = cli_token(data_dir.path()).await;
        let mut child = command.spawn().expect("spawn countersign");
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let logged = Arc::new(std::sync::Mutex::new(Vec::new()));
        let base_url = tokio::time::timeout(Duration::from_secs(30), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                logged.lock().unwrap().push(line.clone());
                if let Some(url) = line.split("listening on ").nth(1) {
                    return url.trim().to_owned();
                }
            }
            panic!("countersign exited before listening");
        })
        .await
        .expect("countersign starts within 30 s");
        let keep = logged.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                keep.lock().unwrap().push(line);
            }
        });
        let tokens = Arc::new(std::collections::HashMap::from([("alice".to_owned(), token.clone())]));
        let app = TestApp { base_url, client: client_with_token(&token), model: Arc::new(ScriptedModel::default()), data_dir, tokens };
        Self { child, app, logged }
    }

    /// The first line it logged that contains `text`, waiting at most `within` for one.
    pub async fn logged_line(&self, text: &str, within: Duration) -> Option<String> {
        let until = tokio::time::Instant::now() + within;
        loop {
            let found = self.logged.lock().unwrap().iter().find(|line| line.contains(text)).cloned();
            if found.is_some() || tokio::time::Instant::now() >= until {
                return found;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// SIGTERM, then waits (at most 10 s) for the process to exit; returns whether it exited 0.
    pub async fn terminate(mut self) -> bool {
        let pid = self.child.id().expect("running").to_string();
        std::process::Command::new("kill").args(["-TERM", &pid]).status().expect("kill -TERM");
        let status = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await.expect("the server stops within 10 s");
        status.expect("exit status").success()
    }

    /// Sends `signal` (`STOP` freezes the process as a stuck VM would, `CONT` thaws it).
    pub fn signal(&self, signal: &str) {
        let pid = self.child.id().expect("running").to_string();
        let status = std::process::Command::new("kill").args([&format!("-{signal}"), &pid]).status().expect("kill");
        assert!(status.success(), "kill -{signal} {pid}");
    }

    /// SIGKILL: no shutdown code runs.
    pub async fn kill(mut self) -> Arc<tempfile::TempDir> {
        self.child.kill().await.expect("kill -9");
        self.app.data_dir.clone()
    }
}

/// Runs the `countersign` CLI against the database in `data_dir`; returns (success, stdout, stderr).
pub async fn cli(data_dir: &std::path::Path, args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
    cli_with_env(data_dir, args, stdin, &[]).await
}

/// Like [`cli`], with extra environment variables.
pub async fn cli_with_env(data_dir: &std::path::Path, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> (bool, String, String) {
    use tokio::io::AsyncWriteExt;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_countersign"))
        .args(args)
        .envs(env.iter().copied())
        .env("COUNTERSIGN_DATA_DIR", data_dir)
        .env("DATABASE_URL", database_url(data_dir).await)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn countersign cli");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).await.unwrap();
    drop(input);
    let out = child.wait_with_output().await.unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// alice's token in the database of `data_dir`, made with the CLI (alice is created if needed).
pub async fn cli_token(data_dir: &std::path::Path) -> String {
    let _ = cli(data_dir, &["user", "add", "alice"], Some(&format!("{PASSWORD}\n"))).await;
    let (ok, stdout, stderr) = cli(data_dir, &["token", "create", "--user", "alice", "--name", "tests"], None).await;
    assert!(ok, "token create: {stderr}");
    stdout.trim().to_owned()
}

/// Starts the binary with `toml` as its agent configuration, expecting it to refuse to start;
/// returns what it printed on stderr.
pub async fn refused_start_up(toml: &str) -> String {
    refused_start_up_with(toml, None).await.0
}

/// Like [`refused_start_up`], with `draft` as `COUNTERSIGN_AGENTS_DRAFT` too: the error, and the
/// draft file's path.
pub async fn refused_start_up_with(toml: &str, draft: Option<&str>) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agents.toml");
    std::fs::write(&path, toml).unwrap();
    let draft_path = dir.path().join("agents.draft.toml");
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_countersign"));
    command.env("COUNTERSIGN_ADDR", "127.0.0.1:0").env("COUNTERSIGN_DATA_DIR", dir.path()).env("COUNTERSIGN_AGENTS", &path);
    if let Some(draft) = draft {
        std::fs::write(&draft_path, draft).unwrap();
        command.env("COUNTERSIGN_AGENTS_DRAFT", &draft_path);
    }
    let output = command.output().await.unwrap();
    assert!(!output.status.success(), "start-up should fail");
    (String::from_utf8_lossy(&output.stderr).into_owned(), draft_path.display().to_string())
}

/// What a protocol client script (server/tests/clients/*.py) printed: one JSON line per step,
/// keyed by its `step`, and its whole stdout for messages. Fails with both outputs if the script did.
pub fn client_steps(script: &str, output: &std::process::Output) -> (std::collections::HashMap<String, Value>, String) {
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{script} failed:\n{stdout}\n{stderr}");
    let steps = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| (v["step"].as_str().unwrap_or_default().to_owned(), v))
        .collect();
    (steps, stdout.into_owned())
}
