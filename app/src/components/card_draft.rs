//! What a reviewer has open and typed on a card, and how it is sent.

use crate::domain::ApprovalId;
use leptos::prelude::*;

use crate::{
    api::{self, in_background},
    client::ApiFailure,
    domain::wire::ApproveRequest,
};

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
    /// This reviewer sent the draft and waits for the answer: a decision that arrives live
    /// meanwhile is theirs, not someone else's (no "decided while you were writing").
    pub sent: RwSignal<bool>,
    /// Give the card focus when it next renders decided (after this reviewer's own decision,
    /// whose form is gone with the pending card).
    pub(super) refocus: RwSignal<bool>,
}

impl CardDraft {
    pub fn new() -> Self {
        Self {
            mode: RwSignal::new(Mode::Idle),
            reason: RwSignal::new(String::new()),
            edit: RwSignal::new(String::new()),
            sent: RwSignal::new(false),
            refocus: RwSignal::new(false),
        }
    }

    pub fn close(&self) {
        self.mode.set(Mode::Idle);
        self.reason.set(String::new());
        self.edit.set(String::new());
        self.sent.set(false);
    }

    /// Sends the decision written in this draft. The live event of the decision may arrive before
    /// the POST's answer and re-render the card (disposing `busy` and `error`): the draft, owned
    /// by the card's row, is marked sent until then, closed on success, and reopened on a refusal.
    pub fn send<T: 'static>(
        self,
        busy: RwSignal<bool>,
        error: RwSignal<Option<ApiFailure>>,
        call: impl std::future::Future<Output = Result<T, ApiFailure>> + 'static,
    ) {
        self.sent.set(true);
        self.refocus.set(true);
        in_background(busy, error, async move {
            let result = call.await;
            match &result {
                Ok(_) => self.close(),
                Err(_) => {
                    let _ = self.sent.try_set(false);
                    let _ = self.refocus.try_set(false);
                }
            }
            result
        });
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
