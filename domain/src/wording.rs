//! How a decision reads on a card: a reviewer's decision names the reviewer, a timeout says it
//! was a timeout ("No one decided within 5 minutes") rather than reading like a rejection.

use super::{
    ApprovalOutcome,
    fold::{CardApproval, CardDecision, TaskSummary},
};
pub use crate::time::duration_words;
use crate::time::parse_rfc3339_ms;

/// The name the server records for decisions no person made (timeouts).
pub const SYSTEM: &str = "system";

/// The decision line of a decided card.
pub fn decision_line(decision: &CardDecision, approval: Option<&CardApproval>) -> String {
    if decision.decided_by == SYSTEM {
        let waited = approval
            .and_then(|a| Some(parse_rfc3339_ms(&a.deadline)? - parse_rfc3339_ms(&a.requested_at)?))
            .filter(|ms| *ms > 0)
            .map(|ms| format!("within {}", duration_words(ms)))
            .unwrap_or_else(|| "in time".into());
        let skipped = decision.reason.as_deref().is_some_and(|r| r.contains("skipped"));
        return match decision.outcome {
            ApprovalOutcome::Expired if skipped => format!("No one decided {waited}; the call was skipped."),
            ApprovalOutcome::Expired => format!("No one decided {waited}, so the call did not run."),
            ApprovalOutcome::Approved => format!("No one decided {waited}; approved automatically, as this gate is set to do."),
            ApprovalOutcome::Canceled => "Canceled: the turn was stopped.".into(),
            other => verb(other).to_owned(),
        };
    }
    let reason = decision.reason.as_ref().map(|r| format!(": {r}")).unwrap_or_default();
    // A quorum's approval names everyone who approved, not only the last.
    let counted = approval.filter(|_| decision.outcome == ApprovalOutcome::Approved).map_or(&[][..], |a| &a.approved_by[..]);
    format!("{} by {}{reason}", verb(decision.outcome), deciders(&decision.decided_by, counted))
}

/// Who decided, as a person reads it: "dora", or for a quorum "bob and dora" (`approved_by`
/// holds the approvals counted before, and may already name the last one).
pub fn deciders(decided_by: &str, approved_by: &[String]) -> String {
    let mut names: Vec<&str> = approved_by.iter().map(String::as_str).collect();
    if !names.iter().any(|n| n.eq_ignore_ascii_case(decided_by)) {
        names.push(decided_by);
    }
    match names.as_slice() {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// "Approved", "Rejected", …
pub fn verb(outcome: ApprovalOutcome) -> &'static str {
    match outcome {
        ApprovalOutcome::Approved => "Approved",
        ApprovalOutcome::Rejected => "Rejected",
        ApprovalOutcome::Expired => "Expired",
        ApprovalOutcome::Canceled => "Canceled",
        ApprovalOutcome::Deferred => "Deferred with guidance",
    }
}

/// How a card says whether a call can be undone.
pub fn reversibility(r: super::wire::Reversibility) -> &'static str {
    match r {
        super::wire::Reversibility::Fully => "Can be undone",
        super::wire::Reversibility::Partially => "Partly reversible",
        super::wire::Reversibility::Irreversible => "Cannot be undone",
    }
}

/// "1,234 tokens ($0.0012)": a model's usage as a card or a summary says it.
pub fn usage_words(usage: &super::wire::Usage) -> String {
    let tokens = usage.tokens();
    let mut words = format!("{} {}", thousands(tokens), if tokens == 1 { "token" } else { "tokens" });
    if let Some(cost) = usage.cost_usd {
        words.push_str(&format!(" (${})", dollars(cost)));
    }
    words
}

/// A budget gate's line on the card: "Spent so far in this task: 1,234 tokens ($0.0123), over
/// its budget of 1,000 tokens".
pub fn spend_line(spend: &super::wire::Spend) -> String {
    let mut limits = Vec::new();
    if let Some(tokens) = spend.token_threshold {
        limits.push(format!("{} tokens", thousands(tokens)));
    }
    if let Some(cost) = spend.cost_threshold {
        limits.push(format!("${}", dollars(cost)));
    }
    let scope = if spend.per == "conversation" { "this conversation" } else { "this task" };
    format!("Spent so far in {scope}: {}, over its budget of {}", usage_words(&spend.spent), limits.join(" or "))
}

