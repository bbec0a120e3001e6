//! The browser's live link to a conversation: an `EventSource` on
//! `/api/conversations/{id}/events?after=N` that hands every event to a callback. The browser
//! reconnects by itself (sending `Last-Event-ID`); if it gives up, this reconnects after a pause.

use crate::domain::ConversationId;
use leptos::prelude::*;

/// What the page shows about the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkState {
    Connecting,
    Live,
    Reconnecting,
}

#[cfg(feature = "hydrate")]
mod imp {
    use std::{
        cell::{Cell, RefCell},
        rc::Rc,
        time::Duration,
    };

    use leptos::prelude::*;
    use wasm_bindgen::{JsCast, closure::Closure};
    use web_sys::{EventSource, MessageEvent};

    use super::LinkState;
    use crate::domain::{ConversationId, Event, wire::AssistantDelta};

    struct Connection {
        source: EventSource,
        _listeners: Vec<Closure<dyn FnMut(web_sys::Event)>>,
    }

    struct Inner {
        conversation_id: ConversationId,
        last_seq: Cell<i64>,
        stopped: Cell<bool>,
        connection: RefCell<Option<Connection>>,
        on_event: Box<dyn Fn(Event)>,
        on_delta: Box<dyn Fn(AssistantDelta)>,
        on_state: Box<dyn Fn(LinkState)>,
    }

    /// Open while alive; dropping it closes the stream.
    pub struct Subscription(Rc<Inner>);

    impl Drop for Subscription {
        fn drop(&mut self) {
            self.0.stopped.set(true);
            if let Some(connection) = self.0.connection.borrow_mut().take() {
                connection.source.close();
            }
        }
    }

    pub fn subscribe(
        conversation_id: ConversationId,
        after: i64,
        on_event: impl Fn(Event) + 'static,
        on_delta: impl Fn(AssistantDelta) + 'static,
        on_state: impl Fn(LinkState) + 'static,
    ) -> Subscription {
        let inner = Rc::new(Inner {
            conversation_id,
            last_seq: Cell::new(after),
            stopped: Cell::new(false),
            connection: RefCell::new(None),
            on_event: Box::new(on_event),
            on_delta: Box::new(on_delta),
            on_state: Box::new(on_state),
        });
        connect(&inner);
        Subscription(inner)
    }

    fn connect(inner: &Rc<Inner>) {
        let url = crate::api::conversation_events_url(&inner.conversation_id, inner.last_seq.get());
        let Ok(source) = EventSource::new(&url) else {
            (inner.on_state)(LinkState::Reconnecting);
            return;
        };
        let mut listeners = Vec::new();
        for name in crate::domain::EventBody::NAMES {
            let weak = Rc::downgrade(inner);
            let listener = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
                let Some(inner) = weak.upgrade() else { return };
                let Some(data) = e.dyn_ref::<MessageEvent>().and_then(|m| m.data().as_string()) else { return };
                match serde_json::from_str::<Event>(&data) {
                    Ok(event) => {
                        inner.last_seq.set(inner.last_seq.get().max(event.seq));
                        (inner.on_event)(event);
                    }
                    Err(err) => leptos::logging::error!("unreadable event: {err}"),
                }
            });
            let _ = source.add_event_listener_with_callback(name, listener.as_ref().unchecked_ref());
            listeners.push(listener);
        }
        // Unstored reply pieces: no id, so they never move the resume point.
        let weak = Rc::downgrade(inner);
        let on_delta = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
            let Some(inner) = weak.upgrade() else { return };
            let Some(data) = e.dyn_ref::<MessageEvent>().and_then(|m| m.data().as_string()) else { return };
            if let Ok(delta) = serde_json::from_str::<AssistantDelta>(&data) {
                (inner.on_delta)(delta);
            }
        });
        let _ = source.add_event_listener_with_callback("assistant-delta", on_delta.as_ref().unchecked_ref());
        listeners.push(on_delta);
        let weak = Rc::downgrade(inner);
        let on_open = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
            if let Some(inner) = weak.upgrade() {
                (inner.on_state)(LinkState::Live);
            }
        });
        let _ = source.add_event_listener_with_callback("open", on_open.as_ref().unchecked_ref());
        listeners.push(on_open);
        let weak = Rc::downgrade(inner);
        let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
            let Some(inner) = weak.upgrade() else { return };
            (inner.on_state)(LinkState::Reconnecting);
            let closed = inner.connection.borrow().as_ref().is_some_and(|c| c.source.ready_state() == EventSource::CLOSED);
            if closed && !inner.stopped.get() {
                // The browser gave up (an error status); try again from the last event seen,
                // unless the session is gone: retrying cannot help, the page says so instead
                // (the 401 marks it, crate::session).
                let weak = Rc::downgrade(&inner);
                leptos::task::spawn_local(async move {
                    if crate::api::me().await.is_err_and(|e| e.status == 401) {
                        return;
                    }
                    set_timeout(
                        move || {
                            if let Some(inner) = weak.upgrade().filter(|i| !i.stopped.get()) {
                                connect(&inner);
                            }
                        },
                        Duration::from_secs(2),
                    );
                });
            }
        });
        let _ = source.add_event_listener_with_callback("error", on_error.as_ref().unchecked_ref());
        listeners.push(on_error);
        if let Some(old) = inner.connection.borrow_mut().replace(Connection { source, _listeners: listeners }) {
            old.source.close();
        }
    }
}

