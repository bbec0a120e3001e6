//! Other agents' protocols over the same engine: one mapping module per protocol, no
//! second state machine. `a2a/`: each Countersign agent as an A2A agent (0.3 and 1.x); `ag_ui.rs`: over AG-UI;
//! `mcp/`: an MCP server per agent, whose clients' calls wait for approval like the agent's own.

use crate::{orchestrator::Actor, store::users::User};

pub mod a2a;
pub mod ag_ui;
pub mod mcp;

/// The token's user deciding through a protocol's door: `agent` names the door as a user agent
/// ("A2A"), `via` in the audit trail ("a2a").
fn actor(user: &User, agent: &str, via: &str) -> Actor {
    Actor {
        name: user.username.clone(),
        role: Some(user.role),
        ip: None,
        user_agent: Some(agent.into()),
        on_behalf_of: None,
        via: Some(via.into()),
        signed_in_at: None,
    }
}