/// "The agent is 40% sure of this call".
pub fn confidence_line(confidence: f64) -> String {
    format!("The agent is {}% sure of this call", (confidence * 100.0).clamp(0.0, 100.0).round() as u32)
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Dollars to the cent, or to four significant places below a cent.
fn dollars(amount: f64) -> String {
    if amount >= 0.01 || amount == 0.0 { fixed(amount, 2) } else { fixed(amount, 4) }
}

/// `value` with `places` decimals, rounded half away from zero. Written with integers: the
/// browser's bundle then carries no float formatting (docs/benchmarks.md, section 7).
pub fn fixed(value: f64, places: u32) -> String {
    let scale = 10u64.pow(places);
    let units = (value.abs() * scale as f64).round() as u64;
    let sign = if value < 0.0 && units > 0 { "-" } else { "" };
    if places == 0 {
        return format!("{sign}{units}");
    }
    format!("{sign}{}.{:0width$}", units / scale, units % scale, width = places as usize)
}

/// A number as a person writes it: a whole number without ".0", else its shortest decimals.
pub fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        return (value as i64).to_string();
    }
    serde_json::Number::from_f64(value).map(|n| n.to_string()).unwrap_or_else(|| "not a number".into())
}

/// "Reminder 2 of 3: still waiting for a decision", once a pending approval was reminded.
pub fn reminder_line(approval: &CardApproval) -> Option<String> {
    match (approval.reminded, approval.reminders) {
        (0, _) => None,
        (n, 0) => Some(format!("Reminder {n}: still waiting for a decision")),
        (n, of) => Some(format!("Reminder {n} of {of}: still waiting for a decision")),
    }
}

/// "You approved process_refund 3 times in this chat with the same kind of arguments: allow it
/// here without asking for 24 hours?"
pub fn suggestion_line(tool: &str, count: u32, ttl_secs: Option<u64>) -> String {
    let period = match ttl_secs {
        Some(secs) if secs % 3600 == 0 => format!(" for {} hours", secs / 3600),
        Some(secs) => format!(" for {secs} seconds"),
        None => String::new(),
    };
    let times = if count == 1 { "once".to_owned() } else { format!("{count} times") };
    format!("You approved {tool} {times} in this chat with the same kind of arguments: allow it here without asking{period}?")
}

/// A grant's bounds on the arguments, for the chat's list: ", only these arguments" or
/// ", amount at most 5"; empty for bounds it does not know.
pub fn grant_bounds(bounds: &serde_json::Value) -> String {
    if bounds.get("exact").is_some() {
        return ", only the approved arguments".into();
    }
    let caps: Vec<String> =
        bounds.get("at_most").and_then(|b| b.as_object()).into_iter().flatten().map(|(k, v)| format!("{k} at most {v}")).collect();
    match caps.is_empty() {
        true => String::new(),
        false => format!(", {}", caps.join(", ")),
    }
}

/// "Approved by dora · 1 of 2 approvals; waiting for 1 more" for a gate with a quorum.
pub fn quorum_line(approved_by: &[String], quorum: u32) -> String {
    let have = approved_by.len() as u32;
    let left = quorum.saturating_sub(have);
    let more = if left == 1 { "1 more".to_owned() } else { format!("{left} more") };
    match approved_by {
        [] => format!("Needs {quorum} approvals from different people; none yet"),
        _ => format!("Approved by {} · {have} of {quorum} approvals; waiting for {more}", approved_by.join(", ")),
    }
}

/// A tab's title: how many approvals wait there, and that some were reminded, so a background tab
/// says it: "(2) Reminder · Approval queue · Countersign". `page` names the page, if not the chat.
pub fn tab_title(waiting: usize, reminded: usize, page: Option<&str>) -> String {
    let mut title = String::new();
    if waiting > 0 {
        title.push_str(&format!("({waiting}) "));
    }
    if reminded > 0 {
        title.push_str("Reminder · ");
    }
    if let Some(page) = page {
        title.push_str(page);
        title.push_str(" · ");
    }
    title.push_str("Countersign");
    title
}

