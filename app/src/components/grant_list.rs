use leptos::{prelude::*, task::spawn_local};

use super::alert::ErrorLine;
use crate::{api, client::ApiFailure, domain::ConversationView};

/// The conversation's live standing permissions, each revocable; one made under another agent
/// configuration than `policy_version` says so.
#[component]
pub fn GrantList(view: RwSignal<ConversationView>, policy_version: String) -> impl IntoView {
    let error = RwSignal::new(None::<ApiFailure>);
    let policy_version = StoredValue::new(policy_version);
    let live = move || view.with(|v| v.grants.iter().filter(|g| g.revoked_by.is_none() && g.args.is_none()).cloned().collect::<Vec<_>>());
    view! {
        <Show when=move || !live().is_empty()>
            <div class="grants" role="region" aria-label="Always allowed in this chat">
                <span class="grants-title">"Always allowed here:"</span>
                <For each=live key=|g| g.grant_id.clone() let:grant>
                    {
                        let id = grant.grant_id.clone();
                        let limit = grant.max_uses.map(|m| format!(", {} of {m} uses", grant.uses)).unwrap_or_else(|| format!(", used {}×", grant.uses));
                        let until = grant.expires_at.clone().map(|t| format!(", until {t}")).unwrap_or_default();
                        let earlier =
                            grant.policy_version.as_ref().is_some_and(|v| policy_version.with_value(|now| !now.is_empty() && v != now));
                        let earlier = if earlier { ", made under an earlier configuration: covers nothing now" } else { "" };
                        let gate = grant.gate.as_ref().map(|g| format!(", when gate \"{g}\" asks")).unwrap_or_default();
                        let bounds = grant.bounds.as_ref().map(crate::domain::wording::grant_bounds).unwrap_or_default();
                        view! {
                            <span class="grant" data-tool=grant.tool.clone()>
                                <code>{grant.tool.clone()}</code>
                                {format!(" (by {}{gate}{bounds}{limit}{until}{earlier}) ", grant.created_by)}
                                <button class="btn btn-small" on:click=move |_| {
                                    let id = id.clone();
                                    spawn_local(async move {
                                        if let Err(e) = api::revoke_grant(&id).await {
                                            error.set(Some(e));
                                        }
                                    });
                                }>"Revoke"</button>
                            </span>
                        }
                    }
                </For>
                {move || error.get().map(|e| view! { <ErrorLine text=e.message /> })}
            </div>
        </Show>
    }
}
