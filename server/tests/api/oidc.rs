//! Signing in through an identity provider: a real, certified OpenID provider (`oidc-provider`
//! from npm, end2end/oidc/idp.mjs) run as a child process, and a client that follows the
//! redirects as a browser does. Every bad answer ends on the login page with no session.

use std::{process::Stdio, time::Duration};

use reqwest::{StatusCode, header::LOCATION};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use crate::helpers::{Options, TestApp, spawn_app_with, test_client};

/// The test provider, stopped when dropped (its stdin closes).
struct Idp {
    issuer: String,
    _child: tokio::process::Child,
}

impl Idp {
    async fn start() -> Self {
        Self::start_with(&[]).await
    }

    /// As [`Idp::start`], with the provider's switches (end2end/oidc/idp.mjs): a provider unlike it.
    async fn start_with(env: &[(&str, &str)]) -> Self {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../end2end/oidc/idp.mjs");
        let mut child = tokio::process::Command::new("node")
            .arg(&script)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs the test identity provider (npm ci in end2end first)");
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await.expect("the provider starts").unwrap().unwrap();
        let issuer = serde_json::from_str::<Value>(&line).unwrap()["issuer"].as_str().unwrap().to_owned();
        Self { issuer, _child: child }
    }

    async fn set_user(&self, id: &str, user: Value) {
        let status =
            test_client().build().unwrap().put(format!("{}/test/users/{id}", self.issuer)).json(&user).send().await.unwrap().status();
        assert_eq!(status, StatusCode::NO_CONTENT);
    }

    /// How the last token request authenticated: client_secret_basic, client_secret_post or none.
    async fn token_auth(&self) -> String {
        let response = test_client().build().unwrap().get(format!("{}/test/token-auth", self.issuer)).send().await.unwrap();
        response.json::<Value>().await.unwrap()["method"].as_str().unwrap_or_default().to_owned()
    }
}

/// A server whose people sign in through `idp` as `client_id`, with a gate only the `finance`
/// group decides and one that asks for a fresh sign-in.
async fn app_with(idp_issuer: &str, client_id: &str) -> TestApp {
    app_with_extra(idp_issuer, client_id, "").await
}

/// As [`app_with`], with more `[oidc]` settings.
async fn app_with_extra(idp_issuer: &str, client_id: &str, oidc_extra: &str) -> TestApp {
    // nextest runs each test in its own process: nothing else reads the environment meanwhile.
    unsafe { std::env::set_var("COUNTERSIGN_TEST_OIDC_SECRET", "test-secret") };
    spawn_app_with(Options { agents_toml: Some(config(idp_issuer, client_id, oidc_extra)), ..Options::default() }).await
}

/// The agent configuration of [`app_with`].
fn config(idp_issuer: &str, client_id: &str, oidc_extra: &str) -> String {
    format!(
        r#"
[[agents]]
name = "support"
tools = ["list_orders", "get_order", "cancel_order", "process_refund"]

[[agents.gates]]
name = "refunds"
kind = "tools"
tools = ["process_refund"]
approvers = ["group:finance"]

[[agents.gates]]
name = "cancellations"
kind = "tools"
tools = ["cancel_order"]
reauthenticate = true

[oidc]
name = "Test IdP"
issuer = "{idp_issuer}"
client_id = "{client_id}"
client_secret_env = "COUNTERSIGN_TEST_OIDC_SECRET"
scopes = ["profile", "email", "groups"]
admin_groups = ["countersign-admins"]
group_prefix = "cs-"
{oidc_extra}
"#
    )
}

/// A browser: keeps cookies, follows nothing by itself.
fn browser() -> reqwest::Client {
    test_client().cookie_store(true).redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

fn location(response: &reqwest::Response) -> String {
    response.headers().get(LOCATION).unwrap_or_else(|| panic!("a redirect, got {}", response.status())).to_str().unwrap().to_owned()
}

/// Starts a sign-in at the app: the provider's authorization URL it sends the browser to.
async fn start(browser: &reqwest::Client, app: &TestApp, query: &str) -> String {
    let response = browser.get(app.url(&format!("/auth/oidc/login{query}"))).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    location(&response)
}

/// At the provider: opens `auth_url`, signs in on its page, and returns the callback URL it sends
/// the browser back with.
async fn at_provider(browser: &reqwest::Client, idp: &Idp, auth_url: &str, login: &str, password: &str) -> String {
    at_provider_asked(browser, idp, auth_url, login, password).await.0
}

/// As [`at_provider`], and whether the provider showed its login page (it skips it for a person
/// it remembers, unless told not to).
async fn at_provider_asked(browser: &reqwest::Client, idp: &Idp, auth_url: &str, login: &str, password: &str) -> (String, bool) {
    let mut url = auth_url.to_owned();
    let mut asked = false;
    for _ in 0..8 {
        let response = browser.get(&url).send().await.unwrap();
        if response.status().is_redirection() {
            let next = location(&response);
            url = if next.starts_with('/') { format!("{}{next}", idp.issuer) } else { next };
            if url.contains("/auth/oidc/callback") {
                return (url, asked);
            }
            continue;
        }
        assert_eq!(response.status(), StatusCode::OK, "the provider's login page");
        asked = true;
        let response = browser.post(&url).form(&[("login", login), ("password", password)]).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::SEE_OTHER, "the provider took the password");
        let next = location(&response);
        url = if next.starts_with('/') { format!("{}{next}", idp.issuer) } else { next };
    }
    panic!("the provider never sent the browser back");
}

/// Back at the app: where it sends the browser.
async fn back(browser: &reqwest::Client, callback: &str) -> String {
    let response = browser.get(callback).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    location(&response)
}

async fn sign_in(app: &TestApp, idp: &Idp, login: &str, password: &str) -> (reqwest::Client, String) {
    let b = browser();
    let auth = start(&b, app, "?next=/approvals").await;
    let callback = at_provider(&b, idp, &auth, login, password).await;
    let landed = back(&b, &callback).await;
    (b, landed)
}

async fn me(browser: &reqwest::Client, app: &TestApp) -> (StatusCode, Value) {
    let response = browser.get(app.url("/api/session")).send().await.unwrap();
    (response.status(), response.json().await.unwrap_or(Value::Null))
}

async fn group(app: &TestApp, name: &str) -> Option<Value> {
    let (status, groups) = app.as_user("root").get_json("/api/groups").await;
    assert_eq!(status, 200);
    groups.as_array().unwrap().iter().find(|g| g["name"] == name).cloned()
}

fn replace_query(url: &str, key: &str, value: &str) -> String {
    let mut parsed = reqwest::Url::parse(url).unwrap();
    let pairs: Vec<(String, String)> =
        parsed.query_pairs().map(|(k, v)| (k.to_string(), if k == key { value.to_owned() } else { v.into_owned() })).collect();
    parsed.query_pairs_mut().clear().extend_pairs(pairs);
    parsed.to_string()
}

