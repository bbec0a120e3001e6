//! A replay's report on the Policy page (app/src/pages/policy.rs): the summary's numbers, the
//! charts (stops per gate, per day, the deciders' load), the calls that show each change — each
//! linked to its chat —, the grants that would end, the draft's warnings and the notes. The server
//! renders it ([`replay_report_html`]) when the page asks `POST /api/policy/replay` for HTML, and
//! the page puts that in place: it is plain HTML and SVG with no handler, so the browser's bundle
//! carries neither these views nor the report's decoder (docs/performance-notes.md, "The bundle").

use std::collections::BTreeMap;

use leptos::prelude::*;

use super::{
    replay_charts::{BarRow, BarTable, DayChart},
    replay_table::{RESULTS_HEADING, ReplayTable, minute},
};
use crate::domain::replay::{DeciderLoad, EndedGrant, Example, GateStops, Rate, Report, RuleErrors};

/// "1 call", "12 calls".
pub fn calls(n: u64) -> String {
    if n == 1 { "1 call".to_owned() } else { format!("{n} calls") }
}

/// "lookups 12 · refunds 3", most first.
pub fn counts(map: &BTreeMap<String, u64>) -> String {
    let mut pairs: Vec<(&String, &u64)> = map.iter().collect();
    pairs.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    pairs.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(" · ")
}

/// The gates chart's rows: the draft's gates in its file's order (what each asked about then,
/// what it would stop), then the gates that asked then and are not in the draft.
pub fn gate_rows(gates: &[GateStops], recorded_by_gate: &BTreeMap<String, u64>) -> Vec<BarRow> {
    let recorded = |name: &str| recorded_by_gate.get(name).copied().unwrap_or(0);
    let drafted = gates.iter().map(|g| {
        let label = if g.mode == "shadow" { format!("{} (shadow: records only)", g.gate) } else { g.gate.clone() };
        BarRow::counts(label, recorded(&g.gate), g.calls)
    });
    let gone = recorded_by_gate
        .iter()
        .filter(|(name, _)| !gates.iter().any(|g| g.gate == **name))
        .map(|(name, n)| BarRow::counts(format!("{name} (not in the draft)"), *n, 0));
    drafted.chain(gone).collect()
}

/// Who a row of the load is, as a person reads it.
fn who(load: &DeciderLoad) -> String {
    match load.kind.as_str() {
        "group" => format!("{} (group)", load.who),
        "admins" => "the admins".to_owned(),
        "anyone" => "anyone (no approvers named)".to_owned(),
        _ => load.who.clone(),
    }
}

/// "10 (0.3 a day)".
fn rate(rate: &Rate) -> String {
    format!("{} ({:.1} a day)", rate.approvals, rate.per_day)
}

/// "2026-12-03 09:00 UTC (10)", or "none".
fn busiest(rate: &Rate) -> String {
    rate.busiest_hour.as_ref().map_or("none".to_owned(), |h| format!("{} UTC ({})", minute(&h.starts), h.approvals))
}

/// The report, whole, as the HTML the Policy page puts in place. It is never hydrated, so the
/// `<!>` markers the server's renderer leaves for hydration go (text it writes has its `<`
/// escaped, so none of them is the report's own).
pub fn replay_report_html(report: Report) -> String {
    Owner::new().with(|| view! { <ReplayReport report /> }.to_html()).replace("<!>", "")
}

