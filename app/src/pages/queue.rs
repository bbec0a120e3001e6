use std::time::Duration;

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::{
    components::{
        alert::ErrorLine,
        delegation_panel::DelegationPanel,
        pending_queue::{BulkReport, PendingQueue, QueueUi},
        status_badge::approval_label,
    },
    data::{approvals_loader, me_loader},
    domain::{Role, rules::Viewer, wire::Approval, wording},
    live,
    queue_query::QueueQuery,
    time::{ago, now_ms},
};

/// `/approvals`: every pending approval the viewer may decide (all users' for admins), live;
/// and the decided history.
#[component]
pub fn QueuePage() -> impl IntoView {
    let query = use_query_map();
    let filter = Memo::new(move |_| {
        let q = query.read();
        let get = |k: &str| q.get(k).filter(|v| !v.is_empty());
        QueueQuery {
            status: if matches!(get("status").as_deref(), Some("decided" | "shadow")) { "decided".into() } else { "pending".into() },
            order: get("order"),
            tool: get("tool"),
            user: get("user"),
            risk: get("risk"),
            reversibility: get("reversibility"),
        }
    });
    let load = approvals_loader();
    let approvals = Resource::new(move || filter.get(), load);
    let load_me = me_loader();
    let me = Resource::new(|| (), move |_| load_me());
    // Ticked and open rows, a bulk decision, what is typed on each card: kept by the page.
    let ui = QueueUi::new();
    // The pending list's counts for the tab title, set where the list is awaited: reading the
    // resource itself outside <Transition> would not wait for it when hydrating.
    let counts = RwSignal::new(None::<(usize, usize)>);
    live::on_queue_change(move || {
        let query = filter.get_untracked();
        if query.status != "pending" {
            approvals.refetch();
            return;
        }
        // The pending list is put in place row by row (`QueueUi::show`), not drawn again, so
        // a change elsewhere never takes a field that is being typed in away.
        let asked = ui.next_reload();
        leptos::task::spawn_local(async move {
            let Ok(list) = crate::api::approvals(&query).await else { return };
            if !ui.is_latest(asked) || filter.try_get_untracked().as_ref() != Some(&query) {
                return;
            }
            let _ = counts.try_set(Some(tally(&list)));
            ui.show(list);
        });
    });
    let now = RwSignal::new(now_ms());
    #[cfg(feature = "hydrate")]
    if let Ok(handle) = set_interval_with_handle(move || now.set(now_ms()), Duration::from_secs(1)) {
        on_cleanup(move || handle.clear());
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = Duration::from_secs(1);

    let decided = move || filter.get().status == "decided";
    // Part of the Decided tab: calls shadow gates would have stopped.
    let shadow = move || query.read().get("status").as_deref() == Some("shadow");
    let value = move |k: &'static str| move || query.read().get(k).unwrap_or_default();
    let filtered = move || {
        let q = query.read();
        ["tool", "user", "risk", "reversibility", "order"].iter().any(|k| q.get(k).is_some_and(|v| !v.is_empty()))
    };
    view! {
        <Title text=move || {
            // Formatted after the body has rendered (leptos_meta), when the server may have
            // disposed this page's signals already: read them without panicking (as the chat does).
            match query.try_with(|q| q.get("status")).flatten().as_deref() {
                Some("shadow") => return "Shadow hits · Countersign".to_owned(),
                Some("decided") => return "Decided approvals · Countersign".to_owned(),
                _ => {}
            }
            // How many wait, in the tab title (as the chat does), once the list is loaded.
            let (waiting, reminded) = counts.try_get().flatten().unwrap_or_default();
            wording::tab_title(waiting, reminded, Some("Approval queue"))
        } />
        <section class="queue card" id="content" tabindex="-1">
            <h1>"Approval queue"</h1>
            <nav class="tabs" aria-label="Queue">
                <a href="/approvals" aria-current=move || (!decided()).then_some("page")>"Pending"</a>
                <a href="/approvals?status=decided" aria-current=move || (decided() && !shadow()).then_some("page")>"Decided"</a>
                <a href="/approvals?status=shadow" aria-current=move || shadow().then_some("page") title="Calls shadow gates would have stopped; they ran unasked">"Shadow hits"</a>
            </nav>
            // Folded unless a filter is set, so the first approval is near the top on a phone. Not
            // on the Shadow hits tab, which lists every hit (the filters are the approvals').
            <details class="filters-fold" open=filtered hidden=shadow>
            <summary>"Filter and sort"</summary>
            // Values as attributes too: the server's page (and a browser without JavaScript) shows
            // the filter in force and sends it again, the Decided tab's status with it.
            <form class="filters" method="get" action="/approvals">
                <input type="hidden" name="status" value=move || filter.get().status prop:value=move || filter.get().status />
                <label>"Tool" <input type="text" name="tool" value=value("tool") prop:value=value("tool") placeholder="any" /></label>
                <label>"User" <input type="text" name="user" value=value("user") prop:value=value("user") placeholder="any" /></label>
                <label>"Risk"
                    <select name="risk" prop:value=value("risk")>
                        {choices(value("risk"), &[("", "any"), ("high", "high"), ("medium", "medium"), ("low", "low")])}
                    </select>
                </label>
                <label>"Can be undone"
                    <select name="reversibility" prop:value=value("reversibility")>
                        {choices(value("reversibility"), &[("", "any"), ("irreversible", "no (irreversible only)"), ("partially", "partly"), ("fully", "yes")])}
                    </select>
                </label>
                <label>"Order"
                    <select name="order" prop:value=value("order")>
                        {choices(value("order"), &[
                            ("", "newest first"),
                            ("oldest", "oldest first"),
                            ("risk", "highest risk first"),
                            ("deadline", "soonest deadline first"),
                            ("reversibility", "hardest to undo first"),
                        ])}
                    </select>
                </label>
                <button type="submit" class="btn">"Filter"</button>
            </form>
            </details>
            <DelegationPanel />
            <BulkReport ui />
            <Transition fallback=|| view! { <p class="muted">"Loading approvals…"</p> }>
                {move || Suspend::new(async move {
                    let viewer = me.await.ok().flatten().map(|me| Viewer { is_admin: me.role == Role::Admin, name: me.username, stands_in_for: me.stands_in_for });
                    let approvals = approvals.await;
                    if let Ok(list) = &approvals {
                        counts.set(Some(tally(list)));
                    }
                    let nothing = || view! { <p class="muted empty-queue">"Nothing here."</p> }.into_any();
                    match approvals {
                        Err(e) => view! { <ErrorLine text=format!("Could not load approvals: {e}") /> }.into_any(),
                        Ok(_) if shadow() => {
                            ui.forget_shown();
                            view! { <ShadowHits /> }.into_any()
                        }
                        Ok(list) if decided() => {
                            ui.forget_shown();
                            if list.is_empty() { nothing() } else { view! { <DecidedTable list /> }.into_any() }
                        }
                        // "Nothing here." included: a row someone else decided while a reason was
                        // being written on it stays (with the text and who decided) until dismissed.
                        Ok(list) => view! { <PendingQueue list query=filter.get_untracked() now viewer ui /> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

/// A filter's options, the one in force marked `selected` (what the server's page shows).
fn choices(current: impl Fn() -> String + Copy + Send + Sync + 'static, options: &'static [(&'static str, &'static str)]) -> impl IntoView {
    options.iter().map(|&(value, label)| view! { <option value=value selected=move || current() == value>{label}</option> }).collect_view()
}

/// How many approvals wait, and how many of them were reminded of (the tab title's counts).
fn tally(list: &[Approval]) -> (usize, usize) {
    (list.len(), list.iter().filter(|a| a.reminders_sent > 0).count())
}

/// The decided approvals, newest decision first (as the API lists them). On a phone each row is a
/// block of named values (style/main.css), so no column is off screen.
#[component]
fn DecidedTable(list: Vec<Approval>) -> impl IntoView {
    view! {
        <div class="table-wrap">
            <table class="decided">
                <thead>
                    <tr><th>"Tool"</th><th>"Summary"</th><th>"User"</th><th>"Outcome"</th><th>"Decided by"</th><th>"When"</th><th>"Took"</th><th>"Reason"</th></tr>
                </thead>
                <tbody>
                    {list.into_iter().map(|a| view! {
                        <tr data-approval-id=a.id.to_string()>
                            <td data-label="Tool"><code>{a.tool.clone()}</code></td>
                            <td data-label="Summary">{a.summary.clone()}</td>
                            <td data-label="User">{a.owner.clone().unwrap_or_default()}</td>
                            <td data-label="Outcome">
                                <span class=format!("badge status status-{}", a.state) data-state=a.state.as_str()>{approval_label(a.state)}</span>
                                // Approved is not the end of it: say when the call then failed.
                                {(a.call_state.as_deref() == Some("failed")).then(|| view! { <span class="badge status status-failed call-failed">"then failed"</span> })}
                            </td>
                            <td class="decided-by" data-label="Decided by">{a.decided_by.as_deref().map(|by| crate::domain::wording::deciders(by, &a.approved_by)).unwrap_or_default()}</td>
                            <td data-label="When">{a.decided_at.clone().map(|at| view! { <time datetime=at.clone() title=at.clone()>{ago(&at)}</time> })}</td>
                            <td data-label="Took">{a.decision_seconds.map(|s| format!("{s} s")).unwrap_or_default()}</td>
                            <td data-label="Reason">{a.reason.clone().unwrap_or_default()}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// Calls shadow gates would have stopped (they ran unasked), newest first; read in the browser.
#[component]
fn ShadowHits() -> impl IntoView {
    let hits = RwSignal::new(None::<Result<Vec<crate::domain::wire::ShadowHit>, String>>);
    Effect::new(move |_| {
        leptos::task::spawn_local(async move { hits.set(Some(crate::api::shadow_hits().await.map_err(|e| e.message))) });
    });
    move || {
        match hits.get() {
        None => view! { <p class="muted">"Loading shadow hits…"</p> }.into_any(),
        Some(Err(e)) => view! { <ErrorLine text=e /> }.into_any(),
        Some(Ok(list)) if list.is_empty() => {
            view! { <p class="muted empty-queue">"No shadow gate would have asked yet (a gate with mode = \"shadow\" records them here; for admins, so does a draft policy, COUNTERSIGN_AGENTS_DRAFT, as draft:…)."</p> }.into_any()
        }
        Some(Ok(list)) => view! {
            <div class="table-wrap">
                <table class="decided shadow-hits">
                    <thead><tr><th>"Gate"</th><th>"Tool"</th><th>"Summary"</th><th>"User"</th><th>"Chat"</th><th>"When"</th></tr></thead>
                    <tbody>
                        {list.into_iter().map(|h| view! {
                            <tr data-call-id=h.call_id.to_string()>
                                <td data-label="Gate">
                                    <span class="badge shadow">{h.gate.clone()}</span>
                                    {h.draft_version.clone().map(|v| view! { <span class="muted">{format!(" version {v}")}</span> })}
                                </td>
                                <td data-label="Tool"><code>{h.tool.clone()}</code></td>
                                <td data-label="Summary">{h.summary.clone()}</td>
                                <td data-label="User">{h.owner.clone().unwrap_or_default()}</td>
                                <td data-label="Chat"><a href=format!("/c/{}", h.conversation_id)>{h.conversation_title.clone()}</a></td>
                                <td data-label="When"><time datetime=h.at.clone() title=h.at.clone()>{ago(&h.at)}</time></td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            </div>
        }.into_any(),
    }
    }
}
