//! The pending queue at volume: approvals grouped by chat, one compact row each that expands to
//! the full card, and a selection decided together — each approval still its own decision
//! (its own request, audit entry and event), so one that someone else decided first is reported,
//! not hidden. A row someone else decided while the reviewer wrote on its card stays, with the
//! text and who decided, until they dismiss it (as the chat's card does, card_parts::Superseded).

use crate::domain::{ApprovalId, ConversationId};
use std::collections::{BTreeSet, HashMap};

use leptos::{prelude::*, task::spawn_local};

use super::{
    card_draft::{CardDraft, Mode},
    card_parts::while_writing,
    status_badge::RiskBadge,
    tool_card::ToolCard,
};
use crate::{
    api,
    domain::{
        ApprovalOutcome, ApprovalState, naming,
        rules::Viewer,
        wire::{Approval, ApproveRequest, RejectRequest},
    },
    queue_query::QueueQuery,
    time::age,
};

/// What the reviewer is doing in the queue — ticked and opened rows, a decision over the
/// selection in progress and its report, what is typed on each card. Owned by the page; the list
/// itself is keyed by approval (`PendingQueue`), so a live change draws only the rows that
/// changed and a row being typed in keeps its fields, its focus and its mode.
#[derive(Clone, Copy)]
pub struct QueueUi {
    pub selected: RwSignal<BTreeSet<ApprovalId>>,
    pub expanded: RwSignal<BTreeSet<ApprovalId>>,
    state: RwSignal<Bulk>,
    progress: RwSignal<String>,
    report: RwSignal<Option<String>>,
    reason: RwSignal<String>,
    /// What is typed on each card (a reason, an edit), by approval id: a row that is drawn again
    /// (its approval changed) keeps its draft.
    drafts: StoredValue<HashMap<String, CardDraft>>,
    /// The page's owner: drafts are created under it, not under the row that is drawn again.
    owner: StoredValue<Option<Owner>>,
    /// The pending list as last drawn and the filter it was drawn for: an approval that leaves
    /// the list while its card has unsent text is drawn again from here (`keep_unsent`).
    shown: StoredValue<Option<(QueueQuery, Vec<Approval>)>>,
    /// What became of each kept approval, by id: asked once, `None` until the answer arrives.
    fates: StoredValue<HashMap<String, RwSignal<Option<Approval>>>>,
    /// The pending list on screen, as the server last sent it (`show` puts a newer one in).
    live_list: StoredValue<Option<RwSignal<Vec<Approval>>>>,
    /// How many times the list was asked for again: only the latest answer is shown.
    reloads: StoredValue<u64>,
}

impl QueueUi {
    pub fn new() -> Self {
        Self {
            selected: RwSignal::new(BTreeSet::new()),
            expanded: RwSignal::new(BTreeSet::new()),
            state: RwSignal::new(Bulk::Idle),
            progress: RwSignal::new(String::new()),
            report: RwSignal::new(None),
            reason: RwSignal::new(String::new()),
            drafts: StoredValue::new(HashMap::new()),
            owner: StoredValue::new(Owner::current()),
            shown: StoredValue::new(None),
            fates: StoredValue::new(HashMap::new()),
            live_list: StoredValue::new(None),
            reloads: StoredValue::new(0),
        }
    }

    /// A new ask for the pending list: its number, for `is_latest`.
    pub fn next_reload(&self) -> u64 {
        self.reloads.update_value(|n| *n += 1);
        self.reloads.get_value()
    }

    /// No later ask was made since `reload` (whose answer would be newer).
    pub fn is_latest(&self, reload: u64) -> bool {
        self.reloads.try_get_value() == Some(reload)
    }

    /// Puts a newer pending list on screen: the rows whose approval changed are drawn again,
    /// the others stay as they are (a field being typed in keeps its text and its focus). In a
    /// row drawn again, the keyboard goes back where it was, caret included.
    pub fn show(&self, list: Vec<Approval>) {
        if let Some(Some(live)) = self.live_list.try_get_value() {
            let place = crate::focus::remember_row_focus();
            let _ = live.try_set(list);
            crate::focus::restore_row_focus(place);
        }
    }