/// The report, whole.
#[component]
pub fn ReplayReport(report: Report) -> impl IntoView {
    let Report {
        window,
        live_version,
        draft_version,
        summary: s,
        per_day,
        gates,
        rule_errors,
        recorded_by_gate,
        new_friction,
        new_risk,
        load,
        grants_ended,
        no_longer_possible,
        not_replayed,
        notes,
        warnings,
    } = report;
    let whose = window.agent.as_ref().map_or("for every agent".to_owned(), |a| format!("for agent {a}"));
    let scope = format!(
        "{} recorded {whose} from {} to {} UTC ({} days); the draft {draft_version} against the live configuration {live_version}.",
        calls(s.calls),
        minute(&window.since),
        minute(&window.until),
        window.days
    );
    let replayed =
        (s.replayed < s.calls).then(|| format!("{} of them replayed; the others' tools are unknown here (see the notes).", s.replayed));
    // Each number with what it means; a change that costs (friction) or risks something stands out.
    let stats = [
        ("calls", "Calls recorded", s.calls, ""),
        ("asked_recorded", "Asked a human (live)", s.asked_recorded, ""),
        ("asked_draft", "Would ask a human (draft)", s.asked_draft, ""),
        ("new_friction", "New friction: ran unasked, would be asked", s.new_friction, "stat-warn"),
        ("now_unasked", "New risk: asked, would run unasked", s.now_unasked, "stat-bad"),
        ("deciders_change", "New risk: asked, other deciders", s.deciders_change, "stat-bad"),
        ("no_longer_possible", "No longer possible", s.no_longer_possible, "stat-warn"),
        ("grants_ended", "Grants that would end", s.grants_ended, "stat-warn"),
        ("rule_errors", "A gate's rule could not be evaluated", s.rule_errors, "stat-warn"),
    ];
    let load_rows: Vec<BarRow> = load
        .deciders
        .iter()
        .map(|l| BarRow {
            label: who(l),
            live: l.recorded.approvals,
            draft: l.draft.approvals,
            live_text: rate(&l.recorded),
            draft_text: rate(&l.draft),
        })
        .collect();
    let load_caption = format!(
        "Deciders' load: approvals asked of each person or group (live {} in all, draft {})",
        load.recorded.approvals, load.draft.approvals
    );
    let busiest_hours = format!("Busiest hour: live {}; under the draft {}.", busiest(&load.recorded), busiest(&load.draft));
    let friction_title = format!("New friction: ran without asking, would now be stopped ({})", calls(new_friction.calls));
    let friction_by = format!("By gate: {}. By tool: {}.", counts(&new_friction.by_requirement), counts(&new_friction.by_tool));
    let unasked = new_risk.unasked;
    let unasked_title = format!("New risk: asked then, would now run unasked ({})", calls(unasked.calls));
    let unasked_by = format!("What happened to them: {}. By tool: {}.", counts(&unasked.by_outcome), counts(&unasked.by_tool));
    let deciders = new_risk.deciders;
    let deciders_title = format!("New risk: asked then, would have other deciders or other rules for them ({})", calls(deciders.calls));
    let deciders_by =
        deciders.changes.iter().map(|c| format!("{} → {} ({})", c.recorded, c.draft, c.calls)).collect::<Vec<_>>().join(" · ");
    view! {
        <section class="replay-results" aria-labelledby=RESULTS_HEADING>
            <h2 id=RESULTS_HEADING tabindex="-1">"What the draft would have changed"</h2>
            <p class="muted">{scope}</p>
            {replayed.map(|text| view! { <p class="muted">{text}</p> })}
            <dl class="replay-summary">
                {stats
                    .into_iter()
                    .map(|(key, label, n, tone)| {
                        let class = if n > 0 && !tone.is_empty() { format!("stat {tone}") } else { "stat".to_owned() };
                        view! { <div class=class data-stat=key><dt>{label}</dt><dd>{n}</dd></div> }
                    })
                    .collect_view()}
            </dl>
            <p class="chart-legend" aria-hidden="true">
                <span class="swatch swatch-live"></span>"Live (as recorded)"
                <span class="swatch swatch-draft"></span>"Draft"
            </p>
            <BarTable
                caption="Stops per gate: calls each gate asked about (live) and would stop (draft)"
                header="Gate"
                rows=gate_rows(&gates, &recorded_by_gate)
            />
            <UnevaluatedRules rules=rule_errors />
            <DayChart days=per_day />
            <BarTable caption=load_caption header="Who" rows=load_rows />
            <p class="muted">{busiest_hours}</p>
            <Examples title=friction_title by=(new_friction.calls > 0).then_some(friction_by) examples=new_friction.examples />
            <Examples title=unasked_title by=(unasked.calls > 0).then_some(unasked_by) examples=unasked.examples />
            <Examples title=deciders_title by=(deciders.calls > 0).then_some(deciders_by) examples=deciders.examples />
            <EndedGrants grants=grants_ended />
            <Remarks no_longer_possible not_replayed warnings notes />
        </section>
    }
}

/// One list of example calls (the newest few), each linked to its chat.
#[component]
fn Examples(title: String, by: Option<String>, examples: Vec<Example>) -> impl IntoView {
    view! {
        <section class="replay-examples">
            <h3>{title}</h3>
            {by.map(|text| view! { <p>{text}</p> })}
            {(!examples.is_empty()).then(|| view! {
                <ReplayTable caption=format!("The newest {}", examples.len()) headers=&["When (UTC)", "Agent", "Tool and arguments", "Then", "Under the draft", "Chat"]>
                    {examples.into_iter().map(|e| view! {
                        <tr data-call-id=e.call_id.clone()>
                            <td><time datetime=e.at.clone()>{minute(&e.at)}</time></td>
                            <td>{e.agent}</td>
                            <td><code>{format!("{} {}", e.tool, e.args)}</code></td>
                            <td>{e.recorded}</td>
                            <td>{e.draft}</td>
                            <td><a href=format!("/c/{}", e.conversation_id)>"Open the chat"</a></td>
                        </tr>
                    }).collect_view()}
                </ReplayTable>
            })}
        </section>
    }
}

