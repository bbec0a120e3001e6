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

/// Gives one call's card keyboard focus once it is drawn: it re-rendered after this reviewer's
/// own decision, and focus stays where they were working instead of falling to the page.
pub fn card(call_id: String) {
    #[cfg(feature = "hydrate")]
    after_paint(move || {
        use leptos::wasm_bindgen::JsCast;
        // A CSS string: only `\` and `"` need escaping.
        let quoted = call_id.replace('\\', "\\\\").replace('"', "\\\"");
        let selector = format!(".tool-card[data-call-id=\"{quoted}\"]");
        if let Ok(Some(card)) = leptos::prelude::document().query_selector(&selector)
            && let Ok(card) = card.dyn_into::<web_sys::HtmlElement>()
        {
            let _ = card.focus();
        }
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = call_id;
}

/// Gives the first field of `form` keyboard focus once it is drawn (a form that just opened).
#[cfg(feature = "hydrate")]
pub fn first_field(form: web_sys::HtmlFormElement) {
    after_paint(move || {
        use leptos::wasm_bindgen::JsCast;
        if let Ok(Some(field)) = form.query_selector("input, textarea, select")
            && let Ok(field) = field.dyn_into::<web_sys::HtmlElement>()
        {
            let _ = field.focus();
        }
    });
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
/// (disabled while calls wait) or on its Send button.
#[cfg(feature = "hydrate")]
fn focus_is_free(document: &web_sys::Document) -> bool {
    match document.active_element() {
        None => true,
        Some(el) => el.tag_name() == "BODY" || el.id() == "composer-input" || el.closest(".composer").ok().flatten().is_some(),
    }
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
