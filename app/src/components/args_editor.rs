//! Edit a call's arguments before approving: a form built from the tool's schema (one field per
//! property, checked as you type, the change listed key by key), or the raw JSON. Both edit the
//! same JSON text, so switching keeps what was typed and a decision made elsewhere keeps it too.
//! The only approve action while it is open is "Approve with these changes".

use crate::domain::ApprovalId;
use leptos::prelude::*;
use serde_json::Value;

use super::{
    alert::ErrorLine,
    card_draft::CardDraft,
    json_diff::{JsonDiff, pretty},
};
use crate::{
    api,
    client::ApiFailure,
    domain::{
        args_form::{self, Field, FieldKind},
        wire::{ApproveRequest, PreviewRequest},
    },
};

#[component]
pub fn EditForm(
    approval_id: ApprovalId,
    original: String,
    /// The card row's draft: the JSON being edited survives a re-render.
    draft: CardDraft,
    busy: RwSignal<bool>,
    error: RwSignal<Option<ApiFailure>>,
    on_cancel: Callback<()>,
    /// A plan: its steps are listed, each with a button that drops it (the usual edit).
    #[prop(optional)]
    is_plan: bool,
) -> impl IntoView {
    let text = draft.edit;
    if text.get_untracked().is_empty() {
        text.set(original.clone());
    }
    // Field ids are unique on the page even with two cards in Edit (each label its own field).
    let card = approval_id.to_string();
    let schema_for = approval_id.clone();
    // The form needs the tool's schema; until it arrives (or if it has no form) the JSON shows.
    let form = LocalResource::new(move || {
        let id = schema_for.clone();
        async move { api::approval(&id).await.ok().and_then(|a| a.args_schema).and_then(|s| args_form::fields(&s)) }
    });
    let as_json = draft.as_json;
    let parsed = Memo::new(move |_| text.with(|t| serde_json::from_str::<Value>(t).map_err(|e| e.to_string())));
    let parse_error = RwSignal::new(None::<String>);
    // What the edited call would do, asked of the server as the reviewer types (only for
    // arguments the form finds nothing wrong with, and that differ from the proposal).
    let preview = {
        let approval_id = approval_id.clone();
        let proposed: Value = serde_json::from_str(&original).unwrap_or(Value::Null);
        LocalResource::new(move || {
            let id = approval_id.clone();
            let args = parsed.get().ok().filter(|args| *args != proposed);
            let clean = match (form.get().flatten(), &args) {
                (Some(fields), Some(args)) => fields.iter().all(|f| args_form::problem(args, f).is_none()),
                _ => false,
            };
            async move {
                match args.filter(|_| clean) {
                    Some(args) => api::preview(&id, &PreviewRequest { args }).await.ok(),
                    None => None,
                }
            }
        })
    };
    // The last answer stays on screen while the next one loads, so the form does not jump at
    // each key (the preview sits below the fields for the same reason).
    let shown_preview = Memo::new(move |last: Option<&Option<_>>| match preview.get() {
        Some(answer) => answer,
        None => last.cloned().flatten(),
    });
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        // The form says what is wrong field by field: nothing is sent until it is fixed.
        let field_problems = match (form.get_untracked().flatten(), as_json.get_untracked(), parsed.get_untracked()) {
            (Some(fields), false, Ok(args)) => fields.iter().filter(|f| args_form::problem(&args, f).is_some()).count(),
            _ => 0,
        };
        if field_problems > 0 {
            parse_error.set(Some(format!(
                "Fix the {} marked above first: nothing was sent.",
                if field_problems == 1 { "field" } else { "fields" }
            )));
            return;
        }
        match parsed.get_untracked() {
            Ok(args) => {
                parse_error.set(None);
                draft.approve(approval_id.clone(), ApproveRequest { args: Some(args), grant: None }, busy, error);
            }
            Err(err) => parse_error.set(Some(format!("Not valid JSON: {err}"))),
        }
    };
    // Opened with Edit (whose button is gone now): the first field takes focus, once the form
    // or the JSON is drawn, so typing and Escape work at once.
    let form_ref = NodeRef::<leptos::html::Form>::new();
    Effect::new(move |_| {
        let _ = form.get();
        #[cfg(feature = "hydrate")]
        if let Some(el) = form_ref.get() {
            crate::focus::first_field(el);
        }
    });
    let before_value: Value = serde_json::from_str(&original).unwrap_or(Value::Null);
    let before = Signal::stored(original);
    let fields = move || form.get().flatten();
    view! {
        <form class="edit-form" node_ref=form_ref on:submit=submit>
            {move || match (fields(), as_json.get()) {
                (Some(fields), false) => {
                    let before_value = before_value.clone();
                    view! {
                        <fieldset class="args-form">
                            <legend>"Arguments"</legend>
                            {fields.into_iter().map(|field| view! { <FieldInput field text parsed card=card.clone() /> }).collect_view()}
                        </fieldset>
                        <KeyChanges before=before_value parsed />
                    }
                    .into_any()
                }
                _ if is_plan => view! {
                    <PlanSteps text parsed />
                    <details class="plan-json">
                        <summary>"Edit the plan as JSON"</summary>
                        <label>
                            "Arguments (JSON)"
                            <textarea class="json-input" rows="6" spellcheck="false" bind:value=text></textarea>
                        </label>
                    </details>
                }
                .into_any(),
                _ => view! {
                    <label>
                        "Arguments (JSON)"
                        <textarea class="json-input" rows="6" spellcheck="false" bind:value=text></textarea>
                    </label>
                    <JsonDiff before after=Signal::derive(move || text.get()) />
                }
                .into_any(),
            }}
            {move || fields().is_some().then(|| view! {
                <button type="button" class="btn btn-link-plain edit-mode" on:click=move |_| as_json.update(|j| *j = !*j)>
                    {move || if as_json.get() { "Edit as a form" } else { "Edit as JSON" }}
                </button>
            })}
            {move || parse_error.get().map(|e| view! { <ErrorLine text=e /> })}
            {move || shown_preview.get().map(|p| view! {
                <div class="edit-preview" aria-live="polite">
                    <p>"With your changes: " <strong class="preview-summary">{p.summary}</strong></p>
                    {(!p.warnings.is_empty()).then(|| view! {
                        <ul class="card-warnings" aria-label="Check before approving">
                            {p.warnings.into_iter().map(|w| view! { <li>{w}</li> }).collect_view()}
                        </ul>
                    })}
                </div>
            })}
            <div class="actions">
                <button type="submit" class="btn btn-approve" disabled=move || busy.get()>"Approve with these changes"</button>
                <button type="button" class="btn" on:click=move |_| on_cancel.run(())>"Discard my edit"</button>
            </div>
        </form>
    }
}