/// The draft's gates whose rule could not be evaluated for some calls: how many, how many the
/// gate stopped all the same (fail-closed), the newest one's error and the call.
#[component]
fn UnevaluatedRules(rules: Vec<RuleErrors>) -> impl IntoView {
    let title = format!("Rules that could not be evaluated ({})", rules.len());
    let examples: Vec<Example> = rules.iter().map(|r| r.example.clone()).collect();
    let newest = "The newest call of each".to_owned();
    (!rules.is_empty()).then(move || {
        view! {
            <section class="replay-examples">
                <h3>{title}</h3>
                <p>"As at runtime, the gate stops such a call all the same (fail-closed), unless its agent is fail_open: then it runs."</p>
                <ReplayTable caption="Per gate: the calls its rule could not be evaluated for" headers=&["Gate", "Calls", "Stopped all the same", "Error (the newest call's)"]>
                    {rules.into_iter().map(|r| view! {
                        <tr>
                            <td>{r.gate}</td>
                            <td>{r.calls.to_string()}</td>
                            <td>{r.stopped.to_string()}</td>
                            <td><code>{r.error}</code></td>
                        </tr>
                    }).collect_view()}
                </ReplayTable>
                <Examples title=newest by=None examples />
            </section>
        }
    })
}

/// The standing grants the draft would end, each with why.
#[component]
fn EndedGrants(grants: Vec<EndedGrant>) -> impl IntoView {
    view! {
        <section class="replay-examples">
            <h3>{format!("Grants the draft would end: {}", grants.len())}</h3>
            {(!grants.is_empty()).then(|| view! {
                <ReplayTable caption="A grant covers calls only under the configuration version it was made under" headers=&["Tool", "Gate", "Given by", "Why it ends", "Chat"]>
                    {grants.into_iter().map(|g| view! {
                        <tr>
                            <td><code>{g.tool}</code></td>
                            <td>{g.gate}</td>
                            <td>{format!("{} ({} UTC)", g.created_by, minute(&g.created_at))}</td>
                            <td>{g.why}</td>
                            <td><a href=format!("/c/{}", g.conversation_id)>"Open the chat"</a></td>
                        </tr>
                    }).collect_view()}
                </ReplayTable>
            })}
        </section>
    }
}

/// What no longer works, what was left out, the draft's warnings and the notes.
#[component]
fn Remarks(
    no_longer_possible: BTreeMap<String, u64>,
    not_replayed: BTreeMap<String, u64>,
    warnings: Vec<String>,
    notes: Vec<String>,
) -> impl IntoView {
    view! {
        {(!no_longer_possible.is_empty()).then(|| view! {
            <p>{format!("No longer possible under the draft (the agent lacks the tool, or its schema refuses the arguments): {}.", counts(&no_longer_possible))}</p>
        })}
        {(!not_replayed.is_empty()).then(|| view! {
            <p>{format!("Left out, their tools unknown here (MCP tools): {}.", counts(&not_replayed))}</p>
        })}
        <section class="replay-examples">
            <h3>{format!("Warnings of the draft: {}", warnings.len())}</h3>
            {(!warnings.is_empty()).then(|| view! {
                <ul class="policy-warnings">{warnings.into_iter().map(|w| view! { <li>{w}</li> }).collect_view()}</ul>
            })}
        </section>
        <section class="replay-examples">
            <h3>"Notes"</h3>
            <ul class="replay-notes">{notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(name: &str, mode: &str, calls: u64) -> GateStops {
        GateStops {
            gate: name.to_owned(),
            mode: mode.to_owned(),
            calls,
            ran_unasked: 0,
            by_tool: BTreeMap::new(),
            by_agent: BTreeMap::new(),
        }
    }

    #[test]
    fn the_gates_chart_lists_the_drafts_gates_then_those_it_drops() {
        let gates = [gate("refunds", "enforce", 10), gate("lookups", "shadow", 12)];
        let recorded = BTreeMap::from([("refunds".to_owned(), 9), ("cancellations".to_owned(), 2)]);
        let rows: Vec<(String, u64, u64)> = gate_rows(&gates, &recorded).into_iter().map(|r| (r.label, r.live, r.draft)).collect();
        assert_eq!(
            rows,
            [
                ("refunds".to_owned(), 9, 10),
                ("lookups (shadow: records only)".to_owned(), 0, 12),
                ("cancellations (not in the draft)".to_owned(), 2, 0),
            ]
        );
    }

    #[test]
    fn counts_read_most_first() {
        let map = BTreeMap::from([("a".to_owned(), 1), ("b".to_owned(), 3), ("c".to_owned(), 1)]);
        assert_eq!(counts(&map), "b 3 · a 1 · c 1");
        assert_eq!(minute("2026-12-03T09:12:19.000Z"), "2026-12-03 09:12");
        assert_eq!((calls(1), calls(12)), ("1 call".to_owned(), "12 calls".to_owned()));
    }
}
