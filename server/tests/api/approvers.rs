//! Who may decide: a gate's `approvers` (groups, users, the admins) alone decide its
//! approvals and see them in their queue; groups are managed by admins through `/api/groups`
//! (audited; a change moves the pending approvals that name the group); a `quorum` gate runs the
//! call only after that many distinct people approved, each approval audited, and one rejection
//! rejects. Every refused request is checked to change nothing.

use domain::TaskStatus;
use serde_json::{Value, json};

use crate::helpers::{Options, PASSWORD, TestApp, cli, client_with_token, error_code, spawn_app_with};

const TOOLS: &str = "tools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]";

async fn app_with(gate_extra: &str) -> TestApp {
    let toml = format!(
        "[[groups]]\nname = \"finance\"\nmembers = [\"bob\"]\n\n[[agents]]\nname = \"support\"\n{TOOLS}\n\
         [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\ntimeout_secs = 60\n{gate_extra}"
    );
    spawn_app_with(Options { agents_toml: Some(toml), ..Default::default() }).await
}

/// The approval's state and who approved it, and the number of events of its chat.
async fn state_of(app: &TestApp, conversation: &str, approval: &str) -> (Value, Value, usize) {
    let (_, body) = app.as_user("root").get_json(&format!("/api/approvals/{approval}")).await;
    (body["state"].clone(), body["approved_by"].clone(), app.detail(conversation).await.events.len())
}

async fn groups(app: &TestApp) -> Value {
    let (status, body) = app.as_user("root").get_json("/api/groups").await;
    assert_eq!(status, 200, "{body}");
    body
}

