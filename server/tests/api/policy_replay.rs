//! `countersign policy replay`: a draft configuration put to the calls a live one recorded, by
//! the CLI against the running server's database. Every number of the report is checked against
//! the calls made here: 24 calls in 12 turns, each turn a chat of its own (a few dozen calls keep
//! the test at about a second; each kind of change the report counts has several calls); then 200
//! calls in 16 turns, counted as they are made, under a draft that adds a stricter gate, removes
//! one and changes another's approvers. The admins' Policy page asks the same of the server
//! (`GET /api/policy`, `POST /api/policy/replay`): the same report as the command line's, for
//! admins only.

use std::collections::BTreeMap;

use domain::{TaskStatus, wire::Approval};
use serde_json::{Value, json};

use crate::helpers::{Options, TestApp, cli, cli_with_env, error_code, raw_post, refused_start_up, spawn_app_with, sqlite_only};

const TOOLS: &str = "tools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n";

/// Refunds and cancellations asked, anyone who sees them decides.
fn live() -> String {
    format!(
        "[[agents]]\nname = \"support\"\n{TOOLS}\
         [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\n\
         [[agents.gates]]\nname = \"cancellations\"\nkind = \"tools\"\ntools = [\"cancel_order\"]\n"
    )
}

/// Root decides refunds, finance big ones too; lookups are asked; cancellations are not.
fn draft() -> String {
    format!(
        "[[groups]]\nname = \"finance\"\nmembers = [\"bob\", \"root\"]\n\
         [[agents]]\nname = \"support\"\n{TOOLS}\
         [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\napprovers = [\"user:root\"]\n\
         [[agents.gates]]\nname = \"big-refunds\"\nkind = \"rule\"\nrule = \"tool == 'process_refund' && args.amount > 100\"\n\
         approvers = [\"group:finance\"]\n\
         [[agents.gates]]\nname = \"lookups\"\nkind = \"tools\"\ntools = [\"get_order\"]\n"
    )
}

/// `who` (alice, bob or root) approves (`body`: the decision's) or rejects the approval.
async fn decide(app: &TestApp, who: &str, approval: &Approval, verb: &str, body: Value) {
    let (status, answer) = app.as_user(who).post_json(&format!("/api/approvals/{}/{verb}", approval.id), body).await;
    assert_eq!(status, 200, "{verb} by {who}: {answer}");
}

/// Runs `policy replay` on the app's database with its configuration as the live one.
async fn replay(app: &TestApp, args: &[&str]) -> (bool, String, String) {
    let dir = app.data_dir.path();
    let live = dir.join("agents.toml").display().to_string();
    let args: Vec<&str> = ["policy", "replay"].into_iter().chain(args.iter().copied()).collect();
    cli_with_env(dir, &args, None, &[("COUNTERSIGN_AGENTS", live.as_str())]).await
}

fn counted(report: &Value, path: &str) -> u64 {
    report.pointer(path).and_then(Value::as_u64).unwrap_or_else(|| panic!("{path} in {report:#}"))
}

