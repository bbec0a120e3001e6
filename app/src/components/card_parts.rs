//! The parts of a tool card that read the same wherever it is shown: why the call is risky, what
//! became of it, and the notice kept for a reviewer whose decision someone else made first.

use leptos::prelude::*;
use serde_json::Value;

use super::{
    card_draft::{CardDraft, Mode},
    json_diff::{JsonDiff, pretty},
};
use crate::domain::{
    ApprovalOutcome, Card, CardStatus,
    fold::{CardApproval, CardDecision},
    wording,
};

/// Why a waiting call is risky: can it be undone and what follows, the factors (the card lists
/// its `warnings` on their own just above), the agent's confidence and the spend so far.
#[component]
pub fn Assessment(approval: CardApproval, warnings: Vec<String>) -> impl IntoView {
    let spend = approval.spend.as_ref().map(wording::spend_line);
    approval.assessment.map(|a| {
        let factors: Vec<String> = a.factors.into_iter().filter(|f| !warnings.contains(f)).collect();
        view! {
            <div class="assessment">
                <p class="consequences">
                    <strong class="reversibility" data-reversibility=format!("{:?}", a.reversibility).to_ascii_lowercase()>{wording::reversibility(a.reversibility)}</strong>
                    ": " {a.consequences}
                </p>
                {(!factors.is_empty()).then(|| view! { <p class="factors">"Why it is risky: " {factors.join("; ")}</p> })}
                {a.confidence.map(|c| view! { <p class="confidence">{wording::confidence_line(c)}</p> })}
                {spend.map(|line| view! { <p class="spend">{line}</p> })}
            </div>
        }
    })
}

/// What became of the call: who decided and how (with the edit, if any), and what it returned.
#[component]
pub fn CardOutcome(card: Card) -> impl IntoView {
    let decision = card.decision.clone().map(|d| {
        let line = wording::decision_line(&d, card.approval.as_ref());
        let diff = d.edited_args.clone().map(|edited| {
            let before = pretty(&d.original_args);
            let after = pretty(&edited);
            view! {
                <p class="edited-note">"Arguments edited before approval:"</p>
                <JsonDiff before=Signal::stored(before) after=Signal::stored(after) />
            }
        });
        view! {
            <p class="decision">{line}</p>
            {diff}
        }
    });
    // A refused call never ran: its decision line says why, the model's stub result is not shown.
    let refused = card.status.is_refused();
    // Refused without a decision of its own: the same call was rejected before. Said for people
    // (the result's wording is an instruction to the model).
    let repeat_note = (card.status == CardStatus::Rejected && card.decision.is_none())
        .then(|| view! { <p class="decision">"Not run: this exact call was already rejected earlier in this chat."</p> });
    let result = card.result.clone().filter(|_| !refused).map(|output| {
        let text = output
            .get("message")
            .or_else(|| output.get("error"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| pretty(&output));
        let class = if card.status == CardStatus::Failed { "result result-error" } else { "result" };
        view! { <p class=class>{text}</p> }
    });
    view! {
        {decision}
        {repeat_note}
        {result}
    }
}

/// Whether an open form holds nothing of the reviewer's own: an empty reason, or an edit whose
/// arguments are still the proposal's (`proposed`, what the call asked for).
pub fn nothing_written(mode: Mode, text: &str, proposed: Option<&Value>) -> bool {
    if text.trim().is_empty() {
        return true;
    }
    mode == Mode::Editing && proposed.is_some_and(|proposed| serde_json::from_str::<Value>(text).is_ok_and(|args| args == *proposed))
}

/// "While you were writing, bob rejected this call. …": said on a card (and a queue row) someone
/// else decided while this reviewer had its form open.
pub fn while_writing(outcome: ApprovalOutcome, decided_by: &str) -> String {
    let verb = wording::verb(outcome).to_ascii_lowercase();
    let who = if decided_by == wording::SYSTEM { "the timeout" } else { decided_by };
    format!("While you were writing, {who} {verb} this call. Your unsent text is kept below.")
}

/// Someone else decided while this reviewer had a form open: keep what they wrote, say who won.
/// Nothing is said about the reviewer's own decision (the draft is then marked sent), nor when
/// the form holds nothing they wrote (Edit opened and nothing changed): nothing was lost, the
/// card just shows the decision. A decision of theirs that the server refused because someone
/// had decided first (the page missed it) is said in one polite line, with who
/// (`CardDraft::decided_first`).
#[component]
pub fn Superseded(decision: Option<CardDecision>, draft: CardDraft) -> impl IntoView {
    let mode = draft.mode;
    // The arguments the call was proposed with: what an untouched edit form still holds.
    let proposed = decision.as_ref().map(|d| d.original_args.clone());
    let outcome = decision.as_ref().map(|d| while_writing(d.outcome, &d.decided_by));
    let outcome = outcome.unwrap_or_else(|| "This call was decided while you were writing. Your unsent text is kept below.".into());
    move || {
        if draft.sent.get() {
            return None;
        }
        let open = mode.get();
        let text = match open {
            Mode::Idle => {
                return draft.decided_first.get().map(|line| view! { <p class="decided-first" role="status">{line}</p> }.into_any());
            }
            Mode::Editing => draft.edit.get(),
            Mode::Rejecting | Mode::Deferring => draft.reason.get(),
        };
        if nothing_written(open, &text, proposed.as_ref()) {
            return None;
        }
        let outcome = outcome.clone();
        Some(
            view! {
                <div class="superseded" role="alert">
                    <p>{outcome}</p>
                    <pre class="kept-text">{text}</pre>
                    <button type="button" class="btn btn-small" on:click=move |_| draft.close()>"Dismiss"</button>
                </div>
            }
            .into_any(),
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Mode, nothing_written};

    #[test]
    fn an_untouched_form_holds_nothing_to_keep() {
        let proposed = json!({"order_id": 1001, "amount": 249.0});
        // Edit opened and nothing changed: the proposal, however it is laid out.
        assert!(nothing_written(Mode::Editing, "{\n  \"amount\": 249.0,\n  \"order_id\": 1001\n}", Some(&proposed)));
        assert!(nothing_written(Mode::Rejecting, "  ", Some(&proposed)));
        assert!(!nothing_written(Mode::Editing, "{\"order_id\": 1001, \"amount\": 25.0}", Some(&proposed)));
        assert!(!nothing_written(Mode::Editing, "{\"order_id\": 10", Some(&proposed)), "half-typed JSON is the reviewer's");
        assert!(!nothing_written(Mode::Rejecting, "wrong order", Some(&proposed)));
        assert!(!nothing_written(Mode::Editing, "{}", None), "no proposal to compare with: kept");
    }
}