/// The agent's questions of a turn: "1 question answered", "2 questions: 1 answered, 1 declined".
fn questions_words(summary: &TaskSummary) -> String {
    let q = summary.questions;
    let unanswered = q.saturating_sub(summary.questions_settled());
    let outcomes: Vec<(u32, &str)> = [(summary.answered, "answered"), (summary.declined, "declined"), (unanswered, "not answered")]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .collect();
    let noun = if q == 1 { "question" } else { "questions" };
    match outcomes.as_slice() {
        [(_, outcome)] => format!("{q} {noun} {outcome}"),
        _ => format!("{q} {noun}: {}", outcomes.iter().map(|(n, outcome)| format!("{n} {outcome}")).collect::<Vec<_>>().join(", ")),
    }
}

/// The line under a finished turn that asked people: "2 approvals: 1 approved (edited), 1 rejected
/// · waited 12 seconds for decisions · the turn took 14 seconds". The agent's questions are
/// answered, not approved: "1 question answered · 1 approval: 1 rejected · …". `None` when it
/// asked no one.
pub fn turn_summary(summary: &TaskSummary) -> Option<String> {
    let n = summary.approvals_requested;
    if n == 0 && summary.questions == 0 {
        return None;
    }
    let mut parts = Vec::new();
    if summary.questions > 0 {
        parts.push(questions_words(summary));
    }
    if n > 0 {
        parts.push(approvals_words(summary));
    }
    let mut line = parts.join(" · ");
    if summary.decided() > 0 || summary.questions_settled() > 0 {
        line.push_str(&format!(" · waited {} for decisions", duration_words(summary.waiting_ms)));
    }
    if let Some(ms) = summary.duration_ms() {
        line.push_str(&format!(" · the turn took {}", duration_words(ms)));
    }
    if summary.usage.tokens() > 0 {
        line.push_str(&format!(" · {}", usage_words(&summary.usage)));
    }
    Some(line)
}