    /// The pending list to draw: `list`, and put back where it was each approval drawn last time
    /// (for the same filter) that has left it while its card had unsent text (a reason, guidance,
    /// an edit): someone else decided it meanwhile. Returns the ids put back, drawn as kept rows
    /// (`KeptRow`), not as pending, until the reviewer dismisses them.
    pub fn keep_unsent(&self, query: &QueueQuery, list: Vec<Approval>) -> (Vec<Approval>, BTreeSet<ApprovalId>) {
        let before = self.shown.with_value(|shown| match shown {
            Some((drawn_for, before)) if drawn_for == query => before.clone(),
            _ => Vec::new(),
        });
        let mut drawn = list;
        let mut kept = BTreeSet::new();
        for (place, approval) in before.into_iter().enumerate() {
            if drawn.iter().any(|a| a.id == approval.id) || !self.has_unsent(&approval.id) {
                continue;
            }
            kept.insert(approval.id.clone());
            drawn.insert(place.min(drawn.len()), approval);
        }
        self.shown.set_value(Some((query.clone(), drawn.clone())));
        (drawn, kept)
    }

    /// The reviewer left the pending list (another tab of the queue): nothing is kept from it.
    pub fn forget_shown(&self) {
        self.shown.set_value(None);
    }

    /// The approval's card has a form open whose text was not sent.
    fn has_unsent(&self, approval_id: &str) -> bool {
        self.drafts.with_value(|d| d.get(approval_id).copied()).is_some_and(|draft| {
            draft.mode.try_get_untracked().is_some_and(|mode| mode != Mode::Idle) && draft.sent.try_get_untracked() == Some(false)
        })
    }

    /// What became of a kept approval: asked from the server once, `None` until it answers.
    fn fate(&self, approval_id: &ApprovalId) -> RwSignal<Option<Approval>> {
        let key: &str = approval_id;
        if let Some(fate) = self.fates.with_value(|f| f.get(key).copied()) {
            return fate;
        }
        let fate = match self.owner.get_value() {
            Some(owner) => owner.with(|| RwSignal::new(None)),
            None => RwSignal::new(None),
        };
        self.fates.update_value(|f| {
            f.insert(key.to_owned(), fate);
        });
        let id = approval_id.clone();
        spawn_local(async move {
            if let Ok(now) = api::approval(&id).await {
                let _ = fate.try_set(Some(now));
            }
        });
        fate
    }

    /// The draft of an approval's card, the same one each time the row is drawn.
    fn draft(&self, approval_id: &str) -> CardDraft {
        if let Some(draft) = self.drafts.with_value(|d| d.get(approval_id).copied()) {
            return draft;
        }
        let draft = match self.owner.get_value() {
            Some(owner) => owner.with(CardDraft::new),
            None => CardDraft::new(),
        };
        self.drafts.update_value(|d| {
            d.insert(approval_id.to_owned(), draft);
        });
        draft
    }
}

impl Default for QueueUi {
    fn default() -> Self {
        Self::new()
    }
}

/// The chats of `list`, each once, in the order their first approval has in it (so "oldest
/// first" puts the chat that has waited longest first).
pub fn chat_order(list: &[Approval]) -> Vec<ConversationId> {
    let mut chats: Vec<ConversationId> = Vec::new();
    for approval in list {
        if !chats.contains(&approval.conversation_id) {
            chats.push(approval.conversation_id.clone());
        }
    }
    chats
}

/// What a decision over the selection did: "Approved 3." plus one line per approval it could
/// not decide (already decided elsewhere, handed to the admins, …).
pub fn bulk_report(verb: &str, done: usize, failed: &[(String, String)]) -> String {
    let mut report = format!("{verb} {done}.");
    for (summary, why) in failed {
        report.push_str(&format!(" Not “{summary}”: {why}."));
    }
    report
}

/// The list as drawn: the pending approvals and those of them kept because someone else decided
/// them while this reviewer wrote on them ([`QueueUi::keep_unsent`]).
type Drawn = Memo<(Vec<Approval>, BTreeSet<ApprovalId>)>;

