//! Other agents' protocols over the same engine: one mapping module per protocol, no
//! second state machine. `a2a/`: each Countersign agent as an A2A agent (0.3 and 1.x); `ag_ui.rs`: over AG-UI;
//! `mcp.rs`: an MCP server per agent, whose clients' calls wait for approval like the agent's own.

pub mod a2a;
pub mod ag_ui;
pub mod mcp;
