//! Where the reader's eyes and keyboard go: the first pending card when calls arrive or the
//! composer's "Waiting for your decision" is pressed, the composer in a new chat. Browser only;
//! on the server these do nothing. Room for the sticky composer comes from `scroll-margin` in
//! style/main.css, so a card or the last message is never scrolled under it.

/// A pending card this viewer can decide (its buttons are shown and it takes focus).
#[cfg(feature = "hydrate")]
const DECIDABLE_CARD: &str = ".tool-card[data-status='pending_approval'][tabindex='0']";

/// Scrolls the first decidable pending card into view and gives it keyboard focus, unless the
/// reader is busy in a field or a form elsewhere (`force`: they asked for it, always move).
pub fn first_pending_card(force: bool) {
    #[cfg(feature = "hydrate")]
    after_paint(move || {
        use leptos::wasm_bindgen::JsCast;
        let document = leptos::prelude::document();
        let Ok(Some(card)) = document.query_selector(DECIDABLE_CARD) else { return };
        let Ok(card) = card.dyn_into::<web_sys::HtmlElement>() else { return };
        scroll_nearest(&card);
        if force || focus_is_free(&document) {
            let options = web_sys::FocusOptions::new();
            options.set_prevent_scroll(true);
            let _ = card.focus_with_options(&options);
        }
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = force;
}

/// Scrolls the newest row of the thread into view, above the composer (on load and when a row
/// arrives); focus stays where it is.
pub fn latest_row() {
    #[cfg(feature = "hydrate")]
    after_paint(|| {
        let Ok(Some(last)) = leptos::prelude::document().query_selector(".thread > :last-child") else { return };
        let options = web_sys::ScrollIntoViewOptions::new();
        options.set_block(web_sys::ScrollLogicalPosition::End);
        last.scroll_into_view_with_scroll_into_view_options(&options);
    });
}

/// Gives the composer keyboard focus (a new, empty chat: the next thing to do is to write).
pub fn composer() {
    #[cfg(feature = "hydrate")]
    after_paint(|| {
        use leptos::wasm_bindgen::JsCast;
        let document = leptos::prelude::document();
        if let Some(input) = document.get_element_by_id("composer-input").and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()) {
            let _ = input.focus();
        }
    });
}

/// Gives the element `id` keyboard focus once this tick's changes are drawn: a replay's results
/// when they arrive, the draft's field when it was refused (app/src/pages/policy.rs).
pub fn by_id(id: &'static str) {
    #[cfg(feature = "hydrate")]
    after_paint(move || {
        if let Some(el) = html_element(&leptos::prelude::document(), &format!("#{id}")) {
            let _ = el.focus();
        }
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = id;
}

/// Gives the page's main content (`#content`) keyboard focus: the skip link's target.
pub fn content() {
    #[cfg(feature = "hydrate")]
    {
        use leptos::wasm_bindgen::JsCast;
        if let Some(el) = leptos::prelude::document().get_element_by_id("content").and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()) {
            let _ = el.focus();
        }
    }
}

/// After this reviewer's own decision on `call_id`: its card was drawn again, decided, and the
/// button or the card that had focus left the page with the old one (focus fell to the page, so
/// the next Tab would start over at "Skip to content"). The next call waiting for their decision
/// takes focus (the first after the decided card, else the first on the page); with none left,
/// the decided card keeps it. Focus the reviewer already put somewhere else stays there.
pub fn after_decision(call_id: String) {
    #[cfg(feature = "hydrate")]
    after_paint(move || {
        let document = leptos::prelude::document();
        if !focus_dropped(&document) {
            return;
        }
        let decided = card_selector(&call_id);
        let next = html_element(&document, &format!("{decided} ~ {DECIDABLE_CARD}"))
            .or_else(|| html_element(&document, DECIDABLE_CARD))
            .or_else(|| html_element(&document, &decided));
        if let Some(next) = next {
            scroll_nearest(&next);
            let options = web_sys::FocusOptions::new();
            options.set_prevent_scroll(true);
            let _ = next.focus_with_options(&options);
        }
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = call_id;
}

/// Whether keyboard focus is on one call's card or inside it (asked as the card is drawn again,
/// while the old one is still on the page).
pub fn is_in_card(call_id: &str) -> bool {
    #[cfg(feature = "hydrate")]
    if let Some(active) = leptos::prelude::document().active_element() {
        return active.closest(&card_selector(call_id)).ok().flatten().is_some();
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = call_id;
    false
}

/// Gives one call's card keyboard focus once it is drawn again, if focus had been in the old one
/// and fell to the page with it (a form that opens focuses its own field first: left alone).
pub fn card(call_id: String) {
    #[cfg(feature = "hydrate")]
    after_paint(move || {
        let document = leptos::prelude::document();
        if focus_dropped(&document)
            && let Some(card) = html_element(&document, &card_selector(&call_id))
        {
            let _ = card.focus();
        }
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = call_id;
}

/// Gives the first field of `form` keyboard focus once it is drawn (a form that just opened),
/// as [`opened_field`] does.
#[cfg(feature = "hydrate")]
pub fn first_field(form: web_sys::HtmlFormElement) {
    after_paint(move || {
        use leptos::wasm_bindgen::JsCast;
        if let Ok(Some(field)) = form.query_selector("input, textarea, select")
            && let Ok(field) = field.dyn_into::<web_sys::HtmlElement>()
        {
            opened_field(&field);
        }
    });
}

/// Where the keyboard was inside one queue row (its approval, the focused element's place among
/// the row's focusable elements, the caret), to put back when that row is drawn again.
pub struct RowFocus {
    #[cfg(feature = "hydrate")]
    approval_id: String,
    #[cfg(feature = "hydrate")]
    index: u32,
    #[cfg(feature = "hydrate")]
    caret: Option<(u32, u32)>,
}

/// What `RowFocus` counts: the elements of a row that take focus, in document order.
#[cfg(feature = "hydrate")]
const FOCUSABLE: &str = "button, input, textarea, select, [tabindex]";

/// Where the keyboard is, if inside a row of the queue (`.queue-item[data-approval-id]`).
pub fn remember_row_focus() -> Option<RowFocus> {
    #[cfg(feature = "hydrate")]
    {
        use leptos::wasm_bindgen::JsCast;
        let active = leptos::prelude::document().active_element()?;
        let row = active.closest(".queue-item[data-approval-id]").ok()??;
        let approval_id = row.get_attribute("data-approval-id")?;
        let all = row.query_selector_all(FOCUSABLE).ok()?;
        let index = (0..all.length()).find(|&i| all.item(i).is_some_and(|node| node.is_same_node(Some(&active))))?;
        let caret = if let Some(input) = active.dyn_ref::<web_sys::HtmlInputElement>() {
            input.selection_start().ok().flatten().zip(input.selection_end().ok().flatten())
        } else if let Some(text) = active.dyn_ref::<web_sys::HtmlTextAreaElement>() {
            text.selection_start().ok().flatten().zip(text.selection_end().ok().flatten())
        } else {
            None
        };
        Some(RowFocus { approval_id, index, caret })
    }
    #[cfg(not(feature = "hydrate"))]
    None
}

/// Puts the keyboard back where `remember_row_focus` found it, once the row is drawn again, if
/// focus fell to the page with the old row or stayed in the row (a form that opened again takes
/// it first: `opened_field`); focus the reader moved elsewhere is left alone.
pub fn restore_row_focus(place: Option<RowFocus>) {
    #[cfg(feature = "hydrate")]
    if let Some(place) = place {
        after_paint(move || {
            use leptos::wasm_bindgen::JsCast;
            let document = leptos::prelude::document();
            let quoted = place.approval_id.replace('\\', "\\\\").replace('"', "\\\"");
            let Ok(Some(row)) = document.query_selector(&format!(".queue-item[data-approval-id=\"{quoted}\"]")) else { return };
            // Fell to the page, or to a field of the same row that opened again: put back.
            let in_row = document.active_element().is_some_and(|active| row.contains(Some(active.as_ref())));
            if !focus_dropped(&document) && !in_row {
                return;
            }
            let Some(element) = row.query_selector_all(FOCUSABLE).ok().and_then(|all| all.item(place.index)) else { return };
            let Ok(element) = element.dyn_into::<web_sys::HtmlElement>() else { return };
            let _ = element.focus();
            if let Some((start, end)) = place.caret {
                if let Some(input) = element.dyn_ref::<web_sys::HtmlInputElement>() {
                    let _ = input.set_selection_range(start, end);
                } else if let Some(text) = element.dyn_ref::<web_sys::HtmlTextAreaElement>() {
                    let _ = text.set_selection_range(start, end);
                }
            }
        });
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = place;
}

/// Gives a field of a form that just opened keyboard focus, taken from the button that opened it
/// (gone with it) or from its own card (a shortcut), never from a field elsewhere: a form drawn
/// again while the reader types on another card (the queue, as approvals change) leaves them be.
/// True when it took focus.
#[cfg(feature = "hydrate")]
pub fn opened_field(field: &web_sys::HtmlElement) -> bool {
    let document = leptos::prelude::document();
    let card_of = |el: &web_sys::Element| el.closest(".tool-card").ok().flatten();
    let free = match document.active_element() {
        None => true,
        Some(active) => active.tag_name() == "BODY" || card_of(&active) == card_of(field),
    };
    if free {
        let _ = field.focus();
    }
    free
}

/// Scrolls a form that just opened into view whole (its `scroll-margin`, style/main.css, keeps its
/// buttons above the chat's sticky composer) once it is drawn; focus stays where it is.
#[cfg(feature = "hydrate")]
pub fn whole_form(form: web_sys::HtmlFormElement) {
    after_paint(move || scroll_nearest(&form));
}

/// Runs `change`, which puts content above what the reader is looking at ("Show earlier
/// messages"), then scrolls down by the height it added: the reader's place stays on screen.
pub fn keep_reading_position(change: impl FnOnce()) {
    #[cfg(feature = "hydrate")]
    {
        let Some(root) = leptos::prelude::document().scrolling_element() else { return change() };
        let (height, top) = (root.scroll_height(), root.scroll_top());
        change();
        after_paint(move || root.set_scroll_top(top + root.scroll_height() - height));
    }
    #[cfg(not(feature = "hydrate"))]
    change();
}

/// Nobody is typing or deciding somewhere else: focus is on the page itself, on the composer
/// (disabled while calls wait) or on its Send button, or on a decided card (where it waits after
/// the reviewer's last decision, `after_decision`).
#[cfg(feature = "hydrate")]
fn focus_is_free(document: &web_sys::Document) -> bool {
    match document.active_element() {
        None => true,
        Some(el) => {
            el.tag_name() == "BODY"
                || el.id() == "composer-input"
                || el.closest(".composer").ok().flatten().is_some()
                || el.matches(".tool-card:not([data-status='pending_approval'])").unwrap_or(false)
        }
    }
}

/// Focus fell to the page: the element that had it left the page (or nothing had it).
#[cfg(feature = "hydrate")]
fn focus_dropped(document: &web_sys::Document) -> bool {
    document.active_element().is_none_or(|el| el.tag_name() == "BODY")
}

/// The selector of one call's card. A CSS string: only `\` and `"` need escaping.
#[cfg(feature = "hydrate")]
fn card_selector(call_id: &str) -> String {
    let quoted = call_id.replace('\\', "\\\\").replace('"', "\\\"");
    format!(".tool-card[data-call-id=\"{quoted}\"]")
}

/// The first element `selector` matches, if it is an HTML element.
#[cfg(feature = "hydrate")]
fn html_element(document: &web_sys::Document, selector: &str) -> Option<web_sys::HtmlElement> {
    use leptos::wasm_bindgen::JsCast;
    document.query_selector(selector).ok().flatten().and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok())
}

#[cfg(feature = "hydrate")]
fn scroll_nearest(el: &web_sys::Element) {
    let options = web_sys::ScrollIntoViewOptions::new();
    options.set_block(web_sys::ScrollLogicalPosition::Nearest);
    el.scroll_into_view_with_scroll_into_view_options(&options);
}

/// Runs `f` once the DOM changes of this tick are drawn (the new card exists and has its size).
#[cfg(feature = "hydrate")]
fn after_paint(f: impl FnOnce() + 'static) {
    leptos::prelude::request_animation_frame(f);
}