/// The pending approvals, grouped by chat, with a selection that is decided together. `list`:
/// as the server sent it for `query`; newer lists arrive through [`QueueUi::show`]. Kept rows
/// are neither counted nor selectable. Groups and rows are keyed, so a newer list draws again
/// only the rows whose approval changed.
#[component]
pub fn PendingQueue(list: Vec<Approval>, query: QueueQuery, now: RwSignal<i64>, viewer: Option<Viewer>, ui: QueueUi) -> impl IntoView {
    let QueueUi { selected, .. } = ui;
    let live = RwSignal::new(list);
    ui.live_list.set_value(Some(live));
    // Always "changed": an approval has no equality of its own, and the rows' keys say what did.
    let drawn: Drawn = Memo::new_with_compare(move |_| ui.keep_unsent(&query, live.get()), |_, _| true);
    let count = move || drawn.with(|(list, kept)| list.iter().filter(|a| !kept.contains(&a.id)).count());
    // What can be ticked: a question is answered on its own, never approved in a batch.
    let present = Memo::new(move |_| {
        drawn.with(|(list, kept)| {
            list.iter().filter(|a| !kept.contains(&a.id) && a.tool != naming::ASK_USER).map(|a| a.id.clone()).collect()
        })
    });
    // Only what is still in the list counts: an approval decided elsewhere drops out of the selection.
    let chosen = Chosen { selected, present };
    let all_chosen = move || {
        let n = chosen.len();
        n > 0 && n == present.with(BTreeSet::len)
    };
    let some_chosen = move || {
        let n = chosen.len();
        n > 0 && n < present.with(BTreeSet::len)
    };
    let toggle_all = {
        move |_| {
            let everything = all_chosen();
            let present = present.get_untracked();
            selected.update(|s| if everything { s.clear() } else { s.extend(present) });
        }
    };
    // Nothing pending and no kept row with text: the queue is empty.
    let empty = move || drawn.with(|(_, kept)| kept.iter().all(|id| ui.draft(id).mode.get() == Mode::Idle));
    let chats = move || drawn.with(|(list, _)| chat_order(list));
    view! {
        <Show
            when=move || { count() > 0 }
            fallback=move || empty().then(|| view! { <p class="muted empty-queue">"Nothing here."</p> })
        >
            <div class="queue-toolbar">
                <p class="queue-count">{move || format!("{} pending", count())}</p>
                // Only questions wait: nothing to tick.
                <Show when=move || !present.with(BTreeSet::is_empty)>
                    <label class="select-all">
                        <input type="checkbox" prop:checked=all_chosen prop:indeterminate=some_chosen on:change=toggle_all />
                        "Select all"
                    </label>
                </Show>
            </div>
        </Show>
        <BulkBar chosen drawn ui />
        <For each=chats key=ConversationId::clone let:conversation_id>
            <ChatGroupView conversation_id drawn now viewer=viewer.clone() ui />
        </For>
    }
}

/// The key of a row: what its approval says that can change while it waits, but for its age and
/// its reminders (which the row shows on its own), and whether it is kept. A row is drawn again
/// only when this changes (`QueueUi::show` then puts the keyboard back where it was).
fn row_key(approval: &Approval, kept: bool) -> String {
    use std::hash::{DefaultHasher, Hash, Hasher};
    // What a pending call's row shows that can change while it waits (hashed by hand: deriving a
    // serializer for the whole approval would grow the browser's bundle for a key).
    let mut hasher = DefaultHasher::new();
    (&approval.summary, approval.args.to_string(), approval.state.as_str(), &approval.deadline).hash(&mut hasher);
    (&approval.escalated_by, &approval.escalated_to, &approval.deciders, &approval.approved_by).hash(&mut hasher);
    (approval.approvers.is_some(), &approval.assessment.warnings, &approval.reason).hash(&mut hasher);
    format!("{}:{kept}:{:x}", approval.id, hasher.finish())
}

