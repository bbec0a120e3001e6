//! Accounts, sessions, authorization, CSRF, rate limits, tokens and the audit trail.

use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::{BinaryServer, Options, PASSWORD, TestApp, cli, error_code, spawn_app, spawn_app_with, test_client};

async fn status(app: &TestApp, method: &str, path: &str) -> u16 {
    let request = match method {
        "GET" => app.client.get(app.url(path)),
        _ if path.ends_with("/messages") => app.client.post(app.url(path)).json(&json!({ "text": "hi" })),
        _ => app.client.post(app.url(path)).json(&json!({})),
    };
    request.send().await.unwrap().status().as_u16()
}

#[tokio::test]
async fn every_route_answers_each_kind_of_caller_as_documented_and_refusals_change_nothing() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let a = &approvals[0].id;
    let before = app.detail(&c).await.events;

    // (method, path, anonymous, alice = owner, bob = other user, root = admin); 0 = not sent.
    let table: Vec<(&str, String, u16, u16, u16, u16)> = vec![
        ("GET", format!("/api/conversations/{c}"), 401, 200, 404, 200),
        ("GET", format!("/api/tasks/{task}"), 401, 200, 404, 200),
        ("GET", format!("/api/approvals/{a}"), 401, 200, 404, 200),
        ("GET", "/api/conversations".into(), 401, 200, 200, 200),
        ("GET", "/api/approvals".into(), 401, 200, 200, 200),
        ("GET", "/api/orders/1001".into(), 401, 200, 200, 200),
        ("GET", "/api/agents".into(), 401, 200, 200, 200),
        ("GET", "/readyz".into(), 200, 200, 200, 200),
        ("GET", "/metrics".into(), 200, 200, 200, 200),
        ("GET", "/api/tokens".into(), 401, 200, 200, 200),
        ("GET", "/api/session".into(), 401, 200, 200, 200),
        ("GET", "/api/users".into(), 401, 403, 403, 200),
        ("GET", "/api/audit".into(), 401, 403, 403, 200),
        ("GET", "/api/audit/verify".into(), 401, 403, 403, 200),
        ("GET", "/api/audit/export".into(), 401, 403, 403, 200),
        ("POST", format!("/api/conversations/{c}/messages"), 401, 0, 404, 0),
        ("POST", format!("/api/approvals/{a}/approve"), 401, 0, 404, 0),
        ("POST", format!("/api/approvals/{a}/reject"), 401, 0, 404, 0),
        ("POST", format!("/api/tasks/{task}/approve-all"), 401, 0, 404, 0),
        ("POST", format!("/api/tasks/{task}/reject-all"), 401, 0, 404, 0),
        ("POST", format!("/api/tasks/{task}/abort"), 401, 0, 404, 0),
        ("POST", "/api/conversations".into(), 401, 0, 0, 0),
    ];
    let callers = [("anonymous", app.anonymous()), ("alice", app.clone()), ("bob", app.as_user("bob")), ("root", app.as_user("root"))];
    for (method, path, anonymous, alice, bob, root) in &table {
        for ((who, caller), expected) in callers.iter().zip([anonymous, alice, bob, root]) {
            if *expected != 0 {
                assert_eq!(status(caller, method, path).await, *expected, "{who} {method} {path}");
            }
        }
    }
    // The SSE stream follows the same rules.
    for ((who, caller), expected) in callers.iter().zip([401, 200, 404, 200]) {
        let response = caller.client.get(caller.url(&format!("/api/conversations/{c}/events"))).send().await.unwrap();
        assert_eq!(response.status().as_u16(), expected, "{who} events");
    }
    // Lists show only what the caller may see.
    assert_eq!(app.as_user("bob").get_json("/api/approvals").await.1.as_array().unwrap().len(), 0);
    assert_eq!(app.as_user("bob").get_json("/api/conversations").await.1.as_array().unwrap().len(), 0);
    assert_eq!(app.as_user("root").get_json("/api/approvals").await.1.as_array().unwrap().len(), 1);

    assert_eq!(app.detail(&c).await.events, before, "no refused request changed anything");
    assert_eq!(app.pending_approvals_of(&task).await.len(), 1);

    // An admin decides for the user; the decision records who.
    let (code, _) = app.as_user("root").post_json(&format!("/api/approvals/{a}/approve"), json!({})).await;
    assert_eq!(code, 200);
    let (_, approval) = app.get_json(&format!("/api/approvals/{a}")).await;
    assert_eq!(approval["decided_by"], "root");
    assert_eq!(approval["owner"], "alice");
}

