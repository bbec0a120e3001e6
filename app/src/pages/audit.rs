use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;
use serde_json::Value;

use crate::{
    api,
    components::alert::{AdminsOnly, ErrorLine},
    data::me_loader,
    domain::{AuditKind, Role},
    time::ago,
};

/// A one-line gist of an entry's data: its plain values, `key: value`, the first few — what
/// happened (outcome, tool, reason) before the ids.
pub fn gist(data: &Value) -> String {
    let Some(object) = data.as_object() else { return data.to_string() };
    let is_id = |key: &str| key == "id" || key.ends_with("_id");
    let ordered = object.iter().filter(|(k, _)| !is_id(k)).chain(object.iter().filter(|(k, _)| is_id(k)));
    let plain: Vec<String> = ordered
        .filter_map(|(key, value)| match value {
            Value::String(s) => Some(format!("{key}: {s}")),
            Value::Number(n) => Some(format!("{key}: {n}")),
            Value::Bool(b) => Some(format!("{key}: {b}")),
            _ => None,
        })
        .collect();
    let mut line = plain.iter().take(3).cloned().collect::<Vec<_>>().join(" · ");
    if plain.len() > 3 || plain.len() < object.len() {
        line.push_str(" …");
    }
    line
}

/// `/audit` (admins): does the hash chain verify, and the latest entries. Someone else is told
/// only that it is for admins: no export link, no filters, nothing asked of the server.
#[component]
pub fn AuditPage() -> impl IntoView {
    let load_me = me_loader();
    let me = Resource::new(|| (), move |_| load_me());
    view! {
        <Title text="Audit · Countersign" />
        <section class="audit card" id="content" tabindex="-1">
            <h1>"Audit trail"</h1>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    match me.await {
                        Ok(Some(me)) if me.role == Role::Admin => view! { <AuditTrail /> }.into_any(),
                        Ok(_) => view! { <AdminsOnly text="Only admins may see the audit trail." /> }.into_any(),
                        Err(e) => view! { <ErrorLine text=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
}

/// The trail itself, for an admin: the export, the filters, the chain's check and the entries,
/// loaded in the browser.
#[component]
fn AuditTrail() -> impl IntoView {
    let verification = LocalResource::new(api::audit_verification);
    let query = use_query_map();
    let param = move |key: &'static str| move || query.read().get(key).filter(|v| !v.is_empty());
    let (kind, actor) = (param("kind"), param("actor"));
    let entries = LocalResource::new(move || api::audit_entries(200, kind(), actor()));
    view! {
        <p><a href="/api/audit/export" download="countersign-audit.jsonl">"Export as JSON Lines"</a></p>
        <form class="filters" method="get" action="/audit">
            <label>"Kind"
                <select name="kind" prop:value=move || kind().unwrap_or_default()>
                    <option value="">"any"</option>
                    {AuditKind::ALL.iter().map(|k| view! { <option value=k.as_str()>{k.as_str()}</option> }).collect_view()}
                </select>
            </label>
            <label>"Actor" <input type="text" name="actor" prop:value=move || actor().unwrap_or_default() placeholder="anyone" /></label>
            <button type="submit" class="btn">"Filter"</button>
        </form>
        // Read directly, not under a <Suspense>: this part sits inside the page's own suspense
        // (whether the viewer is an admin), and the fallback is what the server renders.
        {move || match verification.get() {
            None => view! { <p class="muted">"Checking the chain…"</p> }.into_any(),
            Some(Ok(v)) if v["ok"] == true => view! {
                <p class="chain chain-ok" role="status">{format!("The chain verifies: {} entries, none changed.", v["entries"])}</p>
            }.into_any(),
            Some(Ok(v)) => view! {
                <p class="chain chain-broken" role="alert">
                    {format!("The chain is broken at entry {}: {}", v["first_broken"], v["problem"].as_str().unwrap_or(""))}
                </p>
            }.into_any(),
            Some(Err(e)) => view! { <ErrorLine text=e.message /> }.into_any(),
        }}
        {move || {
                let rows = entries.get().and_then(Result::ok).map(|v| v["entries"].as_array().cloned().unwrap_or_default()).unwrap_or_default();
                view! {
                    <div class="table-wrap">
                        <table class="audit-table">
                            <thead><tr><th>"#"</th><th>"When"</th><th>"Kind"</th><th>"Actor"</th><th>"Details"</th></tr></thead>
                            <tbody>
                                {rows.into_iter().map(|e| {
                                    let at = e["at"].as_str().unwrap_or("").to_owned();
                                    view! {
                                        <tr>
                                            <td data-label="#">{e["id"].to_string()}</td>
                                            <td data-label="When"><time datetime=at.clone() title=at.clone()>{ago(&at)}</time></td>
                                            <td data-label="Kind"><code>{e["kind"].as_str().unwrap_or("").to_owned()}</code></td>
                                            <td data-label="Actor">{e["actor"].as_str().unwrap_or("").to_owned()}</td>
                                            <td data-label="Details">
                                                <details class="audit-data">
                                                    <summary>{gist(&e["data"])}</summary>
                                                    <pre class="json">{serde_json::to_string_pretty(&e["data"]).unwrap_or_default()}</pre>
                                                </details>
                                            </td>
                                        </tr>
                                    }
                                }).collect_view()}
                            </tbody>
                        </table>
                    </div>
                }
        }}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::gist;

    #[test]
    fn a_gist_shows_the_first_plain_values_and_says_when_there_is_more() {
        assert_eq!(gist(&json!({"approval_id": "a1", "outcome": "approved"})), "outcome: approved · approval_id: a1");
        assert_eq!(
            gist(&json!({"call_id": "c", "conversation_id": "v", "approval_id": "a", "tool": "t"})),
            "tool: t · approval_id: a · call_id: c …"
        );
        assert_eq!(gist(&json!({"a": 1, "b": true, "c": "x", "d": "y"})), "a: 1 · b: true · c: x …");
        assert_eq!(gist(&json!({"tool": "t", "args": {"order_id": 1}})), "tool: t …");
        assert_eq!(gist(&json!(null)), "null");
    }
}
