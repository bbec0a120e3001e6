use leptos::prelude::*;
use leptos_meta::Title;

use crate::api;

/// `/audit` (admins): does the hash chain verify, and the latest entries. Loaded in the browser.
#[component]
pub fn AuditPage() -> impl IntoView {
    let verification = LocalResource::new(api::audit_verification);
    let entries = LocalResource::new(|| api::audit_entries(200));
    view! {
        <Title text="Audit · Countersign" />
        <section class="audit card" id="content" tabindex="-1">
            <h1>"Audit trail"</h1>
            <p><a href="/api/audit/export" download="countersign-audit.jsonl">"Export as JSON Lines"</a></p>
            <Suspense fallback=|| view! { <p class="muted">"Checking the chain…"</p> }>
                {move || Suspend::new(async move {
                    match verification.await {
                        Ok(v) if v["ok"] == true => view! {
                            <p class="chain chain-ok" role="status">{format!("The chain verifies: {} entries, none changed.", v["entries"])}</p>
                        }.into_any(),
                        Ok(v) => view! {
                            <p class="chain chain-broken" role="alert">
                                {format!("The chain is broken at entry {}: {}", v["first_broken"], v["problem"].as_str().unwrap_or(""))}
                            </p>
                        }.into_any(),
                        Err(e) => view! { <p class="error" role="alert">{e.message}</p> }.into_any(),
                    }
                })}
            </Suspense>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    let rows = entries.await.map(|v| v["entries"].as_array().cloned().unwrap_or_default()).unwrap_or_default();
                    view! {
                        <div class="table-wrap">
                            <table class="audit-table">
                                <thead><tr><th>"#"</th><th>"When"</th><th>"Kind"</th><th>"Actor"</th><th>"Details"</th></tr></thead>
                                <tbody>
                                    {rows.into_iter().rev().map(|e| view! {
                                        <tr>
                                            <td>{e["id"].to_string()}</td>
                                            <td>{e["at"].as_str().unwrap_or("").to_owned()}</td>
                                            <td><code>{e["kind"].as_str().unwrap_or("").to_owned()}</code></td>
                                            <td>{e["actor"].as_str().unwrap_or("").to_owned()}</td>
                                            <td><pre class="json">{e["data"].to_string()}</pre></td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                        </div>
                    }
                })}
            </Suspense>
        </section>
    }
}
