#![recursion_limit = "256"]
//! The WASM entry point: hydrates the server-rendered page. Nothing else lives here.

#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(app::App);
}
