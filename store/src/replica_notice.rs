//! What one PostgreSQL replica tells the others in a notification, and how it is read back: the
//! form shared by the commit that queues it (`events::append`) and the listener that relays it
//! (`replicas.rs`).

use anyhow::Context;
use domain::Event;

/// The NOTIFY channel: `instance|s|seq|event json` or `instance|r|conversation_id|seq` for every
/// committed event (see [`notice`]), `instance|x|credential key` for a revoked credential.
pub(crate) const CHANNEL: &str = "countersign_events";

/// Below PostgreSQL's 8,000-byte payload limit, with room for the instance name.
const MAX_INLINE_EVENT: usize = 7_000;

/// The notification for `event`, whose sequence number the database is about to give it, as the
/// text before and after that number: `instance|s|` seq `|event json` when the event fits in a
/// notification (PostgreSQL allows 8,000 bytes), so the other replicas need not read it back;
/// otherwise `instance|r|conversation_id|` seq, where to read it. The event is queued with its
/// INSERT (`events::append`) and delivered if and when the transaction commits.
pub(crate) fn notice(instance: &str, event: &Event) -> anyhow::Result<(String, String)> {
    let json = serde_json::to_string(event).context("failed to encode an event")?;
    Ok(if json.len() <= MAX_INLINE_EVENT {
        (format!("{instance}|s|"), format!("|{json}"))
    } else {
        (format!("{instance}|r|{}|", event.conversation_id), String::new())
    })
}

/// The notification that the credential with this key ended.
pub(crate) fn revoked(instance: &str, key: &str) -> String {
    format!("{instance}|x|{key}")
}

/// What a notification says.
#[derive(Debug, PartialEq)]
pub(crate) enum Notice<'a> {
    /// A committed event, whole (boxed: an event is large beside the other notices).
    Event(Box<Event>),
    /// A committed event too large for a notification: read it back from the database.
    ReadBack { conversation_id: &'a str, seq: i64 },
    /// A credential ended (its key).
    Revoked(&'a str),
}

/// The sending replica's instance and what it said; `None` for a payload of no known form.
pub(crate) fn parse(payload: &str) -> Option<(&str, Notice<'_>)> {
    let mut parts = payload.splitn(3, '|');
    let (instance, kind, rest) = (parts.next()?, parts.next()?, parts.next()?);
    let notice = match kind {
        "x" => Notice::Revoked(rest),
        "s" => {
            let (seq, json) = rest.split_once('|')?;
            let mut event = serde_json::from_str::<Event>(json).ok()?;
            event.seq = seq.parse().ok()?;
            Notice::Event(Box::new(event))
        }
        "r" => {
            let (conversation_id, seq) = rest.split_once('|')?;
            Notice::ReadBack { conversation_id, seq: seq.parse().ok()? }
        }
        _ => return None,
    };
    Some((instance, notice))
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::EventBody;

    fn event(text: &str) -> Event {
        let body = EventBody::UserMessage { task_id: "t1".into(), text: text.into(), reply_to: None, client_id: None };
        Event { seq: 0, conversation_id: "c1".into(), at: "2026-11-30T00:00:00.000Z".into(), body }
    }

    #[test]
    fn a_notice_reads_back_as_what_was_sent() {
        let sent = event("refund order 1003");
        let (before, after) = notice("a", &sent).unwrap();
        let payload = format!("{before}7{after}");
        let Some(("a", Notice::Event(read))) = parse(&payload) else { panic!("{payload}") };
        assert_eq!((read.seq, read.body), (7, sent.body));

        let (before, after) = notice("a", &event(&"x".repeat(MAX_INLINE_EVENT))).unwrap();
        assert_eq!(parse(&format!("{before}8{after}")), Some(("a", Notice::ReadBack { conversation_id: "c1", seq: 8 })));
        assert_eq!(parse(&revoked("b", "k|1")), Some(("b", Notice::Revoked("k|1"))));
    }

    #[test]
    fn a_payload_of_no_known_form_says_nothing() {
        for payload in ["", "a", "a|s", "a|s|7", "a|s|x|{}", "a|r|c1|seven", "a|q|1"] {
            assert_eq!(parse(payload), None, "{payload:?}");
        }
    }
}