fn cookie_client() -> reqwest::Client {
    test_client().cookie_store(true).build().unwrap()
}

async fn login(app: &TestApp, client: &reqwest::Client, user: &str, password: &str) -> StatusCode {
    client.post(app.url("/api/session")).json(&json!({ "username": user, "password": password })).send().await.unwrap().status()
}

#[tokio::test]
async fn a_session_logs_in_with_the_right_password_only_and_logs_out() {
    let app = spawn_app().await;
    let client = cookie_client();
    assert_eq!(login(&app, &client, "alice", "wrong-password").await, 401);
    assert_eq!(login(&app, &client, "nobody", PASSWORD).await, 401);
    assert_eq!(client.get(app.url("/api/session")).send().await.unwrap().status(), 401);
    let response = client.post(app.url("/api/session")).json(&json!({ "username": "alice", "password": PASSWORD })).send().await.unwrap();
    let cookie = response.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"), "{cookie}");
    let me: Value = client.get(app.url("/api/session")).send().await.unwrap().json().await.unwrap();
    assert_eq!((me["username"].as_str(), me["role"].as_str()), (Some("alice"), Some("user")));
    assert_eq!(client.delete(app.url("/api/session")).send().await.unwrap().status(), 204);
    assert_eq!(client.get(app.url("/api/session")).send().await.unwrap().status(), 401);
}

/// Attack: online guessing, 50 wrong passwords for one user at once. Only the allowed number are
/// checked (the rest get 429 with Retry-After before any hashing), at most one hash per core runs
/// at a time, the refusals log no one in, and the right password works again after the window.
#[tokio::test]
async fn fifty_wrong_passwords_get_429s_and_the_right_one_works_after_the_window() {
    // Long enough that all 50 guesses are counted inside one window on a loaded 2-core machine
    // (with 2 s, the PostgreSQL pass once counted the late ones in a second window).
    let window_ms = 6_000;
    let app = spawn_app_with(Options { login_limits: Some((5, 1_000, window_ms)), ..Default::default() }).await;
    let guesses = (0..50).map(|i| {
        let client = cookie_client();
        let app = app.clone();
        async move {
            let response = client
                .post(app.url("/api/session"))
                .json(&json!({ "username": "Alice", "password": format!("guess-{i}") }))
                .send()
                .await
                .unwrap();
            let retry_after = response.headers().get("retry-after").map(|v| v.to_str().unwrap().parse::<u64>().unwrap());
            (response.status(), retry_after, client.get(app.url("/api/session")).send().await.unwrap().status())
        }
    });
    let answers = futures::future::join_all(guesses).await;
    let count = |status: StatusCode| answers.iter().filter(|a| a.0 == status).count();
    assert_eq!((count(StatusCode::UNAUTHORIZED), count(StatusCode::TOO_MANY_REQUESTS)), (5, 45), "{answers:?}");
    assert!(answers.iter().filter(|a| a.0 == 429).all(|a| a.1.is_some_and(|s| (1..=6).contains(&s))), "{answers:?}");
    assert!(answers.iter().all(|a| a.2 == StatusCode::UNAUTHORIZED), "no guess made a session");
    let cores = std::thread::available_parallelism().unwrap().get();
    let peak = countersign::auth::password::peak_in_flight();
    assert!(peak <= cores, "{peak} password hashes ran at once on {cores} cores");

    // Within the window even the right password waits (the name's failures are used up); the
    // form post sends the browser back to the page with the wait; another user is not affected.
    let client = cookie_client();
    let refused = client.post(app.url("/api/session")).json(&json!({ "username": "alice", "password": PASSWORD })).send().await.unwrap();
    assert_eq!(refused.status(), 429);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(error_code(&body), "too_many_requests");
    assert!(body["error"]["message"].as_str().unwrap().contains("user name"), "{body}");
    let no_redirects = test_client().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let form =
        no_redirects.post(app.url("/login?next=/queue")).form(&[("username", "alice"), ("password", PASSWORD)]).send().await.unwrap();
    assert_eq!(form.status(), 303);
    assert!(form.headers()["location"].to_str().unwrap().starts_with("/login?retry_after="), "{:?}", form.headers());
    assert_eq!(login(&app, &cookie_client(), "bob", PASSWORD).await, 200);

    tokio::time::sleep(std::time::Duration::from_millis(window_ms + 200)).await;
    assert_eq!(login(&app, &client, "alice", PASSWORD).await, 200);
    assert_eq!(client.get(app.url("/api/session")).send().await.unwrap().status(), 200);
}

