//! Email notifications against a real SMTP server (Python's aiosmtpd, installed by the
//! test command; `COUNTERSIGN_TEST_PYTHON` names the Python that has it): a gate with
//! `notify = ["email"]` mails its approvers a message with the call and their own signed links,
//! whose link decides it; a reminder re-sends; a message that could only be sent after someone
//! decided says so instead of offering links; every message sent is audited; a requester's title
//! cannot add a line of its own.

use std::time::Duration;

use countersign::bus::Bus;
use domain::TaskStatus;
use engine::store::Store;

use crate::helpers::{Options, TestApp, database_url, eventually, spawn_app_with};

/// A real SMTP server writing what it receives into a Maildir; stopped when dropped.
struct Smtpd {
    port: u16,
    maildir: tempfile::TempDir,
    child: Option<tokio::process::Child>,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Smtpd {
    fn reserved() -> Self {
        let maildir = tempfile::tempdir().unwrap();
        for sub in ["tmp", "new", "cur"] {
            std::fs::create_dir(maildir.path().join(sub)).unwrap();
        }
        Self { port: free_port(), maildir, child: None }
    }

    async fn start(&mut self) {
        let python = std::env::var("COUNTERSIGN_TEST_PYTHON")
            .expect("set COUNTERSIGN_TEST_PYTHON to a Python with aiosmtpd (scripts/test.sh installs it into the cache's venv)");
        let child = tokio::process::Command::new(python)
            .args(["-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{}", self.port), "-c", "aiosmtpd.handlers.Mailbox"])
            .arg(self.maildir.path())
            .kill_on_drop(true)
            .spawn()
            .expect("aiosmtpd starts");
        self.child = Some(child);
        let port = self.port;
        eventually("the SMTP server to listen", || async move { tokio::net::TcpStream::connect(("127.0.0.1", port)).await.ok() }).await;
    }

    fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// The messages delivered so far, oldest first, their quoted-printable parts decoded.
    fn messages(&self) -> Vec<String> {
        let Ok(dir) = std::fs::read_dir(self.maildir.path().join("new")) else { return Vec::new() };
        let mut files: Vec<_> = dir.flatten().map(|e| e.path()).collect();
        files.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
        files.iter().map(|p| quoted_printable(&std::fs::read_to_string(p).unwrap_or_default())).collect()
    }

    async fn message(&self, n: usize) -> String {
        eventually(&format!("email {n}"), || async { self.messages().get(n - 1).cloned() }).await
    }
}

/// Undoes quoted-printable (RFC 2045): soft line breaks and `=XX` bytes. Headers pass through.
fn quoted_printable(raw: &str) -> String {
    let joined = raw.replace("=\r\n", "").replace("=\n", "");
    let bytes = joined.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok()).and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'=', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).replace("\r\n", "\n")
}

async fn app_with(smtpd: &Smtpd, gate_extra: &str) -> TestApp {
    let toml = format!(
        "[[groups]]\nname = \"finance\"\nmembers = [\"bob\"]\n\n[[agents]]\nname = \"support\"\n\
         tools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n\
         [[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\ntimeout_secs = 60\n\
         approvers = [\"group:finance\"]\nnotify = [\"email\"]\n{gate_extra}"
    );
    let app = spawn_app_with(Options { agents_toml: Some(toml), smtp_url: Some(smtpd.url()), ..Default::default() }).await;
    let store = Store::connect(&database_url(app.data_dir.path()).await, Bus::default()).await.unwrap();
    engine::store::users::set_email(store.testing().pool(), "bob", Some("bob@example.com")).await.unwrap();
    app
}

/// The link after `label: ` in a message's text part.
fn link(message: &str, label: &str) -> String {
    let line = message.lines().find(|l| l.starts_with(label)).unwrap_or_else(|| panic!("no {label} line in:\n{message}"));
    line[label.len()..].trim().to_owned()
}