#[tokio::test]
async fn a_draft_replayed_against_the_recorded_calls_says_what_it_would_change() {
    let app = spawn_app_with(Options { agents_toml: Some(live()), ..Default::default() }).await;
    // 12 lookups, 3 a turn, nobody asked.
    for _ in 0..4 {
        let chat = app.create_conversation().await;
        let task = app.say(&chat, "look up order 1001, 1002 and 1003").await;
        app.wait_task(&task, TaskStatus::Completed).await;
    }
    // 8 small refunds, 2 a turn, approved by alice; the last turn's first one "always allowed".
    let mut granted_chat = None;
    for turn in 0..4 {
        let chat = app.create_conversation().await;
        let (task, asked) = app.pending_turn(&chat, "refund $2 on order 1001 and 1002", 2).await;
        for (i, approval) in asked.iter().enumerate() {
            let grant = turn == 3 && i == 0;
            decide(&app, "alice", approval, "approve", if grant { json!({ "grant": {} }) } else { json!({}) }).await;
        }
        app.wait_task(&task, TaskStatus::Completed).await;
        granted_chat = Some(chat);
    }
    // A big refund root approves, a small one alice rejects.
    let chat = app.create_conversation().await;
    let (task, big) = app.pending_turn(&chat, "refund $150 on order 1004", 1).await;
    decide(&app, "root", &big[0], "approve", json!({})).await;
    app.wait_task(&task, TaskStatus::Completed).await;
    let chat = app.create_conversation().await;
    let (task, small) = app.pending_turn(&chat, "refund $3 on order 1002", 1).await;
    decide(&app, "alice", &small[0], "reject", json!({ "reason": "not this one" })).await;
    app.wait_task(&task, TaskStatus::Completed).await;
    // Two cancellations: alice approves one, root rejects the other.
    let chat = app.create_conversation().await;
    let (task, cancels) = app.pending_turn(&chat, "cancel order 1003 and 1005", 2).await;
    decide(&app, "alice", &cancels[0], "approve", json!({})).await;
    decide(&app, "root", &cancels[1], "reject", json!({})).await;
    app.wait_task(&task, TaskStatus::Completed).await;

    let path = app.data_dir.path().join("draft.toml");
    std::fs::write(&path, draft()).unwrap();
    let draft = path.display().to_string();
    let (ok, stdout, stderr) = replay(&app, &[&draft, "--since", "1h", "--json"]).await;
    assert!(ok, "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));

    // 24 calls: 12 lookups ran unasked; 10 refunds and 2 cancellations were asked.
    let summary = |field: &str| counted(&report, &format!("/summary/{field}"));
    assert_eq!((summary("calls"), summary("replayed"), summary("asked_recorded")), (24, 24, 12), "{report:#}");
    // The draft asks the 10 refunds and the 12 lookups, not the cancellations.
    assert_eq!(summary("asked_draft"), 22);
    assert_eq!((summary("new_friction"), summary("now_unasked"), summary("deciders_change")), (12, 2, 10));
    assert_eq!((summary("no_longer_possible"), summary("grants_ended")), (0, 1));

    // Per gate, in the file's order: refunds stops every refund, big-refunds the $150 one.
    let gates: Vec<(&str, u64, u64)> = report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["gate"].as_str().unwrap(), g["calls"].as_u64().unwrap(), g["ran_unasked"].as_u64().unwrap()))
        .collect();
    assert_eq!(gates, [("refunds", 10, 0), ("big-refunds", 1, 0), ("lookups", 12, 12)]);
    assert_eq!(report["gates"][0]["by_tool"], json!({ "process_refund": 10 }));
    assert_eq!(report["gates"][0]["by_agent"], json!({ "support": 10 }));
    assert_eq!(report["gates"][2]["by_tool"], json!({ "get_order": 12 }));

    // New friction: the lookups, with the newest few as examples.
    let friction = &report["new_friction"];
    assert_eq!((friction["by_requirement"].clone(), friction["by_tool"].clone()), (json!({ "lookups": 12 }), json!({ "get_order": 12 })));
    let examples = friction["examples"].as_array().unwrap();
    assert_eq!(examples.len(), 5);
    for example in examples {
        assert_eq!((example["tool"].as_str(), example["agent"].as_str()), (Some("get_order"), Some("support")));
        assert!(example["call_id"].as_str().unwrap().starts_with("call_") && example["conversation_id"].is_string(), "{example}");
        assert_eq!((example["recorded"].as_str(), example["draft"].as_str()), (Some("ran unasked"), Some("asked under lookups (anyone)")));
    }
    assert!(examples.windows(2).all(|w| w[0]["at"].as_str() >= w[1]["at"].as_str()), "newest first: {examples:?}");

    // New risk: the cancellations would run unasked; the refunds would go to root (and finance).
    let unasked = &report["new_risk"]["unasked"];
    assert_eq!((unasked["calls"].as_u64(), unasked["by_outcome"].clone()), (Some(2), json!({ "approved": 1, "rejected": 1 })));
    assert_eq!(unasked["by_tool"], json!({ "cancel_order": 2 }));
    let changes = &report["new_risk"]["deciders"]["changes"];
    assert_eq!(
        *changes,
        json!([
            { "recorded": "anyone", "draft": "root", "calls": 9 },
            { "recorded": "anyone", "draft": "finance (bob, root) and root", "calls": 1 },
        ])
    );
    let big_example =
        report["new_risk"]["deciders"]["examples"].as_array().unwrap().iter().find(|e| e["args"].as_str().unwrap().contains("150"));
    assert_eq!(big_example.map(|e| e["recorded"].clone()), Some(json!("approved by root under refunds (anyone)")));

    // The deciders' load: who decided then, whom the draft names.
    let expected = [("person", "alice", 10, 0), ("person", "root", 2, 10), ("group", "finance", 0, 1), ("anyone", "anyone", 12, 12)];
    assert_eq!(load(&report), expected.map(|(k, w, r, d)| (k.to_owned(), w.to_owned(), r, d)));
    assert_eq!((counted(&report, "/load/recorded/approvals"), counted(&report, "/load/draft/approvals")), (12, 22));
    let days = report["window"]["days"].as_f64().unwrap();
    assert!((0.04..=0.05).contains(&days), "an hour: {days}");
    let per_day = report["load"]["draft"]["per_day"].as_f64().unwrap();
    assert!((per_day - 22.0 * 24.0).abs() < 0.01, "22 in an hour: {per_day}");
    let busiest = &report["load"]["draft"]["busiest_hour"];
    assert!(busiest["approvals"].as_u64().unwrap() >= 11, "the 22 fall in one or two clock hours: {busiest}");

    // The grant alice gave ends: the draft's refunds gate names its approvers, so it asks each call.
    let ended = report["grants_ended"].as_array().unwrap();
    assert_eq!(ended.len(), 1, "{ended:?}");
    assert_eq!(
        (ended[0]["gate"].as_str(), ended[0]["tool"].as_str(), ended[0]["created_by"].as_str()),
        (Some("refunds"), Some("process_refund"), Some("alice"))
    );
    assert_eq!(ended[0]["conversation_id"].as_str(), granted_chat.as_deref());
    assert_eq!(ended[0]["why"], "gate \"refunds\" asks each call on its own in the draft (it is not grantable)");
    // `policy check`'s warnings.
    let warnings: Vec<&str> = report["warnings"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(
        warnings.iter().any(|w| w.contains("gates \"big-refunds\" and \"refunds\" may apply together to process_refund")),
        "{warnings:?}"
    );

    // The same report as a table.
    let (ok, table, stderr) = replay(&app, &[&draft, "--since", "1h"]).await;
    assert!(ok, "{stderr}");
    assert!(table.contains("New friction: 12 calls ran without asking and would now be stopped"), "{table}");
    assert!(table.lines().any(|l| l.starts_with("  lookups ") && l.contains(" 12  get_order 12 ")), "{table}");
    // One agent's calls; an agent no configuration has and no call was made by is a mistake.
    let (ok, stdout, stderr) = replay(&app, &[&draft, "--since", "1h", "--agent", "nobody", "--json"]).await;
    assert!(!ok && stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("no agent \"nobody\" in the draft, in the configuration in force or among the calls recorded"), "{stderr}");
    let (_, stdout, _) = replay(&app, &[&draft, "--since", "90m", "--agent", "support", "--json"]).await;
    assert_eq!(counted(&serde_json::from_str(&stdout).unwrap(), "/summary/calls"), 24);
}

