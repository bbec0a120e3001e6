//! The Policy page's charts (app/src/pages/policy.rs): live (what was recorded) beside the draft,
//! drawn as plain SVG whose sizes are attributes (the CSP allows no inline style), each number
//! written beside its bar, and each chart a table or named image a screen reader reads.

use leptos::prelude::*;

use crate::domain::replay::DayStops;

/// One row of a [`BarTable`]: what it counts, live (as recorded) and under the draft, and how
/// each number reads.
#[derive(Clone, Debug, PartialEq)]
pub struct BarRow {
    pub label: String,
    pub live: u64,
    pub draft: u64,
    /// The numbers as the table writes them: `10`, `10 (0.3 a day)`.
    pub live_text: String,
    pub draft_text: String,
}

impl BarRow {
    /// A row whose numbers are written as they are.
    pub fn counts(label: impl Into<String>, live: u64, draft: u64) -> Self {
        Self { label: label.into(), live, draft, live_text: live.to_string(), draft_text: draft.to_string() }
    }
}

/// How long the bar of `value` is on a scale whose longest bar, `max`, is 100 long: a value above
/// zero is never drawn as nothing.
pub fn bar_length(value: u64, max: u64) -> f64 {
    if value == 0 || max == 0 {
        return 0.0;
    }
    (value as f64 * 100.0 / max as f64).max(1.0)
}

