//! Fenced task leases (docs/architecture.md, decision 7): each claim has its own token, times come from the
//! database's clock, and a driver that lost its lease can change nothing.

use countersign::bus::Bus;
use domain::{ConversationId, TaskId};
use domain::{EventBody, TaskStatus};
use engine::store::{Store, tasks};

use crate::helpers::{TestApp, database_url, spawn_app};

/// A running app with one finished task (its lease released), and two stores on its database
/// standing for two live processes (on PostgreSQL a holder must have open connections).
async fn finished_task_and_two_stores() -> (TestApp, ConversationId, TaskId, Store, Store) {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let task = app.say(&c, "hello").await;
    app.wait_task(&task, TaskStatus::Completed).await;
    let url = database_url(app.data_dir.path()).await;
    let store = Store::connect(&url, Bus::default()).await.expect("store");
    let other = Store::connect(&url, Bus::default()).await.expect("a second store");
    (app, c, task, store, other)
}

#[tokio::test]
async fn a_driver_that_lost_its_lease_writes_nothing_and_cannot_release_the_new_holders_lease() {
    let (app, c, task, store, other) = finished_task_and_two_stores().await;
    let (pool, backend) = (store.testing().pool(), store.backend());
    let (replica_a, replica_b) = (store.bus().instance(), other.bus().instance());

    let a = tasks::claim(pool, backend, &task, replica_a, 60_000).await.unwrap().expect("a free task is claimed");
    let again = tasks::claim(pool, backend, &task, replica_a, 60_000).await.unwrap();
    assert!(again.is_none(), "a live lease is not claimed twice, not even by the process that holds it");

    // A freezes and its lease runs out; B claims the task with a token of its own.
    sqlx::query("UPDATE tasks SET lease_until = 0 WHERE id = $1").bind(&task).execute(pool).await.unwrap();
    let b = tasks::claim(pool, backend, &task, replica_b, 60_000).await.unwrap().expect("an expired lease is claimed");
    assert_ne!(a.token, b.token);

    // A wakes up and writes: the write is dropped whole.
    let events_before = app.detail(&c).await.events.len();
    let mut w = store.write_as(&a).await.unwrap();
    let late = EventBody::AssistantMessage { task_id: task.clone(), text: "late answer from A".into(), agent: None };
    w.append(&c, late).await.unwrap();
    let err = w.commit().await.expect_err("a write under a lost lease fails");
    assert!(matches!(err.downcast_ref(), Some(engine::store::LeaseLost(id)) if *id == task), "{err:#}");
    assert_eq!(app.detail(&c).await.events.len(), events_before, "nothing of A's write was stored");

    // A's release and A's heartbeat leave B's lease alone; B still writes.
    tasks::release(pool, &a).await.unwrap();
    tasks::renew(pool, backend, replica_a, 60_000).await.unwrap();
    let mut w = store.write_as(&b).await.unwrap();
    w.append(&c, EventBody::AssistantMessage { task_id: task.clone(), text: "from B".into(), agent: None }).await.unwrap();
    w.commit().await.expect("the holder's write commits");
    assert_eq!(app.detail(&c).await.events.len(), events_before + 1);

    // Released by its holder, the task is free again.
    tasks::release(pool, &b).await.unwrap();
    assert!(tasks::claim(pool, backend, &task, replica_a, 60_000).await.unwrap().is_some());
}

/// PostgreSQL: a lease whose holder's connections are all gone (the process died) is claimable at
/// once; a live holder's is not.
#[tokio::test]
async fn on_postgresql_a_lease_whose_holder_has_no_connections_left_is_claimable_at_once() {
    if crate::helpers::postgres().is_none() {
        eprintln!("PostgreSQL only (SQLite drops a previous run's leases at start-up instead)");
        return;
    }
    let (_app, _, task, store, holder) = finished_task_and_two_stores().await;
    let (pool, backend) = (store.testing().pool(), store.backend());
    // A frozen holder inside a transaction is cut off after 15 s; waiters give up only after 30 s.
    let lock_timeout: String = sqlx::query_scalar("SHOW lock_timeout").fetch_one(pool).await.unwrap();
    let idle_timeout: String = sqlx::query_scalar("SHOW idle_in_transaction_session_timeout").fetch_one(pool).await.unwrap();
    assert_eq!((lock_timeout.as_str(), idle_timeout.as_str()), ("30s", "15s"));
    let held = tasks::claim(holder.testing().pool(), backend, &task, holder.bus().instance(), 60_000).await.unwrap();
    assert!(held.is_some());
    assert!(tasks::claim(pool, backend, &task, store.bus().instance(), 60_000).await.unwrap().is_none(), "a live holder keeps it");
    holder.testing().pool().close().await;
    if let engine::store::NativePool::Postgres(native) = holder.native() {
        native.close().await;
    }
    drop(holder);
    let taken = crate::helpers::eventually("the holder's connections to close", || async {
        tasks::claim(pool, backend, &task, store.bus().instance(), 60_000).await.unwrap()
    })
    .await;
    assert_ne!(Some(taken.token), held.map(|l| l.token));
}