/// The live policy's refunds gate with other approvers (bob), a stricter gate over it for big
/// refunds (root), and no cancellations gate.
fn stricter_draft() -> String {
    format!(
        "[[agents]]\nname = \"support\"\n{TOOLS}\
         [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\napprovers = [\"user:bob\"]\n\
         [[agents.gates]]\nname = \"big-refunds\"\nkind = \"rule\"\nrule = \"tool == 'process_refund' && args.amount > 100\"\n\
         approvers = [\"user:root\"]\n"
    )
}

/// Rounds of [`a_few_hundred_calls_replayed_under_a_stricter_draft_are_counted_as_they_were_made`]:
/// each a turn of 17 lookups and a turn of 8 asked calls, 25 calls in 13 requests and the polls of
/// three waits (25 ms apart): 200 calls in 105 requests and the polls, a few seconds.
const ROUNDS: usize = 8;
const LOOKUPS_PER_TURN: usize = 17;
/// One turn of asked calls: a big refund (root approves it), five small ones (alice approves
/// them) and two cancellations (alice rejects them).
const ASKED_TURN: &str = "refund $150 on order 1004 and $1 on order 1001, 1002, 1003, 1005, 1006 and cancel order 1003 and 1005";

#[tokio::test]
async fn a_few_hundred_calls_replayed_under_a_stricter_draft_are_counted_as_they_were_made() {
    let options = Options { agents_toml: Some(live()), decisions_per_minute: Some(10_000), ..Default::default() };
    let app = spawn_app_with(options).await;
    let root = app.as_user("root");
    // What was recorded, counted here as it is made: lookups nobody was asked about, refunds of
    // $100 or less alice approved, bigger ones root approved, cancellations alice rejected.
    let (mut lookups, mut small, mut big, mut cancels) = (0u64, 0u64, 0u64, 0u64);
    let orders = [1001, 1002, 1003, 1004, 1005, 1006];
    for round in 0..ROUNDS {
        let ids: Vec<String> = (0..LOOKUPS_PER_TURN).map(|i| orders[(round + i) % orders.len()].to_string()).collect();
        let chat = app.create_conversation().await;
        let task = app.say(&chat, &format!("look up order {}", ids.join(", "))).await;
        app.wait_task(&task, TaskStatus::Completed).await;
        lookups += ids.len() as u64;

        let chat = app.create_conversation().await;
        let (task, asked) = app.pending_turn(&chat, ASKED_TURN, 8).await;
        for approval in &asked {
            let amount = approval.args["amount"].as_f64();
            let (who, verb) = match (approval.tool.as_str(), amount) {
                ("process_refund", Some(amount)) if amount > 100.0 => {
                    big += 1;
                    (&root, "approve")
                }
                ("process_refund", Some(_)) => {
                    small += 1;
                    (&app, "approve")
                }
                ("cancel_order", None) => {
                    cancels += 1;
                    (&app, "reject")
                }
                _ => panic!("a call this turn does not ask for: {approval:?}"),
            };
            let (status, answer) = who.post_json(&format!("/api/approvals/{}/{verb}", approval.id), json!({})).await;
            assert_eq!(status, 200, "{verb}: {answer}");
        }
        app.wait_task(&task, TaskStatus::Completed).await;
    }
    let (calls, refunds) = (lookups + small + big + cancels, small + big);
    assert_eq!((calls, lookups, small, big, cancels), (200, 136, 40, 8, 16), "the turns asked for these");

    let (status, report) = root.post_json("/api/policy/replay", json!({ "draft": stricter_draft(), "since_days": 1 })).await;
    assert_eq!(status, 200, "{report}");
    // The refunds and the cancellations were asked; the draft asks the refunds only, each of other deciders.
    let summary = |field: &str| counted(&report, &format!("/summary/{field}"));
    assert_eq!((summary("calls"), summary("replayed")), (calls, calls), "{report:#}");
    assert_eq!((summary("asked_recorded"), summary("asked_draft")), (refunds + cancels, refunds));
    assert_eq!((summary("new_friction"), summary("now_unasked"), summary("deciders_change")), (0, cancels, refunds));
    assert_eq!((summary("no_longer_possible"), summary("grants_ended")), (0, 0));
    assert_eq!(report["recorded_by_gate"], json!({ "refunds": refunds, "cancellations": cancels }));
    let days = report["per_day"].as_array().unwrap();
    let sum = |side: &str| days.iter().map(|d| d[side].as_u64().unwrap()).sum::<u64>();
    assert_eq!((sum("recorded"), sum("draft")), (refunds + cancels, refunds));

    // Per gate, in the draft's order: refunds stops every refund, big-refunds the big ones.
    let gates: Vec<(&str, u64, u64)> = report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["gate"].as_str().unwrap(), g["calls"].as_u64().unwrap(), g["ran_unasked"].as_u64().unwrap()))
        .collect();
    assert_eq!(gates, [("refunds", refunds, 0), ("big-refunds", big, 0)]);
    assert_eq!(report["gates"][0]["by_tool"], json!({ "process_refund": refunds }));
    assert_eq!(report["gates"][1]["by_tool"], json!({ "process_refund": big }));
    assert_eq!(report["gates"][1]["by_agent"], json!({ "support": big }));

    // No new friction: every call the draft stops was asked then.
    let friction = &report["new_friction"];
    assert_eq!(friction["calls"].as_u64(), Some(0), "{friction}");
    assert_eq!((friction["by_requirement"].clone(), friction["examples"].clone()), (json!({}), json!([])));

    // New risk: the cancellations would run unasked; the refunds would go to bob, the big ones to root too.
    let unasked = &report["new_risk"]["unasked"];
    assert_eq!(unasked["calls"].as_u64(), Some(cancels), "{unasked}");
    assert_eq!(
        (unasked["by_outcome"].clone(), unasked["by_tool"].clone()),
        (json!({ "rejected": cancels }), json!({ "cancel_order": cancels }))
    );
    let deciders = &report["new_risk"]["deciders"];
    assert_eq!(deciders["calls"].as_u64(), Some(refunds), "{deciders}");
    assert_eq!(
        deciders["changes"],
        json!([
            { "recorded": "anyone", "draft": "bob", "calls": small },
            { "recorded": "anyone", "draft": "root and bob", "calls": big },
        ])
    );

    // The deciders' load: who decided then (and "anyone", whom the live gates named), whom the draft names.
    let expected = [
        ("person", "alice", small + cancels, 0),
        ("person", "bob", 0, refunds),
        ("person", "root", big, big),
        ("anyone", "anyone", refunds + cancels, 0),
    ];
    assert_eq!(load(&report), expected.map(|(k, w, r, d)| (k.to_owned(), w.to_owned(), r, d)));
    assert_eq!((counted(&report, "/load/recorded/approvals"), counted(&report, "/load/draft/approvals")), (refunds + cancels, refunds));
}

