//! "Away?": let someone decide in your place for a while (a delegation, audited), and see and end
//! the delegations you gave or received. On the approval queue page; the rule is the server's
//! (engine/src/people/delegations.rs).

use leptos::prelude::*;

use super::alert::ErrorLine;
use crate::{
    api::{self, in_background},
    client::ApiFailure,
    domain::wire::{Delegation, NewDelegation},
    time::{format_rfc3339_ms, now_ms},
};

/// How long a delegation made here lasts: (label, days).
const PERIODS: [(&str, i64); 4] = [("1 day", 1), ("3 days", 3), ("1 week", 7), ("2 weeks", 14)];

/// "bob decides in your place until 2026-11-27 09:00 UTC" / "you decide in place of carol …".
pub fn delegation_line(d: &Delegation, me: &str) -> String {
    let until = d.ends_at.get(..16).map(|t| format!("{} UTC", t.replace('T', " "))).unwrap_or_else(|| d.ends_at.clone());
    if d.from.eq_ignore_ascii_case(me) {
        format!("{} decides in your place until {until}", d.to)
    } else if d.to.eq_ignore_ascii_case(me) {
        format!("You decide in place of {} until {until}", d.from)
    } else {
        format!("{} decides in place of {} until {until}", d.to, d.from)
    }
}

/// Loaded in the browser once the page is live (nothing of it is server-rendered, so the page
/// hydrates the same either way), and again after each change.
#[component]
pub fn DelegationPanel() -> impl IntoView {
    let version = RwSignal::new(0u32);
    let listed = RwSignal::new(Vec::<String>::new());
    let ids = RwSignal::new(Vec::<String>::new());
    let busy = super::hydration_marker::busy_until_hydrated();
    let error = RwSignal::new(None::<ApiFailure>);
    Effect::new(move |_| {
        version.track();
        leptos::task::spawn_local(async move {
            let (Ok(me), Ok(all)) = (api::me().await, api::delegations().await) else { return };
            let active: Vec<Delegation> = all.into_iter().filter(|d| d.active).collect();
            listed.set(active.iter().map(|d| delegation_line(d, &me.username)).collect());
            ids.set(active.into_iter().map(|d| d.id).collect());
        });
    });
    let (to, days) = (RwSignal::new(String::new()), RwSignal::new(7i64));
    let create = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let new = NewDelegation {
            to: to.get_untracked().trim().to_owned(),
            ends_at: format_rfc3339_ms(now_ms() + days.get_untracked() * 86_400_000),
            ..Default::default()
        };
        in_background(busy, error, async move {
            let made = api::delegate(&new).await?;
            to.set(String::new());
            version.update(|v| *v += 1);
            Ok(made)
        });
    };
    let end = move |id: String| {
        in_background(busy, error, async move {
            let ended = api::end_delegation(&id).await?;
            version.update(|v| *v += 1);
            Ok(ended)
        });
    };
    view! {
        <details class="away">
            <summary>"Away? Let someone decide in your place"</summary>
            <p class="muted">"While you are away they may decide what is asked of you (a gate's approvers, an escalation to you). The audit trail records each decision made in your place."</p>
            <ul class="delegations">
                {move || listed.get().into_iter().zip(ids.get()).map(|(line, id)| view! {
                    <li class="delegation">
                        {line} " "
                        <button type="button" class="btn" disabled=move || busy.get() on:click=move |_| end(id.clone())>"End now"</button>
                    </li>
                }).collect_view()}
            </ul>
            <form class="new-delegation" on:submit=create>
                <label>"Who decides for you" <input type="text" name="to" required placeholder="user name" prop:value=to on:input=move |ev| to.set(event_target_value(&ev)) /></label>
                <label>"How long"
                    <select name="days" on:change=move |ev| days.set(event_target_value(&ev).parse().unwrap_or(7))>
                        {PERIODS.iter().map(|(label, n)| view! { <option value=n.to_string() selected=*n == 7>{*label}</option> }).collect_view()}
                    </select>
                </label>
                <button type="submit" class="btn" disabled=move || busy.get()>"Delegate"</button>
            </form>
            {move || error.get().map(|e| view! { <ErrorLine text=e.message /> })}
        </details>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delegation_reads_from_where_you_stand() {
        let d = Delegation {
            id: "d".into(),
            from: "bob".into(),
            to: "alice".into(),
            starts_at: "2026-11-25T09:00:00.000Z".into(),
            ends_at: "2026-11-27T09:00:00.000Z".into(),
            created_by: "bob".into(),
            revoked_at: None,
            revoked_by: None,
            active: true,
        };
        assert_eq!(delegation_line(&d, "bob"), "alice decides in your place until 2026-11-27 09:00 UTC");
        assert_eq!(delegation_line(&d, "alice"), "You decide in place of bob until 2026-11-27 09:00 UTC");
        assert_eq!(delegation_line(&d, "root"), "alice decides in place of bob until 2026-11-27 09:00 UTC");
    }
}
