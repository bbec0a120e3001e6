//! `/policy` (admins): the agent configuration in force — its text, version and `policy check`
//! warnings, rendered by the server — and a form that replays a draft against the calls recorded
//! (`POST /api/policy/replay`: what `countersign policy replay` reports, through the same engine
//! function), its report rendered by the server and put in place once it answers; then how to
//! roll a draft out
//! (docs/config.md, "The policy's life"). A draft the server runs in shadow
//! (`COUNTERSIGN_AGENTS_DRAFT`) is shown too, with its shadow hits by gate, and can be put in the
//! form to compare its replay with what it recorded live. Someone else is told only that it is for
//! admins, and nothing is asked of the server for them.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::{
    api::{self, in_background},
    client::ApiFailure,
    components::{
        alert::{AdminsOnly, ErrorLine},
        hydration_marker::busy_until_hydrated,
        replay_table::{RESULTS_HEADING, ReplayTable, minute},
        rollout_steps::RolloutSteps,
    },
    data::policy_loader,
    domain::wire::{DraftInShadow, LivePolicy, ReplayRequest},
    focus,
};

/// How far back a replay may look, in days; [`DEFAULT_DAYS`] is chosen first.
const WINDOWS: [u32; 3] = [7, 30, 90];
const DEFAULT_DAYS: u32 = 30;
/// The draft's field: it takes focus back when the draft is refused.
const DRAFT_FIELD: &str = "policy-draft";

/// A refused replay as the form says it: the message, then each problem (a draft's is the one
/// `countersign policy check` gives, named by the API at `/draft`); a draft over the server's
/// body limit (413, the message names it) is pointed to the command line, which has none.
pub fn failure_text(failure: &ApiFailure) -> String {
    let mut text = failure.message.clone();
    for detail in &failure.details {
        text.push('\n');
        text.push_str(detail.strip_prefix("/draft: ").unwrap_or(detail));
    }
    if failure.status == 413 {
        text.push_str("\nA draft this large can be replayed from its file: countersign policy replay FILE");
    }
    text
}

