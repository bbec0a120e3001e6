//! `/groups` (admins): the groups a gate's `approvers = ["group:<name>"]` can name — those of the
//! configuration file (read-only here) and those made on this page, whose members can be changed
//! or which can be deleted. Every change goes through `/api/groups` (audited, docs/api.md).

use leptos::prelude::*;
use leptos_meta::Title;

use crate::{
    api::{self, in_background},
    client::ApiFailure,
    components::alert::{AdminsOnly, ErrorLine},
    data::me_loader,
    domain::{
        Role,
        wire::{Group, GroupMembers, NewGroup},
    },
};

/// "bob, Dora ,, erin" → ["bob", "Dora", "erin"].
pub fn names_of(text: &str) -> Vec<String> {
    text.split([',', ' ', '\n']).map(str::trim).filter(|n| !n.is_empty()).map(str::to_owned).collect()
}

/// The page: the groups and their forms for an admin; for someone else only that it is for admins
/// (no forms, nothing asked of the server).
#[component]
pub fn GroupsPage() -> impl IntoView {
    let load_me = me_loader();
    let me = Resource::new(|| (), move |_| load_me());
    view! {
        <Title text="Groups · Countersign" />
        <section class="groups card" id="content" tabindex="-1">
            <h1>"Groups of approvers"</h1>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    match me.await {
                        Ok(Some(me)) if me.role == Role::Admin => view! { <GroupsAdmin /> }.into_any(),
                        Ok(_) => view! { <AdminsOnly text="Only admins may see and change the groups of approvers." /> }.into_any(),
                        Err(e) => view! { <ErrorLine text=e /> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
}

/// What an admin sees: the groups, and the form that makes one.
#[component]
fn GroupsAdmin() -> impl IntoView {
    // Bumped after every change: the list is read again.
    let version = RwSignal::new(0u32);
    let groups = LocalResource::new(move || {
        version.track();
        api::groups()
    });
    let (name, members) = (RwSignal::new(String::new()), RwSignal::new(String::new()));
    let busy = crate::components::hydration_marker::busy_until_hydrated();
    let error = RwSignal::new(None::<ApiFailure>);
    let create = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let group = NewGroup { name: name.get_untracked().trim().to_owned(), members: names_of(&members.get_untracked()) };
        in_background(busy, error, async move {
            let created = api::create_group(&group).await?;
            name.set(String::new());
            members.set(String::new());
            version.update(|v| *v += 1);
            Ok(created)
        });
    };
    view! {
        <p class="muted">
            "A gate with " <code>"approvers = [\"group:finance\"]"</code>
            " lets only that group's members decide its calls; an escalation can name a group too. "
            "Changing a group moves the approvals still waiting for it to its new members. Every change is in the audit trail."
        </p>
        // Read directly, not under a <Suspense>: this part sits inside the page's own suspense
        // (whether the viewer is an admin), and the fallback is what the server renders.
        {move || match groups.get() {
            None => view! { <p class="muted">"Loading groups…"</p> }.into_any(),
            Some(Ok(list)) if list.is_empty() => view! { <p class="muted">"No groups yet."</p> }.into_any(),
            Some(Ok(list)) => view! {
                <ul class="group-list">
                    {list.into_iter().map(|group| view! { <GroupRow group version /> }).collect_view()}
                </ul>
            }.into_any(),
            Some(Err(e)) => view! { <ErrorLine text=e.message /> }.into_any(),
        }}
        <form class="new-group" on:submit=create>
            <h2>"New group"</h2>
            <label>"Name" <input type="text" name="name" required placeholder="finance" prop:value=name on:input=move |ev| name.set(event_target_value(&ev)) /></label>
            <label>"Members" <input type="text" name="members" placeholder="user names, separated by commas" prop:value=members on:input=move |ev| members.set(event_target_value(&ev)) /></label>
            <button type="submit" class="btn" disabled=move || busy.get()>"Create group"</button>
            {move || error.get().map(|e| view! { <ErrorLine text=e.message /> })}
        </form>
    }
}

/// One group: its members, and for a group made here a field to change them and a Delete button.
#[component]
fn GroupRow(group: Group, version: RwSignal<u32>) -> impl IntoView {
    let members = RwSignal::new(group.members.join(", "));
    let busy = RwSignal::new(false);
    let error = RwSignal::new(None::<ApiFailure>);
    let name = group.name.clone();
    let save = {
        let name = name.clone();
        move |ev: leptos::ev::SubmitEvent| {
            ev.prevent_default();
            let (name, body) = (name.clone(), GroupMembers { members: names_of(&members.get_untracked()) });
            in_background(busy, error, async move {
                let group = api::set_group_members(&name, &body).await?;
                version.update(|v| *v += 1);
                Ok(group)
            });
        }
    };
    let delete = {
        let name = name.clone();
        move |_| {
            let name = name.clone();
            in_background(busy, error, async move {
                api::delete_group(&name).await?;
                version.update(|v| *v += 1);
                Ok(())
            });
        }
    };
    let listed = if group.members.is_empty() { "no members".to_owned() } else { group.members.join(", ") };
    view! {
        <li class="group" data-group=name.clone()>
            <h3><code>{format!("group:{name}")}</code></h3>
            {if group.from_config {
                view! { <p class="members">{listed}</p><p class="muted">"From the configuration file: change it there."</p> }.into_any()
            } else if group.from_idp {
                view! {
                    <p class="members">{listed}</p>
                    <p class="muted">"From the identity provider: change it there. Members show here from their next sign-in."</p>
                }.into_any()
            } else {
                view! {
                    <form class="group-members" on:submit=save>
                        <label>"Members" <input type="text" prop:value=members on:input=move |ev| members.set(event_target_value(&ev)) /></label>
                        <button type="submit" class="btn" disabled=move || busy.get()>"Save members"</button>
                        <button type="button" class="btn btn-reject" disabled=move || busy.get() on:click=delete>"Delete group"</button>
                    </form>
                }.into_any()
            }}
            {move || error.get().map(|e| view! { <ErrorLine text=e.message /> })}
        </li>
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn members_are_typed_as_a_list_of_names() {
        assert_eq!(super::names_of("bob, Dora ,, erin"), ["bob", "Dora", "erin"]);
        assert!(super::names_of("  ").is_empty());
    }
}