#[tokio::test]
async fn a_bad_window_or_an_invalid_draft_is_said_with_exit_code_1() {
    let app = spawn_app_with(Options { agents_toml: Some(live()), ..Default::default() }).await;
    let path = app.data_dir.path().join("draft.toml");
    std::fs::write(&path, draft()).unwrap();
    let draft = path.display().to_string();
    for since in ["30", "30s", "0h", "twod", "+5d"] {
        let (ok, _, stderr) = replay(&app, &[&draft, "--since", since]).await;
        assert!(!ok, "{since}");
        assert!(stderr.contains("--since takes a number and a unit: 30d, 12h or 90m"), "{since}: {stderr}");
    }
    // At most a year back, as on the Policy page: a report lists every day of its window.
    for since in ["366d", "8761h", "3000000d", "106751991167d"] {
        let (ok, stdout, stderr) = replay(&app, &[&draft, "--since", since, "--json"]).await;
        assert!(!ok && stdout.is_empty(), "{since}: {stdout}");
        assert!(stderr.contains(&format!("--since must be between 1m and 365d (got {since:?})")), "{since}: {stderr}");
    }
    let (ok, _, stderr) = replay(&app, &[&draft, "--since", "365d"]).await;
    assert!(ok, "{stderr}");
    let broken = app.data_dir.path().join("broken.toml");
    std::fs::write(&broken, format!("[[agents]]\nname = \"support\"\n{TOOLS}[[agents.gates]]\nname = \"g\"\nkind = \"sometimes\"\n"))
        .unwrap();
    let (ok, stdout, stderr) = replay(&app, &[&broken.display().to_string()]).await;
    assert!(!ok && stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("unknown kind \"sometimes\""), "{stderr}");
    // Nothing recorded yet: a valid draft over an empty window is a report of zeros, exit code 0.
    let (ok, stdout, stderr) = replay(&app, &[&draft, "--json"]).await;
    assert!(ok, "{stderr}");
    assert_eq!(counted(&serde_json::from_str(&stdout).unwrap(), "/summary/calls"), 0);
}

/// A few calls of each kind, in alice's chats: three lookups nobody was asked about, two refunds
/// alice approved (the second "always allowed"), two cancellations (alice approves one, root
/// rejects the other). The refunds' chat, where alice's grant stands.
async fn record_a_few(app: &TestApp) -> String {
    let chat = app.create_conversation().await;
    let task = app.say(&chat, "look up order 1001, 1002 and 1003").await;
    app.wait_task(&task, TaskStatus::Completed).await;
    let chat = app.create_conversation().await;
    let (task, refunds) = app.pending_turn(&chat, "refund $2 on order 1001 and 1002", 2).await;
    decide(app, "alice", &refunds[0], "approve", json!({})).await;
    decide(app, "alice", &refunds[1], "approve", json!({ "grant": {} })).await;
    app.wait_task(&task, TaskStatus::Completed).await;
    let granted = chat;
    let chat = app.create_conversation().await;
    let (task, cancels) = app.pending_turn(&chat, "cancel order 1003 and 1005", 2).await;
    decide(app, "alice", &cancels[0], "approve", json!({})).await;
    decide(app, "root", &cancels[1], "reject", json!({})).await;
    app.wait_task(&task, TaskStatus::Completed).await;
    granted.to_string()
}

/// The report less what depends on the moment it was made: its window's times, and its days.
fn timeless(mut report: Value) -> Value {
    assert!(report.is_object(), "a report is an object: {report}");
    let fields = report.as_object_mut().expect("an object");
    fields.remove("window");
    fields.remove("per_day");
    report
}