/// The approvals of one chat (the groups in the order their first approval has in the queue:
/// "oldest first" puts the chat that has waited longest first).
#[component]
fn ChatGroupView(conversation_id: ConversationId, drawn: Drawn, now: RwSignal<i64>, viewer: Option<Viewer>, ui: QueueUi) -> impl IntoView {
    let link = format!("/c/{conversation_id}");
    let rows = Memo::new_with_compare(
        move |_| {
            drawn.with(|(list, kept)| {
                list.iter().filter(|a| a.conversation_id == conversation_id).map(|a| (a.clone(), kept.contains(&a.id))).collect::<Vec<_>>()
            })
        },
        |_, _| true,
    );
    let heading = move || {
        rows.with(|rows| {
            rows.first()
                .map(|(a, _)| format!("{} · {}", a.owner.clone().unwrap_or_else(|| "—".into()), a.conversation_title))
                .unwrap_or_default()
        })
    };
    let waiting = move || rows.with(|rows| rows.iter().filter(|(_, kept)| !kept).count());
    // A chat whose only rows are kept ones goes when they are dismissed.
    let shown = move || waiting() > 0 || rows.with(|rows| rows.iter().any(|(a, kept)| *kept && ui.draft(&a.id).mode.get() != Mode::Idle));
    view! {
        <section class="queue-group" aria-label=heading hidden=move || !shown()>
            <h2 class="queue-group-title">
                <a href=link>{heading}</a>
                <span class="pending-count" aria-label=move || format!("{} waiting", waiting())>{waiting}</span>
            </h2>
            <ul class="queue-list">
                <For each=move || rows.get() key=|(a, kept)| row_key(a, *kept) let:((approval, kept))>
                    {if kept {
                        view! { <KeptRow approval ui /> }.into_any()
                    } else {
                        view! { <QueueRow approval drawn now viewer=viewer.clone() ui /> }.into_any()
                    }}
                </For>
            </ul>
        </section>
    }
}

/// One approval: a checkbox and a one-line summary that opens to the full card.
#[component]
fn QueueRow(approval: Approval, drawn: Drawn, now: RwSignal<i64>, viewer: Option<Viewer>, ui: QueueUi) -> impl IntoView {
    let QueueUi { selected, expanded, .. } = ui;
    // Four-eyes gates keep the requester from approving: the queue knows who asked.
    let viewer_requested = viewer.as_ref().is_some_and(|v| approval.owner.as_deref().is_some_and(|o| o.eq_ignore_ascii_case(&v.name)));
    let viewer_name = viewer.as_ref().map(|v| v.name.clone());
    let stands_in_for = viewer.as_ref().map(|v| v.stands_in_for.clone()).unwrap_or_default();
    let viewer_is_admin = viewer.map(|v| v.is_admin);
    let id = approval.id.clone();
    let draft = ui.draft(&id);
    let member = |set: RwSignal<BTreeSet<ApprovalId>>| {
        let id = id.clone();
        move || set.with(|s| s.contains(&id))
    };
    let flip = |set: RwSignal<BTreeSet<ApprovalId>>| {
        let id = id.clone();
        move || {
            set.update(|s| {
                if !s.remove(&id) {
                    s.insert(id.clone());
                }
            })
        }
    };
    let (checked, toggle) = (member(selected), flip(selected));
    // The open state is the page's, not the element's: the browser's own toggle is replaced.
    let (open, toggle_open) = (member(expanded), flip(expanded));
    let held = approval.escalated_by.as_ref().map(|by| view! { <span class="badge held">{format!("with the admins (from {by})")}</span> });
    let card = approval.as_pending_card();
    // Seen before the row is opened, so nobody approves it in a batch without reading it.
    let warning = (!approval.assessment.warnings.is_empty()).then(|| {
        let all = approval.assessment.warnings.join("; ");
        view! { <span class="badge will-fail"><span class="visually-hidden">"Warning: "</span>{all}</span> }
    });
    // What led to the call: the chat is elsewhere, so the queue says it.
    let context = approval.context.clone();
    let context = (!context.request.is_empty()).then(|| {
        view! {
            <dl class="queue-context">
                <dt>"Asked"</dt>
                <dd>{format!("“{}”", context.request)}</dd>
                {context.reasoning.map(|why| view! { <dt>"Agent"</dt><dd>{why}</dd> })}
                {(!context.done.is_empty()).then(|| view! { <dt>"Done already"</dt><dd>{context.done.join("; ")}</dd> })}
            </dl>
        }
    });
    // Reminded: its deciders were nudged, so the row stands out (style/main.css `.reminded`). Read
    // from the list as it is now: a reminder does not draw the row again (`row_key`).
    let reminders = {
        let (id, first) = (approval.id.clone(), approval.reminders_sent);
        move || drawn.with(|(list, _)| list.iter().find(|a| a.id == id).map_or(first, |a| a.reminders_sent))
    };
    let row_class = {
        let reminders = reminders.clone();
        move || if reminders() > 0 { "queue-item reminded" } else { "queue-item" }
    };
    let reminded = move || {
        let n = reminders();
        (n > 0).then(|| view! { <span class="badge reminded">{format!("Reminder {n}")}</span> })
    };
    // Its age as the server counted it, going on by the page's clock: the row is not drawn again for it.
    let (age_then, drawn_at) = (approval.age_seconds, now.get_untracked());
    let age_now = move || age(age_then + (now.get() - drawn_at).max(0) / 1000);
    view! {
        <li class=row_class data-approval-id=id.to_string()>
            {if approval.tool == naming::ASK_USER {
                // Answered on its own: nothing to tick (the column stays).
                view! { <span class="queue-select" aria-hidden="true"></span> }.into_any()
            } else {
                view! { <input type="checkbox" class="queue-select" aria-label=format!("Select: {}", approval.summary) prop:checked=checked on:change=move |_| toggle() /> }.into_any()
            }}
            <details class="queue-row" open=open>
                <summary on:click=move |ev| {
                    ev.prevent_default();
                    toggle_open();
                }>
                    <span class="tool-title">{naming::tool_title(&approval.tool)}</span>
                    <code class="tool-name">{approval.tool.clone()}</code>
                    <span class="queue-summary">{approval.summary.clone()}</span>
                    <RiskBadge risk=approval.risk />
                    {warning}
                    {held}
                    {reminded}
                    <span class="queue-age">{age_now}</span>
                </summary>
                {context}
                <ToolCard card now draft viewer_is_admin=viewer_is_admin.unwrap_or_default() viewer_requested viewer_name=viewer_name.unwrap_or_default() stands_in_for in_queue=true />
            </details>
        </li>
    }
}

