//! Other agents' protocols over the same engine: one mapping module per protocol, no
//! second state machine. `a2a/`: each Countersign agent as an A2A agent (0.3 and 1.x); `ag_ui.rs`: over AG-UI;
//! `mcp/`: an MCP server per agent, whose clients' calls wait for approval like the agent's own.

use domain::wire::FieldProblem;

use crate::{EngineError, orchestrator::Actor, people::User};

pub mod a2a;
pub mod ag_ui;
pub mod mcp;

/// The token's user deciding through a protocol's door: `agent` names the door as a user agent
/// ("A2A"), `via` in the audit trail ("a2a").
fn actor(user: &User, agent: &str, via: &str) -> Actor {
    Actor {
        name: user.username.clone(),
        user_id: Some(user.id.clone()),
        role: Some(user.role),
        ip: None,
        user_agent: Some(agent.into()),
        on_behalf_of: None,
        via: Some(via.into()),
        signed_in_at: None,
    }
}

/// An engine error as a door says it in one line: its message, and for a request the engine
/// refused (edited arguments that break the tool's schema) each field's problem, as the API's
/// 422 `details` list them.
fn said(err: &EngineError) -> String {
    match err {
        EngineError::Invalid { message, details } => with_details(message, details),
        other => other.to_string(),
    }
}

/// `message` followed by the problems it does not already say: `the edited arguments do not
/// match the schema of process_refund: /order_id: must be an integer`.
fn with_details(message: &str, details: &[FieldProblem]) -> String {
    let more: Vec<String> =
        details.iter().filter(|d| !message.contains(d.message.as_str())).map(|d| problem_said(&d.path, &d.message)).collect();
    if more.is_empty() { message.to_owned() } else { format!("{message}: {}", more.join("; ")) }
}

/// One `{path, message}` problem as a client or a model reads it: `/order_id: must be an
/// integer`, or the message alone for the arguments as a whole (`order_id is required`).
fn problem_said(path: &str, message: &str) -> String {
    match path {
        "" => message.to_owned(),
        path => format!("{path}: {message}"),
    }
}
