use leptos::prelude::*;

/// One line said as an error, to the eye and to a screen reader (`role="alert"`): a list that
/// did not load, a field that does not parse, a request refused. A request's failure with its
/// details (and a refused session said in words) is `session_notice::FailureNote`.
#[component]
pub fn ErrorLine(#[prop(into)] text: String) -> impl IntoView {
    view! { <p class="error" role="alert">{text}</p> }
}

/// All that someone who is not an admin sees of an admins' page (`/audit`, `/groups`, `/policy`):
/// that it is for admins. Nothing of the page is asked of the server for them.
#[component]
pub fn AdminsOnly(#[prop(into)] text: String) -> impl IntoView {
    view! { <p class="error not-admin" role="alert">{text}</p> }
}