/// An approval someone else decided while this reviewer had its card's form open: kept in its
/// place with what they wrote and who decided, until they dismiss it (or leave the pending list).
#[component]
fn KeptRow(approval: Approval, ui: QueueUi) -> impl IntoView {
    let draft = ui.draft(&approval.id);
    let fate = ui.fate(&approval.id);
    let mode = draft.mode;
    let id = approval.id.to_string();
    let title = naming::tool_title(&approval.tool);
    let (tool, summary) = (approval.tool.clone(), approval.summary.clone());
    let line = move || match fate.get() {
        Some(now) => match (outcome_of(now.state), now.decided_by) {
            (Some(outcome), by) => while_writing(outcome, by.as_deref().unwrap_or("someone")),
            // Still waiting, for someone else now (handed over).
            (None, _) => "While you were writing, this call was handed to someone else. Your unsent text is kept below.".to_owned(),
        },
        None => "This call left the queue while you were writing. Your unsent text is kept below.".to_owned(),
    };
    let text = move || match mode.get() {
        Mode::Editing => draft.edit.get(),
        _ => draft.reason.get(),
    };
    let dismiss = move |_| {
        draft.close();
        // The row goes with its button: focus stays in the queue, not on the page's top.
        crate::focus::content();
    };
    view! {
        <Show when=move || mode.get() != Mode::Idle>
            <li class="queue-item queue-kept" data-approval-id=id.clone()>
                <div class="queue-row">
                    <p class="queue-kept-call">
                        <span class="tool-title">{title.clone()}</span>
                        " "
                        <code class="tool-name">{tool.clone()}</code>
                        " "
                        <span class="queue-summary">{summary.clone()}</span>
                    </p>
                    <div class="superseded" role="alert">
                        <p>{line}</p>
                        <pre class="kept-text">{text}</pre>
                        <button type="button" class="btn btn-small" on:click=dismiss>"Dismiss"</button>
                    </div>
                </div>
            </li>
        </Show>
    }
}

/// How a decided approval's state reads as a decision (`None`: still pending).
fn outcome_of(state: ApprovalState) -> Option<ApprovalOutcome> {
    Some(match state {
        ApprovalState::Pending => return None,
        ApprovalState::Approved => ApprovalOutcome::Approved,
        ApprovalState::Rejected => ApprovalOutcome::Rejected,
        ApprovalState::Expired => ApprovalOutcome::Expired,
        ApprovalState::Canceled => ApprovalOutcome::Canceled,
        ApprovalState::Deferred => ApprovalOutcome::Deferred,
    })
}

