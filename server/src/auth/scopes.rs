//! What a credential may do (docs/security.md, "Tokens"): `read` (see chats, approvals, the
//! audit trail), `decide` (approve, reject, defer, escalate, grant, make links, stop any turn,
//! change who may decide) and `call` (start an agent's work: chat turns and the MCP, A2A and AG-UI
//! gateways, and stopping the turns it started: [`may_stop`]). A person logged in through the
//! browser has all three; an API token has the ones it was made with, so the token an agent's
//! gateway client holds (`call`) cannot decide its own calls.

use std::fmt;

use axum::{
    extract::FromRequestParts,
    http::{Method, request::Parts},
};

use engine::reads::TaskRow;

use super::Credential;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Read,
    Decide,
    Call,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::Read, Scope::Decide, Scope::Call];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Decide => "decide",
            Self::Call => "call",
        }
    }

    fn bit(self) -> u8 {
        match self {
            Self::Read => 1,
            Self::Decide => 2,
            Self::Call => 4,
        }
    }
}

/// A set of scopes, stored as their names separated by spaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scopes(u8);

impl Scopes {
    /// What a logged-in person, and a token from before scopes, may do.
    pub const ALL: Scopes = Scopes(7);
    /// What a gateway client's token gets by default.
    pub const CALL: Scopes = Scopes(4);
    pub const NONE: Scopes = Scopes(0);

    pub fn allows(self, scope: Scope) -> bool {
        self.0 & scope.bit() != 0
    }

    /// Names separated by spaces or commas (`"read decide"`, `"call"`); `Err` names the unknown one.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut bits = 0;
        for name in text.split([' ', ',']).map(str::trim).filter(|n| !n.is_empty()) {
            let scope = Scope::ALL
                .into_iter()
                .find(|s| s.as_str() == name)
                .ok_or_else(|| format!("unknown scope {name:?}: the scopes are read, decide and call"))?;
            bits |= scope.bit();
        }
        match bits {
            0 => Err("a token needs at least one scope: read, decide or call".into()),
            bits => Ok(Self(bits)),
        }
    }

    pub fn names(self) -> Vec<&'static str> {
        Scope::ALL.into_iter().filter(|s| self.allows(*s)).map(Scope::as_str).collect()
    }

    /// "only call", "read and decide", for refusals.
    pub fn said(self) -> String {
        match self.names().as_slice() {
            [] => "do nothing".into(),
            [one] => format!("only {one}"),
            [rest @ .., last] => format!("only {} and {last}", rest.join(", ")),
        }
    }
}

/// A handler's view of the request's scopes (what `auth::resolve` found; none when anonymous).
impl<S: Send + Sync> FromRequestParts<S> for Scopes {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(parts.extensions.get::<Scopes>().copied().unwrap_or(Scopes::NONE))
    }
}

impl fmt::Display for Scopes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.names().join(" "))
    }
}

/// The scope a request needs, from its method and path: every decision and every change of who
/// may decide needs `decide`; starting an agent's work (a chat turn, a gateway) needs `call`;
/// the rest of the API needs `read`. `None`: no credential is needed to ask (pages, health,
/// signed links, Slack's signed callbacks), the route is not one a token reaches, or its
/// handler judges the scopes itself (stopping a task, [`may_stop`]).
pub fn needed(method: &Method, path: &str) -> Option<Scope> {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let write = *method != Method::GET && *method != Method::HEAD;
    match segments.as_slice() {
        // An A2A agent card is how a client finds the agent: public.
        ["a2a", _, ".well-known", ..] => None,
        ["mcp" | "a2a" | "ag-ui", ..] => Some(Scope::Call),
        ["api", "approvals", _, "approve" | "reject" | "defer" | "escalate" | "links"] => Some(Scope::Decide),
        ["api", "tasks", _, "approve-all" | "reject-all"] => Some(Scope::Decide),
        // Stopping a task needs `decide`, or `call` for a task the token started: its handler
        // judges that with the task in hand ([`may_stop`]).
        ["api", "tasks", _, "abort"] if write => None,
        // Making a token: its handler refuses every token, whatever its scopes, and says so.
        ["api", "tokens"] if *method == Method::POST => None,
        // The page's decisions as HTML forms (server/src/forms.rs).
        ["forms", ..] => Some(Scope::Decide),
        ["api", "grants" | "links" | "delegations" | "groups" | "users", ..] if write => Some(Scope::Decide),
        ["api", "conversations", ..] if write => Some(Scope::Call),
        ["api", ..] => Some(Scope::Read),
        _ => None,
    }
}