/// A number for an SVG attribute: two decimals at most.
fn svg_number(n: f64) -> String {
    let text = format!("{n:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// A table whose rows each have a label, the live and the draft numbers, and the two as bars.
#[component]
pub fn BarTable(
    /// Says what the chart counts (the table's caption).
    #[prop(into)]
    caption: String,
    /// The first column's heading: what a row is (gate, person…).
    header: &'static str,
    rows: Vec<BarRow>,
) -> impl IntoView {
    let max = rows.iter().map(|r| r.live.max(r.draft)).max().unwrap_or(0);
    view! {
        <div class="table-wrap">
            <table class="bar-chart">
                <caption>{caption}</caption>
                <thead>
                    <tr>
                        <th scope="col">{header}</th>
                        <th scope="col" class="num">"Live"</th>
                        <th scope="col" class="num">"Draft"</th>
                        <th scope="col" class="bars"><span class="visually-hidden">"As bars"</span></th>
                    </tr>
                </thead>
                <tbody>
                    {rows
                        .into_iter()
                        .map(|row| {
                            let live = svg_number(bar_length(row.live, max));
                            let draft = svg_number(bar_length(row.draft, max));
                            view! {
                                <tr>
                                    <th scope="row">{row.label}</th>
                                    <td class="num">{row.live_text}</td>
                                    <td class="num">{row.draft_text}</td>
                                    <td class="bars">
                                        <svg viewBox="0 0 100 12" preserveAspectRatio="none" aria-hidden="true" focusable="false">
                                            <rect class="bar-live" x="0" y="0.5" width=live height="5" />
                                            <rect class="bar-draft" x="0" y="6.5" width=draft height="5" />
                                        </svg>
                                    </td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// Each day's two columns, live then draft, as `(x, height)` on a plot 100 high and 10 wide per
/// day.
pub fn day_columns(days: &[DayStops]) -> Vec<[(f64, f64); 2]> {
    let max = days.iter().map(|d| d.recorded.max(d.draft)).max().unwrap_or(0);
    days.iter()
        .enumerate()
        .map(|(i, d)| {
            let x = i as f64 * 10.0;
            [(x + 1.0, bar_length(d.recorded, max)), (x + 5.0, bar_length(d.draft, max))]
        })
        .collect()
}

/// What the day chart says to a screen reader: the totals and each side's busiest day.
pub fn day_summary(days: &[DayStops]) -> String {
    let (Some(first), Some(last)) = (days.first(), days.last()) else { return "No days in the window.".to_owned() };
    let side = |name: &str, count: fn(&DayStops) -> u64| {
        let total: u64 = days.iter().map(count).sum();
        match days.iter().filter(|d| count(d) > 0).max_by_key(|d| (count(d), std::cmp::Reverse(d.day.clone()))) {
            Some(busiest) => format!("{name} {total} in all, at most {} on {}", count(busiest), busiest.day),
            None => format!("{name} none"),
        }
    };
    format!(
        "Calls asked about per day from {} to {}: {}; {}.",
        first.day,
        last.day,
        side("live", |d| d.recorded),
        side("under the draft", |d| d.draft)
    )
}

/// Stops per day: a column pair per day of the window, its summary as the image's name, and the
/// days that had any in a table beneath.
#[component]
pub fn DayChart(days: Vec<DayStops>) -> impl IntoView {
    let max = days.iter().map(|d| d.recorded.max(d.draft)).max().unwrap_or(0);
    let columns = day_columns(&days);
    let width = (days.len().max(1) * 10).to_string();
    let (first, last) = (days.first().map(|d| d.day.clone()).unwrap_or_default(), days.last().map(|d| d.day.clone()).unwrap_or_default());
    let busy: Vec<DayStops> = days.iter().filter(|d| d.recorded + d.draft > 0).cloned().collect();
    view! {
        <figure class="day-chart">
            <figcaption>"Stops per day (UTC): calls a human was asked about, live and under the draft"</figcaption>
            <div class="day-plot">
                <span class="axis-max" aria-hidden="true">{max}</span>
                <svg viewBox=format!("0 0 {width} 100") preserveAspectRatio="none" role="img" aria-label=day_summary(&days)>
                    {columns
                        .into_iter()
                        .map(|[(x_live, live), (x_draft, draft)]| {
                            view! {
                                <rect class="bar-live" x=svg_number(x_live) y=svg_number(100.0 - live) width="4" height=svg_number(live) />
                                <rect class="bar-draft" x=svg_number(x_draft) y=svg_number(100.0 - draft) width="4" height=svg_number(draft) />
                            }
                        })
                        .collect_view()}
                </svg>
            </div>
            <p class="axis-days" aria-hidden="true"><span>{first}</span><span>{last}</span></p>
            <details class="day-numbers">
                <summary>"The numbers by day"</summary>
                {if busy.is_empty() {
                    view! { <p class="muted">"No call was asked about on any day, live or under the draft."</p> }.into_any()
                } else {
                    view! {
                        <table>
                            <caption>"Days with calls asked about (the others had none)"</caption>
                            <thead>
                                <tr><th scope="col">"Day"</th><th scope="col" class="num">"Live"</th><th scope="col" class="num">"Draft"</th></tr>
                            </thead>
                            <tbody>
                                {busy
                                    .into_iter()
                                    .map(|d| view! { <tr><th scope="row">{d.day}</th><td class="num">{d.recorded}</td><td class="num">{d.draft}</td></tr> })
                                    .collect_view()}
                            </tbody>
                        </table>
                    }.into_any()
                }}
            </details>
        </figure>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(day: &str, recorded: u64, draft: u64) -> DayStops {
        DayStops { day: day.to_owned(), recorded, draft }
    }

    #[test]
    fn bars_are_scaled_to_the_longest_and_a_small_one_still_shows() {
        assert_eq!(bar_length(5, 10), 50.0);
        assert_eq!(bar_length(10, 10), 100.0);
        assert_eq!(bar_length(1, 1000), 1.0, "a thousandth is drawn, thin");
        assert_eq!((bar_length(0, 10), bar_length(0, 0)), (0.0, 0.0));
        assert_eq!((svg_number(50.0), svg_number(33.333), svg_number(0.5)), ("50".to_owned(), "33.33".to_owned(), "0.5".to_owned()));
    }

    #[test]
    fn each_day_has_its_two_columns_side_by_side() {
        let days = [day("2026-12-01", 2, 4), day("2026-12-02", 0, 1)];
        assert_eq!(day_columns(&days), [[(1.0, 50.0), (5.0, 100.0)], [(11.0, 0.0), (15.0, 25.0)]]);
    }

    #[test]
    fn the_day_chart_says_its_totals_and_busiest_days() {
        let days = [day("2026-12-01", 2, 4), day("2026-12-02", 3, 4), day("2026-12-03", 0, 0)];
        assert_eq!(
            day_summary(&days),
            "Calls asked about per day from 2026-12-01 to 2026-12-03: live 5 in all, at most 3 on 2026-12-02; \
             under the draft 8 in all, at most 4 on 2026-12-01."
        );
        let quiet = [day("2026-12-01", 0, 0)];
        assert_eq!(day_summary(&quiet), "Calls asked about per day from 2026-12-01 to 2026-12-01: live none; under the draft none.");
    }
}