#[tokio::test]
async fn an_admin_replays_a_draft_through_the_api_and_gets_the_command_lines_report() {
    let app = spawn_app_with(Options { agents_toml: Some(live()), ..Default::default() }).await;
    record_a_few(&app).await;
    let root = app.as_user("root");

    // The configuration in force: the file the server read, its text and version.
    let (status, policy) = root.get_json("/api/policy").await;
    assert_eq!(status, 200, "{policy}");
    assert_eq!(policy["text"], live());
    assert_eq!(policy["version"], countersign::agents::policy_version(&live()));
    assert_eq!(policy["agents"], json!(["support"]));
    assert!(policy["path"].as_str().is_some_and(|p| p.ends_with("agents.toml")), "{policy}");
    assert!(policy["warnings"].is_array(), "{policy}");
    assert!(policy["draft_in_shadow"].is_null(), "no draft in shadow: {policy}");

    let (status, report) = root.post_json("/api/policy/replay", json!({ "draft": draft(), "since_days": 1 })).await;
    assert_eq!(status, 200, "{report}");
    // 7 calls: the 3 lookups would be asked (new friction), the cancellations not (new risk), the
    // refunds by root (other deciders); alice's grant would end.
    let summary = |field: &str| counted(&report, &format!("/summary/{field}"));
    assert_eq!((summary("calls"), summary("replayed"), summary("asked_recorded"), summary("asked_draft")), (7, 7, 4, 5), "{report:#}");
    assert_eq!((summary("new_friction"), summary("now_unasked"), summary("deciders_change"), summary("grants_ended")), (3, 2, 2, 1));
    assert_eq!(report["live_version"], policy["version"]);
    assert_eq!(report["recorded_by_gate"], json!({ "cancellations": 2, "refunds": 2 }));
    let examples = report["new_friction"]["examples"].as_array().unwrap();
    assert!(examples.iter().all(|e| e["conversation_id"].is_string() && e["tool"] == "get_order"), "{examples:?}");
    // Each day of the window; together they count what the summary does.
    let days = report["per_day"].as_array().unwrap();
    assert!((1..=2).contains(&days.len()), "a day's window spans one or two UTC days: {days:?}");
    let sum = |side: &str| days.iter().map(|d| d[side].as_u64().unwrap()).sum::<u64>();
    assert_eq!((sum("recorded"), sum("draft")), (4, 5));

    // The command line's report for the same draft and window is the same, but for its moment.
    let path = app.data_dir.path().join("draft.toml");
    std::fs::write(&path, draft()).unwrap();
    let (ok, stdout, stderr) = replay(&app, &[&path.display().to_string(), "--since", "1d", "--json"]).await;
    assert!(ok, "{stderr}");
    let cli: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(timeless(report.clone()), timeless(cli));

    // The Policy page asks for the same report as HTML, rendered by the server: the same numbers,
    // each example linked to its chat, and the heading that takes focus.
    let html = |accept: &'static str| {
        let request = root.client.post(root.url("/api/policy/replay")).header("Accept", accept);
        async move {
            let response = request.json(&json!({ "draft": draft(), "since_days": 1 })).send().await.expect("POST");
            let kind = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
            (response.status().as_u16(), kind, response.text().await.unwrap_or_default())
        }
    };
    let (status, kind, page) = html("text/html").await;
    assert_eq!(status, 200, "{page}");
    assert!(kind.starts_with("text/html"), "{kind}");
    assert!(page.starts_with("<section ") && page.contains("class=\"replay-results\""), "{page}");
    assert!(page.contains("id=\"replay-results\""), "{page}");
    for (stat, n) in [("calls", 7), ("asked_recorded", 4), ("asked_draft", 5), ("new_friction", 3), ("now_unasked", 2), ("grants_ended", 1)]
    {
        assert!(page.contains(&format!("data-stat=\"{stat}\"")) && page.contains(&format!("<dd>{n}</dd>")), "{stat} {n}: {page}");
    }
    let chat = examples[0]["conversation_id"].as_str().unwrap();
    assert!(page.contains(&format!("href=\"/c/{chat}\"")), "{page}");
    // An Accept that puts JSON first, or names no type, still gets the JSON.
    let (status, kind, body) = html("application/json, text/html").await;
    assert_eq!((status, kind.as_str()), (200, "application/json"), "{body}");
    assert_eq!(timeless(serde_json::from_str(&body).unwrap()), timeless(report.clone()));
    // A refused draft is the API's JSON error, whatever was asked for.
    let refused = root.client.post(root.url("/api/policy/replay")).header("Accept", "text/html");
    let response = refused.json(&json!({ "draft": "not = [toml", "since_days": 1 })).send().await.expect("POST");
    assert_eq!(response.status().as_u16(), 422);
    let body: Value = response.json().await.expect("a JSON error");
    assert_eq!(body["error"]["details"][0]["path"], "/draft", "{body}");

    // One agent's calls; an agent no one knows is refused at /agent.
    let (status, report) = root.post_json("/api/policy/replay", json!({ "draft": draft(), "agent": "support" })).await;
    assert_eq!(status, 200, "{report}");
    assert_eq!((counted(&report, "/summary/calls"), report["window"]["agent"].as_str()), (7, Some("support")));
    let (status, body) = root.post_json("/api/policy/replay", json!({ "draft": draft(), "agent": "nobody" })).await;
    assert_eq!((status, body["error"]["details"][0]["path"].as_str()), (422, Some("/agent")), "{body}");
}