/// Attack: one address guessing across many user names hits the per-address limit; right
/// passwords do not count as failures.
#[tokio::test]
async fn one_address_guessing_many_names_gets_429() {
    let app = spawn_app_with(Options { login_limits: Some((100, 3, 60_000)), ..Default::default() }).await;
    for _ in 0..5 {
        assert_eq!(login(&app, &cookie_client(), "bob", PASSWORD).await, 200, "successes are not failures");
    }
    for name in ["carol", "dave", "erin"] {
        assert_eq!(login(&app, &cookie_client(), name, "guess").await, 401);
    }
    let refused =
        cookie_client().post(app.url("/api/session")).json(&json!({ "username": "frank", "password": "guess" })).send().await.unwrap();
    assert_eq!(refused.status(), 429);
    let body: Value = refused.json().await.unwrap();
    assert!(body["error"]["message"].as_str().unwrap().contains("address"), "{body}");
    assert!(refused_retry_after(&app).await >= 50, "the wait is the rest of the minute window");
}

async fn refused_retry_after(app: &TestApp) -> u64 {
    let response = cookie_client().post(app.url("/api/session")).json(&json!({ "username": "x", "password": "y" })).send().await.unwrap();
    assert_eq!(response.status(), 429);
    response.headers()["retry-after"].to_str().unwrap().parse().unwrap()
}

#[tokio::test]
async fn a_cross_site_post_with_a_session_cookie_is_refused_and_changes_nothing() {
    let app = spawn_app().await;
    let client = cookie_client();
    assert_eq!(login(&app, &client, "alice", PASSWORD).await, 200);
    let post = |headers: &[(&str, &str)]| {
        let mut request = client.post(app.url("/api/conversations")).json(&json!({}));
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        request.send()
    };
    let refused = post(&[("origin", "https://evil.example")]).await.unwrap();
    assert_eq!(refused.status(), 403);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(error_code(&body), "forbidden");
    assert_eq!(post(&[("sec-fetch-site", "cross-site")]).await.unwrap().status(), 403);
    // Attack: any Authorization header that is not a bearer token leaves the cookie in charge.
    assert_eq!(post(&[("sec-fetch-site", "cross-site"), ("authorization", "Basic YWxpY2U6eA==")]).await.unwrap().status(), 403);
    assert_eq!(app.get_json("/api/conversations").await.1.as_array().unwrap().len(), 0, "nothing was created");
    let host = app.base_url.trim_start_matches("http://").to_owned();
    assert_eq!(post(&[("origin", &app.base_url), ("host", &host)]).await.unwrap().status(), 201);
    assert_eq!(post(&[("sec-fetch-site", "same-origin")]).await.unwrap().status(), 201);
}

