//! What a reviewer has open and typed on a card, and how it is sent.

use crate::domain::{ApprovalId, ApprovalState, CardStatus, ConversationView, wording};
use leptos::prelude::*;

use crate::{
    api::{self, in_background},
    client::ApiFailure,
    domain::wire::ApproveRequest,
};

/// The chat's view of its conversation, provided by the chat (`ChatView`) to its cards: a
/// decision refused because someone decided first (the page's live stream missed it) folds in
/// the events the page missed. The queue provides none: its list is read again on every change.
#[derive(Clone, Copy)]
pub struct Resync(pub RwSignal<ConversationView>);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Idle,
    Rejecting,
    Deferring,
    Editing,
}

/// What a reviewer has open and typed on a card. Owned by the card's row, so it outlives a
/// re-render of the card: when someone else decides meanwhile, the text is still there.
#[derive(Clone, Copy)]
pub struct CardDraft {
    pub mode: RwSignal<Mode>,
    /// The reason (reject) or guidance (defer) being written.
    pub reason: RwSignal<String>,
    /// The arguments being edited (JSON text); empty until Edit opens.
    pub edit: RwSignal<String>,
    /// The edit is shown as JSON rather than as the tool's form.
    pub as_json: RwSignal<bool>,
    /// This reviewer sent the draft and waits for the answer: a decision that arrives live
    /// meanwhile is theirs, not someone else's (no "decided while you were writing").
    pub sent: RwSignal<bool>,
    /// Give the card focus when it next renders decided (after this reviewer's own decision,
    /// whose form is gone with the pending card).
    pub(super) refocus: RwSignal<bool>,
    /// This reviewer's decision was refused because someone had decided first (a 409 the page
    /// did not see coming): the card says who, politely (`Superseded`, card_parts.rs).
    pub(super) decided_first: RwSignal<Option<String>>,
    /// The chat's view to bring up to date then (`Resync`); none in the queue.
    resync: Option<RwSignal<ConversationView>>,
}

impl CardDraft {
    pub fn new() -> Self {
        Self {
            mode: RwSignal::new(Mode::Idle),
            reason: RwSignal::new(String::new()),
            edit: RwSignal::new(String::new()),
            as_json: RwSignal::new(false),
            sent: RwSignal::new(false),
            refocus: RwSignal::new(false),
            decided_first: RwSignal::new(None),
            resync: use_context::<Resync>().map(|Resync(view)| view),
        }
    }

    pub fn close(&self) {
        self.mode.set(Mode::Idle);
        self.reason.set(String::new());
        self.edit.set(String::new());
        self.as_json.set(false);
        self.sent.set(false);
    }

    /// Sends the decision written in this draft. The live event of the decision may arrive before
    /// the POST's answer and re-render the card (disposing `busy` and `error`): the draft, owned
    /// by the card's row, is marked sent until then, closed on success, and reopened on a refusal.
    /// A refusal because someone decided first is settled by `settle_conflict`.
    pub fn send<T: 'static>(
        self,
        approval_id: ApprovalId,
        busy: RwSignal<bool>,
        error: RwSignal<Option<ApiFailure>>,
        call: impl std::future::Future<Output = Result<T, ApiFailure>> + 'static,
    ) {
        self.sent.set(true);
        self.refocus.set(true);
        self.decided_first.set(None);
        in_background(busy, error, async move {
            let failure = match call.await {
                Ok(_) => {
                    self.close();
                    return Ok(());
                }
                Err(failure) => failure,
            };
            let _ = self.sent.try_set(false);
            let _ = self.refocus.try_set(false);
            self.settle_conflict(approval_id, failure).await
        });
    }

    /// Approves as this reviewer's decision (with edited args or not), like [`CardDraft::send`]:
    /// focus moves on once the card is decided, and a call decided first by someone else says so.
    pub fn approve(self, approval_id: ApprovalId, request: ApproveRequest, busy: RwSignal<bool>, error: RwSignal<Option<ApiFailure>>) {
        let id = approval_id.clone();
        self.send(approval_id, busy, error, async move { api::approve(&id, &request).await });
    }

    /// A refused decision. A 409 for a call that no longer waits means someone decided first and
    /// this page did not hear of it (its live stream was down): that is no error to show in the
    /// server's words (which name the approval by its id). The card says who decided, and in the
    /// chat the page folds in the events it missed, so the card shows its decided state (and
    /// takes focus as after any decision). Any other refusal stays the error it is.
    async fn settle_conflict(self, approval_id: ApprovalId, failure: ApiFailure) -> Result<(), ApiFailure> {
        if failure.status != 409 {
            return Err(failure);
        }
        let approval = match api::approval(&approval_id).await {
            Ok(approval) if approval.state != ApprovalState::Pending => approval,
            _ => return Err(failure),
        };
        let line = decided_first_line(approval.decided_by.as_deref(), approval.state);
        let polite = |line: String| ApiFailure { status: 409, message: line, details: Vec::new() };
        // The queue: its list is read again on the decision's change; the line says why meanwhile.
        let Some(view) = self.resync else { return Err(polite(line)) };
        let detail = match api::conversation_log(&approval.conversation_id).await {
            Ok(detail) => detail,
            Err(_) => return Err(polite(line)),
        };
        let still_waiting = view
            .try_with_untracked(|v| v.card(approval.call_id.as_str()).is_some_and(|c| c.status == CardStatus::PendingApproval))
            .unwrap_or(false);
        let _ = self.decided_first.try_set(Some(line));
        // Unless a live event drew it decided meanwhile, the events below do: focus moves on then.
        if still_waiting {
            let _ = self.refocus.try_set(true);
        }
        let _ = view.try_update(|v| detail.events.iter().for_each(|event| v.apply(event)));
        Ok(())
    }
}

/// Said on a card whose decision came too late: who decided first, and how (never an id).
fn decided_first_line(decided_by: Option<&str>, state: ApprovalState) -> String {
    let how = state.as_str();
    match decided_by.filter(|by| *by != wording::SYSTEM) {
        Some(by) => format!("{by} had already {how} this call, so your decision was not applied."),
        None => format!("This call was already {how}, so your decision was not applied."),
    }
}

impl Default for CardDraft {
    fn default() -> Self {
        Self::new()
    }
}

/// Sends an approval (with edited args or not); the card's new state arrives over SSE.
pub fn send_approve(approval_id: ApprovalId, request: ApproveRequest, busy: RwSignal<bool>, error: RwSignal<Option<ApiFailure>>) {
    in_background(busy, error, async move { api::approve(&approval_id, &request).await });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decision_that_came_too_late_names_who_decided_first_and_no_id() {
        assert_eq!(
            decided_first_line(Some("demo"), ApprovalState::Rejected),
            "demo had already rejected this call, so your decision was not applied."
        );
        assert_eq!(
            decided_first_line(Some(wording::SYSTEM), ApprovalState::Expired),
            "This call was already expired, so your decision was not applied."
        );
        assert_eq!(decided_first_line(None, ApprovalState::Canceled), "This call was already canceled, so your decision was not applied.");
    }
}
