//! What the Policy page draws itself of a replay (app/src/pages/policy.rs), beside the report the
//! server renders (app/src/components/replay_report.rs): the tables' frame and the times.

use leptos::prelude::*;

/// The results' heading: it takes keyboard focus when they arrive.
pub const RESULTS_HEADING: &str = "replay-results";

/// "2026-12-03 14:05" from an RFC 3339 time (UTC).
pub fn minute(rfc3339: &str) -> String {
    rfc3339.get(..16).unwrap_or(rfc3339).replace('T', " ")
}

/// A table of the report: its caption, its column headings and its rows (`children`), in a
/// wrapper that scrolls it sideways on a narrow screen. `class`: one more class for the table.
#[component]
pub fn ReplayTable(
    #[prop(into)] caption: String,
    headers: &'static [&'static str],
    #[prop(optional)] class: Option<&'static str>,
    children: Children,
) -> impl IntoView {
    let class = class.map_or_else(|| "replay-table".to_owned(), |c| format!("replay-table {c}"));
    view! {
        <div class="table-wrap">
            <table class=class>
                <caption>{caption}</caption>
                <thead>
                    <tr>{headers.iter().map(|h| view! { <th scope="col">{*h}</th> }).collect_view()}</tr>
                </thead>
                <tbody>{children()}</tbody>
            </table>
        </div>
    }
}
