use leptos::prelude::*;

use crate::domain::{ApprovalState, CardStatus, Risk};

/// The status of a tool card in plain words ("Pending approval"), coloured by its state; the
/// technical name stays in `data-status` for scripts and tests.
#[component]
pub fn StatusBadge(status: CardStatus) -> impl IntoView {
    let name = status.as_str();
    view! { <span class=format!("badge status status-{name}") data-status=name>{label(status)}</span> }
}

pub fn label(status: CardStatus) -> &'static str {
    match status {
        CardStatus::Requested => "Proposed",
        CardStatus::PendingApproval => "Pending approval",
        CardStatus::Approved => "Approved",
        CardStatus::Rejected => "Rejected",
        CardStatus::Expired => "Timed out",
        CardStatus::Canceled => "Canceled",
        CardStatus::Deferred => "Deferred",
        CardStatus::Executing => "Running",
        CardStatus::Succeeded => "Done",
        CardStatus::Failed => "Failed",
    }
}

/// An approval's state in plain words, as the card's badge says it.
pub fn approval_label(state: ApprovalState) -> &'static str {
    match state {
        ApprovalState::Pending => "Pending approval",
        ApprovalState::Approved => "Approved",
        ApprovalState::Rejected => "Rejected",
        ApprovalState::Expired => "Timed out",
        ApprovalState::Canceled => "Canceled",
        ApprovalState::Deferred => "Deferred",
    }
}

#[component]
pub fn RiskBadge(risk: Risk) -> impl IntoView {
    let name = risk.as_str();
    view! { <span class=format!("badge risk risk-{name}") title="risk level">{format!("{name} risk")}</span> }
}
