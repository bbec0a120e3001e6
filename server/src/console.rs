//! `countersign approvals watch`: the console adapter (docs/api.md, "Console"). It shows the
//! pending approvals the token's user may decide, oldest first, one at a time, as they arrive (the
//! queue's SSE stream wakes it), and takes a decision per key: `a` approve, `r` reject (then a
//! reason and Enter), `s` skip, `q` quit. It speaks only the public API, so it works against any
//! replica. On a terminal it reads keys without Enter (raw mode, restored on exit).

use std::{collections::HashSet, io::Write as _};

use anyhow::Context;
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::{
    channels::neutral,
    remote::{Remote, remote},
};

/// Puts the terminal in non-canonical, no-echo mode while alive (a key is read as it is typed).
struct RawMode(Option<libc::termios>);

impl RawMode {
    fn enable() -> Self {
        // SAFETY: plain termios calls on stdin with a zeroed struct the call fills in.
        unsafe {
            if libc::isatty(0) != 1 {
                return Self(None);
            }
            let mut saved: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut saved) != 0 {
                return Self(None);
            }
            let mut raw = saved;
            // ISIG off too: Ctrl-C arrives as a key (quit) instead of killing the process before
            // the terminal is restored.
            raw.c_lflag &= !(libc::ICANON | libc::ECHO | libc::ISIG);
            raw.c_cc[libc::VMIN] = 1;
            raw.c_cc[libc::VTIME] = 0;
            libc::tcsetattr(0, libc::TCSANOW, &raw);
            Self(Some(saved))
        }
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        if let Some(saved) = &self.0 {
            // SAFETY: restores the attributes read in `enable`.
            unsafe {
                libc::tcsetattr(0, libc::TCSANOW, saved);
            }
        }
    }
}

/// Ctrl-C and Ctrl-D as raw mode delivers them: quit.
const CTRL_C: u8 = 0x03;
const CTRL_D: u8 = 0x04;

fn say(text: &str) {
    let mut out = std::io::stdout();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Keys as they are typed (a thread blocks on stdin); `None` once stdin ends.
fn keys() -> mpsc::UnboundedReceiver<u8> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        use std::io::Read;
        let mut stdin = std::io::stdin();
        let mut byte = [0u8; 1];
        while matches!(stdin.read(&mut byte), Ok(1)) {
            if tx.send(byte[0]).is_err() {
                break;
            }
        }
    });
    rx
}

/// A wake-up whenever an approval the user may see is requested, escalated, reminded or decided.
async fn changes(remote: &Remote) -> anyhow::Result<mpsc::UnboundedReceiver<()>> {
    let url = format!("{}/api/approvals/events", remote.server.trim_end_matches('/'));
    let response =
        reqwest::Client::new().get(&url).bearer_auth(&remote.token).send().await.with_context(|| format!("cannot reach {url}"))?;
    anyhow::ensure!(response.status().is_success(), "{}: cannot follow the queue", response.status());
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut events = eventsource_stream::Eventsource::eventsource(response.bytes_stream());
        while let Some(Ok(_)) = events.next().await {
            if tx.send(()).is_err() {
                break;
            }
        }
    });
    Ok(rx)
}

/// The approval as the terminal shows it. Every text in it may come from the requester or the
/// model, and the terminal is in raw mode: each is shown inert, on its own line of the card.
fn card(a: &Value) -> String {
    let text = |v: &Value, default: &str| neutral::console(v.as_str().unwrap_or(default));
    let mut lines = vec![
        String::new(),
        format!(
            "── {} ({} risk) · {} · asked by {}",
            text(&a["tool"], "?"),
            text(&a["risk"], "?"),
            text(&a["conversation_title"], ""),
            text(&a["owner"], "-")
        ),
        format!("   {}", text(&a["summary"], "")),
        format!("   args: {}", neutral::console(&a["args"].to_string())),
    ];
    if let Some(consequences) = a["assessment"]["consequences"].as_str().filter(|c| !c.is_empty()) {
        lines.push(format!("   {}", neutral::console(consequences)));
    }
    lines.push(format!("   deadline: {}", text(&a["deadline"], "?")));
    lines.push("   [a]pprove  [r]eject  [s]kip  [q]uit > ".into());
    lines.join("\n")
}

/// The next key that is not a line ending; `None` when input ended.
async fn key(keys: &mut mpsc::UnboundedReceiver<u8>) -> Option<u8> {
    loop {
        match keys.recv().await? {
            b'\r' | b'\n' => continue,
            k => return Some(k),
        }
    }
}

