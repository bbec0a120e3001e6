//! Where the login page may send the user afterwards (`/login?next=…`): one rule for the server's
//! form post and the hydrated page, so neither can be talked into leaving the site.

use leptos::prelude::GetUntracked;

/// `next` when it is a path on this site, else `/`. Refused: `//host` and `https://…`, any
/// backslash (browsers read `\` as `/`), and control characters such as a tab or a newline
/// (browsers drop them, so `/<tab>/host` would become `//host`).
pub fn local_path(next: Option<&str>) -> String {
    match next {
        Some(n) if n.starts_with('/') && !n.starts_with("//") && !n.chars().any(|c| c == '\\' || c.is_control()) => n.to_owned(),
        _ => "/".to_owned(),
    }
}

/// This page's path, without its query: where a decision form sent before hydration comes back
/// to. Only the path, so a compressed page never repeats text another site put in its URL next to
/// the page's own content (a BREACH-style guess; docs/security.md, "Attacks").
pub fn here() -> String {
    leptos_router::hooks::use_location().pathname.get_untracked()
}

/// Percent-encodes a path for use as a query value (`/login?next=…`).
pub fn query_value(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_on_this_site_are_kept() {
        assert_eq!(local_path(Some("/c/123?x=1")), "/c/123?x=1");
        for attack in ["//evil.example", "https://evil.example", "/\t/evil.example", "/\\evil.example", "/\n/evil.example", "evil", ""] {
            assert_eq!(local_path(Some(attack)), "/", "{attack:?}");
        }
        assert_eq!(local_path(None), "/");
    }

    #[test]
    fn a_query_value_keeps_slashes_and_encodes_the_rest() {
        assert_eq!(query_value("/c/abc?x=1"), "/c/abc%3Fx%3D1");
        assert_eq!(query_value("/\t/x"), "/%09/x");
    }
}