#[tokio::test]
async fn a_first_sign_in_makes_the_account_and_each_one_brings_role_and_groups_up_to_date() {
    let idp = Idp::start().await;
    let app = app_with(&idp.issuer, "countersign").await;
    idp.set_user(
        "dana",
        json!({ "password": "dana-pw", "email": "dana@example.com", "email_verified": true, "groups": ["cs-finance", "staff"] }),
    )
    .await;
    idp.set_user("erin", json!({ "password": "erin-pw", "groups": ["countersign-admins"] })).await;

    // A refund that only `finance` decides, waiting before anyone of it has an account.
    let c = app.create_conversation().await;
    let (_, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let refund = approvals[0].id.to_string();

    let dana = browser();
    let auth = start(&dana, &app, "?next=/approvals").await;
    let callback = at_provider(&dana, &idp, &auth, "dana", "dana-pw").await;
    let response = dana.get(&callback).send().await.unwrap();
    assert_eq!(location(&response), "/approvals", "back where the sign-in started");
    // The session lives no longer than [oidc] session_max_secs (8 hours by default).
    let cookie = response.headers().get_all(reqwest::header::SET_COOKIE).iter().map(|v| v.to_str().unwrap().to_owned()).collect::<Vec<_>>();
    let max_age: i64 = cookie
        .iter()
        .find_map(|c| c.split(';').find_map(|part| part.trim().strip_prefix("Max-Age=")).map(|v| v.parse().unwrap()))
        .unwrap_or_else(|| panic!("a session cookie with Max-Age: {cookie:?}"));
    assert!((8 * 3600 - 60..=8 * 3600).contains(&max_age), "{cookie:?}");
    let (status, who) = me(&dana, &app).await;
    assert_eq!((status, who["username"].as_str(), who["role"].as_str()), (StatusCode::OK, Some("dana"), Some("user")));
    let finance = group(&app, "finance").await.expect("the provider's group shows");
    assert_eq!((finance["members"].clone(), finance["from_idp"].clone()), (json!(["dana"]), json!(true)));
    let (_, approval) = app.as_user("root").get_json(&format!("/api/approvals/{refund}")).await;
    assert_eq!(approval["approvers"]["people"], json!(["dana"]), "the waiting approval is dana's to decide now");
    let store = engine::store::Store::connect(&crate::helpers::database_url(app.data_dir.path()).await, countersign::bus::Bus::default())
        .await
        .unwrap();
    let email = engine::store::users::email_of(store.testing().pool(), "dana").await.unwrap();
    assert_eq!(email.as_deref(), Some("dana@example.com"), "the email claim is the address notifications and Slack use");
    let entries = app.as_user("root").audit_entries("user.signed_in", 1).await;
    assert_eq!((entries[0]["actor"].as_str(), entries[0]["data"]["created"].as_bool()), (Some("dana"), Some(true)), "{entries:?}");

    // An admin's changes to a provider's group are refused, and change nothing.
    let response =
        app.as_user("root").client.put(app.url("/api/groups/finance")).json(&json!({ "members": ["bob"] })).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CONFLICT);
    assert!(response.text().await.unwrap().contains("identity provider"));
    assert_eq!(group(&app, "finance").await.unwrap()["members"], json!(["dana"]));

    // The provider's admin group makes an admin.
    let (erin, _) = sign_in(&app, &idp, "erin", "erin-pw").await;
    assert_eq!(me(&erin, &app).await.1["role"], "admin");

    // The provider takes dana out of finance: at her next sign-in she stops being an approver,
    // and the waiting approval goes to the admins; her decision is refused and changes nothing.
    idp.set_user("dana", json!({ "groups": ["staff"] })).await;
    let (dana, _) = sign_in(&app, &idp, "dana", "dana-pw").await;
    assert_eq!(group(&app, "finance").await.unwrap()["members"], json!([]));
    let (_, approval) = app.as_user("root").get_json(&format!("/api/approvals/{refund}")).await;
    assert_eq!(approval["approvers"]["people"], json!([]), "{approval}");
    let refused = dana.post(app.url(&format!("/api/approvals/{refund}/approve"))).json(&json!({})).send().await.unwrap();
    // No longer an approver, she no longer sees it either (404, as for anyone it is not shown to).
    assert_eq!(refused.status(), StatusCode::NOT_FOUND);
    assert_eq!(app.as_user("root").get_json(&format!("/api/approvals/{refund}")).await.1["state"], "pending");
    // Still the same account: one user named dana.
    let (_, users) = app.as_user("root").get_json("/api/users").await;
    assert_eq!(users.as_array().unwrap().iter().filter(|u| u["username"] == "dana").count(), 1);

    // Logging out ends the session here and sends the browser to the provider's logout.
    let response = dana.post(app.url("/logout")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let page = response.text().await.unwrap();
    let to = page.split("href=\"").nth(1).and_then(|rest| rest.split('"').next()).unwrap().replace("&amp;", "&");
    assert!(
        to.starts_with(&format!("{}/session/end", idp.issuer)) && to.contains("id_token_hint=") && to.contains("post_logout_redirect_uri="),
        "{to}"
    );
    assert_eq!(me(&dana, &app).await.0, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_provider_account_named_like_a_local_one_is_refused_and_signs_no_one_in() {
    let idp = Idp::start().await;
    let app = app_with(&idp.issuer, "countersign").await;
    // The provider's alice is not the local alice (made with a password by the test setup).
    let (alice, landed) = sign_in(&app, &idp, "alice", "alice-pw").await;
    assert_eq!(landed, "/login?sign_in_error=account");
    assert_eq!(me(&alice, &app).await.0, StatusCode::UNAUTHORIZED);
}

/// Each way a provider's answer can be wrong ends on the login page naming it, with no session.
#[tokio::test]
async fn a_wrong_state_a_replayed_code_or_a_wrong_nonce_signs_no_one_in() {
    let idp = Idp::start().await;
    let app = app_with(&idp.issuer, "countersign").await;
    idp.set_user("dana", json!({ "password": "dana-pw", "groups": [] })).await;

    // `state` that is not the one this browser was sent with.
    let b = browser();
    let auth = start(&b, &app, "").await;
    let callback = at_provider(&b, &idp, &auth, "dana", "dana-pw").await;
    assert_eq!(back(&b, &replace_query(&callback, "state", "forged")).await, "/login?sign_in_error=state");
    assert_eq!(me(&b, &app).await.0, StatusCode::UNAUTHORIZED);
    // The sign-in under way was used up by that attempt: the real callback no longer works.
    assert_eq!(back(&b, &callback).await, "/login?sign_in_error=state");
    assert_eq!(me(&b, &app).await.0, StatusCode::UNAUTHORIZED);

    // A code that was used already, sent again with a fresh sign-in's state.
    let first = browser();
    let auth = start(&first, &app, "").await;
    let callback = at_provider(&first, &idp, &auth, "dana", "dana-pw").await;
    assert_eq!(back(&first, &callback).await, "/");
    let replay = browser();
    let auth = start(&replay, &app, "").await;
    let fresh_state = reqwest::Url::parse(&auth).unwrap().query_pairs().find(|(k, _)| k == "state").unwrap().1.into_owned();
    let replayed = replace_query(&callback, "state", &fresh_state);
    assert_eq!(back(&replay, &replayed).await, "/login?sign_in_error=code");
    assert_eq!(me(&replay, &app).await.0, StatusCode::UNAUTHORIZED);

    // The provider asked with another nonce than the one this browser's sign-in holds.
    let b = browser();
    let auth = start(&b, &app, "").await;
    let callback = at_provider(&b, &idp, &replace_query(&auth, "nonce", "someone-elses-nonce"), "dana", "dana-pw").await;
    assert_eq!(back(&b, &callback).await, "/login?sign_in_error=token");
    assert_eq!(me(&b, &app).await.0, StatusCode::UNAUTHORIZED);

    // A callback with no sign-in under way at all.
    let b = browser();
    assert_eq!(back(&b, &app.url("/auth/oidc/callback?code=x&state=y")).await, "/login?sign_in_error=state");
    // The provider's own refusal.
    let auth = start(&b, &app, "").await;
    let state = reqwest::Url::parse(&auth).unwrap().query_pairs().find(|(k, _)| k == "state").unwrap().1.into_owned();
    assert_eq!(back(&b, &app.url(&format!("/auth/oidc/callback?error=access_denied&state={state}"))).await, "/login?sign_in_error=refused");
    assert_eq!(me(&b, &app).await.0, StatusCode::UNAUTHORIZED);
    let (_, users) = app.as_user("root").get_json("/api/users").await;
    assert_eq!(users.as_array().unwrap().iter().filter(|u| u["username"] == "dana").count(), 1, "one account from the one good sign-in");
}

#[tokio::test]
async fn an_expired_id_token_or_one_signed_with_another_key_signs_no_one_in() {
    let idp = Idp::start().await;
    for client in ["countersign-expired", "countersign-wrong-key"] {
        let app = app_with(&idp.issuer, client).await;
        let (b, landed) = sign_in(&app, &idp, "carol", "carol-pw").await;
        assert_eq!(landed, "/login?sign_in_error=token", "{client}");
        assert_eq!(me(&b, &app).await.0, StatusCode::UNAUTHORIZED, "{client}");
        let (_, users) = app.as_user("root").get_json("/api/users").await;
        assert!(!users.as_array().unwrap().iter().any(|u| u["username"] == "carol"), "{client}: no account was made");
    }
}

#[tokio::test]
async fn a_provider_that_is_down_gets_a_clear_page_not_an_error() {
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let app = app_with(&format!("http://{closed}"), "countersign").await;
    let b = browser();
    let response = b.get(app.url("/auth/oidc/login")).send().await.unwrap();
    assert_eq!((response.status(), location(&response)), (StatusCode::SEE_OTHER, "/login?sign_in_error=unreachable".to_owned()));
    assert_eq!(me(&b, &app).await.0, StatusCode::UNAUTHORIZED);
    let (status, options) = app.anonymous().get_json("/api/session/options").await;
    assert_eq!((status, options), (200, json!({ "provider": "Test IdP", "password": true })));
}

/// A gate with `reauthenticate = true` is decided only by a person who signed in recently: not
/// with a token; `fresh=1` makes the provider ask for the password again even though it
/// remembers the person.
#[tokio::test]
async fn a_gate_that_asks_for_a_fresh_sign_in_is_decided_only_after_one() {
    let idp = Idp::start().await;
    let app = app_with(&idp.issuer, "countersign").await;
    idp.set_user("erin", json!({ "password": "erin-pw", "groups": ["countersign-admins"] })).await;
    let c = app.create_conversation().await;
    let (_, approvals) = app.pending_turn(&c, "cancel order 1003", 1).await;
    let cancel = approvals[0].id.to_string();

    let (status, body) = app.as_user("root").post_json(&format!("/api/approvals/{cancel}/approve"), json!({})).await;
    assert_eq!(status, 403, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("fresh sign-in"), "{body}");
    assert_eq!(app.as_user("root").get_json(&format!("/api/approvals/{cancel}")).await.1["state"], "pending");

    let (erin, _) = sign_in(&app, &idp, "erin", "erin-pw").await;
    // Without fresh=1 the provider remembers erin and does not ask.
    let auth = start(&erin, &app, "").await;
    assert!(!at_provider_asked(&erin, &idp, &auth, "erin", "erin-pw").await.1);
    // Asked again (the card's "Sign in again", /auth/again): the provider shows its login page
    // although it knows erin.
    let response = erin.get(app.url("/auth/again?next=/approvals")).send().await.unwrap();
    let auth = location(&response);
    assert!(auth.contains("prompt=login") && auth.contains("max_age=0"), "{auth}");
    let (callback, asked) = at_provider_asked(&erin, &idp, &auth, "erin", "erin-pw").await;
    assert!(asked, "the provider asked for the password again");
    assert_eq!(back(&erin, &callback).await, "/approvals");
    let approved = erin.post(app.url(&format!("/api/approvals/{cancel}/approve"))).json(&json!({})).send().await.unwrap();
    assert_eq!(approved.status(), StatusCode::OK, "{}", approved.text().await.unwrap());
}

/// `password_login = false`: the password form is a break-glass admin's only; `userinfo = true`
/// reads the claims from the provider's userinfo endpoint too.
#[tokio::test]
async fn with_passwords_off_only_an_admin_logs_in_with_one_and_everyone_else_through_the_provider() {
    let idp = Idp::start().await;
    let app = app_with_extra(&idp.issuer, "countersign", "password_login = false\nuserinfo = true").await;
    let (status, options) = app.anonymous().get_json("/api/session/options").await;
    assert_eq!((status, options), (200, json!({ "provider": "Test IdP", "password": false })));

    let password = |name: &str| json!({ "username": name, "password": crate::helpers::PASSWORD });
    let b = browser();
    let refused = b.post(app.url("/api/session")).json(&password("alice")).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    // The same answer as a wrong password: it does not confirm that the password was right.
    assert!(refused.text().await.unwrap().contains("wrong user name or password"));
    assert_eq!(me(&b, &app).await.0, StatusCode::UNAUTHORIZED, "no session was made");
    let admin = b.post(app.url("/api/session")).json(&password("root")).send().await.unwrap();
    assert_eq!(admin.status(), StatusCode::OK, "the break-glass admin");

    idp.set_user("dana", json!({ "password": "dana-pw", "groups": ["cs-finance"] })).await;
    let (dana, _) = sign_in(&app, &idp, "dana", "dana-pw").await;
    assert_eq!(me(&dana, &app).await.1["username"], "dana");
    assert_eq!(group(&app, "finance").await.unwrap()["members"], json!(["dana"]));
    // Logging out of a session made with a password goes back to the login page, not the provider.
    let out = b.post(app.url("/logout")).send().await.unwrap();
    assert_eq!(location(&out), "/login?signed_out=1");
    assert_eq!(me(&b, &app).await.0, StatusCode::UNAUTHORIZED);
}

/// Two replicas behind one public address: a sign-in started on one finishes on the other (the
/// sign-in under way is kept in the session, in the shared database). PostgreSQL pass only.
#[tokio::test]
async fn a_sign_in_started_on_one_replica_finishes_on_the_other() {
    if crate::helpers::postgres().is_none() {
        eprintln!("two replicas need PostgreSQL; this test runs in the PostgreSQL pass");
        return;
    }
    let idp = Idp::start().await;
    idp.set_user("dana", json!({ "password": "dana-pw", "groups": ["cs-finance"] })).await;
    // The load balancer's address: both replicas send the provider's answers there.
    let public = "http://127.0.0.1:1";
    let env = [("COUNTERSIGN_TEST_OIDC_SECRET", "test-secret"), ("COUNTERSIGN_PUBLIC_URL", public)];
    let toml = config(&idp.issuer, "countersign", "");
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let a = crate::helpers::BinaryServer::start_with_env(dir.clone(), Some(&toml), &env).await;
    let b = crate::helpers::BinaryServer::start_with_env(dir, Some(&toml), &env).await;

    let browser = browser();
    let auth = start(&browser, &a.app, "?next=/approvals").await;
    let callback = at_provider(&browser, &idp, &auth, "dana", "dana-pw").await;
    assert!(callback.starts_with(&format!("{public}/auth/oidc/callback")), "{callback}");
    // The balancer sends the answer to replica B.
    let on_b = callback.replacen(public, &b.app.base_url, 1);
    assert_eq!(back(&browser, &on_b).await, "/approvals");
    for replica in [&a.app, &b.app] {
        let (status, who) = me(&browser, replica).await;
        assert_eq!((status, who["username"].as_str()), (StatusCode::OK, Some("dana")), "{}", replica.base_url);
    }
}

/// Without an identity provider, a password login is the sign-in a `reauthenticate` gate asks
/// for, and "Sign in again" is the login page.
#[tokio::test]
async fn without_a_provider_a_password_login_is_the_fresh_sign_in() {
    let toml = "[[agents]]\nname = \"support\"\ntools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n\
                [[agents.gates]]\nname = \"cancellations\"\nkind = \"tools\"\ntools = [\"cancel_order\"]\nreauthenticate = true\n";
    let app = spawn_app_with(Options { agents_toml: Some(toml.into()), ..Options::default() }).await;
    let (status, options) = app.anonymous().get_json("/api/session/options").await;
    assert_eq!((status, options), (200, json!({ "provider": null, "password": true })));
    let c = app.create_conversation().await;
    let (_, approvals) = app.pending_turn(&c, "cancel order 1003", 1).await;
    let id = approvals[0].id.to_string();

    let b = browser();
    let again = b.get(app.url("/auth/again?next=/approvals")).send().await.unwrap();
    assert_eq!(location(&again), "/login?next=/approvals");
    let login =
        b.post(app.url("/api/session")).json(&json!({ "username": "alice", "password": crate::helpers::PASSWORD })).send().await.unwrap();
    assert_eq!(login.status(), StatusCode::OK);
    let approved = b.post(app.url(&format!("/api/approvals/{id}/approve"))).json(&json!({})).send().await.unwrap();
    assert_eq!(approved.status(), StatusCode::OK, "{}", approved.text().await.unwrap());
}

/// A provider's session ends at `session_max_secs` however active it is, and a sign-in the
/// provider let through from its own session is as recent as its `auth_time`, not as the
/// callback: it does not pass for the fresh sign-in a gate asks for.
#[tokio::test]
async fn a_session_ends_on_time_and_a_silent_sign_in_is_no_fresh_one() {
    let idp = Idp::start().await;
    unsafe { std::env::set_var("COUNTERSIGN_TEST_OIDC_SECRET", "test-secret") };
    let toml = config(&idp.issuer, "countersign", "session_max_secs = 12")
        .replace("reauthenticate = true\n", "reauthenticate = true\nreauthenticate_after_secs = 10\n");
    let app = spawn_app_with(Options { agents_toml: Some(toml), ..Options::default() }).await;
    idp.set_user("erin", json!({ "password": "erin-pw", "groups": ["countersign-admins"] })).await;
    let c = app.create_conversation().await;
    let (_, approvals) = app.pending_turn(&c, "cancel order 1003", 1).await;
    let cancel = approvals[0].id.to_string();

    let (first, _) = sign_in(&app, &idp, "erin", "erin-pw").await;
    tokio::time::sleep(Duration::from_secs(13)).await;
    // Used all along, the first session still ends at 12 s.
    assert_eq!(me(&first, &app).await.0, StatusCode::UNAUTHORIZED);

    // The provider remembers erin and lets her through without asking: her sign-in is 13 s old.
    let auth = start(&first, &app, "").await;
    let (callback, asked) = at_provider_asked(&first, &idp, &auth, "erin", "erin-pw").await;
    assert!(!asked);
    assert_eq!(back(&first, &callback).await, "/");
    assert_eq!(me(&first, &app).await.0, StatusCode::OK);
    let refused = first.post(app.url(&format!("/api/approvals/{cancel}/approve"))).json(&json!({})).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert!(refused.text().await.unwrap().contains("sign in again (within the last 10 seconds)"));
    assert_eq!(app.as_user("root").get_json(&format!("/api/approvals/{cancel}")).await.1["state"], "pending");

    // Signing in again where the provider asks: decided.
    let response = first.get(app.url("/auth/again?next=/")).send().await.unwrap();
    let (callback, asked) = at_provider_asked(&first, &idp, &location(&response), "erin", "erin-pw").await;
    assert!(asked);
    back(&first, &callback).await;
    let approved = first.post(app.url(&format!("/api/approvals/{cancel}/approve"))).json(&json!({})).send().await.unwrap();
    assert_eq!(approved.status(), StatusCode::OK, "{}", approved.text().await.unwrap());
}

/// `allowed_groups`: someone the provider lets in but who is in none of them gets no account.
#[tokio::test]
async fn a_person_outside_the_allowed_groups_gets_no_account() {
    let idp = Idp::start().await;
    let app = app_with_extra(&idp.issuer, "countersign", "allowed_groups = [\"staff\"]").await;
    idp.set_user("dana", json!({ "password": "dana-pw", "groups": ["cs-finance"] })).await;
    let (dana, landed) = sign_in(&app, &idp, "dana", "dana-pw").await;
    assert_eq!(landed, "/login?sign_in_error=account");
    assert_eq!(me(&dana, &app).await.0, StatusCode::UNAUTHORIZED);
    assert!(group(&app, "finance").await.is_none(), "no group was made either");
    idp.set_user("dana", json!({ "groups": ["cs-finance", "staff"] })).await;
    let (dana, _) = sign_in(&app, &idp, "dana", "dana-pw").await;
    assert_eq!(me(&dana, &app).await.1["username"], "dana");
}

/// Someone who left: an admin turns the account off. Its session and token stop working at once,
/// it leaves its provider groups (a waiting approval goes to the admins), and the provider cannot
/// sign it in again until an admin turns it back on.
#[tokio::test]
async fn an_account_turned_off_decides_nothing_and_signs_in_no_more() {
    let idp = Idp::start().await;
    let app = app_with(&idp.issuer, "countersign").await;
    idp.set_user("dana", json!({ "password": "dana-pw", "groups": ["cs-finance"] })).await;
    let (dana, _) = sign_in(&app, &idp, "dana", "dana-pw").await;
    let token = dana.post(app.url("/api/tokens")).json(&json!({ "name": "laptop" })).send().await.unwrap();
    assert_eq!(token.status(), StatusCode::CREATED);
    let token = token.json::<Value>().await.unwrap()["token"].as_str().unwrap().to_owned();
    let c = app.create_conversation().await;
    let (_, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    let refund = approvals[0].id.to_string();
    let root = app.as_user("root");
    assert_eq!(root.get_json(&format!("/api/approvals/{refund}")).await.1["approvers"]["people"], json!(["dana"]));

    // Refused: not an admin, an unknown name, oneself. None of them changes anything.
    let (status, _) = app.post_json("/api/users/dana/disable", json!({})).await;
    assert_eq!(status, 403);
    let (status, _) = root.post_json("/api/users/nobody/disable", json!({})).await;
    assert_eq!(status, 404);
    let (status, body) = root.post_json("/api/users/root/disable", json!({})).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(me(&dana, &app).await.0, StatusCode::OK);

    let (status, body) = root.post_json("/api/users/dana/disable", json!({})).await;
    assert_eq!(status, 204, "{body}");
    assert_eq!(me(&dana, &app).await.0, StatusCode::UNAUTHORIZED, "the session no longer works");
    let with_token = crate::helpers::client_with_token(&token).get(app.url("/api/session")).send().await.unwrap();
    assert_eq!(with_token.status(), StatusCode::UNAUTHORIZED, "nor the token");
    assert_eq!(group(&app, "finance").await.unwrap()["members"], json!([]));
    assert_eq!(root.get_json(&format!("/api/approvals/{refund}")).await.1["approvers"]["people"], json!([]));
    let entries = root.audit_entries("user.disabled", 1).await;
    assert_eq!(entries[0]["data"]["left_groups"], json!(["finance"]), "{entries:?}");
    let (again, landed) = sign_in(&app, &idp, "dana", "dana-pw").await;
    assert_eq!(landed, "/login?sign_in_error=account");
    assert_eq!(me(&again, &app).await.0, StatusCode::UNAUTHORIZED);

    // On again: the provider's next sign-in brings her groups back.
    let (status, _) = root.post_json("/api/users/dana/enable", json!({})).await;
    assert_eq!(status, 204);
    let (dana, _) = sign_in(&app, &idp, "dana", "dana-pw").await;
    assert_eq!(me(&dana, &app).await.0, StatusCode::OK);
    assert_eq!(group(&app, "finance").await.unwrap()["members"], json!(["dana"]));
}

/// The email address kept for `username` (notifications and Slack find people by it).
async fn stored_email(app: &TestApp, username: &str) -> Option<String> {
    let url = crate::helpers::database_url(app.data_dir.path()).await;
    let store = engine::store::Store::connect(&url, countersign::bus::Bus::default()).await.unwrap();
    engine::store::users::email_of(store.testing().pool(), username).await.unwrap()
}

/// The user names of every account in `app`'s database.
async fn usernames(app: &TestApp) -> Vec<String> {
    let url = crate::helpers::database_url(app.data_dir.path()).await;
    let store = engine::store::Store::connect(&url, countersign::bus::Bus::default()).await.unwrap();
    engine::store::users::list(store.testing().pool()).await.unwrap().into_iter().map(|u| u.username).collect()
}

/// Claims the library leaves unchecked, as a broken or hostile provider sends them in a correctly
/// signed ID token: an empty, blank or over-long `sub` (everyone sent with it would be one
/// account), an `azp` naming another client, an `auth_time` (or `iat`) an hour ahead of this
/// server's clock (the sign-in would count as fresh all that while). Each is refused (`claims`) with no session
/// and no account, and the log says why, with both times. One a minute ahead, within the clock
/// skew allowed, signs in.
#[tokio::test]
async fn a_blank_subject_another_clients_token_or_a_sign_in_time_ahead_of_the_clock_is_refused() {
    let idp = Idp::start().await;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let refused = [
        ("empty", json!({ "sub": "" })),
        ("blank", json!({ "sub": " " })),
        ("long", json!({ "sub": "s".repeat(256) })),
        ("elsewhere", json!({ "azp": "another-client" })),
        ("later", json!({ "auth_time": now + 3600 })),
        ("issued", json!({ "iat": now + 3600 })),
    ];
    for (login, claims) in &refused {
        idp.set_user(login, json!({ "password": "pw", "groups": ["countersign-admins"], "id_token_claims": claims })).await;
    }
    idp.set_user("skewed", json!({ "password": "pw", "id_token_claims": { "auth_time": now + 60 } })).await;
    let toml = config(&idp.issuer, "countersign", "");
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let server = crate::helpers::BinaryServer::start_with_env(dir, Some(&toml), &[("COUNTERSIGN_TEST_OIDC_SECRET", "test-secret")]).await;
    let app = &server.app;

    for (login, _) in &refused {
        let (b, landed) = sign_in(app, &idp, login, "pw").await;
        assert_eq!(landed, "/login?sign_in_error=claims", "{login}");
        assert_eq!(me(&b, app).await.0, StatusCode::UNAUTHORIZED, "{login}");
    }
    let accounts = usernames(app).await;
    assert!(refused.iter().all(|(login, _)| !accounts.iter().any(|a| a == login)), "no account was made: {accounts:?}");
    let said = server.logged_line("its auth_time is", Duration::from_secs(10)).await.expect("the log says why");
    let sent = chrono::DateTime::from_timestamp(i64::try_from(now + 3600).unwrap(), 0).unwrap();
    let sent = sent.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    assert!(said.contains(&format!("its auth_time is {sent}, ahead of this server's clock (")), "{said}");
    let said = server.logged_line("its sub is \"\"", Duration::from_secs(10)).await.expect("the log says why");
    assert!(said.contains("blank subject"), "{said}");

    let (b, landed) = sign_in(app, &idp, "skewed", "pw").await;
    assert_eq!(landed, "/approvals");
    assert_eq!(me(&b, app).await.1["username"], "skewed");
}

/// A person as a provider named in docs/sign-in.md sends them: its `[oidc]` settings from that
/// page, its claims as its documentation shows them, and what Countersign makes of them.
struct Shape {
    provider: &'static str,
    oidc_extra: &'static str,
    /// `claims` (and `userinfo_claims`) for the test provider; null leaves a claim out.
    user: Value,
    username: &'static str,
    email: Option<&'static str>,
    finance: bool,
}

/// The claim shapes of docs/sign-in.md's table ("Claim shapes"), one row each.
fn shapes() -> Vec<Shape> {
    vec![
        Shape {
            provider: "Okta",
            oidc_extra: "",
            // Booleans and times as numbers; preferred_username is the Okta login.
            user: json!({ "claims": {
                "preferred_username": "okta.user@example.com", "email": "okta.user@example.com", "email_verified": true,
                "updated_at": 1714566896, "locale": "en-US", "zoneinfo": "America/Los_Angeles", "groups": ["Everyone", "cs-finance"]
            }}),
            username: "okta.user@example.com",
            email: Some("okta.user@example.com"),
            finance: true,
        },
        Shape {
            provider: "Entra ID",
            oidc_extra: "group_map = { \"22222222-2222-2222-2222-222222222222\" = \"finance\" }",
            // A v2.0 ID token: no email_verified at all, groups as object ids.
            user: json!({ "claims": {
                "preferred_username": "entra.user@example.com", "email": "entra.user@example.com", "email_verified": null,
                "oid": "00000000-0000-0000-66f3-3332eca7ea81", "tid": "9122040d-6c67-4c5b-b112-36a304b66dad", "ver": "2.0",
                "groups": ["22222222-2222-2222-2222-222222222222"]
            }}),
            username: "entra.user@example.com",
            email: None,
            finance: true,
        },
        Shape {
            provider: "Google",
            oidc_extra: "username_claim = \"email\"\nallowed_domains = [\"example.com\"]",
            // A boolean email_verified, times as numbers, hd; no preferred_username, no groups.
            user: json!({ "claims": {
                "preferred_username": null, "email": "google.user@example.com", "email_verified": true, "hd": "example.com",
                "given_name": "Google", "family_name": "User", "picture": "https://lh3.googleusercontent.com/a/photo", "locale": "en"
            }}),
            username: "google.user@example.com",
            email: Some("google.user@example.com"),
            finance: false,
        },
        Shape {
            provider: "Auth0",
            oidc_extra: "username_claim = \"email\"\ngroups_claim = \"https://countersign.example/groups\"",
            // updated_at as an RFC 3339 string; groups in a namespaced claim (added by an Action).
            user: json!({ "claims": {
                "preferred_username": null, "nickname": "auth0.user", "picture": "https://s.gravatar.com/avatar/0.png",
                "updated_at": "2024-05-01T12:34:56.789Z", "email": "auth0.user@example.com", "email_verified": true,
                "https://countersign.example/groups": ["cs-finance"]
            }}),
            username: "auth0.user@example.com",
            email: Some("auth0.user@example.com"),
            finance: true,
        },
        Shape {
            provider: "Keycloak",
            oidc_extra: "",
            // The Group Membership mapper with full group path off.
            user: json!({ "claims": {
                "preferred_username": "keycloak.user", "email": "keycloak.user@example.com", "email_verified": true,
                "given_name": "Keycloak", "family_name": "User", "groups": ["cs-finance", "staff"]
            }}),
            username: "keycloak.user",
            email: Some("keycloak.user@example.com"),
            finance: true,
        },
        Shape {
            provider: "Cognito",
            oidc_extra: "username_claim = \"cognito:username\"\ngroups_claim = \"cognito:groups\"\nuserinfo = true",
            // Its own user name and groups claims in the ID token; userinfo says email_verified as
            // the string "true" (and has no groups).
            user: json!({
                "claims": {
                    "preferred_username": null, "cognito:username": "cognito.user", "cognito:groups": ["cs-finance"],
                    "email": "cognito.user@example.com", "email_verified": true
                },
                "userinfo_claims": { "email_verified": "true", "username": "cognito.user", "cognito:groups": null }
            }),
            username: "cognito.user",
            email: Some("cognito.user@example.com"),
            finance: true,
        },
    ]
}

/// Each provider docs/sign-in.md names, its claims in the shapes its documentation shows: signed
/// in with the right user name, the email kept only when verified, and the right groups.
#[tokio::test]
async fn each_providers_claim_shapes_sign_in_as_its_documentation_shows_them() {
    let idp = Idp::start().await;
    for (n, shape) in shapes().into_iter().enumerate() {
        let provider = shape.provider;
        let login = format!("shape{n}");
        let mut user = shape.user;
        user["password"] = json!("shape-pw");
        idp.set_user(&login, user).await;
        let app = app_with_extra(&idp.issuer, "countersign", shape.oidc_extra).await;
        let (b, landed) = sign_in(&app, &idp, &login, "shape-pw").await;
        assert_eq!(landed, "/approvals", "{provider}");
        let (status, who) = me(&b, &app).await;
        assert_eq!((status, who["username"].as_str()), (StatusCode::OK, Some(shape.username)), "{provider}");
        assert_eq!(stored_email(&app, shape.username).await.as_deref(), shape.email, "{provider}");
        let finance = group(&app, "finance").await.map(|g| g["members"].clone());
        assert_eq!(finance.as_ref().is_some_and(|m| *m == json!([shape.username])), shape.finance, "{provider}: {finance:?}");
    }
}

/// A time as an RFC 3339 string and a boolean as a string (as some providers send them, in the ID
/// token) sign in, and the string "true" verifies the address.
#[tokio::test]
async fn string_times_and_booleans_in_the_id_token_sign_in() {
    let idp = Idp::start().await;
    let app = app_with(&idp.issuer, "countersign").await;
    idp.set_user(
        "dana",
        json!({ "password": "dana-pw", "email": "dana@example.com", "groups": ["cs-finance"],
                "claims": { "updated_at": "2024-05-01T12:34:56.789Z", "email_verified": "true" } }),
    )
    .await;
    let (dana, landed) = sign_in(&app, &idp, "dana", "dana-pw").await;
    assert_eq!(landed, "/approvals");
    assert_eq!(me(&dana, &app).await.1["username"], "dana");
    assert_eq!(stored_email(&app, "dana").await.as_deref(), Some("dana@example.com"), "the string \"true\" verifies it");
}

/// `email_verified` and `updated_at` in shapes the library's typed claims refuse, in the ID token
/// (and userinfo): everyone signs in, since a claim nothing reads never ends one. An address is
/// verified only by `true` or "true" (any case, spaces around): any other value keeps no email,
/// and with `username_claim = "email"` it is no user name.
#[tokio::test]
async fn odd_claim_shapes_sign_in_and_only_true_verifies_an_address() {
    let idp = Idp::start().await;
    // `email_verified` as sent, and whether it verifies the address.
    let shapes = [
        (json!("True"), true),
        (json!("TRUE"), true),
        (json!(" true"), true),
        (json!("1"), false),
        (json!(1), false),
        (json!("yes"), false),
        (json!([true]), false),
    ];
    for (n, (said, _)) in shapes.iter().enumerate() {
        let user = json!({ "password": "odd-pw", "email": format!("odd{n}@example.com"), "claims": { "email_verified": said } });
        idp.set_user(&format!("odd{n}"), user).await;
    }
    let times = [json!("1764403200"), json!(1e20), json!("2026-11-29 08:00:00"), json!("last tuesday")];
    for (n, when) in times.iter().enumerate() {
        idp.set_user(&format!("when{n}"), json!({ "password": "when-pw", "claims": { "updated_at": when } })).await;
    }

    // The user name from preferred_username: everyone signs in, with the address only if verified.
    let app = app_with(&idp.issuer, "countersign").await;
    for (n, (said, verifies)) in shapes.iter().enumerate() {
        let login = format!("odd{n}");
        let (b, landed) = sign_in(&app, &idp, &login, "odd-pw").await;
        assert_eq!(landed, "/approvals", "email_verified: {said}");
        assert_eq!(me(&b, &app).await.1["username"], login.as_str(), "email_verified: {said}");
        let kept = stored_email(&app, &login).await;
        assert_eq!(kept.is_some(), *verifies, "email_verified: {said}: {kept:?}");
    }
    for (n, when) in times.iter().enumerate() {
        let login = format!("when{n}");
        let (b, landed) = sign_in(&app, &idp, &login, "when-pw").await;
        assert_eq!(landed, "/approvals", "updated_at: {when}");
        assert_eq!(me(&b, &app).await.1["username"], login.as_str(), "updated_at: {when}");
    }

    // The user name from the address, with userinfo read too: only a verified one signs in.
    let app = app_with_extra(&idp.issuer, "countersign", "username_claim = \"email\"\nuserinfo = true").await;
    for (n, (said, verifies)) in shapes.iter().enumerate() {
        let (b, landed) = sign_in(&app, &idp, &format!("odd{n}"), "odd-pw").await;
        let (status, who) = me(&b, &app).await;
        if *verifies {
            assert_eq!(landed, "/approvals", "email_verified: {said}");
            assert_eq!(who["username"], format!("odd{n}@example.com").as_str(), "email_verified: {said}");
        } else {
            assert_eq!((landed.as_str(), status), ("/login?sign_in_error=account", StatusCode::UNAUTHORIZED), "email_verified: {said}");
        }
    }
    let (_, users) = app.as_user("root").get_json("/api/users").await;
    let made = users.as_array().unwrap().iter().filter(|u| u["username"].as_str().is_some_and(|n| n.starts_with("odd"))).count();
    assert_eq!(made, shapes.iter().filter(|(_, verifies)| *verifies).count(), "accounts only for verified addresses: {users}");
}

/// With userinfo read too, an address and whether it is verified come from one document: the ID
/// token's verified address does not vouch for another address that userinfo sends without
/// saying it is verified. Userinfo's own `email_verified` does, and for the token's own address
/// the token's still holds.
#[tokio::test]
async fn userinfo_cannot_lend_another_address_the_id_tokens_verification() {
    let idp = Idp::start().await;
    let user =
        |address: &str, userinfo: Value| json!({ "password": "pw", "email": address, "email_verified": true, "userinfo_claims": userinfo });
    idp.set_user("swap", user("buiswap@example.com", json!({ "email": "ceo@example.com", "email_verified": null }))).await;
    idp.set_user("moved", user("old.moved@example.com", json!({ "email": "moved@example.com", "email_verified": true }))).await;
    idp.set_user("same", user("same@example.com", json!({ "email_verified": null }))).await;
    let extra = "username_claim = \"email\"\nallowed_domains = [\"example.com\"]\nuserinfo = true";
    let app = app_with_extra(&idp.issuer, "countersign", extra).await;

    let (b, landed) = sign_in(&app, &idp, "swap", "pw").await;
    assert_eq!(landed, "/login?sign_in_error=account");
    assert_eq!(me(&b, &app).await.0, StatusCode::UNAUTHORIZED);
    let (_, users) = app.as_user("root").get_json("/api/users").await;
    let named = |name: &str| users.as_array().unwrap().iter().any(|u| u["username"] == name);
    assert!(!named("ceo@example.com") && !named("buiswap@example.com"), "no account was made: {users}");

    for (login, address) in [("moved", "moved@example.com"), ("same", "same@example.com")] {
        let (b, landed) = sign_in(&app, &idp, login, "pw").await;
        assert_eq!(landed, "/approvals", "{login}");
        assert_eq!(me(&b, &app).await.1["username"], address, "{login}");
    }
}

/// An address the provider does not say is verified (`"false"` as a string, or no
/// `email_verified` at all) is no user name (`username_claim = "email"`, with userinfo), is not
/// kept as the email, and is at no allowed domain; `"true"` as a string is verified.
#[tokio::test]
async fn an_address_the_provider_does_not_verify_is_no_user_name_no_email_and_no_domain() {
    let idp = Idp::start().await;
    idp.set_user("mallory", json!({ "password": "m-pw", "email": "ceo@example.com", "claims": { "email_verified": "false" } })).await;
    idp.set_user("nemo", json!({ "password": "n-pw", "email": "cfo@example.com" })).await;
    idp.set_user("dana", json!({ "password": "dana-pw", "email": "dana@example.com", "claims": { "email_verified": "true" } })).await;
    let unverified = [("mallory", "m-pw"), ("nemo", "n-pw")];

    let app = app_with_extra(&idp.issuer, "countersign", "username_claim = \"email\"\nuserinfo = true").await;
    for (login, password) in unverified {
        let (b, landed) = sign_in(&app, &idp, login, password).await;
        assert_eq!(landed, "/login?sign_in_error=account", "{login}");
        assert_eq!(me(&b, &app).await.0, StatusCode::UNAUTHORIZED, "{login}");
    }
    let (_, users) = app.as_user("root").get_json("/api/users").await;
    let named = |name: &str| users.as_array().unwrap().iter().any(|u| u["username"] == name);
    assert!(!named("ceo@example.com") && !named("cfo@example.com"), "no account was made: {users}");
    let (dana, _) = sign_in(&app, &idp, "dana", "dana-pw").await;
    assert_eq!(me(&dana, &app).await.1["username"], "dana@example.com");

    // The user name from preferred_username: signed in, without the address.
    let app = app_with(&idp.issuer, "countersign").await;
    for (login, password) in unverified {
        let (b, _) = sign_in(&app, &idp, login, password).await;
        assert_eq!(me(&b, &app).await.1["username"], login);
        assert_eq!(stored_email(&app, login).await, None, "{login}");
    }

    // Only verified addresses at example.com may sign in.
    let app = app_with_extra(&idp.issuer, "countersign", "allowed_domains = [\"example.com\"]").await;
    for (login, password) in unverified {
        let (b, landed) = sign_in(&app, &idp, login, password).await;
        assert_eq!(landed, "/login?sign_in_error=account", "{login}");
        assert_eq!(me(&b, &app).await.0, StatusCode::UNAUTHORIZED, "{login}");
    }
    assert_eq!(sign_in(&app, &idp, "dana", "dana-pw").await.1, "/approvals");
}

/// `oidc.issuer` with a trailing slash that the provider's discovery does not have: the login
/// page says the issuer does not match (`issuer`, not `unreachable`), the log names both, and no
/// one is signed in. As discovery states it, the same provider signs people in.
#[tokio::test]
async fn an_issuer_that_differs_from_discoverys_by_a_slash_is_named_with_both_values() {
    let idp = Idp::start().await;
    idp.set_user("dana", json!({ "password": "dana-pw" })).await;
    let slashed = format!("{}/", idp.issuer);
    let toml = config(&slashed, "countersign", "");
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let server = crate::helpers::BinaryServer::start_with_env(dir, Some(&toml), &[("COUNTERSIGN_TEST_OIDC_SECRET", "test-secret")]).await;
    let b = browser();
    let response = b.get(server.app.url("/auth/oidc/login")).send().await.unwrap();
    assert_eq!((response.status(), location(&response)), (StatusCode::SEE_OTHER, "/login?sign_in_error=issuer".to_owned()));
    assert_eq!(me(&b, &server.app).await.0, StatusCode::UNAUTHORIZED);
    let said = server.logged_line("trailing slash", Duration::from_secs(10)).await.expect("the log says why");
    assert!(said.contains(&format!("{:?}", idp.issuer)) && said.contains(&format!("{slashed:?}")), "{said}");

    let app = app_with(&idp.issuer, "countersign").await;
    let (dana, landed) = sign_in(&app, &idp, "dana", "dana-pw").await;
    assert_eq!(landed, "/approvals");
    assert_eq!(me(&dana, &app).await.1["username"], "dana");
}

/// The token endpoint is authenticated as the provider's discovery lists and
/// `oidc.token_endpoint_auth` says: `client_secret_basic` by default, `client_secret_post` for a
/// provider that lists only it (and refuses a Basic header), nothing but PKCE for a public client.
#[tokio::test]
async fn the_token_endpoint_is_authenticated_as_discovery_and_the_configuration_say() {
    let idp = Idp::start().await;
    idp.set_user("dana", json!({ "password": "dana-pw" })).await;
    let app = app_with(&idp.issuer, "countersign").await;
    assert_eq!(sign_in(&app, &idp, "dana", "dana-pw").await.1, "/approvals");
    assert_eq!(idp.token_auth().await, "client_secret_basic", "listed by this provider");
    let app = app_with_extra(&idp.issuer, "countersign", "token_endpoint_auth = \"client_secret_post\"").await;
    assert_eq!(sign_in(&app, &idp, "dana", "dana-pw").await.1, "/approvals");
    assert_eq!(idp.token_auth().await, "client_secret_post");
    // A public client: the secret that is set is not sent.
    let app = app_with_extra(&idp.issuer, "countersign-public", "token_endpoint_auth = \"none\"").await;
    let (b, landed) = sign_in(&app, &idp, "dana", "dana-pw").await;
    assert_eq!(landed, "/approvals");
    assert_eq!(me(&b, &app).await.1["username"], "dana");
    assert_eq!(idp.token_auth().await, "none");

    let strict = Idp::start_with(&[("IDP_TOKEN_AUTH_METHODS", "client_secret_post,none")]).await;
    strict.set_user("dana", json!({ "password": "dana-pw" })).await;
    let app = app_with(&strict.issuer, "countersign").await;
    let (b, landed) = sign_in(&app, &strict, "dana", "dana-pw").await;
    assert_eq!(landed, "/approvals");
    assert_eq!(me(&b, &app).await.1["username"], "dana");
    assert_eq!(strict.token_auth().await, "client_secret_post", "as its discovery lists");
    // Configured against it: the provider refuses the client (invalid_client), which the login
    // page names, and no one is signed in.
    let app = app_with_extra(&strict.issuer, "countersign", "token_endpoint_auth = \"client_secret_basic\"").await;
    let (b, landed) = sign_in(&app, &strict, "dana", "dana-pw").await;
    assert_eq!(landed, "/login?sign_in_error=client");
    assert_eq!(me(&b, &app).await.0, StatusCode::UNAUTHORIZED);
}

/// The token endpoint answers 401 `invalid_client` (here: a public client at the provider, set up
/// here to send a secret): the login page says the provider refused this server's client, not
/// that the sign-in was used already or took too long, and the log says what to check.
#[tokio::test]
async fn a_client_the_token_endpoint_refuses_is_named_with_what_to_check() {
    let idp = Idp::start().await;
    idp.set_user("dana", json!({ "password": "dana-pw" })).await;
    let toml = config(&idp.issuer, "countersign-public", "token_endpoint_auth = \"client_secret_basic\"");
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let server = crate::helpers::BinaryServer::start_with_env(dir, Some(&toml), &[("COUNTERSIGN_TEST_OIDC_SECRET", "test-secret")]).await;
    let (b, landed) = sign_in(&server.app, &idp, "dana", "dana-pw").await;
    assert_eq!(landed, "/login?sign_in_error=client");
    assert_eq!(me(&b, &server.app).await.0, StatusCode::UNAUTHORIZED);
    let said = server.logged_line("invalid_client", Duration::from_secs(10)).await.expect("the log says why");
    assert!(said.contains("client_secret_basic") && said.contains("countersign-public") && said.contains("token_endpoint_auth"), "{said}");
}

/// A provider that sends no `auth_time` and does not list it in discovery: start-up warns that the
/// `reauthenticate` gate cannot be decided through it, and the card's "Sign in again" ends on the
/// login page (`stale`) with no session.
#[tokio::test]
async fn a_provider_without_auth_time_is_a_start_up_warning_and_gives_no_fresh_sign_in() {
    let idp = Idp::start_with(&[("IDP_NO_AUTH_TIME", "1")]).await;
    idp.set_user("erin", json!({ "password": "erin-pw", "groups": ["countersign-admins"] })).await;
    let toml = config(&idp.issuer, "countersign", "");
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let server = crate::helpers::BinaryServer::start_with_env(dir, Some(&toml), &[("COUNTERSIGN_TEST_OIDC_SECRET", "test-secret")]).await;
    let warning = server.logged_line("reauthenticate needs the ID token's auth_time", Duration::from_secs(10)).await;
    let warning = warning.expect("a start-up warning");
    assert!(warning.contains("gate \"cancellations\""), "{warning}");

    let app = &server.app;
    let b = browser();
    let response = b.get(app.url("/auth/again?next=/approvals")).send().await.unwrap();
    let (callback, asked) = at_provider_asked(&b, &idp, &location(&response), "erin", "erin-pw").await;
    assert!(asked, "the provider asked for the password");
    assert_eq!(back(&b, &callback).await, "/login?sign_in_error=stale");
    assert_eq!(me(&b, app).await.0, StatusCode::UNAUTHORIZED);
}