/// A line typed at the prompt (echoed by hand: raw mode does not), up to Enter.
async fn line(keys: &mut mpsc::UnboundedReceiver<u8>) -> Option<String> {
    let mut text = Vec::new();
    loop {
        match keys.recv().await? {
            b'\r' | b'\n' => {
                say("\n");
                return Some(String::from_utf8_lossy(&text).trim().to_owned());
            }
            CTRL_C | CTRL_D => return None,
            // Backspace or delete.
            0x7f | 0x08 => {
                if text.pop().is_some() {
                    say("\u{8} \u{8}");
                }
            }
            b => {
                text.push(b);
                say(&String::from_utf8_lossy(&[b]));
            }
        }
    }
}

pub async fn watch(r: &Remote) -> anyhow::Result<()> {
    let mut wake = changes(r).await?;
    let _raw = RawMode::enable();
    let mut keys = keys();
    let mut done: HashSet<String> = HashSet::new();
    let mut idle_said = false;
    say("Watching for approvals (q to quit).\n");
    loop {
        let list = remote(r, reqwest::Method::GET, "/api/approvals?status=pending&order=oldest&limit=500", None).await?;
        let next = list.as_array().into_iter().flatten().find(|a| a["id"].as_str().is_some_and(|id| !done.contains(id))).cloned();
        let Some(approval) = next else {
            if !idle_said {
                say("Nothing waits for you. Waiting for approvals…\n");
                idle_said = true;
            }
            tokio::select! {
                woke = wake.recv() => if woke.is_none() { anyhow::bail!("the server closed the queue's stream") },
                k = keys.recv() => match k {
                    None | Some(b'q' | CTRL_C | CTRL_D) => return Ok(()),
                    Some(_) => {}
                },
            }
            continue;
        };
        idle_said = false;
        let id = approval["id"].as_str().unwrap_or_default().to_owned();
        say(&card(&approval));
        let decision = loop {
            match key(&mut keys).await {
                None | Some(b'q' | CTRL_C | CTRL_D) => {
                    say("q\n");
                    return Ok(());
                }
                Some(b'a') => break Some(("approve", json!({}))),
                Some(b'r') => {
                    say("r\n   reason: ");
                    let Some(reason) = line(&mut keys).await else { return Ok(()) };
                    break Some(("reject", json!({ "reason": reason })));
                }
                Some(b's') => break None,
                Some(_) => say("\n   press a, r, s or q > "),
            }
        };
        done.insert(id.clone());
        match decision {
            None => say("s\n   skipped\n"),
            Some((verb, body)) => {
                if verb == "approve" {
                    say("a\n");
                }
                match remote(r, reqwest::Method::POST, &format!("/api/approvals/{id}/{verb}"), Some(body)).await {
                    Ok(outcome) => say(&format!("   {}\n", neutral::console(outcome["outcome"].as_str().unwrap_or(verb)))),
                    // Decided elsewhere meanwhile, or refused (a reason is required): said, then on.
                    Err(err) => say(&format!("   not decided: {}\n", neutral::console(&format!("{err:#}")))),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hostile_title_summary_or_argument_cannot_drive_the_terminal_or_add_a_line() {
        let approval = json!({
            "tool": "process_refund", "risk": "high", "owner": "alice", "deadline": "2030-01-01T00:00:00Z",
            "conversation_title": "\u{1b}[2J\u{1b}[HApprove refund $1\nApprove: yes",
            "summary": "Refund \u{202e}00.1$\u{9b}2J",
            "args": { "note": "\u{7f}\u{202e}" },
            "assessment": { "consequences": "gone\r\nfor good" },
        });
        let shown = card(&approval);
        assert!(!shown.chars().any(|c| c.is_control() && c != '\n' || ('\u{202a}'..='\u{202e}').contains(&c)), "{shown:?}");
        assert_eq!(shown.lines().count(), 7, "{shown}");
        assert!(shown.contains("· \\e[2J\\e[HApprove refund $1\\nApprove: yes · asked by alice"), "{shown}");
        assert!(shown.contains("   Refund \\u{202e}00.1$\\u{9b}2J\n"), "{shown}");
        assert!(shown.contains("args: {\"note\":\"\\u{7f}\\u{202e}\"}"), "{shown}");
        assert!(shown.contains("   gone\\r\\nfor good\n"), "{shown}");
    }
}