/// What the last decision over the selection did; outside the list, which may be empty after it.
#[component]
pub fn BulkReport(ui: QueueUi) -> impl IntoView {
    move || ui.report.get().map(|r| view! { <p class="bulk-report" role="status">{r}</p> })
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Bulk {
    Idle,
    Rejecting,
    Working,
}

/// The ticked approvals that are still in the list.
#[derive(Clone, Copy)]
struct Chosen {
    selected: RwSignal<BTreeSet<ApprovalId>>,
    present: Memo<BTreeSet<ApprovalId>>,
}

impl Chosen {
    fn len(&self) -> usize {
        self.present.try_with(|present| self.selected.try_with(|s| s.intersection(present).count())).flatten().unwrap_or(0)
    }

    fn ids_untracked(&self) -> Vec<ApprovalId> {
        self.present
            .try_with_untracked(|present| self.selected.try_with_untracked(|s| s.intersection(present).cloned().collect()))
            .flatten()
            .unwrap_or_default()
    }
}

/// Approve or reject every selected approval, one decision each, with progress and a report.
#[component]
fn BulkBar(chosen: Chosen, drawn: Drawn, ui: QueueUi) -> impl IntoView {
    let QueueUi { selected, state, progress, report, reason, .. } = ui;
    // Everything ticked was decided elsewhere while a reason was written for it: the bar closes
    // (the next rows ticked are not rejected with it) and says so, with the reason not sent.
    Effect::new(move |_| {
        if chosen.len() == 0 && state.get_untracked() == Bulk::Rejecting {
            state.set(Bulk::Idle);
            let written = reason.get_untracked().trim().to_owned();
            reason.set(String::new());
            let kept = if written.is_empty() { String::new() } else { format!(" Your reason, not sent: “{written}”.") };
            report.set(Some(format!("The approvals you were rejecting were decided elsewhere.{kept}")));
        }
    });
    let run = Callback::new(move |approve: bool| {
        // Taken now: the list (and `chosen` with it) changes after each decision.
        let ids = chosen.ids_untracked();
        let summaries: Vec<(ApprovalId, String, Vec<String>)> = drawn
            .with_untracked(|(list, _)| list.iter().map(|a| (a.id.clone(), a.summary.clone(), a.assessment.warnings.clone())).collect());
        let reason_text = reason.get_untracked().trim().to_owned();
        state.set(Bulk::Working);
        report.set(None);
        spawn_local(async move {
            let (mut done, mut failed) = (0, Vec::new());
            let summary_of = |id: &ApprovalId| {
                summaries.iter().find(|(s_id, ..)| s_id == id).map(|(_, s, _)| s.clone()).unwrap_or_else(|| id.to_string())
            };
            for (i, id) in ids.iter().enumerate() {
                let _ = progress.try_set(format!("{} {} of {}…", if approve { "Approving" } else { "Rejecting" }, i + 1, ids.len()));
                // A call its card warns about is approved only on its own, after reading why.
                let warned = summaries.iter().find(|(s_id, ..)| s_id == id).and_then(|(.., w)| w.first().cloned());
                if let Some(warning) = warned.filter(|_| approve) {
                    failed.push((summary_of(id), format!("{warning}; open it to decide it on its own")));
                    continue;
                }
                // What the reviewer is writing on a row is theirs to send or discard, not the batch's.
                if ui.has_unsent(id) {
                    failed.push((summary_of(id), "you have an unsent edit or reason on it; send or discard it first".to_owned()));
                    continue;
                }
                let answer = if approve {
                    api::approve(id, &ApproveRequest::default()).await
                } else {
                    api::reject(id, &RejectRequest { reason: (!reason_text.is_empty()).then(|| reason_text.clone()) }).await
                };
                match answer {
                    Ok(_) => done += 1,
                    Err(e) => failed.push((summary_of(id), e.message)),
                }
            }
            // The page may have been left meanwhile: then there is no one to tell.
            let _ = selected.try_update(|s| s.retain(|id| !ids.contains(id)));
            let _ = reason.try_set(String::new());
            let _ = state.try_set(Bulk::Idle);
            let _ = report.try_set(Some(bulk_report(if approve { "Approved" } else { "Rejected" }, done, &failed)));
        });
    });
    view! {
        <Show when=move || { chosen.len() > 0 || state.get() == Bulk::Working }>
            <div class="bulk-bar" role="group" aria-label="Decide the selected approvals">
                {move || match state.get() {
                    Bulk::Working => view! { <span role="status" aria-live="polite">{move || progress.get()}</span> }.into_any(),
                    Bulk::Idle => {
                        view! {
                            <span>{move || format!("{} selected", chosen.len())}</span>
                            <button type="button" class="btn btn-approve" on:click=move |_| run.run(true)>"Approve selected"</button>
                            <button type="button" class="btn btn-reject" on:click=move |_| state.set(Bulk::Rejecting)>"Reject selected…"</button>
                            <button type="button" class="btn btn-link-plain" on:click=move |_| selected.update(BTreeSet::clear)>"Clear"</button>
                        }.into_any()
                    }
                    Bulk::Rejecting => {
                        view! {
                            <label class="bulk-reason">
                                {move || format!("Reason for rejecting {} (goes back to each agent)", chosen.len())}
                                <input type="text" bind:value=reason placeholder="optional" />
                            </label>
                            <button type="button" class="btn btn-reject" on:click=move |_| run.run(false)>"Confirm reject"</button>
                            <button type="button" class="btn" on:click=move |_| state.set(Bulk::Idle)>"Cancel"</button>
                        }.into_any()
                    }
                }}
            </div>
        </Show>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{ApprovalState, Risk};

    fn approval(id: &str, chat: &str) -> Approval {
        Approval {
            id: id.into(),
            owner: Some("alice".into()),
            conversation_id: chat.into(),
            conversation_title: format!("chat {chat}"),
            task_id: "t".into(),
            call_id: id.into(),
            agent: "support".into(),
            tool: "process_refund".into(),
            args: serde_json::json!({}),
            gate: "require_approval".into(),
            summary: format!("refund {id}"),
            risk: Risk::High,
            state: ApprovalState::Pending,
            created_at: "2026-11-25T10:00:00Z".into(),
            deadline: "2026-11-25T10:05:00Z".into(),
            age_seconds: 1,
            decided_at: None,
            decided_by: None,
            decision_seconds: None,
            escalated_by: None,
            escalated_to: None,
            deciders: Vec::new(),
            approvers: None,
            approved_by: Vec::new(),
            policy_version: None,
            decided_policy_version: None,
            reason: None,
            edited_args: None,
            args_schema: None,
            call_state: None,
            rules: Default::default(),
            reminders_sent: 0,
            context: Default::default(),
            assessment: Default::default(),
            approve_url: format!("/api/approvals/{id}/approve"),
            reject_url: format!("/api/approvals/{id}/reject"),
        }
    }

    #[test]
    fn chats_keep_the_queue_order_of_their_first_approval() {
        let list = [approval("a1", "A"), approval("b1", "B"), approval("a2", "A"), approval("c1", "C")];
        let order: Vec<String> = chat_order(&list).iter().map(|c| c.to_string()).collect();
        assert_eq!(order, ["A", "B", "C"]);
        assert!(chat_order(&[]).is_empty());
    }

    #[test]
    fn a_row_is_drawn_again_when_its_approval_changes_not_when_it_ages_or_is_reminded() {
        let first = approval("a1", "A");
        let mut older = first.clone();
        older.age_seconds += 30;
        older.reminders_sent = 2;
        assert_eq!(row_key(&first, false), row_key(&older, false));
        let mut handed = first.clone();
        handed.escalated_by = Some("bob".into());
        assert_ne!(row_key(&first, false), row_key(&handed, false));
        assert_ne!(row_key(&first, false), row_key(&first, true), "a row kept after someone else decided is another row");
        assert_ne!(row_key(&first, false), row_key(&approval("a2", "A"), false));
    }

    #[test]
    fn the_report_names_what_could_not_be_decided() {
        assert_eq!(bulk_report("Approved", 3, &[]), "Approved 3.");
        assert_eq!(
            bulk_report("Rejected", 1, &[("refund a".into(), "already decided by bob".into())]),
            "Rejected 1. Not “refund a”: already decided by bob."
        );
    }
}