#[tokio::test]
async fn only_admins_see_the_policy_or_replay_a_draft_and_a_bad_draft_is_a_422_naming_its_problem() {
    let app = spawn_app_with(Options { agents_toml: Some(live()), ..Default::default() }).await;
    record_a_few(&app).await;
    let root = app.as_user("root");
    let trail = || async { root.get_json("/api/audit?order=newest&limit=1000").await.1["entries"].as_array().map(Vec::len) };
    let before = trail().await;

    // Alice is no admin: refused, before her body is even read, and nothing changes.
    let (status, body) = app.get_json("/api/policy").await;
    assert_eq!((status, error_code(&body)), (403, "forbidden"));
    let (status, body) = app.post_json("/api/policy/replay", json!({ "draft": draft() })).await;
    assert_eq!((status, error_code(&body)), (403, "forbidden"));
    assert_eq!(body["error"]["message"], "only admins may do this");
    let (status, _) = raw_post(&app, "/api/policy/replay", "application/json", "{").await;
    assert_eq!(status, 403, "the role is checked first");
    assert_eq!(trail().await, before, "a replay writes nothing, refused or not");

    // A draft that is not a valid configuration: its problem as `policy check` says it, at /draft.
    let broken = format!("[[agents]]\nname = \"support\"\n{TOOLS}[[agents.gates]]\nname = \"g\"\nkind = \"sometimes\"\n");
    let (status, body) = root.post_json("/api/policy/replay", json!({ "draft": broken })).await;
    assert_eq!((status, error_code(&body)), (422, "unprocessable"), "{body}");
    let details = body["error"]["details"].as_array().unwrap();
    assert_eq!(details.len(), 1, "{body}");
    assert_eq!(details[0]["path"], "/draft");
    assert!(details[0]["message"].as_str().unwrap().contains("unknown kind \"sometimes\""), "{body}");
    let (status, body) = root.post_json("/api/policy/replay", json!({ "draft": "" })).await;
    assert_eq!(status, 422, "an empty draft has no agent: {body}");

    // A window outside 1 to 365 days, a field of no such name, malformed JSON.
    for days in [0, 366] {
        let (status, body) = root.post_json("/api/policy/replay", json!({ "draft": draft(), "since_days": days })).await;
        assert_eq!((status, body["error"]["details"][0]["path"].as_str()), (422, Some("/since_days")), "{days}: {body}");
    }
    let (status, body) = root.post_json("/api/policy/replay", json!({ "draft": draft(), "since": "30d" })).await;
    assert_eq!((status, error_code(&body)), (422, "unprocessable"), "{body}");
    let (status, body) = raw_post(&root, "/api/policy/replay", "application/json", "{\"draft\": ").await;
    assert_eq!((status, error_code(&body)), (400, "bad_request"), "{body}");
    // A draft over the body limit (64 KiB unless COUNTERSIGN_BODY_LIMIT says otherwise) is a 413 that names it.
    let (status, body) = root.post_json("/api/policy/replay", json!({ "draft": "#".repeat(70 * 1024) })).await;
    let message = body["error"]["message"].as_str();
    assert_eq!((status, message), (413, Some("the request body is too large: at most 64 KiB (COUNTERSIGN_BODY_LIMIT)")), "{body}");
    assert_eq!(trail().await, before);
}

/// A draft whose one gate is `rule`, a CEL expression without double quotes.
fn draft_with_rule(rule: &str) -> String {
    format!("[[agents]]\nname = \"support\"\n{TOOLS}[[agents.gates]]\nname = \"deep\"\nkind = \"rule\"\nrule = \"{rule}\"\n")
}

/// `rule` inside `depth` pairs of parentheses.
fn nested(depth: usize, rule: &str) -> String {
    format!("{}{rule}{}", "(".repeat(depth), ")".repeat(depth))
}

#[tokio::test]
async fn a_rule_nested_past_the_limit_is_refused_naming_its_gate_at_every_door_and_the_server_answers_on() {
    let app = spawn_app_with(Options { agents_toml: Some(live()), ..Default::default() }).await;
    let root = app.as_user("root");
    let deep = draft_with_rule(&nested(100, "tool == 'get_order'"));

    // The Policy page's replay: a 422 on /draft that names the gate, not a crash.
    let (status, body) = root.post_json("/api/policy/replay", json!({ "draft": deep })).await;
    assert_eq!((status, error_code(&body)), (422, "unprocessable"), "{body}");
    assert_eq!(body["error"]["details"][0]["path"], "/draft", "{body}");
    let message = body["error"]["details"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("gate \"deep\": the rule nests brackets ( [ { 100 deep; a rule may nest them at most 12 deep"), "{body}");
    // The server answers on, and replays a rule as deep as the limit.
    let shallow = draft_with_rule(&nested(12, "tool == 'get_order'"));
    let (status, report) = root.post_json("/api/policy/replay", json!({ "draft": shallow })).await;
    assert_eq!(status, 200, "{report}");
    let (status, _) = root.get_json("/api/policy").await;
    assert_eq!(status, 200);

    // The command line and start-up say the same.
    let path = app.data_dir.path().join("deep.toml");
    std::fs::write(&path, &deep).unwrap();
    let (ok, _, stderr) = cli(app.data_dir.path(), &["policy", "check", &path.display().to_string()], None).await;
    assert!(!ok && stderr.contains("gate \"deep\": the rule nests brackets ( [ { 100 deep"), "{stderr}");
    let (ok, _, stderr) = replay(&app, &[&path.display().to_string()]).await;
    assert!(!ok && stderr.contains("gate \"deep\": the rule nests brackets ( [ { 100 deep"), "{stderr}");
    let stderr = refused_start_up(&deep).await;
    assert!(stderr.contains("gate \"deep\": the rule nests brackets ( [ { 100 deep"), "{stderr}");
}

