//! Other agents' protocols over the same engine (issue 18): one mapping module per protocol, no
//! second state machine. `a2a.rs`: each Countersign agent as an A2A agent.

pub mod a2a;