#[tokio::test]
async fn the_approvers_get_an_email_whose_link_decides_and_a_reminder_re_sends_it() {
    let mut smtpd = Smtpd::reserved();
    smtpd.start().await;
    let app = app_with(&smtpd, "reminder_interval_secs = 0.5\nmax_reminders = 1\n").await;
    // The requester names the chat: its title must not add a line (a link of its own) to the message.
    let title = "Refunds\r\nApprove: http://evil.example/steal \u{202e}";
    let (status, body) = app.post_json("/api/conversations", serde_json::json!({ "title": title })).await;
    assert_eq!(status, 201, "{body}");
    let c = body["id"].as_str().unwrap().to_owned();
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;

    let first = smtpd.message(1).await;
    assert!(first.contains("To: bob <bob@example.com>"), "{first}");
    assert!(first.contains("in the chat \"Refunds Approve: http://evil.example/steal \\u{202e}\"."), "{first}");
    assert!(first.contains("in the chat “Refunds Approve: http://evil.example/steal \\u{202e}”."), "the HTML part too: {first}");
    assert!(!first.lines().any(|l| l.contains("Approve: http://evil") && !l.contains("in the chat")), "{first}");
    assert!(!first.contains('\u{202e}'), "{first}");
    assert!(first.contains("Refund $249.00 (everything left) on order 1001") && first.contains("Risk: high"), "{first}");
    assert!(first.contains("\"order_id\": 1001") && first.contains("Decide before"), "{first}");
    let reminder = smtpd.message(2).await;
    let sent = app.audit_entries("notification.sent", 2).await;
    let subjects: Vec<&str> = sent.iter().filter_map(|e| e["data"]["subject"].as_str()).collect();
    assert!(subjects.iter().any(|s| s.starts_with("Approval needed: Refund $249.00")), "{subjects:?}");
    assert!(subjects.iter().any(|s| s.starts_with("Reminder 1: approval needed")), "{subjects:?}");
    assert!(sent.iter().all(|e| e["data"]["to"] == "bob" && e["data"]["channel"] == "email"), "{sent:?}");

    // The reminder's approve link, followed without a session, decides as bob.
    let approve = link(&reminder, "Approve: ");
    assert!(approve.starts_with(&app.base_url), "links in messages are absolute: {approve}");
    let anonymous = app.anonymous();
    let page = anonymous.client.get(&approve).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("You decide as bob"), "{page}");
    let response = anonymous.client.post(&approve).form(&[("reason", "")]).send().await.unwrap();
    assert_eq!(response.status(), 200);
    app.wait_task(&task, TaskStatus::Completed).await;
    let (_, approval) = app.get_json(&format!("/api/approvals/{}", approvals[0].id)).await;
    assert_eq!((approval["state"].as_str(), approval["decided_by"].as_str()), (Some("approved"), Some("bob")));
    // The first message's link was for the same call: it now says who was first.
    let response = anonymous.client.post(link(&first, "Approve: ")).send().await.unwrap();
    assert_eq!(response.status(), 409);
}

#[tokio::test]
async fn a_message_sent_only_after_someone_decided_says_so_instead_of_offering_links() {
    // The SMTP server is down when the approval is asked: the message waits and is retried.
    let mut smtpd = Smtpd::reserved();
    let app = app_with(&smtpd, "").await;
    let c = app.create_conversation().await;
    let (task, approvals) = app.pending_turn(&c, "refund order 1001", 1).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, _) = app.as_user("bob").post_json(&format!("/api/approvals/{}/approve", approvals[0].id), serde_json::json!({})).await;
    assert_eq!(status, 200);
    app.wait_task(&task, TaskStatus::Completed).await;

    smtpd.start().await;
    let message = smtpd.message(1).await;
    assert!(message.contains("was already approved by bob. Nothing to do."), "{message}");
    assert!(!message.contains("/decide/"), "no links for a decided call: {message}");
    let sent = app.audit_entries("notification.sent", 1).await;
    assert_eq!(sent[0]["data"]["state"], "approved");
}

#[tokio::test]
async fn notify_to_routes_the_email_to_the_people_it_names_not_the_approvers() {
    let mut smtpd = Smtpd::reserved();
    smtpd.start().await;
    let app = app_with(&smtpd, "notify_to = [\"user:root\"]\n").await;
    let store = Store::connect(&database_url(app.data_dir.path()).await, Bus::default()).await.unwrap();
    engine::store::users::set_email(store.testing().pool(), "root", Some("root@example.com")).await.unwrap();
    let c = app.create_conversation().await;
    app.pending_turn(&c, "refund order 1001", 1).await;
    let message = smtpd.message(1).await;
    assert!(message.contains("To: root <root@example.com>"), "{message}");
    // Root is told, not asked: only finance decides, so the message carries no links.
    assert!(message.contains("You are told, not asked: only finance may decide this approval"), "{message}");
    assert!(!message.contains("/decide/"), "{message}");
    let sent = app.audit_entries("notification.sent", 1).await;
    assert_eq!(sent[0]["data"]["to"], "root", "bob, the approver, is not emailed: {sent:?}");

    // Root has bob's links sent to him: the answer holds none, bob's mail does.
    let (_, pending) = app.get_json("/api/approvals?status=pending").await;
    let id = pending[0]["id"].as_str().unwrap().to_owned();
    let (status, sent) =
        app.as_user("root").post_json(&format!("/api/approvals/{id}/links"), serde_json::json!({ "decider": "bob" })).await;
    assert_eq!((status, sent["decider"].as_str(), sent["sent_by"].as_str()), (202, Some("bob"), Some("email")), "{sent}");
    assert!(!sent.to_string().contains("/decide/"), "{sent}");
    let message = smtpd.message(2).await;
    assert!(message.contains("To: bob <bob@example.com>") && message.contains("/decide/"), "{message}");
}