#[tokio::test]
async fn a_replay_reads_an_existing_database_of_this_builds_schema_and_creates_none() {
    if !sqlite_only("a_replay_reads_an_existing_database_of_this_builds_schema_and_creates_none") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("draft.toml");
    std::fs::write(&path, draft()).unwrap();
    let draft = path.display().to_string();

    // A mistyped data directory: said, and neither it nor a database is made.
    let missing = dir.path().join("no-such-dir");
    let (ok, stdout, stderr) = cli(&missing, &["policy", "replay", &draft], None).await;
    assert!(!ok && stdout.is_empty(), "{stdout}");
    let file = missing.join("countersign.db");
    assert!(stderr.contains(&format!("there is no database at {}", file.display())), "{stderr}");
    assert!(!missing.exists(), "the directory is not created");

    // A file that is not the server's database is not made one.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    std::fs::write(empty.join("countersign.db"), b"").unwrap();
    let (ok, _, stderr) = cli(&empty, &["policy", "replay", &draft], None).await;
    assert!(!ok && stderr.contains("it has no Countersign schema"), "{stderr}");
    assert_eq!(std::fs::metadata(empty.join("countersign.db")).unwrap().len(), 0, "nothing is written to it");
}

/// `draft` replayed by root through the API over the last day: the report.
async fn replayed(app: &TestApp, draft: &str) -> Value {
    let (status, report) = app.as_user("root").post_json("/api/policy/replay", json!({ "draft": draft, "since_days": 1 })).await;
    assert_eq!(status, 200, "{report}");
    report
}

/// The summary's `fields`, in that order.
fn summary(report: &Value, fields: &[&str]) -> Vec<u64> {
    fields.iter().map(|field| counted(report, &format!("/summary/{field}"))).collect()
}

/// Each gate's calls, by name.
fn gate_calls(report: &Value) -> BTreeMap<String, u64> {
    let gates = report["gates"].as_array().unwrap();
    gates.iter().map(|g| (g["gate"].as_str().unwrap().to_owned(), g["calls"].as_u64().unwrap())).collect()
}

/// The deciders' load: kind, who, approvals recorded and under the draft.
fn load(report: &Value) -> Vec<(String, String, u64, u64)> {
    let rows = report["load"]["deciders"].as_array().unwrap();
    rows.iter()
        .map(|l| {
            let (recorded, draft) = (l["recorded"]["approvals"].as_u64().unwrap(), l["draft"]["approvals"].as_u64().unwrap());
            (l["kind"].as_str().unwrap().to_owned(), l["who"].as_str().unwrap().to_owned(), recorded, draft)
        })
        .collect()
}