/// Why [`may_stop`] refused, as every door says it.
pub const MAY_NOT_STOP: &str = "stopping this task needs a token with the decide scope: a token that may only call stops only \
                                the tasks it started (docs/security.md, \"Tokens\")";

/// Whether a person asking with `credential` and `scopes` may stop `task`, which they see: the
/// one rule of every door that stops a task (REST abort, A2A `CancelTask`, the MCP gateway's
/// cancellation; docs/security.md, "Tokens"). `decide` stops any task its person sees; `call`
/// alone stops only the tasks this credential started (`started_by`), not the other turns of a
/// conversation it opened, so an agent's token cannot stop its person's other work. A task that
/// names no starter (one from before they were kept) is no such credential's to stop.
pub fn may_stop(credential: Option<&Credential>, scopes: Scopes, task: &TaskRow) -> bool {
    if scopes.allows(Scope::Decide) {
        return true;
    }
    match credential {
        Some(Credential(key)) if scopes.allows(Scope::Call) => task.started_by.as_deref() == Some(key.as_str()),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_parse_from_names_and_refuse_unknown_or_none() {
        assert_eq!(Scopes::parse("read decide call"), Ok(Scopes::ALL));
        assert_eq!(Scopes::parse("call"), Ok(Scopes::CALL));
        assert_eq!(Scopes::parse("read,decide").unwrap().to_string(), "read decide");
        assert!(Scopes::parse("read admin").unwrap_err().contains("\"admin\""));
        assert!(Scopes::parse(" ").is_err());
    }

    #[test]
    fn every_decision_needs_decide_and_every_gateway_call() {
        let post = Method::POST;
        for path in [
            "/api/approvals/a1/approve",
            "/api/approvals/a1/reject",
            "/api/approvals/a1/defer",
            "/api/approvals/a1/escalate",
            "/api/approvals/a1/links",
            "/api/tasks/t1/approve-all",
            "/api/tasks/t1/reject-all",
            "/api/grants/g1/revoke",
            "/api/links/l1/revoke",
            "/api/delegations",
            "/api/groups/ops",
            "/forms/approvals/a1",
            "/forms/tasks/t1",
        ] {
            assert_eq!(needed(&post, path), Some(Scope::Decide), "{path}");
        }
        for path in ["/mcp/support", "/a2a/support", "/ag-ui/support", "/api/conversations", "/api/conversations/c1/messages"] {
            assert_eq!(needed(&post, path), Some(Scope::Call), "{path}");
        }
        for path in ["/api/approvals", "/api/approvals/a1", "/api/approvals/events", "/api/audit", "/api/groups"] {
            assert_eq!(needed(&Method::GET, path), Some(Scope::Read), "{path}");
        }
        assert_eq!(needed(&Method::GET, "/a2a/support/.well-known/agent-card.json"), None);
        assert_eq!(needed(&Method::GET, "/decide/xyz"), None);
        assert_eq!(needed(&Method::GET, "/healthz"), None);
        // `decide`, or `call` for a task the token started: judged by its handler (`may_stop`).
        assert_eq!(needed(&post, "/api/tasks/t1/abort"), None);
        // No token makes tokens: its handler refuses them all alike.
        assert_eq!(needed(&post, "/api/tokens"), None);
        assert_eq!(needed(&Method::GET, "/api/tokens"), Some(Scope::Read));
        assert_eq!(needed(&post, "/api/tokens/k1/revoke"), Some(Scope::Read));
    }

    #[test]
    fn call_alone_stops_only_the_tasks_this_credential_started_and_decide_stops_any() {
        let task = |started_by: Option<&str>| TaskRow {
            id: "t1".into(),
            conversation_id: "c1".into(),
            status: domain::TaskStatus::InputRequired,
            steps: 0,
            created_at: 0,
            updated_at: 0,
            agent: None,
            parent_call_id: None,
            started_by: started_by.map(str::to_owned),
        };
        let token = Credential::of_token("a");
        let (its_own, another_tokens, a_sessions, unknown) =
            (task(Some("token:a")), task(Some("token:b")), task(Some("session:x")), task(None));
        assert!(may_stop(Some(&token), Scopes::CALL, &its_own));
        for other in [&another_tokens, &a_sessions, &unknown] {
            assert!(!may_stop(Some(&token), Scopes::CALL, other), "{:?}", other.started_by);
            assert!(may_stop(Some(&token), Scopes::ALL, other), "{:?}", other.started_by);
        }
        assert!(!may_stop(Some(&token), Scopes::parse("read").unwrap(), &its_own), "read alone stops nothing");
        assert!(!may_stop(None, Scopes::CALL, &its_own), "no credential, nothing started");
    }
}
