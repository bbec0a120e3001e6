//! An outside client's reads that ran and wait for the writer together are recorded in one
//! write; when that write fails, each is recorded alone, so one read's failure stays its own.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use async_trait::async_trait;
use domain::EventBody;
use engine::{
    orchestrator::ClientCalls,
    store::{WriteScope, audit_verify},
    tools::{Tool, ToolError, ToolSpec},
};
use serde_json::{Value, json};
use sqlx::AnyConnection;

use crate::harness::{Engine, Extra};

/// An outside tool that only reads, and counts its calls.
struct Lookup {
    spec: ToolSpec,
    calls: AtomicUsize,
}

#[async_trait]
impl Tool for Lookup {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn summarize(&self, args: &Value) -> String {
        format!("Look up {args}")
    }

    async fn run(&self, _conn: &mut AnyConnection, args: &Value) -> Result<Value, ToolError> {
        self.call(args).await
    }

    fn is_external(&self) -> bool {
        true
    }

    async fn call(&self, args: &Value) -> Result<Value, ToolError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(json!({ "message": format!("found {}", args["key"]) }))
    }
}

const READER: &str = r#"
[[agents]]
name = "reader"
description = "reads"
tools = ["lookup"]
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_waiting_together_are_recorded_together_and_a_failed_one_fails_alone() {
    let spec = ToolSpec {
        name: "lookup".into(),
        description: "looks a key up".into(),
        input_schema: json!({ "type": "object" }),
        read_only: true,
        destructive: false,
    };
    let lookup = Arc::new(Lookup { spec, calls: AtomicUsize::new(0) });
    // Recording the read of "poison" fails every time, in a write with others and alone.
    let hooked = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&hooked);
    let hook: engine::orchestrator::BeforeCommitHook = Arc::new(move |point: &str| {
        if !point.starts_with("read:") {
            return Ok(());
        }
        counted.fetch_add(1, Ordering::SeqCst);
        match point.contains("poison") {
            true => anyhow::bail!("injected failure recording a read"),
            false => Ok(()),
        }
    });
    let extra = Extra { tools: vec![Arc::clone(&lookup) as Arc<dyn Tool>], before_commit: Some(hook), ..Extra::default() };
    let engine = Engine::start_with(READER, extra).await;
    let chat = engine.conversation("alice", "reader").await;
    let calls = ClientCalls::new(&engine.task_driver);

    // The writer is busy while eight reads run, so all eight wait for it together. (A write in
    // the reads' conversation: on PostgreSQL it holds the conversation's row, which their write
    // waits for; on SQLite any write holds the one writer.)
    let busy = engine.store.write(WriteScope::Conversation(&chat.id)).await.expect("the writer");
    const KEYS: [&str; 8] = ["a", "b", "c", "poison", "d", "e", "f", "g"];
    let keys = KEYS;
    let reads: Vec<_> = keys
        .iter()
        .map(|&key| {
            let (calls, chat) = (calls.clone(), chat.clone());
            tokio::spawn(async move {
                calls.run_unasked(&chat, "MCP client \u{201c}test\u{201d}", "lookup", &json!({ "key": key }), None).await
            })
        })
        .collect();
    tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while lookup.calls.load(Ordering::SeqCst) < keys.len() {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the eight reads ran");
    // Each joins the waiting reads right after its tool answered; give the last one a moment.
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    drop(busy);

    let mut answered = Vec::new();
    for (key, read) in keys.iter().zip(reads) {
        answered.push((key, read.await.expect("the read's task").map(|ran| ran.outcome)));
    }
    for (key, outcome) in &answered {
        match **key {
            "poison" => assert!(outcome.is_err(), "the failed recording is the poisoned read's error"),
            _ => assert_eq!(outcome.as_ref().expect("recorded").as_ref().expect("found")["message"], format!("found \"{key}\"")),
        }
    }
    // The write with all eight failed at the poisoned read; then each was recorded alone.
    assert!(hooked.load(Ordering::SeqCst) > keys.len(), "the eight were recorded together first");

    // Seven reads, each its own whole record in the driven way's order; nothing of the eighth.
    let all = engine::store::events::after(engine.store.testing().pool(), &chat.id, 0).await.expect("the events");
    assert_eq!(all.len(), 7 * 6);
    let mut by_task: std::collections::BTreeMap<String, Vec<&str>> = Default::default();
    for event in &all {
        by_task.entry(event.body.task_id().to_string()).or_default().push(event.body.name());
        if let EventBody::ToolCall { args, .. } = &event.body {
            assert_ne!(args["key"], "poison");
        }
    }
    assert_eq!(by_task.len(), 7);
    for kinds in by_task.values() {
        assert_eq!(kinds, &["user-message", "task-status", "tool-call", "tool-started", "tool-result", "task-status"]);
    }
    let verified = audit_verify::verify(&engine.store, None, None).await.expect("the audit trail reads");
    assert!(verified.ok, "{verified:?}");
    assert_eq!(verified.entries, 7, "one outcome per recorded read");
}