#[tokio::test]
async fn decisions_over_the_per_user_limit_get_429_with_retry_after() {
    let app = spawn_app_with(Options { decisions_per_minute: Some(2), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let path = format!("/api/approvals/{}/reject", approvals[0].id);
    let bob = app.as_user("bob");
    // Bob's refused attempts use up bob's budget, not alice's.
    for _ in 0..2 {
        assert_eq!(bob.post_json(&path, json!({})).await.0, 404);
    }
    let response = bob.client.post(bob.url(&path)).json(&json!({})).send().await.unwrap();
    assert_eq!(response.status(), 429);
    assert!(response.headers()["retry-after"].to_str().unwrap().parse::<u64>().unwrap() >= 1);
    assert_eq!(app.pending_approvals_of(&task).await.len(), 1, "still pending");
    assert_eq!(app.post_json(&path, json!({ "reason": "no" })).await.0, 200, "alice has her own budget");
}

#[tokio::test]
async fn a_revoked_token_no_longer_works() {
    let app = spawn_app().await;
    let client = cookie_client();
    assert_eq!(login(&app, &client, "alice", PASSWORD).await, 200);
    let app = TestApp { client, ..app };
    let (code, created) = app.post_json("/api/tokens", json!({ "name": "script" })).await;
    assert_eq!(code, 201);
    let token = created["token"].as_str().unwrap();
    let scripted = TestApp { client: crate::helpers::client_with_token(token), ..app.clone() };
    assert_eq!(scripted.get_json("/api/session").await.0, 200);
    let listed = app.get_json("/api/tokens").await.1;
    assert!(listed.as_array().unwrap().iter().all(|t| t.get("token").is_none() && t.get("token_hash").is_none()), "{listed}");
    assert_eq!(app.post_json(&format!("/api/tokens/{}/revoke", created["id"].as_str().unwrap()), json!({})).await.0, 204);
    let (code, body) = scripted.get_json("/api/session").await;
    assert_eq!((code, body["error"]["message"].as_str()), (401, Some("the API token is unknown or revoked")));
    // A stale token does not lock its holder out of what needs no login.
    assert_eq!(scripted.get_json("/healthz").await.0, 200);
}

/// No token makes tokens, whatever its scopes: one that may only call is told that tokens are made
/// from a signed-in session, not sent after a token with more scopes, and nothing is made.
#[tokio::test]
async fn a_call_only_token_is_told_that_tokens_come_from_a_signed_in_session() {
    let app = spawn_app().await;
    let client = cookie_client();
    assert_eq!(login(&app, &client, "alice", PASSWORD).await, 200);
    let app = TestApp { client, ..app };
    let (code, created) = app.post_json("/api/tokens", json!({ "name": "gateway", "scopes": ["call"] })).await;
    assert_eq!(code, 201, "{created}");
    let gateway = TestApp { client: crate::helpers::client_with_token(created["token"].as_str().unwrap()), ..app.clone() };
    let (code, body) = gateway.post_json("/api/tokens", json!({ "name": "backdoor", "scopes": ["read", "decide", "call"] })).await;
    assert_eq!(code, 403, "{body}");
    let said = body["error"]["message"].as_str().unwrap();
    assert!(said.contains("made from a signed-in session only") && !said.contains("scope (countersign token create"), "{said}");
    let listed = app.get_json("/api/tokens").await.1;
    assert!(!listed.as_array().unwrap().iter().any(|t| t["name"] == "backdoor"), "nothing was made: {listed}");
}

#[tokio::test]
async fn a_user_is_refused_an_admin_route_before_its_query_is_read() {
    let app = spawn_app().await;
    let bob = app.as_user("bob");
    for path in ["/api/audit?after=not-a-number", "/api/audit/verify?anchor=nonsense", "/api/users?x=1", "/api/audit/export"] {
        let (code, body) = bob.get_json(path).await;
        assert_eq!((code, body["error"]["code"].as_str()), (403, Some("forbidden")), "{path}: {body}");
    }
    assert_eq!(app.as_user("root").get_json("/api/audit?after=not-a-number").await.0, 422, "an admin gets the validation error");
}

#[tokio::test]
async fn pages_send_anonymous_visitors_to_the_login_page() {
    let app = spawn_app().await;
    let client = test_client().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let response = client.get(app.url("/c/abc?x=1")).send().await.unwrap();
    assert_eq!(response.status(), 303);
    assert_eq!(response.headers()["location"], "/login?next=/c/abc%3Fx%3D1");
    assert_eq!(client.get(app.url("/login")).send().await.unwrap().status(), 200);
    // The login form works without JavaScript too.
    let form = client.post(app.url("/login?next=/c/abc")).form(&[("username", "alice"), ("password", PASSWORD)]).send().await.unwrap();
    assert_eq!((form.status().as_u16(), form.headers()["location"].to_str().unwrap()), (303, "/c/abc"));
    assert!(form.headers()["set-cookie"].to_str().unwrap().starts_with("countersign_session="));
}

#[tokio::test]
async fn the_audit_trail_records_the_cycle_and_verify_finds_the_first_edited_entry() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001 and 1002", 2).await;
    app.post_json(
        &format!("/api/approvals/{}/approve", approvals[0].id),
        json!({ "args": { "order_id": approvals[0].args["order_id"], "amount": 1 } }),
    )
    .await;
    app.post_json(&format!("/api/approvals/{}/reject", approvals[1].id), json!({ "reason": "duplicate" })).await;
    app.wait_task(&task, domain::TaskStatus::Completed).await;

    let root = app.as_user("root");
    let (_, page) = root.get_json("/api/audit?limit=100").await;
    let entries = page["entries"].as_array().unwrap();
    let kinds: Vec<&str> = entries.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "approval.requested").count(), 2, "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "approval.decided").count(), 2);
    assert!(kinds.contains(&"tool.outcome"));
    let decided = entries.iter().find(|e| e["kind"] == "approval.decided" && e["data"]["outcome"] == "approved").unwrap();
    assert_eq!(decided["actor"], "alice");
    assert_eq!(decided["data"]["role"], "user");
    assert_eq!(decided["data"]["edited_args"]["amount"], 1);
    assert!(decided["data"]["seconds_to_decide"].is_i64() && decided["data"]["original_args"].is_object());
    let (_, verify) = root.get_json("/api/audit/verify").await;
    assert_eq!(verify["ok"], true, "{verify}");
    let export = root.client.get(root.url("/api/audit/export")).send().await.unwrap().text().await.unwrap();
    assert_eq!(export.lines().count(), entries.len());

    if !crate::helpers::sqlite_only("the audit tamper check") {
        return;
    }
    // Append-only: the database refuses an edit...
    let db = sqlx::SqlitePool::connect(&format!("sqlite://{}", app.data_dir.path().join("countersign.db").display())).await.unwrap();
    assert!(sqlx::query("UPDATE audit_log SET actor = 'mallory' WHERE id = 3").execute(&db).await.is_err());
    // ...so a tamperer must drop the trigger first; verify still finds the edited entry.
    sqlx::query("DROP TRIGGER audit_log_no_update").execute(&db).await.unwrap();
    sqlx::query("UPDATE audit_log SET entry = replace(entry, '\"alice\"', '\"mallory\"') WHERE id = (SELECT MIN(id) FROM audit_log WHERE kind = 'approval.decided')")
        .execute(&db)
        .await
        .unwrap();
    let tampered: i64 = sqlx::query_scalar("SELECT MIN(id) FROM audit_log WHERE kind = 'approval.decided'").fetch_one(&db).await.unwrap();
    let (_, verify) = root.get_json("/api/audit/verify").await;
    assert_eq!((verify["ok"].as_bool(), verify["first_broken"].as_i64()), (Some(false), Some(tampered)), "{verify}");
    let (ok, _, stderr) = cli(app.data_dir.path(), &["audit", "verify"], None).await;
    assert!(!ok);
    assert!(stderr.contains(&format!("entry {tampered}")), "{stderr}");
}

