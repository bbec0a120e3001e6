//! Whether the browser's login still holds. An API answer 401 or a live stream the server
//! refuses (its session expired, was logged out elsewhere or revoked) marks it ended; the top bar
//! then says so and offers the login that comes back to the same page
//! (components/session_notice.rs), and what was being typed is kept.

use leptos::prelude::*;

/// The page's `<meta>` naming the build of the bundle it was served with.
pub const BUILD_META: &str = "countersign-build";

/// The header every server answer names its build with (server/src/assets.rs).
pub const BUILD_HEADER: &str = "x-countersign-build";

#[cfg(feature = "hydrate")]
thread_local! {
    // One per browser tab, for the page's whole life (never disposed: created outside any owner).
    static ENDED: RwSignal<bool> = RwSignal::new(false);
    static OUTDATED: RwSignal<bool> = RwSignal::new(false);
    static PAGE_BUILD: Option<String> = leptos::prelude::document()
        .query_selector(&format!("meta[name='{BUILD_META}']"))
        .ok()
        .flatten()
        .and_then(|meta| meta.get_attribute("content"));
}

/// True once a server answer named a newer build than this page's bundle.
pub fn outdated() -> Signal<bool> {
    #[cfg(feature = "hydrate")]
    {
        OUTDATED.with(|o| (*o).into())
    }
    #[cfg(not(feature = "hydrate"))]
    {
        Signal::stored(false)
    }
}

/// Called with the build each server answer names: another build than the page's means the
/// server was upgraded under this page.
pub fn saw_build(build: Option<&str>) {
    #[cfg(feature = "hydrate")]
    if let Some(build) = build
        && PAGE_BUILD.with(|page| page.as_deref().is_some_and(|page| page != build))
    {
        OUTDATED.with(|o| o.set(true));
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = build;
}

/// True once the server has refused this browser's session.
pub fn ended() -> Signal<bool> {
    #[cfg(feature = "hydrate")]
    {
        ENDED.with(|e| (*e).into())
    }
    #[cfg(not(feature = "hydrate"))]
    {
        Signal::stored(false)
    }
}

/// Called on every 401: the session is gone.
pub fn mark_ended() {
    #[cfg(feature = "hydrate")]
    ENDED.with(|e| e.set(true));
}

/// The login page's address that brings the person back to where they are now.
pub fn login_here() -> String {
    #[cfg(feature = "hydrate")]
    {
        let location = window().location();
        let here = format!("{}{}", location.pathname().unwrap_or_default(), location.search().unwrap_or_default());
        format!("/login?next={}", crate::paths::query_value(&here))
    }
    #[cfg(not(feature = "hydrate"))]
    {
        "/login".to_owned()
    }
}

/// Keeps what is being typed under `key` in this tab (sessionStorage), so a login round trip or
/// a reload does not lose it; empty text forgets it.
pub fn keep_text(key: &str, text: &str) {
    #[cfg(feature = "hydrate")]
    if let Some(storage) = window().session_storage().ok().flatten() {
        let _ = if text.is_empty() { storage.remove_item(key) } else { storage.set_item(key, text) };
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (key, text);
}

/// The text kept under `key` in this tab, if any.
pub fn kept_text(key: &str) -> Option<String> {
    #[cfg(feature = "hydrate")]
    {
        window().session_storage().ok().flatten()?.get_item(key).ok().flatten()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = key;
        None
    }
}
