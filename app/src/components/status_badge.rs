use leptos::prelude::*;

use crate::domain::{CardStatus, Risk};

/// The status of a tool card, e.g. `pending_approval`, as text and colour.
#[component]
pub fn StatusBadge(status: CardStatus) -> impl IntoView {
    let name = status.as_str();
    view! { <span class=format!("badge status status-{name}") data-status=name>{name}</span> }
}

#[component]
pub fn RiskBadge(risk: Risk) -> impl IntoView {
    let name = risk.as_str();
    view! { <span class=format!("badge risk risk-{name}") title="risk level">{format!("{name} risk")}</span> }
}