/// One property: its input, what it means, and what is wrong with it as you type.
#[component]
fn FieldInput(field: Field, text: RwSignal<String>, parsed: Memo<Result<Value, String>>, card: String) -> impl IntoView {
    // What was typed but is not a value of this field ("ten" for a number): said, not stored.
    let typed_problem = RwSignal::new(None::<String>);
    let initial = parsed.with_untracked(|p| p.as_ref().map(|args| args_form::shown(args, &field)).unwrap_or_default());
    let id = format!("arg-{card}-{}", field.name);
    let write = {
        let field = field.clone();
        move |input: String| {
            let current = parsed.get_untracked().unwrap_or_else(|_| Value::Object(Default::default()));
            match args_form::set_field(&current, &field, &input) {
                Ok(args) => {
                    typed_problem.set(None);
                    text.set(pretty(&args));
                }
                Err(what) => typed_problem.set(Some(format!("Must be {what}."))),
            }
        }
    };
    let problem = {
        let field = field.clone();
        move || {
            typed_problem.get().or_else(|| match parsed.get() {
                Ok(args) => args_form::problem(&args, &field),
                Err(_) => Some("The JSON is not valid; fix it under “Edit as JSON”.".into()),
            })
        }
    };
    let problem_id = format!("{id}-problem");
    let input = match field.kind.clone() {
        FieldKind::Number { integer } => {
            let write = write.clone();
            view! {
                <input id=id.clone() type="number" step=if integer { "1" } else { "any" } prop:value=initial
                    aria-describedby=problem_id.clone() on:input=move |ev| write(event_target_value(&ev)) />
            }
            .into_any()
        }
        FieldKind::Text if field.long_text() => {
            let write = write.clone();
            view! { <textarea id=id.clone() rows="6" prop:value=initial aria-describedby=problem_id.clone() on:input=move |ev| write(event_target_value(&ev))></textarea> }
                .into_any()
        }
        FieldKind::Text => {
            let write = write.clone();
            view! { <input id=id.clone() type="text" prop:value=initial aria-describedby=problem_id.clone() on:input=move |ev| write(event_target_value(&ev)) /> }
                .into_any()
        }
        FieldKind::Flag => {
            let write = write.clone();
            view! {
                <input id=id.clone() type="checkbox" prop:checked=initial == "true" aria-describedby=problem_id.clone()
                    on:change=move |ev| write(if event_target_checked(&ev) { "true".into() } else { "false".into() }) />
            }
            .into_any()
        }
        FieldKind::Choice(options) => {
            let write = write.clone();
            view! {
                <select id=id.clone() aria-describedby=problem_id.clone() on:change=move |ev| write(event_target_value(&ev))>
                    {(!field.required).then(|| view! { <option value="" selected=initial.is_empty()>"(none)"</option> })}
                    {options.into_iter().map(|o| {
                        let selected = o == initial;
                        view! { <option value=o.clone() selected=selected>{o.clone()}</option> }
                    }).collect_view()}
                </select>
            }
            .into_any()
        }
    };
    view! {
        <div class="arg-field">
            <label for=id>
                <code>{field.name.clone()}</code>
                {field.required.then_some(" (required)")}
                {field.description.clone().map(|d| view! { <span class="arg-help">{d}</span> })}
            </label>
            {input}
            <p class="arg-problem" id=problem_id role="status">{problem}</p>
        </div>
    }
}

