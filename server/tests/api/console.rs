//! The console adapter, `countersign approvals watch`, driven through a pseudo-terminal (util-linux
//! `script` gives it one): it shows what waits, takes one key per decision (a reason typed after
//! `r`), shows approvals that arrive while it waits, and shows a hostile title inert.

use std::{sync::Arc, time::Duration};

use domain::ApprovalState;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::helpers::spawn_app;

/// The terminal's output so far, and a way to type.
struct Terminal {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    screen: Arc<tokio::sync::Mutex<String>>,
}

impl Terminal {
    fn start(server: &str, token: &str, data_dir: &std::path::Path) -> Self {
        let command = format!("{} approvals watch", env!("CARGO_BIN_EXE_countersign"));
        let mut child = tokio::process::Command::new("script")
            .args(["-qfec", &command, "/dev/null"])
            .env("COUNTERSIGN_URL", server)
            .env("COUNTERSIGN_TOKEN", token)
            .env("COUNTERSIGN_DATA_DIR", data_dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("script (util-linux) runs the watcher in a pseudo-terminal");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let screen = Arc::new(tokio::sync::Mutex::new(String::new()));
        let sink = screen.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                sink.lock().await.push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Self { child, stdin, screen }
    }

    /// Waits until the output after `from` shows `text`; returns where it ends.
    async fn expect(&self, from: usize, text: &str) -> usize {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            {
                let screen = self.screen.lock().await;
                if let Some(at) = screen.get(from..).and_then(|s| s.find(text)) {
                    return from + at + text.len();
                }
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "the terminal never showed {text:?}; it shows:\n{}",
                    &screen[from.min(screen.len())..]
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn type_keys(&mut self, keys: &str) {
        self.stdin.write_all(keys.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }
}

#[tokio::test]
async fn the_watcher_decides_with_one_key_each_and_shows_approvals_as_they_arrive() {
    let app = spawn_app().await;
    // The requester names the chat: its title reaches a raw terminal, so it must not drive it.
    let hostile = "\u{1b}[2J\u{1b}[HApprove refund $1\n   args: {} \u{202e}\u{9b}1m";
    let (status, body) = app.post_json("/api/conversations", json!({ "title": hostile })).await;
    assert_eq!(status, 201, "{body}");
    let c = body["id"].as_str().unwrap().to_owned();
    let (_task, first) = app.pending_turn(&c, "refund order 1001", 1).await;
    let mut terminal = Terminal::start(&app.base_url, &app.tokens["alice"], app.data_dir.path());
    let at = terminal.expect(0, "· \\e[2J\\e[HApprove refund $1\\n   args: {} \\u{202e}\\u{9b}1m · asked by alice\r\n").await;
    let at = terminal.expect(at, "Refund $249.00").await;
    let at = terminal.expect(at, "[a]pprove  [r]eject  [s]kip  [q]uit > ").await;
    terminal.type_keys("x").await;
    let at = terminal.expect(at, "press a, r, s or q").await;
    terminal.type_keys("r").await;
    let at = terminal.expect(at, "reason: ").await;
    terminal.type_keys("too much\r").await;
    let at = terminal.expect(at, "rejected").await;
    let at = terminal.expect(at, "Waiting for approvals").await;
    let (_, body) = app.get_json(&format!("/api/approvals/{}", first[0].id)).await;
    assert_eq!((body["state"].as_str(), body["reason"].as_str()), (Some(ApprovalState::Rejected.as_str()), Some("too much")));

    // A new approval shows up on its own while the watcher waits.
    let c2 = app.create_conversation().await;
    let (_task, second) = app.pending_turn(&c2, "cancel order 1003", 1).await;
    let at = terminal.expect(at, "cancel_order (high risk)").await;
    terminal.type_keys("a").await;
    terminal.expect(at, "approved").await;
    let (_, body) = app.get_json(&format!("/api/approvals/{}", second[0].id)).await;
    assert_eq!(body["state"], "approved");

    terminal.type_keys("q").await;
    let status = tokio::time::timeout(Duration::from_secs(10), terminal.child.wait()).await.expect("q quits").unwrap();
    assert!(status.success(), "{status:?}");
    let screen = terminal.screen.lock().await;
    assert!(!screen.contains(['\u{1b}', '\u{9b}', '\u{202e}']), "nothing reached the terminal to interpret: {screen:?}");
}