/// Keeps `view` folded with the conversation's live events while the calling component lives,
/// and `link` telling whether the stream is up. Does nothing on the server.
pub fn follow(conversation_id: ConversationId, view: RwSignal<crate::domain::ConversationView>, link: RwSignal<LinkState>) {
    #[cfg(feature = "hydrate")]
    {
        let after = view.with_untracked(|v| v.last_seq);
        let subscription = imp::subscribe(
            conversation_id,
            after,
            move |event| view.update(|v| v.apply(&event)),
            move |delta| view.update(|v| v.apply_delta(&delta)),
            move |state| link.set(state),
        );
        let subscription = send_wrapper::SendWrapper::new(subscription);
        on_cleanup(move || drop(subscription));
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (conversation_id, view, link);
    }
}

/// Calls `on_change` whenever the approval queue changes (`/api/approvals/events`), while the
/// calling component lives. The browser reconnects by itself; a reconnect also calls `on_change`
/// so nothing decided meanwhile is missed. Does nothing on the server.
pub fn on_queue_change(on_change: impl Fn() + 'static) {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::{JsCast, closure::Closure};
        let Ok(source) = web_sys::EventSource::new(crate::api::QUEUE_EVENTS_URL) else { return };
        let on_change = std::rc::Rc::new(on_change);
        let mut listeners = Vec::new();
        let mut opened_once = false;
        for name in ["queue-changed", "open"] {
            let on_change = on_change.clone();
            let is_open = name == "open";
            let listener = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
                if is_open && !opened_once {
                    opened_once = true;
                    return;
                }
                on_change();
            });
            let _ = source.add_event_listener_with_callback(name, listener.as_ref().unchecked_ref());
            listeners.push(listener);
        }
        // Refused by the server (the browser does not retry then): a lost session is said on the
        // page (the 401 marks it, crate::session).
        let refused = source.clone();
        let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
            if refused.ready_state() == web_sys::EventSource::CLOSED {
                leptos::task::spawn_local(async {
                    let _ = crate::api::me().await;
                });
            }
        });
        let _ = source.add_event_listener_with_callback("error", on_error.as_ref().unchecked_ref());
        listeners.push(on_error);
        let held = send_wrapper::SendWrapper::new((source, listeners));
        on_cleanup(move || held.0.close());
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = on_change;
    }
}