#[tokio::test]
async fn grants_four_eyes_shadow_gates_and_failing_rules_are_replayed_as_the_engine_would_treat_the_calls() {
    let app = spawn_app_with(Options { agents_toml: Some(live()), ..Default::default() }).await;
    let granted_chat = record_a_few(&app).await;
    // A refund alice's grant lets run unasked: 8 calls, 4 of them asked.
    let task = app.say(&granted_chat, "refund $1 on order 1006").await;
    app.wait_task(&task, TaskStatus::Completed).await;
    let numbers =
        ["calls", "asked_recorded", "asked_draft", "new_friction", "now_unasked", "deciders_change", "grants_ended", "rule_errors"];

    // The live file itself changes nothing: it keeps the grant, so the refund it let run is no friction.
    let same = replayed(&app, &live()).await;
    assert_eq!(summary(&same, &numbers), [8, 4, 4, 0, 0, 0, 0, 0], "{same:#}");
    assert_eq!(gate_calls(&same), BTreeMap::from([("cancellations".to_owned(), 2), ("refunds".to_owned(), 3)]), "its gate matches it");
    assert!(
        same["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("calls that ran under a standing grant made under the draft's own version: 1;"))
    );

    // Another version (a comment added) ends the grant: the refund it let run would be asked.
    let other = replayed(&app, &format!("{}# another version\n", live())).await;
    assert_eq!(summary(&other, &numbers), [8, 4, 5, 1, 0, 0, 1, 0], "{other:#}");
    let example = &other["new_friction"]["examples"][0];
    assert!(example["recorded"].as_str().unwrap().starts_with("ran unasked under alice's grant "), "{example}");
    assert_eq!(
        example["draft"],
        "asked under refunds (anyone); the grant would not cover it: the draft is another version of the configuration, and a grant covers calls only under the version it was made under"
    );

    // Four-eyes on cancellations: both change; alice approved one of her own, which the draft refuses.
    let four_eyes = replayed(&app, &format!("{}separate_requester = true\n", live())).await;
    assert_eq!(summary(&four_eyes, &numbers), [8, 4, 5, 1, 0, 2, 1, 0], "{four_eyes:#}");
    assert_eq!(
        four_eyes["new_risk"]["deciders"]["changes"],
        json!([
            { "recorded": "anyone", "draft": "anyone; not the requester (four-eyes)", "calls": 1 },
            { "recorded": "anyone, approved by the requester", "draft": "anyone; not the requester (four-eyes)", "calls": 1 },
        ])
    );
    let examples = four_eyes["new_risk"]["deciders"]["examples"].as_array().unwrap();
    let own = examples.iter().find(|e| e["recorded"] == "approved by alice under cancellations (anyone)").map(|e| e["draft"].clone());
    assert_eq!(
        own,
        Some(json!("asked under cancellations (anyone; not the requester (four-eyes)); alice, the requester, could not approve it"))
    );

    // Two shadow gates over the lookups: each counts every lookup, whichever comes first.
    let lookups = "[[agents.gates]]\nname = \"shadow-lookups\"\nkind = \"tools\"\ntools = [\"get_order\"]\nmode = \"shadow\"\n";
    let reads = "[[agents.gates]]\nname = \"shadow-reads\"\nkind = \"rule\"\nrule = \"tool == 'get_order' || tool == 'list_orders'\"\nmode = \"shadow\"\n";
    let mut seen = Vec::new();
    for (first, second) in [(lookups, reads), (reads, lookups)] {
        let report = replayed(&app, &format!("{}{first}{second}", live())).await;
        seen.push((gate_calls(&report), report["summary"].clone()));
    }
    let expected = [("cancellations", 2), ("refunds", 3), ("shadow-lookups", 3), ("shadow-reads", 3)];
    assert_eq!(seen[0].0, expected.into_iter().map(|(g, n)| (g.to_owned(), n)).collect::<BTreeMap<_, _>>());
    assert_eq!(seen[0], seen[1], "the order of the gates changes nothing");

    // A rule that cannot be evaluated for the calls without an amount: counted, and stopped as at runtime (fail-closed).
    let failing =
        replayed(&app, &format!("{}[[agents.gates]]\nname = \"big-amounts\"\nkind = \"rule\"\nrule = \"args.amount > 100\"\n", live()))
            .await;
    assert_eq!(summary(&failing, &numbers), [8, 4, 8, 4, 0, 0, 1, 5], "{failing:#}");
    let errors = failing["rule_errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(
        (errors[0]["gate"].as_str(), errors[0]["calls"].as_u64(), errors[0]["stopped"].as_u64()),
        (Some("big-amounts"), Some(5), Some(5))
    );
    assert!(errors[0]["error"].as_str().unwrap().starts_with("args.amount > 100: "), "{errors:?}");
    assert_eq!(errors[0]["example"]["tool"], "cancel_order", "the newest");
    assert_eq!(failing["new_friction"]["by_requirement"], json!({ "big-amounts": 3, "refunds": 1 }));

    // An agent that neither configuration has and that made no call: a 422, not a report of nothing.
    let (status, body) = app.as_user("root").post_json("/api/policy/replay", json!({ "draft": live(), "agent": "nosuch" })).await;
    assert_eq!((status, body["error"]["details"][0]["path"].as_str()), (422, Some("/agent")), "{body}");
    assert!(body["error"]["details"][0]["message"].as_str().unwrap().contains("no agent \"nosuch\""), "{body}");
}

/// An agent whose refunds `approver` decides.
fn refunds_decided_by(approver: &str) -> String {
    format!(
        "[[agents]]\nname = \"support\"\n{TOOLS}\
         [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\napprovers = [\"{approver}\"]\n"
    )
}

/// Refunds decided by finance, `members`.
fn finance(members: &str) -> String {
    format!("[[groups]]\nname = \"finance\"\nmembers = [{members}]\n{}", refunds_decided_by("group:finance"))
}

#[tokio::test]
async fn a_groups_members_and_names_that_stand_for_no_one_are_resolved_as_the_server_would() {
    let live = finance("\"bob\", \"root\"");
    let app = spawn_app_with(Options { agents_toml: Some(live.clone()), ..Default::default() }).await;
    let chat = app.create_conversation().await;
    let (task, refunds) = app.pending_turn(&chat, "refund $2 on order 1001 and 1002", 2).await;
    for approval in &refunds {
        decide(&app, "bob", approval, "approve", json!({})).await;
    }
    app.wait_task(&task, TaskStatus::Completed).await;
    let changed = |report: &Value| (counted(report, "/summary/deciders_change"), report["new_risk"]["deciders"]["changes"].clone());
    let to = |draft: &str| json!([{ "recorded": "finance (bob, root)", "draft": draft, "calls": 2 }]);

    assert_eq!(changed(&replayed(&app, &live).await), (0, json!([])), "the same members");
    assert_eq!(changed(&replayed(&app, &finance("\"bob\"")).await), (2, to("finance (bob)")));
    // Members without an account, or no group of that name: the name stands for no one, and the admins decide.
    assert_eq!(changed(&replayed(&app, &finance("\"carol\", \"erin\"")).await), (2, to("finance (no one, so an admin)")));
    let gone = replayed(&app, &refunds_decided_by("group:finance")).await;
    assert_eq!(changed(&gone), (2, to("finance (no one, so an admin)")), "the [[groups]] table removed");
    // Who decided then (bob, for finance); the admins under the draft.
    let to_the_admins = [("person", "bob", 2, 0), ("group", "finance", 2, 0), ("admins", "admins", 0, 2)]
        .map(|(kind, who, recorded, draft)| (kind.to_owned(), who.to_owned(), recorded, draft));
    assert_eq!(load(&gone), to_the_admins);

    // A user without an account is no person: the admins decide, and the notes say why.
    let nobody = replayed(&app, &refunds_decided_by("user:nobody")).await;
    assert_eq!(changed(&nobody), (2, to("nobody (no one, so an admin)")));
    assert_eq!(load(&nobody), to_the_admins, "no person \"nobody\" with a load");
    let notes: Vec<&str> = nobody["notes"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(notes.iter().any(|n| n.contains("stand for no one here") && n.contains("user:nobody")), "{notes:?}");
}