/// The approvals of a turn: "2 approvals: 1 approved (edited), 1 rejected".
fn approvals_words(summary: &TaskSummary) -> String {
    let n = summary.approvals_requested;
    let mut outcomes = Vec::new();
    if summary.approved > 0 {
        let edited = match summary.edited {
            0 => String::new(),
            e if e == summary.approved => " (edited)".into(),
            e => format!(" ({e} edited)"),
        };
        outcomes.push(format!("{} approved{edited}", summary.approved));
    }
    for (count, word) in
        [(summary.rejected, "rejected"), (summary.deferred, "deferred"), (summary.expired, "timed out"), (summary.canceled, "canceled")]
    {
        if count > 0 {
            outcomes.push(format!("{count} {word}"));
        }
    }
    let undecided = n.saturating_sub(summary.decided());
    if undecided > 0 {
        outcomes.push(format!("{undecided} undecided"));
    }
    format!("{n} {}: {}", if n == 1 { "approval" } else { "approvals" }, outcomes.join(", "))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_quorum_names_everyone_who_approved() {
        assert_eq!(super::deciders("dora", &[]), "dora");
        assert_eq!(super::deciders("dora", &["bob".into()]), "bob and dora");
        assert_eq!(super::deciders("dora", &["bob".into(), "dora".into()]), "bob and dora", "the stored list may hold the last one");
        assert_eq!(super::deciders("erin", &["bob".into(), "dora".into()]), "bob, dora and erin");
    }

    #[test]
    fn grant_bounds_read_as_what_they_let_through() {
        use serde_json::json;
        assert_eq!(super::grant_bounds(&json!({ "exact": { "order_id": 1 } })), ", only the approved arguments");
        assert_eq!(super::grant_bounds(&json!({ "at_most": { "amount": 5.0 } })), ", amount at most 5.0");
        assert_eq!(super::grant_bounds(&json!({ "other": 1 })), "");
    }

    #[test]
    fn a_tab_title_counts_the_waiting_and_says_when_some_were_reminded() {
        assert_eq!(tab_title(0, 0, None), "Countersign");
        assert_eq!(tab_title(2, 0, None), "(2) Countersign");
        assert_eq!(tab_title(2, 1, None), "(2) Reminder · Countersign");
        assert_eq!(tab_title(3, 1, Some("Approval queue")), "(3) Reminder · Approval queue · Countersign");
        assert_eq!(tab_title(0, 0, Some("Approval queue")), "Approval queue · Countersign");
    }

    use serde_json::json;

    use super::*;

    #[test]
    fn a_turn_summary_counts_outcomes_and_says_how_long_people_took() {
        let quiet = TaskSummary::default();
        assert_eq!(turn_summary(&quiet), None, "a turn that asked no one says nothing");
        let busy = TaskSummary {
            approvals_requested: 3,
            approved: 2,
            edited: 1,
            rejected: 1,
            waiting_ms: 12_000,
            started_at: Some("2026-11-25T10:00:00.000Z".into()),
            finished_at: Some("2026-11-25T10:00:14.000Z".into()),
            ..Default::default()
        };
        assert_eq!(
            turn_summary(&busy).unwrap(),
            "3 approvals: 2 approved (1 edited), 1 rejected · waited 12 seconds for decisions · the turn took 14 seconds"
        );
        let waiting = TaskSummary { approvals_requested: 1, started_at: Some("2026-11-25T10:00:00.000Z".into()), ..Default::default() };
        assert_eq!(turn_summary(&waiting).unwrap(), "1 approval: 1 undecided");
        let usage = super::super::wire::Usage { input_tokens: 1200, output_tokens: 34, cost_usd: Some(0.000_42) };
        let spent = TaskSummary { usage, ..waiting };
        assert_eq!(turn_summary(&spent).unwrap(), "1 approval: 1 undecided · 1,234 tokens ($0.0004)");
    }

    #[test]
    fn a_turn_summary_counts_answered_questions_apart_from_approvals() {
        let asked = TaskSummary { approvals_requested: 1, rejected: 1, questions: 1, answered: 1, waiting_ms: 3_000, ..Default::default() };
        assert_eq!(turn_summary(&asked).unwrap(), "1 question answered · 1 approval: 1 rejected · waited 3 seconds for decisions");
        let only_questions = TaskSummary { questions: 3, answered: 1, declined: 1, waiting_ms: 2_000, ..Default::default() };
        assert_eq!(
            turn_summary(&only_questions).unwrap(),
            "3 questions: 1 answered, 1 declined, 1 not answered · waited 2 seconds for decisions"
        );
        let unanswered = TaskSummary { questions: 1, ..Default::default() };
        assert_eq!(turn_summary(&unanswered).unwrap(), "1 question not answered");
    }

    #[test]
    fn spend_and_confidence_read_as_sentences() {
        use super::super::wire::{Spend, Usage};
        let spend = Spend {
            spent: Usage { input_tokens: 1000, output_tokens: 234, cost_usd: Some(0.0123) },
            token_threshold: Some(1000),
            cost_threshold: Some(0.01),
            per: "task".into(),
        };
        assert_eq!(spend_line(&spend), "Spent so far in this task: 1,234 tokens ($0.01), over its budget of 1,000 tokens or $0.01");
        let conversation = Spend {
            spent: Usage { input_tokens: 1, ..Default::default() },
            token_threshold: Some(0),
            cost_threshold: None,
            per: "conversation".into(),
        };
        assert_eq!(spend_line(&conversation), "Spent so far in this conversation: 1 token, over its budget of 0 tokens");
        assert_eq!(confidence_line(0.4), "The agent is 40% sure of this call");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(confidence_line(0.996), "The agent is 100% sure of this call");
        assert_eq!(confidence_line(-1.0), "The agent is 0% sure of this call");
    }

    #[test]
    fn numbers_are_written_without_float_formatting() {
        assert_eq!(fixed(0.0123, 2), "0.01");
        assert_eq!(fixed(12.346, 2), "12.35");
        assert_eq!(fixed(0.00042, 4), "0.0004");
        assert_eq!(fixed(-3.5, 1), "-3.5");
        assert_eq!(fixed(-0.001, 2), "0.00");
        assert_eq!(fixed(7.0, 0), "7");
        assert_eq!(number(5.0), "5");
        assert_eq!(number(-12.0), "-12");
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(1e20), "1e+20", "beyond whole numbers a person types, serde_json's form");
    }

    fn decision(outcome: ApprovalOutcome, by: &str, reason: Option<&str>) -> CardDecision {
        CardDecision { outcome, decided_by: by.into(), reason: reason.map(Into::into), original_args: json!({}), edited_args: None }
    }

    fn asked(requested_at: &str, deadline: &str) -> CardApproval {
        CardApproval {
            approval_id: "a".into(),
            gate: "require_approval".into(),
            requested_at: requested_at.into(),
            deadline: deadline.into(),
            escalated_by: None,
            escalated_to: None,
            deciders: Vec::new(),
            in_chat: false,
            rules: Default::default(),
            reminded: 0,
            reminders: 0,
            resent: 0,
            assessment: None,
            spend: None,
            approvers: None,
            approved_by: Vec::new(),
            suggestion: None,
        }
    }

    #[test]
    fn a_suggestion_says_what_was_approved_and_for_how_long_it_would_be_allowed() {
        assert_eq!(
            suggestion_line("process_refund", 3, Some(86_400)),
            "You approved process_refund 3 times in this chat with the same kind of arguments: allow it here without asking for 24 hours?"
        );
        assert!(suggestion_line("t", 2, None).ends_with("without asking?"));
        assert!(suggestion_line("t", 1, None).starts_with("You approved t once in"));
    }

    #[test]
    fn a_quorum_says_who_approved_and_how_many_are_left() {
        assert_eq!(quorum_line(&[], 2), "Needs 2 approvals from different people; none yet");
        assert_eq!(quorum_line(&["dora".into()], 2), "Approved by dora · 1 of 2 approvals; waiting for 1 more");
        assert_eq!(quorum_line(&["dora".into()], 3), "Approved by dora · 1 of 3 approvals; waiting for 2 more");
    }

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration_words(300_000), "5 minutes");
        assert_eq!(duration_words(60_000), "1 minute");
        assert_eq!(duration_words(90_000), "90 seconds");
        assert_eq!(duration_words(1_000), "1 second");
        assert_eq!(duration_words(300), "less than a second", "not \"0 minutes\"");
        assert_eq!(duration_words(0), "less than a second");
        assert_eq!(duration_words(7_200_000), "2 hours");
        assert_eq!(duration_words(5_400_000), "1 hour 30 minutes");
        assert_eq!(duration_words(299_800), "5 minutes");
    }

    #[test]
    fn a_timeout_reads_as_a_timeout_and_a_person_as_a_person() {
        let five = asked("2026-11-25T10:00:00.000Z", "2026-11-25T10:05:00.000Z");
        let timed_out = decision(ApprovalOutcome::Expired, SYSTEM, Some("timed out"));
        assert_eq!(decision_line(&timed_out, Some(&five)), "No one decided within 5 minutes, so the call did not run.");
        let skipped = decision(ApprovalOutcome::Expired, SYSTEM, Some("timed out; skipped without a decision"));
        assert_eq!(decision_line(&skipped, Some(&five)), "No one decided within 5 minutes; the call was skipped.");
        let auto = decision(ApprovalOutcome::Approved, SYSTEM, Some("timed out"));
        assert_eq!(
            decision_line(&auto, Some(&five)),
            "No one decided within 5 minutes; approved automatically, as this gate is set to do."
        );
        // An approval from before `requested_at` was kept still reads as a timeout.
        assert_eq!(
            decision_line(&timed_out, Some(&asked("", "2026-11-25T10:05:00.000Z"))),
            "No one decided in time, so the call did not run."
        );
        assert_eq!(decision_line(&timed_out, None), "No one decided in time, so the call did not run.");

        assert_eq!(decision_line(&decision(ApprovalOutcome::Rejected, "bob", Some("too much")), Some(&five)), "Rejected by bob: too much");
        assert_eq!(decision_line(&decision(ApprovalOutcome::Approved, "alice", None), None), "Approved by alice");
    }
}
