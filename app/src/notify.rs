//! Desktop notifications (opt-in): with them on, an approval that arrives for you while this tab
//! is in the background shows a notification (the Notification API); clicking it opens the queue.
//! The choice is kept in this browser (localStorage); the browser asks for permission once.

use leptos::prelude::*;

/// What the toggle shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notifying {
    /// This browser has no Notification API (or the page is not yet live).
    Unsupported,
    Off,
    On,
    /// The browser (or the person) refused permission: only the browser's settings can change it.
    Blocked,
}

/// The key of the choice in localStorage.
pub const STORAGE_KEY: &str = "countersign.notifications";

/// The top bar's "Notify me" toggle; while on, listens to the queue's changes.
#[component]
pub fn NotifyToggle() -> impl IntoView {
    let state = RwSignal::new(Notifying::Unsupported);
    // Only in the browser, after hydration: the server renders nothing here.
    Effect::new(move |_| state.set(imp::initial()));
    Effect::new(move |_| {
        if state.get() == Notifying::On {
            imp::listen();
        }
    });
    let click = move |_| match state.get_untracked() {
        Notifying::On => {
            imp::remember(false);
            state.set(Notifying::Off);
        }
        Notifying::Off => imp::ask(move |granted| {
            imp::remember(granted);
            state.set(if granted { Notifying::On } else { Notifying::Blocked });
        }),
        Notifying::Blocked | Notifying::Unsupported => {}
    };
    move || {
        match state.get() {
        Notifying::Unsupported => None,
        Notifying::Off => Some(view! { <button class="btn btn-small notify-toggle" on:click=click title="Show a desktop notification when an approval arrives for you while this tab is in the background">"Notify me"</button> }.into_any()),
        Notifying::On => Some(view! { <button class="btn btn-small notify-toggle" aria-pressed="true" on:click=click title="Click to stop desktop notifications">"Notifications on"</button> }.into_any()),
        Notifying::Blocked => Some(view! { <span class="muted notify-toggle" title="Allow notifications for this site in the browser's settings">"Notifications blocked"</span> }.into_any()),
    }
    }
}

#[cfg(feature = "hydrate")]
mod imp {
    use std::{cell::RefCell, collections::HashSet, rc::Rc};

    use leptos::prelude::*;
    use wasm_bindgen::{JsCast, closure::Closure};
    use web_sys::{Notification, NotificationOptions, NotificationPermission};

    use super::{Notifying, STORAGE_KEY};
    use crate::domain::ApprovalState;

    fn supported() -> bool {
        js_sys::Reflect::has(&window(), &"Notification".into()).unwrap_or(false)
    }

    fn chosen() -> bool {
        window().local_storage().ok().flatten().and_then(|s| s.get_item(STORAGE_KEY).ok().flatten()).as_deref() == Some("on")
    }

    pub fn remember(on: bool) {
        if let Some(storage) = window().local_storage().ok().flatten() {
            let _ = storage.set_item(STORAGE_KEY, if on { "on" } else { "off" });
        }
    }

    pub fn initial() -> Notifying {
        if !supported() {
            return Notifying::Unsupported;
        }
        match Notification::permission() {
            NotificationPermission::Denied => Notifying::Blocked,
            NotificationPermission::Granted if chosen() => Notifying::On,
            _ => Notifying::Off,
        }
    }

    /// Asks the browser for permission (once per site); `then(granted)`.
    pub fn ask(then: impl Fn(bool) + 'static) {
        let callback = Closure::<dyn FnMut(String)>::new(move |answer: String| then(answer == "granted"));
        let _ = Notification::request_permission_with_permission_callback(callback.as_ref().unchecked_ref());
        callback.forget();
    }

    /// Listens to the queue's changes while the calling component lives; a new pending approval
    /// that arrives while the tab is hidden is shown once.
    pub fn listen() {
        let Ok(source) = web_sys::EventSource::new(crate::api::QUEUE_EVENTS_URL) else { return };
        let shown: Rc<RefCell<HashSet<String>>> = Rc::default();
        let listener = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
            let hidden = document().hidden();
            let data = event.data().as_string().unwrap_or_default();
            let Some(id) = serde_json::from_str::<serde_json::Value>(&data).ok().and_then(|v| v["approval_id"].as_str().map(str::to_owned))
            else {
                return;
            };
            if !hidden || !shown.borrow_mut().insert(id.clone()) {
                return;
            }
            leptos::task::spawn_local(async move {
                let Ok(approval) = crate::api::approval(&id.clone().into()).await else { return };
                if approval.state == ApprovalState::Pending {
                    show(&approval.summary, &id);
                }
            });
        });
        let _ = source.add_event_listener_with_callback("queue-changed", listener.as_ref().unchecked_ref());
        let held = send_wrapper::SendWrapper::new((source, listener));
        on_cleanup(move || held.0.close());
    }

    fn show(summary: &str, approval_id: &str) {
        let options = NotificationOptions::new();
        options.set_body(summary);
        options.set_tag(approval_id);
        let Ok(notification) = Notification::new_with_options("Approval needed", &options) else { return };
        let open = Closure::<dyn FnMut()>::new(move || {
            let _ = window().focus();
            let _ = window().location().set_href("/approvals");
        });
        notification.set_onclick(Some(open.as_ref().unchecked_ref()));
        open.forget();
    }
}

#[cfg(not(feature = "hydrate"))]
mod imp {
    use super::Notifying;

    pub fn initial() -> Notifying {
        Notifying::Unsupported
    }
    pub fn remember(_: bool) {}
    pub fn ask(_: impl Fn(bool) + 'static) {}
    pub fn listen() {}
}