#[tokio::test]
async fn the_cli_creates_users_refuses_weak_passwords_and_decides_on_a_running_server() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let (ok, _, stderr) = cli(dir.path(), &["user", "add", "weak"], Some("short\n")).await;
    assert!(!ok && stderr.starts_with("error: ") && stderr.contains("at least 8"), "{stderr}");
    // The passwords the README publishes for the demo accounts, and the user name, are refused.
    let (ok, _, stderr) = cli(dir.path(), &["user", "add", "boss", "--admin"], Some("admin-password\n")).await;
    assert!(!ok && stderr.contains("published in the README"), "{stderr}");
    let (ok, _, stderr) = cli(dir.path(), &["user", "add", "bossbossboss"], Some("bossbossboss\n")).await;
    assert!(!ok && stderr.contains("user name"), "{stderr}");
    let (ok, stdout, _) = cli(dir.path(), &["user", "add", "boss", "--admin"], Some("long-enough-pw\n")).await;
    assert!(ok && stdout.contains("created admin boss"), "{stdout}");
    let (ok, _, stderr) = cli(dir.path(), &["user", "add", "boss"], Some("long-enough-pw\n")).await;
    assert!(!ok && stderr.contains("already exists"), "{stderr}");

    let server = BinaryServer::start(dir.clone(), None).await;
    let c = server.app.create_conversation().await;
    let (task, approvals) = server.app.pending_turn(&c, "cancel order 1003", 1).await;
    let token = &server.app.tokens["alice"];
    let url = server.app.base_url.clone();
    let remote = ["--server", url.as_str(), "--token", token.as_str()];
    let (ok, listed, stderr) = cli(dir.path(), &[&["approvals", "list"][..], &remote].concat(), None).await;
    assert!(ok && listed.contains(approvals[0].id.as_str()) && listed.contains("cancel_order"), "{listed}{stderr}");
    let (ok, out, _) = cli(dir.path(), &[&["approvals", "approve", approvals[0].id.as_str()][..], &remote].concat(), None).await;
    assert!(ok && out.trim() == "approved", "{out}");
    server.app.wait_task(&task, domain::TaskStatus::Completed).await;
    let (ok, _, stderr) = cli(dir.path(), &[&["approvals", "approve", approvals[0].id.as_str()][..], &remote].concat(), None).await;
    assert!(!ok && stderr.contains("409"), "{stderr}");
    let (ok, out, _) = cli(dir.path(), &["audit", "verify"], None).await;
    assert!(ok && out.starts_with("audit chain ok"), "{out}");
}