async fn send(app: &TestApp, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut request = app.client.request(method, app.url(path));
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn only_the_gates_approvers_decide_and_they_see_it_in_their_queue() {
    let app = app_with("approvers = [\"group:finance\"]\n").await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let approval = &approvals[0];
    let approvers = approval.approvers.clone().expect("the approval says who decides");
    assert_eq!((approvers.names, approvers.people, approvers.admins), (vec!["group:finance".to_owned()], vec!["bob".to_owned()], false));
    let before = state_of(&app, &c, &approval.id).await;

    // Neither the owner nor an admin the gate does not name may decide; nothing changes.
    for who in ["alice", "root"] {
        let (status, body) = app.as_user(who).post_json(&format!("/api/approvals/{}/approve", approval.id), json!({})).await;
        assert_eq!((status, error_code(&body)), (403, "forbidden"), "{who}: {body}");
        assert!(body["error"]["message"].as_str().unwrap().contains("only finance may decide"), "{body}");
    }
    assert_eq!(state_of(&app, &c, &approval.id).await, before);
    // Nor may the owner hand it to someone of her choosing (herself, say), nor an approver hand
    // it on at all; neither changes anything.
    let (status, body) = app.post_json(&format!("/api/approvals/{}/escalate", approval.id), json!({ "to": "alice" })).await;
    assert_eq!((status, error_code(&body)), (403, "forbidden"), "{body}");
    let (status, _) = app.as_user("bob").post_json(&format!("/api/approvals/{}/escalate", approval.id), json!({})).await;
    assert_eq!(status, 403);
    let (_, fresh) = app.get_json(&format!("/api/approvals/{}", approval.id)).await;
    assert!(fresh["escalated_by"].is_null(), "{fresh}");
    assert_eq!(state_of(&app, &c, &approval.id).await, before);
    // The chat's card knows who decides (it shows no buttons to others).
    let card = app.detail(&c).await.view.cards().find(|card| card.tool == "process_refund").cloned().unwrap();
    assert_eq!(card.approval.unwrap().approvers.unwrap().people, ["bob"]);

    // Bob is not the owner, yet sees it (his queue lists it) and decides it.
    let bob = app.as_user("bob");
    assert_eq!(bob.pending_approvals_of(&task).await.len(), 1);
    let (status, body) = bob.post_json(&format!("/api/approvals/{}/approve", approval.id), json!({})).await;
    assert_eq!((status, body["outcome"].as_str()), (200, Some("approved")), "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1001).await.status, "refunded");
}

#[tokio::test]
async fn admins_manage_groups_and_a_change_moves_the_pending_approvals_that_name_them() {
    let app = app_with("approvers = [\"group:ops\"]\n").await;
    let root = app.as_user("root");
    let listed = groups(&app).await;
    assert_eq!(listed, json!([{ "name": "finance", "members": ["bob"], "from_config": true, "from_idp": false }]));

    // Refused: not an admin, a bad name, a member without an account, a taken name (here or in
    // the configuration file), unknown fields. None of them changes the list.
    let (status, _) = app.as_user("bob").post_json("/api/groups", json!({ "name": "ops", "members": ["bob"] })).await;
    assert_eq!(status, 403);
    for (body, code, path) in [
        (json!({ "name": "o p s", "members": [] }), 422, Some("/name")),
        (json!({ "name": "ops", "members": ["bob", "nobody"] }), 422, Some("/members/1")),
        (json!({ "name": "Finance", "members": [] }), 409, None),
        (json!({ "name": "ops", "members": [], "admins": true }), 422, None),
    ] {
        let (status, reply) = root.post_json("/api/groups", body.clone()).await;
        assert_eq!(status, code, "{body} → {reply}");
        if let Some(path) = path {
            assert_eq!(reply["error"]["details"][0]["path"], path, "{reply}");
        }
    }
    assert_eq!(groups(&app).await, listed);

    let (status, body) = root.post_json("/api/groups", json!({ "name": "ops", "members": ["BOB"] })).await;
    assert_eq!(
        (status, body.clone()),
        (201, json!({ "name": "ops", "members": ["bob"], "from_config": false, "from_idp": false })),
        "{body}"
    );
    let (status, _) = root.post_json("/api/groups", json!({ "name": "OPS", "members": [] })).await;
    assert_eq!(status, 409, "names are unique ignoring case");

    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let id = approvals[0].id.clone();
    assert_eq!(approvals[0].approvers.as_ref().unwrap().people, ["bob"]);

    // Bob leaves ops and alice joins: from now on alice decides it, not bob.
    let (status, body) = send(&root, reqwest::Method::PUT, "/api/groups/ops", Some(json!({ "members": ["alice"] }))).await;
    assert_eq!((status, body["members"].clone()), (200, json!(["alice"])), "{body}");
    let before = state_of(&app, &c, &id).await;
    let (status, _) = app.as_user("bob").post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!(status, 404, "bob no longer decides it, so it is not his to see");
    assert_eq!(state_of(&app, &c, &id).await, before);
    let created = app.audit_entries("group.created", 1).await;
    assert_eq!((created[0]["actor"].as_str(), created[0]["data"]["members"].clone()), (Some("root"), json!(["bob"])));
    let changed = app.audit_entries("group.changed", 1).await;
    assert_eq!((changed[0]["data"]["before"].clone(), changed[0]["data"]["members"].clone()), (json!(["bob"]), json!(["alice"])));

    // The configuration file's groups are changed there; unknown groups are 404s.
    let (status, body) = send(&root, reqwest::Method::PUT, "/api/groups/finance", Some(json!({ "members": ["alice"] }))).await;
    assert_eq!((status, error_code(&body)), (409, "conflict"), "{body}");
    let (status, _) = send(&root, reqwest::Method::DELETE, "/api/groups/finance", None).await;
    assert_eq!(status, 409);
    let (status, _) = send(&root, reqwest::Method::PUT, "/api/groups/nope", Some(json!({ "members": [] }))).await;
    assert_eq!(status, 404);
    let (status, _) = send(&app, reqwest::Method::DELETE, "/api/groups/ops", None).await;
    assert_eq!(status, 403, "alice is no admin");

    let (status, body) = app.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!((status, body["outcome"].as_str()), (200, Some("approved")), "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;

    // Deleted: gone from the list, audited; a second delete is a 404.
    let (status, _) = send(&root, reqwest::Method::DELETE, "/api/groups/ops", None).await;
    assert_eq!(status, 204);
    assert_eq!(groups(&app).await, listed);
    assert_eq!(app.audit_entries("group.deleted", 1).await[0]["data"]["group"], "ops");
    let (status, _) = send(&root, reqwest::Method::DELETE, "/api/groups/ops", None).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_quorum_runs_the_call_after_enough_distinct_approvers_and_one_rejection_rejects() {
    let app = app_with("quorum = 2\n").await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let id = approvals[0].id.clone();
    assert_eq!((approvals[0].rules.quorum, approvals[0].rules.allow_modification), (2, false), "each approves the same arguments");

    let (status, body) = app.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!((status, body["outcome"].as_str(), body["approved_by"].clone()), (200, Some("pending"), json!(["alice"])), "{body}");
    let counted = state_of(&app, &c, &id).await;
    assert_eq!((counted.0.as_str(), counted.1.clone()), (Some("pending"), json!(["alice"])));
    assert_eq!(app.order(1001).await.status, "open", "one approval of two runs nothing");

    // The same person counts once; "always allow" cannot stand in for the others; neither changes anything.
    let (status, body) = app.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!((status, error_code(&body)), (409, "conflict"), "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("alice already approved"), "{body}");
    let root = app.as_user("root");
    let (status, body) = root.post_json(&format!("/api/approvals/{id}/approve"), json!({ "grant": {} })).await;
    assert_eq!((status, body["error"]["details"][0]["path"].as_str()), (422, Some("/grant")), "{body}");
    assert_eq!(state_of(&app, &c, &id).await, counted);

    let (status, body) = root.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!(
        (status, body["outcome"].as_str(), body["approved_by"].clone()),
        (200, Some("approved"), json!(["alice", "root"])),
        "{body}"
    );
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1001).await.status, "refunded");
    let audited = app.audit_entries("approval.counted", 1).await;
    assert_eq!((audited[0]["actor"].as_str(), audited[0]["data"]["quorum"].as_i64()), (Some("alice"), Some(2)));
    let card = app.detail(&c).await.view.cards().find(|card| card.tool == "process_refund").cloned().unwrap();
    assert_eq!(card.approval.unwrap().approved_by, ["alice"], "the card showed who approved while it waited");

    // One approval, then a rejection: rejected, nothing runs.
    let (task, approvals) = app.pending_turn(&c, "refund order 1002", 1).await;
    let id = approvals[0].id.clone();
    let (status, _) = root.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!(status, 200);
    let (status, body) = app.post_json(&format!("/api/approvals/{id}/reject"), json!({ "reason": "not this one" })).await;
    assert_eq!((status, body["outcome"].as_str()), (200, Some("rejected")), "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1002).await.status, "open");
}

/// An RFC 3339 time `secs` from now.
fn in_secs(secs: i64) -> String {
    engine::clock::rfc3339(engine::clock::now_ms() + secs * 1000)
}

#[tokio::test]
async fn a_delegate_decides_in_the_approvers_place_until_the_delegation_ends() {
    let app = app_with("approvers = [\"group:finance\"]\n").await;
    let (bob, root) = (app.as_user("bob"), app.as_user("root"));
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let id = approvals[0].id.clone();
    let (status, _) = app.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!(status, 403, "alice is not in finance");

    // Refused: oneself, no such person, times that are not a future period of at most 90 days,
    // someone else's delegation without being an admin, unknown fields. None is recorded.
    for (body, code, path) in [
        (json!({ "to": "bob", "ends_at": in_secs(3600) }), 422, Some("/to")),
        (json!({ "to": "nobody", "ends_at": in_secs(3600) }), 422, Some("/to")),
        (json!({ "to": "alice", "ends_at": "next week" }), 422, Some("/ends_at")),
        (json!({ "to": "alice", "ends_at": in_secs(-60) }), 422, Some("/ends_at")),
        (json!({ "to": "alice", "ends_at": in_secs(91 * 24 * 3600) }), 422, Some("/ends_at")),
        (json!({ "to": "alice", "ends_at": in_secs(3600), "starts_at": in_secs(7200) }), 422, Some("/ends_at")),
        (json!({ "to": "alice", "ends_at": in_secs(3600), "from": "root" }), 403, None),
        (json!({ "to": "alice", "ends_at": in_secs(3600), "reason": "holiday" }), 422, None),
    ] {
        let (status, reply) = bob.post_json("/api/delegations", body.clone()).await;
        assert_eq!(status, code, "{body} → {reply}");
        if let Some(path) = path {
            assert_eq!(reply["error"]["details"][0]["path"], path, "{reply}");
        }
    }
    let (_, none) = root.get_json("/api/delegations").await;
    assert_eq!(none, json!([]));

    // Bob is away: alice decides in his place, and the audit trail says so.
    let (status, delegation) = bob.post_json("/api/delegations", json!({ "to": "alice", "ends_at": in_secs(3600) })).await;
    assert_eq!((status, delegation["from"].as_str(), delegation["active"].as_bool()), (201, Some("bob"), Some(true)), "{delegation}");
    let (_, received) = app.get_json("/api/delegations").await;
    assert_eq!(received.as_array().map(Vec::len), Some(1), "alice sees what she received: {received}");
    let (status, body) = app.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!((status, body["outcome"].as_str()), (200, Some("approved")), "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    let decided = app.audit_entries("approval.decided", 1).await;
    assert_eq!((decided[0]["actor"].as_str(), decided[0]["data"]["on_behalf_of"].as_str()), (Some("alice"), Some("bob")));
    assert_eq!(app.audit_entries("delegation.created", 1).await[0]["data"]["to"], "alice");

    // Ended early: alice no longer decides for bob; a second end is a conflict.
    let (task, approvals) = app.pending_turn(&c, "refund order 1002", 1).await;
    let id = approvals[0].id.clone();
    let did = delegation["id"].as_str().unwrap();
    let (status, ended) = bob.post_json(&format!("/api/delegations/{did}/revoke"), json!({})).await;
    assert_eq!((status, ended["active"].as_bool(), ended["revoked_by"].as_str()), (200, Some(false), Some("bob")), "{ended}");
    let (status, _) = bob.post_json(&format!("/api/delegations/{did}/revoke"), json!({})).await;
    assert_eq!(status, 409);
    let (status, _) = bob.post_json("/api/delegations/nope/revoke", json!({})).await;
    assert_eq!(status, 404);
    let before = state_of(&app, &c, &id).await;
    let (status, _) = app.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!(status, 403);
    assert_eq!(state_of(&app, &c, &id).await, before);
    assert_eq!(app.audit_entries("delegation.revoked", 1).await[0]["actor"], "bob");
    let (status, _) = bob.post_json(&format!("/api/approvals/{id}/reject"), json!({})).await;
    assert_eq!(status, 200);
    app.wait_task(&task, TaskStatus::Completed).await;
}

#[tokio::test]
async fn an_approval_escalated_to_a_group_follows_the_groups_members() {
    let app = app_with("").await;
    let root = app.as_user("root");
    let (status, _) = root.post_json("/api/groups", json!({ "name": "ops", "members": ["bob"] })).await;
    assert_eq!(status, 201);
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let id = approvals[0].id.clone();
    let (status, body) = app.post_json(&format!("/api/approvals/{id}/escalate"), json!({ "to": "ops" })).await;
    assert_eq!((status, body["deciders"].clone()), (200, json!(["bob"])), "{body}");
    let (status, _) = app.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!(status, 403, "handed to ops: not alice's to decide");

    // ops is now alice: she decides it, bob no longer sees it.
    let (status, _) = send(&root, reqwest::Method::PUT, "/api/groups/ops", Some(json!({ "members": ["alice"] }))).await;
    assert_eq!(status, 200);
    let (_, now) = app.get_json(&format!("/api/approvals/{id}")).await;
    assert_eq!(now["deciders"], json!(["alice"]));
    let (status, _) = app.as_user("bob").get_json(&format!("/api/approvals/{id}")).await;
    assert_eq!(status, 404);
    let (status, body) = app.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!(status, 200, "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
}

#[tokio::test]
async fn a_person_counts_once_toward_a_quorum_whoever_they_act_as() {
    let app = app_with("approvers = [\"group:finance\"]\nquorum = 2\n").await;
    let (bob, root) = (app.as_user("bob"), app.as_user("root"));
    let (status, _) = bob.post_json("/api/delegations", json!({ "to": "alice", "ends_at": in_secs(3600) })).await;
    assert_eq!(status, 201);
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let id = approvals[0].id.clone();
    // Alice approves in bob's place: it counts as bob.
    let (status, body) = app.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!((status, body["approved_by"].clone()), (200, json!(["bob"])), "{body}");
    // Handed to a group with alice in it, she may decide it as herself, but she already counted.
    let (status, _) = root.post_json("/api/groups", json!({ "name": "ops", "members": ["alice"] })).await;
    assert_eq!(status, 201);
    let (status, body) = root.post_json(&format!("/api/approvals/{id}/escalate"), json!({ "to": "ops" })).await;
    assert_eq!(status, 200, "{body}");
    let counted = state_of(&app, &c, &id).await;
    let (status, body) = app.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!((status, error_code(&body)), (409, "conflict"), "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("alice already approved"), "{body}");
    assert_eq!(state_of(&app, &c, &id).await, counted, "nothing changed");
    assert_eq!(app.order(1001).await.status, "open");
    // Someone else completes it.
    let (status, body) = root.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!((status, body["approved_by"].clone()), (200, json!(["bob", "root"])), "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
}

/// A delegate's approval counts toward a quorum only while the delegation is in force when the
/// quorum is met (docs/security.md, "The authority rules"): once bob ended it, what alice approved
/// in his place no longer counts, so root's approval alone leaves the call waiting.
#[tokio::test]
async fn a_delegates_approval_stops_counting_when_the_delegation_ends() {
    let app = app_with("approvers = [\"user:bob\", \"user:dora\", \"role:admin\"]\nquorum = 2\n").await;
    let (ok, _, stderr) = cli(app.data_dir.path(), &["user", "add", "dora"], Some(&format!("{PASSWORD}\n"))).await;
    assert!(ok, "{stderr}");
    let (ok, token, stderr) = cli(app.data_dir.path(), &["token", "create", "--user", "dora", "--name", "tests"], None).await;
    assert!(ok, "{stderr}");
    let dora = TestApp { client: client_with_token(token.trim()), ..app.clone() };
    let (bob, root) = (app.as_user("bob"), app.as_user("root"));
    let (status, delegation) = bob.post_json("/api/delegations", json!({ "to": "alice", "ends_at": in_secs(3600) })).await;
    assert_eq!(status, 201, "{delegation}");
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let id = approvals[0].id.clone();

    // alice, no approver herself, approves in bob's place: it counts as bob's.
    let (status, body) = app.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!((status, body["outcome"].as_str(), body["approved_by"].clone()), (200, Some("pending"), json!(["bob"])), "{body}");

    // bob ends the delegation; then root approves: the first of two that count, so nothing runs.
    let did = delegation["id"].as_str().unwrap();
    let (status, ended) = bob.post_json(&format!("/api/delegations/{did}/revoke"), json!({})).await;
    assert_eq!(status, 200, "{ended}");
    let (status, body) = root.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!((status, body["outcome"].as_str()), (200, Some("pending")), "{body}");
    assert_eq!(state_of(&app, &c, &id).await.0, "pending");
    assert_eq!(app.order(1001).await.status, "open", "alice's approval for bob no longer counts");

    // A second approver who may decide now completes it.
    let (status, body) = dora.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!((status, body["outcome"].as_str()), (200, Some("approved")), "{body}");
    app.wait_task(&task, TaskStatus::Completed).await;
    assert_eq!(app.order(1001).await.status, "refunded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_waits_for_a_change_of_who_may_decide_and_is_judged_by_it() {
    use countersign::bus::Bus;
    use engine::store;
    let app = app_with("approvers = [\"group:ops\"]\n").await;
    let root = app.as_user("root");
    let (status, _) = root.post_json("/api/groups", json!({ "name": "ops", "members": ["bob"] })).await;
    assert_eq!(status, 201);
    let c = app.create_conversation().await;
    let (_task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let id = approvals[0].id.clone();

    // Another server takes bob out of ops; before it commits, bob approves. The decision waits
    // for the change and is judged by it (on SQLite the one writer orders them; on PostgreSQL
    // the authority lock does), so bob is refused. The other server runs on a thread of its own:
    // SQLite's wait for the write lock blocks the thread of the server that waits.
    let url = crate::helpers::database_url(app.data_dir.path()).await;
    let (holding, held) = tokio::sync::oneshot::channel();
    let (approve_sent, sent) = std::sync::mpsc::channel::<()>();
    let approval = id.clone();
    let other = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let other = store::Store::connect(&url, Bus::default()).await.unwrap();
            let mut change = other.write(store::WriteScope::People).await.unwrap();
            store::groups::set_members(&mut change.tx, "ops", &[]).await.unwrap();
            let nobody = domain::rules::Approvers { names: vec!["group:ops".into()], people: Vec::new(), admins: true, each: Vec::new() };
            store::approvals::set_approvers(&mut change.tx, &approval, &nobody).await.unwrap();
            holding.send(()).unwrap();
            // Give bob's request time to reach the server and wait behind the change (not a
            // timing check: without the ordering, the decision commits first and it is a 200).
            sent.recv().unwrap();
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            change.commit().await.unwrap();
        })
    });
    held.await.unwrap();
    let bob = app.as_user("bob");
    let approve = format!("/api/approvals/{id}/approve");
    let decision = tokio::spawn(async move { bob.post_json(&approve, json!({})).await });
    approve_sent.send(()).unwrap();
    // Refused either way: 404 when the change committed before the handler looked the approval
    // up (bob no longer sees it), 403 when it committed while the decision waited for it.
    let (status, body) = decision.await.unwrap();
    tokio::task::spawn_blocking(move || other.join().unwrap()).await.unwrap();
    assert!(matches!((status, error_code(&body)), (403, "forbidden") | (404, "not_found")), "{status} {body}");
    assert_eq!(app.order(1001).await.status, "open");
    let (status, _) = root.post_json(&format!("/api/approvals/{id}/approve"), json!({})).await;
    assert_eq!(status, 200, "the admins decide now");
}