/// The page: the policy and the replay for an admin, or only that it is for admins.
#[component]
pub fn PolicyPage() -> impl IntoView {
    let load = policy_loader();
    let policy = Resource::new(|| (), move |_| load());
    view! {
        <Title text="Policy · Countersign" />
        <section class="policy card" id="content" tabindex="-1">
            <h1>"Policy"</h1>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    match policy.await {
                        Ok(Some(live)) => view! { <PolicyAdmin live /> }.into_any(),
                        Ok(None) => view! { <AdminsOnly text="Only admins may see the policy and replay drafts of it." /> }.into_any(),
                        Err(e) => view! { <ErrorLine text=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
}

/// What an admin sees: the configuration in force, the replay's form and its report (after a
/// replay: its HTML, rendered by the server for that request), and the steps to roll a draft out.
#[component]
fn PolicyAdmin(live: LivePolicy) -> impl IntoView {
    let LivePolicy { path, version, text, agents, warnings, draft_in_shadow } = live;
    let draft = RwSignal::new(String::new());
    // The draft's field, which "Replay this draft" fills (set on the element: a `prop:value`
    // on a textarea is rendered differently by the server and breaks hydration).
    let field = NodeRef::<leptos::html::Textarea>::new();
    let days = RwSignal::new(DEFAULT_DAYS);
    let agent = RwSignal::new(String::new());
    let busy = busy_until_hydrated();
    let running = RwSignal::new(false);
    let error = RwSignal::new(None::<ApiFailure>);
    let report = RwSignal::new(None::<String>);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if busy.get_untracked() {
            return;
        }
        let agent = agent.get_untracked();
        let request = ReplayRequest {
            draft: draft.get_untracked(),
            since_days: Some(days.get_untracked()),
            agent: (!agent.is_empty()).then_some(agent),
        };
        running.set(true);
        report.set(None);
        in_background(busy, error, async move {
            let answer = api::replay_policy(&request).await;
            let _ = running.try_set(false);
            match answer {
                Ok(done) => {
                    let _ = report.try_set(Some(done));
                    focus::by_id(RESULTS_HEADING);
                    Ok(())
                }
                Err(failure) => {
                    focus::by_id(DRAFT_FIELD);
                    Err(failure)
                }
            }
        });
    };
    let in_shadow = draft_in_shadow.map(|shadow| view! { <DraftInShadowSection shadow draft field busy /> });
    let source = match &path {
        Some(path) => view! { "read from " <code>{path.clone()}</code> " at start-up" }.into_any(),
        None => view! { "the built-in demo configuration (no " <code>"COUNTERSIGN_AGENTS"</code> " is set)" }.into_any(),
    };
    view! {
        <section class="policy-live" aria-labelledby="policy-live-title">
            <h2 id="policy-live-title">"The configuration in force"</h2>
            <p>"Version " <code class="policy-version">{version}</code> ", " {source} "."</p>
            <details class="policy-text">
                <summary>"Its text"</summary>
                <pre class="json policy-toml">{text}</pre>
            </details>
            {if warnings.is_empty() {
                view! { <p class="muted">"No warnings from " <code>"countersign policy check"</code> "."</p> }.into_any()
            } else {
                view! {
                    <h3>{format!("Its warnings ({})", warnings.len())}</h3>
                    <ul class="policy-warnings">{warnings.into_iter().map(|w| view! { <li>{w}</li> }).collect_view()}</ul>
                }.into_any()
            }}
        </section>
        {in_shadow}
        <form class="replay-form" on:submit=submit>
            <h2>"Replay a draft"</h2>
            <p class="muted">
                "Paste a draft of the configuration file: every call recorded in the window is put to it with the engine's own "
                "policy functions and compared with what happened, as " <code>"countersign policy replay"</code> " does. "
                "Nothing is saved, nothing changes."
            </p>
            <label>
                "Draft policy (TOML)"
                <textarea id=DRAFT_FIELD class="policy-draft" name="draft" rows="14" required spellcheck="false" autocomplete="off"
                    node_ref=field on:input=move |ev| draft.set(event_target_value(&ev))></textarea>
            </label>
            <div class="replay-options">
                <label>
                    "Window"
                    <select name="since_days" on:change=move |ev| days.set(event_target_value(&ev).parse().unwrap_or(DEFAULT_DAYS))>
                        {WINDOWS
                            .iter()
                            .map(|&n| {
                                let chosen = n == DEFAULT_DAYS;
                                view! { <option value=n.to_string() selected=chosen>{format!("the last {n} days")}</option> }
                            })
                            .collect_view()}
                    </select>
                </label>
                <label>
                    "Agent"
                    <select name="agent" on:change=move |ev| agent.set(event_target_value(&ev))>
                        <option value="">"All agents"</option>
                        {agents.into_iter().map(|name| { let label = name.clone(); view! { <option value=name>{label}</option> } }).collect_view()}
                    </select>
                </label>
                <button type="submit" class="btn btn-primary" disabled=move || busy.get()>
                    {move || if running.get() { "Replaying…" } else { "Replay" }}
                </button>
            </div>
            <p class="muted replay-status" role="status">{move || running.get().then_some("Replaying the draft against the recorded calls…")}</p>
            {move || error.get().map(|e| view! { <ErrorLine text=failure_text(&e) /> })}
        </form>
        {move || report.get().map(|html| view! { <div class="replay-report" inner_html=html></div> })}
        <RolloutSteps path />
    }
}

/// The draft the server runs in shadow: its version, its shadow hits by gate since the server
/// started with it, and a button that puts its text in the replay's form (`draft`), so that its
/// replay can be compared with what shadow recorded live.
#[component]
fn DraftInShadowSection(
    shadow: DraftInShadow,
    draft: RwSignal<String>,
    field: NodeRef<leptos::html::Textarea>,
    busy: RwSignal<bool>,
) -> impl IntoView {
    let DraftInShadow { path, version, text, since, hits, by_gate } = shadow;
    let counted = match hits {
        1 => "1 shadow hit".to_owned(),
        n => format!("{n} shadow hits"),
    };
    let fill = move |_: leptos::ev::MouseEvent| {
        if let Some(element) = field.get() {
            element.set_value(&text);
        }
        draft.set(text.clone());
        focus::by_id(DRAFT_FIELD);
    };
    view! {
        <section class="policy-shadow" aria-labelledby="policy-shadow-title">
            <h2 id="policy-shadow-title">"The draft in shadow"</h2>
            <p>
                "Version " <code class="policy-version">{version}</code> ", read from " <code>{path}</code> " at start-up ("
                <code>"COUNTERSIGN_AGENTS_DRAFT"</code> "): every call is also put to it, and each one it would treat otherwise is "
                "recorded as a shadow hit; it decides nothing. " {counted} " since the server started with it ("
                <time datetime=since.clone()>{minute(&since)}</time> " UTC)."
            </p>
            {if by_gate.is_empty() {
                view! { <p class="muted">"No call so far that it would treat otherwise."</p> }.into_any()
            } else {
                view! {
                    <ReplayTable caption="Its shadow hits by gate" headers=&["Gate", "Hits"] class="policy-shadow-hits">
                        {by_gate
                            .into_iter()
                            .map(|(gate, n)| view! { <tr><td><code>{gate}</code></td><td>{n.to_string()}</td></tr> })
                            .collect_view()}
                    </ReplayTable>
                }.into_any()
            }}
            <p class="muted">
                "Replay it to compare: its replay says what it would have changed on the calls recorded in the window, "
                "its hits what it saw of each call live since the server started with it."
            </p>
            <button type="button" class="btn" disabled=move || busy.get() on:click=fill>"Replay this draft"</button>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_draft_says_its_problem_under_the_message() {
        let failure = ApiFailure {
            status: 422,
            message: "the draft is not a valid agent configuration".into(),
            details: vec!["/draft: the draft: agent \"support\": unknown kind \"sometimes\"".into()],
        };
        assert_eq!(
            failure_text(&failure),
            "the draft is not a valid agent configuration\nthe draft: agent \"support\": unknown kind \"sometimes\""
        );
    }

    #[test]
    fn a_draft_over_the_body_limit_is_pointed_to_the_command_line() {
        let failure = ApiFailure {
            status: 413,
            message: "the request body is too large: at most 64 KiB (COUNTERSIGN_BODY_LIMIT)".into(),
            details: Vec::new(),
        };
        assert_eq!(
            failure_text(&failure),
            "the request body is too large: at most 64 KiB (COUNTERSIGN_BODY_LIMIT)\n\
             A draft this large can be replayed from its file: countersign policy replay FILE"
        );
    }
}