#[tokio::test]
async fn a_session_survives_a_server_restart() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let first = BinaryServer::start(dir.clone(), None).await;
    let client = cookie_client();
    assert_eq!(login(&first.app, &client, "alice", PASSWORD).await, 200);
    let dir = first.kill().await;
    let second = BinaryServer::start(dir, None).await;
    let me = client.get(second.app.url("/api/session")).send().await.unwrap();
    assert_eq!(me.status(), 200, "the cookie from before the restart still logs alice in");
}

/// Attack: an open redirect after login. Browsers drop a tab and read `\` as `/`, so these would
/// leave the site; the form post sends the user home instead, and the page applies the same rule
/// (`app::paths::local_path`).
#[tokio::test]
async fn after_login_the_form_never_sends_the_user_to_another_site() {
    let app = spawn_app().await;
    let client = test_client().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    for next in ["/%09/evil.example", "/%5Cevil.example", "//evil.example", "https://evil.example", "/%0A/evil.example"] {
        let form = client
            .post(app.url(&format!("/login?next={next}")))
            .form(&[("username", "alice"), ("password", PASSWORD)])
            .send()
            .await
            .unwrap();
        assert_eq!((form.status().as_u16(), form.headers()["location"].to_str().unwrap()), (303, "/"), "next={next}");
    }
    // A wrong password keeps the user on the login page, with the refused target dropped too.
    let form =
        client.post(app.url("/login?next=/%09/evil.example")).form(&[("username", "alice"), ("password", "wrong")]).send().await.unwrap();
    assert_eq!(form.headers()["location"].to_str().unwrap(), "/login?failed=1&next=/");
}

/// Attack: writing any address into the audit trail through `X-Forwarded-For`. The header is
/// believed only from a proxy named in `COUNTERSIGN_TRUSTED_PROXIES`.
#[tokio::test]
async fn the_audit_trail_believes_x_forwarded_for_only_from_a_configured_proxy() {
    for (trusted, expected) in [(None, "127.0.0.1"), (Some("127.0.0.1"), "203.0.113.9")] {
        let options = crate::helpers::Options { trusted_proxies: trusted.map(str::to_owned), ..Default::default() };
        let app = crate::helpers::spawn_app_with(options).await;
        let c = app.create_conversation().await;
        let (_, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
        let response = app
            .client
            .post(app.url(&format!("/api/approvals/{}/approve", approvals[0].id)))
            .header("x-forwarded-for", "203.0.113.9")
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let (_, audit) = app.as_user("root").get_json("/api/audit?kind=approval.decided").await;
        assert_eq!(audit["entries"][0]["data"]["ip"], expected, "trusted proxies: {trusted:?}");
    }
}

/// Attack: a `text/plain` body (what a cross-site form can send without asking) carrying edited
/// arguments to an endpoint whose body is optional. It must say it is JSON, or nothing is read.
#[tokio::test]
async fn an_optional_body_that_is_not_declared_json_is_refused_and_changes_nothing() {
    let app = spawn_app().await;
    let c = app.create_conversation().await;
    let (_, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let path = format!("/api/approvals/{}", approvals[0].id);
    for endpoint in ["approve", "reject"] {
        let response = app
            .client
            .post(app.url(&format!("{path}/{endpoint}")))
            .header("content-type", "text/plain")
            .body(r#"{"args":{"order_id":1001,"amount":249}}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 415, "{endpoint}");
        let body: Value = response.json().await.unwrap();
        assert!(body["error"]["message"].as_str().unwrap().contains("application/json"), "{body}");
    }
    let (_, approval) = app.get_json(&path).await;
    assert_eq!(approval["state"], "pending", "nothing was decided");
    assert_eq!(app.order(1001).await.refunded, 0.0);
    // Without a body the decision still works (the body is optional).
    let response = app.client.post(app.url(&format!("{path}/approve"))).send().await.unwrap();
    assert_eq!(response.status(), 200);
}
