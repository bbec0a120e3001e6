//! Other agents' protocols over the same engine: one mapping module per protocol, no
//! second state machine. `a2a.rs`: each Countersign agent as an A2A agent; `ag_ui.rs`: over AG-UI;
//! `mcp.rs`: an MCP server per agent, whose clients' calls wait for approval like the agent's own.

pub mod a2a;
pub mod ag_ui;
pub mod mcp;