/// A plan's steps as they stand in the edit, each with a button that drops it from the plan.
#[component]
fn PlanSteps(text: RwSignal<String>, parsed: Memo<Result<Value, String>>) -> impl IntoView {
    let steps = move || parsed.get().ok().and_then(|v| v["steps"].as_array().cloned()).unwrap_or_default();
    let remove = move |index: usize| {
        if let Ok(mut plan) = parsed.get_untracked()
            && let Some(steps) = plan["steps"].as_array_mut()
            && index < steps.len()
        {
            steps.remove(index);
            text.set(pretty(&plan));
        }
    };
    view! {
        <ol class="plan-steps plan-edit" aria-label="Steps to approve">
            {move || steps().into_iter().enumerate().map(|(i, step)| {
                let tool = step["tool"].as_str().unwrap_or_default().to_owned();
                let label = format!("Remove step {}: {tool}", i + 1);
                view! {
                    <li>
                        <code>{tool}</code>" "<code class="plan-args">{step["args"].to_string()}</code>" "
                        <button type="button" class="btn btn-small" aria-label=label on:click=move |_| remove(i)>"Remove"</button>
                    </li>
                }
            }).collect_view()}
        </ol>
    }
}

/// The change, key by key: "amount: (none) → 0.5".
#[component]
fn KeyChanges(before: Value, parsed: Memo<Result<Value, String>>) -> impl IntoView {
    let shown = |v: &Option<Value>| v.as_ref().map(|v| v.to_string()).unwrap_or_else(|| "(none)".into());
    view! {
        <div class="key-changes" aria-label="Changes">
            {move || {
                let changes = parsed.get().map(|after| args_form::key_changes(&before, &after)).unwrap_or_default();
                if changes.is_empty() {
                    return view! { <p class="muted">"No changes yet."</p> }.into_any();
                }
                view! {
                    <ul>
                        {changes.into_iter().map(|c| view! {
                            <li>
                                <code>{c.key}</code>": "
                                <span class="diff-removed">{shown(&c.before)}</span>
                                " → "
                                <span class="diff-added">{shown(&c.after)}</span>
                            </li>
                        }).collect_view()}
                    </ul>
                }
                .into_any()
            }}
        </div>
    }
}
